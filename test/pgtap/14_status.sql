-- 14_status.sql — status from SQL.  The
-- table received_orders_feeders (runtime state: not dumped), the positions'
-- high watermark columns, report_feeder and record_high_watermarks as the
-- contract says; pg_monitor reads the views feeders, consumer_lag and
-- quarantine_summary but not the tables, PUBLIC reads nothing; a feeder's
-- role reports only its own group's members and records only its own
-- group's watermarks; report_feeder removes the group's members not seen for
-- keep_for; the views' results on hand-made data: healthy within three
-- intervals, the owner of a partition is the healthy member that lists it,
-- lag from the greater of the position's and the owner's watermark.
--
-- Roles are created inside the transaction and rolled back.

BEGIN;
SELECT plan(45);

SET LOCAL client_min_messages = error;

CREATE ROLE ro_st_a NOLOGIN;
CREATE ROLE ro_st_b NOLOGIN;
CREATE ROLE ro_st_mon NOLOGIN IN ROLE pg_monitor;
CREATE ROLE ro_st_nobody NOLOGIN;
GRANT USAGE ON SCHEMA received_orders TO ro_st_a, ro_st_b;
GRANT EXECUTE ON FUNCTION
	received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]),
	received_orders.report_feeder(text, text, text, integer, text, timestamptz, text, text[], integer[], bigint[], text, timestamptz, interval, interval),
	received_orders.record_high_watermarks(text, text, text[], integer[], bigint[])
	TO ro_st_a, ro_st_b;

-- Structure -------------------------------------------------------------------

SELECT has_table('received_orders', 'received_orders_feeders',
	'table received_orders.received_orders_feeders exists');
SELECT columns_are('received_orders', 'received_orders_feeders',
	ARRAY['consumer_group', 'member_id', 'host', 'pid', 'version', 'started_at', 'last_seen',
	      'state', 'kafka_topics', 'kafka_partitions', 'high_watermarks', 'last_error',
	      'last_error_at', 'report_interval']::name[],
	'received_orders_feeders has exactly the columns of a member''s report');
SELECT col_is_pk('received_orders', 'received_orders_feeders',
	ARRAY['consumer_group', 'member_id']::name[],
	'its primary key is (consumer_group, member_id)');
SELECT ok(
	NOT ('received_orders.received_orders_feeders'::regclass::oid OPERATOR(pg_catalog.=) ANY (
		(SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'received_orders')::oid[])),
	'received_orders_feeders is runtime state: not marked for pg_dump');
SELECT col_type_is('received_orders', 'received_orders_positions', 'high_watermark', 'bigint',
	'received_orders_positions.high_watermark is bigint');
SELECT col_type_is('received_orders', 'received_orders_positions', 'high_watermark_at', 'timestamp with time zone',
	'received_orders_positions.high_watermark_at is timestamptz');
SELECT col_type_is('received_orders', 'received_orders_positions', 'member_id', 'text',
	'received_orders_positions.member_id is text');
SELECT views_are('received_orders', ARRAY['feeders', 'consumer_lag', 'quarantine_summary', 'quarantine_examples', 'position_gaps', 'feeder_errors']::name[],
	'schema received_orders holds exactly the views feeders, consumer_lag, quarantine_summary, quarantine_examples, position_gaps and feeder_errors');
SELECT has_function('received_orders', 'report_feeder',
	ARRAY['text', 'text', 'text', 'integer', 'text', 'timestamp with time zone', 'text', 'text[]',
	      'integer[]', 'bigint[]', 'text', 'timestamp with time zone', 'interval', 'interval'],
	'function received_orders.report_feeder(...) exists');
SELECT has_function('received_orders', 'record_high_watermarks',
	ARRAY['text', 'text', 'text[]', 'integer[]', 'bigint[]'],
	'function received_orders.record_high_watermarks(text, text, text[], integer[], bigint[]) exists');
SELECT is_empty(
	$$SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
	   WHERE p.proname IN ('report_feeder', 'record_high_watermarks')
	     AND p.pronamespace = 'received_orders'::regnamespace
	     AND (NOT p.prosecdef
	          OR p.proconfig IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}'::text[]
	          OR pg_catalog.has_function_privilege('public', p.oid, 'EXECUTE'))$$,
	'both new functions are SECURITY DEFINER, pin search_path, and PUBLIC cannot EXECUTE them');

-- Privileges ------------------------------------------------------------------

SELECT table_privs_are('received_orders', 'received_orders_feeders', 'public', '{}'::text[],
	'PUBLIC has no privilege on received_orders_feeders');
