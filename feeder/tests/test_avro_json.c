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
	/* a top-level bytes value is the payload, with no Avro length */
	assert_int_equal(avro_json_decode(d, "\x01", 1, &out, err, sizeof(err)), 0);
	assert_string_equal(out.data, "0.000000000001");
	avro_json_buf_reset(&out);
	assert_int_equal(avro_json_decode(d, "\xff", 1, &out, err, sizeof(err)), 0);
	assert_string_equal(out.data, "-0.000000000001");
	avro_json_buf_reset(&out);
	assert_int_equal(avro_json_decode(d, "", 0, &out, err, sizeof(err)), 0);
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

/*
 * decode_text
 *		Compile schema, decode len bytes of data with it: the return code,
 *		the JSON in *json (malloc'd, "" when refused) and the reason in err.
 */
static int
decode_text(const char *schema, const void *data, size_t len, char **json,
			char *err, size_t errlen)
{
	avro_json_buf out = {0};
	avro_json_schema *s;
	int			rc;

	avro_json_init();
	s = avro_json_compile(schema, strlen(schema), err, errlen);
	if (s == NULL)
		fail_msg("schema refused: %s", err);
	err[0] = '\0';
	rc = avro_json_decode(s, data, len, &out, err, errlen);
	*json = strdup(rc == 0 && out.data ? out.data : "");
	avro_json_free(s);
	avro_json_buf_free(&out);
	return rc;
}

/*
 * test_recursive_depth_bounded
 *		A recursive record nested 30,000 deep (a linked list: 0x02 picks
 *		the union's record branch) is refused with a reason before any
 *		reader recurses that far: avro-c's recursive reader once ran out of
 *		stack on it (SIGSEGV), a crash loop on one message.  The same
 *		schema three deep decodes.
 */
static void
test_recursive_depth_bounded(void **state)
{
	static const char schema[] =
		"{\"type\":\"record\",\"name\":\"LL\",\"fields\":[{\"name\":\"next\",\"type\":[\"null\",\"LL\"]}]}";
	size_t		n = 30000;
	unsigned char *deep = malloc(n + 1);
	char		err[512];
	char	   *json;

	(void) state;
	memset(deep, 0x02, n);
	deep[n] = 0x00;
	assert_int_equal(decode_text(schema, deep, n + 1, &json, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "deeper than"));
	free(json);
	assert_int_equal(decode_text(schema, "\x02\x02\x00", 3, &json, err, sizeof(err)), 0);
	assert_string_equal(json, "{\"next\":{\"next\":{\"next\":null}}}");
	free(json);
	/* a record that contains itself without a union never ends: refused */
	assert_int_equal(decode_text("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"r\",\"type\":\"R\"}]}",
								 "", 0, &json, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "deeper than"));
	free(json);
	free(deep);
}

/*
 * varint
 *		Append v zigzag-encoded as an Avro long; the new end.
 */
static unsigned char *
varint(unsigned char *p, int64_t v)
{
	uint64_t	z = ((uint64_t) v << 1) ^ (uint64_t) (v >> 63);

	while (z >= 0x80)
	{
		*p++ = (unsigned char) (z | 0x80);
		z >>= 7;
	}
	*p++ = (unsigned char) z;
	return p;
}

/*
 * test_output_bounded
 *		Arrays of arrays of nulls: 1,603 bytes that expand to 40 MB of JSON
 *		(avro-c's reader decoded them, its allocations each within bounds)
 *		are refused once the JSON passes AVRO_JSON_MAX_BYTES, the buffer
 *		never larger than that.
 */
static void
test_output_bounded(void **state)
{
	static const char schema[] =
		"{\"type\":\"array\",\"items\":{\"type\":\"array\",\"items\":\"null\"}}";
	unsigned char value[2048],
			   *p = value;
	avro_json_buf out = {0};
	avro_json_schema *s;
	char		err[512];
	int			i;

	(void) state;
	avro_json_init();
	s = avro_json_compile(schema, sizeof(schema) - 1, err, sizeof(err));
	assert_non_null(s);
	p = varint(p, 400);			/* 400 inner arrays ... */
	for (i = 0; i < 400; i++)
	{
		p = varint(p, 20000);	/* ... of 20,000 nulls each: 40 MB */
		p = varint(p, 0);
	}
	p = varint(p, 0);
	assert_true((size_t) (p - value) < 2000);
	assert_int_equal(avro_json_decode(s, value, (size_t) (p - value), &out,
									  err, sizeof(err)), -1);
	assert_non_null(strstr(err, "larger than"));
	assert_true(out.cap <= (size_t) AVRO_JSON_MAX_BYTES + 1);
	/* the buffer is usable again for the next message */
	avro_json_buf_reset(&out);
	assert_int_equal(avro_json_decode(s, "\x02\x04\x00\x00", 4, &out, err, sizeof(err)), 0);
	assert_string_equal(out.data, "[[null,null]]");
	avro_json_free(s);
	avro_json_buf_free(&out);
}

