/*-------------------------------------------------------------------------
 *
 * decode.c
 *	  A batch's values decoded for the database, in the Schema Registry
 *	  form (--value-format confluent): each value sent is decoded
 *	  (confluent.c) into its JSON, or the reason it cannot be, with the
 *	  frame's schema id and the GUID its __value_schema_id header named.
 *	  db.c receives these and encodes them into the batch's arrays.
 *
 *	  Three decisions are the decode's: a registry that fails stops the
 *	  batch (retried, or the feeder stops, with the flags to check); a
 *	  decode that runs out of memory retries the batch a few times before
 *	  the message is quarantined; and the decoded JSON of one batch is
 *	  bounded, the message that would pass the bound starting the next.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "avro_alloc.h"
#include "decode.h"
#include "utf8.h"

/*
 * A value whose decode runs out of memory (the system's, not the bound a
 * value's size sets) is the batch's problem, not the message's: the batch
 * is retried with back-off, this many times for one message at most; then
 * the message is quarantined, its reason saying so.
 */
#define DECODE_OOM_ATTEMPTS 5

/*
 * The decoded JSON a batch's arrays may hold, as a multiple of the batch's
 * byte bound (--batch-max-bytes, which counts the values as received): a
 * few hundred bytes of Avro may decode into 16 MiB (AVRO_JSON_MAX_BYTES),
 * so without it a batch of many such messages would hold their count times
 * that.  The message that would pass it is not sent: it starts the next
 * batch (db_run_batch); the first message of a batch always goes.
 */
#define DECODE_BATCH_FACTOR 4

/*
 * decoder_init
 *		A decoder of the values framed for the schemas of r (shared by the
 *		lanes).
 */
void
decoder_init(decoder *d, registry *r)
{
	memset(d, 0, sizeof(*d));
	d->registry = r;
}

/*
 * decoder_begin_batch
 *		A new batch of byte bound max_bytes: nothing decoded in it yet.
 */
void
decoder_begin_batch(decoder *d, size_t max_bytes)
{
	d->total = 0;
	d->limit = max_bytes > SIZE_MAX / DECODE_BATCH_FACTOR ?
		SIZE_MAX : max_bytes * DECODE_BATCH_FACTOR;
}

/*
 * decoder_out_of_memory
 *		The decode of m failed for want of memory.  1 with err filled
 *		(transient, step decode: the batch is retried with back-off) for
 *		the first DECODE_OOM_ATTEMPTS - 1 attempts at that message; then
 *		0, the reason saying so: the message is quarantined, a value that
 *		cannot be decoded in the memory there is is not retried for ever.
 */
static int
decoder_out_of_memory(decoder *d, const batch_msg *m, char *reason,
					  size_t reasonlen, db_error *err)
{
	char		msg[1400];
	size_t		len;

	if (d->oom_partition != m->partition || d->oom_offset != m->offset)
	{
		d->oom_partition = m->partition;
		d->oom_offset = m->offset;
		d->oom_attempts = 0;
	}
	if (++d->oom_attempts < DECODE_OOM_ATTEMPTS)
	{
		err->cls = DB_ERR_TRANSIENT;
		err->step = "decode";
		snprintf(msg, sizeof(msg),
				 "out of memory while decoding %s [%d] @%lld (attempt %d of %d, then it is quarantined): %s",
				 m->topic, (int) m->partition, (long long) m->offset,
				 d->oom_attempts, DECODE_OOM_ATTEMPTS, reason);
		utf8_fix(msg);
		db_copy_message(err, msg);
		return 1;
	}
	d->oom_attempts = 0;
	len = strlen(reason);
	snprintf(reason + len, reasonlen - len,
			 " (out of memory in %d attempts)", DECODE_OOM_ATTEMPTS);
	return 0;
}

/*
 * decoder_decode
 *		Decode the value of m, a message whose value is sent, into *out:
 *		its decoded JSON, schema id, decode error (confluent.c) and the
 *		GUID its __value_schema_id header named.
 *		0; 1, nothing counted, when its decoded JSON would take the batch's
 *		past its bound and it is not the batch's first message (first): the
 *		batch ends before it; or -1 with err filled when the registry failed
 *		(transient, or a configuration error) or the decode ran out of
 *		memory again: the batch is not sent.
 */
int
decoder_decode(decoder *d, const batch_msg *m, int first, decoded_value *out,
			   db_error *err)
{
	confluent_status st;

	out->json = NULL;
	out->json_len = 0;
	out->has_id = 0;
	out->id = 0;
	out->rejected = 0;
	out->reason[0] = '\0';
	out->guid = confluent_header_guid(m->schema_id, m->schema_id_len);
	avro_json_buf_reset(&d->json);
	avro_alloc_oom_clear();
	st = confluent_decode(d->registry, m->value, m->value_len, m->schema_id,
						  m->schema_id_len, &d->json, &out->id, &out->has_id,
						  out->reason, sizeof(out->reason));
	if (st == CONFLUENT_REJECTED && avro_alloc_oom() &&
		decoder_out_of_memory(d, m, out->reason, sizeof(out->reason), err))
		return -1;
	if (st == CONFLUENT_TRANSIENT || st == CONFLUENT_FATAL)
	{
		err->cls = st == CONFLUENT_TRANSIENT ? DB_ERR_TRANSIENT : DB_ERR_FATAL;
		err->step = "schema_registry";
		db_copy_message(err, out->reason);
		if (st == CONFLUENT_FATAL)
			snprintf(err->hint, sizeof(err->hint), "%s",
					 "check --schema-registry (the URL of a Schema Registry), its credentials (--schema-registry-credentials or $FEEDER_SCHEMA_REGISTRY_USER_INFO: USER:PASSWORD allowed to read schemas) and, for https, --schema-registry-ca, and --schema-registry-cert with --schema-registry-key when the registry asks for a client certificate");
		return -1;
	}
	if (st == CONFLUENT_DECODED && !first &&
		(d->json.len > d->limit || d->total > d->limit - d->json.len))
		return 1;
	if (st == CONFLUENT_DECODED)
	{
		out->json = d->json.data ? d->json.data : "";
		out->json_len = d->json.len;
		d->total += d->json.len;
	}
	out->rejected = st == CONFLUENT_REJECTED;
	return 0;
}

/*
 * decoder_free
 *		Release the decoder's buffer (not the registry, which is shared).
 */
void
decoder_free(decoder *d)
{
	avro_json_buf_free(&d->json);
}
