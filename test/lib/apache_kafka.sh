# test/lib/apache_kafka.sh — a real Apache Kafka cluster (KRaft, 1 or 3
# nodes) for the real-cluster suites, the demo and the bench
#
# Sourced (bash) after common.sh.  The broker jars are those pinned by
# tools/apache-kafka/pom.xml, copied by Maven (checksums enforced) into a
# cache directory, never into the tree.  Each node is one JVM acting as
# broker and controller (process.roles=broker,controller) on free loopback
# ports, with a small heap.  Functions:
#
#   ak_install              resolve the pinned jars into $AK_LIB (once per
#                           pom.xml digest; reused when present)
#   ak_start NODES          format and start NODES (1 or 3) nodes, wait until
#                           every one serves metadata (kcat -L; without
#                           kcat or java it fails at once); exports
#                           AK_BOOTSTRAP (and KAFKA_BOOTSTRAP, which the
#                           suites' helpers read), sets AK_DIR, AK_PIDS[i],
#                           AK_PORTS[i] (client port of node i, 1-based);
#                           stopped by PID at exit.  3 nodes: replication
#                           factor 3, min.insync.replicas=2 for every topic
#                           and the internal ones
#   ak_stop                 stop every node (SIGTERM, then SIGKILL after 30 s)
#   ak_kill NODE            kill -9 one node
#   ak_stop_node NODE       SIGTERM one node, wait until it exited
#   ak_start_node NODE      start one stopped node again (same data, ports)
#   ak_wait_serving NODE [SECONDS]
#                           wait until NODE answers a metadata request
#   ak_java CLASS ARGS...   run a main class of the pinned jars (the tools:
#                           org.apache.kafka.tools.TopicCommand, ...)
#   ak_topics ARGS...       TopicCommand against the cluster
#   ak_create_topic TOPIC PARTITIONS [--config K=V ...]
#   ak_leaders TOPIC        "PARTITION LEADER" per partition (from kcat -L)
#
#   ak_save                 write the cluster's variables to $AK_DIR/env
#   ak_attach DIR           use the cluster another process started and
#                           saved in DIR (test/run's per-suite cluster); it
#                           is not stopped at this shell's exit
#
# Every node has a PLAINTEXT listener for clients (AK_BOOTSTRAP; its
# principal, ANONYMOUS, is a super user) and, with AK_SASL=1 set before
# ak_start, a SASL_SSL one (AK_SASL_BOOTSTRAP; the users of AK_SASL_USERS,
# "NAME:PASSWORD" words, for SCRAM-SHA-512 and SCRAM-SHA-256 (created at
# format time) and for PLAIN (in the listener's JAAS line)) and an SSL one
# demanding a client certificate (AK_MTLS_BOOTSTRAP; ssl.client.auth=
# required, the principal is the certificate's CN: User:ro-tls-feeder for
# $AK_DIR/tls/client.pem and .key; rogue-client.pem and .key carry the same
# CN signed by another CA), all with StandardAuthorizer: a user may only do
# what ACLs allow.  The certificates come from a test CA made at start
# (AK_CA, its PEM; the server's for IP 127.0.0.1).  With AK_OIDC=1 too, an
# OIDC issuer (tools/oidc-issuer/Issuer.java, HTTPS with the test CA, at
# AK_OIDC_TOKEN_URL; its clients AK_OIDC_CLIENTS, "ID:SECRET:LIFETIME"
# words; a line per token served in AK_OIDC_LOG) and a SASL_SSL listener
# for OAUTHBEARER (AK_OIDC_BOOTSTRAP) whose tokens Kafka's
# OAuthBearerValidatorCallbackHandler checks against the issuer's JWKS
# (audience AK_OIDC_AUDIENCE, 2 s of clock skew, re-authentication when a
# token expires); the principal is User:<client id>.  Inter-node traffic
# uses listeners of its own.  AK_EXTRA_CONFIG: lines appended to
# every node's server.properties; AK_HEAP: default -Xms128m -Xmx256m;
# AK_JVM_PROFILE: "test" (default: SerialGC, C1 only, AK_HEAP, for fast
# starts) or "production" (the flags Kafka's own kafka-server-start.sh and
# kafka-run-class.sh give a broker: a 1 GB heap, G1 with a 20 ms pause
# goal, C2, JMX, GC logging to nodeI/kafkaServer-gc.log; AK_HEAP unused),
# for the bench;
# AK_DETACH=1: ak_start registers no exit handler (the cluster outlives the
# shell that started it; ak_stop, from ak_attach, ends it).
#
# AK_POM: the pom of the jars, default tools/apache-kafka/pom.xml (the
# pinned 4.x line); tools/apache-kafka/pom-3.x.xml pins a 3.x broker (KRaft,
# formatted by the same StorageTool command) for the compatibility runs.
#
# Cache: $RO_KAFKA_CACHE, else /var/cache/received_orders/kafka when root,
# else ${XDG_CACHE_HOME:-~/.cache}/received_orders/kafka.

