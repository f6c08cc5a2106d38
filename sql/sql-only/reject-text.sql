		-- sql/sql-only/reject-text.sql: outcome.c's RoOutcomeReject text of
		-- rj (ARRAY[sqlstate, message, detail]): "message: detail", each part
		-- cut to 256 bytes at a character boundary (253 and an ellipsis)
		(SELECT pg_catalog.string_agg(
		          CASE WHEN pg_catalog.octet_length(u.part) <= 256 THEN u.part
		          ELSE (SELECT pg_catalog.convert_from(pg_catalog.substring(q.b, 1,
		                         CASE WHEN pg_catalog.get_byte(q.b, 253) & 192 <> 128 THEN 253
		                              WHEN pg_catalog.get_byte(q.b, 252) & 192 <> 128 THEN 252
		                              WHEN pg_catalog.get_byte(q.b, 251) & 192 <> 128 THEN 251
		                              ELSE 250 END), 'UTF8') || pg_catalog.chr(8230)
		                  FROM (SELECT pg_catalog.convert_to(u.part, 'UTF8') AS b) q)
		          END, ': ' ORDER BY u.k)
		   FROM pg_catalog.unnest(rj[2:3]) WITH ORDINALITY AS u(part, k))
