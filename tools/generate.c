/*-------------------------------------------------------------------------
 *
 * generate.c
 *	  ro-generate-events: produce a realistic stream of OrderReceived
 *	  events to Kafka, with redeliveries, cross-partition and divergent
 *	  duplicates, malformed values and tombstones in given ratios, and
 *	  print an account of it from which the database contents that the
 *	  feeder must reach can be computed.
 *
 * The stream is planned before the first message: the number of messages
 * of each kind is round(count * ratio), the kinds are shuffled with the
 * seeded generator, and the first message is always a new order so that
 * every duplicate has an original before it.  Messages are keyed by
 * orderId, so an order's redeliveries, divergent copies and tombstones land
 * on its partition, after it; a cross-partition copy is keyed by its
 * externalReference instead, as a misconfigured producer would.
 *
 * The account counts delivered messages only: the program waits for every
 * delivery report, and exits 1 if any message was not delivered.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "generate.h"

/* Names of the kinds in the manifest. */
static const char *const gen_kind_names[GEN_NKINDS] = {
	"valid", "redelivery", "cross", "divergent", "malformed", "tombstone"
};

/* Names of the malformed variants in an --output file (malformed-NAME). */
static const char *const gen_malformed_names[GEN_NMALFORMED] = {
	"json", "utf8", "array", "no-order-id"
};

/* One planned message and, after its delivery report, where it landed. */
typedef struct gen_message
{
	int32_t		order;			/* index in gen_run.orders */
	int32_t		partition;		/* from the delivery report, else -1 */
	int64_t		offset;			/* from the delivery report, else -1 */
	uint8_t		kind;			/* gen_kind */
	uint8_t		variant;		/* gen_malformed, for GEN_KIND_MALFORMED */
	int8_t		state;			/* 0 in flight, 1 delivered, -1 failed */
} gen_message;

/* Everything one run owns: options, producer, plan, orders, counters. */
typedef struct gen_run
{
	gen_options opts;
	rd_kafka_t *rk;				/* NULL with --output */
	FILE	   *out;			/* --output, else NULL */
	uint64_t	rng;
	gen_order  *orders;
	int32_t		norders;
	int32_t    *originals;		/* orders index of every valid message */
	int32_t		noriginals;
	gen_message *msgs;
	long long	nsent;
	long long	ndelivered;
	long long	nfailed;
	char		first_error[256];
	uint32_t	next_reference;
	int64_t		start_ms;
	int64_t		next_progress_ms;
	int			pid_assigned;	/* the statistics showed the producer id */
} gen_run;

/* 1 after the first SIGINT/SIGTERM (stop producing), 2 after the second. */
static volatile sig_atomic_t gen_stop = 0;

/*
 * gen_signal_handler
 *		Count the signal; the loops look at gen_stop.
 */
static void
gen_signal_handler(int signo)
{
	(void) signo;
	if (gen_stop < 2)
		gen_stop++;
}

/*
 * gen_clock_ms
 *		Milliseconds of the given clock.
 */
static int64_t
gen_clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * gen_delivery_report
 *		librdkafka's delivery report callback (runs inside rd_kafka_poll):
 *		record where the message landed, or that it failed and why.
 */
static void
gen_delivery_report(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
	gen_run    *run = opaque;
	gen_message *m = msg->_private;

	(void) rk;
	if (msg->err == RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		m->state = 1;
		m->partition = msg->partition;
		m->offset = msg->offset;
		run->ndelivered++;
	}
	else
	{
		m->state = -1;
		if (run->nfailed++ == 0)
			snprintf(run->first_error, sizeof(run->first_error), "%s",
					 rd_kafka_err2str(msg->err));
	}
}

/*
 * gen_stats_cb
 *		librdkafka's statistics (a paced stream's, every second): note
 *		when the idempotent producer holds its producer id, for
 *		gen_warm_up.
 */