AK_DIR=
AK_BOOTSTRAP=
AK_NODES=0
AK_PIDS=()
AK_PORTS=()
AK_CONTROLLER_PORTS=()
AK_INTERNAL_PORTS=()
AK_LIB=
AK_SASL_PORTS=()
AK_SASL=${AK_SASL:-0}
AK_SASL_BOOTSTRAP=
AK_SASL_USERS=${AK_SASL_USERS:-}
AK_CA=
AK_MTLS_PORTS=()
AK_MTLS_BOOTSTRAP=
AK_OIDC=${AK_OIDC:-0}
AK_OIDC_CLIENTS=${AK_OIDC_CLIENTS:-}
AK_OIDC_AUDIENCE=received-orders-kafka
AK_OIDC_PORTS=()
AK_OIDC_BOOTSTRAP=
AK_OIDC_ISSUER_PORT=
AK_OIDC_ISSUER_PID=
AK_OIDC_TOKEN_URL=
AK_OIDC_LOG=
AK_JVM_OPTS=
AK_EXTRA_CONFIG=${AK_EXTRA_CONFIG:-}
AK_HEAP=${AK_HEAP:--Xms128m -Xmx256m}
AK_JVM_PROFILE=${AK_JVM_PROFILE:-test}
AK_START_SECONDS=
AK__EXIT_SET=

# ak__log — diagnostics on stderr, TAP-safe
ak__log() {
	printf '# apache-kafka: %s\n' "$*" >&2
}

# ak__cache — the cache directory (see the header)
ak__cache() {
	if [[ -n ${RO_KAFKA_CACHE:-} ]]; then
		printf '%s\n' "$RO_KAFKA_CACHE"
	elif [[ $EUID == 0 ]]; then
		printf '%s\n' /var/cache/received_orders/kafka
	else
		printf '%s\n' "${XDG_CACHE_HOME:-$HOME/.cache}/received_orders/kafka"
	fi
}

# ak_install — copy the jars pinned by $AK_POM (see the header) and their
# dependencies into the cache, keyed by the pom's digest; Maven verifies
# every download's checksum (-C, and checksumPolicy fail in the pom).  A
# finished copy is marked by a stamp file and reused as it is
ak_install() {
	local pom=${AK_POM:-$RO_ROOT/tools/apache-kafka/pom.xml} digest dir log
	digest=$(sha256sum "$pom" | cut -c1-16)
	dir=$(ak__cache)/$digest
	AK_LIB=$dir/lib
	[[ -f $dir/complete ]] && return 0
	ro_require_commands mvn java || return 1
	mkdir -p "$dir" || return 1
	rm -rf "$dir/lib"
	log=$dir/mvn.log
	ak__log "resolving the pinned Apache Kafka jars into $dir"
	if ! mvn -B -C -q -f "$pom" dependency:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$dir/lib" </dev/null >"$log" 2>&1; then
		ak__log "mvn dependency:copy-dependencies failed: $(tail -n 20 "$log")"
		return 1
	fi
	touch "$dir/complete"
}

