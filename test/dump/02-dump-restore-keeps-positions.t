#!/bin/bash
# test/dump/02-dump-restore-keeps-positions.t — pg_dump -Fc / pg_restore into
# a new database keeps the consumer groups' positions: every row of
# received_orders_positions, updated_at included, comes back identically,
# and the restored positions go on working: consumer_positions reads them, a
# lower offset leaves them, a higher one advances them, restart_position
# moves one back from its restored value.  The consumer groups come
# back too: the owner by name (here one of a role this cluster does not
# have, as after a restore into another cluster) and the Kafka cluster id,
# which the restored database goes on enforcing.  The position gaps
# come back identically, and an open one can be accepted there.
#
# TAP on stdout.  Uses the harness's cluster, or starts its own when run alone.

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/lib/orders.sh
. "$(dirname "$0")/../lib/orders.sh"

SRC=ro_dump_pos_src_$$
DST=ro_dump_pos_dst_$$

# positions DB — every row of received_orders_positions, all columns, in key
# order; on error a line naming DB, so two failed reads never compare equal
positions() {
	pg_query "$1" "SET TimeZone = 'UTC';
		SELECT p::text FROM received_orders.received_orders_positions p
		 ORDER BY consumer_group, kafka_topic, kafka_partition" ||
		echo "positions of $1: query failed"
}

# groups DB — every row of received_orders_consumer_groups, all columns
groups() {
	pg_query "$1" "SET TimeZone = 'UTC';
		SELECT g::text FROM received_orders.received_orders_consumer_groups g ORDER BY consumer_group" ||
		echo "groups of $1: query failed"
}

# gaps DB — every row of received_orders_position_gaps, all columns
gaps() {
	pg_query "$1" "SET TimeZone = 'UTC';
		SELECT g::text FROM received_orders.received_orders_position_gaps g
		 ORDER BY consumer_group, kafka_topic, kafka_partition, first_lost" ||
		echo "gaps of $1: query failed"
}

