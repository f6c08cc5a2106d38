/*-------------------------------------------------------------------------
 *
 * positions.c
 *	  Where each partition resumes: the database's positions decide.
 *
 * The batch function records, in each batch's own transaction, the next
 * offset of every partition of the batch for the feeder's consumer group
 * (received_orders_positions).  The database is therefore the authority on
 * how far the group got, and this file applies it at two moments:
 *
 *	- On every assignment (positions_on_assign, called by the rebalance
 *	  callback), each new partition starts at the database's position when
 *	  it has one, else at its earliest offset (source=earliest
 *	  reason=no_position), whatever the database holds of other partitions
 *	  or topics.  Kafka's committed offset never starts a partition: a
 *	  database restored from before a partition's or a topic's first batch
 *	  has no position of it, while Kafka's committed offset acknowledges
 *	  what the restore lost.  Reading from the earliest offset re-reads
 *	  what the database may already hold, which the batch function absorbs
 *	  as duplicates.  The one way to start from Kafka's committed offsets
 *	  is to write them into the database first, explicitly: the one-shot
 *	  received-orders-feeder --adopt-kafka-offsets (adopt.c), meant for the
 *	  first start after an upgrade from a feeder that kept its progress
 *	  in Kafka only.  When the database cannot be asked, the partitions
 *	  wait, paused, and positions_reconcile starts them as soon as it can.
 *
 *	- On every new database session (a reconnect, a failover to another
 *	  host of a multi-host DSN), before the next batch: positions_reconcile
 *	  compares the database's positions of the partitions held with the next
 *	  offset this feeder had itself committed there.  Where the database is
 *	  behind (it lost commits: a restore, an asynchronous standby promoted),
 *	  the held messages of that partition are dropped and it is sought back
 *	  to the database's position: the lost events are read again.
 *
 * Both moments need the partition's earliest and latest offsets, asked of
 * its leader (kafka_watermarks: 2 s at most, a deadline that holds even
 * when the leader is down).  A partition whose offsets cannot be read (its
 * leader down or unknown) is never started at a guessed offset: it alone
 * waits for its start, paused, nothing of it acknowledged (a started one is
 * put back to waiting, its held messages dropped), and is tried again after
 * a backoff (1 s doubling up to 30 s), one line
 * event=start_position_unavailable per failed attempt with the topic, the
 * partition and the error, counted (start_position_failures_total; the
 * gauge partitions_waiting_start); every other partition starts, and the
 * lanes run.  One pass asks Kafka for POSITIONS_PASS_BUDGET_MS at most (a
 * partition not asked in time waits for the next pass), so a broker that
 * does not answer costs the main thread a bounded time per pass.
 *
 * A database position below a partition's earliest offset is a position
 * gap: retention (or DeleteRecords) deleted offsets db_position .. low - 1
 * before the database received them.  It is never skipped silently, and it
 * stops nothing else (positions_gap): the gap is recorded in the database
 * (record_position_gap, the view received_orders.position_gaps), logged
 * (event=position_gap, with the SQL that accepts it) and counted
 * (position_gaps_total, the gauge partitions_waiting_gap), and that
 * partition alone waits, paused, nothing of it acknowledged, tried again
 * with the start backoff, each time from the database's position read
 * again.  An operator accepts the gap with
 * received_orders.accept_position_gap, which moves the position to the log
 * start: the next retry starts the partition there, without a restart.
 * --accept-position-loss records the gap as accepted by the feeder's role
 * and starts the partition at its earliest offset at once.
 *
 * A database position above a partition's latest offset (the topic was
 * re-created, or this is another cluster) means the events after it are in
 * no partition any more: one line with the numbers, counted, and by
 * default the feeder stops with exit code 5; --accept-position-loss starts
 * such a partition at its earliest offset instead and moves the position
 * back in the database too (restart_position, compare and set): batches
 * only move positions forwards, and once the new topic grew past the old
 * position a later start would otherwise skip what lies between.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "catch_up.h"
#include "clock.h"
#include "db_positions.h"
#include "feeder.h"
#include "log.h"

/* How a start offset was chosen, for the start_position line. */
typedef enum positions_source
{
	POSITIONS_FROM_DATABASE,
	POSITIONS_FROM_EARLIEST,	/* the database has no position */
	POSITIONS_FROM_LOSS			/* out of range, loss accepted */
} positions_source;

