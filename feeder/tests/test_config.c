/*-------------------------------------------------------------------------
 *
 * test_config.c
 *	  Unit tests of config.c: command line, -F file, environment
 *	  fallbacks, precedence and refused librdkafka properties.
 *
 *-------------------------------------------------------------------------
 */
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"
#include "config_help.h"
#include "config_options.h"
#include "kafka_conf.h"

#define ARGV(...) ((char *[]) {"received-orders-feeder", __VA_ARGS__, NULL})
#define ARGC(...) ((int) (sizeof((char *[]) {"x", __VA_ARGS__}) / sizeof(char *)))
#define PARSE(cfg, err, ...) \
	config_parse((cfg), ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), (err), sizeof(err))

/*
 * clear_env
 *		Every test starts without FEEDER_* variables.
 */
static int
clear_env(void **state)
{
	(void) state;
	unsetenv("FEEDER_BROKERS");
	unsetenv("FEEDER_TOPIC");
	unsetenv("FEEDER_GROUP");
	unsetenv("FEEDER_GROUP_PROTOCOL");
	unsetenv("FEEDER_DSN");
	unsetenv("FEEDER_METRICS_LISTEN");
	unsetenv("FEEDER_ACCEPT_POSITION_LOSS");
	unsetenv("FEEDER_ENVELOPE");
	unsetenv("FEEDER_EVENT_TYPE");
	unsetenv("FEEDER_TYPE_HEADER");
	unsetenv("FEEDER_VALUE_FORMAT");
	unsetenv("FEEDER_SCHEMA_REGISTRY");
	unsetenv("FEEDER_SCHEMA_REGISTRY_CREDENTIALS");
	unsetenv("FEEDER_SCHEMA_REGISTRY_CA");
	unsetenv("FEEDER_SCHEMA_REGISTRY_CERT");
	unsetenv("FEEDER_SCHEMA_REGISTRY_KEY");
	unsetenv("FEEDER_SCHEMA_REGISTRY_USER_INFO");
	unsetenv("FEEDER_STATUS_INTERVAL");
	return 0;
}

/*
 * write_file
 *		A temporary -F file with the given contents; returns its path.
 */
static char *
write_file(const char *contents)
{
	static char path[64];
	int			fd;

	strcpy(path, "/tmp/feeder-test-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, contents, strlen(contents)), (ssize_t) strlen(contents));
	close(fd);
	return path;
}

/*
 * parse_with_env
 *		Set the environment's variables env (NAME, VALUE, ..., NULL; they stay
 *		set) and parse "--brokers b:1 --topic t" into cfg, which must succeed.
 */
static void
parse_with_env(feeder_config *cfg, const char *const *env)
{
	char		err[512];

	for (; env[0] != NULL; env += 2)
		setenv(env[0], env[1], 1);
	assert_int_equal(PARSE(cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
}

/* Fixed flags parse, defaults fill the rest. */
static void
test_flags_and_defaults(void **state)
{
	feeder_config cfg;
	char		err[256];

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "k1:9092,k2:9092", "--topic", "orders",
						   "--dsn", "dbname=x"), CONFIG_OK);
	assert_string_equal(cfg.brokers, "k1:9092,k2:9092");
	assert_int_equal(cfg.ntopics, 1);
	assert_string_equal(cfg.topics[0], "orders");
	assert_string_equal(cfg.group, "received-orders-feeder");
	assert_string_equal(cfg.dsn, "dbname=x");
	assert_int_equal(cfg.batch_size, 5000);
	assert_int_equal(cfg.batch_wait_ms, 0);
	assert_int_equal(cfg.db_sessions, 8);	/* ADR 0003 */
	assert_int_equal(cfg.stats_interval_s, 10);
	assert_int_equal(cfg.nprops, 0);
	config_free(&cfg);
}

/* A --dsn password is copied, then hidden in argv itself (ps). */
static void
test_dsn_hidden_in_argv(void **state)
{
	feeder_config cfg;
	char		err[256];
	char		prog[] = "received-orders-feeder";
	char		o_brokers[] = "--brokers";
	char		brokers[] = "k:9092";
	char		o_topic[] = "--topic";
	char		topic[] = "orders";
	char		o_dsn[] = "--dsn";
	char		dsn[] = "host=db password=hunter2 dbname=x";
	char		dsn_eq[] = "--dsn=postgresql://u:pw@db/x";
	char	   *argv[] = {prog, o_brokers, brokers, o_topic, topic, o_dsn, dsn, NULL};
	char	   *argv_eq[] = {prog, o_brokers, brokers, o_topic, topic, dsn_eq, NULL};

	(void) state;
	assert_int_equal(config_parse(&cfg, 7, argv, err, sizeof(err)), CONFIG_OK);
	assert_string_equal(cfg.dsn, "host=db password=hunter2 dbname=x");
	assert_string_equal(dsn, "host=db password=*** dbname=x");
	assert_string_equal(topic, "orders");
	config_free(&cfg);

	assert_int_equal(config_parse(&cfg, 6, argv_eq, err, sizeof(err)), CONFIG_OK);
	assert_string_equal(cfg.dsn, "postgresql://u:pw@db/x");
	assert_string_equal(dsn_eq, "--dsn=postgresql://u:**@db/x");
	config_free(&cfg);
}

/* --topic repeats and splits on commas; numbers are range-checked. */
static void
test_repeatable_topic_and_numbers(void **state)
{
	feeder_config cfg;
	char		err[256];

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "a", "--topic", "b, c",
						   "--batch-size", "1", "--batch-wait-ms", "0", "--group", "g",
						   "--log-level", "debug"), CONFIG_OK);
	assert_int_equal(cfg.ntopics, 3);
	assert_string_equal(cfg.topics[2], "c");
	assert_int_equal(cfg.batch_size, 1);
	assert_int_equal(cfg.batch_wait_ms, 0);
	assert_string_equal(cfg.group, "g");
	assert_int_equal(cfg.log_level, LOG_DEBUG);
	assert_string_equal(cfg.dsn, "");
	config_free(&cfg);
}

