#!/bin/bash
# test/tools/01-generator-account.t — ro-generate-events' account matches
# what it really put into Kafka.
#
# Starts the development Kafka, produces 2,000 events with every ratio
# non-zero and a fixed seed, reads the topic back with kcat, and checks
# each number of the account against what is in the topic (independently
# re-derived: a strict UTF-8 JSON parse, keys, NULL values), the manifest
# against the partitions/offsets/keys kcat reports, that the same seed
# gives the same stream, that --rate paces, that --event-bytes makes valid
# events of about the size asked for, and that undelivered messages
# and bad usage make the generator exit non-zero.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/kafka.sh
. "$RO_ROOT/test/lib/kafka.sh"

COUNT=2000
SEED=20240501
RATIOS=(--redeliveries 0.2 --cross-partition 0.02 --divergent 0.004
	--malformed 0.004 --tombstones 0.004)

tap_plan 25

GEN=${RO_GENERATE_EVENTS:-$RO_ROOT/tools/ro-generate-events}
if [[ ! -x $GEN ]]; then
	GEN=$(command -v ro-generate-events) ||
		tap_bail "ro-generate-events not built (make -C tools) nor installed"
fi
command -v kcat >/dev/null || tap_bail "kcat is not installed"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-gen-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"
ro_on_exit kafka_stop
kafka_start 3 orders:4 replay:4 paced:1 large:1 || tap_bail "the development Kafka did not start"

# account KEY — one value of the account in $WORK/account
account() {
	sed -n "s/^$1=//p" "$WORK/account"
}

# 1-2: the run and its account
status=0
"$GEN" --brokers "$KAFKA_BOOTSTRAP" --topic orders --count "$COUNT" --seed "$SEED" \
	"${RATIOS[@]}" --manifest "$WORK/manifest" >"$WORK/account" 2>"$WORK/stderr" || status=$?
tap_is "$status" 0 "the generator exits 0 when every message was delivered"
[[ $status == 0 ]] || tap_diag "$(cat "$WORK/stderr")"
keys=$(cut -d= -f1 "$WORK/account" | tr '\n' ' ')
tap_like "$keys" "produced distinct_orders valid_events redeliveries cross_partition divergent malformed tombstones expected_rows expected_duplicates expected_quarantined failed" \
	"the account has every key"

# 3: the kinds partition the stream
sum=$(($(account valid_events) + $(account redeliveries) + $(account cross_partition) +
	$(account divergent) + $(account malformed) + $(account tombstones)))
tap_is "$(account produced) $sum $(account failed)" "$COUNT $COUNT 0" \
	"produced = count = the sum of the kinds, none failed"

# 4: every ratio was non-zero, so every kind is there, rounded as documented
tap_is "$(account redeliveries) $(account cross_partition) $(account divergent) $(account malformed) $(account tombstones)" \
	"400 40 8 8 8" "each kind has round(count * ratio) messages"

# read the topic back: partition, offset, key, value size (-1 = NULL), value
kcat -b "$KAFKA_BOOTSTRAP" -C -t orders -o beginning -e -q \
	-f '%p\t%o\t%k\t%S\t%s\n' >"$WORK/topic"

# 5: nothing was dropped by the mock cluster's retention
low=$(kafka_end_offsets orders | awk '{ s += $3 } END { print s + 0 }')
tap_is "$low" 0 "every partition still starts at offset 0 (nothing dropped)"

# 6: total messages in the topic
tap_is "$(wc -l <"$WORK/topic" | tr -d ' ')" "$(account produced)" \
	"the topic holds as many messages as produced"

# Independent count of the topic: a strict UTF-8 JSON parse, the event
# rules that matter here (object, orderId a UUID, externalReference a
# non-blank string), keys.
perl -MJSON::PP -e '
	my $json = JSON::PP->new->utf8;
	my (%ids, %pairs, $tomb, $bad, $events, $by_id, $other_key);
	my $uuid = qr/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
	while (my $line = <STDIN>) {
		chomp $line;
		my ($p, $o, $key, $size, $value) = split /\t/, $line, 5;
		if ($size == -1) { $tomb++; next }
		my $ev = eval { $json->decode($value) };
		if (ref $ev ne "HASH" || !defined $ev->{orderId} || ref \$ev->{orderId} ne "SCALAR"
			|| $ev->{orderId} !~ $uuid || !defined $ev->{externalReference}
			|| $ev->{externalReference} !~ /\S/) { $bad++; next }
		$events++;
		$ids{lc $ev->{orderId}} = 1;
		$pairs{lc($ev->{orderId}) . " " . $ev->{externalReference}} = 1;
		if ($key eq $ev->{orderId}) { $by_id++ } else { $other_key++ }
	}
	my $distinct = keys %ids;
	my $pairs = keys %pairs;
	printf "tombstones=%d\nmalformed=%d\ndistinct_orders=%d\n", $tomb, $bad, $distinct;
	printf "divergent=%d\ncross_partition=%d\nredeliveries=%d\n",
		$pairs - $distinct, $other_key, $by_id - $pairs;
	printf "events=%d\n", $events;
