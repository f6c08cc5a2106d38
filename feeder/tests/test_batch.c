/*-------------------------------------------------------------------------
 *
 * test_batch.c
 *	  Unit tests of batch.c: size and time limits, tombstones, the pending
 *	  queue and pruning, against a scripted source and a fake clock.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "batch.h"

/* A scripted source: message i becomes available at arrival[i] ms. */
typedef struct fake_source
{
	int64_t		now;
	int			n;
	int			next;
	int64_t		arrival[64];
	int			tombstone[64];
	int32_t		partition[64];
	int			stopping;
	int			polls;
	int			released;
} fake_source;

static int
fake_poll(void *arg, int timeout_ms, batch_msg *out)
{
	fake_source *f = arg;

	f->polls++;
	if (f->next < f->n && f->arrival[f->next] <= f->now + timeout_ms)
	{
		int			i = f->next++;

		if (f->arrival[i] > f->now)
			f->now = f->arrival[i];
		memset(out, 0, sizeof(*out));
		out->handle = f;
		out->topic = "orders";
		out->partition = f->partition[i];
		out->offset = i;
		out->value = f->tombstone[i] ? NULL : "{}";
		out->value_len = f->tombstone[i] ? 0 : 2;
		return 1;
	}
	f->now += timeout_ms;
	return 0;
}

static int64_t
fake_now(void *arg)
{
	return ((fake_source *) arg)->now;
}

static int
fake_stopping(void *arg)
{
	return ((fake_source *) arg)->stopping;
}

static fake_source fake;

static void
fake_release(void *handle)
{
	((fake_source *) handle)->released++;
}

static const batch_source src = {fake_poll, fake_now, fake_stopping, &fake};

static int
reset(void **state)
{
	(void) state;
	memset(&fake, 0, sizeof(fake));
	return 0;
}

/* The size limit closes a batch at once when messages are ready. */
static void
test_size_limit(void **state)
{
	batch		b;
	msg_queue	q;
	int			i;

	(void) state;
	fake.n = 10;
	batch_init(&b, 4, 100);
	queue_init(&q);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 4);
	assert_int_equal(fake.now, 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(b.msgs[i].offset, i);
	batch_clear(&b, fake_release);
	assert_int_equal(fake.released, 4);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 4);
	assert_int_equal(b.msgs[0].offset, 4);
	batch_clear(&b, NULL);
	/* the last two: the batch waits its time, then closes */
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 2);
	assert_true(fake.now >= 100);
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/*
 * The byte bound (issue 9, defect 5) closes a batch before it would pass
 * it; the message that did not fit starts the next batch, in order, and a
 * message larger than the bound goes alone.
 */
static void
test_byte_limit(void **state)
{
	batch		b;
	msg_queue	q;
	batch_msg	big;
	size_t		one;

	(void) state;
	fake.n = 5;
	batch_init(&b, 100, 100);
	queue_init(&q);
	memset(&big, 0, sizeof(big));
	big.topic = "orders";
	big.value = "{}";
	big.value_len = 2;
	one = batch_msg_bytes(&big);
	batch_set_max_bytes(&b, 2 * one);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 2);
	assert_int_equal(b.bytes, 2 * one);
	assert_int_equal(queue_length(&q), 1);	/* the third, held for the next */
	batch_clear(&b, NULL);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 2);
	assert_int_equal(b.msgs[0].offset, 2);
	assert_int_equal(b.msgs[1].offset, 3);
	batch_clear(&b, NULL);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 1);
	assert_int_equal(b.msgs[0].offset, 4);
	batch_clear(&b, NULL);

	/* a message larger than the bound alone, and not with the next */
	big.value_len = 10 * one;
	big.offset = 100;
	assert_int_equal(queue_push(&q, &big), 0);
	big.value_len = 2;
	big.offset = 101;
	assert_int_equal(queue_push(&q, &big), 0);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 1);
	assert_int_equal(b.msgs[0].offset, 100);
	batch_clear(&b, NULL);
	assert_int_equal(b.bytes, 0);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.msgs[0].offset, 101);
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/* The time limit counts from the first message. */
static void
test_time_limit(void **state)
{
	batch		b;
	msg_queue	q;

	(void) state;
	fake.n = 4;
	fake.arrival[0] = 1000;
	fake.arrival[1] = 1030;
	fake.arrival[2] = 1090;
	fake.arrival[3] = 1250;
	batch_init(&b, 500, 100);
	queue_init(&q);

	/* idle: one poll of at most BATCH_POLL_SLICE_MS, then back to caller */
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 0);
	assert_int_equal(fake.now, BATCH_POLL_SLICE_MS);

	while (b.count == 0)
		batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 3);
	assert_int_equal(b.first_ms, 1000);
	assert_true(fake.now >= 1100);
	assert_true(fake.now < 1250);
	assert_true(batch_expired(&b, fake.now));
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/* Once the time is up, what is immediately available is still taken. */
static void
test_drain_after_deadline(void **state)
{
	batch		b;
	msg_queue	q;

	(void) state;
	fake.n = 7;
	batch_init(&b, 5, 0);
	queue_init(&q);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 5);
	batch_clear(&b, NULL);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 2);
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/* Tombstones travel in the batch but are counted apart. */
static void
test_tombstones(void **state)
{
	batch		b;
	msg_queue	q;

	(void) state;
	fake.n = 5;
	fake.tombstone[1] = 1;
	fake.tombstone[4] = 1;
	batch_init(&b, 10, 10);
	queue_init(&q);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 5);
	assert_int_equal(b.ntombstones, 2);
	assert_int_equal(batch_db_count(&b), 3);
	assert_null(b.msgs[1].value);
	batch_clear(&b, NULL);
	assert_int_equal(b.ntombstones, 0);
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/* Held messages come first, in order, and count against the size. */
static void
test_pending_first(void **state)
{
	batch		b;
	msg_queue	q;
	batch_msg	m;
	int			i;

	(void) state;
	fake.n = 3;
	batch_init(&b, 4, 50);
	queue_init(&q);
	for (i = 0; i < 200; i++)
	{
		memset(&m, 0, sizeof(m));
		m.offset = 1000 + i;
		m.value = "x";
		assert_int_equal(queue_push(&q, &m), 0);
	}
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 4);
	assert_int_equal(b.msgs[0].offset, 1000);
	assert_int_equal(b.msgs[3].offset, 1003);
	assert_int_equal(queue_length(&q), 196);
	assert_int_equal(fake.polls, 0);
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/*
 * A batch that failed for its size is split: the first half stays, the
 * second half goes back in front of the held messages, in order, and
 * becomes the next batch; halving again ends at one message.
 */
