/*-------------------------------------------------------------------------
 *
 * floor_consumer.c
 *		ro-floor-consumer: a bare librdkafka consumer that measures the
 *		produce -> consume latency of OrderReceived events
 *
 *	ro-floor-consumer --brokers BOOT --topic T --group G --count N
 *		[--seconds S] [-X KEY=VALUE]...
 *
 * It joins group G on topic T with the consumer settings the feeder gives
 * librdkafka (kafka_conf.c: auto.offset.reset=earliest, group.protocol
 * classic, isolation.level=read_committed, then the -X properties, as the
 * feeder takes them) and, for every message, prints on stdout the time of
 * its arrival (rd_kafka_consumer_poll returning it) minus the event's
 * occurredAt, in milliseconds: the latency floor any sink has on that
 * broker, with nothing done per message.  A second column splits it: on a
 * topic with message.timestamp.type=LogAppendTime, the broker's append
 * time minus occurredAt (the producer's and the broker's share; the rest
 * is the fetch's), else \N.  bench/real-latency runs it beside
 * the feeder on the same topic.  "assigned" on stderr once the group gave
 * it partitions; it exits 0 after N messages, 1 when S seconds (60) pass
 * first or on SIGTERM or SIGINT (what it read so far is printed).
 *
 * The same clock (CLOCK_REALTIME) on one machine as the producer's
 * occurredAt (ro-generate-events, milliseconds); a value without a
 * readable occurredAt is counted on stderr and skipped.
 *
 * IDENTIFICATION
 *	  tools/floor_consumer.c
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <librdkafka/rdkafka.h>

static volatile sig_atomic_t floor_stop = 0;

/*
 * floor_on_signal
 *		SIGTERM/SIGINT: ask the poll loop to end.
 */
static void
floor_on_signal(int sig)
{
	(void) sig;
	floor_stop = 1;
}

/*
 * floor_rebalance_cb
 *		Take or give up the partitions as the group says, for either
 *		rebalance protocol, and say "assigned" on stderr the first time
 *		partitions come (bench/real-latency produces only after that).
 */
static void
floor_rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
				   rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	int			cooperative = strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
	int		   *assigned = opaque;

	if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS)
	{
		if (cooperative)
			rd_kafka_error_destroy(rd_kafka_incremental_assign(rk, parts));
		else
			rd_kafka_assign(rk, parts);
		if (!*assigned && parts->cnt > 0)
		{
			*assigned = 1;
			fprintf(stderr, "assigned\n");
			fflush(stderr);
		}
	}
	else if (cooperative)
		rd_kafka_error_destroy(rd_kafka_incremental_unassign(rk, parts));
	else
		rd_kafka_assign(rk, NULL);
}

/*
 * floor_occurred_ms
 *		The event's occurredAt ("YYYY-MM-DDTHH:MM:SS.mmmZ", as
 *		ro-generate-events writes it) in milliseconds since the epoch, or
 *		-1 when the value holds none.  The event may be the value itself or
 *		a JSON string inside it (--envelope debezium and connect-record),
 *		where the field's quotes are escaped.
 */
static double
floor_occurred_ms(const char *value, size_t len)
{
	static const char key[] = "\"occurredAt\":\"";
	static const char escaped[] = "\\\"occurredAt\\\":\\\"";
	const char *p = memmem(value, len, key, sizeof(key) - 1);
	char		text[32];
	struct tm	tm;
	int			ms;
	char	   *rest;

	if (p != NULL)
		p += sizeof(key) - 1;
	else if ((p = memmem(value, len, escaped, sizeof(escaped) - 1)) != NULL)
		p += sizeof(escaped) - 1;
	else
		return -1;
	if ((size_t) (value + len - p) < 24)
		return -1;
	memcpy(text, p, 24);
	text[24] = '\0';
	memset(&tm, 0, sizeof(tm));
	rest = strptime(text, "%Y-%m-%dT%H:%M:%S", &tm);
	if (rest == NULL || sscanf(rest, ".%3dZ", &ms) != 1)
		return -1;
	return (double) timegm(&tm) * 1000.0 + ms;
}

/*
 * floor_now_ms
 *		CLOCK_REALTIME in milliseconds, with the fraction.
 */
static double
floor_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec * 1000.0 + ts.tv_nsec / 1e6;
}

/*
 * floor_usage
 *		The usage line on stderr, exit 2.
 */
