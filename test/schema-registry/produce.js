#!/usr/bin/env node
// test/schema-registry/produce.js — framed test messages made by Confluent's
// own serializers.
//
// The suites' Schema Registry messages must be Confluent's bytes, not ours:
// this script registers each schema with the official client
// (@confluentinc/schemaregistry, SchemaRegistryClient.register) and
// serializes each value with the official AvroSerializer or JsonSerializer,
// pinned to the registered id (useSchemaId), against a registry (the
// stand-in registry.js, or any other).  Each message's framed bytes go to
// OUT_DIR/NAME.bin, for kcat to write to Kafka.
//
// Usage: node produce.js --registry URL [--user USER:PASS]
//        [--tls-cert FILE --tls-key FILE] --out OUT_DIR SPEC.json
// (--tls-cert/--tls-key: the client certificate a registry may require)
// SPEC.json: [{"name": "01", "subject": "orders-value", "type": "AVRO"|"JSON",
//              "schema": {...}, "value": {...}}, ...]
// In a value, {"$bytes": "HEX"} is a Buffer (Avro bytes, fixed, decimal).
// "references": [{"name", "subject", "version"}] registers the schema with
// references to schemas of other subjects (registered by earlier entries).
// "header": true names the schema by its GUID in the __value_schema_id
// header (Confluent's HeaderSchemaIdSerializer) instead of framing the
// value; the header's bytes go to OUT_DIR/NAME.header.
// Prints "NAME ID" per message: the schema id the serializer framed it with.
'use strict';

const fs = require('fs');
const path = require('path');
const { sr, parseArgs, client: srClient } = require('./serde');

const { options: args, rest } = parseArgs(process.argv);

// {"$bytes": "HEX"} -> Buffer, recursively
function revive(v) {
	if (Array.isArray(v))
		return v.map(revive);
	if (v !== null && typeof v === 'object') {
		if (typeof v.$bytes === 'string' && Object.keys(v).length === 1)
			return Buffer.from(v.$bytes, 'hex');
		const out = {};
		for (const k of Object.keys(v))
			out[k] = revive(v[k]);
		return out;
	}
	return v;
}

async function main() {
	const spec = JSON.parse(fs.readFileSync(rest[0], 'utf8'));
	const client = srClient(args.registry, args.user, args['tls-cert'], args['tls-key']);

	fs.mkdirSync(args.out, { recursive: true });
	for (const m of spec) {
		const id = await client.register(m.subject, {
			schemaType: m.type,
			schema: JSON.stringify(m.schema),
			...(m.references ? { references: m.references } : {}),
		});
		const opts = { autoRegister: false, useSchemaId: id };
		if (m.header)
			opts.schemaIdSerializer = sr.HeaderSchemaIdSerializer;
		const ser = m.type === 'AVRO' ?
			new sr.AvroSerializer(client, sr.SerdeType.VALUE, opts) :
			new sr.JsonSerializer(client, sr.SerdeType.VALUE, opts);
		// the topic name strategy: subject = TOPIC-value
		const topic = m.subject.replace(/-value$/, '');
		const headers = {};
		const bytes = await ser.serialize(topic, revive(m.value), headers);
		fs.writeFileSync(path.join(args.out, m.name + '.bin'), bytes);
		if (headers[sr.VALUE_SCHEMA_ID_HEADER])
			fs.writeFileSync(path.join(args.out, m.name + '.header'),
							 headers[sr.VALUE_SCHEMA_ID_HEADER]);
		console.log(`${m.name} ${id}`);
	}
}

main().catch((e) => {
	console.error(`produce.js: ${e.stack || e}`);
	process.exit(1);
});
