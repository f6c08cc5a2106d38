-- 11_adopt_positions.sql — received_orders.adopt_consumer_position(): the
-- one way a Kafka committed offset becomes a position (the feeder's
-- --adopt-kafka-offsets, after an upgrade from a feeder that kept its
-- progress in Kafka only).  Its signature, definer
-- rights and privileges (nobody but its owner, not even the feeder's role,
-- unless granted); it records a position only where the group has none and
-- never overwrites one (not forwards, not backwards, not from another group);
-- its argument errors with their SQLSTATEs; a role granted it can adopt but
-- still not read or write the table.  Roles are created inside the
-- transaction and rolled back.

BEGIN;
SELECT plan(27);

CREATE ROLE ro_test_feeder NOLOGIN;
CREATE ROLE ro_test_adopter NOLOGIN;
GRANT USAGE ON SCHEMA received_orders TO ro_test_feeder, ro_test_adopter;
GRANT EXECUTE ON FUNCTION
	received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]),
	received_orders.consumer_positions(text),
	received_orders.restart_position(text, text, integer, bigint, bigint)
	TO ro_test_feeder;
GRANT EXECUTE ON FUNCTION received_orders.adopt_consumer_position(text, text, integer, bigint)
	TO ro_test_adopter;

-- Structure and privileges ------------------------------------------------------------------

SELECT has_function('received_orders', 'adopt_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'],
	'function received_orders.adopt_consumer_position(text, text, integer, bigint) exists (1.2)');
SELECT is(
	pg_catalog.pg_get_function_arguments('received_orders.adopt_consumer_position(text, text, integer, bigint)'::regprocedure),
	'consumer_group text, kafka_topic text, kafka_partition integer, next_offset bigint',
	'adopt_consumer_position takes (consumer_group, kafka_topic, kafka_partition, next_offset)');
SELECT function_returns('received_orders', 'adopt_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'], 'boolean',
	'adopt_consumer_position returns boolean');
SELECT isnt_strict('received_orders', 'adopt_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'],
	'adopt_consumer_position is not STRICT (NULL arguments must raise)');
SELECT volatility_is('received_orders', 'adopt_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'], 'volatile',
	'adopt_consumer_position is VOLATILE');
SELECT is_definer('received_orders', 'adopt_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'],
	'adopt_consumer_position is SECURITY DEFINER');
SELECT is(
	(SELECT proconfig FROM pg_catalog.pg_proc
	  WHERE oid = 'received_orders.adopt_consumer_position(text, text, integer, bigint)'::regprocedure),
	'{"search_path=pg_catalog, pg_temp"}'::text[],
	'adopt_consumer_position pins search_path = pg_catalog, pg_temp');
SELECT ok(
	NOT pg_catalog.has_function_privilege('public',
		'received_orders.adopt_consumer_position(text, text, integer, bigint)', 'EXECUTE'),
	'PUBLIC cannot EXECUTE adopt_consumer_position');
SELECT ok(
	NOT pg_catalog.has_function_privilege('ro_test_feeder',
		'received_orders.adopt_consumer_position(text, text, integer, bigint)', 'EXECUTE'),
	'the feeder''s role, with its documented grant, cannot EXECUTE adopt_consumer_position');
SELECT isnt(
	pg_catalog.obj_description('received_orders.adopt_consumer_position(text, text, integer, bigint)'::regprocedure, 'pg_proc'),
	NULL,
	'adopt_consumer_position has a comment');

-- Behaviour ----------------------------------------------------------------------------------

-- g1 has a position on orders [0] from a batch; nothing else.
SELECT is(
	(SELECT count(*)::integer FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea],
	   ARRAY['orders'], ARRAY[0], ARRAY[41::bigint])),
	1,
	'a batch of g1 records its position on orders [0] (42)');

SELECT is(received_orders.adopt_consumer_position('g1', 'orders', 1, 17), true,
	'a partition without a position: the offset is adopted (true)');
SELECT is(received_orders.adopt_consumer_position('g1', 'orders', 0, 100), false,
	'a partition with a position: nothing adopted (false), even forwards');
SELECT is(received_orders.adopt_consumer_position('g1', 'orders', 0, 3), false,
	'... or backwards');
SELECT is(received_orders.adopt_consumer_position('g1', 'orders', 1, 99), false,
	'a position adopted once is not overwritten by a second adoption');
SELECT is(received_orders.adopt_consumer_position('g2', 'orders', 0, 0), true,
	'another group''s position does not count: g2 adopts offset 0 on orders [0]');
SELECT results_eq(
	$$SELECT consumer_group, kafka_topic, kafka_partition, next_offset
	    FROM received_orders.received_orders_positions ORDER BY 1, 2, 3$$,
	$$VALUES ('g1'::text, 'orders'::text, 0, 42::bigint), ('g1', 'orders', 1, 17), ('g2', 'orders', 0, 0)$$,
	'the table holds the batch''s position, unchanged, and the two adopted ones');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders_positions
	  WHERE updated_at = now() AND next_offset IN (17, 0)),
	2,
	'an adopted position has updated_at = now()');

-- Argument errors ----------------------------------------------------------------------------

SELECT throws_ok($$SELECT received_orders.adopt_consumer_position(NULL, 'orders', 2, 1)$$,
	'22004', NULL, 'a NULL group raises 22004');
SELECT throws_ok($$SELECT received_orders.adopt_consumer_position('g1', NULL, 2, 1)$$,
	'22004', NULL, 'a NULL topic raises 22004');
SELECT throws_ok($$SELECT received_orders.adopt_consumer_position('g1', 'orders', NULL, 1)$$,
	'22004', NULL, 'a NULL partition raises 22004');
SELECT throws_ok($$SELECT received_orders.adopt_consumer_position('g1', 'orders', 2, NULL)$$,
	'22004', NULL, 'a NULL offset raises 22004');
SELECT throws_ok($$SELECT received_orders.adopt_consumer_position('', 'orders', 2, 1)$$,
	'22023', 'invalid position /orders [2] @1', 'an empty group raises 22023, naming the position');
SELECT throws_ok($$SELECT received_orders.adopt_consumer_position('g1', 'orders', -1, 1)$$,
	'22023', NULL, 'a negative partition raises 22023');
SELECT throws_ok($$SELECT received_orders.adopt_consumer_position('g1', 'orders', 2, -1)$$,
	'22023', NULL, 'a negative offset raises 22023');

-- Who may call it ----------------------------------------------------------------------------

SET LOCAL ROLE ro_test_feeder;
SELECT throws_ok($$SELECT received_orders.adopt_consumer_position('g1', 'orders', 3, 5)$$,
	'42501', NULL, 'the feeder''s role, not granted it, gets 42501');
RESET ROLE;
SET LOCAL ROLE ro_test_adopter;
SELECT is(received_orders.adopt_consumer_position('g-new', 'orders', 3, 5), true,
	'a role granted EXECUTE adopts a position of a group without positions (definer rights: no privilege on the table needed)');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
