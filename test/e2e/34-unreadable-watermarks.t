#!/bin/bash
# 34-unreadable-watermarks.t — one assigned partition whose watermarks
# cannot be read must not block every lane.  Before a partition starts, the feeder asks its leader for its
# earliest and latest offsets (the database's position is checked against
# them: no partition starts at a guessed offset).  When that failed for one
# partition, every partition of the assignment waited, and no batch was sent
# on any lane; with the partition's leader down, librdkafka 2.0.2's
# rd_kafka_query_watermark_offsets does not even return (its wait ignores
# its timeout while the broker refuses connections), so the main thread hung.
#
# On a 3-broker development Kafka, 4 partitions: partition 2's leader is
# broker 3, the others' and the group coordinator are brokers 1 and 2.
#
# (a) "down": broker 3 is down (connections refused) when a fresh feeder
# (no positions yet) is assigned the four partitions.  Partitions 0, 1 and
# 3 must start and every one of their orders be stored and acknowledged;
# partition 2 waits (nothing stored, nothing committed), its failure is
# logged with its topic, partition and error, counted in /metrics
# (start_position_failures_total, partitions_waiting_start 1), and the
# main loop keeps coming round (/healthz answers 200 all along: one
# partition waiting is told by the gauge, not by a 503 that would get a
# feeder restarted for nothing).  Broker 3 comes back: partition 2 starts
# and its orders arrive.
#
# (b) "no leader": the feeder stopped, partition 2 has no leader at all (the
# metadata says so: the query fails at once), more orders arrive on the
# other partitions, and the feeder restarts from the database's positions:
# the same, then partition 2 gets its leader back and catches up.
#
# Exactly once everywhere: the tables hold exactly the stream.  On the
# feeder before this fix, (a)'s feeder hung in the rebalance callback and
# (b)'s started no lane: the checks of the other partitions fail.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-34
PARTITIONS=4
BAD=2
PER=60
FEEDER_ARGS=(--batch-size 20 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-ms 100 --retry-backoff-max-ms 1000 --stall-timeout 10
	--metrics-listen 127.0.0.1:0)
plan $((2 * 9 + 3 + 1))

# manifest_end P — partition P's end offset: one offset per message produced
manifest_end() {
	awk -F'\t' -v p="$1" '$2 == p { n++ } END { print n + 0 }' "$E2E_MANIFEST"
}

# good_stored — the database's position of every partition but BAD is its
# end offset
good_stored() {
	local p pos
	pos=$(db_positions "$GROUP" 2>/dev/null) || return 1
	for ((p = 0; p < PARTITIONS; p++)); do
		[ $p = $BAD ] && continue
		grep -qx "$E2E_TOPIC $p $(manifest_end $p)" <<<"$pos" || return 1
	done
}

# committed P — the group's committed offset of partition P in Kafka (-1:
# none); bounded, since a partition without a reachable leader makes the
# query of its watermarks fail (the committed offset is still printed)
committed() {
	timeout 30 "$(kafka__bin)" --committed --bootstrap "$KAFKA_BOOTSTRAP" \
		--group "$GROUP" --topic "$E2E_TOPIC" 2>/dev/null |
		awk -v p="$1" '$2 == p { print $3 }'
}

# good_acked — every partition but BAD is committed in Kafka at its end offset
good_acked() {
	local p
	for ((p = 0; p < PARTITIONS; p++)); do
		[ $p = $BAD ] && continue
		[ "$(committed $p)" = "$(manifest_end $p)" ] || return 1
	done
}

# bad_untouched BEFORE — partition BAD: the database's position and the
# group's committed offset are both still BEFORE (none: -1)
bad_untouched() {
	local pos
	pos=$(db_positions "$GROUP" | awk -v p=$BAD '$2 == p { print $3 }')
	[ "${pos:--1}" = "$1" ] && [ "$(committed $BAD)" = "$1" ]
}

# failure_logged — the feeder's latest run logged partition BAD's failure
# with its topic, partition and the error
failure_logged() {
	log_run_events feeder start_position_unavailable |
		grep -q "topic=$E2E_TOPIC partition=$BAD .*error="
}

# visible — /metrics counts the failure and one partition waiting
visible() {
	local n
	n=$(feeder_metric feeder start_position_failures_total) || return 1
	[ "$n" -ge 1 ] && [ "$(feeder_metric feeder partitions_waiting_start)" = 1 ]
}

# healthy_throughout SECONDS — /healthz answers 200 all along (a main loop
# that does not come round turns it 503 "stuck" after --stall-timeout)
healthy_throughout() {
	local addr end=$((SECONDS + $1)) body
	addr=$(feeder_metrics_addr feeder) || return 1
	while ((SECONDS < end)); do
		body=$(curl -sS --max-time 5 -w ' %{http_code}' "http://$addr/healthz")
		case $body in *' 200') ;; *) diag "healthz: $body"; return 1 ;; esac
		sleep 0.5
	done
}

# scenario LABEL FAULT HEAL FIRST — produce orders FIRST..FIRST+PER-1 on
# every partition (BAD's before the fault), inject FAULT (a control
# command), start the feeder, check the other partitions go on and BAD
# waits, then HEAL and check everything arrives
scenario() {
	local label=$1 fault=$2 heal=$3 first=$4 p before
	before=$(db_positions "$GROUP" | awk -v p=$BAD '$2 == p { print $3 }')
	mixed_stream $BAD "$first" $((first + PER - 1))
	flush || bail "kcat could not produce"
	kafka_command "$fault" || bail "could not inject \"$fault\""
	for ((p = 0; p < PARTITIONS; p++)); do
		[ $p = $BAD ] || mixed_stream $p "$first" $((first + PER - 1))
	done
	flush || bail "kcat could not produce"

	feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
	check "$label: the other partitions' orders are all stored" ro_wait_until 60 good_stored
	tap_last_ok || diag "$label: positions: $(db_positions "$GROUP" | tr '\n' ';')"
	check "$label: ... and acknowledged in Kafka" ro_wait_until 60 good_acked
	check "$label: partition $BAD's are neither stored nor acknowledged" bad_untouched "${before:--1}"
	check "$label: its failure is logged with topic, partition and error" ro_wait_until 20 failure_logged
	tap_last_ok && diag "$label: $(log_run_events feeder start_position_unavailable | head -n 1)"
	check "$label: /metrics counts it (start_position_failures_total, partitions_waiting_start 1)" \
		ro_wait_until 20 visible
	check "$label: the main loop keeps coming round (/healthz 200 for longer than --stall-timeout)" \
		healthy_throughout 12

	kafka_command "$heal" || bail "could not remove the fault (\"$heal\")"
	check "$label: fault removed: partition $BAD's orders arrive too" db_wait_caught_up "$GROUP" 90
	check "$label: ... and everything is acknowledged" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
	feeder_stop feeder
	is "$?" 0 "$label: SIGTERM, the feeder exits 0"
}

kafka_start 3 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
for ((p = 0; p < PARTITIONS; p++)); do
	if [ $p = $BAD ]; then
		kafka_command "leader $E2E_TOPIC $p 3"
	else
		kafka_command "leader $E2E_TOPIC $p $((p % 2 + 1))"
	fi || bail "could not place partition $p's leader"
done
kafka_command "coordinator group $GROUP 1" || bail "could not place the group coordinator"

scenario down "down 3" "up 3" 1
scenario "no leader" "leader $E2E_TOPIC $BAD -1" "leader $E2E_TOPIC $BAD 3" $((PER + 1))
check_exact_contents
check "no batch acknowledged offsets the database does not hold" test -z "$(acks_ahead "$GROUP")"
tap_done
