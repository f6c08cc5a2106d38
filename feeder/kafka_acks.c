/*-------------------------------------------------------------------------
 *
 * kafka_acks.c
 *	  Acknowledgements: offsets stored after the database committed, and
 *	  the stored offsets committed to the group.
 *
 * enable.auto.offset.store is pinned to false, so librdkafka stores
 * nothing by itself; kafka_store_offsets() stores offset+1 of the last
 * message of each partition of a batch, called only after the batch's
 * database transaction committed; when everything consumed of a partition
 * is stored, kafka_ack_positions moves its stored offset up to the
 * consumer's position, past the transaction markers and aborted messages
 * librdkafka never hands over, and says which moves it made, so that the
 * database's position follows (advances.c, status.c).  enable.auto.commit
 * stays true: the background commit only ever sends stored offsets.  On
 * revoke and at shutdown the stored offsets are committed synchronously;
 * when the loop finds nothing to fetch, asynchronously
 * (kafka_commit_async).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_acks.h"
#include "kafka_int.h"
#include "kafka_slots.h"
#include "log.h"

/*
 * kafka_offset_commit_cb
 *		Result of every commit, background ones included: failures are
 *		worth a warning (the offsets stay stored and are committed later).
 *		offsets_committed counts the partitions whose committed offset
 *		moved forward (librdkafka may report the same offset again).
 */
void
kafka_offset_commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
					   rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
	kafka_consumer *kc = opaque;
	char		list[3000];
	log_line	line;
	size_t		off = 0;
	int			i;

	(void) rk;
	if (err == RD_KAFKA_RESP_ERR__NO_OFFSET)
		return;
	list[0] = '\0';
	for (i = 0; offsets && i < offsets->cnt && off < sizeof(list); i++)
	{
		const rd_kafka_topic_partition_t *p = &offsets->elems[i];
		int			s;
		int			n;

		if (err == RD_KAFKA_RESP_ERR_NO_ERROR && p->err == RD_KAFKA_RESP_ERR_NO_ERROR &&
			p->offset >= 0 &&
			(s = kafka_slot_find(kc, p->topic, p->partition)) >= 0 &&
			p->offset > kc->slots[s].committed)
		{
			kc->slots[s].committed = p->offset;
			kc->stats->offsets_committed++;
		}
		n = snprintf(list + off, sizeof(list) - off, "%s%s [%d] @%lld",
								 i ? ", " : "", offsets->elems[i].topic,
								 (int) offsets->elems[i].partition,
								 (long long) offsets->elems[i].offset);

		if (n < 0)
			break;
		off += (size_t) n;
	}
	log_begin(&line, err ? LOG_WARNING : LOG_DEBUG,
			  err ? "commit_failed" : "offsets_committed");
	if (err)
		log_kv_str(&line, "error", rd_kafka_err2str(err));
	log_kv_str(&line, "offsets", list);
	log_end(&line);
}

/*
 * kafka_store_offsets
 *		Acknowledge a committed batch: store offset+1 of its last message in
 *		each partition still assigned in the generation the messages came
 *		from.  Returns the number of partitions stored.
 */
int
kafka_store_offsets(kafka_consumer *kc, const batch *b)
{
	rd_kafka_topic_partition_list_t *list;
	rd_kafka_resp_err_t err;
	int			i,
				n = 0,
				skipped = 0;

	for (i = 0; i < b->count; i++)
	{
		const batch_msg *m = &b->msgs[i];

		if (kafka_msg_revoked(m, kc))
		{
			skipped++;
			continue;
		}
		if (m->offset + 1 > kc->slots[m->slot].store_to)
			kc->slots[m->slot].store_to = m->offset + 1;
	}
	if (skipped)
	{
		log_line	line;

		log_begin(&line, LOG_INFO, "ack_skipped");
		log_kv_int(&line, "messages", skipped);
		log_kv_str(&line, "reason", "partition revoked while the batch ran");
		log_end(&line);
	}

	list = rd_kafka_topic_partition_list_new(kc->nslots > 0 ? kc->nslots : 1);
	for (i = 0; i < kc->nslots; i++)
	{
		if (kc->slots[i].store_to < 0)
			continue;
		rd_kafka_topic_partition_list_add(list, kc->slots[i].topic,
										  kc->slots[i].partition)->offset =
			kc->slots[i].store_to;
	}
	if (list->cnt > 0)
	{
		err = rd_kafka_offsets_store(kc->rk, list);
		for (i = 0; i < list->cnt; i++)
		{
			rd_kafka_topic_partition_t *p = &list->elems[i];
			int			s = kafka_slot_find(kc, p->topic, p->partition);

			if (s >= 0 && p->offset > kc->slots[s].db_next)
				kc->slots[s].db_next = p->offset;	/* the batch committed */
			if (err == RD_KAFKA_RESP_ERR_NO_ERROR && p->err == RD_KAFKA_RESP_ERR_NO_ERROR)
			{
				if (s >= 0)
					kc->slots[s].acked = p->offset;
				kc->uncommitted = 1;
				n++;
			}
			else
			{
				log_line	line;

				log_begin(&line, LOG_WARNING, "offset_store_failed");
				log_kv_fmt(&line, "at", "%s [%d] @%lld", p->topic,
						   (int) p->partition, (long long) p->offset);
				log_kv_str(&line, "error", rd_kafka_err2str(p->err ? p->err : err));
				log_end(&line);
			}
		}
	}
	rd_kafka_topic_partition_list_destroy(list);
	for (i = 0; i < kc->nslots; i++)
		kc->slots[i].store_to = -1;
	return n;
}

