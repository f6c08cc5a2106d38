#!/bin/bash
# 02-soak-apache.t — the random-fault soak of test/soak/run on a real Apache
# Kafka cluster (--kafka apache, three KRaft nodes of test/lib/apache_kafka.sh),
# short and with a fixed seed (make soak SOAK_KAFKA=apache runs it for 600
# s): kill -9 of a feeder, kill -9 of a Kafka node and a leader move of
# every partition, each at least once; nothing lost, doubled or stored
# wrong, no offset committed in Kafka ahead of the database, the feeders
# still running.  (The rolling restart is left to the long run and to
# test/kafka-real/r06: it alone takes a minute here.)
#
# A run without a verdict (no last line, or result=INVALID: a produced
# message not in Kafka) is run once more; a FAIL is never retried.

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "$0")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

SEED=20261205
KINDS=(kill9 brokerkill leadermove)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ro-soak-apache.XXXXXX")
chmod 755 "$TMP" # the clusters' owner (postgres, when root) goes through it
if [ "${RO_KEEP_TMP:-0}" = 1 ]; then
	tap_diag "keeping $TMP"
else
	ro_on_exit "rm -rf -- '$TMP'"
fi
tap_plan 8

# field LINE NAME — the value of NAME=VALUE in the soak's last line
field() {
	sed -nE "s/.* $2=([^ ]*).*/\\1/p" <<<"$1"
}

# soak — run the soak (the real cluster, the seed, the kinds); sets LINE
# (its last line) and STATUS
soak() {
	STATUS=0
	env TMPDIR="$TMP" SOAK_SECONDS=20 SOAK_SEED=$SEED SOAK_FAULTS="$(
		IFS=,
		echo "${KINDS[*]}"
	)" "$RO_ROOT/test/soak/run" --kafka apache >"$TMP/soak.out" 2>"$TMP/soak.err" </dev/null || STATUS=$?
	LINE=$(tail -n 1 "$TMP/soak.out")
	tap_diag "$LINE"
}

soak
if [ "$(field "$LINE" result)" = INVALID ] || ! grep -q '^soak: ' "$TMP/soak.out"; then
	tap_diag "no verdict: $(grep -v '^# ts=' "$TMP/soak.err" | grep -E 'INVALID|error:|FAIL' | head -n 3)" \
		"running the soak once more"
	soak
fi
tap_is "$STATUS" 0 "the soak on Apache Kafka with seed $SEED passes (exit 0)"
tap_last_ok || tap_diag "$(grep -v '^# ts=' "$TMP/soak.err" | tail -n 40)"
tap_like "$LINE" "^soak: seconds=[0-9]+ seed=$SEED faults=[a-z0-9:,]+ orders=[0-9]+ .* kafka=apache result=PASS$" \
	"its last line names the seed, the faults, the cluster and the result"
faults=$(field "$LINE" faults)
missing=
for kind in "${KINDS[@]}"; do
	[[ ,$faults, =~ ,$kind:[1-9][0-9]*, ]] || missing+=" $kind"
done
tap_is "${missing:-none}" none "every kind of fault was injected at least once ($faults)"
tap_is "$(field "$LINE" lost)" 0 "lost=0: every valid order stored, every bad message quarantined"
tap_is "$(field "$LINE" doubled)" 0 "doubled=0: no effect twice, none that no message should have"
tap_is "$(field "$LINE" wrong)" 0 "wrong=0: every order with its first delivery's externalReference"
tap_is "$(field "$LINE" acks_ahead)" 0 "acks_ahead=0: no committed offset ever ahead of the database's position"
tap_is "$(field "$LINE" caught_up) $(field "$LINE" feeders) $(field "$LINE" died)" "yes 4/4 0" \
	"caught up at every partition's end, the four feeders still run, none died on its own"
tap_done
