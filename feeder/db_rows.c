/*-------------------------------------------------------------------------
 *
 * db_rows.c
 *	  The batch statement's answer, read back into one row per element.
 *
 * materialize_orders answers one row per element of the batch.  The answer
 * is checked before anything is acknowledged: exactly one row per element,
 * each naming its element by a valid position, no element twice, with a
 * known outcome.  Anything else means the extension does not match this
 * feeder (a function of another shape, version skew).
 *
 * (Asking only for the rows that are not 'inserted' was tried: in
 * bench/feeder, alternating the two builds over three rounds, it gained
 * nothing above the noise, so the answer stays whole and simple.)
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_rows.h"

/* received_orders.materialize_outcome's labels */
static const char *const db_outcome_labels[DB_NOUTCOMES] = {
	[DB_OUTCOME_INSERTED] = "inserted",
	[DB_OUTCOME_DUPLICATE] = "duplicate",
	[DB_OUTCOME_CONFLICT] = "conflict",
	[DB_OUTCOME_REJECTED] = "rejected",
	[DB_OUTCOME_SKIPPED] = "skipped",
};

/*
 * db_rows_read
 *		Fill rows[0 .. nelems) in element order from the answer res (five
 *		columns: position, order_id, outcome, sqlstate, message);
 *		db_to_msg maps an element to its batch message.  The strings point
 *		into res.  0 when the answer is well formed (above); -1 with the
 *		reason in errbuf when not.
 */
int
db_rows_read(const PGresult *res, int nelems, const int *db_to_msg,
			 db_row *rows, char *errbuf, size_t errlen)
{
	int			i;

	if (PQnfields(res) != 5 || PQntuples(res) != nelems)
	{
		snprintf(errbuf, errlen,
				 "materialize_orders returned %d rows of %d columns for %d elements",
				 PQntuples(res), PQnfields(res), nelems);
		return -1;
	}
	for (i = 0; i < nelems; i++)
		rows[i].msg_index = -1;	/* not named yet */
	for (i = 0; i < nelems; i++)
	{
		const char *position = PQgetvalue(res, i, 0);
		char	   *end;
		long		pos = strtol(position, &end, 10);
		db_row	   *row = (*position != '\0' && *end == '\0' && pos >= 1 && pos <= nelems) ?
			&rows[pos - 1] : NULL;
		db_outcome	outcome;

		if (row == NULL || row->msg_index >= 0 || PQgetisnull(res, i, 2) ||
			db_outcome_parse(PQgetvalue(res, i, 2), &outcome) != 0)
		{
			snprintf(errbuf, errlen,
					 "materialize_orders returned an unexpected row %d (position \"%s\", outcome \"%s\")",
					 i + 1, position, PQgetvalue(res, i, 2));
			return -1;
		}
		row->msg_index = db_to_msg[pos - 1];
		row->outcome = outcome;
		row->order_id = PQgetisnull(res, i, 1) ? NULL : PQgetvalue(res, i, 1);
		row->sqlstate = PQgetisnull(res, i, 3) ? NULL : PQgetvalue(res, i, 3);
		row->message = PQgetisnull(res, i, 4) ? NULL : PQgetvalue(res, i, 4);
	}
	return 0;
}

/*
 * db_outcome_parse
 *		Map the outcome enum label to its value; -1 if unknown.
 */
int
db_outcome_parse(const char *label, db_outcome *o)
{
	for (int i = 0; i < DB_NOUTCOMES; i++)
		if (strcmp(label, db_outcome_labels[i]) == 0)
		{
			*o = (db_outcome) i;
			return 0;
		}
	return -1;
}

/*
 * db_outcome_name
 *		The enum label, for logs.
 */
const char *
db_outcome_name(db_outcome o)
{
	return (int) o >= 0 && (int) o < DB_NOUTCOMES ? db_outcome_labels[o] : "unknown";
}
