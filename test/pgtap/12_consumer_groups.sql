-- 12_consumer_groups.sql — a consumer group's positions
-- belong to a role, and to one Kafka cluster.  The table
-- received_orders_consumer_groups and the functions check_consumer_group,
-- consumer_positions(group, cluster) and set_consumer_group_owner as the
-- contract says; a feeder's role cannot move (forwards with NULL values
-- through the batch function, backwards with restart_position) nor read
-- another role's group's positions, and can its own; a role granted the
-- owner's privileges can, a superuser can (and claims nothing); an unclaimed
-- group without positions is claimed by the first role that uses it, one
-- with positions waits for set_consumer_group_owner; an owner that does not
-- exist locks the group to superusers; set_consumer_group_owner hands a group
-- over.  The cluster: the first id is recorded, the same one passes, another
-- one is refused (55000, with a hint naming forget_consumer_positions), and
-- forget_consumer_positions(group) forgets it.
--
-- Errors' details and hints are read through pg_temp.caught.  Roles are
-- created inside the transaction and rolled back.

BEGIN;
SELECT plan(66);

SET LOCAL client_min_messages = error;

-- Two feeders of two groups, each with the documented grant, and a role a DBA
-- lets act for the first (GRANT ro_cg_a TO ro_cg_c).
CREATE ROLE ro_cg_a NOLOGIN;
CREATE ROLE ro_cg_b NOLOGIN;
CREATE ROLE ro_cg_c NOLOGIN;
GRANT USAGE ON SCHEMA received_orders TO ro_cg_a, ro_cg_b, ro_cg_c;
GRANT EXECUTE ON FUNCTION
	received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]),
	received_orders.consumer_positions(text),
	received_orders.consumer_positions(text, text),
	received_orders.restart_position(text, text, integer, bigint, bigint)
	TO ro_cg_a, ro_cg_b, ro_cg_c;

-- The SQLSTATE, message, detail and hint of a statement's error, or NULL.
CREATE FUNCTION pg_temp.caught(statement text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	state text;
	msg text;
	detail text;
	hint text;
BEGIN
	EXECUTE statement;
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
		detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
	RETURN ARRAY[state, msg, detail, hint];
END
$$;

-- Structure -------------------------------------------------------------------

SELECT has_table('received_orders', 'received_orders_consumer_groups',
	'table received_orders.received_orders_consumer_groups exists');
SELECT columns_are('received_orders', 'received_orders_consumer_groups',
	ARRAY['consumer_group', 'owner_role', 'kafka_cluster_id', 'created_at', 'updated_at',
	      'owner_set_by', 'owner_set_at']::name[],
	'received_orders_consumer_groups has exactly the columns consumer_group, owner_role, kafka_cluster_id, created_at, updated_at, owner_set_by, owner_set_at');
SELECT col_is_pk('received_orders', 'received_orders_consumer_groups', 'consumer_group',
	'consumer_group is its primary key');
SELECT col_type_is('received_orders', 'received_orders_consumer_groups', 'owner_role', 'name',
	'owner_role is a role name (not an oid: it survives a dump and restore elsewhere)');
SELECT ok(
	'received_orders.received_orders_consumer_groups'::regclass::oid OPERATOR(pg_catalog.=) ANY (
		(SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'received_orders')::oid[]),
	'received_orders_consumer_groups is marked in pg_extension.extconfig (dumped by pg_dump)');
SELECT table_privs_are('received_orders', 'received_orders_consumer_groups', 'public', '{}'::text[],
	'PUBLIC has no privilege on received_orders_consumer_groups');
SELECT has_function('received_orders', 'check_consumer_group', ARRAY['text', 'text'],
	'function received_orders.check_consumer_group(text, text) exists');
SELECT has_function('received_orders', 'consumer_positions', ARRAY['text', 'text'],
	'function received_orders.consumer_positions(text, text) exists');
SELECT is(
	pg_catalog.pg_get_function_result('received_orders.consumer_positions(text, text)'::regprocedure),
	pg_catalog.pg_get_function_result('received_orders.consumer_positions(text)'::regprocedure),
	'consumer_positions(group, cluster) returns what consumer_positions(group) does');
SELECT has_function('received_orders', 'set_consumer_group_owner', ARRAY['text', 'name'],
	'function received_orders.set_consumer_group_owner(text, name) exists');
SELECT is_empty(
	$$SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
	   WHERE p.oid IN ('received_orders.check_consumer_group(text, text)'::regprocedure,
	                   'received_orders.consumer_positions(text, text)'::regprocedure,
	                   'received_orders.set_consumer_group_owner(text, name)'::regprocedure)
	     AND (NOT p.prosecdef
	          OR pg_catalog.array_remove(p.proconfig, 'plan_cache_mode=force_generic_plan')
	             IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}'::text[]
	          OR pg_catalog.has_function_privilege('public', p.oid, 'EXECUTE'))$$,
	'the three new functions are SECURITY DEFINER, pin search_path, and PUBLIC cannot EXECUTE them');

