-- received_orders--1.2--1.3.sql — update from 1.2 to 1.3.
--
-- Every schema change of this update is in this one script; the scripts
-- before it stay frozen.  Each section below says what it adds and why.

\echo Use "ALTER EXTENSION received_orders UPDATE TO '1.3'" to load this file. \quit

-- ---------------------------------------------------------------------------
-- Before anything: objects in the way, and the locks.
--
-- The objects this script creates must not exist yet: a DBA's view, function,
-- index or column of the same name would abort the update deep inside with
-- PostgreSQL's bare "already exists".  And quarantine_summary is dropped and
-- created again (a view cannot lose a column otherwise): a DBA's view built
-- on it would abort the update with a hint to use CASCADE, which would drop
-- the DBA's view.  Both are checked first and named, with what to do.
--
-- Then the tables a batch uses are locked in the order a batch takes them
-- (the group's row, the orders, the quarantine, the positions), the groups'
-- table, which the script changes, exclusively: batches running during the
-- update wait for it instead of deadlocking with it.  The replays and the
-- feeders' table come after: replay_quarantined and report_feeder write
-- them outside any batch.
DO $in_the_way$
DECLARE
	found text;
BEGIN
	SELECT pg_catalog.string_agg(o.what, ', ') INTO found
	  FROM (SELECT pg_catalog.format('%s received_orders.%I', CASE c.relkind WHEN 'v' THEN 'view'
	                 WHEN 'i' THEN 'index' WHEN 'S' THEN 'sequence' ELSE 'relation' END,
	                 c.relname) AS what
	          FROM pg_catalog.pg_class c
	         WHERE c.relnamespace OPERATOR(pg_catalog.=) 'received_orders'::pg_catalog.regnamespace
	           AND c.relname OPERATOR(pg_catalog.=) ANY (ARRAY['quarantine_examples',
	               'received_orders_consumer_groups_owner_idx', 'received_orders_position_gaps',
	               'received_orders_position_gaps_open_key', 'position_gaps',
	               'feeder_errors']::pg_catalog.name[])
	        UNION ALL
	        SELECT pg_catalog.format('function received_orders.%I(%s)', p.proname,
	                                 pg_catalog.pg_get_function_identity_arguments(p.oid))
	          FROM pg_catalog.pg_proc p
	         WHERE p.pronamespace OPERATOR(pg_catalog.=) 'received_orders'::pg_catalog.regnamespace
	           AND p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['consumer_group_claim_check',
	               'record_position_gap', 'accept_position_gap', 'advance_positions', 'feeder_functions',
	               'grant_feeder', 'revoke_feeder']::pg_catalog.name[])
	        UNION ALL
	        SELECT pg_catalog.format('column received_orders.received_orders_consumer_groups.%I', a.attname)
	          FROM pg_catalog.pg_attribute a
	         WHERE a.attrelid OPERATOR(pg_catalog.=) 'received_orders.received_orders_consumer_groups'::pg_catalog.regclass
	           AND a.attname OPERATOR(pg_catalog.=) ANY (ARRAY['owner_set_by', 'owner_set_at']::pg_catalog.name[])
	           AND NOT a.attisdropped
	        UNION ALL
	        SELECT pg_catalog.format('trigger %I on received_orders.received_orders_consumer_groups', t.tgname)
	          FROM pg_catalog.pg_trigger t
	         WHERE t.tgrelid OPERATOR(pg_catalog.=) 'received_orders.received_orders_consumer_groups'::pg_catalog.regclass
	           AND t.tgname OPERATOR(pg_catalog.=) 'received_orders_consumer_groups_claim_check') o;
	IF found IS NOT NULL THEN
		RAISE EXCEPTION 'cannot update received_orders to 1.3: % already exists', found
			USING ERRCODE = 'duplicate_object',
			      DETAIL = 'The update creates an object of that name; it is not a member of the extension.',
			      HINT = 'Rename or drop it (after saving what it holds), then run ALTER EXTENSION received_orders UPDATE again.';
	END IF;

	SELECT pg_catalog.string_agg(DISTINCT pg_catalog.format('%s %I.%I',
	           CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' ELSE 'relation' END,
	           n.nspname, c.relname), ', ') INTO found
	  FROM pg_catalog.pg_depend d
	  JOIN pg_catalog.pg_rewrite r ON r.oid OPERATOR(pg_catalog.=) d.objid
	  JOIN pg_catalog.pg_class c ON c.oid OPERATOR(pg_catalog.=) r.ev_class
	  JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
	 WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_rewrite'::pg_catalog.regclass
	   AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_class'::pg_catalog.regclass
	   AND d.refobjid OPERATOR(pg_catalog.=) 'received_orders.quarantine_summary'::pg_catalog.regclass
	   AND c.oid OPERATOR(pg_catalog.<>) 'received_orders.quarantine_summary'::pg_catalog.regclass;
	IF found IS NOT NULL THEN
		RAISE EXCEPTION 'cannot update received_orders to 1.3: % depends on the view received_orders.quarantine_summary', found
			USING ERRCODE = 'dependent_objects_still_exist',
			      DETAIL = 'The update replaces quarantine_summary by a view without its column example (now in the view quarantine_examples).',
			      HINT = 'Save the definition of the dependent view (pg_get_viewdef), drop it, run ALTER EXTENSION received_orders UPDATE again, then create it again on the new views.';
	END IF;
END
$in_the_way$;

LOCK TABLE received_orders.received_orders_consumer_groups IN ACCESS EXCLUSIVE MODE;
LOCK TABLE received_orders.received_orders,
	received_orders.received_orders_quarantine,
	received_orders.received_orders_positions,
	received_orders.received_orders_replays,
	received_orders.received_orders_feeders IN SHARE ROW EXCLUSIVE MODE;
-- end of section: objects in the way, locks ---------------------------------

