#!/bin/bash
# r04-compacted-topic.t — a compacted topic (cleanup.policy=compact) read
# after the log cleaner ran: the offsets left have gaps where older
# versions of a key were removed.  The gaps are not losses: the feeder
# reads every record left, its positions reach the end offsets, nothing is
# counted lost or out of range, the tombstones left are counted as
# tombstones; the account is taken against what the topic holds.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"

PARTITIONS=3
KEYS=300
E2E_TOPIC=r04-orders-$$
GROUP=r04-group-$$
plan 8

# version P FIRST LAST EVERY — one version of keys FIRST..LAST (every
# EVERY-th) of partition P: the order's event; every 30th key of a second
# version is a tombstone instead, every 50th key of the first version an
# invalid value (under a key of its own)
produce_version() {
	local p=$1 first=$2 last=$3 every=$4 n v
	for ((n = first; n <= last; n += every)); do
		v=$(event $((p * 100000 + n)) "EXT-$((p * 100000 + n))")
		if ((every > 1 && n % 30 == 0)); then
			printf 'k-%d-%d\t\n' "$p" "$n"
		else
			printf 'k-%d-%d\t%s\n' "$p" "$n" "$v"
		fi
		((every == 1 && n % 50 == 0)) && printf 'bad-%d-%d\t{"orderId": broken\n' "$p" "$n"
	done | kafka_produce "$E2E_TOPIC" "$p"
}

# records — "PARTITION OFFSET KEY SIZE" of every record the topic holds
# (SIZE -1: a tombstone)
records() {
	kcat -b "$AK_BOOTSTRAP" -C -t "$E2E_TOPIC" -o beginning -e -q -f '%p %o %k %S\n'
}

# compacted — the cleaner removed records: fewer left than produced
compacted() {
	[ "$(records | wc -l)" -lt "$produced" ]
}

kr_cluster || bail "could not start Apache Kafka"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS --config cleanup.policy=compact --config segment.ms=1000 \
	--config min.cleanable.dirty.ratio=0.001 --config min.compaction.lag.ms=0 \
	--config delete.retention.ms=3600000 || bail "could not create $E2E_TOPIC"

for ((p = 0; p < PARTITIONS; p++)); do produce_version $p 1 $KEYS 1 || bail "kcat could not produce"; done
sleep 1.5
for ((p = 0; p < PARTITIONS; p++)); do produce_version $p 2 $KEYS 2 || bail "kcat could not produce"; done
sleep 1.5
# a last record in a new segment: the active segment is never cleaned
for ((p = 0; p < PARTITIONS; p++)); do produce_version $p 999 999 1 || bail "kcat could not produce"; done
produced=$(((KEYS + KEYS / 50 + KEYS / 2 + 1) * PARTITIONS))
check "the log cleaner compacted the topic (fewer records than the $produced produced)" ro_wait_until 90 compacted
# The cleaner may run again at any time and take a value its key's
# tombstone follows: the account would then expect an order the feeder could
# not read.  Freeze the log once compacted (delete policy, no retention
# limit) and take the account from it when two reads a second apart agree.
ak_java kafka.admin.ConfigCommand --bootstrap-server "$AK_BOOTSTRAP" --alter --entity-type topics \
	--entity-name "$E2E_TOPIC" --add-config cleanup.policy=delete,retention.ms=-1 >/dev/null ||
	bail "could not stop the log cleaner on $E2E_TOPIC"
stable() {
	records | sort -k1,1n -k2,2n >"$E2E_TMP/records.a" && sleep 1 &&
		records | sort -k1,1n -k2,2n >"$E2E_TMP/records.b" &&
		cmp -s "$E2E_TMP/records.a" "$E2E_TMP/records.b"
}
ro_wait_until 60 stable || bail "the compacted log did not settle"
cp "$E2E_TMP/records.b" "$E2E_TMP/records"
diag "$(wc -l <"$E2E_TMP/records") records left of $produced"
check "the offsets left have gaps" awk '$1 == 0 { if (seen && $2 != last + 1) gap = 1; last = $2; seen = 1 } END { exit !gap }' "$E2E_TMP/records"

# the manifest from what the topic holds: each value of a k- key is its
# order (its latest version, or the first one if not yet cleaned), each
# bad- key a rejected value, NULLs tombstones
awk '$3 ~ /^k-/ && $4 != -1 { split($3, k, "-"); printf "%s\t%s\tinsert\t00000000-0000-4000-8000-%012d\tEXT-%d\t-\n", $3 "@" $2, $1, k[2] * 100000 + k[3], k[2] * 100000 + k[3] }
     $3 ~ /^bad-/ { printf "%s\t%s\treject\t-\t-\t22P02\n", $3, $1 }' "$E2E_TMP/records" |
	awk -F'\t' '$3 != "insert" || !seen[$4]++' >"$E2E_MANIFEST"
tombstones=$(awk '$4 == -1' "$E2E_TMP/records" | wc -l)

feeder_start f "$E2E_TOPIC" "$GROUP" --batch-size 40 --stats-interval 1
check "the database's positions reach the end offsets across the gaps" db_wait_caught_up "$GROUP" 90
check "nothing counted lost or out of range, the $tombstones tombstones left counted" \
	ro_wait_until 10 grep -Eq "event=stats .* tombstones=$tombstones .*positions_out_of_range=0 positions_lost=0" "$E2E_TMP/f.log"
expected_rows >"$E2E_TMP/rows.expected"
actual_rows >"$E2E_TMP/rows.actual"
check "compacted: every valid order left in the topic stored once ($(wc -l <"$E2E_TMP/rows.expected") rows)" \
	compare rows "$E2E_TMP/rows.expected" "$E2E_TMP/rows.actual"
is "$(sql "SELECT string_agg(q, ',' ORDER BY q COLLATE \"C\")
              FROM (SELECT convert_from(kafka_key, 'UTF8') || ' ' || outcome || ' ' || sqlstate AS q
                      FROM received_orders.received_orders_quarantine) s")" \
	"$(awk '$3 == "reject" { print $1 " rejected 22P02" }' "$E2E_MANIFEST" | LC_ALL=C sort | paste -sd,)" \
	"compacted: every bad message quarantined once"
check "the committed offsets reach the end offsets" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
ahead=$(acks_ahead "$GROUP" 2>&1) || ahead="could not read the offsets: $ahead"
is "$ahead" "" "compacted: no offset acknowledged ahead of the database"
feeder_stop f
tap_done
