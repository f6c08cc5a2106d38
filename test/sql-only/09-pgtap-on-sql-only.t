#!/bin/bash
# test/sql-only/09-pgtap-on-sql-only.t — the pgTAP suite (test/pgtap/*.sql)
# on the SQL-only flavour, one TAP point per pgTAP test: each file in a
# fresh database where a NOSUPERUSER CREATEROLE CREATEDB admin role (a
# managed service's) ran the psql script, pgtap created by the superuser
# (as a service's extension list offers it) and a DBA's grants for the
# file's own triggers given (dba_grants), run by pg_prove.  A test that
# passes is "ok"; the tests that cannot hold on the flavour are named one
# by one below (file and description) with why, and are "ok ... # SKIP"
# while they fail; any other failure, a test that did not run, and an
# excepted test that passes or is not found are "not ok".  The files not
# run at all are named below with why, as a diagnostic.
#
# TAP on stdout; starts its own PostgreSQL 15 cluster (it creates roles).

set -uo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/sql-only/lib.sh
. "$(dirname "$0")/lib.sh"

ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
ADMIN=ro_pgtap_cloud_admin

NO_EXTENSION="the flavour has no pg_extension row: a psql install is no extension"
NO_GUC="the flavour has no received_orders.max_event_bytes setting: a GUC only a loaded library defines"

# The tests that cannot hold on the flavour: FILE|DESCRIPTION|WHY, WHY
# EXT (NO_EXTENSION) or GUC (NO_GUC); 03's 53 and 54 count the rows of
# events its 48 rejects under a lowered max_event_bytes, 08's 18, 20 and 21
# read the quarantine row of the value its 17 rejects so, and 04's batch
# holds an element over its max_event_bytes of 600
EXCEPTED=$(
	cat <<-'EOF'
		01_structure|extension received_orders is installed|EXT
		01_structure|extension version is 1.4|EXT
		01_structure|CREATE EXTENSION installs the control file's default_version|EXT
		01_structure|extension lives in schema received_orders|EXT
		01_structure|extension is not relocatable|EXT
		01_structure|received_orders is marked in pg_extension.extconfig (dumped by pg_dump)|EXT
		01_structure|received_orders_quarantine is marked in pg_extension.extconfig (dumped by pg_dump)|EXT
		01_structure|the quarantine id sequence is marked in pg_extension.extconfig (dumped by pg_dump)|EXT
		01_structure|received_orders_positions is marked in pg_extension.extconfig (dumped by pg_dump)|EXT
		01_structure|received_orders_replays is marked in pg_extension.extconfig (dumped by pg_dump)|EXT
		03_materialize_order|received_orders.max_event_bytes defaults to 1048576 bytes|GUC
		03_materialize_order|received_orders.max_event_bytes is superuser-settable|GUC
		03_materialize_order|with max_event_bytes = 200 a 400-byte event is rejected with 54000|GUC
		03_materialize_order|no rejected event left a row|GUC
		03_materialize_order|exactly the six accepted orders were written (a1, ca, cb, cc, d1, d3)|GUC
		04_materialize_orders|one result per element, in input order, with the exact (position, outcome, sqlstate)|GUC
		04_materialize_orders|inserted, duplicate and conflict results carry the order_id|GUC
		04_materialize_orders|no rejected element was written to the table|GUC
		04_materialize_orders|rows are inserted in order_id order (B before A although A comes first in the batch)|GUC
		04_materialize_orders|the quarantine holds exactly the rejected and conflicting elements: coordinates, key, raw bytes, outcome, sqlstate|GUC
		04_materialize_orders|the same batch again: the valid elements are duplicates, the others as before|GUC
		04_materialize_orders|the redelivered batch quarantines nothing new (unique coordinates)|GUC
		04_materialize_orders|the redelivered batch inserts nothing|GUC
		07_positions|received_orders_positions is marked in pg_extension.extconfig (dumped by pg_dump)|EXT
		07_positions|received_orders_positions is dumped whole (empty filter condition)|EXT
		07_positions|received_orders_positions is a member of the extension|EXT
		08_hostile_input|a 50 kB value with max_event_bytes 10000 is rejected as too large|GUC
		08_hostile_input|it keeps the first 4096 bytes of the value and of the key, with their lengths as received|GUC
		08_hostile_input|replay_quarantined refuses a row that keeps only a prefix (55000)|GUC
		08_hostile_input|its reason gives the length as received|GUC
		12_consumer_groups|received_orders_consumer_groups is marked in pg_extension.extconfig (dumped by pg_dump)|EXT
		14_status|received_orders_feeders is runtime state: not marked for pg_dump|EXT
		15_replays_counted|received_orders_replays is marked in pg_extension.extconfig (dumped by pg_dump)|EXT
		17_position_gaps|received_orders_position_gaps is marked in pg_extension.extconfig (dumped by pg_dump)|EXT
	EOF
)

# The files not run: FILE|WHY
NOT_RUN=$(
	cat <<-'EOF'
	EOF
)

RESULTS=()

