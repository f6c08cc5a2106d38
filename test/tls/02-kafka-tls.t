#!/bin/bash
# 02-kafka-tls.t — the feeder's `-X security.protocol=ssl` and ssl.*
# properties reach librdkafka's TLS handshake, and a certificate problem is
# logged as a clear event=kafka_error naming the verification failure.
#
# The development Kafka (librdkafka's mock cluster) speaks plaintext only,
# so the endpoint here is `openssl s_server` on 127.0.0.1 with a server
# certificate signed by a CA made here: a TLS server, not a Kafka broker.
# With the wrong CA, or a certificate that does not name 127.0.0.1, the
# handshake fails on the feeder's side (error=_SSL ... certificate verify
# failed) and s_server reports the feeder's alert.  With the right CA it
# completes: s_server prints the cipher and the decrypted ApiVersionRequest
# of client received-orders-feeder, and the failure becomes a Kafka
# protocol one: librdkafka's FAIL line, which the feeder relays as
# event=librdkafka, says the ApiVersionRequest got no answer in state
# APIVERSION_QUERY (2.0.2 reported it as kafka_error _TRANSPORT).  Mutual TLS:
# s_server demanding a client certificate sees the feeder's, CN and issuer,
# when -X ssl.certificate.location/ssl.key.location give one, and refuses
# the handshake without: that certificate alert is a refusal only an
# operator can mend, so the feeder exits 3 naming ssl.certificate.location
# (kafka_refusal_of_error).  librdkafka retries the others by itself: the
# feeder keeps running (alert on kafka_up) and SIGTERM ends it with 0.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"
# shellcheck source=test/tls/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=tls-02
# no answer to the ApiVersionRequest: fail after 2 s instead of 10
FEEDER_ARGS=(-X api.version.request.timeout.ms=2000)
plan 17

# log_has NAME REGEX — the feeder's log matches the extended REGEX
log_has() {
	grep -Eq -- "$2" "$E2E_TMP/$1.log"
}

# s_log_has DIR REGEX — the s_server's output matches REGEX (binary safe)
s_log_has() {
	grep -aEq -- "$2" "$1/log"
}

# start_against NAME SERVER_DIR [-X ...] — a feeder whose only broker is
# that s_server, over TLS
start_against() {
	local name=$1 dir=$2
	shift 2
	KAFKA_BOOTSTRAP=127.0.0.1:$(cat "$dir/port")
	feeder_start "$name" "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}" \
		-X security.protocol=ssl "$@"
}

e2e_setup_db || bail "could not set up the database"
PKI=$E2E_TMP/pki
tls_make_pki "$PKI" "$E2E_ROLE" || bail "could not make the certificates"
VERIFY_FAILED='event=kafka_error error=_SSL reason="ssl://127\.0\.0\.1:[0-9]+/bootstrap: SSL handshake failed: [^"]*certificate verify failed: broker certificate could not be verified, verify that ssl\.ca\.location is correctly configured'

# --- a certificate for localhost and 127.0.0.1 signed by ca1; the feeder
# trusts ca2 only
tls_s_server S1 "$PKI/server-ip.crt" "$PKI/server-ip.key" || bail "openssl s_server did not start"
start_against wrongca "$S1" -X "ssl.ca.location=$PKI/ca2.crt"
check "wrong CA: the feeder logs a kafka_error _SSL: certificate verify failed, check ssl.ca.location" \
	ro_wait_until 20 log_has wrongca "$VERIFY_FAILED"
check "wrong CA: the endpoint saw the feeder refuse its chain (alert unknown ca), no handshake completed" \
	bash -c 'grep -aq "alert unknown ca" "$1" && ! grep -aq "^CIPHER is" "$1"' _ "$S1/log"
feeder_stop wrongca
is "$?" 0 "wrong CA: the feeder kept running (librdkafka retries); SIGTERM: exit 0"
tls_s_server_stop "$S1"

# --- the right CA, but the certificate names localhost only
tls_s_server S2 "$PKI/server.crt" "$PKI/server.key" || bail "openssl s_server did not start"
start_against wrongname "$S2" -X "ssl.ca.location=$PKI/ca1.crt"
check "certificate without 127.0.0.1: kafka_error _SSL, certificate verify failed (host name checked by default)" \
	ro_wait_until 20 log_has wrongname "$VERIFY_FAILED"
