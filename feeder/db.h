/*-------------------------------------------------------------------------
 *
 * db.h
 *	  PostgreSQL side of the feeder: connection, prepared batch statement,
 *	  one transaction per batch.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_H
#define FEEDER_DB_H

#include <stdint.h>

#include "batch.h"
#include "db_errors.h"
#include "db_rows.h"
#include "pgarray.h"
#include "stats.h"

/*
 * The Schema Registry form's arrays the lane decodes each batch into
 * (decode.c) and db_run_batch sends: JSON, schema id, reason, header GUID.
 */
#define DB_DECODED_NARRAYS 4

typedef struct db_conn db_conn;

extern db_conn *db_new(const char *dsn, const char *group, feeder_stats *stats);
extern int	db_set_outbox(db_conn *db, const char *envelope, const char *event_type,
						  const char *type_header);

extern void db_set_index(db_conn *db, int index);
extern int	db_set_member(db_conn *db, const char *member_id);
extern int	db_set_framed(db_conn *db);
extern int	db_texts_ascii(const db_conn *db);
extern void db_set_timeouts(db_conn *db, int statement_timeout_ms, int lock_timeout_ms);
extern int	db_connected(const db_conn *db);
extern uint64_t db_session(const db_conn *db);
extern void db_set_adopt(db_conn *db);
extern db_error_class db_connect(db_conn *db, db_error *err);
extern int	db_cancel(db_conn *db, char *errbuf, int errbufsize);
extern db_error_class db_begin_batch(db_conn *db, const batch *b,
									 db_row **rows, int *nrows, db_error *err);
extern db_error_class db_run_batch(db_conn *db, const batch *b,
								   const pgarray *decoded, int n,
								   db_row **rows, int *nrows, db_error *err);
extern db_error_class db_check_idle(db_conn *db, db_error *err);
extern void db_disconnect(db_conn *db);
extern void db_free(db_conn *db);

#endif							/* FEEDER_DB_H */
