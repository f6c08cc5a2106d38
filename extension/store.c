/*-------------------------------------------------------------------------
 *
 * store.c
 *	  Every SQL statement of the extension, prepared once and kept.
 *
 * Callers are connected to SPI.  Data reaches SQL only as $n parameters;
 * every object and operator is schema-qualified, so neither the caller's
 * search_path nor pg_temp can capture a write.  Each statement's plan is
 * prepared on first use in a backend and kept for its lifetime.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "catalog/namespace.h"
#include "utils/lsyscache.h"

#include "received_orders.h"

static bool StoreQuarantineHasDigest(void);

/*
 * Events per INSERT of a batch: the WAL writer is woken after each
 * (RoStoreInsertMany).  About 0.6 MB of WAL at ~375-byte events, so that
 * with wal_writer_flush_after's default (1 MB) it flushes every other one.
 */
#define STORE_INSERT_CHUNK 1000

/*
 * One kept SPI plan: its text, its parameter types and the plan itself.
 *
 * A plan is kept for the session and, the functions calling it setting
 * plan_cache_mode = force_generic_plan (1.3--1.4), made once, generic, for
 * the table sizes of that moment.  A statement whose best plan depends on
 * how many rows a table holds is planned on every call instead (each_call,
 * SPI_execute_with_args): the lookups of stored orders by order_id.  Kept,
 * a plan made while received_orders was nearly empty (a new installation,
 * TRUNCATE, VACUUM of an empty table) scans the whole table and compares
 * every row with every id of the batch, until an ANALYZE of the table
 * invalidates it: bench/feeder's 300,000 events on 24 partitions took three
 * times the CPU per event that way (test/sql-only/14).
 */
typedef struct StorePlan
{
	const char *sql;
	int			nargs;
	Oid			argtypes[14];
	bool		each_call;
	SPIPlanPtr	plan;
} StorePlan;

/*
 * A row stored from a value framed by a Schema Registry serializer records
 * its schema id (value_schema_id, $4): its own statements, so that a JSON
 * value's insert names no such column and serves an installation not yet
 * updated to have it (until ALTER EXTENSION ... UPDATE).
 */
#define STORE_INSERT_ONE(extra_column, extra_value) \
	"INSERT INTO " RO_SCHEMA ".received_orders" \
	" (order_id, external_reference, payload" extra_column ")" \
	" VALUES ($1, $2, $3" extra_value ")" \
	" ON CONFLICT (order_id) DO NOTHING"

static StorePlan insert_one_plan = {
	STORE_INSERT_ONE("", ""),
	3, {UUIDOID, TEXTOID, JSONBOID}
};

static StorePlan insert_one_framed_plan = {
	STORE_INSERT_ONE(", value_schema_id", ", $4"),
	4, {UUIDOID, TEXTOID, JSONBOID, INT4OID}
};

/*
 * The batch statement inserts the rows in the order given; the caller sorts
 * them by order_id, so that concurrent batches lock keys in one order.
 */
#define STORE_INSERT_MANY(extra_column, extra_value) \
	"INSERT INTO " RO_SCHEMA ".received_orders" \
	" (order_id, external_reference, payload" extra_column ")" \
	" SELECT pg_catalog.unnest($1), pg_catalog.unnest($2)," \
	"  pg_catalog.unnest($3)" extra_value \
	" ON CONFLICT (order_id) DO NOTHING" \
	" RETURNING order_id"

static StorePlan insert_many_plan = {
	STORE_INSERT_MANY("", ""),
	3, {UUIDARRAYOID, TEXTARRAYOID, JSONBARRAYOID}
};

static StorePlan insert_many_framed_plan = {
	STORE_INSERT_MANY(", value_schema_id", ", pg_catalog.unnest($4)"),
	4, {UUIDARRAYOID, TEXTARRAYOID, JSONBARRAYOID, INT4ARRAYOID}
};

static StorePlan lookup_one_plan = {
	"SELECT external_reference FROM " RO_SCHEMA ".received_orders"
	" WHERE order_id OPERATOR(pg_catalog.=) $1",
	1, {UUIDOID}, true
};

static StorePlan lookup_many_plan = {
	"SELECT order_id, external_reference FROM " RO_SCHEMA ".received_orders"
	" WHERE order_id OPERATOR(pg_catalog.=) ANY ($1)",
	1, {UUIDARRAYOID}, true
};

/*
 * A quarantine row is unique on its coordinates and the digest of the whole
 * message (key and value, NULL told from empty), and a key or value larger
 * than received_orders.max_event_bytes ($10) keeps only its first
 * RO_QUARANTINE_PREFIX_BYTES, with its length.  The digest's formula is the
 * one of the 1.0--1.1 update script, which fills it for the rows stored
 * before the quarantine had a digest.
 */
