#!/bin/bash
# test/upgrade/01-update-path.t — a database created at version 1.0, holding
# orders, a quarantined message and a role granted 1.0's batch function,
# updates to the control file's default_version with ALTER EXTENSION ...
# UPDATE, and afterwards has every object of the contract of that version,
# the same member objects as a fresh install, all of its data and the role's
# grants; after the feeder's grant documented for 1.1 the role calls the
# batch function of a consumer group, which records positions, reads them
# with consumer_positions and moves one back with restart_position (and may
# execute nothing else); set_consumer_position says what it moved.
#
# Generic where it can be: the target is default_version as PostgreSQL reads
# it from the installed control file (pg_available_extensions), and the
# contract's objects carry the version that introduced them.  The checks of
# 1.1's positions run when the target is 1.1 or later.
# TAP on stdout.  Uses the harness's cluster, or starts its own when run alone.

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/lib/orders.sh
. "$(dirname "$0")/../lib/orders.sh"

OLD=ro_upgrade_old_$$
FRESH=ro_upgrade_fresh_$$
BASE=1.0
POSITIONS=1.1
GROUPS=1.2
CLAIMS=1.3
MID=ro_upgrade_mid_$$
ROLE=ro_upgrade_feeder_$$
GROUP=upgrade-group

# sql_capture DB SQL — run SQL, print its output with notices (stderr)
# merged; fails as psql does
sql_capture() {
	pg_psql -At -d "$1" -c "$2" 2>&1
}

# extversion DB — the installed version of received_orders in DB
extversion() {
	pg_query "$1" "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'"
}

# materialize_sql N REF — the SQL calling materialize_order for order N
materialize_sql() {
	printf "SELECT received_orders.materialize_order('%s');" "$(ro_order_event "$1" "$2")"
}

# create_at_version DB VERSION — a new database with the extension at VERSION
create_at_version() {
	pg_createdb "$1" && pg_query "$1" "CREATE EXTENSION received_orders VERSION '$2'"
}

# problems DB — run the SQL read from stdin, each row of which names one
# problem; a failing query counts as a problem too, never as "none"
problems() {
	pg_psql -At -d "$1" 2>&1 || echo "query failed in $1"
}

# members DB — the extension's member objects, described, sorted
members() {
	pg_query "$1" "SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
		FROM pg_depend d JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
		WHERE e.extname = 'received_orders' AND d.deptype = 'e' ORDER BY 1" ||
		echo "members of $1: query failed"
}

# version_at_least A B — true when version A is B or later
version_at_least() {
	[[ $(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1) == "$2" ]]
}

