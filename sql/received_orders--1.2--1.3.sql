-- received_orders--1.2--1.3.sql — update from 1.2 to 1.3.
--
-- Every schema change of 1.3 is in this one script; earlier scripts stay
-- frozen.  Each section below says what it adds and why.

\echo Use "ALTER EXTENSION received_orders UPDATE TO '1.3'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Position gaps (retention past the database's position)
--
-- A database position below a partition's log start (its earliest offset)
-- means that retention (or DeleteRecords) removed events the database never
-- received: a restore of an older backup, a feeder stopped for longer than
-- the topic's retention.  The feeder no longer stops for it: that partition
-- waits alone, paused, nothing of it acknowledged, while the others go on,
-- and the gap is recorded here (record_position_gap, called by the feeder):
-- group, topic, partition, the first and last offset lost (the database's
-- position .. log start - 1), when and by which role it was found.  An
-- operator who has recovered the events from their source, or decided they
-- are lost, accepts it with accept_position_gap: who (session_user) and
-- when are recorded with the range, and the group's position moves to the
-- log start (last_lost + 1); the waiting feeder re-reads the database's
-- position at its next retry and resumes there, without a restart.  A
-- feeder run with --accept-position-loss records the gap as accepted by its
-- own role and goes on at once.
--
-- At most one gap of a partition is open (not accepted) at a time: the
-- feeder records it again at every retry (the same gap: nothing changes but
-- last_lost, which grows while retention keeps deleting), and a gap found
-- from another position (the position was moved meanwhile) replaces the
-- open one.  Accepted gaps stay: they are the history of the losses.  The
-- table is dumped (pg_extension_config_dump); PUBLIC has no privilege on
-- it, pg_monitor reads it through the view position_gaps (coordinates and
-- who, no payload).
--
-- Grants for a feeder (1.3) to record the gaps it finds:
--   GRANT EXECUTE ON FUNCTION
--     received_orders.record_position_gap(text, text, integer, bigint,
--       bigint, boolean)
--   TO feeder;
-- Without it the feeder still waits and logs the gap, and says which GRANT
-- is missing; the gap then cannot be accepted with accept_position_gap
-- (set_consumer_position still moves the position).
-- ---------------------------------------------------------------------------

CREATE TABLE received_orders.received_orders_position_gaps (
	consumer_group text NOT NULL,
	kafka_topic text NOT NULL,
	kafka_partition integer NOT NULL,
	first_lost bigint NOT NULL,
	last_lost bigint NOT NULL,
	detected_at timestamptz NOT NULL DEFAULT pg_catalog.now(),
	detected_by name NOT NULL,
	accepted_by name,
	accepted_at timestamptz,
	CONSTRAINT received_orders_position_gaps_pkey
		PRIMARY KEY (consumer_group, kafka_topic, kafka_partition, first_lost),
	CONSTRAINT received_orders_position_gaps_group_check
		CHECK (consumer_group OPERATOR(pg_catalog.<>) ''),
	CONSTRAINT received_orders_position_gaps_topic_check
		CHECK (kafka_topic OPERATOR(pg_catalog.<>) ''),
	CONSTRAINT received_orders_position_gaps_partition_check
		CHECK (kafka_partition OPERATOR(pg_catalog.>=) 0),
	CONSTRAINT received_orders_position_gaps_range_check
		CHECK (first_lost OPERATOR(pg_catalog.>=) 0
		       AND last_lost OPERATOR(pg_catalog.>=) first_lost),
	CONSTRAINT received_orders_position_gaps_accepted_check
		CHECK ((accepted_by IS NULL) OPERATOR(pg_catalog.=) (accepted_at IS NULL))
);

-- one open gap per partition of a group
CREATE UNIQUE INDEX received_orders_position_gaps_open_key
	ON received_orders.received_orders_position_gaps (consumer_group, kafka_topic, kafka_partition)
	WHERE accepted_at IS NULL;

COMMENT ON TABLE received_orders.received_orders_position_gaps IS
	'Offsets of a partition lost to retention before the database received them (the database''s position was below the partition''s earliest offset): found and recorded by a feeder (record_position_gap), accepted by an operator (accept_position_gap) or by a feeder run with --accept-position-loss';
COMMENT ON COLUMN received_orders.received_orders_position_gaps.first_lost IS
	'First offset lost: the group''s position when the gap was found';
COMMENT ON COLUMN received_orders.received_orders_position_gaps.last_lost IS
	'Last offset lost: the partition''s earliest offset minus one, as last seen by the feeder (it grows while retention keeps deleting)';
COMMENT ON COLUMN received_orders.received_orders_position_gaps.detected_by IS
	'The role (session_user) of the feeder that found the gap';
COMMENT ON COLUMN received_orders.received_orders_position_gaps.accepted_by IS
	'The role (session_user) that accepted the loss; NULL while the gap is open and the partition waits';

SELECT pg_catalog.pg_extension_config_dump('received_orders.received_orders_position_gaps', '');

REVOKE ALL ON received_orders.received_orders_position_gaps FROM PUBLIC;

