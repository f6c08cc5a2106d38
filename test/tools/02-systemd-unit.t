#!/bin/bash
# test/tools/02-systemd-unit.t — deploy/received-orders-feeder.service is a
# valid, hardened unit that agrees with the feeder it starts.
#
# `systemd-analyze verify` must pass without a single warning (an unknown
# or misspelled directive is only a warning there), the offline security
# assessment must stay at "OK" exposure, the restart policy must spare the
# feeder's configuration exit codes (read from feeder/feeder.h), and the
# environment file example must name exactly the variables the feeder
# reads (read from feeder/config_options.h).  systemd is part of Debian 12 (the
# `systemd` package); this test installs nothing and fails without it.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

UNIT=$RO_ROOT/deploy/received-orders-feeder.service
ENV_EXAMPLE=$RO_ROOT/deploy/received-orders-feeder.env.example
INSTALLED=/usr/local/bin/received-orders-feeder

tap_plan 7

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-unit-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"

# verify checks that ExecStart's program exists: use the installed feeder,
# else point a copy of the unit at the one built in the tree
mkdir -p "$WORK/unit" "$WORK/credentials"
if [[ -x $INSTALLED ]]; then
	cp "$UNIT" "$WORK/unit/"
elif [[ -x $RO_ROOT/feeder/received-orders-feeder ]]; then
	tap_diag "$INSTALLED not installed; verifying a copy that runs $RO_ROOT/feeder/received-orders-feeder"
	sed "s|^ExecStart=$INSTALLED|ExecStart=$RO_ROOT/feeder/received-orders-feeder|" \
		"$UNIT" >"$WORK/unit/received-orders-feeder.service"
else
	tap_bail "no received-orders-feeder binary (make, make install)"
fi
# the same unit with its optional credential lines enabled
sed 's/^#\(LoadCredential=\|Environment=\)/\1/' "$WORK/unit/received-orders-feeder.service" \
	>"$WORK/credentials/received-orders-feeder.service"

if ! command -v systemd-analyze >/dev/null; then
	tap_ok 1 "systemd-analyze is available (Debian package systemd)"
	tap_ok 1 "systemd-analyze verify passes without any warning (no systemd-analyze)"
	tap_ok 1 "the unit with its credential lines enabled verifies (no systemd-analyze)"
	tap_ok 1 "the unit's security exposure is at most 2.0 (no systemd-analyze)"
else
	tap_ok 0 "systemd-analyze is available (Debian package systemd)"
	out=$(cd "$WORK/unit" && systemd-analyze verify received-orders-feeder.service 2>&1) || out="exit $?: $out"
	tap_is "$out" "" "systemd-analyze verify passes without any warning"
	out=$(cd "$WORK/credentials" && systemd-analyze verify received-orders-feeder.service 2>&1) || out="exit $?: $out"
	tap_is "$out" "" "the unit with its credential lines enabled verifies too"
	status=0
	out=$(systemd-analyze security --offline=yes --threshold=20 \
		"$WORK/unit/received-orders-feeder.service" 2>&1) || status=$?
	tap_ok "$status" "the unit's security exposure is at most 2.0 ($(tail -n 1 <<<"$out" | sed 's/.*: //'))"
fi

# the hardening the deployment promises, directive by directive
missing=
for want in DynamicUser=yes NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes \
	PrivateTmp=yes PrivateDevices=yes ProtectKernelTunables=yes ProtectKernelModules=yes \
	ProtectKernelLogs=yes "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX" \
	LockPersonality=yes MemoryDenyWriteExecute=yes SystemCallFilter=@system-service \
	Restart=on-failure KillSignal=SIGTERM TimeoutStopSec=30 \
	EnvironmentFile=-/etc/received-orders-feeder/feeder.env; do
	grep -qxF "$want" "$UNIT" || missing+=" $want"
done
tap_is "${missing# }" "" "the unit sets every promised hardening and lifecycle directive"

# no restart on the feeder's configuration exit codes, nor on a position
# out of range (restarting would stop again; an operator decides)
codes=$(awk '$1 == "#define" && $2 ~ /^FEEDER_EXIT_(USAGE|DATABASE|KAFKA|POSITIONS)$/ { print $3 }' \
	"$RO_ROOT/feeder/feeder.h" | sort -n | xargs)
tap_is "$(sed -n 's/^RestartPreventExitStatus=//p' "$UNIT" | tr ' ' '\n' | sort -n | xargs)" \
	"$codes" "RestartPreventExitStatus lists the feeder's configuration exit codes ($codes)"

# the env example names what the feeder reads (FEEDER_OPTS belongs to the unit)
read_by_feeder=$(sed -n 's/^#define[[:space:]]\{1,\}CONFIG_ENV_[A-Z_]\{1,\}[[:space:]]\{1,\}"\([A-Z_]*\)".*/\1/p' \
	"$RO_ROOT/feeder/config_options.h" | sort | xargs)
in_example=$(sed -n 's/^#\{0,1\}\(FEEDER_[A-Z_]*\)=.*/\1/p' "$ENV_EXAMPLE" | grep -vx FEEDER_OPTS |
	sort -u | xargs)
tap_is "$in_example" "$read_by_feeder" "the env example names exactly the feeder's environment variables"

tap_done
