#!/bin/bash
# test/sql-only/10-flavour-upgrade-path.t — the SQL-only flavour's update
# scripts (tools/build-sql-only) bring an installed flavour to the same
# catalog as a fresh install of the next version, keeping its rows, and
# refuse to run on any other version.
#
# There is no real next version yet: a scratch copy of the tree (git
# archive of HEAD, with the work tree's tools/ and sql/ over it) gets a
# made-up one, NEXT (the control file's default_version with its minor
# part one higher), whose C update script changes something real: a column
# and its index on received_orders, the head of a C function
# (check_consumer_group gets a lock_timeout: the flavour must carry its
# twin), a new plain SQL function, the schema's comment.  The flavour is
# built there; the admin role (NOSUPERUSER CREATEROLE CREATEDB, as a
# managed service's) installs the current version (this tree's build) into
# one database, stores orders, quarantine rows and positions, runs the
# update script; a fresh NEXT install in another database must then have
# the same catalog (test/sql-only/fingerprint.sql and the functions'
# catalog rows of test 01) and the rows must be the same as before.  The
# update refuses, SQLSTATE 55000 and nothing changed, when run twice, when
# a version is skipped (a made-up NEXT--NEXT2 on the current version), and
# on the C extension's schema; a statement failing inside it leaves nothing
# half-applied.  Negative control: the update with a statement left out is
# caught by the comparison.  The wrapper with its update paths keeps pg_tle's
# rules (--check-tle), which refuses a COMMIT in an update path's body and
# a default version no call installs; the build refuses an update script
# that does not set the comment, and a default_version no update reaches.
#
# TAP on stdout; starts its own PostgreSQL 15 cluster (it creates roles);
# point 23 needs the C extension installed there (make install, as test/run
# does).

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/sql-only/lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
ADMIN=ro_cloud_admin
UPDATED_DB=ro_flavour_updated
FRESH_DB=ro_flavour_fresh
OTHER_DB=ro_flavour_other
C_DB=ro_flavour_c

