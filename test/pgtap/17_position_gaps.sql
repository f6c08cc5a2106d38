-- 17_position_gaps.sql — received_orders records the offsets a consumer
-- group lost to retention (its position below the partition's earliest
-- offset) and lets an operator accept them.  The table
-- received_orders_position_gaps, the view position_gaps and the functions
-- record_position_gap and accept_position_gap as the contract says (dumped,
-- SECURITY DEFINER, nothing for PUBLIC, the view for pg_monitor without
-- the table); record_position_gap is idempotent for the same open gap
-- (last_lost only grows), keeps one open gap per partition, does not record
-- twice what an accepted gap covers, and records an accepted gap for
-- --accept-position-loss; accept_position_gap records who and when, moves
-- the position to last_lost + 1 (never backwards), and refuses a partition
-- without an open gap (P0002, with a hint) and a role that is not the
-- group's owner nor a superuser (42501).  record_position_gap bounds what a
-- role may record, with the limits and SQLSTATEs of advance_positions and
-- report_feeder: a topic of 1 to 249 bytes (longer: 22023, with a hint,
-- nothing written), and at most 4096 rows per consumer group, open and
-- accepted together (a new row of a full group: 54000, with a hint naming
-- the superuser's remedy, nothing written, with accept too); a gap already
-- recorded is still found again in a full group, another group of the
-- same role is not affected, and once a superuser removes accepted gaps
-- the group records again.
--
-- Errors' hints are read through pg_temp.caught.  Roles are created inside
-- the transaction and rolled back; the test's own (super)user is the
-- session_user recorded.

BEGIN;
SELECT plan(72);

SET LOCAL client_min_messages = error;

-- The feeder of group g1 (its documented grant), a member of its role
-- that may accept, another group's feeder granted everything, and a
-- monitoring role.
CREATE ROLE ro_gap_feeder NOLOGIN;
CREATE ROLE ro_gap_member NOLOGIN IN ROLE ro_gap_feeder;
CREATE ROLE ro_gap_other NOLOGIN;
CREATE ROLE ro_gap_mon NOLOGIN IN ROLE pg_monitor;
GRANT USAGE ON SCHEMA received_orders TO ro_gap_feeder, ro_gap_member, ro_gap_other;
GRANT EXECUTE ON FUNCTION
	received_orders.consumer_positions(text, text),
	received_orders.record_position_gap(text, text, integer, bigint, bigint, boolean)
	TO ro_gap_feeder, ro_gap_other;
GRANT EXECUTE ON FUNCTION received_orders.accept_position_gap(text, text, integer)
	TO ro_gap_member, ro_gap_other;

-- The SQLSTATE, message and hint of a statement's error, or NULL.
CREATE FUNCTION pg_temp.caught(statement text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
	state text;
	msg text;
	hint text;
BEGIN
	EXECUTE statement;
	RETURN NULL;
EXCEPTION WHEN OTHERS THEN
	GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT,
		hint = PG_EXCEPTION_HINT;
	RETURN ARRAY[state, msg, hint];
END
$$;
GRANT EXECUTE ON FUNCTION pg_temp.caught(text) TO PUBLIC;

-- Structure -------------------------------------------------------------------

SELECT has_table('received_orders', 'received_orders_position_gaps',
	'table received_orders.received_orders_position_gaps exists');
SELECT columns_are('received_orders', 'received_orders_position_gaps',
	ARRAY['consumer_group', 'kafka_topic', 'kafka_partition', 'first_lost', 'last_lost',
	      'detected_at', 'detected_by', 'accepted_by', 'accepted_at']::name[],
	'received_orders_position_gaps has exactly the columns consumer_group, kafka_topic, kafka_partition, first_lost, last_lost, detected_at, detected_by, accepted_by, accepted_at');
SELECT col_is_pk('received_orders', 'received_orders_position_gaps',
	ARRAY['consumer_group', 'kafka_topic', 'kafka_partition', 'first_lost']::name[],
	'its primary key is (consumer_group, kafka_topic, kafka_partition, first_lost)');
SELECT is(
	(SELECT pg_catalog.pg_get_indexdef(i.indexrelid) FROM pg_catalog.pg_index i
	  WHERE i.indrelid = 'received_orders.received_orders_position_gaps'::regclass
	    AND i.indisunique AND NOT i.indisprimary),
	'CREATE UNIQUE INDEX received_orders_position_gaps_open_key ON received_orders.received_orders_position_gaps USING btree (consumer_group, kafka_topic, kafka_partition) WHERE (accepted_at IS NULL)',
	'a partial unique index allows one open gap per partition of a group');
SELECT col_type_is('received_orders', 'received_orders_position_gaps', 'accepted_by', 'name',
	'accepted_by is a role name');
SELECT is_empty(
	$$SELECT a.attname FROM pg_catalog.pg_attribute a
	   WHERE a.attrelid = 'received_orders.received_orders_position_gaps'::regclass
	     AND a.attnum > 0 AND NOT a.attisdropped AND NOT a.attnotnull
	     AND a.attname NOT IN ('accepted_by', 'accepted_at')$$,
	'every column is NOT NULL but accepted_by and accepted_at (NULL while open)');
SELECT ok(
	'received_orders.received_orders_position_gaps'::regclass::oid = ANY (
		(SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'received_orders')::oid[]),
	'received_orders_position_gaps is marked in pg_extension.extconfig (dumped by pg_dump)');
SELECT table_privs_are('received_orders', 'received_orders_position_gaps', 'public', '{}'::text[],
	'PUBLIC has no privilege on received_orders_position_gaps');
SELECT table_privs_are('received_orders', 'received_orders_position_gaps', 'pg_monitor', '{}'::text[],
	'pg_monitor has no privilege on the table itself');
SELECT has_view('received_orders', 'position_gaps', 'view received_orders.position_gaps exists');
SELECT columns_are('received_orders', 'position_gaps',
	ARRAY['consumer_group', 'kafka_topic', 'kafka_partition', 'first_lost', 'last_lost', 'lost',
	      'open', 'detected_at', 'detected_by', 'accepted_by', 'accepted_at']::name[],
	'position_gaps shows coordinates, the range, lost, open and who: no payload');
SELECT table_privs_are('received_orders', 'position_gaps', 'pg_monitor', ARRAY['SELECT'],
	'pg_monitor may SELECT from position_gaps, nothing else');
SELECT table_privs_are('received_orders', 'position_gaps', 'public', '{}'::text[],
	'PUBLIC has no privilege on position_gaps');
SELECT has_function('received_orders', 'record_position_gap',
	ARRAY['text', 'text', 'integer', 'bigint', 'bigint', 'boolean'],
	'function received_orders.record_position_gap(text, text, integer, bigint, bigint, boolean) exists');
SELECT function_returns('received_orders', 'record_position_gap',
	ARRAY['text', 'text', 'integer', 'bigint', 'bigint', 'boolean'], 'boolean',
	'record_position_gap returns boolean (whether the range is accepted)');
SELECT has_function('received_orders', 'accept_position_gap', ARRAY['text', 'text', 'integer'],
	'function received_orders.accept_position_gap(text, text, integer) exists');
SELECT function_returns('received_orders', 'accept_position_gap', ARRAY['text', 'text', 'integer'],
	'bigint', 'accept_position_gap returns bigint (the new position)');
SELECT is(
	(SELECT pg_catalog.array_agg(p.prosecdef::text || ' ' || p.proconfig::text ORDER BY p.proname)
	   FROM pg_catalog.pg_proc p
	  WHERE p.oid IN ('received_orders.record_position_gap(text, text, integer, bigint, bigint, boolean)'::regprocedure,
	                  'received_orders.accept_position_gap(text, text, integer)'::regprocedure)),
	ARRAY['true {"search_path=pg_catalog, pg_temp"}', 'true {"search_path=pg_catalog, pg_temp"}'],
	'both functions are SECURITY DEFINER with search_path pinned to pg_catalog, pg_temp');
SELECT function_privs_are('received_orders', 'record_position_gap',
	ARRAY['text', 'text', 'integer', 'bigint', 'bigint', 'boolean'], 'public', '{}'::text[],
	'PUBLIC may not execute record_position_gap');
SELECT function_privs_are('received_orders', 'accept_position_gap', ARRAY['text', 'text', 'integer'],
	'public', '{}'::text[], 'PUBLIC may not execute accept_position_gap');

-- record_position_gap -----------------------------------------------------------

-- group g1 is ro_gap_feeder's, at offset 100 of orders [0], 500 of orders [3]
-- (a group with positions is claimed by a DBA naming its owner)
SELECT received_orders.set_consumer_position('g1', 'orders', 0, 100);
SELECT received_orders.set_consumer_position('g1', 'orders', 3, 500);
SELECT received_orders.set_consumer_group_owner('g1', 'ro_gap_feeder');
SET ROLE ro_gap_feeder;
SELECT ok(
	(SELECT count(*) FROM received_orders.consumer_positions('g1', 'cluster-1')) = 2,
	'the feeder reads its group''s positions');
SELECT is(received_orders.record_position_gap('g1', 'orders', 0, 100, 149), false,
	'the feeder records offsets 100..149 lost: not accepted, the partition waits');
SELECT is(received_orders.record_position_gap('g1', 'orders', 0, 100, 149), false,
	'recording the same gap again answers the same');
RESET ROLE;
SELECT results_eq(
	$$SELECT first_lost, last_lost, detected_by, accepted_by, accepted_at
	    FROM received_orders.received_orders_position_gaps$$,
	$$VALUES (100::bigint, 149::bigint, session_user::name, NULL::name, NULL::timestamptz)$$,
	'one row: the range, found by the session''s role, open');

SET ROLE ro_gap_feeder;
SELECT is(received_orders.record_position_gap('g1', 'orders', 0, 100, 199), false,
	'retention deleted more: the same gap found with a later last offset');
SELECT is(received_orders.record_position_gap('g1', 'orders', 0, 100, 179), false,
	'... and with an earlier one (a stale answer)');
RESET ROLE;
SELECT results_eq(
	$$SELECT first_lost, last_lost FROM received_orders.received_orders_position_gaps$$,
	$$VALUES (100::bigint, 199::bigint)$$,
	'still one row, whose last_lost only grew (199)');

SELECT is(
	(pg_temp.caught($$SELECT received_orders.record_position_gap('g1', 'orders', 0, NULL, 199)$$))[1:2]::text,
	'{22004,"consumer_group, kafka_topic, kafka_partition, first_lost, last_lost and accept must not be null"}',
	'a NULL argument is refused (22004)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.record_position_gap('g1', 'orders', 0, 200, 199)$$))[1],
	'22023', 'last_lost below first_lost is refused (22023)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.record_position_gap('g1', 'orders', -1, 0, 1)$$))[1],
	'22023', 'a negative partition is refused (22023)');

SET ROLE ro_gap_other;
SELECT is(
	(pg_temp.caught($$SELECT received_orders.record_position_gap('g1', 'orders', 0, 100, 199)$$))[1],
	'42501', 'another group''s feeder may not record a gap of group g1 (42501)');
RESET ROLE;

-- pg_monitor reads the view, not the table ------------------------------------

SET ROLE ro_gap_mon;
SELECT results_eq(
	$$SELECT consumer_group, kafka_topic, kafka_partition, first_lost, last_lost, lost, open
	    FROM received_orders.position_gaps$$,
	$$VALUES ('g1', 'orders', 0, 100::bigint, 199::bigint, 100::bigint, true)$$,
	'a pg_monitor member reads the open gap through position_gaps: 100 offsets lost');
SELECT is(
	(pg_temp.caught($$SELECT * FROM received_orders.received_orders_position_gaps$$))[1],
	'42501', 'a pg_monitor member may not read the table');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.accept_position_gap('g1', 'orders', 0)$$))[1],
	'42501', 'a pg_monitor member may not accept a gap');
