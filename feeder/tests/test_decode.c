/*-------------------------------------------------------------------------
 *
 * test_decode.c
 *	  Unit tests of decode.c: the bound of a batch's decoded bytes (the
 *	  first message always goes, the one that would pass the bound starts
 *	  the next batch), a decode out of memory retried before the message
 *	  is quarantined, a registry's failure with the flags to check, and the
 *	  batch decoded on its lane into the arrays db_batch.c sends: one element per
 *	  message, a retry sent as decoded unless the session's text form
 *	  changed; a message whose schema id is unknown yet waits with its
 *	  partition's later messages, the others are sent.  confluent_decode
 *	  and the allocator's out-of-memory flag are
 *	  stand-ins programmed by each test.
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

#include "avro_alloc.h"
#include "decode.h"

/* What the stand-in confluent_decode answers next, and its calls. */
static confluent_status next_status;
static size_t next_json_len;
static int	next_oom;
static const char *next_reason = "bad value";
static int	decode_calls;

/*
 * confluent_decode
 *		Stand-in: next_json_len bytes of JSON, schema id 7, and next_status;
 *		the value "bad" is rejected with next_reason whatever next_status.
 */
confluent_status
confluent_decode(registry *r, const void *value, size_t len,
				 const void *id_header, size_t id_header_len,
				 avro_json_buf *out, int32_t *id, int *has_id,
				 char *reason, size_t reasonlen)
{
	size_t		i;

	(void) r;
	(void) id_header;
	(void) id_header_len;
	decode_calls++;
	*id = 7;
	*has_id = 1;
	if (len == 3 && memcmp(value, "bad", 3) == 0)
	{
		snprintf(reason, reasonlen, "%s", next_reason);
		return CONFLUENT_REJECTED;
	}
	if (len == 4 && memcmp(value, "wait", 4) == 0)
	{
		snprintf(reason, reasonlen, "schema id 7 is unknown to the Schema Registry yet");
		return CONFLUENT_WAIT;
	}
	for (i = 0; i < next_json_len; i++)
		avro_json_buf_append(out, "x", 1);
	snprintf(reason, reasonlen, "%s", next_status == CONFLUENT_DECODED ? "" : next_reason);
	return next_status;
}

/*
 * confluent_header_guid
 *		Stand-in: no header names a GUID.
 */
const unsigned char *
confluent_header_guid(const void *header, size_t len)
{
	(void) header;
	(void) len;
	return NULL;
}

void
avro_alloc_oom_clear(void)
{
}

int
avro_alloc_oom(void)
{
	return next_oom;
}

void
avro_json_buf_reset(avro_json_buf *buf)
{
	buf->len = 0;
}

void
avro_json_buf_append(avro_json_buf *buf, const void *data, size_t len)
{
	if (buf->len + len + 1 > buf->cap)
	{
		buf->cap = (buf->len + len + 1) * 2;
		buf->data = realloc(buf->data, buf->cap);
		assert_non_null(buf->data);
	}
	memcpy(buf->data + buf->len, data, len);
	buf->len += len;
	buf->data[buf->len] = '\0';
}

void
avro_json_buf_free(avro_json_buf *buf)
{
	free(buf->data);
	memset(buf, 0, sizeof(*buf));
}

/*
 * msg
 *		A made-up message of partition 0 at offset.
 */
static batch_msg
msg(int64_t offset)
{
	batch_msg	m;

	memset(&m, 0, sizeof(m));
	m.topic = "orders";
	m.offset = offset;
	m.value = "\0\0\0\0\7";
	m.value_len = 5;
	return m;
}

/*
 * The decoded bytes of a batch stay within 4 times its byte bound: the
 * message that would pass them is cut (1), unless it is the first.
 */
