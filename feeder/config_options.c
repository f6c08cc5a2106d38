/*-------------------------------------------------------------------------
 *
 * config_options.c
 *	  The feeder's options, one row each, and the setters that check a
 *	  value and store it.
 *
 * A row names the option (its long name is also its -F key), its FEEDER_*
 * variable if it has one, its setter with the field, bounds and default it
 * works on, and its lines of --help.  config.c reads the command line, the
 * -F file and the environment through these rows and applies precedence;
 * config_help.c prints them.  The setters come first, then the rows, in
 * --help's order.
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_options.h"
#include "feeder.h"

/*
 * config_error
 *		Format the one-line reason for exit code 2.
 */
config_result
config_error(char *err, size_t errlen, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return CONFIG_ERROR;
}

/*
 * config_strdup
 *		strdup that aborts on out of memory: configuration is parsed once at
 *		startup, there is nothing sensible to fall back to.
 */
char *
config_strdup(const char *s)
{
	char	   *d = strdup(s);

	if (d == NULL)
	{
		fputs(FEEDER_NAME ": out of memory\n", stderr);
		exit(FEEDER_EXIT_RUNTIME);
	}
	return d;
}

/*
 * config_parse_int
 *		Parse a decimal integer in [min, max]; the whole string must be used.
 */
static int
config_parse_int(const char *s, int min, int max, int *out)
{
	char	   *end;
	long		v;

	while (isspace((unsigned char) *s))
		s++;
	if (*s == '\0')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -1;
	*out = (int) v;
	return 0;
}

/*
 * config_field_string
 *		Replace the string setting of a row.
 */
static void
config_field_string(feeder_config *cfg, const config_optdef *def, const char *value)
{
	char	  **field = (char **) ((char *) cfg + def->field);

	free(*field);
	*field = config_strdup(value);
}

/*
 * config_set_int
 *		An integer within the row's bounds.
 */
static config_result
config_set_int(feeder_config *cfg, const config_optdef *def, const char *value,
			   const char *where, char *err, size_t errlen)
{
	if (config_parse_int(value, def->min, def->max,
						 (int *) ((char *) cfg + def->field)) != 0)
		return config_error(err, errlen, "%s: expected %s from %d%s to %d, got \"%s\"",
							where, def->what, def->min,
							def->min_note ? def->min_note : "", def->max, value);
	return CONFIG_OK;
}

/*
 * config_set_text
 *		Any string, a path or a conninfo: checked later or by its user.
 */
static config_result
config_set_text(feeder_config *cfg, const config_optdef *def, const char *value,
				const char *where, char *err, size_t errlen)
{
	(void) where;
	(void) err;
	(void) errlen;
	config_field_string(cfg, def, value);
	return CONFIG_OK;
}

/*
 * config_set_nonempty
 *		A string that may not be empty; the row's what says so.
 */
static config_result
config_set_nonempty(feeder_config *cfg, const config_optdef *def, const char *value,
					const char *where, char *err, size_t errlen)
{
	if (*value == '\0')
		return config_error(err, errlen, "%s: %s", where, def->what);
	config_field_string(cfg, def, value);
	return CONFIG_OK;
}

/*
 * config_set_choice
 *		One of the row's choices, spelled exactly.
 */
static config_result
config_set_choice(feeder_config *cfg, const config_optdef *def, const char *value,
				  const char *where, char *err, size_t errlen)
{
	const char *const *c;

	for (c = def->choices; *c != NULL; c++)
		if (strcmp(value, *c) == 0)
		{
			config_field_string(cfg, def, value);
			return CONFIG_OK;
		}
	return config_error(err, errlen, "%s: expected %s, got \"%s\"",
						where, def->what, value);
}

/*
 * config_set_bool
 *		true/1/yes or false/0/no (the command line's flag gives "true").
 */
static config_result
config_set_bool(feeder_config *cfg, const config_optdef *def, const char *value,
				const char *where, char *err, size_t errlen)
{
	int		   *field = (int *) ((char *) cfg + def->field);

	if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0 ||
		strcmp(value, "yes") == 0)
		*field = 1;
	else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0 ||
			 strcmp(value, "no") == 0)
		*field = 0;
	else
		return config_error(err, errlen, "%s: expected true or false, got \"%s\"",
							where, value);
	return CONFIG_OK;
}

