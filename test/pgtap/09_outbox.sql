-- 09_outbox.sql — outbox topics.  The outbox form of
-- materialize_orders opens each value in the envelope of the relay that
-- published it and materializes only the selected event type.
--
-- Fixtures are written as each relay emits them:
-- - Debezium's outbox event router through Kafka Connect's JsonConverter:
--   the payload column as an object (expanded) or a JSON string, bare
--   (schemas.enable=false) or under {"schema": ..., "payload": ...}
--   (schemas.enable=true); the type in the header eventType
--   (table.fields.additional.placement=type:header:eventType).
-- - CloudEvents' Kafka protocol binding: binary mode (the event as the
--   value, the type in the ce_type header) and structured mode
--   (content-type application/cloudevents+json, "data" or "data_base64").

BEGIN;
SELECT plan(67);

SET LOCAL client_min_messages = error;

-- One call of the outbox form: values with their type headers and
-- content-types, at offsets 0, 1, ... of topic t (partition 0), group g.
CREATE FUNCTION pg_temp.ob(envelope text, event_type text, type_header text,
						   t text, vals bytea[], types bytea[], cts bytea[] DEFAULT NULL)
RETURNS TABLE ("position" integer, order_id uuid, outcome text, sqlstate text, message text)
LANGUAGE sql AS $$
	SELECT r."position", r.order_id, r.outcome::text, r.sqlstate, r.message
	  FROM received_orders.materialize_orders('g-outbox', vals,
			array_fill(t, ARRAY[cardinality(vals)]),
			array_fill(0, ARRAY[cardinality(vals)]),
			ARRAY(SELECT generate_series(0, cardinality(vals) - 1)::bigint),
			NULL, envelope, event_type, type_header, types, cts) AS r
$$;

CREATE FUNCTION pg_temp.ev(id text, ref text) RETURNS text LANGUAGE sql AS $$
	SELECT format('{"orderId":"%s","externalReference":"%s","lines":[{"sku":"A-1","quantity":2}]}', id, ref)
$$;

CREATE FUNCTION pg_temp.b(s text) RETURNS bytea LANGUAGE sql AS $$ SELECT convert_to(s, 'UTF8') $$;

CREATE FUNCTION pg_temp.stored(id text) RETURNS text LANGUAGE sql AS $$
	SELECT external_reference FROM received_orders.received_orders WHERE order_id = id::uuid
$$;

-- Debezium ----------------------------------------------------------------------------

CREATE TEMP TABLE dbz AS
SELECT * FROM pg_temp.ob('debezium', 'OrderReceived', 'eventType', 'outbox.event.Order', ARRAY[
	-- 1 expanded payload, no schema
	pg_temp.b(pg_temp.ev('11111111-0000-4000-8000-000000000001', 'D-1')),
	-- 2 payload column as a JSON string, no schema
	pg_temp.b(to_json(pg_temp.ev('11111111-0000-4000-8000-000000000002', 'D-2'))::text),
	-- 3 string payload under the schema wrapper
	pg_temp.b('{"schema":{"type":"string","optional":false},"payload":'
		|| to_json(pg_temp.ev('11111111-0000-4000-8000-000000000003', 'D-3'))::text || '}'),
	-- 4 expanded payload under the schema wrapper
	pg_temp.b('{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"orderId"},'
		|| '{"type":"string","optional":false,"field":"externalReference"}],"optional":false,"name":"OrderReceived"},"payload":'
		|| pg_temp.ev('11111111-0000-4000-8000-000000000004', 'D-4') || '}'),
	-- 5 another event type of the aggregate
	pg_temp.b('{"orderId":"11111111-0000-4000-8000-000000000001","paidAt":"2026-12-03T10:00:00Z"}'),
	-- 6 no type header
	pg_temp.b(pg_temp.ev('11111111-0000-4000-8000-000000000006', 'D-6')),
	-- 7 the wrapper without its payload
	pg_temp.b('{"schema":{"type":"string","optional":false}}'),
	-- 8 a payload that is a number
	pg_temp.b('{"schema":{"type":"int64"},"payload":42}'),
	-- 9 a string payload that is not JSON
	pg_temp.b('"{\"orderId\": oops"'),
	-- 10 an array
	pg_temp.b('[1,2]'),
	-- 11 the payload given twice
	pg_temp.b('{"schema":{},"payload":' || to_json(pg_temp.ev('11111111-0000-4000-8000-000000000011', 'D-11'))::text
		|| ',"payload":"{}"}'),
	-- 12 a tombstone of the selected type
	NULL,
	-- 13 a tombstone of another type (left out by the feeder)
	NULL,
	-- 14 the event inside the string payload is invalid (blank externalReference)
	pg_temp.b('{"schema":{"type":"string"},"payload":'
		|| to_json(pg_temp.ev('11111111-0000-4000-8000-000000000014', ' '))::text || '}'),
	-- 15 a type header that is not UTF-8
	pg_temp.b('{}')
], ARRAY[
	'OrderReceived', 'OrderReceived', 'OrderReceived', 'OrderReceived', 'OrderPaid', NULL,
	'OrderReceived', 'OrderReceived', 'OrderReceived', 'OrderReceived', 'OrderReceived',
	'OrderReceived', 'OrderCancelled', 'OrderReceived', '\xff'
]::bytea[], ARRAY[NULL, NULL, NULL, NULL, NULL, NULL, '\xfe', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL]::bytea[]);

