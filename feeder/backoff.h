/*-------------------------------------------------------------------------
 *
 * backoff.h
 *	  Capped, jittered exponential backoff for retried batches.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_BACKOFF_H
#define FEEDER_BACKOFF_H

#include <stdint.h>

typedef struct backoff_policy
{
	int			base_ms;		/* first delay, also the floor */
	int			max_ms;			/* cap, never exceeded */
} backoff_policy;

extern int	backoff_delay_ms(const backoff_policy *policy, int attempt, uint64_t random);
extern uint64_t backoff_random(void);

#endif							/* FEEDER_BACKOFF_H */