/*
 * naive_decimal
 *		The decimal string of big-endian two's complement bytes with scale
 *		digits after the point, by byte-wise long division: the oracle of
 *		test_decimal_exact (slow, plainly right).
 */
static char *
naive_decimal(const unsigned char *p, size_t n, int scale)
{
	unsigned char *mag = malloc(n + 1);
	char	   *digits = malloc(n * 3 + scale + 8),
			   *res = malloc(n * 3 + scale + 8);
	size_t		nd = 0,
				i,
				k = 0;
	int			neg = n > 0 && (p[0] & 0x80);

	memcpy(mag, p, n);
	if (neg)
	{
		int			carry = 1;

		for (i = n; i-- > 0;)
		{
			int			v = (unsigned char) ~mag[i] + carry;

			mag[i] = (unsigned char) v;
			carry = v >> 8;
		}
	}
	for (;;)
	{
		int			rem = 0,
					nz = 0;

		for (i = 0; i < n; i++)
		{
			int			v = rem * 256 + mag[i];

			mag[i] = (unsigned char) (v / 10);
			rem = v % 10;
			nz |= mag[i];
		}
		digits[nd++] = (char) ('0' + rem);
		if (!nz)
			break;
	}
	while (nd < (size_t) scale + 1)
		digits[nd++] = '0';
	if (neg)
		res[k++] = '-';
	for (i = nd; i-- > 0;)
	{
		res[k++] = digits[i];
		if (i == (size_t) scale && scale > 0)
			res[k++] = '.';
	}
	res[k] = '\0';
	free(mag);
	free(digits);
	return res;
}

/*
 * test_decimal_exact
 *		Decimals of random bytes (1 to AVRO_JSON_MAX_DECIMAL_BYTES long,
 *		sign-extended or not) and scales come out as the plain long
 *		division says.
 */
static void
test_decimal_exact(void **state)
{
	char		schema[160];
	unsigned char *value = malloc(AVRO_JSON_MAX_DECIMAL_BYTES + 16);
	unsigned char *p;
	uint64_t	rng = 42;
	int			round;

	(void) state;
	for (round = 0; round < 300; round++)
	{
		size_t		n = round < 20 ? (size_t) round :
			round < 40 ? AVRO_JSON_MAX_DECIMAL_BYTES - (size_t) (round - 20) :
			1 + (size_t) (rng % AVRO_JSON_MAX_DECIMAL_BYTES);
		int			scale = (int) (rng % 40);
		char	   *want,
				   *json;
		char		err[512];
		size_t		i;

		snprintf(schema, sizeof(schema),
				 "{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":4000,\"scale\":%d}", scale);
		p = varint(value, (int64_t) n);
		for (i = 0; i < n; i++)
		{
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			p[i] = (unsigned char) (rng >> 56);
		}
		if (n > 2 && round % 3 == 0)
			p[0] = p[1] = (p[2] & 0x80) ? 0xff : 0x00;	/* sign extension */
		want = naive_decimal(p, n, scale);
		/* a top-level bytes value is the payload, with no Avro length */
		assert_int_equal(decode_text(schema, p, n, &json, err, sizeof(err)), 0);
		assert_string_equal(json, want);
		free(json);
		free(want);
	}
	free(value);
}

/*
 * test_decimal_bounded
 *		A decimal whose unscaled value has more than
 *		AVRO_JSON_MAX_DECIMAL_BYTES significant bytes is refused with a
 *		reason (it once took 1.6 s for 16 KB, quadratic), while the same
 *		count of bytes that only sign-extend a small number decodes.
 */
static void
test_decimal_bounded(void **state)
{
	static const char schema[] =
		"{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":40,\"scale\":2}";
	size_t		n = 16384;
	unsigned char *value = malloc(n + 8),
			   *p;
	char		err[512];
	char	   *json;

	(void) state;
	p = varint(value, (int64_t) n);
	memset(p, 0x55, n);
	/* a top-level bytes value is the payload, with no Avro length */
	assert_int_equal(decode_text(schema, p, n, &json, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "decimal"));
	assert_non_null(strstr(err, "bytes"));
	free(json);
	memset(p, 0xff, n);			/* -1, written long */
	p[n - 1] = 0x9c;			/* -100 */
	assert_int_equal(decode_text(schema, p, n, &json, err, sizeof(err)), 0);
	assert_string_equal(json, "-1.00");
	free(json);
	free(value);
}