SELECT is((SELECT count(*) FROM dbz), 15::bigint, 'debezium: one result row per element');
SELECT results_eq('SELECT "position", outcome FROM dbz WHERE "position" <= 4 ORDER BY 1',
	$$VALUES (1, 'inserted'), (2, 'inserted'), (3, 'inserted'), (4, 'inserted')$$,
	'debezium: the event as an object or a JSON string, bare or under the schema wrapper, is inserted');
SELECT is(ARRAY[pg_temp.stored('11111111-0000-4000-8000-000000000001'), pg_temp.stored('11111111-0000-4000-8000-000000000002'),
		pg_temp.stored('11111111-0000-4000-8000-000000000003'), pg_temp.stored('11111111-0000-4000-8000-000000000004')],
	ARRAY['D-1', 'D-2', 'D-3', 'D-4'], 'debezium: each stored with its externalReference');
SELECT is((SELECT payload FROM received_orders.received_orders WHERE order_id = '11111111-0000-4000-8000-000000000003'),
	pg_temp.ev('11111111-0000-4000-8000-000000000003', 'D-3')::jsonb,
	'debezium: the payload stored is the event, not the envelope');
SELECT is((SELECT payload FROM received_orders.received_orders WHERE order_id = '11111111-0000-4000-8000-000000000004'),
	pg_temp.ev('11111111-0000-4000-8000-000000000004', 'D-4')::jsonb,
	'debezium: the expanded payload stored is the event');
SELECT is((SELECT outcome || ' ' || coalesce(sqlstate, '-') || ' ' || message FROM dbz WHERE "position" = 5),
	'skipped - event type "OrderPaid" is not selected (event_type "OrderReceived")',
	'debezium: another event type is skipped, saying why');
SELECT is((SELECT outcome || ' ' || sqlstate || ' ' || message FROM dbz WHERE "position" = 6),
	'rejected 22023 header "eventType" is missing: the message''s type cannot be told (event_type "OrderReceived")',
	'debezium: a message without the type header is rejected, naming the header');
SELECT is((SELECT outcome || ' ' || sqlstate || ' ' || message FROM dbz WHERE "position" = 7),
	'rejected 22023 envelope debezium: "payload" is missing (the value has "schema", so it is Kafka Connect''s {"schema", "payload"} wrapper)',
	'debezium: a wrapper without "payload" is rejected, saying so');
SELECT is((SELECT outcome || ' ' || sqlstate || ' ' || message FROM dbz WHERE "position" = 8),
	'rejected 22023 envelope debezium: "payload" is a number, not the event object or a JSON string holding it',
	'debezium: a payload of the wrong kind is rejected');
SELECT is((SELECT outcome || ' ' || sqlstate || ' ' || split_part(message, ':', 1) FROM dbz WHERE "position" = 9),
	'rejected 22P02 event is not valid JSON', 'debezium: a string payload that is not JSON is rejected as invalid JSON');
SELECT is((SELECT outcome || ' ' || sqlstate || ' ' || message FROM dbz WHERE "position" = 10),
	'rejected 22023 envelope debezium: the value is an array, not the event object, a JSON string holding it, or a {"schema", "payload"} wrapper',
	'debezium: an array is rejected');
