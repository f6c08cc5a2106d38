#!/bin/bash
# 15-pgbouncer-and-classification.t — errors classified by what they mean:
# the holes a connection pooler, a version skew and a password rotation
# find.
#
# 1. pgbouncer in transaction mode: the feeder's prepared batch statement
#    lives on one server connection, and the next transaction may run on
#    another (26000, prepared statement does not exist), which a retry on
#    the same footing would meet for ever.  Through Debian's pgbouncer (pool_mode=transaction, servers
#    taken in turn, several in the pool) the feeder must work end to end;
#    when pgbouncer replaces its server connections (RECONNECT on the admin
#    console, as server_lifetime does) the statement is lost again: the
#    feeder switches to unprepared statements for good, logged once per
#    database session as event=statement_unprepared, with no 26000 after
#    it on that session.
# 2. A result of the wrong shape after a successful COMMIT (version skew):
#    the batch function replaced by a SQL function returning zero rows.
#    Retried, it would commit each time, for ever; it exits 3 with
#    event=database_config_error and a hint about the versions, nothing
#    acknowledged.
# 3. A password rotation (or a directory blip) once the feeder has run: its
#    role's password changes and its session is terminated; reconnecting
#    fails with 28P01, which is no configuration error (exit 3): it is
#    retried with backoff, logged at error level, /healthz 503, and the
#    feeder recovers when the password is set back.
# 4. The same while the feeder's partitions wait for their start positions
#    (assigned after the password changed): the 28P01 must be logged at
#    error level too, not only a first warning.
#
# Runs on a cluster of its own whose pg_hba.conf demands scram-sha-256 from
# the feeder's role (as 07-least-privilege.t).  On 1.0
# (RO_FEEDER_BIN=/tmp/ro-1.0/feeder/received-orders-feeder) part 1 stalls on
# 26000, part 2 never exits and part 3 exits 3 at the reconnection.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/lib/pgbouncer.sh
. "$RO_ROOT/test/lib/pgbouncer.sh"

E2E_TOPIC=orders
GROUP=e2e-15
PARTITIONS=3
BATCH_FUNCTION='received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[])'
BATCH_FUNCTION_10='received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[])'
FEEDER_ARGS=(--batch-size 10 --batch-wait-ms 20 -X auto.commit.interval.ms=200
	--retry-backoff-ms 100 --retry-backoff-max-ms 1000)
plan 36

# committed_offsets — "TOPIC PARTITION COMMITTED" of the group (without
# the high watermark, which grows as messages are produced)
committed_offsets() {
	kafka_committed "$GROUP" "$E2E_TOPIC" | awk '{ print $1, $2, $3 }'
}

# through_pgbouncer N — N sessions of the feeder's role at once through
# pgbouncer, each in a transaction of half a second, so that its pool holds
# N server connections
through_pgbouncer() {
	local i pids=() rc=0
	for ((i = 0; i < $1; i++)); do
		PGPASSWORD=$E2E_PASSWORD psql -X -q -w -At -h 127.0.0.1 -p "$(pgb_port "$PGB_DIR")" \
			-U "$E2E_ROLE" -d "$E2E_DB" -c 'SELECT pg_sleep(0.5)' >/dev/null &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i" || rc=1
	done
	return "$rc"
}

# unprepared_once NAME — the statement found gone once per database session
# (batch_failed with 26000 names its session when it is not the first),
# switched to unprepared statements for good: one statement_unprepared
# line per such failure, and no session failed with 26000 twice
unprepared_once() {
	awk '
		/event=statement_unprepared/ { n++; next }
		/event=batch_failed .*sqlstate=26000/ {
			s = "0"
			if (match($0, /session=[0-9]+/)) s = substr($0, RSTART + 8, RLENGTH - 8)
			if (seen[s]++) { print "26000 again on session " s ": " $0; bad = 1 }
			failed++
		}
		END {
			if (n < 1 || n != failed) { print n + 0 " statement_unprepared lines for " failed + 0 " failures with 26000"; bad = 1 }
			exit bad
		}' "$E2E_TMP/$1.log"
}

# role_sessions — sessions of the feeder's role in the suite's database
role_sessions() {
	sql "SELECT count(*) FROM pg_stat_activity WHERE usename = '$E2E_ROLE' AND datname = '$E2E_DB'"
}

# config_error_names_versions — the feeder "shape" logged
# event=database_config_error with a hint about versions
config_error_names_versions() {
	grep 'event=database_config_error' "$E2E_TMP/shape.log" | grep -Eqi 'hint=.*version'
}

