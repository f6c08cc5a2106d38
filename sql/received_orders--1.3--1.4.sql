-- received_orders--1.3--1.4.sql — update from 1.3 to 1.4.
--
-- Every schema change of this update is in this one script; the scripts
-- before it stay frozen.  Each section below says what it changes and why.
-- It replaces a function (CREATE OR REPLACE: every grant on it stays),
-- sets plan_cache_mode on the batch functions and mends the schema's
-- initial privileges; it takes no lock on a table or view: batches and
-- dashboards run on through it.

\echo Use "ALTER EXTENSION received_orders UPDATE TO '1.4'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- record_position_gap: its topic and the rows a group holds bounded.
--
-- The record_position_gap this replaces stored any topic, however long, and
-- a role granted it (every feeder's role) could record as many gaps as it
-- liked: one per partition number, and with accept one more accepted row
-- per call.  advance_positions and report_feeder bound both, and so does
-- record_position_gap now, with their limits and SQLSTATEs:
--   a topic of 1 to 249 bytes, Kafka's own limit (22023);
--   at most 4096 rows per consumer group, open and accepted together, as a
--     report or an advance lists at most 4096 partitions (54000): a gap that
--     would be a new row of a full group is refused, and a superuser removes
--     accepted gaps no longer needed.  A gap already recorded is still
--     found again and accepted.
-- A role claims at most 16 groups (groups.c), so it holds at most 16 x 4096
-- gap rows of at most some 600 bytes each without a DBA's help.
-- ---------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION received_orders.record_position_gap(
	consumer_group text,
	kafka_topic text,
	kafka_partition integer,
	first_lost bigint,
	last_lost bigint,
	accept boolean DEFAULT false)
RETURNS boolean
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	gap_first bigint := record_position_gap.first_lost;
	covered bigint;
	held bigint;
BEGIN
	IF consumer_group IS NULL OR kafka_topic IS NULL OR kafka_partition IS NULL
	   OR first_lost IS NULL OR last_lost IS NULL OR accept IS NULL THEN
		RAISE EXCEPTION 'consumer_group, kafka_topic, kafka_partition, first_lost, last_lost and accept must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF consumer_group OPERATOR(pg_catalog.=) '' OR kafka_topic OPERATOR(pg_catalog.=) ''
	   OR kafka_partition OPERATOR(pg_catalog.<) 0 OR first_lost OPERATOR(pg_catalog.<) 0
	   OR last_lost OPERATOR(pg_catalog.<) first_lost THEN
		RAISE EXCEPTION 'invalid position gap %/% [%] @% .. @%', consumer_group, kafka_topic,
			kafka_partition, first_lost, last_lost
			USING ERRCODE = 'invalid_parameter_value',
			      HINT = 'The group and topic must not be empty; the partition and offsets must not be negative, and last_lost must not be below first_lost.';
	END IF;
	IF pg_catalog.octet_length(kafka_topic) OPERATOR(pg_catalog.>) 249 THEN
		RAISE EXCEPTION 'invalid position gap: topic of % bytes', pg_catalog.octet_length(kafka_topic)
			USING ERRCODE = 'invalid_parameter_value',
			      HINT = 'A Kafka topic has 1 to 249 bytes.';
	END IF;
	PERFORM received_orders.check_consumer_group(record_position_gap.consumer_group, NULL);

	-- Three tries: a concurrent first record of the same gap wins the
	-- insert, a concurrent acceptance takes the open row away; each try
	-- looks again (READ COMMITTED: each statement sees what committed).
	FOR attempt IN 1..3 LOOP
		-- the part of the range accepted gaps already cover
		gap_first := record_position_gap.first_lost;
		LOOP
			SELECT g.last_lost INTO covered
			  FROM received_orders.received_orders_position_gaps g
			 WHERE g.consumer_group OPERATOR(pg_catalog.=) record_position_gap.consumer_group
			   AND g.kafka_topic OPERATOR(pg_catalog.=) record_position_gap.kafka_topic
			   AND g.kafka_partition OPERATOR(pg_catalog.=) record_position_gap.kafka_partition
			   AND g.first_lost OPERATOR(pg_catalog.=) gap_first
			   AND g.accepted_at IS NOT NULL;
			EXIT WHEN NOT FOUND;
			IF covered OPERATOR(pg_catalog.>=) record_position_gap.last_lost THEN
				RETURN true;
			END IF;
			gap_first := covered OPERATOR(pg_catalog.+) 1;
		END LOOP;

		UPDATE received_orders.received_orders_position_gaps g
		   SET last_lost = CASE WHEN g.first_lost OPERATOR(pg_catalog.=) gap_first
		                        THEN pg_catalog.int8larger(g.last_lost, record_position_gap.last_lost)
		                        ELSE record_position_gap.last_lost END,
		       detected_at = CASE WHEN g.first_lost OPERATOR(pg_catalog.=) gap_first
		                          THEN g.detected_at ELSE pg_catalog.now() END,
		       detected_by = CASE WHEN g.first_lost OPERATOR(pg_catalog.=) gap_first
		                          THEN g.detected_by ELSE session_user END,
		       first_lost = gap_first,
		       accepted_by = CASE WHEN record_position_gap.accept THEN session_user END,
		       accepted_at = CASE WHEN record_position_gap.accept THEN pg_catalog.now() END
		 WHERE g.consumer_group OPERATOR(pg_catalog.=) record_position_gap.consumer_group
		   AND g.kafka_topic OPERATOR(pg_catalog.=) record_position_gap.kafka_topic
		   AND g.kafka_partition OPERATOR(pg_catalog.=) record_position_gap.kafka_partition
		   AND g.accepted_at IS NULL;
		IF FOUND THEN
			RETURN record_position_gap.accept;
		END IF;
		-- a new row: the group's rows are capped
		SELECT pg_catalog.count(*) INTO held
		  FROM received_orders.received_orders_position_gaps g
		 WHERE g.consumer_group OPERATOR(pg_catalog.=) record_position_gap.consumer_group;
		IF held OPERATOR(pg_catalog.>=) 4096 THEN
			RAISE EXCEPTION 'consumer group "%" holds % position gaps; at most 4096 are kept',
				consumer_group, held
				USING ERRCODE = 'program_limit_exceeded',
				      HINT = 'A superuser removes the accepted gaps no longer needed, after saving them: DELETE FROM received_orders.received_orders_position_gaps WHERE consumer_group = ... AND accepted_at IS NOT NULL;';
		END IF;
		INSERT INTO received_orders.received_orders_position_gaps AS g
			(consumer_group, kafka_topic, kafka_partition, first_lost, last_lost,
			 detected_by, accepted_by, accepted_at)
		VALUES (record_position_gap.consumer_group, record_position_gap.kafka_topic,
		        record_position_gap.kafka_partition, gap_first, record_position_gap.last_lost,
		        session_user,
		        CASE WHEN record_position_gap.accept THEN session_user END,
		        CASE WHEN record_position_gap.accept THEN pg_catalog.now() END)
		ON CONFLICT DO NOTHING;
		IF FOUND THEN
			RETURN record_position_gap.accept;
		END IF;
	END LOOP;
	RAISE EXCEPTION 'could not record the position gap %/% [%] @% .. @%: concurrent changes',
		consumer_group, kafka_topic, kafka_partition, first_lost, last_lost
		USING ERRCODE = 'serialization_failure',
		      HINT = 'Try again.';
END
$$;

COMMENT ON FUNCTION received_orders.record_position_gap(text, text, integer, bigint, bigint, boolean) IS
	'Record offsets first_lost..last_lost of a partition as lost to retention for a consumer group (the feeder that found them; accept: accepted by the caller at once); topic of 1 to 249 bytes, at most 4096 rows per group; returns whether the whole range is accepted';
-- end of section: record_position_gap ---------------------------------------

-- ---------------------------------------------------------------------------
-- The schema's initial privileges: the extension's own grants only.
--
-- A GRANT in an extension script records the object's whole ACL as the
-- extension's initial privileges, which pg_dump leaves out of a dump.  The
-- 1.1--1.2 update granted pg_monitor USAGE on the schema: every grant a DBA
-- had given on the schema before (USAGE to a feeder's or a dashboard's
-- role) became an initial privilege then; the database kept it, but a dump
-- did not, and a restore lost it.  The schema's initial privileges are put
-- back to what the scripts grant: its owner's and pg_monitor's USAGE.  A
-- DBA's grants stay as they are and are dumped again.
-- ---------------------------------------------------------------------------

UPDATE pg_catalog.pg_init_privs i
   SET initprivs = ARRAY(SELECT a FROM pg_catalog.unnest(i.initprivs) AS a
                          WHERE (SELECT x.grantee FROM pg_catalog.aclexplode(ARRAY[a]) AS x LIMIT 1)
                                OPERATOR(pg_catalog.=) ANY (ARRAY[n.nspowner,
                                    'pg_monitor'::pg_catalog.regrole::pg_catalog.oid]))
  FROM pg_catalog.pg_namespace n
 WHERE i.classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_namespace'::pg_catalog.regclass
   AND i.objoid OPERATOR(pg_catalog.=) n.oid
   AND i.objsubid OPERATOR(pg_catalog.=) 0
   AND n.nspname OPERATOR(pg_catalog.=) 'received_orders';
-- end of section: the schema's initial privileges ------------------------------

-- ---------------------------------------------------------------------------
-- The batch functions plan their statements once: plan_cache_mode.
--
-- A prepared statement with parameters is planned anew on each of its first
-- five runs in a session (a custom plan for the parameters' values) before
-- PostgreSQL settles on one generic plan.  The seven functions below run
-- their statements with parameters: the C ones through SPI's saved plans,
-- their SQL-only twins as PL/pgSQL statements, whose plans are large.  Each
-- feeder session paid those five plannings on its first five batches,
-- which in the SQL-only flavour made a 5,000-event batch cost 1.5x its
-- steady cost (115 ms against 74 on PostgreSQL 15) and a feeder's first
-- minute slow after every restart.  The generic plan
-- is the one every session settles on for these statements, whose values
-- (arrays of a batch's events) say nothing the plan could use: the
-- functions now take it from their first run.  Setting it on the function
-- keeps it there: the caller's own plan_cache_mode is untouched.
-- ---------------------------------------------------------------------------

ALTER FUNCTION received_orders.materialize_order(jsonb)
	SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[])
	SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[])
	SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[],
                                                  text, text, text, bytea[], bytea[])
	SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[],
                                                  text, text, text, bytea[], bytea[],
                                                  bytea[], integer[], text[], uuid[])
	SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION received_orders.replay_quarantined(bigint)
	SET plan_cache_mode = force_generic_plan;
ALTER FUNCTION received_orders.check_consumer_group(text, text)
	SET plan_cache_mode = force_generic_plan;
-- end of section: plan_cache_mode ---------------------------------------------

-- ---------------------------------------------------------------------------
-- The schema's comment names the version the scripts left it at.
--
-- Every update script from here on ends by setting it to its own target
-- version.  The SQL-only flavour, installed without CREATE EXTENSION, has no
-- pg_extension row to read its version from: its update scripts read this
-- comment, which both flavours share (tools/build-sql-only checks that each
-- script sets it).
-- ---------------------------------------------------------------------------

COMMENT ON SCHEMA received_orders IS
	'received_orders 1.4: idempotent materialization of Kafka OrderReceived events, with a quarantine';
-- end of section: the schema's comment ----------------------------------------
