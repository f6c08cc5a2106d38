#!/bin/bash
# test/tools/06-exit-handlers-run-on-signals.t — the exit handlers of
# test/lib/common.sh (ro_on_exit), which stop every server the scripts
# start, run to their end on INT, TERM and HUP, whatever the script was
# doing, and a second signal does not cut them short.
#
# Each case runs a small script that registers a handler and then waits as
# bench/feeder's wait_logged does, in a timed read on a FIFO (`read -t`,
# a sleep that starts no process).  The handler takes longer than the
# read's timeout and runs a command substitution before it writes its
# mark: bash 5.2 leaves the interrupted read's timeout armed after the exit,
# and died of SIGSEGV there (exit 139, no mark), which left bench/feeder's
# PostgreSQL running.  Also: HUP (not trapped before), and a second TERM
# while the handler runs.  A negative control shows the cases can fail: the
# same script with the traps common.sh used to install (`exit 143` straight
# from the TERM trap) loses the mark.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
export RO_ROOT
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

tap_plan 10

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-exit-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"

# the script under test: MARK is written by its exit handler once the slow
# part is done; OLD_TRAPS=1 puts back the TERM trap of before
cat >"$WORK/waiter" <<'EOF'
#!/bin/bash
set -euo pipefail
. "$RO_ROOT/test/lib/common.sh"
ro_on_exit "sleep 0.8; x=\$(echo done); echo \"\$x\" >'$MARK'"
[[ ${OLD_TRAPS:-0} != 1 ]] || trap 'exit 143' TERM
mkfifo "$WORK/tick.$$"
exec {tick}<>"$WORK/tick.$$"
echo $$ >"$MARK.ready"
while :; do
	read -r -t 0.25 -u "$tick" _ || true
done
EOF
chmod +x "$WORK/waiter"

# run_case NAME SIGNAL [SECOND_SIGNAL_AFTER] — start the waiter (with INT
# at its default: a background job of a script ignores it otherwise; killed
# after 20 s: bash went back to the read loop after its crash, once), send
# SIGNAL once it waits, maybe the same signal again while its handler runs;
# sets CASE_STATUS and CASE_MARK
run_case() {
	local name=$1 sig=$2 again=${3:-} pid waiter
	export MARK=$WORK/$name.mark WORK
	timeout -s KILL 20 perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die "exec: $!"' "$WORK/waiter" &
	waiter=$!
	ro_wait_until 10 test -s "$MARK.ready" || tap_bail "the waiter of $name did not start"
	pid=$(cat "$MARK.ready")
	sleep 0.4
	kill "-$sig" "$pid"
	if [[ -n $again ]]; then
		sleep "$again"
		kill "-$sig" "$pid" 2>/dev/null || true
	fi
	CASE_STATUS=0
	wait "$waiter" || CASE_STATUS=$?
	CASE_MARK=$(cat "$MARK" 2>/dev/null || true)
	unset OLD_TRAPS
}

run_case term TERM
tap_is "$CASE_STATUS" 143 "TERM during a timed read: the script exits 143 (not 139, bash's SIGSEGV)"
tap_is "$CASE_MARK" done "TERM during a timed read: the exit handler ran to its end"

run_case int INT
tap_is "$CASE_STATUS" 130 "INT during a timed read: the script exits 130"
tap_is "$CASE_MARK" done "INT during a timed read: the exit handler ran to its end"

run_case hup HUP
tap_is "$CASE_STATUS" 129 "HUP during a timed read: the script exits 129"
tap_is "$CASE_MARK" done "HUP during a timed read: the exit handler ran to its end"

run_case twice TERM 0.3
tap_is "$CASE_STATUS" 143 "a second TERM while the handler runs: the script still exits 143"
tap_is "$CASE_MARK" done "a second TERM while the handler runs: the handler still ran to its end"

export OLD_TRAPS=1
run_case old TERM
status=0
[[ $CASE_MARK != done ]] || status=1
tap_ok "$status" "negative control: with the TERM trap of before, the handler never finishes (exit $CASE_STATUS)"

# the handlers leave the signals trapped as before for a script that goes on
out=$(bash -c '. "$RO_ROOT/test/lib/common.sh"; ro_on_exit true; ro_run_exit_handlers; trap -p TERM')
tap_like "$out" "ro__exit_on_signal 143" "after ro_run_exit_handlers, TERM is trapped again"

tap_done
