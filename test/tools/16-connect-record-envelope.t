#!/bin/bash
# test/tools/16-connect-record-envelope.t — ro-generate-events --envelope
# connect-record gives the record Kafka Connect's JsonConverter (schemas on)
# hands a JDBC sink, and ro-floor-consumer reads occurredAt through every
# envelope.
#
# bench/real-latency --anchor measures Debezium's JDBC sink on a live
# stream of these records; the floor beside it reads the same topic.  The
# record must carry the event unchanged (its orderId and externalReference
# split out into the struct's fields, as the sink's columns), and the floor
# consumer must find occurredAt where the event is a JSON string (its
# quotes escaped), or it skips every message and the anchor's floor is
# empty.  Checked with Python's json module, on the development Kafka.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/kafka.sh
. "$RO_ROOT/test/lib/kafka.sh"

tap_plan 7

GEN=${RO_GENERATE_EVENTS:-$RO_ROOT/tools/ro-generate-events}
FLOOR=$RO_ROOT/tools/ro-floor-consumer
[[ -x $GEN && -x $FLOOR ]] || tap_bail "ro-generate-events or ro-floor-consumer not built (make -C tools)"
command -v python3 >/dev/null || tap_bail "python3 is not installed"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-envelope-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"

# 1: an unknown envelope is a usage error that names the choices
status=0
"$GEN" --output "$WORK/none" --count 1 --envelope connect >/dev/null 2>"$WORK/usage" || status=$?
tap_is "$status $(grep -c 'plain, debezium or connect-record' "$WORK/usage")" "2 1" \
	"--envelope connect is refused (exit 2), the message names plain, debezium and connect-record"

# 2-4: the same seed plain and as records (events of ~12 kB included, with
# escapes); every record checked against the plain event of the same index
for env in plain connect-record; do
	"$GEN" --output "$WORK/$env" --count 300 --seed 7 --event-bytes 3000 \
		--redeliveries 0.1 --cross-partition 0.05 --divergent 0.02 --malformed 0 --tombstones 0 \
		--envelope "$env" >"$WORK/account-$env" 2>"$WORK/stderr-$env" ||
		tap_bail "ro-generate-events --envelope $env failed: $(cat "$WORK/stderr-$env")"
done
python3 - "$WORK/plain" "$WORK/connect-record" >"$WORK/check" 2>&1 <<-'EOF' || true
	import json, sys
	def lines(path):
	    for line in open(path):
	        kind, key, value = line.split()
	        yield kind, key, bytes.fromhex(value).decode("utf-8")
	records = schemas = same = 0
	for (k1, key1, plain), (k2, key2, wrapped) in zip(lines(sys.argv[1]), lines(sys.argv[2])):
	    record = json.loads(wrapped)
	    records += 1
	    fields = [(f["field"], f["type"], f.get("name")) for f in record["schema"]["fields"]]
	    if record["schema"]["type"] == "struct" and fields == [
	            ("order_id", "string", "io.debezium.data.Uuid"),
	            ("external_reference", "string", None),
	            ("payload", "string", "io.debezium.data.Json")]:
	        schemas += 1
	    inner, event = json.loads(record["payload"]["payload"]), json.loads(plain)
	    inner.pop("occurredAt"); event.pop("occurredAt")
	    if (k1, key1) == (k2, key2) and inner == event \
	            and record["payload"]["order_id"] == event["orderId"] \
	            and record["payload"]["external_reference"] == event["externalReference"]:
	        same += 1
	print(records, schemas, same)
EOF
tap_is "$(cat "$WORK/check")" "300 300 300" \
	"300 records parse as JSON, each with the struct schema of order_id (Uuid), external_reference, payload (Json)"
tap_is "$(cut -d' ' -f1-2 "$WORK/plain" | md5sum)" "$(cut -d' ' -f1-2 "$WORK/connect-record" | md5sum)" \
	"the same seed gives the same kinds and keys in both envelopes"
tap_is "$(grep -E '^(produced|expected_rows)=' "$WORK/account-plain")" \
	"$(grep -E '^(produced|expected_rows)=' "$WORK/account-connect-record")" \
	"the accounts agree"

# 5-7: ro-floor-consumer reads occurredAt through each envelope
ro_on_exit kafka_stop
kafka_start 1 plain:1 debezium:1 connect-record:1 || tap_bail "the development Kafka did not start"
for env in plain debezium connect-record; do
	"$FLOOR" --brokers "$KAFKA_BOOTSTRAP" --topic "$env" --group "g-$env" --count 50 --seconds 60 \
		>"$WORK/floor-$env" 2>"$WORK/floor-$env.log" &
	pid=$!
	ro_wait_until 30 grep -q '^assigned' "$WORK/floor-$env.log" || true
	"$GEN" --brokers "$KAFKA_BOOTSTRAP" --topic "$env" --count 50 --envelope "$env" \
		--redeliveries 0 --cross-partition 0 --divergent 0 --malformed 0 --tombstones 0 \
		>/dev/null 2>"$WORK/gen-$env.log" || tap_diag "ro-generate-events --envelope $env: $(cat "$WORK/gen-$env.log")"
	status=0
	wait "$pid" || status=$?
	read -r count bad < <(awk '{ n++; if (!($1 >= 0 && $1 < 60000)) bad++ } END { print n + 0, bad + 0 }' "$WORK/floor-$env")
	tap_is "$status $count $bad" "0 50 0" \
		"the floor consumer reads all 50 $env events, each with a latency in [0, 60 s)"
	[[ $status == 0 ]] || tap_diag "$(cat "$WORK/floor-$env.log")"
done
tap_done
