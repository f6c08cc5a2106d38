/*-------------------------------------------------------------------------
 *
 * config.c
 *	  Command line, -F file and environment configuration of the feeder.
 *
 * Precedence, highest first: command line, -F file, environment
 * (FEEDER_BROKERS, FEEDER_TOPIC, FEEDER_GROUP, FEEDER_DSN,
 * FEEDER_METRICS_LISTEN), built-in
 * defaults.  --topic is repeatable; a source that gives any topic replaces
 * the topics of lower sources.  librdkafka properties (-X key=value, or any
 * file key that is not a feeder option) are passed through in order, file
 * first, so that the command line wins; the few the delivery contract pins
 * are refused here with the reason.
 *
 * --adopt-kafka-offsets is a command, not a setting: the command line
 * only, never a -F key or an environment variable, so that a service's
 * configuration cannot keep it on.
 *
 * A password in a --dsn argument is overwritten in argv once copied
 * (log_redact_conninfo_inplace), so that ps and /proc/PID/cmdline show
 * password=*** instead; only the copy in the configuration keeps it.
 *
 * Nothing in this file talks to Kafka or PostgreSQL: main.c validates the
 * properties against librdkafka afterwards.
 *
 *-------------------------------------------------------------------------
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "feeder.h"

/* Properties the delivery contract depends on, with the reason shown. */
static const struct
{
	const char *key;
	const char *reason;
}			refused_props[] = {
	{"enable.auto.offset.store",
	"pinned to false: an offset is stored only after the database transaction of its message committed"},
	{"enable.auto.commit",
	"pinned to true: librdkafka commits only offsets the feeder stored after a database commit (tune auto.commit.interval.ms instead)"},
	{"auto.commit.enable",
	"legacy alias of enable.auto.commit, which is pinned"},
	{"offset.store.method",
	"pinned to broker: offsets are committed to the consumer group"},
	{"isolation.level",
	"pinned to read_committed: messages of aborted producer transactions must never be materialized"},
	{"group.id", "use --group"},
	{"bootstrap.servers", "use --brokers"},
	{"metadata.broker.list", "use --brokers"},
};

