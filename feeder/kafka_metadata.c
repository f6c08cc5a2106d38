/*-------------------------------------------------------------------------
 *
 * kafka_metadata.c
 *	  What the consumer knows of the cluster: the subscribed topics'
 *	  handles (their partitions and leaders learnt early), a partition's
 *	  watermarks, the cluster id.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_metadata.h"
#include "kafka_int.h"
#include "config.h"
#include "watermarks.h"

/* The longest a start position waits for a partition's offsets. */
#define KAFKA_WATERMARKS_TIMEOUT_MS 2000

/*
 * kafka_hold_topics
 *		Create a handle of every subscribed topic as soon as the consumer
 *		subscribes, and hold it until the consumer closes.  librdkafka then
 *		learns each topic's partitions and leaders from its first metadata
 *		answer, during the group join.  Without a handle it creates the
 *		partitions only at the first assignment, and a partition started
 *		at a logical offset (the earliest, for a group without positions)
 *		before its leader is known waits for librdkafka's offset query
 *		retry: up to a second, before the partition's first fetch.  A
 *		handle that cannot be created is left out; nothing fails here.
 */
void
kafka_hold_topics(kafka_consumer *kc, const feeder_config *cfg)
{
	int			i;

	kc->rkts = calloc((size_t) (cfg->ntopics > 0 ? cfg->ntopics : 1), sizeof(*kc->rkts));
	if (kc->rkts == NULL)
		return;
	for (i = 0; i < cfg->ntopics; i++)
		if ((kc->rkts[kc->nrkts] = rd_kafka_topic_new(kc->rk, cfg->topics[i], NULL)) != NULL)
			kc->nrkts++;
}

/*
 * kafka_release_topics
 *		Destroy the handles kafka_hold_topics holds.
 */
void
kafka_release_topics(kafka_consumer *kc)
{
	int			i;

	for (i = 0; i < kc->nrkts; i++)
		rd_kafka_topic_destroy(kc->rkts[i]);
	free(kc->rkts);
	kc->rkts = NULL;
	kc->nrkts = 0;
}

/*
 * kafka_watermarks
 *		Ask the partition's leader for its earliest and next offsets (two
 *		broker round trips, KAFKA_WATERMARKS_TIMEOUT_MS at most in all, a
 *		deadline that holds even when the leader is down: watermarks.c).  0
 *		on success, else librdkafka's error code (rd_kafka_err2str says
 *		what was wrong).
 */
int
kafka_watermarks(kafka_consumer *kc, const char *topic, int32_t partition,
				 int64_t *low, int64_t *high)
{
	return (int) watermarks_query(kc->rk, topic, partition,
								  KAFKA_WATERMARKS_TIMEOUT_MS, low, high);
}

/*
 * kafka_cluster_id
 *		The cluster id the brokers report (Metadata's ClusterId), from
 *		librdkafka's cached metadata (there as soon as any metadata arrived:
 *		always before an assignment) or, when none has arrived yet, waiting
 *		at most 1 s for it; malloc'd, NULL when it is not known (brokers
 *		unreachable so far).
 */
char *
kafka_cluster_id(kafka_consumer *kc)
{
	char	   *id = rd_kafka_clusterid(kc->rk, 1000);
	char	   *copy;

	if (id == NULL)
		return NULL;
	copy = strdup(id);
	rd_kafka_mem_free(kc->rk, id);
	return copy;
}
