/*-------------------------------------------------------------------------
 *
 * kafka.c
 *	  Kafka side of the feeder: consumer, rebalance callback, pause and
 *	  resume, offset store and commit.
 *
 * Offsets: enable.auto.offset.store is pinned to false, so librdkafka
 * stores nothing by itself; kafka_store_offsets() stores offset+1 of the
 * last message of each partition of a batch, called only after the batch's
 * database transaction committed; when everything consumed of a partition
 * is stored, kafka_ack_positions moves its stored offset up to the
 * consumer's position, past the transaction markers and aborted messages
 * librdkafka never hands over, and says which moves it made, so that the
 * database's position follows (advances.c, status.c).  enable.auto.commit stays true: the
 * background commit only ever sends stored offsets.  On revoke and at
 * shutdown the stored offsets are committed synchronously; when the loop
 * finds nothing to fetch, asynchronously (kafka_commit_async).
 *
 * Assignment generations: every partition the group gives us gets a slot
 * whose generation changes at each assignment.  A message remembers the
 * generation it was consumed in; if its partition was revoked since (even
 * if assigned back), its offset is not stored, because the partition's
 * committed position was settled at the revoke and may belong to another
 * member by now.  The rebalance callback runs only inside
 * rd_kafka_consumer_poll(), and first calls the owner's quiesce function,
 * which lets every open transaction end and stores the offsets of those
 * that committed, so a revoke can never slip between a COMMIT and the
 * offset store that follows it.
 *
 * Start positions: the database is the authority on where each partition
 * resumes (positions.c decides).  On assignment the start offsets go into
 * the list given to rd_kafka_assign / rd_kafka_incremental_assign, as
 * librdkafka wants them; when they cannot be decided (the database is
 * unreachable, or one partition's offsets cannot be asked of its leader),
 * those partitions are assigned paused (waiting_start) and started later
 * with kafka_start_partition, which seeks.  A partition whose start failed
 * (kafka_defer_start) is not counted as waiting for an attempt until its
 * backoff has passed, so that one unreachable partition costs one bounded
 * query per backoff, and the others go on.  Restarting a
 * partition gives its slot a new generation, so that the messages held
 * from its old position are dropped like those of a revoked partition.
 * A partition started at the database's position has that offset stored
 * for the group at once (kafka_store_starts): the database holds every
 * event below it, and the group's committed offset, which lag tools read,
 * must not stay behind it when nothing new arrives.
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
#include "clock.h"
#include "watermarks.h"

/* The longest a start position waits for a partition's offsets. */
#define KAFKA_WATERMARKS_TIMEOUT_MS 2000

static int	kafka_reconcile_pauses(kafka_consumer *kc,
								   const rd_kafka_topic_partition_list_t *parts);
static void kafka_slot_restart(kafka_consumer *kc, kafka_slot *slot, int64_t db_next);
static void kafka_store_starts(kafka_consumer *kc);
static void kafka_hold_topics(kafka_consumer *kc, const feeder_config *cfg);
static void kafka_release_topics(kafka_consumer *kc);

/*
 * kafka_slot_find
 *		The slot of (topic, partition), created unassigned if missing; -1
 *		on out of memory.  Slots are never removed, so an index stays valid
 *		for the life of the consumer.
 */
int
kafka_slot_find(kafka_consumer *kc, const char *topic, int32_t partition)
{
	kafka_slot *slots;
	int			i;

	for (i = 0; i < kc->nslots; i++)
		if (kc->slots[i].partition == partition &&
			strcmp(kc->slots[i].topic, topic) == 0)
			return i;
	slots = realloc(kc->slots, sizeof(kafka_slot) * (size_t) (kc->nslots + 1));
	if (slots == NULL)
		return -1;
	kc->slots = slots;
	memset(&slots[kc->nslots], 0, sizeof(kafka_slot));
	slots[kc->nslots].topic = strdup(topic);
	if (slots[kc->nslots].topic == NULL)
		return -1;
	slots[kc->nslots].partition = partition;
	slots[kc->nslots].acked = -1;
	slots[kc->nslots].first_seen = -1;
	slots[kc->nslots].polled_next = -1;
	slots[kc->nslots].store_to = -1;
	slots[kc->nslots].committed = -1;
	slots[kc->nslots].db_next = -1;
	slots[kc->nslots].start_store = -1;
	slots[kc->nslots].gap_first = -1;
	slots[kc->nslots].last_lag = -1;
	kafka_slot_forget_asked(&slots[kc->nslots]);
	return kc->nslots++;
}

/*
 * kafka_format_partitions
 *		"topic [p], topic [p]" for a partition list, for logs.
 */
static void
kafka_format_partitions(const rd_kafka_topic_partition_list_t *parts,
						char *buf, size_t len)
{
	size_t		off = 0;
	int			i;

	buf[0] = '\0';
	for (i = 0; parts && i < parts->cnt && off < len; i++)
	{
		int			n = snprintf(buf + off, len - off, "%s%s [%d]",
								 i ? ", " : "", parts->elems[i].topic,
								 (int) parts->elems[i].partition);

		if (n < 0)
			break;
		off += (size_t) n;
	}
}

