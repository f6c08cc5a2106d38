/*-------------------------------------------------------------------------
 *
 * db_rows.c
 *	  The batch statement's answer, read back into one row per element.
 *
 * materialize_orders answers one row per element of the batch; the feeder's
 * statement asks only for the rows whose outcome is not 'inserted' (most
 * rows of a batch are inserted, and sending, reading and checking them cost
 * more than the filter), and always for the last element's row.  Every
 * other element the answer does not name was therefore inserted.  Because
 * absence now means something, the answer is checked strictly:
 *	- the last element's row must be there, whatever its outcome: a function
 *	  of another shape (one that answers nothing, or stops early) is caught
 *	  by its absence, as the count of rows caught it before;
 *	- every row must name an element by a valid position, no element twice;
 *	- with a known outcome, 'inserted' only for the last element.
 * Anything else means the extension does not match this feeder.
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
 *		columns: position, order_id, outcome, sqlstate, message):
 *		'inserted' for each element it does not name, its row for the
 *		others; db_to_msg maps an element to its batch message.  The
 *		strings point into res.  0 when the answer is well formed (above);
 *		-1 with the reason in errbuf when not.
 */
int
db_rows_read(const PGresult *res, int nelems, const int *db_to_msg,
			 db_row *rows, char *errbuf, size_t errlen)
{
	int			i;
	int			last_named = 0;

	if (PQnfields(res) != 5 || PQntuples(res) > nelems)
	{
		snprintf(errbuf, errlen,
				 "materialize_orders returned %d rows of %d columns for %d elements",
				 PQntuples(res), PQnfields(res), nelems);
		return -1;
	}
	for (i = 0; i < nelems; i++)
	{
		rows[i].msg_index = 0;	/* -1 once named; set at the end */
		rows[i].outcome = DB_OUTCOME_INSERTED;
		rows[i].order_id = rows[i].sqlstate = rows[i].message = NULL;
	}
	for (i = 0; i < PQntuples(res); i++)
	{
		const char *position = PQgetvalue(res, i, 0);
		char	   *end;
		long		pos = strtol(position, &end, 10);
		db_row	   *row = (*position != '\0' && *end == '\0' && pos >= 1 && pos <= nelems) ?
			&rows[pos - 1] : NULL;
		db_outcome	outcome;

		if (row == NULL || row->msg_index < 0 ||
			PQgetisnull(res, i, 2) ||
			db_outcome_parse(PQgetvalue(res, i, 2), &outcome) != 0 ||
			(outcome == DB_OUTCOME_INSERTED && pos != nelems))
		{
			snprintf(errbuf, errlen,
					 "materialize_orders returned an unexpected row %d (position \"%s\", outcome \"%s\")",
					 i + 1, position, PQgetvalue(res, i, 2));
			return -1;
		}
		row->msg_index = -1;	/* named: a second row for it is refused */
		row->outcome = outcome;
		last_named |= (pos == nelems);
		row->order_id = PQgetisnull(res, i, 1) ? NULL : PQgetvalue(res, i, 1);
		row->sqlstate = PQgetisnull(res, i, 3) ? NULL : PQgetvalue(res, i, 3);
		row->message = PQgetisnull(res, i, 4) ? NULL : PQgetvalue(res, i, 4);
	}
	if (!last_named)
	{
		snprintf(errbuf, errlen,
				 "materialize_orders returned %d rows for %d elements, none for the last element",
				 PQntuples(res), nelems);
		return -1;
	}
	for (i = 0; i < nelems; i++)
		rows[i].msg_index = db_to_msg[i];
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
