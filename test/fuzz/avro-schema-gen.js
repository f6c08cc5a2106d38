// test/fuzz/avro-schema-gen.js — the generator of the schema-side
// differential fuzzer (schema-differential.js): random Avro schemas, as
// JSON and as a model of what each part is, and random values of them as
// Confluent's AvroSerializer takes them (unions wrapped, longs as BigInt,
// logical types as their Avro values).  Deterministic: schema I of seed S
// is drawn from its own generator, rng(S, I).
//
// The schemas: a record at the top (else, with top-level-any, any type);
// namespaces (inherited, given by the "namespace" attribute, by a dotted
// full name, reset by "namespace": ""), a few short names reused in
// several namespaces and referred to by short and full names; records,
// enums (with defaults), fixed, arrays, maps, unions (up to 4 branches,
// null first or not); every logical type of the mapping (decimal on bytes
// and on fixed, date, time-millis/-micros, timestamp-millis/-micros,
// local-timestamp-millis/-micros, uuid); recursion through ["null", R],
// arrays and maps of R, values nested to a bounded depth; field defaults.
// The values: edges (int and long limits, -0, NaN, infinities,
// subnormals, dates 0001-01-01 and 9999-12-31, decimals of full
// precision) and random ones.  Each feature can be left out (FEATURES).
'use strict';

const crypto = require('crypto');

// The generator's features, each on unless --without names it.
const FEATURES = {
	'namespaces': 'named types in namespaces (else all in the null namespace)',
	'shared-names': 'one short name defined in several namespaces',
	'empty-namespace': '"namespace": "" putting a type back into the null namespace',
	'decoy-namespace': 'a "namespace" attribute beside a dotted full name (ignored by the spec)',
	'recursion': 'records referring to themselves through unions, arrays, maps',
	'decimal': 'decimal on bytes and on fixed',
	'temporal': 'date, time and timestamp logical types',
	'uuid': 'uuid on string',
	'unions': 'unions',
	'defaults': 'field and enum defaults',
	'floats': 'float and double (NaN, infinities, -0, subnormals)',
	'strings': 'strings and map keys with quotes, controls, non-ASCII',
	'nul-map-keys': 'U+0000 in map keys (in strings it is always there)',
	'nul-in-schema': 'U+0000 in the schema\'s text (a bytes default "\\u0000\\u00ff")',
	'empty-fixed': 'fixed of size 0',
	'subnormals': 'subnormal floats and doubles (else flushed to 0)',
	'aliases': 'aliases on named types and fields, often another type\'s name (they only matter to a reader schema)',
	'top-level-any': 'a schema whose top is not a record (a primitive, enum, fixed, array, map, union, logical type)',
	'top-level-bytes': 'a schema that is "bytes" (Confluent\'s serializers write the raw bytes, no Avro length)',
};

// ---------------------------------------------------------- randomness

// rng(seed, index) — sfc32 seeded from SHA-256 of "seed:index": schema
// index of a seed is drawn alike on every run, whatever ran before it
function rng(seed, index) {
	const h = crypto.createHash('sha256').update(`${seed}:${index}`).digest();
	let a = h.readUInt32LE(0), b = h.readUInt32LE(4), c = h.readUInt32LE(8), d = h.readUInt32LE(12);
	const next = () => {
		a >>>= 0; b >>>= 0; c >>>= 0; d >>>= 0;
		const t = (a + b | 0) + d | 0;
		d = d + 1 | 0;
		a = b ^ b >>> 9;
		b = c + (c << 3) | 0;
		c = (c << 21 | c >>> 11);
		c = c + t | 0;
		return t >>> 0;
	};
	for (let i = 0; i < 12; i++)
		next();
	const r = {
		u32: next,
		int: (n) => n <= 0 ? 0 : next() % n,		// 0..n-1
		range: (lo, hi) => lo + r.int(hi - lo + 1),
		chance: (p) => next() / 4294967296 < p,
		pick: (arr) => arr[r.int(arr.length)],
		u64: () => (BigInt(next()) << 32n) | BigInt(next()),
		bytes: (n) => {
			const b = Buffer.alloc(n);
			for (let i = 0; i < n; i++)
				b[i] = next() & 255;
			return b;
		},
	};
	return r;
}

// ------------------------------------------------------------ schemas