SELECT is((SELECT outcome || ' ' || sqlstate || ' ' || message FROM dbz WHERE "position" = 11),
	'rejected 22023 envelope debezium: "payload" is given more than once',
	'debezium: a payload given twice is rejected (which one was meant cannot be told)');
SELECT is(pg_temp.stored('11111111-0000-4000-8000-000000000011'), NULL, 'and neither was stored');
SELECT results_eq('SELECT outcome, message FROM dbz WHERE "position" IN (12, 13) ORDER BY "position"',
	$$VALUES ('skipped', NULL), ('skipped', 'event type "OrderCancelled" is not selected (event_type "OrderReceived")')$$,
	'debezium: a tombstone is skipped; a left-out message of another type is skipped with its reason');
SELECT is((SELECT outcome || ' ' || sqlstate || ' ' || split_part(message, ':', 1) FROM dbz WHERE "position" = 14),
	'rejected 22023 field "externalReference" is blank',
	'debezium: the event inside the envelope is judged by the one validator');
SELECT is((SELECT outcome || ' ' || message FROM dbz WHERE "position" = 15),
	'skipped event type \xff (not valid UTF-8) is not selected (event_type "OrderReceived")',
	'debezium: a type header that is not UTF-8 is another type, shown in hex');

-- the quarantine keeps the message as received, with its envelope and headers
SELECT is((SELECT count(*) FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'outbox.event.Order'),
	7::bigint, 'debezium: the seven rejected messages are quarantined, nothing else');
SELECT is((SELECT raw_value FROM received_orders.received_orders_quarantine
		WHERE kafka_topic = 'outbox.event.Order' AND kafka_offset = 6),
	pg_temp.b('{"schema":{"type":"string","optional":false}}'), 'the quarantine keeps the bytes as received');
SELECT is((SELECT envelope || ' ' || kafka_headers::text FROM received_orders.received_orders_quarantine
		WHERE kafka_topic = 'outbox.event.Order' AND kafka_offset = 6),
	'debezium {"eventType": "OrderReceived", "content-type": "\\xfe"}',
	'with its envelope and the headers that identified it (hex when not UTF-8)');
SELECT is((SELECT envelope || ' ' || coalesce(kafka_headers::text, 'no headers')
		FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'outbox.event.Order' AND kafka_offset = 5),
	'debezium no headers', 'a message without headers is quarantined with none');
SELECT is((SELECT next_offset FROM received_orders.consumer_positions('g-outbox') WHERE kafka_topic = 'outbox.event.Order'),
	15::bigint, 'debezium: skipped and rejected messages count in the position');

-- replay opens the repaired row in its envelope
UPDATE received_orders.received_orders_quarantine
   SET raw_value = pg_temp.b('{"schema":{"type":"string"},"payload":'
		|| to_json(pg_temp.ev('11111111-0000-4000-8000-000000000014', 'D-14 repaired'))::text || '}')
 WHERE kafka_topic = 'outbox.event.Order' AND kafka_offset = 13;
SELECT is(received_orders.replay_quarantined(
		(SELECT id FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'outbox.event.Order' AND kafka_offset = 13))::text,
	'inserted', 'replay of a repaired Debezium message opens its envelope: inserted');
SELECT is(pg_temp.stored('11111111-0000-4000-8000-000000000014'), 'D-14 repaired', 'the event inside it is stored');
SELECT is((SELECT count(*) FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'outbox.event.Order' AND kafka_offset = 13),
	0::bigint, 'and its quarantine row is gone');
SELECT throws_ok(format('SELECT received_orders.replay_quarantined(%s)',
		(SELECT id FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'outbox.event.Order' AND kafka_offset = 7)),
	'22023', 'envelope debezium: "payload" is a number, not the event object or a JSON string holding it',
	'replay of a broken envelope refuses with the same reason');

-- CloudEvents ------------------------------------------------------------------------