/*
 * test_names_by_full_name
 *		Named types resolve by full name, as the Avro specification says: a
 *		short name in the enclosing namespace first, then in no namespace;
 *		a dotted name as it is.  a.Money (fixed, no logical type) and
 *		b.Money (a decimal of scale 4) share a short name; so do audit.Meta
 *		(a plain long) and shop.Meta (timestamp-millis).  Matching short
 *		names once gave b.Money's 0x0064 as a.Money's base64 and shop.Meta
 *		as audit.Meta's plain number.
 */
static void
test_names_by_full_name(void **state)
{
	static const char schema[] =
		"{\"type\":\"record\",\"name\":\"Order\",\"namespace\":\"a\",\"fields\":["
		"{\"name\":\"m1\",\"type\":{\"type\":\"fixed\",\"name\":\"Money\",\"size\":2}},"
		"{\"name\":\"audit\",\"type\":{\"type\":\"record\",\"name\":\"audit.Meta\",\"fields\":["
		"  {\"name\":\"at\",\"type\":\"long\"}]}},"
		"{\"name\":\"inner\",\"type\":{\"type\":\"record\",\"name\":\"Inner\",\"namespace\":\"b\",\"fields\":["
		"  {\"name\":\"m2\",\"type\":{\"type\":\"fixed\",\"name\":\"Money\",\"size\":2,"
		"     \"logicalType\":\"decimal\",\"precision\":4,\"scale\":4}},"
		"  {\"name\":\"m3\",\"type\":\"Money\"},"
		"  {\"name\":\"shop\",\"type\":{\"type\":\"record\",\"name\":\"Meta\",\"namespace\":\"shop\",\"fields\":["
		"    {\"name\":\"at\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-millis\"}}]}},"
		"  {\"name\":\"m6\",\"type\":[\"null\",\"Money\"]}]}},"
		"{\"name\":\"m4\",\"type\":\"b.Money\"},"
		"{\"name\":\"m5\",\"type\":\"Money\"},"
		"{\"name\":\"meta1\",\"type\":\"shop.Meta\"},"
		"{\"name\":\"meta2\",\"type\":\"audit.Meta\"},"
		"{\"name\":\"top\",\"type\":{\"type\":\"record\",\"name\":\"Top\",\"namespace\":\"\",\"fields\":["
		"  {\"name\":\"m7\",\"type\":\"b.Money\"}]}}]}";
	unsigned char value[64],
			   *p = value;
	char		err[512];
	char	   *json;
	int			i;

	(void) state;
	*p++ = 0x00;				/* m1: a.Money, 0x0064 */
	*p++ = 0x64;
	p = varint(p, 5);			/* audit.at */
	for (i = 0; i < 2; i++)		/* inner.m2, inner.m3: b.Money */
	{
		*p++ = 0x00;
		*p++ = 0x64;
	}
	p = varint(p, 86400000);	/* inner.shop.at */
	p = varint(p, 1);			/* inner.m6: the b.Money branch */
	*p++ = 0x00;
	*p++ = 0x64;
	*p++ = 0x00;				/* m4: b.Money */
	*p++ = 0x64;
	*p++ = 0x00;				/* m5: a.Money */
	*p++ = 0x64;
	p = varint(p, 86400000);	/* meta1: shop.Meta */
	p = varint(p, 86400000);	/* meta2: audit.Meta */
	*p++ = 0x00;				/* top.m7: b.Money */
	*p++ = 0x64;
	assert_int_equal(decode_text(schema, value, (size_t) (p - value), &json,
								 err, sizeof(err)), 0);
	assert_string_equal(json,
						"{\"m1\":\"AGQ=\",\"audit\":{\"at\":5},"
						"\"inner\":{\"m2\":0.0100,\"m3\":0.0100,"
						"\"shop\":{\"at\":\"1970-01-02T00:00:00.000000Z\"},\"m6\":0.0100},"
						"\"m4\":0.0100,\"m5\":\"AGQ=\","
						"\"meta1\":{\"at\":\"1970-01-02T00:00:00.000000Z\"},"
						"\"meta2\":{\"at\":86400000},\"top\":{\"m7\":0.0100}}");
	free(json);
}

