-- 04_materialize_orders.sql — materialize_orders(...) on a mixed batch: one
-- result row per element in input order with the exact outcome and SQLSTATE;
-- rejected and conflicting elements quarantined byte for byte with their
-- coordinates, once even when redelivered; first occurrence wins within a
-- batch; rows inserted in order_id order; coordinate arrays must match in
-- length; a DBA trigger's error that an event's data can cause (class 23) is
-- isolated to its element, but a transient or systemic error (any other
-- class) fails the whole call, and a trigger that suppresses the insert gives
-- a permanent 09000, not an endless 40001.

BEGIN;
SELECT plan(56);

-- Conflicts raise a WARNING each; expected here, so kept off the TAP output.
SET LOCAL client_min_messages = error;

-- Larger than this is 54000; every element below but the oversized one fits.
SET LOCAL received_orders.max_event_bytes = 600;

-- Record the order in which rows reach the table.
CREATE TABLE public.ro_test_insert_log (seq bigserial PRIMARY KEY, order_id uuid NOT NULL);
CREATE FUNCTION public.ro_test_log_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.ro_test_insert_log (order_id) VALUES (NEW.order_id);
	RETURN NULL;
END
$$;
CREATE TRIGGER ro_test_log_insert AFTER INSERT ON received_orders.received_orders
	FOR EACH ROW EXECUTE FUNCTION public.ro_test_log_insert();

-- S is stored before the batch.
SELECT is(
	received_orders.materialize_order('{"orderId": "c0000000-0000-4000-8000-000000000005", "externalReference": "ref-s"}'),
	'inserted',
	'order S is stored before the batch');

-- The batch, with what each element must yield.
CREATE TEMP TABLE batch (
	pos integer PRIMARY KEY,
	value bytea,
	topic text,
	part integer,
	off bigint,
	key bytea,
	expect_outcome text,
	expect_sqlstate text,
	expect_order uuid);
INSERT INTO batch (pos, value, expect_outcome, expect_sqlstate, expect_order) VALUES
	-- valid A
	(1, convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000a0", "externalReference": "ref-a", "n": 1}', 'UTF8'),
	    'inserted', NULL, 'c0000000-0000-4000-8000-0000000000a0'),
	-- duplicate of stored S
	(2, convert_to('{"orderId": "c0000000-0000-4000-8000-000000000005", "externalReference": "ref-s"}', 'UTF8'),
	    'duplicate', NULL, 'c0000000-0000-4000-8000-000000000005'),
	-- duplicate within the batch (A again, same bytes)
	(3, convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000a0", "externalReference": "ref-a", "n": 1}', 'UTF8'),
	    'duplicate', NULL, 'c0000000-0000-4000-8000-0000000000a0'),
	-- conflicting with stored S
	(4, convert_to('{"orderId": "c0000000-0000-4000-8000-000000000005", "externalReference": "ref-s-other"}', 'UTF8'),
	    'conflict', '23505', 'c0000000-0000-4000-8000-000000000005'),
	-- invalid UTF-8
	(5, '\xfffe'::bytea, 'rejected', '22P02', NULL),
	-- \u0000 (a literal backslash: standard_conforming_strings is on)
	(6, convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000b0", "externalReference": "x", "s": "\u0000"}', 'UTF8'),
	    'rejected', '22P05', NULL),
	-- not JSON
	(7, convert_to('not json', 'UTF8'), 'rejected', '22P02', NULL),
	-- a JSON array
	(8, convert_to('[1, 2]', 'UTF8'), 'rejected', '22023', NULL),
	-- externalReference missing
	(9, convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000c0"}', 'UTF8'), 'rejected', '22023', NULL),
	-- larger than max_event_bytes
	(10, convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000d0", "externalReference": "big", "padding": "'
	                || repeat('p', 1000) || '"}', 'UTF8'),
	    'rejected', '54000', NULL),
	-- NULL element (tombstone)
	(11, NULL, 'rejected', '22004', NULL),
	-- conflicting with A earlier in the same batch: the first occurrence wins
	(12, convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000a0", "externalReference": "ref-a-other"}', 'UTF8'),
	    'conflict', '23505', 'c0000000-0000-4000-8000-0000000000a0'),
	-- orderId not a uuid
	(13, convert_to('{"orderId": "nope", "externalReference": "x"}', 'UTF8'), 'rejected', '22P02', NULL),
	-- externalReference of 256 characters
	(14, convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000e0", "externalReference": "' || repeat('r', 256) || '"}', 'UTF8'),
	    'rejected', '22001', NULL),
	-- valid B, sorting before A
	(15, convert_to('{"orderId": "c0000000-0000-4000-8000-000000000010", "externalReference": "ref-b"}', 'UTF8'),
	    'inserted', NULL, 'c0000000-0000-4000-8000-000000000010'),
	-- orderId missing
	(16, convert_to('{"externalReference": "x"}', 'UTF8'), 'rejected', '22023', NULL);
