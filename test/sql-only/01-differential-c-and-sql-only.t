#!/bin/bash
# test/sql-only/01-differential-c-and-sql-only.t — the SQL-only flavour
# (tools/build-sql-only) agrees with the C extension: installed by a
# NOSUPERUSER CREATEROLE CREATEDB admin role (a managed service's), owned by
# a NOLOGIN role, it gives the same result rows, outcomes, SQLSTATEs,
# messages, warnings, stored rows, quarantine rows, positions and group
# claims as the C extension for the same seeded random and hostile
# messages (fuzz-inputs.sql), fed to both in twin databases by the same
# role, not a superuser (fuzz-run.sql: materialize_order, the plain and
# the consumer group's materialize_orders, check_consumer_group; then, some
# quarantine rows repaired, fuzz-replay.sql: replay_quarantined); a flavour
# with one rule changed disagrees (the comparison can fail).  pgTAP on
# the flavour is 09-pgtap-on-sql-only.t.
#
# RO_SQL_ONLY_SEED (default 0.42, in -1..1) and RO_SQL_ONLY_BATCHES (default
# 40, about 31 messages each) choose the input.  TAP on stdout; starts its
# own PostgreSQL 15 cluster (it creates roles) and needs the C extension
# installed there (make install, as test/run does).

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"

HERE=$(cd "$(dirname "$0")" && pwd -P)
ROOT=$(cd "$HERE/../.." && pwd -P)
SEED=${RO_SQL_ONLY_SEED:-0.42}
BATCHES=${RO_SQL_ONLY_BATCHES:-40}
ADMIN=ro_cloud_admin
CALLER=ro_fuzz_caller
C_DB=ro_flavour_c
SQL_DB=ro_flavour_sql
BROKEN_DB=ro_flavour_broken
GEN_DB=ro_fuzz_inputs

# as_admin DB ARGS... — psql as the managed service's admin role
as_admin() {
	local db=$1
	shift
	pg_psql -U "$ADMIN" -d "$db" "$@"
}

# install_sql_only DB SCRIPT — a database of the admin role with SCRIPT run
# into it by psql -f, as on a managed service
install_sql_only() {
	createdb -U "$ADMIN" "$1" && as_admin "$1" -f "$2" 2>&1
}

# grant_caller DB GRANTOR — what the fuzz run's role needs in DB, granted
# by GRANTOR (the C extension's superuser, the flavour's admin role):
# EXECUTE on the functions it calls, a place for its tables
grant_caller() {
	pg_psql -U "$2" -d "$1" -c "GRANT USAGE ON SCHEMA received_orders TO $CALLER" \
		-c "GRANT EXECUTE ON FUNCTION received_orders.materialize_order(jsonb),
			received_orders.materialize_orders(bytea[], text[], integer[], bigint[], bytea[]),
			received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[]),
			received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[]),
			received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[], bytea[], integer[], text[], uuid[]),
			received_orders.check_consumer_group(text, text),
			received_orders.replay_quarantined(bigint) TO $CALLER" \
		-c "GRANT CREATE ON SCHEMA public TO $CALLER"
}

