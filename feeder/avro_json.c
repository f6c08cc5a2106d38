/*-------------------------------------------------------------------------
 *
 * avro_json.c
 *	  Avro binary to JSON text, by the documented mapping, with avro-c.
 *
 * avro-c (Debian's libavro-dev) reads the bytes with the writer schema into
 * a generic value; this file writes that value as JSON.  avro-c 1.11 keeps
 * no logical types, so the schema's JSON (parsed with jansson, which avro-c
 * itself uses) is walked beside the value to find them.  The mapping, one
 * rule per Avro type (docs/feeder.md):
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
 * Bytes that do not match the schema, and bytes left after the value, are
 * an error for the caller to reject the message with; avro_alloc.c keeps a
 * bad message's lengths and counts from taking the feeder's memory, and
 * frees what avro-c loses on its error paths.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
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

/* Named types (record, enum, fixed) of a schema, by full and short name. */
typedef struct avro_json_name
{
	char	   *name;
	json_t	   *node;
} avro_json_name;

struct avro_json_schema
{
	avro_schema_t avro;
	json_t	   *json;
	avro_json_name *names;
	int			nnames;
	int			capnames;
};

/*
 * avro_json_init
 *		Before any thread uses avro-c: its allocator for untrusted values
 *		(avro_alloc.c).
 */
void
avro_json_init(void)
{
	avro_alloc_init();
}

/*
 * avro_json_buf_grow
 *		Room for n more bytes (and a terminating NUL); marks the buffer
 *		failed when memory runs out.
 */
