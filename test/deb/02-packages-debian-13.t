#!/bin/bash
# test/deb/02-packages-debian-13.t — `make deb` inside the Debian 13 root
# builds postgresql-17-received-orders and received-orders-feeder for
# trixie without a lintian error; in a clean copy of the root both install
# with `apt-get install ./...deb`, CREATE EXTENSION works on trixie's 17,
# the feeder runs and its unit passes `systemd-analyze verify`, and
# `apt-get purge` leaves nothing of theirs.
#
# Root only (chroot).  The root (tools/build-trixie-root) is not changed:
# the build runs in an overlay of it that gets the package build's
# dependencies (debhelper, dpkg-dev, postgresql-server-dev-all, lintian,
# libcmocka-dev), the install in another, clean one that gets only systemd
# and man-db first (for systemd-analyze).  The
# bundled librdkafka is the root's cached one when a test/run made it
# there, else built from the pinned tarball copied from this machine's
# cache.  TAP on stdout.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/debian_root.sh
. "$RO_ROOT/test/lib/debian_root.sh"

if [[ $EUID != 0 ]]; then
	echo "1..0 # SKIP chroot and apt-get in the Debian 13 root need root"
	exit 0
fi
ROOT=$("$RO_ROOT/tools/build-trixie-root" </dev/null) || {
	echo "Bail out! tools/build-trixie-root failed"
	exit 1
}
tap_plan 9

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-deb-13.XXXXXX")
chmod 755 "$WORK"
ro_on_exit "rm -rf -- '$WORK'"
# tools/build-librdkafka's cache, where the pinned tarball is
CACHE=${RO_RDKAFKA_CACHE:-${RO_PG_CACHE:-/var/cache/received_orders}}
BUILD_DEPS=(debhelper dpkg-dev postgresql-server-dev-all lintian libcmocka-dev)
PACKAGES=(postgresql-17-received-orders received-orders-feeder)

# the tree, without this machine's objects and programs
mkdir -p "$WORK/src"
tar -C "$RO_ROOT" -cf - --exclude=./build --exclude=./.git --exclude=node_modules \
	--exclude='*.o' --exclude='*.bc' --exclude='*.so' --exclude='*.a' . | tar -xf - -C "$WORK/src"
find "$WORK/src/feeder" "$WORK/src/tools" -type f -perm -u+x ! -name '*.*' \
	-exec sh -c 'for f; do ! head -c 4 "$f" | grep -q ELF || rm -f -- "$f"; done' sh {} +
mkdir -p "$WORK/rdkafka-src"
cp -- "$CACHE"/src/librdkafka_*.orig.tar.* "$WORK/rdkafka-src/" 2>/dev/null || true

