/*-------------------------------------------------------------------------
 *
 * deliver.c
 *	  Delivering one batch: the positions check of a new database session
 *	  (positions.c), the database transaction, retries with backoff
 *	  while the partitions are paused, the per-message results, and the
 *	  acknowledgement (offset store) after the commit.
 *
 * The order is the delivery contract: COMMIT returns "COMMIT", then the
 * outcomes are counted and logged, then the offsets are stored.  On a
 * transient or unexpected error nothing is acknowledged: the partitions
 * are paused (polling goes on, so the group keeps us), the same batch is
 * retried after a capped, jittered exponential backoff, reconnecting as
 * needed.  A signal during that wait abandons the batch unacknowledged;
 * a configuration or permission error ends the feeder with exit 3.
 *
 * Metrics: the attempt that commits is timed (transaction and offset
 * store) for batch_duration_seconds; each retried attempt is counted by
 * reason; the database is marked down when an attempt leaves no working
 * connection, and up when a batch commits.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "feeder.h"
#include "log.h"
#include "metrics.h"

/* Consecutive failures of one batch after which its connection is dropped. */
#define DELIVER_RECONNECT_AFTER 3

/*
 * deliver_seconds
 *		Monotonic clock in seconds, for the batch duration histogram.
 */
static double
deliver_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/*
 * deliver_log_fatal
 *		The line that explains a configuration or permission error before
 *		exit 3: what failed and what to fix.
 */
void
deliver_log_fatal(const db_error *err)
{
	log_line	line;

	log_begin(&line, LOG_FATAL, "database_config_error");
	log_kv_str(&line, "step", err->step ? err->step : "");
	if (err->sqlstate[0])
		log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_str(&line, "error", err->message);
	log_kv_str(&line, "hint", err->hint[0] ? err->hint :
			   db_fatal_hint(err->sqlstate[0] ? err->sqlstate : NULL));
	log_end(&line);
}

/*
 * deliver_log_retry
 *		One line per failed attempt that will be retried.
 */
static void
deliver_log_retry(const feeder_app *app, const db_error *err, int attempt, int delay)
{
	log_line	line;
	const batch_msg *first = &app->batch.msgs[0];

	log_begin(&line, err->cls == DB_ERR_OTHER ? LOG_ERROR : LOG_WARNING, "batch_failed");
	log_kv_str(&line, "class", db_error_class_name(err->cls));
	log_kv_str(&line, "step", err->step ? err->step : "");
	if (err->sqlstate[0])
		log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_str(&line, "error", err->message);
	log_kv_int(&line, "messages", app->batch.count);
	log_kv_fmt(&line, "first", "%s [%d] @%lld", first->topic, (int) first->partition,
			   (long long) first->offset);
	log_kv_int(&line, "attempt", attempt + 1);
	if (delay >= 0)
		log_kv_int(&line, "retry_in_ms", delay);
	log_end(&line);
}

/*
 * deliver_report
 *		Count the outcomes of a committed batch and log each rejected or
 *		conflicting message with its Kafka coordinates (the function has
 *		already quarantined it in the same transaction).
 */
