/*-------------------------------------------------------------------------
 *
 * event.c
 *	  The one validator of OrderReceived events, for every entry point.
 *
 * Validation never throws: each check fills an RoEventError so that the
 * batch function can turn it into a result row and a quarantine row, while
 * the single-event functions raise it with RoEventReportError.  The checks
 * run in the order of SPEC §3: size, UTF-8, JSON syntax, object, orderId,
 * externalReference.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "received_orders.h"

/* How much of an offending value an error message quotes. */
#define RO_QUOTE_MAX_BYTES 64

static bool EventSetError(RoEventError *err, int sqlerrcode,
						  char *message, char *detail);
static bool EventCheckBytes(const char *data, int len, bool *has_nul_escape,
							RoEventError *err);
static bool EventScan(const char *data, int len, bool *has_nul_escape,
					  RoEventError *err);
static const char *EventJsonbTypeName(const JsonbValue *value);
static char *EventQuote(const char *str, int len);
static bool EventGetStringField(Jsonb *payload, const char *field,
								JsonbValue *value, RoEventError *err);
static int	EventHexValue(char c);

/*
 * EventSetError
 *		Fill *err and return false, so that checks end with
 *		"return EventSetError(...)".
 */
static bool
EventSetError(RoEventError *err, int sqlerrcode, char *message, char *detail)
{
	err->sqlerrcode = sqlerrcode;
	err->message = message;
	err->detail = detail;
	return false;
}

/*
 * RoEventCheckSize
 *		An event must not be larger than received_orders.max_event_bytes.
 */
bool
RoEventCheckSize(Size len, RoEventError *err)
{
	if (len > (Size) RoMaxEventBytes)
		return EventSetError(err, ERRCODE_PROGRAM_LIMIT_EXCEEDED,
							 psprintf("event is too large: %zu bytes, received_orders.max_event_bytes is %d",
									  len, RoMaxEventBytes),
							 pstrdup("A superuser can raise received_orders.max_event_bytes."));
	return true;
}

/*
 * RoEventCheckRaw
 *		Check the raw bytes of a Kafka value: size, UTF-8, nesting, JSON
 *		syntax, \u0000.
 *
 * After this returns true, RoEventParseRaw fails only on what jsonb alone
 * refuses (a number beyond numeric's range, a lone UTF-16 surrogate), which
 * the batch function's subtransaction contains.
 */
bool
RoEventCheckRaw(const char *data, int len, RoEventError *err)
{
	bool		has_nul_escape;
	JsonLexContext *lex;
	JsonParseErrorType result;

	if (!EventCheckBytes(data, len, &has_nul_escape, err))
		return false;

	/*
	 * Syntax only: without need_escapes the lexer does not copy strings, which
	 * is most of its cost; EventScan found any \u0000 already.
	 */
	lex = RoMakeJsonLexContext(data, len, false);
	result = pg_parse_json(lex, &nullSemAction);
	if (result != JSON_SUCCESS)
		return EventSetError(err, ERRCODE_INVALID_TEXT_REPRESENTATION,
							 pstrdup("event is not valid JSON"),
							 json_errdetail(result, lex));
	if (has_nul_escape)
		return EventSetError(err, ERRCODE_UNTRANSLATABLE_CHARACTER,
							 pstrdup("event contains \\u0000, which jsonb cannot store"),
							 NULL);
	return true;
}

/*
 * RoEventCheckEncoding
 *		The first checks of RoEventCheckRaw, before any JSON is read: size
 *		and UTF-8.  The batch function's parse (RoEventParse) does the rest:
 *		what its fast path takes is nested RO_MAX_NESTING_DEPTH levels at
 *		most and holds no escape; anything else gets RoEventCheckNesting
 *		before PostgreSQL's parser, which finds the syntax errors.
 */
bool
RoEventCheckEncoding(const char *data, int len, RoEventError *err)
{
	int			valid_bytes;

	if (!RoEventCheckSize((Size) len, err))
		return false;
	valid_bytes = pg_encoding_verifymbstr(PG_UTF8, data, len);
	if (valid_bytes != len)
		return EventSetError(err, ERRCODE_INVALID_TEXT_REPRESENTATION,
							 pstrdup("event is not valid UTF-8"),
							 psprintf("Invalid or NUL byte 0x%02x at byte %d.",
									  (unsigned char) data[valid_bytes],
									  valid_bytes + 1));
	return true;
}