# ak_java CLASS ARGS... — run a main class of the pinned jars, quietly
ak_java() {
	[[ -n $AK_LIB ]] || ak_install || return 1
	java -Xmx256m -Dlog4j2.configurationFile="${AK_DIR:-/nonexistent}/log4j2-tools.properties" \
		-cp "$AK_LIB/*" "$@"
}

# ak__new_port — a free port none of this cluster's listeners has yet
ak__new_port() {
	local port taken=" ${AK_PORTS[*]} ${AK_INTERNAL_PORTS[*]} ${AK_CONTROLLER_PORTS[*]} ${AK_SASL_PORTS[*]} ${AK_MTLS_PORTS[*]} ${AK_OIDC_PORTS[*]} $AK_OIDC_ISSUER_PORT " try
	for ((try = 0; try < 20; try++)); do
		port=$(ro_free_port) || break
		[[ $taken == *" $port "* ]] || { echo "$port"; return 0; }
	done
	ak__log "no free TCP port found on 127.0.0.1"
	return 1
}

# ak__write_config NODE — server.properties of node NODE (1-based)
ak__write_config() {
	local i=$1 n=$AK_NODES dir=$AK_DIR/node$1 voters= j rf isr listeners protocols plain= user
	for ((j = 1; j <= n; j++)); do
		voters+="${voters:+,}$j@127.0.0.1:${AK_CONTROLLER_PORTS[j]}"
	done
	if ((n >= 3)); then rf=3 isr=2; else rf=1 isr=1; fi
	listeners="CLIENT://127.0.0.1:${AK_PORTS[i]},INTERNAL://127.0.0.1:${AK_INTERNAL_PORTS[i]},CONTROLLER://127.0.0.1:${AK_CONTROLLER_PORTS[i]}"
	advertised="CLIENT://127.0.0.1:${AK_PORTS[i]},INTERNAL://127.0.0.1:${AK_INTERNAL_PORTS[i]}"
	protocols="CLIENT:PLAINTEXT,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT"
	if [[ $AK_SASL == 1 ]]; then
		listeners+=",SASL://127.0.0.1:${AK_SASL_PORTS[i]},MTLS://127.0.0.1:${AK_MTLS_PORTS[i]}"
		advertised+=",SASL://127.0.0.1:${AK_SASL_PORTS[i]},MTLS://127.0.0.1:${AK_MTLS_PORTS[i]}"
		protocols+=",SASL:SASL_SSL,MTLS:SSL"
	fi
	if [[ $AK_OIDC == 1 ]]; then
		listeners+=",OIDC://127.0.0.1:${AK_OIDC_PORTS[i]}"
		advertised+=",OIDC://127.0.0.1:${AK_OIDC_PORTS[i]}"
		protocols+=",OIDC:SASL_SSL"
	fi
	mkdir -p "$dir/data"
	cat >"$dir/server.properties" <<-EOF
		# node $i of $n, written by test/lib/apache_kafka.sh
		node.id=$i
		process.roles=broker,controller
		controller.quorum.voters=$voters
		controller.listener.names=CONTROLLER
		listeners=$listeners
		advertised.listeners=$advertised
		listener.security.protocol.map=$protocols
		inter.broker.listener.name=INTERNAL
		log.dirs=$dir/data
		num.partitions=1
		default.replication.factor=$rf
		min.insync.replicas=$isr
		offsets.topic.replication.factor=$rf
		offsets.topic.num.partitions=6
		transaction.state.log.replication.factor=$rf
		transaction.state.log.min.isr=$isr
		transaction.state.log.num.partitions=6
		share.coordinator.state.topic.replication.factor=$rf
		share.coordinator.state.topic.min.isr=$isr
		group.initial.rebalance.delay.ms=0
		group.min.session.timeout.ms=1000
		auto.create.topics.enable=false
		num.network.threads=2
		num.io.threads=2
		background.threads=2
		log.cleaner.threads=1
		log.cleaner.dedupe.buffer.size=8388608
		log.cleaner.backoff.ms=1000
		log.segment.bytes=1048576
		unclean.leader.election.enable=false
		controlled.shutdown.enable=true
	EOF
	if [[ $AK_SASL == 1 ]]; then
		for user in $AK_SASL_USERS; do
			plain+=" user_${user%%:*}=\"${user#*:}\""
		done
		cat >>"$dir/server.properties" <<-EOF
			sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256,PLAIN
			listener.name.sasl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required$plain;
			listener.name.sasl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
			listener.name.sasl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
			ssl.keystore.type=PKCS12
			ssl.keystore.location=$AK_DIR/tls/server.p12
			ssl.keystore.password=ro-test-keystore
			ssl.key.password=ro-test-keystore
			authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
			allow.everyone.if.no.acl.found=false
			super.users=User:ANONYMOUS
			listener.name.mtls.ssl.client.auth=required
			listener.name.mtls.ssl.truststore.type=PEM
			listener.name.mtls.ssl.truststore.location=$AK_CA
			ssl.principal.mapping.rules=RULE:^CN=([^,]*)$/\$1/,DEFAULT
		EOF
	fi
	if [[ $AK_OIDC == 1 ]]; then
		cat >>"$dir/server.properties" <<-EOF
			listener.name.oidc.sasl.enabled.mechanisms=OAUTHBEARER
			listener.name.oidc.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;
			listener.name.oidc.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
			listener.name.oidc.oauthbearer.connections.max.reauth.ms=3600000
			sasl.oauthbearer.jwks.endpoint.url=https://127.0.0.1:$AK_OIDC_ISSUER_PORT/jwks
			sasl.oauthbearer.expected.audience=$AK_OIDC_AUDIENCE
			sasl.oauthbearer.expected.issuer=https://127.0.0.1:$AK_OIDC_ISSUER_PORT
			sasl.oauthbearer.clock.skew.seconds=2
		EOF
	fi
	[[ -n $AK_EXTRA_CONFIG ]] && printf '%s\n' "$AK_EXTRA_CONFIG" >>"$dir/server.properties"
	return 0
}

