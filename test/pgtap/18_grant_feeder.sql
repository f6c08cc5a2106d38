-- 18_grant_feeder.sql — received_orders.grant_feeder(role) gives a feeder's
-- role what the feeder calls, in one statement, and nothing more;
-- revoke_feeder(role) takes it back.
--
-- Kept in step with the schema: every function of the schema must be
-- listed below as a feeder's or as not a feeder's.  A new function or a new
-- overload (a fourth form of the batch function, say) fails the first
-- behaviour test until it is classified here, and, when it is a feeder's,
-- until feeder_functions() lists it too.  The role granted then holds
-- EXECUTE on exactly the feeder's functions, can call each of them (called
-- with NULL arguments: whatever their answer, never 42501) and no other
-- function of the schema (42501), and holds no privilege on any table,
-- view or sequence.  Granting twice changes nothing; a role that is neither
-- a superuser nor a member of the extension's owner is refused (42501),
-- even when granted EXECUTE on grant_feeder; revoke_feeder leaves USAGE on
-- the schema to a role that holds another privilege in it.
--
-- Errors are read through pg_temp.caught.  Roles are created inside the
-- transaction and rolled back.

BEGIN;
SELECT plan(30);

SET LOCAL client_min_messages = error;

CREATE ROLE ro_gf_feeder NOLOGIN;
CREATE ROLE ro_gf_app NOLOGIN;
CREATE ROLE ro_gf_dba NOLOGIN;
CREATE ROLE ro_gf_owners NOLOGIN;
CREATE ROLE ro_gf_nobody NOLOGIN;

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

-- A call of function F with a NULL of each argument's type.
CREATE FUNCTION pg_temp.call_with_nulls(f regprocedure) RETURNS text
LANGUAGE sql AS $$
	SELECT format('SELECT %s(%s)', p.oid::regproc,
	              coalesce((SELECT string_agg('NULL::' || format_type(t.typ, NULL), ', ' ORDER BY t.n)
	                          FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS t (typ, n)), ''))
	  FROM pg_proc p WHERE p.oid = f
$$;

-- The functions a feeder calls.
CREATE TEMPORARY TABLE feeder_list (f regprocedure PRIMARY KEY);
INSERT INTO feeder_list VALUES
	('received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[])'),
	('received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[])'),
	('received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[], bytea[], integer[], text[], uuid[])'),
	('received_orders.consumer_positions(text, text)'),
	('received_orders.restart_position(text, text, integer, bigint, bigint)'),
	('received_orders.report_feeder(text, text, text, integer, text, timestamptz, text, text[], integer[], bigint[], text, timestamptz, interval, interval)'),
	('received_orders.record_high_watermarks(text, text, text[], integer[], bigint[])'),
	('received_orders.record_position_gap(text, text, integer, bigint, bigint, boolean)'),
	('received_orders.advance_positions(text, text[], integer[], bigint[], bigint[])');

