#!/bin/bash
# 22-outbox-topics.t — real outbox topics through Kafka.  Each
# relay's messages are produced with kcat as the relay emits them (value
# bytes and headers), mixed on one topic with other event types of the
# Order aggregate, redeliveries, tombstones and broken envelopes:
#
# 1. Debezium's outbox event router through Kafka Connect's JsonConverter
#    (--envelope debezium --event-type OrderReceived): the payload column
#    expanded to an object or sent as a JSON string, bare
#    (schemas.enable=false) or under {"schema", "payload"}
#    (schemas.enable=true); the event id in header "id", the type in header
#    "eventType" (table.fields.additional.placement=type:header:eventType),
#    the aggregate id as key.
# 2. CloudEvents' Kafka protocol binding (--envelope cloudevents
#    --event-type com.example.orders.OrderReceived): binary mode (ce_*
#    headers, content-type application/json) and structured mode
#    (content-type application/cloudevents+json, "data" or "data_base64").
# 3. Spring Kafka's JsonSerializer (--event-type
#    com.example.orders.OrderReceived --type-header __TypeId__).
#
# For each: the exact rows, the exact quarantine, the exact skipped count
# (/metrics events_total{outcome="skipped"}), tombstones, the group's offsets
# committed to the end and the database's positions at the end.  The same
# orderId arriving as OrderReceived and as OrderCancelled makes one row and
# no conflict.  A quarantined Debezium message, repaired, is replayed.
#
# Without --envelope these topics cannot be run: every message that is not a
# bare OrderReceived object is quarantined as rejected.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=outbox.event.Order
FEEDER_ARGS=(-X auto.commit.interval.ms=200 --metrics-listen 127.0.0.1:0 --log-level info)
plan 32

# hmsg PARTITION LABEL KIND ORDER_NO REF SQLSTATE VALUE [HEADER=VALUE...] —
# produce one message at once, with its headers, and record what it should
# become (the manifest of lib.sh; KIND skip: another event type, nothing
# stored).  VALUE TOMBSTONE is a NULL value.
hmsg() {
	local p=$1 label=$2 kind=$3 no=$4 ref=$5 state=$6 value=$7 id=- headers=() h
	shift 7
	for h in "$@"; do
		headers+=(-H "$h")
	done
	[ "$no" != - ] && printf -v id '00000000-0000-4000-8000-%012d' "$no"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$p" "$kind" "$id" "$ref" "$state" >>"$E2E_MANIFEST"
	[ "$value" = TOMBSTONE ] && value=
	printf '%s\t%s\n' "$label" "$value" |
		kcat -b "$KAFKA_BOOTSTRAP" -P -t "$E2E_TOPIC" -p "$p" -K $'\t' -Z "${headers[@]}"
}

# json_string TEXT — TEXT as a JSON string literal (a text payload column)
json_string() {
	python3 -c 'import json, sys; print(json.dumps(sys.argv[1]), end="")' "$1"
}

# skipped NAME — events_total{outcome="skipped"} of NAME's /metrics
skipped() {
	local addr
	addr=$(feeder_metrics_addr "$1") || return 1
	curl -sS --max-time 5 "http://$addr/metrics" |
		awk '$1 == "received_orders_feeder_events_total{outcome=\"skipped\"}" { print $2; f = 1 } END { exit !f }'
}

# phase_done NAME GROUP SKIPPED TOMBSTONES — the checks every relay's phase
# ends with (8 test points)
phase_done() {
	local name=$1 group=$2 want_skipped=$3 want_tombstones=$4
	check "$name: the group's offsets are committed to the end within 60 s" \
		kafka_wait_caught_up "$group" "$E2E_TOPIC" 60
	check "$name: the database's positions are at the end offsets" db_wait_caught_up "$group" 20
	check_exact_contents
	is "$(skipped "$name")" "$want_skipped" "$name: /metrics counts the $want_skipped messages of other types as skipped"
	is "$(feeder_metric "$name" tombstones_total)" "$want_tombstones" "$name: and $want_tombstones tombstone(s) apart"
	feeder_stop "$name"
	is "$?" 0 "$name: SIGTERM: the feeder exits 0"
}

# next_phase TOPIC — a new topic, manifest and empty tables for the next relay
next_phase() {
	E2E_TOPIC=$1
	: >"$E2E_MANIFEST"
	rm -f "$E2E_TMP/offsets.map"
	sql "TRUNCATE received_orders.received_orders, received_orders.received_orders_quarantine" >/dev/null
}

kafka_start 1 "outbox.event.Order:2" "orders.ce:1" "orders.spring:1" ||
	bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
