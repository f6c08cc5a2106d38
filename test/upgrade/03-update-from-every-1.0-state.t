#!/bin/bash
# test/upgrade/03-update-from-every-1.0-state.t — the update from 1.0 succeeds
# on every state 1.0 could leave, and keeps every row.
#
# 1.0's quarantine was unique on (kafka_topic, kafka_partition, kafka_offset)
# with NULLs distinct: a message quarantined without coordinates, or with some
# of them only, got a row per call.  1.1's key (coordinates and digest, NULLs
# not distinct) found those rows duplicated and the update aborted ("Key ...
# is duplicated"), so that such a database could not leave 1.0.  The update
# now numbers the later copies (legacy_copy 1, 2, ...) and keeps them.
#
# A database installed at 1.0 (CREATE EXTENSION ... VERSION '1.0') is filled
# through every 1.0 entry point, the odd calls included: materialize_order,
# materialize_orders without coordinates, with some of them, with NULL and
# negative ones, the same bytes twice in one call and in two calls, conflicts,
# NULL values and keys, a value over received_orders.max_event_bytes (kept
# whole by 1.0), redeliveries and other bytes at full coordinates, a row a DBA
# repaired and replayed, rows repaired and not replayed yet, coordinates a DBA
# removed.  Then ALTER EXTENSION ... UPDATE TO '1.1' and UPDATE (to
# default_version) must succeed, every row keep its 1.0 content, the copies be
# numbered in the order of their ids, replay_quarantined work on the legacy
# rows as documented, redeliveries through 1.1's functions be stored as
# documented (once per message and coordinates), and the schema be the one of
# a fresh install.  A database already at 1.1 as the former update left it
# (no legacy_copy; the key without it) converges to the same schema at 1.2.
# TAP on stdout.  Uses the harness's cluster, or starts its own when run alone.

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"
# shellcheck source=test/lib/orders.sh
. "$(dirname "$0")/../lib/orders.sh"

OLD=ro_every_old_$$
FRESH=ro_every_fresh_$$
OLD11=ro_every_old11_$$
GROUP=every-group

# sql_capture DB SQL — run SQL, print its output with notices (stderr)
# merged; fails as psql does
sql_capture() {
	pg_psql -At -d "$1" -c "$2" 2>&1
}

# extversion DB — the installed version of received_orders in DB
extversion() {
	pg_query "$1" "SELECT extversion FROM pg_extension WHERE extname = 'received_orders'"
}

# create_at_version DB VERSION — a new database with the extension at VERSION
create_at_version() {
	pg_createdb "$1" && pg_query "$1" "CREATE EXTENSION received_orders VERSION '$2'"
}

# ev N REF — the bytea literal of order N's event with externalReference REF
ev() {
	printf "convert_to('%s', 'UTF8')" "$(ro_order_event "$1" "$2")"
}

# digest_sql — SQL of the digest 1.1 gives a quarantined message q
digest_sql() {
	printf '%s' "sha256(CASE WHEN q.kafka_key IS NULL THEN '\\x00'::bytea
		ELSE '\\x01'::bytea || int4send(length(q.kafka_key)) || q.kafka_key END
		|| CASE WHEN q.raw_value IS NULL THEN '\\x00'::bytea ELSE '\\x01'::bytea || q.raw_value END)"
}

# copies DB — "id|n" of each quarantine row that repeats an earlier one
# (lower id) at the same coordinates with the same key and value (NULLs
# equal): the n-th copy; computed from the rows, whatever the version
copies() {
	pg_query "$1" "SELECT id || '|' || n FROM (
		SELECT q.id, row_number() OVER (PARTITION BY q.kafka_topic, q.kafka_partition, q.kafka_offset,
		                                             $(digest_sql) ORDER BY q.id) - 1 AS n
		  FROM received_orders.received_orders_quarantine q) c
		WHERE n > 0 ORDER BY id" || echo "copies of $1: query failed"
}

