/*-------------------------------------------------------------------------
 *
 * db_rows.h
 *	  The batch statement's answer, read back into one row per element:
 *	  the db_row and its outcome, which db_batch.c hands to delivery.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_ROWS_H
#define FEEDER_DB_ROWS_H

#include <stddef.h>

#include <libpq-fe.h>

typedef enum db_outcome
{
	DB_OUTCOME_INSERTED,
	DB_OUTCOME_DUPLICATE,
	DB_OUTCOME_CONFLICT,
	DB_OUTCOME_REJECTED,
	DB_OUTCOME_SKIPPED			/* a tombstone: only its position counts */
} db_outcome;

#define DB_NOUTCOMES 5

/* One result row of materialize_orders, mapped back to its message. */
typedef struct db_row
{
	int			msg_index;		/* index in the batch's msgs[] */
	db_outcome	outcome;
	const char *order_id;		/* may be NULL; valid until next run */
	const char *sqlstate;		/* NULL for inserted/duplicate */
	const char *message;
} db_row;

extern int	db_rows_read(const PGresult *res, int nelems, const int *db_to_msg,
						 db_row *rows, char *errbuf, size_t errlen);
extern int	db_outcome_parse(const char *label, db_outcome *o);
extern const char *db_outcome_name(db_outcome o);

#endif							/* FEEDER_DB_ROWS_H */
