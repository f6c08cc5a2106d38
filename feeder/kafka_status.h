/*-------------------------------------------------------------------------
 *
 * kafka_status.h
 *	  What the consumer knows of its partitions and brokers, for the
 *	  metrics, the status report and the counters line (kafka_status.c):
 *	  lag per assigned partition, high watermarks, brokers reachable.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_STATUS_H
#define FEEDER_KAFKA_STATUS_H

#include <stdint.h>

/* The consumer (kafka.h), opaque here. */
struct kafka_consumer;


/* Lag of one assigned partition (kafka_partition_lags). */
typedef struct kafka_partition_lag
{
	const char *topic;			/* owned by the consumer */
	int32_t		partition;
	int64_t		lag;			/* -1: not known yet */
	int64_t		high_watermark; /* librdkafka's cached one; -1: not known */
	int			waiting_start;	/* paused, its start position not decided */
} kafka_partition_lag;

extern int64_t kafka_lag(struct kafka_consumer *kc);
extern int	kafka_partition_lags(struct kafka_consumer *kc, kafka_partition_lag **out);
extern int64_t kafka_cached_high_watermark(struct kafka_consumer *kc, const char *topic,
										   int32_t partition);
extern int	kafka_up(const struct kafka_consumer *kc);

#endif							/* FEEDER_KAFKA_STATUS_H */
