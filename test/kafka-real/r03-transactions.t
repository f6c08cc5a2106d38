#!/bin/bash
# r03-transactions.t — a topic written by a transactional producer (Kafka's
# own Java client, TxnProducer.java) with committed and aborted
# transactions interleaved, valid and invalid events in both: aborted orders
# are never materialized nor quarantined, committed ones once; when caught
# up, the lag reads 0 in the feeder's counters and in Kafka although each
# partition's end offset sits past its last message (the commit and abort
# markers are records too): the feeder acknowledges up to the consumer's
# position, past the markers; and in the database's view consumer_lag
# (high watermark - the database's position): the feeder moves the
# database's positions past the markers too (advance_positions, from its
# status reporter), so the position is the end offset, not the offset
# after the last message stored.  The account, where an offset committed
# beyond the database's position counts as ahead only if a read_committed
# consumer finds a message between the two (kr_account).
#
# Then without the grant of advance_positions (a DBA's revoke, or an
# extension before 1.3): more transactions, the last one aborted; the
# restarted feeder says once that it leaves the positions
# (event=positions_advance_off), stores every committed order, still
# acknowledges past the markers in Kafka, and the account holds.

RO_ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
# shellcheck source=test/kafka-real/lib.sh
. "$RO_ROOT/test/kafka-real/lib.sh"

PARTITIONS=3
TXNS=40
PER_TXN=30
E2E_TOPIC=r03-orders-$$
GROUP=r03-group-$$
plan 19

# txn_script FILE — the producer's commands: TXNS transactions of PER_TXN
# messages over the partitions, every third one aborted; the committed
# messages go to the manifest, the aborted orders' ids to aborted.ids
txn_script() {
	local t i n p v kind
	: >"$1"
	: >"$E2E_TMP/aborted.ids"
	for ((t = 1; t <= TXNS; t++)); do
		echo BEGIN >>"$1"
		for ((i = 1; i <= PER_TXN; i++)); do
			n=$((t * 1000 + i))
			p=$((i % PARTITIONS))
			if ((i % 13 == 0)); then
				v='{"orderId": broken'
				kind=reject
			else
				v=$(event "$n" "EXT-$n")
				kind=insert
			fi
			printf '%s\to%s\t%s\n' "$p" "$n" "$v" >>"$1"
			if ((t % 3 == 0)); then
				[ $kind = insert ] && uid "$n" >>"$E2E_TMP/aborted.ids" && echo >>"$E2E_TMP/aborted.ids"
			elif [ $kind = insert ]; then
				printf 'o%s\t%s\tinsert\t%s\tEXT-%s\t-\n' "$n" "$p" "$(uid "$n")" "$n" >>"$E2E_MANIFEST"
			else
				printf 'o%s\t%s\treject\t-\t-\t22P02\n' "$n" "$p" >>"$E2E_MANIFEST"
			fi
		done
		if ((t % 3 == 0)); then echo ABORT >>"$1"; else echo COMMIT >>"$1"; fi
	done
	sed -i '/^$/d' "$E2E_TMP/aborted.ids"
}

# group_lag — sum of consumer_lag's lag of the group (empty: no rows)
group_lag() {
	sql "SELECT sum(lag) FROM received_orders.consumer_lag WHERE consumer_group = '$GROUP'"
}

# stats_lag — the lag of the feeder's last counters line (event=stats)
stats_lag() {
	log_events f stats | tail -1 | sed -n 's/.* lag=\([0-9-]*\).*/\1/p'
}

# stats_lag_is_zero — the feeder's last counters line reads lag=0
stats_lag_is_zero() {
	[ "$(stats_lag)" = 0 ]
}

# lag_is_zero — consumer_lag has the group's partitions and their lag is 0
lag_is_zero() {
	[ "$(group_lag)" = 0 ]
}

# advance_off_logged — the feeder's latest run logged positions_advance_off
advance_off_logged() {
	[ -n "$(log_run_events f positions_advance_off)" ]
}

kr_cluster || bail "could not start Apache Kafka"
e2e_setup_db || bail "could not set up the database"
kr_topic "$E2E_TOPIC" $PARTITIONS || bail "could not create $E2E_TOPIC"
[ -n "$AK_LIB" ] || ak_install || bail "no Kafka jars"