# missing_objects DB VERSION — one line per object of VERSION's contract
# (table, column, key, check, enum label, function, configuration dump,
# setting) that DB lacks; each object names the version that introduced it;
# empty if none
missing_objects() {
	pg_psql -At -d "$1" -v version="$2" 2>&1 <<-'EOF' || echo "query failed in $1"
		SELECT coalesce((SELECT probin FROM pg_proc
		                  WHERE oid = to_regprocedure('received_orders.materialize_order(jsonb)')),
		                '$libdir/received_orders') AS lib \gset
		LOAD :'lib';
		CREATE TEMP VIEW want_columns(tab, col, typ, not_null, since) AS VALUES
			('received_orders', 'order_id', 'uuid', true, '1.0'),
			('received_orders', 'external_reference', 'text', true, '1.0'),
			('received_orders', 'payload', 'jsonb', true, '1.0'),
			('received_orders', 'received_at', 'timestamp with time zone', true, '1.0'),
			('received_orders_quarantine', 'id', 'bigint', true, '1.0'),
			('received_orders_quarantine', 'kafka_topic', 'text', false, '1.0'),
			('received_orders_quarantine', 'kafka_partition', 'integer', false, '1.0'),
			('received_orders_quarantine', 'kafka_offset', 'bigint', false, '1.0'),
			('received_orders_quarantine', 'kafka_key', 'bytea', false, '1.0'),
			('received_orders_quarantine', 'raw_value', 'bytea', false, '1.0'),
			('received_orders_quarantine', 'order_id', 'uuid', false, '1.0'),
			('received_orders_quarantine', 'outcome', 'received_orders.materialize_outcome', true, '1.0'),
			('received_orders_quarantine', 'sqlstate', 'text', true, '1.0'),
			('received_orders_quarantine', 'reason', 'text', true, '1.0'),
			('received_orders_quarantine', 'quarantined_at', 'timestamp with time zone', true, '1.0'),
			('received_orders_positions', 'consumer_group', 'text', true, '1.1'),
			('received_orders_positions', 'kafka_topic', 'text', true, '1.1'),
			('received_orders_positions', 'kafka_partition', 'integer', true, '1.1'),
			('received_orders_positions', 'next_offset', 'bigint', true, '1.1'),
			('received_orders_positions', 'updated_at', 'timestamp with time zone', true, '1.1'),
			('received_orders_quarantine', 'kafka_key_bytes', 'integer', false, '1.1'),
			('received_orders_quarantine', 'raw_value_bytes', 'integer', false, '1.1'),
			('received_orders_quarantine', 'message_digest', 'bytea', true, '1.1'),
			('received_orders_quarantine', 'envelope', 'text', false, '1.1'),
			('received_orders_quarantine', 'kafka_headers', 'jsonb', false, '1.1'),
			('received_orders_quarantine', 'legacy_copy', 'integer', false, '1.1'),
			('received_orders_consumer_groups', 'consumer_group', 'text', true, '1.2'),
			('received_orders_consumer_groups', 'owner_role', 'name', false, '1.2'),
			('received_orders_consumer_groups', 'kafka_cluster_id', 'text', false, '1.2'),
			('received_orders_consumer_groups', 'created_at', 'timestamp with time zone', true, '1.2'),
			('received_orders_consumer_groups', 'updated_at', 'timestamp with time zone', true, '1.2'),
			('received_orders_quarantine', 'value_schema_id', 'integer', false, '1.2'),
			('received_orders_quarantine', 'value_schema_guid', 'uuid', false, '1.2'),
			('received_orders', 'value_schema_id', 'integer', false, '1.2'),
			('received_orders_positions', 'high_watermark', 'bigint', false, '1.2'),
			('received_orders_positions', 'high_watermark_at', 'timestamp with time zone', false, '1.2'),
			('received_orders_positions', 'member_id', 'text', false, '1.2'),
			('received_orders_feeders', 'consumer_group', 'text', true, '1.2'),
			('received_orders_feeders', 'member_id', 'text', true, '1.2'),
			('received_orders_feeders', 'host', 'text', false, '1.2'),
			('received_orders_feeders', 'pid', 'integer', false, '1.2'),
			('received_orders_feeders', 'version', 'text', false, '1.2'),
			('received_orders_feeders', 'started_at', 'timestamp with time zone', false, '1.2'),
			('received_orders_feeders', 'last_seen', 'timestamp with time zone', true, '1.2'),
			('received_orders_feeders', 'state', 'text', true, '1.2'),
			('received_orders_feeders', 'kafka_topics', 'text[]', true, '1.2'),
			('received_orders_feeders', 'kafka_partitions', 'integer[]', true, '1.2'),
			('received_orders_feeders', 'high_watermarks', 'bigint[]', true, '1.2'),
			('received_orders_feeders', 'last_error', 'text', false, '1.2'),
			('received_orders_feeders', 'last_error_at', 'timestamp with time zone', false, '1.2'),
			('received_orders_feeders', 'report_interval', 'interval', true, '1.2'),
			('received_orders_replays', 'quarantine_id', 'bigint', true, '1.2'),
			('received_orders_replays', 'kafka_topic', 'text', false, '1.2'),
			('received_orders_replays', 'kafka_partition', 'integer', false, '1.2'),
			('received_orders_replays', 'kafka_offset', 'bigint', false, '1.2'),
			('received_orders_replays', 'outcome', 'received_orders.materialize_outcome', true, '1.2'),
			('received_orders_replays', 'sqlstate', 'text', true, '1.2'),
			('received_orders_replays', 'reason', 'text', true, '1.2'),
			('received_orders_replays', 'quarantined_at', 'timestamp with time zone', true, '1.2'),
			('received_orders_replays', 'order_id', 'uuid', true, '1.2'),
			('received_orders_replays', 'replayed_as', 'received_orders.materialize_outcome', true, '1.2'),
			('received_orders_replays', 'replayed_at', 'timestamp with time zone', true, '1.2'),
			('received_orders_position_gaps', 'consumer_group', 'text', true, '1.3'),
			('received_orders_position_gaps', 'kafka_topic', 'text', true, '1.3'),
			('received_orders_position_gaps', 'kafka_partition', 'integer', true, '1.3'),
			('received_orders_position_gaps', 'first_lost', 'bigint', true, '1.3'),
			('received_orders_position_gaps', 'last_lost', 'bigint', true, '1.3'),
			('received_orders_position_gaps', 'detected_at', 'timestamp with time zone', true, '1.3'),
			('received_orders_position_gaps', 'detected_by', 'name', true, '1.3'),
			('received_orders_position_gaps', 'accepted_by', 'name', false, '1.3'),
			('received_orders_position_gaps', 'accepted_at', 'timestamp with time zone', false, '1.3');
		CREATE TEMP VIEW want_defaults(tab, col, since) AS VALUES
			('received_orders', 'received_at', '1.0'),
			('received_orders_quarantine', 'quarantined_at', '1.0'),
			('received_orders_positions', 'updated_at', '1.1'),
			('received_orders_consumer_groups', 'created_at', '1.2'),
			('received_orders_consumer_groups', 'updated_at', '1.2'),
			('received_orders_feeders', 'last_seen', '1.2'),
			('received_orders_replays', 'replayed_at', '1.2'),
			('received_orders_position_gaps', 'detected_at', '1.3');
		-- until: the first version without it (1.1 keeps a quarantine row per
		-- message, not per coordinates)
		CREATE TEMP VIEW want_keys(tab, kind, cols, since, until) AS VALUES
			('received_orders', 'primary key', ARRAY['order_id'], '1.0', NULL),
			('received_orders_quarantine', 'primary key', ARRAY['id'], '1.0', NULL),
			('received_orders_quarantine', 'unique', ARRAY['kafka_topic', 'kafka_partition', 'kafka_offset'], '1.0', '1.1'),
			('received_orders_quarantine', 'unique', ARRAY['kafka_topic', 'kafka_partition', 'kafka_offset', 'message_digest', 'legacy_copy'], '1.1', NULL),
			('received_orders_positions', 'primary key', ARRAY['consumer_group', 'kafka_topic', 'kafka_partition'], '1.1', NULL),
			('received_orders_consumer_groups', 'primary key', ARRAY['consumer_group'], '1.2', NULL),
			('received_orders_feeders', 'primary key', ARRAY['consumer_group', 'member_id'], '1.2', NULL),
			('received_orders_replays', 'primary key', ARRAY['quarantine_id'], '1.2', NULL),
			('received_orders_position_gaps', 'primary key', ARRAY['consumer_group', 'kafka_topic', 'kafka_partition', 'first_lost'], '1.3', NULL),
			('received_orders_position_gaps', 'unique', ARRAY['consumer_group', 'kafka_topic', 'kafka_partition'], '1.3', NULL);
		CREATE TEMP VIEW want_checks(tab, name, since) AS VALUES
			('received_orders_positions', 'received_orders_positions_group_check', '1.1'),
			('received_orders_positions', 'received_orders_positions_topic_check', '1.1'),
			('received_orders_positions', 'received_orders_positions_partition_check', '1.1'),
			('received_orders_positions', 'received_orders_positions_offset_check', '1.1'),
			('received_orders_quarantine', 'received_orders_quarantine_digest_check', '1.1'),
			('received_orders_quarantine', 'received_orders_quarantine_lengths_check', '1.1'),
			('received_orders_quarantine', 'received_orders_quarantine_envelope_check', '1.1'),
			('received_orders_quarantine', 'received_orders_quarantine_headers_check', '1.1'),
			('received_orders_quarantine', 'received_orders_quarantine_legacy_copy_check', '1.1'),
			('received_orders_feeders', 'received_orders_feeders_group_check', '1.2'),
			('received_orders_feeders', 'received_orders_feeders_member_check', '1.2'),
			('received_orders_feeders', 'received_orders_feeders_state_check', '1.2'),
			('received_orders_feeders', 'received_orders_feeders_partitions_check', '1.2'),
			('received_orders_feeders', 'received_orders_feeders_interval_check', '1.2'),
			('received_orders_position_gaps', 'received_orders_position_gaps_range_check', '1.3'),
			('received_orders_position_gaps', 'received_orders_position_gaps_accepted_check', '1.3');
		CREATE TEMP VIEW want_labels(label, ord, since) AS VALUES
			('inserted', 1, '1.0'), ('duplicate', 2, '1.0'), ('conflict', 3, '1.0'), ('rejected', 4, '1.0'),
			('skipped', 5, '1.1');
		CREATE TEMP VIEW want_functions(sig, since) AS VALUES
			('received_orders.materialize_order(jsonb)', '1.0'),
			('received_orders.materialize_orders(bytea[],text[],integer[],bigint[],bytea[])', '1.0'),
			('received_orders.replay_quarantined(bigint)', '1.0'),
			('received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[])', '1.1'),
			('received_orders.consumer_positions(text)', '1.1'),
			('received_orders.restart_position(text,text,integer,bigint,bigint)', '1.1'),
			('received_orders.set_consumer_position(text,text,integer,bigint)', '1.1'),
			('received_orders.forget_consumer_positions(text,text)', '1.1'),
			('received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[])', '1.1'),
			('received_orders.adopt_consumer_position(text,text,integer,bigint)', '1.2'),
			('received_orders.check_consumer_group(text,text)', '1.2'),
			('received_orders.consumer_positions(text,text)', '1.2'),
			('received_orders.set_consumer_group_owner(text,name)', '1.2'),
			('received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[],bytea[],integer[],text[],uuid[])', '1.2'),
			('received_orders.report_feeder(text,text,text,integer,text,timestamptz,text,text[],integer[],bigint[],text,timestamptz,interval,interval)', '1.2'),
			('received_orders.record_high_watermarks(text,text,text[],integer[],bigint[])', '1.2'),
			('received_orders.record_position_gap(text,text,integer,bigint,bigint,boolean)', '1.3'),
			('received_orders.accept_position_gap(text,text,integer)', '1.3'),
			('received_orders.advance_positions(text,text[],integer[],bigint[],bigint[])', '1.3'),
			('received_orders.feeder_functions()', '1.3'),
			('received_orders.grant_feeder(regrole)', '1.3'),
			('received_orders.revoke_feeder(regrole)', '1.3');
		-- views, readable by pg_monitor (and not by PUBLIC)
		CREATE TEMP VIEW want_views(rel, since) AS VALUES
			('received_orders.feeders', '1.2'),
			('received_orders.consumer_lag', '1.2'),
			('received_orders.quarantine_summary', '1.2'),
			('received_orders.position_gaps', '1.3');
		CREATE TEMP VIEW want_private_views(rel, since) AS VALUES
			('received_orders.quarantine_examples', '1.3'),
			('received_orders.feeder_errors', '1.3');
		CREATE TEMP VIEW want_dumped(rel, since) AS VALUES
			('received_orders.received_orders', '1.0'),
			('received_orders.received_orders_quarantine', '1.0'),
			(pg_get_serial_sequence('received_orders.received_orders_quarantine', 'id'), '1.0'),
			('received_orders.received_orders_positions', '1.1'),
			('received_orders.received_orders_consumer_groups', '1.2'),
			('received_orders.received_orders_replays', '1.2'),
			('received_orders.received_orders_position_gaps', '1.3');
		-- the objects of the version under test: introduced by it or before
		CREATE TEMP VIEW in_version(since) AS
			SELECT DISTINCT v.since FROM (
				SELECT since FROM want_columns UNION SELECT since FROM want_defaults
				UNION SELECT since FROM want_keys UNION SELECT since FROM want_checks
				UNION SELECT since FROM want_labels UNION SELECT since FROM want_functions
				UNION SELECT since FROM want_dumped UNION SELECT since FROM want_views
				UNION SELECT since FROM want_private_views) v
			 WHERE string_to_array(v.since, '.')::int[] <= string_to_array(:'version', '.')::int[];
		SELECT 'column ' || tab || '.' || col || ' ' || typ || CASE WHEN not_null THEN ' NOT NULL' ELSE '' END
		  FROM want_columns w JOIN in_version USING (since)
		 WHERE NOT EXISTS (
			SELECT FROM pg_attribute a
			 WHERE a.attrelid = to_regclass('received_orders.' || w.tab)
			   AND a.attname = w.col AND NOT a.attisdropped
			   AND format_type(a.atttypid, a.atttypmod) = w.typ
			   AND a.attnotnull = w.not_null)
		UNION ALL
		SELECT 'default now() on ' || v.tab || '.' || v.col
		  FROM want_defaults v JOIN in_version USING (since)
		 WHERE NOT EXISTS (
			SELECT FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
			 WHERE d.adrelid = to_regclass('received_orders.' || v.tab) AND a.attname = v.col
			   AND pg_get_expr(d.adbin, d.adrelid) = 'now()')
		UNION ALL
		SELECT k.kind || ' (' || array_to_string(k.cols, ', ') || ') on ' || k.tab
		  FROM want_keys k JOIN in_version USING (since)
		 WHERE (k.until IS NULL OR string_to_array(:'version', '.')::int[] < string_to_array(k.until, '.')::int[])
		   AND NOT EXISTS (
			SELECT FROM pg_index i
			 WHERE i.indrelid = to_regclass('received_orders.' || k.tab)
			   AND i.indisunique AND (k.kind = 'unique' OR i.indisprimary)
			   AND (SELECT array_agg(a.attname::text ORDER BY n.ord)
			          FROM unnest(i.indkey::int2[]) WITH ORDINALITY n(attnum, ord)
			          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = n.attnum) = k.cols)
		UNION ALL
		SELECT 'check constraint ' || c.name || ' on ' || c.tab
		  FROM want_checks c JOIN in_version USING (since)
		 WHERE NOT EXISTS (
			SELECT FROM pg_constraint k
			 WHERE k.conrelid = to_regclass('received_orders.' || c.tab) AND k.contype = 'c'
			   AND k.conname = c.name)
		UNION ALL
		SELECT 'enum received_orders.materialize_outcome ('
		       || (SELECT string_agg(label, ', ' ORDER BY ord) FROM want_labels JOIN in_version USING (since)) || ')'
		 WHERE (SELECT array_agg(enumlabel::text ORDER BY enumsortorder) FROM pg_enum
		         WHERE enumtypid = to_regtype('received_orders.materialize_outcome'))
		       IS DISTINCT FROM (SELECT array_agg(label ORDER BY ord) FROM want_labels JOIN in_version USING (since))
		UNION ALL
		SELECT 'function ' || sig FROM want_functions JOIN in_version USING (since) WHERE to_regprocedure(sig) IS NULL
		UNION ALL
		SELECT 'configuration dump of ' || rel
		  FROM want_dumped v JOIN in_version USING (since)
		 WHERE NOT EXISTS (
			SELECT FROM pg_extension e
			 WHERE e.extname = 'received_orders' AND to_regclass(v.rel) = ANY (e.extconfig))
		UNION ALL
		SELECT 'view ' || rel || ' readable by pg_monitor, not by PUBLIC'
		  FROM want_views JOIN in_version USING (since)
		 WHERE to_regclass(rel) IS NULL
		    OR NOT has_table_privilege('pg_monitor', to_regclass(rel), 'SELECT')
		    OR has_table_privilege('public', to_regclass(rel), 'SELECT')
		UNION ALL
		SELECT 'view ' || rel || ' readable by neither pg_monitor nor PUBLIC'
		  FROM want_private_views JOIN in_version USING (since)
		 WHERE to_regclass(rel) IS NULL
		    OR has_table_privilege('pg_monitor', to_regclass(rel), 'SELECT')
		    OR has_table_privilege('public', to_regclass(rel), 'SELECT')
		UNION ALL
		SELECT 'setting received_orders.max_event_bytes = 1048576'
		 WHERE NOT EXISTS (SELECT FROM pg_settings
		                    WHERE name = 'received_orders.max_event_bytes' AND setting = '1048576')
		ORDER BY 1;
	EOF
}

