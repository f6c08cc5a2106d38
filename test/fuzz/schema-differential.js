#!/usr/bin/env node
// test/fuzz/schema-differential.js — the schema-side differential fuzzer:
// random Avro schemas with random values, serialized by Confluent's official
// AvroSerializer (@confluentinc/schemaregistry, its MockClient as the
// registry), decoded by the feeder's own decoder (feeder/tests/
// decode_confluent: confluent.c, avro_json.c, avro-c) and by Confluent's
// official AvroDeserializer; the deserializer's value is put through the
// documented Avro to JSON mapping (docs/feeder.md, "Schema Registry
// topics"), written again here, and the two JSON results are compared.
//
// The schemas and values: avro-schema-gen.js (namespaces and short names
// shared across them, recursion, unions, enums with defaults, arrays,
// maps, fixed, every logical type of the mapping, edge values).  The
// mapping written again and the comparison: avro-mapping.js.
//
// The comparison, per value: the feeder's output must be JSON (a strict
// parser here); a record an object of its fields in schema order; a map an
// object with the same keys; integers the same digits; a decimal the exact
// text (scale digits after the point); a float or double the same number
// in its fewest digits ("NaN", "Infinity", "-Infinity" strings); bytes and
// fixed padded base64; enums, uuids and strings the same string; dates,
// times and timestamps their ISO text.  A value the feeder rejects, a
// schema it refuses, and a crash of the decoder are failures too.
//
// Usage: node schema-differential.js --decoder PATH [options]
//   --seed N          the run's seed (default 1): schema I of seed N is the
//                     same schema with the same values on every run
//   --schemas N       schemas to try (default 300)
//   --values N        values per schema (default 10)
//   --first I         the first schema's index (default 0)
//   --only I          schema I alone (replaying a failure)
//   --without LIST    generator features left out (comma-separated):
//                     FEATURES in avro-schema-gen.js
//   --out DIR         each failure written there: NAME.avsc (the schema as
//                     registered), NAME.bin (the framed value), NAME.json
//                     (seed, indexes, expected and actual JSON, replay line)
//   --wrong-oracle K  a deliberately wrong mapping (negative control):
//                     union-wrapped (unions as {"branch": value}),
//                     decimal-scale (one digit too few after the point)
//   --dump DIR        write every schema and value (for a look)
//   --probe LIST      for each feature F of LIST, a run with the others of
//                     LIST left out: "probe F: <summary>" each; exit 0 when
//                     every such run finds a mismatch (the known open bugs
//                     of test/fuzz/03-schema-differential.t still there)
// Needs NODE_PATH to hold the pinned npm packages (test/lib/
// schema_registry.sh, sr_npm_install).  The last line sums up: "N schemas,
// V values: E equal, M mismatches (D distinct), C crashes; digest H"; exit
// 0 only when M and C are 0 and the decoder exited 0 each time.
'use strict';


const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const childProcess = require('child_process');
const { sr } = require('../schema-registry/serde');
const { MockClient } = require('@confluentinc/schemaregistry/dist/mock-schemaregistry-client');
const { FEATURES, rng, Generator, value } = require('./avro-schema-gen');
const { logicalTypes, longHook, expected, render, parseJson, compare } = require('./avro-mapping');

// ------------------------------------------------------------- options

