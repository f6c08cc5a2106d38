-- 07_positions.sql — received_orders keeps the consumed positions: the
-- table received_orders_positions as the contract says; the batch function's
-- consumer-group overload records max(offset) + 1 per (topic, partition) in
-- the caller's transaction, never backwards, whatever each element's outcome;
-- a NULL value is skipped, not quarantined; its argument errors;
-- consumer_positions(), restart_position() (a compare-and-set move
-- backwards, for a feeder accepting the loss of a re-created topic),
-- set_consumer_position() and forget_consumer_positions(); who may call what
-- (the documented grant of the feeder's role is enough for the three
-- functions it calls, and for nothing else); the batch function without a
-- group records nothing and still rejects NULL values.
--
-- set_consumer_position's NOTICE cannot be seen from SQL; its text is checked
-- by test/upgrade/01-update-path.t.  Roles are created inside the
-- transaction and rolled back.

BEGIN;
SELECT plan(164);

-- Conflicts raise a WARNING and set_consumer_position a NOTICE; expected here.
SET LOCAL client_min_messages = error;

-- A feeder with a consumer group (USAGE and EXECUTE on the three functions it
-- calls, as documented) and a stranger (USAGE only).
CREATE ROLE ro_test_feeder NOLOGIN;
CREATE ROLE ro_test_stranger NOLOGIN;
GRANT USAGE ON SCHEMA received_orders TO ro_test_feeder, ro_test_stranger;
GRANT EXECUTE ON FUNCTION
	received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]),
	received_orders.consumer_positions(text),
	received_orders.restart_position(text, text, integer, bigint, bigint)
	TO ro_test_feeder;

-- Table received_orders_positions ------------------------------------------------------

SELECT has_table('received_orders', 'received_orders_positions',
	'table received_orders.received_orders_positions exists');
SELECT columns_are('received_orders', 'received_orders_positions',
	ARRAY['consumer_group', 'kafka_topic', 'kafka_partition', 'next_offset', 'updated_at',
	      'high_watermark', 'high_watermark_at', 'member_id']::name[],
	'received_orders_positions has exactly the columns consumer_group, kafka_topic, kafka_partition, next_offset, updated_at and 1.2''s high_watermark, high_watermark_at, member_id (14_status.sql)');
SELECT col_type_is('received_orders', 'received_orders_positions', 'consumer_group', 'text',
	'positions.consumer_group is text');
SELECT col_type_is('received_orders', 'received_orders_positions', 'kafka_topic', 'text',
	'positions.kafka_topic is text');
SELECT col_type_is('received_orders', 'received_orders_positions', 'kafka_partition', 'integer',
	'positions.kafka_partition is integer');
SELECT col_type_is('received_orders', 'received_orders_positions', 'next_offset', 'bigint',
	'positions.next_offset is bigint');
SELECT col_type_is('received_orders', 'received_orders_positions', 'updated_at', 'timestamp with time zone',
	'positions.updated_at is timestamptz');
SELECT is_empty(
	$$SELECT a.attname FROM pg_catalog.pg_attribute a
	   WHERE a.attrelid = 'received_orders.received_orders_positions'::regclass
	     AND a.attnum > 0 AND NOT a.attisdropped AND NOT a.attnotnull
	     AND a.attname NOT IN ('high_watermark', 'high_watermark_at', 'member_id')$$,
	'every column of received_orders_positions is NOT NULL but 1.2''s high watermark columns (NULL until recorded)');
SELECT col_default_is('received_orders', 'received_orders_positions', 'updated_at', 'now()'::text,
	'positions.updated_at defaults to now()');
SELECT col_is_pk('received_orders', 'received_orders_positions',
	ARRAY['consumer_group', 'kafka_topic', 'kafka_partition']::name[],
	'positions primary key is (consumer_group, kafka_topic, kafka_partition)');
SELECT is(
	(SELECT conname::text FROM pg_catalog.pg_constraint
	  WHERE conrelid = 'received_orders.received_orders_positions'::regclass AND contype = 'p'),
	'received_orders_positions_pkey',
	'the primary key is named received_orders_positions_pkey (the ON CONFLICT target)');
SELECT is(
	(SELECT array_agg(conname::text ORDER BY conname) FROM pg_catalog.pg_constraint
	  WHERE conrelid = 'received_orders.received_orders_positions'::regclass AND contype = 'c'),
	ARRAY['received_orders_positions_group_check', 'received_orders_positions_offset_check',
	      'received_orders_positions_partition_check', 'received_orders_positions_topic_check'],
	'positions has exactly the four check constraints: group, offset, partition, topic');

SELECT throws_ok(
	$$INSERT INTO received_orders.received_orders_positions VALUES ('', 't', 0, 0)$$,
	'23514', 'new row for relation "received_orders_positions" violates check constraint "received_orders_positions_group_check"',
	'an empty consumer_group is refused by received_orders_positions_group_check');
SELECT throws_ok(
	$$INSERT INTO received_orders.received_orders_positions VALUES ('g', '', 0, 0)$$,
	'23514', 'new row for relation "received_orders_positions" violates check constraint "received_orders_positions_topic_check"',
	'an empty kafka_topic is refused by received_orders_positions_topic_check');
SELECT throws_ok(
	$$INSERT INTO received_orders.received_orders_positions VALUES ('g', 't', -1, 0)$$,
	'23514', 'new row for relation "received_orders_positions" violates check constraint "received_orders_positions_partition_check"',
	'a negative kafka_partition is refused by received_orders_positions_partition_check');
SELECT throws_ok(
	$$INSERT INTO received_orders.received_orders_positions VALUES ('g', 't', 0, -1)$$,
	'23514', 'new row for relation "received_orders_positions" violates check constraint "received_orders_positions_offset_check"',
	'a negative next_offset is refused by received_orders_positions_offset_check');