static void
test_batch_bound(void **state)
{
	decoder		d;
	decoded_value v;
	db_error	err;
	batch_msg	m = msg(0);

	(void) state;
	next_reason = "bad value";
	memset(&err, 0, sizeof(err));
	assert_int_equal(decoder_init(&d, NULL, NULL, NULL), 0);
	decoder_begin_batch(&d, 100);	/* 400 bytes of JSON */
	next_status = CONFLUENT_DECODED;
	next_oom = 0;
	next_json_len = 300;
	assert_int_equal(decoder_decode(&d, &m, 1, &v, &err), 0);
	assert_non_null(v.json);
	assert_int_equal(v.json_len, 300);
	assert_true(v.has_id);
	assert_int_equal(v.id, 7);
	assert_false(v.rejected);
	next_json_len = 100;
	assert_int_equal(decoder_decode(&d, &m, 0, &v, &err), 0);
	next_json_len = 1;
	assert_int_equal(decoder_decode(&d, &m, 0, &v, &err), 1);
	/* the first message of a batch always goes */
	decoder_begin_batch(&d, 100);
	next_json_len = 1000;
	assert_int_equal(decoder_decode(&d, &m, 1, &v, &err), 0);
	assert_int_equal(decoder_decode(&d, &m, 0, &v, &err), 1);
	/* a rejected value counts nothing and is never cut */
	next_status = CONFLUENT_REJECTED;
	assert_int_equal(decoder_decode(&d, &m, 0, &v, &err), 0);
	assert_null(v.json);
	assert_true(v.rejected);
	assert_string_equal(v.reason, "bad value");
	decoder_free(&d);
}

/*
 * A decode out of memory retries the batch (transient, step decode) four
 * times for one message; the fifth time the message is quarantined, its
 * reason saying so.  Another message starts the count again, and so does
 * another topic's message at the same partition and offset.
 */
static void
test_out_of_memory(void **state)
{
	decoder		d;
	decoded_value v;
	db_error	err;
	batch_msg	m = msg(41);
	batch_msg	other = msg(42);
	batch_msg	twin = msg(41);
	int			i;

	(void) state;
	twin.topic = "orders-us";
	next_reason = "bad value";
	assert_int_equal(decoder_init(&d, NULL, NULL, NULL), 0);
	decoder_begin_batch(&d, 100);
	next_status = CONFLUENT_REJECTED;
	next_oom = 1;
	next_json_len = 0;

	/*
	 * two attempts at m, then one at another topic's message at m's
	 * partition and offset (its first, not m's third), then one at another
	 * message: m counts again
	 */
	assert_int_equal(decoder_decode(&d, &m, 1, &v, &err), -1);
	assert_int_equal(decoder_decode(&d, &m, 1, &v, &err), -1);
	memset(&err, 0, sizeof(err));
	assert_int_equal(decoder_decode(&d, &twin, 1, &v, &err), -1);
	assert_string_equal(err.message,
						"out of memory while decoding orders-us [0] @41 (attempt 1 of 5, then it is quarantined): bad value");
	assert_int_equal(decoder_decode(&d, &other, 1, &v, &err), -1);
	for (i = 1; i < 5; i++)
	{
		char		expect[128];

		memset(&err, 0, sizeof(err));
		assert_int_equal(decoder_decode(&d, &m, 1, &v, &err), -1);
		assert_int_equal(err.cls, DB_ERR_TRANSIENT);
		assert_string_equal(err.step, "decode");
		snprintf(expect, sizeof(expect),
				 "out of memory while decoding orders [0] @41 (attempt %d of 5, then it is quarantined): bad value", i);
		assert_string_equal(err.message, expect);
	}
	assert_int_equal(decoder_decode(&d, &m, 1, &v, &err), 0);
	assert_true(v.rejected);
	assert_string_equal(v.reason, "bad value (out of memory in 5 attempts)");
	decoder_free(&d);
}

/*
 * A registry that fails stops the batch: transient, or fatal with a hint
 * naming the flags to check.
 */
