// test/fuzz/avro-mapping.js — the documented Avro to JSON mapping
// (docs/feeder.md, "Schema Registry topics"), written again apart from the
// feeder's avro_json.c, for the schema-side differential fuzzer
// (schema-differential.js): the logical types avsc (the Avro library of
// Confluent's serializers) reads into their mapped text, the expected JSON
// of a value Confluent's AvroDeserializer read, a strict JSON parser for
// the feeder's output, and the comparison of the two.
'use strict';

const avro = require('avsc');
const { maxDecimalDigits } = require('./avro-schema-gen');

// ------------------------------------------- the mapping, written again

// Mapped — a logical type's value as the mapping writes it (kind 'text':
// a JSON string, 'number': an exact JSON number), with its Avro value
class Mapped {
	constructor(kind, text, raw) {
		this.kind = kind;
		this.text = text;
		this.raw = raw;
	}
}

// civil(days) — [year, month, day] of days since 1970-01-01, proleptic
// Gregorian (the inverse of H. Hinnant's days_from_civil, as BigInt)
function civil(days) {
	const z = BigInt(days) + 719468n;
	const era = (z >= 0n ? z : z - 146096n) / 146097n;
	const doe = z - era * 146097n;
	const yoe = (doe - doe / 1460n + doe / 36524n - doe / 146096n) / 365n;
	const doy = doe - (365n * yoe + yoe / 4n - yoe / 100n);
	const mp = (5n * doy + 2n) / 153n;
	const d = doy - (153n * mp + 2n) / 5n + 1n;
	const m = mp < 10n ? mp + 3n : mp - 9n;
	return [yoe + era * 400n + (m <= 2n ? 1n : 0n), m, d];
}

const pad = (v, n) => String(v).padStart(n, '0');

function floorDiv(a, b) {
	const q = a / b, r = a % b;
	return r < 0n ? [q - 1n, r + b] : [q, r];
}

function dateText(days) {
	const [y, m, d] = civil(days);
	return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
}

function timeText(micros) {
	const [s, us] = floorDiv(BigInt(micros), 1000000n);
	const secs = ((s % 86400n) + 86400n) % 86400n;
	return `${pad(secs / 3600n, 2)}:${pad(secs / 60n % 60n, 2)}:${pad(secs % 60n, 2)}.${pad(us, 6)}`;
}

function timestampText(micros, utc) {
	const [days, us] = floorDiv(BigInt(micros), 86400000000n);
	return `${dateText(days)}T${timeText(us)}${utc ? 'Z' : ''}`;
}

// decimalText(bytes, scale) — the exact number: the two's complement
// unscaled value with scale digits after the point
function decimalText(buf, scale) {
	let v = 0n;
	for (const b of buf)
		v = (v << 8n) | BigInt(b);
	if (buf.length && buf[0] & 0x80)
		v -= 1n << BigInt(8 * buf.length);
	const neg = v < 0n;
	let digits = (neg ? -v : v).toString().padStart(scale + 1, '0');
	if (scale > 0)
		digits = `${digits.slice(0, digits.length - scale)}.${digits.slice(digits.length - scale)}`;
	return (neg ? '-' : '') + digits;
}