# insecure_functions DB — one line per extension function that is not
# SECURITY DEFINER with search_path pinned to pg_catalog, pg_temp (and no
# other setting but plan_cache_mode, which the batch functions set from
# 1.4), or that PUBLIC may execute; empty if none.  grant_feeder and revoke_feeder are the
# exceptions: their GRANTs must be the caller's, so they must NOT be
# SECURITY DEFINER
insecure_functions() {
	problems "$1" <<<"SELECT p.oid::regprocedure::text || ': ' || concat_ws(', ',
			CASE WHEN p.prosecdef AND p.oid = ANY (invoker.f) THEN 'SECURITY DEFINER'
			     WHEN NOT p.prosecdef AND p.oid <> ALL (invoker.f) THEN 'not SECURITY DEFINER' END,
			CASE WHEN array_remove(p.proconfig, 'plan_cache_mode=force_generic_plan') IS DISTINCT FROM ARRAY['search_path=pg_catalog, pg_temp']
			     THEN 'search_path ' || coalesce(array_to_string(p.proconfig, ' '), 'not set') END,
			CASE WHEN has_function_privilege('public', p.oid, 'EXECUTE') THEN 'PUBLIC may execute' END)
		FROM pg_proc p,
		     (SELECT array_remove(ARRAY[to_regprocedure('received_orders.grant_feeder(regrole)'),
		                                to_regprocedure('received_orders.revoke_feeder(regrole)')]::oid[], NULL) AS f) invoker
		WHERE p.pronamespace = 'received_orders'::regnamespace
		  AND (p.prosecdef = (p.oid = ANY (invoker.f))
		       OR array_remove(p.proconfig, 'plan_cache_mode=force_generic_plan') IS DISTINCT FROM ARRAY['search_path=pg_catalog, pg_temp']
		       OR has_function_privilege('public', p.oid, 'EXECUTE'))
		ORDER BY 1"
}

