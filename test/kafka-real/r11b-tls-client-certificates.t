#!/bin/bash
# r11b-tls-client-certificates.t — TLS without SASL: the feeder on the SSL
# listener that demands a client certificate (ssl.client.auth=required,
# security.protocol=ssl), whose principal is the certificate's CN
# (ssl.principal.mapping.rules: User:ro-tls-feeder), which the ACLs name.
# With a certificate the test CA signed it stores the stream: 0 lost, 0
# doubled, no offset acknowledged ahead.  Without a certificate, or with
# one another CA signed (the same CN), the brokers refuse the handshake:
# nothing is stored wrong and nothing acknowledged ahead, and the feeder
# exits 3 naming ssl.certificate.location (kafka_refusal_of_error knows the
# brokers' certificate alerts).

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"
# shellcheck source=test/kafka-real/security.sh
. "$RO_ROOT/test/kafka-real/security.sh"

PARTITIONS=3
E2E_TOPIC=r11b-orders-$$
GROUP=r11b-group-$$
plan 17

kr_cluster || bail "could not start Apache Kafka"
[ -n "$AK_MTLS_BOOTSTRAP" ] || bail "the cluster has no SSL listener with client certificates (AK_SASL=1)"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"
produce_part 1 300 || bail "kcat could not produce"
tls=$AK_CA
tls=${tls%/ca.pem}

check "ACLs: User:$KR_TLS_USER (the certificate's CN) may read and describe the topic and read the group" \
	kr_acl --add --allow-principal "User:$KR_TLS_USER" --operation Read --operation Describe \
	--topic "$E2E_TOPIC" --group "$GROUP"

kr_mtls_args
KAFKA_BOOTSTRAP=$AK_MTLS_BOOTSTRAP feeder_start nocert "$E2E_TOPIC" "$GROUP" \
	--batch-size 50 "${KR_MTLS_ARGS[@]}"
kr_refused nocert "no client certificate" \
	"what=tls_certificate .*hint=.*ssl.certificate.location" "$GROUP"
kr_mtls_args "$tls/rogue-client.pem" "$tls/rogue-client.key"
KAFKA_BOOTSTRAP=$AK_MTLS_BOOTSTRAP feeder_start rogue "$E2E_TOPIC" "$GROUP" \
	--batch-size 50 "${KR_MTLS_ARGS[@]}"
kr_refused rogue "a client certificate another CA signed" \
	"what=tls_certificate .*hint=.*ssl.certificate.location" "$GROUP"

kr_mtls_args "$tls/client.pem" "$tls/client.key"
KAFKA_BOOTSTRAP=$AK_MTLS_BOOTSTRAP feeder_start mtls "$E2E_TOPIC" "$GROUP" \
	--batch-size 50 "${KR_MTLS_ARGS[@]}"
check "mutual TLS: the feeder reaches the end offsets" db_wait_caught_up "$GROUP" 60
kr_account "$GROUP" "mutual TLS"
feeder_stop mtls
is "$?" 0 "mutual TLS: SIGTERM: exit 0"
tap_done
