#!/bin/bash
# 05-demo-avro.t — `demo/run --avro`: the generator's stream
# serialized by Confluent's own AvroSerializer under two schema versions,
# registered with the stand-in Schema Registry, read by the feeder with
# --value-format confluent.  demo/run --no-build --avro --events 4000 exits
# 0; its summary's rows, duplicates, quarantine and tombstones equal the
# generator's account (the Avro forms of its malformed values quarantined
# one for one); every row's payload is decoded Avro (occurredAt in the
# mapping's ISO-8601 with microseconds, total a number); the feeder asked
# the registry once per schema id; the quarantine shows the Avro reasons;
# nothing is left running.  The numbers are read from the printed summary
# and the generator's account file, two different places.

set -uo pipefail
RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
export RO_ROOT
# shellcheck source=../lib/demo.sh
. "$RO_ROOT/test/lib/demo.sh"

EVENTS=4000

tap_plan 14
status=0
timeout 900 "$RO_ROOT/demo/run" --no-build --avro --events "$EVENTS" --account "$ACCOUNT" \
	</dev/null >"$OUT" 2>&1 || status=$?
tap_is "$status" 0 "demo/run --no-build --avro --events $EVENTS exits 0"
tap_last_ok || tap_diag "$(tail -n 30 "$OUT")"
[[ -s $ACCOUNT ]] || tap_bail "the demo wrote no generator account to --account"

tap_like "$(grep -m1 'to topic' "$OUT")" '"orders\.avro"' "the stream goes to topic orders.avro"
tap_like "$(grep -m1 'framed with schema id' "$OUT")" \
	'schema id [0-9]+ \(version 1\): [1-9][0-9,]* values, with id [0-9]+ \(version 2\): [1-9][0-9,]*$' \
	"Confluent's serializer framed values with both schema versions' ids"
tap_is "$(summary 'rows materialized')" "$(account expected_rows)" \
	"rows equal the account's expected_rows ($(account expected_rows))"
tap_is "$(summary 'duplicates absorbed')" "$(account expected_duplicates)" \
	"duplicates equal the account's (a redelivery's Avro bytes are its original's)"
tap_is "$(summary 'quarantined')" "$(account expected_quarantined)" \
	"the quarantine equals the account's ($(account malformed) malformed, $(account divergent) divergent)"
tap_is "$(summary 'tombstones skipped')" "$(account tombstones)" "tombstones equal the account's"
tap_is "$(summary 'Avro rows decoded')" "$(account expected_rows)" \
	"every row's payload is decoded Avro (ISO-8601 occurredAt with microseconds, total a number)"
tap_like "$(summary '  of schema version 2')" '^[1-9][0-9]*$' "some rows were written with schema version 2"
tap_is "$(summary 'schema lookups')" 2 "the feeder asked the registry once per schema id (2), lanes meeting an id at once included"

reasons=$(sed -n '/^Quarantined messages by reason/,/^A sample/p' "$OUT")
tap_like "$reasons" 'schema id N \(Avro\): bytes are left after the Avro value' "trailing bytes are quarantined as such"
tap_like "$reasons" 'schema id N \(Avro\): the Avro bytes do not match the schema' "Avro bytes cut short are quarantined as not matching the schema"
tap_like "$reasons" 'value is not framed by a Schema Registry serializer' "an unframed value is quarantined as such"

demo_nothing_left 4 "no process the demo started is left running, the registry included"
tap_done
