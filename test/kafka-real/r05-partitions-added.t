#!/bin/bash
# r05-partitions-added.t — partitions added to a topic while its feeder
# runs (TopicCommand --alter from the pinned jars), messages produced to
# them at once: the new partitions are consumed from their first offset
# although the feeder runs with auto.offset.reset=error (it refuses
# latest), nothing lost; the account.  The feeder refreshes metadata every 2 s here
# (topic.metadata.refresh.interval.ms, default 5 min) so that the test
# does not wait five minutes for the group to notice.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"

PARTITIONS=2
E2E_TOPIC=r05-orders-$$
GROUP=r05-group-$$
plan 8

kr_cluster || bail "could not start Apache Kafka"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"

# the feeder starts before the first message: the partitions are new to
# the group and to the database
feeder_start f "$E2E_TOPIC" "$GROUP" --batch-size 50 \
	-X auto.offset.reset=error -X topic.metadata.refresh.interval.ms=2000
ro_wait_until 60 grep -Eq "event=partitions_assigned .*$E2E_TOPIC \\[1\\]" "$E2E_TMP/f.log" ||
	bail "the feeder was not assigned the topic's partitions"
sleep 2
produce_part 1 500 || bail "kcat could not produce"
check "the feeder consumes the first $PARTITIONS partitions" db_wait_caught_up "$GROUP" 60

check "two partitions added while the feeder runs" \
	ak_topics --alter --topic "$E2E_TOPIC" --partitions 4
mixed_stream 2 1 500
mixed_stream 3 1 500
flush || bail "kcat could not produce"
PARTITIONS=4
produce_part 501 700 || bail "kcat could not produce"
check "the feeder is assigned the new partitions" \
	ro_wait_until 60 grep -Eq "event=partitions_assigned .*$E2E_TOPIC \\[3\\]" "$E2E_TMP/f.log"
check "the database's positions reach the end offsets of all 4 partitions" db_wait_caught_up "$GROUP" 60
kr_account "$GROUP" "partitions added"
feeder_stop f
tap_done
