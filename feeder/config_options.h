/*-------------------------------------------------------------------------
 *
 * config_options.h
 *	  The feeder's options: their ids, the settings they fill
 *	  (feeder_config), their defaults and the table of their rows, shared
 *	  by the readers of their sources (config.c) and the help text
 *	  (config_help.c).
 *
 * One row per option: adding an option is one row in config_options.c plus
 * its config_option id and its feeder_config field here, beside the
 * defaults the rows name.  getopt's long options, the -F keys, the FEEDER_*
 * variables read and the option lines of --help are all produced from the
 * rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_CONFIG_OPTIONS_H
#define FEEDER_CONFIG_OPTIONS_H

#include <stddef.h>

#include "log.h"

/* Where a setting came from; a higher source wins. */
typedef enum config_source
{
	CONFIG_SRC_DEFAULT = 0,
	CONFIG_SRC_ENV,
	CONFIG_SRC_FILE,
	CONFIG_SRC_ARGV
} config_source;

/* One librdkafka property given with -X or in the -F file. */
typedef struct config_prop
{
	char	   *key;
	char	   *value;
	config_source source;
} config_prop;

/* The settings; each has its row in config_options.c. */
typedef enum config_option
{
	OPT_NONE = 0,
	OPT_BROKERS,
	OPT_TOPIC,
	OPT_GROUP,
	OPT_GROUP_PROTOCOL,
	OPT_DSN,
	OPT_BATCH_SIZE,
	OPT_BATCH_WAIT_MS,
	OPT_DB_SESSIONS,
	OPT_STATS_INTERVAL,
	OPT_CLIENT_ID,
	OPT_LOG_LEVEL,
	OPT_RETRY_BACKOFF_MS,
	OPT_RETRY_BACKOFF_MAX_MS,
	OPT_METRICS_LISTEN,
	OPT_ACCEPT_POSITION_LOSS,
	OPT_STATEMENT_TIMEOUT_MS,
	OPT_LOCK_TIMEOUT_MS,
	OPT_STALL_TIMEOUT,
	OPT_BATCH_MAX_BYTES,
	OPT_ENVELOPE,
	OPT_EVENT_TYPE,
	OPT_TYPE_HEADER,
	OPT_VALUE_FORMAT,
	OPT_SCHEMA_REGISTRY,
	OPT_SCHEMA_REGISTRY_CREDENTIALS,
	OPT_SCHEMA_REGISTRY_CA,
	OPT_SCHEMA_REGISTRY_CERT,
	OPT_SCHEMA_REGISTRY_KEY,
	OPT_SCHEMA_REGISTRY_TIMEOUT_MS,
	OPT_SCHEMA_REGISTRY_UNKNOWN_GRACE_MS,
	OPT_STATUS_INTERVAL,
	OPT_COUNT
} config_option;

typedef struct feeder_config
{
	char	   *brokers;
	char	  **topics;
	int			ntopics;
	char	   *group;
	char	   *group_protocol;	/* classic or consumer (group.protocol) */
	char	   *dsn;			/* "" means libpq defaults (PG* variables) */
	int			batch_size;
	int			batch_wait_ms;
	int			db_sessions;		/* lanes: database sessions in parallel */
	int			batch_max_bytes;	/* bound of a batch's encoded size */
	int			stats_interval_s;	/* 0 disables the counters line */
	char	   *client_id;
	log_level	log_level;
	int			retry_backoff_ms;
	int			retry_backoff_max_ms;
	char	   *metrics_listen;	/* "ADDR:PORT" or NULL: no HTTP endpoint */
	int			accept_position_loss;	/* start past lost events instead of exit 5 */
	int			statement_timeout_ms;	/* per batch unless the session sets one; 0 off */
	int			lock_timeout_ms;	/* likewise */
	int			stall_timeout_s;	/* waiting messages, no commit: unhealthy */
	char	   *envelope;		/* plain, debezium or cloudevents */
	char	   *event_type;		/* NULL: every message is an OrderReceived */
	char	   *type_header;	/* header holding the type; NULL without one */
	char	   *value_format;	/* json or confluent */
	char	   *schema_registry;	/* URL[,URL]; NULL without one */
	char	   *schema_registry_user_info;	/* USER:PASSWORD; never logged */
	char	   *schema_registry_ca;	/* CA file for https; NULL: the system's */
	char	   *schema_registry_cert;	/* TLS client certificate (PEM); NULL: none */
	char	   *schema_registry_key;	/* its private key (PEM); never read here */
	int			schema_registry_timeout_ms;	/* one request's deadline */
	int			schema_registry_unknown_grace_ms;	/* retry an unknown id */
	int			status_interval_s;	/* report to received_orders.feeders; 0 off */
	config_prop *props;			/* -F file properties first, then -X */
	int			nprops;
	char	   *config_file;
	int			want_help;
	int			want_version;
	int			want_list_props;
	int			adopt_kafka_offsets;	/* the one-shot command, argv only */
	config_source source[OPT_COUNT];
} feeder_config;

typedef enum config_result
{
	CONFIG_OK,					/* run the feeder (or the adoption) */
	CONFIG_EXIT,				/* --help, --version or -X list: exit 0 */
	CONFIG_ERROR				/* message in err: exit 2 */
} config_result;

/* Environment variables used as fallbacks. */
/* Why auto.offset.reset may not point at the end of a partition. */
#define CONFIG_OFFSET_RESET_REFUSED \
	"it would skip the messages already in a partition the group has no offset for, which would then never be materialized; use earliest (the default) or error"

