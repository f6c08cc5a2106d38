#!/bin/bash
# test/deb/01-packages.t — `make deb` builds postgresql-NN-received-orders
# and received-orders-feeder without a lintian error; installed with apt-get
# in place of what `make install` put there, the packaged extension passes
# the pgTAP suite in a throwaway cluster, the packaged feeder, manual page
# and systemd unit work, the unit is neither enabled nor started, the
# versions agree, and a purge leaves nothing of the packages behind.
#
# Root only (apt-get, dpkg): anyone else gets a TAP skip.  The harness's
# source install is removed for the duration and put back at the end with
# `make install` (also when the script stops early), since the later suites
# need it.  The pgTAP suite is test/run's own (RO_SKIP_BUILD=1 test/run
# pgtap), run in a cluster it starts.  TAP on stdout.

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"

if [[ $EUID != 0 ]]; then
	echo "1..0 # SKIP installs and purges Debian packages: run as root"
	exit 0
fi

DEB_DIR=$RO_ROOT/build/deb
FEEDER_PKG=received-orders-feeder
PG_CONFIG_15=$(pg_bindir)/pg_config
PKGLIBDIR=$("$PG_CONFIG_15" --pkglibdir)
EXTDIR=$("$PG_CONFIG_15" --sharedir)/extension
PACKAGES=()
INSTALLED=
RESTORED=

tap_plan 20

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-deb-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"

# restore_source_install — `make install` again, as test/run did; once
restore_source_install() {
	[[ -z $RESTORED ]] || return 0
	RESTORED=1
	make -C "$RO_ROOT" install PG_CONFIG="$PG_CONFIG_15" </dev/null >"$WORK/make-install.log" 2>&1
}

# purge_packages — remove the packages and their configuration files
purge_packages() {
	[[ -n $INSTALLED ]] || return 0
	INSTALLED=
	DEBIAN_FRONTEND=noninteractive apt-get purge -y "${PACKAGES[@]}" </dev/null >"$WORK/purge.log" 2>&1
}

# on an early exit: purge first, then put the source install back
ro_on_exit restore_source_install
ro_on_exit purge_packages

# deb_field FILE FIELD — one control field of a .deb
deb_field() {
	dpkg-deb -f "$1" "$2"
}

# owner PATH — the package dpkg says installed PATH (empty when none)
owner() {
	dpkg-query -S "$1" 2>/dev/null | sed 's/: .*//' | head -n 1 || true
}

# --- build -----------------------------------------------------------------

status=0
make -C "$RO_ROOT" deb </dev/null >"$WORK/make-deb.log" 2>&1 || status=$?
tap_ok "$status" "make deb builds the packages and lintian finds no error"
if ! tap_last_ok; then
	tap_diag "$(tail -n 40 "$WORK/make-deb.log")"
	tap_bail "no packages to test"
fi
tap_diag "lintian: $(grep -cE '^[EW]: ' "$WORK/make-deb.log" || true) error/warning line(s)" \
	"$(grep -E '^[EWI]: ' "$WORK/make-deb.log" || true)"

# one extension package per PostgreSQL version pg_buildext supports, the feeder
want=$( (cd "$RO_ROOT" && pg_buildext supported-versions) | sed 's/.*/postgresql-&-received-orders/'
	echo "$FEEDER_PKG")
