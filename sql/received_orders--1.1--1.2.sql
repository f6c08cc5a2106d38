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