tap_plan 33

pg_ensure_cluster >&2
# roles are the cluster's: dropped after the databases holding their grants
ro_on_exit "psql -X -q -d postgres -c 'DROP ROLE IF EXISTS $ROLE' >/dev/null 2>&1"
ro_on_exit "dropdb --if-exists $OLD 2>/dev/null; dropdb --if-exists $FRESH 2>/dev/null; dropdb --if-exists $MID 2>/dev/null"

DEFAULT=$(pg_query postgres "SELECT default_version FROM pg_available_extensions WHERE name = 'received_orders'")
[[ -n $DEFAULT ]] || tap_bail "received_orders is not installed (no control file)"
tap_diag "default_version is $DEFAULT"

tap_cmd "CREATE EXTENSION received_orders VERSION '$BASE' succeeds" \
	create_at_version "$OLD" "$BASE"
tap_last_ok || tap_bail "could not install version $BASE"

tap_is "$(extversion "$OLD")" "$BASE" "the installed version is $BASE"

tap_is "$(missing_objects "$OLD" "$BASE")" "" "version $BASE has every object of its contract"

tap_like "$(sql_capture "$OLD" "ALTER EXTENSION received_orders UPDATE TO '$BASE'"; echo "exit $?")" \
	"NOTICE: +version \"$BASE\" of extension \"received_orders\" is already installed.*exit 0$" \
	"ALTER EXTENSION ... UPDATE TO '$BASE' on $BASE succeeds with a NOTICE"