/* Bad arguments give CONFIG_ERROR with a one-line reason. */
static void
test_bad_arguments(void **state)
{
	feeder_config cfg;
	char		err[256];

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--batch-size", "0"),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, "--batch-size"));
	assert_null(strchr(err, '\n'));
	config_free(&cfg);

	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--batch-size", "12x"),
					 CONFIG_ERROR);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--nope"), CONFIG_ERROR);
	assert_non_null(strstr(err, "--nope"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic"), CONFIG_ERROR);
	assert_non_null(strstr(err, "--topic"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--topic", "t"), CONFIG_ERROR);
	assert_non_null(strstr(err, "FEEDER_BROKERS"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1"), CONFIG_ERROR);
	assert_non_null(strstr(err, "topic"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "extra"), CONFIG_ERROR);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-X", "novalue"),
					 CONFIG_ERROR);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--log-level", "loud"),
					 CONFIG_ERROR);
	config_free(&cfg);
	/* sessions: 1 to 64, the error names the option and the range */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--db-sessions", "0"),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, "--db-sessions"));
	assert_non_null(strstr(err, "1 to 64"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--db-sessions", "65"),
					 CONFIG_ERROR);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--db-sessions=64"),
					 CONFIG_OK);
	assert_int_equal(cfg.db_sessions, 64);
	config_free(&cfg);
}

/* --help, --version and -X list end parsing early. */
static void
test_help_version(void **state)
{
	feeder_config cfg;
	char		err[256];

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--help"), CONFIG_EXIT);
	assert_true(cfg.want_help);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "-V"), CONFIG_EXIT);
	assert_true(cfg.want_version);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "-X", "list"), CONFIG_EXIT);
	assert_true(cfg.want_list_props);
	config_free(&cfg);
}

/* Pinned properties are refused with the reason; others pass in order. */
static void
test_property_refusal(void **state)
{
	static const char *const refused[] = {
		"enable.auto.offset.store", "enable.auto.commit", "auto.commit.enable",
		"isolation.level", "group.id", "bootstrap.servers", "metadata.broker.list",
		"offset.store.method"
	};
	feeder_config cfg;
	char		err[256];
	char		arg[128];
	size_t		i;

	(void) state;
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
	{
		assert_non_null(config_refused_reason(refused[i]));
		snprintf(arg, sizeof(arg), "%s=x", refused[i]);
		assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-X", arg),
						 CONFIG_ERROR);
		assert_non_null(strstr(err, refused[i]));
		assert_non_null(strstr(err, "cannot be set"));
		config_free(&cfg);
	}
	assert_null(config_refused_reason("security.protocol"));
	assert_null(config_refused_reason("auto.offset.reset"));

	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "-X", "security.protocol=SASL_SSL", "-X", "sasl.password=a=b"),
					 CONFIG_OK);
	assert_int_equal(cfg.nprops, 2);
	assert_string_equal(cfg.props[1].key, "sasl.password");
	assert_string_equal(cfg.props[1].value, "a=b");
	config_free(&cfg);
}

/*
 * auto.offset.reset to the end is refused wherever it is given (it would
 * silently skip new partitions); the other values pass.
 */
static void
test_offset_reset_latest_refused(void **state)
{
	feeder_config cfg;
	char		err[512];
	const char *const refused[] = {"latest", "largest", "end", "LATEST", "Largest",
	" latest", "\tEnd"};
	const char *const allowed[] = {"earliest", "smallest", "beginning", "error"};
	char		prop[64];
	char	   *path;
	size_t		i;

	(void) state;
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
	{
		snprintf(prop, sizeof(prop), "auto.offset.reset=%s", refused[i]);
		assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-X", prop),
						 CONFIG_ERROR);
		assert_non_null(strstr(err, "auto.offset.reset"));
		assert_non_null(strstr(err, "skip"));
		config_free(&cfg);
	}
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
	{
		snprintf(prop, sizeof(prop), "auto.offset.reset=%s", allowed[i]);
		assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-X", prop),
						 CONFIG_OK);
		config_free(&cfg);
	}
	/* the default topic configuration's name for it */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "-X", "topic.auto.offset.reset=latest"),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, "topic.auto.offset.reset"));
	assert_non_null(strstr(err, "skip"));
	config_free(&cfg);
	path = write_file("auto.offset.reset=latest\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, path));
	config_free(&cfg);
	unlink(path);
}

/*
 * A group id longer than the database keeps (255 bytes) is refused at start,
 * from the command line, a -F file or FEEDER_GROUP (accepted, it would fail
 * every batch for ever); 255 bytes pass.
 */