#define STORE_PREFIX(n) \
	"CASE WHEN pg_catalog.length($" #n ") OPERATOR(pg_catalog.>) $10" \
	" THEN pg_catalog.substring($" #n ", 1, " CppAsString2(RO_QUARANTINE_PREFIX_BYTES) ")" \
	" ELSE $" #n " END"

#define STORE_QUARANTINE_INSERT(extra_column, extra_value) \
	"INSERT INTO " RO_SCHEMA ".received_orders_quarantine" \
	" (kafka_topic, kafka_partition, kafka_offset, kafka_key, raw_value," \
	"  order_id, outcome, sqlstate, reason, kafka_key_bytes, raw_value_bytes," \
	"  message_digest, envelope, kafka_headers" extra_column ")" \
	" VALUES ($1, $2, $3, " STORE_PREFIX(4) ", " STORE_PREFIX(5) ", $6," \
	"  CAST($7 AS " RO_SCHEMA ".materialize_outcome), $8, $9," \
	"  CASE WHEN pg_catalog.length($4) OPERATOR(pg_catalog.>) $10 THEN pg_catalog.length($4) END," \
	"  CASE WHEN pg_catalog.length($5) OPERATOR(pg_catalog.>) $10 THEN pg_catalog.length($5) END," \
	"  pg_catalog.sha256(" \
	"   CASE WHEN $4 IS NULL THEN '\\x00'::pg_catalog.bytea" \
	"    ELSE '\\x01'::pg_catalog.bytea OPERATOR(pg_catalog.||)" \
	"     pg_catalog.int4send(pg_catalog.length($4)) OPERATOR(pg_catalog.||) $4 END" \
	"   OPERATOR(pg_catalog.||)" \
	"   CASE WHEN $5 IS NULL THEN '\\x00'::pg_catalog.bytea" \
	"    ELSE '\\x01'::pg_catalog.bytea OPERATOR(pg_catalog.||) $5 END)," \
	"  $11, CAST($12 AS pg_catalog.jsonb)" extra_value ")" \
	" ON CONFLICT ON CONSTRAINT received_orders_quarantine_message_key DO NOTHING"

static StorePlan quarantine_plan = {
	STORE_QUARANTINE_INSERT("", ""),
	12, {TEXTOID, INT4OID, INT8OID, BYTEAOID, BYTEAOID, UUIDOID, TEXTOID,
	TEXTOID, TEXTOID, INT4OID, TEXTOID, TEXTOID}
};

/*
 * For the Schema Registry form: a framed value's Schema Registry
 * id ($13), or the GUID a __value_schema_id header named ($14).
 */
static StorePlan quarantine_framed_plan = {
	STORE_QUARANTINE_INSERT(", value_schema_id, value_schema_guid", ", $13, $14"),
	14, {TEXTOID, INT4OID, INT8OID, BYTEAOID, BYTEAOID, UUIDOID, TEXTOID,
	TEXTOID, TEXTOID, INT4OID, TEXTOID, TEXTOID, INT4OID, UUIDOID}
};

/*
 * A quarantine without message_digest (an installation not yet updated to
 * this library's schema: until ALTER EXTENSION ... UPDATE).
 */
static StorePlan quarantine_1_0_plan = {
	"INSERT INTO " RO_SCHEMA ".received_orders_quarantine"
	" (kafka_topic, kafka_partition, kafka_offset, kafka_key, raw_value,"
	"  order_id, outcome, sqlstate, reason)"
	" VALUES ($1, $2, $3, $4, $5, $6,"
	"  CAST($7 AS " RO_SCHEMA ".materialize_outcome), $8, $9)"
	" ON CONFLICT (kafka_topic, kafka_partition, kafka_offset) DO NOTHING",
	9, {TEXTOID, INT4OID, INT8OID, BYTEAOID, BYTEAOID, UUIDOID, TEXTOID,
	TEXTOID, TEXTOID}
};

/*
 * What makes an INSERT ... ON CONFLICT DO NOTHING write nothing although no
 * row conflicts: an enabled BEFORE INSERT row trigger (returning NULL), or
 * row level security.  tgtype bits: 1 row, 2 before, 4 insert.
 */
static StorePlan suppressible_plan = {
	"SELECT EXISTS (SELECT FROM pg_catalog.pg_trigger t"
	"  WHERE t.tgrelid OPERATOR(pg_catalog.=) '" RO_SCHEMA ".received_orders'::pg_catalog.regclass"
	"    AND NOT t.tgisinternal AND t.tgenabled OPERATOR(pg_catalog.<>) 'D'"
	"    AND (t.tgtype OPERATOR(pg_catalog.&) 7::pg_catalog.int2) OPERATOR(pg_catalog.=) 7::pg_catalog.int2)"
	" OR (SELECT c.relrowsecurity FROM pg_catalog.pg_class c"
	"  WHERE c.oid OPERATOR(pg_catalog.=) '" RO_SCHEMA ".received_orders'::pg_catalog.regclass)",
	0, {InvalidOid}
};

