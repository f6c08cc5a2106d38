#!/bin/bash
# 29-schema-registry-avro.t — Schema Registry topics.  Values
# framed by Confluent's own serializers (@confluentinc/schemaregistry's
# AvroSerializer and JsonSerializer, against the stand-in registry of
# test/schema-registry, with basic auth) are read with --value-format
# confluent: Avro decoded with the registry's schemas into JSON by the
# documented mapping, JSON Schema taken after its frame.
#
# 1. One topic with three Avro schema versions (v2 adds a field with a
#    default, v3 removes one), a value with every Avro type and logical type
#    of the mapping, a JSON Schema value, a redelivery, a tombstone, and the bad
#    messages: an id the registry does not know, a truncated frame, a plain
#    JSON value (not framed), an Avro value whose event is invalid.  The
#    exact rows and quarantine; the payloads value by value; each stored row
#    records the schema id it came from (value_schema_id); the quarantine
#    keeps the framed bytes as received and the schema id; each known id is
#    asked of the registry once.
# 2. The registry answering 503 when a feeder starts on new messages: the
#    batch waits (nothing stored, nothing acknowledged) and goes through
#    when the registry is back, by itself; meanwhile /healthz answers 503
#    "schema registry unreachable" and schema_registry_up is 0.  A registry
#    slower than --schema-registry-timeout-ms likewise.
#    /metrics: requests to the registry by result, cached schemas, request
#    duration.
# 3. Wrong credentials (401): exit 3, naming the Schema Registry.
# 4. The registry behind TLS (https, a throwaway CA) with basic auth:
#    --schema-registry-ca trusts it; a CA that did not sign its certificate
#    is a configuration error (exit 3).
# 5. The schema id in a header: Confluent's HeaderSchemaIdSerializer leaves
#    the value unframed and names the schema by its GUID in
#    __value_schema_id; Avro and JSON Schema values are read by GUID
#    (GET /schemas/guids/{guid}), their rows have no value_schema_id (a GUID
#    is no schema id), a GUID the registry does not know is quarantined
#    naming it.  Every quarantined value named by GUID keeps it
#    (value_schema_guid) beside its unframed bytes, also when the database
#    refused its decoded event (a conflict, the event rules), so that an
#    operator can decode it again and replay it.
# 6. Debezium's outbox router through the Avro converter (--envelope
#    debezium --event-type OrderReceived, the type in header eventType):
#    the payload column as an Avro string holding the event, or as an Avro
#    record, stored with its schema id; another event type skipped; a
#    Protobuf value rejected as not supported (not "not valid JSON").
#
# Before this issue every one of these values was quarantined as "not valid
# JSON".

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/lib/schema_registry.sh
. "$RO_ROOT/test/lib/schema_registry.sh"
# shellcheck source=test/tls/lib.sh
. "$RO_ROOT/test/tls/lib.sh"

E2E_TOPIC=sr.orders
FRAMED_FUNCTION='received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[],bytea[],integer[],text[],uuid[])'
SR_AUTH=feeder-sr:sr-secret-$RANDOM
printf '%s\n' "$SR_AUTH" >"$E2E_TMP/sr.credentials"
# no grace for unknown ids here (quarantined at their first 40403, asked
# once): 42-schema-registry-hostile.t tests the grace
FEEDER_ARGS=(-X auto.commit.interval.ms=200 --metrics-listen 127.0.0.1:0 --log-level info
	--value-format confluent --schema-registry-credentials "$E2E_TMP/sr.credentials"
	--schema-registry-unknown-grace-ms 0)
plan 68

