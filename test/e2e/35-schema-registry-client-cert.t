#!/bin/bash
# 35-schema-registry-client-cert.t — a Schema Registry that
# requires a TLS client certificate (Confluent's ssl.client.auth=true).
# The stand-in registry serves https (a throwaway CA, ca1) and refuses, in
# the TLS handshake, a client without a certificate signed by ca1;
# Confluent's own serializer presents one to register and frame the
# values.
#
# 1. Without --schema-registry-cert/--schema-registry-key the feeder exits 3
#    at the first message: the fatal line says the registry requires a
#    client certificate and names the two options; nothing is stored,
#    nothing acknowledged.
# 2. A key file that cannot be read (given in a -F file): exit 2 at start,
#    one line naming the option, the -F file and the path.  A key that is
#    not the certificate's: exit 3 at the first message, naming the key.
# 3. With the certificate and key (FEEDER_SCHEMA_REGISTRY_CERT and
#    FEEDER_SCHEMA_REGISTRY_KEY): the orders are stored, decoded, the bad
#    message quarantined, the group caught up.
# 4. The private key is never logged: no line of its PEM body appears in
#    any output of the feeder.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/lib/schema_registry.sh
. "$RO_ROOT/test/lib/schema_registry.sh"
# shellcheck source=test/tls/lib.sh
. "$RO_ROOT/test/tls/lib.sh"

E2E_TOPIC=sr.mtls
FRAMED_FUNCTION='received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[],bytea[],integer[],text[],uuid[])'
PKI=$E2E_TMP/pki
plan 17

sr_npm_install || bail "could not install Confluent's serializers (npm ci)"
e2e_setup_db || bail "could not set up the database"
tls_make_pki "$PKI" "$E2E_ROLE" || bail "could not make the throwaway PKI"
sr_start "$E2E_TMP" "" "$PKI/server-ip.crt" "$PKI/server-ip.key" "$PKI/ca1.crt" \
	"$PKI/ca1.crt" "$PKI/client.crt" "$PKI/client.key" ||
	bail "could not start the stand-in registry requiring client certificates"
kafka_start 1 "$E2E_TOPIC:1" || bail "could not start the development Kafka"
sql "GRANT EXECUTE ON FUNCTION $FRAMED_FUNCTION TO \"$E2E_ROLE\"" >/dev/null
FEEDER_ARGS=(-X auto.commit.interval.ms=200 --value-format confluent
	--schema-registry "$SR_URL" --schema-registry-ca "$PKI/ca1.crt")

# the registry really asks: without a certificate the handshake is refused
no_cert=$(curl -sS --max-time 10 --cacert "$PKI/ca1.crt" "$SR_URL/schemas/ids/1" 2>&1)
tap_like "$no_cert" 'alert certificate required' "the registry refuses a client without a certificate in TLS (curl: ${no_cert:0:90})"

