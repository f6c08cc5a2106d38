/*-------------------------------------------------------------------------
 *
 * materialize.c
 *	  SQL entry points: materialize_order, materialize_orders (1.0's, and
 *	  1.1's with a consumer group, which also records positions) and
 *	  replay_quarantined.
 *
 * The guarantee is PostgreSQL's: order_id is the primary key and every write
 * is INSERT ... ON CONFLICT (order_id) DO NOTHING.  An event that did not
 * insert is a duplicate when the stored row has its externalReference, and a
 * conflict (an identity contradiction, left for an operator) when not.
 *
 * The batch function never fails for one bad element.  Raw checks that
 * cannot throw run first; parsing and the INSERT of all good elements
 * then run in a single subtransaction.  Should that throw (a DBA's trigger or
 * constraint, a number jsonb cannot hold), it is rolled back, the elements
 * it had not parsed yet are parsed each in a subtransaction of its own, and
 * the valid ones are inserted by halves, each half in a subtransaction, halving again where one
 * fails: the error is pinned on its element, which is quarantined, at a cost
 * of about 2 log2(n) subtransactions per bad element rather than n.
 * Only errors an event's data can cause (classes 22 and 23, and 54 while
 * parsing or when the call holds one event) are pinned on an element; any other error, transient or
 * systemic, fails the whole call, so that the caller retries and alerts
 * instead of quarantining every valid event.
 *
 * Given a consumer group (1.1), the batch function also records, in the
 * caller's transaction, the next offset of every (topic, partition) in the
 * batch: the database then knows how far the group got, in the same commit
 * as the rows.  A NULL value (a tombstone) is then skipped: it is not an
 * event, but its offset counts.
 *
 * The outbox form (1.1, eleven arguments) also takes how a relay wrapped the
 * events (envelope.c) and which event type to materialize: a message of
 * another type is skipped (its offset counts, nothing is stored), one whose
 * type cannot be told or whose envelope is broken is rejected and
 * quarantined as received, with its envelope and the headers that
 * identified it, so that replay_quarantined can open it the same way.
 *
 * The Schema Registry form (1.2, fourteen arguments) also takes what the
 * feeder decoded of each value framed by a Schema Registry serializer
 * (frame.c); the quarantine keeps the framed bytes with their schema id.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "received_orders.h"

PG_FUNCTION_INFO_V1(materialize_order);
PG_FUNCTION_INFO_V1(materialize_orders);
PG_FUNCTION_INFO_V1(materialize_orders_for_group);
PG_FUNCTION_INFO_V1(materialize_orders_enveloped);
PG_FUNCTION_INFO_V1(materialize_orders_framed);
PG_FUNCTION_INFO_V1(replay_quarantined);

/*
 * The distinct partitions BatchLastOfPartitions searches one by one; a
 * batch of more is sorted whole.
 */
#define BATCH_PARTITIONS_SCANNED 64

/* Where an element of a batch stands. */
typedef enum BatchState
{
	BATCH_PENDING,				/* raw bytes fine, not parsed yet */
	BATCH_CANDIDATE,			/* a valid event, to be inserted */
	BATCH_DECIDED				/* outcome known */
} BatchState;

/* One element of a batch: its Kafka message and what became of it. */
typedef struct BatchItem
{
	int			position;		/* 1-based, in the caller's arrays */
	const char *data;			/* raw value bytes */
	int			len;
	BatchState	state;
	RoEvent		event;			/* valid from BATCH_CANDIDATE on */
	bool		has_order_id;
	bool		inserted;
	RoOutcome	outcome;
	int			sqlerrcode;		/* 0 unless rejected or conflict */
	char	   *message;		/* NULL unless rejected or conflict */
	bool		has_schema_id;	/* the Schema Registry form: a framed value */
	int32		schema_id;
} BatchItem;

/* A batch: the elements and, for quarantine rows, their coordinates. */
typedef struct Batch
{
	int			count;
	text	   *consumer_group; /* NULL: 1.0's function, no positions */
	BatchItem  *items;
	BatchItem **candidates;		/* valid events sorted by order_id */
	int			ncandidates;
	int			range_start;	/* candidates the insert step writes */
	int			range_end;
	MemoryContext scratch;		/* parser work space, reset per element */
	Datum	   *values;
	bool	   *values_null;
	Datum	   *topics;
	bool	   *topics_null;
	Datum	   *partitions;
	bool	   *partitions_null;
	Datum	   *offsets;
	bool	   *offsets_null;
	Datum	   *keys;
	bool	   *keys_null;
	/* the outbox form only */
	bool		enveloped;
	RoEnvelope	envelope;
	text	   *event_type;		/* NULL: every message is an OrderReceived */
	char	   *type_header;	/* where message_types come from */
	Datum	   *types;
	bool	   *types_null;
	Datum	   *content_types;
	bool	   *content_types_null;
	/* the Schema Registry form only (frame.c) */
	bool		framed;
	Datum	   *decoded;
	bool	   *decoded_null;
	Datum	   *schema_ids;
	bool	   *schema_ids_null;
	Datum	   *decode_errors;
	bool	   *decode_errors_null;
} Batch;

typedef void (*BatchStep) (Batch *batch, BatchItem *item);

static RoOutcome MaterializeOne(const RoEvent *event, text **stored);
static void MaterializeNotStored(const pg_uuid_t *order_id);
static char *MaterializeUuidText(const pg_uuid_t *uuid);
static bool MaterializeSameText(const text *a, const text *b);
static void MaterializeConflictReport(int elevel, const RoEvent *event,
									  const text *stored, bool quarantined);
static char *MaterializeConflictMessage(const RoEvent *event,
										const text *stored);
static void BatchDeconstruct(Batch *batch, FunctionCallInfo fcinfo, int argno,
							 const char *name, Oid elemtype, Datum **datums,
							 bool **nulls);
static void BatchReject(BatchItem *item, int sqlerrcode, const char *message,
						const char *detail);
