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
