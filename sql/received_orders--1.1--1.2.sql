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
	-- the group must be the caller's (see the consumer groups section below)
	PERFORM received_orders.check_consumer_group(adopt_consumer_position.consumer_group, NULL);

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

-- ---------------------------------------------------------------------------
-- Consumer groups: who may use a group's positions, and on which Kafka
-- cluster they were taken.
--
-- 1.1 let any role that may execute the batch function write any group's
-- positions: with NULL values it moved another group's positions forwards
-- (that group then skipped orders at its next start), restart_position moved
-- them backwards and consumer_positions read them.  Now a group belongs to a
-- role: the first role that writes or reads it (a superuser excepted) claims
-- it, and only roles with the privileges of that role (itself, its members:
-- GRANT owner TO other) may use it afterwards; a superuser may use every
-- group, and set_consumer_group_owner() hands a group to another role.  The
-- owner is kept by name, not by oid, so that the rows survive pg_dump and a
-- restore into a cluster whose roles have other oids (or do not exist yet).
--
-- Positions are offsets of one Kafka cluster: the feeder hands the cluster
-- id it is connected to (consumer_positions(group, cluster)) on every new
-- session; the first one is recorded, a different one is refused.
--
-- Groups that already have positions are entered unclaimed: the first role
-- to use each after the update claims it.  Check, right after the update,
-- that every group is claimed by the role of its feeders (or set it first
-- with set_consumer_group_owner).
--
-- After the update, the feeder's role needs EXECUTE on the overload it now
-- calls:
--   GRANT EXECUTE ON FUNCTION
--     received_orders.consumer_positions(text, text)
--   TO feeder;
-- ---------------------------------------------------------------------------

CREATE TABLE received_orders.received_orders_consumer_groups (
	consumer_group text NOT NULL,
	owner_role name,
	kafka_cluster_id text,
	created_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	updated_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	CONSTRAINT received_orders_consumer_groups_pkey PRIMARY KEY (consumer_group),
	CONSTRAINT received_orders_consumer_groups_group_check
		CHECK (consumer_group OPERATOR(pg_catalog.<>) ''),
	CONSTRAINT received_orders_consumer_groups_cluster_check
		CHECK (kafka_cluster_id OPERATOR(pg_catalog.<>) '')
);

COMMENT ON TABLE received_orders.received_orders_consumer_groups IS
	'Per consumer group: the role that owns its positions (NULL: not claimed yet) and the Kafka cluster they were taken on (NULL: not known yet)';
COMMENT ON COLUMN received_orders.received_orders_consumer_groups.owner_role IS
	'Name of the role whose privileges are needed to read or move the group''s positions; NULL until a role other than a superuser first uses the group';
COMMENT ON COLUMN received_orders.received_orders_consumer_groups.kafka_cluster_id IS
	'Cluster id of the Kafka cluster the positions were taken on, as the feeder first reported it; forget_consumer_positions(group) clears it';

SELECT pg_catalog.pg_extension_config_dump('received_orders.received_orders_consumer_groups', '');

REVOKE ALL ON received_orders.received_orders_consumer_groups FROM PUBLIC;

INSERT INTO received_orders.received_orders_consumer_groups (consumer_group)
SELECT DISTINCT p.consumer_group FROM received_orders.received_orders_positions p;