// the logical types, as avsc takes them (opts.logicalTypes): each reads
// its Avro value into a Mapped; an invalid one falls back to its
// underlying type, as the spec says (avsc does so when the constructor
// throws)
function logicalTypes(wrong) {
	const L = avro.types.LogicalType;
	class Base extends L {
		_toValue(v) {
			return v instanceof Mapped ? v.raw : undefined;
		}
		_resolve() {
			return undefined;
		}
	}
	class Decimal extends Base {
		constructor(schema, opts) {
			super(schema, opts);
			const p = schema.precision, s = schema.scale === undefined ? 0 : schema.scale;
			if (!Number.isInteger(p) || p < 1 || !Number.isInteger(s) || s < 0 || s > p)
				throw new Error('invalid decimal');
			if (schema.type === 'fixed' && p > maxDecimalDigits(schema.size))
				throw new Error('invalid decimal');
			this.scale = s;
		}
		_fromValue(buf) {
			const text = decimalText(buf, wrong === 'decimal-scale' && this.scale > 0 ? this.scale - 1 : this.scale);
			return new Mapped('number', text, buf);
		}
	}
	const temporal = (f) => class extends Base {
		_fromValue(v) {
			return new Mapped('text', f(v), v);
		}
	};
	return {
		decimal: Decimal,
		uuid: temporal((s) => s),
		date: temporal((d) => dateText(d)),
		'time-millis': temporal((ms) => timeText(BigInt(ms) * 1000n)),
		'time-micros': temporal((us) => timeText(us)),
		'timestamp-millis': temporal((ms) => timestampText(ms * 1000n, true)),
		'timestamp-micros': temporal((us) => timestampText(us, true)),
		'local-timestamp-millis': temporal((ms) => timestampText(ms * 1000n, false)),
		'local-timestamp-micros': temporal((us) => timestampText(us, false)),
	};
}

// longs as BigInt, both ways (avsc's documented way for 64-bit longs)
const BigLong = avro.types.LongType.__with({
	fromBuffer: (buf) => buf.readBigInt64LE(0),
	toBuffer: (n) => {
		const buf = Buffer.alloc(8);
		buf.writeBigInt64LE(BigInt(n));
		return buf;
	},
	fromJSON: (n) => BigInt(n),
	toJSON: (n) => Number(n),
	isValid: (n) => typeof n === 'bigint' && n >= -(1n << 63n) && n < (1n << 63n),
	compare: (a, b) => (a === b ? 0 : (a < b ? -1 : 1)),
});

// longHook(logical) — avsc's typeHook that makes every long a BigLong: a
// "long" by name is found in opts.registry, but {"type": "long", ...} is
// built anew; a long under a logical type the parse knows (logical) is
// asked for twice, first as the logical type, then as its underlying long
function longHook(logical) {
	const seen = new WeakSet();
	return (schema) => {
		if (schema === 'long')
			return BigLong;
		if (schema === null || typeof schema !== 'object' || schema.type !== 'long')
			return undefined;
		if (logical && schema.logicalType in logical && !seen.has(schema)) {
			seen.add(schema);
			return undefined;
		}
		return BigLong;
	};
}

// the expected JSON, as a tree: {t: 'null'|'bool'|'int'|'num'|'float'|
// 'str'|'arr'|'obj', ty: the Avro type's name, ...}, of the deserializer's
// value val of avsc type
function expected(type, val, wrong) {
	const e = expectedOf(type, val, wrong);
	e.ty = e.ty || type.typeName.replace(/^abstract:/, '');
	return e;
}