-- ---------------------------------------------------------------------------
-- Consumer groups: a group that has positions is never claimed by use.
--
-- The 1.1--1.2 update entered the groups of a database unclaimed, and the
-- first role other than a superuser to use each claimed it: between the
-- update and the DBA's set_consumer_group_owner, any role granted the batch function or
-- report_feeder could take a group that another role's feeders had filled,
-- and move its positions.  Now a role claims a group by using it only while
-- the group has no positions (a new group, or one whose positions were all
-- forgotten).  A group with positions and no owner (every group of a
-- database updated from 1.1, or one a superuser's feeder filled) waits for
-- a superuser to name its owner with set_consumer_group_owner; meanwhile
-- every other role gets 42501, superusers may use it.
--
-- The library checks the rule before it claims (groups.c: a group's row is
-- now entered at its first use, a superuser's too, and a group with
-- positions is not claimed, with a message that says what to do); a trigger
-- on the table refuses such a claim too, so that the rule holds also for a
-- session still running the 1.2 library after the update.
-- set_consumer_group_owner records who set an owner and when (owner_set_by,
-- owner_set_at); the trigger tells a DBA's hand-over from a claim by that.
-- ---------------------------------------------------------------------------

ALTER TABLE received_orders.received_orders_consumer_groups
	ADD COLUMN owner_set_by name,
	ADD COLUMN owner_set_at timestamptz;

COMMENT ON COLUMN received_orders.received_orders_consumer_groups.owner_set_by IS
	'The session user who last set the owner with set_consumer_group_owner(); NULL: the owner claimed the group by using it';
COMMENT ON COLUMN received_orders.received_orders_consumer_groups.owner_set_at IS
	'When set_consumer_group_owner() last set the owner; NULL: never';

-- every group that has positions has a row (each position's group was
-- checked before it was written; a row missing would escape the rule)
INSERT INTO received_orders.received_orders_consumer_groups (consumer_group)
SELECT DISTINCT p.consumer_group FROM received_orders.received_orders_positions p
ON CONFLICT ON CONSTRAINT received_orders_consumer_groups_pkey DO NOTHING;

-- the groups a role owns, counted when it claims one more (groups.c)
CREATE INDEX received_orders_consumer_groups_owner_idx
	ON received_orders.received_orders_consumer_groups (owner_role);

CREATE FUNCTION received_orders.consumer_group_claim_check()
RETURNS trigger
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF EXISTS (SELECT FROM received_orders.received_orders_positions p
	            WHERE p.consumer_group OPERATOR(pg_catalog.=) NEW.consumer_group) THEN
		RAISE EXCEPTION 'permission denied for consumer group "%"', NEW.consumer_group
			USING ERRCODE = 'insufficient_privilege',
			      DETAIL = pg_catalog.format('The group has positions and no owner: role "%s" cannot claim it by using it.',
			                                 NEW.owner_role),
			      HINT = pg_catalog.format('A superuser names the role of the group''s feeders: SELECT received_orders.set_consumer_group_owner(%L, ''ROLE'');',
			                               NEW.consumer_group);
	END IF;
	RETURN NEW;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.consumer_group_claim_check() FROM PUBLIC;

COMMENT ON FUNCTION received_orders.consumer_group_claim_check() IS
	'Trigger of received_orders_consumer_groups: refuses (42501) a role''s claim of a group that already has positions; only set_consumer_group_owner() names its owner';

CREATE TRIGGER received_orders_consumer_groups_claim_check
	BEFORE UPDATE OF owner_role ON received_orders.received_orders_consumer_groups
	FOR EACH ROW
	WHEN (OLD.owner_role IS NULL AND NEW.owner_role IS NOT NULL
	      AND NEW.owner_set_at IS NOT DISTINCT FROM OLD.owner_set_at)
	EXECUTE FUNCTION received_orders.consumer_group_claim_check();

-- Operators' tool: hand a group to a role (NULL: no owner; a role may then
-- claim it by using it only while it has no positions).
CREATE OR REPLACE FUNCTION received_orders.set_consumer_group_owner(
	consumer_group text,
	owner_role name)
RETURNS name
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	previous name;
BEGIN
	IF consumer_group IS NULL OR consumer_group OPERATOR(pg_catalog.=) '' THEN
		RAISE EXCEPTION 'consumer_group must not be null or empty'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF pg_catalog.octet_length(consumer_group) OPERATOR(pg_catalog.>) 255 THEN
		RAISE EXCEPTION 'consumer group is % bytes long; at most 255 are allowed',
			pg_catalog.octet_length(consumer_group)
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF owner_role IS NOT NULL AND NOT EXISTS (
	       SELECT FROM pg_catalog.pg_roles r
	        WHERE r.rolname OPERATOR(pg_catalog.=) set_consumer_group_owner.owner_role) THEN
		RAISE EXCEPTION 'role "%" does not exist', owner_role
			USING ERRCODE = 'undefined_object';
	END IF;

	SELECT g.owner_role INTO previous
	  FROM received_orders.received_orders_consumer_groups g
	 WHERE g.consumer_group OPERATOR(pg_catalog.=) set_consumer_group_owner.consumer_group
	   FOR UPDATE;

	INSERT INTO received_orders.received_orders_consumer_groups AS g
		(consumer_group, owner_role, owner_set_by, owner_set_at)
	VALUES (set_consumer_group_owner.consumer_group, set_consumer_group_owner.owner_role,
	        pg_catalog."session_user"(), pg_catalog.clock_timestamp())
	ON CONFLICT ON CONSTRAINT received_orders_consumer_groups_pkey
	DO UPDATE SET owner_role = EXCLUDED.owner_role, owner_set_by = EXCLUDED.owner_set_by,
	              owner_set_at = EXCLUDED.owner_set_at, updated_at = pg_catalog.now();

	RAISE NOTICE 'consumer group "%" moved from owner % to %', consumer_group,
		coalesce(pg_catalog.quote_ident(previous), 'none'),
		coalesce(pg_catalog.quote_ident(owner_role), 'none');
	RETURN previous;
END
$$;

