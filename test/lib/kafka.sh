# test/lib/kafka.sh — start, steer and query the development Kafka
#
# Sourced by suites (bash).  Runs tools/ro-dev-kafka (librdkafka's mock
# cluster) in the background with a control FIFO, and wraps kcat and
# ro-dev-kafka's query modes.  Needs test/lib/common.sh sourced first
# (pg.sh sources it).  Functions:
#
#   kafka_start BROKERS TOPIC:PARTITIONS [...]   start; exports KAFKA_BOOTSTRAP
#                                                (cluster id $KAFKA_CLUSTER_ID, by
#                                                default ro-dev-kafka's own,
#                                                "ro-dev-kafka": the same
#                                                after a restart; an empty
#                                                group's first join held
#                                                $KAFKA_INITIAL_REBALANCE_DELAY_MS,
#                                                by default 0)
#   kafka_broker_down ID / kafka_broker_up ID    (-1 = every broker)
#   kafka_command "LINE"                         any control command, waits for "ok"
#                                                (e.g. "leader TOPIC PARTITION ID",
#                                                "coordinator group GROUP ID")
#   kafka_stop                                   stop the cluster started here (by PID)
#   kafka_produce TOPIC [PARTITION]              stdin lines "KEY<TAB>VALUE"; empty
#                                                VALUE = NULL (tombstone), empty KEY = NULL
#   kafka_produce_file TOPIC PARTITION KEY FILE  one message whose value is FILE's bytes
#   kafka_end_offsets TOPIC                      "TOPIC PARTITION LOW HIGH" lines
#   kafka_committed GROUP TOPIC                  "TOPIC PARTITION COMMITTED HIGH" lines
#                                                (COMMITTED is -1 when none)
#                                                Both fail (status 1) when a partition's
#                                                watermarks cannot be read (its leader
#                                                down or none: 10 s at most each), and
#                                                still print the other partitions (and,
#                                                for kafka_committed, that one with HIGH -1)
#   kafka_caught_up GROUP TOPIC                  true when every partition's committed
#                                                offset equals its high watermark
#                                                (empty partitions need none)
#   kafka_wait_caught_up GROUP TOPIC [SECONDS]   poll kafka_caught_up (default 60 s)
#   kafka_offsets_map TOPIC                      "PARTITION OFFSET KEY" per message
#
# Binary: $RO_DEV_KAFKA, else $RO_ROOT/tools/ro-dev-kafka, else PATH.
# Traits of the mock cluster (librdkafka 2.0.2): about 5 MiB kept per
# partition, older messages dropped silently, a whole message set (what one
# kcat call sent in one batch) at a time, which raises the partition's low
# watermark (kafka_end_offsets shows it); "down" keeps leadership where it
# was; a member leaving a group is dropped only at its session timeout.

KAFKA_PID=
KAFKA_DIR=
KAFKA_BOOTSTRAP=

# kafka__bin — path of the ro-dev-kafka binary
kafka__bin() {
	if [ -n "${RO_DEV_KAFKA:-}" ]; then
		printf '%s\n' "$RO_DEV_KAFKA"
	elif [ -n "${RO_ROOT:-}" ] && [ -x "$RO_ROOT/tools/ro-dev-kafka" ]; then
		printf '%s\n' "$RO_ROOT/tools/ro-dev-kafka"
	else
		command -v ro-dev-kafka || printf '%s\n' ro-dev-kafka
	fi
}

# kafka__log — diagnostics on stderr, TAP-safe
kafka__log() {
	printf '# kafka: %s\n' "$*" >&2
}

# kafka_start BROKERS TOPIC:PARTITIONS [...] — start the cluster in the
# background, wait (30 s at most) for its bootstrap file, export KAFKA_BOOTSTRAP
kafka_start() {
	local brokers=$1 bin args=() t i
	shift
	bin=$(kafka__bin)
	for t in "$@"; do
		args+=(--topic "$t")
	done
	KAFKA_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ro-dev-kafka.XXXXXX") || return 1
	mkfifo "$KAFKA_DIR/control" || return 1
	"$bin" --brokers "$brokers" "${args[@]}" \
		${KAFKA_CLUSTER_ID:+--cluster-id "$KAFKA_CLUSTER_ID"} \
		${KAFKA_INITIAL_REBALANCE_DELAY_MS:+--initial-rebalance-delay "$KAFKA_INITIAL_REBALANCE_DELAY_MS"} \
		--bootstrap-file "$KAFKA_DIR/bootstrap" \
		--control "$KAFKA_DIR/control" \
		>"$KAFKA_DIR/stdout" 2>"$KAFKA_DIR/stderr" </dev/null &
	KAFKA_PID=$!
	for ((i = 0; i < 300; i++)); do
		if [ -s "$KAFKA_DIR/bootstrap" ]; then
			KAFKA_BOOTSTRAP=$(sed -n 's/^bootstrap=//p' "$KAFKA_DIR/bootstrap")
			export KAFKA_BOOTSTRAP
			return 0
		fi
		if ! kill -0 "$KAFKA_PID" 2>/dev/null; then
			kafka__log "ro-dev-kafka exited early: $(cat "$KAFKA_DIR/stderr")"
			KAFKA_PID=
			return 1
		fi
		sleep 0.1
	done
	kafka__log "no bootstrap list after 30 s"
	return 1
}

