/*-------------------------------------------------------------------------
 *
 * dev_kafka.c
 *		ro-dev-kafka: a development Kafka built on librdkafka's mock cluster
 *
 * The mock cluster (rdkafka_mock.h) speaks the real Kafka protocol on
 * random localhost ports, with consumer groups and offset commits, so the
 * feeder, kcat and the end-to-end suites use it as they would a real
 * cluster.  Three modes:
 *
 *	ro-dev-kafka --brokers N --topic NAME:PARTITIONS [--topic ...]
 *		[--cluster-id ID] [--initial-rebalance-delay MS]
 *		[--bootstrap-file FILE] [--control FIFO | --no-stdin]
 *		runs the cluster (whose Metadata reports cluster id ID, by default
 *		"ro-dev-kafka": the same across restarts, as a real cluster's; whose
 *		group coordinator holds an empty group's first join MS milliseconds
 *		for more members, by default 0), prints "bootstrap=HOST:PORT,..."
 *		(and writes the same line to FILE once it is complete), then
 *		executes one command per line from stdin (or from FIFO): "down ID",
 *		"up ID" (ID -1: every broker), "leader TOPIC PARTITION ID",
 *		"coordinator group GROUP ID", "quit"; each is answered on stdout
 *		with "ok" or "error: reason".  It exits 0 on "quit", on end of
 *		stdin, on SIGTERM or SIGINT.  With --no-stdin it only waits for a
 *		signal; a control FIFO is opened read-write, so writers may come
 *		and go without ending the cluster.
 *
 *	ro-dev-kafka --committed --bootstrap BOOT --group G --topic T
 *		prints "T PARTITION COMMITTED HIGH_WATERMARK" per partition;
 *		COMMITTED is -1 when the group has no offset for the partition,
 *		HIGH_WATERMARK -1 when it could not be read.
 *
 *	ro-dev-kafka --end-offsets --bootstrap BOOT --topic T
 *		prints "T PARTITION LOW_WATERMARK HIGH_WATERMARK" per partition
 *		whose watermarks could be read.
 *
 * The query modes exit 1 when anything could not be read (said on stderr);
 * each question waits at most 10 s, even for a partition whose leader is
 * down (watermarks.c: librdkafka's own watermark query would wait for ever).
 *
 * The mock cluster names itself "mockCluster" and a hexadecimal number made
 * of two of its pointers: another id at every start, which would make
 * every restart look like a move to another cluster (the feeder compares
 * the cluster id with the one its positions were taken on).  librdkafka has
 * no call to set it; devkafka_set_cluster_id writes it where librdkafka 2.x
 * keeps it, the first member of the cluster's struct (char id[32]), after
 * checking that a generated id is there.
 *
 * The initial rebalance delay is the broker setting
 * group.initial.rebalance.delay.ms: how long the coordinator holds an
 * empty group's first join in the hope that more members come, so that one
 * rebalance serves them all.  librdkafka's mock keeps the broker's default
 * of 3000 ms; we set 0, as our real clusters do (test/lib/apache_kafka.sh)
 * and as Kafka's sample server.properties does for development, so that a
 * feeder's start is not 3 s of waiting.  --initial-rebalance-delay 3000
 * gives back the broker's default.
 *
 * Known traits of librdkafka 2.0.2's mock cluster: it keeps only about
 * 5 MiB per partition and drops older messages silently; broker "down"
 * refuses connections but does not move partition leadership; a member
 * that leaves a consumer group, even cleanly, is dropped only when its
 * session times out, so a member joining meanwhile waits that long (tests
 * use session.timeout.ms=6000 rather than the default 45 s).
 *
 * IDENTIFICATION
 *	  tools/dev_kafka.c
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "watermarks.h"

#define DEVKAFKA_MAX_TOPICS 64
#define DEVKAFKA_LINE_MAX 1024
#define DEVKAFKA_TIMEOUT_MS 10000
#define DEVKAFKA_DEFAULT_CLUSTER_ID "ro-dev-kafka"
#define DEVKAFKA_DEFAULT_REBALANCE_DELAY_MS 0
/* rdkafka_mock_int.h, librdkafka 2.x: struct rd_kafka_mock_cluster_s { char id[32]; ... } */
#define DEVKAFKA_CLUSTER_ID_SIZE 32

