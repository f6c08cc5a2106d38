#!/usr/bin/env node
// test/schema-registry/registry.js — a stand-in for Confluent Schema Registry.
//
// Confluent's registry is a Java service these machines cannot install; the
// suites run this small server instead.  It speaks the part of the registry's
// REST API that Confluent's own clients and the feeder use, with the
// registry's error codes, so that the official serializers
// (@confluentinc/schemaregistry) can register and fetch against it: our
// registry is held to the API's contract from the client's side.  It is a
// test tool, not a registry: schemas live in memory, there is no
// compatibility checking, no deletes.  References (a schema naming types of
// other subjects: "references": [{name, subject, version}]) are kept with
// the schema and served with it, as the registry does; they are not
// checked.
//
//   POST /subjects/{subject}/versions  register: {"id": N} (the same schema
//                                      text and type keeps its id)
//   POST /subjects/{subject}           look a schema up under a subject
//   GET  /schemas/ids/{id}             {"schema": "...", "schemaType": ...}
//                                      (schemaType absent for AVRO)
//   GET  /schemas/guids/{guid}         likewise, by the schema's GUID
//   GET  /subjects, /subjects/{s}/versions, /subjects/{s}/versions/{v|latest}
//   errors: {"error_code": 40401|40402|40403|40101|50001, "message": ...}
//
// Switches, for the suites (never behind auth):
//   PUT /_control/mode/{ok|slow|500|503|404|401|403}  how /schemas/* answer
//   PUT /_control/delay/{ms}                         the delay of "slow"
//   PUT /_control/guids/{on|off}                     off: /schemas/guids/*
//                                                    answers a plain 404 (no
//                                                    error code 40403), as a
//                                                    registry without that
//                                                    endpoint does
//   GET /_control/stats                              requests per path kind
//
// Usage: node registry.js --port-file FILE [--port N] [--user USER:PASS]
//        [--tls-cert FILE --tls-key FILE [--tls-client-ca FILE]]
// --tls-client-ca: every client must present a certificate signed by a CA of
// FILE, as a registry with ssl.client.auth=true asks: without one, or with
// one that does not verify, the TLS handshake fails (no HTTP answer).
// It listens on 127.0.0.1, on a free port unless --port is given, and writes
// the port to --port-file once it listens.
'use strict';

const fs = require('fs');
const http = require('http');
const https = require('https');
const crypto = require('crypto');

const args = {};
for (let i = 2; i < process.argv.length; i += 2)
	args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];

const schemas = [];		// {id, guid, schema, schemaType, references}
const subjects = new Map();	// subject -> [schema ids by version]
let mode = 'ok';
let guids = true;
let delayMs = 3000;
const stats = {};

function count(kind) {
	stats[kind] = (stats[kind] || 0) + 1;
}

function send(res, status, body) {
	const text = JSON.stringify(body);
	res.writeHead(status, { 'Content-Type': 'application/vnd.schemaregistry.v1+json' });
	res.end(text);
}

function error(res, status, code, message) {
	send(res, status, { error_code: code, message });
}

function schemaBody(s) {
	const body = { schema: s.schema };
	if (s.schemaType !== 'AVRO')
		body.schemaType = s.schemaType;
	if (s.references.length > 0)
		body.references = s.references;
	return body;
}

function versionBody(subject, version, s) {
	return Object.assign({ subject, version, id: s.id, guid: s.guid }, schemaBody(s));
}

function authorized(req) {
	if (!args.user)
		return true;
	const want = 'Basic ' + Buffer.from(args.user).toString('base64');
	return req.headers.authorization === want;
}

// A schema's GUID: random, like the registry's; never with a zero byte, so
// that the suites can pass a __value_schema_id header on kcat's command line.
function newGuid() {
	for (;;) {
		const guid = crypto.randomUUID();
		if (!Buffer.from(guid.replace(/-/g, ''), 'hex').includes(0))
			return guid;
	}
}

function findOrAdd(schema, schemaType, references) {
	const refs = JSON.stringify(references);
	let s = schemas.find((x) => x.schema === schema && x.schemaType === schemaType &&
		JSON.stringify(x.references) === refs);
	if (!s) {
		s = { id: schemas.length + 1, guid: newGuid(), schema, schemaType, references };
		schemas.push(s);
	}
	return s;
}

// The switches of the suites: how the schema lookups answer now.
function faulty(res) {
	switch (mode) {
	case '500':
		error(res, 500, 50001, 'Error in the backend data store');
		return true;
	case '503':
		error(res, 503, 50003, 'Error while forwarding the request to the leader');
		return true;
	case '404':
		error(res, 404, 40403, 'Schema not found');
		return true;
	case '401':
		error(res, 401, 40101, 'Unauthorized');
		return true;
	case '403':
		error(res, 403, 40301, 'User is denied operation on this server');
		return true;
	}
	return false;
}