-- The one decision, in C (groups.c): may the calling role (the session's,
-- SET ROLE included, not a SECURITY DEFINER function's owner) use the
-- group?  Claims an unclaimed group, records the cluster id when none is
-- recorded; raises 42501 or 55000 otherwise.  For the extension's own
-- functions: EXECUTE stays with the owner.
CREATE FUNCTION received_orders.check_consumer_group(
	consumer_group text,
	kafka_cluster_id text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'check_consumer_group'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

REVOKE EXECUTE ON FUNCTION received_orders.check_consumer_group(text, text) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.check_consumer_group(text, text) IS
	'Raise unless the calling role may use the consumer group (claiming it when unclaimed) and, given a Kafka cluster id, the group''s positions were taken on that cluster (recording it when none is)';

-- consumer_positions reads a group's positions only for a role that may use
-- it (and claims an unclaimed group): VOLATILE now.
CREATE OR REPLACE FUNCTION received_orders.consumer_positions(consumer_group text)
RETURNS TABLE (
	kafka_topic text,
	kafka_partition integer,
	next_offset bigint,
	updated_at timestamptz)
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM received_orders.check_consumer_group(consumer_positions.consumer_group, NULL);
	RETURN QUERY
	SELECT p.kafka_topic, p.kafka_partition, p.next_offset, p.updated_at
	  FROM received_orders.received_orders_positions p
	 WHERE p.consumer_group OPERATOR(pg_catalog.=) consumer_positions.consumer_group
	 ORDER BY p.kafka_topic, p.kafka_partition;
END
$$;

CREATE FUNCTION received_orders.consumer_positions(
	consumer_group text,
	kafka_cluster_id text)
RETURNS TABLE (
	kafka_topic text,
	kafka_partition integer,
	next_offset bigint,
	updated_at timestamptz)
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF consumer_group IS NULL OR kafka_cluster_id IS NULL THEN
		RAISE EXCEPTION 'consumer_group and kafka_cluster_id must not be null'
			USING ERRCODE = 'null_value_not_allowed',
			      HINT = 'Pass the cluster id the Kafka cluster reports (its Metadata''s ClusterId).';
	END IF;
	PERFORM received_orders.check_consumer_group(consumer_positions.consumer_group,
	                                             consumer_positions.kafka_cluster_id);
	RETURN QUERY
	SELECT p.kafka_topic, p.kafka_partition, p.next_offset, p.updated_at
	  FROM received_orders.received_orders_positions p
	 WHERE p.consumer_group OPERATOR(pg_catalog.=) consumer_positions.consumer_group
	 ORDER BY p.kafka_topic, p.kafka_partition;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.consumer_positions(text, text) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.consumer_positions(text, text) IS
	'The next offset to read of every partition a consumer group has materialized, for a feeder connected to the Kafka cluster of that id: the first id is recorded, another one refused';

CREATE OR REPLACE FUNCTION received_orders.restart_position(
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
	PERFORM received_orders.check_consumer_group(restart_position.consumer_group, NULL);

	UPDATE received_orders.received_orders_positions p
	   SET next_offset = restart_position.to_offset, updated_at = pg_catalog.now()
	 WHERE p.consumer_group OPERATOR(pg_catalog.=) restart_position.consumer_group
	   AND p.kafka_topic OPERATOR(pg_catalog.=) restart_position.kafka_topic
	   AND p.kafka_partition OPERATOR(pg_catalog.=) restart_position.kafka_partition
	   AND p.next_offset OPERATOR(pg_catalog.=) restart_position.from_offset;
	RETURN FOUND;
END
$$;

-- Forgetting all of a group's positions also forgets the cluster they were
-- taken on (the way to move a group to another Kafka cluster); the owner
-- stays.
CREATE OR REPLACE FUNCTION received_orders.forget_consumer_positions(
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
	IF forget_consumer_positions.kafka_topic IS NULL THEN
		UPDATE received_orders.received_orders_consumer_groups g
		   SET kafka_cluster_id = NULL, updated_at = pg_catalog.now()
		 WHERE g.consumer_group OPERATOR(pg_catalog.=) forget_consumer_positions.consumer_group
		   AND g.kafka_cluster_id IS NOT NULL;
	END IF;
	RETURN forgotten;
END
$$;

COMMENT ON FUNCTION received_orders.forget_consumer_positions(text, text) IS
	'Forget a consumer group''s positions (of one topic, or all: then also the Kafka cluster they were taken on); returns how many were removed';

-- Operators' tool, like set_consumer_position: hand a group to another role
-- (NULL: unclaimed, the next role to use it claims it).
CREATE FUNCTION received_orders.set_consumer_group_owner(
	consumer_group text,
	owner_role name)
RETURNS name
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	previous name;
BEGIN
	IF consumer_group IS NULL OR consumer_group OPERATOR(pg_catalog.=) '' THEN
		RAISE EXCEPTION 'consumer_group must not be null or empty'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF owner_role IS NOT NULL AND NOT EXISTS (
	       SELECT FROM pg_catalog.pg_roles r
	        WHERE r.rolname OPERATOR(pg_catalog.=) set_consumer_group_owner.owner_role) THEN
		RAISE EXCEPTION 'role "%" does not exist', owner_role
			USING ERRCODE = 'undefined_object';
	END IF;

	SELECT g.owner_role INTO previous
	  FROM received_orders.received_orders_consumer_groups g
	 WHERE g.consumer_group OPERATOR(pg_catalog.=) set_consumer_group_owner.consumer_group
	   FOR UPDATE;

	INSERT INTO received_orders.received_orders_consumer_groups AS g (consumer_group, owner_role)
	VALUES (set_consumer_group_owner.consumer_group, set_consumer_group_owner.owner_role)
	ON CONFLICT ON CONSTRAINT received_orders_consumer_groups_pkey
	DO UPDATE SET owner_role = EXCLUDED.owner_role, updated_at = pg_catalog.now();

	RAISE NOTICE 'consumer group "%" moved from owner % to %', consumer_group,
		coalesce(pg_catalog.quote_ident(previous), 'none'),
		coalesce(pg_catalog.quote_ident(owner_role), 'none');
	RETURN previous;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.set_consumer_group_owner(text, name) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.set_consumer_group_owner(text, name) IS
	'Make a role the owner of a consumer group''s positions (NULL: unclaimed); returns the previous owner';

-- ---------------------------------------------------------------------------
-- Schema Registry values (issue 26; docs/adr/0005-schema-registry-values.md)
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
-- Newer serializers may name the schema by its GUID in a __value_schema_id
-- header (byte 1 and 16 bytes) and leave the value unframed: the feeder
-- decodes it by that GUID and hands the GUID in value_schema_guids; the
-- quarantine keeps it in value_schema_guid beside the unframed bytes, so
-- that an operator knows which schema decodes a refused Avro value (there
-- is no schema id then: a GUID is one schema text in every registry
-- context, each with its own id).  A stored row records no GUID.
-- Grant for a feeder run with --value-format confluent:
--   GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(text, bytea[],
--     text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[],
--     bytea[], integer[], text[], uuid[]) TO feeder;
ALTER TABLE received_orders.received_orders_quarantine
	ADD COLUMN value_schema_id integer,
	ADD COLUMN value_schema_guid uuid;

COMMENT ON COLUMN received_orders.received_orders_quarantine.value_schema_id IS
	'The Schema Registry id in the frame of a value that came through the Schema Registry form of materialize_orders (raw_value keeps the framed bytes as received); NULL otherwise';
COMMENT ON COLUMN received_orders.received_orders_quarantine.value_schema_guid IS
	'The Schema Registry GUID a __value_schema_id header named for an unframed value that came through the Schema Registry form of materialize_orders (raw_value keeps the value as received; GET /schemas/guids/{guid} answers its schema); NULL otherwise';

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
	decode_errors text[],
	value_schema_guids uuid[])
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

REVOKE EXECUTE ON FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[], bytea[], integer[], text[], uuid[]) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[], bytea[], integer[], text[], uuid[]) IS
	'Materialize a batch of Schema Registry framed messages as the outbox form does: each element''s event is its decoded_values element (an Avro value the feeder decoded), or its value after the 5-byte frame (a JSON Schema value); one with a decode_errors element is rejected with that reason; the quarantine keeps the bytes as received with their value_schema_id, or the value_schema_guids element of a value a header named by GUID';
-- end of section: Schema Registry values -----------------------------------

-- ---------------------------------------------------------------------------
-- Status from SQL (issue 25): which feeders run, how far behind each
-- partition is, and what the quarantine holds, readable in psql.
--
-- Each feeder reports itself (report_feeder) from its own session and its
-- own short transaction, never inside a batch's: one row per member in
-- received_orders_feeders, with its state as /healthz knows it, its
-- assigned partitions and their high watermarks as librdkafka last saw
-- them.  The batch's own transaction records the high watermark with each
-- position (record_high_watermarks, one extra statement before COMMIT), so
-- that lag = high watermark - position is the feeder's knowledge of it;
-- the member's report keeps it current while batches cannot commit.
--
-- received_orders_feeders is runtime state, deliberately NOT marked with
-- pg_extension_config_dump: its rows describe processes of the cluster
-- they ran against.  Restored elsewhere they would name members that never
-- connected to the restored database (every one unhealthy at once), and
-- the running feeders write their rows again within one report interval.
-- The new columns of received_orders_positions are dumped with it.
--
-- The views are for monitoring roles: pg_monitor gets USAGE on the schema
-- and SELECT on the three views, not on the tables nor EXECUTE on anything.
-- Grants for a feeder (1.2) to report itself and the high watermarks:
--   GRANT EXECUTE ON FUNCTION
--     received_orders.report_feeder(text, text, text, integer, text,
--       timestamptz, text, text[], integer[], bigint[], text, timestamptz,
--       interval, interval),
--     received_orders.record_high_watermarks(text, text, text[], integer[],
--       bigint[])
--   TO feeder;
-- ---------------------------------------------------------------------------

CREATE TABLE received_orders.received_orders_feeders (
	consumer_group text NOT NULL,
	member_id text NOT NULL,
	host text,
	pid integer,
	version text,
	started_at timestamptz,
	last_seen timestamptz NOT NULL DEFAULT pg_catalog.now(),
	state text NOT NULL,
	kafka_topics text[] NOT NULL DEFAULT '{}',
	kafka_partitions integer[] NOT NULL DEFAULT '{}',
	high_watermarks bigint[] NOT NULL DEFAULT '{}',
	last_error text,
	last_error_at timestamptz,
	report_interval interval NOT NULL,
	CONSTRAINT received_orders_feeders_pkey PRIMARY KEY (consumer_group, member_id),
	CONSTRAINT received_orders_feeders_group_check
		CHECK (consumer_group OPERATOR(pg_catalog.<>) ''),
	CONSTRAINT received_orders_feeders_member_check
		CHECK (member_id OPERATOR(pg_catalog.<>) ''),
	CONSTRAINT received_orders_feeders_state_check
		CHECK (state OPERATOR(pg_catalog.=) ANY (ARRAY['starting', 'running', 'paused: database',
			'paused: registry', 'paused: kafka', 'stalled', 'stopping', 'stopped'])),
	CONSTRAINT received_orders_feeders_partitions_check
		CHECK (pg_catalog.cardinality(kafka_topics) OPERATOR(pg_catalog.=) pg_catalog.cardinality(kafka_partitions)
		       AND pg_catalog.cardinality(kafka_topics) OPERATOR(pg_catalog.=) pg_catalog.cardinality(high_watermarks)),
	CONSTRAINT received_orders_feeders_interval_check
		CHECK (report_interval OPERATOR(pg_catalog.>) '0'::interval)
);

COMMENT ON TABLE received_orders.received_orders_feeders IS
	'One row per feeder (member of a consumer group) as it last reported itself through report_feeder(); runtime state, not dumped; read it through the view feeders';
COMMENT ON COLUMN received_orders.received_orders_feeders.member_id IS
	'The feeder''s own id (host, pid and start time), stable for its life; not the Kafka member id, which changes at every rejoin';
COMMENT ON COLUMN received_orders.received_orders_feeders.kafka_topics IS
	'Topics of the partitions assigned to the member at its last report, element by element with kafka_partitions and high_watermarks';
COMMENT ON COLUMN received_orders.received_orders_feeders.high_watermarks IS
	'High watermark of each assigned partition as librdkafka last saw it (NULL element: not known yet)';

REVOKE ALL ON received_orders.received_orders_feeders FROM PUBLIC;

ALTER TABLE received_orders.received_orders_positions
	ADD COLUMN high_watermark bigint,
	ADD COLUMN high_watermark_at timestamptz,
	ADD COLUMN member_id text;

COMMENT ON COLUMN received_orders.received_orders_positions.high_watermark IS
	'The partition''s high watermark as the feeder saw it when it last recorded it in a batch''s transaction (record_high_watermarks); NULL: never recorded';
COMMENT ON COLUMN received_orders.received_orders_positions.high_watermark_at IS
	'When high_watermark was recorded';
COMMENT ON COLUMN received_orders.received_orders_positions.member_id IS
	'The feeder (member_id of received_orders_feeders) that last recorded high_watermark, in the transaction of a batch of this partition';

-- The feeder's report, in its own session and transaction: one row per
-- member, inserted or replaced; the group must be the caller's (the rule of
-- positions: check_consumer_group).  Housekeeping in the same call: the
-- group's member rows not seen for keep_for are removed (none is removed
-- with keep_for NULL).  Returns how many were removed.
CREATE FUNCTION received_orders.report_feeder(
	consumer_group text,
	member_id text,
	host text,
	pid integer,
	version text,
	started_at timestamptz,
	state text,
	kafka_topics text[],
	kafka_partitions integer[],
	high_watermarks bigint[],
	last_error text,
	last_error_at timestamptz,
	report_interval interval,
	keep_for interval DEFAULT '7 days')
