/*-------------------------------------------------------------------------
 *
 * confluent.c
 *	  Values framed by Confluent's Schema Registry serializers: the frame,
 *	  the schema from the registry, Avro decoded into JSON.
 *
 * A framed value is byte 0, the schema id (4 bytes, big-endian), then the
 * payload; newer serializers may instead name the schema by its GUID in a
 * header, __value_schema_id (byte 1, 16 bytes), and leave the value
 * unframed.  The id's schema tells the payload's format: Avro is decoded
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
 * confluent_header_guid
 *		The 16 bytes of the GUID a __value_schema_id header names (byte 1,
 *		then the GUID), which the database keeps with a quarantined value
 *		(value_schema_guid); NULL when the header is not one.
 */
const unsigned char *
confluent_header_guid(const void *header, size_t len)
{
	const unsigned char *h = header;

	if (header == NULL || len != CONFLUENT_GUID_HEADER_BYTES || h[0] != 1)
		return NULL;
	return h + 1;
}

/*
 * confluent_guid
 *		The GUID of a __value_schema_id header as the registry spells it;
 *		-1 when the header is not one.
 */
static int
confluent_guid(const unsigned char *h, size_t len, char *guid, size_t guidlen)
{
	if (confluent_header_guid(h, len) == NULL || guidlen < 37)
		return -1;
	snprintf(guid, guidlen,
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8], h[9], h[10],
			 h[11], h[12], h[13], h[14], h[15], h[16]);
	return 0;
}

/*
 * confluent_decode
 *		Read one value: framed (its schema id in the frame, *has_id set),
 *		or, when the message has a __value_schema_id header (id_header not
 *		NULL), unframed with its schema named by the header's GUID.  For an
 *		Avro value, and for a JSON Schema value named by a header (the
 *		database finds no frame to strip), its JSON is appended to out.  See
 *		confluent_status.  For CONFLUENT_WAIT, CONFLUENT_TRANSIENT and
 *		CONFLUENT_FATAL, reason is the registry's answer.
 */
confluent_status
confluent_decode(registry *r, const void *value, size_t len,
				 const void *id_header, size_t id_header_len,
				 avro_json_buf *out, int32_t *schema_id, int *has_id,
				 char *reason, size_t reasonlen)
{
	registry_schema *schema;
	registry_status st;
	confluent_status result;
	const char *payload = value;
	size_t		plen = len;
	char		name[64];
	char		guid[40];
	char		err[512];

	*has_id = 0;
	if (id_header != NULL)
	{
		if (confluent_guid(id_header, id_header_len, guid, sizeof(guid)) != 0)
		{
			snprintf(reason, reasonlen,
					 "header __value_schema_id (%zu bytes) is not a schema GUID (byte 1 and 16 bytes)",
					 id_header_len);
			return CONFLUENT_REJECTED;
		}
		snprintf(name, sizeof(name), "schema guid %s", guid);
		st = registry_lookup_guid(r, guid, &schema, err, sizeof(err));
	}
	else if (confluent_frame_id(value, len, schema_id) != 0)
	{
		if (len < CONFLUENT_FRAME_BYTES)
			snprintf(reason, reasonlen,
					 "value of %zu bytes is shorter than the Schema Registry frame (magic byte 0, 4-byte schema id): truncated, or not written by a Schema Registry serializer (--value-format confluent)",
					 len);
		else
			snprintf(reason, reasonlen,
					 "value is not framed by a Schema Registry serializer: its first byte is 0x%02x, not the magic byte 0 (--value-format confluent expects every value framed, or a __value_schema_id header)",
					 ((const unsigned char *) value)[0]);
		return CONFLUENT_REJECTED;
	}
	else
	{
		*has_id = 1;
		payload += CONFLUENT_FRAME_BYTES;
		plen -= CONFLUENT_FRAME_BYTES;
		snprintf(name, sizeof(name), "schema id %d", *schema_id);
		st = registry_lookup(r, *schema_id, &schema, err, sizeof(err));
	}

	switch (st)
	{
		case REGISTRY_OK:
			break;
		case REGISTRY_UNKNOWN_ID:
			snprintf(reason, reasonlen, "%s is unknown to the Schema Registry: %s", name, err);
			return CONFLUENT_REJECTED;
		case REGISTRY_WAIT:
			snprintf(reason, reasonlen, "%s is unknown to the Schema Registry yet: %s", name, err);
			return CONFLUENT_WAIT;
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
			if (id_header == NULL)
				result = CONFLUENT_AS_RECEIVED;
			else
			{
				avro_json_buf_append(out, payload, plen);
				result = out->failed ? CONFLUENT_TRANSIENT : CONFLUENT_DECODED;
				if (out->failed)
					snprintf(reason, reasonlen, "out of memory");
			}
			break;
		case REGISTRY_AVRO:
			if (schema->avro == NULL)
			{
				snprintf(reason, reasonlen, "%s: %s", name,
						 schema->compile_error ? schema->compile_error : "not usable");
				result = CONFLUENT_REJECTED;
			}
			else if (avro_json_decode(schema->avro, payload, plen, out,
									  err, sizeof(err)) != 0)
			{
				snprintf(reason, reasonlen, "%s (Avro): %s", name, err);
				result = CONFLUENT_REJECTED;
			}
			else
				result = CONFLUENT_DECODED;
			break;
		case REGISTRY_PROTOBUF:
			snprintf(reason, reasonlen,
					 "%s is a Protobuf schema: Protobuf values are not supported (Avro and JSON Schema are)",
					 name);
			result = CONFLUENT_REJECTED;
			break;
		default:
			snprintf(reason, reasonlen, "%s has schema type %s, which is not supported (Avro and JSON Schema are)",
					 name, schema->type_name);
			result = CONFLUENT_REJECTED;
	}
	registry_release(r, schema);
	return result;
}