# log_has NAME REGEX — NAME's log matches the extended REGEX
log_has() {
	grep -Eq -- "$2" "$E2E_TMP/$1.log"
}

# auth_failures N — the feeder "pw" has logged N error lines naming 28P01
auth_failures() {
	[ "$(grep -c 'level=error .*28P01' "$E2E_TMP/pw.log")" -ge "$1" ]
}

DB_DIR= # set by pg_start
pg_start DB_DIR >&2 || bail "could not start a dedicated PostgreSQL cluster"
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
{
	printf 'local all %s scram-sha-256\nhost all %s 127.0.0.1/32 scram-sha-256\n' "$E2E_ROLE" "$E2E_ROLE"
	cat "$DB_DIR/data/pg_hba.conf"
} >"$E2E_TMP/pg_hba.conf"
cat "$E2E_TMP/pg_hba.conf" >"$DB_DIR/data/pg_hba.conf"
pg_ctl_as reload || bail "could not reload pg_hba.conf"
check "the feeder's role holds only USAGE on the schema and EXECUTE on the functions the feeder calls" \
	e2e_role_is_least_privilege
if [ -n "${RO_FEEDER_BIN:-}" ]; then
	# the older feeder calls the batch function without a consumer group
	sql "GRANT EXECUTE ON FUNCTION $BATCH_FUNCTION_10 TO \"$E2E_ROLE\""
fi
DIRECT_DSN=$E2E_DSN

# --- 1. through pgbouncer in transaction mode
PGB_DIR= # set by pgb_start
pgb_start PGB_DIR transaction "$E2E_DB" "$E2E_ROLE" "$E2E_PASSWORD" >&2 ||
	bail "could not start pgbouncer"
is "$(pgb_admin "$PGB_DIR" 'SHOW CONFIG' | awk -F'|' '$1 == "pool_mode" { print $2 }')" transaction \
	"pgbouncer runs in pool_mode=transaction"
check "four sessions at once through pgbouncer: its pool holds several server connections" \
	through_pgbouncer 4
produce_part 1 300 || bail "kcat could not produce"
E2E_DSN=$(pgb_dsn "$PGB_DIR" "$E2E_DB" "$E2E_ROLE" "$E2E_PASSWORD")
feeder_start bouncer "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
E2E_DSN=$DIRECT_DSN
check "through pgbouncer (transaction mode): the feeder consumes part 1" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check "pgbouncer replaces its server connections (RECONNECT)" pgb_admin "$PGB_DIR" RECONNECT
produce_part 301 600 || bail "kcat could not produce"
check "through pgbouncer, after RECONNECT: the feeder consumes part 2" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check "the lost prepared statement (26000) switched the feeder to unprepared statements once, for good" \
	unprepared_once bouncer
tap_last_ok || diag "26000 lines: $(grep -c 'sqlstate=26000' "$E2E_TMP/bouncer.log")"
check_exact_contents
feeder_stop bouncer
is "$?" 0 "SIGTERM: the feeder behind pgbouncer exits 0"
pgb_stop "$PGB_DIR"
ro_wait_until 10 test "$(role_sessions)" = 0 || diag "sessions of the feeder's role remain: $(role_sessions)"

# --- 2. a result of the wrong shape after a successful COMMIT
for f in "$BATCH_FUNCTION" "$BATCH_FUNCTION_10"; do
	sql "SELECT pg_get_functiondef('$f'::regprocedure)" >>"$E2E_TMP/functions.sql"
	printf ';\n' >>"$E2E_TMP/functions.sql"
done
psql -X -q -v ON_ERROR_STOP=1 -d "$E2E_DB" -v f1="$BATCH_FUNCTION" -v f2="$BATCH_FUNCTION_10" >&2 <<-'EOF' ||
	SELECT format('CREATE OR REPLACE FUNCTION received_orders.materialize_orders(%s)
	                 RETURNS TABLE ("position" integer, order_id uuid, outcome received_orders.materialize_outcome,
	                                sqlstate text, message text)
	                 LANGUAGE sql AS %L',
	              pg_get_function_arguments(f::regprocedure),
	              'SELECT 1, NULL::uuid, NULL::received_orders.materialize_outcome, NULL::text, NULL::text WHERE false')
	  FROM unnest(ARRAY[:'f1', :'f2']) AS f \gexec
	EOF
	bail "could not replace the batch functions"
