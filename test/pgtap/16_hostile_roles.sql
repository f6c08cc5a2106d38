-- 16_hostile_roles.sql — a feeder's role touches only
-- its own group, within bounds; a monitoring role reads no message text.
--
-- A hostile feeder role (granted what a feeder needs) tries each statement
-- that would grow or take what is not its own, and gets its SQLSTATE:
--   - a group with positions and no owner (a superuser's feeder filled it,
--     or a DBA set a position) cannot be claimed by using it (42501), not
--     through the batch function, consumer_positions, report_feeder nor
--     record_high_watermarks, and nothing moves; the table's trigger refuses
--     the claim too (for a session still running an older library); after
--     set_consumer_group_owner the named role uses it;
--   - a role claims at most 16 groups by using them (54000), a superuser
--     hands it more;
--   - report_feeder refuses long texts (22001), a negative keep_for,
--     report interval or pid (22023), too many partitions or topic bytes
--     (54000) and bad partitions (22023); a group keeps at most 64 members: a new one takes
--     the place of an unhealthy one, and is refused (54000) when all are
--     healthy.
-- A monitoring role (pg_monitor) reads quarantine_summary: counts by
-- outcome, SQLSTATE and class of reason, and no text of any message (a
-- conflict's references, a JSON token with quotes in it); it cannot read
-- quarantine_examples, which keeps the whole reasons for the DBA.
--
-- Errors are read through pg_temp.caught.  Roles are created inside the
-- transaction and rolled back.

BEGIN;
SELECT plan(49);

SET LOCAL client_min_messages = error;

CREATE ROLE ro_hr_owner NOLOGIN;
CREATE ROLE ro_hr_evil NOLOGIN;
CREATE ROLE ro_hr_mon NOLOGIN IN ROLE pg_monitor;
GRANT USAGE ON SCHEMA received_orders TO ro_hr_owner, ro_hr_evil;
GRANT EXECUTE ON FUNCTION
	received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]),
	received_orders.consumer_positions(text),
	received_orders.consumer_positions(text, text),
	received_orders.restart_position(text, text, integer, bigint, bigint),
	received_orders.report_feeder(text, text, text, integer, text, timestamptz, text, text[], integer[], bigint[], text, timestamptz, interval, interval),
	received_orders.record_high_watermarks(text, text, text[], integer[], bigint[])
	TO ro_hr_owner, ro_hr_evil;

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

-- One valid event as bytea.
CREATE FUNCTION pg_temp.ev(n integer) RETURNS bytea LANGUAGE sql AS $$
	SELECT convert_to(format('{"orderId": "16000000-0000-4000-8000-%s", "externalReference": "R-%s"}',
	                         lpad(n::text, 12, '0'), n), 'UTF8')
$$;

-- A report of member MEMBER of GROUP (running, 10 s interval).
CREATE FUNCTION pg_temp.report(grp text, member text) RETURNS text LANGUAGE sql AS $$
	SELECT format('SELECT received_orders.report_feeder(%L, %L, ''h'', 1, ''1.3.0'', now(), ''running'',
	               NULL, NULL, NULL, NULL, NULL, interval ''10 seconds'')', grp, member)
$$;

-- Structure -------------------------------------------------------------------

SELECT has_column('received_orders', 'received_orders_consumer_groups', 'owner_set_by',
	'received_orders_consumer_groups.owner_set_by exists');
SELECT has_column('received_orders', 'received_orders_consumer_groups', 'owner_set_at',
	'received_orders_consumer_groups.owner_set_at exists');
SELECT has_trigger('received_orders', 'received_orders_consumer_groups',
	'received_orders_consumer_groups_claim_check',
	'the claim check is a trigger of received_orders_consumer_groups');
SELECT columns_are('received_orders', 'quarantine_summary',
	ARRAY['outcome', 'sqlstate', 'reason', 'messages', 'replayed', 'topics', 'oldest', 'newest']::name[],
	'quarantine_summary has no column example');
SELECT table_privs_are('received_orders', 'quarantine_examples', 'pg_monitor', '{}'::text[],
	'pg_monitor has no privilege on quarantine_examples');
SELECT table_privs_are('received_orders', 'quarantine_examples', 'public', '{}'::text[],
	'nor PUBLIC');

-- A group with positions and no owner ---------------------------------------

