/*-------------------------------------------------------------------------
 *
 * test_catch_up.c
 *	  Unit tests of catch_up.c: what a held partition needs when the
 *	  database's position is behind, and that a position below the log
 *	  start is skipped only where the database holds the gap accepted.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "catch_up.h"

/*
 * Retention emptied the partition behind the feeder (log start = log end =
 * its committed offset 500), then the database lost its last commits
 * (position 440): offsets 440..499 are lost, a gap, not nothing.
 */
static void
test_emptied_partition_is_a_gap(void **state)
{
	(void) state;
	assert_true(catch_up_asks_acceptance(440, 500, 500));
	assert_int_equal(catch_up_decide(440, 500, 500, 500, 0), CATCH_UP_GAP);
}

/*
 * Started at the log start past a gap the database holds accepted
 * (--accept-position-loss, before the partition's first batch): nothing
 * to do, nothing counted again.
 */
static void
test_accepted_gap_at_log_start_is_nothing(void **state)
{
	(void) state;
	assert_int_equal(catch_up_decide(440, 500, 500, 520, 1), CATCH_UP_NONE);
}

/* The database's word counts only where the partition stands at the log start. */
static void
test_acceptance_asked_only_at_log_start(void **state)
{
	(void) state;
	/* the feeder past the log start: a gap whatever the answer */
	assert_false(catch_up_asks_acceptance(440, 510, 500));
	assert_int_equal(catch_up_decide(440, 510, 500, 520, 1), CATCH_UP_GAP);
	/* no position, or a position at or above the log start: no question */
	assert_false(catch_up_asks_acceptance(-1, 500, 500));
	assert_false(catch_up_asks_acceptance(500, 500, 500));
	assert_false(catch_up_asks_acceptance(480, 500, 400));
}

/* The other cases: no position, within the log, beyond its end. */
static void
test_other_cases(void **state)
{
	(void) state;
	assert_int_equal(catch_up_decide(-1, 500, 100, 520, 0), CATCH_UP_EARLIEST);
	assert_int_equal(catch_up_decide(480, 500, 100, 520, 0), CATCH_UP_SEEK);
	assert_int_equal(catch_up_decide(100, 500, 100, 520, 0), CATCH_UP_SEEK);
	assert_int_equal(catch_up_decide(520, 530, 100, 520, 0), CATCH_UP_SEEK);
	assert_int_equal(catch_up_decide(600, 700, 100, 520, 0), CATCH_UP_OUT_OF_RANGE);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_emptied_partition_is_a_gap),
		cmocka_unit_test(test_accepted_gap_at_log_start_is_nothing),
		cmocka_unit_test(test_acceptance_asked_only_at_log_start),
		cmocka_unit_test(test_other_cases),
	};

	return cmocka_run_group_tests_name("catch_up", tests, NULL, NULL);
}
