#!/bin/bash
# 13-refuse-latest-stop-signals.t — the end offset is refused, and every
# stopping signal is an orderly shutdown.
#
# Reset to the end: `-X auto.offset.reset=latest`, accepted, would silently
# skip the messages already in a partition the group has no offset for.  Every
# spelling that means "the end" (latest, largest, end), on the command line
# or in a -F file, must end the feeder with exit status 2 and a reason that
# names the property and why; earliest stays accepted.  Any case (LATEST,
# Largest) and the default topic configuration's name
# (topic.auto.offset.reset) are refused too, and so is a --group longer
# than the database keeps (255 bytes), which would fail every batch.
#
# Signals: SIGHUP (and SIGUSR1, SIGUSR2, SIGALRM) would end the feeder by
# their default action, without its orderly shutdown.  Each must stop it as
# SIGTERM does: event=signal_received signal=SIGx, exit 0, the offsets of
# the committed batches committed at shutdown, the group left.  Each signal
# arrives mid-stream, with periodic commits off (auto.commit.interval.ms of
# ten minutes), so the offsets Kafka holds afterwards can only come from the
# shutdown commit: they must equal the positions the database recorded in
# the same transactions as the batches.
#
# On 1.0 (RO_FEEDER_BIN=/tmp/ro-1.0/feeder/received-orders-feeder): the
# latest spellings run instead of exiting 2, and each signal kills the
# process (exit 128+N, no signal_received, no shutdown commit).

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
PARTITIONS=3
PER_PARTITION=1500
SIGNALS=(SIGHUP SIGUSR1 SIGUSR2 SIGALRM)
FEEDER_ARGS=(--batch-size 5 --batch-wait-ms 20 -X auto.commit.interval.ms=600000)
plan $((5 * 2 + 2 + 2 + 3 + ${#SIGNALS[@]} * 7))

# exits_with NAME SECONDS WANT — the feeder exits on its own within SECONDS
# with status WANT (call it in the suite's shell: it reaps the process)
exits_with() {
	if ! feeder_wait_exit "$1" "$2"; then
		diag "$1 still runs after $2 s"
		feeder_kill "$1"
		return 1
	fi
	[ "$FEEDER_RC" -eq "$3" ] || { diag "$1 exited with status $FEEDER_RC, not $3"; return 1; }
}

# committed_equals_db GROUP — the offsets Kafka holds for GROUP are the
# database's positions of GROUP, partition by partition, and not empty
committed_equals_db() {
	local kafka db
	kafka=$(kafka_committed "$1" "$E2E_TOPIC" | awk '$3 >= 0 { print $1, $2, $3 }' | sort) || return 1
	db=$(db_positions "$1" | sort) || return 1
	if [ -z "$kafka" ] || [ "$kafka" != "$db" ]; then
		diag "Kafka's committed offsets: $(tr '\n' ';' <<<"$kafka")" "database positions: $(tr '\n' ';' <<<"$db")"
		return 1
	fi
}

# file_refusal_logged — the refusal names the -F file, the property and why
file_refusal_logged() {
	grep -F latest.conf "$E2E_TMP/reset-file.log" | grep -Eq 'auto\.offset\.reset=latest.*(skip|never)'
}

# left_group NAME — after its signal_received line, NAME's log shows the
# assignment revoked: the consumer was closed, leaving the group
left_group() {
	sed -n '/event=signal_received/,$p' "$E2E_TMP/$1.log" | grep -q 'event=partitions_revoked'
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
if [ -n "${RO_FEEDER_BIN:-}" ]; then
	# the older feeder calls the batch function without a consumer group
	sql "GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) TO \"$E2E_ROLE\""
fi
for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 $PER_PARTITION
done
flush || bail "kcat could not produce"
total=$(expected_rows | wc -l)

# --- every spelling of "the end" is refused at once, exit 2
for value in latest largest end LATEST Largest; do
	feeder_start "reset-$value" "$E2E_TOPIC" "e2e-13-reset-$value" -X auto.offset.reset="$value"
	exits_with "reset-$value" 10 2
	tap_ok $? "-X auto.offset.reset=$value: the feeder exits 2 at once"
	check "-X auto.offset.reset=$value: the reason names the property, the value and why" \
		grep -Eq "auto\.offset\.reset=$value.*(skip|never)" "$E2E_TMP/reset-$value.log"
done
# librdkafka also takes the default topic configuration's name
feeder_start reset-topic "$E2E_TOPIC" e2e-13-reset-topic -X topic.auto.offset.reset=latest
exits_with reset-topic 10 2
tap_ok $? "-X topic.auto.offset.reset=latest: the feeder exits 2 at once"
check "-X topic.auto.offset.reset=latest: the reason names the property and why" \
	grep -Eq "topic\.auto\.offset\.reset=latest.*(skip|never)" "$E2E_TMP/reset-topic.log"
# a group the database cannot keep would fail every batch for ever
long_group=$(printf 'g%.0s' {1..256})
feeder_start group-too-long "$E2E_TOPIC" "$long_group"
exits_with group-too-long 10 2
tap_ok $? "--group of 256 bytes: the feeder exits 2 at once"
check "--group of 256 bytes: the reason gives the length and the limit" \
	grep -Eq "256 bytes long; at most 255" "$E2E_TMP/group-too-long.log"
printf '# settings\nbatch-size=5\nauto.offset.reset=latest\n' >"$E2E_TMP/latest.conf"
feeder_start reset-file "$E2E_TOPIC" e2e-13-reset-file -F "$E2E_TMP/latest.conf"
exits_with reset-file 10 2
tap_ok $? "auto.offset.reset=latest in a -F file: the feeder exits 2 at once"
check "auto.offset.reset=latest in a -F file: the reason names the file, the property and why" \
	file_refusal_logged
is "$(committed_sum e2e-13-reset-latest)$(rows)" 00 "nothing was consumed by a refused feeder"

# --- each signal mid-stream is an orderly shutdown
first=1
for sig in "${SIGNALS[@]}"; do
	group=e2e-13-${sig,,}
	name=${sig,,}
	before=$(rows)
	if ((first)); then
		feeder_start "$name" "$E2E_TOPIC" "$group" "${FEEDER_ARGS[@]}" -X auto.offset.reset=earliest
		check "-X auto.offset.reset=earliest is accepted: the feeder consumes" \
			ro_wait_until 30 rows_at_least $((total / 5))
		first=0
	else
		sql "TRUNCATE received_orders.received_orders, received_orders.received_orders_quarantine" >/dev/null
		feeder_start "$name" "$E2E_TOPIC" "$group" "${FEEDER_ARGS[@]}"
		check "$sig: the feeder is mid-stream" ro_wait_until 30 rows_at_least $((total / 5))
	fi
	kill -s "$sig" "${FEEDER_PIDS[$name]}"
	exits_with "$name" 20 0
	tap_ok $? "$sig mid-stream: the feeder exits 0 within 20 s"
	diag "$sig: $(rows) of $total orders stored (before: $before)"
	check "$sig: logged as event=signal_received signal=$sig" \
		grep -Eq "event=signal_received .*signal=$sig( |$)" "$E2E_TMP/$name.log"
	check "$sig: the offsets were committed at shutdown" \
		grep -Eq 'event=offsets_committed .*reason=shutdown .*result=committed' "$E2E_TMP/$name.log"
	check "$sig: the group is left: the assignment is revoked after the signal (consumer close)" \
		left_group "$name"
	check "$sig: Kafka's committed offsets are exactly the database's positions (every committed batch acknowledged, nothing more)" \
		committed_equals_db "$group"
	check "$sig: every message below the committed offsets is stored or quarantined" \
		check_below_committed "$group"
done
tap_done
