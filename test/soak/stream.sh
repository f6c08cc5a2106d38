# test/soak/stream.sh — the soak's stream (test/soak/run): its topics, the
# generators of its plain and outbox messages, the background producer and
# its pause while the brokers are down, and the soak's random sequence.
#
# Sourced (bash) after test/e2e/lib.sh, whose manifest, msg, flush and
# mixed_stream it uses.  Functions: rnd, rnd_sleep (the sequence), producer
# SEED RATE (the background producer), producer_hold (its side of the
# pause); the rest are the producer's.
#
# The stream, produced in chunks of one second and recorded in the manifest
# of test/e2e/lib.sh (the ledger the end state is computed from): the mixed
# stream of test/e2e/lib.sh on every partition (orders, redeliveries,
# divergent duplicates on the same partition, so the first delivery is the
# earlier offset, malformed JSON, tombstones), plus per chunk the same order
# again on another partition, invalid UTF-8, and in a chunk of four a
# divergent duplicate on two partitions (a race: which one is first is not
# defined, so one row holds one of the references and the other is a
# conflict, as check_races has it).  The outbox topic: OrderReceived in
# the three shapes of JsonConverter, redeliveries, divergent duplicates,
# broken envelopes, tombstones, OrderPaid events (skipped) and events
# without a type header.  Each partition gets at most 20,000 events (the
# mock cluster keeps about 5 MiB per partition; the end check reads every
# message back).
# shellcheck shell=bash

ORDERS_TOPIC=soak.orders
ORDERS_PARTITIONS=8
OUTBOX_TOPIC=outbox.event.Order
OUTBOX_PARTITIONS=2
MAX_PER_PARTITION=20000
OUTBOX_BASE=50000000
RACE_BASE=90000000

# rnd N — the next number of the sequence in SOAK_RNG (the driver's for the
# faults, the producer's for the stream), in 0..N-1: a linear congruential
# generator of its own, so that nothing else drawing from $RANDOM (the
# libraries, bash's subshells) shifts the sequence of a seed
rnd() {
	SOAK_RNG=$(((SOAK_RNG * 1103515245 + 12345) % 2147483648))
	R=$(((SOAK_RNG >> 8) % $1))
}

# rnd_sleep MIN MAX — sleep between MIN and MAX seconds, by tenths
rnd_sleep() {
	rnd $((($2 - $1) * 10 + 1))
	sleep "$(awk -v a="$1" -v r="$R" 'BEGIN { printf "%.1f", a + r / 10 }')"
}

# omsg GROUP PARTITION LABEL KIND ORDER_NO REF SQLSTATE VALUE — like msg of
# test/e2e/lib.sh, for the outbox topic: queued by header GROUP (H: type
# OrderReceived, P: type OrderPaid, N: no type header), since kcat gives one
# set of headers to everything it produces at once
omsg() {
	local group=$1 p=$2 label=$3 kind=$4 no=$5 ref=$6 state=$7 value=$8 id=-
	[ "$no" != - ] && printf -v id '00000000-0000-4000-8000-%012d' "$no"
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$label" "$p" "$kind" "$id" "$ref" "$state" >>"$E2E_MANIFEST"
	printf '%s\t%s\n' "$label" "$value" >>"$E2E_TMP/oq.$p.$group"
}

# outbox_value N REF SHAPE — an OrderReceived as Debezium's router sends it
# through JsonConverter: SHAPE 0 the payload column expanded, 1 the payload
# as a JSON string, 2 under {"schema", "payload"} (schemas.enable=true)
outbox_value() {
	local e
	e=$(event "$1" "$2")
	case $3 in
	0) printf '%s' "$e" ;;
	1) printf '"%s"' "${e//\"/\\\"}" ;;
	2) printf '{"schema":{"type":"string","optional":true},"payload":"%s"}' "${e//\"/\\\"}" ;;
	esac
}

# outbox_stream PARTITION FIRST LAST — messages FIRST..LAST of an outbox
# partition, kinds as in mixed_stream, order numbers OUTBOX_BASE +
# PARTITION * 1000000 + I
outbox_stream() {
	local p=$1 base=$((OUTBOX_BASE + $1 * 1000000)) i n e
	for ((i = $2; i <= $3; i++)); do
		n=$((base + i))
		mixed_kind $i
		case $MIXED_KIND in
		reject)
			if ((i % 2)); then
				omsg H "$p" "x$n-bad" reject - - 22023 '{"schema":{"type":"string","optional":true}}'
			else
				omsg H "$p" "x$n-bad" reject - - 22P02 '{"schema":{"type":"string"},"payload":"{\"orderId\": oops"}'
			fi ;;
		conflict)
			mixed_earlier_order $i
			e=$((base + MIXED_EARLIER))
			omsg H "$p" "x$e-divergent-$n" conflict "$e" "OTHER-$e" - "$(outbox_value "$e" "OTHER-$e" $((i % 3)))" ;;
		dup)
			mixed_earlier_order $i
			e=$((base + MIXED_EARLIER))
			omsg H "$p" "x$e-redelivered-$n" dup "$e" "EXT-$e" - "$(outbox_value "$e" "EXT-$e" $((MIXED_EARLIER % 3)))" ;;
		tomb)
			omsg H "$p" "x$n-tomb" tomb - - - '' ;;
		insert)
			omsg H "$p" "x$n" insert "$n" "EXT-$n" - "$(outbox_value "$n" "EXT-$n" $((i % 3)))"
			if ((i % 13 == 0)); then
				omsg P "$p" "x$n-paid" skip "$n" - - "{\"orderId\":\"$(uid "$n")\",\"paidAt\":\"2026-12-04T10:00:00Z\"}"
			fi
			if ((i % 101 == 0)); then
				omsg N "$p" "x$n-untyped" reject - - 22023 "$(event $((n + 500000)) "EXT-$((n + 500000))")"
			fi ;;
		esac
	done
}

