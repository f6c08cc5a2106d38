#!/bin/bash
# test/sql-only/13-isolation-on-sql-only.t — the isolation specs
# (test/isolation/specs/*.spec: concurrent duplicates that commit or
# abort, batches of opposite orders that meet halfway, concurrent position
# advances and gaps) on the SQL-only flavour, with their expected outputs
# as they are: PostgreSQL's pg_isolation_regress against a database where
# a NOSUPERUSER CREATEROLE CREATEDB admin role ran the psql script
# (--use-existing, where test/run's isolation suite loads the C
# extension), one TAP point per spec. A negative control: a copy of the
# flavour that inserts a batch in its input order instead of order_id
# order deadlocks in opposite-order-batches (40P01), which the spec tells.
#
# TAP on stdout; starts its own PostgreSQL 15 cluster (it creates roles).

set -uo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/sql-only/lib.sh
. "$(dirname "$0")/lib.sh"

ADMIN=ro_iso_cloud_admin
INSERT_ORDER=$'				 ORDER BY f.id, f.pos\n				ON CONFLICT (order_id) DO NOTHING'

# isolation DB OUTDIR SPEC... — pg_isolation_regress of the SPECs against
# the existing database DB, its output in OUTDIR.out
isolation() {
	local db=$1 out=$2
	shift 2
	mkdir -p "$out"
	chmod 777 "$out"
	"$(pg_bindir)/pg_config" --pkglibdir >/dev/null || return 1
	"$("$(pg_bindir)/pg_config" --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress" \
		--inputdir="$RO_ROOT/test/isolation" --outputdir="$out" --bindir="$(pg_bindir)" \
		--host="$PGHOST" --port="$PGPORT" --user="$PGUSER" --use-existing --dbname="$db" "$@" >"$out.out" 2>&1
}

# result OUT SPEC — "ok" or what pg_isolation_regress said of SPEC
result() {
	awk -v name="$2" '
		{ i = ($1 == "test") ? 2 : 1 }
		$i == name && $(i + 1) == "..." { print $(i + 2); exit }
		$1 == "ok" && $3 == "-" && $4 == name { print "ok"; exit }
		$1 == "not" && $2 == "ok" && $4 == "-" && $5 == name { print "FAILED"; exit }' "$1.out"
}

# install DB SCRIPT — DB made and SCRIPT run in it by the admin role
install() {
	createdb -U "$ADMIN" "$1" && pg_psql -U "$ADMIN" -d "$1" -f "$2" >/dev/null 2>&1
}

SPECS=()
for spec in "$RO_ROOT"/test/isolation/specs/*.spec; do
	SPECS+=("$(basename "$spec" .spec)")
done
tap_plan $((${#SPECS[@]} + 2))

sql_only_work iso
"$RO_ROOT/tools/build-sql-only" "$WORK/build" || tap_bail "tools/build-sql-only failed"
python3 - "$WORK/build/received_orders.sql" "$WORK/input-order.sql" "$INSERT_ORDER" <<-'EOF' ||
	import sys
	src, dst, old = sys.argv[1], sys.argv[2], sys.argv[3]
	s = open(src).read()
	if s.count(old) != 4:
	    sys.exit("the batch's INSERT order is not found in each of the four forms")
	open(dst, "w").write(s.replace(old, old.replace("f.id, f.pos", "f.pos")))
	EOF
	tap_bail "could not make the copy that inserts in input order"
chmod -R a+rX "$WORK"

sql_only_cluster
install ro_iso_sql "$WORK/build/received_orders.sql" || tap_bail "the admin role could not install the flavour"

isolation ro_iso_sql "$WORK/flavour" "${SPECS[@]}"
for name in "${SPECS[@]}"; do
	r=$(result "$WORK/flavour" "$name")
	tap_ok "$([[ $r == ok ]] && echo 0 || echo 1)" "$name, on the SQL-only flavour, gives its expected output"
	[[ $r == ok ]] || tap_diag "$name: ${r:-no result}: $(tail -n 20 "$WORK/flavour/regression.diffs" 2>/dev/null)"
done

install ro_iso_input_order "$WORK/input-order.sql" || tap_bail "the admin role could not install the copy"
isolation ro_iso_input_order "$WORK/input-order" opposite-order-batches
r=$(result "$WORK/input-order" opposite-order-batches)
tap_ok "$([[ -n $r && $r != ok ]] && echo 0 || echo 1)" \
	"negative control: a copy inserting in input order fails opposite-order-batches (${r:-no result})"
tap_like "$(cat "$WORK/input-order/regression.diffs" 2>/dev/null)" "deadlock detected" \
	"... with a deadlock (40P01), as the spec's header says it would"
tap_done
