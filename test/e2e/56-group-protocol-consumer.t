#!/bin/bash
# 56-group-protocol-consumer.t — --group-protocol consumer (KIP-848) on the
# mock cluster, which serves ConsumerGroupHeartbeat and assigns by range:
# the start line names the protocol; two feeders in one group split the 6
# partitions incrementally (the member that stays is never revoked all,
# no assign call fails); one is killed with kill -9 mid-stream, the other
# takes its partitions over once the broker's session timeout (the mock's
# 30 s) expires and completes: every order once, nothing acknowledged
# ahead of the database.  First, the option's usage errors (exit 2): a
# value neither classic nor consumer, and a property of the classic
# protocol with consumer.
#
# The broker owns the session timeout under this protocol: the feeders
# here run without the suite's session.timeout.ms and heartbeat.interval.ms
# (librdkafka refuses them with group.protocol=consumer, and so does the
# feeder).

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

PARTITIONS=6
PER_PARTITION=2000
FEEDER_DEFAULT_ARGS=()
COMMON_ARGS=(--group-protocol consumer --batch-size 2 --batch-wait-ms 20
	--stats-interval 1 -X auto.commit.interval.ms=200)
E2E_TOPIC=orders-848
GROUP=e2e-56-consumer
plan 18

# usage_error EXPECTED ARG... — the feeder exits 2 at once, its message
# holding EXPECTED
usage_error() {
	local expected=$1 out rc
	shift
	out=$(timeout 10 "$(ro_feeder_bin)" --brokers 127.0.0.1:1 --topic t "$@" 2>&1)
	rc=$?
	[ "$rc" -eq 2 ] && grep -qF -- "$expected" <<<"$out" && return 0
	diag "exit $rc: $out"
	return 1
}

# holds PARTITIONS NAME... — the feeders together hold exactly these
# partitions ("0 1"), none twice
holds() {
	local want=$1 name
	shift
	[ "$(for name in "$@"; do feeder_assignment "$name"; done | sort -n | tr '\n' ' ')" = "$want " ]
}

# split_between A B — both hold partitions, and together every one once
split_between() {
	[ -n "$(feeder_assignment "$1")" ] && [ -n "$(feeder_assignment "$2")" ] &&
		holds "$(seq -s ' ' 0 $((PARTITIONS - 1)))" "$1" "$2"
}

# killable — the stream is well under way and the feeder "a" has consumed
killable() {
	rows_at_least $((total * 2 / 5)) && grep -Eq 'event=stats .*consumed=[1-9]' "$E2E_TMP/a.log"
}

# no_acks_ahead — no partition's committed offset is ahead of the database
no_acks_ahead() {
	local ahead
	ahead=$(acks_ahead "$GROUP") || return 1
	[ -z "$ahead" ] && return 0
	diag "acknowledged ahead of the database: $ahead"
	return 1
}

check "--group-protocol takes classic or consumer only (exit 2, the value named)" \
	usage_error '--group-protocol: expected classic or consumer, got "cooperative"' \
	--group-protocol cooperative
check "-X group.protocol is the same option (exit 2, the property named)" \
	usage_error '-X group.protocol: expected classic or consumer, got "eager"' \
	-X group.protocol=eager
check "with consumer, session.timeout.ms is refused as the broker's (exit 2)" \
	usage_error '-X session.timeout.ms: not supported with --group-protocol consumer' \
	--group-protocol consumer -X session.timeout.ms=6000

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 $PER_PARTITION
done
flush || bail "kcat could not produce"
total=$(expected_rows | wc -l)

feeder_start a "$E2E_TOPIC" "$GROUP" "${COMMON_ARGS[@]}"
check "the start line names the protocol" \
	ro_wait_until 10 grep -q 'event=starting .*group_protocol=consumer' "$E2E_TMP/a.log"
check "feeder a alone holds the 6 partitions" \
	ro_wait_until 30 holds "$(seq -s ' ' 0 $((PARTITIONS - 1)))" a
feeder_start b "$E2E_TOPIC" "$GROUP" "${COMMON_ARGS[@]}"
check "the two feeders split the $PARTITIONS partitions" \
	ro_wait_until 60 split_between a b
diag "a holds $(feeder_assignment a | tr '\n' ' '), b holds $(feeder_assignment b | tr '\n' ' ')"
check "a gave up only the partitions b took: its revokes name $(feeder_assignment b | wc -l) partitions, never all" \
	bash -c "! grep -q 'event=partitions_revoked .*count=$PARTITIONS' '$E2E_TMP/a.log'"
check "the stream is well under way and feeder a has consumed messages" \
	ro_wait_until 60 killable
feeder_kill a
diag "a killed at $(rows) of $total orders"
check "every message below the committed offsets is stored or quarantined" \
	check_below_committed "$GROUP"
check "feeder b takes every partition over (after the broker's session timeout)" \
	ro_wait_until 90 holds "$(seq -s ' ' 0 $((PARTITIONS - 1)))" b
check "feeder b was never revoked a partition" \
	bash -c "! grep -q 'event=partitions_revoked' '$E2E_TMP/b.log'"
check "feeder b completes: committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 120
check "no assignment call failed (incremental assign and unassign)" \
	bash -c "! grep -q 'event=assign_failed' '$E2E_TMP/a.log' '$E2E_TMP/b.log'"
check "no partition's committed offset is ahead of the database" no_acks_ahead
check_exact_contents
feeder_stop b
is "$?" 0 "SIGTERM: feeder b exits 0"
tap_done