RESET ROLE;

-- accept_position_gap ------------------------------------------------------------

SET ROLE ro_gap_other;
SELECT is(
	(pg_temp.caught($$SELECT received_orders.accept_position_gap('g1', 'orders', 0)$$))[1:2]::text,
	'{42501,"permission denied for consumer group \"g1\""}',
	'a role granted EXECUTE that is not the group''s owner is refused (42501)');
RESET ROLE;
SELECT is(
	(SELECT count(*) FROM received_orders.received_orders_position_gaps WHERE accepted_at IS NULL), 1::bigint,
	'... and the gap stays open');

SELECT is(
	(pg_temp.caught($$SELECT received_orders.accept_position_gap('g1', 'orders', 1)$$))[1:2]::text,
	'{P0002,"consumer group \"g1\" has no open position gap on orders [1]"}',
	'a partition without an open gap is refused (P0002)');
SELECT matches(
	(pg_temp.caught($$SELECT received_orders.accept_position_gap('g1', 'orders', 1)$$))[3],
	'received_orders\.position_gaps',
	'... with a hint naming the view of the gaps');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.accept_position_gap('nobody', 'orders', 0)$$))[1],
	'P0002', 'a group without gaps is refused (P0002)');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.accept_position_gap('g1', NULL, 0)$$))[1],
	'22004', 'a NULL topic is refused (22004)');