-- A feeder's own group --------------------------------------------------------

SET ROLE ro_cg_a;
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('ga',
	    ARRAY[convert_to('{"orderId": "e1100000-0000-4000-8000-0000000000a1", "externalReference": "ref-a1"}', 'UTF8')],
	    ARRAY['orders'], ARRAY[0], ARRAY[10]::bigint[])$$,
	$$VALUES ('inserted'::text)$$,
	'a feeder''s role materializes a batch of a new group');
RESET ROLE;
SELECT results_eq(
	$$SELECT owner_role::text COLLATE "default", kafka_cluster_id FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'ga'$$,
	$$VALUES ('ro_cg_a'::text, NULL::text)$$,
	'its first batch claimed the group for the role');
SET ROLE ro_cg_a;
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('ga')$$,
	$$VALUES ('orders'::text, 0, 11::bigint)$$,
	'the owner reads its group''s positions');
SELECT is(received_orders.restart_position('ga', 'orders', 0, 11, 5), true,
	'the owner moves its group''s position back');
SELECT results_eq(
	$$SELECT "position", outcome::text FROM received_orders.materialize_orders('ga', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[11]::bigint[])$$,
	$$VALUES (1, 'skipped'::text)$$,
	'the owner moves its group''s position forwards with a NULL value');
RESET ROLE;

CREATE TEMP TABLE snapshot_ga AS
	SELECT * FROM received_orders.received_orders_positions WHERE consumer_group = 'ga';

-- Another feeder's role -------------------------------------------------------

SET ROLE ro_cg_b;
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('ga', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[1000000]::bigint[])$$,
	'42501', 'permission denied for consumer group "ga"',
	'another role cannot move the group''s positions forwards with a NULL value');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('ga', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[7], ARRAY[5]::bigint[])$$,
	'42501', 'permission denied for consumer group "ga"',
	'another role cannot add a position to the group');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('ga', ARRAY[]::bytea[], ARRAY[]::text[], ARRAY[]::integer[], ARRAY[]::bigint[])$$,
	'42501', 'permission denied for consumer group "ga"',
	'another role cannot call the batch function of the group even with no message');
SELECT throws_ok(
	$$SELECT received_orders.restart_position('ga', 'orders', 0, 12, 0)$$,
	'42501', 'permission denied for consumer group "ga"',
	'another role cannot move the group''s positions backwards with restart_position');
SELECT throws_ok(
	$$SELECT * FROM received_orders.consumer_positions('ga')$$,
	'42501', 'permission denied for consumer group "ga"',
	'another role cannot read the group''s positions');
SELECT throws_ok(
	$$SELECT * FROM received_orders.consumer_positions('ga', 'cluster-1')$$,
	'42501', 'permission denied for consumer group "ga"',
	'another role cannot read the group''s positions with a cluster id either');
SELECT is(
	pg_temp.caught($$SELECT * FROM received_orders.consumer_positions('ga')$$),
	ARRAY['42501', 'permission denied for consumer group "ga"',
	      'The group''s positions belong to role "ro_cg_a"; role "ro_cg_b" does not have its privileges.',
	      'Use another consumer group, or have a superuser grant the owner''s privileges (GRANT ro_cg_a TO ro_cg_b) or hand the group over (SELECT received_orders.set_consumer_group_owner(''ga'', ''ro_cg_b'')).'],
	'the refusal names the owner and says what a DBA runs');
SELECT throws_ok(
	$$SELECT received_orders.check_consumer_group('ga')$$,
	'42501', 'permission denied for function check_consumer_group',
	'a feeder''s role cannot call check_consumer_group itself');
SELECT throws_ok(
	$$SELECT received_orders.set_consumer_group_owner('ga', 'ro_cg_b')$$,
	'42501', 'permission denied for function set_consumer_group_owner',
	'a feeder''s role cannot take a group over');
SELECT throws_ok(
	$$UPDATE received_orders.received_orders_consumer_groups SET owner_role = 'ro_cg_b'$$,
	'42501', NULL, 'a feeder''s role cannot UPDATE received_orders_consumer_groups');
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('gb', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[3]::bigint[])$$,
	$$VALUES ('skipped'::text)$$,
	'the other role uses a group of its own');
RESET ROLE;