static const char *const positions_source_names[] = {"database", "earliest", "earliest"};
static const char *const positions_reason_names[] = {NULL, "no_position", "position_out_of_range"};

/*
 * positions_out_of_range
 *		A database position beyond the partition's end (a re-created topic,
 *		another cluster): say so with the numbers, count it, and either give
 *		the earliest offset to start at (--accept-position-loss, the position
 *		moved back there in the database) or flag the feeder to stop with
 *		exit 5.
 */
static int64_t
positions_out_of_range(feeder_app *app, db_conn *db, const char *topic,
					   int32_t partition, int64_t db_position, int64_t low,
					   int64_t high)
{
	int			accept = app->cfg->accept_position_loss;
	log_line	line;

	app->stats.positions_out_of_range++;
	log_begin(&line, accept ? LOG_WARNING : LOG_FATAL, "position_out_of_range");
	log_kv_fmt(&line, "at", "%s [%d] @%lld", topic, (int) partition,
			   (long long) db_position);
	log_kv_str(&line, "topic", topic);
	log_kv_int(&line, "partition", partition);
	log_kv_int(&line, "db_position", db_position);
	log_kv_int(&line, "low", low);
	log_kv_int(&line, "high", high);
	log_kv_int(&line, "lost", 0);
	log_kv_str(&line, "reason",
			   "the database's position is beyond the partition's end: the topic was re-created or this is another cluster; events after the position are not in this partition");
	log_kv_str(&line, "action", accept ? "continue" : "stop");
	if (!accept)
		log_kv_str(&line, "hint",
				   "check that the feeder reads the right cluster and topic; if the topic really was re-created, restart with --accept-position-loss to start at the earliest offset, or move the position with received_orders.set_consumer_position()");
	log_end(&line);
	if (!accept)
		app->positions_fatal = 1;
	else
	{
		db_error	err;

		if (db_restart_position(db, topic, partition, db_position, low,
								&err) != DB_ERR_NONE)
		{
			log_begin(&line, LOG_FATAL, "position_restart_failed");
			log_kv_fmt(&line, "at", "%s [%d] @%lld", topic, (int) partition,
					   (long long) db_position);
			if (err.sqlstate[0])
				log_kv_str(&line, "sqlstate", err.sqlstate);
			log_kv_str(&line, "error", err.message);
			log_kv_str(&line, "hint",
					   "the database's position must move back to the partition's earliest offset: GRANT EXECUTE ON FUNCTION received_orders.restart_position(text, text, integer, bigint, bigint) to the feeder's role, or run received_orders.set_consumer_position()");
			log_end(&line);
			app->positions_fatal = 1;
		}
	}
	return low;
}

/* One pass of starts asks Kafka for partitions' offsets this long at most. */
#define POSITIONS_PASS_BUDGET_MS 3000

/*
 * A partition whose start failed is tried again after 1 s, doubling up to
 * 30 s (jittered), or the batches' --retry-backoff-ms and
 * --retry-backoff-max-ms where larger: a broker down usually stays down for
 * minutes, and each attempt may cost the main loop a query's timeout.
 */
#define POSITIONS_START_BACKOFF_MS 1000
#define POSITIONS_START_BACKOFF_MAX_MS 30000

/*
 * positions_defer
 *		Put one partition to waiting for its start, alone, paused, tried
 *		again after the start backoff (see POSITIONS_START_BACKOFF_MS);
 *		returns its failures in a row, this one included, the delay in
 *		*delay.
 */
