	-- sql/sql-only/envelope-open-vars.sql: the variables envelope-open.sql
	-- sets, declared by every function that includes it
	ev bytea;
	ce_type bytea;
	env_msg text;
	env_code text;
	env_esc record;
	env_j pg_catalog.json;
	env_top text;
	env_t text;
	env_wanted text[];
	env_members jsonb;
	env_b64 text;
	b64_buf bigint;
	b64_pos integer;
	b64_end integer;
	b64_b integer;
	b64_ch text;
	env_token_types CONSTANT text[] := ARRAY['object', 'array', 'string', 'number', 'boolean', 'null'];
	env_token_names CONSTANT text[] := ARRAY['an object', 'an array', 'a string', 'a number', 'a boolean', 'null'];
