/*-------------------------------------------------------------------------
 *
 * kafka_acks.h
 *	  Offsets stored after the database committed, and committed to the
 *	  group (kafka_acks.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_ACKS_H
#define FEEDER_KAFKA_ACKS_H

#include "advances.h"
#include "batch.h"

/* the consumer (kafka.h); a repeated typedef is C11 */
typedef struct kafka_consumer kafka_consumer;

extern int	kafka_store_offsets(kafka_consumer *kc, const batch *b);
extern int	kafka_ack_positions(kafka_consumer *kc, advance_list *moved);
extern void kafka_commit_sync(kafka_consumer *kc, const char *why);
extern int	kafka_commit_async(kafka_consumer *kc);

#endif							/* FEEDER_KAFKA_ACKS_H */