/*
 * kafka_log_partitions
 *		One line for an assignment change.
 */
static void
kafka_log_partitions(const char *event, const char *protocol,
					 const rd_kafka_topic_partition_list_t *parts, int lost)
{
	char		list[3000];
	log_line	line;

	kafka_format_partitions(parts, list, sizeof(list));
	log_begin(&line, LOG_INFO, event);
	log_kv_str(&line, "protocol", protocol);
	log_kv_int(&line, "count", parts ? parts->cnt : 0);
	if (lost)
		log_kv_str(&line, "lost", "true");
	log_kv_str(&line, "partitions", list);
	log_end(&line);
}

/*
 * kafka_rebalance_cb
 *		Assignment changes, for both protocols.  EAGER hands the whole
 *		assignment over each time (assign / assign(NULL)); COOPERATIVE hands
 *		only the difference (incremental_assign / incremental_unassign).
 *		Before partitions go, their stored offsets (of committed batches
 *		only) are committed synchronously, unless the assignment was lost,
 *		in which case another member may already own them and a commit
 *		would fail anyway.  The start offsets of new partitions come from
 *		the start function (the database's positions); partitions whose
 *		start cannot be decided yet (all of them when it fails, else those
 *		it left at RD_KAFKA_OFFSET_INVALID), and all partitions assigned
 *		while the feeder is paused for a database outage, are paused at
 *		once, and partitions still paused from an earlier assignment are
 *		resumed (kafka_reconcile_pauses).
 */
static void
kafka_rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
				   rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	kafka_consumer *kc = opaque;
	const char *protocol = rd_kafka_rebalance_protocol(rk);
	int			cooperative = protocol && strcmp(protocol, "COOPERATIVE") == 0;
	rd_kafka_error_t *error = NULL;
	rd_kafka_resp_err_t ret = RD_KAFKA_RESP_ERR_NO_ERROR;
	int			decided = 1;
	int			i;

	if (kc->quiesce_fn)
		kc->quiesce_fn(kc->quiesce_arg);
	kc->rebalanced = 1;
	switch (err)
	{
		case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
			kafka_log_partitions("partitions_assigned", protocol ? protocol : "NONE",
								 parts, 0);
			kc->up = 1;			/* the group coordinator answered */
			kc->generation++;
			if (kc->start_fn && parts->cnt > 0)
				decided = kc->start_fn(kc->start_arg, parts) == 0;
			for (i = 0; i < parts->cnt; i++)
			{
				int			s = kafka_slot_find(kc, parts->elems[i].topic,
												parts->elems[i].partition);

				if (s < 0)
					continue;
				kc->slots[s].assigned = 1;
				kc->slots[s].generation = kc->generation;
				kc->slots[s].acked = -1;
				kc->slots[s].first_seen = -1;
				kc->slots[s].polled_next = -1;
				kc->slots[s].committed = -1;
				kc->slots[s].waiting_start = !decided ||
					parts->elems[i].offset == RD_KAFKA_OFFSET_INVALID;
				if (!kc->slots[s].waiting_start)
				{
					kc->slots[s].start_failures = 0;
					kc->slots[s].gap_first = -1;
				}
				kc->slots[s].db_next = !kc->slots[s].waiting_start &&
					parts->elems[i].offset >= 0 ? parts->elems[i].offset : -1;
				kc->slots[s].start_store = kc->slots[s].db_next;
				kafka_slot_forget_asked(&kc->slots[s]);
				if (kc->slots[s].start_store >= 0)
					kc->starts_pending = 1;
			}
			if (cooperative)
				error = rd_kafka_incremental_assign(rk, parts);
			else
				ret = rd_kafka_assign(rk, parts);
			kafka_reconcile_pauses(kc, parts);
			break;

		case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
			{
				int			lost = rd_kafka_assignment_lost(rk);

				kafka_log_partitions("partitions_revoked", protocol ? protocol : "NONE",
									 parts, lost);
				if (!lost)
					kafka_commit_sync(kc, "revoke");
				for (i = 0; i < parts->cnt; i++)
				{
					int			s = kafka_slot_find(kc, parts->elems[i].topic,
													parts->elems[i].partition);

					if (s >= 0)
						kc->slots[s].assigned = 0;
				}
				if (cooperative)
					error = rd_kafka_incremental_unassign(rk, parts);
				else
					ret = rd_kafka_assign(rk, NULL);
			}
			break;

		default:
			{
				log_line	line;

				log_begin(&line, LOG_ERROR, "rebalance_failed");
				log_kv_str(&line, "error", rd_kafka_err2str(err));
				log_end(&line);
				for (i = 0; i < kc->nslots; i++)
					kc->slots[i].assigned = 0;
				rd_kafka_assign(rk, NULL);
			}
			break;
	}

	if (error || ret)
	{
		log_line	line;

		log_begin(&line, LOG_ERROR, "assign_failed");
		log_kv_str(&line, "error", error ? rd_kafka_error_string(error)
				   : rd_kafka_err2str(ret));
		log_end(&line);
		if (error)
			rd_kafka_error_destroy(error);
	}
}

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
	kafka_refusal r = kafka_refusal_of(err);
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
 * kafka_offset_commit_cb
 *		Result of every commit, background ones included: failures are
 *		worth a warning (the offsets stay stored and are committed later).
 *		offsets_committed counts the partitions whose committed offset
 *		moved forward (librdkafka may report the same offset again).
 */
