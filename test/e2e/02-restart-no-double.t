#!/bin/bash
# 02-restart-no-double.t — stopping and restarting the feeder materializes
# nothing twice and loses nothing.
#
# Round 1: a feeder consumes a stream and is stopped with SIGTERM (exit 0,
# offsets committed).  Round 2: more orders, republished copies of round-1
# orders and of a bad message are produced; the restarted feeder (same
# group) resumes where round 1 committed.  Round 3: a feeder in a new group
# re-reads the whole topic — a Kafka-level redelivery of every message: the
# table and the quarantine do not change at all (not even received_at).

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-02
FEEDER_ARGS=(--batch-size 25 --batch-wait-ms 100)
plan 13

# rows_snapshot — every row, received_at and a digest of the payload included
rows_snapshot() {
	sql "SELECT order_id || ' ' || external_reference || ' ' || received_at || ' ' || md5(payload::text)
	       FROM received_orders.received_orders ORDER BY order_id"
}

# snapshot — every row and every quarantine row, ids and times included
snapshot() {
	rows_snapshot
	sql "SELECT id || ' ' || kafka_partition || ' ' || kafka_offset || ' ' || outcome || ' ' || quarantined_at
	       FROM received_orders.received_orders_quarantine ORDER BY id"
}

# all_lines_still_in OLD NEW — every line of file OLD is a line of file NEW
all_lines_still_in() {
	[ -s "$1" ] && ! grep -vxF -f "$2" "$1"
}

kafka_start 2 "$E2E_TOPIC:3" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on materialize_orders" \
	e2e_role_is_least_privilege

# --- round 1
for n in $(seq 1 300); do
	msg $((n % 3)) "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
msg 0 bad-1 reject - - 22P02 '{"orderId":'
msg 1 o10-divergent conflict 10 OTHER-10 - "$(event 10 OTHER-10)"
msg 2 tomb-1 tomb - - - ''
flush || bail "kcat could not produce"

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "round 1: committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
feeder_stop feeder
is "$?" 0 "round 1: SIGTERM, the feeder exits 0"
check "round 1: the offsets committed at shutdown are the end offsets" \
	kafka_caught_up "$GROUP" "$E2E_TOPIC"
rows_snapshot >"$E2E_TMP/rows.1"

# --- round 2: new orders, republished old ones, a republished bad message
for n in $(seq 301 450); do
	msg $((n % 3)) "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
for n in $(seq 1 5 300); do
	msg $(((n + 1) % 3)) "o$n-redelivered" dup "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
msg 2 bad-1-republished reject - - 22P02 '{"orderId":'
msg 0 tomb-2 tomb - - - ''
flush || bail "kcat could not produce"

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "round 2: committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
check_exact_contents
rows_snapshot >"$E2E_TMP/rows.2"
check "round 2: the rows of round 1 are untouched (received_at, payload)" \
	all_lines_still_in "$E2E_TMP/rows.1" "$E2E_TMP/rows.2"
feeder_stop feeder
is "$?" 0 "round 2: SIGTERM, the feeder exits 0"
snapshot >"$E2E_TMP/snapshot.2"

# --- round 3: the whole topic again, through a new group
feeder_start feeder "$E2E_TOPIC" "$GROUP-reread" "${FEEDER_ARGS[@]}"
check "round 3: a new group re-reads everything up to the end offsets" \
	kafka_wait_caught_up "$GROUP-reread" "$E2E_TOPIC" 60
feeder_stop feeder
is "$?" 0 "round 3: SIGTERM, the feeder exits 0"
check "round 3: redelivering every message changes no row and no quarantine row" \
	diff "$E2E_TMP/snapshot.2" <(snapshot)
tap_done