const SHORT_NAMES = ['Money', 'Meta', 'Item', 'Node', 'Kind', 'Tag', 'Id'];
const NAMESPACES = ['a', 'b', 'shop', 'audit', 'com.example', 'com.example.inner'];
const FIELD_NAMES = ['id', 'amount', 'meta', 'next', 'items', 'when', 'kind', 'tags',
	'price', 'at', 'ref', 'child', 'note', 'code', 'x', 'y', 'z_1', '_u'];
const SYMBOLS = ['A', 'B', 'C', 'RED', 'GREEN', 'NEW', 'PAID', 'X_1', '_Z'];
const TEMPORAL = [
	['date', 'int'], ['time-millis', 'int'], ['time-micros', 'long'],
	['timestamp-millis', 'long'], ['timestamp-micros', 'long'],
	['local-timestamp-millis', 'long'], ['local-timestamp-micros', 'long'],
];
const MAX_SCHEMA_DEPTH = 5;

// maxDecimalDigits(size) — the precision a fixed of size bytes can hold
function maxDecimalDigits(size) {
	return ((1n << BigInt(8 * size - 1)) - 1n).toString().length - 1;
}

// Generator — one schema: its JSON (as the registry will hold it), a model
// of what each part is (to draw values), and the features it used
class Generator {
	constructor(r, without) {
		this.r = r;
		this.on = (f) => !without.has(f);
		this.named = [];		// every named model node defined so far
		this.stack = [];		// records being defined (recursion targets)
		this.used = new Set();
	}

	// fresh name for a named type defined where the enclosing namespace is
	// ns: its namespace and short name, full name unused
	newName(ns) {
		const r = this.r;
		for (let tries = 0; tries < 50; tries++) {
			let space = ns;
			if (this.on('namespaces') && r.chance(0.5))
				space = r.chance(0.2) ? null : r.pick(NAMESPACES);
			if (space !== null && !this.on('namespaces'))
				space = null;
			if (space === null && ns !== null && !this.on('empty-namespace'))
				space = ns;
			const short = r.pick(SHORT_NAMES) + (this.on('shared-names') ? '' : (space || '').replace(/\./g, '_'));
			const full = space ? `${space}.${short}` : short;
			if (!this.named.some((n) => n.full === full))
				return { space, short, full };
		}
		const short = `T${this.named.length}`;
		return { space: ns, short, full: ns ? `${ns}.${short}` : short };
	}

	// the name attributes of a definition of n, where the enclosing
	// namespace is ns: its spelling, and sometimes aliases
	nameAttrs(n, ns, leaf) {
		return { ...this.spelling(n, ns, leaf), ...this.aliases(n) };
	}

	// n's name where the enclosing namespace is ns, in one of the
	// spellings the spec allows.  A decoy "namespace" beside a dotted name
	// only on an enum or a fixed: avsc takes a record's decoy for the
	// namespace of the types defined inside it, where the spec takes the
	// dotted name's (Java's Schema.Parser too)
	spelling(n, ns, leaf) {
		const r = this.r;
		if (n.space === null) {
			if (ns === null)
				return { name: n.short };
			this.used.add('empty-namespace');
			return { name: n.short, namespace: '' };
		}
		const ways = [{ name: n.full }, { name: n.short, namespace: n.space }];
		if (n.space === ns)
			ways.push({ name: n.short });
		if (this.on('decoy-namespace') && leaf)
			ways.push({ name: n.full, namespace: r.pick(NAMESPACES.concat([''])) });
		const w = r.pick(ways);
		if (w.name === n.full && 'namespace' in w && w.namespace !== n.space)
			this.used.add('decoy-namespace');
		return w;
	}

	// sometimes aliases: short or full names of the pool, another type's
	// name as often as not, never n's own
	aliases(n) {
		const r = this.r;
		if (!this.on('aliases') || !r.chance(0.25))
			return {};
		const names = [];
		for (let k = r.range(1, 2); k > 0; k--) {
			const a = r.chance(0.5) ? r.pick(SHORT_NAMES) : `${r.pick(NAMESPACES)}.${r.pick(SHORT_NAMES)}`;
			if (a !== n.full && a !== n.short && !names.includes(a))
				names.push(a);
		}
		if (!names.length)
			return {};
		this.used.add('aliases');
		return { aliases: names };
	}

	// a reference to the named type n from where the enclosing namespace
	// is ns; null when the spec gives no way (a null-namespace type seen
	// from inside a namespace)
	refTo(n, ns) {
		if (n.space === null)
			return ns === null ? n.short : null;
		if (n.space === ns && this.r.chance(0.5)) {
			this.used.add('short-ref');
			return n.short;
		}
		if (n.space !== ns)
			this.used.add('cross-namespace-ref');
		return n.full;
	}

