	-- sql/sql-only/no-envelope-args.sql: the outbox form's arguments, as
	-- constants, for the forms of batch.sql that have not them
	with_envelope CONSTANT boolean := false;
	envelope CONSTANT text := NULL;
	event_type CONSTANT text := NULL;
	type_header CONSTANT text := NULL;
	message_types CONSTANT bytea[] := NULL;
	content_types CONSTANT bytea[] := NULL;
