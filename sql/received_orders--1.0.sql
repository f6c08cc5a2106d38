-- received_orders — install script (built to received_orders--1.0.sql).
--
-- Every object lives in the schema received_orders, fixed by the control
-- file.  The functions are SECURITY DEFINER with a pinned search_path and
-- reach every object through a schema-qualified name; EXECUTE is revoked from
-- PUBLIC right after each one, so a DBA grants exactly what a role needs.

\echo Use "CREATE EXTENSION received_orders" to load this file. \quit

DO $$
BEGIN
	IF pg_catalog.current_setting('server_encoding') OPERATOR(pg_catalog.<>) 'UTF8' THEN
		RAISE EXCEPTION 'received_orders requires a UTF8 database'
			USING ERRCODE = 'feature_not_supported',
			      DETAIL = pg_catalog.format('Database "%s" has encoding %s.',
			                                 pg_catalog.current_database(),
			                                 pg_catalog.current_setting('server_encoding')),
			      HINT = 'Create the database with ENCODING ''UTF8''.';
	END IF;
END
$$;

CREATE TYPE received_orders.materialize_outcome AS ENUM (
	'inserted',		-- first time this order_id was seen: a row was written
	'duplicate',	-- order_id already stored with the same externalReference
	'conflict',		-- order_id already stored with another externalReference
	'rejected'		-- invalid event (batch function only): quarantined
);

CREATE TABLE received_orders.received_orders (
	order_id uuid PRIMARY KEY,
	external_reference text NOT NULL,
	payload jsonb NOT NULL,
	received_at timestamptz NOT NULL DEFAULT pg_catalog.now()
);

COMMENT ON TABLE received_orders.received_orders IS
	'One row per OrderReceived event, keyed by its orderId; written only by received_orders functions';

CREATE TABLE received_orders.received_orders_quarantine (
	id bigserial PRIMARY KEY,
	kafka_topic text,
	kafka_partition integer,
	kafka_offset bigint,
	kafka_key bytea,
	raw_value bytea,
	order_id uuid,
	outcome received_orders.materialize_outcome NOT NULL,
	sqlstate text NOT NULL,
	reason text NOT NULL,
	quarantined_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	CONSTRAINT received_orders_quarantine_coordinates_key
		UNIQUE (kafka_topic, kafka_partition, kafka_offset),
	CONSTRAINT received_orders_quarantine_outcome_check
		CHECK (outcome OPERATOR(pg_catalog.=) ANY
			   (ARRAY['rejected', 'conflict']::received_orders.materialize_outcome[]))
);

COMMENT ON TABLE received_orders.received_orders_quarantine IS
	'Rejected and conflicting Kafka messages, raw bytes and coordinates kept; see replay_quarantined()';

-- pg_dump skips an extension's tables unless they are marked as configuration.
SELECT pg_catalog.pg_extension_config_dump('received_orders.received_orders', '');
SELECT pg_catalog.pg_extension_config_dump('received_orders.received_orders_quarantine', '');
SELECT pg_catalog.pg_extension_config_dump('received_orders.received_orders_quarantine_id_seq', '');

-- Nobody but the owner touches the tables directly; the functions below are
-- the only way in.
REVOKE ALL ON received_orders.received_orders FROM PUBLIC;
REVOKE ALL ON received_orders.received_orders_quarantine FROM PUBLIC;
REVOKE ALL ON SEQUENCE received_orders.received_orders_quarantine_id_seq FROM PUBLIC;

CREATE FUNCTION received_orders.materialize_order(event jsonb)
RETURNS received_orders.materialize_outcome
AS 'MODULE_PATHNAME', 'materialize_order'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

REVOKE EXECUTE ON FUNCTION received_orders.materialize_order(jsonb) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.materialize_order(jsonb) IS
	'Validate one OrderReceived event and insert it unless its orderId is already stored';

CREATE FUNCTION received_orders.materialize_orders(
	kafka_values bytea[],
	kafka_topics text[] DEFAULT NULL,
	kafka_partitions integer[] DEFAULT NULL,
	kafka_offsets bigint[] DEFAULT NULL,
	kafka_keys bytea[] DEFAULT NULL)
RETURNS TABLE (
	"position" integer,
	order_id uuid,
	outcome received_orders.materialize_outcome,
	sqlstate text,
	message text)
AS 'MODULE_PATHNAME', 'materialize_orders'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
ROWS 1000;

REVOKE EXECUTE ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) IS
	'Materialize a batch of raw Kafka values; quarantine the rejected and conflicting ones; one result row per element';

CREATE FUNCTION received_orders.replay_quarantined(id bigint)
RETURNS received_orders.materialize_outcome
AS 'MODULE_PATHNAME', 'replay_quarantined'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

REVOKE EXECUTE ON FUNCTION received_orders.replay_quarantined(bigint) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.replay_quarantined(bigint) IS
	'Re-validate a quarantined message, materialize it and remove it from quarantine';
