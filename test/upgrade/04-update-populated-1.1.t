#!/bin/bash
# test/upgrade/04-update-populated-1.1.t — the update from 1.1 to 1.2 on a
# database a running 1.1 estate left, then the 1.2 feeder on it.
#
# A database installed at 1.1 (its frozen scripts) and a feeder's role with
# 1.1's documented grants.  A topic of two partitions holds a mixed stream
# (orders, redeliveries, conflicts, invalid events, tombstones); the role
# materializes part of it through 1.1's batch function, in batches, as the
# 1.1 feeder did, for two consumer groups: "orders" up to offset 120 of each
# partition, "audit" up to 60.  Then ALTER EXTENSION ... UPDATE TO '1.2',
# and:
#   - every order, quarantine row and position is kept as 1.1 left it;
#   - consumer_lag shows exactly the 1.1 positions, with high watermark, lag,
#     owner and writer NULL (nothing has reported yet); feeders is empty;
#     quarantine_summary counts 1.1's quarantine;
#   - pg_monitor reads the three views, a role without it (PUBLIC) is refused;
#   - the groups are entered unclaimed; the 1.2 feeder with only 1.1's grants
#     exits 3 naming the missing grant (docs/operations.md, "Upgrade from 1.1
#     to 1.2"); after the documented steps 2 and 3 it starts each partition
#     at the group's 1.1 position, reports itself with the default status
#     interval, consumes the rest exactly once, and consumer_lag gets the
#     high watermarks; the other group keeps its positions without them;
#   - the group rules apply to the pre-existing groups: another role is
#     refused the claimed group; the unclaimed one, which has positions, is
#     claimed by no role (the library of 1.3, which serves 1.2 until the
#     update, refuses it: 05-update-to-1.3-hostile-roles.t).
# TAP on stdout.  Uses the harness's cluster (or its own) and the
# development Kafka, through test/e2e/lib.sh.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"

PARTITIONS=2
PRODUCED=150 # messages per partition
E2E_TOPIC=orders-upgrade
GROUP=orders # consumed by 1.1 up to offset 120, then by the 1.2 feeder
GROUP_A_END=120
AUDIT=audit # consumed by 1.1 up to offset 60, no 1.2 feeder
AUDIT_END=60
OTHER=ro_upgrade_other_$$ # another application's role
MONITOR=ro_upgrade_monitor_$$
NOBODY=ro_upgrade_nobody_$$
# 1.1's grants of the feeder's role (docs/operations.md, 1.1)
FUNCTIONS_1_1='received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]),
	received_orders.consumer_positions(text),
	received_orders.restart_position(text, text, integer, bigint, bigint)'
# what 1.2's feeder needs more (step 2 of the upgrade)
FUNCTIONS_1_2='received_orders.consumer_positions(text, text),
	received_orders.report_feeder(text, text, text, integer, text, timestamptz, text, text[], integer[], bigint[], text, timestamptz, interval, interval),
	received_orders.record_high_watermarks(text, text, text[], integer[], bigint[])'
plan 30

# as ROLE SQL — run SQL as ROLE (SET ROLE, from the superuser's session),
# its errors on stdout
as() {
	psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$E2E_DB" -c "SET ROLE $1" -c "$2" 2>&1
}

# rows_1_1 — every order and quarantine row (1.1's columns: 1.2 adds some)
# as text, in a fixed order
rows_1_1() {
	sql "SELECT 'order ' || (r.order_id, r.external_reference, r.payload, r.received_at)::text
		  FROM received_orders.received_orders r ORDER BY order_id;
		SELECT 'quarantine ' || (q.id, q.kafka_topic, q.kafka_partition, q.kafka_offset, q.kafka_key,
		       q.raw_value, q.order_id, q.outcome, q.sqlstate, q.reason, q.quarantined_at,
		       q.kafka_key_bytes, q.raw_value_bytes, q.message_digest, q.envelope, q.kafka_headers,
		       q.legacy_copy)::text
		  FROM received_orders.received_orders_quarantine q ORDER BY id" || echo "rows: query failed"
}

# positions_1_1 — "GROUP TOPIC PARTITION NEXT_OFFSET UPDATED_AT" of every
# position, in order
positions_1_1() {
	sql "SELECT concat_ws(' ', consumer_group, kafka_topic, kafka_partition, next_offset, updated_at)
	       FROM received_orders.received_orders_positions ORDER BY 1" || echo "positions: query failed"
}

