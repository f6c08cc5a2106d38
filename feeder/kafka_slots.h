/*-------------------------------------------------------------------------
 *
 * kafka_slots.h
 *	  The consumer's partitions and their assignment generations
 *	  (kafka_slots.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_SLOTS_H
#define FEEDER_KAFKA_SLOTS_H

#include "batch.h"

/* the consumer (kafka.h); a repeated typedef is C11 */
typedef struct kafka_consumer kafka_consumer;

extern int	kafka_take_rebalanced(kafka_consumer *kc);
extern int	kafka_msg_revoked(const batch_msg *m, void *kc);

#endif							/* FEEDER_KAFKA_SLOTS_H */
