#!/bin/bash
# 09-restore-refills.t — the database is restored from a pg_dump taken
# mid-stream, behind what Kafka's committed offsets acknowledge: the feeder
# starts from the positions the restored database holds and refills the
# gap from Kafka.  Every valid order ends up exactly once, every bad message
# is quarantined once.
#
# A feeder consumes a mixed stream on partitions 0 and 1; pg_dump -Fc runs
# while it consumes; more is produced, partition 2 included, and consumed;
# the feeder stops (exit 0, Kafka's offsets committed to the end).  The database is dropped, re-created and
# pg_restore'd.  Before the restart the suite shows that the restore lost
# acknowledged events — Kafka's committed offsets are above the restored
# positions on every partition and some messages below them are neither
# stored nor quarantined — so a feeder resuming from Kafka's committed
# offsets would lose them for good.  The restarted feeder logs
# start_position ... source=database at exactly the restored positions, and
# source=earliest for partition 2, which the dump predates (its committed
# offset in Kafka is at its end: starting there would lose all of it).

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-09
PARTITIONS=3
FEEDER_ARGS=(--batch-size 10 --batch-wait-ms 20 -X auto.commit.interval.ms=200)
plan 20

# start_positions NAME — "PARTITION OFFSET SOURCE" of the start_position
# lines of NAME's latest run
start_positions() {
	awk '/^--- start/ { delete seen; n = 0 }
	     /event=start_position / {
		p = $0; sub(/.* partition=/, "", p); sub(/ .*/, "", p)
		o = $0; sub(/.* offset=/, "", o); sub(/ .*/, "", o)
		s = $0; sub(/.* source=/, "", s); sub(/ .*/, "", s)
		seen[p] = p " " o " " s
	     }
	     END { for (p in seen) print seen[p] }' "$E2E_TMP/$1.log" | sort -n
}

# rows_and_positions N P — N orders or more stored, positions of P partitions
rows_and_positions() {
	[ "$(rows)" -ge "$1" ] && [ "$(db_positions "$GROUP" | wc -l)" -eq "$2" ]
}

# not CMD... — succeeds when CMD fails
not() {
	! "$@"
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on the functions the feeder calls" \
	e2e_role_is_least_privilege

# --- stream on partitions 0 and 1, with a dump taken while the feeder consumes
mixed_stream 0 1 1500
mixed_stream 1 1 1500
flush || bail "kcat could not produce"
first=$(expected_rows | wc -l)

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder gets a third through the stream, with positions of partitions 0 and 1" \
	ro_wait_until 60 rows_and_positions $((first / 3)) 2
check "pg_dump -Fc while the feeder consumes" \
	pg_dump -Fc -d "$E2E_DB" -f "$E2E_TMP/mid-stream.dump"
check "the feeder completes the first part: the database's positions reach the end offsets" \
	db_wait_caught_up "$GROUP" 60

# --- more events after the dump, the first ones of partition 2
mixed_stream 0 1501 2500
mixed_stream 1 1501 2500
mixed_stream 2 1 2500
flush || bail "kcat could not produce"
check "the feeder completes the stream: Kafka's committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
kafka_committed "$GROUP" "$E2E_TOPIC" >"$E2E_TMP/committed.before-restore"

# --- restore the mid-stream dump into a fresh database
check "the database is dropped, re-created and restored from the dump" \
	bash -c 'dropdb --force "$1" && createdb "$1" && pg_restore --exit-on-error -d "$1" "$2"' \
	_ "$E2E_DB" "$E2E_TMP/mid-stream.dump"
db_positions "$GROUP" >"$E2E_TMP/positions.restored"
diag "the restored database holds $(rows) of the $(expected_rows | wc -l) orders produced" \
	"restored positions: $(tr '\n' ';' <"$E2E_TMP/positions.restored")" \
	"Kafka's committed offsets: $(awk '{ printf "%s %s %s;", $1, $2, $3 }' "$E2E_TMP/committed.before-restore")"
check "the restored database gives the feeder's role the same least privileges" \
	e2e_role_is_least_privilege
is "$(awk '{ print $2 }' "$E2E_TMP/positions.restored" | tr '\n' ' ')" "0 1 " \
	"the restored database holds positions of partitions 0 and 1, none of partition 2"
# shellcheck disable=SC2016 # $1 and $2 are awk's fields
check "Kafka's committed offsets are above the restored position on every partition" \
	awk 'FILENAME == ARGV[1] { pos[$2] = $3; next }
	     { if ($3 <= pos[$2] + 0) { print "partition " $2 ": committed " $3 ", restored " pos[$2]; bad = 1 } }
	     END { exit bad }' "$E2E_TMP/positions.restored" "$E2E_TMP/committed.before-restore"
check "without positions the gap would be lost: Kafka acknowledges messages the restored database lacks" \
	not check_below_committed "$GROUP" "$E2E_TMP/committed.before-restore"
diag "messages acknowledged by Kafka but absent from the restored database: $(wc -l <"$E2E_TMP/below.out")"

# --- the feeder starts from the restored positions and refills
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder refills: the database's positions reach the end offsets" \
	db_wait_caught_up "$GROUP" 90
check "the feeder is still running" feeder_alive feeder
is "$(start_positions feeder)" "$(awk '{ print $2, $3, "database" }' "$E2E_TMP/positions.restored"; echo "2 earliest earliest")" \
	"partitions 0 and 1 start at the restored positions (source=database), partition 2 at its earliest offset"
check "Kafka's committed offsets reach the end offsets again" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check_exact_contents
check "now everything Kafka acknowledges is in the database" check_below_committed "$GROUP"
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
