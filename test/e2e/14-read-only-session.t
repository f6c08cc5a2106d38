#!/bin/bash
# 14-read-only-session.t — a read-only session (25006) is not retried on the
# same connection: a fenced old primary (default_transaction_read_only)
# would hold the feeder for ever while a new session would be writable.
#
# The feeder consumes part 1.  Then its role gets
# default_transaction_read_only = on and its session is terminated: the
# session it reconnects with is read-only, and every batch of part 2 fails
# with 25006.  The feeder must drop that connection at once (batch_failed
# sqlstate=25006, then db_reconnecting, then db_connected: a new session for
# every retry), acknowledge and store nothing meanwhile, and stay up.  Once
# the role setting is reset (new sessions writable, as when a multi-host DSN
# reaches the new primary), it must consume to the end within 15 s and hold
# exactly the expected contents.
#
# On 1.0 (RO_FEEDER_BIN=/tmp/ro-1.0/feeder/received-orders-feeder) the
# read-only session is kept for ever: no reconnection, no recovery.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-14
PARTITIONS=3
RECOVERY_SECONDS=15
FEEDER_ARGS=(--batch-size 20 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-ms 100 --retry-backoff-max-ms 1000)
plan 14

# since_mark NAME — NAME's log lines written after mark_log
since_mark() {
	tail -n +"$((LOG_MARK + 1))" "$E2E_TMP/$1.log"
}

# mark_log NAME — remember how far NAME's log goes now
mark_log() {
	LOG_MARK=$(wc -l <"$E2E_TMP/$1.log")
}

# read_only_failures N — the feeder has logged N batch_failed lines with
# sqlstate=25006 since the mark
read_only_failures() {
	[ "$(since_mark feeder | grep -c 'event=batch_failed .*sqlstate=25006')" -ge "$1" ]
}

# reconnects_after_each_failure — after the mark, every batch_failed
# sqlstate=25006 line is followed by db_reconnecting (reason: read-only)
# and a db_connected line before the next batch attempt fails again
reconnects_after_each_failure() {
	since_mark feeder | awk '
		/event=batch_failed .*sqlstate=25006/ {
			if (failed && !(dropped && connected)) { print "25006 retried without a new session: " prev; bad = 1 }
			failed++; dropped = 0; connected = 0; prev = $0; next
		}
		/event=db_reconnecting .*read-only/ { dropped = 1; next }
		/event=db_connected/ { if (dropped) connected = 1; next }
		END { if (failed < 2) { print "fewer than two 25006 failures"; bad = 1 } exit bad }'
}

# committed_offsets — "TOPIC PARTITION COMMITTED" of the group (without
# the high watermark, which grows as messages are produced)
committed_offsets() {
	kafka_committed "$GROUP" "$E2E_TOPIC" | awk '{ print $1, $2, $3 }'
}

# session_read_only — the feeder role's sessions are read-only now
session_read_only() {
	[ "$(psql -X -A -t -d "$E2E_DB" -U "$E2E_ROLE" -c 'SHOW default_transaction_read_only')" = on ]
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on the functions the feeder calls" \
	e2e_role_is_least_privilege
if [ -n "${RO_FEEDER_BIN:-}" ]; then
	# the older feeder calls the batch function without a consumer group
	sql "GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) TO \"$E2E_ROLE\""
fi

# --- part 1, on a writable session
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 300
done
flush || bail "kcat could not produce"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "part 1: the feeder consumes it" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
rows_part1=$(rows)

# --- the role's new sessions are read-only; the feeder's session is ended
sql "ALTER ROLE \"$E2E_ROLE\" SET default_transaction_read_only = on"
check "a new session of the feeder's role is read-only" session_read_only
mark_log feeder
terminated=$(sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                   WHERE usename = '$E2E_ROLE' AND datname = '$E2E_DB'")
check "the feeder's sessions are terminated ($terminated)" test "$terminated" -ge 1
committed_offsets >"$E2E_TMP/committed.part1"
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 301 600
done
flush || bail "kcat could not produce"
check "part 2: its batches fail with 25006 on the read-only session" \
	ro_wait_until 30 read_only_failures 3
check "each 25006 drops the connection at once: db_reconnecting, then db_connected, before the next attempt" \
	reconnects_after_each_failure
check "the feeder stays up" feeder_alive feeder
check "nothing of part 2 is acknowledged while sessions are read-only" \
	cmp -s "$E2E_TMP/committed.part1" <(committed_offsets)
is "$(rows)" "$rows_part1" "nothing of part 2 is stored while sessions are read-only"

# --- new sessions writable again: the feeder must get one and finish
sql "ALTER ROLE \"$E2E_ROLE\" RESET default_transaction_read_only"
check "new sessions are writable again: the feeder consumes to the end within $RECOVERY_SECONDS s" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" "$RECOVERY_SECONDS"
check_exact_contents
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
