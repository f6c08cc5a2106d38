#!/bin/bash
# 32-status-from-sql.t — the feeders report themselves: two
# feeders of one group on a 4-partition topic both appear in
# received_orders.feeders, healthy and running; once caught up,
# received_orders.consumer_lag shows every partition with lag 0 and, as its
# owner, the feeder whose log says it holds it.  A kill -9 of one: its row
# turns unhealthy after three report intervals (--status-interval 1), the
# other takes its partitions and the view names it as their owner.  A
# table lock held by another session while messages arrive: the batches
# cannot commit, the lag grows in consumer_lag (from the member's reports),
# and it shrinks to 0 once the lock is gone.  A clean stop leaves the
# member "stopped" and unhealthy.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

PARTITIONS=4
PER_PARTITION=200
GROUP=e2e-32
E2E_TOPIC=orders-status
COMMON_ARGS=(--batch-size 50 --batch-wait-ms 20 --stats-interval 1 --status-interval 1
	-X auto.commit.interval.ms=200)
plan 19

# member NAME — the member id of a running feeder in the view (by its pid)
member() {
	sql "SELECT member_id FROM received_orders.feeders
	      WHERE consumer_group = '$GROUP' AND pid = ${FEEDER_PIDS[$1]:-0}"
}

# both_healthy — two members of the group, both healthy and running
both_healthy() {
	[ "$(sql "SELECT count(*) FROM received_orders.feeders
	           WHERE consumer_group = '$GROUP' AND healthy AND state = 'running'")" = 2 ]
}

# owned_by NAME — the partitions consumer_lag names NAME's member as owner
owned_by() {
	sql "SELECT l.kafka_partition FROM received_orders.consumer_lag l
	       JOIN received_orders.feeders f ON f.consumer_group = l.consumer_group AND f.member_id = l.owner
	      WHERE l.consumer_group = '$GROUP' AND f.pid = ${FEEDER_PIDS[$1]:-0}
	      ORDER BY 1"
}

# lag_zero_owned — every partition at lag 0 and owned by a healthy member
lag_zero_owned() {
	[ "$(sql "SELECT count(*) FROM received_orders.consumer_lag
	           WHERE consumer_group = '$GROUP' AND lag = 0 AND owner IS NOT NULL")" = $PARTITIONS ]
}

# owners_match NAME... — consumer_lag's owners are what the feeders' logs say
owners_match() {
	local n
	for n in "$@"; do
		[ "$(owned_by "$n" | tr '\n' ' ')" = "$(feeder_assignment "$n" | tr '\n' ' ')" ] || return 1
	done
}

# unhealthy MEMBER — the member's row says healthy = false
unhealthy() {
	[ "$(sql "SELECT healthy FROM received_orders.feeders WHERE member_id = '$1'")" = f ]
}

# holds_all NAME — the feeder holds every partition (its log)
holds_all() {
	[ "$(feeder_assignment "$1" | tr '\n' ' ')" = "$(seq 0 $((PARTITIONS - 1)) | tr '\n' ' ')" ]
}

# total_lag — the group's lag summed over its partitions
total_lag() {
	sql "SELECT coalesce(sum(lag), -1) FROM received_orders.consumer_lag WHERE consumer_group = '$GROUP'"
}

# lag_above N — the group's lag exceeds N
lag_above() {
	(($(total_lag) > $1))
}

# lock_held — the locking session holds its lock (it sleeps in it)
lock_held() {
	[ "$(sql "SELECT count(*) FROM pg_stat_activity
	           WHERE application_name = 'e2e-32-lock' AND wait_event = 'PgSleep'")" = 1 ]
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on the feeder's functions (report_feeder included)" \
	e2e_role_is_least_privilege

for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 $PER_PARTITION
done
flush || bail "kcat could not produce"

feeder_start a "$E2E_TOPIC" "$GROUP" "${COMMON_ARGS[@]}"
feeder_start b "$E2E_TOPIC" "$GROUP" "${COMMON_ARGS[@]}"
check "both feeders appear in received_orders.feeders, healthy and running" \
	ro_wait_until 60 both_healthy
check "the database catches up with the topic" db_wait_caught_up "$GROUP" 120
check "consumer_lag: every partition at lag 0, owned by a healthy member" \
	ro_wait_until 60 lag_zero_owned
check "consumer_lag's owners are the partitions each feeder's log says it holds" \
	ro_wait_until 30 owners_match a b
diag "a ($(member a)) owns $(owned_by a | tr '\n' ' '); b ($(member b)) owns $(owned_by b | tr '\n' ' ')"
is "$(sql "SELECT count(*) FROM received_orders.received_orders_positions p
             JOIN received_orders.feeders f ON f.consumer_group = p.consumer_group AND f.member_id = p.member_id
            WHERE p.consumer_group = '$GROUP' AND p.high_watermark = p.next_offset")" $PARTITIONS \
	"each batch's transaction recorded its partition's high watermark and member with the position"
is "$(sql "SELECT count(*) FROM received_orders.feeders WHERE consumer_group = '$GROUP'
             AND host IS NOT NULL AND version IS NOT NULL AND started_at <= last_seen
             AND report_interval = interval '1 second' AND last_seen_age < interval '4 seconds'")" 2 \
	"each row carries host, version, started_at and its report interval, seen within three intervals"

# --- kill -9 of a: unhealthy after three intervals, b owns every partition
A_MEMBER=$(member a)
[ -n "$A_MEMBER" ] || bail "feeder a has no member row"
feeder_kill a
check "the killed member turns unhealthy (no report for three intervals)" \
	ro_wait_until 30 unhealthy "$A_MEMBER"
check "feeder b takes every partition over (its log)" ro_wait_until 90 holds_all b
check "consumer_lag names feeder b as the owner of every partition" \
	ro_wait_until 30 owners_match b
is "$(owned_by a)" "" "the killed member owns no partition in consumer_lag"

# --- a lock on the table while messages arrive: lag grows, then 0
PGAPPNAME=e2e-32-lock psql -X -q -d "$E2E_DB" \
	-c "BEGIN; LOCK TABLE received_orders.received_orders IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(300); COMMIT" \
	>/dev/null 2>&1 &
LOCK_PID=$!
ro_on_exit "kill $LOCK_PID 2>/dev/null"
ro_wait_until 30 lock_held || bail "the locking session did not take its lock"
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p $((PER_PARTITION + 1)) $((PER_PARTITION + 100))
done
flush || bail "kcat could not produce"
check "while the table is locked, consumer_lag's lag grows (from the member's reports)" \
	ro_wait_until 60 lag_above 200
diag "lag while locked: $(total_lag)"
is "$(sql "SELECT state FROM received_orders.feeders WHERE member_id = '$(member b)'")" running \
	"the member still reports itself while its batches wait for the lock"
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'e2e-32-lock'" >/dev/null
wait "$LOCK_PID" 2>/dev/null
check "after the lock is gone the lag shrinks to 0 on every partition" \
	ro_wait_until 120 lag_zero_owned
check_exact_contents

# --- a clean stop: "stopped", not healthy, no partition
B_MEMBER=$(member b)
feeder_stop b
is "$?" 0 "SIGTERM, feeder b exits 0"
is "$(sql "SELECT state || ' ' || healthy || ' ' || assigned_partitions FROM received_orders.feeders
           WHERE member_id = '$B_MEMBER'")" "stopped false 0" \
	"a clean stop leaves the member stopped, unhealthy, with no partition"
tap_done
