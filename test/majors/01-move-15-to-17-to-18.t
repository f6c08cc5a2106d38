#!/bin/bash
# test/majors/01-move-15-to-17-to-18.t — a populated database moved across
# three majors as DBAs move theirs: from PostgreSQL 15 on Debian 12 by
# dump and restore into Debian 13's PostgreSQL 17, then by pg_upgrade to
# 18; the feeder resumes from the database's positions, 0 lost and 0
# doubled, and a quarantined message replays.
#
# A 15 cluster here (the 15.18 test/run builds, as test/upgrade/05 uses)
# holds the extension, a least-privilege feeder's role and what two
# groups' feeders left (orders, quarantined messages, positions, consumer
# groups, status rows) and a position gap recorded by a superuser.  Inside
# the Debian 13 root (tools/build-trixie-root, test/lib/debian_root.sh):
# the extension of this tree is built with gcc 14 and installed into
# trixie's 17; 17's pg_dumpall copies the roles and 17's pg_dump (-Fc) the
# database from the 15 cluster over 127.0.0.1; pg_restore puts it into a
# 17 cluster; then, the 18 built here bind-mounted at its own path,
# pg_upgrade (copy mode) moves the stopped 17 cluster into a new 18 one.
# Back here, the 18 cluster holds every row as 15 did, a feeder of the
# first group on 18 starts every partition at the database's position and
# consumes what was produced since (every valid order once, every bad
# message quarantined once), the other group keeps its positions, and a
# repaired quarantined message replays.
# Needs root (chroot), the 15.18 build (RO_PG_UPGRADE_FROM_BINDIR or the
# cache) and 18 with the extension installed (test/run installs it for the
# -18 suites); skipped, saying which, without them.
# TAP on stdout.  Starts its own clusters and the development Kafka.

set -u

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/lib/debian_root.sh
. "$RO_ROOT/test/lib/debian_root.sh"

CACHE=${RO_PG_CACHE:-/var/cache/received_orders}
OLD_BIN=${RO_PG_UPGRADE_FROM_BINDIR:-$CACHE/pg15-${RO_PG_UPGRADE_FROM_VERSION:-15.18-0+deb12u1}/bin}
if [[ $EUID != 0 ]]; then
	echo "1..0 # SKIP the Debian 13 root needs root (chroot)"
	exit 0
fi
if [[ ! -x $OLD_BIN/pg_config ]]; then
	echo "1..0 # SKIP no PostgreSQL 15.18 here: tools/build-postgresql 15 --version 15.18-0+deb12u1"
	exit 0
fi
NEW_BIN=$(pg_major_bindir 18) || {
	echo "1..0 # SKIP no PostgreSQL 18 here: tools/build-postgresql 18"
	exit 0
}
MID_BIN=/usr/lib/postgresql/17/bin

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"

PARTITIONS=2
PRODUCED=120 # messages per partition before the move
MORE=40      # produced after it
E2E_TOPIC=orders-majors
GROUP=orders
AUDIT=audit

# in_root SCRIPT — run the bash SCRIPT inside the Debian 13 root as root,
# this tree, the work directory and 18's prefix mounted at their own paths,
# with test/lib/pg.sh sourced and the step's variables set; its output is
# appended to WORK/root.log
in_root() {
	dr_run "$ROOT" --bind "$RO_ROOT" --bind "$WORK" --bind "${NEW_BIN%/bin}" -- \
		RO_ROOT="$RO_ROOT" RO_KEEP_TMP=1 WORK="$WORK" MID_BIN="$MID_BIN" NEW_BIN="$NEW_BIN" \
		OLD_PORT="$OLD_PORT" DB="$E2E_DB" /bin/bash -c "set -euo pipefail
			. \"\$RO_ROOT/test/lib/pg.sh\"
			$1" >>"$WORK/root.log" 2>&1
}

ROOT=$("$RO_ROOT/tools/build-trixie-root" </dev/null) || bail "could not make the Debian 13 root"
WORK=$E2E_TMP/majors
mkdir -p "$WORK"
chmod 755 "$WORK"

plan 17

