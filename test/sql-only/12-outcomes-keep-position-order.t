#!/bin/bash
# test/sql-only/12-outcomes-keep-position-order.t — the SQL-only batch
# function's normal path collects each element's outcome without sorting
# (batch.sql): its rows come out of the batch's scan in position order and
# a hash join keeps its outer side's order, until the join's inner side
# does not fit in work_mem. Then PostgreSQL's hash join spills by batches
# to temporary files and emits the rows out of order, the positions the
# statement collects along with the outcomes are not 1..n, and the batch
# is taken the slow way. Here: one call of 20,000 events (new orders,
# redelivered ones, redelivered ones under another reference, a field
# error) with work_mem at 64 kB, in the C extension's database and in the
# flavour's; both return the same outcome, order_id, sqlstate and reason
# at every position and store the same rows, and the flavour's call wrote
# temporary files (the spilled join is real). A copy of the flavour
# without that check returns other outcomes at some positions: the check
# is what keeps them right.
#
# TAP on stdout; starts its own PostgreSQL 15 cluster (it creates roles).

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/sql-only/lib.sh
. "$(dirname "$0")/lib.sh"

ADMIN=ro_cloud_admin
EVENTS=20000
GUARD="IF st_pos IS DISTINCT FROM ARRAY(SELECT pg_catalog.generate_series(1, n)) THEN"

# call DB — the batch, work_mem 64 kB: every result row, position order
call() {
	pg_psql -At -d "$1" <<-EOF
		SET work_mem = '64kB';
		SELECT r.position, r.order_id, r.outcome, r.sqlstate, r.message
		  FROM received_orders.materialize_orders((SELECT batch FROM public.input)) r
		 ORDER BY r.position;
	EOF
}

# stored DB — the rows the call stored
stored() {
	pg_psql -At -d "$1" -c "SELECT order_id, external_reference, payload FROM received_orders.received_orders ORDER BY order_id"
}

# temp_files DB — temporary files the database has written so far
temp_files() {
	pg_psql -At -d "$1" -c "SELECT pg_stat_force_next_flush()" >/dev/null 2>&1 || true
	pg_psql -At -d "$1" -c "SELECT temp_files FROM pg_stat_database WHERE datname = current_database()"
}

# input DB — public.input: the batch, the same in every database
input() {
	pg_psql -d "$1" -v events="$EVENTS" >/dev/null <<-'EOF'
		CREATE TABLE public.input AS
		SELECT pg_catalog.array_agg(pg_catalog.convert_to(
		         CASE WHEN i % 97 = 0 THEN pg_catalog.format('{"orderId": "%s"}', pg_catalog.md5(i::text)::uuid)
		              WHEN i % 5 = 0 THEN pg_catalog.format('{"orderId": "%s", "externalReference": "R-%s"}',
		                                                    pg_catalog.md5((i / 2)::text)::uuid,
		                                                    CASE WHEN i % 3 = 0 THEN 'OTHER' ELSE (i / 2)::text END)
		              ELSE pg_catalog.format('{"orderId": "%s", "externalReference": "R-%s", "total": %s.95}',
		                                     pg_catalog.md5(i::text)::uuid, i, i % 1000)
		         END, 'UTF8') ORDER BY i) AS batch
		  FROM pg_catalog.generate_series(1, :events) AS i;
	EOF
}

tap_plan 7

sql_only_work order
"$RO_ROOT/tools/build-sql-only" "$WORK/build" || tap_bail "tools/build-sql-only failed"
grep -qF "$GUARD" "$WORK/build/received_orders.sql" || tap_bail "the position check is not in the flavour: update GUARD"
sed "s/$(printf '%s' "$GUARD" | sed 's/[][\\.*^$/]/\\&/g')/IF false THEN/" \
	"$WORK/build/received_orders.sql" >"$WORK/unguarded.sql"
chmod -R a+rX "$WORK"

sql_only_cluster
pg_createdb ro_order_c received_orders >&2
createdb -U "$ADMIN" ro_order_sql
createdb -U "$ADMIN" ro_order_unguarded
pg_psql -U "$ADMIN" -d ro_order_sql -f "$WORK/build/received_orders.sql" >/dev/null 2>&1 ||
	tap_bail "the admin role could not install the flavour"
for db in ro_order_c ro_order_sql ro_order_unguarded; do
	input "$db"
done

C_ROWS=$(call ro_order_c)
tap_is "$(printf '%s\n' "$C_ROWS" | awk -F'|' '{ print $3 }' | sort | uniq -c | awk '{ printf "%s %s, ", $2, $1 }')" \
	"conflict 653, duplicate 1305, inserted 17836, rejected 206, " \
	"the C extension takes the batch: new, redelivered, conflicting and invalid events"

BEFORE=$(temp_files ro_order_sql)
SQL_ROWS=$(call ro_order_sql 2>/dev/null)
AFTER=$(temp_files ro_order_sql)
tap_ok "$([[ $AFTER -gt $BEFORE ]] && echo 0 || echo 1)" \
	"the flavour's call wrote temporary files with work_mem at 64 kB ($((AFTER - BEFORE)): its hash join spilled)"
tap_is "$SQL_ROWS" "$C_ROWS" "the flavour returns the C extension's outcome, order_id, sqlstate and reason at every position"
tap_is "$(stored ro_order_sql)" "$(stored ro_order_c)" "and stores the same rows"

# the copy without the check, in a database of its own
pg_psql -U "$ADMIN" -d ro_order_unguarded -f "$WORK/unguarded.sql" >/dev/null 2>&1 ||
	tap_bail "the admin role could not install the copy without the check"
UNGUARDED=$(call ro_order_unguarded 2>/dev/null)
tap_ok "$([[ $UNGUARDED != "$C_ROWS" ]] && echo 0 || echo 1)" \
	"negative control: without the check the flavour's outcomes differ from the C extension's"
tap_is "$(printf '%s\n' "$UNGUARDED" | wc -l)" "$EVENTS" "(it returned a row for each of the $EVENTS events all the same)"
tap_is "$(printf '%s\n' "$SQL_ROWS" | wc -l)" "$EVENTS" "the flavour returned a row for each of the $EVENTS events"
tap_done
