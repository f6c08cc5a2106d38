-- 03_materialize_order.sql — materialize_order(event jsonb): inserted, then
-- duplicate (whatever the uuid spelling), conflict leaves the stored row
-- alone, the event is kept verbatim, and every validation rule raises its
-- SQLSTATE with a message naming the field, writing nothing.

BEGIN;
SELECT plan(55);

-- Counts before this file writes anything (other suites may share the database).
CREATE TEMP TABLE baseline AS
	SELECT (SELECT count(*) FROM received_orders.received_orders) AS orders,
	       (SELECT count(*) FROM received_orders.received_orders_quarantine) AS quarantined;

-- inserted ----------------------------------------------------------------------------

SELECT is(
	received_orders.materialize_order(
		'{"orderId": "b0000000-0000-4000-8000-0000000000a1", "externalReference": "ref-a1",
		  "customer": {"id": 7, "tags": ["vip", "eu"]}, "amount": 12.50, "note": null,
		  "lines": [{"sku": "X-1", "qty": 2}, {"sku": "Y-2", "qty": 1}]}'),
	'inserted',
	'a new order is inserted');
SELECT is(
	(SELECT external_reference FROM received_orders.received_orders
	  WHERE order_id = 'b0000000-0000-4000-8000-0000000000a1'),
	'ref-a1',
	'external_reference is taken from externalReference');
SELECT is(
	(SELECT payload FROM received_orders.received_orders
	  WHERE order_id = 'b0000000-0000-4000-8000-0000000000a1'),
	'{"orderId": "b0000000-0000-4000-8000-0000000000a1", "externalReference": "ref-a1",
	  "customer": {"id": 7, "tags": ["vip", "eu"]}, "amount": 12.50, "note": null,
	  "lines": [{"sku": "X-1", "qty": 2}, {"sku": "Y-2", "qty": 1}]}'::jsonb,
	'payload is the whole event, extra fields kept verbatim');
SELECT ok(
	(SELECT received_at BETWEEN now() AND clock_timestamp() FROM received_orders.received_orders
	  WHERE order_id = 'b0000000-0000-4000-8000-0000000000a1'),
	'received_at is set when the order is materialized');

-- The stored row as first written, to prove duplicates and conflicts leave it alone.
CREATE TEMP TABLE stored_a1 AS
	SELECT * FROM received_orders.received_orders WHERE order_id = 'b0000000-0000-4000-8000-0000000000a1';

-- The GUC exists once the module is loaded (the call above loaded it).
SELECT is(
	(SELECT setting FROM pg_catalog.pg_settings WHERE name = 'received_orders.max_event_bytes'),
	'1048576',
	'received_orders.max_event_bytes defaults to 1048576 bytes');
SELECT is(
	(SELECT context FROM pg_catalog.pg_settings WHERE name = 'received_orders.max_event_bytes'),
	'superuser',
	'received_orders.max_event_bytes is superuser-settable');

-- duplicate -----------------------------------------------------------------------------

SELECT is(
	received_orders.materialize_order(
		'{"orderId": "b0000000-0000-4000-8000-0000000000a1", "externalReference": "ref-a1",
		  "customer": {"id": 7, "tags": ["vip", "eu"]}, "amount": 12.50, "note": null,
		  "lines": [{"sku": "X-1", "qty": 2}, {"sku": "Y-2", "qty": 1}]}'),
	'duplicate',
	'the same event again is a duplicate');
SELECT is(
	received_orders.materialize_order(
		'{"orderId": "B0000000-0000-4000-8000-0000000000A1", "externalReference": "ref-a1"}'),
	'duplicate',
	'the same orderId spelt upper-case is the same order (duplicate)');
SELECT is(
	received_orders.materialize_order(
		'{"orderId": "{b0000000-0000-4000-8000-0000000000a1}", "externalReference": "ref-a1"}'),
	'duplicate',
	'the same orderId spelt with braces is the same order (duplicate)');
SELECT is(
	received_orders.materialize_order(
		'{"orderId": "b00000000000400080000000000000a1", "externalReference": "ref-a1"}'),
	'duplicate',
	'the same orderId spelt without hyphens is the same order (duplicate)');
SELECT is(
	received_orders.materialize_order(
		'{"orderId": "b0000000-0000-4000-8000-0000000000a1", "externalReference": "ref-a1", "amount": 99}'),
	'duplicate',
	'same orderId and externalReference with other extra fields is a duplicate');
SELECT results_eq(
	$$SELECT order_id, external_reference, payload, received_at FROM received_orders.received_orders
	   WHERE order_id = 'b0000000-0000-4000-8000-0000000000a1'$$,
	$$SELECT order_id, external_reference, payload, received_at FROM pg_temp.stored_a1$$,
	'duplicates leave the stored row unchanged (one row, first payload)');

-- conflict ------------------------------------------------------------------------------

SET LOCAL client_min_messages = error;	-- the conflict WARNING is expected
SELECT is(
	received_orders.materialize_order(
		'{"orderId": "b0000000-0000-4000-8000-0000000000a1", "externalReference": "ref-other"}'),
	'conflict',
	'same orderId with another externalReference is a conflict');
