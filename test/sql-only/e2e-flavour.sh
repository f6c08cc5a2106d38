# test/sql-only/e2e-flavour.sh — for the scripts that run the feeder over
# the SQL-only flavour with test/e2e/lib.sh: e2e_setup_db made as a managed
# service's admin role makes a database (replaces test/e2e/lib.sh's), a
# check that the database holds the flavour, and the cleanup of the roles
# it made.  Set ADMIN (the admin role) and SQL_ONLY_FEEDER_ROLE before
# calling them; source after test/e2e/lib.sh.

# sql_only_setup_db — e2e's database: the SQL-only flavour by psql -f as
# ADMIN (NOSUPERUSER CREATEROLE CREATEDB, created when missing), the
# feeder's role created and granted (grant_feeder) by that role
sql_only_setup_db() {
	pg_ensure_cluster >&2 || return 1
	E2E_DB="ro_e2e_${E2E_NAME//[^a-zA-Z0-9]/_}"
	E2E_ROLE="$SQL_ONLY_FEEDER_ROLE"
	E2E_PASSWORD="pw-$RANDOM$RANDOM-secret"
	"$RO_ROOT/tools/build-sql-only" "$E2E_TMP/sql-only" || return 1
	chmod -R a+rX "$E2E_TMP/sql-only"
	dropdb --if-exists "$E2E_DB" >/dev/null 2>&1
	psql -X -q -d postgres -v admin="$ADMIN" <<-'EOF2' || return 1
		SELECT format('CREATE ROLE %I LOGIN NOSUPERUSER CREATEROLE CREATEDB', :'admin')
		 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'admin') \gexec
	EOF2
	createdb -U "$ADMIN" "$E2E_DB" || return 1
	psql -X -q -v ON_ERROR_STOP=1 -U "$ADMIN" -d "$E2E_DB" -f "$E2E_TMP/sql-only/received_orders.sql" >/dev/null || return 1
	psql -X -q -v ON_ERROR_STOP=1 -U "$ADMIN" -d "$E2E_DB" \
		-v role="$E2E_ROLE" -v pw="$E2E_PASSWORD" <<-'EOF2' || return 1
		SELECT format('CREATE ROLE %I LOGIN PASSWORD %L', :'role', :'pw')
		 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'role') \gexec
		SELECT format('ALTER ROLE %I LOGIN PASSWORD %L', :'role', :'pw') \gexec
		SELECT count(*) FROM received_orders.grant_feeder(quote_ident(:'role')::regrole) \g /dev/null
	EOF2
	E2E_DSN="host=$PGHOST port=$PGPORT dbname=$E2E_DB user=$E2E_ROLE password=$E2E_PASSWORD"
}

# e2e_setup_db — what test/e2e/lib.sh's scripts call: sql_only_setup_db
e2e_setup_db() {
	sql_only_setup_db
}

# sql_only_holds_flavour — E2E_DB (as sql() reaches it) holds the SQL-only
# flavour: no C function in the schema, every function received_orders_owner's
sql_only_holds_flavour() {
	local got
	got=$(sql "SELECT DISTINCT l.lanname || ' ' || pg_get_userbyid(p.proowner)
		FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
		WHERE p.pronamespace = 'received_orders'::regnamespace ORDER BY 1") || return 1
	[ "$got" = $'plpgsql received_orders_owner\nsql received_orders_owner' ] && return 0
	diag "the schema's functions, language and owner: $(tr '\n' ';' <<<"$got")"
	return 1
}

# sql_only_drop_db — the database and the roles this script made, once the
# database is gone (the owner role stays while another database holds the
# flavour)
sql_only_drop_db() {
	e2e_drop_db
	psql -X -q -d postgres -c "DROP ROLE IF EXISTS $ADMIN" >/dev/null 2>&1
	psql -X -q -d postgres -c "DROP ROLE IF EXISTS received_orders_owner" >/dev/null 2>&1
}