SELECT is(received_orders.accept_position_gap('g1', 'orders', 0), 200::bigint,
	'a superuser accepts the gap: the new position is last_lost + 1');
SELECT results_eq(
	$$SELECT first_lost, last_lost, accepted_by, accepted_at IS NOT NULL
	    FROM received_orders.received_orders_position_gaps$$,
	$$VALUES (100::bigint, 199::bigint, session_user::name, true)$$,
	'the gap records who (session_user) accepted which range, and when');
SELECT is(
	(SELECT next_offset FROM received_orders.received_orders_positions
	  WHERE consumer_group = 'g1' AND kafka_topic = 'orders' AND kafka_partition = 0),
	200::bigint, 'the group''s position of the partition moved to the log start, 200');
SELECT is(
	(pg_temp.caught($$SELECT received_orders.accept_position_gap('g1', 'orders', 0)$$))[1],
	'P0002', 'accepting it again is refused (P0002): no open gap any more');

-- what an accepted gap covers is not recorded twice
SET ROLE ro_gap_feeder;
SELECT is(received_orders.record_position_gap('g1', 'orders', 0, 100, 199), true,
	'the accepted range found again (a second session of the feeder): answered accepted');
SELECT is(received_orders.record_position_gap('g1', 'orders', 0, 100, 249), false,
	'a range reaching past the accepted one: not accepted');
