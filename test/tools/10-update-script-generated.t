#!/bin/bash
# test/tools/10-update-script-generated.t — the direct update script
# sql/received_orders--1.2--1.4.sql is written once: it is exactly what the
# Makefile's rule composes (tools/compose-update-script) from its parts,
# the frozen sql/received_orders--1.2--1.3.sql and sql/received_orders--1.3--1.4.sql
# among them; each of them appears in it whole, and it has one "\echo ...
# \quit" guard.  A negative control: a part changed by one line and not
# composed again is caught.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
export RO_ROOT
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

SCRIPT=sql/received_orders--1.2--1.4.sql

tap_plan 5

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-compose-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"

# composed TREE — what make's rule writes for the script in TREE (dry run
# of the rule's recipe, run in a copy so the tree is not touched)
composed() {
	local parts
	parts=$(make -s -C "$1" --no-print-directory -f Makefile -f - print-parts <<<'print-parts: ; @echo $(UPDATE_1_2_TO_1_4_PARTS)' 2>/dev/null)
	[[ -n $parts ]] || { echo "no parts named by the Makefile"; return 0; }
	# shellcheck disable=SC2086 # the list of parts
	(cd "$1" && tools/compose-update-script $parts)
}

cp -a "$RO_ROOT/Makefile" "$RO_ROOT/received_orders.control" "$RO_ROOT/sql" "$RO_ROOT/tools" "$WORK/"
tap_cmd "the committed $SCRIPT is what the Makefile's rule composes (make $SCRIPT, then commit it)" \
	cmp "$RO_ROOT/$SCRIPT" <(composed "$WORK")
missing=
for part in sql/received_orders--1.2--1.3.sql sql/received_orders--1.3--1.4.sql; do
	grep -v '^\\echo .*\\quit$' "$RO_ROOT/$part" >"$WORK/part"
	# the part's lines appear in the script as one block
	if ! python3 -c 'import sys; sys.exit(0 if open(sys.argv[1]).read() in open(sys.argv[2]).read() else 1)' \
		"$WORK/part" "$RO_ROOT/$SCRIPT"; then
		missing+=" $part"
	fi
done
tap_is "${missing# }" "" "the frozen 1.2--1.3 and 1.3--1.4 appear whole in $SCRIPT"
tap_is "$(grep -c '^\\echo .*\\quit$' "$RO_ROOT/$SCRIPT")" 1 "$SCRIPT has one \\echo ... \\quit guard"
tap_like "$(head -n 1 "$RO_ROOT/$SCRIPT")" "^-- received_orders--1\\.2--1\\.4\\.sql " "$SCRIPT starts with its own header"

# negative control: one line more in 1.3--1.4, the script not composed again
echo "-- a change" >>"$WORK/sql/received_orders--1.3--1.4.sql"
if cmp -s "$RO_ROOT/$SCRIPT" <(composed "$WORK"); then
	tap_ok 1 "a part changed and not composed again is caught"
else
	tap_ok 0 "a part changed and not composed again is caught"
fi

tap_done
