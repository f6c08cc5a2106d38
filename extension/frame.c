/*-------------------------------------------------------------------------
 *
 * frame.c
 *	  The event inside a value framed by a Schema Registry serializer.
 *
 * Confluent's serializers write byte 0, the schema id as 4 big-endian bytes,
 * then the payload: JSON text for a JSON Schema value, Avro binary for an
 * Avro value.  The feeder (docs/adr/0005-schema-registry-values.md) decodes
 * Avro into JSON with the registry's schema, since a backend never talks to
 * the network; it hands the decoded JSON beside the bytes as received, or
 * the reason it could not decode them.  RoFrameOpen finds the event's bytes
 * from those and hands them to the one validator (event.c), like envelope.c.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/elog.h"

#include "received_orders.h"

/* Magic byte and schema id in front of the payload. */
#define FRAME_HEADER_BYTES 5

/*
 * RoFrameOpen
 *		The event of a value (data, len, as received): decoded when the
 *		feeder decoded it (an Avro value, or a value whose schema a header
 *		named), else the JSON after the frame.  decode_error, when not
 *		NULL, is why the feeder could not decode the value: it is refused
 *		with that reason.  *schema_id is the feeder's id (given_id), or the
 *		frame's when the feeder gave neither an id nor a decoded value (a
 *		caller from SQL); *has_schema_id false when there is none.  False
 *		with err filled when the value is refused.
 */
bool
RoFrameOpen(const char *data, int len, const char *decoded, int decoded_len,
			const char *decode_error, const int32 *given_id,
			int32 *schema_id, bool *has_schema_id,
			const char **event, int *event_len, RoEventError *err)
{
	bool		framed = len >= FRAME_HEADER_BYTES && data[0] == 0;

	*has_schema_id = given_id != NULL;
	if (given_id != NULL)
		*schema_id = *given_id;

	err->detail = NULL;
	if (decode_error != NULL)
	{
		err->sqlerrcode = ERRCODE_INVALID_BINARY_REPRESENTATION;
		err->message = pstrdup(decode_error);
		return false;
	}
	if (decoded != NULL)
	{
		*event = decoded;
		*event_len = decoded_len;
		return true;
	}
	if (!framed)
	{
		err->sqlerrcode = ERRCODE_INVALID_BINARY_REPRESENTATION;
		err->message = psprintf("value is not framed by a Schema Registry serializer: %s",
								len < FRAME_HEADER_BYTES ?
								"shorter than the 5-byte frame (magic byte 0, 4-byte schema id)" :
								"its first byte is not the magic byte 0");
		return false;
	}
	if (!*has_schema_id)
	{
		const unsigned char *id = (const unsigned char *) data + 1;

		*schema_id = (int32) (((uint32) id[0] << 24) | ((uint32) id[1] << 16) |
							  ((uint32) id[2] << 8) | (uint32) id[3]);
		*has_schema_id = true;
	}
	*event = data + FRAME_HEADER_BYTES;
	*event_len = len - FRAME_HEADER_BYTES;
	return true;
}
