/*-------------------------------------------------------------------------
 *
 * test_decode_oom.c
 *	  Unit tests of avro_alloc.c's out-of-memory flag: a decode that fails
 *	  because the system's memory ran out is told from one refused by the
 *	  bound a value's size sets (the first is retried, the second
 *	  quarantined: db.c, registry.c).
 *
 * realloc is wrapped (-Wl,--wrap=realloc): while fail_from is set, every
 * allocation of that many bytes or more fails as if memory ran out.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "avro_alloc.h"
#include "avro_json.h"

extern void *__real_realloc(void *ptr, size_t size);
extern void *__wrap_realloc(void *ptr, size_t size);

static size_t fail_from;		/* 0: never */

void *
__wrap_realloc(void *ptr, size_t size)
{
	if (fail_from != 0 && size >= fail_from)
		return NULL;
	return __real_realloc(ptr, size);
}

/*
 * A record of one bytes field: its value is a bytes value, length and
 * bytes (a value whose whole schema is "bytes" has no length: avro_json.c).
 */
#define BYTES_RECORD "{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"b\",\"type\":\"bytes\"}]}"

/*
 * bytes_value
 *		An Avro "bytes" value of n bytes (zigzag varint length, then the
 *		bytes); malloc'ed, its length in *len.
 */
static unsigned char *
bytes_value(size_t n, size_t *len)
{
	unsigned char *v = malloc(n + 10);
	uint64_t	z = (uint64_t) n << 1;
	size_t		i = 0;

	while (z >= 0x80)
	{
		v[i++] = (unsigned char) (z | 0x80);
		z >>= 7;
	}
	v[i++] = (unsigned char) z;
	memset(v + i, 'x', n);
	*len = i + n;
	return v;
}

/* The system's memory running out sets the flag. */
static void
test_out_of_memory_flagged(void **state)
{
	avro_json_schema *s;
	avro_json_buf out = {0};
	char		err[512];
	size_t		len;
	unsigned char *v = bytes_value(300000, &len);

	(void) state;
	s = avro_json_compile(BYTES_RECORD, strlen(BYTES_RECORD), err, sizeof(err));
	assert_non_null(s);
	avro_alloc_oom_clear();
	fail_from = 200000;
	assert_int_equal(avro_json_decode(s, v, len, &out, err, sizeof(err)), -1);
	fail_from = 0;
	assert_true(avro_alloc_oom());

	/* with the memory back, the same value decodes */
	avro_alloc_oom_clear();
	avro_json_buf_reset(&out);
	assert_int_equal(avro_json_decode(s, v, len, &out, err, sizeof(err)), 0);
	assert_false(avro_alloc_oom());
	avro_json_buf_free(&out);
	avro_json_free(s);
	free(v);
}

/* A value whose length the bound refuses is the message's fault: no flag. */
static void
test_bound_not_flagged(void **state)
{
	avro_json_schema *s;
	avro_json_buf out = {0};
	char		err[512];
	/* a length of 2^40 bytes in a 7-byte value */
	const unsigned char v[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40};

	(void) state;
	s = avro_json_compile(BYTES_RECORD, strlen(BYTES_RECORD), err, sizeof(err));
	assert_non_null(s);
	avro_alloc_oom_clear();
	assert_int_equal(avro_json_decode(s, v, sizeof(v), &out, err, sizeof(err)), -1);
	assert_false(avro_alloc_oom());
	avro_json_buf_free(&out);
	avro_json_free(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_out_of_memory_flagged),
		cmocka_unit_test(test_bound_not_flagged),
	};

	avro_json_init();
	return cmocka_run_group_tests_name("decode_oom", tests, NULL, NULL);
}
