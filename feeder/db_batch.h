/*-------------------------------------------------------------------------
 *
 * db_batch.h
 *	  One transaction per batch, in one round trip (db_batch.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_BATCH_H
#define FEEDER_DB_BATCH_H

#include "batch.h"
#include "db_errors.h"
#include "db_rows.h"
#include "db_statement.h"
#include "pgarray.h"

/* the handle (db.h); a repeated typedef is C11 */
typedef struct db_conn db_conn;

extern int	db_texts_ascii(const db_conn *db);
extern db_error_class db_begin_batch(db_conn *db, const batch *b,
									 db_row **rows, int *nrows, db_error *err);
extern db_error_class db_run_batch(db_conn *db, const batch *b,
								   const pgarray *decoded, int n,
								   db_row **rows, int *nrows, db_error *err);

#endif							/* FEEDER_DB_BATCH_H */
