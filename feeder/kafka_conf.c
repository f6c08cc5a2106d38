/*-------------------------------------------------------------------------
 *
 * kafka_conf.c
 *	  The consumer's librdkafka configuration: the feeder's settings, the
 *	  user's properties, and the settings the feeder's guarantees pin.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka_conf.h"
#include "config.h"

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
 * kafka_classic_only
 *		The first of the user's properties that only the classic group
 *		protocol takes, or NULL.  With group.protocol=consumer the broker
 *		owns the session timeout, the heartbeat and the assignor
 *		(group.consumer.* settings, group.remote.assignor on the client),
 *		and librdkafka refuses these at rd_kafka_new; the feeder refuses
 *		them earlier, as a usage error naming the option.
 */
static const char *
kafka_classic_only(const feeder_config *cfg)
{
	static const char *const classic[] = {
		"partition.assignment.strategy", "session.timeout.ms",
		"heartbeat.interval.ms", "group.protocol.type", NULL
	};
	int			i,
				j;

	for (i = 0; i < cfg->nprops; i++)
		for (j = 0; classic[j] != NULL; j++)
			if (strcmp(cfg->props[i].key, classic[j]) == 0)
				return classic[j];
	return NULL;
}

/*
 * kafka_build_conf
 *		librdkafka configuration: our settings, then the user's properties
 *		(file first, then -X), then the pinned ones again.  With metrics on,
 *		statistics are reported every 5 s (unless the user says otherwise)
 *		so that brokers coming back are noticed while nothing is fetched.
 *		group.protocol is always set (--group-protocol), and with consumer
 *		the properties of the classic protocol are refused
 *		(kafka_classic_only).  A property librdkafka rejects is a usage
 *		error: NULL with the reason in err.
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
	/* explicit, so that a new default of librdkafka cannot switch it */
	SET("group.protocol", cfg->group_protocol);
	if (strcmp(cfg->group_protocol, "consumer") == 0 && kafka_classic_only(cfg))
	{
		snprintf(err, errlen,
				 "-X %s: not supported with --group-protocol consumer (the broker sets the session timeout, the heartbeat interval and the assignor for this protocol; use group.remote.assignor for the assignor)",
				 kafka_classic_only(cfg));
		rd_kafka_conf_destroy(conf);
		return NULL;
	}
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