# consume_1_1 GROUP END — the feeder's role materializes offsets 0..END-1 of
# every partition for GROUP through 1.1's batch function, 25 messages a
# batch, one statement per batch in offset order (the first reference of an
# order must win, as it did in the stream)
consume_1_1() {
	psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$E2E_DSN" -v group="$1" -v end="$2" -v topic="$E2E_TOPIC" <<-EOF
		CREATE TEMP TABLE stream (kafka_partition integer, kafka_offset bigint, label text, value text);
		\copy stream FROM '$E2E_TMP/stream.1.1'
		SELECT format('SELECT count(*) FROM received_orders.materialize_orders(%L, %L::bytea[], %L::text[], %L::integer[], %L::bigint[], %L::bytea[])',
		              :'group',
		              array_agg(convert_to(nullif(value, ''), 'UTF8') ORDER BY kafka_offset),
		              array_agg(:'topic'::text ORDER BY kafka_offset),
		              array_agg(kafka_partition ORDER BY kafka_offset),
		              array_agg(kafka_offset ORDER BY kafka_offset),
		              array_agg(convert_to(label, 'UTF8') ORDER BY kafka_offset))
		  FROM stream WHERE kafka_offset < :end
		 GROUP BY kafka_partition, kafka_offset / 25
		 ORDER BY kafka_partition, kafka_offset / 25 \gexec
	EOF
}

# consume_both — the two groups of the 1.1 estate consume their parts
consume_both() {
	consume_1_1 "$GROUP" "$GROUP_A_END" >/dev/null && consume_1_1 "$AUDIT" "$AUDIT_END" >/dev/null
}

# reports_running — the feeder's member row: running, healthy, at the
# default report interval
reports_running() {
	[ "$(sql "SELECT count(*) FROM received_orders.feeders
	           WHERE consumer_group = '$GROUP' AND pid = ${FEEDER_PIDS[feeder]:-0}
	             AND state = 'running' AND healthy")" = 1 ]
}

# lag_of GROUP — "PARTITION POSITION HIGH_WATERMARK LAG OWNER WRITTEN_BY"
# of GROUP in consumer_lag (NULL as -; the feeder's member id as "member")
lag_of() {
	sql "SELECT concat_ws(' ', l.kafka_partition, l.position, coalesce(l.high_watermark::text, '-'),
	            coalesce(l.lag::text, '-'),
	            CASE WHEN l.owner IS NULL THEN '-' WHEN l.owner = f.member_id THEN 'member' ELSE l.owner END,
	            CASE WHEN l.written_by IS NULL THEN '-' WHEN l.written_by = f.member_id THEN 'member' ELSE l.written_by END)
	       FROM received_orders.consumer_lag l
	       LEFT JOIN received_orders.feeders f ON f.consumer_group = '$GROUP' AND f.pid = ${FEEDER_PIDS[feeder]:-0}
	      WHERE l.consumer_group = '$1' AND l.kafka_topic = '$E2E_TOPIC' ORDER BY l.kafka_partition"
}