static void
test_registry_failure(void **state)
{
	decoder		d;
	decoded_value v;
	db_error	err;
	batch_msg	m = msg(0);

	(void) state;
	next_reason = "bad value";
	assert_int_equal(decoder_init(&d, NULL, NULL, NULL), 0);
	decoder_begin_batch(&d, 100);
	next_oom = 0;
	next_status = CONFLUENT_TRANSIENT;
	memset(&err, 0, sizeof(err));
	assert_int_equal(decoder_decode(&d, &m, 1, &v, &err), -1);
	assert_int_equal(err.cls, DB_ERR_TRANSIENT);
	assert_string_equal(err.step, "schema_registry");
	assert_string_equal(err.hint, "");
	next_status = CONFLUENT_FATAL;
	memset(&err, 0, sizeof(err));
	assert_int_equal(decoder_decode(&d, &m, 1, &v, &err), -1);
	assert_int_equal(err.cls, DB_ERR_FATAL);
	assert_string_equal(err.message, "bad value");
	assert_non_null(strstr(err.hint, "--schema-registry-credentials"));
	decoder_free(&d);
}

/*
 * element
 *		Element i of a finished binary array: its bytes and *len, or NULL
 *		for a NULL element.
 */
static const char *
element(const pgarray *a, int i, int *len)
{
	const unsigned char *p = (const unsigned char *) a->data + PGARRAY_HEADER_LEN;
	int			k;

	assert_true((uint32_t) i < a->nelems);
	for (k = 0;; k++)
	{
		int32_t		n = (int32_t) (((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) |
								   ((uint32_t) p[2] << 8) | (uint32_t) p[3]);

		p += 4;
		if (k == i)
		{
			*len = n;
			return n < 0 ? NULL : (const char *) p;
		}
		if (n > 0)
			p += n;
	}
}

/*
 * The batch's arrays: one element per message; a decoded value's JSON and
 * schema id; a rejected one's reason (valid UTF-8 as it came); a
 * tombstone and a value of another event type (not sent) NULLs, and not
 * decoded.
 */
static void
test_build_arrays(void **state)
{
	decoder		d;
	db_error	err;
	batch		b;
	batch_msg	m;
	const char *e;
	int			len,
				resent;

	(void) state;
	memset(&err, 0, sizeof(err));
	assert_int_equal(batch_init(&b, 10, 1000), 0);
	batch_set_max_bytes(&b, 1000);
	assert_int_equal(decoder_init(&d, NULL, "plain", "OrderReceived"), 0);
	m = msg(0);
	batch_add(&b, &m, 0);		/* decoded */
	m = msg(1);
	m.value = NULL;
	m.value_len = 0;
	batch_add(&b, &m, 0);		/* a tombstone */
	m = msg(2);
	m.value = "bad";
	m.value_len = 3;
	batch_add(&b, &m, 0);		/* rejected */
	m = msg(3);
	m.type = "OrderCancelled";
	m.type_len = strlen(m.type);
	batch_add(&b, &m, 0);		/* another type: not sent */
	next_oom = 0;
	next_status = CONFLUENT_DECODED;
	next_json_len = 3;
	next_reason = "bad v\xc3\xa4lue";
	decode_calls = 0;

	assert_int_equal(decoder_build(&d, &b, 0, &resent, &err), 4);
	assert_false(resent);
	assert_int_equal(decode_calls, 2);
	assert_int_equal(d.arrays[0].nelems, 4);
	assert_int_equal(d.arrays[3].nelems, 4);
	e = element(&d.arrays[0], 0, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(e, "xxx", 3);
	e = element(&d.arrays[1], 0, &len);
	assert_int_equal(len, 4);
	assert_memory_equal(e, "\0\0\0\7", 4);
	assert_null(element(&d.arrays[2], 0, &len));
	assert_null(element(&d.arrays[0], 1, &len));
	assert_null(element(&d.arrays[1], 1, &len));
	assert_null(element(&d.arrays[2], 1, &len));
	assert_null(element(&d.arrays[3], 1, &len));
	/* the rejected one: no JSON, its schema id and reason */
	assert_null(element(&d.arrays[0], 2, &len));
	assert_non_null(element(&d.arrays[1], 2, &len));
	e = element(&d.arrays[2], 2, &len);
	assert_int_equal(len, (int) strlen("bad v\xc3\xa4lue"));
	assert_memory_equal(e, "bad v\xc3\xa4lue", len);
	/* another type: NULLs */
	assert_null(element(&d.arrays[0], 3, &len));
	assert_null(element(&d.arrays[1], 3, &len));
	assert_null(element(&d.arrays[2], 3, &len));
	assert_null(element(&d.arrays[3], 3, &len));
	decoder_free(&d);
	batch_free(&b, NULL);
}

/*
 * decode_one_rejected
 *		A batch of one message whose value is rejected with next_reason.
 */
static void
decode_one_rejected(batch *b)
{
	batch_msg	m = msg(5);

	m.value = "bad";
	m.value_len = 3;
	assert_int_equal(batch_init(b, 10, 1000), 0);
	batch_set_max_bytes(b, 1000);
	batch_add(b, &m, 0);
	next_oom = 0;
	next_reason = "bad v\xc3\xa4lue \xff";
	decode_calls = 0;
}

/*
 * A batch retried unchanged is sent as decoded (not decoded again) while
 * the session takes the same texts; once it takes ASCII only (a database
 * of another encoding, or db_go_ascii after the server refused a text),
 * the retry is decoded anew, its reason in ASCII.  Reasons are valid
 * UTF-8 always.
 */
static void
test_build_resent_until_ascii(void **state)
{
	decoder		d;
	db_error	err;
	batch		b;
	const char *e;
	int			len,
				resent;

	(void) state;
	memset(&err, 0, sizeof(err));
	decode_one_rejected(&b);
	assert_int_equal(decoder_init(&d, NULL, NULL, NULL), 0);
	assert_int_equal(decoder_build(&d, &b, 0, &resent, &err), 1);
	assert_false(resent);
	assert_int_equal(decode_calls, 1);
	e = element(&d.arrays[2], 0, &len);
	assert_int_equal(len, (int) strlen("bad v\xc3\xa4lue ?"));
	assert_memory_equal(e, "bad v\xc3\xa4lue ?", len);

	/* the retry, same text form: as decoded */
	assert_int_equal(decoder_build(&d, &b, 0, &resent, &err), 1);
	assert_true(resent);
	assert_int_equal(decode_calls, 1);

	/* the session now takes ASCII only: decoded again, reason in ASCII */
	assert_int_equal(decoder_build(&d, &b, 1, &resent, &err), 1);
	assert_false(resent);
	assert_int_equal(decode_calls, 2);
	e = element(&d.arrays[2], 0, &len);
	assert_int_equal(len, (int) strlen("bad v?lue ?"));
	assert_memory_equal(e, "bad v?lue ?", len);
	assert_int_equal(decoder_build(&d, &b, 1, &resent, &err), 1);
	assert_true(resent);
	assert_int_equal(decode_calls, 2);
	decoder_free(&d);
	batch_free(&b, NULL);
}

/*
 * A batch whose decoded JSON passes its bound holds its first messages
 * only, and is not remembered (its retry is another batch); a registry
 * that fails leaves nothing remembered either.
 */
static void
test_build_cut_and_failure(void **state)
{
	decoder		d;
	db_error	err;
	batch		b;
	batch_msg	m;
	int			i,
				resent;

	(void) state;
	memset(&err, 0, sizeof(err));
	assert_int_equal(batch_init(&b, 10, 1000), 0);
	batch_set_max_bytes(&b, 100);	/* 400 bytes of JSON */
	for (i = 0; i < 3; i++)
	{
		m = msg(i);
		batch_add(&b, &m, 0);
	}
	assert_int_equal(decoder_init(&d, NULL, NULL, NULL), 0);
	next_oom = 0;
	next_status = CONFLUENT_DECODED;
	next_json_len = 150;
	decode_calls = 0;
	assert_int_equal(decoder_build(&d, &b, 0, &resent, &err), 2);
	assert_int_equal(d.arrays[0].nelems, 2);
	assert_int_equal(decode_calls, 3);
	assert_int_equal(decoder_build(&d, &b, 0, &resent, &err), 2);
	assert_false(resent);
	assert_int_equal(decode_calls, 6);

	next_json_len = 10;
	next_status = CONFLUENT_TRANSIENT;
	assert_int_equal(decoder_build(&d, &b, 0, &resent, &err), -1);
	assert_int_equal(err.cls, DB_ERR_TRANSIENT);
	assert_string_equal(err.step, "schema_registry");
	next_status = CONFLUENT_DECODED;
	assert_int_equal(decoder_build(&d, &b, 0, &resent, &err), 3);
	assert_false(resent);
	assert_int_equal(decoder_build(&d, &b, 0, &resent, &err), 3);
	assert_true(resent);
	decoder_free(&d);
	batch_free(&b, NULL);
}

/*
 * A message whose schema id is unknown yet, within its grace (orders [0]
 * @1): it and the later messages of its partition are set aside at the
 * end of the batch, in order, and the other partition's messages are all
 * sent, in order (a registry's grace once failed the whole batch, every
 * partition waiting).  A batch of the waiting partition alone sends
 * nothing.
 */
static void
test_build_partition_waits(void **state)
{
	decoder		d;
	db_error	err;
	batch		b;
	batch_msg	m;
	static const int partitions[6] = {0, 1, 0, 1, 0, 1};
	static const int64_t offsets[6] = {0, 0, 1, 1, 2, 2};
	static const int sent_p[6] = {0, 1, 1, 1, 0, 0};
	static const int64_t sent_o[6] = {0, 0, 1, 2, 1, 2};
	int			i,
				resent;

	(void) state;
	memset(&err, 0, sizeof(err));
	assert_int_equal(batch_init(&b, 10, 1000), 0);
	for (i = 0; i < 6; i++)
	{
		m = msg(offsets[i]);
		m.partition = partitions[i];
		m.slot = partitions[i];
		if (partitions[i] == 0 && offsets[i] == 1)
		{
			m.value = "wait";
			m.value_len = 4;
		}
		batch_add(&b, &m, 0);
	}
	assert_int_equal(decoder_init(&d, NULL, NULL, NULL), 0);
	next_oom = 0;
	next_status = CONFLUENT_DECODED;
	next_json_len = 10;
	assert_int_equal(decoder_build(&d, &b, 0, &resent, &err), 4);
	assert_int_equal(d.arrays[0].nelems, 4);
	assert_int_equal(d.waits.n, 1);
	assert_int_equal(d.waits.slots[0], 0);
	assert_string_equal(d.wait_at, "orders [0] @1");
	assert_non_null(strstr(d.wait_reason, "unknown to the Schema Registry yet"));
	assert_int_equal(b.count, 6);
	for (i = 0; i < 6; i++)
	{
		assert_int_equal(b.msgs[i].partition, sent_p[i]);
		assert_int_equal(b.msgs[i].offset, sent_o[i]);
	}

	/* the waiting partition alone: nothing sent */
	batch_clear(&b, NULL);
	for (i = 0; i < 2; i++)
	{
		m = msg(i + 1);
		if (i == 0)
		{
			m.value = "wait";
			m.value_len = 4;
		}
		batch_add(&b, &m, 0);
	}
	assert_int_equal(decoder_build(&d, &b, 0, &resent, &err), 0);
	assert_int_equal(d.waits.n, 1);
	assert_int_equal(b.msgs[0].offset, 1);
	assert_int_equal(b.msgs[1].offset, 2);
	decoder_free(&d);
	batch_free(&b, NULL);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_bound),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_registry_failure),
		cmocka_unit_test(test_build_arrays),
		cmocka_unit_test(test_build_resent_until_ascii),
		cmocka_unit_test(test_build_cut_and_failure),
		cmocka_unit_test(test_build_partition_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
