#!/bin/bash
# 36-stale-library-session.t — a session that loaded an
# older library must not run its code against a newer installed extension.
# The library ends such a session at its next call (FATAL 0A000, hint: connect
# again); the feeder takes the lost connection as transient, reconnects and
# retries, acknowledging nothing meanwhile.
#
# The feeder consumes part 1.  Then pg_extension says the installed version
# is the next one (as after ALTER EXTENSION ... UPDATE to a release whose library this
# server does not have yet): every batch of part 2 meets the check, the
# server logs the FATAL with its hint, the feeder reconnects, stays up, and
# neither stores nor acknowledges anything of part 2.  Once the installed
# version is the library's again (the new library installed, in real life),
# it consumes to the end and holds exactly the expected contents.  Without
# the check (a library that does not compare versions), part 2 is stored
# at once.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-36
PARTITIONS=2
FEEDER_ARGS=(--batch-size 20 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-ms 100 --retry-backoff-max-ms 1000)
plan 11

# committed_offsets — "TOPIC PARTITION COMMITTED" of the group
committed_offsets() {
	kafka_committed "$GROUP" "$E2E_TOPIC" | awk '{ print $1, $2, $3 }'
}

# stale_fatals N — the server has logged N FATALs of the check since the
# mark, each with its hint
stale_fatals() {
	[ "$(tail -c +"$((PG_LOG_MARK + 1))" "$RO_PG_DIR/log" |
		grep -c "FATAL: .*this session's received_orders library (version $INSTALLED) is older than the installed extension (version $NEWER)")" -ge "$1" ] &&
		tail -c +"$((PG_LOG_MARK + 1))" "$RO_PG_DIR/log" |
		grep -q "HINT: .*Connect again: a new session loads the installed library"
}

# reconnected N — the feeder has logged N db_connected lines since the mark
reconnected() {
	[ "$(tail -n +"$((LOG_MARK + 1))" "$E2E_TMP/feeder.log" | grep -c 'event=db_connected')" -ge "$1" ]
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
INSTALLED=$(sql "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")
NEWER=${INSTALLED%%.*}.$((${INSTALLED#*.} + 1)) # a version after the library's

# --- part 1
produce_part 1 200 || bail "kcat could not produce"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "part 1: the feeder consumes it" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
rows_part1=$(rows)
committed_offsets >"$E2E_TMP/committed.part1"

# --- the installed extension is newer than the library the sessions loaded
LOG_MARK=$(wc -l <"$E2E_TMP/feeder.log")
PG_LOG_MARK=$(wc -c <"$RO_PG_DIR/log")
sql "UPDATE pg_catalog.pg_extension SET extversion = '$NEWER' WHERE extname = 'received_orders'"
produce_part 201 400 || bail "kcat could not produce"
check "part 2: the library ends each session that calls it (FATAL with the hint to connect again)" \
	ro_wait_until 30 stale_fatals 3
check "the feeder reconnects after each lost session" ro_wait_until 30 reconnected 2
check "the feeder stays up" feeder_alive feeder
check "nothing of part 2 is acknowledged meanwhile" \
	cmp -s "$E2E_TMP/committed.part1" <(committed_offsets)
is "$(rows)" "$rows_part1" "nothing of part 2 is stored meanwhile"

# --- the library matches the installed extension again
sql "UPDATE pg_catalog.pg_extension SET extversion = '$INSTALLED' WHERE extname = 'received_orders'"
check "then the feeder consumes to the end" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
check_exact_contents
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
