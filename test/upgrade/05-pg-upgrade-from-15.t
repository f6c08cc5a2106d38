#!/bin/bash
# test/upgrade/05-pg-upgrade-from-15.t — a populated PostgreSQL 15 cluster
# moved to the major under test (upgrade-18: 18) with pg_upgrade, and with
# pg_dump / pg_restore, as a DBA does.
#
# A 15 cluster holds a database with the extension, a least-privilege
# feeder's role and what feeders left there: orders, quarantined messages,
# the positions and consumer-group rows of two groups ("orders" and "audit",
# each a feeder run to the topic's end) and their status rows.  The new
# major's PostgreSQL has the extension's files installed first (test/run
# installs them; pg_available_extensions must show the same version).  Then:
#   - pg_dump of the new major dumps the 15 database (-Fc);
#   - pg_upgrade (copy mode) from the stopped 15 cluster into a new one
#     initdb'd as the 15 was (no data checksums) succeeds;
#   - in the upgraded cluster the extension's version, every order,
#     quarantine row, position, consumer group and status row, and the
#     quarantine's sequence are exactly as in 15;
#   - more messages produced, a feeder of "orders" starts every partition at
#     the database's position and consumes the rest: every valid order once,
#     every bad message quarantined once (0 lost, 0 doubled); "audit" keeps
#     its positions;
#   - a quarantined message, repaired, replays (inserted, and recorded in
#     received_orders_replays);
#   - the dump restored into a new database of the upgraded cluster holds
#     the 15 database's rows, positions and groups.
# The 15 is the one RO_PG_UPGRADE_FROM_BINDIR names, the extension
# installed into it: test/run builds bookworm's 15.18-0+deb12u1 from
# Debian's source (tools/build-postgresql 15 --version 15.18-0+deb12u1),
# installs the extension into it and passes its bindir; else Debian's
# installed 15.
# On the base major (upgrade, 15) there is nothing to upgrade to: all
# skipped.  Skipped too, saying why, when the 15 server stamps its columns
# with attribute options the new major does not know (this machine's
# postgresql-15 15.20-0+deb12u1 gives every column "pg_attver=N", which
# PostgreSQL 15.18 and 18.6 do not have): pg_upgrade and pg_restore would
# fail at the first table, whatever the extension.
# TAP on stdout.  Starts its own clusters and the development Kafka.

set -u

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"

