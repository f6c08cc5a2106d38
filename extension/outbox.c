/*-------------------------------------------------------------------------
 *
 * outbox.c
 *	  The outbox forms of the batch function: their options, and each value
 *	  opened before the validator (its frame, its event type, its envelope).
 *
 * The outbox form (eleven arguments) also takes how a relay wrapped the
 * events (envelope.c) and which event type to materialize: a message of
 * another type is skipped (its offset counts, nothing is stored), one whose
 * type cannot be told or whose envelope is broken is rejected and
 * quarantined as received, with its envelope and the headers that
 * identified it, so that replay_quarantined can open it the same way.
 *
 * The Schema Registry form (fifteen arguments) also takes what the
 * feeder decoded of each value framed by a Schema Registry serializer
 * (frame.c), or of an unframed value whose schema a __value_schema_id
 * header named by GUID; the quarantine keeps the bytes as received with
 * their schema id or GUID (quarantine.c), and a stored row records the
 * schema id (batch.c, store.c).
 *
 * Nothing here judges an event (event.c does): an element either goes on
 * to the validator with the bytes of its event, or is decided here,
 * skipped for its type or rejected (outcome.c).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "received_orders.h"

static bool OutboxSelectType(Batch *batch, BatchItem *item, const char *type,
							 int type_len);
static char *OutboxQuoteBytes(const char *data, int len);

/*
 * RoOutboxOptions
 *		The envelope, event type and type header of the outbox forms.
 */
void
RoOutboxOptions(FunctionCallInfo fcinfo, Batch *options_out)
{
	Batch		options;
	char	   *name;

	if (PG_ARGISNULL(6))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("envelope must not be null"),
				 errhint("Pass 'plain', 'debezium' or 'cloudevents'.")));
	memset(&options, 0, sizeof(options));
	options.enveloped = true;
	name = text_to_cstring(PG_GETARG_TEXT_PP(6));
	if (!RoEnvelopeFromName(name, &options.envelope))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown envelope %s", OutboxQuoteBytes(name, strlen(name))),
				 errhint("Pass 'plain', 'debezium' or 'cloudevents'.")));
	if (!PG_ARGISNULL(7))
	{
		options.event_type = PG_GETARG_TEXT_PP(7);
		if (VARSIZE_ANY_EXHDR(options.event_type) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("event_type must not be empty"),
					 errhint("Pass NULL to materialize every message, or the type to select.")));
	}
	if (options.envelope == RO_ENVELOPE_CLOUDEVENTS)
		options.type_header = pstrdup("ce_type");
	else if (!PG_ARGISNULL(8))
		options.type_header = text_to_cstring(PG_GETARG_TEXT_PP(8));
	else if (options.event_type != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("type_header must not be null when an event_type is given"),
				 errhint("Pass the name of the header message_types were read from.")));
	if (options.type_header != NULL &&
		(strlen(options.type_header) == 0 || strlen(options.type_header) > 255))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("type_header must have 1 to 255 bytes")));
	*options_out = options;
}

/*
 * RoOutboxOpenFrame
 *		For the Schema Registry form: item->data and item->len become the
 *		event's bytes (frame.c), and the element keeps its schema id for
 *		the quarantine.  Returns false when the element is rejected.
 */
bool
RoOutboxOpenFrame(Batch *batch, BatchItem *item, int i)
{
	const char *decoded = NULL;
	int			decoded_len = 0;
	char	   *decode_error = NULL;
	int32		given_id;
	RoEventError err;

	if (!batch->decoded_null[i])
	{
		bytea	   *value = DatumGetByteaPP(batch->decoded[i]);

		decoded = VARDATA_ANY(value);
		decoded_len = VARSIZE_ANY_EXHDR(value);
	}
	if (!batch->decode_errors_null[i])
		decode_error = TextDatumGetCString(batch->decode_errors[i]);
	if (!batch->schema_ids_null[i])
		given_id = DatumGetInt32(batch->schema_ids[i]);
	if (RoFrameOpen(item->data, item->len, decoded, decoded_len, decode_error,
					batch->schema_ids_null[i] ? NULL : &given_id,
					&item->schema_id, &item->has_schema_id,
					&item->data, &item->len, &err))
		return true;
	RoOutcomeReject(item, err.sqlerrcode, err.message, err.detail);
	return false;
}

/*
 * RoOutboxOpenEnvelope
 *		For the outbox form: decide an element by its type, then find its
 *		event in the envelope (item->data and item->len become the event's
 *		bytes, copied out when decoded).  Returns false when the element is
 *		decided (skipped for its type, or rejected), true when its event goes
 *		on to the validator.
 */
