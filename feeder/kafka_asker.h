/*-------------------------------------------------------------------------
 *
 * kafka_asker.h
 *	  A thread that asks the brokers about partitions (watermarks, the
 *	  group's committed offset) so that the main loop never waits for
 *	  them (kafka_status.c's lag of partitions not fetched yet).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_ASKER_H
#define FEEDER_KAFKA_ASKER_H

#include <stdint.h>

#include <librdkafka/rdkafka.h>

typedef struct kafka_asker kafka_asker;

/* What the brokers answered for one request; -1 where they did not. */
typedef struct kafka_asker_reply
{
	int64_t		lo;				/* earliest offset */
	int64_t		hi;				/* next offset (high watermark) */
	int64_t		committed;		/* the group's committed offset, -1 also
								 * when none */
	int			committed_known;	/* the committed query answered */
} kafka_asker_reply;

extern kafka_asker *kafka_asker_start(rd_kafka_t *rk, int timeout_ms, int *error);
extern uint64_t kafka_asker_request(kafka_asker *a, const char *topic, int32_t partition);
extern int	kafka_asker_answer(kafka_asker *a, uint64_t ticket, kafka_asker_reply *out);
extern void kafka_asker_stop(kafka_asker *a);

#endif							/* FEEDER_KAFKA_ASKER_H */
