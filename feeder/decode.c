/*-------------------------------------------------------------------------
 *
 * decode.c
 *	  A batch's values decoded on its lane, before the database sees the
 *	  batch, in the Schema Registry form (--value-format confluent): each
 *	  value sent is decoded (confluent.c) into its JSON, or the reason it
 *	  cannot be, with the frame's schema id and the GUID its
 *	  __value_schema_id header named, straight into the four binary arrays
 *	  that db_batch.c sends with the batch (so the decoded JSON is held once).
 *
 *	  Five decisions are the decode's: a registry that fails stops the
 *	  batch (retried, or the feeder stops, with the flags to check); a
 *	  schema id the registry does not know yet, within its grace
 *	  (registry_unknown.c), stops its message's partition only: that
 *	  message and the partition's later ones are set aside at the end of
 *	  the batch, unsent, and the others go (decoder_build; the loop holds
 *	  the partition back a while); a decode that runs out of memory
 *	  retries the batch a few times before the message is quarantined;
 *	  the decoded JSON of one batch is bounded, the message that would
 *	  pass the bound starting the next; and a batch retried unchanged is
 *	  sent as decoded (batch_memo.c), unless the session now takes its
 *	  reasons in another text form.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
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
 * batch (decoder_build); the first message of a batch always goes.
 */
#define DECODE_BATCH_FACTOR 4

/*
 * decoder_init
 *		A decoder of the values framed for the schemas of r (shared by the
 *		lanes), which decodes only the values sent to the database: those
 *		batch_sends_value lets through for envelope and event_type (NULL:
 *		every type; envelope is read only then).  0; -1 on out of memory.
 */
