#!/bin/bash
# test/tools/05-make-without-pg-config.t — `make` without pg_config says
# what is missing and what to run, at once, instead of PGXS's empty include
# turning the first rule into the default goal and failing later with a
# bare "postgres.h: No such file"; the goals that find or install their
# PostgreSQL themselves (deps, test, demo) still work without it.
#
# Runs make in a copy of the tree (only the files make reads), once with
# PG_CONFIG naming nothing and once with a PATH that holds every command of
# /usr/bin but pg_config.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

tap_plan 7

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-make-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"
tar -C "$RO_ROOT" --exclude=./.git --exclude=./build --exclude='*.o' -cf - . | tar -C "$WORK" -xf - --one-top-level=tree
TREE=$WORK/tree

# a PATH without pg_config: /usr/bin and /bin through links, but that one
mkdir -p "$WORK/bin"
for dir in /usr/local/bin /usr/bin /bin; do
	for cmd in "$dir"/*; do
		name=${cmd##*/}
		[[ $name == pg_config || -e $WORK/bin/$name ]] || ln -s "$cmd" "$WORK/bin/$name"
	done
done

# 1-3: PG_CONFIG naming nothing
status=0
make -C "$TREE" PG_CONFIG=/nonexistent/pg_config >"$WORK/out" 2>&1 || status=$?
out=$(cat "$WORK/out")
tap_ok "$([[ $status != 0 ]] && echo 0 || echo 1)" "make with PG_CONFIG naming nothing fails"
tap_like "$out" "/nonexistent/pg_config was not found.*make deps.*make PG_CONFIG=" \
	"it names the missing pg_config and what to run (make deps, or make PG_CONFIG=...)"
tap_ok "$([[ $out != *postgres.h* && $out != *gcc* && ! -e $TREE/feeder/main.o ]] && echo 0 || echo 1)" \
	"it stops before compiling anything"

# 4-5: no pg_config on the PATH
status=0
# (the harness exports PG_CONFIG to the suites: a user's shell has none)
PATH=$WORK/bin env -u PG_CONFIG make -C "$TREE" install >"$WORK/out" 2>&1 || status=$?
out=$(cat "$WORK/out")
tap_ok "$([[ $status != 0 ]] && echo 0 || echo 1)" "make install without pg_config on the PATH fails"
tap_like "$out" "pg_config was not found.*postgresql-server-dev-15" \
	"it names pg_config and the package that brings it"

# 6-7: the goals that bring or find their PostgreSQL themselves
tap_like "$(PATH=$WORK/bin env -u PG_CONFIG make -n -C "$TREE" deps 2>&1)" "tools/install-deps build" \
	"make deps still runs without pg_config (it installs it)"
tap_like "$(PATH=$WORK/bin env -u PG_CONFIG make -n -C "$TREE" test 2>&1)" "test/run" \
	"make test still runs without pg_config (test/run installs it)"

tap_done