# 1-2: the build
dr_run "$ROOT" --overlay "$WORK/build-root" --bind "$WORK" -- DEBIAN_FRONTEND=noninteractive \
	WORK="$WORK" /bin/bash -c '
	set -e
	apt-get -q install -y --no-install-recommends "$@"
	mkdir -p /var/cache/received_orders/src
	cp -n -- "$WORK"/rdkafka-src/* /var/cache/received_orders/src/ 2>/dev/null || true
	tools=$WORK/src/tools
	"$tools/build-librdkafka" >/dev/null
	make -C "$WORK/src" deb' sh "${BUILD_DEPS[@]}" >"$WORK/build.log" 2>&1 || true
debs=()
for pkg in "${PACKAGES[@]}"; do
	debs+=("$(find "$WORK/src/build/deb" -name "${pkg}_*_amd64.deb" 2>/dev/null | head -n 1)")
done
tap_ok "$([[ -n ${debs[0]} && -n ${debs[1]} ]] && echo 0 || echo 1)" \
	"make deb in the Debian 13 root builds ${PACKAGES[*]}"
tap_last_ok || tap_diag "$(tail -n 30 "$WORK/build.log")"
tap_like "$(grep -E '^lintian --fail-on error|^ls -l build/deb' "$WORK/build.log" | tr '\n' ' ')" \
	"^lintian --fail-on error .*ls -l build/deb" "lintian finds no error in them (make deb goes on past it)"

# 3-9: a clean copy of the root installs, uses and purges them
cat >"$WORK/install.sh" <<'EOS'
set -u
. "$RO_ROOT/test/lib/pg.sh"
exec 3>"$WORK/results"
result() { printf '%s\t%s\n' "$1" "$2" >&3; }
# systemd and man-db first, for systemd-analyze (minbase has neither; it
# runs man for the unit's Documentation=)
DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends systemd man-db >"$WORK/install.log" 2>&1
DEBIAN_FRONTEND=noninteractive apt-get -q install -y "$@" >>"$WORK/install.log" 2>&1
result install "$?"
result version "$(dpkg-query -W -f '${Version} ' postgresql-17-received-orders received-orders-feeder)"
pg_select_major 17
DIR=
if pg_start DIR >&2; then
	result extension "$(psql -X -q -At -d postgres -c 'CREATE EXTENSION received_orders' \
		-c "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'" 2>&1)"
	pg_stop "$DIR"
else
	result extension "no cluster"
fi
result feeder "$(received-orders-feeder --version 2>&1 | head -n 1)"
dpkg -L postgresql-17-received-orders received-orders-feeder | sort -u >"$WORK/files"
unit=$(grep '/systemd/system/received-orders-feeder\.service$' "$WORK/files")
result verify "$(systemd-analyze verify "${unit:-/nonexistent.service}" 2>&1; echo "exit $?")"
DEBIAN_FRONTEND=noninteractive apt-get -q purge -y postgresql-17-received-orders received-orders-feeder >"$WORK/purge.log" 2>&1
result purge "$?"
left=
while read -r path; do
	[[ $path == /. ]] && continue
	[[ -e $path || -L $path ]] || continue
	# a directory another package owns (/usr/bin, /usr/lib/postgresql/17/lib) stays
	[[ -d $path ]] && dpkg -S "$path" >/dev/null 2>&1 && continue
	left+=" $path"
done <"$WORK/files"
result left "${left# }"
result states "$(dpkg-query -W -f '${db:Status-Abbrev}' postgresql-17-received-orders received-orders-feeder 2>/dev/null | xargs)"
EOS
inside=()
for deb in "${debs[@]}"; do
	inside+=("${deb:-/nonexistent.deb}")
done
dr_run "$ROOT" --overlay "$WORK/clean-root" --bind "$WORK" --bind "$RO_ROOT" -- \
	RO_ROOT="$RO_ROOT" WORK="$WORK" /bin/bash "$WORK/install.sh" "${inside[@]}" >"$WORK/run.log" 2>&1 || true
result() {
	awk -F '\t' -v key="$1" '$1 == key { sub(/^[^\t]*\t/, ""); print }' "$WORK/results" 2>/dev/null
}
upstream=$(sed -n '1s/^received-orders (\([^-)]*\).*/\1/p' "$RO_ROOT/debian/changelog")
tap_is "$(result install)" 0 "apt-get install ./...deb installs both in a clean copy of the root"
tap_last_ok || tap_diag "$(tail -n 20 "$WORK/install.log" 2>/dev/null)"
tap_like "$(result version)" "^$upstream-[^ ]+ $upstream-[^ ]+ ?$" "both at the tree's version $upstream"
tap_is "$(result extension)" "${upstream%.0}" "CREATE EXTENSION received_orders works on trixie's PostgreSQL 17"
tap_like "$(result feeder)" "^received-orders-feeder $upstream .*librdkafka 2\\.14\\.2" \
	"the packaged feeder runs, with the bundled librdkafka"
tap_is "$(result verify)" "exit 0" "systemd-analyze verify passes on the packaged unit, without a warning"
tap_is "$(result purge) $(result states)" "0 " "apt-get purge removes both, configuration files included"
tap_is "$(result left)" "" "nothing the packages installed is left ($(wc -l <"$WORK/files" 2>/dev/null || echo 0) paths checked)"
tap_done