RESET ROLE;
SELECT results_eq(
	$$SELECT first_lost, last_lost, accepted_at IS NULL
	    FROM received_orders.received_orders_position_gaps ORDER BY first_lost$$,
	$$VALUES (100::bigint, 199::bigint, false), (200::bigint, 249::bigint, true)$$,
	'only the part past the accepted range is recorded, open (200..249)');

-- a gap found from another position replaces the open one
SET ROLE ro_gap_feeder;
SELECT is(received_orders.record_position_gap('g1', 'orders', 0, 220, 259), false,
	'the gap found from another position (220..259)');
RESET ROLE;
SELECT results_eq(
	$$SELECT first_lost, last_lost FROM received_orders.received_orders_position_gaps
	   WHERE accepted_at IS NULL$$,
	$$VALUES (220::bigint, 259::bigint)$$,
	'it replaced the open gap: one open gap per partition');

-- a member of the owner's role accepts; the position never moves backwards
SET ROLE ro_gap_feeder;
SELECT is(received_orders.record_position_gap('g1', 'orders', 3, 100, 199), false,
	'a gap below a position already moved further (orders [3] is at 500)');
RESET ROLE;
SET ROLE ro_gap_member;
SELECT is(received_orders.accept_position_gap('g1', 'orders', 3), 200::bigint,
	'a member of the owner''s role accepts it');
RESET ROLE;
SELECT is(
	(SELECT next_offset FROM received_orders.received_orders_positions
	  WHERE consumer_group = 'g1' AND kafka_topic = 'orders' AND kafka_partition = 3),
	500::bigint, 'the position is not moved backwards (stays 500)');
SELECT is(
	(SELECT accepted_by FROM received_orders.received_orders_position_gaps
	  WHERE kafka_partition = 3),
	session_user::name, 'accepted_by is the session''s user, whatever role was set');

-- --accept-position-loss: recorded accepted at once
SET ROLE ro_gap_feeder;
SELECT is(received_orders.record_position_gap('g1', 'orders', 2, 5, 9, true), true,
	'with accept the feeder records the gap accepted (--accept-position-loss)');
SELECT is(received_orders.record_position_gap('g1', 'orders', 2, 5, 9, true), true,
	'... idempotent');
RESET ROLE;
SELECT results_eq(
	$$SELECT first_lost, last_lost, detected_by, accepted_by, accepted_at IS NOT NULL
	    FROM received_orders.received_orders_position_gaps WHERE kafka_partition = 2$$,
	$$VALUES (5::bigint, 9::bigint, session_user::name, session_user::name, true)$$,
	'one accepted row, found and accepted by the feeder''s session role');
SELECT is(
	(SELECT count(*) FROM received_orders.received_orders_positions
	  WHERE consumer_group = 'g1' AND kafka_partition = 2),
	0::bigint, '... which moved no position (the feeder''s first batch does)');
