/*-------------------------------------------------------------------------
 *
 * loop.c
 *	  The main loop: consume, route each message to its partition's lane,
 *	  send each idle lane's batch, acknowledge what committed, repeat until
 *	  a signal.
 *
 * One thread owns Kafka.  A message goes to the lane of its partition
 * (batch_lane_of), so a partition's batches commit in order through one
 * database session, while other lanes' transactions run at the same
 * time.  A lane whose database is free sends what it holds at once
 * (batch_take); while its transaction runs, the next batch grows.  When a
 * lane holds two whole batches, consuming waits for lanes rather than for
 * Kafka, which bounds the memory held.
 *
 * All Kafka polling goes through loop_poll(), which also drops held
 * messages of partitions revoked by a rebalance, writes the periodic
 * counters line and, with --metrics-listen, publishes the metrics and
 * watches the idle database connection.  A poll that returns no message
 * also commits the offsets stored since the last commit (at most once a
 * second), so that the group's committed offsets do not trail the
 * database by auto.commit.interval.ms once the stream pauses.
 *
 * Rebalances: the rebalance callback first lets every running transaction
 * end and acknowledges what committed (loop_quiesce, through
 * kafka_set_quiesce_fn), so a revoke never slips between a COMMIT and the
 * offset store that follows it, and the revoked partitions' offsets are
 * committed with them.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <time.h>
#include <pthread.h>

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

/* Longest single wait, so that signals and periodic work are noticed. */
#define LOOP_SLICE_MS 100

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
	int			dropped = 0;
	int			i;

	for (i = 0; i < app->nlanes; i++)
	{
		lane	   *l = &app->lanes[i];

		dropped += queue_remove_if(&l->pending, kafka_msg_revoked, app->kc, kafka_release);
		if (lane_busy(l))
			continue;			/* its messages are the thread's until it ends */
		dropped += batch_remove_if(&l->batch, kafka_msg_revoked, app->kc, kafka_release);
		if (l->batch.count == 0)
		{
			l->attempt = 0;		/* a retry of nothing */
			l->retry_at = -1;
		}
	}
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
 * loop_lane_done
 *		Called by a lane's thread when its batch is over: wake the main
 *		thread, whether it waits in Kafka's poll or for lanes.
 */
void
loop_lane_done(void *arg)
{
	feeder_app *app = arg;

	pthread_mutex_lock(&app->wake_lock);
	app->wakes++;
	pthread_cond_broadcast(&app->wake_cond);
	pthread_mutex_unlock(&app->wake_lock);
	kafka_wake(app->kc);
}

/*
 * loop_woken
 *		Whether a lane finished since the main thread last looked.
 */
static int
loop_woken(feeder_app *app)
{
	uint64_t	wakes;

	pthread_mutex_lock(&app->wake_lock);
	wakes = app->wakes;
	pthread_mutex_unlock(&app->wake_lock);
	if (wakes == app->wakes_seen)
		return 0;
	app->wakes_seen = wakes;
	return 1;
}

/*
 * loop_wait_lanes
 *		Wait up to ms for a lane to finish (consuming is held back).
 */
static void
loop_wait_lanes(feeder_app *app, int ms)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (long) (ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L)
	{
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&app->wake_lock);
	while (app->wakes == app->wakes_seen && !feeder_stop)
		if (pthread_cond_timedwait(&app->wake_cond, &app->wake_lock, &deadline) != 0)
			break;
	pthread_mutex_unlock(&app->wake_lock);
}

/*
 * loop_any_busy
 *		Whether some lane's batch is not the main thread's (lane_busy).
 */
static int
loop_any_busy(feeder_app *app)
{
	int			i;

	for (i = 0; i < app->nlanes; i++)
		if (lane_busy(&app->lanes[i]))
			return 1;
	return 0;
}

/*
 * loop_collect
 *		Acknowledge (or schedule the retry of) every batch whose
 *		transaction is over.
 */
static void
loop_collect(feeder_app *app)
{
	int			i;

	(void) loop_woken(app);
	for (i = 0; i < app->nlanes; i++)
		if (lane_take(&app->lanes[i]))
			deliver_finish(app, &app->lanes[i]);
}

