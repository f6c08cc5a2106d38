-- received_orders--1.2--1.3.sql — update from 1.2 to 1.3.
--
-- Every schema change of 1.3 is in this one script; the scripts of 1.0, 1.1
-- and 1.2 stay frozen.  Each section below says what it adds and why.

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
	               'received_orders_consumer_groups_owner_idx']::pg_catalog.name[])
	        UNION ALL
	        SELECT pg_catalog.format('function received_orders.%I(%s)', p.proname,
	                                 pg_catalog.pg_get_function_identity_arguments(p.oid))
	          FROM pg_catalog.pg_proc p
	         WHERE p.pronamespace OPERATOR(pg_catalog.=) 'received_orders'::pg_catalog.regnamespace
	           AND p.proname OPERATOR(pg_catalog.=) 'consumer_group_claim_check'
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
-- 1.2 entered the groups of an updated database unclaimed, and the first
-- role other than a superuser to use each claimed it: between the update and
-- the DBA's set_consumer_group_owner, any role granted the batch function or
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
-- 1.2's report_feeder stored what it was given: a role wrote 5,000 member
-- rows into 500 groups in one statement, with unbounded host, version and
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
-- 1.2's quarantine_summary showed pg_monitor one whole reason per kind
-- (example), and the kind itself masked only well-formed quoted strings:
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
