/*-------------------------------------------------------------------------
 *
 * kafka_int.h
 *	  Internals of the consumer shared by its rooms (kafka.c and the
 *	  kafka_*.c files it is split into: rebalance, starts, pauses,
 *	  acknowledgements, slots, metadata, status): not for the rest of the
 *	  feeder, which sees kafka_consumer as opaque.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_INT_H
#define FEEDER_KAFKA_INT_H

#include <stddef.h>
#include <stdint.h>

#include <librdkafka/rdkafka.h>

#include "config.h"
#include "stats.h"

/* One partition the group gave us at some point; never removed. */
typedef struct kafka_slot
{
	char	   *topic;
	int32_t		partition;
	int			assigned;
	uint64_t	generation;
	int64_t		acked;			/* last stored offset (next to read), -1 */
	int64_t		first_seen;		/* first offset consumed this generation */
	int64_t		polled_next;	/* offset + 1 of the last message consumed
								 * this generation, -1: none */
	int64_t		store_to;		/* scratch for kafka_store_offsets */
	int64_t		committed;		/* last offset seen committed, -1 */
	int64_t		db_next;		/* next offset the database holds for us, -1 */
	int			waiting_start;	/* paused until its start position is known */
	int			start_failures; /* failed starts in a row (kafka_defer_start) */
	int64_t		start_retry_ms; /* no start tried before (clock_now_ms) */
	int64_t		start_store;	/* start offset to store for the group, -1 */
	int64_t		gap_first;		/* waiting on a position gap from this
								 * offset (kafka_mark_gap), -1: none */
	int			held;			/* not fetched: a message of it waits for
								 * its schema (kafka_hold) */
	int			paused;			/* paused in librdkafka by us (kept there
								 * across revoke and re-assign) */
	int64_t		asked_ms;		/* last broker query for its lag, 0: never */
	uint64_t	ask_ticket;		/* that query's kafka_asker ticket while
								 * not taken, 0: none */
	int64_t		asked_lo;		/* watermarks that query returned, -1 */
	int64_t		asked_hi;
	int64_t		asked_committed;	/* the group's committed offset it
									 * returned, -1: none */
	int64_t		last_lag;		/* the last lag known (kafka_slot_lag), kept
								 * across re-assignment, -1: never known */
} kafka_slot;

/* The same type as kafka.h's opaque one (a repeated typedef is C11). */
typedef struct kafka_consumer kafka_consumer;

struct kafka_consumer
{
	rd_kafka_t *rk;
	kafka_slot *slots;
	int			nslots;
	uint64_t	generation;
	int			paused;			/* feeder holds the assignment paused */
	int			rebalanced;		/* assignment changed since last check */
	int			fatal;			/* librdkafka raised a fatal error */
	int			refused;		/* the cluster refused us (kafka_refusal.h) */
	int			consumer_protocol;	/* group.protocol=consumer (KIP-848) */
	char	   *group;			/* group.id, for a refusal's hint */
	char	   *topics;			/* the subscription, "a, b", likewise */
	rd_kafka_topic_t **rkts;	/* a handle of each subscribed topic,
								 * held (kafka_hold_topics) */
	int			nrkts;
	int			up;				/* brokers reachable: 1, 0, -1 unknown */
	int			uncommitted;	/* offsets stored since the last commit */
	int			starts_pending; /* some slot has a start_store */
	int			ask_budget;		/* broker queries left in this lag refresh */
	struct kafka_asker *asker;	/* asks those queries (kafka_status.c) */
	feeder_stats *stats;
	/* chooses start offsets on assignment (a kafka_start_fn of kafka.h) */
	int			(*start_fn) (void *arg, rd_kafka_topic_partition_list_t *parts);
	void	   *start_arg;
	void		(*quiesce_fn) (void *arg);	/* first in every rebalance */
	void	   *quiesce_arg;
	rd_kafka_queue_t *wake_q;	/* the consumer queue, for kafka_wake */
	const char *type_header;	/* header read into batch_msg.type, or NULL */
	int			want_content_type;	/* read content-type (cloudevents) */
	int			want_schema_id; /* read __value_schema_id (confluent) */
};

/* kafka_slots.c */
extern int	kafka_slot_find(kafka_consumer *kc, const char *topic, int32_t partition);

/* kafka_rebalance.c */
extern void kafka_rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
							   rd_kafka_topic_partition_list_t *parts, void *opaque);

/* kafka_start.c */
extern void kafka_store_starts(kafka_consumer *kc);

/* kafka_pause.c */
extern int	kafka_reconcile_pauses(kafka_consumer *kc,
								   const rd_kafka_topic_partition_list_t *parts);

/* kafka_acks.c */
extern void kafka_offset_commit_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
								   rd_kafka_topic_partition_list_t *offsets,
								   void *opaque);

/* kafka_metadata.c */
extern void kafka_hold_topics(kafka_consumer *kc, const feeder_config *cfg);
extern void kafka_release_topics(kafka_consumer *kc);

/* kafka_status.c */
extern int	kafka_status_start(kafka_consumer *kc, char *err, size_t errlen);
extern void kafka_status_stop(kafka_consumer *kc);
extern void kafka_slot_forget_asked(kafka_slot *s);
extern int	kafka_stats_cb(rd_kafka_t *rk, char *json, size_t json_len, void *opaque);

#endif							/* FEEDER_KAFKA_INT_H */