SELECT is(
	received_orders.materialize_order(
		'{"orderId": "B00000000000400080000000000000A1", "externalReference": "ref-a1 "}'),
	'conflict',
	'another spelling of the orderId with another externalReference is a conflict too');
RESET client_min_messages;
SELECT results_eq(
	$$SELECT order_id, external_reference, payload, received_at FROM received_orders.received_orders
	   WHERE order_id = 'b0000000-0000-4000-8000-0000000000a1'$$,
	$$SELECT order_id, external_reference, payload, received_at FROM pg_temp.stored_a1$$,
	'a conflict leaves the stored row unchanged');
SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders_quarantine
	  WHERE order_id = 'b0000000-0000-4000-8000-0000000000a1'),
	0,
	'a conflict from the single-event function is not quarantined');

-- not an object: 22023 -----------------------------------------------------------------

SELECT throws_ok($$SELECT received_orders.materialize_order('[1, 2]')$$,
	'22023', NULL, 'a JSON array is rejected with 22023');
SELECT throws_ok($$SELECT received_orders.materialize_order('"b0000000-0000-4000-8000-0000000000b1"')$$,
	'22023', NULL, 'a JSON string is rejected with 22023');
SELECT throws_ok($$SELECT received_orders.materialize_order('42')$$,
	'22023', NULL, 'a JSON number is rejected with 22023');
SELECT throws_ok($$SELECT received_orders.materialize_order('null'::jsonb)$$,
	'22023', NULL, 'a JSON null is rejected with 22023');

-- orderId: missing / not a string 22023, not a uuid 22P02 -----------------------------

SELECT throws_ok($$SELECT received_orders.materialize_order('{"externalReference": "ref-b2"}')$$,
	'22023', NULL, 'a missing orderId is rejected with 22023');
SELECT throws_like($$SELECT received_orders.materialize_order('{"externalReference": "ref-b2"}')$$,
	'%orderId%', 'the error for a missing orderId names orderId');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": 42, "externalReference": "ref-b3"}')$$,
	'22023', NULL, 'a numeric orderId is rejected with 22023');
SELECT throws_like($$SELECT received_orders.materialize_order('{"orderId": 42, "externalReference": "ref-b3"}')$$,
	'%orderId%', 'the error for a numeric orderId names orderId');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": null, "externalReference": "ref-b4"}')$$,
	'22023', NULL, 'a null orderId is rejected with 22023');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": "not-a-uuid", "externalReference": "ref-b5"}')$$,
	'22P02', NULL, 'an orderId that is not a uuid is rejected with 22P02');
SELECT throws_like($$SELECT received_orders.materialize_order('{"orderId": "not-a-uuid", "externalReference": "ref-b5"}')$$,
	'%orderId%', 'the error for an invalid uuid names orderId');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": "", "externalReference": "ref-b6"}')$$,
	'22P02', NULL, 'an empty orderId is rejected with 22P02');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000b7x", "externalReference": "ref-b7"}')$$,
	'22P02', NULL, 'an orderId with trailing garbage is rejected with 22P02');

-- externalReference: missing / not a string / blank 22023, > 255 characters 22001 --------

SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000c1"}')$$,
	'22023', NULL, 'a missing externalReference is rejected with 22023');
SELECT throws_like($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000c1"}')$$,
	'%externalReference%', 'the error for a missing externalReference names externalReference');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000c2", "externalReference": 7}')$$,
	'22023', NULL, 'a numeric externalReference is rejected with 22023');
SELECT throws_like($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000c2", "externalReference": 7}')$$,
	'%externalReference%', 'the error for a numeric externalReference names externalReference');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000c3", "externalReference": null}')$$,
	'22023', NULL, 'a null externalReference is rejected with 22023');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000c4", "externalReference": ["r"]}')$$,
	'22023', NULL, 'an array externalReference is rejected with 22023');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000c5", "externalReference": "   "}')$$,
	'22023', NULL, 'a blank externalReference ("   ") is rejected with 22023');
SELECT throws_like($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000c5", "externalReference": "   "}')$$,
	'%externalReference%', 'the error for a blank externalReference names externalReference');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000c6", "externalReference": ""}')$$,
	'22023', NULL, 'an empty externalReference is rejected with 22023');
SELECT throws_ok($$SELECT received_orders.materialize_order('{"orderId": "b0000000-0000-4000-8000-0000000000c7", "externalReference": "\t\n \r"}')$$,
	'22023', NULL, 'an externalReference of tabs, newlines and spaces is blank (22023)');
SELECT throws_ok(
	$$SELECT received_orders.materialize_order(pg_catalog.jsonb_build_object(
	    'orderId', 'b0000000-0000-4000-8000-0000000000c8', 'externalReference', pg_catalog.repeat('r', 256)))$$,
	'22001', NULL, 'an externalReference of 256 characters is rejected with 22001');
