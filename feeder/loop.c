/*-------------------------------------------------------------------------
 *
 * loop.c
 *	  The main loop: consume, route each message to its partition's lane,
 *	  send each idle lane's batch, acknowledge what committed, repeat until
 *	  a signal.
 *
 * One thread owns Kafka.  A message goes to the lane of its partition,
 * so a partition's batches commit in order through one database session,
 * while other lanes' transactions run at the same time.  A live stream's
 * partitions all go to one lane, a backlog's are spread over every lane
 * (spread.c; loop_spread moves the held messages when the width changes).
 * A lane whose database is free sends what it holds at once
 * (batch_take); while its transaction runs, the next batch grows.  When a
 * lane holds two whole batches, consuming waits for lanes rather than for
 * Kafka, which bounds the memory held.
 *
 * All Kafka polling goes through loop_poll(), which also drops held
 * messages of partitions revoked by a rebalance and does the periodic work
 * (loop_tick): it watches the session of every idle lane, reconnects a
 * lost one and checks the new session's positions at once, so that a
 * database that crashed or failed over while no message arrived is
 * noticed within seconds and the events it lost are read again (whatever
 * the options: the metrics, with --metrics-listen, only publish what the
 * loop keeps); it also writes the periodic counters line.  A poll that
 * returns no message also commits the offsets stored since the last
 * commit (at most once a second), so that the group's committed offsets do
 * not trail the database by auto.commit.interval.ms once the stream
 * pauses.
 *
 * Before a lane's batch goes to delivery (deliver.c), a new database
 * session's positions are checked (positions.c) with every other lane
 * finished first (loop_send): the loop drives both, and neither calls back
 * into it.
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
#include <string.h>
#include <time.h>
#include <pthread.h>

#include "app.h"
#include "clock.h"
#include "feeder.h"
#include "log.h"
#include "metrics.h"
#include "status.h"

/* How often the metrics refresh the lag and the stall. */
#define LOOP_METRICS_INTERVAL_MS 1000

/* How often the sessions of idle lanes are checked (loop_watch_sessions). */
#define LOOP_WATCH_INTERVAL_MS 1000

/* Shortest interval between two idle positions checks (loop_check_positions). */
#define LOOP_POSITIONS_INTERVAL_MS 1000

/* Shortest interval between two offset commits asked for by an idle poll. */
#define LOOP_IDLE_COMMIT_INTERVAL_MS 1000

/* Longest single wait, so that signals and periodic work are noticed. */
#define LOOP_SLICE_MS 100

/*
 * loop_prune_revoked
 *		After a rebalance, drop the messages of the batch in flight and of
 *		the pending queue whose partitions were revoked: they are not ours
 *		to acknowledge any more, the new owner reads them again from the
 *		committed offset.
 */