static void
kafka_offset_commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
					   rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
	kafka_consumer *kc = opaque;
	char		list[3000];
	log_line	line;
	size_t		off = 0;
	int			i;

	(void) rk;
	if (err == RD_KAFKA_RESP_ERR__NO_OFFSET)
		return;
	list[0] = '\0';
	for (i = 0; offsets && i < offsets->cnt && off < sizeof(list); i++)
	{
		const rd_kafka_topic_partition_t *p = &offsets->elems[i];
		int			s;
		int			n;

		if (err == RD_KAFKA_RESP_ERR_NO_ERROR && p->err == RD_KAFKA_RESP_ERR_NO_ERROR &&
			p->offset >= 0 &&
			(s = kafka_slot_find(kc, p->topic, p->partition)) >= 0 &&
			p->offset > kc->slots[s].committed)
		{
			kc->slots[s].committed = p->offset;
			kc->stats->offsets_committed++;
		}
		n = snprintf(list + off, sizeof(list) - off, "%s%s [%d] @%lld",
								 i ? ", " : "", offsets->elems[i].topic,
								 (int) offsets->elems[i].partition,
								 (long long) offsets->elems[i].offset);

		if (n < 0)
			break;
		off += (size_t) n;
	}
	log_begin(&line, err ? LOG_WARNING : LOG_DEBUG,
			  err ? "commit_failed" : "offsets_committed");
	if (err)
		log_kv_str(&line, "error", rd_kafka_err2str(err));
	log_kv_str(&line, "offsets", list);
	log_end(&line);
}

/*
 * kafka_offset_reset_safe
 *		Whether the auto.offset.reset librdkafka finally holds starts a
 *		partition without a committed offset at its beginning: the value as
 *		librdkafka understood it, whatever spelling or property name gave
 *		it (config_refused_value names the usual ones earlier, with the
 *		file or flag).  False with the reason in err otherwise.
 */
static int
kafka_offset_reset_safe(rd_kafka_conf_t *conf, char *err, size_t errlen)
{
	char		value[64];
	size_t		size = sizeof(value);

	if (rd_kafka_conf_get(conf, "auto.offset.reset", value, &size) != RD_KAFKA_CONF_OK)
		return 1;
	if (strcmp(value, "largest") != 0)
		return 1;
	snprintf(err, errlen, "auto.offset.reset is set to the end of the partition (%s): %s",
			 value, CONFIG_OFFSET_RESET_REFUSED);
	return 0;
}

/*
 * kafka_build_conf
 *		librdkafka configuration: our settings, then the user's properties
 *		(file first, then -X), then the pinned ones again.  With metrics on,
 *		statistics are reported every 5 s (unless the user says otherwise)
 *		so that brokers coming back are noticed while nothing is fetched.  A property
 *		librdkafka rejects is a usage error: NULL with the reason in err.
 */
rd_kafka_conf_t *
kafka_build_conf(const feeder_config *cfg, char *err, size_t errlen)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char		errstr[512];
	int			i;
	static const char *const pinned[][2] = {
		{"enable.auto.offset.store", "false"},
		{"enable.auto.commit", "true"},
		{"isolation.level", "read_committed"},
	};

