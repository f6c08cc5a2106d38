		-- sql/sql-only/quote-bytes.sql: outbox.c's OutboxQuoteBytes of qb.b
		-- (bytea): at most 64 bytes of it double-quoted (cut between
		-- characters), or the hex of its first 32 bytes when it is not valid
		-- UTF-8, and how many bytes were shown when not all
		(SELECT CASE WHEN z.utf8 THEN '"' || pg_catalog.convert_from(pg_catalog.substring(qb.b, 1, z.shown), 'UTF8') || '"'
		             ELSE '\x' || pg_catalog.encode(pg_catalog.substring(qb.b, 1, 32), 'hex') || ' (not valid UTF-8)' END
		        || CASE WHEN z.shown < z.len THEN pg_catalog.format(' (first %s of %s bytes)', z.shown, z.len) ELSE '' END
		   FROM (SELECT y.utf8, y.len,
		                CASE WHEN NOT y.utf8 THEN LEAST(y.len, 32)
		                     WHEN y.len <= 64 THEN y.len
		                     WHEN pg_catalog.get_byte(qb.b, 64) & 192 <> 128 THEN 64
		                     WHEN pg_catalog.get_byte(qb.b, 63) & 192 <> 128 THEN 63
		                     WHEN pg_catalog.get_byte(qb.b, 62) & 192 <> 128 THEN 62
		                     ELSE 61 END AS shown
		           FROM (SELECT pg_catalog.length(qb.b) AS len,
		                        pg_catalog.encode(qb.b, 'hex') ~ ('^' ||
--@include utf8-hex
		                        || '*$') AS utf8) y) z)
