#!/bin/bash
# test/tools/12-debian-13-root.t — the Debian 13 root the suites run
# PostgreSQL 17 in (tools/build-trixie-root) is what its stamp says, is
# entered with only what a run needs, and leaves nothing mounted.
#
# Makes the root when it is not made (about 3 minutes) or reuses it, then
# checks inside it, through test/lib/debian_root.sh: trixie's release,
# PostgreSQL 17 with its server headers and pgTAP, gcc 14, the postgres
# user the harness runs servers as, no cluster made by the postinsts, a
# policy-rc.d that starts no service; that /proc, /dev/shm and this
# machine's 127.0.0.1 serve inside while the caller's environment does not
# leak in; that no mount of a run is seen outside it, during the run or
# after it (also after the run's shell is killed with SIGKILL); and that a
# stamp naming another package list is not taken for current (the root
# would be made again), against a copy of the stamp in a cache of its own.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/debian_root.sh
. "$RO_ROOT/test/lib/debian_root.sh"

[[ $EUID == 0 ]] || { echo "1..0 # SKIP debootstrap and chroot need root"; exit 0; }
tap_plan 11

ROOT=$("$RO_ROOT/tools/build-trixie-root" </dev/null) || tap_bail "tools/build-trixie-root failed"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-trixie-root.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"

# 1-4: what the root holds
tap_is "$(dr_run "$ROOT" -- /bin/sh -c '. /etc/os-release && echo "$VERSION_CODENAME"')" trixie \
	"the root is Debian 13 (trixie)"
tap_like "$(dr_run "$ROOT" -- /usr/lib/postgresql/17/bin/pg_config --version) $(dr_run "$ROOT" -- \
	/bin/sh -c 'test -f "$(/usr/lib/postgresql/17/bin/pg_config --includedir-server)/postgres.h" &&
		test -f /usr/share/postgresql/17/extension/pgtap.control && echo headers-and-pgtap')" \
	"^PostgreSQL 17\\.[0-9]+ .*headers-and-pgtap$" \
	"trixie's PostgreSQL 17 with its server headers and pgTAP"
tap_like "$(dr_run "$ROOT" -- gcc -dumpfullversion)" "^14\\." "gcc is trixie's 14"
tap_is "$(dr_run "$ROOT" -- /bin/sh -c 'id -un postgres; ls /etc/postgresql 2>/dev/null | wc -l;
	/usr/sbin/policy-rc.d; echo $?')" "$(printf 'postgres\n0\n101')" \
	"the postgres user exists, no cluster was made, policy-rc.d refuses every service start"

# 5-6: what a run sees inside, and what it does not
tap_is "$(PG_CONFIG=/nonexistent RO_LEAK=1 dr_run "$ROOT" -- SEEN=yes /bin/sh -c \
	'echo "${PG_CONFIG:-none} ${RO_LEAK:-none} $SEEN $HOME"')" "none none yes /root" \
	"the caller's environment does not reach inside; the VAR=VALUE words given do"
port=$(ro_free_port)
python3 -m http.server --bind 127.0.0.1 "$port" --directory "$WORK" >/dev/null 2>&1 &
server=$!
ro_on_exit "kill $server 2>/dev/null || true"
ro_wait_until 10 bash -c "echo >/dev/tcp/127.0.0.1/$port" 2>/dev/null || true
tap_is "$(dr_run "$ROOT" -- /bin/sh -c "head -c 4 /proc/self/status; echo x >/dev/shm/ro-\$\$ && rm /dev/shm/ro-\$\$ && echo ' shm';
	curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$port/")" "Name shm
200" "/proc and /dev/shm work inside, and this machine's 127.0.0.1 answers there"
kill "$server" 2>/dev/null || true
wait "$server" 2>/dev/null || true

# 7-9: the mounts stay the run's own
dr_run "$ROOT" --bind "$WORK" -- /bin/sh -c "echo \$\$ >'$WORK/sleeper'; findmnt -rn -o TARGET >'$WORK/inside'; exec sleep 30" &
run=$!
ro_wait_until 10 test -s "$WORK/inside" || true
tap_like "$(tr '\n' ' ' <"$WORK/inside")" "(^| )/proc .*/dev/pts .*/dev/shm .*$WORK " \
	"inside, /proc, /dev, /dev/pts, /dev/shm and the work directory are mounted"
tap_is "$(dr_mounts_under "$ROOT")" "" "while the run goes on, none of its mounts is seen outside"
kill -KILL "$run" 2>/dev/null || true
wait "$run" 2>/dev/null || true
# the sleep inside outlives the run's shell: its PID is this machine's;
# the killed run left its empty mount point inside the root
kill "$(cat "$WORK/sleeper")" 2>/dev/null || true
ro_on_exit "rmdir '$ROOT$WORK' 2>/dev/null || true"
tap_is "$(dr_mounts_under "$ROOT"; findmnt -rn -o TARGET | grep -c "$ROOT" || true)" "0" \
	"after the run's shell is killed with SIGKILL nothing is left mounted under the root"

# 10-11: the stamp decides whether the root is current, against a cache of
# its own holding a copy of the stamp (the real root is not touched)
mkdir -p "$WORK/cache/trixie-root/usr/lib/postgresql/17/bin"
install -m 755 /dev/null "$WORK/cache/trixie-root/usr/lib/postgresql/17/bin/pg_config"
cp "$ROOT/.ro-built" "$WORK/cache/trixie-root/.ro-built"
tap_is "$(RO_PG_CACHE=$WORK/cache "$RO_ROOT/tools/build-trixie-root" --print)" "$WORK/cache/trixie-root" \
	"a root whose stamp names the tool's package list is current"
sed -i 's/^packages /packages pgbouncer /' "$WORK/cache/trixie-root/.ro-built"
tap_is "$(RO_PG_CACHE=$WORK/cache "$RO_ROOT/tools/build-trixie-root" --print)" "" \
	"a root made of another package list is not current: it would be made again"

tap_done
