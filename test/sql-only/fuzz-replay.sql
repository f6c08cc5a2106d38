-- test/sql-only/fuzz-replay.sql — replay_quarantined of every quarantine
-- id the fuzz run can have made (and a few beyond), after test/sql-only/01
-- repaired some rows: the outcome or the error of each, in
-- public.fuzz_replay_result.  Run after fuzz-run.sql, as its role.
CREATE TABLE public.fuzz_replay_result (quarantine_id bigint, outcome text, sqlstate text, message text, detail text, hint text);

DO $replay$
DECLARE
	last_id bigint := (SELECT count(*) FROM public.fuzz_batch_result WHERE outcome IN ('rejected', 'conflict')) + 3;
	o text;
	e_state text;
	e_message text;
	e_detail text;
	e_hint text;
BEGIN
	FOR q IN 0 .. last_id LOOP
		BEGIN
			o := received_orders.replay_quarantined(q);
			INSERT INTO public.fuzz_replay_result VALUES (q, o, NULL, NULL, NULL, NULL);
		EXCEPTION WHEN OTHERS THEN
			GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT,
			                        e_detail = PG_EXCEPTION_DETAIL, e_hint = PG_EXCEPTION_HINT;
			INSERT INTO public.fuzz_replay_result VALUES (q, NULL, e_state, e_message, e_detail, e_hint);
		END;
	END LOOP;
	BEGIN
		PERFORM received_orders.replay_quarantined(NULL);
	EXCEPTION WHEN OTHERS THEN
		GET STACKED DIAGNOSTICS e_state = RETURNED_SQLSTATE, e_message = MESSAGE_TEXT;
		INSERT INTO public.fuzz_replay_result VALUES (NULL, NULL, e_state, e_message, NULL, NULL);
	END;
END
$replay$;
