# test/kafka-real/lib.sh — shared plumbing of the real-cluster suite
#
# Sourced by test/kafka-real/*.t (bash) after nothing else.  Brings
# test/e2e/lib.sh (TAP shorthands, the suite's database and feeder role,
# feeders in the background, the manifest of produced messages and the
# checks against it: the helpers read KAFKA_BOOTSTRAP, which points here at
# the real cluster) and test/lib/apache_kafka.sh.  Functions:
#
#   kr_cluster              attach to the suite's cluster (test/run started
#                           it: RO_SUITE_CLUSTER), else start 3 nodes for
#                           this script alone
#   kr_topic TOPIC PARTITIONS [--config K=V ...]
#                           create a topic (replication factor 3,
#                           min.insync.replicas 2: the cluster's defaults)
#   kr_account GROUP LABEL  the account, four test points: every valid order
#                           stored once, every bad one quarantined once,
#                           every produced message in Kafka, no offset of
#                           GROUP acknowledged ahead of the database
#                           (kr_acks_ahead)
#   kr_acks_ahead GROUP     the partitions whose committed offset lies past
#                           the database's position over a message: beyond
#                           it only over records a read_committed consumer
#                           never sees (transaction markers, aborted
#                           messages) is not ahead
#   kr_no_acks_ahead GROUP  true when kr_acks_ahead finds none (else says
#                           which, as a diagnostic)
#   kr_delete_records TOPIC PARTITION OFFSET
#                           Kafka's DeleteRecords: the partition's log
#                           start moves to OFFSET
#   todo ASSERTION ARGS...  run one assertion (check, is, tap_ok...) whose
#                           description carries "# TODO reason": a known
#                           defect, shown as "not ok ... # TODO" and counted
#                           as TAP counts TODO (not a failure of the script)
#   kr_sasl_args USER PASSWORD [MECHANISM]
#                           the feeder's and kcat's -X options for the
#                           SASL_SSL listener (MECHANISM: SCRAM-SHA-512)
#
# KR_GROUP_PROTOCOL=consumer (set by r12-r15, which re-run r01, r02, r05 and
# r06 so): every feeder runs --group-protocol consumer (KIP-848), without
# the suite's session.timeout.ms and heartbeat.interval.ms (the broker owns
# them under that protocol: group.consumer.session.timeout.ms, 45 s by
# default), and kr_account adds one test point: every feeder started said
# group_protocol=consumer, every assignment was incremental and none
# failed (kr_ran_consumer_protocol).
# shellcheck shell=bash

# the 3.x line (AK_POM=tools/apache-kafka/pom-3.x.xml, the by-hand 3.9.2
# runs of docs/compatibility.md) does not serve KIP-848's protocol by default
if [ "${KR_GROUP_PROTOCOL:-classic}" = consumer ]; then
	case ${AK_POM:-} in
	*pom-3.*)
		echo "1..0 # SKIP KIP-848's consumer group protocol is served from Kafka 4.0 (AK_POM=$AK_POM)"
		exit 0
		;;
	esac
fi

# shellcheck source=test/e2e/lib.sh
. "$RO_ROOT/test/e2e/lib.sh"
# shellcheck source=test/lib/apache_kafka.sh
. "$RO_ROOT/test/lib/apache_kafka.sh"
# shellcheck source=test/kafka-real/settings.sh
. "$RO_ROOT/test/kafka-real/settings.sh"

if [ "${KR_GROUP_PROTOCOL:-classic}" = consumer ]; then
	FEEDER_DEFAULT_ARGS=(--group-protocol consumer)
	plan() {
		tap_plan $(($1 + 1))
	}
fi