static char *BatchClip(const char *s);
static bool BatchTry(BatchStep step, Batch *batch, BatchItem *item);
static void BatchParseItem(Batch *batch, BatchItem *item);
static void BatchSortCandidates(Batch *batch);
static void BatchParseAndInsertAll(Batch *batch, BatchItem *unused);
static void BatchInsertRangeStep(Batch *batch, BatchItem *unused);
static void BatchInsertByHalves(Batch *batch, int start, int end);
static void BatchResolveNotInserted(Batch *batch);
static void BatchQuarantine(Batch *batch);
static void BatchCheckBounds(Batch *batch);
static void BatchCheckCoordinates(Batch *batch);
static void BatchRecordPositions(Batch *batch);
static int	BatchComparePartitions(const void *a, const void *b, void *arg);
static bool BatchSamePartition(const Batch *batch, int x, int y);
static int	BatchLastOfPartitions(Batch *batch, int *last);
static int	BatchLastOfPartitionsSorted(Batch *batch, int *last);
static text *BatchGroupArgument(FunctionCallInfo fcinfo);
static bool BatchOpenEnvelope(Batch *batch, BatchItem *item, int i);
static bool BatchOpenFrame(Batch *batch, BatchItem *item, int i);
static void BatchOutboxOptions(FunctionCallInfo fcinfo, Batch *options);
static bool BatchSelectType(Batch *batch, BatchItem *item, const char *type,
							int type_len);
static char *BatchOtherType(Batch *batch, const char *type, int type_len);
static char *BatchQuoteBytes(const char *data, int len);
static char *BatchHeadersJson(Batch *batch, int i);
static Datum BatchRun(FunctionCallInfo fcinfo, int first_arg,
					  text *consumer_group, const Batch *options);
static int	BatchCompareCandidates(const void *a, const void *b);

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

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("event must not be null")));
	payload = PG_GETARG_JSONB_P(0);

	if (!RoEventCheckSize(VARSIZE(payload) - VARHDRSZ, &err) ||
		!RoEventCheckFields(payload, &event, &err))
		RoEventReportError(&err, NULL);

	SPI_connect();
	outcome = MaterializeOne(&event, &stored);
	if (outcome == RO_OUTCOME_CONFLICT)
		MaterializeConflictReport(WARNING, &event, stored, false);
	SPI_finish();

	PG_RETURN_DATUM(RoOutcomeGetDatum(get_func_rettype(fcinfo->flinfo->fn_oid),
									  outcome));
}

/*
 * MaterializeOne
 *		Insert one valid event; tell inserted, duplicate or conflict.
 *
 * When the INSERT did nothing, a second statement reads the stored row: in
 * READ COMMITTED it takes a new snapshot, so it sees the row of a concurrent
 * transaction that ON CONFLICT waited for.  *stored is set for a conflict.
 */
static RoOutcome
MaterializeOne(const RoEvent *event, text **stored)
{
	*stored = NULL;
	if (RoStoreInsertOne(event))
		return RO_OUTCOME_INSERTED;

	*stored = RoStoreLookupReference(&event->order_id);
	if (*stored == NULL)
		MaterializeNotStored(&event->order_id);
	if (MaterializeSameText(*stored, event->external_reference))
		return RO_OUTCOME_DUPLICATE;
	return RO_OUTCOME_CONFLICT;
}

/*
 * MaterializeNotStored
 *		An insert wrote nothing, yet no row of that order_id is there.  With
 *		a BEFORE INSERT row trigger or row level security on the table, that
 *		is what suppressed it, on every retry: a permanent error naming the
 *		cause (triggered_action_exception), never a retry loop.  Without
 *		either, the row was deleted meanwhile by a concurrent transaction: a
 *		retry succeeds (serialization_failure).
 */
static void
MaterializeNotStored(const pg_uuid_t *order_id)
{
	if (RoStoreInsertsSuppressible())
		ereport(ERROR,
				(errcode(ERRCODE_TRIGGERED_ACTION_EXCEPTION),
				 errmsg("order %s was not stored: the insert into %s.received_orders wrote no row",
						MaterializeUuidText(order_id), RO_SCHEMA),
				 errdetail("A BEFORE INSERT trigger on the table returned NULL, or row level security hid the row."),
				 errhint("Fix or drop that trigger (or policy); received_orders must store every valid event.")));
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("order %s was deleted while being materialized",
					MaterializeUuidText(order_id)),
			 errhint("Retry the transaction.")));
}

/*
 * MaterializeSameText
 *		Whether two strings (externalReferences, topics) are the same, byte
 *		for byte (as a deterministic collation's equality would say).
 */
static bool
MaterializeSameText(const text *a, const text *b)
{
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

/*
 * MaterializeUuidText
 *		The canonical spelling of a UUID.
 */
static char *
MaterializeUuidText(const pg_uuid_t *uuid)
{
	return DatumGetCString(DirectFunctionCall1(uuid_out,
											   UUIDPGetDatum(uuid)));
}

/*
 * MaterializeConflictMessage
 *		The one-line account of a conflict, for result rows and quarantine.
 */
static char *
MaterializeConflictMessage(const RoEvent *event, const text *stored)
{
	return psprintf("order %s is already stored with externalReference \"%s\"; this event has \"%s\"",
					MaterializeUuidText(&event->order_id),
					text_to_cstring(stored),
					text_to_cstring(event->external_reference));
}

/*
 * MaterializeConflictReport
 *		Report a conflict at elevel (WARNING, or ERROR for a replay).
 */
static void
MaterializeConflictReport(int elevel, const RoEvent *event, const text *stored,
						  bool quarantined)
{
	ereport(elevel,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("order %s is already stored with another externalReference",
					MaterializeUuidText(&event->order_id)),
			 errdetail("The stored externalReference is \"%s\"; this event has \"%s\".",
					   text_to_cstring(stored),
					   text_to_cstring(event->external_reference)),
			 quarantined ?
			 errhint("The event was quarantined; the stored row was left unchanged.") :
			 errhint("The stored row was left unchanged; an orderId must identify one order.")));
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
	return BatchRun(fcinfo, 0, NULL, NULL);
}