SELECT lives_ok(
	$$INSERT INTO received_orders.received_orders_positions VALUES ('g', 't', 0, 0)$$,
	'partition 0 at next_offset 0 is a valid position');
SELECT throws_ok(
	$$INSERT INTO received_orders.received_orders_positions VALUES ('g', 't', 0, 5)$$,
	'23505', NULL,
	'a second row for the same (consumer_group, kafka_topic, kafka_partition) is refused');
DELETE FROM received_orders.received_orders_positions;

SELECT ok(
	'received_orders.received_orders_positions'::regclass = ANY
		((SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'received_orders')::oid[]),
	'received_orders_positions is marked in pg_extension.extconfig (dumped by pg_dump)');
SELECT is(
	(SELECT e.extcondition[pg_catalog.array_position(e.extconfig, 'received_orders.received_orders_positions'::regclass::oid)]
	   FROM pg_catalog.pg_extension e WHERE e.extname = 'received_orders'),
	'',
	'received_orders_positions is dumped whole (empty filter condition)');
SELECT ok(
	EXISTS (SELECT FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON d.refobjid = e.oid
	         WHERE e.extname = 'received_orders' AND d.refclassid = 'pg_catalog.pg_extension'::regclass
	           AND d.classid = 'pg_catalog.pg_class'::regclass
	           AND d.objid = 'received_orders.received_orders_positions'::regclass AND d.deptype = 'e'),
	'received_orders_positions is a member of the extension');
SELECT table_privs_are('received_orders', 'received_orders_positions', 'public', '{}'::text[],
	'PUBLIC has no privilege on received_orders_positions');

-- The new functions' signatures ----------------------------------------------------------

SELECT has_function('received_orders', 'materialize_orders',
	ARRAY['text', 'bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'function received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]) exists');
SELECT is(
	pg_catalog.pg_get_function_arguments('received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[])'::regprocedure),
	'consumer_group text, kafka_values bytea[], kafka_topics text[], kafka_partitions integer[], '
	'kafka_offsets bigint[], kafka_keys bytea[] DEFAULT NULL::bytea[]',
	'the group overload takes (consumer_group, kafka_values, kafka_topics, kafka_partitions, kafka_offsets, kafka_keys DEFAULT NULL)');
SELECT is(
	pg_catalog.pg_get_function_result('received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[])'::regprocedure),
	'TABLE("position" integer, order_id uuid, outcome received_orders.materialize_outcome, sqlstate text, message text)',
	'the group overload returns TABLE(position, order_id, outcome, sqlstate, message) as 1.0''s');
SELECT isnt_strict('received_orders', 'materialize_orders',
	ARRAY['text', 'bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'the group overload is not STRICT (NULL arguments must raise)');
SELECT volatility_is('received_orders', 'materialize_orders',
	ARRAY['text', 'bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'], 'volatile',
	'the group overload is VOLATILE');

SELECT has_function('received_orders', 'consumer_positions', ARRAY['text'],
	'function received_orders.consumer_positions(text) exists');
SELECT is(
	pg_catalog.pg_get_function_arguments('received_orders.consumer_positions(text)'::regprocedure),
	'consumer_group text',
	'consumer_positions takes (consumer_group text)');
SELECT is(
	pg_catalog.pg_get_function_result('received_orders.consumer_positions(text)'::regprocedure),
	'TABLE(kafka_topic text, kafka_partition integer, next_offset bigint, updated_at timestamp with time zone)',
	'consumer_positions returns TABLE(kafka_topic, kafka_partition, next_offset, updated_at)');
SELECT is_strict('received_orders', 'consumer_positions', ARRAY['text'],
	'consumer_positions is STRICT');
SELECT volatility_is('received_orders', 'consumer_positions', ARRAY['text'], 'volatile',
	'consumer_positions is VOLATILE (1.2: it claims an unclaimed group, 12_consumer_groups.sql)');

SELECT has_function('received_orders', 'restart_position', ARRAY['text', 'text', 'integer', 'bigint', 'bigint'],
	'function received_orders.restart_position(text, text, integer, bigint, bigint) exists');
SELECT is(
	pg_catalog.pg_get_function_arguments('received_orders.restart_position(text, text, integer, bigint, bigint)'::regprocedure),
	'consumer_group text, kafka_topic text, kafka_partition integer, from_offset bigint, to_offset bigint',
	'restart_position takes (consumer_group, kafka_topic, kafka_partition, from_offset, to_offset)');
SELECT function_returns('received_orders', 'restart_position', ARRAY['text', 'text', 'integer', 'bigint', 'bigint'], 'boolean',
	'restart_position returns boolean');
SELECT isnt_strict('received_orders', 'restart_position', ARRAY['text', 'text', 'integer', 'bigint', 'bigint'],
	'restart_position is not STRICT (NULL arguments must raise)');
SELECT volatility_is('received_orders', 'restart_position', ARRAY['text', 'text', 'integer', 'bigint', 'bigint'], 'volatile',
	'restart_position is VOLATILE');

SELECT has_function('received_orders', 'set_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'],
	'function received_orders.set_consumer_position(text, text, integer, bigint) exists');
SELECT is(
	pg_catalog.pg_get_function_arguments('received_orders.set_consumer_position(text, text, integer, bigint)'::regprocedure),
	'consumer_group text, kafka_topic text, kafka_partition integer, next_offset bigint',
	'set_consumer_position takes (consumer_group, kafka_topic, kafka_partition, next_offset)');
SELECT function_returns('received_orders', 'set_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'], 'bigint',
	'set_consumer_position returns bigint');
SELECT isnt_strict('received_orders', 'set_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'],
	'set_consumer_position is not STRICT (NULL arguments must raise)');

SELECT has_function('received_orders', 'forget_consumer_positions', ARRAY['text', 'text'],
	'function received_orders.forget_consumer_positions(text, text) exists');
