/*-------------------------------------------------------------------------
 *
 * kafka_status.c
 *	  What the feeder observes of Kafka for its counters line and its
 *	  metrics: lag per assigned partition, and whether the brokers are
 *	  reachable.
 *
 * Lag is computed in the main loop from librdkafka's cached watermarks
 * (updated by every fetch response, no broker round trip) and the
 * feeder's own acknowledgement position, so it counts exactly the
 * messages not yet acknowledged.  A partition not fetched yet has no
 * cached watermarks: a thread of kafka_asker.c asks the brokers, and the
 * main loop uses its last answer, never waiting on the brokers (a leader
 * down makes each query take its whole timeout).  Broker reachability: unknown until the
 * first sign of life, down on RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN (error
 * callback, kafka.c), up again on a fetched message, an assignment, or a
 * statistics report (statistics.interval.ms) showing a broker in state UP.
 * Every callback here runs in the main thread, inside the consumer poll;
 * so does everything else here but the asker's thread.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_status.h"
#include "kafka_asker.h"
#include "kafka_int.h"
#include "clock.h"
#include "watermarks.h"

/* A partition not fetched yet is asked about at most this often ... */
#define KAFKA_ASK_INTERVAL_MS 5000
/* ... each broker query (the asker's thread) waits at most this long ... */
#define KAFKA_ASK_TIMEOUT_MS 200
/* ... and one lag refresh queues this many requests at most. */
#define KAFKA_ASK_BUDGET 4

/*
 * kafka_status_start
 *		Start the thread that asks the brokers about partitions not fetched
 *		yet (kafka_asker.c), with the consumer.  0, or -1 with err filled.
 */
int
kafka_status_start(kafka_consumer *kc, char *err, size_t errlen)
{
	int			error;

	kc->asker = kafka_asker_start(kc->rk, KAFKA_ASK_TIMEOUT_MS, &error);
	if (kc->asker != NULL)
		return 0;
	snprintf(err, errlen, "could not start the thread that asks the brokers for lag: %s "
			 "(free memory, or raise the limit of processes and threads: ulimit -u)",
			 strerror(error));
	return -1;
}

/*
 * kafka_status_stop
 *		Stop that thread (waiting at most for one query's timeout), before
 *		the consumer closes.
 */
void
kafka_status_stop(kafka_consumer *kc)
{
	kafka_asker_stop(kc->asker);
	kc->asker = NULL;
}

/*
 * kafka_slot_ask
 *		For a partition that has not been fetched in this assignment (it
 *		waits for its start position, or stays paused), librdkafka caches
 *		no watermarks: its watermarks and the group's committed offset are
 *		asked of the brokers by the asker's thread, never here.  This takes
 *		the answer to the slot's request when there is one (kept in the
 *		slot; what the brokers did not answer keeps its last value), and
 *		queues a new request at most every KAFKA_ASK_INTERVAL_MS
 *		(KAFKA_ASK_BUDGET per refresh).  A slot's request is forgotten when
 *		it is assigned again (kafka_rebalance.c), so an answer never
 *		outlives its assignment.
 */
static void
kafka_slot_ask(kafka_consumer *kc, kafka_slot *s)
{
	int64_t		now = clock_now_ms();
	kafka_asker_reply r;
	int			got;

	if (s->ask_ticket != 0 &&
		(got = kafka_asker_answer(kc->asker, s->ask_ticket, &r)) != 0)
	{
		if (got > 0 && r.hi >= 0)
		{
			s->asked_lo = r.lo;
			s->asked_hi = r.hi;
		}
		if (got > 0 && r.committed_known)
			s->asked_committed = r.committed;
		s->ask_ticket = 0;
	}
	if (kc->up == 0 || kc->ask_budget <= 0 || s->ask_ticket != 0 ||
		(s->asked_ms != 0 && now - s->asked_ms < KAFKA_ASK_INTERVAL_MS))
		return;
	s->ask_ticket = kafka_asker_request(kc->asker, s->topic, s->partition);
	if (s->ask_ticket == 0)
		return;					/* queue full: next refresh */
	kc->ask_budget--;
	s->asked_ms = now;
}

/*
 * kafka_slot_forget_asked
 *		Forget what the brokers answered about a slot (a new assignment asks
 *		again).  The last lag known stays: until the asker answers, the
 *		partition shows the lag it had rather than none, so a scrape right
 *		after a rebalance still has a sample for it.
 */
void
kafka_slot_forget_asked(kafka_slot *s)
{
	s->asked_ms = 0;
	s->ask_ticket = 0;
	s->asked_lo = -1;
	s->asked_hi = -1;
	s->asked_committed = -1;
}

/*
 * kafka_slot_lag_now
 *		Messages between what was acknowledged (or, before the first
 *		acknowledgement, the first offset consumed, the fetch position, the
 *		database's position, the group's committed offset, or else the
 *		partition's first offset: auto.offset.reset is always earliest) and
 *		the high watermark of one assigned partition.  A partition that has
 *		not been fetched yet gets its watermarks and committed offset from
 *		the brokers (kafka_slot_ask: the last answer of the asker's thread).
 *		-1 while the brokers have not answered.
 */
