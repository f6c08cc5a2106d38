# test/tls/lib.sh — shared plumbing of the TLS suites
#
# Sourced by test/tls/NN-*.t (bash) after test/lib/pg.sh (test/e2e/lib.sh
# sources it).  A throwaway PKI made with the openssl command line, and
# `openssl s_server` as a TLS endpoint in the background (PIDs recorded,
# stopped through ro_on_exit).  Functions:
#
#   tls_make_pki DIR ROLE   in DIR (created, mode 755): two unrelated CAs,
#                           ca1 and ca2, and these certificates with their
#                           keys (EC P-256, keys mode 600):
#                             server          ca1, host name localhost only
#                                             (SAN DNS:localhost: 127.0.0.1
#                                             does not match it)
#                             server-ip       ca1, localhost and IP 127.0.0.1
#                             expired-server  ca1, localhost, valid only on
#                                             2020-01-01
#                             client          ca1, CN = ROLE (clientAuth)
#                             expired-client  ca1, CN = ROLE, 2020-01-01
#                             other-client    ca2, CN = ROLE
#                           When root, the server-side files (server*,
#                           expired-server*, ca*.crt) belong to the postgres
#                           user, so PostgreSQL can read its key; client keys
#                           stay ours (libpq wants 600 and its own user)
#   tls_fingerprint CERT    SHA-256 fingerprint of a certificate file
#   tls_pg_fingerprint PORT  the same of the certificate the PostgreSQL
#                           server on 127.0.0.1:PORT presents (openssl
#                           s_client -starttls postgres); empty if none
#   tls_pg_verify CAFILE PORT
#                           openssl's verdict on that certificate against
#                           CAFILE: "0 (ok)", "10 (certificate has expired)"
#   tls_s_server VAR CERT KEY [ARGS...]
#                           start `openssl s_server` on a free port of
#                           127.0.0.1 with CERT and KEY (ARGS passed on, e.g.
#                           -Verify 1 -CAfile CA) and wait until it listens;
#                           store its directory in VAR: DIR/port, DIR/log
#                           (what it printed: handshake errors, the client
#                           certificate's subject, "CIPHER is ..." once a
#                           handshake completed, then the decrypted bytes
#                           the client sent).  Its stdin is a FIFO it holds
#                           open itself: it never sees an end of input and
#                           serves one connection after another
#   tls_s_server_stop DIR   stop it by PID
#   tls_s_server_stop_all   stop every s_server this shell started (the
#                           first tls_s_server registers it with ro_on_exit)
# shellcheck shell=bash

RO__TLS_SERVERS=()
RO__TLS_HANDLER_SET=

# tls__ext_config FILE — the openssl sections the certificates use
tls__ext_config() {
	cat >"$1" <<-'EOF2'
		# test/tls/lib.sh: extensions of the throwaway PKI
		[ca_ext]
		basicConstraints = critical, CA:TRUE
		keyUsage = critical, keyCertSign, cRLSign
		subjectKeyIdentifier = hash

		[server_ext]
		basicConstraints = critical, CA:FALSE
		keyUsage = critical, digitalSignature, keyEncipherment
		extendedKeyUsage = serverAuth
		subjectAltName = DNS:localhost
		authorityKeyIdentifier = keyid

		[server_ip_ext]
		basicConstraints = critical, CA:FALSE
		keyUsage = critical, digitalSignature, keyEncipherment
		extendedKeyUsage = serverAuth
		subjectAltName = DNS:localhost, IP:127.0.0.1
		authorityKeyIdentifier = keyid

		[client_ext]
		basicConstraints = critical, CA:FALSE
		keyUsage = critical, digitalSignature, keyEncipherment
		extendedKeyUsage = clientAuth
		authorityKeyIdentifier = keyid
	EOF2
}

