/*-------------------------------------------------------------------------
 *
 * event_parse.c
 *	  One JSON pass per event in the batch function: the parse that builds
 *	  the jsonb value also finds the syntax errors, and reports them
 *	  instead of throwing.
 *
 * Two passes lex every value twice: a syntax pass that
 * cannot throw (RoEventCheckRaw), then jsonb's input function.  Here the
 * JSON parser runs once with jsonb's own input callbacks (jsonb.c keeps
 * them static up to PostgreSQL 18, so they are written again below, as 15
 * has them), and a syntax error comes back as pg_parse_json's result.
 * Later majors offer no replacement that keeps the verdicts below:
 * jsonb_in's soft errors (16+) report a lone surrogate with the SQLSTATE
 * and message of a syntax error.
 *
 * Verdicts and SQLSTATEs stay exactly those of the two passes:
 *	- a syntax error is rejected with 22P02 and the lexer's own detail,
 *	  as the syntax pass did;
 *	- what jsonb alone refuses (a lone UTF-16 surrogate, \u0000 --- the
 *	  byte checks send those to RoEventCheckRaw already ---, a number that
 *	  overflows numeric) could come before a syntax error later in the
 *	  value, where the two passes reported the syntax error: such a value
 *	  (an escape jsonb refuses, or any number with an exponent, the only
 *	  kind numeric's input may refuse below 1000 characters) goes through
 *	  the two passes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "received_orders.h"

/* A number token this long, or with an exponent, is left to jsonb_in. */
#define EVENT_SAFE_NUMBER_CHARS 1000

typedef struct EventJsonbState
{
	JsonbParseState *parse_state;
	JsonbValue *res;
	bool		deferred;		/* a number left to the two passes */
} EventJsonbState;

static RoJsonCallbackResult EventObjectStart(void *pstate);
static RoJsonCallbackResult EventObjectEnd(void *pstate);
static RoJsonCallbackResult EventArrayStart(void *pstate);
static RoJsonCallbackResult EventArrayEnd(void *pstate);
static RoJsonCallbackResult EventObjectFieldStart(void *pstate, char *fname, bool isnull);
static RoJsonCallbackResult EventScalar(void *pstate, char *token, JsonTokenType tokentype);
static int	EventCheckStringLen(size_t len);
static bool EventJsonbRefusesEscape(JsonParseErrorType result);

/*
 * RoEventParse
 *		The jsonb value of bytes that passed RoEventCheckEncoding, in one
 *		pass.  NULL with *err filled when the value is nested too deep
 *		(RoEventCheckNesting, unless the fast path took it), is not valid
 *		JSON (22P02, the lexer's detail) or, through the two passes, when
 *		RoEventCheckRaw refuses it.  Throws only what jsonb's own input
 *		throws, like RoEventParseRaw (the batch function's subtransaction
 *		contains it).
 */
Jsonb *
RoEventParse(const char *data, int len, RoEventError *err)
{
	JsonLexContext *lex;
	JsonSemAction sem;
	EventJsonbState state;
	JsonParseErrorType result;
	Jsonb	   *fast;

	/* the common event: no escapes, no exponents (event_fast.c) */
	if ((fast = RoEventParseFast(data, len)) != NULL)
		return fast;
	/* PostgreSQL's parser recurses once per level: the depth first */
	if (!RoEventCheckNesting(data, len, err))
		return NULL;

	memset(&state, 0, sizeof(state));
	memset(&sem, 0, sizeof(sem));
	sem.semstate = &state;
	sem.object_start = EventObjectStart;
	sem.object_end = EventObjectEnd;
	sem.array_start = EventArrayStart;
	sem.array_end = EventArrayEnd;
	sem.object_field_start = EventObjectFieldStart;
	sem.scalar = EventScalar;

	lex = RoMakeJsonLexContext(data, len, true);
	result = pg_parse_json(lex, &sem);
	if (result == JSON_SUCCESS && !state.deferred)
		return JsonbValueToJsonb(state.res);
	if (result != JSON_SUCCESS && !EventJsonbRefusesEscape(result) &&
		!state.deferred)
	{
		err->sqlerrcode = ERRCODE_INVALID_TEXT_REPRESENTATION;
		err->message = pstrdup("event is not valid JSON");
		err->detail = json_errdetail(result, lex);
		return NULL;
	}
	/* the two passes decide, in their order */
	if (!RoEventCheckRaw(data, len, err))
		return NULL;
	return RoEventParseRaw(data, len);
}

/*
 * EventJsonbRefusesEscape
 *		Errors the lexer finds only while it de-escapes strings for jsonb:
 *		the syntax pass did not see them, jsonb_in threw them.
 */