SELECT throws_like(
	$$SELECT received_orders.materialize_order(pg_catalog.jsonb_build_object(
	    'orderId', 'b0000000-0000-4000-8000-0000000000c8', 'externalReference', pg_catalog.repeat('r', 256)))$$,
	'%externalReference%', 'the error for a too long externalReference names externalReference');
SELECT throws_ok(
	$$SELECT received_orders.materialize_order(pg_catalog.jsonb_build_object(
	    'orderId', 'b0000000-0000-4000-8000-0000000000c9', 'externalReference', pg_catalog.repeat('é', 256)))$$,
	'22001', NULL, 'an externalReference of 256 two-byte characters is rejected with 22001');
SELECT is(
	received_orders.materialize_order(pg_catalog.jsonb_build_object(
		'orderId', 'b0000000-0000-4000-8000-0000000000ca', 'externalReference', pg_catalog.repeat('r', 255))),
	'inserted',
	'an externalReference of exactly 255 characters is accepted');
SELECT is(
	received_orders.materialize_order(pg_catalog.jsonb_build_object(
		'orderId', 'b0000000-0000-4000-8000-0000000000cb', 'externalReference', pg_catalog.repeat('é', 255))),
	'inserted',
	'an externalReference of 255 two-byte characters (510 bytes) is accepted: the limit counts characters');
SELECT is(
	(SELECT pg_catalog.length(external_reference) FROM received_orders.received_orders
	  WHERE order_id = 'b0000000-0000-4000-8000-0000000000cb'),
	255,
	'the 255-character externalReference is stored whole');
SELECT is(
	received_orders.materialize_order(
		'{"orderId": "b0000000-0000-4000-8000-0000000000cc", "externalReference": "  padded  "}'),
	'inserted',
	'an externalReference with surrounding spaces but a non-blank character is accepted');

-- size: 54000 above received_orders.max_event_bytes -----------------------------------

SET LOCAL received_orders.max_event_bytes = 200;
SELECT is(
	received_orders.materialize_order(
		'{"orderId": "b0000000-0000-4000-8000-0000000000d1", "externalReference": "small"}'),
	'inserted',
	'with max_event_bytes = 200 a small event is accepted');
SELECT throws_ok(
	$$SELECT received_orders.materialize_order(pg_catalog.jsonb_build_object(
	    'orderId', 'b0000000-0000-4000-8000-0000000000d2', 'externalReference', 'big', 'padding', pg_catalog.repeat('p', 400)))$$,
	'54000', NULL, 'with max_event_bytes = 200 a 400-byte event is rejected with 54000');
RESET received_orders.max_event_bytes;
SELECT is(
	received_orders.materialize_order(pg_catalog.jsonb_build_object(
		'orderId', 'b0000000-0000-4000-8000-0000000000d3', 'externalReference', 'big', 'padding', pg_catalog.repeat('p', 400))),
	'inserted',
	'with the default max_event_bytes the same 400-byte event is accepted');
SELECT throws_ok(
	$$SELECT received_orders.materialize_order(pg_catalog.jsonb_build_object(
	    'orderId', 'b0000000-0000-4000-8000-0000000000d4', 'externalReference', 'huge', 'padding', pg_catalog.repeat('p', 1048576)))$$,
	'54000', NULL, 'with the default max_event_bytes an event over 1 MiB is rejected with 54000');

-- NULL: 22004 ----------------------------------------------------------------------------

SELECT throws_ok($$SELECT received_orders.materialize_order(NULL)$$,
	'22004', NULL, 'a NULL event is rejected with 22004');
SELECT throws_ok($$SELECT received_orders.materialize_order(NULL::jsonb)$$,
	'22004', NULL, 'a NULL::jsonb event is rejected with 22004');

-- Nothing written by any rejected event ---------------------------------------------

SELECT is(
	(SELECT count(*)::integer FROM received_orders.received_orders
	  WHERE order_id IN ('b0000000-0000-4000-8000-0000000000c1', 'b0000000-0000-4000-8000-0000000000c2',
	                     'b0000000-0000-4000-8000-0000000000c3', 'b0000000-0000-4000-8000-0000000000c4',
	                     'b0000000-0000-4000-8000-0000000000c5', 'b0000000-0000-4000-8000-0000000000c6',
	                     'b0000000-0000-4000-8000-0000000000c7', 'b0000000-0000-4000-8000-0000000000c8',
	                     'b0000000-0000-4000-8000-0000000000c9', 'b0000000-0000-4000-8000-0000000000d2',
	                     'b0000000-0000-4000-8000-0000000000d4')),
	0,
	'no rejected event left a row');
SELECT is(
	(SELECT count(*) FROM received_orders.received_orders) - (SELECT orders FROM pg_temp.baseline),
	6::bigint,
	'exactly the six accepted orders were written (a1, ca, cb, cc, d1, d3)');
SELECT is(
	(SELECT count(*) FROM received_orders.received_orders_quarantine) - (SELECT quarantined FROM pg_temp.baseline),
	0::bigint,
	'materialize_order never writes the quarantine');

SELECT * FROM finish();
ROLLBACK;
