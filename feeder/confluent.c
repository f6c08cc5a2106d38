/*-------------------------------------------------------------------------
 *
 * confluent.c
 *	  Values framed by Confluent's Schema Registry serializers: the frame,
 *	  the schema from the registry, Avro decoded into JSON.
 *
 * A framed value is byte 0, the schema id (4 bytes, big-endian), then the
 * payload.  The id's schema tells the payload's format: Avro is decoded
 * into JSON here (avro_json.c); JSON Schema is the JSON itself, which the
 * database reads after the frame (the value travels once); Protobuf is not
 * supported.  A message that cannot be read (not framed, an id the registry
 * does not know, bytes that do not match their schema) is rejected with a
 * reason naming the id and what was wrong, and the database quarantines it
 * as received; a registry that fails is the batch's problem, not the
 * message's (transient, or fatal for 401/403).
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "confluent.h"

/*
 * confluent_frame_id
 *		The schema id of a framed value; -1 when value is not framed (too
 *		short, or not the magic byte 0).
 */
int
confluent_frame_id(const void *value, size_t len, int32_t *id)
{
	const unsigned char *p = value;

	if (len < CONFLUENT_FRAME_BYTES || p[0] != 0)
		return -1;
	*id = (int32_t) (((uint32_t) p[1] << 24) | ((uint32_t) p[2] << 16) |
					 ((uint32_t) p[3] << 8) | (uint32_t) p[4]);
	return 0;
}

/*
 * confluent_decode
 *		Read one framed value: its schema id (*has_id when framed), and
 *		for an Avro value its JSON appended to out.  See confluent_status.
 *		For CONFLUENT_TRANSIENT and CONFLUENT_FATAL, reason is the
 *		registry's error.
 */
confluent_status
confluent_decode(registry *r, const void *value, size_t len,
				 avro_json_buf *out, int32_t *schema_id, int *has_id,
				 char *reason, size_t reasonlen)
{
	registry_schema *schema;
	registry_status st;
	confluent_status result;
	char		err[512];

	*has_id = 0;
	if (confluent_frame_id(value, len, schema_id) != 0)
	{
		if (len < CONFLUENT_FRAME_BYTES)
			snprintf(reason, reasonlen,
					 "value of %zu bytes is shorter than the Schema Registry frame (magic byte 0, 4-byte schema id): truncated, or not written by a Schema Registry serializer (--value-format confluent)",
					 len);
		else
			snprintf(reason, reasonlen,
					 "value is not framed by a Schema Registry serializer: its first byte is 0x%02x, not the magic byte 0 (--value-format confluent expects every value framed)",
					 ((const unsigned char *) value)[0]);
		return CONFLUENT_REJECTED;
	}
	*has_id = 1;

	st = registry_lookup(r, *schema_id, &schema, err, sizeof(err));
	switch (st)
	{
		case REGISTRY_OK:
			break;
		case REGISTRY_UNKNOWN_ID:
			snprintf(reason, reasonlen, "schema id %d is unknown to the Schema Registry: %s",
					 *schema_id, err);
			return CONFLUENT_REJECTED;
		case REGISTRY_TRANSIENT:
			snprintf(reason, reasonlen, "%s", err);
			return CONFLUENT_TRANSIENT;
		case REGISTRY_FATAL:
			snprintf(reason, reasonlen, "%s", err);
			return CONFLUENT_FATAL;
	}

	switch (schema->type)
	{
		case REGISTRY_JSON:
			result = CONFLUENT_AS_RECEIVED;
			break;
		case REGISTRY_AVRO:
			if (schema->avro == NULL)
			{
				snprintf(reason, reasonlen, "schema id %d: %s", *schema_id,
						 schema->compile_error ? schema->compile_error : "not usable");
				result = CONFLUENT_REJECTED;
			}
			else if (avro_json_decode(schema->avro,
									  (const char *) value + CONFLUENT_FRAME_BYTES,
									  len - CONFLUENT_FRAME_BYTES, out,
									  err, sizeof(err)) != 0)
			{
				snprintf(reason, reasonlen, "schema id %d (Avro): %s", *schema_id, err);
				result = CONFLUENT_REJECTED;
			}
			else
				result = CONFLUENT_DECODED;
			break;
		case REGISTRY_PROTOBUF:
			snprintf(reason, reasonlen,
					 "schema id %d is a Protobuf schema: Protobuf values are not supported (Avro and JSON Schema are)",
					 *schema_id);
			result = CONFLUENT_REJECTED;
			break;
		default:
			snprintf(reason, reasonlen, "schema id %d has schema type %s, which is not supported (Avro and JSON Schema are)",
					 *schema_id, schema->type_name);
			result = CONFLUENT_REJECTED;
	}
	registry_release(r, schema);
	return result;
}
