-- 13_schema_registry.sql — values framed by a Schema Registry
-- serializer.  The Schema Registry form of materialize_orders takes the
-- bytes as received and, per element, the JSON the feeder decoded (an Avro
-- value), the schema id, or the reason the feeder could not decode it; a
-- JSON Schema value's JSON is taken after its 5-byte frame.  The quarantine
-- keeps the framed bytes and the schema id, in the batch's transaction.
-- A stored row records the schema id of the framed value it came from
-- (value_schema_id), NULL for a JSON value.  An unframed value whose schema
-- a __value_schema_id header named comes with its GUID (value_schema_guids):
-- the quarantine keeps it (value_schema_guid) when the message is refused,
-- by the feeder or by the database; a stored row records no GUID.

BEGIN;
SELECT plan(38);

SET LOCAL client_min_messages = error;

-- One call of the Schema Registry form at offsets 0, 1, ... of topic t.
CREATE FUNCTION pg_temp.sr(t text, vals bytea[], decoded bytea[], ids integer[], errs text[],
                           guids uuid[] DEFAULT NULL)
RETURNS TABLE ("position" integer, order_id uuid, outcome text, sqlstate text, message text)
LANGUAGE sql AS $$
	SELECT r."position", r.order_id, r.outcome::text, r.sqlstate, r.message
	  FROM received_orders.materialize_orders('g-sr', vals,
			array_fill(t, ARRAY[cardinality(vals)]),
			array_fill(0, ARRAY[cardinality(vals)]),
			ARRAY(SELECT generate_series(0, cardinality(vals) - 1)::bigint),
			NULL, 'plain', NULL, NULL, NULL, NULL, decoded, ids, errs, guids) AS r
$$;

CREATE FUNCTION pg_temp.ev(id text, ref text) RETURNS bytea LANGUAGE sql AS $$
	SELECT convert_to(format('{"orderId":"%s","externalReference":"%s"}', id, ref), 'UTF8')
$$;

-- byte 0, the id as 4 big-endian bytes, the payload
CREATE FUNCTION pg_temp.frame(id integer, payload bytea) RETURNS bytea LANGUAGE sql AS $$
	SELECT '\x00'::bytea || int4send(id) || payload
$$;

SELECT has_function('received_orders', 'materialize_orders',
	ARRAY['text', 'bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]', 'text', 'text', 'text',
	      'bytea[]', 'bytea[]', 'bytea[]', 'integer[]', 'text[]', 'uuid[]'],
	'materialize_orders has the Schema Registry form (fifteen arguments)');
SELECT function_privs_are('received_orders', 'materialize_orders',
	ARRAY['text', 'bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]', 'text', 'text', 'text',
	      'bytea[]', 'bytea[]', 'bytea[]', 'integer[]', 'text[]', 'uuid[]'],
	'public', ARRAY[]::text[], 'PUBLIC cannot execute the Schema Registry form');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'value_schema_id', 'integer',
	'quarantine.value_schema_id is integer');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'value_schema_guid', 'uuid',
	'quarantine.value_schema_guid is uuid');

CREATE TEMP TABLE r AS
SELECT * FROM pg_temp.sr('sr.orders', ARRAY[
	-- 1 a JSON Schema value: the JSON after the frame
	pg_temp.frame(7, pg_temp.ev('22222222-0000-4000-8000-000000000001', 'S-1')),
	-- 2 an Avro value: its bytes as received, the feeder's JSON beside
	pg_temp.frame(8, '\x0203'::bytea),
	-- 3 a value the feeder could not decode (unknown schema id)
	pg_temp.frame(404, '\x01'::bytea),
	-- 4 not framed, nothing decoded
	pg_temp.ev('22222222-0000-4000-8000-000000000004', 'S-4'),
	-- 5 decoded, but not an event
	pg_temp.frame(8, '\x04'::bytea),
	-- 6 a tombstone
	NULL,
	-- 7 unframed Avro bytes whose schema a header named, not decodable:
	--   no id is read from its bytes
	'\x000000000701'::bytea],
	ARRAY[NULL, pg_temp.ev('22222222-0000-4000-8000-000000000002', 'S-2'), NULL, NULL,
	      convert_to('{"orderId":"nope"}', 'UTF8'), NULL, NULL],
	ARRAY[7, 8, 404, NULL, 8, NULL, NULL],
	ARRAY[NULL, NULL, 'schema id 404: the registry does not know it (40403 Schema not found)', NULL, NULL, NULL,
	      'schema guid 0b5e5d6a-0000-4000-8000-000000000001 is unknown to the Schema Registry']);