# rows_of DB VALUE — how many quarantine rows hold the value of the bytea SQL
# expression VALUE without a key, at any coordinates
rows_of() {
	pg_query "$1" "SELECT count(*) FROM received_orders.received_orders_quarantine q
		WHERE q.kafka_key IS NULL AND q.raw_value = $2"
}

# schema DB — the extension's tables as a DBA would compare them: columns in
# order (dropped ones left out), their types, NOT NULL, defaults and comments,
# constraints and indexes by name and definition, table comments
schema() {
	pg_query "$1" "SELECT c.relname || ' column ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
		       || CASE WHEN a.attnotnull THEN ' NOT NULL' ELSE '' END
		       || coalesce(' DEFAULT ' || pg_get_expr(d.adbin, d.adrelid), '')
		       || coalesce(' -- ' || col_description(c.oid, a.attnum), '')
		  FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid
		  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
		 WHERE c.relnamespace = 'received_orders'::regnamespace AND c.relkind = 'r'
		   AND a.attnum > 0 AND NOT a.attisdropped
		 ORDER BY c.relname, a.attnum;
		SELECT t.relname || ' constraint ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
		  FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid
		 WHERE t.relnamespace = 'received_orders'::regnamespace ORDER BY 1;
		SELECT 'index ' || pg_get_indexdef(i.indexrelid)
		  FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid
		 WHERE t.relnamespace = 'received_orders'::regnamespace ORDER BY 1;
		SELECT c.relname || ' comment ' || coalesce(obj_description(c.oid, 'pg_class'), '(none)')
		  FROM pg_class c WHERE c.relnamespace = 'received_orders'::regnamespace AND c.relkind = 'r'
		 ORDER BY 1" || echo "schema of $1: query failed"
}

# former_1_1 DB — a new database at 1.1 as the update from 1.0 left it before
# legacy_copy: made from a 1.1 install (the dropped column is invisible to
# schema), with a message quarantined twice without coordinates (one row)
former_1_1() {
	create_at_version "$1" 1.1 && pg_query "$1" "ALTER TABLE received_orders.received_orders_quarantine
		DROP CONSTRAINT received_orders_quarantine_message_key,
		DROP COLUMN legacy_copy,
		ADD CONSTRAINT received_orders_quarantine_message_key
			UNIQUE NULLS NOT DISTINCT (kafka_topic, kafka_partition, kafka_offset, message_digest);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xff'::bytea, '\\xff'::bytea])"
}