/*
 * materialize_orders(consumer_group text, kafka_values bytea[],
 *					  kafka_topics text[], kafka_partitions integer[],
 *					  kafka_offsets bigint[], kafka_keys bytea[])
 *		RETURNS TABLE(position, order_id, outcome, sqlstate, message)
 *
 * The batch function of 1.1: as above, and in the same transaction the next
 * offset of every (topic, partition) of the batch is recorded for the
 * consumer group, never moving backwards.  Every element must therefore
 * carry its coordinates.  A NULL value is skipped (outcome skipped): a
 * tombstone is acknowledged by its position, not quarantined.
 */
Datum
materialize_orders_for_group(PG_FUNCTION_ARGS)
{
	return BatchRun(fcinfo, 1, BatchGroupArgument(fcinfo), NULL);
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
	text	   *consumer_group = BatchGroupArgument(fcinfo);
	Batch		options;

	BatchOutboxOptions(fcinfo, &options);
	return BatchRun(fcinfo, 1, consumer_group, &options);
}

/*
 * materialize_orders(consumer_group text, kafka_values bytea[],
 *					  kafka_topics text[], kafka_partitions integer[],
 *					  kafka_offsets bigint[], kafka_keys bytea[],
 *					  envelope text, event_type text, type_header text,
 *					  message_types bytea[], content_types bytea[],
 *					  decoded_values bytea[], value_schema_ids integer[],
 *					  decode_errors text[])
 *		RETURNS TABLE(position, order_id, outcome, sqlstate, message)
 *
 * The Schema Registry form (1.2): as the outbox form, for values framed by
 * a Schema Registry serializer (frame.c).  An element's event is its
 * decoded_values element (the feeder decoded an Avro value), or the JSON
 * after the frame (a JSON Schema value); an element with a decode_errors
 * element is rejected with that reason.  kafka_values are the bytes as
 * received: the quarantine keeps them, with the schema id.
 */
Datum
materialize_orders_framed(PG_FUNCTION_ARGS)
{
	text	   *consumer_group = BatchGroupArgument(fcinfo);
	Batch		options;

	BatchOutboxOptions(fcinfo, &options);
	options.framed = true;
	return BatchRun(fcinfo, 1, consumer_group, &options);
}

/*
 * BatchOutboxOptions
 *		The envelope, event type and type header of the outbox forms.
 */
static void
BatchOutboxOptions(FunctionCallInfo fcinfo, Batch *options_out)
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
				 errmsg("unknown envelope %s", BatchQuoteBytes(name, strlen(name))),
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
 * BatchGroupArgument
 *		The consumer group of the 1.1 forms, with the coordinates it needs.
 */
static text *
BatchGroupArgument(FunctionCallInfo fcinfo)
{
	text	   *consumer_group;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("consumer_group must not be null"),
				 errhint("Pass the Kafka consumer group whose positions the batch advances.")));
	consumer_group = PG_GETARG_TEXT_PP(0);
	if (VARSIZE_ANY_EXHDR(consumer_group) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("consumer_group must not be empty")));
	for (int argno = 2; argno <= 4; argno++)
		if (PG_ARGISNULL(argno))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be null when a consumer group is given",
							argno == 2 ? "kafka_topics" :
							argno == 3 ? "kafka_partitions" : "kafka_offsets"),
					 errhint("Positions are recorded from each message's topic, partition and offset.")));
	return consumer_group;
}

/*
 * BatchRun
 *		The batch function itself, for every signature: the five message
 *		arrays start at argument first_arg; consumer_group is NULL for 1.0's;
 *		options (envelope and event type, then the two header arrays after
 *		the five message arrays) only for the outbox form.
 */
