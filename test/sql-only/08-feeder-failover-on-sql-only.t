#!/bin/bash
# test/sql-only/08-feeder-failover-on-sql-only.t — the feeder, unchanged,
# over the SQL-only flavour through a failover: the whole of
# test/e2e/10-async-failover.t (a real asynchronous standby made with
# pg_basebackup -R falls behind, the primary crashes after committing
# batches Kafka was told of, the standby is promoted; the feeder, running
# all along with a multi-host DSN, reconnects, sees the promoted database's
# positions behind its own, reads the lost events again and ends with
# exactly the stream: 0 lost, 0 doubled, 0 acknowledged ahead), read from
# that file as it is.  Its database is made on the primary by a NOSUPERUSER
# CREATEROLE CREATEDB admin role that installed the flavour with psql -f and
# granted the feeder's role (e2e-flavour.sh) instead of CREATE EXTENSION;
# the standby replicates it, the flavour's functions, owner role and grants
# included.  Two points more than 10's: the promoted database holds the
# flavour (no C function, every function received_orders_owner's), and no
# offset is acknowledged ahead of it at the end.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"
# shellcheck source=test/sql-only/e2e-flavour.sh
. "$(dirname "$0")/e2e-flavour.sh"

ADMIN=ro_sql_only_admin_08
SQL_ONLY_FEEDER_ROLE=ro_feeder_sql_only_08

# 10's plan and the two points below
plan() {
	tap_plan $(($1 + 2))
}

# 10's text after its own source of lib.sh (which would put back the
# extension's e2e_setup_db), without its last tap_done
eval "$(sed -e '1,/^\. "\$(dirname "\$0")\/lib\.sh"$/d' -e '/^tap_done$/d' "$RO_ROOT/test/e2e/10-async-failover.t")"

# sql() reads the promoted standby now
check "the promoted database holds the SQL-only flavour: no C function, every function received_orders_owner's" \
	sql_only_holds_flavour
ahead=$(acks_ahead "$GROUP") || ahead="could not read the offsets: $ahead"
is "$ahead" "" "no offset acknowledged ahead of the promoted database"

sql_only_drop_db
tap_done