# ak__issue NAME SUBJECT EXTENSIONS [CA] — a key and a certificate
# $AK_DIR/tls/NAME.{key,pem} signed by CA (default ca: $AK_DIR/tls/ca.*)
ak__issue() {
	local t=$AK_DIR/tls ca=${4:-ca}
	openssl req -new -newkey rsa:2048 -nodes -keyout "$t/$1.key" -subj "$2" \
		-out "$t/$1.csr" 2>/dev/null &&
		openssl x509 -req -in "$t/$1.csr" -CA "$t/$ca.pem" -CAkey "$t/$ca.key" \
			-set_serial "0x$(openssl rand -hex 8)" -days 30 \
			-extfile <(printf '%s\n' "$3") -out "$t/$1.pem" 2>/dev/null
}

# ak__make_certificate — the test CA (AK_CA, its PEM), the server
# certificate for IP 127.0.0.1 in a PKCS12 keystore, the client
# certificates of the SSL listener and a truststore of the CA for the
# brokers' JVMs (the JWKS fetch)
ak__make_certificate() {
	local t=$AK_DIR/tls ca
	mkdir -p "$t"
	for ca in ca rogue-ca; do
		openssl req -x509 -newkey rsa:2048 -nodes -keyout "$t/$ca.key" -out "$t/$ca.pem" \
			-days 30 -subj "/CN=received_orders test $ca" 2>/dev/null || return 1
	done
	ak__issue server /CN=127.0.0.1 "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth" || return 1
	ak__issue client /CN=ro-tls-feeder "extendedKeyUsage=clientAuth" || return 1
	ak__issue rogue-client /CN=ro-tls-feeder "extendedKeyUsage=clientAuth" rogue-ca || return 1
	openssl pkcs12 -export -in "$t/server.pem" -inkey "$t/server.key" -name server \
		-out "$t/server.p12" -passout pass:ro-test-keystore || return 1
	keytool -importcert -noprompt -alias ca -file "$t/ca.pem" -storetype PKCS12 \
		-keystore "$t/truststore.p12" -storepass ro-test-keystore >/dev/null 2>&1 || return 1
	AK_CA=$t/ca.pem
}