SELECT is((SELECT outcome FROM r WHERE "position" = 1), 'inserted', 'a JSON Schema value is the JSON after its frame');
SELECT is((SELECT payload FROM received_orders.received_orders
            WHERE order_id = '22222222-0000-4000-8000-000000000001'),
	'{"orderId":"22222222-0000-4000-8000-000000000001","externalReference":"S-1"}'::jsonb,
	'its payload is the JSON, without the frame');
SELECT is((SELECT outcome FROM r WHERE "position" = 2), 'inserted', 'an Avro value is its decoded JSON');
SELECT is((SELECT external_reference FROM received_orders.received_orders
            WHERE order_id = '22222222-0000-4000-8000-000000000002'), 'S-2',
	'the decoded JSON is what is stored');
SELECT results_eq($$SELECT outcome, sqlstate, message FROM r WHERE "position" = 3$$,
	$$VALUES ('rejected', '22P03', 'schema id 404: the registry does not know it (40403 Schema not found)')$$,
	'a value the feeder could not decode is rejected with its reason');
SELECT results_eq($$SELECT outcome, sqlstate FROM r WHERE "position" = 4$$,
	$$VALUES ('rejected', '22P03')$$, 'an unframed value is rejected');
SELECT matches((SELECT message FROM r WHERE "position" = 4), 'not framed by a Schema Registry serializer',
	'its reason says it is not framed');
SELECT results_eq($$SELECT outcome, sqlstate FROM r WHERE "position" = 5$$,
	$$VALUES ('rejected', '22P02')$$, 'a decoded value that is no valid event is rejected by the event rules');
SELECT is((SELECT outcome FROM r WHERE "position" = 6), 'skipped', 'a tombstone is skipped');
SELECT results_eq($$SELECT order_id, value_schema_id FROM received_orders.received_orders
                     WHERE order_id IN ('22222222-0000-4000-8000-000000000001', '22222222-0000-4000-8000-000000000002')
                     ORDER BY order_id$$,
	$$VALUES ('22222222-0000-4000-8000-000000000001'::uuid, 7), ('22222222-0000-4000-8000-000000000002'::uuid, 8)$$,
	'a stored row records the schema id of its framed value: the JSON Schema value''s 7, the Avro value''s 8');

-- no id from the caller: the frame's; a value a header's GUID named: none
SELECT results_eq($$SELECT "position", outcome FROM pg_temp.sr('sr.ids', ARRAY[
	pg_temp.frame(12, pg_temp.ev('22222222-0000-4000-8000-000000000006', 'S-6')),
	'\x0102'::bytea],
	ARRAY[NULL, pg_temp.ev('22222222-0000-4000-8000-000000000007', 'S-7')],
	ARRAY[NULL, NULL]::integer[], ARRAY[NULL, NULL]::text[])$$,
	$$VALUES (1, 'inserted'), (2, 'inserted')$$, 'a framed value without the feeder''s id, and a decoded one without any id, are stored');
SELECT results_eq($$SELECT order_id, value_schema_id FROM received_orders.received_orders
                     WHERE order_id IN ('22222222-0000-4000-8000-000000000006', '22222222-0000-4000-8000-000000000007')
                     ORDER BY order_id$$,
	$$VALUES ('22222222-0000-4000-8000-000000000006'::uuid, 12), ('22222222-0000-4000-8000-000000000007'::uuid, NULL)$$,
	'the first records its frame''s id, the one named by a header''s GUID none');

-- a JSON value, by every other form: no schema id
DO $$
BEGIN
	PERFORM received_orders.materialize_order(
		convert_from(pg_temp.ev('22222222-0000-4000-8000-000000000008', 'S-8'), 'UTF8')::jsonb);
	PERFORM received_orders.materialize_orders('g-json',
		ARRAY[pg_temp.ev('22222222-0000-4000-8000-000000000009', 'S-9')],
		ARRAY['json.orders'], ARRAY[0], ARRAY[0::bigint], NULL);
END $$;
SELECT results_eq($$SELECT count(*)::int FROM received_orders.received_orders
                     WHERE order_id IN ('22222222-0000-4000-8000-000000000008', '22222222-0000-4000-8000-000000000009')
                       AND value_schema_id IS NULL$$,
	ARRAY[2], 'a row stored from a JSON value has no value_schema_id (materialize_order, the batch function)');