static void
test_group_too_long(void **state)
{
	feeder_config cfg;
	char		err[512];
	char		group[300];
	char		line[320];
	char	   *path;

	(void) state;
	memset(group, 'g', 256);
	group[256] = '\0';
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--group", group),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, "256 bytes"));
	assert_non_null(strstr(err, "at most 255"));
	config_free(&cfg);

	snprintf(line, sizeof(line), "group=%s\n", group);
	path = write_file(line);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, path));
	config_free(&cfg);
	unlink(path);

	setenv(CONFIG_ENV_GROUP, group, 1);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_ERROR);
	assert_non_null(strstr(err, CONFIG_ENV_GROUP));
	config_free(&cfg);
	unsetenv(CONFIG_ENV_GROUP);

	group[255] = '\0';
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--group", group),
					 CONFIG_OK);
	assert_int_equal(strlen(cfg.group), 255);
	config_free(&cfg);
}

/* A -F file: options, librdkafka properties, comments, blanks. */
static void
test_file(void **state)
{
	feeder_config cfg;
	char		err[256];
	char	   *path = write_file(
								  "# feeder settings\n"
								  "\n"
								  "brokers = kf:9092\n"
								  "topic=t1\n"
								  "topic=t2\n"
								  "dsn=host=db user=u password='p w'\n"
								  "batch-size=42\n"
								  "db-sessions=1\n"
								  "security.protocol=SSL\n"
								  "  client.id = fromfile  \n");

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "-F", path, "-X", "client.id=fromargv"), CONFIG_OK);
	assert_string_equal(cfg.brokers, "kf:9092");
	assert_int_equal(cfg.ntopics, 2);
	assert_string_equal(cfg.dsn, "host=db user=u password='p w'");
	assert_int_equal(cfg.batch_size, 42);
	assert_int_equal(cfg.db_sessions, 1);
	assert_int_equal(cfg.nprops, 3);
	/* file properties first, command line last (it wins in librdkafka) */
	assert_string_equal(cfg.props[0].key, "security.protocol");
	assert_string_equal(cfg.props[1].value, "fromfile");
	assert_string_equal(cfg.props[2].value, "fromargv");
	config_free(&cfg);
	unlink(path);
}

/* The command line wins over the file; a file topic list is replaced. */
static void
test_file_precedence(void **state)
{
	feeder_config cfg;
	char		err[256];
	char	   *path = write_file("brokers=file:1\ntopic=ft\nbatch-size=7\ngroup=fg\n");

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--topic", "at", "-F", path, "--batch-size", "9"),
					 CONFIG_OK);
	assert_string_equal(cfg.brokers, "file:1");
	assert_int_equal(cfg.ntopics, 1);
	assert_string_equal(cfg.topics[0], "at");
	assert_int_equal(cfg.batch_size, 9);
	assert_string_equal(cfg.group, "fg");
	config_free(&cfg);
	unlink(path);
}

/* File errors name the file and line; refused properties too. */
static void
test_file_errors(void **state)
{
	feeder_config cfg;
	char		err[256];
	char	   *path;

	(void) state;
	path = write_file("brokers=b:1\njust a line\n");
	assert_int_equal(PARSE(&cfg, err, "--topic", "t", "-F", path), CONFIG_ERROR);
	assert_non_null(strstr(err, ":2:"));
	config_free(&cfg);
	unlink(path);

	path = write_file("enable.auto.commit=false\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, "enable.auto.commit"));
	config_free(&cfg);
	unlink(path);

	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F",
						   "/nonexistent/feeder.conf"), CONFIG_ERROR);
	assert_non_null(strstr(err, "/nonexistent/feeder.conf"));
	config_free(&cfg);
}

/* FEEDER_* variables are fallbacks: used when nothing else gave a value. */
static void
test_env_fallbacks(void **state)
{
	feeder_config cfg;
	char		err[256];
	char	   *path;

	(void) state;
	setenv("FEEDER_BROKERS", "env:1", 1);
	setenv("FEEDER_TOPIC", "e1,e2", 1);
	setenv("FEEDER_GROUP", "eg", 1);
	setenv("FEEDER_DSN", "service=feeder", 1);
	assert_int_equal(PARSE(&cfg, err, "--log-level", "info"), CONFIG_OK);
	assert_string_equal(cfg.brokers, "env:1");
	assert_int_equal(cfg.ntopics, 2);
	assert_string_equal(cfg.topics[1], "e2");
	assert_string_equal(cfg.group, "eg");
	assert_string_equal(cfg.dsn, "service=feeder");
	config_free(&cfg);

	/* flags and file beat the environment */
	path = write_file("group=fg\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "arg:1", "--topic", "at", "-F", path),
					 CONFIG_OK);
	assert_string_equal(cfg.brokers, "arg:1");
	assert_int_equal(cfg.ntopics, 1);
	assert_string_equal(cfg.topics[0], "at");
	assert_string_equal(cfg.group, "fg");
	assert_string_equal(cfg.dsn, "service=feeder");
	config_free(&cfg);
	unlink(path);

	setenv("FEEDER_TOPIC", "a,,b", 1);
	assert_int_equal(PARSE(&cfg, err, "--log-level", "info"), CONFIG_ERROR);
	assert_non_null(strstr(err, "FEEDER_TOPIC"));
	config_free(&cfg);
}