-- a superuser's feeder fills "orders" up to offset 41; a DBA sets "billing"
SELECT is((SELECT count(*)::int FROM received_orders.materialize_orders('orders',
	ARRAY[pg_temp.ev(1)], ARRAY['t'], ARRAY[0], ARRAY[40]::bigint[], NULL)),
	1, 'a superuser''s feeder writes the group "orders" (no owner)');
SELECT received_orders.set_consumer_position('billing', 't', 0, 7);

SET ROLE ro_hr_evil;
SELECT is((pg_temp.caught($$SELECT count(*) FROM received_orders.materialize_orders('orders',
	ARRAY[NULL, NULL]::bytea[], ARRAY['t', 't'], ARRAY[0, 0], ARRAY[999999, 1000040]::bigint[], NULL)$$))[1:3],
	ARRAY['42501', 'permission denied for consumer group "orders"',
	      'The group has positions and no owner: role "ro_hr_evil" cannot claim it by using it.'],
	'another role cannot claim a group with positions through the batch function (42501)');
SELECT alike((pg_temp.caught($$SELECT count(*) FROM received_orders.materialize_orders('orders',
	ARRAY[NULL]::bytea[], ARRAY['t'], ARRAY[0], ARRAY[1000040]::bigint[], NULL)$$))[4],
	'%set_consumer_group_owner(''orders'', ''ROLE'')%',
	'the hint names set_consumer_group_owner');
SELECT is((pg_temp.caught($$SELECT * FROM received_orders.consumer_positions('orders')$$))[1],
	'42501', 'nor through consumer_positions(group)');
SELECT is((pg_temp.caught($$SELECT * FROM received_orders.consumer_positions('orders', 'cluster-x')$$))[1],
	'42501', 'nor through consumer_positions(group, cluster)');
SELECT is((pg_temp.caught(pg_temp.report('orders', 'evil-1')))[1],
	'42501', 'nor through report_feeder');
SELECT is((pg_temp.caught($$SELECT received_orders.record_high_watermarks('orders', 'evil-1',
	ARRAY['t'], ARRAY[0], ARRAY[5]::bigint[])$$))[1],
	'42501', 'nor through record_high_watermarks');
SELECT is((pg_temp.caught($$SELECT received_orders.restart_position('orders', 't', 0, 41, 0)$$))[1],
	'42501', 'nor through restart_position');
SELECT is((pg_temp.caught($$SELECT * FROM received_orders.consumer_positions('billing')$$))[1],
	'42501', 'a group whose position a DBA set is not claimable either');
RESET ROLE;
SELECT results_eq(
	$$SELECT p.consumer_group, g.owner_role::text COLLATE "default", p.next_offset
	    FROM received_orders.received_orders_positions p
	    LEFT JOIN received_orders.received_orders_consumer_groups g USING (consumer_group)
	   WHERE p.consumer_group IN ('billing', 'orders')
	   ORDER BY 1$$,
	$$VALUES ('billing'::text, NULL::text, 7::bigint), ('orders', NULL, 41)$$,
	'both groups keep their positions and have no owner');
SELECT is((pg_temp.caught($$UPDATE received_orders.received_orders_consumer_groups
	SET owner_role = 'ro_hr_evil' WHERE consumer_group = 'orders'$$))[1:2],
	ARRAY['42501', 'permission denied for consumer group "orders"'],
	'the table''s trigger refuses a claim the library would not check (a session of an older library)');

SELECT is(received_orders.set_consumer_group_owner('orders', 'ro_hr_owner'), NULL::name,
	'a superuser names the owner');
SELECT results_eq(
	$$SELECT owner_role::text COLLATE "default", owner_set_by::text COLLATE "default", owner_set_at IS NOT NULL
	    FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'orders'$$,
	$$VALUES ('ro_hr_owner'::text, session_user::text COLLATE "default", true)$$,
	'set_consumer_group_owner records who set the owner and when');
SET ROLE ro_hr_owner;
SELECT results_eq(
	$$SELECT next_offset FROM received_orders.consumer_positions('orders')$$,
	$$VALUES (41::bigint)$$,
	'the named owner reads the group''s positions');
SET ROLE ro_hr_evil;
SELECT is((pg_temp.caught($$SELECT * FROM received_orders.consumer_positions('orders')$$))[1],
	'42501', 'the other role is still refused');
RESET ROLE;

-- A new group is claimed by its first user, up to 16 per role --------------

SET ROLE ro_hr_evil;
SELECT is((SELECT count(*)::int FROM generate_series(1, 16) i
	        WHERE received_orders.report_feeder('squat-' || i, 'm', 'h', 1, '1.3.0', now(), 'running',
	              NULL, NULL, NULL, NULL, NULL, interval '10 seconds') = 0),
	16, 'a role claims 16 new groups by using them');
