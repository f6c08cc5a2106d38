#!/bin/bash
# r16-two-feeders-join-leave-on-sql-only.t — r01-two-feeders-join-leave.t
# (feeder a alone, b joins mid-stream, b leaves with SIGTERM, more is
# produced, then the account: every valid order once, every bad message
# quarantined once, no offset acknowledged ahead of the database) read
# from that file as it is, with the feeder, unchanged, over the SQL-only
# flavour: its database made by a NOSUPERUSER CREATEROLE CREATEDB admin
# role that installed the flavour with psql -f and granted the feeder's
# role (test/sql-only/e2e-flavour.sh) instead of CREATE EXTENSION.  One
# point more than r01's: the database holds the flavour.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"
# shellcheck source=test/sql-only/e2e-flavour.sh
. "$RO_ROOT/test/sql-only/e2e-flavour.sh"

ADMIN=ro_sql_only_admin_r16
SQL_ONLY_FEEDER_ROLE=ro_feeder_sql_only_r16

# r01's plan and the point below
plan() {
	tap_plan $(($1 + 1))
}

# r01's text after its own source of lib.sh (which would put back the
# extension's e2e_setup_db), without its last tap_done
eval "$(sed -e '1,/^\. "\$RO_ROOT\/test\/kafka-real\/lib\.sh"$/d' -e '/^tap_done$/d' \
	"$RO_ROOT/test/kafka-real/r01-two-feeders-join-leave.t")"

check "the database holds the SQL-only flavour: no C function, every function received_orders_owner's" \
	sql_only_holds_flavour
sql_only_drop_db
tap_done
