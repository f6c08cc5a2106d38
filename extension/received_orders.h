/*-------------------------------------------------------------------------
 *
 * received_orders.h
 *	  Shared declarations of the received_orders extension.
 *
 * The extension turns OrderReceived events into rows of
 * received_orders.received_orders, one per order_id, with
 * INSERT ... ON CONFLICT (order_id) DO NOTHING.  event.c validates events,
 * store.c owns every SQL statement, materialize.c holds the SQL-callable
 * entry points and names the files a batch goes through in order, groups.c
 * decides who may use a consumer group's positions.
 *
 *-------------------------------------------------------------------------
 */
#ifndef RECEIVED_ORDERS_H
#define RECEIVED_ORDERS_H

#include "fmgr.h"
#include "common/jsonapi.h"
#include "utils/jsonb.h"
#include "utils/uuid.h"

/*
 * The PostgreSQL majors built against (15, 18): what changed in the JSON
 * parser's API that event.c, event_parse.c and envelope.c use.  From 16 on
 * a semantic callback returns a JsonParseErrorType (JSON_SUCCESS goes on);
 * from 17 on makeJsonLexContextCstringLen takes the context to fill first
 * (NULL: a new one) and a const string.
 */
#if PG_VERSION_NUM >= 160000
typedef JsonParseErrorType RoJsonCallbackResult;
#define RO_JSON_CALLBACK_DONE JSON_SUCCESS
#else
typedef void RoJsonCallbackResult;
#define RO_JSON_CALLBACK_DONE
#endif

#if PG_VERSION_NUM >= 170000
#define RoMakeJsonLexContext(data, len, need_escapes) \
	makeJsonLexContextCstringLen(NULL, (data), (len), PG_UTF8, (need_escapes))
#else
#define RoMakeJsonLexContext(data, len, need_escapes) \
	makeJsonLexContextCstringLen((char *) (data), (len), PG_UTF8, (need_escapes))
#endif

/* The schema fixed by received_orders.control. */
#define RO_SCHEMA "received_orders"

/* Longest externalReference accepted, in characters. */
#define RO_MAX_EXTERNAL_REFERENCE_CHARS 255

/* Deepest JSON nesting accepted; real events stay far below. */
#define RO_MAX_NESTING_DEPTH 512

/*
 * What the quarantine keeps of a key or value larger than
 * received_orders.max_event_bytes: its first bytes (with its length and the
 * message's digest).
 */
#define RO_QUARANTINE_PREFIX_BYTES 4096

/* Elements in one batch call (the feeder's largest --batch-size). */
#define RO_MAX_BATCH_ELEMENTS 100000

/* Longest Kafka topic name (Kafka's own limit) and consumer group. */
#define RO_MAX_TOPIC_BYTES 249
#define RO_MAX_GROUP_BYTES 255

/*
 * Consumer groups a role may own and still claim one more by using it; a
 * superuser hands it more with set_consumer_group_owner().
 */
#define RO_MAX_GROUPS_PER_ROLE 16

/* Bound of a rejection's message and of its detail in a reason. */
#define RO_MAX_REASON_PART_BYTES 256

/* Labels of received_orders.materialize_outcome, in enum order. */
typedef enum RoOutcome
{
	RO_OUTCOME_INSERTED,
	RO_OUTCOME_DUPLICATE,
	RO_OUTCOME_CONFLICT,
	RO_OUTCOME_REJECTED,
	RO_OUTCOME_SKIPPED			/* no value, position recorded */
} RoOutcome;

#define RO_OUTCOME_COUNT 5

/*
 * Why an event was refused: SQLSTATE and texts ready for ereport, or for a
 * result row and the quarantine when the batch function must not fail.
 */
typedef struct RoEventError
{
	int			sqlerrcode;
	char	   *message;
	char	   *detail;			/* may be NULL */
} RoEventError;

/* The fields of a valid event the table needs. */
typedef struct RoEvent
{
	pg_uuid_t	order_id;
	text	   *external_reference;
	Jsonb	   *payload;
} RoEvent;

/* How a relay wrapped the event in a Kafka value (envelope.c). */
typedef enum RoEnvelope
{
	RO_ENVELOPE_PLAIN,			/* the value is the event */
	RO_ENVELOPE_DEBEZIUM,		/* Debezium outbox event router, JsonConverter */
	RO_ENVELOPE_CLOUDEVENTS		/* CloudEvents, Kafka binding */
} RoEnvelope;

/* The event found in an envelope. */
typedef struct RoEnvelopeEvent
{
	const char *data;			/* the event's bytes */
	int			len;
	const char *type;			/* CloudEvents structured mode: "type" */
	int			type_len;
} RoEnvelopeEvent;

/*
 * A batch of the batch function, as batch.c takes it through the files
 * materialize.c names.
 */

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
	int32		schema_id;		/* for the quarantine and the stored row */
} BatchItem;

/* A batch: the elements and, for quarantine rows, their coordinates. */
typedef struct Batch
{
	int			count;
	text	   *consumer_group; /* NULL: no group, no positions */
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
	Datum	   *schema_guids;	/* a __value_schema_id header's GUID */
	bool	   *schema_guids_null;
} Batch;

/* received_orders.c */
extern int	RoMaxEventBytes;
extern bool RoErrorIsEventCaused(int sqlerrcode, bool limit_is_event);
extern void RoCheckVersion(void);