SELECT table_privs_are('received_orders', 'received_orders_feeders', 'pg_monitor', '{}'::text[],
	'pg_monitor has no privilege on the table received_orders_feeders');
SELECT table_privs_are('received_orders', 'feeders', 'pg_monitor', ARRAY['SELECT'],
	'pg_monitor may SELECT from feeders, nothing else');
SELECT table_privs_are('received_orders', 'consumer_lag', 'pg_monitor', ARRAY['SELECT'],
	'pg_monitor may SELECT from consumer_lag, nothing else');
SELECT table_privs_are('received_orders', 'quarantine_summary', 'pg_monitor', ARRAY['SELECT'],
	'pg_monitor may SELECT from quarantine_summary, nothing else');
SELECT is_empty(
	$$SELECT c.relname FROM pg_catalog.pg_class c
	   WHERE c.relnamespace = 'received_orders'::regnamespace AND c.relkind = 'v'
	     AND pg_catalog.has_table_privilege('public', c.oid, 'SELECT')$$,
	'PUBLIC cannot SELECT from any of the views');

-- A feeder's role reports itself ---------------------------------------------

SET ROLE ro_st_a;
SELECT is(received_orders.report_feeder('gs', 'host-1:101:1', 'host-1', 101, '1.2.0',
		now() - interval '1 hour', 'running', ARRAY['orders', 'orders'], ARRAY[0, 1],
		ARRAY[100, 50]::bigint[], NULL, NULL, interval '10 seconds'),
	0::bigint, 'a feeder''s role reports a member of its group (nothing to remove)');
SELECT is(received_orders.report_feeder('gs', 'host-2:202:1', 'host-2', 202, '1.2.0',
		now() - interval '1 hour', 'paused: database', ARRAY['orders'], ARRAY[2],
		ARRAY[NULL]::bigint[], 'could not connect', now() - interval '5 seconds', interval '10 seconds'),
	0::bigint, 'and a second member');
SELECT is(received_orders.report_feeder('gs', 'host-2:202:1', 'host-2', 202, '1.2.0',
		now() - interval '1 hour', 'running', ARRAY['orders'], ARRAY[2],
		ARRAY[30]::bigint[], 'could not connect', now() - interval '5 seconds', interval '10 seconds'),
	0::bigint, 'a member reports again');
RESET ROLE;
SELECT results_eq(
	$$SELECT member_id, state, high_watermarks FROM received_orders.received_orders_feeders
	   WHERE consumer_group = 'gs' ORDER BY member_id$$,
	$$VALUES ('host-1:101:1'::text, 'running'::text, ARRAY[100, 50]::bigint[]),
	         ('host-2:202:1', 'running', ARRAY[30]::bigint[])$$,
	'one row per member, the latest report replacing the former');
SELECT results_eq(
	$$SELECT owner_role::text COLLATE "default" FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'gs'$$,
	$$VALUES ('ro_st_a'::text)$$,
	'the first report claimed the group for the role');

SET ROLE ro_st_b;
SELECT throws_ok(
	$$SELECT received_orders.report_feeder('gs', 'host-1:101:1', 'evil', 1, 'x', now(), 'stopped',
		NULL, NULL, NULL, NULL, NULL, interval '1 second')$$,
	'42501', 'permission denied for consumer group "gs"',
	'another role cannot write the group''s member rows');
SELECT throws_ok(
	$$SELECT received_orders.report_feeder('gs', 'evil', 'evil', 1, 'x', now(), 'running',
		NULL, NULL, NULL, NULL, NULL, interval '1 second', interval '0 seconds')$$,
	'42501', 'permission denied for consumer group "gs"',
	'nor add a member to it, nor remove its members');
SELECT throws_ok(
	$$SELECT received_orders.record_high_watermarks('gs', 'evil', ARRAY['orders'], ARRAY[0], ARRAY[1]::bigint[])$$,
	'42501', 'permission denied for consumer group "gs"',
	'nor record the group''s high watermarks');
SELECT throws_ok(
	$$SELECT * FROM received_orders.received_orders_feeders$$,
	'42501', NULL, 'a feeder''s role cannot read the table directly');
RESET ROLE;
SELECT results_eq(
	$$SELECT count(*)::int, count(*) FILTER (WHERE host = 'evil')::int FROM received_orders.received_orders_feeders$$,
	$$VALUES (2, 0)$$, 'the group''s rows are unchanged');

SET ROLE ro_st_a;
SELECT throws_ok(
	$$SELECT received_orders.report_feeder('gs', 'm', 'h', 1, 'x', now(), 'asleep',
		NULL, NULL, NULL, NULL, NULL, interval '1 second')$$,
	'23514', NULL, 'a state /healthz does not know is refused');
