/*-------------------------------------------------------------------------
 *
 * envelope.c
 *	  The event inside an outbox relay's envelope.
 *
 * Outbox relays rarely publish the bare event object:
 *
 * - Debezium's outbox event router, through Kafka Connect's JsonConverter,
 *   publishes the payload column as it is (the event object, or, when the
 *   column is text, a JSON string holding it), wrapped as
 *   {"schema": ..., "payload": ...} when schemas.enable is true.
 * - CloudEvents' Kafka binding, in binary mode, publishes the event as the
 *   value and the attributes as ce_* headers; in structured mode
 *   (content-type application/cloudevents+json) the value is
 *   {"specversion": ..., "type": ..., "data": {...}} or "data_base64".
 *
 * RoEnvelopeUnwrap finds the event's bytes in a value and hands them to the
 * one validator (event.c), which stays the only judge of an event: nothing
 * here decides whether an event is valid, only where it is.  A value that
 * does not fit its envelope is refused with a reason naming what is wrong,
 * and the batch function quarantines the message as received.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/base64.h"
#include "common/jsonapi.h"
#include "mb/pg_wchar.h"

#include "received_orders.h"
#include "../common/cloudevents_mode.h"

/* Top-level members of an envelope we look for. */
#define ENVELOPE_MAX_MEMBERS 4

typedef struct EnvelopeMember
{
	const char *name;
	bool		found;
	bool		duplicate;		/* given more than once */
	JsonTokenType type;			/* its value's first token */
	const char *start;			/* its value's bytes */
	const char *end;
	char	   *string;			/* de-escaped, when the value is a string */
} EnvelopeMember;

typedef struct EnvelopeScan
{
	JsonLexContext *lex;
	int			depth;
	JsonTokenType top;			/* the value's first token */
	EnvelopeMember members[ENVELOPE_MAX_MEMBERS];
	int			nmembers;
	int			current;		/* member whose value is being parsed, or -1 */
	char	   *top_string;		/* the value itself, when it is a string */
} EnvelopeScan;

static RoJsonCallbackResult EnvelopeObjectStart(void *state);
static RoJsonCallbackResult EnvelopeObjectEnd(void *state);
static RoJsonCallbackResult EnvelopeArrayStart(void *state);
static RoJsonCallbackResult EnvelopeArrayEnd(void *state);
static RoJsonCallbackResult EnvelopeFieldStart(void *state, char *fname, bool isnull);
static RoJsonCallbackResult EnvelopeFieldEnd(void *state, char *fname, bool isnull);
static RoJsonCallbackResult EnvelopeScalar(void *state, char *token, JsonTokenType tokentype);
static bool EnvelopeParse(RoEnvelope envelope, const char *data, int len,
						  EnvelopeScan *scan, RoEventError *err);
static EnvelopeMember *EnvelopeMemberOf(EnvelopeScan *scan, const char *name);
static bool EnvelopeFail(RoEnvelope envelope, RoEventError *err,
						 int sqlerrcode, char *message);
static const char *EnvelopeTokenName(JsonTokenType type);
static bool EnvelopeDebezium(const char *data, int len, EnvelopeScan *scan,
							 RoEnvelopeEvent *out, RoEventError *err);
static bool EnvelopeCloudEvents(const char *data, int len, EnvelopeScan *scan,
								RoEnvelopeEvent *out, RoEventError *err);

/*
 * RoEnvelopeFromName
 *		The envelope of a name given to the batch function; false for an
 *		unknown name.
 */
bool
RoEnvelopeFromName(const char *name, RoEnvelope *envelope)
{
	if (strcmp(name, "plain") == 0)
		*envelope = RO_ENVELOPE_PLAIN;
	else if (strcmp(name, "debezium") == 0)
		*envelope = RO_ENVELOPE_DEBEZIUM;
	else if (strcmp(name, "cloudevents") == 0)
		*envelope = RO_ENVELOPE_CLOUDEVENTS;
	else
		return false;
	return true;
}

/*
 * RoEnvelopeName
 *		The name of an envelope, as the batch function and the quarantine
 *		spell it.
 */
const char *
RoEnvelopeName(RoEnvelope envelope)
{
	switch (envelope)
	{
		case RO_ENVELOPE_PLAIN:
			return "plain";
		case RO_ENVELOPE_DEBEZIUM:
			return "debezium";
		case RO_ENVELOPE_CLOUDEVENTS:
			return "cloudevents";
	}
	return "plain";
}

/*
 * RoEnvelopeIsStructured
 *		Whether a content-type header's value announces a CloudEvents
 *		structured-mode message: the rule the feeder applies too
 *		(common/cloudevents_mode.h), so that both sides agree on every value.
 */
bool
RoEnvelopeIsStructured(const char *content_type, int len)
{
	return len >= 0 && ro_cloudevents_structured(content_type, (size_t) len);
}