# feed DB OUT — copy the fuzz input into DB and run fuzz-run.sql as the
# fuzz run's role (not a superuser: it claims the group); warnings
# (without context lines) to OUT.warnings
feed() {
	local db=$1 role=$CALLER out=$2
	pg_psql -U "$role" -d "$db" -c "CREATE TABLE public.fuzz_input (batch integer, pos integer, val bytea,
		topic text, part integer, off bigint, key bytea, PRIMARY KEY (batch, pos))" &&
		pg_psql -d "$GEN_DB" -c "COPY public.fuzz_input TO STDOUT" |
		pg_psql -U "$role" -d "$db" -c "COPY public.fuzz_input FROM STDIN" &&
		pg_psql -U "$role" -d "$db" -c "CREATE TABLE public.fuzz_outbox_options (batch integer PRIMARY KEY,
			envelope text, event_type text, type_header text)" \
			-c "CREATE TABLE public.fuzz_outbox_input (batch integer, pos integer, val bytea, topic text,
			part integer, off bigint, key bytea, mtype bytea, ctype bytea, PRIMARY KEY (batch, pos))" &&
		pg_psql -d "$GEN_DB" -c "COPY public.fuzz_outbox_options TO STDOUT" |
		pg_psql -U "$role" -d "$db" -c "COPY public.fuzz_outbox_options FROM STDIN" &&
		pg_psql -d "$GEN_DB" -c "COPY public.fuzz_outbox_input TO STDOUT" |
		pg_psql -U "$role" -d "$db" -c "COPY public.fuzz_outbox_input FROM STDIN" &&
		pg_psql -U "$role" -d "$db" -c "CREATE TABLE public.fuzz_framed_input (batch integer, pos integer, val bytea,
			topic text, part integer, off bigint, key bytea, mtype bytea, ctype bytea, decoded bytea,
			schema_id integer, decode_error text, guid uuid, PRIMARY KEY (batch, pos))" &&
		pg_psql -d "$GEN_DB" -c "COPY public.fuzz_framed_input TO STDOUT" |
		pg_psql -U "$role" -d "$db" -c "COPY public.fuzz_framed_input FROM STDIN" &&
		pg_psql -U "$role" -v SHOW_CONTEXT=never -d "$db" -f "$HERE/fuzz-run.sql" 2>"$out.warnings" &&
		pg_psql -U "$role" -v SHOW_CONTEXT=never -d "$db" -f "$HERE/fuzz-outbox-run.sql" 2>>"$out.warnings" &&
		pg_psql -d "$db" -f - <<-'EOF' &&
			-- an operator's repairs: a new order, a duplicate, a value removed
			UPDATE received_orders.received_orders_quarantine
			   SET raw_value = convert_to(format('{"orderId": "%s", "externalReference": "REPAIRED-%s"}',
			                                     md5('repair' || id)::uuid, id), 'UTF8')
			 WHERE id % 4 = 1 AND raw_value_bytes IS NULL;
			UPDATE received_orders.received_orders_quarantine
			   SET raw_value = (SELECT convert_to(payload::text, 'UTF8') FROM received_orders.received_orders
			                     ORDER BY order_id LIMIT 1)
			 WHERE id % 4 = 2 AND raw_value_bytes IS NULL;
			-- a framed value repaired in its frame, with a new order
			UPDATE received_orders.received_orders_quarantine
			   SET raw_value = '\x00'::bytea || int4send(value_schema_id)
			                   || convert_to(format('{"orderId": "%s", "externalReference": "FRAMED-%s"}',
			                                        md5('reframed' || id)::uuid, id), 'UTF8')
			 WHERE id % 4 = 3 AND value_schema_id IS NOT NULL AND raw_value_bytes IS NULL;
			UPDATE received_orders.received_orders_quarantine SET raw_value = NULL WHERE id % 17 = 0;
		EOF
		pg_psql -U "$role" -d "$db" -f "$HERE/fuzz-replay.sql" &&
		sed -i 's/^psql:[^ ]*: //' "$out.warnings"
}

# outcomes DB — what a flavour left: result rows, call errors, single-event
# results, stored rows (all but received_at), quarantine rows (all but
# quarantined_at; the value by its digest), one section each
outcomes() {
	pg_psql -At -d "$1" <<-'EOF'
		\echo -- batch results
		SELECT * FROM public.fuzz_batch_result ORDER BY batch, pos;
		\echo -- call errors
		SELECT * FROM public.fuzz_call_error ORDER BY batch;
		\echo -- single events
		SELECT * FROM public.fuzz_single_result ORDER BY batch, pos;
		\echo -- received_orders
		SELECT order_id, external_reference, payload, value_schema_id
		  FROM received_orders.received_orders ORDER BY order_id;
		\echo -- replays
		SELECT * FROM public.fuzz_replay_result ORDER BY quarantine_id NULLS FIRST;
		SELECT quarantine_id, kafka_topic, kafka_partition, kafka_offset, outcome, sqlstate, reason,
		       order_id, replayed_as
		  FROM received_orders.received_orders_replays ORDER BY quarantine_id;
		\echo -- positions
		SELECT consumer_group, kafka_topic, kafka_partition, next_offset
		  FROM received_orders.received_orders_positions ORDER BY 1, 2, 3;
		\echo -- consumer groups
		SELECT consumer_group, owner_role, kafka_cluster_id FROM received_orders.received_orders_consumer_groups ORDER BY 1;
		\echo -- quarantine
		SELECT id, kafka_topic, kafka_partition, kafka_offset, kafka_key, md5(raw_value), order_id,
		       outcome, sqlstate, reason, kafka_key_bytes, raw_value_bytes, message_digest, envelope,
		       kafka_headers, legacy_copy, value_schema_id, value_schema_guid
		  FROM received_orders.received_orders_quarantine ORDER BY id;
	EOF
}