/*
 * RoEventCheckNesting
 *		The check of RoEventCheckRaw between UTF-8 and syntax: nesting.  A
 *		value with a \u0000 escape gets RoEventCheckRaw whole (jsonb refuses
 *		it; the syntax pass says which error comes first).
 */
bool
RoEventCheckNesting(const char *data, int len, RoEventError *err)
{
	bool		has_nul_escape;

	if (!EventScan(data, len, &has_nul_escape, err))
		return false;
	if (has_nul_escape)
		return RoEventCheckRaw(data, len, err);
	return true;
}

/*
 * EventCheckBytes
 *		Size, UTF-8 and nesting; *has_nul_escape tells whether a string
 *		holds \u0000.
 */
static bool
EventCheckBytes(const char *data, int len, bool *has_nul_escape,
				RoEventError *err)
{
	if (!RoEventCheckEncoding(data, len, err))
		return false;
	return EventScan(data, len, has_nul_escape, err);
}

/*
 * EventScan
 *		One linear pass that refuses JSON nested deeper than
 *		RO_MAX_NESTING_DEPTH and notes a \u0000 escape in a string.
 *
 * The JSON parser recurses once per level; a megabyte of "[" would exhaust
 * the stack and raise an error that no element-level check could contain.
 */
static bool
EventScan(const char *data, int len, bool *has_nul_escape, RoEventError *err)
{
	int			depth = 0;
	bool		in_string = false;

	*has_nul_escape = false;
	for (int i = 0; i < len; i++)
	{
		char		c = data[i];

		if (in_string)
		{
			if (c == '\\')
			{
				if (len - i >= 6 && memcmp(data + i + 1, "u0000", 5) == 0)
					*has_nul_escape = true;
				i++;
			}
			else if (c == '"')
				in_string = false;
		}
		else if (c == '"')
			in_string = true;
		else if (c == '[' || c == '{')
		{
			if (++depth > RO_MAX_NESTING_DEPTH)
				return EventSetError(err, ERRCODE_STATEMENT_TOO_COMPLEX,
									 psprintf("event is nested more than %d levels deep",
											  RO_MAX_NESTING_DEPTH),
									 NULL);
		}
		else if (c == ']' || c == '}')
			depth--;
	}
	return true;
}

/*
 * RoEventParseRaw
 *		Turn raw bytes that passed RoEventCheckRaw into jsonb.
 */
Jsonb *
RoEventParseRaw(const char *data, int len)
{
	char	   *cstring = pnstrdup(data, len);
	Jsonb	   *payload;

	payload = DatumGetJsonbP(DirectFunctionCall1(jsonb_in,
												 CStringGetDatum(cstring)));
	pfree(cstring);
	return payload;
}

/*
 * RoEventCheckFields
 *		Check that the event is an object with a valid orderId and
 *		externalReference, and fill *event with them.
 */
bool
RoEventCheckFields(Jsonb *payload, RoEvent *event, RoEventError *err)
{
	JsonbValue	value;
	const char *reference;
	int			reference_len;
	bool		blank = true;
	int			chars;

	if (!JB_ROOT_IS_OBJECT(payload))
	{
		const char *type = "array";

		if (JB_ROOT_IS_SCALAR(payload) &&
			JsonbExtractScalar(&payload->root, &value))
			type = EventJsonbTypeName(&value);
		return EventSetError(err, ERRCODE_INVALID_PARAMETER_VALUE,
							 pstrdup("event is not a JSON object"),
							 psprintf("The event is a JSON %s; an OrderReceived event is an object with \"orderId\" and \"externalReference\".",
									  type));
	}

	if (!EventGetStringField(payload, "orderId", &value, err))
		return false;
	if (!RoEventParseUuid(value.val.string.val, value.val.string.len,
						  &event->order_id))
		return EventSetError(err, ERRCODE_INVALID_TEXT_REPRESENTATION,
							 psprintf("field \"orderId\" is not a valid UUID: \"%s\"",
									  EventQuote(value.val.string.val,
												 value.val.string.len)),
							 NULL);

	if (!EventGetStringField(payload, "externalReference", &value, err))
		return false;
	reference = value.val.string.val;
	reference_len = value.val.string.len;
	for (int i = 0; i < reference_len && blank; i++)
		blank = (reference[i] == ' ' || reference[i] == '\t' ||
				 reference[i] == '\n' || reference[i] == '\r' ||
				 reference[i] == '\f' || reference[i] == '\v');
	if (blank)
		return EventSetError(err, ERRCODE_INVALID_PARAMETER_VALUE,
							 pstrdup("field \"externalReference\" is blank"),
							 pstrdup("It must contain a non-blank character."));
	chars = pg_mbstrlen_with_len(reference, reference_len);
	if (chars > RO_MAX_EXTERNAL_REFERENCE_CHARS)
		return EventSetError(err, ERRCODE_STRING_DATA_RIGHT_TRUNCATION,
							 psprintf("field \"externalReference\" is longer than %d characters",
									  RO_MAX_EXTERNAL_REFERENCE_CHARS),
							 psprintf("It has %d characters.", chars));

	event->external_reference = cstring_to_text_with_len(reference,
														 reference_len);
	event->payload = payload;
	return true;
}