tap_is "$(pg_query "$OLD" "$(materialize_sql 1 EXT-1) $(materialize_sql 2 EXT-2)
		SELECT outcome FROM received_orders.materialize_orders(
			ARRAY[convert_to('$(ro_order_event 3 EXT-3)', 'UTF8'), '\\xff'::bytea], ARRAY['t', 't'],
			ARRAY[0, 0], ARRAY[1, 2]::bigint[], NULL) ORDER BY position;
		SELECT count(*) FROM received_orders.received_orders_quarantine")" \
	$'inserted\ninserted\ninserted\nrejected\n1' "version $BASE stores orders and quarantines a bad message"
BEFORE=$(ro_snapshot "$OLD")

tap_cmd "a feeder's role of $BASE is granted USAGE and EXECUTE on the batch function" \
	pg_query "$OLD" "CREATE ROLE $ROLE NOLOGIN;
		GRANT USAGE ON SCHEMA received_orders TO $ROLE;
		GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) TO $ROLE"

tap_is "$(problems "$OLD" <<<"SELECT 'no update path from ' || v.version || ' to $DEFAULT'
		FROM pg_available_extension_versions v
		WHERE v.name = 'received_orders' AND v.version <> '$DEFAULT'
		  AND NOT EXISTS (SELECT FROM pg_extension_update_paths('received_orders') p
		                  WHERE p.source = v.version AND p.target = '$DEFAULT' AND p.path IS NOT NULL)
		ORDER BY 1")" "" "every available version has an update path to $DEFAULT"