static void
deliver_report(feeder_app *app, const db_row *rows, int nrows)
{
	const batch *b = &app->batch;
	uint64_t	counts[DB_NOUTCOMES] = {0};
	uint64_t	other_types = 0;
	int			i;

	for (i = 0; i < nrows; i++)
	{
		const db_row *row = &rows[i];
		const batch_msg *m = &b->msgs[row->msg_index];
		log_line	line;

		counts[row->outcome]++;
		/* skipped: a tombstone, or (a value) a message of another type */
		if (row->outcome == DB_OUTCOME_SKIPPED && m->value != NULL)
			other_types++;
		if (row->outcome != DB_OUTCOME_REJECTED && row->outcome != DB_OUTCOME_CONFLICT)
			continue;
		log_begin(&line, LOG_WARNING, db_outcome_name(row->outcome));
		log_kv_fmt(&line, "at", "%s [%d] @%lld", m->topic, (int) m->partition,
				   (long long) m->offset);
		log_kv_str(&line, "topic", m->topic);
		log_kv_int(&line, "partition", m->partition);
		log_kv_int(&line, "offset", m->offset);
		if (row->order_id)
			log_kv_str(&line, "order_id", row->order_id);
		log_kv_str(&line, "sqlstate", row->sqlstate ? row->sqlstate : "");
		log_kv_str(&line, "reason", row->message ? row->message : "");
		log_kv_str(&line, "quarantined", "true");
		log_end(&line);
	}
	app->stats.inserted += counts[DB_OUTCOME_INSERTED];
	app->stats.duplicate += counts[DB_OUTCOME_DUPLICATE];
	app->stats.conflict += counts[DB_OUTCOME_CONFLICT];
	app->stats.rejected += counts[DB_OUTCOME_REJECTED];
	app->stats.tombstones += counts[DB_OUTCOME_SKIPPED] - other_types;
	app->stats.skipped += other_types;

	if (log_get_level() <= LOG_DEBUG)
	{
		log_line	line;

		log_begin(&line, LOG_DEBUG, "batch_committed");
		log_kv_int(&line, "messages", b->count);
		log_kv_uint(&line, "inserted", counts[DB_OUTCOME_INSERTED]);
		log_kv_uint(&line, "duplicate", counts[DB_OUTCOME_DUPLICATE]);
		log_kv_uint(&line, "conflict", counts[DB_OUTCOME_CONFLICT]);
		log_kv_uint(&line, "rejected", counts[DB_OUTCOME_REJECTED]);
		log_kv_uint(&line, "tombstones", counts[DB_OUTCOME_SKIPPED] - other_types);
		log_kv_uint(&line, "skipped", other_types);
		log_end(&line);
	}
}

/*
 * deliver_maybe_reconnect
 *		Drop a connection that a retry on it would not cure, so that the
 *		next attempt opens a new session (with a multi-host DSN and
 *		target_session_attrs=read-write, possibly on another host): at once
 *		after 25006 (a read-only session: a standby, or a fenced old
 *		primary), and after every DELIVER_RECONNECT_AFTER consecutive
 *		failures of any class.
 */
static void
deliver_maybe_reconnect(feeder_app *app, const db_error *err, int failures)
{
	int			read_only = strcmp(err->sqlstate, "25006") == 0;
	log_line	line;

	if (!db_connected(app->db) ||
		(!read_only && failures % DELIVER_RECONNECT_AFTER != 0))
		return;
	db_disconnect(app->db);
	log_begin(&line, LOG_WARNING, "db_reconnecting");
	log_kv_str(&line, "reason", read_only ?
			   "the session is read-only (a standby or a fenced primary): another may reach the primary" :
			   "the batch failed repeatedly on this connection");
	log_kv_int(&line, "failures", failures);
	log_end(&line);
}

/*
 * deliver_maybe_split
 *		A batch of several messages that failed because of its size (out
 *		of memory, a program limit: db_size_caused) is retried in halves:
 *		its second half goes back in front of the held messages and the
 *		next batches are capped at what is left, so the same batch is never
 *		sent again.  The cap doubles back towards --batch-size with each
 *		commit (deliver_grow_cap).
 */
static void
deliver_maybe_split(feeder_app *app, const db_error *err)
{
	int			was = app->batch.count;
	int			back;
	log_line	line;

	if (!db_size_caused(err->sqlstate) ||
		(back = batch_split(&app->batch, &app->pending)) == 0)
		return;
	app->batch.max_size = app->batch.count;
	app->capped_commits = 0;
	app->stats.splits++;
	log_begin(&line, LOG_WARNING, "batch_split");
	log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_int(&line, "messages", was);
	log_kv_int(&line, "retrying", app->batch.count);
	log_kv_int(&line, "held_back", back);
	log_kv_str(&line, "reason", "the batch failed for its size: retried in halves, smaller batches until commits succeed");
	log_end(&line);
}

/* Commits at a capped batch size before the cap doubles again. */
#define DELIVER_GROW_AFTER 10

/*
 * deliver_grow_cap
 *		After DELIVER_GROW_AFTER commits under the batch size cap set by a
 *		split, double the cap back towards --batch-size: a limit that stays
 *		costs one failed attempt per doubling, not one per batch.
 */