function expectedOf(type, val, wrong) {
	const tn = type.typeName;
	if (tn.startsWith('logical:')) {
		if (!(val instanceof Mapped))
			throw new Error(`${tn} read as ${typeof val}`);
		return val.kind === 'number' ? { t: 'num', v: val.text } : { t: 'str', v: val.text };
	}
	switch (tn) {
	case 'null': return { t: 'null' };
	case 'boolean': return { t: 'bool', v: val };
	case 'int': return { t: 'int', v: String(val) };
	case 'abstract:long': case 'long': return { t: 'int', v: BigInt(val).toString() };
	case 'float': case 'double':
		if (Number.isNaN(val))
			return { t: 'str', v: 'NaN' };
		if (!Number.isFinite(val))
			return { t: 'str', v: val > 0 ? 'Infinity' : '-Infinity' };
		return { t: 'float', v: val, single: tn === 'float' };
	case 'string': return { t: 'str', v: val };
	case 'bytes': case 'fixed': return { t: 'str', v: Buffer.from(val).toString('base64') };
	case 'enum': return { t: 'str', v: val };
	case 'array': return { t: 'arr', v: val.map((x) => expected(type.itemsType, x, wrong)) };
	case 'map': return {
		t: 'obj', ordered: false,
		v: Object.keys(val).map((k) => [k, expected(type.valuesType, val[k], wrong)]),
	};
	case 'record': case 'error': return {
		t: 'obj', ordered: true,
		v: type.fields.map((f) => [f.name, expected(f.type, val[f.name], wrong)]),
	};
	case 'union:wrapped': case 'union:unwrapped': {
		let branch, inner = val;
		if (val === null)
			branch = type.types.find((b) => b.typeName === 'null');
		else if (tn === 'union:wrapped') {
			const key = Object.keys(val)[0];
			branch = type.types.find((b) => b.branchName === key);
			inner = val[key];
		} else
			branch = type.types.find((b) => b.isValid(val));
		if (!branch)
			throw new Error(`no branch of ${tn} for the value read`);
		const e = expected(branch, inner, wrong);
		if (wrong === 'union-wrapped' && val !== null)
			return { t: 'obj', ordered: true, v: [[branch.branchName, e]] };
		return e;
	}
	default:
		throw new Error(`avsc type ${tn} is not in the mapping`);
	}
}

// render(e) — an expected tree as JSON text (numbers as their text)
function render(e) {
	switch (e.t) {
	case 'null': return 'null';
	case 'bool': return String(e.v);
	case 'int': case 'num': return e.v;
	case 'float': return Object.is(e.v, -0) ? '-0' : String(e.v);
	case 'str': return JSON.stringify(e.v);
	case 'arr': return `[${e.v.map(render).join(',')}]`;
	default: return `{${e.v.map(([k, v]) => `${JSON.stringify(k)}:${render(v)}`).join(',')}}`;
	}
}

// ------------------------------------------------ the feeder's JSON

// parseJson(text) — RFC 8259, strictly, into {t: 'null'|'bool'|'num'
// (v: the number's text)|'str'|'arr'|'obj' (v: [key, value] pairs in
// order)}; throws on anything else
function parseJson(text) {
	let i = 0;
	const ws = () => {
		while (i < text.length && ' \t\n\r'.includes(text[i]))
			i++;
	};
	const fail = (what) => {
		throw new Error(`not JSON at offset ${i}: ${what}`);
	};
	const str = () => {
		let s = '';
		i++;
		for (;;) {
			if (i >= text.length)
				fail('unterminated string');
			const c = text[i];
			if (c === '"') {
				i++;
				return s;
			}
			if (c < ' ')
				fail('a control character in a string');
			if (c === '\\') {
				const e = text[i + 1];
				const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
				if (e in simple) {
					s += simple[e];
					i += 2;
				} else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
					s += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
					i += 6;
				} else
					fail('a bad escape');
			} else {
				s += c;
				i++;
			}
		}
	};
	const val = (depth) => {
		if (depth > 1000)
			fail('nested too deep');
		ws();
		const c = text[i];
		let out;
		if (c === '{' || c === '[') {
			const obj = c === '{';
			const items = [];
			i++;
			ws();
			if (text[i] === (obj ? '}' : ']'))
				i++;
			else
				for (;;) {
					ws();
					if (obj) {
						if (text[i] !== '"')
							fail('a key that is not a string');
						const k = str();
						ws();
						if (text[i++] !== ':')
							fail('no colon');
						items.push([k, val(depth + 1)]);
					} else
						items.push(val(depth + 1));
					ws();
					if (text[i] === ',') {
						i++;
						continue;
					}
					if (text[i] === (obj ? '}' : ']')) {
						i++;
						break;
					}
					fail('no comma or close');
				}
			out = { t: obj ? 'obj' : 'arr', v: items };
		} else if (c === '"')
			out = { t: 'str', v: str() };
		else {
			const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i, i + 2000));
			if (m && m[0].length) {
				out = { t: 'num', v: m[0] };
				i += m[0].length;
			} else if (text.startsWith('true', i) || text.startsWith('false', i)) {
				out = { t: 'bool', v: text[i] === 't' };
				i += out.v ? 4 : 5;
			} else if (text.startsWith('null', i)) {
				out = { t: 'null' };
				i += 4;
			} else
				fail('no value');
		}
		ws();
		return out;
	};
	const v = val(0);
	if (i !== text.length)
		fail('text after the value');
	return v;
}

