#!/bin/bash
# test/sql-only/03-dump-restore-keeps-rows.t — on the SQL-only flavour, as
# on a managed service, the admin role (NOSUPERUSER CREATEROLE CREATEDB)
# dumps a database with pg_dump -Fc and restores it with pg_restore into a
# new database: every order, quarantine row, position, group claim and the
# quarantine's sequence come back, the catalog is the same
# (fingerprint.sql), and the restored functions go on: a redelivered order
# is a duplicate, a new one is inserted, positions move on.
#
# TAP on stdout; starts its own PostgreSQL 15 cluster (it creates roles).

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/sql-only/lib.sh
. "$(dirname "$0")/lib.sh"

HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
ADMIN=ro_cloud_admin
SRC=ro_sql_only_src
DST=ro_sql_only_dst

# as_admin DB SQL — one statement as the admin role, rows unaligned
as_admin() {
	pg_psql -At -U "$ADMIN" -d "$1" -c "$2"
}

# batch DB FIRST LAST OFFSET — the group's batch of orders FIRST..LAST on
# topic t partition 0 from OFFSET, with an invalid value and a tombstone
# after them; prints the outcomes' counts
batch() {
	as_admin "$1" "SELECT string_agg(outcome || ' ' || n, ', ' ORDER BY outcome)
		FROM (SELECT outcome, count(*) n FROM received_orders.materialize_orders('g',
		        array_append(array_append(ARRAY(SELECT convert_to(format('{\"orderId\": \"%s\", \"externalReference\": \"R-%s\"}',
		                                                          md5(i::text)::uuid, i), 'UTF8')
		                                          FROM generate_series($2, $3) i), '\\xff'::bytea), NULL),
		        array_fill('t'::text, ARRAY[$3 - $2 + 3]), array_fill(0, ARRAY[$3 - $2 + 3]),
		        ARRAY(SELECT generate_series($4::bigint, $4 + $3 - $2 + 2))) GROUP BY outcome) s"
}

# contents DB — every row the flavour keeps, timestamps included
contents() {
	pg_psql -At -d "$1" <<-'EOF'
		SELECT * FROM received_orders.received_orders ORDER BY order_id;
		SELECT * FROM received_orders.received_orders_quarantine ORDER BY id;
		SELECT * FROM received_orders.received_orders_positions ORDER BY 1, 2, 3;
		SELECT * FROM received_orders.received_orders_consumer_groups ORDER BY 1;
		SELECT last_value, is_called FROM received_orders.received_orders_quarantine_id_seq;
	EOF
}

tap_plan 8

sql_only_work dump
"$ROOT/tools/build-sql-only" "$WORK/build" || tap_bail "tools/build-sql-only failed"
chmod -R a+rX "$WORK"

sql_only_cluster
createdb -U "$ADMIN" "$SRC"
tap_cmd "the admin role installs the SQL-only flavour" \
	pg_psql -U "$ADMIN" -d "$SRC" -f "$WORK/build/received_orders.sql"

tap_is "$(batch "$SRC" 1 300 0)" "inserted 300, rejected 1, skipped 1" \
	"a batch of the group inserts 300 orders, quarantines an invalid value and skips a tombstone"
BEFORE=$(contents "$SRC")

tap_cmd "the admin role dumps the database (pg_dump -Fc)" \
	pg_dump -U "$ADMIN" -Fc -f "$WORK/src.dump" "$SRC"
createdb -U "$ADMIN" "$DST"
tap_cmd "and restores it into a new database (pg_restore --exit-on-error)" \
	pg_restore -U "$ADMIN" --exit-on-error -d "$DST" "$WORK/src.dump"

tap_is "$(contents "$DST")" "$BEFORE" \
	"every order, quarantine row, position, group claim and the quarantine's sequence came back"
tap_is "$(pg_psql -At -d "$DST" -f "$HERE/fingerprint.sql")" "$(pg_psql -At -d "$SRC" -f "$HERE/fingerprint.sql")" \
	"the restored catalog is the dumped one (fingerprint.sql)"
tap_is "$(batch "$DST" 291 310 300)" "inserted 10, duplicate 10, rejected 1, skipped 1" \
	"the restored functions go on: redelivered orders are duplicates, new ones inserted"
tap_is "$(pg_query "$DST" "SELECT next_offset FROM received_orders.received_orders_positions WHERE consumer_group = 'g'")
$(pg_query "$DST" "SELECT count(*) FROM received_orders.received_orders_quarantine")" \
	$'322\n2' "the group's position moved on from the restored one, the quarantine grew by one"

tap_done
