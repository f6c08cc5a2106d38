-- sql/sql-only/replay_quarantined.sql: the twin of replay.c's
-- replay_quarantined for a message kept as received, with or without an
-- envelope (the plain, group and outbox batch forms'): opened in its
-- envelope as the batch function opened it (envelope-open.sql; a
-- CloudEvents message by its content-type header, no type selected),
-- re-validated by the rules of event-raw.sql and event-fields.sql,
-- materialized (insert-one.sql), its quarantine row deleted and the replay
-- recorded.  It returns inserted or duplicate; a message still invalid
-- raises its validation error, one still conflicting raises
-- unique_violation, and then nothing changes.  A message of the Schema
-- Registry form with a schema id is opened in its frame first (the JSON
-- after it; the stored row records the id); its hint, and that of a
-- message whose schema a GUID named, says how to replay an Avro value.
DECLARE
	max_event_bytes CONSTANT integer := 1048576;
	quarantined record;
	hint text;
	-- event-raw.sql's
	val bytea;
	rj text[];
	parsed jsonb;
	txt text;
	hex text;
	valid_hex text;
	error_detail text;
	jsonb_refused boolean;
	-- envelope-open.sql's
	envelope text;
	--@include envelope-open-vars
	-- insert-one.sql's
	new_schema_id integer;
	new_id uuid;
	reference text;
	ev_payload jsonb;
	stored text;
	not_stored uuid;
	outcome_label text;
BEGIN
	IF replay_quarantined.id IS NULL THEN
		RAISE EXCEPTION 'quarantine id must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	SELECT r.raw_value, r.raw_value_bytes, r.envelope, r.value_schema_id, r.value_schema_guid,
	       r.kafka_headers ->> 'content-type' AS content_type
	  INTO quarantined
	  FROM received_orders.received_orders_quarantine r
	 WHERE r.id = replay_quarantined.id
	   FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'quarantined message % does not exist', replay_quarantined.id
			USING ERRCODE = 'no_data_found',
			      HINT = 'See received_orders.received_orders_quarantine for the ids.';
	END IF;
	IF quarantined.raw_value IS NULL THEN
		RAISE EXCEPTION 'quarantined message % has no value', replay_quarantined.id
			USING ERRCODE = 'null_value_not_allowed',
			      HINT = 'Set its raw_value to the repaired event, or delete the row.';
	END IF;
	IF quarantined.raw_value_bytes IS NOT NULL THEN
		RAISE EXCEPTION 'quarantined message % keeps only the first % of its % bytes',
			replay_quarantined.id, pg_catalog.octet_length(quarantined.raw_value), quarantined.raw_value_bytes
			USING ERRCODE = 'object_not_in_prerequisite_state',
			      DETAIL = 'A value larger than received_orders.max_event_bytes is quarantined as its prefix, its length and its digest.',
			      HINT = 'Re-read it from Kafka at its coordinates after a superuser raised received_orders.max_event_bytes, or set raw_value to the whole repaired event and raw_value_bytes to NULL, then replay it.';
	END IF;
	hint := pg_catalog.format('Repair raw_value of quarantined message %s and replay it again; nothing was changed.',
	                          replay_quarantined.id);
	val := quarantined.raw_value;
	new_schema_id := NULL;
	IF quarantined.value_schema_id IS NULL AND quarantined.value_schema_guid IS NOT NULL THEN
		hint := pg_catalog.format('Quarantined message %s is a Schema Registry value whose schema a __value_schema_id header named (schema GUID %s): a JSON Schema value replays as received; for an Avro value, set raw_value to the event''s JSON and value_schema_guid to NULL, then replay it; nothing was changed.',
		                          replay_quarantined.id, quarantined.value_schema_guid);
	ELSIF quarantined.value_schema_id IS NOT NULL THEN
		-- frame.c's RoFrameOpen of the bytes as received
		hint := pg_catalog.format('Quarantined message %s is a Schema Registry value (schema id %s): a JSON Schema value replays from its framed bytes; for an Avro value, set raw_value to the event''s JSON and value_schema_id to NULL, then replay it; nothing was changed.',
		                          replay_quarantined.id, quarantined.value_schema_id);
		IF pg_catalog.octet_length(val) < 5 OR pg_catalog.get_byte(val, 0) <> 0 THEN
			RAISE EXCEPTION 'value is not framed by a Schema Registry serializer: %',
				CASE WHEN pg_catalog.octet_length(val) < 5
				     THEN 'shorter than the 5-byte frame (magic byte 0, 4-byte schema id)'
				     ELSE 'its first byte is not the magic byte 0' END
				USING ERRCODE = 'invalid_binary_representation', HINT = hint;
		END IF;
		val := pg_catalog.substring(val, 6);
		new_schema_id := quarantined.value_schema_id;
	END IF;
	IF quarantined.envelope NOT IN ('plain', 'debezium', 'cloudevents') THEN
		RAISE EXCEPTION 'quarantined message % has an unknown envelope "%"', replay_quarantined.id, quarantined.envelope
			USING ERRCODE = 'invalid_parameter_value',
			      HINT = 'Set its envelope to ''plain'', ''debezium'' or ''cloudevents''.';
	END IF;
--@include event-raw
	envelope := quarantined.envelope;
	IF envelope = 'debezium'
	   OR (envelope = 'cloudevents' AND quarantined.content_type IS NOT NULL
	       AND pg_catalog.encode(pg_catalog.convert_to(quarantined.content_type, 'UTF8'), 'escape')
	           ~* '^[ \t]*application/cloudevents($|[+; \t])') THEN
		-- opened in its envelope as the batch function opened it
		IF rj IS NOT NULL AND NOT jsonb_refused THEN
			IF rj[3] IS NULL THEN
				RAISE EXCEPTION USING ERRCODE = rj[1], MESSAGE = rj[2], HINT = hint;
			END IF;
			RAISE EXCEPTION USING ERRCODE = rj[1], MESSAGE = rj[2], DETAIL = rj[3], HINT = hint;
		END IF;
--@include envelope-open
		IF rj IS NOT NULL THEN
			RAISE EXCEPTION USING ERRCODE = rj[1], MESSAGE = rj[2], HINT = hint;
		END IF;
		val := ev;
--@include event-raw
	END IF;
	IF rj IS NOT NULL AND jsonb_refused THEN
		-- what jsonb's input refused is raised as it raised it
		IF rj[3] IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = rj[1], MESSAGE = rj[2];
		END IF;
		RAISE EXCEPTION USING ERRCODE = rj[1], MESSAGE = rj[2], DETAIL = rj[3];
	END IF;
	IF rj IS NULL THEN
		SELECT
--@include event-fields
		  INTO rj
		  FROM (SELECT parsed AS payload) ev;
	END IF;
	IF rj IS NOT NULL THEN
		IF rj[3] IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = rj[1], MESSAGE = rj[2], HINT = hint;
		END IF;
		RAISE EXCEPTION USING ERRCODE = rj[1], MESSAGE = rj[2], DETAIL = rj[3], HINT = hint;
	END IF;

	new_id := (parsed ->> 'orderId')::uuid;
	reference := parsed ->> 'externalReference';
	ev_payload := parsed;
--@include insert-one
	IF outcome_label = 'conflict' THEN
		RAISE EXCEPTION 'order % is already stored with another externalReference', new_id
			USING ERRCODE = 'unique_violation',
			      DETAIL = pg_catalog.format('The stored externalReference is "%s"; this event has "%s".', stored, reference),
			      HINT = 'The stored row was left unchanged; an orderId must identify one order.';
	END IF;
	WITH gone AS (
		DELETE FROM received_orders.received_orders_quarantine r
		 WHERE r.id = replay_quarantined.id
		RETURNING r.id, r.kafka_topic, r.kafka_partition, r.kafka_offset, r.outcome,
		          r.sqlstate, r.reason, r.quarantined_at)
	INSERT INTO received_orders.received_orders_replays
		(quarantine_id, kafka_topic, kafka_partition, kafka_offset, outcome,
		 sqlstate, reason, quarantined_at, order_id, replayed_as)
	SELECT g.id, g.kafka_topic, g.kafka_partition, g.kafka_offset, g.outcome,
	       g.sqlstate, g.reason, g.quarantined_at, new_id,
	       outcome_label::received_orders.materialize_outcome
	  FROM gone g;
	RETURN outcome_label;
END
