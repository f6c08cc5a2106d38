#!/bin/bash
# 47-schema-registry-apicurio.t — the Schema Registry case of
# 29-schema-registry-avro.t against a real registry instead of the stand-in:
# Apicurio Registry (tools/apicurio/pom.xml, built by Quarkus from Maven
# Central; in-memory storage), through its Confluent-compatible API
# /apis/ccompat/v7.  Confluent's official JS serializers register the
# schemas there and frame the values; the feeder reads them with
# --value-format confluent --schema-registry URL.
#
# 1. Content ids (Apicurio's default): three Avro versions, a JSON Schema
#    value, the same schema under a second subject (the same id, as with
#    Confluent), a schema with a reference to another subject's type, a
#    redelivery, an id Apicurio does not know, a truncated frame, and a
#    schema whose reference has no end (com.x.Loop -> a subject whose
#    schema is ["null", "com.x.Loop"], itself referencing a record
#    com.x.Loop: the feeder inlined it into itself until its stack
#    overflowed, at every restart; now that message is quarantined as a
#    cycle and the feeder goes on).  The exact rows and quarantine,
#    payloads value by value, each row's schema id.
# 2. What differs from Confluent's registry, as the feeder meets it:
#    /schemas/guids/{guid} does not exist (404), and with
#    registry.ccompat.legacy-id-mode.enabled=true the ids are Apicurio's
#    global ids (one per artifact version: the same schema under two
#    subjects gets two ids); the feeder decodes those too.
# docs/compatibility.md lists the differences.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/lib/schema_registry.sh
. "$RO_ROOT/test/lib/schema_registry.sh"

E2E_TOPIC=ap.orders
FRAMED_FUNCTION='received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[],bytea[],integer[],text[],uuid[])'
FEEDER_ARGS=(-X auto.commit.interval.ms=200 --log-level info --value-format confluent
	--schema-registry-unknown-grace-ms 0)
plan 25

sr_npm_install || bail "could not install Confluent's serializers (npm ci)"
started=$SECONDS
sr_apicurio_start "$E2E_TMP" || bail "could not build or start Apicurio Registry (tools/apicurio/pom.xml)"
VERSION=$(curl -sS --max-time 5 "$SR_APICURIO_URL/apis/registry/v2/system/info" |
	node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')
diag "Apicurio Registry $VERSION serves $SR_URL after $((SECONDS - started)) s"
is "$VERSION" 2.4.2.Final "Apicurio Registry serves its ccompat API: the version pinned by tools/apicurio/pom.xml"
kafka_start 1 "$E2E_TOPIC:1" "ap.legacy:1" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
sql "GRANT EXECUTE ON FUNCTION $FRAMED_FUNCTION TO \"$E2E_ROLE\"" >/dev/null

AVRO_V1='{"type": "record", "name": "OrderReceived", "namespace": "com.example.orders", "fields": [
	{"name": "orderId", "type": {"type": "string", "logicalType": "uuid"}},
	{"name": "externalReference", "type": "string"},
	{"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}},
	{"name": "createdAt", "type": {"type": "long", "logicalType": "timestamp-millis"}},
	{"name": "channel", "type": {"type": "enum", "name": "Channel", "symbols": ["WEB", "SHOP"]}},
	{"name": "note", "type": ["null", "string"], "default": null}]}'
AVRO_V2=${AVRO_V1%]\}}', {"name": "priority", "type": "int", "default": 0}]}'
AVRO_V3=$(node -e 'const s = JSON.parse(process.argv[1]);
	s.fields = s.fields.filter((f) => f.name !== "note");
	console.log(JSON.stringify(s))' "$AVRO_V1")
JSON_SCHEMA='{"type": "object", "properties": {"orderId": {"type": "string"}, "externalReference": {"type": "string"}}, "required": ["orderId", "externalReference"]}'
MONEY='{"type": "record", "name": "Money", "namespace": "com.x", "fields": [{"name": "cents", "type": "long"}]}'
WITH_MONEY='{"type": "record", "name": "OrderWithMoney", "namespace": "shop", "fields": [
	{"name": "orderId", "type": "string"}, {"name": "externalReference", "type": "string"},
	{"name": "amount", "type": "com.x.Money"}]}'