static Datum
BatchRun(FunctionCallInfo fcinfo, int first_arg, text *consumer_group,
		 const Batch *options)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Batch		batch;
	Datum		outcomes[RO_OUTCOME_COUNT];
	bool		outcome_ready[RO_OUTCOME_COUNT] = {false};
	Oid			outcome_type;

	if (PG_ARGISNULL(first_arg))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("kafka_values must not be null"),
				 errhint("Pass an array of message values, empty for no messages.")));

	if (options != NULL)
		batch = *options;
	else
		memset(&batch, 0, sizeof(batch));
	batch.count = -1;
	batch.consumer_group = consumer_group;
	BatchDeconstruct(&batch, fcinfo, first_arg, "kafka_values", BYTEAOID,
					 &batch.values, &batch.values_null);
	BatchDeconstruct(&batch, fcinfo, first_arg + 1, "kafka_topics", TEXTOID,
					 &batch.topics, &batch.topics_null);
	BatchDeconstruct(&batch, fcinfo, first_arg + 2, "kafka_partitions", INT4OID,
					 &batch.partitions, &batch.partitions_null);
	BatchDeconstruct(&batch, fcinfo, first_arg + 3, "kafka_offsets", INT8OID,
					 &batch.offsets, &batch.offsets_null);
	BatchDeconstruct(&batch, fcinfo, first_arg + 4, "kafka_keys", BYTEAOID,
					 &batch.keys, &batch.keys_null);
	if (batch.enveloped)
	{
		BatchDeconstruct(&batch, fcinfo, first_arg + 8, "message_types",
						 BYTEAOID, &batch.types, &batch.types_null);
		BatchDeconstruct(&batch, fcinfo, first_arg + 9, "content_types",
						 BYTEAOID, &batch.content_types,
						 &batch.content_types_null);
	}
	if (batch.framed)
	{
		BatchDeconstruct(&batch, fcinfo, first_arg + 10, "decoded_values",
						 BYTEAOID, &batch.decoded, &batch.decoded_null);
		BatchDeconstruct(&batch, fcinfo, first_arg + 11, "value_schema_ids",
						 INT4OID, &batch.schema_ids, &batch.schema_ids_null);
		BatchDeconstruct(&batch, fcinfo, first_arg + 12, "decode_errors",
						 TEXTOID, &batch.decode_errors,
						 &batch.decode_errors_null);
	}
	BatchCheckBounds(&batch);
	if (consumer_group != NULL)
		BatchCheckCoordinates(&batch);

	InitMaterializedSRF(fcinfo, 0);
	outcome_type = TupleDescAttr(rsinfo->setDesc, 2)->atttypid;

	batch.items = palloc0(sizeof(BatchItem) * Max(batch.count, 1));
	batch.candidates = palloc(sizeof(BatchItem *) * Max(batch.count, 1));

	SPI_connect();
	/* the group's positions are the calling role's to move (groups.c) */
	if (consumer_group != NULL)
		RoGroupCheck(consumer_group, NULL);
	batch.scratch = AllocSetContextCreate(CurrentMemoryContext,
										  "received_orders batch parser",
										  ALLOCSET_DEFAULT_SIZES);

	/*
	 * Checks that cannot throw: size, UTF-8 (nesting and JSON syntax come
	 * with the parse, RoEventParse, which reports them without throwing).
	 */
	for (int i = 0; i < batch.count; i++)
	{
		BatchItem  *item = &batch.items[i];
		RoEventError err;

		item->position = i + 1;
		item->state = BATCH_PENDING;
		if (batch.values_null[i] && consumer_group != NULL)
		{
			/* a tombstone, or a message of another type the caller left out */
			item->state = BATCH_DECIDED;
			item->outcome = RO_OUTCOME_SKIPPED;
			if (batch.event_type != NULL && !batch.types_null[i])
			{
				bytea	   *type = DatumGetByteaPP(batch.types[i]);

				item->message = BatchOtherType(&batch, VARDATA_ANY(type),
											   VARSIZE_ANY_EXHDR(type));
			}
		}
		else if (batch.values_null[i])
			BatchReject(item, ERRCODE_NULL_VALUE_NOT_ALLOWED,
						"value is null (a tombstone), not an event", NULL);
		else
		{
			bytea	   *value = DatumGetByteaPP(batch.values[i]);
			MemoryContext oldcontext;
			bool		valid;

			item->data = VARDATA_ANY(value);
			item->len = VARSIZE_ANY_EXHDR(value);
			if (batch.framed && !BatchOpenFrame(&batch, item, i))
				continue;
			if (batch.enveloped && !BatchOpenEnvelope(&batch, item, i))
				continue;
			oldcontext = MemoryContextSwitchTo(batch.scratch);
			valid = RoEventCheckEncoding(item->data, item->len, &err);
			MemoryContextSwitchTo(oldcontext);
			if (!valid)
				BatchReject(item, err.sqlerrcode, err.message, err.detail);
			MemoryContextReset(batch.scratch);
		}
	}

	if (!BatchTry(BatchParseAndInsertAll, &batch, NULL))
	{
		/*
		 * The slow path, to pin the error on its owner.  What the fast path
		 * parsed stays parsed (it lives outside the subtransaction); the
		 * elements it did not reach, the failing one among them, are parsed
		 * each in a subtransaction of its own.  Nothing was inserted.
		 */
		for (int i = 0; i < batch.count; i++)
		{
			BatchItem  *item = &batch.items[i];

			item->inserted = false;
			if (item->state == BATCH_PENDING)
				BatchTry(BatchParseItem, &batch, item);
		}
		BatchSortCandidates(&batch);
		BatchInsertByHalves(&batch, 0, batch.ncandidates);
	}

	BatchResolveNotInserted(&batch);
	BatchQuarantine(&batch);
	if (consumer_group != NULL)
		BatchRecordPositions(&batch);

	for (int i = 0; i < batch.count; i++)
	{
		BatchItem  *item = &batch.items[i];
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};

		values[0] = Int32GetDatum(item->position);
		values[1] = UUIDPGetDatum(&item->event.order_id);
		nulls[1] = !item->has_order_id;
		/* labels looked up on use: 1.0's enum has no 'skipped' */
		if (!outcome_ready[item->outcome])
		{
			outcomes[item->outcome] = RoOutcomeGetDatum(outcome_type,
														item->outcome);
			outcome_ready[item->outcome] = true;
		}
		values[2] = outcomes[item->outcome];
		if (item->sqlerrcode != 0)
			values[3] = CStringGetTextDatum(unpack_sql_state(item->sqlerrcode));
		nulls[3] = (item->sqlerrcode == 0);
		if (item->message != NULL)
			values[4] = CStringGetTextDatum(item->message);
		nulls[4] = (item->message == NULL);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	SPI_finish();
	return (Datum) 0;
}

/*
 * BatchOpenFrame
 *		For the Schema Registry form: item->data and item->len become the
 *		event's bytes (frame.c), and the element keeps its schema id for
 *		the quarantine.  Returns false when the element is rejected.
 */
static bool
BatchOpenFrame(Batch *batch, BatchItem *item, int i)
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
	BatchReject(item, err.sqlerrcode, err.message, err.detail);
	return false;
}

/*
 * BatchOpenEnvelope
 *		For the outbox form: decide an element by its type, then find its
 *		event in the envelope (item->data and item->len become the event's
 *		bytes, copied out when decoded).  Returns false when the element is
 *		decided (skipped for its type, or rejected), true when its event goes
 *		on to the validator.
 */
