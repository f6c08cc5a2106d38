-- 20_advance_positions.sql — received_orders.advance_positions moves a
-- consumer group's positions past records that hold no event (transaction
-- markers, aborted messages), the way a feeder acknowledges them in Kafka,
-- so that consumer_lag reads 0 when the feeder is caught up.
--
-- The contract: SECURITY DEFINER with a pinned search_path, nothing for
-- PUBLIC, one of feeder_functions(); compare and set (a position moves only
-- from exactly from_offset, only forwards, no row is created, another
-- group's positions are not touched); the group must be the caller's
-- (42501 otherwise); NULLs (22004), arrays of different lengths (2202E),
-- more than 4096 partitions (54000), an empty group or topic, a negative
-- partition or offset, a to_offset not above its from_offset and a
-- partition listed twice (22023) are refused, and a refused call changes
-- nothing.
--
-- Errors are read through pg_temp.caught.  Roles are created inside the
-- transaction and rolled back.

BEGIN;
SELECT plan(28);

SET LOCAL client_min_messages = error;

-- The feeder of group g1 (its documented grant), another group's feeder
-- granted the same, and a monitoring role.
CREATE ROLE ro_adv_feeder NOLOGIN;
CREATE ROLE ro_adv_other NOLOGIN;
CREATE ROLE ro_adv_mon NOLOGIN IN ROLE pg_monitor;
CREATE ROLE ro_adv_nobody NOLOGIN;
GRANT USAGE ON SCHEMA received_orders TO ro_adv_feeder, ro_adv_other;
GRANT EXECUTE ON FUNCTION
	received_orders.advance_positions(text, text[], integer[], bigint[], bigint[]),
	received_orders.record_high_watermarks(text, text, text[], integer[], bigint[])
	TO ro_adv_feeder, ro_adv_other;

-- The SQLSTATE and message of a statement's error, or NULL.
CREATE FUNCTION pg_temp.caught(statement text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	state text;
	msg text;
BEGIN
	EXECUTE statement;
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
	RETURN ARRAY[state, msg];
END
$$;
GRANT EXECUTE ON FUNCTION pg_temp.caught(text) TO PUBLIC;

-- The group's positions as "topic [partition] next_offset", sorted.
CREATE FUNCTION pg_temp.positions(grp text) RETURNS text
LANGUAGE sql AS $$
	SELECT string_agg(format('%s [%s] %s', p.kafka_topic, p.kafka_partition, p.next_offset),
	                  ', ' ORDER BY p.kafka_topic, p.kafka_partition)
	  FROM received_orders.received_orders_positions p
	 WHERE p.consumer_group = grp
$$;

-- Structure ---------------------------------------------------------------------

SELECT has_function('received_orders', 'advance_positions',
	ARRAY['text', 'text[]', 'integer[]', 'bigint[]', 'bigint[]'],
	'function received_orders.advance_positions(text, text[], integer[], bigint[], bigint[]) exists');
SELECT function_returns('received_orders', 'advance_positions',
	ARRAY['text', 'text[]', 'integer[]', 'bigint[]', 'bigint[]'], 'integer',
	'it returns how many positions moved (integer)');
SELECT is_definer('received_orders', 'advance_positions',
	ARRAY['text', 'text[]', 'integer[]', 'bigint[]', 'bigint[]'],
	'it is SECURITY DEFINER');
SELECT is(
	(SELECT p.proconfig FROM pg_proc p
	  WHERE p.oid = 'received_orders.advance_positions(text, text[], integer[], bigint[], bigint[])'::regprocedure),
	ARRAY['search_path=pg_catalog, pg_temp'],
	'its search_path is pinned to pg_catalog, pg_temp');
SELECT isnt_strict('received_orders', 'advance_positions',
	ARRAY['text', 'text[]', 'integer[]', 'bigint[]', 'bigint[]'],
	'it is not STRICT (NULL must raise, not return NULL)');
SELECT ok(NOT has_function_privilege('ro_adv_nobody',
	'received_orders.advance_positions(text, text[], integer[], bigint[], bigint[])', 'EXECUTE'),
	'PUBLIC may not execute it');
SELECT ok(
	'received_orders.advance_positions(text, text[], integer[], bigint[], bigint[])'::regprocedure
		IN (SELECT received_orders.feeder_functions()),
	'feeder_functions() lists it (grant_feeder grants it)');

-- Compare and set -------------------------------------------------------------

-- group g1 is ro_adv_feeder's: orders [0] at 100, orders [1] at 200,
-- other [0] at 50; group g2 has orders [0] at 100 too
SELECT received_orders.set_consumer_position('g1', 'orders', 0, 100);
SELECT received_orders.set_consumer_position('g1', 'orders', 1, 200);
SELECT received_orders.set_consumer_position('g1', 'other', 0, 50);
SELECT received_orders.set_consumer_position('g2', 'orders', 0, 100);
SELECT received_orders.set_consumer_group_owner('g1', 'ro_adv_feeder');
SELECT received_orders.set_consumer_group_owner('g2', 'ro_adv_other');

SET ROLE ro_adv_feeder;
SELECT is(received_orders.record_high_watermarks('g1', 'm1', ARRAY['orders'], ARRAY[0], ARRAY[103::bigint]), 1,
	'the feeder records orders [0]''s high watermark, 103 (the end offset past a marker)');
RESET ROLE;
SET ROLE ro_adv_mon;
SELECT is(
	(SELECT lag FROM received_orders.consumer_lag
	  WHERE consumer_group = 'g1' AND kafka_topic = 'orders' AND kafka_partition = 0),
	3::bigint, 'consumer_lag reads 3 for orders [0] before the advance');
RESET ROLE;

SET ROLE ro_adv_feeder;
SELECT is(
	received_orders.advance_positions('g1', ARRAY['orders', 'orders', 'other', 'orders'],
		ARRAY[0, 1, 0, 2], ARRAY[100, 199, 50, 0]::bigint[], ARRAY[103, 202, 52, 5]::bigint[]),
	2, 'an advance of four partitions moves two: those whose position is exactly from_offset');
RESET ROLE;
SELECT is(pg_temp.positions('g1'), 'orders [0] 103, orders [1] 200, other [0] 52',
	'orders [0] moved 100 -> 103 and other [0] 50 -> 52; orders [1] (at 200, not 199) stays; orders [2] (no position) gets none');
SELECT is(pg_temp.positions('g2'), 'orders [0] 100',
	'another group''s position of the same partition is not touched');
SET ROLE ro_adv_mon;
SELECT is(
	(SELECT lag FROM received_orders.consumer_lag
	  WHERE consumer_group = 'g1' AND kafka_topic = 'orders' AND kafka_partition = 0),
	0::bigint, 'consumer_lag reads 0 for orders [0] after the advance');
RESET ROLE;

SET ROLE ro_adv_feeder;
SELECT is(
	received_orders.advance_positions('g1', ARRAY['orders'], ARRAY[0], ARRAY[100]::bigint[], ARRAY[101]::bigint[]),
	0, 'a stale advance (from 100, the position is 103) moves nothing');
SELECT is(
	received_orders.advance_positions('g1', '{}', '{}', '{}', '{}'),
	0, 'an empty advance moves nothing');
RESET ROLE;
SELECT is(pg_temp.positions('g1'), 'orders [0] 103, orders [1] 200, other [0] 52',
	'... the position never moves backwards');

-- Who may --------------------------------------------------------------------------

SET ROLE ro_adv_other;
SELECT is(
	(pg_temp.caught($$SELECT received_orders.advance_positions('g1', ARRAY['orders'], ARRAY[1],
	                  ARRAY[200]::bigint[], ARRAY[210]::bigint[])$$))::text,
	'{42501,"permission denied for consumer group \"g1\""}',
	'another group''s feeder granted EXECUTE may not move group g1''s positions (42501)');
RESET ROLE;
SELECT is(pg_temp.positions('g1'), 'orders [0] 103, orders [1] 200, other [0] 52',
	'... and nothing moved');

-- Bad input --------------------------------------------------------------------

SET ROLE ro_adv_feeder;
SELECT is(
	(pg_temp.caught($$SELECT received_orders.advance_positions('g1', ARRAY['orders'], ARRAY[1],
	                  NULL, ARRAY[210]::bigint[])$$))::text,
	'{22004,"consumer_group, kafka_topics, kafka_partitions, from_offsets and to_offsets must not be null"}',
	'a NULL argument is refused (22004)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.advance_positions('g1', ARRAY['orders', 'orders'], ARRAY[1],
	                  ARRAY[200]::bigint[], ARRAY[210]::bigint[])$$))[1],
	'2202E', 'arrays of different lengths are refused (2202E)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.advance_positions('g1',
	                  array_fill('orders'::text, ARRAY[4097]), array_fill(0, ARRAY[4097]),
	                  array_fill(0::bigint, ARRAY[4097]), array_fill(1::bigint, ARRAY[4097]))$$))[1],
	'54000', 'more than 4096 partitions in one call are refused (54000)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.advance_positions('g1', ARRAY['orders'], ARRAY[1],
	                  ARRAY[200]::bigint[], ARRAY[200]::bigint[])$$))[1],
	'22023', 'a to_offset not above its from_offset is refused (22023)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.advance_positions('g1', ARRAY['orders'], ARRAY[1],
	                  ARRAY[200]::bigint[], ARRAY[NULL]::bigint[])$$))[1],
	'22023', 'a NULL element is refused (22023)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.advance_positions('g1', ARRAY[''], ARRAY[1],
	                  ARRAY[200]::bigint[], ARRAY[210]::bigint[])$$))[1],
	'22023', 'an empty topic is refused (22023)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.advance_positions('g1', ARRAY['orders'], ARRAY[-1],
	                  ARRAY[200]::bigint[], ARRAY[210]::bigint[])$$))[1],
	'22023', 'a negative partition is refused (22023)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.advance_positions('g1', ARRAY['orders', 'orders'], ARRAY[1, 1],
	                  ARRAY[200, 210]::bigint[], ARRAY[210, 220]::bigint[])$$))::text,
	'{22023,"a partition is listed twice in a position advance for consumer group \"g1\""}',
	'a partition listed twice is refused (22023)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.advance_positions('', ARRAY['orders'], ARRAY[1],
	                  ARRAY[200]::bigint[], ARRAY[210]::bigint[])$$))[1],
	'22023', 'an empty consumer group is refused (22023)');
RESET ROLE;
SELECT is(pg_temp.positions('g1'), 'orders [0] 103, orders [1] 200, other [0] 52',
	'the refused calls moved nothing');

SELECT * FROM finish();
ROLLBACK;
