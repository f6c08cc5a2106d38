#!/bin/bash
# test/tools/07-bench-feeder-stops-its-servers-on-signals.t — bench/feeder
# sent SIGTERM leaves nothing running and nothing behind: not its
# PostgreSQL, not its development Kafka, not its feeders, not its work
# directories.
#
# bench/feeder runs on the smallest case (2,000 events, one partition, one
# round, no profile, latency or peer) with a TMPDIR of its own, so that
# every directory it makes and every process it starts (the postmaster's
# -D, the feeders' binary copied into its work directory, ro-dev-kafka's
# bootstrap file) names that directory.  Two moments:
#  - while its two feeders run (the last round's "two feeders in one
#    group"), when the script sleeps in wait_logged's timed read: there the
#    exit handlers crashed (bash 5.2's read timeout, see
#    test/tools/06-exit-handlers-run-on-signals.t) and the postmaster, the
#    feeders and ro-dev-kafka stayed up;
#  - while initdb makes its cluster, before the cleanup of the processes
#    is registered: the work directory stayed.
# A case fails when the script has not exited 60 s after the signal; what
# is left is then stopped by PID.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
export RO_ROOT
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

for built in feeder/received-orders-feeder tools/ro-generate-events tools/ro-dev-kafka; do
	if [[ ! -x $RO_ROOT/$built ]]; then
		echo "1..0 # SKIP $built is not built (make)"
		exit 0
	fi
done

tap_plan 8

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-bench-signal-test.XXXXXX")
chmod 755 "$WORK"
BENCH_PID=

# stop_leftovers — what a failed case left running goes, by PID
stop_leftovers() {
	local pid rest
	[[ -z $BENCH_PID ]] || kill -KILL "$BENCH_PID" 2>/dev/null || true
	while read -r pid rest; do
		kill -KILL "$pid" 2>/dev/null || true
	done < <(ro_processes_naming "$WORK")
	rm -rf -- "$WORK"
}
ro_on_exit stop_leftovers

# run_case NAME READY... — start bench/feeder with TMPDIR=$WORK/NAME, wait
# (120 s at most) until READY (a command) succeeds, send SIGTERM; sets
# CASE_STATUS (its exit status, "timeout" when it did not exit in 60 s)
run_case() {
	local name=$1 deadline
	shift
	mkdir -p "$WORK/$name"
	chmod 755 "$WORK/$name"
	TMPDIR=$WORK/$name "$RO_ROOT/bench/feeder" --events 2000 --partitions 1 --repeat 1 \
		--no-profile --no-latency --no-peer >"$WORK/$name.out" 2>"$WORK/$name.err" &
	BENCH_PID=$!
	ro_wait_until 120 "$@" || tap_bail "$name: bench/feeder did not get there: $(tail -n 5 "$WORK/$name.err")"
	kill -TERM "$BENCH_PID"
	deadline=$((SECONDS + 60))
	while ((SECONDS < deadline)) && bench_alive; do
		sleep 0.2
	done
	CASE_STATUS=0
	if bench_alive; then
		CASE_STATUS=timeout
	else
		wait "$BENCH_PID" || CASE_STATUS=$?
	fi
	BENCH_PID=
}

# bench_alive — bench/feeder has not exited yet (bash may have reaped it
# already, or it may be a zombie still)
bench_alive() {
	kill -0 "$BENCH_PID" 2>/dev/null && [[ $(awk '{ print $3 }' "/proc/$BENCH_PID/stat" 2>/dev/null) != Z ]]
}

# two_feeders_running — bench/feeder's last round runs its two feeders
two_feeders_running() {
	grep -q 'two-session ceiling' "$WORK/two.err" &&
		[[ $(pgrep -c -P "$BENCH_PID" -f received-orders-feeder) == 2 ]] &&
		sleep 0.5
}

# initdb_running — the cluster's directory is being made
initdb_running() {
	compgen -G "$WORK/initdb/ro-pg.*/data/base" >/dev/null
}

run_case two two_feeders_running
tap_is "$CASE_STATUS" 143 "TERM while its two feeders run: bench/feeder exits 143"
left=$(ro_processes_naming "$WORK/two")
tap_is "$left" "" "TERM while its two feeders run: no postmaster, feeder or ro-dev-kafka of it left running"
tap_is "$(ls -A "$WORK/two")" "" "TERM while its two feeders run: its temporary directories are removed"
tap_like "$(cat "$WORK/two.err")" "two feeders|two-session ceiling" "the case reached the two feeders' round"

run_case initdb initdb_running
tap_is "$CASE_STATUS" 143 "TERM during initdb: bench/feeder exits 143"
left=$(ro_processes_naming "$WORK/initdb")
tap_is "$left" "" "TERM during initdb: nothing of it left running"
tap_is "$(ls -A "$WORK/initdb")" "" "TERM during initdb: its temporary directories (the work directory too) are removed"
status=0
grep -q 'feeder, --batch-size 1' "$WORK/initdb.err" && status=1
tap_ok "$status" "the initdb case was signalled before any feeder run"

tap_done
