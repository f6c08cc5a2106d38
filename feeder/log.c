/*-------------------------------------------------------------------------
 *
 * log.c
 *	  Structured key=value log lines on stderr, and password redaction of
 *	  libpq connection strings.
 *
 * Every line starts with ts=<UTC time, ms> level=<level> event=<name> and
 * continues with key=value fields; a value containing blanks, quotes, '='
 * or control characters is double-quoted with C-style escapes.  Lines are
 * written with one write(2), which keeps them whole when librdkafka's
 * threads log at the same time.
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "utf8.h"

static volatile log_level current_level = LOG_INFO;

static const char *const level_names[] = {
	"debug", "info", "warning", "error", "fatal"
};

/*
 * log_set_level / log_get_level
 *		The minimum level written; lines below it cost almost nothing.
 */
void
log_set_level(log_level level)
{
	current_level = level;
}

log_level
log_get_level(void)
{
	return current_level;
}

/*
 * log_parse_level
 *		Map a level name from --log-level to its value; 0 on success.
 */
int
log_parse_level(const char *name, log_level *level)
{
	int			i;

	for (i = 0; i <= LOG_FATAL; i++)
	{
		if (strcasecmp(name, level_names[i]) == 0)
		{
			*level = (log_level) i;
			return 0;
		}
	}
	if (strcasecmp(name, "warn") == 0)
	{
		*level = LOG_WARNING;
		return 0;
	}
	return -1;
}

/*
 * log_level_name
 *		The name printed in the level= field.
 */
const char *
log_level_name(log_level level)
{
	if (level < LOG_DEBUG || level > LOG_FATAL)
		return "unknown";
	return level_names[level];
}

/*
 * log_append
 *		Append raw bytes to a line, truncating silently when it is full (a
 *		truncated line is better than none).
 */
static void
log_append(log_line *line, const char *s, size_t n)
{
	size_t		room = sizeof(line->buf) - 1 - line->len;

	if (n > room)
		n = room;
	memcpy(line->buf + line->len, s, n);
	line->len += n;
	line->buf[line->len] = '\0';
}

/*
 * log_utf8_decode
 *		The length of the valid UTF-8 character at p (utf8_char_len's rules:
 *		no overlong form, no surrogate, at most U+10FFFF) and its code point
 *		in *cp; 0 when the bytes at p do not start one.  p is NUL-terminated,
 *		and a NUL is never a continuation byte, so at most what is left of
 *		p, up to 4 bytes, is looked at.
 */
static int
log_utf8_decode(const unsigned char *p, uint32_t *cp)
{
	size_t		n = utf8_char_len((const char *) p, strnlen((const char *) p, 4));
	size_t		i;
	uint32_t	c;

	if (n == 0)
		return 0;
	c = n == 1 ? p[0] : p[0] & (0xff >> (n + 1));
	for (i = 1; i < n; i++)
		c = (c << 6) | (p[i] & 0x3f);
	*cp = c;
	return (int) n;
}

/*
 * log_escaped_code_point
 *		Characters that must not reach a terminal or a log viewer as they
 *		are: C0 and C1 controls, DEL, the bidirectional formatting
 *		characters (which can make a line read differently from its bytes)
 *		and the Unicode line and paragraph separators.
 */
