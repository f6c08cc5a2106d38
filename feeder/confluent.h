/*-------------------------------------------------------------------------
 *
 * confluent.h
 *	  Values framed by Confluent's Schema Registry serializers: the frame,
 *	  the schema from the registry, Avro decoded into JSON.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_CONFLUENT_H
#define FEEDER_CONFLUENT_H

#include <stddef.h>
#include <stdint.h>

#include "avro_json.h"
#include "registry.h"

/* Bytes in front of the payload: magic byte 0, 4-byte big-endian id. */
#define CONFLUENT_FRAME_BYTES 5
/* A __value_schema_id header: byte 1, then a 16-byte GUID. */
#define CONFLUENT_GUID_HEADER_BYTES 17

typedef enum confluent_status
{
	CONFLUENT_DECODED,			/* its JSON is in out (an Avro value, or a
								 * JSON Schema value named by a header) */
	CONFLUENT_AS_RECEIVED,		/* a JSON Schema value: the JSON after the
								 * frame, which the database takes itself */
	CONFLUENT_REJECTED,			/* that message is bad: reason says why */
	CONFLUENT_WAIT,				/* its schema id is unknown yet, within its
								 * grace: that message waits, reason says
								 * why */
	CONFLUENT_TRANSIENT,		/* the registry failed: retry the batch */
	CONFLUENT_FATAL				/* the registry refused us: exit 3 */
} confluent_status;

extern int	confluent_frame_id(const void *value, size_t len, int32_t *id);
extern const unsigned char *confluent_header_guid(const void *header,
												  size_t len);
extern confluent_status confluent_decode(registry *r, const void *value,
										 size_t len, const void *id_header,
										 size_t id_header_len,
										 avro_json_buf *out,
										 int32_t *schema_id, int *has_id,
										 char *reason, size_t reasonlen);

#endif							/* FEEDER_CONFLUENT_H */