COMMENT ON FUNCTION received_orders.set_consumer_group_owner(text, name) IS
	'Make a role the owner of a consumer group''s positions (NULL: none; a role may claim a group by using it only while it has no positions); records who set it and when; returns the previous owner';
-- end of section: consumer groups -------------------------------------------

-- ---------------------------------------------------------------------------
-- report_feeder: every argument bounded, the rows a group holds capped.
--
-- The report_feeder this replaces stored what it was given: a role wrote
-- 5,000 member rows into 500 groups in one statement, with unbounded host, version and
-- last_error and keep_for NULL (never removed), and a negative keep_for
-- removed every row of the group, the caller's own included.  Now:
--   member_id at most 512 bytes, host 255, version 64, last_error 2048
--     (22001); pid not negative, report_interval above 0 and at most one
--     day, keep_for not negative (22023);
--   at most 4096 partitions per report, their topic names 128 kB in all
--     (54000), each topic of 1 to 249 bytes and each partition and high
--     watermark not negative (22023);
--   at most 64 member rows per group: a new member of a full group takes
--     the row of the member seen least recently among those that are not
--     healthy (stopped, or not reported within three of its intervals); if
--     every one is healthy, the report is refused (54000).
-- The groups a role may claim are capped by the library (groups.c: 16,
-- 54000); a superuser hands a role more with set_consumer_group_owner.
-- A member row is then at most about 200 kB, and a role without a DBA's
-- help holds at most 16 groups of 64 such rows.
-- ---------------------------------------------------------------------------

CREATE OR REPLACE FUNCTION received_orders.report_feeder(
	consumer_group text,
	member_id text,
	host text,
	pid integer,
	version text,
	started_at timestamptz,
	state text,
	kafka_topics text[],
	kafka_partitions integer[],
	high_watermarks bigint[],
	last_error text,
	last_error_at timestamptz,
	report_interval interval,
	keep_for interval DEFAULT '7 days')
RETURNS bigint
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	removed bigint;
	members integer;
	evicted text;
