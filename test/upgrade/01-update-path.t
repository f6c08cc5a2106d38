#!/bin/bash
# test/upgrade/01-update-path.t — a database created at version 1.0 updates
# to the control file's default_version with ALTER EXTENSION ... UPDATE, and
# afterwards has every object of the contract, the same member objects as a
# fresh install, and all of its data.
#
# Generic over versions: the target is default_version as PostgreSQL reads it
# from the installed control file (pg_available_extensions).  While 1.0 is the
# only version, the update is a no-op that must say so in a NOTICE.
# TAP on stdout.  Uses the harness's cluster, or starts its own when run alone.

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/lib/orders.sh
. "$(dirname "$0")/../lib/orders.sh"

OLD=ro_upgrade_old_$$
FRESH=ro_upgrade_fresh_$$
BASE=1.0

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

# missing_objects DB — one line per contract object (table, column, key,
# type, function, configuration dump, setting) that DB lacks; empty if none
missing_objects() {
	problems "$1" <<-'EOF'
		SELECT coalesce((SELECT probin FROM pg_proc
		                  WHERE oid = to_regprocedure('received_orders.materialize_order(jsonb)')),
		                '$libdir/received_orders') AS lib \gset
		LOAD :'lib';
		WITH want_columns(tab, col, typ, not_null) AS (VALUES
			('received_orders', 'order_id', 'uuid', true),
			('received_orders', 'external_reference', 'text', true),
			('received_orders', 'payload', 'jsonb', true),
			('received_orders', 'received_at', 'timestamp with time zone', true),
			('received_orders_quarantine', 'id', 'bigint', true),
			('received_orders_quarantine', 'kafka_topic', 'text', false),
			('received_orders_quarantine', 'kafka_partition', 'integer', false),
			('received_orders_quarantine', 'kafka_offset', 'bigint', false),
			('received_orders_quarantine', 'kafka_key', 'bytea', false),
			('received_orders_quarantine', 'raw_value', 'bytea', false),
			('received_orders_quarantine', 'order_id', 'uuid', false),
			('received_orders_quarantine', 'outcome', 'received_orders.materialize_outcome', true),
			('received_orders_quarantine', 'sqlstate', 'text', true),
			('received_orders_quarantine', 'reason', 'text', true),
			('received_orders_quarantine', 'quarantined_at', 'timestamp with time zone', true)),
		want_keys(tab, kind, cols) AS (VALUES
			('received_orders', 'primary key', ARRAY['order_id']),
			('received_orders_quarantine', 'primary key', ARRAY['id']),
			('received_orders_quarantine', 'unique', ARRAY['kafka_topic', 'kafka_partition', 'kafka_offset'])),
		want_functions(sig) AS (VALUES
			('received_orders.materialize_order(jsonb)'),
			('received_orders.materialize_orders(bytea[],text[],integer[],bigint[],bytea[])'),
			('received_orders.replay_quarantined(bigint)'))
		SELECT 'column ' || tab || '.' || col || ' ' || typ || CASE WHEN not_null THEN ' NOT NULL' ELSE '' END
		  FROM want_columns w
		 WHERE NOT EXISTS (
			SELECT FROM pg_attribute a
			 WHERE a.attrelid = to_regclass('received_orders.' || w.tab)
			   AND a.attname = w.col AND NOT a.attisdropped
			   AND format_type(a.atttypid, a.atttypmod) = w.typ
			   AND a.attnotnull = w.not_null)
		UNION ALL
		SELECT 'default now() on ' || col
		  FROM (VALUES ('received_orders', 'received_at'), ('received_orders_quarantine', 'quarantined_at')) v(tab, col)
		 WHERE NOT EXISTS (
			SELECT FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
			 WHERE d.adrelid = to_regclass('received_orders.' || v.tab) AND a.attname = v.col
			   AND pg_get_expr(d.adbin, d.adrelid) = 'now()')
		UNION ALL
		SELECT k.kind || ' (' || array_to_string(k.cols, ', ') || ') on ' || k.tab
		  FROM want_keys k
		 WHERE NOT EXISTS (
			SELECT FROM pg_index i
			 WHERE i.indrelid = to_regclass('received_orders.' || k.tab)
			   AND i.indisunique AND (k.kind = 'unique' OR i.indisprimary)
			   AND (SELECT array_agg(a.attname::text ORDER BY n.ord)
			          FROM unnest(i.indkey::int2[]) WITH ORDINALITY n(attnum, ord)
			          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = n.attnum) = k.cols)
		UNION ALL
		SELECT 'enum received_orders.materialize_outcome (inserted, duplicate, conflict, rejected)'
		 WHERE (SELECT array_agg(enumlabel::text ORDER BY enumsortorder) FROM pg_enum
		         WHERE enumtypid = to_regtype('received_orders.materialize_outcome'))
		       IS DISTINCT FROM ARRAY['inserted', 'duplicate', 'conflict', 'rejected']
		UNION ALL
		SELECT 'function ' || sig FROM want_functions WHERE to_regprocedure(sig) IS NULL
		UNION ALL
		SELECT 'configuration dump of ' || rel
		  FROM (VALUES ('received_orders.received_orders'), ('received_orders.received_orders_quarantine'),
		               (pg_get_serial_sequence('received_orders.received_orders_quarantine', 'id'))) v(rel)
		 WHERE NOT EXISTS (
			SELECT FROM pg_extension e
			 WHERE e.extname = 'received_orders' AND to_regclass(v.rel) = ANY (e.extconfig))
		UNION ALL
		SELECT 'setting received_orders.max_event_bytes = 1048576'
		 WHERE NOT EXISTS (SELECT FROM pg_settings
		                    WHERE name = 'received_orders.max_event_bytes' AND setting = '1048576')
		ORDER BY 1;
	EOF
}