/* --metrics-listen: flag, file key, environment; address forms. */
static void
test_metrics_listen(void **state)
{
	feeder_config cfg;
	char		err[256];
	char		host[64];
	char		port[8];
	char	   *path;

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "k:1", "--topic", "t"), CONFIG_OK);
	assert_null(cfg.metrics_listen);
	config_free(&cfg);

	assert_int_equal(PARSE(&cfg, err, "--brokers", "k:1", "--topic", "t",
						   "--metrics-listen", "127.0.0.1:0"), CONFIG_OK);
	assert_string_equal(cfg.metrics_listen, "127.0.0.1:0");
	config_free(&cfg);

	assert_int_equal(PARSE(&cfg, err, "--brokers", "k:1", "--topic", "t",
						   "--metrics-listen", "127.0.0.1"), CONFIG_ERROR);
	assert_non_null(strstr(err, "--metrics-listen"));
	config_free(&cfg);

	setenv("FEEDER_METRICS_LISTEN", "localhost:9187", 1);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "k:1", "--topic", "t"), CONFIG_OK);
	assert_string_equal(cfg.metrics_listen, "localhost:9187");
	config_free(&cfg);

	/* the file beats the environment, the flag beats the file */
	path = write_file("metrics-listen = [::1]:9188\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "k:1", "--topic", "t", "-F", path),
					 CONFIG_OK);
	assert_string_equal(cfg.metrics_listen, "[::1]:9188");
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "k:1", "--topic", "t", "-F", path,
						   "--metrics-listen", "0.0.0.0:9189"), CONFIG_OK);
	assert_string_equal(cfg.metrics_listen, "0.0.0.0:9189");
	config_free(&cfg);
	unlink(path);

	setenv("FEEDER_METRICS_LISTEN", "nope", 1);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "k:1", "--topic", "t"), CONFIG_ERROR);
	assert_non_null(strstr(err, "FEEDER_METRICS_LISTEN"));
	config_free(&cfg);

	assert_int_equal(config_split_listen("127.0.0.1:9187", host, sizeof(host), port, sizeof(port)), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_string_equal(port, "9187");
	assert_int_equal(config_split_listen("[::1]:0", host, sizeof(host), port, sizeof(port)), 0);
	assert_string_equal(host, "::1");
	assert_string_equal(port, "0");
	assert_int_equal(config_split_listen("localhost:00080", host, sizeof(host), port, sizeof(port)), 0);
	assert_string_equal(host, "localhost");
	assert_string_equal(port, "80");
	assert_int_equal(config_split_listen("::1:9187", host, sizeof(host), port, sizeof(port)), -1);
	assert_int_equal(config_split_listen("[localhost]:1", host, sizeof(host), port, sizeof(port)), -1);
	assert_int_equal(config_split_listen("[::1]9187", host, sizeof(host), port, sizeof(port)), -1);
	assert_int_equal(config_split_listen(":9187", host, sizeof(host), port, sizeof(port)), -1);
	assert_int_equal(config_split_listen("h:65536", host, sizeof(host), port, sizeof(port)), -1);
	assert_int_equal(config_split_listen("h:-1", host, sizeof(host), port, sizeof(port)), -1);
	assert_int_equal(config_split_listen("h: 1", host, sizeof(host), port, sizeof(port)), -1);
	assert_int_equal(config_split_listen("h:1x", host, sizeof(host), port, sizeof(port)), -1);
}

/*
 * The batch timeouts: defaults, 0 for the server's,
 * bounds.
 */
static void
test_batch_timeouts(void **state)
{
	feeder_config cfg;
	char		err[256];

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_int_equal(cfg.statement_timeout_ms, 60000);
	assert_int_equal(cfg.lock_timeout_ms, 10000);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--statement-timeout-ms", "0", "--lock-timeout-ms", "250"),
					 CONFIG_OK);
	assert_int_equal(cfg.statement_timeout_ms, 0);
	assert_int_equal(cfg.lock_timeout_ms, 250);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--lock-timeout-ms", "-1"), CONFIG_ERROR);
	assert_non_null(strstr(err, "--lock-timeout-ms"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--statement-timeout-ms", "86400001"), CONFIG_ERROR);
	config_free(&cfg);
}

/*
 * --accept-position-loss: off by default; a flag on the command line, true
 * or false in a file and the environment; anything else is refused.
 */
static void
test_accept_position_loss(void **state)
{
	feeder_config cfg;
	char		err[256];
	char	   *path;

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_int_equal(cfg.accept_position_loss, 0);
	config_free(&cfg);

	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--accept-position-loss"), CONFIG_OK);
	assert_int_equal(cfg.accept_position_loss, 1);
	config_free(&cfg);

	setenv("FEEDER_ACCEPT_POSITION_LOSS", "true", 1);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_int_equal(cfg.accept_position_loss, 1);
	config_free(&cfg);

	/* the file wins over the environment */
	path = write_file("accept-position-loss=false\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path),
					 CONFIG_OK);
	assert_int_equal(cfg.accept_position_loss, 0);
	config_free(&cfg);
	unlink(path);

	setenv("FEEDER_ACCEPT_POSITION_LOSS", "maybe", 1);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_ERROR);
	assert_non_null(strstr(err, "FEEDER_ACCEPT_POSITION_LOSS"));
	assert_non_null(strstr(err, "expected true or false"));
	config_free(&cfg);

	unsetenv("FEEDER_ACCEPT_POSITION_LOSS");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--accept-position-loss=yes"), CONFIG_ERROR);
	config_free(&cfg);
}

/*
 * --adopt-kafka-offsets: a one-shot command on the command line only; off
 * by default, refused in a -F file (it would stay on for every start), not
 * read from the environment, and it still needs brokers and a topic.
 */