function handle(req, res, body) {
	const url = new URL(req.url, 'http://registry');
	const parts = url.pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);

	if (parts[0] === '_control') {
		count('control');
		if (req.method === 'PUT' && parts[1] === 'mode' && parts[2]) {
			mode = parts[2];
			return send(res, 200, { mode });
		}
		if (req.method === 'PUT' && parts[1] === 'guids' && parts[2]) {
			guids = parts[2] !== 'off';
			return send(res, 200, { guids });
		}
		if (req.method === 'PUT' && parts[1] === 'delay' && parts[2]) {
			delayMs = Number(parts[2]);
			return send(res, 200, { delay_ms: delayMs });
		}
		if (req.method === 'GET' && parts[1] === 'stats')
			return send(res, 200, stats);
		return error(res, 404, 404, 'HTTP 404 Not Found');
	}
	if (!authorized(req)) {
		count('unauthorized');
		return error(res, 401, 40101, 'Unauthorized');
	}

	// GET /schemas/ids/{id}, GET /schemas/guids/{guid}
	if (req.method === 'GET' && parts[0] === 'schemas' && parts.length === 3 &&
		(parts[1] === 'ids' || parts[1] === 'guids')) {
		count('schemas_' + parts[1]);
		if (parts[1] === 'guids' && !guids)
			return error(res, 404, 404, 'HTTP 404 Not Found');
		const answer = () => {
			if (faulty(res))
				return;
			const s = parts[1] === 'ids' ?
				schemas.find((x) => String(x.id) === parts[2]) :
				schemas.find((x) => x.guid === parts[2]);
			if (!s)
				return error(res, 404, 40403, 'Schema not found');
			send(res, 200, schemaBody(s));
		};
		if (mode === 'slow')
			return setTimeout(answer, delayMs);
		return answer();
	}

	if (parts[0] === 'subjects') {
		count('subjects');
		if (req.method === 'GET' && parts.length === 1)
			return send(res, 200, [...subjects.keys()]);
		const subject = parts[1];
		const versions = subjects.get(subject);
		let info;

		if (req.method === 'POST' && (parts.length === 2 || (parts.length === 3 && parts[2] === 'versions'))) {
			try {
				info = JSON.parse(body || '{}');
			} catch (e) {
				return error(res, 422, 42201, 'Invalid schema: request is not JSON');
			}
			if (typeof info.schema !== 'string')
				return error(res, 422, 42201, 'Invalid schema: no "schema" string');
			const type = info.schemaType || 'AVRO';
			if (!['AVRO', 'JSON', 'PROTOBUF'].includes(type))
				return error(res, 422, 42201, `Invalid schema type ${type}`);
			if (type === 'AVRO' || type === 'JSON') {
				try {
					JSON.parse(info.schema);
				} catch (e) {
					return error(res, 422, 42201, 'Invalid schema: not JSON');
				}
			}
			if (parts.length === 2) {
				// lookup: is this schema registered under the subject?
				if (!versions)
					return error(res, 404, 40401, `Subject '${subject}' not found.`);
				const v = versions.findIndex((id) => {
					const s = schemas[id - 1];
					return s.schema === info.schema && s.schemaType === type;
				});
				if (v < 0)
					return error(res, 404, 40403, 'Schema not found');
				return send(res, 200, versionBody(subject, v + 1, schemas[versions[v] - 1]));
			}
			const s = findOrAdd(info.schema, type, Array.isArray(info.references) ? info.references : []);
			if (!versions)
				subjects.set(subject, [s.id]);
			else if (!versions.includes(s.id))
				versions.push(s.id);
			return send(res, 200, { id: s.id });
		}
		if (req.method === 'GET' && parts.length >= 3 && parts[2] === 'versions') {
			if (!versions)
				return error(res, 404, 40401, `Subject '${subject}' not found.`);
			if (parts.length === 3)
				return send(res, 200, versions.map((_, i) => i + 1));
			const v = parts[3] === 'latest' || parts[3] === '-1' ? versions.length : Number(parts[3]);
			if (!(v >= 1 && v <= versions.length))
				return error(res, 404, 40402, `Version ${parts[3]} not found.`);
			return send(res, 200, versionBody(subject, v, schemas[versions[v - 1] - 1]));
		}
	}
	count('other');
	return error(res, 404, 404, 'HTTP 404 Not Found');
}

function serve(req, res) {
	let body = '';
	req.setEncoding('utf8');
	req.on('data', (chunk) => { body += chunk; });
	req.on('end', () => handle(req, res, body));
}

const server = args['tls-cert'] ?
	https.createServer(Object.assign({ cert: fs.readFileSync(args['tls-cert']), key: fs.readFileSync(args['tls-key']) },
		args['tls-client-ca'] ? { requestCert: true, rejectUnauthorized: true, ca: fs.readFileSync(args['tls-client-ca']) } : {}),
	serve) :
	http.createServer(serve);
server.listen(Number(args.port || 0), '127.0.0.1', () => {
	if (args['port-file'])
		fs.writeFileSync(args['port-file'], String(server.address().port) + '\n');
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
