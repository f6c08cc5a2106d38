/*-------------------------------------------------------------------------
 *
 * test_avro_json.c
 *	  Unit tests of avro_json.c: the Avro to JSON mapping, on bytes made by
 *	  Confluent's own AvroSerializer.
 *
 * tests/fixtures/avro-mapping.bin is one value framed by the official
 * serializer (@confluentinc/schemaregistry, test/schema-registry/produce.js
 * on tests/fixtures/avro-mapping.spec.json), avro-mapping.avsc the schema
 * the registry served for its id, avro-mapping.json the JSON the mapping
 * gives, checked value by value against the spec (every logical type,
 * unions, enums, maps, named references, bytes and fixed).
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

#include "avro_json.h"

#define FIXTURES "tests/fixtures/"

/*
 * slurp
 *		A fixture's bytes.
 */
static char *
slurp(const char *name, size_t *len)
{
	FILE	   *f = fopen(name, "rb");
	char	   *data = malloc(1 << 20);

	assert_non_null(f);
	assert_non_null(data);
	*len = fread(data, 1, 1 << 20, f);
	fclose(f);
	data[*len] = '\0';
	return data;
}

typedef struct fixture
{
	char	   *schema;
	size_t		schema_len;
	char	   *framed;
	size_t		framed_len;
	char	   *want;
	size_t		want_len;
	avro_json_schema *compiled;
	avro_json_buf out;
	char		err[512];
} fixture;

static int
setup(void **state)
{
	fixture    *f = calloc(1, sizeof(fixture));

	avro_json_init();
	f->schema = slurp(FIXTURES "avro-mapping.avsc", &f->schema_len);
	f->framed = slurp(FIXTURES "avro-mapping.bin", &f->framed_len);
	f->want = slurp(FIXTURES "avro-mapping.json", &f->want_len);
	f->compiled = avro_json_compile(f->schema, f->schema_len, f->err, sizeof(f->err));
	assert_non_null(f->compiled);
	*state = f;
	return 0;
}

static int
teardown(void **state)
{
	fixture    *f = *state;

	avro_json_free(f->compiled);
	avro_json_buf_free(&f->out);
	free(f->schema);
	free(f->framed);
	free(f->want);
	free(f);
	return 0;
}

/*
 * test_frame_is_confluents
 *		The fixture is framed as Confluent frames: magic byte 0, schema id 1.
 */
static void
test_frame_is_confluents(void **state)
{
	fixture    *f = *state;

	assert_true(f->framed_len > 5);
	assert_memory_equal(f->framed, "\0\0\0\0\1", 5);
}

/*
 * test_mapping
 *		The whole value, by the documented mapping, exactly.
 */
static void
test_mapping(void **state)
{
	fixture    *f = *state;

	assert_int_equal(avro_json_decode(f->compiled, f->framed + 5, f->framed_len - 5,
									  &f->out, f->err, sizeof(f->err)), 0);
	assert_string_equal(f->out.data, f->want);
	/* a few values spelled out, so the rule is readable here */
	assert_non_null(strstr(f->out.data, "\"note\":null,\"comment\":\"fragile\""));
	assert_non_null(strstr(f->out.data, "\"channel\":\"SHOP\""));
	assert_non_null(strstr(f->out.data, "\"amount\":123.45,\"discount\":-0.005"));
	assert_non_null(strstr(f->out.data, "\"big\":99999999999999999999999999999999999999,"));
	assert_non_null(strstr(f->out.data, "\"digest\":\"AP8Q\",\"code\":\"QUJD\""));
	assert_non_null(strstr(f->out.data, "\"orderDate\":\"2023-12-09\""));
	assert_non_null(strstr(f->out.data, "\"cutoff\":\"12:34:56.789000\""));
	assert_non_null(strstr(f->out.data, "\"createdAt\":\"2024-12-04T11:00:00.123000Z\""));
	assert_non_null(strstr(f->out.data, "\"localAtMicros\":\"2024-12-04T11:00:00.123456\""));
	assert_non_null(strstr(f->out.data, "\"before1970\":\"1969-12-31T23:59:59.999999Z\""));
	assert_non_null(strstr(f->out.data, "\"ratio\":0.1,"));
	assert_non_null(strstr(f->out.data, "\"shipTo\":{\"street\":\"Dock 2\",\"zip\":null}"));
}

/*
 * test_truncated
 *		A value cut short is an error naming what could not be read.
 */
static void
test_truncated(void **state)
{
	fixture    *f = *state;

	assert_int_equal(avro_json_decode(f->compiled, f->framed + 5, f->framed_len - 8,
									  &f->out, f->err, sizeof(f->err)), -1);
	assert_non_null(strstr(f->err, "the Avro bytes do not match the schema"));
}

/*
 * test_trailing
 *		Bytes left after the value are an error.
 */
static void
test_trailing(void **state)
{
	fixture    *f = *state;
	char	   *longer = malloc(f->framed_len + 1);

	memcpy(longer, f->framed, f->framed_len);
	longer[f->framed_len] = 0x02;
	assert_int_equal(avro_json_decode(f->compiled, longer + 5, f->framed_len - 4,
									  &f->out, f->err, sizeof(f->err)), -1);
	assert_string_equal(f->err, "bytes are left after the Avro value");
	free(longer);
}