SELECT throws_ok(
	$$SELECT received_orders.report_feeder('gs', 'm', 'h', 1, 'x', now(), 'running',
		ARRAY['orders'], ARRAY[0, 1], ARRAY[1, 2]::bigint[], NULL, NULL, interval '1 second')$$,
	'2202E', NULL, 'partitions and watermarks must have one element per partition');
RESET ROLE;

-- Positions with high watermarks, in a batch's transaction -------------------

SET ROLE ro_st_a;
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('gs',
	    ARRAY[NULL::bytea, NULL, NULL], ARRAY['orders', 'orders', 'orders'], ARRAY[0, 1, 2],
	    ARRAY[89, 49, 19]::bigint[])$$,
	$$VALUES ('skipped'::text), ('skipped'), ('skipped')$$,
	'a batch moves three positions (to 90, 50, 20)');
SELECT is(received_orders.record_high_watermarks('gs', 'host-1:101:1',
		ARRAY['orders', 'orders', 'orders', 'other'], ARRAY[0, 1, 2, 0], ARRAY[95, 50, NULL, 7]::bigint[]),
	2, 'record_high_watermarks updates the positions it has a watermark of, and adds none');
RESET ROLE;
SELECT results_eq(
	$$SELECT kafka_partition, next_offset, high_watermark, member_id FROM received_orders.received_orders_positions
	   WHERE consumer_group = 'gs' ORDER BY kafka_partition$$,
	$$VALUES (0, 90::bigint, 95::bigint, 'host-1:101:1'::text), (1, 50, 50, 'host-1:101:1'),
	         (2, 20, NULL, NULL)$$,
	'each position holds its high watermark and the member that recorded it');

-- Views on hand-made data ------------------------------------------------------

-- a killed member: not seen for more than three of its intervals; it still
-- lists partition 2, which host-2 owns now
INSERT INTO received_orders.received_orders_feeders
	(consumer_group, member_id, host, pid, version, started_at, last_seen, state,
	 kafka_topics, kafka_partitions, high_watermarks, report_interval)
VALUES ('gs', 'host-3:303:1', 'host-3', 303, '1.2.0', now() - interval '2 hours',
        now() - interval '31 seconds', 'running', ARRAY['orders'], ARRAY[2], ARRAY[500]::bigint[],
        interval '10 seconds'),
       ('gs', 'host-4:404:1', 'host-4', 404, '1.2.0', now() - interval '2 hours',
        now() - interval '1 second', 'stopped', '{}', '{}', '{}', interval '10 seconds');

SET ROLE ro_st_mon;
SELECT results_eq(
	$$SELECT member_id, state, healthy, assigned_partitions, partitions, last_error
	    FROM received_orders.feeders ORDER BY member_id$$,
	$$VALUES ('host-1:101:1'::text, 'running'::text, true, 2, ARRAY['orders [0]', 'orders [1]'], NULL::text),
	         ('host-2:202:1', 'running', true, 1, ARRAY['orders [2]'], 'could not connect'),
	         ('host-3:303:1', 'running', false, 1, ARRAY['orders [2]'], NULL),
	         ('host-4:404:1', 'stopped', false, 0, NULL, NULL)$$,
	'pg_monitor reads feeders: healthy when reported within three intervals and not stopped');
SELECT results_eq(
	$$SELECT last_seen_age FROM received_orders.feeders WHERE member_id = 'host-3:303:1'$$,
	$$VALUES (interval '31 seconds')$$,
	'last_seen_age is the age of the last report');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, "position", high_watermark, lag, written_by, owner
	    FROM received_orders.consumer_lag WHERE consumer_group = 'gs' ORDER BY 1, 2$$,
	$$VALUES ('orders'::text, 0, 90::bigint, 100::bigint, 10::bigint, 'host-1:101:1'::text, 'host-1:101:1'::text),
	         ('orders', 1, 50, 50, 0, 'host-1:101:1', 'host-1:101:1'),
	         ('orders', 2, 20, 30, 10, NULL, 'host-2:202:1')$$,
	'pg_monitor reads consumer_lag: the greater watermark of position and owner, the healthy member as owner (not the killed one)');
RESET ROLE;

-- the owner reports a watermark older than the batch's: the batch's counts
UPDATE received_orders.received_orders_feeders SET high_watermarks = ARRAY[80, 50]
 WHERE member_id = 'host-1:101:1';
