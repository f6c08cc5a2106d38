# test/lib/schema_registry.sh — the stand-in Schema Registry and Confluent's
# official serializers, for the suites of Schema Registry topics (issue 26)
#
# Sourced by suites (bash), after common.sh.  The registry is
# test/schema-registry/registry.js (a stand-in for Confluent's Java server,
# see its header); the messages are made by Confluent's own serializers
# (@confluentinc/schemaregistry from the npm registry, pinned by
# test/schema-registry/package-lock.json) through produce.js.  Functions:
#
#   sr_npm_install          `npm ci` of the pinned packages, once per lock
#                           file, into $RO_NPM_DIR (default
#                           ~/.cache/received_orders/npm-<lock digest>)
#   sr_start DIR [USER:PASS [CERT KEY CA [CLIENT_CA CLIENT_CERT CLIENT_KEY]]]
#                           start the registry (basic auth when USER:PASS is
#                           given; https with CERT and KEY, whose CA file
#                           the clients here then trust; with CLIENT_CA it
#                           requires a TLS client certificate signed by it,
#                           and the clients here present CLIENT_CERT with
#                           CLIENT_KEY) on a free port; sets SR_URL and
#                           SR_PID; stopped by PID at exit
#   sr_stop                 stop it
#   sr_mode MODE            how /schemas/* answer: ok, slow, 500, 503, 404,
#                           401, 403 (registry.js's switches)
#   sr_stats KIND           requests of KIND (schemas_ids, ...) so far
#   sr_produce SPEC OUT_DIR one OUT_DIR/NAME.bin per message of SPEC (see
#                           produce.js), made by the official serializers;
#                           prints "NAME ID" lines
#
# A real registry beside the stand-in: Apicurio Registry, whose
# Confluent-compatible API (/apis/ccompat/v7) the same clients use.
#
#   sr_apicurio_install     build the Apicurio server pinned by
#                           tools/apicurio/pom.xml (Quarkus's build of the
#                           application jar from Maven Central, see the pom)
#                           into $SR_APICURIO_DIR, once per pom digest
#   sr_apicurio_start DIR [JAVA_OPTION...]
#                           start it (in-memory H2 storage, no auth) on a
#                           free port; sets SR_URL to its ccompat
#                           API, SR_APICURIO_URL to its root, SR_PID; stopped
#                           by PID at exit (sr_stop).  JAVA_OPTION: -D
#                           settings of Apicurio's (registry.ccompat...)
#
# Apicurio's cache: $RO_APICURIO_CACHE, else /var/cache/received_orders/
# apicurio when root, else ${XDG_CACHE_HOME:-~/.cache}/received_orders/apicurio.

SR_URL=
SR_PID=
SR_USER=
SR_CA=
SR_CLIENT=()		# curl's options of the client certificate, when required
SR_CLIENT_NODE=()	# produce.js's
SR_APICURIO_DIR=
SR_APICURIO_URL=

# sr_npm_install — the pinned npm packages, installed once (see header)
sr_npm_install() {
	local lock=$RO_ROOT/test/schema-registry/package-lock.json digest
	digest=$(sha256sum "$lock" | cut -c1-16)
	RO_NPM_DIR=${RO_NPM_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/received_orders/npm-$digest}
	if [ ! -f "$RO_NPM_DIR/node_modules/@confluentinc/schemaregistry/package.json" ]; then
		ro_require_commands npm || return 1
		mkdir -p "$RO_NPM_DIR" || return 1
		cp "$RO_ROOT/test/schema-registry/package.json" "$lock" "$RO_NPM_DIR/" || return 1
		(cd "$RO_NPM_DIR" && npm ci --no-audit --no-fund --loglevel=error) >"$RO_NPM_DIR/npm-ci.log" 2>&1 || {
			tail -n 20 "$RO_NPM_DIR/npm-ci.log" >&2
			return 1
		}
	fi
	export NODE_PATH=$RO_NPM_DIR/node_modules
}

# sr_start DIR [USER:PASS [CERT KEY CA]] — start the registry on a free port
sr_start() {
	local dir=$1 deadline tls=() scheme=http
	SR_USER=${2:-}
	SR_CA=${5:-}
	SR_CLIENT=()
	SR_CLIENT_NODE=()
	[ -n "${3:-}" ] && tls=(--tls-cert "$3" --tls-key "$4") && scheme=https
	if [ -n "${6:-}" ]; then
		tls+=(--tls-client-ca "$6")
		SR_CLIENT=(--cert "$7" --key "$8")
		SR_CLIENT_NODE=(--tls-cert "$7" --tls-key "$8")
	fi
	ro_require_commands node || return 1
	rm -f "$dir/sr.port"
	node "$RO_ROOT/test/schema-registry/registry.js" --port-file "$dir/sr.port" \
		${SR_USER:+--user "$SR_USER"} "${tls[@]}" >>"$dir/registry.log" 2>&1 &
	SR_PID=$!
	[ -n "${RO__SR_EXIT_SET:-}" ] || ro_on_exit sr_stop
	RO__SR_EXIT_SET=1
	deadline=$((SECONDS + 20))
	while [ ! -s "$dir/sr.port" ] && ((SECONDS < deadline)); do
		kill -0 "$SR_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	[ -s "$dir/sr.port" ] || return 1
	SR_URL=$scheme://127.0.0.1:$(cat "$dir/sr.port")
}

# sr_stop — stop the registry started here (by PID)
sr_stop() {
	[ -n "$SR_PID" ] || return 0
	kill -TERM "$SR_PID" 2>/dev/null
	wait "$SR_PID" 2>/dev/null
	SR_PID=
}

