/*-------------------------------------------------------------------------
 *
 * outcome.c
 *	  What became of an event: inserted, duplicate or conflict once its
 *	  INSERT ran, or rejected, each with its reason.
 *
 * The guarantee is PostgreSQL's: order_id is the primary key and every write
 * is INSERT ... ON CONFLICT (order_id) DO NOTHING.  An event that did not
 * insert is a duplicate when the stored row has its externalReference, and a
 * conflict (an identity contradiction, left for an operator) when not.
 *
 * RoOutcomeInsertOne decides one event (materialize_order, replay.c);
 * RoOutcomeResolveNotInserted decides a batch's candidates with one statement;
 * RoOutcomeReject decides an element of a batch as rejected.  The outcome's
 * name as the enum materialize_outcome spells it is outcome_label.c's, which
 * store.c uses too.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/builtins.h"

#include "received_orders.h"

static void OutcomeNotStored(const pg_uuid_t *order_id);
static char *OutcomeUuidText(const pg_uuid_t *uuid);
static char *OutcomeConflictMessage(const RoEvent *event,
									const text *stored);

/*
 * RoOutcomeInsertOne
 *		Insert one valid event; tell inserted, duplicate or conflict.
 *		schema_id (NULL: none) is the Schema Registry id of the framed value
 *		it came from, recorded on the row it inserts.
 *
 * When the INSERT did nothing, a second statement reads the stored row: in
 * READ COMMITTED it takes a new snapshot, so it sees the row of a concurrent
 * transaction that ON CONFLICT waited for.  *stored is set for a conflict.
 */
RoOutcome
RoOutcomeInsertOne(const RoEvent *event, const int32 *schema_id, text **stored)
{
	*stored = NULL;
	if (RoStoreInsertOne(event, schema_id))
		return RO_OUTCOME_INSERTED;

	*stored = RoStoreLookupReference(&event->order_id);
	if (*stored == NULL)
		OutcomeNotStored(&event->order_id);
	if (RoOutcomeSameText(*stored, event->external_reference))
		return RO_OUTCOME_DUPLICATE;
	return RO_OUTCOME_CONFLICT;
}

/*
 * OutcomeNotStored
 *		An insert wrote nothing, yet no row of that order_id is there.  With
 *		a BEFORE INSERT row trigger or row level security on the table, that
 *		is what suppressed it, on every retry: a permanent error naming the
 *		cause (triggered_action_exception), never a retry loop.  Without
 *		either, the row was deleted meanwhile by a concurrent transaction: a
 *		retry succeeds (serialization_failure).
 */
static void
OutcomeNotStored(const pg_uuid_t *order_id)
{
	if (RoStoreInsertsSuppressible())
		ereport(ERROR,
				(errcode(ERRCODE_TRIGGERED_ACTION_EXCEPTION),
				 errmsg("order %s was not stored: the insert into %s.received_orders wrote no row",
						OutcomeUuidText(order_id), RO_SCHEMA),
				 errdetail("A BEFORE INSERT trigger on the table returned NULL, or row level security hid the row."),
				 errhint("Fix or drop that trigger (or policy); received_orders must store every valid event.")));
	ereport(ERROR,
			(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
			 errmsg("order %s was deleted while being materialized",
					OutcomeUuidText(order_id)),
			 errhint("Retry the transaction.")));
}

/*
 * RoOutcomeSameText
 *		Whether two strings (externalReferences, topics) are the same, byte
 *		for byte (as a deterministic collation's equality would say).
 */
bool
RoOutcomeSameText(const text *a, const text *b)
{
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

/*
 * OutcomeUuidText
 *		The canonical spelling of a UUID.
 */
static char *
OutcomeUuidText(const pg_uuid_t *uuid)
{
	return DatumGetCString(DirectFunctionCall1(uuid_out,
											   UUIDPGetDatum(uuid)));
}

/*
 * OutcomeConflictMessage
 *		The one-line account of a conflict, for result rows and quarantine.
 */
static char *
OutcomeConflictMessage(const RoEvent *event, const text *stored)
{
	return psprintf("order %s is already stored with externalReference \"%s\"; this event has \"%s\"",
					OutcomeUuidText(&event->order_id),
					text_to_cstring(stored),
					text_to_cstring(event->external_reference));
}

/*
 * RoOutcomeConflictReport
 *		Report a conflict at elevel (WARNING, or ERROR for a replay).
 */
void
RoOutcomeConflictReport(int elevel, const RoEvent *event, const text *stored,
					  bool quarantined)
{
	ereport(elevel,
			(errcode(ERRCODE_UNIQUE_VIOLATION),
			 errmsg("order %s is already stored with another externalReference",
					OutcomeUuidText(&event->order_id)),
			 errdetail("The stored externalReference is \"%s\"; this event has \"%s\".",
					   text_to_cstring(stored),
					   text_to_cstring(event->external_reference)),
			 quarantined ?
			 errhint("The event was quarantined; the stored row was left unchanged.") :
			 errhint("The stored row was left unchanged; an orderId must identify one order.")));
}

/*
 * RoOutcomeResolveNotInserted
 *		Decide every candidate: inserted, or, by the stored row's reference,
 *		duplicate or conflict.  One statement reads all stored references.
 */
void
RoOutcomeResolveNotInserted(Batch *batch)
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
			OutcomeNotStored(&item->event.order_id);
		item->state = BATCH_DECIDED;
		if (RoOutcomeSameText(stored[w], item->event.external_reference))
			item->outcome = RO_OUTCOME_DUPLICATE;
		else
		{
			item->outcome = RO_OUTCOME_CONFLICT;
			item->sqlerrcode = ERRCODE_UNIQUE_VIOLATION;
			item->message = OutcomeConflictMessage(&item->event,
												   stored[w]);
			RoOutcomeConflictReport(WARNING, &item->event, stored[w], true);
		}
	}
}

/*
 * RoOutcomeReject
 *		Decide an element as rejected, with its SQLSTATE and reason.
 */
void
RoOutcomeReject(BatchItem *item, int sqlerrcode, const char *message,
			  const char *detail)
{
	item->state = BATCH_DECIDED;
	item->outcome = RO_OUTCOME_REJECTED;
	item->sqlerrcode = sqlerrcode;
	item->message = detail ?
		psprintf("%s: %s", RoOutcomeClip(message), RoOutcomeClip(detail)) :
		RoOutcomeClip(message);
}

/*
 * RoOutcomeClip
 *		A copy of a message cut to RO_MAX_REASON_PART_BYTES at a character
 *		boundary, with an ellipsis when cut: PostgreSQL's JSON errors quote
 *		the whole offending token, and the reason is stored per element.
 */
char *
RoOutcomeClip(const char *s)
{
	int			len = strlen(s);
	int			cut;

	if (len <= RO_MAX_REASON_PART_BYTES)
		return pstrdup(s);
	cut = pg_mbcliplen(s, len, RO_MAX_REASON_PART_BYTES - 3);
	return psprintf("%.*s\xe2\x80\xa6", cut, s);	/* U+2026 */
}