SELECT results_eq(
	$$SELECT * FROM received_orders.received_orders_positions WHERE consumer_group = 'ga' ORDER BY kafka_topic, kafka_partition$$,
	$$SELECT * FROM pg_temp.snapshot_ga ORDER BY kafka_topic, kafka_partition$$,
	'no refused call changed the group''s positions');
SELECT results_eq(
	$$SELECT consumer_group, owner_role::text COLLATE "default" FROM received_orders.received_orders_consumer_groups WHERE consumer_group IN ('ga', 'gb') ORDER BY 1$$,
	$$VALUES ('ga'::text, 'ro_cg_a'::text), ('gb', 'ro_cg_b')$$,
	'each group belongs to its own role');

-- Granted, superuser ----------------------------------------------------------

GRANT ro_cg_a TO ro_cg_c;
SET ROLE ro_cg_c;
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('ga')$$,
	$$VALUES ('orders'::text, 0, 12::bigint)$$,
	'a role granted the owner''s privileges reads the group''s positions');
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('ga', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[20]::bigint[])$$,
	$$VALUES ('skipped'::text)$$,
	'a role granted the owner''s privileges moves the group''s positions');
RESET ROLE;
REVOKE ro_cg_a FROM ro_cg_c;
SET ROLE ro_cg_c;
SELECT throws_ok(
	$$SELECT * FROM received_orders.consumer_positions('ga')$$,
	'42501', 'permission denied for consumer group "ga"',
	'once the grant is revoked, that role is refused again');
RESET ROLE;

SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('ga', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[21]::bigint[])$$,
	$$VALUES ('skipped'::text)$$,
	'a superuser moves any group''s positions');
SELECT is((SELECT owner_role::text FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'ga'),
	'ro_cg_a', 'a superuser''s batch leaves the owner as it was');
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('g-super', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[1]::bigint[])$$,
	$$VALUES ('skipped'::text)$$,
	'a superuser writes a new group');
SELECT is_empty(
	$$SELECT FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'g-super' AND owner_role IS NOT NULL$$,
	'a superuser claims no group');

-- Unclaimed groups (as the 1.1--1.2 update script leaves them), missing owners

INSERT INTO received_orders.received_orders_consumer_groups (consumer_group) VALUES ('gu');
SELECT received_orders.set_consumer_position('gu', 'orders', 0, 40);
SET ROLE ro_cg_b;
SELECT throws_ok(
	$$SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('gu')$$,
	'42501', 'permission denied for consumer group "gu"',
	'an unclaimed group with positions is not claimed by the first role that asks (16_hostile_roles.sql)');
RESET ROLE;
SELECT received_orders.set_consumer_group_owner('gu', 'ro_cg_b');
SELECT is((SELECT owner_role::text FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'gu'),
	'ro_cg_b', 'a superuser names its owner');
SET ROLE ro_cg_a;
SELECT throws_ok(
	$$SELECT received_orders.restart_position('gu', 'orders', 0, 40, 0)$$,
	'42501', 'permission denied for consumer group "gu"',
	'the next role is refused');
SELECT throws_ok(
	$$SELECT outcome::text FROM received_orders.materialize_orders('g-super', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[2]::bigint[])$$,
	'42501', 'permission denied for consumer group "g-super"',
	'a group only a superuser wrote is not claimed by the first role after it');
RESET ROLE;

UPDATE received_orders.received_orders_consumer_groups SET owner_role = 'ro_cg_no_such_role' WHERE consumer_group = 'gu';
SET ROLE ro_cg_b;
SELECT is(
	pg_temp.caught($$SELECT * FROM received_orders.consumer_positions('gu')$$),
	ARRAY['42501', 'permission denied for consumer group "gu"',
	      'The group''s positions belong to role "ro_cg_no_such_role", which does not exist.',
	      'A superuser can hand the group over: SELECT received_orders.set_consumer_group_owner(''gu'', ''ro_cg_b'');'],
	'a group whose owner does not exist is refused, with the hand-over as hint');
RESET ROLE;

-- set_consumer_group_owner ----------------------------------------------------

SELECT is(received_orders.set_consumer_group_owner('gu', 'ro_cg_b'), 'ro_cg_no_such_role'::name,
	'set_consumer_group_owner returns the previous owner');
SET ROLE ro_cg_b;
SELECT is(received_orders.restart_position('gu', 'orders', 0, 40, 30), true,
	'the new owner moves the group''s position');
RESET ROLE;
SELECT is(received_orders.set_consumer_group_owner('ga', 'ro_cg_b'), 'ro_cg_a'::name,
	'a superuser hands a claimed group to another role');
