-- 06_replay_equivalence.sql — redelivery and reordering change nothing: the
-- same batch applied twice leaves the same orders and quarantine as once, and
-- the same elements in other orders leave the same rows.
--
-- Between runs the state is reset by deleting this file's rows (its orderIds
-- share the prefix e0000000-, its topic is orders-06) and storing P again.  A
-- SAVEPOINT / ROLLBACK TO would also roll back the captured contents (temp
-- tables are transactional) and pgTAP's own results, so it cannot serve here.
-- The batch holds no two differing events for one orderId other than a
-- conflict with the pre-stored P, so every order of its elements must give
-- the same outcome per element.

BEGIN;
SELECT plan(10);

-- Conflicts raise a WARNING each; expected here, so kept off the TAP output.
SET LOCAL client_min_messages = error;

CREATE TEMP TABLE batch (pos integer PRIMARY KEY, shuffle integer UNIQUE NOT NULL, value bytea,
                         topic text, part integer, off bigint, key bytea);
INSERT INTO batch (pos, shuffle, value) VALUES
	(1, 4, convert_to('{"orderId": "e0000000-0000-4000-8000-000000000001", "externalReference": "ref-1", "amount": 1}', 'UTF8')),
	(2, 7, convert_to('{"orderId": "e0000000-0000-4000-8000-000000000002", "externalReference": "ref-2", "lines": [1, 2]}', 'UTF8')),
	(3, 2, convert_to('{"orderId": "e0000000-0000-4000-8000-0000000000ff", "externalReference": "ref-p-other"}', 'UTF8')),
	(4, 10, convert_to('{"orderId": "e0000000-0000-4000-8000-000000000003", "externalReference": "ref-3", "note": null}', 'UTF8')),
	(5, 5, convert_to('{"orderId": "e0000000-0000-4000-8000-000000000002", "externalReference": "ref-2", "lines": [1, 2]}', 'UTF8')),
	(6, 9, convert_to('garbage', 'UTF8')),
	(7, 1, convert_to('{"orderId": "e0000000-0000-4000-8000-000000000004", "externalReference": "ref-4"}', 'UTF8')),
	(8, 11, convert_to('{ "note" : null, "externalReference" : "ref-3", "orderId" : "e0000000-0000-4000-8000-000000000003" }', 'UTF8')),
	(9, 6, convert_to('{"orderId": "e0000000-0000-4000-8000-000000000009", "externalReference": " "}', 'UTF8')),
	(10, 3, convert_to('{"orderId": "e0000000-0000-4000-8000-000000000005", "externalReference": "ref-5", "customer": {"id": 5}}', 'UTF8')),
	(11, 8, convert_to('{"orderId": "e0000000-0000-4000-8000-0000000000ff", "externalReference": "ref-p"}', 'UTF8'));
UPDATE batch SET topic = 'orders-06', part = 1, off = 100 + pos, key = convert_to('k' || pos, 'UTF8');

-- Fresh state: only P is stored.
SELECT is(
	received_orders.materialize_order('{"orderId": "e0000000-0000-4000-8000-0000000000ff", "externalReference": "ref-p"}'),
	'inserted',
	'fresh state: order P is stored');

-- Once ------------------------------------------------------------------------------------
CREATE TEMP TABLE once_results AS
	SELECT r.* FROM received_orders.materialize_orders(
	         (SELECT array_agg(value ORDER BY pos) FROM batch), (SELECT array_agg(topic ORDER BY pos) FROM batch),
	         (SELECT array_agg(part ORDER BY pos) FROM batch), (SELECT array_agg(off ORDER BY pos) FROM batch),
	         (SELECT array_agg(key ORDER BY pos) FROM batch)) r;
CREATE TEMP TABLE once_orders AS
	SELECT order_id, external_reference, payload FROM received_orders.received_orders
	 WHERE order_id::text LIKE 'e0000000-%';
CREATE TEMP TABLE once_quarantine AS
	SELECT kafka_topic, kafka_partition, kafka_offset, kafka_key, raw_value, order_id, outcome, sqlstate, reason
	  FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-06';

-- Twice -----------------------------------------------------------------------------------
CREATE TEMP TABLE twice_results AS
	SELECT r.* FROM received_orders.materialize_orders(
	         (SELECT array_agg(value ORDER BY pos) FROM batch), (SELECT array_agg(topic ORDER BY pos) FROM batch),
	         (SELECT array_agg(part ORDER BY pos) FROM batch), (SELECT array_agg(off ORDER BY pos) FROM batch),
	         (SELECT array_agg(key ORDER BY pos) FROM batch)) r;
CREATE TEMP TABLE twice_orders AS
	SELECT order_id, external_reference, payload FROM received_orders.received_orders
	 WHERE order_id::text LIKE 'e0000000-%';
CREATE TEMP TABLE twice_quarantine AS
	SELECT kafka_topic, kafka_partition, kafka_offset, kafka_key, raw_value, order_id, outcome, sqlstate, reason
	  FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-06';