BEGIN
	IF consumer_group IS NULL OR member_id IS NULL OR state IS NULL
	   OR report_interval IS NULL THEN
		RAISE EXCEPTION 'consumer_group, member_id, state and report_interval must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF pg_catalog.cardinality(coalesce(kafka_topics, '{}')) OPERATOR(pg_catalog.<>) pg_catalog.cardinality(coalesce(kafka_partitions, '{}'))
	   OR pg_catalog.cardinality(coalesce(kafka_topics, '{}')) OPERATOR(pg_catalog.<>) pg_catalog.cardinality(coalesce(high_watermarks, '{}')) THEN
		RAISE EXCEPTION 'kafka_topics, kafka_partitions and high_watermarks must have one element per partition'
			USING ERRCODE = 'array_subscript_error';
	END IF;
	IF pg_catalog.octet_length(member_id) OPERATOR(pg_catalog.>) 512
	   OR pg_catalog.octet_length(host) OPERATOR(pg_catalog.>) 255
	   OR pg_catalog.octet_length(version) OPERATOR(pg_catalog.>) 64
	   OR pg_catalog.octet_length(last_error) OPERATOR(pg_catalog.>) 2048 THEN
		RAISE EXCEPTION 'a report''s text is too long'
			USING ERRCODE = 'string_data_right_truncation',
			      DETAIL = pg_catalog.format('member_id has %s bytes, host %s, version %s, last_error %s.',
			                                 pg_catalog.octet_length(member_id), coalesce(pg_catalog.octet_length(host), 0),
			                                 coalesce(pg_catalog.octet_length(version), 0),
			                                 coalesce(pg_catalog.octet_length(last_error), 0)),
			      HINT = 'At most 512 bytes of member_id, 255 of host, 64 of version and 2048 of last_error are kept.';
	END IF;
	IF pid OPERATOR(pg_catalog.<) 0
	   OR report_interval OPERATOR(pg_catalog.<=) '0'::interval
	   OR report_interval OPERATOR(pg_catalog.>) '1 day'::interval
	   OR keep_for OPERATOR(pg_catalog.<) '0'::interval THEN
		RAISE EXCEPTION 'invalid report: pid %, report_interval %, keep_for %', pid,
			report_interval, coalesce(keep_for::text, 'NULL')
			USING ERRCODE = 'invalid_parameter_value',
			      HINT = 'pid must not be negative, report_interval must be above 0 and at most 1 day, keep_for must not be negative (NULL: keep every member).';
	END IF;
	IF pg_catalog.cardinality(kafka_topics) OPERATOR(pg_catalog.>) 4096 THEN
		RAISE EXCEPTION 'a report lists % partitions; at most 4096 are kept',
			pg_catalog.cardinality(kafka_topics)
			USING ERRCODE = 'program_limit_exceeded';
	END IF;
	IF (SELECT pg_catalog.sum(pg_catalog.octet_length(t))
	      FROM pg_catalog.unnest(report_feeder.kafka_topics) AS t) OPERATOR(pg_catalog.>) 131072 THEN
		RAISE EXCEPTION 'a report''s topic names add up to more than 131072 bytes'
			USING ERRCODE = 'program_limit_exceeded',
			      HINT = 'Each partition repeats its topic''s name; at most 128 kB of names are kept per report.';
	END IF;
	IF EXISTS (SELECT FROM ROWS FROM (pg_catalog.unnest(report_feeder.kafka_topics),
	                                  pg_catalog.unnest(report_feeder.kafka_partitions),
	                                  pg_catalog.unnest(report_feeder.high_watermarks))
	                       AS t (kafka_topic, kafka_partition, high_watermark)
	            WHERE t.kafka_topic IS NULL OR t.kafka_partition IS NULL
	               OR pg_catalog.octet_length(t.kafka_topic) OPERATOR(pg_catalog.=) 0
	               OR pg_catalog.octet_length(t.kafka_topic) OPERATOR(pg_catalog.>) 249
	               OR t.kafka_partition OPERATOR(pg_catalog.<) 0
	               OR t.high_watermark OPERATOR(pg_catalog.<) 0) THEN
		RAISE EXCEPTION 'invalid partition in a report'
			USING ERRCODE = 'invalid_parameter_value',
			      HINT = 'Each topic has 1 to 249 bytes, each partition and high watermark is not negative (a high watermark may be NULL).';
	END IF;
	-- the group must be the caller's (see the consumer groups section)
	PERFORM received_orders.check_consumer_group(report_feeder.consumer_group, NULL);

	DELETE FROM received_orders.received_orders_feeders f
	 WHERE f.consumer_group OPERATOR(pg_catalog.=) report_feeder.consumer_group
	   AND f.member_id OPERATOR(pg_catalog.<>) report_feeder.member_id
	   AND f.last_seen OPERATOR(pg_catalog.<) (pg_catalog.now() OPERATOR(pg_catalog.-) report_feeder.keep_for);
	GET DIAGNOSTICS removed = ROW_COUNT;

	-- a new member of a full group takes the place of one that is not healthy
	IF NOT EXISTS (SELECT FROM received_orders.received_orders_feeders f
	                WHERE f.consumer_group OPERATOR(pg_catalog.=) report_feeder.consumer_group
	                  AND f.member_id OPERATOR(pg_catalog.=) report_feeder.member_id) THEN
		SELECT pg_catalog.count(*) INTO members
		  FROM received_orders.received_orders_feeders f
		 WHERE f.consumer_group OPERATOR(pg_catalog.=) report_feeder.consumer_group;
		IF members OPERATOR(pg_catalog.>=) 64 THEN
			DELETE FROM received_orders.received_orders_feeders f
			 WHERE f.consumer_group OPERATOR(pg_catalog.=) report_feeder.consumer_group
			   AND f.member_id OPERATOR(pg_catalog.=) (
			       SELECT o.member_id FROM received_orders.received_orders_feeders o
			        WHERE o.consumer_group OPERATOR(pg_catalog.=) report_feeder.consumer_group
			          AND (o.state OPERATOR(pg_catalog.=) 'stopped'
			               OR o.last_seen OPERATOR(pg_catalog.<=) (pg_catalog.now()
			                  OPERATOR(pg_catalog.-) (o.report_interval OPERATOR(pg_catalog.*) 3::double precision)))
			        ORDER BY o.last_seen, o.member_id
			        LIMIT 1)
			RETURNING f.member_id INTO evicted;
			IF evicted IS NULL THEN
				RAISE EXCEPTION 'consumer group "%" has % healthy members; at most 64 are kept',
					consumer_group, members
					USING ERRCODE = 'program_limit_exceeded',
					      HINT = 'Run fewer feeders in the group, or have a superuser remove member rows: DELETE FROM received_orders.received_orders_feeders WHERE consumer_group = ...';
			END IF;
			removed := removed OPERATOR(pg_catalog.+) 1;
		END IF;
	END IF;

	INSERT INTO received_orders.received_orders_feeders AS f
		(consumer_group, member_id, host, pid, version, started_at, last_seen,
		 state, kafka_topics, kafka_partitions, high_watermarks, last_error,
		 last_error_at, report_interval)
	VALUES (report_feeder.consumer_group, report_feeder.member_id, report_feeder.host,
	        report_feeder.pid, report_feeder.version, report_feeder.started_at,
	        pg_catalog.now(), report_feeder.state,
	        coalesce(report_feeder.kafka_topics, '{}'), coalesce(report_feeder.kafka_partitions, '{}'),
	        coalesce(report_feeder.high_watermarks, '{}'), report_feeder.last_error,
	        report_feeder.last_error_at, report_feeder.report_interval)
	ON CONFLICT ON CONSTRAINT received_orders_feeders_pkey DO UPDATE
	SET host = EXCLUDED.host, pid = EXCLUDED.pid, version = EXCLUDED.version,
	    started_at = EXCLUDED.started_at, last_seen = EXCLUDED.last_seen,
	    state = EXCLUDED.state, kafka_topics = EXCLUDED.kafka_topics,
	    kafka_partitions = EXCLUDED.kafka_partitions,
	    high_watermarks = EXCLUDED.high_watermarks, last_error = EXCLUDED.last_error,
	    last_error_at = EXCLUDED.last_error_at, report_interval = EXCLUDED.report_interval;
	RETURN removed;
END
$$;

COMMENT ON FUNCTION received_orders.report_feeder(text, text, text, integer, text, timestamptz, text, text[], integer[], bigint[], text, timestamptz, interval, interval) IS
	'A feeder reports itself: its row in received_orders_feeders is inserted or replaced (the group must be the caller''s; texts, partitions and intervals bounded; at most 64 members per group, a new one replacing the least recently seen unhealthy one); the group''s other member rows not seen for keep_for (7 days) are removed; returns how many were removed';
-- end of section: report_feeder ---------------------------------------------

-- ---------------------------------------------------------------------------
-- quarantine_summary without payload text; quarantine_examples for the DBA.
--
-- The quarantine_summary this replaces showed pg_monitor one whole reason
-- per kind (example), and the kind itself masked only well-formed quoted strings:
-- a conflict's example quoted the stored and the new externalReference, a
-- JSON error's quoted the offending token, up to 256 bytes of the message,
-- and a token holding quotes came through the mask.  A monitoring role now
-- sees, per outcome, SQLSTATE and class of reason, only counts and times;
-- the class is the reason's text before its first double quote, with UUIDs
-- and numbers masked, and "..." where the quoted part was: whatever a
-- message quotes, none of it is shown.  The kinds with their examples are in
-- the view quarantine_examples, which no role but the owner reads unless a
-- DBA grants it.  Neither view sorts the reasons: the example is the reason
-- of the kind's highest quarantine id (the newest waiting message, else the
-- latest replayed one), found by max(), and topics are counted per class
-- from a first grouping by topic (no count(DISTINCT), which sorts): each
-- view is one pass over the quarantine and the replays, hashed.
-- ---------------------------------------------------------------------------

