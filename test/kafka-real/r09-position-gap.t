#!/bin/bash
# r09-position-gap.t — retention past the database's position on the real
# cluster: the feeder stopped, more orders produced, Kafka's own
# DeleteRecords (org.apache.kafka.tools.DeleteRecordsCommand, what
# kafka-delete-records.sh runs) moves partition 0's log start past the
# database's position.  The feeder started again: partition 0 waits alone
# while the others flow; the gap is in SQL (received_orders.position_gaps:
# first and last offset lost) and in the log (event=position_gap);
# accept_position_gap, and the same process resumes partition 0 at the log
# start, without a restart.  The account: every order still in Kafka stored
# once, exactly the deleted offsets missing, nothing acknowledged ahead of
# the database at any check.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"

PARTITIONS=3
DELETED=40
E2E_TOPIC=r09-orders-$$
GROUP=r09-group-$$
FEEDER_ARGS=(--batch-size 50 --batch-wait-ms 20 --retry-backoff-max-ms 1000)
plan 20

kr_cluster || bail "could not start Apache Kafka"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"

# part 1: every partition consumed, then the feeder stops
produce_part 1 200 || bail "kcat could not produce"
feeder_start f "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder consumes every partition" db_wait_caught_up "$GROUP" 90
check "Kafka's committed offsets follow" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
feeder_stop f
is "$?" 0 "SIGTERM: the feeder exits 0"
part1_lines=$(wc -l <"$E2E_MANIFEST")
db0=$(group_position "$GROUP" 0)

# while it is stopped: plain orders on every partition, then DeleteRecords
# takes the first DELETED of them on partition 0
for ((p = 0; p < PARTITIONS; p++)); do
	for ((i = 1; i <= 100; i++)); do
		n=$((500000 + p * 1000 + i))
		msg "$p" "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
	done
done
flush || bail "kcat could not produce"
low0=$((db0 + DELETED))
check "DeleteRecords moves partition 0's log start to $low0" kr_delete_records "$E2E_TOPIC" 0 "$low0"
tap_last_ok || diag "$(cat "$E2E_TMP/delete.out")"
is "$(topic_watermark "$E2E_TOPIC" 0 low)" "$low0" "partition 0's low watermark is $low0, past the database's position $db0"

# the feeder starts without --accept-position-loss; partitions 1 and 2 get
# more orders while partition 0 waits
feeder_start f "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
pid=${FEEDER_PIDS[f]}
check "the gap appears in SQL: $E2E_TOPIC [0], offsets $db0 to $((low0 - 1)), open" \
	ro_wait_until 60 gaps_are "$GROUP" "0|$db0|$((low0 - 1))|true|"
check "one line names the gap: first_lost $db0, last_lost $((low0 - 1)), action wait" \
	bash -c 'grep -Eq "event=position_gap .*partition=0 first_lost=$1 last_lost=$2 .*action=wait" "$3"' \
	_ "$db0" "$((low0 - 1))" "$E2E_TMP/f.log"
for ((p = 1; p < PARTITIONS; p++)); do
	mixed_stream $p 201 300
done
flush || bail "kcat could not produce"
check "partitions 1 and 2 keep flowing: their later orders reach the database" \
	ro_wait_until 90 partitions_caught_up "$GROUP" "$E2E_TOPIC" 1 2
check "partition 0 waits: its database position has not moved" test "$(group_position "$GROUP" 0)" = "$db0"
check "nothing is acknowledged ahead of the database while partition 0 waits" kr_no_acks_ahead "$GROUP"

# the operator accepts the gap
accepted=$(sql "SELECT received_orders.accept_position_gap('$GROUP', '$E2E_TOPIC', 0)" 2>/dev/null)
is "$accepted" "$low0" "accept_position_gap answers the new position: the log start, $low0"
is "$(gap_rows "$GROUP")" "0|$db0|$((low0 - 1))|false|$(sql "SELECT session_user")" \
	"the gap records who accepted it"
check "the same feeder resumes partition 0 without a restart: every partition caught up" \
	db_wait_caught_up "$GROUP" 90
check "... the same process, still running" test "$(feeder_alive f && echo "${FEEDER_PIDS[f]}")" = "$pid"
check "one line says where the gap closed: resumed at $low0, $DELETED offsets lost" \
	bash -c 'grep -Eq "event=position_gap_closed .*partition=0 first_lost=$1 resumed_at=$2 lost=$3( |$)" "$4"' \
	_ "$db0" "$low0" "$DELETED" "$E2E_TMP/f.log"
check "Kafka's committed offsets reach the end offsets" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check "nothing is acknowledged ahead of the database" kr_no_acks_ahead "$GROUP"
feeder_stop f

# the account: the manifest without what DeleteRecords took
kafka_offsets_map "$E2E_TOPIC" | awk '{ print $3 }' | sort >"$E2E_TMP/in-kafka"
tail -n +"$((part1_lines + 1))" "$E2E_MANIFEST" | awk -F'\t' '$2 == 0 { print $1 }' | sort |
	comm -23 - "$E2E_TMP/in-kafka" >"$E2E_TMP/lost.labels"
is "$(wc -l <"$E2E_TMP/lost.labels")" "$DELETED" "the messages no longer in Kafka are exactly the $DELETED offsets of the gap"
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
