/*-------------------------------------------------------------------------
 *
 * kafka_start.h
 *	  Where each assigned partition starts (kafka_start.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_START_H
#define FEEDER_KAFKA_START_H

#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "backoff.h"

/* the consumer (kafka.h); a repeated typedef is C11 */
typedef struct kafka_consumer kafka_consumer;

/*
 * Chooses the start offsets of newly assigned partitions, inside the
 * rebalance callback, by setting parts->elems[i].offset (a real offset or
 * RD_KAFKA_OFFSET_BEGINNING; RD_KAFKA_OFFSET_INVALID for a partition whose
 * start cannot be decided yet).  Returns 0 when the partitions left at
 * RD_KAFKA_OFFSET_INVALID are the only ones undecided, -1 when none could
 * be (the database is unreachable).  The undecided ones are assigned
 * paused, waiting for kafka_start_partition.
 */
typedef int (*kafka_start_fn) (void *arg, rd_kafka_topic_partition_list_t *parts);

/* An assigned partition as positions.c sees it (kafka_assigned). */
typedef struct kafka_assigned_partition
{
	const char *topic;			/* owned by the consumer */
	int32_t		partition;
	int64_t		db_next;		/* next offset the database holds for us, -1 */
	int			waiting_start;	/* paused, start position not decided yet */
	int			start_due;		/* waiting_start: may be tried now (not
								 * in its backoff after a failed start) */
	int64_t		gap_first;		/* waiting on a position gap from this
								 * offset (kafka_mark_gap), -1: none */
	int			slot;			/* its slot, which picks its lane */
} kafka_assigned_partition;

extern int	kafka_assigned(kafka_consumer *kc, kafka_assigned_partition **out);
extern int	kafka_waiting_start(const kafka_consumer *kc);
extern int	kafka_defer_start(kafka_consumer *kc, const char *topic, int32_t partition,
							  const backoff_policy *policy, int *delay_ms);
extern int	kafka_mark_gap(kafka_consumer *kc, const char *topic, int32_t partition,
						   int64_t first_lost);
extern int	kafka_start_partition(kafka_consumer *kc, const char *topic,
								  int32_t partition, int64_t offset);

#endif							/* FEEDER_KAFKA_START_H */
