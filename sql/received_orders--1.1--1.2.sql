-- received_orders--1.1--1.2.sql — update from 1.1 to 1.2.
--
-- Every schema change of 1.2 is in this one script; 1.0's and 1.1's scripts
-- stay frozen.  Each section below says what it adds and why.

\echo Use "ALTER EXTENSION received_orders UPDATE TO '1.2'" to load this file. \quit

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