tap_plan 16

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-sql-only.XXXXXX")
ro_on_exit "[[ ${RO_KEEP_TMP:-0} == 1 ]] || rm -rf -- '$WORK'"
chmod 755 "$WORK"

tap_cmd "tools/build-sql-only composes the psql script and the pg_tle wrapper" \
	"$ROOT/tools/build-sql-only" "$WORK/build"
tap_cmd "tools/build-sql-only --check finds them up to date" \
	"$ROOT/tools/build-sql-only" --check "$WORK/build"
chmod -R a+rX "$WORK"

# shellcheck disable=SC2034 # set by pg_start through its name
CLUSTER=
pg_start CLUSTER >&2 || tap_bail "could not start PostgreSQL"
pg_psql -d postgres -c "CREATE ROLE $ADMIN LOGIN NOSUPERUSER CREATEROLE CREATEDB" \
	-c "CREATE ROLE $CALLER LOGIN" >&2

tap_cmd "the C extension is created in one database (a superuser's CREATE EXTENSION)" \
	pg_createdb "$C_DB" received_orders
tap_last_ok || tap_bail "received_orders is not installed in $(pg_bindir)"

out=$(install_sql_only "$SQL_DB" "$WORK/build/received_orders.sql") || true
tap_is "$(grep -E 'ERROR|FATAL' <<<"$out" || true)" "" \
	"the psql script installs into another as the admin role (NOSUPERUSER CREATEROLE CREATEDB)"

tap_is "$(pg_query "$SQL_DB" "SELECT DISTINCT pg_get_userbyid(p.proowner) || ' ' || l.lanname
		FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
		WHERE p.pronamespace = 'received_orders'::regnamespace ORDER BY 1")
$(pg_query "$SQL_DB" "SELECT rolname, rolsuper, rolcanlogin FROM pg_roles WHERE oid = (SELECT nspowner FROM pg_namespace WHERE nspname = 'received_orders')")" \
	$'received_orders_owner plpgsql\nreceived_orders_owner sql\nreceived_orders_owner|f|f' \
	"every function is SQL or PL/pgSQL, owned by received_orders_owner (NOLOGIN, no superuser), which owns the schema"

# the functions as the catalog has them, their owner named OWNER: signature,
# result, volatility, strictness, SECURITY DEFINER, settings, rows, ACL
signatures="SELECT p.oid::regprocedure, pg_get_function_result(p.oid), p.provolatile, p.proisstrict,
		p.prosecdef, p.proconfig, p.prorows, p.proparallel,
		replace(coalesce(p.proacl, acldefault('f', p.proowner))::text, pg_get_userbyid(p.proowner), 'OWNER')
	FROM pg_proc p WHERE p.pronamespace = 'received_orders'::regnamespace ORDER BY 1"
tap_is "$(pg_query "$SQL_DB" "$signatures")" "$(pg_query "$C_DB" "$signatures")" \
	"the functions' signatures, results, volatility, SECURITY DEFINER, search_path, rows and ACLs are the C extension's"

tap_is "$(pg_psql -At -d "$SQL_DB" -f "$HERE/fingerprint.sql")" "$(pg_psql -At -d "$C_DB" -f "$HERE/fingerprint.sql")" \
	"the catalog fingerprint (relations, columns, constraints, indexes, views, triggers, types, comments, ACLs) is the C extension's"

pg_createdb "$GEN_DB" >&2
tap_cmd "the seeded fuzz input is drawn (seed $SEED, $BATCHES batches, and as many of outbox messages)" \
	pg_psql -v seed="$SEED" -v batches="$BATCHES" -d "$GEN_DB" -f "$HERE/fuzz-inputs.sql" \
	-f "$HERE/fuzz-outbox-inputs.sql"
tap_diag "fuzz input: $(pg_query "$GEN_DB" "SELECT count(*) || ' messages in ' || count(DISTINCT batch) || ' batches, ' || sum(length(val)) || ' bytes' FROM public.fuzz_input")"

grant_caller "$C_DB" postgres >&2
grant_caller "$SQL_DB" "$ADMIN" >&2
tap_cmd "the C extension takes the fuzz input" feed "$C_DB" "$WORK/c"
tap_cmd "the SQL-only flavour takes the fuzz input (the grants given by the admin role)" feed "$SQL_DB" "$WORK/sql"

outcomes "$C_DB" >"$WORK/c.outcomes"
outcomes "$SQL_DB" >"$WORK/sql.outcomes"

