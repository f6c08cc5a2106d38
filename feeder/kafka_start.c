/*-------------------------------------------------------------------------
 *
 * kafka_start.c
 *	  Where each assigned partition starts: waiting for its start, deferred
 *	  after a failed one, started or restarted at an offset, and that
 *	  offset stored for the group.
 *
 * The database is the authority on where each partition resumes
 * (positions.c decides).  On assignment the start offsets go into the
 * list given to rd_kafka_assign / rd_kafka_incremental_assign, as
 * librdkafka wants them (kafka_rebalance.c); when they cannot be decided
 * (the database is unreachable, or one partition's offsets cannot be
 * asked of its leader), those partitions are assigned paused
 * (waiting_start) and started later with kafka_start_partition, which
 * seeks.  A partition whose start failed (kafka_defer_start) is not
 * counted as waiting for an attempt until its backoff has passed, so that
 * one unreachable partition costs one bounded query per backoff, and the
 * others go on.  Restarting a partition gives its slot a new generation,
 * so that the messages held from its old position are dropped like those
 * of a revoked partition.  A partition started at the database's position
 * has that offset stored for the group at once (kafka_store_starts): the
 * database holds every event below it, and the group's committed offset,
 * which lag tools read, must not stay behind it when nothing new arrives.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_start.h"
#include "kafka_int.h"
#include "clock.h"
#include "log.h"

/*
 * kafka_assigned
 *		The partitions assigned now, in a malloc'ed array (*out, to free);
 *		their count, or -1 on out of memory.
 */
int
kafka_assigned(kafka_consumer *kc, kafka_assigned_partition **out)
{
	int			i,
				n = 0;

	*out = calloc((size_t) (kc->nslots > 0 ? kc->nslots : 1),
				  sizeof(kafka_assigned_partition));
	if (*out == NULL)
		return -1;
	for (i = 0; i < kc->nslots; i++)
	{
		if (!kc->slots[i].assigned)
			continue;
		(*out)[n].topic = kc->slots[i].topic;
		(*out)[n].partition = kc->slots[i].partition;
		(*out)[n].db_next = kc->slots[i].db_next;
		(*out)[n].waiting_start = kc->slots[i].waiting_start;
		(*out)[n].start_due = kc->slots[i].start_retry_ms <= clock_now_ms();
		(*out)[n].gap_first = kc->slots[i].gap_first;
		(*out)[n].slot = i;
		n++;
	}
	return n;
}

/*
 * kafka_waiting_start
 *		How many assigned partitions wait for their start position and may
 *		be tried now: a partition whose start failed is not counted until
 *		its backoff has passed (kafka_defer_start).
 */
int
kafka_waiting_start(const kafka_consumer *kc)
{
	int64_t		now = clock_now_ms();
	int			i,
				n = 0;

	for (i = 0; i < kc->nslots; i++)
		if (kc->slots[i].assigned && kc->slots[i].waiting_start &&
			kc->slots[i].start_retry_ms <= now)
			n++;
	return n;
}

/*
 * kafka_slot_restart
 *		A new generation for an assigned partition (the messages held from
 *		its old position are dropped at the next prune), starting at
 *		db_next (-1: not known), stored for the group when known.
 */
static void
kafka_slot_restart(kafka_consumer *kc, kafka_slot *slot, int64_t db_next)
{
	kc->generation++;
	slot->generation = kc->generation;
	slot->acked = -1;
	slot->first_seen = -1;
	slot->polled_next = -1;
	slot->db_next = db_next;
	slot->start_store = db_next;
	if (slot->start_store >= 0)
		kc->starts_pending = 1;
	kc->rebalanced = 1;
}

/*
 * kafka_defer_start
 *		The start of a partition could not be decided or made now (its
 *		offsets could not be asked of its leader, its seek failed): it
 *		waits for its start, paused, and is not tried again before a delay
 *		from policy (backoff_delay_ms of its failures in a row, in
 *		*delay_ms).  A partition that had started is put back to waiting:
 *		a new generation drops the messages held from it, nothing of it is
 *		acknowledged, and kafka_start_partition starts it again.  Called
 *		from the start function, before the partition is assigned, only the
 *		delay is recorded (the rebalance callback pauses it).  Returns its
 *		failures in a row, this one included; -1 on out of memory.
 */
int
kafka_defer_start(kafka_consumer *kc, const char *topic, int32_t partition,
				  const backoff_policy *policy, int *delay_ms)
{
	int			s = kafka_slot_find(kc, topic, partition);
	kafka_slot *slot;

	if (s < 0)
		return -1;
	slot = &kc->slots[s];
	*delay_ms = backoff_delay_ms(policy, slot->start_failures, backoff_random());
	slot->start_failures++;
	slot->start_retry_ms = clock_now_ms() + *delay_ms;
	if (slot->assigned && !slot->waiting_start)
	{
		rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);

		kafka_slot_restart(kc, slot, -1);
		slot->waiting_start = 1;
		rd_kafka_topic_partition_list_add(list, topic, partition);
		kafka_reconcile_pauses(kc, list);
		rd_kafka_topic_partition_list_destroy(list);
	}
	return slot->start_failures;
}

/*
 * kafka_mark_gap
 *		Remember that a partition waits (kafka_defer_start) on a position
 *		gap that begins at first_lost, the database's position below the
 *		partition's earliest offset, until kafka_start_partition starts it:
 *		the gauge of partitions waiting on a gap counts it, and the caller
 *		knows, when it starts, where the gap began.  1 when the gap is new
 *		to the partition, 0 when it is the one already marked, -1 on out of
 *		memory.
 */
