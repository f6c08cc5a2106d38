		-- sql/sql-only/outbox-options.sql: outbox.c's RoOutboxOptions, the
		-- envelope, event type and type header of the outbox forms; sets
		-- env_type_header (the header the types were read from)
		IF envelope IS NULL THEN
			RAISE EXCEPTION 'envelope must not be null'
				USING ERRCODE = 'null_value_not_allowed',
				      HINT = 'Pass ''plain'', ''debezium'' or ''cloudevents''.';
		END IF;
		IF envelope NOT IN ('plain', 'debezium', 'cloudevents') THEN
			RAISE EXCEPTION 'unknown envelope %',
				(SELECT
--@include quote-bytes
				   FROM (SELECT pg_catalog.convert_to(envelope, 'UTF8')) AS qb(b))
				USING ERRCODE = 'invalid_parameter_value',
				      HINT = 'Pass ''plain'', ''debezium'' or ''cloudevents''.';
		END IF;
		IF pg_catalog.octet_length(event_type) = 0 THEN
			RAISE EXCEPTION 'event_type must not be empty'
				USING ERRCODE = 'invalid_parameter_value',
				      HINT = 'Pass NULL to materialize every message, or the type to select.';
		END IF;
		env_type_header := CASE WHEN envelope = 'cloudevents' THEN 'ce_type' ELSE type_header END;
		IF env_type_header IS NULL AND event_type IS NOT NULL THEN
			RAISE EXCEPTION 'type_header must not be null when an event_type is given'
				USING ERRCODE = 'null_value_not_allowed',
				      HINT = 'Pass the name of the header message_types were read from.';
		END IF;
		IF pg_catalog.octet_length(env_type_header) NOT BETWEEN 1 AND 255 THEN
			RAISE EXCEPTION 'type_header must have 1 to 255 bytes'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