# ak__start_issuer — start the OIDC issuer (see the header) on
# AK_OIDC_ISSUER_PORT; the brokers' JVMs trust the test CA and may fetch
# its JWKS (Kafka 4 fetches only URLs its allowed.urls property names)
ak__start_issuer() {
	local t=$AK_DIR/tls url=https://127.0.0.1:$AK_OIDC_ISSUER_PORT client clients=()
	for client in $AK_OIDC_CLIENTS; do
		clients+=(--client "$client")
	done
	AK_OIDC_LOG=$AK_DIR/oidc-issuer.log
	java -Xmx64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		"$RO_ROOT/tools/oidc-issuer/Issuer.java" --port "$AK_OIDC_ISSUER_PORT" \
		--keystore "$t/server.p12" --password ro-test-keystore \
		--issuer "$url" --audience "$AK_OIDC_AUDIENCE" --log "$AK_OIDC_LOG" "${clients[@]}" \
		</dev/null >>"$AK_DIR/oidc-issuer.err" 2>&1 &
	AK_OIDC_ISSUER_PID=$!
	echo "$AK_OIDC_ISSUER_PID" >"$AK_DIR/oidc-issuer.pid"
	AK_OIDC_TOKEN_URL=$url/token
	AK_JVM_OPTS="-Djavax.net.ssl.trustStore=$t/truststore.p12 -Djavax.net.ssl.trustStorePassword=ro-test-keystore -Djavax.net.ssl.trustStoreType=PKCS12 -Dorg.apache.kafka.sasl.oauthbearer.allowed.urls=$url/jwks"
}

# ak__wait_issuer — wait until the issuer answers its discovery document
# (60 s: it compiles itself first)
ak__wait_issuer() {
	local url=https://127.0.0.1:$AK_OIDC_ISSUER_PORT deadline=$((SECONDS + 60))
	until curl -sf --cacert "$AK_CA" "$url/.well-known/openid-configuration" >/dev/null 2>&1; do
		if ! kill -0 "$AK_OIDC_ISSUER_PID" 2>/dev/null || ((SECONDS > deadline)); then
			ak__log "the OIDC issuer does not serve: $(tail -n 5 "$AK_DIR/oidc-issuer.err")"
			return 1
		fi
		sleep 0.2
	done
}

# ak__write_log4j — a quiet console configuration (warnings and up) for
# the nodes and the tools
ak__write_log4j() {
	local f
	for f in log4j2.properties log4j2-tools.properties; do
		cat >"$AK_DIR/$f" <<-'EOF'
			status = error
			appender.out.type = Console
			appender.out.name = out
			appender.out.target = SYSTEM_ERR
			appender.out.layout.type = PatternLayout
			appender.out.layout.pattern = [%d] %p %m (%c)%n
			rootLogger.level = warn
			rootLogger.appenderRef.out.ref = out
			logger.kafka.name = kafka
			logger.kafka.level = warn
			logger.state.name = state.change.logger
			logger.state.level = error
		EOF
	done
	sed -i 's/^rootLogger.level = warn/rootLogger.level = error/' "$AK_DIR/log4j2-tools.properties"
}

# ak__run_class_flags GC_LOG — what kafka-run-class.sh (Kafka 4.1.1) adds
# to a start script's heap, in its order: KAFKA_JVM_PERFORMANCE_OPTS,
# KAFKA_GC_LOG_OPTS (its -loggc, Java >= 9) writing GC_LOG, KAFKA_JMX_OPTS;
# the broker's production flags and the Connect worker's (bench/connect.sh)
ak__run_class_flags() {
	echo "-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true" \
		"-Xlog:gc*:file=$1:time,tags:filecount=10,filesize=100M" \
		"-Dcom.sun.management.jmxremote -Dcom.sun.management.jmxremote.authenticate=false -Dcom.sun.management.jmxremote.ssl=false"
}