CREATE TEMP TABLE ce AS
SELECT * FROM pg_temp.ob('cloudevents', 'com.example.OrderReceived', NULL, 'orders.ce', ARRAY[
	-- 1 binary mode: the event is the value
	pg_temp.b(pg_temp.ev('22222222-0000-4000-8000-000000000001', 'C-1')),
	-- 2 binary mode, another type
	pg_temp.b('{"orderId":"22222222-0000-4000-8000-000000000001"}'),
	-- 3 structured mode, data
	pg_temp.b('{"specversion":"1.0","type":"com.example.OrderReceived","source":"/orders","id":"A-3",'
		|| '"time":"2026-12-03T10:00:00Z","datacontenttype":"application/json","data":'
		|| pg_temp.ev('22222222-0000-4000-8000-000000000003', 'C-3') || '}'),
	-- 4 structured mode, another type
	pg_temp.b('{"specversion":"1.0","type":"com.example.OrderCancelled","source":"/orders","id":"A-4","data":{"orderId":"22222222-0000-4000-8000-000000000003"}}'),
	-- 5 structured mode, data_base64
	pg_temp.b('{"specversion":"1.0","type":"com.example.OrderReceived","source":"/orders","id":"A-5","data_base64":"'
		|| translate(encode(pg_temp.b(pg_temp.ev('22222222-0000-4000-8000-000000000005', 'C-5')), 'base64'), E'\n', '') || '"}'),
	-- 6 structured mode without type
	pg_temp.b('{"specversion":"1.0","source":"/orders","id":"A-6","data":{}}'),
	-- 7 structured mode without data
	pg_temp.b('{"specversion":"1.0","type":"com.example.OrderReceived","source":"/orders","id":"A-7"}'),
	-- 8 structured mode with both
	pg_temp.b('{"specversion":"1.0","type":"com.example.OrderReceived","id":"A-8","data":{},"data_base64":"e30="}'),
	-- 9 structured mode, data_base64 that is not base64
	pg_temp.b('{"specversion":"1.0","type":"com.example.OrderReceived","id":"A-9","data_base64":"***"}'),
	-- 10 structured mode without specversion
	pg_temp.b('{"type":"com.example.OrderReceived","id":"A-10","data":{}}'),
	-- 11 binary mode without ce_type
	pg_temp.b(pg_temp.ev('22222222-0000-4000-8000-000000000011', 'C-11')),
	-- 12 structured mode, an invalid event inside
	pg_temp.b('{"specversion":"1.0","type":"com.example.OrderReceived","source":"/orders","id":"A-12","data":{"orderId":"not-a-uuid","externalReference":"C-12"}}')
], ARRAY['com.example.OrderReceived', 'com.example.OrderCancelled', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL]::bytea[],
ARRAY['application/json', 'application/json', 'application/cloudevents+json; charset=UTF-8', 'application/cloudevents+json',
	'Application/CloudEvents+JSON', 'application/cloudevents+json', 'application/cloudevents+json', 'application/cloudevents+json',
	'application/cloudevents+json', 'application/cloudevents+json', NULL, 'application/cloudevents+json']::bytea[]);

SELECT is((SELECT count(*) FROM ce), 12::bigint, 'cloudevents: one result row per element');
SELECT results_eq('SELECT "position", outcome FROM ce WHERE "position" IN (1, 3, 5) ORDER BY 1',
	$$VALUES (1, 'inserted'), (3, 'inserted'), (5, 'inserted')$$,
	'cloudevents: binary mode, structured mode with data and with data_base64 are inserted');
SELECT is(ARRAY[pg_temp.stored('22222222-0000-4000-8000-000000000001'), pg_temp.stored('22222222-0000-4000-8000-000000000003'),
		pg_temp.stored('22222222-0000-4000-8000-000000000005')],
	ARRAY['C-1', 'C-3', 'C-5'], 'cloudevents: each stored with its externalReference');
SELECT is((SELECT payload FROM received_orders.received_orders WHERE order_id = '22222222-0000-4000-8000-000000000003'),
	pg_temp.ev('22222222-0000-4000-8000-000000000003', 'C-3')::jsonb, 'cloudevents: the payload stored is the data');
SELECT is((SELECT outcome || ' ' || message FROM ce WHERE "position" = 2),
	'skipped event type "com.example.OrderCancelled" is not selected (event_type "com.example.OrderReceived")',
	'cloudevents binary: another ce_type is skipped');
SELECT is((SELECT outcome || ' ' || message FROM ce WHERE "position" = 4),
	'skipped event type "com.example.OrderCancelled" is not selected (event_type "com.example.OrderReceived")',
	'cloudevents structured: another type attribute is skipped');
