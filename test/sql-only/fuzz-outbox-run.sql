-- test/sql-only/fuzz-outbox-run.sql — feed public.fuzz_outbox_input to the
-- outbox form of materialize_orders (consumer group "fuzz") in this
-- database, each batch with its options (public.fuzz_outbox_options):
-- result rows in public.fuzz_batch_result as batch 1000 + N, a call's
-- error in fuzz_call_error; then public.fuzz_framed_input through the
-- Schema Registry form as batches 2000 + N; then the forms' own errors
-- (their options, the header and decoded arrays) as batches -101 and
-- below.  Run after fuzz-run.sql, as
-- its role; warnings on stderr (psql).
DO $run$
DECLARE
	o record;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
	v bytea[] := ARRAY['\x7b7d']::bytea[];
BEGIN
	FOR o IN SELECT * FROM public.fuzz_outbox_options ORDER BY batch LOOP
		BEGIN
			INSERT INTO public.fuzz_batch_result
			SELECT 1000 + o.batch, m.position, m.order_id, m.outcome::text, m.sqlstate, m.message
			  FROM received_orders.materialize_orders('fuzz',
			         (SELECT array_agg(f.val ORDER BY f.pos) FROM public.fuzz_outbox_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.topic ORDER BY f.pos) FROM public.fuzz_outbox_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.part ORDER BY f.pos) FROM public.fuzz_outbox_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.off ORDER BY f.pos) FROM public.fuzz_outbox_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.key ORDER BY f.pos) FROM public.fuzz_outbox_input f WHERE f.batch = o.batch),
			         o.envelope, o.event_type, o.type_header,
			         (SELECT array_agg(f.mtype ORDER BY f.pos) FROM public.fuzz_outbox_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.ctype ORDER BY f.pos) FROM public.fuzz_outbox_input f WHERE f.batch = o.batch)) m;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
			                        e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			INSERT INTO public.fuzz_call_error VALUES (1000 + o.batch, e_state, e_message, e_detail, e_hint);
		END;
	END LOOP;

	-- the Schema Registry form, batch 2000 + N
	FOR o IN SELECT * FROM public.fuzz_outbox_options ORDER BY batch LOOP
		BEGIN
			INSERT INTO public.fuzz_batch_result
			SELECT 2000 + o.batch, m.position, m.order_id, m.outcome::text, m.sqlstate, m.message
			  FROM received_orders.materialize_orders('fuzz',
			         (SELECT array_agg(f.val ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.topic ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.part ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.off ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.key ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch),
			         o.envelope, o.event_type, o.type_header,
			         (SELECT array_agg(f.mtype ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.ctype ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.decoded ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.schema_id ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.decode_error ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch),
			         (SELECT array_agg(f.guid ORDER BY f.pos) FROM public.fuzz_framed_input f WHERE f.batch = o.batch)) m;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
			                        e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			INSERT INTO public.fuzz_call_error VALUES (2000 + o.batch, e_state, e_message, e_detail, e_hint);
		END;
	END LOOP;

	FOR b IN 1 .. 18 LOOP
		BEGIN
			CASE b
			WHEN 1 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, NULL, NULL, NULL, NULL, NULL);
			WHEN 2 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'bogus', NULL, NULL, NULL, NULL);
			WHEN 3 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, pg_catalog.repeat('é', 70), NULL, NULL, NULL, NULL);
			WHEN 4 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'plain', '', 'h', NULL, NULL);
			WHEN 5 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'debezium', 'T', NULL, NULL, NULL);
			WHEN 6 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'debezium', 'T', '', NULL, NULL);
			WHEN 7 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'plain', NULL, pg_catalog.repeat('h', 256), NULL, NULL);
			WHEN 8 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'cloudevents', 'T', NULL, NULL, NULL);
			WHEN 9 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'plain', NULL, NULL, ARRAY['\x01', '\x02']::bytea[], NULL);
			WHEN 10 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'plain', NULL, NULL, NULL, ARRAY[['\x01']]::bytea[]);
			WHEN 11 THEN PERFORM received_orders.materialize_orders(NULL, v, '{t}', '{0}', '{1}', NULL, NULL, NULL, NULL, NULL, NULL);
			WHEN 12 THEN PERFORM received_orders.materialize_orders('fuzz', v, NULL, '{0}', '{1}', NULL, 'bogus', NULL, NULL, NULL, NULL);
			WHEN 13 THEN PERFORM received_orders.materialize_orders('fuzz', NULL, '{t}', '{0}', '{1}', NULL, 'plain', NULL, NULL, NULL, NULL);
			WHEN 14 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'plain', NULL, NULL, NULL, NULL, ARRAY['\x01', '\x02']::bytea[], NULL, NULL, NULL);
			WHEN 15 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'plain', NULL, NULL, NULL, NULL, NULL, ARRAY[[1]], NULL, NULL);
			WHEN 16 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'plain', NULL, NULL, NULL, NULL, NULL, NULL, '{}'::text[], NULL);
			WHEN 17 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, 'plain', NULL, NULL, NULL, NULL, NULL, NULL, NULL, ARRAY[NULL, NULL]::uuid[]);
			WHEN 18 THEN PERFORM received_orders.materialize_orders('fuzz', v, '{t}', '{0}', '{1}', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
			END CASE;
			INSERT INTO public.fuzz_call_error VALUES (-100 - b, NULL, 'no error', NULL, NULL);
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
			                        e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			INSERT INTO public.fuzz_call_error VALUES (-100 - b, e_state, e_message, e_detail, e_hint);
		END;
	END LOOP;
END
$run$;