-- the slow path (an insert that throws is retried by halves) records the ids too
CREATE FUNCTION pg_temp.boom() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.external_reference = 'S-BOOM' THEN
		RAISE check_violation USING MESSAGE = 'S-BOOM refused';
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER boom BEFORE INSERT ON received_orders.received_orders
	FOR EACH ROW EXECUTE FUNCTION pg_temp.boom();
SELECT results_eq($$SELECT "position", outcome, sqlstate FROM pg_temp.sr('sr.halves', ARRAY[
	pg_temp.frame(21, pg_temp.ev('22222222-0000-4000-8000-000000000010', 'S-10')),
	pg_temp.frame(22, pg_temp.ev('22222222-0000-4000-8000-000000000011', 'S-BOOM')),
	pg_temp.frame(23, '\x00'::bytea)],
	ARRAY[NULL, NULL, pg_temp.ev('22222222-0000-4000-8000-000000000012', 'S-12')],
	ARRAY[21, 22, 23], ARRAY[NULL, NULL, NULL]::text[])$$,
	$$VALUES (1, 'inserted', NULL), (2, 'rejected', '23514'), (3, 'inserted', NULL)$$,
	'an element whose insert throws is pinned by halves');
DROP TRIGGER boom ON received_orders.received_orders;
SELECT results_eq($$SELECT order_id, value_schema_id FROM received_orders.received_orders
                     WHERE order_id IN ('22222222-0000-4000-8000-000000000010', '22222222-0000-4000-8000-000000000012')
                     ORDER BY order_id$$,
	$$VALUES ('22222222-0000-4000-8000-000000000010'::uuid, 21), ('22222222-0000-4000-8000-000000000012'::uuid, 23)$$,
	'the rows the halves stored record their schema ids');

SELECT results_eq($$SELECT kafka_offset, raw_value, value_schema_id FROM received_orders.received_orders_quarantine
                     WHERE kafka_topic = 'sr.orders' ORDER BY kafka_offset$$,
	$$VALUES (2::bigint, '\x000000019401'::bytea, 404),
	         (3::bigint, pg_temp.ev('22222222-0000-4000-8000-000000000004', 'S-4'), NULL),
	         (4::bigint, '\x000000000804'::bytea, 8),
	         (6::bigint, '\x000000000701'::bytea, NULL)$$,
	'the quarantine keeps the bytes as received and the schema id the feeder read (none for a header''s GUID)');
SELECT is((SELECT count(*)::int FROM received_orders.received_orders_quarantine
            WHERE kafka_topic = 'sr.orders' AND value_schema_guid IS NULL), 4,
	'without value_schema_guids, no quarantine row has a value_schema_guid');

-- values a __value_schema_id header named by GUID: unframed, decoded by the
-- feeder, their GUID beside them
SELECT results_eq($$SELECT "position", outcome, sqlstate FROM pg_temp.sr('sr.guid', ARRAY[
	-- 1 unframed Avro bytes, decoded into an event the rules refuse
	'\x0a0b'::bytea,
	-- 2 an unframed JSON Schema value, a valid event
	pg_temp.ev('22222222-0000-4000-8000-000000000014', 'S-14'),
	-- 3 unframed Avro bytes decoded into an order stored under another reference
	'\x0c0d'::bytea,
	-- 4 a framed value, no GUID, rejected by the rules
	pg_temp.frame(9, '\x0e'::bytea),
	-- 5 a GUID the feeder could not resolve
	'\x0f'::bytea,
	-- 6 an unframed JSON Schema value without externalReference
	convert_to('{"orderId":"22222222-0000-4000-8000-000000000015"}', 'UTF8')],
	ARRAY[convert_to('{"orderId":"","externalReference":"S-G1"}', 'UTF8'),
	      pg_temp.ev('22222222-0000-4000-8000-000000000014', 'S-14'),
	      pg_temp.ev('22222222-0000-4000-8000-000000000001', 'S-OTHER'),
	      convert_to('{"orderId":"nope"}', 'UTF8'),
	      NULL,
	      convert_to('{"orderId":"22222222-0000-4000-8000-000000000015"}', 'UTF8')],
	ARRAY[NULL, NULL, NULL, 9, NULL, NULL]::integer[],
	ARRAY[NULL, NULL, NULL, NULL, 'schema guid 0b5e5d6a-0000-4000-8000-000000000005 is unknown to the Schema Registry', NULL],
	ARRAY['0b5e5d6a-0000-4000-8000-000000000001', '0b5e5d6a-0000-4000-8000-000000000002',
	      '0b5e5d6a-0000-4000-8000-000000000003', NULL,
	      '0b5e5d6a-0000-4000-8000-000000000005', '0b5e5d6a-0000-4000-8000-000000000006']::uuid[])$$,
	$$VALUES (1, 'rejected', '22P02'), (2, 'inserted', NULL), (3, 'conflict', '23505'),
	         (4, 'rejected', '22P02'), (5, 'rejected', '22P03'), (6, 'rejected', '22023')$$,
	'values named by GUID go through the event rules like framed ones');
