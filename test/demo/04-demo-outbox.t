#!/bin/bash
# 04-demo-outbox.t — `make demo` on an outbox topic: demo/run
# --no-build --outbox --events 1000 produces every event as Debezium's
# outbox router publishes it (schema wrapper, JSON string payload, header
# eventType=OrderReceived) plus 100 messages of other types, runs the
# feeder with --envelope debezium --event-type OrderReceived, and its
# summary shows the 100 skipped; rows, duplicates and quarantine equal the
# generator's account, the positions count every message.  The numbers are
# read from the printed summary and the generator's account file.

set -uo pipefail
RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
export RO_ROOT
# shellcheck source=../lib/demo.sh
. "$RO_ROOT/test/lib/demo.sh"

EVENTS=1000
OTHER=100

tap_plan 8
status=0
timeout 600 "$RO_ROOT/demo/run" --no-build --outbox --events "$EVENTS" --account "$ACCOUNT" \
	>"$OUT" 2>&1 || status=$?
tap_is "$status" 0 "demo/run --no-build --outbox --events $EVENTS exits 0"
tap_last_ok || tap_diag "$(tail -n 20 "$OUT")"
tap_like "$(grep -m1 'to topic' "$OUT")" 'outbox\.event\.Order' "the stream goes to topic outbox.event.Order"
tap_is "$(summary 'other types skipped')" "$OTHER" "the summary shows the $OTHER messages of other types skipped"
tap_is "$(summary 'rows materialized')" "$(account expected_rows)" "rows equal the account's expected_rows"
tap_is "$(summary 'duplicates absorbed')" "$(account expected_duplicates)" "duplicates equal the account's"
tap_is "$(summary 'quarantined')" "$(account expected_quarantined)" "the quarantine equals the account's (the envelope quarantines nothing more)"
tap_is "$(summary 'positions in database')" "$((EVENTS + OTHER))" "the positions count every message, skipped ones included"
tap_like "$(grep -c 'Every number matches' "$OUT")" '^1$' "the demo's own verdict: every number matches"
tap_done