static int
positions_defer(feeder_app *app, const char *topic, int32_t partition, int *delay)
{
	backoff_policy policy = {
		app->backoff.base_ms > POSITIONS_START_BACKOFF_MS ?
		app->backoff.base_ms : POSITIONS_START_BACKOFF_MS,
		app->backoff.max_ms > POSITIONS_START_BACKOFF_MAX_MS ?
		app->backoff.max_ms : POSITIONS_START_BACKOFF_MAX_MS
	};

	*delay = 0;
	return kafka_defer_start(app->kc, topic, partition, &policy, delay);
}

/*
 * positions_start_failed
 *		A partition's offsets could not be read from its leader (or its seek
 *		failed; error says what was wrong): that partition alone waits,
 *		paused, nothing of it acknowledged, and is tried again after a
 *		backoff that grows with its failures in a row (see
 *		POSITIONS_START_BACKOFF_MS); the other partitions go on.  One line
 *		per failed attempt, so at most one per retry interval, counted.
 */
static void
positions_start_failed(feeder_app *app, const char *topic, int32_t partition,
					   const char *error)
{
	log_line	line;
	int			delay = 0;
	int			failures = positions_defer(app, topic, partition, &delay);

	app->stats.start_failures++;
	log_begin(&line, failures == 1 ? LOG_WARNING : LOG_ERROR,
			  "start_position_unavailable");
	log_kv_fmt(&line, "at", "%s [%d]", topic, (int) partition);
	log_kv_str(&line, "topic", topic);
	log_kv_int(&line, "partition", partition);
	log_kv_str(&line, "error", error);
	log_kv_int(&line, "failures", failures);
	log_kv_int(&line, "retry_in_ms", delay);
	log_kv_str(&line, "action",
			   "this partition waits, paused, nothing of it acknowledged; the other partitions go on");
	log_kv_str(&line, "hint",
			   "check the partition's leader broker (kafka-topics.sh --describe --topic): the partition starts at the database's position as soon as its offsets can be read");
	log_end(&line);
}

/*
 * positions_gap_not_recorded
 *		record_position_gap failed (no EXECUTE on it, an extension without
 *		it, the session lost): said, with what fixes it; the gap is
 *		logged, counted and waited on all the same.
 */
static void
positions_gap_not_recorded(const char *topic, int32_t partition, const db_error *err)
{
	log_line	line;

	log_begin(&line, LOG_ERROR, "position_gap_not_recorded");
	log_kv_fmt(&line, "at", "%s [%d]", topic, (int) partition);
	if (err->sqlstate[0])
		log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_str(&line, "error", err->message);
	log_kv_str(&line, "hint",
			   "the gap cannot be accepted with received_orders.accept_position_gap() until it is recorded: GRANT EXECUTE ON FUNCTION received_orders.record_position_gap(text, text, integer, bigint, bigint, boolean) to the feeder's role (received_orders 1.3), or move the position with received_orders.set_consumer_position()");
	log_end(&line);
}

/*
 * positions_gap_closed
 *		A partition that waited on a position gap from gap_first starts at
 *		offset: an operator accepted the gap (accept_position_gap) or moved
 *		the position.  Said, and the offsets skipped counted as lost.
 */
static void
positions_gap_closed(feeder_app *app, const char *topic, int32_t partition,
					 int64_t gap_first, int64_t offset)
{
	log_line	line;
	int64_t		lost = offset > gap_first ? offset - gap_first : 0;

	app->stats.positions_lost += (uint64_t) lost;
	log_begin(&line, LOG_WARNING, "position_gap_closed");
	log_kv_fmt(&line, "at", "%s [%d] @%lld", topic, (int) partition,
			   (long long) offset);
	log_kv_str(&line, "topic", topic);
	log_kv_int(&line, "partition", partition);
	log_kv_int(&line, "first_lost", gap_first);
	log_kv_int(&line, "resumed_at", offset);
	log_kv_int(&line, "lost", lost);
	log_end(&line);
}