/*
 * config_set_topics
 *		Append the comma-separated topic names in value (config.c empties
 *		the list when a higher source gives topics).
 */
static config_result
config_set_topics(feeder_config *cfg, const config_optdef *def, const char *value,
				  const char *where, char *err, size_t errlen)
{
	const char *p = value;

	(void) def;
	do
	{
		const char *comma = strchr(p, ',');
		size_t		len = comma ? (size_t) (comma - p) : strlen(p);
		char	   *name;

		while (len > 0 && isspace((unsigned char) *p))
		{
			p++;
			len--;
		}
		while (len > 0 && isspace((unsigned char) p[len - 1]))
			len--;
		if (len == 0)
			return config_error(err, errlen, "%s: empty topic name", where);
		name = malloc(len + 1);
		cfg->topics = realloc(cfg->topics, sizeof(char *) * (cfg->ntopics + 1));
		if (name == NULL || cfg->topics == NULL)
			return config_error(err, errlen, "out of memory");
		memcpy(name, p, len);
		name[len] = '\0';
		cfg->topics[cfg->ntopics++] = name;
		p = comma ? comma + 1 : NULL;
	} while (p);
	return CONFIG_OK;
}

/*
 * config_set_group
 *		A consumer group the database can keep: 1 to CONFIG_MAX_GROUP_BYTES.
 */
static config_result
config_set_group(feeder_config *cfg, const config_optdef *def, const char *value,
				 const char *where, char *err, size_t errlen)
{
	if (*value == '\0')
		return config_error(err, errlen, "%s: empty group id", where);
	if (strlen(value) > CONFIG_MAX_GROUP_BYTES)
		return config_error(err, errlen,
							"%s: the group id is %zu bytes long; at most %d are allowed (the database keeps consumer groups of at most %d bytes)",
							where, strlen(value), CONFIG_MAX_GROUP_BYTES,
							CONFIG_MAX_GROUP_BYTES);
	config_field_string(cfg, def, value);
	return CONFIG_OK;
}

/*
 * config_set_log_level
 *		A level name log_parse_level knows.
 */
static config_result
config_set_log_level(feeder_config *cfg, const config_optdef *def, const char *value,
					 const char *where, char *err, size_t errlen)
{
	if (log_parse_level(value, (log_level *) ((char *) cfg + def->field)) != 0)
		return config_error(err, errlen,
							"%s: expected debug, info, warning or error, got \"%s\"",
							where, value);
	return CONFIG_OK;
}

/*
 * config_split_listen
 *		Split a --metrics-listen value "HOST:PORT" into its host and port:
 *		HOST is an IPv4 literal, a name (localhost) or an IPv6 literal in
 *		brackets ("[::1]:9900"); PORT is 0..65535 (0: any free port).  0 on
 *		success, -1 when the value is malformed or a part does not fit.
 *		Shared by the option parser (exit 2) and the metrics server.
 */
int
config_split_listen(const char *value, char *host, size_t hostlen,
					char *port, size_t portlen)
{
	const char *colon;
	const char *h = value;
	size_t		hlen;
	int			portnum;

	if (value[0] == '[')
	{
		const char *close = strchr(value, ']');

		if (close == NULL || close[1] != ':')
			return -1;
		h = value + 1;
		hlen = (size_t) (close - h);
		colon = close + 1;
		if (memchr(h, ':', hlen) == NULL)
			return -1;			/* brackets are for IPv6 literals only */
	}
	else
	{
		colon = strrchr(value, ':');
		if (colon == NULL)
			return -1;
		hlen = (size_t) (colon - value);
		if (memchr(value, ':', hlen) != NULL)
			return -1;			/* an IPv6 literal needs brackets */
	}
	if (hlen == 0 || hlen >= hostlen)
		return -1;
	if (!isdigit((unsigned char) colon[1]) ||
		config_parse_int(colon + 1, 0, 65535, &portnum) != 0 ||
		strlen(colon + 1) >= portlen)
		return -1;
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	snprintf(port, portlen, "%d", portnum);
	return 0;
}

/*
 * config_set_listen
 *		An address config_split_listen takes, kept as given.
 */