check "certificate without 127.0.0.1: the feeder's alert is bad certificate, not unknown ca" \
	bash -c 'grep -aq "alert bad certificate" "$1" && ! grep -aq "alert unknown ca" "$1" && ! grep -aq "^CIPHER is" "$1"' _ "$S2/log"
feeder_stop wrongname
is "$?" 0 "certificate without 127.0.0.1: SIGTERM: exit 0"
tls_s_server_stop "$S2"

# --- the right CA and name: the handshake completes
tls_s_server S3 "$PKI/server-ip.crt" "$PKI/server-ip.key" || bail "openssl s_server did not start"
start_against rightca "$S3" -X "ssl.ca.location=$PKI/ca1.crt"
check "right CA: the endpoint completes the handshake (s_server: CIPHER is ...)" \
	ro_wait_until 20 s_log_has "$S3" '^CIPHER is '
check "right CA: the Kafka request travels inside TLS (s_server decrypted the ApiVersionRequest of client received-orders-feeder, librdkafka)" \
	ro_wait_until 20 s_log_has "$S3" 'received-orders-feeder.*librdkafka'
check "right CA: the feeder's error is a Kafka protocol one, after the handshake (no answer in state APIVERSION_QUERY)" \
	ro_wait_until 20 log_has rightca 'event=librdkafka facility=FAIL msg=".*ssl://127\.0\.0\.1:[0-9]+/bootstrap: ApiVersionRequest failed: .*in state APIVERSION_QUERY\)"'
check "right CA: no TLS error at all" \
	bash -c '! grep -Eq "error=_SSL|certificate verify failed|SSL handshake failed" "$1"' _ "$E2E_TMP/rightca.log"
feeder_stop rightca
is "$?" 0 "right CA: SIGTERM: exit 0"
tls_s_server_stop "$S3"

# --- mutual TLS: the endpoint demands a client certificate signed by ca1
tls_s_server S4 "$PKI/server-ip.crt" "$PKI/server-ip.key" \
	-Verify 1 -CAfile "$PKI/ca1.crt" -verify_return_error || bail "openssl s_server did not start"
start_against nocert "$S4" -X "ssl.ca.location=$PKI/ca1.crt"
check "client certificate demanded, none configured: kafka_refused naming the endpoint's alert (certificate required) and ssl.certificate.location" \
	ro_wait_until 20 log_has nocert 'level=fatal event=kafka_refused what=tls_certificate .*reason="ssl://127\.0\.0\.1:[0-9]+/bootstrap: .*alert certificate required.*hint=.*ssl\.certificate\.location'
check "client certificate demanded, none configured: the endpoint says the peer did not return a certificate" \
	ro_wait_until 10 s_log_has "$S4" 'peer did not return a certificate'
if feeder_wait_exit nocert 20; then
	is "$FEEDER_RC" 3 "client certificate demanded, none configured: the feeder exits 3 (an operator must act)"
else
	tap_ok 1 "client certificate demanded, none configured: the feeder exits 3 (an operator must act)"
	feeder_kill nocert
fi
start_against mtls "$S4" -X "ssl.ca.location=$PKI/ca1.crt" \
	-X "ssl.certificate.location=$PKI/client.crt" -X "ssl.key.location=$PKI/client.key"
check "ssl.certificate.location/ssl.key.location: the endpoint verified the feeder's certificate (subject CN = $E2E_ROLE, issuer CA 1)" \
	ro_wait_until 20 bash -c 'grep -aq "^subject=CN = $2\$" "$1" && grep -aq "^issuer=CN = received_orders test CA 1\$" "$1" && grep -aq "^CIPHER is " "$1"' _ "$S4/log" "$E2E_ROLE"
check "mutual TLS: the Kafka request travels inside it" \
	ro_wait_until 20 s_log_has "$S4" 'received-orders-feeder.*librdkafka'
feeder_stop mtls
is "$?" 0 "mutual TLS: SIGTERM: exit 0"
tap_done
