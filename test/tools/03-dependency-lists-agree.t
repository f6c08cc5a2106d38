#!/bin/bash
# test/tools/03-dependency-lists-agree.t — the build dependencies are
# written once: test/packages.txt's [build] section, and the README's
# "From source" apt-get line and debian/control's Build-Depends agree with
# it.
#
# The README line must name exactly the [build] packages; every library
# package of Build-Depends must be in [build] (libcmocka-dev, used only by
# the unit tests, in [test]) and every library of [build] in
# Build-Depends; every pkg-config module the feeder's and the tools'
# Makefiles ask for must come from a package of the lists (dpkg -S of its
# .pc file).  debian/control.in, from which pg_buildext regenerates
# debian/control (its clean step refuses a control that differs), has the
# same Build-Depends.  A negative control: a README without libavro-dev is
# caught.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
export RO_ROOT
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/packages.sh
. "$RO_ROOT/test/lib/packages.sh"

tap_plan 7

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-deps-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"

# readme_packages FILE — the packages of the apt-get line in the "From
# source" section, one per line, sorted
readme_packages() {
	awk '/^### From source/ { on = 1; next } /^##/ { on = 0 } on && /^apt-get install / { print }' "$1" |
		sed 's/^apt-get install //' | tr ' ' '\n' | grep -v '^$' | sort -u
}

# control_libraries — the lib*-dev packages of debian/control's
# Build-Depends, without build profiles, sorted
control_libraries() {
	sed -n '/^Build-Depends:/,/^[A-Z]/p' "$RO_ROOT/debian/control" |
		grep -oE '^ [a-z0-9.+-]+' | tr -d ' ' | grep -E '^lib.*-dev$' | sort -u
}

ro_package_list build | sed 's/@.*//' | sort -u >"$WORK/build"
ro_package_list test | sed 's/@.*//' | sort -u >"$WORK/test"

readme_packages "$RO_ROOT/README.md" >"$WORK/readme"
tap_is "$(cat "$WORK/readme")" "$(cat "$WORK/build")" \
	"README's From source apt-get line names exactly test/packages.txt's [build] packages"

sed 's/ libavro-dev//' "$RO_ROOT/README.md" >"$WORK/README.bad"
readme_packages "$WORK/README.bad" >"$WORK/readme.bad"
! cmp -s "$WORK/readme.bad" "$WORK/build"
tap_ok $? "negative control: a README line without libavro-dev does not match [build]"

control_libraries >"$WORK/control"
missing=$(comm -23 "$WORK/control" <(sort -u "$WORK/build" "$WORK/test"))
tap_is "$missing" "" "every library of debian/control's Build-Depends is in test/packages.txt"

grep -E '^lib.*-dev$' "$WORK/build" >"$WORK/build-libs"
missing=$(comm -23 "$WORK/build-libs" "$WORK/control")
tap_is "$missing" "" "every library of [build] is in debian/control's Build-Depends"

grep -q '^pkgconf$' "$WORK/build" && grep -q '^ pkgconf,' "$RO_ROOT/debian/control"
tap_ok $? "pkgconf, which the Makefiles ask for flags, is in [build] and in Build-Depends"

# every pkg-config module named by the Makefiles, by the package owning it
modules=$(grep -ohE '\$\(PKG_CONFIG\) --(cflags|libs) [a-z0-9 .+-]+' \
	"$RO_ROOT/feeder/Makefile" "$RO_ROOT/tools/Makefile" |
	sed -E 's/.*--(cflags|libs) //' | tr ' ' '\n' | grep -E '^[a-z]' | sort -u)
unlisted=
for module in $modules; do
	pc=$(pkg-config --variable=pcfiledir "$module" 2>/dev/null)/$module.pc || pc=
	owner=$(dpkg -S "$pc" 2>/dev/null | cut -d: -f1 | head -n 1) || owner=
	if [[ -z $owner ]] || ! grep -qx "$owner" "$WORK/build" "$WORK/test"; then
		unlisted+=" $module(${owner:-no package})"
	fi
done
tap_is "${unlisted# }" "" "every pkg-config module of the Makefiles ($(echo $modules)) comes from a listed package"

# 7: control.in, which pg_buildext checks debian/control against
build_depends() {
	sed -n '/^Build-Depends:/,/^[A-Z][A-Za-z-]*: */{/^Build-Depends:/p;/^ /p}' "$1"
}
tap_is "$(build_depends "$RO_ROOT/debian/control.in")" "$(build_depends "$RO_ROOT/debian/control")" \
	"debian/control.in has debian/control's Build-Depends (pg_buildext checkcontrol)"

tap_done
