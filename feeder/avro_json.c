/*-------------------------------------------------------------------------
 *
 * avro_json.c
 *	  Avro binary to JSON text, by the documented mapping, read by our own
 *	  reader of the binary encoding, bounded in depth, size and work.
 *
 * avro-c (Debian's libavro-dev) only checks a writer schema; avro_tree.c
 * turns its JSON into a tree of nodes (named types resolved by full name,
 * logical types kept), and this file reads a value's bytes walking that
 * tree, writing JSON as it goes.  The mapping, one rule per Avro type
 * (docs/feeder.md):
 *
 *	 record		an object of its fields, in schema order
 *	 union		the branch's value, unwrapped (null or the value)
 *	 enum		its symbol, a string
 *	 map		an object; array: an array
 *	 bytes, fixed	a base64 string (RFC 4648, padded)
 *	 int, long	a number; float, double: a number, or "NaN", "Infinity",
 *				"-Infinity" (strings: JSON has no such numbers)
 *	 decimal	an exact JSON number with scale digits after the point
 *	 uuid		a string
 *	 date		"YYYY-MM-DD"
 *	 time-millis, time-micros	"HH:MM:SS.ffffff"
 *	 timestamp-millis, timestamp-micros	"YYYY-MM-DDTHH:MM:SS.ffffffZ" (UTC)
 *	 local-timestamp-millis, -micros	the same without the "Z"
 *
 * A value whose whole schema is bytes is the payload itself, without
 * Avro's length: Confluent's serializers write it so.
 *
 * A value's bytes come from any producer, so the reader trusts none of
 * them: every length is checked against the bytes left, nesting deeper
 * than AVRO_JSON_MAX_DEPTH is refused before the reader recurses (a
 * recursive schema and 30,000 nested bytes would otherwise exhaust the
 * stack), the JSON may not grow past AVRO_JSON_MAX_BYTES (a few hundred
 * bytes of arrays of nulls would otherwise make hundreds of megabytes, and
 * every array item writes at least a byte, so this bounds the reader's
 * work too), and a decimal may not have more than
 * AVRO_JSON_MAX_DECIMAL_BYTES significant bytes (its conversion to base 10
 * is quadratic in them).  The reader allocates nothing but the JSON.  Bytes
 * that do not match the schema, bytes left after the value and a value past
 * a bound are an error for the caller to reject the message with.
 *
 *-------------------------------------------------------------------------
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <avro.h>
#include <jansson.h>

#include "avro_alloc.h"
#include "avro_json.h"
#include "avro_tree.h"

struct avro_json_schema
{
	avro_tree  *tree;
};

/* A value being read: its bytes and where the JSON goes. */
typedef struct avro_json_reader
{
	const unsigned char *start;
	const unsigned char *p;
	const unsigned char *end;
	avro_json_buf *out;
	char	   *err;
	size_t		errlen;
} avro_json_reader;

/*
 * avro_json_init
 *		Before any thread decodes: seed jansson's hash tables once, here,
 *		rather than racing on the first schema each thread compiles, and
 *		install avro-c's allocator (avro_alloc.c).
 */
void
avro_json_init(void)
{
	json_object_seed(0);
	avro_alloc_init();
}

/*
 * avro_json_buf_grow
 *		Room for n more bytes (and a terminating NUL); marks the buffer
 *		failed when memory runs out, too_large when its limit (set while a
 *		value is decoded) would be passed.
 */
static int
avro_json_buf_grow(avro_json_buf *buf, size_t n)
{
	size_t		cap;
	char	   *data;

	if (buf->failed || buf->too_large)
		return -1;
	if (buf->limit && n > buf->limit - buf->len)
	{
		buf->too_large = 1;
		return -1;
	}
	if (buf->len + n + 1 <= buf->cap)
		return 0;
	cap = buf->cap ? buf->cap : 256;
	while (cap < buf->len + n + 1)
		cap *= 2;
	if (buf->limit && cap > buf->limit + 1)
		cap = buf->limit + 1;
	data = realloc(buf->data, cap);
	if (data == NULL)
	{
		buf->failed = 1;
		avro_alloc_note_oom();
		return -1;
	}
	buf->data = data;
	buf->cap = cap;
	return 0;
}

