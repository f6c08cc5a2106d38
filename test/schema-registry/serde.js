// test/schema-registry/serde.js — Confluent's official Schema Registry client
// and serializers (@confluentinc/schemaregistry), loaded once for the scripts
// here that make framed messages (produce.js, avro-orders.js), and their
// common command line.
'use strict';

const fs = require('fs');
const https = require('https');

// The client and the serializers only (not the package's index, which also
// loads every KMS driver of field encryption: AWS, Azure, GCP, Vault)
const sr = Object.assign({},
	require('@confluentinc/schemaregistry/dist/schemaregistry-client'),
	require('@confluentinc/schemaregistry/dist/serde/serde'),
	require('@confluentinc/schemaregistry/dist/serde/avro'),
	require('@confluentinc/schemaregistry/dist/serde/json'));

// parseArgs(argv) — {options: {name: value} of "--name value", rest: [...]}
function parseArgs(argv) {
	const options = {};
	const rest = [];
	for (let i = 2; i < argv.length; i++) {
		if (argv[i].startsWith('--'))
			options[argv[i].slice(2)] = argv[++i];
		else
			rest.push(argv[i]);
	}
	return { options, rest };
}

// client(url, user, cert, key) — the official client of the registry at url,
// with basic auth when user ("USER:PASS") is given, presenting the TLS client
// certificate in the PEM files cert and key when given (its HTTP client,
// axios, takes an https agent that holds them)
function client(url, user, cert, key) {
	const conf = { baseURLs: [url] };
	if (user)
		conf.basicAuthCredentials = { credentialsSource: 'USER_INFO', userInfo: user };
	if (cert)
		conf.createAxiosDefaults = {
			httpsAgent: new https.Agent({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }),
		};
	return new sr.SchemaRegistryClient(conf);
}

module.exports = { sr, parseArgs, client };
