#!/bin/bash
# 23-db-sessions.t — one feeder with several database sessions
# (--db-sessions): partitions spread over the sessions, each session runs
# its batches while the others run theirs, and nothing of the delivery
# contract changes.
#
# First an idle feeder with --db-sessions 3 on an empty topic: all three
# sessions open before any message; on a topic of one partition, one; on a
# topic of three, three, and fewer once a second member of the group took
# some of its partitions (a lane without partitions closes its session).  Then a stream of its own on 6
# partitions with --db-sessions 3: every session opens, every session commits batches (the debug line
# batch_committed names its session), every valid order lands exactly
# once, the offsets reach the end, and a crash of the database mid-stream
# (all three sessions fail, retry and reconnect) loses and doubles
# nothing.  Then the suites whose scenarios stress the contract run again
# as they are, with RO_E2E_FEEDER_ARGS="--db-sessions 3" added to every
# feeder they start: the stream (01), kill -9 loops (03), the database
# down and SIGTERM during the outage (04), two feeders in one group with
# rebalances (06), a restore that lost commits (09), paused partitions
# across rebalances (17) and the size-caused split (18).  Their assertions
# are repeated here, prefixed with the suite's name.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-23
PARTITIONS=6
SESSIONS=3
RERUN=(01-stream-exactly-once 03-kill-9-random 04-database-down 06-two-feeders-one-group
	09-restore-refills 17-paused-partitions-rebalance 18-size-caused-split)
FEEDER_ARGS=(--db-sessions "$SESSIONS" --batch-size 50 --log-level debug
	-X auto.commit.interval.ms=200 --retry-backoff-max-ms 1000)

# --- the suite's own scenario, on a cluster of its own (it crashes it)
DB_DIR= # set by pg_start
pg_start DB_DIR >&2 || bail "could not start a dedicated PostgreSQL cluster"
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" "quiet:3" "single:1" "three:$SESSIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 1500
done
flush || bail "kcat could not produce"
total=$(expected_rows | wc -l)

# role_sessions_are N — the feeders' role has N batch sessions (the status
# report's own session left out)
role_sessions_are() {
	[[ $(sql "SELECT count(*) FROM pg_stat_activity WHERE $(batch_sessions_where)") == "$1" ]]
}

# Every session opens while the feeder is idle, before any message: a lane
# that opened its session with its first batch held the main thread while
# it connected, after waiting for every running batch.
feeder_start quiet quiet "$GROUP-quiet" "${FEEDER_ARGS[@]}"
tap_cmd "a feeder on an empty topic joins its group" \
	ro_wait_until 60 grep -q 'event=partitions_assigned' "$E2E_TMP/quiet.log"
tap_cmd "--db-sessions $SESSIONS: all $SESSIONS sessions are open before any message" \
	ro_wait_until 10 role_sessions_are "$SESSIONS"
is "$(grep -c 'event=batch_committed' "$E2E_TMP/quiet.log")" 0 "no batch ran on the empty topic"
feeder_stop quiet
is "$?" 0 "SIGTERM: the idle feeder exits 0"
tap_cmd "its sessions are closed" ro_wait_until 10 role_sessions_are 0

# A lane without partitions opens no session: one partition, one session.
feeder_start single single "$GROUP-single" "${FEEDER_ARGS[@]}"
tap_cmd "a feeder on a topic of one partition joins its group" \
	ro_wait_until 60 grep -q 'event=partitions_assigned' "$E2E_TMP/single.log"
sleep 2
tap_cmd "--db-sessions $SESSIONS on one partition: one session" role_sessions_are 1
feeder_stop single
is "$?" 0 "SIGTERM: that feeder exits 0"
tap_cmd "its session is closed" ro_wait_until 10 role_sessions_are 0

# A lane whose partitions a rebalance took closes its session: alone on a
# topic of $SESSIONS partitions a feeder opens $SESSIONS; once a second
# member (one session) joins, the first keeps at most its first session
# and those of the lanes of its partitions (range or round robin: 2 of 3
# partitions in at most 2 lanes, or 1), so the role has 3 sessions, not
# $SESSIONS + 1.
feeder_start shared three "$GROUP-three" "${FEEDER_ARGS[@]}"
tap_cmd "alone on $SESSIONS partitions, a feeder opens $SESSIONS sessions" \
	ro_wait_until 60 role_sessions_are "$SESSIONS"
