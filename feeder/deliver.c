/*-------------------------------------------------------------------------
 *
 * deliver.c
 *	  Delivering a lane's batch: handing it to the lane's thread with its
 *	  deadline, and, when its transaction is over, the per-message results
 *	  and the acknowledgement (offset store), or the retry.
 *
 * Called by the loop (loop.c), which has checked the positions of a new
 * database session before it hands a batch here (loop_send); nothing here
 * calls back into the loop or into positions.c.
 *
 * The order is the delivery contract: COMMIT returns "COMMIT", then the
 * outcomes are counted and logged, then the offsets are stored.  On a
 * transient or unexpected error nothing is acknowledged: the lane keeps
 * its batch and sends it again after a capped, jittered exponential
 * backoff, reconnecting as needed, while the partitions are paused and
 * polling goes on (so the group keeps us).  A signal while a batch waits
 * for its retry abandons it unacknowledged; a configuration or permission
 * error ends the feeder with exit 3.
 *
 * Everything here runs on the main thread, while the lane is not running;
 * the lane's thread only decodes and runs the batch (lane.c).
 *
 * Metrics: the attempt that commits is timed (transaction and offset
 * store) for batch_duration_seconds; each retried attempt is counted by
 * reason; the database is marked down when an attempt leaves no working
 * connection, and up when a batch commits.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "clock.h"
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
 * deliver_log_retry
 *		One line per failed attempt that will be retried.
 */
static void
deliver_log_retry(const lane *l, const db_error *err, int attempt, int delay)
{
	log_line	line;
	const batch_msg *first = &l->batch.msgs[0];

	log_begin(&line, err->cls == DB_ERR_OTHER ? LOG_ERROR : LOG_WARNING, "batch_failed");
	log_kv_str(&line, "class", db_error_class_name(err->cls));
	log_kv_str(&line, "step", err->step ? err->step : "");
	if (err->sqlstate[0])
		log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_str(&line, "error", err->message);
	log_kv_int(&line, "messages", l->batch.count);
	log_kv_fmt(&line, "first", "%s [%d] @%lld", first->topic, (int) first->partition,
			   (long long) first->offset);
	log_kv_int(&line, "attempt", attempt + 1);
	if (delay >= 0)
		log_kv_int(&line, "retry_in_ms", delay);
	if (l->index > 0)
		log_kv_int(&line, "session", l->index);
	log_end(&line);
}

/*
 * deliver_publish_registry
 *		The Schema Registry client's counters to the metrics, after each
 *		attempt (--value-format confluent only).
 */
static void
deliver_publish_registry(feeder_app *app)
{
	registry_stats rs;

	if (app->registry == NULL)
		return;
	registry_get_stats(app->registry, &rs);
	metrics_set_registry(&rs);
}

/*
 * deliver_report
 *		Count the outcomes of a committed batch and log each rejected or
 *		conflicting message with its Kafka coordinates (the function has
 *		already quarantined it in the same transaction).
 */
