#!/bin/bash
# 48-claim-limit-exits.t — a role claims at most 16 consumer groups by
# using them (the extension refuses the 17th with SQLSTATE 54000): a feeder
# of a 17th group of that role exits 3 within seconds, naming the limit and
# what a DBA runs to forget the groups no longer used, instead of waiting
# for its positions (positions_unavailable every 30 s) for ever.  Nothing
# is claimed, stored or acknowledged meanwhile.  After the DBA's remedy
# (one old group forgotten: its positions, then its owner), the same
# feeder starts and consumes.  A feeder of one of the role's own 16 groups
# is not refused.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-48-seventeenth
OLD_PREFIX=e2e-48-old-
LIMIT=16
FEEDER_ARGS=(--batch-size 20 --batch-wait-ms 50)
plan 13

# log_has NAME REGEX — the feeder's log matches the extended REGEX
log_has() {
	grep -Eq -- "$2" "$E2E_TMP/$1.log"
}

# owned — how many groups the feeder's role owns
owned() {
	sql "SELECT count(*) FROM received_orders.received_orders_consumer_groups
	      WHERE owner_role = '$E2E_ROLE'"
}

# claim_as_role GROUP — the feeder's role uses GROUP (reads its positions,
# as a feeder does first), which claims it
claim_as_role() {
	psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$E2E_DSN" \
		-c "SELECT count(*) FROM received_orders.consumer_positions('$1', '${KAFKA_CLUSTER_ID:-ro-dev-kafka}')" >/dev/null
}

# nothing_committed — no offset of GROUP committed in Kafka
nothing_committed() {
	local committed
	committed=$(kafka_committed "$GROUP" "$E2E_TOPIC") || return 1
	awk '$3 > 0 { found = 1 } END { exit found }' <<<"$committed"
}

kafka_start 1 "$E2E_TOPIC:2" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"

# the role claims LIMIT groups by using them, as LIMIT earlier feeders (a
# benchmark's runs, say) did
for ((i = 1; i <= LIMIT; i++)); do
	claim_as_role "$OLD_PREFIX$i" || bail "the role could not claim group $OLD_PREFIX$i"
done
is "$(owned)" "$LIMIT" "the feeder's role owns $LIMIT groups"

for ((n = 1; n <= 40; n++)); do
	msg $((n % 2)) "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
done
flush || bail "kcat could not produce"

# --- the 17th group: exit 3 at once, naming the limit and the remedy
started=$SECONDS
feeder_start over "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
if feeder_wait_exit over 20; then
	diag "the feeder exited with status $FEEDER_RC after $((SECONDS - started)) s"
	is "$FEEDER_RC" 3 "a 17th group of the role: the feeder exits 3 within 20 s"
else
	feeder_kill over
	tap_ok 1 "a 17th group of the role: the feeder exits 3 within 20 s (still running after 20 s)"
fi
check "the line names the refusal: database_config_error step=positions sqlstate=54000" \
	log_has over 'event=database_config_error step=positions sqlstate=54000'
check "... and the limit: at most $LIMIT consumer groups" \
	log_has over "event=database_config_error .*at most $LIMIT consumer groups"
check "... and how a DBA forgets an old group: forget_consumer_positions, then set_consumer_group_owner(..., NULL)" \
	bash -c 'grep "event=database_config_error" "$1" | grep -F "received_orders.forget_consumer_positions('"'OLD_GROUP'"')" |
		grep -qF "received_orders.set_consumer_group_owner('"'OLD_GROUP'"', NULL)"' _ "$E2E_TMP/over.log"
check "it never waited for its positions (no positions_unavailable line)" \
	bash -c '! grep -q "event=positions_unavailable" "$1"' _ "$E2E_TMP/over.log"
is "$(owned)" "$LIMIT" "the 17th group was not claimed"
is "$(rows)" 0 "nothing was stored"
check "nothing was acknowledged" nothing_committed

# --- one of the role's own groups is not refused
feeder_start own "$E2E_TOPIC" "${OLD_PREFIX}1" "${FEEDER_ARGS[@]}"
check "a feeder of one of the role's $LIMIT groups consumes the topic" \
	kafka_wait_caught_up "${OLD_PREFIX}1" "$E2E_TOPIC" 60
feeder_stop own
is "$?" 0 "SIGTERM: it exits 0"

# --- the DBA's remedy: one group no longer used forgotten
sql "SELECT received_orders.forget_consumer_positions('${OLD_PREFIX}2');
     SELECT received_orders.set_consumer_group_owner('${OLD_PREFIX}2', NULL)" >/dev/null 2>&1
feeder_start again "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "after the remedy, the feeder of the 17th group consumes the topic" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 60
feeder_stop again
is "$?" 0 "SIGTERM: it exits 0"
tap_done
