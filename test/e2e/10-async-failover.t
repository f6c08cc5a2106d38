#!/bin/bash
# 10-async-failover.t — a failover to an asynchronous standby that had
# fallen behind: the promoted standby lacks batches the crashed primary had
# committed (and Kafka had been told of); the feeder, running all along with
# a multi-host DSN (target_session_attrs=read-write), reconnects to it, sees
# its positions behind its own, reads the lost events again from Kafka and
# ends with exactly the contents a database that never failed would hold.
#
# A primary of the suite's own (test/lib/pg.sh) and a real standby made
# with pg_basebackup -R, streaming asynchronously.  The standby replays the
# first part of the stream, then stops (it falls behind); the primary
# commits the second part, then stops with -m immediate (a crash); a third
# part arrives while no host accepts writes; the standby starts (still
# without the second part) and is promoted.  The feeder logs one
# event=positions_behind line per partition with the promoted database's
# position, its own and the gap, and counts the gaps in /metrics.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-10
PARTITIONS=3
FEEDER_ARGS=(--batch-size 10 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-max-ms 1000 --metrics-listen 127.0.0.1:0)
plan 24

# replication_state — application, state and mode of the primary's standbys
replication_state() {
	pg_query_at "$PRIMARY_DIR" postgres "SELECT state || ' ' || sync_state FROM pg_stat_replication"
}

PRIMARY_DIR= # set by pg_start
pg_start PRIMARY_DIR >&2 || bail "could not start the primary"
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on the functions the feeder calls" \
	e2e_role_is_least_privilege

STANDBY_DIR= # set by pg_start_standby
pg_start_standby "$PRIMARY_DIR" STANDBY_DIR >&2 # in this shell: the exit handler stops it
tap_ok $? "a standby made with pg_basebackup -R starts"
if [ -z "$STANDBY_DIR" ] || [ ! -s "$STANDBY_DIR/port" ]; then
	bail "no standby"
fi
check "it has replayed the feeder's database and role" pg_wait_replayed "$PRIMARY_DIR" "$STANDBY_DIR" 60
is "$(replication_state)" "streaming async" "the standby streams, asynchronously"

P1=$(cat "$PRIMARY_DIR/port")
P2=$(cat "$STANDBY_DIR/port")
E2E_DSN="host=127.0.0.1,127.0.0.1 port=$P1,$P2 dbname=$E2E_DB user=$E2E_ROLE password=$E2E_PASSWORD target_session_attrs=read-write connect_timeout=5"

# --- part 1, replayed by the standby
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 1000
done
flush || bail "kcat could not produce"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "part 1: the primary's positions reach the end offsets" db_wait_caught_up "$GROUP" 60
check "part 1: the standby has replayed it" pg_wait_replayed "$PRIMARY_DIR" "$STANDBY_DIR" 60

# --- the standby falls behind; the primary commits part 2, then crashes
check "the standby stops" pg_stop "$STANDBY_DIR"
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1001 2000
done
flush || bail "kcat could not produce"
check "part 2: the primary's positions reach the end offsets" db_wait_caught_up "$GROUP" 60
check "part 2: Kafka's committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
db_positions "$GROUP" >"$E2E_TMP/positions.primary"
check "the primary stops with -m immediate" pg_ctl_as stop -m immediate -w

# --- part 3 while no host accepts writes; the standby starts and is promoted
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 2001 2200
done
flush || bail "kcat could not produce"
pg_start STANDBY_DIR >&2 # and points sql() at it
tap_ok $? "the standby starts again, alone"
is "$(sql "SELECT pg_is_in_recovery()")" t "it is still a standby"
db_positions "$GROUP" >"$E2E_TMP/positions.standby"
diag "positions: primary $(tr '\n' ';' <"$E2E_TMP/positions.primary") standby $(tr '\n' ';' <"$E2E_TMP/positions.standby")"
# shellcheck disable=SC2016 # $3 is awk's field
check "it is behind the crashed primary on every partition (asynchronous replication lost part 2)" \
	awk 'FILENAME == ARGV[1] { pos[$2] = $3; next } !($2 in pos) || $3 >= pos[$2] { bad = 1 } END { exit bad || NR == FNR }' \
	"$E2E_TMP/positions.primary" "$E2E_TMP/positions.standby"
sleep 2
check "the feeder stays up while no host accepts writes" feeder_alive feeder
check "the standby is promoted" pg_promote "$STANDBY_DIR" 60

check "the feeder reconnects to the promoted standby and refills: its positions reach the end offsets" \
	db_wait_caught_up "$GROUP" 90
check "the feeder is the same process as before the failover" feeder_alive feeder
# shellcheck disable=SC2016 # $2, $3 are awk's fields
expected_behind=$(awk 'FILENAME == ARGV[1] { pos[$2] = $3; next } { print $2, $3, pos[$2], pos[$2] - $3 }' \
	"$E2E_TMP/positions.primary" "$E2E_TMP/positions.standby")
is "$(behind_lines)" "$expected_behind" \
	"event=positions_behind per partition: the promoted database's position, the feeder's, the gap"
gaps=$(awk '{ s += $4 } END { print s + 0 }' <<<"$expected_behind")
is "$(feeder_metric feeder positions_behind_offsets_total)" "$gaps" \
	"/metrics counts the $gaps offsets read again (positions_behind_offsets_total)"
check "Kafka's committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check_exact_contents
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
