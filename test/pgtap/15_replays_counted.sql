-- 15_replays_counted.sql — a replay is recorded and quarantine_summary
-- counts it.  replay_quarantined deletes the
-- quarantine row and, in the same statement, writes a row of
-- received_orders_replays (quarantine id, coordinates, outcome, SQLSTATE and
-- reason as quarantined, the order, what the replay made of it); a failed
-- replay records nothing.  quarantine_summary's column replayed counts them
-- per outcome, SQLSTATE and kind of reason, beside the messages still
-- waiting.  The table is dumped, not writable by PUBLIC nor by a role granted
-- replay_quarantined, and read by pg_monitor only through the view.
--
-- Roles are created inside the transaction and rolled back.

BEGIN;
SELECT plan(24);

-- Conflicts raise a WARNING each; expected here, so kept off the TAP output.
SET LOCAL client_min_messages = error;

CREATE ROLE ro_rp_operator NOLOGIN;
CREATE ROLE ro_rp_mon NOLOGIN IN ROLE pg_monitor;
GRANT USAGE ON SCHEMA received_orders TO ro_rp_operator;
GRANT EXECUTE ON FUNCTION received_orders.replay_quarantined(bigint) TO ro_rp_operator;

-- Structure -------------------------------------------------------------------

SELECT has_table('received_orders', 'received_orders_replays',
	'table received_orders.received_orders_replays exists');
SELECT columns_are('received_orders', 'received_orders_replays',
	ARRAY['quarantine_id', 'kafka_topic', 'kafka_partition', 'kafka_offset', 'outcome',
	      'sqlstate', 'reason', 'quarantined_at', 'order_id', 'replayed_as', 'replayed_at'],
	'received_orders_replays has exactly the columns of a replay''s record');
SELECT col_is_pk('received_orders', 'received_orders_replays', 'quarantine_id',
	'its primary key is the quarantine id');
SELECT col_type_is('received_orders', 'received_orders_replays', 'replayed_as',
	'received_orders.materialize_outcome', 'replayed_as is a materialize_outcome');
SELECT col_default_is('received_orders', 'received_orders_replays', 'replayed_at', 'now()',
	'replayed_at defaults to now()');
SELECT ok(
	'received_orders.received_orders_replays'::regclass = ANY
		((SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'received_orders')::oid[]),
	'received_orders_replays is marked in pg_extension.extconfig (dumped by pg_dump)');
SELECT table_privs_are('received_orders', 'received_orders_replays', 'public', '{}'::text[],
	'PUBLIC has no privilege on received_orders_replays');
SELECT table_privs_are('received_orders', 'received_orders_replays', 'pg_monitor', '{}'::text[],
	'pg_monitor has no privilege on the table received_orders_replays');

-- A quarantine: two blank references (one kind of reason), invalid UTF-8 and
-- a conflict ----------------------------------------------------------------------

SELECT is(
	received_orders.materialize_order('{"orderId": "f1500000-0000-4000-8000-000000000003", "externalReference": "ref-3"}'),
	'inserted',
	'order f3 is stored before the batch');
SELECT results_eq(
	$$SELECT outcome::text FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "f1500000-0000-4000-8000-000000000001", "externalReference": "  "}', 'UTF8'),
	          convert_to('{"orderId": "f1500000-0000-4000-8000-000000000002", "externalReference": "   "}', 'UTF8'),
	          '\xff'::bytea,
	          convert_to('{"orderId": "f1500000-0000-4000-8000-000000000003", "externalReference": "ref-3-other"}', 'UTF8')],
	    array_fill('orders-15'::text, ARRAY[4]), array_fill(0, ARRAY[4]),
	    ARRAY[1, 2, 3, 4]::bigint[], NULL) ORDER BY position$$,
	$$VALUES ('rejected'::text), ('rejected'), ('rejected'), ('conflict')$$,
	'the batch quarantines two blank references, invalid UTF-8 and a conflict');

CREATE TEMP TABLE q AS
	SELECT kafka_offset, id, reason FROM received_orders.received_orders_quarantine
	 WHERE kafka_topic = 'orders-15';
GRANT SELECT ON q TO ro_rp_operator, ro_rp_mon;

SELECT is(
	(SELECT sum(replayed)::int FROM received_orders.quarantine_summary),
	0,
	'nothing replayed yet');

-- Replays ---------------------------------------------------------------------------

UPDATE received_orders.received_orders_quarantine
   SET raw_value = convert_to('{"orderId": "f1500000-0000-4000-8000-000000000001", "externalReference": "repaired-1"}', 'UTF8')
 WHERE id = (SELECT id FROM q WHERE kafka_offset = 1);
UPDATE received_orders.received_orders_quarantine
   SET raw_value = convert_to('{"orderId": "f1500000-0000-4000-8000-000000000003", "externalReference": "ref-3"}', 'UTF8')
 WHERE id = (SELECT id FROM q WHERE kafka_offset = 4);

SET ROLE ro_rp_operator;
SELECT is(
	received_orders.replay_quarantined((SELECT id FROM q WHERE kafka_offset = 1)),
	'inserted',
	'a repaired blank reference replays as inserted');
