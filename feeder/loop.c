/*-------------------------------------------------------------------------
 *
 * loop.c
 *	  The main loop: assemble a batch, deliver it, repeat until a signal.
 *
 * All Kafka polling goes through loop_poll(), which also drops held
 * messages of partitions revoked by a rebalance, writes the periodic
 * counters line and, with --metrics-listen, publishes the metrics and
 * watches the idle database connection.  A poll that returns no message
 * also commits the offsets stored since the last commit (at most once a
 * second), so that the group's committed offsets do not trail the
 * database by auto.commit.interval.ms once the stream pauses.  Polling
 * never happens while a database transaction is open (see kafka.c for why
 * that matters).
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <time.h>

#include "app.h"
#include "feeder.h"
#include "log.h"
#include "metrics.h"

/* How often the metrics refresh the lag and check the idle database. */
#define LOOP_METRICS_INTERVAL_MS 1000

/* Shortest interval between two idle positions checks (loop_check_positions). */
#define LOOP_POSITIONS_INTERVAL_MS 1000

/* Shortest interval between two offset commits asked for by an idle poll. */
#define LOOP_IDLE_COMMIT_INTERVAL_MS 1000

/*
 * loop_now_ms
 *		Monotonic clock in milliseconds.
 */
int64_t
loop_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * loop_prune_revoked
 *		After a rebalance, drop the messages of the batch in flight and of
 *		the pending queue whose partitions were revoked: they are not ours
 *		to acknowledge any more, the new owner reads them again from the
 *		committed offset.
 */
void
loop_prune_revoked(feeder_app *app)
{
	int			dropped;

	dropped = batch_remove_if(&app->batch, kafka_msg_revoked, app->kc, kafka_release);
	dropped += queue_remove_if(&app->pending, kafka_msg_revoked, app->kc, kafka_release);
	if (dropped > 0)
	{
		log_line	line;

		log_begin(&line, LOG_INFO, "messages_released");
		log_kv_int(&line, "count", dropped);
		log_kv_str(&line, "reason", "partition revoked, or sought back to the database's position, before their batch committed");
		log_end(&line);
	}
}

/*
 * loop_watch_database
 *		Keep database_up true to life while no batch runs (metrics only):
 *		check the idle connection without a round trip, and once it is
 *		gone, reconnect with the retry backoff, so that /healthz turns 503
 *		when the database goes away and 200 when it is back even if no
 *		message arrives.  Never during a delivery, which reconnects by
 *		itself.  A reconnection attempt blocks the loop for at most the
 *		connect timeout (10 s by default), as a retried batch would.
 */
static void
loop_watch_database(feeder_app *app, int64_t now)
{
	db_error	err;

	if (app->delivering)
		return;
	if (db_connected(app->db))
	{
		log_line	line;

		if (db_check_idle(app->db, &err) == DB_ERR_NONE)
			return;
		metrics_set_database(0, err.message);
		log_begin(&line, LOG_WARNING, "db_connection_lost");
		log_kv_str(&line, "error", err.message);
		log_kv_str(&line, "action", "reconnecting while idle");
		log_end(&line);
		app->db_retry_attempt = 0;
		app->next_db_retry_ms = now;
		return;
	}
	if (now < app->next_db_retry_ms)
		return;
	switch (db_connect(app->db, &err))
	{
		case DB_ERR_NONE:
			metrics_set_database(1, NULL);
			app->db_retry_attempt = 0;
			return;
		case DB_ERR_FATAL:
			/* a privilege revoked, a password changed: exit 3 at once */
			metrics_set_database(0, err.message);
			deliver_log_fatal(&err);
			app->db_config_error = 1;
			return;
		default:
			break;
	}
	metrics_set_database(0, err.message);
	app->next_db_retry_ms = now + backoff_delay_ms(&app->backoff, app->db_retry_attempt,
												   backoff_random());
	if (app->db_retry_attempt < 30)
		app->db_retry_attempt++;
}

/*
 * loop_watch_stall
 *		Health that means progress: messages wait on an assigned partition
 *		(lag above 0) and no batch has committed for --stall-timeout
 *		seconds, whatever the reason (a batch failing for ever, a partition
 *		that is not fetched, a wait nobody noticed).  /healthz then answers
 *		503 with a one-line reason naming the partition that waits most.
 */
static void
loop_watch_stall(feeder_app *app, const kafka_partition_lag *lags, int n, int64_t now)
{
	const kafka_partition_lag *worst = NULL;
	char		reason[256];
	int64_t		since;
	int			i;

	for (i = 0; i < n; i++)
		if (lags[i].lag > 0 && (worst == NULL || lags[i].lag > worst->lag))
			worst = &lags[i];
	if (worst == NULL)
	{
		app->waiting_since_ms = -1;
		metrics_set_stall(NULL);
		return;
	}
	if (app->waiting_since_ms < 0)
		app->waiting_since_ms = now;
	since = app->waiting_since_ms > app->last_commit_ms ?
		app->waiting_since_ms : app->last_commit_ms;
	if (now - since < (int64_t) app->cfg->stall_timeout_s * 1000)
	{
		metrics_set_stall(NULL);
		return;
	}
	snprintf(reason, sizeof(reason),
			 "%lld messages wait on %s [%d] and no batch committed for %lld s",
			 (long long) worst->lag, worst->topic, (int) worst->partition,
			 (long long) ((now - since) / 1000));
	metrics_set_stall(reason);
}

/*
 * loop_metrics
 *		Publish the counters, lifecycle and Kafka state at every tick; the
 *		per-partition lag and the database check once a second.
 */
