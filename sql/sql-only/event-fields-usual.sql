		-- sql/sql-only/event-fields-usual.sql: true when ev.payload (jsonb)
		-- passes every rule of event-fields.sql in the usual way (an object
		-- whose "orderId" is a string and whose "externalReference" is a
		-- string of 255 characters or fewer with a non-blank one) but one:
		-- the grammar of "orderId", which the caller then reads with uuid_in
		-- (the rule's grammar, event-fields.sql's pattern; it throws on
		-- anything else).  False or NULL tells nothing: event-fields.sql
		-- decides.  A few instructions a value, where the pattern costs
		-- PostgreSQL's regex engine about 4 us; batch.sql's normal path.
		(pg_catalog.jsonb_typeof(ev.payload -> 'orderId') = 'string'
		 AND pg_catalog.jsonb_typeof(ev.payload -> 'externalReference') = 'string'
		 -- a first character that is not blank (ascii gives 0 for an
		 -- empty string) spares btrim; bytes bound characters
		 AND (pg_catalog.ascii(ev.payload ->> 'externalReference') NOT IN (0, 9, 10, 11, 12, 13, 32)
		      OR pg_catalog.btrim(ev.payload ->> 'externalReference', E' \t\n\r\f\x0b') <> '')
		 AND (pg_catalog.octet_length(ev.payload ->> 'externalReference') <= 255
		      OR pg_catalog.char_length(ev.payload ->> 'externalReference') <= 255))
