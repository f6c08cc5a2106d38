#!/bin/bash
# r11-oidc-token-refresh.t — the feeder on the OAUTHBEARER listener with
# OIDC (sasl.oauthbearer.method=oidc): librdkafka fetches its tokens from
# the suite's issuer (tools/oidc-issuer, client credentials over HTTPS
# with the test CA) and Kafka's OAuthBearerValidatorCallbackHandler checks
# them against the issuer's JWKS (signature, audience, issuer, expiry) and
# makes the principal User:<sub>, which the ACLs name.  With a wrong client
# secret the issuer answers 401 and the feeder exits 3 at once, the hint
# naming sasl.oauthbearer.client.secret, having stored nothing.  With the
# right one it stores the stream in three parts, each produced after the
# token in use expired (tokens of KR_OIDC_LIFETIME seconds; the listener
# re-authenticates a connection when its token expires): the issuer
# serves several tokens, the feeder never stops, and the account holds:
# 0 lost, 0 doubled, no offset acknowledged ahead.  A token endpoint that
# cannot be reached is no refusal: the feeder runs on while librdkafka
# asks again (librdkafka reports it with the same _AUTHENTICATION as a
# refused secret; kafka_refusal_of_error tells them apart by the reason).
#
# Tokens of 6 s and 10 s made the feeder exit 3 here: a connection that
# re-authenticated with a token about to expire (its refresh, due at 80 %
# of the lifetime, took longer than the last 10 %) got a session of about
# a second, and Kafka refuses a second re-authentication within a second
# (ILLEGAL_SASL_STATE, reported as _AUTHENTICATION); 20 s leaves the
# refresh 2 s.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"
# shellcheck source=test/kafka-real/security.sh
. "$RO_ROOT/test/kafka-real/security.sh"

PARTITIONS=3
E2E_TOPIC=r11-orders-$$
GROUP=r11-group-$$
plan 20

# tokens — how many tokens the issuer served the suite's OIDC client
tokens() {
	grep -c "^token client=$KR_OIDC_CLIENT " "$AK_OIDC_LOG"
}

kr_cluster || bail "could not start Apache Kafka"
[ -n "$AK_OIDC_BOOTSTRAP" ] || bail "the cluster has no OAUTHBEARER listener (AK_OIDC=1)"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"
produce_part 1 200 || bail "kcat could not produce"

check "ACLs: User:$KR_OIDC_CLIENT (the token's sub) may read and describe the topic and read the group" \
	kr_acl --add --allow-principal "User:$KR_OIDC_CLIENT" --operation Read --operation Describe \
	--topic "$E2E_TOPIC" --group "$GROUP"

kr_oidc_args "$KR_OIDC_CLIENT" not-the-secret
KAFKA_BOOTSTRAP=$AK_OIDC_BOOTSTRAP feeder_start badsecret "$E2E_TOPIC" "$GROUP" \
	--batch-size 50 "${KR_OIDC_ARGS[@]}"
kr_refused badsecret "wrong client secret" \
	"what=authentication .*mechanism=OAUTHBEARER .*hint=.*sasl.oauthbearer.client.secret" "$GROUP"
check "wrong client secret: the issuer refused the client (401 invalid_client)" \
	grep -q "^refused client=$KR_OIDC_CLIENT reason=invalid_client" "$AK_OIDC_LOG"
is "$(rows)" 0 "wrong client secret: nothing stored"

kr_oidc_args "$KR_OIDC_CLIENT" "$KR_OIDC_SECRET"
unreachable=$(ro_free_port) || bail "no free port"
KR_OIDC_ARGS+=(-X "sasl.oauthbearer.token.endpoint.url=https://127.0.0.1:$unreachable/token")
KAFKA_BOOTSTRAP=$AK_OIDC_BOOTSTRAP feeder_start noidp "$E2E_TOPIC" "$GROUP" \
	--batch-size 50 "${KR_OIDC_ARGS[@]}"
ro_wait_until 20 grep -q "Failed to retrieve OIDC token" "$E2E_TMP/noidp.log" ||
	diag "no OIDC failure logged within 20 s"
sleep 2
check "token endpoint unreachable: the feeder runs on, librdkafka asks again" \
	feeder_alive noidp
tap_last_ok || diag "$(grep -E "kafka_refused|OIDC" "$E2E_TMP/noidp.log" | tail -3)"
feeder_stop noidp
is "$?" 0 "token endpoint unreachable: SIGTERM: exit 0"

served_before=$(tokens)
started=$SECONDS
kr_oidc_args "$KR_OIDC_CLIENT" "$KR_OIDC_SECRET"
KAFKA_BOOTSTRAP=$AK_OIDC_BOOTSTRAP feeder_start oidc "$E2E_TOPIC" "$GROUP" \
	--batch-size 50 "${KR_OIDC_ARGS[@]}"
check "OIDC: the feeder reaches the end offsets of part 1" db_wait_caught_up "$GROUP" 60
for part in 2 3; do
	# the token the connections authenticated with has expired meanwhile
	sleep $((KR_OIDC_LIFETIME + 1))
	produce_part $((part * 200 - 199)) $((part * 200)) || bail "kcat could not produce"
	check "OIDC: part $part, produced after the token expired, reaches the end offsets" \
		db_wait_caught_up "$GROUP" 60
done
served=$(($(tokens) - served_before))
check "OIDC: the issuer served the feeder $served tokens of $KR_OIDC_LIFETIME s in $((SECONDS - started)) s (3 or more: refreshed)" \
	test "$served" -ge 3
check "OIDC: the feeder ran throughout, with no authentication error" \
	bash -c '! grep -Eq "event=(kafka_refused|kafka_error) .*(_AUTHENTICATION|SASL_AUTHENTICATION_FAILED)" "$1"' _ "$E2E_TMP/oidc.log"
kr_account "$GROUP" "OIDC"
feeder_stop oidc
is "$?" 0 "OIDC: SIGTERM: exit 0"
tap_done
