#!/bin/bash
# 25-restore-unseen-topic-and-partitions.t — a database restored from a
# backup that holds no position of a topic, or of a topic's partitions,
# loses no order: every partition without a position starts at its earliest
# offset, never at Kafka's committed offset (which acknowledges what the
# restore lost).
#
# One consumer group, four topics:
#   A:2  consumed from the start; its first batches are in the backup
#   B:2  consumed from the start, but its first orders come after the backup
#   C:1  added to --topic after the backup
#   P:3  partitions added after the backup.  librdkafka's mock cluster
#        cannot add partitions to a topic at run time (no CreatePartitions,
#        no mock API for it), so this is modelled: partitions 1 and 2 get
#        their first messages only after the backup.  And the backup holds
#        no position of P at all: P's first orders were consumed by a feeder
#        that kept its progress in Kafka only (modelled by forgetting the
#        group's positions of P before the backup), so only Kafka's
#        committed offset knew them.
#        (A topic of which the backup holds positions of some partitions
#        is 09-restore-refills.t's partition 2.)
#   R:1  added to --topic after the restore, its beginning already deleted
#        by retention (the development Kafka keeps about 5 MiB per
#        partition: a few small orders, then ~0.5 MB ones until the low
#        watermark moves): it starts at its earliest offset too, and its
#        start_position line says, at warning level, that the database has
#        no position to tell whether it holds the deleted offsets below low.
# Run: orders on A and P[0]; the feeder consumes them; the group's
# positions of P are forgotten; pg_dump.  More orders on every topic and
# partition; the feeder (now with C) consumes everything, Kafka's committed
# offsets reach the ends.  The database is restored from the dump and the
# feeder restarted: A starts at the restored positions (source=database),
# every partition of B, C and P at its earliest offset (source=earliest
# reason=no_position), and every order of every topic is in the database
# (of R, every order Kafka still holds).
# Started at Kafka's committed offsets, B, C and P would lose their orders
# since the backup, with positions "not empty".

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

GROUP=e2e-25
E2E_TOPIC=A					# for lib.sh's helpers; this suite names its topics
FEEDER_ARGS=(--batch-size 5 --batch-wait-ms 20 -X auto.commit.interval.ms=200)
plan 18

# produce TOPIC PARTITION FIRST LAST — orders FIRST..LAST of TOPIC's
# PARTITION (order numbers unique per topic and partition), recorded in
# $E2E_TMP/expected
produce() {
	local topic=$1 p=$2 base i n
	case $topic in
	A) base=1000000 ;;
	B) base=2000000 ;;
	C) base=3000000 ;;
	P) base=4000000 ;;
	esac
	base=$((base + p * 10000))
	for ((i = $3; i <= $4; i++)); do
		n=$((base + i))
		printf '%s-%d-%d\t%s\n' "$topic" "$p" "$i" "$(event "$n" "REF-$n")"
		printf '%s REF-%d\n' "$(uid "$n")" "$n" >>"$E2E_TMP/expected"
	done | kafka_produce "$topic" "$p"
}

# stored — "order_id ref" of every stored order, sorted
stored() {
	sql "SELECT order_id || ' ' || external_reference FROM received_orders.received_orders" | sort
}

# all_stored — the database holds every order produced, and nothing else
all_stored() {
	[ "$(stored)" = "$(sort "$E2E_TMP/expected")" ]
}

# caught_up TOPIC... — Kafka's committed offsets of GROUP reach the ends
caught_up() {
	local t
	for t in "$@"; do
		kafka_caught_up "$GROUP" "$t" || return 1
	done
}

# db_at_ends TOPIC... — the database's position of every non-empty
# partition of each TOPIC is its high watermark
db_at_ends() {
	local t
	for t in "$@"; do
		kafka_end_offsets "$t" || return 1
	done | awk 'FILENAME == ARGV[1] { pos[$1 " " $2] = $3; next }
	            $4 != 0 && pos[$1 " " $2] != $4 { bad = 1 }
	            END { exit bad }' <(db_positions "$GROUP") -
}

# start_positions NAME — "TOPIC PARTITION OFFSET SOURCE REASON" of the
# start_position lines of NAME's latest run
start_positions() {
	log_run_events "$1" start_position |
		awk '{ t = p = o = s = r = ""
		       for (i = 1; i <= NF; i++) {
		           split($i, kv, "=")
		           if (kv[1] == "warning") break
		           if (kv[1] == "topic") t = kv[2]
		           else if (kv[1] == "partition") p = kv[2]
		           else if (kv[1] == "offset") o = kv[2]
		           else if (kv[1] == "source") s = kv[2]
		           else if (kv[1] == "reason") r = kv[2]
		       }
		       print t, p, o, s (r != "" ? " " r : "") }' | sort -k1,1 -k2,2n
}

# not_grep PATTERN FILE — FILE has no line matching PATTERN
not_grep() {
	! grep -qE -- "$1" "$2"
}

# missing — how many produced orders the database lacks
missing() {
	comm -23 <(sort "$E2E_TMP/expected") <(stored) | wc -l
}