-- a partition assigned but without a position yet
UPDATE received_orders.received_orders_feeders
   SET kafka_topics = ARRAY['orders', 'orders'], kafka_partitions = ARRAY[2, 3], high_watermarks = ARRAY[30, 4]
 WHERE member_id = 'host-2:202:1';
SET ROLE ro_st_mon;
SELECT results_eq(
	$$SELECT kafka_partition, "position", high_watermark, lag, owner
	    FROM received_orders.consumer_lag WHERE consumer_group = 'gs' ORDER BY 1$$,
	$$VALUES (0, 90::bigint, 95::bigint, 5::bigint, 'host-1:101:1'::text),
	         (1, 50, 50, 0, 'host-1:101:1'),
	         (2, 20, 30, 10, 'host-2:202:1'),
	         (3, NULL, 4, NULL, 'host-2:202:1')$$,
	'the position''s watermark counts when newer; a partition without a position shows with no lag');
RESET ROLE;

-- the quarantine: three rejected messages, and two conflicts of two orders
-- whose reasons differ only in the order and its references
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders(
	    ARRAY['\xff'::bytea, '\xfe', convert_to('{"orderId": 1}', 'UTF8'),
	          convert_to('{"orderId": "e1400000-0000-4000-8000-000000000001", "externalReference": "A-1"}', 'UTF8'),
	          convert_to('{"orderId": "e1400000-0000-4000-8000-000000000002", "externalReference": "A-2"}', 'UTF8'),
	          convert_to('{"orderId": "e1400000-0000-4000-8000-000000000001", "externalReference": "B-1"}', 'UTF8'),
	          convert_to('{"orderId": "e1400000-0000-4000-8000-000000000002", "externalReference": "B-22"}', 'UTF8')],
	    ARRAY['q', 'q', 'q', 'q', 'q', 'q', 'q'], ARRAY[0, 0, 0, 0, 0, 0, 0],
	    ARRAY[1, 2, 3, 4, 5, 6, 7]::bigint[], NULL) ORDER BY position$$,
	$$VALUES ('rejected'::text), ('rejected'), ('rejected'), ('inserted'), ('inserted'),
	         ('conflict'), ('conflict')$$,
	'three messages rejected and two conflicting quarantined');
SET ROLE ro_st_mon;
SELECT results_eq(
	$$SELECT outcome::text, sum(messages)::int, min(oldest) <= max(newest)
	    FROM received_orders.quarantine_summary GROUP BY outcome ORDER BY outcome$$,
	$$VALUES ('conflict'::text, 2, true), ('rejected', 3, true)$$,
	'pg_monitor reads quarantine_summary: counts by outcome');
SELECT results_eq(
	$$SELECT sqlstate, reason, messages::int, topics::int
	    FROM received_orders.quarantine_summary WHERE outcome = 'conflict'$$,
	$$VALUES ('23505'::text,
	          'order <uuid> is already stored with externalReference "..."'::text,
	          2, 1)$$,
	'conflicts of different orders are one class of reason (UUIDs masked, nothing from the first quote on)');
RESET ROLE;
SELECT is(
	(SELECT sum(messages)::int FROM received_orders.quarantine_summary),
	(SELECT count(*)::int FROM received_orders.received_orders_quarantine),
	'every quarantined message is counted once');

SET ROLE ro_st_nobody;
SELECT throws_ok($$SELECT * FROM received_orders.feeders$$, '42501', NULL,
	'a role without pg_monitor cannot read feeders');
SELECT throws_ok($$SELECT * FROM received_orders.consumer_lag$$, '42501', NULL,
	'nor consumer_lag');
SELECT throws_ok($$SELECT * FROM received_orders.quarantine_summary$$, '42501', NULL,
	'nor quarantine_summary');
RESET ROLE;

-- Housekeeping -----------------------------------------------------------------

UPDATE received_orders.received_orders_feeders SET last_seen = now() - interval '8 days'
 WHERE member_id = 'host-3:303:1';
SET ROLE ro_st_a;
SELECT is(received_orders.report_feeder('gs', 'host-1:101:1', 'host-1', 101, '1.2.0',
		now() - interval '1 hour', 'running', NULL, NULL, NULL, NULL, NULL, interval '10 seconds'),
	1::bigint, 'a report removes the group''s members not seen for seven days');
RESET ROLE;
SELECT results_eq(
	$$SELECT member_id FROM received_orders.received_orders_feeders ORDER BY 1$$,
	$$VALUES ('host-1:101:1'::text), ('host-2:202:1'), ('host-4:404:1')$$,
	'the others stay');

SELECT * FROM finish();
ROLLBACK;
