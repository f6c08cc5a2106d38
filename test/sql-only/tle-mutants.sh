# test/sql-only/tle-mutants.sh — copies of the pg_tle wrapper
# (build/sql-only/received_orders_tle.sql) with one rule of pg_tle broken,
# or with text that only looks like it breaks one; sourced by
# test/sql-only/07-tle-wrapper-meets-pg-tle-rules.t (tools/build-sql-only
# --check-tle must refuse the first kind and accept the second) and by
# tools/prove-pg-tle (a real pg_tle must do the same).
#
#   TLE_REFUSED        names of the copies pg_tle refuses
#   TLE_STRICTER       names of the copies pg_tle takes but changes (a line
#                      blanked, a word replaced): --check-tle refuses them
#   TLE_ACCEPTED       names of the copies that break no rule
#   tle_mutant NAME WRAPPER   print copy NAME of WRAPPER
#   tle_check_message NAME    the regex --check-tle's message must match
#   tle_pg_tle_message NAME   the regex pg_tle's error must match (refused)

TLE_REFUSED=(commit begin start-transaction savepoint psql-meta-command
	inner-delimiter outer-delimiter nested-extension unclosed-dollar-quote
	name-with-double-dash name-with-dot long-name version-with-slash)
TLE_STRICTER=(echo-line extowner)
TLE_ACCEPTED=(commit-in-string commit-in-escape-string commit-in-nested-comment
	commit-in-atomic-body)

# tle__insert TEXT WRAPPER — WRAPPER with the lines of TEXT first in its body
tle__insert() {
	awk -v text="$1" '{ print } /^\$_pgtle_\$$/ && !done { print text; done = 1 }' "$2"
}

# tle__name VALUE WRAPPER — WRAPPER installing the extension named VALUE
tle__name() {
	sed "s/^\t'received_orders_sql',\$/\t'$1',/" "$2"
}

# tle_mutant — see the header
tle_mutant() {
	local wrapper=$2
	case $1 in
	commit) tle__insert 'COMMIT;' "$wrapper" ;;
	begin) tle__insert 'BEGIN;' "$wrapper" ;;
	start-transaction) tle__insert 'START TRANSACTION ISOLATION LEVEL SERIALIZABLE;' "$wrapper" ;;
	savepoint) tle__insert 'SAVEPOINT before_schema;' "$wrapper" ;;
	psql-meta-command) tle__insert '\set ON_ERROR_STOP on' "$wrapper" ;;
	inner-delimiter) tle__insert "SELECT 'the inner \$_pgtle_i_\$ delimiter';" "$wrapper" ;;
	outer-delimiter) tle__insert '-- the outer $_pgtle_o_$ delimiter' "$wrapper" ;;
	nested-extension) tle__insert 'CREATE EXTENSION pg_trgm;' "$wrapper" ;;
	unclosed-dollar-quote) tle__insert 'DO $unclosed$ BEGIN' "$wrapper" ;;
	name-with-double-dash) tle__name 'received--orders' "$wrapper" ;;
	name-with-dot) tle__name 'received.orders' "$wrapper" ;;
	long-name) tle__name 'received_orders_sql_under_a_name_long_enough_to_pass_sixty' "$wrapper" ;;
	version-with-slash) sed "s|^\t'1\.4',\$|\t'1/4',|" "$wrapper" ;;
	echo-line) tle__insert "$(printf 'DO $e$ BEGIN\n\\echo a line pg_tle blanks\nEND $e$;')" "$wrapper" ;;
	extowner) tle__insert 'COMMENT ON ROLE @extowner@ IS NULL;' "$wrapper" ;;
	commit-in-string) tle__insert "SELECT 'not a statement; COMMIT; \\ nor a meta-command';" "$wrapper" ;;
	commit-in-escape-string) tle__insert "SELECT E'it\\'s; COMMIT;';" "$wrapper" ;;
	commit-in-nested-comment) tle__insert '/* a /* nested */ COMMIT; */ SELECT 1;' "$wrapper" ;;
	commit-in-atomic-body)
		tle__insert "$(printf '%s\n' 'CREATE FUNCTION pg_temp.atomic_case() RETURNS int LANGUAGE sql' \
			'BEGIN ATOMIC SELECT CASE WHEN true THEN 1 END; SELECT 2; END;')" "$wrapper" ;;
	*) return 1 ;;
	esac
}

# tle_check_message — see the header
tle_check_message() {
	case $1 in
	commit | begin | start-transaction | savepoint) echo 'transaction control \(' ;;
	psql-meta-command) echo 'a psql meta-command' ;;
	inner-delimiter | outer-delimiter) echo 'holds \$_pgtle_o_\$ or \$_pgtle_i_\$' ;;
	nested-extension) echo 'CREATE EXTENSION inside an extension script' ;;
	unclosed-dollar-quote) echo 'ends inside a dollar quote \$unclosed\$' ;;
	name-with-double-dash) echo 'extension name "received--orders" holds "--"' ;;
	name-with-dot) echo 'extension name "received.orders" holds a character other than' ;;
	long-name) echo 'is 64 bytes or more' ;;
	version-with-slash) echo 'version "1/4" holds' ;;
	echo-line) echo 'a line starting \\echo' ;;
	extowner) echo '@extowner@' ;;
	esac
}

# tle_pg_tle_message — see the header (pg_tle 1.5.3 on PostgreSQL 15 and 18)
tle_pg_tle_message() {
	case $1 in
	commit | begin | start-transaction | savepoint)
		echo 'transaction control statements are not allowed within an extension script' ;;
	psql-meta-command) echo 'syntax error at or near "\\"' ;;
	inner-delimiter | outer-delimiter) echo 'invalid character in extension definition' ;;
	nested-extension) echo 'nested CREATE EXTENSION is not supported' ;;
	unclosed-dollar-quote) echo 'unterminated dollar-quoted string' ;;
	name-with-double-dash | name-with-dot) echo 'invalid extension name' ;;
	long-name) echo 'generated function name .* is too long' ;;
	version-with-slash) echo 'invalid extension version name' ;;
	esac
}