/*
 * RoEnvelopeUnwrap
 *		Find the event in a Kafka value of the given envelope.  structured
 *		tells, for CloudEvents, whether the content-type header announced
 *		structured mode.  On success out->data and out->len are the event's
 *		bytes (the value itself, a part of it, or a decoded copy), and
 *		out->type the CloudEvents type attribute of a structured message
 *		(else NULL).  On failure err holds why (SQLSTATE 22P02 or 22023, a
 *		message starting "envelope NAME: ").
 *
 * The value must have passed RoEventCheckRaw first (size, UTF-8, nesting,
 * syntax): the parser used here recurses once per level.
 */
bool
RoEnvelopeUnwrap(RoEnvelope envelope, bool structured, const char *data,
				 int len, RoEnvelopeEvent *out, RoEventError *err)
{
	EnvelopeScan scan;

	out->data = data;
	out->len = len;
	out->type = NULL;
	out->type_len = 0;

	if (envelope == RO_ENVELOPE_PLAIN ||
		(envelope == RO_ENVELOPE_CLOUDEVENTS && !structured))
		return true;

	memset(&scan, 0, sizeof(scan));
	if (envelope == RO_ENVELOPE_DEBEZIUM)
	{
		scan.members[scan.nmembers++].name = "schema";
		scan.members[scan.nmembers++].name = "payload";
		if (!EnvelopeParse(envelope, data, len, &scan, err))
			return false;
		return EnvelopeDebezium(data, len, &scan, out, err);
	}

	scan.members[scan.nmembers++].name = "specversion";
	scan.members[scan.nmembers++].name = "type";
	scan.members[scan.nmembers++].name = "data";
	scan.members[scan.nmembers++].name = "data_base64";
	if (!EnvelopeParse(envelope, data, len, &scan, err))
		return false;
	return EnvelopeCloudEvents(data, len, &scan, out, err);
}

/*
 * EnvelopeDebezium
 *		The event of a Debezium outbox message: the value itself (an object),
 *		a JSON string holding it, or either under a {"schema", "payload"}
 *		wrapper (a top-level object with a "schema" member is the wrapper).
 */
static bool
EnvelopeDebezium(const char *data, int len, EnvelopeScan *scan,
				 RoEnvelopeEvent *out, RoEventError *err)
{
	EnvelopeMember *schema = EnvelopeMemberOf(scan, "schema");
	EnvelopeMember *payload = EnvelopeMemberOf(scan, "payload");

	if (scan->top == JSON_TOKEN_STRING)
	{
		out->data = scan->top_string;
		out->len = strlen(scan->top_string);
		return true;
	}
	if (scan->top != JSON_TOKEN_OBJECT_START)
		return EnvelopeFail(RO_ENVELOPE_DEBEZIUM, err, ERRCODE_INVALID_PARAMETER_VALUE,
							psprintf("the value is %s, not the event object, a JSON string holding it, or a {\"schema\", \"payload\"} wrapper",
									 EnvelopeTokenName(scan->top)));
	if (!schema->found)
		return true;			/* the event itself */

	if (!payload->found)
		return EnvelopeFail(RO_ENVELOPE_DEBEZIUM, err, ERRCODE_INVALID_PARAMETER_VALUE,
							pstrdup("\"payload\" is missing (the value has \"schema\", so it is Kafka Connect's {\"schema\", \"payload\"} wrapper)"));
	if (payload->type == JSON_TOKEN_STRING)
	{
		out->data = payload->string;
		out->len = strlen(payload->string);
		return true;
	}
	if (payload->type != JSON_TOKEN_OBJECT_START)
		return EnvelopeFail(RO_ENVELOPE_DEBEZIUM, err, ERRCODE_INVALID_PARAMETER_VALUE,
							psprintf("\"payload\" is %s, not the event object or a JSON string holding it",
									 EnvelopeTokenName(payload->type)));
	out->data = payload->start;
	out->len = payload->end - payload->start;
	return true;
}

/*
 * EnvelopeCloudEvents
 *		The event of a CloudEvents structured-mode message: "data" (the
 *		event object, or a JSON string holding it) or "data_base64" (its
 *		bytes in base64), with the "type" attribute.
 */