if [[ $DEFAULT == "$BASE" ]]; then
	WANT_UPDATE="NOTICE: +version \"$BASE\" of extension \"received_orders\" is already installed.*exit 0$"
else
	WANT_UPDATE="exit 0$"
fi
tap_like "$(sql_capture "$OLD" "ALTER EXTENSION received_orders UPDATE"; echo "exit $?")" "$WANT_UPDATE" \
	"ALTER EXTENSION received_orders UPDATE succeeds (a NOTICE when already at $DEFAULT)"

tap_is "$(extversion "$OLD")" "$DEFAULT" "the installed version is now default_version $DEFAULT"

tap_is "$(missing_objects "$OLD" "$DEFAULT")" "" "the updated extension has every object of the contract of $DEFAULT"

tap_is "$(insecure_functions "$OLD")" "" \
	"every function stays SECURITY DEFINER, search_path pinned, not executable by PUBLIC"

tap_cmd "a fresh database gets version $DEFAULT with CREATE EXTENSION" \
	pg_createdb "$FRESH" received_orders

tap_is "$(extversion "$FRESH")|$(missing_objects "$FRESH" "$DEFAULT")" "$DEFAULT|" \
	"the fresh install is at $DEFAULT and has every object of its contract"

tap_is "$(members "$OLD")" "$(members "$FRESH")" \
	"the updated extension has exactly the member objects of a fresh install"

tap_is "$(ro_snapshot "$OLD" 1.0)" "$BEFORE" "every order and quarantined message survives the update"

tap_is "$(pg_query "$OLD" "SELECT count(*) FILTER (WHERE message_digest = sha256(
		    CASE WHEN kafka_key IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || int4send(length(kafka_key)) || kafka_key END
		    || CASE WHEN raw_value IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || raw_value END)),
		  count(*) FILTER (WHERE kafka_key_bytes IS NULL AND raw_value_bytes IS NULL), count(*) > 0
		  FROM received_orders.received_orders_quarantine")" \
	"$(pg_query "$OLD" "SELECT count(*), count(*), true FROM received_orders.received_orders_quarantine")" \
	"the update gives every quarantined message the digest of its key and value (their lengths stay NULL: kept whole)"

tap_is "$(pg_query "$OLD" "$(materialize_sql 1 EXT-1) $(materialize_sql 4 EXT-4)
		SELECT outcome FROM received_orders.materialize_orders(
			ARRAY['\\xff'::bytea, '\\xfe'::bytea], ARRAY['t', 't'],
			ARRAY[0, 0], ARRAY[2, 3]::bigint[], NULL) ORDER BY position;
		SELECT count(*) FROM received_orders.received_orders;
		SELECT count(*) FROM received_orders.received_orders_quarantine")" \
	$'duplicate\ninserted\nrejected\nrejected\n4\n2' \
	"after the update: duplicates found, new orders stored, a redelivered rejected message still quarantined once"