RETURNS bigint
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	removed bigint;
BEGIN
	IF consumer_group IS NULL OR member_id IS NULL OR state IS NULL
	   OR report_interval IS NULL THEN
		RAISE EXCEPTION 'consumer_group, member_id, state and report_interval must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF pg_catalog.cardinality(coalesce(kafka_topics, '{}')) OPERATOR(pg_catalog.<>) pg_catalog.cardinality(coalesce(kafka_partitions, '{}'))
	   OR pg_catalog.cardinality(coalesce(kafka_topics, '{}')) OPERATOR(pg_catalog.<>) pg_catalog.cardinality(coalesce(high_watermarks, '{}')) THEN
		RAISE EXCEPTION 'kafka_topics, kafka_partitions and high_watermarks must have one element per partition'
			USING ERRCODE = 'array_subscript_error';
	END IF;
	-- the group must be the caller's (see the consumer groups section)
	PERFORM received_orders.check_consumer_group(report_feeder.consumer_group, NULL);

	INSERT INTO received_orders.received_orders_feeders AS f
		(consumer_group, member_id, host, pid, version, started_at, last_seen,
		 state, kafka_topics, kafka_partitions, high_watermarks, last_error,
		 last_error_at, report_interval)
	VALUES (report_feeder.consumer_group, report_feeder.member_id, report_feeder.host,
	        report_feeder.pid, report_feeder.version, report_feeder.started_at,
	        pg_catalog.now(), report_feeder.state,
	        coalesce(report_feeder.kafka_topics, '{}'), coalesce(report_feeder.kafka_partitions, '{}'),
	        coalesce(report_feeder.high_watermarks, '{}'), report_feeder.last_error,
	        report_feeder.last_error_at, report_feeder.report_interval)
	ON CONFLICT ON CONSTRAINT received_orders_feeders_pkey DO UPDATE
	SET host = EXCLUDED.host, pid = EXCLUDED.pid, version = EXCLUDED.version,
	    started_at = EXCLUDED.started_at, last_seen = EXCLUDED.last_seen,
	    state = EXCLUDED.state, kafka_topics = EXCLUDED.kafka_topics,
	    kafka_partitions = EXCLUDED.kafka_partitions,
	    high_watermarks = EXCLUDED.high_watermarks, last_error = EXCLUDED.last_error,
	    last_error_at = EXCLUDED.last_error_at, report_interval = EXCLUDED.report_interval;

	DELETE FROM received_orders.received_orders_feeders f
	 WHERE f.consumer_group OPERATOR(pg_catalog.=) report_feeder.consumer_group
	   AND f.last_seen OPERATOR(pg_catalog.<) (pg_catalog.now() OPERATOR(pg_catalog.-) report_feeder.keep_for);
	GET DIAGNOSTICS removed = ROW_COUNT;
	RETURN removed;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.report_feeder(text, text, text, integer, text, timestamptz, text, text[], integer[], bigint[], text, timestamptz, interval, interval) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.report_feeder(text, text, text, integer, text, timestamptz, text, text[], integer[], bigint[], text, timestamptz, interval, interval) IS
	'A feeder reports itself: its row in received_orders_feeders is inserted or replaced (the group must be the caller''s); the group''s member rows not seen for keep_for (7 days) are removed; returns how many were removed';

