-- received_orders--1.0--1.1.sql — update from 1.0 to 1.1: PostgreSQL keeps
-- the consumed positions.
--
-- The next offset of each (consumer group, topic, partition) is written by the
-- batch function in the batch's own transaction, so the database is the
-- authority on positions as it is on uniqueness: after a restore, a
-- point-in-time recovery or a failover to an asynchronous standby, the feeder
-- re-reads from Kafka what the database lost instead of losing it.
--
-- New objects: the outcome label 'skipped', the table
-- received_orders_positions, the batch function's overload with a consumer
-- group, consumer_positions() to read a group's positions, restart_position()
-- for a feeder that accepted a lost partition, and set_consumer_position() /
-- forget_consumer_positions() for operators; the outbox form of the batch
-- function (envelopes, event types) and the quarantine columns it fills.
-- The 1.0 functions keep their signatures, behaviour and grants.
--
-- After the update, the feeder's role needs EXECUTE on the three new functions
-- it calls (the 1.0 grant on the old batch function does not carry over):
--   GRANT EXECUTE ON FUNCTION
--     received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]),
--     received_orders.consumer_positions(text),
--     received_orders.restart_position(text, text, integer, bigint, bigint)
--   TO feeder;
-- and, for outbox topics (--envelope debezium|cloudevents, --event-type):
--   GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(text, bytea[],
--     text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[])
--   TO feeder;

\echo Use "ALTER EXTENSION received_orders UPDATE TO '1.1'" to load this file. \quit

-- The schema holds SECURITY DEFINER functions owned by a superuser: it must
-- not be owned, or writable, by anyone else.  CREATE EXTENSION adopts a
-- schema of that name that already exists, whoever made it; a database owner
-- who pre-created it would own the schema of superuser code (and could
-- replace the tables the functions write).  1.0's script cannot be changed,
-- so this check runs here, in the same transaction: CREATE EXTENSION (which
-- runs 1.0, then this update) and ALTER EXTENSION ... UPDATE both refuse.
DO $check$
DECLARE
	owner_name name;
	owner_super boolean;
	writers text;
BEGIN
	SELECT r.rolname, r.rolsuper INTO owner_name, owner_super
	  FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
	 WHERE n.nspname OPERATOR(pg_catalog.=) 'received_orders';
	IF NOT owner_super THEN
		RAISE EXCEPTION 'schema received_orders is owned by role "%", which is not a superuser', owner_name
			USING ERRCODE = 'insufficient_privilege',
			      DETAIL = 'The extension''s SECURITY DEFINER functions run as a superuser; whoever owns their schema could replace what they read and write.',
			      HINT = 'Let CREATE EXTENSION create the schema: drop the existing one (after checking what it holds), or make a superuser its owner (ALTER SCHEMA received_orders OWNER TO postgres) and revoke CREATE from other roles.';
	END IF;
	SELECT pg_catalog.string_agg(CASE WHEN a.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
	                                  ELSE pg_catalog.quote_ident(r.rolname) END, ', ')
	  INTO writers
	  FROM pg_catalog.pg_namespace n,
	       LATERAL pg_catalog.aclexplode(n.nspacl) a
	       LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.grantee
	 WHERE n.nspname OPERATOR(pg_catalog.=) 'received_orders'
	   AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
	   AND (a.grantee OPERATOR(pg_catalog.=) 0 OR NOT r.rolsuper);
	IF writers IS NOT NULL THEN
		RAISE EXCEPTION 'roles that are not superusers may create objects in schema received_orders: %', writers
			USING ERRCODE = 'insufficient_privilege',
			      DETAIL = 'An object they create there could be found by the extension''s SECURITY DEFINER functions.',
			      HINT = 'REVOKE CREATE ON SCHEMA received_orders FROM those roles, then retry.';
	END IF;
END
$check$;

-- A message the caller acknowledges without materializing it (a tombstone):
-- only its position is recorded.
ALTER TYPE received_orders.materialize_outcome ADD VALUE 'skipped';

CREATE TABLE received_orders.received_orders_positions (
	consumer_group text NOT NULL,
	kafka_topic text NOT NULL,
	kafka_partition integer NOT NULL,
	next_offset bigint NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	CONSTRAINT received_orders_positions_pkey
		PRIMARY KEY (consumer_group, kafka_topic, kafka_partition),
	CONSTRAINT received_orders_positions_group_check
		CHECK (consumer_group OPERATOR(pg_catalog.<>) ''),
	CONSTRAINT received_orders_positions_topic_check
		CHECK (kafka_topic OPERATOR(pg_catalog.<>) ''),
	CONSTRAINT received_orders_positions_partition_check
		CHECK (kafka_partition OPERATOR(pg_catalog.>=) 0),
	CONSTRAINT received_orders_positions_offset_check
		CHECK (next_offset OPERATOR(pg_catalog.>=) 0)
);

