#!/bin/bash
# 38-live-stream-one-session.t — a live stream's batches go through one
# database session; a backlog spreads over every session, and once it is
# read the partitions gather on one session again.
#
# Spread over every lane, a live stream's few messages per fetch become as
# many small transactions at once, each with its round trip, commit and
# WAL flush on the same cores, and the last of them waits for the others
# (p99 at 2,000 events/s: 10.8 ms with eight sessions, 8.1 with one, in
# bench/latency).  So the feeder sends every partition through its first
# session until that session, free again, holds a backlog's worth (1,000
# messages, or a whole batch when --batch-size is smaller), then spreads
# the partitions over all its sessions; it gathers them again once every
# session is quiet and no large batch went for a second (debug lines
# lanes_widened and lanes_narrowed).  Throughout, each order is stored
# exactly once.
#
# With --db-sessions 4 and --batch-size 200 on 8 partitions: a trickle
# (one message per partition at a time, each waited for), then a backlog of
# about 12,000 messages, then a trickle again.  On a feeder that always
# spreads, the trickle's batches name sessions 0 to 3 and no lanes_* line
# is logged.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-38
PARTITIONS=8
FEEDER_ARGS=(--db-sessions 4 --batch-size 200 --log-level debug -X auto.commit.interval.ms=200)
plan 13

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

# sessions_from LINE — the sessions named by batch_committed after line LINE
# of the feeder's log, sorted, unique, on one line
sessions_from() {
	tail -n +"$(($1 + 1))" "$E2E_TMP/feeder.log" | grep 'event=batch_committed' |
		sed -nE 's/.* session=([0-9]+)( .*|$)/\1/p' | sort -un | tr '\n' ' '
}
log_lines() {
	wc -l <"$E2E_TMP/feeder.log"
}
# trickle FIRST LAST — message n of every partition, for n in FIRST..LAST,
# each round stored before the next is produced
trickle() {
	local n
	for ((n = $1; n <= $2; n++)); do
		produce_part "$n" "$n" || return 1
		db_wait_caught_up "$GROUP" 30 || return 1
	done
}

feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder joins its group" \
	ro_wait_until 60 grep -q 'event=partitions_assigned' "$E2E_TMP/feeder.log"

mark=$(log_lines)
check "a trickle of 6 rounds, one message per partition each, is stored" trickle 1 6
is "$(sessions_from "$mark")" "0 " "the trickle's batches all went through the first session"
is "$(log_events feeder lanes_widened | wc -l)" 0 "the trickle did not spread the partitions"

mark=$(log_lines)
produce_part 7 1500 || bail "kcat could not produce"
check "a backlog of about 12,000 messages is stored" db_wait_caught_up "$GROUP" 120
check "the backlog spread the partitions (lanes_widened sessions=4)" \
	grep -q 'event=lanes_widened sessions=4' "$E2E_TMP/feeder.log"
is "$(sessions_from "$mark")" "0 1 2 3 " "the backlog's batches went through all four sessions"

check "once every session is quiet, the partitions gather again (lanes_narrowed sessions=1)" \
	ro_wait_until 10 grep -q 'event=lanes_narrowed sessions=1' "$E2E_TMP/feeder.log"
mark=$(log_lines)
trickle 1501 1503 || bail "the second trickle was not stored"
is "$(sessions_from "$mark")" "0 " "the second trickle's batches all went through the first session"

feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
check_exact_contents
tap_done
