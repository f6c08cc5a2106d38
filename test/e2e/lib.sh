# test/e2e/lib.sh — shared plumbing of the end-to-end suites
#
# Sourced by test/e2e/NN-*.t (bash).  Gives each suite: TAP output, a temp
# directory, its own database with the extension and a least-privilege
# feeder role, feeder processes in the background (PIDs recorded, killed by
# the EXIT trap), bounded waits, a manifest of produced messages and the
# checks that compare the database against it.
#
# Manifest: one line per produced message, tab-separated
#   LABEL PARTITION KIND ORDER_ID REF SQLSTATE
# LABEL is the message's Kafka key (unique per message); KIND is
#   insert    first occurrence of ORDER_ID: row (ORDER_ID, REF) expected
#   dup       same ORDER_ID and REF as an earlier one: no new row, no quarantine
#   conflict  same ORDER_ID, another REF: quarantined, outcome conflict, 23505
#   reject    invalid event: quarantined, outcome rejected, SQLSTATE
#   tomb      NULL value: skipped, nothing stored
#   race      ORDER_ID also sent with another REF on another partition: which
#             one wins depends on timing; exactly one row holds one of the
#             REFs, every other one is quarantined as a conflict
# shellcheck shell=bash

set -u

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export RO_ROOT

# shellcheck source=test/lib/pg.sh
. "$RO_ROOT/test/lib/pg.sh"
# shellcheck source=test/lib/kafka.sh
. "$RO_ROOT/test/lib/kafka.sh"

E2E_NAME=$(basename "$0" .t)
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/ro-e2e-$E2E_NAME.XXXXXX")
chmod 755 "$E2E_TMP"
E2E_MANIFEST=$E2E_TMP/manifest
: >"$E2E_MANIFEST"
E2E_DB=
E2E_ROLE=
E2E_PASSWORD=
E2E_DSN=
declare -A FEEDER_PIDS=()
# the functions the feeder calls, as regprocedure prints them (each
# form of the batch function): received_orders.grant_feeder grants its role
# EXECUTE on these and on nothing else, which e2e_role_is_least_privilege
# checks
E2E_FEEDER_FUNCTIONS=(
	'received_orders.consumer_positions(text,text)'
	'received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[])'
	'received_orders.restart_position(text,text,integer,bigint,bigint)'
	'received_orders.report_feeder(text,text,text,integer,text,timestamp with time zone,text,text[],integer[],bigint[],text,timestamp with time zone,interval,interval)'
	'received_orders.record_high_watermarks(text,text,text[],integer[],bigint[])'
	'received_orders.record_position_gap(text,text,integer,bigint,bigint,boolean)'
	'received_orders.advance_positions(text,text[],integer[],bigint[],bigint[])'
	'received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[])'
	'received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[],bytea[],integer[],text[],uuid[])'
)
# the outbox form of the batch function, which a feeder with --envelope or
# --event-type calls (grant_feeder grants it; a suite granting it again
# changes nothing)
# shellcheck disable=SC2034 # used by the suites
E2E_OUTBOX_FUNCTION='received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[])'
# functions the feeder's role must not be able to execute (operators' tools,
# the adoption's, the batch function without a group, the single-event and
# replay ones, grant_feeder's)
E2E_NOT_FEEDER_FUNCTIONS=(
	'received_orders.materialize_orders(bytea[],text[],integer[],bigint[],bytea[])'
	'received_orders.materialize_order(jsonb)'
	'received_orders.replay_quarantined(bigint)'
	'received_orders.set_consumer_position(text,text,integer,bigint)'
	'received_orders.forget_consumer_positions(text,text)'
	'received_orders.adopt_consumer_position(text,text,integer,bigint)'
	'received_orders.set_consumer_group_owner(text,name)'
	'received_orders.check_consumer_group(text,text)'
	'received_orders.consumer_positions(text)'
	'received_orders.accept_position_gap(text,text,integer)'
	'received_orders.grant_feeder(regrole)'
	'received_orders.revoke_feeder(regrole)'
	'received_orders.feeder_functions()'
)

# ---------------------------------------------------------------- TAP
# (tap_plan, tap_ok, tap_is, tap_cmd, tap_diag, tap_done come from
# test/lib/common.sh; these are the shorthands the suites use)

# plan N — print the TAP plan
plan() {
	tap_plan "$1"
}

# check DESCRIPTION CMD... — one test point for CMD's exit status; its
# output (diagnostics included) is shown only when it fails.  CMD runs in a
# subshell: what reaps or forgets a feeder (feeder_stop, feeder_kill,
# feeder_wait_exit) must run in the suite's own shell instead
check() {
	tap_cmd "$@"
}

# is GOT EXPECTED DESCRIPTION — equality test point
is() {
	tap_is "$1" "$2" "$3"
}

# diag TEXT... — a TAP comment on stderr
diag() {
	tap_diag "$@"
}

