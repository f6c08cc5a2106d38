		-- sql/sql-only/event-fields.sql: event.c's RoEventCheckFields as one
		-- expression over ev.payload (jsonb), in its order: NULL for a valid
		-- event, else ARRAY[sqlstate, message, detail]
		CASE
		WHEN pg_catalog.jsonb_typeof(ev.payload) <> 'object' THEN
			ARRAY['22023', 'event is not a JSON object',
			      pg_catalog.format('The event is a JSON %s; an OrderReceived event is an object with "orderId" and "externalReference".',
			                        pg_catalog.jsonb_typeof(ev.payload))]
		WHEN NOT ev.payload ? 'orderId' THEN
			ARRAY['22023', 'field "orderId" is missing', NULL]
		WHEN pg_catalog.jsonb_typeof(ev.payload -> 'orderId') <> 'string' THEN
			ARRAY['22023', 'field "orderId" must be a string',
			      pg_catalog.format('It is a JSON %s.', pg_catalog.jsonb_typeof(ev.payload -> 'orderId'))]
		-- uuid_in's grammar, as RoEventParseUuid reads it: 32 hex digits, an
		-- optional hyphen after each group of four but the last, braces around.
		-- The usual form (8-4-4-4-12) is told first without that pattern, whose
		-- bounded repetitions cost PostgreSQL's regex engine about 4 us a value:
		-- 36 characters, hyphens at 9, 14, 19 and 24, no other, the rest hex
		WHEN NOT ((ev.payload ->> 'orderId') LIKE '________-____-____-____-____________'
		          AND (ev.payload ->> 'orderId') ~ '^[-0-9a-fA-F]+$'
		          AND pg_catalog.octet_length(pg_catalog.replace(ev.payload ->> 'orderId', '-', '')) = 32)
		     AND (ev.payload ->> 'orderId') !~ '^(\{[0-9a-fA-F]{4}(-?[0-9a-fA-F]{4}){7}\}|[0-9a-fA-F]{4}(-?[0-9a-fA-F]{4}){7})$' THEN
			ARRAY['22P02',
			      pg_catalog.format('field "orderId" is not a valid UUID: "%s"',
			      CASE WHEN pg_catalog.octet_length(ev.payload ->> 'orderId') <= 64 THEN ev.payload ->> 'orderId'
			      -- the first 64 bytes, whole characters only, and "..."
			      ELSE (SELECT pg_catalog.convert_from(pg_catalog.substring(q.b, 1,
			                   CASE WHEN pg_catalog.get_byte(q.b, 64) & 192 <> 128 THEN 64
			                        WHEN pg_catalog.get_byte(q.b, 63) & 192 <> 128 THEN 63
			                        WHEN pg_catalog.get_byte(q.b, 62) & 192 <> 128 THEN 62
			                        ELSE 61 END), 'UTF8') || '...'
			              FROM (SELECT pg_catalog.convert_to(ev.payload ->> 'orderId', 'UTF8') AS b) q)
			      END),
			      NULL]
		WHEN NOT ev.payload ? 'externalReference' THEN
			ARRAY['22023', 'field "externalReference" is missing', NULL]
		WHEN pg_catalog.jsonb_typeof(ev.payload -> 'externalReference') <> 'string' THEN
			ARRAY['22023', 'field "externalReference" must be a string',
			      pg_catalog.format('It is a JSON %s.', pg_catalog.jsonb_typeof(ev.payload -> 'externalReference'))]
		WHEN pg_catalog.btrim(ev.payload ->> 'externalReference', E' \t\n\r\f\x0b') = '' THEN
			ARRAY['22023', 'field "externalReference" is blank', 'It must contain a non-blank character.']
		WHEN pg_catalog.char_length(ev.payload ->> 'externalReference') > 255 THEN
			ARRAY['22001', 'field "externalReference" is longer than 255 characters',
			      pg_catalog.format('It has %s characters.', pg_catalog.char_length(ev.payload ->> 'externalReference'))]
		END