SELECT is(
	pg_catalog.pg_get_function_arguments('received_orders.forget_consumer_positions(text, text)'::regprocedure),
	'consumer_group text, kafka_topic text DEFAULT NULL::text',
	'forget_consumer_positions takes (consumer_group, kafka_topic DEFAULT NULL)');
SELECT function_returns('received_orders', 'forget_consumer_positions', ARRAY['text', 'text'], 'bigint',
	'forget_consumer_positions returns bigint');
SELECT isnt_strict('received_orders', 'forget_consumer_positions', ARRAY['text', 'text'],
	'forget_consumer_positions is not STRICT (a NULL group must raise)');

-- Definer rights, pinned search_path, no EXECUTE for PUBLIC --------------------------------

CREATE TEMP TABLE new_functions (sig regprocedure PRIMARY KEY, name text);
INSERT INTO new_functions VALUES
	('received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[])', 'materialize_orders (group overload)'),
	('received_orders.consumer_positions(text)', 'consumer_positions'),
	('received_orders.restart_position(text, text, integer, bigint, bigint)', 'restart_position'),
	('received_orders.set_consumer_position(text, text, integer, bigint)', 'set_consumer_position'),
	('received_orders.forget_consumer_positions(text, text)', 'forget_consumer_positions');

SELECT is_empty(
	$$SELECT f.name FROM pg_temp.new_functions f JOIN pg_catalog.pg_proc p ON p.oid = f.sig
	   WHERE NOT p.prosecdef$$,
	'every new function is SECURITY DEFINER');
SELECT is_empty(
	$$SELECT f.name FROM pg_temp.new_functions f JOIN pg_catalog.pg_proc p ON p.oid = f.sig
	   WHERE pg_catalog.array_remove(p.proconfig, 'plan_cache_mode=force_generic_plan')
	         IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}'::text[]$$,
	'every new function pins search_path = pg_catalog, pg_temp');
SELECT is_empty(
	$$SELECT f.name FROM pg_temp.new_functions f
	   WHERE pg_catalog.has_function_privilege('public', f.sig, 'EXECUTE')$$,
	'PUBLIC cannot EXECUTE any new function');
SELECT function_privs_are('received_orders', 'materialize_orders',
	ARRAY['text', 'bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'], 'ro_test_feeder', ARRAY['EXECUTE'],
	'the feeder''s role can EXECUTE the group overload once granted');
SELECT function_privs_are('received_orders', 'consumer_positions', ARRAY['text'], 'ro_test_feeder', ARRAY['EXECUTE'],
	'the feeder''s role can EXECUTE consumer_positions once granted');
SELECT function_privs_are('received_orders', 'restart_position', ARRAY['text', 'text', 'integer', 'bigint', 'bigint'],
	'ro_test_feeder', ARRAY['EXECUTE'],
	'the feeder''s role can EXECUTE restart_position once granted');
SELECT results_eq(
	$$SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
	   WHERE p.pronamespace = 'received_orders'::regnamespace
	     AND pg_catalog.has_function_privilege('ro_test_feeder', p.oid, 'EXECUTE')
	   ORDER BY 1$$,
	$$VALUES ('received_orders.consumer_positions(text)'::text),
	         ('received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[])'),
	         ('received_orders.restart_position(text,text,integer,bigint,bigint)')$$,
	'the documented grant lets the feeder''s role EXECUTE exactly consumer_positions, the group overload and restart_position');
SELECT function_privs_are('received_orders', 'set_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'],
	'ro_test_feeder', '{}'::text[],
	'the feeder''s role cannot EXECUTE set_consumer_position');
SELECT function_privs_are('received_orders', 'forget_consumer_positions', ARRAY['text', 'text'],
	'ro_test_feeder', '{}'::text[],
	'the feeder''s role cannot EXECUTE forget_consumer_positions');
SELECT table_privs_are('received_orders', 'received_orders_positions', 'ro_test_feeder', '{}'::text[],
	'the feeder''s role has no privilege on received_orders_positions');

-- One batch, several topics and partitions, every outcome -----------------------------------

-- D is stored before the batch for a duplicate, C for a conflict.
SELECT is(
	received_orders.materialize_order('{"orderId": "e0000000-0000-4000-8000-0000000000d0", "externalReference": "ref-d"}'),
	'inserted',
	'order D is stored before the batch');
SELECT is(
	received_orders.materialize_order('{"orderId": "e0000000-0000-4000-8000-0000000000c0", "externalReference": "ref-c"}'),
	'inserted',
	'order C is stored before the batch');

-- Each partition's highest offset belongs to one outcome: orders [0] inserted
-- (its highest offset comes first), orders [1] duplicate, orders [2]
-- conflict, orders-eu [0] rejected at offset 0, orders-eu [1] a tombstone.
-- The partitions are interleaved and out of order.
CREATE TEMP TABLE batch (pos integer PRIMARY KEY, value bytea, topic text, part integer, off bigint,
	expect_outcome text, expect_sqlstate text);
INSERT INTO batch VALUES
	(1, convert_to('{"orderId": "e0000000-0000-4000-8000-0000000000a1", "externalReference": "ref-a1"}', 'UTF8'),
	    'orders', 0, 12, 'inserted', NULL),
	(2, NULL, 'orders-eu', 1, 100, 'skipped', NULL),
	(3, convert_to('{"orderId": "e0000000-0000-4000-8000-0000000000d0", "externalReference": "ref-d"}', 'UTF8'),
	    'orders', 1, 7, 'duplicate', NULL),
	(4, '\xff'::bytea, 'orders-eu', 0, 0, 'rejected', '22P02'),
	(5, convert_to('{"orderId": "e0000000-0000-4000-8000-0000000000a2", "externalReference": "ref-a2"}', 'UTF8'),
	    'orders', 0, 10, 'inserted', NULL),
	(6, convert_to('{"orderId": "e0000000-0000-4000-8000-0000000000c0", "externalReference": "ref-c-other"}', 'UTF8'),
	    'orders', 2, 3, 'conflict', '23505'),
	(7, NULL, 'orders-eu', 1, 98, 'skipped', NULL);

