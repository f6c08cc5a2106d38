/*-------------------------------------------------------------------------
 *
 * replay.c
 *	  A quarantined message taken back through the checks and materialized
 *	  (replay_quarantined).
 *
 * The message is opened as the batch function opened it, in its Schema
 * Registry frame (frame.c) and its envelope (envelope.c), validated by the
 * one validator (event.c) and materialized like one event (outcome.c);
 * only then is its quarantine row deleted, leaving a record of the replay
 * that quarantine_summary counts (store.c).  Whatever fails
 * raises, with a hint saying what to repair, and nothing changes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"

#include "received_orders.h"

/*
 * RoReplayQuarantined
 *		The work of replay_quarantined(id): the outcome, inserted or
 *		duplicate, once the row is deleted.
 */
RoOutcome
RoReplayQuarantined(int64 id)
{
	bytea	   *raw_value;
	const char *data;
	int			len;
	int32		schema_id;
	bool		has_schema_id;
	char	   *schema_guid;
	int64		received_bytes;
	char	   *envelope_name;
	char	   *content_type;
	RoEnvelope	envelope = RO_ENVELOPE_PLAIN;
	RoEnvelopeEvent found;
	char	   *hint;
	RoEventError err;
	RoEvent		event;
	bool		framed = false;
	RoOutcome	outcome;
	text	   *stored;

	SPI_connect();

	if (!RoStoreFetchQuarantined(id, &raw_value, &received_bytes,
								 &envelope_name, &content_type))
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("quarantined message %lld does not exist",
						(long long) id),
				 errhint("See received_orders.received_orders_quarantine for the ids.")));
	if (raw_value == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("quarantined message %lld has no value", (long long) id),
				 errhint("Set its raw_value to the repaired event, or delete the row.")));

	if (received_bytes >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("quarantined message %lld keeps only the first %d of its %lld bytes",
						(long long) id, (int) VARSIZE_ANY_EXHDR(raw_value),
						(long long) received_bytes),
				 errdetail("A value larger than received_orders.max_event_bytes is quarantined as its prefix, its length and its digest."),
				 errhint("Re-read it from Kafka at its coordinates after a superuser raised received_orders.max_event_bytes, or set raw_value to the whole repaired event and raw_value_bytes to NULL, then replay it.")));

	hint = psprintf("Repair raw_value of quarantined message %lld and replay it again; nothing was changed.",
					(long long) id);
	data = VARDATA_ANY(raw_value);
	len = VARSIZE_ANY_EXHDR(raw_value);

	/*
	 * A value framed by a Schema Registry serializer: its JSON after
	 * the frame, and the stored row records its schema id as the batch
	 * function's would.  A backend cannot fetch an Avro schema: such a row
	 * replays once an operator put the event's JSON in raw_value
	 * (value_schema_id NULL, and none on the stored row), which the hint
	 * says.  A value a __value_schema_id header named by its GUID is
	 * unframed: a JSON Schema value replays as received, an Avro one once
	 * its JSON is in raw_value (the hint says so, and to clear the GUID);
	 * its stored row has no schema id either way (a GUID is none).
	 */
	if (RoStoreFetchQuarantinedSchema(id, &schema_id, &has_schema_id,
									  &schema_guid) && !has_schema_id)
		hint = psprintf("Quarantined message %lld is a Schema Registry value whose schema a __value_schema_id header named (schema GUID %s): a JSON Schema value replays as received; for an Avro value, set raw_value to the event's JSON and value_schema_guid to NULL, then replay it; nothing was changed.",
						(long long) id, schema_guid);
	else if (has_schema_id)
	{
		int32		frame_id;
		bool		has_frame_id;

		hint = psprintf("Quarantined message %lld is a Schema Registry value (schema id %d): a JSON Schema value replays from its framed bytes; for an Avro value, set raw_value to the event's JSON and value_schema_id to NULL, then replay it; nothing was changed.",
						(long long) id, schema_id);
		if (!RoFrameOpen(data, len, NULL, 0, NULL, &schema_id, &frame_id,
						 &has_frame_id, &data, &len, &err))
			RoEventReportError(&err, hint);
		framed = true;
	}
	if (envelope_name != NULL && !RoEnvelopeFromName(envelope_name, &envelope))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("quarantined message %lld has an unknown envelope \"%s\"",
						(long long) id, envelope_name),
				 errhint("Set its envelope to 'plain', 'debezium' or 'cloudevents'.")));

	/*
	 * Opened as the batch function opened it: in its envelope (a CloudEvents
	 * message by its content-type), without selecting a type, since replaying
	 * it is the operator's decision that it is an order.
	 */
	if (!RoEventCheckRaw(data, len, &err) ||
		!RoEnvelopeUnwrap(envelope,
						  content_type != NULL &&
						  RoEnvelopeIsStructured(content_type, strlen(content_type)),
						  data, len, &found, &err) ||
		(found.data != data &&
		 !RoEventCheckRaw(found.data, found.len, &err)) ||
		!RoEventCheckFields(RoEventParseRaw(found.data, found.len),
							&event, &err))
		RoEventReportError(&err, hint);

	outcome = RoOutcomeInsertOne(&event, framed ? &schema_id : NULL, &stored);
	if (outcome == RO_OUTCOME_CONFLICT)
		RoOutcomeConflictReport(ERROR, &event, stored, false);
	RoStoreDeleteQuarantined(id, &event.order_id, outcome);

	SPI_finish();

	return outcome;
}
