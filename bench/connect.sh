#!/bin/bash
# bench/connect.sh — Kafka Connect with Debezium's JDBC sink, the anchor the
# feeder is measured against (bench/anchor, bench/real-latency --anchor).
# Sourced after test/lib/apache_kafka.sh (ak__cache, AK_DIR, AK_BOOTSTRAP,
# AK_JVM_PROFILE).
#
#   connect_install            the jars of tools/kafka-connect/pom.xml (Kafka
#                              Connect's runtime, Debezium's JDBC sink), by
#                              Maven into the cache; sets CONNECT_LIB
#   connect_jvm_flags DIR      the worker's JVM flags for AK_JVM_PROFILE:
#                              test: a 512 MB heap; production: the heap of
#                              Kafka's own connect-standalone.sh (-Xms256M
#                              -Xmx2G) and kafka-run-class.sh's performance,
#                              GC log (DIR/connect-gc.log) and JMX options,
#                              as the broker's (ak__run_class_flags)
#   connect_worker_properties DIR PORT
#                              a standalone worker's settings in
#                              DIR/worker.properties: JsonConverter with
#                              schemas, a REST listener on 127.0.0.1:PORT
#                              (sets CONNECT_URL), sinks reading from the
#                              earliest offset
#   connect_sink_properties NAME TOPIC TASKS JDBC_URL USER TABLE
#                              Debezium's JDBC sink connector's settings
#                              (upsert on order_id, as a user of the stock
#                              converter would set it), KEY=VALUE lines
#   connect_start DIR [CONNECTOR_FILE]
#                              a standalone worker in the background, its
#                              output in DIR/connect.log (warnings, and the
#                              consumers' assignments); sets CONNECT_PID
#   connect_add NAME PROPERTIES_FILE
#                              create connector NAME over the worker's REST
#                              API (CONNECT_URL; its KEY=VALUE lines as the
#                              config)
#   connect_assigned DIR NAME  "CLIENTS PARTITIONS": how many of connector
#                              NAME's consumers logged an assignment in
#                              DIR/connect.log, and the partitions their
#                              latest ones add up to
#   connect_delete NAME        delete connector NAME over the REST API
#   connect_stop               stop the worker, by its PID (SIGTERM, then
#                              SIGKILL after 30 s)

CONNECT_PID=

connect_install() {
	local pom=$RO_ROOT/tools/kafka-connect/pom.xml digest dir
	digest=$(sha256sum "$pom" | cut -c1-16)
	dir=$(ak__cache)/connect-$digest
	CONNECT_LIB=$dir/lib
	[[ -f $dir/complete ]] && return 0
	ro_require_commands mvn || exit 1
	mkdir -p "$dir"
	rm -rf "$dir/lib"
	ro_log "resolving Kafka Connect and Debezium's JDBC sink into $dir"
	mvn -B -C -q -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$dir/lib" </dev/null >"$dir/mvn.log" 2>&1 ||
		ro_die "mvn dependency:copy-dependencies failed: $(tail -n 20 "$dir/mvn.log")"
	touch "$dir/complete"
}

connect_jvm_flags() {
	case ${AK_JVM_PROFILE:-test} in
	production) echo "-Xms256M -Xmx2G $(ak__run_class_flags "$1/connect-gc.log")" ;;
	*) echo "-Xms256m -Xmx512m" ;;
	esac
}

connect_worker_properties() {
	cat >"$1/worker.properties" <<-EOF
		bootstrap.servers=$AK_BOOTSTRAP
		key.converter=org.apache.kafka.connect.storage.StringConverter
		value.converter=org.apache.kafka.connect.json.JsonConverter
		value.converter.schemas.enable=true
		offset.storage.file.filename=$1/offsets
		offset.flush.interval.ms=1000
		listeners=http://127.0.0.1:$2
		consumer.auto.offset.reset=earliest
		plugin.discovery=service_load
	EOF
	CONNECT_URL=http://127.0.0.1:$2
}

connect_sink_properties() {
	cat <<-EOF
		name=$1
		connector.class=io.debezium.connector.jdbc.JdbcSinkConnector
		tasks.max=$3
		topics=$2
		connection.url=$4
		connection.username=$5
		connection.password=
		insert.mode=upsert
		primary.key.mode=record_value
		primary.key.fields=order_id
		delete.enabled=false
		schema.evolution=none
		collection.name.format=$6
		use.time.zone=UTC
	EOF
}

connect_start() {
	local flags
	flags=$(connect_jvm_flags "$1")
	echo "--- start $(date +%T.%N) $flags" >"$1/connect.log"
	# the broker's logging, and the consumers' assignments (connect_assigned)
	{
		cat "$AK_DIR/log4j2.properties"
		echo 'logger.assign.name = org.apache.kafka.clients.consumer.internals.ConsumerRebalanceListenerInvoker'
		echo 'logger.assign.level = info'
	} >"$1/log4j2.properties"
	# shellcheck disable=SC2086 # the flags are a list of options
	java $flags -Dlog4j2.configurationFile="$1/log4j2.properties" \
		-cp "$CONNECT_LIB/*" org.apache.kafka.connect.cli.ConnectStandalone \
		"$1/worker.properties" ${2:+"$2"} \
		</dev/null >>"$1/connect.log" 2>&1 &
	CONNECT_PID=$!
}

connect_add() {
	python3 - "$CONNECT_URL" "$1" "$2" <<-'EOF'
		import json, sys, urllib.error, urllib.request
		url, name, path = sys.argv[1:]
		config = {}
		for line in open(path):
		    line = line.rstrip("\n")
		    if line and not line.startswith("#"):
		        key, value = line.split("=", 1)
		        config[key] = value
		request = urllib.request.Request(url + "/connectors", method="POST",
		    data=json.dumps({"name": name, "config": config}).encode(),
		    headers={"Content-Type": "application/json"})
		try:
		    urllib.request.urlopen(request, timeout=60)
		except urllib.error.HTTPError as e:
		    sys.exit("Connect refused connector %s (HTTP %d): %s" % (name, e.code, e.read().decode()))
		except OSError as e:
		    sys.exit("Connect's REST API at %s: %s" % (url, e))
	EOF
}

connect_assigned() {
	awk -v group="groupId=connect-$2]" '
		index($0, group) && /Adding newly assigned partitions:/ {
			client = $0; sub(/.*clientId=/, "", client); sub(/,.*/, "", client)
			list = $0; sub(/.*Adding newly assigned partitions: */, "", list)
			last[client] = (list ~ /[^ ]/) ? split(list, parts, ",") : 0
		}
		END { for (c in last) { n++; sum += last[c] } printf "%d %d\n", n, sum }' "$1/connect.log"
}

connect_delete() {
	python3 -c 'import sys, urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1], method="DELETE"), timeout=60)' \
		"$CONNECT_URL/connectors/$1" 2>/dev/null || ro_log "could not delete connector $1"
}

connect_stop() {
	local i state
	[[ -n $CONNECT_PID ]] || return 0
	kill -TERM "$CONNECT_PID" 2>/dev/null || true
	# a child that exited stays a zombie (kill -0 succeeds) until waited for
	for ((i = 0; i < 300; i++)); do
		state=$(cut -d' ' -f3 "/proc/$CONNECT_PID/stat" 2>/dev/null) || break
		[[ $state == Z ]] && break
		sleep 0.1
	done
	[[ ${state:-Z} == Z ]] || kill -KILL "$CONNECT_PID" 2>/dev/null || true
	wait "$CONNECT_PID" 2>/dev/null || true
	CONNECT_PID=
}
