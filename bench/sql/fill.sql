-- bench/sql/fill.sql — the stream of :events events, as batches and as rows.
INSERT INTO bench.batches
SELECT b, pg_catalog.array_agg(pg_catalog.convert_to(bench.event(bench.event_number(i)), 'UTF8') ORDER BY i)
  FROM pg_catalog.generate_series(1, :events) AS i, LATERAL (SELECT (i - 1) / 1000 + 1 AS b) AS x
 GROUP BY b;
INSERT INTO bench.staging_text
SELECT bench.event(bench.event_number(i)) FROM pg_catalog.generate_series(1, :events) AS i;
INSERT INTO bench.staging SELECT payload::jsonb FROM bench.staging_text;