	define(n, ns) {
		this.named.push(n);
		if (n.space !== null)
			this.used.add('namespaced');
		if (this.named.some((m) => m !== n && m.short === n.short && m.space !== n.space))
			this.used.add('shared-name');
	}

	// a type where the enclosing namespace is ns: {json, model}
	type(ns, depth) {
		const r = this.r;
		const leafOnly = depth >= MAX_SCHEMA_DEPTH;
		const choices = [
			['prim', 6], ['logical', 4], ['enum', 2], ['fixed', 1], ['reuse', 3],
			['record', leafOnly ? 0 : 3], ['array', leafOnly ? 0 : 2], ['map', leafOnly ? 0 : 2],
			['union', leafOnly || !this.on('unions') ? 0 : 3],
			['recursion', leafOnly || !this.on('recursion') || !this.stack.length ? 0 : 3],
		];
		let total = choices.reduce((s, c) => s + c[1], 0), pick = r.int(total), kind;
		for (const [k, w] of choices) {
			if (pick < w) {
				kind = k;
				break;
			}
			pick -= w;
		}
		switch (kind) {
		case 'prim': return this.prim();
		case 'logical': return this.logical(ns) || this.prim();
		case 'enum': return this.enumType(ns);
		case 'fixed': return this.fixedType(ns);
		case 'reuse': return this.reuse(ns) || this.prim();
		case 'record': return this.record(ns, depth + 1);
		case 'array': {
			const t = this.type(ns, depth + 1);
			return { json: { type: 'array', items: t.json }, model: { k: 'array', items: t.model } };
		}
		case 'map': {
			const t = this.type(ns, depth + 1);
			return { json: { type: 'map', values: t.json }, model: { k: 'map', values: t.model } };
		}
		case 'union': return this.union(ns, depth + 1);
		default: return this.recursion(ns) || this.prim();
		}
	}

	prim() {
		const ts = ['null', 'boolean', 'int', 'long', 'string', 'bytes'];
		if (this.on('floats'))
			ts.push('float', 'double');
		const t = this.r.pick(ts);
		return { json: this.r.chance(0.2) ? { type: t } : t, model: { k: 'prim', t } };
	}

	logical(ns) {
		const r = this.r;
		const kinds = [];
		if (this.on('decimal'))
			kinds.push('decimal-bytes', 'decimal-fixed');
		if (this.on('temporal'))
			kinds.push('temporal', 'temporal');
		if (this.on('uuid'))
			kinds.push('uuid');
		if (!kinds.length)
			return null;
		const kind = r.pick(kinds);
		if (kind === 'uuid') {
			this.used.add('uuid');
			return { json: { type: 'string', logicalType: 'uuid' }, model: { k: 'logical', lt: 'uuid', base: 'string' } };
		}
		if (kind === 'temporal') {
			const [lt, base] = r.pick(TEMPORAL);
			this.used.add(lt);
			return { json: { type: base, logicalType: lt }, model: { k: 'logical', lt, base } };
		}
		if (kind === 'decimal-bytes') {
			const precision = r.chance(0.2) ? r.range(39, 80) : r.range(1, 38);
			const scale = r.pick([0, precision, r.range(0, precision), r.range(0, Math.min(precision, 6))]);
			const json = { type: 'bytes', logicalType: 'decimal', precision };
			if (scale !== 0 || r.chance(0.5))
				json.scale = scale;
			this.used.add('decimal-bytes');
			return { json, model: { k: 'logical', lt: 'decimal', base: 'bytes', precision, scale } };
		}
		const size = r.range(1, 20);
		const precision = r.range(1, maxDecimalDigits(size));
		const scale = r.pick([0, precision, r.range(0, precision)]);
		const n = this.newName(ns);
		const json = { type: 'fixed', ...this.nameAttrs(n, ns, true), size, logicalType: 'decimal', precision, scale };
		const model = { k: 'fixed', ...n, size, lt: 'decimal', precision, scale };
		this.define(model, ns);
		this.used.add('decimal-fixed');
		return { json, model };
	}

	enumType(ns) {
		const r = this.r;
		const n = this.newName(ns);
		const symbols = SYMBOLS.filter(() => r.chance(0.5));
		if (!symbols.length)
			symbols.push(r.pick(SYMBOLS));
		const json = { type: 'enum', ...this.nameAttrs(n, ns, true), symbols };
		if (this.on('defaults') && r.chance(0.5)) {
			json.default = r.pick(symbols);
			this.used.add('enum-default');
		}
		const model = { k: 'enum', ...n, symbols };
		this.define(model, ns);
		return { json, model };
	}

