#!/bin/bash
# 27-pgbouncer-pool-of-one.t — behind a transaction
# pooler whose pool is smaller than the feeders' sessions.
#
# Debian's pgbouncer in pool_mode=transaction with default_pool_size=1: one
# server connection shared by two feeders of one group, two database
# sessions each.  Each session prepares the batch statement at connection;
# the second PREPARE lands on the server connection where the first one
# already made it.  A fixed name would meet 42P05 ("prepared statement ...
# already exists"), a configuration error (exit 3, nothing materialized),
# so the statement's name carries a digest of its text, and
# a statement of that name on a shared server session is the same
# statement: used as prepared (event=statement_shared).  Then pgbouncer
# replaces its server connection mid-stream (RECONNECT, as server_lifetime
# does): the statement is gone (26000) and the sessions go unprepared, as
# behind a larger pool (15-pgbouncer-and-classification.t).  Throughout:
# no exit, every order exactly once, every bad message quarantined once.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/lib/pgbouncer.sh
. "$RO_ROOT/test/lib/pgbouncer.sh"

E2E_TOPIC=orders
GROUP=e2e-27
PARTITIONS=4
FEEDER_ARGS=(--batch-size 10 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-ms 100 --retry-backoff-max-ms 1000)
plan 17

# both_alive — neither feeder has exited
both_alive() {
	feeder_alive a && feeder_alive b
}

# both_reported — both feeders have a member row (their status reports)
both_reported() {
	[ "$(sql "SELECT count(*) FROM received_orders.feeders WHERE consumer_group = '$GROUP'")" = 2 ]
}

# no_config_error — neither feeder logged a configuration error
no_config_error() {
	! grep -h 'event=database_config_error' "$E2E_TMP/a.log" "$E2E_TMP/b.log"
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
PGB_DIR= # set by pgb_start
pgb_start PGB_DIR transaction "$E2E_DB" "$E2E_ROLE" "$E2E_PASSWORD" 1 >&2 ||
	bail "could not start pgbouncer"
is "$(pgb_admin "$PGB_DIR" 'SHOW CONFIG' | awk -F'|' '$1 == "pool_mode" || $1 == "default_pool_size" { print $1 "=" $2 }' | sort | xargs)" \
	"default_pool_size=1 pool_mode=transaction" "pgbouncer runs in pool_mode=transaction with a pool of one server connection"

produce_part 1 200 || bail "kcat could not produce"
E2E_DSN=$(pgb_dsn "$PGB_DIR" "$E2E_DB" "$E2E_ROLE" "$E2E_PASSWORD")
feeder_start a "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}" --db-sessions 2
feeder_start b "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}" --db-sessions 2
check "two feeders of two sessions each through one server connection: the group consumes part 1" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 90
check "both feeders still run" both_alive
check "neither logged a configuration error (1.1: 42P05 at the second PREPARE, exit 3)" no_config_error
check "a session found the statement already prepared on the shared server connection and used it" \
	grep -q 'event=statement_shared .*sqlstate=42P05' "$E2E_TMP/a.log" "$E2E_TMP/b.log"
is "$(grep -hc 'event=db_connected' "$E2E_TMP/a.log" "$E2E_TMP/b.log" | awk '{ n += $1 } END { print (n >= 4) }')" 1 \
	"four database sessions connected through the pool of one"
# the status reports (on by default) went through the same server
# connection: their timeouts must be their transactions' own, not left on
# the server session for whoever the pooler hands it to next
check "the feeders reported themselves through the pool" ro_wait_until 30 both_reported
is "$(psql -X -q -A -t -d "$E2E_DSN" -c 'SHOW statement_timeout' -c 'SHOW lock_timeout' | xargs)" "0 0" \
	"a client of the pool finds the server session's statement_timeout and lock_timeout as they were (0)"

# --- the pooler's server connection replaced mid-stream
produce_part 201 300 || bail "kcat could not produce"
check "pgbouncer replaces its server connection (RECONNECT)" pgb_admin "$PGB_DIR" RECONNECT
produce_part 301 400 || bail "kcat could not produce"
check "after RECONNECT: the group consumes parts 2 and 3" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 90
check "both feeders still run" both_alive
check "still no configuration error" no_config_error
check_exact_contents
feeder_stop a
is "$?" 0 "SIGTERM: feeder a exits 0"
feeder_stop b
is "$?" 0 "SIGTERM: feeder b exits 0"
