/*-------------------------------------------------------------------------
 *
 * app.h
 *	  State shared by the main loop (loop.c), batch delivery (deliver.c)
 *	  and positions (positions.c): one feeder_app per process, with its
 *	  lanes (lane.h).
 *
 * Calls go one way, from the top down: main.c starts the loop; the loop
 * drives delivery and positions (it checks a new session's positions
 * before it hands a batch to delivery); neither calls back into the loop,
 * and what they share with it lives below them (clock.h, db_errors.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_APP_H
#define FEEDER_APP_H

#include <pthread.h>
#include <signal.h>
#include <stdint.h>

#include "backoff.h"
#include "batch.h"
#include "config.h"
#include "db.h"
#include "kafka.h"
#include "lane.h"
#include "spread.h"
#include "stats.h"

typedef struct feeder_app
{
	const feeder_config *cfg;
	kafka_consumer *kc;
	lane	   *lanes;			/* --db-sessions lanes, each its session */
	int			nlanes;
	lane_spread spread;			/* over how many lanes partitions go now */
	db_conn    *db;				/* lane 0's session: positions on assignment,
								 * the idle checks */
	registry   *registry;		/* --value-format confluent: shared by lanes */
	feeder_stats stats;
	backoff_policy backoff;
	pthread_mutex_t wake_lock;	/* a lane finished a batch: */
	pthread_cond_t wake_cond;
	uint64_t	wakes;			/* counted under wake_lock */
	uint64_t	wakes_seen;		/* main thread: last count acted on */
	int64_t		next_stats_ms;
	int64_t		next_metrics_ms;	/* next lag and stall refresh */
	int64_t		next_watch_ms;	/* next check of the idle sessions */
	int64_t		next_idle_commit_ms;	/* earliest next idle offset commit */
	int			db_config_error;	/* a configuration error: exit 3 */
	int			positions_failing;	/* failed reads of positions in a row */
	char		positions_fail_sqlstate[6];	/* SQLSTATE of the last one logged */
	int64_t		positions_logged_ms;	/* when a failure was last logged */
	char		kafka_cluster[256];	/* the Kafka cluster id last logged */
	int			positions_fatal;	/* a position beyond a partition's end: exit 5 */
	int64_t		next_positions_ms;	/* next idle positions check */
	int64_t		next_lanes_ms;	/* next look for lanes to open (loop_open_lanes) */
	int64_t		last_commit_ms; /* when the last batch committed (or start) */
	int64_t		waiting_since_ms;	/* since when messages wait, -1: none */
} feeder_app;

/* Set by the SIGTERM/SIGINT handler in main.c. */
extern volatile sig_atomic_t feeder_stop;

/* loop.c */
extern int	loop_run(feeder_app *app);
extern void loop_quiesce(void *arg);
extern void loop_lane_done(void *arg);

/* deliver.c */

/* A batch runs at most its statement timeout and this long (its COMMIT). */
#define DELIVER_DEADLINE_GRACE_MS 10000

extern int64_t deliver_deadline_ms(const feeder_app *app);
extern void deliver_start(feeder_app *app, lane *l);
extern void deliver_failed(feeder_app *app, lane *l, const db_error *err);
extern void deliver_finish(feeder_app *app, lane *l);
extern void deliver_abandon(feeder_app *app, lane *l);

/* positions.c */
extern int	positions_on_assign(void *arg, rd_kafka_topic_partition_list_t *parts);
extern int	positions_needed(const feeder_app *app, const lane *l);
extern db_error_class positions_reconcile(feeder_app *app, lane *l, db_error *err);

/* adopt.c */
extern int	adopt_kafka_offsets(const feeder_config *cfg, rd_kafka_conf_t *conf);

#endif							/* FEEDER_APP_H */
