#!/bin/bash
# test/tools/13-dev-kafka-first-join-not-held.t — the development Kafka does
# not hold an empty group's first join, and --initial-rebalance-delay MS
# gives back a broker's hold when a test wants members to join together.
#
# librdkafka's mock cluster keeps the broker default of
# group.initial.rebalance.delay.ms, 3000 ms: a lone consumer waited 3 s
# for its first assignment, and every feeder started on the mock with it.
# ro-dev-kafka sets 0 unless told otherwise.  A kcat consumer group member
# (kcat -G) prints its assignments; the time from its start to its first
# assignment is read from its output.  Point 2 is bounded by the broker
# default it replaces (the join itself takes tens of milliseconds), point 3
# from below only, so neither measures speed.  Point 4 shows what the hold
# is for: two members started together share one first rebalance.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/kafka.sh
. "$RO_ROOT/test/lib/kafka.sh"

tap_plan 4

DEV_KAFKA=$(kafka__bin)
[[ -x $DEV_KAFKA ]] || tap_bail "the tools are not built (make -C tools)"
ro_require_commands kcat || tap_bail "kcat is missing"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-dev-kafka-join.XXXXXX")
KCAT_PIDS=()
cleanup() {
	local pid
	for pid in "${KCAT_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	kafka_stop
	rm -rf -- "$WORK"
}
ro_on_exit cleanup

# member_start GROUP NAME — a kcat member of GROUP reading topic t; its
# output goes to $WORK/NAME.log
member_start() {
	kcat -b "$KAFKA_BOOTSTRAP" -G "$1" t -X session.timeout.ms=6000 \
		</dev/null >/dev/null 2>"$WORK/$2.log" &
	KCAT_PIDS+=($!)
}

# first_assignment NAME — the first assignment line of member NAME, waiting
# 30 s at most
first_assignment() {
	local i
	for ((i = 0; i < 1500; i++)); do
		grep -m1 'rebalanced.*assigned:' "$WORK/$1.log" && return 0
		sleep 0.02
	done
	return 1
}

# assigned_after_ms GROUP — start a lone member of GROUP, print the
# milliseconds from its start to its first assignment
assigned_after_ms() {
	local t0
	t0=$(date +%s%3N)
	member_start "$1" "$1"
	first_assignment "$1" >/dev/null || { echo "none"; return 1; }
	echo $(($(date +%s%3N) - t0))
}

# 1: the option's range
out=$("$DEV_KAFKA" --topic t:1 --initial-rebalance-delay -1 2>&1) && status=0 || status=$?
tap_like "$status $out" "^2 .*initial rebalance delay.*-1" \
	"--initial-rebalance-delay -1 exits 2 naming the option's value"

# 2: by default a lone member is assigned without the broker's 3 s hold
kafka_start 1 t:4 || tap_bail "could not start the development Kafka"
ms=$(assigned_after_ms lone) || true
tap_ok "$([[ $ms =~ ^[0-9]+$ ]] && ((ms < 3000)) && echo 0 || echo 1)" \
	"by default an empty group's first member is assigned in less than the broker default's 3000 ms (${ms} ms)"
kafka_stop

# 3-4: with the broker's default hold
KAFKA_INITIAL_REBALANCE_DELAY_MS=3000 kafka_start 1 t:4 ||
	tap_bail "could not start the development Kafka with --initial-rebalance-delay 3000"
ms=$(assigned_after_ms held) || true
tap_ok "$([[ $ms =~ ^[0-9]+$ ]] && ((ms >= 3000)) && echo 0 || echo 1)" \
	"--initial-rebalance-delay 3000 holds the first member's assignment 3000 ms at least (${ms} ms)"
member_start pair first
member_start pair second
line=$(first_assignment first) || line="no assignment in 30 s"
tap_like "$line" "assigned: t \\[[0-3]\\], t \\[[0-3]\\]\$" \
	"with the hold, two members started together share the first rebalance: the first gets 2 of 4 partitions ($line)"
tap_done
