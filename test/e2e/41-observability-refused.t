#!/bin/bash
# 41-observability-refused.t — observability never
# stops the data path.  The high watermarks a batch records
# (record_high_watermarks) and the member's status report (report_feeder)
# are documented as optional: a DBA may revoke them.  Revoked while the
# feeder runs, the next batch's record_high_watermarks failed with 42501,
# the whole batch was classed a permission error and the feeder exited 3.
#
# Two partitions, a mixed stream; the feeder catches up recording its high
# watermarks and reporting itself.  Then EXECUTE on both functions is
# revoked and more messages arrive: the feeder lives on and stores exactly
# the stream; the refusal of record_high_watermarks is logged once
# (event=high_watermarks_off with its SQLSTATE) and counted
# (watermarks_refused_total); the failed status reports are logged
# (status_report_failed) and counted (status_report_failures_total), and
# the feeder stays healthy.  Restarted without
# the grants, it starts and goes on as well.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders-obs
GROUP=e2e-41
PARTITIONS=2
ARGS=(--batch-size 20 --batch-wait-ms 20 --status-interval 1 --metrics-listen 127.0.0.1:0
	-X auto.commit.interval.ms=200)
plan 15

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

produce_part 1 100 || bail "kcat could not produce"
feeder_start f "$E2E_TOPIC" "$GROUP" "${ARGS[@]}"
check "the feeder catches up with the grants" db_wait_caught_up "$GROUP" 120
is "$(sql "SELECT count(*) FROM received_orders.received_orders_positions
            WHERE consumer_group = '$GROUP' AND high_watermark IS NOT NULL")" $PARTITIONS \
	"the batches recorded their partitions' high watermarks"

sql "REVOKE EXECUTE ON FUNCTION received_orders.record_high_watermarks(text,text,text[],integer[],bigint[]),
	         received_orders.report_feeder(text,text,text,integer,text,timestamp with time zone,text,text[],integer[],bigint[],text,timestamp with time zone,interval,interval)
	     FROM \"$E2E_ROLE\"" >/dev/null || bail "could not revoke"
produce_part 101 250 || bail "kcat could not produce"
check "EXECUTE revoked on both: the feeder catches up on the new messages" db_wait_caught_up "$GROUP" 120
check "the feeder still runs (it exited 3 before)" feeder_alive f
check_exact_contents
is "$(log_events f high_watermarks_off | grep -c 'sqlstate=42501')" 1 \
	"the refusal of record_high_watermarks is logged once, with its SQLSTATE"
check "watermarks_refused_total counts it" test "$(feeder_metric f watermarks_refused_total)" -ge 1
check "the failed status reports are logged" ro_wait_until 30 eval "log_events f status_report_failed | grep -q sqlstate=42501"
check "status_report_failures_total counts them" ro_wait_until 30 eval 'test "$(feeder_metric f status_report_failures_total)" -ge 1'
is "$(log_events f database_config_error | wc -l)" 0 "no configuration error was logged"
check "/healthz still answers 200" feeder_health_is f 200
feeder_stop f
is "$?" 0 "SIGTERM: exit 0"

# a restart without the grants: the connection's check leaves them out
produce_part 251 300 || bail "kcat could not produce"
feeder_start f "$E2E_TOPIC" "$GROUP" "${ARGS[@]}"
check "restarted without the grants, the feeder catches up" db_wait_caught_up "$GROUP" 120
feeder_stop f
tap_done
