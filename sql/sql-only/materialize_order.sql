-- sql/sql-only/materialize_order.sql: the twin of materialize.c's
-- materialize_order.  An invalid event raises its validation error (the
-- rules of event-fields.sql) and writes nothing; a conflict leaves the
-- stored row alone and raises a WARNING naming both references.
DECLARE
	max_event_bytes CONSTANT integer := 1048576;
	reason text[];
	new_id uuid;
	new_schema_id CONSTANT integer := NULL;
	reference text;
	stored text;
	not_stored uuid;
	ev_payload jsonb;
	outcome_label text;
BEGIN
	IF event IS NULL THEN
		RAISE EXCEPTION 'event must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF pg_catalog.pg_column_size(event) - 4 > max_event_bytes THEN
		RAISE EXCEPTION 'event is too large: % bytes, received_orders.max_event_bytes is %',
			pg_catalog.pg_column_size(event) - 4, max_event_bytes
			USING ERRCODE = 'program_limit_exceeded',
			      DETAIL = 'A superuser can raise received_orders.max_event_bytes.';
	END IF;
	SELECT
--@include event-fields
	  INTO reason
	  FROM (SELECT event AS payload) ev;
	IF reason IS NOT NULL THEN
		IF reason[3] IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = reason[1], MESSAGE = reason[2];
		END IF;
		RAISE EXCEPTION USING ERRCODE = reason[1], MESSAGE = reason[2], DETAIL = reason[3];
	END IF;

	new_id := (event ->> 'orderId')::uuid;
	reference := event ->> 'externalReference';
	ev_payload := event;
--@include insert-one
	IF outcome_label <> 'conflict' THEN
		RETURN outcome_label;
	END IF;
	RAISE WARNING 'order % is already stored with another externalReference', new_id
		USING ERRCODE = 'unique_violation',
		      DETAIL = pg_catalog.format('The stored externalReference is "%s"; this event has "%s".', stored, reference),
		      HINT = 'The stored row was left unchanged; an orderId must identify one order.';
	RETURN 'conflict';
END