-- The feeder's record of a gap it found: the group must be the caller's
-- (check_consumer_group).  Idempotent: the same open gap found again only
-- moves its last_lost up; a range an accepted gap covers (found again by a
-- second session of the feeder, say) is not recorded twice, and only what
-- lies past it is.  With accept (the feeder's --accept-position-loss) the
-- gap is recorded accepted by the caller.  Returns whether the whole range
-- is accepted: the feeder then starts the partition at its earliest offset;
-- otherwise it waits.
CREATE FUNCTION received_orders.record_position_gap(
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

REVOKE EXECUTE ON FUNCTION received_orders.record_position_gap(text, text, integer, bigint, bigint, boolean) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.record_position_gap(text, text, integer, bigint, bigint, boolean) IS
	'Record offsets first_lost..last_lost of a partition as lost to retention for a consumer group (the feeder that found them; accept: accepted by the caller at once); returns whether the whole range is accepted';

-- The operator's acceptance: the group must be the caller's (or the caller
-- a superuser); EXECUTE stays with the owner unless a DBA grants it, like
-- set_consumer_position.  Records who and when, and moves the group's
-- position of the partition to last_lost + 1 (never backwards), in one
-- transaction.  Returns that position.
CREATE FUNCTION received_orders.accept_position_gap(
	consumer_group text,
	kafka_topic text,
	kafka_partition integer)
RETURNS bigint
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	gap record;
BEGIN
	IF consumer_group IS NULL OR kafka_topic IS NULL OR kafka_partition IS NULL THEN
		RAISE EXCEPTION 'consumer_group, kafka_topic and kafka_partition must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	PERFORM received_orders.check_consumer_group(accept_position_gap.consumer_group, NULL);

	SELECT g.first_lost, g.last_lost INTO gap
	  FROM received_orders.received_orders_position_gaps g
	 WHERE g.consumer_group OPERATOR(pg_catalog.=) accept_position_gap.consumer_group
	   AND g.kafka_topic OPERATOR(pg_catalog.=) accept_position_gap.kafka_topic
	   AND g.kafka_partition OPERATOR(pg_catalog.=) accept_position_gap.kafka_partition
	   AND g.accepted_at IS NULL
	   FOR UPDATE;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'consumer group "%" has no open position gap on % [%]',
			consumer_group, kafka_topic, kafka_partition
			USING ERRCODE = 'no_data_found',
			      HINT = 'The view received_orders.position_gaps lists the gaps feeders found (open: not accepted yet); check the group, topic and partition.';
	END IF;

	UPDATE received_orders.received_orders_position_gaps g
	   SET accepted_by = session_user, accepted_at = pg_catalog.now()
	 WHERE g.consumer_group OPERATOR(pg_catalog.=) accept_position_gap.consumer_group
	   AND g.kafka_topic OPERATOR(pg_catalog.=) accept_position_gap.kafka_topic
	   AND g.kafka_partition OPERATOR(pg_catalog.=) accept_position_gap.kafka_partition
	   AND g.first_lost OPERATOR(pg_catalog.=) gap.first_lost;

	INSERT INTO received_orders.received_orders_positions AS p
		(consumer_group, kafka_topic, kafka_partition, next_offset)
	VALUES (accept_position_gap.consumer_group, accept_position_gap.kafka_topic,
	        accept_position_gap.kafka_partition, gap.last_lost OPERATOR(pg_catalog.+) 1)
	ON CONFLICT ON CONSTRAINT received_orders_positions_pkey
	DO UPDATE SET next_offset = EXCLUDED.next_offset, updated_at = pg_catalog.now()
	 WHERE p.next_offset OPERATOR(pg_catalog.<) EXCLUDED.next_offset;

	RAISE NOTICE 'offsets % to % of % [%] accepted as lost for group "%": its position moves to %',
		gap.first_lost, gap.last_lost, kafka_topic, kafka_partition, consumer_group,
		gap.last_lost OPERATOR(pg_catalog.+) 1;
	RETURN gap.last_lost OPERATOR(pg_catalog.+) 1;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.accept_position_gap(text, text, integer) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.accept_position_gap(text, text, integer) IS
	'Accept the open position gap of a consumer group''s partition as lost: record who (session_user) and when, and move the group''s position to the offset after the gap, where the waiting feeder resumes; returns that position';

-- Coordinates and who, for monitoring roles: open while not accepted (the
-- partition waits).
CREATE VIEW received_orders.position_gaps AS
SELECT g.consumer_group, g.kafka_topic, g.kafka_partition, g.first_lost, g.last_lost,
       g.last_lost OPERATOR(pg_catalog.-) g.first_lost OPERATOR(pg_catalog.+) 1 AS lost,
       g.accepted_at IS NULL AS open,
       g.detected_at, g.detected_by, g.accepted_by, g.accepted_at
  FROM received_orders.received_orders_position_gaps g;

COMMENT ON VIEW received_orders.position_gaps IS
	'Offsets lost to retention before the database received them, per consumer group and partition: the range, how many, open (the partition waits until accept_position_gap) or who accepted it and when';

REVOKE ALL ON received_orders.position_gaps FROM PUBLIC;
GRANT SELECT ON received_orders.position_gaps TO pg_monitor;
-- end of section: position gaps --------------------------------------------