	fixedType(ns) {
		const n = this.newName(ns);
		const size = this.r.range(this.on('empty-fixed') ? 0 : 1, 24);
		const model = { k: 'fixed', ...n, size };
		this.define(model, ns);
		return { json: { type: 'fixed', ...this.nameAttrs(n, ns, true), size }, model };
	}

	// a named type defined earlier (and complete), referred to by name
	reuse(ns) {
		const done = this.named.filter((n) => !this.stack.includes(n) && this.refTo(n, ns) !== null);
		if (!done.length)
			return null;
		const n = this.r.pick(done);
		this.used.add('reused');
		return { json: this.refTo(n, ns), model: n };
	}

	// a record being defined, referred to from inside itself where a value
	// can stop: ["null", R], an array or a map of R
	recursion(ns) {
		const targets = this.stack.filter((n) => this.refTo(n, ns) !== null);
		if (!targets.length)
			return null;
		const n = this.r.pick(targets);
		const ref = this.refTo(n, ns);
		this.used.add('recursion');
		switch (this.r.int(3)) {
		case 0: {
			const nullFirst = this.r.chance(0.7);
			return {
				json: nullFirst ? ['null', ref] : [ref, 'null'],
				model: { k: 'union', branches: nullFirst ? [{ k: 'prim', t: 'null' }, n] : [n, { k: 'prim', t: 'null' }] },
			};
		}
		case 1: return { json: { type: 'array', items: ref }, model: { k: 'array', items: n } };
		default: return { json: { type: 'map', values: ref }, model: { k: 'map', values: n } };
		}
	}

	// the key a union branch is told apart by (the spec: one of each
	// unnamed type, named types by full name)
	static unionKey(m) {
		switch (m.k) {
		case 'prim': return m.t;
		case 'logical': return m.base;
		case 'array': return 'array';
		case 'map': return 'map';
		case 'union': return 'union';
		default: return `named:${m.full}`;
		}
	}

	union(ns, depth) {
		const r = this.r;
		const n = r.range(1, 4);
		const json = [], branches = [], keys = new Set();
		if (r.chance(0.5)) {
			json.push('null');
			branches.push({ k: 'prim', t: 'null' });
			keys.add('null');
		}
		for (let tries = 0; branches.length < n + (keys.has('null') ? 1 : 0) && tries < 12; tries++) {
			const before = this.named.length, usedBefore = new Set(this.used);
			const t = this.type(ns, depth);
			const key = Generator.unionKey(t.model);
			if (key === 'union' || keys.has(key)) {
				this.named.length = before;	// what it defined is not in the schema
				this.used = usedBefore;
				continue;
			}
			keys.add(key);
			json.push(t.json);
			branches.push(t.model);
		}
		if (!branches.length) {
			json.push('string');
			branches.push({ k: 'prim', t: 'string' });
		}
		if (branches.length > 1 && branches[0].k === 'prim' && branches[0].t === 'null' && r.chance(0.3)) {
			json.push(json.shift());
			branches.push(branches.shift());
		}
		this.used.add('union');
		return { json, model: { k: 'union', branches } };
	}

	record(ns, depth) {
		const r = this.r;
		const n = this.newName(ns);
		const model = { k: 'record', ...n, fields: [] };
		const json = { type: 'record', ...this.nameAttrs(n, ns, false), fields: [] };
		this.define(model, ns);
		this.stack.push(model);
		const inner = n.space;		// the enclosing namespace of what is inside
		const count = r.range(1, 5);
		const names = new Set();
		for (let i = 0; i < count; i++) {
			let fname = r.pick(FIELD_NAMES);
			while (names.has(fname))
				fname = r.pick(FIELD_NAMES) + names.size;
			names.add(fname);
			const t = this.type(inner, depth);
			const field = { name: fname, type: t.json };
			if (this.on('aliases') && r.chance(0.1)) {
				field.aliases = [r.pick(FIELD_NAMES) + 'Old'];
				this.used.add('aliases');
			}
			const dflt = this.on('defaults') && r.chance(0.3) ? this.defaultFor(t.model) : undefined;
			if (dflt !== undefined) {
				field.default = dflt;
				this.used.add('field-default');
			}
			json.fields.push(field);
			model.fields.push({ name: fname, type: t.model });
		}
		this.stack.pop();
		this.used.add('record');
		return { json, model };
	}