# --- 15 on Debian 12, populated by two groups of feeders
OLD=
RO_PG_BINDIR=$OLD_BIN
pg_start OLD >&2 || bail "could not start PostgreSQL 15"
OLD_PORT=$PGPORT
kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database on PostgreSQL 15"
VERSION=$(sql "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")
produce_part 1 $PRODUCED || bail "kcat could not produce"
e2e_run_to_end first "$GROUP" "a feeder of \"$GROUP\" stores the topic in the 15 cluster"
e2e_run_to_end audit "$AUDIT" "a feeder of \"$AUDIT\" too"
sql "SELECT received_orders.record_position_gap('$AUDIT', 'gone-topic', 0, 5, 9)" >/dev/null ||
	bail "could not record a position gap"
is "$(sql "SELECT (SELECT count(*) > 0 FROM received_orders.received_orders) || ' '
                  || (SELECT count(DISTINCT outcome) FROM received_orders.received_orders_quarantine) || ' '
                  || (SELECT count(DISTINCT consumer_group) FROM received_orders.received_orders_positions) || ' '
                  || (SELECT count(*) FROM received_orders.received_orders_position_gaps) || ' '
                  || (SELECT count(*) FROM received_orders.received_orders_feeders)")" \
	"true 2 2 1 2" "15 holds orders, conflicts and rejected messages, two groups' positions, a position gap, two status rows"
BEFORE=$(e2e_snapshot feeders)
BEFORE_DUMPED=$(e2e_snapshot)
POSITIONS_BEFORE=$(db_positions "$GROUP" | awk '{ print $2, $3, "database" }')
AUDIT_BEFORE=$(db_positions "$AUDIT")

# --- into 17 in the Debian 13 root: the extension built there, the roles
# and the database dumped by 17's tools from 15 and restored
mkdir -p "$WORK/src"
tar -C "$RO_ROOT" -cf - --exclude=./.git --exclude=node_modules --exclude='*.o' --exclude='*.bc' \
	--exclude='*.so' --exclude='*.a' . | tar -xf - -C "$WORK/src"
check "the extension builds with gcc 14 and -Werror in the Debian 13 root and installs into its 17" \
	in_root "make -C \"\$WORK/src\" SUBDIRS= COPT=-Werror PG_CONFIG=\$MID_BIN/pg_config &&
		make -C \"\$WORK/src\" SUBDIRS= PREFIX=\"\$WORK/unused\" PG_CONFIG=\$MID_BIN/pg_config install"
# the 17 cluster runs inside the root until WORK/mid.stop appears; its
# socket and port are in WORK, which this machine sees too
in_root "pg_select_major 17
	MID=\$WORK/mid
	pg_start MID >&2
	\$MID_BIN/pg_dumpall -h 127.0.0.1 -p \$OLD_PORT -U postgres --roles-only >\$WORK/roles.sql
	psql -X -q -d postgres -f \$WORK/roles.sql >/dev/null 2>&1
	\$MID_BIN/pg_dump -h 127.0.0.1 -p \$OLD_PORT -U postgres -Fc -f \$WORK/dump -d \$DB
	createdb \$DB
	pg_restore --exit-on-error -d \$DB \$WORK/dump
	touch \$WORK/mid.up
	while [[ ! -e \$WORK/mid.stop ]]; do sleep 0.2; done
	pg_stop \$MID" &
MID_RUN=$!
ro_on_exit "touch '$WORK/mid.stop'; wait $MID_RUN 2>/dev/null"
ro_wait_until 120 bash -c "[[ -e '$WORK/mid.up' ]] || ! kill -0 $MID_RUN 2>/dev/null" || true
tap_ok "$([[ -e $WORK/mid.up ]] && echo 0 || echo 1)" \
	"17's pg_dumpall and pg_dump copy the roles and the database from 15, pg_restore puts them into 17"
tap_last_ok || {
	tail -n 30 "$WORK/root.log" >&2
	bail "the move into 17 failed"
}
pg_stop "$OLD"
export PGHOST=$WORK/mid/socket PGPORT
PGPORT=$(cat "$WORK/mid/port")
E2E_DSN="host=$PGHOST port=$PGPORT dbname=$E2E_DB user=$E2E_ROLE password=$E2E_PASSWORD"
is "$(sql "SHOW server_version_num" | cut -c1-2) $(sql "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")" \
	"17 $VERSION" "the database lives on Debian 13's PostgreSQL 17, the extension still at $VERSION"
check "on 17, every order, quarantine row, position, group and gap is as in 15" \
	compare at17 <(printf '%s\n' "$BEFORE_DUMPED") <(e2e_snapshot)