static int
gen_stats_cb(rd_kafka_t *rk, char *json, size_t json_len, void *opaque)
{
	gen_run    *run = opaque;

	(void) rk;
	(void) json_len;
	if (strstr(json, "\"idemp_state\": \"Assigned\"") != NULL)
		run->pid_assigned = 1;
	return 0;					/* librdkafka frees json */
}

/*
 * gen_create_producer
 *		The librdkafka producer: our defaults first (idempotence, so that
 *		internal retries never duplicate a message and the account stays
 *		exact; for a paced stream, statistics every second, for
 *		gen_warm_up), then the -X properties in order.  Exits 2 on a
 *		property librdkafka refuses.
 */
static void
gen_create_producer(gen_run *run)
{
	static const char *const defaults[][2] = {
		{"enable.idempotence", "true"},
		{"message.timeout.ms", "60000"},
		{"client.id", GEN_NAME},
	};
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char		errstr[512];
	size_t		i;
	int			p;

	if (rd_kafka_conf_set(conf, "bootstrap.servers", run->opts.brokers,
						  errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
		gen_usage_error("--brokers: %s", errstr);
	for (i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++)
		if (rd_kafka_conf_set(conf, defaults[i][0], defaults[i][1],
							  errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
			gen_usage_error("%s", errstr);
	for (p = 0; p < run->opts.nprops; p++)
	{
		char	   *kv = run->opts.props[p];
		char	   *eq = strchr(kv, '=');

		*eq = '\0';
		if (rd_kafka_conf_set(conf, kv, eq + 1, errstr, sizeof(errstr))
			!= RD_KAFKA_CONF_OK)
			gen_usage_error("-X: %s", errstr);
		*eq = '=';
	}
	if (run->opts.rate > 0 &&
		rd_kafka_conf_set(conf, "statistics.interval.ms", "1000",
						  errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
		gen_usage_error("statistics.interval.ms: %s", errstr);
	rd_kafka_conf_set_stats_cb(conf, gen_stats_cb);
	rd_kafka_conf_set_dr_msg_cb(conf, gen_delivery_report);
	rd_kafka_conf_set_opaque(conf, run);

	/* on success, rd_kafka_new takes ownership of conf */
	run->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
	if (run->rk == NULL)
	{
		rd_kafka_conf_destroy(conf);
		gen_usage_error("cannot create the producer: %s", errstr);
	}
}

/*
 * gen_warm_up
 *		Before a paced stream (--rate) starts its clock: ask for the
 *		topic's metadata and each partition's watermarks, so that the
 *		producer knows every partition's leader and holds a connection to
 *		it, then, with idempotence on, serve the producer until its
 *		statistics show the producer id (at most 5 s): librdkafka sends no
 *		message before it, and asks for it on a timer that retries every
 *		500 ms when no broker was up at the first try
 *		(rdkafka_idempotence.c).
 *		Otherwise the first messages, each stamped with its occurredAt,
 *		wait in the producer's queue for the metadata, the connections
 *		and the producer id, and a latency measured from occurredAt shows
 *		the producer's start (on Apache Kafka 0.5 to 1.5 s for the first
 *		messages of a fresh producer: InitProducerIdRequest sent 500 ms
 *		after the start in librdkafka's debug log).  A failure here is not
 *		reported: the produce calls then meet it as before.
 */
static void
gen_warm_up(gen_run *run)
{
	rd_kafka_topic_t *rkt;
	const rd_kafka_metadata_t *md;
	int64_t		low,
				high;
	int			p;
	char		value[16];
	size_t		size = sizeof(value);

	if (run->rk == NULL || run->opts.rate <= 0)
		return;
	rkt = rd_kafka_topic_new(run->rk, run->opts.topic, NULL);
	if (rkt == NULL)
		return;
	if (rd_kafka_metadata(run->rk, 0, rkt, &md, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		if (md->topic_cnt == 1)
			for (p = 0; p < md->topics[0].partition_cnt; p++)
				(void) rd_kafka_query_watermark_offsets(run->rk, run->opts.topic,
														md->topics[0].partitions[p].id,
														&low, &high, 10000);
		rd_kafka_metadata_destroy(md);
	}
	rd_kafka_topic_destroy(rkt);
	if (rd_kafka_conf_get(rd_kafka_conf(run->rk), "enable.idempotence", value, &size) ==
		RD_KAFKA_CONF_OK && strcmp(value, "true") == 0)
	{
		int64_t		until = gen_clock_ms(CLOCK_MONOTONIC) + 5000;

		while (!gen_stop && !run->pid_assigned && gen_clock_ms(CLOCK_MONOTONIC) < until)
			rd_kafka_poll(run->rk, 50);
	}
}

/*
 * gen_plan
 *		Allocate the run's tables and decide the kind of every message:
 *		round(count * ratio) of each duplicate/bad kind, the rest valid,
 *		shuffled, with a valid message first.  Returns 0, or -1 with a
 *		message when the counts cannot work.
 */
static int
gen_plan(gen_run *run)
{
	long long	count = run->opts.count;
	long long	per_kind[GEN_NKINDS];
	long long	i,
				j,
				others = 0;
	int			k;

	run->msgs = calloc((size_t) (count > 0 ? count : 1), sizeof(gen_message));
	run->orders = calloc((size_t) (count > 0 ? count : 1), sizeof(gen_order));
	run->originals = calloc((size_t) (count > 0 ? count : 1), sizeof(int32_t));
	if (run->msgs == NULL || run->orders == NULL || run->originals == NULL)
	{
		fprintf(stderr, GEN_NAME ": out of memory for %lld messages\n", count);
		return -1;
	}
	for (k = GEN_KIND_REDELIVERY; k < GEN_NKINDS; k++)
	{
		per_kind[k] = llround((double) count * run->opts.ratios[k]);
		others += per_kind[k];
	}
	per_kind[GEN_KIND_VALID] = count - others;
	if (per_kind[GEN_KIND_VALID] < 0 ||
		(others > 0 && per_kind[GEN_KIND_VALID] == 0))
	{
		fprintf(stderr, GEN_NAME ": --count %lld leaves no room for new orders "
				"after the duplicates and bad messages; lower the ratios\n", count);
		return -1;
	}

	i = 0;
	for (k = 0; k < GEN_NKINDS; k++)
		for (j = 0; j < per_kind[k]; j++)
			run->msgs[i++].kind = (uint8_t) k;
	for (i = count - 1; i > 0; i--)
	{
		gen_message tmp;

		j = (long long) gen_rng_below(&run->rng, (uint64_t) i + 1);
		tmp = run->msgs[i];
		run->msgs[i] = run->msgs[j];
		run->msgs[j] = tmp;
	}
	for (i = 0; i < count && run->msgs[0].kind != GEN_KIND_VALID; i++)
		if (run->msgs[i].kind == GEN_KIND_VALID)
		{
			run->msgs[i].kind = run->msgs[0].kind;
			run->msgs[0].kind = GEN_KIND_VALID;
		}
	for (i = 0, j = 0; i < count; i++)
	{
		run->msgs[i].partition = -1;
		run->msgs[i].offset = -1;
		if (run->msgs[i].kind == GEN_KIND_MALFORMED)
			run->msgs[i].variant = (uint8_t) (j++ % GEN_NMALFORMED);
	}
	return 0;
}

/*
 * gen_new_order
 *		Append an order identity (a new orderId when order_id is NULL) with
 *		the next externalReference number; returns its index.
 */
static int32_t
gen_new_order(gen_run *run, const char *order_id)
{
	int32_t		idx = run->norders++;

	gen_order_new(&run->orders[idx], &run->rng, order_id, run->next_reference++,
				  gen_clock_ms(CLOCK_REALTIME));
	return idx;
}

/*
 * gen_build
 *		Decide message m's order and render its key and value; *value_len
 *		is -1 for a tombstone (NULL value).
 */
static long gen_wrap(gen_envelope envelope, const gen_order *order,
					 char *value, long len);

static void
gen_build(gen_run *run, gen_message *m, char *value, long *value_len,
		  const char **key)
{
	int32_t		original = -1;

	if (run->noriginals > 0)
		original = run->originals[gen_rng_below(&run->rng,
												(uint64_t) run->noriginals)];
	switch ((gen_kind) m->kind)
	{
		case GEN_KIND_VALID:
			m->order = gen_new_order(run, NULL);
			run->originals[run->noriginals++] = m->order;
			break;
		case GEN_KIND_REDELIVERY:
		case GEN_KIND_CROSS:
		case GEN_KIND_TOMBSTONE:
			m->order = original;
			break;
		case GEN_KIND_DIVERGENT:
			m->order = gen_new_order(run, run->orders[original].order_id);
			break;
		case GEN_KIND_MALFORMED:
		case GEN_NKINDS:
			m->order = gen_new_order(run, NULL);
			*key = run->orders[m->order].order_id;
			*value_len = (long) gen_malformed_render(&run->orders[m->order],
													 (gen_malformed) m->variant,
													 value, GEN_EVENT_MAX);
			return;
	}
	*key = m->kind == GEN_KIND_CROSS ? run->orders[m->order].reference
		: run->orders[m->order].order_id;
	if (m->kind == GEN_KIND_TOMBSTONE)
		*value_len = -1;
	else
	{
		*value_len = (long) gen_event_render(&run->orders[m->order], value,
											 GEN_EVENT_MAX);
		if (run->opts.envelope != GEN_ENVELOPE_PLAIN)
			*value_len = gen_wrap(run->opts.envelope, &run->orders[m->order],
								  value, *value_len);
	}
}

/*
 * gen_json_escape
 *		Append len bytes of in to out as the inside of a JSON string; returns
 *		the bytes written (at most 6 per byte).
 */
static long
gen_json_escape(char *out, const char *in, long len)
{
	long		n = 0;
	long		i;

	for (i = 0; i < len; i++)
	{
		unsigned char c = (unsigned char) in[i];

		if (c == '"' || c == '\\')
		{
			out[n++] = '\\';
			out[n++] = (char) c;
		}
		else if (c < 0x20)
			n += snprintf(out + n, 7, "\\u%04x", c);
		else
			out[n++] = (char) c;
	}
	return n;
}

/*
 * gen_wrap
 *		Rewrite an event in --envelope's wrapper; value has room for
 *		GEN_VALUE_MAX bytes.
 *
 *		debezium: as Debezium's outbox event router publishes a text payload
 *		column through Kafka Connect's JsonConverter with schemas.enable=true,
 *		a JSON string holding the event under the schema wrapper.
 *
 *		connect-record: a JsonConverter record with a struct schema, the
 *		order's identity split out into its own fields and the event kept as
 *		text in "payload" (io.debezium.data.Json): what a JDBC sink maps to
 *		the columns order_id, external_reference and payload.  The order's
 *		fields (a UUID, and a channel and number like WEB-000123) need no
 *		escaping.
 */
static long
gen_wrap(gen_envelope envelope, const gen_order *order, char *value, long len)
{
	static const char debezium_head[] = "{\"schema\":{\"type\":\"string\",\"optional\":true},\"payload\":\"";
	static const char record_schema[] =
		"{\"schema\":{\"type\":\"struct\",\"name\":\"received_orders.order\",\"optional\":false,\"fields\":["
		"{\"field\":\"order_id\",\"type\":\"string\",\"optional\":false,\"name\":\"io.debezium.data.Uuid\"},"
		"{\"field\":\"external_reference\",\"type\":\"string\",\"optional\":false},"
		"{\"field\":\"payload\",\"type\":\"string\",\"optional\":false,\"name\":\"io.debezium.data.Json\"}]},";
	static char event[GEN_EVENT_MAX];
	long		n;

	memcpy(event, value, (size_t) len);
	if (envelope == GEN_ENVELOPE_DEBEZIUM)
		n = snprintf(value, GEN_VALUE_MAX, "%s", debezium_head);
	else
		n = snprintf(value, GEN_VALUE_MAX,
					 "%s\"payload\":{\"order_id\":\"%s\",\"external_reference\":\"%s\",\"payload\":\"",
					 record_schema, order->order_id, order->reference);
	n += gen_json_escape(value + n, event, len);
	value[n++] = '"';
	if (envelope == GEN_ENVELOPE_CONNECT_RECORD)
		value[n++] = '}';
	value[n++] = '}';
	return n;
}

/*
 * gen_progress
 *		With --progress, one line on stderr at most every second ('force'
 *		prints regardless, for the final line).
 */
static void
gen_progress(gen_run *run, int force)
{
	int64_t		now = gen_clock_ms(CLOCK_MONOTONIC);
	double		secs;

	if (!run->opts.progress || (!force && now < run->next_progress_ms))
		return;
	run->next_progress_ms = now + 1000;
	secs = (double) (now - run->start_ms) / 1000.0;
	fprintf(stderr, GEN_NAME ": sent %lld/%lld, delivered %lld, failed %lld, "
			"%.0f msg/s, %.1f s\n",
			run->nsent, run->opts.count, run->ndelivered, run->nfailed,
			secs > 0 ? (double) run->ndelivered / secs : 0.0, secs);
}

/*
 * gen_write_message
 *		--output: one line "KIND KEY VALUE" instead of a Kafka message:
 *		KIND as in the manifest, malformed-NAME for a malformed value (NAME:
 *		json, utf8, array, no-order-id), VALUE in hexadecimal or "-" for a
 *		tombstone.  A written message counts as delivered.
 */
static void
gen_write_message(gen_run *run, gen_message *m, const char *key,
				  const char *value, long value_len)
{
	long		i;

	if (m->kind == GEN_KIND_MALFORMED)
		fprintf(run->out, "malformed-%s %s ", gen_malformed_names[m->variant], key);
	else
		fprintf(run->out, "%s %s ", gen_kind_names[m->kind], key);
	if (value_len < 0)
		fputc('-', run->out);
	for (i = 0; i < value_len; i++)
		fprintf(run->out, "%02x", (unsigned char) value[i]);
	fputc('\n', run->out);
	run->nsent++;
	if (ferror(run->out))
	{
		m->state = -1;
		if (run->nfailed++ == 0)
			snprintf(run->first_error, sizeof(run->first_error), "%s",
					 strerror(errno));
		return;
	}
	m->state = 1;
	run->ndelivered++;
}

/*
 * gen_produce
 *		Hand one message to librdkafka, waiting while its queue is full.
 *		A message refused outright counts as failed.
 */
static void
gen_produce(gen_run *run, gen_message *m, const char *key, const char *value,
			long value_len)
{
	rd_kafka_resp_err_t err;
	void	   *payload = value_len < 0 ? NULL : (void *) value;
	size_t		payload_len = value_len < 0 ? 0 : (size_t) value_len;
	const char *hname = run->opts.header_name;
	const char *hvalue = run->opts.header_value;
	ssize_t		hlen = hvalue ? (ssize_t) strlen(hvalue) : 0;

	if (run->out != NULL)
	{
		gen_write_message(run, m, key, value, value_len);
		return;
	}
	for (;;)
	{
		/* librdkafka's macros do not parenthesize: plain variables only */
		if (hname != NULL && payload != NULL)
			err = rd_kafka_producev(run->rk,
									RD_KAFKA_V_TOPIC(run->opts.topic),
									RD_KAFKA_V_KEY(key, strlen(key)),
									RD_KAFKA_V_VALUE(payload, payload_len),
									RD_KAFKA_V_HEADER(hname, hvalue, hlen),
									RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
									RD_KAFKA_V_OPAQUE(m),
									RD_KAFKA_V_END);
		else
			err = rd_kafka_producev(run->rk,
									RD_KAFKA_V_TOPIC(run->opts.topic),
									RD_KAFKA_V_KEY(key, strlen(key)),
									RD_KAFKA_V_VALUE(payload, payload_len),
									RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
									RD_KAFKA_V_OPAQUE(m),
									RD_KAFKA_V_END);
		if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || gen_stop >= 2)
			break;
		rd_kafka_poll(run->rk, 100);
		gen_progress(run, 0);
	}
	run->nsent++;
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		m->state = -1;
		if (run->nfailed++ == 0)
			snprintf(run->first_error, sizeof(run->first_error), "%s",
					 rd_kafka_err2str(err));
	}
}

/*
 * gen_produce_all
 *		Build and produce every planned message, paced to --rate, until
 *		done or a signal arrives.
 */
static void
gen_produce_all(gen_run *run)
{
	static char value[GEN_VALUE_MAX];
	long long	i;

	for (i = 0; i < run->opts.count && !gen_stop; i++)
	{
		gen_message *m = &run->msgs[i];
		const char *key = NULL;
		long		value_len = 0;

		if (run->opts.rate > 0)
		{
			int64_t		due = run->start_ms + (int64_t) ((double) i * 1000.0 / run->opts.rate);
			int64_t		now;

			while (!gen_stop && (now = gen_clock_ms(CLOCK_MONOTONIC)) < due)
			{
				rd_kafka_poll(run->rk, (int) (due - now < 100 ? due - now : 100));
				gen_progress(run, 0);
			}
			if (gen_stop)
				break;
		}
		gen_build(run, m, value, &value_len, &key);
		gen_produce(run, m, key, value, value_len);
		if (run->rk != NULL)
			rd_kafka_poll(run->rk, 0);
		gen_progress(run, 0);
	}
}

/*
 * gen_wait_deliveries
 *		Serve delivery reports until none is outstanding.  Each message
 *		either is delivered or fails within message.timeout.ms; a second
 *		signal purges the queues to end sooner (those messages fail).
 */
static void
gen_wait_deliveries(gen_run *run)
{
	int			purged = 0;

	while (run->rk != NULL && rd_kafka_outq_len(run->rk) > 0)
	{
		if (gen_stop >= 2 && !purged)
		{
			rd_kafka_purge(run->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
			purged = 1;
		}
		rd_kafka_poll(run->rk, 100);
		gen_progress(run, 0);
	}
	gen_progress(run, 1);
}

/*
 * gen_print_account
 *		The run's account on stdout, from delivered messages only: counts
 *		per kind, and what the database must hold once the feeder caught up.
 */
static void
gen_print_account(gen_run *run)
{
	long long	per_kind[GEN_NKINDS] = {0};
	long long	distinct = 0;
	uint8_t    *seen = calloc((size_t) (run->norders > 0 ? run->norders : 1), 1);
	long long	i;

	for (i = 0; i < run->nsent; i++)
	{
		gen_message *m = &run->msgs[i];

		if (m->state != 1)
			continue;
		per_kind[m->kind]++;
		if (seen != NULL &&
			(m->kind == GEN_KIND_VALID || m->kind == GEN_KIND_REDELIVERY ||
			 m->kind == GEN_KIND_CROSS) && !seen[m->order])
		{
			seen[m->order] = 1;
			distinct++;
		}
	}
	free(seen);
	printf("topic=%s\n", run->opts.topic);
	printf("seed=%" PRIu64 "\n", run->opts.seed);
	printf("produced=%lld\n", run->ndelivered);
	printf("distinct_orders=%lld\n", distinct);
	printf("valid_events=%lld\n", per_kind[GEN_KIND_VALID]);
	printf("redeliveries=%lld\n", per_kind[GEN_KIND_REDELIVERY]);
	printf("cross_partition=%lld\n", per_kind[GEN_KIND_CROSS]);
	printf("divergent=%lld\n", per_kind[GEN_KIND_DIVERGENT]);
	printf("malformed=%lld\n", per_kind[GEN_KIND_MALFORMED]);
	printf("tombstones=%lld\n", per_kind[GEN_KIND_TOMBSTONE]);
	printf("expected_rows=%lld\n", distinct);
	printf("expected_duplicates=%lld\n",
		   per_kind[GEN_KIND_REDELIVERY] + per_kind[GEN_KIND_CROSS]);
	printf("expected_quarantined=%lld\n",
		   per_kind[GEN_KIND_MALFORMED] + per_kind[GEN_KIND_DIVERGENT]);
	printf("failed=%lld\n", run->nfailed + (run->opts.count - run->nsent));
	fflush(stdout);
}

/*
 * gen_write_manifest
 *		One line per produced message, in production order:
 *		"partition offset kind order_id external_reference", with the
 *		coordinates from the delivery report (-1 -1 when not delivered) and
 *		"-" for what the value does not carry.  Returns 0 or -1.
 */
static int
gen_write_manifest(gen_run *run)
{
	FILE	   *f = fopen(run->opts.manifest, "w");
	long long	i;

	if (f == NULL)
	{
		fprintf(stderr, GEN_NAME ": could not open manifest \"%s\": %s\n",
				run->opts.manifest, strerror(errno));
		return -1;
	}
	for (i = 0; i < run->nsent; i++)
	{
		const gen_message *m = &run->msgs[i];
		const gen_order *o = &run->orders[m->order];
		int			no_id = m->kind == GEN_KIND_MALFORMED &&
			m->variant == GEN_MALFORMED_NO_ORDER_ID;

		fprintf(f, "%" PRId32 " %" PRId64 " %s %s %s\n",
				m->partition, m->offset, gen_kind_names[m->kind],
				no_id ? "-" : o->order_id,
				m->kind == GEN_KIND_TOMBSTONE ? "-" : o->reference);
	}
	if (ferror(f) | (fclose(f) != 0))
	{
		fprintf(stderr, GEN_NAME ": could not write manifest \"%s\": %s\n",
				run->opts.manifest, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * main
 *		Parse, plan, produce, wait for every delivery report, then print
 *		the account (and the manifest); the exit status says whether every
 *		planned message was delivered.
 */
int
main(int argc, char **argv)
{
	static gen_run run;
	struct sigaction sa;
	int			status = GEN_EXIT_OK;

	gen_parse_options(&run.opts, argc, argv);
	gen_event_set_min_bytes(run.opts.event_bytes);
	run.rng = run.opts.seed;
	run.next_reference = 1;
	if (gen_plan(&run) != 0)
		return GEN_EXIT_USAGE;
	if (run.opts.output != NULL)
	{
		run.out = fopen(run.opts.output, "w");
		if (run.out == NULL)
		{
			fprintf(stderr, GEN_NAME ": could not open \"%s\": %s\n",
					run.opts.output, strerror(errno));
			return GEN_EXIT_FAILED;
		}
	}
	else
		gen_create_producer(&run);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = gen_signal_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	gen_warm_up(&run);
	run.start_ms = gen_clock_ms(CLOCK_MONOTONIC);
	run.next_progress_ms = run.start_ms + 1000;
	gen_produce_all(&run);
	gen_wait_deliveries(&run);
	if (run.out != NULL && (fclose(run.out) != 0 || run.nfailed > 0))
	{
		fprintf(stderr, GEN_NAME ": could not write \"%s\": %s\n",
				run.opts.output, run.nfailed > 0 ? run.first_error : strerror(errno));
		return GEN_EXIT_FAILED;
	}

	gen_print_account(&run);
	if (run.opts.manifest != NULL && gen_write_manifest(&run) != 0)
		status = GEN_EXIT_FAILED;
	if (run.nfailed > 0)
	{
		fprintf(stderr, GEN_NAME ": %lld message(s) not delivered to %s; "
				"first error: %s\n", run.nfailed, run.opts.topic, run.first_error);
		status = GEN_EXIT_FAILED;
	}
	if (run.nsent < run.opts.count)
	{
		fprintf(stderr, GEN_NAME ": interrupted after %lld of %lld messages\n",
				run.nsent, run.opts.count);
		status = GEN_EXIT_FAILED;
	}
	if (run.rk != NULL)
		rd_kafka_destroy(run.rk);
	return status;
}
