/*-------------------------------------------------------------------------
 *
 * lane.c
 *	  A lane's thread: it waits for a batch, decodes its values in the
 *	  Schema Registry form (decode.c), runs it through the lane's database
 *	  session (db_run_batch: one transaction, one round trip), leaves the
 *	  result and tells the main thread.  Nothing else runs on it: no Kafka
 *	  call, no counter, no decision (see lane.h).
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lane.h"
#include "log.h"

_Static_assert(DECODE_NARRAYS == DB_DECODED_NARRAYS,
			   "decode.c fills the arrays db_batch.c sends");

/*
 * lane_init
 *		An idle lane on session db (owned by the lane from now on), with
 *		room for batches of batch_size messages; 0 on success.
 */
int
lane_init(lane *l, int index, db_conn *db, int batch_size, int wait_ms,
		  size_t max_bytes)
{
	memset(l, 0, sizeof(*l));
	l->index = index;
	l->db = db;
	l->retry_at = -1;
	l->lost_ms = -1;
	pthread_mutex_init(&l->lock, NULL);
	{
		pthread_condattr_t attr;

		/* lane_wait_until's deadlines are on the monotonic clock */
		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&l->cond, &attr);
		pthread_condattr_destroy(&attr);
	}
	queue_init(&l->pending);
	queue_init(&l->waiting);
	if (batch_init(&l->batch, batch_size, wait_ms) != 0)
		return -1;
	batch_set_max_bytes(&l->batch, max_bytes);
	return 0;
}

/*
 * lane_set_registry
 *		The Schema Registry form: each batch's values are decoded with the
 *		schemas of r (shared by the lanes) before the batch is sent, those
 *		that are sent only (envelope and event_type: batch_sends_value).
 *		Before lane_start; 0, or -1 on out of memory.
 */
int
lane_set_registry(lane *l, registry *r, const char *envelope,
				  const char *event_type)
{
	l->decodes = 1;
	return decoder_init(&l->dec, r, envelope, event_type);
}

/*
 * lane_run
 *		One attempt at the lane's batch, on its thread: the session checked
 *		(db_begin_batch), the values decoded in the Schema Registry form
 *		(decode.c: reasons in the text form the session takes; a batch
 *		retried unchanged is sent as decoded), then the transaction
 *		(db_run_batch).  A registry that fails, or a decode out of memory,
 *		is the attempt's error: nothing is sent.  Messages that wait for
 *		their schema are not sent (decoder_build puts them last); when
 *		every message waits, nothing is sent and no row comes back.
 */
static db_error_class
lane_run(lane *l)
{
	db_error_class cls;
	int			n,
				resent;

	cls = db_begin_batch(l->db, &l->batch, &l->rows, &l->nrows, &l->err);
	if (cls != DB_ERR_NONE || l->batch.count == 0)
		return cls;
	if (!l->decodes)
		return db_run_batch(l->db, &l->batch, NULL, l->batch.count,
							&l->rows, &l->nrows, &l->err);
	n = decoder_build(&l->dec, &l->batch, db_texts_ascii(l->db), &resent, &l->err);
	if (n < 0)
		return l->err.cls;
	if (n == 0)
		return DB_ERR_NONE;		/* every message waits (l->dec.waits) */
	if (resent)
	{
		log_line	line;

		log_begin(&line, LOG_DEBUG, "batch_resent");
		log_kv_int(&line, "messages", n);
		log_kv_int(&line, "session", l->index);
		log_kv_str(&line, "reason", "the batch is retried unchanged: sent as encoded, its values not decoded again");
		log_end(&line);
	}
	return db_run_batch(l->db, &l->batch, l->dec.arrays, n,
						&l->rows, &l->nrows, &l->err);
}

/*
 * lane_main
 *		The thread: run each submitted batch, publish its result.
 */
