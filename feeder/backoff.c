/*-------------------------------------------------------------------------
 *
 * backoff.c
 *	  Capped, jittered exponential backoff for retried batches.
 *
 * Delay for attempt n (0-based): d = min(max, base * 2^n), then a uniform
 * pick in [max(base, d/2), d] ("equal jitter").  Half the exponential
 * growth is kept so that a database that is down is probed less and less
 * often, and the random half spreads several feeders that lost the
 * database at the same moment.
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "backoff.h"

/*
 * backoff_delay_ms
 *		Delay before retry number attempt (0 for the first retry), given a
 *		64-bit random value (passed in so that tests can pin it).  The
 *		result is never below base_ms and never above max_ms.
 */
int
backoff_delay_ms(const backoff_policy *policy, int attempt, uint64_t random)
{
	int64_t		base = policy->base_ms > 0 ? policy->base_ms : 1;
	int64_t		cap = policy->max_ms >= base ? policy->max_ms : base;
	int64_t		d = base;
	int64_t		lo;

	if (attempt < 0)
		attempt = 0;
	while (attempt-- > 0 && d < cap)
		d *= 2;
	if (d > cap)
		d = cap;
	lo = d / 2;
	if (lo < base)
		lo = base;
	return (int) (lo + (int64_t) (random % (uint64_t) (d - lo + 1)));
}

/*
 * backoff_random
 *		A cheap xorshift64* generator seeded from the clock and the pid on
 *		first use; jitter needs spread, not cryptographic quality.
 */
uint64_t
backoff_random(void)
{
	static uint64_t state = 0;

	if (state == 0)
	{
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		state = ((uint64_t) ts.tv_sec * 1000000007u) ^ (uint64_t) ts.tv_nsec ^
			((uint64_t) getpid() << 32);
		if (state == 0)
			state = 0x9e3779b97f4a7c15u;
	}
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1du;
}
