/*-------------------------------------------------------------------------
 *
 * clock.h
 *	  The feeder's monotonic clock in milliseconds: the time the loop,
 *	  delivery and positions keep their deadlines and intervals in.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_CLOCK_H
#define FEEDER_CLOCK_H

#include <stdint.h>

extern int64_t clock_now_ms(void);

#endif							/* FEEDER_CLOCK_H */
