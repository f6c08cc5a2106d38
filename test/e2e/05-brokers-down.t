#!/bin/bash
# 05-brokers-down.t — Kafka brokers go away for several seconds mid-stream
# (ro-dev-kafka's "down ID": connections refused, leadership unchanged, so
# the partitions a down broker leads cannot be fetched): one broker of
# three for a while; the same broker with its partitions' leadership and
# the group coordinator moved to another (a failover); then every broker.
# The feeder stays up and completes; nothing is acknowledged ahead of the
# database; the contents are exact.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-05
PARTITIONS=6
OUTAGE_SECONDS=6
FEEDER_ARGS=(--batch-size 3 --batch-wait-ms 20 -X auto.commit.interval.ms=200)
plan 21

# feeder_stays_up SECONDS — poll for SECONDS: the feeder never exits
feeder_stays_up() {
	local until=$((SECONDS + $1))
	while ((SECONDS < until)); do
		feeder_alive feeder || return 1
		sleep 0.2
	done
}

# failover_to ID — broker ID leads every partition and coordinates the group
failover_to() {
	local p
	for ((p = 0; p < PARTITIONS; p++)); do
		kafka_command "leader $E2E_TOPIC $p $1" || return 1
	done
	kafka_command "coordinator group $GROUP $1"
}

kafka_start 3 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on materialize_orders" \
	e2e_role_is_least_privilege

for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 1500
done
flush || bail "kcat could not produce"
total=$(expected_rows | wc -l)

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder gets a fifth through the stream" \
	ro_wait_until 60 rows_at_least $((total / 5))

# one broker of three; meanwhile a producer sends more (what goes to the
# partitions broker 1 leads waits in kcat until it is back)
check "broker 1 goes down" kafka_broker_down 1
diag "broker 1 down at $(rows) of $total orders"
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1501 1800
done
flush 2>"$E2E_TMP/producer.log" &
producer=$!
check "the feeder stays up while broker 1 is down for $OUTAGE_SECONDS s" \
	feeder_stays_up $OUTAGE_SECONDS
check "broker 1 comes back" kafka_broker_up 1
wait "$producer"
is "$?" 0 "the producer delivers what waited for broker 1"
check "every message below the committed offsets is stored or quarantined" \
	check_below_committed "$GROUP"

# failover: broker 1 goes down again, and this time the leadership of every
# partition and the group's coordinator move to broker 2, as a real
# cluster would do; the feeder must follow them and complete without it
check "broker 1 goes down again" kafka_broker_down 1
check "leaders and the group coordinator move to broker 2" failover_to 2
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1801 2100
done
flush 2>"$E2E_TMP/producer.log"
is "$?" 0 "the producer delivers to the new leaders"
check "with broker 1 still down, the feeder completes on the new leaders" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 90
check "broker 1 comes back" kafka_broker_up 1

# more messages, then every broker
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 2101 2400
done
flush || bail "kcat could not produce"
check "every broker goes down" kafka_broker_down -1
diag "every broker down at $(rows) orders"
check "the feeder stays up while every broker is down for $OUTAGE_SECONDS s" \
	feeder_stays_up $OUTAGE_SECONDS
check "every broker comes back" kafka_broker_up -1

check "the feeder completes: committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 120
check "the feeder is still the same process" feeder_alive feeder
check_exact_contents
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