sr_npm_install || bail "could not install Confluent's serializers (npm ci)"
sr_start "$E2E_TMP" "$SR_AUTH" || bail "could not start the stand-in Schema Registry"
kafka_start 1 "sr.orders:1" "sr.later:1" "sr.tls:1" "sr.header:1" "outbox.event.Order:1" "sr.hostile:1" || bail "could not start the development Kafka"
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
# v3 removes the field note
AVRO_V3=$(node -e 'const s = JSON.parse(process.argv[1]);
	s.fields = s.fields.filter((f) => f.name !== "note");
	console.log(JSON.stringify(s))' "$AVRO_V1")
JSON_SCHEMA='{"type": "object", "properties": {"orderId": {"type": "string"}, "externalReference": {"type": "string"}}, "required": ["orderId", "externalReference"]}'

# avro_value NO REF [PRIORITY] — an OrderReceived for the Avro schemas
avro_value() {
	printf '{"orderId": "%s", "externalReference": "%s", "amount": {"$bytes": "04d2"}, "createdAt": 1733310000123, "channel": "SHOP", "note": null%s}' \
		"$(uid "$1")" "$2" "${3:+, \"priority\": $3}"
}

cat >"$E2E_TMP/spec.json" <<-JSON
	[{"name": "a01", "subject": "sr.orders-value", "type": "AVRO", "schema": $AVRO_V1, "value": $(avro_value 501 SR-501)},
	 {"name": "a02", "subject": "sr.orders-value", "type": "AVRO", "schema": $AVRO_V2, "value": $(avro_value 502 SR-502 7)},
	 {"name": "j01", "subject": "sr.orders.json-value", "type": "JSON", "schema": $JSON_SCHEMA,
	  "value": {"orderId": "$(uid 503)", "externalReference": "SR-503", "lines": [{"sku": "A-1", "quantity": 2}]}},
	 {"name": "a04", "subject": "sr.orders-value", "type": "AVRO", "schema": $AVRO_V1, "value": $(avro_value 0 SR-BAD)},
	 {"name": "a05", "subject": "sr.orders-value", "type": "AVRO", "schema": $AVRO_V3,
	  "value": {"orderId": "$(uid 505)", "externalReference": "SR-505", "amount": {"\$bytes": "ff85"}, "createdAt": -1, "channel": "WEB"}},
	 {"name": "l01", "subject": "sr.later-value", "type": "AVRO", "schema": $AVRO_V2, "value": $(avro_value 601 SR-601 1)},
	 {"name": "l02", "subject": "sr.later-value", "type": "JSON", "schema": {"type": "object", "title": "later"},
	  "value": {"orderId": "$(uid 602)", "externalReference": "SR-602"}}]
JSON
sed -i "s/$(uid 0)/not-a-uuid/" "$E2E_TMP/spec.json"
# produce_all — the framed messages, "NAME ID" lines in $E2E_TMP/ids
produce_all() {
	sr_produce "$E2E_TMP/spec.json" "$E2E_TMP/msgs" >"$E2E_TMP/ids"
}
check "Confluent's serializers register the schemas with the stand-in registry and frame the values" \
	produce_all
# every logical type: the unit test's value (feeder/tests/fixtures), produced
# again here by the official serializer
# shellcheck disable=SC2317
produce_mapping() {
	sr_produce "$RO_ROOT/feeder/tests/fixtures/avro-mapping.spec.json" "$E2E_TMP/msgs" >/dev/null
}
check "and the value with every Avro type and logical type of the mapping" produce_mapping
V1=$(awk '$1 == "a01" { print $2 }' "$E2E_TMP/ids")
M=$E2E_TMP/msgs
# the bad ones, from Confluent's bytes: an id the registry does not know,
# a frame cut short, and a value that is not framed at all
{ printf '\x00\x00\x00\x03\xe7'; tail -c +6 "$M/a01.bin"; } >"$M/bad-id.bin"
head -c -3 "$M/a01.bin" >"$M/trunc.bin"
event 504 SR-504 >"$M/plain.bin"

# ---------------------------------------------------------------- 1. one topic, every case

msg_file 0 a01 insert 501 SR-501 - "$M/a01.bin"
msg_file 0 a02 insert 502 SR-502 - "$M/a02.bin"
msg_file 0 j01 insert 503 SR-503 - "$M/j01.bin"
msg_file 0 a03 dup 501 SR-501 - "$M/a01.bin"
printf 'tomb\t\n' | kafka_produce "$E2E_TOPIC" 0
printf 'tomb\t0\ttomb\t-\t-\t-\n' >>"$E2E_MANIFEST"
msg_file 0 bad-id reject - - 22P03 "$M/bad-id.bin"
msg_file 0 trunc reject - - 22P03 "$M/trunc.bin"
msg_file 0 plain reject - - 22P03 "$M/plain.bin"
msg_file 0 a04 reject - - 22P02 "$M/a04.bin"
msg_file 0 a05 insert 505 SR-505 - "$M/a05.bin"
printf 'map\t0\tinsert\t44444444-0000-4000-8000-000000000001\tAVRO-1\t-\n' >>"$E2E_MANIFEST"
kafka_produce_file "$E2E_TOPIC" 0 map "$M/avro-mapping.bin"

asked_before=$(sr_stats schemas_ids)
feeder_start sr "$E2E_TOPIC" e2e-29 --schema-registry "$SR_URL" "${FEEDER_ARGS[@]}"
check "the group's offsets are committed to the end within 60 s" kafka_wait_caught_up e2e-29 "$E2E_TOPIC" 60
check "the database's positions are at the end offsets" db_wait_caught_up e2e-29 20
check_exact_contents
is "$(sql "SELECT payload FROM received_orders.received_orders WHERE order_id = '$(uid 501)'")" \
	"{\"note\": null, \"amount\": 12.34, \"channel\": \"SHOP\", \"orderId\": \"$(uid 501)\", \"createdAt\": \"2024-12-04T11:00:00.123000Z\", \"externalReference\": \"SR-501\"}" \
	"Avro v1: the payload is the decoded JSON (decimal exact, timestamp ISO-8601 UTC, enum a string, union unwrapped)"
is "$(sql "SELECT payload->>'priority' FROM received_orders.received_orders WHERE order_id = '$(uid 502)'")" 7 \
	"Avro v2 (a field added with a default): decoded with its own writer schema"
is "$(sql "SELECT payload FROM received_orders.received_orders WHERE order_id = '$(uid 505)'")" \
	"{\"amount\": -1.23, \"channel\": \"WEB\", \"orderId\": \"$(uid 505)\", \"createdAt\": \"1969-12-31T23:59:59.999000Z\", \"externalReference\": \"SR-505\"}" \
	"Avro v3 (a field removed): decoded with its own writer schema, no note"
is "$(sql "SELECT payload = '$(sed "s/'/''/g" "$RO_ROOT/feeder/tests/fixtures/avro-mapping.json")'::jsonb
            FROM received_orders.received_orders WHERE order_id = '44444444-0000-4000-8000-000000000001'")" t \
	"every Avro type and logical type: the stored payload is the mapping's JSON, value by value (feeder/tests/fixtures/avro-mapping.json)"
is "$(sql "SELECT payload FROM received_orders.received_orders WHERE order_id = '$(uid 503)'")" \
	"{\"lines\": [{\"sku\": \"A-1\", \"quantity\": 2}], \"orderId\": \"$(uid 503)\", \"externalReference\": \"SR-503\"}" \
	"JSON Schema: the payload is the JSON after the frame"
# sr_id NAME [IDS_FILE] — the schema id the serializer framed message NAME with
sr_id() {
	awk -v n="$1" '$1 == n { print $2 }' "${2:-$E2E_TMP/ids}"
}
# stored_ids NO... — "REF ID" of the stored orders, in order_id order
stored_ids() {
	local no ids=()
	for no in "$@"; do
		ids+=("'$(uid "$no")'")
	done
	sql "SELECT string_agg(external_reference || ' ' || coalesce(value_schema_id::text, 'NULL'), ', ' ORDER BY order_id)
	       FROM received_orders.received_orders WHERE order_id IN ($(IFS=,; echo "${ids[*]}"))"
}
is "$(stored_ids 501 502 503 505)" "SR-501 $(sr_id a01), SR-502 $(sr_id a02), SR-503 $(sr_id j01), SR-505 $(sr_id a05)" \
	"each row records the schema id its value was framed with (Avro v1, v2, JSON Schema, Avro v3)"
is "$(sql "SELECT string_agg(convert_from(kafka_key, 'UTF8') || ' ' || coalesce(value_schema_id::text, 'NULL')
                                || ' ' || (raw_value = decode('$(xxd -p "$M/bad-id.bin" | tr -d '\n')', 'hex')), ', ')
            FROM received_orders.received_orders_quarantine WHERE kafka_key = 'bad-id'")" \
	"bad-id 999 true" "an unknown schema id: quarantined with its framed bytes as received and the id"
check "its reason names the id and the registry's answer" \
	test -n "$(sql "SELECT 1 FROM received_orders.received_orders_quarantine WHERE kafka_key = 'bad-id'
	                   AND reason LIKE 'schema id 999 is unknown to the Schema Registry:%HTTP 404%(40403 Schema not found)'")"
is "$(sql "SELECT value_schema_id || ' ' || (reason LIKE 'schema id $V1 (Avro): the Avro bytes do not match the schema:%')
            FROM received_orders.received_orders_quarantine WHERE kafka_key = 'trunc'")" \
	"$V1 true" "a truncated frame: quarantined with its id, the reason naming it and what was wrong"
is "$(sql "SELECT coalesce(value_schema_id::text, 'NULL') || ' ' || (reason LIKE 'value is not framed by a Schema Registry serializer%')
            FROM received_orders.received_orders_quarantine WHERE kafka_key = 'plain'")" \
	"NULL true" "a plain JSON value on a confluent topic: quarantined as not framed"
is "$(sql "SELECT value_schema_id FROM received_orders.received_orders_quarantine WHERE kafka_key = 'a04'")" \
	"$V1" "a decoded event that breaks the event rules: quarantined with its schema id"
is "$(($(sr_stats schemas_ids) - asked_before))" 6 \
	"the registry was asked once per id (four Avro schemas, one JSON Schema, the unknown id)"
# healthz NAME — "CODE BODY" of NAME's /healthz (the body up to its first colon)
healthz() {
	local addr out
	addr=$(feeder_metrics_addr "$1") || return 1
	out=$(curl -s --max-time 5 -w ' %{http_code}' "http://$addr/healthz")
	printf '%s %s\n' "${out##* }" "$(sed 's/:.*//' <<<"${out% *}")"
}

# registry_metric NAME LABELS — a schema_registry_requests_total sample
registry_metric() {
	local addr
	addr=$(feeder_metrics_addr "$1") || return 1
	curl -sS --max-time 5 "http://$addr/metrics" |
		awk -v m="received_orders_feeder_schema_registry_requests_total{result=\"$2\"}" '$1 == m { print $2 }'
}
is "$(registry_metric sr ok) $(registry_metric sr not_found) $(feeder_metric sr schema_registry_cached_schemas)" \
	"5 1 5" "/metrics: 5 schemas fetched and cached, 1 unknown id"
# promcheck NAME — promtool accepts NAME's scrape, the registry's families in it
promcheck() {
	local addr
	addr=$(feeder_metrics_addr "$1") || return 1
	curl -sS --max-time 5 "http://$addr/metrics" >"$E2E_TMP/$1.metrics" &&
		grep -q '^received_orders_feeder_schema_registry_request_duration_seconds_count 6$' "$E2E_TMP/$1.metrics" &&
		promtool check metrics <"$E2E_TMP/$1.metrics"
}
check "the request latency histogram counts the 6 requests; promtool check metrics accepts the scrape" promcheck sr
check "the feeder's log holds no credentials" log_has_no "${SR_AUTH#*:}" sr
feeder_stop sr
is "$?" 0 "SIGTERM: the feeder exits 0"

# ---------------------------------------------------------------- 1b. hostile values

# A producer's few bytes must neither stop nor bloat the feeder: a recursive
# schema's value nested 30,000 deep (it crashed avro-c's recursive reader),
# 1,608 bytes of arrays of arrays of nulls (40 MB of JSON); each is
# quarantined with its reason, and the order after them is stored.
E2E_TOPIC=sr.hostile
: >"$E2E_MANIFEST"
cat >"$E2E_TMP/spec-hostile.json" <<-JSON
	[{"name": "h01", "subject": "sr.hostile.ll-value", "type": "AVRO",
	  "schema": {"type": "record", "name": "LL", "fields": [{"name": "next", "type": ["null", "LL"]}]},
	  "value": {"next": {"next": null}}},
	 {"name": "h02", "subject": "sr.hostile.nulls-value", "type": "AVRO",
	  "schema": {"type": "array", "items": {"type": "array", "items": "null"}}, "value": [[null]]},
	 {"name": "h03", "subject": "sr.hostile-value", "type": "AVRO", "schema": $AVRO_V1, "value": $(avro_value 621 SR-621)}]
JSON
sr_produce "$E2E_TMP/spec-hostile.json" "$M" >"$E2E_TMP/ids-hostile" || bail "could not frame the hostile schemas' messages"
perl -e 'print pack("CN", 0, $ARGV[0]), "\x02" x 30000, "\x00"' "$(sr_id h01 "$E2E_TMP/ids-hostile")" >"$M/deep.bin"
perl -e 'print pack("CN", 0, $ARGV[0]), "\xa0\x06", "\xc0\xb8\x02\x00" x 400, "\x00"' \
	"$(sr_id h02 "$E2E_TMP/ids-hostile")" >"$M/bomb.bin"
msg_file 0 deep reject - - 22P03 "$M/deep.bin"
msg_file 0 bomb reject - - 22P03 "$M/bomb.bin"
msg_file 0 h03 insert 621 SR-621 - "$M/h03.bin"
feeder_start hostile "$E2E_TOPIC" e2e-29-hostile --schema-registry "$SR_URL" "${FEEDER_ARGS[@]}"
check "hostile values: the group is caught up within 60 s, the feeder still running" \
	eval 'kafka_wait_caught_up e2e-29-hostile "$E2E_TOPIC" 60 && feeder_alive hostile'
is "$(sql "SELECT string_agg(external_reference, ' ') FROM received_orders.received_orders WHERE order_id = '$(uid 621)'")
$(sql "SELECT string_agg(convert_from(kafka_key, 'UTF8'), ' ' ORDER BY kafka_offset) FROM received_orders.received_orders_quarantine
        WHERE kafka_topic = 'sr.hostile'")" "SR-621
deep bomb" "the order after them is stored; each of them is quarantined once"
is "$(sql "SELECT reason FROM received_orders.received_orders_quarantine WHERE kafka_key = 'deep'")" \
	"schema id $(sr_id h01 "$E2E_TMP/ids-hostile") (Avro): the value nests deeper than 256 levels" \
	"a value nested 30,000 deep: quarantined, the reason naming the bound"
is "$(sql "SELECT reason FROM received_orders.received_orders_quarantine WHERE kafka_key = 'bomb'")" \
	"schema id $(sr_id h02 "$E2E_TMP/ids-hostile") (Avro): the decoded JSON would be larger than 16 MiB, the most a value may decode into" \
	"1,608 bytes that expand to 40 MB of JSON: quarantined, the reason naming the bound"
feeder_stop hostile
is "$?" 0 "SIGTERM: the feeder exits 0"

# ---------------------------------------------------------------- 2. the registry failing

E2E_TOPIC=sr.later
: >"$E2E_MANIFEST"
msg_file 0 l01 insert 601 SR-601 - "$M/l01.bin"
msg_file 0 l02 insert 602 SR-602 - "$M/l02.bin"
sr_mode 503
feeder_start later "$E2E_TOPIC" e2e-29-later --schema-registry "$SR_URL" "${FEEDER_ARGS[@]}"
check "registry answering 503: the batch is retried (batch_failed step=schema_registry, twice within 60 s)" \
	ro_wait_until 60 eval "[ \"\$(grep -c 'event=batch_failed .*step=schema_registry' '$E2E_TMP/later.log')\" -ge 2 ]"
is "$(sql "SELECT count(*) FROM received_orders.received_orders WHERE order_id IN ('$(uid 601)', '$(uid 602)')")" 0 \
	"meanwhile nothing is stored"
check "and nothing is acknowledged" \
	test "$(kafka_committed e2e-29-later "$E2E_TOPIC" | awk '{ print $3 }')" -le 0
check "/metrics counts the registry's failures as unavailable" \
	test "$(registry_metric later unavailable)" -ge 1
is "$(feeder_metric later schema_registry_up)" 0 "/metrics: schema_registry_up is 0"
is "$(healthz later)" "503 schema registry unreachable" "/healthz answers 503 and says why"
sr_mode ok
check "the registry back: the feeder catches up by itself within 60 s" kafka_wait_caught_up e2e-29-later "$E2E_TOPIC" 60
is "$(sql "SELECT count(*) FROM received_orders.received_orders WHERE order_id IN ('$(uid 601)', '$(uid 602)')")" 2 \
	"both orders stored once"
is "$(feeder_metric later schema_registry_up) $(healthz later)" "1 200 ok" \
	"schema_registry_up is 1 again, /healthz answers 200"
feeder_stop later

# the registry too slow: a request past --schema-registry-timeout-ms is
# transient too (another group, a new process: nothing cached)
curl -sS --max-time 5 -X PUT "$SR_URL/_control/delay/3000" >/dev/null
sr_mode slow
feeder_start slow "$E2E_TOPIC" e2e-29-slow --schema-registry "$SR_URL" --schema-registry-timeout-ms 500 \
	"${FEEDER_ARGS[@]}"
check "registry slower than --schema-registry-timeout-ms: the batch is retried (a timeout, twice within 60 s)" \
	ro_wait_until 60 eval "[ \"\$(grep -c 'event=batch_failed .*step=schema_registry .*Operation timed out' '$E2E_TMP/slow.log')\" -ge 2 ]"
check "nothing acknowledged by that group meanwhile" \
	test "$(kafka_committed e2e-29-slow "$E2E_TOPIC" | awk '{ print $3 }')" -le 0
sr_mode ok
check "the registry fast again: the group catches up within 60 s" kafka_wait_caught_up e2e-29-slow "$E2E_TOPIC" 60
feeder_stop slow

# a batch that fails on a transient database error is sent again as it was
# encoded, its Avro values not decoded again: a DBA's trigger answers 40001
# to the first two attempts (a sequence, which a rollback does not undo)
cat >"$E2E_TMP/spec-retry.json" <<-JSON
	[{"name": "r01", "subject": "sr.later-value", "type": "AVRO", "schema": $AVRO_V2, "value": $(avro_value 611 SR-611 3)},
	 {"name": "r02", "subject": "sr.later-value", "type": "AVRO", "schema": $AVRO_V1, "value": $(avro_value 612 SR-612)}]
JSON
sr_produce "$E2E_TMP/spec-retry.json" "$M" >/dev/null || bail "could not frame the retry's messages"
kafka_produce_file "$E2E_TOPIC" 0 r01 "$M/r01.bin"
kafka_produce_file "$E2E_TOPIC" 0 r02 "$M/r02.bin"
sql "CREATE SEQUENCE public.e2e29_attempts;
     CREATE FUNCTION public.e2e29_fail_twice() RETURNS trigger LANGUAGE plpgsql AS
       \$\$BEGIN IF nextval('public.e2e29_attempts') <= 2 THEN
         RAISE EXCEPTION 'e2e 29: a transient failure' USING ERRCODE = '40001'; END IF;
         RETURN NEW; END\$\$;
     CREATE TRIGGER e2e29_fail_twice BEFORE INSERT ON received_orders.received_orders
       FOR EACH ROW EXECUTE FUNCTION public.e2e29_fail_twice()" >/dev/null
feeder_start retry "$E2E_TOPIC" e2e-29-retry --schema-registry "$SR_URL" "${FEEDER_ARGS[@]}" --log-level debug
check "a transient database error (40001) twice: the batch is retried, then caught up within 60 s" \
	kafka_wait_caught_up e2e-29-retry "$E2E_TOPIC" 60
is "$(grep -c 'event=batch_failed .*40001' "$E2E_TMP/retry.log") $(grep -c 'event=batch_resent' "$E2E_TMP/retry.log")" "2 2" \
	"both retries sent the batch as encoded (event=batch_resent), decoded once"
is "$(sql "SELECT string_agg(payload->>'externalReference' || ' ' || coalesce(payload->>'priority', '-') || ' ' || (payload->>'amount'), ', ' ORDER BY order_id)
             FROM received_orders.received_orders WHERE order_id IN ('$(uid 611)', '$(uid 612)')")" \
	"SR-611 3 12.34, SR-612 - 12.34" "the orders of the batch sent again are stored from its decoded values"
sql "DROP TRIGGER e2e29_fail_twice ON received_orders.received_orders" >/dev/null
feeder_stop retry

# ---------------------------------------------------------------- 3. wrong credentials

printf 'feeder-sr:wrong\n' >"$E2E_TMP/sr.wrong"
feeder_start wrong "$E2E_TOPIC" e2e-29-wrong --schema-registry "$SR_URL" "${FEEDER_ARGS[@]}" \
	--schema-registry-credentials "$E2E_TMP/sr.wrong"
feeder_wait_exit wrong 60
is "${FEEDER_RC:-none}" 3 "401 from the registry: exit 3 (a configuration error)"
check "the fatal line names the Schema Registry and what to fix" \
	grep -q 'level=fatal .*step=schema_registry .*HTTP 401.*hint="check --schema-registry' "$E2E_TMP/wrong.log"

# ---------------------------------------------------------------- 4. TLS

PKI=$E2E_TMP/pki
tls_make_pki "$PKI" "$E2E_ROLE" || bail "could not make the throwaway PKI"
sr_stop
sr_start "$E2E_TMP" "$SR_AUTH" "$PKI/server-ip.crt" "$PKI/server-ip.key" "$PKI/ca1.crt" ||
	bail "could not start the stand-in registry with TLS"
cat >"$E2E_TMP/spec-tls.json" <<-JSON
	[{"name": "t01", "subject": "sr.tls-value", "type": "AVRO", "schema": $AVRO_V1, "value": $(avro_value 701 SR-701)},
	 {"name": "h01", "subject": "sr.header-value", "type": "AVRO", "schema": $AVRO_V2, "header": true,
	  "value": $(avro_value 801 SR-801 3)},
	 {"name": "h02", "subject": "sr.header.json-value", "type": "JSON", "schema": $JSON_SCHEMA, "header": true,
	  "value": {"orderId": "$(uid 802)", "externalReference": "SR-802"}},
	 {"name": "h04", "subject": "sr.header-value", "type": "AVRO", "schema": $AVRO_V2, "header": true,
	  "value": $(avro_value 801 SR-801-OTHER 3)},
	 {"name": "h05", "subject": "sr.header-value", "type": "AVRO", "schema": $AVRO_V2, "header": true,
	  "value": $(avro_value 0 SR-BAD-H 3)},
	 {"name": "d01", "subject": "outbox.event.Order-value", "type": "AVRO", "schema": "string",
	  "value": $(event 901 SR-901 | python3 -c 'import json, sys; print(json.dumps(sys.stdin.read()))')},
	 {"name": "d02", "subject": "outbox.event.Order-value", "type": "AVRO", "schema": $AVRO_V1,
	  "value": $(avro_value 902 SR-902)},
	 {"name": "d03", "subject": "outbox.event.Order-value", "type": "AVRO", "schema": $AVRO_V1,
	  "value": $(avro_value 901 SR-901-CANCELLED)}]
JSON
sed -i "s/$(uid 0)/not-a-uuid/" "$E2E_TMP/spec-tls.json"
# produce_tls — the framed message, through the registry over https
produce_tls() {
	sr_produce "$E2E_TMP/spec-tls.json" "$E2E_TMP/msgs" >"$E2E_TMP/ids-tls"
}
check "Confluent's serializers register and frame against the registry over https" produce_tls
E2E_TOPIC=sr.tls
: >"$E2E_MANIFEST"
msg_file 0 t01 insert 701 SR-701 - "$M/t01.bin"
feeder_start tls "$E2E_TOPIC" e2e-29-tls --schema-registry "$SR_URL" --schema-registry-ca "$PKI/ca1.crt" \
	"${FEEDER_ARGS[@]}"
check "https with --schema-registry-ca: caught up within 60 s" kafka_wait_caught_up e2e-29-tls "$E2E_TOPIC" 60
is "$(sql "SELECT payload->>'amount' FROM received_orders.received_orders WHERE order_id = '$(uid 701)'")" 12.34 \
	"the order decoded with the schema fetched over https is stored"
feeder_stop tls
feeder_start untrusted "$E2E_TOPIC" e2e-29-untrusted --schema-registry "$SR_URL" \
	--schema-registry-ca "$PKI/ca2.crt" "${FEEDER_ARGS[@]}"
feeder_wait_exit untrusted 60
is "${FEEDER_RC:-none}" 3 "a registry certificate the CA did not sign: exit 3 (a configuration error)"
check "the fatal line says the certificate could not be verified" \
	grep -q 'level=fatal event=schema_registry_config_error .*step=schema_registry .*SSL certificate' "$E2E_TMP/untrusted.log"

# ---------------------------------------------------------------- 5. the schema id in a header

# header_msg LABEL KIND NO REF SQLSTATE VALUE_FILE HEADER_FILE — one message
# with its __value_schema_id header's bytes (no zero byte: see registry.js)
header_msg() {
	local hdr id=-
	# byte for byte: in a UTF-8 locale read drops a byte after a broken
	# multibyte sequence (a GUID is any bytes)
	LC_ALL=C IFS= read -r -d '' hdr <"$7" || true
	[ "$3" != - ] && id=$(uid "$3")
	printf '%s\t0\t%s\t%s\t%s\t%s\n' "$1" "$2" "$id" "$4" "$5" >>"$E2E_MANIFEST"
	kcat -b "$KAFKA_BOOTSTRAP" -P -t "$E2E_TOPIC" -p 0 -k "$1" -H "__value_schema_id=$hdr" "$6"
}
E2E_TOPIC=sr.header
: >"$E2E_MANIFEST"
sql "TRUNCATE received_orders.received_orders, received_orders.received_orders_quarantine" >/dev/null
is "$(head -c 1 "$M/h01.header" | xxd -p) $(stat -c %s "$M/h01.header") $(head -c 1 "$M/h01.bin" | xxd -p)" "01 17 48" \
	"Confluent's header form: __value_schema_id is byte 1 and a 16-byte GUID, the value unframed"
header_msg h01 insert 801 SR-801 - "$M/h01.bin" "$M/h01.header"
header_msg h02 insert 802 SR-802 - "$M/h02.bin" "$M/h02.header"
{ printf '\x01'; head -c 16 /dev/urandom | tr '\0' '\1'; } >"$M/unknown.header"
header_msg h03 reject - - 22P03 "$M/h01.bin" "$M/unknown.header"
# decoded by GUID, refused by the database: a conflict with h01, an invalid orderId
header_msg h04 conflict 801 SR-801-OTHER - "$M/h04.bin" "$M/h04.header"
header_msg h05 reject - - 22P02 "$M/h05.bin" "$M/h05.header"
feeder_start header "$E2E_TOPIC" e2e-29-header --schema-registry "$SR_URL" --schema-registry-ca "$PKI/ca1.crt" \
	"${FEEDER_ARGS[@]}"
check "header form: caught up within 60 s" kafka_wait_caught_up e2e-29-header "$E2E_TOPIC" 60
check_exact_contents
is "$(sql "SELECT payload->>'priority' || ' ' || (payload->>'amount') FROM received_orders.received_orders WHERE order_id = '$(uid 801)'")" \
	"3 12.34" "an Avro value named by its GUID is decoded with that schema"
is "$(stored_ids 801 802)" "SR-801 NULL, SR-802 NULL" \
	"the rows of values named by a GUID have no value_schema_id (a GUID is no schema id)"
check "a GUID the registry does not know: quarantined, the reason naming it" \
	test -n "$(sql "SELECT 1 FROM received_orders.received_orders_quarantine WHERE kafka_key = 'h03'
	                   AND value_schema_id IS NULL AND reason LIKE 'schema guid %-%-%-%-% is unknown to the Schema Registry:%40403%'")"
# guid_of FILE — the GUID a __value_schema_id header's bytes name (after byte 1)
guid_of() {
	xxd -p -s 1 -l 16 "$1" | sed -E 's/^(.{8})(.{4})(.{4})(.{4})(.{12})$/\1-\2-\3-\4-\5/'
}
# guid_rows KEY... — per quarantined key: its value_schema_guid, value_schema_id,
# and whether raw_value is the value as produced (unframed)
guid_rows() {
	local key vals=()
	for key in "$@"; do
		vals+=("('$key', decode('$(xxd -p "$M/$key.bin" | tr -d '\n')', 'hex'))")
	done
	sql "SELECT string_agg(q.key || ' ' || coalesce(value_schema_guid::text, 'NULL') || ' '
	                       || coalesce(value_schema_id::text, 'NULL') || ' ' || (raw_value = v.bytes), ', ' ORDER BY q.key)
	       FROM (SELECT convert_from(kafka_key, 'UTF8') AS key, * FROM received_orders.received_orders_quarantine) q
	       JOIN (VALUES $(IFS=,; echo "${vals[*]}")) AS v (key, bytes) ON v.key = q.key"
}
is "$(guid_rows h04 h05)" "h04 $(guid_of "$M/h04.header") NULL true, h05 $(guid_of "$M/h05.header") NULL true" \
	"a value named by GUID whose event the database refused (a conflict, the event rules) keeps its GUID (value_schema_guid) beside the bytes as received"
is "$(sql "SELECT value_schema_guid FROM received_orders.received_orders_quarantine WHERE kafka_key = 'h03'")" \
	"$(guid_of "$M/unknown.header")" "a GUID the registry does not know is kept too"
sql "UPDATE received_orders.received_orders_quarantine
        SET raw_value = convert_to('$(event 805 SR-805)', 'UTF8'), value_schema_guid = NULL
      WHERE kafka_key = 'h05'" >/dev/null
is "$(sql "SELECT received_orders.replay_quarantined(id) || ' ' || coalesce(
                  (SELECT value_schema_id::text FROM received_orders.received_orders WHERE order_id = '$(uid 805)'), 'NULL')
             FROM received_orders.received_orders_quarantine WHERE kafka_key = 'h05'")" "inserted NULL" \
	"the operator's JSON of the Avro value named by GUID replays (the stored row has no schema id)"
feeder_stop header

# ---------------------------------------------------------------- 6. Debezium over Avro, Protobuf

E2E_TOPIC=outbox.event.Order
: >"$E2E_MANIFEST"
sql "TRUNCATE received_orders.received_orders, received_orders.received_orders_quarantine" >/dev/null
# a Protobuf schema, registered as any client would, and a value framed with
# its id (message index 0, then the protobuf bytes of orderId = "x")
PROTO_ID=$(curl -sS --max-time 5 --cacert "$SR_CA" -u "$SR_AUTH" -H 'Content-Type: application/json' \
	-d '{"schemaType": "PROTOBUF", "schema": "syntax = \"proto3\"; message OrderReceived { string orderId = 1; }"}' \
	"$SR_URL/subjects/outbox.event.Order.proto-value/versions" | sed 's/[^0-9]//g')
printf "\\x00\\x$(printf %02x $((PROTO_ID >> 24 & 255)))\\x$(printf %02x $((PROTO_ID >> 16 & 255)))\\x$(printf %02x $((PROTO_ID >> 8 & 255)))\\x$(printf %02x $((PROTO_ID & 255)))\\x00\\x0a\\x01x" >"$M/p01.bin"
# dbz_msg LABEL KIND NO REF SQLSTATE TYPE FILE — an outbox message, its type in eventType
dbz_msg() {
	local id=-
	[ "$3" != - ] && id=$(uid "$3")
	printf '%s\t0\t%s\t%s\t%s\t%s\n' "$1" "$2" "$id" "$4" "$5" >>"$E2E_MANIFEST"
	kcat -b "$KAFKA_BOOTSTRAP" -P -t "$E2E_TOPIC" -p 0 -k "$1" -H "eventType=$6" "$7"
}
dbz_msg d01 insert 901 SR-901 - OrderReceived "$M/d01.bin"
dbz_msg d02 insert 902 SR-902 - OrderReceived "$M/d02.bin"
dbz_msg d03 skip 901 - - OrderCancelled "$M/d03.bin"
dbz_msg p01 reject - - 22P03 OrderReceived "$M/p01.bin"
feeder_start dbz "$E2E_TOPIC" e2e-29-dbz --schema-registry "$SR_URL" --schema-registry-ca "$PKI/ca1.crt" \
	--envelope debezium --event-type OrderReceived "${FEEDER_ARGS[@]}"
check "Debezium over Avro: caught up within 60 s" kafka_wait_caught_up e2e-29-dbz "$E2E_TOPIC" 60
check_exact_contents
is "$(sql "SELECT payload = '$(event 901 SR-901)'::jsonb FROM received_orders.received_orders WHERE order_id = '$(uid 901)'")" t \
	"the payload column as an Avro string: the event inside it is stored"
is "$(stored_ids 901 902)" "SR-901 $(sr_id d01 "$E2E_TMP/ids-tls"), SR-902 $(sr_id d02 "$E2E_TMP/ids-tls")" \
	"through the Debezium envelope too, each row records its schema id"
is "$(sql "SELECT value_schema_id = $PROTO_ID AND reason LIKE 'schema id $PROTO_ID is a Protobuf schema: Protobuf values are not supported%'
            FROM received_orders.received_orders_quarantine WHERE kafka_key = 'p01'")" t \
	"a Protobuf value: rejected as not supported, with its id"
feeder_stop dbz
tap_done
