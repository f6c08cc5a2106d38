/*-------------------------------------------------------------------------
 *
 * event_fast.c
 *	  The common event's jsonb value, built without PostgreSQL's JSON lexer.
 *
 * PostgreSQL 15's lexer copies every string byte by byte into a buffer
 * (appendStringInfoChar), then again into a token of its own; the parse of
 * a typical event spends about half its time there.  Most events are plain
 * JSON: strings without escapes, numbers without exponents.  Such a value is
 * read here in one pass, and its strings point into the Kafka value itself.
 *
 * This is a fast path, not a second parser.  It accepts a strict subset of
 * what jsonb_in accepts, and builds the same value: the same calls of
 * pushJsonbValue in the same order as jsonb's own input callbacks
 * (event_parse.c), numbers through numeric's input function.  On anything
 * else it gives up (NULL) and RoEventParse parses the value as before, so
 * that every error, its SQLSTATE and its detail stay those of PostgreSQL's
 * parser.  It gives up on:
 *	- a value that is not an object (events are objects);
 *	- a value nested more than RO_MAX_NESTING_DEPTH levels deep (the slow
 *	  path refuses it);
 *	- a string with a backslash or a byte below 0x20;
 *	- a number with an exponent, or longer than EVENT_FAST_NUMBER_CHARS,
 *	  or not of JSON's form;
 *	- a number or literal not followed by white space, ',', ']' or '}';
 *	- any other syntax error, or anything after the value but white space.
 * The caller has checked UTF-8 (RoEventCheckEncoding).  What this path
 * takes has no escape and is nested no deeper than RoEventCheckNesting
 * allows, so that check is left to the values it gives up on.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "received_orders.h"

/* Longer numbers (and any with an exponent) go to RoEventParse's path. */
#define EVENT_FAST_NUMBER_CHARS 64

/* JSON's white space, as PostgreSQL's lexer skips it */
#define EVENT_FAST_SPACE(c) ((c) == ' ' || (c) == '\t' || (c) == '\n' || (c) == '\r')

static const char *EventFastSkip(const char *p, const char *end);
static const char *EventFastString(const char *p, const char *end, JsonbValue *v);
static const char *EventFastNumber(const char *p, const char *end, JsonbValue *v);
static const char *EventFastLiteral(const char *p, const char *end, JsonbValue *v);
static bool EventFastEndsToken(const char *p, const char *end);

/*
 * RoEventParseFast
 *		The jsonb value of bytes that passed RoEventCheckEncoding, when they
 *		are a plain JSON object (above); NULL when this path gives up.
 */
Jsonb *
RoEventParseFast(const char *data, int len)
{
	const char *p = data;
	const char *end = data + len;
	JsonbParseState *state = NULL;
	JsonbValue *res = NULL;
	JsonbValue	v;
	int			depth = 0;

	p = EventFastSkip(p, end);
	if (p == end || *p != '{')
		return NULL;

value:
	p = EventFastSkip(p, end);
	if (p == end)
		return NULL;
	/* a container opens a level (closed at next) */
	if ((*p == '{' || *p == '[') && ++depth > RO_MAX_NESTING_DEPTH)
		return NULL;
	switch (*p)
	{
		case '{':
			res = pushJsonbValue(&state, WJB_BEGIN_OBJECT, NULL);
			p = EventFastSkip(p + 1, end);
			/* an empty object: next closes it */
			if (p < end && *p == '}')
				goto next;
			goto key;
		case '[':
			res = pushJsonbValue(&state, WJB_BEGIN_ARRAY, NULL);
			p = EventFastSkip(p + 1, end);
			if (p < end && *p == ']')
				goto next;
			goto value;
		case '"':
			p = EventFastString(p, end, &v);
			break;
		case 't':
		case 'f':
		case 'n':
			p = EventFastLiteral(p, end, &v);
			break;
		default:
			p = EventFastNumber(p, end, &v);
			break;
	}
	if (p == NULL)
		return NULL;
	/* a scalar: the top level is an object, so it has a container */
	res = pushJsonbValue(&state,
						 state->contVal.type == jbvArray ? WJB_ELEM : WJB_VALUE,
						 &v);

next:
	p = EventFastSkip(p, end);
	if (state == NULL)
		return p == end ? JsonbValueToJsonb(res) : NULL;
	if (p == end)
		return NULL;
	if (state->contVal.type == jbvObject)
	{
		if (*p == ',')
		{
			p++;
			goto key;
		}
		if (*p != '}')
			return NULL;
		res = pushJsonbValue(&state, WJB_END_OBJECT, NULL);
	}
	else
	{
		if (*p == ',')
		{
			p++;
			goto value;
		}
		if (*p != ']')
			return NULL;
		res = pushJsonbValue(&state, WJB_END_ARRAY, NULL);
	}
	depth--;
	p++;
	goto next;

key:
	p = EventFastSkip(p, end);
	if (p == end || *p != '"' || (p = EventFastString(p, end, &v)) == NULL)
		return NULL;
	res = pushJsonbValue(&state, WJB_KEY, &v);
	p = EventFastSkip(p, end);
	if (p == end || *p != ':')
		return NULL;
	p++;
	goto value;
}