# bail TEXT — stop the suite
bail() {
	echo "Bail out! $*"
	exit 1
}

# ---------------------------------------------------------------- waits

# ---------------------------------------------------------------- database

# sql SQL — run SQL in the suite's database as the superuser, rows unaligned
sql() {
	psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$E2E_DB" -c "$1"
}

# e2e_setup_db — the suite's own database on the harness's cluster (or a
# private one when the suite runs alone, or the one the suite pg_start'ed),
# with the extension, the role the feeder logs in as and the feeder's DSN.
# The role gets LOGIN and what received_orders.grant_feeder grants, as the
# README says: USAGE on the schema and EXECUTE on the functions a feeder
# calls (see E2E_FEEDER_FUNCTIONS)
e2e_setup_db() {
	pg_ensure_cluster >&2 || return 1
	E2E_DB="ro_e2e_${E2E_NAME//[^a-zA-Z0-9]/_}"
	E2E_ROLE="ro_feeder_${E2E_NAME%%-*}"
	E2E_PASSWORD="pw-$RANDOM$RANDOM-secret"
	dropdb --if-exists "$E2E_DB" >/dev/null 2>&1
	pg_createdb "$E2E_DB" received_orders || return 1
	psql -X -q -v ON_ERROR_STOP=1 -d "$E2E_DB" \
		-v role="$E2E_ROLE" -v pw="$E2E_PASSWORD" <<-'EOF' || return 1
		SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'role', :'pw')
		 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
		SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'role', :'pw') \gexec
		SELECT count(*) FROM received_orders.grant_feeder(quote_ident(:'role')::regrole) \g /dev/null
	EOF
	E2E_DSN="host=$PGHOST port=$PGPORT dbname=$E2E_DB user=$E2E_ROLE password=$E2E_PASSWORD"
}

# rows — how many orders are stored so far
rows() {
	sql "SELECT count(*) FROM received_orders.received_orders"
}

# rows_at_least N — the table holds N orders or more
rows_at_least() {
	[ "$(rows)" -ge "$1" ]
}

# e2e_role_is_least_privilege — what the feeder's role can do is exactly
# what the feeder needs: no privilege on any table or sequence of the
# schema (the positions table included), EXECUTE granted explicitly on the
# functions of E2E_FEEDER_FUNCTIONS and able to execute no other function of
# the schema (through PUBLIC or otherwise: not the batch function without
# a group, not the operators' set_consumer_position/
# forget_consumer_positions), USAGE but not CREATE on the schema, no superuser-like attribute, no role membership.
# Every function named in E2E_NOT_FEEDER_FUNCTIONS must exist (a renamed one
# would make the check vacuous)
e2e_role_is_least_privilege() {
	local r want
	r=$(psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$E2E_DB" -v role="$E2E_ROLE" \
		-v forbidden="$(IFS='|' && echo "${E2E_NOT_FEEDER_FUNCTIONS[*]}")" <<-'EOF'
		SELECT
		   (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		     WHERE n.nspname = 'received_orders' AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
		       AND (has_table_privilege(:'role', c.oid, 'SELECT,INSERT,UPDATE,DELETE,TRUNCATE,REFERENCES,TRIGGER')
		            OR (c.relkind = 'S' AND has_sequence_privilege(:'role', c.oid, 'USAGE,SELECT,UPDATE'))))
		 || ' ' ||
		   (SELECT coalesce(string_agg(p.oid::regprocedure::text || ':' || a.privilege_type, ','
		                               ORDER BY p.oid::regprocedure::text COLLATE "C"), '')
		      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace,
		           aclexplode(p.proacl) a
		     WHERE n.nspname = 'received_orders' AND a.grantee = (:'role')::regrole)
		 || ' ' ||
		   (SELECT coalesce(string_agg(p.oid::regprocedure::text, ',' ORDER BY p.oid::regprocedure::text COLLATE "C"), '')
		      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
		     WHERE n.nspname = 'received_orders' AND has_function_privilege(:'role', p.oid, 'EXECUTE'))
		 || ' ' ||
		   (SELECT count(*) FILTER (WHERE has_function_privilege(:'role', f::regprocedure, 'EXECUTE'))
		      FROM unnest(string_to_array(:'forbidden', '|')) AS f)
		 || ' ' || has_schema_privilege(:'role', 'received_orders', 'USAGE')
		 || ' ' || has_schema_privilege(:'role', 'received_orders', 'CREATE')
		 || ' ' || (SELECT rolsuper OR rolcreaterole OR rolcreatedb OR rolbypassrls FROM pg_roles WHERE rolname = :'role')
		 || ' ' || (SELECT count(*) FROM pg_auth_members m WHERE m.member = (:'role')::regrole)
	EOF
	) || return 1
	want="0 $(printf '%s:EXECUTE\n' "${E2E_FEEDER_FUNCTIONS[@]}" | LC_ALL=C sort | paste -sd,)"
	want+=" $(printf '%s\n' "${E2E_FEEDER_FUNCTIONS[@]}" | LC_ALL=C sort | paste -sd,) 0 true false false 0"
	if [ "$r" != "$want" ]; then
		diag "feeder role: table/sequence privileges, explicit function grants, executable functions, executable forbidden functions, schema USAGE, schema CREATE, superuser-like, memberships:" \
			"want: $want" "got:  $r"
		return 1
	fi
}

