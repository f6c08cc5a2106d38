-- test/sql-only/fuzz-run.sql — feed public.fuzz_input to the flavour
-- installed in this database: each batch through materialize_orders (its
-- result rows, or the call's error; odd batches through the plain form,
-- even ones through the form of the consumer group "fuzz", which records
-- positions and claims the group for the calling role), then each value
-- that is jsonb through
-- materialize_order (its outcome or error), NULL and an event over 1 MB
-- too.  Results in public.fuzz_batch_result, fuzz_call_error and
-- fuzz_single_result; warnings on stderr (psql).
CREATE TABLE public.fuzz_batch_result (batch integer, pos integer, order_id uuid, outcome text, sqlstate text, message text);
CREATE TABLE public.fuzz_call_error (batch integer, sqlstate text, message text, detail text, hint text);
CREATE TABLE public.fuzz_single_result (batch integer, pos integer, outcome text, sqlstate text, message text, detail text, hint text);

DO $run$
DECLARE
	b integer;
	r record;
	ev jsonb;
	o text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	FOR b IN SELECT DISTINCT f.batch FROM public.fuzz_input f ORDER BY 1 LOOP
		BEGIN
			IF b % 2 = 0 THEN
				INSERT INTO public.fuzz_batch_result
				SELECT b, m.position, m.order_id, m.outcome::text, m.sqlstate, m.message
				  FROM received_orders.materialize_orders('fuzz',
				         (SELECT array_agg(f.val ORDER BY f.pos) FROM public.fuzz_input f WHERE f.batch = b),
				         (SELECT array_agg(f.topic ORDER BY f.pos) FROM public.fuzz_input f WHERE f.batch = b),
				         (SELECT array_agg(f.part ORDER BY f.pos) FROM public.fuzz_input f WHERE f.batch = b),
				         (SELECT array_agg(f.off ORDER BY f.pos) FROM public.fuzz_input f WHERE f.batch = b),
				         (SELECT array_agg(f.key ORDER BY f.pos) FROM public.fuzz_input f WHERE f.batch = b)) m;
				CONTINUE;
			END IF;
			INSERT INTO public.fuzz_batch_result
			SELECT b, m.position, m.order_id, m.outcome::text, m.sqlstate, m.message
			  FROM received_orders.materialize_orders(
			         (SELECT array_agg(f.val ORDER BY f.pos) FROM public.fuzz_input f WHERE f.batch = b),
			         (SELECT array_agg(f.topic ORDER BY f.pos) FROM public.fuzz_input f WHERE f.batch = b),
			         (SELECT array_agg(f.part ORDER BY f.pos) FROM public.fuzz_input f WHERE f.batch = b),
			         (SELECT array_agg(f.off ORDER BY f.pos) FROM public.fuzz_input f WHERE f.batch = b),
			         (SELECT array_agg(f.key ORDER BY f.pos) FROM public.fuzz_input f WHERE f.batch = b)) m;
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
			                        e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			INSERT INTO public.fuzz_call_error VALUES (b, e_state, e_message, e_detail, e_hint);
		END;
	END LOOP;

	FOR r IN SELECT f.batch, f.pos, f.val FROM public.fuzz_input f ORDER BY f.batch, f.pos LOOP
		BEGIN
			ev := pg_catalog.convert_from(r.val, 'UTF8')::jsonb;
		EXCEPTION WHEN OTHERS THEN
			CONTINUE;
		END;
		BEGIN
			o := received_orders.materialize_order(ev);
			INSERT INTO public.fuzz_single_result VALUES (r.batch, r.pos, o, NULL, NULL, NULL, NULL);
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
			                        e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			INSERT INTO public.fuzz_single_result VALUES (r.batch, r.pos, NULL, e_state, e_message, e_detail, e_hint);
		END;
	END LOOP;

	-- the call's own errors: no event, an event over 1 MB, arrays that do
	-- not fit, a topic longer than Kafka's; the group's: no group, an
	-- empty or a long one, missing or bad coordinates, the last offset,
	-- another Kafka cluster's positions
	FOR b IN 1 .. 17 LOOP
		BEGIN
			CASE b
			WHEN 1 THEN PERFORM received_orders.materialize_order(NULL);
			WHEN 2 THEN PERFORM received_orders.materialize_order(pg_catalog.jsonb_build_object(
				'orderId', '00000000-0000-0000-0000-0000000000ff', 'externalReference', 'R',
				'pad', pg_catalog.repeat('y', 1048576)));
			WHEN 3 THEN PERFORM received_orders.materialize_orders(NULL);
			WHEN 4 THEN PERFORM received_orders.materialize_orders(ARRAY['\x7b7d']::bytea[], ARRAY['t', 'u']);
			WHEN 5 THEN PERFORM received_orders.materialize_orders(ARRAY[['\x7b7d']]::bytea[]);
			WHEN 6 THEN PERFORM received_orders.materialize_orders(ARRAY['\x7b7d']::bytea[], ARRAY[pg_catalog.repeat('t', 250)]);
			WHEN 7 THEN PERFORM received_orders.materialize_orders(NULL::text, ARRAY['\x7b7d']::bytea[], '{t}', '{0}', '{1}');
			WHEN 8 THEN PERFORM received_orders.materialize_orders('', ARRAY['\x7b7d']::bytea[], '{t}', '{0}', '{1}');
			WHEN 9 THEN PERFORM received_orders.materialize_orders(pg_catalog.repeat('g', 256), ARRAY['\x7b7d']::bytea[], '{t}', '{0}', '{1}');
			WHEN 10 THEN PERFORM received_orders.materialize_orders('fuzz', ARRAY['\x7b7d']::bytea[], '{t}', NULL, '{1}');
			WHEN 11 THEN PERFORM received_orders.materialize_orders('fuzz', ARRAY['\x7b7d', '\x7b7d']::bytea[], '{t,t}', '{0,NULL}', '{1,2}');
			WHEN 12 THEN PERFORM received_orders.materialize_orders('fuzz', ARRAY['\x7b7d', '\x7b7d']::bytea[], '{t,""}', '{0,0}', '{1,2}');
			WHEN 13 THEN PERFORM received_orders.materialize_orders('fuzz', ARRAY['\x7b7d', '\x7b7d']::bytea[], '{t,t}', '{0,-1}', '{1,2}');
			WHEN 14 THEN PERFORM received_orders.materialize_orders('fuzz', ARRAY['\x7b7d', '\x7b7d']::bytea[], '{t,u}', '{0,0}', '{1,9223372036854775807}');
			WHEN 15 THEN PERFORM received_orders.check_consumer_group('fuzz', 'cluster-A');
			WHEN 16 THEN PERFORM received_orders.check_consumer_group('fuzz', 'cluster-B');
			WHEN 17 THEN PERFORM received_orders.check_consumer_group('', NULL);
			END CASE;
			INSERT INTO public.fuzz_call_error VALUES (-b, NULL, 'no error', NULL, NULL);
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
			                        e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			INSERT INTO public.fuzz_call_error VALUES (-b, e_state, e_message, e_detail, e_hint);
		END;
	END LOOP;
END
$run$;