# populate DB — fill a 1.0 database through every 1.0 entry point
populate() {
	pg_psql -At -d "$1" <<-EOF
		SET client_min_messages = error;  -- conflict WARNINGs are expected
		-- materialize_order: an insert, a duplicate, a conflict (not quarantined)
		SELECT received_orders.materialize_order('$(ro_order_event 1 EXT-1)');
		SELECT received_orders.materialize_order('$(ro_order_event 1 EXT-1)');
		SELECT received_orders.materialize_order('$(ro_order_event 1 EXT-OTHER)');
		-- a batch without coordinates: inserted, duplicate, and the same bad
		-- bytes twice in one call, then once more in another call
		SELECT count(*) FROM received_orders.materialize_orders(
			ARRAY[$(ev 6 EXT-6), $(ev 1 EXT-1), '\\xff'::bytea, '\\xff'::bytea]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xff'::bytea]);
		-- a conflict without coordinates, in two calls
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY[$(ev 1 EXT-OTHER)]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY[$(ev 1 EXT-OTHER)]);
		-- partial coordinates, each twice: the topic only; topic and partition;
		-- partition and offset; the offset only (NULL elements)
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xfe'::bytea, '\\xfe'::bytea], ARRAY['t', 't']);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xfd'::bytea], ARRAY['t'], ARRAY[0]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xfd'::bytea], ARRAY['t'], ARRAY[0]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xfc'::bytea], NULL, ARRAY[0], ARRAY[5]::bigint[]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xfc'::bytea], NULL, ARRAY[0], ARRAY[5]::bigint[]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xfb'::bytea, '\\xfb'::bytea],
			ARRAY[NULL, NULL]::text[], ARRAY[NULL, NULL]::int[], ARRAY[7, 7]::bigint[]);
		-- coordinates Kafka never gives, which 1.0 took: an empty topic, a
		-- negative partition, no offset; twice
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xf8'::bytea, '\\xf8'::bytea],
			ARRAY['', ''], ARRAY[-1, -1]);
		-- NULL values, without and with a key; the same value under two keys
		-- (two messages, not copies)
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY[NULL, NULL]::bytea[]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY[NULL, NULL]::bytea[],
			NULL, NULL, NULL, ARRAY['\\x6b', '\\x6b']::bytea[]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xf4'::bytea, '\\xf4'::bytea],
			NULL, NULL, NULL, ARRAY['\\x01', '\\x02']::bytea[]);
		-- a valid event larger than received_orders.max_event_bytes (54000),
		-- kept whole by 1.0, twice without coordinates
		SELECT count(*) FROM (
			SELECT convert_to(format('{"orderId": "00000000-0000-4000-8000-000000000004", "externalReference": "EXT-4", "pad": "%s"}',
			                         repeat('x', 1100000)), 'UTF8') AS v) e,
			LATERAL received_orders.materialize_orders(ARRAY[e.v, e.v]);
		-- full coordinates: a redelivery (kept once), other bytes at the same
		-- coordinates (1.0 dropped them), a conflict
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xfa'::bytea], ARRAY['t'], ARRAY[1], ARRAY[1]::bigint[]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xfa'::bytea], ARRAY['t'], ARRAY[1], ARRAY[1]::bigint[]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xf9'::bytea], ARRAY['t'], ARRAY[1], ARRAY[1]::bigint[]);
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY[$(ev 1 EXT-OTHER)], ARRAY['t'], ARRAY[1], ARRAY[2]::bigint[]);
		-- a DBA repairs a rejected row and replays it (order 2 inserted, row gone)
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xf7'::bytea]);
		UPDATE received_orders.received_orders_quarantine SET raw_value = $(ev 2 EXT-2) WHERE raw_value = '\\xf7';
		SELECT received_orders.replay_quarantined(id) FROM received_orders.received_orders_quarantine
		 WHERE raw_value = $(ev 2 EXT-2);
		-- a DBA repairs two rejected rows to the same event, not replayed yet
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xf6', '\\xf5']::bytea[]);
		UPDATE received_orders.received_orders_quarantine SET raw_value = $(ev 3 EXT-3)
		 WHERE raw_value IN ('\\xf6', '\\xf5');
		-- a DBA removes the offsets of two rows of the same bytes
		SELECT count(*) FROM received_orders.materialize_orders(ARRAY['\\xf3', '\\xf3']::bytea[],
			ARRAY['t', 't'], ARRAY[2, 2], ARRAY[1, 2]::bigint[]);
		UPDATE received_orders.received_orders_quarantine SET kafka_offset = NULL WHERE raw_value = '\\xf3';
	EOF
}

tap_plan 25

pg_ensure_cluster >&2
ro_on_exit "dropdb --if-exists $OLD 2>/dev/null; dropdb --if-exists $FRESH 2>/dev/null; dropdb --if-exists $OLD11 2>/dev/null"

DEFAULT=$(pg_query postgres "SELECT default_version FROM pg_available_extensions WHERE name = 'received_orders'")
[[ -n $DEFAULT ]] || tap_bail "received_orders is not installed (no control file)"

tap_cmd "CREATE EXTENSION received_orders VERSION '1.0' succeeds" \
	create_at_version "$OLD" 1.0
tap_last_ok || tap_bail "could not install version 1.0"

tap_cmd "version 1.0 is filled through every entry point, the odd calls included" populate "$OLD"
tap_last_ok || tap_bail "could not fill the 1.0 database"