static int
avro_json_buf_grow(avro_json_buf *buf, size_t n)
{
	size_t		cap;
	char	   *data;

	if (buf->failed)
		return -1;
	if (buf->len + n + 1 <= buf->cap)
		return 0;
	cap = buf->cap ? buf->cap : 256;
	while (cap < buf->len + n + 1)
		cap *= 2;
	data = realloc(buf->data, cap);
	if (data == NULL)
	{
		buf->failed = 1;
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
 *		Empty the buffer, keeping its memory.
 */
void
avro_json_buf_reset(avro_json_buf *buf)
{
	buf->len = 0;
	buf->failed = 0;
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
 *		number (base-256 digits converted to base 10 by long division: no
 *		binary floating point on the way).
 */
static void
avro_json_decimal(avro_json_buf *buf, const unsigned char *p, size_t n, int scale)
{
	unsigned char *mag;
	char	   *digits;
	size_t		ndigits = 0,
				i,
				room = n * 3 + 2;	/* 256^n < 10^(3n) */
	int			negative = n > 0 && (p[0] & 0x80);

	/* and the zeros up to scale + 1 digits: 0.000001 from one byte */
	if (room < (size_t) scale + 2)
		room = (size_t) scale + 2;
	mag = malloc(n ? n : 1);
	digits = malloc(room);
	if (mag == NULL || digits == NULL)
	{
		free(mag);
		free(digits);
		buf->failed = 1;
		return;
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
	for (;;)
	{
		int			rem = 0,
					nonzero = 0;

		for (i = 0; i < n; i++)
		{
			int			v = rem * 256 + mag[i];

			mag[i] = (unsigned char) (v / 10);
			rem = v % 10;
			nonzero |= mag[i];
		}
		digits[ndigits++] = (char) ('0' + rem);
		if (!nonzero)
			break;
	}
	/* digits are least significant first; at least scale + 1 of them */
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
	free(mag);
	free(digits);
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

	for (precision = is_float ? 6 : 15; precision < (is_float ? 9 : 17); precision++)
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
 * avro_json_add_name
 *		Remember a named type's node under name (and, when name has a
 *		namespace, under its last part too).
 */
static int
avro_json_add_name(avro_json_schema *s, const char *name, json_t *node)
{
	if (s->nnames == s->capnames)
	{
		int			cap = s->capnames ? s->capnames * 2 : 16;
		avro_json_name *names = realloc(s->names, sizeof(*names) * cap);

		if (names == NULL)
			return -1;
		s->names = names;
		s->capnames = cap;
	}
	s->names[s->nnames].name = strdup(name);
	if (s->names[s->nnames].name == NULL)
		return -1;
	s->names[s->nnames++].node = node;
	return 0;
}

/*
 * avro_json_collect
 *		Walk the schema's JSON once and remember every named type, so that
 *		a reference by name finds its definition.  ns is the enclosing
 *		namespace (NULL: none).
 */
static int
avro_json_collect(avro_json_schema *s, json_t *node, const char *ns)
{
	json_t	   *type;
	const char *name,
			   *t,
			   *dot;
	char	   *inner = NULL;
	int			rc = 0;
	size_t		i;

	if (json_is_array(node))
	{
		for (i = 0; rc == 0 && i < json_array_size(node); i++)
			rc = avro_json_collect(s, json_array_get(node, i), ns);
		return rc;
	}
	if (!json_is_object(node))
		return 0;
	type = json_object_get(node, "type");
	if (!json_is_string(type))
		return avro_json_collect(s, type, ns);
	t = json_string_value(type);
	name = json_string_value(json_object_get(node, "name"));
	if (json_is_string(json_object_get(node, "namespace")))
		ns = json_string_value(json_object_get(node, "namespace"));
	if (name && (strcmp(t, "record") == 0 || strcmp(t, "error") == 0 ||
				 strcmp(t, "enum") == 0 || strcmp(t, "fixed") == 0))
	{
		dot = strrchr(name, '.');
		if (dot)
			inner = strndup(name, dot - name);	/* a full name: its namespace */
		else if (ns && *ns)
		{
			inner = malloc(strlen(ns) + strlen(name) + 2);
			if (inner)
				sprintf(inner, "%s.%s", ns, name);
			if (inner == NULL || avro_json_add_name(s, inner, node) != 0)
				rc = -1;
			free(inner);
			inner = ns ? strdup(ns) : NULL;
		}
		if (rc == 0 && (avro_json_add_name(s, name, node) != 0 ||
						(dot && avro_json_add_name(s, dot + 1, node) != 0)))
			rc = -1;
		if (inner)
			ns = inner;
	}
	if (rc == 0 && (strcmp(t, "record") == 0 || strcmp(t, "error") == 0))
	{
		json_t	   *fields = json_object_get(node, "fields");

		for (i = 0; rc == 0 && i < json_array_size(fields); i++)
			rc = avro_json_collect(s, json_object_get(json_array_get(fields, i), "type"), ns);
	}
	else if (rc == 0 && strcmp(t, "array") == 0)
		rc = avro_json_collect(s, json_object_get(node, "items"), ns);
	else if (rc == 0 && strcmp(t, "map") == 0)
		rc = avro_json_collect(s, json_object_get(node, "values"), ns);
	free(inner);
	return rc;
}

/*
 * avro_json_resolve
 *		The node that defines a type: a named reference replaced by its
 *		definition, {"type": {...}} by the inner type.
 */
static json_t *
avro_json_resolve(const avro_json_schema *s, json_t *node)
{
	int			depth;

	for (depth = 0; depth < 64 && node != NULL; depth++)
	{
		if (json_is_string(node))
		{
			const char *name = json_string_value(node);
			int			i;

			for (i = 0; i < s->nnames; i++)
				if (strcmp(s->names[i].name, name) == 0)
					return s->names[i].node;
			return node;		/* a primitive */
		}
		if (json_is_object(node))
		{
			json_t	   *type = json_object_get(node, "type");

			if (json_is_string(type) || type == NULL)
				return node;
			node = type;
			continue;
		}
		return node;			/* a union */
	}
	return node;
}

/*
 * avro_json_logical
 *		The logicalType of a type's node, or "".
 */
static const char *
avro_json_logical(json_t *node)
{
	const char *l = json_is_object(node) ?
		json_string_value(json_object_get(node, "logicalType")) : NULL;

	return l ? l : "";
}

/*
 * avro_json_write
 *		Append value (whose schema's JSON is node) as JSON text.
 */
static int
avro_json_write(const avro_json_schema *s, avro_value_t *value, json_t *node,
				avro_json_buf *buf, int depth, char *err, size_t errlen)
{
	const char *logical;
	size_t		i,
				n;

	if (depth > 256)
	{
		snprintf(err, errlen, "the value nests deeper than 256 levels");
		return -1;
	}
	node = avro_json_resolve(s, node);
	logical = avro_json_logical(node);

	switch (avro_value_get_type(value))
	{
		case AVRO_NULL:
			avro_json_puts(buf, "null");
			break;
		case AVRO_BOOLEAN:
			{
				int			b = 0;

				avro_value_get_boolean(value, &b);
				avro_json_puts(buf, b ? "true" : "false");
				break;
			}
		case AVRO_INT32:
			{
				int32_t		v = 0;

				avro_value_get_int(value, &v);
				if (strcmp(logical, "date") == 0)
					avro_json_date(buf, v, 1);
				else if (strcmp(logical, "time-millis") == 0)
					avro_json_time(buf, (int64_t) v * 1000, 1);
				else
					avro_json_printf(buf, "%" PRId32, v);
				break;
			}
		case AVRO_INT64:
			{
				int64_t		v = 0;

				avro_value_get_long(value, &v);
				if (strcmp(logical, "time-micros") == 0)
					avro_json_time(buf, v, 1);
				else if (strcmp(logical, "timestamp-millis") == 0 ||
						 strcmp(logical, "local-timestamp-millis") == 0)
				{
					if (v > INT64_MAX / 1000 || v < INT64_MIN / 1000)
					{
						snprintf(err, errlen, "%s %" PRId64 " is out of range", logical, v);
						return -1;
					}
					avro_json_timestamp(buf, v * 1000, logical[0] == 't');
				}
				else if (strcmp(logical, "timestamp-micros") == 0 ||
						 strcmp(logical, "local-timestamp-micros") == 0)
					avro_json_timestamp(buf, v, logical[0] == 't');
				else
					avro_json_printf(buf, "%" PRId64, v);
				break;
			}
		case AVRO_FLOAT:
		case AVRO_DOUBLE:
			{
				double		v = 0;
				float		f = 0;

				if (avro_value_get_type(value) == AVRO_FLOAT)
				{
					avro_value_get_float(value, &f);
					v = f;
				}
				else
					avro_value_get_double(value, &v);
				if (isnan(v))
					avro_json_puts(buf, "\"NaN\"");
				else if (isinf(v))
					avro_json_puts(buf, v > 0 ? "\"Infinity\"" : "\"-Infinity\"");
				else
					avro_json_shortest(buf, v, avro_value_get_type(value) == AVRO_FLOAT);
				break;
			}
		case AVRO_STRING:
			{
				const char *str = NULL;
				size_t		size = 0;

				avro_value_get_string(value, &str, &size);
				/* size counts the terminating NUL */
				avro_json_string(buf, str ? str : "", size ? size - 1 : 0);
				break;
			}
		case AVRO_BYTES:
		case AVRO_FIXED:
			{
				const void *bytes = NULL;
				size_t		size = 0;

				if (avro_value_get_type(value) == AVRO_BYTES)
					avro_value_get_bytes(value, &bytes, &size);
				else
					avro_value_get_fixed(value, &bytes, &size);
				if (strcmp(logical, "decimal") == 0)
				{
					json_t	   *scale = json_object_get(node, "scale");
					json_int_t	sc = scale ? json_integer_value(scale) : 0;

					if (sc < 0 || sc > 1000)
					{
						snprintf(err, errlen, "decimal scale %lld is not supported", (long long) sc);
						return -1;
					}
					avro_json_decimal(buf, bytes, size, (int) sc);
				}
				else
					avro_json_base64(buf, bytes, size);
				break;
			}
		case AVRO_ENUM:
			{
				int			symbol = 0;
				const char *name;

				avro_value_get_enum(value, &symbol);
				name = symbol < 0 ||
					symbol >= avro_schema_enum_number_of_symbols(avro_value_get_schema(value)) ?
					NULL : avro_schema_enum_get(avro_value_get_schema(value), symbol);
				if (name == NULL)
				{
					snprintf(err, errlen, "enum symbol %d is not in the schema", symbol);
					return -1;
				}
				avro_json_string(buf, name, strlen(name));
				break;
			}
		case AVRO_ARRAY:
		case AVRO_MAP:
			{
				int			is_map = avro_value_get_type(value) == AVRO_MAP;
				json_t	   *inner = json_object_get(node, is_map ? "values" : "items");

				avro_value_get_size(value, &n);
				avro_json_put(buf, is_map ? "{" : "[", 1);
				for (i = 0; i < n; i++)
				{
					avro_value_t elem;
					const char *key = NULL;

					if (avro_value_get_by_index(value, i, &elem, &key) != 0)
					{
						snprintf(err, errlen, "%s", avro_strerror());
						return -1;
					}
					if (i > 0)
						avro_json_put(buf, ",", 1);
					if (is_map)
					{
						avro_json_string(buf, key ? key : "", key ? strlen(key) : 0);
						avro_json_put(buf, ":", 1);
					}
					if (avro_json_write(s, &elem, inner, buf, depth + 1, err, errlen) != 0)
						return -1;
				}
				avro_json_put(buf, is_map ? "}" : "]", 1);
				break;
			}
		case AVRO_RECORD:
			{
				json_t	   *fields = json_object_get(node, "fields");

				avro_value_get_size(value, &n);
				avro_json_put(buf, "{", 1);
				for (i = 0; i < n; i++)
				{
					avro_value_t field;
					const char *name = NULL;

					if (avro_value_get_by_index(value, i, &field, &name) != 0)
					{
						snprintf(err, errlen, "%s", avro_strerror());
						return -1;
					}
					if (i > 0)
						avro_json_put(buf, ",", 1);
					avro_json_string(buf, name ? name : "", name ? strlen(name) : 0);
					avro_json_put(buf, ":", 1);
					if (avro_json_write(s, &field,
										json_object_get(json_array_get(fields, i), "type"),
										buf, depth + 1, err, errlen) != 0)
						return -1;
				}
				avro_json_put(buf, "}", 1);
				break;
			}
		case AVRO_UNION:
			{
				int			branch_index = 0;
				avro_value_t branch;

				if (avro_value_get_discriminant(value, &branch_index) != 0 ||
					avro_value_get_current_branch(value, &branch) != 0)
				{
					snprintf(err, errlen, "%s", avro_strerror());
					return -1;
				}
				return avro_json_write(s, &branch,
									   json_is_array(node) ?
									   json_array_get(node, branch_index) : NULL,
									   buf, depth + 1, err, errlen);
			}
		default:
			snprintf(err, errlen, "Avro type %d is not supported", (int) avro_value_get_type(value));
			return -1;
	}
	return 0;
}

/*
 * avro_json_compile
 *		A writer schema, ready to decode with: NULL with err filled when
 *		the text is not an Avro schema avro-c accepts.
 */
avro_json_schema *
avro_json_compile(const char *text, size_t len, char *err, size_t errlen)
{
	avro_json_schema *s = calloc(1, sizeof(*s));
	json_error_t jerr;

	if (s == NULL)
	{
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (avro_schema_from_json_length(text, len, &s->avro) != 0)
	{
		snprintf(err, errlen, "not an Avro schema avro-c accepts: %s", avro_strerror());
		free(s);
		return NULL;
	}
	s->json = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
	if (s->json == NULL || avro_json_collect(s, s->json, NULL) != 0)
	{
		snprintf(err, errlen, "the schema's JSON could not be read: %s",
				 s->json ? "out of memory" : jerr.text);
		avro_json_free(s);
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
	int			i;

	if (s == NULL)
		return;
	if (s->avro)
		avro_schema_decref(s->avro);
	if (s->json)
		json_decref(s->json);
	for (i = 0; i < s->nnames; i++)
		free(s->names[i].name);
	free(s->names);
	free(s);
}

/*
 * avro_json_decode
 *		Decode one Avro value (data, len: the payload after the frame) with
 *		its writer schema and append it to out as JSON.  0 on success; -1
 *		with err filled when the bytes do not match the schema, or bytes
 *		are left after the value.
 */
int
avro_json_decode(const avro_json_schema *s, const void *data, size_t len,
				 avro_json_buf *out, char *err, size_t errlen)
{
	avro_value_iface_t *iface;
	avro_value_t value;
	avro_reader_t reader;
	char		extra;
	int			rc = -1;

	iface = avro_generic_class_from_schema(s->avro);
	if (iface == NULL)
	{
		snprintf(err, errlen, "avro-c: %s", avro_strerror());
		return -1;
	}
	if (avro_generic_value_new(iface, &value) != 0)
	{
		snprintf(err, errlen, "avro-c: %s", avro_strerror());
		avro_value_iface_decref(iface);
		return -1;
	}
	reader = avro_reader_memory(data, (int64_t) len);
	avro_alloc_read_begin(len);
	if (reader == NULL)
		snprintf(err, errlen, "out of memory");
	else if (avro_value_read(reader, &value) != 0)
		snprintf(err, errlen, "the Avro bytes do not match the schema: %s", avro_strerror());
	else if (avro_read(reader, &extra, 1) == 0)
		snprintf(err, errlen, "bytes are left after the Avro value");
	else if (avro_json_write(s, &value, s->json, out, 0, err, errlen) != 0)
		;
	else if (out->failed)
		snprintf(err, errlen, "out of memory");
	else
		rc = 0;
	if (reader)
		avro_reader_free(reader);
	avro_value_decref(&value);
	avro_alloc_read_end();
	avro_value_iface_decref(iface);
	return rc;
}
