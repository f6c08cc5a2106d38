#!/bin/bash
# test/upgrade/07-update-behind-a-dashboard.t — an update from 1.2, the
# version whose update drops and creates quarantine_summary again, while a
# dashboard's long query reads that view, never holds a feeder's batch for
# the dashboard's duration.
#
# A database at 1.2.  Session A, the dashboard: SELECT ... FROM
# quarantine_summary, pg_sleep(DASHBOARD) (it holds the view).  Session B:
# ALTER EXTENSION received_orders UPDATE.  Session C, once B waits: one
# batch of the batch function with a consumer group.  Then:
#   - the batch ends within a few seconds, far from DASHBOARD, and stores
#     its order (the update took no lock a batch needs while it waited for
#     the view);
#   - the update ends before the dashboard does: it either completed or
#     failed with 55P03 and the hint to run it again (its lock_timeout),
#     and in that case the extension is still at 1.2;
#   - the lock_timeout was the script's own: B's session has its own back;
#   - once the dashboard is done, ALTER EXTENSION ... UPDATE succeeds, and
#     the session's lock_timeout is its own after it too.
# Before 1.4, 1.2 -> 1.3 locked the groups' table, then queued behind the
# dashboard for DROP VIEW, and the batch waited the dashboard's whole
# query.
# TAP on stdout.  Uses the harness's cluster, or starts its own when run alone.

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/lib/orders.sh
. "$(dirname "$0")/../lib/orders.sh"

DB=ro_upgrade_dashboard_$$
DASHBOARD=20 # seconds the dashboard's query runs
BATCH_LIMIT=8 # seconds a batch may take meanwhile (the update's lock_timeout is 3 s)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ro-upgrade-07.XXXXXX")

# now — seconds since the epoch, with fractions
now() {
	date +%s.%N
}

# seconds_since T — seconds elapsed since T (from now), rounded to tenths
seconds_since() {
	awk -v t="$1" -v n="$(now)" 'BEGIN { printf "%.1f\n", n - t }'
}

# waiting_for_lock APPLICATION — whether the session named APPLICATION
# waits for a lock
waiting_for_lock() {
	[[ $(pg_query "$DB" "SELECT count(*) FROM pg_stat_activity
		WHERE application_name = '$1' AND wait_event_type = 'Lock'") == 1 ]]
}

# running APPLICATION — whether the session named APPLICATION runs a query
running() {
	[[ $(pg_query "$DB" "SELECT count(*) FROM pg_stat_activity
		WHERE application_name = '$1' AND state = 'active'") == 1 ]]
}

tap_plan 7

pg_ensure_cluster >&2
ro_on_exit "rm -rf '$TMP'"
ro_on_exit "dropdb --if-exists --force $DB 2>/dev/null"

tap_cmd "a database at 1.2" \
	eval "pg_createdb $DB && pg_query $DB \"CREATE EXTENSION received_orders VERSION '1.2'\""
tap_last_ok || tap_bail "could not install version 1.2"

# A: the dashboard
PGAPPNAME=ro_dashboard pg_query "$DB" "SELECT count(*) FROM received_orders.quarantine_summary, pg_sleep($DASHBOARD)" \
	>"$TMP/dashboard.out" 2>&1 &
dashboard=$!
ro_on_exit "kill $dashboard 2>/dev/null"
ro_wait_until 10 running ro_dashboard || tap_bail "the dashboard's query did not start"
dashboard_start=$(now)

# B: the update
update_start=$(now)
(
	PGAPPNAME=ro_update pg_psql -At -d "$DB" -c '\set VERBOSITY verbose' -c '\set ON_ERROR_STOP 0' \
		-c "SET lock_timeout = '1h'" -c "ALTER EXTENSION received_orders UPDATE" -c "SHOW lock_timeout" \
		>"$TMP/update.out" 2>&1 || true
	seconds_since "$update_start" >"$TMP/update.seconds"
) &
update=$!
ro_on_exit "kill $update 2>/dev/null"
# the update waits for a lock (or is done already)
ro_wait_until 10 eval "waiting_for_lock ro_update || [[ -s $TMP/update.seconds ]]" || true

# C: a batch
batch_start=$(now)
batch=$(PGAPPNAME=ro_batch pg_query "$DB" "SELECT outcome FROM received_orders.materialize_orders('dash-group',
	ARRAY[convert_to('$(ro_order_event 1 EXT-1)', 'UTF8')], ARRAY['orders'], ARRAY[0], ARRAY[0::bigint], ARRAY[NULL::bytea])" 2>&1)
batch_seconds=$(seconds_since "$batch_start")
tap_like "$batch|$batch_seconds" "^inserted\\|[0-9.]+$" "the batch stores its order while the update waits (${batch_seconds} s)"
tap_ok "$(awk -v s="$batch_seconds" -v l="$BATCH_LIMIT" 'BEGIN { exit !(s < l) }'; echo $?)" \
	"the batch took under $BATCH_LIMIT s, not the dashboard's $DASHBOARD s ($batch_seconds s)"

wait "$update" || true
update_seconds=$(cat "$TMP/update.seconds")
tap_ok "$(awk -v s="$update_seconds" -v d="$(seconds_since "$dashboard_start")" 'BEGIN { exit !(s < d) }'
	kill -0 "$dashboard" 2>/dev/null; echo $?)" \
	"the update ended (after $update_seconds s) while the dashboard still ran"
out=$(cat "$TMP/update.out")
version=$(pg_query "$DB" "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")
tap_like "$out|$version" \
	"(^1h\\|1\\.[4-9]$)|(^ERROR: +55P03: could not lock the view received_orders.quarantine_summary for the update of received_orders within 3s.*HINT: +Run ALTER EXTENSION received_orders UPDATE again in a moment.*\\|1\\.2$)" \
	"the update either completed or failed with 55P03 and the hint to run it again, changing nothing"
tap_like "$out" "1h$" "the session's lock_timeout (1h) is its own again after the update: the script's was undone"

wait "$dashboard" || true
tap_is "$(pg_psql -At -d "$DB" -c "SET lock_timeout = '1h'" -c "ALTER EXTENSION received_orders UPDATE" \
	-c "SHOW lock_timeout" -c "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'" 2>&1 | tr '\n' ' ')" \
	"1h $(pg_query "$DB" "SELECT default_version FROM pg_available_extensions WHERE name = 'received_orders'") " \
	"once the dashboard is done, the update succeeds, and the session's lock_timeout is its own again"

tap_done