SELECT is((pg_temp.caught(pg_temp.report('squat-17', 'm')))[1:2],
	ARRAY['54000', 'role "ro_hr_evil" cannot claim consumer group "squat-17": it owns 16 groups already'],
	'the 17th is refused (54000)');
SELECT alike((pg_temp.caught($$SELECT * FROM received_orders.consumer_positions('squat-17')$$))[4],
	'%set_consumer_group_owner(''squat-17'', ''ro_hr_evil'')%',
	'whatever the function; the hint says how a superuser hands it one more');
RESET ROLE;
SELECT is((SELECT count(*)::int FROM received_orders.received_orders_consumer_groups
	        WHERE consumer_group LIKE 'squat-%'), 16, 'no row for the refused group');
SELECT received_orders.set_consumer_group_owner('squat-17', 'ro_hr_evil');
SET ROLE ro_hr_evil;
SELECT is(pg_temp.caught(pg_temp.report('squat-17', 'm')), NULL,
	'a group a superuser handed over is used');
RESET ROLE;

-- report_feeder's arguments are bounded ---------------------------------------

SET ROLE ro_hr_evil;
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', repeat('h', 256), 1, '1.3.0',
	now(), 'running', NULL, NULL, NULL, NULL, NULL, interval '10 seconds')$$))[1],
	'22001', 'a host of 256 bytes is refused (22001)');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', repeat('m', 513), 'h', 1, '1.3.0',
	now(), 'running', NULL, NULL, NULL, NULL, NULL, interval '10 seconds')$$))[1],
	'22001', 'a member id of 513 bytes is refused (22001)');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, repeat('v', 65),
	now(), 'running', NULL, NULL, NULL, NULL, NULL, interval '10 seconds')$$))[1],
	'22001', 'a version of 65 bytes is refused (22001)');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, '1.3.0',
	now(), 'running', NULL, NULL, NULL, repeat('e', 2049), now(), interval '10 seconds')$$))[1],
	'22001', 'a last_error of 2049 bytes is refused (22001)');
SELECT is(pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, '1.3.0',
	now(), 'running', NULL, NULL, NULL, repeat('é', 1024), now(), interval '10 seconds')$$), NULL,
	'a last_error of 2048 bytes is kept');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, '1.3.0',
	now(), 'running', NULL, NULL, NULL, NULL, NULL, interval '10 seconds', interval '-1 second')$$))[1],
	'22023', 'a negative keep_for is refused (22023)');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, '1.3.0',
	now(), 'running', NULL, NULL, NULL, NULL, NULL, interval '-10 seconds')$$))[1],
	'22023', 'a negative report interval is refused (22023)');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, '1.3.0',
	now(), 'running', NULL, NULL, NULL, NULL, NULL, interval '2 days')$$))[1],
	'22023', 'a report interval above one day is refused (22023)');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', -1, '1.3.0',
	now(), 'running', NULL, NULL, NULL, NULL, NULL, interval '10 seconds')$$))[1],
	'22023', 'a negative pid is refused (22023)');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, '1.3.0',
	now(), 'running', array_fill('t'::text, ARRAY[4097]), array_fill(0, ARRAY[4097]),
	array_fill(NULL::bigint, ARRAY[4097]), NULL, NULL, interval '10 seconds')$$))[1],
	'54000', 'a report of 4097 partitions is refused (54000)');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, '1.3.0',
	now(), 'running', array_fill(repeat('t', 33), ARRAY[4000]), ARRAY(SELECT generate_series(0, 3999)),
	array_fill(NULL::bigint, ARRAY[4000]), NULL, NULL, interval '10 seconds')$$))[1],
	'54000', 'nor 4000 partitions whose topic names add up to 132,000 bytes (54000)');
SELECT is(pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, '1.3.0',
	now(), 'running', array_fill(repeat('t', 32), ARRAY[4096]), ARRAY(SELECT generate_series(0, 4095)),
	array_fill(NULL::bigint, ARRAY[4096]), NULL, NULL, interval '10 seconds')$$), NULL,
	'4096 partitions of 32-byte topic names (131,072 bytes) are kept');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, '1.3.0',
	now(), 'running', ARRAY[repeat('t', 250)], ARRAY[0], ARRAY[1]::bigint[], NULL, NULL, interval '10 seconds')$$))[1],
	'22023', 'a topic of 250 bytes is refused (22023)');