# tls__key FILE — a new EC P-256 private key, mode 600
tls__key() {
	(umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1") 2>/dev/null
}

# tls__ca DIR NAME CN — a self-signed CA DIR/NAME.{crt,key}, valid 2 days
tls__ca() {
	local dir=$1 name=$2 cn=$3
	tls__key "$dir/$name.key" || return 1
	openssl req -new -x509 -config "$dir/ext.cnf" -key "$dir/$name.key" -subj "/CN=$cn" \
		-days 2 -extensions ca_ext -out "$dir/$name.crt" 2>"$dir/openssl.err"
}

# tls__csr DIR NAME CN — a key and a certificate request for CN
tls__csr() {
	local dir=$1 name=$2 cn=$3
	tls__key "$dir/$name.key" || return 1
	openssl req -new -config "$dir/ext.cnf" -key "$dir/$name.key" -subj "/CN=$cn" \
		-out "$dir/$name.csr" 2>"$dir/openssl.err"
}

# tls__sign DIR NAME CN EXT [CA] — DIR/NAME.{crt,key} signed by CA (ca1),
# valid 2 days
tls__sign() {
	local dir=$1 name=$2 cn=$3 ext=$4 ca=${5:-ca1}
	tls__csr "$dir" "$name" "$cn" || return 1
	openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.crt" -CAkey "$dir/$ca.key" \
		-CAcreateserial -days 2 -extfile "$dir/ext.cnf" -extensions "$ext" \
		-out "$dir/$name.crt" 2>"$dir/openssl.err"
}

# tls__sign_expired DIR NAME CN EXT — like tls__sign, but valid only on
# 2020-01-01 (`openssl ca` is the command that takes explicit dates)
tls__sign_expired() {
	local dir=$1 name=$2 cn=$3 ext=$4
	tls__csr "$dir" "$name" "$cn" || return 1
	mkdir -p "$dir/ca1.db/new"
	touch "$dir/ca1.db/index.txt"
	[ -s "$dir/ca1.db/serial" ] || openssl rand -hex 8 >"$dir/ca1.db/serial"
	cat >"$dir/ca1.cnf" <<-EOF2
		[ca]
		default_ca = ca1
		[ca1]
		database = $dir/ca1.db/index.txt
		new_certs_dir = $dir/ca1.db/new
		serial = $dir/ca1.db/serial
		default_md = sha256
		policy = any
		unique_subject = no
		[any]
		commonName = supplied
	EOF2
	openssl ca -batch -notext -config "$dir/ca1.cnf" -cert "$dir/ca1.crt" -keyfile "$dir/ca1.key" \
		-startdate 20200101000000Z -enddate 20200102000000Z \
		-extfile "$dir/ext.cnf" -extensions "$ext" \
		-in "$dir/$name.csr" -out "$dir/$name.crt" 2>"$dir/openssl.err"
}

# tls_make_pki — see the header
tls_make_pki() {
	local dir=$1 role=$2
	mkdir -p "$dir" && chmod 755 "$dir" || return 1
	tls__ext_config "$dir/ext.cnf"
	tls__ca "$dir" ca1 "received_orders test CA 1" &&
		tls__ca "$dir" ca2 "received_orders test CA 2 (unrelated)" &&
		tls__sign "$dir" server localhost server_ext &&
		tls__sign "$dir" server-ip localhost server_ip_ext &&
		tls__sign_expired "$dir" expired-server localhost server_ext &&
		tls__sign "$dir" client "$role" client_ext &&
		tls__sign_expired "$dir" expired-client "$role" client_ext &&
		tls__sign "$dir" other-client "$role" client_ext ca2 || {
		cat "$dir/openssl.err" >&2
		return 1
	}
	chmod 644 "$dir"/*.crt
	if [[ $EUID == 0 ]]; then
		chown postgres: "$dir"/server.* "$dir"/server-ip.* "$dir"/expired-server.* \
			"$dir"/ca1.crt "$dir"/ca2.crt
	fi
}

# tls_fingerprint — see the header
tls_fingerprint() {
	openssl x509 -in "$1" -noout -fingerprint -sha256 2>/dev/null
}

# tls__pg_s_client PORT [ARGS...] — a TLS handshake with the PostgreSQL
# server on 127.0.0.1:PORT, its output (5 s at most)
tls__pg_s_client() {
	local port=$1
	shift
	timeout 5 openssl s_client -connect "127.0.0.1:$port" -starttls postgres \
		-servername localhost "$@" </dev/null 2>/dev/null
}

# tls_pg_fingerprint — see the header
tls_pg_fingerprint() {
	tls__pg_s_client "$1" | openssl x509 -noout -fingerprint -sha256 2>/dev/null
}

# tls_pg_verify — see the header
tls_pg_verify() {
	tls__pg_s_client "$2" -CAfile "$1" | sed -n 's/^ *Verify return code: //p' | head -n 1
}

# tls_s_server — see the header; retries on another port when the chosen
# one was taken meanwhile
tls_s_server() {
	local var=$1 cert=$2 key=$3 dir port pid i
	shift 3
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ro-s_server.XXXXXX") || return 1
	printf -v "$var" '%s' "$dir"
	if [[ -z $RO__TLS_HANDLER_SET ]]; then
		ro_on_exit tls_s_server_stop_all
		RO__TLS_HANDLER_SET=1
	fi
	RO__TLS_SERVERS+=("$dir")
	mkfifo "$dir/stdin" || return 1
	for _ in 1 2 3; do
		port=$(pg_free_port)
		# <> opens the FIFO read-write: no blocking open, no end of input
		openssl s_server -accept "127.0.0.1:$port" -cert "$cert" -key "$key" "$@" \
			<>"$dir/stdin" >>"$dir/log" 2>&1 &
		pid=$!
		printf '%s\n' "$pid" >>"$dir/pids"
		for ((i = 0; i < 100; i++)); do
			if grep -q '^ACCEPT' "$dir/log" 2>/dev/null; then
				printf '%s\n' "$port" >"$dir/port"
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		tls_s_server_stop "$dir"
		grep -qiE 'in use|bind' "$dir/log" || break
		ro_log "openssl s_server: port $port was taken, trying another"
	done
	ro_log "openssl s_server did not start:"
	tail -n 5 "$dir/log" >&2
	return 1
}

# tls_s_server_stop — SIGTERM to each s_server recorded for DIR that still
# runs (and is openssl), SIGKILL after 5 s
tls_s_server_stop() {
	local dir=$1 pid i
	[[ -f $dir/pids ]] || return 0
	while read -r pid; do
		kill -0 "$pid" 2>/dev/null || continue
		grep -q openssl "/proc/$pid/cmdline" 2>/dev/null || continue
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < 50; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done < <(sort -u "$dir/pids")
	return 0
}

# tls_s_server_stop_all — stop every s_server started here; remove their
# directories unless RO_KEEP_TMP=1
tls_s_server_stop_all() {
	local dir
	for dir in "${RO__TLS_SERVERS[@]}"; do
		tls_s_server_stop "$dir"
		if [[ ${RO_KEEP_TMP:-0} == 1 ]]; then
			ro_log "kept s_server directory $dir"
		else
			rm -rf -- "$dir"
		fi
	done
	RO__TLS_SERVERS=()
}