# big_r I — order I of R [0], of ~0.5 MB
big_r() {
	local n=$((5000000 + $1))
	event "$n" "REF-$n" "\"padding\":\"$PADDING\"" >"$E2E_TMP/big"
	kafka_produce_file R 0 "R-0-$1" "$E2E_TMP/big"
}
PADDING=$(head -c 520000 /dev/zero | tr '\0' 'p')

# r_low — R [0]'s low watermark
r_low() {
	kafka_end_offsets R | awk '$2 == 0 { print $3 }'
}

kafka_start 1 A:2 B:2 C:1 P:3 R:1 || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
: >"$E2E_TMP/expected"

# --- before the backup: orders on A and on P's first partition
produce A 0 1 10
produce A 1 1 10
produce P 0 1 10
feeder_start feeder "A,B,P" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder consumes A and P [0]; B has no orders yet" \
	ro_wait_until 60 all_stored
check "Kafka's committed offsets of A and P reach the ends" \
	ro_wait_until 30 caught_up A P
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
# P was consumed by a feeder that kept no positions: Kafka's committed
# offset, no position in the database
sql "SELECT received_orders.forget_consumer_positions('$GROUP', 'P')" >/dev/null
is "$(db_positions "$GROUP" | awk '{ print $1, $2 }' | tr '\n' ';')" "A 0;A 1;" \
	"before the backup the database holds positions of A only"
check "pg_dump -Fc" pg_dump -Fc -d "$E2E_DB" -f "$E2E_TMP/backup.dump"

# --- after the backup: more on A and P [0], the first orders of B, of C
# (added to --topic) and of P's partitions 1 and 2
produce A 0 11 15
produce A 1 11 15
produce B 0 1 10
produce B 1 1 10
produce C 0 1 10
produce P 0 11 15
produce P 1 1 10
produce P 2 1 10
feeder_start feeder "A,B,C,P" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder, now also on C, consumes every order" \
	ro_wait_until 90 all_stored
check "Kafka's committed offsets of A, B, C and P reach the ends" \
	ro_wait_until 30 caught_up A B C P
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"

# --- restore the backup
check "the database is dropped, re-created and restored from the backup" \
	bash -c 'dropdb --force "$1" && createdb "$1" && pg_restore --exit-on-error -d "$1" "$2"' \
	_ "$E2E_DB" "$E2E_TMP/backup.dump"
is "$(db_positions "$GROUP" | awk '{ print $1, $2 }' | tr '\n' ';')" "A 0;A 1;" \
	"the restored database holds positions of A only: they are not empty"
is "$(missing)" 65 "the restore lost 65 of the 95 orders (A 10, B 20, C 10, P 25)"

# --- R: small orders, then big ones until retention deleted the first
for ((i = 1; i <= 3; i++)); do
	printf 'R-0-%d\t%s\n' "$i" "$(event $((5000000 + i)) "REF-$((5000000 + i))")"
done | kafka_produce R 0
for ((i = 4; i <= 40; i++)); do
	big_r "$i" || bail "kcat could not produce a big order"
	[ "$(r_low)" -gt 0 ] && break
done
# the orders R still holds are expected
kafka_offsets_map R | awk '{ sub(/^R-0-/, "", $3); print 5000000 + $3 }' | while read -r n; do
	printf '%s REF-%d\n' "$(uid "$n")" "$n"
done >>"$E2E_TMP/expected"
low=$(r_low)
diag "R [0]: low watermark $low after $i orders"

# --- restart, R added: nothing lost
feeder_start feeder "A,B,C,P,R" "$GROUP" "${FEEDER_ARGS[@]}"
check "the restarted feeder gets every order of A, B, C and P back, and R's still in Kafka" \
	ro_wait_until 120 all_stored
diag "orders still missing: $(missing) of $(wc -l <"$E2E_TMP/expected")"
check "the database's positions reach the end offsets of every topic" \
	ro_wait_until 30 db_at_ends A B C P R
is "$(start_positions feeder)" "$(printf '%s\n' "A 0 10 database" "A 1 10 database" \
		"B 0 earliest earliest no_position" "B 1 earliest earliest no_position" \
		"C 0 earliest earliest no_position" \
		"P 0 earliest earliest no_position" "P 1 earliest earliest no_position" \
		"P 2 earliest earliest no_position" "R 0 earliest earliest no_position")" \
	"A starts at the restored positions; every partition of B, C and P at its earliest offset"
check "R [0] starts at its earliest offset with a warning: no position, and retention deleted its offsets below low=$low" \
	grep -qE "level=warning event=start_position topic=R partition=0 offset=earliest source=earliest reason=no_position low=$low warning=\"the database has no position of this partition" "$E2E_TMP/feeder.log"
check "no start_position line says source=kafka" \
	not_grep 'event=start_position .*source=kafka' "$E2E_TMP/feeder.log"
check "Kafka's committed offsets reach the ends again" \
	ro_wait_until 30 caught_up A B C P R
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
