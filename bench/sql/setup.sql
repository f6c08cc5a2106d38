-- bench/sql/setup.sql — fixtures of the extension benchmark (bench/extension).
--
-- bench.event(n) renders the n-th event (~300 bytes of JSON); its orderId is
-- md5(n)::uuid, so an event number names its order and a repeated number is a
-- redelivery.  bench.event_number(i) maps the i-th event of a stream to an
-- event number with 20 % redeliveries of earlier events.

CREATE SCHEMA bench;

CREATE FUNCTION bench.event(n bigint) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
	SELECT pg_catalog.format(
		'{"orderId":"%s","externalReference":"EXT-%s","eventType":"OrderReceived",'
		'"occurredAt":"2026-12-01T10:%s:00Z","customerId":"CUST-%s","currency":"EUR",'
		'"total":%s.95,"channel":"web","items":[{"sku":"SKU-%s","quantity":2,"unitPrice":19.95},'
		'{"sku":"SKU-%s","quantity":1,"unitPrice":%s.05}],"shipping":{"country":"DE","zip":"10115"}}',
		pg_catalog.md5(n::text)::uuid, n, pg_catalog.lpad((n % 60)::text, 2, '0'),
		n % 9973, n % 500, n % 1000, (n + 7) % 1000, n % 90)
$$;

CREATE FUNCTION bench.event_number(i bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
	-- every fifth event repeats an earlier one
	SELECT CASE WHEN i % 5 = 0 AND i > 5 THEN (i * 7919) % (i - 1) + 1 ELSE i END
$$;

-- The PL/pgSQL equivalent of received_orders.materialize_order: the same
-- rules and outcomes, written the way a team would without the extension.
CREATE FUNCTION bench.materialize_order_plpgsql(event jsonb)
RETURNS received_orders.materialize_outcome
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	id uuid;
	ref text;
	stored text;
BEGIN
	IF event IS NULL THEN
		RAISE EXCEPTION 'event must not be null' USING ERRCODE = '22004';
	END IF;
	IF pg_catalog.jsonb_typeof(event) <> 'object' THEN
		RAISE EXCEPTION 'event is not a JSON object' USING ERRCODE = '22023';
	END IF;
	IF pg_catalog.jsonb_typeof(event -> 'orderId') IS DISTINCT FROM 'string' THEN
		RAISE EXCEPTION 'field "orderId" is missing or not a string' USING ERRCODE = '22023';
	END IF;
	id := (event ->> 'orderId')::uuid;
	IF pg_catalog.jsonb_typeof(event -> 'externalReference') IS DISTINCT FROM 'string' THEN
		RAISE EXCEPTION 'field "externalReference" is missing or not a string' USING ERRCODE = '22023';
	END IF;
	ref := event ->> 'externalReference';
	IF pg_catalog.btrim(ref) = '' THEN
		RAISE EXCEPTION 'field "externalReference" is blank' USING ERRCODE = '22023';
	END IF;
	IF pg_catalog.length(ref) > 255 THEN
		RAISE EXCEPTION 'field "externalReference" is longer than 255 characters' USING ERRCODE = '22001';
	END IF;
	INSERT INTO received_orders.received_orders (order_id, external_reference, payload)
	VALUES (id, ref, event)
	ON CONFLICT (order_id) DO NOTHING;
	IF FOUND THEN
		RETURN 'inserted';
	END IF;
	SELECT r.external_reference INTO stored
	  FROM received_orders.received_orders r WHERE r.order_id = id;
	IF stored = ref THEN
		RETURN 'duplicate';
	END IF;
	RETURN 'conflict';
END
$$;

-- Batches of 1,000 raw values for materialize_orders, and the same events as
-- rows of a staging table for the server-side ceiling.
-- Rows of the ceilings: the events parsed already (jsonb), and as received
-- (text, parsed by the statement, as the feeder's values must be).
-- EXTERNAL storage: a batch reaches the function uncompressed, as the
-- feeder's binary parameter does.
CREATE TABLE bench.batches (batch_no bigint PRIMARY KEY, kafka_values bytea[] NOT NULL);
ALTER TABLE bench.batches ALTER COLUMN kafka_values SET STORAGE EXTERNAL;
CREATE TABLE bench.staging (payload jsonb NOT NULL);
CREATE TABLE bench.staging_text (payload text NOT NULL);
CREATE SEQUENCE bench.batch_seq;
