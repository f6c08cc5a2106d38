#!/bin/bash
# test/sql-only/04-feeder-outbox-topics-on-sql-only.t — the feeder,
# unchanged, over the SQL-only flavour on outbox topics: the whole of
# test/e2e/22-outbox-topics.t (Debezium's outbox event router, CloudEvents
# binary and structured mode, Spring's type header; other event types
# skipped, broken envelopes quarantined with their envelope and headers, a
# repaired Debezium message replayed through its envelope), read from that
# file as it is, in a database where a NOSUPERUSER CREATEROLE CREATEDB
# admin role installed the flavour and granted the feeder's role
# (e2e-flavour.sh) instead of CREATE EXTENSION.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"
# shellcheck source=test/sql-only/e2e-flavour.sh
. "$(dirname "$0")/e2e-flavour.sh"

ADMIN=ro_sql_only_admin_04
SQL_ONLY_FEEDER_ROLE=ro_feeder_sql_only_04

# 22's text after its own source of lib.sh (which would put back the
# extension's e2e_setup_db), without its last tap_done
eval "$(sed -e '1,/^\. "\$(dirname "\$0")\/lib\.sh"$/d' -e '/^tap_done$/d' "$RO_ROOT/test/e2e/22-outbox-topics.t")"

sql_only_drop_db
tap_done
