#!/bin/bash
# test/sql-only/02-feeder-stream-on-sql-only.t — the feeder, unchanged,
# over the SQL-only flavour: a database where a NOSUPERUSER CREATEROLE
# CREATEDB admin role ran the psql script, created the feeder's role and
# ran grant_feeder for it (as on a managed service).  A dirty stream
# (orders, redeliveries, duplicates under other keys and partitions,
# divergent duplicates on one partition and across two, malformed JSON,
# invalid UTF-8, \u0000, a JSON array, bad fields, a bad uuid, tombstones,
# a 600 kB event) on 4 partitions of the development Kafka, a feeder
# killed with -9 after its first batches, another started with the rest of
# the stream produced: every valid order stored
# once, every bad message quarantined once, the database's positions and
# the committed offsets at the end offsets, no offset acknowledged ahead of
# the database.
#
# Uses test/e2e/lib.sh (the development Kafka, the feeder, the manifest
# and its checks) with e2e-flavour.sh's database setup.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"
# shellcheck source=test/sql-only/e2e-flavour.sh
. "$(dirname "$0")/e2e-flavour.sh"

E2E_TOPIC=orders
GROUP=sql-only-02
ADMIN=ro_sql_only_admin_02
SQL_ONLY_FEEDER_ROLE=ro_feeder_sql_only_02
plan 10

kafka_start 3 "$E2E_TOPIC:4" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database on the SQL-only flavour"
is "$(sql "SELECT DISTINCT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
	WHERE p.pronamespace = 'received_orders'::regnamespace AND l.lanname = 'c'")" "" \
	"the database holds the SQL-only flavour: no C function"
check "the feeder's role holds only USAGE on the schema and EXECUTE on what grant_feeder grants" \
	e2e_role_is_least_privilege

for n in $(seq 1 150); do
	msg 0 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
msg 0 o5-redelivered dup 5 EXT-5 - "$(event 5 EXT-5)"
msg 0 o7-divergent conflict 7 OTHER-7 - "$(event 7 OTHER-7)"
msg 0 bad-json reject - - 22P02 '{"orderId": "00000000-0000-4000-8000-000000000999", "externalRef'
msg 0 bad-array reject - - 22023 '[1, 2, 3]'
msg 0 bad-uuid reject - - 22P02 '{"orderId":"not-a-uuid","externalReference":"EXT-UUID"}'
msg 0 bad-blank-ref reject - - 22023 "{\"orderId\":\"$(uid 900)\",\"externalReference\":\"   \"}"
msg 0 bad-long-ref reject - - 22001 "$(event 902 "$(printf 'R%.0s' $(seq 1 256))")"
msg 0 bad-nul reject - - 22P05 "{\"orderId\":\"$(uid 903)\",\"externalReference\":\"A\\u0000B\"}"
msg 0 tomb-0 tomb - - - ''
for n in $(seq 101 250); do
	msg 1 "p$n" insert "$((n + 1000))" "EXT-$((n + 1000))" - "$(event "$((n + 1000))" "EXT-$((n + 1000))")"
done
for n in 1 2 3 50; do
	msg 1 "o$n-other-key" dup "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
msg 1 race-a race 500 RACE-A - "$(event 500 RACE-A)"
msg 1 tomb-1 tomb - - - ''
flush || bail "kcat could not produce"

# a first feeder, killed with -9 once some batches are in; a second one
# takes over from the database's positions, and the rest of the stream
feeder_start first "$E2E_TOPIC" "$GROUP" --batch-size 20 --batch-wait-ms 50
ro_wait_until 60 rows_at_least 100 || diag "the first feeder stored fewer than 100 orders in 60 s"
feeder_kill first

# the rest of the stream, produced after the kill
for n in $(seq 201 350); do
	msg 2 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
msg 2 race-b race 500 RACE-B - "$(event 500 RACE-B)"
msg 2 o201-divergent conflict 201 OTHER-201 - "$(event 201 OTHER-201)"
for n in $(seq 401 480); do
	msg 3 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
flush || bail "kcat could not produce"
printf '{"orderId":"%s","externalReference":"\xff\xfeEXT"}' "$(uid 904)" >"$E2E_TMP/invalid-utf8"
msg_file 3 bad-utf8 reject - - 22P02 "$E2E_TMP/invalid-utf8" || bail "kcat could not produce"
padding=$(head -c 600000 /dev/zero | tr '\0' 'p')
event 600 EXT-600 "\"padding\":\"$padding\"" >"$E2E_TMP/big-event"
msg_file 3 o600-600kB insert 600 EXT-600 - "$E2E_TMP/big-event" || bail "kcat could not produce"
flush || bail "kcat could not produce"

feeder_start second "$E2E_TOPIC" "$GROUP" --batch-size 50 --batch-wait-ms 100
check "committed offsets reach the end offsets of every partition" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 120
check "the database's positions reach the end offsets of every partition" \
	db_wait_caught_up "$GROUP" 60

check_exact_contents
check "a divergent duplicate across partitions: one stored, the other quarantined as a conflict" \
	check_races
is "$(acks_ahead "$GROUP")" "" "no offset committed in Kafka is ahead of the database's position"
feeder_stop second
is "$?" 0 "SIGTERM: the feeder exits 0"

sql_only_drop_db
tap_done
