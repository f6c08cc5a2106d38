#!/bin/bash
# 12-position-out-of-range.t — a database position Kafka can no longer
# serve is never skipped silently: by default the feeder stops with exit
# code 5 and one event=position_out_of_range line with the numbers; with
# --accept-position-loss it logs and counts the loss and goes on from the
# partition's earliest offset.
#
# (a) Retention gap.  The development Kafka keeps about 5 MiB per partition
# and drops older message sets (test/lib/kafka.sh).  A feeder consumes part
# of partition 0 and stops; while it is stopped, small orders and then
# ~0.5 MB orders are produced until the partition's low watermark
# (ro-dev-kafka --end-offsets) passes the database's position: the small
# orders in between are gone.  Refused (exit 5, nothing stored, nothing
# committed), then accepted: the line and /metrics count exactly
# low - db_position lost offsets, every order still in Kafka is stored, the
# offsets are committed to the end, and the next start is an ordinary one.
#
# (b) Re-created topic.  The same database meets a fresh development Kafka
# whose partitions hold fewer messages than its positions.  Refused (exit
# 5, lost=0), then accepted: both partitions start at their earliest
# offset and every order of the new topic is stored.  Then the new topic
# grows past the old positions while the feeder is stopped, and a plain
# restart must still store every order: a stale position in the database
# must not make it skip the messages below it.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-12
FEEDER_ARGS=(--batch-size 50 --batch-wait-ms 20 --retry-backoff-max-ms 1000)
plan 36

# position P — the database's next offset of partition P of the group
position() {
	db_positions "$GROUP" | awk -v p="$1" '$2 == p { print $3 }'
}

# watermark P low|high — partition P's low or high watermark
watermark() {
	kafka_end_offsets "$E2E_TOPIC" | awk -v p="$1" -v w="$2" '$2 == p { print (w == "low" ? $3 : $4) }'
}

# low_above P N — partition P's low watermark is above N
low_above() {
	[ "$(watermark "$1" low)" -gt "$2" ]
}

# start_line P — "OFFSET SOURCE" of partition P's start_position line in
# the feeder's latest run
start_line() {
	log_run_events feeder start_position | sed -nE "s/.* partition=$1 offset=([^ ]+) source=([^ ]+).*/\\1 \\2/p" | head -n 1
}

# test_start_lines START0 START1 — the latest run started partitions 0 and
# 1 as given ("OFFSET SOURCE")
test_start_lines() {
	[ "$(start_line 0)" = "$1" ] && [ "$(start_line 1)" = "$2" ]
}

# check_contents MANIFEST WHAT — two test points: the orders and the
# quarantine are exactly what MANIFEST (a manifest without the messages
# known lost) expects
check_contents() {
	local saved=$E2E_MANIFEST
	E2E_MANIFEST=$1
	expected_rows >"$E2E_TMP/rows.expected"
	actual_rows >"$E2E_TMP/rows.actual"
	check "$2: every order of the expectation exactly once, no other ($(wc -l <"$E2E_TMP/rows.expected") rows)" \
		compare rows "$E2E_TMP/rows.expected" "$E2E_TMP/rows.actual"
	expected_quarantine >"$E2E_TMP/quarantine.expected"
	actual_quarantine >"$E2E_TMP/quarantine.actual"
	check "$2: every bad message of the expectation quarantined once ($(wc -l <"$E2E_TMP/quarantine.expected") rows)" \
		compare quarantine "$E2E_TMP/quarantine.expected" "$E2E_TMP/quarantine.actual"
	E2E_MANIFEST=$saved
}

# refused NAME — the feeder NAME exits on its own within 30 s with status 5
# (in this shell: it reaps the process)
refused() {
	feeder_wait_exit "$1" 30 || {
		diag "$1 still runs after 30 s"
		feeder_kill "$1"
		return 1
	}
	[ "$FEEDER_RC" = 5 ] || diag "$1 exited with status $FEEDER_RC"
	[ "$FEEDER_RC" = 5 ]
}

