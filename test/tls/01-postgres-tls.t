#!/bin/bash
# 01-postgres-tls.t — the feeder reaches PostgreSQL over TLS with a client
# certificate, and a TLS misconfiguration stops it at its first connection
# with exit status 3 and a line saying what to fix, instead of retrying for
# ever; once it has connected, the same failure (a certificate rotated
# wrong) is retried and never ends it.
#
# A cluster of its own (test/lib/pg.sh) with ssl = on, a server certificate
# for the host name localhost (SAN DNS:localhost only) signed by a CA made
# here, ssl_ca_file = that CA, and pg_hba.conf letting the feeder's role in
# only through `hostssl ... cert` (client certificate, CN = role name).  The
# feeder's DSN: host=localhost sslmode=verify-full sslrootcert sslcert sslkey.
# The failures, each with its exit status and log line: sslrootcert of an
# unrelated CA, host=127.0.0.1 (not in the certificate), the server's
# certificate expired, our certificate expired, our certificate signed by
# the unrelated CA, no client certificate at all, no sslrootcert file, a
# client key readable by others, a server with ssl = off.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"
# shellcheck source=test/tls/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=tls-01
FEEDER_ARGS=(--batch-size 20 --batch-wait-ms 50 --retry-backoff-ms 100 --retry-backoff-max-ms 1000)
plan 41

# fails_fast NAME — the feeder exits on its own within 20 s (sets
# FEEDER_RC; call it in the suite's shell: it reaps the process)
fails_fast() {
	feeder_wait_exit "$1" 20 || {
		diag "$1 still runs after 20 s"
		feeder_kill "$1"
		FEEDER_RC=running
		return 1
	}
	diag "$1 exited with status $FEEDER_RC"
}

# log_has NAME REGEX — the feeder's log matches the extended REGEX
log_has() {
	grep -Eq -- "$2" "$E2E_TMP/$1.log"
}

# produce_orders FIRST LAST — orders FIRST..LAST on partitions 0 and 1
produce_orders() {
	local n
	for ((n = $1; n <= $2; n++)); do
		msg $((n % 2)) "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
	done
	flush
}

