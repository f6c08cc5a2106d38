-- 02_security.sql — every function (materialize_order, materialize_orders
-- with and without a group, replay_quarantined, consumer_positions,
-- restart_position, set_consumer_position, forget_consumer_positions) is
-- SECURITY DEFINER with a pinned search_path and no EXECUTE for PUBLIC; a
-- role holding only USAGE on the schema and EXECUTE can materialize but
-- cannot touch the tables; a role without EXECUTE cannot call them; a
-- caller's search_path (temp tables, an impostor schema with look-alike
-- tables, operators and functions) cannot redirect what the functions read or
-- write.  The consumer-group functions called by a role, and the positions
-- table under a hostile search_path: 07_positions.sql.
--
-- Roles and schema are created inside the transaction and rolled back.

BEGIN;
SELECT plan(55);

-- Roles: the feeder (USAGE + EXECUTE only) and a stranger (USAGE, no EXECUTE).
CREATE ROLE ro_test_feeder NOLOGIN;
CREATE ROLE ro_test_stranger NOLOGIN;
GRANT USAGE ON SCHEMA received_orders TO ro_test_feeder, ro_test_stranger;
GRANT EXECUTE ON FUNCTION received_orders.materialize_order(jsonb) TO ro_test_feeder;
GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) TO ro_test_feeder;
GRANT EXECUTE ON FUNCTION received_orders.replay_quarantined(bigint) TO ro_test_feeder;

-- Definer rights and pinned search_path ------------------------------------------

SELECT is_definer('received_orders', 'materialize_order', ARRAY['jsonb'],
	'materialize_order is SECURITY DEFINER');