SELECT results_eq($$SELECT kafka_offset, outcome::text, raw_value, value_schema_id, value_schema_guid
                     FROM received_orders.received_orders_quarantine
                     WHERE kafka_topic = 'sr.guid' ORDER BY kafka_offset$$,
	$$VALUES (0::bigint, 'rejected', '\x0a0b'::bytea, NULL::integer, '0b5e5d6a-0000-4000-8000-000000000001'::uuid),
	         (2::bigint, 'conflict', '\x0c0d'::bytea, NULL, '0b5e5d6a-0000-4000-8000-000000000003'),
	         (3::bigint, 'rejected', '\x00000000090e'::bytea, 9, NULL),
	         (4::bigint, 'rejected', '\x0f'::bytea, NULL, '0b5e5d6a-0000-4000-8000-000000000005'),
	         (5::bigint, 'rejected', convert_to('{"orderId":"22222222-0000-4000-8000-000000000015"}', 'UTF8'),
	          NULL, '0b5e5d6a-0000-4000-8000-000000000006')$$,
	'a message named by GUID that the database refused (event rules, a conflict) or the feeder could not decode keeps its GUID beside the bytes as received; a framed one has none');
SELECT results_eq($$SELECT external_reference, value_schema_id FROM received_orders.received_orders
                     WHERE order_id = '22222222-0000-4000-8000-000000000014'$$,
	$$VALUES ('S-14', NULL::integer)$$, 'a row stored from a value named by GUID has no schema id');
SELECT is((SELECT next_offset FROM received_orders.consumer_positions('g-sr') WHERE kafka_topic = 'sr.orders'), 7::bigint,
	'the positions are recorded as by the other forms');

-- a redelivery of the batch: stored and quarantined once
SELECT results_eq($$SELECT "position", outcome FROM pg_temp.sr('sr.orders', ARRAY[
	pg_temp.frame(7, pg_temp.ev('22222222-0000-4000-8000-000000000001', 'S-1')),
	pg_temp.frame(8, '\x0203'::bytea), pg_temp.frame(404, '\x01'::bytea)],
	ARRAY[NULL, pg_temp.ev('22222222-0000-4000-8000-000000000002', 'S-2'), NULL],
	ARRAY[7, 8, 404],
	ARRAY[NULL, NULL, 'schema id 404: the registry does not know it (40403 Schema not found)'])$$,
	$$VALUES (1, 'duplicate'), (2, 'duplicate'), (3, 'rejected')$$,
	'a redelivery finds the decoded events stored');
SELECT is((SELECT count(*)::int FROM received_orders.received_orders_quarantine
            WHERE kafka_topic = 'sr.orders'), 4, 'and quarantines nothing twice');

-- replay: a JSON Schema row replays from its framed bytes once repaired;
-- an Avro row cannot be decoded by a backend
SELECT results_eq($$SELECT outcome, sqlstate FROM pg_temp.sr('sr.replay',
	ARRAY[pg_temp.frame(7, convert_to('{"orderId":"22222222-0000-4000-8000-000000000005"}', 'UTF8'))],
	ARRAY[NULL::bytea], ARRAY[7], ARRAY[NULL::text])$$,
	$$VALUES ('rejected', '22023')$$, 'a JSON Schema event without externalReference is rejected');
UPDATE received_orders.received_orders_quarantine
   SET raw_value = pg_temp.frame(7, pg_temp.ev('22222222-0000-4000-8000-000000000005', 'S-5'))
 WHERE kafka_topic = 'sr.replay';
SELECT is((SELECT received_orders.replay_quarantined(id)::text FROM received_orders.received_orders_quarantine
            WHERE kafka_topic = 'sr.replay'), 'inserted',
	'the repaired framed JSON Schema value replays (its JSON after the frame)');
SELECT results_eq($$SELECT external_reference, value_schema_id FROM received_orders.received_orders
                     WHERE order_id = '22222222-0000-4000-8000-000000000005'$$,
	$$VALUES ('S-5', 7)$$, 'and is stored with the quarantine row''s schema id');
