#!/bin/bash
# test/sql-only/14-lookup-planned-per-call.t — the lookup of the stored
# orders a batch did not insert (duplicates, conflicts) is planned on every
# call, in the C extension (store.c's lookup_many_plan and lookup_one_plan,
# SPI_execute_with_args) and in the SQL-only flavour (batch.sql's FOR ...
# IN EXECUTE), while the batch functions' other statements keep one generic
# plan per session (plan_cache_mode = force_generic_plan, 1.3--1.4).
#
# A kept plan is made for the table's size of the moment.  Made while
# received_orders was nearly empty (here: emptied and VACUUM ANALYZEd, then
# one call of two copies of an order), the lookup is a scan of the whole
# table comparing each row with each id of the batch; kept, it stays that
# as the table grows (here: 100,000 rows inserted), until an ANALYZE
# invalidates it.  bench/feeder's 300,000 events on 24 partitions ran at a
# third of their rate that way, round after round.  Here, in one session
# per database, with auto_explain logging the plans of nested statements:
# the second call's lookup must use the primary key in both flavours, and
# both return the same rows.  A copy of the flavour whose lookup is a kept
# statement again (the FOR ... IN EXECUTE made a plain FOR ... IN) scans
# the table: the negative control.
#
# TAP on stdout; starts its own PostgreSQL 15 cluster (it creates roles).

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/sql-only/lib.sh
. "$(dirname "$0")/lib.sh"

ADMIN=ro_cloud_admin

# session DB — one session: the table emptied and analyzed, a first call
# (two copies of one order: the lookup runs and is planned on a table of
# one row), 100,000 orders stored by INSERT, then a call of 500 of them
# and 500 new ones, redelivered: the lookup's plans and the call's rows
# (LOG lines of auto_explain and the result rows, on stdout)
session() {
	pg_psql -At -d "$1" 2>&1 <<-'EOF'
		TRUNCATE received_orders.received_orders;
		VACUUM ANALYZE received_orders.received_orders;
		LOAD 'auto_explain';
		SET auto_explain.log_min_duration = 0;
		SET auto_explain.log_nested_statements = on;
		SET client_min_messages = log;
		SELECT 'first', r.position, r.outcome
		  FROM received_orders.materialize_orders(ARRAY[
		         pg_catalog.convert_to('{"orderId": "00000000-0000-0000-0000-000000000001", "externalReference": "A"}', 'UTF8'),
		         pg_catalog.convert_to('{"orderId": "00000000-0000-0000-0000-000000000001", "externalReference": "A"}', 'UTF8')]) r;
		SET client_min_messages = warning;
		INSERT INTO received_orders.received_orders (order_id, external_reference, payload)
		SELECT pg_catalog.md5(i::text)::uuid, 'R-' || i, '{}' FROM pg_catalog.generate_series(1, 100000) AS i;
		SET client_min_messages = log;
		SELECT 'second', r.position, r.order_id, r.outcome, r.sqlstate
		  FROM received_orders.materialize_orders(ARRAY(
		         SELECT pg_catalog.convert_to(pg_catalog.format('{"orderId": "%s", "externalReference": "R-%s"}',
		                                                        pg_catalog.md5(i::text)::uuid,
		                                                        CASE WHEN i % 50 = 0 THEN 'OTHER' ELSE i::text END), 'UTF8')
		           FROM pg_catalog.generate_series(99501, 100500) AS i ORDER BY i)) r
		 ORDER BY r.position;
	EOF
}

# lookup_plans OUTPUT — the plan lines (scans, their conditions and
# filters; a constant array of ids shortened to {...}) of each logged
# lookup statement, one lookup per line: "N: line | line ..."
lookup_plans() {
	awk '
		/LOG:  duration: .* plan:/ { in_plan = 0 }
		/^Query Text: (SELECT order_id, external_reference FROM received_orders.received_orders|SELECT s.pos, s.id, s.ref, r.external_reference)/ {
			in_plan = 1; n++; next
		}
		in_plan && /(Scan|Cond|Filter)/ {
			sub(/^ *(->)? */, ""); gsub(/\{[0-9a-f,-]*\}/, "{...}")
			plans[n] = plans[n] (plans[n] == "" ? "" : " | ") $0
		}
		END { for (i = 1; i <= n; i++) print i ": " plans[i] }
	' <<<"$1"
}

