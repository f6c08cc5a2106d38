/*-------------------------------------------------------------------------
 *
 * materialize.c
 *	  SQL entry points: materialize_order, materialize_orders (plain, with
 *	  a consumer group, which also records positions, the outbox form and
 *	  the Schema Registry form) and replay_quarantined.
 *
 * Each entry point reads its arguments and hands the work on.  A batch
 * goes, in order, through:
 *
 *	 batch.c		the batch engine: the arrays unpacked, every raw value
 *					checked, parsed and inserted (all at once, or by halves
 *					when that throws), one result row per element
 *	 outbox.c		the outbox forms: each value opened in its Schema
 *					Registry frame (frame.c) and its envelope (envelope.c),
 *					its event type selected
 *	 outcome.c		what became of each event: inserted, duplicate,
 *					conflict or rejected, and the reason
 *	 quarantine.c	the rejected and conflicting messages kept as received
 *	 positions.c	the consumer group's positions advanced
 *
 * replay.c takes a quarantined message back through the same checks;
 * event.c validates, store.c writes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "utils/lsyscache.h"

#include "received_orders.h"

PG_FUNCTION_INFO_V1(materialize_order);
PG_FUNCTION_INFO_V1(materialize_orders);
PG_FUNCTION_INFO_V1(materialize_orders_for_group);
PG_FUNCTION_INFO_V1(materialize_orders_enveloped);
PG_FUNCTION_INFO_V1(materialize_orders_framed);
PG_FUNCTION_INFO_V1(replay_quarantined);

/*
 * materialize_order(event jsonb) RETURNS materialize_outcome
 *		Validate one event and insert it unless its order_id is stored.
 *
 * An invalid event raises its validation error and writes nothing.  A
 * conflict leaves the stored row alone and raises a WARNING naming both
 * references; without Kafka coordinates there is nothing to quarantine.
 */
Datum
materialize_order(PG_FUNCTION_ARGS)
{
	Jsonb	   *payload;
	RoEvent		event;
	RoEventError err;
	RoOutcome	outcome;
	text	   *stored;

	RoCheckVersion();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("event must not be null")));
	payload = PG_GETARG_JSONB_P(0);

	if (!RoEventCheckSize(VARSIZE(payload) - VARHDRSZ, &err) ||
		!RoEventCheckFields(payload, &event, &err))
		RoEventReportError(&err, NULL);

	SPI_connect();
	outcome = RoOutcomeInsertOne(&event, NULL, &stored);
	if (outcome == RO_OUTCOME_CONFLICT)
		RoOutcomeConflictReport(WARNING, &event, stored, false);
	SPI_finish();

	PG_RETURN_DATUM(RoOutcomeGetDatum(get_func_rettype(fcinfo->flinfo->fn_oid),
									  outcome));
}

/*
 * materialize_orders(kafka_values bytea[], kafka_topics text[],
 *					  kafka_partitions integer[], kafka_offsets bigint[],
 *					  kafka_keys bytea[])
 *		RETURNS TABLE(position, order_id, outcome, sqlstate, message)
 *
 * Materialize a batch of raw Kafka values in one statement.  Every element
 * gets one result row, in input order.  Rejected and conflicting elements
 * are quarantined in the caller's transaction with their coordinates.
 */
Datum
materialize_orders(PG_FUNCTION_ARGS)
{
	RoCheckVersion();
	return RoBatchRun(fcinfo, 0, NULL, NULL);
}

/*
 * materialize_orders(consumer_group text, kafka_values bytea[],
 *					  kafka_topics text[], kafka_partitions integer[],
 *					  kafka_offsets bigint[], kafka_keys bytea[])
 *		RETURNS TABLE(position, order_id, outcome, sqlstate, message)
 *
 * The batch function with a consumer group: as above, and in the same
 * transaction the next offset of every (topic, partition) of the batch is
 * recorded for the consumer group, never moving backwards.  Every element
 * must therefore carry its coordinates.  A NULL value is skipped (outcome skipped): a
 * tombstone is acknowledged by its position, not quarantined.
 */
Datum
materialize_orders_for_group(PG_FUNCTION_ARGS)
{
	RoCheckVersion();
	return RoBatchRun(fcinfo, 1, RoPositionsGroupArgument(fcinfo), NULL);
}

/*
 * materialize_orders(consumer_group text, kafka_values bytea[],
 *					  kafka_topics text[], kafka_partitions integer[],
 *					  kafka_offsets bigint[], kafka_keys bytea[],
 *					  envelope text, event_type text, type_header text,
 *					  message_types bytea[], content_types bytea[])
 *		RETURNS TABLE(position, order_id, outcome, sqlstate, message)
 *
 * The outbox form of the batch function: as the consumer group's form, with
 * each value opened in its envelope ('plain', 'debezium', 'cloudevents')
 * and, with an event_type, only messages of that type materialized.  The
 * type of a message is its message_types element (the value of the header
 * named type_header, as received), or for a CloudEvents structured-mode
 * message (its content_types element says application/cloudevents) the
 * "type" attribute of the value.  The comparison is exact, byte for byte.
 */
Datum
materialize_orders_enveloped(PG_FUNCTION_ARGS)
{
	text	   *consumer_group;
	Batch		options;

	RoCheckVersion();
	consumer_group = RoPositionsGroupArgument(fcinfo);
	RoOutboxOptions(fcinfo, &options);
	return RoBatchRun(fcinfo, 1, consumer_group, &options);
}

/*
 * materialize_orders(consumer_group text, kafka_values bytea[],
 *					  kafka_topics text[], kafka_partitions integer[],
 *					  kafka_offsets bigint[], kafka_keys bytea[],
 *					  envelope text, event_type text, type_header text,
 *					  message_types bytea[], content_types bytea[],
 *					  decoded_values bytea[], value_schema_ids integer[],
 *					  decode_errors text[], value_schema_guids uuid[])
 *		RETURNS TABLE(position, order_id, outcome, sqlstate, message)
 *
 * The Schema Registry form: as the outbox form, for values framed by
 * a Schema Registry serializer (frame.c).  An element's event is its
 * decoded_values element (the feeder decoded an Avro value), or the JSON
 * after the frame (a JSON Schema value); an element with a decode_errors
 * element is rejected with that reason.  kafka_values are the bytes as
 * received: the quarantine keeps them, with the schema id, or with the
 * value_schema_guids element (the GUID a __value_schema_id header named
 * for an unframed value); a stored row records its schema id
 * (received_orders.value_schema_id; none for a GUID).
 */
Datum
materialize_orders_framed(PG_FUNCTION_ARGS)
{
	text	   *consumer_group;
	Batch		options;

	RoCheckVersion();
	consumer_group = RoPositionsGroupArgument(fcinfo);
	RoOutboxOptions(fcinfo, &options);
	options.framed = true;
	return RoBatchRun(fcinfo, 1, consumer_group, &options);
}

/*
 * replay_quarantined(id bigint) RETURNS materialize_outcome
 *		Re-validate a quarantined message, materialize it and remove it from
 *		the quarantine, recording the replay.
 *
 * It returns inserted or duplicate.  A message still invalid raises its
 * validation error and one still conflicting raises unique_violation; then
 * nothing changes and the row stays for the operator.
 */
Datum
replay_quarantined(PG_FUNCTION_ARGS)
{
	int64		id;

	RoCheckVersion();
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("quarantine id must not be null")));
	id = PG_GETARG_INT64(0);

	PG_RETURN_DATUM(RoOutcomeGetDatum(get_func_rettype(fcinfo->flinfo->fn_oid),
									  RoReplayQuarantined(id)));
}
