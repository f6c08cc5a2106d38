#!/bin/bash
# 01-metrics-and-health.t — the feeder's --metrics-listen endpoint tells the
# truth: after a known stream every counter on /metrics equals what was
# produced, the text passes `promtool check metrics`, and /healthz follows
# the database (503 naming it while it is stopped, 200 after the restart).
#
# Runs on a PostgreSQL cluster of its own (test/lib/pg.sh), so stopping it
# with `pg_ctl stop -m immediate` harms no other suite, and on the
# development Kafka (tools/ro-dev-kafka, test/lib/kafka.sh).  The stream,
# per partition P of 3 (order numbers P*1000 + I):
#   VALID   first occurrences              -> events_total{outcome="inserted"}
#   REDELIV byte-identical redeliveries    -> events_total{outcome="duplicate"}
#   1       divergent duplicate (other ref)-> events_total{outcome="conflict"}
#   BAD     malformed values               -> events_total{outcome="rejected"}
#   TOMBS   null values                    -> tombstones_total
# plus LATE valid orders on partition 0 produced while the database is down
# (they make the feeder retry: retries_total{class="connection"}).  Then
# every broker goes down and up again: /healthz and kafka_up follow.
# Every wait is bounded; the feeder, Kafka and the cluster are stopped by
# PID when the script exits, however it exits.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
export RO_ROOT
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"
# shellcheck source=test/lib/pg.sh
. "$RO_ROOT/test/lib/pg.sh"
# shellcheck source=test/lib/kafka.sh
. "$RO_ROOT/test/lib/kafka.sh"

TOPIC=orders
GROUP=metrics-01
PARTITIONS=3
VALID=40
REDELIV=12
BAD=3
TOMBS=2
LATE=5
P=received_orders_feeder_

tap_plan 47

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-metrics.XXXXXX")
FEEDER_PID=
FEEDER_LOG=$WORK/feeder.log
METRICS=

# cleanup — kill the feeder by PID, stop Kafka; keep the work directory
# (feeder log, scrapes) when something failed
cleanup() {
	if [[ -n $FEEDER_PID ]] && kill -0 "$FEEDER_PID" 2>/dev/null; then
		kill -KILL "$FEEDER_PID" 2>/dev/null || true
		wait "$FEEDER_PID" 2>/dev/null || true
	fi
	kafka_stop
	if [[ $TAP__FAILED != 0 || ${RO_KEEP_TMP:-0} == 1 ]]; then
		tap_diag "kept $WORK"
		[[ -f $FEEDER_LOG ]] && tap_diag "$(tail -n 20 "$FEEDER_LOG")"
	else
		rm -rf -- "$WORK"
	fi
}
ro_on_exit cleanup

# scrape — GET /metrics into $WORK/metrics.txt (headers in metrics.hdr)
scrape() {
	curl -sS --max-time 5 -D "$WORK/metrics.hdr" -o "$WORK/metrics.txt" "http://$METRICS/metrics"
}

# metric SERIES — the value of one series (name with labels, prefix
# omitted) in the last scrape; empty when absent
metric() {
	awk -v s="$P$1" '$1 == s { print $2 }' "$WORK/metrics.txt"
}

# metric_is SERIES VALUE — scrape, then compare (for ro_wait_until)
metric_is() {
	scrape && [[ $(metric "$1") == "$2" ]]
}

# health — "STATUS BODY" of GET /healthz
health() {
	curl -sS --max-time 5 -o "$WORK/health.body" -w '%{http_code}' "http://$METRICS/healthz" \
		>"$WORK/health.code" || return 1
	printf '%s %s\n' "$(cat "$WORK/health.code")" "$(cat "$WORK/health.body")"
}

# health_like REGEX — /healthz answers matching REGEX (for ro_wait_until)
health_like() {
	local h
	h=$(health) || return 1
	[[ $h =~ $1 ]]
}

# event N REF — an OrderReceived event for order N
event() {
	printf '{"type":"OrderReceived","orderId":"00000000-0000-4000-8000-%012d","externalReference":"%s","amount":%d}' \
		"$1" "$2" "$1"
}

