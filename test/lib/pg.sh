# test/lib/pg.sh — start, steer and stop throwaway PostgreSQL clusters of
# every major the project supports (15 by default)
#
# Sourced (bash) by test/run and by any suite; sources common.sh.  Each
# cluster lives in one directory: DIR/data (PGDATA), DIR/socket (unix socket),
# DIR/log (server log), DIR/port, DIR/pids (every postmaster PID it had).  It
# listens on 127.0.0.1 at a free port and on the socket, trust auth, UTF8,
# superuser "postgres"; when root, the server runs as the postgres user.
# Every cluster started by a shell is stopped by PID when that shell exits
# (through ro_on_exit), and the temporary directories it created are removed
# unless RO_KEEP_TMP=1.  Several clusters may run at once, of different
# majors: DIR/bindir names the programs a cluster was made with, and pg_use,
# pg_ctl_as and pg_stop use those.  The server gets the VAR=VALUE words of
# $RO_PG_SERVER_ENV in its environment (a sanitizer runtime in LD_PRELOAD,
# test/sanitize/run), initdb the words of $RO_PG_INITDB_ARGS; PG_CONFIG picks
# the PostgreSQL until pg_select_major.
#
#   pg_select_major MAJOR   use PostgreSQL MAJOR from now on (pg_bindir,
#                           new clusters): export RO_PG_MAJOR, RO_PG_BINDIR,
#                           PG_CONFIG and put its bindir first in PATH
#   pg_major_bindir MAJOR   print MAJOR's bindir: the one tools/build-postgresql
#                           built under $RO_PG_CACHE (/var/cache/received_orders)
#                           or Debian's /usr/lib/postgresql/MAJOR/bin; fail
#                           when neither has a pg_config
#
#   pg_start VAR            start a cluster in the directory named by $VAR;
#                           when $VAR is empty, create one (mktemp -d) and
#                           store its path in VAR; initdb on first use, keep
#                           its port on restart; then pg_use it
#   pg_use DIR              export PGHOST PGPORT PGUSER PGDATABASE RO_PG_DIR
#                           for DIR, make DIR's bindir RO_PG_BINDIR and put
#                           it first in PATH
#   pg_ctl_as ARGS...       pg_ctl -D $RO_PG_DIR/data ARGS as the server's
#                           owner, e.g. `pg_ctl_as stop -m immediate`,
#                           `pg_ctl_as start -w` (its PID is recorded)
#   pg_stop [DIR]           fast shutdown of DIR (default $RO_PG_DIR), then
#                           kill any of its recorded postmasters still alive
#   pg_stop_all             pg_stop every cluster this shell started
#   pg_ensure_cluster       use the harness's cluster when it is reachable,
#                           else start a private one (suites run alone)
#   pg_createdb NAME [EXT...]  create database NAME, then CREATE EXTENSION
#                           each EXT in it
#   pg_psql ARGS...         psql without psqlrc, ON_ERROR_STOP, quiet
#   pg_query DB SQL         run SQL in DB, print rows unaligned, "|"-separated
#   pg_bindir               print the bindir in use (PostgreSQL 15 unless
#                           pg_select_major or pg_use chose another)
#   pg_free_port            print a TCP port free on 127.0.0.1
#   pg_log_tail [DIR] [N]   last N (40) lines of the server log on stderr
#
# Replication (a primary started by pg_start, then a standby of it):
#
#   pg_start_standby PRIMARY_DIR VAR  a streaming, asynchronous standby of
#                           the running cluster PRIMARY_DIR: pg_basebackup -R
#                           -X stream over TCP into a new directory (its path
#                           stored in VAR), with its own socket and port, then
#                           started like pg_start (it does not pg_use it)
#   pg_query_at DIR DB SQL  pg_query against cluster DIR, whatever pg_use says
#   pg_wait_replayed PRIMARY_DIR STANDBY_DIR [SECONDS]
#                           wait (60 s) until the standby has replayed the
#                           primary's WAL up to the primary's current LSN
#   pg_promote DIR [SECONDS]  pg_ctl promote, then wait (60 s) until DIR
#                           is out of recovery
#   pg_rebuild_standby DIR PRIMARY_DIR  turn cluster DIR (a former primary,
#                           say, after a switchover) into a new streaming
#                           standby of PRIMARY_DIR on DIR's own port: DIR is
#                           stopped, its data directory replaced by a base
#                           backup, and it is started (not pg_use'd)
#
# Note: call pg_start in the main shell, not inside $(...), or the cluster
# would not be tracked for the exit handler.
# shellcheck shell=bash