/*
 * positions_gap
 *		A database position below the partition's earliest offset (low):
 *		retention deleted offsets db_position .. low - 1 before the database
 *		received them (see the file header).  Recorded in the database
 *		(record_position_gap), logged (one line event=position_gap per
 *		attempt, so at most one per retry interval) and counted once per
 *		gap.  0 when the whole range is accepted (--accept-position-loss, or
 *		an operator accepted it since the positions were read: then it is
 *		closed, positions_gap_closed): the partition starts at low.  -1
 *		otherwise: it alone waits, paused, and is tried again after the
 *		start backoff.
 */
static int
positions_gap(feeder_app *app, db_conn *db, const char *topic, int32_t partition,
			  int64_t db_position, int64_t low, int64_t high)
{
	int			accept = app->cfg->accept_position_loss;
	int			accepted = 0;
	int			recorded;
	int			failures = 0;
	int			delay = 0;
	db_error	err;
	log_line	line;

	recorded = db_record_gap(db, topic, partition, db_position, low - 1, accept,
							 &accepted, &err) == DB_ERR_NONE;
	if (!recorded)
	{
		positions_gap_not_recorded(topic, partition, &err);
		accepted = accept;
	}
	if (accepted && !accept)
	{
		/*
		 * An operator accepted the gap after the positions were read (or a
		 * gap covering it earlier): closed, as at the next retry.
		 */
		positions_gap_closed(app, topic, partition, db_position, low);
		return 0;
	}
	if (kafka_mark_gap(app->kc, topic, partition, db_position) > 0)
		app->stats.position_gaps++;
	if (accepted)
	{
		app->stats.positions_out_of_range++;
		app->stats.positions_lost += (uint64_t) (low - db_position);
	}
	else
		failures = positions_defer(app, topic, partition, &delay);

	log_begin(&line, accepted ? LOG_WARNING : LOG_ERROR, "position_gap");
	log_kv_fmt(&line, "at", "%s [%d] @%lld", topic, (int) partition,
			   (long long) db_position);
	log_kv_str(&line, "group", app->cfg->group);
	log_kv_str(&line, "topic", topic);
	log_kv_int(&line, "partition", partition);
	log_kv_int(&line, "first_lost", db_position);
	log_kv_int(&line, "last_lost", low - 1);
	log_kv_int(&line, "lost", low - db_position);
	log_kv_int(&line, "low", low);
	log_kv_int(&line, "high", high);
	log_kv_str(&line, "recorded", recorded ? "yes" : "no");
	log_kv_str(&line, "reason",
			   "the database's position is below the partition's earliest offset: retention deleted events the database never received");
	log_kv_str(&line, "action", accepted ? "continue" : "wait");
	if (accepted)
		log_kv_str(&line, "detail",
				   "--accept-position-loss: the gap is accepted, the partition starts at its earliest offset");
	else
	{
		char		group[2 * 256 + 1];
		char		hint[1024];
		const char *c;
		size_t		n = 0;

		/* the group as an SQL literal's content: quotes doubled */
		for (c = app->cfg->group; *c && n + 2 < sizeof(group); c++)
		{
			if (*c == '\'')
				group[n++] = '\'';
			group[n++] = *c;
		}
		group[n] = '\0';

		log_kv_int(&line, "failures", failures);
		log_kv_int(&line, "retry_in_ms", delay);
		log_kv_str(&line, "detail",
				   "this partition waits, paused, nothing of it acknowledged; the other partitions go on");
		snprintf(hint, sizeof(hint),
				 "recover the lost events from their source if you can, then accept the loss: SELECT received_orders.accept_position_gap('%s', '%s', %d); the partition resumes at offset %lld at its next retry, without a restart",
				 group, topic, (int) partition, (long long) low);
		log_kv_str(&line, "hint", hint);
	}
	log_end(&line);
	return accepted ? 0 : -1;
}

/*
 * positions_choose
 *		The start offset of one partition given the database's positions
 *		(see the file header); *source says how it was chosen, *low is the
 *		partition's earliest offset.  -1 when the partition's offsets were
 *		not asked of Kafka, because the pass's time (until deadline, in
 *		clock_now_ms) is spent (tried again at the next pass), or could not
 *		be (positions_start_failed: it waits alone, tried again later), or
 *		because its position lies in a gap not accepted (positions_gap:
 *		likewise).
 */