# ak__jvm_flags NODE — the JVM flags of node NODE for AK_JVM_PROFILE (see
# the header).  production: KAFKA_HEAP_OPTS of kafka-server-start.sh, then
# kafka-run-class.sh's (ak__run_class_flags)
ak__jvm_flags() {
	case $AK_JVM_PROFILE in
	test)
		echo "$AK_HEAP -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k -Djava.awt.headless=true"
		;;
	production)
		echo "-Xmx1G -Xms1G $(ak__run_class_flags "$AK_DIR/node$1/kafkaServer-gc.log")"
		;;
	*)
		ak__log "AK_JVM_PROFILE must be test or production, not $AK_JVM_PROFILE"
		return 1
		;;
	esac
}

# ak_start_node NODE — start node NODE's JVM in the background
ak_start_node() {
	local i=$1 dir=$AK_DIR/node$1 flags
	flags=$(ak__jvm_flags "$i") || return 1
	echo "--- start $(date +%T.%N) $flags" >>"$dir/server.log"
	# shellcheck disable=SC2086 # the flags and AK_JVM_OPTS are lists of options
	java $flags $AK_JVM_OPTS \
		-Dlog4j2.configurationFile="$AK_DIR/log4j2.properties" \
		-cp "$AK_LIB/*" kafka.Kafka "$dir/server.properties" \
		</dev/null >>"$dir/server.log" 2>&1 &
	AK_PIDS[i]=$!
	echo "${AK_PIDS[i]}" >"$dir/pid"
}

# ak__kcat_L NODE — one metadata request to NODE's client listener
ak__kcat_L() {
	timeout 10 kcat -b "127.0.0.1:${AK_PORTS[$1]}" -L -m 5 >/dev/null 2>&1
}

# ak__sees_all NODE — NODE answers metadata listing every node as a broker
ak__sees_all() {
	local n
	n=$(timeout 10 kcat -b "127.0.0.1:${AK_PORTS[$1]}" -L -m 5 -J 2>/dev/null |
		sed -nE 's/.*"brokers":\[([^]]*)\].*/\1/p' | grep -o '"id":' | wc -l) || return 1
	[[ $n == "$AK_NODES" ]]
}

# ak_wait_serving NODE [SECONDS] — NODE is up and sees every other node
ak_wait_serving() {
	local i=$1 deadline=$((SECONDS + ${2:-120}))
	while ((SECONDS < deadline)); do
		if ! kill -0 "${AK_PIDS[i]}" 2>/dev/null; then
			ak__log "node $i exited: $(tail -n 20 "$AK_DIR/node$i/server.log")"
			return 1
		fi
		ak__sees_all "$i" && return 0
		sleep 0.3
	done
	ak__log "node $i does not serve after ${2:-120} s: $(tail -n 20 "$AK_DIR/node$i/server.log")"
	return 1
}

# ak__cluster_id — a cluster id as StorageTool random-uuid makes one (one
# JVM start fewer): 16 random bytes, base64url without padding, never
# starting with "-", as Kafka's Uuid.randomUuid draws again too:
# StorageTool's argument parser takes "-t -..." for a missing value (1 start
# in 64 failed so)
ak__cluster_id() {
	local id=-
	while [[ $id == -* ]]; do
		id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
	done
	printf '%s\n' "$id"
}

