#!/bin/bash
# test/sql-only/11-move-between-flavours.t — tools/move-flavour moves a
# database's received_orders from the SQL-only flavour to the C extension
# and back, in place, keeping every row: a database where the admin role
# (NOSUPERUSER CREATEROLE CREATEDB) installed the flavour and granted a
# feeder's role, with a consumer group's stream through it (new orders,
# duplicates, a conflict, invalid values, a tombstone, a replayed quarantine
# row, a feeder's report, a position gap) so that every table of the schema
# holds rows, is moved to the C extension: every row of every table and the
# quarantine's sequence are the same, the feeder's role holds the same
# privileges, the catalog is a fresh CREATE EXTENSION's, and its batch goes
# on over the C functions; then back to the
# flavour, the same again, the catalog that of a fresh install, and the
# schema's pg_dump restores by the admin role with every row (the way to a
# managed service).  Refused,
# nothing changed: a move whose rows moved to would differ (a table of the
# DBA's in the schema, which the other flavour has not: the count check)
# and a move whose drop would take a view outside the schema with it.
# The way from a managed service too: the flavour's schema dump restored
# by a superuser, then moved.
#
# TAP on stdout; starts its own PostgreSQL 15 cluster (it creates roles)
# with the C extension installed (make install, as test/run does).

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/sql-only/lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
ADMIN=ro_cloud_admin
FEEDER=ro_move_feeder
DB=ro_move
FRESH=ro_move_fresh
FRESH_C=ro_move_fresh_c

# as_role ROLE SQL — one statement as ROLE in the moved database
as_role() {
	pg_psql -At -U "$1" -d "$DB" -c "$2"
}

# batch FIRST LAST OFFSET — the feeder role's group batch on topic t
# partition 0 from OFFSET: orders FIRST..LAST, the first of them again under
# another reference (a conflict), an invalid value and a tombstone; prints
# the outcomes' counts
batch() {
	as_role "$FEEDER" "SELECT string_agg(outcome || ' ' || n, ', ' ORDER BY outcome)
		FROM (SELECT outcome, count(*) n FROM received_orders.materialize_orders('g',
		        ARRAY(SELECT convert_to(format('{\"orderId\": \"%s\", \"externalReference\": \"R-%s\"}',
		                                       md5(i::text)::uuid, i), 'UTF8')
		              FROM generate_series($1, $2) i)
		        || convert_to(format('{\"orderId\": \"%s\", \"externalReference\": \"OTHER\"}', md5('$1')::uuid), 'UTF8')
		        || '\\xff'::bytea || NULL::bytea,
		        array_fill('t'::text, ARRAY[$2 - $1 + 4]), array_fill(0, ARRAY[$2 - $1 + 4]),
		        ARRAY(SELECT generate_series($3::bigint, $3 + $2 - $1 + 3))) GROUP BY outcome) s"
}

# contents — every row of every table of the schema, the sequence, in order
contents() {
	pg_psql -At -d "$DB" <<-'EOF'
		SELECT * FROM received_orders.received_orders ORDER BY order_id;
		SELECT * FROM received_orders.received_orders_quarantine ORDER BY id;
		SELECT * FROM received_orders.received_orders_positions ORDER BY 1, 2, 3;
		SELECT * FROM received_orders.received_orders_consumer_groups ORDER BY 1;
		SELECT * FROM received_orders.received_orders_feeders ORDER BY 1, 2;
		SELECT * FROM received_orders.received_orders_replays ORDER BY 1;
		SELECT * FROM received_orders.received_orders_position_gaps ORDER BY 1, 2, 3, 4;
		SELECT last_value, is_called FROM received_orders.received_orders_quarantine_id_seq;
	EOF
}

# tables — the schema's tables (contents must read each one)
tables() {
	pg_query "$DB" "SELECT string_agg(relname, ' ' ORDER BY relname) FROM pg_class
		WHERE relnamespace = 'received_orders'::regnamespace AND relkind = 'r'"
}

# feeder_privileges — what the feeder's role holds on the schema's objects
feeder_privileges() {
	pg_query "$DB" "SELECT string_agg(o || ' ' || x.privilege_type, E'\\n' ORDER BY o, x.privilege_type)
		FROM (SELECT p.oid::regprocedure::text o, p.proacl acl FROM pg_proc p
		       WHERE p.pronamespace = 'received_orders'::regnamespace
		      UNION ALL SELECT c.relname::text, c.relacl FROM pg_class c
		       WHERE c.relnamespace = 'received_orders'::regnamespace
		      UNION ALL SELECT 'schema', nspacl FROM pg_namespace WHERE nspname = 'received_orders') s,
		     aclexplode(s.acl) x
		WHERE x.grantee = '$FEEDER'::regrole"
}