function parseOptions(argv) {
	const o = {
		seed: 1, schemas: 300, values: 10, first: 0, only: null,
		without: new Set(), out: null, wrong: null, dump: null, decoder: null, probe: null,
	};
	for (let i = 2; i < argv.length; i++) {
		const a = argv[i], v = argv[i + 1];
		switch (a) {
		case '--seed': o.seed = BigInt(v); i++; break;
		case '--schemas': o.schemas = Number(v); i++; break;
		case '--values': o.values = Number(v); i++; break;
		case '--first': o.first = Number(v); i++; break;
		case '--only': o.only = Number(v); i++; break;
		case '--without':
			for (const f of v.split(',').filter(Boolean)) {
				if (!(f in FEATURES))
					usage(`unknown feature ${f} (${Object.keys(FEATURES).join(', ')})`);
				o.without.add(f);
			}
			i++;
			break;
		case '--out': o.out = v; i++; break;
		case '--wrong-oracle':
			if (v !== 'union-wrapped' && v !== 'decimal-scale')
				usage(`unknown --wrong-oracle ${v}`);
			o.wrong = v; i++;
			break;
		case '--dump': o.dump = v; i++; break;
		case '--probe':
			o.probe = v.split(',').filter(Boolean);
			for (const f of o.probe)
				if (!(f in FEATURES))
					usage(`unknown feature ${f}`);
			i++;
			break;
		case '--decoder': o.decoder = v; i++; break;
		default: usage(`unknown argument ${a}`);
		}
	}
	if (!o.decoder)
		usage('--decoder PATH is required');
	if (o.only !== null) {
		o.first = o.only;
		o.schemas = 1;
	}
	return o;
}

function usage(msg) {
	process.stderr.write(`schema-differential.js: ${msg}\n`);
	process.exit(2);
}

// --------------------------------------------------------- the run

// record(kind, num, bytes) — one record of decode_confluent's input
function record(kind, num, bytes) {
	const h = Buffer.alloc(9);
	h.write(kind, 0, 'latin1');
	h.writeUInt32BE(num >>> 0, 1);
	h.writeUInt32BE(bytes.length, 5);
	return Buffer.concat([h, bytes]);
}

// decodeAll(decoder, file, n) — decode_confluent's answers to the n
// values of file: {answers: [{seq, what, text}], crashes: [seq], exits}
function decodeAll(decoder, file, seqs) {
	const answers = new Map(), crashes = [], exits = [];
	let skip = 0;
	while (skip < seqs.length) {
		const res = childProcess.spawnSync(decoder, ['--skip', String(skip), file], { maxBuffer: 1 << 30 });
		const out = res.stdout || Buffer.alloc(0);
		let at = 0, got = 0;
		for (;;) {
			const nl = out.indexOf(10, at);
			if (nl < 0)
				break;
			const m = /^V (\d+) (ok|rejected|status \d+) (\d+)$/.exec(out.subarray(at, nl).toString('latin1'));
			if (!m)
				break;
			const len = Number(m[3]);
			if (nl + 1 + len + 1 > out.length)
				break;
			answers.set(Number(m[1]), { what: m[2], text: out.subarray(nl + 1, nl + 1 + len) });
			at = nl + 1 + len + 1;
			got++;
		}
		skip += got;
		if (res.status === 0 && res.signal === null)
			break;
		if (res.error)
			throw res.error;
		if (skip < seqs.length) {
			crashes.push({ seq: seqs[skip], why: res.signal ? `signal ${res.signal}` : `exit ${res.status}`,
				stderr: (res.stderr || '').toString().slice(-2000) });
			skip++;
		} else
			exits.push(`exit ${res.status}${res.signal ? ` signal ${res.signal}` : ''}: ${(res.stderr || '').toString().slice(-500)}`);
	}
	return { answers, crashes, exits };
}