UPDATE batch
   SET topic = 'orders-04', part = 3, off = 1000 + pos,
       key = CASE WHEN pos = 7 THEN NULL ELSE convert_to('key-' || pos, 'UTF8') END;

CREATE TEMP TABLE run1 AS
	SELECT r.*
	  FROM received_orders.materialize_orders(
	         (SELECT array_agg(value ORDER BY pos) FROM batch),
	         (SELECT array_agg(topic ORDER BY pos) FROM batch),
	         (SELECT array_agg(part ORDER BY pos) FROM batch),
	         (SELECT array_agg(off ORDER BY pos) FROM batch),
	         (SELECT array_agg(key ORDER BY pos) FROM batch))
	       WITH ORDINALITY AS r("position", order_id, outcome, sqlstate, message, ord);

-- Per-element results ---------------------------------------------------------------------

SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate FROM run1 ORDER BY ord$$,
	$$SELECT pos, expect_outcome, expect_sqlstate FROM batch ORDER BY pos$$,
	'one result per element, in input order, with the exact (position, outcome, sqlstate)');
SELECT results_eq(
	$$SELECT "position", order_id FROM run1 WHERE outcome <> 'rejected' ORDER BY ord$$,
	$$SELECT pos, expect_order FROM batch WHERE expect_outcome <> 'rejected' ORDER BY pos$$,
	'inserted, duplicate and conflict results carry the order_id');
SELECT is_empty(
	$$SELECT "position" FROM run1
	   WHERE (outcome IN ('inserted', 'duplicate') AND (sqlstate IS NOT NULL OR message IS NOT NULL))
	      OR (outcome IN ('conflict', 'rejected') AND coalesce(btrim(message), '') = '')$$,
	'message is NULL for inserted/duplicate and non-empty for conflict/rejected');

-- The table ---------------------------------------------------------------------------------

SELECT results_eq(
	$$SELECT order_id, external_reference, payload FROM received_orders.received_orders
	   WHERE order_id IN ('c0000000-0000-4000-8000-0000000000a0', 'c0000000-0000-4000-8000-000000000005',
	                      'c0000000-0000-4000-8000-000000000010')
	   ORDER BY order_id$$,
	$$VALUES ('c0000000-0000-4000-8000-000000000005'::uuid, 'ref-s'::text,
	          '{"orderId": "c0000000-0000-4000-8000-000000000005", "externalReference": "ref-s"}'::jsonb),
	         ('c0000000-0000-4000-8000-000000000010', 'ref-b',
	          '{"orderId": "c0000000-0000-4000-8000-000000000010", "externalReference": "ref-b"}'),
	         ('c0000000-0000-4000-8000-0000000000a0', 'ref-a',
	          '{"orderId": "c0000000-0000-4000-8000-0000000000a0", "externalReference": "ref-a", "n": 1}')$$,
	'A (first occurrence) and B are stored, S is unchanged by its conflict');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders
	  WHERE order_id IN ('c0000000-0000-4000-8000-0000000000b0', 'c0000000-0000-4000-8000-0000000000c0',
	                     'c0000000-0000-4000-8000-0000000000d0', 'c0000000-0000-4000-8000-0000000000e0')),
	0,
	'no rejected element was written to the table');
SELECT results_eq(
	$$SELECT order_id FROM public.ro_test_insert_log WHERE order_id <> 'c0000000-0000-4000-8000-000000000005' ORDER BY seq$$,
	$$VALUES ('c0000000-0000-4000-8000-000000000010'::uuid), ('c0000000-0000-4000-8000-0000000000a0')$$,
	'rows are inserted in order_id order (B before A although A comes first in the batch)');

-- The quarantine -----------------------------------------------------------------------------

