-- test/sql-only/fuzz-outbox-inputs.sql — the seeded outbox messages that
-- test/sql-only/01 feeds to the outbox form of materialize_orders in both
-- flavours: psql -v seed=S -v batches=N, after fuzz-inputs.sql, whose
-- values (valid events and every hostile kind) become the events inside
-- the envelopes.  Creates public.fuzz_outbox_input (batch, pos, val, topic,
-- part, off, key, mtype, ctype: the type header's and the content-type's
-- bytes) and public.fuzz_outbox_options (batch, envelope, event_type,
-- type_header), drawn with setseed(:seed).
--
-- Batch by batch the envelope is plain, debezium or cloudevents, with or
-- without an event type to select.  A Debezium value is the event, a JSON
-- string holding it, either under {"schema", "payload"}, or a broken
-- wrapper: payload missing, of the wrong type or given twice, schema given
-- twice, a key spelled with an escape, no object at all, a lone or
-- doubled surrogate escape, a number numeric refuses in the schema,
-- \u0000.  A CloudEvents message is binary mode (content-type absent, JSON,
-- or a near miss) or structured mode (the content-type spelled every way
-- common/cloudevents_mode.h accepts) with "data" as object or string,
-- "data_base64" canonical, accepted by pg_b64_decode though not canonical,
-- or refused, both or neither, a missing, empty or non-string type or
-- specversion.  Types are the selected one, another one, a long one,
-- multi-byte, not UTF-8, absent, or a header over 4096 bytes; some
-- values are tombstones.
SELECT pg_catalog.setseed(:seed) AS seeded \gset

CREATE TABLE public.fuzz_outbox_options (batch integer PRIMARY KEY, envelope text, event_type text, type_header text);
CREATE TABLE public.fuzz_outbox_input (
	batch integer, pos integer, val bytea, topic text, part integer, off bigint, key bytea,
	mtype bytea, ctype bytea, PRIMARY KEY (batch, pos));

INSERT INTO public.fuzz_outbox_options
SELECT b.b, (ARRAY['plain', 'debezium', 'cloudevents'])[1 + b.b % 3],
       CASE WHEN b.b % 4 = 2 THEN NULL ELSE 'OrderReceived' END,
       CASE WHEN b.b % 8 = 2 THEN NULL WHEN b.b % 8 = 6 THEN 'type' ELSE 'eventType' END
  FROM pg_catalog.generate_series(1, :batches) AS b(b);