# insecure_functions DB — one line per extension function that is not
# SECURITY DEFINER with search_path pinned to pg_catalog, pg_temp, or that
# PUBLIC may execute; empty if none
insecure_functions() {
	problems "$1" <<<"SELECT p.oid::regprocedure::text || ': ' || concat_ws(', ',
			CASE WHEN NOT p.prosecdef THEN 'not SECURITY DEFINER' END,
			CASE WHEN p.proconfig IS DISTINCT FROM ARRAY['search_path=pg_catalog, pg_temp']
			     THEN 'search_path ' || coalesce(array_to_string(p.proconfig, ' '), 'not set') END,
			CASE WHEN has_function_privilege('public', p.oid, 'EXECUTE') THEN 'PUBLIC may execute' END)
		FROM pg_proc p
		WHERE p.pronamespace = 'received_orders'::regnamespace
		  AND (NOT p.prosecdef
		       OR p.proconfig IS DISTINCT FROM ARRAY['search_path=pg_catalog, pg_temp']
		       OR has_function_privilege('public', p.oid, 'EXECUTE'))
		ORDER BY 1"
}

tap_plan 14

pg_ensure_cluster >&2
ro_on_exit "dropdb --if-exists $OLD 2>/dev/null; dropdb --if-exists $FRESH 2>/dev/null"

DEFAULT=$(pg_query postgres "SELECT default_version FROM pg_available_extensions WHERE name = 'received_orders'")
[[ -n $DEFAULT ]] || tap_bail "received_orders is not installed (no control file)"
tap_diag "default_version is $DEFAULT"

tap_cmd "CREATE EXTENSION received_orders VERSION '$BASE' succeeds" \
	create_at_version "$OLD" "$BASE"
tap_last_ok || tap_bail "could not install version $BASE"

tap_is "$(extversion "$OLD")" "$BASE" "the installed version is $BASE"

tap_is "$(missing_objects "$OLD")" "" "version $BASE has every object of the contract"

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

tap_is "$(missing_objects "$OLD")" "" "the updated extension has every object of the contract"

tap_is "$(insecure_functions "$OLD")" "" \
	"every function stays SECURITY DEFINER, search_path pinned, not executable by PUBLIC"

tap_cmd "a fresh database gets version $DEFAULT with CREATE EXTENSION" \
	pg_createdb "$FRESH" received_orders

tap_is "$(members "$OLD")" "$(members "$FRESH")" \
	"the updated extension has exactly the member objects of a fresh install"

tap_is "$(ro_snapshot "$OLD")" "$BEFORE" "every order and quarantined message survives the update"

tap_is "$(pg_query "$OLD" "$(materialize_sql 1 EXT-1) $(materialize_sql 4 EXT-4)
		SELECT outcome FROM received_orders.materialize_orders(
			ARRAY['\\xff'::bytea, '\\xfe'::bytea], ARRAY['t', 't'],
			ARRAY[0, 0], ARRAY[2, 3]::bigint[], NULL) ORDER BY position;
		SELECT count(*) FROM received_orders.received_orders;
		SELECT count(*) FROM received_orders.received_orders_quarantine")" \
	$'duplicate\ninserted\nrejected\nrejected\n4\n2' \
	"after the update: duplicates found, new orders stored, quarantine still unique on its coordinates"

tap_done
