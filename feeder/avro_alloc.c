/*-------------------------------------------------------------------------
 *
 * avro_alloc.c
 *	  Out of memory while decoding or compiling Avro, told apart from a bad
 *	  message or schema.
 *
 * The decoder's own reader (avro_json.c) allocates only its JSON buffer,
 * and avro-c allocates only while it compiles a schema.  When either
 * allocation fails because the system's memory ran out (not because a
 * value passed its bounds), a per-thread flag is set: decode.c and registry.c
 * then retry the message or the schema instead of quarantining it or
 * caching the failure, since the fault is the machine's state, not the
 * bytes'.  avro-c's allocations go through avro_alloc_allocator, installed
 * once by avro_alloc_init.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include <avro.h>

#include "avro_alloc.h"

/* Set when an allocation failed on this thread for want of memory. */
static __thread int avro_alloc_oom_flag;

/*
 * avro_alloc_allocator
 *		avro-c's allocator: realloc, noting a failure.
 */
static void *
avro_alloc_allocator(void *ud, void *ptr, size_t osize, size_t nsize)
{
	void	   *p;

	(void) ud;
	(void) osize;
	if (nsize == 0)
	{
		free(ptr);
		return NULL;
	}
	p = realloc(ptr, nsize);
	if (p == NULL)
		avro_alloc_oom_flag = 1;
	return p;
}

/*
 * avro_alloc_init
 *		Install the allocator; once, before any thread uses avro-c.
 */
void
avro_alloc_init(void)
{
	avro_set_allocator(avro_alloc_allocator, NULL);
}

/*
 * avro_alloc_note_oom
 *		An allocation of ours (the decoder's JSON buffer) failed for want of
 *		memory on this thread.
 */
void
avro_alloc_note_oom(void)
{
	avro_alloc_oom_flag = 1;
}

/*
 * avro_alloc_oom_clear, avro_alloc_oom
 *		Whether an allocation on this thread failed for want of memory since
 *		the last clear: a decode or a compile that failed so is retried, not
 *		taken as the message's or the schema's fault.
 */
void
avro_alloc_oom_clear(void)
{
	avro_alloc_oom_flag = 0;
}

int
avro_alloc_oom(void)
{
	return avro_alloc_oom_flag;
}
