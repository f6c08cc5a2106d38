# test/kafka-real/security.sh — the secured listeners' client options and
# the checks after the cluster refused a feeder, for r07, r11 and r11b
#
# Sourced by those scripts after lib.sh.  Functions:
#
#   kr_acl ARGS...          AclCommand against the PLAINTEXT listener (a
#                           super user); Kafka 3.x keeps it in the broker's
#                           jar as kafka.admin.AclCommand (the pom-3.x.xml
#                           runs, see docs/compatibility.md)
#   kr_oidc_args CLIENT_ID SECRET
#                           the feeder's -X options for the OAUTHBEARER
#                           listener, tokens from the suite's OIDC issuer
#                           (sasl.oauthbearer.method=oidc; https.ca.location
#                           for the token endpoint, ssl.ca.location for the
#                           brokers): KR_OIDC_ARGS
#   kr_mtls_args [CERT KEY] the feeder's -X options for the SSL listener,
#                           with that client certificate (none without):
#                           KR_MTLS_ARGS
#   kr_refused NAME DESC REGEX GROUP
#                           the feeder NAME exits within 20 s, with 3, its
#                           kafka_refused line matching REGEX (what to fix);
#                           then nothing was stored wrong (each stored order
#                           one of the manifest, once) and no offset of
#                           GROUP is acknowledged ahead of the database:
#                           five test points
# shellcheck shell=bash

# kr_acl ARGS... — see the header
kr_acl() {
	local class=org.apache.kafka.tools.AclCommand
	grep -qa 'org/apache/kafka/tools/AclCommand.class' "$AK_LIB"/kafka-tools-[0-9]*.jar ||
		class=kafka.admin.AclCommand
	ak_java "$class" --bootstrap-server "$AK_BOOTSTRAP" "$@" >/dev/null
}

# kr_oidc_args CLIENT_ID SECRET — see the header
kr_oidc_args() {
	KR_OIDC_ARGS=(-X security.protocol=SASL_SSL -X sasl.mechanisms=OAUTHBEARER
		-X sasl.oauthbearer.method=oidc -X "sasl.oauthbearer.client.id=$1"
		-X "sasl.oauthbearer.client.secret=$2" -X sasl.oauthbearer.scope=kafka
		-X "sasl.oauthbearer.token.endpoint.url=$AK_OIDC_TOKEN_URL"
		-X "https.ca.location=$AK_CA" -X "ssl.ca.location=$AK_CA")
}

# kr_mtls_args [CERT KEY] — see the header
kr_mtls_args() {
	KR_MTLS_ARGS=(-X security.protocol=ssl -X "ssl.ca.location=$AK_CA")
	[ $# -eq 0 ] || KR_MTLS_ARGS+=(-X "ssl.certificate.location=$1" -X "ssl.key.location=$2")
}

# kr_stored_rightly — every stored order is one of the manifest's, once
kr_stored_rightly() {
	expected_rows >"$E2E_TMP/rows.expected"
	actual_rows >"$E2E_TMP/rows.actual"
	local extra doubled
	extra=$(comm -13 "$E2E_TMP/rows.expected" "$E2E_TMP/rows.actual" | head -5)
	doubled=$(uniq -d "$E2E_TMP/rows.actual" | head -5)
	[ -z "$extra$doubled" ] || diag "not in the manifest: $extra; stored twice: $doubled"
	[ -z "$extra$doubled" ]
}

# kr_refused NAME DESC REGEX GROUP — see the header
kr_refused() {
	local rc status=0
	if feeder_wait_exit "$1" 20; then
		rc=$FEEDER_RC
	else
		rc=running
		status=1
		feeder_kill "$1"
	fi
	tap_ok "$status" "$2: the feeder exits within 20 s"
	is "$rc" 3 "$2: exit status 3"
	check "$2: its log names what to fix" \
		grep -Eq "level=fatal event=kafka_refused .*$3" "$E2E_TMP/$1.log"
	tap_last_ok || diag "$(tail -5 "$E2E_TMP/$1.log")"
	check "$2: nothing stored wrong (each order of the manifest, once)" kr_stored_rightly
	check "$2: no offset of $4 acknowledged ahead of the database" kr_no_acks_ahead "$4"
}
