#!/bin/bash
# 11-kill-9-no-redelivery.t — kill -9 the feeder mid-batch several times:
# every restart resumes at the database's positions, so nothing already
# stored goes through the database again.  The feeder's own count of
# duplicates over all runs equals the duplicates the stream itself holds.
#
# The measure: with --log-level debug the feeder logs each batch it saw
# commit (event=batch_committed messages=N ... duplicate=D).  Summed over
# every run, messages= must equal the number of produced messages (none went
# through the database twice) and duplicate= the manifest's "dup" messages
# (the redelivered copies inside the stream).  A restart from Kafka's
# committed offsets, which lag the database (auto.commit.interval.ms=1000),
# would send the batches in between again and both sums would be higher;
# the suite shows that such a gap existed at every kill.
#
# The kill point: a session of the suite holds a SHARE lock on the positions
# table, so the feeder's next batch (BEGIN, the batch function, COMMIT, sent
# together) blocks on its positions upsert.  Every batch committed before it
# has been logged: the suite checks that the positions the database gained
# in this run equal the messages the run logged, then kills the feeder with
# -9 and releases the lock.  The orphaned batch, whose COMMIT the server had
# already received, may then commit without the feeder (a crash between the
# COMMIT and the offset commit: Kafka never hears of it) or be rolled back,
# as the server decides; the offsets it covered are read from the database's
# positions and its messages and duplicates, taken from the manifest, are
# added to the feeder's counts.  Each restart must log start_position ...
# source=database at the positions the database held after the kill.
# Last, the same kill on the stream's very last batch: the restarted feeder,
# with nothing to consume, must still bring Kafka's committed offsets up to
# the database's positions (lag tools and kcat read them).

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-11
ROUNDS=5
PARTITIONS=4
PER_PARTITION=2000
LOCKER=ro-e2e-11-locker
FEEDER_ARGS=(--batch-size 3 --batch-wait-ms 20 --log-level debug -X auto.commit.interval.ms=1000)
plan $((1 + 4 * ROUNDS + 1 + 4 + 5 + 2 + 3))

# run_sum FIELD — sum of FIELD= over the batch_committed lines of the
# feeder's latest run
run_sum() {
	awk -v f="$1" '/^--- start/ { s = 0 }
		/event=batch_committed / { v = $0; sub(".* " f "=", "", v); sub(/ .*/, "", v); s += v }
		END { print s + 0 }' "$E2E_TMP/feeder.log"
}

# positions_sum FILE — sum of the next offsets of a db_positions listing
positions_sum() {
	awk '{ s += $3 } END { print s + 0 }' "$1"
}

# run_accounted — the database's positions moved, since this run started,
# by exactly the messages this run logged as committed
run_accounted() {
	db_positions "$GROUP" >"$E2E_TMP/positions.locked"
	local moved=$(($(positions_sum "$E2E_TMP/positions.locked") - $(positions_sum "$E2E_TMP/positions.start")))
	local logged
	logged=$(run_sum messages)
	[ "$moved" -eq "$logged" ] && return 0
	diag "the positions moved by $moved in this run, the feeder logged $logged messages"
	return 1
}