sql "GRANT EXECUTE ON FUNCTION $E2E_OUTBOX_FUNCTION TO \"$E2E_ROLE\"" >/dev/null

# ---------------------------------------------------------------- 1. Debezium

ev101=$(event 101 EXT-101)
H='eventType=OrderReceived'
hmsg 0 d01 insert 101 EXT-101 - "$ev101" "id=6f1c1a3e-0001-4000-8000-000000000001" "$H"
hmsg 0 d02 insert 102 EXT-102 - "$(json_string "$(event 102 EXT-102)")" "id=6f1c1a3e-0002-4000-8000-000000000002" "$H"
hmsg 0 d03 insert 103 EXT-103 - "{\"schema\":{\"type\":\"string\",\"optional\":true},\"payload\":$(json_string "$(event 103 EXT-103)")}" \
	"id=6f1c1a3e-0003-4000-8000-000000000003" "$H"
hmsg 0 d04 insert 104 EXT-104 - "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"string\",\"optional\":false,\"field\":\"orderId\"},{\"type\":\"string\",\"optional\":false,\"field\":\"externalReference\"}],\"optional\":false,\"name\":\"Order\"},\"payload\":$(event 104 EXT-104)}" \
	"id=6f1c1a3e-0004-4000-8000-000000000004" "$H"
hmsg 0 d05 skip 101 - - '{"orderId":"00000000-0000-4000-8000-000000000101","paidAt":"2026-12-03T10:00:00Z"}' \
	"id=6f1c1a3e-0005-4000-8000-000000000005" 'eventType=OrderPaid'
hmsg 0 d06 skip 101 - - '{"orderId":"00000000-0000-4000-8000-000000000101","externalReference":"EXT-101-CANCELLED"}' \
	"id=6f1c1a3e-0006-4000-8000-000000000006" 'eventType=OrderCancelled'
hmsg 0 d07 dup 101 EXT-101 - "$ev101" "id=6f1c1a3e-0001-4000-8000-000000000001" "$H"
hmsg 0 d08 tomb - - - TOMBSTONE
hmsg 0 d09 reject - - 22023 '{"schema":{"type":"string","optional":true}}' "id=6f1c1a3e-0009-4000-8000-000000000009" "$H"
hmsg 0 d10 reject - - 22023 "$(event 110 EXT-110)" "id=6f1c1a3e-0010-4000-8000-000000000010"
hmsg 0 d11 reject - - 22P02 "{\"schema\":{\"type\":\"string\"},\"payload\":$(json_string '{"orderId": oops')}" \
	"id=6f1c1a3e-0011-4000-8000-000000000011" "$H"
hmsg 0 d12 insert 105 EXT-105 - "$(event 105 EXT-105)" "id=6f1c1a3e-0012-4000-8000-000000000012" "$H"
hmsg 1 d13 insert 106 EXT-106 - "$(json_string "$(event 106 EXT-106)")" "id=6f1c1a3e-0013-4000-8000-000000000013" "$H"
hmsg 1 d14 skip 106 - - '{"orderId":"00000000-0000-4000-8000-000000000106"}' "id=6f1c1a3e-0014-4000-8000-000000000014" 'eventType=OrderShipped'
hmsg 1 d15 reject - - 22023 '{"orderId":"00000000-0000-4000-8000-000000000107"}' "id=6f1c1a3e-0015-4000-8000-000000000015" "$H"

feeder_start debezium "$E2E_TOPIC" e2e-22-dbz --envelope debezium --event-type OrderReceived "${FEEDER_ARGS[@]}"
phase_done debezium e2e-22-dbz 3 1
is "$(sql "SELECT count(*) FROM received_orders.received_orders WHERE order_id = '$(uid 101)' AND external_reference = 'EXT-101'")" 1 \
	"debezium: order 101 arrived as OrderReceived, OrderPaid and OrderCancelled: one row, no conflict"
is "$(sql "SELECT payload = '$(event 103 EXT-103)'::jsonb FROM received_orders.received_orders WHERE order_id = '$(uid 103)'")" t \
	"debezium: the stored payload is the event, not the envelope"
is "$(sql "SELECT envelope || ' ' || kafka_headers::text || ' ' || (raw_value = convert_to('{\"schema\":{\"type\":\"string\",\"optional\":true}}', 'UTF8'))
            FROM received_orders.received_orders_quarantine WHERE kafka_key = 'd09'")" \
	'debezium {"eventType": "OrderReceived"} true' \
	"debezium: a broken envelope is quarantined as received, with its envelope and type header"
check "debezium: the feeder logs it with the envelope's reason" \
	grep -q 'event=rejected .*reason="envelope debezium: \\"payload\\" is missing' "$E2E_TMP/debezium.log"
