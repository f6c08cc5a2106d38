#!/bin/bash
# 30-hung-commit-rebalance.t — health that a hung
# thread cannot fake.
#
# A COMMIT that waits for a synchronous standby that is not there
# (synchronous_standby_names naming a missing one, pg_auto_failover's
# default when its secondary is gone) is not covered by statement_timeout.
# When a second member joins, the first one's rebalance waits for its
# running batch first.  Without a deadline the main thread would hang in
# that wait, /healthz keep answering 200 "ok" (the state last published
# says so) and nothing be logged.  So every batch has a deadline
# (--statement-timeout-ms, 20 s here, and 10 s): past it the batch is cancelled
# (event=batch_deadline) and its COMMIT taken as result unknown, retried,
# never acknowledged; and /healthz follows a heartbeat the main loop must
# renew, so it turns 503 within --stall-timeout while the loop waits.  Once
# the standby setting is gone, both members go on and every order is
# stored exactly once.
#
# On a cluster of its own (the suite changes synchronous_standby_names).

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-30
PARTITIONS=4
STALL=8
FEEDER_ARGS=(--batch-size 20 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-ms 100 --retry-backoff-max-ms 1000 --statement-timeout-ms 20000
	--stall-timeout "$STALL" --metrics-listen 127.0.0.1:0)
plan 14

# health_says NAME WORD — NAME's /healthz answers 503 with WORD in its
# reason (every answer is kept in $E2E_TMP/health.NAME)
health_says() {
	local addr body
	addr=$(feeder_metrics_addr "$1") || return 1
	body=$(curl -s --max-time 2 -w ' %{http_code}' "http://$addr/healthz")
	printf '%s\n' "$body" >>"$E2E_TMP/health.$1"
	[[ $body == *"$2"*" 503" ]]
}

# commits_wait — a COMMIT of the feeder's role waits for a synchronous standby
commits_wait() {
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE usename = '$E2E_ROLE' AND wait_event = 'SyncRep'")" -gt 0 ]
}

# deadline_counted — the first member's /metrics counts a batch past its
# deadline (read again at every try: the counter is published when the main
# loop comes round, which may be after the log line)
deadline_counted() {
	[ "$(feeder_metric a batch_deadlines_total 2>/dev/null || echo 0)" -ge 1 ]
}

DB_DIR= # set by pg_start
pg_start DB_DIR >&2 || bail "could not start a dedicated PostgreSQL cluster"
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

produce_part 1 200 || bail "kcat could not produce"
feeder_start a "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "part 1: the first member consumes it" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
check "its /healthz answers 200" ro_wait_until 10 feeder_health_is a 200

# --- COMMITs wait for a synchronous standby that does not exist
sql "ALTER SYSTEM SET synchronous_standby_names = 'ro_missing_standby'" >/dev/null &&
	sql "SELECT pg_reload_conf()" >/dev/null || bail "could not set synchronous_standby_names"
# a few messages, so that the first member's lanes hold nothing else and it
# keeps polling Kafka: the rebalance reaches it while its COMMITs wait
produce_part 201 205 || bail "kcat could not produce"
check "the first member's COMMIT waits for the missing synchronous standby" ro_wait_until 20 commits_wait
feeder_start b "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
since=$SECONDS
check "while its rebalance waits for that COMMIT, the first member's /healthz turns 503 \"stuck\" within --stall-timeout ($STALL s) and a few seconds" \
	ro_wait_until $((STALL + 12)) health_says a stuck
diag "503 \"stuck\" after $((SECONDS - since)) s; /healthz said: $(sort -u "$E2E_TMP/health.a" | tr '\n' '|')"
check "the batch past its deadline is cancelled, logged as event=batch_deadline" \
	ro_wait_until 45 grep -q 'event=batch_deadline ' "$E2E_TMP/a.log"
check "its counter shows in /metrics" ro_wait_until 10 deadline_counted

# --- the standby setting goes away: everything goes on
sql "ALTER SYSTEM RESET synchronous_standby_names" >/dev/null &&
	sql "SELECT pg_reload_conf()" >/dev/null || bail "could not reset synchronous_standby_names"
produce_part 206 300 || bail "kcat could not produce"
check "both members consume everything once the COMMITs go through" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 90
check "the database's positions reach every partition's end" db_wait_caught_up "$GROUP" 30
check "the first member's /healthz answers 200 again" ro_wait_until 30 feeder_health_is a 200
check_exact_contents
feeder_stop a
is "$?" 0 "SIGTERM: the first member exits 0"
feeder_stop b
is "$?" 0 "SIGTERM: the second member exits 0"