static int
log_escaped_code_point(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
		cp == 0x061c || cp == 0x200e || cp == 0x200f ||
		(cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/*
 * log_token
 *		The next token of value's output at p: its bytes in tok (an escape,
 *		or the character itself) and the input bytes it consumes.  Sets
 *		*escaped when the token is not the input as it is.
 */
static size_t
log_token(const unsigned char *p, char tok[12], size_t *toklen, int *escaped)
{
	uint32_t	cp;
	int			n = log_utf8_decode(p, &cp);

	*escaped = 1;
	if (n == 0)
	{
		*toklen = (size_t) snprintf(tok, 12, "\\x%02x", p[0]);
		return 1;
	}
	switch (cp)
	{
		case '"':
			*toklen = 2, memcpy(tok, "\\\"", 2);
			return 1;
		case '\\':
			*toklen = 2, memcpy(tok, "\\\\", 2);
			return 1;
		case '\n':
			*toklen = 2, memcpy(tok, "\\n", 2);
			return 1;
		case '\r':
			*toklen = 2, memcpy(tok, "\\r", 2);
			return 1;
		case '\t':
			*toklen = 2, memcpy(tok, "\\t", 2);
			return 1;
	}
	if (log_escaped_code_point(cp))
	{
		*toklen = (size_t) (cp < 0x80 ? snprintf(tok, 12, "\\x%02x", cp) :
							snprintf(tok, 12, "\\u%04x", cp));
		return (size_t) n;
	}
	*escaped = (cp == ' ' || cp == '=');	/* plain, but needs the quotes */
	memcpy(tok, p, (size_t) n);
	*toklen = (size_t) n;
	return (size_t) n;
}

/*
 * log_quote_value
 *		Write value into out as a log field value: bare when it is a plain
 *		token, double-quoted with escapes otherwise (controls, C1 controls,
 *		bidirectional formatting characters, invalid UTF-8 bytes; see
 *		log_token).  A value that does not fit in outlen is cut between
 *		characters, never inside a UTF-8 sequence or an escape, and ends with
 *		"..." inside its closing quote, so the fields after it stay whole.
 *		Returns the length written (without the terminating NUL).  Used by
 *		the log_kv_* functions and by the unit tests.
 */
size_t
log_quote_value(char *out, size_t outlen, const char *value)
{
	const unsigned char *p;
	char		tok[12];
	size_t		toklen,
				len = 0;
	size_t		total = 0;
	int			escaped,
				cut,
				needs_quotes = (value[0] == '\0');

	if (outlen == 0)
		return 0;
	for (p = (const unsigned char *) value; *p;)
	{
		p += log_token(p, tok, &toklen, &escaped);
		needs_quotes |= escaped;
		total += toklen;
	}
	cut = total + (needs_quotes ? 2 : 0) + 1 > outlen;
	if (cut)
		needs_quotes = 1;		/* "..." inside quotes */

	if (needs_quotes && outlen < 7)
	{
		out[0] = '\0';		/* no room for "\"...\"" */
		return 0;
	}
	if (needs_quotes)
		out[len++] = '"';
	for (p = (const unsigned char *) value; *p;)
	{
		size_t		used = log_token(p, tok, &toklen, &escaped);

		/* when cutting, keep room for the cut mark, the quote and the NUL */
		if (cut && len + toklen + 3 + 1 + 1 > outlen)
		{
			memcpy(out + len, "...", 3);
			len += 3;
			break;
		}
		memcpy(out + len, tok, toklen);
		len += toklen;
		p += used;
	}
	if (needs_quotes)
		out[len++] = '"';
	out[len] = '\0';
	return len;
}

/*
 * log_begin
 *		Start a line with its timestamp, level and event name.  A line below
 *		the current level is marked disabled and every later call on it is a
 *		no-op.
 */
void
log_begin(log_line *line, log_level level, const char *event)
{
	struct timeval tv;
	struct tm	tm;
	char		head[128];
	int			n;

	line->level = level;
	line->len = 0;
	line->buf[0] = '\0';
	line->enabled = (level >= current_level);
	if (!line->enabled)
		return;

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	n = snprintf(head, sizeof(head),
				 "ts=%04d-%02d-%02dT%02d:%02d:%02d.%03dZ level=%s event=",
				 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
				 tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (tv.tv_usec / 1000),
				 log_level_name(level));
	log_append(line, head, (size_t) n);
	log_append(line, event, strlen(event));
}

/*
 * log_kv_str
 *		Append " key=value", quoting the value as needed; NULL is written as
 *		an empty quoted string.  A value is cut at LOG_VALUE_MAX bytes, so
 *		that one long field (a reason, an error) never pushes the fields
 *		after it off the line.
 */
void
log_kv_str(log_line *line, const char *key, const char *value)
{
	char		quoted[LOG_VALUE_MAX];
	size_t		n;

	if (!line->enabled)
		return;
	log_append(line, " ", 1);
	log_append(line, key, strlen(key));
	log_append(line, "=", 1);
	n = log_quote_value(quoted, LOG_VALUE_MAX, value ? value : "");
	log_append(line, quoted, n);
}

/*
 * log_kv_int / log_kv_uint
 *		Append a numeric field.
 */
void
log_kv_int(log_line *line, const char *key, int64_t value)
{
	char		buf[32];

	if (!line->enabled)
		return;
	snprintf(buf, sizeof(buf), "%lld", (long long) value);
	log_kv_str(line, key, buf);
}

void
log_kv_uint(log_line *line, const char *key, uint64_t value)
{
	char		buf[32];

	if (!line->enabled)
		return;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long) value);
	log_kv_str(line, key, buf);
}