# stream P — the known stream of partition P as kcat input "KEY<TAB>VALUE"
stream() {
	local p=$1 i n
	for ((i = 1; i <= VALID; i++)); do
		n=$((p * 1000 + i))
		printf 'o%d\t%s\n' "$n" "$(event "$n" "EXT-$n")"
		if ((i <= REDELIV)); then
			printf 'o%d-again\t%s\n' "$n" "$(event "$n" "EXT-$n")"
		fi
		if ((i == 5)); then
			printf 'o%d-divergent\t%s\n' "$n" "$(event "$n" "OTHER-$n")"
		fi
		if ((i <= BAD)); then
			printf 'bad-%d-%d\t{"orderId":"00000000-0000-4000-8000-%012d", broken\n' "$p" "$i" "$n"
		fi
		if ((i <= TOMBS)); then
			printf 'tomb-%d-%d\t\n' "$p" "$i"
		fi
	done
}

# --- setup: cluster, database, Kafka, stream --------------------------------

DB_DIR=
pg_start DB_DIR >&2 || tap_bail "could not start a dedicated PostgreSQL cluster"
pg_createdb ro_metrics received_orders >&2 || tap_bail "could not create the database"
DSN="host=$PGHOST port=$PGPORT dbname=ro_metrics user=postgres"
kafka_start 1 "$TOPIC:$PARTITIONS" || tap_bail "could not start the development Kafka"
for ((p = 0; p < PARTITIONS; p++)); do
	stream $p | kafka_produce "$TOPIC" $p || tap_bail "kcat could not produce"
done
DIVERGENT=1
CONSUMED=$((PARTITIONS * (VALID + REDELIV + DIVERGENT + BAD + TOMBS)))

# --- a bad address is a usage error ----------------------------------------

status=0
"$(ro_feeder_bin)" --brokers "$KAFKA_BOOTSTRAP" --topic "$TOPIC" --dsn "$DSN" \
	--metrics-listen 127.0.0.1:notaport >/dev/null 2>"$WORK/usage.err" </dev/null || status=$?
tap_is "$status" 2 "--metrics-listen with a malformed address exits 2"

# --- the feeder with its endpoint on a free port ----------------------------

"$(ro_feeder_bin)" --brokers "$KAFKA_BOOTSTRAP" --topic "$TOPIC" --group "$GROUP" --dsn "$DSN" \
	--metrics-listen 127.0.0.1:0 --batch-size 7 --batch-wait-ms 20 --stats-interval 1 \
	--retry-backoff-max-ms 1000 -X session.timeout.ms=6000 -X auto.commit.interval.ms=200 \
	</dev/null >"$WORK/feeder.out" 2>"$FEEDER_LOG" &
FEEDER_PID=$!

listening() {
	METRICS=$(sed -n 's/.*event=metrics_listening addr=\([0-9.]*:[0-9]*\).*/\1/p' "$FEEDER_LOG" | head -n 1)
	[[ -n $METRICS ]]
}
tap_cmd "the feeder logs event=metrics_listening with the port it bound" ro_wait_until 20 listening
tap_last_ok || tap_bail "no metrics address in the feeder log"
listening # tap_cmd ran it in a subshell: set METRICS here
tap_like "$METRICS" '^127\.0\.0\.1:[1-9][0-9]*$' "it listens on 127.0.0.1 and a real port ($METRICS)"

tap_cmd "the feeder catches up: committed offsets reach the end offsets" \
	kafka_wait_caught_up "$GROUP" "$TOPIC" 90
tap_cmd "/healthz answers 200 ok while consuming with the database up" \
	ro_wait_until 20 health_like '^200 ok$'
tap_cmd "/metrics shows every consumed message" \
	ro_wait_until 10 metric_is messages_consumed_total "$CONSUMED"

# --- every counter equals the known count -----------------------------------

