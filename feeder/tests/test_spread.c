/*-------------------------------------------------------------------------
 *
 * test_spread.c
 *	  Unit tests of spread.c: partitions on one lane while live, on every
 *	  lane while a backlog needs them, and back.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "spread.h"

/* A live stream's partitions all go to lane 0. */
static void
test_starts_on_one_lane(void **state)
{
	lane_spread s;
	int			slot;

	(void) state;
	spread_init(&s, 8, 5000);
	assert_int_equal(s.width, 1);
	for (slot = 0; slot < 24; slot++)
		assert_int_equal(spread_lane_of_slot(&s, slot), 0);
}

/* Widened, each partition goes to its slot's lane. */
static void
test_widened_by_slot(void **state)
{
	lane_spread s;
	int			slot;

	(void) state;
	spread_init(&s, 8, 5000);
	spread_widened(&s, 100);
	assert_int_equal(s.width, 8);
	for (slot = 0; slot < 24; slot++)
		assert_int_equal(spread_lane_of_slot(&s, slot), slot % 8);
}

/* A backlog: SPREAD_WIDEN_HELD held, or a whole batch when smaller, or a
 * whole batch by bytes. */
static void
test_widen_mark(void **state)
{
	lane_spread s;

	(void) state;
	spread_init(&s, 8, 5000);
	assert_false(spread_should_widen(&s, SPREAD_WIDEN_HELD - 1, 0));
	assert_true(spread_should_widen(&s, SPREAD_WIDEN_HELD, 0));
	assert_true(spread_should_widen(&s, 3, 1));
	spread_init(&s, 8, 50);
	assert_false(spread_should_widen(&s, 49, 0));
	assert_true(spread_should_widen(&s, 50, 0));
	spread_init(&s, 4, 1);
	assert_true(spread_should_widen(&s, 1, 0));
	spread_widened(&s, 0);
	assert_false(spread_should_widen(&s, 100000, 1));	/* already wide */
}

/* One lane only: nothing to widen to. */
static void
test_one_lane(void **state)
{
	lane_spread s;

	(void) state;
	spread_init(&s, 1, 5000);
	assert_false(spread_should_widen(&s, 100000, 1));
	assert_int_equal(spread_lane_of_slot(&s, 7), 0);
	assert_false(spread_should_narrow(&s, 1, 100000));
}

/* Narrow only when every lane is quiet and no large batch went for
 * SPREAD_NARROW_AFTER_MS. */
static void
test_narrow(void **state)
{
	lane_spread s;

	(void) state;
	spread_init(&s, 8, 5000);	/* large: 1000 / 8 = 125 */
	spread_widened(&s, 1000);
	assert_false(spread_should_narrow(&s, 1, 1000 + SPREAD_NARROW_AFTER_MS - 1));
	assert_false(spread_should_narrow(&s, 0, 1000 + SPREAD_NARROW_AFTER_MS));
	assert_true(spread_should_narrow(&s, 1, 1000 + SPREAD_NARROW_AFTER_MS));
	spread_sent(&s, 124, 1500);	/* small: does not hold the width */
	assert_true(spread_should_narrow(&s, 1, 1000 + SPREAD_NARROW_AFTER_MS));
	spread_sent(&s, 125, 1600);	/* large */
	assert_false(spread_should_narrow(&s, 1, 1000 + SPREAD_NARROW_AFTER_MS));
	assert_true(spread_should_narrow(&s, 1, 1600 + SPREAD_NARROW_AFTER_MS));
	spread_narrowed(&s);
	assert_int_equal(s.width, 1);
	assert_false(spread_should_narrow(&s, 1, 1000000));
	assert_int_equal(spread_lane_of_slot(&s, 5), 0);
}

/* --batch-size 1: every batch is large, the lanes stay wide. */
static void
test_batches_of_one(void **state)
{
	lane_spread s;

	(void) state;
	spread_init(&s, 8, 1);
	spread_widened(&s, 0);
	spread_sent(&s, 1, 5000);
	assert_false(spread_should_narrow(&s, 1, 5000 + SPREAD_NARROW_AFTER_MS - 1));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starts_on_one_lane),
		cmocka_unit_test(test_widened_by_slot),
		cmocka_unit_test(test_widen_mark),
		cmocka_unit_test(test_one_lane),
		cmocka_unit_test(test_narrow),
		cmocka_unit_test(test_batches_of_one),
	};

	return cmocka_run_group_tests_name("spread", tests, NULL, NULL);
}
