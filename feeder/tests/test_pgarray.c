/*-------------------------------------------------------------------------
 *
 * test_pgarray.c
 *	  Unit tests of pgarray.c: the binary array wire format, decoded back
 *	  field by field as PostgreSQL's array_recv reads it.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pgarray.h"

/* A reader over an encoded array. */
typedef struct reader
{
	const unsigned char *p;
	size_t		left;
} reader;

static uint32_t
get_u32(reader *r)
{
	uint32_t	v;

	assert_true(r->left >= 4);
	v = ((uint32_t) r->p[0] << 24) | ((uint32_t) r->p[1] << 16) |
		((uint32_t) r->p[2] << 8) | r->p[3];
	r->p += 4;
	r->left -= 4;
	return v;
}

/*
 * check_header
 *		Decode the header and check it; returns a reader on the elements.
 */
static reader
check_header(const pgarray *a, uint32_t elemtype, uint32_t n, uint32_t has_null)
{
	reader		r = {(const unsigned char *) a->data, a->len};

	assert_int_equal(get_u32(&r), 1);	/* ndim */
	assert_int_equal(get_u32(&r), has_null);
	assert_int_equal(get_u32(&r), elemtype);
	assert_int_equal(get_u32(&r), n);	/* dim */
	assert_int_equal(get_u32(&r), 1);	/* lbound */
	return r;
}

/* bytea elements: raw bytes, NULL as length -1, any byte values. */
static void
test_bytea_with_null(void **state)
{
	pgarray		a;
	reader		r;
	const char	bad_utf8[] = {'\xff', '\xfe', 0, 'x'};

	(void) state;
	pgarray_init(&a);
	pgarray_begin(&a, PGARRAY_BYTEAOID);
	pgarray_add_bytes(&a, "{\"a\":1}", 7);
	pgarray_add_null(&a);
	pgarray_add_bytes(&a, bad_utf8, sizeof(bad_utf8));
	pgarray_add_bytes(&a, "", 0);
	assert_int_equal(pgarray_finish(&a), 0);

	r = check_header(&a, 17, 4, 1);
	assert_int_equal(get_u32(&r), 7);
	assert_memory_equal(r.p, "{\"a\":1}", 7);
	r.p += 7;
	r.left -= 7;
	assert_int_equal((int32_t) get_u32(&r), -1);
	assert_int_equal(get_u32(&r), 4);
	assert_memory_equal(r.p, bad_utf8, 4);
	r.p += 4;
	r.left -= 4;
	assert_int_equal(get_u32(&r), 0);
	assert_int_equal(r.left, 0);
	pgarray_free(&a);
}

/* int4 and int8 elements are big-endian, negative values included. */
static void
test_integers(void **state)
{
	pgarray		a;
	reader		r;
	uint64_t	hi,
				lo;

	(void) state;
	pgarray_init(&a);
	pgarray_begin(&a, PGARRAY_INT4OID);
	pgarray_add_int4(&a, 7);
	pgarray_add_int4(&a, -2);
	assert_int_equal(pgarray_finish(&a), 0);
	r = check_header(&a, 23, 2, 0);
	assert_int_equal(get_u32(&r), 4);
	assert_int_equal(get_u32(&r), 7);
	assert_int_equal(get_u32(&r), 4);
	assert_int_equal((int32_t) get_u32(&r), -2);
	assert_int_equal(r.left, 0);

	/* reuse of the same buffer for another array */
	pgarray_begin(&a, PGARRAY_INT8OID);
	pgarray_add_int8(&a, INT64_C(0x0102030405060708));
	pgarray_add_int8(&a, -1);
	assert_int_equal(pgarray_finish(&a), 0);
	r = check_header(&a, 20, 2, 0);
	assert_int_equal(get_u32(&r), 8);
	hi = get_u32(&r);
	lo = get_u32(&r);
	assert_int_equal((hi << 32) | lo, UINT64_C(0x0102030405060708));
	assert_int_equal(get_u32(&r), 8);
	hi = get_u32(&r);
	lo = get_u32(&r);
	assert_int_equal((int64_t) ((hi << 32) | lo), -1);
	assert_int_equal(r.left, 0);
	pgarray_free(&a);
}

/* text elements, and a large element that forces the buffer to grow. */
static void
test_text_and_growth(void **state)
{
	static char big[600 * 1024];
	pgarray		a;
	reader		r;

	(void) state;
	memset(big, 'z', sizeof(big));
	pgarray_init(&a);
	pgarray_begin(&a, PGARRAY_TEXTOID);
	pgarray_add_bytes(&a, "orders", 6);
	pgarray_add_bytes(&a, big, sizeof(big));
	assert_int_equal(pgarray_finish(&a), 0);
	r = check_header(&a, 25, 2, 0);
	assert_int_equal(get_u32(&r), 6);
	assert_memory_equal(r.p, "orders", 6);
	r.p += 6;
	r.left -= 6;
	assert_int_equal(get_u32(&r), sizeof(big));
	assert_memory_equal(r.p, big, sizeof(big));
	assert_int_equal(r.left, sizeof(big));
	pgarray_free(&a);
}

/* The array type OIDs match pg_type. */
static void
test_oids(void **state)
{
	(void) state;
	assert_int_equal(PGARRAY_BYTEAARRAYOID, 1001);
	assert_int_equal(PGARRAY_INT4ARRAYOID, 1007);
	assert_int_equal(PGARRAY_TEXTARRAYOID, 1009);
	assert_int_equal(PGARRAY_INT8ARRAYOID, 1016);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytea_with_null),
		cmocka_unit_test(test_integers),
		cmocka_unit_test(test_text_and_growth),
		cmocka_unit_test(test_oids),
	};

	return cmocka_run_group_tests_name("pgarray", tests, NULL, NULL);
}
