#!/bin/bash
# 37-partitions-known-at-assignment.t — a new group's partitions start at
# once, not a second later.
#
# A group without positions starts each partition at its earliest offset,
# which librdkafka looks up from the partition's leader.  If the consumer
# learns the topic's partitions only with its first assignment, a lookup
# that runs before the leader is known waits for librdkafka's retry timer:
# up to a second during which that partition is not fetched (seen as one
# slow round in four of bench/feeder and as p99 near 1 s in bench/latency).
# The feeder holds a handle of each subscribed topic from the start, so the
# partitions and their leaders are known during the group join.  Checked on
# librdkafka's own log (-X debug=topic): every partition is created before
# the assignment, and no offset lookup waited for a leader.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-37
PARTITIONS=8
plan 7

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream "$p" 1 200
done
flush || bail "kcat could not produce"
total=$(expected_rows | wc -l)

feeder_start feeder "$E2E_TOPIC" "$GROUP" --log-level debug -X debug=topic
check "the feeder materializes the stream" ro_wait_until 60 rows_at_least "$total"
feeder_stop feeder

# the line numbers of librdkafka's partition creations and of the assignment
assigned=$(feeder_log feeder | grep -n 'event=partitions_assigned' | head -n 1 | cut -d: -f1)
created=$(feeder_log feeder | grep -n "NEW $E2E_TOPIC \[[0-9]*\]" | cut -d: -f1)
is "$(grep -c . <<<"$created")" "$PARTITIONS" "librdkafka created each of the $PARTITIONS partitions once"
is "$(awk -v a="${assigned:-0}" '$1 > a' <<<"$created" | grep -c . || true)" 0 \
	"every partition was created before the assignment (line ${assigned:-none})"
check "no partition's offset lookup waited for its leader" \
	log_has_no "no current leader for partition" feeder
check_exact_contents
tap_done
