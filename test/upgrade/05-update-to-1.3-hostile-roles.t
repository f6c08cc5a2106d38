#!/bin/bash
# 05-update-to-1.3-hostile-roles.t — the update
# 1.1 -> 1.2 -> 1.3 of a populated database closes the claim window, refuses
# objects in its way by name, and a session whose library is older than the
# installed extension is ended with a hint to reconnect.
#
#   1. A 1.1 database where the orders team's role wrote group "orders" up
#      to offset 41 through 1.1's batch function; another team's role
#      (billing) has 1.1's grants too.  Updated to 1.2, and the 1.2 grants
#      given to both before the owner is set (docs/operations.md's order in
#      1.2), then updated to 1.3: billing's role cannot claim "orders"
#      through the batch function (moving it to 1,000,041) nor
#      report_feeder (42501, with the hint naming set_consumer_group_owner),
#      the position stays 41; after set_consumer_group_owner the orders
#      team's role reads it.  On 1.2 billing claimed it: the test fails on
#      the old code.
#   2. A DBA's view named quarantine_examples, then one built on
#      quarantine_summary: ALTER EXTENSION ... UPDATE TO '1.3' refuses each,
#      naming it, with a hint; the database stays at 1.2; without them the
#      update succeeds.
#   3. A session whose library is default_version's meets an installed
#      extension of the version after it
#      (pg_extension changed in its own transaction): FATAL 0A000 with the
#      hint to reconnect; nothing changed, and a new session works.
# TAP on stdout.  Uses the harness's cluster, or starts its own.

set -euo pipefail

. "$(dirname "$0")/../lib/pg.sh"

ORDERS_ROLE=ro_u13_orders_$$
BILLING_ROLE=ro_u13_billing_$$
DB=ro_u13_$$
DB2=ro_u13_squat_$$
FUNCTIONS_1_1='received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]),
	received_orders.consumer_positions(text),
	received_orders.restart_position(text, text, integer, bigint, bigint)'
FUNCTIONS_1_2='received_orders.consumer_positions(text, text),
	received_orders.report_feeder(text, text, text, integer, text, timestamptz, text, text[], integer[], bigint[], text, timestamptz, interval, interval),
	received_orders.record_high_watermarks(text, text, text[], integer[], bigint[])'

# as ROLE DB SQL — SQL as ROLE (SET ROLE); its output, verbose errors included
as() {
	pg_psql -At -d "$2" -c "\\set VERBOSITY verbose" -c "SET ROLE $1" -c "$3" 2>&1 || true
}

# try DB SQL — SQL as the superuser, verbose errors; its output and "exit N"
try() {
	local rc=0
	pg_psql -At -d "$1" -c "\\set VERBOSITY verbose" -c "$2" 2>&1 || rc=$?
	echo "exit $rc"
}

# position DB — "GROUP PARTITION NEXT_OFFSET OWNER" of every position
position() {
	pg_query "$1" "SELECT concat_ws(' ', p.consumer_group, p.kafka_partition, p.next_offset,
	                 coalesce(g.owner_role::text, '-'))
	            FROM received_orders.received_orders_positions p
	            LEFT JOIN received_orders.received_orders_consumer_groups g USING (consumer_group)
	           ORDER BY 1"
}

tap_plan 16

pg_ensure_cluster >&2
ro_on_exit "dropdb --if-exists --force $DB 2>/dev/null; dropdb --if-exists --force $DB2 2>/dev/null; psql -X -q -d postgres -c 'DROP ROLE IF EXISTS $ORDERS_ROLE' -c 'DROP ROLE IF EXISTS $BILLING_ROLE' >/dev/null 2>&1"

# --- 1. the claim window of the update from 1.1
pg_psql -d postgres -c "CREATE ROLE $ORDERS_ROLE" -c "CREATE ROLE $BILLING_ROLE" >/dev/null
pg_createdb "$DB" >/dev/null
pg_psql -d "$DB" -c "CREATE EXTENSION received_orders VERSION '1.1'" \
	-c "GRANT USAGE ON SCHEMA received_orders TO $ORDERS_ROLE, $BILLING_ROLE" \
	-c "GRANT EXECUTE ON FUNCTION $FUNCTIONS_1_1 TO $ORDERS_ROLE, $BILLING_ROLE" >/dev/null
out=$(as "$ORDERS_ROLE" "$DB" "SELECT count(*) FROM received_orders.materialize_orders('orders',
	ARRAY(SELECT convert_to(format('{\"orderId\": \"13000000-0000-4000-8000-%s\", \"externalReference\": \"R-%s\"}',
	                               lpad(i::text, 12, '0'), i), 'UTF8') FROM generate_series(0, 40) i),
	array_fill('orders'::text, ARRAY[41]), array_fill(0, ARRAY[41]),
	ARRAY(SELECT i::bigint FROM generate_series(0, 40) i), NULL)")
tap_is "$out|$(pg_query "$DB" "SELECT consumer_group || ' ' || next_offset FROM received_orders.received_orders_positions")" \
	"41|orders 41" "1.1: the orders team's role wrote group orders up to offset 41"