/* event.c */
extern bool RoEventCheckRaw(const char *data, int len, RoEventError *err);
extern bool RoEventCheckEncoding(const char *data, int len, RoEventError *err);
extern bool RoEventCheckNesting(const char *data, int len, RoEventError *err);
extern Jsonb *RoEventParseRaw(const char *data, int len);
extern bool RoEventCheckSize(Size len, RoEventError *err);
extern bool RoEventCheckFields(Jsonb *payload, RoEvent *event, RoEventError *err);
extern bool RoEventParseUuid(const char *str, int len, pg_uuid_t *uuid);
extern void RoEventReportError(const RoEventError *err, const char *hint);

/* event_parse.c */
extern Jsonb *RoEventParse(const char *data, int len, RoEventError *err);

/* event_fast.c */
extern Jsonb *RoEventParseFast(const char *data, int len);

/* envelope.c */
extern bool RoEnvelopeFromName(const char *name, RoEnvelope *envelope);
extern const char *RoEnvelopeName(RoEnvelope envelope);
extern bool RoEnvelopeIsStructured(const char *content_type, int len);
extern bool RoEnvelopeUnwrap(RoEnvelope envelope, bool structured,
							 const char *data, int len, RoEnvelopeEvent *out,
							 RoEventError *err);

/* frame.c */
extern bool RoFrameOpen(const char *data, int len, const char *decoded,
						int decoded_len, const char *decode_error,
						const int32 *given_id, int32 *schema_id,
						bool *has_schema_id, const char **event,
						int *event_len, RoEventError *err);

/* store.c */
extern bool RoStoreInsertOne(const RoEvent *event, const int32 *schema_id);
extern int	RoStoreInsertMany(RoEvent **events, const int32 *const *schema_ids,
							  int count, bool *inserted);
extern text *RoStoreLookupReference(const pg_uuid_t *order_id);
extern void RoStoreLookupReferences(pg_uuid_t *order_ids, int count,
									text **references);
extern void RoStoreQuarantine(Datum topic, bool topic_null,
							  Datum partition, bool partition_null,
							  Datum offset, bool offset_null,
							  Datum key, bool key_null,
							  Datum raw_value, bool raw_value_null,
							  const pg_uuid_t *order_id, RoOutcome outcome,
							  int sqlerrcode, const char *reason,
							  const char *envelope, const char *headers,
							  const int32 *schema_id,
							  const pg_uuid_t *schema_guid);
extern bool RoStoreFetchQuarantined(int64 id, bytea **raw_value,
									int64 *received_bytes, char **envelope,
									char **content_type);
extern bool RoStoreInsertsSuppressible(void);
extern void RoStoreAdvancePositions(text *consumer_group, Datum *topics,
									Datum *partitions, Datum *next_offsets,
									int count);
extern void RoStoreDeleteQuarantined(int64 id, const pg_uuid_t *order_id,
									 RoOutcome replayed_as);
extern bool RoStoreFetchQuarantinedSchema(int64 id, int32 *schema_id,
										  bool *has_schema_id,
										  char **schema_guid);
extern bool RoStoreHasGroups(void);
extern bool RoStoreLookupGroup(text *consumer_group, char **owner_role,
							   char **cluster_id);
extern void RoStoreFillGroup(text *consumer_group, const char *owner_role,
							 text *cluster_id);
extern int64 RoStoreCountOwnedGroups(const char *owner_role);
extern bool RoStoreGroupHasPositions(text *consumer_group);

/* groups.c */
extern void RoGroupCheck(text *consumer_group, text *cluster_id);

/* batch.c */
extern Datum RoBatchRun(FunctionCallInfo fcinfo, int first_arg,
					  text *consumer_group, const Batch *options);

/* outbox.c */
extern void RoOutboxOptions(FunctionCallInfo fcinfo, Batch *options);
extern bool RoOutboxOpenFrame(Batch *batch, BatchItem *item, int i);
extern bool RoOutboxOpenEnvelope(Batch *batch, BatchItem *item, int i);
extern char *RoOutboxOtherType(Batch *batch, const char *type, int type_len);

/* outcome_label.c */
extern const char *RoOutcomeLabel(RoOutcome outcome);
extern Datum RoOutcomeGetDatum(Oid enumtypid, RoOutcome outcome);

/* outcome.c */
extern RoOutcome RoOutcomeInsertOne(const RoEvent *event, const int32 *schema_id,
								  text **stored);
extern bool RoOutcomeSameText(const text *a, const text *b);
extern void RoOutcomeConflictReport(int elevel, const RoEvent *event,
								  const text *stored, bool quarantined);
extern void RoOutcomeResolveNotInserted(Batch *batch);
extern void RoOutcomeReject(BatchItem *item, int sqlerrcode, const char *message,
						  const char *detail);
extern char *RoOutcomeClip(const char *s);

/* quarantine.c */
extern void RoQuarantineBatch(Batch *batch);

/* positions.c */
extern text *RoPositionsGroupArgument(FunctionCallInfo fcinfo);
extern void RoPositionsCheckCoordinates(Batch *batch);
extern void RoPositionsRecord(Batch *batch);

/* replay.c */
extern RoOutcome RoReplayQuarantined(int64 id);

#endif							/* RECEIVED_ORDERS_H */