CREATE TEMP TABLE run1 AS
	SELECT r.*
	  FROM received_orders.materialize_orders('g1',
	         (SELECT array_agg(value ORDER BY pos) FROM batch),
	         (SELECT array_agg(topic ORDER BY pos) FROM batch),
	         (SELECT array_agg(part ORDER BY pos) FROM batch),
	         (SELECT array_agg(off ORDER BY pos) FROM batch))
	       WITH ORDINALITY AS r("position", order_id, outcome, sqlstate, message, ord);

SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate FROM run1 ORDER BY ord$$,
	$$SELECT pos, expect_outcome, expect_sqlstate FROM batch ORDER BY pos$$,
	'the group overload gives one result per element, in input order: inserted, duplicate, conflict, rejected, skipped');
SELECT results_eq(
	$$SELECT order_id, sqlstate, message FROM run1 WHERE outcome = 'skipped' ORDER BY ord$$,
	$$VALUES (NULL::uuid, NULL::text, NULL::text), (NULL, NULL, NULL)$$,
	'a skipped (NULL) value has no order_id, sqlstate or message');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('g1')$$,
	$$VALUES ('orders'::text, 0, 13::bigint), ('orders', 1, 8), ('orders', 2, 4), ('orders-eu', 0, 1), ('orders-eu', 1, 101)$$,
	'max(offset) + 1 is recorded per (topic, partition), whatever the outcome (inserted, duplicate, conflict, rejected, skipped), in topic, partition order');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders_positions WHERE consumer_group = 'g1' AND updated_at = now()),
	5,
	'every recorded position has updated_at = now() (the transaction''s time)');

-- Batches of 64, 65 and 150 partitions (two topics), interleaved, each
-- partition's highest offset neither its first nor its last element: up to
-- 64 partitions the function finds each element's partition by a scan,
-- beyond it sorts the batch; both record max(offset) + 1 of every one.
CREATE TEMP TABLE many AS
	SELECT n, i, 'many-' || (j % 2) AS topic, j AS part, ((i * 37) % 1009)::bigint AS off
	  FROM (VALUES (64), (65), (150)) AS c (n),
	       LATERAL (SELECT i, (i * 7) % n AS j FROM generate_series(0, 3 * n - 1) AS i) AS e;
SELECT is(
	(SELECT count(*)::integer FROM (VALUES (64), (65), (150)) AS c (n),
	   LATERAL received_orders.materialize_orders('gp' || n,
	     (SELECT array_agg(NULL::bytea ORDER BY i) FROM many WHERE many.n = c.n),
	     (SELECT array_agg(topic ORDER BY i) FROM many WHERE many.n = c.n),
	     (SELECT array_agg(part ORDER BY i) FROM many WHERE many.n = c.n),
	     (SELECT array_agg(off ORDER BY i) FROM many WHERE many.n = c.n)) AS r
	  WHERE r.outcome = 'skipped'),
	3 * (64 + 65 + 150),
	'batches of 64, 65 and 150 interleaved partitions run');
SELECT results_eq(
	$$SELECT p.consumer_group, p.kafka_topic, p.kafka_partition, p.next_offset
	    FROM received_orders.received_orders_positions p
	   WHERE p.consumer_group IN ('gp64', 'gp65', 'gp150')
	   ORDER BY 1, 2, 3$$,
	$$SELECT 'gp' || n, topic, part, max(off) + 1 FROM many GROUP BY n, topic, part ORDER BY 1, 2, 3$$,
	'each records max(offset) + 1 of every partition');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-eu' AND kafka_partition = 1),
	0,
	'a skipped (NULL) value is not quarantined');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, kafka_offset, outcome::text FROM received_orders.received_orders_quarantine
	   ORDER BY kafka_topic, kafka_partition$$,
	$$VALUES ('orders'::text, 2, 3::bigint, 'conflict'::text), ('orders-eu', 0, 0, 'rejected')$$,
	'the conflicting and the rejected element are quarantined as in 1.0, and nothing else');
SELECT results_eq(
	$$SELECT order_id FROM received_orders.received_orders ORDER BY order_id$$,
	$$VALUES ('e0000000-0000-4000-8000-0000000000a1'::uuid), ('e0000000-0000-4000-8000-0000000000a2'),
	         ('e0000000-0000-4000-8000-0000000000c0'), ('e0000000-0000-4000-8000-0000000000d0')$$,
	'the two valid new orders are stored, as in 1.0');

-- Positions are written in the caller's transaction: visible inside it, gone
-- with its rollback.
SELECT throws_ok(
	$sql$DO $do$
	BEGIN
		PERFORM * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[500::bigint]);
		RAISE EXCEPTION '%', (SELECT next_offset FROM received_orders.received_orders_positions
		                       WHERE consumer_group = 'g1' AND kafka_topic = 'orders' AND kafka_partition = 0);
	END
	$do$$sql$,
	'P0001', '501',
	'inside the batch''s transaction its position is already visible (501)');
SELECT is(
	(SELECT next_offset FROM received_orders.received_orders_positions
	  WHERE consumer_group = 'g1' AND kafka_topic = 'orders' AND kafka_partition = 0),
	13::bigint,
	'when the batch''s transaction rolls back, its position goes with it');

-- Positions never move backwards -------------------------------------------------------------

UPDATE received_orders.received_orders_positions SET updated_at = '2000-01-01 00:00:00+00' WHERE consumer_group = 'g1';

