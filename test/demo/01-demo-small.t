#!/bin/bash
# 01-demo-small.t — `make demo` at a small size: demo/run --no-build
# --events 3000 exits 0, its summary numbers equal the generator's own
# account (rows, duplicates, quarantine, tombstones), its quarantine table
# by reason adds up, it shows 5 sample rows, and it leaves no process and
# no directory behind.
#
# The demo's numbers are read from its printed summary, the generator's
# from the account file it copies there (--account): the two come from
# different places, so a wrong summary fails here even if the demo's own
# verdict said "ok".

set -uo pipefail
RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
export RO_ROOT
# shellcheck source=../lib/demo.sh
. "$RO_ROOT/test/lib/demo.sh"


tap_plan 11

status=0
"$RO_ROOT/demo/run" --no-build --events 3000 --account "$ACCOUNT" </dev/null >"$OUT" 2>&1 || status=$?
tap_is "$status" 0 "demo/run --no-build --events 3000 exits 0"
tap_last_ok || tap_diag "$(tail -n 40 "$OUT")"
[[ -s $ACCOUNT ]] || tap_bail "the demo wrote no generator account to --account"

tap_is "$(account produced)" 3000 "the generator's account: 3000 messages produced"
tap_is "$(summary 'rows materialized')" "$(account expected_rows)" \
	"rows materialized = the generator's expected_rows ($(account expected_rows))"
tap_is "$(summary 'duplicates absorbed')" "$(account expected_duplicates)" \
	"duplicates absorbed = the generator's expected_duplicates ($(account expected_duplicates))"
tap_is "$(summary 'quarantined')" "$(account expected_quarantined)" \
	"quarantined = the generator's expected_quarantined ($(account expected_quarantined))"
tap_is "$(summary 'tombstones skipped')" "$(account tombstones)" \
	"tombstones skipped = the generator's tombstones ($(account tombstones))"

# the "by reason" table: rows "outcome | sqlstate | reason | messages"
by_reason=$(sed -n '/^Quarantined messages by reason/,/^A sample/p' "$OUT" |
	awk -F'|' 'NF == 4 && $1 ~ /^ (rejected|conflict) / { s += $4; n++ } END { print n + 0, s + 0 }')
tap_like "$by_reason" "^[1-9][0-9]* $(account expected_quarantined)\$" \
	"the quarantine grouped by reason adds up to expected_quarantined"

sample=$(sed -n '/^A sample of 5/,/^$/p' "$OUT" |
	grep -cE '^ [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} \|' || true)
tap_is "$sample" 5 "the summary shows a sample of 5 rows"

tap_like "$(grep -E '^  throughput ' "$OUT")" '^  throughput +[1-9][0-9,]* +events/s' \
	"the summary states a throughput in events/s"

# every process the demo started: PostgreSQL, Kafka and the feeder
demo_nothing_left 3 "no process the demo started is left running"

workdir=$(sed -n 's/^Working directory: //p' "$OUT")
if [[ -n $workdir && ! -e $workdir ]]; then
	tap_ok 0 "the demo removed its working directory"
else
	tap_ok 1 "the demo removed its working directory"
	tap_diag "working directory: ${workdir:-not printed}"
fi
tap_done