COMMENT ON TABLE received_orders.received_orders_positions IS
	'Next Kafka offset to read per consumer group, topic and partition, written in the transaction of the batch that consumed up to it';

SELECT pg_catalog.pg_extension_config_dump('received_orders.received_orders_positions', '');

REVOKE ALL ON received_orders.received_orders_positions FROM PUBLIC;

CREATE FUNCTION received_orders.materialize_orders(
	consumer_group text,
	kafka_values bytea[],
	kafka_topics text[],
	kafka_partitions integer[],
	kafka_offsets bigint[],
	kafka_keys bytea[] DEFAULT NULL)
RETURNS TABLE (
	"position" integer,
	order_id uuid,
	outcome received_orders.materialize_outcome,
	sqlstate text,
	message text)
AS 'MODULE_PATHNAME', 'materialize_orders_for_group'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
ROWS 1000;

REVOKE EXECUTE ON FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]) IS
	'Materialize a batch of Kafka messages of a consumer group and record, in the same transaction, the next offset of each partition (never backwards); a NULL value is skipped';

CREATE FUNCTION received_orders.consumer_positions(consumer_group text)
RETURNS TABLE (
	kafka_topic text,
	kafka_partition integer,
	next_offset bigint,
	updated_at timestamptz)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
BEGIN ATOMIC
	SELECT p.kafka_topic, p.kafka_partition, p.next_offset, p.updated_at
	  FROM received_orders.received_orders_positions p
	 WHERE p.consumer_group OPERATOR(pg_catalog.=) consumer_positions.consumer_group
	 ORDER BY p.kafka_topic, p.kafka_partition;
END;

REVOKE EXECUTE ON FUNCTION received_orders.consumer_positions(text) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.consumer_positions(text) IS
	'The next offset to read of every partition a consumer group has materialized, as the database knows it';