static void
loop_prune_revoked(feeder_app *app)
{
	int			dropped = 0;
	int			i;

	for (i = 0; i < app->nlanes; i++)
	{
		lane	   *l = &app->lanes[i];

		dropped += queue_remove_if(&l->pending, kafka_msg_revoked, app->kc, kafka_release);
		dropped += queue_remove_if(&l->waiting, kafka_msg_revoked, app->kc, kafka_release);
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
 * loop_cancel_late
 *		A lane's batch still runs past its deadline (deliver_deadline_ms):
 *		say so and cancel it, once.  What a COMMIT answers after that is
 *		"result unknown" (db_cancel): nothing is acknowledged, the batch is
 *		retried.
 */
static void
loop_cancel_late(feeder_app *app, lane *l, int64_t now)
{
	char		why[256] = "";
	log_line	line;
	int			sent;

	if (l->cancelled || !lane_busy(l) || now < l->deadline_ms)
		return;
	l->cancelled = 1;
	app->stats.deadlines++;
	sent = db_cancel(l->db, why, sizeof(why)) == 0;
	log_begin(&line, LOG_ERROR, "batch_deadline");
	log_kv_int(&line, "session", l->index);
	log_kv_int(&line, "messages", l->batch.count);
	log_kv_int(&line, "running_ms",
			   now - l->deadline_ms + deliver_deadline_ms(app));
	log_kv_str(&line, "action", sent ?
			   "cancelled; a COMMIT that answers now is result unknown: nothing acknowledged, the batch is retried" :
			   "the cancel request could not be sent; waiting for the connection's keepalives");
	if (!sent)
		log_kv_str(&line, "error", why);
	log_kv_str(&line, "hint", "a COMMIT waiting for a synchronous standby that does not answer (synchronous_standby_names), a lock, or a server that stopped answering");
	log_end(&line);
}

/*
 * loop_watch_deadlines
 *		Every tick: cancel the batches past their deadline, so that a
 *		COMMIT statement_timeout does not cover cannot hold a lane for ever.
 */
static void
loop_watch_deadlines(feeder_app *app, int64_t now)
{
	int			i;

	for (i = 0; i < app->nlanes; i++)
		loop_cancel_late(app, &app->lanes[i], now);
}

/*
 * loop_wait_lane
 *		Wait for a lane's batch to end, with a deadline: past it, the batch
 *		is cancelled (loop_cancel_late); if even that does not end it, the
 *		wait goes on (the connection's keepalives end a dead one), logged
 *		again every DELIVER_DEADLINE_GRACE_MS.  The heartbeat of /healthz is
 *		not renewed meanwhile, so health turns 503 after --stall-timeout.
 */
static void
loop_wait_lane(feeder_app *app, lane *l)
{
	int64_t		until = l->deadline_ms;

	while (!lane_wait_until(l, until))
	{
		int64_t		now = clock_now_ms();

		if (!l->cancelled)
			loop_cancel_late(app, l, now);
		else
		{
			log_line	line;

			log_begin(&line, LOG_ERROR, "batch_still_running");
			log_kv_int(&line, "session", l->index);
			log_kv_int(&line, "past_deadline_ms", now - l->deadline_ms);
			log_kv_str(&line, "action", "waiting for the cancelled batch to end before going on");
			log_end(&line);
		}
		until = now + DELIVER_DEADLINE_GRACE_MS;
	}
}

/*
 * loop_quiesce
 *		Let every running transaction end and acknowledge what committed:
 *		before a rebalance changes the assignment (kafka_set_quiesce_fn),
 *		before the positions of a new session are checked, at the end.
 *		Each wait has the batch's deadline (loop_wait_lane).
 */
void
loop_quiesce(void *arg)
{
	feeder_app *app = arg;
	int			i;

	for (i = 0; i < app->nlanes; i++)
	{
		lane	   *l = &app->lanes[i];

		loop_wait_lane(app, l);
		if (lane_take(l))
			deliver_finish(app, l);
	}
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
 *		Publish the counters, lifecycle and Kafka state at every tick, the
 *		per-partition lag and the stall once a second, when the state and
 *		partitions are also handed to the status reporter (status.c); run
 *		with --metrics-listen or the status report (--status-interval,
 *		on by default), whose state is /healthz's verdict.  Only what the loop
 *		keeps is published here: the sessions are watched by loop_tick
 *		whether or not metrics are served (database_up follows what
 *		loop_watch_sessions, loop_reconnect_lost and the deliveries find).
 */
static void
loop_metrics(feeder_app *app, int64_t now)
{
	app->stats.status_failures = status_failures();
	metrics_publish(&app->stats);
	metrics_heartbeat(app->cfg->stall_timeout_s);
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
			char		reason[512];
			int			healthy;

			metrics_set_partitions(lags, n);
			loop_watch_stall(app, lags, n, now);
			healthy = metrics_health(reason, sizeof(reason));
			status_update(healthy, reason, lags, n);
			free(lags);
		}
	}
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
 * loop_watch_sessions
 *		Once every LOOP_WATCH_INTERVAL_MS, whatever the options: check the
 *		session of every idle lane (its batch is the main thread's and no
 *		retry is scheduled: a retry reconnects by itself) without a round
 *		trip (db_check_idle, which drops a closed connection).  A session
 *		the server closed (a crash, a failover, a terminated backend) is
 *		logged with its lane, the database is marked down, and its
 *		reconnection is due at once (loop_reconnect_lost).  Lane 0's
 *		session, which decides the start of assigned partitions, is also
 *		reopened when it is missing for another reason (the database was
 *		down at start, a batch's retry dropped it).
 */
static void
loop_watch_sessions(feeder_app *app, int64_t now)
{
	int			i;

	if (now < app->next_watch_ms)
		return;
	app->next_watch_ms = now + LOOP_WATCH_INTERVAL_MS;
	for (i = 0; i < app->nlanes; i++)
	{
		lane	   *l = &app->lanes[i];
		db_error	err;
		log_line	line;

		if (l->lost_ms >= 0 || l->retry_at >= 0 || lane_busy(l))
			continue;
		if (!db_connected(l->db))
		{
			if (i == 0)
			{
				l->lost_ms = now;
				l->reconnect_at = now;
				l->reconnect_failures = 0;
			}
			continue;
		}
		if (db_check_idle(l->db, &err) == DB_ERR_NONE)
			continue;
		metrics_set_database(0, err.message);
		log_begin(&line, LOG_WARNING, "db_connection_lost");
		log_kv_str(&line, "error", err.message);
		log_kv_str(&line, "action", "reconnecting while idle, then checking the positions");
		log_kv_int(&line, "session", l->index);
		log_end(&line);
		l->lost_ms = now;
		l->reconnect_at = now;
		l->reconnect_failures = 0;
	}
}

/*
 * loop_log_reconnect_failed
 *		One line per failed idle reconnection: at warning level, at error
 *		level when the server refused the role (class 28: a password
 *		rotated) or the failures go on (the tenth in a row and beyond).
 */
static void
loop_log_reconnect_failed(const lane *l, const db_error *err, int delay)
{
	log_line	line;
	int			refused = strncmp(err->sqlstate, "28", 2) == 0;

	log_begin(&line, refused || l->reconnect_failures >= 10 ? LOG_ERROR : LOG_WARNING,
			  "db_reconnect_failed");
	if (err->sqlstate[0])
		log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_str(&line, "error", err->message);
	log_kv_int(&line, "failures", l->reconnect_failures);
	log_kv_int(&line, "retry_in_ms", delay);
	log_kv_int(&line, "session", l->index);
	log_end(&line);
}

/*
 * loop_log_reconnected
 *		A lane's session lost while idle is open again (by
 *		loop_reconnect_lost, or by a batch that came first).
 */
static void
loop_log_reconnected(const lane *l, int64_t now)
{
	log_line	line;

	log_begin(&line, LOG_INFO, "db_reconnected");
	log_kv_int(&line, "session", l->index);
	log_kv_int(&line, "down_ms", now - l->lost_ms);
	log_kv_str(&line, "action", "checking the positions of the new session before anything is sent on it");
	log_end(&line);
}

/*
 * loop_reconnect_lost
 *		Reopen the session of an idle lane found lost (loop_watch_sessions)
 *		once its attempt is due, at most one attempt per call: each may hold
 *		the main thread for the connect timeout of every host that does not
 *		answer (connect_timeout, 10 s by default), and the batches of the
 *		other lanes are collected and sent between two attempts, as Kafka is
 *		polled.  Lane 0 goes first and the others wait for it: when it
 *		cannot connect, neither can they.  A lane that no longer has
 *		partitions is not reopened (loop_open_lanes opens it with its
 *		partitions).  A failed attempt is retried with the --retry-backoff-ms
 *		backoff; a configuration error (a privilege revoked) ends the feeder
 *		with exit 3.  The new session's positions are checked right after
 *		(loop_check_positions), before anything is sent on it.
 */
static void
loop_reconnect_lost(feeder_app *app, int64_t now)
{
	int			i,
				attempted = 0,
				reopened = 0,
				still_lost = 0;

	for (i = 0; i < app->nlanes; i++)
	{
		lane	   *l = &app->lanes[i];
		db_error	err;
		db_error_class cls;
		int			delay;

		if (l->lost_ms < 0)
			continue;
		if (db_connected(l->db))
		{
			/* reopened by a batch that came first */
			loop_log_reconnected(l, now);
			l->lost_ms = -1;
			reopened = 1;
			continue;
		}
		if (i > 0 && !loop_lane_has_partitions(app, i))
		{
			l->lost_ms = -1;
			continue;
		}
		if (attempted || now < l->reconnect_at || l->retry_at >= 0 || lane_busy(l) ||
			(i > 0 && app->lanes[0].lost_ms >= 0))
		{
			still_lost = 1;
			continue;
		}
		attempted = 1;
		cls = db_connect(l->db, &err);
		if (cls == DB_ERR_NONE)
		{
			loop_log_reconnected(l, now);
			l->lost_ms = -1;
			reopened = 1;
			continue;
		}
		still_lost = 1;
		metrics_set_database(0, err.message);
		if (cls == DB_ERR_FATAL)
		{
			/* a privilege revoked, a password changed: exit 3 at once */
			db_log_fatal(&err);
			app->db_config_error = 1;
			return;
		}
		delay = backoff_delay_ms(&app->backoff, l->reconnect_failures, backoff_random());
		if (l->reconnect_failures < 30)
			l->reconnect_failures++;
		l->reconnect_at = now + delay;
		loop_log_reconnect_failed(l, &err, delay);
	}
	if (reopened && !still_lost)
		metrics_set_database(1, NULL);
}

/*
 * loop_check_positions
 *		While no batch runs, at most once a second: start the partitions
 *		that wait for their start position (through lane 0's session,
 *		connecting if needed, unless loop_reconnect_lost reopens it), and
 *		check the positions of every lane's session that is new since its
 *		last check (reopened while idle by loop_reconnect_lost, or at
 *		start), so that a partition assigned during a database outage starts
 *		as soon as the database answers, and a database that lost commits
 *		(an asynchronous standby promoted) gets the lost events read again
 *		at once, even when no message arrives.
 */
static void
loop_check_positions(feeder_app *app, int64_t now)
{
	db_error	err;
	int			i;

	if (now < app->next_positions_ms || loop_any_busy(app))
		return;
	for (i = 0; i < app->nlanes && !app->positions_fatal && !app->db_config_error; i++)
	{
		lane	   *l = &app->lanes[i];

		if (i == 0 && l->lost_ms < 0 && kafka_waiting_start(app->kc) > 0)
			;					/* start them, connecting if needed */
		else if (!db_connected(l->db) || db_session(l->db) == l->positions_session)
			continue;
		app->next_positions_ms = now + LOOP_POSITIONS_INTERVAL_MS;
		if (positions_reconcile(app, l, &err) != DB_ERR_NONE)
			return;
		loop_prune_revoked(app);
	}
}

/*
 * loop_close_lane
 *		Close the session of lane l (not the first), which has no partition
 *		any more and holds no message: after a rebalance took its
 *		partitions, a lane keeps no backend it cannot use.  Its lane opens
 *		a new session when it gets partitions again (loop_open_lanes).
 */
static void
loop_close_lane(lane *l)
{
	log_line	line;

	if (!db_connected(l->db) || l->batch.count > 0 || queue_length(&l->pending) > 0)
		return;
	db_disconnect(l->db);
	log_begin(&line, LOG_INFO, "db_session_closed");
	log_kv_int(&line, "session", l->index);
	log_kv_str(&line, "reason", "no partition assigned goes through this session any more; it reopens when one does");
	log_end(&line);
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
 *		opens no session, and one whose partitions a rebalance took closes
 *		its session (loop_close_lane): a feeder holds at most one session
 *		more than the lanes of its partitions (the first, which starts
 *		them).
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

		if (!loop_lane_has_partitions(app, i))
			loop_close_lane(l);
		else if (l->lost_ms < 0 && positions_needed(app, l) &&
				 positions_reconcile(app, l, &err) == DB_ERR_NONE)
			loop_prune_revoked(app);
	}
}

/*
 * loop_tick
 *		Periodic work: the watch of the idle sessions and the reconnection
 *		of lost ones, the positions check, the metrics (when served), and
 *		the counters line every --stats-interval seconds.  What keeps the
 *		data correct and the feeder moving runs whatever the options; the
 *		metrics only publish it.
 */
static void
loop_tick(feeder_app *app)
{
	int64_t		now = clock_now_ms();

	loop_watch_deadlines(app, now);
	loop_watch_sessions(app, now);
	loop_reconnect_lost(app, now);
	loop_check_positions(app, now);
	loop_open_lanes(app, now);
	if (metrics_enabled() || status_enabled())
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
		int64_t		now = clock_now_ms();

		if (now >= app->next_idle_commit_ms)
		{
			advance_list moved = {0};

			/* the database's positions follow, from the reporter's session */
			kafka_ack_positions(app->kc, &moved);
			status_advance(&moved);
			if (kafka_commit_async(app->kc))
				app->next_idle_commit_ms = now + LOOP_IDLE_COMMIT_INTERVAL_MS;
		}
	}
	loop_tick(app);
	return got;
}

/*
 * loop_route
 *		Hold a consumed message for its partition's lane (in its waiting
 *		queue while its partition waits: deliver_hold_waiting).
 */
static void
loop_route(feeder_app *app, const batch_msg *m)
{
	lane	   *l = &app->lanes[spread_lane_of_slot(&app->spread, m->slot)];
	msg_queue  *q = l->waits.n > 0 && slot_set_has(&l->waits, m->slot) ?
		&l->waiting : &l->pending;

	/* behind a message of its partition that waits for its schema */
	if (queue_push(q, m) != 0)
	{
		/* dropping it would let a later offset acknowledge it */
		log_simple(LOG_FATAL, "out_of_memory", "could not hold a consumed message");
		exit(FEEDER_EXIT_RUNTIME);
	}
}

/*
 * loop_send
 *		Send a lane's batch (new, or due for its retry) through delivery.
 *		A new database session may have lost commits: its positions are
 *		checked first (positions_reconcile), with every other lane finished
 *		before (loop_quiesce), and the held messages of partitions sought
 *		back are dropped (loop_prune_revoked); a check that fails is the
 *		batch's failed attempt (deliver_failed), retried as any other.
 */
static void
loop_send(feeder_app *app, lane *l)
{
	db_error	err;

	l->retry_at = -1;
	if (positions_needed(app, l))
	{
		db_error_class cls;

		loop_quiesce(app);
		cls = positions_reconcile(app, l, &err);
		if (app->positions_fatal || app->db_config_error)
			return;				/* the batch stays unacknowledged */
		if (cls != DB_ERR_NONE)
		{
			deliver_failed(app, l, &err);
			return;
		}
		loop_prune_revoked(app);
		if (l->batch.count == 0)
			return;
	}
	deliver_start(app, l);
}

/*
 * loop_lane_quiet
 *		Whether a lane holds nothing: no batch in flight, assembled or
 *		waiting for its retry, no message, and no partition waiting.
 */
static int
loop_lane_quiet(lane *l)
{
	return !lane_busy(l) && l->retry_at < 0 && l->batch.count == 0 &&
		queue_length(&l->pending) == 0 && l->waits.n == 0 &&
		queue_length(&l->waiting) == 0;
}

/*
 * loop_release_waiting
 *		The partitions of a lane that wait for a schema (deliver.c's
 *		deliver_hold_waiting) are due for another attempt: their messages
 *		go back in front of the lane's held ones, in order (the batch in
 *		flight, if any, holds none of theirs), and they are fetched again.
 *		If they still wait, the next batch sets them aside again, with a
 *		longer backoff; once their id is known, or unknown past its grace,
 *		they go on.
 */
static void
loop_release_waiting(feeder_app *app, int64_t now)
{
	int			i,
				k;

	for (i = 0; i < app->nlanes; i++)
	{
		lane	   *l = &app->lanes[i];

		if (l->waits.n == 0 || now < l->wait_until)
			continue;
		if (queue_move_front(&l->waiting, &l->pending) != 0)
			continue;			/* out of memory: tried again later */
		for (k = 0; k < l->waits.n; k++)
			kafka_hold(app->kc, l->waits.slots[k], 0);
		l->waits.n = 0;
	}
}

/*
 * loop_spread
 *		Widen or narrow the lanes the partitions go to (spread.c).  Widen:
 *		the one lane is free, with no batch assembled, and holds a backlog;
 *		its messages move, in order, to the lanes of their slots.  Narrow:
 *		every lane is quiet, so no message moves.  Either way a partition's
 *		messages stay in one lane.
 */
static void
loop_spread(feeder_app *app)
{
	lane	   *first = &app->lanes[0];
	int64_t		now = clock_now_ms();
	log_line	line;
	size_t		held,
				i;
	int			quiet = 1,
				k;

	if (app->spread.width == 1)
	{
		held = queue_length(&first->pending);
		if (!spread_should_widen(&app->spread, held,
								 first->pending.bytes >= first->batch.max_bytes) ||
			lane_busy(first) || first->retry_at >= 0 || first->batch.count > 0 ||
			first->waits.n > 0)
			return;
		spread_widened(&app->spread, now);
		for (i = 0; i < held; i++)
		{
			batch_msg	m;

			queue_pop(&first->pending, &m);
			loop_route(app, &m);
		}
		log_begin(&line, LOG_DEBUG, "lanes_widened");
		log_kv_int(&line, "sessions", app->spread.width);
		log_kv_int(&line, "held", (int64_t) held);
		log_end(&line);
		return;
	}
	for (k = 0; k < app->nlanes && quiet; k++)
		quiet = loop_lane_quiet(&app->lanes[k]);
	if (!spread_should_narrow(&app->spread, quiet, now))
		return;
	spread_narrowed(&app->spread);
	log_begin(&line, LOG_DEBUG, "lanes_narrowed");
	log_kv_int(&line, "sessions", app->spread.width);
	log_end(&line);
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
	int64_t		now = clock_now_ms();
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
			loop_send(app, l);
			continue;
		}
		if (batch_take(&l->batch, &l->pending, now))
		{
			spread_sent(&app->spread, l->batch.count, now);
			loop_send(app, l);
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
	app->next_stats_ms = clock_now_ms() + (int64_t) app->cfg->stats_interval_s * 1000;
	app->last_commit_ms = clock_now_ms();
	app->waiting_since_ms = -1;
	metrics_set_phase(METRICS_RUNNING);
	while (!loop_stopping(app))
	{
		batch_msg	m;
		int			wait;

		loop_collect(app);
		loop_release_waiting(app, clock_now_ms());
		loop_spread(app);
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
	if (app->db_config_error || kafka_refused(app->kc))
		return FEEDER_EXIT_DATABASE;
	if (app->positions_fatal)
		return FEEDER_EXIT_POSITIONS;
	if (kafka_fatal(app->kc))
		return FEEDER_EXIT_KAFKA;
	return FEEDER_EXIT_OK;
}