static void
test_adopt_kafka_offsets(void **state)
{
	feeder_config cfg;
	char		err[256];
	char	   *path;

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_int_equal(cfg.adopt_kafka_offsets, 0);
	config_free(&cfg);

	assert_int_equal(PARSE(&cfg, err, "--adopt-kafka-offsets", "--brokers", "b:1",
						   "--topic", "t", "--topic", "u", "--group", "g"), CONFIG_OK);
	assert_int_equal(cfg.adopt_kafka_offsets, 1);
	assert_int_equal(cfg.ntopics, 2);
	assert_string_equal(cfg.group, "g");
	config_free(&cfg);

	path = write_file("adopt-kafka-offsets=true\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, "adopt-kafka-offsets"));
	assert_non_null(strstr(err, "command line only"));
	config_free(&cfg);
	unlink(path);

	setenv("FEEDER_ADOPT_KAFKA_OFFSETS", "true", 1);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_int_equal(cfg.adopt_kafka_offsets, 0);
	config_free(&cfg);
	unsetenv("FEEDER_ADOPT_KAFKA_OFFSETS");

	assert_int_equal(PARSE(&cfg, err, "--adopt-kafka-offsets", "--brokers", "b:1"),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, "no topic"));
	config_free(&cfg);

	assert_int_equal(PARSE(&cfg, err, "--adopt-kafka-offsets=yes", "--brokers", "b:1",
						   "--topic", "t"), CONFIG_ERROR);
	config_free(&cfg);
}

/*
 * Outbox topics: --envelope, --event-type and --type-header, from every
 * source, and the combinations refused with exit 2.
 */
static void
test_outbox_options(void **state)
{
	feeder_config cfg;
	char		err[512];
	char	   *path;

	(void) state;
	/* defaults: plain, no selection, no header */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_string_equal(cfg.envelope, "plain");
	assert_null(cfg.event_type);
	assert_null(cfg.type_header);
	config_free(&cfg);

	/* an event type reads header eventType by default */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--envelope",
						   "debezium", "--event-type", "OrderReceived"), CONFIG_OK);
	assert_string_equal(cfg.envelope, "debezium");
	assert_string_equal(cfg.event_type, "OrderReceived");
	assert_string_equal(cfg.type_header, "eventType");
	config_free(&cfg);

	/* Spring's header */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--event-type",
						   "com.example.OrderReceived", "--type-header", "__TypeId__"), CONFIG_OK);
	assert_string_equal(cfg.envelope, "plain");
	assert_string_equal(cfg.type_header, "__TypeId__");
	config_free(&cfg);

	/* CloudEvents: ce_type */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--envelope",
						   "cloudevents", "--event-type", "com.example.OrderReceived"), CONFIG_OK);
	assert_string_equal(cfg.type_header, "ce_type");
	config_free(&cfg);

	/* refused */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--envelope", "avro"),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, "expected plain, debezium or cloudevents"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--event-type", ""),
					 CONFIG_ERROR);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--type-header", "x"),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, "--type-header needs --event-type"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--envelope",
						   "cloudevents", "--event-type", "T", "--type-header", "x"),
					 CONFIG_ERROR);
	assert_non_null(strstr(err, "CloudEvents' type attribute"));
	config_free(&cfg);

	/* environment and -F file, the command line winning */
	setenv("FEEDER_ENVELOPE", "debezium", 1);
	setenv("FEEDER_EVENT_TYPE", "FromEnv", 1);
	path = write_file("event-type = FromFile\ntype-header = X-Type\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path), CONFIG_OK);
	assert_string_equal(cfg.envelope, "debezium");
	assert_string_equal(cfg.event_type, "FromFile");
	assert_string_equal(cfg.type_header, "X-Type");
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path,
						   "--envelope", "plain"), CONFIG_OK);
	assert_string_equal(cfg.envelope, "plain");
	config_free(&cfg);
	unlink(path);
	setenv("FEEDER_ENVELOPE", "nope", 1);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_ERROR);
	assert_non_null(strstr(err, "FEEDER_ENVELOPE"));
	config_free(&cfg);
}

/*
 * Schema Registry topics: --value-format, --schema-registry and its
 * credentials (a file, or the environment), from every source, and the
 * combinations refused with exit 2.
 */
static void
test_schema_registry_options(void **state)
{
	feeder_config cfg;
	char		err[512];
	char	   *path;

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_string_equal(cfg.value_format, "json");
	assert_null(cfg.schema_registry);
	assert_null(cfg.schema_registry_user_info);
	config_free(&cfg);

	path = write_file("alice:s3cret\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "http://r1:8081,http://r2:8081",
						   "--schema-registry-credentials", path), CONFIG_OK);
	assert_string_equal(cfg.value_format, "confluent");
	assert_string_equal(cfg.schema_registry, "http://r1:8081,http://r2:8081");
	assert_string_equal(cfg.schema_registry_user_info, "alice:s3cret");
	assert_int_equal(cfg.schema_registry_timeout_ms, 10000);
	config_free(&cfg);
	unlink(path);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "http://r:8081",
						   "--schema-registry-timeout-ms", "500"), CONFIG_OK);
	assert_int_equal(cfg.schema_registry_timeout_ms, 500);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "http://r:8081",
						   "--schema-registry-timeout-ms", "5"), CONFIG_ERROR);
	assert_non_null(strstr(err, "expected milliseconds from 100 to 600000"));
	config_free(&cfg);

	parse_with_env(&cfg, (const char *const[]) {
		"FEEDER_VALUE_FORMAT", "confluent",
		"FEEDER_SCHEMA_REGISTRY", "https://registry:8081",
		"FEEDER_SCHEMA_REGISTRY_USER_INFO", "bob:pw", NULL
	});
	assert_string_equal(cfg.schema_registry, "https://registry:8081");
	assert_string_equal(cfg.schema_registry_user_info, "bob:pw");
	config_free(&cfg);
	clear_env(NULL);

	/* refused */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "avro"), CONFIG_ERROR);
	assert_non_null(strstr(err, "expected json or confluent"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent"), CONFIG_ERROR);
	assert_non_null(strstr(err, "needs --schema-registry"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--schema-registry",
						   "http://r:8081"), CONFIG_ERROR);
	assert_non_null(strstr(err, "only with --value-format confluent"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "registry:8081"), CONFIG_ERROR);
	assert_non_null(strstr(err, "expected http:// or https://"));
	config_free(&cfg);
	path = write_file("no colon here\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "http://r:8081",
						   "--schema-registry-credentials", path), CONFIG_ERROR);
	assert_non_null(strstr(err, "USER:PASSWORD"));
	assert_null(strstr(err, "no colon here"));	/* a secret is never echoed */
	config_free(&cfg);
	unlink(path);
}