# big_order K — an order of ~0.5 MB on partition 0 (order 900000 + K)
big_order() {
	local n=$((900000 + $1))
	event "$n" "EXT-$n" "\"padding\":\"$PADDING\"" >"$E2E_TMP/big"
	msg_file 0 "o$n-big" insert "$n" "EXT-$n" - "$E2E_TMP/big"
}
PADDING=$(head -c 520000 /dev/zero | tr '\0' 'p')

kafka_start 1 "$E2E_TOPIC:2" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

# ================================================================ (a)
mixed_stream 0 1 300
mixed_stream 1 1 300
flush || bail "kcat could not produce"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "(a) the feeder consumes both partitions" db_wait_caught_up "$GROUP" 60
check "(a) Kafka's committed offsets follow" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
feeder_stop feeder
is "$?" 0 "(a) SIGTERM: the feeder exits 0"
part1_lines=$(wc -l <"$E2E_MANIFEST")
db0=$(position 0)
db1=$(position 1)

# while the feeder is stopped: orders that retention will take (plain ones
# on partition 0, so that no duplicate refers to a lost order), then big
# ones until the low watermark passes the database's position
for ((n = 301; n <= 400; n++)); do
	msg 0 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
mixed_stream 1 301 400
flush || bail "kcat could not produce"
for ((k = 1; k <= 30; k++)); do
	big_order $k || bail "kcat could not produce a big order"
	low_above 0 "$db0" && break
done
low0=$(watermark 0 low)
high0=$(watermark 0 high)
lost=$((low0 - db0))
diag "(a) partition 0: database at $db0, Kafka now holds offsets $low0 to $high0 after $k big orders"
check "(a) retention dropped part of the gap: the low watermark ($low0) is above the database's position ($db0)" \
	test "$low0" -gt "$db0"

kafka_committed "$GROUP" "$E2E_TOPIC" >"$E2E_TMP/committed.before"
sql "SELECT count(*) FROM received_orders.received_orders" >"$E2E_TMP/rows.before"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
refused feeder
tap_ok $? "(a) by default the feeder stops with exit code 5"
check "(a) one line names the partition and the numbers: db_position, low, high, lost, action=stop, a hint" \
	bash -c 'grep -E "event=position_out_of_range .*topic=orders partition=0 db_position=$1 low=$2 high=$3 lost=$4 .*action=stop hint=.+" "$5"' \
	_ "$db0" "$low0" "$high0" "$lost" "$E2E_TMP/feeder.log"
is "$(log_run_events feeder position_out_of_range | wc -l)" 1 "(a) ... and only one such line"
is "$(rows)" "$(cat "$E2E_TMP/rows.before")" "(a) nothing was stored"
check "(a) nothing was committed to Kafka" cmp -s "$E2E_TMP/committed.before" <(kafka_committed "$GROUP" "$E2E_TOPIC")
is "$(position 0) $(position 1)" "$db0 $db1" "(a) the database's positions did not move"

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}" --accept-position-loss --metrics-listen 127.0.0.1:0
check "(a) with --accept-position-loss the feeder goes on: the database's positions reach the end offsets" \
	db_wait_caught_up "$GROUP" 60
check "(a) the line says action=continue with the same numbers" \
	bash -c 'grep -E "event=position_out_of_range .*topic=orders partition=0 db_position=$1 low=$2 high=$3 lost=$4 .*action=continue" "$5"' \
	_ "$db0" "$low0" "$high0" "$lost" "$E2E_TMP/feeder.log"
is "$(start_line 0) / $(start_line 1)" "$low0 earliest / $db1 database" \
	"(a) partition 0 starts at its low watermark, partition 1 at the database's position"
is "$(feeder_metric feeder positions_out_of_range_total)" 1 "(a) /metrics: one partition out of range"
is "$(feeder_metric feeder positions_lost_offsets_total)" "$lost" "(a) /metrics: $lost offsets lost (low - db_position)"
check "(a) Kafka's committed offsets reach the end offsets" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
feeder_stop feeder
is "$?" 0 "(a) SIGTERM: the feeder exits 0"

