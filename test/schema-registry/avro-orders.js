#!/usr/bin/env node
// test/schema-registry/avro-orders.js — the generator's stream of
// OrderReceived events as an Avro topic, serialized by Confluent's own
// AvroSerializer (demo/run --avro).
//
// Reads the lines of `ro-generate-events --output` ("KIND KEY HEXVALUE"),
// registers two versions of the OrderReceived Avro schema under SUBJECT with
// the official client (version 2 adds giftMessage, a union with a default),
// and rewrites each message, keeping its kind and key, so that the
// generator's account still holds:
//   valid, redelivery, cross, divergent  the event as an Avro record framed
//        by AvroSerializer, under version 2 when its orderId ends in an even
//        hex digit, else version 1 (the same event, the same bytes: a
//        redelivery stays byte for byte a redelivery)
//   tombstone            a NULL value
//   malformed-json       the previous event's framed bytes cut in half
//                        (Avro bytes cut short)
//   malformed-utf8       the generator's JSON bytes as they are: a value not
//                        framed
//   malformed-array      the previous event's framed bytes and two bytes
//                        more (trailing bytes after the Avro record)
//   malformed-no-order-id  the event framed with an empty orderId (not a
//                        UUID: the event rules reject it)
// The output is kcat's producer input (kcat -P -K KEY_DELIM -D MSG_DELIM -Z):
// two delimiters drawn at random and checked to occur in no key and no value.
//
// Usage: node avro-orders.js --registry URL [--user USER:PASS]
//        --subject SUBJECT --in GENERATOR_OUTPUT --out KCAT_INPUT
// Prints key=value lines: key_delimiter, message_delimiter, schema_ids
// (version 1's, then version 2's), avro_v1, avro_v2 (events framed with each),
// unframed, cut_short, trailing_bytes, tombstones.
'use strict';

const fs = require('fs');
const crypto = require('crypto');
const { sr, parseArgs, client: srClient } = require('./serde');

const { options: args } = parseArgs(process.argv);

const decimal = (scale, precision) =>
	({ type: 'bytes', logicalType: 'decimal', precision, scale });
const SCHEMA_V1 = {
	type: 'record', name: 'OrderReceived', namespace: 'com.example.orders',
	fields: [
		{ name: 'orderId', type: { type: 'string', logicalType: 'uuid' } },
		{ name: 'externalReference', type: 'string' },
		{ name: 'eventType', type: 'string' },
		{ name: 'occurredAt', type: { type: 'long', logicalType: 'timestamp-millis' } },
		{ name: 'customerId', type: 'string' },
		{ name: 'channel', type: { type: 'enum', name: 'Channel', symbols: ['WEB', 'APP', 'STORE', 'PHONE'] } },
		{ name: 'currency', type: 'string' },
		{ name: 'items', type: { type: 'array', items: {
			type: 'record', name: 'Item', fields: [
				{ name: 'sku', type: 'string' },
				{ name: 'quantity', type: 'int' },
				{ name: 'unitPrice', type: decimal(2, 10) }] } } },
		{ name: 'shipping', type: {
			type: 'record', name: 'Shipping', fields: [
				{ name: 'method', type: { type: 'enum', name: 'ShippingMethod', symbols: ['STANDARD', 'EXPRESS'] } },
				{ name: 'name', type: 'string' },
				{ name: 'country', type: 'string' }] } },
		{ name: 'total', type: decimal(2, 12) }],
};
const SCHEMA_V2 = Object.assign({}, SCHEMA_V1, {
	fields: SCHEMA_V1.fields.concat([
		{ name: 'giftMessage', type: ['null', 'string'], default: null }]),
});

// cents(x) — an amount with 2 decimals as Avro's decimal bytes: the unscaled
// integer, big-endian two's complement, shortest form
function cents(x) {
	let hex = BigInt(Math.round(x * 100)).toString(16);
	if (hex.length % 2)
		hex = '0' + hex;
	if (parseInt(hex[0], 16) >= 8)
		hex = '00' + hex;
	return Buffer.from(hex, 'hex');
}

