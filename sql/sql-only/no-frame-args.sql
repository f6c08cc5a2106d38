	-- sql/sql-only/no-frame-args.sql: the Schema Registry form's arguments,
	-- as constants, for the forms of batch.sql that have not them
	with_frame CONSTANT boolean := false;
	decoded_values CONSTANT bytea[] := NULL;
	value_schema_ids CONSTANT integer[] := NULL;
	decode_errors CONSTANT text[] := NULL;
	value_schema_guids CONSTANT uuid[] := NULL;