int
kafka_mark_gap(kafka_consumer *kc, const char *topic, int32_t partition,
			   int64_t first_lost)
{
	int			s = kafka_slot_find(kc, topic, partition);
	int			fresh;

	if (s < 0)
		return -1;
	fresh = kc->slots[s].gap_first != first_lost;
	kc->slots[s].gap_first = first_lost;
	return fresh;
}

/*
 * kafka_start_reassign
 *		Under the consumer group protocol (KIP-848) the broker may assign a
 *		partition added to the topic before this client's metadata knows
 *		it: its start waits, and librdkafka, finding no committed offset
 *		with auto.offset.reset=error, leaves it in an error state that
 *		refuses every seek (_STATE).  Assign it again, at the offset
 *		list's element holds, which is what a seek would have done; list's
 *		error is cleared when that worked.
 */
static void
kafka_start_reassign(kafka_consumer *kc, rd_kafka_topic_partition_list_t *list)
{
	rd_kafka_error_t *error = rd_kafka_incremental_unassign(kc->rk, list);

	if (error == NULL)
		error = rd_kafka_incremental_assign(kc->rk, list);
	if (error == NULL)
	{
		log_line	line;

		list->elems[0].err = RD_KAFKA_RESP_ERR_NO_ERROR;
		log_begin(&line, LOG_INFO, "partition_reassigned");
		log_kv_fmt(&line, "at", "%s [%d] @%lld", list->elems[0].topic,
				   (int) list->elems[0].partition, (long long) list->elems[0].offset);
		log_kv_str(&line, "reason", "its seek was refused (_STATE): assigned again at its start");
		log_end(&line);
	}
	else
		rd_kafka_error_destroy(error);
}

/*
 * kafka_start_partition
 *		(Re)start an assigned partition at offset: a real offset or
 *		RD_KAFKA_OFFSET_BEGINNING (seek), or RD_KAFKA_OFFSET_INVALID for
 *		where it stands (only resumes a waiting partition).  The slot gets a
 *		new generation, so the messages held from the old position are
 *		dropped at the next prune (kafka_take_rebalanced), and a partition
 *		that waited for its start is resumed unless the feeder is paused.
 *		0 on success, -1 when the seek failed (the caller retries).
 */
int
kafka_start_partition(kafka_consumer *kc, const char *topic, int32_t partition,
					  int64_t offset)
{
	int			s = kafka_slot_find(kc, topic, partition);
	rd_kafka_topic_partition_list_t *list;
	int			rc = 0;

	if (s < 0 || !kc->slots[s].assigned)
		return -1;
	list = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(list, topic, partition)->offset = offset;
	if (offset != RD_KAFKA_OFFSET_INVALID)
	{
		rd_kafka_error_t *error = rd_kafka_seek_partitions(kc->rk, list, 5000);

		if (kc->consumer_protocol && !error &&
			list->elems[0].err == RD_KAFKA_RESP_ERR__STATE)
			kafka_start_reassign(kc, list);
		if (error || list->elems[0].err)
		{
			log_line	line;

			log_begin(&line, LOG_WARNING, "seek_failed");
			log_kv_fmt(&line, "at", "%s [%d] @%lld", topic, (int) partition,
					   (long long) offset);
			log_kv_str(&line, "error", error ? rd_kafka_error_string(error) :
					   rd_kafka_err2str(list->elems[0].err));
			log_end(&line);
			if (error)
				rd_kafka_error_destroy(error);
			rc = -1;
		}
	}
	if (rc == 0)
	{
		kafka_slot_restart(kc, &kc->slots[s], offset >= 0 ? offset : -1);
		kc->slots[s].start_failures = 0;
		kc->slots[s].gap_first = -1;
		if (kc->slots[s].waiting_start)
		{
			kc->slots[s].waiting_start = 0;
			kafka_reconcile_pauses(kc, list);
		}
	}
	rd_kafka_topic_partition_list_destroy(list);
	return rc;
}

/*
 * kafka_store_starts
 *		Store, for the next commit, the start offset of every partition
 *		started at the database's position (outside the rebalance callback,
 *		once librdkafka has the assignment).  A store refused now is tried
 *		again at the next poll.
 */
void
kafka_store_starts(kafka_consumer *kc)
{
	rd_kafka_topic_partition_list_t *list;
	int			i;

	kc->starts_pending = 0;
	list = rd_kafka_topic_partition_list_new(kc->nslots > 0 ? kc->nslots : 1);
	for (i = 0; i < kc->nslots; i++)
	{
		if (!kc->slots[i].assigned)
			kc->slots[i].start_store = -1;
		if (kc->slots[i].start_store < 0)
			continue;
		rd_kafka_topic_partition_list_add(list, kc->slots[i].topic,
										  kc->slots[i].partition)->offset =
			kc->slots[i].start_store;
	}
	if (list->cnt > 0)
	{
		rd_kafka_resp_err_t err = rd_kafka_offsets_store(kc->rk, list);

		for (i = 0; i < list->cnt; i++)
		{
			rd_kafka_topic_partition_t *p = &list->elems[i];
			int			s = kafka_slot_find(kc, p->topic, p->partition);

			if (s < 0)
				continue;
			if (err == RD_KAFKA_RESP_ERR_NO_ERROR && p->err == RD_KAFKA_RESP_ERR_NO_ERROR)
			{
				if (kc->slots[s].acked < 0)
					kc->slots[s].acked = p->offset;
				kc->slots[s].start_store = -1;
				kc->uncommitted = 1;
			}
			else
				kc->starts_pending = 1;
		}
	}
	rd_kafka_topic_partition_list_destroy(list);
}
