#!/bin/bash
# 02-schema-squatting.t — schema squatting: CREATE EXTENSION adopts
# an existing schema named received_orders whoever owns it, so a database
# owner who pre-created it owned the schema of a superuser's SECURITY DEFINER
# functions (and could swap the tables they write).  From 1.1 the install
# (and the update from 1.0) refuses, with the reason and SQLSTATE 42501,
# unless the schema is owned by a superuser and no other role may create
# objects in it.
#
# Each case in a database of its own, as the DBA would meet it:
#   1. a database owner (not a superuser) pre-creates the schema: CREATE
#      EXTENSION refuses, naming the owner, and leaves nothing behind;
#   2. a superuser owns it but granted CREATE to PUBLIC: refused, naming
#      PUBLIC;
#   3. the fix the hint gives (owner a superuser, CREATE revoked): accepted;
#   4. 1.0 installed into a squatted schema (1.0 adopted it): ALTER
#      EXTENSION ... UPDATE refuses; after the fix it updates;
#   5. the ordinary install (no schema beforehand) is unaffected.
# On 1.0 (CREATE EXTENSION ... VERSION '1.0') case 1 is accepted: shown by
# case 4's first step.

set -euo pipefail

. "$(dirname "$0")/../lib/pg.sh"

SQUATTER=ro_squatter_$$
DBS=()

# newdb NAME — a database owned by the squatting role (a database owner, as
# a DBA grants), dropped at exit
newdb() {
	DBS+=("$1")
	createdb -O "$SQUATTER" "$1"
}

# as_squatter DB SQL — SQL as the database owner
as_squatter() {
	pg_psql -At -d "$1" -c "SET ROLE $SQUATTER" -c "$2" 2>&1
}

# try DB SQL — SQL as the superuser; its output and "exit N"
try() {
	pg_psql -At -d "$1" -c "\\set VERBOSITY verbose" -c "$2" 2>&1
	echo "exit $?"
}

tap_plan 12

pg_ensure_cluster >&2
ro_on_exit "psql -X -q -d postgres -c 'DROP ROLE IF EXISTS $SQUATTER' >/dev/null 2>&1"
ro_on_exit 'for d in "${DBS[@]}"; do dropdb --if-exists "$d" 2>/dev/null; done'
psql -X -q -d postgres -c "CREATE ROLE $SQUATTER NOLOGIN" >/dev/null

# --- 1. the database owner pre-creates the schema
DB1=ro_squat1_$$
newdb "$DB1"
as_squatter "$DB1" "CREATE SCHEMA received_orders" >/dev/null
out=$(try "$DB1" "CREATE EXTENSION received_orders")
tap_like "$out" "ERROR: +42501: schema received_orders is owned by role \"$SQUATTER\", which is not a superuser" \
	"CREATE EXTENSION in a schema the database owner made: refused with 42501, naming the owner"
tap_like "$out" "HINT: +Let CREATE EXTENSION create the schema" "the hint says how to fix it"
tap_like "$out" "exit [1-9]" "psql reports the failure"
tap_is "$(pg_query "$DB1" "SELECT count(*) FROM pg_extension WHERE extname = 'received_orders'") $(pg_query "$DB1" \
	"SELECT count(*) FROM pg_class WHERE relnamespace = 'received_orders'::regnamespace")" "0 0" \
	"nothing of the extension is left behind in the squatted schema"

# --- 2. owned by a superuser, but CREATE granted to PUBLIC
DB2=ro_squat2_$$
newdb "$DB2"
pg_query "$DB2" "CREATE SCHEMA received_orders; GRANT CREATE ON SCHEMA received_orders TO PUBLIC" >/dev/null
out=$(try "$DB2" "CREATE EXTENSION received_orders")
tap_like "$out" "ERROR: +42501: roles that are not superusers may create objects in schema received_orders: PUBLIC" \
	"a superuser's schema where PUBLIC may create objects: refused, naming PUBLIC"

# --- 3. the fix from the hint
pg_query "$DB1" "ALTER SCHEMA received_orders OWNER TO postgres" >/dev/null
tap_like "$(try "$DB1" "CREATE EXTENSION received_orders")" "exit 0$" \
	"after ALTER SCHEMA ... OWNER TO a superuser, CREATE EXTENSION succeeds"
pg_query "$DB2" "REVOKE CREATE ON SCHEMA received_orders FROM PUBLIC" >/dev/null
tap_like "$(try "$DB2" "CREATE EXTENSION received_orders")" "exit 0$" \
	"after REVOKE CREATE ... FROM PUBLIC, CREATE EXTENSION succeeds"

# --- 4. 1.0 adopted a squatted schema; the update refuses
DB4=ro_squat4_$$
newdb "$DB4"
as_squatter "$DB4" "CREATE SCHEMA received_orders" >/dev/null
tap_like "$(try "$DB4" "CREATE EXTENSION received_orders VERSION '1.0'")" "exit 0$" \
	"1.0 installs into the schema the database owner made (the defect)"
out=$(try "$DB4" "ALTER EXTENSION received_orders UPDATE")
tap_like "$out" "ERROR: +42501: schema received_orders is owned by role \"$SQUATTER\"" \
	"ALTER EXTENSION ... UPDATE to 1.1 refuses while the schema is the database owner's"
tap_is "$(pg_query "$DB4" "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'")" "1.0" \
	"the extension stays at 1.0"
pg_query "$DB4" "ALTER SCHEMA received_orders OWNER TO postgres" >/dev/null
tap_like "$(try "$DB4" "ALTER EXTENSION received_orders UPDATE")" "exit 0$" \
	"once a superuser owns the schema, the update succeeds"

# --- 5. the ordinary install
DB5=ro_squat5_$$
newdb "$DB5"
tap_like "$(try "$DB5" "CREATE EXTENSION received_orders")" "exit 0$" \
	"CREATE EXTENSION without a schema beforehand succeeds (it creates its own)"
tap_done