# feeder_backend_waiting — the feeder's session waits for a lock (prints its PID)
feeder_backend_waiting() {
	local pid
	pid=$(sql "SELECT pid FROM pg_stat_activity
	            WHERE datname = current_database() AND $(batch_sessions_where) AND wait_event_type = 'Lock'")
	[ -n "$pid" ] && echo "$pid"
}

# feeder_sessions — how many batch sessions the feeder's role has open (the
# status report's left out, see batch_sessions_where in lib.sh)
feeder_sessions() {
	sql "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND $(batch_sessions_where)"
}

# no_feeder_session — the feeder's role has no session open
no_feeder_session() {
	[ "$(feeder_sessions)" -eq 0 ]
}

# lock_positions — in the background, a session holding a SHARE lock on the
# positions table (reads go on, the batch function's upsert waits) until
# unlock_positions cancels it; waits until the lock is held
lock_positions() {
	PGAPPNAME=$LOCKER psql -X -q -d "$E2E_DB" -c "BEGIN;
		LOCK TABLE received_orders.received_orders_positions IN SHARE MODE;
		SELECT pg_sleep(120)" >/dev/null 2>&1 &
	LOCKER_PID=$!
	ro_wait_until 10 locker_holds
}

# locker_holds — the locking session holds its lock
locker_holds() {
	[ "$(sql "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
	          WHERE a.application_name = '$LOCKER' AND l.granted AND l.mode = 'ShareLock'
	            AND l.relation = 'received_orders.received_orders_positions'::regclass")" -eq 1 ]
}

# unlock_positions — cancel the locking session (its transaction rolls back)
unlock_positions() {
	sql "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '$LOCKER'" >/dev/null
	wait "$LOCKER_PID" 2>/dev/null
	LOCKER_PID=
}

# range_counts FROM TO — "MESSAGES DUPS" of the offsets between the
# positions listed in file FROM and those in file TO (missing = 0), from
# the offsets map and the manifest
range_counts() {
	awk -F'[\t ]' '
		FILENAME == ARGV[1] { from[$2] = $3; next }
		FILENAME == ARGV[2] { to[$2] = $3; next }
		FILENAME == ARGV[3] { kind[$1] = $3; next }
		{ p = $1; o = $2; if (o >= from[p] + 0 && o < to[p] + 0) { n++; if (kind[$3] == "dup") d++ } }
		END { print n + 0, d + 0 }' "$1" "$2" "$E2E_MANIFEST" "$E2E_TMP/offsets.map"
}

# committed_at_positions — Kafka's committed offset of every partition the
# database holds a position for equals that position
committed_at_positions() {
	# shellcheck disable=SC2016 # $2, $3 are awk's fields
	awk 'FILENAME == ARGV[1] { c[$2] = $3; next }
	     c[$2] != $3 { print "partition " $2 ": Kafka committed " c[$2] ", the database at " $3; bad = 1 }
	     END { exit bad }' \
		<(kafka_committed "$GROUP" "$E2E_TOPIC") <(db_positions "$GROUP")
}

# orphan_ahead N — the orphaned last batch committed its N = 2 messages:
# the database has the whole stream, Kafka's committed offsets lack them
orphan_ahead() {
	[ "$1" -eq 2 ] && db_caught_up "$GROUP" && ! kafka_caught_up "$GROUP" "$E2E_TOPIC"
}

# start_expected — what each partition's start_position line must say,
# given the positions the database held at the start (positions.start)
start_expected() {
	local p off
	for ((p = 0; p < PARTITIONS; p++)); do
		off=$(awk -v p=$p '$2 == p { print $3 }' "$E2E_TMP/positions.start")
		if [ -n "$off" ]; then
			echo "$p $off database"
		elif [ -s "$E2E_TMP/positions.start" ]; then
			echo "$p earliest earliest"
		else
			echo "$p committed kafka"
		fi
	done
}

# start_positions — "PARTITION OFFSET SOURCE" of the first start_position
# line of each partition in the feeder's latest run
start_positions() {
	awk '/^--- start/ { delete seen }
	     /event=start_position / {
		p = $0; sub(/.* partition=/, "", p); sub(/ .*/, "", p)
		o = $0; sub(/.* offset=/, "", o); sub(/ .*/, "", o)
		s = $0; sub(/.* source=/, "", s); sub(/ .*/, "", s)
		if (!(p in seen)) seen[p] = p " " o " " s
	     }
	     END { for (p in seen) print seen[p] }' "$E2E_TMP/feeder.log" | sort -n
}

# starts_logged — the latest run logged a start for every partition
starts_logged() {
	[ "$(start_positions | wc -l)" -eq "$PARTITIONS" ]
}

LOCKER_PID=
ro_on_exit '[ -z "$LOCKER_PID" ] || kill "$LOCKER_PID" 2>/dev/null'
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on the functions the feeder calls" \
	e2e_role_is_least_privilege

for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 $PER_PARTITION
done
flush || bail "kcat could not produce"
kafka_offsets_map "$E2E_TOPIC" >"$E2E_TMP/offsets.map"
total=$(expected_rows | wc -l)
orphan_messages=0
orphan_dups=0
ahead=0
kills_with_gap=0

for ((round = 1; round <= ROUNDS; round++)); do
	db_positions "$GROUP" >"$E2E_TMP/positions.start"
	feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
	if ((round == 1)); then
		tap_ok 0 "round 1: (the database holds no position yet; start lines checked from round 2)"
	else
		# the group first waits for the killed member's session to time out
		ro_wait_until 30 starts_logged
		is "$(start_positions)" "$(start_expected)" \
			"round $round: every partition starts where the database's position is (source=database)"
	fi
	now=$(rows)
	# every round kills the feeder mid-stream, the first too: a feeder that
	# joins at once (the mock holds no first join) may read the whole
	# stream within a few seconds, and a kill after it leaves no gap
	if ((now >= total)); then
		delay=$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.5 + 3 * r / 32767 }')
		sleep "$delay"
		check "round $round: the feeder still runs $delay s after the start" feeder_alive feeder
	else
		threshold=$((now + 1 + RANDOM % ((total - now) / (ROUNDS - round + 2) + 1)))
		check "round $round: the feeder passes $threshold of $total orders" \
			ro_wait_until 120 rows_at_least "$threshold"
	fi

	lock_positions || bail "could not lock the positions table"
	if ro_wait_until 5 feeder_backend_waiting >/dev/null; then
		blocked=1
	else
		blocked=0 # nothing left to consume, or still joining the group
	fi
	check "round $round: the positions the database gained equal the messages the feeder logged" run_accounted
	feeder_kill feeder
	unlock_positions
	check "round $round: the killed feeder's session ends" ro_wait_until 30 no_feeder_session
	db_positions "$GROUP" >"$E2E_TMP/positions.killed"
	read -r n d < <(range_counts "$E2E_TMP/positions.locked" "$E2E_TMP/positions.killed")
	orphan_messages=$((orphan_messages + n))
	orphan_dups=$((orphan_dups + d))
	kafka_committed "$GROUP" "$E2E_TOPIC" >"$E2E_TMP/committed.now"
	# shellcheck disable=SC2016 # $2, $3 are awk's fields
	gap=$(awk 'FILENAME == ARGV[1] { c[$2] = $3 < 0 ? 0 : $3; next } $3 > c[$2] { s += $3 - c[$2] } END { print s + 0 }' \
		"$E2E_TMP/committed.now" "$E2E_TMP/positions.killed")
	ahead=$((ahead + gap))
	((gap > 0)) && kills_with_gap=$((kills_with_gap + 1))
	diag "round $round: killed at $(rows) orders, $([ $blocked = 1 ] && echo "with a batch blocked in flight (the server then committed $n of its messages)" || echo "with no batch in flight");" \
		"the database is $gap offsets ahead of Kafka's committed offsets"
