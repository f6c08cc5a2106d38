/*-------------------------------------------------------------------------
 *
 * spread.c
 *	  The rule that spreads partitions over the lanes (database sessions)
 *	  only when a backlog needs them.
 *
 * Each lane's transaction has a cost of its own (a round trip, a commit
 * and its WAL flush, a backend woken), whatever its size.  A live stream
 * brings a few messages per fetch: spread over eight lanes, they become
 * eight small transactions at once on the server's cores, and the last of
 * them waits for the seven others.  Gathered on one lane they are one
 * transaction, and what arrives while it runs makes the next one.  A
 * backlog is the opposite case: one session cannot keep up, eight can.
 *
 * So the partitions go to one lane (width 1) until that lane, free again
 * after a transaction, holds a backlog's worth (SPREAD_WIDEN_HELD
 * messages, or a whole batch, whichever is less, or a whole batch by
 * bytes): then every lane (width nlanes, each partition on its slot's
 * lane, batch_lane_of_slot).  They gather on one lane again once every
 * lane is quiet (nothing held, nothing in flight, no retry waiting) and no
 * batch sent for SPREAD_NARROW_AFTER_MS was large (the one lane's mark
 * shared among the lanes), so that a rate just past one lane's pace does
 * not swing back and forth.
 *
 * A partition's messages are all in one lane at any time, so its batches
 * still commit in order: the loop widens only when the one lane is free
 * with no batch assembled and moves what it holds, in order, to the
 * lanes of their slots (loop_spread), and narrows only when every lane is
 * quiet.  This file decides; the loop moves the messages.
 *
 *-------------------------------------------------------------------------
 */
#include "spread.h"
#include "batch.h"

/*
 * spread_init
 *		One lane's width at the start: a backlog widens at its first batch.
 */
void
spread_init(lane_spread *s, int nlanes, int batch_size)
{
	s->nlanes = nlanes > 1 ? nlanes : 1;
	s->width = 1;
	s->widen_at = batch_size > 0 && (size_t) batch_size < SPREAD_WIDEN_HELD ?
		(size_t) batch_size : SPREAD_WIDEN_HELD;
	s->large_batch = s->widen_at / (size_t) s->nlanes;
	if (s->large_batch < 1)
		s->large_batch = 1;
	s->last_large_ms = 0;
}

/*
 * spread_lane_of_slot
 *		The lane of a partition's slot at the present width.
 */
int
spread_lane_of_slot(const lane_spread *s, int slot)
{
	return batch_lane_of_slot(slot, s->width);
}

/*
 * spread_should_widen
 *		Whether the one lane, free again, holds a backlog: held messages
 *		(or a whole batch by bytes, held_whole_batch).
 */
int
spread_should_widen(const lane_spread *s, size_t held, int held_whole_batch)
{
	return s->width < s->nlanes && (held >= s->widen_at || held_whole_batch);
}

/*
 * spread_widened
 *		The loop spread the partitions over every lane.
 */
void
spread_widened(lane_spread *s, int64_t now_ms)
{
	s->width = s->nlanes;
	s->last_large_ms = now_ms;
}

/*
 * spread_sent
 *		A lane sent a batch of count messages.
 */
void
spread_sent(lane_spread *s, int count, int64_t now_ms)
{
	if (count > 0 && (size_t) count >= s->large_batch)
		s->last_large_ms = now_ms;
}

/*
 * spread_should_narrow
 *		Whether the partitions may gather on one lane: every lane is quiet
 *		(all_quiet) and no large batch went for SPREAD_NARROW_AFTER_MS.
 */
int
spread_should_narrow(const lane_spread *s, int all_quiet, int64_t now_ms)
{
	return s->width > 1 && all_quiet &&
		now_ms - s->last_large_ms >= SPREAD_NARROW_AFTER_MS;
}

/*
 * spread_narrowed
 *		The loop gathered the partitions on one lane.
 */
void
spread_narrowed(lane_spread *s)
{
	s->width = 1;
}
