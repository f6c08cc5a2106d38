#!/bin/bash
# 19-lag-from-assignment.t — health that means progress: every
# assigned partition has a consumer_lag series from the moment it is
# assigned, from the group's committed offset when its position is unknown.
#
# A partition that has not been fetched in its assignment (its start
# position waits for the database, or it stays paused) has no watermarks in
# librdkafka's cache, and its lag was "unknown": no series, so no lag alert
# could fire for exactly the partitions that do not move.
#
# Part 1: a feeder consumes part 1 (PER partition) and stops: the group has
# committed offsets.  Part 2 (MORE per partition) is produced.  A feeder
# whose database is unreachable (nothing listens on its port) is assigned
# every partition; they wait for their start positions and are never
# fetched.  Its /metrics must show one consumer_lag series per partition,
# each equal to MORE (from the committed offset), and its stalled gauge must
# turn to 1 once messages wait longer than --stall-timeout.
# Part 3: on a new group with no committed offset, the lag of a waiting
# partition counts from its first offset (auto.offset.reset is earliest).
#
# On the feeder before this fix, no consumer_lag series existed for them.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-19
PARTITIONS=3
PER=120
MORE=45
FEEDER_ARGS=(--batch-size 50 --batch-wait-ms 20 -X auto.commit.interval.ms=200)
plan 8

# lag_series NAME — "PARTITION LAG" for each consumer_lag series of NAME
lag_series() {
	local addr
	addr=$(feeder_metrics_addr "$1") || return 1
	curl -sS --max-time 5 "http://$addr/metrics" |
		sed -nE 's/^received_orders_feeder_consumer_lag\{topic="[^"]*",partition="([0-9]+)"\} ([0-9]+)$/\1 \2/p' | sort
}

# lags_are NAME WANT — every partition has a series, each equal to WANT
lags_are() {
	local want="" p
	for ((p = 0; p < PARTITIONS; p++)); do
		want+="$p $2"$'\n'
	done
	[ "$(lag_series "$1")" = "${want%$'\n'}" ]
}

# stalled NAME — NAME's stalled gauge is 1 and /healthz answers 503
stalled() {
	local addr
	addr=$(feeder_metrics_addr "$1") || return 1
	[ "$(feeder_metric "$1" stalled)" = 1 ] &&
		[ "$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "http://$addr/healthz")" = 503 ]
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
DEAD_PORT=$(pg_free_port) || bail "no free port"
DEAD_DSN="host=127.0.0.1 port=$DEAD_PORT dbname=$E2E_DB user=$E2E_ROLE password=$E2E_PASSWORD connect_timeout=2"

# --- part 1: committed offsets for the group
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 $PER
done
flush || bail "kcat could not produce"
feeder_start first "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "part 1 consumed and committed" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
feeder_stop first
is "$?" 0 "SIGTERM: the first feeder exits 0"

# --- part 2: a feeder whose database does not answer
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p $((PER + 1)) $((PER + MORE))
done
flush || bail "kcat could not produce"
feeder_start waiting "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}" --dsn "$DEAD_DSN" \
	--metrics-listen 127.0.0.1:0 --stall-timeout 3
check "the feeder without its database is assigned every partition" \
	ro_wait_until 30 grep -q 'event=partitions_assigned .*count=3' "$E2E_TMP/waiting.log"
check "each waiting partition has a consumer_lag series of $MORE (from the committed offset)" \
	ro_wait_until 20 lags_are waiting $MORE
tap_last_ok || diag "consumer_lag series: $(lag_series waiting | tr '\n' ';')"
check "the stalled gauge turns 1 after --stall-timeout (messages wait, nothing commits), /healthz 503" \
	ro_wait_until 20 stalled waiting
feeder_stop waiting
is "$?" 0 "SIGTERM: the waiting feeder exits 0"

# --- part 3: a group with no committed offset counts from the first offset
feeder_start fresh "$E2E_TOPIC" "$GROUP-fresh" "${FEEDER_ARGS[@]}" --dsn "$DEAD_DSN" \
	--metrics-listen 127.0.0.1:0
check "on a group without committed offsets, each waiting partition's lag is the whole partition ($((PER + MORE)))" \
	ro_wait_until 30 lags_are fresh $((PER + MORE))
tap_last_ok || diag "consumer_lag series: $(lag_series fresh | tr '\n' ';')"
feeder_stop fresh
is "$?" 0 "SIGTERM: the fresh feeder exits 0"
tap_done
