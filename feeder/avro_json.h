/*-------------------------------------------------------------------------
 *
 * avro_json.h
 *	  Avro binary to JSON text, by the documented mapping (docs/feeder.md,
 *	  "Schema Registry topics"), read by our own reader of the binary
 *	  encoding, bounded in depth, size and work.
 *
 * A compiled schema is immutable once made: several lanes' threads may
 * decode with it at once.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_AVRO_JSON_H
#define FEEDER_AVRO_JSON_H

#include <stddef.h>

/*
 * The bounds of one decoded value, documented in docs/feeder.md: a value
 * past one of them is refused (its message quarantined with the reason),
 * never half decoded.
 */
#define AVRO_JSON_MAX_BYTES (16 * 1024 * 1024)	/* the decoded JSON */
#define AVRO_JSON_MAX_DEPTH 256 /* nested records, arrays, maps, unions */
#define AVRO_JSON_MAX_DECIMAL_BYTES 1024	/* a decimal's significant
											 * bytes: 2,466 digits at most */

/* A growable text buffer: the decoded JSON. */
typedef struct avro_json_buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	int			failed;			/* out of memory: the text is incomplete */
	size_t		limit;			/* while decoding: len may not pass it */
	int			too_large;		/* it would have: the text is incomplete */
} avro_json_buf;

typedef struct avro_json_schema avro_json_schema;

extern void avro_json_init(void);
extern avro_json_schema *avro_json_compile(const char *text, size_t len,
										   char *err, size_t errlen);
extern void avro_json_free(avro_json_schema *schema);
extern int	avro_json_decode(const avro_json_schema *schema, const void *data,
							 size_t len, avro_json_buf *out,
							 char *err, size_t errlen);
extern void avro_json_buf_reset(avro_json_buf *buf);
extern void avro_json_buf_append(avro_json_buf *buf, const void *data, size_t len);
extern void avro_json_buf_free(avro_json_buf *buf);

#endif							/* FEEDER_AVRO_JSON_H */