committed_offsets >"$E2E_TMP/committed.part2"
rows_part2=$(rows)
produce_part 601 700 || bail "kcat could not produce"
feeder_start shape "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
if feeder_wait_exit shape 20; then
	diag "the feeder exited with status $FEEDER_RC"
	[ "$FEEDER_RC" -eq 3 ]
	tap_ok $? "the batch function returns zero rows: the feeder exits 3 within 20 s"
else
	tap_ok 1 "the batch function returns zero rows: the feeder exits 3 within 20 s"
	diag "still running after 20 s: $(grep -c event=batch_failed "$E2E_TMP/shape.log") batch_failed lines" \
		"$(grep event=batch_failed "$E2E_TMP/shape.log" | tail -n 1)"
	feeder_kill shape
fi
check "event=database_config_error with a hint about the extension's and the feeder's versions" \
	config_error_names_versions
check "nothing of part 3 is acknowledged" cmp -s "$E2E_TMP/committed.part2" <(committed_offsets)
is "$(rows)" "$rows_part2" "nothing of part 3 is stored"
psql -X -q -v ON_ERROR_STOP=1 -d "$E2E_DB" -f "$E2E_TMP/functions.sql" >&2 ||
	bail "could not restore the batch functions"

# --- 3. the password rotates while the feeder runs
feeder_start pw "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}" --metrics-listen 127.0.0.1:0
check "batch function restored: a feeder connected directly consumes part 3" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
sql "ALTER ROLE \"$E2E_ROLE\" PASSWORD 'rotated-$RANDOM$RANDOM'"
terminated=$(sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                   WHERE usename = '$E2E_ROLE' AND datname = '$E2E_DB'")
check "password changed, the feeder's sessions terminated ($terminated)" test "$terminated" -ge 1
committed_offsets >"$E2E_TMP/committed.part3"
produce_part 701 900 || bail "kcat could not produce"
check "reconnecting fails with 28P01, logged at error level, retried (3 times)" \
	ro_wait_until 30 auth_failures 3
check "the feeder does not exit on an authentication failure once it has run" feeder_alive pw
check "/healthz answers 503 while it cannot reach the database" ro_wait_until 10 feeder_health_is pw 503
check "nothing of part 4 is acknowledged meanwhile" cmp -s "$E2E_TMP/committed.part3" <(committed_offsets)
sql "ALTER ROLE \"$E2E_ROLE\" PASSWORD '$E2E_PASSWORD'"
check "password set back: the same feeder reconnects and consumes to the end within 20 s" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 20
check "/healthz answers 200 again" ro_wait_until 10 feeder_health_is pw 200
check_exact_contents
check "its output never shows a password" log_has_no "$E2E_PASSWORD" pw
feeder_stop pw
is "$?" 0 "SIGTERM: the feeder exits 0"

# --- 4. the same while its partitions wait for their start positions: a
# member killed with kill -9 holds the group's join for its session
# timeout; the new feeder connects, then the password rotates and its
# session ends; once assigned, it needs the positions from the database
feeder_start victim "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
ro_wait_until 30 log_has victim 'event=partitions_assigned' || bail "the feeder victim got no partitions"
feeder_kill victim
feeder_start waiting "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}" --metrics-listen 127.0.0.1:0
ro_wait_until 20 log_has waiting 'event=db_connected' || bail "the feeder waiting did not connect"
log_has waiting 'event=partitions_assigned' && diag "waiting was assigned before the password rotated: part 4 proves less"
sql "ALTER ROLE \"$E2E_ROLE\" PASSWORD 'rotated-$RANDOM$RANDOM'"
terminated=$(sql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                   WHERE usename = '$E2E_ROLE' AND datname = '$E2E_DB'")
check "a new feeder has connected; the password changes and its sessions are terminated ($terminated)" \
	test "$terminated" -ge 1
produce_part 901 1000 || bail "kcat could not produce"
check "assigned, its partitions wait for start positions: the 28P01 at reconnection is logged at error level" \
	ro_wait_until 20 log_has waiting 'level=error .*28P01'
tap_last_ok || diag "its lines since the start: $(grep -v 'event=stats' "$E2E_TMP/waiting.log" | cut -c1-220 | tail -n 6)"
check "it stays up, /healthz 503" ro_wait_until 10 feeder_health_is waiting 503
sql "ALTER ROLE \"$E2E_ROLE\" PASSWORD '$E2E_PASSWORD'"
check "password set back: it gets its start positions and consumes to the end within 20 s" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 20
feeder_stop waiting
is "$?" 0 "SIGTERM: the feeder exits 0"
check_exact_contents
tap_done
