/*-------------------------------------------------------------------------
 *
 * kafka.c
 *	  The Kafka consumer of the feeder: created, subscribed, polled and
 *	  closed, and the client's errors (the cluster refusing the feeder
 *	  among them).
 *
 * The rooms around it: kafka_conf.c builds the configuration,
 * kafka_rebalance.c handles assignment changes, kafka_start.c the start
 * positions of assigned partitions, kafka_pause.c what is fetched,
 * kafka_acks.c the offset store and commits, kafka_slots.c the table of
 * partitions and their generations, kafka_metadata.c the topics' handles,
 * watermarks and the cluster id, kafka_status.c the lag and the brokers'
 * reachability.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "feeder.h"
#include "kafka.h"
#include "kafka_int.h"
#include "kafka_log.h"
#include "kafka_refusal.h"
#include "kafka_status.h"
#include "log.h"

/*
 * kafka_conf_value
 *		A property of the client's configuration as librdkafka holds it, in
 *		buf ("" when unset).
 */
static const char *
kafka_conf_value(kafka_consumer *kc, const char *name, char *buf, size_t len)
{
	size_t		size = len;

	buf[0] = '\0';
	if (rd_kafka_conf_get(rd_kafka_conf(kc->rk), name, buf, &size) != RD_KAFKA_CONF_OK)
		buf[0] = '\0';
	return buf;
}

/*
 * kafka_refused_by
 *		Whether err is the cluster refusing the feeder (kafka_refusal.c):
 *		if so, the first time, log what to fix (level fatal,
 *		event=kafka_refused) and make the loop end with exit 3
 *		(kafka_refused).  topic: the topic the error is about, NULL for the
 *		subscription.
 */
static int
kafka_refused_by(kafka_consumer *kc, rd_kafka_resp_err_t err, const char *reason,
				 const char *topic)
{
	kafka_refusal r = kafka_refusal_of_error(err, reason);
	kafka_refusal_context ctx;
	char		protocol[64],
				mechanism[64],
				username[256],
				principal[300],
				hint[1024];
	log_line	line;

	if (r == KAFKA_REFUSAL_NONE)
		return 0;
	if (kc->refused)
		return 1;
	kc->refused = 1;
	ctx.security_protocol = kafka_conf_value(kc, "security.protocol", protocol,
											 sizeof(protocol));
	ctx.mechanism = kafka_conf_value(kc, "sasl.mechanisms", mechanism, sizeof(mechanism));
	ctx.username = kafka_conf_value(kc, "sasl.username", username, sizeof(username));
	ctx.group = kc->group;
	ctx.topic = topic ? topic : kc->topics;
	kafka_refusal_principal(&ctx, principal, sizeof(principal));
	kafka_refusal_hint(r, &ctx, hint, sizeof(hint));
	log_begin(&line, LOG_FATAL, "kafka_refused");
	log_kv_str(&line, "what", kafka_refusal_name(r));
	log_kv_str(&line, "error", rd_kafka_err2name(err));
	log_kv_str(&line, "reason", reason);
	if (r == KAFKA_REFUSAL_AUTHENTICATION)
	{
		log_kv_str(&line, "mechanism", mechanism[0] ? mechanism : "GSSAPI");
		log_kv_str(&line, "user", username);
	}
	if (principal[0])
		log_kv_str(&line, "principal", principal);
	if (r == KAFKA_REFUSAL_GROUP && kc->group)
		log_kv_str(&line, "group", kc->group);
	if (r == KAFKA_REFUSAL_TOPIC && ctx.topic)
		log_kv_str(&line, "topic", ctx.topic);
	log_kv_str(&line, "hint", hint);
	log_end(&line);
	return 1;
}

/*
 * kafka_error_cb
 *		Client-level errors (brokers down, authentication, ...).  librdkafka
 *		recovers from all but fatal ones by itself; a fatal one ends the
 *		feeder with exit code 4, the cluster refusing the feeder (SASL
 *		authentication, a missing ACL) with exit code 3 at once, since no
 *		retry cures it.  "All brokers down" marks Kafka down for the health
 *		endpoint until a sign of life (kafka_status.c).
 */