int
decoder_init(decoder *d, registry *r, const char *envelope,
			 const char *event_type)
{
	int			i;

	memset(d, 0, sizeof(*d));
	d->registry = r;
	for (i = 0; i < DECODE_NARRAYS; i++)
		pgarray_init(&d->arrays[i]);
	d->envelope = strdup(envelope ? envelope : "plain");
	d->event_type = event_type ? strdup(event_type) : NULL;
	if (d->envelope == NULL || (event_type && d->event_type == NULL))
		return -1;
	return 0;
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
 *		A message is known by its topic, partition and offset: another
 *		topic's message at the same partition and offset counts anew.
 */
static int
decoder_out_of_memory(decoder *d, const batch_msg *m, char *reason,
					  size_t reasonlen, db_error *err)
{
	char		msg[1400];
	size_t		len;

	if (d->oom_partition != m->partition || d->oom_offset != m->offset ||
		strcmp(d->oom_topic, m->topic) != 0)
	{
		snprintf(d->oom_topic, sizeof(d->oom_topic), "%s", m->topic);
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
 *		batch ends before it; 2, nothing counted, when its schema id is
 *		unknown yet, within its grace (out->reason says so): it waits; or
 *		-1 with err filled when the registry failed
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
	if (st == CONFLUENT_WAIT)
		return 2;
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
 * decoder_server_text
 *		Make a reason (a schema's names, a registry's message, cut to fit)
 *		acceptable to the server as a text parameter: valid UTF-8 always
 *		(22021 otherwise, and the same batch refused at every retry), and
 *		ASCII when the session asks for it (ascii: db_texts_ascii).
 */
static void
decoder_server_text(char *text, int ascii)
{
	utf8_fix(text);
	if (ascii)
		utf8_to_ascii(text);
}

/*
 * decoder_add
 *		The four elements of message m, whose value is sent: its decoded
 *		JSON, schema id, reason (in the text form ascii says) and header
 *		GUID.  As decoder_decode: 0; 1, nothing added, when the batch ends
 *		before m; 2, nothing added, when m waits (its reason, the first of
 *		the batch, kept in d->wait_reason); -1 with err filled.
 */
static int
decoder_add(decoder *d, const batch_msg *m, int first, int ascii, db_error *err)
{
	pgarray    *a = d->arrays;
	decoded_value v;
	int			rc = decoder_decode(d, m, first, &v, err);

	if (rc == 2 && d->waits.n == 0)
	{
		snprintf(d->wait_reason, sizeof(d->wait_reason), "%s", v.reason);
		snprintf(d->wait_at, sizeof(d->wait_at), "%.200s [%d] @%lld",
				 m->topic, (int) m->partition, (long long) m->offset);
		utf8_fix(d->wait_reason);
		utf8_fix(d->wait_at);
	}
	if (rc != 0)
		return rc;
	if (v.json != NULL)
		pgarray_add_bytes(&a[0], v.json, v.json_len);
	else
		pgarray_add_null(&a[0]);
	if (v.has_id)
		pgarray_add_int4(&a[1], v.id);
	else
		pgarray_add_null(&a[1]);
	if (v.rejected)
	{
		decoder_server_text(v.reason, ascii);
		pgarray_add_bytes(&a[2], v.reason, strlen(v.reason));
	}
	else
		pgarray_add_null(&a[2]);
	if (v.guid != NULL)
		pgarray_add_bytes(&a[3], v.guid, DECODE_GUID_BYTES);
	else
		pgarray_add_null(&a[3]);
	return 0;
}

/*
 * decoder_no_memory
 *		The batch's arrays or scratch could not grow: err says so, at step,
 *		as a transient error (the batch is retried, nothing sent); -1.
 */
static int
decoder_no_memory(db_error *err, const char *step, const char *message)
{
	err->cls = DB_ERR_TRANSIENT;
	err->step = step;
	db_copy_message(err, message);
	return -1;
}

/*
 * decoder_build
 *		Decode the batch's values into d->arrays (DECODE_NARRAYS binary
 *		arrays: decoded JSON, schema id, reason, header GUID), one element
 *		per message, a tombstone or a value not sent (another event type)
 *		as NULLs; reasons as the session takes texts (ascii: ASCII only,
 *		else valid UTF-8).  The number of the batch's first messages the
 *		arrays hold: all of them unless their decoded JSON would pass the
 *		batch's bound, the others then being the next batch's.
 *		A message whose schema id is unknown yet, within its grace, waits,
 *		and so do its partition's later messages of the batch (d->waits
 *		lists those partitions, d->wait_reason says why): the messages
 *		sent are then put first in the batch, the others after them, each
 *		part in its order (so a partition's order holds), and only those
 *		sent are counted.
 *		A batch retried unchanged, in the same text form, is not decoded
 *		again: the arrays are as they were and *resent is 1.
 *		-1 with err filled when the registry failed, a decode ran out of
 *		memory (decoder_decode), or the arrays could not grow: nothing of
 *		the batch may be sent (and its order is unchanged).
 */
int
decoder_build(decoder *d, batch *b, int ascii, int *resent, db_error *err)
{
	pgarray    *a = d->arrays;
	int			i,
				k,
				n = 0;

	*resent = 0;
	d->waits.n = 0;
	d->wait_reason[0] = '\0';
	d->wait_at[0] = '\0';
	if (d->memo_ascii == ascii && batch_memo_same(&d->memo, b))
	{
		*resent = 1;
		return b->count;
	}
	batch_memo_forget(&d->memo);
	if (b->count > d->scratch_cap)
	{
		char	   *sent = realloc(d->sent, (size_t) b->count);
		batch_msg  *order;

		if (sent != NULL)
			d->sent = sent;
		order = sent ? realloc(d->order, sizeof(batch_msg) * (size_t) b->count) : NULL;
		if (order == NULL)
		{
			return decoder_no_memory(err, "decode", "out of memory while decoding the batch");
		}
		d->order = order;
		d->scratch_cap = b->count;
	}
	memset(d->sent, 0, (size_t) b->count);
	decoder_begin_batch(d, b->max_bytes);
	pgarray_begin(&a[0], PGARRAY_BYTEAOID);
	pgarray_begin(&a[1], PGARRAY_INT4OID);
	pgarray_begin(&a[2], PGARRAY_TEXTOID);
	pgarray_begin(&a[3], PGARRAY_UUIDOID);
	for (i = 0; i < b->count; i++)
	{
		const batch_msg *m = &b->msgs[i];
		int			rc = 0;

		if (d->waits.n > 0 && slot_set_has(&d->waits, m->slot))
			continue;			/* after a message of its partition that waits */
		if (m->value == NULL || !batch_sends_value(d->envelope, d->event_type, m))
		{
			pgarray_add_null(&a[0]);
			pgarray_add_null(&a[1]);
			pgarray_add_null(&a[2]);
			pgarray_add_null(&a[3]);
		}
		else if ((rc = decoder_add(d, m, n == 0, ascii, err)) < 0)
			return -1;
		if (rc == 2)
		{
			if (slot_set_add(&d->waits, m->slot) != 0)
			{
				return decoder_no_memory(err, "decode", "out of memory while decoding the batch");
			}
			continue;
		}
		if (rc == 1)
			break;				/* decoded too much: the next batch's */
		d->sent[i] = 1;
		n++;
	}
	for (i = 0; i < DECODE_NARRAYS; i++)
		if (pgarray_finish(&a[i]) != 0)
		{
			return decoder_no_memory(err, "encode", "out of memory while encoding the batch");
		}
	if (d->waits.n > 0)
	{
		/* the messages sent first, then the others, each in order */
		k = 0;
		for (i = 0; i < b->count; i++)
			if (d->sent[i])
				d->order[k++] = b->msgs[i];
		for (i = 0; i < b->count; i++)
			if (!d->sent[i])
				d->order[k++] = b->msgs[i];
		memcpy(b->msgs, d->order, sizeof(batch_msg) * (size_t) b->count);
	}
	if (n == b->count)
	{
		batch_memo_remember(&d->memo, b);
		d->memo_ascii = ascii;
	}
	return n;
}

/*
 * decoder_free
 *		Release the decoder's buffers (not the registry, which is shared).
 */
void
decoder_free(decoder *d)
{
	int			i;

	avro_json_buf_free(&d->json);
	for (i = 0; i < DECODE_NARRAYS; i++)
		pgarray_free(&d->arrays[i]);
	batch_memo_free(&d->memo);
	slot_set_free(&d->waits);
	free(d->sent);
	free(d->order);
	d->sent = NULL;
	d->order = NULL;
	d->scratch_cap = 0;
	free(d->envelope);
	free(d->event_type);
	d->envelope = d->event_type = NULL;
}
