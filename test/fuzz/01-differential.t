#!/bin/bash
# test/fuzz/01-differential.t — the short, deterministic budget of the
# differential fuzzer (test/fuzz/differential): zzuf mutations of the corpus
# through the batch function, every verdict compared with PostgreSQL's own
# input functions (test/fuzz/oracle.sql); the outbox forms checked for one
# row per element and no crash; the same seed tries the same inputs; a wrong
# oracle is caught (the comparison can fail); the server log shows no
# backend that died.  The long campaign is `make fuzz` (test/fuzz/campaign).
#
# TAP on stdout.  Uses the harness's cluster, or starts its own when run alone.

set -euo pipefail

# shellcheck source=test/lib/pg.sh
. "$(dirname "$0")/../lib/pg.sh"

FUZZ=$RO_ROOT/test/fuzz/differential
PLAIN_BUDGET=${RO_FUZZ_BUDGET:-50000}

tap_plan 18

pg_ensure_cluster
LOG=$RO_PG_DIR/log
LOG_START=$(stat -c %s "$LOG" 2>/dev/null || echo 0)
TMP=$(mktemp -d)
ro_on_exit "rm -rf '$TMP'"

command -v zzuf >/dev/null
tap_ok $? "zzuf, the mutation engine, is installed"

# fuzz NAME ARGS... — run the fuzzer, output in $TMP/NAME.out, status in
# $TMP/NAME.rc
fuzz() {
	local name=$1 rc=0
	shift
	"$FUZZ" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	printf '%s\n' "$rc" >"$TMP/$name.rc"
	tap_diag "$(cat "$TMP/$name.out")"
}

# field LINE-REGEX NAME — the first match of a Perl regex with one group
field() {
	perl -ne "if (/$1/) { print \$1; exit }" "$TMP/$2.out"
}

# ---------------------------------------------------------------- plain
fuzz plain --seed 1 --budget "$PLAIN_BUDGET"
tap_is "$(cat "$TMP/plain.rc")" 0 "plain: $PLAIN_BUDGET mutated values, the exit status says no mismatch and no crash"
tap_like "$(tail -n 1 "$TMP/plain.out")" ', 0 mismatches \(0 distinct\), 0 crashes$' \
	"plain: the batch function rejects exactly what convert_from(...)::jsonb and the field rules reject, one row per element, the oracle's SQLSTATE and orderId"
inputs=$(field '(\d+) inputs:' plain)
accepted=$(field ' (\d+) accepted' plain)
rejected=$(field ' (\d+) rejected' plain)
tap_is "$inputs" "$PLAIN_BUDGET" "plain: every input of the budget was tried"
((accepted * 10 >= inputs && rejected * 10 >= inputs))
tap_ok $? "plain: at least 10 % accepted and 10 % rejected ($accepted and $rejected of $inputs): the mutations reach both sides"
states=$(field 'SQLSTATEs: (.*)' plain)
missing=
for state in 22001 22023 22P02 22P05 54000 54001; do
	[[ " $states " == *" $state "* ]] || missing+=" $state"
done
tap_is "$missing" "" "plain: every rule was met by some input (SQLSTATEs 22001 22023 22P02 22P05 54000 54001; seen: $states)"
seeds=$(field ', (\d+) seeds' plain)
harvested=$(field '\((\d+) from the pgTAP suites\)' plain)
((seeds >= 60 && harvested >= 50))
tap_ok $? "plain: seeded with the corpus and the pgTAP suites' literals ($seeds seeds, $harvested literals read)"

# ------------------------------------------------------------- envelopes
fuzz debezium --seed 2 --budget 10000 --envelope debezium
tap_is "$(cat "$TMP/debezium.rc")" 0 "debezium: 10000 mutated values through the outbox form, one row per element, no crash, accepted orderIds are the value's own"
accepted=$(field ' (\d+) accepted' debezium)
((accepted > 500))
tap_ok $? "debezium: envelopes were opened and events accepted ($accepted)"

fuzz cloudevents --seed 3 --budget 10000 --envelope cloudevents
tap_is "$(cat "$TMP/cloudevents.rc")" 0 "cloudevents: 10000 mutated values in binary and structured mode, one row per element, no crash"
skipped=$(field ' (\d+) skipped' cloudevents)
accepted=$(field ' (\d+) accepted' cloudevents)
((skipped > 0 && accepted > 200))
tap_ok $? "cloudevents: structured events accepted ($accepted) and other types skipped ($skipped)"

# ----------------------------------------------------------- determinism
fuzz again1 --seed 5 --budget 3000
fuzz again2 --seed 5 --budget 3000
tap_is "$(grep ' inputs: ' "$TMP/again2.out")" "$(grep ' inputs: ' "$TMP/again1.out")" \
	"the same seed tries the same inputs: the same counts twice"
fuzz other --seed 6 --budget 3000
[[ $(grep ' inputs: ' "$TMP/other.out") != $(grep ' inputs: ' "$TMP/again1.out") ]]
tap_ok $? "another seed tries other inputs"

# ------------------------------------------------- the comparison can fail
# An oracle that allows one character less in externalReference than the
# extension: the 255-character seed and its mutations must be mismatches.
sed 's/char_length(ref) > 255/char_length(ref) > 254/' "$RO_ROOT/test/fuzz/oracle.sql" >"$TMP/wrong-oracle.sql"
cmp -s "$TMP/wrong-oracle.sql" "$RO_ROOT/test/fuzz/oracle.sql" && tap_bail "the wrong oracle is not different"
mkdir "$TMP/wrong"
fuzz wrong --seed 1 --budget 3000 --oracle "$TMP/wrong-oracle.sql" --out "$TMP/wrong"
tap_is "$(cat "$TMP/wrong.rc")" 1 "a wrong oracle (255 characters refused): the fuzzer exits 1"
tap_like "$(grep 'failure ' "$TMP/wrong.out" || true)" 'failure 22001-inserted: [0-9]+' \
	"the mismatch is named: the oracle says 22001, the batch function inserted"
sample=$(find "$TMP/wrong" -name 'mismatch-22001-inserted-*.bin' | sort | head -n 1)
reflen=$( [[ -n $sample ]] && perl -ne 'print length($1) if /"externalReference":"([^"]*)"/' "$sample")
tap_is "$reflen" 255 "the failing input is written out: an externalReference of 255 characters"

# --------------------------------------------------------- the server
new_log=$(tail -c +"$((LOG_START + 1))" "$LOG" 2>/dev/null || true)
crashes=$(grep -cE 'terminated by signal|PANIC|server process .* was terminated' <<<"$new_log" || true)
tap_is "$crashes" 0 "the server log shows no backend that died while fuzzing"
tap_is "$(pg_query postgres "SELECT count(*) FROM pg_database WHERE datname LIKE 'ro_fuzz_%'")" 0 \
	"the fuzzer dropped its databases"

tap_done