SELECT is_definer('received_orders', 'materialize_orders', ARRAY['bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'materialize_orders is SECURITY DEFINER');
SELECT is_definer('received_orders', 'replay_quarantined', ARRAY['bigint'],
	'replay_quarantined is SECURITY DEFINER');
SELECT is_definer('received_orders', 'materialize_orders', ARRAY['text', 'bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'materialize_orders (group overload) is SECURITY DEFINER');
SELECT is_definer('received_orders', 'consumer_positions', ARRAY['text'],
	'consumer_positions is SECURITY DEFINER');
SELECT is_definer('received_orders', 'restart_position', ARRAY['text', 'text', 'integer', 'bigint', 'bigint'],
	'restart_position is SECURITY DEFINER');
SELECT is_definer('received_orders', 'set_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'],
	'set_consumer_position is SECURITY DEFINER');
SELECT is_definer('received_orders', 'forget_consumer_positions', ARRAY['text', 'text'],
	'forget_consumer_positions is SECURITY DEFINER');

SELECT is(
	(SELECT proconfig FROM pg_catalog.pg_proc WHERE oid = 'received_orders.materialize_order(jsonb)'::regprocedure),
	'{"search_path=pg_catalog, pg_temp","plan_cache_mode=force_generic_plan"}'::text[],
	'materialize_order pins search_path = pg_catalog, pg_temp and plans generically from its first call');
SELECT is(
	(SELECT proconfig FROM pg_catalog.pg_proc
	  WHERE oid = 'received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[])'::regprocedure),
	'{"search_path=pg_catalog, pg_temp","plan_cache_mode=force_generic_plan"}'::text[],
	'materialize_orders pins search_path = pg_catalog, pg_temp and plans generically from its first call');
SELECT is(
	(SELECT proconfig FROM pg_catalog.pg_proc WHERE oid = 'received_orders.replay_quarantined(bigint)'::regprocedure),
	'{"search_path=pg_catalog, pg_temp","plan_cache_mode=force_generic_plan"}'::text[],
	'replay_quarantined pins search_path = pg_catalog, pg_temp and plans generically from its first call');
SELECT is(
	(SELECT proconfig FROM pg_catalog.pg_proc
	  WHERE oid = 'received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[])'::regprocedure),
	'{"search_path=pg_catalog, pg_temp","plan_cache_mode=force_generic_plan"}'::text[],
	'materialize_orders (group overload) pins search_path = pg_catalog, pg_temp and plans generically from its first call');
SELECT is(
	(SELECT proconfig FROM pg_catalog.pg_proc WHERE oid = 'received_orders.consumer_positions(text)'::regprocedure),
	'{"search_path=pg_catalog, pg_temp"}'::text[],
	'consumer_positions pins search_path = pg_catalog, pg_temp');
SELECT is(
	(SELECT proconfig FROM pg_catalog.pg_proc
	  WHERE oid = 'received_orders.restart_position(text, text, integer, bigint, bigint)'::regprocedure),
	'{"search_path=pg_catalog, pg_temp"}'::text[],
	'restart_position pins search_path = pg_catalog, pg_temp');
SELECT is(
	(SELECT proconfig FROM pg_catalog.pg_proc
	  WHERE oid = 'received_orders.set_consumer_position(text, text, integer, bigint)'::regprocedure),
	'{"search_path=pg_catalog, pg_temp"}'::text[],
	'set_consumer_position pins search_path = pg_catalog, pg_temp');
SELECT is(
	(SELECT proconfig FROM pg_catalog.pg_proc WHERE oid = 'received_orders.forget_consumer_positions(text, text)'::regprocedure),
	'{"search_path=pg_catalog, pg_temp"}'::text[],
	'forget_consumer_positions pins search_path = pg_catalog, pg_temp');
SELECT is_empty(
	$$SELECT p.oid::regprocedure::text
	    FROM pg_catalog.pg_proc p
	   WHERE p.pronamespace = 'received_orders'::regnamespace
	     AND (p.prosecdef IS DISTINCT FROM (p.oid NOT IN ('received_orders.grant_feeder(regrole)'::regprocedure,
	                                                      'received_orders.revoke_feeder(regrole)'::regprocedure))
	          OR pg_catalog.array_remove(p.proconfig, 'plan_cache_mode=force_generic_plan')
	             IS DISTINCT FROM '{"search_path=pg_catalog, pg_temp"}'::text[])$$,
	'every function of schema received_orders pins search_path and is SECURITY DEFINER, but grant_feeder and revoke_feeder, whose GRANTs are the caller''s own');
SELECT set_eq(
	$$SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
	   WHERE p.pronamespace = 'received_orders'::regnamespace
	     AND 'plan_cache_mode=force_generic_plan' = ANY (p.proconfig)$$,
	ARRAY['received_orders.materialize_order(jsonb)',
	      'received_orders.materialize_orders(bytea[],text[],integer[],bigint[],bytea[])',
	      'received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[])',
	      'received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[])',
	      'received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[],bytea[],integer[],text[],uuid[])',
	      'received_orders.replay_quarantined(bigint)',
	      'received_orders.check_consumer_group(text,text)'],
	'the seven functions of the C library (and their SQL-only twins) plan generically from their first call, and only they');

-- Privileges as catalogued --------------------------------------------------------

SELECT function_privs_are('received_orders', 'materialize_order', ARRAY['jsonb'], 'public', '{}'::text[],
	'PUBLIC cannot EXECUTE materialize_order');
SELECT function_privs_are('received_orders', 'materialize_orders', ARRAY['bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'public', '{}'::text[],
	'PUBLIC cannot EXECUTE materialize_orders');
SELECT function_privs_are('received_orders', 'replay_quarantined', ARRAY['bigint'], 'public', '{}'::text[],
	'PUBLIC cannot EXECUTE replay_quarantined');
SELECT function_privs_are('received_orders', 'materialize_orders', ARRAY['text', 'bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'public', '{}'::text[],
	'PUBLIC cannot EXECUTE materialize_orders (group overload)');
SELECT function_privs_are('received_orders', 'consumer_positions', ARRAY['text'], 'public', '{}'::text[],
	'PUBLIC cannot EXECUTE consumer_positions');
SELECT function_privs_are('received_orders', 'restart_position', ARRAY['text', 'text', 'integer', 'bigint', 'bigint'],
	'public', '{}'::text[],
	'PUBLIC cannot EXECUTE restart_position');
SELECT function_privs_are('received_orders', 'set_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'],
	'public', '{}'::text[],
	'PUBLIC cannot EXECUTE set_consumer_position');
SELECT function_privs_are('received_orders', 'forget_consumer_positions', ARRAY['text', 'text'], 'public', '{}'::text[],
	'PUBLIC cannot EXECUTE forget_consumer_positions');
SELECT is_empty(
	$$SELECT p.oid::regprocedure::text
	    FROM pg_catalog.pg_proc p
	   WHERE p.pronamespace = 'received_orders'::regnamespace
	     AND p.prosecdef
	     AND pg_catalog.has_function_privilege('public', p.oid, 'EXECUTE')$$,
	'no SECURITY DEFINER function of schema received_orders is executable by PUBLIC');

SELECT function_privs_are('received_orders', 'materialize_order', ARRAY['jsonb'], 'ro_test_feeder', ARRAY['EXECUTE'],
	'the granted role can EXECUTE materialize_order');
SELECT function_privs_are('received_orders', 'materialize_orders', ARRAY['bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'ro_test_feeder', ARRAY['EXECUTE'],
	'the granted role can EXECUTE materialize_orders');
SELECT function_privs_are('received_orders', 'replay_quarantined', ARRAY['bigint'], 'ro_test_feeder', ARRAY['EXECUTE'],
	'the granted role can EXECUTE replay_quarantined');

SELECT function_privs_are('received_orders', 'materialize_order', ARRAY['jsonb'], 'ro_test_stranger', '{}'::text[],
	'an ungranted role cannot EXECUTE materialize_order');
SELECT function_privs_are('received_orders', 'materialize_orders', ARRAY['bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'ro_test_stranger', '{}'::text[],
	'an ungranted role cannot EXECUTE materialize_orders');
SELECT function_privs_are('received_orders', 'replay_quarantined', ARRAY['bigint'], 'ro_test_stranger', '{}'::text[],
	'an ungranted role cannot EXECUTE replay_quarantined');
SELECT is_empty(
	$$SELECT p.oid::regprocedure::text
	    FROM pg_catalog.pg_proc p
	   WHERE p.pronamespace = 'received_orders'::regnamespace
	     AND pg_catalog.has_function_privilege('ro_test_stranger', p.oid, 'EXECUTE')$$,
	'an ungranted role cannot EXECUTE any function of schema received_orders (1.1''s included)');
SELECT is_empty(
	$$SELECT p.oid::regprocedure::text
	    FROM pg_catalog.pg_proc p
	   WHERE p.pronamespace = 'received_orders'::regnamespace
	     AND p.oid NOT IN ('received_orders.materialize_order(jsonb)'::regprocedure,
	                       'received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[])'::regprocedure,
	                       'received_orders.replay_quarantined(bigint)'::regprocedure)
	     AND pg_catalog.has_function_privilege('ro_test_feeder', p.oid, 'EXECUTE')$$,
	'a role granted 1.0''s three functions cannot EXECUTE any of 1.1''s');

-- The granted role calls every function ------------------------------------------

SET ROLE ro_test_feeder;

SELECT is(
	received_orders.materialize_order('{"orderId": "a0000000-0000-4000-8000-000000000001", "externalReference": "sec-1"}'),
	'inserted',
	'the granted role materializes one order');

SELECT results_eq(
	$$SELECT r."position", r.outcome::text, r.sqlstate
	    FROM received_orders.materialize_orders(
	           ARRAY[pg_catalog.convert_to('{"orderId": "a0000000-0000-4000-8000-000000000002", "externalReference": "sec-2"}', 'UTF8'),
	                 pg_catalog.convert_to('{"orderId": "a0000000-0000-4000-8000-000000000003", "externalReference": " "}', 'UTF8'),
	                 pg_catalog.convert_to('{"orderId": "a0000000-0000-4000-8000-000000000004", "externalReference": " "}', 'UTF8')],
	           ARRAY['security', 'security', 'security'],
	           ARRAY[0, 0, 0],
	           ARRAY[1, 2, 3]::bigint[],
	           NULL) r$$,
	$$VALUES (1, 'inserted'::text, NULL::text), (2, 'rejected', '22023'), (3, 'rejected', '22023')$$,
	'the granted role materializes a batch (one inserted, two rejected and quarantined)');

-- A DBA repairs both quarantined messages; the ids are shared with the roles.
RESET ROLE;
UPDATE received_orders.received_orders_quarantine
   SET raw_value = pg_catalog.convert_to(
         pg_catalog.format('{"orderId": "a0000000-0000-4000-8000-00000000000%s", "externalReference": "sec-repaired"}', kafka_offset + 1),
         'UTF8')
 WHERE kafka_topic = 'security';
CREATE TEMP TABLE q_ids AS
	SELECT id, kafka_offset FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'security';
GRANT SELECT ON q_ids TO ro_test_feeder;
SET ROLE ro_test_feeder;

SELECT is(
	received_orders.replay_quarantined((SELECT id FROM q_ids WHERE kafka_offset = 2)),
	'inserted',
	'the granted role replays a repaired quarantined message');

-- ... but cannot write either table directly.
SELECT throws_ok(
	$$INSERT INTO received_orders.received_orders (order_id, external_reference, payload)
	  VALUES ('a0000000-0000-4000-8000-0000000000ff', 'x', '{}')$$,
	'42501', NULL, 'the granted role cannot INSERT into received_orders');
SELECT throws_ok(
	$$UPDATE received_orders.received_orders SET external_reference = 'x'$$,
	'42501', NULL, 'the granted role cannot UPDATE received_orders');
SELECT throws_ok(
	$$DELETE FROM received_orders.received_orders$$,
	'42501', NULL, 'the granted role cannot DELETE from received_orders');
SELECT throws_ok(
	$$TRUNCATE received_orders.received_orders$$,
	'42501', NULL, 'the granted role cannot TRUNCATE received_orders');
SELECT throws_ok(
	$$INSERT INTO received_orders.received_orders_quarantine (outcome, sqlstate, reason)
	  VALUES ('rejected', '22023', 'x')$$,
	'42501', NULL, 'the granted role cannot INSERT into received_orders_quarantine');
SELECT throws_ok(
	$$UPDATE received_orders.received_orders_quarantine SET reason = 'x'$$,
	'42501', NULL, 'the granted role cannot UPDATE received_orders_quarantine');
SELECT throws_ok(
	$$DELETE FROM received_orders.received_orders_quarantine$$,
	'42501', NULL, 'the granted role cannot DELETE from received_orders_quarantine');
SELECT throws_ok(
	$$TRUNCATE received_orders.received_orders_quarantine$$,
	'42501', NULL, 'the granted role cannot TRUNCATE received_orders_quarantine');

RESET ROLE;

-- A role without EXECUTE is refused ---------------------------------------------------

SET ROLE ro_test_stranger;
SELECT throws_ok(
	$$SELECT received_orders.materialize_order('{"orderId": "a0000000-0000-4000-8000-0000000000fe", "externalReference": "x"}')$$,
	'42501', 'permission denied for function materialize_order',
	'an ungranted role cannot call materialize_order');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(ARRAY['\x7b7d'::bytea])$$,
	'42501', 'permission denied for function materialize_orders',
	'an ungranted role cannot call materialize_orders');
SELECT throws_ok(
	$$SELECT received_orders.replay_quarantined(1)$$,
	'42501', 'permission denied for function replay_quarantined',
	'an ungranted role cannot call replay_quarantined');
RESET ROLE;

-- search_path capture ------------------------------------------------------------------
-- The caller shadows every name the functions could reach unqualified: temp
-- tables named like ours (pg_temp is searched first for relations, and is on
-- the pinned path too), an impostor schema first on its search_path holding
-- look-alike tables, and operators and functions that would raise if used.

CREATE SCHEMA evil AUTHORIZATION ro_test_feeder;
SET ROLE ro_test_feeder;

CREATE TEMP TABLE received_orders (
	order_id uuid, external_reference text, payload jsonb, received_at timestamptz DEFAULT now());
CREATE TEMP TABLE received_orders_quarantine (
	id bigserial, kafka_topic text, kafka_partition integer, kafka_offset bigint, kafka_key bytea,
	raw_value bytea, order_id uuid, outcome text, sqlstate text, reason text,
	quarantined_at timestamptz DEFAULT now());
CREATE TABLE evil.received_orders (
	order_id uuid, external_reference text, payload jsonb, received_at timestamptz DEFAULT now());
CREATE TABLE evil.received_orders_quarantine (
	id bigserial, kafka_topic text, kafka_partition integer, kafka_offset bigint, kafka_key bytea,
	raw_value bytea, order_id uuid, outcome text, sqlstate text, reason text,
	quarantined_at timestamptz DEFAULT now());

CREATE FUNCTION evil.captured_uuid_eq(uuid, uuid) RETURNS boolean LANGUAGE plpgsql
	AS $$BEGIN RAISE EXCEPTION 'search_path capture: evil operator = (uuid, uuid) was called'; END$$;
CREATE OPERATOR evil.= (LEFTARG = uuid, RIGHTARG = uuid, FUNCTION = evil.captured_uuid_eq);
CREATE FUNCTION evil.captured_text_eq(text, text) RETURNS boolean LANGUAGE plpgsql
	AS $$BEGIN RAISE EXCEPTION 'search_path capture: evil operator = (text, text) was called'; END$$;
CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.captured_text_eq);
CREATE FUNCTION evil.captured_field(jsonb, text) RETURNS text LANGUAGE plpgsql
	AS $$BEGIN RAISE EXCEPTION 'search_path capture: evil operator ->> (jsonb, text) was called'; END$$;
CREATE OPERATOR evil.->> (LEFTARG = jsonb, RIGHTARG = text, FUNCTION = evil.captured_field);
CREATE FUNCTION evil.jsonb_typeof(jsonb) RETURNS text LANGUAGE plpgsql
	AS $$BEGIN RAISE EXCEPTION 'search_path capture: evil.jsonb_typeof was called'; END$$;
CREATE FUNCTION evil.btrim(text) RETURNS text LANGUAGE plpgsql
	AS $$BEGIN RAISE EXCEPTION 'search_path capture: evil.btrim was called'; END$$;
CREATE FUNCTION evil.char_length(text) RETURNS integer LANGUAGE plpgsql
	AS $$BEGIN RAISE EXCEPTION 'search_path capture: evil.char_length was called'; END$$;
CREATE FUNCTION evil.now() RETURNS timestamptz LANGUAGE plpgsql
	AS $$BEGIN RAISE EXCEPTION 'search_path capture: evil.now was called'; END$$;

CREATE TEMP TABLE captured (call text, "position" integer, outcome text);

-- Outside pgTAP (whose own functions would resolve through this path): the
-- calls record their outcomes, or the error they raised.
SET search_path = evil, pg_catalog, public;
DO $$
BEGIN
	INSERT INTO pg_temp.captured
		SELECT 'single', 1,
		       received_orders.materialize_order(
		         '{"orderId": "a0000000-0000-4000-8000-000000000005", "externalReference": "sec-5"}')::text;
	INSERT INTO pg_temp.captured
		SELECT 'batch', r."position", r.outcome::text
		  FROM received_orders.materialize_orders(
		         ARRAY[pg_catalog.convert_to('{"orderId": "a0000000-0000-4000-8000-000000000006", "externalReference": "sec-6"}', 'UTF8'),
		               '\xff'::bytea],
		         ARRAY['security', 'security'],
		         ARRAY[0, 0],
		         ARRAY[10, 11]::bigint[],
		         NULL) r;
	INSERT INTO pg_temp.captured
		SELECT 'replay', 1,
		       received_orders.replay_quarantined((SELECT id FROM pg_temp.q_ids WHERE kafka_offset = 3))::text;
EXCEPTION WHEN OTHERS THEN
	INSERT INTO pg_temp.captured VALUES ('error: ' || SQLERRM, 0, SQLSTATE);
END
$$;
RESET search_path;
RESET ROLE;

SELECT results_eq(
	$$SELECT call, "position", outcome FROM pg_temp.captured$$,
	$$VALUES ('single'::text, 1, 'inserted'::text), ('batch', 1, 'inserted'), ('batch', 2, 'rejected'), ('replay', 1, 'inserted')$$,
	'under a hostile search_path the three functions still work (no impostor operator or function called)');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders
	  WHERE order_id IN ('a0000000-0000-4000-8000-000000000004',
	                     'a0000000-0000-4000-8000-000000000005',
	                     'a0000000-0000-4000-8000-000000000006')),
	3,
	'under a hostile search_path the orders land in received_orders.received_orders');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders_quarantine
	  WHERE kafka_topic = 'security' AND kafka_offset = 11 AND raw_value = '\xff'::bytea),
	1,
	'under a hostile search_path the rejected message lands in received_orders.received_orders_quarantine');
SELECT is(
	(SELECT count(*)::integer FROM pg_temp.received_orders) + (SELECT count(*)::integer FROM pg_temp.received_orders_quarantine),
	0,
	'the caller''s temp tables named received_orders / received_orders_quarantine stay empty');
SELECT is(
	(SELECT count(*)::integer FROM evil.received_orders),
	0,
	'the impostor table evil.received_orders stays empty');
SELECT is(
	(SELECT count(*)::integer FROM evil.received_orders_quarantine),
	0,
	'the impostor table evil.received_orders_quarantine stays empty');

SELECT * FROM finish();
ROLLBACK;
