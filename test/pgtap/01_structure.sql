-- 01_structure.sql — the extension's objects are exactly the contract's:
-- schema, tables, column types, keys, defaults, the outcome enum (with
-- 'skipped'), pg_dump marking (extconfig) and the functions' signatures.
-- The positions table and the consumer-group functions are described in
-- detail by 07_positions.sql.
--
-- Run by pg_prove in a database where pgtap and received_orders are created.

BEGIN;
SELECT plan(76);

-- Extension and schema ------------------------------------------------------

SELECT has_extension('received_orders', 'extension received_orders is installed');
SELECT is(
	(SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'received_orders'),
	'1.4',
	'extension version is 1.4');
SELECT is(
	(SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'received_orders'),
	(SELECT default_version FROM pg_catalog.pg_available_extensions WHERE name = 'received_orders'),
	'CREATE EXTENSION installs the control file''s default_version');
SELECT is(
	(SELECT extnamespace::regnamespace::text FROM pg_catalog.pg_extension WHERE extname = 'received_orders'),
	'received_orders',
	'extension lives in schema received_orders');
SELECT is(
	(SELECT extrelocatable FROM pg_catalog.pg_extension WHERE extname = 'received_orders'),
	false,
	'extension is not relocatable');
SELECT has_schema('received_orders', 'schema received_orders exists');
SELECT tables_are('received_orders',
	ARRAY['received_orders', 'received_orders_quarantine', 'received_orders_positions',
	      'received_orders_consumer_groups', 'received_orders_feeders', 'received_orders_replays',
	      'received_orders_position_gaps']::name[],
	'schema received_orders holds exactly the tables received_orders, received_orders_quarantine, received_orders_positions, received_orders_consumer_groups, received_orders_feeders, received_orders_replays (1.2, 15_replays_counted.sql), received_orders_position_gaps (1.3, 17_position_gaps.sql)');
SELECT views_are('received_orders',
	ARRAY['feeders', 'consumer_lag', 'quarantine_summary', 'quarantine_examples', 'position_gaps', 'feeder_errors']::name[],
	'schema received_orders holds exactly the views feeders, consumer_lag, quarantine_summary (14_status.sql), quarantine_examples (16_hostile_roles.sql), position_gaps (17_position_gaps.sql) and feeder_errors (19_feeder_errors.sql)');

-- Table received_orders ------------------------------------------------------

SELECT has_table('received_orders', 'received_orders', 'table received_orders.received_orders exists');
SELECT col_type_is('received_orders', 'received_orders', 'order_id', 'uuid', 'received_orders.order_id is uuid');
SELECT col_type_is('received_orders', 'received_orders', 'external_reference', 'text', 'received_orders.external_reference is text');
SELECT col_type_is('received_orders', 'received_orders', 'payload', 'jsonb', 'received_orders.payload is jsonb');
SELECT col_type_is('received_orders', 'received_orders', 'received_at', 'timestamp with time zone', 'received_orders.received_at is timestamptz');
SELECT col_is_pk('received_orders', 'received_orders', 'order_id', 'received_orders primary key is (order_id)');
SELECT col_not_null('received_orders', 'received_orders', 'external_reference', 'received_orders.external_reference is NOT NULL');
SELECT col_not_null('received_orders', 'received_orders', 'payload', 'received_orders.payload is NOT NULL');
SELECT col_not_null('received_orders', 'received_orders', 'received_at', 'received_orders.received_at is NOT NULL');
SELECT col_default_is('received_orders', 'received_orders', 'received_at', 'now()'::text, 'received_orders.received_at defaults to now()');
SELECT col_type_is('received_orders', 'received_orders', 'value_schema_id', 'integer', 'received_orders.value_schema_id is integer (1.2, 13_schema_registry.sql)');
SELECT col_is_null('received_orders', 'received_orders', 'value_schema_id', 'received_orders.value_schema_id is nullable');
SELECT columns_are('received_orders', 'received_orders',
	ARRAY['order_id', 'external_reference', 'payload', 'received_at', 'value_schema_id']::name[],
	'received_orders.received_orders has exactly the columns order_id, external_reference, payload, received_at, value_schema_id');

