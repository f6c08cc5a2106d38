/*-------------------------------------------------------------------------
 *
 * outcome_label.c
 *	  An outcome named as the enum materialize_outcome names it: its label
 *	  as text and its value of the enum.
 *
 * The labels are written once, here, in the enum's order (RoOutcome in
 * received_orders.h).  store.c writes the label into the quarantine and
 * the replay records; the entry points and the batch engine return the
 * enum's value; outcome.c decides which outcome an event has.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"

#include "received_orders.h"

static const char *const ro_outcome_labels[RO_OUTCOME_COUNT] = {
	"inserted",
	"duplicate",
	"conflict",
	"rejected",
	"skipped"
};

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