static StorePlan fetch_quarantined_plan = {
	"SELECT raw_value, raw_value_bytes, envelope,"
	" kafka_headers OPERATOR(pg_catalog.->>) 'content-type'"
	" FROM " RO_SCHEMA ".received_orders_quarantine"
	" WHERE id OPERATOR(pg_catalog.=) $1 FOR UPDATE",
	1, {INT8OID}
};

static StorePlan fetch_quarantined_1_0_plan = {
	"SELECT raw_value, NULL::pg_catalog.int4, NULL::pg_catalog.text,"
	" NULL::pg_catalog.text FROM " RO_SCHEMA ".received_orders_quarantine"
	" WHERE id OPERATOR(pg_catalog.=) $1 FOR UPDATE",
	1, {INT8OID}
};

/*
 * The Schema Registry id of a quarantined framed value, or the
 * GUID of a value a header named.
 */
static StorePlan fetch_quarantined_schema_plan = {
	"SELECT value_schema_id, value_schema_guid::pg_catalog.text"
	" FROM " RO_SCHEMA ".received_orders_quarantine"
	" WHERE id OPERATOR(pg_catalog.=) $1",
	1, {INT8OID}
};

static StorePlan delete_quarantined_plan = {
	"DELETE FROM " RO_SCHEMA ".received_orders_quarantine"
	" WHERE id OPERATOR(pg_catalog.=) $1",
	1, {INT8OID}
};

/*
 * The quarantine row of a replayed message leaves a record of the
 * replay ($2 the order, $3 the replay's outcome) in the same statement.
 */
static StorePlan replay_quarantined_plan = {
	"WITH gone AS (DELETE FROM " RO_SCHEMA ".received_orders_quarantine"
	"  WHERE id OPERATOR(pg_catalog.=) $1"
	"  RETURNING id, kafka_topic, kafka_partition, kafka_offset, outcome,"
	"   sqlstate, reason, quarantined_at)"
	" INSERT INTO " RO_SCHEMA ".received_orders_replays"
	" (quarantine_id, kafka_topic, kafka_partition, kafka_offset, outcome,"
	"  sqlstate, reason, quarantined_at, order_id, replayed_as)"
	" SELECT g.id, g.kafka_topic, g.kafka_partition, g.kafka_offset, g.outcome,"
	"  g.sqlstate, g.reason, g.quarantined_at, $2,"
	"  CAST($3 AS " RO_SCHEMA ".materialize_outcome) FROM gone g",
	3, {INT8OID, UUIDOID, TEXTOID}
};

/*
 * Positions move only forwards: a late batch of a zombie member (one the group
 * has already replaced) must not rewind what its successor recorded.  The
 * caller passes one row per (topic, partition), sorted, so that concurrent
 * batches lock position rows in one order.
 */
static StorePlan advance_positions_plan = {
	"INSERT INTO " RO_SCHEMA ".received_orders_positions AS p"
	" (consumer_group, kafka_topic, kafka_partition, next_offset)"
	" SELECT $1, t.kafka_topic, t.kafka_partition, t.next_offset"
	" FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3),"
	"  pg_catalog.unnest($4)) AS t (kafka_topic, kafka_partition, next_offset)"
	" ON CONFLICT ON CONSTRAINT received_orders_positions_pkey"
	" DO UPDATE SET next_offset = EXCLUDED.next_offset,"
	"  updated_at = pg_catalog.now()"
	" WHERE p.next_offset OPERATOR(pg_catalog.<) EXCLUDED.next_offset",
	4, {TEXTOID, TEXTARRAYOID, INT4ARRAYOID, INT8ARRAYOID}
};

/*
 * A consumer group's owner and Kafka cluster (groups.c decides with them).
 */
static StorePlan group_lookup_plan = {
	"SELECT g.owner_role, g.kafka_cluster_id"
	" FROM " RO_SCHEMA ".received_orders_consumer_groups g"
	" WHERE g.consumer_group OPERATOR(pg_catalog.=) $1",
	1, {TEXTOID}
};

/*
 * Fill what a consumer group lacks: its owner ($2, NULL for none) if it has
 * none, its Kafka cluster ($3, NULL for none) if none is recorded.  Never
 * replaces a value: two roles claiming at once, the second finds the first's.
 */
