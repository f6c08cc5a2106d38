# bench/avro.sh — `bench/feeder --avro` (issue 26): the same orders as an
# Avro topic and as a JSON topic, in one run.
#
# Sourced by bench/feeder when --avro is given, after its set-up (it uses
# the run's $work, $events, $seed, $partitions, $repeat, $topic, $generator,
# $role and the functions account, check_topic, run_feeder).  The Avro
# topic holds the orders of the JSON topic (the generator's same seed and
# ratios: the same keys, orderIds and fields) serialized by Confluent's own
# AvroSerializer (test/schema-registry/avro-orders.js, two schema versions,
# registered with the stand-in registry test/schema-registry/registry.js,
# which the feeder then asks for each id once).  Each of --repeat rounds
# runs the feeder (defaults) on the JSON topic, then on the Avro topic
# (--value-format confluent --schema-registry URL), each with a fresh group
# and an emptied table; reported: the steady rate of each (first -> last
# transaction), Avro's share of JSON's (the issue's target: >= 0.8x), and
# the CPU per event of the feeder process (its CPU time over the run /
# events) and of its backends.  Needs Node.js and npm (the serializers are
# installed by `npm ci` on first use).
# shellcheck shell=bash disable=SC2154 # the variables of bench/feeder

AVRO_TOPIC=bench_avro
AVRO_FUNCTION='received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[], bytea[], integer[], text[], uuid[])'

# avro_setup — the registry, the Avro topic (checked whole) and the grant
avro_setup() {
	# shellcheck source=test/lib/schema_registry.sh
	. "$RO_ROOT/test/lib/schema_registry.sh"
	sr_npm_install || ro_die "--avro: could not install Confluent's serializers (npm ci)"
	sr_start "$work" || ro_die "--avro: the stand-in Schema Registry did not start: $(tail -n 5 "$work/registry.log")"
	"$generator" --output "$work/avro.stream" --topic "$AVRO_TOPIC" --count "$events" --seed "$seed" \
		--redeliveries 0.2 --cross-partition 0 --divergent 0 --malformed 0 --tombstones 0 \
		>"$work/account.$AVRO_TOPIC" || ro_die "--avro: ro-generate-events --output failed"
	node "$RO_ROOT/test/schema-registry/avro-orders.js" --registry "$SR_URL" --subject "$AVRO_TOPIC-value" \
		--in "$work/avro.stream" --out "$work/avro.kcat" >"$work/avro.report" 2>"$work/avro.err" ||
		ro_die "--avro: the serializer failed: $(tail -n 5 "$work/avro.err")"
	kcat -b "$KAFKA_BOOTSTRAP" -P -t "$AVRO_TOPIC" -z lz4 -Z \
		-K "$(sed -n 's/^key_delimiter=//p' "$work/avro.report")" \
		-D "$(sed -n 's/^message_delimiter=//p' "$work/avro.report")" <"$work/avro.kcat" ||
		ro_die "--avro: kcat could not produce the Avro topic"
	check_topic "$AVRO_TOPIC"
	pg_query bench "GRANT EXECUTE ON FUNCTION $AVRO_FUNCTION TO $role" >/dev/null
	AVRO_BYTES=$(kcat -C -b "$KAFKA_BOOTSTRAP" -t "$AVRO_TOPIC" -o beginning -e -q -f '%S\n' |
		awk '{ n += $1 } END { printf "%.0f", n / NR }')
	AVRO_ASKED_BEFORE=$(sr_stats schemas_ids)
	ro_log "--avro: $(account "$AVRO_TOPIC" produced) Avro values of $AVRO_BYTES bytes on average in $AVRO_TOPIC (schema ids $(sed -n 's/^schema_ids=//p' "$work/avro.report"))"
}

# avro_rounds [FEEDER ARGS...] — --repeat rounds, JSON then Avro; sets
# AVRO_JSON_STEADY and AVRO_STEADY (medians) and AVRO_JSON_CPU and
# AVRO_CPU ("feeder backends" microseconds per event, of the median runs)
avro_rounds() {
	local r json=() avro=()
	local -A json_cpu=() avro_cpu=()
	for ((r = 1; r <= repeat; r++)); do
		ro_log "--avro round $r/$repeat: the JSON topic"
		run_feeder "json$r" "$topic" "$@"
		json+=("$RUN_RATE_STEADY") json_cpu[$RUN_RATE_STEADY]=$RUN_CPU_US
		ro_log "--avro round $r/$repeat: the Avro topic"
		run_feeder "avro$r" "$AVRO_TOPIC" "$@" --value-format confluent --schema-registry "$SR_URL"
		avro+=("$RUN_RATE_STEADY") avro_cpu[$RUN_RATE_STEADY]=$RUN_CPU_US
	done
	AVRO_JSON_STEADY=$(bench_median "${json[@]}")
	AVRO_STEADY=$(bench_median "${avro[@]}")
	AVRO_JSON_CPU=${json_cpu[$AVRO_JSON_STEADY]}
	AVRO_CPU=${avro_cpu[$AVRO_STEADY]}
	AVRO_ROUNDS="JSON ${json[*]}; Avro ${avro[*]}"
}

# avro_report — the Markdown section
avro_report() {
	cat <<-EOT

		### Avro against JSON (--avro, issue 26), medians of $repeat rounds

		The same $events orders ($(account "$AVRO_TOPIC" redeliveries) redeliveries): as JSON ($avg_bytes bytes per value on average) and as Avro framed by Confluent's AvroSerializer ($AVRO_BYTES bytes), read with \`--value-format confluent\`; the feeder's defaults otherwise.

		| topic | steady events/s (first -> last transaction) | CPU per event, feeder process | CPU per event, its backends |
		|---|---:|---:|---:|
		| JSON | $AVRO_JSON_STEADY | ${AVRO_JSON_CPU% *} us | ${AVRO_JSON_CPU#* } us |
		| Avro | $AVRO_STEADY | ${AVRO_CPU% *} us | ${AVRO_CPU#* } us |
		| Avro / JSON | $(awk -v a="$AVRO_STEADY" -v b="$AVRO_JSON_STEADY" 'BEGIN { printf "%.2fx", (b > 0) ? a / b : 0 }') (target >= 0.8x) | | |

		Every round (steady): $AVRO_ROUNDS. The Avro runs asked the registry $(($(sr_stats schemas_ids) - AVRO_ASKED_BEFORE)) times in all (each run once per schema id: $(sed -n 's/^schema_ids=//p' "$work/avro.report")).
	EOT
}
