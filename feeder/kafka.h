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

#include "advances.h"
#include "backoff.h"
#include "batch.h"
#include "config.h"
#include "stats.h"

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
extern rd_kafka_conf_t *kafka_build_conf(const feeder_config *cfg,
										 char *err, size_t errlen);
extern kafka_consumer *kafka_open(const feeder_config *cfg, rd_kafka_conf_t *conf,
								  feeder_stats *stats, char *err, size_t errlen);
extern void kafka_set_start_fn(kafka_consumer *kc, kafka_start_fn fn, void *arg);
extern void kafka_set_quiesce_fn(kafka_consumer *kc, void (*fn) (void *arg), void *arg);
extern void kafka_wake(kafka_consumer *kc);
extern int	kafka_assigned(kafka_consumer *kc, kafka_assigned_partition **out);
extern int	kafka_waiting_start(const kafka_consumer *kc);
extern int	kafka_defer_start(kafka_consumer *kc, const char *topic, int32_t partition,
							  const backoff_policy *policy, int *delay_ms);
extern int	kafka_mark_gap(kafka_consumer *kc, const char *topic, int32_t partition,
						   int64_t first_lost);
extern int	kafka_start_partition(kafka_consumer *kc, const char *topic,
								  int32_t partition, int64_t offset);
extern char *kafka_cluster_id(kafka_consumer *kc);
extern int	kafka_watermarks(kafka_consumer *kc, const char *topic, int32_t partition,
							 int64_t *low, int64_t *high);
extern int	kafka_poll(kafka_consumer *kc, int timeout_ms, batch_msg *out);
extern void kafka_release(void *handle);
extern int	kafka_take_rebalanced(kafka_consumer *kc);
extern int	kafka_msg_revoked(const batch_msg *m, void *kc);
extern int	kafka_store_offsets(kafka_consumer *kc, const batch *b);
extern void kafka_hold(kafka_consumer *kc, int slot, int hold);
extern void kafka_pause(kafka_consumer *kc);
extern void kafka_resume(kafka_consumer *kc);
extern int	kafka_is_paused(const kafka_consumer *kc);
extern void kafka_commit_sync(kafka_consumer *kc, const char *why);
extern int	kafka_commit_async(kafka_consumer *kc);
extern int	kafka_fatal(const kafka_consumer *kc);
extern int	kafka_refused(const kafka_consumer *kc);
extern int	kafka_ack_positions(kafka_consumer *kc, advance_list *moved);
extern void kafka_close(kafka_consumer *kc);

#endif							/* FEEDER_KAFKA_H */