# lag_caught_up — every partition of GROUP at lag 0 in consumer_lag, at the
# topic's end, owned and written by the feeder
lag_caught_up() {
	[ "$(lag_of "$GROUP")" = "$(printf '%s\n' "0 $PRODUCED $PRODUCED 0 member member" "1 $PRODUCED $PRODUCED 0 member member")" ]
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
pg_ensure_cluster >&2 || bail "no PostgreSQL cluster"
E2E_DB=ro_upgrade_populated_$$
E2E_ROLE=ro_upgrade_feeder11_$$
E2E_PASSWORD="pw-$RANDOM$RANDOM-secret"
E2E_DSN="host=$PGHOST port=$PGPORT dbname=$E2E_DB user=$E2E_ROLE password=$E2E_PASSWORD"
# the database before the roles holding grants in it (e2e_cleanup, run
# after this, drops it again and the feeder's role)
ro_on_exit "dropdb --if-exists --force $E2E_DB 2>/dev/null; psql -X -q -d postgres -c 'DROP ROLE IF EXISTS $OTHER' -c 'DROP ROLE IF EXISTS $MONITOR' -c 'DROP ROLE IF EXISTS $NOBODY' >/dev/null 2>&1"

check "version 1.1 installed, the feeder's role granted what the 1.1 feeder needs" \
	pg_psql -d postgres -c "CREATE DATABASE $E2E_DB" \
	-c "CREATE ROLE $E2E_ROLE LOGIN PASSWORD '$E2E_PASSWORD'" -c "CREATE ROLE $OTHER" \
	-c "CREATE ROLE $MONITOR IN ROLE pg_monitor" -c "CREATE ROLE $NOBODY" \
	-c "\\c $E2E_DB" -c "CREATE EXTENSION received_orders VERSION '1.1'" \
	-c "GRANT USAGE ON SCHEMA received_orders TO $E2E_ROLE, $OTHER, $NOBODY" \
	-c "GRANT EXECUTE ON FUNCTION $FUNCTIONS_1_1 TO $E2E_ROLE, $OTHER"
tap_last_ok || bail "could not install version 1.1"

# --- a running 1.1 estate: the stream, consumed by two groups through 1.1
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 $PRODUCED
	cp "$E2E_TMP/queue.$p" "$E2E_TMP/values.$p"
done
flush || bail "kcat could not produce"
# "PARTITION OFFSET LABEL VALUE" (tab-separated) of every message, from Kafka
kafka_offsets_map "$E2E_TOPIC" >"$E2E_TMP/offsets.map"
awk -F'\t' 'FILENAME == ARGV[1] { split($0, f, " "); at[f[3]] = f[1] "\t" f[2]; next }
	($1 in at) { print at[$1] "\t" $1 "\t" $2 }' "$E2E_TMP/offsets.map" "$E2E_TMP"/values.* \
	>"$E2E_TMP/stream.1.1"
is "$(wc -l <"$E2E_TMP/stream.1.1")" $((PARTITIONS * PRODUCED)) "every message produced is in Kafka, its offset known"
check "the feeder's role materializes the stream through 1.1's batch function for two groups" consume_both
is "$(sql "SELECT concat_ws(' ', consumer_group, kafka_partition, next_offset) FROM received_orders.received_orders_positions
            ORDER BY consumer_group, kafka_partition")|$(sql "SELECT count(*) > 0 FROM received_orders.received_orders")|$(
		sql "SELECT string_agg(outcome || ' ' || n, ', ' ORDER BY outcome) FROM (SELECT outcome, count(*) n
		       FROM received_orders.received_orders_quarantine GROUP BY outcome) q")" \
	"$(printf '%s\n' "$AUDIT 0 $AUDIT_END" "$AUDIT 1 $AUDIT_END" "$GROUP 0 $GROUP_A_END" "$GROUP 1 $GROUP_A_END")|t|conflict 2, rejected 2" \
	"1.1 holds the positions of both groups, orders and a quarantine (a conflict and an invalid event per partition)"
ROWS_BEFORE=$(rows_1_1)
POSITIONS_BEFORE=$(positions_1_1)

# --- the update
check "ALTER EXTENSION received_orders UPDATE TO '1.2' succeeds" \
	sql "ALTER EXTENSION received_orders UPDATE TO '1.2'"
is "$(sql "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")" 1.2 "the installed version is 1.2"
is "$(rows_1_1)" "$ROWS_BEFORE" "every order and quarantine row is kept with its 1.1 content"
is "$(positions_1_1)" "$POSITIONS_BEFORE" "every position of both groups is kept (offset and time of its last batch)"
is "$(sql "SELECT concat_ws(' ', consumer_group, kafka_topic, kafka_partition, position, last_batch_at,
                  coalesce(high_watermark::text, '-'), coalesce(lag::text, '-'), coalesce(owner, '-'),
                  coalesce(written_by, '-'))
             FROM received_orders.consumer_lag ORDER BY 1")" \
	"$(sed 's/$/ - - - -/' <<<"$POSITIONS_BEFORE")" \
	"consumer_lag shows every 1.1 position and nothing else; high watermark, lag, owner and writer NULL until a feeder reports"
is "$(sql "SELECT count(*) FROM received_orders.feeders")" 0 "feeders is empty (no 1.2 feeder has reported)"
is "$(sql "SELECT string_agg(concat_ws(' ', outcome, sqlstate, messages), ', ' ORDER BY outcome, sqlstate)
             FROM (SELECT outcome, sqlstate, sum(messages) AS messages FROM received_orders.quarantine_summary
                    GROUP BY outcome, sqlstate) s")|$(sql "SELECT sum(messages) FROM received_orders.quarantine_summary")" \
	"$(sql "SELECT string_agg(concat_ws(' ', outcome, sqlstate, n), ', ' ORDER BY outcome, sqlstate)
              FROM (SELECT outcome, sqlstate, count(*) AS n FROM received_orders.received_orders_quarantine
                     GROUP BY outcome, sqlstate) q")|$(sql "SELECT count(*) FROM received_orders.received_orders_quarantine")" \
	"quarantine_summary counts 1.1's quarantine by outcome and SQLSTATE, every row once"
is "$(as "$MONITOR" "SELECT (SELECT count(*) FROM received_orders.feeders) || ' '
                        || (SELECT count(*) FROM received_orders.consumer_lag) || ' '
                        || (SELECT sum(messages) FROM received_orders.quarantine_summary)")" \
	"0 4 4" "a member of pg_monitor reads the three views"