# e2e_drop_db — drop the suite's database (and role, once unused)
e2e_drop_db() {
	[ -n "$E2E_DB" ] || return 0
	dropdb --if-exists --force "$E2E_DB" >/dev/null 2>&1
	psql -X -q -d postgres -c "DROP ROLE IF EXISTS \"$E2E_ROLE\"" >/dev/null 2>&1
	E2E_DB=
}

# ---------------------------------------------------------------- feeder

# Every feeder gets a 6 s session timeout (librdkafka's default is 45 s):
# the mock cluster drops a member that left the group, cleanly or not, only
# when its session times out, and a member joining meanwhile waits for that.
# The status report stays as it is by default (--status-interval 10): every
# suite runs with it, as a deployment does.
FEEDER_DEFAULT_ARGS=(-X session.timeout.ms=6000 -X heartbeat.interval.ms=500)

# The status report opens a database session of its own, named by its
# fallback_application_name (feeder/status.c); the batches' sessions are
# named "received-orders-feeder".  A suite that counts, waits for or
# terminates the sessions that run batches selects them with
# batch_sessions_where, which leaves the status session out.
E2E_STATUS_APPLICATION='received-orders-feeder status'

# batch_sessions_where — an SQL condition on pg_stat_activity: the sessions
# of the feeder's role other than its status report's
batch_sessions_where() {
	printf "usename = '%s' AND application_name IS DISTINCT FROM '%s'" "$E2E_ROLE" "$E2E_STATUS_APPLICATION"
}

# RO_E2E_FEEDER_ARGS: words added to every feeder's arguments (before the
# suite's own), e.g. "--db-sessions 3" when 23-db-sessions.t runs a suite
# again with several database sessions.
read -r -a FEEDER_ENV_ARGS <<<"${RO_E2E_FEEDER_ARGS:-}"

# feeder_start NAME TOPIC GROUP [EXTRA ARGS...] — start a feeder in the
# background against the suite's Kafka and database; stderr goes to
# $E2E_TMP/NAME.log (appended, so restarts keep the history)
feeder_start() {
	local name=$1 topic=$2 group=$3
	shift 3
	echo "--- start $(date +%T.%N)" >>"$E2E_TMP/$name.log"
	"$(ro_feeder_bin)" --brokers "$KAFKA_BOOTSTRAP" --topic "$topic" \
		--group "$group" --dsn "$E2E_DSN" "${FEEDER_DEFAULT_ARGS[@]}" \
		"${FEEDER_ENV_ARGS[@]}" "$@" \
		</dev/null >>"$E2E_TMP/$name.out" 2>>"$E2E_TMP/$name.log" &
	FEEDER_PIDS[$name]=$!
}