AVRO='{"type": "record", "name": "OrderReceived", "namespace": "com.example.orders", "fields": [
	{"name": "orderId", "type": {"type": "string", "logicalType": "uuid"}},
	{"name": "externalReference", "type": "string"},
	{"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2}}]}'
cat >"$E2E_TMP/spec.json" <<-JSON
	[{"name": "m01", "subject": "$E2E_TOPIC-value", "type": "AVRO", "schema": $AVRO,
	  "value": {"orderId": "$(uid 3501)", "externalReference": "MTLS-3501", "amount": {"\$bytes": "04d2"}}},
	 {"name": "m02", "subject": "$E2E_TOPIC-value", "type": "AVRO", "schema": $AVRO,
	  "value": {"orderId": "$(uid 3502)", "externalReference": "MTLS-3502", "amount": {"\$bytes": "ff85"}}}]
JSON
# produce_all — Confluent's serializer, presenting the client certificate
# shellcheck disable=SC2317
produce_all() {
	sr_produce "$E2E_TMP/spec.json" "$E2E_TMP/msgs" >"$E2E_TMP/ids"
}
check "Confluent's serializer registers and frames over https with a client certificate" produce_all
M=$E2E_TMP/msgs
msg_file 0 m01 insert 3501 MTLS-3501 - "$M/m01.bin"
msg_file 0 m02 insert 3502 MTLS-3502 - "$M/m02.bin"
head -c -2 "$M/m01.bin" >"$M/trunc.bin"
msg_file 0 trunc reject - - 22P03 "$M/trunc.bin"

# ---------------------------------------------------------------- 1. no client certificate

feeder_start nocert "$E2E_TOPIC" e2e-35 "${FEEDER_ARGS[@]}"
feeder_wait_exit nocert 60
is "${FEEDER_RC:-none}" 3 "without a client certificate: exit 3 (a configuration error)"
check "the fatal line says the registry requires a client certificate and names both options" \
	grep -q 'level=fatal event=schema_registry_config_error .*step=schema_registry .*requires a TLS client certificate: give --schema-registry-cert and --schema-registry-key' \
	"$E2E_TMP/nocert.log"
is "$(sql "SELECT count(*) FROM received_orders.received_orders")" 0 "nothing was stored"
is "$(committed_sum e2e-35)" 0 "nothing was acknowledged"

# ---------------------------------------------------------------- 2. a key that cannot be read

printf 'schema-registry-cert=%s\nschema-registry-key=%s\n' "$PKI/client.crt" "$E2E_TMP/no-such.key" \
	>"$E2E_TMP/feeder.conf"
feeder_start nokey "$E2E_TOPIC" e2e-35 -F "$E2E_TMP/feeder.conf" "${FEEDER_ARGS[@]}"
feeder_wait_exit nokey 60
is "${FEEDER_RC:-none}" 2 "a key file that cannot be read (-F): exit 2 at start (a configuration error)"
check "the line names the option, the -F file and the path" \
	grep -qF -- "--schema-registry-key (in -F $E2E_TMP/feeder.conf): cannot read \"$E2E_TMP/no-such.key\"" \
	"$E2E_TMP/nokey.log"

feeder_start wrongkey "$E2E_TOPIC" e2e-35 --schema-registry-cert "$PKI/client.crt" \
	--schema-registry-key "$PKI/other-client.key" "${FEEDER_ARGS[@]}"
feeder_wait_exit wrongkey 60
is "${FEEDER_RC:-none}" 3 "a key that is not the certificate's: exit 3"
check "the fatal line names the Schema Registry and the key problem" \
	grep -qE 'level=fatal event=schema_registry_config_error .*step=schema_registry .*(private key|key file|client cert)' \
	"$E2E_TMP/wrongkey.log"

# ---------------------------------------------------------------- 3. with the certificate

FEEDER_SCHEMA_REGISTRY_CERT=$PKI/client.crt FEEDER_SCHEMA_REGISTRY_KEY=$PKI/client.key \
	feeder_start cert "$E2E_TOPIC" e2e-35 "${FEEDER_ARGS[@]}"
check "with FEEDER_SCHEMA_REGISTRY_CERT and _KEY: caught up within 60 s" kafka_wait_caught_up e2e-35 "$E2E_TOPIC" 60
check "the database's positions are at the end offsets" db_wait_caught_up e2e-35 20
check_exact_contents
is "$(sql "SELECT payload->>'amount' FROM received_orders.received_orders WHERE order_id = '$(uid 3501)'")" 12.34 \
	"the order decoded with the schema fetched with the client certificate is stored"
feeder_stop cert >/dev/null

# ---------------------------------------------------------------- 4. the key is never logged

# every line of the key's PEM body (base64), searched for in all the
# feeder wrote
leaked=0
while read -r line; do
	[[ $line == -----* || ${#line} -lt 16 ]] && continue
	grep -qF -- "$line" "$E2E_TMP"/nocert.* "$E2E_TMP"/nokey.* "$E2E_TMP"/wrongkey.* \
		"$E2E_TMP"/cert.* && leaked=$((leaked + 1))
done <"$PKI/client.key"
is "$leaked" 0 "no line of the private key appears in the feeder's logs or output"
tap_done