# flavour — which flavour the database holds now
flavour() {
	pg_query "$DB" "SELECT coalesce((SELECT 'extension ' || extname || ' ' || extversion FROM pg_extension
		                          WHERE extname = 'received_orders'), 'schema of ' || nspowner::regrole::text)
		FROM pg_namespace WHERE nspname = 'received_orders'"
}

tap_plan 32

sql_only_work move
"$ROOT/tools/build-sql-only" "$WORK/build" || tap_bail "tools/build-sql-only failed"
chmod -R a+rX "$WORK"
SCRIPT=$WORK/build/received_orders.sql

sql_only_cluster
createdb -U "$ADMIN" "$DB"
createdb -U "$ADMIN" "$FRESH"
createdb "$FRESH_C"
tap_cmd "the admin role installs the SQL-only flavour and grants the feeder's role" \
	pg_psql -U "$ADMIN" -d "$DB" -f "$SCRIPT" \
	-c "CREATE ROLE $FEEDER LOGIN" -c "SELECT count(*) FROM received_orders.grant_feeder('$FEEDER')"
pg_psql -U "$ADMIN" -d "$FRESH" -f "$SCRIPT" -c "SELECT count(*) FROM received_orders.grant_feeder('$FEEDER')" >&2

tap_is "$(batch 1 200 0)" "inserted 200, conflict 1, rejected 1, skipped 1" \
	"the feeder's role stores a stream: new orders, a conflict, an invalid value, a tombstone"
tap_is "$(batch 191 250 204)" "inserted 50, duplicate 10, conflict 1, rejected 1, skipped 1" \
	"and its redelivery: duplicates"
# a replayed quarantine row (repaired by the admin role), a feeder's report, a gap
as_role "$ADMIN" "UPDATE received_orders.received_orders_quarantine
	SET raw_value = convert_to('{\"orderId\": \"' || md5('new')::uuid || '\", \"externalReference\": \"R-new\"}', 'UTF8')
	WHERE id = (SELECT min(id) FROM received_orders.received_orders_quarantine WHERE outcome = 'rejected')" >&2
tap_is "$(as_role "$ADMIN" "SELECT received_orders.replay_quarantined(
	(SELECT min(id) FROM received_orders.received_orders_quarantine WHERE outcome = 'rejected'))")" \
	"inserted" "a repaired quarantine row is replayed"
as_role "$FEEDER" "SELECT received_orders.report_feeder('g', 'm-1', 'host', 42, '1.4', now(), 'running',
	ARRAY['t'], ARRAY[0], ARRAY[270::bigint], NULL, NULL, '5 s')" >&2
as_role "$FEEDER" "SELECT received_orders.record_position_gap('g', 't', 1, 0, 99)" >&2
tap_is "$(tables)" "received_orders received_orders_consumer_groups received_orders_feeders received_orders_position_gaps received_orders_positions received_orders_quarantine received_orders_replays" \
	"the schema's tables are the seven this test reads"
tap_is "$(pg_query "$DB" "SELECT (SELECT count(*) FROM received_orders.received_orders) || ' '
	|| (SELECT count(*) FROM received_orders.received_orders_quarantine) || ' '
	|| (SELECT count(*) FROM received_orders.received_orders_positions) || ' '
	|| (SELECT count(*) FROM received_orders.received_orders_consumer_groups) || ' '
	|| (SELECT count(*) FROM received_orders.received_orders_feeders) || ' '
	|| (SELECT count(*) FROM received_orders.received_orders_replays) || ' '
	|| (SELECT count(*) FROM received_orders.received_orders_position_gaps)")" \
	"251 3 1 1 1 1 1" "every table holds rows (orders, quarantine, positions, groups, feeders, replays, gaps)"
BEFORE=$(contents)
PRIVILEGES=$(feeder_privileges)
tap_like "$PRIVILEGES" "materialize_orders" "the feeder's role holds its privileges"

# refused, nothing changed: rows the other flavour has no table for
as_role "$ADMIN" "CREATE TABLE received_orders.dba_notes (note text);
	INSERT INTO received_orders.dba_notes VALUES ('a'), ('b')" >&2
"$ROOT/tools/move-flavour" to-extension "$DB" >"$WORK/refused.out" 2>&1 && status=0 || status=$?
tap_is "$status" 1 "a move that would leave a table's rows behind exits 1"
tap_like "$(cat "$WORK/refused.out")" "dba_notes: 2 rows moved from, no such table moved to" \
	"and names the table and its rows (the count check)"
tap_is "$(flavour)
$(contents)" "schema of received_orders_owner
$BEFORE" "and nothing changed: the flavour's schema, every row"
as_role "$ADMIN" "DROP TABLE received_orders.dba_notes" >&2