SET ROLE ro_cg_a;
SELECT throws_ok($$SELECT * FROM received_orders.consumer_positions('ga')$$,
	'42501', 'permission denied for consumer group "ga"',
	'the previous owner is refused afterwards');
RESET ROLE;
SET ROLE ro_cg_b;
SELECT lives_ok($$SELECT * FROM received_orders.consumer_positions('ga')$$,
	'the new owner reads it');
RESET ROLE;
SELECT is(received_orders.set_consumer_group_owner('g-new', NULL), NULL::name,
	'set_consumer_group_owner of a group without a row returns NULL');
SELECT throws_ok($$SELECT received_orders.set_consumer_group_owner('ga', 'ro_cg_no_such_role')$$,
	'42704', 'role "ro_cg_no_such_role" does not exist',
	'set_consumer_group_owner refuses a role that does not exist');

-- The Kafka cluster -----------------------------------------------------------

SET ROLE ro_cg_a;
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders('gk', ARRAY[NULL::bytea], ARRAY['orders'], ARRAY[0], ARRAY[99]::bigint[])$$,
	$$VALUES ('skipped'::text)$$,
	'a batch of a new group, without a cluster');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('gk', 'cluster-one')$$,
	$$VALUES ('orders'::text, 0, 100::bigint)$$,
	'the first cluster id passes and the positions are read');
RESET ROLE;
SELECT is((SELECT kafka_cluster_id FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'gk'),
	'cluster-one', 'the first cluster id is recorded');
SET ROLE ro_cg_a;
SELECT lives_ok($$SELECT * FROM received_orders.consumer_positions('gk', 'cluster-one')$$,
	'the same cluster id passes again');
SELECT throws_ok($$SELECT * FROM received_orders.consumer_positions('gk', 'cluster-two')$$,
	'55000', 'consumer group "gk" has positions of another Kafka cluster',
	'another cluster id is refused with 55000');
SELECT is(
	pg_temp.caught($$SELECT * FROM received_orders.consumer_positions('gk', 'cluster-two')$$),
	ARRAY['55000', 'consumer group "gk" has positions of another Kafka cluster',
	      'Its positions were taken on the Kafka cluster with id "cluster-one"; the caller is connected to the cluster with id "cluster-two".',
	      'If the group really moved to that cluster, its positions do not apply there: forget them with SELECT received_orders.forget_consumer_positions(''gk''); or use another consumer group. Otherwise, point the feeder at the group''s cluster.'],
	'the refusal names both clusters and says what to do');
SELECT throws_ok($$SELECT * FROM received_orders.consumer_positions('gk', NULL)$$,
	'22004', NULL, 'consumer_positions with a NULL cluster id raises 22004 (never an empty answer)');
SELECT throws_ok($$SELECT * FROM received_orders.consumer_positions('gk', '')$$,
	'22023', NULL, 'an empty cluster id is refused');
SELECT lives_ok($$SELECT * FROM received_orders.consumer_positions('gk')$$,
	'consumer_positions(group) of 1.1 still reads the positions (no cluster check)');
RESET ROLE;
SELECT is((SELECT kafka_cluster_id FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'gk'),
	'cluster-one', 'the refused cluster id was not recorded');
SELECT is(received_orders.forget_consumer_positions('gk', 'orders'), 1::bigint,
	'forget_consumer_positions of one topic');
SELECT is((SELECT kafka_cluster_id FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'gk'),
	'cluster-one', 'forgetting one topic keeps the cluster');
SELECT is(received_orders.forget_consumer_positions('gk'), 0::bigint,
	'forget_consumer_positions of the whole group');
SELECT results_eq(
	$$SELECT owner_role::text COLLATE "default", kafka_cluster_id FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'gk'$$,
	$$VALUES ('ro_cg_a'::text, NULL::text)$$,
	'forgetting the whole group forgets its cluster and keeps its owner');
SET ROLE ro_cg_a;
SELECT lives_ok($$SELECT * FROM received_orders.consumer_positions('gk', 'cluster-two')$$,
	'then the other cluster passes');
RESET ROLE;
SELECT is((SELECT kafka_cluster_id FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'gk'),
	'cluster-two', 'and is recorded');
SET ROLE ro_cg_b;
SELECT lives_ok($$SELECT * FROM received_orders.consumer_positions('g-fresh', 'cluster-x')$$,
	'a new group read with a cluster id is claimed and bound at once');
RESET ROLE;
SELECT results_eq(
	$$SELECT owner_role::text COLLATE "default", kafka_cluster_id FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'g-fresh'$$,
	$$VALUES ('ro_cg_b'::text, 'cluster-x'::text)$$,
	'its row holds the role and the cluster');

SELECT * FROM finish();
ROLLBACK;
