/*-------------------------------------------------------------------------
 *
 * kafka.h
 *	  Kafka side of the feeder: consumer, rebalance callback, pause and
 *	  resume, offset store and commit.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_H
#define FEEDER_KAFKA_H

#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "batch.h"
#include "config.h"
#include "stats.h"

typedef struct kafka_consumer kafka_consumer;

/* Lag of one assigned partition (kafka_partition_lags). */
typedef struct kafka_partition_lag
{
	const char *topic;			/* owned by the consumer */
	int32_t		partition;
	int64_t		lag;			/* -1: not known yet */
} kafka_partition_lag;

extern rd_kafka_conf_t *kafka_build_conf(const feeder_config *cfg,
										 char *err, size_t errlen);
extern kafka_consumer *kafka_open(const feeder_config *cfg, rd_kafka_conf_t *conf,
								  feeder_stats *stats, char *err, size_t errlen);
extern int	kafka_poll(kafka_consumer *kc, int timeout_ms, batch_msg *out);
extern void kafka_release(void *handle);
extern int	kafka_take_rebalanced(kafka_consumer *kc);
extern int	kafka_msg_revoked(const batch_msg *m, void *kc);
extern int	kafka_store_offsets(kafka_consumer *kc, const batch *b);
extern void kafka_pause(kafka_consumer *kc);
extern void kafka_resume(kafka_consumer *kc);
extern int	kafka_is_paused(const kafka_consumer *kc);
extern void kafka_commit_sync(kafka_consumer *kc, const char *why);
extern int	kafka_commit_async(kafka_consumer *kc);
extern int64_t kafka_lag(kafka_consumer *kc);
extern int	kafka_partition_lags(kafka_consumer *kc, kafka_partition_lag **out);
extern int	kafka_up(const kafka_consumer *kc);
extern int	kafka_fatal(const kafka_consumer *kc);
extern void kafka_close(kafka_consumer *kc);

#endif							/* FEEDER_KAFKA_H */