static bool
EnvelopeCloudEvents(const char *data, int len, EnvelopeScan *scan,
					RoEnvelopeEvent *out, RoEventError *err)
{
	EnvelopeMember *specversion = EnvelopeMemberOf(scan, "specversion");
	EnvelopeMember *type = EnvelopeMemberOf(scan, "type");
	EnvelopeMember *payload = EnvelopeMemberOf(scan, "data");
	EnvelopeMember *base64 = EnvelopeMemberOf(scan, "data_base64");

	if (scan->top != JSON_TOKEN_OBJECT_START)
		return EnvelopeFail(RO_ENVELOPE_CLOUDEVENTS, err, ERRCODE_INVALID_PARAMETER_VALUE,
							psprintf("the value is %s, not a structured-mode event object (the content-type header says application/cloudevents)",
									 EnvelopeTokenName(scan->top)));
	if (!specversion->found)
		return EnvelopeFail(RO_ENVELOPE_CLOUDEVENTS, err, ERRCODE_INVALID_PARAMETER_VALUE,
							pstrdup("\"specversion\" is missing"));
	if (specversion->type != JSON_TOKEN_STRING)
		return EnvelopeFail(RO_ENVELOPE_CLOUDEVENTS, err, ERRCODE_INVALID_PARAMETER_VALUE,
							psprintf("\"specversion\" is %s, not a string",
									 EnvelopeTokenName(specversion->type)));
	if (!type->found)
		return EnvelopeFail(RO_ENVELOPE_CLOUDEVENTS, err, ERRCODE_INVALID_PARAMETER_VALUE,
							pstrdup("\"type\" is missing"));
	if (type->type != JSON_TOKEN_STRING || type->string[0] == '\0')
		return EnvelopeFail(RO_ENVELOPE_CLOUDEVENTS, err, ERRCODE_INVALID_PARAMETER_VALUE,
							psprintf("\"type\" is %s, not a non-empty string",
									 type->type == JSON_TOKEN_STRING ? "empty" :
									 EnvelopeTokenName(type->type)));
	out->type = type->string;
	out->type_len = strlen(type->string);

	if (payload->found && base64->found)
		return EnvelopeFail(RO_ENVELOPE_CLOUDEVENTS, err, ERRCODE_INVALID_PARAMETER_VALUE,
							pstrdup("both \"data\" and \"data_base64\" are present"));
	if (base64->found)
	{
		int			srclen;
		int			maxlen;
		char	   *decoded;
		int			n;

		if (base64->type != JSON_TOKEN_STRING)
			return EnvelopeFail(RO_ENVELOPE_CLOUDEVENTS, err, ERRCODE_INVALID_PARAMETER_VALUE,
								psprintf("\"data_base64\" is %s, not a string",
										 EnvelopeTokenName(base64->type)));
		srclen = strlen(base64->string);
		maxlen = pg_b64_dec_len(srclen);
		decoded = palloc(maxlen + 1);
		/* the destination is a char * up to 17, a uint8 * from 18 on */
		n = pg_b64_decode(base64->string, srclen, (void *) decoded, maxlen);
		if (n < 0)
			return EnvelopeFail(RO_ENVELOPE_CLOUDEVENTS, err, ERRCODE_INVALID_TEXT_REPRESENTATION,
								pstrdup("\"data_base64\" is not valid base64"));
		decoded[n] = '\0';
		out->data = decoded;
		out->len = n;
		return true;
	}
	if (!payload->found)
		return EnvelopeFail(RO_ENVELOPE_CLOUDEVENTS, err, ERRCODE_INVALID_PARAMETER_VALUE,
							pstrdup("\"data\" is missing (and there is no \"data_base64\")"));
	if (payload->type == JSON_TOKEN_STRING)
	{
		out->data = payload->string;
		out->len = strlen(payload->string);
		return true;
	}
	if (payload->type != JSON_TOKEN_OBJECT_START)
		return EnvelopeFail(RO_ENVELOPE_CLOUDEVENTS, err, ERRCODE_INVALID_PARAMETER_VALUE,
							psprintf("\"data\" is %s, not the event object or a JSON string holding it",
									 EnvelopeTokenName(payload->type)));
	out->data = payload->start;
	out->len = payload->end - payload->start;
	return true;
}

/*
 * EnvelopeParse
 *		One pass of PostgreSQL's JSON parser over the value, noting its first
 *		token and where the wanted top-level members are (their value's bytes,
 *		and the de-escaped text of a string).  A member given twice is
 *		refused: which one a relay meant cannot be told.
 */
static bool
EnvelopeParse(RoEnvelope envelope, const char *data, int len,
			  EnvelopeScan *scan, RoEventError *err)
{
	JsonSemAction sem;
	JsonParseErrorType result;

	memset(&sem, 0, sizeof(sem));
	sem.semstate = scan;
	sem.object_start = EnvelopeObjectStart;
	sem.object_end = EnvelopeObjectEnd;
	sem.array_start = EnvelopeArrayStart;
	sem.array_end = EnvelopeArrayEnd;
	sem.object_field_start = EnvelopeFieldStart;
	sem.object_field_end = EnvelopeFieldEnd;
	sem.scalar = EnvelopeScalar;

	scan->current = -1;
	scan->top = JSON_TOKEN_INVALID;
	scan->lex = RoMakeJsonLexContext(data, len, true);
	result = pg_parse_json(scan->lex, &sem);
	if (result != JSON_SUCCESS)
		return EnvelopeFail(envelope, err, ERRCODE_INVALID_TEXT_REPRESENTATION,
							psprintf("the value is not valid JSON: %s",
									 json_errdetail(result, scan->lex)));
	for (int i = 0; i < scan->nmembers; i++)
		if (scan->members[i].duplicate)
			return EnvelopeFail(envelope, err, ERRCODE_INVALID_PARAMETER_VALUE,
								psprintf("\"%s\" is given more than once",
										 scan->members[i].name));
	return true;
}