typedef enum devkafka_mode
{
	DEVKAFKA_MODE_CLUSTER,
	DEVKAFKA_MODE_COMMITTED,
	DEVKAFKA_MODE_END_OFFSETS
} devkafka_mode;

typedef struct devkafka_topic
{
	char	   *name;
	int			partitions;
} devkafka_topic;

typedef struct devkafka_options
{
	devkafka_mode mode;
	int			brokers;
	devkafka_topic topics[DEVKAFKA_MAX_TOPICS];
	int			ntopics;
	const char *cluster_id;		/* NULL: DEVKAFKA_DEFAULT_CLUSTER_ID */
	int			rebalance_delay_ms; /* group.initial.rebalance.delay.ms */
	const char *bootstrap_file;
	const char *control_fifo;
	int			no_stdin;
	const char *bootstrap;
	const char *group;
} devkafka_options;

static volatile sig_atomic_t devkafka_stop_requested = 0;

/*
 * devkafka_usage
 *		Print the command line summary to the given stream.
 */
static void
devkafka_usage(FILE *out)
{
	fprintf(out,
			"usage: ro-dev-kafka --brokers N --topic NAME:PARTITIONS [--topic ...]\n"
			"                    [--cluster-id ID] [--initial-rebalance-delay MS]\n"
			"                    [--bootstrap-file FILE]\n"
			"                    [--control FIFO | --no-stdin]\n"
			"       ro-dev-kafka --committed --bootstrap BOOT --group G --topic T\n"
			"       ro-dev-kafka --end-offsets --bootstrap BOOT --topic T\n"
			"commands (stdin or FIFO): down ID | up ID | leader TOPIC PARTITION ID |\n"
			"                          coordinator group GROUP ID | quit\n");
}

/*
 * devkafka_fail_usage
 *		Report a bad argument on one line and exit 2.
 */
static void
devkafka_fail_usage(const char *reason, const char *arg)
{
	fprintf(stderr, "ro-dev-kafka: %s%s%s\n", reason,
			arg ? ": " : "", arg ? arg : "");
	exit(2);
}

/*
 * devkafka_parse_int
 *		Parse a whole decimal number within [min, max] or exit 2.
 */
static int
devkafka_parse_int(const char *text, int min, int max, const char *what)
{
	char	   *end;
	long		value;

	errno = 0;
	value = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0' || value < min || value > max)
		devkafka_fail_usage(what, text);
	return (int) value;
}

/*
 * devkafka_parse_topic
 *		Parse NAME[:PARTITIONS] into a topic entry.  In the query modes the
 *		partition count is not needed and defaults to 1.
 */
static void
devkafka_parse_topic(devkafka_options *opts, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	devkafka_topic *topic;

	if (opts->ntopics >= DEVKAFKA_MAX_TOPICS)
		devkafka_fail_usage("too many topics", arg);
	topic = &opts->topics[opts->ntopics++];
	if (colon == NULL)
	{
		topic->name = strdup(arg);
		topic->partitions = 1;
	}
	else
	{
		topic->name = strndup(arg, colon - arg);
		topic->partitions = devkafka_parse_int(colon + 1, 1, 10000,
											   "invalid partition count");
	}
	if (topic->name == NULL || topic->name[0] == '\0')
		devkafka_fail_usage("empty topic name", arg);
}

/*
 * devkafka_option_value
 *		The value following option argv[*i]; advances *i past it, or exits 2
 *		when the command line ends there.
 */
static const char *
devkafka_option_value(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc)
		devkafka_fail_usage("missing value for", argv[*i]);
	*i += 1;
	return argv[*i];
}

/*
 * devkafka_parse_args
 *		Fill the options from argv; any mistake exits 2 with a reason.
 */
