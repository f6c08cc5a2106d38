#!/bin/bash
# 18-size-caused-split.t — a batch that fails because of its size is not
# sent again whole, for ever.  (An example: a burst of large events builds a
# bind message past 1 GB or runs the backend out of memory; the same batch
# would fail again on every retry.)  A call that fails with
# out of memory (53200) or a program limit (class 54) is retried in halves:
# the second half goes back in front of the held messages, the next batches
# are capped at the half that is retried, and the cap grows back after
# commits.
#
# The size limit here is a real PostgreSQL error of that class from a real
# server: a DBA's BEFORE INSERT trigger raises 54000 (program_limit_exceeded)
# once a transaction inserts more than LIMIT rows, as a server runs out of
# room for a batch that is too large while its halves fit.  With batches of
# 200 messages, the feeder must split (200 -> 100 -> 50 -> 25), never send a
# failed batch again whole, store everything exactly once, quarantine only
# the invalid events (the 54000 is the batch's, not an event's), and count
# the splits in /metrics.
#
# On 1.0 (RO_FEEDER_BIN=/tmp/ro-1.0/feeder/received-orders-feeder) the batch
# of 200 is retried whole for ever: nothing is stored.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

E2E_TOPIC=orders
GROUP=e2e-18
PARTITIONS=2
PER_PARTITION=600
LIMIT=40
FEEDER_ARGS=(--batch-size 200 --batch-wait-ms 300 -X auto.commit.interval.ms=200
	--retry-backoff-ms 50 --retry-backoff-max-ms 200 --metrics-listen 127.0.0.1:0)
plan 13

# splits — the batch_split lines of the feeder
splits() {
	grep -E 'event=batch_split ' "$E2E_TMP/feeder.log"
}

# failed_batches — "first messages" of every batch_failed line
failed_batches() {
	grep -E 'event=batch_failed ' "$E2E_TMP/feeder.log" |
		sed -nE 's/.* messages=([0-9]+) first="([^"]+)".*/\2 \1/p'
}

# never_the_same_batch_twice — no failed batch (first message, size) failed
# a second time
never_the_same_batch_twice() {
	local again
	again=$(failed_batches | sort | uniq -d)
	[ -z "$again" ] || { diag "failed more than once: $again"; return 1; }
}

# first_split_halves — the first split took a full batch of 200 down to 100
first_split_halves() {
	splits | head -n 1 | grep -Eq 'sqlstate=54000 messages=200 retrying=100 held_back=100'
}

kafka_start 1 "$E2E_TOPIC:$PARTITIONS" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
if [ -n "${RO_FEEDER_BIN:-}" ]; then
	sql "GRANT EXECUTE ON FUNCTION received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]) TO \"$E2E_ROLE\""
fi

sql "CREATE FUNCTION public.e2e_limit_rows() RETURNS trigger LANGUAGE plpgsql AS
       \$\$DECLARE n int := coalesce(nullif(current_setting('e2e.rows', true), ''), '0')::int + 1;
       BEGIN
         PERFORM set_config('e2e.rows', n::text, true);
         IF n > $LIMIT THEN
           RAISE EXCEPTION 'more than $LIMIT rows in one transaction' USING ERRCODE = 'program_limit_exceeded';
         END IF;
         RETURN NEW;
       END\$\$;
     CREATE TRIGGER e2e_limit_rows BEFORE INSERT ON received_orders.received_orders
       FOR EACH ROW EXECUTE FUNCTION public.e2e_limit_rows()" >/dev/null
is "$(sql "BEGIN; INSERT INTO received_orders.received_orders (order_id, external_reference, payload)
             SELECT gen_random_uuid(), 'x', '{}' FROM generate_series(1, $((LIMIT + 1)));
           ROLLBACK" 2>&1 | grep -c 'more than')" 1 \
	"the server refuses a transaction of more than $LIMIT rows with 54000"

for ((p = 0; p < PARTITIONS; p++)); do
	mixed_stream $p 1 $PER_PARTITION
done
flush || bail "kcat could not produce"
feeder_start feeder "$E2E_TOPIC" "$GROUP" "${FEEDER_ARGS[@]}"
check "the feeder consumes everything within 90 s" kafka_wait_caught_up "$GROUP" "$E2E_TOPIC" 90
tap_last_ok || diag "last lines: $(grep -v event=stats "$E2E_TMP/feeder.log" | tail -n 4 | cut -c1-240)"
check "a batch of 200 that failed with 54000 was split: 100 retried, 100 held back (event=batch_split)" \
	first_split_halves
check "it split down to a size that commits (a batch_split retrying 25)" \
	eval "splits | grep -q 'retrying=25 '"
check "no failed batch was ever sent again whole" never_the_same_batch_twice
check "the failures are the batch's: batch_failed sqlstate=54000, not an element's" \
	grep -q 'event=batch_failed .*sqlstate=54000' "$E2E_TMP/feeder.log"
n_splits=$(splits | wc -l)
check "/metrics counts the splits (batch_splits_total = $n_splits batch_split lines)" \
	eval '[ "$(feeder_metric feeder batch_splits_total)" = "$n_splits" ]'
check "the feeder is still up" feeder_alive feeder
feeder_stop feeder
is "$?" 0 "SIGTERM: the feeder exits 0"
check_exact_contents
is "$(sql "SELECT count(*) FROM received_orders.received_orders_quarantine WHERE sqlstate = '54000'")" 0 \
	"no event was quarantined for the batch's 54000"
tap_done
