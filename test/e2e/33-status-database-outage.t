#!/bin/bash
# 33-status-database-outage.t — the status report across a database outage:
# a feeder reporting every second is running and healthy; the database
# stops (pg_ctl stop -m immediate) for a few seconds while the
# feeder stays up; once it is back, the member's row in
# received_orders.feeders carries the outage as its last error ("database
# unreachable: ...") with its time, the feeder logged its failed reports
# (event=status_report_failed) and went on, and the member is running and
# healthy again with every partition at lag 0.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

GROUP=e2e-33
E2E_TOPIC=orders-outage
PARTITIONS=2
plan 8

# healthy_running — the feeder's member row is healthy and running
healthy_running() {
	[ "$(sql "SELECT count(*) FROM received_orders.feeders
	           WHERE consumer_group = '$GROUP' AND healthy AND state = 'running'")" = 1 ]
}

# outage_recorded — the row carries the outage as its last error, after it began
outage_recorded() {
	[ "$(sql "SELECT count(*) FROM received_orders.feeders
	           WHERE consumer_group = '$GROUP' AND last_error LIKE 'database unreachable:%'
	             AND last_error_at >= to_timestamp($STOPPED_EPOCH) - interval '2 seconds'")" = 1 ]
}

# caught_up — every partition at lag 0 in consumer_lag
caught_up() {
	[ "$(sql "SELECT count(*) FROM received_orders.consumer_lag
	           WHERE consumer_group = '$GROUP' AND lag = 0 AND owner IS NOT NULL")" = $PARTITIONS ]
}

DB_DIR= # set by pg_start
pg_start DB_DIR >&2 || bail "could not start a dedicated PostgreSQL cluster"
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 300
done
flush || bail "kcat could not produce"
feeder_start feeder "$E2E_TOPIC" "$GROUP" --batch-size 20 --status-interval 1 \
	--retry-backoff-max-ms 1000
check "the feeder reports itself running and healthy" ro_wait_until 60 healthy_running
check "consumer_lag: every partition at lag 0" ro_wait_until 60 caught_up

STOPPED_EPOCH=$(date +%s)
check "pg_ctl stop -m immediate" pg_ctl_as stop -m immediate -w
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 301 400
done
flush || bail "kcat could not produce"
sleep 5
check "PostgreSQL restarts" pg_ctl_as start -w
check "after the outage the member's row carries it as last error, with its time" \
	ro_wait_until 60 outage_recorded
diag "$(sql "SELECT state || ' | ' || last_error || ' | ' || last_error_at FROM received_orders.feeders WHERE consumer_group = '$GROUP'")"
check "the feeder logged its failed reports and went on (same process)" \
	bash -c 'grep -q "event=status_report_failed" "$1" && kill -0 "$2"' _ "$E2E_TMP/feeder.log" "${FEEDER_PIDS[feeder]}"
check "the member is running and healthy again" ro_wait_until 60 healthy_running
check "and every partition is back at lag 0" ro_wait_until 120 caught_up
feeder_stop feeder
tap_done