feeder_start second three "$GROUP-three" "${FEEDER_ARGS[@]}" --db-sessions 1
tap_cmd "a second member of the group joins" \
	ro_wait_until 60 grep -q 'event=partitions_assigned' "$E2E_TMP/second.log"
tap_cmd "after the rebalance the first feeder closed the sessions its partitions no longer use: 3 sessions in all" \
	ro_wait_until 30 role_sessions_are 3
tap_cmd "and said so (db_session_closed)" grep -q 'event=db_session_closed' "$E2E_TMP/shared.log"
feeder_stop second
is "$?" 0 "SIGTERM: the second member exits 0"
tap_cmd "alone again, the first feeder reopens the sessions of its partitions' lanes" \
	ro_wait_until 60 role_sessions_are "$SESSIONS"
feeder_stop shared
is "$?" 0 "SIGTERM: the first member exits 0"
tap_cmd "their sessions are closed" ro_wait_until 10 role_sessions_are 0

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
tap_cmd "--db-sessions $SESSIONS: the feeder gets a fifth through the stream" \
	ro_wait_until 60 rows_at_least $((total / 5))
tap_cmd "--db-sessions $SESSIONS: $SESSIONS sessions of the feeder's role in pg_stat_activity" \
	ro_wait_until 30 role_sessions_are "$SESSIONS"
tap_cmd "pg_ctl stop -m immediate mid-stream" pg_ctl_as stop -m immediate -w
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1501 1700
done
flush || bail "kcat could not produce"
sleep 3
tap_cmd "the feeder stays up while the database is down" feeder_alive feeder
tap_cmd "PostgreSQL restarts" pg_ctl_as start -w
tap_cmd "the feeder completes: committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 120
check_exact_contents
used=$(grep -o 'event=batch_committed .*session=[0-9]*' "$E2E_TMP/feeder.log" |
	sed -E 's/.*session=([0-9]+)$/\1/' | sort -u | tr '\n' ' ')
is "$used" "0 1 2 " "every session committed batches (sessions seen in batch_committed)"
# a session lost mid-batch fails that batch and retries it; one lost
# between batches is found by the idle watch and reopened: either way
# the other sessions than the first came back through the crash
tap_cmd "the sessions retried through the crash" \
	grep -Eq 'event=(batch_failed|db_connection_lost|db_reconnected) .*session=[12]' "$E2E_TMP/feeder.log"
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_cmd "after shutdown the committed offsets still equal the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 5

# --- the contract's suites again, with every feeder on $SESSIONS sessions
for name in "${RERUN[@]}"; do
	out=$E2E_TMP/$name.tap
	status=0
	RO_E2E_FEEDER_ARGS="--db-sessions $SESSIONS" bash "$(dirname "$0")/$name.t" \
		>"$out" 2>"$E2E_TMP/$name.err" || status=$?
	while IFS= read -r line; do
		if [[ $line =~ ^ok\ [0-9]+\ (-\ )?(.*)$ ]]; then
			tap_ok 0 "$name: ${BASH_REMATCH[2]}"
		elif [[ $line =~ ^not\ ok\ [0-9]+\ (-\ )?(.*)$ ]]; then
			tap_ok 1 "$name: ${BASH_REMATCH[2]}"
		fi
	done <"$out"
	tap_count "$out" "$status" >/dev/null
	ran=$(grep -Ec '^(not )?ok [0-9]+' "$out")
	planned=$(sed -nE 's/^1\.\.([0-9]+).*/\1/p' "$out")
	if [[ $status != 0 || -z $planned || $planned != "$ran" ]]; then
		tap_ok 1 "$name: ran to the end of its plan (exit $status, ran $ran of ${planned:-no plan})"
		tap_diag "$(tail -n 30 "$E2E_TMP/$name.err")"
	else
		tap_ok 0 "$name: ran to the end of its plan ($ran assertions)"
	fi
done
tap_plan "$TAP__NUMBER"
tap_done