static int
positions_choose(feeder_app *app, db_conn *db, const db_position *positions, int n,
				 const char *topic, int32_t partition, int64_t deadline,
				 int64_t *offset, positions_source *source, int64_t *low)
{
	int64_t		db_position = db_position_find(positions, n, topic, partition);
	int64_t		high;
	int			err;

	if (clock_now_ms() >= deadline)
		return -1;
	if ((err = kafka_watermarks(app->kc, topic, partition, low, &high)) != 0)
	{
		positions_start_failed(app, topic, partition,
							   rd_kafka_err2str((rd_kafka_resp_err_t) err));
		return -1;
	}
	if (db_position < 0)
	{
		*source = POSITIONS_FROM_EARLIEST;
		*offset = RD_KAFKA_OFFSET_BEGINNING;
		return 0;
	}
	*source = POSITIONS_FROM_DATABASE;
	*offset = db_position;
	if (db_position < *low)
	{
		if (positions_gap(app, db, topic, partition, db_position, *low, high) != 0)
			return -1;
		*source = POSITIONS_FROM_LOSS;
		*offset = *low;
	}
	else if (db_position > high)
	{
		*source = POSITIONS_FROM_LOSS;
		*offset = positions_out_of_range(app, db, topic, partition,
										 db_position, *low, high);
	}
	return 0;
}

/*
 * positions_log_start
 *		One line per partition started: where, and why there.  A partition
 *		without a position whose earliest offset (low) is above 0 lost its
 *		beginning to retention, and nothing tells whether the database
 *		holds those events (a restore older than the partition's first
 *		batch, say): that is said, at warning level, not skipped silently.
 */
static void
positions_log_start(const char *topic, int32_t partition, int64_t offset,
					positions_source source, int64_t low)
{
	log_line	line;
	int			unknown = source == POSITIONS_FROM_EARLIEST && low > 0;

	log_begin(&line, unknown ? LOG_WARNING : LOG_INFO, "start_position");
	log_kv_str(&line, "topic", topic);
	log_kv_int(&line, "partition", partition);
	if (offset >= 0)
		log_kv_int(&line, "offset", offset);
	else
		log_kv_str(&line, "offset", "earliest");
	log_kv_str(&line, "source", positions_source_names[source]);
	if (positions_reason_names[source])
		log_kv_str(&line, "reason", positions_reason_names[source]);
	if (source == POSITIONS_FROM_EARLIEST)
		log_kv_int(&line, "low", low);
	if (unknown)
		log_kv_str(&line, "warning",
				   "the database has no position of this partition and Kafka no longer holds its offsets below low: events deleted by retention cannot be read again; check that the database holds them");
	log_end(&line);
}

/* While positions cannot be read, a failure is logged again this often. */
#define POSITIONS_RELOG_MS 30000

/*
 * positions_read
 *		The group's positions from the database, for the Kafka cluster the
 *		feeder is connected to (its id, from the brokers' metadata, is
 *		checked by the database against the one the positions were taken
 *		on; until a broker has answered, the positions wait).  A
 *		configuration error (the group is another role's, its positions are
 *		of another cluster) marks the feeder for exit 3.  Other failures
 *		are logged: the first of a run at warning level (a reconnection
 *		usually follows) unless the database answered refusing the role
 *		(class 28: 28P01 after a password rotation), then at error level
 *		whenever the SQLSTATE changes and every POSITIONS_RELOG_MS while
 *		the failures go on, so that a partition waiting for its start is
 *		never a silent wait.
 */
