-- test/fuzz/oracle.sql — the differential fuzzer's oracle: what PostgreSQL's
-- own input functions say about a Kafka value, with the field rules of
-- SPEC §3 written a second time in SQL (not in C, not sharing a line with
-- extension/event.c).
--
-- fuzz_oracle.verdict(value, max_event_bytes) returns "expected", the
-- SQLSTATE the batch function must reject the value with (NULL when it must
-- accept it), and the order_id it must then report:
--
--   size      octet_length > received_orders.max_event_bytes      54000
--   UTF-8     convert_from(value, 'UTF8') fails                   22P02
--   JSON      convert_from(...)::jsonb fails                      its SQLSTATE
--   nesting   deeper than 512 levels of arrays and objects        54001
--   object    jsonb_typeof <> 'object'                            22023
--   orderId   missing or not a string                             22023
--             not accepted by uuid's input function               22P02
--   externalReference  missing or not a string                    22023
--             only blanks (space, \t \n \v \f \r)                  22023
--             more than 255 characters                            22001
--
-- fuzz_oracle.candidates(value) is the weaker oracle of the envelope modes:
-- the orderIds an outbox envelope of this value may carry (the value itself,
-- its "payload", "data" and "data_base64" members, and JSON strings holding
-- an event).
CREATE SCHEMA fuzz_oracle;

-- the nesting depth of a JSON value (a scalar is 0, [] is 1)
CREATE FUNCTION fuzz_oracle.depth(j jsonb) RETURNS integer
LANGUAGE sql IMMUTABLE STRICT AS $$
	WITH RECURSIVE d(v, lvl) AS (
		SELECT j, 1
		WHERE jsonb_typeof(j) IN ('array', 'object')
		UNION ALL
		SELECT c.value, d.lvl + 1
		FROM d, LATERAL (
			SELECT value FROM jsonb_array_elements(
				CASE WHEN jsonb_typeof(d.v) = 'array' THEN d.v END)
			UNION ALL
			SELECT value FROM jsonb_each(
				CASE WHEN jsonb_typeof(d.v) = 'object' THEN d.v END)) c
		WHERE jsonb_typeof(c.value) IN ('array', 'object'))
	SELECT coalesce(max(lvl), 0) FROM d
$$;

CREATE FUNCTION fuzz_oracle.verdict(value bytea, max_event_bytes integer,
									OUT expected text, OUT order_id uuid)
LANGUAGE plpgsql AS $$
DECLARE
	t text;
	j jsonb;
	ref text;
	brackets integer;
BEGIN
	IF value IS NULL THEN
		expected := 'tombstone';
		RETURN;
	END IF;
	IF octet_length(value) > max_event_bytes THEN
		expected := '54000';
		RETURN;
	END IF;
	BEGIN
		t := convert_from(value, 'UTF8');
	EXCEPTION WHEN others THEN
		expected := '22P02';
		RETURN;
	END;
	BEGIN
		j := t::jsonb;
	EXCEPTION WHEN others THEN
		GET STACKED DIAGNOSTICS expected = RETURNED_SQLSTATE;
		RETURN;
	END;
	-- only a value with more than 512 brackets can be that deep
	brackets := length(t) - length(translate(t, '[{', ''));
	IF brackets > 512 AND fuzz_oracle.depth(j) > 512 THEN
		expected := '54001';
		RETURN;
	END IF;
	IF jsonb_typeof(j) <> 'object' THEN
		expected := '22023';
		RETURN;
	END IF;
	IF jsonb_typeof(j -> 'orderId') IS DISTINCT FROM 'string' THEN
		expected := '22023';
		RETURN;
	END IF;
	BEGIN
		order_id := (j ->> 'orderId')::uuid;
	EXCEPTION WHEN others THEN
		order_id := NULL;
		expected := '22P02';
		RETURN;
	END;
	IF jsonb_typeof(j -> 'externalReference') IS DISTINCT FROM 'string' THEN
		expected := '22023';
		RETURN;
	END IF;
	ref := j ->> 'externalReference';
	IF btrim(ref, ' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)) = '' THEN
		expected := '22023';
		RETURN;
	END IF;
	IF char_length(ref) > 255 THEN
		expected := '22001';
		RETURN;
	END IF;
	expected := NULL;
END
$$;

-- the orderId of a JSON value that is an event, or of a JSON string holding
-- one; NULL when there is none
CREATE FUNCTION fuzz_oracle.order_id_of(j jsonb) RETURNS uuid
LANGUAGE plpgsql AS $$
BEGIN
	IF jsonb_typeof(j) = 'string' THEN
		BEGIN
			j := (j #>> '{}')::jsonb;
		EXCEPTION WHEN others THEN
			RETURN NULL;
		END;
	END IF;
	IF jsonb_typeof(j) <> 'object' OR jsonb_typeof(j -> 'orderId') <> 'string' THEN
		RETURN NULL;
	END IF;
	RETURN (j ->> 'orderId')::uuid;
EXCEPTION WHEN others THEN
	RETURN NULL;
END
$$;

-- the orderIds an envelope of this value may hold (see the header)
CREATE FUNCTION fuzz_oracle.candidates(value bytea) RETURNS uuid[]
LANGUAGE plpgsql AS $$
DECLARE
	j jsonb;
	found uuid[] := '{}';
	part jsonb;
	id uuid;
BEGIN
	BEGIN
		j := convert_from(value, 'UTF8')::jsonb;
	EXCEPTION WHEN others THEN
		RETURN found;
	END;
	IF jsonb_typeof(j -> 'data_base64') = 'string' THEN
		BEGIN
			part := convert_from(decode(j ->> 'data_base64', 'base64'), 'UTF8')::jsonb;
		EXCEPTION WHEN others THEN
			part := NULL;
		END;
	END IF;
	FOREACH part IN ARRAY ARRAY[j, j -> 'payload', j -> 'data', part] LOOP
		id := fuzz_oracle.order_id_of(part);
		IF id IS NOT NULL THEN
			found := found || id;
		END IF;
	END LOOP;
	RETURN found;
END
$$;
