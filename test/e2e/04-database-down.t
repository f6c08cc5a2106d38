#!/bin/bash
# 04-database-down.t — the database stops (pg_ctl stop -m immediate, i.e. a
# crash) mid-stream for several seconds: the feeder stays up, acknowledges
# nothing while the database is gone, and completes after the restart.
#
# Runs on a cluster of its own (test/lib/pg.sh), so stopping it harms no
# other suite.  "Acknowledges nothing": after a grace of one second (a batch
# committed just before the crash may still have its offset committed), the
# committed offsets are sampled throughout the outage and must not move;
# after the restart, every message below those offsets must be in the
# database — the ones committed before the crash survived it.  Then a
# second outage ends with SIGTERM: the feeder abandons its batch, exits 0
# and acknowledges nothing; a new feeder completes the stream.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-04
PARTITIONS=3
OUTAGE_SECONDS=8
FEEDER_ARGS=(--batch-size 3 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-max-ms 1000)
plan 23

DB_DIR= # set by pg_start
pg_start DB_DIR >&2 || bail "could not start a dedicated PostgreSQL cluster"
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on materialize_orders" \
	e2e_role_is_least_privilege

for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 2500
done
flush || bail "kcat could not produce"
total=$(expected_rows | wc -l)

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder gets a quarter through the stream" \
	ro_wait_until 60 rows_at_least $((total / 4))
check "pg_ctl stop -m immediate mid-stream" pg_ctl_as stop -m immediate -w
stopped_at=$SECONDS
diag "database stopped; the feeder had committed up to: $(kafka_committed "$GROUP" "$E2E_TOPIC" | awk '{ printf "[%s] @%s/%s ", $2, $3, $4 }')"

# more messages arrive while the database is down
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 2501 2700
done
flush || bail "kcat could not produce"

sleep 1 # grace: the offsets of batches committed before the crash
kafka_committed "$GROUP" "$E2E_TOPIC" >"$E2E_TMP/committed.during"
moved=0
alive=0
while ((SECONDS < stopped_at + OUTAGE_SECONDS)); do
	feeder_alive feeder || alive=1
	kafka_committed "$GROUP" "$E2E_TOPIC" >"$E2E_TMP/committed.now"
	if ! cmp -s "$E2E_TMP/committed.during" "$E2E_TMP/committed.now"; then
		moved=1
		diag "committed offsets moved while the database was down:" \
			"$(cat "$E2E_TMP/committed.during")" "to" "$(cat "$E2E_TMP/committed.now")"
		break
	fi
	sleep 0.5
done
is "$alive" 0 "the feeder stays up while the database is down for $OUTAGE_SECONDS s"
is "$moved" 0 "no offset is committed while the database is down"
check "the feeder is still running at the end of the outage" feeder_alive feeder

check "PostgreSQL restarts" pg_ctl_as start -w
check "the feeder completes after the restart: committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 120
check "the feeder is still the same process" feeder_alive feeder
check "everything acknowledged before or during the outage is in the database" \
	check_below_committed "$GROUP" "$E2E_TMP/committed.during"
check_exact_contents

# --- SIGTERM while the database is down: the batch in flight is abandoned,
# nothing acknowledged, exit 0 without waiting for the database
check "pg_ctl stop -m immediate again" pg_ctl_as stop -m immediate -w
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 2701 2800
done
flush || bail "kcat could not produce"
sleep 2 # let the feeder fetch the new messages and fail on them
kafka_committed "$GROUP" "$E2E_TOPIC" >"$E2E_TMP/committed.second"
feeder_stop feeder 20
is "$?" 0 "SIGTERM with the database down: the feeder exits 0 within 20 s"
check "the counters show the retries of the outages" \
	grep -Eq 'event=stats .*retries=[1-9]' "$E2E_TMP/feeder.log"
check "nothing was acknowledged at that shutdown" \
	cmp -s "$E2E_TMP/committed.second" <(kafka_committed "$GROUP" "$E2E_TOPIC")
check "PostgreSQL restarts again" pg_ctl_as start -w
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "a new feeder completes the abandoned messages" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
check_exact_contents
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