static db_error_class
positions_read(feeder_app *app, db_conn *db, db_position **positions, int *n,
			   db_error *err)
{
	char	   *cluster_id = kafka_cluster_id(app->kc);
	db_error_class cls;
	int64_t		now;

	if (cluster_id != NULL)
	{
		if (strcmp(cluster_id, app->kafka_cluster) != 0)
		{
			log_line	line;

			log_begin(&line, LOG_INFO, "kafka_cluster");
			log_kv_str(&line, "cluster_id", cluster_id);
			log_end(&line);
			snprintf(app->kafka_cluster, sizeof(app->kafka_cluster), "%s",
					 cluster_id);
		}
		cls = db_read_positions(db, cluster_id, positions, n, err);
	}
	else
	{
		/* positions belong to one cluster: wait until it says which */
		*positions = NULL;
		*n = 0;
		memset(err, 0, sizeof(*err));
		cls = err->cls = DB_ERR_TRANSIENT;
		err->step = "positions";
		snprintf(err->message, sizeof(err->message), "%s",
				 "the Kafka cluster's id is not known yet (no broker has answered)");
	}
	free(cluster_id);

	if (cls == DB_ERR_NONE)
	{
		app->positions_failing = 0;
		app->positions_fail_sqlstate[0] = '\0';
		return cls;
	}
	if (cls == DB_ERR_FATAL)
	{
		db_log_fatal(err);
		app->db_config_error = 1;
		return cls;
	}
	now = clock_now_ms();
	app->positions_failing++;
	if (app->positions_failing == 1 ||
		strcmp(err->sqlstate, app->positions_fail_sqlstate) != 0 ||
		now - app->positions_logged_ms >= POSITIONS_RELOG_MS)
	{
		log_line	line;
		int			refused = strncmp(err->sqlstate, "28", 2) == 0;

		log_begin(&line, app->positions_failing == 1 && !refused ? LOG_WARNING : LOG_ERROR,
				  "positions_unavailable");
		if (err->sqlstate[0])
			log_kv_str(&line, "sqlstate", err->sqlstate);
		log_kv_str(&line, "error", err->message);
		log_kv_int(&line, "failures", app->positions_failing);
		log_kv_str(&line, "action", "partitions wait, paused, until the database answers");
		log_end(&line);
		snprintf(app->positions_fail_sqlstate, sizeof(app->positions_fail_sqlstate),
				 "%s", err->sqlstate);
		app->positions_logged_ms = now;
	}
	return cls;
}

/*
 * positions_on_assign
 *		kafka_start_fn: fill the start offset of each newly assigned
 *		partition from the database's positions.  -1 when the database
 *		could not be asked: the partitions then wait, paused.  A partition
 *		whose offsets could not be asked of Kafka (or not within this pass's
 *		time) is left at RD_KAFKA_OFFSET_INVALID: it alone waits.
 */
int
positions_on_assign(void *arg, rd_kafka_topic_partition_list_t *parts)
{
	feeder_app *app = arg;
	db_position *positions;
	int			n,
				i;
	db_error	err;
	int64_t		deadline = clock_now_ms() + POSITIONS_PASS_BUDGET_MS;

	if (positions_read(app, app->db, &positions, &n, &err) != DB_ERR_NONE)
		return -1;
	for (i = 0; i < parts->cnt && !app->positions_fatal; i++)
	{
		rd_kafka_topic_partition_t *p = &parts->elems[i];
		positions_source source;
		int64_t		low;

		if (positions_choose(app, app->db, positions, n, p->topic, p->partition,
							 deadline, &p->offset, &source, &low) != 0)
			p->offset = RD_KAFKA_OFFSET_INVALID;
		else if (!app->positions_fatal)
			positions_log_start(p->topic, p->partition, p->offset, source, low);
	}
	db_free_positions(positions, n);
	if (app->positions_fatal)
	{
		for (i = 0; i < parts->cnt; i++)
			parts->elems[i].offset = RD_KAFKA_OFFSET_INVALID;
		return -1;
	}
	return 0;
}

/*
 * positions_needed
 *		Whether positions_reconcile must run before the next batch: a
 *		partition waits for its start, or the database session is not the
 *		one whose positions were last checked (or there is none yet).
 */
int
positions_needed(const feeder_app *app, const lane *l)
{
	return kafka_waiting_start(app->kc) > 0 || !db_connected(l->db) ||
		db_session(l->db) != l->positions_session;
}

