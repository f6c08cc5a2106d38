	-- sql/sql-only/event-raw.sql: event.c's checks of a raw Kafka value,
	-- one value at a time, for the values a whole-batch parse refused:
	-- size, UTF-8, nesting, JSON syntax, \u0000, then jsonb's own input.
	-- Takes val (bytea) and max_event_bytes; sets rj (NULL, or ARRAY[sqlstate,
	-- message, detail]) and parsed (the jsonb value when rj is NULL), and
	-- jsonb_refused when jsonb's own input refused the value (the last
	-- check); uses txt, hex, valid_hex and error_detail.
	rj := NULL;
	parsed := NULL;
	jsonb_refused := false;
	IF pg_catalog.octet_length(val) > max_event_bytes THEN
		rj := ARRAY['54000',
		            pg_catalog.format('event is too large: %s bytes, received_orders.max_event_bytes is %s',
		                              pg_catalog.octet_length(val), max_event_bytes),
		            'A superuser can raise received_orders.max_event_bytes.'];
	ELSE
		-- the longest prefix of whole UTF-8 characters (pg_utf8_islegal,
		-- NUL excluded), read two hex digits a byte
		hex := pg_catalog.encode(val, 'hex');
		valid_hex := coalesce(pg_catalog.substring(hex, '^' ||
--@include utf8-hex
		                                         || '*'), '');
		IF pg_catalog.length(valid_hex) < pg_catalog.length(hex) THEN
			rj := ARRAY['22P02', 'event is not valid UTF-8',
			            pg_catalog.format('Invalid or NUL byte 0x%s at byte %s.',
			                              pg_catalog.substring(hex, pg_catalog.length(valid_hex) + 1, 2),
			                              pg_catalog.length(valid_hex) / 2 + 1)];
		ELSE
			txt := pg_catalog.convert_from(val, 'UTF8');
			IF
--@include nesting
			THEN
				rj := ARRAY['54001', 'event is nested more than 512 levels deep', NULL];
			ELSE
				BEGIN
					-- json's input: the syntax pass, without de-escaping
					PERFORM txt::pg_catalog.json;
				EXCEPTION WHEN data_exception THEN
					GET STACKED DIAGNOSTICS error_detail = PG_EXCEPTION_DETAIL;
					rj := ARRAY['22P02', 'event is not valid JSON', NULLIF(error_detail, '')];
				END;
				IF rj IS NULL AND txt ~ '(?:^|[^\\])(?:\\\\)*\\u0000' THEN
					rj := ARRAY['22P05', 'event contains \u0000, which jsonb cannot store', NULL];
				ELSIF rj IS NULL THEN
					BEGIN
						parsed := txt::pg_catalog.jsonb;
					EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
						GET STACKED DIAGNOSTICS error_detail = PG_EXCEPTION_DETAIL;
						rj := ARRAY[SQLSTATE, SQLERRM, NULLIF(error_detail, '')];
						jsonb_refused := true;
					END;
				END IF;
			END IF;
		END IF;
	END IF;
