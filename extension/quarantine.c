/*-------------------------------------------------------------------------
 *
 * quarantine.c
 *	  The rejected and conflicting elements of a batch, kept in the
 *	  quarantine as received.
 *
 * Each row keeps the message's coordinates, key and value as received,
 * its outcome, SQLSTATE and reason, and for the outbox forms its envelope
 * and the headers that identified it, so that replay_quarantined can open
 * it the same way (replay.c), and for the Schema Registry form the schema
 * id of a framed value or the GUID a __value_schema_id header named.
 * store.c writes the row, once per Kafka coordinates, in the caller's
 * transaction.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "utils/json.h"

#include "received_orders.h"

static char *QuarantineHeadersJson(Batch *batch, int i);

/*
 * RoQuarantineBatch
 *		Write every rejected and conflicting element to the quarantine, in
 *		the caller's transaction, once per Kafka coordinates.
 */
void
RoQuarantineBatch(Batch *batch)
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
						  batch->enveloped ? QuarantineHeadersJson(batch, i) : NULL,
						  item->has_schema_id ? &item->schema_id : NULL,
						  batch->framed && !batch->schema_guids_null[i] ?
						  DatumGetUUIDP(batch->schema_guids[i]) : NULL);
	}
}

/*
 * QuarantineHeadersJson
 *		The headers that identified a quarantined element of the outbox
 *		form, as a JSON object (NULL if none): its type header and its
 *		content-type, each as text, or as "\x..." (bytea's hex form) when not
 *		valid UTF-8.  Bounded like every stored field: a value longer than
 *		RO_QUARANTINE_PREFIX_BYTES keeps its first bytes (whole characters)
 *		and gains a member "NAME:bytes" with its length as received, so a
 *		short message with huge headers cannot store megabytes of text.
 */
static char *
QuarantineHeadersJson(Batch *batch, int i)
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
