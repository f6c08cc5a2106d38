			-- sql/sql-only/envelope-open.sql: envelope.c's RoEnvelopeUnwrap for
			-- the Debezium and the CloudEvents structured-mode envelopes, one
			-- value at a time: txt is the value (it passed event-raw.sql's
			-- checks but jsonb's), envelope its envelope; sets rj (NULL, or
			-- ARRAY[sqlstate, message, detail]), ev (the event's bytes) and
			-- ce_type (the CloudEvents type attribute, as bytes).
			rj := NULL;
			ev := NULL;
			ce_type := NULL;
			env_msg := NULL;
			env_code := '22023';
			-- the parse with de-escaping: \u0000 is refused before, so only
			-- a surrogate escape out of its pair fails it
			IF txt ~ '\\u[dD][89a-fA-F]' THEN
				FOR env_esc IN
					SELECT e[1] AS hi, e[2] AS nxt, e[3] AS lo
					  FROM pg_catalog.regexp_matches(txt, '(\\u[dD][89abAB][0-9a-fA-F]{2})(\\u[0-9a-fA-F]{4})?|(\\u[dD][c-fC-F][0-9a-fA-F]{2})|\\.', 'g') AS e
				LOOP
					IF env_esc.hi IS NOT NULL AND env_esc.nxt ~ '^\\u[dD][89abAB]' THEN
						env_msg := 'the value is not valid JSON: Unicode high surrogate must not follow a high surrogate.';
					ELSIF (env_esc.hi IS NOT NULL AND (env_esc.nxt IS NULL OR env_esc.nxt !~ '^\\u[dD][c-fC-F]'))
					   OR env_esc.lo IS NOT NULL THEN
						env_msg := 'the value is not valid JSON: Unicode low surrogate must follow a high surrogate.';
					END IF;
					IF env_msg IS NOT NULL THEN
						env_code := '22P02';
						EXIT;
					END IF;
				END LOOP;
			END IF;
			IF env_msg IS NULL THEN
				env_j := txt::pg_catalog.json;
				env_top := pg_catalog.json_typeof(env_j);
				env_wanted := CASE WHEN envelope = 'debezium' THEN ARRAY['schema', 'payload']
				                   ELSE ARRAY['specversion', 'type', 'data', 'data_base64'] END;
				env_members := '{}';
				IF env_top = 'object' THEN
					-- each wanted top-level member: how often, its first value
					SELECT coalesce(pg_catalog.jsonb_object_agg(f.key,
					                  pg_catalog.jsonb_build_object('n', f.n, 'v', f.v, 't', pg_catalog.json_typeof(f.value))),
					                '{}')
					  INTO env_members
					  FROM (SELECT e.key, e.value, e.value::text AS v,
					               pg_catalog.count(*) OVER (PARTITION BY e.key) AS n,
					               pg_catalog.row_number() OVER (PARTITION BY e.key ORDER BY e.k) AS rn
					          FROM pg_catalog.json_each(env_j) WITH ORDINALITY AS e(key, value, k)
					         WHERE e.key = ANY (env_wanted)) f
					 WHERE f.rn = 1;
					SELECT pg_catalog.format('"%s" is given more than once', w.name) INTO env_msg
					  FROM pg_catalog.unnest(env_wanted) WITH ORDINALITY AS w(name, k)
					 WHERE (env_members -> w.name ->> 'n')::integer > 1
					 ORDER BY w.k LIMIT 1;
				END IF;
			END IF;
			IF env_msg IS NULL AND envelope = 'debezium' THEN
				-- EnvelopeDebezium
				env_t := env_members -> 'payload' ->> 't';
				IF env_top = 'string' THEN
					ev := pg_catalog.convert_to(env_j #>> '{}', 'UTF8');
				ELSIF env_top <> 'object' THEN
					env_msg := pg_catalog.format('the value is %s, not the event object, a JSON string holding it, or a {"schema", "payload"} wrapper',
					                             env_token_names[pg_catalog.array_position(env_token_types, env_top)]);
				ELSIF NOT env_members ? 'schema' THEN
					ev := val;
				ELSIF env_t IS NULL THEN
					env_msg := '"payload" is missing (the value has "schema", so it is Kafka Connect''s {"schema", "payload"} wrapper)';
				ELSIF env_t = 'string' THEN
					ev := pg_catalog.convert_to((env_members -> 'payload' ->> 'v')::pg_catalog.json #>> '{}', 'UTF8');
				ELSIF env_t <> 'object' THEN
					env_msg := pg_catalog.format('"payload" is %s, not the event object or a JSON string holding it',
					                             env_token_names[pg_catalog.array_position(env_token_types, env_t)]);
				ELSE
					ev := pg_catalog.convert_to(env_members -> 'payload' ->> 'v', 'UTF8');
				END IF;
			ELSIF env_msg IS NULL THEN
				-- EnvelopeCloudEvents
				IF env_top <> 'object' THEN
					env_msg := pg_catalog.format('the value is %s, not a structured-mode event object (the content-type header says application/cloudevents)',
					                             env_token_names[pg_catalog.array_position(env_token_types, env_top)]);
				ELSIF NOT env_members ? 'specversion' THEN
					env_msg := '"specversion" is missing';
				ELSIF env_members -> 'specversion' ->> 't' <> 'string' THEN
					env_msg := pg_catalog.format('"specversion" is %s, not a string',
					                             env_token_names[pg_catalog.array_position(env_token_types, env_members -> 'specversion' ->> 't')]);
				ELSIF NOT env_members ? 'type' THEN
					env_msg := '"type" is missing';
				ELSIF env_members -> 'type' ->> 't' <> 'string'
				   OR (env_members -> 'type' ->> 'v')::pg_catalog.json #>> '{}' = '' THEN
					env_msg := pg_catalog.format('"type" is %s, not a non-empty string',
					                             CASE WHEN env_members -> 'type' ->> 't' = 'string' THEN 'empty'
					                                  ELSE env_token_names[pg_catalog.array_position(env_token_types, env_members -> 'type' ->> 't')] END);
				END IF;
				IF env_msg IS NULL THEN
					ce_type := pg_catalog.convert_to((env_members -> 'type' ->> 'v')::pg_catalog.json #>> '{}', 'UTF8');
					env_t := env_members -> 'data' ->> 't';
					IF env_t IS NOT NULL AND env_members ? 'data_base64' THEN
						env_msg := 'both "data" and "data_base64" are present';
					ELSIF env_members ? 'data_base64' THEN
						IF env_members -> 'data_base64' ->> 't' <> 'string' THEN
							env_msg := pg_catalog.format('"data_base64" is %s, not a string',
							                             env_token_names[pg_catalog.array_position(env_token_types, env_members -> 'data_base64' ->> 't')]);
						ELSE
							env_b64 := (env_members -> 'data_base64' ->> 'v')::pg_catalog.json #>> '{}';
							IF env_b64 ~ '^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$' THEN
								ev := pg_catalog.decode(env_b64, 'base64');
							ELSE
								-- common/base64.c's pg_b64_decode, as it reads
								-- what is not canonical base64
								ev := '\x';
								b64_buf := 0;
								b64_pos := 0;
								b64_end := 0;
								FOREACH b64_ch IN ARRAY pg_catalog.regexp_split_to_array(env_b64, '') LOOP
									IF b64_ch = '=' THEN
										IF b64_end = 0 THEN
											IF b64_pos IN (2, 3) THEN
												b64_end := b64_pos - 1;
											ELSE
												env_msg := '"data_base64" is not valid base64';
												EXIT;
											END IF;
										END IF;
										b64_b := 0;
									ELSE
										b64_b := pg_catalog.strpos('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/', b64_ch) - 1;
										IF b64_b < 0 THEN
											env_msg := '"data_base64" is not valid base64';
											EXIT;
										END IF;
									END IF;
									b64_buf := b64_buf * 64 + b64_b;
									b64_pos := b64_pos + 1;
									IF b64_pos = 4 THEN
										ev := ev || pg_catalog.decode(pg_catalog.lpad(pg_catalog.to_hex((b64_buf >> 16) & 255), 2, '0'), 'hex');
										IF b64_end = 0 OR b64_end > 1 THEN
											ev := ev || pg_catalog.decode(pg_catalog.lpad(pg_catalog.to_hex((b64_buf >> 8) & 255), 2, '0'), 'hex');
										END IF;
										IF b64_end = 0 OR b64_end > 2 THEN
											ev := ev || pg_catalog.decode(pg_catalog.lpad(pg_catalog.to_hex(b64_buf & 255), 2, '0'), 'hex');
										END IF;
										b64_buf := 0;
										b64_pos := 0;
									END IF;
								END LOOP;
								IF env_msg IS NULL AND b64_pos <> 0 THEN
									env_msg := '"data_base64" is not valid base64';
								END IF;
								IF env_msg IS NOT NULL THEN
									env_code := '22P02';
									ev := NULL;
								END IF;
							END IF;
						END IF;
					ELSIF env_t IS NULL THEN
						env_msg := '"data" is missing (and there is no "data_base64")';
					ELSIF env_t = 'string' THEN
						ev := pg_catalog.convert_to((env_members -> 'data' ->> 'v')::pg_catalog.json #>> '{}', 'UTF8');
					ELSIF env_t <> 'object' THEN
						env_msg := pg_catalog.format('"data" is %s, not the event object or a JSON string holding it',
						                             env_token_names[pg_catalog.array_position(env_token_types, env_t)]);
					ELSE
						ev := pg_catalog.convert_to(env_members -> 'data' ->> 'v', 'UTF8');
					END IF;
				END IF;
			END IF;
			IF env_msg IS NOT NULL THEN
				rj := ARRAY[env_code, 'envelope ' || envelope || ': ' || env_msg, NULL];
				ev := NULL;
			END IF;