/*
 * EventGetStringField
 *		Fetch a top-level field that must be a JSON string.
 */
static bool
EventGetStringField(Jsonb *payload, const char *field, JsonbValue *value,
					RoEventError *err)
{
	if (getKeyJsonValueFromContainer(&payload->root, field, strlen(field),
									 value) == NULL)
		return EventSetError(err, ERRCODE_INVALID_PARAMETER_VALUE,
							 psprintf("field \"%s\" is missing", field),
							 NULL);
	if (value->type != jbvString)
		return EventSetError(err, ERRCODE_INVALID_PARAMETER_VALUE,
							 psprintf("field \"%s\" must be a string", field),
							 psprintf("It is a JSON %s.",
									  EventJsonbTypeName(value)));
	return true;
}

/*
 * EventJsonbTypeName
 *		The JSON type name of a value, for messages.
 */
static const char *
EventJsonbTypeName(const JsonbValue *value)
{
	switch (value->type)
	{
		case jbvNull:
			return "null";
		case jbvString:
			return "string";
		case jbvNumeric:
			return "number";
		case jbvBool:
			return "boolean";
		case jbvArray:
			return "array";
		case jbvObject:
			return "object";
		case jbvBinary:
			return JsonContainerIsObject(value->val.binary.data) ?
				"object" : "array";
		default:
			return "value";
	}
}

/*
 * EventQuote
 *		A bounded copy of an offending value for a message.
 */
static char *
EventQuote(const char *str, int len)
{
	if (len <= RO_QUOTE_MAX_BYTES)
		return pnstrdup(str, len);
	return psprintf("%s...",
					pnstrdup(str, pg_mbcliplen(str, len, RO_QUOTE_MAX_BYTES)));
}

/*
 * EventHexValue
 *		The value of one hex digit, or -1.
 */
static int
EventHexValue(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * RoEventParseUuid
 *		Parse a UUID in every spelling PostgreSQL's uuid input accepts,
 *		without raising an error.
 *
 * That is 32 hex digits of either case, optionally wrapped in braces, with
 * an optional hyphen after any group of four digits but the last.  Keeping
 * to uuid_in's grammar means "any spelling PostgreSQL accepts is the same
 * order" holds for the single and the batch paths alike.
 */
bool
RoEventParseUuid(const char *str, int len, pg_uuid_t *uuid)
{
	const char *p = str;
	const char *end = str + len;
	bool		braces = false;

	if (p < end && *p == '{')
	{
		braces = true;
		p++;
	}
	for (int i = 0; i < UUID_LEN; i++)
	{
		int			hi,
					lo;

		if (end - p < 2)
			return false;
		hi = EventHexValue(p[0]);
		lo = EventHexValue(p[1]);
		if (hi < 0 || lo < 0)
			return false;
		uuid->data[i] = (unsigned char) (hi << 4 | lo);
		p += 2;
		if (p < end && *p == '-' && i % 2 == 1 && i < UUID_LEN - 1)
			p++;
	}
	if (braces)
	{
		if (p >= end || *p != '}')
			return false;
		p++;
	}
	return p == end;
}

/*
 * RoEventReportError
 *		Raise a validation failure as an ERROR, with an optional hint.
 */
void
RoEventReportError(const RoEventError *err, const char *hint)
{
	ereport(ERROR,
			(errcode(err->sqlerrcode),
			 errmsg_internal("%s", err->message),
			 err->detail ? errdetail_internal("%s", err->detail) : 0,
			 hint ? errhint("%s", hint) : 0));
}