# kafka_command LINE — send one control command, wait (10 s at most) for
# its answer; succeed only on "ok"
kafka_command() {
	local line=$1 before after answer i
	[ -n "$KAFKA_PID" ] || { kafka__log "not running"; return 1; }
	before=$(grep -vc '^bootstrap=' "$KAFKA_DIR/stdout")
	# the daemon holds the FIFO open read-write, so this cannot block long
	# unless it is gone: bound it anyway
	timeout 5 bash -c 'printf "%s\n" "$1" >"$2"' _ "$line" "$KAFKA_DIR/control" || {
		kafka__log "could not send \"$line\""
		return 1
	}
	for ((i = 0; i < 100; i++)); do
		after=$(grep -vc '^bootstrap=' "$KAFKA_DIR/stdout")
		if [ "$after" -gt "$before" ]; then
			answer=$(grep -v '^bootstrap=' "$KAFKA_DIR/stdout" | sed -n "$((before + 1))p")
			[ "$answer" = ok ] && return 0
			kafka__log "\"$line\": $answer"
			return 1
		fi
		sleep 0.1
	done
	kafka__log "no answer to \"$line\""
	return 1
}

# kafka_broker_down ID — refuse connections on broker ID (-1: all)
kafka_broker_down() {
	kafka_command "down $1"
}

# kafka_broker_up ID — accept connections again on broker ID (-1: all)
kafka_broker_up() {
	kafka_command "up $1"
}

# kafka_stop — stop the cluster started by kafka_start, by its PID
kafka_stop() {
	local i
	if [ -n "$KAFKA_PID" ] && kill -0 "$KAFKA_PID" 2>/dev/null; then
		kill -TERM "$KAFKA_PID" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$KAFKA_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$KAFKA_PID" 2>/dev/null && kill -KILL "$KAFKA_PID" 2>/dev/null
		wait "$KAFKA_PID" 2>/dev/null
	fi
	KAFKA_PID=
	[ -n "$KAFKA_DIR" ] && rm -rf "$KAFKA_DIR"
	KAFKA_DIR=
	return 0
}

# kafka_produce TOPIC [PARTITION] — produce stdin lines "KEY<TAB>VALUE"
# (split at the first tab); empty VALUE is sent as NULL (a tombstone),
# empty KEY as a NULL key; values must not contain newlines
kafka_produce() {
	local topic=$1 part=()
	[ $# -ge 2 ] && part=(-p "$2")
	kcat -b "$KAFKA_BOOTSTRAP" -P -t "$topic" "${part[@]}" -K $'\t' -Z \
		-X message.max.bytes=2000000
}

# kafka_produce_file TOPIC PARTITION KEY FILE — one message with FILE's
# bytes as value (binary and large values)
kafka_produce_file() {
	kcat -b "$KAFKA_BOOTSTRAP" -P -t "$1" -p "$2" -k "$3" \
		-X message.max.bytes=2000000 "$4"
}

# kafka_end_offsets TOPIC — "TOPIC PARTITION LOW HIGH" per partition
kafka_end_offsets() {
	"$(kafka__bin)" --end-offsets --bootstrap "$KAFKA_BOOTSTRAP" --topic "$1"
}

# kafka_committed GROUP TOPIC — "TOPIC PARTITION COMMITTED HIGH" per partition
kafka_committed() {
	"$(kafka__bin)" --committed --bootstrap "$KAFKA_BOOTSTRAP" --group "$1" --topic "$2"
}

# kafka_caught_up GROUP TOPIC — every partition committed up to its end
# (an empty partition needs no commit)
kafka_caught_up() {
	local out
	out=$(kafka_committed "$1" "$2" 2>/dev/null) || return 1
	[ -n "$out" ] || return 1
	awk '$3 != $4 && !($3 == -1 && $4 == 0) { bad = 1 } END { exit bad }' <<<"$out"
}

# kafka_wait_caught_up GROUP TOPIC [SECONDS] — poll until caught up
kafka_wait_caught_up() {
	ro_wait_until "${3:-60}" kafka_caught_up "$1" "$2" && return 0
	kafka__log "group $1 not caught up on $2: $(kafka_committed "$1" "$2" 2>&1 | tr '\n' ';')"
	return 1
}

# kafka_offsets_map TOPIC — "PARTITION OFFSET KEY" for every stored message
# (keys must be printable and without spaces)
kafka_offsets_map() {
	kcat -b "$KAFKA_BOOTSTRAP" -C -t "$1" -o beginning -e -q \
		-f '%p %o %k\n' -X fetch.message.max.bytes=2000000
}
