/*-------------------------------------------------------------------------
 *
 * main.c
 *	  received-orders-feeder: startup, signals and shutdown.
 *
 * With --adopt-kafka-offsets the program runs that one-shot command
 * (adopt.c) after the configuration instead, and exits.
 *
 * Startup order: configuration (exit 2 on anything wrong with it; the
 * password of a --dsn argument is then hidden from ps), a first database
 * connection with its privilege check (exit 3 at once on a configuration
 * or permission error, even before any message arrives; a database that
 * is merely down is retried by the loop), then the Kafka consumer (exit 4
 * if librdkafka refuses it).  With --metrics-listen the HTTP endpoint
 * starts first (exit 1 if its address cannot be resolved or bound), so
 * that /healthz answers "starting" meanwhile.  Shutdown: the loop
 * finishes or abandons the batch in flight, then the stored offsets are
 * committed synchronously and the consumer leaves the group.
 *
 *-------------------------------------------------------------------------
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>
#include <libpq-fe.h>
#include <librdkafka/rdkafka.h>

#include "app.h"
#include "config_help.h"
#include "feeder.h"
#include "kafka_version.h"
#include "log.h"
#include "metrics.h"
#include "status.h"

/* The Schema Registry: schemas kept by id (or GUID). */
#define FEEDER_REGISTRY_MAX_SCHEMAS 1000

volatile sig_atomic_t feeder_stop = 0;

/*
 * The signals whose default action would end the process without the
 * orderly shutdown (committed offsets, a clean group leave): each stops the
 * feeder as SIGTERM does.  SIGQUIT keeps its default (a core dump for a
 * developer); SIGKILL and SIGSTOP cannot be caught.
 */
static const int feeder_stop_signals[] = {
	SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF
};

/*
 * feeder_signal_handler
 *		A stop signal: the first asks the loop to stop (and names itself in
 *		feeder_stop); the second exits at once (only async-signal-safe calls
 *		here).
 */
static void
feeder_signal_handler(int signo)
{
	if (feeder_stop)
		_exit(FEEDER_EXIT_RUNTIME);
	feeder_stop = signo;
}

/*
 * feeder_install_signals
 *		Handlers for the stop signals; SIGPIPE ignored (a dead database
 *		socket is an error result, not a reason to die).
 */