scrape
cp "$WORK/metrics.txt" "$WORK/metrics.caught-up.txt"
tap_like "$(tr -d '\r' <"$WORK/metrics.hdr" | grep -i '^content-type:')" \
	'^[Cc]ontent-[Tt]ype: text/plain; version=0\.0\.4; charset=utf-8$' \
	"/metrics is served as text exposition format 0.0.4"
tap_is "$(metric messages_consumed_total)" "$CONSUMED" "messages_consumed_total = $CONSUMED produced"
tap_is "$(metric 'events_total{outcome="inserted"}')" $((PARTITIONS * VALID)) \
	"events_total{outcome=\"inserted\"} = $((PARTITIONS * VALID)) distinct orders"
tap_is "$(metric 'events_total{outcome="duplicate"}')" $((PARTITIONS * REDELIV)) \
	"events_total{outcome=\"duplicate\"} = $((PARTITIONS * REDELIV)) redeliveries"
tap_is "$(metric 'events_total{outcome="conflict"}')" $((PARTITIONS * DIVERGENT)) \
	"events_total{outcome=\"conflict\"} = $((PARTITIONS * DIVERGENT)) divergent duplicates"
tap_is "$(metric 'events_total{outcome="rejected"}')" $((PARTITIONS * BAD)) \
	"events_total{outcome=\"rejected\"} = $((PARTITIONS * BAD)) malformed values"
tap_is "$(metric tombstones_total)" $((PARTITIONS * TOMBS)) "tombstones_total = $((PARTITIONS * TOMBS))"
tap_is "$(pg_query ro_metrics 'SELECT count(*) FROM received_orders.received_orders')" \
	$((PARTITIONS * VALID)) "the database agrees: $((PARTITIONS * VALID)) rows"
batches=$(metric batches_total)
tap_like "$batches" '^[1-9][0-9]*$' "batches_total is positive ($batches)"
tap_is "$(metric batch_duration_seconds_count)" "$batches" \
	"batch_duration_seconds_count = batches_total"
tap_is "$(metric 'batch_duration_seconds_bucket{le="+Inf"}')" "$batches" \
	"the +Inf bucket holds every batch"
tap_like "$(metric offsets_committed_total)" '^[0-9]+$' "offsets_committed_total is exposed"
committed_each() {
	scrape && (($(metric offsets_committed_total) >= PARTITIONS))
}
tap_cmd "offsets_committed_total counts a commit for each of the $PARTITIONS partitions" \
	ro_wait_until 10 committed_each
