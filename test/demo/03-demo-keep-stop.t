#!/bin/bash
# 03-demo-keep-stop.t — `demo/run --keep` leaves PostgreSQL, Kafka and the
# feeder running and prints how to use them: its psql command reaches the
# materialized rows, its kcat command produces an order the running feeder
# materializes, and its stop command (demo/run --stop DIR) stops every
# process it started, by PID, and removes the directory.

set -uo pipefail
RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
export RO_ROOT
# shellcheck source=../lib/demo.sh
. "$RO_ROOT/test/lib/demo.sh"

STOP_CMD=

# cleanup — whatever happened, stop what the kept demo runs (before the
# exit handler of demo.sh, registered first, removes $TMP)
cleanup() {
	[[ -n $STOP_CMD ]] && eval "$STOP_CMD" >/dev/null 2>&1
}
ro_on_exit cleanup

# rows PSQL_CONNINFO — orders in the demo's table, through the printed psql
rows() {
	psql -X -At "$1" -c 'SELECT count(*) FROM received_orders.received_orders' 2>/dev/null
}

tap_plan 8

status=0
"$RO_ROOT/demo/run" --no-build --events 600 --keep --account "$ACCOUNT" </dev/null >"$OUT" 2>&1 || status=$?
STOP_CMD=$(grep -E '^  \S*demo/run --stop ' "$OUT" | head -n 1)
tap_is "$status" 0 "demo/run --keep exits 0"
tap_last_ok || tap_diag "$(tail -n 40 "$OUT")"
[[ -n $STOP_CMD ]] || tap_bail "no stop command printed"

mapfile -t pids < <(sed -n 's/^Still running (--keep): //p' "$OUT" | grep -oE 'pid [0-9]+' | awk '{ print $2 }')
running=0
for pid in "${pids[@]}"; do
	alive "$pid" && running=$((running + 1))
done
tap_is "${#pids[@]} $running" "3 3" "PostgreSQL, Kafka and the feeder are still running"

conninfo=$(sed -nE "s/^  psql '([^']+)'.*/\\1/p" "$OUT" | head -n 1)
PATH=$(/usr/lib/postgresql/15/bin/pg_config --bindir 2>/dev/null || echo /usr/bin):$PATH
tap_is "$(rows "$conninfo")" "$(sed -n 's/^expected_rows=//p' "$ACCOUNT")" \
	"the printed psql command reaches the materialized rows"

produce=$(grep -E '^  echo .*\| kcat ' "$OUT" | head -n 1)
before=$(rows "$conninfo")
tap_cmd "the printed kcat command produces an order" bash -c "$produce"
for ((i = 0; i < 150; i++)); do
	[[ $(rows "$conninfo") == $((before + 1)) ]] && break
	sleep 0.1
done
tap_is "$(rows "$conninfo")" "$((before + 1))" "the kept feeder materializes it"

stop_status=0
eval "$STOP_CMD" >"$TMP/stop.out" 2>&1 || stop_status=$?
tap_is "$stop_status" 0 "the printed stop command exits 0"
tap_last_ok || tap_diag "$(cat "$TMP/stop.out")"
left=()
for pid in "${pids[@]}"; do
	alive "$pid" && left+=("$pid")
done
tap_is "${left[*]:-}" "" "no process the demo started is left running"
dir=${STOP_CMD##* }
if [[ -n $dir && ! -e $dir ]]; then
	tap_ok 0 "the stop command removed the demo's directory"
else
	tap_ok 1 "the stop command removed the demo's directory"
	tap_diag "directory: ${dir:-none}"
fi
STOP_CMD=
tap_done
