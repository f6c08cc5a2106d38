#!/bin/bash
# 08-second-signal.t — a second SIGTERM/SIGINT ends the feeder at once.
#
# With every broker down, the first SIGTERM starts a shutdown that waits on
# Kafka (the synchronous commit of stored offsets, leaving the group); an
# operator who does not want to wait sends a second signal, and the feeder
# exits 1 at once.  Nothing is lost: what the database committed but Kafka
# never heard of is delivered again to the next feeder and absorbed as
# duplicates.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-08
FEEDER_ARGS=(--batch-size 50 --batch-wait-ms 20)
plan 9

kafka_start 1 "$E2E_TOPIC:2" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

mixed_stream 0 1 300
mixed_stream 1 1 300
flush || bail "kcat could not produce"
total=$(expected_rows | wc -l)

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder materializes the stream" ro_wait_until 60 rows_at_least "$total"

check "every broker goes down" kafka_broker_down -1
sleep 1
kill -TERM "${FEEDER_PIDS[feeder]}"
sleep 2
check "after the first SIGTERM the feeder is still shutting down (Kafka is away)" \
	feeder_alive feeder
kill -INT "${FEEDER_PIDS[feeder]}"
feeder_wait_exit feeder 3
is "${FEEDER_RC:-timeout}" 1 "the second signal ends it at once with status 1"

check "the brokers come back" kafka_broker_up -1
feeder_start again "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "a new feeder catches up" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
feeder_stop again
check_exact_contents
tap_done
