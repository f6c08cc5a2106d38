# bench/lib.sh — measurements shared by bench/extension and bench/feeder
#
# Sourced after test/lib/pg.sh, with PGDATABASE set to the benchmark's
# database, which holds the extension and the tables of bench/sql/setup.sql
# or their equivalent (bench.batches, bench.batch_seq).
#
#   bench_rate N START END     N / (END - START), rounded: events per second
#   bench_median VALUES...     the middle value (the lower middle of an even count)
#   bench_pct A B              A as a percentage of B, "NN %"
#   bench_reset_table          empty both tables, then CHECKPOINT, so that no
#                              run pays for the previous one's dirty pages;
#                              after bench_prefill, keep the prefilled rows
#                              (delete the others, VACUUM, CHECKPOINT)
#   bench_stored ROWS WHAT     die unless the run WHAT stored ROWS rows (the
#                              prefilled ones not counted)
#   bench_prefill N            fill the table with N orders of random UUIDs
#                              (externalReference "prefill") that every later
#                              run finds there; counts then leave them out
#   bench_ceiling SOURCE ROWS N
#                              events/s of one INSERT ... SELECT ... ON
#                              CONFLICT DO NOTHING of N events from the query
#                              SOURCE into the emptied table; dies unless it
#                              stored ROWS rows (the same work as the run it
#                              is compared with)
#   bench_ceiling2 SOURCE ROWS N [CPU_FILE]
#                              the same split over two sessions at once, each
#                              inserting the rows of SOURCE (a query of one
#                              text column, cast to jsonb in the statement)
#                              whose text hashes to its half: redeliveries
#                              (the same bytes) meet in one session, so the
#                              sessions never wait on each other's keys and
#                              cannot deadlock (the bench streams have no
#                              other copies of an orderId); with CPU_FILE,
#                              the CPU seconds of its two backends go there
#   bench_batch_path BATCHES ROWS N
#                              events/s of materialize_orders over
#                              bench.batches 1..BATCHES, one call and one
#                              transaction each (pgbench, one client); dies
#                              unless it stored ROWS rows
#   bench_activity_begin       snapshot what the server and the machine did
#                              so far (below); bench_activity_end prints
#   bench_activity_end         what they did since: "checkpoints C,
#                              autovacuum A, WAL W MB (F full-page images),
#                              WAL segments created S, CPU steal T s, CPU
#                              of the machine B s" (B: every process,
#                              ours included): what tells a slow run
#                              from a fast one besides our own code
#   bench_sql_only_db DB DIR   database DB of the current cluster holding
#                              the SQL-only flavour as a managed service
#                              installs it: tools/build-sql-only into DIR,
#                              then the role ro_bench_cloud_admin (LOGIN
#                              NOSUPERUSER CREATEROLE CREATEDB, made when
#                              missing) creates DB and runs the psql script;
#                              dies when a step fails

# bench_rate N START END — N / (END - START), rounded
bench_rate() {
	awk -v n="$1" -v s="$2" -v e="$3" 'BEGIN { printf "%.0f", n / (e - s) }'
}

# bench_median VALUES... — the middle value
bench_median() {
	printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"
}

# bench_pct A B — A as a percentage of B
bench_pct() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f %%", 100 * a / b }'
}