static void
devkafka_parse_args(devkafka_options *opts, int argc, char **argv)
{
	memset(opts, 0, sizeof(*opts));
	opts->mode = DEVKAFKA_MODE_CLUSTER;
	opts->brokers = 1;
	opts->rebalance_delay_ms = DEVKAFKA_DEFAULT_REBALANCE_DELAY_MS;

	for (int i = 1; i < argc; i++)
	{
		const char *arg = argv[i];

		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
		{
			devkafka_usage(stdout);
			exit(0);
		}
		else if (strcmp(arg, "--brokers") == 0)
			opts->brokers = devkafka_parse_int(devkafka_option_value(argc, argv, &i),
											   1, 64, "invalid broker count");
		else if (strcmp(arg, "--topic") == 0)
			devkafka_parse_topic(opts, devkafka_option_value(argc, argv, &i));
		else if (strcmp(arg, "--cluster-id") == 0)
		{
			opts->cluster_id = devkafka_option_value(argc, argv, &i);
			if (opts->cluster_id[0] == '\0' ||
				strlen(opts->cluster_id) >= DEVKAFKA_CLUSTER_ID_SIZE ||
				strspn(opts->cluster_id,
					   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
				strlen(opts->cluster_id))
				devkafka_fail_usage("a cluster id has 1 to 31 letters, digits, '-', '_' or '.'",
									opts->cluster_id);
		}
		else if (strcmp(arg, "--initial-rebalance-delay") == 0)
			opts->rebalance_delay_ms =
				devkafka_parse_int(devkafka_option_value(argc, argv, &i),
								   0, 300000, "invalid initial rebalance delay (0 to 300000 ms)");
		else if (strcmp(arg, "--bootstrap-file") == 0)
			opts->bootstrap_file = devkafka_option_value(argc, argv, &i);
		else if (strcmp(arg, "--control") == 0)
			opts->control_fifo = devkafka_option_value(argc, argv, &i);
		else if (strcmp(arg, "--no-stdin") == 0)
			opts->no_stdin = 1;
		else if (strcmp(arg, "--committed") == 0)
			opts->mode = DEVKAFKA_MODE_COMMITTED;
		else if (strcmp(arg, "--end-offsets") == 0)
			opts->mode = DEVKAFKA_MODE_END_OFFSETS;
		else if (strcmp(arg, "--bootstrap") == 0)
			opts->bootstrap = devkafka_option_value(argc, argv, &i);
		else if (strcmp(arg, "--group") == 0)
			opts->group = devkafka_option_value(argc, argv, &i);
		else
			devkafka_fail_usage("unknown argument", arg);
	}

	if (opts->mode == DEVKAFKA_MODE_CLUSTER)
	{
		if (opts->ntopics == 0)
			devkafka_fail_usage("at least one --topic NAME:PARTITIONS is required", NULL);
		if (opts->control_fifo && opts->no_stdin)
			devkafka_fail_usage("--control and --no-stdin exclude each other", NULL);
	}
	else
	{
		if (opts->bootstrap == NULL)
			devkafka_fail_usage("--bootstrap is required with --committed and --end-offsets", NULL);
		if (opts->ntopics != 1)
			devkafka_fail_usage("exactly one --topic is required with --committed and --end-offsets", NULL);
		if (opts->mode == DEVKAFKA_MODE_COMMITTED && opts->group == NULL)
			devkafka_fail_usage("--group is required with --committed", NULL);
	}
}

/*
 * devkafka_handle_signal
 *		SIGTERM/SIGINT handler: only records the request.
 */
static void
devkafka_handle_signal(int signo)
{
	(void) signo;
	devkafka_stop_requested = 1;
}

/*
 * devkafka_install_signals
 *		Route SIGTERM and SIGINT to the stop flag without SA_RESTART, so a
 *		blocking poll() returns at once; ignore SIGPIPE (a reader of our
 *		stdout may go away before we do).
 */
static void
devkafka_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = devkafka_handle_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * devkafka_new_handle
 *		Create a librdkafka handle of the given type; bootstrap may be NULL
 *		(the handle that owns the mock cluster needs no brokers).  Exits 1
 *		on failure.
 */
static rd_kafka_t *
devkafka_new_handle(rd_kafka_type_t type, const char *bootstrap,
					const char *group)
{
	char		errstr[512];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_t *rk;

	if ((bootstrap &&
		 rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap,
						   errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) ||
		(group &&
		 rd_kafka_conf_set(conf, "group.id", group,
						   errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) ||
		(type == RD_KAFKA_CONSUMER &&
		 rd_kafka_conf_set(conf, "enable.auto.commit", "false",
						   errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) ||
		rd_kafka_conf_set(conf, "log_level", "3",
						  errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
	{
		fprintf(stderr, "ro-dev-kafka: %s\n", errstr);
		rd_kafka_conf_destroy(conf);
		exit(1);
	}

	/* on success rd_kafka_new takes ownership of conf */
	rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
	if (rk == NULL)
	{
		fprintf(stderr, "ro-dev-kafka: could not create client: %s\n", errstr);
		rd_kafka_conf_destroy(conf);
		exit(1);
	}
	return rk;
}

/*
 * devkafka_write_bootstrap_file
 *		Write "bootstrap=..." to FILE atomically (temporary file + rename),
 *		so a script polling for the file never reads half a line.
 */
static int
devkafka_write_bootstrap_file(const char *path, const char *bootstrap)
{
	size_t		len = strlen(path) + 16;
	char	   *tmp = malloc(len);
	FILE	   *f;
	int			ok;

	if (tmp == NULL)
		return 0;
	snprintf(tmp, len, "%s.tmp", path);
	f = fopen(tmp, "w");
	if (f == NULL)
	{
		fprintf(stderr, "ro-dev-kafka: could not write \"%s\": %s\n",
				tmp, strerror(errno));
		free(tmp);
		return 0;
	}
	fprintf(f, "bootstrap=%s\n", bootstrap);
	ok = (fclose(f) == 0 && rename(tmp, path) == 0);
	if (!ok)
		fprintf(stderr, "ro-dev-kafka: could not write \"%s\": %s\n",
				path, strerror(errno));
	free(tmp);
	return ok;
}

/*
 * devkafka_parse_broker_id
 *		Parse a broker id of a control command: 1..brokers, or -1 for all.
 *		Returns 0 and sets *id on success.
 */
static int
devkafka_parse_broker_id(const char *text, int brokers, int32_t *id)
{
	char	   *end;
	long		value;

	if (text == NULL)
		return -1;
	errno = 0;
	value = strtol(text, &end, 10);
	if (errno != 0 || end == text || *end != '\0')
		return -1;
	if (value != -1 && (value < 1 || value > brokers))
		return -1;
	*id = (int32_t) value;
	return 0;
}

/*
 * devkafka_execute
 *		Execute one control command line and answer it on stdout.  Returns
 *		1 when the command asks to quit.
 */
static int
devkafka_execute(rd_kafka_mock_cluster_t *mcluster, int brokers, char *line)
{
	char	   *save = NULL;
	char	   *verb = strtok_r(line, " \t\r\n", &save);
	char	   *arg1 = strtok_r(NULL, " \t\r\n", &save);
	char	   *arg2 = strtok_r(NULL, " \t\r\n", &save);
	char	   *arg3 = strtok_r(NULL, " \t\r\n", &save);
	rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
	int32_t		id;

	if (verb == NULL)
		return 0;				/* blank line: nothing to answer */

	if (strcmp(verb, "quit") == 0)
	{
		printf("ok\n");
		fflush(stdout);
		return 1;
	}
	else if (strcmp(verb, "down") == 0 || strcmp(verb, "up") == 0)
	{
		if (arg2 != NULL || devkafka_parse_broker_id(arg1, brokers, &id) != 0)
		{
			printf("error: usage: %s BROKER_ID (1..%d, or -1 for all)\n",
				   verb, brokers);
			fflush(stdout);
			return 0;
		}
		if (verb[0] == 'd')
			err = rd_kafka_mock_broker_set_down(mcluster, id);
		else
			err = rd_kafka_mock_broker_set_up(mcluster, id);
	}
	else if (strcmp(verb, "coordinator") == 0)
	{
		if (arg1 == NULL || arg2 == NULL ||
			(strcmp(arg1, "group") != 0 && strcmp(arg1, "transaction") != 0) ||
			devkafka_parse_broker_id(arg3, brokers, &id) != 0 || id < 1)
		{
			printf("error: usage: coordinator group|transaction KEY BROKER_ID\n");
			fflush(stdout);
			return 0;
		}
		err = rd_kafka_mock_coordinator_set(mcluster, arg1, arg2, id);
	}
	else if (strcmp(verb, "leader") == 0)
	{
		char	   *end;
		long		partition;

		errno = 0;
		partition = arg2 ? strtol(arg2, &end, 10) : -1;
		if (arg1 == NULL || arg2 == NULL || errno != 0 || *end != '\0' ||
			partition < 0 ||
			devkafka_parse_broker_id(arg3, brokers, &id) != 0)
		{
			printf("error: usage: leader TOPIC PARTITION BROKER_ID\n");
			fflush(stdout);
			return 0;
		}
		err = rd_kafka_mock_partition_set_leader(mcluster, arg1,
												 (int32_t) partition, id);
	}
	else
	{
		printf("error: unknown command \"%s\" (down ID, up ID, leader TOPIC PARTITION ID, coordinator group KEY ID, quit)\n",
			   verb);
		fflush(stdout);
		return 0;
	}

	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		printf("error: %s\n", rd_kafka_err2str(err));
	else
		printf("ok\n");
	fflush(stdout);
	return 0;
}

/*
 * devkafka_serve_commands
 *		Read command lines from fd until quit, end of input or a signal.
 *		fd < 0 means no input at all: just wait for a signal.
 */
static void
devkafka_serve_commands(rd_kafka_mock_cluster_t *mcluster, int brokers, int fd)
{
	char		buf[DEVKAFKA_LINE_MAX];
	size_t		used = 0;

	while (!devkafka_stop_requested)
	{
		struct pollfd pfd;
		ssize_t		n;
		char	   *nl;

		if (fd < 0)
		{
			poll(NULL, 0, 500);	/* no input: wake up to check the flag */
			continue;
		}

		pfd.fd = fd;
		pfd.events = POLLIN;
		pfd.revents = 0;
		if (poll(&pfd, 1, 500) <= 0)
			continue;			/* timeout or EINTR: recheck the flag */

		n = read(fd, buf + used, sizeof(buf) - 1 - used);
		if (n < 0)
		{
			if (errno == EINTR || errno == EAGAIN)
				continue;
			fprintf(stderr, "ro-dev-kafka: could not read commands: %s\n",
					strerror(errno));
			return;
		}
		if (n == 0)
			return;				/* end of input */
		used += (size_t) n;
		buf[used] = '\0';

		while ((nl = strchr(buf, '\n')) != NULL)
		{
			size_t		consumed = (size_t) (nl - buf) + 1;

			*nl = '\0';
			if (devkafka_execute(mcluster, brokers, buf))
				return;
			memmove(buf, buf + consumed, used - consumed + 1);
			used -= consumed;
		}
		if (used == sizeof(buf) - 1)
		{
			printf("error: command line too long\n");
			fflush(stdout);
			used = 0;
		}
	}
}

/*
 * devkafka_set_cluster_id
 *		Make the mock cluster report id in its Metadata responses (see the
 *		file header).  Only where librdkafka's generated id ("mockCluster"
 *		and hexadecimal digits) is found, so that another layout of the
 *		struct is never written over; 0 when it was not.  Called before the bootstrap list is announced: no client can
 *		ask meanwhile.
 */
static int
devkafka_set_cluster_id(rd_kafka_mock_cluster_t *mcluster, const char *id)
{
	char	   *field = (char *) mcluster;
	const char *end = memchr(field, '\0', DEVKAFKA_CLUSTER_ID_SIZE);
	size_t		prefix = strlen("mockCluster");

	if (end == NULL || (size_t) (end - field) <= prefix ||
		strncmp(field, "mockCluster", prefix) != 0 ||
		strspn(field + prefix, "0123456789abcdef") != (size_t) (end - field) - prefix)
		return 0;
	memset(field, 0, DEVKAFKA_CLUSTER_ID_SIZE);
	memcpy(field, id, strlen(id));
	return 1;
}

/*
 * devkafka_run_cluster
 *		Cluster mode: create the mock cluster and its topics, announce the
 *		bootstrap list, serve commands, tear down.
 */
static int
devkafka_run_cluster(const devkafka_options *opts)
{
	rd_kafka_t *owner;
	rd_kafka_mock_cluster_t *mcluster;
	const char *bootstrap;
	int			fd = -1;

	/* the mock cluster needs a client handle for its book keeping */
	owner = devkafka_new_handle(RD_KAFKA_PRODUCER, NULL, NULL);
	mcluster = rd_kafka_mock_cluster_new(owner, opts->brokers);
	if (mcluster == NULL)
	{
		fprintf(stderr, "ro-dev-kafka: could not create the mock cluster\n");
		rd_kafka_destroy(owner);
		return 1;
	}

	if (!devkafka_set_cluster_id(mcluster, opts->cluster_id ?
								 opts->cluster_id : DEVKAFKA_DEFAULT_CLUSTER_ID))
	{
		/* only an explicit id is a promise; the default is a convenience */
		fprintf(stderr, "ro-dev-kafka: %s: this librdkafka's mock cluster keeps its id elsewhere; it reports its own, another at every start\n",
				opts->cluster_id ? "cannot set the cluster id" : "warning");
		if (opts->cluster_id)
		{
			rd_kafka_mock_cluster_destroy(mcluster);
			rd_kafka_destroy(owner);
			return 1;
		}
	}

	/* before the bootstrap list is announced: no group can form meanwhile */
	rd_kafka_mock_group_initial_rebalance_delay_ms(mcluster,
												   opts->rebalance_delay_ms);

	for (int i = 0; i < opts->ntopics; i++)
	{
		int			rf = opts->brokers < 3 ? opts->brokers : 3;
		rd_kafka_resp_err_t err;

		err = rd_kafka_mock_topic_create(mcluster, opts->topics[i].name,
										 opts->topics[i].partitions, rf);
		if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		{
			fprintf(stderr, "ro-dev-kafka: could not create topic \"%s\": %s\n",
					opts->topics[i].name, rd_kafka_err2str(err));
			rd_kafka_mock_cluster_destroy(mcluster);
			rd_kafka_destroy(owner);
			return 1;
		}
	}

	if (opts->control_fifo)
	{
		/*
		 * Read-write: we are a writer ourselves, so the FIFO never reports
		 * end of file when a test's "echo down 1 > FIFO" closes it.
		 */
		fd = open(opts->control_fifo, O_RDWR | O_CLOEXEC);
		if (fd < 0)
		{
			fprintf(stderr, "ro-dev-kafka: could not open control FIFO \"%s\": %s\n",
					opts->control_fifo, strerror(errno));
			rd_kafka_mock_cluster_destroy(mcluster);
			rd_kafka_destroy(owner);
			return 1;
		}
	}
	else if (!opts->no_stdin)
		fd = STDIN_FILENO;

	bootstrap = rd_kafka_mock_cluster_bootstraps(mcluster);
	printf("bootstrap=%s\n", bootstrap);
	fflush(stdout);
	if (opts->bootstrap_file &&
		!devkafka_write_bootstrap_file(opts->bootstrap_file, bootstrap))
	{
		rd_kafka_mock_cluster_destroy(mcluster);
		rd_kafka_destroy(owner);
		return 1;
	}

	devkafka_serve_commands(mcluster, opts->brokers, fd);

	if (fd > STDIN_FILENO)
		close(fd);
	rd_kafka_mock_cluster_destroy(mcluster);
	rd_kafka_destroy(owner);
	return 0;
}

/*
 * devkafka_partition_count
 *		Ask the cluster how many partitions the topic has; -1 on failure.
 */
static int
devkafka_partition_count(rd_kafka_t *rk, const char *topic_name)
{
	rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic_name, NULL);
	const struct rd_kafka_metadata *md = NULL;
	rd_kafka_resp_err_t err;
	int			count = -1;

	err = rd_kafka_metadata(rk, 0, rkt, &md, DEVKAFKA_TIMEOUT_MS);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		fprintf(stderr, "ro-dev-kafka: could not get metadata of \"%s\": %s\n",
				topic_name, rd_kafka_err2str(err));
	else if (md->topic_cnt != 1 || md->topics[0].err != RD_KAFKA_RESP_ERR_NO_ERROR)
		fprintf(stderr, "ro-dev-kafka: topic \"%s\": %s\n", topic_name,
				rd_kafka_err2str(md->topic_cnt == 1 ? md->topics[0].err :
								 RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC));
	else
		count = md->topics[0].partition_cnt;

	if (md)
		rd_kafka_metadata_destroy(md);
	rd_kafka_topic_destroy(rkt);
	return count;
}

/*
 * devkafka_run_query
 *		Query modes: print per partition either the group's committed offset
 *		and the high watermark, or both watermarks.
 */
static int
devkafka_run_query(const devkafka_options *opts)
{
	const char *topic_name = opts->topics[0].name;
	rd_kafka_t *rk;
	rd_kafka_topic_partition_list_t *parts = NULL;
	int			count;
	int			status = 0;

	rk = devkafka_new_handle(RD_KAFKA_CONSUMER, opts->bootstrap, opts->group);

	count = devkafka_partition_count(rk, topic_name);
	if (count < 0)
	{
		rd_kafka_destroy(rk);
		return 1;
	}

	if (opts->mode == DEVKAFKA_MODE_COMMITTED)
	{
		rd_kafka_resp_err_t err;

		parts = rd_kafka_topic_partition_list_new(count);
		for (int p = 0; p < count; p++)
			rd_kafka_topic_partition_list_add(parts, topic_name, p);
		err = rd_kafka_committed(rk, parts, DEVKAFKA_TIMEOUT_MS);
		if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		{
			fprintf(stderr, "ro-dev-kafka: could not fetch committed offsets of group \"%s\": %s\n",
					opts->group, rd_kafka_err2str(err));
			rd_kafka_topic_partition_list_destroy(parts);
			rd_kafka_destroy(rk);
			return 1;
		}
	}

	for (int p = 0; p < count; p++)
	{
		int64_t		low = -1;
		int64_t		high = -1;
		rd_kafka_resp_err_t err;

		err = watermarks_query(rk, topic_name, p, DEVKAFKA_TIMEOUT_MS, &low, &high);
		if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		{
			fprintf(stderr, "ro-dev-kafka: could not query watermarks of %s [%d]: %s\n",
					topic_name, p, rd_kafka_err2str(err));
			status = 1;
			if (!parts)
				continue;		/* the other partitions are still printed */
		}

		if (parts)
		{
			rd_kafka_topic_partition_t *tp = &parts->elems[p];
			int64_t		committed = tp->offset < 0 ? -1 : tp->offset;

			if (tp->err != RD_KAFKA_RESP_ERR_NO_ERROR)
			{
				fprintf(stderr, "ro-dev-kafka: committed offset of %s [%d]: %s\n",
						topic_name, p, rd_kafka_err2str(tp->err));
				status = 1;
				continue;
			}
			printf("%s %d %" PRId64 " %" PRId64 "\n",
				   topic_name, p, committed, high);
		}
		else
			printf("%s %d %" PRId64 " %" PRId64 "\n",
				   topic_name, p, low, high);
	}
	fflush(stdout);

	if (parts)
		rd_kafka_topic_partition_list_destroy(parts);
	rd_kafka_destroy(rk);
	return status;
}

/*
 * main
 *		Parse the arguments and run the requested mode.
 */
int
main(int argc, char **argv)
{
	devkafka_options opts;

	devkafka_parse_args(&opts, argc, argv);
	devkafka_install_signals();

	if (opts.mode == DEVKAFKA_MODE_CLUSTER)
		return devkafka_run_cluster(&opts);
	return devkafka_run_query(&opts);
}