is "$(for v in feeders consumer_lag quarantine_summary; do
		as "$NOBODY" "SELECT count(*) FROM received_orders.$v" | sed -n 's/^ERROR: *//p'
	done)|$(sql "SELECT count(*) FROM unnest(ARRAY['feeders', 'consumer_lag', 'quarantine_summary']) v
	              WHERE has_table_privilege('public', 'received_orders.' || v, 'SELECT')")" \
	"permission denied for view feeders
permission denied for view consumer_lag
permission denied for view quarantine_summary|0" \
	"a role without pg_monitor (PUBLIC) reads none of them"
is "$(sql "SELECT consumer_group || ' ' || coalesce(owner_role::text, '-') || ' ' || coalesce(kafka_cluster_id, '-')
             FROM received_orders.received_orders_consumer_groups ORDER BY 1")" \
	"$(printf '%s\n' "$AUDIT - -" "$GROUP - -")" "the update enters both groups unclaimed, without a Kafka cluster"

# --- the 1.2 feeder: first with 1.1's grants only, then after the documented steps
feeder_start early "$E2E_TOPIC" "$GROUP"
feeder_wait_exit early 60 || { feeder_kill early; FEEDER_RC=running; }
is "$FEEDER_RC|$(log_events early database_config_error | grep -c 'step=privileges sqlstate=42501 .*consumer_positions(text, text)')" \
	"3|1" "the 1.2 feeder with 1.1's grants only exits 3 naming consumer_positions(text, text)"
check "the documented steps: the 1.2 functions granted, the group handed to the feeder's role" \
	sql "GRANT EXECUTE ON FUNCTION $FUNCTIONS_1_2 TO $E2E_ROLE;
	     SELECT received_orders.set_consumer_group_owner('$GROUP', '$E2E_ROLE')"
mixed_stream 0 $((PRODUCED + 1)) $((PRODUCED + 20))
mixed_stream 1 $((PRODUCED + 1)) $((PRODUCED + 20))
PRODUCED=$((PRODUCED + 20))
flush || bail "kcat could not produce"
rm -f "$E2E_TMP/offsets.map" # check_below_committed and others read it fresh
feeder_start feeder "$E2E_TOPIC" "$GROUP" --batch-size 20 --batch-wait-ms 20
check "the feeder reports itself: running and healthy" ro_wait_until 60 reports_running
check "the database catches up with the topic" db_wait_caught_up "$GROUP" 120
is "$(e2e_start_positions feeder)" "$(printf '%s\n' "0 $GROUP_A_END database" "1 $GROUP_A_END database")" \
	"it starts each partition at the group's 1.1 position (source=database)"
check_exact_contents
is "$(sql "SELECT report_interval || ' ' || (version IS NOT NULL) || ' ' || (host IS NOT NULL)
             FROM received_orders.feeders WHERE pid = ${FEEDER_PIDS[feeder]:-0}")" "00:00:10 true true" \
	"its member row carries the default report interval (10 s), its version and host"
check "consumer_lag gets the high watermarks: every partition at lag 0, owned and written by the feeder" \
	ro_wait_until 30 lag_caught_up
is "$(lag_of "$AUDIT")" "$(printf '%s\n' "0 $AUDIT_END - - - -" "1 $AUDIT_END - - - -")" \
	"the other group keeps its 1.1 positions, with no high watermark (no feeder of it reports)"

# --- the group rules on the groups 1.1 left
is "$(as "$OTHER" "SELECT count(*) FROM received_orders.consumer_positions('$GROUP')" | sed -n 's/^ERROR: *//p')" \
	"permission denied for consumer group \"$GROUP\"" "another role is refused the group handed to the feeder's role"
is "$(as "$OTHER" "SELECT count(*) FROM received_orders.consumer_positions('$AUDIT')" | sed -n 's/^ERROR: *//p')|$(
	sql "SELECT coalesce(owner_role::text, '-') FROM received_orders.received_orders_consumer_groups WHERE consumer_group = '$AUDIT'")" \
	"permission denied for consumer group \"$AUDIT\"|-" "the unclaimed group, which has positions, is not claimed by the first role that uses it (the library of 1.3 refuses it on 1.2 too)"
is "$(as "$E2E_ROLE" "SELECT count(*) FROM received_orders.consumer_positions('$AUDIT', 'ro-dev-kafka')" |
	sed -n 's/^ERROR: *//p')" \
	"permission denied for consumer group \"$AUDIT\"" "nor by the feeder's role: it waits for set_consumer_group_owner"

FEEDER_PID=${FEEDER_PIDS[feeder]:-0}
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
is "$(sql "SELECT state || ' ' || healthy FROM received_orders.feeders WHERE pid = $FEEDER_PID")" \
	"stopped false" "its member row says stopped"
tap_done