# bench_case CASE DEFAULT_BIN — split a --case value, NAME[@PATH]=OPTIONS,
# into BENCH_CASE_NAME, BENCH_CASE_BIN (PATH, else DEFAULT_BIN) and
# BENCH_CASE_OPTS
bench_case() {
	BENCH_CASE_NAME=${1%%=*}
	BENCH_CASE_OPTS=${1#*=}
	BENCH_CASE_BIN=$2
	if [[ $BENCH_CASE_NAME == *@* ]]; then
		BENCH_CASE_BIN=${BENCH_CASE_NAME#*@}
		BENCH_CASE_NAME=${BENCH_CASE_NAME%%@*}
	fi
}

# bench_sql_only_db DB DIR — see the header
bench_sql_only_db() {
	"$RO_ROOT/tools/build-sql-only" "$2" >/dev/null || ro_die "tools/build-sql-only failed"
	chmod -R a+rX "$2"
	pg_psql -d postgres >/dev/null <<-'EOF' || ro_die "could not create the admin role ro_bench_cloud_admin"
		SELECT 'CREATE ROLE ro_bench_cloud_admin LOGIN NOSUPERUSER CREATEROLE CREATEDB'
		 WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ro_bench_cloud_admin') \gexec
	EOF
	createdb -U ro_bench_cloud_admin "$1" || ro_die "the admin role could not create $1"
	pg_psql -U ro_bench_cloud_admin -d "$1" -f "$2/received_orders.sql" >/dev/null ||
		ro_die "the SQL-only flavour did not install into $1"
}

# bench_commit_ts_db DIRVAR DB — a throwaway PostgreSQL cluster (pg_start,
# its directory in the variable named DIRVAR, made current with pg_use)
# with track_commit_timestamp on, and database DB holding the extension
bench_commit_ts_db() {
	pg_start "$1" >&2
	pg_psql -c "ALTER SYSTEM SET track_commit_timestamp = on" >/dev/null
	pg_ctl_as restart -w -t 120 >/dev/null
	pg_use "${!1}"
	pg_createdb "$2" received_orders
}

BENCH_PREFILLED=0

# bench_reset_table — empty both tables (but the prefilled rows), forget the
# earlier runs' consumer groups (their positions, claims and status rows: a
# role claims at most 16 groups, and every run uses a fresh one), then
# checkpoint
bench_reset_table() {
	pg_psql -c 'TRUNCATE received_orders.received_orders_positions,
	            received_orders.received_orders_position_gaps,
	            received_orders.received_orders_consumer_groups,
	            received_orders.received_orders_feeders' >/dev/null
	if ((BENCH_PREFILLED > 0)); then
		pg_psql -c "DELETE FROM received_orders.received_orders WHERE external_reference <> 'prefill'" \
			-c 'TRUNCATE received_orders.received_orders_quarantine' \
			-c 'VACUUM received_orders.received_orders' -c 'CHECKPOINT' >/dev/null
	else
		pg_psql -c 'TRUNCATE received_orders.received_orders, received_orders.received_orders_quarantine' \
			-c 'CHECKPOINT' >/dev/null
	fi
}

# bench_prefill N — N orders of random UUIDs, kept by bench_reset_table
bench_prefill() {
	pg_psql -c 'TRUNCATE received_orders.received_orders' \
		-c "INSERT INTO received_orders.received_orders (order_id, external_reference, payload)
			SELECT u, 'prefill', jsonb_build_object('orderId', u, 'externalReference', 'prefill',
				'currency', 'EUR', 'total', (i % 100000) / 100.0)
			  FROM (SELECT i, gen_random_uuid() AS u FROM generate_series(1, $1) AS i) AS g" \
		-c 'VACUUM ANALYZE received_orders.received_orders' -c 'CHECKPOINT' >/dev/null
	BENCH_PREFILLED=$1
}

# bench_stored ROWS WHAT — die unless the table holds ROWS rows (the
# prefilled ones not counted)
bench_stored() {
	local rows
	rows=$(pg_query "$PGDATABASE" "SELECT count(*) FILTER (WHERE external_reference <> 'prefill') FROM received_orders.received_orders")
	[[ $rows == "$1" ]] || ro_die "$2 stored $rows rows, expected $1: not the same work"
}

# bench_ceiling SOURCE ROWS N — the server-side ceiling (see the header)
bench_ceiling() {
	local start end
	bench_reset_table
	bench_activity_begin
	start=$(date +%s.%N)
	pg_psql -c "INSERT INTO received_orders.received_orders (order_id, external_reference, payload)
		SELECT (e ->> 'orderId')::uuid, e ->> 'externalReference', e
		  FROM ($1 OFFSET 0) AS s (e) ON CONFLICT (order_id) DO NOTHING" >/dev/null
	end=$(date +%s.%N)
	bench_stored "$2" "the ceiling"
	ro_log "the ceiling, from the reset to the end: $(bench_activity_end)"
	bench_rate "$3" "$start" "$end"
}

# bench_ceiling2 SOURCE ROWS N [CPU_FILE] — the ceiling over two sessions
# (see the header); with CPU_FILE, also writes there the CPU seconds
# (user+system) its two backends used, read by each from /proc/self/stat
bench_ceiling2() {
	local start end half pids=() status=0 stat=() ticks=0
	bench_reset_table
	bench_activity_begin
	start=$(date +%s.%N)
	for half in 0 1; do
		stat[half]=$(mktemp)
		pg_psql -At -c "INSERT INTO received_orders.received_orders (order_id, external_reference, payload)
			SELECT (e ->> 'orderId')::uuid, e ->> 'externalReference', e
			  FROM (SELECT t::jsonb FROM ($1) AS q (t) WHERE (hashtext(t) & 1) = $half OFFSET 0) AS s (e)
			ON CONFLICT (order_id) DO NOTHING" \
			-c "SELECT pg_read_file('/proc/self/stat')" >"${stat[half]}" &
		pids+=($!)
	done
	for half in "${pids[@]}"; do
		wait "$half" || status=1
	done
	end=$(date +%s.%N)
	((status == 0)) || ro_die "a session of the two-session ceiling failed"
	bench_stored "$2" "the two-session ceiling"
	ro_log "the two-session ceiling, from the reset to the end: $(bench_activity_end)"
	for half in 0 1; do
		ticks=$((ticks + $(awk 'NF > 20 { print $14 + $15 }' "${stat[half]}")))
		rm -f "${stat[half]}"
	done
	[[ -z ${4:-} ]] || awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f\n", t / hz }' >"$4"
	bench_rate "$3" "$start" "$end"
}

# bench_batch_path BATCHES ROWS N — the batch function alone (see the header)
bench_batch_path() {
	local start end
	bench_reset_table
	pg_psql -c "SELECT setval('bench.batch_seq', 1, false)" >/dev/null
	start=$(date +%s.%N)
	"$(pg_bindir)/pgbench" -n -c 1 -t "$1" -f "$RO_ROOT/bench/sql/batch.pgbench" >/dev/null
	end=$(date +%s.%N)
	bench_stored "$2" "the batch path"
	bench_rate "$3" "$start" "$end"
}

# bench_activity_counters — one line: checkpoints, autovacuum+autoanalyze
# runs, WAL bytes, full-page images, then the machine's busy and steal ticks
# (/proc/stat)
bench_activity_counters() {
	local stat
	stat=$(pg_query "${PGDATABASE:-postgres}" "
		SELECT (SELECT checkpoints_timed + checkpoints_req FROM pg_stat_bgwriter),
		       (SELECT coalesce(sum(autovacuum_count + autoanalyze_count), 0) FROM pg_stat_all_tables),
		       (SELECT wal_bytes FROM pg_stat_wal), (SELECT wal_fpi FROM pg_stat_wal)" | tr '|' ' ')
	awk -v s="$stat" '$1 == "cpu" { print s, $2 + $3 + $4 + $7 + $8, $9; exit }' /proc/stat
}

# bench_wal_inodes — the inodes of the WAL segment files now in pg_wal (a
# recycled segment keeps its inode under a new name; a created one is new)
bench_wal_inodes() {
	ls -i "$RO_PG_DIR/data/pg_wal" 2>/dev/null | awk '$2 ~ /^[0-9A-F]+$/ { print $1 }' | sort
}

# bench_activity_begin — see the header
bench_activity_begin() {
	BENCH_ACTIVITY0=$(bench_activity_counters)
	BENCH_WAL_INODES0=$(bench_wal_inodes)
}

# bench_activity_end — see the header; sets BENCH_ACTIVITY to the line too
bench_activity_end() {
	local now created hz
	now=$(bench_activity_counters)
	hz=$(getconf CLK_TCK)
	created=$(comm -13 <(printf '%s\n' "$BENCH_WAL_INODES0") <(bench_wal_inodes) | grep -c . || true)
	BENCH_ACTIVITY=$(awk -v a="$BENCH_ACTIVITY0" -v b="$now" -v c="$created" -v hz="$hz" 'BEGIN {
		split(a, x, " "); split(b, y, " ")
		printf "checkpoints %d, autovacuum %d, WAL %.0f MB (%d full-page images), WAL segments created %d, CPU steal %.1f s, CPU of the machine %.1f s",
			y[1] - x[1], y[2] - x[2], (y[3] - x[3]) / 1048576, y[4] - x[4], c,
			(y[6] - x[6]) / hz, (y[5] - x[5]) / hz }')
	echo "$BENCH_ACTIVITY"
}
