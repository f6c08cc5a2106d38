#!/bin/bash
# test/tools/14-paced-stream-starts-after-producer-id.t — a paced stream of
# ro-generate-events (--rate) stamps its first occurredAt only once the
# producer can send: after its idempotent producer id was assigned.
#
# librdkafka sends no message before the producer id, which it asks for on
# a timer of its own (every 500 ms until a broker is up): on Apache Kafka
# the first messages of a paced stream waited up to 0.5-1.5 s in the
# producer's queue with their occurredAt already set, and every latency
# benchmark measured from occurredAt counted the producer's start.  On the
# development Kafka, with librdkafka's debug log (eos): the time of the
# producer id's assignment ("GETPID ... Acquired PID") is not later
# than the earliest
# occurredAt of the stream read back with kcat; and the stream is whole.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/kafka.sh
. "$RO_ROOT/test/lib/kafka.sh"

tap_plan 3

GEN=${RO_GENERATE_EVENTS:-$RO_ROOT/tools/ro-generate-events}
[[ -x $GEN ]] || tap_bail "ro-generate-events not built (make -C tools)"
command -v kcat >/dev/null || tap_bail "kcat is not installed"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-paced-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"
ro_on_exit kafka_stop
kafka_start 1 paced:3 || tap_bail "the development Kafka did not start"

# 1: a paced stream of 40 events, librdkafka's eos debug log kept
status=0
"$GEN" --brokers "$KAFKA_BOOTSTRAP" --topic paced --count 40 --rate 200 \
	--redeliveries 0 --cross-partition 0 --divergent 0 --malformed 0 --tombstones 0 \
	-X linger.ms=0 -X debug=eos >"$WORK/account" 2>"$WORK/stderr" || status=$?
tap_is "$status $(sed -n 's/^produced=//p' "$WORK/account")" "0 40" \
	"the paced stream is delivered whole"

# 2: the producer id's assignment, from the debug log
# (%7|SECONDS.MS|GETPID|...: Acquired PID{...}); NEWPID lines come later,
# per partition at its first message
pid_ms=$(awk -F'|' '$3 == "GETPID" && /Acquired PID/ { split($2, t, "."); print t[1] t[2]; exit }' "$WORK/stderr")
tap_like "${pid_ms:-none}" '^[0-9]{13}$' "librdkafka's debug log gives the time of the producer id"

# 3: the earliest occurredAt of the stream, in milliseconds
first_ms=$(kcat -b "$KAFKA_BOOTSTRAP" -C -t paced -o beginning -e -q -f '%s\n' 2>/dev/null |
	sed -nE 's/.*"occurredAt":"([^"]+)".*/\1/p' | sort | head -n 1 |
	xargs -r -I{} date -u -d {} +%s%3N)
if [[ -n $pid_ms && -n $first_ms ]] && ((first_ms >= pid_ms)); then
	tap_ok 0 "the first occurredAt ($first_ms) is not before the producer id ($pid_ms)"
else
	tap_ok 1 "the first occurredAt (${first_ms:-none}) is not before the producer id (${pid_ms:-none})"
fi
tap_done