# shellcheck source=test/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/common.sh"

RO__PG_STARTED=()
RO__PG_OWNED=()
RO__PG_HANDLER_SET=

# pg_bindir — where the programs of the PostgreSQL in use are: the one
# pg_select_major or pg_use chose; else $PG_CONFIG's, then Debian's
# PostgreSQL 15, then whatever pg_config is in PATH
pg_bindir() {
	if [[ -z ${RO_PG_BINDIR:-} ]]; then
		local config=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
		[[ -x $config ]] || config=$(command -v pg_config) ||
			ro_die "pg_config not found: install postgresql-server-dev-15"
		RO_PG_BINDIR=$("$config" --bindir)
		export RO_PG_BINDIR
	fi
	printf '%s\n' "$RO_PG_BINDIR"
}

# pg_major_bindir — see the header; the cache first, so that the harness
# installs the extension into a PostgreSQL of its own
pg_major_bindir() {
	local major=$1 dir
	for dir in "${RO_PG_CACHE:-/var/cache/received_orders}/pg$major/bin" \
		"/usr/lib/postgresql/$major/bin"; do
		if [[ -x $dir/pg_config ]]; then
			printf '%s\n' "$dir"
			return 0
		fi
	done
	return 1
}

# pg__path_first DIR — DIR first in PATH (moved there when already in it)
pg__path_first() {
	local dir=$1 rest
	rest=":$PATH:"
	rest=${rest//":$dir:"/:}
	rest=${rest#:}
	rest=${rest%:}
	export PATH="$dir${rest:+:$rest}"
}

# pg_select_major — see the header
pg_select_major() {
	local major=$1 bindir
	bindir=$(pg_major_bindir "$major") ||
		ro_die "PostgreSQL $major not found: build it with tools/build-postgresql $major"
	export RO_PG_MAJOR=$major RO_PG_BINDIR=$bindir PG_CONFIG=$bindir/pg_config
	pg__path_first "$bindir"
}

# pg__dir_bindir DIR — the bindir cluster DIR was made with (pg_bindir for
# a directory that does not say)
pg__dir_bindir() {
	if [[ -s $1/bindir ]]; then
		cat "$1/bindir"
	else
		pg_bindir
	fi
}

# pg__as_owner — run a server-side program as the cluster owner: the
# postgres user when we are root (the server refuses root), else ourselves;
# from / so an unreadable working directory does not bother it
pg__as_owner() {
	if [[ $EUID == 0 ]]; then
		(cd / && runuser -u postgres -- "$@")
	else
		"$@"
	fi
}

# pg__server_ctl DIR ARGS... — DIR's pg_ctl ARGS as the cluster owner, with
# the VAR=VALUE words of $RO_PG_SERVER_ENV in the environment of pg_ctl and
# so of the server it starts (test/sanitize/run preloads the sanitizer
# runtime)
pg__server_ctl() {
	local env=() bindir
	bindir=$(pg__dir_bindir "$1")
	shift
	[[ -n ${RO_PG_SERVER_ENV:-} ]] && read -ra env <<<"$RO_PG_SERVER_ENV"
	pg__as_owner env "${env[@]}" "$bindir/pg_ctl" "$@"
}

# pg_free_port — a port nobody listens on, checked by binding it; drawn
# below Linux's ephemeral range so outgoing connections do not take it
pg_free_port() {
	ro_free_port || ro_die "no free TCP port found on 127.0.0.1"
}

# pg__register — remember a cluster directory for pg_stop_all and make sure
# the exit handler is installed
pg__register() {
	local d
	for d in "${RO__PG_STARTED[@]}"; do
		[[ $d == "$1" ]] && return 0
	done
	if [[ -z $RO__PG_HANDLER_SET ]]; then
		ro_on_exit pg_stop_all
		RO__PG_HANDLER_SET=1
	fi
	RO__PG_STARTED+=("$1")
}

# pg__init — initdb a new cluster in DIR/data and write its fixed settings;
# the words of $RO_PG_INITDB_ARGS are added to initdb's arguments (e.g.
# --no-data-checksums for an 18 that a 15 is pg_upgrade'd into)
pg__init() {
	local dir=$1 locale=C extra=()
	[[ -n ${RO_PG_INITDB_ARGS:-} ]] && read -ra extra <<<"$RO_PG_INITDB_ARGS"
	if locale -a 2>/dev/null | grep -qiE '^c\.utf-?8$'; then
		locale=C.UTF-8
	fi
	mkdir -p "$dir/socket"
	[[ $EUID == 0 ]] && chown -R postgres: "$dir"
	if ! pg__as_owner "$(pg_bindir)/initdb" -D "$dir/data" -U postgres -A trust \
		-E UTF8 --locale="$locale" --no-sync "${extra[@]}" >"$dir/initdb.log" 2>&1; then
		cat "$dir/initdb.log" >&2
		return 1
	fi
	cat >>"$dir/data/postgresql.conf" <<-EOF

		# test/lib/pg.sh
		listen_addresses = '127.0.0.1'
		unix_socket_directories = '$dir/socket'
		lc_messages = 'C'
		log_line_prefix = '%m [%p] %q%u@%d '
		include_if_exists = 'ro_port.conf'
	EOF
}

# pg__set_port — write DIR's port to the cluster configuration and DIR/port
pg__set_port() {
	local dir=$1 port=$2
	printf 'port = %s\n' "$port" >"$dir/data/ro_port.conf"
	printf '%s\n' "$port" >"$dir/port"
	[[ $EUID == 0 ]] && chown postgres: "$dir/data/ro_port.conf" "$dir/port"
	return 0
}

# pg__record_pid — append the running postmaster's PID to DIR/pids
pg__record_pid() {
	local dir=$1 pid
	pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null) || return 0
	[[ $pid =~ ^[0-9]+$ ]] && printf '%s\n' "$pid" >>"$dir/pids"
	return 0
}

# pg_start — see the header; retries on another port when the chosen one
# was taken between the probe and the bind
pg_start() {
	local var=$1 dir attempt
	dir=${!var:-}
	if [[ -z $dir ]]; then
		dir=$(mktemp -d "${TMPDIR:-/tmp}/ro-pg.XXXXXX")
		RO__PG_OWNED+=("$dir")
	fi
	printf -v "$var" '%s' "$dir"
	pg__register "$dir"
	if [[ ! -f $dir/data/PG_VERSION ]]; then
		pg__init "$dir" || return 1
	fi
	[[ -s $dir/bindir ]] || pg_bindir >"$dir/bindir"
	for attempt in 1 2 3 4 5; do
		if [[ $attempt -gt 1 || ! -s $dir/port ]]; then
			pg__set_port "$dir" "$(pg_free_port)"
		fi
		if pg__server_ctl "$dir" -D "$dir/data" -l "$dir/log" -w -t 120 start >/dev/null; then
			pg__record_pid "$dir"
			pg_use "$dir"
			return 0
		fi
		grep -qE 'could not (bind|create any TCP/IP)|already in use' "$dir/log" 2>/dev/null || break
		ro_log "port $(cat "$dir/port") was taken, trying another"
	done
	ro_log "could not start PostgreSQL in $dir"
	pg_log_tail "$dir"
	return 1
}

# pg_use — point the libpq environment (and PATH) at cluster DIR
pg_use() {
	local dir=$1 bindir
	bindir=$(pg__dir_bindir "$dir")
	export RO_PG_BINDIR=$bindir
	export RO_PG_DIR=$dir
	export PGHOST=$dir/socket
	PGPORT=$(cat "$dir/port")
	export PGPORT
	export PGUSER=postgres
	export PGDATABASE=postgres
	unset PGHOSTADDR PGSERVICE PGPASSWORD
	pg__path_first "$bindir"
}

# pg_ctl_as — pg_ctl on the current cluster as its owner; output on stderr
# (keeps TAP clean); records the new postmaster after a start or restart
pg_ctl_as() {
	local dir=${RO_PG_DIR:?pg_ctl_as: no cluster (pg_start or pg_use first)} status=0 arg
	pg__server_ctl "$dir" -D "$dir/data" -l "$dir/log" "$@" >&2 || status=$?
	for arg in "$@"; do
		if [[ $arg == start || $arg == restart ]]; then
			pg__record_pid "$dir"
		fi
	done
	return "$status"
}

# pg__is_postmaster — true when PID is alive and is the postmaster of DIR
# (guards against a recycled PID)
pg__is_postmaster() {
	local pid=$1 dir=$2
	kill -0 "$pid" 2>/dev/null || return 1
	[[ -r /proc/$pid/cmdline ]] || return 0
	tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$dir/data"
}

# pg_stop — stop cluster DIR: pg_ctl fast shutdown, then signals to any
# recorded postmaster that survived (SIGINT = fast, then SIGKILL)
pg_stop() {
	local dir=${1:-${RO_PG_DIR:-}} pid i
	[[ -n $dir && -d $dir ]] || return 0
	if [[ -f $dir/data/postmaster.pid ]]; then
		pg__as_owner "$(pg__dir_bindir "$dir")/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop \
			>/dev/null 2>&1 || true
	fi
	[[ -f $dir/pids ]] || return 0
	for pid in $(sort -u "$dir/pids"); do
		pg__is_postmaster "$pid" "$dir" || continue
		kill -INT "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			pg__is_postmaster "$pid" "$dir" || break
			sleep 0.1
		done
		if pg__is_postmaster "$pid" "$dir"; then
			ro_log "postmaster $pid of $dir ignored SIGINT, killing it"
			kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	return 0
}

# pg_stop_all — stop every cluster started by this shell and remove the
# directories it created (kept with RO_KEEP_TMP=1); safe to call twice
pg_stop_all() {
	local dir
	for dir in "${RO__PG_STARTED[@]}"; do
		pg_stop "$dir"
	done
	RO__PG_STARTED=()
	for dir in "${RO__PG_OWNED[@]}"; do
		if [[ ${RO_KEEP_TMP:-0} == 1 ]]; then
			ro_log "kept cluster directory $dir"
		else
			rm -rf -- "$dir"
		fi
	done
	RO__PG_OWNED=()
}

# pg_ensure_cluster — reuse the cluster exported by the harness when it
# answers, otherwise start a private one for this script
pg_ensure_cluster() {
	if [[ -n ${RO_PG_DIR:-} && -s ${RO_PG_DIR}/port ]]; then
		pg_use "$RO_PG_DIR"
		if psql -X -q -At -c 'SELECT 1' >/dev/null 2>&1; then
			return 0
		fi
	fi
	# shellcheck disable=SC2034 # set by pg_start through its name
	RO_PG_PRIVATE_DIR=
	pg_start RO_PG_PRIVATE_DIR
}

# pg_psql — psql as the suites want it: no psqlrc, stop on the first error
pg_psql() {
	"$(pg_bindir)/psql" -X -q -v ON_ERROR_STOP=1 "$@"
}

# pg_query — one SQL string against DB, rows unaligned without headers
pg_query() {
	pg_psql -At -d "$1" -c "$2"
}

# pg_createdb — a new database, with the named extensions created in it
pg_createdb() {
	local name=$1 ext
	shift
	"$(pg_bindir)/createdb" -- "$name" || return 1
	for ext in "$@"; do
		pg_psql -d "$name" -c "CREATE EXTENSION \"$ext\"" || return 1
	done
}

# pg_log_tail — show the end of a cluster's server log on stderr
pg_log_tail() {
	local dir=${1:-${RO_PG_DIR:-}} lines=${2:-40}
	[[ -f $dir/log ]] || return 0
	printf -- '--- last %s lines of %s/log ---\n' "$lines" "$dir" >&2
	tail -n "$lines" "$dir/log" >&2
}

# pg_query_at — one SQL string against DB on cluster DIR (its socket and
# port), rows unaligned without headers
pg_query_at() {
	local dir=$1
	pg_psql -At -h "$dir/socket" -p "$(cat "$dir/port")" -U postgres -d "$2" -c "$3"
}

# pg__base_backup PRIMARY_DIR DIR — pg_basebackup -R -X stream over TCP of
# the running cluster PRIMARY_DIR into DIR/data (which must not exist).  The
# base backup copies the primary's configuration: the copy gets DIR's socket
# directory and loses the primary's port (pg_start or the caller sets one);
# primary_conninfo (written by -R) points at the primary's 127.0.0.1 port
pg__base_backup() {
	local primary=$1 dir=$2
	mkdir -p "$dir/socket"
	chmod 755 "$dir"
	[[ $EUID == 0 ]] && chown -R postgres: "$dir"
	pg__dir_bindir "$primary" >"$dir/bindir"
	if ! pg__as_owner "$(pg__dir_bindir "$primary")/pg_basebackup" -h 127.0.0.1 -p "$(cat "$primary/port")" \
		-U postgres -D "$dir/data" -R -X stream -c fast --no-sync >"$dir/basebackup.log" 2>&1; then
		cat "$dir/basebackup.log" >&2
		return 1
	fi
	rm -f "$dir/data/ro_port.conf"
	cat >>"$dir/data/postgresql.conf" <<-EOF

		# test/lib/pg.sh: a standby of $primary
		unix_socket_directories = '$dir/socket'
	EOF
}

# pg__start_aside DIR — pg_start cluster DIR, leaving the libpq environment
# pointed where it was
pg__start_aside() {
	# pg_start reads the directory through a variable's name: one of its own
	# shellcheck disable=SC2034 # read by pg_start through its name
	local saved=${RO_PG_DIR:-} status=0 ro__aside_dir=$1
	pg_start ro__aside_dir || status=$?
	if [[ -n $saved ]]; then
		pg_use "$saved"
	fi
	return "$status"
}

# pg_start_standby — see the header; the standby gets its own port through
# pg_start
pg_start_standby() {
	local primary=$1 var=$2 dir
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ro-pg-standby.XXXXXX") || return 1
	RO__PG_OWNED+=("$dir")
	printf -v "$var" '%s' "$dir"
	pg__base_backup "$primary" "$dir" || return 1
	pg__start_aside "$dir"
}

# pg_rebuild_standby — see the header; DIR keeps its port, so a multi-host
# DSN naming both clusters stays valid across any number of switchovers
pg_rebuild_standby() {
	local dir=$1 primary=$2
	pg_stop "$dir"
	rm -rf -- "$dir/data"
	pg__base_backup "$primary" "$dir" || return 1
	pg__set_port "$dir" "$(cat "$dir/port")"
	pg__start_aside "$dir"
}

# pg__replayed — whether STANDBY_DIR has replayed up to LSN
pg__replayed() {
	[[ $(pg_query_at "$1" postgres "SELECT pg_last_wal_replay_lsn() >= '$2'::pg_lsn" 2>/dev/null) == t ]]
}

# pg_wait_replayed — see the header
pg_wait_replayed() {
	local primary=$1 standby=$2 lsn
	lsn=$(pg_query_at "$primary" postgres "SELECT pg_current_wal_lsn()") || return 1
	ro_wait_until "${3:-60}" pg__replayed "$standby" "$lsn" && return 0
	ro_log "standby $standby has not replayed $lsn: $(pg_query_at "$standby" postgres "SELECT pg_last_wal_replay_lsn()" 2>&1)"
	return 1
}

# pg__out_of_recovery — whether cluster DIR accepts writes
pg__out_of_recovery() {
	[[ $(pg_query_at "$1" postgres "SELECT NOT pg_is_in_recovery()" 2>/dev/null) == t ]]
}

# pg_promote — see the header
pg_promote() {
	local dir=$1
	pg__as_owner "$(pg__dir_bindir "$dir")/pg_ctl" -D "$dir/data" promote -w -t "${2:-60}" >&2 || return 1
	ro_wait_until "${2:-60}" pg__out_of_recovery "$dir"
}