SELECT results_eq(
	$$SELECT kafka_topic, kafka_partition, kafka_offset, kafka_key, raw_value, outcome::text, sqlstate
	    FROM received_orders.received_orders_quarantine
	   WHERE kafka_topic = 'orders-04' ORDER BY kafka_offset$$,
	$$SELECT topic, part, off, key, value, expect_outcome, expect_sqlstate
	    FROM batch WHERE expect_outcome IN ('rejected', 'conflict') ORDER BY pos$$,
	'the quarantine holds exactly the rejected and conflicting elements: coordinates, key, raw bytes, outcome, sqlstate');
SELECT is(
	(SELECT raw_value FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-04' AND kafka_offset = 1005),
	'\xfffe'::bytea,
	'invalid UTF-8 is quarantined byte for byte');
SELECT is(
	(SELECT raw_value FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-04' AND kafka_offset = 1006),
	convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000b0", "externalReference": "x", "s": "\u0000"}', 'UTF8'),
	'the \u0000 event is quarantined byte for byte');
SELECT results_eq(
	$$SELECT kafka_offset, order_id FROM received_orders.received_orders_quarantine
	   WHERE kafka_topic = 'orders-04' AND outcome = 'conflict' ORDER BY kafka_offset$$,
	$$VALUES (1004::bigint, 'c0000000-0000-4000-8000-000000000005'::uuid), (1012, 'c0000000-0000-4000-8000-0000000000a0')$$,
	'quarantined conflicts carry their order_id');
SELECT is_empty(
	$$SELECT id FROM received_orders.received_orders_quarantine
	   WHERE kafka_topic = 'orders-04' AND coalesce(btrim(reason), '') = ''$$,
	'every quarantined element has a non-empty reason');

-- Redelivery of the same batch -----------------------------------------------------------------

CREATE TEMP TABLE run2 AS
	SELECT r.*
	  FROM received_orders.materialize_orders(
	         (SELECT array_agg(value ORDER BY pos) FROM batch),
	         (SELECT array_agg(topic ORDER BY pos) FROM batch),
	         (SELECT array_agg(part ORDER BY pos) FROM batch),
	         (SELECT array_agg(off ORDER BY pos) FROM batch),
	         (SELECT array_agg(key ORDER BY pos) FROM batch))
	       WITH ORDINALITY AS r("position", order_id, outcome, sqlstate, message, ord);

SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate FROM run2 ORDER BY ord$$,
	$$SELECT pos, CASE WHEN expect_outcome = 'inserted' THEN 'duplicate' ELSE expect_outcome END,
	         expect_sqlstate
	    FROM batch ORDER BY pos$$,
	'the same batch again: the valid elements are duplicates, the others as before');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-04'),
	(SELECT count(*)::integer FROM batch WHERE expect_outcome IN ('rejected', 'conflict')),
	'the redelivered batch quarantines nothing new (unique coordinates)');
SELECT is(
	(SELECT count(*)::integer FROM public.ro_test_insert_log WHERE order_id <> 'c0000000-0000-4000-8000-000000000005'),
	2,
	'the redelivered batch inserts nothing');

-- Argument checks --------------------------------------------------------------------------------

SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(ARRAY['\x7b7d', '\x7b7d']::bytea[], ARRAY['t'], NULL, NULL, NULL)$$,
	'22023', NULL, 'kafka_topics of another length than kafka_values is rejected with 22023');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(ARRAY['\x7b7d', '\x7b7d']::bytea[], NULL, ARRAY[0, 0, 0], NULL, NULL)$$,
	'22023', NULL, 'kafka_partitions of another length than kafka_values is rejected with 22023');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(ARRAY['\x7b7d', '\x7b7d']::bytea[], NULL, NULL, ARRAY[1]::bigint[], NULL)$$,
	'22023', NULL, 'kafka_offsets of another length than kafka_values is rejected with 22023');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(ARRAY['\x7b7d', '\x7b7d']::bytea[], NULL, NULL, NULL, '{}'::bytea[])$$,
	'22023', NULL, 'kafka_keys of another length than kafka_values is rejected with 22023');
SELECT is_empty(
	$$SELECT * FROM received_orders.materialize_orders('{}'::bytea[])$$,
	'an empty batch returns no rows');
SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate
	    FROM received_orders.materialize_orders(ARRAY[
	           convert_to('{"orderId": "c0000000-0000-4000-8000-000000000020", "externalReference": "ref-20"}', 'UTF8'),
	           '\x01'::bytea])$$,
	$$VALUES (1, 'inserted'::text, NULL::text), (2, 'rejected', '22P02')$$,
	'coordinates may be omitted (they default to NULL)');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders_quarantine
	  WHERE raw_value = '\x01'::bytea AND kafka_topic IS NULL AND kafka_partition IS NULL AND kafka_offset IS NULL),
	1,
	'an element rejected without coordinates is quarantined with NULL coordinates');

-- A value jsonb cannot hold fails the fast path's parsing; the slow path
-- keeps what was decided before it, parses the rest alone and pins the error.
SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate
	    FROM received_orders.materialize_orders(ARRAY[
	           convert_to('{"orderId": "c0000000-0000-4000-8000-000000000030", "externalReference": "ref-30"}', 'UTF8'),
	           convert_to('{"orderId": "c0000000-0000-4000-8000-000000000031"}', 'UTF8'),
	           convert_to('{"orderId": "c0000000-0000-4000-8000-000000000032", "externalReference": "ref-32", "n": 1e999999}', 'UTF8'),
	           convert_to('{"orderId": "c0000000-0000-4000-8000-000000000033", "externalReference": "ref-33"}', 'UTF8'),
	           convert_to('{"orderId": "c0000000-0000-4000-8000-000000000030", "externalReference": "ref-30"}', 'UTF8')],
	         ARRAY['orders-04-overflow', 'orders-04-overflow', 'orders-04-overflow', 'orders-04-overflow', 'orders-04-overflow'],
	         ARRAY[0, 0, 0, 0, 0], ARRAY[1, 2, 3, 4, 5]::bigint[], NULL)$$,
	$$VALUES (1, 'inserted'::text, NULL::text), (2, 'rejected', '22023'), (3, 'rejected', '22003'),
	         (4, 'inserted', NULL), (5, 'duplicate', NULL)$$,
	'a number jsonb cannot hold rejects only its element (22003); the others keep their outcomes');
SELECT results_eq(
	$$SELECT kafka_offset, outcome::text, sqlstate FROM received_orders.received_orders_quarantine
	   WHERE kafka_topic = 'orders-04-overflow' ORDER BY kafka_offset$$,
	$$VALUES (2::bigint, 'rejected'::text, '22023'::text), (3, 'rejected', '22003')$$,
	'both rejected elements of that batch are quarantined once');

-- One JSON pass builds the jsonb and finds the syntax errors (event_parse.c): the
-- payload is PostgreSQL's own jsonb of the value, and where jsonb refuses something
-- before a later syntax error, the verdict stays the syntax error's ------------------------

CREATE TEMP TABLE one_pass (n integer, v text);
INSERT INTO one_pass VALUES
	(1, '{"orderId": "c0000000-0000-4000-8000-000000000040", "externalReference": "ref-40", "a": [1, -0, 2.50, 1.5e2, 1E-3, 123456789012345678901234567890], "b": {"c": {"d": [true, false, null, {}, []]}}, "s": "tab\tnl\nq\"u\u00e9\ud83d\ude00/\\", "k": 1, "k": 2}'),
	(2, '{"orderId": "c0000000-0000-4000-8000-000000000041", "externalReference": "ref-41", "z": 1, "y": "\u0041"}'),
	(3, '{"orderId": "c0000000-0000-4000-8000-000000000042", "externalReference": "ref-42", "n": 1e999999,}'),
	(4, '{"orderId": "c0000000-0000-4000-8000-000000000043", "externalReference": "ref-43", "s": "\ud800"}'),
	(5, '{"orderId": "c0000000-0000-4000-8000-000000000044", "externalReference": "ref-44", "s": "\ud800" "x"}'),
	(6, '42'),
	(7, '{"orderId": "c0000000-0000-4000-8000-000000000045", "externalReference": "ref-45" "x": 1}');
CREATE TEMP TABLE one_pass_result AS
SELECT r.* FROM received_orders.materialize_orders(
	(SELECT array_agg(convert_to(v, 'UTF8') ORDER BY n) FROM one_pass),
	array_fill('orders-04-one-pass'::text, ARRAY[7]), array_fill(0, ARRAY[7]),
	(SELECT array_agg(n::bigint ORDER BY n) FROM one_pass), NULL) AS r;
SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate FROM one_pass_result ORDER BY 1$$,
	$$VALUES (1, 'inserted'::text, NULL::text), (2, 'inserted', NULL), (3, 'rejected', '22P02'),
	         (4, 'rejected', '22P02'), (5, 'rejected', '22P02'), (6, 'rejected', '22023'), (7, 'rejected', '22P02')$$,
	'one pass: valid events stored; a syntax error after a number jsonb refuses, or after a lone surrogate, is the verdict (22P02)');
SELECT is(
	(SELECT count(*)::integer FROM one_pass p JOIN received_orders.received_orders o
	    ON o.order_id = (p.v::jsonb ->> 'orderId')::uuid AND o.payload = p.v::jsonb
	  WHERE p.n IN (1, 2)),
	2,
	'one pass: the stored payload is the value''s own jsonb (numbers, escapes, surrogate pairs, nesting, a repeated key)');
SELECT is(
	(SELECT message FROM one_pass_result WHERE "position" = 7),
	'event is not valid JSON: Expected "," or "}", but found ""x"".',
	'one pass: a syntax error is reported with the lexer''s detail');
SELECT is(
	(SELECT message FROM one_pass_result WHERE "position" = 4),
	'invalid input syntax for type json: Unicode low surrogate must follow a high surrogate.',
	'one pass: a lone surrogate gets jsonb''s own error, as before');
SELECT is(
	(SELECT message FROM one_pass_result WHERE "position" = 3),
	'event is not valid JSON: Expected string, but found "}".',
	'one pass: a huge exponent before a syntax error: the syntax error, as the separate syntax pass found it');

-- A DBA's trigger: a constraint-like error (class 23) is isolated to its element; any
-- other error fails the whole call -----------------------------------------------------------

CREATE FUNCTION public.ro_test_dba_rule() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.order_id = 'c0000000-0000-4000-8000-0000000000f1'::uuid THEN
		RAISE EXCEPTION 'DBA rule refuses order %', NEW.order_id
			USING ERRCODE = pg_catalog.current_setting('ro_test.dba_rule_errcode');
	END IF;
	RETURN NEW;
END
$$;
CREATE TRIGGER ro_test_dba_rule BEFORE INSERT ON received_orders.received_orders
	FOR EACH ROW EXECUTE FUNCTION public.ro_test_dba_rule();

SET LOCAL ro_test.dba_rule_errcode = '23514';
SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate
	    FROM received_orders.materialize_orders(
	           ARRAY[convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f0", "externalReference": "ref-f0"}', 'UTF8'),
	                 convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8'),
	                 convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f2", "externalReference": "ref-f2"}', 'UTF8')],
	           ARRAY['orders-04-trigger', 'orders-04-trigger', 'orders-04-trigger'],
	           ARRAY[0, 0, 0],
	           ARRAY[1, 2, 3]::bigint[],
	           NULL)$$,
	$$VALUES (1, 'inserted'::text, NULL::text), (2, 'rejected', '23514'), (3, 'inserted', NULL)$$,
	'a check violation raised by a DBA trigger (23514) rejects only its element');
SELECT results_eq(
	$$SELECT order_id FROM received_orders.received_orders
	   WHERE order_id IN ('c0000000-0000-4000-8000-0000000000f0', 'c0000000-0000-4000-8000-0000000000f1',
	                      'c0000000-0000-4000-8000-0000000000f2')
	   ORDER BY order_id$$,
	$$VALUES ('c0000000-0000-4000-8000-0000000000f0'::uuid), ('c0000000-0000-4000-8000-0000000000f2')$$,
	'the other elements of that batch are stored, the refused one is not');