# The role's grants survive the update --------------------------------------------

tap_is "$(pg_query "$OLD" "SELECT has_schema_privilege('$ROLE', 'received_orders', 'USAGE'),
		has_function_privilege('$ROLE',
			'received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[])', 'EXECUTE')")" \
	"t|t" "the role keeps USAGE on the schema and EXECUTE on $BASE's batch function"

tap_is "$(pg_query "$OLD" "SET ROLE $ROLE;
		SELECT outcome FROM received_orders.materialize_orders(
			ARRAY[convert_to('$(ro_order_event 5 EXT-5)', 'UTF8')], ARRAY['t'], ARRAY[0], ARRAY[4]::bigint[], NULL)")" \
	"inserted" "the role still materializes through $BASE's batch function"

tap_is "$(pg_query "$OLD" "SELECT p.oid::regprocedure::text FROM pg_proc p
		WHERE p.pronamespace = 'received_orders'::regnamespace AND has_function_privilege('$ROLE', p.oid, 'EXECUTE')
		ORDER BY 1")" \
	"received_orders.materialize_orders(bytea[],text[],integer[],bigint[],bytea[])" \
	"the update grants the role nothing more (no EXECUTE on any new function)"

# 1.1: positions ----------------------------------------------------------------------

if version_at_least "$DEFAULT" "$POSITIONS"; then
	tap_like "$(sql_capture "$OLD" "SET ROLE $ROLE;
		SELECT count(*) FROM received_orders.materialize_orders('$GROUP', ARRAY[NULL::bytea], ARRAY['t'], ARRAY[0], ARRAY[5::bigint])";
		echo "exit $?")" \
		"permission denied for function materialize_orders.*exit [1-9]" \
		"without a new grant the role cannot call the group overload (the $BASE grant does not carry over)"

	tap_cmd "the feeder's grant documented for $POSITIONS is accepted" \
		pg_query "$OLD" "GRANT EXECUTE ON FUNCTION
			received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]),
			received_orders.consumer_positions(text),
			received_orders.restart_position(text, text, integer, bigint, bigint) TO $ROLE"

	tap_is "$(pg_query "$OLD" "SELECT p.oid::regprocedure::text FROM pg_proc p
			WHERE p.pronamespace = 'received_orders'::regnamespace AND has_function_privilege('$ROLE', p.oid, 'EXECUTE')
			  AND p.oid <> 'received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[])'::regprocedure
			ORDER BY 1")" \
		$'received_orders.consumer_positions(text)\nreceived_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[])\nreceived_orders.restart_position(text,text,integer,bigint,bigint)' \
		"after the documented grant the role may execute exactly the three functions the feeder of $POSITIONS calls (besides $BASE's)"

	tap_is "$(pg_query "$OLD" "SET ROLE $ROLE;
		SELECT position, outcome FROM received_orders.materialize_orders('$GROUP',
			ARRAY[convert_to('$(ro_order_event 6 EXT-6)', 'UTF8'), NULL, '\\xfd'::bytea, convert_to('$(ro_order_event 1 EXT-1)', 'UTF8')],
			ARRAY['t', 't', 'u', 't'], ARRAY[0, 0, 1, 1], ARRAY[6, 7, 0, 3]::bigint[]) ORDER BY position")" \
		$'1|inserted\n2|skipped\n3|rejected\n4|duplicate' \
		"after the update the group overload materializes a batch (inserted, skipped, rejected, duplicate)"

	tap_is "$(pg_query "$OLD" "SET ROLE $ROLE;
		SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('$GROUP')")" \
		$'t|0|8\nt|1|4\nu|1|1' \
		"the batch recorded max(offset) + 1 of each partition, read back by the role with consumer_positions"

	tap_is "$(pg_query "$OLD" "SET ROLE $ROLE;
		SELECT received_orders.restart_position('$GROUP', 'u', 1, 1, 0);
		SELECT received_orders.restart_position('$GROUP', 'u', 1, 1, 0);
		SELECT next_offset FROM received_orders.consumer_positions('$GROUP') WHERE kafka_topic = 'u'")" \
		$'t\nf\n0' \
		"the role moves a position back with restart_position, only from the value stored (then true, again false)"

	tap_like "$(sql_capture "$OLD" "SELECT received_orders.set_consumer_position('$GROUP', 't', 0, 2)"; echo "exit $?")" \
		"NOTICE: +position of group \"$GROUP\" on t \\[0\\] moved from 8 to 2"$'\n'"8"$'\n'"exit 0$" \
		"set_consumer_position moves a position back, says so in a NOTICE and returns the previous one"

	tap_like "$(sql_capture "$OLD" "SELECT received_orders.set_consumer_position('$GROUP', 'v', 2, 9)"; echo "exit $?")" \
		"NOTICE: +position of group \"$GROUP\" on v \\[2\\] moved from none to 9"$'\n\n'"exit 0$" \
		"set_consumer_position of a partition without a position says \"from none\" and returns NULL"
