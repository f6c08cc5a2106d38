#!/bin/bash
# r07-sasl-scram-acls.t — the feeder on the SASL_SSL listener (TLS with a
# certificate the test's CA file holds, StandardAuthorizer, ACLs limited to
# the topic and the group): with SCRAM-SHA-512 and the right password it
# works; with a wrong password, with a user lacking the group's ACL, a
# topic without the user's ACL, or a user allowed READ but denied DESCRIBE
# on the topic or on the group, it exits 3 at once with a reason naming
# what is missing (event=kafka_refused: the mechanism and user, or the ACL,
# resource and principal), never a retry loop; after each refusal nothing
# was stored wrong and no offset acknowledged ahead of the database.  The
# same with PLAIN over SASL_SSL shows TLS and the ACLs on their own.
# SCRAM-SHA-256 works too.
#
# SCRAM against Kafka 4 needs the bundled librdkafka: Debian 12's 2.0.2
# repeated the client nonce in its client-final message, which Kafka 4
# rejects as invalid credentials even for the right password (fixed in
# librdkafka 2.6.1, confluentinc/librdkafka#4895).

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"
# shellcheck source=test/kafka-real/security.sh
. "$RO_ROOT/test/kafka-real/security.sh"

PARTITIONS=3
E2E_TOPIC=r07-orders-$$
GROUP=r07-group-$$
SECRET_TOPIC=r07-secret-$$
ND_TOPIC=r07-nodescribe-$$
ND_TOPIC_GROUP=r07-nd-topic-group-$$
ND_GROUP=r07-nd-group-$$
plan 41

# acl_read_deny_describe RESOURCES... -- DENIED — $KR_SASL_NODESCRIBE
# may read (and so describe) RESOURCES, but DESCRIBE on DENIED is denied
acl_read_deny_describe() {
	local allow=()
	while [ "$1" != -- ]; do
		allow+=("$1")
		shift
	done
	shift
	kr_acl --add --allow-principal "User:$KR_SASL_NODESCRIBE" --operation Read "${allow[@]}" &&
		kr_acl --add --deny-principal "User:$KR_SASL_NODESCRIBE" --operation Describe "$@"
}

# sasl_feeder NAME USER PASSWORD MECHANISM — a feeder on the SASL_SSL listener
sasl_feeder() {
	kr_sasl_args "$2" "$3" "$4"
	KAFKA_BOOTSTRAP=$AK_SASL_BOOTSTRAP feeder_start "$1" "$E2E_TOPIC" "$GROUP" \
		--batch-size 50 "${KR_SASL_ARGS[@]}"
}

kr_cluster || bail "could not start Apache Kafka"
[ -n "$AK_SASL_BOOTSTRAP" ] || bail "the cluster has no SASL_SSL listener"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"
kr_topic "$SECRET_TOPIC" 1 || bail "could not create $SECRET_TOPIC"
kr_topic "$ND_TOPIC" 1 || bail "could not create $ND_TOPIC"
produce_part 1 300 || bail "kcat could not produce"

check "ACLs: $KR_SASL_USER may read and describe the topic and read the group" \
	kr_acl --add --allow-principal "User:$KR_SASL_USER" --operation Read --operation Describe \
	--topic "$E2E_TOPIC" --group "$GROUP"
check "ACLs: $KR_SASL_OTHER may read the topic but nothing on the group" \
	kr_acl --add --allow-principal "User:$KR_SASL_OTHER" --operation Read --operation Describe --topic "$E2E_TOPIC"
# READ implies DESCRIBE: only a DENY takes DESCRIBE away from a reader
check "ACLs: $KR_SASL_NODESCRIBE may read $ND_TOPIC and its group but is denied DESCRIBE on the topic" \
	acl_read_deny_describe --topic "$ND_TOPIC" --group "$ND_TOPIC_GROUP" -- --topic "$ND_TOPIC"
check "ACLs: $KR_SASL_NODESCRIBE may read and describe $E2E_TOPIC, read $ND_GROUP but is denied DESCRIBE on the group" \
	acl_read_deny_describe --topic "$E2E_TOPIC" --group "$ND_GROUP" -- --group "$ND_GROUP"

sasl_feeder scram "$KR_SASL_USER" "$KR_SASL_PASSWORD" SCRAM-SHA-512
check "SCRAM-SHA-512, right password: the feeder stores orders within 20 s" \
	ro_wait_until 20 rows_at_least 1
feeder_kill scram

sasl_feeder scram256 "$KR_SASL_USER" "$KR_SASL_PASSWORD" SCRAM-SHA-256
check "SCRAM-SHA-256, right password: the feeder reaches the end offsets" db_wait_caught_up "$GROUP" 60
feeder_kill scram256

sasl_feeder plain "$KR_SASL_USER" "$KR_SASL_PASSWORD" PLAIN
check "PLAIN over SASL_SSL with the ACLs: the database reaches the end offsets" db_wait_caught_up "$GROUP" 60
kr_account "$GROUP" "SASL_SSL"
feeder_stop plain

sasl_feeder wrongpw "$KR_SASL_USER" not-the-password PLAIN
kr_refused wrongpw "PLAIN, wrong password" \
	"what=authentication .*mechanism=PLAIN user=$KR_SASL_USER .*hint=.*sasl.password" "$GROUP"
sasl_feeder wrongscram "$KR_SASL_USER" not-the-password SCRAM-SHA-512
kr_refused wrongscram "SCRAM-SHA-512, wrong password" \
	"what=authentication .*mechanism=SCRAM-SHA-512 user=$KR_SASL_USER" "$GROUP"
sasl_feeder noacl "$KR_SASL_OTHER" nobody-secret PLAIN
kr_refused noacl "no ACL on the group" \
	"what=group_acl .*principal=User:$KR_SASL_OTHER group=$GROUP .*READ and DESCRIBE on the consumer group" "$GROUP"
kr_sasl_args "$KR_SASL_USER" "$KR_SASL_PASSWORD" PLAIN
KAFKA_BOOTSTRAP=$AK_SASL_BOOTSTRAP feeder_start notopic "$SECRET_TOPIC" "$GROUP" \
	--batch-size 50 "${KR_SASL_ARGS[@]}"
kr_refused notopic "no ACL on the topic" \
	"what=topic_acl .*principal=User:$KR_SASL_USER topic=$SECRET_TOPIC .*READ and DESCRIBE on the topic" "$GROUP"
kr_sasl_args "$KR_SASL_NODESCRIBE" nodescribe-secret SCRAM-SHA-512
KAFKA_BOOTSTRAP=$AK_SASL_BOOTSTRAP feeder_start nddescribetopic "$ND_TOPIC" "$ND_TOPIC_GROUP" \
	--batch-size 50 "${KR_SASL_ARGS[@]}"
E2E_TOPIC=$ND_TOPIC kr_refused nddescribetopic "READ but DESCRIBE denied on the topic" \
	"what=topic_acl .*principal=User:$KR_SASL_NODESCRIBE topic=$ND_TOPIC .*READ and DESCRIBE on the topic" "$ND_TOPIC_GROUP"
KAFKA_BOOTSTRAP=$AK_SASL_BOOTSTRAP feeder_start nddescribegroup "$E2E_TOPIC" "$ND_GROUP" \
	--batch-size 50 "${KR_SASL_ARGS[@]}"
kr_refused nddescribegroup "READ but DESCRIBE denied on the group" \
	"what=group_acl .*principal=User:$KR_SASL_NODESCRIBE group=$ND_GROUP .*READ and DESCRIBE on the consumer group" "$ND_GROUP"
tap_done
