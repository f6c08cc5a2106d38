-- 05_replay.sql — replay_quarantined(id): a message repaired by a DBA is
-- materialized and leaves the quarantine; a message still invalid or still
-- conflicting raises its SQLSTATE and stays; unknown id P0002, NULL 22004.

BEGIN;
SELECT plan(19);

-- Conflicts raise a WARNING each; expected here, so kept off the TAP output.
SET LOCAL client_min_messages = error;

-- d...03 and d...04 are stored before the batch, so their messages conflict.
SELECT is(
	received_orders.materialize_order('{"orderId": "d0000000-0000-4000-8000-000000000003", "externalReference": "ref-3"}'),
	'inserted',
	'order d3 is stored before the batch');
SELECT is(
	received_orders.materialize_order('{"orderId": "d0000000-0000-4000-8000-000000000004", "externalReference": "ref-4"}'),
	'inserted',
	'order d4 is stored before the batch');

SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate
	    FROM received_orders.materialize_orders(
	           ARRAY[convert_to('{"orderId": "d0000000-0000-4000-8000-000000000001", "externalReference": "   "}', 'UTF8'),
	                 '\xff'::bytea,
	                 convert_to('{"orderId": "d0000000-0000-4000-8000-000000000003", "externalReference": "ref-3-other"}', 'UTF8'),
	                 convert_to('{"orderId": "d0000000-0000-4000-8000-000000000004", "externalReference": "ref-4-other"}', 'UTF8'),
	                 convert_to('{"orderId": "d0000000-0000-4000-8000-000000000005", "externalReference": ""}', 'UTF8'),
	                 NULL],
	           array_fill('orders-05'::text, ARRAY[6]),
	           array_fill(0, ARRAY[6]),
	           ARRAY[1, 2, 3, 4, 5, 6]::bigint[],
	           NULL)$$,
	$$VALUES (1, 'rejected'::text, '22023'::text), (2, 'rejected', '22P02'), (3, 'conflict', '23505'),
	         (4, 'conflict', '23505'), (5, 'rejected', '22023'), (6, 'rejected', '22004')$$,
	'the batch quarantines two blank references, invalid UTF-8, two conflicts and a tombstone');

CREATE TEMP TABLE q AS
	SELECT kafka_offset, id FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-05';

-- Repaired by a DBA: inserted, and out of the quarantine ----------------------------------

UPDATE received_orders.received_orders_quarantine
   SET raw_value = convert_to('{"orderId": "d0000000-0000-4000-8000-000000000001", "externalReference": "repaired-1", "x": [1]}', 'UTF8')
 WHERE id = (SELECT id FROM q WHERE kafka_offset = 1);

SELECT is(
	received_orders.replay_quarantined((SELECT id FROM q WHERE kafka_offset = 1)),
	'inserted',
	'a repaired message replays as inserted');
SELECT results_eq(
	$$SELECT external_reference, payload FROM received_orders.received_orders
	   WHERE order_id = 'd0000000-0000-4000-8000-000000000001'$$,
	$$VALUES ('repaired-1'::text,
	          '{"orderId": "d0000000-0000-4000-8000-000000000001", "externalReference": "repaired-1", "x": [1]}'::jsonb)$$,
	'the repaired message is now in received_orders, payload from the repaired bytes');
SELECT is_empty(
	$$SELECT id FROM received_orders.received_orders_quarantine WHERE id = (SELECT id FROM q WHERE kafka_offset = 1)$$,
	'the replayed message left the quarantine');
SELECT throws_ok(
	$$SELECT received_orders.replay_quarantined((SELECT id FROM q WHERE kafka_offset = 1))$$,
	'P0002', NULL,
	'replaying the same id again finds nothing (P0002)');

-- A repaired conflict that now matches the stored order: duplicate, and out of the quarantine.
UPDATE received_orders.received_orders_quarantine
   SET raw_value = convert_to('{"orderId": "d0000000-0000-4000-8000-000000000004", "externalReference": "ref-4"}', 'UTF8')
 WHERE id = (SELECT id FROM q WHERE kafka_offset = 4);
SELECT is(
	received_orders.replay_quarantined((SELECT id FROM q WHERE kafka_offset = 4)),
	'duplicate',
	'a repaired conflict that matches the stored order replays as duplicate');
SELECT is_empty(
	$$SELECT id FROM received_orders.received_orders_quarantine WHERE id = (SELECT id FROM q WHERE kafka_offset = 4)$$,
	'the replayed duplicate left the quarantine');

-- Still invalid: the validation SQLSTATE, the row stays ---------------------------------

SELECT throws_ok(
	$$SELECT received_orders.replay_quarantined((SELECT id FROM q WHERE kafka_offset = 2))$$,
	'22P02', NULL,
	'replaying still-invalid UTF-8 raises 22P02');
SELECT throws_ok(
	$$SELECT received_orders.replay_quarantined((SELECT id FROM q WHERE kafka_offset = 5))$$,
	'22023', NULL,
	'replaying a still-blank externalReference raises 22023');
SELECT throws_like(
	$$SELECT received_orders.replay_quarantined((SELECT id FROM q WHERE kafka_offset = 5))$$,
	'%externalReference%',
	'the replay error names externalReference');
SELECT throws_ok(
	$$SELECT received_orders.replay_quarantined((SELECT id FROM q WHERE kafka_offset = 6))$$,
	'22004', NULL,
	'replaying a quarantined tombstone (NULL raw_value) raises 22004');

-- Still conflicting: 23505, the row stays, the stored order unchanged --------------------

SELECT throws_ok(
	$$SELECT received_orders.replay_quarantined((SELECT id FROM q WHERE kafka_offset = 3))$$,
	'23505', NULL,
	'replaying a still-conflicting message raises 23505');
SELECT is(
	(SELECT external_reference FROM received_orders.received_orders WHERE order_id = 'd0000000-0000-4000-8000-000000000003'),
	'ref-3',
	'the stored order of the conflict is unchanged');

SELECT results_eq(
	$$SELECT kafka_offset, raw_value, outcome::text, sqlstate
	    FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-05' ORDER BY kafka_offset$$,
	$$VALUES (2::bigint, '\xff'::bytea, 'rejected'::text, '22P02'::text),
	         (3, convert_to('{"orderId": "d0000000-0000-4000-8000-000000000003", "externalReference": "ref-3-other"}', 'UTF8'),
	          'conflict', '23505'),
	         (5, convert_to('{"orderId": "d0000000-0000-4000-8000-000000000005", "externalReference": ""}', 'UTF8'),
	          'rejected', '22023'),
	         (6, NULL, 'rejected', '22004')$$,
	'the messages whose replay failed are still quarantined with their bytes, outcome and sqlstate');

-- Unknown id and NULL ------------------------------------------------------------------

SELECT throws_ok(
	$$SELECT received_orders.replay_quarantined(
	    (SELECT coalesce(max(id), 0) + 1000000 FROM received_orders.received_orders_quarantine))$$,
	'P0002', NULL,
	'an unknown id raises P0002');
SELECT throws_ok(
	$$SELECT received_orders.replay_quarantined(NULL)$$,
	'22004', NULL,
	'a NULL id raises 22004');
SELECT throws_ok(
	$$SELECT received_orders.replay_quarantined(NULL::bigint)$$,
	'22004', NULL,
	'a NULL::bigint id raises 22004');

SELECT * FROM finish();
ROLLBACK;