static void
test_split(void **state)
{
	batch		b;
	msg_queue	q;
	batch_msg	m;
	int			i;

	(void) state;
	batch_init(&b, 8, 50);
	queue_init(&q);
	for (i = 0; i < 10; i++)
	{
		memset(&m, 0, sizeof(m));
		m.offset = 100 + i;
		m.value = i == 1 ? NULL : "xyz";
		m.value_len = i == 1 ? 0 : 3;
		assert_int_equal(queue_push(&q, &m), 0);
	}
	/* the queue's head has moved: the unshift reuses the room before it */
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 8);
	assert_int_equal(queue_length(&q), 2);

	assert_int_equal(batch_split(&b, &q), 4);
	assert_int_equal(b.count, 4);
	assert_int_equal(b.ntombstones, 1);
	assert_int_equal(b.bytes, 3 * batch_msg_bytes(&b.msgs[0]) + batch_msg_bytes(&b.msgs[1]));
	assert_int_equal(b.msgs[3].offset, 103);
	assert_int_equal(queue_length(&q), 6);
	for (i = 0; i < 6; i++)
	{
		assert_int_equal(queue_pop(&q, &m), 1);
		assert_int_equal(m.offset, 104 + i);
		/* put it back at the end: the order must survive */
		assert_int_equal(queue_push(&q, &m), 0);
	}

	assert_int_equal(batch_split(&b, &q), 2);
	assert_int_equal(batch_split(&b, &q), 1);
	assert_int_equal(b.count, 1);
	assert_int_equal(b.msgs[0].offset, 100);
	assert_int_equal(batch_split(&b, &q), 0);	/* one message: retried as is */
	assert_int_equal(b.count, 1);
	assert_int_equal(queue_length(&q), 9);
	for (i = 0; i < 9; i++)
	{
		assert_int_equal(queue_pop(&q, &m), 1);
		assert_int_equal(m.offset, 101 + i);
	}
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/* Unshifting into an empty queue, and past its capacity, keeps the order. */
static void
test_unshift_grows(void **state)
{
	msg_queue	q;
	batch_msg	msgs[100];
	batch_msg	m;
	int			i;

	(void) state;
	queue_init(&q);
	memset(msgs, 0, sizeof(msgs));
	for (i = 0; i < 100; i++)
		msgs[i].offset = i;
	memset(&m, 0, sizeof(m));
	m.offset = 1000;
	assert_int_equal(queue_push(&q, &m), 0);
	assert_int_equal(queue_unshift(&q, msgs, 100), 0);
	assert_int_equal(queue_length(&q), 101);
	for (i = 0; i < 100; i++)
	{
		assert_int_equal(queue_pop(&q, &m), 1);
		assert_int_equal(m.offset, i);
	}
	assert_int_equal(queue_pop(&q, &m), 1);
	assert_int_equal(m.offset, 1000);
	assert_int_equal(queue_pop(&q, &m), 0);
	queue_free(&q, NULL);
}

/* A stopping source ends the fill without waiting. */
static void
test_stopping(void **state)
{
	batch		b;
	msg_queue	q;

	(void) state;
	fake.n = 1;
	fake.stopping = 1;
	batch_init(&b, 4, 1000);
	queue_init(&q);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 0);
	assert_int_equal(fake.polls, 0);
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

static int
drop_partition_1(const batch_msg *m, void *arg)
{
	(void) arg;
	return m->partition == 1;
}