' <"$WORK/topic" >"$WORK/derived"

# derived KEY — one value counted from the topic
derived() {
	sed -n "s/^$1=//p" "$WORK/derived"
}

# 7-12: each number of the account against the topic
tap_is "$(derived tombstones)" "$(account tombstones)" "tombstones (NULL values) match the account"
tap_is "$(derived malformed)" "$(account malformed)" "values that are not valid events match malformed"
tap_is "$(derived distinct_orders) $(derived distinct_orders)" "$(account distinct_orders) $(account expected_rows)" \
	"distinct orderIds among valid events match distinct_orders and expected_rows"
tap_is "$(derived divergent)" "$(account divergent)" \
	"orderIds seen with a second externalReference match divergent"
tap_is "$(derived cross_partition) $(derived redeliveries)" "$(account cross_partition) $(account redeliveries)" \
	"events keyed by another key match cross_partition; repeated bytes under the orderId match redeliveries"
tap_is "$(($(derived malformed) + $(account divergent)))" "$(account expected_quarantined)" \
	"expected_quarantined = malformed + divergent messages"

# 13-15: the manifest against the topic
tap_is "$(wc -l <"$WORK/manifest" | tr -d ' ')" "$(account produced)" "the manifest has one line per message"
awk '{ print $1, $2 }' "$WORK/manifest" | sort >"$WORK/manifest.coords"
awk -F'\t' '{ print $1, $2 }' "$WORK/topic" | sort >"$WORK/topic.coords"
tap_cmd "the manifest's partition/offset pairs are exactly the topic's" \
	cmp "$WORK/manifest.coords" "$WORK/topic.coords"