SELECT results_eq('SELECT outcome, sqlstate, message FROM ce WHERE "position" BETWEEN 6 AND 11 ORDER BY "position"',
	$$VALUES ('rejected', '22023', 'envelope cloudevents: "type" is missing'),
		('rejected', '22023', 'envelope cloudevents: "data" is missing (and there is no "data_base64")'),
		('rejected', '22023', 'envelope cloudevents: both "data" and "data_base64" are present'),
		('rejected', '22P02', 'envelope cloudevents: "data_base64" is not valid base64'),
		('rejected', '22023', 'envelope cloudevents: "specversion" is missing'),
		('rejected', '22023', 'header "ce_type" is missing: the message''s type cannot be told (event_type "com.example.OrderReceived")')$$,
	'cloudevents: broken envelopes and a missing ce_type are rejected with what is wrong');
SELECT is((SELECT outcome || ' ' || sqlstate FROM ce WHERE "position" = 12), 'rejected 22P02',
	'cloudevents: an invalid event inside is rejected by the validator');
SELECT is((SELECT kafka_headers FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders.ce' AND kafka_offset = 11),
	'{"content-type": "application/cloudevents+json"}'::jsonb, 'cloudevents: the quarantine keeps the content-type');
SELECT is((SELECT kafka_headers FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders.ce' AND kafka_offset = 10),
	NULL::jsonb, 'a binary message without headers keeps none');

UPDATE received_orders.received_orders_quarantine
   SET raw_value = pg_temp.b('{"specversion":"1.0","type":"com.example.OrderReceived","source":"/orders","id":"A-12","data":'
		|| pg_temp.ev('22222222-0000-4000-8000-000000000012', 'C-12') || '}')
 WHERE kafka_topic = 'orders.ce' AND kafka_offset = 11;
SELECT is(received_orders.replay_quarantined(
		(SELECT id FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders.ce' AND kafka_offset = 11))::text,
	'inserted', 'replay of a repaired structured-mode message takes its data');
SELECT is(pg_temp.stored('22222222-0000-4000-8000-000000000012'), 'C-12', 'the data is stored');

-- Several types, one order -------------------------------------------------------------

CREATE TEMP TABLE mixed AS
SELECT * FROM pg_temp.ob('debezium', 'OrderReceived', 'eventType', 'outbox.mixed', ARRAY[
	pg_temp.b(pg_temp.ev('33333333-0000-4000-8000-000000000001', 'M-1')),
	pg_temp.b('{"orderId":"33333333-0000-4000-8000-000000000001","externalReference":"M-1","reason":"customer"}'),
	pg_temp.b(pg_temp.ev('33333333-0000-4000-8000-000000000001', 'M-1'))
], ARRAY['OrderReceived', 'OrderCancelled', 'OrderReceived']::bytea[]);
SELECT results_eq('SELECT outcome FROM mixed ORDER BY "position"',
	$$VALUES ('inserted'), ('skipped'), ('duplicate')$$,
	'the same orderId as OrderReceived and OrderCancelled: one row, no conflict');
SELECT is((SELECT count(*) FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'outbox.mixed'),
	0::bigint, 'nothing of it is quarantined');

-- Without an event type, every message is an OrderReceived -----------------------------

SELECT results_eq($$SELECT outcome FROM pg_temp.ob('debezium', NULL, NULL, 'outbox.all', ARRAY[
		pg_temp.b(to_json(pg_temp.ev('44444444-0000-4000-8000-000000000001', 'A-1'))::text),
		pg_temp.b(pg_temp.ev('44444444-0000-4000-8000-000000000002', 'A-2'))], NULL) ORDER BY "position"$$,
	$$VALUES ('inserted'), ('inserted')$$, 'without event_type every message is materialized, whatever its headers');
SELECT results_eq($$SELECT outcome, sqlstate FROM pg_temp.ob('plain', 'OrderReceived', '__TypeId__', 'spring', ARRAY[
		pg_temp.b(pg_temp.ev('44444444-0000-4000-8000-000000000003', 'S-3')),
		pg_temp.b(pg_temp.ev('44444444-0000-4000-8000-000000000004', 'S-4')),
		pg_temp.b(pg_temp.ev('44444444-0000-4000-8000-000000000005', 'S-5'))],
		ARRAY['OrderReceived', 'com.example.OrderReceived', NULL]::bytea[]) ORDER BY "position"$$,
	$$VALUES ('inserted', NULL), ('skipped', NULL), ('rejected', '22023')$$,
	'plain envelope with a type header (Spring''s __TypeId__): exact match only, a missing header is rejected');
SELECT is((SELECT kafka_headers IS NULL AND envelope = 'plain' FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'spring'),
	true, 'the plain envelope is recorded too');
SELECT is((SELECT outcome FROM pg_temp.ob('debezium', NULL, NULL, 'outbox.all', ARRAY[pg_temp.b('{"schema":{},"payload":null}')], NULL)),
	'rejected', 'a null payload is rejected');
SELECT is((SELECT message FROM pg_temp.ob('debezium', NULL, NULL, 'outbox.all', ARRAY[pg_temp.b('{"schema":{},"payload":null}')], NULL)),
	'envelope debezium: "payload" is null, not the event object or a JSON string holding it', 'saying so');
SELECT is((SELECT outcome FROM pg_temp.ob('debezium', NULL, NULL, 'outbox.all', ARRAY[pg_temp.b('"\u0041bc"')], NULL)),
	'rejected', 'a JSON string holding no JSON object is rejected');
SELECT is((SELECT sqlstate FROM pg_temp.ob('debezium', NULL, NULL, 'outbox.all', ARRAY[pg_temp.b('"[1]"')], NULL)),
	'22023', 'a JSON string holding an array: not an object (22023)');
SELECT is((SELECT outcome FROM pg_temp.ob('debezium', NULL, NULL, 'outbox.all', ARRAY[
		pg_temp.b('{"schema":{},"payload":"{\"orderId\":\"44444444-0000-4000-8000-000000000009\",\"externalReference\":\"\\u00e9t\u00e9 \\\"q\\\"\"}"}')], NULL)),
	'inserted', 'escapes inside the payload string are decoded');
SELECT is(pg_temp.stored('44444444-0000-4000-8000-000000000009'), 'été "q"', 'to the event''s own characters');

-- Truncated, nested, escaped and non-UTF-8 envelopes -------------------------------------

SELECT results_eq($$SELECT outcome, sqlstate FROM pg_temp.ob('debezium', NULL, NULL, 'outbox.edge', ARRAY[
		pg_temp.b('{"schema":{"type":"string"},"payload":"{\"orderId\":'),
		pg_temp.b('{"schema":{"type":"string"},"payload":"{\"orderId\":\"44444444-0000-4000-8000-000000000020\",\"externalReference\":\"') || '\xff'::bytea || pg_temp.b('\"}"}'),
		pg_temp.b('{"schema":{"type":"string"},"payload":"{\"orderId\":\"44444444-0000-4000-8000-000000000021\",\"externalReference\":\"x\\u0000y\"}"}'),
		pg_temp.b('{"schema":{},"payload":{"schema":{},"payload":' || pg_temp.ev('44444444-0000-4000-8000-000000000022', 'N-22') || '}}'),
		pg_temp.b('{"schema":{},"payload":"{\"orderId\":\"44444444-0000-4000-8000-000000000023\",\"externalReference\":\"\\ud83d\\ude00 E-23\"}"}'),
		pg_temp.b('"{\"orderId\":\"44444444-0000-4000-8000-000000000024\",\"externalReference\":\"S-24\"}"')], NULL) ORDER BY "position"$$,
	$$VALUES ('rejected', '22P02'), ('rejected', '22P02'), ('rejected', '22P05'), ('rejected', '22023'), ('inserted', NULL), ('inserted', NULL)$$,
	'debezium: truncated (22P02), not UTF-8 inside (22P02), \u0000 inside the string (22P05), a wrapper inside a wrapper (one level only: 22023), escapes decoded, a bare JSON string');
SELECT is(pg_temp.stored('44444444-0000-4000-8000-000000000023'), U&'\+01F600 E-23', 'a surrogate pair escaped in the payload string is stored as its character');
SELECT results_eq($$SELECT outcome, sqlstate FROM pg_temp.ob('cloudevents', NULL, NULL, 'ce.edge', ARRAY[
		pg_temp.b('{"specversion":"1.0","type":"t","data":' || to_json(pg_temp.ev('44444444-0000-4000-8000-000000000025', 'C-25'))::text || '}'),
		pg_temp.b('{"specversion":"1.0","type":"t","data_base64":"' || encode('\xfffe'::bytea, 'base64') || '"}'),
		pg_temp.b('{"specversion":"1.0","type":"t","data_base64":"not base64!"}'),
		pg_temp.b('{"specversion":"1.0","type":"t","data":{"orderId":"44444444-0000-4000-8000-000000000027"'),
		pg_temp.b('{"specversion":1,"type":"t","data":{}}'),
		pg_temp.b('{"specversion":"1.0","type":"","data":{}}')], NULL,
		array_fill('application/cloudevents+json'::bytea, ARRAY[6])) ORDER BY "position"$$,
	$$VALUES ('inserted', NULL), ('rejected', '22P02'), ('rejected', '22P02'), ('rejected', '22P02'), ('rejected', '22023'), ('rejected', '22023')$$,
	'cloudevents: data as a JSON string, data_base64 of non-UTF-8 bytes or of no base64, truncated, specversion not a string, empty type');

-- Bad arguments fail the whole call -----------------------------------------------------

SELECT throws_ok($$SELECT * FROM pg_temp.ob('avro', NULL, NULL, 'x', ARRAY['{}'::bytea], NULL)$$,
	'22023', 'unknown envelope "avro"', 'an unknown envelope is refused (22023)');
SELECT throws_ok($$SELECT * FROM pg_temp.ob(NULL, NULL, NULL, 'x', ARRAY['{}'::bytea], NULL)$$,
	'22004', 'envelope must not be null', 'a NULL envelope is refused (22004)');
SELECT throws_ok($$SELECT * FROM pg_temp.ob('debezium', 'OrderReceived', NULL, 'x', ARRAY['{}'::bytea], NULL)$$,
	'22004', 'type_header must not be null when an event_type is given', 'an event_type needs its header name (22004)');
SELECT throws_ok($$SELECT * FROM pg_temp.ob('debezium', '', 'eventType', 'x', ARRAY['{}'::bytea], NULL)$$,
	'22023', 'event_type must not be empty', 'an empty event_type is refused (22023)');
SELECT throws_ok($$SELECT * FROM pg_temp.ob('debezium', 'OrderReceived', 'eventType', 'x', ARRAY['{}'::bytea], ARRAY['a', 'b']::bytea[])$$,
	'22023', 'message_types has 2 elements but kafka_values has 1', 'header arrays must match the values (22023)');
SELECT throws_ok($$SELECT * FROM received_orders.materialize_orders(NULL, ARRAY['{}'::bytea], ARRAY['t'], ARRAY[0], ARRAY[0::bigint],
		NULL, 'plain', NULL, NULL, NULL, NULL)$$,
	'22004', 'consumer_group must not be null', 'the outbox form needs a consumer group (22004)');

-- Grants -------------------------------------------------------------------------------

SELECT function_privs_are('received_orders', 'materialize_orders',
	ARRAY['text', 'bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]', 'text', 'text', 'text', 'bytea[]', 'bytea[]'],
	'public', ARRAY[]::text[], 'PUBLIC cannot execute the outbox form');
SELECT is((SELECT prosecdef FROM pg_proc WHERE oid =
	'received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[])'::regprocedure),
	true, 'the outbox form is SECURITY DEFINER');
SELECT is((SELECT proconfig FROM pg_proc WHERE oid =
	'received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[])'::regprocedure),
	ARRAY['search_path=pg_catalog, pg_temp', 'plan_cache_mode=force_generic_plan'],
	'with a pinned search_path, planning generically from its first call');
SELECT throws_ok($$INSERT INTO received_orders.received_orders_quarantine
		(kafka_topic, kafka_partition, kafka_offset, raw_value, outcome, sqlstate, reason, message_digest, envelope)
		VALUES ('x', 0, 0, '\x00', 'rejected', '22023', 'r', sha256('x'), 'avro')$$,
	'23514', NULL, 'the quarantine accepts only known envelopes');
SELECT throws_ok($$INSERT INTO received_orders.received_orders_quarantine
		(kafka_topic, kafka_partition, kafka_offset, raw_value, outcome, sqlstate, reason, message_digest, kafka_headers)
		VALUES ('x', 0, 0, '\x00', 'rejected', '22023', 'r', sha256('x'), '[1]')$$,
	'23514', NULL, 'and headers only as an object');

-- Headers are bounded like every stored field (else a 15-byte value with
-- an 8 MB header would store 8 MB of header text): each value keeps its
-- first 4096 bytes, whole characters, with its length as received.
CREATE TEMP TABLE huge AS
SELECT * FROM pg_temp.ob('debezium', 'OrderReceived', 'eventType', 'orders.huge',
	ARRAY[pg_temp.b('not json at all'), pg_temp.b('not json either'), pg_temp.b('nor this')],
	ARRAY[pg_temp.b('OrderReceived'), pg_temp.b('OrderReceived'), pg_temp.b('OrderReceived')],
	ARRAY[pg_temp.b(repeat('é', 700000)), decode(repeat('ff', 1000000), 'hex'), pg_temp.b('application/json')]);
SELECT is((SELECT string_agg(outcome, ' ' ORDER BY "position") FROM huge), 'rejected rejected rejected',
	'three short values, two with huge headers: all rejected');
SELECT is((SELECT max(octet_length(kafka_headers::text)) < 2 * 4096 + 200
		FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders.huge'),
	true, 'their stored headers are bounded (hex of 4096 bytes at most)');
SELECT is((SELECT string_agg(jsonb_build_array(kafka_headers ->> 'eventType',
			octet_length(kafka_headers ->> 'content-type'), kafka_headers -> 'content-type:bytes',
			left(kafka_headers ->> 'content-type', 4))::text, ' ' ORDER BY kafka_offset)
		FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders.huge'),
	'["OrderReceived", 4096, 1400000, "éééé"] ["OrderReceived", 8194, 1000000, "\\xff"] ' ||
	'["OrderReceived", 16, null, "appl"]',
	'each keeps its first 4096 bytes (whole characters) and says how long it was; a short one is whole');

-- One rule tells CloudEvents structured mode by its content-type, on both
-- sides: the table of cases the feeder's unit test reads too (so that the
-- feeder never skips by its ce_type header a message, such as
-- " application/cloudevents+json", the extension opens as structured).  Each case: a
-- structured envelope of the selected type, with a ce_type header naming
-- another type; structured mode reads the type inside (inserted), binary
-- mode takes the header's (skipped).
\set ce_cases `cat "$RO_ROOT/test/cases/cloudevents-content-types.txt"`
CREATE TEMP TABLE ce_cases AS
SELECT row_number() OVER (ORDER BY l.n)::integer AS n, split_part(l.line, E'\t', 1) AS mode,
	   replace(replace(substr(l.line, strpos(l.line, E'\t') + 1), '\t', E'\t'), '\s', ' ') AS content_type
  FROM regexp_split_to_table(:'ce_cases', E'\n') WITH ORDINALITY AS l(line, n)
 WHERE l.line !~ '^#' AND strpos(l.line, E'\t') > 0;
CREATE TEMP TABLE ce_modes AS
SELECT * FROM pg_temp.ob('cloudevents', 'com.example.OrderReceived', NULL, 'orders.ce-modes',
	ARRAY(SELECT pg_temp.b(format('{"specversion":"1.0","type":"com.example.OrderReceived","source":"/o","id":"M-%s","data":%s}',
			n, pg_temp.ev(format('5e5e5e5e-0000-4000-8000-%s', lpad(n::text, 12, '0')), 'M-' || n)))
		FROM ce_cases ORDER BY n),
	ARRAY(SELECT pg_temp.b('com.example.OrderPaid') FROM ce_cases ORDER BY n),
	ARRAY(SELECT pg_temp.b(content_type) FROM ce_cases ORDER BY n));
SELECT cmp_ok((SELECT count(*) FROM ce_cases JOIN ce_modes ON "position" = n), '>=', 10::bigint,
	'the shared table of content-type cases is read, one result per case');
SELECT is((SELECT string_agg(format('%L: %s, expected %s', content_type, outcome, mode), '; ')
		FROM ce_cases JOIN ce_modes ON "position" = n
		WHERE (mode = 'structured') IS DISTINCT FROM (outcome = 'inserted')
		   OR mode NOT IN ('structured', 'binary')),
	NULL, 'every content-type of the shared table opens in the mode the feeder expects');

SELECT * FROM finish();
ROLLBACK;
