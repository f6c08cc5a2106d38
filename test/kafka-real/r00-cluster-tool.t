#!/bin/bash
# r00-cluster-tool.t — tools/apache-kafka/run itself: `start 1 DIR` prints
# a bootstrap list that serves metadata (kcat -L) naming one broker, a
# topic can be created, produced to and read back; `stop DIR` stops the
# node by PID (no process left) and removes its data.  Its start time is
# shown as a diagnostic.  The JVM runs with the tests' fast-start flags
# (C1 only, SerialGC); `start 1 DIR --jvm-profile production` starts one
# with the flags of Kafka's own kafka-server-start.sh (1 GB heap, G1 with
# its 20 ms pause goal, C2) and a GC log it names, which the bench uses.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
export RO_ROOT
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/apache_kafka.sh
. "$RO_ROOT/test/lib/apache_kafka.sh"

DIR=$(mktemp -d "${TMPDIR:-/tmp}/ro-r00.XXXXXX")
ro_on_exit "'$RO_ROOT/tools/apache-kafka/run' stop '$DIR' >/dev/null 2>&1; rm -rf '$DIR'"
tap_plan 10

out=$("$RO_ROOT/tools/apache-kafka/run" start 1 "$DIR" 2>"$DIR/start.err")
tap_is "$?" 0 "tools/apache-kafka/run start 1 exits 0"
tap_last_ok || tap_diag "$(tail -n 20 "$DIR/start.err")"
bootstrap=$(sed -n 's/^bootstrap=//p' <<<"$out")
tap_diag "single node serving at $bootstrap after $(sed -n 's/^start_seconds=//p' <<<"$out") s"
tap_like "$bootstrap" '^127\.0\.0\.1:[0-9]+$' "it prints one loopback bootstrap address"
tap_like "$(kcat -b "$bootstrap" -L -m 10 2>&1)" ' 1 brokers:' "kcat -L through it names one broker"
ak_attach "$DIR"
pid=${AK_PIDS[1]}
cmdline=$(tr '\0' ' ' </proc/"$pid"/cmdline)
tap_like "$cmdline" 'UseSerialGC .*TieredStopAtLevel=1' "the node's JVM has the tests' fast-start flags"
ak_create_topic r00 1 && printf 'k\tv-r00\n' | kcat -b "$bootstrap" -P -t r00 -K $'\t'
tap_is "$(kcat -b "$bootstrap" -C -t r00 -o beginning -e -q -f '%k %s\n' 2>&1)" "k v-r00" \
	"a topic made by TopicCommand takes a message and gives it back"
"$RO_ROOT/tools/apache-kafka/run" stop "$DIR"
tap_ok "$(kill -0 "$pid" 2>/dev/null && echo 1 || echo 0)" "stop: the node's JVM (pid $pid) is gone"
tap_ok "$([ -d "$AK_DIR" ] && echo 1 || echo 0)" "stop: its data directory is removed"

out=$("$RO_ROOT/tools/apache-kafka/run" start 1 "$DIR" --jvm-profile production 2>"$DIR/start.err")
tap_is "$?" 0 "tools/apache-kafka/run start 1 --jvm-profile production exits 0"
tap_last_ok || tap_diag "$(tail -n 20 "$DIR/start.err")"
ak_attach "$DIR"
cmdline=$(tr '\0' ' ' </proc/"${AK_PIDS[1]}"/cmdline)
tap_ok "$([[ $cmdline == *'-Xmx1G -Xms1G -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 '* &&
	$cmdline != *TieredStopAtLevel* && $cmdline != *UseSerialGC* ]] && echo 0 || echo 1)" \
	"its JVM has kafka-server-start.sh's heap and kafka-run-class.sh's G1 flags, and C2"
gc_log=$(sed -n 's/^gc_log=//p' <<<"$out")
tap_ok "$([[ -s $gc_log ]] && grep -q 'Using G1' "$gc_log" && echo 0 || echo 1)" \
	"it prints the GC log it writes (${gc_log:-none}), which says G1"
"$RO_ROOT/tools/apache-kafka/run" stop "$DIR"
tap_done
