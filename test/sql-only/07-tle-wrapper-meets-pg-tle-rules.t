#!/bin/bash
# test/sql-only/07-tle-wrapper-meets-pg-tle-rules.t — the pg_tle wrapper
# (build/sql-only/received_orders_tle.sql) keeps the rules pg_tle applies
# (tools/build-sql-only --check-tle, read from pg_tle's source: the name
# and version, the two delimiters pg_tle quotes the body with, no
# transaction control, psql meta-command or nested CREATE EXTENSION in the
# body, nothing CREATE EXTENSION would blank or replace); each copy of the
# wrapper with one rule broken (tle-mutants.sh) is refused with that rule,
# each copy whose text only looks like it breaks one (COMMIT in a string, a
# comment, a SQL function's BEGIN ATOMIC) is accepted; and make sql-only
# fails when a source would give a wrapper pg_tle refuses.
#
# CI cannot reach pg_tle: tools/prove-pg-tle runs the same copies on a real
# pg_tle by hand (docs/tests.md keeps the record).  TAP on stdout; needs no
# server.

set -euo pipefail

# shellcheck source=test/lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
# shellcheck source=test/sql-only/tle-mutants.sh
. "$(dirname "$0")/tle-mutants.sh"

HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)

tap_plan $((4 + ${#TLE_REFUSED[@]} + ${#TLE_STRICTER[@]} + ${#TLE_ACCEPTED[@]}))

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-sql-only-tle.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"
WRAPPER=$WORK/build/received_orders_tle.sql

tap_cmd "tools/build-sql-only writes the pg_tle wrapper" "$ROOT/tools/build-sql-only" "$WORK/build"
tap_cmd "the wrapper keeps pg_tle's rules (--check-tle)" "$ROOT/tools/build-sql-only" --check-tle "$WRAPPER"

for name in "${TLE_REFUSED[@]}" "${TLE_STRICTER[@]}"; do
	tle_mutant "$name" "$WRAPPER" >"$WORK/$name.sql"
	out=$("$ROOT/tools/build-sql-only" --check-tle "$WORK/$name.sql" 2>&1) && out="accepted: $out"
	tap_like "$out" "^$WORK/$name.sql: line [0-9]+: .*$(tle_check_message "$name")" \
		"--check-tle refuses the copy $name"
done
out=$(printf '%s\xff\n' "$(head -n 1 "$WRAPPER")" | cat - <(tail -n +2 "$WRAPPER") >"$WORK/not-utf8.sql" &&
	"$ROOT/tools/build-sql-only" --check-tle "$WORK/not-utf8.sql" 2>&1) && out="accepted: $out"
tap_like "$out" "not valid UTF-8" "--check-tle refuses a wrapper that is not valid UTF-8"
for name in "${TLE_ACCEPTED[@]}"; do
	tle_mutant "$name" "$WRAPPER" >"$WORK/$name.sql"
	tap_cmd "--check-tle accepts the copy $name" "$ROOT/tools/build-sql-only" --check-tle "$WORK/$name.sql"
done

# a copy of the sources whose epilogue would end the body with a savepoint
mkdir -p "$WORK/tree/tools"
cp -r "$ROOT/sql" "$WORK/tree/"
cp "$ROOT/received_orders.control" "$WORK/tree/"
cp "$ROOT/tools/build-sql-only" "$WORK/tree/tools/"
printf 'SAVEPOINT after_install;\n' >>"$WORK/tree/sql/sql-only/epilogue.sql"
out=$("$WORK/tree/tools/build-sql-only" "$WORK/tree/build" 2>&1) && out="written: $out"
tap_like "$out" "transaction control \(SAVEPOINT\).*breaks a rule of pg_tle" \
	"tools/build-sql-only (make sql-only) refuses to write a wrapper pg_tle would refuse"

tap_done