static const char *
EventFastSkip(const char *p, const char *end)
{
	while (p < end && EVENT_FAST_SPACE(*p))
		p++;
	return p;
}

/*
 * EventFastString
 *		The string starting at the quote p: *v points into the value.  NULL
 *		for an escape, a control character or no closing quote.
 */
static const char *
EventFastString(const char *p, const char *end, JsonbValue *v)
{
	const char *start = ++p;

	for (; p < end; p++)
	{
		unsigned char c = (unsigned char) *p;

		if (c == '"')
		{
			if (p - start > JENTRY_OFFLENMASK)
				return NULL;
			v->type = jbvString;
			v->val.string.val = (char *) start;
			v->val.string.len = (int) (p - start);
			return p + 1;
		}
		if (c == '\\' || c < 0x20)
			return NULL;
	}
	return NULL;
}

/*
 * EventFastNumber
 *		-?(0|[1-9][0-9]*)(.[0-9]+)? and nothing that continues the token;
 *		its value from numeric's input function, as jsonb_in reads it.
 */
static const char *
EventFastNumber(const char *p, const char *end, JsonbValue *v)
{
	const char *start = p;
	char		buf[EVENT_FAST_NUMBER_CHARS + 1];

	if (p < end && *p == '-')
		p++;
	if (p == end || !isdigit((unsigned char) *p))
		return NULL;
	if (*p++ != '0')
		while (p < end && isdigit((unsigned char) *p))
			p++;
	if (p < end && *p == '.')
	{
		p++;
		if (p == end || !isdigit((unsigned char) *p))
			return NULL;
		while (p < end && isdigit((unsigned char) *p))
			p++;
	}
	if (!EventFastEndsToken(p, end) || p - start > EVENT_FAST_NUMBER_CHARS)
		return NULL;
	memcpy(buf, start, p - start);
	buf[p - start] = '\0';
	v->type = jbvNumeric;
	v->val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in,
														 CStringGetDatum(buf),
														 ObjectIdGetDatum(InvalidOid),
														 Int32GetDatum(-1)));
	return p;
}

/*
 * EventFastLiteral
 *		true, false or null, then nothing that continues the token.
 */
static const char *
EventFastLiteral(const char *p, const char *end, JsonbValue *v)
{
	static const struct
	{
		const char *word;
		int			len;
		enum jbvType type;
		bool		value;
	}			literals[] = {
		{"true", 4, jbvBool, true},
		{"false", 5, jbvBool, false},
		{"null", 4, jbvNull, false},
	};

	for (int i = 0; i < lengthof(literals); i++)
	{
		int			n = literals[i].len;

		if (end - p >= n && memcmp(p, literals[i].word, n) == 0 &&
			EventFastEndsToken(p + n, end))
		{
			v->type = literals[i].type;
			v->val.boolean = literals[i].value;
			return p + n;
		}
	}
	return NULL;
}

/* After a number or a literal: the end, white space, or what follows a value */
static bool
EventFastEndsToken(const char *p, const char *end)
{
	return p == end || EVENT_FAST_SPACE(*p) || *p == ',' || *p == ']' || *p == '}';
}