# avro_value NO REF [PRIORITY] — an OrderReceived for the Avro schemas
avro_value() {
	printf '{"orderId": "%s", "externalReference": "%s", "amount": {"$bytes": "04d2"}, "createdAt": 1733310000123, "channel": "SHOP", "note": null%s}' \
		"$(uid "$1")" "$2" "${3:+, \"priority\": $3}"
}

cat >"$E2E_TMP/spec.json" <<-JSON
	[{"name": "a01", "subject": "ap.orders-value", "type": "AVRO", "schema": $AVRO_V1, "value": $(avro_value 701 AP-701)},
	 {"name": "a02", "subject": "ap.orders-value", "type": "AVRO", "schema": $AVRO_V2, "value": $(avro_value 702 AP-702 7)},
	 {"name": "j01", "subject": "ap.orders.json-value", "type": "JSON", "schema": $JSON_SCHEMA,
	  "value": {"orderId": "$(uid 703)", "externalReference": "AP-703", "lines": [{"sku": "A-1", "quantity": 2}]}},
	 {"name": "a05", "subject": "ap.orders-value", "type": "AVRO", "schema": $AVRO_V3,
	  "value": {"orderId": "$(uid 705)", "externalReference": "AP-705", "amount": {"\$bytes": "ff85"}, "createdAt": -1, "channel": "WEB"}},
	 {"name": "s01", "subject": "ap.second-value", "type": "AVRO", "schema": $AVRO_V2, "value": $(avro_value 706 AP-706 3)},
	 {"name": "m00", "subject": "money-value", "type": "AVRO", "schema": $MONEY, "value": {"cents": 1}},
	 {"name": "r01", "subject": "ap.refs-value", "type": "AVRO", "schema": $WITH_MONEY,
	  "references": [{"name": "com.x.Money", "subject": "money-value", "version": 1}],
	  "value": {"orderId": "$(uid 707)", "externalReference": "AP-707", "amount": {"cents": 1234}}}]
JSON
check "Confluent's serializers register the schemas with Apicurio (ccompat v7) and frame the values" \
	eval 'sr_produce "$E2E_TMP/spec.json" "$E2E_TMP/msgs" >"$E2E_TMP/ids"'
# sr_id NAME — the schema id the serializer framed message NAME with
sr_id() {
	awk -v n="$1" '$1 == n { print $2 }' "${2:-$E2E_TMP/ids}"
}
diag "ids: $(tr '\n' ' ' <"$E2E_TMP/ids")"
is "$(sr_id s01)" "$(sr_id a02)" "content ids: the same schema under a second subject has the same id (as with Confluent)"
is "$(printf '%s\n' "$(sr_id a01)" "$(sr_id a02)" "$(sr_id a05)" | sort -u | wc -l)" 3 \
	"each new version of the Avro schema has an id of its own"

# register SUBJECT SCHEMA_JSON [REFERENCES_JSON] — the new schema's id,
# through Apicurio's Confluent-compatible API
register() {
	python3 -c 'import json, sys
body = {"schema": sys.argv[1]}
if len(sys.argv) > 2: body["references"] = json.loads(sys.argv[2])
print(json.dumps(body))' "$2" ${3:+"$3"} |
		curl -sS --max-time 10 -H 'Content-Type: application/vnd.schemaregistry.v1+json' -d @- \
			"$SR_URL/subjects/$1/versions" | sed 's/[^0-9]//g'
}
register loop-record '{"type": "record", "name": "Loop", "namespace": "com.x", "fields": [{"name": "a", "type": "long"}]}' >/dev/null
register loop '["null", "com.x.Loop"]' '[{"name": "com.x.Loop", "subject": "loop-record", "version": 1}]' >/dev/null
# Apicurio parses a schema with its references one level deep, in order:
# so that it takes the schema, the record is also referenced directly,
# first, under a name of its own; the feeder meets com.x.Loop's union
LOOP_ID=$(register ap.loop-value '{"type": "record", "name": "OrderLoop", "namespace": "shop", "fields": [
	{"name": "orderId", "type": "string"}, {"name": "loop", "type": "com.x.Loop"}]}' \
	'[{"name": "com.x.LoopRecord", "subject": "loop-record", "version": 1}, {"name": "com.x.Loop", "subject": "loop", "version": 1}]')