SELECT results_eq(
	$$SELECT kafka_offset, order_id, outcome::text, sqlstate, raw_value
	    FROM received_orders.received_orders_quarantine
	   WHERE kafka_topic = 'orders-04-trigger'$$,
	$$VALUES (2::bigint, 'c0000000-0000-4000-8000-0000000000f1'::uuid, 'rejected'::text, '23514'::text,
	          convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8'))$$,
	'the element refused by the trigger is quarantined with sqlstate 23514');
SELECT is_empty(
	$$SELECT id FROM received_orders.received_orders_quarantine
	   WHERE kafka_topic = 'orders-04-trigger' AND reason NOT LIKE '%DBA rule refuses order%'$$,
	'the quarantine reason carries the trigger''s message');

-- In a large batch the refused elements are found by halving: every other
-- element is stored, and only the refused ones (the same order twice) are rejected.
CREATE TEMP TABLE big_batch AS
SELECT g AS pos,
       convert_to(pg_catalog.format('{"orderId": "%s", "externalReference": "ref-big-%s"}',
                  CASE WHEN g IN (40, 260) THEN 'c0000000-0000-4000-8000-0000000000f1'
                       ELSE 'c1000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0') END, g), 'UTF8') AS value
  FROM generate_series(1, 300) AS g;
SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate
	    FROM received_orders.materialize_orders(
	           (SELECT array_agg(value ORDER BY pos) FROM big_batch),
	           (SELECT array_agg('orders-04-big'::text) FROM big_batch),
	           (SELECT array_agg(0) FROM big_batch),
	           (SELECT array_agg(pos::bigint ORDER BY pos) FROM big_batch),
	           NULL)
	   WHERE outcome <> 'inserted'$$,
	$$VALUES (40, 'rejected'::text, '23514'::text), (260, 'rejected', '23514')$$,
	'in a batch of 300, only the two elements the trigger refuses are rejected');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders
	  WHERE external_reference LIKE 'ref-big-%'),
	298,
	'the 298 other elements of the large batch are stored');

-- Transient errors propagate.  57014 (query_canceled) is not exercised: PL/pgSQL's
-- WHEN OTHERS, which throws_ok relies on, does not catch it.
SET LOCAL ro_test.dba_rule_errcode = '40001';
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f3", "externalReference": "ref-f3"}', 'UTF8'),
	          convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8')],
	    ARRAY['orders-04-transient', 'orders-04-transient'], ARRAY[0, 0], ARRAY[1, 2]::bigint[], NULL)$$,
	'40001', NULL,
	'a serialization failure (40001) inside the batch fails the whole call');
SET LOCAL ro_test.dba_rule_errcode = '40P01';
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f3", "externalReference": "ref-f3"}', 'UTF8'),
	          convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8')],
	    ARRAY['orders-04-transient', 'orders-04-transient'], ARRAY[0, 0], ARRAY[1, 2]::bigint[], NULL)$$,
	'40P01', NULL,
	'a deadlock (40P01) inside the batch fails the whole call');
SET LOCAL ro_test.dba_rule_errcode = '55P03';
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f3", "externalReference": "ref-f3"}', 'UTF8'),
	          convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8')],
	    ARRAY['orders-04-transient', 'orders-04-transient'], ARRAY[0, 0], ARRAY[1, 2]::bigint[], NULL)$$,
	'55P03', NULL,
	'a lock timeout (55P03) inside the batch fails the whole call');
SET LOCAL ro_test.dba_rule_errcode = '57P01';
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f3", "externalReference": "ref-f3"}', 'UTF8'),
	          convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8')],
	    ARRAY['orders-04-transient', 'orders-04-transient'], ARRAY[0, 0], ARRAY[1, 2]::bigint[], NULL)$$,
	'57P01', NULL,
	'an admin shutdown (57P01) inside the batch fails the whole call');

-- Systemic errors: an error no event's data can cause fails the
-- whole call, quarantines nothing and stores nothing, whichever element raised it.
SET LOCAL ro_test.dba_rule_errcode = 'P0001';
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f3", "externalReference": "ref-f3"}', 'UTF8'),
	          convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8')],
	    ARRAY['orders-04-systemic', 'orders-04-systemic'], ARRAY[0, 0], ARRAY[1, 2]::bigint[], NULL)$$,
	'P0001', NULL,
	'a plain exception of a DBA trigger (P0001) fails the whole call');
SET LOCAL ro_test.dba_rule_errcode = '0A000';
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f3", "externalReference": "ref-f3"}', 'UTF8'),
	          convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8')],
	    ARRAY['orders-04-systemic', 'orders-04-systemic'], ARRAY[0, 0], ARRAY[1, 2]::bigint[], NULL)$$,
	'0A000', NULL,
	'feature_not_supported (0A000) fails the whole call');
