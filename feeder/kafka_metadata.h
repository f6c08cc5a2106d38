/*-------------------------------------------------------------------------
 *
 * kafka_metadata.h
 *	  What the consumer knows of the cluster: watermarks, the cluster id
 *	  (kafka_metadata.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_METADATA_H
#define FEEDER_KAFKA_METADATA_H

#include <stdint.h>

/* the consumer (kafka.h); a repeated typedef is C11 */
typedef struct kafka_consumer kafka_consumer;

extern char *kafka_cluster_id(kafka_consumer *kc);
extern int	kafka_watermarks(kafka_consumer *kc, const char *topic, int32_t partition,
							 int64_t *low, int64_t *high);

#endif							/* FEEDER_KAFKA_METADATA_H */
