#!/bin/bash
# 24-idle-failover-default-options.t — the asynchronous failover of 10, but
# the stream is idle through it and the feeder runs with default options:
# no --metrics-listen, the default number of database sessions (read from
# the feeder's starting line, not assumed).  Nothing but the
# feeder's own periodic work can notice that its sessions were lost: no
# message arrives after the crash, none is produced after the promotion.
#
# A primary and an asynchronous standby (pg_basebackup -R); a feeder with a
# multi-host DSN (target_session_attrs=read-write) on eight partitions (the default --db-sessions), so
# every session has partitions.  The standby replays part 1 and stops; the
# primary commits part 2 and crashes (-m immediate); the standby starts
# alone, without part 2, and is promoted.  Then, with no new message,
# within 30 s: the feeder has logged the loss of each session
# (db_connection_lost session=0, 1, ...) and reconnected each
# (db_reconnected), logged event=positions_behind for every partition (the
# partitions of every session: the line names the session), read part 2
# again from Kafka, and the promoted database holds exactly what a database
# that never failed would hold.  No batch failed on the way: each lost
# session was reopened and its positions checked before anything was sent
# on it.  Before the fix the idle check ran only inside the metrics
# refresh: this feeder noticed nothing, part 2 stayed missing.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-24
PARTITIONS=8 # the default --db-sessions (ADR 0003): one partition for each session
REFILL_SECONDS=30
plan 29

# behind_sessions — the sessions named by the positions_behind lines
behind_sessions() {
	log_events feeder positions_behind | sed -nE 's/.* session=([0-9]+)( .*|$)/\1/p' | sort -un | tr '\n' ' '
}

# event_sessions EVENT — the sessions named by the feeder's EVENT lines
event_sessions() {
	log_events feeder "$1" | sed -nE 's/.* session=([0-9]+)( .*|$)/\1/p' | sort -un | tr '\n' ' '
}

# role_sessions_are N — the feeder's role has N batch sessions on the
# primary (the status report's own session left out)
role_sessions_are() {
	[[ $(sql "SELECT count(*) FROM pg_stat_activity WHERE $(batch_sessions_where)") == "$1" ]]
}

PRIMARY_DIR= # set by pg_start
pg_start PRIMARY_DIR >&2 || bail "could not start the primary"
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

STANDBY_DIR= # set by pg_start_standby
pg_start_standby "$PRIMARY_DIR" STANDBY_DIR >&2 # in this shell: the exit handler stops it
tap_ok $? "a standby made with pg_basebackup -R starts"
if [ -z "$STANDBY_DIR" ] || [ ! -s "$STANDBY_DIR/port" ]; then
	bail "no standby"
fi
check "it has replayed the feeder's database and role" pg_wait_replayed "$PRIMARY_DIR" "$STANDBY_DIR" 60
is "$(pg_query_at "$PRIMARY_DIR" postgres "SELECT state || ' ' || sync_state FROM pg_stat_replication")" \
	"streaming async" "the standby streams, asynchronously"

P1=$(cat "$PRIMARY_DIR/port")
P2=$(cat "$STANDBY_DIR/port")
E2E_DSN="host=127.0.0.1,127.0.0.1 port=$P1,$P2 dbname=$E2E_DB user=$E2E_ROLE password=$E2E_PASSWORD target_session_attrs=read-write connect_timeout=5"

# --- part 1, replayed by the standby; the feeder with default options
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 600
done
flush || bail "kcat could not produce"
feeder_start feeder "$E2E_TOPIC" "$GROUP"
check "part 1: the primary's positions reach the end offsets" db_wait_caught_up "$GROUP" 60
check "part 1: the standby has replayed it" pg_wait_replayed "$PRIMARY_DIR" "$STANDBY_DIR" 60
# the default, as the feeder says it; every session has a partition
SESSIONS=$(sed -nE 's/.* event=starting .* db_sessions=([0-9]+).*/\1/p' "$E2E_TMP/feeder.log" | head -n 1)
ALL_SESSIONS="$(seq -s ' ' 0 $((${SESSIONS:-1} - 1))) "
check "the feeder starts with its default database sessions (${SESSIONS:-none found}), no more than the partitions" \
	test "${SESSIONS:-0}" -ge 2 -a "${SESSIONS:-0}" -le "$PARTITIONS"