/*
 * test_schema_registry_client_cert
 *		--schema-registry-cert and --schema-registry-key: from the command
 *		line, a -F file and FEEDER_* variables (the flag wins); one without
 *		the other, or without a registry, is refused naming what to add.
 */
static void
test_schema_registry_client_cert(void **state)
{
	feeder_config cfg;
	char		err[512];
	char		line[512];
	char	   *path;
	char	   *crt = strdup(write_file("certificate\n"));
	char	   *key = strdup(write_file("key\n"));
	char	   *crt2 = strdup(write_file("another certificate\n"));

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "https://r:8081"), CONFIG_OK);
	assert_null(cfg.schema_registry_cert);
	assert_null(cfg.schema_registry_key);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "https://r:8081",
						   "--schema-registry-cert", crt,
						   "--schema-registry-key", key), CONFIG_OK);
	assert_string_equal(cfg.schema_registry_cert, crt);
	assert_string_equal(cfg.schema_registry_key, key);
	config_free(&cfg);

	snprintf(line, sizeof(line), "value-format=confluent\nschema-registry=https://r:8081\n"
			 "schema-registry-cert=%s\nschema-registry-key=%s\n", crt, key);
	path = write_file(line);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path), CONFIG_OK);
	assert_string_equal(cfg.schema_registry_cert, crt);
	assert_string_equal(cfg.schema_registry_key, key);
	config_free(&cfg);
	unlink(path);

	parse_with_env(&cfg, (const char *const[]) {
		"FEEDER_VALUE_FORMAT", "confluent",
		"FEEDER_SCHEMA_REGISTRY", "https://r:8081",
		"FEEDER_SCHEMA_REGISTRY_CERT", crt,
		"FEEDER_SCHEMA_REGISTRY_KEY", key, NULL
	});
	assert_string_equal(cfg.schema_registry_cert, crt);
	assert_string_equal(cfg.schema_registry_key, key);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--schema-registry-cert", crt2), CONFIG_OK);
	assert_string_equal(cfg.schema_registry_cert, crt2);
	assert_string_equal(cfg.schema_registry_key, key);
	config_free(&cfg);
	clear_env(NULL);

	/* refused */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "https://r:8081",
						   "--schema-registry-cert", "/f/c.crt"), CONFIG_ERROR);
	assert_non_null(strstr(err, "--schema-registry-cert needs --schema-registry-key"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "https://r:8081",
						   "--schema-registry-key", "/f/c.key"), CONFIG_ERROR);
	assert_non_null(strstr(err, "--schema-registry-key needs --schema-registry-cert"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--schema-registry-cert", "/f/c.crt",
						   "--schema-registry-key", "/f/c.key"), CONFIG_ERROR);
	assert_non_null(strstr(err, "only with --value-format confluent --schema-registry"));
	config_free(&cfg);
	unlink(crt);
	unlink(key);
	unlink(crt2);
	free(crt);
	free(key);
	free(crt2);
}

/*
 * test_schema_registry_files_unreadable
 *		A --schema-registry-ca, -cert or -key file that cannot be read is
 *		refused at start (exit 2), naming the option as it was given (flag,
 *		-F key, FEEDER_* variable) and the path; not at the first message.
 */
static void
test_schema_registry_files_unreadable(void **state)
{
	feeder_config cfg;
	char		err[512];
	char		line[512];
	char	   *path;
	char	   *crt = strdup(write_file("certificate\n"));
	char	   *key = strdup(write_file("key\n"));

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "https://r:8081",
						   "--schema-registry-ca", "/nonexistent/ca.crt"), CONFIG_ERROR);
	assert_non_null(strstr(err, "--schema-registry-ca: cannot read \"/nonexistent/ca.crt\": No such file or directory"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "https://r:8081",
						   "--schema-registry-cert", "/nonexistent/c.crt",
						   "--schema-registry-key", key), CONFIG_ERROR);
	assert_non_null(strstr(err, "--schema-registry-cert: cannot read \"/nonexistent/c.crt\""));
	config_free(&cfg);
	/* a directory opens, but is no file to read */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "--value-format",
						   "confluent", "--schema-registry", "https://r:8081",
						   "--schema-registry-cert", crt,
						   "--schema-registry-key", "/tmp"), CONFIG_ERROR);
	assert_non_null(strstr(err, "--schema-registry-key: cannot read \"/tmp\": Is a directory"));
	config_free(&cfg);

	snprintf(line, sizeof(line), "value-format=confluent\nschema-registry=https://r:8081\n"
			 "schema-registry-cert=%s\nschema-registry-key=/nonexistent/c.key\n", crt);
	path = write_file(line);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path),
					 CONFIG_ERROR);
	snprintf(line, sizeof(line), "--schema-registry-key (in -F %s): cannot read \"/nonexistent/c.key\"", path);
	assert_non_null(strstr(err, line));
	config_free(&cfg);
	unlink(path);

	setenv("FEEDER_VALUE_FORMAT", "confluent", 1);
	setenv("FEEDER_SCHEMA_REGISTRY", "https://r:8081", 1);
	setenv("FEEDER_SCHEMA_REGISTRY_CA", "/nonexistent/env-ca.crt", 1);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_ERROR);
	assert_non_null(strstr(err, "FEEDER_SCHEMA_REGISTRY_CA: cannot read \"/nonexistent/env-ca.crt\""));
	config_free(&cfg);
	/* the flag wins over the variable: only its file is checked */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--schema-registry-ca", crt), CONFIG_OK);
	assert_string_equal(cfg.schema_registry_ca, crt);
	config_free(&cfg);
	clear_env(NULL);
	unlink(crt);
	unlink(key);
	free(crt);
	free(key);
}