[ -n "$LOOP_ID" ] && [ "$LOOP_ID" -lt 1000 ] || bail "Apicurio did not register the looping schemas ($LOOP_ID)"
diag "the schema whose reference names itself: id $LOOP_ID"

M=$E2E_TMP/msgs
# a framed value of it: the frame, orderId "x", the union's null branch
{ printf '\x00'; python3 -c 'import struct, sys; sys.stdout.buffer.write(struct.pack(">i", int(sys.argv[1])) + b"\x02x\x00")' "$LOOP_ID"; } >"$M/loop.bin"
{ printf '\x00\x00\x00\x03\xe7'; tail -c +6 "$M/a01.bin"; } >"$M/bad-id.bin"
head -c -3 "$M/a01.bin" >"$M/trunc.bin"

msg_file 0 a01 insert 701 AP-701 - "$M/a01.bin"
msg_file 0 a02 insert 702 AP-702 - "$M/a02.bin"
msg_file 0 j01 insert 703 AP-703 - "$M/j01.bin"
msg_file 0 a03 dup 701 AP-701 - "$M/a01.bin"
msg_file 0 bad-id reject - - 22P03 "$M/bad-id.bin"
msg_file 0 trunc reject - - 22P03 "$M/trunc.bin"
msg_file 0 loop reject - - 22P03 "$M/loop.bin"
msg_file 0 a05 insert 705 AP-705 - "$M/a05.bin"
msg_file 0 s01 insert 706 AP-706 - "$M/s01.bin"
msg_file 0 r01 insert 707 AP-707 - "$M/r01.bin"

feeder_start ap "$E2E_TOPIC" e2e-47 --schema-registry "$SR_URL" "${FEEDER_ARGS[@]}"
check "the group's offsets are committed to the end within 60 s" kafka_wait_caught_up e2e-47 "$E2E_TOPIC" 60
check "the database's positions are at the end offsets" db_wait_caught_up e2e-47 20
check_exact_contents
is "$(sql "SELECT payload FROM received_orders.received_orders WHERE order_id = '$(uid 701)'")" \
	"{\"note\": null, \"amount\": 12.34, \"channel\": \"SHOP\", \"orderId\": \"$(uid 701)\", \"createdAt\": \"2024-12-04T11:00:00.123000Z\", \"externalReference\": \"AP-701\"}" \
	"Avro v1: the payload is the decoded JSON (decimal exact, timestamp ISO-8601 UTC, enum a string, union unwrapped)"
is "$(sql "SELECT payload->>'priority' FROM received_orders.received_orders WHERE order_id = '$(uid 702)'")" 7 \
	"Avro v2 (a field added with a default): decoded with its own writer schema"
is "$(sql "SELECT payload FROM received_orders.received_orders WHERE order_id = '$(uid 705)'")" \
	"{\"amount\": -1.23, \"channel\": \"WEB\", \"orderId\": \"$(uid 705)\", \"createdAt\": \"1969-12-31T23:59:59.999000Z\", \"externalReference\": \"AP-705\"}" \
	"Avro v3 (a field removed): decoded with its own writer schema, no note"
is "$(sql "SELECT payload FROM received_orders.received_orders WHERE order_id = '$(uid 703)'")" \
	"{\"lines\": [{\"sku\": \"A-1\", \"quantity\": 2}], \"orderId\": \"$(uid 703)\", \"externalReference\": \"AP-703\"}" \
	"JSON Schema: the payload is the JSON after the frame"
is "$(sql "SELECT payload->'amount'->>'cents' FROM received_orders.received_orders WHERE order_id = '$(uid 707)'")" 1234 \
	"a schema with a reference to another subject's type: Apicurio returns the reference, the feeder composes and decodes"
