#!/bin/bash
# r10-position-gap-emptied-partition.t — a position gap behind a running
# feeder whose own committed offset is the log start.  The feeder catches
# up to H on partition 0; Kafka's DeleteRecords empties the partition (log
# start = log end = H); the database loses its last commits (here
# set_consumer_position back to H - LOST, as a restore or an asynchronous
# standby promoted would).  The feeder's next database session must find
# the gap like any other: recorded in SQL (received_orders.position_gaps),
# logged (event=position_gap action=wait), counted (position_gaps_total,
# partitions_waiting_gap) and waited on — the next order of partition 0
# not stored, the position not moved past the lost offsets — while
# partition 1 flows; accept_position_gap, and the same process resumes at
# H.  The account: every order stored once, nothing acknowledged ahead of
# the database at any check.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"

PARTITIONS=2
LOST=30
E2E_TOPIC=r10-orders-$$
GROUP=r10-group-$$
FEEDER_ARGS=(--batch-size 50 --batch-wait-ms 20 --retry-backoff-max-ms 1000
	--metrics-listen 127.0.0.1:0)
plan 21

# plain_orders P FIRST LAST — valid orders FIRST..LAST queued on partition P
plain_orders() {
	local n
	for ((n = $2; n <= $3; n++)); do
		msg "$1" "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
	done
}

# stored FIRST LAST — how many of the orders FIRST..LAST are stored
stored() {
	local n ids=()
	for ((n = $1; n <= $2; n++)); do
		ids+=("'$(uid "$n")'")
	done
	sql "SELECT count(*) FROM received_orders.received_orders
	      WHERE order_id IN ($(IFS=, && echo "${ids[*]}"))"
}

kr_cluster || bail "could not start Apache Kafka"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"

# part 1: the feeder catches up to H on every partition and keeps running;
# each partition ends with valid orders, so its last batch moves the
# database's position to its end
produce_part 1 150 || bail "kcat could not produce"
plain_orders 0 300001 300005
plain_orders 1 301001 301005
flush || bail "kcat could not produce"
feeder_start f "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
pid=${FEEDER_PIDS[f]}
check "the feeder consumes every partition" db_wait_caught_up "$GROUP" 90
check "Kafka's committed offsets follow" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
high0=$(group_position "$GROUP" 0)

# retention empties partition 0 behind the feeder: its log start is its
# log end, the feeder's committed offset
check "DeleteRecords moves partition 0's log start to its end, $high0" kr_delete_records "$E2E_TOPIC" 0 "$high0"
tap_last_ok || diag "$(cat "$E2E_TMP/delete.out")"
is "$(topic_watermark "$E2E_TOPIC" 0 low) $(topic_watermark "$E2E_TOPIC" 0 high)" "$high0 $high0" \
	"partition 0 is empty: its low and high watermarks are both $high0"

# the database loses its last commits of partition 0, and the feeder's
# sessions are cut: the next session finds the database behind
lost_from=$((high0 - LOST))
sql "SELECT received_orders.set_consumer_position('$GROUP', '$E2E_TOPIC', 0, $lost_from)" >/dev/null 2>&1
is "$(group_position "$GROUP" 0)" "$lost_from" "the database's position of partition 0 is back at $lost_from"
sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE $(batch_sessions_where)" >/dev/null

check "the gap appears in SQL: $E2E_TOPIC [0], offsets $lost_from to $((high0 - 1)), open" \
	ro_wait_until 60 gaps_are "$GROUP" "0|$lost_from|$((high0 - 1))|true|"
check "one line names the gap: first_lost $lost_from, last_lost $((high0 - 1)), action wait" \
	bash -c 'grep -Eq "event=position_gap .*partition=0 first_lost=$1 last_lost=$2 .*action=wait" "$3"' \
	_ "$lost_from" "$((high0 - 1))" "$E2E_TMP/f.log"
check "it is counted: partitions_waiting_gap 1, position_gaps_total 1" \
	ro_wait_until 10 feeder_metrics_are f "1 1" partitions_waiting_gap position_gaps_total

# the next orders: partition 0's wait, partition 1's flow
plain_orders 0 310001 310010
plain_orders 1 311001 311010
flush || bail "kcat could not produce"
check "partition 1 keeps flowing: its new orders reach the database" \
	ro_wait_until 60 partitions_caught_up "$GROUP" "$E2E_TOPIC" 1
is "$(stored 310001 310010)" 0 "partition 0 waits: none of its new orders is stored"
is "$(group_position "$GROUP" 0)" "$lost_from" "partition 0's database position has not moved past the lost offsets"
check "nothing is acknowledged ahead of the database while partition 0 waits" kr_no_acks_ahead "$GROUP"

# the operator accepts the gap
accepted=$(sql "SELECT received_orders.accept_position_gap('$GROUP', '$E2E_TOPIC', 0)" 2>/dev/null)
is "$accepted" "$high0" "accept_position_gap answers the new position: the log start, $high0"
check "the same feeder resumes partition 0 without a restart: every partition caught up" \
	db_wait_caught_up "$GROUP" 90
check "... the same process, still running" test "$(feeder_alive f && echo "${FEEDER_PIDS[f]}")" = "$pid"
is "$(stored 310001 310010)" 10 "partition 0's new orders are stored"
check "one line says where the gap closed: resumed at $high0, $LOST offsets lost" \
	bash -c 'grep -Eq "event=position_gap_closed .*partition=0 first_lost=$1 resumed_at=$2 lost=$3( |$)" "$4"' \
	_ "$lost_from" "$high0" "$LOST" "$E2E_TMP/f.log"
check "Kafka's committed offsets reach the end offsets" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check "nothing is acknowledged ahead of the database" kr_no_acks_ahead "$GROUP"
feeder_stop f

# the account: only positions were lost, every order was stored before
# DeleteRecords or after the acceptance
expected_rows >"$E2E_TMP/rows.expected"
actual_rows >"$E2E_TMP/rows.actual"
check "every order stored exactly once, no other ($(wc -l <"$E2E_TMP/rows.expected") rows)" \
	compare rows "$E2E_TMP/rows.expected" "$E2E_TMP/rows.actual"
expected_quarantine >"$E2E_TMP/quarantine.expected"
actual_quarantine >"$E2E_TMP/quarantine.actual"
check "every bad message quarantined exactly once ($(wc -l <"$E2E_TMP/quarantine.expected") rows)" \
	compare quarantine "$E2E_TMP/quarantine.expected" "$E2E_TMP/quarantine.actual"
tap_done