/*
 * test_status_interval
 *		--status-interval: 10 by default; flag, -F key and FEEDER_STATUS_INTERVAL
 *		(the flag wins); 0 turns the report off; beyond 3600 is refused.
 */
static void
test_status_interval(void **state)
{
	feeder_config cfg;
	char		err[512];
	char	   *path;

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_int_equal(cfg.status_interval_s, 10);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--status-interval", "0"), CONFIG_OK);
	assert_int_equal(cfg.status_interval_s, 0);
	config_free(&cfg);
	path = write_file("status-interval=3\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path), CONFIG_OK);
	assert_int_equal(cfg.status_interval_s, 3);
	config_free(&cfg);
	unlink(path);
	setenv("FEEDER_STATUS_INTERVAL", "5", 1);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_int_equal(cfg.status_interval_s, 5);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--status-interval", "1"), CONFIG_OK);
	assert_int_equal(cfg.status_interval_s, 1);
	config_free(&cfg);
	clear_env(NULL);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--status-interval", "3601"), CONFIG_ERROR);
	assert_non_null(strstr(err, "expected seconds from 0 (off) to 3600"));
	config_free(&cfg);
}

/*
 * --schema-registry-unknown-grace-ms: 10000 by default, 0 allowed (no
 * grace), negative or past 600000 refused.
 */
static void
test_schema_registry_unknown_grace(void **state)
{
	feeder_config cfg;
	char		err[512];

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_int_equal(cfg.schema_registry_unknown_grace_ms, 10000);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--schema-registry-unknown-grace-ms", "0"), CONFIG_OK);
	assert_int_equal(cfg.schema_registry_unknown_grace_ms, 0);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--schema-registry-unknown-grace-ms", "-1"), CONFIG_ERROR);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--schema-registry-unknown-grace-ms", "600001"), CONFIG_ERROR);
	config_free(&cfg);
}

/*
 * test_option_table
 *		The table of options is complete and is what every source reads:
 *		each config_option id has one row; --help shows each long option
 *		and each FEEDER_* variable; getopt knows each setting's long name;
 *		a -F file takes it as the setting, never as a librdkafka property.
 */
static void
test_option_table(void **state)
{
	feeder_config cfg;
	char		err[512];
	char	   *help = NULL;
	size_t		helplen = 0;
	FILE	   *out;
	size_t		i;
	int			id;

	(void) state;
	for (id = OPT_NONE + 1; id < OPT_COUNT; id++)
	{
		int			rows = 0;

		for (i = 0; i < config_noptions; i++)
			if (config_options[i].set != NULL && config_options[i].val == id)
				rows++;
		assert_int_equal(rows, 1);
	}

	out = open_memstream(&help, &helplen);
	assert_non_null(out);
	config_usage(out);
	fclose(out);
	for (i = 0; i < config_noptions; i++)
	{
		const config_optdef *def = &config_options[i];
		char		needle[128];

		if (def->name)
		{
			snprintf(needle, sizeof(needle), "--%s", def->name);
			assert_non_null(strstr(help, needle));
		}
		if (def->env)
		{
			snprintf(needle, sizeof(needle), "$%s", def->env);
			assert_non_null(strstr(help, needle));
		}
	}
	free(help);

	for (i = 0; i < config_noptions; i++)
	{
		const config_optdef *def = &config_options[i];
		char		opt[128];
		char		line[160];
		char	   *path;
		char	   *argv[] = {"received-orders-feeder", opt, "x", NULL};

		if (def->set == NULL)
			continue;
		snprintf(opt, sizeof(opt), "--%s", def->name);
		err[0] = '\0';
		config_parse(&cfg, def->has_arg == no_argument ? 2 : 3, argv, err, sizeof(err));
		assert_null(strstr(err, "unknown option"));
		config_free(&cfg);

		snprintf(line, sizeof(line), "%s=x\n", def->name);
		path = write_file(line);
		PARSE(&cfg, err, "-F", path);
		assert_int_equal(cfg.nprops, 0);
		config_free(&cfg);
		unlink(path);
	}
}

/*
 * conf_value
 *		A property of a built librdkafka configuration ("" when unset).
 */
static const char *
conf_value(rd_kafka_conf_t *conf, const char *name)
{
	static char buf[256];
	size_t		size = sizeof(buf);

	if (rd_kafka_conf_get(conf, name, buf, &size) != RD_KAFKA_CONF_OK)
		buf[0] = '\0';
	return buf;
}