static void
deliver_report(feeder_app *app, const lane *l)
{
	const batch *b = &l->batch;
	uint64_t	counts[DB_NOUTCOMES] = {0};
	uint64_t	other_types = 0;
	int			i;

	for (i = 0; i < l->nrows; i++)
	{
		const db_row *row = &l->rows[i];
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
		log_kv_int(&line, "session", l->index);
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
deliver_maybe_reconnect(lane *l, const db_error *err, int failures)
{
	int			read_only = strcmp(err->sqlstate, "25006") == 0;
	log_line	line;

	if (!db_connected(l->db) ||
		(!read_only && failures % DELIVER_RECONNECT_AFTER != 0))
		return;
	db_disconnect(l->db);
	log_begin(&line, LOG_WARNING, "db_reconnecting");
	log_kv_str(&line, "reason", read_only ?
			   "the session is read-only (a standby or a fenced primary): another may reach the primary" :
			   "the batch failed repeatedly on this connection");
	log_kv_int(&line, "failures", failures);
	if (l->index > 0)
		log_kv_int(&line, "session", l->index);
	log_end(&line);
}

/*
 * deliver_maybe_split
 *		A batch of several messages that failed because of its size (out
 *		of memory, a program limit: db_size_caused) is retried in halves:
 *		its second half goes back in front of the lane's held messages and
 *		the lane's next batches are capped at what is left, so the same
 *		batch is never sent again.  The cap doubles back towards
 *		--batch-size with each commit (deliver_grow_cap).
 */
static void
deliver_maybe_split(feeder_app *app, lane *l, const db_error *err)
{
	int			was = l->batch.count;
	int			back;
	log_line	line;

	if (!db_size_caused(err->sqlstate) ||
		(back = batch_split(&l->batch, &l->pending)) == 0)
		return;
	l->batch.max_size = l->batch.count;
	l->capped_commits = 0;
	app->stats.splits++;
	log_begin(&line, LOG_WARNING, "batch_split");
	log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_int(&line, "messages", was);
	log_kv_int(&line, "retrying", l->batch.count);
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
deliver_grow_cap(feeder_app *app, lane *l)
{
	int			max = app->cfg->batch_size;

	if (l->batch.max_size >= max || ++l->capped_commits < DELIVER_GROW_AFTER)
		return;
	l->capped_commits = 0;
	l->batch.max_size = l->batch.max_size > max / 2 ? max : l->batch.max_size * 2;
}

/*
 * deliver_reset
 *		The lane's batch is over (committed, dropped or abandoned): release
 *		its messages, forget its failures.
 */
static void
deliver_reset(lane *l)
{
	batch_clear(&l->batch, kafka_release);
	l->attempt = 0;
	l->retry_at = -1;
}

/*
 * deliver_abandon
 *		Shutdown while the lane's batch waits for its retry: nothing of it
 *		is acknowledged, the group's next member reads it again.
 */
void
deliver_abandon(feeder_app *app, lane *l)
{
	log_line	line;

	app->stats.abandoned++;
	log_begin(&line, LOG_WARNING, "batch_abandoned");
	log_kv_int(&line, "messages", l->batch.count);
	log_kv_str(&line, "reason", "shutdown while the database was failing; nothing acknowledged");
	log_end(&line);
	deliver_reset(l);
}

/*
 * deliver_failed
 *		An attempt failed (err): exit 3 for a configuration error, abandon
 *		at shutdown, else schedule the retry (the main loop pauses the
 *		partitions while any lane waits for one).
 */
void
deliver_failed(feeder_app *app, lane *l, const db_error *err)
{
	int64_t		now = clock_now_ms();
	int			delay;

	if (!db_connected(l->db) || err->cls == DB_ERR_FATAL)
		metrics_set_database(0, err->message);
	if (err->cls == DB_ERR_FATAL)
	{
		db_log_fatal(err);
		app->db_config_error = 1;	/* the batch stays unacknowledged */
		return;
	}
	if (l->attempt == 0)
		l->failing_since = now;
	if (feeder_stop)
	{
		deliver_log_retry(l, err, l->attempt, -1);
		deliver_abandon(app, l);
		return;
	}
	app->stats.retries++;
	metrics_count_retry(db_retry_reason_of(err->sqlstate, err->step));
	deliver_publish_registry(app);
	delay = backoff_delay_ms(&app->backoff, l->attempt, backoff_random());
	deliver_log_retry(l, err, l->attempt, delay);
	deliver_maybe_split(app, l, err);
	l->attempt++;
	deliver_maybe_reconnect(l, err, l->attempt);
	l->retry_at = now + delay;
}

/*
 * deliver_deadline_ms
 *		How long a batch may run before the main thread cancels it:
 *		--statement-timeout-ms (or its default when it is 0, off) and
 *		DELIVER_DEADLINE_GRACE_MS more, since statement_timeout does not
 *		cover a COMMIT that waits for a synchronous standby.
 */
int64_t
deliver_deadline_ms(const feeder_app *app)
{
	int			timeout = app->cfg->statement_timeout_ms > 0 ?
		app->cfg->statement_timeout_ms : CONFIG_DEFAULT_STATEMENT_TIMEOUT;

	return (int64_t) timeout + DELIVER_DEADLINE_GRACE_MS;
}

/*
 * deliver_note_watermarks
 *		The high watermarks librdkafka cached of the batch's partitions, for
 *		the batch's transaction to record with their positions (consumer_lag);
 *		noted afresh at every attempt, as the partitions may have changed.
 */
static void
deliver_note_watermarks(feeder_app *app, lane *l)
{
	batch	   *b = &l->batch;
	int			i;

	b->nwatermarks = 0;
	for (i = 0; i < b->count; i++)
		if (i == 0 || b->msgs[i].partition != b->msgs[i - 1].partition ||
			strcmp(b->msgs[i].topic, b->msgs[i - 1].topic) != 0)
			batch_note_watermark(b, b->msgs[i].topic, b->msgs[i].partition,
								 kafka_cached_high_watermark(app->kc, b->msgs[i].topic,
															 b->msgs[i].partition));
}

/*
 * deliver_start
 *		Hand the lane's batch (new, or due for its retry) to its thread,
 *		with the batch's deadline.  The loop has checked the positions of
 *		a new database session first (loop_send).
 */
void
deliver_start(feeder_app *app, lane *l)
{
	deliver_note_watermarks(app, l);
	l->started = deliver_seconds();
	lane_submit(l, clock_now_ms() + deliver_deadline_ms(app));
}

/*
 * deliver_cut
 *		The batch committed only its first l->nrows messages: their decoded
 *		values would have passed the bound of a batch (decode.c).  The
 *		others go back in front of the lane's held messages, unacknowledged,
 *		to be the next batch.  -1 when they cannot be held (out of memory):
 *		the whole batch is then retried, its committed part found duplicate.
 */
static int
deliver_cut(feeder_app *app, lane *l)
{
	int			was = l->batch.count;
	int			back = was - l->nrows;
	batch_msg	next;
	log_line	line;

	if (batch_cut(&l->batch, &l->pending, l->nrows) != back)
	{
		db_error	err;

		memset(&err, 0, sizeof(err));
		err.cls = DB_ERR_TRANSIENT;
		err.step = "decode";
		snprintf(err.message, sizeof(err.message),
				 "out of memory while holding back the %d messages a batch could not take", back);
		deliver_failed(app, l, &err);
		return -1;
	}
	log_begin(&line, LOG_INFO, "batch_cut");
	log_kv_int(&line, "messages", was);
	log_kv_int(&line, "committed", l->nrows);
	log_kv_int(&line, "held_back", back);
	if (queue_peek(&l->pending, &next))
		log_kv_fmt(&line, "next", "%s [%d] @%lld", next.topic, (int) next.partition,
				   (long long) next.offset);
	log_kv_str(&line, "reason", "their decoded values would have passed the decoded bound of a batch (4 x --batch-max-bytes): they are the next batch");
	log_end(&line);
	return 0;
}

/*
 * deliver_hold_waiting
 *		Some messages of the batch wait for their schema (an id the registry
 *		does not know yet, within its grace: decode.c), and so do their
 *		partitions: the batch committed only its first l->nrows messages.
 *		The others go back in front of the lane's held messages, then the
 *		waiting partitions' messages move, in order, to the lane's waiting
 *		queue, which goes back in front of the held messages after a
 *		backoff (loop.c); those partitions are not fetched meanwhile
 *		(kafka_hold).  The other partitions go on: the batch's rest is the
 *		next batch.  Out of memory: the feeder exits (a message left behind
 *		would let a later offset of its partition be acknowledged).
 */
static void
deliver_hold_waiting(feeder_app *app, lane *l)
{
	const decoder *d = &l->dec;
	int			back = l->batch.count - l->nrows;
	int			held,
				delay,
				i;
	log_line	line;

	/* the messages not sent back in front, their partitions held */
	held = batch_cut(&l->batch, &l->pending, l->nrows) == back;
	for (i = 0; held && i < d->waits.n; i++)
		held = slot_set_add(&l->waits, d->waits.slots[i]) == 0;
	if (!held ||
		queue_move_if(&l->pending, &l->waiting, slot_set_has_msg, &l->waits) < 0)
	{
		log_simple(LOG_FATAL, "out_of_memory", "could not hold back the messages that wait for their schema");
		exit(FEEDER_EXIT_RUNTIME);
	}
	for (i = 0; i < l->waits.n; i++)
		kafka_hold(app->kc, l->waits.slots[i], 1);
	delay = backoff_delay_ms(&app->backoff, l->wait_attempts, backoff_random());
	if (l->wait_attempts < 30)
		l->wait_attempts++;
	l->wait_until = clock_now_ms() + delay;
	log_begin(&line, LOG_WARNING, "partition_waits");
	log_kv_str(&line, "at", d->wait_at);
	log_kv_str(&line, "error", d->wait_reason);
	log_kv_int(&line, "partitions", l->waits.n);
	log_kv_int(&line, "waiting", (int64_t) queue_length(&l->waiting));
	log_kv_int(&line, "committed", l->nrows);
	log_kv_int(&line, "retry_in_ms", delay);
	log_kv_str(&line, "action", "this partition waits, unacknowledged, from that message on; the other partitions go on");
	if (l->index > 0)
		log_kv_int(&line, "session", l->index);
	log_end(&line);
}

/*
 * deliver_finish
 *		The lane's thread is done with its batch: acknowledge it after the
 *		commit, or handle the failure.
 */
void
deliver_finish(feeder_app *app, lane *l)
{
	if (l->cls != DB_ERR_NONE)
	{
		deliver_failed(app, l, &l->err);
		return;
	}
	if (l->decodes && l->dec.waits.n > 0)
	{
		deliver_hold_waiting(app, l);
		if (l->nrows == 0)
		{
			/* nothing was sent: nothing committed, nothing to count */
			deliver_publish_registry(app);
			deliver_reset(l);
			return;
		}
	}
	else if (l->nrows < l->batch.count && deliver_cut(app, l) != 0)
		return;
	else if (l->waits.n == 0 &&
			 clock_now_ms() - l->wait_until > app->backoff.max_ms)
		l->wait_attempts = 0;	/* no wait for a while: the backoff starts over */
	deliver_report(app, l);
	kafka_store_offsets(app->kc, &l->batch);
	app->stats.batches++;
	deliver_grow_cap(app, l);
	app->last_commit_ms = clock_now_ms();
	metrics_observe_batch(deliver_seconds() - l->started);
	metrics_set_database(1, NULL);
	metrics_publish(&app->stats);
	deliver_publish_registry(app);
	if (l->attempt > 0)
	{
		log_line	line;

		log_begin(&line, LOG_INFO, "batch_recovered");
		log_kv_int(&line, "attempts", l->attempt + 1);
		log_kv_int(&line, "failing_ms", clock_now_ms() - l->failing_since);
		log_kv_int(&line, "messages", l->batch.count);
		log_end(&line);
	}
	deliver_reset(l);
}
