#!/bin/bash
# 17-paused-partitions-rebalance.t — a paused partition does not stay paused
# after a rebalance.  librdkafka keeps an application's pause on a partition
# across revoke and re-assign; the feeder pauses its assignment during a
# database outage, and partitions that a rebalance takes away meanwhile and
# gives back after the outage must be fetched again (else: no consumer_lag
# series, no alert).
#
# On a 6-partition topic, for EAGER (range,roundrobin) and COOPERATIVE
# (cooperative-sticky), each on a topic and group of its own: feeder A
# consumes part 1; the database stops (pg_ctl stop -m fast) and part 2
# arrives, so A fails its batch and pauses; feeder B joins the group and
# takes some partitions; the database comes back, A resumes; B stops
# (SIGTERM) and its partitions return to A; part 3 goes to every partition.
# A alone must consume everything, show a consumer_lag series for each of
# the six partitions, and the database must hold exactly the stream.
#
# Runs on a cluster of its own (test/lib/pg.sh): stopping it harms no other
# suite.  On 1.0 (RO_FEEDER_BIN=/tmp/ro-1.0/feeder/received-orders-feeder)
# the partitions that came back from B stay paused for ever.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

PARTITIONS=6
FEEDER_ARGS=(--batch-size 10 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-ms 100 --retry-backoff-max-ms 500 --stats-interval 1
	--metrics-listen 127.0.0.1:0)
plan $((1 + 2 * 12))

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

# failed_since NAME LINE — NAME's log has a batch_failed line after LINE
failed_since() {
	tail -n +"$(($2 + 1))" "$E2E_TMP/$1.log" | grep -q 'event=batch_failed'
}

# lag_series NAME — the partitions of E2E_TOPIC with a consumer_lag series
# in NAME's /metrics, and their lag: "PARTITION LAG" lines
lag_series() {
	local addr
	addr=$(feeder_metrics_addr "$1") || return 1
	curl -sS --max-time 5 "http://$addr/metrics" |
		sed -nE "s/^received_orders_feeder_consumer_lag\\{topic=\"$E2E_TOPIC\",partition=\"([0-9]+)\"\\} (-?[0-9]+).*/\\1 \\2/p" | sort -n
}

# all_lag_zero NAME — a series for each partition, every one 0
all_lag_zero() {
	[ "$(lag_series "$1")" = "$(seq 0 $((PARTITIONS - 1)) | sed 's/$/ 0/')" ]
}

# scenario LABEL STRATEGY — the whole story on a fresh topic and group
scenario() {
	local label=$1 strategy=$2 mark args
	E2E_TOPIC=orders-$label
	GROUP=e2e-17-$label
	args=("${FEEDER_ARGS[@]}" -X partition.assignment.strategy="$strategy")
	: >"$E2E_MANIFEST"
	: >"$E2E_TMP/offsets.map"
	sql "TRUNCATE received_orders.received_orders, received_orders.received_orders_quarantine"

	produce_part 1 150 || bail "kcat could not produce"
	feeder_start a "$E2E_TOPIC" "$GROUP" "${args[@]}"
	check "$label: part 1: feeder a consumes it" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60

	mark=$(wc -l <"$E2E_TMP/a.log")
	pg_ctl_as stop -m fast -w || bail "could not stop PostgreSQL"
	produce_part 151 200 || bail "kcat could not produce"
	check "$label: database down, part 2 arrives: feeder a fails its batch (and pauses)" \
		ro_wait_until 30 failed_since a "$mark"

	feeder_start b "$E2E_TOPIC" "$GROUP" "${args[@]}"
	check "$label: feeder b joins during the outage: the two split the partitions" \
		ro_wait_until 40 split_between a b
	diag "$label: a holds $(feeder_assignment a | tr '\n' ' '), b holds $(feeder_assignment b | tr '\n' ' ')"

	check "$label: PostgreSQL starts again" pg_ctl_as start -w
	check "$label: parts 1 and 2 are consumed by a and b" \
		kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60

	feeder_stop b
	is "$?" 0 "$label: SIGTERM, feeder b exits 0"
	check "$label: b's partitions return to feeder a" ro_wait_until 40 holds_all a

	produce_part 201 400 || bail "kcat could not produce"
	check "$label: part 3 on every partition: feeder a alone consumes everything" \
		kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
	check "$label: feeder a has a consumer_lag series of 0 for each of the $PARTITIONS partitions" \
		ro_wait_until 10 all_lag_zero a
	tap_last_ok || diag "$label: consumer_lag series: $(lag_series a | tr '\n' ';')"
	check_exact_contents
	feeder_stop a
	mv "$E2E_TMP/a.log" "$E2E_TMP/a-$label.log"
	mv "$E2E_TMP/b.log" "$E2E_TMP/b-$label.log"
}

# shellcheck disable=SC2034 # set by pg_start through its name
DB_DIR=
pg_start DB_DIR >&2 || bail "could not start a dedicated PostgreSQL cluster"
kafka_start 1 "orders-eager:$PARTITIONS" "orders-cooperative:$PARTITIONS" ||
	bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on the functions the feeder calls" \
	e2e_role_is_least_privilege
if [ -n "${RO_FEEDER_BIN:-}" ]; then
	# the older feeder calls the batch function without a consumer group
	sql "GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) TO \"$E2E_ROLE\""
fi

scenario eager range,roundrobin
scenario cooperative cooperative-sticky
tap_done
