#!/bin/bash
# 28-dba-index-one-event.t — one event must not stall
# every partition.
#
# A DBA adds an expression index on a field of the payload; one event's
# field is too large for it, so that event's INSERT raises 54000 (index row
# size exceeds the maximum), an error of the class a batch too large for
# the server raises too.  Failing the whole call for it even when the
# event is alone, the feeder would split its batch down to that one message
# and retry it for ever, every partition paused.  So the batch function pins
# a program limit on the event when it is the call's only one (then it can
# only be the event's): the feeder splits down to it, it is quarantined
# (rejected, 54000), and the partitions go on: every other order stored
# once, positions and committed offsets at every partition's end.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-28
PARTITIONS=2
FEEDER_ARGS=(--batch-size 100 --batch-wait-ms 50 -X auto.commit.interval.ms=200
	--retry-backoff-ms 50 --retry-backoff-max-ms 200)
plan 7

# big_note_event N — an event of order N with a field of ~8 kB of hex
big_note_event() {
	local note i
	for ((i = 0; i < 260; i++)); do
		note+=$(printf '%s%s' "$1" "$i" | md5sum | cut -c1-32)
	done
	printf '{"type":"OrderReceived","orderId":"%s","externalReference":"EXT-%s","note":"%s"}' "$(uid "$1")" "$1" "$note"
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
sql "CREATE INDEX ro_e2e_note_idx ON received_orders.received_orders ((payload ->> 'note'))" >/dev/null ||
	bail "could not create the DBA's index"

mixed_stream 0 1 149
msg 0 big-149999 reject - - 54000 "$(big_note_event 149999)"
mixed_stream 0 150 300
mixed_stream 1 1 300
flush || bail "kcat could not produce"

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the group consumes every partition to its end, past the event the index cannot hold" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 90
check "the database's positions reach every partition's end" db_wait_caught_up "$GROUP" 30
check_exact_contents
check "the feeder split its batch for the 54000 before the event was alone" \
	grep -q 'event=batch_split .*sqlstate=54000' "$E2E_TMP/feeder.log"
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
