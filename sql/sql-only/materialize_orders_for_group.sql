-- sql/sql-only/materialize_orders_for_group.sql: the twin of the batch
-- function of a consumer group (materialize.c's
-- materialize_orders_for_group): batch.sql with the group's checks, NULL
-- values skipped, and the group's positions recorded in the same
-- transaction, never backwards.
#variable_conflict use_column
DECLARE
	with_group CONSTANT boolean := true;
	-- the outbox form's arguments, which this form has not
	with_envelope CONSTANT boolean := false;
	envelope CONSTANT text := NULL;
	event_type CONSTANT text := NULL;
	type_header CONSTANT text := NULL;
	message_types CONSTANT bytea[] := NULL;
	content_types CONSTANT bytea[] := NULL;
	-- the Schema Registry form's arguments, which this form has not
	with_frame CONSTANT boolean := false;
	decoded_values CONSTANT bytea[] := NULL;
	value_schema_ids CONSTANT integer[] := NULL;
	decode_errors CONSTANT text[] := NULL;
	value_schema_guids CONSTANT uuid[] := NULL;
BEGIN
--@include batch
END