FROM=${RO_PG_UPGRADE_FROM:-15}
NEW_BIN=$(pg_bindir)
NEW_MAJOR=${RO_PG_MAJOR:-$("$NEW_BIN/pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')}
if [[ $NEW_MAJOR -le $FROM ]]; then
	echo "1..0 # SKIP PostgreSQL $NEW_MAJOR is the cluster's major: nothing to upgrade $FROM to (upgrade-MAJOR runs this)"
	exit 0
fi
OLD_BIN=${RO_PG_UPGRADE_FROM_BINDIR:-$(pg_major_bindir "$FROM")} || {
	echo "1..0 # SKIP no PostgreSQL $FROM here"
	exit 0
}

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"

PARTITIONS=2
PRODUCED=120 # messages per partition before the upgrade
MORE=40      # produced after it
E2E_TOPIC=orders-pg-upgrade
GROUP=orders
AUDIT=audit

# sql_lines — the SQL read from stdin in the suite's database, each
# statement's rows (unaligned), errors included
sql_lines() {
	psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$E2E_DB" 2>&1
}

# pg_restore_into DB FILE — create DB empty and pg_restore FILE into it,
# stopping at the first error
pg_restore_into() {
	pg_createdb "$1" && pg_restore --exit-on-error -d "$1" "$2"
}

# as_owner_in DIR CMD... — CMD as the clusters' owner from DIR (pg_upgrade
# writes its scripts to the working directory)
as_owner_in() {
	local dir=$1
	shift
	if [[ $EUID == 0 ]]; then
		(cd "$dir" && runuser -u postgres -- "$@")
	else
		(cd "$dir" && "$@")
	fi
}

# foreign_column_options — the names of attribute options a new table's
# columns get in the current cluster beyond the two PostgreSQL has
# (n_distinct, n_distinct_inherited), comma-separated
foreign_column_options() {
	pg_psql -At -d postgres <<-'EOF'
		CREATE TEMP TABLE ro_probe (a integer);
		SELECT coalesce(string_agg(DISTINCT split_part(o, '=', 1), ','), '')
		  FROM pg_attribute, unnest(attoptions) AS o
		 WHERE attrelid = 'ro_probe'::regclass
		   AND split_part(o, '=', 1) NOT IN ('n_distinct', 'n_distinct_inherited');
	EOF
}

# --- the 15 cluster, populated by two groups of feeders
OLD=
RO_PG_BINDIR=$OLD_BIN
pg_start OLD >&2 || bail "could not start PostgreSQL $FROM"
FOREIGN=$(foreign_column_options) || bail "could not probe PostgreSQL $FROM"
if [[ -n $FOREIGN ]]; then
	# TAP__PLAN: e2e_cleanup sees the plan kept, and removes its directory
	TAP__PLAN=0
	HINT=
	[[ -n ${RO_PG_UPGRADE_FROM_BINDIR:-} ]] ||
		HINT=" (test/run upgrades from tools/build-postgresql 15 --version 15.18-0+deb12u1 when that builds)"
	echo "1..0 # SKIP $("$OLD_BIN/postgres" --version) gives every column the attribute option(s) $FOREIGN, which PostgreSQL $NEW_MAJOR refuses: pg_upgrade and pg_restore from it cannot work$HINT"
	exit 0
fi
plan 18
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database on PostgreSQL $FROM"
is "$(sql "SHOW server_version_num" | cut -c1-2)" "$FROM" "the database lives on PostgreSQL $FROM"
VERSION=$(sql "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")

produce_part 1 $PRODUCED || bail "kcat could not produce"
e2e_run_to_end first "$GROUP" "a feeder of \"$GROUP\" stores the topic in the $FROM cluster"
e2e_run_to_end audit "$AUDIT" "a feeder of \"$AUDIT\" too"
is "$(sql "SELECT (SELECT count(*) > 0 FROM received_orders.received_orders) || ' '
                  || (SELECT count(DISTINCT outcome) FROM received_orders.received_orders_quarantine) || ' '
                  || (SELECT count(DISTINCT consumer_group) FROM received_orders.received_orders_positions) || ' '
                  || (SELECT count(DISTINCT consumer_group) FROM received_orders.received_orders_consumer_groups) || ' '
                  || (SELECT count(*) FROM received_orders.received_orders_feeders)")" \
	"true 2 2 2 2" "15 holds orders, conflicts and rejected messages, positions and groups of two groups, two status rows"
BEFORE=$(e2e_snapshot feeders)
BEFORE_DUMPED=$(e2e_snapshot)
POSITIONS_BEFORE=$(db_positions "$GROUP" | awk '{ print $2, $3, "database" }')
AUDIT_BEFORE=$(db_positions "$AUDIT")

# --- pg_dump of the new major, pg_upgrade into a new cluster
WORK=$E2E_TMP/pg-upgrade
mkdir -p "$WORK"
[[ $EUID == 0 ]] && chown postgres: "$WORK"
check "pg_dump of PostgreSQL $NEW_MAJOR dumps the $FROM database" \
	"$NEW_BIN/pg_dump" -Fc -f "$E2E_TMP/dump" -d "$E2E_DB"
pg_stop "$OLD"

NEW=
RO_PG_BINDIR=$NEW_BIN
# 18's initdb enables data checksums by default; 15's did not
[[ $NEW_MAJOR -ge 18 ]] && export RO_PG_INITDB_ARGS=--no-data-checksums
pg_start NEW >&2 || bail "could not start PostgreSQL $NEW_MAJOR"
unset RO_PG_INITDB_ARGS
is "$(pg_query postgres "SELECT default_version FROM pg_available_extensions WHERE name = 'received_orders'")" \
	"$VERSION" "PostgreSQL $NEW_MAJOR has the extension's files installed, at $VERSION as in $FROM"
pg_stop "$NEW"
check "pg_upgrade from $FROM to $NEW_MAJOR (copy mode) succeeds" \
	as_owner_in "$WORK" "$NEW_BIN/pg_upgrade" --no-sync -b "$OLD_BIN" -B "$NEW_BIN" \
	-d "$OLD/data" -D "$NEW/data" -p "$(pg_free_port)" -P "$(pg_free_port)" -s "$WORK"
tap_last_ok || {
	find "$NEW/data/pg_upgrade_output.d" -name 'pg_upgrade_dump_*.log' -exec tail -n 4 {} + >&2 2>/dev/null
	bail "pg_upgrade failed"
}
pg_start NEW >&2 || bail "could not start the upgraded cluster"
E2E_DSN="host=$PGHOST port=$PGPORT dbname=$E2E_DB user=$E2E_ROLE password=$E2E_PASSWORD"

# --- the upgraded cluster
is "$(sql "SHOW server_version_num" | cut -c1-2) $(sql "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")" \
	"$NEW_MAJOR $VERSION" "the database now runs on PostgreSQL $NEW_MAJOR, the extension still at $VERSION"
AFTER=$(e2e_snapshot feeders)
check "every order, quarantine row, position, group and status row is as in $FROM" \
	compare upgraded <(printf '%s\n' "$BEFORE") <(printf '%s\n' "$AFTER")
produce_part $((PRODUCED + 1)) $((PRODUCED + MORE)) || bail "kcat could not produce"
rm -f "$E2E_TMP/offsets.map"
e2e_run_to_end feeder "$GROUP" "a feeder of \"$GROUP\" on $NEW_MAJOR catches up with the topic"
is "$(e2e_start_positions feeder)" "$POSITIONS_BEFORE" \
	"it starts every partition at the database's position from before the upgrade"
check_exact_contents
is "$(db_positions "$AUDIT")" "$AUDIT_BEFORE" "\"$AUDIT\" keeps its positions"

REPLAY_ID=$(sql "SELECT id FROM received_orders.received_orders_quarantine WHERE outcome = 'rejected' ORDER BY id LIMIT 1")
is "$(sql_lines <<-EOF
	UPDATE received_orders.received_orders_quarantine
	   SET raw_value = convert_to('$(event 999001 REPAIRED-999001)', 'UTF8')
	 WHERE id = ${REPLAY_ID:-0};
	SELECT received_orders.replay_quarantined(${REPLAY_ID:-0});
	SELECT replayed_as || ' ' || order_id FROM received_orders.received_orders_replays
	 WHERE quarantine_id = ${REPLAY_ID:-0};
	SELECT count(*) FROM received_orders.received_orders_quarantine WHERE id = ${REPLAY_ID:-0};
EOF
)" \
	"$(printf '%s\n' inserted "inserted $(uid 999001)" 0)" \
	"a repaired quarantined message replays on $NEW_MAJOR: inserted, recorded, gone from the quarantine"

# --- the 15 dump restored into the upgraded cluster
check "pg_restore of the $FROM dump into a new database on $NEW_MAJOR" \
	pg_restore_into ro_pg_upgrade_restored_$$ "$E2E_TMP/dump"
ro_on_exit "dropdb --if-exists ro_pg_upgrade_restored_$$ >/dev/null 2>&1"
check "the restored database holds the $FROM database's orders, quarantine, positions and groups" \
	compare restored <(printf '%s\n' "$BEFORE_DUMPED") <(SNAPSHOT_DB=ro_pg_upgrade_restored_$$ e2e_snapshot)
tap_done