# feeder_alive NAME — the feeder process still runs
feeder_alive() {
	local pid=${FEEDER_PIDS[$1]:-}
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# feeder_stop NAME [SECONDS] — SIGTERM, wait (30 s default), return its
# exit status (124 if it had to be killed)
feeder_stop() {
	local name=$1 pid=${FEEDER_PIDS[$1]:-} deadline rc
	[ -n "$pid" ] || return 0
	kill -TERM "$pid" 2>/dev/null
	deadline=$((SECONDS + ${2:-30}))
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		rc=124
	else
		wait "$pid"
		rc=$?
	fi
	unset "FEEDER_PIDS[$name]"
	return $rc
}

# feeder_kill NAME — kill -9, reap
feeder_kill() {
	local pid=${FEEDER_PIDS[$1]:-}
	[ -n "$pid" ] || return 0
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	unset "FEEDER_PIDS[$1]"
}

# feeder_wait_exit NAME SECONDS — wait for the feeder to exit on its own;
# sets FEEDER_RC; fails on timeout
feeder_wait_exit() {
	local pid=${FEEDER_PIDS[$1]:-} deadline=$((SECONDS + $2))
	# shellcheck disable=SC2034 # read by the suites
	FEEDER_RC=
	[ -n "$pid" ] || return 1
	while kill -0 "$pid" 2>/dev/null; do
		((SECONDS < deadline)) || return 1
		sleep 0.1
	done
	wait "$pid"
	# shellcheck disable=SC2034 # read by the suites
	FEEDER_RC=$?
	unset "FEEDER_PIDS[$1]"
}

# feeder_assignment NAME — the partitions the feeder holds now, one per
# line, from its log: partitions_assigned adds (all of them under EAGER,
# the increment under COOPERATIVE), partitions_revoked removes
feeder_assignment() {
	awk '
		/^--- start/ { delete held }
		/event=partitions_(assigned|revoked)/ {
			line = $0
			sub(/.*partitions="/, "", line)
			sub(/".*/, "", line)
			n = split(line, parts, ", ")
			for (i = 1; i <= n; i++) {
				p = parts[i]
				sub(/.*\[/, "", p)
				sub(/\].*/, "", p)
				if ($0 ~ /event=partitions_assigned/) held[p] = 1
				else delete held[p]
			}
		}
		END { for (p in held) print p }' "$E2E_TMP/$1.log" | sort -n
}

# feeder_log NAME — the feeder's stderr so far
feeder_log() {
	cat "$E2E_TMP/$1.log" 2>/dev/null
}

# ---------------------------------------------------------------- cleanup

# e2e_cleanup — EXIT trap: kill feeders, stop Kafka, drop the database,
# keep the logs of a failed suite
e2e_cleanup() {
	local name
	for name in "${!FEEDER_PIDS[@]}"; do
		kill -KILL "${FEEDER_PIDS[$name]}" 2>/dev/null
		wait "${FEEDER_PIDS[$name]}" 2>/dev/null
	done
	kafka_stop
	e2e_drop_db
	if [ "$TAP__FAILED" -ne 0 ] || [ "$TAP__NUMBER" != "$TAP__PLAN" ]; then
		diag "ran $TAP__NUMBER of $TAP__PLAN, $TAP__FAILED failed; logs kept in $E2E_TMP"
		for name in "$E2E_TMP"/*.log; do
			[ -f "$name" ] || continue
			diag "--- tail of $name"
			diag "$(tail -n 15 "$name")"
		done
	elif [ "${RO_KEEP_TMP:-0}" = 1 ]; then
		diag "kept $E2E_TMP"
	else
		rm -rf "$E2E_TMP"
	fi
}
ro_on_exit e2e_cleanup

# ---------------------------------------------------------------- messages

# uid N — a deterministic order id
uid() {
	printf '00000000-0000-4000-8000-%012d' "$1"
}

# event N REF [EXTRA_JSON_MEMBERS] — an OrderReceived event for order N
event() {
	printf '{"type":"OrderReceived","orderId":"00000000-0000-4000-8000-%012d","externalReference":"%s","amount":%d%s}' \
		"$1" "$2" "$1" "${3:+,$3}"
}

# msg PARTITION LABEL KIND ORDER_NO REF SQLSTATE VALUE — queue one message
# for PARTITION and record its expectation (ORDER_NO may be -)
msg() {
	local p=$1 label=$2 kind=$3 no=$4 ref=$5 state=$6 value=$7 id=-
	[ "$no" != - ] && printf -v id '00000000-0000-4000-8000-%012d' "$no"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$p" "$kind" "$id" "$ref" "$state" >>"$E2E_MANIFEST"
	printf '%s\t%s\n' "$label" "$value" >>"$E2E_TMP/queue.$p"
}

# msg_file PARTITION LABEL KIND ORDER_NO REF SQLSTATE FILE — a message
# whose value is FILE's bytes, produced at once (flush first to keep order)
msg_file() {
	local p=$1 label=$2 kind=$3 no=$4 ref=$5 state=$6 file=$7 id=-
	[ "$no" != - ] && printf -v id '00000000-0000-4000-8000-%012d' "$no"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$p" "$kind" "$id" "$ref" "$state" >>"$E2E_MANIFEST"
	kafka_produce_file "$E2E_TOPIC" "$p" "$label" "$file"
}

# mixed_kind I — sets MIXED_KIND to what the I-th message of a mixed stream is: mostly
# orders, now and then a redelivered copy, a divergent duplicate, an invalid
# event or a tombstone
mixed_kind() {
	if (($1 % 97 == 0)); then
		MIXED_KIND=reject
	elif (($1 % 89 == 0)); then
		MIXED_KIND=conflict
	elif (($1 % 53 == 0)); then
		MIXED_KIND=dup
	elif (($1 % 71 == 0)); then
		MIXED_KIND=tomb
	else
		MIXED_KIND=insert
	fi
}

# mixed_earlier_order I — sets MIXED_EARLIER to an order of the mixed
# stream a few messages before I
mixed_earlier_order() {
	MIXED_EARLIER=$(($1 - 3))
	while mixed_kind $MIXED_EARLIER; [ "$MIXED_KIND" != insert ]; do
		MIXED_EARLIER=$((MIXED_EARLIER - 1))
	done
}

# mixed_stream PARTITION FIRST LAST — queue messages FIRST..LAST of the
# mixed stream of PARTITION (order numbers PARTITION*100000 + I, so the
# partitions' orders differ; call it again with FIRST = previous LAST + 1
# to extend a partition's stream)
mixed_stream() {
	local p=$1 base=$(($1 * 100000)) i n e v
	# shellcheck disable=SC2059 # $fmt is this function's own format
	local fmt='{"type":"OrderReceived","orderId":"00000000-0000-4000-8000-%012d","externalReference":"%s","amount":%d}'
	for ((i = $2; i <= $3; i++)); do
		n=$((base + i))
		mixed_kind $i
		case $MIXED_KIND in
		reject)
			printf -v v '{"orderId":"00000000-0000-4000-8000-%012d", broken' "$n"
			msg "$p" "bad-$n" reject - - 22P02 "$v" ;;
		conflict)
			mixed_earlier_order $i
			e=$((base + MIXED_EARLIER))
			printf -v v "$fmt" "$e" "OTHER-$e" "$e"
			msg "$p" "o$e-divergent-$n" conflict $e "OTHER-$e" - "$v" ;;
		dup)
			mixed_earlier_order $i
			e=$((base + MIXED_EARLIER))
			printf -v v "$fmt" "$e" "EXT-$e" "$e"
			msg "$p" "o$e-redelivered-$n" dup $e "EXT-$e" - "$v" ;;
		tomb)
			msg "$p" "tomb-$n" tomb - - - '' ;;
		insert)
			printf -v v "$fmt" "$n" "EXT-$n" "$n"
			msg "$p" "o$n" insert "$n" "EXT-$n" - "$v" ;;
		esac
	done
}

# produce_part FIRST LAST — messages FIRST..LAST of the mixed stream of
# every partition 0..PARTITIONS-1, produced
produce_part() {
	local p
	for ((p = 0; p < PARTITIONS; p++)); do
		mixed_stream $p "$1" "$2"
	done
	flush
}

# flush — produce every queued message, partition by partition, in order
flush() {
	local q p
	for q in "$E2E_TMP"/queue.*; do
		[ -f "$q" ] || continue
		p=${q##*.}
		kafka_produce "$E2E_TOPIC" "$p" <"$q" || return 1
		rm -f "$q"
	done
}

# ---------------------------------------------------------------- checks

# expected_rows — "order_id ref" of every first occurrence, sorted
expected_rows() {
	awk -F'\t' '$3 == "insert" { print $4 " " $5 }' "$E2E_MANIFEST" | sort -u
}

# actual_rows — "order_id ref" in the table, sorted (race ids left out)
actual_rows() {
	sql "SELECT order_id || ' ' || external_reference FROM received_orders.received_orders" |
		grep -v -F -f <(race_field 4; echo NO-RACE-ID) | sort
}

# race_field N — field N of the manifest's race lines
race_field() {
	awk -F'\t' -v f="$1" '$3 == "race" { print $f }' "$E2E_MANIFEST" | sort -u
}

# expected_quarantine — "label outcome sqlstate order_id" of the bad ones
expected_quarantine() {
	awk -F'\t' '$3 == "conflict" { print $1 " conflict 23505 " $4 }
	            $3 == "reject" { print $1 " rejected " $6 " -" }' "$E2E_MANIFEST" | sort
}

# actual_quarantine — the same, from the quarantine table (the label is
# the Kafka key), plus a check that topic and coordinates are filled (the
# topic one of E2E_TOPICS: a manifest may span several topics, its labels
# unique across them; default E2E_TOPIC)
actual_quarantine() {
	sql "SELECT convert_from(kafka_key, 'UTF8') || ' ' || outcome || ' ' || sqlstate
	            || ' ' || CASE WHEN outcome = 'conflict' THEN coalesce(order_id::text, 'NULL') ELSE '-' END
	            || CASE WHEN kafka_topic = ANY (string_to_array('${E2E_TOPICS:-$E2E_TOPIC}', ' '))
	                         AND kafka_partition IS NOT NULL
	                         AND kafka_offset IS NOT NULL AND reason <> '' THEN '' ELSE ' BAD-COORDINATES' END
	       FROM received_orders.received_orders_quarantine" |
		grep -v -F -f <(race_field 1 | sed 's/$/ /'; echo NO-RACE-LABEL) | sort
}

# check_races — for each raced order id: one row carrying one of its
# references, and every other of its messages quarantined as a conflict
check_races() {
	local id rows stored losers quarantined bad=0
	for id in $(race_field 4); do
		rows=$(sql "SELECT count(*) FROM received_orders.received_orders WHERE order_id = '$id'")
		stored=$(sql "SELECT external_reference FROM received_orders.received_orders WHERE order_id = '$id'")
		losers=$(awk -F'\t' -v id="$id" -v ref="$stored" '$3 == "race" && $4 == id && $5 != ref { print $1 }' "$E2E_MANIFEST" | sort | tr '\n' ' ')
		quarantined=$(sql "SELECT convert_from(kafka_key, 'UTF8') FROM received_orders.received_orders_quarantine
		                    WHERE order_id = '$id' AND outcome = 'conflict' AND sqlstate = '23505'" | sort | tr '\n' ' ')
		if [ "$rows" != 1 ] || ! awk -F'\t' -v id="$id" -v ref="$stored" '$3 == "race" && $4 == id && $5 == ref { f = 1 } END { exit !f }' "$E2E_MANIFEST" ||
			[ "$losers" != "$quarantined" ]; then
			diag "race on $id: $rows row(s), stored ref '$stored', expected quarantined '$losers', got '$quarantined'"
			bad=1
		fi
	done
	return $bad
}

# compare WHAT EXPECTED_FILE ACTUAL_FILE — diff with a diagnostic
compare() {
	if diff -u "$2" "$3" >"$E2E_TMP/diff.$1"; then
		return 0
	fi
	diag "$1 differ (- expected, + actual):"
	diag "$(head -n 40 "$E2E_TMP/diff.$1")"
	return 1
}

# check_exact_contents — the table and the quarantine hold exactly what the
# manifest says; three test points
check_exact_contents() {
	expected_rows >"$E2E_TMP/rows.expected"
	actual_rows >"$E2E_TMP/rows.actual"
	check "every valid order exactly once, with the first reference ($(wc -l <"$E2E_TMP/rows.expected") rows)" \
		compare rows "$E2E_TMP/rows.expected" "$E2E_TMP/rows.actual"
	expected_quarantine >"$E2E_TMP/quarantine.expected"
	actual_quarantine >"$E2E_TMP/quarantine.actual"
	check "every bad message quarantined exactly once ($(wc -l <"$E2E_TMP/quarantine.expected") rows)" \
		compare quarantine "$E2E_TMP/quarantine.expected" "$E2E_TMP/quarantine.actual"
	check "every produced message is still in Kafka (none dropped by the mock)" \
		check_all_in_kafka
}

# check_all_in_kafka — the topic (every topic of E2E_TOPICS) holds every
# manifest label, once (the mock cluster silently drops old data beyond
# ~5 MiB per partition)
check_all_in_kafka() {
	local topic
	for topic in ${E2E_TOPICS:-$E2E_TOPIC}; do
		kafka_offsets_map "$topic"
	done | awk '{ print $3 }' | sort >"$E2E_TMP/kafka.labels"
	cut -f1 "$E2E_MANIFEST" | sort >"$E2E_TMP/manifest.labels"
	compare labels "$E2E_TMP/manifest.labels" "$E2E_TMP/kafka.labels"
}

# check_below_committed GROUP [COMMITTED_FILE] — every message below each
# partition's committed offset (now, or as saved earlier by kafka_committed
# in COMMITTED_FILE) has its effect in the database: its order row (insert,
# dup) or its quarantine row (conflict, reject); prints what is missing
check_below_committed() {
	local group=$1
	if [ $# -ge 2 ]; then
		cp "$2" "$E2E_TMP/committed"
	else
		kafka_committed "$group" "$E2E_TOPIC" >"$E2E_TMP/committed" || return 1
	fi
	[ -s "$E2E_TMP/offsets.map" ] || kafka_offsets_map "$E2E_TOPIC" >"$E2E_TMP/offsets.map"
	sql "SELECT order_id FROM received_orders.received_orders" >"$E2E_TMP/db.ids"
	sql "SELECT convert_from(kafka_key, 'UTF8') FROM received_orders.received_orders_quarantine" >"$E2E_TMP/db.qkeys"
	awk -F'[\t ]' '
		FILENAME == ARGV[1] { committed[$2] = $3; next }
		FILENAME == ARGV[2] { part[$3] = $1; off[$3] = $2; next }
		FILENAME == ARGV[3] { ids[$1] = 1; next }
		FILENAME == ARGV[4] { qkeys[$1] = 1; next }
		{
			label = $1; kind = $3; id = $4
			if (!(label in off)) { print "not in kafka: " label; bad = 1; next }
			if (off[label] >= committed[part[label]]) next
			if ((kind == "insert" || kind == "dup") && !(id in ids)) {
				print "acknowledged but not stored: " label " [" part[label] "] @" off[label] " " id; bad = 1
			}
			if (kind == "race" && !(id in ids) && !(label in qkeys)) {
				print "acknowledged but neither stored nor quarantined: " label; bad = 1
			}
			if ((kind == "conflict" || kind == "reject") && !(label in qkeys)) {
				print "acknowledged but not quarantined: " label " [" part[label] "] @" off[label]; bad = 1
			}
		}
		END { exit bad }' "$E2E_TMP/committed" "$E2E_TMP/offsets.map" \
		"$E2E_TMP/db.ids" "$E2E_TMP/db.qkeys" "$E2E_MANIFEST" >"$E2E_TMP/below.out"
	local rc=$?
	[ $rc -eq 0 ] || diag "$(head -n 20 "$E2E_TMP/below.out")"
	return $rc
}

# committed_sum GROUP — sum of committed offsets (-1 counts as 0)
committed_sum() {
	kafka_committed "$1" "$E2E_TOPIC" | awk '{ if ($3 > 0) s += $3 } END { print s + 0 }'
}

# end_sum — sum of the high watermarks
end_sum() {
	kafka_end_offsets "$E2E_TOPIC" | awk '{ s += $4 } END { print s + 0 }'
}

# log_has_no SECRET NAME — the feeder log never shows SECRET
log_has_no() {
	! grep -qF -- "$1" "$E2E_TMP/$2.log" "$E2E_TMP/$2.out" 2>/dev/null
}

# ---------------------------------------------------------------- positions

# db_positions GROUP — "TOPIC PARTITION NEXT_OFFSET" of every position the
# database holds for GROUP, in partition order (read as the superuser)
db_positions() {
	sql "SELECT kafka_topic || ' ' || kafka_partition || ' ' || next_offset
	       FROM received_orders.consumer_positions('$1') ORDER BY kafka_topic, kafka_partition"
}

# db_caught_up GROUP — the database's position of every partition of
# E2E_TOPIC equals the partition's high watermark (an empty partition needs
# none): the database itself has everything the topic holds
db_caught_up() {
	local ends
	ends=$(kafka_end_offsets "$E2E_TOPIC" 2>/dev/null) || return 1
	[ -n "$ends" ] || return 1
	awk 'FILENAME == ARGV[1] { pos[$2] = $3; next }
	     { if (!($2 in pos) && $4 != 0 || ($2 in pos) && pos[$2] != $4) bad = 1 }
	     END { exit bad }' <(db_positions "$1" 2>/dev/null) - <<<"$ends"
}

# acks_ahead GROUP — "TOPIC PARTITION COMMITTED DB_POSITION" of every
# partition of E2E_TOPIC whose offset committed in Kafka for GROUP is ahead
# of the database's position (none: 0); fails when either cannot be read.
# Kafka is read first: the database's position never goes back, so a
# commit made between the two reads cannot show as ahead
acks_ahead() {
	local committed positions
	committed=$(kafka_committed "$1" "$E2E_TOPIC" 2>/dev/null) && [ -n "$committed" ] || return 1
	positions=$(db_positions "$1" 2>/dev/null) || return 1
	awk 'FILENAME == ARGV[1] { pos[$1 " " $2] = $3; next }
	     { k = $1 " " $2; p = (k in pos) ? pos[k] : "none" }
	     $3 > 0 && (p == "none" || $3 > p + 0) { print $1, $2, $3, p }' \
		<(printf '%s\n' "$positions") - <<<"$committed"
}

# e2e_snapshot [feeders] — every row of the extension's tables (and of the
# status table when asked), the quarantine sequence and the position gaps,
# as text in key order, of SNAPSHOT_DB (default E2E_DB), through PSQL
# (default psql) with the libpq environment; a failed read prints a line
# of its own, never an equal snapshot (test/upgrade/05, test/majors/01)
e2e_snapshot() {
	"${PSQL:-psql}" -X -q -A -t -v ON_ERROR_STOP=1 -d "${SNAPSHOT_DB:-$E2E_DB}" <<-EOF 2>&1 || echo "snapshot: query failed"
		SET TimeZone = 'UTC';
		SELECT 'order ' || r::text FROM received_orders.received_orders r ORDER BY order_id;
		SELECT 'quarantine ' || q::text FROM received_orders.received_orders_quarantine q ORDER BY id;
		SELECT 'position ' || p::text FROM received_orders.received_orders_positions p
		 ORDER BY consumer_group, kafka_topic, kafka_partition;
		SELECT 'group ' || g::text FROM received_orders.received_orders_consumer_groups g ORDER BY consumer_group;
		SELECT 'gap ' || x::text FROM received_orders.received_orders_position_gaps x ORDER BY 1;
		SELECT 'replay ' || x::text FROM received_orders.received_orders_replays x ORDER BY quarantine_id;
		SELECT 'sequence ' || last_value || ' ' || is_called FROM received_orders.received_orders_quarantine_id_seq;
		${1:+SELECT 'feeder ' || f::text FROM received_orders.received_orders_feeders f ORDER BY 1;}
	EOF
}

# e2e_start_positions NAME — "PARTITION OFFSET SOURCE" of NAME's start_position lines
e2e_start_positions() {
	log_events "$1" start_position | awk '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		print f["partition"], f["offset"], f["source"]
	}' | sort -n
}

# e2e_run_to_end NAME GROUP DESCRIPTION — one test point: a feeder of GROUP
# until the database holds every message of E2E_TOPIC, then stopped
# (SIGTERM, exit 0); in the suite's own shell, which reaps the feeder
e2e_run_to_end() {
	local status=0
	feeder_start "$1" "$E2E_TOPIC" "$2" --batch-size 25 --batch-wait-ms 20
	db_wait_caught_up "$2" 120 || status=1
	feeder_stop "$1" || status=1
	tap_ok "$status" "$3"
}

# db_wait_caught_up GROUP [SECONDS] — poll db_caught_up (default 60 s)
db_wait_caught_up() {
	ro_wait_until "${2:-60}" db_caught_up "$1" && return 0
	diag "the database's positions of group $1 did not reach the end offsets:" \
		"positions: $(db_positions "$1" 2>&1 | tr '\n' ';')" \
		"end offsets: $(kafka_end_offsets "$E2E_TOPIC" 2>&1 | tr '\n' ';')"
	return 1
}

# behind_lines — "PARTITION DB_POSITION CONSUMER_POSITION GAP" of the
# feeder named feeder's positions_behind lines, by partition
behind_lines() {
	log_events feeder positions_behind | awk '{
		for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
		print f["partition"], f["db_position"], f["consumer_position"], f["gap"]
	}' | sort -n
}

# log_events NAME EVENT — the lines of NAME's log with event=EVENT
log_events() {
	grep -E -- "event=$2( |$)" "$E2E_TMP/$1.log" 2>/dev/null
}

# log_run_events NAME EVENT — the lines with event=EVENT of NAME's latest run
log_run_events() {
	awk '/^--- start/ { n = 0 } { line[++n] = $0 } END { for (i = 1; i <= n; i++) print line[i] }' \
		"$E2E_TMP/$1.log" 2>/dev/null | grep -E -- "event=$2( |$)"
}

# log_field_sum NAME EVENT FIELD — sum of FIELD=N over NAME's EVENT lines
log_field_sum() {
	log_events "$1" "$2" | sed -nE "s/.* $3=([0-9]+)( .*|$)/\\1/p" | awk '{ s += $1 } END { print s + 0 }'
}

# feeder_metrics_addr NAME — the address NAME's latest run serves /metrics
# on (from its event=metrics_listening line; start it with
# --metrics-listen 127.0.0.1:0)
feeder_metrics_addr() {
	awk '/^--- start/ { addr = "" }
	     /event=metrics_listening/ { sub(/.* addr=/, ""); sub(/ .*/, ""); addr = $0 }
	     END { if (addr == "") exit 1; print addr }' "$E2E_TMP/$1.log"
}

# feeder_health_code NAME — the HTTP status of NAME's /healthz
feeder_health_code() {
	local addr
	addr=$(feeder_metrics_addr "$1") || return 1
	curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$addr/healthz"
}

# feeder_health_is NAME CODE — NAME's /healthz answers CODE
feeder_health_is() {
	[ "$(feeder_health_code "$1")" = "$2" ]
}

# group_position GROUP P — the database's next offset of partition P of GROUP
group_position() {
	db_positions "$1" | awk -v p="$2" '$2 == p { print $3 }'
}

# topic_watermark TOPIC P low|high — partition P's low or high watermark
topic_watermark() {
	kafka_end_offsets "$1" | awk -v p="$2" -v w="$3" '$2 == p { print (w == "low" ? $3 : $4) }'
}

# partitions_caught_up GROUP TOPIC P... — GROUP's database position of each
# partition P of TOPIC is its high watermark
partitions_caught_up() {
	local group=$1 topic=$2 p
	shift 2
	for p in "$@"; do
		[ "$(group_position "$group" "$p")" = "$(topic_watermark "$topic" "$p" high)" ] || return 1
	done
}

# gap_rows GROUP [ROLE] — "PARTITION|FIRST|LAST|OPEN|ACCEPTED_BY" of every
# position gap of GROUP, in order, read as ROLE when given (a pg_monitor
# member, say)
gap_rows() {
	sql "${2:+SET ROLE $2;}
	     SELECT kafka_partition || '|' || first_lost || '|' || last_lost || '|' || open || '|'
	            || coalesce(accepted_by::text, '')
	       FROM received_orders.position_gaps WHERE consumer_group = '$1'
	      ORDER BY kafka_partition, first_lost"
}

# gaps_are GROUP ROWS [ROLE] — gap_rows GROUP [ROLE] prints ROWS
gaps_are() {
	[ "$(gap_rows "$1" "${3:-}")" = "$2" ]
}

# feeder_metrics_are NAME VALUES METRIC... — NAME's /metrics values of the
# METRICs (feeder_metric), space-separated, are VALUES
feeder_metrics_are() {
	local name=$1 want=$2 got= m
	shift 2
	for m in "$@"; do
		got+="${got:+ }$(feeder_metric "$name" "$m")"
	done
	[ "$got" = "$want" ]
}

# feeder_metric NAME METRIC — the value of METRIC (the name after the
# received_orders_feeder_ prefix, without labels) in NAME's /metrics
feeder_metric() {
	local addr
	addr=$(feeder_metrics_addr "$1") || return 1
	curl -sS --max-time 5 "http://$addr/metrics" |
		awk -v m="received_orders_feeder_$2" '$1 == m { print $2; found = 1 } END { exit !found }'
}
