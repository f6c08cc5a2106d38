#!/bin/bash
# 49-schema-registry-unknown-trickle.t — a trickle of made-up schema ids
# slows their own partition only, and cannot renew the grace.
#
# A topic of two partitions read with --value-format confluent against the
# stand-in registry, the default grace of an unknown id (10 s).  For 36 s,
# partition 1 gets a steady 20 orders/s, and partition 0 a made-up schema
# id every 12 s, each followed by a valid order.  Each new unknown id got
# the full grace, its batch failed and was retried, and every partition was
# paused while any lane waited for a retry: partition 1's orders waited up
# to 37 s (median 22 s) while /healthz stayed green.  Now a message whose
# id is unknown yet waits alone with its partition's later messages
# (partition_waits), the other partitions go on, and the unknown ids share
# one budget of grace (10 s, refilled at 10 s a minute), so that the
# second and third made-up ids are quarantined sooner, their reason saying
# the budget is spent.
#
# Asserted: every order of partition 1 stored within 5 s of being produced
# (its externalReference carries the time it was produced; received_at is
# the time of its batch), the exact rows and quarantine, the made-up ids
# quarantined, the feeder up and exiting 0.

# shellcheck source=test/e2e/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=test/lib/schema_registry.sh
. "$RO_ROOT/test/lib/schema_registry.sh"

E2E_TOPIC=sr.trickle
GROUP=e2e-49
FRAMED_FUNCTION='received_orders.materialize_orders(text,bytea[],text[],integer[],bigint[],bytea[],text,text,text,bytea[],bytea[],bytea[],integer[],text[],uuid[])'
plan 10

sr_start "$E2E_TMP" || bail "could not start the stand-in Schema Registry"
kafka_start 1 "$E2E_TOPIC:2" || bail "could not start the development Kafka"
e2e_setup_db || bail "could not set up the database"
sql "GRANT EXECUTE ON FUNCTION $FRAMED_FUNCTION TO \"$E2E_ROLE\"" >/dev/null

ORDER='{"type": "record", "name": "OrderReceived", "namespace": "shop", "fields": [
	{"name": "orderId", "type": "string"}, {"name": "externalReference", "type": "string"}]}'
ORDER_ID=$(python3 -c 'import json, sys; print(json.dumps({"schema": sys.argv[1]}))' "$ORDER" |
	curl -sS --max-time 5 -H 'Content-Type: application/json' -d @- "$SR_URL/subjects/$E2E_TOPIC-value/versions" |
	sed 's/[^0-9]//g')
[ -n "$ORDER_ID" ] || bail "could not register the order schema"
# the steady stream goes through kcat line by line: no newline in a value
[ "$ORDER_ID" != 10 ] || bail "schema id 10 would put a newline in the frame"

# framed ID FILE NO REF — a framed Avro order (or, for a made-up id, the
# same bytes under an id the registry never had)
framed() {
	python3 - "$@" <<-'PY'
		import struct, sys
		def s(t):
		    b = t.encode(); return bytes([len(b) << 1]) + b
		a = sys.argv[1:]
		body = s("00000000-0000-4000-8000-%012d" % int(a[2])) + s(a[3])
		open(a[1], "wb").write(b"\x00" + struct.pack(">i", int(a[0])) + body)
	PY
}

sr_mode ok
feeder_start f "$E2E_TOPIC" "$GROUP" --value-format confluent --schema-registry "$SR_URL" \
	--schema-registry-unknown-grace-ms 10000 \
	--metrics-listen 127.0.0.1:0 -X auto.commit.interval.ms=200 --log-level info
ro_wait_until 60 eval "grep -q 'event=partitions_assigned' '$E2E_TMP/f.log'" ||
	bail "the feeder was not assigned its partitions"

# partition 1: 20 orders a second for 36 s, each order's externalReference
# the time it was produced (ms since the epoch), through one kcat
python3 - "$ORDER_ID" "$E2E_MANIFEST" <<-'PY' | kafka_produce "$E2E_TOPIC" 1 &
	import struct, sys, time
	def s(t):
	    b = t.encode(); return bytes([len(b) << 1]) + b
	schema_id, manifest = int(sys.argv[1]), open(sys.argv[2], "a")
	start = time.time()
	for n in range(720):
	    time.sleep(max(0, start + n / 20 - time.time()))
	    no, ref = 490000 + n, "TR1-%d-%d" % (n, int(time.time() * 1000))
	    oid = "00000000-0000-4000-8000-%012d" % no
	    value = b"\x00" + struct.pack(">i", schema_id) + s(oid) + s(ref)
	    manifest.write("p1-%d\t1\tinsert\t%s\t%s\t-\n" % (n, oid, ref))
	    manifest.flush()
	    sys.stdout.buffer.write(b"p1-%d\t" % n + value + b"\n")
	    sys.stdout.flush()
PY
steady=$!

# partition 0: a made-up id every 12 s, a valid order after each
M=$E2E_TMP/msgs
mkdir -p "$M"
for k in 0 1 2; do
	framed $((900001 + k)) "$M/made-up-$k.bin" $((491000 + k)) "TR0-$k"
	framed "$ORDER_ID" "$M/after-$k.bin" $((491100 + k)) "TR0-after-$k"
	msg_file 0 "made-up-$k" reject - - 22P03 "$M/made-up-$k.bin"
	msg_file 0 "after-$k" insert $((491100 + k)) "TR0-after-$k" - "$M/after-$k.bin"
	[ $k = 2 ] || sleep 12
done
wait "$steady" || bail "the steady stream could not be produced"

check "the database reaches the end offsets within 90 s" db_wait_caught_up "$GROUP" 90
check_exact_contents
late=$(sql "SELECT count(*) FILTER (WHERE d > 5) || ' ' || round(max(d), 1) || ' '
                   || round((percentile_cont(0.5) WITHIN GROUP (ORDER BY d))::numeric, 1)
              FROM (SELECT extract(epoch FROM received_at) - split_part(external_reference, '-', 3)::bigint / 1000.0 AS d
                      FROM received_orders.received_orders WHERE external_reference LIKE 'TR1-%') t")
diag "partition 1: stored after at most ${late#* } s (max, median)"
is "${late%% *}" 0 \
	"every order of partition 1 stored within 5 s of being produced while partition 0 waits for its made-up ids (late, max s, median s: $late)"
is "$(sql "SELECT count(*) FROM received_orders.received_orders_quarantine
             WHERE convert_from(kafka_key, 'UTF8') LIKE 'made-up-%'
               AND reason LIKE 'schema id 90000_ is unknown to the Schema Registry%'")" 3 \
	"the three made-up ids quarantined, their reason naming the id"
check "a later made-up id is quarantined once the grace budget is spent, its reason saying so" \
	test -n "$(sql "SELECT 1 FROM received_orders.received_orders_quarantine
	                   WHERE convert_from(kafka_key, 'UTF8') IN ('made-up-1', 'made-up-2')
	                     AND reason LIKE '%grace budget of unknown ids is spent%'")"
check "partition 0 waited alone (partition_waits at sr.trickle [0])" \
	eval "grep -q 'event=partition_waits at=\"sr.trickle \[0\]' '$E2E_TMP/f.log'"
check "the feeder still runs" feeder_alive f
feeder_stop f
is "$?" 0 "SIGTERM: the feeder exits 0"
tap_done
