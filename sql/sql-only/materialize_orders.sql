-- sql/sql-only/materialize_orders.sql: the twin of the plain batch
-- function (materialize.c's materialize_orders): batch.sql without a group.
#variable_conflict use_column
DECLARE
	with_group CONSTANT boolean := false;
	consumer_group CONSTANT text := NULL;
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
