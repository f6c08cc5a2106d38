#!/bin/bash
# 31-second-cluster-refused.t — a consumer group's positions belong to one
# Kafka cluster and to one role.
#
# A feeder consumes a topic of the development Kafka (cluster id
# "ro-dev-kafka") and stops: the database records the cluster's id and the
# feeder's role as the group's owner.  Then the same group meets a second
# development Kafka (cluster id "second-cluster") with the same topic name
# and more messages per partition than the first's positions (so that
# applying those positions there would skip the messages below them
# without a word): the feeder is refused at once (exit 3, event=database_config_error
# step=positions sqlstate=55000 naming both cluster ids, a hint naming
# forget_consumer_positions), stores nothing, commits nothing to the second
# cluster and leaves the first cluster's positions as they were.  Another
# role, with the same grants, cannot use the group either (42501, exit 3).
# After forget_consumer_positions(group) the feeder starts on the second
# cluster, reads its topic from the start and records its id.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-26
FEEDER_ARGS=(--batch-size 20 --batch-wait-ms 50)
plan 20

# group_row — "OWNER CLUSTER" of the group, as recorded
group_row() {
	sql "SELECT coalesce(owner_role::text, '-') || ' ' || coalesce(kafka_cluster_id, '-')
	       FROM received_orders.received_orders_consumer_groups WHERE consumer_group = '$GROUP'"
}

# refused NAME — the feeder exits on its own within 30 s with status 3
refused() {
	feeder_wait_exit "$1" 30 || {
		diag "$1 still runs after 30 s"
		feeder_kill "$1"
		return 1
	}
	[ "$FEEDER_RC" = 3 ] || diag "$1 exited with status $FEEDER_RC"
	[ "$FEEDER_RC" = 3 ]
}

# produce_orders FIRST LAST — orders FIRST..LAST on partitions 0 and 1
produce_orders() {
	local n
	for ((n = $1; n <= $2; n++)); do
		msg $((n % 2)) "o$n" insert "$n" "EXT-$n" - "$(event "$n" "EXT-$n")"
	done
	flush
}

# nothing_committed — no partition of the topic has an offset committed
# for the group on the running cluster
nothing_committed() {
	local c
	c=$(kafka_committed "$GROUP" "$E2E_TOPIC") || return 1
	[ -n "$c" ] && ! awk '$3 != -1 { found = 1 } END { exit !found }' <<<"$c"
}

kafka_start 1 "$E2E_TOPIC:2" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
check "the feeder's role holds only USAGE on the schema and EXECUTE on what the feeder calls" \
	e2e_role_is_least_privilege

# --- the first cluster
produce_orders 1 100 || bail "kcat could not produce"
feeder_start first "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "on the first cluster the feeder stores the topic" \
	db_wait_caught_up "$GROUP" 60
feeder_stop first
is "$?" 0 "SIGTERM: the feeder exits 0"
is "$(group_row)" "$E2E_ROLE ro-dev-kafka" \
	"the group is recorded with the feeder's role as owner and the first cluster's id"
check "the feeder logged the cluster id it is connected to" \
	grep -q "event=kafka_cluster cluster_id=ro-dev-kafka" "$E2E_TMP/first.log"
db_positions "$GROUP" >"$E2E_TMP/positions.first"
rows >"$E2E_TMP/rows.first"
is "$(cat "$E2E_TMP/rows.first")" 100 "100 orders stored"

# --- another role, same grants, same group: refused
psql -X -q -v ON_ERROR_STOP=1 -d "$E2E_DB" -v role="${E2E_ROLE}_other" -v pw="$E2E_PASSWORD" \
	-v functions="$(IFS='|' && echo "${E2E_FEEDER_FUNCTIONS[*]}")" <<-'EOF' || bail "could not create the other role"
	SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'role', :'pw')
	 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
	SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'role', :'pw') \gexec
	SELECT format('GRANT USAGE ON SCHEMA received_orders TO %I', :'role') \gexec
	SELECT format('GRANT EXECUTE ON FUNCTION %s TO %I', f, :'role')
	  FROM unnest(string_to_array(:'functions', '|')) AS f \gexec
EOF
OTHER_DSN="${E2E_DSN/user=$E2E_ROLE /user=${E2E_ROLE}_other }"
"$(ro_feeder_bin)" --brokers "$KAFKA_BOOTSTRAP" --topic "$E2E_TOPIC" --group "$GROUP" \
	--dsn "$OTHER_DSN" "${FEEDER_DEFAULT_ARGS[@]}" "${FEEDER_ARGS[@]}" \
	</dev/null >"$E2E_TMP/other.out" 2>"$E2E_TMP/other.log" &
FEEDER_PIDS[other]=$!
refused other
tap_ok $? "another role's feeder on the group exits 3 at once"
check "its log says the group belongs to the first role (42501) and what a DBA runs" \
	bash -c 'grep -E "event=database_config_error step=positions sqlstate=42501 error=\"permission denied for consumer group .*belong to role .*$2" "$1" |
		grep -q "hint=\"Use another consumer group, or have a superuser grant"' _ "$E2E_TMP/other.log" "$E2E_ROLE"
is "$(db_positions "$GROUP")" "$(cat "$E2E_TMP/positions.first")" "the other role moved no position"

# --- the second cluster, same topic name
kafka_stop
KAFKA_CLUSTER_ID=second-cluster kafka_start 1 "$E2E_TOPIC:2" || bail "could not start the second development Kafka"
: >"$E2E_MANIFEST"
produce_orders 101 250 || bail "kcat could not produce"
feeder_start second "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
refused second
tap_ok $? "on the second cluster the feeder exits 3 at once"
check "its log names both clusters (55000)" \
	grep -Eq 'event=database_config_error step=positions sqlstate=55000 error="consumer group \\"e2e-26\\" has positions of another Kafka cluster: Its positions were taken on the Kafka cluster with id \\"ro-dev-kafka\\"; the caller is connected to the cluster with id \\"second-cluster\\"' \
	"$E2E_TMP/second.log"
check "its hint says to forget the positions or use another group" \
	grep -Eq 'hint="If the group really moved to that cluster, its positions do not apply there: forget them with SELECT received_orders.forget_consumer_positions\(.e2e-26.\); or use another consumer group' \
	"$E2E_TMP/second.log"
is "$(rows)" "$(cat "$E2E_TMP/rows.first")" "nothing was stored"
is "$(db_positions "$GROUP")" "$(cat "$E2E_TMP/positions.first")" "the first cluster's positions are untouched"
is "$(group_row)" "$E2E_ROLE ro-dev-kafka" "the recorded cluster is still the first one"
check "nothing was committed to the second cluster" nothing_committed

# --- the group moves: forget its positions
is "$(sql "SELECT received_orders.forget_consumer_positions('$GROUP')")" 2 \
	"forget_consumer_positions removes the group's two positions"
feeder_start second "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "then the feeder stores the second cluster's topic" \
	db_wait_caught_up "$GROUP" 60
feeder_stop second
is "$?" 0 "SIGTERM: the feeder exits 0"
is "$(rows) $(group_row)" "250 $E2E_ROLE second-cluster" \
	"every order of both clusters is stored and the group now records the second cluster"
tap_done