DROP VIEW received_orders.quarantine_summary;

CREATE VIEW received_orders.quarantine_summary AS
WITH entries AS (
	SELECT q.outcome, q.sqlstate, q.reason, q.kafka_topic, q.quarantined_at,
	       false AS replayed
	  FROM received_orders.received_orders_quarantine q
	UNION ALL
	SELECT r.outcome, r.sqlstate, r.reason, r.kafka_topic, r.quarantined_at, true
	  FROM received_orders.received_orders_replays r
), per_topic AS (
	SELECT e.outcome, e.sqlstate, k.reason, e.kafka_topic, e.replayed,
	       pg_catalog.count(*) AS n, pg_catalog.min(e.quarantined_at) AS oldest,
	       pg_catalog.max(e.quarantined_at) AS newest
	  FROM entries e
	 CROSS JOIN LATERAL (
		SELECT pg_catalog.regexp_replace(pg_catalog.regexp_replace(
		           pg_catalog.regexp_replace(e.reason, '".*$', '"..."'),
		           '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<uuid>', 'g'),
		           '[0-9]+', 'N', 'g') AS reason) k
	 GROUP BY e.outcome, e.sqlstate, k.reason, e.kafka_topic, e.replayed
)
SELECT t.outcome, t.sqlstate, t.reason,
       coalesce(pg_catalog.sum(t.n) FILTER (WHERE NOT t.replayed), 0)::bigint AS messages,
       coalesce(pg_catalog.sum(t.n) FILTER (WHERE t.replayed), 0)::bigint AS replayed,
       pg_catalog.count(t.kafka_topic) FILTER (WHERE NOT t.replayed) AS topics,
       pg_catalog.min(t.oldest) FILTER (WHERE NOT t.replayed) AS oldest,
       pg_catalog.max(t.newest) FILTER (WHERE NOT t.replayed) AS newest
  FROM per_topic t
 GROUP BY t.outcome, t.sqlstate, t.reason;

COMMENT ON VIEW received_orders.quarantine_summary IS
	'Quarantined messages counted by outcome, SQLSTATE and class of reason (the reason''s text before its first double quote, UUIDs and numbers masked: no message text): messages waiting in the quarantine, how many were replayed, the waiting ones'' topics, oldest and newest; pg_monitor reads it';

REVOKE ALL ON received_orders.quarantine_summary FROM PUBLIC;
GRANT SELECT ON received_orders.quarantine_summary TO pg_monitor;

CREATE VIEW received_orders.quarantine_examples AS
WITH entries AS (
	SELECT q.outcome, q.sqlstate, q.reason, q.id, false AS replayed
	  FROM received_orders.received_orders_quarantine q
	UNION ALL
	SELECT r.outcome, r.sqlstate, r.reason, r.quarantine_id, true
	  FROM received_orders.received_orders_replays r
), kinds AS (
	SELECT e.outcome, e.sqlstate, k.reason,
	       pg_catalog.count(*) FILTER (WHERE NOT e.replayed) AS messages,
	       pg_catalog.count(*) FILTER (WHERE e.replayed) AS replayed,
	       coalesce(pg_catalog.max(e.id) FILTER (WHERE NOT e.replayed),
	                pg_catalog.max(e.id)) AS example_id
	  FROM entries e
	 CROSS JOIN LATERAL (
		SELECT pg_catalog.regexp_replace(pg_catalog.regexp_replace(pg_catalog.regexp_replace(e.reason,
		           '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<uuid>', 'g'),
		           '"([^"\\]|\\.)*"', '"..."', 'g'),
		           '[0-9]+', 'N', 'g') AS reason) k
	 GROUP BY e.outcome, e.sqlstate, k.reason
)
SELECT k.outcome, k.sqlstate, k.reason, k.messages, k.replayed, k.example_id,
       coalesce((SELECT q.reason FROM received_orders.received_orders_quarantine q
                  WHERE q.id OPERATOR(pg_catalog.=) k.example_id),
                (SELECT r.reason FROM received_orders.received_orders_replays r
                  WHERE r.quarantine_id OPERATOR(pg_catalog.=) k.example_id)) AS example
  FROM kinds k;

COMMENT ON VIEW received_orders.quarantine_examples IS
	'Quarantined messages counted by outcome, SQLSTATE and kind of reason (UUIDs, quoted strings and numbers masked), with one whole reason as example (of the highest quarantine id: the newest waiting message, else the latest replayed one); reasons quote message text: only the owner reads it unless a DBA grants it';

REVOKE ALL ON received_orders.quarantine_examples FROM PUBLIC;
-- end of section: quarantine views ------------------------------------------

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
-- Grants for a feeder to record the gaps it finds:
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

-- ---------------------------------------------------------------------------
-- advance_positions: positions past records that hold no event.
--
-- A topic written by a transactional producer holds, besides the events,
-- records the feeder never receives: each transaction's commit or abort
-- marker (a control record), and with isolation.level read_committed the
-- messages of aborted transactions.  The batch function records the offset
-- after the last message it stored, so a partition whose last records are
-- such a marker kept its position one (or more) below the end offset for
-- good, and the view consumer_lag read a lag of 1 when the feeder was
-- caught up.  The feeder acknowledges those records in Kafka once every
-- message it consumed of the partition is stored and the consumer's
-- position lies past them; it now moves the database's position the same
-- way, from its reporter's session (report_feeder's), with this function.
--
-- Compare and set: a position moves from exactly from_offset to to_offset
-- (a later one); where it is anywhere else (a batch moved it since, an
-- operator set it, a restore put it back) it stays, and no row is created.
-- The rows are locked in the order the batch function locks them (topic
-- bytes, partition), so a report and a batch never deadlock.  The group
-- must be the caller's (check_consumer_group).  Returns how many positions
-- moved.
--
-- Grants for a feeder to move them (grant_feeder grants it):
--   GRANT EXECUTE ON FUNCTION
--     received_orders.advance_positions(text, text[], integer[], bigint[],
--       bigint[])
--   TO feeder;
-- Without it the feeder logs once that it leaves them, and consumer_lag
-- reads 1 for a partition whose last record is a marker.
-- ---------------------------------------------------------------------------

