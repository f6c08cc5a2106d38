/*-------------------------------------------------------------------------
 *
 * received_orders.c
 *	  Module entry point: the GUC, the outcome enum and error classes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "received_orders.h"

PG_MODULE_MAGIC;

/* received_orders.max_event_bytes: the largest event accepted, in bytes. */
int			RoMaxEventBytes = 1024 * 1024;

static const char *const ro_outcome_labels[RO_OUTCOME_COUNT] = {
	"inserted",
	"duplicate",
	"conflict",
	"rejected",
	"skipped"
};

void		_PG_init(void);

/*
 * _PG_init
 *		Define the extension's GUCs and reserve its prefix.
 *
 * The limit is superuser-settable only: it protects the server from the
 * feeder's input, so the feeder's role must not be able to raise it.
 */
void
_PG_init(void)
{
	DefineCustomIntVariable("received_orders.max_event_bytes",
							"Largest OrderReceived event accepted, in bytes.",
							"Larger events are rejected with SQLSTATE 54000 "
							"and, in a batch, quarantined.",
							&RoMaxEventBytes,
							1024 * 1024,
							1,
							MaxAllocSize / 4,
							PGC_SUSET,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);

	MarkGUCPrefixReserved("received_orders");
}

/*
 * RoOutcomeLabel
 *		The enum label of an outcome.
 */
const char *
RoOutcomeLabel(RoOutcome outcome)
{
	if (outcome < 0 || outcome >= RO_OUTCOME_COUNT)
		elog(ERROR, "invalid materialize outcome %d", (int) outcome);
	return ro_outcome_labels[outcome];
}

/*
 * RoOutcomeGetDatum
 *		The received_orders.materialize_outcome value of an outcome.
 *
 * enumtypid is the enum's OID as the caller's return type gives it, so no
 * name lookup (and no search_path) is involved.
 */
Datum
RoOutcomeGetDatum(Oid enumtypid, RoOutcome outcome)
{
	return DirectFunctionCall2(enum_in,
							   CStringGetDatum(RoOutcomeLabel(outcome)),
							   ObjectIdGetDatum(enumtypid));
}

/*
 * RoErrorIsEventCaused
 *		Whether an error can be pinned on the one element that raised it:
 *		only what an event's own data can cause, data exceptions (class 22)
 *		and integrity constraint violations (23), and program limits (54:
 *		too deep, too large) where they can only be the event's: while
 *		parsing it, or at its INSERT when it is the call's only event (a
 *		DBA's index too small for one event's field raises 54000; within a
 *		larger call a limit may be the batch's size, which the caller
 *		answers by splitting the batch down to such a call).  Anything else (a dropped
 *		index, corruption, an internal error, a feature not supported, a
 *		trigger failing whatever the row) says nothing about the event:
 *		pinning it would quarantine every valid event while the table
 *		silently stops growing, so the whole call fails instead and the
 *		caller retries and alerts.
 */
bool
RoErrorIsEventCaused(int sqlerrcode, bool limit_is_event)
{
	int			category = ERRCODE_TO_CATEGORY(sqlerrcode);

	return category == ERRCODE_DATA_EXCEPTION ||
		category == ERRCODE_INTEGRITY_CONSTRAINT_VIOLATION ||
		(limit_is_event && category == ERRCODE_PROGRAM_LIMIT_EXCEEDED);
}