static config_result
config_set_listen(feeder_config *cfg, const config_optdef *def, const char *value,
				  const char *where, char *err, size_t errlen)
{
	char		host[256];
	char		port[8];

	if (config_split_listen(value, host, sizeof(host), port, sizeof(port)) != 0)
		return config_error(err, errlen,
							"%s: expected ADDRESS:PORT (127.0.0.1:9900, [::1]:9900, localhost:0), got \"%s\"",
							where, value);
	config_field_string(cfg, def, value);
	return CONFIG_OK;
}

/*
 * config_set_type_header
 *		A header name of 1 to the row's max bytes.
 */
static config_result
config_set_type_header(feeder_config *cfg, const config_optdef *def, const char *value,
					   const char *where, char *err, size_t errlen)
{
	if (*value == '\0' || strlen(value) > (size_t) def->max)
		return config_error(err, errlen,
							"%s: expected a header name of 1 to %d bytes", where, def->max);
	config_field_string(cfg, def, value);
	return CONFIG_OK;
}

/*
 * config_set_registry
 *		Schema Registry URLs: http:// or https:// (the first is checked; the
 *		registry client takes the list apart).
 */
static config_result
config_set_registry(feeder_config *cfg, const config_optdef *def, const char *value,
					const char *where, char *err, size_t errlen)
{
	if (strncmp(value, "http://", 7) != 0 && strncmp(value, "https://", 8) != 0)
		return config_error(err, errlen,
							"%s: expected http:// or https:// URLs separated by commas, got \"%s\"",
							where, value);
	config_field_string(cfg, def, value);
	return CONFIG_OK;
}

/*
 * config_set_credentials
 *		Read USER:PASSWORD from the first line of the file named by value;
 *		the local copy is wiped once stored.
 */
static config_result
config_set_credentials(feeder_config *cfg, const config_optdef *def, const char *value,
					   const char *where, char *err, size_t errlen)
{
	char		line[1024];
	FILE	   *f = fopen(value, "r");
	size_t		n;

	if (f == NULL)
		return config_error(err, errlen, "%s: cannot read \"%s\": %s",
							where, value, strerror(errno));
	n = fread(line, 1, sizeof(line) - 1, f);
	fclose(f);
	line[n] = '\0';
	line[strcspn(line, "\r\n")] = '\0';
	if (strchr(line, ':') == NULL)
		return config_error(err, errlen,
							"%s: \"%s\" must hold USER:PASSWORD on its first line",
							where, value);
	config_field_string(cfg, def, line);
	memset(line, 0, sizeof(line));
	return CONFIG_OK;
}

/* The values config_set_choice takes. */
static const char *const envelopes[] = {"plain", "debezium", "cloudevents", NULL};
static const char *const value_formats[] = {"json", "confluent", NULL};
static const char *const group_protocols[] = {"classic", "consumer", NULL};

#define FIELD(f) offsetof(feeder_config, f)

/* An integer option: its field, bounds, default and unit in messages. */
#define INT_OPTION(f, lo, hi, d, unit, note) \
	.set = config_set_int, .field = FIELD(f), .min = (lo), .max = (hi), \
	.dflt = (d), .what = (unit), .min_note = (note)

/*
 * The options, in --help's order.  A setting's val is its config_option id
 * (config_parse's getopt returns it, config_set_option applies precedence,
 * the setter stores the value); the commands -X, -F, --help, --version and
 * --adopt-kafka-offsets have no setter: config_parse acts on their letter.
 */
