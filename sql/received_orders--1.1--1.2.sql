-- received_orders--1.1--1.2.sql — update from 1.1 to 1.2.
--
-- Every schema change of 1.2 is in this one script; 1.0's and 1.1's scripts
-- stay frozen.  Each section below says what it adds and why.

\echo Use "ALTER EXTENSION received_orders UPDATE TO '1.2'" to load this file. \quit

-- Quarantined headers are bounded like every other stored field: 1.1 stored
-- a header's whole value, so a 15-byte message with an 8 MB content-type
-- stored 8 MB of header text.  The batch function now keeps each header
-- value's first 4096 bytes (whole characters) and records the length as
-- received in a member "NAME:bytes"; only the column's description changes.
COMMENT ON COLUMN received_orders.received_orders_quarantine.kafka_headers IS
	'The headers that identified the message (its type header, content-type) as text, or as \x... hex when not valid UTF-8; a value longer than 4096 bytes keeps its first 4096 bytes and a member "NAME:bytes" gives its length as received; NULL if none';

-- ---------------------------------------------------------------------------
-- 1.0's copies of one message in the quarantine (legacy_copy)
--
-- The update from 1.0 failed on a quarantine holding copies of one message at
-- the same incomplete coordinates (1.0 stored one per call when a topic,
-- partition or offset was NULL): 1.1's key refused them.  That update now
-- numbers the later copies in a column legacy_copy, part of the key
-- received_orders_quarantine_message_key (see received_orders--1.0--1.1.sql).
-- A database that reached 1.1 before that change (it had no such copies) has
-- neither: it gets them here, at the end of the table as the update from 1.0
-- adds them, so that every 1.2 has one schema.  Its rows get NULL, as every
-- row but a copy.  The key's index is rebuilt (the quarantine is locked for
-- that long).  Nothing to do where the column exists.
DO $legacy_copy$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_catalog.pg_attribute a
	                WHERE a.attrelid OPERATOR(pg_catalog.=) 'received_orders.received_orders_quarantine'::pg_catalog.regclass
	                  AND a.attname OPERATOR(pg_catalog.=) 'legacy_copy'
	                  AND NOT a.attisdropped) THEN
		ALTER TABLE received_orders.received_orders_quarantine
			ADD COLUMN legacy_copy integer,
			ADD CONSTRAINT received_orders_quarantine_legacy_copy_check
				CHECK (legacy_copy OPERATOR(pg_catalog.>) 0),
			DROP CONSTRAINT received_orders_quarantine_message_key,
			ADD CONSTRAINT received_orders_quarantine_message_key
				UNIQUE NULLS NOT DISTINCT (kafka_topic, kafka_partition, kafka_offset, message_digest, legacy_copy);
		COMMENT ON COLUMN received_orders.received_orders_quarantine.legacy_copy IS
			'NULL, except on the later copies of a message 1.0 quarantined more than once at the same incomplete coordinates (no topic, partition or offset): 1, 2, ... in the order of their ids, numbered by the update to 1.1 so that every copy is kept';
	END IF;
END
$legacy_copy$;
-- end of section: legacy_copy ----------------------------------------------

-- ---------------------------------------------------------------------------
-- Schema Registry values (issue 26; docs/adr/0004-schema-registry-values.md)
--
-- Values framed by Confluent's serializers (byte 0, a 4-byte big-endian
-- schema id, then Avro binary or JSON text) are decoded by the feeder, which
-- alone talks to the registry: a backend never makes a network call.  The
-- Schema Registry form of the batch function takes, besides the outbox
-- form's arguments, per element: the JSON the feeder decoded an Avro value
-- into (NULL for a JSON Schema value, whose JSON is the value after its
-- 5-byte frame, stripped here), the schema id of its frame, and the reason
-- the feeder could not decode it (unknown id, truncated frame, bytes that
-- do not match the schema...), which rejects it.  kafka_values stay the
-- bytes as received, so the quarantine keeps them, with their schema id in
-- the new column value_schema_id, in the batch's own transaction.
-- Grant for a feeder run with --value-format confluent:
--   GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(text, bytea[],
--     text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[],
--     bytea[], integer[], text[]) TO feeder;
ALTER TABLE received_orders.received_orders_quarantine
	ADD COLUMN value_schema_id integer;

COMMENT ON COLUMN received_orders.received_orders_quarantine.value_schema_id IS
	'The Schema Registry id in the frame of a value that came through the Schema Registry form of materialize_orders (raw_value keeps the framed bytes as received); NULL otherwise';

CREATE FUNCTION received_orders.materialize_orders(
	consumer_group text,
	kafka_values bytea[],
	kafka_topics text[],
	kafka_partitions integer[],
	kafka_offsets bigint[],
	kafka_keys bytea[],
	envelope text,
	event_type text,
	type_header text,
	message_types bytea[],
	content_types bytea[],
	decoded_values bytea[],
	value_schema_ids integer[],
	decode_errors text[])
RETURNS TABLE (
	"position" integer,
	order_id uuid,
	outcome received_orders.materialize_outcome,
	sqlstate text,
	message text)
AS 'MODULE_PATHNAME', 'materialize_orders_framed'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
ROWS 1000;

REVOKE EXECUTE ON FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[], bytea[], integer[], text[]) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[], bytea[], integer[], text[]) IS
	'Materialize a batch of Schema Registry framed messages as the outbox form does: each element''s event is its decoded_values element (an Avro value the feeder decoded), or its value after the 5-byte frame (a JSON Schema value); one with a decode_errors element is rejected with that reason; the quarantine keeps the framed bytes and their value_schema_id';
-- end of section: Schema Registry values -----------------------------------
