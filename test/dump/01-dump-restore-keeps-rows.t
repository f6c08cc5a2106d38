#!/bin/bash
# test/dump/01-dump-restore-keeps-rows.t — pg_dump -Fc / pg_restore into a new
# database keeps every materialized order and quarantined message, the
# quarantine's sequence, its unique coordinates and the primary key.
#
# TAP on stdout.  Uses the harness's cluster, or starts its own when run alone.

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/lib/orders.sh
. "$(dirname "$0")/../lib/orders.sh"

SRC=ro_dump_src_$$
DST=ro_dump_dst_$$

# materialize DB N REF — materialize_order of order N; prints the outcome
materialize() {
	pg_query "$1" "SELECT received_orders.materialize_order('$(ro_order_event "$2" "$3")'::jsonb)"
}

# quarantine_batch DB OFFSET... — one materialize_orders batch on topic "t",
# partition 0, whose elements are invalid values at the given offsets (an
# invalid UTF-8 byte, then a JSON array, alternating); prints position|outcome
quarantine_batch() {
	local db=$1 offsets values=() i
	shift
	for ((i = 0; i < $#; i++)); do
		if ((i % 2 == 0)); then
			values+=("'\\xff'::bytea")
		else
			values+=("convert_to('[1, 2]', 'UTF8')")
		fi
	done
	offsets=$(IFS=,; echo "$*")
	pg_query "$db" "SELECT position, outcome FROM received_orders.materialize_orders(
		ARRAY[$(IFS=,; echo "${values[*]}")]::bytea[],
		array_fill('t'::text, ARRAY[$#]), array_fill(0, ARRAY[$#]),
		ARRAY[$offsets]::bigint[], NULL) ORDER BY position"
}

# restore_into DB FILE — create DB empty and pg_restore FILE into it,
# stopping at the first error
restore_into() {
	pg_createdb "$1" && pg_restore --exit-on-error -d "$1" "$2"
}

tap_plan 14

pg_ensure_cluster >&2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-dump.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"
ro_on_exit "dropdb --if-exists $SRC 2>/dev/null; dropdb --if-exists $DST 2>/dev/null"

tap_cmd "the extension is created in the source database" \
	pg_createdb "$SRC" received_orders
tap_last_ok || tap_bail "received_orders is not installed"

tap_is "$(materialize "$SRC" 1 EXT-1; materialize "$SRC" 2 EXT-2; materialize "$SRC" 3 EXT-3)" \
	$'inserted\ninserted\ninserted' "three orders are inserted with materialize_order"

tap_is "$(pg_query "$SRC" "SELECT position, outcome FROM received_orders.materialize_orders(
		ARRAY[convert_to('$(ro_order_event 4 EXT-4)', 'UTF8'), '\\xff'::bytea, convert_to('[1, 2]', 'UTF8')]::bytea[],
		ARRAY['t', 't', 't'], ARRAY[0, 0, 0], ARRAY[1, 2, 3]::bigint[], NULL) ORDER BY position")" \
	$'1|inserted\n2|rejected\n3|rejected' \
	"a batch inserts its valid element and rejects the two invalid ones"

tap_is "$(ro_counts "$SRC")" "4|2" "the source holds 4 orders and 2 quarantined messages"

BEFORE=$(ro_snapshot "$SRC")

tap_cmd "pg_dump -Fc of the source database succeeds" \
	pg_dump -Fc -f "$WORK/src.dump" "$SRC"

tap_cmd "pg_restore into a new empty database succeeds without error" \
	restore_into "$DST" "$WORK/src.dump"

tap_is "$(pg_query "$DST" "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")" \
	"$(pg_query "$SRC" "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")" \
	"the restored database has the extension, same version"

tap_is "$(ro_counts "$DST")" "4|2" "the restored database has as many rows in both tables"

tap_is "$(ro_snapshot "$DST")" "$BEFORE" "every row of both tables is restored identically"

tap_is "$(quarantine_batch "$DST" 4)" "1|rejected" \
	"a new message is quarantined after the restore (the sequence does not collide)"

tap_is "$(pg_query "$DST" "SELECT (SELECT id FROM received_orders.received_orders_quarantine
		WHERE kafka_topic = 't' AND kafka_partition = 0 AND kafka_offset = 4)
	> (SELECT max(id) FROM received_orders.received_orders_quarantine WHERE kafka_offset < 4)")" \
	"t" "the quarantine sequence continues beyond the restored ids"

tap_is "$(quarantine_batch "$DST" 2 3; ro_counts "$DST")" $'1|rejected\n2|rejected\n4|3' \
	"a redelivered quarantined message is not quarantined twice (coordinates stay unique)"

tap_is "$(materialize "$DST" 1 EXT-1)" "duplicate" \
	"a restored order is recognized as a duplicate (primary key restored)"

tap_is "$(materialize "$DST" 1 OTHER-1 2>/dev/null; materialize "$DST" 5 EXT-5; ro_counts "$DST")" \
	$'conflict\ninserted\n5|3' "conflicts and new orders are handled in the restored database"

tap_done