static void
feeder_install_signals(void)
{
	struct sigaction sa;
	size_t		i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = feeder_signal_handler;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(feeder_stop_signals) / sizeof(feeder_stop_signals[0]); i++)
		sigaction(feeder_stop_signals[i], &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/*
 * feeder_signal_name
 *		"SIGHUP" and the like, for the stopping line.
 */
static const char *
feeder_signal_name(int signo)
{
	switch (signo)
	{
		case SIGTERM:
			return "SIGTERM";
		case SIGINT:
			return "SIGINT";
		case SIGHUP:
			return "SIGHUP";
		case SIGUSR1:
			return "SIGUSR1";
		case SIGUSR2:
			return "SIGUSR2";
		case SIGALRM:
			return "SIGALRM";
		case SIGVTALRM:
			return "SIGVTALRM";
		case SIGPROF:
			return "SIGPROF";
	}
	return "none";
}

/*
 * feeder_usage_error
 *		One line on stderr and exit 2.
 */
static void
feeder_usage_error(const char *msg)
{
	fprintf(stderr, "%s: %s (try --help)\n", FEEDER_NAME, msg);
	exit(FEEDER_EXIT_USAGE);
}

/*
 * feeder_check_dsn
 *		Reject a connection string libpq cannot parse, as a usage error.
 *		libpq's message may quote part of the string, so it is shown only
 *		when the string holds no password.
 */
static void
feeder_check_dsn(const char *dsn)
{
	char	   *errmsg = NULL;
	PQconninfoOption *opts;
	char		msg[1024];

	if (dsn[0] == '\0')
		return;
	opts = PQconninfoParse(dsn, &errmsg);
	if (opts)
	{
		PQconninfoFree(opts);
		return;
	}
	if (errmsg && strstr(dsn, "password") == NULL && strchr(dsn, '@') == NULL)
	{
		size_t		n;

		snprintf(msg, sizeof(msg), "--dsn: %s", errmsg);
		n = strlen(msg);
		while (n > 0 && msg[n - 1] == '\n')
			msg[--n] = '\0';
	}
	else
		snprintf(msg, sizeof(msg), "--dsn: libpq cannot parse this connection string");
	PQfreemem(errmsg);
	feeder_usage_error(msg);
}

/*
 * feeder_log_start
 *		The "starting" line: effective settings, DSN redacted, librdkafka
 *		property names without their values (they may hold secrets).
 */
static void
feeder_log_start(const feeder_config *cfg)
{
	log_line	line;
	char		topics[1024] = "";
	char		props[2048] = "";
	char	   *dsn = log_redact_conninfo(cfg->dsn);
	size_t		off = 0;
	int			i;

	for (i = 0; i < cfg->ntopics && off < sizeof(topics); i++)
		off += (size_t) snprintf(topics + off, sizeof(topics) - off, "%s%s",
								 i ? "," : "", cfg->topics[i]);
	off = 0;
	for (i = 0; i < cfg->nprops && off < sizeof(props); i++)
		off += (size_t) snprintf(props + off, sizeof(props) - off, "%s%s",
								 i ? "," : "", cfg->props[i].key);

	log_begin(&line, LOG_INFO, "starting");
	log_kv_str(&line, "version", FEEDER_VERSION);
	if (cfg->adopt_kafka_offsets)
		log_kv_str(&line, "command", CONFIG_ADOPT_COMMAND);
	log_kv_str(&line, "librdkafka", rd_kafka_version_str());
	log_kv_str(&line, "brokers", cfg->brokers);
	log_kv_str(&line, "topics", topics);
	log_kv_str(&line, "group", cfg->group);
	log_kv_str(&line, "group_protocol", cfg->group_protocol);
	log_kv_str(&line, "dsn", dsn);
	log_kv_int(&line, "batch_size", cfg->batch_size);
	log_kv_int(&line, "batch_wait_ms", cfg->batch_wait_ms);
	log_kv_int(&line, "db_sessions", cfg->db_sessions);
	log_kv_str(&line, "envelope", cfg->envelope);
	if (cfg->event_type)
	{
		log_kv_str(&line, "event_type", cfg->event_type);
		log_kv_str(&line, "type_header", cfg->type_header);
	}
	log_kv_str(&line, "kafka_properties", props);
	log_kv_int(&line, "pid", (int64_t) getpid());
	log_end(&line);
	free(dsn);
}

/*
 * feeder_free_lanes
 *		Stop the lanes' threads (a running batch ends first) and release
 *		their messages and sessions.
 */
static void
feeder_free_lanes(feeder_app *app)
{
	int			i;

	for (i = 0; i < app->nlanes; i++)
		lane_free(&app->lanes[i], kafka_release);
	free(app->lanes);
	app->lanes = NULL;
	app->nlanes = 0;
	app->db = NULL;
	registry_free(app->registry);
	app->registry = NULL;
}

/*
 * feeder_release_early
 *		Free what main allocated, on a return before the loop: the memory
 *		is unreachable once main returns, and LeakSanitizer (make sanitize)
 *		would report it and change the exit code.
 */
static void
feeder_release_early(feeder_app *app, feeder_config *cfg, rd_kafka_conf_t *conf)
{
	if (conf != NULL)
		rd_kafka_conf_destroy(conf);
	feeder_free_lanes(app);
	config_free(cfg);
}

/*
 * feeder_make_lanes
 *		--db-sessions lanes, each with its database session (not connected
 *		yet); 0 on success, -1 on out of memory.
 */
static int
feeder_make_lanes(feeder_app *app, const feeder_config *cfg)
{
	int			i;

	app->lanes = calloc((size_t) cfg->db_sessions, sizeof(lane));
	if (app->lanes == NULL)
		return -1;
	if (strcmp(cfg->value_format, "confluent") == 0)
	{
		registry_options ro = {
			.urls = cfg->schema_registry,
			.user_info = cfg->schema_registry_user_info,
			.ca_file = cfg->schema_registry_ca,
			.cert_file = cfg->schema_registry_cert,
			.key_file = cfg->schema_registry_key,
			.timeout_ms = cfg->schema_registry_timeout_ms,
			/* registry_options: < 0 is none */
			.unknown_grace_ms = cfg->schema_registry_unknown_grace_ms > 0 ?
			cfg->schema_registry_unknown_grace_ms : -1,
			.max_schemas = FEEDER_REGISTRY_MAX_SCHEMAS,
		};

		app->registry = registry_new(&ro);
		if (app->registry == NULL)
			return -1;
	}
	for (i = 0; i < cfg->db_sessions; i++)
	{
		lane	   *l = &app->lanes[i];
		db_conn    *db = db_new(cfg->dsn, cfg->group, &app->stats);

		if (db == NULL)
			return -1;
		if (lane_init(l, i, db, cfg->batch_size, cfg->batch_wait_ms,
					  (size_t) cfg->batch_max_bytes) != 0)
		{
			db_free(db);
			l->db = NULL;
			app->nlanes = i + 1;	/* lane_free releases what it has */
			return -1;
		}
		app->nlanes = i + 1;
		db_set_index(db, i);
		db_set_timeouts(db, cfg->statement_timeout_ms, cfg->lock_timeout_ms);
		if ((strcmp(cfg->envelope, "plain") != 0 || cfg->event_type != NULL) &&
			db_set_outbox(db, cfg->envelope, cfg->event_type, cfg->type_header) != 0)
			return -1;
		if (app->registry &&
			(db_set_framed(db) != 0 ||
			 lane_set_registry(l, app->registry, cfg->envelope, cfg->event_type) != 0))
			return -1;
	}
	app->db = app->lanes[0].db;
	return 0;
}

/*
 * main
 *		Parse, connect, run the loop, shut down; see the exit codes in
 *		feeder.h.
 */
int
main(int argc, char **argv)
{
	feeder_config cfg;
	feeder_app	app;
	rd_kafka_conf_t *conf;
	char		err[1024];
	db_error	dberr;
	int			rc;
	int			i;
	size_t		held = 0;

	switch (config_parse(&cfg, argc, argv, err, sizeof(err)))
	{
		case CONFIG_ERROR:
			feeder_usage_error(err);
			break;
		case CONFIG_EXIT:
			if (cfg.want_help)
				config_usage(stdout);
			else if (cfg.want_version)
				printf("%s %s (librdkafka %s, libpq %d)\n", FEEDER_NAME, FEEDER_VERSION,
					   rd_kafka_version_str(), PQlibVersion());
			else
				rd_kafka_conf_properties_show(stdout);
			config_free(&cfg);
			return FEEDER_EXIT_OK;
		case CONFIG_OK:
			break;
	}
	if (!kafka_version_ok())
	{
		fprintf(stderr, "%s: librdkafka %s is older than %s, the floor this feeder needs: "
				"reinstall the feeder with its bundled client, or a librdkafka >= %s\n",
				FEEDER_NAME, rd_kafka_version_str(), KAFKA_VERSION_FLOOR_STR,
				KAFKA_VERSION_FLOOR_STR);
		config_free(&cfg);
		return FEEDER_EXIT_KAFKA;
	}
	log_set_level(cfg.log_level);
	feeder_check_dsn(cfg.dsn);
	conf = kafka_build_conf(&cfg, err, sizeof(err));
	if (conf == NULL)
		feeder_usage_error(err);

	feeder_install_signals();
	feeder_log_start(&cfg);
	if (cfg.adopt_kafka_offsets)
	{
		rc = adopt_kafka_offsets(&cfg, conf);
		log_simple(LOG_INFO, "stopped", NULL);
		config_free(&cfg);
		return rc;
	}

	memset(&app, 0, sizeof(app));
	app.cfg = &cfg;
	app.stats.lag = -1;
	app.backoff.base_ms = cfg.retry_backoff_ms;
	app.backoff.max_ms = cfg.retry_backoff_max_ms;
	pthread_mutex_init(&app.wake_lock, NULL);
	pthread_cond_init(&app.wake_cond, NULL);
	/* libcurl's global state, before any lane's thread starts */
	if (strcmp(cfg.value_format, "confluent") == 0)
	{
		curl_global_init(CURL_GLOBAL_DEFAULT);
		avro_json_init();
	}
	if (feeder_make_lanes(&app, &cfg) != 0)
	{
		log_simple(LOG_FATAL, "out_of_memory", "could not allocate the batches and sessions");
		feeder_release_early(&app, &cfg, conf);
		return FEEDER_EXIT_RUNTIME;
	}

	if (cfg.metrics_listen && metrics_start(cfg.metrics_listen, err, sizeof(err)) != 0)
	{
		log_line	line;

		log_begin(&line, LOG_FATAL, "metrics_listen_failed");
		log_kv_str(&line, "error", err);
		log_end(&line);
		feeder_release_early(&app, &cfg, conf);
		return FEEDER_EXIT_RUNTIME;
	}

	switch (db_connect(app.db, &dberr))
	{
		case DB_ERR_NONE:
			metrics_set_database(1, NULL);
			break;
		case DB_ERR_FATAL:
			db_log_fatal(&dberr);
			metrics_stop();
			feeder_release_early(&app, &cfg, conf);
			return FEEDER_EXIT_DATABASE;
		default:
			metrics_set_database(0, dberr.message);
			{
				log_line	line;

				log_begin(&line, LOG_WARNING, "db_unavailable");
				if (dberr.sqlstate[0])
					log_kv_str(&line, "sqlstate", dberr.sqlstate);
				log_kv_str(&line, "error", dberr.message);
				log_kv_str(&line, "action", "consuming anyway; batches wait and retry");
				log_end(&line);
			}
			break;
	}

	app.kc = kafka_open(&cfg, conf, &app.stats, err, sizeof(err));
	if (app.kc == NULL)
	{
		log_simple(LOG_FATAL, "kafka_config_error", err);
		metrics_stop();
		feeder_release_early(&app, &cfg, NULL);	/* kafka_open freed conf */
		return FEEDER_EXIT_KAFKA;
	}
	spread_init(&app.spread, app.nlanes, cfg.batch_size);
	kafka_set_start_fn(app.kc, positions_on_assign, &app);
	kafka_set_quiesce_fn(app.kc, loop_quiesce, &app);
	for (i = 0; i < app.nlanes; i++)
		if (lane_start(&app.lanes[i], loop_lane_done, &app) != 0)
		{
			log_simple(LOG_FATAL, "thread_failed", "could not start a database session's thread");
			feeder_free_lanes(&app);
			kafka_close(app.kc);
			metrics_stop();
			config_free(&cfg);
			return FEEDER_EXIT_RUNTIME;
		}

	status_start(&cfg);
	for (i = 0; i < app.nlanes; i++)
		db_set_member(app.lanes[i].db, status_member_id());
	rc = loop_run(&app);
	metrics_set_phase(METRICS_STOPPING);
	if (feeder_stop)
	{
		log_line	line;

		log_begin(&line, LOG_INFO, "signal_received");
		log_kv_str(&line, "signal", feeder_signal_name(feeder_stop));
		log_kv_str(&line, "action", "orderly shutdown: offsets of committed batches committed, group left");
		log_end(&line);
	}

	for (i = 0; i < app.nlanes; i++)
		held += queue_length(&app.lanes[i].pending) + (size_t) app.lanes[i].batch.count;
	{
		log_line	line;

		log_begin(&line, LOG_INFO, "stopping");
		log_kv_int(&line, "exit_code", rc);
		log_kv_str(&line, "signal", feeder_signal_name(feeder_stop));
		log_kv_uint(&line, "unacknowledged_held", held);
		log_end(&line);
	}
	/* messages must go before the client that owns them */
	feeder_free_lanes(&app);
	kafka_close(app.kc);
	/* the group is left: the member's last report says "stopped" */
	status_stop(rc == FEEDER_EXIT_OK);
	app.stats.lag = -1;
	metrics_publish(&app.stats);
	metrics_stop();
	stats_log(&app.stats);
	log_simple(LOG_INFO, "stopped", NULL);
	config_free(&cfg);
	return rc;
}