	// a JSON default for a field of type m, when an easy one exists
	defaultFor(m) {
		if (m.k === 'prim') {
			switch (m.t) {
			case 'null': return null;
			case 'boolean': return true;
			case 'int': case 'long': return -7;
			case 'float': case 'double': return 1.5;
			case 'string': return 'd\u00e9faut';
			case 'bytes': return this.on('nul-in-schema') ? '\u0000\u00ff' : '\u00ff';
			}
		}
		if (m.k === 'enum')
			return m.symbols[0];
		if (m.k === 'union' && m.branches[0].k === 'prim' && m.branches[0].t === 'null')
			return null;
		if (m.k === 'array')
			return [];
		if (m.k === 'map')
			return {};
		return undefined;
	}

	// the top: mostly a record, in a namespace or not; else any type but
	// a decimal on bytes (Confluent's JavaScript serializer writes a top
	// of type bytes raw, its deserializer reads a decimal's length first)
	top() {
		if (this.on('top-level-any') && this.r.chance(0.15)) {
			for (let tries = 0; tries < 10; tries++) {
				const before = this.named.length, usedBefore = new Set(this.used);
				const t = this.r.chance(0.1) ? this.prim() : this.type(null, 1);
				const m = t.model;
				const bytes = m.k === 'prim' && m.t === 'bytes';
				const onlyNull = (m.k === 'prim' && m.t === 'null') ||
					(m.k === 'union' && m.branches.every((b) => b.k === 'prim' && b.t === 'null'));
				if (!onlyNull && !(m.k === 'logical' && m.base === 'bytes') && (!bytes || this.on('top-level-bytes'))) {
					this.used.add(bytes ? 'top-level-bytes' : 'top-level-other');
					return t;
				}
				this.named.length = before;
				this.used = usedBefore;
			}
		}
		return this.record(null, 0);
	}
}

// ------------------------------------------------------------- values

const INT_EDGES = [0, 1, -1, 2147483647, -2147483648, 127, -128, 63, -64];
const LONG_EDGES = [0n, 1n, -1n, 9223372036854775807n, -9223372036854775808n,
	9007199254740993n, -9007199254740993n, 2147483648n, -2147483649n];
const DAYS_MIN = -719162;			// 0001-01-01
const DAYS_MAX = 2932896;			// 9999-12-31
const MS_MIN = -62135596800000n;		// 0001-01-01T00:00:00Z
const MS_MAX = 253402300799999n;		// 9999-12-31T23:59:59.999Z
const STRING_PIECES = ['a', 'Z', ' ', '0', '"', '\\', '/', '\n', '\t', '\u0000', '\u0001',
	'\u001f', '\u007f', '\u00e9', '\u20ac', '\u2028', '\ud83d\ude00', 'ab', 'order', '{}'];

function randomString(r, on, key) {
	const n = r.range(0, 8);
	let s = '';
	for (let i = 0; i < n; i++)
		s += on('strings') ? r.pick(STRING_PIECES) : r.pick(['a', 'b', 'xy', '0', ' ']);
	return key && !on('nul-map-keys') ? s.replace(/\u0000/g, '0') : s;
}

function randomBigIntBetween(r, lo, hi) {
	const span = hi - lo + 1n;
	return lo + ((r.u64() << 64n | r.u64()) % span);
}

// decimalBytes(v, size) — two's complement big-endian bytes of v: the
// fewest (as Java's BigInteger.toByteArray), or sign-extended to size
function decimalBytes(v, size) {
	let n = 1;
	while (v < -(1n << BigInt(8 * n - 1)) || v >= (1n << BigInt(8 * n - 1)))
		n++;
	if (size)
		n = size;
	const b = Buffer.alloc(n);
	let u = v < 0n ? (1n << BigInt(8 * n)) + v : v;
	for (let i = n - 1; i >= 0; i--) {
		b[i] = Number(u & 255n);
		u >>= 8n;
	}
	return b;
}

function randomUnscaled(r, precision) {
	const digits = r.pick([precision, r.range(1, precision), 1]);
	let s = '';
	for (let i = 0; i < digits; i++)
		s += String(r.int(10));
	if (r.chance(0.1))
		s = '9'.repeat(digits);
	const v = BigInt(s);
	return r.chance(0.5) ? -v : v;
}