SET LOCAL ro_test.dba_rule_errcode = 'XX001';
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f3", "externalReference": "ref-f3"}', 'UTF8'),
	          convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8')],
	    ARRAY['orders-04-systemic', 'orders-04-systemic'], ARRAY[0, 0], ARRAY[1, 2]::bigint[], NULL)$$,
	'XX001', NULL,
	'data corruption (XX001) fails the whole call');
SET LOCAL ro_test.dba_rule_errcode = '42P10';
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f3", "externalReference": "ref-f3"}', 'UTF8'),
	          convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f1", "externalReference": "ref-f1"}', 'UTF8')],
	    ARRAY['orders-04-systemic', 'orders-04-systemic'], ARRAY[0, 0], ARRAY[1, 2]::bigint[], NULL)$$,
	'42P10', NULL,
	'an invalid column reference (42P10, as with a dropped primary key) fails the whole call');
SELECT is_empty(
	$$SELECT id FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'orders-04-systemic'$$,
	'nothing of those calls was quarantined');
SELECT is_empty(
	$$SELECT order_id FROM received_orders.received_orders
	   WHERE order_id = 'c0000000-0000-4000-8000-0000000000f3'$$,
	'nothing of those calls was stored');
DROP TRIGGER ro_test_dba_rule ON received_orders.received_orders;

-- A batch larger than one INSERT statement (extension/store.c inserts 1000
-- events per statement): equal order_ids on both sides of a statement
-- boundary keep their outcomes.  Sorted by order_id, X (positions 1 and 2,
-- the same reference) falls on indexes 999 and 1000, Z (positions 3 and 4,
-- another reference) on 1999 and 2000.
CREATE TEMP TABLE boundary_batch ON COMMIT DROP AS
SELECT n, convert_to(format('{"orderId": "%s", "externalReference": "%s"}', id, ref), 'UTF8') AS v
  FROM (VALUES (1, 'd2000000-0000-4000-8000-000000000000'::uuid, 'ref-x'),
               (2, 'd2000000-0000-4000-8000-000000000000'::uuid, 'ref-x'),
               (3, 'd4000000-0000-4000-8000-000000000000'::uuid, 'ref-z'),
               (4, 'd4000000-0000-4000-8000-000000000000'::uuid, 'ref-z-other')) AS pairs (n, id, ref)
UNION ALL
SELECT 4 + i, convert_to(format('{"orderId": "d1000000-0000-4000-8000-%s", "externalReference": "f-%s"}',
                                lpad(to_hex(i), 12, '0'), i), 'UTF8')
  FROM generate_series(1, 999) AS i
UNION ALL
SELECT 1003 + i, convert_to(format('{"orderId": "d3000000-0000-4000-8000-%s", "externalReference": "g-%s"}',
                                   lpad(to_hex(i), 12, '0'), i), 'UTF8')
  FROM generate_series(1, 998) AS i;
CREATE TEMP TABLE boundary_got ON COMMIT DROP AS
SELECT position, outcome::text AS outcome
  FROM received_orders.materialize_orders(
	(SELECT array_agg(v ORDER BY n) FROM boundary_batch),
	(SELECT array_agg('orders-04-boundary'::text) FROM boundary_batch),
	(SELECT array_agg(0) FROM boundary_batch),
	(SELECT array_agg(n::bigint ORDER BY n) FROM boundary_batch), NULL);
SELECT is((SELECT count(*) FROM boundary_got WHERE outcome = 'inserted'), 1999::bigint,
	'a batch of 2001 events over three INSERT statements: 1999 inserted');
SELECT is((SELECT array_agg(outcome ORDER BY position) FROM boundary_got WHERE position <= 4),
	ARRAY['inserted', 'duplicate', 'inserted', 'conflict'],
	'equal ids across a statement boundary: the first inserted, the copy duplicate, another reference a conflict');
SELECT is((SELECT external_reference FROM received_orders.received_orders
	WHERE order_id = 'd4000000-0000-4000-8000-000000000000'), 'ref-z',
	'the stored row has the first reference');
SELECT is((SELECT count(*) FROM received_orders.received_orders
	WHERE order_id::text LIKE 'd1000000-0000-4000-8000-%' OR order_id::text LIKE 'd3000000-0000-4000-8000-%'), 1997::bigint,
	'every other event of the batch is stored');

