#!/bin/bash
# 26-adopt-kafka-offsets.t — received-orders-feeder --adopt-kafka-offsets,
# the one explicit way to start from Kafka's committed offsets (the first
# start after an upgrade from a feeder that kept none in the database):
# it writes the group's committed offset of every partition the database
# has no position of, keeps the positions the database has, logs each
# partition, writes nothing to Kafka, and the feeder then starts there.
#
# Such a start is modelled: a feeder consumes O [0] and O [1] (O [2] stays
# empty), then the group's positions are forgotten (a database whose feeder
# kept its progress in Kafka only has none) and O [1] is given a position of its own, 4,
# below its committed offset (a partition the database already had).  More
# orders follow on every partition.  Without the grant the command exits 3
# naming it; with an unknown topic it exits 4 and writes nothing; then it
# adopts O [0] @10, keeps O [1] @4 and finds no committed offset for O [2].
# A second run adopts nothing.  The feeder starts O [0] at 10 and O [1] at
# 4 (source=database), O [2] at its earliest offset, and reads exactly the
# orders after those positions: 15 new, 6 duplicates (O [1]'s 5..10).

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=O
GROUP=e2e-26
FEEDER_ARGS=(--batch-size 5 --batch-wait-ms 20 -X auto.commit.interval.ms=200)
ADOPT_SIG='received_orders.adopt_consumer_position(text, text, integer, bigint)'
plan 20

# produce PARTITION FIRST LAST — orders FIRST..LAST of O [PARTITION],
# recorded in $E2E_TMP/expected
produce() {
	local p=$1 i n
	for ((i = $2; i <= $3; i++)); do
		n=$((p * 10000 + i))
		printf 'O-%d-%d\t%s\n' "$p" "$i" "$(event "$n" "REF-$n")"
		printf '%s REF-%d\n' "$(uid "$n")" "$n" >>"$E2E_TMP/expected"
	done | kafka_produce O "$p"
}

# all_stored — the database holds every order produced, and nothing else
all_stored() {
	[ "$(sql "SELECT order_id || ' ' || external_reference FROM received_orders.received_orders" | sort)" = \
		"$(sort "$E2E_TMP/expected")" ]
}

# adopt LOG [EXTRA ARGS...] — run the command as the feeder's role; its
# stderr goes to $E2E_TMP/LOG.log; returns its exit status
adopt() {
	local log=$1
	shift
	"$(ro_feeder_bin)" --adopt-kafka-offsets --brokers "$KAFKA_BOOTSTRAP" \
		--group "$GROUP" --dsn "$E2E_DSN" "$@" \
		</dev/null >"$E2E_TMP/$log.out" 2>"$E2E_TMP/$log.log"
}

# partition_lines LOG — "EVENT TOPIC PARTITION key=value..." of LOG's
# per-partition lines, without ts, level, at and group
partition_lines() {
	grep -E 'event=position_(adopted|kept|none) ' "$E2E_TMP/$1.log" |
		sed -E 's/.* event=([^ ]+) at="[^"]*" group=[^ ]+ topic=([^ ]+) partition=([0-9]+)/\1 \2 \3/; s/ action=.*//'
}

# summary LOG — adopted, kept and none of LOG's adoption_done line
summary() {
	sed -nE 's/.* event=adoption_done .*adopted=([0-9]+) kept=([0-9]+) none=([0-9]+).*/adopted=\1 kept=\2 none=\3/p' "$E2E_TMP/$1.log"
}

# start_positions NAME — "PARTITION OFFSET SOURCE[ REASON]" of NAME's
# latest run's start_position lines
start_positions() {
	log_run_events "$1" start_position |
		sed -E 's/.* partition=([0-9]+) offset=([^ ]+) source=([^ ]+)( reason=([^ ]+))?.*/\1 \2 \3 \5/; s/ $//' | sort -n
}

kafka_start 1 O:3 || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
: >"$E2E_TMP/expected"

# --- such a start: Kafka's committed offsets, no positions
produce 0 1 10
produce 1 1 10
feeder_start feeder O "$GROUP" "${FEEDER_ARGS[@]}"
check "a feeder consumes O [0] and O [1]; Kafka's committed offsets reach the ends" \
	ro_wait_until 60 kafka_caught_up "$GROUP" O
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
sql "SELECT received_orders.forget_consumer_positions('$GROUP')" >/dev/null
sql "SELECT received_orders.set_consumer_position('$GROUP', 'O', 1, 4)" >/dev/null 2>&1
is "$(db_positions "$GROUP" | tr '\n' ';')" "O 1 4;" \
	"the database has no position but O [1] @4 (below its committed offset, 10)"
produce 0 11 15
produce 1 11 15
produce 2 1 5
kafka_committed "$GROUP" O >"$E2E_TMP/committed.before"

# --- without the grant: exit 3, naming it
adopt nogrant --topic O
is "$?" 3 "without EXECUTE on adopt_consumer_position the command exits 3"
check "its database_config_error names the GRANT to run" \
	grep -qF "GRANT EXECUTE ON FUNCTION received_orders.consumer_positions(text, text), $ADOPT_SIG TO" "$E2E_TMP/nogrant.log"
sql "GRANT EXECUTE ON FUNCTION $ADOPT_SIG TO \"$E2E_ROLE\""

# --- an unknown topic: exit 4, nothing written
adopt unknown --topic O --topic no-such-topic
is "$?" 4 "with a topic Kafka does not know the command exits 4"
is "$(db_positions "$GROUP" | tr '\n' ';')" "O 1 4;" "... and writes nothing"

# --- adoption
adopt adopt1 --topic O
is "$?" 0 "the command exits 0"
is "$(partition_lines adopt1)" "$(printf '%s\n' "position_adopted O 0 offset=10" \
	"position_kept O 1 db_position=4 committed=10" "position_none O 2 db_position=none committed=none")" \
	"one line per partition: O [0] adopted @10, O [1] kept @4 (committed 10), O [2] has none"
is "$(summary adopt1)" "adopted=1 kept=1 none=1" "the summary line counts them"
is "$(db_positions "$GROUP" | tr '\n' ';')" "O 0 10;O 1 4;" \
	"the database holds exactly the adopted committed offset and the position it had"
check "Kafka's committed offsets are untouched (the command joins no group, commits nothing)" \
	cmp -s "$E2E_TMP/committed.before" <(kafka_committed "$GROUP" O)
adopt adopt2 --topic O
is "$?" 0 "a second run exits 0"
is "$(summary adopt2)" "adopted=0 kept=2 none=1" "... and adopts nothing: every position is kept"
is "$(db_positions "$GROUP" | tr '\n' ';')" "O 0 10;O 1 4;" "... and changes nothing"

# --- the feeder starts at the adopted positions
feeder_start feeder O "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder stores every order" ro_wait_until 60 all_stored
check "Kafka's committed offsets reach the ends" ro_wait_until 30 kafka_caught_up "$GROUP" O
is "$(start_positions feeder)" "$(printf '%s\n' "0 10 database" "1 4 database" "2 earliest earliest no_position")" \
	"O [0] starts at the adopted 10, O [1] at its own 4 (source=database), O [2] at its earliest offset"
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
is "$(log_run_events feeder stats | tail -n 1 | sed -nE 's/.* inserted=([0-9]+) duplicate=([0-9]+) .*/\1 \2/p')" \
	"15 6" \
	"its last counters line: after the adoption the feeder read only what lies after the positions: 15 new orders, O [1]'s 5..10 again as duplicates"
tap_done