scrape
tap_is "$(awk -v p="$P" 'index($1, p "retries_total{") == 1 { s += $2 } END { print s + 0 }' "$WORK/metrics.txt")" \
	0 "no retries with the database up (retries_total sums to 0 over the classes)"
tap_is "$(metric database_up) $(metric kafka_up) $(metric assigned_partitions)" "1 1 $PARTITIONS" \
	"database_up 1, kafka_up 1, assigned_partitions $PARTITIONS"
lags_zero() {
	scrape && [[ $(awk -v p="$P" 'index($1, p "consumer_lag{") == 1 && $2 == 0' "$WORK/metrics.txt" |
		wc -l) == "$PARTITIONS" ]]
}
tap_cmd "consumer_lag is 0 for each of the $PARTITIONS partitions once caught up" ro_wait_until 10 lags_zero
# Every sample belongs to a family announced by both a HELP and a TYPE line
# (a histogram's _bucket, _sum and _count samples to the histogram's family).
families_missing() {
	awk '
		$1 == "#" && $2 == "HELP" { help[$3] = 1; next }
		$1 == "#" && $2 == "TYPE" { type[$3] = $4; next }
		/^#/ || NF == 0 { next }
		{
			name = $1; sub(/\{.*/, "", name); fam = name
			if (!(fam in type)) { sub(/_(bucket|sum|count)$/, "", fam) }
			if (!(fam in type) || !(fam in help)) { print name }
			seen[fam] = 1
		}
		END { for (f in type) if (!(f in seen)) print "no samples: " f }
	' "$1" | sort -u
}
tap_is "$(families_missing "$WORK/metrics.caught-up.txt")" "" "every family has its HELP and TYPE lines"
families=$(grep -c "^# TYPE $P" "$WORK/metrics.caught-up.txt")
tap_ok "$((families >= 15 ? 0 : 1))" "the scrape announces every documented family ($families, at least 15)"
tap_cmd "promtool check metrics accepts the scrape" \
	bash -c 'promtool check metrics <"$1"' _ "$WORK/metrics.caught-up.txt"

# --- the HTTP surface --------------------------------------------------------

tap_is "$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "http://$METRICS/nope")" 404 \
	"another path answers 404"
tap_is "$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' -X POST -d x "http://$METRICS/metrics")" 405 \
	"another method answers 405"

# --- the database goes away, then comes back --------------------------------

tap_cmd "pg_ctl stop -m immediate" pg_ctl_as stop -m immediate -w
tap_cmd "/healthz turns 503 naming the database within 15 s" \
	ro_wait_until 15 health_like '^503 database unreachable: .+'
tap_diag "healthz while the database is down: $(health || true)"
tap_cmd "database_up turns 0" ro_wait_until 5 metric_is database_up 0
for ((i = 1; i <= LATE; i++)); do
	n=$((9000 + i))
	printf 'late-%d\t%s\n' "$n" "$(event "$n" "EXT-$n")"
done | kafka_produce "$TOPIC" 0 || tap_bail "kcat could not produce"
retried() {
	scrape && [[ $(metric 'retries_total{class="connection"}') -ge 1 ]]
}
tap_cmd "a batch waiting for the database counts retries_total{class=\"connection\"}" \
	ro_wait_until 20 retried
tap_cmd "the feeder stays up while the database is down" kill -0 "$FEEDER_PID"

tap_cmd "PostgreSQL restarts" pg_ctl_as start -w
tap_cmd "/healthz is 200 ok again within 20 s" ro_wait_until 20 health_like '^200 ok$'
tap_cmd "the feeder catches up again" kafka_wait_caught_up "$GROUP" "$TOPIC" 60
tap_cmd "events_total{outcome=\"inserted\"} counts the $LATE late orders" \
	ro_wait_until 10 metric_is 'events_total{outcome="inserted"}' $((PARTITIONS * VALID + LATE))
tap_is "$(metric database_up)" 1 "database_up is 1 again"
tap_like "$(metric db_reconnects_total)" '^[1-9][0-9]*$' "db_reconnects_total counts the reconnection"
tap_cmd "promtool still accepts the scrape after the outage" \
	bash -c 'promtool check metrics <"$1"' _ "$WORK/metrics.txt"

# --- every broker goes away, then comes back ---------------------------------

tap_cmd "every Kafka broker goes down" kafka_broker_down -1
tap_cmd "/healthz turns 503 kafka brokers down within 20 s" \
	ro_wait_until 20 health_like '^503 kafka brokers down$'
tap_cmd "kafka_up turns 0" ro_wait_until 5 metric_is kafka_up 0
tap_cmd "the brokers come back" kafka_broker_up -1
tap_cmd "/healthz is 200 ok again within 20 s (statistics show a broker up)" \
	ro_wait_until 20 health_like '^200 ok$'
scrape || true
tap_is "$(metric kafka_up)" 1 "kafka_up is 1 again"

# --- shutdown ---------------------------------------------------------------

kill -TERM "$FEEDER_PID"
deadline=$((SECONDS + 30))
while kill -0 "$FEEDER_PID" 2>/dev/null && ((SECONDS < deadline)); do
	sleep 0.1
done
status=0
if kill -0 "$FEEDER_PID" 2>/dev/null; then
	status=timeout
else
	wait "$FEEDER_PID" || status=$?
	FEEDER_PID=
fi
tap_is "$status" 0 "SIGTERM: the feeder exits 0 within 30 s"

tap_cmd "promtool check rules accepts the shipped alert rules" \
	promtool check rules "$RO_ROOT/deploy/received-orders-feeder.rules.yml"

tap_done