BEFORE=$(ro_snapshot "$OLD" 1.0)
COPIES=$(copies "$OLD")
tap_is "$(pg_query "$OLD" "SELECT (SELECT count(*) FROM received_orders.received_orders),
		(SELECT count(*) FROM received_orders.received_orders_quarantine)")|$(wc -l <<<"$COPIES")" \
	"3|29|13" "1.0 holds 3 orders and 29 quarantine rows, 13 of them copies of an earlier row at the same coordinates"

tap_like "$(sql_capture "$OLD" "ALTER EXTENSION received_orders UPDATE TO '1.1'"; echo "exit $?")" "^exit 0$" \
	"ALTER EXTENSION received_orders UPDATE TO '1.1' succeeds"

tap_is "$(extversion "$OLD")" "1.1" "the installed version is 1.1"

tap_is "$(ro_snapshot "$OLD" 1.0)" "$BEFORE" "at 1.1 every order and quarantine row is there with its 1.0 content"

tap_is "$(pg_query "$OLD" "SELECT id || '|' || legacy_copy FROM received_orders.received_orders_quarantine
		WHERE legacy_copy IS NOT NULL ORDER BY id")" "$COPIES" \
	"the copies are numbered legacy_copy 1, 2, ... in the order of their ids; every other row has none"

tap_like "$(sql_capture "$OLD" "ALTER EXTENSION received_orders UPDATE"; echo "exit $?")" "exit 0$" \
	"ALTER EXTENSION received_orders UPDATE (to $DEFAULT) succeeds"

tap_is "$(extversion "$OLD")" "$DEFAULT" "the installed version is default_version $DEFAULT"

tap_is "$(ro_snapshot "$OLD" 1.0)" "$BEFORE" "at $DEFAULT every order and quarantine row is there with its 1.0 content"

tap_is "$(pg_query "$OLD" "SELECT count(*) FILTER (WHERE q.message_digest = $(digest_sql)
		    AND q.kafka_key_bytes IS NULL AND q.raw_value_bytes IS NULL), count(*)
		  FROM received_orders.received_orders_quarantine q")" "29|29" \
	"every row has the digest of its key and value, and is kept whole (the oversize value too)"

tap_cmd "a fresh database gets version $DEFAULT with CREATE EXTENSION" pg_createdb "$FRESH" received_orders

tap_is "$(schema "$OLD")" "$(schema "$FRESH")" \
	"the updated extension's tables, columns, constraints, indexes and comments are a fresh install's"

# 1.1's functions meet the legacy rows ---------------------------------------------

tap_is "$(pg_query "$OLD" "SELECT outcome FROM received_orders.materialize_orders(ARRAY['\\xff'::bytea]);
		SELECT outcome FROM received_orders.materialize_orders(ARRAY['\\xfe'::bytea], ARRAY['t']);
		SELECT outcome FROM received_orders.materialize_orders(ARRAY[NULL::bytea])")|$(rows_of "$OLD" "'\\xff'")|$(rows_of "$OLD" "'\\xfe'")|$(
		pg_query "$OLD" "SELECT count(*) FROM received_orders.received_orders_quarantine WHERE raw_value IS NULL AND kafka_key IS NULL")" \
	$'rejected\nrejected\nrejected|3|2|2' \
	"a message redelivered without coordinates, or with the same partial ones, is rejected and stored no more (the legacy rows hold it)"

tap_is "$(pg_query "$OLD" "SELECT outcome FROM received_orders.materialize_orders('$GROUP',
		ARRAY['\\xff'::bytea], ARRAY['t'], ARRAY[3], ARRAY[0]::bigint[]);
		SELECT outcome FROM received_orders.materialize_orders('$GROUP',
		ARRAY['\\xff'::bytea], ARRAY['t'], ARRAY[3], ARRAY[0]::bigint[])")|$(rows_of "$OLD" "'\\xff'")" \
	$'rejected\nrejected|4' \
	"the same message from Kafka at coordinates of its own gets one row of its own, redelivered there stored once"