// record(event, v2) — the generator's JSON event as a value of the schema
function record(event, v2) {
	const r = {
		orderId: event.orderId === undefined ? '' : event.orderId,
		externalReference: event.externalReference,
		eventType: event.eventType,
		occurredAt: Date.parse(event.occurredAt),
		customerId: event.customerId,
		channel: event.channel,
		currency: event.currency,
		items: event.items.map((i) => ({ sku: i.sku, quantity: i.quantity, unitPrice: cents(i.unitPrice) })),
		shipping: event.shipping,
		total: cents(event.total),
	};
	if (v2)
		r.giftMessage = /0$/.test(r.orderId) ? 'Happy birthday!' : null;
	return r;
}

async function main() {
	const client = srClient(args.registry, args.user);
	const topic = args.subject.replace(/-value$/, '');
	const ids = [];
	const serializers = [];
	for (const schema of [SCHEMA_V1, SCHEMA_V2]) {
		const id = await client.register(args.subject,
			{ schemaType: 'AVRO', schema: JSON.stringify(schema) });
		ids.push(id);
		serializers.push(new sr.AvroSerializer(client, sr.SerdeType.VALUE,
			{ autoRegister: false, useSchemaId: id }));
	}
	const counts = { avro_v1: 0, avro_v2: 0, unframed: 0, cut_short: 0, trailing_bytes: 0, tombstones: 0 };
	const messages = [];		// [key, Buffer or null]
	let previous = null;		// the last event's framed bytes
	const frame = async (event) => {
		const v2 = /[02468ace]$/.test(event.orderId || '');
		counts[v2 ? 'avro_v2' : 'avro_v1']++;
		return serializers[v2 ? 1 : 0].serialize(topic, record(event, v2), {});
	};
	for (const line of fs.readFileSync(args.in, 'utf8').split('\n')) {
		if (line === '')
			continue;
		const [kind, key, hex] = line.split(' ');
		const bytes = hex === '-' ? null : Buffer.from(hex, 'hex');
		let value;
		switch (kind) {
		case 'tombstone':
			counts.tombstones++;
			value = null;
			break;
		case 'malformed-json':
			counts.cut_short++;
			value = previous.subarray(0, previous.length >> 1);
			break;
		case 'malformed-utf8':
			counts.unframed++;
			value = bytes;
			break;
		case 'malformed-array':
			counts.trailing_bytes++;
			value = Buffer.concat([previous, Buffer.from([2, 0])]);
			break;
		default:		// valid, redelivery, cross, divergent, malformed-no-order-id
			value = await frame(JSON.parse(bytes.toString('utf8')));
			if (kind !== 'malformed-no-order-id')
				previous = value;
		}
		messages.push([key, value]);
	}

	// delimiters found in no key and no value
	let kd, md;
	const unused = (d) => messages.every(([k, v]) =>
		!k.includes(d) && (v === null || v.indexOf(d) < 0));
	do {
		kd = '<k' + crypto.randomBytes(8).toString('hex') + '>';
		md = '<m' + crypto.randomBytes(8).toString('hex') + '>';
	} while (!unused(kd) || !unused(md));
	const out = fs.openSync(args.out, 'w');
	for (const [k, v] of messages) {
		fs.writeSync(out, k + kd);
		if (v !== null)
			fs.writeSync(out, v);
		fs.writeSync(out, md);
	}
	fs.closeSync(out);
	console.log(`key_delimiter=${kd}\nmessage_delimiter=${md}\nschema_ids=${ids.join(',')}`);
	for (const [k, n] of Object.entries(counts))
		console.log(`${k}=${n}`);
}

main().catch((e) => {
	console.error(`avro-orders.js: ${e.stack || e}`);
	process.exit(1);
});
