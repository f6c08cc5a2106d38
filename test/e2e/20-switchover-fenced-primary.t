#!/bin/bash
# 20-switchover-fenced-primary.t — a planned switchover with a real
# streaming standby.  The old primary is fenced read-only and stays up
# (ALTER SYSTEM SET default_transaction_read_only = on, reloaded: every
# session of it, the feeder's included, becomes read-only), the standby
# replays everything and is promoted.  The feeder, running all along with a
# multi-host DSN (target_session_attrs=read-write), must leave the fenced
# host at once (25006: the connection is dropped, not retried on) and reach
# the new primary within seconds of the promotion, losing and doubling
# nothing: the new primary holds exactly the stream, the fenced one holds
# nothing written after the fence.
#
# On 1.0 (RO_FEEDER_BIN=/tmp/ro-1.0/feeder/received-orders-feeder) the
# feeder kept its read-only session to the fenced primary and retried on it
# for ever (as 14-read-only-session.t shows).

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-20
PARTITIONS=3
FEEDER_ARGS=(--batch-size 10 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-ms 100 --retry-backoff-max-ms 500 --metrics-listen 127.0.0.1:0)
plan 19

# connected_to PORT — the feeder's last db_connected line names PORT
connected_to() {
	[ "$(grep 'event=db_connected' "$E2E_TMP/feeder.log" | tail -n 1 | sed -nE 's/.* port=([0-9]+).*/\1/p')" = "$1" ]
}

# rows_at DIR — orders stored on cluster DIR
rows_at() {
	pg_query_at "$1" "$E2E_DB" "SELECT count(*) FROM received_orders.received_orders"
}

PRIMARY_DIR= # set by pg_start
pg_start PRIMARY_DIR >&2 || bail "could not start the primary"
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
if [ -n "${RO_FEEDER_BIN:-}" ]; then
	sql "GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) TO \"$E2E_ROLE\""
fi

STANDBY_DIR= # set by pg_start_standby
pg_start_standby "$PRIMARY_DIR" STANDBY_DIR >&2 # in this shell: the exit handler stops it
tap_ok $? "a standby made with pg_basebackup -R starts"
if [ -z "$STANDBY_DIR" ] || [ ! -s "$STANDBY_DIR/port" ]; then
	bail "no standby"
fi
check "it has replayed the feeder's database and role" pg_wait_replayed "$PRIMARY_DIR" "$STANDBY_DIR" 60

P1=$(cat "$PRIMARY_DIR/port")
P2=$(cat "$STANDBY_DIR/port")
E2E_DSN="host=127.0.0.1,127.0.0.1 port=$P1,$P2 dbname=$E2E_DB user=$E2E_ROLE password=$E2E_PASSWORD target_session_attrs=read-write connect_timeout=5"

# --- part 1 on the old primary
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 400
done
flush || bail "kcat could not produce"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "part 1: consumed on the primary (its positions reach the end offsets)" db_wait_caught_up "$GROUP" 60
check "the feeder is connected to the primary" connected_to "$P1"

# --- the switchover: fence the old primary (it stays up), produce part 2
pg_query_at "$PRIMARY_DIR" postgres "ALTER SYSTEM SET default_transaction_read_only = on" >/dev/null
is "$(pg_query_at "$PRIMARY_DIR" postgres "SELECT pg_reload_conf()")" t \
	"the old primary is fenced: default_transaction_read_only = on, reloaded"
rows_fenced=$(rows_at "$PRIMARY_DIR")
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 401 800
done
flush || bail "kcat could not produce"
check "the feeder's batch on the fenced primary fails with 25006 and it drops that connection at once" \
	ro_wait_until 30 eval "grep -A3 'event=batch_failed .*sqlstate=25006' '$E2E_TMP/feeder.log' | grep -q 'event=db_reconnecting'"
check "the standby replays everything the old primary wrote" pg_wait_replayed "$PRIMARY_DIR" "$STANDBY_DIR" 60
sleep 1
check "the feeder stays up while no host accepts writes" feeder_alive feeder
promoted_at=$(date +%s)
check "the standby is promoted" pg_promote "$STANDBY_DIR" 60
pg_use "$STANDBY_DIR" # sql() and the checks now read the new primary
check "the feeder connects to the new primary within 10 s of the promotion" \
	ro_wait_until 10 connected_to "$P2"
check "part 2 lands on the new primary: its positions reach the end offsets within 30 s" \
	db_wait_caught_up "$GROUP" 30
diag "promotion to caught up: $(($(date +%s) - promoted_at)) s"
check "Kafka's committed offsets reach the end offsets" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check "the feeder is the same process as before the switchover" feeder_alive feeder
log_has_no event=positions_behind feeder
tap_ok $? "no positions_behind: the new primary had every batch the old one committed"
check_exact_contents
is "$(rows_at "$PRIMARY_DIR")" "$rows_fenced" "the fenced old primary, still up, got nothing after the fence"
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
