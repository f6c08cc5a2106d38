#!/bin/bash
# 06-two-feeders-one-group.t — two feeders in one consumer group on a
# 6-partition topic split the partitions between them; one is killed with
# kill -9 mid-stream, the other takes its partitions over and completes.
#
# Run twice: with the EAGER protocol (librdkafka's default range,roundrobin
# assignors) and with COOPERATIVE (cooperative-sticky), each on a topic and
# group of its own, the tables emptied in between.  Assignments are read
# from the feeders' partitions_assigned / partitions_revoked log lines.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

PARTITIONS=6
PER_PARTITION=3000
COMMON_ARGS=(--batch-size 2 --batch-wait-ms 20 --stats-interval 1
	-X auto.commit.interval.ms=200)
plan $((1 + 2 * 10))

# split_between A B — both hold partitions, none twice, all of them together
split_between() {
	local a b
	a=$(feeder_assignment "$1")
	b=$(feeder_assignment "$2")
	[ -n "$a" ] && [ -n "$b" ] &&
		[ -z "$(comm -12 <(sort <<<"$a") <(sort <<<"$b"))" ] &&
		[ "$(sort -n <<<"$a"$'\n'"$b" | tr '\n' ' ')" = "$(seq 0 $((PARTITIONS - 1)) | tr '\n' ' ')" ]
}

# holds_all NAME — the feeder holds every partition
holds_all() {
	[ "$(feeder_assignment "$1" | tr '\n' ' ')" = "$(seq 0 $((PARTITIONS - 1)) | tr '\n' ' ')" ]
}

# has_consumed NAME — a counters line of the feeder shows consumed messages
has_consumed() {
	grep -Eq 'event=stats .*consumed=[1-9]' "$E2E_TMP/$1.log"
}

# killable — the stream is well under way and the feeder "a" has consumed
killable() {
	rows_at_least $((total * 2 / 5)) && has_consumed a
}

# scenario LABEL STRATEGY — the whole story on a fresh topic and group
scenario() {
	local label=$1 strategy=$2
	E2E_TOPIC=orders-$label
	GROUP=e2e-06-$label
	: >"$E2E_MANIFEST"
	: >"$E2E_TMP/offsets.map"
	sql "TRUNCATE received_orders.received_orders, received_orders.received_orders_quarantine"
	for ((p = 0; p < PARTITIONS; p++)); do
		mixed_stream $p 1 $PER_PARTITION
	done
	flush || bail "kcat could not produce"
	total=$(expected_rows | wc -l)

	feeder_start a "$E2E_TOPIC" "$GROUP" "${COMMON_ARGS[@]}" -X partition.assignment.strategy="$strategy"
	feeder_start b "$E2E_TOPIC" "$GROUP" "${COMMON_ARGS[@]}" -X partition.assignment.strategy="$strategy"
	check "$label: the two feeders split the $PARTITIONS partitions" \
		ro_wait_until 30 split_between a b
	diag "$label: a holds $(feeder_assignment a | tr '\n' ' '), b holds $(feeder_assignment b | tr '\n' ' ')"
	check "$label: the stream is well under way and feeder a has consumed messages" \
		ro_wait_until 60 killable
	feeder_kill a
	diag "$label: a killed at $(rows) of $total orders"
	check "$label: every message below the committed offsets is stored or quarantined" \
		check_below_committed "$GROUP"
	check "$label: feeder b takes every partition over" \
		ro_wait_until 60 holds_all b
	check "$label: feeder b completes: committed offsets reach the end offsets" \
		kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 120
	check "$label: feeder b consumed messages too" has_consumed b
	check_exact_contents
	feeder_stop b
	is "$?" 0 "$label: SIGTERM, feeder b exits 0"
	mv "$E2E_TMP/a.log" "$E2E_TMP/a-$label.log"
	mv "$E2E_TMP/b.log" "$E2E_TMP/b-$label.log"
}

# the two feeders must share the group's first assignment, as on a broker
# with the default group.initial.rebalance.delay.ms: without that hold the
# development Kafka assigns every partition to the first to join, which can
# store the whole stream before the second is given any (the cooperative
# round failed so, a storing all 17,034 orders while b waited)
KAFKA_INITIAL_REBALANCE_DELAY_MS=3000
kafka_start 1 "orders-eager:$PARTITIONS" "orders-cooperative:$PARTITIONS" ||
	bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on materialize_orders" \
	e2e_role_is_least_privilege

scenario eager range,roundrobin
scenario cooperative cooperative-sticky
tap_done
