#!/bin/bash
# test/upgrade/06-update-keeps-grants.t — every update path to the control
# file's default_version keeps a DBA's grants.
#
# For each version the extension was released at (1.0, 1.1, 1.2, 1.3): a
# database created at it, and a role granted directly, as a DBA grants a
# dashboard or an application, on every object of the schema that takes a
# grant: USAGE on the schema and the enum type, ALL on every table, SELECT
# on every view (and on one column of quarantine_summary), USAGE and SELECT
# on every sequence, EXECUTE on every function.  Then ALTER EXTENSION ...
# UPDATE, along the path PostgreSQL chooses, and:
#   - the role holds exactly the privileges it held, object by object,
#     column by column (1.2 -> 1.3 dropped quarantine_summary and created it
#     again with pg_monitor's grant only);
#   - pg_dump --schema-only still holds every GRANT to the role (a grant
#     given back inside an extension script would otherwise become the
#     extension's initial privileges, which pg_dump leaves out);
#   - the role reads quarantine_summary (where the version had it).
# TAP on stdout.  Uses the harness's cluster, or starts its own when run alone.

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"

VERSIONS=(1.0 1.1 1.2 1.3)
ROLE=ro_upgrade_dashboard_$$

# grant_everything DB — grant ROLE directly on every object of the schema
grant_everything() {
	pg_psql -d "$1" <<-EOF
		GRANT USAGE ON SCHEMA received_orders TO $ROLE;
		GRANT USAGE ON TYPE received_orders.materialize_outcome TO $ROLE;
		DO \$\$
		DECLARE
			o record;
		BEGIN
			FOR o IN SELECT c.oid::regclass AS rel, c.relkind
			           FROM pg_class c
			          WHERE c.relnamespace = 'received_orders'::regnamespace
			            AND c.relkind IN ('r', 'v', 'S')
			LOOP
				EXECUTE format('GRANT %s ON %s TO $ROLE',
					CASE o.relkind WHEN 'r' THEN 'ALL' WHEN 'v' THEN 'SELECT' ELSE 'USAGE, SELECT' END,
					o.rel);
			END LOOP;
			FOR o IN SELECT p.oid::regprocedure AS f FROM pg_proc p
			          WHERE p.pronamespace = 'received_orders'::regnamespace
			LOOP
				EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO $ROLE', o.f);
			END LOOP;
			IF to_regclass('received_orders.quarantine_summary') IS NOT NULL THEN
				GRANT SELECT (messages) ON received_orders.quarantine_summary TO $ROLE WITH GRANT OPTION;
			END IF;
		END
		\$\$;
	EOF
}

# privileges DB — one line per object (and column) and privilege the role
# holds by a grant, sorted
privileges() {
	pg_query "$1" "
		SELECT o.what || ': ' || a.privilege_type || CASE WHEN a.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END
		  FROM (SELECT 'schema received_orders' AS what, n.nspacl AS acl FROM pg_namespace n
		         WHERE n.nspname = 'received_orders'
		        UNION ALL
		        SELECT 'type ' || t.oid::regtype, t.typacl FROM pg_type t
		         WHERE t.typnamespace = 'received_orders'::regnamespace
		        UNION ALL
		        SELECT 'relation ' || c.oid::regclass, c.relacl FROM pg_class c
		         WHERE c.relnamespace = 'received_orders'::regnamespace
		        UNION ALL
		        SELECT 'column ' || a.attrelid::regclass || '.' || a.attname, a.attacl FROM pg_attribute a
		          JOIN pg_class c ON c.oid = a.attrelid
		         WHERE c.relnamespace = 'received_orders'::regnamespace AND a.attacl IS NOT NULL
		        UNION ALL
		        SELECT 'function ' || p.oid::regprocedure, p.proacl FROM pg_proc p
		         WHERE p.pronamespace = 'received_orders'::regnamespace) o,
		       aclexplode(o.acl) a
		 WHERE a.grantee = '$ROLE'::regrole
		 ORDER BY 1" || echo "privileges of $1: query failed"
}

# dumped_grants DB — the GRANT statements to the role in pg_dump's output
dumped_grants() {
	"$(pg_bindir)/pg_dump" --schema-only -d "$1" | grep -E "^GRANT .* TO $ROLE( WITH GRANT OPTION)?;$" | sort ||
		echo "dump of $1: no grant"
}

tap_plan $((${#VERSIONS[@]} * 5))

pg_ensure_cluster >&2
ro_on_exit "psql -X -q -d postgres -c 'DROP ROLE IF EXISTS $ROLE' >/dev/null 2>&1"
for from in "${VERSIONS[@]}"; do
	ro_on_exit "dropdb --if-exists ro_grants_${from/./_}_$$ 2>/dev/null"
done
pg_psql -d postgres -c "CREATE ROLE $ROLE NOLOGIN" >/dev/null

DEFAULT=$(pg_query postgres "SELECT default_version FROM pg_available_extensions WHERE name = 'received_orders'")
[[ -n $DEFAULT ]] || tap_bail "received_orders is not installed (no control file)"
tap_diag "default_version is $DEFAULT"

for from in "${VERSIONS[@]}"; do
	db=ro_grants_${from/./_}_$$
	tap_cmd "$from: a database at $from, a role granted directly on every object of the schema" \
		eval "pg_createdb $db && pg_query $db \"CREATE EXTENSION received_orders VERSION '$from'\" && grant_everything $db"
	before=$(privileges "$db")
	dump_before=$(dumped_grants "$db")
	tap_cmd "$from: ALTER EXTENSION received_orders UPDATE to $DEFAULT succeeds" \
		pg_query "$db" "ALTER EXTENSION received_orders UPDATE"
	tap_is "$(privileges "$db")" "$before" "$from -> $DEFAULT: the role holds every privilege it was granted, object by object"
	tap_is "$(dumped_grants "$db")" "$dump_before" "$from -> $DEFAULT: pg_dump still dumps every grant to the role"
	if [[ $before == *"relation received_orders.quarantine_summary: SELECT"* ]]; then
		tap_is "$(pg_query "$db" "SET ROLE $ROLE; SELECT count(*) FROM received_orders.quarantine_summary" 2>&1)" "0" \
			"$from -> $DEFAULT: the role granted SELECT on quarantine_summary reads it"
	else
		tap_ok 0 "# SKIP $from has no quarantine_summary to read"
	fi
done

tap_done
