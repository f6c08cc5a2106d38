/*-------------------------------------------------------------------------
 *
 * catch_up.h
 *	  What a held partition needs when the database's position is behind
 *	  what the feeder had committed there.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_CATCH_UP_H
#define FEEDER_CATCH_UP_H

#include <stdint.h>

typedef enum catch_up_action
{
	CATCH_UP_SEEK,				/* read again from the database's position */
	CATCH_UP_EARLIEST,			/* no position: read again from the log start */
	CATCH_UP_GAP,				/* below the log start: a position gap */
	CATCH_UP_OUT_OF_RANGE,		/* beyond the log end */
	CATCH_UP_NONE				/* in a gap accepted already, the partition
								 * standing at the log start: nothing */
} catch_up_action;

extern int	catch_up_asks_acceptance(int64_t db_position, int64_t db_next,
									 int64_t low);
extern catch_up_action catch_up_decide(int64_t db_position, int64_t db_next,
									   int64_t low, int64_t high,
									   int gap_accepted);

#endif							/* FEEDER_CATCH_UP_H */