CREATE FUNCTION received_orders.advance_positions(
	consumer_group text,
	kafka_topics text[],
	kafka_partitions integer[],
	from_offsets bigint[],
	to_offsets bigint[])
RETURNS integer
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	moved integer;
BEGIN
	IF consumer_group IS NULL OR kafka_topics IS NULL OR kafka_partitions IS NULL
	   OR from_offsets IS NULL OR to_offsets IS NULL THEN
		RAISE EXCEPTION 'consumer_group, kafka_topics, kafka_partitions, from_offsets and to_offsets must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF pg_catalog.cardinality(kafka_topics) OPERATOR(pg_catalog.<>) pg_catalog.cardinality(kafka_partitions)
	   OR pg_catalog.cardinality(kafka_topics) OPERATOR(pg_catalog.<>) pg_catalog.cardinality(from_offsets)
	   OR pg_catalog.cardinality(kafka_topics) OPERATOR(pg_catalog.<>) pg_catalog.cardinality(to_offsets) THEN
		RAISE EXCEPTION 'kafka_topics, kafka_partitions, from_offsets and to_offsets must have one element per partition'
			USING ERRCODE = 'array_subscript_error',
			      DETAIL = pg_catalog.format('They have %s, %s, %s and %s elements.',
			                                 pg_catalog.cardinality(kafka_topics),
			                                 pg_catalog.cardinality(kafka_partitions),
			                                 pg_catalog.cardinality(from_offsets),
			                                 pg_catalog.cardinality(to_offsets));
	END IF;
	IF pg_catalog.cardinality(kafka_topics) OPERATOR(pg_catalog.>) 4096 THEN
		RAISE EXCEPTION 'a call lists % partitions; at most 4096 are moved at once',
			pg_catalog.cardinality(kafka_topics)
			USING ERRCODE = 'program_limit_exceeded';
	END IF;
	IF (SELECT pg_catalog.sum(pg_catalog.octet_length(t))
	      FROM pg_catalog.unnest(advance_positions.kafka_topics) AS t) OPERATOR(pg_catalog.>) 131072 THEN
		RAISE EXCEPTION 'a call''s topic names add up to more than 131072 bytes'
			USING ERRCODE = 'program_limit_exceeded',
			      HINT = 'Each partition repeats its topic''s name; at most 128 kB of names are taken per call.';
	END IF;
	IF consumer_group OPERATOR(pg_catalog.=) ''
	   OR EXISTS (SELECT FROM ROWS FROM (pg_catalog.unnest(advance_positions.kafka_topics),
	                                     pg_catalog.unnest(advance_positions.kafka_partitions),
	                                     pg_catalog.unnest(advance_positions.from_offsets),
	                                     pg_catalog.unnest(advance_positions.to_offsets))
	                          AS t (kafka_topic, kafka_partition, from_offset, to_offset)
	               WHERE t.kafka_topic IS NULL OR t.kafka_partition IS NULL
	                  OR t.from_offset IS NULL OR t.to_offset IS NULL
	                  OR pg_catalog.octet_length(t.kafka_topic) OPERATOR(pg_catalog.=) 0
	                  OR pg_catalog.octet_length(t.kafka_topic) OPERATOR(pg_catalog.>) 249
	                  OR t.kafka_partition OPERATOR(pg_catalog.<) 0
	                  OR t.from_offset OPERATOR(pg_catalog.<) 0
	                  OR t.to_offset OPERATOR(pg_catalog.<=) t.from_offset) THEN
		RAISE EXCEPTION 'invalid position advance for consumer group "%"', consumer_group
			USING ERRCODE = 'invalid_parameter_value',
			      HINT = 'The group must not be empty; each topic has 1 to 249 bytes, no element is NULL, partitions and from_offsets are not negative, and each to_offset lies above its from_offset (positions only move forwards).';
	END IF;
	IF (SELECT pg_catalog.count(*) FROM (SELECT DISTINCT t.kafka_topic, t.kafka_partition
	                                       FROM ROWS FROM (pg_catalog.unnest(advance_positions.kafka_topics),
	                                                       pg_catalog.unnest(advance_positions.kafka_partitions))
	                                            AS t (kafka_topic, kafka_partition)) d)
	   OPERATOR(pg_catalog.<>) pg_catalog.cardinality(kafka_topics) THEN
		RAISE EXCEPTION 'a partition is listed twice in a position advance for consumer group "%"', consumer_group
			USING ERRCODE = 'invalid_parameter_value',
			      HINT = 'List each partition once, with the position it has and the one it moves to.';
	END IF;
	PERFORM received_orders.check_consumer_group(advance_positions.consumer_group, NULL);

	-- lock in the batch function's order: topic bytes, then partition
	PERFORM FROM received_orders.received_orders_positions p,
	        ROWS FROM (pg_catalog.unnest(advance_positions.kafka_topics),
	                   pg_catalog.unnest(advance_positions.kafka_partitions),
	                   pg_catalog.unnest(advance_positions.from_offsets))
	        AS t (kafka_topic, kafka_partition, from_offset)
	  WHERE p.consumer_group OPERATOR(pg_catalog.=) advance_positions.consumer_group
	    AND p.kafka_topic OPERATOR(pg_catalog.=) t.kafka_topic
	    AND p.kafka_partition OPERATOR(pg_catalog.=) t.kafka_partition
	    AND p.next_offset OPERATOR(pg_catalog.=) t.from_offset
	  ORDER BY p.kafka_topic COLLATE "C", p.kafka_partition
	    FOR UPDATE OF p;

	UPDATE received_orders.received_orders_positions p
	   SET next_offset = t.to_offset, updated_at = pg_catalog.now()
	  FROM ROWS FROM (pg_catalog.unnest(advance_positions.kafka_topics),
	                  pg_catalog.unnest(advance_positions.kafka_partitions),
	                  pg_catalog.unnest(advance_positions.from_offsets),
	                  pg_catalog.unnest(advance_positions.to_offsets))
	       AS t (kafka_topic, kafka_partition, from_offset, to_offset)
	 WHERE p.consumer_group OPERATOR(pg_catalog.=) advance_positions.consumer_group
	   AND p.kafka_topic OPERATOR(pg_catalog.=) t.kafka_topic
	   AND p.kafka_partition OPERATOR(pg_catalog.=) t.kafka_partition
	   AND p.next_offset OPERATOR(pg_catalog.=) t.from_offset;
	GET DIAGNOSTICS moved = ROW_COUNT;
	RETURN moved;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.advance_positions(text, text[], integer[], bigint[], bigint[]) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.advance_positions(text, text[], integer[], bigint[], bigint[]) IS
	'Move a consumer group''s position of each partition listed from exactly from_offset to the later to_offset (a feeder, past transaction markers and aborted messages, which hold no event); a position anywhere else stays, none is created (the group must be the caller''s); returns how many moved';
