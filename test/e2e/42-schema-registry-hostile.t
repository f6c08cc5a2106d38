#!/bin/bash
# 42-schema-registry-hostile.t — messages a producer can write that must
# not stop the feeder, stall its partition for ever or throw valid orders
# away, each on a topic read with --value-format
# confluent against the stand-in registry (test/schema-registry), in this
# order on one partition:
#
#   r01  an order whose Avro schema references a type of another subject
#        ("references": com.x.Money, as Confluent's serializers register
#        nested records kept as their own subjects).  It was quarantined
#        as undecodable, and the refusal kept for the process's life; now
#        the referenced schema is fetched and composed: stored, its amount
#        decoded.
#   b01  a value whose schema avro-c refuses, naming a type of 300 euro
#        signs: the compile error, cut at 512 bytes inside a character,
#        made the batch fail with 22021 at every retry (the partition
#        stalled for ever); now quarantined with a valid UTF-8 reason.
#   g01  a message with a __value_schema_id header while the registry has
#        no /schemas/guids (a plain 404, as older Confluent, Apicurio and
#        Karapace answer): the feeder exited 3; now that message is
#        quarantined, its reason saying the registry cannot resolve GUIDs.
#   u01  an id the registry does not know yet (a replica behind): it was
#        quarantined at once; now its partition waits within the id's
#        grace, and once the schema is registered the order is stored.
#   r02  one more order of the referencing schema.
#
# The feeder lives on, stores exactly the stream, exits 0.  Then, values
# that decode large:
#
#   z01..z12  twelve orders of 70 bytes each that decode into 100 kB of
#        JSON (an array of 20,000 nulls), read with --batch-max-bytes 65536
#        (so a batch may hold 4 x 65536 bytes of decoded JSON): a batch
#        held every decoded value whatever their total; now a batch ends
#        before the message that would pass the bound (batch_cut), the
#        rest is the next batch, every order is stored once.
#
# Then, references a registry may serve that have no end:
#
#   l01  a value whose schema uses com.x.Loop, a reference to a subject
#        whose schema is ["null", "com.x.Loop"], itself referencing a
#        record com.x.Loop: the feeder inlined the reference into itself
#        until its lane's stack overflowed (SIGSEGV, and the same at every
#        restart: the message was never acknowledged); now the schema is
#        refused as a cycle and the message quarantined, the reason saying
#        so.
#   l02  an order after it, stored by the same feeder.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/lib/schema_registry.sh
. "$RO_ROOT/test/lib/schema_registry.sh"

E2E_TOPIC=sr.hostile
GROUP=e2e-42
FRAMED_FUNCTION='received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[],bytea[],integer[],text[],uuid[])'
plan 25

sr_start "$E2E_TMP" || bail "could not start the stand-in Schema Registry"
kafka_start 1 "$E2E_TOPIC:1" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
sql "GRANT EXECUTE ON FUNCTION $FRAMED_FUNCTION TO \"$E2E_ROLE\"" >/dev/null

# register SUBJECT SCHEMA_JSON [REFERENCES_JSON] — the new schema's id
register() {
	python3 -c 'import json, sys
body = {"schema": sys.argv[1]}
if len(sys.argv) > 2: body["references"] = json.loads(sys.argv[2])
print(json.dumps(body))' "$2" ${3:+"$3"} |
		curl -sS --max-time 5 -H 'Content-Type: application/json' -d @- "$SR_URL/subjects/$1/versions" |
		sed 's/[^0-9]//g'
}

MONEY='{"type": "record", "name": "Money", "namespace": "com.x", "fields": [{"name": "cents", "type": "long"}]}'
ORDER='{"type": "record", "name": "OrderReceived", "namespace": "shop", "fields": [
	{"name": "orderId", "type": "string"}, {"name": "externalReference", "type": "string"},
	{"name": "amount", "type": "com.x.Money"}]}'
BAD="{\"type\": \"record\", \"name\": \"R\", \"fields\": [{\"name\": \"a\", \"type\": \"$(python3 -c 'print("\u20ac" * 300)')\"}]}"
UNKNOWN_YET='{"type": "record", "name": "Later", "namespace": "shop", "fields": [
	{"name": "orderId", "type": "string"}, {"name": "externalReference", "type": "string"}]}'

MONEY_ID=$(register money-value "$MONEY")
ORDER_ID=$(register sr.hostile-value "$ORDER" '[{"name": "com.x.Money", "subject": "money-value", "version": 1}]')
BAD_ID=$(register bad-value "$BAD")
NEXT_ID=$((BAD_ID + 1))
[ -n "$MONEY_ID" ] && [ -n "$ORDER_ID" ] && [ -n "$BAD_ID" ] || bail "could not register the schemas"
diag "ids: Money $MONEY_ID, Order $ORDER_ID (references Money), bad $BAD_ID, not yet registered $NEXT_ID"