static void
floor_usage(void)
{
	fprintf(stderr, "usage: ro-floor-consumer --brokers BOOT --topic T --group G --count N [--seconds S] [-X KEY=VALUE]...\n");
	exit(2);
}

/*
 * floor_set
 *		One librdkafka property; a refused one is a usage error.
 */
static void
floor_set(rd_kafka_conf_t *conf, const char *key, const char *value)
{
	char		err[512];

	if (rd_kafka_conf_set(conf, key, value, err, sizeof(err)) != RD_KAFKA_CONF_OK)
	{
		fprintf(stderr, "ro-floor-consumer: %s: %s\n", key, err);
		exit(2);
	}
}

int
main(int argc, char **argv)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	const char *brokers = NULL,
			   *topic = NULL,
			   *group = NULL;
	long		count = -1,
				seen = 0,
				unreadable = 0;
	double		seconds = 60,
				deadline;
	int			assigned = 0;
	int			i;
	char		err[512];
	rd_kafka_t *rk;
	rd_kafka_topic_partition_list_t *topics;

	floor_set(conf, "auto.offset.reset", "earliest");
	floor_set(conf, "group.protocol", "classic");
	floor_set(conf, "enable.auto.commit", "false");
	for (i = 1; i < argc; i++)
	{
		const char *arg = argv[i];

		if (i + 1 >= argc)
			floor_usage();
		if (strcmp(arg, "--brokers") == 0)
			brokers = argv[++i];
		else if (strcmp(arg, "--topic") == 0)
			topic = argv[++i];
		else if (strcmp(arg, "--group") == 0)
			group = argv[++i];
		else if (strcmp(arg, "--count") == 0)
			count = atol(argv[++i]);
		else if (strcmp(arg, "--seconds") == 0)
			seconds = atof(argv[++i]);
		else if (strcmp(arg, "-X") == 0)
		{
			char	   *kv = strdup(argv[++i]);
			char	   *eq = kv ? strchr(kv, '=') : NULL;

			if (eq == NULL)
				floor_usage();
			*eq = '\0';
			floor_set(conf, kv, eq + 1);
			free(kv);
		}
		else
			floor_usage();
	}
	if (brokers == NULL || topic == NULL || group == NULL || count <= 0)
		floor_usage();
	floor_set(conf, "bootstrap.servers", brokers);
	floor_set(conf, "group.id", group);
	/* pinned after -X, as the feeder pins it */
	floor_set(conf, "isolation.level", "read_committed");
	rd_kafka_conf_set_opaque(conf, &assigned);
	rd_kafka_conf_set_rebalance_cb(conf, floor_rebalance_cb);

	rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
	if (rk == NULL)
	{
		fprintf(stderr, "ro-floor-consumer: %s\n", err);
		return 1;
	}
	rd_kafka_poll_set_consumer(rk);
	topics = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(topics, topic, RD_KAFKA_PARTITION_UA);
	if (rd_kafka_subscribe(rk, topics) != RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		fprintf(stderr, "ro-floor-consumer: could not subscribe to %s\n", topic);
		return 1;
	}
	rd_kafka_topic_partition_list_destroy(topics);
	signal(SIGTERM, floor_on_signal);
	signal(SIGINT, floor_on_signal);

	deadline = floor_now_ms() + seconds * 1000.0;
	while (!floor_stop && seen < count && floor_now_ms() < deadline)
	{
		rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 100);
		double		now = floor_now_ms();
		double		occurred;

		if (m == NULL)
			continue;
		if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && m->payload != NULL)
		{
			rd_kafka_timestamp_type_t tstype;
			int64_t		ts = rd_kafka_message_timestamp(m, &tstype);

			occurred = floor_occurred_ms(m->payload, m->len);
			if (occurred < 0)
				unreadable++;
			else
			{
				if (tstype == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME)
					printf("%.3f\t%.3f\n", now - occurred, (double) ts - occurred);
				else
					printf("%.3f\t\\N\n", now - occurred);
				seen++;
			}
		}
		rd_kafka_message_destroy(m);
	}
	fflush(stdout);
	if (unreadable > 0)
		fprintf(stderr, "ro-floor-consumer: %ld values without a readable occurredAt\n", unreadable);
	rd_kafka_consumer_close(rk);
	rd_kafka_destroy(rk);
	return seen >= count ? 0 : 1;
}
