/*-------------------------------------------------------------------------
 *
 * kafka_asker.c
 *	  A thread that asks the brokers about partitions, so that the main
 *	  loop never waits for them: kafka_status.c's lag of a partition that
 *	  has not been fetched yet needs its watermarks and the group's
 *	  committed offset, two broker round trips of up to timeout_ms each
 *	  (with a leader down, each takes all of it).
 *
 * The main thread queues a request (topic, partition) and gets a ticket;
 * the thread answers the requests in ticket order, one at a time, and
 * keeps each answer until its place in the ring is taken again
 * KAFKA_ASKER_QUEUE tickets later.  The ring is the queue too: with
 * KAFKA_ASKER_QUEUE requests unanswered, a request is refused (ticket 0)
 * and asked again later.  Everything shared is under one mutex; the
 * broker queries run outside it (librdkafka's handle is thread-safe).
 * Stopping waits at most for the one query under way: the thread looks at
 * the stop flag between its two queries.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_asker.h"
#include "watermarks.h"

/* requests in the ring: unanswered ones, then answers kept */
#define KAFKA_ASKER_QUEUE 64

typedef struct kafka_asker_entry
{
	char	   *topic;			/* malloc'ed, NULL: never used */
	int32_t		partition;
	kafka_asker_reply reply;
} kafka_asker_entry;

struct kafka_asker
{
	rd_kafka_t *rk;
	int			timeout_ms;		/* each query's */
	pthread_t	thread;
	pthread_mutex_t mutex;		/* guards everything below */
	pthread_cond_t wake;		/* a request came, or stop */
	int			stop;
	uint64_t	asked;			/* the last ticket given, 0: none */
	uint64_t	answered;		/* tickets up to this one are answered */
	kafka_asker_entry ring[KAFKA_ASKER_QUEUE];	/* ticket t at t % size */
};

/*
 * kafka_asker_stopping
 *		Whether kafka_asker_stop was called.
 */
static int
kafka_asker_stopping(kafka_asker *a)
{
	int			stop;

	pthread_mutex_lock(&a->mutex);
	stop = a->stop;
	pthread_mutex_unlock(&a->mutex);
	return stop;
}

/*
 * kafka_asker_ask
 *		Ask the brokers for the partition's watermarks and the group's
 *		committed offset, each within a->timeout_ms; the second query is
 *		skipped once stopping.
 */
static void
kafka_asker_ask(kafka_asker *a, const char *topic, int32_t partition,
				kafka_asker_reply *r)
{
	rd_kafka_topic_partition_list_t *l;
	int64_t		lo,
				hi;

	r->lo = r->hi = r->committed = -1;
	r->committed_known = 0;
	if (watermarks_query(a->rk, topic, partition, a->timeout_ms,
						 &lo, &hi) == RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		r->lo = lo;
		r->hi = hi;
	}
	if (kafka_asker_stopping(a))
		return;
	l = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(l, topic, partition);
	if (rd_kafka_committed(a->rk, l, a->timeout_ms) == RD_KAFKA_RESP_ERR_NO_ERROR &&
		l->elems[0].err == RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		r->committed = l->elems[0].offset >= 0 ? l->elems[0].offset : -1;
		r->committed_known = 1;
	}
	rd_kafka_topic_partition_list_destroy(l);
}

/*
 * kafka_asker_main
 *		The thread: answer the requests in ticket order until stopped.  The
 *		entry being answered is not touched by the main thread (its ticket
 *		is unanswered, so its place is not given again).
 */
static void *
kafka_asker_main(void *arg)
{
	kafka_asker *a = arg;

	pthread_mutex_lock(&a->mutex);
	for (;;)
	{
		kafka_asker_entry *e;
		kafka_asker_reply r;

		while (!a->stop && a->answered == a->asked)
			pthread_cond_wait(&a->wake, &a->mutex);
		if (a->stop)
			break;
		e = &a->ring[(a->answered + 1) % KAFKA_ASKER_QUEUE];
		pthread_mutex_unlock(&a->mutex);
		kafka_asker_ask(a, e->topic, e->partition, &r);
		pthread_mutex_lock(&a->mutex);
		e->reply = r;
		a->answered++;
	}
	pthread_mutex_unlock(&a->mutex);
	return NULL;
}