SELECT throws_ok(format('SELECT received_orders.replay_quarantined(%s)',
	(SELECT id FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'sr.orders' AND kafka_offset = 4)),
	'22P02', NULL, 'an Avro row replays only once its raw_value holds the event''s JSON');
UPDATE received_orders.received_orders_quarantine
   SET raw_value = pg_temp.ev('22222222-0000-4000-8000-000000000013', 'S-13'), value_schema_id = NULL
 WHERE kafka_topic = 'sr.orders' AND kafka_offset = 4;
SELECT is((SELECT received_orders.replay_quarantined(id)::text FROM received_orders.received_orders_quarantine
            WHERE kafka_topic = 'sr.orders' AND kafka_offset = 4), 'inserted',
	'an Avro row replays once an operator put the event''s JSON in raw_value and cleared value_schema_id');
SELECT results_eq($$SELECT external_reference, value_schema_id FROM received_orders.received_orders
                     WHERE order_id = '22222222-0000-4000-8000-000000000013'$$,
	$$VALUES ('S-13', NULL::integer)$$, 'and is stored without a schema id (its value is JSON now)');

-- replay of a row named by GUID: its value is unframed; an Avro one
-- replays once its JSON is in raw_value, a JSON Schema one as received
CREATE FUNCTION pg_temp.replay_hint(q bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	h text;
BEGIN
	PERFORM received_orders.replay_quarantined(q);
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT;
	RETURN SQLSTATE || ' ' || h;
END $$;
SELECT is(pg_temp.replay_hint((SELECT id FROM received_orders.received_orders_quarantine
                                WHERE kafka_topic = 'sr.guid' AND kafka_offset = 0)),
	format('22P02 Quarantined message %s is a Schema Registry value whose schema a __value_schema_id header named (schema GUID 0b5e5d6a-0000-4000-8000-000000000001): a JSON Schema value replays as received; for an Avro value, set raw_value to the event''s JSON and value_schema_guid to NULL, then replay it; nothing was changed.',
	       (SELECT id FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'sr.guid' AND kafka_offset = 0)),
	'an Avro row named by GUID does not replay its Avro bytes; the hint names the GUID and what to do');
UPDATE received_orders.received_orders_quarantine
   SET raw_value = pg_temp.ev('22222222-0000-4000-8000-000000000016', 'S-16'), value_schema_guid = NULL
 WHERE kafka_topic = 'sr.guid' AND kafka_offset = 0;
SELECT is((SELECT received_orders.replay_quarantined(id)::text FROM received_orders.received_orders_quarantine
            WHERE kafka_topic = 'sr.guid' AND kafka_offset = 0), 'inserted',
	'it replays once an operator put the event''s JSON in raw_value and cleared value_schema_guid');
UPDATE received_orders.received_orders_quarantine
   SET raw_value = pg_temp.ev('22222222-0000-4000-8000-000000000015', 'S-15')
 WHERE kafka_topic = 'sr.guid' AND kafka_offset = 5;
SELECT is((SELECT received_orders.replay_quarantined(id)::text FROM received_orders.received_orders_quarantine
            WHERE kafka_topic = 'sr.guid' AND kafka_offset = 5), 'inserted',
	'a repaired JSON Schema row named by GUID replays as it is (its value is unframed JSON)');
SELECT results_eq($$SELECT order_id, external_reference, value_schema_id FROM received_orders.received_orders
                     WHERE order_id IN ('22222222-0000-4000-8000-000000000015', '22222222-0000-4000-8000-000000000016')
                     ORDER BY order_id$$,
	$$VALUES ('22222222-0000-4000-8000-000000000015'::uuid, 'S-15', NULL::integer),
	         ('22222222-0000-4000-8000-000000000016'::uuid, 'S-16', NULL::integer)$$,
	'the replayed rows record no schema id (a GUID is none)');
SELECT is(pg_temp.replay_hint((SELECT id FROM received_orders.received_orders_quarantine
                                WHERE kafka_topic = 'sr.guid' AND kafka_offset = 4)),
	format('22P02 Quarantined message %s is a Schema Registry value whose schema a __value_schema_id header named (schema GUID 0b5e5d6a-0000-4000-8000-000000000005): a JSON Schema value replays as received; for an Avro value, set raw_value to the event''s JSON and value_schema_guid to NULL, then replay it; nothing was changed.',
	       (SELECT id FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'sr.guid' AND kafka_offset = 4)),
	'a row the feeder refused by GUID keeps it for the operator, and the hint names it');

SELECT * FROM finish();
ROLLBACK;