# the key the manifest implies (externalReference for cross, else orderId)
# must be the key stored at that partition/offset
mismatch=$(awk -F'\t' 'NR == FNR { key[$1 " " $2] = $3; next }
	{
		want = ($3 == "cross") ? $5 : $4
		if ($3 == "malformed" && $4 == "-") next
		if (key[$1 " " $2] != want) { n++; if (n <= 3) print "at " $1 "/" $2 ": " $0 " but key " key[$1 " " $2] }
	}
	END { print n + 0 }' "$WORK/topic" FS=' ' "$WORK/manifest")
tap_is "$(tail -n 1 <<<"$mismatch")" 0 "every manifest line names the key stored at its offset"
[[ $(tail -n 1 <<<"$mismatch") == 0 ]] || tap_diag "$mismatch"

# 16: manifest kinds equal the account
kinds=$(awk '{ n[$3]++ } END { printf "%d %d %d %d %d %d", n["valid"], n["redelivery"], n["cross"], n["divergent"], n["malformed"], n["tombstone"] }' "$WORK/manifest")
tap_is "$kinds" "$(account valid_events) $(account redeliveries) $(account cross_partition) $(account divergent) $(account malformed) $(account tombstones)" \
	"manifest kinds match the account"

# 17: the same seed gives the same stream (keys, kinds, partitions, offsets)
"$GEN" --brokers "$KAFKA_BOOTSTRAP" --topic replay --count "$COUNT" --seed "$SEED" \
	"${RATIOS[@]}" --manifest "$WORK/manifest.replay" >/dev/null 2>&1 || true
tap_cmd "a second run with the same seed produces the same manifest" \
	cmp "$WORK/manifest" "$WORK/manifest.replay"

# 18: --rate paces: 30 messages at 60/s take about half a second
start=$(date +%s%N)
"$GEN" --brokers "$KAFKA_BOOTSTRAP" --topic paced --count 30 --rate 60 >/dev/null 2>&1 || true
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
tap_ok "$([[ $elapsed_ms -ge 450 ]]; echo $?)" "--rate 60 spreads 30 messages over at least 450 ms (took $elapsed_ms ms)"

# 19-20: --event-bytes 3000: every event of about 3 kB (order lines added,
# the total still their sum), with the same account as without it
"$GEN" --brokers "$KAFKA_BOOTSTRAP" --topic large --count 50 --seed "$SEED" --redeliveries 0.2 \
	--cross-partition 0 --divergent 0 --malformed 0 --tombstones 0 --event-bytes 3000 \
	>"$WORK/account.large" 2>/dev/null || true
kcat -b "$KAFKA_BOOTSTRAP" -C -t large -o beginning -e -q -f '%s\n' >"$WORK/large"
sizes=$(perl -MJSON::PP -ne '
	chomp; my $ev = eval { JSON::PP->new->utf8->decode($_) } or do { print "invalid\n"; next };
	my $sum = 0; $sum += $_->{quantity} * $_->{unitPrice} for @{$ev->{items}};
	my $ship = $ev->{shipping}{method} eq "EXPRESS" ? 9.95 : 4.95;
	printf "%s\n", (abs($sum + $ship - $ev->{total}) < 0.005 && length($_) >= 2900 && length($_) <= 3100)
		? "ok" : "size " . length($_) . " items " . scalar(@{$ev->{items}})' "$WORK/large" | sort | uniq -c | tr -s ' ')
tap_is "$sizes" " 50 ok" "--event-bytes 3000: 50 valid events of 2,900 to 3,100 bytes whose total is still their lines' sum"
tap_is "$(sed -n 's/^produced=//p' "$WORK/account.large") $(sed -n 's/^redeliveries=//p' "$WORK/account.large")" "50 10" \
	"--event-bytes changes no count of the account"

# 21: undelivered messages make it fail, and the account says so
dead=127.0.0.1:1
status=0
"$GEN" --brokers "$dead" --count 5 -X message.timeout.ms=1500 \
	>"$WORK/account.dead" 2>/dev/null || status=$?
tap_is "$status $(sed -n 's/^failed=//p' "$WORK/account.dead")" "1 5" \
	"with no reachable broker it exits 1 and reports failed=5"

# 22: bad usage exits 2
status=0
"$GEN" --brokers "$KAFKA_BOOTSTRAP" --redeliveries 0.7 --malformed 0.5 >/dev/null 2>&1 || status=$?
tap_is "$status" 2 "ratios adding up to more than 1 are a usage error (exit 2)"

# 21-22: --output (demo/run --avro): the same seed's stream as lines
# "KIND KEY HEXVALUE" in a file, no Kafka: the same kinds and keys in the
# same order as the manifest of the run above, the account unchanged
status=0
"$GEN" --output "$WORK/stream" --topic orders --count "$COUNT" --seed "$SEED" \
	"${RATIOS[@]}" >"$WORK/account.output" 2>"$WORK/stderr" || status=$?
tap_is "$status $(grep -v '^topic=' "$WORK/account.output" | md5sum)" "0 $(grep -v '^topic=' "$WORK/account" | md5sum)" \
	"--output exits 0 and prints the same account as the run to Kafka"
awk '{ k = $3; if (k == "malformed" && $4 == "-") key = "?"; else key = (k == "cross") ? $5 : $4; print k, key }' \
	"$WORK/manifest" >"$WORK/manifest.keys"
awk '{ k = $1; sub(/^malformed-.*/, "malformed", k); key = ($1 == "malformed-no-order-id") ? "?" : $2
	# a tombstone has "-" as value; every other value is hex of its bytes
	if (($1 == "tombstone") != ($3 == "-") || ($3 != "-" && $3 !~ /^([0-9a-f][0-9a-f])+$/)) key = "BAD-VALUE"
	print k, key }' "$WORK/stream" >"$WORK/stream.keys"
tap_cmd "its lines have the manifest's kinds and keys, in order, values in hex (NULL as -)" \
	cmp "$WORK/manifest.keys" "$WORK/stream.keys"
status=0
"$GEN" --output "$WORK/x" --brokers "$KAFKA_BOOTSTRAP" >/dev/null 2>&1 || status=$?
tap_is "$status" 2 "--output with --brokers is a usage error (exit 2)"

tap_done