/*
 * log_kv_fmt
 *		Append a field whose value is formatted printf-style, then quoted.
 */
void
log_kv_fmt(log_line *line, const char *key, const char *fmt,...)
{
	char		buf[LOG_LINE_MAX];
	va_list		ap;

	if (!line->enabled)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	log_kv_str(line, key, buf);
}

/*
 * log_end
 *		Terminate the line and write it to stderr in one system call.
 */
void
log_end(log_line *line)
{
	size_t		off = 0;

	if (!line->enabled)
		return;
	if (line->len >= sizeof(line->buf) - 1)
		line->len = sizeof(line->buf) - 2;
	line->buf[line->len++] = '\n';
	while (off < line->len)
	{
		ssize_t		w = write(STDERR_FILENO, line->buf + off, line->len - off);

		if (w < 0)
		{
			if (errno == EINTR)
				continue;
			break;
		}
		off += (size_t) w;
	}
}

/*
 * log_simple
 *		One-call form for a line with an event and a msg field only.
 */
void
log_simple(log_level level, const char *event, const char *msg)
{
	log_line	line;

	log_begin(&line, level, event);
	if (msg)
		log_kv_str(&line, "msg", msg);
	log_end(&line);
}

/* ---------------------------------------------------------------------
 * Password redaction
 * --------------------------------------------------------------------- */

typedef struct redact_buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
} redact_buf;

/*
 * redact_put
 *		Append bytes to a growing buffer; aborts on out of memory because a
 *		half-redacted string must never be returned.
 */
