# test/sql-only/lib.sh — what the scripts of test/sql-only that start a
# cluster of their own share; source after test/lib/pg.sh.
#
#   sql_only_work NAME   WORK: a new temporary directory ro-sql-only-NAME.*
#                        that the postgres user may read, removed at exit
#                        (kept with RO_KEEP_TMP=1)
#   sql_only_cluster     a throwaway cluster (pg_start; its directory in
#                        CLUSTER) and the role ADMIN, LOGIN NOSUPERUSER
#                        CREATEROLE CREATEDB as a managed service's admin
#                        role; bails out of the script when either fails

sql_only_work() {
	WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-sql-only-$1.XXXXXX") || tap_bail "could not make a temporary directory"
	# shellcheck disable=SC2016 # expanded when the handler runs
	ro_on_exit "[[ \${RO_KEEP_TMP:-0} == 1 ]] || rm -rf -- '$WORK'"
	chmod 755 "$WORK"
}

sql_only_cluster() {
	# shellcheck disable=SC2034 # set by pg_start through its name
	CLUSTER=
	pg_start CLUSTER >&2 || tap_bail "could not start PostgreSQL"
	pg_psql -d postgres -c "CREATE ROLE $ADMIN LOGIN NOSUPERUSER CREATEROLE CREATEDB" >&2 ||
		tap_bail "could not create the admin role $ADMIN"
}
