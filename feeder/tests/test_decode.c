/*-------------------------------------------------------------------------
 *
 * test_decode.c
 *	  Unit tests of decode.c: the bound of a batch's decoded bytes (the
 *	  first message always goes, the one that would pass the bound starts
 *	  the next batch), a decode out of memory retried before the message
 *	  is quarantined, and a registry's failure with the flags to check.
 *	  confluent_decode and the allocator's out-of-memory flag are stand-ins
 *	  programmed by each test.
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

/* What the stand-in confluent_decode answers next. */
static confluent_status next_status;
static size_t next_json_len;
static int	next_oom;

/*
 * confluent_decode
 *		Stand-in: next_json_len bytes of JSON, schema id 7, and next_status.
 */
confluent_status
confluent_decode(registry *r, const void *value, size_t len,
				 const void *id_header, size_t id_header_len,
				 avro_json_buf *out, int32_t *id, int *has_id,
				 char *reason, size_t reasonlen)
{
	size_t		i;

	(void) r;
	(void) value;
	(void) len;
	(void) id_header;
	(void) id_header_len;
	for (i = 0; i < next_json_len; i++)
		avro_json_buf_append(out, "x", 1);
	*id = 7;
	*has_id = 1;
	snprintf(reason, reasonlen, "%s", next_status == CONFLUENT_DECODED ? "" : "bad value");
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
	memset(&err, 0, sizeof(err));
	decoder_init(&d, NULL);
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
 * reason saying so.  Another message starts the count again.
 */
static void
test_out_of_memory(void **state)
{
	decoder		d;
	decoded_value v;
	db_error	err;
	batch_msg	m = msg(41);
	batch_msg	other = msg(42);
	int			i;

	(void) state;
	decoder_init(&d, NULL);
	decoder_begin_batch(&d, 100);
	next_status = CONFLUENT_REJECTED;
	next_oom = 1;
	next_json_len = 0;
	/* two attempts at m, then one at another message: m counts again */
	assert_int_equal(decoder_decode(&d, &m, 1, &v, &err), -1);
	assert_int_equal(decoder_decode(&d, &m, 1, &v, &err), -1);
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
	decoder_init(&d, NULL);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch_bound),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_registry_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