got=
for deb in "$DEB_DIR"/*.deb; do
	[[ -e $deb ]] || continue
	PACKAGES+=("$(deb_field "$deb" Package)")
	got+="$(deb_field "$deb" Package) $(deb_field "$deb" Version)"$'\n'
done
VERSION=$(cd "$RO_ROOT" && dpkg-parsechangelog -SVersion)
UPSTREAM=${VERSION%-*}
tap_is "$(sort <<<"${got%$'\n'}")" "$(sort <<<"$want" | sed "s/\$/ $VERSION/")" \
	"build/deb/ holds exactly the packages of debian/control, at debian/changelog's version"

# --- install in place of `make install` --------------------------------------

rm -rf -- "$PKGLIBDIR/received_orders.so" "$PKGLIBDIR/bitcode/received_orders" \
	"$PKGLIBDIR/bitcode/received_orders.index.bc" "$EXTDIR"/received_orders[.-]* \
	/usr/local/bin/received-orders-feeder /usr/local/share/man/man1/received-orders-feeder.1
INSTALLED=1
tap_cmd "apt-get install ./build/deb/*.deb installs them" \
	env DEBIAN_FRONTEND=noninteractive apt-get install -y "$DEB_DIR"/*.deb

# PostgreSQL 15 reads the extension from the package, nothing else
got=$(find "$EXTDIR" "$PKGLIBDIR" "$PKGLIBDIR/bitcode" -maxdepth 1 -name 'received_orders*' | sort |
	while read -r file; do echo "$file $(owner "$file")"; done)
want=$(dpkg -L postgresql-15-received-orders | grep -E "^($EXTDIR|$PKGLIBDIR|$PKGLIBDIR/bitcode)/received_orders[^/]*$" |
	sort | sed 's/$/ postgresql-15-received-orders/')
tap_is "$got" "$want" "every received_orders file of PostgreSQL 15 is postgresql-15-received-orders's"

# --- the packaged extension in a throwaway cluster ---------------------------

# shellcheck disable=SC2034 # pg_start stores the cluster's directory in it
DEB_CLUSTER=
pg_start DEB_CLUSTER || tap_bail "the throwaway cluster did not start"
DEFAULT_VERSION=$(sed -n "s/^default_version = '\(.*\)'/\1/p" "$EXTDIR/received_orders.control")
out=$(pg_createdb ro_deb received_orders 2>&1 &&
	pg_query ro_deb "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'" 2>&1) ||
	out="failed: $out"
tap_is "$out" "$DEFAULT_VERSION" "CREATE EXTENSION received_orders installs the packaged default_version"
pg_stop_all

status=0
RO_SKIP_BUILD=1 "$RO_ROOT/test/run" pgtap >"$WORK/pgtap.log" 2>&1 || status=$?
tap_ok "$status" "the pgTAP suite passes against the packaged extension ($(tail -n 1 "$WORK/pgtap.log"))"
tap_last_ok || tap_diag "$(grep -E '^(not ok|# )' "$WORK/pgtap.log" | head -n 40)"

# --- the versions agree --------------------------------------------------------

tap_is "$DEFAULT_VERSION" "${UPSTREAM%.*}" \
	"the packaged default_version is the MAJOR.MINOR of the package's upstream version $UPSTREAM"

# --- the feeder, its manual page, its unit ---------------------------------------

tap_is "$(command -v received-orders-feeder):$(owner /usr/bin/received-orders-feeder)" \
	"/usr/bin/received-orders-feeder:$FEEDER_PKG" "received-orders-feeder in PATH is the packaged one"
out=$(received-orders-feeder --version 2>&1) || out="exit $?: $out"
tap_like "$out" "^received-orders-feeder $UPSTREAM \(" \
	"received-orders-feeder --version says the package's upstream version $UPSTREAM"
tap_is "$(man -w received-orders-feeder 2>&1)" /usr/share/man/man1/received-orders-feeder.1.gz \
	"man finds the packaged manual page"
out=$(LC_ALL=C MANWIDTH=80 man -P cat received-orders-feeder 2>&1 | sed -n '/^NAME/,/^SYNOPSIS/p' |
	tr -s ' \n' '  ') || true
tap_like "$out" "^NAME received-orders-feeder - materialize Kafka OrderReceived events" \
	"man received-orders-feeder renders its NAME section"

UNIT=$(dpkg -L "$FEEDER_PKG" | grep '/systemd/system/received-orders-feeder\.service$' || true)
# shellcheck disable=SC2016 # $FEEDER_OPTS is systemd's to expand
tap_is "$(grep '^ExecStart=' "${UNIT:-/dev/null}" || true)" \
	'ExecStart=/usr/bin/received-orders-feeder $FEEDER_OPTS' \
	"the installed unit ${UNIT:-(none)} starts the packaged program"
out=$(systemd-analyze verify "${UNIT:-/nonexistent.service}" 2>&1) || out="exit $?: $out"
tap_is "$out" "" "systemd-analyze verify passes on the installed unit without any warning"
tap_is "$(systemctl is-enabled received-orders-feeder.service 2>&1 || true)" disabled \
	"the install does not enable the unit"
out=
for exe in /proc/[0-9]*/exe; do
	if [[ $(readlink "$exe" 2>/dev/null) == /usr/bin/received-orders-feeder ]]; then
		out+=" ${exe//[^0-9]/}"
	fi
done
tap_is "${out# }" "" "the install starts no /usr/bin/received-orders-feeder"
tap_is "$(stat -c '%a %U' /etc/received-orders-feeder/feeder.env.example 2>&1):$(
	dpkg-query -W -f '${Conffiles}' "$FEEDER_PKG" | awk '{ print $1 }' | xargs)" \
	"644 root:/etc/received-orders-feeder/feeder.env.example" \
	"the environment file example is a conffile under /etc/received-orders-feeder"

# --- purge --------------------------------------------------------------------------

dpkg -L "${PACKAGES[@]}" | sort -u >"$WORK/files"
status=0
purge_packages || status=$?
tap_ok "$status" "apt-get purge removes both packages"
tap_last_ok || tap_diag "$(tail -n 20 "$WORK/purge.log")"

left=
while read -r path; do
	if [[ $path == /. ]] || [[ ! -e $path && ! -L $path ]]; then
		continue
	fi
	# a directory another package owns, such as /usr/bin (or /lib, a
	# symbolic link to /usr/lib), stays
	[[ -d $path && -n $(owner "$path") ]] && continue
	left+=" $path"
done <"$WORK/files"
left+=$(find /var/lib/systemd/deb-systemd-helper-enabled /var/lib/systemd/deb-systemd-helper-masked \
	-name 'received-orders-feeder*' -printf ' %p' 2>/dev/null || true)
tap_is "${left# }" "" "nothing the packages installed is left ($(wc -l <"$WORK/files") paths checked)"

states=
for pkg in "${PACKAGES[@]}"; do
	states+="$pkg:$(dpkg-query -W -f '${db:Status-Abbrev}' "$pkg" 2>/dev/null | xargs || true) "
done
installed=$(grep -oE '[^ ]+:[ic][^ ]*' <<<"$states" || true)
tap_is "$installed" "" "dpkg has neither package installed nor its configuration files ($states)"

# --- back to the source install -------------------------------------------------------

status=0
restore_source_install || status=$?
[[ -f $EXTDIR/received_orders.control && -x /usr/local/bin/received-orders-feeder ]] || status=1
tap_ok "$status" "make install puts the source-built extension and feeder back for the later suites"
tap_last_ok || tap_diag "$(tail -n 20 "$WORK/make-install.log")"

tap_done