-- In the batch's own transaction, after the batch function: the high
-- watermarks the feeder saw of the batch's partitions, with its member id,
-- on the positions the batch just wrote (their rows are already locked by
-- the batch: no other wait).  Only existing positions are touched.
-- Returns how many were updated.
CREATE FUNCTION received_orders.record_high_watermarks(
	consumer_group text,
	member_id text,
	kafka_topics text[],
	kafka_partitions integer[],
	high_watermarks bigint[])
RETURNS integer
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	updated integer;
BEGIN
	IF consumer_group IS NULL THEN
		RAISE EXCEPTION 'consumer_group must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF pg_catalog.cardinality(coalesce(kafka_topics, '{}')) OPERATOR(pg_catalog.<>) pg_catalog.cardinality(coalesce(kafka_partitions, '{}'))
	   OR pg_catalog.cardinality(coalesce(kafka_topics, '{}')) OPERATOR(pg_catalog.<>) pg_catalog.cardinality(coalesce(high_watermarks, '{}')) THEN
		RAISE EXCEPTION 'kafka_topics, kafka_partitions and high_watermarks must have one element per partition'
			USING ERRCODE = 'array_subscript_error';
	END IF;
	PERFORM received_orders.check_consumer_group(record_high_watermarks.consumer_group, NULL);

	UPDATE received_orders.received_orders_positions p
	   SET high_watermark = t.high_watermark, high_watermark_at = pg_catalog.now(),
	       member_id = record_high_watermarks.member_id
	  FROM ROWS FROM (pg_catalog.unnest(record_high_watermarks.kafka_topics),
	                  pg_catalog.unnest(record_high_watermarks.kafka_partitions),
	                  pg_catalog.unnest(record_high_watermarks.high_watermarks))
	       AS t (kafka_topic, kafka_partition, high_watermark)
	 WHERE p.consumer_group OPERATOR(pg_catalog.=) record_high_watermarks.consumer_group
	   AND p.kafka_topic OPERATOR(pg_catalog.=) t.kafka_topic
	   AND p.kafka_partition OPERATOR(pg_catalog.=) t.kafka_partition
	   AND t.high_watermark IS NOT NULL;
	GET DIAGNOSTICS updated = ROW_COUNT;
	RETURN updated;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.record_high_watermarks(text, text, text[], integer[], bigint[]) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.record_high_watermarks(text, text, text[], integer[], bigint[]) IS
	'Record, in a batch''s transaction, the high watermarks a feeder saw of the partitions whose positions the batch wrote (the group must be the caller''s); returns how many positions were updated';