INSERT INTO public.fuzz_outbox_input
SELECT i.batch, i.pos, w.val, 'outbox', i.batch % 2, i.batch * 1000 + i.pos, i.key,
       CASE WHEN k.t < 0.1 THEN NULL
            ELSE (ARRAY['\x4f7264657252656365697665640a'::bytea, pg_catalog.convert_to('OrderReceived', 'UTF8'),
                        pg_catalog.convert_to('OrderReceived', 'UTF8'), pg_catalog.convert_to('OrderShipped', 'UTF8'),
                        pg_catalog.convert_to(pg_catalog.repeat('Order', 20), 'UTF8'),
                        pg_catalog.convert_to(pg_catalog.repeat('é', 40), 'UTF8'), '\xfffe4f72646572'::bytea,
                        pg_catalog.convert_to(pg_catalog.repeat('T', 5000), 'UTF8'),
                        pg_catalog.convert_to('', 'UTF8')])[1 + (k.t * 100)::int % 9] END,
       CASE WHEN o.envelope <> 'cloudevents' AND k.c < 0.7 THEN NULL
            ELSE (ARRAY[NULL, 'application/json', 'application/cloudevents+json', 'application/cloudevents',
                        ' 	Application/CloudEvents; charset=utf-8', 'application/cloudevents+json',
                        'application/cloudeventsx', 'text/plain', 'APPLICATION/CLOUDEVENTS+JSON'])[1 + (k.c * 100)::int % 9]::bytea END
  FROM public.fuzz_input i
  JOIN public.fuzz_outbox_options o ON o.batch = i.batch
  CROSS JOIN LATERAL (SELECT pg_catalog.random() + i.pos * 0 AS w, pg_catalog.random() AS t, pg_catalog.random() AS c,
                             pg_catalog.random() AS x) AS k
  CROSS JOIN LATERAL (
	SELECT CASE WHEN i.val IS NOT NULL
	                 AND pg_catalog.encode(i.val, 'hex') ~ '^(?:0[1-9a-f]|[1-7][0-9a-f]|c[2-9a-f][89ab][0-9a-f]|d[0-9a-f][89ab][0-9a-f]|e0[ab][0-9a-f][89ab][0-9a-f]|e[1-9a-cef][89ab][0-9a-f][89ab][0-9a-f]|ed[89][0-9a-f][89ab][0-9a-f]|f0[9ab][0-9a-f][89ab][0-9a-f][89ab][0-9a-f]|f[1-3][89ab][0-9a-f][89ab][0-9a-f][89ab][0-9a-f]|f48[0-9a-f][89ab][0-9a-f][89ab][0-9a-f])*$'
	                 AND pg_catalog.length(i.val) < 100000
	            THEN pg_catalog.convert_from(i.val, 'UTF8') END AS txt,
	       (ARRAY['OrderReceived', 'OrderReceived', 'OrderShipped', '', pg_catalog.repeat('Ty', 50)])[1 + (k.x * 100)::int % 5] AS ce_type) AS v
  CROSS JOIN LATERAL (
	SELECT CASE
	WHEN i.val IS NULL OR v.txt IS NULL OR o.envelope = 'plain' OR k.w < 0.15 THEN i.val
	WHEN o.envelope = 'debezium' THEN pg_catalog.convert_to(
		CASE (k.x * 18)::int
		WHEN 0 THEN pg_catalog.to_json(v.txt)::text
		WHEN 1 THEN '{"schema": {"type": "string", "optional": false}, "payload": ' || pg_catalog.to_json(v.txt)::text || '}'
		WHEN 2 THEN '{"schema": {"type": "struct"}, "payload": ' || v.txt || '}'
		WHEN 3 THEN '{"payload": ' || v.txt || ', "schema": null}'
		WHEN 4 THEN '{"schema": {"type": "struct"}}'
		WHEN 5 THEN '{"schema": 1, "payload": ' || (ARRAY['42', '[1]', 'null', 'true', '"not json"'])[1 + (k.t * 4)::int] || '}'
		WHEN 6 THEN '{"schema": 1, "payload": ' || v.txt || ', "payload": ' || v.txt || '}'
		WHEN 7 THEN '{"schema": 1, "schema": 2, "payload": ' || v.txt || '}'
		WHEN 8 THEN '{"schema": 1, "pay\u006coad": ' || v.txt || '}'
		WHEN 9 THEN (ARRAY['42', '[' || v.txt || ']', 'true', 'null', '"x"'])[1 + (k.t * 4)::int]
		WHEN 10 THEN '{"schema": "' || (ARRAY['\ud800', '\udc00x', '\ud800\ud800', '\ud83d\ude00', '\ud800\u0041', '\\ud800'])[1 + (k.t * 5)::int]
		             || '", "payload": ' || v.txt || '}'
		WHEN 11 THEN '{"schema": 1e999999, "payload": ' || v.txt || '}'
		WHEN 12 THEN '{"schema": "\u0000", "payload": ' || v.txt || '}'
		WHEN 13 THEN '{"schema": ' || pg_catalog.repeat('[', 600) || pg_catalog.repeat(']', 600) || ', "payload": ' || v.txt || '}'
		WHEN 14 THEN '{"schema": 1, "payload": ' || pg_catalog.to_json(pg_catalog.to_json(v.txt)::text)::text || '}'
		WHEN 15 THEN '{"schema": 1, "payload": {"orderId": "' || pg_catalog.md5(i.pos::text)::uuid || '", "externalReference": "S-1"}, "x": '
		WHEN 16 THEN '{"payload": ' || v.txt || '}'
		ELSE '{"schema": {"type": "struct"}, "payload": ' || v.txt || '}'
		END, 'UTF8')
	ELSE pg_catalog.convert_to(
		CASE (k.x * 20)::int
		WHEN 0 THEN v.txt
		WHEN 1 THEN '{"specversion": "1.0", "type": "' || v.ce_type || '", "id": "1", "data": ' || v.txt || '}'
		WHEN 2 THEN '{"specversion": "1.0", "type": "' || v.ce_type || '", "data": ' || pg_catalog.to_json(v.txt)::text || '}'
		WHEN 3 THEN '{"specversion": "1.0", "type": "' || v.ce_type || '", "data_base64": "'
		            || pg_catalog.translate(pg_catalog.encode(pg_catalog.convert_to(v.txt, 'UTF8'), 'base64'), E'\n', '') || '"}'
		WHEN 4 THEN '{"specversion": "1.0", "type": "' || v.ce_type || '", "data_base64": "'
		            || (ARRAY['QQ=A', 'e30=e30=', 'QQ', '@@@@', ' e30=', 'e3==', 'e30', 'e30==', 'e\u0033\u0030=', ''])[1 + (k.t * 9)::int] || '"}'
		WHEN 5 THEN '{"specversion": "1.0", "type": "' || v.ce_type || '", "data": ' || v.txt || ', "data_base64": "e30="}'
		WHEN 6 THEN '{"specversion": "1.0", "type": "' || v.ce_type || '"}'
		WHEN 7 THEN '{"type": "' || v.ce_type || '", "data": ' || v.txt || '}'
		WHEN 8 THEN '{"specversion": 1, "type": "OrderReceived", "data": ' || v.txt || '}'
		WHEN 9 THEN '{"specversion": "1.0", "data": ' || v.txt || '}'
		WHEN 10 THEN '{"specversion": "1.0", "type": ' || (ARRAY['5', 'null', '""', '["OrderReceived"]'])[1 + (k.t * 3)::int] || ', "data": ' || v.txt || '}'
		WHEN 11 THEN '{"specversion": "1.0", "type": "OrderReceived", "data": ' || (ARRAY['42', 'null', '[1]', 'false'])[1 + (k.t * 3)::int] || '}'
		WHEN 12 THEN '{"specversion": "1.0", "type": "OrderReceived", "data_base64": 5}'
		WHEN 13 THEN '{"specversion": "1.0", "type": "OrderReceived", "type": "OrderShipped", "data": ' || v.txt || '}'
		WHEN 14 THEN (ARRAY['[1]', '"s"', '7', 'null'])[1 + (k.t * 3)::int]
		WHEN 15 THEN '{"specversion": "1.0", "type": "Order\u0052eceived", "data": ' || v.txt || '}'
		WHEN 16 THEN '{"specversion": "1.0", "type": "\udc00", "data": ' || v.txt || '}'
		ELSE '{"specversion": "1.0", "type": "' || v.ce_type || '", "data": ' || v.txt || '}'
		END, 'UTF8')
	END AS val) AS w;