# ak_start NODES — see the header
ak_start() {
	local n=$1 i cluster_id started=$SECONDS format_pids=() format_args=() user
	# every command a node's start needs, before the jars and the wait:
	# without kcat, no node would ever be seen serving
	ro_require_commands kcat java || return 1
	[[ $AK_SASL != 1 ]] || ro_require_commands keytool openssl || return 1
	[[ $AK_OIDC != 1 ]] || ro_require_commands curl || return 1
	AK_NODES=$n
	ak_install || return 1
	AK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ro-apache-kafka.XXXXXX") || return 1
	if [[ -z $AK__EXIT_SET && ${AK_DETACH:-0} != 1 ]]; then
		ro_on_exit ak_stop
		AK__EXIT_SET=1
	fi
	for ((i = 1; i <= n; i++)); do
		AK_PORTS[i]=$(ak__new_port) || return 1
		AK_INTERNAL_PORTS[i]=$(ak__new_port) || return 1
		AK_CONTROLLER_PORTS[i]=$(ak__new_port) || return 1
		AK_SASL_PORTS[i]=$(ak__new_port) || return 1
		AK_MTLS_PORTS[i]=$(ak__new_port) || return 1
		AK_OIDC_PORTS[i]=$(ak__new_port) || return 1
	done
	ak__write_log4j
	if [[ $AK_SASL == 1 || $AK_OIDC == 1 ]]; then
		ak__make_certificate || { ak__log "openssl or keytool could not make the certificates"; return 1; }
	fi
	if [[ $AK_OIDC == 1 ]]; then
		AK_OIDC_ISSUER_PORT=$(ak__new_port) || return 1
		ak__start_issuer || return 1
	fi
	if [[ $AK_SASL == 1 ]]; then
		for user in $AK_SASL_USERS; do
			format_args+=(--add-scram "SCRAM-SHA-512=[name=${user%%:*},password=${user#*:}]" --add-scram "SCRAM-SHA-256=[name=${user%%:*},password=${user#*:}]")
		done
	fi
	cluster_id=$(ak__cluster_id)
	for ((i = 1; i <= n; i++)); do
		ak__write_config "$i"
	done
	# format every node's storage at once: each is a JVM start
	for ((i = 1; i <= n; i++)); do
		ak_java kafka.tools.StorageTool format -t "$cluster_id" \
			-c "$AK_DIR/node$i/server.properties" "${format_args[@]}" \
			>"$AK_DIR/node$i/format.log" 2>&1 &
		format_pids[i]=$!
	done
	for ((i = 1; i <= n; i++)); do
		wait "${format_pids[i]}" ||
			{ ak__log "storage format of node $i failed: $(cat "$AK_DIR/node$i/format.log")"; return 1; }
	done
	[[ $AK_OIDC != 1 ]] || ak__wait_issuer || return 1
	for ((i = 1; i <= n; i++)); do
		ak_start_node "$i" || return 1
	done
	AK_BOOTSTRAP=
	AK_SASL_BOOTSTRAP=
	AK_MTLS_BOOTSTRAP=
	AK_OIDC_BOOTSTRAP=
	for ((i = 1; i <= n; i++)); do
		ak_wait_serving "$i" || return 1
		AK_BOOTSTRAP+="${AK_BOOTSTRAP:+,}127.0.0.1:${AK_PORTS[i]}"
		if [[ $AK_SASL == 1 ]]; then
			AK_SASL_BOOTSTRAP+="${AK_SASL_BOOTSTRAP:+,}127.0.0.1:${AK_SASL_PORTS[i]}"
			AK_MTLS_BOOTSTRAP+="${AK_MTLS_BOOTSTRAP:+,}127.0.0.1:${AK_MTLS_PORTS[i]}"
		fi
		[[ $AK_OIDC == 1 ]] && AK_OIDC_BOOTSTRAP+="${AK_OIDC_BOOTSTRAP:+,}127.0.0.1:${AK_OIDC_PORTS[i]}"
	done
	KAFKA_BOOTSTRAP=$AK_BOOTSTRAP
	export AK_BOOTSTRAP KAFKA_BOOTSTRAP
	AK_START_SECONDS=$((SECONDS - started))
	ak_save
	ak__log "$n node(s) serving at $AK_BOOTSTRAP after ${AK_START_SECONDS} s (cluster $cluster_id, $AK_DIR)"
}

# ak_stop_node NODE [SECONDS] — SIGTERM (a controlled shutdown: leadership
# moves away first), wait for the exit (30 s), then SIGKILL
ak_stop_node() {
	local i=$1 pid=${AK_PIDS[$1]:-} deadline=$((SECONDS + ${2:-30}))
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
		sleep 0.2
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	AK_PIDS[i]=
	return 0
}