static void *
lane_main(void *arg)
{
	lane	   *l = arg;

	pthread_mutex_lock(&l->lock);
	for (;;)
	{
		while (!l->running && !l->quit)
			pthread_cond_wait(&l->cond, &l->lock);
		if (l->quit)
			break;
		pthread_mutex_unlock(&l->lock);

		l->cls = lane_run(l);

		pthread_mutex_lock(&l->lock);
		l->running = 0;
		l->done = 1;
		pthread_cond_broadcast(&l->cond);
		if (l->notify)
			l->notify(l->notify_arg);
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/*
 * lane_start
 *		Start the lane's thread, with every signal blocked (SIGTERM and
 *		SIGINT reach the main thread, which decides); notify(arg) is called
 *		from it, under the lane's lock, each time a batch is done.  0 on
 *		success.
 */
int
lane_start(lane *l, void (*notify) (void *arg), void *arg)
{
	sigset_t	all,
				old;
	int			rc;

	l->notify = notify;
	l->notify_arg = arg;
	/* signals go to the main thread: the thread starts with all blocked */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&l->thread, NULL, lane_main, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	l->has_thread = 1;
	return 0;
}

/*
 * lane_submit
 *		Hand the lane's batch and session to its thread; deadline_ms (the
 *		monotonic clock in milliseconds) is when the main thread will cancel
 *		it (loop.c).
 */
void
lane_submit(lane *l, int64_t deadline_ms)
{
	l->deadline_ms = deadline_ms;
	l->cancelled = 0;
	pthread_mutex_lock(&l->lock);
	l->running = 1;
	l->done = 0;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
}

/*
 * lane_busy
 *		Whether the lane's batch is not the main thread's to touch yet: its
 *		thread still runs it, or its result waits for lane_take.  A finished
 *		batch not yet taken still holds its committed messages: adding to it
 *		and sending it again would lose its outcomes (counted duplicate).
 */
int
lane_busy(lane *l)
{
	int			running;

	pthread_mutex_lock(&l->lock);
	running = l->running || l->done;
	pthread_mutex_unlock(&l->lock);
	return running;
}

/*
 * lane_take
 *		1 once per finished run: the result (cls, rows, nrows, err), the
 *		batch and the session are the main thread's again.
 */
int
lane_take(lane *l)
{
	int			done;

	pthread_mutex_lock(&l->lock);
	done = l->done;
	l->done = 0;
	pthread_mutex_unlock(&l->lock);
	return done;
}

/*
 * lane_wait
 *		Block until the lane's thread is done with its batch, if it has one.
 */
void
lane_wait(lane *l)
{
	pthread_mutex_lock(&l->lock);
	while (l->running)
		pthread_cond_wait(&l->cond, &l->lock);
	pthread_mutex_unlock(&l->lock);
}

/*
 * lane_wait_until
 *		Block until the lane's thread is done with its batch, or until
 *		deadline_ms on the monotonic clock: 1 when it is done (or had
 *		none), 0 when the deadline came first.
 */
int
lane_wait_until(lane *l, int64_t deadline_ms)
{
	struct timespec until;
	int			running;

	until.tv_sec = (time_t) (deadline_ms / 1000);
	until.tv_nsec = (long) (deadline_ms % 1000) * 1000000L;
	pthread_mutex_lock(&l->lock);
	while (l->running)
		if (pthread_cond_timedwait(&l->cond, &l->lock, &until) == ETIMEDOUT)
			break;
	running = l->running;
	pthread_mutex_unlock(&l->lock);
	return !running;
}

/*
 * lane_free
 *		Let a running batch finish, stop the thread, release the held
 *		messages and the session.
 */
void
lane_free(lane *l, batch_release_fn release)
{
	if (l->has_thread)
	{
		lane_wait(l);
		pthread_mutex_lock(&l->lock);
		l->quit = 1;
		pthread_cond_broadcast(&l->cond);
		pthread_mutex_unlock(&l->lock);
		pthread_join(l->thread, NULL);
		l->has_thread = 0;
	}
	batch_free(&l->batch, release);
	queue_free(&l->pending, release);
	queue_free(&l->waiting, release);
	slot_set_free(&l->waits);
	if (l->db != NULL)
		db_free(l->db);
	l->db = NULL;
	if (l->decodes)
		decoder_free(&l->dec);
	l->decodes = 0;
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
}