-- The functions a feeder does not call: the operators', the adoption's
-- (run once by a DBA's role), the groups' check and trigger, the batch
-- function without a group, the single event's, the replay's, these.
CREATE TEMPORARY TABLE not_feeder_list (f regprocedure PRIMARY KEY);
INSERT INTO not_feeder_list VALUES
	('received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[])'),
	('received_orders.materialize_order(jsonb)'),
	('received_orders.replay_quarantined(bigint)'),
	('received_orders.consumer_positions(text)'),
	('received_orders.set_consumer_position(text, text, integer, bigint)'),
	('received_orders.forget_consumer_positions(text, text)'),
	('received_orders.adopt_consumer_position(text, text, integer, bigint)'),
	('received_orders.set_consumer_group_owner(text, name)'),
	('received_orders.check_consumer_group(text, text)'),
	('received_orders.consumer_group_claim_check()'),
	('received_orders.accept_position_gap(text, text, integer)'),
	('received_orders.feeder_functions()'),
	('received_orders.grant_feeder(regrole)'),
	('received_orders.revoke_feeder(regrole)');

-- Structure -------------------------------------------------------------------

SELECT has_function('received_orders', 'grant_feeder', ARRAY['regrole'],
	'function received_orders.grant_feeder(regrole) exists');
SELECT has_function('received_orders', 'revoke_feeder', ARRAY['regrole'],
	'function received_orders.revoke_feeder(regrole) exists');
SELECT has_function('received_orders', 'feeder_functions', ARRAY[]::name[],
	'function received_orders.feeder_functions() exists');
SELECT is(
	(SELECT array_agg(p.proname::text ORDER BY p.proname) FROM pg_proc p
	  WHERE p.oid IN ('received_orders.grant_feeder(regrole)'::regprocedure,
	                  'received_orders.revoke_feeder(regrole)'::regprocedure,
	                  'received_orders.feeder_functions()'::regprocedure)
	    AND has_function_privilege('ro_gf_nobody', p.oid, 'EXECUTE')),
	NULL,
	'PUBLIC may execute none of grant_feeder, revoke_feeder, feeder_functions');
SELECT is(
	(SELECT array_agg(p.proname::text ORDER BY p.proname) FROM pg_proc p
	  WHERE p.oid IN ('received_orders.grant_feeder(regrole)'::regprocedure,
	                  'received_orders.revoke_feeder(regrole)'::regprocedure)
	    AND p.prosecdef),
	NULL,
	'grant_feeder and revoke_feeder run with the caller''s rights (not SECURITY DEFINER)');

-- In step with the schema ---------------------------------------------------

SELECT set_eq(
	$$SELECT p.oid::regprocedure FROM pg_proc p
	   WHERE p.pronamespace = 'received_orders'::regnamespace$$,
	$$SELECT f FROM feeder_list UNION ALL SELECT f FROM not_feeder_list$$,
	'every function of the schema is classified here as a feeder''s or not (a new one or a new overload must be)');
SELECT is_empty(
	$$SELECT f FROM feeder_list INTERSECT SELECT f FROM not_feeder_list$$,
	'no function is classified both ways');
SELECT set_eq(
	$$SELECT received_orders.feeder_functions()$$,
	$$SELECT f FROM feeder_list$$,
	'feeder_functions() lists exactly the feeder''s functions');

-- grant_feeder ----------------------------------------------------------------

SELECT set_eq(
	$$SELECT received_orders.grant_feeder('ro_gf_feeder')$$,
	$$SELECT f FROM feeder_list$$,
	'grant_feeder returns the feeder''s functions');
SELECT set_eq(
	$$SELECT p.oid::regprocedure, a.privilege_type FROM pg_proc p, aclexplode(p.proacl) a
	   WHERE p.pronamespace = 'received_orders'::regnamespace
	     AND a.grantee = 'ro_gf_feeder'::regrole$$,
	$$SELECT f, 'EXECUTE'::text FROM feeder_list$$,
	'the role holds EXECUTE explicitly on the feeder''s functions and nothing else');
SELECT set_eq(
	$$SELECT p.oid::regprocedure FROM pg_proc p
	   WHERE p.pronamespace = 'received_orders'::regnamespace
	     AND has_function_privilege('ro_gf_feeder', p.oid, 'EXECUTE')$$,
	$$SELECT f FROM feeder_list$$,
	'the role may execute exactly the feeder''s functions (through PUBLIC nothing more)');
SELECT is(
	(SELECT count(*) FROM pg_class c
	  WHERE c.relnamespace = 'received_orders'::regnamespace
	    AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
	    AND (has_table_privilege('ro_gf_feeder', c.oid, 'SELECT,INSERT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER')
	         OR (c.relkind = 'S' AND has_sequence_privilege('ro_gf_feeder', c.oid, 'USAGE,SELECT,UPDATE')))),
	0::bigint,
	'the role holds no privilege on a table, view or sequence of the schema');
SELECT ok(has_schema_privilege('ro_gf_feeder', 'received_orders', 'USAGE'),
	'the role holds USAGE on the schema');
SELECT ok(NOT has_schema_privilege('ro_gf_feeder', 'received_orders', 'CREATE'),
	'the role does not hold CREATE on the schema');

CREATE TEMPORARY TABLE acl_before AS
SELECT p.oid, p.proacl::text AS acl FROM pg_proc p WHERE p.pronamespace = 'received_orders'::regnamespace
UNION ALL
SELECT n.oid, n.nspacl::text FROM pg_namespace n WHERE n.nspname = 'received_orders';
SELECT set_eq(
	$$SELECT received_orders.grant_feeder('ro_gf_feeder')$$,
	$$SELECT f FROM feeder_list$$,
	'grant_feeder again returns the same functions');
SELECT set_eq(
	$$SELECT p.oid, p.proacl::text FROM pg_proc p WHERE p.pronamespace = 'received_orders'::regnamespace
	  UNION ALL
	  SELECT n.oid, n.nspacl::text FROM pg_namespace n WHERE n.nspname = 'received_orders'$$,
	$$SELECT oid, acl FROM acl_before$$,
	'grant_feeder again changes no privilege');

GRANT SELECT ON feeder_list, not_feeder_list TO ro_gf_feeder;
SET ROLE ro_gf_feeder;
SELECT is_empty(
	$$SELECT f FROM feeder_list
	   WHERE pg_temp.caught(pg_temp.call_with_nulls(f)) IS NOT DISTINCT FROM '42501'$$,
	'the role calls each of the feeder''s functions without 42501');
SELECT is_empty(
	$$SELECT f FROM not_feeder_list
	   WHERE pg_temp.caught(pg_temp.call_with_nulls(f)) IS DISTINCT FROM '42501'$$,
	'every other function of the schema refuses the role (42501)');
SELECT is(pg_temp.caught($$SELECT received_orders.grant_feeder('ro_gf_nobody')$$), '42501',
	'the feeder''s role cannot call grant_feeder (42501)');
RESET ROLE;

-- Who may grant ------------------------------------------------------------------

GRANT EXECUTE ON FUNCTION received_orders.grant_feeder(regrole),
	received_orders.revoke_feeder(regrole), received_orders.feeder_functions() TO ro_gf_dba;
SET ROLE ro_gf_dba;
SELECT is(pg_temp.caught($$SELECT received_orders.grant_feeder('ro_gf_nobody')$$), '42501',
	'a role granted EXECUTE on grant_feeder but not a member of the extension''s owner is refused (42501)');
SELECT is(pg_temp.caught($$SELECT received_orders.revoke_feeder('ro_gf_feeder')$$), '42501',
	'... and so is its revoke_feeder (42501)');
RESET ROLE;
SELECT ok(NOT has_schema_privilege('ro_gf_nobody', 'received_orders', 'USAGE')
          AND has_function_privilege('ro_gf_feeder', 'received_orders.consumer_positions(text, text)', 'EXECUTE'),
	'the refused calls changed nothing');
SELECT is(pg_temp.caught($$SELECT received_orders.grant_feeder(NULL)$$), '22004',
	'grant_feeder(NULL) is refused (22004)');

-- the extension's owner; on the SQL-only flavour (no pg_extension row) the
-- schema's owner, whose members grant_feeder serves there
SELECT format('GRANT %I TO ro_gf_owners',
              coalesce((SELECT e.extowner FROM pg_extension e WHERE e.extname = 'received_orders'),
                       (SELECT n.nspowner FROM pg_namespace n WHERE n.nspname = 'received_orders'))::regrole) \gexec
-- what set_eq reads (the extension's superuser owner lends it on C)
GRANT SELECT ON feeder_list TO ro_gf_owners;
SET ROLE ro_gf_owners;
SELECT set_eq(
	$$SELECT received_orders.grant_feeder('ro_gf_nobody')$$,
	$$SELECT f FROM feeder_list$$,
	'a member of the extension''s owner (not a superuser) may grant a feeder''s privileges');
RESET ROLE;
SELECT ok(has_function_privilege('ro_gf_nobody', 'received_orders.record_position_gap(text, text, integer, bigint, bigint, boolean)', 'EXECUTE'),
	'... and the grant took effect');

-- revoke_feeder -----------------------------------------------------------------

SELECT set_eq(
	$$SELECT received_orders.revoke_feeder('ro_gf_feeder')$$,
	$$SELECT f FROM feeder_list$$,
	'revoke_feeder returns the feeder''s functions');
SELECT is_empty(
	$$SELECT p.oid::regprocedure FROM pg_proc p
	   WHERE p.pronamespace = 'received_orders'::regnamespace
	     AND has_function_privilege('ro_gf_feeder', p.oid, 'EXECUTE')$$,
	'after revoke_feeder the role may execute no function of the schema');
SELECT ok(NOT has_schema_privilege('ro_gf_feeder', 'received_orders', 'USAGE'),
	'after revoke_feeder the role holds no USAGE on the schema');

GRANT USAGE ON SCHEMA received_orders TO ro_gf_app;
GRANT EXECUTE ON FUNCTION received_orders.materialize_order(jsonb) TO ro_gf_app;
SELECT received_orders.grant_feeder('ro_gf_app') \g /dev/null
SELECT received_orders.revoke_feeder('ro_gf_app') \g /dev/null
SELECT ok(has_schema_privilege('ro_gf_app', 'received_orders', 'USAGE')
          AND has_function_privilege('ro_gf_app', 'received_orders.materialize_order(jsonb)', 'EXECUTE'),
	'revoke_feeder leaves USAGE and its other grant to a role that holds one');
SELECT is_empty(
	$$SELECT f FROM feeder_list WHERE has_function_privilege('ro_gf_app', f, 'EXECUTE')$$,
	'... and takes the feeder''s functions from it');

SELECT * FROM finish();
ROLLBACK;