static StorePlan group_fill_plan = {
	"INSERT INTO " RO_SCHEMA ".received_orders_consumer_groups AS g"
	" (consumer_group, owner_role, kafka_cluster_id) VALUES ($1, $2, $3)"
	" ON CONFLICT ON CONSTRAINT received_orders_consumer_groups_pkey"
	" DO UPDATE SET owner_role = COALESCE(g.owner_role, EXCLUDED.owner_role),"
	"  kafka_cluster_id = COALESCE(g.kafka_cluster_id, EXCLUDED.kafka_cluster_id),"
	"  updated_at = pg_catalog.now()"
	" WHERE (g.owner_role IS NULL AND EXCLUDED.owner_role IS NOT NULL)"
	"  OR (g.kafka_cluster_id IS NULL AND EXCLUDED.kafka_cluster_id IS NOT NULL)",
	3, {TEXTOID, NAMEOID, TEXTOID}
};

/*
 * How many consumer groups a role owns (groups.c caps the groups a role
 * claims).
 */
static StorePlan group_count_owned_plan = {
	"SELECT pg_catalog.count(*) FROM " RO_SCHEMA ".received_orders_consumer_groups g"
	" WHERE g.owner_role OPERATOR(pg_catalog.=) $1",
	1, {NAMEOID}
};

/* Whether a consumer group has positions (groups.c: may it be claimed?). */
static StorePlan group_has_positions_plan = {
	"SELECT EXISTS (SELECT FROM " RO_SCHEMA ".received_orders_positions p"
	" WHERE p.consumer_group OPERATOR(pg_catalog.=) $1)",
	1, {TEXTOID}
};

static int	StoreExecute(StorePlan *plan, Datum *values, const char *nulls,
						 int expected);
static ArrayType *StoreUuidArray(pg_uuid_t *const *uuids, int count);
static ArrayType *StoreSchemaIdArray(const int32 *const *schema_ids,
									 int count);
static int	StoreInsertChunk(RoEvent **events, const int32 *const *schema_ids,
							 int count, bool *inserted);
static int	StoreFindFirst(pg_uuid_t *const *uuids, int count,
						   const pg_uuid_t *id);

/*
 * StoreExecute
 *		Run a kept plan (preparing it on first use), or plan an each_call
 *		statement for this call, and check its result code.
 */
static int
StoreExecute(StorePlan *plan, Datum *values, const char *nulls, int expected)
{
	int			rc;

	if (plan->each_call)
	{
		rc = SPI_execute_with_args(plan->sql, plan->nargs, plan->argtypes,
								   values, nulls, false, 0);
		if (rc != expected)
			elog(ERROR, "SPI_execute_with_args returned %s for \"%s\"",
				 SPI_result_code_string(rc), plan->sql);
		return rc;
	}
	if (plan->plan == NULL)
	{
		SPIPlanPtr	prepared;

		prepared = SPI_prepare(plan->sql, plan->nargs, plan->argtypes);
		if (prepared == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 plan->sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(prepared) != 0)
			elog(ERROR, "SPI_keepplan failed");
		plan->plan = prepared;
	}

	rc = SPI_execute_plan(plan->plan, values, nulls, false, 0);
	if (rc != expected)
		elog(ERROR, "SPI_execute_plan returned %s for \"%s\"",
			 SPI_result_code_string(rc), plan->sql);
	return rc;
}

/*
 * StoreUuidArray
 *		Build a uuid[] from pointers to UUIDs.
 */
static ArrayType *
StoreUuidArray(pg_uuid_t *const *uuids, int count)
{
	Datum	   *datums = palloc(sizeof(Datum) * Max(count, 1));

	for (int i = 0; i < count; i++)
		datums[i] = UUIDPGetDatum(uuids[i]);
	return construct_array(datums, count, UUIDOID, UUID_LEN, false,
						   TYPALIGN_CHAR);
}

/*
 * StoreSchemaIdArray
 *		Build an integer[] from pointers to schema ids (NULL: a NULL
 *		element).
 */
