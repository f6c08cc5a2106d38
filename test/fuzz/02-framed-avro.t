#!/bin/bash
# test/fuzz/02-framed-avro.t — the fuzzer of framed values
# (feeder/tests/fuzz_confluent): values framed by Confluent's own
# serializers (test/fuzz/corpus-framed: Avro under six schemas — every type
# and logical type of the mapping, two versions of an order, a recursive
# record with maps, unions and fixed, a bare string, named types that share
# a short name across namespaces — and a JSON Schema
# value, with the schemas the registry served for their ids) through the
# feeder's decoder (confluent.c, avro_json.c, avro_tree.c), the registry served
# from the corpus.  Every seed decodes; every strict prefix of an Avro seed
# and every Avro seed with bytes appended is rejected; whatever the
# mutations decode into is JSON by RFC 8259's grammar; no registry status
# but "unknown id" arises; nothing crashes.  The same seed tries the same
# inputs; a seed that is not Confluent's and text that is not JSON are
# caught (the checks can fail).  Under test/sanitize/run the fuzzer is the
# sanitized build's (RO_FUZZ_CONFLUENT): a leak or a bad access is a
# report and a failure there.  The long run is `make fuzz`.
#
# TAP on stdout.  Needs no database.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

FUZZ=${RO_FUZZ_CONFLUENT:-$RO_ROOT/feeder/tests/fuzz_confluent}
CORPUS=$RO_ROOT/test/fuzz/corpus-framed
BUDGET=${RO_FUZZ_FRAMED_BUDGET:-200000}

tap_plan 11
[[ -x $FUZZ ]] || tap_bail "$FUZZ is not built (make -C feeder)"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ro-fuzz-framed.XXXXXX")
ro_on_exit "rm -rf -- '$TMP'"

# fuzz NAME ARGS... — run it; output in $TMP/NAME.out, status in $TMP/NAME.rc
fuzz() {
	local name=$1 rc=0
	shift
	"$FUZZ" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" || rc=$?
	printf '%s\n' "$rc" >"$TMP/$name.rc"
}

# field NAME REGEX — the first group of REGEX in NAME's output
field() {
	perl -ne "if (/$2/) { print \$1; exit }" "$TMP/$1.out"
}

fuzz main --seed 1 --budget "$BUDGET" --out "$TMP" "$CORPUS"
tap_is "$(cat "$TMP/main.rc")" 0 "$BUDGET mutated framed values: exit 0, no violation, no crash"
tap_last_ok || tap_diag "$(grep -m 20 '^violation' "$TMP/main.out")" "$(head -n 20 "$TMP/main.err")"
tap_like "$(tail -n 1 "$TMP/main.out")" '; 0 violations$' "the summary counts no violation"
seeds=$(field main '^(\d+) seeds')
bins=$(find "$CORPUS" -name '*.bin' | wc -l)
tap_is "$seeds $(field main ', (\d+) schemas')" "$bins $(find "$CORPUS" -name '*.avsc' -o -name '*.json' | wc -l)" \
	"every seed and schema of the corpus was read"
prefixes=$(field main '; (\d+) prefixes')
extended=$(field main ' and (\d+) extended')
inputs=$(field main '^(\d+) inputs:')
tap_is "$inputs" "$((BUDGET + seeds + prefixes + extended))" \
	"every input was tried: the seeds, their $prefixes prefixes and $extended extended copies, the budget"
((prefixes >= 400 && extended >= 16))
tap_ok $? "the Avro seeds were cut at every length ($prefixes) and extended ($extended), each rejected"
decoded=$(field main ': (\d+) decoded')
received=$(field main ', (\d+) as received')
rejected=$(field main ', (\d+) rejected')
((decoded * 10 >= inputs && rejected * 10 >= inputs && received > 0))
tap_ok $? "the mutations reach every side: $decoded decoded, $received as received (JSON Schema), $rejected rejected"

fuzz again --seed 1 --budget 20000 "$CORPUS"
fuzz again2 --seed 1 --budget 20000 "$CORPUS"
fuzz other --seed 2 --budget 20000 "$CORPUS"
tap_is "$(tail -n 1 "$TMP/again2.out")" "$(tail -n 1 "$TMP/again.out")" "the same seed tries the same inputs"
[[ $(tail -n 1 "$TMP/other.out") != $(tail -n 1 "$TMP/again.out") ]]
tap_ok $? "another seed tries other inputs"

# the checks can fail: a seed with a byte appended is not Confluent's whole
# value (trailing bytes): it must be reported and kept
mkdir "$TMP/bad" "$TMP/bad-out"
cp "$CORPUS"/2.avsc "$TMP/bad/"
{ cat "$CORPUS/2-order-v1.bin"; printf '\x00'; } >"$TMP/bad/2-order-v1.bin"
fuzz bad --seed 1 --budget 100 --out "$TMP/bad-out" "$TMP/bad"
tap_is "$(cat "$TMP/bad.rc") $(grep -c '^violation seed-rejected' "$TMP/bad.out" || true)" "1 1" \
	"a seed that does not decode (a byte appended): exit 1, one seed-rejected violation"
tap_ok "$([[ -s $(find "$TMP/bad-out" -name 'seed-rejected-*.bin' | head -n 1) ]]; echo $?)" \
	"the failing input is written out"
# ... and the JSON grammar refuses what is not JSON, accepts the mapping's
bad_json=0
for text in '{"a": 01}' '{"a": "x' '[1,]' '"\q"' '{"a" 1}' '1 2' $'"a\tb"' '-' '{"a":nul}'; do
	printf '%s' "$text" >"$TMP/text"
	"$FUZZ" --check-json "$TMP/text" >/dev/null && { tap_diag "taken for JSON: $text"; bad_json=1; }
done
"$FUZZ" --check-json "$RO_ROOT/feeder/tests/fixtures/avro-mapping.json" >/dev/null || bad_json=1
tap_ok "$bad_json" "the JSON check refuses 9 texts that are not JSON and takes the mapping's expected JSON"
tap_done
