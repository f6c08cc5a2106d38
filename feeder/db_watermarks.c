/*-------------------------------------------------------------------------
 *
 * db_watermarks.c
 *	  The batch's partitions' high watermarks, recorded in the batch's
 *	  transaction (record_high_watermarks, for the view consumer_lag):
 *	  whether a session's role may, the statement's arrays, and what a
 *	  refusal does.  db_batch.c sends the statement in the batch's
 *	  pipeline.
 *
 *-------------------------------------------------------------------------
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "db_watermarks.h"
#include "log.h"
#include "pg_may_execute.h"

/*
 * The batch's partitions' high watermarks, recorded with their positions
 * (for the view consumer_lag): one more statement in the pipeline, no
 * round trip more.  Sent only when the session's role may execute it
 * (checked at connection: a missing grant or an extension without
 * record_high_watermarks leaves it out, logged once, instead of failing
 * batches).
 */
#define DB_WATERMARKS_SIGNATURE \
	"received_orders.record_high_watermarks(text,text,text[],integer[],bigint[])"

/*
 * db_watermarks_allowed
 *		Whether the role of conn's session may record the batches' high
 *		watermarks (a new session: the grant or the extension may have
 *		changed); logged when not and log_refusal (the first session only).
 */
int
db_watermarks_allowed(PGconn *conn, int log_refusal)
{
	/* a question that failed counts as a no: the batches go on without */
	int			allowed = pg_may_execute(conn, DB_WATERMARKS_SIGNATURE) == 1;

	if (!allowed && log_refusal)
	{
		log_line	line;

		log_begin(&line, LOG_WARNING, "high_watermarks_off");
		log_kv_str(&line, "function", DB_WATERMARKS_SIGNATURE);
		log_kv_str(&line, "reason", "the role may not execute it (or the extension is older than 1.2): batches do not record their partitions' high watermarks; consumer_lag takes them from the members' reports only");
		log_end(&line);
	}
	return allowed;
}

/*
 * db_watermarks_refused
 *		The database refused a batch's record_high_watermarks (EXECUTE
 *		revoked while the feeder runs, the function dropped: 42501, 42883,
 *		or any error of its own): the high watermarks are observability
 *		only, so the session stops sending them (a new session checks
 *		again: db_connect.c) and the batch is retried at once without them.
 *		Counted each time (watermarks_refused); logged once per process.
 */
void
db_watermarks_refused(feeder_stats *stats, const db_error *err)
{
	static atomic_int logged;
	log_line	line;

	__atomic_fetch_add(&stats->watermarks_refused, 1, __ATOMIC_RELAXED);
	if (atomic_exchange(&logged, 1))
		return;
	log_begin(&line, LOG_WARNING, "high_watermarks_off");
	log_kv_str(&line, "function", DB_WATERMARKS_SIGNATURE);
	if (err->sqlstate[0])
		log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_str(&line, "error", err->message);
	log_kv_str(&line, "reason", "the database refused to record the batch's high watermarks: the batch is retried at once without them, and batches no longer record them (consumer_lag takes the high watermarks from the members' reports only); a new database session checks the grant again");
	log_end(&line);
}

/*
 * db_watermark_arrays
 *		The text[] literals of the batch's partitions and high watermarks
 *		(NULL where unknown) in wm->text.  0, or -1 on out of memory.
 */
int
db_watermark_arrays(db_watermark_texts *wm, const batch *b)
{
	size_t		need[3] = {3, 3 + (size_t) b->nwatermarks * 12, 3 + (size_t) b->nwatermarks * 22};
	char	   *p[3];
	int			i,
				k;

	for (i = 0; i < b->nwatermarks; i++)
		need[0] += 4 + 2 * strlen(b->watermarks[i].topic);
	for (k = 0; k < 3; k++)
	{
		if (wm->cap[k] < need[k])
		{
			char	   *t = realloc(wm->text[k], need[k]);

			if (t == NULL)
				return -1;
			wm->text[k] = t;
			wm->cap[k] = need[k];
		}
		p[k] = wm->text[k];
		*p[k]++ = '{';
	}
	for (i = 0; i < b->nwatermarks; i++)
	{
		const char *c;

		if (i > 0)
			for (k = 0; k < 3; k++)
				*p[k]++ = ',';
		*p[0]++ = '"';
		for (c = b->watermarks[i].topic; *c; c++)
		{
			if (*c == '"' || *c == '\\')
				*p[0]++ = '\\';
			*p[0]++ = *c;
		}
		*p[0]++ = '"';
		p[1] += sprintf(p[1], "%d", (int) b->watermarks[i].partition);
		if (b->watermarks[i].high >= 0)
			p[2] += sprintf(p[2], "%lld", (long long) b->watermarks[i].high);
		else
			p[2] += sprintf(p[2], "NULL");
	}
	for (k = 0; k < 3; k++)
	{
		*p[k]++ = '}';
		*p[k] = '\0';
	}
	return 0;
}


/*
 * db_watermark_texts_free
 *		Release what db_watermark_arrays kept.
 */
void
db_watermark_texts_free(db_watermark_texts *wm)
{
	int			k;

	for (k = 0; k < 3; k++)
	{
		free(wm->text[k]);
		wm->text[k] = NULL;
		wm->cap[k] = 0;
	}
}
