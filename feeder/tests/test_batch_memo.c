/*-------------------------------------------------------------------------
 *
 * test_batch_memo.c
 *	  Unit tests of batch_memo.c: a batch retried unchanged is known as the
 *	  one encoded (its Avro values are not decoded again); a batch split,
 *	  pruned, or refilled with other messages is not.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "batch.h"
#include "batch_memo.h"

/* Distinct handles and values for the made-up messages. */
static char handles[64];
static char values[64];

/*
 * fill
 *		A batch of n messages of partition 0 from offset first, message i's
 *		handle and value at handles[i + shift], values[i + shift].
 */
static void
fill(batch *b, int first, int n, int shift)
{
	int			i;

	batch_clear(b, NULL);
	for (i = 0; i < n; i++)
	{
		batch_msg	m;

		memset(&m, 0, sizeof(m));
		m.handle = &handles[i + shift];
		m.topic = "orders";
		m.partition = 0;
		m.offset = first + i;
		m.value = &values[i + shift];
		m.value_len = 1;
		batch_add(b, &m, 0);
	}
}

/*
 * drop_odd
 *		batch_remove_if's predicate: the messages of odd offsets.
 */
static int
drop_odd(const batch_msg *m, void *arg)
{
	(void) arg;
	return m->offset % 2 == 1;
}

/*
 * test_same_batch_once
 *		A batch remembered is the same on its retry, and only then.
 */
static void
test_same_batch_once(void **state)
{
	batch		b;
	batch_memo	memo = {0};
	msg_queue	pending;

	(void) state;
	assert_int_equal(batch_init(&b, 100, 1000), 0);
	queue_init(&pending);
	fill(&b, 10, 8, 0);
	assert_false(batch_memo_same(&memo, &b));	/* nothing remembered */
	batch_memo_remember(&memo, &b);
	assert_true(batch_memo_same(&memo, &b));	/* the retry: as it was */
	assert_true(batch_memo_same(&memo, &b));

	/* the same offsets under other handles (consumed again): another batch */
	fill(&b, 10, 8, 1);
	assert_false(batch_memo_same(&memo, &b));
	/* other offsets */
	fill(&b, 11, 8, 0);
	assert_false(batch_memo_same(&memo, &b));
	/* one message fewer */
	fill(&b, 10, 7, 0);
	assert_false(batch_memo_same(&memo, &b));

	/* pruned (a partition revoked): another batch */
	fill(&b, 10, 8, 0);
	assert_true(batch_memo_same(&memo, &b));
	assert_int_equal(batch_remove_if(&b, drop_odd, NULL, NULL), 4);
	assert_false(batch_memo_same(&memo, &b));

	/* split for its size: another batch */
	fill(&b, 10, 8, 0);
	assert_true(batch_split(&b, &pending) > 0);
	assert_false(batch_memo_same(&memo, &b));

	/* forgotten (an encoding that failed): nothing is the same */
	fill(&b, 10, 8, 0);
	batch_memo_forget(&memo);
	assert_false(batch_memo_same(&memo, &b));

	batch_memo_free(&memo);
	queue_free(&pending, NULL);
	batch_free(&b, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_batch_once),
	};

	return cmocka_run_group_tests_name("batch_memo", tests, NULL, NULL);
}