-- Table received_orders_quarantine -------------------------------------------

SELECT has_table('received_orders', 'received_orders_quarantine', 'table received_orders.received_orders_quarantine exists');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'id', 'bigint', 'quarantine.id is bigint');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'kafka_topic', 'text', 'quarantine.kafka_topic is text');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'kafka_partition', 'integer', 'quarantine.kafka_partition is integer');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'kafka_offset', 'bigint', 'quarantine.kafka_offset is bigint');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'kafka_key', 'bytea', 'quarantine.kafka_key is bytea');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'raw_value', 'bytea', 'quarantine.raw_value is bytea (invalid UTF-8 survives)');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'order_id', 'uuid', 'quarantine.order_id is uuid');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'outcome', 'received_orders', 'materialize_outcome', 'quarantine.outcome is received_orders.materialize_outcome');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'sqlstate', 'text', 'quarantine.sqlstate is text');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'reason', 'text', 'quarantine.reason is text');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'quarantined_at', 'timestamp with time zone', 'quarantine.quarantined_at is timestamptz');
SELECT col_is_pk('received_orders', 'received_orders_quarantine', 'id', 'quarantine primary key is (id)');
SELECT col_not_null('received_orders', 'received_orders_quarantine', 'outcome', 'quarantine.outcome is NOT NULL');
SELECT col_not_null('received_orders', 'received_orders_quarantine', 'sqlstate', 'quarantine.sqlstate is NOT NULL');
SELECT col_not_null('received_orders', 'received_orders_quarantine', 'reason', 'quarantine.reason is NOT NULL');
SELECT col_not_null('received_orders', 'received_orders_quarantine', 'quarantined_at', 'quarantine.quarantined_at is NOT NULL');
SELECT col_default_is('received_orders', 'received_orders_quarantine', 'quarantined_at', 'now()'::text, 'quarantine.quarantined_at defaults to now()');
SELECT isnt(
	pg_catalog.pg_get_serial_sequence('received_orders.received_orders_quarantine', 'id'),
	NULL,
	'quarantine.id is fed by an owned sequence (bigserial)');
SELECT col_is_unique('received_orders', 'received_orders_quarantine',
	ARRAY['kafka_topic', 'kafka_partition', 'kafka_offset', 'message_digest', 'legacy_copy']::name[],
	'quarantine has a UNIQUE constraint on (kafka_topic, kafka_partition, kafka_offset, message_digest, legacy_copy): one row per message, a redelivery once, 1.0''s copies numbered');
SELECT is(
	(SELECT indnullsnotdistinct FROM pg_catalog.pg_index
	  WHERE indexrelid = 'received_orders.received_orders_quarantine_message_key'::regclass),
	true, 'its NULLs are not distinct: messages without coordinates are stored once per distinct message');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'message_digest', 'bytea', 'quarantine.message_digest is bytea');
SELECT col_not_null('received_orders', 'received_orders_quarantine', 'message_digest', 'quarantine.message_digest is NOT NULL');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'raw_value_bytes', 'integer', 'quarantine.raw_value_bytes is integer');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'kafka_key_bytes', 'integer', 'quarantine.kafka_key_bytes is integer');
SELECT col_type_is('received_orders', 'received_orders_quarantine', 'legacy_copy', 'integer', 'quarantine.legacy_copy is integer');
SELECT col_has_check('received_orders', 'received_orders_quarantine', 'legacy_copy',
	'quarantine.legacy_copy has a CHECK constraint (1, 2, ...: the n-th copy 1.0 stored of a message; NULL otherwise)');

-- Table received_orders_positions -----------------------------------------------

