-- test/sql-only/fuzz-inputs.sql — the seeded random and hostile Kafka
-- messages that test/sql-only/01 feeds to both flavours: psql -v seed=S
-- -v batches=N.  Creates public.fuzz_input (batch, pos, val, topic, part,
-- off, key), drawn with setseed(:seed) so that a seed names one input.
--
-- Each value is one of 20 kinds: valid events (orderIds from a pool of 300,
-- spelled every way uuid_in accepts, externalReferences from a pool of
-- three, so duplicates and conflicts within and across batches), invalid
-- UTF-8 (0xff, a surrogate, beyond U+10FFFF, overlong, truncated), NUL
-- bytes, truncated JSON, \u0000 (and an escaped backslash before u0000),
-- lone and paired surrogate escapes, numbers numeric refuses or keeps,
-- nesting around the limit of 512 (and brackets inside strings), values
-- that are no object, fields of the wrong type, blank and long references
-- (multi-byte), orderIds that are almost UUIDs (and long ones, clipped in
-- the reason), tombstones, and one value over 1 MB.  Offsets repeat now
-- and then (a redelivered message, or another message at the same
-- coordinates).  Every fourth batch holds no value that PostgreSQL's
-- input functions refuse (valid events, tombstones, field errors), so that
-- a whole batch goes through in one statement.
SELECT pg_catalog.setseed(:seed) AS seeded \gset

CREATE TABLE public.fuzz_input (
	batch integer, pos integer, val bytea, topic text, part integer, off bigint, key bytea,
	PRIMARY KEY (batch, pos));

