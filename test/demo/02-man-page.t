#!/bin/bash
# 02-man-page.t — docs/received-orders-feeder.1 renders with man-db without
# a single groff warning, has every section an operator looks for, and
# documents every option `received-orders-feeder --help` lists with an
# entry of its own under OPTIONS (so adding an option without documenting
# it fails here).

set -uo pipefail
RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
export RO_ROOT
# shellcheck source=../lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

PAGE=$RO_ROOT/docs/received-orders-feeder.1
SECTIONS=(NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT FILES "EXIT STATUS"
	SIGNALS LOGGING EXAMPLES "SEE ALSO")

# feeder — run the feeder binary (ro_feeder_bin)
feeder() {
	"$(ro_feeder_bin)" "$@"
}

command -v man >/dev/null || tap_bail "man not found: install man-db"
[[ -f $PAGE ]] || tap_bail "missing $PAGE"
help=$(feeder --help) || tap_bail "received-orders-feeder --help failed"
mapfile -t options < <(sed -nE 's/^  (-[A-Za-z], )?(--?[A-Za-z][A-Za-z-]*).*/\2/p' <<<"$help" | sort -u)
((${#options[@]} >= 10)) || tap_bail "found only ${#options[@]} options in --help"

tap_plan $((3 + ${#SECTIONS[@]} + ${#options[@]}))

warnings=$(MANWIDTH=80 man --warnings -l "$PAGE" 2>&1 >/dev/null)
tap_is "$warnings" "" "man --warnings -l renders the page without warnings"

# plain text, as a terminal shows it; wide, so that nothing is broken
text=$(MANWIDTH=200 LC_ALL=C.UTF-8 man -l "$PAGE" 2>/dev/null | col -b)
tap_like "$(head -n 1 <<<"$text")" '^RECEIVED-ORDERS-FEEDER\(1\)' "the page renders, titled RECEIVED-ORDERS-FEEDER(1)"
lines=$(MANWIDTH=80 LC_ALL=C.UTF-8 man -l "$PAGE" 2>/dev/null | col -b | awk 'length > 80' | head -n 3)
tap_is "$lines" "" "no rendered line is wider than 80 columns"

for section in "${SECTIONS[@]}"; do
	tap_ok "$(grep -qx "$section" <<<"$text"; echo $?)" "section $section"
done

# an option's entry: a tag line of OPTIONS, indented by 7, starting with it
optsec=$(sed -n '/^OPTIONS$/,/^[A-Z]/p' <<<"$text")
for opt in "${options[@]}"; do
	if grep -qE -- "^       (-[A-Za-z], )?$opt( |$)" <<<"$optsec"; then
		tap_ok 0 "OPTIONS documents $opt"
	else
		tap_ok 1 "OPTIONS documents $opt"
		tap_diag "$opt is in --help but has no entry under OPTIONS in docs/received-orders-feeder.1"
	fi
done
tap_done