static bool
EventJsonbRefusesEscape(JsonParseErrorType result)
{
	switch (result)
	{
		case JSON_UNICODE_CODE_POINT_ZERO:
		case JSON_UNICODE_HIGH_ESCAPE:
		case JSON_UNICODE_HIGH_SURROGATE:
		case JSON_UNICODE_LOW_SURROGATE:
			return true;
		default:
			return false;
	}
}

/*
 * The input callbacks of jsonb.c (jsonb_in_*), PostgreSQL 15; from 16 on
 * they return JSON_SUCCESS (RoJsonCallbackResult), and throw as 15 does.
 */
static RoJsonCallbackResult
EventObjectStart(void *pstate)
{
	EventJsonbState *state = pstate;

	state->res = pushJsonbValue(&state->parse_state, WJB_BEGIN_OBJECT, NULL);

	return RO_JSON_CALLBACK_DONE;
}

static RoJsonCallbackResult
EventObjectEnd(void *pstate)
{
	EventJsonbState *state = pstate;

	state->res = pushJsonbValue(&state->parse_state, WJB_END_OBJECT, NULL);

	return RO_JSON_CALLBACK_DONE;
}

static RoJsonCallbackResult
EventArrayStart(void *pstate)
{
	EventJsonbState *state = pstate;

	state->res = pushJsonbValue(&state->parse_state, WJB_BEGIN_ARRAY, NULL);

	return RO_JSON_CALLBACK_DONE;
}

static RoJsonCallbackResult
EventArrayEnd(void *pstate)
{
	EventJsonbState *state = pstate;

	state->res = pushJsonbValue(&state->parse_state, WJB_END_ARRAY, NULL);

	return RO_JSON_CALLBACK_DONE;
}

static RoJsonCallbackResult
EventObjectFieldStart(void *pstate, char *fname, bool isnull)
{
	EventJsonbState *state = pstate;
	JsonbValue	v;

	Assert(fname != NULL);
	v.type = jbvString;
	v.val.string.len = EventCheckStringLen(strlen(fname));
	v.val.string.val = fname;
	state->res = pushJsonbValue(&state->parse_state, WJB_KEY, &v);

	return RO_JSON_CALLBACK_DONE;
}

static RoJsonCallbackResult
EventScalar(void *pstate, char *token, JsonTokenType tokentype)
{
	EventJsonbState *state = pstate;
	JsonbValue	v;

	switch (tokentype)
	{
		case JSON_TOKEN_STRING:
			v.type = jbvString;
			v.val.string.len = EventCheckStringLen(strlen(token));
			v.val.string.val = token;
			break;
		case JSON_TOKEN_NUMBER:
			if (strpbrk(token, "eE") != NULL ||
				strlen(token) >= EVENT_SAFE_NUMBER_CHARS)
			{
				/* numeric_in might throw: the two passes decide */
				state->deferred = true;
				v.type = jbvNull;
				break;
			}
			v.type = jbvNumeric;
			v.val.numeric = DatumGetNumeric(DirectFunctionCall3(numeric_in,
																CStringGetDatum(token),
																ObjectIdGetDatum(InvalidOid),
																Int32GetDatum(-1)));
			break;
		case JSON_TOKEN_TRUE:
			v.type = jbvBool;
			v.val.boolean = true;
			break;
		case JSON_TOKEN_FALSE:
			v.type = jbvBool;
			v.val.boolean = false;
			break;
		case JSON_TOKEN_NULL:
			v.type = jbvNull;
			break;
		default:
			elog(ERROR, "invalid json token type");
			break;
	}

	if (state->parse_state == NULL)
	{
		/* a scalar alone: a raw-scalar array of one, as jsonb keeps it */
		JsonbValue	va;

		va.type = jbvArray;
		va.val.array.rawScalar = true;
		va.val.array.nElems = 1;
		state->res = pushJsonbValue(&state->parse_state, WJB_BEGIN_ARRAY, &va);
		state->res = pushJsonbValue(&state->parse_state, WJB_ELEM, &v);
		state->res = pushJsonbValue(&state->parse_state, WJB_END_ARRAY, NULL);
	}
	else
	{
		JsonbValue *o = &state->parse_state->contVal;

		switch (o->type)
		{
			case jbvArray:
				state->res = pushJsonbValue(&state->parse_state, WJB_ELEM, &v);
				break;
			case jbvObject:
				state->res = pushJsonbValue(&state->parse_state, WJB_VALUE, &v);
				break;
			default:
				elog(ERROR, "unexpected parent of nested structure");
		}
	}

	return RO_JSON_CALLBACK_DONE;
}

/*
 * EventCheckStringLen
 *		jsonb.c's checkStringLen: a string jsonb cannot hold is an error.
 */
static int
EventCheckStringLen(size_t len)
{
	if (len > JENTRY_OFFLENMASK)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("string too long to represent as jsonb string"),
				 errdetail("Due to an implementation restriction, jsonb strings cannot exceed %d bytes.",
						   JENTRY_OFFLENMASK)));
	return len;
}