SELECT has_table('received_orders', 'received_orders_positions', 'table received_orders.received_orders_positions exists');
SELECT col_is_pk('received_orders', 'received_orders_positions',
	ARRAY['consumer_group', 'kafka_topic', 'kafka_partition']::name[],
	'positions primary key is (consumer_group, kafka_topic, kafka_partition)');

-- Outcome enum -----------------------------------------------------------------

SELECT has_enum('received_orders', 'materialize_outcome', 'enum received_orders.materialize_outcome exists');
SELECT enum_has_labels('received_orders', 'materialize_outcome',
	ARRAY['inserted', 'duplicate', 'conflict', 'rejected', 'skipped']::name[],
	'materialize_outcome labels are inserted, duplicate, conflict, rejected, skipped in that order');

-- pg_dump marking --------------------------------------------------------------

SELECT ok(
	'received_orders.received_orders'::regclass = ANY
		((SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'received_orders')::oid[]),
	'received_orders is marked in pg_extension.extconfig (dumped by pg_dump)');
SELECT ok(
	'received_orders.received_orders_quarantine'::regclass = ANY
		((SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'received_orders')::oid[]),
	'received_orders_quarantine is marked in pg_extension.extconfig (dumped by pg_dump)');
SELECT ok(
	pg_catalog.pg_get_serial_sequence('received_orders.received_orders_quarantine', 'id')::regclass = ANY
		((SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'received_orders')::oid[]),
	'the quarantine id sequence is marked in pg_extension.extconfig (dumped by pg_dump)');
SELECT ok(
	'received_orders.received_orders_positions'::regclass = ANY
		((SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'received_orders')::oid[]),
	'received_orders_positions is marked in pg_extension.extconfig (dumped by pg_dump)');
SELECT ok(
	'received_orders.received_orders_replays'::regclass = ANY
		((SELECT extconfig FROM pg_catalog.pg_extension WHERE extname = 'received_orders')::oid[]),
	'received_orders_replays is marked in pg_extension.extconfig (dumped by pg_dump)');

-- Functions ---------------------------------------------------------------------

SELECT is(
	(SELECT array_agg(p.oid::regprocedure::text ORDER BY p.oid::regprocedure::text)
	   FROM pg_catalog.pg_proc p WHERE p.pronamespace = 'received_orders'::regnamespace),
	ARRAY['received_orders.accept_position_gap(text,text,integer)',
	      'received_orders.adopt_consumer_position(text,text,integer,bigint)',
	      'received_orders.advance_positions(text,text[],integer[],bigint[],bigint[])',
	      'received_orders.check_consumer_group(text,text)',
	      'received_orders.consumer_group_claim_check()',
	      'received_orders.consumer_positions(text)',
	      'received_orders.consumer_positions(text,text)',
	      'received_orders.feeder_functions()',
	      'received_orders.forget_consumer_positions(text,text)',
	      'received_orders.grant_feeder(regrole)',
	      'received_orders.materialize_order(jsonb)',
	      'received_orders.materialize_orders(bytea[],text[],integer[],bigint[],bytea[])',
	      'received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[])',
	      'received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[])',
	      'received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[],bytea[],integer[],text[],uuid[])',
	      'received_orders.record_high_watermarks(text,text,text[],integer[],bigint[])',
	      'received_orders.record_position_gap(text,text,integer,bigint,bigint,boolean)',
	      'received_orders.replay_quarantined(bigint)',
	      'received_orders.report_feeder(text,text,text,integer,text,timestamp with time zone,text,text[],integer[],bigint[],text,timestamp with time zone,interval,interval)',
	      'received_orders.restart_position(text,text,integer,bigint,bigint)',
	      'received_orders.revoke_feeder(regrole)',
	      'received_orders.set_consumer_group_owner(text,name)',
	      'received_orders.set_consumer_position(text,text,integer,bigint)'],
	'schema received_orders holds exactly the twenty-three functions of 1.4, those of 1.3 (1.1''s nine, adopt_consumer_position, check_consumer_group, consumer_positions(text, text), set_consumer_group_owner, the Schema Registry form, record_high_watermarks and report_feeder of 1.2, the trigger function consumer_group_claim_check, record_position_gap, accept_position_gap, advance_positions, feeder_functions, grant_feeder and revoke_feeder of 1.3)');

