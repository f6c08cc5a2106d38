#!/bin/bash
# test/sql-only/05-feeder-schema-registry-on-sql-only.t — the feeder,
# unchanged, over the SQL-only flavour on Schema Registry topics: the whole
# of test/e2e/29-schema-registry-avro.t (Avro schema versions and every
# type of the mapping, JSON Schema, unknown ids, truncated frames, unframed
# values, a registry down or slow, wrong credentials, TLS, schema ids in a
# header by GUID), read from that file as it is, in a database where a
# NOSUPERUSER CREATEROLE CREATEDB admin role installed the flavour and
# granted the feeder's role (e2e-flavour.sh) instead of CREATE EXTENSION.
#
# One grant is added, as a DBA of the flavour must: 29's trigger (a DBA's,
# answering 40001 twice) counts its attempts with a sequence of public, and
# on this flavour a trigger on received_orders runs as the functions' owner
# (received_orders_owner), not as a superuser: the sequences the superuser
# makes in public are usable by that owner.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/../e2e/lib.sh"
# shellcheck source=test/sql-only/e2e-flavour.sh
. "$(dirname "$0")/e2e-flavour.sh"

ADMIN=ro_sql_only_admin_05
SQL_ONLY_FEEDER_ROLE=ro_feeder_sql_only_05

# e2e-flavour.sh's database, and the DBA's grant for 29's trigger
e2e_setup_db() {
	sql_only_setup_db || return 1
	psql -X -q -d "$E2E_DB" -c "ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE ON SEQUENCES TO received_orders_owner"
}

# 29's text after its own source of lib.sh (which would put back the
# extension's e2e_setup_db), without its last tap_done
eval "$(sed -e '1,/^\. "\$(dirname "\$0")\/lib\.sh"$/d' -e '/^tap_done$/d' "$RO_ROOT/test/e2e/29-schema-registry-avro.t")"

sql_only_drop_db
tap_done
