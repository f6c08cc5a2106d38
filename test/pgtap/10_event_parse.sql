-- 10_event_parse.sql — the batch function's fast path for plain
-- events (extension/event_fast.c) stores exactly what jsonb's input function
-- makes of the value, and every value it gives up on is parsed, accepted or
-- refused as before.
--
-- Each valid value below goes through materialize_orders; its stored payload
-- must equal value::jsonb, as jsonb and as text (numbers keep their scale,
-- keys their order and the last of duplicate keys).  The values cover what
-- the fast path takes (white space, numbers, literals, nesting, empty
-- containers, raw UTF-8, duplicate keys) and what it leaves to PostgreSQL's
-- parser (escapes, exponents, long numbers).  Each invalid value must be
-- rejected with 22P02 and jsonb_in's own detail.  Nesting: the fast path
-- also takes a plain value nested RO_MAX_NESTING_DEPTH (512) levels deep,
-- and gives a deeper one to the depth check, which must refuse it (54001)
-- before any syntax error of it.

BEGIN;
SELECT plan(9);

SET LOCAL client_min_messages = error;

-- values[i] as element i of one batch of topic t, partition 0, offset i
CREATE FUNCTION pg_temp.run_batch(t text, vals text[])
RETURNS TABLE ("position" integer, order_id uuid, outcome text, sqlstate text, message text)
LANGUAGE sql AS $$
	SELECT r."position", r.order_id, r.outcome::text, r.sqlstate, r.message
	  FROM received_orders.materialize_orders('g10',
			(SELECT array_agg(convert_to(v, 'UTF8') ORDER BY i) FROM unnest(vals) WITH ORDINALITY AS u (v, i)),
			array_fill(t, ARRAY[cardinality(vals)]),
			array_fill(0, ARRAY[cardinality(vals)]),
			(SELECT array_agg(i) FROM generate_series(1::bigint, cardinality(vals)) AS i),
			NULL) AS r
$$;

-- the valid values: %s is the order's id
CREATE TEMP TABLE valid_values (n integer PRIMARY KEY, template text) ON COMMIT DROP;
INSERT INTO valid_values VALUES
	(1, '{"orderId":"%s","externalReference":"E-1"}'),
	(2, E' \t\r\n{ "orderId" : "%s" ,\n\t"externalReference":"E-2" , "a" : [ 1 , 2 ] , "b" : { } }\n\r\t '),
	(3, '{"orderId":"%s","externalReference":"E-3","n":[-0,0,0.50,1.00,-1.0,123456789012345678901234567890.000100,7]}'),
	(4, '{"orderId":"%s","externalReference":"E-4","e":[1e5,2.5E-3,-1E+2,0e0]}'),
	(5, '{"orderId":"%s","externalReference":"E-5","long":12345678901234567890123456789012345678901234567890123456789012345.5}'),
	(6, E'{"orderId":"%s","externalReference":"E-6","s":["a\\"b","\\u00e9","\\n","\\\\","\\/"]}'),
	(7, '{"orderId":"%s","externalReference":"E-7 é漢字🎉","ü":"ß"}'),
	(8, '{"orderId":"%s","externalReference":"E-8","a":1,"a":[2],"a":{"x":3}}'),
	(9, '{"orderId":"%s","externalReference":"E-9","a":[[[{"b":[{},[]]}]]],"c":{"d":{"e":[]}}}'),
	(10, '{"orderId":"%s","externalReference":"E-10","l":[true,false,null],"t":true,"f":false,"z":null}'),
	(11, '{"bbb":1,"orderId":"%s","a":2,"externalReference":"E-11","cc":3,"":""}'),
	(12, '{"orderId":"%s","externalReference":"E-12","m":[1,"x",null,true,{"k":[]},-0.001,""]}'),
	(13, '{"orderId":"%s","externalReference":"E-13","esc\u0041key":1}'),
	(14, '{"orderId":"%s","externalReference":"E-14","n":-12.340,"m":0.0}');

CREATE TEMP TABLE valid_got ON COMMIT DROP AS
WITH v AS (SELECT n, format(template, md5('event_parse ' || n)::uuid) AS value FROM valid_values)
SELECT v.n, v.value, r.outcome, r.order_id
  FROM v JOIN pg_temp.run_batch('t10', (SELECT array_agg(value ORDER BY n) FROM v)) AS r
    ON r.position = v.n;

SELECT is((SELECT count(*) FROM valid_got WHERE outcome = 'inserted'), 14::bigint,
	'every valid value is inserted');
SELECT is_empty(
	$$SELECT g.n FROM valid_got g
	    JOIN received_orders.received_orders o USING (order_id)
	   WHERE o.payload::text IS DISTINCT FROM g.value::jsonb::text$$,
	'each stored payload is value::jsonb, as text (numbers, key order, last duplicate key)');