function randomFloat(r, single, on) {
	const edges = [0, -0, NaN, Infinity, -Infinity, 1.5, 0.1, -2.5e-3, 1e21, 123456789,
		single ? 1.401298464324817e-45 : 5e-324, single ? 3.4028234663852886e38 : Number.MAX_VALUE];
	let v;
	if (r.chance(0.4))
		v = r.pick(edges);
	else {
		const b = r.bytes(8);
		v = single ? b.readFloatLE(0) : b.readDoubleLE(0);
		if (r.chance(0.5) && Number.isFinite(v))
			v = Number((r.u32() / 1000).toFixed(r.int(4)));
	}
	v = single ? Math.fround(v) : v;
	if (!on('subnormals') && v !== 0 && Math.abs(v) < (single ? 1.1754943508222875e-38 : 2.2250738585072014e-308))
		v = 0;
	return v;
}

// value(r, m, depth, on) — a value of model m as the serializer takes it
// (unions wrapped, longs as BigInt, logical types as their Avro values)
function value(r, m, depth, on) {
	const deep = depth >= 8;
	switch (m.k) {
	case 'prim':
		switch (m.t) {
		case 'null': return null;
		case 'boolean': return r.chance(0.5);
		case 'int': return r.chance(0.5) ? r.pick(INT_EDGES) : r.u32() | 0;
		case 'long': return r.chance(0.5) ? r.pick(LONG_EDGES) : BigInt.asIntN(64, r.u64()) >> BigInt(r.int(64));
		case 'float': return randomFloat(r, true, on);
		case 'double': return randomFloat(r, false, on);
		case 'string': return randomString(r, on);
		default: return r.bytes(r.range(0, 12));
		}
	case 'logical':
		switch (m.lt) {
		case 'uuid': {
			const hex = r.bytes(16).toString('hex');
			const u = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
			return r.chance(0.2) ? u.toUpperCase() : u;
		}
		case 'date': return r.pick([0, -1, DAYS_MIN, DAYS_MAX, 10957, r.range(DAYS_MIN, DAYS_MAX)]);
		case 'time-millis': return r.pick([0, 86399999, r.range(0, 86399999)]);
		case 'time-micros': return r.pick([0n, 86399999999n, BigInt(r.range(0, 86399999)) * 1000n + BigInt(r.int(1000))]);
		case 'timestamp-millis': case 'local-timestamp-millis':
			return r.pick([0n, -1n, MS_MIN, MS_MAX, randomBigIntBetween(r, MS_MIN, MS_MAX)]);
		case 'timestamp-micros': case 'local-timestamp-micros':
			return r.pick([0n, -1n, MS_MIN * 1000n, MS_MAX * 1000n + 999n, randomBigIntBetween(r, MS_MIN * 1000n, MS_MAX * 1000n)]);
		default: return decimalBytes(randomUnscaled(r, m.precision), 0);
		}
	case 'fixed':
		if (m.lt === 'decimal')
			return decimalBytes(randomUnscaled(r, m.precision), m.size);
		return r.bytes(m.size);
	case 'enum': return r.pick(m.symbols);
	case 'array': {
		const n = deep ? 0 : r.pick([0, 1, 2, r.range(0, 5)]);
		const a = [];
		for (let i = 0; i < n; i++)
			a.push(value(r, m.items, depth + 1, on));
		return a;
	}
	case 'map': {
		const n = deep ? 0 : r.pick([0, 1, 2, r.range(0, 5)]);
		const o = {};
		for (let i = 0; i < n; i++) {
			const k = randomString(r, on, true);
			if (k !== '__proto__')
				o[k] = value(r, m.values, depth + 1, on);
		}
		return o;
	}
	case 'union': {
		const nullAt = m.branches.findIndex((b) => b.k === 'prim' && b.t === 'null');
		const i = deep && nullAt >= 0 ? nullAt : r.int(m.branches.length);
		const b = m.branches[i];
		if (b.k === 'prim' && b.t === 'null')
			return null;
		return { [branchName(b)]: value(r, b, depth + 1, on) };
	}
	default: {				// record
		const o = {};
		for (const f of m.fields)
			o[f.name] = value(r, f.type, depth + 1, on);
		return o;
	}
	}
}

// branchName(m) — avsc's name of a wrapped union's branch (the serializer
// knows no logical types: a logical type's branch is its underlying type's)
function branchName(m) {
	switch (m.k) {
	case 'prim': return m.t;
	case 'logical': return m.base;
	case 'array': return 'array';
	case 'map': return 'map';
	default: return m.full;
	}
}

module.exports = { FEATURES, rng, Generator, value, maxDecimalDigits };
