/*-------------------------------------------------------------------------
 *
 * test_advances.c
 *	  Unit tests of advances.c: position advances past markers waiting
 *	  for the database, merged one per partition, and their arrays.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "advances.h"

/*
 * check_one
 *		l's advance of (topic, partition) is from..to.
 */
static void
check_one(const advance_list *l, const char *topic, int32_t partition,
		  int64_t from, int64_t to)
{
	int			i;

	for (i = 0; i < l->n; i++)
		if (l->items[i].partition == partition && strcmp(l->items[i].topic, topic) == 0)
		{
			assert_int_equal(l->items[i].from, from);
			assert_int_equal(l->items[i].to, to);
			return;
		}
	fail_msg("no advance of %s [%d]", topic, (int) partition);
}

/* One per partition; partitions and topics apart. */
static void
test_one_per_partition(void **state)
{
	advance_list l = {0};

	(void) state;
	assert_int_equal(advances_add(&l, "orders", 0, 10, 12), 0);
	assert_int_equal(advances_add(&l, "orders", 1, 20, 21), 0);
	assert_int_equal(advances_add(&l, "other", 0, 5, 6), 0);
	assert_int_equal(l.n, 3);
	check_one(&l, "orders", 0, 10, 12);
	check_one(&l, "orders", 1, 20, 21);
	check_one(&l, "other", 0, 5, 6);
	advances_free(&l);
	assert_int_equal(l.n, 0);
}

/* An advance that starts where the waiting one ends extends it. */
static void
test_following_extends(void **state)
{
	advance_list l = {0};

	(void) state;
	advances_add(&l, "orders", 0, 10, 12);
	advances_add(&l, "orders", 0, 12, 14);
	assert_int_equal(l.n, 1);
	check_one(&l, "orders", 0, 10, 14);
	advances_free(&l);
}

/* An advance that starts later (a batch moved the position) replaces it. */
static void
test_later_replaces(void **state)
{
	advance_list l = {0};

	(void) state;
	advances_add(&l, "orders", 0, 10, 12);
	advances_add(&l, "orders", 0, 30, 31);
	check_one(&l, "orders", 0, 30, 31);
	/* an earlier one that does not precede it is dropped */
	advances_add(&l, "orders", 0, 10, 12);
	check_one(&l, "orders", 0, 30, 31);
	assert_int_equal(l.n, 1);
	advances_free(&l);
}

/*
 * A failed send put back under the advances recorded since: the older one
 * preceding a newer one becomes one advance; an older one a batch passed
 * is dropped; an older one of another partition stays.
 */
static void
test_merge_put_back(void **state)
{
	advance_list l = {0};
	advance_list older = {0};

	(void) state;
	advances_add(&older, "orders", 0, 10, 12);
	advances_add(&older, "orders", 1, 20, 21);
	advances_add(&older, "orders", 2, 7, 9);
	advances_add(&l, "orders", 0, 12, 13);
	advances_add(&l, "orders", 1, 40, 42);
	advances_merge(&l, &older);
	assert_int_equal(older.n, 0);
	assert_int_equal(l.n, 3);
	check_one(&l, "orders", 0, 10, 13);
	check_one(&l, "orders", 1, 40, 42);
	check_one(&l, "orders", 2, 7, 9);
	advances_free(&l);
}

/* Nothing backwards or empty, nothing negative, at most ADVANCES_MAX. */
static void
test_refused(void **state)
{
	advance_list l = {0};
	char		topic[16];
	int			i;

	(void) state;
	assert_int_equal(advances_add(&l, "orders", 0, 12, 12), -1);
	assert_int_equal(advances_add(&l, "orders", 0, 12, 10), -1);
	assert_int_equal(advances_add(&l, "orders", 0, -1, 10), -1);
	assert_int_equal(l.n, 0);
	for (i = 0; i < ADVANCES_MAX; i++)
		assert_int_equal(advances_add(&l, "orders", i, 0, 1), 0);
	assert_int_equal(advances_add(&l, "orders", ADVANCES_MAX, 0, 1), -1);
	snprintf(topic, sizeof(topic), "orders");
	assert_int_equal(advances_add(&l, topic, 5, 1, 2), 0);	/* merged */
	assert_int_equal(l.n, ADVANCES_MAX);
	advances_free(&l);
}

/* get_u32: a big-endian 32-bit integer at p. */
static uint32_t
get_u32(const char *p)
{
	const unsigned char *u = (const unsigned char *) p;

	return ((uint32_t) u[0] << 24) | ((uint32_t) u[1] << 16) |
		((uint32_t) u[2] << 8) | u[3];
}

/* The four arrays: element types, dimension, the elements in order. */
static void
test_arrays(void **state)
{
	advance_list l = {0};
	advance_arrays a;
	const char *p;

	(void) state;
	advances_add(&l, "orders", 3, 10, 12);
	advances_add(&l, "t2", 1, 4, 5);
	assert_int_equal(advances_arrays(&l, &a), 0);
	assert_int_equal(get_u32(a.topics.data + 8), PGARRAY_TEXTOID);
	assert_int_equal(get_u32(a.partitions.data + 8), PGARRAY_INT4OID);
	assert_int_equal(get_u32(a.froms.data + 8), PGARRAY_INT8OID);
	assert_int_equal(get_u32(a.tos.data + 8), PGARRAY_INT8OID);
	assert_int_equal(get_u32(a.topics.data + 12), 2);
	assert_int_equal(get_u32(a.tos.data + 12), 2);
	p = a.topics.data + PGARRAY_HEADER_LEN;
	assert_int_equal(get_u32(p), 6);
	assert_memory_equal(p + 4, "orders", 6);
	assert_int_equal(get_u32(p + 10), 2);
	assert_memory_equal(p + 14, "t2", 2);
	p = a.partitions.data + PGARRAY_HEADER_LEN;
	assert_int_equal(get_u32(p + 4), 3);
	assert_int_equal(get_u32(p + 12), 1);
	p = a.froms.data + PGARRAY_HEADER_LEN;
	assert_int_equal(get_u32(p + 8), 10);
	assert_int_equal(get_u32(p + 20), 4);
	p = a.tos.data + PGARRAY_HEADER_LEN;
	assert_int_equal(get_u32(p + 8), 12);
	assert_int_equal(get_u32(p + 20), 5);
	advance_arrays_free(&a);
	advances_free(&l);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_per_partition),
		cmocka_unit_test(test_following_extends),
		cmocka_unit_test(test_later_replaces),
		cmocka_unit_test(test_merge_put_back),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_arrays),
	};

	return cmocka_run_group_tests_name("advances", tests, NULL, NULL);
}
