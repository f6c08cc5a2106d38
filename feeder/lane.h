/*-------------------------------------------------------------------------
 *
 * lane.h
 *	  A lane: one database session, the partitions routed to it, and the
 *	  thread that runs its batch transactions.
 *
 * The main thread owns Kafka and every decision; a lane's thread does one
 * thing, the batch's transaction on the lane's session (in the Schema
 * Registry form its values decoded first, decode.c, then db_run_batch),
 * while the main thread goes on consuming.  Ownership of a lane's session,
 * decoder and batch passes with its state: the main thread may touch them
 * only while the lane is not running (lane_submit hands them over,
 * lane_take hands them back).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_LANE_H
#define FEEDER_LANE_H

#include <pthread.h>
#include <stdint.h>

#include "batch.h"
#include "db.h"
#include "decode.h"
#include "registry.h"

typedef struct lane
{
	int			index;
	db_conn    *db;				/* this lane's session */
	int			decodes;		/* the Schema Registry form: dec is in use */
	decoder		dec;			/* its values, decoded before db_run_batch */
	batch		batch;			/* assembled, in flight, or awaiting its retry */
	msg_queue	pending;		/* consumed for this lane, not yet batched */

	/*
	 * Partitions whose message waits for its schema (an id the registry
	 * does not know yet, within its grace): their messages, in order, held
	 * out of pending until wait_until, when they go back in front of it
	 * (main thread only; loop.c, deliver.c).
	 */
	slot_set	waits;
	msg_queue	waiting;
	int64_t		wait_until;		/* clock of their next attempt */
	int			wait_attempts;	/* waits in a row, for the backoff */
	uint64_t	positions_session;	/* session whose positions were checked */

	/* delivery bookkeeping (main thread only) */
	int			attempt;		/* failed attempts of the batch */
	int64_t		failing_since;	/* clock of its first failure */
	int64_t		retry_at;		/* clock of its next attempt, -1: none */
	double		started;		/* seconds, when the attempt was sent */
	int64_t		deadline_ms;	/* clock past which the attempt is cancelled */
	int			cancelled;		/* the attempt was cancelled at its deadline */
	int			capped_commits; /* commits since a split capped the size */

	/* the idle watch of its session (loop.c; main thread only) */
	int64_t		lost_ms;		/* clock when found lost while idle, -1: not */
	int64_t		reconnect_at;	/* clock of its next idle reconnection */
	int			reconnect_failures; /* failed idle reconnections in a row */

	/* the thread and its hand-over, under lock */
	pthread_t	thread;
	int			has_thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int			running;		/* a batch is with the thread */
	int			done;			/* its result waits for lane_take */
	int			quit;
	void		(*notify) (void *arg);	/* called by the thread when done */
	void	   *notify_arg;

	/* the result of the last run, valid after lane_take */
	db_error_class cls;
	db_row	   *rows;
	int			nrows;
	db_error	err;
} lane;

extern int	lane_init(lane *l, int index, db_conn *db, int batch_size, int wait_ms,
					  size_t max_bytes);
extern int	lane_set_registry(lane *l, registry *r, const char *envelope,
							  const char *event_type);
extern int	lane_start(lane *l, void (*notify) (void *arg), void *arg);
extern void lane_submit(lane *l, int64_t deadline_ms);
extern int	lane_busy(lane *l);
extern int	lane_take(lane *l);
extern void lane_wait(lane *l);
extern int	lane_wait_until(lane *l, int64_t deadline_ms);
extern void lane_free(lane *l, batch_release_fn release);

#endif							/* FEEDER_LANE_H */