-- A feeder that accepted the loss of a partition whose position lies beyond
-- its end (the topic was re-created: --accept-position-loss) restarts it at
-- the earliest offset; batches never move a position backwards, so it moves
-- the position back itself, only from the value it saw (compare and set):
-- otherwise, once the new topic grew past the old position, a later start
-- would skip everything in between.
CREATE FUNCTION received_orders.restart_position(
	consumer_group text,
	kafka_topic text,
	kafka_partition integer,
	from_offset bigint,
	to_offset bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF consumer_group IS NULL OR kafka_topic IS NULL OR kafka_partition IS NULL
	   OR from_offset IS NULL OR to_offset IS NULL THEN
		RAISE EXCEPTION 'consumer_group, kafka_topic, kafka_partition, from_offset and to_offset must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF to_offset OPERATOR(pg_catalog.<) 0 OR to_offset OPERATOR(pg_catalog.>=) from_offset THEN
		RAISE EXCEPTION 'a position can only be restarted backwards, not from % to %',
			from_offset, to_offset
			USING ERRCODE = 'invalid_parameter_value',
			      HINT = 'Batches move positions forwards; set_consumer_position moves them anywhere.';
	END IF;

	UPDATE received_orders.received_orders_positions p
	   SET next_offset = restart_position.to_offset, updated_at = pg_catalog.now()
	 WHERE p.consumer_group OPERATOR(pg_catalog.=) restart_position.consumer_group
	   AND p.kafka_topic OPERATOR(pg_catalog.=) restart_position.kafka_topic
	   AND p.kafka_partition OPERATOR(pg_catalog.=) restart_position.kafka_partition
	   AND p.next_offset OPERATOR(pg_catalog.=) restart_position.from_offset;
	RETURN FOUND;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.restart_position(text, text, integer, bigint, bigint) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.restart_position(text, text, integer, bigint, bigint) IS
	'Move a consumer group''s position back from from_offset (only if it still is) to to_offset: a feeder accepting the loss of a re-created topic';

-- Operators' tools: EXECUTE stays with the owner (a superuser) unless a DBA
-- grants it; the feeder's role never needs them.  Moving a position while a
-- member of the group runs is undone by its next batch: stop the group first.
CREATE FUNCTION received_orders.set_consumer_position(
	consumer_group text,
	kafka_topic text,
	kafka_partition integer,
	next_offset bigint)
RETURNS bigint
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	previous bigint;
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

	SELECT p.next_offset INTO previous
	  FROM received_orders.received_orders_positions p
	 WHERE p.consumer_group OPERATOR(pg_catalog.=) set_consumer_position.consumer_group
	   AND p.kafka_topic OPERATOR(pg_catalog.=) set_consumer_position.kafka_topic
	   AND p.kafka_partition OPERATOR(pg_catalog.=) set_consumer_position.kafka_partition
	   FOR UPDATE;

	INSERT INTO received_orders.received_orders_positions AS p
		(consumer_group, kafka_topic, kafka_partition, next_offset)
	VALUES (set_consumer_position.consumer_group, set_consumer_position.kafka_topic,
	        set_consumer_position.kafka_partition, set_consumer_position.next_offset)
	ON CONFLICT ON CONSTRAINT received_orders_positions_pkey
	DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = pg_catalog.now();

	RAISE NOTICE 'position of group "%" on % [%] moved from % to %', consumer_group,
		kafka_topic, kafka_partition, coalesce(previous::text, 'none'), next_offset;
	RETURN previous;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.set_consumer_position(text, text, integer, bigint) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.set_consumer_position(text, text, integer, bigint) IS
	'Move a consumer group''s position on one partition (forwards or backwards); returns the previous next_offset, NULL if none';

CREATE FUNCTION received_orders.forget_consumer_positions(
	consumer_group text,
	kafka_topic text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	forgotten bigint;
BEGIN
	IF consumer_group IS NULL THEN
		RAISE EXCEPTION 'consumer_group must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;

	DELETE FROM received_orders.received_orders_positions p
	 WHERE p.consumer_group OPERATOR(pg_catalog.=) forget_consumer_positions.consumer_group
	   AND (forget_consumer_positions.kafka_topic IS NULL
	        OR p.kafka_topic OPERATOR(pg_catalog.=) forget_consumer_positions.kafka_topic);
	GET DIAGNOSTICS forgotten = ROW_COUNT;
	RETURN forgotten;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.forget_consumer_positions(text, text) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.forget_consumer_positions(text, text) IS
	'Forget a consumer group''s positions (of one topic, or all); returns how many were removed';

-- The quarantine keeps every message that is not a redelivery.  1.0 kept one
-- row per Kafka coordinates and dropped the next message at the same
-- coordinates unchecked: after a topic was deleted and re-created, a move to
-- another cluster, or a row forged by a caller, a real rejected or
-- conflicting message was reported quarantined and stored nowhere.  Now a row
-- is unique on its coordinates and the digest of the message's bytes (key and
-- value): a redelivery (same bytes, same coordinates) is still stored once,
-- anything else gets its own row.  NULLS NOT DISTINCT: messages without
-- coordinates (a call without them) are stored once per distinct bytes, not
-- once per call (the copies 1.0 stored per call are kept and numbered: see
-- legacy_copy at the end of this script).
--
-- Storage is bounded: a key or value larger than received_orders.max_event_bytes
-- is stored as its first 4096 bytes, with its length as received in
-- kafka_key_bytes / raw_value_bytes (NULL when the column holds the whole
-- key or value) and the digest of the whole message.
ALTER TABLE received_orders.received_orders_quarantine
	ADD COLUMN kafka_key_bytes integer,
	ADD COLUMN raw_value_bytes integer,
	ADD COLUMN message_digest bytea;

UPDATE received_orders.received_orders_quarantine q
   SET message_digest = pg_catalog.sha256(
           CASE WHEN q.kafka_key IS NULL THEN '\x00'::bytea
                ELSE '\x01'::bytea OPERATOR(pg_catalog.||) pg_catalog.int4send(pg_catalog.length(q.kafka_key))
                     OPERATOR(pg_catalog.||) q.kafka_key END
           OPERATOR(pg_catalog.||)
           CASE WHEN q.raw_value IS NULL THEN '\x00'::bytea
                ELSE '\x01'::bytea OPERATOR(pg_catalog.||) q.raw_value END);

-- (The key itself, received_orders_quarantine_message_key, is added at the
-- end of this script, once 1.0's copies of one message are numbered.)
ALTER TABLE received_orders.received_orders_quarantine
	ALTER COLUMN message_digest SET NOT NULL,
	DROP CONSTRAINT received_orders_quarantine_coordinates_key,
	ADD CONSTRAINT received_orders_quarantine_digest_check
		CHECK (pg_catalog.length(message_digest) OPERATOR(pg_catalog.=) 32),
	ADD CONSTRAINT received_orders_quarantine_lengths_check
		CHECK (kafka_key_bytes OPERATOR(pg_catalog.>) 0 AND raw_value_bytes OPERATOR(pg_catalog.>) 0);

COMMENT ON COLUMN received_orders.received_orders_quarantine.raw_value IS
	'The Kafka value as received, or its first 4096 bytes when it was larger than received_orders.max_event_bytes (see raw_value_bytes)';
COMMENT ON COLUMN received_orders.received_orders_quarantine.raw_value_bytes IS
	'Length of the value as received when raw_value keeps only its first 4096 bytes (it was larger than received_orders.max_event_bytes); NULL when raw_value is the whole value. Set it to NULL with a repaired raw_value';
COMMENT ON COLUMN received_orders.received_orders_quarantine.kafka_key_bytes IS
	'Length of the key as received when kafka_key keeps only its first 4096 bytes; NULL when kafka_key is the whole key';
COMMENT ON COLUMN received_orders.received_orders_quarantine.message_digest IS
	'SHA-256 of the whole message as received (key and value): a redelivery at the same coordinates has the same digest';

-- Outbox topics: events wrapped by the relay that published them (Debezium's
-- outbox event router through Kafka Connect's JsonConverter, CloudEvents'
-- Kafka binding) and several event types on one topic.  The outbox form of
-- the batch function opens each value in its envelope and materializes only
-- the selected type; a message of another type is skipped (its position
-- counts, nothing is stored), one whose type cannot be told or whose
-- envelope is broken is quarantined as received.  The quarantine keeps the
-- envelope and the headers that identified the message, so that
-- replay_quarantined opens a repaired row the way the batch function would.
ALTER TABLE received_orders.received_orders_quarantine
	ADD COLUMN envelope text,
	ADD COLUMN kafka_headers jsonb,
	ADD CONSTRAINT received_orders_quarantine_envelope_check
		CHECK (envelope IN ('plain', 'debezium', 'cloudevents')),
	ADD CONSTRAINT received_orders_quarantine_headers_check
		CHECK (pg_catalog.jsonb_typeof(kafka_headers) OPERATOR(pg_catalog.=) 'object');

COMMENT ON COLUMN received_orders.received_orders_quarantine.envelope IS
	'How the value was wrapped (plain, debezium, cloudevents) when it came through the outbox form of materialize_orders; NULL: the value is the event';
COMMENT ON COLUMN received_orders.received_orders_quarantine.kafka_headers IS
	'The headers that identified the message (its type header, content-type) as text, or as \x... hex when not valid UTF-8; NULL if none';

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
	content_types bytea[])
RETURNS TABLE (
	"position" integer,
	order_id uuid,
	outcome received_orders.materialize_outcome,
	sqlstate text,
	message text)
AS 'MODULE_PATHNAME', 'materialize_orders_enveloped'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
ROWS 1000;

REVOKE EXECUTE ON FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[]) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[]) IS
	'Materialize a batch of outbox messages of a consumer group: each value opened in its envelope (plain, debezium, cloudevents), only messages of event_type materialized (type from the header type_header, given as message_types, or the CloudEvents type attribute), others skipped; positions recorded as by the consumer group''s form';

