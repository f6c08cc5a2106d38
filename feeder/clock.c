/*-------------------------------------------------------------------------
 *
 * clock.c
 *	  The feeder's monotonic clock in milliseconds: the time the loop,
 *	  delivery and positions keep their deadlines and intervals in.
 *
 * CLOCK_MONOTONIC does not jump with the wall clock, so a deadline or an
 * interval measured on it neither fires early nor waits for ever when NTP
 * or an operator sets the time.  The lanes wait on condition variables of
 * the same clock (lane_wait_until), so a deadline taken here is one they
 * can wait for.
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <time.h>

#include "clock.h"

/*
 * clock_now_ms
 *		Monotonic clock in milliseconds.
 */
int64_t
clock_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