static void
kafka_error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	kafka_consumer *kc = opaque;
	log_line	line;

	if (err == RD_KAFKA_RESP_ERR__FATAL)
	{
		char		buf[512];
		rd_kafka_resp_err_t orig = rd_kafka_fatal_error(rk, buf, sizeof(buf));

		kc->fatal = 1;
		log_begin(&line, LOG_FATAL, "kafka_fatal_error");
		log_kv_str(&line, "error", rd_kafka_err2name(orig));
		log_kv_str(&line, "reason", buf);
		log_end(&line);
		return;
	}
	kc->stats->kafka_errors++;
	if (kafka_refused_by(kc, (rd_kafka_resp_err_t) err, reason, NULL))
		return;
	if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
		kc->up = 0;
	log_begin(&line, err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN ||
			  err == RD_KAFKA_RESP_ERR__TRANSPORT ? LOG_WARNING : LOG_ERROR,
			  "kafka_error");
	log_kv_str(&line, "error", rd_kafka_err2name((rd_kafka_resp_err_t) err));
	log_kv_str(&line, "reason", reason);
	log_end(&line);
}

/*
 * kafka_read_headers
 *		Point out at the headers an outbox topic needs (the type header, and
 *		content-type for CloudEvents) and a Schema Registry topic's schema id
 *		header (__value_schema_id), as received: their bytes live as long
 *		as the message.  A header given several times counts by its last
 *		value, as Kafka clients read them; one with a null value is absent.
 */