static void
redact_put(redact_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap)
	{
		size_t		cap = b->cap ? b->cap : 64;

		while (b->len + n + 1 > cap)
			cap *= 2;
		b->data = realloc(b->data, cap);
		if (b->data == NULL)
			abort();
		b->cap = cap;
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

/*
 * redact_password_key
 *		If s starts with a secret keyword (password, sslpassword) followed by
 *		optional blanks and '=', return the length up to and including '=';
 *		else 0.
 */
static size_t
redact_password_key(const char *s)
{
	static const char *const keys[] = {"sslpassword", "password"};
	size_t		i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
	{
		size_t		klen = strlen(keys[i]);

		if (strncasecmp(s, keys[i], klen) == 0)
		{
			size_t		n = klen;

			while (s[n] == ' ' || s[n] == '\t')
				n++;
			if (s[n] == '=')
				return n + 1;
		}
	}
	return 0;
}

/*
 * redact_mask
 *		Append the mask that replaces a secret of span bytes: "***", or with
 *		fit set (in-place redaction, which must not grow the string) one
 *		'*' per byte when the secret is shorter than that.
 */
static void
redact_mask(redact_buf *b, size_t span, int fit)
{
	redact_put(b, "***", fit && span < 3 ? span : 3);
}

/*
 * redact_conninfo
 *		The scan behind log_redact_conninfo and log_redact_conninfo_inplace.
 *		It mirrors libpq's parsing rules: a quoted value ends at the
 *		unescaped closing quote, a bare value at a blank (backslash escapes
 *		the next character), a URI query value at '&', and URI credentials
 *		run from "://" to the first '@' before any '/'.
 */
static char *
redact_conninfo(const char *conninfo, int fit)
{
	redact_buf	b = {NULL, 0, 0};
	const char *p = conninfo ? conninfo : "";
	int			in_uri = 0;
	int			in_query = 0;

	redact_put(&b, "", 0);
	while (*p)
	{
		int			at_boundary = (p == conninfo || isspace((unsigned char) p[-1]) ||
								   (in_query && (p[-1] == '?' || p[-1] == '&')));
		size_t		keylen;

		if (strncmp(p, "://", 3) == 0)
		{
			const char *q = p + 3;

			in_uri = 1;
			in_query = 0;
			redact_put(&b, p, 3);
			while (*q && *q != '@' && *q != '/' && !isspace((unsigned char) *q))
				q++;
			if (*q == '@')
			{
				const char *colon = memchr(p + 3, ':', (size_t) (q - (p + 3)));

				if (colon)
				{
					redact_put(&b, p + 3, (size_t) (colon - (p + 3)) + 1);
					redact_mask(&b, (size_t) (q - colon - 1), fit);
				}
				else
					redact_put(&b, p + 3, (size_t) (q - (p + 3)));
				redact_put(&b, "@", 1);
				p = q + 1;
			}
			else
				p += 3;
			continue;
		}
		if (in_uri && *p == '?')
			in_query = 1;
		else if (isspace((unsigned char) *p))
			in_uri = in_query = 0;

		if (at_boundary && (keylen = redact_password_key(p)) > 0)
		{
			const char *secret;

			redact_put(&b, p, keylen);
			p += keylen;
			if (in_query)
			{
				secret = p;
				while (*p && *p != '&' && !isspace((unsigned char) *p))
					p++;
				redact_mask(&b, (size_t) (p - secret), fit);
				continue;
			}
			while (*p == ' ' || *p == '\t')
				p++;
			secret = p;
			if (*p == '\'')
			{
				p++;
				while (*p && *p != '\'')
				{
					if (*p == '\\' && p[1])
						p++;
					p++;
				}
				if (*p == '\'')
					p++;
			}
			else
			{
				while (*p && !isspace((unsigned char) *p))
				{
					if (*p == '\\' && p[1])
						p++;
					p++;
				}
			}
			redact_mask(&b, (size_t) (p - secret), fit);
			continue;
		}
		redact_put(&b, p, 1);
		p++;
	}
	return b.data;
}

/*
 * log_redact_conninfo
 *		Return a malloc'd copy of a libpq connection string (key=value form
 *		or postgresql:// URI, or free text containing one) with every
 *		password replaced by ***: password= and sslpassword= values, quoted
 *		or not, and the password part of URI user:password@ credentials.
 */
char *
log_redact_conninfo(const char *conninfo)
{
	return redact_conninfo(conninfo, 0);
}

/*
 * log_redact_conninfo_inplace
 *		Redact the passwords of a connection string where it lies, so that
 *		a --dsn argument stops showing in ps and /proc/PID/cmdline: the
 *		same scan as log_redact_conninfo, but a secret shorter than three
 *		bytes is masked byte for byte, so the result never grows; the
 *		bytes it frees at the end are zeroed.  Returns 1 when s changed.
 */
int
log_redact_conninfo_inplace(char *s)
{
	char	   *red;
	size_t		n,
				m;
	int			changed;

	if (s == NULL)
		return 0;
	red = redact_conninfo(s, 1);
	n = strlen(s);
	m = strlen(red);
	changed = m != n || memcmp(red, s, n) != 0;
	if (changed && m <= n)
	{
		memcpy(s, red, m);
		memset(s + m, 0, n - m);
	}
	free(red);
	return changed;
}
