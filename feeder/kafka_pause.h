/*-------------------------------------------------------------------------
 *
 * kafka_pause.h
 *	  What the consumer fetches: partitions paused and resumed
 *	  (kafka_pause.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_KAFKA_PAUSE_H
#define FEEDER_KAFKA_PAUSE_H

/* the consumer (kafka.h); a repeated typedef is C11 */
typedef struct kafka_consumer kafka_consumer;

extern void kafka_hold(kafka_consumer *kc, int slot, int hold);
extern void kafka_pause(kafka_consumer *kc);
extern void kafka_resume(kafka_consumer *kc);
extern int	kafka_is_paused(const kafka_consumer *kc);

#endif							/* FEEDER_KAFKA_PAUSE_H */
