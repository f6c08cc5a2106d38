#!/bin/bash
# r08-database-stall.t — a database stall longer than max.poll.interval.ms
# (a lock held on the orders table for 25 s; the feeder runs with
# max.poll.interval.ms=10000) while messages keep coming: nothing is
# acknowledged ahead of the database meanwhile, the feeder is still a
# member afterwards (or rejoins) and goes on, nothing lost; the account.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"

PARTITIONS=3
E2E_TOPIC=r08-orders-$$
GROUP=r08-group-$$
plan 9

kr_cluster || bail "could not start Apache Kafka"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"

produce_part 1 300 || bail "kcat could not produce"
feeder_start f "$E2E_TOPIC" "$GROUP" --batch-size 50 -X max.poll.interval.ms=10000
check "the feeder consumes" db_wait_caught_up "$GROUP" 60

psql -X -q -d "$E2E_DB" -c "BEGIN; LOCK TABLE received_orders.received_orders IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(25); COMMIT" \
	>"$E2E_TMP/lock.out" 2>&1 &
locker=$!
sleep 1
produce_part 301 600 || bail "kcat could not produce"
ahead_during=
for ((i = 0; i < 20; i++)); do
	sleep 1
	a=$(acks_ahead "$GROUP" 2>/dev/null) && [ -n "$a" ] && ahead_during+="$a; "
done
wait $locker
is "$?" 0 "the lock was held 25 s (longer than max.poll.interval.ms)"
is "$ahead_during" "" "during the stall, no offset acknowledged ahead of the database"
check "the feeder is still running" feeder_alive f
diag "assignments during the run: $(grep -c 'event=partitions_assigned' "$E2E_TMP/f.log"); max.poll.interval.ms exceeded: $(grep -c 'MAX_POLL\|max.poll' "$E2E_TMP/f.log") line(s)"
check "after the stall the database reaches the end offsets" db_wait_caught_up "$GROUP" 90
kr_account "$GROUP" "database stall"
feeder_stop f
tap_done
