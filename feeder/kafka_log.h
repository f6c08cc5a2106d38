/*-------------------------------------------------------------------------
 *
 * kafka_log.h
 *	  librdkafka's log lines in the feeder's log format (kafka_log.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_LOG_H
#define FEEDER_KAFKA_LOG_H

#include <librdkafka/rdkafka.h>

extern void kafka_log_cb(const rd_kafka_t *rk, int level, const char *fac,
						 const char *buf);

#endif							/* FEEDER_KAFKA_LOG_H */