static bool
BatchOpenEnvelope(Batch *batch, BatchItem *item, int i)
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

		if (!BatchSelectType(batch, item, type ? VARDATA_ANY(type) : NULL,
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
		BatchReject(item, err.sqlerrcode, err.message, err.detail);
	else if (structured && batch->event_type != NULL &&
			 !BatchSelectType(batch, item, found.type, found.type_len))
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
 * BatchSelectType
 *		With an event_type: go on with an element of that type (true); skip
 *		one of another type, reject one whose type cannot be told (false).
 *		type is NULL when the element has none.
 */
static bool
BatchSelectType(Batch *batch, BatchItem *item, const char *type, int type_len)
{
	char	   *other;

	if (type == NULL)
	{
		BatchReject(item, ERRCODE_INVALID_PARAMETER_VALUE,
					psprintf("header %s is missing: the message's type cannot be told (event_type %s)",
							 BatchQuoteBytes(batch->type_header, strlen(batch->type_header)),
							 BatchQuoteBytes(VARDATA_ANY(batch->event_type),
											 VARSIZE_ANY_EXHDR(batch->event_type))),
					NULL);
		return false;
	}
	other = BatchOtherType(batch, type, type_len);
	if (other == NULL)
		return true;
	item->state = BATCH_DECIDED;
	item->outcome = RO_OUTCOME_SKIPPED;
	item->message = other;
	return false;
}

/*
 * BatchOtherType
 *		NULL when type is the selected event_type, byte for byte; else the
 *		reason a message of that type is skipped.
 */
static char *
BatchOtherType(Batch *batch, const char *type, int type_len)
{
	int			len = VARSIZE_ANY_EXHDR(batch->event_type);

	if (type_len == len && memcmp(type, VARDATA_ANY(batch->event_type), len) == 0)
		return NULL;
	return BatchClip(psprintf("event type %s is not selected (event_type %s)",
							  BatchQuoteBytes(type, type_len),
							  BatchQuoteBytes(VARDATA_ANY(batch->event_type), len)));
}

/*
 * BatchQuoteBytes
 *		Bytes from a message, double-quoted for a reason: at most 64 bytes of
 *		them (cut between characters), or their hexadecimal form when they
 *		are not valid UTF-8.
 */
static char *
BatchQuoteBytes(const char *data, int len)
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

/*
 * BatchHeadersJson
 *		The headers that identified a quarantined element of the outbox
 *		form, as a JSON object (NULL if none): its type header and its
 *		content-type, each as text, or as "\x..." (bytea's hex form) when not
 *		valid UTF-8.  Bounded like every stored field: a value longer than
 *		RO_QUARANTINE_PREFIX_BYTES keeps its first bytes (whole characters)
 *		and gains a member "NAME:bytes" with its length as received, so a
 *		short message with huge headers cannot store megabytes of text.
 */
static char *
BatchHeadersJson(Batch *batch, int i)
{
	StringInfoData buf;
	const char *names[2];
	Datum		values[2];
	int			n = 0;

	if (batch->type_header != NULL && !batch->types_null[i])
	{
		names[n] = batch->type_header;
		values[n++] = batch->types[i];
	}
	if (!batch->content_types_null[i])
	{
		names[n] = "content-type";
		values[n++] = batch->content_types[i];
	}
	if (n == 0)
		return NULL;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int k = 0; k < n; k++)
	{
		bytea	   *value = DatumGetByteaPP(values[k]);
		const char *data = VARDATA_ANY(value);
		int			len = VARSIZE_ANY_EXHDR(value);

		int			kept = Min(len, RO_QUARANTINE_PREFIX_BYTES);

		if (k > 0)
			appendStringInfoString(&buf, ", ");
		escape_json(&buf, names[k]);
		appendStringInfoString(&buf, ": ");
		if (pg_verifymbstr(data, len, true))
		{
			kept = pg_mbcliplen(data, len, kept);
			escape_json(&buf, pnstrdup(data, kept));
		}
		else
		{
			StringInfoData hex;

			initStringInfo(&hex);
			appendStringInfoString(&hex, "\\x");
			for (int b = 0; b < kept; b++)
				appendStringInfo(&hex, "%02x", (unsigned char) data[b]);
			escape_json(&buf, hex.data);
		}
		if (kept < len)
		{
			appendStringInfoString(&buf, ", ");
			escape_json(&buf, psprintf("%s:bytes", names[k]));
			appendStringInfo(&buf, ": %d", len);
		}
	}
	appendStringInfoChar(&buf, '}');
	return buf.data;
}

/*
 * BatchDeconstruct
 *		Unpack one array argument; all non-null arrays must have as many
 *		elements as kafka_values.
 *
 * A NULL array (coordinates not given) reads as all elements NULL.
 */
static void
BatchDeconstruct(Batch *batch, FunctionCallInfo fcinfo, int argno,
				 const char *name, Oid elemtype, Datum **datums, bool **nulls)
{
	ArrayType  *array;
	int16		typlen;
	bool		typbyval;
	char		typalign;
	int			count;

	if (PG_ARGISNULL(argno))
	{
		*datums = palloc0(sizeof(Datum) * Max(batch->count, 1));
		*nulls = palloc(sizeof(bool) * Max(batch->count, 1));
		memset(*nulls, true, sizeof(bool) * Max(batch->count, 1));
		return;
	}

	array = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", name)));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(array, elemtype, typlen, typbyval, typalign,
					  datums, nulls, &count);

	if (batch->count < 0)
		batch->count = count;
	else if (count != batch->count)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s has %d elements but kafka_values has %d",
						name, count, batch->count),
				 errhint("Pass one element per message in every array, or NULL for the whole array.")));
}

/*
 * BatchReject
 *		Decide an element as rejected, with its SQLSTATE and reason.
 */
static void
BatchReject(BatchItem *item, int sqlerrcode, const char *message,
			const char *detail)
{
	item->state = BATCH_DECIDED;
	item->outcome = RO_OUTCOME_REJECTED;
	item->sqlerrcode = sqlerrcode;
	item->message = detail ?
		psprintf("%s: %s", BatchClip(message), BatchClip(detail)) :
		BatchClip(message);
}

/*
 * BatchClip
 *		A copy of a message cut to RO_MAX_REASON_PART_BYTES at a character
 *		boundary, with an ellipsis when cut: PostgreSQL's JSON errors quote
 *		the whole offending token, and the reason is stored per element.
 */
static char *
BatchClip(const char *s)
{
	int			len = strlen(s);
	int			cut;

	if (len <= RO_MAX_REASON_PART_BYTES)
		return pstrdup(s);
	cut = pg_mbcliplen(s, len, RO_MAX_REASON_PART_BYTES - 3);
	return psprintf("%.*s\xe2\x80\xa6", cut, s);	/* U+2026 */
}

/*
 * BatchTry
 *		Run a step in a subtransaction; on error, roll it back and return
 *		false, or re-throw an error no event can cause (RoErrorIsEventCaused:
 *		transient and systemic errors fail the whole call).
 *
 * With an item, a failed step rejects that item with the error.  Memory
 * allocated by the step stays in the caller's context either way.
 */