/*
 * positions_log_behind
 *		One line event=positions_behind for a held partition whose database
 *		position is behind what this feeder had committed there, and the
 *		offsets to read again counted: from the consumer's position back to
 *		target (the database's position, or where it must restart; -1: the
 *		earliest offset, not known yet).
 */
static void
positions_log_behind(feeder_app *app, const kafka_assigned_partition *a,
					 int64_t db_position, int64_t target, const char *action)
{
	log_line	line;
	int64_t		from = target >= 0 ? target : 0;

	log_begin(&line, LOG_WARNING, "positions_behind");
	log_kv_str(&line, "topic", a->topic);
	log_kv_int(&line, "partition", a->partition);
	if (db_position >= 0)
		log_kv_int(&line, "db_position", db_position);
	else
		log_kv_str(&line, "db_position", "none");
	log_kv_int(&line, "consumer_position", a->db_next);
	log_kv_int(&line, "gap", a->db_next - from);
	if (target >= 0)
		log_kv_int(&line, "restart_at", target);
	else
		log_kv_str(&line, "restart_at", "earliest");
	log_kv_str(&line, "action", action);
	log_kv_int(&line, "session", batch_lane_of_slot(a->slot, app->nlanes));
	log_end(&line);
	if (a->db_next > from)
		app->stats.positions_behind += (uint64_t) (a->db_next - from);
}

/*
 * positions_gap_accepted
 *		Whether the database holds offsets db_position .. low - 1 of a
 *		partition accepted as lost (catch_up.c).  Asked with
 *		record_position_gap without accepting: a range an accepted gap
 *		covers answers yes and writes nothing; any other is recorded open
 *		and answers no, and positions_gap then records, logs, counts and
 *		waits on it (or accepts it, with --accept-position-loss).  A failed
 *		question answers no: positions_gap says why.
 */
static int
positions_gap_accepted(db_conn *db, const char *topic, int32_t partition,
					   int64_t db_position, int64_t low)
{
	int			accepted = 0;
	db_error	err;

	if (db_record_gap(db, topic, partition, db_position, low - 1, 0,
					  &accepted, &err) != DB_ERR_NONE)
		return 0;
	return accepted;
}

/*
 * positions_catch_up
 *		A partition held while the database is behind what this feeder had
 *		committed there: log it, count the offsets to read again, and seek
 *		back (to the earliest offset when the database has no position).
 *		-1 when Kafka could not be asked (or not before deadline) or the
 *		seek failed: the partition then waits for its start instead, alone
 *		(positions_start_failed), and starts at the database's position; -1
 *		too when the database's position lies in a gap not accepted
 *		(positions_gap: it waits alone likewise), recorded, logged and
 *		counted whether or not this feeder's own committed offset is the
 *		log start (retention emptied the partition behind it).  Nothing to
 *		do only where the database holds that gap accepted and the
 *		partition already stands at the log start (catch_up.c).
 */
