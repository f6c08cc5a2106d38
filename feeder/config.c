/*-------------------------------------------------------------------------
 *
 * config.c
 *	  Reads the feeder's configuration from its three sources, command
 *	  line, -F file and environment, and checks the options together.
 *
 * Precedence, highest first: command line, -F file, environment (the
 * FEEDER_* variable of an option that has one), built-in defaults.  Each
 * option's name, variable, setter and help are one row of the table in
 * config_options.c; this file only decides which source a value comes
 * from.  --topic is repeatable; a source that gives any topic replaces the
 * topics of lower sources.  librdkafka properties (-X key=value, or any
 * file key that is not a feeder option) are passed through in order, file
 * first, so that the command line wins; the few the delivery contract pins
 * are refused here with the reason.  -X group.protocol (or the file's key)
 * is --group-protocol by librdkafka's name, with that option's precedence;
 * on the command line the last of the two wins.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "config_options.h"
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

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

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
 * config_set_option
 *		Apply one option value from a source.  A value from a lower source
 *		than the one already applied is ignored; a value from a higher
 *		source replaces it (for --topic, the whole list).  where names the
 *		origin for messages ("--batch-size", "FILE:12", "FEEDER_TOPIC").
 */
static config_result
config_set_option(feeder_config *cfg, const config_optdef *def, const char *value,
				  config_source source, const char *where,
				  char *err, size_t errlen)
{
	config_option id = (config_option) def->val;

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
	return def->set(cfg, def, value, where, err, errlen);
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
 *		values that would lose messages.  group.protocol is the option
 *		--group-protocol under librdkafka's name: set through it, with its
 *		check and its source's precedence, so that one value reaches both
 *		librdkafka and the feeder's own choices (kafka_build_conf).
 */
static config_result
config_add_prop(feeder_config *cfg, const char *key, const char *value,
				config_source source, const char *where,
				char *err, size_t errlen)
{
	const char *reason;
	char		prop_where[600];

	if (*key == '\0')
		return config_error(err, errlen, "%s: empty property name", where);
	if (strcmp(key, "group.protocol") == 0)
	{
		snprintf(prop_where, sizeof(prop_where), "%s group.protocol", where);
		return config_set_option(cfg, config_optdef_by_id(OPT_GROUP_PROTOCOL),
								 value, source, prop_where, err, errlen);
	}
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
		const config_optdef *def;

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
		def = config_optdef_by_name(key);
		if (def != NULL)
			r = config_set_option(cfg, def, value, CONFIG_SRC_FILE, where, err, errlen);
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
 *		Fill the options that have a FEEDER_* variable from it when no
 *		higher source gave them, in the order of their config_option ids.
 *		FEEDER_TOPIC may list several topics separated by commas.
 */
static config_result
config_apply_env(feeder_config *cfg, char *err, size_t errlen)
{
	int			id;

	for (id = OPT_NONE + 1; id < OPT_COUNT; id++)
	{
		const config_optdef *def = config_optdef_by_id((config_option) id);
		const char *v;
		config_result r;

		if (def == NULL || def->env == NULL ||
			(v = getenv(def->env)) == NULL || cfg->source[id] > CONFIG_SRC_ENV)
			continue;
		r = config_set_option(cfg, def, v, CONFIG_SRC_ENV, def->env, err, errlen);
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
					  const char *path, char *err, size_t errlen)
{
	const config_optdef *def = config_optdef_by_id(id);
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
		snprintf(where, sizeof(where), "%s", def->env);
	else if (cfg->source[id] == CONFIG_SRC_FILE)
		snprintf(where, sizeof(where), "--%s (in -F %s)", def->name, cfg->config_file);
	else
		snprintf(where, sizeof(where), "--%s", def->name);
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
	if (config_check_readable(cfg, OPT_SCHEMA_REGISTRY_CA, cfg->schema_registry_ca,
							  err, errlen) != CONFIG_OK ||
		config_check_readable(cfg, OPT_SCHEMA_REGISTRY_CERT, cfg->schema_registry_cert,
							  err, errlen) != CONFIG_OK ||
		config_check_readable(cfg, OPT_SCHEMA_REGISTRY_KEY, cfg->schema_registry_key,
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
	config_option_defaults(cfg);
}

/*
 * config_getopt_tables
 *		getopt's long options and short option string, from the table of
 *		options: a setting returns its config_option id, a command its
 *		letter.
 */
static void
config_getopt_tables(struct option *longopts, char *shortopts)
{
	size_t		i;
	int			n = 0;
	char	   *p = shortopts;

	*p++ = '+';					/* stop at the first non-option */
	*p++ = ':';					/* a missing argument returns ':' */
	for (i = 0; i < config_noptions; i++)
	{
		const config_optdef *def = &config_options[i];

		if (def->shortopt)
		{
			*p++ = def->shortopt;
			if (def->has_arg == required_argument)
				*p++ = ':';
		}
		if (def->name)
		{
			longopts[n].name = def->name;
			longopts[n].has_arg = def->has_arg;
			longopts[n].flag = NULL;
			longopts[n].val = def->val;
			n++;
		}
	}
	*p = '\0';
	memset(&longopts[n], 0, sizeof(longopts[n]));
}

/*
 * config_read_argv
 *		Apply the command line: settings through their rows, the commands,
 *		-X properties and the -F file's name.  Stops at the first error.
 */
static config_result
config_read_argv(feeder_config *cfg, int argc, char **argv,
				 const struct option *longopts, const char *shortopts,
				 char *err, size_t errlen)
{
	config_result r = CONFIG_OK;
	int			c;

	opterr = 0;
	optind = 0;					/* full getopt reset (glibc), for tests */

	while (r == CONFIG_OK &&
		   (c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1)
	{
		char		where[64];
		const config_optdef *def;

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
				def = config_optdef_by_id((config_option) c);
				snprintf(where, sizeof(where), "--%s", def->name);
				r = config_set_option(cfg, def, optarg ? optarg : "true",
									  CONFIG_SRC_ARGV, where, err, errlen);
				/* the value is copied: hide its password from ps */
				if (def->flags & CONFIG_OPT_REDACT)
					log_redact_conninfo_inplace(optarg);
				break;
		}
	}
	return r;
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
	struct option *longopts;
	char	   *shortopts;
	config_result r;

	config_defaults(cfg);
	longopts = calloc(config_noptions + 1, sizeof(struct option));
	shortopts = malloc(3 + 2 * config_noptions);
	if (longopts == NULL || shortopts == NULL)
	{
		free(longopts);
		free(shortopts);
		return config_error(err, errlen, "out of memory");
	}
	config_getopt_tables(longopts, shortopts);
	r = config_read_argv(cfg, argc, argv, longopts, shortopts, err, errlen);
	free(longopts);
	free(shortopts);
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
	if (cfg->group_protocol == NULL)
		cfg->group_protocol = config_strdup("classic");
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
	free(cfg->group_protocol);
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