/*
 * avro_json_put
 *		Append n bytes.
 */
static void
avro_json_put(avro_json_buf *buf, const char *s, size_t n)
{
	if (avro_json_buf_grow(buf, n) != 0)
		return;
	memcpy(buf->data + buf->len, s, n);
	buf->len += n;
	buf->data[buf->len] = '\0';
}

/*
 * avro_json_puts
 *		Append a C string.
 */
static void
avro_json_puts(avro_json_buf *buf, const char *s)
{
	avro_json_put(buf, s, strlen(s));
}

/*
 * avro_json_printf
 *		Append formatted text (short: numbers, dates).
 */
static void
avro_json_printf(avro_json_buf *buf, const char *fmt,...)
{
	char		tmp[128];
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		avro_json_put(buf, tmp, (size_t) n < sizeof(tmp) ? (size_t) n : sizeof(tmp) - 1);
}

/*
 * avro_json_buf_reset
 *		Empty the buffer, keeping its memory up to 1 MiB (one large value
 *		does not keep the most a value may take for the process's life).
 */
void
avro_json_buf_reset(avro_json_buf *buf)
{
	if (buf->cap > 1024 * 1024)
	{
		free(buf->data);
		buf->data = NULL;
		buf->cap = 0;
	}
	buf->len = 0;
	buf->failed = 0;
	buf->too_large = 0;
	if (buf->data)
		buf->data[0] = '\0';
}

/*
 * avro_json_buf_append
 *		Append bytes as they are (a JSON value that needs no decoding).
 */
void
avro_json_buf_append(avro_json_buf *buf, const void *data, size_t len)
{
	avro_json_put(buf, data, len);
}

/*
 * avro_json_buf_free
 *		Release the buffer's memory.
 */
void
avro_json_buf_free(avro_json_buf *buf)
{
	free(buf->data);
	memset(buf, 0, sizeof(*buf));
}

/*
 * avro_json_string
 *		Append s (n bytes) as a JSON string: quotes, backslash and control
 *		characters escaped; other bytes as they are (Avro strings are
 *		UTF-8; the database checks the encoding like any event's).
 */
static void
avro_json_string(avro_json_buf *buf, const char *s, size_t n)
{
	size_t		i,
				start = 0;

	avro_json_put(buf, "\"", 1);
	for (i = 0; i < n; i++)
	{
		unsigned char c = (unsigned char) s[i];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		avro_json_put(buf, s + start, i - start);
		start = i + 1;
		switch (c)
		{
			case '"':
				avro_json_put(buf, "\\\"", 2);
				break;
			case '\\':
				avro_json_put(buf, "\\\\", 2);
				break;
			case '\n':
				avro_json_put(buf, "\\n", 2);
				break;
			case '\r':
				avro_json_put(buf, "\\r", 2);
				break;
			case '\t':
				avro_json_put(buf, "\\t", 2);
				break;
			default:
				avro_json_printf(buf, "\\u%04x", c);
		}
	}
	avro_json_put(buf, s + start, n - start);
	avro_json_put(buf, "\"", 1);
}

/*
 * avro_json_base64
 *		Append bytes as a padded base64 JSON string.
 */