SELECT is((pg_temp.caught($$SELECT received_orders.report_feeder('squat-1', 'm', 'h', 1, '1.3.0',
	now(), 'running', ARRAY['t'], ARRAY[-1], ARRAY[1]::bigint[], NULL, NULL, interval '10 seconds')$$))[1],
	'22023', 'a negative partition is refused (22023)');
RESET ROLE;

-- At most 64 members per group ---------------------------------------------------

SET ROLE ro_hr_evil;
SELECT is((SELECT count(*)::int FROM generate_series(1, 63) i
	        WHERE pg_temp.caught(pg_temp.report('squat-2', 'm-' || i)) IS NULL),
	63, 'a group takes 63 members beside the one that claimed it');
SELECT is((pg_temp.caught(pg_temp.report('squat-2', 'm-64')))[1:2],
	ARRAY['54000', 'consumer group "squat-2" has 64 healthy members; at most 64 are kept'],
	'a 65th is refused while all 64 are healthy (54000)');
RESET ROLE;
UPDATE received_orders.received_orders_feeders SET last_seen = now() - interval '1 minute'
 WHERE consumer_group = 'squat-2' AND member_id IN ('m-7', 'm-9');
UPDATE received_orders.received_orders_feeders SET last_seen = now() - interval '2 minutes'
 WHERE consumer_group = 'squat-2' AND member_id = 'm-9';
SET ROLE ro_hr_evil;
SELECT is((SELECT received_orders.report_feeder('squat-2', 'm-64', 'h', 1, '1.3.0', now(), 'running',
	NULL, NULL, NULL, NULL, NULL, interval '10 seconds', NULL)), 1::bigint,
	'a new member takes the row of the unhealthy member seen least recently');
RESET ROLE;
SELECT results_eq(
	$$SELECT count(*)::int, count(*) FILTER (WHERE member_id = 'm-9')::int,
	         count(*) FILTER (WHERE member_id = 'm-7')::int
	    FROM received_orders.received_orders_feeders WHERE consumer_group = 'squat-2'$$,
	$$VALUES (64, 0, 1)$$,
	'the group still holds 64 rows: m-9 went, m-7 stays');

-- A monitoring role reads no message text -------------------------------------

SELECT is((SELECT count(*)::int FROM received_orders.materialize_orders(
	ARRAY[pg_temp.ev(100),
	      convert_to('{"orderId": "16000000-0000-4000-8000-000000000100", "externalReference": "jane.doe@example.com 4111 1111 1111 1111"}', 'UTF8'),
	      convert_to('{"orderId": "secret"card"4242424242424242"x"}', 'UTF8'),
	      convert_to('{"orderId": "16000000-0000-4000-8000-000000000101" "externalReference"}', 'UTF8')],
	ARRAY['q', 'q', 'q', 'q'], ARRAY[0, 0, 0, 0], ARRAY[1, 2, 3, 4]::bigint[], NULL)), 4,
	'a conflict quoting an e-mail and card digits, and JSON errors quoting tokens with quotes, are quarantined');
SET ROLE ro_hr_mon;
SELECT is_empty(
	$$SELECT * FROM received_orders.quarantine_summary s
	   WHERE s::text ~ '(jane|example|4111|4242|secret|card)'$$,
	'pg_monitor sees none of their text in quarantine_summary');
SELECT results_eq(
	$$SELECT outcome::text, sqlstate, reason, messages::int FROM received_orders.quarantine_summary
	   ORDER BY 1, 2, 3$$,
	$$VALUES ('conflict'::text, '23505'::text, 'order <uuid> is already stored with externalReference "..."'::text, 1),
	         ('rejected', '22P02', 'event is not valid JSON: Expected "..."', 1),
	         ('rejected', '22P02', 'event is not valid JSON: Token "..."', 1)$$,
	'it sees counts by outcome, SQLSTATE and class of reason');
SELECT is((pg_temp.caught($$SELECT * FROM received_orders.quarantine_examples$$))[1], '42501',
	'pg_monitor cannot read quarantine_examples');
RESET ROLE;
SELECT is((SELECT example FROM received_orders.quarantine_examples WHERE outcome = 'conflict'),
	'order 16000000-0000-4000-8000-000000000100 is already stored with externalReference "R-100"; this event has "jane.doe@example.com 4111 1111 1111 1111"',
	'the DBA reads the whole reason in quarantine_examples');

SELECT * FROM finish();
ROLLBACK;
