#!/bin/bash
# r16-leader-epoch-committed.t — the offsets the feeder commits carry the
# leader epoch of the message each follows, so that a consumer resuming
# from them can detect a truncated log: a new group reads a 3-partition
# topic to its end; then the group's offset commits, as the coordinator
# stored them in __consumer_offsets (Kafka's OffsetsMessageFormatter), are
# read back: the last commit of every partition is at its end offset with
# a leader epoch (>= 0; -1 means none was sent, which librdkafka does for a
# stored offset without one).  The account follows.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"

PARTITIONS=3
E2E_TOPIC=r16-orders-$$
GROUP=r16-group-$$
plan 8

# last_commits — "PARTITION OFFSET LEADER_EPOCH" of the group's last
# commit of each partition of the topic, from __consumer_offsets
last_commits() {
	ak_java org.apache.kafka.tools.consumer.ConsoleConsumer --bootstrap-server "$AK_BOOTSTRAP" \
		--topic __consumer_offsets --from-beginning --timeout-ms 15000 \
		--formatter org.apache.kafka.tools.consumer.OffsetsMessageFormatter 2>/dev/null |
		grep -oE "\"group\":\"$GROUP\",\"topic\":\"$E2E_TOPIC\",\"partition\":[0-9]+\}\},\"value\":\{\"version\":[0-9]+,\"data\":\{\"offset\":-?[0-9]+,\"leaderEpoch\":-?[0-9]+" |
		sed -E 's/.*"partition":([0-9]+).*"offset":(-?[0-9]+),"leaderEpoch":(-?[0-9]+)/\1 \2 \3/' |
		awk '{ last[$1] = $0 } END { for (p in last) print last[p] }' | sort -n
}

kr_cluster || bail "could not start Apache Kafka"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"

produce_part 1 900 || bail "kcat could not produce"
feeder_start f "$E2E_TOPIC" "$GROUP" --batch-size 50 --stats-interval 1
check "the committed offsets reach the end offsets" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 120
feeder_stop f
is "$?" 0 "SIGTERM: the feeder exits 0"

commits=$(last_commits)
diag "last commits (partition offset leader_epoch): $(tr '\n' ';' <<<"$commits")"
ends=$(kafka_end_offsets "$E2E_TOPIC" | awk '{ print $2, $4 }' | sort -n)
is "$(awk '{ print $1, $2 }' <<<"$commits")" "$ends" \
	"the last commit of every partition is at its end offset"
is "$(awk '$3 < 0' <<<"$commits")" "" \
	"every partition's last commit carries a leader epoch (>= 0)"
kr_account "$GROUP" "leader epochs"
tap_done