-- One row per member; healthy: not stopped and reported within three of
-- its report intervals.
CREATE VIEW received_orders.feeders AS
SELECT f.consumer_group, f.member_id, f.host, f.pid, f.version, f.started_at,
       f.last_seen,
       pg_catalog.date_trunc('second', pg_catalog.now() OPERATOR(pg_catalog.-) f.last_seen) AS last_seen_age,
       f.state,
       (f.state OPERATOR(pg_catalog.<>) 'stopped'
        AND f.last_seen OPERATOR(pg_catalog.>) (pg_catalog.now()
            OPERATOR(pg_catalog.-) (f.report_interval OPERATOR(pg_catalog.*) 3::double precision))) AS healthy,
       pg_catalog.cardinality(f.kafka_partitions) AS assigned_partitions,
       (SELECT pg_catalog.array_agg(t.kafka_topic OPERATOR(pg_catalog.||) ' ['
                OPERATOR(pg_catalog.||) t.kafka_partition::text OPERATOR(pg_catalog.||) ']'
                ORDER BY t.kafka_topic, t.kafka_partition)
          FROM ROWS FROM (pg_catalog.unnest(f.kafka_topics), pg_catalog.unnest(f.kafka_partitions))
               AS t (kafka_topic, kafka_partition)) AS partitions,
       f.last_error, f.last_error_at, f.report_interval
  FROM received_orders.received_orders_feeders f;