-- Only lower offsets (orders [0] at 5 while 13 is recorded; orders-eu [1] at 50 while 101 is).
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('g1',
	    ARRAY[NULL::bytea, NULL], ARRAY['orders', 'orders-eu'], ARRAY[0, 1], ARRAY[5, 50]::bigint[])$$,
	$$VALUES ('skipped'::text), ('skipped')$$,
	'a later batch with lower offsets is materialized');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset, updated_at FROM received_orders.consumer_positions('g1')$$,
	$$VALUES ('orders'::text, 0, 13::bigint, '2000-01-01 00:00:00+00'::timestamptz),
	         ('orders', 1, 8, '2000-01-01 00:00:00+00'), ('orders', 2, 4, '2000-01-01 00:00:00+00'),
	         ('orders-eu', 0, 1, '2000-01-01 00:00:00+00'), ('orders-eu', 1, 101, '2000-01-01 00:00:00+00')$$,
	'lower offsets leave every position and its updated_at as they were');

-- One batch: orders [0] higher (20), orders [1] the same next offset (7 + 1 = 8), orders [2] lower (1).
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('g1',
	    ARRAY[NULL::bytea, NULL, NULL], ARRAY['orders', 'orders', 'orders'], ARRAY[1, 0, 2], ARRAY[7, 20, 1]::bigint[])$$,
	$$VALUES ('skipped'::text), ('skipped'), ('skipped')$$,
	'a batch with one higher, one equal and one lower partition is materialized');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset, updated_at = now() FROM received_orders.consumer_positions('g1')$$,
	$$VALUES ('orders'::text, 0, 21::bigint, true), ('orders', 1, 8, false), ('orders', 2, 4, false),
	         ('orders-eu', 0, 1, false), ('orders-eu', 1, 101, false)$$,
	'only the higher offset advances next_offset and updated_at; the equal and the lower one and partitions not in the batch are left');

-- Groups are separate ------------------------------------------------------------------------

SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('g2',
	    ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[3::bigint])$$,
	$$VALUES ('skipped'::text)$$,
	'another group consumes orders [0] at offset 3');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('g2')$$,
	$$VALUES ('orders'::text, 0, 4::bigint)$$,
	'consumer_positions returns only that group''s positions');
SELECT is(
	(SELECT next_offset FROM received_orders.consumer_positions('g1') WHERE kafka_topic = 'orders' AND kafka_partition = 0),
	21::bigint,
	'another group''s batch on the same partition leaves this group''s position');
SELECT is_empty(
	$$SELECT * FROM received_orders.consumer_positions('no-such-group')$$,
	'consumer_positions of a group with no position is empty');
SELECT is_empty(
	$$SELECT * FROM received_orders.consumer_positions(NULL)$$,
	'consumer_positions(NULL) is empty (STRICT)');
SELECT is_empty(
	$$SELECT * FROM received_orders.materialize_orders('g3', '{}'::bytea[], '{}'::text[], '{}'::integer[], '{}'::bigint[])$$,
	'an empty batch of a group gives no result row');
SELECT is_empty(
	$$SELECT * FROM received_orders.consumer_positions('g3')$$,
	'an empty batch records no position');

-- Argument errors --------------------------------------------------------------------------------

CREATE TEMP TABLE snapshot AS SELECT * FROM received_orders.received_orders_positions;

SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(NULL::text, ARRAY[NULL::bytea], ARRAY['t'], ARRAY[0], ARRAY[1::bigint])$$,
	'22004', NULL, 'a NULL consumer_group raises 22004');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('', ARRAY[NULL::bytea], ARRAY['t'], ARRAY[0], ARRAY[1::bigint])$$,
	'22023', NULL, 'an empty consumer_group raises 22023');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', NULL::bytea[], ARRAY['t'], ARRAY[0], ARRAY[1::bigint])$$,
	'22004', NULL, 'a NULL kafka_values array raises 22004');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea], NULL::text[], ARRAY[0], ARRAY[1::bigint])$$,
	'22004', NULL, 'a NULL kafka_topics array raises 22004');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea], ARRAY['t'], NULL::integer[], ARRAY[1::bigint])$$,
	'22004', NULL, 'a NULL kafka_partitions array raises 22004');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea], ARRAY['t'], ARRAY[0], NULL::bigint[])$$,
	'22004', NULL, 'a NULL kafka_offsets array raises 22004');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea, NULL], ARRAY['t', NULL], ARRAY[0, 0], ARRAY[1, 2]::bigint[])$$,
	'22004', NULL, 'a NULL topic element raises 22004 (the whole call fails)');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea, NULL], ARRAY['t', 't'], ARRAY[0, NULL], ARRAY[1, 2]::bigint[])$$,
	'22004', NULL, 'a NULL partition element raises 22004');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea, NULL], ARRAY['t', 't'], ARRAY[0, 0], ARRAY[1, NULL]::bigint[])$$,
	'22004', NULL, 'a NULL offset element raises 22004');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea, NULL], ARRAY['t', ''], ARRAY[0, 0], ARRAY[1, 2]::bigint[])$$,
	'22023', NULL, 'an empty topic element raises 22023');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea, NULL], ARRAY['t', 't'], ARRAY[0, -1], ARRAY[1, 2]::bigint[])$$,
	'22023', NULL, 'a negative partition element raises 22023');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea, NULL], ARRAY['t', 't'], ARRAY[0, 0], ARRAY[1, -1]::bigint[])$$,
	'22023', NULL, 'a negative offset element raises 22023');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea, NULL], ARRAY['t', 't'], ARRAY[0, 0], ARRAY[1, 2]::bigint[],
	    ARRAY[NULL::bytea])$$,
	'22023', NULL, 'a kafka_keys array of another length raises 22023');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g1', ARRAY[NULL::bytea], ARRAY['t'], ARRAY[0], ARRAY[9223372036854775807])$$,
	'22003', NULL, 'the largest bigint offset, which has no next offset, raises 22003');
SELECT results_eq(
	$$SELECT * FROM received_orders.received_orders_positions ORDER BY 1, 2, 3$$,
	$$SELECT * FROM pg_temp.snapshot ORDER BY 1, 2, 3$$,
	'no failed call changed a position');