INSERT INTO public.fuzz_input
SELECT b.b, p.p, v.val, 'fuzz', b.b % 3,
       b.b * 1000 + CASE WHEN k.r3 < 0.05 THEN p.p - 1 ELSE p.p END,
       CASE WHEN k.r3 < 0.3 THEN NULL ELSE pg_catalog.convert_to('key-' || (k.r3 * 10)::int, 'UTF8') END
  FROM pg_catalog.generate_series(1, :batches) AS b(b)
  CROSS JOIN LATERAL pg_catalog.generate_series(1, 1 + (pg_catalog.random() * 60 + b.b * 0)::int) AS p(p)
  CROSS JOIN LATERAL (
	SELECT CASE WHEN b.b % 4 = 0
	            THEN (ARRAY[0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19])[1 + (pg_catalog.random() * 11)::int]
	            ELSE (pg_catalog.random() * 20)::int % 20 END AS kind,
	       pg_catalog.md5((1 + (pg_catalog.random() * 299)::int)::text)::uuid AS id,
	       'REF-' || (1 + (pg_catalog.random() * 2)::int) AS ref,
	       pg_catalog.random() AS r1, pg_catalog.random() AS r2, pg_catalog.random() + p.p * 0 AS r3) AS k
  CROSS JOIN LATERAL (
	SELECT CASE (k.r1 * 5)::int
	       WHEN 0 THEN k.id::text
	       WHEN 1 THEN pg_catalog.upper(k.id::text)
	       WHEN 2 THEN pg_catalog.replace(k.id::text, '-', '')
	       WHEN 3 THEN '{' || k.id::text || '}'
	       ELSE pg_catalog.regexp_replace(pg_catalog.replace(k.id::text, '-', ''), '(....)', '\1-', 'g')
	       END AS spelled) AS s
  CROSS JOIN LATERAL (
	SELECT pg_catalog.format('{"orderId": "%s", "externalReference": "%s", "amount": %s, "lines": [{"sku": "A-%s", "qty": %s}]}',
	                         CASE WHEN (k.r1 * 5)::int = 4 THEN pg_catalog.rtrim(s.spelled, '-') ELSE s.spelled END,
	                         k.ref, (k.r2 * 1000)::numeric(10, 2), (k.r2 * 100)::int, (k.r1 * 9)::int) AS event) AS e
  CROSS JOIN LATERAL (
	SELECT CASE
	WHEN b.b = 3 AND p.p = 1 THEN
		pg_catalog.convert_to(pg_catalog.format('{"orderId": "%s", "externalReference": "BIG", "pad": "%s"}',
		                                        k.id, pg_catalog.repeat('x', 1048576)), 'UTF8')
	WHEN k.kind < 8 THEN pg_catalog.convert_to(e.event, 'UTF8')
	WHEN k.kind = 8 THEN
		overlay(pg_catalog.convert_to(e.event, 'UTF8')
		                   PLACING (ARRAY['\xff', '\xeda080', '\xf4908080', '\xc0af', '\xe282', '\xc328', '\x80'])
		                           [1 + (k.r2 * 6)::int]::bytea
		                   FROM 1 + (k.r1 * 60)::int FOR 1)
	WHEN k.kind = 9 THEN
		overlay(pg_catalog.convert_to(e.event, 'UTF8') PLACING '\x00'::bytea FROM 1 + (k.r1 * 80)::int FOR 0)
	WHEN k.kind = 10 THEN
		pg_catalog.substring(pg_catalog.convert_to(e.event, 'UTF8'), 1, (k.r1 * pg_catalog.length(e.event))::int)
	WHEN k.kind = 11 THEN
		pg_catalog.convert_to(pg_catalog.replace(e.event, '"sku": "A-',
		                      CASE WHEN k.r2 < 0.5 THEN '"sku": "\u0000A-' ELSE '"sku": "\\u0000A-' END), 'UTF8')
	WHEN k.kind = 12 THEN
		pg_catalog.convert_to(pg_catalog.replace(e.event, '"sku": "A-',
		                      '"sku": "' || (ARRAY['\ud800', '\udc00', '\ud83d\ude00', '\u00e9', '\uZZZZ', '\u12'])[1 + (k.r2 * 5)::int] || 'A-'), 'UTF8')
	WHEN k.kind = 13 THEN
		pg_catalog.convert_to(pg_catalog.replace(e.event, '"amount": ',
		                      '"amount": ' || (ARRAY['1e999999', '-1e999999', '1e-999999', '1e308', '1E400',
		                                             '123456789012345678901234567890.123', '-0', '0.0000001e-5',
		                                             '01', '1.', '.5', '-', '1e', 'NaN', 'Infinity'])[1 + (k.r2 * 14)::int]
		                      || ' , "was": '), 'UTF8')
	WHEN k.kind = 14 THEN
		pg_catalog.convert_to(pg_catalog.replace(e.event, '"lines": ',
		                      '"deep": ' || pg_catalog.repeat(CASE WHEN k.r1 < 0.5 THEN '[' ELSE '{"a":' END,
		                                                      (ARRAY[509, 510, 511, 512, 600, 3000])[1 + (k.r2 * 5)::int])
		                      || '1' || pg_catalog.repeat(CASE WHEN k.r1 < 0.5 THEN ']' ELSE '}' END,
		                                                  CASE WHEN k.r3 < 0.2 THEN 1 ELSE (ARRAY[509, 510, 511, 512, 600, 3000])[1 + (k.r2 * 5)::int] END)
		                      || ', "s": "' || pg_catalog.repeat('[{', 400) || '", "lines": '), 'UTF8')
	WHEN k.kind = 15 THEN
		pg_catalog.convert_to((ARRAY['[1, 2]', '"str"', '42', 'true', 'null', '  {}  ', '{}', '[]', '', ' ', 'nul', '{"a" 1}', '{"orderId": "x",}'])
		                      [1 + (k.r2 * 12)::int], 'UTF8')
	WHEN k.kind = 16 THEN
		pg_catalog.convert_to(pg_catalog.format((ARRAY['{"orderId": %s, "externalReference": "R"}',
		                                               '{"orderId": "' || k.id || '", "externalReference": %1$s}',
		                                               '{"externalReference": "R", "other": %s}',
		                                               '{"orderId": "' || k.id || '", "x": %s}'])[1 + (k.r1 * 3)::int],
		                                        (ARRAY['42', 'null', '{}', '[]', 'false', '"' || k.id || '"'])[1 + (k.r2 * 5)::int],
		                                        (ARRAY['7', 'null', 'false', '{"a": 1}'])[1 + (k.r3 * 3)::int]), 'UTF8')
	WHEN k.kind = 17 THEN
		pg_catalog.convert_to(pg_catalog.format('{"orderId": "%s", "externalReference": "%s"}',
		                      CASE WHEN k.r1 < 0.2 THEN pg_catalog.repeat('é', 40 + (k.r2 * 3)::int) ELSE k.id::text END,
		                      (ARRAY['   ', '\t\n', '', '\f', pg_catalog.repeat('é', 255), pg_catalog.repeat('é', 256),
		                             pg_catalog.repeat('x', 300), ' x ', pg_catalog.repeat('€', 300)])[1 + (k.r2 * 8)::int]), 'UTF8')
	WHEN k.kind = 18 THEN
		pg_catalog.convert_to(pg_catalog.format('{"orderId": "%s", "externalReference": "R", "orderId": "%s"}',
		                      (ARRAY['NaN', 'Infinity', '{' || k.id, pg_catalog.substr(k.id::text, 2), k.id || '}',
		                             pg_catalog.replace(k.id::text, '-', '--'), '-' || k.id, 'a' || pg_catalog.repeat('-', 80)])[1 + (k.r2 * 7)::int],
		                      CASE WHEN k.r1 < 0.5 THEN k.id::text ELSE 'nope' END), 'UTF8')
	ELSE NULL
	END AS val) AS v;
