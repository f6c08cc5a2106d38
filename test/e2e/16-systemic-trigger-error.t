#!/bin/bash
# 16-systemic-trigger-error.t — systemic errors are not pinned on events.
# A DBA's BEFORE INSERT trigger that fails for every row (here with 0A000,
# feature_not_supported) must not make the batch function reject and
# quarantine every valid event for the feeder to acknowledge: the table
# would silently stop growing.  A trigger returning NULL must not give an
# endless 40001 loop.
#
# Part 1: with the failing trigger in place, the whole call fails: the
# feeder logs batch_failed class=other sqlstate=0A000 at error level and
# retries (dropping its connection after every third consecutive failure,
# as for a read-only session), acknowledges nothing, quarantines nothing, stores
# nothing and stays up; once the trigger is dropped, everything lands with
# exactly the expected contents.
# Part 2: a trigger that returns NULL is a permanent configuration error:
# 09000 naming the order and the cause, event=database_config_error with a
# hint, exit 3, nothing of part 2 acknowledged, stored or quarantined.
#
# On 1.0 (RO_FEEDER_BIN=/tmp/ro-1.0/feeder/received-orders-feeder, with this
# tree's extension installed) the trigger returning NULL is retried for ever
# instead of exit 3; the 0A000 part depends on the extension (the first
# release's quarantined every event), not on the feeder.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-16
PARTITIONS=3
FEEDER_ARGS=(--batch-size 20 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-ms 100 --retry-backoff-max-ms 500)
plan 18

# committed_offsets — "TOPIC PARTITION COMMITTED" of the group (without
# the high watermark, which grows as messages are produced)
committed_offsets() {
	kafka_committed "$GROUP" "$E2E_TOPIC" | awk '{ print $1, $2, $3 }'
}

# failures_of STATE N — the feeder has logged N batch_failed lines with
# sqlstate=STATE
failures_of() {
	[ "$(grep -c "event=batch_failed .*sqlstate=$1" "$E2E_TMP/feeder.log")" -ge "$2" ]
}

# reconnected_after_third_failure — a db_reconnecting line after the third
# consecutive failure, followed by a db_connected line
reconnected_after_third_failure() {
	grep -E 'event=db_reconnecting .*failures=3( |$)' -A 50 "$E2E_TMP/feeder.log" | grep -q 'event=db_connected'
}

# config_error_names_trigger — event=database_config_error with 09000, an
# order id, a trigger and a hint
config_error_names_trigger() {
	grep -E 'event=database_config_error .*sqlstate=09000' "$E2E_TMP/feeder.log" |
		grep -E 'order [0-9a-f-]{36}' | grep -i trigger | grep -q 'hint='
}

# quarantined — rows in the quarantine
quarantined() {
	sql "SELECT count(*) FROM received_orders.received_orders_quarantine"
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on the functions the feeder calls" \
	e2e_role_is_least_privilege
if [ -n "${RO_FEEDER_BIN:-}" ]; then
	# the older feeder calls the batch function without a consumer group
	sql "GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) TO \"$E2E_ROLE\""
fi

# --- part 1: a trigger that fails every row with 0A000
sql "CREATE FUNCTION public.e2e_refuse_every_row() RETURNS trigger LANGUAGE plpgsql AS
       \$\$BEGIN RAISE EXCEPTION 'inserts are disabled by the DBA' USING ERRCODE = 'feature_not_supported'; END\$\$;
     CREATE TRIGGER e2e_refuse_every_row BEFORE INSERT ON received_orders.received_orders
       FOR EACH ROW EXECUTE FUNCTION public.e2e_refuse_every_row()" >/dev/null
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 300
done
flush || bail "kcat could not produce"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "0A000 on every row: the feeder fails the batch and retries it (6 attempts)" \
	ro_wait_until 30 failures_of 0A000 6
check "the failure is logged at error level as class other, naming 0A000 and the Kafka coordinates" \
	grep -Eq 'level=error event=batch_failed class=other .*sqlstate=0A000 .*first="orders \[[0-9]\] @[0-9]+"' "$E2E_TMP/feeder.log"
check "after 3 consecutive failures of the batch, its connection is dropped (db_reconnecting, then db_connected)" \
	reconnected_after_third_failure
check "the feeder stays up" feeder_alive feeder
is "$(committed_sum "$GROUP")" 0 "nothing is acknowledged while the trigger fails every row"
is "$(quarantined)" 0 "nothing is quarantined"
is "$(rows)" 0 "nothing is stored"
is "$(sql "SELECT count(*) FROM received_orders.consumer_positions('$GROUP')")" 0 \
	"no position is recorded"

sql "DROP TRIGGER e2e_refuse_every_row ON received_orders.received_orders" >/dev/null
check "trigger dropped: the feeder, still the same process, consumes everything" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check "it is the same feeder process" feeder_alive feeder
check_exact_contents

# --- part 2: a trigger that returns NULL (suppresses every insert)
committed_offsets >"$E2E_TMP/committed.part1"
rows_part1=$(rows)
quarantined_part1=$(quarantined)
sql "CREATE FUNCTION public.e2e_suppress_every_row() RETURNS trigger LANGUAGE plpgsql AS
       \$\$BEGIN RETURN NULL; END\$\$;
     CREATE TRIGGER e2e_suppress_every_row BEFORE INSERT ON received_orders.received_orders
       FOR EACH ROW EXECUTE FUNCTION public.e2e_suppress_every_row()" >/dev/null
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 301 400
done
flush || bail "kcat could not produce"
if feeder_wait_exit feeder 20; then
	diag "the feeder exited with status $FEEDER_RC"
	[ "$FEEDER_RC" -eq 3 ]
	tap_ok $? "a trigger returning NULL: the feeder exits 3 within 20 s"
else
	tap_ok 1 "a trigger returning NULL: the feeder exits 3 within 20 s"
	diag "still running after 20 s; batch_failed lines: $(grep -c event=batch_failed "$E2E_TMP/feeder.log")" \
		"$(grep event=batch_failed "$E2E_TMP/feeder.log" | tail -n 2)"
	feeder_kill feeder
fi
check "event=database_config_error names 09000, the order and the trigger, with a hint to fix or drop it" \
	config_error_names_trigger
check "nothing of part 2 is acknowledged" cmp -s "$E2E_TMP/committed.part1" <(committed_offsets)
is "$(rows) $(quarantined)" "$rows_part1 $quarantined_part1" "nothing of part 2 is stored or quarantined"
tap_done