done

check "the kills left Kafka's committed offsets behind the database ($ahead offsets after $kills_with_gap of $ROUNDS kills: a restart from them would send those again)" \
	test "$ahead" -gt 0

# the rest of the stream and a last part, to the end
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p $((PER_PARTITION + 1)) $((PER_PARTITION + 100))
done
flush || bail "kcat could not produce"
kafka_offsets_map "$E2E_TOPIC" >"$E2E_TMP/offsets.map"
db_positions "$GROUP" >"$E2E_TMP/positions.start"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
ro_wait_until 30 starts_logged
is "$(start_positions)" "$(start_expected)" \
	"the run after the last kill starts where the database's positions are"
check "it completes the stream: the database's positions reach the end offsets" \
	db_wait_caught_up "$GROUP" 90
check "Kafka's committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"

# the end of the stream: its last batch (two orders) blocks in flight, the
# feeder is killed, the server commits the batch; nothing is left to consume
msg 0 o999001 insert 999001 EXT-999001 - "$(event 999001 EXT-999001)"
msg 0 o999002 insert 999002 EXT-999002 - "$(event 999002 EXT-999002)"
flush || bail "kcat could not produce"
kafka_offsets_map "$E2E_TOPIC" >"$E2E_TMP/offsets.map"
db_positions "$GROUP" >"$E2E_TMP/positions.start"
lock_positions || bail "could not lock the positions table"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the last batch of the stream blocks in flight" ro_wait_until 30 feeder_backend_waiting
db_positions "$GROUP" >"$E2E_TMP/positions.locked"
feeder_kill feeder
unlock_positions
ro_wait_until 30 no_feeder_session
db_positions "$GROUP" >"$E2E_TMP/positions.killed"
read -r n d < <(range_counts "$E2E_TMP/positions.locked" "$E2E_TMP/positions.killed")
orphan_messages=$((orphan_messages + n))
orphan_dups=$((orphan_dups + d))
check "the server committed it after the feeder died: the database holds the whole stream, Kafka's committed offsets do not" \
	orphan_ahead "$n"
db_positions "$GROUP" >"$E2E_TMP/positions.start"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
ro_wait_until 30 starts_logged
is "$(start_positions)" "$(start_expected)" \
	"the restart starts at the database's positions, after the orphaned batch"
check "with nothing to consume, the feeder brings Kafka's committed offsets up to the database's positions (lag tools)" \
	ro_wait_until 15 committed_at_positions
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"

diag "batches committed by the server after their feeder was killed: $orphan_messages messages, $orphan_dups duplicates"
is "$(($(log_field_sum feeder batch_committed messages) + orphan_messages))" "$(wc -l <"$E2E_MANIFEST")" \
	"over all runs, the committed batches hold every produced message once (none sent twice)"
is "$(($(log_field_sum feeder batch_committed duplicate) + orphan_dups))" "$(awk -F'\t' '$3 == "dup"' "$E2E_MANIFEST" | wc -l)" \
	"over all runs, the duplicates the feeder reports are the stream's own redelivered copies"
check_exact_contents
tap_done