check "debezium: the message without eventType is rejected naming the header" \
	grep -q "reason=\"header \\\\\"eventType\\\\\" is missing" "$E2E_TMP/debezium.log"
sql "UPDATE received_orders.received_orders_quarantine
        SET raw_value = convert_to('{\"schema\":{\"type\":\"string\"},\"payload\":' || to_json('$(event 111 EXT-111)'::text)::text || '}', 'UTF8')
      WHERE kafka_key = 'd11'" >/dev/null
is "$(sql "SELECT received_orders.replay_quarantined(id) FROM received_orders.received_orders_quarantine WHERE kafka_key = 'd11'")" \
	inserted "debezium: the repaired message is replayed through its envelope: inserted"
is "$(sql "SELECT external_reference FROM received_orders.received_orders WHERE order_id = '$(uid 111)'")" EXT-111 \
	"debezium: the event inside the repaired envelope is stored"

# ---------------------------------------------------------------- 2. CloudEvents

next_phase orders.ce
CT='content-type=application/json'
ce_binary() { # LABEL KIND NO REF SQLSTATE TYPE VALUE
	hmsg 0 "$1" "$2" "$3" "$4" "$5" "$7" ce_specversion=1.0 "ce_type=$6" ce_source=/orders "ce_id=$1" \
		ce_time=2026-12-03T10:00:00Z "$CT"
}
ce_structured() { # LABEL KIND NO REF SQLSTATE VALUE
	hmsg 0 "$1" "$2" "$3" "$4" "$5" "$6" 'content-type=application/cloudevents+json; charset=UTF-8'
}
ce_binary c01 insert 201 EXT-201 - com.example.orders.OrderReceived "$(event 201 EXT-201)"
ce_binary c02 skip 201 - - com.example.orders.OrderPaid '{"orderId":"00000000-0000-4000-8000-000000000201"}'
ce_structured c03 insert 202 EXT-202 - "{\"specversion\":\"1.0\",\"type\":\"com.example.orders.OrderReceived\",\"source\":\"/orders\",\"id\":\"c03\",\"time\":\"2026-12-03T10:00:00Z\",\"datacontenttype\":\"application/json\",\"data\":$(event 202 EXT-202)}"
ce_structured c04 insert 203 EXT-203 - "{\"specversion\":\"1.0\",\"type\":\"com.example.orders.OrderReceived\",\"source\":\"/orders\",\"id\":\"c04\",\"data_base64\":\"$(event 203 EXT-203 | base64 -w 0)\"}"
ce_structured c05 skip 202 - - '{"specversion":"1.0","type":"com.example.orders.OrderCancelled","source":"/orders","id":"c05","data":{"orderId":"00000000-0000-4000-8000-000000000202"}}'
ce_structured c06 reject - - 22023 '{"specversion":"1.0","type":"com.example.orders.OrderReceived","source":"/orders","id":"c06"}'
hmsg 0 c07 reject - - 22023 "$(event 207 EXT-207)" ce_specversion=1.0 ce_source=/orders ce_id=c07 "$CT"
ce_binary c08 dup 201 EXT-201 - com.example.orders.OrderReceived "$(event 201 EXT-201)"

feeder_start cloudevents "$E2E_TOPIC" e2e-22-ce --envelope cloudevents --event-type com.example.orders.OrderReceived "${FEEDER_ARGS[@]}"
phase_done cloudevents e2e-22-ce 2 0
is "$(sql "SELECT kafka_headers->>'content-type' FROM received_orders.received_orders_quarantine WHERE kafka_key = 'c06'")" \
	'application/cloudevents+json; charset=UTF-8' "cloudevents: the quarantine keeps the content-type that made it structured"

# ---------------------------------------------------------------- 3. Spring

next_phase orders.spring
T='__TypeId__=com.example.orders.OrderReceived'
hmsg 0 s01 insert 301 EXT-301 - "$(event 301 EXT-301)" "$T" 'contentType=application/json'
hmsg 0 s02 skip 301 - - '{"orderId":"00000000-0000-4000-8000-000000000301"}' '__TypeId__=com.example.orders.OrderCancelled'
hmsg 0 s03 reject - - 22023 "$(event 303 EXT-303)"
hmsg 0 s04 insert 302 EXT-302 - "$(event 302 EXT-302)" "$T"
hmsg 0 s05 skip 302 - - "$(event 302 EXT-302)" '__TypeId__=OrderReceived'

feeder_start spring "$E2E_TOPIC" e2e-22-spring --event-type com.example.orders.OrderReceived --type-header __TypeId__ "${FEEDER_ARGS[@]}"
phase_done spring e2e-22-spring 2 0
tap_done