/*
 * --group-protocol: classic by default and set explicitly in librdkafka's
 * configuration; consumer from the flag, the environment, -X
 * group.protocol or the file's key, with the option's precedence (on the
 * command line the last of the flag and -X wins); anything else is a usage
 * error naming where it came from; with consumer, the classic protocol's
 * properties are refused before librdkafka sees them.
 */
static void
test_group_protocol(void **state)
{
	feeder_config cfg;
	rd_kafka_conf_t *conf;
	char		err[512];
	char	   *path;

	(void) state;
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_string_equal(cfg.group_protocol, "classic");
	conf = kafka_build_conf(&cfg, err, sizeof(err));
	assert_non_null(conf);
	assert_string_equal(conf_value(conf, "group.protocol"), "classic");
	rd_kafka_conf_destroy(conf);
	config_free(&cfg);

	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--group-protocol", "consumer"), CONFIG_OK);
	assert_string_equal(cfg.group_protocol, "consumer");
	assert_int_equal(cfg.nprops, 0);
	conf = kafka_build_conf(&cfg, err, sizeof(err));
	assert_non_null(conf);
	assert_string_equal(conf_value(conf, "group.protocol"), "consumer");
	rd_kafka_conf_destroy(conf);
	config_free(&cfg);

	/* -X group.protocol is the same setting, not a passed-through property */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "-X", "group.protocol=consumer"), CONFIG_OK);
	assert_string_equal(cfg.group_protocol, "consumer");
	assert_int_equal(cfg.nprops, 0);
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "-X", "group.protocol=consumer",
						   "--group-protocol", "classic"), CONFIG_OK);
	assert_string_equal(cfg.group_protocol, "classic");
	config_free(&cfg);

	/* the environment, below the file, below the command line */
	setenv("FEEDER_GROUP_PROTOCOL", "consumer", 1);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t"), CONFIG_OK);
	assert_string_equal(cfg.group_protocol, "consumer");
	config_free(&cfg);
	path = write_file("group.protocol=classic\n");
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path),
					 CONFIG_OK);
	assert_string_equal(cfg.group_protocol, "classic");
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t", "-F", path,
						   "-X", "group.protocol=consumer"), CONFIG_OK);
	assert_string_equal(cfg.group_protocol, "consumer");
	config_free(&cfg);
	unlink(path);
	unsetenv("FEEDER_GROUP_PROTOCOL");

	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--group-protocol", "Consumer"), CONFIG_ERROR);
	assert_string_equal(err, "--group-protocol: expected classic or consumer, got \"Consumer\"");
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "-X", "group.protocol=cooperative"), CONFIG_ERROR);
	assert_string_equal(err, "-X group.protocol: expected classic or consumer, got \"cooperative\"");
	config_free(&cfg);

	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--group-protocol", "consumer",
						   "-X", "session.timeout.ms=6000"), CONFIG_OK);
	assert_null(kafka_build_conf(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "-X session.timeout.ms: not supported with --group-protocol consumer"));
	config_free(&cfg);
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "--group-protocol", "consumer",
						   "-X", "partition.assignment.strategy=range"), CONFIG_OK);
	assert_null(kafka_build_conf(&cfg, err, sizeof(err)));
	assert_non_null(strstr(err, "-X partition.assignment.strategy: not supported"));
	config_free(&cfg);
	/* the classic protocol keeps them */
	assert_int_equal(PARSE(&cfg, err, "--brokers", "b:1", "--topic", "t",
						   "-X", "session.timeout.ms=6000",
						   "-X", "heartbeat.interval.ms=500"), CONFIG_OK);
	conf = kafka_build_conf(&cfg, err, sizeof(err));
	assert_non_null(conf);
	assert_string_equal(conf_value(conf, "session.timeout.ms"), "6000");
	rd_kafka_conf_destroy(conf);
	config_free(&cfg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_flags_and_defaults, clear_env),
		cmocka_unit_test_setup(test_schema_registry_options, clear_env),
		cmocka_unit_test_setup(test_schema_registry_client_cert, clear_env),
		cmocka_unit_test_setup(test_schema_registry_files_unreadable, clear_env),
		cmocka_unit_test_setup(test_outbox_options, clear_env),
		cmocka_unit_test_setup(test_dsn_hidden_in_argv, clear_env),
		cmocka_unit_test_setup(test_repeatable_topic_and_numbers, clear_env),
		cmocka_unit_test_setup(test_bad_arguments, clear_env),
		cmocka_unit_test_setup(test_help_version, clear_env),
		cmocka_unit_test_setup(test_property_refusal, clear_env),
		cmocka_unit_test_setup(test_offset_reset_latest_refused, clear_env),
		cmocka_unit_test_setup(test_group_too_long, clear_env),
		cmocka_unit_test_setup(test_file, clear_env),
		cmocka_unit_test_setup(test_file_precedence, clear_env),
		cmocka_unit_test_setup(test_file_errors, clear_env),
		cmocka_unit_test_setup(test_env_fallbacks, clear_env),
		cmocka_unit_test_setup(test_metrics_listen, clear_env),
		cmocka_unit_test_setup(test_accept_position_loss, clear_env),
		cmocka_unit_test_setup(test_adopt_kafka_offsets, clear_env),
		cmocka_unit_test_setup(test_batch_timeouts, clear_env),
		cmocka_unit_test_setup(test_status_interval, clear_env),
		cmocka_unit_test_setup(test_schema_registry_unknown_grace, clear_env),
		cmocka_unit_test_setup(test_option_table, clear_env),
		cmocka_unit_test_setup(test_group_protocol, clear_env),
	};

	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