COMMENT ON VIEW received_orders.feeders IS
	'Every feeder as it last reported itself: state, age of its last report, healthy (not stopped, reported within three report intervals), its partitions and last error';

-- One row per partition a group has a position of or a member reports as
-- assigned.  owner: the healthy member whose latest report lists the
-- partition (a member that lost it lists it no more; a killed one stops
-- being healthy after three intervals).  high_watermark: the greater of the
-- one recorded with the position (by the last batch) and the owner's
-- report, which stays current while batches cannot commit.
CREATE VIEW received_orders.consumer_lag AS
WITH reported AS (
	SELECT f.consumer_group, t.kafka_topic, t.kafka_partition, t.high_watermark,
	       f.member_id, f.last_seen
	  FROM received_orders.received_orders_feeders f
	 CROSS JOIN LATERAL ROWS FROM (pg_catalog.unnest(f.kafka_topics),
	                               pg_catalog.unnest(f.kafka_partitions),
	                               pg_catalog.unnest(f.high_watermarks))
	       AS t (kafka_topic, kafka_partition, high_watermark)
	 WHERE f.state OPERATOR(pg_catalog.<>) 'stopped'
	   AND f.last_seen OPERATOR(pg_catalog.>) (pg_catalog.now()
	       OPERATOR(pg_catalog.-) (f.report_interval OPERATOR(pg_catalog.*) 3::double precision))
), owners AS (
	SELECT DISTINCT ON (r.consumer_group, r.kafka_topic, r.kafka_partition)
	       r.consumer_group, r.kafka_topic, r.kafka_partition, r.high_watermark,
	       r.member_id, r.last_seen
	  FROM reported r
	 ORDER BY r.consumer_group, r.kafka_topic, r.kafka_partition, r.last_seen DESC, r.member_id
), joined AS (
	SELECT coalesce(p.consumer_group, o.consumer_group) AS consumer_group,
	       coalesce(p.kafka_topic, o.kafka_topic) AS kafka_topic,
	       coalesce(p.kafka_partition, o.kafka_partition) AS kafka_partition,
	       p.next_offset,
	       pg_catalog.int8larger(coalesce(p.high_watermark, o.high_watermark),
	                              coalesce(o.high_watermark, p.high_watermark)) AS high_watermark,
	       p.updated_at, p.member_id AS written_by, o.member_id AS owner,
	       o.last_seen AS owner_last_seen
	  FROM received_orders.received_orders_positions p
	  FULL JOIN owners o
	    ON o.consumer_group OPERATOR(pg_catalog.=) p.consumer_group
	   AND o.kafka_topic OPERATOR(pg_catalog.=) p.kafka_topic
	   AND o.kafka_partition OPERATOR(pg_catalog.=) p.kafka_partition
)
SELECT j.consumer_group, j.kafka_topic, j.kafka_partition,
       j.next_offset AS "position", j.high_watermark,
       pg_catalog.int8larger(j.high_watermark OPERATOR(pg_catalog.-) j.next_offset, 0) AS lag,
       j.updated_at AS last_batch_at, j.written_by, j.owner, j.owner_last_seen
  FROM joined j;

