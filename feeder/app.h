/*-------------------------------------------------------------------------
 *
 * app.h
 *	  State shared by the main loop (loop.c) and batch delivery
 *	  (deliver.c): one feeder_app per process.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_APP_H
#define FEEDER_APP_H

#include <signal.h>
#include <stdint.h>

#include "backoff.h"
#include "batch.h"
#include "config.h"
#include "db.h"
#include "kafka.h"
#include "stats.h"

typedef struct feeder_app
{
	const feeder_config *cfg;
	kafka_consumer *kc;
	db_conn    *db;
	feeder_stats stats;
	batch		batch;			/* the batch in flight */
	msg_queue	pending;		/* consumed while paused, delivered next */
	backoff_policy backoff;
	int64_t		next_stats_ms;
	int			delivering;		/* inside deliver_batch */
	int64_t		next_metrics_ms;	/* next lag refresh and database check */
	int64_t		next_db_retry_ms;	/* idle reconnection (metrics on) */
	int			db_retry_attempt;
	int64_t		next_idle_commit_ms;	/* earliest next idle offset commit */
	int			db_config_error;	/* fatal found by an idle reconnection */
	uint64_t	positions_session;	/* database session whose positions were checked */
	int			positions_failing;	/* failed reads of positions in a row */
	char		positions_fail_sqlstate[6];	/* SQLSTATE of the last one logged */
	int64_t		positions_logged_ms;	/* when a failure was last logged */
	int			positions_fatal;	/* a position out of range: exit 5 */
	int64_t		next_positions_ms;	/* next idle positions check */
	int64_t		last_commit_ms; /* when the last batch committed (or start) */
	int64_t		waiting_since_ms;	/* since when messages wait, -1: none */
	int			capped_commits; /* commits since a split capped the batch size */
} feeder_app;

typedef enum deliver_result
{
	DELIVER_OK,					/* committed and acknowledged */
	DELIVER_DROPPED,			/* every message's partition was revoked */
	DELIVER_ABANDONED,			/* shutdown while the database failed */
	DELIVER_KAFKA_FATAL,		/* librdkafka fatal error while waiting */
	DELIVER_DB_FATAL,			/* configuration or permission: exit 3 */
	DELIVER_POSITIONS_FATAL		/* a position out of range: exit 5 */
} deliver_result;

/* Set by the SIGTERM/SIGINT handler in main.c. */
extern volatile sig_atomic_t feeder_stop;

extern int64_t loop_now_ms(void);
extern int	loop_poll(feeder_app *app, int timeout_ms, batch_msg *out);
extern void loop_wait(feeder_app *app, int ms);
extern int	loop_run(feeder_app *app);
extern void loop_prune_revoked(feeder_app *app);

extern int	positions_on_assign(void *arg, rd_kafka_topic_partition_list_t *parts);
extern int	positions_needed(const feeder_app *app);
extern db_error_class positions_reconcile(feeder_app *app, db_error *err);

extern deliver_result deliver_batch(feeder_app *app);
extern void deliver_log_fatal(const db_error *err);

#endif							/* FEEDER_APP_H */
