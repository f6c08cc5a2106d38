/*-------------------------------------------------------------------------
 *
 * kafka_conf.h
 *	  The consumer's librdkafka configuration (kafka_conf.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_CONF_H
#define FEEDER_KAFKA_CONF_H

#include <stddef.h>

#include <librdkafka/rdkafka.h>

#include "config.h"

/* the consumer (kafka.h); a repeated typedef is C11 */
typedef struct kafka_consumer kafka_consumer;

extern rd_kafka_conf_t *kafka_build_conf(const feeder_config *cfg,
										 char *err, size_t errlen);

#endif							/* FEEDER_KAFKA_CONF_H */