is "$(sql "SELECT string_agg(external_reference || ' ' || coalesce(value_schema_id::text, 'NULL'), ', ' ORDER BY order_id)
             FROM received_orders.received_orders WHERE order_id IN ('$(uid 701)', '$(uid 702)', '$(uid 703)', '$(uid 705)', '$(uid 706)')")" \
	"AP-701 $(sr_id a01), AP-702 $(sr_id a02), AP-703 $(sr_id j01), AP-705 $(sr_id a05), AP-706 $(sr_id s01)" \
	"each row records the schema id its value was framed with"
check "an id Apicurio does not know: quarantined, the reason naming the id and Apicurio's 404" \
	test -n "$(sql "SELECT 1 FROM received_orders.received_orders_quarantine WHERE kafka_key = 'bad-id'
	                   AND value_schema_id = 999 AND reason LIKE 'schema id 999 is unknown to the Schema Registry:%404%'")"
is "$(sql "SELECT value_schema_id FROM received_orders.received_orders_quarantine WHERE kafka_key = 'trunc'")" \
	"$(sr_id a01)" "a truncated frame: quarantined with its id"
check "a reference that names itself, as Apicurio serves it: quarantined as a cycle (the feeder died of a stack overflow)" \
	test -n "$(sql "SELECT 1 FROM received_orders.received_orders_quarantine WHERE kafka_key = 'loop'
	                   AND value_schema_id = $LOOP_ID AND reason LIKE '%references form a cycle%com.x.Loop%'")"
is "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$SR_URL/schemas/guids/$(uid 1)")" 404 \
	"Apicurio has no /schemas/guids (Confluent's GUID lookup): 404"
check "the feeder still runs" feeder_alive ap
feeder_stop ap
is "$?" 0 "SIGTERM: the feeder exits 0"

# ---------------------------------------------------------------- 2. legacy id mode: global ids

sr_stop
sr_apicurio_start "$E2E_TMP" -Dregistry.ccompat.legacy-id-mode.enabled=true ||
	bail "could not start Apicurio Registry in legacy id mode"
E2E_TOPIC=ap.legacy
cat >"$E2E_TMP/legacy.json" <<-JSON
	[{"name": "g01", "subject": "ap.legacy-value", "type": "AVRO", "schema": $AVRO_V1, "value": $(avro_value 801 AP-801)},
	 {"name": "g02", "subject": "ap.legacy.other-value", "type": "AVRO", "schema": $AVRO_V1, "value": $(avro_value 802 AP-802)}]
JSON
check "legacy id mode: the serializers register and frame" \
	eval 'sr_produce "$E2E_TMP/legacy.json" "$E2E_TMP/legacy" >"$E2E_TMP/legacy.ids"'
diag "legacy ids: $(tr '\n' ' ' <"$E2E_TMP/legacy.ids")"
check "global ids: the same schema under a second subject gets another id ($(sr_id g01 "$E2E_TMP/legacy.ids") and $(sr_id g02 "$E2E_TMP/legacy.ids"))" \
	test "$(sr_id g01 "$E2E_TMP/legacy.ids")" != "$(sr_id g02 "$E2E_TMP/legacy.ids")"
msg_file 0 g01 insert 801 AP-801 - "$E2E_TMP/legacy/g01.bin"
msg_file 0 g02 insert 802 AP-802 - "$E2E_TMP/legacy/g02.bin"
feeder_start legacy "$E2E_TOPIC" e2e-47-legacy --schema-registry "$SR_URL" "${FEEDER_ARGS[@]}"
check "legacy id mode: the database reaches the end offsets within 60 s" db_wait_caught_up e2e-47-legacy 60
is "$(sql "SELECT string_agg(external_reference || ' ' || value_schema_id || ' ' || (payload->>'channel'), ', ' ORDER BY order_id)
             FROM received_orders.received_orders WHERE order_id IN ('$(uid 801)', '$(uid 802)')")" \
	"AP-801 $(sr_id g01 "$E2E_TMP/legacy.ids") SHOP, AP-802 $(sr_id g02 "$E2E_TMP/legacy.ids") SHOP" \
	"legacy id mode: both decoded, each row with its global id"
feeder_stop legacy
tap_done