/* Long option names; also the keys accepted in a -F file. */
static const struct
{
	const char *name;
	config_option id;
}			option_names[] = {
	{"brokers", OPT_BROKERS},
	{"topic", OPT_TOPIC},
	{"group", OPT_GROUP},
	{"dsn", OPT_DSN},
	{"batch-size", OPT_BATCH_SIZE},
	{"batch-wait-ms", OPT_BATCH_WAIT_MS},
	{"db-sessions", OPT_DB_SESSIONS},
	{"stats-interval", OPT_STATS_INTERVAL},
	{"client-id", OPT_CLIENT_ID},
	{"log-level", OPT_LOG_LEVEL},
	{"retry-backoff-ms", OPT_RETRY_BACKOFF_MS},
	{"retry-backoff-max-ms", OPT_RETRY_BACKOFF_MAX_MS},
	{"metrics-listen", OPT_METRICS_LISTEN},
	{"accept-position-loss", OPT_ACCEPT_POSITION_LOSS},
	{"statement-timeout-ms", OPT_STATEMENT_TIMEOUT_MS},
	{"lock-timeout-ms", OPT_LOCK_TIMEOUT_MS},
	{"stall-timeout", OPT_STALL_TIMEOUT},
	{"batch-max-bytes", OPT_BATCH_MAX_BYTES},
	{"envelope", OPT_ENVELOPE},
	{"event-type", OPT_EVENT_TYPE},
	{"type-header", OPT_TYPE_HEADER},
	{"value-format", OPT_VALUE_FORMAT},
	{"schema-registry", OPT_SCHEMA_REGISTRY},
	{"schema-registry-credentials", OPT_SCHEMA_REGISTRY_CREDENTIALS},
	{"schema-registry-ca", OPT_SCHEMA_REGISTRY_CA},
	{"schema-registry-cert", OPT_SCHEMA_REGISTRY_CERT},
	{"schema-registry-key", OPT_SCHEMA_REGISTRY_KEY},
	{"schema-registry-timeout-ms", OPT_SCHEMA_REGISTRY_TIMEOUT_MS},
	{"schema-registry-unknown-grace-ms", OPT_SCHEMA_REGISTRY_UNKNOWN_GRACE_MS},
	{"status-interval", OPT_STATUS_INTERVAL},
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * config_error
 *		Format the one-line reason for exit code 2.
 */
static config_result
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
static char *
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
 * config_refused_reason
 *		Why a librdkafka property may not be set, or NULL when it may.
 */
const char *
config_refused_reason(const char *key)
{
	size_t		i;

	for (i = 0; i < NELEM(refused_props); i++)
		if (strcmp(key, refused_props[i].key) == 0)
			return refused_props[i].reason;
	return NULL;
}

/*
 * config_option_by_name
 *		Map a long option name (as used in -F files) to its id.
 */
static config_option
config_option_by_name(const char *name)
{
	size_t		i;

	for (i = 0; i < NELEM(option_names); i++)
		if (strcmp(name, option_names[i].name) == 0)
			return option_names[i].id;
	return OPT_NONE;
}

/*
 * config_option_name
 *		The long name of an option, for messages.
 */
static const char *
config_option_name(config_option id)
{
	size_t		i;

	for (i = 0; i < NELEM(option_names); i++)
		if (option_names[i].id == id)
			return option_names[i].name;
	return "?";
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
 * config_add_topics
 *		Append the comma-separated topic names in value.
 */
static config_result
config_add_topics(feeder_config *cfg, const char *value, const char *where,
				  char *err, size_t errlen)
{
	const char *p = value;

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
 * config_set_string
 *		Replace a string setting.
 */
static void
config_set_string(char **field, const char *value)
{
	free(*field);
	*field = config_strdup(value);
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
 * config_set_option
 *		Apply one option value from a source.  A value from a lower source
 *		than the one already applied is ignored; a value from a higher
 *		source replaces it (for --topic, the whole list).  where names the
 *		origin for messages ("--batch-size", "FILE:12", "FEEDER_TOPIC").
 */
static config_result
config_set_option(feeder_config *cfg, config_option id, const char *value,
				  config_source source, const char *where,
				  char *err, size_t errlen)
{
	if (cfg->source[id] > source)
		return CONFIG_OK;

	if (id == OPT_TOPIC && cfg->source[id] < source)
	{
		int			i;

		for (i = 0; i < cfg->ntopics; i++)
			free(cfg->topics[i]);
		cfg->ntopics = 0;
	}
	cfg->source[id] = source;

	switch (id)
	{
		case OPT_BROKERS:
			if (*value == '\0')
				return config_error(err, errlen, "%s: empty broker list", where);
			config_set_string(&cfg->brokers, value);
			break;
		case OPT_TOPIC:
			return config_add_topics(cfg, value, where, err, errlen);
		case OPT_GROUP:
			if (*value == '\0')
				return config_error(err, errlen, "%s: empty group id", where);
			if (strlen(value) > CONFIG_MAX_GROUP_BYTES)
				return config_error(err, errlen,
									"%s: the group id is %zu bytes long; at most %d are allowed (the database keeps consumer groups of at most %d bytes)",
									where, strlen(value), CONFIG_MAX_GROUP_BYTES,
									CONFIG_MAX_GROUP_BYTES);
			config_set_string(&cfg->group, value);
			break;
		case OPT_DSN:
			config_set_string(&cfg->dsn, value);
			break;
		case OPT_BATCH_SIZE:
			if (config_parse_int(value, 1, 100000, &cfg->batch_size) != 0)
				return config_error(err, errlen,
									"%s: expected an integer from 1 to 100000, got \"%s\"",
									where, value);
			break;
		case OPT_BATCH_WAIT_MS:
			if (config_parse_int(value, 0, 600000, &cfg->batch_wait_ms) != 0)
				return config_error(err, errlen,
									"%s: expected milliseconds from 0 to 600000, got \"%s\"",
									where, value);
			break;
		case OPT_DB_SESSIONS:
			if (config_parse_int(value, 1, CONFIG_MAX_DB_SESSIONS, &cfg->db_sessions) != 0)
				return config_error(err, errlen,
									"%s: expected a number of sessions from 1 to %d, got \"%s\"",
									where, CONFIG_MAX_DB_SESSIONS, value);
			break;
		case OPT_STATS_INTERVAL:
			if (config_parse_int(value, 0, 86400, &cfg->stats_interval_s) != 0)
				return config_error(err, errlen,
									"%s: expected seconds from 0 (off) to 86400, got \"%s\"",
									where, value);
			break;
		case OPT_CLIENT_ID:
			if (*value == '\0')
				return config_error(err, errlen, "%s: empty client id", where);
			config_set_string(&cfg->client_id, value);
			break;
		case OPT_LOG_LEVEL:
			if (log_parse_level(value, &cfg->log_level) != 0)
				return config_error(err, errlen,
									"%s: expected debug, info, warning or error, got \"%s\"",
									where, value);
			break;
		case OPT_RETRY_BACKOFF_MS:
			if (config_parse_int(value, 1, 600000, &cfg->retry_backoff_ms) != 0)
				return config_error(err, errlen,
									"%s: expected milliseconds from 1 to 600000, got \"%s\"",
									where, value);
			break;
		case OPT_RETRY_BACKOFF_MAX_MS:
			if (config_parse_int(value, 1, 3600000, &cfg->retry_backoff_max_ms) != 0)
				return config_error(err, errlen,
									"%s: expected milliseconds from 1 to 3600000, got \"%s\"",
									where, value);
			break;
		case OPT_METRICS_LISTEN:
			{
				char		host[256];
				char		port[8];

				if (config_split_listen(value, host, sizeof(host), port, sizeof(port)) != 0)
					return config_error(err, errlen,
										"%s: expected ADDRESS:PORT (127.0.0.1:9900, [::1]:9900, localhost:0), got \"%s\"",
										where, value);
				config_set_string(&cfg->metrics_listen, value);
			}
			break;
		case OPT_STATEMENT_TIMEOUT_MS:
			if (config_parse_int(value, 0, 86400000, &cfg->statement_timeout_ms) != 0)
				return config_error(err, errlen,
									"%s: expected milliseconds from 0 (the server's) to 86400000, got \"%s\"",
									where, value);
			break;
		case OPT_LOCK_TIMEOUT_MS:
			if (config_parse_int(value, 0, 86400000, &cfg->lock_timeout_ms) != 0)
				return config_error(err, errlen,
									"%s: expected milliseconds from 0 (the server's) to 86400000, got \"%s\"",
									where, value);
			break;
		case OPT_BATCH_MAX_BYTES:
			if (config_parse_int(value, 65536, 512 * 1024 * 1024, &cfg->batch_max_bytes) != 0)
				return config_error(err, errlen,
									"%s: expected bytes from 65536 to 536870912, got \"%s\"",
									where, value);
			break;
		case OPT_STALL_TIMEOUT:
			if (config_parse_int(value, 1, 86400, &cfg->stall_timeout_s) != 0)
				return config_error(err, errlen,
									"%s: expected seconds from 1 to 86400, got \"%s\"",
									where, value);
			break;
		case OPT_STATUS_INTERVAL:
			if (config_parse_int(value, 0, 3600, &cfg->status_interval_s) != 0)
				return config_error(err, errlen,
									"%s: expected seconds from 0 (off) to 3600, got \"%s\"",
									where, value);
			break;
		case OPT_ENVELOPE:
			if (strcmp(value, "plain") != 0 && strcmp(value, "debezium") != 0 &&
				strcmp(value, "cloudevents") != 0)
				return config_error(err, errlen,
									"%s: expected plain, debezium or cloudevents, got \"%s\"",
									where, value);
			config_set_string(&cfg->envelope, value);
			break;
		case OPT_EVENT_TYPE:
			if (*value == '\0')
				return config_error(err, errlen, "%s: empty event type", where);
			config_set_string(&cfg->event_type, value);
			break;
		case OPT_TYPE_HEADER:
			if (*value == '\0' || strlen(value) > 255)
				return config_error(err, errlen,
									"%s: expected a header name of 1 to 255 bytes", where);
			config_set_string(&cfg->type_header, value);
			break;
		case OPT_VALUE_FORMAT:
			if (strcmp(value, "json") != 0 && strcmp(value, "confluent") != 0)
				return config_error(err, errlen,
									"%s: expected json or confluent, got \"%s\"",
									where, value);
			config_set_string(&cfg->value_format, value);
			break;
		case OPT_SCHEMA_REGISTRY:
			if (strncmp(value, "http://", 7) != 0 && strncmp(value, "https://", 8) != 0)
				return config_error(err, errlen,
									"%s: expected http:// or https:// URLs separated by commas, got \"%s\"",
									where, value);
			config_set_string(&cfg->schema_registry, value);
			break;
		case OPT_SCHEMA_REGISTRY_CREDENTIALS:
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
				config_set_string(&cfg->schema_registry_user_info, line);
				memset(line, 0, sizeof(line));
				break;
			}
		case OPT_SCHEMA_REGISTRY_CA:
			config_set_string(&cfg->schema_registry_ca, value);
			break;
		case OPT_SCHEMA_REGISTRY_CERT:
			config_set_string(&cfg->schema_registry_cert, value);
			break;
		case OPT_SCHEMA_REGISTRY_KEY:
			config_set_string(&cfg->schema_registry_key, value);
			break;
		case OPT_SCHEMA_REGISTRY_TIMEOUT_MS:
			if (config_parse_int(value, 100, 600000, &cfg->schema_registry_timeout_ms) != 0)
				return config_error(err, errlen,
									"%s: expected milliseconds from 100 to 600000, got \"%s\"",
									where, value);
			break;
		case OPT_SCHEMA_REGISTRY_UNKNOWN_GRACE_MS:
			if (config_parse_int(value, 0, 600000, &cfg->schema_registry_unknown_grace_ms) != 0)
				return config_error(err, errlen,
									"%s: expected milliseconds from 0 to 600000, got \"%s\"",
									where, value);
			break;
		case OPT_ACCEPT_POSITION_LOSS:
			if (strcmp(value, "true") == 0 || strcmp(value, "1") == 0 ||
				strcmp(value, "yes") == 0)
				cfg->accept_position_loss = 1;
			else if (strcmp(value, "false") == 0 || strcmp(value, "0") == 0 ||
					 strcmp(value, "no") == 0)
				cfg->accept_position_loss = 0;
			else
				return config_error(err, errlen,
									"%s: expected true or false, got \"%s\"",
									where, value);
			break;
		default:
			return config_error(err, errlen, "%s: unknown option", where);
	}
	return CONFIG_OK;
}

/*
 * config_refused_value
 *		Why a librdkafka property may not take this value, or NULL when it
 *		may.  auto.offset.reset to the end would start every partition the
 *		group has no offset for (a new partition, a new group) after the
 *		messages already in it: they would never be materialized.  Every
 *		spelling librdkafka takes for the end is refused here (any case,
 *		leading blanks, the topic. prefix), with the file or flag named;
 *		kafka_build_conf checks the value librdkafka finally holds.
 */
static const char *
config_refused_value(const char *key, const char *value)
{
	if (strncmp(key, "topic.", 6) == 0)
		key += 6;				/* librdkafka's default topic configuration */
	while (*value == ' ' || *value == '\t')
		value++;				/* librdkafka skips leading blanks */
	if (strcmp(key, "auto.offset.reset") == 0 &&
		(strcasecmp(value, "latest") == 0 || strcasecmp(value, "largest") == 0 ||
		 strcasecmp(value, "end") == 0))
		return CONFIG_OFFSET_RESET_REFUSED;
	return NULL;
}

/*
 * config_add_prop
 *		Record a librdkafka property, refusing the pinned ones and the
 *		values that would lose messages.
 */
static config_result
config_add_prop(feeder_config *cfg, const char *key, const char *value,
				config_source source, const char *where,
				char *err, size_t errlen)
{
	const char *reason;

	if (*key == '\0')
		return config_error(err, errlen, "%s: empty property name", where);
	if ((reason = config_refused_reason(key)) != NULL)
		return config_error(err, errlen, "%s: property \"%s\" cannot be set: %s",
							where, key, reason);
	if ((reason = config_refused_value(key, value)) != NULL)
		return config_error(err, errlen, "%s: %s=%s is refused: %s",
							where, key, value, reason);
	cfg->props = realloc(cfg->props, sizeof(config_prop) * (cfg->nprops + 1));
	if (cfg->props == NULL)
		return config_error(err, errlen, "out of memory");
	cfg->props[cfg->nprops].key = config_strdup(key);
	cfg->props[cfg->nprops].value = config_strdup(value);
	cfg->props[cfg->nprops].source = source;
	cfg->nprops++;
	return CONFIG_OK;
}

/*
 * config_add_prop_arg
 *		Split a -X argument at its first '=' and record it; "-X list" asks
 *		for librdkafka's property list instead.
 */
static config_result
config_add_prop_arg(feeder_config *cfg, const char *arg, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	char	   *key;
	config_result r;

	if (strcmp(arg, "list") == 0)
	{
		cfg->want_list_props = 1;
		return CONFIG_OK;
	}
	if (eq == NULL)
		return config_error(err, errlen,
							"-X %s: expected key=value (or -X list)", arg);
	key = config_strdup(arg);
	key[eq - arg] = '\0';
	r = config_add_prop(cfg, key, eq + 1, CONFIG_SRC_ARGV, "-X", err, errlen);
	free(key);
	return r;
}

/*
 * config_trim
 *		Strip leading and trailing blanks in place.
 */
static char *
config_trim(char *s)
{
	char	   *end;

	while (isspace((unsigned char) *s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char) end[-1]))
		*--end = '\0';
	return s;
}

/*
 * config_load_file
 *		Read a -F file: one key=value per line, blanks around key and value
 *		ignored, '#' starts a comment line.  A key is a long option name
 *		(brokers, topic, ...; topic may repeat) or else a librdkafka
 *		property.  Values are taken verbatim to the end of the line.
 */
static config_result
config_load_file(feeder_config *cfg, const char *path, char *err, size_t errlen)
{
	FILE	   *f = fopen(path, "r");
	char	   *buf = NULL;
	size_t		cap = 0;
	ssize_t		n;
	int			lineno = 0;
	config_result r = CONFIG_OK;

	if (f == NULL)
		return config_error(err, errlen, "-F %s: %s", path, strerror(errno));

	while (r == CONFIG_OK && (n = getline(&buf, &cap, f)) >= 0)
	{
		char		where[512];
		char	   *line;
		char	   *eq;
		char	   *key;
		char	   *value;
		config_option id;

		lineno++;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		line = config_trim(buf);
		if (*line == '\0' || *line == '#')
			continue;
		eq = strchr(line, '=');
		if (eq == NULL)
		{
			r = config_error(err, errlen, "%s: expected key=value", where);
			break;
		}
		*eq = '\0';
		key = config_trim(line);
		value = config_trim(eq + 1);
		id = config_option_by_name(key);
		if (id != OPT_NONE)
			r = config_set_option(cfg, id, value, CONFIG_SRC_FILE, where, err, errlen);
		else if (strcmp(key, "X") == 0 || strcmp(key, "help") == 0 ||
				 strcmp(key, "version") == 0 || strcmp(key, "config") == 0)
			r = config_error(err, errlen, "%s: \"%s\" is not allowed in a file", where, key);
		else if (strcmp(key, CONFIG_ADOPT_COMMAND) == 0)
			r = config_error(err, errlen,
							 "%s: \"%s\" is not allowed in a file: it is a one-shot command, given on the command line only, so that it cannot be left on",
							 where, key);
		else
			r = config_add_prop(cfg, key, value, CONFIG_SRC_FILE, where, err, errlen);
	}
	if (r == CONFIG_OK && ferror(f))
		r = config_error(err, errlen, "-F %s: read error", path);
	free(buf);
	fclose(f);
	return r;
}

/*
 * config_apply_env
 *		Fill brokers, topic, group, DSN and the metrics address from
 *		FEEDER_* variables when no higher source gave them.  FEEDER_TOPIC may list several topics
 *		separated by commas.
 */
static config_result
config_apply_env(feeder_config *cfg, char *err, size_t errlen)
{
	static const struct
	{
		const char *var;
		config_option id;
	}			envs[] = {
		{CONFIG_ENV_BROKERS, OPT_BROKERS},
		{CONFIG_ENV_TOPIC, OPT_TOPIC},
		{CONFIG_ENV_GROUP, OPT_GROUP},
		{CONFIG_ENV_DSN, OPT_DSN},
		{CONFIG_ENV_METRICS_LISTEN, OPT_METRICS_LISTEN},
		{CONFIG_ENV_ACCEPT_POSITION_LOSS, OPT_ACCEPT_POSITION_LOSS},
		{CONFIG_ENV_ENVELOPE, OPT_ENVELOPE},
		{CONFIG_ENV_EVENT_TYPE, OPT_EVENT_TYPE},
		{CONFIG_ENV_TYPE_HEADER, OPT_TYPE_HEADER},
		{CONFIG_ENV_VALUE_FORMAT, OPT_VALUE_FORMAT},
		{CONFIG_ENV_SCHEMA_REGISTRY, OPT_SCHEMA_REGISTRY},
		{CONFIG_ENV_SCHEMA_REGISTRY_CREDENTIALS, OPT_SCHEMA_REGISTRY_CREDENTIALS},
		{CONFIG_ENV_SCHEMA_REGISTRY_CA, OPT_SCHEMA_REGISTRY_CA},
		{CONFIG_ENV_SCHEMA_REGISTRY_CERT, OPT_SCHEMA_REGISTRY_CERT},
		{CONFIG_ENV_SCHEMA_REGISTRY_KEY, OPT_SCHEMA_REGISTRY_KEY},
		{CONFIG_ENV_STATUS_INTERVAL, OPT_STATUS_INTERVAL},
	};
	size_t		i;

	for (i = 0; i < NELEM(envs); i++)
	{
		const char *v = getenv(envs[i].var);
		config_result r;

		if (v == NULL || cfg->source[envs[i].id] > CONFIG_SRC_ENV)
			continue;
		r = config_set_option(cfg, envs[i].id, v, CONFIG_SRC_ENV, envs[i].var,
							  err, errlen);
		if (r != CONFIG_OK)
			return r;
	}
	return CONFIG_OK;
}

/*
 * config_order_props
 *		Stable-partition the properties so that file ones come before -X
 *		ones: librdkafka applies them in order, the last value wins.
 */
static void
config_order_props(feeder_config *cfg)
{
	config_prop *sorted;
	int			i,
				n = 0;

	if (cfg->nprops < 2)
		return;
	sorted = malloc(sizeof(config_prop) * cfg->nprops);
	if (sorted == NULL)
		return;
	for (i = 0; i < cfg->nprops; i++)
		if (cfg->props[i].source != CONFIG_SRC_ARGV)
			sorted[n++] = cfg->props[i];
	for (i = 0; i < cfg->nprops; i++)
		if (cfg->props[i].source == CONFIG_SRC_ARGV)
			sorted[n++] = cfg->props[i];
	free(cfg->props);
	cfg->props = sorted;
}

/*
 * config_check_readable
 *		A file option's file can be read by the feeder's user: checked at
 *		start, so that a typo or a permission shows as exit 2 naming the
 *		option (from where it was given) and the path, not at the first
 *		message.  NULL path: not given.
 */
static config_result
config_check_readable(const feeder_config *cfg, config_option id,
					  const char *option, const char *env, const char *path,
					  char *err, size_t errlen)
{
	FILE	   *f;
	char		where[512];
	int			failed;
	int			saved;

	if (path == NULL)
		return CONFIG_OK;
	errno = 0;
	f = fopen(path, "r");
	failed = f == NULL || (fgetc(f) == EOF && ferror(f));	/* a directory */
	saved = errno;
	if (f != NULL)
		fclose(f);
	if (!failed)
		return CONFIG_OK;
	if (cfg->source[id] == CONFIG_SRC_ENV)
		snprintf(where, sizeof(where), "%s", env);
	else if (cfg->source[id] == CONFIG_SRC_FILE)
		snprintf(where, sizeof(where), "%s (in -F %s)", option, cfg->config_file);
	else
		snprintf(where, sizeof(where), "%s", option);
	return config_error(err, errlen,
						"%s: cannot read \"%s\": %s (the feeder's user must be able to read it)",
						where, path, strerror(saved));
}

/*
 * config_check_outbox
 *		The envelope and event type options together: with cloudevents the
 *		type is CloudEvents' own (ce_type, or the type attribute), so
 *		--type-header is refused; --type-header alone would do nothing.
 *		Then the Schema Registry's options together, and its files readable.
 */
static config_result
config_check_outbox(feeder_config *cfg, char *err, size_t errlen)
{
	int			cloudevents;

	if (cfg->envelope == NULL)
		cfg->envelope = config_strdup("plain");
	cloudevents = strcmp(cfg->envelope, "cloudevents") == 0;
	if (cloudevents && cfg->type_header != NULL)
		return config_error(err, errlen,
							"--type-header: with --envelope cloudevents the type is CloudEvents' type attribute (header ce_type, or \"type\" in structured mode)");
	if (cfg->type_header != NULL && cfg->event_type == NULL)
		return config_error(err, errlen,
							"--type-header needs --event-type: without a type to select it would do nothing");
	if (cfg->event_type != NULL && cfg->type_header == NULL)
		cfg->type_header = config_strdup(cloudevents ? CONFIG_CLOUDEVENTS_TYPE_HEADER :
										 CONFIG_DEFAULT_TYPE_HEADER);
	if (cfg->value_format == NULL)
		cfg->value_format = config_strdup("json");
	if (cfg->schema_registry_user_info == NULL &&
		getenv(CONFIG_ENV_SCHEMA_REGISTRY_USER_INFO) != NULL &&
		*getenv(CONFIG_ENV_SCHEMA_REGISTRY_USER_INFO) != '\0')
		cfg->schema_registry_user_info =
			config_strdup(getenv(CONFIG_ENV_SCHEMA_REGISTRY_USER_INFO));
	if (strcmp(cfg->value_format, "confluent") == 0 && cfg->schema_registry == NULL)
		return config_error(err, errlen,
							"--value-format confluent needs --schema-registry URL: the Avro schemas are fetched from it");
	if (strcmp(cfg->value_format, "confluent") != 0 && cfg->schema_registry != NULL)
		return config_error(err, errlen,
							"--schema-registry is used only with --value-format confluent");
	if ((cfg->schema_registry_cert == NULL) != (cfg->schema_registry_key == NULL))
		return config_error(err, errlen,
							"%s",
							cfg->schema_registry_cert == NULL ?
							"--schema-registry-key needs --schema-registry-cert: give the client certificate too" :
							"--schema-registry-cert needs --schema-registry-key: give the certificate's private key too");
	if (cfg->schema_registry_cert != NULL && cfg->schema_registry == NULL)
		return config_error(err, errlen,
							"--schema-registry-cert is used only with --value-format confluent --schema-registry URL");
	if (config_check_readable(cfg, OPT_SCHEMA_REGISTRY_CA, "--schema-registry-ca",
							  CONFIG_ENV_SCHEMA_REGISTRY_CA, cfg->schema_registry_ca,
							  err, errlen) != CONFIG_OK ||
		config_check_readable(cfg, OPT_SCHEMA_REGISTRY_CERT, "--schema-registry-cert",
							  CONFIG_ENV_SCHEMA_REGISTRY_CERT, cfg->schema_registry_cert,
							  err, errlen) != CONFIG_OK ||
		config_check_readable(cfg, OPT_SCHEMA_REGISTRY_KEY, "--schema-registry-key",
							  CONFIG_ENV_SCHEMA_REGISTRY_KEY, cfg->schema_registry_key,
							  err, errlen) != CONFIG_OK)
		return CONFIG_ERROR;
	return CONFIG_OK;
}

/*
 * config_defaults
 *		Reset cfg to built-in defaults.
 */
static void
config_defaults(feeder_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->batch_size = CONFIG_DEFAULT_BATCH_SIZE;
	cfg->batch_wait_ms = CONFIG_DEFAULT_BATCH_WAIT;
	cfg->db_sessions = CONFIG_DEFAULT_DB_SESSIONS;
	cfg->batch_max_bytes = CONFIG_DEFAULT_BATCH_MAX_BYTES;
	cfg->stats_interval_s = CONFIG_DEFAULT_STATS;
	cfg->log_level = LOG_INFO;
	cfg->retry_backoff_ms = CONFIG_DEFAULT_BACKOFF;
	cfg->retry_backoff_max_ms = CONFIG_DEFAULT_BACKOFF_MAX;
	cfg->statement_timeout_ms = CONFIG_DEFAULT_STATEMENT_TIMEOUT;
	cfg->lock_timeout_ms = CONFIG_DEFAULT_LOCK_TIMEOUT;
	cfg->stall_timeout_s = CONFIG_DEFAULT_STALL_TIMEOUT;
	cfg->schema_registry_timeout_ms = CONFIG_DEFAULT_SCHEMA_REGISTRY_TIMEOUT;
	cfg->schema_registry_unknown_grace_ms = CONFIG_DEFAULT_SCHEMA_REGISTRY_UNKNOWN_GRACE;
	cfg->status_interval_s = CONFIG_DEFAULT_STATUS_INTERVAL;
}

/*
 * config_parse
 *		Build the configuration from argv, the -F file and the environment.
 *		The password of a --dsn argument is redacted in argv itself.
 *		Returns CONFIG_ERROR with a one-line reason in err for anything the
 *		user must fix (exit 2), CONFIG_EXIT after --help/--version/-X list
 *		were requested (the caller prints), CONFIG_OK otherwise.  cfg must
 *		be released with config_free() in every case.
 */
config_result
config_parse(feeder_config *cfg, int argc, char **argv, char *err, size_t errlen)
{
	static const struct option longopts[] = {
		{"brokers", required_argument, NULL, OPT_BROKERS},
		{"topic", required_argument, NULL, OPT_TOPIC},
		{"group", required_argument, NULL, OPT_GROUP},
		{"dsn", required_argument, NULL, OPT_DSN},
		{"batch-size", required_argument, NULL, OPT_BATCH_SIZE},
		{"batch-wait-ms", required_argument, NULL, OPT_BATCH_WAIT_MS},
		{"db-sessions", required_argument, NULL, OPT_DB_SESSIONS},
		{"stats-interval", required_argument, NULL, OPT_STATS_INTERVAL},
		{"client-id", required_argument, NULL, OPT_CLIENT_ID},
		{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
		{"retry-backoff-ms", required_argument, NULL, OPT_RETRY_BACKOFF_MS},
		{"retry-backoff-max-ms", required_argument, NULL, OPT_RETRY_BACKOFF_MAX_MS},
		{"metrics-listen", required_argument, NULL, OPT_METRICS_LISTEN},
		{"accept-position-loss", no_argument, NULL, OPT_ACCEPT_POSITION_LOSS},
		{"statement-timeout-ms", required_argument, NULL, OPT_STATEMENT_TIMEOUT_MS},
		{"lock-timeout-ms", required_argument, NULL, OPT_LOCK_TIMEOUT_MS},
		{"stall-timeout", required_argument, NULL, OPT_STALL_TIMEOUT},
		{"envelope", required_argument, NULL, OPT_ENVELOPE},
		{"event-type", required_argument, NULL, OPT_EVENT_TYPE},
		{"type-header", required_argument, NULL, OPT_TYPE_HEADER},
		{"value-format", required_argument, NULL, OPT_VALUE_FORMAT},
		{"schema-registry", required_argument, NULL, OPT_SCHEMA_REGISTRY},
		{"schema-registry-credentials", required_argument, NULL, OPT_SCHEMA_REGISTRY_CREDENTIALS},
		{"schema-registry-ca", required_argument, NULL, OPT_SCHEMA_REGISTRY_CA},
		{"schema-registry-cert", required_argument, NULL, OPT_SCHEMA_REGISTRY_CERT},
		{"schema-registry-key", required_argument, NULL, OPT_SCHEMA_REGISTRY_KEY},
		{"schema-registry-timeout-ms", required_argument, NULL, OPT_SCHEMA_REGISTRY_TIMEOUT_MS},
		{"schema-registry-unknown-grace-ms", required_argument, NULL, OPT_SCHEMA_REGISTRY_UNKNOWN_GRACE_MS},
		{"status-interval", required_argument, NULL, OPT_STATUS_INTERVAL},
		{"batch-max-bytes", required_argument, NULL, OPT_BATCH_MAX_BYTES},
		{CONFIG_ADOPT_COMMAND, no_argument, NULL, 'A'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0}
	};
	config_result r = CONFIG_OK;
	int			c;

	config_defaults(cfg);
	opterr = 0;
	optind = 0;					/* full getopt reset (glibc), for tests */

	while (r == CONFIG_OK &&
		   (c = getopt_long(argc, argv, "+:hVX:F:", longopts, NULL)) != -1)
	{
		char		where[64];

		switch (c)
		{
			case 'h':
				cfg->want_help = 1;
				break;
			case 'V':
				cfg->want_version = 1;
				break;
			case 'A':
				cfg->adopt_kafka_offsets = 1;
				break;
			case 'X':
				r = config_add_prop_arg(cfg, optarg, err, errlen);
				break;
			case 'F':
				if (cfg->config_file)
					return config_error(err, errlen, "-F given more than once");
				cfg->config_file = config_strdup(optarg);
				break;
			case ':':
				if (optopt == 'X' || optopt == 'F')
					return config_error(err, errlen, "-%c requires an argument", optopt);
				return config_error(err, errlen, "%s requires an argument",
									argv[optind - 1]);
			case '?':
				if (optopt && optopt >= ' ' && optind > 0 && argv[optind - 1][1] != '-')
					return config_error(err, errlen, "unknown option -%c", optopt);
				return config_error(err, errlen, "unknown option %s",
									argv[optind - 1]);
			default:
				snprintf(where, sizeof(where), "--%s",
						 config_option_name((config_option) c));
				r = config_set_option(cfg, (config_option) c,
									  optarg ? optarg : "true",
									  CONFIG_SRC_ARGV, where, err, errlen);
				/* the value is copied: hide its password from ps */
				if (c == OPT_DSN)
					log_redact_conninfo_inplace(optarg);
				break;
		}
	}
	if (r != CONFIG_OK)
		return r;
	if (optind < argc)
		return config_error(err, errlen, "unexpected argument \"%s\"", argv[optind]);
	if (cfg->want_help || cfg->want_version || cfg->want_list_props)
		return CONFIG_EXIT;

	if (cfg->config_file &&
		(r = config_load_file(cfg, cfg->config_file, err, errlen)) != CONFIG_OK)
		return r;
	if ((r = config_apply_env(cfg, err, errlen)) != CONFIG_OK)
		return r;
	config_order_props(cfg);

	if (cfg->brokers == NULL)
		return config_error(err, errlen,
							"no Kafka brokers: give --brokers or set " CONFIG_ENV_BROKERS);
	if (cfg->ntopics == 0)
		return config_error(err, errlen,
							"no topic: give --topic or set " CONFIG_ENV_TOPIC);
	if (cfg->group == NULL)
		cfg->group = config_strdup(CONFIG_DEFAULT_GROUP);
	if (cfg->dsn == NULL)
		cfg->dsn = config_strdup("");
	if (cfg->client_id == NULL)
		cfg->client_id = config_strdup(FEEDER_NAME);
	if (cfg->retry_backoff_max_ms < cfg->retry_backoff_ms)
		return config_error(err, errlen,
							"--retry-backoff-max-ms (%d) is below --retry-backoff-ms (%d)",
							cfg->retry_backoff_max_ms, cfg->retry_backoff_ms);
	return config_check_outbox(cfg, err, errlen);
}

/*
 * config_free
 *		Release everything config_parse allocated.
 */
void
config_free(feeder_config *cfg)
{
	int			i;

	free(cfg->brokers);
	for (i = 0; i < cfg->ntopics; i++)
		free(cfg->topics[i]);
	free(cfg->topics);
	free(cfg->group);
	free(cfg->dsn);
	free(cfg->client_id);
	free(cfg->metrics_listen);
	free(cfg->envelope);
	free(cfg->event_type);
	free(cfg->type_header);
	free(cfg->value_format);
	free(cfg->schema_registry);
	if (cfg->schema_registry_user_info)
		memset(cfg->schema_registry_user_info, 0, strlen(cfg->schema_registry_user_info));
	free(cfg->schema_registry_user_info);
	free(cfg->schema_registry_ca);
	free(cfg->schema_registry_cert);
	free(cfg->schema_registry_key);
	for (i = 0; i < cfg->nprops; i++)
	{
		free(cfg->props[i].key);
		free(cfg->props[i].value);
	}
	free(cfg->props);
	free(cfg->config_file);
	memset(cfg, 0, sizeof(*cfg));
}

/*
 * config_usage
 *		The --help text: every option, environment variable and exit code.
 */
void
config_usage(FILE *out)
{
	fputs(
		  "Usage: " FEEDER_NAME " --brokers HOST:PORT[,...] --topic NAME [OPTION]...\n"
		  "       " FEEDER_NAME " --adopt-kafka-offsets --brokers ... --topic ... [OPTION]...\n"
		  "\n"
		  "Consume OrderReceived events from Kafka and materialize them into PostgreSQL\n"
		  "with received_orders.materialize_orders(), one transaction per batch. An\n"
		  "offset is stored (and later committed) only after its batch committed.\n"
		  "\n"
		  "Options:\n"
		  "  --brokers LIST          Kafka bootstrap brokers, HOST:PORT[,...]   [$FEEDER_BROKERS]\n"
		  "  --topic NAME            topic to consume; repeatable, or NAME,NAME  [$FEEDER_TOPIC]\n"
		  "  --group ID              consumer group, at most 255 bytes\n"
		  "                          (default received-orders-feeder) [$FEEDER_GROUP]\n"
		  "  --dsn CONNINFO          libpq conninfo or postgresql:// URI; PG* variables and\n"
		  "                          .pgpass apply as in psql (default: empty)   [$FEEDER_DSN]\n"
		  "  --batch-size N          messages per transaction, 1..100000 (default 5000)\n"
		  "  --batch-wait-ms MS      close a batch MS ms after its first message; 0: take what\n"
		  "                          is fetched when the previous batch committed (default 0)\n"
		  "  --db-sessions N         database sessions that run batches at the same time,\n"
		  "                          1..64; each partition always goes through the same one,\n"
		  "                          so its batches commit in order; sessions but the first\n"
		  "                          are open only while partitions go through them: at most\n"
		  "                          N backends, plus one for --status-interval (default 8)\n"
		  "  --batch-max-bytes N     close a batch before its values, keys and topics pass N\n"
		  "                          bytes; a larger message goes alone (default 16777216)\n"
		  "  --stats-interval S      counters log line every S seconds, 0 = off (default 10)\n"
		  "  --client-id ID          Kafka client.id (default received-orders-feeder)\n"
		  "  --log-level LEVEL       debug, info, warning or error (default info)\n"
		  "  --retry-backoff-ms MS   first delay before retrying a failed batch (default 100)\n"
		  "  --retry-backoff-max-ms MS  cap of the retry delay (default 5000)\n"
		  "  --metrics-listen ADDR:PORT  serve Prometheus metrics on /metrics and health\n"
		  "                          on /healthz at ADDR:PORT (127.0.0.1:9900,\n"
		  "                          [::1]:9900, localhost:0; port 0 picks a free one,\n"
		  "                          logged as event=metrics_listening); default: off\n"
		  "                                                    [$FEEDER_METRICS_LISTEN]\n"
		  "  --statement-timeout-ms MS  statement_timeout of each batch transaction unless\n"
		  "                          the session already has one (DSN options, role or\n"
		  "                          database settings); 0: the server's (default 60000)\n"
		  "  --lock-timeout-ms MS    lock_timeout likewise: a batch waiting on a row lock\n"
		  "                          fails and is retried, Kafka kept polled (default 10000)\n"
		  "  --stall-timeout S       with --metrics-listen, /healthz turns 503 (stalled) when\n"
		  "                          messages have waited S seconds and no batch committed\n"
		  "                          (default 120)\n"
		  "  --status-interval S     report this feeder's state, partitions and their high\n"
		  "                          watermarks to received_orders.feeders at start, on\n"
		  "                          every change and every S seconds; 0: off (default 10)\n"
		  "                                                 [$FEEDER_STATUS_INTERVAL]\n"
		  "  --envelope NAME         how the outbox relay wrapped each event: plain (the value\n"
		  "                          is the event), debezium (Debezium's outbox router via\n"
		  "                          JsonConverter) or cloudevents (binary or structured\n"
		  "                          mode) (default plain)                  [$FEEDER_ENVELOPE]\n"
		  "  --event-type TYPE       materialize only messages of TYPE (exact match); others\n"
		  "                          are skipped and acknowledged, a message without a type\n"
		  "                          is quarantined (default: every message) [$FEEDER_EVENT_TYPE]\n"
		  "  --type-header NAME      the header holding the type (default eventType; with\n"
		  "                          cloudevents: ce_type or the type attribute)\n"
		  "                                                    [$FEEDER_TYPE_HEADER]\n"
		  "  --value-format FORMAT   json (each value is the JSON event) or confluent (values\n"
		  "                          framed by Confluent's Schema Registry serializers: Avro,\n"
		  "                          decoded with the registry's schema, or JSON Schema)\n"
		  "                          (default json)                     [$FEEDER_VALUE_FORMAT]\n"
		  "  --schema-registry URL[,URL]  the Schema Registry (with --value-format confluent);\n"
		  "                          each schema id is fetched once   [$FEEDER_SCHEMA_REGISTRY]\n"
		  "  --schema-registry-credentials FILE  basic auth USER:PASSWORD on FILE's first line\n"
		  "                          [$FEEDER_SCHEMA_REGISTRY_CREDENTIALS], or the value itself\n"
		  "                          in $FEEDER_SCHEMA_REGISTRY_USER_INFO; never logged\n"
		  "  --schema-registry-ca FILE  CA certificates for an https registry (default: the\n"
		  "                          system's)                   [$FEEDER_SCHEMA_REGISTRY_CA]\n"
		  "  --schema-registry-cert FILE  TLS client certificate (PEM) for a registry that\n"
		  "                          asks for one              [$FEEDER_SCHEMA_REGISTRY_CERT]\n"
		  "  --schema-registry-key FILE  its private key (PEM, unencrypted; only libcurl\n"
		  "                          reads it)                  [$FEEDER_SCHEMA_REGISTRY_KEY]\n"
		  "  --schema-registry-timeout-ms MS  deadline of one request to the registry; past it\n"
		  "                          the batch is retried like a database outage (default 10000)\n"
		  "  --schema-registry-unknown-grace-ms MS  how long an id the registry does not know\n"
		  "                          is retried (a replica may not have it yet) before its\n"
		  "                          message is quarantined; 0: at once (default 10000)\n"
		  "  --accept-position-loss  when the database's position of a partition lies\n"
		  "                          outside what Kafka still holds (retention, re-created\n"
		  "                          topic), log and count the loss and start at the\n"
		  "                          earliest offset instead of exiting with status 5\n"
		  "                          (in -F and $FEEDER_ACCEPT_POSITION_LOSS: true/false)\n"
		  "  -X KEY=VALUE            librdkafka property (TLS, SASL, ...); -X list shows them.\n"
		  "                          Refused: enable.auto.offset.store, enable.auto.commit,\n"
		  "                          auto.commit.enable, offset.store.method, isolation.level\n"
		  "                          (pinned by the delivery contract), group.id (--group),\n"
		  "                          bootstrap.servers, metadata.broker.list (--brokers).\n"
		  "                          auto.offset.reset defaults to earliest; latest (largest,\n"
		  "                          end; any case; topic.auto.offset.reset too) is refused:\n"
		  "                          it would skip messages.\n"
		  "  -F FILE                 read settings from FILE: KEY=VALUE lines, # comments;\n"
		  "                          KEY is a long option name above (without --) or a\n"
		  "                          librdkafka property. Command line > file > environment.\n"
		  "  -h, --help              show this help and exit\n"
		  "  -V, --version           show the version and exit\n"
		  "\n"
		  "Positions: each partition starts at the database's position; one the\n"
		  "database has no position of starts at its earliest offset, never at Kafka's\n"
		  "committed offset (log: event=start_position source=earliest reason=no_position).\n"
		  "\n"
		  "Command (the command line only, never in -F or the environment):\n"
		  "  --adopt-kafka-offsets   with --brokers, --topic, --group, --dsn (and -X):\n"
		  "                          write the group's committed offset in Kafka as the\n"
		  "                          database's position of every partition of the topics\n"
		  "                          that has none (adopt_consumer_position; existing\n"
		  "                          positions are kept), log each partition\n"
		  "                          (event=position_adopted, position_kept,\n"
		  "                          position_none) and exit.  Once, for the first start\n"
		  "                          after the upgrade from 1.0, with the group's feeders\n"
		  "                          stopped; joins no group\n"
		  "\n"
		  "Logs: key=value lines on stderr (ts, level, event, ...); passwords are redacted.\n"
		  "SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM: finish the batch in flight,\n"
		  "commit offsets, leave the group, exit 0; a second signal exits at once with\n"
		  "status 1.\n"
		  "\n"
		  "Exit status: 0 clean shutdown, 1 runtime failure, 2 bad arguments,\n"
		  "3 database or Schema Registry configuration or permission error (the\n"
		  "consumer group belonging to another role, or its positions to another Kafka\n"
		  "cluster, included), 4 Kafka configuration or fatal error, 5 a database\n"
		  "position outside its partition (events lost; see --accept-position-loss).\n"
		  "--adopt-kafka-offsets: 0 done, 1 the database could not be reached or\n"
		  "written, 2, 3 as above, 4 Kafka could not be read (nothing written).\n",
		  out);
}
