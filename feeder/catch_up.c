/*-------------------------------------------------------------------------
 *
 * catch_up.c
 *	  What a held partition needs when the database's position is behind
 *	  what the feeder had committed there (positions_catch_up).
 *
 * The database lost commits (a restore, an asynchronous standby promoted,
 * set_consumer_position moved back): the partition is read again from the
 * database's position, from the log start when the database has no
 * position, and a position below the log start is a position gap, recorded,
 * logged, counted and waited on (positions_gap).  One case looks like a gap
 * and is none: a partition started at its log start past a gap already
 * accepted (--accept-position-loss, or an operator's accept_position_gap),
 * whose database position stays below the log start until its first batch
 * commits; another session checking meanwhile must not count it again.
 * That case is told from the real one only by the database: a feeder whose
 * own committed offset equals the log start because retention emptied the
 * partition behind it has the same numbers, and there the offsets from the
 * database's position to the log start are lost.  So the database is asked
 * (catch_up_asks_acceptance says when) and only its answer skips.
 *
 *-------------------------------------------------------------------------
 */
#include "catch_up.h"

/*
 * catch_up_asks_acceptance
 *		Whether the decision needs the database's word on the gap from
 *		db_position to low - 1: the position lies below the log start (low)
 *		and the partition stands at the log start (db_next, the next offset
 *		the feeder committed or started at).
 */
int
catch_up_asks_acceptance(int64_t db_position, int64_t db_next, int64_t low)
{
	return db_position >= 0 && db_position < low && db_next == low;
}

/*
 * catch_up_decide
 *		What a held partition needs, given the database's position (-1:
 *		none), the next offset the feeder committed or started at
 *		(db_next), the partition's log start and end (low, high) and,
 *		where catch_up_asks_acceptance, whether the database holds the
 *		offsets db_position .. low - 1 accepted as lost (gap_accepted;
 *		ignored otherwise).  See the file header.
 */
catch_up_action
catch_up_decide(int64_t db_position, int64_t db_next, int64_t low,
				int64_t high, int gap_accepted)
{
	if (db_position < 0)
		return CATCH_UP_EARLIEST;
	if (db_position < low)
		return catch_up_asks_acceptance(db_position, db_next, low) &&
			gap_accepted ? CATCH_UP_NONE : CATCH_UP_GAP;
	if (db_position > high)
		return CATCH_UP_OUT_OF_RANGE;
	return CATCH_UP_SEEK;
}