# refused, nothing changed: a view outside the schema the drop would take
pg_query "$DB" "CREATE VIEW public.order_count AS SELECT count(*) FROM received_orders.received_orders" >&2
"$ROOT/tools/move-flavour" to-extension "$DB" >"$WORK/refused.out" 2>&1 && status=0 || status=$?
tap_like "$status: $(grep 'Dropped with it' "$WORK/refused.out")" "^1: DETAIL:  Dropped with it: .*view order_count" \
	"a move whose drop would take a view outside the schema with it is refused, naming it"
tap_is "$(pg_query "$DB" "SELECT * FROM public.order_count")
$(contents)" "251
$BEFORE" "and nothing changed"
pg_query "$DB" "DROP VIEW public.order_count" >&2

tap_cmd "a dry run of the move to the extension passes its checks" \
	"$ROOT/tools/move-flavour" --dry-run to-extension "$DB"
tap_is "$(flavour)" "schema of received_orders_owner" "and rolls back"

# the way from a managed service: the schema's dump restored by a superuser, then moved
tap_cmd "the flavour's schema dump (pg_dump -n) restored by a superuser is moved to the C extension" \
	bash -c 'pg_dump -U "$1" -Fc -n received_orders -f "$2" "$3" && createdb "$4" \
		&& pg_restore --exit-on-error -d "$4" "$2" && "$5" to-extension "$4"' \
	- "$ADMIN" "$WORK/flavour.dump" "$DB" "${DB}_selfhosted" "$ROOT/tools/move-flavour"
tap_is "$(DB=${DB}_selfhosted flavour)
$(DB=${DB}_selfhosted contents)" "extension received_orders 1.4
$BEFORE" "with every row of every table and the sequence"

# to the C extension, in place
tap_cmd "tools/move-flavour to-extension moves the database to the C extension" \
	"$ROOT/tools/move-flavour" to-extension "$DB"
tap_is "$(flavour)" "extension received_orders 1.4" "the schema is the C extension's"
tap_is "$(contents)" "$BEFORE" "every row of every table and the quarantine's sequence are the same"
tap_is "$(feeder_privileges)" "$PRIVILEGES" "the feeder's role holds the same privileges"
pg_psql -d "$FRESH_C" -c "CREATE EXTENSION received_orders" -c "SELECT count(*) FROM received_orders.grant_feeder('$FEEDER')" >&2
tap_is "$(pg_psql -At -d "$DB" -f "$HERE/fingerprint.sql")" "$(pg_psql -At -d "$FRESH_C" -f "$HERE/fingerprint.sql")" \
	"the catalog is that of a fresh CREATE EXTENSION (fingerprint.sql)"
tap_is "$(batch 241 300 264)" "inserted 50, duplicate 10, conflict 1, rejected 1, skipped 1" \
	"the feeder's role takes a batch on the C extension: duplicates of the moved rows, new orders"
tap_is "$(pg_query "$DB" "SELECT next_offset FROM received_orders.received_orders_positions WHERE kafka_partition = 0")
$(pg_query "$DB" "SELECT max(id) FROM received_orders.received_orders_quarantine")" $'327\n6' \
	"its position moves on from the moved one, the quarantine's ids from the moved sequence"
BEFORE=$(contents)

# and back
tap_cmd "tools/move-flavour to-sql-only moves it back to the SQL-only flavour" \
	"$ROOT/tools/move-flavour" --admin "$ADMIN" to-sql-only "$SCRIPT" "$DB"
tap_is "$(flavour)" "schema of received_orders_owner" "the schema is the flavour's again, no extension"
tap_is "$(contents)" "$BEFORE" "every row of every table and the quarantine's sequence are the same"
tap_is "$(feeder_privileges)" "$PRIVILEGES" "the feeder's role holds the same privileges"
tap_is "$(pg_psql -At -d "$DB" -f "$HERE/fingerprint.sql")" "$(pg_psql -At -d "$FRESH" -f "$HERE/fingerprint.sql")" \
	"the catalog is that of a fresh install of the flavour (fingerprint.sql)"
tap_is "$(batch 291 350 324)" "inserted 50, duplicate 10, conflict 1, rejected 1, skipped 1" \
	"the feeder's role takes a batch on the flavour again"
tap_is "$(as_role "$ADMIN" "SELECT count(*) FROM received_orders.grant_feeder('$FEEDER')")" "9" \
	"the admin role runs grant_feeder again (a member of the schema's owner)"
BEFORE=$(contents)
tap_cmd "the admin role dumps the schema (pg_dump -n received_orders) and restores it into a new database" \
	bash -c 'pg_dump -U "$1" -Fc -n received_orders -f "$2" "$3" && createdb -U "$1" "$4" && pg_restore -U "$1" --exit-on-error -d "$4" "$2"' \
	- "$ADMIN" "$WORK/moved.dump" "$DB" "${DB}_restored"
DB=${DB}_restored
tap_is "$(contents)" "$BEFORE" "every row came back"

tap_done