SET ROLE ro_gap_mon;
SELECT results_eq(
	$$SELECT kafka_partition, lost, open FROM received_orders.position_gaps ORDER BY kafka_partition, first_lost$$,
	$$VALUES (0, 100::bigint, false), (0, 40::bigint, true), (2, 5::bigint, false), (3, 100::bigint, false)$$,
	'the view shows every gap, open or accepted, with how many offsets each lost');
RESET ROLE;

-- Bounds: the topic's length, the rows of a group -------------------------------

SET ROLE ro_gap_feeder;
SELECT is(received_orders.record_position_gap('gb1', repeat('t', 249), 0, 0, 9),
	false,
	'a topic of 249 bytes (Kafka''s limit) is recorded, open');
SELECT is((pg_temp.caught(format($$SELECT received_orders.record_position_gap('gb1', %L, 0, 0, 9)$$,
	repeat('t', 250))))[1],
	'22023',
	'a topic of 250 bytes is refused with 22023');
SELECT matches((pg_temp.caught(format($$SELECT received_orders.record_position_gap('gb1', %L, 0, 0, 9, true)$$,
	repeat('é', 125))))[3],
	'1 to 249 bytes',
	'a topic of 125 two-byte characters (250 bytes) is refused with a hint naming the limit in bytes');
SELECT is((pg_temp.caught(format($$SELECT received_orders.record_position_gap('gb1', %L, 1, 0, 9, true)$$,
	repeat('x', 1048576))))[1],
	'22023',
	'a topic of 1 MB is refused with 22023');
RESET ROLE;
SELECT is((SELECT count(*) FROM received_orders.received_orders_position_gaps
            WHERE consumer_group = 'gb1' AND octet_length(kafka_topic) > 249),
	0::bigint,
	'no gap of a topic longer than 249 bytes was written');

-- The rows of a group ------------------------------------------------------------

-- 4095 rows of group gb1 (the one above makes 4096): accepted history and
-- open gaps, as many partitions as the feeder could have met
INSERT INTO received_orders.received_orders_position_gaps
	(consumer_group, kafka_topic, kafka_partition, first_lost, last_lost, detected_by,
	 accepted_by, accepted_at)
SELECT 'gb1', 'orders', p, 0, 9, current_user,
       CASE WHEN p % 2 = 0 THEN current_user END, CASE WHEN p % 2 = 0 THEN now() END
  FROM generate_series(1, 4095) AS p;

SET ROLE ro_gap_feeder;
SELECT is((pg_temp.caught($$SELECT received_orders.record_position_gap('gb1', 'orders', 5000, 0, 9)$$))[1],
	'54000',
	'a new gap of a group holding 4096 rows is refused with 54000');
SELECT matches((pg_temp.caught($$SELECT received_orders.record_position_gap('gb1', 'orders', 5000, 0, 9)$$))[2],
	'^consumer group "gb1" holds 4096 position gaps; at most 4096 are kept$',
	'the message names the group, its rows and the limit');
SELECT matches((pg_temp.caught($$SELECT received_orders.record_position_gap('gb1', 'orders', 5000, 0, 9)$$))[3],
	'superuser removes the accepted gaps.*DELETE FROM received_orders.received_orders_position_gaps',
	'the hint names the superuser''s remedy');
SELECT is((pg_temp.caught($$SELECT received_orders.record_position_gap('gb1', 'orders', 2, 10, 19, true)$$))[1],
	'54000',
	'an accepted gap that would be a new row (--accept-position-loss, past an accepted one) is refused too');
SELECT is(received_orders.record_position_gap('gb1', 'orders', 1, 0, 12),
	false,
	'an open gap already recorded is found again in the full group (last_lost grows)');
SELECT is(received_orders.record_position_gap('gb2', 'orders', 5000, 0, 9),
	false,
	'another group of the same role records its gap');
RESET ROLE;
SELECT is((SELECT count(*) FROM received_orders.received_orders_position_gaps WHERE consumer_group = 'gb1'),
	4096::bigint,
	'the full group holds 4096 rows, none written by the refused calls');
SELECT is((SELECT last_lost FROM received_orders.received_orders_position_gaps
            WHERE consumer_group = 'gb1' AND kafka_partition = 1),
	12::bigint,
	'the gap found again moved its last_lost');

DELETE FROM received_orders.received_orders_position_gaps
 WHERE consumer_group = 'gb1' AND accepted_at IS NOT NULL;
SET ROLE ro_gap_feeder;
SELECT is(received_orders.record_position_gap('gb1', 'orders', 5000, 0, 9),
	false,
	'once a superuser removed the accepted gaps, the group records a new one');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
