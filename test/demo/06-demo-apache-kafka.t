#!/bin/bash
# 06-demo-apache-kafka.t — demo/run --kafka apache: the same demo against a
# real single-node Apache Kafka (test/lib/apache_kafka.sh) exits 0, says it
# ran on Apache Kafka, its summary numbers equal the generator's own
# account, and it leaves no process (PostgreSQL, the Kafka JVM, the
# feeder) and no directory behind.

set -uo pipefail
RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
export RO_ROOT
# shellcheck source=../lib/demo.sh
. "$RO_ROOT/test/lib/demo.sh"

tap_plan 8

status=0
"$RO_ROOT/demo/run" --no-build --kafka apache --events 3000 --account "$ACCOUNT" </dev/null >"$OUT" 2>&1 || status=$?
tap_is "$status" 0 "demo/run --no-build --kafka apache --events 3000 exits 0"
tap_last_ok || tap_diag "$(tail -n 40 "$OUT")"
[[ -s $ACCOUNT ]] || tap_bail "the demo wrote no generator account to --account"

tap_like "$(grep -E 'Apache Kafka [0-9.]+, KRaft, one node' "$OUT")" 'Apache Kafka 4\.' \
	"the demo ran on a real Apache Kafka 4.x node"
tap_is "$(summary 'rows materialized')" "$(account expected_rows)" \
	"rows materialized = the generator's expected_rows ($(account expected_rows))"
tap_is "$(summary 'duplicates absorbed')" "$(account expected_duplicates)" \
	"duplicates absorbed = the generator's expected_duplicates ($(account expected_duplicates))"
tap_is "$(summary 'quarantined')" "$(account expected_quarantined)" \
	"quarantined = the generator's expected_quarantined ($(account expected_quarantined))"
tap_is "$(summary 'tombstones skipped')" "$(account tombstones)" \
	"tombstones skipped = the generator's tombstones ($(account tombstones))"

demo_nothing_left 3 "no process the demo started is left running"

workdir=$(sed -n 's/^Working directory: //p' "$OUT")
if [[ -n $workdir && ! -e $workdir ]]; then
	tap_ok 0 "the demo removed its working directory"
else
	tap_ok 1 "the demo removed its working directory"
	tap_diag "working directory: ${workdir:-not printed}"
fi
tap_done
