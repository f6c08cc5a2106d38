/*-------------------------------------------------------------------------
 *
 * test_backoff.c
 *	  Unit tests of backoff.c: growth, cap, floor and jitter range.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "backoff.h"

/* Extreme random values give the ends of the jitter range. */
static void
test_range_per_attempt(void **state)
{
	backoff_policy p = {100, 5000};

	(void) state;
	/* attempt 0: d = 100, range [100, 100] (floor = base) */
	assert_int_equal(backoff_delay_ms(&p, 0, 0), 100);
	assert_int_equal(backoff_delay_ms(&p, 0, UINT64_MAX), 100);
	/* attempt 3: d = 800, range [400, 800] */
	assert_int_equal(backoff_delay_ms(&p, 3, 0), 400);
	assert_int_equal(backoff_delay_ms(&p, 3, 400), 800);
	/* far attempts: d = cap, range [2500, 5000] */
	assert_int_equal(backoff_delay_ms(&p, 40, 0), 2500);
	assert_int_equal(backoff_delay_ms(&p, 40, 2500), 5000);
	assert_int_equal(backoff_delay_ms(&p, 1000000, 2500), 5000);
}

/* Never above the cap, never below the floor, for any random value. */
static void
test_bounds_random(void **state)
{
	backoff_policy p = {50, 3000};
	int			attempt;
	int			i;

	(void) state;
	for (attempt = -1; attempt < 70; attempt++)
		for (i = 0; i < 2000; i++)
		{
			int			d = backoff_delay_ms(&p, attempt, backoff_random());

			assert_true(d >= 50);
			assert_true(d <= 3000);
		}
}

/* Jitter actually spreads: many distinct values within the upper band. */
static void
test_jitter_spread(void **state)
{
	backoff_policy p = {100, 10000};
	int			min = 1 << 30,
				max = 0,
				i;

	(void) state;
	for (i = 0; i < 5000; i++)
	{
		int			d = backoff_delay_ms(&p, 20, backoff_random());

		if (d < min)
			min = d;
		if (d > max)
			max = d;
	}
	assert_true(min >= 5000);
	assert_true(max <= 10000);
	assert_true(max - min > 4000);
}

/* A cap below the base, or a zero base, stays sane. */
static void
test_degenerate_policy(void **state)
{
	backoff_policy p = {500, 100};
	backoff_policy z = {0, 0};

	(void) state;
	assert_int_equal(backoff_delay_ms(&p, 5, 12345), 500);
	assert_int_equal(backoff_delay_ms(&z, 5, 12345), 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_range_per_attempt),
		cmocka_unit_test(test_bounds_random),
		cmocka_unit_test(test_jitter_spread),
		cmocka_unit_test(test_degenerate_policy),
	};

	return cmocka_run_group_tests_name("backoff", tests, NULL, NULL);
}
