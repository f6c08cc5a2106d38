/*-------------------------------------------------------------------------
 *
 * kafka_pause.c
 *	  What is fetched: the assigned partitions paused and resumed in
 *	  librdkafka, for a database outage (all of them), a partition waiting
 *	  for its start, or one waiting for a message's schema (held).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_pause.h"
#include "kafka_int.h"
#include "log.h"

/*
 * kafka_slot_should_pause
 *		Whether an assigned partition must not be fetched now: the feeder is
 *		paused for a database outage, the partition waits for its start, or
 *		one of its messages waits for its schema (held).
 */
static int
kafka_slot_should_pause(const kafka_consumer *kc, const kafka_slot *slot)
{
	return kc->paused || slot->waiting_start || slot->held;
}

/*
 * kafka_reconcile_pauses
 *		Bring librdkafka's pause state of the assigned partitions (all of
 *		them, or only those of parts) in line with kafka_slot_should_pause.
 *		librdkafka keeps an application's pause across a revoke and a new
 *		assignment, so a partition paused during an outage and assigned back
 *		after it would never be fetched again unless resumed here; and in
 *		librdkafka 2.0.2 resuming a partition that is not paused rewinds its
 *		fetch, so only partitions known paused (slot->paused) are resumed.
 *		Returns how many partitions changed.
 */
int
kafka_reconcile_pauses(kafka_consumer *kc, const rd_kafka_topic_partition_list_t *parts)
{
	rd_kafka_topic_partition_list_t *pause = rd_kafka_topic_partition_list_new(4);
	rd_kafka_topic_partition_list_t *resume = rd_kafka_topic_partition_list_new(4);
	int			n = parts ? parts->cnt : kc->nslots;
	int			changed,
				i;

	for (i = 0; i < n; i++)
	{
		int			s = parts ? kafka_slot_find(kc, parts->elems[i].topic,
												parts->elems[i].partition) : i;
		kafka_slot *slot;

		if (s < 0 || !kc->slots[s].assigned)
			continue;
		slot = &kc->slots[s];
		if (kafka_slot_should_pause(kc, slot) && !slot->paused)
			rd_kafka_topic_partition_list_add(pause, slot->topic, slot->partition);
		else if (!kafka_slot_should_pause(kc, slot) && slot->paused)
			rd_kafka_topic_partition_list_add(resume, slot->topic, slot->partition);
		else
			continue;
		slot->paused = kafka_slot_should_pause(kc, slot);
	}
	if (pause->cnt > 0)
		rd_kafka_pause_partitions(kc->rk, pause);
	if (resume->cnt > 0)
		rd_kafka_resume_partitions(kc->rk, resume);
	changed = pause->cnt + resume->cnt;
	rd_kafka_topic_partition_list_destroy(pause);
	rd_kafka_topic_partition_list_destroy(resume);
	return changed;
}

/*
 * kafka_set_paused
 *		Pause or resume the whole current assignment (the partitions that
 *		wait for their start stay paused).
 */
static void
kafka_set_paused(kafka_consumer *kc, int pause)
{
	log_line	line;
	int			n;

	kc->paused = pause;
	n = kafka_reconcile_pauses(kc, NULL);
	log_begin(&line, LOG_INFO, pause ? "partitions_paused" : "partitions_resumed");
	log_kv_int(&line, "count", n);
	log_end(&line);
}

/*
 * kafka_hold
 *		Stop (hold) or restart fetching one partition, by its slot: while
 *		one of its messages waits for its schema, the others go on.
 */
void
kafka_hold(kafka_consumer *kc, int slot, int hold)
{
	rd_kafka_topic_partition_list_t *one;

	if (slot < 0 || slot >= kc->nslots || kc->slots[slot].held == (hold != 0))
		return;
	kc->slots[slot].held = hold != 0;
	one = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(one, kc->slots[slot].topic,
									  kc->slots[slot].partition);
	kafka_reconcile_pauses(kc, one);
	rd_kafka_topic_partition_list_destroy(one);
}

/*
 * kafka_pause / kafka_resume / kafka_is_paused
 *		Stop and restart fetching while a batch waits for the database;
 *		polling continues, which keeps the group membership alive.
 */
void
kafka_pause(kafka_consumer *kc)
{
	if (!kc->paused)
		kafka_set_paused(kc, 1);
}

void
kafka_resume(kafka_consumer *kc)
{
	if (kc->paused)
		kafka_set_paused(kc, 0);
}

int
kafka_is_paused(const kafka_consumer *kc)
{
	return kc->paused;
}