/*
 * test_not_an_avro_schema
 *		A schema avro-c refuses is an error, not a crash.
 */
static void
test_not_an_avro_schema(void **state)
{
	char		err[256];

	(void) state;
	assert_null(avro_json_compile("{\"type\": \"record\"}", 18, err, sizeof(err)));
	assert_non_null(strstr(err, "not an Avro schema"));
	assert_null(avro_json_compile("{", 1, err, sizeof(err)));
}

/*
 * test_bad_enum_and_garbage
 *		Bytes that no value of the schema has: an enum index past its
 *		symbols, a negative length.
 */
static void
test_bad_enum_and_garbage(void **state)
{
	static const char schema[] = "{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\"]}";
	static const char sschema[] = "\"string\"";
	char		err[256];
	avro_json_buf out = {0};
	avro_json_schema *e,
			   *s;

	avro_json_init();
	e = avro_json_compile(schema, sizeof(schema) - 1, err, sizeof(err));
	s = avro_json_compile(sschema, sizeof(sschema) - 1, err, sizeof(err));
	(void) state;
	assert_non_null(e);
	assert_non_null(s);
	assert_int_equal(avro_json_decode(e, "\x00", 1, &out, err, sizeof(err)), 0);
	assert_string_equal(out.data, "\"A\"");
	avro_json_buf_reset(&out);
	assert_int_equal(avro_json_decode(e, "\x04", 1, &out, err, sizeof(err)), -1);
	avro_json_buf_reset(&out);
	assert_int_equal(avro_json_decode(s, "\x01", 1, &out, err, sizeof(err)), -1);
	avro_json_buf_reset(&out);
	assert_int_equal(avro_json_decode(s, "\x06" "a\x01\"", 4, &out, err, sizeof(err)), 0);
	assert_string_equal(out.data, "\"a\\u0001\\\"\"");
	avro_json_free(e);
	avro_json_free(s);
	avro_json_buf_free(&out);
}

/*
 * test_decimal_short
 *		A decimal whose bytes have fewer digits than its scale: zeros are
 *		written up to the point (the digits' buffer once had room for the
 *		bytes' digits only: a heap overflow the framed-values fuzzer found
 *		under AddressSanitizer); no bytes at all is 0.
 */
static void
test_decimal_short(void **state)
{
	static const char schema[] =
		"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":20,\"scale\":12}";
	char		err[256];
	avro_json_buf out = {0};
	avro_json_schema *d;

	(void) state;
	avro_json_init();
	d = avro_json_compile(schema, sizeof(schema) - 1, err, sizeof(err));
	assert_non_null(d);
	assert_int_equal(avro_json_decode(d, "\x02\x01", 2, &out, err, sizeof(err)), 0);
	assert_string_equal(out.data, "0.000000000001");
	avro_json_buf_reset(&out);
	assert_int_equal(avro_json_decode(d, "\x02\xff", 2, &out, err, sizeof(err)), 0);
	assert_string_equal(out.data, "-0.000000000001");
	avro_json_buf_reset(&out);
	assert_int_equal(avro_json_decode(d, "\x00", 1, &out, err, sizeof(err)), 0);
	assert_string_equal(out.data, "0.000000000000");
	avro_json_free(d);
	avro_json_buf_free(&out);
}

/*
 * test_mutations
 *		Confluent's bytes cut at every length and with every bit of every
 *		byte flipped: each decodes or is refused with a reason, never a
 *		crash (under make sanitize: no memory error, no leak).
 */
static void
test_mutations(void **state)
{
	fixture    *f = *state;
	const char *payload = f->framed + 5;
	size_t		len = f->framed_len - 5;
	char	   *copy = malloc(len);
	size_t		i;
	int			bit,
				refused = 0,
				decoded = 0;

	for (i = 0; i < len; i++)
	{
		avro_json_buf_reset(&f->out);
		if (avro_json_decode(f->compiled, payload, i, &f->out, f->err, sizeof(f->err)) != 0)
			refused++;
		else
			decoded++;
	}
	assert_int_equal(decoded, 0);	/* every proper prefix is refused */
	for (i = 0; i < len; i++)
		for (bit = 0; bit < 8; bit++)
		{
			memcpy(copy, payload, len);
			copy[i] ^= (char) (1 << bit);
			avro_json_buf_reset(&f->out);
			f->err[0] = '\0';
			if (avro_json_decode(f->compiled, copy, len, &f->out, f->err, sizeof(f->err)) != 0)
			{
				assert_true(f->err[0] != '\0');
				refused++;
			}
			else
				decoded++;
		}
	assert_true(refused > 0 && decoded > 0);
	free(copy);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_frame_is_confluents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_trailing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mutations, setup, teardown),
		cmocka_unit_test(test_not_an_avro_schema),
		cmocka_unit_test(test_bad_enum_and_garbage),
		cmocka_unit_test(test_decimal_short),
	};

	return cmocka_run_group_tests_name("avro_json", tests, NULL, NULL);
}
