# test/lib/pgbouncer.sh — a throwaway pgbouncer (Debian's package) in front
# of a test cluster
#
# Sourced (bash) after pg.sh.  Each pgbouncer lives in one directory:
# DIR/pgbouncer.ini, DIR/userlist.txt (plain-text passwords, so pgbouncer can
# answer the server's own authentication), DIR/log, DIR/port.  It listens on
# 127.0.0.1 at a free port, no unix socket, scram-sha-256 for its clients;
# when root, it runs as the postgres user (setpriv).  The PID recorded is
# pgbouncer's own (a background function exec's it), and every pgbouncer
# started by a shell is stopped by that PID when the shell exits (through
# ro_on_exit); its directory is removed unless RO_KEEP_TMP=1.
#
#   pgb_start VAR MODE DB USER PASSWORD [POOL_SIZE]
#                       start a pgbouncer in pool_mode MODE (session,
#                       transaction, statement) for database DB of the
#                       current cluster (pg_use), with USER/PASSWORD as its
#                       one client and at most POOL_SIZE (default 8) server
#                       connections; store its directory in VAR.  Servers are
#                       taken in turn (server_round_robin), so consecutive
#                       transactions of one client land on different server
#                       connections once the pool holds several
#   pgb_port DIR        print its port
#   pgb_dsn DIR DB USER PASSWORD
#                       a libpq conninfo reaching DB through it
#   pgb_admin DIR SQL   a command on its admin console (SHOW POOLS,
#                       RECONNECT, ...), rows unaligned
#   pgb_stop DIR        stop it (SIGTERM: immediate shutdown), by PID
#   pgb_stop_all        stop every pgbouncer this shell started

# shellcheck shell=bash

RO__PGB_STARTED=()
RO__PGB_HANDLER_SET=

# pgb__bin — Debian installs it in /usr/sbin
pgb__bin() {
	command -v pgbouncer 2>/dev/null || { [ -x /usr/sbin/pgbouncer ] && echo /usr/sbin/pgbouncer; } ||
		ro_die "pgbouncer not found: apt-get install pgbouncer (test/packages.txt)"
}

# pgb__exec_as_owner — exec (in place: call it in a background subshell,
# whose PID becomes pgbouncer's) pgbouncer as the postgres user when root,
# which it refuses to run as
pgb__exec_as_owner() {
	cd / || exit 1
	if [[ $EUID == 0 ]]; then
		exec setpriv --reuid=postgres --regid=postgres --init-groups -- "$@"
	fi
	exec "$@"
}

# pgb_start — see the header; waits (20 s) until it accepts a login
pgb_start() {
	local var=$1 mode=$2 db=$3 user=$4 password=$5 pool_size=${6:-8} dir port attempt pid i bin
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ro-pgbouncer.XXXXXX") || return 1
	chmod 755 "$dir"
	printf -v "$var" '%s' "$dir"
	if [[ -z $RO__PGB_HANDLER_SET ]]; then
		ro_on_exit pgb_stop_all
		RO__PGB_HANDLER_SET=1
	fi
	RO__PGB_STARTED+=("$dir")
	printf '"%s" "%s"\n"ro_pgb_admin" "admin-%s"\n' "$user" "$password" "$RANDOM$RANDOM" >"$dir/userlist.txt"
	for ((attempt = 1; attempt <= 3; attempt++)); do
		port=$(pg_free_port)
		printf '%s\n' "$port" >"$dir/port"
		cat >"$dir/pgbouncer.ini" <<-EOF
			; test/lib/pgbouncer.sh
			[databases]
			$db = host=$PGHOST port=$PGPORT dbname=$db

			[pgbouncer]
			listen_addr = 127.0.0.1
			listen_port = $port
			unix_socket_dir =
			auth_type = scram-sha-256
			auth_file = $dir/userlist.txt
			admin_users = ro_pgb_admin
			pool_mode = $mode
			server_round_robin = 1
			default_pool_size = $pool_size
			max_client_conn = 50
			logfile = $dir/log
			pidfile = $dir/pgbouncer.pid
		EOF
		[[ $EUID == 0 ]] && chown -R postgres: "$dir"
		bin=$(pgb__bin)
		pgb__exec_as_owner "$bin" "$dir/pgbouncer.ini" >>"$dir/stdout" 2>&1 </dev/null &
		pid=$!
		printf '%s\n' "$pid" >>"$dir/pids"
		for ((i = 0; i < 200; i++)); do
			if PGPASSWORD=$password psql -X -q -w -At -h 127.0.0.1 -p "$port" -U "$user" -d "$db" \
				-c 'SELECT 1' >/dev/null 2>&1; then
				return 0
			fi
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		pgb_stop "$dir"
		grep -qiE 'address already in use|bind' "$dir/log" "$dir/stdout" 2>/dev/null || break
		ro_log "pgbouncer: port $port was taken, trying another"
	done
	ro_log "pgbouncer did not start in $dir:"
	tail -n 20 "$dir/log" "$dir/stdout" >&2 2>/dev/null
	return 1
}

# pgb_port — the port pgbouncer DIR listens on
pgb_port() {
	cat "$1/port"
}

# pgb_dsn — conninfo of DB through pgbouncer DIR
pgb_dsn() {
	printf 'host=127.0.0.1 port=%s dbname=%s user=%s password=%s\n' "$(pgb_port "$1")" "$2" "$3" "$4"
}

# pgb_admin — one command on the admin console of pgbouncer DIR
pgb_admin() {
	local dir=$1 password
	password=$(sed -n 's/^"ro_pgb_admin" "\(.*\)"$/\1/p' "$dir/userlist.txt")
	PGPASSWORD=$password psql -X -q -w -At -h 127.0.0.1 -p "$(pgb_port "$dir")" \
		-U ro_pgb_admin -d pgbouncer -c "$2"
}

# pgb_stop — SIGTERM to every pgbouncer recorded for DIR that still runs
# (and is pgbouncer), then SIGKILL after 5 s
pgb_stop() {
	local dir=$1 pid i
	[[ -f $dir/pids ]] || return 0
	while read -r pid; do
		kill -0 "$pid" 2>/dev/null || continue
		grep -q pgbouncer "/proc/$pid/cmdline" 2>/dev/null || continue
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

# pgb_stop_all — stop every pgbouncer started here; remove their directories
pgb_stop_all() {
	local dir
	for dir in "${RO__PGB_STARTED[@]}"; do
		pgb_stop "$dir"
		if [[ ${RO_KEEP_TMP:-0} == 1 ]]; then
			ro_log "kept pgbouncer directory $dir"
		else
			rm -rf -- "$dir"
		fi
	done
	RO__PGB_STARTED=()
}