// significant digits of a JSON number's text
function sigDigits(text) {
	const mant = text.replace(/^-/, '').replace(/[eE].*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
	return Math.max(mant.length, 1);
}

// fewest digits that read back as v (a float: as the same float)
function shortestDigits(v, single) {
	if (v === 0)
		return 1;
	for (let p = 1; p < 17; p++) {
		const back = Number(v.toPrecision(p));
		if (single ? Math.fround(back) === v : back === v)
			return p;
	}
	return 17;
}

// compare(e, a, where) — null when the feeder's a is e by the mapping,
// else [signature, description]
function compare(e, a, where) {
	const differ = (sig, what) => [`${sig}@${e.ty}`, `${where || '$'}: ${what}`];
	if (e.t === 'int' || e.t === 'num') {
		if (a.t !== 'num' || a.v !== e.v)
			return differ(e.t === 'int' ? 'integer' : 'decimal', `expected ${e.v}, got ${renderActual(a)}`);
		return null;
	}
	if (e.t === 'float') {
		if (a.t !== 'num')
			return differ('float', `expected the number ${render(e)}, got ${renderActual(a)}`);
		const back = Number(a.v);
		if (!Object.is(e.single ? Math.fround(back) : back, e.v))
			return differ('float', `expected ${render(e)}, got ${a.v} (another number)`);
		if (sigDigits(a.v) !== shortestDigits(e.v, e.single))
			return differ('float-digits', `expected ${shortestDigits(e.v, e.single)} significant digits for ${render(e)}, got ${a.v}`);
		return null;
	}
	if (e.t !== a.t)
		return differ(`shape-${e.t}`, `expected ${render(e).slice(0, 200)}, got ${renderActual(a).slice(0, 200)}`);
	switch (e.t) {
	case 'null': return null;
	case 'bool': case 'str':
		return e.v === a.v ? null : differ(e.t, `expected ${JSON.stringify(e.v)}, got ${JSON.stringify(a.v)}`);
	case 'arr':
		if (e.v.length !== a.v.length)
			return differ('array-length', `expected ${e.v.length} items, got ${a.v.length}`);
		for (let k = 0; k < e.v.length; k++) {
			const d = compare(e.v[k], a.v[k], `${where}[${k}]`);
			if (d)
				return d;
		}
		return null;
	default: {
		const ek = e.v.map(([k]) => k), ak = a.v.map(([k]) => k);
		if (e.ordered ? ek.join('\u0001') !== ak.join('\u0001') :
			ek.length !== ak.length || new Set(ak).size !== ak.length || ek.some((k) => !ak.includes(k)))
			return differ(e.ordered ? 'record-fields' : 'map-keys',
				`expected keys ${JSON.stringify(ek)}, got ${JSON.stringify(ak)}`);
		for (const [k, ev] of e.v) {
			const av = a.v.find(([ak2]) => ak2 === k)[1];
			const d = compare(ev, av, `${where}.${k}`);
			if (d)
				return d;
		}
		return null;
	}
	}
}

function renderActual(a) {
	switch (a.t) {
	case 'null': return 'null';
	case 'bool': return String(a.v);
	case 'num': return a.v;
	case 'str': return JSON.stringify(a.v);
	case 'arr': return `[${a.v.map(renderActual).join(',')}]`;
	default: return `{${a.v.map(([k, v]) => `${JSON.stringify(k)}:${renderActual(v)}`).join(',')}}`;
	}
}

module.exports = { logicalTypes, longHook, expected, render, parseJson, compare };