static int64_t
kafka_slot_lag_now(kafka_consumer *kc, kafka_slot *s)
{
	int64_t		lo,
				hi,
				from = -1;

	if (rd_kafka_get_watermark_offsets(kc->rk, s->topic, s->partition,
									   &lo, &hi) != RD_KAFKA_RESP_ERR_NO_ERROR ||
		hi < 0)
	{
		kafka_slot_ask(kc, s);
		lo = s->asked_lo;
		hi = s->asked_hi;
		if (hi < 0)
			return -1;
	}
	if (s->acked >= 0)
		from = s->acked;
	else if (s->first_seen >= 0)
		from = s->first_seen;
	else
	{
		rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);

		rd_kafka_topic_partition_list_add(l, s->topic, s->partition);
		if (rd_kafka_position(kc->rk, l) == RD_KAFKA_RESP_ERR_NO_ERROR &&
			l->elems[0].offset >= 0)
			from = l->elems[0].offset;
		rd_kafka_topic_partition_list_destroy(l);
	}
	if (from < 0 && s->db_next >= 0)
		from = s->db_next;
	if (from < 0 && s->committed >= 0)
		from = s->committed;
	if (from < 0)
	{
		kafka_slot_ask(kc, s);
		from = s->asked_committed >= 0 ? s->asked_committed : lo;
	}
	if (from < 0)
		return -1;
	return hi > from ? hi - from : 0;
}

/*
 * kafka_slot_lag
 *		The lag of kafka_slot_lag_now, so that every assigned partition has a
 *		lag from its assignment on; while the brokers have not answered, the
 *		last lag known of the partition (-1 if none ever was).
 */
static int64_t
kafka_slot_lag(kafka_consumer *kc, kafka_slot *s)
{
	int64_t		lag = kafka_slot_lag_now(kc, s);

	if (lag >= 0)
		s->last_lag = lag;
	return lag >= 0 ? lag : s->last_lag;
}

/*
 * kafka_lag
 *		The lag of kafka_slot_lag summed over the assigned partitions, for
 *		the counters line; -1 when no partition's lag is known.
 */
int64_t
kafka_lag(kafka_consumer *kc)
{
	int64_t		lag = 0;
	int			known = 0;
	int			i;

	kc->ask_budget = KAFKA_ASK_BUDGET;
	for (i = 0; i < kc->nslots; i++)
	{
		int64_t		l;

		if (!kc->slots[i].assigned)
			continue;
		l = kafka_slot_lag(kc, &kc->slots[i]);
		if (l < 0)
			continue;
		known++;
		lag += l;
	}
	return known ? lag : -1;
}

/*
 * kafka_partition_lags
 *		One entry per assigned partition (lag -1 when unknown, with its
 *		high watermark as librdkafka cached it, or as last asked) in *out, a
 *		malloc'ed array the caller frees; topic names point into the
 *		consumer and live as long as it does.  Returns the count, -1 on out
 *		of memory.
 */
int
kafka_partition_lags(kafka_consumer *kc, kafka_partition_lag **out)
{
	kafka_partition_lag *lags;
	int64_t		lo;
	int			i,
				n = 0;

	*out = NULL;
	kc->ask_budget = KAFKA_ASK_BUDGET;
	lags = malloc(sizeof(kafka_partition_lag) * (size_t) (kc->nslots > 0 ? kc->nslots : 1));
	if (lags == NULL)
		return -1;
	for (i = 0; i < kc->nslots; i++)
	{
		if (!kc->slots[i].assigned)
			continue;
		lags[n].topic = kc->slots[i].topic;
		lags[n].partition = kc->slots[i].partition;
		lags[n].lag = kafka_slot_lag(kc, &kc->slots[i]);
		lags[n].waiting_start = kc->slots[i].waiting_start;
		lags[n].waiting_gap = kc->slots[i].waiting_start &&
			kc->slots[i].gap_first >= 0;
		if (rd_kafka_get_watermark_offsets(kc->rk, lags[n].topic, lags[n].partition,
										   &lo, &lags[n].high_watermark) != RD_KAFKA_RESP_ERR_NO_ERROR ||
			lags[n].high_watermark < 0)
			lags[n].high_watermark = kc->slots[i].asked_hi >= 0 ? kc->slots[i].asked_hi : -1;
		n++;
	}
	*out = lags;
	return n;
}

/*
 * kafka_cached_high_watermark
 *		A partition's high watermark as librdkafka last saw it in a fetch
 *		(no request to the brokers); -1 when not known.
 */
int64_t
kafka_cached_high_watermark(kafka_consumer *kc, const char *topic, int32_t partition)
{
	int64_t		lo,
				hi;

	if (rd_kafka_get_watermark_offsets(kc->rk, topic, partition, &lo, &hi) !=
		RD_KAFKA_RESP_ERR_NO_ERROR || hi < 0)
		return -1;
	return hi;
}

/*
 * kafka_stats_cb
 *		librdkafka's statistics report (JSON): used only to notice brokers
 *		coming back while nothing is fetched.  A broker object carries
 *		"state":"UP" when connected; the consumer group object spells its
 *		own state in lower case ("up"), and "UPDATE" does not match because
 *		the closing quote is part of the pattern.  Returns 0: librdkafka
 *		frees json.
 */
int
kafka_stats_cb(rd_kafka_t *rk, char *json, size_t json_len, void *opaque)
{
	kafka_consumer *kc = opaque;

	(void) rk;
	(void) json_len;
	if (json != NULL && strstr(json, "\"state\":\"UP\"") != NULL)
		kc->up = 1;
	return 0;
}

/*
 * kafka_up
 *		Whether the brokers are reachable: 1 yes, 0 all down, -1 not known
 *		yet (just started).
 */
int
kafka_up(const kafka_consumer *kc)
{
	return kc->up;
}
