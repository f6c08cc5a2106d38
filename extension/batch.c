/*-------------------------------------------------------------------------
 *
 * batch.c
 *	  The batch engine: the batch function of every signature, from the
 *	  caller's arrays to one result row per element.
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
 * RoBatchRun takes the batch through its steps in order: the outbox forms'
 * values opened (outbox.c), parse and insert (here), outcomes resolved
 * (outcome.c), the quarantine written (quarantine.c), the positions
 * recorded (positions.c), the result rows.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "received_orders.h"

typedef void (*BatchStep) (Batch *batch, BatchItem *item);

static void BatchDeconstruct(Batch *batch, FunctionCallInfo fcinfo, int argno,
							 const char *name, Oid elemtype, Datum **datums,
							 bool **nulls);
static void BatchCheckBounds(Batch *batch);
static bool BatchTry(BatchStep step, Batch *batch, BatchItem *item);
static void BatchParseItem(Batch *batch, BatchItem *item);
static void BatchSortCandidates(Batch *batch);
static int	BatchCompareCandidates(const void *a, const void *b);
static void BatchParseAndInsertAll(Batch *batch, BatchItem *unused);
static void BatchInsertRangeStep(Batch *batch, BatchItem *unused);
static void BatchInsertByHalves(Batch *batch, int start, int end);

/*
 * RoBatchRun
 *		The batch function itself, for every signature: the five message
 *		arrays start at argument first_arg; consumer_group is NULL for the
 *		form without one; options (envelope and event type, then the two
 *		header arrays after the five message arrays) only for the outbox
 *		form.
 */
Datum
RoBatchRun(FunctionCallInfo fcinfo, int first_arg, text *consumer_group,
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
		BatchDeconstruct(&batch, fcinfo, first_arg + 13, "value_schema_guids",
						 UUIDOID, &batch.schema_guids,
						 &batch.schema_guids_null);
	}
	BatchCheckBounds(&batch);
	if (consumer_group != NULL)
		RoPositionsCheckCoordinates(&batch);

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

				item->message = RoOutboxOtherType(&batch, VARDATA_ANY(type),
												VARSIZE_ANY_EXHDR(type));
			}
		}
		else if (batch.values_null[i])
			RoOutcomeReject(item, ERRCODE_NULL_VALUE_NOT_ALLOWED,
						  "value is null (a tombstone), not an event", NULL);
		else
		{
			bytea	   *value = DatumGetByteaPP(batch.values[i]);
			MemoryContext oldcontext;
			bool		valid;

			item->data = VARDATA_ANY(value);
			item->len = VARSIZE_ANY_EXHDR(value);
			if (batch.framed && !RoOutboxOpenFrame(&batch, item, i))
				continue;
			if (batch.enveloped && !RoOutboxOpenEnvelope(&batch, item, i))
				continue;
			oldcontext = MemoryContextSwitchTo(batch.scratch);
			valid = RoEventCheckEncoding(item->data, item->len, &err);
			MemoryContextSwitchTo(oldcontext);
			if (!valid)
				RoOutcomeReject(item, err.sqlerrcode, err.message, err.detail);
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

	RoOutcomeResolveNotInserted(&batch);
	RoQuarantineBatch(&batch);
	if (consumer_group != NULL)
		RoPositionsRecord(&batch);

	for (int i = 0; i < batch.count; i++)
	{
		BatchItem  *item = &batch.items[i];
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};

		values[0] = Int32GetDatum(item->position);
		values[1] = UUIDPGetDatum(&item->event.order_id);
		nulls[1] = !item->has_order_id;
		/*
		 * labels looked up on use: an installation not yet updated
		 * (ALTER EXTENSION ... UPDATE) may have no 'skipped'
		 */
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
			RoOutcomeReject(item, edata->sqlerrcode, edata->message,
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
		RoOutcomeReject(item, err.sqlerrcode, err.message, err.detail);
		return;
	}
	payload = palloc(VARSIZE(parsed));
	memcpy(payload, parsed, VARSIZE(parsed));

	if (!RoEventCheckFields(payload, &item->event, &err))
		RoOutcomeReject(item, err.sqlerrcode, err.message, err.detail);
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
 *		note which of them wrote a row.  The Schema Registry form's rows
 *		record the schema id of their framed value (none for JSON values:
 *		their statement is unchanged).
 */
static void
BatchInsertRangeStep(Batch *batch, BatchItem *unused)
{
	int			count = batch->range_end - batch->range_start;
	RoEvent   **events;
	const int32 **schema_ids = NULL;
	bool	   *inserted;

	if (count <= 0)
		return;
	events = palloc(sizeof(RoEvent *) * count);
	inserted = palloc(sizeof(bool) * count);
	if (batch->framed)
		schema_ids = palloc(sizeof(int32 *) * count);
	for (int c = 0; c < count; c++)
	{
		BatchItem  *item = batch->candidates[batch->range_start + c];

		events[c] = &item->event;
		if (schema_ids != NULL)
			schema_ids[c] = item->has_schema_id ? &item->schema_id : NULL;
	}
	RoStoreInsertMany(events, schema_ids, count, inserted);
	for (int c = 0; c < count; c++)
		batch->candidates[batch->range_start + c]->inserted = inserted[c];
	pfree(events);
	pfree(inserted);
	if (schema_ids != NULL)
		pfree(schema_ids);
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