/*
 * kafka_ack_positions
 *		Acknowledge, past what the last batch stored, the records a
 *		partition holds but never hands to the application: the commit
 *		and abort markers of transactions (control records) and the
 *		messages of aborted transactions (isolation.level read_committed).
 *		Without it the group's committed offset, and the lag computed from
 *		it, stay one marker short of the end offset for ever.  The
 *		consumer's position (rd_kafka_position) moves past those records
 *		once the application has polled up to them; a partition whose
 *		every message consumed in this generation is stored (acked reaches
 *		polled_next: none is held in a batch, in flight or waiting) and
 *		whose position lies beyond acked has only such records in between,
 *		so its position is stored.  Each move (from acked, where the last
 *		batch left the database's position, to the consumer's position) is
 *		added to moved (NULL: not wanted), for the database's position to
 *		follow (status_advance: compare and set, on the reporter's
 *		session).  db_next stays where the batches recorded it: the
 *		database's position may or may not have followed, and
 *		positions_reconcile acts only on a database position below db_next.
 *		Called by the loop when a poll came back empty, before
 *		kafka_commit_async.  Returns the number of partitions stored.
 */
int
kafka_ack_positions(kafka_consumer *kc, advance_list *moved)
{
	rd_kafka_topic_partition_list_t *list;
	int			i,
				n = 0;

	list = rd_kafka_topic_partition_list_new(kc->nslots > 0 ? kc->nslots : 1);
	for (i = 0; i < kc->nslots; i++)
	{
		kafka_slot *slot = &kc->slots[i];

		if (!slot->assigned || slot->waiting_start || slot->acked < 0 ||
			slot->acked < slot->polled_next)
			continue;
		rd_kafka_topic_partition_list_add(list, slot->topic, slot->partition);
	}
	if (list->cnt == 0 ||
		rd_kafka_position(kc->rk, list) != RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		rd_kafka_topic_partition_list_destroy(list);
		return 0;
	}
	for (i = 0; i < list->cnt; i++)
	{
		rd_kafka_topic_partition_t *p = &list->elems[i];
		int			s = kafka_slot_find(kc, p->topic, p->partition);

		if (s < 0 || p->err || p->offset <= kc->slots[s].acked)
			p->offset = RD_KAFKA_OFFSET_INVALID;
	}
	for (i = 0; i < list->cnt; i++)
	{
		rd_kafka_topic_partition_t *p = &list->elems[i];
		rd_kafka_topic_partition_list_t *one;

		if (p->offset < 0)
			continue;
		one = rd_kafka_topic_partition_list_new(1);
		rd_kafka_topic_partition_list_add(one, p->topic, p->partition)->offset = p->offset;
		if (rd_kafka_offsets_store(kc->rk, one) == RD_KAFKA_RESP_ERR_NO_ERROR &&
			one->elems[0].err == RD_KAFKA_RESP_ERR_NO_ERROR)
		{
			kafka_slot *slot = &kc->slots[kafka_slot_find(kc, p->topic, p->partition)];

			if (moved != NULL)
				(void) advances_add(moved, p->topic, p->partition, slot->acked, p->offset);
			slot->acked = p->offset;
			kc->uncommitted = 1;
			n++;
		}
		rd_kafka_topic_partition_list_destroy(one);
	}
	rd_kafka_topic_partition_list_destroy(list);
	return n;
}

/*
 * kafka_commit_sync
 *		Commit the stored offsets now and wait for the answer; logs the
 *		offsets acknowledged so far for each assigned partition.
 */
void
kafka_commit_sync(kafka_consumer *kc, const char *why)
{
	rd_kafka_resp_err_t err = rd_kafka_commit(kc->rk, NULL, 0);
	log_line	line;
	char		list[3000];
	size_t		off = 0;
	int			i;

	kc->uncommitted = 0;
	list[0] = '\0';
	for (i = 0; i < kc->nslots && off < sizeof(list); i++)
	{
		int			n;

		if (!kc->slots[i].assigned || kc->slots[i].acked < 0)
			continue;
		n = snprintf(list + off, sizeof(list) - off, "%s%s [%d] @%lld",
					 off ? ", " : "", kc->slots[i].topic,
					 (int) kc->slots[i].partition, (long long) kc->slots[i].acked);
		if (n < 0)
			break;
		off += (size_t) n;
	}
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET)
	{
		log_begin(&line, LOG_INFO, "offsets_committed");
		log_kv_str(&line, "reason", why);
		log_kv_str(&line, "result", err ? "unchanged" : "committed");
		log_kv_str(&line, "offsets", list);
	}
	else
	{
		log_begin(&line, LOG_WARNING, "commit_failed");
		log_kv_str(&line, "reason", why);
		log_kv_str(&line, "error", rd_kafka_err2str(err));
	}
	log_end(&line);
}

/*
 * kafka_commit_async
 *		Ask librdkafka to commit the stored offsets now without waiting,
 *		when some were stored since the last commit: the loop calls it when
 *		a poll comes back empty, so that the group's committed offsets (and
 *		the lag tools derive from them) follow the database within about a
 *		second instead of auto.commit.interval.ms.  The answer arrives in
 *		kafka_offset_commit_cb during a later poll; a failed commit leaves
 *		the offsets stored for the next one.  1 when a commit was asked.
 */
int
kafka_commit_async(kafka_consumer *kc)
{
	rd_kafka_resp_err_t err;

	if (!kc->uncommitted)
		return 0;
	kc->uncommitted = 0;
	err = rd_kafka_commit(kc->rk, NULL, 1);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
	{
		log_line	line;

		log_begin(&line, LOG_WARNING, "commit_failed");
		log_kv_str(&line, "reason", "idle");
		log_kv_str(&line, "error", rd_kafka_err2str(err));
		log_end(&line);
	}
	return 1;
}