# dsn [KEY=VALUE...] — the feeder's TLS DSN, with settings added or replaced
dsn() {
	local -A value=()
	local order=() out=() kv key
	for kv in host=localhost "port=$PGPORT" "dbname=$E2E_DB" "user=$E2E_ROLE" sslmode=verify-full \
		"sslrootcert=$PKI/ca1.crt" "sslcert=$PKI/client.crt" "sslkey=$PKI/client.key" "$@"; do
		key=${kv%%=*}
		[[ -v "value[$key]" ]] || order+=("$key")
		value[$key]=${kv#*=}
	done
	for key in "${order[@]}"; do
		out+=("$key=${value[$key]}")
	done
	printf '%s\n' "${out[*]}"
}

# start_with_dsn NAME DSN — start a feeder against DSN
start_with_dsn() {
	E2E_DSN=$2
	feeder_start "$1" "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
}

# serve_certificate NAME — the server presents PKI/NAME.crt: rewrite
# ro_tls.conf, reload, wait (10 s) until a handshake shows it
serve_certificate() {
	local want
	want=$(tls_fingerprint "$PKI/$1.crt")
	cat >"$DB_DIR/data/ro_tls.conf" <<-EOF
		# test/tls/01-postgres-tls.t
		ssl = on
		ssl_cert_file = '$PKI/$1.crt'
		ssl_key_file = '$PKI/$1.key'
		ssl_ca_file = '$PKI/ca1.crt'
	EOF
	[[ $EUID == 0 ]] && chown postgres: "$DB_DIR/data/ro_tls.conf"
	pg_ctl_as reload || return 1
	ro_wait_until 10 presents "$want" && return 0
	diag "the server does not present $1.crt after a reload"
	pg_log_tail "$DB_DIR" 10
	return 1
}

# serve_plaintext — ssl = off: reload, wait (10 s) until no handshake works
serve_plaintext() {
	printf '# test/tls/01-postgres-tls.t\nssl = off\n' >"$DB_DIR/data/ro_tls.conf"
	[[ $EUID == 0 ]] && chown postgres: "$DB_DIR/data/ro_tls.conf"
	pg_ctl_as reload || return 1
	ro_wait_until 10 presents "" && return 0
	diag "the server still speaks TLS after a reload with ssl = off"
	return 1
}

# presents FINGERPRINT — the server's certificate has this fingerprint
presents() {
	[ "$(tls_pg_fingerprint "$PGPORT")" = "$1" ]
}

# role_sessions — "ssl|client_dn|application_name" of the role's sessions, each distinct line once (the feeder has one session per lane, and one for its status report)
role_sessions() {
	sql "SELECT DISTINCT s.ssl || '|' || coalesce(s.client_dn, '') || '|' || a.application_name
	       FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
	      WHERE a.usename = '$E2E_ROLE' ORDER BY 1"
}

# committed_unchanged FILE — the group's committed offsets are those saved
committed_unchanged() {
	cmp -s "$1" <(kafka_committed "$GROUP" "$E2E_TOPIC")
}

DB_DIR= # set by pg_start
pg_start DB_DIR >&2 || bail "could not start a dedicated PostgreSQL cluster"
kafka_start 1 "$E2E_TOPIC:2" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
PKI=$E2E_TMP/pki
tls_make_pki "$PKI" "$E2E_ROLE" || bail "could not make the certificates"

# TLS on, and the feeder's role in through a client certificate only
printf "\ninclude 'ro_tls.conf'\n" >>"$DB_DIR/data/postgresql.conf"
{
	printf 'hostssl %s %s 127.0.0.1/32 cert\n' "$E2E_DB" "$E2E_ROLE"
	printf 'host all %s all reject\nlocal all %s reject\n' "$E2E_ROLE" "$E2E_ROLE"
	cat "$DB_DIR/data/pg_hba.conf"
} >"$E2E_TMP/pg_hba.conf"
cat "$E2E_TMP/pg_hba.conf" >"$DB_DIR/data/pg_hba.conf"
serve_certificate server || bail "could not turn TLS on"

tls_psql() {
	psql -X -q -w -At -d "$1" -c "$2"
}
is "$(tls_psql "host=localhost port=$PGPORT dbname=$E2E_DB user=postgres sslmode=verify-full sslrootcert=$PKI/ca1.crt" \
	"SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()" 2>&1)" t \
	"the server speaks TLS with a certificate for localhost signed by the suite's CA (psql, verify-full)"
is "$(tls_psql "$(dsn)" "SELECT current_user" 2>&1)" "$E2E_ROLE" \
	"the feeder's role logs in with its client certificate (CN = role)"
check "the feeder's role cannot log in without a client certificate, over TLS or not, password or not" \
	bash -c '! PGPASSWORD=$4 psql -X -w -d "host=localhost port=$1 dbname=$2 user=$3 sslmode=verify-full sslrootcert=$5" -c "SELECT 1" &&
	         ! PGPASSWORD=$4 psql -X -w -d "host=127.0.0.1 port=$1 dbname=$2 user=$3 sslmode=disable" -c "SELECT 1" &&
	         ! PGPASSWORD=$4 psql -X -w -d "dbname=$2 user=$3" -c "SELECT 1"' \
	_ "$PGPORT" "$E2E_DB" "$E2E_ROLE" "$E2E_PASSWORD" "$PKI/ca1.crt"

# --- verify-full with a client certificate: the feeder consumes
produce_orders 1 40 || bail "kcat could not produce"
start_with_dsn ok "$(dsn)"
check "over TLS with its client certificate, the feeder consumes the topic" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
is "$(role_sessions)" "true|/CN=$E2E_ROLE|received-orders-feeder"$'\n'"true|/CN=$E2E_ROLE|$E2E_STATUS_APPLICATION" \
	"every session of the feeder, its status report's too, is TLS, authenticated by its certificate (pg_stat_ssl)"
check "event=db_connected names host localhost" log_has ok 'event=db_connected host=localhost '

# --- the server's certificate replaced by an expired one while the feeder
# runs, its session cut: batches fail and are retried, the feeder stays
serve_certificate expired-server || bail "could not serve the expired certificate"
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '$E2E_ROLE'" >/dev/null
produce_orders 41 60 || bail "kcat could not produce"
kafka_committed "$GROUP" "$E2E_TOPIC" >"$E2E_TMP/committed.running"
check "certificate expired after the first connection: batches fail with class=other naming the verification failure" \
	ro_wait_until 30 log_has ok 'level=error event=batch_failed class=other step=connect error=".*SSL error: certificate verify failed'
feeder_alive ok
tap_ok $? "certificate expired after the first connection: the feeder keeps running (a rotation gone wrong must not end it)"
check "certificate expired after the first connection: nothing acknowledged meanwhile" \
	committed_unchanged "$E2E_TMP/committed.running"
serve_certificate server || bail "could not serve the good certificate again"
check "good certificate back: the feeder reconnects by itself and consumes what waited" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
check "good certificate back: event=batch_recovered" log_has ok 'event=batch_recovered'
feeder_stop ok
is "$?" 0 "SIGTERM: the feeder exits 0"
check_exact_contents

# --- misconfigurations at the first connection: exit 3 at once, a hint
produce_orders 61 80 || bail "kcat could not produce"
kafka_committed "$GROUP" "$E2E_TOPIC" >"$E2E_TMP/committed.before"

start_with_dsn wrongca "$(dsn "sslrootcert=$PKI/ca2.crt")"
fails_fast wrongca
is "$FEEDER_RC" 3 "sslrootcert of an unrelated CA: the feeder exits 3 at once"
check "sslrootcert of an unrelated CA: database_config_error, certificate verify failed, hint on sslrootcert" \
	log_has wrongca 'level=fatal event=database_config_error step=connect error=".*SSL error: certificate verify failed" hint="the server.s certificate did not verify: .*sslrootcert'

start_with_dsn wronghost "$(dsn host=127.0.0.1)"
fails_fast wronghost
is "$FEEDER_RC" 3 "host=127.0.0.1, certificate for localhost only: the feeder exits 3 at once"
check "host=127.0.0.1: database_config_error, does not match host name, hint on the host name" \
	log_has wronghost 'level=fatal event=database_config_error step=connect error=".*server certificate for \\"localhost\\".* does not match host name \\"127\.0\.0\.1\\"" hint="the server.s certificate does not name the host .*subjectAltName'

serve_certificate expired-server || bail "could not serve the expired certificate"
is "$(tls_pg_verify "$PKI/ca1.crt" "$PGPORT")" "10 (certificate has expired)" \
	"the server presents its expired certificate (openssl s_client: verify error 10)"
start_with_dsn expired "$(dsn)"
fails_fast expired
is "$FEEDER_RC" 3 "the server's certificate expired: the feeder exits 3 at once"
check "the server's certificate expired: database_config_error, certificate verify failed, hint names expiry" \
	log_has expired 'level=fatal event=database_config_error step=connect error=".*SSL error: certificate verify failed" hint="the server.s certificate did not verify: .*not expired'
serve_certificate server || bail "could not serve the good certificate again"

start_with_dsn expiredclient "$(dsn "sslcert=$PKI/expired-client.crt" "sslkey=$PKI/expired-client.key")"
fails_fast expiredclient
is "$FEEDER_RC" 3 "our client certificate expired: the feeder exits 3 at once"
check "our client certificate expired: database_config_error, the server's alert, hint on sslcert" \
	log_has expiredclient 'level=fatal event=database_config_error step=connect error=".*SSL error: sslv3 alert certificate expired" hint="the server refused the client certificate \(sslcert'

start_with_dsn otherclient "$(dsn "sslcert=$PKI/other-client.crt" "sslkey=$PKI/other-client.key")"
fails_fast otherclient
is "$FEEDER_RC" 3 "client certificate of an unrelated CA: the feeder exits 3 at once"
check "client certificate of an unrelated CA: database_config_error, alert unknown ca, hint on ssl_ca_file" \
	log_has otherclient 'level=fatal event=database_config_error step=connect error=".*SSL error: tlsv1 alert unknown ca" hint=".*ssl_ca_file'

# an absent file is no error to libpq: it sends no certificate at all
start_with_dsn nocert "$(dsn "sslcert=$E2E_TMP/absent.crt" "sslkey=$E2E_TMP/absent.key")"
fails_fast nocert
is "$FEEDER_RC" 3 "no client certificate: the feeder exits 3 at once"
check "no client certificate: database_config_error sqlstate=28000, hint on sslcert" \
	log_has nocert 'level=fatal event=database_config_error step=connect sqlstate=28000 error=".*connection requires a valid client certificate" hint=".*sslcert'

start_with_dsn norootcert "$(dsn "sslrootcert=$E2E_TMP/absent-ca.crt")"
fails_fast norootcert
is "$FEEDER_RC" 3 "sslrootcert file missing: the feeder exits 3 at once"
check "sslrootcert file missing: database_config_error, root certificate file does not exist, hint on the files" \
	log_has norootcert 'level=fatal event=database_config_error step=connect error=".*root certificate file .* does not exist.*" hint="a TLS file of the DSN'

install -m 644 "$PKI/client.key" "$E2E_TMP/loose.key"
start_with_dsn loosekey "$(dsn "sslkey=$E2E_TMP/loose.key")"
fails_fast loosekey
is "$FEEDER_RC" 3 "client key readable by others: the feeder exits 3 at once"
check "client key readable by others: database_config_error, group or world access, hint on the files" \
	log_has loosekey 'level=fatal event=database_config_error step=connect error=".*private key file .* has group or world access.*" hint="a TLS file of the DSN'

serve_plaintext || bail "could not turn TLS off"
start_with_dsn plaintext "$(dsn)"
fails_fast plaintext
is "$FEEDER_RC" 3 "server with ssl = off, sslmode=verify-full: the feeder exits 3 at once"
check "server with ssl = off: database_config_error, SSL was required, hint on the server's ssl" \
	log_has plaintext 'level=fatal event=database_config_error step=connect error=".*server does not support SSL, but SSL was required" hint="the server does not accept TLS'
serve_certificate server || bail "could not turn TLS on again"

check "no failed start consumed or acknowledged anything" \
	committed_unchanged "$E2E_TMP/committed.before"
check "no failed start went on to Kafka (no db_unavailable, no kafka event)" \
	bash -c '! grep -Eq "event=db_unavailable|event=kafka" "$@"' _ \
	"$E2E_TMP"/{wrongca,wronghost,expired,expiredclient,otherclient,nocert,norootcert,loosekey,plaintext}.log

# --- configuration fixed: the feeder picks up where the group stopped
start_with_dsn again "$(dsn)"
check "configuration fixed: the feeder consumes what waited" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
feeder_stop again
is "$?" 0 "SIGTERM: the feeder exits 0"
check_exact_contents
tap_done
