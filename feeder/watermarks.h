/*-------------------------------------------------------------------------
 *
 * watermarks.h
 *	  A partition's earliest and next offsets, asked of its leader within
 *	  a deadline that holds (shared by the feeder and tools/ro-dev-kafka).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_WATERMARKS_H
#define FEEDER_WATERMARKS_H

#include <stdint.h>

#include <librdkafka/rdkafka.h>

extern rd_kafka_resp_err_t watermarks_query(rd_kafka_t *rk, const char *topic,
											int32_t partition, int timeout_ms,
											int64_t *low, int64_t *high);

#endif							/* FEEDER_WATERMARKS_H */