# ak_kill NODE — kill -9 node NODE
ak_kill() {
	local pid=${AK_PIDS[$1]:-}
	[[ -n $pid ]] || return 0
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	AK_PIDS[$1]=
	return 0
}

# ak_save — the cluster's variables, for ak_attach, in $AK_DIR/env
ak_save() {
	declare -p AK_DIR AK_NODES AK_PORTS AK_INTERNAL_PORTS AK_CONTROLLER_PORTS \
		AK_SASL AK_SASL_PORTS AK_BOOTSTRAP AK_SASL_BOOTSTRAP AK_CA AK_LIB \
		AK_START_SECONDS AK_MTLS_PORTS AK_MTLS_BOOTSTRAP AK_OIDC AK_OIDC_PORTS \
		AK_OIDC_BOOTSTRAP AK_OIDC_ISSUER_PORT AK_OIDC_ISSUER_PID AK_OIDC_TOKEN_URL \
		AK_OIDC_LOG AK_OIDC_AUDIENCE AK_JVM_OPTS AK_JVM_PROFILE AK_HEAP | sed 's/^declare -[aA-Za-z]* /&-g /; s/^declare -- /declare -g /' >"$AK_DIR/env"
}

# ak_attach DIR — adopt the cluster saved in DIR/env; node PIDs are read
# from DIR/nodeI/pid (ak_start_node keeps them current)
ak_attach() {
	local i
	[[ -f $1/env ]] || { ak__log "no cluster saved in $1"; return 1; }
	# shellcheck disable=SC1091
	. "$1/env"
	for ((i = 1; i <= AK_NODES; i++)); do
		AK_PIDS[i]=$(cat "$AK_DIR/node$i/pid" 2>/dev/null)
	done
	KAFKA_BOOTSTRAP=$AK_BOOTSTRAP
	export AK_BOOTSTRAP KAFKA_BOOTSTRAP
}

# ak__stop_issuer — SIGTERM the OIDC issuer, wait for its exit (10 s; it
# may not be this shell's child), then SIGKILL
ak__stop_issuer() {
	local pid=$AK_OIDC_ISSUER_PID deadline=$((SECONDS + 10))
	[[ -n $pid ]] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do
		sleep 0.2
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	AK_OIDC_ISSUER_PID=
}

# ak_stop — stop every node and the OIDC issuer, by PID, and remove the data
ak_stop() {
	local i
	for ((i = 1; i <= AK_NODES; i++)); do
		[[ -n ${AK_PIDS[i]:-} ]] && { kill -TERM "${AK_PIDS[i]}" 2>/dev/null || true; }
	done
	for ((i = 1; i <= AK_NODES; i++)); do
		ak_stop_node "$i" 30
	done
	ak__stop_issuer
	if [[ -n $AK_DIR ]]; then
		if [[ ${RO_KEEP_TMP:-0} == 1 ]]; then
			ak__log "kept $AK_DIR"
		else
			rm -rf "$AK_DIR"
		fi
	fi
	AK_DIR=
	AK_NODES=0
	return 0
}

# ak_topics ARGS... — TopicCommand against the cluster
ak_topics() {
	ak_java org.apache.kafka.tools.TopicCommand --bootstrap-server "$AK_BOOTSTRAP" \
		${AK_ADMIN_CONFIG:+--command-config "$AK_ADMIN_CONFIG"} "$@"
}

# ak_create_topic TOPIC PARTITIONS [ARGS...] — create a topic (replication
# factor: the cluster's default)
ak_create_topic() {
	local topic=$1 partitions=$2
	shift 2
	ak_topics --create --topic "$topic" --partitions "$partitions" "$@" >/dev/null
}

# ak_leaders TOPIC — "PARTITION LEADER" of every partition of TOPIC
ak_leaders() {
	kcat -b "$AK_BOOTSTRAP" -L -t "$1" -m 5 2>/dev/null |
		sed -nE 's/^ *partition ([0-9]+), leader ([-0-9]+),.*/\1 \2/p' | sort -n
}
