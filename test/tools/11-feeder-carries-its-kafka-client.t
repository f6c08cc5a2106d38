#!/bin/bash
# test/tools/11-feeder-carries-its-kafka-client.t — the feeder and the tools
# carry the pinned librdkafka (tools/build-librdkafka), linked statically,
# with every feature the feeder's users need built in; and the client's
# floor refuses an older librdkafka at compile time.
#
# Checks the built programs of this tree (RO_FEEDER_BIN or feeder/, and
# tools/): the version they report, that no librdkafka shared library is
# loaded (the system's 2.0.2 would be), that `-X list` reports the features
# SCRAM, OAUTHBEARER with OIDC, GSSAPI, TLS, zstd and lz4 need, that the
# Kafka client's own dependencies are Debian's shared libraries; then
# compiles feeder/kafka_version.h against a librdkafka header of Debian 12's
# version (2.0.2) first on the include path: it must stop with the floor's
# message.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

tap_plan 9

FEEDER=$(ro_feeder_bin)
DEV_KAFKA=$RO_ROOT/tools/ro-dev-kafka
[[ -x $FEEDER && -x $DEV_KAFKA ]] || tap_bail "the feeder and the tools are not built (make)"
PINNED=$(sed -n 's/^RDKAFKA_VERSION=//p' "$RO_ROOT/tools/build-librdkafka")
[[ -n $PINNED ]] || tap_bail "no RDKAFKA_VERSION in tools/build-librdkafka"

# 1-2: the version and the static link
tap_like "$("$FEEDER" --version)" "\\(librdkafka $PINNED, " "the feeder reports the pinned librdkafka $PINNED"
libs=$(ldd "$FEEDER" "$DEV_KAFKA")
tap_ok "$([[ $libs != *librdkafka* ]] && echo 0 || echo 1)" \
	"neither the feeder nor ro-dev-kafka loads a librdkafka shared library (linked statically)"

# 3-5: its features
features=$("$FEEDER" -X list | sed -n 's/^builtin.features *| [^|]*| [^|]*| \([^|]*\)|.*/\1/p')
for want in ssl sasl_gssapi sasl_plain sasl_scram sasl_oauthbearer oidc zstd lz4; do
	[[ ", $features" == *", $want,"* || ", $features" == *", $want "* ]] || missing+=" $want"
done
tap_is "${missing:-}" "" "builtin.features has TLS, GSSAPI, PLAIN, SCRAM, OAUTHBEARER, OIDC, zstd and lz4 ($features)"
tap_like "$libs" "libssl\\.so\\.3.*libsasl2\\.so\\.2|libsasl2\\.so\\.2.*libssl\\.so\\.3" \
	"OpenSSL and Cyrus SASL stay Debian's shared libraries"
tap_like "$libs" "libcurl\\.so\\.4" "libcurl (OIDC's token requests) stays Debian's shared library"

# 6-7: the licences travel with the build
prefix=$("$RO_ROOT/tools/build-librdkafka" --prefix)
tap_ok "$([[ -n $prefix && -s $prefix/share/doc/librdkafka/LICENSE && -s $prefix/share/doc/librdkafka/LICENSES.txt ]] && echo 0 || echo 1)" \
	"the build keeps librdkafka's licence and those of what it bundles"
tap_like "$(cat "$prefix/.ro-built" 2>/dev/null)" "librdkafka_${PINNED}\\.orig\\.tar\\.gz \\(SHA-256 [0-9a-f]{64}\\)" \
	"the build's stamp names the verified tarball"

# 8-9: the floor, against a librdkafka header of Debian 12's version
# (2.0.2, RD_KAFKA_VERSION 0x020002ff) found first on the include path
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-rdkafka-floor.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"
mkdir -p "$WORK/librdkafka"
cat >"$WORK/librdkafka/rdkafka.h" <<'EOS'
#define RD_KAFKA_VERSION 0x020002ff
int rd_kafka_version(void);
EOS
status=0
out=$(echo '#include "kafka_version.h"' |
	cc -fsyntax-only -I "$WORK" -I "$RO_ROOT/feeder" -x c - 2>&1) || status=$?
tap_ok "$([[ $status != 0 ]] && echo 0 || echo 1)" "the feeder does not compile against a librdkafka 2.0.2 header"
tap_like "$out" "older than 2\\.12\\.0.*tools/build-librdkafka" "the error names the floor and the bundled client"

tap_done