-- end of section: advance_positions -----------------------------------------

-- ---------------------------------------------------------------------------
-- grant_feeder and revoke_feeder: a feeder's rights in one statement.
--
-- A feeder's role needs USAGE on the schema and EXECUTE on nine functions
-- (three forms of the batch function, its positions, its reports, its
-- watermarks, gaps and advances past markers); written out that is some twenty lines of overloads,
-- one of fifteen arguments, which a DBA gets wrong or leaves behind when a
-- version adds one.  grant_feeder(role) grants exactly those, and
-- revoke_feeder(role) takes them back; the list lives here, one place, and
-- pgTAP 18_grant_feeder fails when a function of the schema is added that
-- it has not classified as a feeder's or not.
--
-- A function rather than a role the extension creates: roles belong to the
-- cluster, so CREATE EXTENSION in a second database would find the role
-- already there, and DROP EXTENSION would leave it behind.
--
-- Both run with the caller's rights (SECURITY INVOKER): the grants are the
-- caller's own statements, made only if the caller may make them.  They
-- refuse (42501) a caller that is neither a superuser nor a member of the
-- extension's owner, and EXECUTE on them is revoked from PUBLIC.  Granting
-- twice changes nothing.  revoke_feeder leaves USAGE on the schema to a
-- role that still holds another privilege in it (an application's
-- materialize_order, say).
-- ---------------------------------------------------------------------------

-- The one list: every function a feeder calls, each form of the batch
-- function it may use (plain, outbox, Schema Registry).
CREATE FUNCTION received_orders.feeder_functions()
RETURNS SETOF regprocedure
LANGUAGE sql STABLE PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
SELECT p::pg_catalog.regprocedure FROM pg_catalog.unnest(ARRAY[
	'received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[])',
	'received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[])',
	'received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[], bytea[], integer[], text[], uuid[])',
	'received_orders.consumer_positions(text, text)',
	'received_orders.restart_position(text, text, integer, bigint, bigint)',
	'received_orders.report_feeder(text, text, text, integer, text, timestamptz, text, text[], integer[], bigint[], text, timestamptz, interval, interval)',
	'received_orders.record_high_watermarks(text, text, text[], integer[], bigint[])',
	'received_orders.record_position_gap(text, text, integer, bigint, bigint, boolean)',
	'received_orders.advance_positions(text, text[], integer[], bigint[], bigint[])']::pg_catalog.text[]) AS p
$$;

REVOKE EXECUTE ON FUNCTION received_orders.feeder_functions() FROM PUBLIC;

COMMENT ON FUNCTION received_orders.feeder_functions() IS
	'The functions a feeder calls, which grant_feeder() grants and revoke_feeder() revokes';

CREATE FUNCTION received_orders.grant_feeder(feeder regrole)
RETURNS SETOF regprocedure
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	f regprocedure;
BEGIN
	IF feeder IS NULL THEN
		RAISE EXCEPTION 'feeder must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles r
	                WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER AND r.rolsuper)
	   AND NOT pg_catalog.pg_has_role(CURRENT_USER,
	           (SELECT e.extowner FROM pg_catalog.pg_extension e
	             WHERE e.extname OPERATOR(pg_catalog.=) 'received_orders'), 'MEMBER') THEN
		RAISE EXCEPTION 'permission denied to grant a feeder''s privileges'
			USING ERRCODE = 'insufficient_privilege',
			      DETAIL = pg_catalog.format('Role %s is neither a superuser nor a member of the extension''s owner.',
			                                 pg_catalog.quote_ident(CURRENT_USER::text)),
			      HINT = 'A superuser runs it: SELECT received_orders.grant_feeder(''ROLE'');';
	END IF;

	EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA received_orders TO %s', feeder);
	FOR f IN SELECT received_orders.feeder_functions()
	LOOP
		EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', f, feeder);
		RETURN NEXT f;
	END LOOP;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.grant_feeder(regrole) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.grant_feeder(regrole) IS
	'Grant a feeder''s role what the feeder calls and nothing more: USAGE on the schema, EXECUTE on the batch function''s three forms with a consumer group, consumer_positions(text, text), restart_position, report_feeder, record_high_watermarks, record_position_gap and advance_positions; superusers and the extension''s owner only; returns the functions granted';

CREATE FUNCTION received_orders.revoke_feeder(feeder regrole)
RETURNS SETOF regprocedure
LANGUAGE plpgsql VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY INVOKER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	f regprocedure;
	others bigint;