# the outbox input reached every envelope rule and type decision
reasons=$(pg_query "$C_DB" "SELECT DISTINCT coalesce(sqlstate, outcome) || ' ' || substring(
		regexp_replace(message, '(a boolean|a number|an array|null|a string|empty)(,.*)?$', 'KIND')
		FROM '^(?:envelope [a-z]*: [a-zA-Z_0-9 \"]*|event type|header)')
	FROM public.fuzz_batch_result WHERE batch > 1000 AND message ~ '^(envelope|event type|header)' ORDER BY 1")
want=$(
	cat <<-'EOF'
		22023 envelope cloudevents: "data" is KIND
		22023 envelope cloudevents: "data" is missing 
		22023 envelope cloudevents: "data_base64" is KIND
		22023 envelope cloudevents: "specversion" is KIND
		22023 envelope cloudevents: "specversion" is missing
		22023 envelope cloudevents: "type" is KIND
		22023 envelope cloudevents: "type" is given more than once
		22023 envelope cloudevents: "type" is missing
		22023 envelope cloudevents: both "data" and "data_base64" are present
		22023 envelope cloudevents: the value is KIND
		22023 envelope debezium: "payload" is KIND
		22023 envelope debezium: "payload" is given more than once
		22023 envelope debezium: "payload" is missing 
		22023 envelope debezium: "schema" is given more than once
		22023 envelope debezium: the value is KIND
		22023 header
		22P02 envelope cloudevents: "data_base64" is not valid base64
		22P02 envelope cloudevents: the value is not valid JSON
		22P02 envelope debezium: the value is not valid JSON
		skipped event type
	EOF
)
tap_is "$reasons" "$want" "the outbox input reaches every envelope refusal and type decision in the C extension"

# the input reached every rule: each reason of the C extension is among its
# results (a fuzzer that stopped drawing some kind would compare nothing)
reasons=$(pg_query "$C_DB" "SELECT DISTINCT sqlstate || ' ' || CASE WHEN sqlstate = '23505' THEN 'conflict' ELSE substring(message FROM '^[a-z \"A-Z]*') END FROM public.fuzz_batch_result WHERE sqlstate IS NOT NULL AND batch < 1000 ORDER BY 1")
want=$(
	cat <<-'EOF'
		22001 field "externalReference" is longer than 
		22003 value overflows numeric format
		22004 value is null 
		22023 event is not a JSON object
		22023 field "externalReference" is blank
		22023 field "externalReference" is missing
		22023 field "externalReference" must be a string
		22023 field "orderId" is missing
		22023 field "orderId" must be a string
		22P02 event is not valid JSON
		22P02 event is not valid UTF
		22P02 field "orderId" is not a valid UUID
		22P02 invalid input syntax for type json
		22P05 event contains 
		23505 conflict
		54000 event is too large
		54001 event is nested more than 
	EOF
)
tap_is "$reasons" "$want" "the fuzz input reaches every rejection reason and conflicts in the C extension"
tap_diag "C extension: $(pg_query "$C_DB" "SELECT string_agg(outcome || ' ' || n, ', ' ORDER BY outcome) FROM (SELECT outcome, count(*) n FROM public.fuzz_batch_result GROUP BY 1) s")"

tap_is "$(diff "$WORK/c.outcomes" "$WORK/sql.outcomes" | head -40 || true)" "" \
	"result rows, call errors, single-event results, stored rows and quarantine rows are the same in both flavours"
tap_is "$(diff "$WORK/c.warnings" "$WORK/sql.warnings" | head -20 || true)" "" \
	"the same warnings, in the same order ($(grep -c '^WARNING' "$WORK/c.warnings" || true) conflicts)"

# one rule changed in a copy of the flavour: the comparison must see it
sed 's/char_length(ev.payload ->> '"'"'externalReference'"'"') > 255/char_length(ev.payload ->> '"'"'externalReference'"'"') > 256/' \
	"$WORK/build/received_orders.sql" >"$WORK/broken.sql"
tap_ok "$(cmp -s "$WORK/build/received_orders.sql" "$WORK/broken.sql" && echo 1 || echo 0)" \
	"a copy of the flavour with the externalReference limit at 256 characters is made"
out=$(install_sql_only "$BROKEN_DB" "$WORK/broken.sql") || true
grant_caller "$BROKEN_DB" "$ADMIN" >&2 || true
feed "$BROKEN_DB" "$WORK/broken" || true
outcomes "$BROKEN_DB" >"$WORK/broken.outcomes"
tap_ok "$(diff -q "$WORK/c.outcomes" "$WORK/broken.outcomes" >/dev/null && echo 1 || echo 0)" \
	"and the comparison finds that it disagrees with the C extension"

tap_done
