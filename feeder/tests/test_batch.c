/*-------------------------------------------------------------------------
 *
 * test_batch.c
 *	  Unit tests of batch.c: the batching rules of a lane (size, bytes and
 *	  time limits against a fake clock, what is held goes when the lane is
 *	  free, the backlog bound, the lane of a partition), tombstones, the
 *	  pending queue, splitting and pruning.
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

/* The handles of released messages are counted here. */
static int	released;

static void
fake_release(void *handle)
{
	(void) handle;
	released++;
}

static int
reset(void **state)
{
	(void) state;
	released = 0;
	return 0;
}

/*
 * feed
 *		Hold n messages of "orders" from offset first, partition by
 *		partition_of(i) (i % partitions), tombstones where tombstone_every
 *		divides i + 1 (0: none).
 */
static void
feed(msg_queue *q, int first, int n, int partitions, int tombstone_every)
{
	int			i;

	for (i = first; i < first + n; i++)
	{
		batch_msg	m;
		int			tomb = tombstone_every > 0 && (i + 1) % tombstone_every == 0;

		memset(&m, 0, sizeof(m));
		m.handle = &released;
		m.topic = "orders";
		m.partition = partitions > 0 ? i % partitions : 0;
		m.offset = i;
		m.value = tomb ? NULL : "{}";
		m.value_len = tomb ? 0 : 2;
		assert_int_equal(queue_push(q, &m), 0);
	}
}