SELECT results_eq(
	$$SELECT order_id, external_reference FROM once_orders ORDER BY order_id$$,
	$$VALUES ('e0000000-0000-4000-8000-000000000001'::uuid, 'ref-1'::text), ('e0000000-0000-4000-8000-000000000002', 'ref-2'),
	         ('e0000000-0000-4000-8000-000000000003', 'ref-3'), ('e0000000-0000-4000-8000-000000000004', 'ref-4'),
	         ('e0000000-0000-4000-8000-000000000005', 'ref-5'), ('e0000000-0000-4000-8000-0000000000ff', 'ref-p')$$,
	'once: the five valid orders are stored beside P');
SELECT results_eq(
	$$SELECT kafka_offset, outcome::text, sqlstate FROM once_quarantine ORDER BY kafka_offset$$,
	$$VALUES (103::bigint, 'conflict'::text, '23505'::text), (106, 'rejected', '22P02'), (109, 'rejected', '22023')$$,
	'once: the conflict and the two invalid elements are quarantined');
SELECT results_eq(
	$$SELECT * FROM twice_orders ORDER BY order_id$$,
	$$SELECT * FROM once_orders ORDER BY order_id$$,
	'twice: received_orders is identical to once (order_id, external_reference, payload)');
SELECT results_eq(
	$$SELECT * FROM twice_quarantine ORDER BY kafka_offset$$,
	$$SELECT * FROM once_quarantine ORDER BY kafka_offset$$,
	'twice: the quarantine is identical to once');

-- Reversed, from a fresh state ----------------------------------------------------------------
DELETE FROM received_orders.received_orders WHERE order_id::text LIKE 'e0000000-%';
DELETE FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-06';
CREATE TEMP TABLE reset_reversed AS
	SELECT received_orders.materialize_order('{"orderId": "e0000000-0000-4000-8000-0000000000ff", "externalReference": "ref-p"}') AS outcome;
CREATE TEMP TABLE reversed_results AS
	SELECT r.* FROM received_orders.materialize_orders(
	         (SELECT array_agg(value ORDER BY pos DESC) FROM batch), (SELECT array_agg(topic ORDER BY pos DESC) FROM batch),
	         (SELECT array_agg(part ORDER BY pos DESC) FROM batch), (SELECT array_agg(off ORDER BY pos DESC) FROM batch),
	         (SELECT array_agg(key ORDER BY pos DESC) FROM batch)) r;

SELECT is((SELECT outcome::text FROM reset_reversed), 'inserted', 'reversed: the reset state stores P afresh');
SELECT results_eq(
	$$SELECT order_id, external_reference, payload FROM received_orders.received_orders
	   WHERE order_id::text LIKE 'e0000000-%' ORDER BY order_id$$,
	$$SELECT * FROM once_orders ORDER BY order_id$$,
	'reversed batch: received_orders rows identical to the original order');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, kafka_offset, kafka_key, raw_value, order_id, outcome, sqlstate
	    FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-06' ORDER BY kafka_offset$$,
	$$SELECT kafka_topic, kafka_partition, kafka_offset, kafka_key, raw_value, order_id, outcome, sqlstate
	    FROM once_quarantine ORDER BY kafka_offset$$,
	'reversed batch: the same elements are quarantined with the same outcome and sqlstate');

-- Shuffled, from a fresh state ----------------------------------------------------------------
DELETE FROM received_orders.received_orders WHERE order_id::text LIKE 'e0000000-%';
DELETE FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-06';
CREATE TEMP TABLE reset_shuffled AS
	SELECT received_orders.materialize_order('{"orderId": "e0000000-0000-4000-8000-0000000000ff", "externalReference": "ref-p"}') AS outcome;
CREATE TEMP TABLE shuffled_results AS
	SELECT r.* FROM received_orders.materialize_orders(
	         (SELECT array_agg(value ORDER BY shuffle) FROM batch), (SELECT array_agg(topic ORDER BY shuffle) FROM batch),
	         (SELECT array_agg(part ORDER BY shuffle) FROM batch), (SELECT array_agg(off ORDER BY shuffle) FROM batch),
	         (SELECT array_agg(key ORDER BY shuffle) FROM batch)) r;

SELECT results_eq(
	$$SELECT order_id, external_reference, payload FROM received_orders.received_orders
	   WHERE order_id::text LIKE 'e0000000-%' ORDER BY order_id$$,
	$$SELECT * FROM once_orders ORDER BY order_id$$,
	'shuffled batch: received_orders rows identical to the original order');
SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, kafka_offset, kafka_key, raw_value, order_id, outcome, sqlstate
	    FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-06' ORDER BY kafka_offset$$,
	$$SELECT kafka_topic, kafka_partition, kafka_offset, kafka_key, raw_value, order_id, outcome, sqlstate
	    FROM once_quarantine ORDER BY kafka_offset$$,
	'shuffled batch: the same elements are quarantined with the same outcome and sqlstate');

SELECT * FROM finish();
ROLLBACK;