CUR=$(sed -n "s/^default_version = '\\(.*\\)'/\\1/p" "$ROOT/received_orders.control")
NEXT=${CUR%.*}.$((${CUR##*.} + 1))
NEXT2=${NEXT%.*}.$((${NEXT##*.} + 1))
UPDATE=received_orders--$CUR--$NEXT.sql
SKIP=received_orders--$NEXT--$NEXT2.sql

# as_admin DB ARGS... — psql as the managed service's admin role
as_admin() {
	local db=$1
	shift
	pg_psql -U "$ADMIN" -d "$db" "$@"
}

# run_script DB FILE — FILE run by the admin role as the docs say (psql -v
# ON_ERROR_STOP=1 -f), SQLSTATEs shown; its output and errors on stdout
run_script() {
	as_admin "$1" -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -f "$2" 2>&1
}

# catalog DB — the catalog fingerprint and the functions' catalog rows (as
# test 01 reads them), one object a line
catalog() {
	pg_psql -At -d "$1" -f "$HERE/fingerprint.sql"
	pg_query "$1" "SELECT p.oid::regprocedure, pg_get_function_result(p.oid), p.provolatile, p.proisstrict,
		p.prosecdef, p.proconfig, p.prorows, p.proparallel, l.lanname,
		replace(coalesce(p.proacl, acldefault('f', p.proowner))::text, pg_get_userbyid(p.proowner), 'OWNER')
		FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
		WHERE p.pronamespace = 'received_orders'::regnamespace ORDER BY 1"
}

# rows DB — a digest of each table's rows (the made-up column left out)
rows() {
	local table
	for table in received_orders received_orders_quarantine received_orders_positions \
		received_orders_consumer_groups received_orders_feeders received_orders_replays \
		received_orders_position_gaps; do
		pg_query "$1" "SELECT '$table ' || count(*) || ' ' || md5(coalesce(string_agg((to_jsonb(t) - 'note')::text, ','
			ORDER BY (to_jsonb(t) - 'note')::text), '')) FROM received_orders.$table t"
	done
}

tap_plan 24

sql_only_work upgrade

# the scratch tree: HEAD's files, this work tree's sources of the flavour
# over them, a made-up NEXT
mkdir -p "$WORK/tree"
git -C "$ROOT" archive HEAD | tar -x -C "$WORK/tree"
cp -r "$ROOT/sql" "$ROOT/tools" "$ROOT/received_orders.control" "$WORK/tree/"
sed -i "s/^default_version = '.*'/default_version = '$NEXT'/" "$WORK/tree/received_orders.control"
cat >"$WORK/tree/sql/$UPDATE" <<EOF
-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\\echo Use "ALTER EXTENSION received_orders UPDATE TO '$NEXT'" to load this file. \\quit

-- a made-up $NEXT (test/sql-only/10): a column and its index
ALTER TABLE received_orders.received_orders ADD COLUMN note text;
COMMENT ON COLUMN received_orders.received_orders.note IS 'A note on the order (made-up $NEXT)';
CREATE INDEX received_orders_note_idx ON received_orders.received_orders (note);

-- a C function's head replaced
CREATE OR REPLACE FUNCTION received_orders.check_consumer_group(
	consumer_group text,
	kafka_cluster_id text DEFAULT NULL)
RETURNS void
AS 'MODULE_PATHNAME', 'check_consumer_group'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET lock_timeout = '5s';

-- a plain SQL function
CREATE FUNCTION received_orders.note_of(order_id uuid)
RETURNS text
LANGUAGE sql STABLE STRICT
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS \$\$ SELECT o.note FROM received_orders.received_orders o WHERE o.order_id OPERATOR(pg_catalog.=) \$1 \$\$;

REVOKE EXECUTE ON FUNCTION received_orders.note_of(uuid) FROM PUBLIC;

COMMENT ON FUNCTION received_orders.note_of(uuid) IS 'The note on an order (made-up $NEXT)';

COMMENT ON SCHEMA received_orders IS
	'received_orders $NEXT: idempotent materialization of Kafka OrderReceived events, with a quarantine';
EOF
cat >"$WORK/tree/sql/$SKIP" <<EOF
\\echo Use "ALTER EXTENSION received_orders UPDATE TO '$NEXT2'" to load this file. \\quit

COMMENT ON SCHEMA received_orders IS
	'received_orders $NEXT2: idempotent materialization of Kafka OrderReceived events, with a quarantine';
EOF

tap_cmd "the flavour of this tree ($CUR) is built" "$ROOT/tools/build-sql-only" "$WORK/cur"
tap_cmd "the flavour of the scratch tree with a made-up $NEXT is built" \
	"$WORK/tree/tools/build-sql-only" "$WORK/next"
tap_cmd "tools/build-sql-only --check finds the install, the wrapper and both update scripts up to date" \
	"$WORK/tree/tools/build-sql-only" --check "$WORK/next"
tap_is "$(grep --no-group-separator -A3 '^SELECT pgtle.install_update_path($' "$WORK/next/received_orders_tle.sql" | tr -d '\t\n';
	grep '^SELECT pgtle.set_default_version' "$WORK/next/received_orders_tle.sql")" \
	"SELECT pgtle.install_update_path('received_orders_sql','$CUR','$NEXT',SELECT pgtle.install_update_path('received_orders_sql','$NEXT','$NEXT2',SELECT pgtle.set_default_version('received_orders_sql', '$NEXT');" \
	"the wrapper installs the update paths $CUR to $NEXT, $NEXT to $NEXT2, then sets the default version $NEXT"
tap_cmd "the wrapper with its update paths keeps pg_tle's rules (--check-tle)" \
	"$ROOT/tools/build-sql-only" --check-tle "$WORK/next/received_orders_tle.sql"
# copies of that wrapper: an update path's body with a COMMIT, a default
# version no call installs
awk '{ print } /^SELECT pgtle.install_update_path\($/ { p = 1 } p && /^\$_pgtle_\$$/ { print "COMMIT;"; p = 0 }' \
	"$WORK/next/received_orders_tle.sql" >"$WORK/commit-in-update.sql"
out=$("$ROOT/tools/build-sql-only" --check-tle "$WORK/commit-in-update.sql" 2>&1) && out="accepted: $out"
tap_like "$out" "commit-in-update.sql: line [0-9]+: transaction control \(COMMIT\)" \
	"--check-tle refuses a COMMIT in an update path's body"
sed "s/^SELECT pgtle.set_default_version('received_orders_sql', '$NEXT');\$/SELECT pgtle.set_default_version('received_orders_sql', '9.9');/" \
	"$WORK/next/received_orders_tle.sql" >"$WORK/unknown-default.sql"
out=$("$ROOT/tools/build-sql-only" --check-tle "$WORK/unknown-default.sql" 2>&1) && out="accepted: $out"
tap_like "$out" "unknown-default.sql: line [0-9]+: set_default_version names a version not installed \(9\.9\)" \
	"--check-tle refuses a default version that no call installs"
tap_is "$(grep -c -e "'check_consumer_group'" -e 'LANGUAGE C' "$WORK/next/$UPDATE" || true)" "0" \
	"the update script carries check_consumer_group's twin, not the C function"
# the build stops (its error alone, nothing written) on an update that does
# not record its version, and on a default_version no update reaches
cp -r "$WORK/tree" "$WORK/bad-tree"
sed -i "/^COMMENT ON SCHEMA received_orders IS\$/,+1d" "$WORK/bad-tree/sql/$SKIP"
out=$("$WORK/bad-tree/tools/build-sql-only" "$WORK/bad" 2>&1) && out="written: $out"
tap_like "$out" "^[^ ]*/build-sql-only: sql/$SKIP does not end by setting the schema's comment to 'received_orders $NEXT2: \.\.\.'" \
	"tools/build-sql-only refuses an update script that does not set the schema's comment to its version"
rm "$WORK/bad-tree/sql/$SKIP"
sed -i "s/^default_version = '.*'/default_version = '$NEXT2'/" "$WORK/bad-tree/received_orders.control"
out=$("$WORK/bad-tree/tools/build-sql-only" "$WORK/bad" 2>&1) && out="written: $out"
tap_like "$out" "^[^ ]*/build-sql-only: no update script leads from $NEXT towards default_version $NEXT2\$" \
	"tools/build-sql-only refuses a default_version that no chain of update scripts reaches"
chmod -R a+rX "$WORK"

sql_only_cluster

for db in "$UPDATED_DB" "$OTHER_DB"; do
	pg_psql -U "$ADMIN" -d postgres -c "CREATE DATABASE $db" >&2
	out=$(run_script "$db" "$WORK/cur/received_orders.sql") || { echo "$out" >&2; tap_bail "the $CUR install failed in $db"; }
done
# orders, a quarantined message, a group's positions
as_admin "$UPDATED_DB" -v ON_ERROR_STOP=1 -c "SELECT count(*) FROM received_orders.materialize_orders('upgrade-group',
	ARRAY[convert_to('{\"orderId\": \"' || md5('a')::uuid || '\", \"externalReference\": \"A\"}', 'UTF8'),
	      convert_to('{\"orderId\": \"' || md5('b')::uuid || '\", \"externalReference\": \"B\"}', 'UTF8'),
	      convert_to('{not json', 'UTF8')],
	ARRAY['orders', 'orders', 'orders'], ARRAY[0, 0, 1], ARRAY[10, 11, 7]::bigint[], ARRAY[NULL, NULL, NULL]::bytea[])" >&2
before=$(rows "$UPDATED_DB")
tap_like "$before" "received_orders 2 .*received_orders_quarantine 1 .*received_orders_positions 2 " \
	"the $CUR install holds 2 orders, 1 quarantined message, 2 positions before the update"

status=0
out=$(run_script "$UPDATED_DB" "$WORK/next/$UPDATE") || status=$?
tap_ok "$([[ $status == 0 && $out != *ERROR* ]] && echo 0 || echo 1)" "the admin role runs $UPDATE on the $CUR install"
tap_is "$(pg_query "$UPDATED_DB" "SELECT obj_description('received_orders'::regnamespace, 'pg_namespace')")" \
	"received_orders $NEXT: idempotent materialization of Kafka OrderReceived events, with a quarantine" \
	"the schema's comment names $NEXT after the update"

pg_psql -U "$ADMIN" -d postgres -c "CREATE DATABASE $FRESH_DB" >&2
status=0
out=$(run_script "$FRESH_DB" "$WORK/next/received_orders.sql") || status=$?
tap_ok "$([[ $status == 0 && $out != *ERROR* ]] && echo 0 || echo 1)" "the admin role installs $NEXT fresh into another database"
catalog "$FRESH_DB" >"$WORK/fresh.catalog"
catalog "$UPDATED_DB" >"$WORK/updated.catalog"
tap_is "$(diff "$WORK/fresh.catalog" "$WORK/updated.catalog" | head -20 || true)" "" \
	"the updated database's catalog (fingerprint, functions) is the fresh $NEXT install's"
tap_is "$(rows "$UPDATED_DB")" "$before" "the update keeps every row of every table"
tap_is "$(as_admin "$UPDATED_DB" -At -v ON_ERROR_STOP=1 \
	-c "SELECT received_orders.check_consumer_group('upgrade-group')" \
	-c "SELECT coalesce(received_orders.note_of('$(pg_query postgres "SELECT md5('a')::uuid")'), 'no note')" 2>&1)" \
	"$(printf '\nno note')" "the updated functions run: check_consumer_group's twin, the new note_of"

out=$(run_script "$UPDATED_DB" "$WORK/next/$UPDATE" || true)
tap_like "$out" "ERROR:  55000: received_orders is already at version $NEXT" \
	"the update run twice is refused (55000, already at $NEXT)"
tap_is "$(catalog "$UPDATED_DB")" "$(cat "$WORK/updated.catalog")" "the refused second run changed nothing"

catalog "$OTHER_DB" >"$WORK/other.catalog"
out=$(run_script "$OTHER_DB" "$WORK/next/$SKIP" || true)
tap_like "$out" "ERROR:  55000: received_orders is at version $CUR, not $NEXT.*HINT:  Run the update scripts in order, from received_orders--$CUR--\\*\\.sql on" \
	"the update $NEXT to $NEXT2 on $CUR (a version skipped) is refused, naming the script to run first"

# the update with a statement that fails after the column and index
sed 's/^CREATE FUNCTION received_orders\.note_of(/SELECT 1 \/ 0;\n&/' "$WORK/next/$UPDATE" >"$WORK/failing.sql" || true
out=$(run_script "$OTHER_DB" "$WORK/failing.sql" || true)
tap_like "$out" "ERROR:  22012: division by zero" "an update whose statement fails stops there"
tap_is "$(catalog "$OTHER_DB")" "$(cat "$WORK/other.catalog")" \
	"... and leaves nothing half-applied (the refused and the failed runs changed nothing)"

pg_createdb "$C_DB" received_orders >&2 || tap_bail "received_orders is not installed in $(pg_bindir)"
out=$(run_script "$C_DB" "$WORK/next/$UPDATE" || true)
tap_like "$out" "ERROR:  55000: schema \"received_orders\" belongs to extension \"received_orders\".*HINT:  Run ALTER EXTENSION received_orders UPDATE instead" \
	"the psql update on the C extension's schema is refused, naming ALTER EXTENSION"

# negative control: the update without its CREATE INDEX
grep -v '^CREATE INDEX received_orders_note_idx ' "$WORK/next/$UPDATE" >"$WORK/broken.sql" || true
status=0
out=$(run_script "$OTHER_DB" "$WORK/broken.sql") || status=$?
tap_ok "$(! cmp -s "$WORK/next/$UPDATE" "$WORK/broken.sql" && [[ $status == 0 && $out != *ERROR* ]] &&
	! diff -q "$WORK/fresh.catalog" <(catalog "$OTHER_DB") >/dev/null && echo 0 || echo 1)" \
	"negative control: the update with a statement left out gives a catalog the comparison finds different"

tap_done