static ArrayType *
StoreSchemaIdArray(const int32 *const *schema_ids, int count)
{
	Datum	   *datums = palloc(sizeof(Datum) * Max(count, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(count, 1));
	int			dims[1] = {count};
	int			lbs[1] = {1};

	for (int i = 0; i < count; i++)
	{
		nulls[i] = schema_ids[i] == NULL;
		datums[i] = nulls[i] ? (Datum) 0 : Int32GetDatum(*schema_ids[i]);
	}
	return construct_md_array(datums, nulls, 1, dims, lbs, INT4OID,
							  sizeof(int32), true, TYPALIGN_INT);
}

/*
 * StoreFindFirst
 *		The index of the first of uuids (sorted by their bytes, repeats
 *		allowed) equal to id, or -1.
 */
static int
StoreFindFirst(pg_uuid_t *const *uuids, int count, const pg_uuid_t *id)
{
	int			low = 0,
				high = count;

	while (low < high)
	{
		int			mid = low + (high - low) / 2;

		if (memcmp(uuids[mid]->data, id->data, UUID_LEN) < 0)
			low = mid + 1;
		else
			high = mid;
	}
	if (low == count || memcmp(uuids[low]->data, id->data, UUID_LEN) != 0)
		return -1;
	return low;
}

/*
 * RoStoreInsertOne
 *		INSERT ... ON CONFLICT DO NOTHING one event; true if a row was written.
 *		schema_id (NULL: none) is the Schema Registry id of the framed value
 *		the event came from.
 */
bool
RoStoreInsertOne(const RoEvent *event, const int32 *schema_id)
{
	Datum		values[4];

	values[0] = UUIDPGetDatum(&event->order_id);
	values[1] = PointerGetDatum(event->external_reference);
	values[2] = JsonbPGetDatum(event->payload);
	if (schema_id != NULL)
	{
		values[3] = Int32GetDatum(*schema_id);
		StoreExecute(&insert_one_framed_plan, values, NULL, SPI_OK_INSERT);
	}
	else
		StoreExecute(&insert_one_plan, values, NULL, SPI_OK_INSERT);
	return SPI_processed == 1;
}

/*
 * RoStoreInsertMany
 *		Insert events (sorted by the caller by order_id, then position) in
 *		statements of at most STORE_INSERT_CHUNK events; set inserted[i] for
 *		each event that wrote a row and return how many did.  schema_ids is
 *		NULL for a batch of JSON values; for the Schema Registry form,
 *		schema_ids[i] is the schema id of events[i]'s framed value (NULL:
 *		none, a value whose schema a header's GUID named).
 *
 * After each statement the WAL writer is asked to write and flush what the
 * batch has logged so far (XLogSetAsyncXactLSN, as an asynchronous commit
 * asks it), while this backend goes on with the next statement.  The
 * batch's COMMIT then waits only for the WAL of its last statement,
 * instead of writing and flushing the whole batch's: on a machine where
 * the commit's flush is a few milliseconds per thousand events, that wait
 * was a tenth of a batch's time, with the CPU idle.  Flushing WAL earlier
 * changes nothing of what a commit guarantees.
 */
int
RoStoreInsertMany(RoEvent **events, const int32 *const *schema_ids, int count,
				  bool *inserted)
{
	int			matched = 0;

	for (int i = 0; i < count; i++)
		inserted[i] = false;
	for (int start = 0; start < count; start += STORE_INSERT_CHUNK)
	{
		matched += StoreInsertChunk(events + start,
									schema_ids ? schema_ids + start : NULL,
									Min(count - start, STORE_INSERT_CHUNK),
									inserted + start);
		XLogSetAsyncXactLSN(GetXLogInsertRecPtr());
	}
	return matched;
}

/*
 * StoreInsertChunk
 *		RoStoreInsertMany's statement for count events.
 */
static int
StoreInsertChunk(RoEvent **events, const int32 *const *schema_ids, int count,
				 bool *inserted)
{
	Datum		values[4];
	int			nvalues = schema_ids ? 4 : 3;
	pg_uuid_t **uuids = palloc(sizeof(pg_uuid_t *) * Max(count, 1));
	Datum	   *references = palloc(sizeof(Datum) * Max(count, 1));
	Datum	   *payloads = palloc(sizeof(Datum) * Max(count, 1));
	uint64		returned;
	int			matched = 0;

	for (int i = 0; i < count; i++)
	{
		uuids[i] = &events[i]->order_id;
		references[i] = PointerGetDatum(events[i]->external_reference);
		payloads[i] = JsonbPGetDatum(events[i]->payload);
	}
	values[0] = PointerGetDatum(StoreUuidArray(uuids, count));
	values[1] = PointerGetDatum(construct_array(references, count, TEXTOID,
												-1, false, TYPALIGN_INT));
	values[2] = PointerGetDatum(construct_array(payloads, count, JSONBOID,
												-1, false, TYPALIGN_INT));
	if (schema_ids != NULL)
	{
		values[3] = PointerGetDatum(StoreSchemaIdArray(schema_ids, count));
		StoreExecute(&insert_many_framed_plan, values, NULL,
					 SPI_OK_INSERT_RETURNING);
	}
	else
		StoreExecute(&insert_many_plan, values, NULL, SPI_OK_INSERT_RETURNING);

	/*
	 * RETURNING names the inserted ids.  events is sorted by order_id (ties
	 * by position), and within one statement the first of equal ids is the
	 * one inserted; an id that an earlier statement inserted conflicts here.
	 */
	returned = SPI_processed;
	for (uint64 r = 0; r < returned; r++)
	{
		bool		isnull;
		int			first;

		first = StoreFindFirst(uuids, count,
							   DatumGetUUIDP(SPI_getbinval(SPI_tuptable->vals[r],
														   SPI_tuptable->tupdesc, 1,
														   &isnull)));
		if (first < 0)
			elog(ERROR, "inserted order_id not found among the batch's events");
		inserted[first] = true;
		matched++;
	}
	SPI_freetuptable(SPI_tuptable);
	for (int i = 0; i < nvalues; i++)
		pfree(DatumGetPointer(values[i]));
	pfree(uuids);
	pfree(references);
	pfree(payloads);
	return matched;
}

/*
 * RoStoreLookupReference
 *		The stored external_reference of an order, or NULL if none is stored.
 */
text *
RoStoreLookupReference(const pg_uuid_t *order_id)
{
	Datum		values[1];
	bool		isnull;
	Datum		reference;

	values[0] = UUIDPGetDatum(order_id);
	StoreExecute(&lookup_one_plan, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return NULL;
	reference = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
							  &isnull);
	return DatumGetTextPCopy(reference);
}

/*
 * RoStoreLookupReferences
 *		Fill references[i] with the stored external_reference of
 *		order_ids[i], or NULL, in one statement.  order_ids is sorted by its
 *		bytes (repeats allowed), so each stored row finds its ids by a
 *		binary search.
 */
void
RoStoreLookupReferences(pg_uuid_t *order_ids, int count, text **references)
{
	Datum		values[1];
	pg_uuid_t **uuids = palloc(sizeof(pg_uuid_t *) * Max(count, 1));

	for (int i = 0; i < count; i++)
	{
		uuids[i] = &order_ids[i];
		references[i] = NULL;
	}
	values[0] = PointerGetDatum(StoreUuidArray(uuids, count));
	StoreExecute(&lookup_many_plan, values, NULL, SPI_OK_SELECT);

	for (uint64 r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tuple = SPI_tuptable->vals[r];
		bool		isnull;
		pg_uuid_t  *id;
		text	   *reference;

		id = DatumGetUUIDP(SPI_getbinval(tuple, SPI_tuptable->tupdesc, 1,
										 &isnull));
		reference = DatumGetTextPCopy(SPI_getbinval(tuple,
													SPI_tuptable->tupdesc, 2,
													&isnull));
		for (int i = StoreFindFirst(uuids, count, id);
			 i >= 0 && i < count &&
			 memcmp(id->data, order_ids[i].data, UUID_LEN) == 0;
			 i++)
			references[i] = reference;
	}
	SPI_freetuptable(SPI_tuptable);
}

/*
 * RoStoreQuarantine
 *		Keep a rejected or conflicting message, once per Kafka coordinates;
 *		schema_id (NULL: none) is the Schema Registry id of a framed value,
 *		schema_guid (NULL: none) the GUID a __value_schema_id header named.
 */
void
RoStoreQuarantine(Datum topic, bool topic_null,
				  Datum partition, bool partition_null,
				  Datum offset, bool offset_null,
				  Datum key, bool key_null,
				  Datum raw_value, bool raw_value_null,
				  const pg_uuid_t *order_id, RoOutcome outcome,
				  int sqlerrcode, const char *reason,
				  const char *envelope, const char *headers,
				  const int32 *schema_id, const pg_uuid_t *schema_guid)
{
	Datum		values[14];
	char		nulls[14];

	memset(nulls, ' ', sizeof(nulls));
	values[0] = topic;
	nulls[0] = topic_null ? 'n' : ' ';
	values[1] = partition;
	nulls[1] = partition_null ? 'n' : ' ';
	values[2] = offset;
	nulls[2] = offset_null ? 'n' : ' ';
	values[3] = key;
	nulls[3] = key_null ? 'n' : ' ';
	values[4] = raw_value;
	nulls[4] = raw_value_null ? 'n' : ' ';
	values[5] = order_id ? UUIDPGetDatum(order_id) : (Datum) 0;
	nulls[5] = order_id ? ' ' : 'n';
	values[6] = CStringGetTextDatum(RoOutcomeLabel(outcome));
	values[7] = CStringGetTextDatum(unpack_sql_state(sqlerrcode));
	values[8] = CStringGetTextDatum(reason);
	values[9] = Int32GetDatum(RoMaxEventBytes);
	nulls[9] = ' ';
	values[10] = envelope ? CStringGetTextDatum(envelope) : (Datum) 0;
	nulls[10] = envelope ? ' ' : 'n';
	values[11] = headers ? CStringGetTextDatum(headers) : (Datum) 0;
	nulls[11] = headers ? ' ' : 'n';
	if (schema_id != NULL || schema_guid != NULL)
	{
		values[12] = schema_id ? Int32GetDatum(*schema_id) : (Datum) 0;
		nulls[12] = schema_id ? ' ' : 'n';
		values[13] = schema_guid ? UUIDPGetDatum(schema_guid) : (Datum) 0;
		nulls[13] = schema_guid ? ' ' : 'n';
		StoreExecute(&quarantine_framed_plan, values, nulls, SPI_OK_INSERT);
	}
	else if (StoreQuarantineHasDigest())
		StoreExecute(&quarantine_plan, values, nulls, SPI_OK_INSERT);
	else
		StoreExecute(&quarantine_1_0_plan, values, nulls, SPI_OK_INSERT);
}

/*
 * StoreRelation
 *		The extension's table relname, InvalidOid when the installed
 *		version has none: a library serves the installation of an older
 *		version until ALTER EXTENSION ... UPDATE.  A syscache lookup, asked
 *		on every use, since the update may happen while a backend lives.
 */
static Oid
StoreRelation(const char *relname)
{
	return get_relname_relid(relname, get_namespace_oid(RO_SCHEMA, false));
}

/*
 * StoreHasColumn
 *		Whether the installed table relname has the column (see
 *		StoreRelation).
 */
static bool
StoreHasColumn(const char *relname, const char *column)
{
	Oid			rel = StoreRelation(relname);

	return OidIsValid(rel) && get_attnum(rel, column) != InvalidAttrNumber;
}

/*
 * StoreQuarantineHasDigest
 *		Whether the installed quarantine has message_digest: a library
 *		newer than the installed extension serves the older schema until
 *		ALTER EXTENSION ... UPDATE.  Asked on every use (a syscache lookup), since
 *		the update may happen while a backend lives.
 */
static bool
StoreQuarantineHasDigest(void)
{
	return StoreHasColumn("received_orders_quarantine", "message_digest");
}

/*
 * RoStoreFetchQuarantined
 *		Lock a quarantine row and return its raw value (NULL if it has none)
 *		and, when it keeps only a prefix of the value, the value's length as
 *		received (else -1), its envelope (NULL: the value is the event) and
 *		its content-type header (NULL if none); false if no row has that id.
 */
bool
RoStoreFetchQuarantined(int64 id, bytea **raw_value, int64 *received_bytes,
						char **envelope, char **content_type)
{
	Datum		values[1];
	bool		isnull;
	Datum		datum;

	values[0] = Int64GetDatum(id);
	StoreExecute(StoreQuarantineHasDigest() ? &fetch_quarantined_plan :
				 &fetch_quarantined_1_0_plan, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	datum = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
						  &isnull);
	*raw_value = isnull ? NULL : DatumGetByteaPCopy(datum);
	datum = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2,
						  &isnull);
	*received_bytes = isnull ? -1 : DatumGetInt32(datum);
	*envelope = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3);
	*content_type = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4);
	return true;
}

