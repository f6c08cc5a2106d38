# test/lib/orders.sh — shell helpers about received_orders' data, for suites
# that compare databases (dump/restore, upgrade)
#
# Sourced (bash) after pg.sh.  Functions:
#
#   ro_order_event N REF     JSON of a valid OrderReceived event for order N
#                            (orderId 00000000-0000-4000-8000-<N, 12 digits>)
#                            with externalReference REF and extra fields
#   ro_snapshot DB           every row of both tables, all columns, in a
#                            stable order; on error a line naming DB, so two
#                            failed snapshots never compare equal
#   ro_counts DB             "orders|quarantined"

# ro_order_event — the event text; the extra fields (nested array, escaped
# non-ASCII, null) check that payload is kept verbatim as jsonb
ro_order_event() {
	printf '{"orderId": "00000000-0000-4000-8000-%012d", "externalReference": "%s", "lines": [{"sku": "S-%d", "qty": %d}], "note": "caf\\u00e9", "gift": null}' \
		"$1" "$2" "$1" "$1"
}

# ro_snapshot DB [1.0] — row images of received_orders and its quarantine;
# with 1.0, of both tables' 1.0 columns only (to compare across an update)
ro_snapshot() {
	local q=q r=r
	[ "${2:-}" = 1.0 ] && q="(q.id, q.kafka_topic, q.kafka_partition, q.kafka_offset, q.kafka_key, q.raw_value,
		q.order_id, q.outcome, q.sqlstate, q.reason, q.quarantined_at)" &&
		r="(r.order_id, r.external_reference, r.payload, r.received_at)"
	pg_query "$1" "SELECT 'order ' || $r::text FROM received_orders.received_orders r ORDER BY order_id;
		SELECT 'quarantine ' || $q::text FROM received_orders.received_orders_quarantine q ORDER BY id" ||
		echo "snapshot of $1: query failed"
}

# ro_counts — how many orders and quarantined messages DB holds
ro_counts() {
	pg_query "$1" "SELECT (SELECT count(*) FROM received_orders.received_orders),
		(SELECT count(*) FROM received_orders.received_orders_quarantine)"
}