/*
 * test_names_confluents_bytes
 *		Named types resolved as Confluent's own AvroSerializer resolved them
 *		(tests/fixtures/avro-names.*, test/fuzz/corpus-framed/7-namespaces:
 *		a.Money a fixed of 3 bytes, b.Money a decimal in 2, so a reference
 *		resolved to the wrong one leaves bytes over or runs out; shop.Meta a
 *		timestamp, audit.Meta a string; a recursive b.Node referring to
 *		shop.Meta).  Short names once gave m3 and m6 as a.Money's base64.
 */
static void
test_names_confluents_bytes(void **state)
{
	size_t		slen,
				blen,
				jlen;
	char	   *schema = slurp(FIXTURES "avro-names.avsc", &slen);
	char	   *framed = slurp(FIXTURES "avro-names.bin", &blen);
	char	   *want = slurp(FIXTURES "avro-names.json", &jlen);
	char		err[512];
	avro_json_buf out = {0};
	avro_json_schema *s;

	(void) state;
	avro_json_init();
	s = avro_json_compile(schema, slen, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(avro_json_decode(s, framed + 5, blen - 5, &out, err, sizeof(err)), 0);
	assert_string_equal(out.data, want);
	assert_non_null(strstr(out.data, "\"m3\":0.0100,"));
	assert_non_null(strstr(out.data, "\"m6\":-0.0100,"));
	assert_non_null(strstr(out.data, "\"meta1\":{\"at\":\"1970-01-02T00:00:00.001000Z\"},\"meta2\":{\"at\":\"y\"}"));
	avro_json_free(s);
	avro_json_buf_free(&out);
	free(schema);
	free(framed);
	free(want);
}

/*
 * decode_or_null
 *		The JSON of the n bytes at value (a payload, after the frame) by
 *		schema, malloc'd; NULL when the schema or the value is refused (err
 *		says why).
 */
static char *
decode_or_null(const char *schema, const void *value, size_t n, char *err, size_t errlen)
{
	avro_json_schema *s;
	avro_json_buf out = {0};
	char	   *text = NULL;

	avro_json_init();
	s = avro_json_compile(schema, strlen(schema), err, errlen);
	if (s == NULL)
		return NULL;
	if (avro_json_decode(s, value, n, &out, err, errlen) == 0)
		text = strndup(out.data ? out.data : "", out.len);
	avro_json_free(s);
	avro_json_buf_free(&out);
	return text;
}

/*
 * test_subnormals_fewest_digits
 *		Subnormal doubles and floats come out in their fewest digits, as
 *		JavaScript prints them (5e-324, not 4.94065645841247e-324; float
 *		1e-45, not 1.4013e-45); normal numbers keep theirs.
 */
static void
test_subnormals_fewest_digits(void **state)
{
	/*
	 * An array of five doubles, little-endian IEEE 754: 5e-324, the
	 * largest subnormal, -5e-324, another subnormal, 0.1.
	 */
	static const unsigned char doubles[] = {
		0x0a,
		0x01, 0, 0, 0, 0, 0, 0, 0,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, 0,
		0x01, 0, 0, 0, 0, 0, 0, 0x80,
		0x56, 0x34, 0x12, 0, 0, 0, 0, 0,
		0x9a, 0x99, 0x99, 0x99, 0x99, 0x99, 0xb9, 0x3f,
		0x00
	};
	/* five floats: 1e-45, the largest subnormal, -1e-45, another, 0.1 */
	static const unsigned char floats[] = {
		0x0a,
		0x01, 0, 0, 0,
		0xff, 0xff, 0x7f, 0,
		0x01, 0, 0, 0x80,
		0x45, 0x23, 0x01, 0,
		0xcd, 0xcc, 0xcc, 0x3d,
		0x00
	};
	char		err[512];
	char	   *got;

	(void) state;
	got = decode_or_null("{\"type\":\"array\",\"items\":\"double\"}", doubles, sizeof(doubles),
					  err, sizeof(err));
	assert_non_null(got);
	assert_string_equal(got, "[5e-324,2.225073858507201e-308,-5e-324,5.89443e-318,0.1]");
	free(got);
	got = decode_or_null("{\"type\":\"array\",\"items\":\"float\"}", floats, sizeof(floats),
					  err, sizeof(err));
	assert_non_null(got);
	assert_string_equal(got, "[1e-45,1.1754942e-38,-1e-45,1.04488e-40,0.1]");
	free(got);
}

/*
 * test_top_level_bytes_raw
 *		A value whose schema is bytes is the whole payload, with no Avro
 *		length, as Confluent's serializers write it: 04 41 42 is those
 *		three bytes ("BEFC"), not "AB"; nothing is the empty string; a
 *		decimal on bytes reads the payload as its two's complement.  Bytes
 *		inside a record keep their length.
 */
static void
test_top_level_bytes_raw(void **state)
{
	char		err[512];
	char	   *got;

	(void) state;
	got = decode_or_null("\"bytes\"", "\x04\x41\x42", 3, err, sizeof(err));
	assert_non_null(got);
	assert_string_equal(got, "\"BEFC\"");
	free(got);
	got = decode_or_null("{\"type\":\"bytes\"}", "AB", 2, err, sizeof(err));
	assert_non_null(got);
	assert_string_equal(got, "\"QUI=\"");
	free(got);
	got = decode_or_null("\"bytes\"", "", 0, err, sizeof(err));
	assert_non_null(got);
	assert_string_equal(got, "\"\"");
	free(got);
	got = decode_or_null("{\"type\":\"bytes\",\"logicalType\":\"decimal\",\"precision\":6,\"scale\":2}",
					  "\xcf\xc7", 2, err, sizeof(err));
	assert_non_null(got);
	assert_string_equal(got, "-123.45");
	free(got);
	got = decode_or_null("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"b\",\"type\":\"bytes\"}]}",
					  "\x04\x41\x42", 3, err, sizeof(err));
	assert_non_null(got);
	assert_string_equal(got, "{\"b\":\"QUI=\"}");
	free(got);
}

/*
 * test_nul_in_schema
 *		U+0000 in a default or a doc does not make the schema refused (the
 *		docs/tests.md reproducer); a \\u0000 that is only text (an escaped
 *		backslash before it) stays text; a name, namespace, alias, symbol
 *		or type name holding U+0000 is refused; a logicalType holding it is
 *		no logical type.
 */
static void
test_nul_in_schema(void **state)
{
	static const char *const refused[] = {
		"{\"type\":\"record\",\"name\":\"R\\u0000\",\"fields\":[]}",
		"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"b\\u0000\",\"type\":\"int\"}]}",
		"{\"type\":\"record\",\"name\":\"R\",\"namespace\":\"a\\u0000\",\"fields\":[]}",
		"{\"type\":\"enum\",\"name\":\"E\",\"symbols\":[\"A\",\"B\\u0000\"]}",
		"{\"type\":\"fixed\",\"name\":\"F\",\"size\":1,\"aliases\":[\"G\\u0000\"]}",
		"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"b\",\"aliases\":[\"c\\u0000\"],\"type\":\"int\"}]}",
		"{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"b\",\"type\":[\"null\",\"R\\u0000\"]}]}",
		"{\"type\":\"int\\u0000\"}",
	};
	char		err[512];
	char	   *got;
	size_t		i;

	(void) state;
	got = decode_or_null("{\"type\":\"record\",\"name\":\"R\",\"fields\":[{\"name\":\"b\",\"type\":\"bytes\",\"default\":\"\\u0000\"}]}",
					  "\x02\x01", 2, err, sizeof(err));
	if (got == NULL)
		fail_msg("refused: %s", err);
	assert_string_equal(got, "{\"b\":\"AQ==\"}");
	free(got);
	got = decode_or_null("{\"type\":\"record\",\"name\":\"R\",\"doc\":\"\\\\\\u0000 \\\\u0000 \\u0000\","
					  "\"fields\":[{\"name\":\"s\",\"type\":\"string\",\"default\":\"x\\u0000\"}]}",
					  "\x02\x41", 2, err, sizeof(err));
	if (got == NULL)
		fail_msg("refused: %s", err);
	assert_string_equal(got, "{\"s\":\"A\"}");
	free(got);
	got = decode_or_null("{\"type\":\"bytes\",\"logicalType\":\"decimal\\u0000\",\"precision\":4,\"scale\":2}",
					  "\x01", 1, err, sizeof(err));
	assert_non_null(got);
	assert_string_equal(got, "\"AQ==\"");
	free(got);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
	{
		got = decode_or_null(refused[i], "", 0, err, sizeof(err));
		if (got != NULL)
			fail_msg("accepted: %s", refused[i]);
	}
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
		cmocka_unit_test(test_recursive_depth_bounded),
		cmocka_unit_test(test_output_bounded),
		cmocka_unit_test(test_decimal_exact),
		cmocka_unit_test(test_decimal_bounded),
		cmocka_unit_test(test_names_by_full_name),
		cmocka_unit_test(test_names_confluents_bytes),
		cmocka_unit_test(test_subnormals_fewest_digits),
		cmocka_unit_test(test_top_level_bytes_raw),
		cmocka_unit_test(test_nul_in_schema),
	};

	return cmocka_run_group_tests_name("avro_json", tests, NULL, NULL);
}