# outbox_flush — produce the queued outbox messages, by partition and by
# header group (H, then P, then N: only H holds messages that depend on
# each other's order), with the soak's SOAK_KCAT_ARGS
outbox_flush() {
	local p group q headers status=0
	for ((p = 0; p < OUTBOX_PARTITIONS; p++)); do
		for group in H P N; do
			q=$E2E_TMP/oq.$p.$group
			[ -f "$q" ] || continue
			case $group in
			H) headers=(-H eventType=OrderReceived) ;;
			P) headers=(-H eventType=OrderPaid) ;;
			N) headers=() ;;
			esac
			if kcat -b "$KAFKA_BOOTSTRAP" -P -t "$OUTBOX_TOPIC" -p "$p" -K $'\t' -Z "${headers[@]}" \
				${SOAK_KCAT_ARGS[@]+"${SOAK_KCAT_ARGS[@]}"} <"$q"; then
				rm -f "$q"
			else
				status=1
			fi
		done
	done
	return $status
}

# orders_extras CHUNK FIRST LAST — the chunk's messages beyond the mixed
# stream: the latest order of each partition again on another partition
# (same reference: whichever comes first, one row), an invalid UTF-8 value,
# and in one chunk of four a divergent duplicate across two partitions (a
# race); the partitions are drawn with rnd (the producer's own sequence)
orders_extras() {
	local k=$1 first=$2 last=$3 p q e v
	for ((p = 0; p < ORDERS_PARTITIONS; p++)); do
		rnd $((ORDERS_PARTITIONS - 1))
		q=$(((p + 1 + R) % ORDERS_PARTITIONS))
		mixed_earlier_order $((last + 3))
		((MIXED_EARLIER >= first)) || continue
		e=$((p * 100000 + MIXED_EARLIER))
		msg "$q" "o$e-copy-$k" dup "$e" "EXT-$e" - "$(event "$e" "EXT-$e")"
	done
	rnd "$ORDERS_PARTITIONS"
	printf -v v '{"orderId":"%s","externalReference":"\xff\xfeEXT"}' "$(uid $((RACE_BASE + 500000 + k)))"
	msg "$R" "bad-utf8-$k" reject - - 22P02 "$v"
	rnd 4
	((R == 0)) || return 0
	e=$((RACE_BASE + k))
	rnd "$ORDERS_PARTITIONS"
	p=$R
	rnd $((ORDERS_PARTITIONS - 1))
	q=$(((p + 1 + R) % ORDERS_PARTITIONS))
	msg "$p" "race-$k-a" race "$e" "RACE-A-$k" - "$(event "$e" "RACE-A-$k")"
	msg "$q" "race-$k-b" race "$e" "RACE-B-$k" - "$(event "$e" "RACE-B-$k")"
}

# producer_hold — wait while every broker is down (fault_brokers): kcat
# gives up at once when no broker answers, where an outbox relay would hold
# its messages and retry, so the producer holds them instead.  It marks
# itself producing before it looks, fault_brokers marks the brokers down
# before it waits for the producer to be idle: one of them always sees the
# other
producer_hold() {
	while touch "$E2E_TMP/producing" && [ -e "$E2E_TMP/brokers-down" ]; do
		rm -f "$E2E_TMP/producing"
		sleep 0.1
	done
}

# producer SEED RATE — the background producer: RATE events a second on
# the orders topic (a tenth of it on the outbox topic), in chunks of one
# second, until $E2E_TMP/stop-producing exists or the partitions are full;
# the chunks are drawn from SEED's sequence.  kcat's failures are logged in
# producer.log (a message produced twice or never shows in the end check of
# what Kafka holds)
producer() {
	local rate=$2 k=0 per out_per first last p next=$SECONDS
	SOAK_RNG=$((($1 * 7 + 1) % 2147483648)) # the stream's own sequence
	per=$(((rate + ORDERS_PARTITIONS - 1) / ORDERS_PARTITIONS))
	out_per=$(((rate / 10 + OUTBOX_PARTITIONS - 1) / OUTBOX_PARTITIONS))
	first=1
	while [ ! -e "$E2E_TMP/stop-producing" ]; do
		last=$((first + per - 1))
		if ((last > MAX_PER_PARTITION)); then
			echo "partitions full at chunk $k" >>"$E2E_TMP/producer.log"
			break
		fi
		# shellcheck disable=SC2034 # the topic of flush (test/e2e/lib.sh)
		E2E_TOPIC=$ORDERS_TOPIC
		for ((p = 0; p < ORDERS_PARTITIONS; p++)); do
			mixed_stream "$p" "$first" "$last"
		done
		orders_extras "$k" "$first" "$last"
		for ((p = 0; p < OUTBOX_PARTITIONS; p++)); do
			outbox_stream "$p" $(((first - 1) * out_per / per + 1)) $((last * out_per / per))
		done
		producer_hold
		flush 2>>"$E2E_TMP/producer.log" || echo "chunk $k: kcat failed (orders)" >>"$E2E_TMP/producer.log"
		outbox_flush 2>>"$E2E_TMP/producer.log" || echo "chunk $k: kcat failed (outbox)" >>"$E2E_TMP/producer.log"
		rm -f "$E2E_TMP/producing"
		echo "$k" >"$E2E_TMP/chunks"
		k=$((k + 1))
		first=$((last + 1))
		next=$((next + 1))
		((SECONDS < next)) && sleep $((next - SECONDS))
	done
}