/*
 * loop_quiesce
 *		Let every running transaction end and acknowledge what committed:
 *		before a rebalance changes the assignment (kafka_set_quiesce_fn),
 *		before the positions of a new session are checked, at the end.
 */
void
loop_quiesce(void *arg)
{
	feeder_app *app = arg;
	int			i;

	for (i = 0; i < app->nlanes; i++)
	{
		lane	   *l = &app->lanes[i];

		lane_wait(l);
		if (lane_take(l))
			deliver_finish(app, l);
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

	if (loop_any_busy(app))
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
 * loop_lane_has_partitions
 *		Whether a partition assigned to us goes through lane index.
 */
static int
loop_lane_has_partitions(feeder_app *app, int index)
{
	kafka_assigned_partition *held;
	int			n = kafka_assigned(app->kc, &held),
				i,
				found = 0;

	for (i = 0; i < n && !found; i++)
		found = batch_lane_of_slot(held[i].slot, app->nlanes) == index;
	free(held);
	return found;
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
	lane	   *first = &app->lanes[0];

	if (now < app->next_positions_ms || loop_any_busy(app))
		return;
	if (kafka_waiting_start(app->kc) == 0 &&
		(!db_connected(first->db) || db_session(first->db) == first->positions_session))
		return;
	app->next_positions_ms = now + LOOP_POSITIONS_INTERVAL_MS;
	if (positions_reconcile(app, first, &err) == DB_ERR_NONE)
		loop_prune_revoked(app);
}

/*
 * loop_open_lanes
 *		While no batch runs and the first session is checked: open and
 *		check the sessions of the other lanes that have partitions, at most
 *		once a second.  So a lane's session is there before its first
 *		batch (after an assignment, typically): opened there, the check
 *		would first wait for every running batch and hold the main thread
 *		while it connects.  A lane that cannot connect now tries again with
 *		its first batch, which reports the error; a lane without partitions
 *		opens no session.
 */
static void
loop_open_lanes(feeder_app *app, int64_t now)
{
	db_error	err;
	int			i;

	if (app->nlanes <= 1 || now < app->next_lanes_ms || loop_any_busy(app) ||
		positions_needed(app, &app->lanes[0]))
		return;
	app->next_lanes_ms = now + LOOP_POSITIONS_INTERVAL_MS;
	for (i = 1; i < app->nlanes && !app->positions_fatal; i++)
	{
		lane	   *l = &app->lanes[i];

		if (positions_needed(app, l) && loop_lane_has_partitions(app, i) &&
			positions_reconcile(app, l, &err) == DB_ERR_NONE)
			loop_prune_revoked(app);
	}
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
	loop_open_lanes(app, now);
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
 *		header), do periodic work.  1 with *out filled on a message.  A
 *		lane that finishes its batch cuts the wait short (kafka_wake).
 */
static int
loop_poll(feeder_app *app, int timeout_ms, batch_msg *out)
{
	int			got = kafka_poll(app->kc, timeout_ms, out);

	if (kafka_take_rebalanced(app->kc))
	{
		loop_prune_revoked(app);
		app->next_lanes_ms = 0;	/* lanes may have partitions now */
	}
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
 * loop_route
 *		Hold a consumed message for its partition's lane.
 */
static void
loop_route(feeder_app *app, const batch_msg *m)
{
	lane	   *l = &app->lanes[batch_lane_of(m, app->nlanes)];

	if (queue_push(&l->pending, m) != 0)
	{
		/* dropping it would let a later offset acknowledge it */
		log_simple(LOG_FATAL, "out_of_memory", "could not hold a consumed message");
		exit(FEEDER_EXIT_RUNTIME);
	}
}

/*
 * loop_dispatch
 *		Send the batch of every lane whose database is free: a batch due
 *		for its retry, or what the lane holds when batch_take says so.
 *		Returns how long the loop may wait before a lane needs it again
 *		(a retry's time, a batch's --batch-wait-ms), at most LOOP_SLICE_MS.
 */
static int
loop_dispatch(feeder_app *app)
{
	int64_t		now = loop_now_ms();
	int64_t		wait = LOOP_SLICE_MS;
	int			i;

	for (i = 0; i < app->nlanes && !app->db_config_error && !app->positions_fatal; i++)
	{
		lane	   *l = &app->lanes[i];
		int64_t		left;

		if (lane_busy(l))
			continue;
		if (l->retry_at >= 0)
		{
			left = l->retry_at - now;
			if (left > 0)
			{
				wait = left < wait ? left : wait;
				continue;
			}
			deliver_start(app, l);
			continue;
		}
		if (batch_take(&l->batch, &l->pending, now))
		{
			deliver_start(app, l);
			continue;
		}
		if (l->batch.count > 0)
		{
			left = l->batch.first_ms + l->batch.wait_ms - now;
			if (left < wait)
				wait = left > 0 ? left : 0;
		}
	}
	return (int) wait;
}

/*
 * loop_update_pause
 *		Partitions are paused while some lane waits to retry its batch
 *		(polling goes on, so the group keeps us), resumed when none does.
 */
static void
loop_update_pause(feeder_app *app)
{
	int			i;

	for (i = 0; i < app->nlanes; i++)
		if (app->lanes[i].retry_at >= 0)
		{
			kafka_pause(app->kc);
			return;
		}
	kafka_resume(app->kc);
}

/*
 * loop_backlogged
 *		Whether some lane holds two whole batches (batch_backlogged).
 */
static int
loop_backlogged(feeder_app *app)
{
	int			i;

	for (i = 0; i < app->nlanes; i++)
		if (batch_backlogged(&app->lanes[i].batch, &app->lanes[i].pending))
			return 1;
	return 0;
}

/*
 * loop_stopping
 *		Whether the loop must end.
 */
static int
loop_stopping(feeder_app *app)
{
	return feeder_stop || kafka_fatal(app->kc) || app->db_config_error ||
		app->positions_fatal;
}

/*
 * loop_finish
 *		The end: running transactions end and what committed is
 *		acknowledged; a batch waiting for its retry at a signal is
 *		abandoned; the rest stays unacknowledged.
 */
static void
loop_finish(feeder_app *app)
{
	int			i;

	loop_quiesce(app);
	if (!feeder_stop)
		return;
	for (i = 0; i < app->nlanes; i++)
		if (app->lanes[i].retry_at >= 0 && app->lanes[i].batch.count > 0)
			deliver_abandon(app, &app->lanes[i]);
}

/*
 * loop_run
 *		Consume, route and deliver until a signal or a fatal error.
 *		Returns the exit code.
 */
int
loop_run(feeder_app *app)
{
	app->next_stats_ms = loop_now_ms() + (int64_t) app->cfg->stats_interval_s * 1000;
	app->last_commit_ms = loop_now_ms();
	app->waiting_since_ms = -1;
	metrics_set_phase(METRICS_RUNNING);
	while (!loop_stopping(app))
	{
		batch_msg	m;
		int			wait;

		loop_collect(app);
		wait = loop_dispatch(app);
		loop_update_pause(app);
		if (loop_stopping(app))
			break;
		if (loop_backlogged(app) && !kafka_is_paused(app->kc))
		{
			/* a lane holds its next batch: wait for lanes, not for Kafka */
			loop_wait_lanes(app, wait > 0 ? wait : 1);
			loop_tick(app);
			continue;
		}
		if (!loop_poll(app, wait, &m))
			continue;
		loop_route(app, &m);
		/* take what is ready, until a lane is done or holds a next batch */
		while (!loop_woken(app) && !loop_backlogged(app) && !loop_stopping(app) &&
			   loop_poll(app, 0, &m))
			loop_route(app, &m);
	}
	loop_finish(app);
	if (app->db_config_error)
		return FEEDER_EXIT_DATABASE;
	if (app->positions_fatal)
		return FEEDER_EXIT_POSITIONS;
	if (kafka_fatal(app->kc))
		return FEEDER_EXIT_KAFKA;
	return FEEDER_EXIT_OK;
}