static void
EnvelopeFirstToken(EnvelopeScan *scan, JsonTokenType type)
{
	if (scan->top == JSON_TOKEN_INVALID)
		scan->top = type;
}

static RoJsonCallbackResult
EnvelopeObjectStart(void *state)
{
	EnvelopeScan *scan = state;

	EnvelopeFirstToken(scan, JSON_TOKEN_OBJECT_START);
	scan->depth++;

	return RO_JSON_CALLBACK_DONE;
}

static RoJsonCallbackResult
EnvelopeObjectEnd(void *state)
{
	((EnvelopeScan *) state)->depth--;

	return RO_JSON_CALLBACK_DONE;
}

static RoJsonCallbackResult
EnvelopeArrayStart(void *state)
{
	EnvelopeScan *scan = state;

	EnvelopeFirstToken(scan, JSON_TOKEN_ARRAY_START);
	scan->depth++;

	return RO_JSON_CALLBACK_DONE;
}

static RoJsonCallbackResult
EnvelopeArrayEnd(void *state)
{
	((EnvelopeScan *) state)->depth--;

	return RO_JSON_CALLBACK_DONE;
}

/*
 * At a top-level member's start the lexer has just read the first token of
 * its value (token_start); at its end, the token after the value
 * (prev_token_terminator ends the value).
 */
static RoJsonCallbackResult
EnvelopeFieldStart(void *state, char *fname, bool isnull)
{
	EnvelopeScan *scan = state;
	EnvelopeMember *member;

	if (scan->depth != 1 || fname == NULL ||
		(member = EnvelopeMemberOf(scan, fname)) == NULL)
		return RO_JSON_CALLBACK_DONE;
	if (member->found)
	{
		member->duplicate = true;
		return RO_JSON_CALLBACK_DONE;
	}
	member->found = true;
	member->type = scan->lex->token_type;
	member->start = scan->lex->token_start;
	scan->current = member - scan->members;

	return RO_JSON_CALLBACK_DONE;
}

static RoJsonCallbackResult
EnvelopeFieldEnd(void *state, char *fname, bool isnull)
{
	EnvelopeScan *scan = state;

	if (scan->depth == 1 && scan->current >= 0)
	{
		scan->members[scan->current].end = scan->lex->prev_token_terminator;
		scan->current = -1;
	}

	return RO_JSON_CALLBACK_DONE;
}

static RoJsonCallbackResult
EnvelopeScalar(void *state, char *token, JsonTokenType tokentype)
{
	EnvelopeScan *scan = state;

	if (scan->depth == 0)
	{
		EnvelopeFirstToken(scan, tokentype);
		if (tokentype == JSON_TOKEN_STRING)
			scan->top_string = token;
	}
	else if (scan->depth == 1 && scan->current >= 0 &&
			 tokentype == JSON_TOKEN_STRING)
		scan->members[scan->current].string = token;

	return RO_JSON_CALLBACK_DONE;
}

static EnvelopeMember *
EnvelopeMemberOf(EnvelopeScan *scan, const char *name)
{
	for (int i = 0; i < scan->nmembers; i++)
		if (strcmp(scan->members[i].name, name) == 0)
			return &scan->members[i];
	return NULL;
}

static bool
EnvelopeFail(RoEnvelope envelope, RoEventError *err, int sqlerrcode,
			 char *message)
{
	err->sqlerrcode = sqlerrcode;
	err->message = psprintf("envelope %s: %s", RoEnvelopeName(envelope), message);
	err->detail = NULL;
	return false;
}

static const char *
EnvelopeTokenName(JsonTokenType type)
{
	switch (type)
	{
		case JSON_TOKEN_OBJECT_START:
			return "an object";
		case JSON_TOKEN_ARRAY_START:
			return "an array";
		case JSON_TOKEN_STRING:
			return "a string";
		case JSON_TOKEN_NUMBER:
			return "a number";
		case JSON_TOKEN_TRUE:
		case JSON_TOKEN_FALSE:
			return "a boolean";
		case JSON_TOKEN_NULL:
			return "null";
		default:
			break;
	}
	return "not JSON";
}
