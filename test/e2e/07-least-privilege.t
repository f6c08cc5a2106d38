#!/bin/bash
# 07-least-privilege.t — the feeder needs nothing beyond USAGE on the schema
# and EXECUTE on materialize_orders (the overload with a consumer group),
# consumer_positions and restart_position, and a configuration or permission
# problem stops it at once, non-zero, with a message naming the problem
# (42501, 28P01, 3D000) and never the password.
#
# Runs on a cluster of its own (test/lib/pg.sh) whose pg_hba.conf demands
# scram-sha-256 from the feeder's role, so a wrong password is refused.
# While a privilege is missing nothing may be acknowledged: the committed
# offsets stay put, and once the grant is back the feeder picks up exactly
# where it was.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-07
# the batch function the feeder calls (with its consumer group)
BATCH_FUNCTION='received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[])'
FEEDER_ARGS=(--batch-size 20 --batch-wait-ms 50)
plan 27

# fails_fast NAME — the feeder exits on its own within 20 s, non-zero
# (call it in the suite's shell, not in a subshell: it reaps the process)
fails_fast() {
	feeder_wait_exit "$1" 20 || {
		diag "$1 still runs after 20 s"
		feeder_kill "$1"
		return 1
	}
	diag "$1 exited with status $FEEDER_RC"
	[ "$FEEDER_RC" -ne 0 ]
}

# log_has NAME REGEX — the feeder's log matches the extended REGEX
log_has() {
	grep -Eq -- "$2" "$E2E_TMP/$1.log"
}

# feeder_dsn_with KEY=VALUE — the suite's DSN with one setting replaced
feeder_dsn_with() {
	local key=${1%%=*}
	sed -E "s/(^| )$key=[^ ]*/\\1$1/" <<<"$E2E_DSN"
}

# produce_orders FIRST LAST — orders FIRST..LAST on partitions 0 and 1
produce_orders() {
	local n
	for ((n = $1; n <= $2; n++)); do
		msg $((n % 2)) "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
	done
	flush
}

DB_DIR= # set by pg_start
pg_start DB_DIR >&2 || bail "could not start a dedicated PostgreSQL cluster"
kafka_start 1 "$E2E_TOPIC:2" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

# the feeder's role must authenticate with its password (scram-sha-256)
{
	printf 'local all %s scram-sha-256\nhost all %s 127.0.0.1/32 scram-sha-256\n' "$E2E_ROLE" "$E2E_ROLE"
	cat "$DB_DIR/data/pg_hba.conf"
} >"$E2E_TMP/pg_hba.conf"
cat "$E2E_TMP/pg_hba.conf" >"$DB_DIR/data/pg_hba.conf"
pg_ctl_as reload || bail "could not reload pg_hba.conf"

check "the feeder's role holds only USAGE on the schema and EXECUTE on materialize_orders (with a group), consumer_positions and restart_position" \
	e2e_role_is_least_privilege
check "the feeder's role cannot log in without its password" \
	bash -c '! PGPASSWORD= psql -X -w -d "$1" -U "$2" -c "SELECT 1" >/dev/null 2>&1' _ "$E2E_DB" "$E2E_ROLE"

# --- with exactly these privileges, the feeder works
produce_orders 1 200 || bail "kcat could not produce"
feeder_start ok "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "with USAGE and EXECUTE only, the feeder consumes the topic" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
feeder_stop ok
is "$?" 0 "SIGTERM: the feeder exits 0"
check "its output never shows the password" log_has_no "$E2E_PASSWORD" ok

# start_with_dsn NAME DSN — start a feeder against another DSN
start_with_dsn() {
	local saved=$E2E_DSN
	E2E_DSN=$2
	feeder_start "$1" "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
	E2E_DSN=$saved
}

# --- wrong password, conninfo and URI forms; unknown database
wrong="wrong-$RANDOM$RANDOM"
start_with_dsn badpw "$(feeder_dsn_with "password=$wrong")"
fails_fast badpw
tap_ok $? "wrong password: the feeder exits non-zero at once"
check "wrong password: the message names 28P01" log_has badpw '28P01'
check "wrong password: the output never shows it" log_has_no "$wrong" badpw

start_with_dsn badpwuri "postgresql://$E2E_ROLE:$wrong@127.0.0.1:$PGPORT/$E2E_DB"
fails_fast badpwuri
tap_ok $? "wrong password in a URI: the feeder exits non-zero at once"
check "wrong password in a URI: the message names 28P01" log_has badpwuri '28P01'
check "wrong password in a URI: the output never shows it" log_has_no "$wrong" badpwuri

start_with_dsn nodb "$(feeder_dsn_with "dbname=no_such_db_$RANDOM")"
fails_fast nodb
tap_ok $? "unknown database: the feeder exits non-zero at once"
check "unknown database: the message names 3D000" log_has nodb '3D000'
check "unknown database: the output never shows the password" log_has_no "$E2E_PASSWORD" nodb

# --- EXECUTE revoked with nothing to consume: the privilege check at
# connection ends the feeder before any batch, naming the GRANT to run
sql "REVOKE EXECUTE ON FUNCTION $BATCH_FUNCTION FROM \"$E2E_ROLE\""
feeder_start idlenoexec "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
fails_fast idlenoexec && [ "$FEEDER_RC" -eq 3 ]
tap_ok $? "EXECUTE revoked, nothing to consume: the feeder exits 3 at once"
check "EXECUTE revoked, nothing to consume: the check at connection names the GRANT" \
	bash -c 'grep -q "step=privileges" "$1" && grep -q "GRANT EXECUTE" "$1"' _ "$E2E_TMP/idlenoexec.log"
sql "GRANT EXECUTE ON FUNCTION $BATCH_FUNCTION TO \"$E2E_ROLE\""

# --- EXECUTE revoked: new messages wait, nothing is acknowledged
produce_orders 201 300 || bail "kcat could not produce"
kafka_committed "$GROUP" "$E2E_TOPIC" >"$E2E_TMP/committed.before"
sql "REVOKE EXECUTE ON FUNCTION $BATCH_FUNCTION FROM \"$E2E_ROLE\""
feeder_start noexec "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
fails_fast noexec
tap_ok $? "EXECUTE revoked: the feeder exits non-zero at once"
check "EXECUTE revoked: the message names 42501 and the privilege" \
	bash -c 'grep 42501 "$1" | grep -Eqi "execute|permission|privilege"' _ "$E2E_TMP/noexec.log"
check "EXECUTE revoked: nothing was acknowledged" \
	cmp -s "$E2E_TMP/committed.before" <(kafka_committed "$GROUP" "$E2E_TOPIC")
is "$(rows)" 200 "EXECUTE revoked: nothing was stored"
check "EXECUTE revoked: the output never shows the password" log_has_no "$E2E_PASSWORD" noexec

# --- USAGE on the schema revoked (EXECUTE back)
sql "GRANT EXECUTE ON FUNCTION $BATCH_FUNCTION TO \"$E2E_ROLE\";
     REVOKE USAGE ON SCHEMA received_orders FROM \"$E2E_ROLE\""
feeder_start nousage "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
fails_fast nousage && log_has nousage 42501
tap_ok $? "USAGE revoked: the feeder exits non-zero at once, naming 42501"

# --- privileges back: the feeder resumes where it stopped
sql "GRANT USAGE ON SCHEMA received_orders TO \"$E2E_ROLE\""
feeder_start again "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "privileges back: the feeder consumes what waited" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
feeder_stop again
is "$?" 0 "SIGTERM: the feeder exits 0"
check_exact_contents
tap_done