const config_optdef config_options[] = {
	{.name = "brokers", .val = OPT_BROKERS, .has_arg = required_argument,
		.env = CONFIG_ENV_BROKERS,
		.set = config_set_nonempty, .field = FIELD(brokers),
		.what = "empty broker list",
		.arg = "LIST",
	.help = "Kafka bootstrap brokers, HOST:PORT[,...]   [$FEEDER_BROKERS]\n"},
	{.name = "topic", .val = OPT_TOPIC, .has_arg = required_argument,
		.env = CONFIG_ENV_TOPIC,
		.set = config_set_topics,
		.arg = "NAME",
	.help = "topic to consume; repeatable, or NAME,NAME  [$FEEDER_TOPIC]\n"},
	{.name = "group", .val = OPT_GROUP, .has_arg = required_argument,
		.env = CONFIG_ENV_GROUP,
		.set = config_set_group, .field = FIELD(group),
		.arg = "ID",
		.help = "consumer group, at most 255 bytes\n"
	"(default received-orders-feeder) [$FEEDER_GROUP]\n"},
	{.name = "group-protocol", .val = OPT_GROUP_PROTOCOL, .has_arg = required_argument,
		.env = CONFIG_ENV_GROUP_PROTOCOL,
		.set = config_set_choice, .field = FIELD(group_protocol),
		.choices = group_protocols,
		.what = "classic or consumer",
		.arg = "NAME",
		.help = "consumer group protocol: classic, or consumer (KIP-848,\n"
		"Kafka 4.0 and later: the broker assigns incrementally);\n"
		"also -X group.protocol (default classic)\n"
	"                                [$FEEDER_GROUP_PROTOCOL]\n"},
	{.name = "dsn", .val = OPT_DSN, .has_arg = required_argument,
		.flags = CONFIG_OPT_REDACT, .env = CONFIG_ENV_DSN,
		.set = config_set_text, .field = FIELD(dsn),
		.arg = "CONNINFO",
		.help = "libpq conninfo or postgresql:// URI; PG* variables and\n"
	".pgpass apply as in psql (default: empty)   [$FEEDER_DSN]\n"},
	{.name = "batch-size", .val = OPT_BATCH_SIZE, .has_arg = required_argument,
		INT_OPTION(batch_size, 1, 100000, CONFIG_DEFAULT_BATCH_SIZE,
				   "an integer", NULL),
		.arg = "N",
	.help = "messages per transaction, 1..100000 (default 5000)\n"},
	{.name = "batch-wait-ms", .val = OPT_BATCH_WAIT_MS, .has_arg = required_argument,
		INT_OPTION(batch_wait_ms, 0, 600000, CONFIG_DEFAULT_BATCH_WAIT,
				   "milliseconds", NULL),
		.arg = "MS",
		.help = "close a batch MS ms after its first message; 0: take what\n"
	"is fetched when the previous batch committed (default 0)\n"},
	{.name = "db-sessions", .val = OPT_DB_SESSIONS, .has_arg = required_argument,
		INT_OPTION(db_sessions, 1, CONFIG_MAX_DB_SESSIONS, CONFIG_DEFAULT_DB_SESSIONS,
				   "a number of sessions", NULL),
		.arg = "N",
		.help = "database sessions that run batches at the same time,\n"
		"1..64; a live stream's partitions all go through the\n"
		"first, a backlog's over all N; a partition's batches\n"
		"always commit in order; sessions but the first\n"
		"are open only while partitions go through them: at most\n"
	"N backends, plus one for --status-interval (default 8)\n"},
	{.name = "batch-max-bytes", .val = OPT_BATCH_MAX_BYTES, .has_arg = required_argument,
		INT_OPTION(batch_max_bytes, 65536, 512 * 1024 * 1024,
				   CONFIG_DEFAULT_BATCH_MAX_BYTES, "bytes", NULL),
		.arg = "N",
		.help = "close a batch before its values, keys and topics pass N\n"
	"bytes; a larger message goes alone (default 16777216)\n"},
	{.name = "stats-interval", .val = OPT_STATS_INTERVAL, .has_arg = required_argument,
		INT_OPTION(stats_interval_s, 0, 86400, CONFIG_DEFAULT_STATS,
				   "seconds", " (off)"),
		.arg = "S",
	.help = "counters log line every S seconds, 0 = off (default 10)\n"},
	{.name = "client-id", .val = OPT_CLIENT_ID, .has_arg = required_argument,
		.set = config_set_nonempty, .field = FIELD(client_id),
		.what = "empty client id",
		.arg = "ID",
	.help = "Kafka client.id (default received-orders-feeder)\n"},
	{.name = "log-level", .val = OPT_LOG_LEVEL, .has_arg = required_argument,
		.set = config_set_log_level, .field = FIELD(log_level), .dflt = LOG_INFO,
		.arg = "LEVEL",
	.help = "debug, info, warning or error (default info)\n"},
	{.name = "retry-backoff-ms", .val = OPT_RETRY_BACKOFF_MS, .has_arg = required_argument,
		INT_OPTION(retry_backoff_ms, 1, 600000, CONFIG_DEFAULT_BACKOFF,
				   "milliseconds", NULL),
		.arg = "MS",
	.help = "first delay before retrying a failed batch (default 100)\n"},
	{.name = "retry-backoff-max-ms", .val = OPT_RETRY_BACKOFF_MAX_MS,
		.has_arg = required_argument,
		INT_OPTION(retry_backoff_max_ms, 1, 3600000, CONFIG_DEFAULT_BACKOFF_MAX,
				   "milliseconds", NULL),
		.arg = "MS",
	.help = "cap of the retry delay (default 5000)\n"},
	{.name = "metrics-listen", .val = OPT_METRICS_LISTEN, .has_arg = required_argument,
		.env = CONFIG_ENV_METRICS_LISTEN,
		.set = config_set_listen, .field = FIELD(metrics_listen),
		.arg = "ADDR:PORT",
		.help = "serve Prometheus metrics on /metrics and health\n"
		"on /healthz at ADDR:PORT (127.0.0.1:9900,\n"
		"[::1]:9900, localhost:0; port 0 picks a free one,\n"
		"logged as event=metrics_listening); default: off\n"
	"                          [$FEEDER_METRICS_LISTEN]\n"},
	{.name = "statement-timeout-ms", .val = OPT_STATEMENT_TIMEOUT_MS,
		.has_arg = required_argument,
		INT_OPTION(statement_timeout_ms, 0, 86400000, CONFIG_DEFAULT_STATEMENT_TIMEOUT,
				   "milliseconds", " (the server's)"),
		.arg = "MS",
		.help = "statement_timeout of each batch transaction unless\n"
		"the session already has one (DSN options, role or\n"
	"database settings); 0: the server's (default 60000)\n"},
	{.name = "lock-timeout-ms", .val = OPT_LOCK_TIMEOUT_MS, .has_arg = required_argument,
		INT_OPTION(lock_timeout_ms, 0, 86400000, CONFIG_DEFAULT_LOCK_TIMEOUT,
				   "milliseconds", " (the server's)"),
		.arg = "MS",
		.help = "lock_timeout likewise: a batch waiting on a row lock\n"
	"fails and is retried, Kafka kept polled (default 10000)\n"},
	{.name = "stall-timeout", .val = OPT_STALL_TIMEOUT, .has_arg = required_argument,
		INT_OPTION(stall_timeout_s, 1, 86400, CONFIG_DEFAULT_STALL_TIMEOUT,
				   "seconds", NULL),
		.arg = "S",
		.help = "with --metrics-listen, /healthz turns 503 (stalled) when\n"
		"messages have waited S seconds and no batch committed\n"
	"(default 120)\n"},
	{.name = "status-interval", .val = OPT_STATUS_INTERVAL, .has_arg = required_argument,
		.env = CONFIG_ENV_STATUS_INTERVAL,
		INT_OPTION(status_interval_s, 0, 3600, CONFIG_DEFAULT_STATUS_INTERVAL,
				   "seconds", " (off)"),
		.arg = "S",
		.help = "report this feeder's state, partitions and their high\n"
		"watermarks to received_orders.feeders at start, on\n"
		"every change and every S seconds; 0: off (default 10)\n"
	"                       [$FEEDER_STATUS_INTERVAL]\n"},
	{.name = "envelope", .val = OPT_ENVELOPE, .has_arg = required_argument,
		.env = CONFIG_ENV_ENVELOPE,
		.set = config_set_choice, .field = FIELD(envelope), .choices = envelopes,
		.what = "plain, debezium or cloudevents",
		.arg = "NAME",
		.help = "how the outbox relay wrapped each event: plain (the value\n"
		"is the event), debezium (Debezium's outbox router via\n"
		"JsonConverter) or cloudevents (binary or structured\n"
	"mode) (default plain)                  [$FEEDER_ENVELOPE]\n"},
	{.name = "event-type", .val = OPT_EVENT_TYPE, .has_arg = required_argument,
		.env = CONFIG_ENV_EVENT_TYPE,
		.set = config_set_nonempty, .field = FIELD(event_type),
		.what = "empty event type",
		.arg = "TYPE",
		.help = "materialize only messages of TYPE (exact match); others\n"
		"are skipped and acknowledged, a message without a type\n"
	"is quarantined (default: every message) [$FEEDER_EVENT_TYPE]\n"},
	{.name = "type-header", .val = OPT_TYPE_HEADER, .has_arg = required_argument,
		.env = CONFIG_ENV_TYPE_HEADER,
		.set = config_set_type_header, .field = FIELD(type_header), .max = 255,
		.arg = "NAME",
		.help = "the header holding the type (default eventType; with\n"
		"cloudevents: ce_type or the type attribute)\n"
	"                          [$FEEDER_TYPE_HEADER]\n"},
	{.name = "value-format", .val = OPT_VALUE_FORMAT, .has_arg = required_argument,
		.env = CONFIG_ENV_VALUE_FORMAT,
		.set = config_set_choice, .field = FIELD(value_format), .choices = value_formats,
		.what = "json or confluent",
		.arg = "FORMAT",
		.help = "json (each value is the JSON event) or confluent (values\n"
		"framed by Confluent's Schema Registry serializers: Avro,\n"
		"decoded with the registry's schema, or JSON Schema)\n"
	"(default json)                     [$FEEDER_VALUE_FORMAT]\n"},
	{.name = "schema-registry", .val = OPT_SCHEMA_REGISTRY, .has_arg = required_argument,
		.env = CONFIG_ENV_SCHEMA_REGISTRY,
		.set = config_set_registry, .field = FIELD(schema_registry),
		.arg = "URL[,URL]",
		.help = "the Schema Registry (with --value-format confluent);\n"
	"each schema id is fetched once   [$FEEDER_SCHEMA_REGISTRY]\n"},
	{.name = "schema-registry-credentials", .val = OPT_SCHEMA_REGISTRY_CREDENTIALS,
		.has_arg = required_argument, .env = CONFIG_ENV_SCHEMA_REGISTRY_CREDENTIALS,
		.set = config_set_credentials, .field = FIELD(schema_registry_user_info),
		.arg = "FILE",
		.help = "basic auth USER:PASSWORD on FILE's first line\n"
		"[$FEEDER_SCHEMA_REGISTRY_CREDENTIALS], or the value itself\n"
	"in $FEEDER_SCHEMA_REGISTRY_USER_INFO; never logged\n"},
	{.name = "schema-registry-ca", .val = OPT_SCHEMA_REGISTRY_CA,
		.has_arg = required_argument, .env = CONFIG_ENV_SCHEMA_REGISTRY_CA,
		.set = config_set_text, .field = FIELD(schema_registry_ca),
		.arg = "FILE",
		.help = "CA certificates for an https registry (default: the\n"
	"system's)                   [$FEEDER_SCHEMA_REGISTRY_CA]\n"},
	{.name = "schema-registry-cert", .val = OPT_SCHEMA_REGISTRY_CERT,
		.has_arg = required_argument, .env = CONFIG_ENV_SCHEMA_REGISTRY_CERT,
		.set = config_set_text, .field = FIELD(schema_registry_cert),
		.arg = "FILE",
		.help = "TLS client certificate (PEM) for a registry that\n"
	"asks for one              [$FEEDER_SCHEMA_REGISTRY_CERT]\n"},
	{.name = "schema-registry-key", .val = OPT_SCHEMA_REGISTRY_KEY,
		.has_arg = required_argument, .env = CONFIG_ENV_SCHEMA_REGISTRY_KEY,
		.set = config_set_text, .field = FIELD(schema_registry_key),
		.arg = "FILE",
		.help = "its private key (PEM, unencrypted; only libcurl\n"
	"reads it)                  [$FEEDER_SCHEMA_REGISTRY_KEY]\n"},
	{.name = "schema-registry-timeout-ms", .val = OPT_SCHEMA_REGISTRY_TIMEOUT_MS,
		.has_arg = required_argument,
		INT_OPTION(schema_registry_timeout_ms, 100, 600000,
				   CONFIG_DEFAULT_SCHEMA_REGISTRY_TIMEOUT, "milliseconds", NULL),
		.arg = "MS",
		.help = "deadline of one request to the registry; past it\n"
	"the batch is retried like a database outage (default 10000)\n"},
	{.name = "schema-registry-unknown-grace-ms",
		.val = OPT_SCHEMA_REGISTRY_UNKNOWN_GRACE_MS, .has_arg = required_argument,
		INT_OPTION(schema_registry_unknown_grace_ms, 0, 600000,
				   CONFIG_DEFAULT_SCHEMA_REGISTRY_UNKNOWN_GRACE, "milliseconds", NULL),
		.arg = "MS",
		.help = "how long an id the registry does not know\n"
		"is retried (a replica may not have it yet) before its\n"
	"message is quarantined; 0: at once (default 10000)\n"},
	{.name = "accept-position-loss", .val = OPT_ACCEPT_POSITION_LOSS,
		.has_arg = no_argument, .env = CONFIG_ENV_ACCEPT_POSITION_LOSS,
		.set = config_set_bool, .field = FIELD(accept_position_loss),
		.help = "when the database's position of a partition lies\n"
		"outside what Kafka still holds (retention, re-created\n"
		"topic), log and count the loss and start at the\n"
		"earliest offset instead of exiting with status 5\n"
	"(in -F and $FEEDER_ACCEPT_POSITION_LOSS: true/false)\n"},
	{.val = 'X', .shortopt = 'X', .has_arg = required_argument,
		.arg = "KEY=VALUE",
		.help = "librdkafka property (TLS, SASL, ...); -X list shows them.\n"
		"Refused: enable.auto.offset.store, enable.auto.commit,\n"
		"auto.commit.enable, offset.store.method, isolation.level\n"
		"(pinned by the delivery contract), group.id (--group),\n"
		"bootstrap.servers, metadata.broker.list (--brokers).\n"
		"auto.offset.reset defaults to earliest; latest (largest,\n"
		"end; any case; topic.auto.offset.reset too) is refused:\n"
	"it would skip messages.\n"},
	{.val = 'F', .shortopt = 'F', .has_arg = required_argument,
		.arg = "FILE",
		.help = "read settings from FILE: KEY=VALUE lines, # comments;\n"
		"KEY is a long option name above (without --) or a\n"
	"librdkafka property. Command line > file > environment.\n"},
	{.name = "help", .val = 'h', .shortopt = 'h', .has_arg = no_argument,
	.help = "show this help and exit\n"},
	{.name = "version", .val = 'V', .shortopt = 'V', .has_arg = no_argument,
	.help = "show the version and exit\n"},
	{.name = CONFIG_ADOPT_COMMAND, .val = 'A', .has_arg = no_argument,
		.flags = CONFIG_OPT_COMMAND,
		.help = "with --brokers, --topic, --group, --dsn (and -X):\n"
		"write the group's committed offset in Kafka as the\n"
		"database's position of every partition of the topics\n"
		"that has none (adopt_consumer_position; existing\n"
		"positions are kept), log each partition\n"
		"(event=position_adopted, position_kept,\n"
		"position_none) and exit.  Once, for the first start\n"
		"after the upgrade from 1.0, with the group's feeders\n"
	"stopped; joins no group\n"},
};