static void
avro_json_base64(avro_json_buf *buf, const unsigned char *p, size_t n)
{
	static const char digits[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t		i;

	avro_json_put(buf, "\"", 1);
	for (i = 0; i + 2 < n; i += 3)
	{
		char		q[4] = {digits[p[i] >> 2],
			digits[((p[i] & 3) << 4) | (p[i + 1] >> 4)],
			digits[((p[i + 1] & 15) << 2) | (p[i + 2] >> 6)],
		digits[p[i + 2] & 63]};

		avro_json_put(buf, q, 4);
	}
	if (n - i == 1)
	{
		char		q[4] = {digits[p[i] >> 2], digits[(p[i] & 3) << 4], '=', '='};

		avro_json_put(buf, q, 4);
	}
	else if (n - i == 2)
	{
		char		q[4] = {digits[p[i] >> 2],
			digits[((p[i] & 3) << 4) | (p[i + 1] >> 4)],
		digits[(p[i + 1] & 15) << 2], '='};

		avro_json_put(buf, q, 4);
	}
	avro_json_put(buf, "\"", 1);
}


/*
 * avro_json_decimal
 *		Append a decimal: the big-endian two's complement unscaled value
 *		(n bytes) with scale digits after the point, exactly, as a JSON
 *		number: no binary floating point on the way.  Bytes that only
 *		extend the sign are skipped; more than AVRO_JSON_MAX_DECIMAL_BYTES
 *		bytes left is an error (the conversion, 32-bit limbs divided by
 *		10^9, is quadratic in them: 1,024 bytes take about 70,000
 *		divisions).
 */
static int
avro_json_decimal(avro_json_buf *buf, const unsigned char *p, size_t n,
				  int scale, char *err, size_t errlen)
{
	uint32_t	limbs[AVRO_JSON_MAX_DECIMAL_BYTES / 4 + 1];
	unsigned char mag[AVRO_JSON_MAX_DECIMAL_BYTES];
	char		digits[AVRO_JSON_MAX_DECIMAL_BYTES * 3 + 1000 + 16];
	size_t		ndigits = 0,
				nlimbs,
				first = 0,
				i;
	int			negative = n > 0 && (p[0] & 0x80);

	while (n > 1 && ((p[0] == 0x00 && !(p[1] & 0x80)) ||
					 (p[0] == 0xff && (p[1] & 0x80))))
	{
		p++;
		n--;
	}
	if (n > AVRO_JSON_MAX_DECIMAL_BYTES)
	{
		snprintf(err, errlen,
				 "a decimal of %zu significant bytes is larger than the %d bytes (2,466 digits) a decimal may have",
				 n, AVRO_JSON_MAX_DECIMAL_BYTES);
		return -1;
	}
	memcpy(mag, p, n);
	if (negative)
	{
		/* magnitude of a negative two's complement number: invert, add 1 */
		int			carry = 1;

		for (i = n; i-- > 0;)
		{
			int			v = (unsigned char) ~mag[i] + carry;

			mag[i] = (unsigned char) v;
			carry = v >> 8;
		}
	}
	/* big-endian bytes into big-endian 32-bit limbs */
	nlimbs = (n + 3) / 4;
	memset(limbs, 0, sizeof(limbs));
	for (i = 0; i < n; i++)
	{
		size_t		from_end = n - 1 - i;

		limbs[nlimbs - 1 - from_end / 4] |= (uint32_t) mag[i] << (8 * (from_end % 4));
	}
	/* divide by 10^9 until nothing is left: nine digits each time */
	do
	{
		uint64_t	rem = 0;
		int			k;

		for (i = first; i < nlimbs; i++)
		{
			uint64_t	cur = (rem << 32) | limbs[i];

			limbs[i] = (uint32_t) (cur / 1000000000u);
			rem = cur % 1000000000u;
		}
		while (first < nlimbs && limbs[first] == 0)
			first++;
		for (k = 0; k < 9; k++)
		{
			digits[ndigits++] = (char) ('0' + rem % 10);
			rem /= 10;
		}
	} while (first < nlimbs);
	/* digits are least significant first: no leading zeros but one */
	while (ndigits > 1 && digits[ndigits - 1] == '0')
		ndigits--;
	/* and at least scale + 1 of them: 0.000001 from one byte */
	while (ndigits < (size_t) scale + 1)
		digits[ndigits++] = '0';
	if (negative)
		avro_json_put(buf, "-", 1);
	for (i = ndigits; i-- > 0;)
	{
		avro_json_put(buf, &digits[i], 1);
		if (i == (size_t) scale && scale > 0)
			avro_json_put(buf, ".", 1);
	}
	return 0;
}

/*
 * avro_json_shortest
 *		Append a float or double as the shortest decimal that reads back as
 *		the same value (0.1, not 0.10000000000000001): the database keeps
 *		JSON numbers exactly, as numeric.
 */
static void
avro_json_shortest(avro_json_buf *buf, double v, int is_float)
{
	char		tmp[400];
	int			precision;

	/*
	 * FLT_DIG (6) and DBL_DIG (15) significant digits always read back as
	 * they were written, so a shorter decimal that reads back as v comes
	 * out of %g at that precision too, its zeros trimmed.  A subnormal has
	 * fewer significant bits, that guarantee does not hold (5e-324 at 15
	 * digits is 4.94065645841247e-324): the search starts at one digit.
	 */
	if (is_float ? fpclassify((float) v) == FP_SUBNORMAL :
		fpclassify(v) == FP_SUBNORMAL)
		precision = 1;
	else
		precision = is_float ? 6 : 15;
	for (; precision < (is_float ? 9 : 17); precision++)
	{
		snprintf(tmp, sizeof(tmp), "%.*g", precision, v);
		if (is_float ? strtof(tmp, NULL) == (float) v : strtod(tmp, NULL) == v)
			break;
	}
	snprintf(tmp, sizeof(tmp), "%.*g", precision, v);
	avro_json_puts(buf, tmp);
}

/*
 * avro_json_civil
 *		The proleptic Gregorian date of a day count since 1970-01-01
 *		(H. Hinnant's days_from_civil inverse).
 */
static void
avro_json_civil(int64_t days, int64_t *y, int *m, int *d)
{
	int64_t		z = days + 719468;
	int64_t		era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t		doe = z - era * 146097;
	int64_t		yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t		doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t		mp = (5 * doy + 2) / 153;

	*d = (int) (doy - (153 * mp + 2) / 5 + 1);
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/*
 * avro_json_floor_div
 *		Quotient and non-negative remainder of a by b (b > 0).
 */
static int64_t
avro_json_floor_div(int64_t a, int64_t b, int64_t *rem)
{
	int64_t		q = a / b,
				r = a % b;

	if (r < 0)
	{
		r += b;
		q--;
	}
	*rem = r;
	return q;
}

/*
 * avro_json_time
 *		Append "HH:MM:SS.ffffff" for microseconds since midnight.
 */
static void
avro_json_time(avro_json_buf *buf, int64_t micros, int quoted)
{
	int64_t		us,
				secs = avro_json_floor_div(micros, 1000000, &us);

	secs %= 86400;
	avro_json_printf(buf, "%s%02d:%02d:%02d.%06d%s", quoted ? "\"" : "",
					 (int) (secs / 3600), (int) (secs / 60 % 60),
					 (int) (secs % 60), (int) us, quoted ? "\"" : "");
}

/*
 * avro_json_date
 *		Append "YYYY-MM-DD" (quoted or not) for days since 1970-01-01.
 */
static void
avro_json_date(avro_json_buf *buf, int64_t days, int quoted)
{
	int64_t		y;
	int			m,
				d;

	avro_json_civil(days, &y, &m, &d);
	avro_json_printf(buf, "%s%04" PRId64 "-%02d-%02d%s", quoted ? "\"" : "",
					 y, m, d, quoted ? "\"" : "");
}

/*
 * avro_json_timestamp
 *		Append an ISO-8601 timestamp for microseconds since the epoch, with
 *		"Z" (UTC) or without (local).
 */
static void
avro_json_timestamp(avro_json_buf *buf, int64_t micros, int utc)
{
	int64_t		us_of_day,
				days = avro_json_floor_div(micros, INT64_C(86400000000), &us_of_day);

	avro_json_put(buf, "\"", 1);
	avro_json_date(buf, days, 0);
	avro_json_put(buf, "T", 1);
	avro_json_time(buf, us_of_day, 0);
	avro_json_puts(buf, utc ? "Z\"" : "\"");
}

/*
 * avro_json_bad
 *		Fill err with what does not match the schema, and where; -1.
 */
static int
avro_json_bad(avro_json_reader *r, const char *what)
{
	snprintf(r->err, r->errlen, "the Avro bytes do not match the schema: %s at byte %zu",
			 what, (size_t) (r->p - r->start));
	return -1;
}

/*
 * avro_json_read_long
 *		A zigzag varint (at most 10 bytes, as avro-c and Java read it).
 */
static int
avro_json_read_long(avro_json_reader *r, int64_t *v)
{
	uint64_t	u = 0;
	int			shift = 0;
	unsigned char b;

	do
	{
		if (r->p >= r->end)
			return avro_json_bad(r, "a number runs past the end");
		if (shift >= 70)
			return avro_json_bad(r, "a number is longer than 10 bytes");
		b = *r->p++;
		if (shift < 64)
			u |= (uint64_t) (b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	*v = (int64_t) (u >> 1) ^ -(int64_t) (u & 1);
	return 0;
}

/*
 * avro_json_read_int
 *		A long that must fit an int.
 */
static int
avro_json_read_int(avro_json_reader *r, int32_t *v)
{
	int64_t		l;

	if (avro_json_read_long(r, &l) != 0)
		return -1;
	if (l < INT32_MIN || l > INT32_MAX)
		return avro_json_bad(r, "an int is out of range");
	*v = (int32_t) l;
	return 0;
}

/*
 * avro_json_read_bytes
 *		A length and that many bytes (strings and bytes): *p points at them.
 */
static int
avro_json_read_bytes(avro_json_reader *r, const unsigned char **p, size_t *n)
{
	int64_t		len;

	if (avro_json_read_long(r, &len) != 0)
		return -1;
	if (len < 0)
		return avro_json_bad(r, "a length is negative");
	if ((uint64_t) len > (uint64_t) (r->end - r->p))
		return avro_json_bad(r, "a length runs past the end");
	*p = r->p;
	*n = (size_t) len;
	r->p += len;
	return 0;
}

/*
 * avro_json_read_fixed
 *		n bytes as they are (fixed, float, double).
 */
static int
avro_json_read_fixed(avro_json_reader *r, size_t n, const unsigned char **p)
{
	if (n > (size_t) (r->end - r->p))
		return avro_json_bad(r, "a fixed-size value runs past the end");
	*p = r->p;
	r->p += n;
	return 0;
}

/*
 * avro_json_read_block
 *		The count of an array's or map's next block (0: the end); a
 *		negative count is followed by the block's size in bytes, which is
 *		read and not needed.
 */
static int
avro_json_read_block(avro_json_reader *r, int64_t *count)
{
	int64_t		size;

	if (avro_json_read_long(r, count) != 0)
		return -1;
	if (*count >= 0)
		return 0;
	if (*count == INT64_MIN)
		return avro_json_bad(r, "a block count is out of range");
	*count = -*count;
	return avro_json_read_long(r, &size);
}

/*
 * avro_json_write_long
 *		Append a long by its logical type.
 */
static int
avro_json_write_long(avro_json_reader *r, const avro_tree_node *node, int64_t v)
{
	switch (node->logical)
	{
		case AVRO_TREE_TIME_MICROS:
			avro_json_time(r->out, v, 1);
			break;
		case AVRO_TREE_TIMESTAMP_MILLIS:
		case AVRO_TREE_LOCAL_TIMESTAMP_MILLIS:
			if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000)
			{
				snprintf(r->err, r->errlen, "%s %" PRId64 " is out of range",
						 node->logical == AVRO_TREE_TIMESTAMP_MILLIS ?
						 "timestamp-millis" : "local-timestamp-millis", v);
				return -1;
			}
			avro_json_timestamp(r->out, v * 1000,
								node->logical == AVRO_TREE_TIMESTAMP_MILLIS);
			break;
		case AVRO_TREE_TIMESTAMP_MICROS:
		case AVRO_TREE_LOCAL_TIMESTAMP_MICROS:
			avro_json_timestamp(r->out, v,
								node->logical == AVRO_TREE_TIMESTAMP_MICROS);
			break;
		default:
			avro_json_printf(r->out, "%" PRId64, v);
	}
	return 0;
}

/*
 * avro_json_write_float
 *		Append a float or double (little-endian IEEE 754 bytes).
 */
static void
avro_json_write_float(avro_json_reader *r, const unsigned char *p, int is_float)
{
	double		v;

	if (is_float)
	{
		uint32_t	u = (uint32_t) p[0] | (uint32_t) p[1] << 8 |
			(uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
		float		f;

		memcpy(&f, &u, sizeof(f));
		v = f;
	}
	else
	{
		uint64_t	u = 0;
		int			i;

		for (i = 7; i >= 0; i--)
			u = u << 8 | p[i];
		memcpy(&v, &u, sizeof(v));
	}
	if (isnan(v))
		avro_json_puts(r->out, "\"NaN\"");
	else if (isinf(v))
		avro_json_puts(r->out, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
	else
		avro_json_shortest(r->out, v, is_float);
}

/*
 * avro_json_write_bytes
 *		Append the n bytes at p of a bytes or fixed value: base64, or the
 *		exact number of a decimal.
 */
static int
avro_json_write_bytes(avro_json_reader *r, const avro_tree_node *node,
					  const unsigned char *p, size_t n)
{
	if (node->logical != AVRO_TREE_DECIMAL)
		avro_json_base64(r->out, p, n);
	else if (node->scale < 0 || node->scale > 1000)
	{
		snprintf(r->err, r->errlen, "decimal scale %lld is not supported", node->scale);
		return -1;
	}
	else if (avro_json_decimal(r->out, p, n, (int) node->scale,
							   r->err, r->errlen) != 0)
		return -1;
	return 0;
}

/*
 * avro_json_stopped
 *		The JSON cannot grow any more (its bound, or memory): err says
 *		which; -1.
 */
static int
avro_json_stopped(avro_json_reader *r)
{
	if (r->out->too_large)
		snprintf(r->err, r->errlen,
				 "the decoded JSON would be larger than %d MiB, the most a value may decode into",
				 AVRO_JSON_MAX_BYTES / (1024 * 1024));
	else
		snprintf(r->err, r->errlen, "out of memory");
	return -1;
}

/*
 * avro_json_write
 *		Read one value of node's type and append it as JSON; depth counts
 *		the records, arrays, maps and unions around it.
 */
static int
avro_json_write(avro_json_reader *r, const avro_tree_node *node, int depth)
{
	const unsigned char *p;
	size_t		n;
	int64_t		l;
	int32_t		v;
	int			i;

	if (depth > AVRO_JSON_MAX_DEPTH)
	{
		snprintf(r->err, r->errlen, "the value nests deeper than %d levels",
				 AVRO_JSON_MAX_DEPTH);
		return -1;
	}
	if (r->out->failed || r->out->too_large)
		return avro_json_stopped(r);

	switch (node->kind)
	{
		case AVRO_TREE_NULL:
			avro_json_puts(r->out, "null");
			break;
		case AVRO_TREE_BOOLEAN:
			if (avro_json_read_fixed(r, 1, &p) != 0)
				return -1;
			avro_json_puts(r->out, *p ? "true" : "false");
			break;
		case AVRO_TREE_INT:
			if (avro_json_read_int(r, &v) != 0)
				return -1;
			if (node->logical == AVRO_TREE_DATE)
				avro_json_date(r->out, v, 1);
			else if (node->logical == AVRO_TREE_TIME_MILLIS)
				avro_json_time(r->out, (int64_t) v * 1000, 1);
			else
				avro_json_printf(r->out, "%" PRId32, v);
			break;
		case AVRO_TREE_LONG:
			if (avro_json_read_long(r, &l) != 0 ||
				avro_json_write_long(r, node, l) != 0)
				return -1;
			break;
		case AVRO_TREE_FLOAT:
		case AVRO_TREE_DOUBLE:
			if (avro_json_read_fixed(r, node->kind == AVRO_TREE_FLOAT ? 4 : 8, &p) != 0)
				return -1;
			avro_json_write_float(r, p, node->kind == AVRO_TREE_FLOAT);
			break;
		case AVRO_TREE_STRING:
			if (avro_json_read_bytes(r, &p, &n) != 0)
				return -1;
			avro_json_string(r->out, (const char *) p, n);
			break;
		case AVRO_TREE_BYTES:
		case AVRO_TREE_FIXED:
			if (node->kind == AVRO_TREE_BYTES ?
				avro_json_read_bytes(r, &p, &n) != 0 :
				avro_json_read_fixed(r, n = node->size, &p) != 0)
				return -1;
			if (avro_json_write_bytes(r, node, p, n) != 0)
				return -1;
			break;
		case AVRO_TREE_ENUM:
			if (avro_json_read_int(r, &v) != 0)
				return -1;
			if (v < 0 || v >= node->n)
			{
				snprintf(r->err, r->errlen, "enum symbol %d is not in the schema", (int) v);
				return -1;
			}
			avro_json_string(r->out, node->labels[v], strlen(node->labels[v]));
			break;
		case AVRO_TREE_ARRAY:
		case AVRO_TREE_MAP:
			{
				int			is_map = node->kind == AVRO_TREE_MAP,
							firstitem = 1;
				int64_t		count;

				avro_json_put(r->out, is_map ? "{" : "[", 1);
				for (;;)
				{
					if (avro_json_read_block(r, &count) != 0)
						return -1;
					if (count == 0)
						break;
					/* each item writes a byte at least: out's bound ends this */
					for (; count > 0; count--)
					{
						if (!firstitem)
							avro_json_put(r->out, ",", 1);
						firstitem = 0;
						if (is_map)
						{
							if (avro_json_read_bytes(r, &p, &n) != 0)
								return -1;
							avro_json_string(r->out, (const char *) p, n);
							avro_json_put(r->out, ":", 1);
						}
						if (avro_json_write(r, node->children[0], depth + 1) != 0)
							return -1;
					}
				}
				avro_json_put(r->out, is_map ? "}" : "]", 1);
				break;
			}
		case AVRO_TREE_RECORD:
			avro_json_put(r->out, "{", 1);
			for (i = 0; i < node->n; i++)
			{
				if (i > 0)
					avro_json_put(r->out, ",", 1);
				avro_json_string(r->out, node->labels[i], strlen(node->labels[i]));
				avro_json_put(r->out, ":", 1);
				if (avro_json_write(r, node->children[i], depth + 1) != 0)
					return -1;
			}
			avro_json_put(r->out, "}", 1);
			break;
		case AVRO_TREE_UNION:
			if (avro_json_read_long(r, &l) != 0)
				return -1;
			if (l < 0 || l >= node->n)
			{
				snprintf(r->err, r->errlen, "union branch %" PRId64 " is not in the schema", l);
				return -1;
			}
			return avro_json_write(r, node->children[l], depth + 1);
	}
	if (r->out->failed || r->out->too_large)
		return avro_json_stopped(r);
	return 0;
}

/*
 * avro_json_without_nul
 *		A copy of a schema's JSON text (len bytes, NUL-terminated) for
 *		avro-c to check, each \u0000 escape in its strings made \u0001;
 *		NULL when out of memory.
 *
 * A schema may hold U+0000 in its text (a bytes or string default, a doc),
 * which the Avro specification, Java's parser and the registry accept but
 * avro-c's JSON parser refuses, whatever the string.  The decoder uses no
 * default nor doc; a name with U+0000 is refused all the same: by avro-c
 * (a record's or field's name with U+0001 is not an Avro name) or by
 * avro_tree.c (every name it reads).
 */
static char *
avro_json_without_nul(const char *text, size_t len)
{
	char	   *copy = malloc(len + 1);
	int			in_string = 0;
	size_t		i;

	if (copy == NULL)
		return NULL;
	memcpy(copy, text, len);
	copy[len] = '\0';
	for (i = 0; i < len; i++)
	{
		if (copy[i] == '"')
			in_string = !in_string;
		else if (in_string && copy[i] == '\\' && i + 1 < len)
		{
			if (len - i >= 6 && memcmp(copy + i + 1, "u0000", 5) == 0)
				copy[i + 5] = '1';
			i++;				/* the escaped character is not a quote */
		}
	}
	return copy;
}

/*
 * avro_json_compile
 *		A writer schema, ready to decode with: NULL with err filled when
 *		the text is not an Avro schema avro-c accepts, or its names do not
 *		resolve.
 */
avro_json_schema *
avro_json_compile(const char *text, size_t len, char *err, size_t errlen)
{
	avro_json_schema *s = calloc(1, sizeof(*s));
	avro_schema_t checked;
	json_error_t jerr;
	json_t	   *json;
	char	   *checkable;
	char		why[400];

	if (s == NULL)
	{
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if ((checkable = avro_json_without_nul(text, len)) == NULL)
	{
		avro_alloc_note_oom();	/* the system's memory: retried */
		snprintf(err, errlen, "out of memory");
		free(s);
		return NULL;
	}
	if (avro_schema_from_json_length(checkable, len, &checked) != 0)
	{
		snprintf(err, errlen, "not an Avro schema avro-c accepts: %s", avro_strerror());
		free(checkable);
		free(s);
		return NULL;
	}
	free(checkable);
	avro_schema_decref(checked);
	json = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (json == NULL)
	{
		snprintf(err, errlen, "the schema's JSON could not be read: %s", jerr.text);
		free(s);
		return NULL;
	}
	s->tree = avro_tree_build(json, why, sizeof(why));
	json_decref(json);
	if (s->tree == NULL)
	{
		snprintf(err, errlen, "the schema could not be read: %s", why);
		free(s);
		return NULL;
	}
	return s;
}

/*
 * avro_json_free
 *		Release a compiled schema.
 */
void
avro_json_free(avro_json_schema *s)
{
	if (s == NULL)
		return;
	avro_tree_free(s->tree);
	free(s);
}

/*
 * avro_json_decode
 *		Decode one Avro value (data, len: the payload after the frame) with
 *		its writer schema and append it to out as JSON.  0 on success; -1
 *		with err filled when the bytes do not match the schema, bytes are
 *		left after the value, or the value passes a bound (the header's
 *		AVRO_JSON_MAX_*); out's text is then incomplete.
 */
int
avro_json_decode(const avro_json_schema *s, const void *data, size_t len,
				 avro_json_buf *out, char *err, size_t errlen)
{
	avro_json_reader r;
	const avro_tree_node *root;
	int			rc;

	r.start = r.p = data;
	r.end = r.start + len;
	r.out = out;
	r.err = err;
	r.errlen = errlen;
	out->limit = out->len + AVRO_JSON_MAX_BYTES;
	out->too_large = 0;
	root = avro_tree_root(s->tree);
	if (root->kind == AVRO_TREE_BYTES)
	{
		/*
		 * Confluent's serializers write a value whose schema is bytes as the
		 * bytes themselves, with no Avro length, and their deserializers
		 * read the whole payload back (Java: a writer schema of type
		 * BYTES; JavaScript: avsc's type name "bytes"): so do we.
		 */
		rc = avro_json_write_bytes(&r, root, r.p, len);
		r.p = r.end;
		if (rc == 0 && (out->failed || out->too_large))
			rc = avro_json_stopped(&r);
	}
	else
		rc = avro_json_write(&r, root, 0);
	if (rc == 0 && r.p != r.end)
	{
		snprintf(err, errlen, "bytes are left after the Avro value");
		rc = -1;
	}
	out->limit = 0;
	return rc;
}
