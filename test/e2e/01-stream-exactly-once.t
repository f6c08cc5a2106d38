#!/bin/bash
# 01-stream-exactly-once.t — one feeder consumes a dirty stream: every valid
# order lands exactly once, every bad message is quarantined exactly once,
# and the group's committed offsets reach the end of every partition.
#
# The stream (4 partitions, 3 brokers): orders, redelivered copies (same key
# and value, later offset), duplicates of the same order under another key
# on another partition, divergent duplicates (same orderId, another
# externalReference) on the same partition (deterministic: the first wins)
# and across partitions (a race: one wins, the other is a conflict),
# malformed JSON, invalid UTF-8, \u0000, a JSON array, missing/blank/too long
# fields, a bad uuid, tombstones and a 600 kB event.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-01
plan 14

kafka_start 3 "$E2E_TOPIC:4" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on materialize_orders" \
	e2e_role_is_least_privilege

# --- partition 0: orders, redeliveries, same-partition divergent duplicates, bad values
for n in $(seq 1 60); do
	msg 0 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
msg 0 o5-redelivered dup 5 EXT-5 - "$(event 5 EXT-5)"
msg 0 o6-redelivered dup 6 EXT-6 - "$(event 6 EXT-6)"
msg 0 o7-divergent conflict 7 OTHER-7 - "$(event 7 OTHER-7)"
msg 0 bad-json reject - - 22P02 '{"orderId": "00000000-0000-4000-8000-000000000999", "externalRef'
msg 0 bad-json-again reject - - 22P02 '{"orderId": "00000000-0000-4000-8000-000000000999", "externalRef'
msg 0 bad-array reject - - 22023 '[1, 2, 3]'
msg 0 bad-no-order-id reject - - 22023 '{"externalReference":"EXT-NOID"}'
msg 0 bad-order-id-number reject - - 22023 '{"orderId":42,"externalReference":"EXT-NUM"}'
msg 0 bad-uuid reject - - 22P02 '{"orderId":"not-a-uuid","externalReference":"EXT-UUID"}'
msg 0 bad-blank-ref reject - - 22023 "{\"orderId\":\"$(uid 900)\",\"externalReference\":\"   \"}"
msg 0 bad-no-ref reject - - 22023 "{\"orderId\":\"$(uid 901)\"}"
msg 0 bad-long-ref reject - - 22001 "$(event 902 "$(printf 'R%.0s' $(seq 1 256))")"
msg 0 bad-nul reject - - 22P05 "{\"orderId\":\"$(uid 903)\",\"externalReference\":\"A\\u0000B\"}"
msg 0 tomb-0 tomb - - - ''
for n in $(seq 61 80); do
	msg 0 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done

# --- partition 1: orders, the same orders again under other keys, tombstones
for n in $(seq 101 160); do
	msg 1 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
for n in 1 2 3 50; do
	msg 1 "o$n-other-key" dup "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
msg 1 tomb-1a tomb - - - ''
msg 1 tomb-1b tomb - - - ''
msg 1 o110-redelivered dup 110 EXT-110 - "$(event 110 EXT-110)"
msg 1 race-a race 500 RACE-A - "$(event 500 RACE-A)"

# --- partition 2: more orders, a divergent duplicate of a partition-1 order
for n in $(seq 201 260); do
	msg 2 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
msg 2 race-b race 500 RACE-B - "$(event 500 RACE-B)"
msg 2 o201-divergent conflict 201 OTHER-201 - "$(event 201 OTHER-201)"

# --- partition 3: orders around an invalid UTF-8 value and a 600 kB event
for n in $(seq 301 330); do
	msg 3 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
flush || bail "kcat could not produce"

printf '{"orderId":"%s","externalReference":"\xff\xfeEXT"}' "$(uid 904)" >"$E2E_TMP/invalid-utf8"
msg_file 3 bad-utf8 reject - - 22P02 "$E2E_TMP/invalid-utf8" || bail "kcat could not produce"
padding=$(head -c 600000 /dev/zero | tr '\0' 'p')
event 400 EXT-400 "\"padding\":\"$padding\"" >"$E2E_TMP/big-event"
msg_file 3 o400-600kB insert 400 EXT-400 - "$E2E_TMP/big-event" || bail "kcat could not produce"
for n in $(seq 331 360); do
	msg 3 "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
msg 3 o331-redelivered dup 331 EXT-331 - "$(event 331 EXT-331)"
msg 3 tomb-3 tomb - - - ''
flush || bail "kcat could not produce"

feeder_start feeder "$E2E_TOPIC" "$GROUP" --batch-size 50 --batch-wait-ms 100
check "committed offsets reach the end offsets of every partition" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 90
check "the feeder is still running" feeder_alive feeder

check_exact_contents
check "a divergent duplicate across partitions: one stored, the other quarantined as a conflict" \
	check_races

is "$(sql "SELECT length(payload->>'padding') FROM received_orders.received_orders WHERE order_id = '$(uid 400)'")" \
	600000 "the 600 kB event is stored whole"
is "$(sql "SELECT md5(raw_value) FROM received_orders.received_orders_quarantine WHERE kafka_key = 'bad-utf8'")" \
	"$(md5sum <"$E2E_TMP/invalid-utf8" | cut -d' ' -f1)" "the invalid UTF-8 value is quarantined byte for byte"

feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
check "after shutdown the committed offsets still equal the end offsets" \
	kafka_caught_up "$GROUP" "$E2E_TOPIC"
nul_offset=$(kafka_offsets_map "$E2E_TOPIC" | awk '$3 == "bad-nul" { print $2 }')
check "the feeder logs a rejected message with its coordinates and SQLSTATE" \
	bash -c 'grep -F "$1 [0] @$2" "$3" | grep -q 22P05' _ "$E2E_TOPIC" "$nul_offset" "$E2E_TMP/feeder.log"
check "the feeder logs the conflict with the order's id" \
	bash -c 'grep "event=conflict" "$1" | grep -qF "order_id=$2"' _ "$E2E_TMP/feeder.log" "$(uid 201)"
check "the password never appears in the feeder's output" log_has_no "$E2E_PASSWORD" feeder
tap_done