static bool
BatchTry(BatchStep step, Batch *batch, BatchItem *item)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	volatile bool ok = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcontext);

	PG_TRY();
	{
		step(batch, item);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;

		if (!RoErrorIsEventCaused(edata->sqlerrcode,
								  step == BatchParseItem ||
								  step == BatchParseAndInsertAll ||
								  (step == BatchInsertRangeStep &&
								   batch->ncandidates == 1)))
			ReThrowError(edata);
		if (item != NULL)
			BatchReject(item, edata->sqlerrcode, edata->message,
						edata->detail);
		else
			ereport(DEBUG1,
					(errmsg_internal("received_orders batch retried in smaller parts after: %s",
									 edata->message)));
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();

	return ok;
}

/*
 * BatchParseItem
 *		Parse one element that passed the raw checks and check its fields;
 *		a valid event becomes a candidate.
 */
static void
BatchParseItem(Batch *batch, BatchItem *item)
{
	Jsonb	   *payload;
	Jsonb	   *parsed;
	RoEventError err;
	MemoryContext oldcontext;

	/*
	 * The parser's garbage goes to scratch, reset for the next element; only
	 * the finished jsonb is copied out.  This keeps a batch's memory small and
	 * warm in the cache.
	 */
	MemoryContextReset(batch->scratch);
	oldcontext = MemoryContextSwitchTo(batch->scratch);
	parsed = RoEventParse(item->data, item->len, &err);
	MemoryContextSwitchTo(oldcontext);
	if (parsed == NULL)
	{
		/* not valid JSON: the reason is copied out of scratch */
		BatchReject(item, err.sqlerrcode, err.message, err.detail);
		return;
	}
	payload = palloc(VARSIZE(parsed));
	memcpy(payload, parsed, VARSIZE(parsed));

	if (!RoEventCheckFields(payload, &item->event, &err))
		BatchReject(item, err.sqlerrcode, err.message, err.detail);
	else
	{
		item->state = BATCH_CANDIDATE;
		item->has_order_id = true;
	}
}

/*
 * BatchSortCandidates
 *		Collect the candidates sorted by order_id, then position, so that
 *		rows are locked in one global order and the first of equal ids wins.
 */
static void
BatchSortCandidates(Batch *batch)
{
	batch->ncandidates = 0;
	for (int i = 0; i < batch->count; i++)
		if (batch->items[i].state == BATCH_CANDIDATE)
			batch->candidates[batch->ncandidates++] = &batch->items[i];
	qsort(batch->candidates, batch->ncandidates, sizeof(BatchItem *),
		  BatchCompareCandidates);
}

/*
 * BatchCompareCandidates
 *		qsort comparator: order_id bytes (uuid's own order), then position.
 */
static int
BatchCompareCandidates(const void *a, const void *b)
{
	const BatchItem *x = *(BatchItem *const *) a;
	const BatchItem *y = *(BatchItem *const *) b;
	int			cmp = memcmp(x->event.order_id.data, y->event.order_id.data,
							 UUID_LEN);

	if (cmp != 0)
		return cmp;
	return (x->position > y->position) - (x->position < y->position);
}

/*
 * BatchParseAndInsertAll
 *		The fast path: parse every pending element and insert all valid
 *		events with one statement.
 */
static void
BatchParseAndInsertAll(Batch *batch, BatchItem *unused)
{
	for (int i = 0; i < batch->count; i++)
		if (batch->items[i].state == BATCH_PENDING)
			BatchParseItem(batch, &batch->items[i]);
	BatchSortCandidates(batch);
	batch->range_start = 0;
	batch->range_end = batch->ncandidates;
	BatchInsertRangeStep(batch, NULL);
}

/*
 * BatchInsertRangeStep
 *		Insert candidates[range_start .. range_end) with one statement and
 *		note which of them wrote a row.
 */
static void
BatchInsertRangeStep(Batch *batch, BatchItem *unused)
{
	int			count = batch->range_end - batch->range_start;
	RoEvent   **events;
	bool	   *inserted;

	if (count <= 0)
		return;
	events = palloc(sizeof(RoEvent *) * count);
	inserted = palloc(sizeof(bool) * count);
	for (int c = 0; c < count; c++)
		events[c] = &batch->candidates[batch->range_start + c]->event;
	RoStoreInsertMany(events, count, inserted);
	for (int c = 0; c < count; c++)
		batch->candidates[batch->range_start + c]->inserted = inserted[c];
	pfree(events);
	pfree(inserted);
}

/*
 * BatchInsertByHalves
 *		The slow path's insert: candidates[start .. end) in a subtransaction;
 *		if that fails, each half the same way, down to the one element that
 *		fails, which BatchTry rejects with its error.
 *
 * Halves keep the order_id order, so locks are still taken in one order; a
 * later duplicate of an id inserted by an earlier half simply conflicts.
 */
static void
BatchInsertByHalves(Batch *batch, int start, int end)
{
	int			middle;

	if (start >= end)
		return;
	batch->range_start = start;
	batch->range_end = end;
	if (BatchTry(BatchInsertRangeStep, batch,
				 end - start == 1 ? batch->candidates[start] : NULL))
		return;
	if (end - start == 1)
		return;
	middle = start + (end - start) / 2;
	BatchInsertByHalves(batch, start, middle);
	BatchInsertByHalves(batch, middle, end);
}

/*
 * BatchResolveNotInserted
 *		Decide every candidate: inserted, or, by the stored row's reference,
 *		duplicate or conflict.  One statement reads all stored references.
 */