-- The same outbox messages as the Schema Registry form receives them from
-- the feeder (feeder/decode.c): public.fuzz_framed_input adds per message
-- the JSON the feeder decoded (an Avro value), the schema id it read from
-- the frame (or none, as a caller from SQL), why it could not decode the
-- value, and the GUID a __value_schema_id header named.  A value is framed
-- JSON (JSON Schema; the outbox message, or a new order), framed Avro
-- bytes with their decoded JSON (the message, or a new order), framed
-- bytes the feeder refused (a reason of its, long and multi-byte too),
-- unframed Avro bytes named by a GUID, unframed JSON with or without a
-- GUID, or shorter than the frame; schema ids small, the largest and
-- negative (0xffffffff).
CREATE TABLE public.fuzz_framed_input (
	batch integer, pos integer, val bytea, topic text, part integer, off bigint, key bytea,
	mtype bytea, ctype bytea, decoded bytea, schema_id integer, decode_error text, guid uuid,
	PRIMARY KEY (batch, pos));

INSERT INTO public.fuzz_framed_input
SELECT i.batch, i.pos,
       CASE WHEN i.val IS NULL THEN NULL
            WHEN k.kind = 0 THEN '\x00'::bytea || pg_catalog.int4send(k.id) || i.val
            WHEN k.kind = 7 THEN '\x00'::bytea || pg_catalog.int4send(k.id) || k.fresh
            WHEN k.kind IN (1, 2) THEN '\x00'::bytea || pg_catalog.int4send(k.id) || k.avro
            WHEN k.kind = 3 THEN k.avro
            WHEN k.kind IN (4, 6) THEN i.val
            ELSE pg_catalog.substring('\x00000007'::bytea, 1, (k.r * 4)::int) END,
       'framed', i.part, i.off, i.key, i.mtype, i.ctype,
       CASE WHEN i.val IS NOT NULL AND k.kind IN (1, 3) AND k.r < 0.4 THEN k.fresh
            WHEN i.val IS NOT NULL AND k.kind IN (1, 3) THEN i.val END,
       CASE WHEN i.val IS NULL THEN NULL
            WHEN k.kind = 1 OR (k.kind IN (0, 7) AND k.g < 0.6) OR (k.kind = 2 AND k.r < 0.5) THEN k.id END,
       CASE WHEN i.val IS NOT NULL AND k.kind = 2 THEN
            (ARRAY['schema id ' || k.id || ' is unknown to the Schema Registry',
                   'Avro value does not match writer schema ' || k.id || ': the value ends inside field "lines"',
                   'Avro value does not match its schema: ' || pg_catalog.repeat('é', 200) || ' is not a valid enum symbol',
                   ''])[1 + (k.r * 3)::int] END,
       CASE WHEN i.val IS NOT NULL AND k.kind IN (3, 6) THEN pg_catalog.md5(i.off::text)::uuid END
  FROM public.fuzz_outbox_input i
  CROSS JOIN LATERAL (
	SELECT (pg_catalog.random() * 8)::int % 8 + i.pos * 0 AS kind,
	       (ARRAY[1, 7, 2147483647, -1, 100042])[1 + (pg_catalog.random() * 4)::int] AS id,
	       pg_catalog.decode(pg_catalog.md5(i.off::text || 'avro'), 'hex') AS avro,
	       pg_catalog.random() AS r, pg_catalog.random() AS g,
	       pg_catalog.convert_to(pg_catalog.format('{"orderId": "%s", "externalReference": "F-%s"}',
	                                               pg_catalog.md5('framed' || i.off)::uuid, i.pos % 2), 'UTF8') AS fresh) AS k;
