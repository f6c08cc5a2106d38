#!/bin/bash
# r01-two-feeders-join-leave.t — the steady stream on a real 3-node
# cluster (replication factor 3, min.insync.replicas 2): feeder a alone,
# feeder b joins the group mid-stream (the partitions split between them),
# b leaves with SIGTERM mid-stream (a takes every partition back), more is
# produced; then the account: every valid order once, every bad message
# quarantined once, no offset acknowledged ahead of the database.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"

PARTITIONS=6
E2E_TOPIC=r01-orders-$$
GROUP=r01-group-$$
ARGS=(--batch-size 50 --batch-wait-ms 20 --stats-interval 1)
plan 12

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

kr_cluster || bail "could not start Apache Kafka"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"

produce_part 1 1000 || bail "kcat could not produce"
feeder_start a "$E2E_TOPIC" "$GROUP" "${ARGS[@]}"
check "feeder a alone holds every partition" ro_wait_until 60 holds_all a
check "feeder a stores orders" ro_wait_until 60 rows_at_least 500

feeder_start b "$E2E_TOPIC" "$GROUP" "${ARGS[@]}"
produce_part 1001 2000 || bail "kcat could not produce"
check "feeder b joins: the two split the $PARTITIONS partitions" ro_wait_until 60 split_between a b
diag "a holds $(feeder_assignment a | tr '\n' ' '), b holds $(feeder_assignment b | tr '\n' ' ')"
# produced after the split: under the consumer protocol the broker assigns
# at b's next heartbeat, and a may have read every message before then
produce_part 2001 3000 || bail "kcat could not produce"
check "feeder b stores orders too" ro_wait_until 60 grep -Eq 'event=stats .*consumed=[1-9]' "$E2E_TMP/b.log"

feeder_stop b
is "$?" 0 "feeder b leaves the group with SIGTERM: exit 0"
check "feeder a takes every partition back" ro_wait_until 60 holds_all a
produce_part 3001 3500 || bail "kcat could not produce"

check "the database's positions reach the end offsets" db_wait_caught_up "$GROUP" 120
check "the committed offsets reach the end offsets" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
kr_account "$GROUP" "join and leave"
feeder_stop a
tap_done
