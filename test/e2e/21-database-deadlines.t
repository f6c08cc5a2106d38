#!/bin/bash
# 21-database-deadlines.t — database-side deadlines.  Without a
# lock_timeout, an uncommitted insert of the same order in any session
# would block the feeder's batch (and, Kafka not polled meanwhile, the
# member would be evicted once max.poll.interval.ms passed; the next member
# then blocked the same way); without TCP keepalives a half-open socket
# would hang the feeder for hours.
#
# Part 1: a DBA's session inserts an order of the stream and keeps its
# transaction open for HOLD seconds, longer than the group's
# max.poll.interval.ms.  The feeder, with --lock-timeout-ms 1000, must see
# its batch fail with 55P03 (a retried error, logged as such), keep its
# partitions (no revocation, no max.poll.interval.ms error) and, once the
# session ends, store exactly the stream.
# Part 2: the feeder's TCP connection to PostgreSQL has TCP keepalives on
# (ss shows a keepalive timer on its socket), so a half-open connection is
# found in seconds, not hours.
#
# On the feeder before the fix (no deadlines), the batch waited for the lock
# for HOLD seconds, librdkafka left the group (max.poll.interval.ms
# exceeded) and the partitions were revoked; its socket had no keepalive.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-21
PARTITIONS=2
HOLD=14
FEEDER_ARGS=(--batch-size 20 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--lock-timeout-ms 1000 --retry-backoff-ms 100 --retry-backoff-max-ms 500
	-X max.poll.interval.ms=8000)
plan 10

# keepalive_on PID PORT — a TCP socket of PID to 127.0.0.1:PORT has a
# keepalive timer
keepalive_on() {
	ss -tnpo state established "( dport = :$2 )" 2>/dev/null |
		grep -F "pid=$1," | grep -q 'timer:(keepalive'
}

# blocker_holds — the blocking session has inserted and sleeps
blocker_holds() {
	[ "$(sql "SELECT count(*) FROM pg_stat_activity
	            WHERE datname = '$E2E_DB' AND query LIKE '%pg_sleep%' AND state = 'active'
	              AND backend_xid IS NOT NULL")" -ge 1 ]
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
if [ -n "${RO_FEEDER_BIN:-}" ]; then
	sql "GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) TO \"$E2E_ROLE\""
fi
# TCP, not the unix socket: keepalives are TCP's
E2E_DSN="host=127.0.0.1 port=$PGPORT dbname=$E2E_DB user=$E2E_ROLE password=$E2E_PASSWORD"

for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 300
done
flush || bail "kcat could not produce"

# --- part 1: a session holds an uncommitted insert of the first order of
# partition 0 (order 1, reference EXT-1: the stream's own)
psql -X -q -d "$E2E_DB" -v ON_ERROR_STOP=1 >"$E2E_TMP/blocker.out" 2>&1 <<-EOF &
	BEGIN;
	INSERT INTO received_orders.received_orders (order_id, external_reference, payload)
	VALUES ('00000000-0000-4000-8000-000000000001', 'EXT-1', '{}');
	SELECT pg_sleep($HOLD);
	ROLLBACK;
EOF
BLOCKER=$!
ro_wait_until 10 blocker_holds || bail "the blocking session did not start"
held_since=$(date +%s)
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the batch waiting on the uncommitted insert fails with 55P03 (lock_timeout) and is retried" \
	ro_wait_until 10 grep -Eq 'event=batch_failed .*sqlstate=55P03 .*retry_in_ms=' "$E2E_TMP/feeder.log"
check "its connection has a TCP keepalive timer (ss)" keepalive_on "${FEEDER_PIDS[feeder]}" "$PGPORT"
wait "$BLOCKER"
is "$?" 0 "the blocking session held its lock ${HOLD} s and rolled back"
diag "held for $(($(date +%s) - held_since)) s"
check "after the lock is released, the feeder consumes everything" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check "the partitions were never revoked while the batch waited (the member kept its place)" \
	eval "! grep -q 'event=partitions_revoked' '$E2E_TMP/feeder.log'"
check "no max.poll.interval.ms error from librdkafka" \
	eval "! grep -Eqi 'maximum poll interval|MAX_POLL_EXCEEDED' '$E2E_TMP/feeder.log'"
check "the feeder is still up" feeder_alive feeder
check_exact_contents
feeder_stop feeder
tap_done
