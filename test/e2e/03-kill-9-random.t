#!/bin/bash
# 03-kill-9-random.t — kill -9 the feeder at random points while it consumes,
# several times, restarting it each time.  After every kill, every message
# below each partition's committed offset must already be in the database
# (its order row) or in the quarantine (its own row): no offset is ever
# committed ahead of the database.  At the end the contents are exact.
#
# Offsets are mapped to messages through their keys (kcat -C prints
# partition, offset and key of every stored message).  Round 1 kills after a
# random delay (possibly during the group join); the other rounds kill as
# soon as the table passes a random row count, i.e. mid-stream (or after a
# random delay, should the stream be complete already).

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-03
ROUNDS=5
PARTITIONS=4
PER_PARTITION=2000
# small batches make many transactions to land in; frequent background
# commits make the committed offsets move between kills (lib.sh's short
# session timeout lets the restarted member take over from the killed one)
FEEDER_ARGS=(--batch-size 3 --batch-wait-ms 20 -X auto.commit.interval.ms=200)
plan $((1 + 2 * ROUNDS + 6))

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on materialize_orders" \
	e2e_role_is_least_privilege

for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 $PER_PARTITION
done
flush || bail "kcat could not produce"
kafka_offsets_map "$E2E_TOPIC" >"$E2E_TMP/offsets.map"
total=$(expected_rows | wc -l)

for ((round = 1; round <= ROUNDS; round++)); do
	feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
	now=$(rows)
	if ((round == 1 || now >= total)); then
		# at a random time (in round 1 possibly during the group join)
		delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.5 + 3 * r / 32767 }')
		sleep "$delay"
		check "round $round: the feeder still runs $delay s after the start" feeder_alive feeder
	else
		# at a random row count between here and a share of what is left
		threshold=$((now + 1 + RANDOM % ((total - now) / (ROUNDS - round + 2) + 1)))
		check "round $round: the feeder passes $threshold of $total orders" \
			ro_wait_until 120 rows_at_least "$threshold"
	fi
	feeder_kill feeder
	diag "round $round: killed at $(rows) orders; committed: $(kafka_committed "$GROUP" "$E2E_TOPIC" | awk '{ printf "[%s] @%s ", $2, $3 }')"
	check "round $round: every message below the committed offsets is stored or quarantined" \
		check_below_committed "$GROUP"
done

check "the kill rounds committed offsets (the checks above were not vacuous)" \
	test "$(committed_sum "$GROUP")" -gt 0

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "after the last restart, committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 90
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
check_exact_contents
tap_done