/*
 * kafka_asker_start
 *		Start the thread asking with rk (which must outlive the asker),
 *		each query waiting at most timeout_ms.  NULL with *error set (an
 *		errno value) on failure.  The thread blocks every signal: they stay
 *		the main thread's.
 */
kafka_asker *
kafka_asker_start(rd_kafka_t *rk, int timeout_ms, int *error)
{
	kafka_asker *a = calloc(1, sizeof(kafka_asker));
	sigset_t	all,
				old;

	if (a == NULL)
	{
		*error = ENOMEM;
		return NULL;
	}
	a->rk = rk;
	a->timeout_ms = timeout_ms;
	pthread_mutex_init(&a->mutex, NULL);
	pthread_cond_init(&a->wake, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	*error = pthread_create(&a->thread, NULL, kafka_asker_main, a);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (*error != 0)
	{
		pthread_cond_destroy(&a->wake);
		pthread_mutex_destroy(&a->mutex);
		free(a);
		return NULL;
	}
	return a;
}

/*
 * kafka_asker_request
 *		Queue a request for (topic, partition): its ticket, or 0 when the
 *		queue is full (or out of memory, or a is NULL): ask again later.
 */
uint64_t
kafka_asker_request(kafka_asker *a, const char *topic, int32_t partition)
{
	char	   *copy;
	uint64_t	ticket = 0;

	if (a == NULL || (copy = strdup(topic)) == NULL)
		return 0;
	pthread_mutex_lock(&a->mutex);
	if (a->asked - a->answered < KAFKA_ASKER_QUEUE)
	{
		kafka_asker_entry *e;

		ticket = ++a->asked;
		e = &a->ring[ticket % KAFKA_ASKER_QUEUE];
		free(e->topic);			/* an answer KAFKA_ASKER_QUEUE tickets old */
		e->topic = copy;
		copy = NULL;
		e->partition = partition;
		pthread_cond_signal(&a->wake);
	}
	pthread_mutex_unlock(&a->mutex);
	free(copy);
	return ticket;
}

/*
 * kafka_asker_answer
 *		The answer to ticket, without waiting: 1 with *out filled, 0 while
 *		not answered yet, -1 when the ticket is unknown or its answer was
 *		overwritten (ask again).
 */
int
kafka_asker_answer(kafka_asker *a, uint64_t ticket, kafka_asker_reply *out)
{
	int			ret;

	if (a == NULL)
		return -1;
	pthread_mutex_lock(&a->mutex);
	if (ticket == 0 || ticket > a->asked || a->asked - ticket >= KAFKA_ASKER_QUEUE)
		ret = -1;
	else if (ticket > a->answered)
		ret = 0;
	else
	{
		*out = a->ring[ticket % KAFKA_ASKER_QUEUE].reply;
		ret = 1;
	}
	pthread_mutex_unlock(&a->mutex);
	return ret;
}

/*
 * kafka_asker_stop
 *		Stop the thread (waiting at most for the query under way) and free
 *		the asker; NULL is ignored.
 */
void
kafka_asker_stop(kafka_asker *a)
{
	int			i;

	if (a == NULL)
		return;
	pthread_mutex_lock(&a->mutex);
	a->stop = 1;
	pthread_cond_signal(&a->wake);
	pthread_mutex_unlock(&a->mutex);
	pthread_join(a->thread, NULL);
	for (i = 0; i < KAFKA_ASKER_QUEUE; i++)
		free(a->ring[i].topic);
	pthread_cond_destroy(&a->wake);
	pthread_mutex_destroy(&a->mutex);
	free(a);
}