-- 1.0's copies of one message.  1.0's key on the coordinates had its NULLs
-- distinct: a message quarantined without coordinates (materialize_orders
-- called from SQL without them), or with some of them only (a NULL topic,
-- partition or offset), got a row per call, and so did rows whose
-- coordinates or raw_value a DBA edited.  Such rows have the same key and
-- value at the same (incomplete) coordinates: under 1.1's key they are
-- copies of one message, which the key cannot hold twice, and the update
-- failed on them ("could not create unique index ... is duplicated"), so
-- that such a database could not leave 1.0.  Every copy is kept, as it was:
-- the first of each message (lowest id) stays as it is, the later ones are
-- numbered legacy_copy 1, 2, ... in the order of their ids, and legacy_copy
-- is part of the key.  No coordinate, value or digest is changed.  1.1's
-- batches never set legacy_copy (NULL): a redelivery of such a message is
-- found by the first row and stored no more, as any redelivery; every copy
-- replays with replay_quarantined like any row.
ALTER TABLE received_orders.received_orders_quarantine
	ADD COLUMN legacy_copy integer,
	ADD CONSTRAINT received_orders_quarantine_legacy_copy_check
		CHECK (legacy_copy OPERATOR(pg_catalog.>) 0);

UPDATE received_orders.received_orders_quarantine q
   SET legacy_copy = c.copy
  FROM (SELECT r.id,
               pg_catalog.row_number() OVER (PARTITION BY r.kafka_topic, r.kafka_partition,
                                                          r.kafka_offset, r.message_digest
                                             ORDER BY r.id) OPERATOR(pg_catalog.-) 1 AS copy
          FROM received_orders.received_orders_quarantine r) c
 WHERE q.id OPERATOR(pg_catalog.=) c.id
   AND c.copy OPERATOR(pg_catalog.>) 0;

ALTER TABLE received_orders.received_orders_quarantine
	ADD CONSTRAINT received_orders_quarantine_message_key
		UNIQUE NULLS NOT DISTINCT (kafka_topic, kafka_partition, kafka_offset, message_digest, legacy_copy);

COMMENT ON COLUMN received_orders.received_orders_quarantine.legacy_copy IS
	'NULL, except on the later copies of a message 1.0 quarantined more than once at the same incomplete coordinates (no topic, partition or offset): 1, 2, ... in the order of their ids, numbered by the update to 1.1 so that every copy is kept';
