-- 19_feeder_errors.sql — a monitoring role reads a feeder's last error as a
-- class, never the text of a message.
--
-- A feeder's last error quotes what it was about (a value the database
-- could not read, an order's externalReference).  The view feeders, which
-- pg_monitor reads, shows in last_error the class of the error: its text
-- before the first double quote, with UUIDs and numbers masked, "..." where
-- the quoted part was (the rule of quarantine_summary).  The whole text is
-- in the view feeder_errors, which pg_monitor and PUBLIC cannot read and
-- the extension's owner (or a role a DBA grants it to) can.
--
-- Errors are read through pg_temp.caught.  Roles are created inside the
-- transaction and rolled back.

BEGIN;
SELECT plan(13);

SET LOCAL client_min_messages = error;

CREATE ROLE ro_fe_mon NOLOGIN IN ROLE pg_monitor;
CREATE ROLE ro_fe_nobody NOLOGIN;
CREATE ROLE ro_fe_dba NOLOGIN;

-- The SQLSTATE of a statement's error, or NULL.
CREATE FUNCTION pg_temp.caught(statement text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE statement;
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	RETURN SQLSTATE;
END
$$;

INSERT INTO received_orders.received_orders_feeders
	(consumer_group, member_id, host, pid, version, started_at, last_seen, state,
	 kafka_topics, kafka_partitions, high_watermarks, last_error, last_error_at, report_interval)
VALUES ('gfe', 'm1', 'h', 1, '1.3.0', now(), now(), 'paused: database', '{}', '{}', '{}',
        'database unreachable: order 19000000-0000-4000-8000-000000000001 is already stored with externalReference "EXT-jane.doe@example.com"; this event has "EXT-4111 1111"',
        now(), interval '10 seconds'),
       ('gfe', 'm2', 'h', 2, '1.3.0', now(), now(), 'paused: database', '{}', '{}', '{}',
        'database unreachable: invalid input syntax for type uuid: "ORD-jane"',
        now(), interval '10 seconds'),
       ('gfe', 'm3', 'h', 3, '1.3.0', now(), now(), 'paused: database', '{}', '{}', '{}',
        'stalled: 120 messages wait on orders [3] and no batch committed for 45 s',
        now(), interval '10 seconds'),
       ('gfe', 'm4', 'h', 4, '1.3.0', now(), now(), 'running', '{}', '{}', '{}',
        NULL, NULL, interval '10 seconds');

-- Structure -------------------------------------------------------------------

SELECT has_view('received_orders', 'feeder_errors', 'view received_orders.feeder_errors exists');
SELECT columns_are('received_orders', 'feeders',
	ARRAY['consumer_group', 'member_id', 'host', 'pid', 'version', 'started_at', 'last_seen',
	      'last_seen_age', 'state', 'healthy', 'assigned_partitions', 'partitions',
	      'last_error', 'last_error_at', 'report_interval']::name[],
	'feeders keeps its columns');
SELECT columns_are('received_orders', 'feeder_errors',
	ARRAY['consumer_group', 'member_id', 'host', 'state', 'last_error', 'last_error_at']::name[],
	'feeder_errors has the member, its state and its whole last error');
SELECT ok(has_table_privilege('pg_monitor', 'received_orders.feeders', 'SELECT'),
	'pg_monitor reads feeders');
SELECT ok(NOT has_table_privilege('pg_monitor', 'received_orders.feeder_errors', 'SELECT'),
	'pg_monitor cannot read feeder_errors');
SELECT ok(NOT has_table_privilege('ro_fe_nobody', 'received_orders.feeder_errors', 'SELECT'),
	'PUBLIC cannot read feeder_errors');

-- What a monitoring role reads ------------------------------------------------

SET ROLE ro_fe_mon;
SELECT results_eq(
	$$SELECT member_id, last_error FROM received_orders.feeders
	   WHERE consumer_group = 'gfe' ORDER BY member_id$$,
	$$VALUES ('m1'::text, 'database unreachable: order <uuid> is already stored with externalReference "..."'::text),
	         ('m2', 'database unreachable: invalid input syntax for type uuid: "..."'),
	         ('m3', 'stalled: N messages wait on orders [N] and no batch committed for N s'),
	         ('m4', NULL)$$,
	'pg_monitor reads each last error as its class: the text before the first double quote, UUIDs and numbers masked');
SELECT is_empty(
	$$SELECT f.member_id FROM received_orders.feeders f
	   WHERE f::text LIKE '%jane%' OR f::text LIKE '%4111%' OR f::text LIKE '%19000000-0000%'$$,
	'no row of feeders shows pg_monitor a quoted value, an externalReference or an order id');
SELECT is(
	(SELECT count(*) FROM received_orders.feeders WHERE consumer_group = 'gfe' AND last_error_at IS NOT NULL),
	3::bigint,
	'pg_monitor still reads when each last error happened');
SELECT is(pg_temp.caught($$SELECT * FROM received_orders.feeder_errors$$), '42501',
	'pg_monitor is refused feeder_errors (42501)');
RESET ROLE;

-- What the DBA reads ----------------------------------------------------------------

SELECT results_eq(
	$$SELECT member_id, last_error FROM received_orders.feeder_errors
	   WHERE consumer_group = 'gfe' ORDER BY member_id$$,
	$$VALUES ('m1'::text, 'database unreachable: order 19000000-0000-4000-8000-000000000001 is already stored with externalReference "EXT-jane.doe@example.com"; this event has "EXT-4111 1111"'::text),
	         ('m2', 'database unreachable: invalid input syntax for type uuid: "ORD-jane"'),
	         ('m3', 'stalled: 120 messages wait on orders [3] and no batch committed for 45 s')$$,
	'the owner reads each whole last error in feeder_errors (members without one are left out)');
GRANT USAGE ON SCHEMA received_orders TO ro_fe_dba;
GRANT SELECT ON received_orders.feeder_errors TO ro_fe_dba;
SET ROLE ro_fe_dba;
SELECT is(
	(SELECT last_error FROM received_orders.feeder_errors WHERE member_id = 'm2'),
	'database unreachable: invalid input syntax for type uuid: "ORD-jane"',
	'a role a DBA grants feeder_errors to reads the whole text');
SELECT is(pg_temp.caught($$SELECT * FROM received_orders.received_orders_feeders$$), '42501',
	'... and not the table behind it (42501)');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