# kr_ran_consumer_protocol — every feeder of the script started with
# group_protocol=consumer, librdkafka reported each assignment change as
# incremental (COOPERATIVE: the consumer protocol once subscribed) and no
# assign call failed; says what it found otherwise
kr_ran_consumer_protocol() {
	local logs=("$E2E_TMP"/*.log) starts bad
	starts=$(cat "${logs[@]}" | grep -c 'event=starting ')
	bad=$(cat "${logs[@]}" | grep -E 'event=starting ' | grep -vc 'group_protocol=consumer')
	bad=$((bad + $(cat "${logs[@]}" | grep -E 'event=partitions_(assigned|revoked) ' | grep -vc 'protocol=COOPERATIVE')))
	bad=$((bad + $(cat "${logs[@]}" | grep -c 'event=assign_failed')))
	[ "$starts" -gt 0 ] && [ "$bad" -eq 0 ] && return 0
	diag "$starts feeder starts; $bad lines of another protocol or a failed assignment"
	return 1
}

# kr_cluster — see the header
kr_cluster() {
	if [ -n "${RO_SUITE_CLUSTER:-}" ] && [ -f "$RO_SUITE_CLUSTER/env" ]; then
		ak_attach "$RO_SUITE_CLUSTER"
	else
		ak_start 3
	fi
}

# kr_topic TOPIC PARTITIONS [ARGS...] — create TOPIC
kr_topic() {
	ak_create_topic "$@"
}

# kr_account GROUP LABEL — the account (see the header)
kr_account() {
	local group=$1 label=$2 ahead
	expected_rows >"$E2E_TMP/rows.expected"
	actual_rows >"$E2E_TMP/rows.actual"
	check "$label: every valid order stored once ($(wc -l <"$E2E_TMP/rows.expected") rows)" \
		compare rows "$E2E_TMP/rows.expected" "$E2E_TMP/rows.actual"
	expected_quarantine >"$E2E_TMP/quarantine.expected"
	actual_quarantine >"$E2E_TMP/quarantine.actual"
	check "$label: every bad message quarantined once ($(wc -l <"$E2E_TMP/quarantine.expected") rows)" \
		compare quarantine "$E2E_TMP/quarantine.expected" "$E2E_TMP/quarantine.actual"
	check "$label: every produced message is in Kafka" check_all_in_kafka
	ahead=$(kr_acks_ahead "$group" 2>&1) || ahead="could not read the offsets: $ahead"
	is "$ahead" "" "$label: no offset acknowledged ahead of the database"
	if [ "${KR_GROUP_PROTOCOL:-classic}" = consumer ]; then
		check "$label: every feeder ran the consumer group protocol, incrementally" \
			kr_ran_consumer_protocol
	fi
}

# kr_acks_ahead GROUP — see the header; "TOPIC PARTITION COMMITTED
# DB_POSITION" per partition ahead
kr_acks_ahead() {
	local ahead topic part committed pos seen
	ahead=$(acks_ahead "$1") || return 1
	while read -r topic part committed pos; do
		[ -n "$topic" ] || continue
		if [ "$pos" != none ]; then
			seen=$(timeout 30 kcat -C -b "$KAFKA_BOOTSTRAP" -t "$topic" -p "$part" -o "$pos" \
				-X isolation.level=read_committed -e -q -f '%o\n' 2>/dev/null |
				awk -v c="$committed" '$1 < c' | head -1)
			[ -n "$seen" ] || continue
		fi
		echo "$topic $part $committed $pos"
	done <<<"$ahead"
}

# kr_no_acks_ahead GROUP — see the header
kr_no_acks_ahead() {
	local ahead
	ahead=$(kr_acks_ahead "$1") || return 1
	[ -z "$ahead" ] || diag "acknowledged ahead of the database: $ahead"
	[ -z "$ahead" ]
}

# kr_delete_records TOPIC PARTITION OFFSET — see the header
kr_delete_records() {
	printf '{"version":1,"partitions":[{"topic":"%s","partition":%d,"offset":%d}]}\n' \
		"$1" "$2" "$3" >"$E2E_TMP/delete.json"
	ak_java org.apache.kafka.tools.DeleteRecordsCommand --bootstrap-server "$AK_BOOTSTRAP" \
		--offset-json-file "$E2E_TMP/delete.json" >"$E2E_TMP/delete.out" 2>&1
}

# todo ASSERTION ARGS... — see the header
todo() {
	"$@"
	tap_last_ok || TAP__FAILED=$((TAP__FAILED - 1))
}

# kr_sasl_args USER PASSWORD [MECHANISM] — -X options for the SASL_SSL
# listener, one word each (pass with "${KR_SASL_ARGS[@]}")
kr_sasl_args() {
	KR_SASL_ARGS=(-X security.protocol=SASL_SSL -X "sasl.mechanisms=${3:-SCRAM-SHA-512}"
		-X "sasl.username=$1" -X "sasl.password=$2" -X "ssl.ca.location=$AK_CA")
}