static void
loop_metrics(feeder_app *app, int64_t now)
{
	metrics_publish(&app->stats);
	metrics_set_kafka(kafka_up(app->kc));
	if (feeder_stop)
		metrics_set_phase(METRICS_STOPPING);
	if (now < app->next_metrics_ms)
		return;
	app->next_metrics_ms = now + LOOP_METRICS_INTERVAL_MS;

	{
		kafka_partition_lag *lags;
		int			n = kafka_partition_lags(app->kc, &lags);

		if (n >= 0)
		{
			metrics_set_partitions(lags, n);
			loop_watch_stall(app, lags, n, now);
			free(lags);
		}
	}
	loop_watch_database(app, now);
}

/*
 * loop_check_positions
 *		While no batch runs: start the partitions that wait for their start
 *		position, and check the positions of a database session opened
 *		while idle (loop_watch_database), at most once a second, so that a
 *		partition assigned during a database outage starts as soon as the
 *		database answers, even before any message arrives.
 */
static void
loop_check_positions(feeder_app *app, int64_t now)
{
	db_error	err;

	if (app->delivering || now < app->next_positions_ms)
		return;
	if (kafka_waiting_start(app->kc) == 0 &&
		(!db_connected(app->db) || db_session(app->db) == app->positions_session))
		return;
	app->next_positions_ms = now + LOOP_POSITIONS_INTERVAL_MS;
	if (positions_reconcile(app, &err) == DB_ERR_NONE)
		loop_prune_revoked(app);
}

/*
 * loop_tick
 *		Periodic work: the positions check, the metrics (when served), and
 *		the counters line every --stats-interval seconds.
 */
static void
loop_tick(feeder_app *app)
{
	int64_t		now = loop_now_ms();

	loop_check_positions(app, now);
	if (metrics_enabled())
		loop_metrics(app, now);
	if (app->cfg->stats_interval_s <= 0)
		return;
	if (now < app->next_stats_ms)
		return;
	app->stats.lag = kafka_lag(app->kc);
	stats_log(&app->stats);
	app->next_stats_ms = now + (int64_t) app->cfg->stats_interval_s * 1000;
}

/*
 * loop_poll
 *		Poll the consumer once (serving rebalances and errors), prune after
 *		a rebalance, commit stored offsets when nothing came (see the file
 *		header), do periodic work.  1 with *out filled on a message.
 */
int
loop_poll(feeder_app *app, int timeout_ms, batch_msg *out)
{
	int			got = kafka_poll(app->kc, timeout_ms, out);

	if (kafka_take_rebalanced(app->kc))
		loop_prune_revoked(app);
	if (!got)
	{
		int64_t		now = loop_now_ms();

		if (now >= app->next_idle_commit_ms && kafka_commit_async(app->kc))
			app->next_idle_commit_ms = now + LOOP_IDLE_COMMIT_INTERVAL_MS;
	}
	loop_tick(app);
	return got;
}

/*
 * loop_wait
 *		Sleep ms milliseconds while still polling, in short slices so that
 *		rebalances, heartbeats and signals are served.  The partitions are
 *		paused, but messages already fetched may still arrive: they are
 *		queued in order behind the batch in flight, never dropped.
 */
void
loop_wait(feeder_app *app, int ms)
{
	int64_t		deadline = loop_now_ms() + ms;

	while (!feeder_stop && !kafka_fatal(app->kc))
	{
		int64_t		left = deadline - loop_now_ms();
		batch_msg	m;

		if (left <= 0)
			break;
		if (loop_poll(app, left < BATCH_POLL_SLICE_MS ? (int) left : BATCH_POLL_SLICE_MS, &m) &&
			queue_push(&app->pending, &m) != 0)
		{
			/* dropping it would let a later offset acknowledge it */
			log_simple(LOG_FATAL, "out_of_memory", "could not hold a consumed message");
			exit(FEEDER_EXIT_RUNTIME);
		}
	}
}

/*
 * Batch source callbacks for batch_fill().
 */
static int
loop_source_poll(void *arg, int timeout_ms, batch_msg *out)
{
	return loop_poll((feeder_app *) arg, timeout_ms, out);
}

static int64_t
loop_source_now(void *arg)
{
	(void) arg;
	return loop_now_ms();
}

static int
loop_source_stopping(void *arg)
{
	feeder_app *app = arg;

	return feeder_stop || kafka_fatal(app->kc) || app->db_config_error ||
		app->positions_fatal;
}

/*
 * loop_run
 *		Assemble and deliver batches until a signal or a fatal error.
 *		Returns the exit code.
 */
int
loop_run(feeder_app *app)
{
	batch_source src = {loop_source_poll, loop_source_now, loop_source_stopping, app};

	app->next_stats_ms = loop_now_ms() + (int64_t) app->cfg->stats_interval_s * 1000;
	app->last_commit_ms = loop_now_ms();
	app->waiting_since_ms = -1;
	metrics_set_phase(METRICS_RUNNING);
	while (!feeder_stop && !kafka_fatal(app->kc))
	{
		deliver_result r;

		batch_fill(&app->batch, &app->pending, &src);
		if (app->db_config_error)
			return FEEDER_EXIT_DATABASE;
		if (app->positions_fatal)
			return FEEDER_EXIT_POSITIONS;
		if (app->batch.count == 0)
			continue;
		r = deliver_batch(app);
		batch_clear(&app->batch, kafka_release);
		if (r == DELIVER_DB_FATAL)
			return FEEDER_EXIT_DATABASE;
		if (r == DELIVER_POSITIONS_FATAL)
			return FEEDER_EXIT_POSITIONS;
		if (r == DELIVER_ABANDONED)
			break;
	}
	if (kafka_fatal(app->kc))
		return FEEDER_EXIT_KAFKA;
	return FEEDER_EXIT_OK;
}