/*
 * RoStoreFetchQuarantinedSchema
 *		What a quarantine row of the Schema Registry form records of its
 *		value's schema: *has_schema_id and *schema_id its value_schema_id (a
 *		value framed by a Schema Registry serializer), *schema_guid its
 *		value_schema_guid as text (a value a __value_schema_id header named;
 *		NULL if none).  False when it records neither, or the installed
 *		quarantine has no schema columns (an installation not yet updated).
 */
bool
RoStoreFetchQuarantinedSchema(int64 id, int32 *schema_id, bool *has_schema_id,
							  char **schema_guid)
{
	Datum		values[1];
	bool		isnull;
	Datum		datum;

	*has_schema_id = false;
	*schema_guid = NULL;
	if (!StoreHasColumn("received_orders_quarantine", "value_schema_guid"))
		return false;
	values[0] = Int64GetDatum(id);
	StoreExecute(&fetch_quarantined_schema_plan, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
		return false;
	datum = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull)
	{
		*schema_id = DatumGetInt32(datum);
		*has_schema_id = true;
	}
	*schema_guid = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	return *has_schema_id || *schema_guid != NULL;
}

/*
 * RoStoreDeleteQuarantined
 *		Remove a quarantine row once its message is materialized as order_id
 *		with outcome replayed_as (inserted or duplicate); the row leaves a
 *		record of the replay in received_orders_replays, which the view
 *		quarantine_summary counts.  An installation not yet updated to have
 *		that table (a library newer than the installed extension, until
 *		ALTER EXTENSION ... UPDATE) only has the row removed.
 */
