/*-------------------------------------------------------------------------
 *
 * test_batch_memo.c
 *	  Unit tests of batch_memo.c: a batch retried unchanged is known as the
 *	  one encoded (its Avro values are not decoded again); a batch split or
 *	  pruned is not, nor another topic's batch of the same partitions,
 *	  offsets and addresses, nor any batch once the one encoded is over.
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
 * fill_topic
 *		A batch of n messages of topic's partition 0 from offset first,
 *		message i's handle and value at handles[i + shift], values[i + shift].
 */
static void
fill_topic(batch *b, const char *topic, int first, int n, int shift)
{
	int			i;

	batch_clear(b, NULL);
	for (i = 0; i < n; i++)
	{
		batch_msg	m;

		memset(&m, 0, sizeof(m));
		m.handle = &handles[i + shift];
		m.topic = topic;
		m.partition = 0;
		m.offset = first + i;
		m.value = &values[i + shift];
		m.value_len = 1;
		batch_add(b, &m, 0);
	}
}

/*
 * fill
 *		fill_topic of topic "orders".
 */
static void
fill(batch *b, int first, int n, int shift)
{
	fill_topic(b, "orders", first, n, shift);
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
 * drop_all
 *		batch_remove_if's predicate: every message (its partition revoked).
 */
static int
drop_all(const batch_msg *m, void *arg)
{
	(void) m;
	(void) arg;
	return 1;
}

/*
 * test_same_batch_once
 *		A batch remembered is the same on its retry, and only then: not
 *		once pruned, split or forgotten.
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

	/* pruned (a partition revoked): another batch */
	assert_int_equal(batch_remove_if(&b, drop_odd, NULL, NULL), 4);
	assert_false(batch_memo_same(&memo, &b));

	/* split for its size: another batch */
	fill(&b, 10, 8, 0);
	batch_memo_remember(&memo, &b);
	assert_true(batch_memo_same(&memo, &b));
	assert_true(batch_split(&b, &pending) > 0);
	assert_false(batch_memo_same(&memo, &b));

	/* forgotten (an encoding that failed): nothing is the same */
	fill(&b, 10, 8, 0);
	batch_memo_remember(&memo, &b);
	batch_memo_forget(&memo);
	assert_false(batch_memo_same(&memo, &b));

	batch_memo_free(&memo);
	queue_free(&pending, NULL);
	batch_free(&b, NULL);
}

/*
 * test_other_topic_same_addresses
 *		Two topics fed in lockstep: a batch of the second topic with the
 *		first's partitions and offsets, its messages at the first batch's
 *		addresses (its handles, values, even the bytes of its topic's name),
 *		is another batch, and so is a batch whose topics differ from the
 *		second message on.  Sending the first batch's decoded values for it
 *		would acknowledge its own unsent.
 */
static void
test_other_topic_same_addresses(void **state)
{
	batch		a,
				b;
	batch_memo	memo = {0};
	char		name[32];
	batch_msg	m;

	(void) state;
	assert_int_equal(batch_init(&a, 100, 1000), 0);
	assert_int_equal(batch_init(&b, 100, 1000), 0);

	fill_topic(&a, "orders-eu", 10, 8, 0);
	batch_memo_remember(&memo, &a);
	assert_true(batch_memo_same(&memo, &a));
	fill_topic(&b, "orders-us", 10, 8, 0);
	assert_false(batch_memo_same(&memo, &b));

	/* one name's bytes, reused for the other topic's */
	snprintf(name, sizeof(name), "orders-eu");
	fill_topic(&a, name, 10, 8, 0);
	fill_topic(&b, name, 10, 8, 0);
	batch_memo_remember(&memo, &a);
	assert_true(batch_memo_same(&memo, &a));
	snprintf(name, sizeof(name), "orders-us");
	assert_false(batch_memo_same(&memo, &b));

	/* the same first message, then another topic's */
	fill_topic(&a, "orders-eu", 10, 1, 0);
	memset(&m, 0, sizeof(m));
	m.handle = &handles[1];
	m.topic = "orders-eu";
	m.offset = 11;
	m.value = &values[1];
	m.value_len = 1;
	batch_add(&a, &m, 0);
	fill_topic(&b, "orders-eu", 10, 1, 0);
	m.topic = "orders-us";
	batch_add(&b, &m, 0);
	batch_memo_remember(&memo, &a);
	assert_true(batch_memo_same(&memo, &a));
	assert_false(batch_memo_same(&memo, &b));

	batch_memo_free(&memo);
	batch_free(&a, NULL);
	batch_free(&b, NULL);
}

/*
 * test_acknowledged_batch_not_same
 *		Once its batch is over, the memo matches nothing, even a batch of
 *		the same messages at the same addresses: its messages acknowledged
 *		(batch_clear, as deliver.c does after the commit) or all revoked
 *		(batch_remove_if), then read again, as when a partition is sought
 *		back.  Only the retry of the batch itself is sent as it was.
 */
static void
test_acknowledged_batch_not_same(void **state)
{
	batch		b;
	batch_memo	memo = {0};

	(void) state;
	assert_int_equal(batch_init(&b, 100, 1000), 0);

	fill(&b, 10, 8, 0);
	batch_memo_remember(&memo, &b);
	assert_true(batch_memo_same(&memo, &b));
	batch_clear(&b, NULL);		/* committed and acknowledged */
	fill(&b, 10, 8, 0);
	assert_false(batch_memo_same(&memo, &b));

	batch_memo_remember(&memo, &b);
	assert_true(batch_memo_same(&memo, &b));
	assert_int_equal(batch_remove_if(&b, drop_all, NULL, NULL), 8);
	fill(&b, 10, 8, 0);
	assert_false(batch_memo_same(&memo, &b));

	batch_memo_free(&memo);
	batch_free(&b, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_batch_once),
		cmocka_unit_test(test_other_topic_same_addresses),
		cmocka_unit_test(test_acknowledged_batch_not_same),
	};

	return cmocka_run_group_tests_name("batch_memo", tests, NULL, NULL);
}
