/*-------------------------------------------------------------------------
 *
 * avro_alloc.h
 *	  Out of memory while decoding or compiling Avro (avro_alloc.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_AVRO_ALLOC_H
#define FEEDER_AVRO_ALLOC_H

extern void avro_alloc_init(void);
extern void avro_alloc_note_oom(void);
extern void avro_alloc_oom_clear(void);
extern int	avro_alloc_oom(void);

#endif							/* FEEDER_AVRO_ALLOC_H */
