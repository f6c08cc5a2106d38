/*-------------------------------------------------------------------------
 *
 * kafka_rebalance.c
 *	  Assignment changes: the rebalance callback, for every rebalance
 *	  protocol.
 *
 * The rebalance callback runs only inside rd_kafka_consumer_poll(), and
 * first calls the owner's quiesce function, which lets every open
 * transaction end and stores the offsets of those that committed, so a
 * revoke can never slip between a COMMIT and the offset store that
 * follows it.  Each assignment gives the partitions' slots a new
 * generation (kafka_slots.c); a revoke commits the stored offsets first
 * (kafka_acks.c).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_int.h"
#include "kafka_acks.h"
#include "log.h"

/*
 * kafka_format_partitions
 *		"topic [p], topic [p]" for a partition list, for logs.
 */
static void
kafka_format_partitions(const rd_kafka_topic_partition_list_t *parts,
						char *buf, size_t len)
{
	size_t		off = 0;
	int			i;

	buf[0] = '\0';
	for (i = 0; parts && i < parts->cnt && off < len; i++)
	{
		int			n = snprintf(buf + off, len - off, "%s%s [%d]",
								 i ? ", " : "", parts->elems[i].topic,
								 (int) parts->elems[i].partition);

		if (n < 0)
			break;
		off += (size_t) n;
	}
}

/*
 * kafka_log_partitions
 *		One line for an assignment change.
 */
static void
kafka_log_partitions(const char *event, const char *protocol,
					 const rd_kafka_topic_partition_list_t *parts, int lost)
{
	char		list[3000];
	log_line	line;

	kafka_format_partitions(parts, list, sizeof(list));
	log_begin(&line, LOG_INFO, event);
	log_kv_str(&line, "protocol", protocol);
	log_kv_int(&line, "count", parts ? parts->cnt : 0);
	if (lost)
		log_kv_str(&line, "lost", "true");
	log_kv_str(&line, "partitions", list);
	log_end(&line);
}

/*
 * kafka_rebalance_cb
 *		Assignment changes, for every protocol.  EAGER hands the whole
 *		assignment over each time (assign / assign(NULL)); COOPERATIVE, and
 *		the consumer group protocol of KIP-848 (which librdkafka reports
 *		as COOPERATIVE once subscribed), hand only the difference
 *		(incremental_assign / incremental_unassign).
 *		Before partitions go, their stored offsets (of committed batches
 *		only) are committed synchronously, unless the assignment was lost,
 *		in which case another member may already own them and a commit
 *		would fail anyway.  The start offsets of new partitions come from
 *		the start function (the database's positions); partitions whose
 *		start cannot be decided yet (all of them when it fails, else those
 *		it left at RD_KAFKA_OFFSET_INVALID), and all partitions assigned
 *		while the feeder is paused for a database outage, are paused at
 *		once, and partitions still paused from an earlier assignment are
 *		resumed (kafka_reconcile_pauses).
 */
void
kafka_rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
				   rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	kafka_consumer *kc = opaque;
	const char *protocol = rd_kafka_rebalance_protocol(rk);
	int			cooperative = kc->consumer_protocol ||
		(protocol && strcmp(protocol, "COOPERATIVE") == 0);
	rd_kafka_error_t *error = NULL;
	rd_kafka_resp_err_t ret = RD_KAFKA_RESP_ERR_NO_ERROR;
	int			decided = 1;
	int			i;

	if (kc->quiesce_fn)
		kc->quiesce_fn(kc->quiesce_arg);
	kc->rebalanced = 1;
	switch (err)
	{
		case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
			kafka_log_partitions("partitions_assigned", protocol ? protocol : "NONE",
								 parts, 0);
			kc->up = 1;			/* the group coordinator answered */
			kc->generation++;
			if (kc->start_fn && parts->cnt > 0)
				decided = kc->start_fn(kc->start_arg, parts) == 0;
			for (i = 0; i < parts->cnt; i++)
			{
				int			s = kafka_slot_find(kc, parts->elems[i].topic,
												parts->elems[i].partition);

				if (s < 0)
					continue;
				kc->slots[s].assigned = 1;
				kc->slots[s].generation = kc->generation;
				kc->slots[s].acked = -1;
				kc->slots[s].first_seen = -1;
				kc->slots[s].polled_next = -1;
				kc->slots[s].committed = -1;
				kc->slots[s].waiting_start = !decided ||
					parts->elems[i].offset == RD_KAFKA_OFFSET_INVALID;
				if (!kc->slots[s].waiting_start)
				{
					kc->slots[s].start_failures = 0;
					kc->slots[s].gap_first = -1;
				}
				kc->slots[s].db_next = !kc->slots[s].waiting_start &&
					parts->elems[i].offset >= 0 ? parts->elems[i].offset : -1;
				kc->slots[s].start_store = kc->slots[s].db_next;
				kafka_slot_forget_asked(&kc->slots[s]);
				if (kc->slots[s].start_store >= 0)
					kc->starts_pending = 1;
			}
			if (cooperative)
				error = rd_kafka_incremental_assign(rk, parts);
			else
				ret = rd_kafka_assign(rk, parts);
			kafka_reconcile_pauses(kc, parts);
			break;

		case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
			{
				int			lost = rd_kafka_assignment_lost(rk);

				kafka_log_partitions("partitions_revoked", protocol ? protocol : "NONE",
									 parts, lost);
				if (!lost)
					kafka_commit_sync(kc, "revoke");
				for (i = 0; i < parts->cnt; i++)
				{
					int			s = kafka_slot_find(kc, parts->elems[i].topic,
													parts->elems[i].partition);

					if (s >= 0)
						kc->slots[s].assigned = 0;
				}
				if (cooperative)
					error = rd_kafka_incremental_unassign(rk, parts);
				else
					ret = rd_kafka_assign(rk, NULL);
			}
			break;

		default:
			{
				log_line	line;

				log_begin(&line, LOG_ERROR, "rebalance_failed");
				log_kv_str(&line, "error", rd_kafka_err2str(err));
				log_end(&line);
				for (i = 0; i < kc->nslots; i++)
					kc->slots[i].assigned = 0;
				rd_kafka_assign(rk, NULL);
			}
			break;
	}

	if (error || ret)
	{
		log_line	line;

		log_begin(&line, LOG_ERROR, "assign_failed");
		log_kv_str(&line, "error", error ? rd_kafka_error_string(error)
				   : rd_kafka_err2str(ret));
		log_end(&line);
		if (error)
			rd_kafka_error_destroy(error);
	}
}