-- A BEFORE INSERT trigger returning NULL suppresses the insert on every retry: a
-- permanent triggered_action_exception naming the cause, not a serialization failure.
CREATE FUNCTION public.ro_test_swallow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RETURN NULL;
END
$$;
CREATE TRIGGER ro_test_swallow BEFORE INSERT ON received_orders.received_orders
	FOR EACH ROW EXECUTE FUNCTION public.ro_test_swallow();
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders(
	    ARRAY[convert_to('{"orderId": "c0000000-0000-4000-8000-0000000000f4", "externalReference": "ref-f4"}', 'UTF8')],
	    ARRAY['orders-04-swallow'], ARRAY[0], ARRAY[1]::bigint[], NULL)$$,
	'09000', 'order c0000000-0000-4000-8000-0000000000f4 was not stored: the insert into received_orders.received_orders wrote no row',
	'a BEFORE INSERT trigger returning NULL fails the batch with 09000, naming the order');
SELECT throws_ok(
	$$SELECT received_orders.materialize_order('{"orderId": "c0000000-0000-4000-8000-0000000000f4", "externalReference": "ref-f4"}')$$,
	'09000', NULL,
	'and materialize_order with it');
DROP TRIGGER ro_test_swallow ON received_orders.received_orders;

-- A DBA's index too small for one event's field: the INSERT of
-- that event raises 54000 (index row size exceeds the btree maximum).
-- Alone in its call, that can only be the event's: it is rejected and
-- quarantined, the call succeeds, so the partition goes on.  Within a larger
-- call a program limit may be the batch's size (a caller splits the batch:
-- e2e 18), so the call fails and the caller splits down to the event alone.
SET LOCAL received_orders.max_event_bytes = '1MB';
CREATE INDEX ro_test_note_idx ON received_orders.received_orders ((payload ->> 'note'));
CREATE FUNCTION pg_temp.noted(id text, ref text, note_bytes integer) RETURNS bytea
LANGUAGE sql AS $$
	SELECT convert_to(json_build_object('orderId', id, 'externalReference', ref,
		'note', (SELECT string_agg(md5(ref || g::text), '') FROM generate_series(1, note_bytes / 32) AS g))::text, 'UTF8')
$$;
SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate
	    FROM received_orders.materialize_orders('g-index', ARRAY[pg_temp.noted('c0000000-0000-4000-8000-000000000970', 'ref-70', 8192)],
	         ARRAY['index'], ARRAY[0], ARRAY[70::bigint])$$,
	$$VALUES (1, 'rejected'::text, '54000'::text)$$,
	'an event whose field overflows a DBA''s index, alone in its call: rejected with 54000, the call succeeds');
SELECT is(
	(SELECT outcome::text || ' ' || sqlstate || ' ' || (reason LIKE '%index row%')::text
	   FROM received_orders.received_orders_quarantine WHERE kafka_topic = 'index' AND kafka_offset = 70),
	'rejected 54000 true',
	'it is quarantined with the index''s error');
SELECT is(
	(SELECT next_offset FROM received_orders.received_orders_positions WHERE consumer_group = 'g-index' AND kafka_topic = 'index'),
	71::bigint,
	'and its offset counts: the partition goes on');
SELECT throws_ok(
	$$SELECT * FROM received_orders.materialize_orders('g-index', ARRAY[
	         pg_temp.noted('c0000000-0000-4000-8000-000000000971', 'ref-71', 64),
	         pg_temp.noted('c0000000-0000-4000-8000-000000000972', 'ref-72', 8192)],
	         ARRAY['index', 'index'], ARRAY[0, 0], ARRAY[71::bigint, 72])$$,
	'54000', NULL,
	'with another event in the call, the limit may be the batch''s: the call fails for the caller to split');
SELECT results_eq(
	$$SELECT "position", outcome::text, sqlstate
	    FROM received_orders.materialize_orders('g-index', ARRAY[pg_temp.noted('c0000000-0000-4000-8000-000000000971', 'ref-71', 64)],
	         ARRAY['index'], ARRAY[0], ARRAY[71::bigint])$$,
	$$VALUES (1, 'inserted'::text, NULL::text)$$,
	'split down, the other event inserts alone');
DROP INDEX received_orders.ro_test_note_idx;
SET LOCAL received_orders.max_event_bytes = 600;

SELECT * FROM finish();
ROLLBACK;
