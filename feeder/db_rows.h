/*-------------------------------------------------------------------------
 *
 * db_rows.h
 *	  The batch statement's answer, read back into one row per element.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_ROWS_H
#define FEEDER_DB_ROWS_H

#include <stddef.h>

#include <libpq-fe.h>

#include "db.h"

extern int	db_rows_read(const PGresult *res, int nelems, const int *db_to_msg,
						 db_row *rows, char *errbuf, size_t errlen);
extern int	db_outcome_parse(const char *label, db_outcome *o);

#endif							/* FEEDER_DB_ROWS_H */
