/*-------------------------------------------------------------------------
 *
 * avro_alloc.h
 *	  avro-c's allocator for reading untrusted values: bounded, and tracked.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_AVRO_ALLOC_H
#define FEEDER_AVRO_ALLOC_H

#include <stddef.h>

extern void avro_alloc_init(void);
extern void avro_alloc_read_begin(size_t len);
extern void avro_alloc_read_end(void);
extern void avro_alloc_oom_clear(void);
extern int	avro_alloc_oom(void);

#endif							/* FEEDER_AVRO_ALLOC_H */