txn_script "$E2E_TMP/txns"
check "TxnProducer compiles against the pinned kafka-clients" \
	javac -d "$E2E_TMP" -cp "$AK_LIB/*" "$RO_ROOT/test/kafka-real/TxnProducer.java"
out=$(java -Xmx128m -Dlog4j2.level=error -cp "$E2E_TMP:$AK_LIB/*" TxnProducer \
	"$AK_BOOTSTRAP" "$E2E_TOPIC" r03-producer-$$ "$E2E_TMP/txns" 2>"$E2E_TMP/producer.log")
is "$out" "committed $((TXNS - TXNS / 3)), aborted $((TXNS / 3))" "the producer committed and aborted its transactions"

feeder_start f "$E2E_TOPIC" "$GROUP" --batch-size 25 --status-interval 1 --stats-interval 1
expected=$(expected_rows | wc -l)
check "the feeder stores every committed order" ro_wait_until 60 rows_at_least "$expected"
is "$(sql "SELECT count(*) FROM received_orders.received_orders
            WHERE order_id::text IN ($(sed "s/.*/'&'/" "$E2E_TMP/aborted.ids" | paste -sd,))")" 0 \
	"no order of an aborted transaction is stored ($(wc -l <"$E2E_TMP/aborted.ids") of them)"
check "the committed offsets reach the end offsets past the markers (Kafka's lag 0)" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
check "the feeder's own lag (its counters line) reads 0 once caught up" \
	ro_wait_until 15 stats_lag_is_zero
tap_last_ok || diag "last counters line's lag: $(stats_lag)"
check "consumer_lag reads 0 for every partition once caught up (the database's positions moved past the markers)" \
	ro_wait_until 15 lag_is_zero
tap_last_ok || diag "consumer_lag (partition position high_watermark lag): $(sql "SELECT kafka_partition, position, high_watermark, lag FROM received_orders.consumer_lag WHERE consumer_group = '$GROUP' ORDER BY 1" | tr '\n' ' ')"
kr_account "$GROUP" "transactions"
feeder_stop f

# without advance_positions: two committed transactions, one aborted
sql "REVOKE EXECUTE ON FUNCTION received_orders.advance_positions(text, text[], integer[], bigint[], bigint[]) FROM \"$E2E_ROLE\""
: >"$E2E_TMP/txns2"
for t in 1 2 3; do
	echo BEGIN >>"$E2E_TMP/txns2"
	for ((i = 1; i <= 6; i++)); do
		n=$((90000 + t * 100 + i))
		printf '%s\to%s\t%s\n' $((i % PARTITIONS)) "$n" "$(event "$n" "EXT-$n")" >>"$E2E_TMP/txns2"
		((t == 3)) || printf 'o%s\t%s\tinsert\t%s\tEXT-%s\t-\n' "$n" $((i % PARTITIONS)) "$(uid "$n")" "$n" >>"$E2E_MANIFEST"
	done
	if ((t == 3)); then echo ABORT >>"$E2E_TMP/txns2"; else echo COMMIT >>"$E2E_TMP/txns2"; fi
done
out=$(java -Xmx128m -Dlog4j2.level=error -cp "$E2E_TMP:$AK_LIB/*" TxnProducer \
	"$AK_BOOTSTRAP" "$E2E_TOPIC" r03-producer-$$ "$E2E_TMP/txns2" 2>>"$E2E_TMP/producer.log")
is "$out" "committed 2, aborted 1" "more transactions, the last one aborted"
feeder_start f "$E2E_TOPIC" "$GROUP" --batch-size 25 --status-interval 1 --stats-interval 1
check "without advance_positions: the feeder stores every committed order" \
	ro_wait_until 60 rows_at_least "$(expected_rows | wc -l)"
check "without advance_positions: the committed offsets reach the end offsets past the markers" \
	kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 30
ro_wait_until 15 advance_off_logged || true
is "$(log_run_events f positions_advance_off | wc -l)" 1 \
	"without advance_positions: the feeder says once that the database's positions stay before the markers"
kr_account "$GROUP" "without advance_positions"
feeder_stop f
tap_done