// run(o, without, say) — one run of o's schemas with the features of
// without left out, each mismatch told through say; the summary line and
// whether anything failed
async function run(o, without, say) {
	const on = (f) => !without.has(f);
	const started = Date.now();
	const digest = crypto.createHash('sha256');
	const work = fs.mkdtempSync(path.join(process.env.TMPDIR || '/tmp', 'ro-schema-diff-'));
	const stats = { schemas: 0, values: 0, equal: 0, mismatches: 0, crashes: 0, refusedBySerializer: 0 };
	const used = new Map();
	const distinct = new Map();
	const CHUNK = 100;
	let failed = false;

	if (o.out)
		fs.mkdirSync(o.out, { recursive: true });
	if (o.dump)
		fs.mkdirSync(o.dump, { recursive: true });

	for (let base = o.first; base < o.first + o.schemas; base += CHUNK) {
		const end = Math.min(base + CHUNK, o.first + o.schemas);
		const parts = [], cases = [];
		// a registry per chunk: the mock's lookups grow with what it holds
		const client = new MockClient({ baseURLs: ['mock://schema-differential'] });
		for (let si = base; si < end; si++) {
			const r = rng(o.seed, si);
			const g = new Generator(r, without);
			const top = g.top();
			const text = JSON.stringify(top.json);
			const subject = `s${si}-value`;
			const id = await client.register(subject, { schemaType: 'AVRO', schema: text });
			// a serializer and a deserializer of their own per schema (avsc
			// keeps every named type of a parse in opts.registry); unions
			// wrapped both ways ({"branch": value}: the branch is never
			// guessed), longs as BigInt (exact to 64 bits)
			const ser = new sr.AvroSerializer(client, sr.SerdeType.VALUE, {
				autoRegister: false, useSchemaId: id,
				typeHook: longHook(null), wrapUnions: 'always',
			});
			const logical = logicalTypes(o.wrong);
			const des = new sr.AvroDeserializer(client, sr.SerdeType.VALUE, {
				typeHook: longHook(logical), wrapUnions: 'always', logicalTypes: logical,
			});
			stats.schemas++;
			for (const f of g.used)
				used.set(f, (used.get(f) || 0) + 1);
			digest.update(`S${si}:${text}\n`);
			parts.push(record('S', id, Buffer.from(text)));
			if (o.dump)
				fs.writeFileSync(path.join(o.dump, `${si}.avsc`), text);
			for (let vi = 0; vi < o.values; vi++) {
				// a null value is a tombstone, which the serializer refuses
				let v = value(r, top.model, 0, on);
				while (v === null)
					v = value(r, top.model, 0, on);
				let framed;
				try {
					framed = await ser.serialize(subject.replace(/-value$/, ''), v);
				} catch (err) {
					// the generator's mistake, not the decoder's: say so
					stats.refusedBySerializer++;
					failed = true;
					say(`serializer refused schema ${si} value ${vi}: ${err.message}\n  ${text}\n`);
					continue;
				}
				const seq = cases.length;
				digest.update(framed);
				parts.push(record('V', seq, framed));
				cases.push({ si, vi, id, text, framed, des, subject });
				if (o.dump)
					fs.writeFileSync(path.join(o.dump, `${si}-${vi}.bin`), framed);
			}
		}
		const file = path.join(work, `chunk-${base}.bin`);
		fs.writeFileSync(file, Buffer.concat(parts));
		const { answers, crashes, exits } = decodeAll(o.decoder, file, cases.map((_, k) => k));
		fs.unlinkSync(file);
		for (const e of exits) {
			failed = true;
			say(`decoder: ${e}\n`);
		}
		const crashed = new Map(crashes.map((c) => [c.seq, c]));
		for (let seq = 0; seq < cases.length; seq++) {
			const c = cases[seq];
			stats.values++;
			let exp, problem = null, actualText = '';
			try {
				const val = await c.des.deserialize(c.subject.replace(/-value$/, ''), c.framed);
				const [type] = await c.des.toType({ schemaType: 'AVRO', schema: c.text });
				exp = expected(type, val, o.wrong);
			} catch (err) {
				problem = ['official-deserializer', `Confluent's deserializer: ${err.message}`];
			}
			const ans = answers.get(seq);
			if (problem)
				;
			else if (crashed.has(seq))
				problem = ['crash', `the decoder died (${crashed.get(seq).why}): ${crashed.get(seq).stderr}`];
			else if (!ans)
				problem = ['no-answer', 'the decoder gave no answer'];
			else if (ans.what !== 'ok') {
				actualText = ans.text.toString('utf8');
				// the signature: the reason without its numbers, in short
				const gist = actualText.replace(/^schema id \d+( \(Avro\))?: /, '').replace(/[0-9]+/g, 'N').slice(0, 60);
				problem = [`${/^schema id \d+: /.test(actualText) ? 'schema-refused' : `decoder-${ans.what}`}: ${gist}`,
					`the feeder's decoder answered ${ans.what}: ${actualText}`];
			} else {
				actualText = ans.text.toString('utf8');
				try {
					problem = compare(exp, parseJson(actualText), '$');
				} catch (err) {
					problem = ['not-json', err.message];
				}
			}
			if (!problem) {
				stats.equal++;
				continue;
			}
			failed = true;
			if (problem[0] === 'crash')
				stats.crashes++;
			else
				stats.mismatches++;
			const name = `seed${o.seed}-schema${c.si}-value${c.vi}`;
			const sig = problem[0];
			const first = !distinct.has(sig);
			distinct.set(sig, (distinct.get(sig) || 0) + 1);
			const replay = `node test/fuzz/schema-differential.js --decoder feeder/tests/decode_confluent --seed ${o.seed} --only ${c.si} --values ${o.values}` +
				(without.size ? ` --without ${[...without].join(',')}` : '') + (o.wrong ? ` --wrong-oracle ${o.wrong}` : '');
			if (first)
				say(`mismatch ${sig}: ${name}: ${problem[1]}\n  schema: ${c.text}\n  value: ${c.framed.toString('hex')}\n` +
					`  expected: ${exp ? render(exp).slice(0, 2000) : '?'}\n  actual:   ${actualText.slice(0, 2000)}\n  replay: ${replay}\n`);
			if (o.out) {
				fs.writeFileSync(path.join(o.out, `${name}.avsc`), c.text);
				fs.writeFileSync(path.join(o.out, `${name}.bin`), c.framed);
				fs.writeFileSync(path.join(o.out, `${name}.json`), JSON.stringify({
					seed: String(o.seed), schema: c.si, value: c.vi, schema_id: c.id, kind: sig,
					problem: problem[1], schema_text: c.text, value_hex: c.framed.toString('hex'),
					expected: exp ? render(exp) : null, actual: actualText,
					without: [...without], wrong_oracle: o.wrong, replay,
				}, null, 1) + '\n');
			}
		}
		if ((end - o.first) % (CHUNK * 10) === 0)
			process.stderr.write(`schema-differential: ${end - o.first} of ${o.schemas} schemas, ${stats.values} values, ` +
				`${stats.mismatches} mismatches, ${stats.crashes} crashes\n`);
	}
	fs.rmSync(work, { recursive: true, force: true });
	const secs = ((Date.now() - started) / 1000).toFixed(1);
	say(`features used (schemas): ${[...used.entries()].sort().map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
	if (distinct.size)
		say(`distinct: ${[...distinct.entries()].map(([k, v]) => `${k}=${v}`).join(' ')}\n`);
	const summary = `${stats.schemas} schemas, ${stats.values} values: ${stats.equal} equal, ${stats.mismatches} mismatches ` +
		`(${distinct.size - (distinct.has('crash') ? 1 : 0)} distinct), ${stats.crashes} crashes; ${secs} s; digest ${digest.digest('hex').slice(0, 16)}`;
	return { summary, failed, mismatches: stats.mismatches + stats.crashes };
}

async function main() {
	const o = parseOptions(process.argv);
	const say = (text) => process.stdout.write(text);
	if (!o.probe) {
		const res = await run(o, o.without, say);
		say(`${res.summary}\n`);
		process.exit(res.failed ? 1 : 0);
	}
	let missed = 0;
	for (const f of o.probe) {
		const without = new Set([...o.without, ...o.probe.filter((g) => g !== f)]);
		const res = await run(o, without, () => {});
		say(`probe ${f}: ${res.summary}\n`);
		if (!res.mismatches)
			missed++;
	}
	process.exit(missed ? 1 : 0);
}

main().catch((e) => {
	process.stderr.write(`schema-differential.js: ${e.stack || e}\n`);
	process.exit(2);
});