SELECT is_empty(
	$$SELECT g.n FROM valid_got g
	    JOIN received_orders.received_orders o USING (order_id)
	   WHERE o.payload <> g.value::jsonb$$,
	'and equal to it as jsonb');

-- the detail jsonb_in gives for a value it refuses
CREATE FUNCTION pg_temp.jsonb_detail(value text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	PERFORM value::jsonb;
	RETURN NULL;
EXCEPTION WHEN invalid_text_representation THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN detail;
END
$$;

CREATE TEMP TABLE invalid_values (n integer PRIMARY KEY, value text) ON COMMIT DROP;
INSERT INTO invalid_values VALUES
	(1, '{"orderId":"x","a":01}'),
	(2, '{"orderId":"x","a":1}x'),
	(3, '{"orderId":"x","a":tru}'),
	(4, '{"orderId":"x","a":truex}'),
	(5, '{"orderId":"x","a":1.}'),
	(6, '{"orderId":"x","a":-}'),
	(7, '{"orderId":"x","a":.5}'),
	(8, '{"orderId":"x","a":1,}'),
	(9, '{"orderId":"x","a" 1}'),
	(10, '{"orderId":"x","a":1 "b":2}'),
	(11, E'{"orderId":"x","a":"line\nbreak"}'),
	(12, '{"orderId":"x","a":[1,2}'),
	(13, '{"orderId":"x","a":1}}'),
	(14, '{"orderId":"x","a":1'),
	(15, '{"orderId":"x","a":"unterminated}'),
	(16, '{"orderId":"x",'),
	(17, '{"orderId":"x","a":nul}'),
	(18, '{"orderId":"x","a":1.5e}'),
	(19, '{"orderId":"x","a":-01}'),
	(20, '{orderId:"x"}');

CREATE TEMP TABLE invalid_got ON COMMIT DROP AS
SELECT i.n, i.value, r.outcome, r.sqlstate, r.message
  FROM invalid_values i
  JOIN pg_temp.run_batch('t10i', (SELECT array_agg(value ORDER BY n) FROM invalid_values)) AS r
    ON r.position = i.n;

SELECT is((SELECT count(*) FROM invalid_values WHERE pg_temp.jsonb_detail(value) IS NULL), 0::bigint,
	'jsonb_in refuses every invalid value of the test');
SELECT is((SELECT count(*) FROM invalid_got WHERE outcome = 'rejected' AND sqlstate = '22P02'), 20::bigint,
	'the batch function rejects each with 22P02');
SELECT is_empty(
	$$SELECT n, message, pg_temp.jsonb_detail(value) FROM invalid_got
	   WHERE message IS DISTINCT FROM 'event is not valid JSON: ' || pg_temp.jsonb_detail(value)$$,
	'with jsonb_in''s own detail');

-- nesting: 512 levels (the object and 511 arrays) are taken, 513 refused,
-- before the syntax error of the last value
CREATE TEMP TABLE deep_values (n integer PRIMARY KEY, value text) ON COMMIT DROP;
INSERT INTO deep_values VALUES
	(1, format('{"orderId":"%s","externalReference":"D-1","d":%s1%s}',
			   md5('event_parse deep 1')::uuid, repeat('[', 511), repeat(']', 511))),
	(2, format('{"orderId":"%s","externalReference":"D-2","d":%s1%s}',
			   md5('event_parse deep 2')::uuid, repeat('[', 512), repeat(']', 512))),
	(3, format('{"orderId":"%s","externalReference":"D-3","d":%s1%s',
			   md5('event_parse deep 3')::uuid, repeat('{"a":', 513), repeat('}', 512)));

CREATE TEMP TABLE deep_got ON COMMIT DROP AS
SELECT d.n, d.value, r.outcome, r.sqlstate, r.message
  FROM deep_values d
  JOIN pg_temp.run_batch('t10d', (SELECT array_agg(value ORDER BY n) FROM deep_values)) AS r
    ON r.position = d.n;

SELECT is((SELECT outcome FROM deep_got WHERE n = 1), 'inserted',
	'a plain value nested 512 levels deep is inserted');
SELECT is((SELECT o.payload::text FROM deep_got g
	    JOIN received_orders.received_orders o ON o.order_id = md5('event_parse deep 1')::uuid
	   WHERE g.n = 1), (SELECT value::jsonb::text FROM deep_values WHERE n = 1),
	'as value::jsonb');
SELECT results_eq(
	$$SELECT n, outcome, sqlstate, message FROM deep_got WHERE n > 1 ORDER BY n$$,
	$$VALUES (2, 'rejected', '54001', 'event is nested more than 512 levels deep'),
	         (3, 'rejected', '54001', 'event is nested more than 512 levels deep')$$,
	'one level deeper is rejected with 54001, before a syntax error of the value');

SELECT * FROM finish();
ROLLBACK;