/* The size limit: a full batch is due at once, the rest waits its time. */
static void
test_size_limit(void **state)
{
	batch		b;
	msg_queue	q;
	int			i;

	(void) state;
	batch_init(&b, 4, 100);
	queue_init(&q);
	feed(&q, 0, 10, 1, 0);
	assert_true(batch_take(&b, &q, 0));
	assert_int_equal(b.count, 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(b.msgs[i].offset, i);
	batch_clear(&b, fake_release);
	assert_int_equal(released, 4);
	assert_true(batch_take(&b, &q, 0));
	assert_int_equal(b.count, 4);
	assert_int_equal(b.msgs[0].offset, 4);
	batch_clear(&b, NULL);
	/* the last two: not due before wait_ms after the first of them */
	assert_false(batch_take(&b, &q, 0));
	assert_int_equal(b.count, 2);
	assert_false(batch_take(&b, &q, 99));
	assert_true(batch_take(&b, &q, 100));
	assert_int_equal(b.count, 2);
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/*
 * The byte bound closes a batch before it would pass
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
	batch_init(&b, 100, 100);
	queue_init(&q);
	memset(&big, 0, sizeof(big));
	big.topic = "orders";
	big.value = "{}";
	big.value_len = 2;
	one = batch_msg_bytes(&big);
	batch_set_max_bytes(&b, 2 * one);
	feed(&q, 0, 5, 1, 0);
	assert_true(batch_take(&b, &q, 0));	/* closed: due before its time */
	assert_int_equal(b.count, 2);
	assert_int_equal(b.bytes, 2 * one);
	assert_int_equal(queue_length(&q), 3);	/* the third, held for the next */
	batch_clear(&b, NULL);
	assert_true(batch_take(&b, &q, 0));
	assert_int_equal(b.count, 2);
	assert_int_equal(b.msgs[0].offset, 2);
	assert_int_equal(b.msgs[1].offset, 3);
	batch_clear(&b, NULL);
	assert_false(batch_take(&b, &q, 0));
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
	assert_true(batch_take(&b, &q, 0));
	assert_int_equal(b.count, 1);
	assert_int_equal(b.msgs[0].offset, 100);
	batch_clear(&b, NULL);
	assert_int_equal(b.bytes, 0);
	batch_take(&b, &q, 0);
	assert_int_equal(b.msgs[0].offset, 101);
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/* The time limit counts from the first message of the batch. */
static void
test_time_limit(void **state)
{
	batch		b;
	msg_queue	q;

	(void) state;
	batch_init(&b, 500, 100);
	queue_init(&q);
	assert_false(batch_take(&b, &q, 900));	/* nothing held: nothing due */
	assert_int_equal(b.count, 0);
	feed(&q, 0, 1, 1, 0);
	assert_false(batch_take(&b, &q, 1000));
	feed(&q, 1, 1, 1, 0);
	assert_false(batch_take(&b, &q, 1030));
	feed(&q, 2, 1, 1, 0);
	assert_false(batch_take(&b, &q, 1099));
	assert_int_equal(b.count, 3);
	assert_int_equal(b.first_ms, 1000);
	assert_true(batch_take(&b, &q, 1100));
	assert_true(batch_expired(&b, 1100));
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/*
 * With wait_ms 0 (the default) what is held goes as soon as the lane is
 * free; while a batch is in flight (the lane does not take), the next one
 * grows by itself, up to the size limit.
 */
static void
test_send_what_is_held(void **state)
{
	batch		b;
	msg_queue	q;

	(void) state;
	batch_init(&b, 5, 0);
	queue_init(&q);
	feed(&q, 0, 1, 1, 0);
	assert_true(batch_take(&b, &q, 0));
	assert_int_equal(b.count, 1);
	/* in flight: messages arrive meanwhile */
	feed(&q, 1, 7, 1, 0);
	batch_clear(&b, NULL);
	assert_true(batch_take(&b, &q, 1));
	assert_int_equal(b.count, 5);
	assert_int_equal(b.msgs[0].offset, 1);
	batch_clear(&b, NULL);
	assert_true(batch_take(&b, &q, 2));
	assert_int_equal(b.count, 2);
	assert_int_equal(b.msgs[1].offset, 7);
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/*
 * A lane is backlogged when it holds two whole batches, by count or by
 * bytes: consuming then waits for lanes, which bounds the memory held.
 */
static void
test_backlogged(void **state)
{
	batch		b;
	msg_queue	q;
	batch_msg	m;

	(void) state;
	batch_init(&b, 4, 0);
	queue_init(&q);
	assert_false(batch_backlogged(&b, &q));
	feed(&q, 0, 7, 1, 0);
	assert_false(batch_backlogged(&b, &q));
	feed(&q, 7, 1, 1, 0);
	assert_true(batch_backlogged(&b, &q));
	batch_take(&b, &q, 0);
	assert_false(batch_backlogged(&b, &q));
	batch_clear(&b, NULL);
	batch_take(&b, &q, 0);
	assert_int_equal(q.bytes, 0);

	/* by bytes: four messages of half the bound's size */
	memset(&m, 0, sizeof(m));
	m.topic = "orders";
	m.value = "{}";
	m.value_len = 1000;
	batch_set_max_bytes(&b, 2 * batch_msg_bytes(&m));
	assert_int_equal(queue_push(&q, &m), 0);
	assert_int_equal(queue_push(&q, &m), 0);
	assert_int_equal(queue_push(&q, &m), 0);
	assert_false(batch_backlogged(&b, &q));
	assert_int_equal(queue_push(&q, &m), 0);
	assert_true(batch_backlogged(&b, &q));
	assert_int_equal(q.bytes, 4 * batch_msg_bytes(&m));
	batch_free(&b, NULL);
	queue_free(&q, NULL);
}

/* The queue's byte count follows push, pop, unshift and removal. */
static int
drop_odd(const batch_msg *m, void *arg)
{
	(void) arg;
	return m->offset % 2 == 1;
}

static void
test_queue_bytes(void **state)
{
	msg_queue	q;
	batch_msg	m;
	batch_msg	back[2];
	size_t		one;

	(void) state;
	queue_init(&q);
	feed(&q, 0, 6, 1, 0);
	assert_true(queue_peek(&q, &m));
	one = batch_msg_bytes(&m);
	assert_int_equal(q.bytes, 6 * one);
	assert_true(queue_pop(&q, &back[0]));
	assert_true(queue_pop(&q, &back[1]));
	assert_int_equal(q.bytes, 4 * one);
	assert_int_equal(queue_unshift(&q, back, 2), 0);
	assert_int_equal(q.bytes, 6 * one);
	assert_int_equal(queue_remove_if(&q, drop_odd, NULL, NULL), 3);
	assert_int_equal(q.bytes, 3 * one);
	while (queue_pop(&q, &m))
		;
	assert_int_equal(q.bytes, 0);
	queue_free(&q, NULL);
}

/*
 * A partition always goes through the same lane (its batches commit in
 * order), partitions spread over the lanes, and one lane takes all.
 */
static void
test_lane_of(void **state)
{
	batch_msg	m;
	int			count[3] = {0, 0, 0};
	int			slot;

	(void) state;
	memset(&m, 0, sizeof(m));
	for (slot = 0; slot < 12; slot++)
	{
		int			lane;

		m.slot = slot;
		lane = batch_lane_of(&m, 3);
		assert_in_range(lane, 0, 2);
		count[lane]++;
		m.generation++;			/* a new assignment does not move it */
		m.offset += 1000;
		assert_int_equal(batch_lane_of(&m, 3), lane);
		assert_int_equal(batch_lane_of(&m, 1), 0);
		/* the rule the loop uses to open only lanes with partitions */
		assert_int_equal(batch_lane_of_slot(slot, 3), lane);
	}
	assert_int_equal(count[0], 4);
	assert_int_equal(count[1], 4);
	assert_int_equal(count[2], 4);
	m.slot = -1;				/* no slot (out of memory): the first lane */
	assert_int_equal(batch_lane_of(&m, 3), 0);
	assert_int_equal(batch_lane_of_slot(-1, 3), 0);
}

/* Tombstones travel in the batch but are counted apart. */
static void
test_tombstones(void **state)
{
	batch		b;
	msg_queue	q;

	(void) state;
	batch_init(&b, 10, 10);
	queue_init(&q);
	feed(&q, 0, 5, 1, 0);
	q.items[q.head + 1].value = NULL;
	q.items[q.head + 1].value_len = 0;
	q.items[q.head + 4].value = NULL;
	q.items[q.head + 4].value_len = 0;
	batch_take(&b, &q, 0);
	assert_int_equal(b.count, 5);
	assert_int_equal(b.ntombstones, 2);
	assert_int_equal(batch_db_count(&b), 3);
	assert_null(b.msgs[1].value);
	batch_clear(&b, NULL);
	assert_int_equal(b.ntombstones, 0);
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
	batch_take(&b, &q, 0);
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

/*
 * A batch whose decoded values would pass the bound of a batch commits
 * only its first messages (db_run_batch): the others go back in front of
 * the held messages, in order, and become the next batch, each message
 * in exactly one of them.  Cutting at the batch's count, or past it,
 * keeps the batch whole.
 */
static void
test_cut(void **state)
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
		m.value = i == 5 ? NULL : "xyz";
		m.value_len = i == 5 ? 0 : 3;
		assert_int_equal(queue_push(&q, &m), 0);
	}
	batch_take(&b, &q, 0);
	assert_int_equal(b.count, 8);
	assert_int_equal(batch_cut(&b, &q, 8), 0);
	assert_int_equal(batch_cut(&b, &q, 9), 0);
	assert_int_equal(b.count, 8);

	assert_int_equal(batch_cut(&b, &q, 3), 5);
	assert_int_equal(b.count, 3);
	assert_int_equal(b.ntombstones, 0);
	assert_int_equal(b.bytes, 3 * batch_msg_bytes(&b.msgs[0]));
	assert_int_equal(b.msgs[2].offset, 102);
	assert_int_equal(queue_length(&q), 7);
	batch_clear(&b, NULL);
	batch_take(&b, &q, 0);		/* the next batch: from the first held back */
	assert_int_equal(b.count, 7);
	assert_int_equal(b.ntombstones, 1);
	for (i = 0; i < 7; i++)
		assert_int_equal(b.msgs[i].offset, 103 + i);
	assert_int_equal(batch_cut(&b, &q, 1), 6);
	assert_int_equal(b.count, 1);
	assert_int_equal(b.msgs[0].offset, 103);
	for (i = 0; i < 6; i++)
	{
		assert_int_equal(queue_pop(&q, &m), 1);
		assert_int_equal(m.offset, 104 + i);
	}
	assert_int_equal(queue_length(&q), 0);
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

static int
drop_partition_1(const batch_msg *m, void *arg)
{
	(void) arg;
	return m->partition == 1;
}

/*
 * A partition that waits for its schema: its messages move out of the
 * held ones to a waiting queue, in order, the others keep theirs; later
 * they go back in front of the held ones, in order, none released.
 */
static void
test_move_waiting(void **state)
{
	msg_queue	pending,
				waiting;
	slot_set	waits = {0};
	batch_msg	m;
	static const int64_t order[8] = {1, 3, 5, 7, 0, 2, 4, 6};
	int			i;

	(void) state;
	queue_init(&pending);
	queue_init(&waiting);
	for (i = 0; i < 8; i++)
	{
		memset(&m, 0, sizeof(m));
		m.partition = m.slot = i % 2;
		m.offset = i;
		m.handle = &released;
		queue_push(&pending, &m);
	}
	assert_true(queue_pop(&pending, &m));	/* head > 0 */
	queue_unshift(&pending, &m, 1);
	assert_int_equal(slot_set_add(&waits, 1), 0);
	assert_int_equal(slot_set_add(&waits, 1), 0);
	assert_int_equal(waits.n, 1);
	assert_int_equal(queue_move_if(&pending, &waiting, slot_set_has_msg, &waits), 4);
	assert_int_equal(queue_length(&pending), 4);
	assert_int_equal(queue_length(&waiting), 4);
	assert_int_equal(queue_move_front(&waiting, &pending), 0);
	assert_int_equal(queue_length(&waiting), 0);
	assert_int_equal(waiting.bytes, 0);
	for (i = 0; i < 8; i++)
	{
		assert_true(queue_pop(&pending, &m));
		assert_int_equal(m.offset, order[i]);
	}
	assert_int_equal(pending.bytes, 0);
	assert_int_equal(released, 0);
	slot_set_free(&waits);
	queue_free(&pending, NULL);
	queue_free(&waiting, NULL);
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
	batch_init(&b, 10, 10);
	queue_init(&q);
	feed(&q, 0, 6, 2, 0);
	q.items[q.head + 1].value = NULL;	/* partition 1 */
	q.items[q.head + 2].value = NULL;	/* partition 0 */
	batch_take(&b, &q, 0);
	assert_int_equal(b.count, 6);
	assert_int_equal(b.ntombstones, 2);
	assert_int_equal(batch_remove_if(&b, drop_partition_1, NULL, fake_release), 3);
	assert_int_equal(released, 3);
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
		m.handle = &released;
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

/* The table of cases both sides test (see the file's header). */
#define CLOUDEVENTS_CASES "../test/cases/cloudevents-content-types.txt"

/*
 * unescape_case
 *		A case's value as bytes: \t is a tab, \s a space.
 */
static size_t
unescape_case(const char *in, char *out)
{
	size_t		n = 0;

	while (*in && *in != '\n')
	{
		if (in[0] == '\\' && (in[1] == 't' || in[1] == 's'))
		{
			out[n++] = in[1] == 't' ? '\t' : ' ';
			in += 2;
		}
		else
			out[n++] = *in++;
	}
	out[n] = '\0';
	return n;
}

/*
 * test_cloudevents_cases
 *		Every content-type of the shared table of cases: a structured one
 *		sends a message whose ce_type header names another type (the type
 *		inside the value decides, in the database), a binary one leaves it
 *		behind (the extension opens " application/cloudevents+json" as
 *		structured: the feeder must not skip it).
 */
static void
test_cloudevents_cases(void **state)
{
	FILE	   *f = fopen(CLOUDEVENTS_CASES, "r");
	char		line[512],
				value[512];
	int			cases = 0;
	batch_msg	m;

	(void) state;
	assert_non_null(f);
	memset(&m, 0, sizeof(m));
	m.value = "{}";
	m.value_len = 2;
	m.type = "com.example.OrderPaid";
	m.type_len = strlen(m.type);
	while (fgets(line, sizeof(line), f))
	{
		char	   *tab;
		int			structured;

		line[strcspn(line, "\n")] = '\0';
		tab = strchr(line, '\t');

		if (line[0] == '#' || tab == NULL)
			continue;
		*tab = '\0';
		structured = strcmp(line, "structured") == 0;
		assert_true(structured || strcmp(line, "binary") == 0);
		m.content_type = value;
		m.content_type_len = unescape_case(tab + 1, value);
		if (batch_sends_value("cloudevents", "com.example.OrderReceived", &m) != structured)
			fail_msg("content-type \"%s\": expected %s", tab + 1, line);
		cases++;
	}
	fclose(f);
	assert_true(cases >= 10);
}

/*
 * The batch's partitions' high watermarks: one entry per
 * partition, a later note replacing an earlier one; cleared with the batch.
 */
static void
test_note_watermark(void **state)
{
	batch		b;
	int			i;

	(void) state;
	batch_init(&b, 4, 0);
	batch_note_watermark(&b, "orders", 0, 10);
	batch_note_watermark(&b, "orders", 1, -1);
	batch_note_watermark(&b, "refunds", 0, 7);
	batch_note_watermark(&b, "orders", 0, 12);
	assert_int_equal(b.nwatermarks, 3);
	assert_string_equal(b.watermarks[0].topic, "orders");
	assert_int_equal(b.watermarks[0].partition, 0);
	assert_int_equal(b.watermarks[0].high, 12);
	assert_int_equal(b.watermarks[1].high, -1);
	assert_string_equal(b.watermarks[2].topic, "refunds");
	for (i = 0; i < 20; i++)
		batch_note_watermark(&b, "many", i, i);
	assert_int_equal(b.nwatermarks, 23);
	assert_int_equal(b.watermarks[22].high, 19);
	batch_clear(&b, NULL);
	assert_int_equal(b.nwatermarks, 0);
	batch_free(&b, NULL);
	assert_null(b.watermarks);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_size_limit, reset),
		cmocka_unit_test_setup(test_note_watermark, reset),
		cmocka_unit_test_setup(test_byte_limit, reset),
		cmocka_unit_test_setup(test_time_limit, reset),
		cmocka_unit_test_setup(test_send_what_is_held, reset),
		cmocka_unit_test_setup(test_backlogged, reset),
		cmocka_unit_test_setup(test_queue_bytes, reset),
		cmocka_unit_test_setup(test_lane_of, reset),
		cmocka_unit_test_setup(test_cloudevents_cases, reset),
		cmocka_unit_test_setup(test_tombstones, reset),
		cmocka_unit_test_setup(test_split, reset),
		cmocka_unit_test_setup(test_cut, reset),
		cmocka_unit_test_setup(test_unshift_grows, reset),
		cmocka_unit_test_setup(test_remove_if, reset),
		cmocka_unit_test_setup(test_move_waiting, reset),
		cmocka_unit_test(test_sends_value),
	};

	return cmocka_run_group_tests_name("batch", tests, NULL, NULL);
}