const size_t config_noptions = sizeof(config_options) / sizeof(config_options[0]);

/*
 * config_optdef_by_name
 *		The setting a long option name (as used in -F files) stands for, or
 *		NULL; the commands are not settings.
 */
const config_optdef *
config_optdef_by_name(const char *name)
{
	size_t		i;

	for (i = 0; i < config_noptions; i++)
		if (config_options[i].set != NULL &&
			strcmp(name, config_options[i].name) == 0)
			return &config_options[i];
	return NULL;
}

/*
 * config_optdef_by_id
 *		The row of a setting, or NULL.
 */
const config_optdef *
config_optdef_by_id(config_option id)
{
	size_t		i;

	for (i = 0; i < config_noptions; i++)
		if (config_options[i].set != NULL && config_options[i].val == (int) id)
			return &config_options[i];
	return NULL;
}

/*
 * config_option_defaults
 *		Store the built-in default of every option that has one in its row
 *		(the integers and the log level); the string defaults depend on
 *		other options and are filled by config_parse at the end.
 */
void
config_option_defaults(feeder_config *cfg)
{
	size_t		i;

	for (i = 0; i < config_noptions; i++)
	{
		const config_optdef *def = &config_options[i];

		if (def->set == config_set_int)
			*(int *) ((char *) cfg + def->field) = def->dflt;
		else if (def->set == config_set_log_level)
			*(log_level *) ((char *) cfg + def->field) = (log_level) def->dflt;
	}
}