-- The batch function without a group ------------------------------------------------------------

SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "e0000000-0000-4000-8000-0000000000a3", "externalReference": "ref-a3"}', 'UTF8'), NULL],
	    ARRAY['orders', 'orders'], ARRAY[0, 0], ARRAY[900, 901]::bigint[], NULL)$$,
	$$VALUES (1, 'inserted'::text, NULL::text), (2, 'rejected', '22004')$$,
	'the 1.0 function still stores valid orders and rejects a NULL value with 22004');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders_quarantine
	  WHERE kafka_topic = 'orders' AND kafka_partition = 0 AND kafka_offset = 901 AND raw_value IS NULL),
	1,
	'the 1.0 function still quarantines a NULL value');
SELECT results_eq(
	$$SELECT * FROM received_orders.received_orders_positions ORDER BY 1, 2, 3$$,
	$$SELECT * FROM pg_temp.snapshot ORDER BY 1, 2, 3$$,
	'the 1.0 function records no position');

-- set_consumer_position ---------------------------------------------------------------------------

SELECT is(
	received_orders.set_consumer_position('g1', 'orders', 0, 3),
	21::bigint,
	'set_consumer_position moves a position backwards and returns the previous one');
UPDATE received_orders.received_orders_positions SET updated_at = '2000-01-01 00:00:00+00'
 WHERE consumer_group = 'g1' AND kafka_topic = 'orders' AND kafka_partition = 1;
SELECT is(
	received_orders.set_consumer_position('g1', 'orders', 1, 30),
	8::bigint,
	'set_consumer_position moves a position forwards and returns the previous one');
SELECT is(
	received_orders.set_consumer_position('g1', 'orders', 9, 7),
	NULL::bigint,
	'set_consumer_position returns NULL for a partition without a position');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset, updated_at = now() FROM received_orders.consumer_positions('g1')
	   WHERE kafka_topic = 'orders'$$,
	$$VALUES ('orders'::text, 0, 3::bigint, true), ('orders', 1, 30, true), ('orders', 2, 4, false), ('orders', 9, 7, true)$$,
	'set_consumer_position wrote the new positions with updated_at = now() and left the others');
SELECT is(
	received_orders.set_consumer_position('g1', 'orders', 0, 3),
	3::bigint,
	'set_consumer_position to the same offset returns it');
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('g1',
	    ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[10::bigint])$$,
	$$VALUES ('skipped'::text)$$,
	'a batch after the move, below the old position');
SELECT is(
	(SELECT next_offset FROM received_orders.consumer_positions('g1') WHERE kafka_topic = 'orders' AND kafka_partition = 0),
	11::bigint,
	'the batch advances from the moved position (11), not from the old one (21)');
SELECT is(
	(SELECT next_offset FROM received_orders.consumer_positions('g2') WHERE kafka_topic = 'orders' AND kafka_partition = 0),
	4::bigint,
	'set_consumer_position of one group leaves another group''s position');

SELECT throws_ok($$SELECT received_orders.set_consumer_position(NULL, 'orders', 0, 1)$$,
	'22004', NULL, 'set_consumer_position with a NULL group raises 22004');
SELECT throws_ok($$SELECT received_orders.set_consumer_position('g1', NULL, 0, 1)$$,
	'22004', NULL, 'set_consumer_position with a NULL topic raises 22004');
SELECT throws_ok($$SELECT received_orders.set_consumer_position('g1', 'orders', NULL, 1)$$,
	'22004', NULL, 'set_consumer_position with a NULL partition raises 22004');
SELECT throws_ok($$SELECT received_orders.set_consumer_position('g1', 'orders', 0, NULL)$$,
	'22004', NULL, 'set_consumer_position with a NULL offset raises 22004');
SELECT throws_ok($$SELECT received_orders.set_consumer_position('', 'orders', 0, 1)$$,
	'22023', NULL, 'set_consumer_position with an empty group raises 22023');
SELECT throws_ok($$SELECT received_orders.set_consumer_position('g1', '', 0, 1)$$,
	'22023', NULL, 'set_consumer_position with an empty topic raises 22023');
SELECT throws_ok($$SELECT received_orders.set_consumer_position('g1', 'orders', -1, 1)$$,
	'22023', NULL, 'set_consumer_position with a negative partition raises 22023');
SELECT throws_ok($$SELECT received_orders.set_consumer_position('g1', 'orders', 0, -1)$$,
	'22023', NULL, 'set_consumer_position with a negative offset raises 22023');
SELECT is(
	(SELECT next_offset FROM received_orders.consumer_positions('g1') WHERE kafka_topic = 'orders' AND kafka_partition = 0),
	11::bigint,
	'a refused set_consumer_position changes nothing');

-- forget_consumer_positions ------------------------------------------------------------------------

SELECT is(
	received_orders.forget_consumer_positions('g1', 'orders-eu'),
	2::bigint,
	'forget_consumer_positions of one topic returns how many positions it removed (2)');
SELECT results_eq(
	$$SELECT DISTINCT kafka_topic FROM received_orders.consumer_positions('g1')$$,
	$$VALUES ('orders'::text)$$,
	'only the other topic''s positions remain for the group');
SELECT is(
	received_orders.forget_consumer_positions('g1', 'no-such-topic'),
	0::bigint,
	'forget_consumer_positions of a topic without positions returns 0');
SELECT is(
	received_orders.forget_consumer_positions('g1'),
	4::bigint,
	'forget_consumer_positions without a topic removes all of the group''s positions (4)');
SELECT is_empty(
	$$SELECT * FROM received_orders.consumer_positions('g1')$$,
	'the group has no position left');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('g2')$$,
	$$VALUES ('orders'::text, 0, 4::bigint)$$,
	'another group''s positions are not forgotten');
