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
 * RoErrorIsTransient
 *		Whether an error must fail the whole batch so that the caller retries
 *		it, rather than be pinned on one element and quarantined.
 *
 * Serialization failures and deadlocks (class 40), lack of resources (53),
 * lock timeouts (55P03), cancels and shutdowns (57) and I/O failures (58) say
 * nothing about the event: the same event succeeds on a retry.
 */
bool
RoErrorIsTransient(int sqlerrcode)
{
	int			category = ERRCODE_TO_CATEGORY(sqlerrcode);

	return category == ERRCODE_TRANSACTION_ROLLBACK ||
		category == ERRCODE_INSUFFICIENT_RESOURCES ||
		category == ERRCODE_OPERATOR_INTERVENTION ||
		category == ERRCODE_SYSTEM_ERROR ||
		sqlerrcode == ERRCODE_LOCK_NOT_AVAILABLE;
}