# group_batch DB GROUP TOPIC PARTITION OFFSET... — one batch of the group
# overload of NULL values (tombstones: outcome skipped) on one partition;
# prints the outcomes
group_batch() {
	local db=$1 group=$2 topic=$3 partition=$4 offsets
	shift 4
	offsets=$(IFS=,; echo "$*")
	pg_query "$db" "SELECT outcome FROM received_orders.materialize_orders('$group',
		array_fill(NULL::bytea, ARRAY[$#]), array_fill('$topic'::text, ARRAY[$#]),
		array_fill($partition, ARRAY[$#]), ARRAY[$offsets]::bigint[]) ORDER BY position"
}

# restore_into DB FILE — create DB empty and pg_restore FILE into it,
# stopping at the first error
restore_into() {
	pg_createdb "$1" && pg_restore --exit-on-error -d "$1" "$2"
}

tap_plan 19

pg_ensure_cluster >&2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-dump.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"
ro_on_exit "dropdb --if-exists $SRC 2>/dev/null; dropdb --if-exists $DST 2>/dev/null"

tap_cmd "the extension is created in the source database" \
	pg_createdb "$SRC" received_orders
tap_last_ok || tap_bail "received_orders is not installed"
[[ $(pg_query "$SRC" "SELECT to_regclass('received_orders.received_orders_positions') IS NOT NULL") == t ]] ||
	tap_bail "the installed received_orders has no received_orders_positions (version 1.1 or later needed)"

tap_is "$(pg_query "$SRC" "SELECT position, outcome FROM received_orders.materialize_orders('g1',
		ARRAY[convert_to('$(ro_order_event 1 EXT-1)', 'UTF8'), NULL, '\\xff'::bytea, convert_to('$(ro_order_event 2 EXT-2)', 'UTF8')],
		ARRAY['orders', 'orders', 'orders-eu', 'orders'], ARRAY[0, 1, 0, 0], ARRAY[41, 7, 3, 40]::bigint[])
		ORDER BY position")" \
	$'1|inserted\n2|skipped\n3|rejected\n4|inserted' \
	"a batch of group g1 over three partitions is materialized"

tap_is "$(group_batch "$SRC" g2 orders 0 5 6 7)" $'skipped\nskipped\nskipped' \
	"a batch of group g2 on a partition g1 consumed too"

tap_cmd "an operator sets a position of g2, and one updated_at is set in the past" \
	pg_query "$SRC" "SET client_min_messages = warning;
		SELECT received_orders.set_consumer_position('g2', 'orders', 3, 12345678901);
		UPDATE received_orders.received_orders_positions SET updated_at = '2001-02-03 04:05:06.789012+00'
		 WHERE consumer_group = 'g1' AND kafka_topic = 'orders-eu'"

tap_is "$(pg_query "$SRC" "SELECT consumer_group, kafka_topic, kafka_partition, next_offset
		FROM received_orders.received_orders_positions ORDER BY 1, 2, 3")" \
	$'g1|orders|0|42\ng1|orders|1|8\ng1|orders-eu|0|4\ng2|orders|0|8\ng2|orders|3|12345678901' \
	"the source holds five positions of two groups"

tap_is "$(pg_query "$SRC" "INSERT INTO received_orders.received_orders_consumer_groups
		(consumer_group, owner_role, kafka_cluster_id, owner_set_by, owner_set_at)
		VALUES ('g1', 'ro_dump_owner_elsewhere', 'cluster-a', current_user, now())
		ON CONFLICT (consumer_group) DO UPDATE SET owner_role = EXCLUDED.owner_role,
		  kafka_cluster_id = EXCLUDED.kafka_cluster_id, owner_set_by = EXCLUDED.owner_set_by,
		  owner_set_at = EXCLUDED.owner_set_at
		RETURNING consumer_group")" g1 \
	"g1 is recorded with an owner (a role this cluster lacks) and a Kafka cluster"

tap_is "$(pg_query "$SRC" "SELECT received_orders.record_position_gap('g2', 'orders', 0, 2, 4);
		SELECT received_orders.record_position_gap('g2', 'orders', 1, 0, 9, true)")" $'f\nt' \
	"two position gaps of g2 are recorded, one open, one accepted"

POSITIONS_BEFORE=$(positions "$SRC")
GAPS_BEFORE=$(gaps "$SRC")
GROUPS_BEFORE=$(groups "$SRC")
ROWS_BEFORE=$(ro_snapshot "$SRC")

tap_cmd "pg_dump -Fc of the source database succeeds" \
	pg_dump -Fc -f "$WORK/src.dump" "$SRC"

tap_cmd "pg_restore into a new empty database succeeds without error" \
	restore_into "$DST" "$WORK/src.dump"

tap_is "$(positions "$DST")" "$POSITIONS_BEFORE" \
	"every position is restored identically, updated_at included"

tap_is "$(groups "$DST")" "$GROUPS_BEFORE" \
	"every consumer group is restored identically, owner and cluster included"

tap_like "$(pg_query "$DST" "SELECT * FROM received_orders.consumer_positions('g1', 'cluster-b')" 2>&1; echo "exit $?")" \
	"has positions of another Kafka cluster.*exit [1-9]" \
	"the restored database refuses g1's positions to another Kafka cluster"

tap_is "$(gaps "$DST")" "$GAPS_BEFORE" \
	"every position gap is restored identically, who and when included"

tap_is "$(pg_query "$DST" "SET client_min_messages = warning;
		SELECT received_orders.accept_position_gap('g2', 'orders', 0);
		SELECT count(*) FROM received_orders.position_gaps WHERE open")" $'5\n0' \
	"in the restored database the open gap is accepted (the position after it: 5)"

tap_is "$(ro_snapshot "$DST")" "$ROWS_BEFORE" \
	"the orders and the quarantine are restored with them"

tap_is "$(pg_query "$DST" "SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('g1')")" \
	"$(pg_query "$SRC" "SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('g1')")" \
	"consumer_positions reads the same positions of g1 in the restored database"

tap_is "$(group_batch "$DST" g1 orders 0 30 >/dev/null; group_batch "$DST" g1 orders 1 9 >/dev/null
		pg_query "$DST" "SELECT kafka_topic, kafka_partition, next_offset FROM received_orders.consumer_positions('g1')")" \
	$'orders|0|42\norders|1|10\norders-eu|0|4' \
	"in the restored database a lower offset leaves a position and a higher one advances it"

tap_is "$(positions "$DST" | grep -v '^(g1,orders,1,')" "$(positions "$SRC" | grep -v '^(g1,orders,1,')" \
	"no other restored position changed"

tap_is "$(pg_query "$DST" "SELECT received_orders.restart_position('g2', 'orders', 3, 12345678900, 0);
		SELECT received_orders.restart_position('g2', 'orders', 3, 12345678901, 0);
		SELECT next_offset FROM received_orders.consumer_positions('g2') WHERE kafka_partition = 3")" \
	$'f\nt\n0' \
	"in the restored database restart_position moves a position back only from its restored value"

tap_done
