-- 08_hostile_input.sql — the batch function under hostile input.
--
-- 1. No quarantine row is silently lost: the quarantine is unique on the
--    Kafka coordinates and the digest of the message's bytes.  A redelivery
--    (same key and value at the same coordinates) is stored once; another
--    message at the same coordinates (a re-created topic, another cluster, a
--    row forged by a caller) gets its own row, never reported rejected and
--    stored nowhere.
-- 2. Storage is bounded: a value (or key) larger than
--    received_orders.max_event_bytes keeps its first 4096 bytes, its length
--    and the digest of the whole message; replay_quarantined refuses such a
--    row with the reason (55000); a JSON error quotes its token briefly (a
--    reason part is at most 256 bytes, cut at a character boundary); elements
--    without coordinates are stored once per distinct message, not once per
--    call; a call holds at most 100,000 elements; topics at most 249 bytes,
--    consumer groups at most 255.
--
-- The schema-ownership refusal (CREATE EXTENSION in a schema that a role
-- other than a superuser made) needs its own database: see
-- test/upgrade/02-schema-squatting.t.

BEGIN;
SELECT plan(27);

SET LOCAL client_min_messages = error;

CREATE FUNCTION pg_temp.q(topic text, part integer)
RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM received_orders.received_orders_quarantine
	 WHERE kafka_topic IS NOT DISTINCT FROM topic AND kafka_partition IS NOT DISTINCT FROM part
$$;

-- 1. Same coordinates ------------------------------------------------------------------

SELECT is(
	(SELECT outcome::text FROM received_orders.materialize_orders('g8',
		ARRAY['{"broken'::bytea], ARRAY['t8'], ARRAY[0], ARRAY[10::bigint], ARRAY['k'::bytea])),
	'rejected', 'a rejected message at t8 [0] @10');
SELECT is(
	(SELECT outcome::text FROM received_orders.materialize_orders('g8',
		ARRAY['{"broken'::bytea], ARRAY['t8'], ARRAY[0], ARRAY[10::bigint], ARRAY['k'::bytea])),
	'rejected', 'its redelivery (same key and value) is rejected again');
SELECT is(pg_temp.q('t8', 0), 1::bigint, 'the redelivery is stored once');
SELECT is(
	(SELECT outcome::text FROM received_orders.materialize_orders('g8',
		ARRAY['{"other bytes'::bytea], ARRAY['t8'], ARRAY[0], ARRAY[10::bigint], ARRAY['k'::bytea])),
	'rejected', 'another message at the same coordinates (a re-created topic) is rejected');
SELECT is(pg_temp.q('t8', 0), 2::bigint, 'and kept in a row of its own, not dropped');
SELECT is(
	(SELECT outcome::text FROM received_orders.materialize_orders('g8',
		ARRAY['{"broken'::bytea], ARRAY['t8'], ARRAY[0], ARRAY[10::bigint], ARRAY['other key'::bytea])),
	'rejected', 'the first value with another key at the same coordinates');
SELECT is(pg_temp.q('t8', 0), 3::bigint, 'is another message: kept too');
SELECT is(
	(SELECT count(DISTINCT message_digest) FROM received_orders.received_orders_quarantine WHERE kafka_topic = 't8'),
	3::bigint, 'each row has the digest of its own message');
SELECT is(
	(SELECT message_digest FROM received_orders.received_orders_quarantine
	  WHERE kafka_topic = 't8' AND raw_value = '{"broken'::bytea AND kafka_key = 'k'::bytea),
	sha256('\x01'::bytea || int4send(1) || 'k'::bytea || '\x01'::bytea || '{"broken'::bytea),
	'the digest is SHA-256 of the key (length-prefixed) and the value, as the column comment says');

-- A forged row at the coordinates of a real conflict does not hide it.
INSERT INTO received_orders.received_orders (order_id, external_reference, payload)
VALUES ('00000000-0000-4000-8000-000000000801', 'REF-A', '{}');
SELECT is(
	(SELECT outcome::text FROM received_orders.materialize_orders('g8',
		ARRAY['{"orderId":"00000000-0000-4000-8000-000000000801","externalReference":"forged"}'::bytea],
		ARRAY['t8c'], ARRAY[0], ARRAY[5::bigint])),
	'conflict', 'a caller forges a conflict row at t8c [0] @5');
SELECT is(
	(SELECT outcome::text FROM received_orders.materialize_orders('g8',
		ARRAY['{"orderId":"00000000-0000-4000-8000-000000000801","externalReference":"REF-B"}'::bytea],
		ARRAY['t8c'], ARRAY[0], ARRAY[5::bigint])),
	'conflict', 'the real conflicting message at the same coordinates');
SELECT is(
	(SELECT count(*) FROM received_orders.received_orders_quarantine
	  WHERE kafka_topic = 't8c' AND convert_from(raw_value, 'UTF8')::jsonb ->> 'externalReference' = 'REF-B'),
	1::bigint, 'the real conflict is stored, not hidden by the forged row');