out=$(try "$DB" "ALTER EXTENSION received_orders UPDATE TO '1.2'")
tap_is "$out" "exit 0" "ALTER EXTENSION ... UPDATE TO '1.2' succeeds"
pg_psql -d "$DB" -c "GRANT EXECUTE ON FUNCTION $FUNCTIONS_1_2 TO $ORDERS_ROLE, $BILLING_ROLE" >/dev/null
out=$(try "$DB" "ALTER EXTENSION received_orders UPDATE TO '1.3'")
tap_is "$out|$(pg_query "$DB" "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")" \
	"exit 0|1.3" "then UPDATE TO '1.3' succeeds, before any owner is set (1.2's grants given first)"

out=$(as "$BILLING_ROLE" "$DB" "SELECT count(*) FROM received_orders.materialize_orders('orders', ARRAY[NULL]::bytea[],
	       ARRAY['orders'], ARRAY[0], ARRAY[1000040]::bigint[], NULL)")
tap_like "$out" "ERROR: +42501: permission denied for consumer group \"orders\"" \
	"billing's role cannot claim orders through the batch function (42501)"
tap_like "$out" "HINT: +A superuser names the role of the group's feeders: SELECT received_orders.set_consumer_group_owner\\('orders', 'ROLE'\\);" \
	"the hint names set_consumer_group_owner"
out=$(as "$BILLING_ROLE" "$DB" "SELECT received_orders.report_feeder('orders', 'm', 'h', 1, '1.3.0', now(),
	'running', NULL, NULL, NULL, NULL, NULL, interval '10 seconds')")
tap_like "$out" "ERROR: +42501: permission denied for consumer group \"orders\"" "nor through report_feeder"
tap_is "$(position "$DB")" "orders 0 41 -" "the position stays 41, the group without owner"
out=$(try "$DB" "SELECT received_orders.set_consumer_group_owner('orders', '$ORDERS_ROLE')")
tap_is "$(as "$ORDERS_ROLE" "$DB" "SELECT next_offset FROM received_orders.consumer_positions('orders')")|$(position "$DB")" \
	"41|orders 0 41 $ORDERS_ROLE" "after set_consumer_group_owner the orders team's role reads its position"
tap_like "$(as "$BILLING_ROLE" "$DB" "SELECT next_offset FROM received_orders.consumer_positions('orders')")" \
	"ERROR: +42501: permission denied for consumer group \"orders\"" "and billing's role is refused"

# --- 2. objects in the way of the update
pg_createdb "$DB2" >/dev/null
pg_psql -d "$DB2" -c "CREATE EXTENSION received_orders VERSION '1.2'" \
	-c "CREATE VIEW received_orders.quarantine_examples AS SELECT 1 AS mine" >/dev/null
out=$(try "$DB2" "ALTER EXTENSION received_orders UPDATE TO '1.3'")
tap_like "$out" "ERROR: +42710: cannot update received_orders to 1.3: view received_orders.quarantine_examples already exists" \
	"a DBA's view named like 1.3's is refused by name (42710)"
tap_like "$out" "HINT: +Rename or drop it .*exit [1-9]" "with a hint, and the update fails"
pg_psql -d "$DB2" -c "DROP VIEW received_orders.quarantine_examples" \
	-c "CREATE VIEW public.my_summary AS SELECT * FROM received_orders.quarantine_summary" >/dev/null
out=$(try "$DB2" "ALTER EXTENSION received_orders UPDATE TO '1.3'")
tap_like "$out" "ERROR: +2BP01: cannot update received_orders to 1.3: view public.my_summary depends on the view received_orders.quarantine_summary" \
	"a DBA's view on quarantine_summary is refused by name (2BP01)"
tap_is "$(pg_query "$DB2" "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")" 1.2 \
	"the database stays at 1.2"
pg_psql -d "$DB2" -c "DROP VIEW public.my_summary" >/dev/null
out=$(try "$DB2" "ALTER EXTENSION received_orders UPDATE TO '1.3'")
tap_is "$out" "exit 0" "without them the update succeeds"

# --- 3. a session whose library is older than the installed extension
# (the library's version is the installed control file's default_version)
LIBRARY=$(pg_query "$DB2" "SELECT default_version FROM pg_available_extensions WHERE name = 'received_orders'")
NEWER=${LIBRARY%%.*}.$((${LIBRARY#*.} + 1))
out=$(try "$DB2" "BEGIN;
	UPDATE pg_catalog.pg_extension SET extversion = '$NEWER' WHERE extname = 'received_orders';
	SELECT received_orders.materialize_order('{\"orderId\": \"13000000-0000-4000-8000-0000000000ff\", \"externalReference\": \"X\"}')")
tap_like "$out" "FATAL: +0A000: this session's received_orders library \\(version $LIBRARY\\) is older than the installed extension \\(version $NEWER\\).*HINT: +Connect again: a new session loads the installed library" \
	"the library of $LIBRARY meeting an installed $NEWER ends the session (FATAL 0A000) with the hint to reconnect"
tap_is "$(pg_query "$DB2" "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")|$(
	pg_query "$DB2" "SELECT received_orders.materialize_order('{\"orderId\": \"13000000-0000-4000-8000-0000000000ff\", \"externalReference\": \"X\"}')")" \
	"1.3|inserted" "nothing changed; a new session materializes"

tap_done
