#!/bin/bash
# test/tools/08-missing-command-named-at-once.t — a tool run without a
# command it needs says so at once: it exits non-zero within a few seconds,
# naming the command and how to get it (`make deps` or
# `tools/install-deps test`, and the Debian package), instead of waiting
# for a server that can never be seen serving.
#
# Each tool runs with a PATH of symbolic links to every program of the
# current PATH but one (kcat, java or node), and a TMPDIR of its own; it is
# killed after 30 s, which counts as a failure (tools/apache-kafka/run,
# test/kafka-real/cluster, test/soak/run --kafka apache and demo/run --kafka
# apache waited 120 s for a node to serve and printed its healthy log when
# kcat was missing, as ak_start never asked for it; Apicurio's start waited
# 180 s without curl).  Also: every Debian package ro_require_commands
# names is one test/packages.txt lists, so its remedy installs it.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
export RO_ROOT
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

tap_plan 17

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-missing-command-test.XXXXXX")
chmod 755 "$WORK"
# stop_leftovers — what a tool that failed late left running goes, by PID
stop_leftovers() {
	local pid rest
	while read -r pid rest; do
		kill -KILL "$pid" 2>/dev/null || true
	done < <(ro_processes_naming "$WORK")
	rm -rf -- "$WORK"
}
ro_on_exit stop_leftovers

# path_without CMD — a directory of links to every program on PATH but CMD
path_without() {
	local dir=$WORK/path-without-$1 p f name
	mkdir -p "$dir"
	IFS=: read -r -a p <<<"$PATH"
	for f in "${p[@]}"; do
		for f in "$f"/*; do
			name=${f##*/}
			[[ -x $f && ! -d $f && $name != "$1" && ! -e $dir/$name ]] || continue
			ln -s "$f" "$dir/$name"
		done
	done
	echo "$dir"
}

# run_without CMD NAME ARGS... — run ARGS with PATH lacking CMD (30 s at
# most); sets RUN_STATUS, RUN_SECONDS and RUN_ERR (its stderr)
run_without() {
	local cmd=$1 name=$2 path start
	shift 2
	path=$(path_without "$cmd")
	mkdir -p "$WORK/tmp-$name"
	chmod 755 "$WORK/tmp-$name"
	start=$(date +%s.%N)
	RUN_STATUS=0
	PATH=$path TMPDIR=$WORK/tmp-$name timeout -s KILL 30 "$@" </dev/null \
		>"$WORK/$name.out" 2>"$WORK/$name.err" || RUN_STATUS=$?
	RUN_SECONDS=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%d", e - s }')
	RUN_ERR=$(cat "$WORK/$name.err")
}

# check NAME CMD REMEDY — the assertions of one run: a prompt failure, and
# a message naming CMD and REMEDY
check() {
	local name=$1 cmd=$2 remedy=$3 status=0
	[[ $RUN_STATUS != 0 && $RUN_STATUS != 137 && $RUN_SECONDS -le 15 ]] || status=1
	tap_ok "$status" "$name without $cmd: fails within 15 s (exit $RUN_STATUS after $RUN_SECONDS s)"
	tap_like "$RUN_ERR" "needs $cmd, which is not on the PATH: run \`$remedy\` \(Debian package [a-z0-9.+-]+\)" \
		"$name without $cmd: names $cmd, \`$remedy\` and the package"
}

run_without kcat apache-run "$RO_ROOT/tools/apache-kafka/run" start 1 "$WORK/apache-run"
check tools/apache-kafka/run kcat "tools/install-deps test"

run_without java apache-run-java "$RO_ROOT/tools/apache-kafka/run" start 1 "$WORK/apache-run-java"
check tools/apache-kafka/run java "tools/install-deps test"

run_without kcat kafka-real "$RO_ROOT/test/kafka-real/cluster" start "$WORK/kafka-real"
check test/kafka-real/cluster kcat "tools/install-deps test"

run_without kcat soak env SOAK_SECONDS=30 "$RO_ROOT/test/soak/run" --kafka apache
check "test/soak/run --kafka apache" kcat "tools/install-deps test"

run_without kcat demo "$RO_ROOT/demo/run" --kafka apache --no-build --events 100
check "demo/run --kafka apache" kcat "tools/install-deps test"

run_without node demo-avro "$RO_ROOT/demo/run" --avro --no-build --events 100
check "demo/run --avro" node "tools/install-deps test"

run_without kcat bench-feeder "$RO_ROOT/bench/feeder" --no-peer --events 100
check bench/feeder kcat "tools/install-deps test"

run_without kcat bench-anchor "$RO_ROOT/bench/anchor" --events 100
check bench/anchor kcat "tools/install-deps test"

# the packages ro_require_commands names are those test/packages.txt lists
# shellcheck source=test/lib/packages.sh
. "$RO_ROOT/test/lib/packages.sh"
unlisted=
for cmd in kcat curl unzip openssl pgbouncer zzuf npm java javac keytool mvn node psql pg_config \
	pg_prove promtool pkg-config make cc gcc; do
	package=$(ro__command_package "$cmd")
	ro_package_list | sed 's/@.*//' | grep -qx -- "$package" || unlisted+=" $cmd:${package:-none}"
done
tap_is "$unlisted" "" "every command ro_require_commands knows comes from a package of test/packages.txt"

tap_done