check "the feeder has its default $SESSIONS database sessions open" ro_wait_until 10 role_sessions_are "$SESSIONS"
check "it serves no metrics (no --metrics-listen)" log_has_no "event=metrics_listening" feeder

# --- the standby falls behind; the primary commits part 2, then crashes
check "the standby stops" pg_stop "$STANDBY_DIR"
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 601 1200
done
flush || bail "kcat could not produce"
check "part 2: the primary's positions reach the end offsets" db_wait_caught_up "$GROUP" 60
check "part 2: Kafka's committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
db_positions "$GROUP" >"$E2E_TMP/positions.primary"
kafka_end_offsets "$E2E_TOPIC" >"$E2E_TMP/ends.before"
check "the primary stops with -m immediate while the stream is idle" pg_ctl_as stop -m immediate -w

# --- the standby starts alone, without part 2, and is promoted; nothing is
# produced from here on
pg_start STANDBY_DIR >&2 # and points sql() at it
tap_ok $? "the standby starts again, alone"
db_positions "$GROUP" >"$E2E_TMP/positions.standby"
diag "positions: primary $(tr '\n' ';' <"$E2E_TMP/positions.primary") standby $(tr '\n' ';' <"$E2E_TMP/positions.standby")"
# shellcheck disable=SC2016 # $3 is awk's field
check "it is behind the crashed primary on every partition (asynchronous replication lost part 2)" \
	awk 'FILENAME == ARGV[1] { pos[$2] = $3; next } !($2 in pos) || $3 >= pos[$2] { bad = 1 } END { exit bad || NR == FNR }' \
	"$E2E_TMP/positions.primary" "$E2E_TMP/positions.standby"
sleep 2
check "the feeder stays up while no host accepts writes" feeder_alive feeder
check "the standby is promoted" pg_promote "$STANDBY_DIR" 60
promoted_at=$SECONDS

check "with no new message, within $REFILL_SECONDS s of the promotion the promoted database's positions reach the end offsets" \
	db_wait_caught_up "$GROUP" "$REFILL_SECONDS"
diag "$((SECONDS - promoted_at)) s after the promotion; the feeder's database and positions lines:" \
	"$(grep -E 'event=(db_|positions_|batch_failed)' "$E2E_TMP/feeder.log" | cut -c1-240 | tail -n 12)"
check "no message was produced after the crash (the end offsets are those before it)" \
	cmp -s "$E2E_TMP/ends.before" <(kafka_end_offsets "$E2E_TOPIC")
check "the feeder is the same process as before the failover" feeder_alive feeder
is "$(event_sessions db_connection_lost)" "$ALL_SESSIONS" \
	"every idle session was watched: event=db_connection_lost names sessions $ALL_SESSIONS"
is "$(event_sessions db_reconnected)" "$ALL_SESSIONS" "every session reconnected: event=db_reconnected names sessions $ALL_SESSIONS"
# shellcheck disable=SC2016 # $2, $3 are awk's fields
expected_behind=$(awk 'FILENAME == ARGV[1] { pos[$2] = $3; next } { print $2, $3, pos[$2], pos[$2] - $3 }' \
	"$E2E_TMP/positions.primary" "$E2E_TMP/positions.standby")
is "$(behind_lines)" "$expected_behind" \
	"event=positions_behind per partition: the promoted database's position, the feeder's, the gap"
is "$(behind_sessions)" "$ALL_SESSIONS" "the partitions of every session were refilled (positions_behind names sessions $ALL_SESSIONS)"
is "$(log_events feeder batch_failed | wc -l)" 0 \
	"no batch failed: each lost session was reopened and checked before anything was sent on it"
check "Kafka's committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check_exact_contents
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