void
RoStoreDeleteQuarantined(int64 id, const pg_uuid_t *order_id,
						 RoOutcome replayed_as)
{
	Datum		values[3];

	values[0] = Int64GetDatum(id);
	if (!OidIsValid(StoreRelation("received_orders_replays")))
	{
		StoreExecute(&delete_quarantined_plan, values, NULL, SPI_OK_DELETE);
		return;
	}
	values[1] = UUIDPGetDatum(order_id);
	values[2] = CStringGetTextDatum(RoOutcomeLabel(replayed_as));
	StoreExecute(&replay_quarantined_plan, values, NULL, SPI_OK_INSERT);
}

/*
 * RoStoreAdvancePositions
 *		Record the next offset of each (topic, partition) for a consumer
 *		group, never moving one backwards.  topics, partitions and
 *		next_offsets hold count entries, one per partition, sorted.
 */
void
RoStoreAdvancePositions(text *consumer_group, Datum *topics, Datum *partitions,
						Datum *next_offsets, int count)
{
	Datum		values[4];

	if (count <= 0)
		return;
	values[0] = PointerGetDatum(consumer_group);
	values[1] = PointerGetDatum(construct_array(topics, count, TEXTOID, -1,
												false, TYPALIGN_INT));
	values[2] = PointerGetDatum(construct_array(partitions, count, INT4OID,
												sizeof(int32), true,
												TYPALIGN_INT));
	values[3] = PointerGetDatum(construct_array(next_offsets, count, INT8OID,
												sizeof(int64), FLOAT8PASSBYVAL,
												TYPALIGN_DOUBLE));
	StoreExecute(&advance_positions_plan, values, NULL, SPI_OK_INSERT);
}