# dba_grants FILE — what a DBA grants received_orders_owner in FILE's
# database for its own triggers: on the flavour a trigger on the schema's
# tables runs as that role (the C functions run as a superuser), and 04's
# logs into a table of public that the file creates
dba_grants() {
	case $1 in
	04_materialize_orders)
		echo "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT INSERT ON TABLES TO received_orders_owner;
			ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE ON SEQUENCES TO received_orders_owner"
		;;
	esac
}

# point STATUS DESC [SKIP_WHY] — one result to print once the plan is known
point() {
	RESULTS+=("$1|${3:-}|$2")
}

# excepted FILE DESC — the reason FILE's test DESC is excepted, if it is
excepted() {
	awk -F'|' -v f="$1" -v d="$2" '$1 == f && $2 == d { print $3; exit }' <<<"$EXCEPTED_WHY"
}

# account FILE OUT — FILE's pgTAP results (pg_prove -v output OUT) as points
account() {
	local file=$1 out=$2 plan line status num desc why seen=() n
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$out" | head -n 1)
	if [[ -z $plan ]]; then
		point 1 "$file: pg_prove gave no plan ($(grep -m1 -E 'ERROR|error' "$out" || echo 'no output'))"
		return
	fi
	while IFS= read -r line; do
		if [[ $line =~ ^(not\ )?ok\ ([0-9]+)(\ -\ (.*))?$ ]]; then
			status=0
			[[ -n ${BASH_REMATCH[1]} ]] && status=1
			num=${BASH_REMATCH[2]}
			desc=${BASH_REMATCH[4]}
			seen[num]=1
			why=$(excepted "$file" "$desc")
			if [[ -z $why ]]; then
				point "$status" "$file $num: $desc"
			elif [[ $status == 1 ]]; then
				point 0 "$file $num: $desc" "$why"
			else
				point 1 "$file $num: $desc: excepted ($why), but it passes on the flavour"
			fi
		fi
	done <"$out"
	for ((n = 1; n <= plan; n++)); do
		[[ -n ${seen[n]:-} ]] || point 1 "$file $n: did not run (planned $plan)"
	done
	((${#seen[@]} == plan)) || tap_diag "$file: $(grep -m1 -E 'ERROR|FATAL' "$out" || echo "ran ${#seen[@]} of $plan")"
	while IFS='|' read -r f desc why; do
		[[ $f == "$file" ]] || continue
		grep -Eq "^(not )?ok [0-9]+ - $(printf '%s' "$desc" | sed 's/[][\.*^$+?(){}|/]/\\&/g')$" "$out" ||
			point 1 "$file: the excepted test \"$desc\" is not among its tests"
	done <<<"$EXCEPTED_WHY"
}

EXCEPTED_WHY=$(sed -e "s/|EXT\$/|$NO_EXTENSION/" -e "s/|GUC\$/|$NO_GUC/" <<<"$EXCEPTED")

sql_only_work pgtap

if ! out=$("$ROOT/tools/build-sql-only" "$WORK/build" 2>&1); then
	tap_plan 1
	tap_ok 1 "tools/build-sql-only composes the psql script"
	tap_diag "$out"
	tap_done
fi
chmod -R a+rX "$WORK"

sql_only_cluster

files=0
for sql in "$ROOT"/test/pgtap/*.sql; do
	file=$(basename "$sql" .sql)
	why=$(awk -F'|' -v f="$file" '$1 == f { print $2 }' <<<"$NOT_RUN")
	if [[ -n $why ]]; then
		tap_diag "not run: $file ($why)"
		continue
	fi
	files=$((files + 1))
	db="pgtap_sql_$file"
	if ! out=$(createdb -U "$ADMIN" "$db" 2>&1 &&
		pg_psql -U "$ADMIN" -d "$db" -f "$WORK/build/received_orders.sql" 2>&1 >/dev/null &&
		pg_psql -d "$db" -c "CREATE EXTENSION pgtap" 2>&1 &&
		pg_psql -d "$db" -c "$(dba_grants "$file")" 2>&1); then
		point 1 "$file: the admin role installs the flavour into a database for it"
		tap_diag "$out"
		continue
	fi
	pg_prove -v -d "$db" "$sql" >"$WORK/$file.out" 2>&1
	account "$file" "$WORK/$file.out"
done
while IFS='|' read -r file _; do
	[[ -z $file || -f $ROOT/test/pgtap/$file.sql ]] || point 1 "$file, named as not run, is a file of test/pgtap"
done <<<"$NOT_RUN"

tap_plan "${#RESULTS[@]}"
passed=0
skipped=0
for r in "${RESULTS[@]}"; do
	status=${r%%|*}
	r=${r#*|}
	why=${r%%|*}
	desc=${r#*|}
	if [[ -n $why ]]; then
		TAP__NUMBER=$((TAP__NUMBER + 1))
		skipped=$((skipped + 1))
		printf 'ok %d - %s # SKIP %s\n' "$TAP__NUMBER" "$desc" "$why"
	else
		[[ $status == 0 ]] && passed=$((passed + 1))
		tap_ok "$status" "$desc"
	fi
done
tap_diag "$files files of test/pgtap on the SQL-only flavour: $passed tests pass, $skipped excepted and failing (SKIP)"
tap_done