# framed ID FILE [ORDER_NO REF [CENTS]] — a framed Avro value: an order
# (strings, then Money when CENTS is given), or one byte when no order
framed() {
	python3 - "$@" <<-'PY'
		import struct, sys
		def varint(n):
		    z, out = (n << 1) ^ (n >> 63), b""
		    while z >= 0x80:
		        out += bytes([(z & 0x7f) | 0x80]); z >>= 7
		    return out + bytes([z])
		def s(t):
		    b = t.encode(); return varint(len(b)) + b
		a = sys.argv[1:]
		body = b"\x00"
		if len(a) > 2:
		    body = s("00000000-0000-4000-8000-%012d" % int(a[2])) + s(a[3])
		    if len(a) > 4: body += varint(int(a[4]))
		open(a[1], "wb").write(b"\x00" + struct.pack(">i", int(a[0])) + body)
	PY
}
M=$E2E_TMP/msgs
mkdir -p "$M"
framed "$ORDER_ID" "$M/r01.bin" 4201 SR-4201 1234
framed "$BAD_ID" "$M/b01.bin"
framed "$NEXT_ID" "$M/u01.bin" 4203 SR-4203
framed "$ORDER_ID" "$M/r02.bin" 4204 SR-4204 99
printf '{"orderId": "%s", "externalReference": "SR-4202"}' "$(uid 4202)" >"$M/g01.bin"

sr_mode ok
curl -sS --max-time 5 -X PUT "$SR_URL/_control/guids/off" >/dev/null
msg_file 0 r01 insert 4201 SR-4201 - "$M/r01.bin"
msg_file 0 b01 reject - - 22P03 "$M/b01.bin"
printf '%s\t0\treject\t-\t-\t22P03\n' g01 >>"$E2E_MANIFEST"
# a GUID of 16 bytes, none of them zero or a newline (kcat's command line)
head -c 16 /dev/urandom | tr '\0\n' '\1\1' >"$M/g01.guid"
LC_ALL=C IFS= read -r -d '' guid <"$M/g01.guid" || true
kcat -b "$KAFKA_BOOTSTRAP" -P -t "$E2E_TOPIC" -p 0 -k g01 -H "__value_schema_id=$(printf '\x01')$guid" "$M/g01.bin" ||
	bail "kcat could not produce"
msg_file 0 u01 insert 4203 SR-4203 - "$M/u01.bin"
msg_file 0 r02 insert 4204 SR-4204 - "$M/r02.bin"

# a grace of 60 s, so that the schema registered below surely comes within
# it on a loaded machine (the default is 10 s)
feeder_start f "$E2E_TOPIC" "$GROUP" --value-format confluent --schema-registry "$SR_URL" \
	--schema-registry-unknown-grace-ms 60000 \
	--metrics-listen 127.0.0.1:0 -X auto.commit.interval.ms=200 --log-level info

# the id not yet registered: the batch waits within the grace
check "an id the registry does not know yet: its partition waits within its grace (partition_waits, 'retried for up to')" \
	ro_wait_until 60 eval "grep -q 'event=partition_waits .*schema id $NEXT_ID.*retried for up to 60000 ms' '$E2E_TMP/f.log'"
[ "$(register later-value "$UNKNOWN_YET")" = "$NEXT_ID" ] || bail "the late schema did not get id $NEXT_ID"
check "registered meanwhile: the feeder catches up within 60 s" db_wait_caught_up "$GROUP" 60
check "the feeder still runs (a __value_schema_id header made it exit 3)" feeder_alive f
check_exact_contents
is "$(sql "SELECT payload->'amount'->>'cents' FROM received_orders.received_orders WHERE order_id = '$(uid 4201)'")" 1234 \
	"a schema with references: composed with the referenced subject's schema, the value decoded"
is "$(sql "SELECT value_schema_id || ' ' || (reason LIKE 'schema id $BAD_ID: not an Avro schema%')
             FROM received_orders.received_orders_quarantine WHERE kafka_key = 'b01'")" "$BAD_ID true" \
	"a schema avro-c refuses with a long non-ASCII name: quarantined with its reason (no endless 22021)"
check "a GUID the registry cannot resolve (no /schemas/guids): quarantined, the reason saying so" \
	test -n "$(sql "SELECT 1 FROM received_orders.received_orders_quarantine WHERE kafka_key = 'g01'
	                   AND reason LIKE '%cannot resolve the schema GUIDs%'")"
check "schema_registry_unknown_retries_total counts the retries in the grace" \
	test "$(feeder_metric f schema_registry_unknown_retries_total)" -ge 1
