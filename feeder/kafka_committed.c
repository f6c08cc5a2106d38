/*-------------------------------------------------------------------------
 *
 * kafka_committed.c
 *	  The consumer group's committed offset of every partition of the
 *	  topics, for --adopt-kafka-offsets.
 *
 * A consumer handle of its own, with the feeder's configuration (brokers,
 * group.id, TLS and SASL properties), that never subscribes: it joins no
 * group, takes no partition from a running member and commits nothing.  It
 * asks each topic's partitions from the cluster's metadata (of all topics,
 * so that no topic is created by asking), then the group's
 * committed offsets from the group coordinator (rd_kafka_committed, an
 * OffsetFetch), and is destroyed.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_committed.h"
#include "kafka_log.h"
#include "log.h"

/* How long one metadata or offset request may take. */
#define KAFKA_COMMITTED_TIMEOUT_MS 10000

/*
 * kafka_committed_partitions
 *		Add every partition of topic to list, from the cluster's metadata
 *		(md, of all topics: asking for one topic by name may create it on a
 *		broker that auto-creates topics).  0 on success; -1 with err filled
 *		when the topic does not exist or its metadata has an error.
 */
static int
kafka_committed_partitions(const struct rd_kafka_metadata *md, const char *topic,
						   rd_kafka_topic_partition_list_t *list,
						   char *err, size_t errlen)
{
	int			t,
				i;

	for (t = 0; t < md->topic_cnt; t++)
	{
		const struct rd_kafka_metadata_topic *mt = &md->topics[t];

		if (strcmp(mt->topic, topic) != 0)
			continue;
		if (mt->err != RD_KAFKA_RESP_ERR_NO_ERROR)
		{
			snprintf(err, errlen, "topic \"%s\": %s", topic, rd_kafka_err2str(mt->err));
			return -1;
		}
		for (i = 0; i < mt->partition_cnt; i++)
			rd_kafka_topic_partition_list_add(list, topic, mt->partitions[i].id);
		return 0;
	}
	snprintf(err, errlen, "topic \"%s\" does not exist", topic);
	return -1;
}

/*
 * kafka_committed_cmp
 *		Order by topic, then partition.
 */
static int
kafka_committed_cmp(const void *a, const void *b)
{
	const kafka_committed_offset *x = a;
	const kafka_committed_offset *y = b;
	int			c = strcmp(x->topic, y->topic);

	if (c != 0)
		return c;
	return (x->partition > y->partition) - (x->partition < y->partition);
}

/*
 * kafka_read_committed
 *		The group's committed offset (-1: none) of every partition of the
 *		topics, in *out (*n entries, by topic and partition; release with
 *		free(), the topic names point into topics), and the cluster's id in
 *		cluster_id.  conf is consumed.  0 on
 *		success; -1 with err filled when the client could not be created,
 *		a topic's partitions or the offsets could not be read: nothing is
 *		returned then.
 */
int
kafka_read_committed(rd_kafka_conf_t *conf, char *const *topics, int ntopics,
					 kafka_committed_offset **out, int *n, char *cluster_id,
					 size_t cluster_idlen, char *err, size_t errlen)
{
	rd_kafka_t *rk;
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_topic_partition_list_t *list;
	rd_kafka_resp_err_t rerr;
	kafka_committed_offset *offsets = NULL;
	int			i,
				rc = 0;

	*out = NULL;
	*n = 0;
	rd_kafka_conf_set_log_cb(conf, kafka_log_cb);
	rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, errlen);
	if (rk == NULL)
	{
		rd_kafka_conf_destroy(conf);
		return -1;
	}
	/* conf is owned by rk from here */
	list = rd_kafka_topic_partition_list_new(ntopics * 4 + 1);
	rerr = rd_kafka_metadata(rk, 1, NULL, &md, KAFKA_COMMITTED_TIMEOUT_MS);
	if (rerr != RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		snprintf(err, errlen, "could not read the cluster's metadata: %s",
				 rd_kafka_err2str(rerr));
		rc = -1;
	}
	for (i = 0; i < ntopics && rc == 0; i++)
		rc = kafka_committed_partitions(md, topics[i], list, err, errlen);
	if (md)
		rd_kafka_metadata_destroy(md);
	if (rc == 0)
	{
		/* the positions adopted are this cluster's (consumer_positions) */
		char	   *id = rd_kafka_clusterid(rk, KAFKA_COMMITTED_TIMEOUT_MS);

		if (id == NULL)
		{
			snprintf(err, errlen, "could not read the cluster's id");
			rc = -1;
		}
		else
		{
			snprintf(cluster_id, cluster_idlen, "%s", id);
			rd_kafka_mem_free(rk, id);
		}
	}
	if (rc == 0 && list->cnt > 0)
	{
		rerr = rd_kafka_committed(rk, list, KAFKA_COMMITTED_TIMEOUT_MS);
		if (rerr != RD_KAFKA_RESP_ERR_NO_ERROR)
		{
			snprintf(err, errlen, "could not read the committed offsets of the group: %s",
					 rd_kafka_err2str(rerr));
			rc = -1;
		}
		for (i = 0; rc == 0 && i < list->cnt; i++)
			if (list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR)
			{
				snprintf(err, errlen, "could not read the committed offset of %s [%d]: %s",
						 list->elems[i].topic, (int) list->elems[i].partition,
						 rd_kafka_err2str(list->elems[i].err));
				rc = -1;
			}
	}
	if (rc == 0)
	{
		offsets = calloc((size_t) (list->cnt > 0 ? list->cnt : 1), sizeof(*offsets));
		if (offsets == NULL)
		{
			snprintf(err, errlen, "out of memory");
			rc = -1;
		}
	}
	for (i = 0; rc == 0 && i < list->cnt; i++)
	{
		int			t;

		/* the name librdkafka copied is freed with the list: use ours */
		for (t = 0; t < ntopics; t++)
			if (strcmp(topics[t], list->elems[i].topic) == 0)
				offsets[i].topic = topics[t];
		offsets[i].partition = list->elems[i].partition;
		offsets[i].committed = list->elems[i].offset >= 0 ? list->elems[i].offset : -1;
	}
	if (rc == 0)
	{
		qsort(offsets, (size_t) list->cnt, sizeof(*offsets), kafka_committed_cmp);
		*out = offsets;
		*n = list->cnt;
	}
	rd_kafka_topic_partition_list_destroy(list);
	rd_kafka_destroy(rk);
	return rc;
}