# --- the feeder resumes on 17
produce_part $((PRODUCED + 1)) $((PRODUCED + MORE)) || bail "kcat could not produce"
rm -f "$E2E_TMP/offsets.map"
e2e_run_to_end feeder "$GROUP" "a feeder of \"$GROUP\" on 17 catches up with the topic"
is "$(e2e_start_positions feeder)" "$POSITIONS_BEFORE" \
	"it starts every partition at the database's position from 15"
check_exact_contents
is "$(db_positions "$AUDIT")" "$AUDIT_BEFORE" "\"$AUDIT\" keeps its positions"
REPLAY_ID=$(sql "SELECT id FROM received_orders.received_orders_quarantine WHERE outcome = 'rejected' ORDER BY id LIMIT 1")
is "$(psql -X -q -A -t -v ON_ERROR_STOP=1 -d "$E2E_DB" 2>&1 <<-EOF
	UPDATE received_orders.received_orders_quarantine
	   SET raw_value = convert_to('$(event 999001 REPAIRED-999001)', 'UTF8')
	 WHERE id = ${REPLAY_ID:-0};
	SELECT received_orders.replay_quarantined(${REPLAY_ID:-0});
	SELECT replayed_as || ' ' || order_id FROM received_orders.received_orders_replays
	 WHERE quarantine_id = ${REPLAY_ID:-0};
EOF
)" \
	"$(printf '%s\n' inserted "inserted $(uid 999001)")" \
	"a repaired quarantined message replays on 17: inserted and recorded"
AT17=$(e2e_snapshot)
# attribute options 17 gives a new table's columns beyond PostgreSQL's own
FOREIGN=$(psql -X -q -At -d postgres <<-'EOF'
	CREATE TEMP TABLE ro_probe (a integer);
	SELECT coalesce(string_agg(DISTINCT split_part(o, '=', 1), ','), '')
	  FROM pg_attribute, unnest(attoptions) AS o
	 WHERE attrelid = 'ro_probe'::regclass
	   AND split_part(o, '=', 1) NOT IN ('n_distinct', 'n_distinct_inherited');
EOF
)
touch "$WORK/mid.stop"
wait "$MID_RUN" 2>/dev/null || true

# --- to 18 by pg_upgrade, inside the root (17's binaries are trixie's)
UPGRADE_POINTS=("pg_upgrade from 17 to 18 (copy mode) succeeds"
	"the database now runs on PostgreSQL 18, the extension still at $VERSION"
	"on 18, every row is as on 17")
if [[ -n $FOREIGN ]] && ! grep -qaF "${FOREIGN%%,*}" "$NEW_BIN/postgres"; then
	why="$(dr_run "$ROOT" -- "$MID_BIN/postgres" --version) gives every column the attribute option $FOREIGN, which $("$NEW_BIN/postgres" --version) does not know: pg_upgrade stops at the first table"
	for point in "${UPGRADE_POINTS[@]}"; do
		TAP__NUMBER=$((TAP__NUMBER + 1))
		printf 'ok %d - %s # SKIP %s\n' "$TAP__NUMBER" "$point" "$why"
	done
	tap_done
fi
NEW=$WORK/new
check "${UPGRADE_POINTS[0]}" \
	in_root "export RO_PG_BINDIR=\$NEW_BIN RO_PG_INITDB_ARGS=--no-data-checksums
		NEW=$NEW
		pg__init \$NEW
		printf '%s\n' \$NEW_BIN >\$NEW/bindir
		pg__set_port \$NEW \$(pg_free_port)
		mkdir -p \$WORK/upgrade && chown postgres: \$WORK/upgrade
		cd \$WORK/upgrade
		runuser -u postgres -- \$NEW_BIN/pg_upgrade --no-sync -b \$MID_BIN -B \$NEW_BIN \
			-d \$WORK/mid/data -D \$NEW/data -p \$(pg_free_port) -P \$(pg_free_port) -s \$WORK/upgrade"
tap_last_ok || {
	tail -n 30 "$WORK/root.log" >&2
	bail "pg_upgrade failed"
}
# the root's postgres user is not this machine's (another uid)
chown -R postgres: "$NEW"
pg_start NEW >&2 || bail "could not start the upgraded 18 cluster"
is "$(sql "SHOW server_version_num" | cut -c1-2) $(sql "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")" \
	"18 $VERSION" "${UPGRADE_POINTS[1]}"
check "${UPGRADE_POINTS[2]}" compare at18 <(printf '%s\n' "$AT17") <(e2e_snapshot)
tap_done