# the messages known lost: produced after part 1 on partition 0, no longer in Kafka
kafka_offsets_map "$E2E_TOPIC" | awk '{ print $3 }' | sort >"$E2E_TMP/in-kafka"
tail -n +"$((part1_lines + 1))" "$E2E_MANIFEST" | awk -F'\t' '$2 == 0 { print $1 }' | sort |
	comm -23 - "$E2E_TMP/in-kafka" >"$E2E_TMP/lost.labels"
is "$(wc -l <"$E2E_TMP/lost.labels")" "$lost" "(a) the messages no longer in Kafka are exactly the $lost lost offsets"
awk -F'\t' 'FILENAME == ARGV[1] { gone[$1] = 1; next } !($1 in gone)' "$E2E_TMP/lost.labels" "$E2E_MANIFEST" \
	>"$E2E_TMP/manifest.a"
check_contents "$E2E_TMP/manifest.a" "(a) after the accepted loss"

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "(a) the loss was accepted once: a plain restart starts both partitions at the database's positions" \
	ro_wait_until 30 test_start_lines "$high0 database" "$(position 1) database"
feeder_stop feeder
is "$?" 0 "(a) SIGTERM: the feeder exits 0"

# ================================================================ (b)
old0=$(position 0)
old1=$(position 1)
kafka_stop
kafka_start 1 "$E2E_TOPIC:2" || bail "could not start a second development Kafka"
cp "$E2E_TMP/manifest.a" "$E2E_TMP/manifest.b"
: >"$E2E_MANIFEST"
mixed_stream 0 1001 1050
mixed_stream 1 1001 1050
flush || bail "kcat could not produce"
cat "$E2E_MANIFEST" >>"$E2E_TMP/manifest.b"
diag "(b) the database holds positions $old0 and $old1; the new topic holds 50 messages per partition"

sql "SELECT count(*) FROM received_orders.received_orders" >"$E2E_TMP/rows.before"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
refused feeder
tap_ok $? "(b) a re-created topic: by default the feeder stops with exit code 5"
check "(b) the line shows the database's position above the partition's end, lost=0, action=stop" \
	bash -c 'log="$1"; shift; grep -E "event=position_out_of_range .*topic=orders partition=0 db_position=$1 low=0 high=50 lost=0 .*action=stop|event=position_out_of_range .*topic=orders partition=1 db_position=$2 low=0 high=50 lost=0 .*action=stop" "$log"' \
	_ "$E2E_TMP/feeder.log" "$old0" "$old1"
is "$(rows)" "$(cat "$E2E_TMP/rows.before")" "(b) nothing was stored"

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}" --accept-position-loss --metrics-listen 127.0.0.1:0
check "(b) with --accept-position-loss the feeder consumes the new topic to its end" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
is "$(start_line 0) / $(start_line 1)" "0 earliest / 0 earliest" "(b) both partitions start at their earliest offset"
is "$(log_run_events feeder position_out_of_range | grep -c 'lost=0 .*action=continue')" 2 \
	"(b) one line per partition, lost=0, action=continue"
is "$(feeder_metric feeder positions_out_of_range_total) $(feeder_metric feeder positions_lost_offsets_total)" "2 0" \
	"(b) /metrics: two partitions out of range, no offset known lost"
check_contents "$E2E_TMP/manifest.b" "(b) after the accepted re-creation"
feeder_stop feeder
is "$?" 0 "(b) SIGTERM: the feeder exits 0"

# the new topic grows past the old positions while the feeder is stopped
: >"$E2E_MANIFEST"
mixed_stream 0 1051 $((1050 + old0))
mixed_stream 1 1051 $((1050 + old1))
flush || bail "kcat could not produce"
cat "$E2E_MANIFEST" >>"$E2E_TMP/manifest.b"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "(b) after the topic grew past the old positions, a plain restart consumes to the end" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
diag "(b) that restart started partition 0 at: $(start_line 0), partition 1 at: $(start_line 1)"
check_contents "$E2E_TMP/manifest.b" "(b) nothing skipped below the old positions"
feeder_stop feeder
is "$?" 0 "(b) SIGTERM: the feeder exits 0"
tap_done
