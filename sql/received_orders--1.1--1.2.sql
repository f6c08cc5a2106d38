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
-- adopt_consumer_position: Kafka's committed offsets adopted explicitly.
--
-- Since 1.2 the feeder starts a partition the database has no position of
-- at its earliest offset, always: Kafka's committed offset never starts a
-- partition (a database restored from before a topic's or a partition's
-- first batch has no position of it, and the committed offset acknowledges
-- what the restore lost).  Starting from Kafka's committed offsets instead
-- (the first start after the upgrade from 1.0, which kept none) takes an
-- explicit step: received-orders-feeder --adopt-kafka-offsets, run once
-- with the group's feeders stopped, writes each committed offset through
-- this function.  It only inserts a position that is absent and never
-- overwrites one: the database's positions stay the authority.
-- EXECUTE stays with the owner unless a DBA grants it (for the upgrade, to
-- the role the command logs in as); the feeder's role does not need it.
CREATE FUNCTION received_orders.adopt_consumer_position(
	consumer_group text,
	kafka_topic text,
	kafka_partition integer,
	next_offset bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF consumer_group IS NULL OR kafka_topic IS NULL OR kafka_partition IS NULL
	   OR next_offset IS NULL THEN
		RAISE EXCEPTION 'consumer_group, kafka_topic, kafka_partition and next_offset must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF consumer_group OPERATOR(pg_catalog.=) '' OR kafka_topic OPERATOR(pg_catalog.=) ''
	   OR kafka_partition OPERATOR(pg_catalog.<) 0 OR next_offset OPERATOR(pg_catalog.<) 0 THEN
		RAISE EXCEPTION 'invalid position %/% [%] @%', consumer_group, kafka_topic,
			kafka_partition, next_offset
			USING ERRCODE = 'invalid_parameter_value',
			      HINT = 'The group and topic must not be empty; partition and offset must not be negative.';
	END IF;

	INSERT INTO received_orders.received_orders_positions AS p
		(consumer_group, kafka_topic, kafka_partition, next_offset)
	VALUES (adopt_consumer_position.consumer_group, adopt_consumer_position.kafka_topic,
	        adopt_consumer_position.kafka_partition, adopt_consumer_position.next_offset)
	ON CONFLICT ON CONSTRAINT received_orders_positions_pkey DO NOTHING;
	RETURN FOUND;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.adopt_consumer_position(text, text, integer, bigint) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.adopt_consumer_position(text, text, integer, bigint) IS
	'Record a consumer group''s position on one partition only if it has none (Kafka''s committed offset, adopted once after the upgrade from 1.0); returns whether it was recorded';