SELECT is(
	received_orders.forget_consumer_positions('g2', NULL),
	1::bigint,
	'forget_consumer_positions with a NULL topic removes all of the group''s positions');
SELECT throws_ok($$SELECT received_orders.forget_consumer_positions(NULL)$$,
	'22004', NULL, 'forget_consumer_positions with a NULL group raises 22004');

-- restart_position ---------------------------------------------------------------------------------
-- A feeder that accepted the loss of a re-created topic moves the group's
-- position back from the value it read (compare and set).

SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('gr',
	    ARRAY[NULL::bytea, NULL], ARRAY['orders', 'orders'], ARRAY[0, 1], ARRAY[99, 9]::bigint[])$$,
	$$VALUES ('skipped'::text), ('skipped')$$,
	'group gr consumes orders [0] up to 100 and orders [1] up to 10');
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('gr-other',
	    ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[99::bigint])$$,
	$$VALUES ('skipped'::text)$$,
	'another group consumes orders [0] up to 100 too');
UPDATE received_orders.received_orders_positions SET updated_at = '2000-01-01 00:00:00+00'
 WHERE consumer_group IN ('gr', 'gr-other');

SELECT is(
	received_orders.restart_position('gr', 'orders', 0, 100, 0),
	true,
	'restart_position from the stored position (100) to 0 moves it and returns true');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset, updated_at = now() FROM received_orders.consumer_positions('gr')$$,
	$$VALUES ('orders'::text, 0, 0::bigint, true), ('orders', 1, 10, false)$$,
	'the moved position is 0 with updated_at = now(); the group''s other partition is left');
SELECT results_eq(
	$$SELECT next_offset, updated_at FROM received_orders.consumer_positions('gr-other')$$,
	$$VALUES (100::bigint, '2000-01-01 00:00:00+00'::timestamptz)$$,
	'another group''s position on the same partition is left');

UPDATE received_orders.received_orders_positions SET updated_at = '2000-01-01 00:00:00+00' WHERE consumer_group = 'gr';
SELECT is(
	received_orders.restart_position('gr', 'orders', 0, 100, 0),
	false,
	'restart_position again from 100, which is no longer stored, returns false');
SELECT is(
	received_orders.restart_position('gr', 'orders', 1, 50, 5),
	false,
	'restart_position from a value other than the stored one (50, not 10) returns false');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset, updated_at FROM received_orders.consumer_positions('gr')$$,
	$$VALUES ('orders'::text, 0, 0::bigint, '2000-01-01 00:00:00+00'::timestamptz),
	         ('orders', 1, 10, '2000-01-01 00:00:00+00')$$,
	'a restart_position that returned false changed no position and no updated_at');
SELECT is(
	received_orders.restart_position('gr', 'orders', 7, 5, 0),
	false,
	'restart_position of a partition without a position returns false');
SELECT is(
	received_orders.restart_position('gr-none', 'orders', 0, 100, 0),
	false,
	'restart_position of a group without a position returns false');
SELECT is_empty(
	$$SELECT * FROM received_orders.received_orders_positions
	   WHERE (consumer_group = 'gr' AND kafka_partition = 7) OR consumer_group = 'gr-none'$$,
	'restart_position creates no position');
SELECT is(
	received_orders.restart_position('gr', 'orders', 1, 10, 3),
	true,
	'restart_position moves a position back to a non-zero offset (10 to 3)');
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('gr',
	    ARRAY[NULL::bytea, NULL], ARRAY['orders', 'orders'], ARRAY[0, 1], ARRAY[0, 3]::bigint[])$$,
	$$VALUES ('skipped'::text), ('skipped')$$,
	'a batch after the restart, from the restarted positions');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('gr')$$,
	$$VALUES ('orders'::text, 0, 1::bigint), ('orders', 1, 4)$$,
	'batches advance from the restarted positions (1 and 4), not from the old ones (100 and 10)');

CREATE TEMP TABLE snapshot_restart AS SELECT * FROM received_orders.received_orders_positions;
SELECT throws_ok($$SELECT received_orders.restart_position(NULL, 'orders', 0, 1, 0)$$,
	'22004', NULL, 'restart_position with a NULL group raises 22004');
SELECT throws_ok($$SELECT received_orders.restart_position('gr', NULL, 0, 1, 0)$$,
	'22004', NULL, 'restart_position with a NULL topic raises 22004');
SELECT throws_ok($$SELECT received_orders.restart_position('gr', 'orders', NULL, 1, 0)$$,
	'22004', NULL, 'restart_position with a NULL partition raises 22004');
SELECT throws_ok($$SELECT received_orders.restart_position('gr', 'orders', 0, NULL, 0)$$,
	'22004', NULL, 'restart_position with a NULL from_offset raises 22004');
SELECT throws_ok($$SELECT received_orders.restart_position('gr', 'orders', 0, 1, NULL)$$,
	'22004', NULL, 'restart_position with a NULL to_offset raises 22004');
SELECT throws_ok($$SELECT received_orders.restart_position('gr', 'orders', 0, 1, -1)$$,
	'22023', 'a position can only be restarted backwards, not from 1 to -1',
	'restart_position to a negative offset raises 22023');
SELECT throws_ok($$SELECT received_orders.restart_position('gr', 'orders', 0, 1, 1)$$,
	'22023', 'a position can only be restarted backwards, not from 1 to 1',
	'restart_position to the same offset raises 22023, even when it is the stored one');
SELECT throws_ok($$SELECT received_orders.restart_position('gr', 'orders', 0, 1, 5)$$,
	'22023', 'a position can only be restarted backwards, not from 1 to 5',
	'restart_position forwards raises 22023');
SELECT throws_ok(
	$sql$DO $do$
	DECLARE
		hint text;
	BEGIN
		PERFORM received_orders.restart_position('gr', 'orders', 0, 1, 5);
	EXCEPTION WHEN invalid_parameter_value THEN
		GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
		RAISE EXCEPTION '%', hint;
	END
	$do$$sql$,
	'P0001', 'Batches move positions forwards; set_consumer_position moves them anywhere.',
	'the 22023 error''s hint points to set_consumer_position');