else
	for desc in "group overload refused without grant" "documented grant" "functions the grant allows" \
		"group overload batch" "positions recorded" "restart_position" \
		"set_consumer_position NOTICE" "set_consumer_position NOTICE (none)"; do
		tap_ok 0 "# SKIP $desc: default_version $DEFAULT predates $POSITIONS"
	done
fi

# 1.2: consumer groups -----------------------------------------------------------------
# A database at 1.1 with positions of two groups: the update enters both
# groups unclaimed; the first role to use one claimed it before 1.3, and
# from 1.3 no role claims a group that has positions by using it.

if version_at_least "$DEFAULT" "$GROUPS"; then
	tap_is "$(create_at_version "$MID" "$POSITIONS" >/dev/null &&
		pg_query "$MID" "SELECT received_orders.set_consumer_position('g-one', 't', 0, 5);
			SELECT received_orders.set_consumer_position('g-two', 't', 0, 7);" >/dev/null &&
		pg_query "$MID" "ALTER EXTENSION received_orders UPDATE" >/dev/null &&
		pg_query "$MID" "SELECT consumer_group, coalesce(owner_role::text, '-'), coalesce(kafka_cluster_id, '-')
			FROM received_orders.received_orders_consumer_groups ORDER BY 1")" \
		$'g-one|-|-\ng-two|-|-' \
		"the update from $POSITIONS enters every group of the positions, unclaimed and without a cluster"
	pg_query "$MID" "GRANT USAGE ON SCHEMA received_orders TO $ROLE;
		GRANT EXECUTE ON FUNCTION received_orders.consumer_positions(text) TO $ROLE;" >/dev/null
	if version_at_least "$DEFAULT" "$CLAIMS"; then
		tap_is "$(pg_query "$MID" "SET ROLE $ROLE; SELECT next_offset FROM received_orders.consumer_positions('g-one')" 2>&1 |
				sed -n 's/^ERROR: *//p'
			pg_query "$MID" "SELECT coalesce(owner_role::text, '-') FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'g-one'")" \
			'permission denied for consumer group "g-one"'$'\n''-' \
			"a feeder's role of $POSITIONS cannot claim an unclaimed group that has positions ($CLAIMS)"
	else
		tap_is "$(pg_query "$MID" "SET ROLE $ROLE; SELECT next_offset FROM received_orders.consumer_positions('g-one')" &&
			pg_query "$MID" "SELECT owner_role FROM received_orders.received_orders_consumer_groups WHERE consumer_group = 'g-one'")" \
			"5"$'\n'"$ROLE" \
			"a feeder's role of $POSITIONS reads an unclaimed group's positions and claims it"
	fi
else
	tap_ok 0 "# SKIP groups filled: default_version $DEFAULT predates $GROUPS"
	tap_ok 0 "# SKIP unclaimed group claimed: default_version $DEFAULT predates $GROUPS"
fi

# The documented way to raise the event size limit (README, docs/operations.md):
# PostgreSQL 15's ALTER SYSTEM knows an extension's setting only once the
# library is loaded in the session, hence the LOAD first.
ro_on_exit "psql -X -q -d postgres -c \"LOAD 'received_orders'\" -c 'ALTER SYSTEM RESET received_orders.max_event_bytes' -c 'SELECT pg_reload_conf()' >/dev/null 2>&1"
tap_cmd "LOAD 'received_orders', then ALTER SYSTEM SET received_orders.max_event_bytes and a reload, succeed" \
	psql -X -q -v ON_ERROR_STOP=1 -d "$OLD" -c "LOAD 'received_orders'" \
	-c "ALTER SYSTEM SET received_orders.max_event_bytes = '4MB'" -c "SELECT pg_reload_conf()"
# the postmaster rereads the configuration asynchronously: new sessions, up to 5 s
limit_raised() {
	LIMIT=$(pg_query "$OLD" "SELECT current_setting('received_orders.max_event_bytes')")
	[[ $LIMIT == 4MB ]]
}
ro_wait_until 5 limit_raised || true
tap_is "$LIMIT" "4MB" "a new session runs with the raised received_orders.max_event_bytes"
tap_cmd "ALTER SYSTEM RESET received_orders.max_event_bytes (after LOAD) and a reload succeed" \
	psql -X -q -v ON_ERROR_STOP=1 -d "$OLD" -c "LOAD 'received_orders'" \
	-c "ALTER SYSTEM RESET received_orders.max_event_bytes" -c "SELECT pg_reload_conf()"

tap_done