COMMENT ON VIEW received_orders.consumer_lag IS
	'Per consumer group and partition: position (next offset to read), high watermark as the feeders last saw it, lag, when the last batch moved the position, the member that recorded it, and the healthy member that owns the partition now';

-- quarantine_summary, the third view, is defined in the last section
-- (replays recorded), after the table of replays it counts.

REVOKE ALL ON received_orders.feeders, received_orders.consumer_lag FROM PUBLIC;
GRANT USAGE ON SCHEMA received_orders TO pg_monitor;
GRANT SELECT ON received_orders.feeders, received_orders.consumer_lag TO pg_monitor;
-- end of section: status from SQL ------------------------------------------

-- ---------------------------------------------------------------------------
-- Replays recorded: quarantine_summary counts how many quarantined messages
-- were replayed (issue 25).
--
-- replay_quarantined deletes the quarantine row of the message it
-- materialized, and until now nothing recorded that it did: the summary
-- could count only what still waits.  The row now leaves, in the same
-- statement and transaction, a record in received_orders_replays: the
-- quarantine id, the message's coordinates, its outcome, SQLSTATE and reason
-- and when it was quarantined, the order it turned out to be, what the
-- replay made of it (inserted or duplicate) and when.  Only
-- replay_quarantined (SECURITY DEFINER) writes it; PUBLIC has no privilege
-- on it, and pg_monitor reads it only through quarantine_summary.  It is
-- dumped like the quarantine: it is the history of the operators' repairs.
-- It grows by one row per replay; a DBA deletes old rows at will.
--
-- quarantine_summary counts them in a column replayed, beside messages:
-- per outcome, SQLSTATE and kind of reason, how many were replayed.
-- messages, topics, oldest and newest still describe only what waits in
-- the quarantine; a kind whose every message was replayed shows 0
-- messages, no oldest nor newest, and its latest replayed reason as
-- example.
-- ---------------------------------------------------------------------------

CREATE TABLE received_orders.received_orders_replays (
	quarantine_id bigint NOT NULL,
	kafka_topic text,
	kafka_partition integer,
	kafka_offset bigint,
	outcome received_orders.materialize_outcome NOT NULL,
	sqlstate text NOT NULL,
	reason text NOT NULL,
	quarantined_at timestamptz NOT NULL,
	order_id uuid NOT NULL,
	replayed_as received_orders.materialize_outcome NOT NULL,
	replayed_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	CONSTRAINT received_orders_replays_pkey PRIMARY KEY (quarantine_id)
);

COMMENT ON TABLE received_orders.received_orders_replays IS
	'One row per quarantined message that replay_quarantined materialized (its quarantine row is deleted): its quarantine id, coordinates, outcome, SQLSTATE and reason as quarantined, its order and what the replay made of it; counted by the view quarantine_summary';
COMMENT ON COLUMN received_orders.received_orders_replays.replayed_as IS
	'The outcome of the replay: inserted, or duplicate when the order was already stored';

