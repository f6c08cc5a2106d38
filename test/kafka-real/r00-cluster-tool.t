#!/bin/bash
# r00-cluster-tool.t — tools/apache-kafka/run itself: `start 1 DIR` prints
# a bootstrap list that serves metadata (kcat -L) naming one broker, a
# topic can be created, produced to and read back; `stop DIR` stops the
# node by PID (no process left) and removes its data.  Its start time is
# shown as a diagnostic.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
export RO_ROOT
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/apache_kafka.sh
. "$RO_ROOT/test/lib/apache_kafka.sh"

DIR=$(mktemp -d "${TMPDIR:-/tmp}/ro-r00.XXXXXX")
ro_on_exit "'$RO_ROOT/tools/apache-kafka/run' stop '$DIR' >/dev/null 2>&1; rm -rf '$DIR'"
tap_plan 6

out=$("$RO_ROOT/tools/apache-kafka/run" start 1 "$DIR" 2>"$DIR/start.err")
tap_is "$?" 0 "tools/apache-kafka/run start 1 exits 0"
tap_last_ok || tap_diag "$(tail -n 20 "$DIR/start.err")"
bootstrap=$(sed -n 's/^bootstrap=//p' <<<"$out")
tap_diag "single node serving at $bootstrap after $(sed -n 's/^start_seconds=//p' <<<"$out") s"
tap_like "$bootstrap" '^127\.0\.0\.1:[0-9]+$' "it prints one loopback bootstrap address"
tap_like "$(kcat -b "$bootstrap" -L -m 10 2>&1)" ' 1 brokers:' "kcat -L through it names one broker"
ak_attach "$DIR"
pid=${AK_PIDS[1]}
ak_create_topic r00 1 && printf 'k\tv-r00\n' | kcat -b "$bootstrap" -P -t r00 -K $'\t'
tap_is "$(kcat -b "$bootstrap" -C -t r00 -o beginning -e -q -f '%k %s\n' 2>&1)" "k v-r00" \
	"a topic made by TopicCommand takes a message and gives it back"
"$RO_ROOT/tools/apache-kafka/run" stop "$DIR"
tap_ok "$(kill -0 "$pid" 2>/dev/null && echo 1 || echo 0)" "stop: the node's JVM (pid $pid) is gone"
tap_ok "$([ -d "$AK_DIR" ] && echo 1 || echo 0)" "stop: its data directory is removed"
tap_done
