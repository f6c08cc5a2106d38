/*-------------------------------------------------------------------------
 *
 * spread.h
 *	  Over how many lanes the partitions are spread: one while the stream
 *	  is live, every lane while a backlog needs them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_SPREAD_H
#define FEEDER_SPREAD_H

#include <stddef.h>
#include <stdint.h>

/* A backlog's mark: what the one lane holds when it is free again. */
#define SPREAD_WIDEN_HELD 1000

/* How long batches stay small before the partitions gather on one lane. */
#define SPREAD_NARROW_AFTER_MS 1000

typedef struct lane_spread
{
	int			nlanes;			/* lanes there are (--db-sessions) */
	int			width;			/* lanes the partitions go to now: 1 or nlanes */
	size_t		widen_at;		/* held by the one lane, when free, to widen */
	size_t		large_batch;	/* a batch this large keeps the lanes wide */
	int64_t		last_large_ms;	/* clock of the last such batch */
} lane_spread;

extern void spread_init(lane_spread *s, int nlanes, int batch_size);
extern int	spread_lane_of_slot(const lane_spread *s, int slot);
extern int	spread_should_widen(const lane_spread *s, size_t held, int held_whole_batch);
extern void spread_widened(lane_spread *s, int64_t now_ms);
extern void spread_sent(lane_spread *s, int count, int64_t now_ms);
extern int	spread_should_narrow(const lane_spread *s, int all_quiet, int64_t now_ms);
extern void spread_narrowed(lane_spread *s);

#endif							/* FEEDER_SPREAD_H */