static void
BatchResolveNotInserted(Batch *batch)
{
	pg_uuid_t  *ids = palloc(sizeof(pg_uuid_t) * Max(batch->ncandidates, 1));
	text	  **stored = palloc(sizeof(text *) * Max(batch->ncandidates, 1));
	BatchItem **waiting = palloc(sizeof(BatchItem *) * Max(batch->ncandidates, 1));
	int			nwaiting = 0;

	for (int c = 0; c < batch->ncandidates; c++)
	{
		BatchItem  *item = batch->candidates[c];

		if (item->state != BATCH_CANDIDATE)
			continue;			/* rejected by the slow path's insert */
		if (item->inserted)
		{
			item->state = BATCH_DECIDED;
			item->outcome = RO_OUTCOME_INSERTED;
			continue;
		}
		ids[nwaiting] = item->event.order_id;
		waiting[nwaiting++] = item;
	}
	if (nwaiting == 0)
		return;

	RoStoreLookupReferences(ids, nwaiting, stored);
	for (int w = 0; w < nwaiting; w++)
	{
		BatchItem  *item = waiting[w];

		if (stored[w] == NULL)
			MaterializeNotStored(&item->event.order_id);
		item->state = BATCH_DECIDED;
		if (MaterializeSameText(stored[w], item->event.external_reference))
			item->outcome = RO_OUTCOME_DUPLICATE;
		else
		{
			item->outcome = RO_OUTCOME_CONFLICT;
			item->sqlerrcode = ERRCODE_UNIQUE_VIOLATION;
			item->message = MaterializeConflictMessage(&item->event,
													   stored[w]);
			MaterializeConflictReport(WARNING, &item->event, stored[w], true);
		}
	}
}

/*
 * BatchQuarantine
 *		Write every rejected and conflicting element to the quarantine, in
 *		the caller's transaction, once per Kafka coordinates.
 */
static void
BatchQuarantine(Batch *batch)
{
	for (int i = 0; i < batch->count; i++)
	{
		BatchItem  *item = &batch->items[i];

		if (item->outcome != RO_OUTCOME_REJECTED &&
			item->outcome != RO_OUTCOME_CONFLICT)
			continue;
		RoStoreQuarantine(batch->topics[i], batch->topics_null[i],
						  batch->partitions[i], batch->partitions_null[i],
						  batch->offsets[i], batch->offsets_null[i],
						  batch->keys[i], batch->keys_null[i],
						  batch->values[i], batch->values_null[i],
						  item->has_order_id ? &item->event.order_id : NULL,
						  item->outcome, item->sqlerrcode, item->message,
						  batch->enveloped ? RoEnvelopeName(batch->envelope) : NULL,
						  batch->enveloped ? BatchHeadersJson(batch, i) : NULL,
						  item->has_schema_id ? &item->schema_id : NULL);
	}
}

/*
 * BatchCheckBounds
 *		What one call may ask to store is bounded: at most
 *		RO_MAX_BATCH_ELEMENTS elements (54000, so that a caller splits the
 *		batch), topics of at most Kafka's 249 bytes and a consumer group of
 *		at most RO_MAX_GROUP_BYTES (22023).
 */
static void
BatchCheckBounds(Batch *batch)
{
	if (batch->count > RO_MAX_BATCH_ELEMENTS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a batch holds at most %d messages, not %d",
						RO_MAX_BATCH_ELEMENTS, batch->count),
				 errhint("Split it into several calls.")));
	if (batch->consumer_group != NULL &&
		VARSIZE_ANY_EXHDR(batch->consumer_group) > RO_MAX_GROUP_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("consumer group is %d bytes long; at most %d are allowed",
						(int) VARSIZE_ANY_EXHDR(batch->consumer_group),
						RO_MAX_GROUP_BYTES)));
	for (int i = 0; i < batch->count; i++)
	{
		if (!batch->topics_null[i] &&
			VARSIZE_ANY_EXHDR(DatumGetTextPP(batch->topics[i])) > RO_MAX_TOPIC_BYTES)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("element %d has a Kafka topic of %d bytes; Kafka allows at most %d",
							i + 1, (int) VARSIZE_ANY_EXHDR(DatumGetTextPP(batch->topics[i])),
							RO_MAX_TOPIC_BYTES)));
	}
}

/*
 * BatchCheckCoordinates
 *		With a consumer group, every element must name its topic, partition
 *		and offset, as Kafka gives them: positions are made of them.
 */
static void
BatchCheckCoordinates(Batch *batch)
{
	for (int i = 0; i < batch->count; i++)
	{
		if (batch->topics_null[i] || batch->partitions_null[i] ||
			batch->offsets_null[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("element %d has no Kafka %s", i + 1,
							batch->topics_null[i] ? "topic" :
							batch->partitions_null[i] ? "partition" : "offset"),
					 errhint("With a consumer group, every element needs its topic, partition and offset.")));
		if (VARSIZE_ANY_EXHDR(DatumGetTextPP(batch->topics[i])) == 0 ||
			DatumGetInt32(batch->partitions[i]) < 0 ||
			DatumGetInt64(batch->offsets[i]) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("element %d has invalid Kafka coordinates [%d] @%lld",
							i + 1, DatumGetInt32(batch->partitions[i]),
							(long long) DatumGetInt64(batch->offsets[i])),
					 errhint("Topics are not empty; partitions and offsets are not negative.")));
	}
}

/*
 * BatchComparePartitions
 *		qsort_arg comparator of element indexes: topic bytes, then
 *		partition, then offset.
 */
static int
BatchComparePartitions(const void *a, const void *b, void *arg)
{
	const Batch *batch = arg;
	int			x = *(const int *) a;
	int			y = *(const int *) b;
	text	   *tx = DatumGetTextPP(batch->topics[x]);
	text	   *ty = DatumGetTextPP(batch->topics[y]);
	int			lx = VARSIZE_ANY_EXHDR(tx);
	int			ly = VARSIZE_ANY_EXHDR(ty);
	int			cmp = memcmp(VARDATA_ANY(tx), VARDATA_ANY(ty), Min(lx, ly));
	int32		px,
				py;
	int64		ox,
				oy;

	if (cmp != 0)
		return cmp;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	px = DatumGetInt32(batch->partitions[x]);
	py = DatumGetInt32(batch->partitions[y]);
	if (px != py)
		return px < py ? -1 : 1;
	ox = DatumGetInt64(batch->offsets[x]);
	oy = DatumGetInt64(batch->offsets[y]);
	return (ox > oy) - (ox < oy);
}