-- Elements without coordinates: once per distinct message, not per call.
SELECT is(
	(SELECT count(*) FROM received_orders.materialize_orders(
		array_fill(NULL::bytea, ARRAY[1000]), NULL, NULL, NULL)),
	1000::bigint, '1,000 NULL values without coordinates: 1,000 results');
SELECT is(pg_temp.q(NULL, NULL), 1::bigint, 'stored once');
SELECT lives_ok(
	$$SELECT count(*) FROM received_orders.materialize_orders(array_fill(NULL::bytea, ARRAY[1000]), NULL, NULL, NULL)$$,
	'the same call again');
SELECT is(pg_temp.q(NULL, NULL), 1::bigint, 'still one row');

-- 2. Bounded storage ------------------------------------------------------------------

SET LOCAL received_orders.max_event_bytes = 10000;
SELECT is(
	(SELECT sqlstate FROM received_orders.materialize_orders('g8',
		ARRAY[('{"pad":"' || repeat('x', 50000) || '"}')::bytea], ARRAY['t8big'], ARRAY[0], ARRAY[1::bigint],
		ARRAY[repeat('K', 20000)::bytea])),
	'54000', 'a 50 kB value with max_event_bytes 10000 is rejected as too large');
SELECT row_eq(
	$$SELECT length(raw_value), raw_value_bytes, length(kafka_key), kafka_key_bytes,
	         substring(raw_value, 1, 8) = '{"pad":"'::bytea
	    FROM received_orders.received_orders_quarantine WHERE kafka_topic = 't8big'$$,
	ROW(4096, 50010, 4096, 20000, true),
	'it keeps the first 4096 bytes of the value and of the key, with their lengths as received');
SELECT is(
	(SELECT message_digest FROM received_orders.received_orders_quarantine WHERE kafka_topic = 't8big'),
	sha256('\x01'::bytea || int4send(20000) || repeat('K', 20000)::bytea || '\x01'::bytea
	       || ('{"pad":"' || repeat('x', 50000) || '"}')::bytea),
	'and the digest of the whole message');
SELECT throws_ok(
	format('SELECT received_orders.replay_quarantined(%s)',
		(SELECT id FROM received_orders.received_orders_quarantine WHERE kafka_topic = 't8big')),
	'55000', NULL, 'replay_quarantined refuses a row that keeps only a prefix (55000)');
SELECT matches(
	(SELECT reason FROM received_orders.received_orders_quarantine WHERE kafka_topic = 't8big'),
	'^event is too large: 50010 bytes', 'its reason gives the length as received');
RESET received_orders.max_event_bytes;

SELECT is(
	(SELECT octet_length(message) <= 256 + 2 + 256 FROM received_orders.materialize_orders('g8',
		ARRAY[('{"orderId": ' || repeat('y', 100000) || '}')::bytea], ARRAY['t8tok'], ARRAY[0], ARRAY[1::bigint])),
	true, 'a 100 kB invalid JSON token is quoted briefly: the reason stays under 520 bytes');
SELECT matches(
	(SELECT reason FROM received_orders.received_orders_quarantine WHERE kafka_topic = 't8tok'),
	'…$', 'a cut reason ends with an ellipsis');
SELECT is(
	(SELECT count(*) FROM received_orders.materialize_orders('g8',
		ARRAY[('{"orderId": "' || repeat('é', 5000) || '"}')::bytea], ARRAY['t8utf'], ARRAY[0], ARRAY[1::bigint])
	  WHERE convert_to(message, 'UTF8') IS NOT NULL),
	1::bigint, 'a reason cut inside multibyte text stays valid UTF-8');

SELECT throws_ok(
	$$SELECT count(*) FROM received_orders.materialize_orders(array_fill('{}'::bytea, ARRAY[100001]), NULL, NULL, NULL)$$,
	'54000', 'a batch holds at most 100000 messages, not 100001',
	'a call of 100,001 elements is refused (54000: split it)');
SELECT throws_ok(
	format($$SELECT count(*) FROM received_orders.materialize_orders('g8', ARRAY['{}'::bytea], ARRAY[%L], ARRAY[0], ARRAY[1::bigint])$$,
		repeat('t', 250)),
	'22023', 'element 1 has a Kafka topic of 250 bytes; Kafka allows at most 249',
	'a topic longer than Kafka allows is refused (22023)');
SELECT throws_ok(
	format($$SELECT count(*) FROM received_orders.materialize_orders(%L, ARRAY['{}'::bytea], ARRAY['t'], ARRAY[0], ARRAY[1::bigint])$$,
		repeat('g', 256)),
	'22023', 'consumer group is 256 bytes long; at most 255 are allowed',
	'a consumer group of 256 bytes is refused (22023)');

SELECT * FROM finish();
ROLLBACK;