SELECT results_eq(
	$$SELECT * FROM received_orders.received_orders_positions ORDER BY 1, 2, 3$$,
	$$SELECT * FROM pg_temp.snapshot_restart ORDER BY 1, 2, 3$$,
	'no refused restart_position changed a position');

-- The feeder's role ---------------------------------------------------------------------------------

SET ROLE ro_test_feeder;
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('gf',
	    ARRAY[convert_to('{"orderId": "e0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8'), NULL],
	    ARRAY['orders', 'orders'], ARRAY[4, 4], ARRAY[41, 42]::bigint[])$$,
	$$VALUES ('inserted'::text), ('skipped')$$,
	'the feeder''s role calls the group overload');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('gf')$$,
	$$VALUES ('orders'::text, 4, 43::bigint)$$,
	'the feeder''s role reads its group''s positions');
SELECT is(
	received_orders.restart_position('gf', 'orders', 4, 43, 41),
	true,
	'the feeder''s role moves its group''s position back with restart_position');
SELECT is(
	(SELECT next_offset FROM received_orders.consumer_positions('gf')),
	41::bigint,
	'the feeder''s role reads the restarted position');
SELECT throws_ok($$SELECT * FROM received_orders.received_orders_positions$$,
	'42501', NULL, 'the feeder''s role cannot SELECT from received_orders_positions');
SELECT throws_ok($$INSERT INTO received_orders.received_orders_positions VALUES ('gf', 'orders', 5, 1)$$,
	'42501', NULL, 'the feeder''s role cannot INSERT into received_orders_positions');
SELECT throws_ok($$UPDATE received_orders.received_orders_positions SET next_offset = 0$$,
	'42501', NULL, 'the feeder''s role cannot UPDATE received_orders_positions');
SELECT throws_ok($$DELETE FROM received_orders.received_orders_positions$$,
	'42501', NULL, 'the feeder''s role cannot DELETE from received_orders_positions');
SELECT throws_ok($$TRUNCATE received_orders.received_orders_positions$$,
	'42501', NULL, 'the feeder''s role cannot TRUNCATE received_orders_positions');
SELECT throws_ok($$SELECT received_orders.set_consumer_position('gf', 'orders', 4, 0)$$,
	'42501', 'permission denied for function set_consumer_position',
	'the feeder''s role cannot call set_consumer_position');
SELECT throws_ok($$SELECT received_orders.forget_consumer_positions('gf')$$,
	'42501', 'permission denied for function forget_consumer_positions',
	'the feeder''s role cannot call forget_consumer_positions');
RESET ROLE;

SET ROLE ro_test_stranger;
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('gs', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[1::bigint])$$,
	'42501', 'permission denied for function materialize_orders',
	'a role without EXECUTE cannot call the group overload');
SELECT throws_ok($$SELECT * FROM received_orders.consumer_positions('gf')$$,
	'42501', 'permission denied for function consumer_positions',
	'a role without EXECUTE cannot call consumer_positions');
SELECT throws_ok($$SELECT received_orders.restart_position('gf', 'orders', 4, 41, 0)$$,
	'42501', 'permission denied for function restart_position',
	'a role without EXECUTE cannot call restart_position');
SELECT throws_ok($$SELECT received_orders.set_consumer_position('gs', 'orders', 0, 0)$$,
	'42501', 'permission denied for function set_consumer_position',
	'a role without EXECUTE cannot call set_consumer_position');
SELECT throws_ok($$SELECT received_orders.forget_consumer_positions('gf')$$,
	'42501', 'permission denied for function forget_consumer_positions',
	'a role without EXECUTE cannot call forget_consumer_positions');
RESET ROLE;

-- search_path capture ----------------------------------------------------------------------------
-- The feeder's role shadows the positions table with a temp table (pg_temp is
-- on the pinned path) and puts pg_temp first on its own path.

SET ROLE ro_test_feeder;
CREATE TEMP TABLE received_orders_positions (
	consumer_group text, kafka_topic text, kafka_partition integer, next_offset bigint,
	updated_at timestamptz DEFAULT now());
INSERT INTO pg_temp.received_orders_positions VALUES ('gf', 'orders', 4, 1000, now());
CREATE TEMP TABLE captured (call text, detail text);
SET search_path = pg_temp, pg_catalog, public;
DO $$
BEGIN
	INSERT INTO pg_temp.captured
		SELECT 'batch', r.outcome::text
		  FROM received_orders.materialize_orders('gf', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[4], ARRAY[60::bigint]) r;
	INSERT INTO pg_temp.captured
		SELECT 'restart', received_orders.restart_position('gf', 'orders', 4, 61, 50)::text;
	INSERT INTO pg_temp.captured
		SELECT 'read', p.kafka_topic || ' [' || p.kafka_partition || '] @' || p.next_offset
		  FROM received_orders.consumer_positions('gf') p;
EXCEPTION WHEN OTHERS THEN
	INSERT INTO pg_temp.captured VALUES ('error ' || SQLSTATE, SQLERRM);
END
$$;
RESET search_path;
RESET ROLE;

SELECT results_eq(
	$$SELECT call, detail FROM pg_temp.captured$$,
	$$VALUES ('batch'::text, 'skipped'::text), ('restart', 'true'), ('read', 'orders [4] @50')$$,
	'under a hostile search_path the group overload, restart_position and consumer_positions use the real table');
SELECT results_eq(
	$$SELECT consumer_group, kafka_topic, kafka_partition, next_offset FROM pg_temp.received_orders_positions$$,
	$$VALUES ('gf'::text, 'orders'::text, 4, 1000::bigint)$$,
	'the caller''s temp table named received_orders_positions is left untouched');

SELECT * FROM finish();
ROLLBACK;