static void
kafka_read_headers(kafka_consumer *kc, rd_kafka_message_t *rkm, batch_msg *out)
{
	rd_kafka_headers_t *hdrs;
	const void *v;
	size_t		n;

	if ((kc->type_header == NULL && !kc->want_content_type && !kc->want_schema_id) ||
		rd_kafka_message_headers(rkm, &hdrs) != RD_KAFKA_RESP_ERR_NO_ERROR)
		return;
	if (kc->want_schema_id &&
		rd_kafka_header_get_last(hdrs, "__value_schema_id", &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR &&
		v != NULL)
	{
		out->schema_id = v;
		out->schema_id_len = n;
	}
	if (kc->type_header != NULL &&
		rd_kafka_header_get_last(hdrs, kc->type_header, &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR &&
		v != NULL)
	{
		out->type = v;
		out->type_len = n;
	}
	if (kc->want_content_type &&
		rd_kafka_header_get_last(hdrs, "content-type", &v, &n) == RD_KAFKA_RESP_ERR_NO_ERROR &&
		v != NULL)
	{
		out->content_type = v;
		out->content_type_len = n;
	}
}

/*
 * kafka_join_topics
 *		The subscribed topics as "a, b" (malloc'd), NULL on out of memory.
 */
static char *
kafka_join_topics(const feeder_config *cfg)
{
	size_t		len = 1;
	char	   *out;
	int			i;

	for (i = 0; i < cfg->ntopics; i++)
		len += strlen(cfg->topics[i]) + 2;
	out = malloc(len);
	if (out == NULL)
		return NULL;
	out[0] = '\0';
	for (i = 0; i < cfg->ntopics; i++)
	{
		if (i > 0)
			strcat(out, ", ");
		strcat(out, cfg->topics[i]);
	}
	return out;
}

/*
 * kafka_open
 *		Create the consumer from conf (ownership passes to librdkafka on
 *		success; destroyed here on failure) and subscribe to the topics.
 *		NULL with err filled on failure (exit code 4).
 */
kafka_consumer *
kafka_open(const feeder_config *cfg, rd_kafka_conf_t *conf, feeder_stats *stats,
		   char *err, size_t errlen)
{
	kafka_consumer *kc = calloc(1, sizeof(kafka_consumer));
	rd_kafka_topic_partition_list_t *topics;
	rd_kafka_resp_err_t rerr;
	int			i;

	if (kc == NULL)
	{
		snprintf(err, errlen, "out of memory");
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	kc->stats = stats;
	kc->up = -1;
	kc->group = strdup(cfg->group);
	kc->topics = kafka_join_topics(cfg);
	if (kc->group == NULL || kc->topics == NULL)
	{
		snprintf(err, errlen, "out of memory");
		rd_kafka_conf_destroy(conf);
		free(kc->group);
		free(kc->topics);
		free(kc);
		return NULL;
	}
	kc->consumer_protocol = strcmp(cfg->group_protocol, "consumer") == 0;
	kc->type_header = cfg->type_header;
	kc->want_content_type = cfg->envelope != NULL &&
		strcmp(cfg->envelope, "cloudevents") == 0;
	kc->want_schema_id = cfg->value_format != NULL &&
		strcmp(cfg->value_format, "confluent") == 0;
	rd_kafka_conf_set_opaque(conf, kc);
	if (cfg->metrics_listen)
		rd_kafka_conf_set_stats_cb(conf, kafka_stats_cb);
	rd_kafka_conf_set_rebalance_cb(conf, kafka_rebalance_cb);
	rd_kafka_conf_set_error_cb(conf, kafka_error_cb);
	rd_kafka_conf_set_log_cb(conf, kafka_log_cb);
	rd_kafka_conf_set_offset_commit_cb(conf, kafka_offset_commit_cb);

	kc->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, errlen);
	if (kc->rk == NULL)
	{
		rd_kafka_conf_destroy(conf);
		free(kc->group);
		free(kc->topics);
		free(kc);
		return NULL;
	}
	/* conf is owned by rk from here */
	rd_kafka_poll_set_consumer(kc->rk);
	kc->wake_q = rd_kafka_queue_get_consumer(kc->rk);

	topics = rd_kafka_topic_partition_list_new(cfg->ntopics);
	for (i = 0; i < cfg->ntopics; i++)
		rd_kafka_topic_partition_list_add(topics, cfg->topics[i],
										  RD_KAFKA_PARTITION_UA);
	rerr = rd_kafka_subscribe(kc->rk, topics);
	rd_kafka_topic_partition_list_destroy(topics);
	if (rerr)
		snprintf(err, errlen, "could not subscribe: %s", rd_kafka_err2str(rerr));
	else
	{
		kafka_hold_topics(kc, cfg);
		if (kafka_status_start(kc, err, errlen) == 0)
			return kc;
	}
	kafka_release_topics(kc);
	if (kc->wake_q)
		rd_kafka_queue_destroy(kc->wake_q);
	rd_kafka_destroy(kc->rk);
	free(kc->group);
	free(kc->topics);
	free(kc);
	return NULL;
}

/*
 * kafka_set_start_fn
 *		Install the function that chooses start offsets on assignment.
 */
void
kafka_set_start_fn(kafka_consumer *kc, kafka_start_fn fn, void *arg)
{
	kc->start_fn = fn;
	kc->start_arg = arg;
}

/*
 * kafka_set_quiesce_fn
 *		Install the function every rebalance calls first (see the file
 *		header); NULL removes it.
 */
void
kafka_set_quiesce_fn(kafka_consumer *kc, void (*fn) (void *arg), void *arg)
{
	kc->quiesce_fn = fn;
	kc->quiesce_arg = arg;
}

/*
 * kafka_wake
 *		From any thread: make a kafka_poll waiting now, or the next one,
 *		return at once (with no message if none is ready).
 */
void
kafka_wake(kafka_consumer *kc)
{
	if (kc->wake_q)
		rd_kafka_queue_yield(kc->wake_q);
}

/*
 * kafka_poll
 *		Serve callbacks (rebalance, errors) and return at most one message:
 *		1 with *out filled (handle is the rd_kafka_message_t, to release
 *		with kafka_release), 0 when none came within timeout_ms.  Consumer
 *		errors are logged here and never returned.
 */
int
kafka_poll(kafka_consumer *kc, int timeout_ms, batch_msg *out)
{
	rd_kafka_message_t *rkm = rd_kafka_consumer_poll(kc->rk, timeout_ms);
	int			s;

	if (kc->starts_pending)
		kafka_store_starts(kc);

	if (rkm == NULL)
		return 0;
	if (rkm->err)
	{
		if (rkm->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
		{
			log_line	line;

			kc->stats->kafka_errors++;
			if (kafka_refused_by(kc, rkm->err, rd_kafka_message_errstr(rkm),
								 rkm->rkt ? rd_kafka_topic_name(rkm->rkt) : NULL))
			{
				rd_kafka_message_destroy(rkm);
				return 0;
			}
			log_begin(&line, LOG_WARNING, "consumer_error");
			if (rkm->rkt)
			{
				log_kv_str(&line, "topic", rd_kafka_topic_name(rkm->rkt));
				log_kv_int(&line, "partition", rkm->partition);
			}
			log_kv_str(&line, "error", rd_kafka_err2name(rkm->err));
			log_kv_str(&line, "reason", rd_kafka_message_errstr(rkm));
			log_end(&line);
			if (rkm->err == RD_KAFKA_RESP_ERR__FATAL)
				kc->fatal = 1;
		}
		rd_kafka_message_destroy(rkm);
		return 0;
	}

	memset(out, 0, sizeof(*out));
	out->handle = rkm;
	out->topic = rd_kafka_topic_name(rkm->rkt);
	out->partition = rkm->partition;
	out->offset = rkm->offset;
	out->value = rkm->payload;
	out->value_len = rkm->len;
	out->key = rkm->key;
	out->key_len = rkm->key_len;
	kafka_read_headers(kc, rkm, out);
	s = kafka_slot_find(kc, out->topic, out->partition);
	out->slot = s;
	if (s >= 0)
	{
		out->generation = kc->slots[s].generation;
		if (kc->slots[s].first_seen < 0)
			kc->slots[s].first_seen = rkm->offset;
		if (rkm->offset + 1 > kc->slots[s].polled_next)
			kc->slots[s].polled_next = rkm->offset + 1;
	}
	kc->stats->consumed++;
	kc->up = 1;
	return 1;
}

/*
 * kafka_release
 *		batch_release_fn for messages from kafka_poll.
 */
void
kafka_release(void *handle)
{
	if (handle)
		rd_kafka_message_destroy((rd_kafka_message_t *) handle);
}

/*
 * kafka_fatal
 *		True after librdkafka raised a fatal error, or the cluster refused
 *		the feeder (kafka_refused): the loop ends.
 */
int
kafka_fatal(const kafka_consumer *kc)
{
	return kc->fatal || kc->refused;
}

/*
 * kafka_refused
 *		True after the cluster refused the feeder (SASL authentication, a
 *		missing ACL): exit 3, the log line saying what to fix.
 */
int
kafka_refused(const kafka_consumer *kc)
{
	return kc->refused;
}

/*
 * kafka_close
 *		Stop the lag asker, commit what is stored, leave the group (the
 *		revoke callback runs once more) and destroy the client.
 */
void
kafka_close(kafka_consumer *kc)
{
	rd_kafka_resp_err_t err;
	int			i;

	if (kc == NULL)
		return;
	kc->quiesce_fn = NULL;
	kc->start_fn = NULL;
	kafka_status_stop(kc);
	kafka_commit_sync(kc, "shutdown");
	err = rd_kafka_consumer_close(kc->rk);
	if (err)
	{
		log_line	line;

		log_begin(&line, LOG_WARNING, "consumer_close_failed");
		log_kv_str(&line, "error", rd_kafka_err2str(err));
		log_end(&line);
	}
	kafka_release_topics(kc);
	if (kc->wake_q)
		rd_kafka_queue_destroy(kc->wake_q);
	rd_kafka_destroy(kc->rk);
	for (i = 0; i < kc->nslots; i++)
		free(kc->slots[i].topic);
	free(kc->slots);
	free(kc->group);
	free(kc->topics);
	free(kc);
}
