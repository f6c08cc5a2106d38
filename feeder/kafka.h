/*-------------------------------------------------------------------------
 *
 * kafka.h
 *	  Kafka side of the feeder: the consumer (kafka.c), and the headers of
 *	  the rooms it is split into, so that the rest of the feeder includes
 *	  one header: configuration, starts, pauses, acknowledgements, slots,
 *	  metadata.
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
#include "kafka_acks.h"
#include "kafka_conf.h"
#include "kafka_metadata.h"
#include "kafka_pause.h"
#include "kafka_slots.h"
#include "kafka_start.h"
#include "stats.h"

typedef struct kafka_consumer kafka_consumer;

extern kafka_consumer *kafka_open(const feeder_config *cfg, rd_kafka_conf_t *conf,
								  feeder_stats *stats, char *err, size_t errlen);
extern void kafka_set_start_fn(kafka_consumer *kc, kafka_start_fn fn, void *arg);
extern void kafka_set_quiesce_fn(kafka_consumer *kc, void (*fn) (void *arg), void *arg);
extern void kafka_wake(kafka_consumer *kc);
extern int	kafka_poll(kafka_consumer *kc, int timeout_ms, batch_msg *out);
extern void kafka_release(void *handle);
extern int	kafka_fatal(const kafka_consumer *kc);
extern int	kafka_refused(const kafka_consumer *kc);
extern void kafka_close(kafka_consumer *kc);

#endif							/* FEEDER_KAFKA_H */