/* Pruning revoked partitions keeps the order and the tombstone count. */
static void
test_remove_if(void **state)
{
	batch		b;
	msg_queue	q;
	batch_msg	m;
	int			i;

	(void) state;
	fake.n = 6;
	for (i = 0; i < 6; i++)
		fake.partition[i] = i % 2;
	fake.tombstone[1] = 1;		/* partition 1 */
	fake.tombstone[2] = 1;		/* partition 0 */
	batch_init(&b, 10, 10);
	queue_init(&q);
	batch_fill(&b, &q, &src);
	assert_int_equal(b.count, 6);
	assert_int_equal(b.ntombstones, 2);
	assert_int_equal(batch_remove_if(&b, drop_partition_1, NULL, fake_release), 3);
	assert_int_equal(fake.released, 3);
	assert_int_equal(b.count, 3);
	assert_int_equal(b.ntombstones, 1);
	assert_int_equal(b.msgs[0].offset, 0);
	assert_int_equal(b.msgs[1].offset, 2);
	assert_int_equal(b.msgs[2].offset, 4);

	for (i = 0; i < 5; i++)
	{
		memset(&m, 0, sizeof(m));
		m.partition = i % 2;
		m.offset = i;
		m.handle = &fake;
		queue_push(&q, &m);
	}
	assert_true(queue_pop(&q, &m));
	assert_int_equal(queue_remove_if(&q, drop_partition_1, NULL, fake_release), 2);
	assert_int_equal(queue_length(&q), 2);
	assert_true(queue_pop(&q, &m));
	assert_int_equal(m.offset, 2);
	assert_true(queue_pop(&q, &m));
	assert_int_equal(m.offset, 4);
	assert_false(queue_pop(&q, &m));
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/*
 * Outbox topics: a message of another type (by its type header, byte for
 * byte) is sent without its value; one without a type header, of the
 * selected type, or a structured CloudEvent (type inside) goes whole.
 */
static void
test_sends_value(void **state)
{
	batch_msg	m;

	(void) state;
	memset(&m, 0, sizeof(m));
	m.value = "{}";
	m.value_len = 2;
	/* no selection: always */
	assert_true(batch_sends_value("debezium", NULL, &m));
	m.type = "OrderPaid";
	m.type_len = 9;
	assert_true(batch_sends_value("plain", NULL, &m));
	/* another type: not sent */
	assert_false(batch_sends_value("debezium", "OrderReceived", &m));
	/* the selected type, exactly */
	m.type = "OrderReceived";
	m.type_len = 13;
	assert_true(batch_sends_value("debezium", "OrderReceived", &m));
	/* a prefix or a longer value is another type */
	m.type_len = 5;
	assert_false(batch_sends_value("debezium", "OrderReceived", &m));
	m.type = "OrderReceivedV2";
	m.type_len = 15;
	assert_false(batch_sends_value("debezium", "OrderReceived", &m));
	/* case matters */
	m.type = "orderreceived";
	m.type_len = 13;
	assert_false(batch_sends_value("plain", "OrderReceived", &m));
	/* no type header: sent, the database rejects it naming the header */
	m.type = NULL;
	m.type_len = 0;
	assert_true(batch_sends_value("debezium", "OrderReceived", &m));
	/* CloudEvents binary: ce_type decides */
	m.type = "com.example.OrderPaid";
	m.type_len = strlen(m.type);
	m.content_type = "application/json";
	m.content_type_len = strlen(m.content_type);
	assert_false(batch_sends_value("cloudevents", "com.example.OrderReceived", &m));
	/* structured mode (any case): the type is inside, sent whole */
	m.content_type = "Application/CloudEvents+json; charset=UTF-8";
	m.content_type_len = strlen(m.content_type);
	assert_true(batch_sends_value("cloudevents", "com.example.OrderReceived", &m));
	/* a content-type announcing CloudEvents means nothing to debezium */
	assert_false(batch_sends_value("debezium", "com.example.OrderReceived", &m));
	/* header bytes counted in the batch's size */
	m.type_len = 100;
	m.content_type_len = 50;
	m.key_len = 0;
	m.topic = "t";
	assert_int_equal(batch_msg_bytes(&m), 2 + 100 + 50 + 1 + 40);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_size_limit, reset),
		cmocka_unit_test_setup(test_byte_limit, reset),
		cmocka_unit_test_setup(test_time_limit, reset),
		cmocka_unit_test_setup(test_drain_after_deadline, reset),
		cmocka_unit_test_setup(test_tombstones, reset),
		cmocka_unit_test_setup(test_pending_first, reset),
		cmocka_unit_test_setup(test_split, reset),
		cmocka_unit_test_setup(test_unshift_grows, reset),
		cmocka_unit_test_setup(test_stopping, reset),
		cmocka_unit_test_setup(test_remove_if, reset),
		cmocka_unit_test(test_sends_value),
	};

	return cmocka_run_group_tests_name("batch", tests, NULL, NULL);
}
