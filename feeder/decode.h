/*-------------------------------------------------------------------------
 *
 * decode.h
 *	  A batch's values decoded on its lane before the database sees it
 *	  (decode.c): the Schema Registry form's JSON, schema id, reason and
 *	  header GUID of each message, encoded into the four arrays db_batch.c sends,
 *	  within the batch's bound of decoded bytes.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DECODE_H
#define FEEDER_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "avro_json.h"
#include "batch.h"
#include "batch_memo.h"
#include "confluent.h"
#include "db_errors.h"
#include "pgarray.h"
#include "registry.h"

/* the arrays decoder_build fills: JSON, schema id, reason, header GUID */
#define DECODE_NARRAYS 4

/*
 * One lane's decoder: its registry, which values are sent, its buffer,
 * its bound, its retries, and the arrays of the batch last decoded.
 */
typedef struct decoder
{
	registry   *registry;		/* the Schema Registry's schemas (shared) */
	char	   *envelope;		/* batch_sends_value's: which values go */
	char	   *event_type;		/* NULL: every type */
	avro_json_buf json;			/* one value's JSON, reused */
	size_t		total;			/* the decoded JSON of the batch so far */
	size_t		limit;			/* the batch's bound of decoded JSON */
	/* the message whose decode ran out of memory, and how many times */
	char		oom_topic[256]; /* a Kafka topic's name has 249 bytes at most */
	int32_t		oom_partition;
	int64_t		oom_offset;
	int			oom_attempts;
	pgarray		arrays[DECODE_NARRAYS]; /* the batch's, as db_batch.c sends them */
	batch_memo	memo;			/* the batch the arrays hold */
	int			memo_ascii;		/* the text form its reasons were made in */
	/* the last batch's partitions whose message waits for its schema */
	slot_set	waits;
	char		wait_reason[1024];	/* why the first one waits */
	char		wait_at[300];	/* its coordinates: topic [partition] @offset */
	char	   *sent;			/* scratch: which messages are sent */
	batch_msg  *order;			/* scratch: the batch's new order */
	int			scratch_cap;
} decoder;

/* What the database receives of one message (valid until the next decode). */
typedef struct decoded_value
{
	const char *json;			/* its decoded JSON; NULL: none */
	size_t		json_len;
	int			has_id;			/* the frame's schema id, if it has one */
	int32_t		id;
	int			rejected;		/* not decodable: reason says why */
	char		reason[1024];
	const unsigned char *guid;	/* the __value_schema_id header's; NULL: none */
} decoded_value;

/* the length of decoded_value.guid */
#define DECODE_GUID_BYTES (CONFLUENT_GUID_HEADER_BYTES - 1)

extern int	decoder_init(decoder *d, registry *r, const char *envelope,
						 const char *event_type);
extern void decoder_begin_batch(decoder *d, size_t max_bytes);
extern int	decoder_decode(decoder *d, const batch_msg *m, int first,
						   decoded_value *out, db_error *err);
extern int	decoder_build(decoder *d, batch *b, int ascii, int *resent,
						  db_error *err);
extern void decoder_free(decoder *d);

#endif							/* FEEDER_DECODE_H */