#define CONFIG_ENV_BROKERS	"FEEDER_BROKERS"
#define CONFIG_ENV_TOPIC	"FEEDER_TOPIC"
#define CONFIG_ENV_GROUP	"FEEDER_GROUP"
#define CONFIG_ENV_GROUP_PROTOCOL	"FEEDER_GROUP_PROTOCOL"
#define CONFIG_ENV_DSN		"FEEDER_DSN"
#define CONFIG_ENV_METRICS_LISTEN	"FEEDER_METRICS_LISTEN"
#define CONFIG_ENV_ACCEPT_POSITION_LOSS	"FEEDER_ACCEPT_POSITION_LOSS"
#define CONFIG_ENV_ENVELOPE	"FEEDER_ENVELOPE"
#define CONFIG_ENV_EVENT_TYPE	"FEEDER_EVENT_TYPE"
#define CONFIG_ENV_TYPE_HEADER	"FEEDER_TYPE_HEADER"
#define CONFIG_ENV_VALUE_FORMAT	"FEEDER_VALUE_FORMAT"
#define CONFIG_ENV_SCHEMA_REGISTRY	"FEEDER_SCHEMA_REGISTRY"
#define CONFIG_ENV_SCHEMA_REGISTRY_CREDENTIALS	"FEEDER_SCHEMA_REGISTRY_CREDENTIALS"
#define CONFIG_ENV_SCHEMA_REGISTRY_CA	"FEEDER_SCHEMA_REGISTRY_CA"
#define CONFIG_ENV_SCHEMA_REGISTRY_CERT	"FEEDER_SCHEMA_REGISTRY_CERT"
#define CONFIG_ENV_SCHEMA_REGISTRY_KEY	"FEEDER_SCHEMA_REGISTRY_KEY"
#define CONFIG_ENV_STATUS_INTERVAL	"FEEDER_STATUS_INTERVAL"
/* USER:PASSWORD itself, for those who keep secrets in the environment */
#define CONFIG_ENV_SCHEMA_REGISTRY_USER_INFO	"FEEDER_SCHEMA_REGISTRY_USER_INFO"

/* The one-shot command that adopts Kafka's committed offsets (adopt.c). */
#define CONFIG_ADOPT_COMMAND	"adopt-kafka-offsets"

#define CONFIG_DEFAULT_GROUP		"received-orders-feeder"
/* The longest consumer group the database keeps (RO_MAX_GROUP_BYTES). */
#define CONFIG_MAX_GROUP_BYTES		255
#define CONFIG_DEFAULT_BATCH_SIZE	5000
#define CONFIG_DEFAULT_BATCH_WAIT	0
#define CONFIG_DEFAULT_DB_SESSIONS	8
#define CONFIG_MAX_DB_SESSIONS	64
#define CONFIG_DEFAULT_BATCH_MAX_BYTES	(16 * 1024 * 1024)
#define CONFIG_DEFAULT_STATS		10
#define CONFIG_DEFAULT_BACKOFF		100
#define CONFIG_DEFAULT_BACKOFF_MAX	5000
#define CONFIG_DEFAULT_STATEMENT_TIMEOUT	60000
#define CONFIG_DEFAULT_LOCK_TIMEOUT	10000
#define CONFIG_DEFAULT_STALL_TIMEOUT	120
#define CONFIG_DEFAULT_TYPE_HEADER	"eventType"
#define CONFIG_DEFAULT_SCHEMA_REGISTRY_TIMEOUT	10000
#define CONFIG_DEFAULT_SCHEMA_REGISTRY_UNKNOWN_GRACE	10000
#define CONFIG_DEFAULT_STATUS_INTERVAL	10
#define CONFIG_CLOUDEVENTS_TYPE_HEADER	"ce_type"

/* Row flags. */
#define CONFIG_OPT_COMMAND		0x01	/* --help lists it under "Command" */
#define CONFIG_OPT_REDACT		0x02	/* hide the password of its argv copy */

struct config_optdef;

/*
 * Checks a value and stores it in the row's field; where names the origin
 * for messages ("--batch-size", "FILE:12", "FEEDER_TOPIC").
 */
typedef config_result (*config_setter) (feeder_config *cfg,
										const struct config_optdef *def,
										const char *value, const char *where,
										char *err, size_t errlen);

typedef struct config_optdef
{
	const char *name;			/* long option and -F key; NULL: short only */
	int			val;			/* config_option id; for the commands, the
								 * letter config_parse switches on */
	char		shortopt;		/* its short option (-h), or 0 */
	int			has_arg;		/* getopt's required_argument or no_argument */
	int			flags;			/* CONFIG_OPT_* */
	const char *env;			/* FEEDER_* variable, or NULL */
	config_setter set;			/* NULL for the commands, command line only
								 * (config_parse acts on them) */
	size_t		field;			/* offsetof(feeder_config, ...) */
	int			min;			/* integers: the bounds and the default */
	int			max;
	int			dflt;
	const char *what;			/* integers: the unit in messages; strings:
								 * the message of a refused value */
	const char *const *choices; /* config_set_choice: the values taken */
	const char *min_note;		/* integers: said after the minimum */
	const char *arg;			/* --help: the argument's name */
	const char *help;			/* --help: the text, lines after the first
								 * indented by config_usage */
} config_optdef;

extern const config_optdef config_options[];
extern const size_t config_noptions;

extern const config_optdef *config_optdef_by_name(const char *name);
extern const config_optdef *config_optdef_by_id(config_option id);
extern void config_option_defaults(feeder_config *cfg);
extern config_result config_error(char *err, size_t errlen, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
extern char *config_strdup(const char *s);
extern int	config_split_listen(const char *value, char *host, size_t hostlen,
								char *port, size_t portlen);

#endif							/* FEEDER_CONFIG_OPTIONS_H */
