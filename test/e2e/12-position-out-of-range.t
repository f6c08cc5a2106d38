#!/bin/bash
# 12-position-out-of-range.t — a database position Kafka can no longer
# serve is never skipped silently.  Below the partition's earliest offset
# (a position gap) that partition waits alone, the gap recorded in SQL,
# logged (event=position_gap) and counted, while the others go on; with
# --accept-position-loss the gap is recorded accepted and the feeder goes
# on from the partition's earliest offset.  Beyond the partition's end the
# feeder stops with exit code 5 and one event=position_out_of_range line,
# or with --accept-position-loss goes on from the earliest offset.
#
# (a) Retention gap.  The development Kafka keeps about 5 MiB per partition
# and drops older message sets (test/lib/kafka.sh).  A feeder consumes part
# of partition 0 and stops; while it is stopped, small orders and then
# ~0.5 MB orders are produced until the partition's low watermark
# (ro-dev-kafka --end-offsets) passes the database's position: the small
# orders in between are gone.  By default partition 0 waits (nothing of it
# stored nor committed, its position unmoved, the feeder runs on) while
# partition 1 is consumed to its end; the gap is a row of
# received_orders.position_gaps, open, and /metrics shows it.  Then
# accepted with --accept-position-loss: the line, the row (accepted by the
# feeder's role) and /metrics count exactly low - db_position lost offsets,
# every order still in Kafka is stored, the offsets are committed to the
# end, and the next start is an ordinary one.  (Accepting a gap in SQL
# while the feeder runs: 43-position-gap-accepted.t.)
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
plan 42

# low_above P N — partition P's low watermark is above N
low_above() {
	[ "$(topic_watermark "$E2E_TOPIC" "$1" low)" -gt "$2" ]
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

# gap_rows — "PARTITION|FIRST|LAST|OPEN|DETECTED_BY|ACCEPTED_BY" of every
# gap of the group (received_orders.position_gaps)
gap_rows() {
	sql "SELECT kafka_partition || '|' || first_lost || '|' || last_lost || '|' || open || '|'
	            || detected_by || '|' || coalesce(accepted_by::text, '')
	       FROM received_orders.position_gaps WHERE consumer_group = '$GROUP'
	      ORDER BY kafka_partition, first_lost"
}

# gap_is ROWS — gap_rows prints ROWS
gap_is() {
	[ "$(gap_rows)" = "$1" ]
}

# committed_of P — partition P's committed offset in Kafka for the group
committed_of() {
	kafka_committed "$GROUP" "$E2E_TOPIC" | awk -v p="$1" '$2 == p { print $3 }'
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
db0=$(group_position "$GROUP" 0)

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
low0=$(topic_watermark "$E2E_TOPIC" 0 low)
high0=$(topic_watermark "$E2E_TOPIC" 0 high)
lost=$((low0 - db0))
diag "(a) partition 0: database at $db0, Kafka now holds offsets $low0 to $high0 after $k big orders"
check "(a) retention dropped part of the gap: the low watermark ($low0) is above the database's position ($db0)" \
	test "$low0" -gt "$db0"

committed0=$(committed_of 0)
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}" --metrics-listen 127.0.0.1:0
check "(a) the gap is recorded in SQL: orders [0], offsets $db0 to $((low0 - 1)), open, found by the feeder's role" \
	ro_wait_until 30 gap_is "0|$db0|$((low0 - 1))|true|$E2E_ROLE|"
check "(a) partition 1 goes on meanwhile: its database position reaches its end" \
	ro_wait_until 60 partitions_caught_up "$GROUP" "$E2E_TOPIC" 1
check "(a) by default the feeder does not stop" feeder_alive feeder
check "(a) one line names the gap: group, partition, first_lost, last_lost, lost, action=wait, and the SQL that accepts it" \
	bash -c 'grep -E "event=position_gap .*group=$1 topic=orders partition=0 first_lost=$2 last_lost=$(($3 - 1)) lost=$4 low=$3 .*action=wait .*hint=.*received_orders.accept_position_gap\(.$1., .orders., 0\)" "$5"' \
	_ "$GROUP" "$db0" "$low0" "$lost" "$E2E_TMP/feeder.log"
is "$(log_run_events feeder position_out_of_range | wc -l)" 0 "(a) no position_out_of_range line: the gap does not stop the feeder"
check "(a) /metrics: one partition waits on a gap, one gap found (counted once over the retries)" \
	ro_wait_until 10 feeder_metrics_are feeder "1 1" partitions_waiting_gap position_gaps_total
is "$(group_position "$GROUP" 0)" "$db0" "(a) partition 0's database position did not move"
is "$(committed_of 0)" "$committed0" "(a) nothing of partition 0 was committed to Kafka"
# what the database holds: part 1, and partition 1's later messages
awk -F'\t' -v n="$part1_lines" 'NR <= n || $2 != 0' "$E2E_MANIFEST" >"$E2E_TMP/manifest.waiting"
check_contents "$E2E_TMP/manifest.waiting" "(a) while partition 0 waits"
feeder_stop feeder
is "$?" 0 "(a) SIGTERM while a partition waits: the feeder exits 0"
db1=$(group_position "$GROUP" 1)

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}" --accept-position-loss --metrics-listen 127.0.0.1:0
check "(a) with --accept-position-loss the feeder goes on: the database's positions reach the end offsets" \
	db_wait_caught_up "$GROUP" 60
check "(a) the line says action=continue with the same numbers" \
	bash -c 'grep -E "event=position_gap .*topic=orders partition=0 first_lost=$1 last_lost=$(($2 - 1)) lost=$4 low=$2 high=$3 recorded=yes .*action=continue" "$5"' \
	_ "$db0" "$low0" "$high0" "$lost" "$E2E_TMP/feeder.log"
is "$(gap_rows)" "0|$db0|$((low0 - 1))|false|$E2E_ROLE|$E2E_ROLE" \
	"(a) the gap's row is accepted by the feeder's role (--accept-position-loss), still one row"
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
	ro_wait_until 30 test_start_lines "$high0 database" "$(group_position "$GROUP" 1) database"
feeder_stop feeder
is "$?" 0 "(a) SIGTERM: the feeder exits 0"

# ================================================================ (b)
old0=$(group_position "$GROUP" 0)
old1=$(group_position "$GROUP" 1)
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
