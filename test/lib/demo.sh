# test/lib/demo.sh — what the demo suite's scripts (test/demo/*.t) share:
# a scratch directory for demo/run's output and the generator's account,
# reading numbers from both, and telling whether a process still runs.
#
# Sourced (bash) by a script that set RO_ROOT; sources common.sh.  Sets
#
#   TMP                      a scratch directory, removed at exit
#   OUT                      $TMP/out, for the demo's printed output
#   ACCOUNT                  $TMP/account, for the generator's account
#                            (demo/run --account)
#
# and gives the functions:
#
#   account KEY              the generator's value of KEY in $ACCOUNT
#   summary LABEL            the first number of the summary line LABEL in
#                            $OUT, without its thousands separators
#   alive PID                PID runs (a zombie waiting for its reaper does
#                            not count)
#   demo_nothing_left MIN DESC
#                            one assertion DESC: $OUT names at least MIN
#                            processes "(pid N" (PostgreSQL, Kafka, the
#                            feeder...) and none of them runs any more
# shellcheck shell=bash

# shellcheck source-path=SCRIPTDIR source=common.sh
. "$RO_ROOT/test/lib/common.sh"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ro-demo-test.XXXXXX")
ro_on_exit "rm -rf -- '$TMP'"
OUT=$TMP/out
# shellcheck disable=SC2034 # read by the scripts through account
ACCOUNT=$TMP/account

# account KEY — the generator's value
account() {
	sed -n "s/^$1=//p" "$ACCOUNT"
}

# summary LABEL — the first number of the demo's summary line LABEL,
# without its thousands separators
summary() {
	sed -n '/^Summary$/,$p' "$OUT" |
		sed -nE "s/^  $1 +([0-9,]+).*/\\1/p" | head -n 1 | tr -d ,
}

# alive PID — PID runs (a zombie waiting for its reaper does not count)
alive() {
	local state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[[ -n $state && $state != Z ]]
}

# demo_nothing_left MIN DESC — every process the demo started says "(pid N"
# in its narrative; at least MIN of them are named and none is left running
demo_nothing_left() {
	local min=$1 desc=$2 pid
	local -a pids left=()
	mapfile -t pids < <(grep -oE '\(pid [0-9]+' "$OUT" | awk '{ print $2 }' | sort -u)
	for pid in "${pids[@]}"; do
		alive "$pid" && left+=("$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)")
	done
	if [[ ${#pids[@]} -ge $min && ${#left[@]} == 0 ]]; then
		tap_ok 0 "$desc (${pids[*]})"
	else
		tap_ok 1 "$desc"
		tap_diag "pids found in the output: ${pids[*]:-none}" "still running: ${left[*]:-none}"
	fi
}
