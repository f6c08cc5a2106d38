#!/bin/bash
# r06-broker-kill-and-rolling-restart.t — kill -9 of the node that leads
# the most partitions of the topic mid-stream, then (after it is back) a
# rolling restart of all three nodes (SIGTERM, start, wait until every
# partition is fully replicated again), a producer running throughout: no
# stall — the database's positions reach the end offsets within 60 s of
# each fault's end — and nothing lost; the account.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"

PARTITIONS=6
E2E_TOPIC=r06-orders-$$
GROUP=r06-group-$$
BOUND=60
plan 12

# flush — produce the queued messages idempotently (a leader lost mid-send
# makes kcat retry: without idempotence a retry could write a message twice)
flush() {
	local q p
	for q in "$E2E_TMP"/queue.*; do
		[ -f "$q" ] || continue
		p=${q##*.}
		kcat -b "$KAFKA_BOOTSTRAP" -P -t "$E2E_TOPIC" -p "$p" -K $'\t' -Z \
			-X enable.idempotence=true -X message.timeout.ms=120000 <"$q" || return 1
		rm -f "$q"
	done
}

# produce_slowly FIRST LAST — produce_part in chunks of 100 a second
produce_slowly() {
	local i
	for ((i = $1; i <= $2; i += 100)); do
		produce_part "$i" $((i + 99)) || return 1
		sleep 1
	done
}

# busiest_leader — the node leading the most partitions of the topic
busiest_leader() {
	ak_leaders "$E2E_TOPIC" | awk '{ n[$2]++ } END { for (l in n) if (n[l] > best) { best = n[l]; id = l } print id }'
}

# fully_replicated — every partition of the topic and of __consumer_offsets
# has its 3 replicas in sync
fully_replicated() {
	local out
	out=$(kcat -b "$AK_BOOTSTRAP" -L -m 5 2>/dev/null | grep -E '^ +partition ') || return 1
	[ -n "$out" ] && ! grep -vq 'isrs: [0-9]*,[0-9]*,[0-9]*' <<<"$out"
}

kr_cluster || bail "could not start Apache Kafka"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"

produce_part 1 500 || bail "kcat could not produce"
feeder_start f "$E2E_TOPIC" "$GROUP" --batch-size 50 --stats-interval 1
check "the feeder stores orders" ro_wait_until 60 rows_at_least 1000

produce_slowly 501 1500 &
producer=$!
sleep 2
victim=$(busiest_leader)
diag "killing node $victim, leader of $(ak_leaders "$E2E_TOPIC" | awk -v v="$victim" '$2 == v' | wc -l) of $PARTITIONS partitions"
ak_kill "$victim"
wait $producer
is "$?" 0 "the producer went on through the kill"
check "no stall after kill -9 of node $victim: the database reaches the end offsets within $BOUND s" \
	db_wait_caught_up "$GROUP" $BOUND
ak_start_node "$victim"
check "node $victim is back" ak_wait_serving "$victim" 120
check "every partition fully replicated again" ro_wait_until 120 fully_replicated

produce_slowly 1501 2500 &
producer=$!
ok=0
for node in 1 2 3; do
	ak_stop_node "$node" 60
	ak_start_node "$node"
	ak_wait_serving "$node" 120 && ro_wait_until 120 fully_replicated || ok=1
done
wait $producer
is "$?" 0 "the producer went on through the rolling restart"
is "$ok" 0 "rolling restart: each node back and every partition in sync before the next"
check "no stall after the rolling restart: the database reaches the end offsets within $BOUND s" \
	db_wait_caught_up "$GROUP" $BOUND
kr_account "$GROUP" "broker faults"
feeder_stop f
tap_done