# sr_mode MODE — switch how schema lookups answer
sr_mode() {
	curl -sS --max-time 5 ${SR_CA:+--cacert "$SR_CA"} "${SR_CLIENT[@]}" -X PUT "$SR_URL/_control/mode/$1" >/dev/null
}

# sr_stats KIND — requests of KIND so far (0 when none)
sr_stats() {
	curl -sS --max-time 5 ${SR_CA:+--cacert "$SR_CA"} "${SR_CLIENT[@]}" "$SR_URL/_control/stats" |
		node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s)[process.argv[1]]||0))' "$1"
}

# sr_produce SPEC OUT_DIR — framed messages by the official serializers
sr_produce() {
	NODE_EXTRA_CA_CERTS=${SR_CA:-} node "$RO_ROOT/test/schema-registry/produce.js" --registry "$SR_URL" \
		${SR_USER:+--user "$SR_USER"} "${SR_CLIENT_NODE[@]}" --out "$2" "$1"
}

# sr_maven_central_url — the URL of the installed Maven's default repository
# (Maven Central), read from its super POM in maven-model-builder's jar
sr_maven_central_url() {
	local jar url
	jar=$(ls "$(dirname "$(readlink -f "$(command -v mvn)")")"/../lib/maven-model-builder-*.jar 2>/dev/null | head -n 1)
	[ -n "$jar" ] || return 1
	url=$(unzip -p "$jar" org/apache/maven/model/pom-4.0.0.xml 2>/dev/null |
		sed -n 's|.*<url>\(https\?://[^<]*\)</url>.*|\1|p' | head -n 1)
	[ -n "$url" ] || return 1
	printf '%s\n' "$url"
}

# sr_apicurio_install — the Apicurio server, built once (see the header):
# the pom and its settings (every repository mirrored to Maven Central) are
# copied into the cache and `mvn package` runs there, checksums enforced;
# the result is target/apicurio-registry-0-runner.jar and target/lib/
sr_apicurio_install() {
	local src=$RO_ROOT/tools/apicurio digest cache central
	if [ -n "${RO_APICURIO_CACHE:-}" ]; then
		cache=$RO_APICURIO_CACHE
	elif [ "$EUID" = 0 ]; then
		cache=/var/cache/received_orders/apicurio
	else
		cache=${XDG_CACHE_HOME:-$HOME/.cache}/received_orders/apicurio
	fi
	digest=$(cat "$src/pom.xml" "$src/settings.xml" | sha256sum | cut -c1-16)
	SR_APICURIO_DIR=$cache/$digest
	[ -f "$SR_APICURIO_DIR/complete" ] && return 0
	ro_require_commands mvn java || return 1
	rm -rf "$SR_APICURIO_DIR"
	mkdir -p "$SR_APICURIO_DIR" || return 1
	central=$(sr_maven_central_url) || {
		echo "# could not read Maven's default repository from its super POM" >&2
		return 1
	}
	cp "$src/pom.xml" "$SR_APICURIO_DIR/" || return 1
	sed "s|@CENTRAL_URL@|$central|" "$src/settings.xml" >"$SR_APICURIO_DIR/settings.xml" || return 1
	echo "# building Apicurio Registry into $SR_APICURIO_DIR" >&2
	if ! (cd "$SR_APICURIO_DIR" && mvn -B -C -q -s settings.xml package -DskipTests </dev/null >mvn.log 2>&1); then
		tail -n 20 "$SR_APICURIO_DIR/mvn.log" >&2
		return 1
	fi
	[ -f "$SR_APICURIO_DIR/target/apicurio-registry-0-runner.jar" ] || {
		echo "# the Quarkus build left no runner jar in $SR_APICURIO_DIR/target" >&2
		return 1
	}
	touch "$SR_APICURIO_DIR/complete"
}

# sr_apicurio_start DIR [JAVA_OPTION...] — see the header; waits (180 s)
# until the ccompat API answers on a free port drawn below the ephemeral
# range (Quarkus's port 0 is not logged at the log level kept here)
sr_apicurio_start() {
	local dir=$1 deadline port
	shift
	# without curl the wait below would last its 180 s
	ro_require_commands java curl || return 1
	sr_apicurio_install || return 1
	SR_USER=
	SR_CA=
	SR_CLIENT=()
	SR_CLIENT_NODE=()
	port=$(ro_free_port) || return 1
	: >"$dir/apicurio.log"
	java -Xms64m -Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
		-Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port="$port" \
		"$@" -jar "$SR_APICURIO_DIR/target/apicurio-registry-0-runner.jar" \
		</dev/null >>"$dir/apicurio.log" 2>&1 &
	SR_PID=$!
	[ -n "${RO__SR_EXIT_SET:-}" ] || ro_on_exit sr_stop
	RO__SR_EXIT_SET=1
	SR_APICURIO_URL=http://127.0.0.1:$port
	SR_URL=$SR_APICURIO_URL/apis/ccompat/v7
	deadline=$((SECONDS + 180))
	while ((SECONDS < deadline)); do
		kill -0 "$SR_PID" 2>/dev/null || { tail -n 20 "$dir/apicurio.log" >&2; return 1; }
		curl -sf --max-time 5 "$SR_URL/subjects" >/dev/null && return 0
		sleep 0.5
	done
	echo "# Apicurio did not serve within 180 s: $(tail -n 20 "$dir/apicurio.log")" >&2
	return 1
}