SELECT pg_catalog.pg_extension_config_dump('received_orders.received_orders_replays', '');

REVOKE ALL ON received_orders.received_orders_replays FROM PUBLIC;

-- The quarantine by outcome, SQLSTATE and kind of reason: a reason names
-- its message's particulars (an order id, the references, a token, a size),
-- so the summary groups them with each UUID shown as <uuid>, each quoted
-- string as "..." and each number as N, and keeps one reason whole as its
-- example (the newest waiting one).  Replays are counted from
-- received_orders_replays.
CREATE VIEW received_orders.quarantine_summary AS
WITH entries AS (
	SELECT q.outcome, q.sqlstate, q.reason, q.kafka_topic, q.quarantined_at,
	       q.id, false AS replayed, NULL::timestamptz AS replayed_at
	  FROM received_orders.received_orders_quarantine q
	UNION ALL
	SELECT r.outcome, r.sqlstate, r.reason, r.kafka_topic, r.quarantined_at,
	       r.quarantine_id, true, r.replayed_at
	  FROM received_orders.received_orders_replays r
)
SELECT e.outcome, e.sqlstate, k.reason,
       pg_catalog.count(*) FILTER (WHERE NOT e.replayed) AS messages,
       pg_catalog.count(*) FILTER (WHERE e.replayed) AS replayed,
       pg_catalog.count(DISTINCT e.kafka_topic) FILTER (WHERE NOT e.replayed) AS topics,
       pg_catalog.min(e.quarantined_at) FILTER (WHERE NOT e.replayed) AS oldest,
       pg_catalog.max(e.quarantined_at) FILTER (WHERE NOT e.replayed) AS newest,
       (pg_catalog.array_agg(e.reason ORDER BY e.replayed, COALESCE(e.replayed_at, e.quarantined_at) DESC, e.id DESC))[1] AS example
  FROM entries e
 CROSS JOIN LATERAL (
	SELECT pg_catalog.regexp_replace(pg_catalog.regexp_replace(pg_catalog.regexp_replace(e.reason,
	           '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<uuid>', 'g'),
	           '"([^"\\]|\\.)*"', '"..."', 'g'),
	           '[0-9]+', 'N', 'g') AS reason) k
 GROUP BY e.outcome, e.sqlstate, k.reason;

COMMENT ON VIEW received_orders.quarantine_summary IS
	'Quarantined messages counted by outcome, SQLSTATE and kind of reason (UUIDs, quoted strings and numbers masked): messages waiting in the quarantine, how many were replayed (received_orders_replays), the waiting ones'' topics, oldest and newest, and one whole reason as example (the newest waiting one, else the latest replayed)';

REVOKE ALL ON received_orders.quarantine_summary FROM PUBLIC;
GRANT SELECT ON received_orders.quarantine_summary TO pg_monitor;
-- end of section: replays recorded ------------------------------------------

-- ---------------------------------------------------------------------------
-- The schema id on stored rows (issue 26; docs/adr/0005-schema-registry-values.md)
--
-- A row stored from a value framed by a Schema Registry serializer records
-- which schema it came from: value_schema_id is the id the frame named (the
-- one the feeder read, which it decoded an Avro value with), as the
-- quarantine records it for a message it keeps.  The Schema Registry form of
-- materialize_orders sets it; replay_quarantined sets it from a quarantine
-- row whose value is still framed.  It is NULL for a row from a JSON value
-- (every other form, materialize_order, a replay of a row whose raw_value an
-- operator replaced with the event's JSON) and for a value whose schema a
-- __value_schema_id header named by its GUID (no schema id is read then).
-- Only the first message of an order stores a row: a redelivery, or the
-- same order under a later schema version, leaves the row as it is, like
-- its payload.  Adding a nullable column without a default rewrites
-- nothing; existing rows get NULL.  It is dumped with the table.
-- ---------------------------------------------------------------------------

ALTER TABLE received_orders.received_orders
	ADD COLUMN value_schema_id integer;

COMMENT ON COLUMN received_orders.received_orders.value_schema_id IS
	'The Schema Registry id of the framed value (Avro or JSON Schema) the row was stored from, as the Schema Registry form of materialize_orders or replay_quarantined read it; NULL for a row stored from a JSON value, or from a value whose schema a __value_schema_id header named by its GUID';
-- end of section: schema id on stored rows ---------------------------------