feeder_stop f
is "$?" 0 "SIGTERM: the feeder exits 0"

# ------------------------------------------- decoded values a batch holds
BIG='{"type": "record", "name": "OrderReceived", "namespace": "shop", "fields": [
	{"name": "orderId", "type": "string"}, {"name": "externalReference", "type": "string"},
	{"name": "pad", "type": {"type": "array", "items": "null"}}]}'
BIG_ID=$(register big-value "$BIG")
[ -n "$BIG_ID" ] || bail "could not register the big schema"
for i in $(seq 1 12); do
	python3 - "$BIG_ID" "$M/z$i.bin" "$((4300 + i))" "SR-$((4300 + i))" <<-'PY'
		import struct, sys
		def varint(n):
		    z, out = (n << 1) ^ (n >> 63), b""
		    while z >= 0x80:
		        out += bytes([(z & 0x7f) | 0x80]); z >>= 7
		    return out + bytes([z])
		def s(t):
		    b = t.encode(); return varint(len(b)) + b
		a = sys.argv[1:]
		body = s("00000000-0000-4000-8000-%012d" % int(a[2])) + s(a[3]) + varint(20000) + varint(0)
		open(a[1], "wb").write(b"\x00" + struct.pack(">i", int(a[0])) + body)
	PY
	msg_file 0 "z$i" insert "$((4300 + i))" "SR-$((4300 + i))" - "$M/z$i.bin"
done
feeder_start big "$E2E_TOPIC" "$GROUP" --value-format confluent --schema-registry "$SR_URL" \
	--batch-max-bytes 65536 --metrics-listen 127.0.0.1:0 -X auto.commit.interval.ms=200 --log-level info
check "twelve values of 100 kB decoded each, 4 x 64 KiB decoded a batch at most: caught up" \
	db_wait_caught_up "$GROUP" 60
check_exact_contents
cuts=$(log_events big batch_cut | wc -l)
over=$(log_events big batch_cut | grep -cv ' committed=[12] ' || true)
is "$((cuts > 0)) $over" "1 0" \
	"batches cut before the value that would pass 256 KiB decoded ($cuts batch_cut lines, each committing 1 or 2 values)"
is "$(sql "SELECT count(*) || ' ' || min(jsonb_array_length(payload->'pad'))
             FROM received_orders.received_orders WHERE order_id::text LIKE '00000000-0000-4000-8000-0000000043%'")" "12 20000" \
	"the twelve orders stored once each, their values whole"
feeder_stop big
is "$?" 0 "SIGTERM: the feeder exits 0"

# ------------------------------------------- references without an end
LOOP_RECORD_ID=$(register loop-record '{"type": "record", "name": "Loop", "namespace": "com.x", "fields": [{"name": "a", "type": "long"}]}')
LOOP_UNION_ID=$(register loop '["null", "com.x.Loop"]' '[{"name": "com.x.Loop", "subject": "loop-record", "version": 1}]')
LOOP_ID=$(register sr.hostile.loop-value '{"type": "record", "name": "OrderReceived", "namespace": "shop", "fields": [
	{"name": "orderId", "type": "string"}, {"name": "externalReference", "type": "string"},
	{"name": "loop", "type": "com.x.Loop"}]}' '[{"name": "com.x.Loop", "subject": "loop", "version": 1}]')
[ -n "$LOOP_RECORD_ID" ] && [ -n "$LOOP_UNION_ID" ] && [ -n "$LOOP_ID" ] || bail "could not register the looping schemas"
diag "ids: com.x.Loop record $LOOP_RECORD_ID, the union naming it $LOOP_UNION_ID, the order using it $LOOP_ID"
framed "$LOOP_ID" "$M/l01.bin" 4401 SR-4401 0
framed "$ORDER_ID" "$M/l02.bin" 4402 SR-4402 77
msg_file 0 l01 reject - - 22P03 "$M/l01.bin"
msg_file 0 l02 insert 4402 SR-4402 - "$M/l02.bin"
feeder_start loop "$E2E_TOPIC" "$GROUP" --value-format confluent --schema-registry "$SR_URL" \
	--metrics-listen 127.0.0.1:0 -X auto.commit.interval.ms=200 --log-level info
check "a reference that names itself: the feeder catches up within 60 s (it died of a stack overflow)" \
	db_wait_caught_up "$GROUP" 60
check "the feeder still runs" feeder_alive loop
check_exact_contents
check "the value of the looping schema quarantined, the reason naming the cycle" \
	test -n "$(sql "SELECT 1 FROM received_orders.received_orders_quarantine WHERE kafka_key = 'l01'
	                   AND value_schema_id = $LOOP_ID AND reason LIKE '%references form a cycle%com.x.Loop%'")"
feeder_stop loop
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