bool
RoOutboxOpenEnvelope(Batch *batch, BatchItem *item, int i)
{
	bool		structured = false;
	RoEnvelopeEvent found;
	RoEventError err;
	MemoryContext oldcontext;
	bool		ok;

	if (batch->envelope == RO_ENVELOPE_CLOUDEVENTS &&
		!batch->content_types_null[i])
	{
		bytea	   *content_type = DatumGetByteaPP(batch->content_types[i]);

		structured = RoEnvelopeIsStructured(VARDATA_ANY(content_type),
											VARSIZE_ANY_EXHDR(content_type));
	}
	/* the type in a header is known before the envelope is opened */
	if (!structured && batch->event_type != NULL)
	{
		bytea	   *type = batch->types_null[i] ? NULL :
			DatumGetByteaPP(batch->types[i]);

		if (!OutboxSelectType(batch, item, type ? VARDATA_ANY(type) : NULL,
							  type ? VARSIZE_ANY_EXHDR(type) : 0))
			return false;
	}
	if (batch->envelope == RO_ENVELOPE_PLAIN || (batch->envelope == RO_ENVELOPE_CLOUDEVENTS && !structured))
		return true;

	/* the envelope's parse garbage goes to scratch; the event is copied out */
	oldcontext = MemoryContextSwitchTo(batch->scratch);
	ok = RoEventCheckRaw(item->data, item->len, &err) &&
		RoEnvelopeUnwrap(batch->envelope, structured, item->data, item->len,
						 &found, &err);
	MemoryContextSwitchTo(oldcontext);
	if (!ok)
		RoOutcomeReject(item, err.sqlerrcode, err.message, err.detail);
	else if (structured && batch->event_type != NULL &&
			 !OutboxSelectType(batch, item, found.type, found.type_len))
		ok = false;
	else if (found.data < item->data || found.data >= item->data + item->len)
	{
		char	   *copy = palloc(found.len + 1);

		memcpy(copy, found.data, found.len);
		copy[found.len] = '\0';
		item->data = copy;
		item->len = found.len;
	}
	else
	{
		item->data = found.data;
		item->len = found.len;
	}
	MemoryContextReset(batch->scratch);
	return ok;
}

/*
 * OutboxSelectType
 *		With an event_type: go on with an element of that type (true); skip
 *		one of another type, reject one whose type cannot be told (false).
 *		type is NULL when the element has none.
 */
static bool
OutboxSelectType(Batch *batch, BatchItem *item, const char *type, int type_len)
{
	char	   *other;

	if (type == NULL)
	{
		RoOutcomeReject(item, ERRCODE_INVALID_PARAMETER_VALUE,
					  psprintf("header %s is missing: the message's type cannot be told (event_type %s)",
							   OutboxQuoteBytes(batch->type_header, strlen(batch->type_header)),
							   OutboxQuoteBytes(VARDATA_ANY(batch->event_type),
												VARSIZE_ANY_EXHDR(batch->event_type))),
					  NULL);
		return false;
	}
	other = RoOutboxOtherType(batch, type, type_len);
	if (other == NULL)
		return true;
	item->state = BATCH_DECIDED;
	item->outcome = RO_OUTCOME_SKIPPED;
	item->message = other;
	return false;
}

/*
 * RoOutboxOtherType
 *		NULL when type is the selected event_type, byte for byte; else the
 *		reason a message of that type is skipped.
 */
char *
RoOutboxOtherType(Batch *batch, const char *type, int type_len)
{
	int			len = VARSIZE_ANY_EXHDR(batch->event_type);

	if (type_len == len && memcmp(type, VARDATA_ANY(batch->event_type), len) == 0)
		return NULL;
	return RoOutcomeClip(psprintf("event type %s is not selected (event_type %s)",
							  OutboxQuoteBytes(type, type_len),
							  OutboxQuoteBytes(VARDATA_ANY(batch->event_type), len)));
}

/*
 * OutboxQuoteBytes
 *		Bytes from a message, double-quoted for a reason: at most 64 bytes of
 *		them (cut between characters), or their hexadecimal form when they
 *		are not valid UTF-8.
 */
static char *
OutboxQuoteBytes(const char *data, int len)
{
	StringInfoData buf;
	int			shown = Min(len, 64);

	initStringInfo(&buf);
	if (pg_verifymbstr(data, len, true))
	{
		shown = pg_mbcliplen(data, len, shown);
		appendStringInfo(&buf, "\"%.*s\"", shown, data);
	}
	else
	{
		appendStringInfoString(&buf, "\\x");
		for (int i = 0; i < Min(len, 32); i++)
			appendStringInfo(&buf, "%02x", (unsigned char) data[i]);
		appendStringInfoString(&buf, " (not valid UTF-8)");
		shown = Min(len, 32);
	}
	if (shown < len)
		appendStringInfo(&buf, " (first %d of %d bytes)", shown, len);
	return buf.data;
}