#define SET(k, v) \
	do { \
		if (rd_kafka_conf_set(conf, (k), (v), errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK) \
		{ \
			snprintf(err, errlen, "%s: %s", (k), errstr); \
			rd_kafka_conf_destroy(conf); \
			return NULL; \
		} \
	} while (0)

	SET("bootstrap.servers", cfg->brokers);
	SET("group.id", cfg->group);
	SET("client.id", cfg->client_id);
	SET("auto.offset.reset", "earliest");
	if (cfg->metrics_listen)
		SET("statistics.interval.ms", "5000");	/* the user's value wins */
	for (i = 0; i < cfg->nprops; i++)
	{
		if (rd_kafka_conf_set(conf, cfg->props[i].key, cfg->props[i].value,
							  errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
		{
			snprintf(err, errlen, "-X %s: %s", cfg->props[i].key, errstr);
			rd_kafka_conf_destroy(conf);
			return NULL;
		}
	}
	for (i = 0; i < (int) (sizeof(pinned) / sizeof(pinned[0])); i++)
		SET(pinned[i][0], pinned[i][1]);
#undef SET
	if (!kafka_offset_reset_safe(conf, err, errlen))
	{
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
	return conf;
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
 * kafka_hold_topics
 *		Create a handle of every subscribed topic as soon as the consumer
 *		subscribes, and hold it until the consumer closes.  librdkafka then
 *		learns each topic's partitions and leaders from its first metadata
 *		answer, during the group join.  Without a handle it creates the
 *		partitions only at the first assignment, and a partition started
 *		at a logical offset (the earliest, for a group without positions)
 *		before its leader is known waits for librdkafka's offset query
 *		retry: up to a second, before the partition's first fetch.  A
 *		handle that cannot be created is left out; nothing fails here.
 */
static void
kafka_hold_topics(kafka_consumer *kc, const feeder_config *cfg)
{
	int			i;

	kc->rkts = calloc((size_t) (cfg->ntopics > 0 ? cfg->ntopics : 1), sizeof(*kc->rkts));
	if (kc->rkts == NULL)
		return;
	for (i = 0; i < cfg->ntopics; i++)
		if ((kc->rkts[kc->nrkts] = rd_kafka_topic_new(kc->rk, cfg->topics[i], NULL)) != NULL)
			kc->nrkts++;
}

/*
 * kafka_release_topics
 *		Destroy the handles kafka_hold_topics holds.
 */
static void
kafka_release_topics(kafka_consumer *kc)
{
	int			i;

	for (i = 0; i < kc->nrkts; i++)
		rd_kafka_topic_destroy(kc->rkts[i]);
	free(kc->rkts);
	kc->rkts = NULL;
	kc->nrkts = 0;
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
 * kafka_assigned
 *		The partitions assigned now, in a malloc'ed array (*out, to free);
 *		their count, or -1 on out of memory.
 */
int
kafka_assigned(kafka_consumer *kc, kafka_assigned_partition **out)
{
	int			i,
				n = 0;

	*out = calloc((size_t) (kc->nslots > 0 ? kc->nslots : 1),
				  sizeof(kafka_assigned_partition));
	if (*out == NULL)
		return -1;
	for (i = 0; i < kc->nslots; i++)
	{
		if (!kc->slots[i].assigned)
			continue;
		(*out)[n].topic = kc->slots[i].topic;
		(*out)[n].partition = kc->slots[i].partition;
		(*out)[n].db_next = kc->slots[i].db_next;
		(*out)[n].waiting_start = kc->slots[i].waiting_start;
		(*out)[n].start_due = kc->slots[i].start_retry_ms <= clock_now_ms();
		(*out)[n].gap_first = kc->slots[i].gap_first;
		(*out)[n].slot = i;
		n++;
	}
	return n;
}

/*
 * kafka_waiting_start
 *		How many assigned partitions wait for their start position and may
 *		be tried now: a partition whose start failed is not counted until
 *		its backoff has passed (kafka_defer_start).
 */
int
kafka_waiting_start(const kafka_consumer *kc)
{
	int64_t		now = clock_now_ms();
	int			i,
				n = 0;

	for (i = 0; i < kc->nslots; i++)
		if (kc->slots[i].assigned && kc->slots[i].waiting_start &&
			kc->slots[i].start_retry_ms <= now)
			n++;
	return n;
}

/*
 * kafka_defer_start
 *		The start of a partition could not be decided or made now (its
 *		offsets could not be asked of its leader, its seek failed): it
 *		waits for its start, paused, and is not tried again before a delay
 *		from policy (backoff_delay_ms of its failures in a row, in
 *		*delay_ms).  A partition that had started is put back to waiting:
 *		a new generation drops the messages held from it, nothing of it is
 *		acknowledged, and kafka_start_partition starts it again.  Called
 *		from the start function, before the partition is assigned, only the
 *		delay is recorded (the rebalance callback pauses it).  Returns its
 *		failures in a row, this one included; -1 on out of memory.
 */
int
kafka_defer_start(kafka_consumer *kc, const char *topic, int32_t partition,
				  const backoff_policy *policy, int *delay_ms)
{
	int			s = kafka_slot_find(kc, topic, partition);
	kafka_slot *slot;

	if (s < 0)
		return -1;
	slot = &kc->slots[s];
	*delay_ms = backoff_delay_ms(policy, slot->start_failures, backoff_random());
	slot->start_failures++;
	slot->start_retry_ms = clock_now_ms() + *delay_ms;
	if (slot->assigned && !slot->waiting_start)
	{
		rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);

		kafka_slot_restart(kc, slot, -1);
		slot->waiting_start = 1;
		rd_kafka_topic_partition_list_add(list, topic, partition);
		kafka_reconcile_pauses(kc, list);
		rd_kafka_topic_partition_list_destroy(list);
	}
	return slot->start_failures;
}

/*
 * kafka_mark_gap
 *		Remember that a partition waits (kafka_defer_start) on a position
 *		gap that begins at first_lost, the database's position below the
 *		partition's earliest offset, until kafka_start_partition starts it:
 *		the gauge of partitions waiting on a gap counts it, and the caller
 *		knows, when it starts, where the gap began.  1 when the gap is new
 *		to the partition, 0 when it is the one already marked, -1 on out of
 *		memory.
 */
int
kafka_mark_gap(kafka_consumer *kc, const char *topic, int32_t partition,
			   int64_t first_lost)
{
	int			s = kafka_slot_find(kc, topic, partition);
	int			fresh;

	if (s < 0)
		return -1;
	fresh = kc->slots[s].gap_first != first_lost;
	kc->slots[s].gap_first = first_lost;
	return fresh;
}

/*
 * kafka_slot_restart
 *		A new generation for an assigned partition (the messages held from
 *		its old position are dropped at the next prune), starting at
 *		db_next (-1: not known), stored for the group when known.
 */
static void
kafka_slot_restart(kafka_consumer *kc, kafka_slot *slot, int64_t db_next)
{
	kc->generation++;
	slot->generation = kc->generation;
	slot->acked = -1;
	slot->first_seen = -1;
	slot->polled_next = -1;
	slot->db_next = db_next;
	slot->start_store = db_next;
	if (slot->start_store >= 0)
		kc->starts_pending = 1;
	kc->rebalanced = 1;
}

/*
 * kafka_start_partition
 *		(Re)start an assigned partition at offset: a real offset or
 *		RD_KAFKA_OFFSET_BEGINNING (seek), or RD_KAFKA_OFFSET_INVALID for
 *		where it stands (only resumes a waiting partition).  The slot gets a
 *		new generation, so the messages held from the old position are
 *		dropped at the next prune (kafka_take_rebalanced), and a partition
 *		that waited for its start is resumed unless the feeder is paused.
 *		0 on success, -1 when the seek failed (the caller retries).
 */
int
kafka_start_partition(kafka_consumer *kc, const char *topic, int32_t partition,
					  int64_t offset)
{
	int			s = kafka_slot_find(kc, topic, partition);
	rd_kafka_topic_partition_list_t *list;
	int			rc = 0;

	if (s < 0 || !kc->slots[s].assigned)
		return -1;
	list = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(list, topic, partition)->offset = offset;
	if (offset != RD_KAFKA_OFFSET_INVALID)
	{
		rd_kafka_error_t *error = rd_kafka_seek_partitions(kc->rk, list, 5000);

		if (error || list->elems[0].err)
		{
			log_line	line;

			log_begin(&line, LOG_WARNING, "seek_failed");
			log_kv_fmt(&line, "at", "%s [%d] @%lld", topic, (int) partition,
					   (long long) offset);
			log_kv_str(&line, "error", error ? rd_kafka_error_string(error) :
					   rd_kafka_err2str(list->elems[0].err));
			log_end(&line);
			if (error)
				rd_kafka_error_destroy(error);
			rc = -1;
		}
	}
	if (rc == 0)
	{
		kafka_slot_restart(kc, &kc->slots[s], offset >= 0 ? offset : -1);
		kc->slots[s].start_failures = 0;
		kc->slots[s].gap_first = -1;
		if (kc->slots[s].waiting_start)
		{
			kc->slots[s].waiting_start = 0;
			kafka_reconcile_pauses(kc, list);
		}
	}
	rd_kafka_topic_partition_list_destroy(list);
	return rc;
}

/*
 * kafka_watermarks
 *		Ask the partition's leader for its earliest and next offsets (two
 *		broker round trips, KAFKA_WATERMARKS_TIMEOUT_MS at most in all, a
 *		deadline that holds even when the leader is down: watermarks.c).  0
 *		on success, else librdkafka's error code (rd_kafka_err2str says
 *		what was wrong).
 */
int
kafka_watermarks(kafka_consumer *kc, const char *topic, int32_t partition,
				 int64_t *low, int64_t *high)
{
	return (int) watermarks_query(kc->rk, topic, partition,
								  KAFKA_WATERMARKS_TIMEOUT_MS, low, high);
}

/*
 * kafka_cluster_id
 *		The cluster id the brokers report (Metadata's ClusterId), from
 *		librdkafka's cached metadata (there as soon as any metadata arrived:
 *		always before an assignment) or, when none has arrived yet, waiting
 *		at most 1 s for it; malloc'd, NULL when it is not known (brokers
 *		unreachable so far).
 */
char *
kafka_cluster_id(kafka_consumer *kc)
{
	char	   *id = rd_kafka_clusterid(kc->rk, 1000);
	char	   *copy;

	if (id == NULL)
		return NULL;
	copy = strdup(id);
	rd_kafka_mem_free(kc->rk, id);
	return copy;
}

/*
 * kafka_store_starts
 *		Store, for the next commit, the start offset of every partition
 *		started at the database's position (outside the rebalance callback,
 *		once librdkafka has the assignment).  A store refused now is tried
 *		again at the next poll.
 */
static void
kafka_store_starts(kafka_consumer *kc)
{
	rd_kafka_topic_partition_list_t *list;
	int			i;

	kc->starts_pending = 0;
	list = rd_kafka_topic_partition_list_new(kc->nslots > 0 ? kc->nslots : 1);
	for (i = 0; i < kc->nslots; i++)
	{
		if (!kc->slots[i].assigned)
			kc->slots[i].start_store = -1;
		if (kc->slots[i].start_store < 0)
			continue;
		rd_kafka_topic_partition_list_add(list, kc->slots[i].topic,
										  kc->slots[i].partition)->offset =
			kc->slots[i].start_store;
	}
	if (list->cnt > 0)
	{
		rd_kafka_resp_err_t err = rd_kafka_offsets_store(kc->rk, list);

		for (i = 0; i < list->cnt; i++)
		{
			rd_kafka_topic_partition_t *p = &list->elems[i];
			int			s = kafka_slot_find(kc, p->topic, p->partition);

			if (s < 0)
				continue;
			if (err == RD_KAFKA_RESP_ERR_NO_ERROR && p->err == RD_KAFKA_RESP_ERR_NO_ERROR)
			{
				if (kc->slots[s].acked < 0)
					kc->slots[s].acked = p->offset;
				kc->slots[s].start_store = -1;
				kc->uncommitted = 1;
			}
			else
				kc->starts_pending = 1;
		}
	}
	rd_kafka_topic_partition_list_destroy(list);
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
 * kafka_take_rebalanced
 *		True once after each assignment change, so the caller can drop the
 *		held messages of revoked partitions.
 */
int
kafka_take_rebalanced(kafka_consumer *kc)
{
	int			r = kc->rebalanced;

	kc->rebalanced = 0;
	return r;
}

/*
 * kafka_msg_revoked
 *		True when m's partition is no longer assigned in the generation m
 *		was consumed in (a predicate for batch_remove_if).
 */
int
kafka_msg_revoked(const batch_msg *m, void *arg)
{
	const kafka_consumer *kc = arg;

	if (m->slot < 0 || m->slot >= kc->nslots)
		return 1;
	return !kc->slots[m->slot].assigned ||
		kc->slots[m->slot].generation != m->generation;
}

/*
 * kafka_store_offsets
 *		Acknowledge a committed batch: store offset+1 of its last message in
 *		each partition still assigned in the generation the messages came
 *		from.  Returns the number of partitions stored.
 */
int
kafka_store_offsets(kafka_consumer *kc, const batch *b)
{
	rd_kafka_topic_partition_list_t *list;
	rd_kafka_resp_err_t err;
	int			i,
				n = 0,
				skipped = 0;

	for (i = 0; i < b->count; i++)
	{
		const batch_msg *m = &b->msgs[i];

		if (kafka_msg_revoked(m, kc))
		{
			skipped++;
			continue;
		}
		if (m->offset + 1 > kc->slots[m->slot].store_to)
			kc->slots[m->slot].store_to = m->offset + 1;
	}
	if (skipped)
	{
		log_line	line;

		log_begin(&line, LOG_INFO, "ack_skipped");
		log_kv_int(&line, "messages", skipped);
		log_kv_str(&line, "reason", "partition revoked while the batch ran");
		log_end(&line);
	}

	list = rd_kafka_topic_partition_list_new(kc->nslots > 0 ? kc->nslots : 1);
	for (i = 0; i < kc->nslots; i++)
	{
		if (kc->slots[i].store_to < 0)
			continue;
		rd_kafka_topic_partition_list_add(list, kc->slots[i].topic,
										  kc->slots[i].partition)->offset =
			kc->slots[i].store_to;
	}
	if (list->cnt > 0)
	{
		err = rd_kafka_offsets_store(kc->rk, list);
		for (i = 0; i < list->cnt; i++)
		{
			rd_kafka_topic_partition_t *p = &list->elems[i];
			int			s = kafka_slot_find(kc, p->topic, p->partition);

			if (s >= 0 && p->offset > kc->slots[s].db_next)
				kc->slots[s].db_next = p->offset;	/* the batch committed */
			if (err == RD_KAFKA_RESP_ERR_NO_ERROR && p->err == RD_KAFKA_RESP_ERR_NO_ERROR)
			{
				if (s >= 0)
					kc->slots[s].acked = p->offset;
				kc->uncommitted = 1;
				n++;
			}
			else
			{
				log_line	line;

				log_begin(&line, LOG_WARNING, "offset_store_failed");
				log_kv_fmt(&line, "at", "%s [%d] @%lld", p->topic,
						   (int) p->partition, (long long) p->offset);
				log_kv_str(&line, "error", rd_kafka_err2str(p->err ? p->err : err));
				log_end(&line);
			}
		}
	}
	rd_kafka_topic_partition_list_destroy(list);
	for (i = 0; i < kc->nslots; i++)
		kc->slots[i].store_to = -1;
	return n;
}

/*
 * kafka_ack_positions
 *		Acknowledge, past what the last batch stored, the records a
 *		partition holds but never hands to the application: the commit
 *		and abort markers of transactions (control records) and the
 *		messages of aborted transactions (isolation.level read_committed).
 *		Without it the group's committed offset, and the lag computed from
 *		it, stay one marker short of the end offset for ever.  The
 *		consumer's position (rd_kafka_position) moves past those records
 *		once the application has polled up to them; a partition whose
 *		every message consumed in this generation is stored (acked reaches
 *		polled_next: none is held in a batch, in flight or waiting) and
 *		whose position lies beyond acked has only such records in between,
 *		so its position is stored.  Each move (from acked, where the last
 *		batch left the database's position, to the consumer's position) is
 *		added to moved (NULL: not wanted), for the database's position to
 *		follow (status_advance: compare and set, on the reporter's
 *		session).  db_next stays where the batches recorded it: the
 *		database's position may or may not have followed, and
 *		positions_reconcile acts only on a database position below db_next.
 *		Called by the loop when a poll came back empty, before
 *		kafka_commit_async.  Returns the number of partitions stored.
 */
int
kafka_ack_positions(kafka_consumer *kc, advance_list *moved)
{
	rd_kafka_topic_partition_list_t *list;
	int			i,
				n = 0;

	list = rd_kafka_topic_partition_list_new(kc->nslots > 0 ? kc->nslots : 1);
	for (i = 0; i < kc->nslots; i++)
	{
		kafka_slot *slot = &kc->slots[i];

		if (!slot->assigned || slot->waiting_start || slot->acked < 0 ||
			slot->acked < slot->polled_next)
			continue;
		rd_kafka_topic_partition_list_add(list, slot->topic, slot->partition);
	}
	if (list->cnt == 0 ||
		rd_kafka_position(kc->rk, list) != RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		rd_kafka_topic_partition_list_destroy(list);
		return 0;
	}
	for (i = 0; i < list->cnt; i++)
	{
		rd_kafka_topic_partition_t *p = &list->elems[i];
		int			s = kafka_slot_find(kc, p->topic, p->partition);

		if (s < 0 || p->err || p->offset <= kc->slots[s].acked)
			p->offset = RD_KAFKA_OFFSET_INVALID;
	}
	for (i = 0; i < list->cnt; i++)
	{
		rd_kafka_topic_partition_t *p = &list->elems[i];
		rd_kafka_topic_partition_list_t *one;

		if (p->offset < 0)
			continue;
		one = rd_kafka_topic_partition_list_new(1);
		rd_kafka_topic_partition_list_add(one, p->topic, p->partition)->offset = p->offset;
		if (rd_kafka_offsets_store(kc->rk, one) == RD_KAFKA_RESP_ERR_NO_ERROR &&
			one->elems[0].err == RD_KAFKA_RESP_ERR_NO_ERROR)
		{
			kafka_slot *slot = &kc->slots[kafka_slot_find(kc, p->topic, p->partition)];

			if (moved != NULL)
				(void) advances_add(moved, p->topic, p->partition, slot->acked, p->offset);
			slot->acked = p->offset;
			kc->uncommitted = 1;
			n++;
		}
		rd_kafka_topic_partition_list_destroy(one);
	}
	rd_kafka_topic_partition_list_destroy(list);
	return n;
}

/*
 * kafka_slot_should_pause
 *		Whether an assigned partition must not be fetched now: the feeder is
 *		paused for a database outage, the partition waits for its start, or
 *		one of its messages waits for its schema (held).
 */
static int
kafka_slot_should_pause(const kafka_consumer *kc, const kafka_slot *slot)
{
	return kc->paused || slot->waiting_start || slot->held;
}

/*
 * kafka_reconcile_pauses
 *		Bring librdkafka's pause state of the assigned partitions (all of
 *		them, or only those of parts) in line with kafka_slot_should_pause.
 *		librdkafka keeps an application's pause across a revoke and a new
 *		assignment, so a partition paused during an outage and assigned back
 *		after it would never be fetched again unless resumed here; and in
 *		librdkafka 2.0.2 resuming a partition that is not paused rewinds its
 *		fetch, so only partitions known paused (slot->paused) are resumed.
 *		Returns how many partitions changed.
 */
static int
kafka_reconcile_pauses(kafka_consumer *kc, const rd_kafka_topic_partition_list_t *parts)
{
	rd_kafka_topic_partition_list_t *pause = rd_kafka_topic_partition_list_new(4);
	rd_kafka_topic_partition_list_t *resume = rd_kafka_topic_partition_list_new(4);
	int			n = parts ? parts->cnt : kc->nslots;
	int			changed,
				i;

	for (i = 0; i < n; i++)
	{
		int			s = parts ? kafka_slot_find(kc, parts->elems[i].topic,
												parts->elems[i].partition) : i;
		kafka_slot *slot;

		if (s < 0 || !kc->slots[s].assigned)
			continue;
		slot = &kc->slots[s];
		if (kafka_slot_should_pause(kc, slot) && !slot->paused)
			rd_kafka_topic_partition_list_add(pause, slot->topic, slot->partition);
		else if (!kafka_slot_should_pause(kc, slot) && slot->paused)
			rd_kafka_topic_partition_list_add(resume, slot->topic, slot->partition);
		else
			continue;
		slot->paused = kafka_slot_should_pause(kc, slot);
	}
	if (pause->cnt > 0)
		rd_kafka_pause_partitions(kc->rk, pause);
	if (resume->cnt > 0)
		rd_kafka_resume_partitions(kc->rk, resume);
	changed = pause->cnt + resume->cnt;
	rd_kafka_topic_partition_list_destroy(pause);
	rd_kafka_topic_partition_list_destroy(resume);
	return changed;
}

/*
 * kafka_set_paused
 *		Pause or resume the whole current assignment (the partitions that
 *		wait for their start stay paused).
 */
static void
kafka_set_paused(kafka_consumer *kc, int pause)
{
	log_line	line;
	int			n;

	kc->paused = pause;
	n = kafka_reconcile_pauses(kc, NULL);
	log_begin(&line, LOG_INFO, pause ? "partitions_paused" : "partitions_resumed");
	log_kv_int(&line, "count", n);
	log_end(&line);
}

/*
 * kafka_hold
 *		Stop (hold) or restart fetching one partition, by its slot: while
 *		one of its messages waits for its schema, the others go on.
 */
void
kafka_hold(kafka_consumer *kc, int slot, int hold)
{
	rd_kafka_topic_partition_list_t *one;

	if (slot < 0 || slot >= kc->nslots || kc->slots[slot].held == (hold != 0))
		return;
	kc->slots[slot].held = hold != 0;
	one = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(one, kc->slots[slot].topic,
									  kc->slots[slot].partition);
	kafka_reconcile_pauses(kc, one);
	rd_kafka_topic_partition_list_destroy(one);
}

/*
 * kafka_pause / kafka_resume / kafka_is_paused
 *		Stop and restart fetching while a batch waits for the database;
 *		polling continues, which keeps the group membership alive.
 */
void
kafka_pause(kafka_consumer *kc)
{
	if (!kc->paused)
		kafka_set_paused(kc, 1);
}

void
kafka_resume(kafka_consumer *kc)
{
	if (kc->paused)
		kafka_set_paused(kc, 0);
}

int
kafka_is_paused(const kafka_consumer *kc)
{
	return kc->paused;
}

/*
 * kafka_commit_sync
 *		Commit the stored offsets now and wait for the answer; logs the
 *		offsets acknowledged so far for each assigned partition.
 */
void
kafka_commit_sync(kafka_consumer *kc, const char *why)
{
	rd_kafka_resp_err_t err = rd_kafka_commit(kc->rk, NULL, 0);
	log_line	line;
	char		list[3000];
	size_t		off = 0;
	int			i;

	kc->uncommitted = 0;
	list[0] = '\0';
	for (i = 0; i < kc->nslots && off < sizeof(list); i++)
	{
		int			n;

		if (!kc->slots[i].assigned || kc->slots[i].acked < 0)
			continue;
		n = snprintf(list + off, sizeof(list) - off, "%s%s [%d] @%lld",
					 off ? ", " : "", kc->slots[i].topic,
					 (int) kc->slots[i].partition, (long long) kc->slots[i].acked);
		if (n < 0)
			break;
		off += (size_t) n;
	}
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR || err == RD_KAFKA_RESP_ERR__NO_OFFSET)
	{
		log_begin(&line, LOG_INFO, "offsets_committed");
		log_kv_str(&line, "reason", why);
		log_kv_str(&line, "result", err ? "unchanged" : "committed");
		log_kv_str(&line, "offsets", list);
	}
	else
	{
		log_begin(&line, LOG_WARNING, "commit_failed");
		log_kv_str(&line, "reason", why);
		log_kv_str(&line, "error", rd_kafka_err2str(err));
	}
	log_end(&line);
}

/*
 * kafka_commit_async
 *		Ask librdkafka to commit the stored offsets now without waiting,
 *		when some were stored since the last commit: the loop calls it when
 *		a poll comes back empty, so that the group's committed offsets (and
 *		the lag tools derive from them) follow the database within about a
 *		second instead of auto.commit.interval.ms.  The answer arrives in
 *		kafka_offset_commit_cb during a later poll; a failed commit leaves
 *		the offsets stored for the next one.  1 when a commit was asked.
 */
int
kafka_commit_async(kafka_consumer *kc)
{
	rd_kafka_resp_err_t err;

	if (!kc->uncommitted)
		return 0;
	kc->uncommitted = 0;
	err = rd_kafka_commit(kc->rk, NULL, 1);
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET)
	{
		log_line	line;

		log_begin(&line, LOG_WARNING, "commit_failed");
		log_kv_str(&line, "reason", "idle");
		log_kv_str(&line, "error", rd_kafka_err2str(err));
		log_end(&line);
	}
	return 1;
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