/*
 * RoStoreInsertsSuppressible
 *		Whether a BEFORE INSERT row trigger or row level security could have
 *		made an insert of received_orders write nothing without a conflict.
 */
bool
RoStoreInsertsSuppressible(void)
{
	bool		isnull;
	Datum		result;

	StoreExecute(&suppressible_plan, NULL, NULL, SPI_OK_SELECT);
	result = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1,
						   &isnull);
	return !isnull && DatumGetBool(result);
}

/*
 * RoStoreHasGroups
 *		Whether the installed extension has consumer groups
 *		(received_orders_consumer_groups): a library newer than the
 *		installed extension serves the older schema until ALTER EXTENSION
 *		... UPDATE, and its batch function must keep working meanwhile.  Asked on every use (a syscache lookup),
 *		since the update may happen while a backend lives.
 */
bool
RoStoreHasGroups(void)
{
	return OidIsValid(StoreRelation("received_orders_consumer_groups"));
}

/*
 * RoStoreLookupGroup
 *		A consumer group's owner and Kafka cluster id, NULL where none is
 *		recorded (palloc'd in the current context, valid until SPI_finish);
 *		false when the group has no row.
 */
bool
RoStoreLookupGroup(text *consumer_group, char **owner_role, char **cluster_id)
{
	Datum		values[1];

	*owner_role = NULL;
	*cluster_id = NULL;
	values[0] = PointerGetDatum(consumer_group);
	StoreExecute(&group_lookup_plan, values, NULL, SPI_OK_SELECT);
	if (SPI_processed == 0)
	{
		SPI_freetuptable(SPI_tuptable);
		return false;
	}
	*owner_role = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	*cluster_id = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	SPI_freetuptable(SPI_tuptable);
	return true;
}

/*
 * RoStoreFillGroup
 *		Record a consumer group's owner and Kafka cluster id where it has
 *		none (either may be NULL: left as it is).
 */
void
RoStoreFillGroup(text *consumer_group, const char *owner_role,
				 text *cluster_id)
{
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};
	NameData	owner;

	values[0] = PointerGetDatum(consumer_group);
	if (owner_role != NULL)
	{
		namestrcpy(&owner, owner_role);
		values[1] = NameGetDatum(&owner);
	}
	else
	{
		values[1] = (Datum) 0;
		nulls[1] = 'n';
	}
	values[2] = PointerGetDatum(cluster_id);
	if (cluster_id == NULL)
		nulls[2] = 'n';
	StoreExecute(&group_fill_plan, values, nulls, SPI_OK_INSERT);
}

/*
 * RoStoreCountOwnedGroups
 *		How many consumer groups the role owns.
 */
int64
RoStoreCountOwnedGroups(const char *owner_role)
{
	Datum		values[1];
	NameData	owner;
	bool		isnull;
	int64		count;

	namestrcpy(&owner, owner_role);
	values[0] = NameGetDatum(&owner);
	StoreExecute(&group_count_owned_plan, values, NULL, SPI_OK_SELECT);
	count = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return count;
}

/*
 * RoStoreGroupHasPositions
 *		Whether the consumer group has a position of any partition.
 */
bool
RoStoreGroupHasPositions(text *consumer_group)
{
	Datum		values[1];
	bool		isnull;
	bool		has;

	values[0] = PointerGetDatum(consumer_group);
	StoreExecute(&group_has_positions_plan, values, NULL, SPI_OK_SELECT);
	has = DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0],
									 SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return has;
}