/*
 * BatchRecordPositions
 *		Record the highest offset + 1 of each (topic, partition) of the batch
 *		for its consumer group, in one statement, in the caller's
 *		transaction.  Every element counts, whatever its outcome: a rejected
 *		message is quarantined in the same transaction, so it is consumed too.
 */
static void
BatchRecordPositions(Batch *batch)
{
	int		   *last;
	Datum	   *topics;
	Datum	   *partitions;
	Datum	   *next_offsets;
	int			n;

	if (batch->count <= 0)
		return;
	last = palloc(sizeof(int) * batch->count);
	n = BatchLastOfPartitions(batch, last);

	topics = palloc(sizeof(Datum) * n);
	partitions = palloc(sizeof(Datum) * n);
	next_offsets = palloc(sizeof(Datum) * n);
	for (int k = 0; k < n; k++)
	{
		int			i = last[k];

		if (DatumGetInt64(batch->offsets[i]) == PG_INT64_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("element %d has Kafka offset %lld, which has no next offset",
							i + 1, (long long) PG_INT64_MAX)));
		topics[k] = batch->topics[i];
		partitions[k] = batch->partitions[i];
		next_offsets[k] = Int64GetDatum(DatumGetInt64(batch->offsets[i]) + 1);
	}
	RoStoreAdvancePositions(batch->consumer_group, topics, partitions,
							next_offsets, n);
}

/*
 * BatchLastOfPartitions
 *		Fill last[] with the element of the highest offset of each (topic,
 *		partition) of the batch, sorted by topic and partition (the order in
 *		which the statement locks the positions' rows); returns how many.
 *
 * One pass: a batch comes from a few partitions, each in long runs, so an
 * element is nearly always of the run before it.  Past
 * BATCH_PARTITIONS_SCANNED partitions the search would cost more than a
 * sort of the whole batch, which then decides.
 */
static int
BatchLastOfPartitions(Batch *batch, int *last)
{
	int			n = 0;
	int			current = -1;

	for (int i = 0; i < batch->count; i++)
	{
		int			k = current;

		if (k < 0 || !BatchSamePartition(batch, last[k], i))
		{
			for (k = 0; k < n && !BatchSamePartition(batch, last[k], i); k++)
				;
			if (k == n)
			{
				if (n == BATCH_PARTITIONS_SCANNED)
					return BatchLastOfPartitionsSorted(batch, last);
				last[n++] = i;
			}
		}
		if (DatumGetInt64(batch->offsets[i]) > DatumGetInt64(batch->offsets[last[k]]))
			last[k] = i;
		current = k;
	}
	qsort_arg(last, n, sizeof(int), BatchComparePartitions, batch);
	return n;
}

/*
 * BatchLastOfPartitionsSorted
 *		BatchLastOfPartitions by a sort of every element.
 */
static int
BatchLastOfPartitionsSorted(Batch *batch, int *last)
{
	int		   *order = palloc(sizeof(int) * batch->count);
	int			n = 0;

	for (int i = 0; i < batch->count; i++)
		order[i] = i;
	qsort_arg(order, batch->count, sizeof(int), BatchComparePartitions, batch);
	/* sorted by offset within a partition: keep each one's last */
	for (int k = 0; k < batch->count; k++)
		if (k + 1 == batch->count || !BatchSamePartition(batch, order[k], order[k + 1]))
			last[n++] = order[k];
	pfree(order);
	return n;
}

/*
 * BatchSamePartition
 *		Whether elements x and y have the same topic and partition.
 */
static bool
BatchSamePartition(const Batch *batch, int x, int y)
{
	return DatumGetInt32(batch->partitions[x]) == DatumGetInt32(batch->partitions[y]) &&
		MaterializeSameText(DatumGetTextPP(batch->topics[x]),
							DatumGetTextPP(batch->topics[y]));
}

/*
 * replay_quarantined(id bigint) RETURNS materialize_outcome
 *		Re-validate a quarantined message, materialize it and remove it from
 *		the quarantine.
 *
 * It returns inserted or duplicate.  A message still invalid raises its
 * validation error and one still conflicting raises unique_violation; then
 * nothing changes and the row stays for the operator.
 */
Datum
replay_quarantined(PG_FUNCTION_ARGS)
{
	int64		id;
	bytea	   *raw_value;
	const char *data;
	int			len;
	int32		schema_id;
	int64		received_bytes;
	char	   *envelope_name;
	char	   *content_type;
	RoEnvelope	envelope = RO_ENVELOPE_PLAIN;
	RoEnvelopeEvent found;
	char	   *hint;
	RoEventError err;
	RoEvent		event;
	RoOutcome	outcome;
	text	   *stored;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("quarantine id must not be null")));
	id = PG_GETARG_INT64(0);

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
	 * A value framed by a Schema Registry serializer (1.2): its JSON after
	 * the frame.  A backend cannot fetch an Avro schema: such a row replays
	 * once an operator put the event's JSON in raw_value (value_schema_id
	 * NULL), which the hint says.
	 */
	if (RoStoreFetchQuarantinedSchemaId(id, &schema_id))
	{
		int32		frame_id;
		bool		has_frame_id;

		hint = psprintf("Quarantined message %lld is a Schema Registry value (schema id %d): a JSON Schema value replays from its framed bytes; for an Avro value, set raw_value to the event's JSON and value_schema_id to NULL, then replay it; nothing was changed.",
						(long long) id, schema_id);
		if (!RoFrameOpen(data, len, NULL, 0, NULL, &schema_id, &frame_id,
						 &has_frame_id, &data, &len, &err))
			RoEventReportError(&err, hint);
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

	outcome = MaterializeOne(&event, &stored);
	if (outcome == RO_OUTCOME_CONFLICT)
		MaterializeConflictReport(ERROR, &event, stored, false);
	RoStoreDeleteQuarantined(id);

	SPI_finish();

	PG_RETURN_DATUM(RoOutcomeGetDatum(get_func_rettype(fcinfo->flinfo->fn_oid),
									  outcome));
}