tap_is "$(pg_query "$OLD" "SELECT count(*) FROM received_orders.received_orders_quarantine WHERE legacy_copy IS NOT NULL")" \
	"13" "1.1's batches numbered nothing: only the legacy copies have a legacy_copy"

# replay_quarantined on the legacy rows ----------------------------------------------

tap_is "$(pg_query "$OLD" "SELECT received_orders.replay_quarantined(id) FROM received_orders.received_orders_quarantine
		WHERE raw_value = $(ev 3 EXT-3) ORDER BY id")|$(rows_of "$OLD" "$(ev 3 EXT-3)")" \
	$'inserted\nduplicate|0' \
	"the repaired row and its legacy copy replay: inserted, then duplicate, both rows removed"

tap_is "$(pg_query "$OLD" "LOAD 'received_orders'; SET received_orders.max_event_bytes = '4MB';
		SELECT received_orders.replay_quarantined(id) FROM received_orders.received_orders_quarantine
		WHERE length(raw_value) > 1000000 ORDER BY id;
		SELECT count(*) FROM received_orders.received_orders_quarantine WHERE length(raw_value) > 1000000")" \
	$'inserted\nduplicate\n0' \
	"the oversize event 1.0 kept whole and its copy replay once the limit is raised"

tap_is "$(pg_query "$OLD" "UPDATE received_orders.received_orders_quarantine SET raw_value = $(ev 5 EXT-5)
		WHERE id = (SELECT max(id) FROM received_orders.received_orders_quarantine
		             WHERE raw_value = '\\xff' AND legacy_copy IS NOT NULL);
		SELECT received_orders.replay_quarantined(id) FROM received_orders.received_orders_quarantine
		WHERE raw_value = $(ev 5 EXT-5)")|$(rows_of "$OLD" "'\\xff'")" \
	"inserted|3" "a legacy copy repaired alone replays (inserted); the other copies of its message stay"

tap_like "$(sql_capture "$OLD" "SELECT received_orders.replay_quarantined(max(id)) FROM received_orders.received_orders_quarantine
		WHERE raw_value = $(ev 1 EXT-OTHER)"; echo "exit $?"; rows_of "$OLD" "$(ev 1 EXT-OTHER)")" \
	"order 00000000-0000-4000-8000-000000000001 is already stored with another externalReference.*exit [1-9]"$'\n'"3$" \
	"a legacy copy of a conflict still conflicts on replay and stays"

tap_like "$(sql_capture "$OLD" "SELECT received_orders.replay_quarantined(max(id)) FROM received_orders.received_orders_quarantine
		WHERE raw_value = '\\xfe'"; echo "exit $?"; rows_of "$OLD" "'\\xfe'")" "^ERROR: .*exit [1-9]"$'\n'"2$" \
	"a legacy copy of a still invalid message fails its replay"

tap_is "$(pg_query "$OLD" "SELECT order_id FROM received_orders.received_orders ORDER BY 1")" \
	"$(for n in 1 2 3 4 5 6; do printf '00000000-0000-4000-8000-%012d\n' "$n"; done)" \
	"the orders are 1.0's and those replayed from legacy rows"

# A database at 1.1 as the former update left it --------------------------------------

# Without legacy_copy and with the key on the coordinates and digest only: how
# a 1.0 database without copies came out of the update before legacy_copy.
tap_cmd "a database at 1.1 as the former update left it (no legacy_copy, the key without it)" \
	former_1_1 "$OLD11"

tap_like "$(sql_capture "$OLD11" "ALTER EXTENSION received_orders UPDATE"; echo "exit $?")" "exit 0$" \
	"it updates to $DEFAULT"

tap_is "$(schema "$OLD11")|$(rows_of "$OLD11" "'\\xff'")" "$(schema "$FRESH")|1" \
	"and ends with a fresh install's tables, columns, constraints, indexes and comments, its row kept"

tap_done