static void
deliver_grow_cap(feeder_app *app)
{
	int			max = app->cfg->batch_size;

	if (app->batch.max_size >= max || ++app->capped_commits < DELIVER_GROW_AFTER)
		return;
	app->capped_commits = 0;
	app->batch.max_size = app->batch.max_size > max / 2 ? max : app->batch.max_size * 2;
}

/*
 * deliver_batch
 *		Run app->batch through the database until it commits, then
 *		acknowledge it.  See the file header for the error paths.  The
 *		caller releases the batch's messages afterwards in every case.
 */
deliver_result
deliver_batch(feeder_app *app)
{
	deliver_result result;
	int			attempt = 0;
	int64_t		failing_since = 0;

	app->delivering = 1;
	for (;;)
	{
		db_row	   *rows;
		int			nrows;
		db_error	err;
		db_error_class cls;
		int			delay;
		double		started;

		if (app->batch.count == 0)
		{
			result = DELIVER_DROPPED;
			break;
		}
		if (app->positions_fatal)
		{
			result = DELIVER_POSITIONS_FATAL;
			break;
		}

		started = deliver_seconds();

		/*
		 * A new database session may have lost commits: check its positions
		 * before anything is sent on it, and drop the held messages of
		 * partitions sought back.
		 */
		cls = DB_ERR_NONE;
		if (positions_needed(app))
		{
			cls = positions_reconcile(app, &err);
			if (app->positions_fatal)
			{
				result = DELIVER_POSITIONS_FATAL;
				break;
			}
			if (app->db_config_error)
			{
				result = DELIVER_DB_FATAL;
				break;
			}
			if (cls == DB_ERR_NONE)
			{
				loop_prune_revoked(app);
				if (app->batch.count == 0)
				{
					result = DELIVER_DROPPED;
					break;
				}
			}
		}
		if (cls == DB_ERR_NONE)
			cls = db_run_batch(app->db, &app->batch, &rows, &nrows, &err);
		if (cls == DB_ERR_NONE)
		{
			deliver_report(app, rows, nrows);
			kafka_store_offsets(app->kc, &app->batch);
			app->stats.batches++;
			deliver_grow_cap(app);
			app->last_commit_ms = loop_now_ms();
			metrics_observe_batch(deliver_seconds() - started);
			metrics_set_database(1, NULL);
			metrics_publish(&app->stats);
			if (attempt > 0)
			{
				log_line	line;

				log_begin(&line, LOG_INFO, "batch_recovered");
				log_kv_int(&line, "attempts", attempt + 1);
				log_kv_int(&line, "failing_ms", loop_now_ms() - failing_since);
				log_kv_int(&line, "messages", app->batch.count);
				log_end(&line);
			}
			result = DELIVER_OK;
			break;
		}
		if (!db_connected(app->db) || cls == DB_ERR_FATAL)
			metrics_set_database(0, err.message);
		if (cls == DB_ERR_FATAL)
		{
			deliver_log_fatal(&err);
			result = DELIVER_DB_FATAL;
			break;
		}

		if (attempt == 0)
			failing_since = loop_now_ms();
		if (feeder_stop)
		{
			deliver_log_retry(app, &err, attempt, -1);
			result = DELIVER_ABANDONED;
			break;
		}
		app->stats.retries++;
		metrics_count_retry(db_retry_reason_of(err.sqlstate, err.step));
		delay = backoff_delay_ms(&app->backoff, attempt, backoff_random());
		deliver_log_retry(app, &err, attempt, delay);
		deliver_maybe_split(app, &err);
		attempt++;
		deliver_maybe_reconnect(app, &err, attempt);
		kafka_pause(app->kc);
		loop_wait(app, delay);
		if (kafka_fatal(app->kc))
		{
			result = DELIVER_KAFKA_FATAL;
			break;
		}
		if (feeder_stop)
		{
			result = DELIVER_ABANDONED;
			break;
		}
	}

	if (result == DELIVER_ABANDONED)
	{
		log_line	line;

		app->stats.abandoned++;
		log_begin(&line, LOG_WARNING, "batch_abandoned");
		log_kv_int(&line, "messages", app->batch.count);
		log_kv_str(&line, "reason", "shutdown while the database was failing; nothing acknowledged");
		log_end(&line);
	}
	kafka_resume(app->kc);
	app->delivering = 0;
	return result;
}
