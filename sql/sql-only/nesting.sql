		-- sql/sql-only/nesting.sql: event.c's EventScan depth rule over
		-- txt: true when the value is nested more than 512 levels deep
		-- (outside strings, whose escapes are skipped).  Only a value with
		-- more than 512 brackets at all gets the exact count.
		(pg_catalog.octet_length(txt) > 512
		 AND pg_catalog.octet_length(txt)
		     - pg_catalog.octet_length(pg_catalog.replace(pg_catalog.replace(txt, '[', ''), '{', '')) > 512
		 AND (SELECT pg_catalog.max(d.depth) > 512
		        FROM (SELECT pg_catalog.sum(CASE WHEN s.c IN ('[', '{') THEN 1 ELSE -1 END)
		                       OVER (ORDER BY s.k) AS depth
		                FROM pg_catalog.regexp_split_to_table(
		                       pg_catalog.regexp_replace(
		                         pg_catalog.regexp_replace(txt, '"(?:[^"\\]|\\.)*(?:"|\\?$)', '', 'g'),
		                         '[^][{}]', '', 'g'), '') WITH ORDINALITY AS s(c, k)) d))