SELECT is(
	received_orders.replay_quarantined((SELECT id FROM q WHERE kafka_offset = 4)),
	'duplicate',
	'the conflict, repaired to the stored reference, replays as duplicate');
SELECT throws_ok(
	format('SELECT received_orders.replay_quarantined(%s)', (SELECT id FROM q WHERE kafka_offset = 2)),
	'22023', NULL,
	'the unrepaired blank reference fails its replay');
SELECT throws_ok(
	$$INSERT INTO received_orders.received_orders_replays
	    (quarantine_id, outcome, sqlstate, reason, quarantined_at, order_id, replayed_as)
	  VALUES (0, 'rejected', '22023', 'forged', now(), 'f1500000-0000-4000-8000-000000000009', 'inserted')$$,
	'42501', NULL,
	'a role granted replay_quarantined cannot write received_orders_replays');
RESET ROLE;

SELECT results_eq(
	$$SELECT r.quarantine_id, r.kafka_topic, r.kafka_partition, r.kafka_offset, r.outcome::text,
	         r.sqlstate, r.reason = q.reason, r.order_id, r.replayed_as::text, r.replayed_at = now()
	    FROM received_orders.received_orders_replays r JOIN q ON q.id = r.quarantine_id
	   ORDER BY r.kafka_offset$$,
	$$SELECT q.id, 'orders-15'::text, 0, q.kafka_offset, v.outcome, v.sqlstate, true,
	         v.order_id::uuid, v.replayed_as, true
	    FROM q JOIN (VALUES (1::bigint, 'rejected'::text, '22023'::text, 'f1500000-0000-4000-8000-000000000001', 'inserted'::text),
	                        (4, 'conflict', '23505', 'f1500000-0000-4000-8000-000000000003', 'duplicate'))
	         AS v (kafka_offset, outcome, sqlstate, order_id, replayed_as) USING (kafka_offset)
	   ORDER BY q.kafka_offset$$,
	'each replay is recorded with the quarantine id, coordinates, outcome, SQLSTATE and reason as quarantined, the order and what the replay made of it');
SELECT is_empty(
	$$SELECT FROM received_orders.received_orders_replays r JOIN q ON q.id = r.quarantine_id
	   WHERE q.kafka_offset IN (2, 3)$$,
	'a failed replay, or none, records nothing');
SELECT is(
	(SELECT count(*)::int FROM received_orders.received_orders_quarantine q2 JOIN q USING (id)),
	2,
	'the replayed rows left the quarantine, the others stay');

-- What quarantine_summary says ----------------------------------------------------

SET ROLE ro_rp_mon;
SELECT results_eq(
	$$SELECT outcome::text, sqlstate, messages::int, replayed::int, topics::int, oldest IS NULL, newest IS NULL
	    FROM received_orders.quarantine_summary
	   WHERE outcome = 'conflict' OR sqlstate = '22023'
	   ORDER BY outcome$$,
	$$VALUES ('conflict'::text, '23505'::text, 0, 1, 0, true, true),
	         ('rejected', '22023', 1, 1, 1, false, false)$$,
	'pg_monitor reads quarantine_summary: a blank reference replayed beside one waiting, the only conflict replayed');
SELECT throws_ok($$SELECT * FROM received_orders.received_orders_replays$$, '42501', NULL,
	'pg_monitor cannot read the table itself');
RESET ROLE;
SELECT is(
	(SELECT example FROM received_orders.quarantine_examples WHERE outcome = 'conflict'),
	(SELECT reason FROM q WHERE kafka_offset = 4),
	'quarantine_examples: a kind whose every message was replayed keeps its latest reason as example');
SELECT is(
	(SELECT example FROM received_orders.quarantine_examples
	  WHERE outcome = 'rejected' AND sqlstate = '22023'),
	(SELECT reason FROM q WHERE kafka_offset = 2),
	'otherwise the example is the newest waiting reason');

-- the example of a kind replayed twice is the reason of the highest
-- quarantine id, whenever it was quarantined or replayed
INSERT INTO received_orders.received_orders_replays
	(quarantine_id, outcome, sqlstate, reason, quarantined_at, order_id, replayed_as, replayed_at)
VALUES (-1, 'rejected', 'P0015', 'probe reason 1', now() - interval '2 hours',
        'f1500000-0000-4000-8000-00000000000a', 'inserted', now() + interval '1 minute'),
       (-2, 'rejected', 'P0015', 'probe reason 2', now() - interval '1 hour',
        'f1500000-0000-4000-8000-00000000000b', 'inserted', now());
SELECT is(
	(SELECT example FROM received_orders.quarantine_examples WHERE sqlstate = 'P0015'),
	'probe reason 1',
	'a kind whose every message was replayed shows the reason of its highest quarantine id');

SELECT results_eq(
	$$SELECT sum(messages)::int, sum(replayed)::int FROM received_orders.quarantine_summary$$,
	$$SELECT (SELECT count(*)::int FROM received_orders.received_orders_quarantine),
	         (SELECT count(*)::int FROM received_orders.received_orders_replays)$$,
	'every waiting message and every replay is counted once');

SELECT * FROM finish();
ROLLBACK;