SELECT has_function('received_orders', 'materialize_order', ARRAY['jsonb'],
	'function received_orders.materialize_order(jsonb) exists');
SELECT function_returns('received_orders', 'materialize_order', ARRAY['jsonb'], 'received_orders.materialize_outcome',
	'materialize_order(jsonb) returns received_orders.materialize_outcome');
SELECT is(
	pg_catalog.pg_get_function_arguments('received_orders.materialize_order(jsonb)'::regprocedure),
	'event jsonb',
	'materialize_order takes (event jsonb)');

SELECT has_function('received_orders', 'materialize_orders', ARRAY['bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'function received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) exists');
SELECT function_returns('received_orders', 'materialize_orders', ARRAY['bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'], 'setof record',
	'materialize_orders(...) returns a set of records');
SELECT is(
	pg_catalog.pg_get_function_arguments('received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[])'::regprocedure),
	'kafka_values bytea[], kafka_topics text[] DEFAULT NULL::text[], kafka_partitions integer[] DEFAULT NULL::integer[], '
	'kafka_offsets bigint[] DEFAULT NULL::bigint[], kafka_keys bytea[] DEFAULT NULL::bytea[]',
	'materialize_orders takes (kafka_values, kafka_topics, kafka_partitions, kafka_offsets, kafka_keys), coordinates defaulting to NULL');
SELECT is(
	pg_catalog.pg_get_function_result('received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[])'::regprocedure),
	'TABLE("position" integer, order_id uuid, outcome received_orders.materialize_outcome, sqlstate text, message text)',
	'materialize_orders returns TABLE(position, order_id, outcome, sqlstate, message)');

SELECT has_function('received_orders', 'replay_quarantined', ARRAY['bigint'],
	'function received_orders.replay_quarantined(bigint) exists');
SELECT function_returns('received_orders', 'replay_quarantined', ARRAY['bigint'], 'received_orders.materialize_outcome',
	'replay_quarantined(bigint) returns received_orders.materialize_outcome');
SELECT is(
	pg_catalog.pg_get_function_arguments('received_orders.replay_quarantined(bigint)'::regprocedure),
	'id bigint',
	'replay_quarantined takes (id bigint)');

SELECT has_function('received_orders', 'materialize_orders', ARRAY['text', 'bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'function received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]) exists (1.1)');
SELECT has_function('received_orders', 'consumer_positions', ARRAY['text'],
	'function received_orders.consumer_positions(text) exists (1.1)');
SELECT has_function('received_orders', 'restart_position', ARRAY['text', 'text', 'integer', 'bigint', 'bigint'],
	'function received_orders.restart_position(text, text, integer, bigint, bigint) exists (1.1)');
SELECT has_function('received_orders', 'set_consumer_position', ARRAY['text', 'text', 'integer', 'bigint'],
	'function received_orders.set_consumer_position(text, text, integer, bigint) exists (1.1)');
SELECT has_function('received_orders', 'forget_consumer_positions', ARRAY['text', 'text'],
	'function received_orders.forget_consumer_positions(text, text) exists (1.1)');

-- NULL input must raise (22004), so none of these functions may be STRICT.
SELECT isnt_strict('received_orders', 'materialize_order', ARRAY['jsonb'],
	'materialize_order is not STRICT (NULL must raise, not return NULL)');
SELECT isnt_strict('received_orders', 'materialize_orders', ARRAY['bytea[]', 'text[]', 'integer[]', 'bigint[]', 'bytea[]'],
	'materialize_orders is not STRICT (NULL coordinates are allowed)');
SELECT isnt_strict('received_orders', 'replay_quarantined', ARRAY['bigint'],
	'replay_quarantined is not STRICT (NULL must raise, not return NULL)');

SELECT * FROM finish();
ROLLBACK;
