#!/bin/bash
# r02-kill-9-feeder.t — kill -9 of a feeder mid-stream on the real
# cluster, twice, each time restarted: every message below the committed
# offsets at the kill is in the database, and the account at the end.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"

PARTITIONS=6
E2E_TOPIC=r02-orders-$$
GROUP=r02-group-$$
ARGS=(--batch-size 20 --batch-wait-ms 20 -X auto.commit.interval.ms=200)
plan 10

kr_cluster || bail "could not start Apache Kafka"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"

produce_part 1 3000 || bail "kcat could not produce"
total=$(expected_rows | wc -l)
for round in 1 2; do
	feeder_start f "$E2E_TOPIC" "$GROUP" "${ARGS[@]}"
	check "round $round: the feeder stores orders" ro_wait_until 60 rows_at_least $((total * round / 3))
	feeder_kill f
	diag "round $round: killed at $(rows) of $total orders"
	rm -f "$E2E_TMP/offsets.map"	# read again: more was produced since
	check "round $round: every message below the committed offsets is stored or quarantined" \
		check_below_committed "$GROUP"
	[ $round = 1 ] && { produce_part 3001 4000 || bail "kcat could not produce"; total=$(expected_rows | wc -l); }
done
feeder_start f "$E2E_TOPIC" "$GROUP" "${ARGS[@]}"
check "after the kills: the database's positions reach the end offsets" db_wait_caught_up "$GROUP" 120
check "the committed offsets reach the end offsets" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
kr_account "$GROUP" "kill -9"
feeder_stop f
tap_done
