#!/bin/bash
# 43-position-gap-accepted.t — retention past the database's position on
# one partition of two, the feeder running: that partition waits alone
# while the other keeps flowing; the gap appears in SQL
# (received_orders.position_gaps) and on /metrics; an operator accepts it
# with received_orders.accept_position_gap, and the same feeder process
# resumes the partition at its log start, without a restart.  The account
# at the end: every order still in Kafka stored once, every bad message
# quarantined once, exactly the offsets retention deleted missing, nothing
# acknowledged ahead of the database at any check.
#
# The development Kafka keeps about 5 MiB per partition and drops older
# message sets (test/lib/kafka.sh): ~0.5 MB orders produced on partition 0
# while the feeder is stopped push its low watermark past the database's
# position.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-43
FEEDER_ARGS=(--batch-size 50 --batch-wait-ms 20 --retry-backoff-max-ms 1000
	--metrics-listen 127.0.0.1:0)
plan 21

# no_acks_ahead — no partition's committed offset is ahead of the
# database's position
no_acks_ahead() {
	local ahead
	ahead=$(acks_ahead "$GROUP") || return 1
	[ -z "$ahead" ] || diag "acknowledged ahead of the database: $ahead"
	[ -z "$ahead" ]
}

PADDING=$(head -c 520000 /dev/zero | tr '\0' 'p')

kafka_start 1 "$E2E_TOPIC:2" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
psql -X -q -d postgres -c "DROP ROLE IF EXISTS ro_e2e_43_monitor" -c "CREATE ROLE ro_e2e_43_monitor NOLOGIN IN ROLE pg_monitor" >/dev/null ||
	bail "could not create the monitoring role"
ro_on_exit "psql -X -q -d postgres -c 'DROP ROLE IF EXISTS ro_e2e_43_monitor' >/dev/null 2>&1"

# part 1: both partitions consumed, then the feeder stops
mixed_stream 0 1 200
mixed_stream 1 1 200
flush || bail "kcat could not produce"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder consumes both partitions" db_wait_caught_up "$GROUP" 60
check "Kafka's committed offsets follow" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
part1_lines=$(wc -l <"$E2E_MANIFEST")
db0=$(group_position "$GROUP" 0)

# while it is stopped: plain orders on partition 0 that retention will
# take, big ones until the low watermark passes the database's position,
# then plain ones again, which stay
for ((n = 201; n <= 300; n++)); do
	msg 0 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
flush || bail "kcat could not produce"
for ((k = 1; k <= 30; k++)); do
	n=$((900000 + k))
	event "$n" "EXT-$n" "\"padding\":\"$PADDING\"" >"$E2E_TMP/big"
	msg_file 0 "o$n-big" insert "$n" "EXT-$n" - "$E2E_TMP/big" || bail "kcat could not produce a big order"
	[ "$(topic_watermark "$E2E_TOPIC" 0 low)" -gt "$db0" ] && break
done
for ((n = 301; n <= 320; n++)); do
	msg 0 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
flush || bail "kcat could not produce"
low0=$(topic_watermark "$E2E_TOPIC" 0 low)
lost=$((low0 - db0))
diag "partition 0: database at $db0, Kafka now holds offsets $low0 to $(topic_watermark "$E2E_TOPIC" 0 high)"
check "retention dropped part of the gap: the low watermark ($low0) is above the database's position ($db0)" \
	test "$low0" -gt "$db0"

# the feeder starts without --accept-position-loss; partition 1 gets more
# orders while partition 0 waits
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
pid=${FEEDER_PIDS[feeder]}
check "the gap appears in SQL, read by a pg_monitor member: orders [0], offsets $db0 to $((low0 - 1)), open" \
	ro_wait_until 30 gaps_are "$GROUP" "0|$db0|$((low0 - 1))|true|" ro_e2e_43_monitor
mixed_stream 1 201 400
flush || bail "kcat could not produce"
check "partition 1 keeps flowing: its later orders reach the database" \
	ro_wait_until 60 partitions_caught_up "$GROUP" "$E2E_TOPIC" 1
check "partition 0 waits: its database position has not moved" test "$(group_position "$GROUP" 0)" = "$db0"
check "/metrics: one partition waits on a gap, one gap found" \
	ro_wait_until 10 feeder_metrics_are feeder "1 1" partitions_waiting_gap position_gaps_total
check "nothing is acknowledged ahead of the database while partition 0 waits" no_acks_ahead

# the operator accepts the gap
accepted=$(sql "SELECT received_orders.accept_position_gap('$GROUP', 'orders', 0)" 2>&1)
is "$accepted" "NOTICE:  offsets $db0 to $((low0 - 1)) of orders [0] accepted as lost for group \"$GROUP\": its position moves to $low0"$'\n'"$low0" \
	"accept_position_gap says what it accepted and answers the new position: the log start, $low0"
is "$(gap_rows "$GROUP" ro_e2e_43_monitor)" "0|$db0|$((low0 - 1))|false|$(sql "SELECT session_user")" \
	"the gap records who accepted it (the session's user)"
check "the same feeder resumes partition 0 at its next retry, without a restart: every partition caught up" \
	db_wait_caught_up "$GROUP" 90
check "... the same process, still running" test "$(feeder_alive feeder && echo "${FEEDER_PIDS[feeder]}")" = "$pid"
check "one line says where the gap closed: first_lost $db0, resumed at $low0, $lost offsets lost" \
	bash -c 'grep -E "event=position_gap_closed .*topic=orders partition=0 first_lost=$1 resumed_at=$2 lost=$3( |$)" "$4"' \
	_ "$db0" "$low0" "$lost" "$E2E_TMP/feeder.log"
check "/metrics: no partition waits on a gap any more, $lost offsets known lost" \
	ro_wait_until 10 feeder_metrics_are feeder "0 $lost" partitions_waiting_gap positions_lost_offsets_total
check "Kafka's committed offsets reach the end offsets" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check "nothing is acknowledged ahead of the database" no_acks_ahead
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"

# the account: the manifest without what retention deleted
kafka_offsets_map "$E2E_TOPIC" | awk '{ print $3 }' | sort >"$E2E_TMP/in-kafka"
tail -n +"$((part1_lines + 1))" "$E2E_MANIFEST" | awk -F'\t' '$2 == 0 { print $1 }' | sort |
	comm -23 - "$E2E_TMP/in-kafka" >"$E2E_TMP/lost.labels"
is "$(wc -l <"$E2E_TMP/lost.labels")" "$lost" "the messages no longer in Kafka are exactly the $lost offsets of the gap"
awk -F'\t' 'FILENAME == ARGV[1] { gone[$1] = 1; next } !($1 in gone)' "$E2E_TMP/lost.labels" "$E2E_MANIFEST" \
	>"$E2E_TMP/manifest.kept"
cp "$E2E_TMP/manifest.kept" "$E2E_MANIFEST"
expected_rows >"$E2E_TMP/rows.expected"
actual_rows >"$E2E_TMP/rows.actual"
check "every order still in Kafka stored exactly once, no other ($(wc -l <"$E2E_TMP/rows.expected") rows)" \
	compare rows "$E2E_TMP/rows.expected" "$E2E_TMP/rows.actual"
expected_quarantine >"$E2E_TMP/quarantine.expected"
actual_quarantine >"$E2E_TMP/quarantine.actual"
check "every bad message quarantined exactly once ($(wc -l <"$E2E_TMP/quarantine.expected") rows)" \
	compare quarantine "$E2E_TMP/quarantine.expected" "$E2E_TMP/quarantine.actual"
tap_done