BEGIN
	IF feeder IS NULL THEN
		RAISE EXCEPTION 'feeder must not be null'
			USING ERRCODE = 'null_value_not_allowed';
	END IF;
	IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles r
	                WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER AND r.rolsuper)
	   AND NOT pg_catalog.pg_has_role(CURRENT_USER,
	           (SELECT e.extowner FROM pg_catalog.pg_extension e
	             WHERE e.extname OPERATOR(pg_catalog.=) 'received_orders'), 'MEMBER') THEN
		RAISE EXCEPTION 'permission denied to revoke a feeder''s privileges'
			USING ERRCODE = 'insufficient_privilege',
			      DETAIL = pg_catalog.format('Role %s is neither a superuser nor a member of the extension''s owner.',
			                                 pg_catalog.quote_ident(CURRENT_USER::text)),
			      HINT = 'A superuser runs it: SELECT received_orders.revoke_feeder(''ROLE'');';
	END IF;

	FOR f IN SELECT received_orders.feeder_functions() LOOP
		EXECUTE pg_catalog.format('REVOKE EXECUTE ON FUNCTION %s FROM %s', f, feeder);
		RETURN NEXT f;
	END LOOP;
	-- USAGE stays when the role holds another privilege in the schema
	SELECT pg_catalog.count(*) INTO others
	  FROM (SELECT p.proacl AS acl FROM pg_catalog.pg_proc p
	         WHERE p.pronamespace OPERATOR(pg_catalog.=) 'received_orders'::pg_catalog.regnamespace
	        UNION ALL
	        SELECT c.relacl FROM pg_catalog.pg_class c
	         WHERE c.relnamespace OPERATOR(pg_catalog.=) 'received_orders'::pg_catalog.regnamespace) o,
	       pg_catalog.aclexplode(o.acl) a
	 WHERE a.grantee OPERATOR(pg_catalog.=) feeder::pg_catalog.oid;
	IF others OPERATOR(pg_catalog.=) 0 THEN
		EXECUTE pg_catalog.format('REVOKE USAGE ON SCHEMA received_orders FROM %s', feeder);
	ELSE
		RAISE NOTICE 'role % keeps USAGE on schema received_orders: it holds % other privileges in it',
			feeder, others;
	END IF;
END
$$;

REVOKE EXECUTE ON FUNCTION received_orders.revoke_feeder(regrole) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.revoke_feeder(regrole) IS
	'Revoke what grant_feeder() granted: EXECUTE on the functions a feeder calls, and USAGE on the schema unless the role holds another privilege in it; superusers and the extension''s owner only; returns the functions revoked';
-- end of section: grant_feeder, revoke_feeder -------------------------------

-- ---------------------------------------------------------------------------
-- feeders without error text; feeder_errors for the DBA.
--
-- A feeder reports its last error as it logged it, and an error quotes what
-- it was about: the database's "invalid input syntax for type uuid:
-- "..."" quotes a value of the message, a conflict quotes an order's
-- externalReference.  The view feeders, which pg_monitor reads, showed that
-- text whole.  Now its column last_error holds the error's class, by the
-- rule of quarantine_summary: the text before its first double quote, with
-- UUIDs and numbers masked, and "..." where the quoted part was.  The whole
-- text is in the view feeder_errors, which no role but the owner reads
-- unless a DBA grants it.  feeders keeps its columns (CREATE OR REPLACE:
-- a DBA's view on it and pg_monitor's grant stay).
-- ---------------------------------------------------------------------------

CREATE OR REPLACE VIEW received_orders.feeders AS
SELECT f.consumer_group, f.member_id, f.host, f.pid, f.version, f.started_at,
       f.last_seen,
       pg_catalog.date_trunc('second', pg_catalog.now() OPERATOR(pg_catalog.-) f.last_seen) AS last_seen_age,
       f.state,
       (f.state OPERATOR(pg_catalog.<>) 'stopped'
        AND f.last_seen OPERATOR(pg_catalog.>) (pg_catalog.now()
            OPERATOR(pg_catalog.-) (f.report_interval OPERATOR(pg_catalog.*) 3::double precision))) AS healthy,
       pg_catalog.cardinality(f.kafka_partitions) AS assigned_partitions,
       (SELECT pg_catalog.array_agg(t.kafka_topic OPERATOR(pg_catalog.||) ' ['
                OPERATOR(pg_catalog.||) t.kafka_partition::text OPERATOR(pg_catalog.||) ']'
                ORDER BY t.kafka_topic, t.kafka_partition)
          FROM ROWS FROM (pg_catalog.unnest(f.kafka_topics), pg_catalog.unnest(f.kafka_partitions))
               AS t (kafka_topic, kafka_partition)) AS partitions,
       pg_catalog.regexp_replace(pg_catalog.regexp_replace(
           pg_catalog.regexp_replace(f.last_error, '".*$', '"..."'),
           '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}', '<uuid>', 'g'),
           '[0-9]+', 'N', 'g') AS last_error,
       f.last_error_at, f.report_interval
  FROM received_orders.received_orders_feeders f;

COMMENT ON VIEW received_orders.feeders IS
	'Every feeder as it last reported itself: state, age of its last report, healthy (not stopped, reported within three report intervals), its partitions, the class of its last error (the text before its first double quote, UUIDs and numbers masked: no message text; the whole text is in feeder_errors) and when; pg_monitor reads it';
COMMENT ON COLUMN received_orders.feeders.last_error IS
	'The class of the feeder''s last error: its text before the first double quote, UUIDs and numbers masked; the whole text is in the view feeder_errors';

CREATE VIEW received_orders.feeder_errors AS
SELECT f.consumer_group, f.member_id, f.host, f.state, f.last_error, f.last_error_at
  FROM received_orders.received_orders_feeders f
 WHERE f.last_error IS NOT NULL;

COMMENT ON VIEW received_orders.feeder_errors IS
	'Each feeder''s last error as it reported it, whole; errors quote message text (values, externalReferences): only the owner reads it unless a DBA grants it';

REVOKE ALL ON received_orders.feeder_errors FROM PUBLIC;
-- end of section: feeders, feeder_errors ------------------------------------