static int
positions_catch_up(feeder_app *app, db_conn *db, const kafka_assigned_partition *a,
				   int64_t db_position, int64_t deadline)
{
	int64_t		low,
				high,
				target = db_position;
	int			err = 0;
	int			accepted = 0;

	if (clock_now_ms() >= deadline ||
		(err = kafka_watermarks(app->kc, a->topic, a->partition, &low, &high)) != 0)
	{
		/*
		 * The database is behind all the same: said and counted now, as the
		 * partition restarts later from the database's position (its start,
		 * positions_choose), where nothing knows any more how far behind.
		 */
		positions_log_behind(app, a, db_position, db_position,
							 "waiting for the partition's offsets, then reading the lost events again from the database's position");
		positions_start_failed(app, a->topic, a->partition, err ?
							   rd_kafka_err2str((rd_kafka_resp_err_t) err) :
							   "not asked: this pass's time for Kafka's answers was spent on other partitions");
		return -1;
	}

	/*
	 * At the log start below the database's position: a gap accepted
	 * already, or one that retention made behind this feeder (catch_up.c);
	 * the database tells which.
	 */
	if (catch_up_asks_acceptance(db_position, a->db_next, low))
		accepted = positions_gap_accepted(db, a->topic, a->partition,
										  db_position, low);
	switch (catch_up_decide(db_position, a->db_next, low, high, accepted))
	{
		case CATCH_UP_NONE:
			return 0;
		case CATCH_UP_EARLIEST:
			target = low;
			break;
		case CATCH_UP_GAP:
			if (positions_gap(app, db, a->topic, a->partition, db_position,
							  low, high) != 0)
			{
				positions_log_behind(app, a, db_position, db_position,
									 "waiting on the position gap (see position_gap), then reading again from the database's position");
				return -1;
			}
			target = low;
			break;
		case CATCH_UP_OUT_OF_RANGE:
			target = positions_out_of_range(app, db, a->topic, a->partition,
											db_position, low, high);
			break;
		case CATCH_UP_SEEK:
			break;
	}
	if (app->positions_fatal)
		return 0;

	positions_log_behind(app, a, db_position, target,
						 "reading the lost events again from Kafka");
	if (kafka_start_partition(app->kc, a->topic, a->partition, target) != 0)
	{
		positions_start_failed(app, a->topic, a->partition,
							   "the seek failed (see the seek_failed line)");
		return -1;
	}
	return 0;
}

/*
 * positions_reconcile
 *		Check the database's positions against the partitions held (see the
 *		file header), start the partitions waiting for a start whose retry
 *		is due, and remember the session checked.  A partition whose offsets
 *		cannot be read from Kafka waits alone (positions_start_failed), as
 *		do those not asked within POSITIONS_PASS_BUDGET_MS: the session is
 *		checked all the same, since such a partition holds no messages and
 *		starts at the database's position.  DB_ERR_NONE when done; otherwise
 *		err says why (the database's positions could not be read) and the
 *		caller retries later (nothing is sent meanwhile).  Held messages of
 *		restarted partitions are dropped by the caller's next prune
 *		(loop_prune_revoked).
 */
db_error_class
positions_reconcile(feeder_app *app, lane *l, db_error *err)
{
	db_position *positions;
	kafka_assigned_partition *held;
	int			n,
				nheld,
				i;
	int64_t		deadline = clock_now_ms() + POSITIONS_PASS_BUDGET_MS;
	db_error_class cls;

	cls = positions_read(app, l->db, &positions, &n, err);
	if (cls != DB_ERR_NONE)
		return cls;
	nheld = kafka_assigned(app->kc, &held);
	for (i = 0; i < nheld && !app->positions_fatal; i++)
	{
		const kafka_assigned_partition *a = &held[i];

		if (a->waiting_start && a->start_due)
		{
			int64_t		offset,
						low;
			positions_source source;

			if (positions_choose(app, l->db, positions, n, a->topic, a->partition,
								 deadline, &offset, &source, &low) != 0 ||
				app->positions_fatal)
				continue;
			if (kafka_start_partition(app->kc, a->topic, a->partition, offset) != 0)
				positions_start_failed(app, a->topic, a->partition,
									   "the seek failed (see the seek_failed line)");
			else
			{
				positions_log_start(a->topic, a->partition, offset, source, low);
				if (a->gap_first >= 0 && source == POSITIONS_FROM_DATABASE)
					positions_gap_closed(app, a->topic, a->partition,
										 a->gap_first, offset);
			}
		}
		else if (!a->waiting_start && a->db_next >= 0)
		{
			int64_t		db_position = db_position_find(positions, n, a->topic,
													 a->partition);

			if (db_position < a->db_next)
				positions_catch_up(app, l->db, a, db_position, deadline);
		}
	}
	free(held);
	db_free_positions(positions, n);
	if (nheld < 0)
	{
		memset(err, 0, sizeof(*err));
		err->cls = DB_ERR_TRANSIENT;
		err->step = "positions";
		snprintf(err->message, sizeof(err->message), "%s",
				 "out of memory listing the assigned partitions");
		return err->cls;
	}
	if (!app->positions_fatal)
		l->positions_session = db_session(l->db);
	return DB_ERR_NONE;
}
