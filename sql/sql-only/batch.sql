-- sql/sql-only/batch.sql: the batch function's twin (materialize.c's
-- materialize_orders forms, batch.c), set-based, as one PL/pgSQL block
-- that materialize_orders.sql (the plain form) and
-- materialize_orders_for_group.sql include; with_group tells the forms apart.
--
-- The normal path is one statement for the whole batch (then the
-- duplicates' stored references, the quarantine, the positions, the
-- result), in one subtransaction (an EXCEPTION block), as batch.c's
-- BatchParseAndInsertAll: the checks that cannot throw (null, size:
-- batch-precheck.sql), every value read as UTF-8 and jsonb, the nesting
-- and field rules (nesting.sql; event-fields-usual.sql, else
-- event-fields.sql), the orderId read by uuid_in (which throws on what the
-- rule refuses), every valid event inserted in order_id order with
-- INSERT ... ON CONFLICT (order_id) DO NOTHING, and each element's outcome.
-- Should it throw, the batch is taken step by step: the checks, the parse,
-- the field rules, the insert, each range that throws halved until the
-- error is pinned on its element (about 2 log2(n) subtransactions per bad
-- element), and only that element read one check at a time (event-raw.sql).
-- As in batch.c, only errors an event's data can cause (classes 22 and 23;
-- 54 while parsing, or at the insert of a call's only event) are pinned on
-- an element; any other error fails the call.
--
-- What the normal path costs (valgrind's instruction count, bench/sql-only's
-- 1,000-event calls, the plans cached; docs/sql-only.md): 116 million
-- instructions a call, of which 88 a PL/pgSQL function doing only the
-- parse and the INSERT costs; the C extension's whole call 66 million.  It
-- avoids what cost more: PostgreSQL's regex engine on the UUID pattern (4
-- us a value), an ORDER BY in each aggregate (a sort each), a window over
-- the rows with their payload, set-returning functions in FROM (copied to
-- a tuplestore first), a sort of the batch on its topics (text compared in
-- the database's collation), one lookup per event not inserted, a copy of
-- the values' array.
DECLARE
	max_event_bytes CONSTANT integer := 1048576;
	n integer;
	arg_names CONSTANT text[] := ARRAY['kafka_topics', 'kafka_partitions', 'kafka_offsets', 'kafka_keys',
	                                   'message_types', 'content_types', 'decoded_values',
	                                   'value_schema_ids', 'decode_errors', 'value_schema_guids'];
	arg_dims integer[];
	arg_counts integer[];
	bad_topic record;
	long_topic_k integer;
	-- each partition's last offset, for the positions
	part_topics text[];
	part_numbers integer[];
	part_offsets bigint[];
	no_next_offset boolean;
	bad_coordinates_k integer;
	-- per element (1 .. n): outcome, sqlstate, reason, parsed value
	st_outcome text[];
	st_sqlstate text[];
	st_message text[];
	st_payload jsonb[];
	st_order_id uuid[];
	st_pos integer[];
	-- the valid events not inserted, whose stored references tell
	-- duplicates from conflicts
	pend_pos integer[];
	pend_id uuid[];
	pend_ref text[];
	-- the valid events, in order_id order (ties by position)
	cand_pos integer[];
	cand_id uuid[];
	cand_ref text[];
	cand_payload jsonb[];
	cand_sqlstate text[];
	cand_message text[];
	cand_inserted boolean[];
	cand_outcome text[];
	ncand integer;
	-- ranges still to try (a stack), and what a try gave
	todo_lo integer[];
	todo_hi integer[];
	lo integer;
	hi integer;
	mid integer;
	slow integer[] := '{}';
	part_payload jsonb[];
	part_deep boolean[];
	part_inserted boolean[];
	-- the outbox form's (outbox-options.sql, envelope-open.sql): each
	-- element's event, or what decided it before the validator
	ev_values bytea[];
	-- the framed form's: each element's schema id (frame.c's)
	pre_schema_id integer[];
	fr_decoded bytea;
	fr_error text;
	-- the values a Debezium or structured CloudEvents envelope is opened
	-- in, as text, when the whole batch's raw checks passed them
	env_clean_txt text[];
	pre_outcome text[];
	pre_sqlstate text[];
	pre_message text[];
	env_type_header text;
	env_type bytea;
	env_ct bytea;
	structured boolean;
	--@include envelope-open-vars
	-- event-raw.sql's
	p integer;
	val bytea;
	rj text[];
	parsed jsonb;
	txt text;
	hex text;
	valid_hex text;
	error_detail text;
	jsonb_refused boolean;
	fast_done boolean;
	-- outcomes of the events not inserted
	conflict record;
	not_stored uuid;
BEGIN
	IF with_group THEN
		-- positions.c's RoPositionsGroupArgument
		IF consumer_group IS NULL THEN
			RAISE EXCEPTION 'consumer_group must not be null'
				USING ERRCODE = 'null_value_not_allowed',
				      HINT = 'Pass the Kafka consumer group whose positions the batch advances.';
		END IF;
		IF pg_catalog.octet_length(consumer_group) = 0 THEN
			RAISE EXCEPTION 'consumer_group must not be empty'
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
		IF kafka_topics IS NULL OR kafka_partitions IS NULL OR kafka_offsets IS NULL THEN
			RAISE EXCEPTION '% must not be null when a consumer group is given',
				CASE WHEN kafka_topics IS NULL THEN 'kafka_topics'
				     WHEN kafka_partitions IS NULL THEN 'kafka_partitions' ELSE 'kafka_offsets' END
				USING ERRCODE = 'null_value_not_allowed',
				      HINT = 'Positions are recorded from each message''s topic, partition and offset.';
		END IF;
	END IF;
	IF with_envelope THEN
--@include outbox-options
	END IF;
	IF kafka_values IS NULL THEN
		RAISE EXCEPTION 'kafka_values must not be null'
			USING ERRCODE = 'null_value_not_allowed',
			      HINT = 'Pass an array of message values, empty for no messages.';
	END IF;
	-- the arrays as BatchDeconstruct reads them: one dimension, one element
	-- per message (a NULL array: all elements NULL)
	IF pg_catalog.array_ndims(kafka_values) > 1 THEN
		RAISE EXCEPTION 'kafka_values must be a one-dimensional array'
			USING ERRCODE = 'array_subscript_error';
	END IF;
	n := pg_catalog.cardinality(kafka_values);
	arg_dims := ARRAY[pg_catalog.array_ndims(kafka_topics), pg_catalog.array_ndims(kafka_partitions),
	                  pg_catalog.array_ndims(kafka_offsets), pg_catalog.array_ndims(kafka_keys),
	                  pg_catalog.array_ndims(message_types), pg_catalog.array_ndims(content_types),
	                  pg_catalog.array_ndims(decoded_values), pg_catalog.array_ndims(value_schema_ids),
	                  pg_catalog.array_ndims(decode_errors), pg_catalog.array_ndims(value_schema_guids)];
	arg_counts := ARRAY[pg_catalog.cardinality(kafka_topics), pg_catalog.cardinality(kafka_partitions),
	                    pg_catalog.cardinality(kafka_offsets), pg_catalog.cardinality(kafka_keys),
	                    pg_catalog.cardinality(message_types), pg_catalog.cardinality(content_types),
	                    pg_catalog.cardinality(decoded_values), pg_catalog.cardinality(value_schema_ids),
	                    pg_catalog.cardinality(decode_errors), pg_catalog.cardinality(value_schema_guids)];
	FOR a IN 1 .. CASE WHEN with_frame THEN 10 WHEN with_envelope THEN 6 ELSE 4 END LOOP
		IF arg_dims[a] > 1 THEN
			RAISE EXCEPTION '% must be a one-dimensional array', arg_names[a]
				USING ERRCODE = 'array_subscript_error';
		END IF;
		IF arg_counts[a] <> n THEN
			RAISE EXCEPTION '% has % elements but kafka_values has %', arg_names[a], arg_counts[a], n
				USING ERRCODE = 'invalid_parameter_value',
				      HINT = 'Pass one element per message in every array, or NULL for the whole array.';
		END IF;
	END LOOP;
	-- BatchCheckBounds
	IF n > 100000 THEN
		RAISE EXCEPTION 'a batch holds at most 100000 messages, not %', n
			USING ERRCODE = 'program_limit_exceeded',
			      HINT = 'Split it into several calls.';
	END IF;
	IF with_group AND pg_catalog.octet_length(consumer_group) > 255 THEN
		RAISE EXCEPTION 'consumer group is % bytes long; at most 255 are allowed', pg_catalog.octet_length(consumer_group)
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- the topics' length, then with a group positions.c's
	-- RoPositionsCheckCoordinates (every element has its coordinates): the
	-- first element each refuses, in one pass over the batch
	IF kafka_topics IS NOT NULL THEN
		SELECT pg_catalog.min(m.k) FILTER (WHERE pg_catalog.octet_length(m.topic) > 249),
		       pg_catalog.min(m.k) FILTER (WHERE with_group
		                                         AND (m.topic IS NULL OR m.part IS NULL OR m.off IS NULL
		                                              OR pg_catalog.octet_length(m.topic) = 0 OR m.part < 0 OR m.off < 0))
		  INTO long_topic_k, bad_coordinates_k
		  FROM (SELECT pg_catalog.generate_series(1, n) AS k, pg_catalog.unnest(kafka_topics) AS topic,
		               pg_catalog.unnest(kafka_partitions) AS part, pg_catalog.unnest(kafka_offsets) AS off) m;
	END IF;
	IF long_topic_k IS NOT NULL THEN
		RAISE EXCEPTION 'element % has a Kafka topic of % bytes; Kafka allows at most 249', long_topic_k,
			pg_catalog.octet_length(kafka_topics[pg_catalog.array_lower(kafka_topics, 1) + long_topic_k - 1])
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	IF with_group THEN
		-- then the group is the calling role's to move (groups.c)
		IF bad_coordinates_k IS NOT NULL THEN
			SELECT bad_coordinates_k AS k,
			       kafka_topics[pg_catalog.array_lower(kafka_topics, 1) + bad_coordinates_k - 1] AS topic,
			       kafka_partitions[pg_catalog.array_lower(kafka_partitions, 1) + bad_coordinates_k - 1] AS part,
			       kafka_offsets[pg_catalog.array_lower(kafka_offsets, 1) + bad_coordinates_k - 1] AS off
			  INTO bad_topic;
			IF bad_topic.topic IS NULL OR bad_topic.part IS NULL OR bad_topic.off IS NULL THEN
				RAISE EXCEPTION 'element % has no Kafka %', bad_topic.k,
					CASE WHEN bad_topic.topic IS NULL THEN 'topic' WHEN bad_topic.part IS NULL THEN 'partition' ELSE 'offset' END
					USING ERRCODE = 'null_value_not_allowed',
					      HINT = 'With a consumer group, every element needs its topic, partition and offset.';
			END IF;
			RAISE EXCEPTION 'element % has invalid Kafka coordinates [%] @%', bad_topic.k, bad_topic.part, bad_topic.off
				USING ERRCODE = 'invalid_parameter_value',
				      HINT = 'Topics are not empty; partitions and offsets are not negative.';
		END IF;
		PERFORM received_orders.check_consumer_group(consumer_group, NULL);
	END IF;

	-- the outbox form (outbox.c's RoOutboxOpenEnvelope): each element
	-- decided by its type (skipped, or rejected when its type cannot be
	-- told) or by its envelope (rejected), else its event found in the
	-- envelope; one element at a time
	IF with_envelope THEN
		ev_values := pg_catalog.array_fill(NULL::bytea, ARRAY[n]);
		pre_outcome := pg_catalog.array_fill(NULL::text, ARRAY[n]);
		pre_sqlstate := pg_catalog.array_fill(NULL::text, ARRAY[n]);
		pre_message := pg_catalog.array_fill(NULL::text, ARRAY[n]);
		pre_schema_id := pg_catalog.array_fill(NULL::integer, ARRAY[n]);
		-- event.c's RoEventCheckRaw of the values to open, the whole batch
		-- in one statement (in frame.c's order: what the feeder decoded,
		-- else the bytes after the frame): those it passes skip
		-- event-raw.sql below; should it throw, each value gets event-raw.sql
		env_clean_txt := pg_catalog.array_fill(NULL::text, ARRAY[n]);
		IF envelope <> 'plain' AND n > 0 THEN
			BEGIN
				SELECT pg_catalog.array_agg(CASE WHEN u.txt IS NULL THEN NULL
				                                 WHEN
--@include nesting
				                                 THEN NULL
				                                 WHEN u.txt::pg_catalog.json IS NULL THEN NULL
				                                 WHEN u.txt ~ '(?:^|[^\\])(?:\\\\)*\\u0000' THEN NULL
				                                 ELSE u.txt END ORDER BY u.pos)
				  INTO env_clean_txt
				  FROM (SELECT e.pos, CASE WHEN pg_catalog.octet_length(e.val) <= max_event_bytes
				                           THEN pg_catalog.convert_from(e.val, 'UTF8') END AS txt
				          FROM (SELECT m.pos,
				                       CASE WHEN m.val IS NULL OR m.err IS NOT NULL THEN NULL
				                            WHEN NOT with_frame THEN m.val
				                            WHEN m.dec IS NOT NULL THEN m.dec
				                            WHEN pg_catalog.octet_length(m.val) >= 5 AND pg_catalog.get_byte(m.val, 0) = 0
				                            THEN pg_catalog.substring(m.val, 6) END AS val
				                  FROM unnest(kafka_values, decoded_values, decode_errors) WITH ORDINALITY AS m(val, dec, err, pos)
				                OFFSET 0) e
				        OFFSET 0) u;
			EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
				env_clean_txt := pg_catalog.array_fill(NULL::text, ARRAY[n]);
			END;
		END IF;
		FOR k IN 1 .. n LOOP
			val := kafka_values[pg_catalog.array_lower(kafka_values, 1) + k - 1];
			env_type := message_types[pg_catalog.array_lower(message_types, 1) + k - 1];
			env_ct := content_types[pg_catalog.array_lower(content_types, 1) + k - 1];
			rj := NULL;
			IF val IS NOT NULL AND with_frame THEN
				-- frame.c's RoFrameOpen: the event is what the feeder decoded,
				-- else the JSON after the 5-byte frame; a decode error rejects
				fr_decoded := decoded_values[pg_catalog.array_lower(decoded_values, 1) + k - 1];
				fr_error := decode_errors[pg_catalog.array_lower(decode_errors, 1) + k - 1];
				pre_schema_id[k] := value_schema_ids[pg_catalog.array_lower(value_schema_ids, 1) + k - 1];
				IF fr_error IS NOT NULL THEN
					rj := ARRAY['22P03', fr_error, NULL];
				ELSIF fr_decoded IS NOT NULL THEN
					val := fr_decoded;
				ELSIF pg_catalog.octet_length(val) < 5 OR pg_catalog.get_byte(val, 0) <> 0 THEN
					rj := ARRAY['22P03',
					            'value is not framed by a Schema Registry serializer: ' ||
					            CASE WHEN pg_catalog.octet_length(val) < 5
					                 THEN 'shorter than the 5-byte frame (magic byte 0, 4-byte schema id)'
					                 ELSE 'its first byte is not the magic byte 0' END,
					            NULL];
				ELSE
					IF pre_schema_id[k] IS NULL THEN
						pre_schema_id[k] := ('x' || pg_catalog.encode(pg_catalog.substring(val, 2, 4), 'hex'))::bit(32)::integer;
					END IF;
					val := pg_catalog.substring(val, 6);
				END IF;
			END IF;
			IF val IS NOT NULL AND rj IS NULL THEN
				structured := envelope = 'cloudevents' AND env_ct IS NOT NULL
				              AND pg_catalog.encode(env_ct, 'escape') ~* '^[ \t]*application/cloudevents($|[+; \t])';
				IF NOT structured AND event_type IS NOT NULL AND env_type IS NULL THEN
					rj := ARRAY['22023',
					            pg_catalog.format('header %s is missing: the message''s type cannot be told (event_type %s)',
					                              (SELECT
--@include quote-bytes
					                                 FROM (SELECT pg_catalog.convert_to(env_type_header, 'UTF8')) AS qb(b)),
					                              (SELECT
--@include quote-bytes
					                                 FROM (SELECT pg_catalog.convert_to(event_type, 'UTF8')) AS qb(b))),
					            NULL];
				ELSIF NOT structured AND event_type IS NOT NULL
				      AND env_type <> pg_catalog.convert_to(event_type, 'UTF8') THEN
					pre_outcome[k] := 'skipped';
				ELSIF envelope = 'plain' OR (envelope = 'cloudevents' AND NOT structured) THEN
					ev_values[k] := val;
				ELSE
					IF env_clean_txt[k] IS NOT NULL THEN
						txt := env_clean_txt[k];
					ELSE
--@include event-raw
						IF rj IS NOT NULL AND jsonb_refused THEN
							rj := NULL;
						END IF;
					END IF;
					IF rj IS NULL THEN
--@include envelope-open
					END IF;
					IF rj IS NULL AND event_type IS NOT NULL
					   AND ce_type <> pg_catalog.convert_to(event_type, 'UTF8') THEN
						env_type := ce_type;
						pre_outcome[k] := 'skipped';
					ELSIF rj IS NULL THEN
						ev_values[k] := ev;
					END IF;
				END IF;
			ELSIF val IS NULL THEN
				pre_outcome[k] := 'skipped';
			END IF;
			IF pre_outcome[k] = 'skipped' AND event_type IS NOT NULL AND env_type IS NOT NULL
			   AND env_type <> pg_catalog.convert_to(event_type, 'UTF8') THEN
				-- outbox.c's RoOutboxOtherType
				rj := ARRAY[NULL,
				            pg_catalog.format('event type %s is not selected (event_type %s)',
				                              (SELECT
--@include quote-bytes
				                                 FROM (SELECT env_type) AS qb(b)),
				                              (SELECT
--@include quote-bytes
				                                 FROM (SELECT pg_catalog.convert_to(event_type, 'UTF8')) AS qb(b))),
				            NULL];
				pre_message[k] :=
--@include reject-text
				;
			ELSIF rj IS NOT NULL THEN
				pre_outcome[k] := 'rejected';
				pre_sqlstate[k] := rj[1];
				pre_message[k] :=
--@include reject-text
				;
			END IF;
		END LOOP;
	END IF;
	-- the other forms' events are the values themselves, read from
	-- kafka_values where ev_values is NULL (a copy of the array costs more
	-- than its reading)

	-- the normal path, batch.c's BatchParseAndInsertAll: the checks that
	-- cannot throw, the parse, the field rules, the INSERT of every valid
	-- event in order_id order and each element's outcome, in one statement
	-- and one subtransaction; should it throw, the steps below take the
	-- batch again, one at a time.  Either way each element ends with its
	-- outcome (NULL: a valid event not inserted, told below), sqlstate,
	-- reason, order_id and, when valid, externalReference.
	fast_done := false;
	IF n > 0 THEN
		BEGIN
			WITH f AS (
				SELECT v.*, v.rj IS NULL AND v.pending AS valid,
				       CASE WHEN v.rj IS NULL AND v.pending THEN (v.payload ->> 'orderId')::uuid END AS id,
				       CASE WHEN v.rj IS NULL AND v.pending THEN v.payload ->> 'externalReference' END AS ref
				  FROM (SELECT p.pos, p.o, p.pending, p.payload,
				               CASE WHEN p.deep THEN ARRAY['54001', 'event is nested more than 512 levels deep', NULL]
				                    WHEN p.pending AND
--@include event-fields-usual
				                    THEN NULL
				                    WHEN p.pending THEN
--@include event-fields
				                    ELSE p.rj0
				               END AS rj
				          FROM (SELECT t.pos, t.o, t.rj0, t.pending AND NOT t.deep AS pending, t.deep,
				                       CASE WHEN t.pending AND NOT t.deep THEN t.txt::pg_catalog.jsonb END AS payload
				                  FROM (SELECT u.pos, u.o, u.rj0, u.pending, u.txt,
				                               u.pending AND
--@include nesting
				                               AS deep
				                          FROM (SELECT r.pos, r.o, r.rj0, r.o IS NULL AS pending,
				                                       CASE WHEN r.o IS NULL THEN pg_catalog.convert_from(r.val, 'UTF8') END AS txt
				                                  FROM (SELECT c.pos, c.val, c.rj0,
				                                               coalesce(c.pre, CASE WHEN c.rj0 IS NOT NULL THEN 'rejected'
				                                                                    WHEN c.val IS NULL THEN 'skipped' END) AS o
				                                          FROM (SELECT m.pos, m.val, m.pre,
--@include batch-precheck
				                                                       AS rj0
				                                                  -- set-returning functions in a select list run in
				                                                  -- lockstep and are not first copied into a
				                                                  -- tuplestore, as they are in FROM
				                                                  FROM (SELECT pg_catalog.generate_series(1, n) AS pos,
				                                                               pg_catalog.unnest(coalesce(ev_values, kafka_values)) AS val,
				                                                               pg_catalog.unnest(pre_outcome) AS pre,
				                                                               pg_catalog.unnest(pre_sqlstate) AS pre_s,
				                                                               pg_catalog.unnest(pre_message) AS pre_m) m
				                                                OFFSET 0) c) r
				                                OFFSET 0) u
				                        OFFSET 0) t
				                OFFSET 0) p,
				               LATERAL (SELECT p.payload) AS ev(payload)
				        OFFSET 0) v),
			ins AS (
				INSERT INTO received_orders.received_orders (order_id, external_reference, payload, value_schema_id)
				SELECT f.id, f.ref, f.payload, pre_schema_id[f.pos]
				  FROM f WHERE f.valid
				 ORDER BY f.id, f.pos
				ON CONFLICT (order_id) DO NOTHING
				RETURNING received_orders.order_id),
			-- the element inserted of each order_id inserted: within one
			-- statement the first of equal ids is the one inserted
			ins_pos AS (
				SELECT pg_catalog.min(f.pos) AS pos
				  FROM f JOIN ins i ON i.order_id = f.id
				 WHERE f.valid
				 GROUP BY f.id)
			-- each element's outcome: f comes out of its scan in position
			-- order, and the join by a hash keeps the order of its outer side;
			-- no sort of the rows and no ORDER BY in each aggregate (a sort
			-- each).  The positions come along: should they ever come out of
			-- order, the batch is taken the slow way (22000 below).
			SELECT pg_catalog.array_agg(s.o), pg_catalog.array_agg(s.code), pg_catalog.array_agg(s.msg),
			       pg_catalog.array_agg(s.id), pg_catalog.array_agg(s.pos),
			       coalesce(pg_catalog.array_agg(s.pos) FILTER (WHERE s.pending), '{}'),
			       coalesce(pg_catalog.array_agg(s.id) FILTER (WHERE s.pending), '{}'),
			       coalesce(pg_catalog.array_agg(s.ref) FILTER (WHERE s.pending), '{}')
			  INTO st_outcome, st_sqlstate, st_message, st_order_id, st_pos, pend_pos, pend_id, pend_ref
			  FROM (SELECT x.pos, x.id, x.ref, x.valid AND ip.pos IS NULL AS pending,
			               coalesce(x.o, CASE WHEN x.rj IS NOT NULL THEN 'rejected'
			                                  WHEN ip.pos IS NOT NULL THEN 'inserted' END) AS o,
			               x.rj[1] AS code,
			               CASE WHEN x.rj IS NOT NULL THEN
			                    (SELECT
--@include reject-text
			                       FROM (SELECT x.rj) AS r(rj))
			               END AS msg
			          FROM f x
			          LEFT JOIN ins_pos ip ON ip.pos = x.pos) s;
			IF st_pos IS DISTINCT FROM ARRAY(SELECT pg_catalog.generate_series(1, n)) THEN
				RAISE EXCEPTION 'the outcomes of a batch came out of position order'
					USING ERRCODE = 'data_exception';
			END IF;
			fast_done := true;
		EXCEPTION WHEN data_exception OR integrity_constraint_violation OR program_limit_exceeded THEN
			fast_done := false;
		END;
	END IF;
	IF NOT fast_done THEN
		-- the checks that cannot throw: null (with a group: skipped), size
		SELECT coalesce(pg_catalog.array_agg(r.rj[1] ORDER BY r.pos), '{}'),
		       coalesce(pg_catalog.array_agg(
--@include reject-text
		                ORDER BY r.pos), '{}'),
		       coalesce(pg_catalog.array_agg(coalesce(r.pre, CASE WHEN r.rj IS NOT NULL THEN 'rejected'
		                                                          WHEN r.val_null THEN 'skipped' END) ORDER BY r.pos), '{}')
		  INTO st_sqlstate, st_message, st_outcome
		  FROM (SELECT m.pos, m.val IS NULL AS val_null, m.pre,
--@include batch-precheck
		               AS rj
		          FROM unnest(coalesce(ev_values, kafka_values), pre_outcome, pre_sqlstate, pre_message)
		               WITH ORDINALITY AS m(val, pre, pre_s, pre_m, pos)) r;
		st_payload := pg_catalog.array_fill(NULL::jsonb, ARRAY[n]);

		-- the parse: the whole batch in one statement; a range that throws is
		-- halved, an element alone is read by event-raw.sql
		IF n > 0 THEN
			todo_lo := ARRAY[1];
			todo_hi := ARRAY[n];
		ELSE
			todo_lo := '{}';
			todo_hi := '{}';
		END IF;
		WHILE pg_catalog.cardinality(todo_lo) > 0 LOOP
			lo := todo_lo[pg_catalog.cardinality(todo_lo)];
			hi := todo_hi[pg_catalog.cardinality(todo_hi)];
			todo_lo := todo_lo[1 : pg_catalog.cardinality(todo_lo) - 1];
			todo_hi := todo_hi[1 : pg_catalog.cardinality(todo_hi) - 1];
			BEGIN
				SELECT pg_catalog.array_agg(CASE WHEN t.pending AND NOT t.deep THEN t.txt::pg_catalog.jsonb END ORDER BY t.pos),
				       pg_catalog.array_agg(t.pending AND t.deep ORDER BY t.pos)
				  INTO part_payload, part_deep
				  FROM (SELECT u.pos, u.pending, u.txt,
				               u.pending AND
--@include nesting
				               AS deep
				          FROM (SELECT m.pos, m.o IS NULL AS pending,
				                       CASE WHEN m.o IS NULL THEN pg_catalog.convert_from(m.val, 'UTF8') END AS txt
				                  FROM unnest(coalesce(ev_values, kafka_values), st_outcome) WITH ORDINALITY AS m(val, o, pos)
				                 WHERE m.pos BETWEEN lo AND hi
				                OFFSET 0) u
				        OFFSET 0) t;
				IF lo = 1 AND hi = n THEN
					st_payload := part_payload;
				ELSE
					st_payload[lo : hi] := part_payload;
				END IF;
				IF true = ANY (part_deep) THEN
					FOR k IN 1 .. hi - lo + 1 LOOP
						IF part_deep[k] THEN
							slow := slow || (lo + k - 1);
						END IF;
					END LOOP;
				END IF;
			EXCEPTION WHEN data_exception OR program_limit_exceeded THEN
				IF lo = hi THEN
					slow := slow || lo;
				ELSE
					mid := lo + (hi - lo + 1) / 2;
					todo_lo := todo_lo || ARRAY[mid, lo];
					todo_hi := todo_hi || ARRAY[hi, mid - 1];
				END IF;
			END;
		END LOOP;
		FOREACH p IN ARRAY slow LOOP
			IF ev_values IS NOT NULL THEN
				val := ev_values[pg_catalog.array_lower(ev_values, 1) + p - 1];
			ELSE
				val := kafka_values[pg_catalog.array_lower(kafka_values, 1) + p - 1];
			END IF;
--@include event-raw
			IF rj IS NOT NULL THEN
				st_outcome[p] := 'rejected';
				st_sqlstate[p] := rj[1];
				st_message[p] :=
--@include reject-text
				;
			ELSE
				st_payload[p] := parsed;
			END IF;
		END LOOP;

		-- the field rules, and the valid events sorted by order_id, position,
		-- in one statement
		SELECT pg_catalog.array_agg(coalesce(f.st_o, CASE WHEN f.rj IS NOT NULL THEN 'rejected' END) ORDER BY f.pos),
		       pg_catalog.array_agg(coalesce(f.st_s, f.rj[1]) ORDER BY f.pos),
		       pg_catalog.array_agg(coalesce(f.st_m,
		                                     CASE WHEN f.rj IS NOT NULL THEN
		                                          (SELECT
--@include reject-text
		                                             FROM (SELECT f.rj) AS x(rj))
		                                     END)
		                            ORDER BY f.pos),
		       coalesce(pg_catalog.array_agg(f.pos ORDER BY f.id, f.pos) FILTER (WHERE f.valid), '{}'),
		       coalesce(pg_catalog.array_agg(f.id ORDER BY f.id, f.pos) FILTER (WHERE f.valid), '{}'),
		       coalesce(pg_catalog.array_agg(f.payload ->> 'externalReference' ORDER BY f.id, f.pos) FILTER (WHERE f.valid), '{}'),
		       coalesce(pg_catalog.array_agg(f.payload ORDER BY f.id, f.pos) FILTER (WHERE f.valid), '{}')
		  INTO st_outcome, st_sqlstate, st_message, cand_pos, cand_id, cand_ref, cand_payload
		  FROM (SELECT v.*, v.st_o IS NULL AND v.rj IS NULL AS valid,
		               CASE WHEN v.st_o IS NULL AND v.rj IS NULL THEN (v.payload ->> 'orderId')::uuid END AS id
		          FROM (SELECT s.pos, s.st_o, s.st_s, s.st_m, s.payload,
		                       CASE WHEN s.st_o IS NULL THEN
--@include event-fields
		                       END AS rj
		                  FROM unnest(st_outcome, st_sqlstate, st_message, st_payload)
		                       WITH ORDINALITY AS s(st_o, st_s, st_m, payload, pos),
		                       LATERAL (SELECT s.payload) AS ev(payload)
		                OFFSET 0) v
		        OFFSET 0) f;
		ncand := pg_catalog.cardinality(cand_pos);
		cand_inserted := pg_catalog.array_fill(false, ARRAY[ncand]);
		cand_sqlstate := pg_catalog.array_fill(NULL::text, ARRAY[ncand]);
		cand_message := pg_catalog.array_fill(NULL::text, ARRAY[ncand]);
		cand_outcome := pg_catalog.array_fill(NULL::text, ARRAY[ncand]);

		-- the insert: all valid events in one statement; a range that throws
		-- is halved (first half first), an element alone is rejected with the
		-- error
		IF ncand > 0 THEN
			todo_lo := ARRAY[1];
			todo_hi := ARRAY[ncand];
		END IF;
		WHILE pg_catalog.cardinality(todo_lo) > 0 LOOP
			lo := todo_lo[pg_catalog.cardinality(todo_lo)];
			hi := todo_hi[pg_catalog.cardinality(todo_hi)];
			todo_lo := todo_lo[1 : pg_catalog.cardinality(todo_lo) - 1];
			todo_hi := todo_hi[1 : pg_catalog.cardinality(todo_hi) - 1];
			BEGIN
				WITH ins AS (
					INSERT INTO received_orders.received_orders (order_id, external_reference, payload, value_schema_id)
					SELECT c.id, c.ref, c.payload, pre_schema_id[c.pos]
					  FROM unnest(cand_id[lo : hi], cand_ref[lo : hi], cand_payload[lo : hi], cand_pos[lo : hi])
					       WITH ORDINALITY AS c(id, ref, payload, pos, k)
					 ORDER BY c.k
					ON CONFLICT (order_id) DO NOTHING
					RETURNING received_orders.order_id)
				-- within one statement the first of equal ids is the one inserted
				SELECT pg_catalog.array_agg(i.order_id IS NOT NULL AND c.first ORDER BY c.k)
				  INTO part_inserted
				  FROM (SELECT u.id, u.k, pg_catalog.lag(u.id) OVER (ORDER BY u.k) IS DISTINCT FROM u.id AS first
				          FROM pg_catalog.unnest(cand_id[lo : hi]) WITH ORDINALITY AS u(id, k)) c
				  LEFT JOIN ins i ON i.order_id = c.id;
				cand_inserted[lo : hi] := part_inserted;
			EXCEPTION WHEN data_exception OR integrity_constraint_violation OR program_limit_exceeded THEN
				IF SQLSTATE LIKE '54%' AND ncand <> 1 THEN
					RAISE;
				END IF;
				IF lo = hi THEN
					GET STACKED DIAGNOSTICS error_detail = PG_EXCEPTION_DETAIL;
					rj := ARRAY[SQLSTATE, SQLERRM, NULLIF(error_detail, '')];
					cand_outcome[lo] := 'rejected';
					cand_sqlstate[lo] := rj[1];
					cand_message[lo] :=
--@include reject-text
					;
				ELSE
					mid := lo + (hi - lo + 1) / 2;
					todo_lo := todo_lo || ARRAY[mid, lo];
					todo_hi := todo_hi || ARRAY[hi, mid - 1];
				END IF;
			END;
		END LOOP;

		-- each element's outcome, as the fast statement gives it
		SELECT pg_catalog.array_agg(coalesce(x.st_o, CASE WHEN x.inserted THEN 'inserted' ELSE x.o END) ORDER BY x.pos),
		       pg_catalog.array_agg(coalesce(x.st_s, x.code) ORDER BY x.pos),
		       pg_catalog.array_agg(coalesce(x.st_m, x.msg) ORDER BY x.pos),
		       pg_catalog.array_agg(x.id ORDER BY x.pos),
		       coalesce(pg_catalog.array_agg(x.pos ORDER BY x.pos) FILTER (WHERE x.pending), '{}'),
		       coalesce(pg_catalog.array_agg(x.id ORDER BY x.pos) FILTER (WHERE x.pending), '{}'),
		       coalesce(pg_catalog.array_agg(x.ref ORDER BY x.pos) FILTER (WHERE x.pending), '{}')
		  INTO st_outcome, st_sqlstate, st_message, st_order_id, pend_pos, pend_id, pend_ref
		  FROM (SELECT s.pos, s.st_o, s.st_s, s.st_m, c.id, c.ref, c.inserted, c.o, c.code, c.msg,
		               s.st_o IS NULL AND NOT c.inserted AND c.o IS NULL AS pending
		          FROM unnest(st_outcome, st_sqlstate, st_message) WITH ORDINALITY AS s(st_o, st_s, st_m, pos)
		          LEFT JOIN unnest(cand_pos, cand_id, cand_ref, cand_inserted, cand_outcome, cand_sqlstate, cand_message)
		               AS c(pos, id, ref, inserted, o, code, msg) ON c.pos = s.pos) x;
	END IF;

	-- outcome.c's RoOutcomeResolveNotInserted: the stored references of
	-- the valid events not inserted, in order_id order, in one statement
	-- (a new snapshot: it sees the row of a concurrent batch that ON
	-- CONFLICT waited for); those still without an outcome are duplicates.
	-- Planned on every call (EXECUTE), as store.c's lookup_many_plan: the
	-- function's plans are generic and kept (plan_cache_mode), and one
	-- made while received_orders was nearly empty would scan the whole
	-- table, comparing every row with every id, however large it grew
	IF pg_catalog.cardinality(pend_pos) > 0 THEN
	FOR conflict IN EXECUTE
		$lookup$SELECT s.pos, s.id, s.ref, r.external_reference AS stored, r.order_id IS NULL AS missing
		  FROM unnest($1, $2, $3) AS s(pos, id, ref)
		  -- one index scan for them all (= ANY of the ids; not a join the
		  -- planner may turn into a scan of the whole table)
		  LEFT JOIN (SELECT t.order_id, t.external_reference
		               FROM received_orders.received_orders t
		              WHERE t.order_id OPERATOR(pg_catalog.=) ANY ($2)
		             OFFSET 0) r ON r.order_id OPERATOR(pg_catalog.=) s.id
		 WHERE r.order_id IS NULL OR r.external_reference OPERATOR(pg_catalog.<>) s.ref COLLATE "C"
		 ORDER BY s.id, s.pos$lookup$
		USING pend_pos, pend_id, pend_ref
	LOOP
		IF conflict.missing THEN
			not_stored := conflict.id;
--@include not-stored
		END IF;
		st_outcome[conflict.pos] := 'conflict';
		st_sqlstate[conflict.pos] := '23505';
		st_message[conflict.pos] := pg_catalog.format('order %s is already stored with externalReference "%s"; this event has "%s"',
		                                              conflict.id, conflict.stored, conflict.ref);
		RAISE WARNING 'order % is already stored with another externalReference', conflict.id
			USING ERRCODE = 'unique_violation',
			      DETAIL = pg_catalog.format('The stored externalReference is "%s"; this event has "%s".', conflict.stored, conflict.ref),
			      HINT = 'The event was quarantined; the stored row was left unchanged.';
	END LOOP;
	END IF;

	-- quarantine.c: the rejected and conflicting messages as received,
	-- once per coordinates and message (store.c's statement)
	IF 'rejected' = ANY (st_outcome) OR 'conflict' = ANY (st_outcome) THEN
	WITH hdr AS (
		SELECT g.pos, g.k, g.name, g.b, g.utf8,
		       CASE WHEN NOT g.utf8 OR pg_catalog.length(g.b) <= 4096 THEN LEAST(pg_catalog.length(g.b), 4096)
		            WHEN pg_catalog.get_byte(g.b, 4096) & 192 <> 128 THEN 4096
		            WHEN pg_catalog.get_byte(g.b, 4095) & 192 <> 128 THEN 4095
		            WHEN pg_catalog.get_byte(g.b, 4094) & 192 <> 128 THEN 4094
		            ELSE 4093 END AS kept
		  FROM (SELECT t.pos, v.k, v.name, v.b,
		               pg_catalog.encode(v.b, 'hex') ~ ('^' ||
--@include utf8-hex
		               || '*$') AS utf8
		          FROM unnest(st_outcome, message_types, content_types) WITH ORDINALITY AS t(o, mt, ct, pos),
		               LATERAL (VALUES (1, env_type_header, t.mt), (2, 'content-type', t.ct)) AS v(k, name, b)
		         WHERE with_envelope AND t.o IN ('rejected', 'conflict')
		           AND v.name IS NOT NULL AND v.b IS NOT NULL) g)
	INSERT INTO received_orders.received_orders_quarantine
		(kafka_topic, kafka_partition, kafka_offset, kafka_key, raw_value,
		 order_id, outcome, sqlstate, reason, kafka_key_bytes, raw_value_bytes,
		 message_digest, envelope, kafka_headers, value_schema_id, value_schema_guid)
	SELECT m.topic, m.part, m.off,
	       CASE WHEN pg_catalog.length(m.key) > max_event_bytes THEN pg_catalog.substring(m.key, 1, 4096) ELSE m.key END,
	       CASE WHEN pg_catalog.length(m.val) > max_event_bytes THEN pg_catalog.substring(m.val, 1, 4096) ELSE m.val END,
	       m.id, m.o::received_orders.materialize_outcome, m.code, m.msg,
	       CASE WHEN pg_catalog.length(m.key) > max_event_bytes THEN pg_catalog.length(m.key) END,
	       CASE WHEN pg_catalog.length(m.val) > max_event_bytes THEN pg_catalog.length(m.val) END,
	       pg_catalog.sha256(
	           CASE WHEN m.key IS NULL THEN '\x00'::bytea
	                ELSE '\x01'::bytea || pg_catalog.int4send(pg_catalog.length(m.key)) || m.key END
	           || CASE WHEN m.val IS NULL THEN '\x00'::bytea
	                   ELSE '\x01'::bytea || m.val END),
	       CASE WHEN with_envelope THEN envelope END, hj.headers, m.schema_id, m.guid
	  FROM unnest(kafka_values, kafka_topics, kafka_partitions, kafka_offsets, kafka_keys,
	              st_outcome, st_sqlstate, st_message, st_order_id, message_types, content_types,
	              pre_schema_id, value_schema_guids)
	       WITH ORDINALITY AS m(val, topic, part, off, key, o, code, msg, id, mt, ct, schema_id, guid, pos),
	       -- quarantine.c's QuarantineHeadersJson: the type header and the
	       -- content-type as text (hex when not UTF-8), their first 4096
	       -- bytes (whole characters), with their length when longer
	       LATERAL (SELECT pg_catalog.jsonb_object_agg(x.name, x.value ORDER BY x.k) AS headers
	                  FROM (SELECT h.k * 2 AS k, h.name,
	                               pg_catalog.to_jsonb(CASE WHEN h.utf8 THEN pg_catalog.convert_from(pg_catalog.substring(h.b, 1, h.kept), 'UTF8')
	                                                        ELSE '\x' || pg_catalog.encode(pg_catalog.substring(h.b, 1, h.kept), 'hex') END) AS value
	                          FROM hdr h WHERE h.pos = m.pos
	                        UNION ALL
	                        SELECT h.k * 2 + 1, h.name || ':bytes', pg_catalog.to_jsonb(pg_catalog.length(h.b))
	                          FROM hdr h
	                         WHERE h.pos = m.pos AND h.kept < pg_catalog.length(h.b)) x) AS hj
	 WHERE m.o IN ('rejected', 'conflict')
	 ORDER BY m.pos
	ON CONFLICT ON CONSTRAINT received_orders_quarantine_message_key DO NOTHING;
	END IF;

	IF with_group AND n > 0 THEN
		-- positions.c's RoPositionsRecord: the next offset of each
		-- partition, in topic (bytes) and partition order, never backwards.
		-- Each partition's last offset by a hash aggregate: a sort of the
		-- batch on its topics would compare text in the database's
		-- collation, thousands of instructions a comparison
		SELECT pg_catalog.array_agg(l.topic ORDER BY pg_catalog.convert_to(l.topic, 'UTF8'), l.part),
		       pg_catalog.array_agg(l.part ORDER BY pg_catalog.convert_to(l.topic, 'UTF8'), l.part),
		       pg_catalog.array_agg(l.off ORDER BY pg_catalog.convert_to(l.topic, 'UTF8'), l.part),
		       pg_catalog.bool_or(l.off = 9223372036854775807)
		  INTO part_topics, part_numbers, part_offsets, no_next_offset
		  FROM (SELECT m.topic, m.part, pg_catalog.max(m.off) AS off
		          FROM (SELECT pg_catalog.unnest(kafka_topics) AS topic, pg_catalog.unnest(kafka_partitions) AS part,
		                       pg_catalog.unnest(kafka_offsets) AS off) m
		         GROUP BY m.topic, m.part) l;
		IF no_next_offset THEN
			SELECT m.pos, m.off INTO bad_topic
			  FROM (SELECT pg_catalog.generate_series(1, n) AS pos, pg_catalog.unnest(kafka_topics) AS topic,
			               pg_catalog.unnest(kafka_partitions) AS part, pg_catalog.unnest(kafka_offsets) AS off) m
			 WHERE m.off = 9223372036854775807
			 ORDER BY pg_catalog.convert_to(m.topic, 'UTF8'), m.part, m.pos LIMIT 1;
			RAISE EXCEPTION 'element % has Kafka offset %, which has no next offset', bad_topic.pos, bad_topic.off
				USING ERRCODE = 'numeric_value_out_of_range';
		END IF;
		INSERT INTO received_orders.received_orders_positions AS p
			(consumer_group, kafka_topic, kafka_partition, next_offset)
		-- in the arrays' order, the set-returning functions in lockstep
		SELECT consumer_group, l.topic, l.part, l.off + 1
		  FROM (SELECT pg_catalog.unnest(part_topics) AS topic, pg_catalog.unnest(part_numbers) AS part,
		               pg_catalog.unnest(part_offsets) AS off) l
		ON CONFLICT ON CONSTRAINT received_orders_positions_pkey
		DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = pg_catalog.now()
		 WHERE p.next_offset < EXCLUDED.next_offset;
	END IF;

	-- in position order: the select list's set-returning functions run in
	-- lockstep, row k of each array together
	RETURN QUERY
	SELECT s.pos, s.id, coalesce(s.o, 'duplicate')::received_orders.materialize_outcome, s.code, s.msg
	  FROM (SELECT pg_catalog.generate_series(1, n) AS pos, pg_catalog.unnest(st_outcome) AS o,
	               pg_catalog.unnest(st_sqlstate) AS code, pg_catalog.unnest(st_message) AS msg,
	               pg_catalog.unnest(st_order_id) AS id) s;
END;
