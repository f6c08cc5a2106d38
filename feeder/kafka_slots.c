/*-------------------------------------------------------------------------
 *
 * kafka_slots.c
 *	  The partitions the group gave the consumer (slots) and their
 *	  assignment generations.
 *
 * Every partition the group gives us gets a slot whose generation changes
 * at each assignment.  A message remembers the generation it was consumed
 * in; if its partition was revoked since (even if assigned back), its
 * offset is not stored, because the partition's committed position was
 * settled at the revoke and may belong to another member by now.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_slots.h"
#include "kafka_int.h"

/*
 * kafka_slot_find
 *		The slot of (topic, partition), created unassigned if missing; -1
 *		on out of memory.  Slots are never removed, so an index stays valid
 *		for the life of the consumer.
 */
int
kafka_slot_find(kafka_consumer *kc, const char *topic, int32_t partition)
{
	kafka_slot *slots;
	int			i;

	for (i = 0; i < kc->nslots; i++)
		if (kc->slots[i].partition == partition &&
			strcmp(kc->slots[i].topic, topic) == 0)
			return i;
	slots = realloc(kc->slots, sizeof(kafka_slot) * (size_t) (kc->nslots + 1));
	if (slots == NULL)
		return -1;
	kc->slots = slots;
	memset(&slots[kc->nslots], 0, sizeof(kafka_slot));
	slots[kc->nslots].topic = strdup(topic);
	if (slots[kc->nslots].topic == NULL)
		return -1;
	slots[kc->nslots].partition = partition;
	slots[kc->nslots].acked = -1;
	slots[kc->nslots].first_seen = -1;
	slots[kc->nslots].polled_next = -1;
	slots[kc->nslots].store_to = -1;
	slots[kc->nslots].committed = -1;
	slots[kc->nslots].db_next = -1;
	slots[kc->nslots].start_store = -1;
	slots[kc->nslots].gap_first = -1;
	slots[kc->nslots].last_lag = -1;
	kafka_slot_forget_asked(&slots[kc->nslots]);
	return kc->nslots++;
}

/*
 * kafka_take_rebalanced
 *		True once after each assignment change, so the caller can drop the
 *		held messages of revoked partitions.
 */
int
kafka_take_rebalanced(kafka_consumer *kc)
{
	int			r = kc->rebalanced;

	kc->rebalanced = 0;
	return r;
}

/*
 * kafka_msg_revoked
 *		True when m's partition is no longer assigned in the generation m
 *		was consumed in (a predicate for batch_remove_if).
 */
int
kafka_msg_revoked(const batch_msg *m, void *arg)
{
	const kafka_consumer *kc = arg;

	if (m->slot < 0 || m->slot >= kc->nslots)
		return 1;
	return !kc->slots[m->slot].assigned ||
		kc->slots[m->slot].generation != m->generation;
}