# scans_each_row_for_each_id PLAN — whether PLAN scans received_orders
# comparing every row with a parameter's array (a plan kept from an
# earlier call: its array is unknown, so neither an index on its ids nor a
# hash of them): status 0 if it does
scans_each_row_for_each_id() {
	[[ $1 =~ Seq\ Scan\ on\ received_orders[^|]*\|\ Filter:\ \([a-z_.]*order_id\ =\ ANY\ \(\$[0-9]+\)\) ]]
}

# rows OUTPUT — the result rows of the second call
rows() {
	grep '^second|' <<<"$1"
}

tap_plan 8

sql_only_work lookup
"$RO_ROOT/tools/build-sql-only" "$WORK/build" || tap_bail "tools/build-sql-only failed"
grep -q 'FOR conflict IN EXECUTE$' "$WORK/build/received_orders.sql" ||
	tap_bail "the flavour's lookup is not a FOR conflict IN EXECUTE: update this test"
# the negative control: the lookup a statement of the function again
sed -e 's/FOR conflict IN EXECUTE$/FOR conflict IN/' \
	-e 's/\$lookup\$SELECT s\.pos/SELECT s.pos/' -e 's/ORDER BY s\.id, s\.pos\$lookup\$/ORDER BY s.id, s.pos/' \
	-e '/^[[:space:]]*USING pend_pos, pend_id, pend_ref$/d' \
	-e 's/FROM unnest(\$1, \$2, \$3) AS s(pos, id, ref)/FROM unnest(pend_pos, pend_id, pend_ref) AS s(pos, id, ref)/' \
	-e 's/ANY (\$2)/ANY (pend_id)/' \
	"$WORK/build/received_orders.sql" >"$WORK/kept.sql"
chmod -R a+rX "$WORK"

sql_only_cluster
pg_createdb ro_lookup_c received_orders >&2
createdb -U "$ADMIN" ro_lookup_sql
createdb -U "$ADMIN" ro_lookup_kept
pg_psql -U "$ADMIN" -d ro_lookup_sql -f "$WORK/build/received_orders.sql" >/dev/null 2>&1 ||
	tap_bail "the admin role could not install the flavour"
pg_psql -U "$ADMIN" -d ro_lookup_kept -v ON_ERROR_STOP=1 -f "$WORK/kept.sql" >/dev/null 2>&1 ||
	tap_bail "the admin role could not install the copy whose lookup is kept"

C_OUT=$(session ro_lookup_c)
SQL_OUT=$(session ro_lookup_sql)
KEPT_OUT=$(session ro_lookup_kept)
C_PLANS=$(lookup_plans "$C_OUT")
SQL_PLANS=$(lookup_plans "$SQL_OUT")
KEPT_PLANS=$(lookup_plans "$KEPT_OUT")
ro_log "C extension's lookups: $C_PLANS"
ro_log "flavour's lookups: $SQL_PLANS"
ro_log "kept copy's lookups: $KEPT_PLANS"

tap_is "$(grep -c '^first|' <<<"$C_OUT")|$(grep -c '^first|' <<<"$SQL_OUT")" "2|2" \
	"the first call takes both copies in both flavours"
tap_is "$(grep -c '^[0-9]' <<<"$C_PLANS")|$(grep -c '^[0-9]' <<<"$SQL_PLANS")" "2|2" \
	"both flavours looked up stored orders in both calls (auto_explain logged two lookups each)"
for flavour in C SQL; do
	plans_var=${flavour}_PLANS
	second=$(sed -n 2p <<<"${!plans_var}")
	name=$([[ $flavour == C ]] && echo "the C extension's" || echo "the flavour's")
	tap_ok "$(scans_each_row_for_each_id "$second" && echo 1 || echo 0)" \
		"$name second lookup, at 100,001 rows, does not scan the table comparing each row with each id"
	tap_ok "$([[ $second != "$(sed -n 1p <<<"${!plans_var}" | sed 's/^1:/2:/')" ]] && echo 0 || echo 1)" \
		"$name second lookup was planned again, for the table as it is now"
done
tap_is "$(rows "$SQL_OUT")" "$(rows "$C_OUT")" \
	"both flavours return the same 1,000 rows of the second call (outcome, order_id, sqlstate at every position)"
tap_ok "$(scans_each_row_for_each_id "$(sed -n 2p <<<"$KEPT_PLANS")" && echo 0 || echo 1)" \
	"negative control: a kept lookup, planned on the emptied table, still scans the whole table comparing each row with each id at 100,001 rows"
tap_done
