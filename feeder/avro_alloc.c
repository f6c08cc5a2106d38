/*-------------------------------------------------------------------------
 *
 * avro_alloc.c
 *	  avro-c's allocator for reading untrusted values: bounded, and tracked.
 *
 * A length or count in a bad message can ask avro-c for any amount of
 * memory before it finds the bytes missing: while a value is read
 * (avro_alloc_read_begin .. avro_alloc_read_end), any one allocation larger
 * than the value allows is refused, so that such a message is refused like
 * any other, without taking the feeder's memory.  avro-c 1.11 also loses
 * what it allocated when bytes run out in the middle of a string or bytes:
 * the blocks it gets in that window are tracked (a per-thread set of
 * pointers), and those it still holds at the end, once the value is
 * released, are freed.  Outside the window (schemas, classes) avro-c
 * allocates as usual.
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdlib.h>

#include <avro.h>

#include "avro_alloc.h"

/*
 * The largest single allocation avro-c may make while reading a value of
 * len bytes: a string or bytes are at most len, an array's elements (a few
 * dozen bytes each in a generic value) at most one per byte but for
 * zero-byte items, which no real schema has many of.
 */
#define AVRO_ALLOC_LIMIT(len) ((size_t) (len) * 64 + 1024 * 1024)

/* The limit of this thread's avro-c allocations; 0: none (schemas). */
static __thread size_t avro_alloc_limit;

/*
 * Set when an allocation of avro-c failed on this thread for want of
 * memory (not refused by the limit): the system's state, not the message's
 * fault, so the decode is worth retrying (avro_alloc_oom).
 */
static __thread int avro_alloc_oom_flag;

/*
 * The blocks avro-c holds that it allocated while this thread reads a value
 * (an open-addressing set of pointers, NULL: empty, AVRO_ALLOC_GONE: freed);
 * tracking is off while track_cap is 0.
 */
#define AVRO_ALLOC_GONE ((void *) 1)
static __thread void **track;
static __thread size_t track_cap;
static __thread size_t track_used;	/* slots not NULL */
static __thread int track_failed;

/*
 * avro_alloc_track_slot
 *		The slot of p, or the empty slot where it would go.
 */
static size_t
avro_alloc_track_slot(void *p)
{
	size_t		i = ((uintptr_t) p >> 4) * UINT64_C(11400714819323198485) & (track_cap - 1);

	while (track[i] != NULL && track[i] != p)
		i = (i + 1) & (track_cap - 1);
	return i;
}

/*
 * avro_alloc_track_add
 *		Remember a block avro-c got (growing the set at half full).
 */
static void
avro_alloc_track_add(void *p)
{
	if ((track_used + 1) * 2 > track_cap)
	{
		void	  **old = track;
		size_t		old_cap = track_cap,
					i;

		track = calloc(old_cap * 2, sizeof(void *));
		if (track == NULL)
		{
			track = old;
			track_failed = 1;	/* not freed afterwards: a leak, not a crash */
			return;
		}
		track_cap = old_cap * 2;
		track_used = 0;
		for (i = 0; i < old_cap; i++)
			if (old[i] != NULL && old[i] != AVRO_ALLOC_GONE)
			{
				track[avro_alloc_track_slot(old[i])] = old[i];
				track_used++;
			}
		free(old);
	}
	{
		size_t		i = avro_alloc_track_slot(p);

		if (track[i] == NULL)
			track_used++;
		track[i] = p;
	}
}

/*
 * avro_alloc_track_remove
 *		Forget a block avro-c gave back or moved (its address before), if
 *		it was tracked.
 */
static void
avro_alloc_track_remove(uintptr_t p)
{
	size_t		i = (p >> 4) * UINT64_C(11400714819323198485) & (track_cap - 1);

	while (track[i] != NULL)
	{
		if ((uintptr_t) track[i] == p)
		{
			track[i] = AVRO_ALLOC_GONE;
			return;
		}
		i = (i + 1) & (track_cap - 1);
	}
}

/*
 * avro_alloc_allocator
 *		avro-c's allocator (realloc semantics): refuses, while a value is
 *		read on this thread, an allocation larger than the value allows.
 */
static void *
avro_alloc_allocator(void *ud, void *ptr, size_t osize, size_t nsize)
{
	void	   *p;
	uintptr_t	old = (uintptr_t) ptr;

	(void) ud;
	(void) osize;
	if (nsize == 0)
	{
		if (track_cap && ptr)
			avro_alloc_track_remove(old);
		free(ptr);
		return NULL;
	}
	if (avro_alloc_limit != 0 && nsize > avro_alloc_limit)
		return NULL;
	p = realloc(ptr, nsize);
	if (p == NULL)
		avro_alloc_oom_flag = 1;
	if (p != NULL && track_cap)
	{
		if (old)
			avro_alloc_track_remove(old);
		avro_alloc_track_add(p);
	}
	return p;
}

/*
 * avro_alloc_track_begin, avro_alloc_track_end
 *		Track what avro-c allocates from begin to end; end frees the
 *		blocks it still holds then (lost on an error path).
 */
static int
avro_alloc_track_begin(void)
{
	track_cap = 64;
	track_used = 0;
	track_failed = 0;
	track = calloc(track_cap, sizeof(void *));
	if (track == NULL)
		track_cap = 0;
	return track != NULL;
}

static void
avro_alloc_track_end(void)
{
	size_t		i,
				cap = track_cap;
	void	  **t = track;

	track_cap = 0;				/* off: the frees below are not tracked */
	track = NULL;
	for (i = 0; i < cap; i++)
		if (t[i] != NULL && t[i] != AVRO_ALLOC_GONE)
			free(t[i]);
	free(t);
}

/*
 * avro_alloc_init
 *		Install the bounded allocator; once, before any thread uses avro-c.
 */
void
avro_alloc_init(void)
{
	avro_set_allocator(avro_alloc_allocator, NULL);
}

/*
 * avro_alloc_read_begin
 *		From now on, on this thread: no avro-c allocation larger than
 *		AVRO_ALLOC_LIMIT(len), and every block tracked.
 */
void
avro_alloc_read_begin(size_t len)
{
	avro_alloc_limit = AVRO_ALLOC_LIMIT(len);
	avro_alloc_track_begin();
}

/*
 * avro_alloc_read_end
 *		The value read since avro_alloc_read_begin is released: free what
 *		avro-c still holds of that window, lift the limit.
 */
void
avro_alloc_read_end(void)
{
	avro_alloc_limit = 0;
	if (track_cap)
		avro_alloc_track_end();
}

/*
 * avro_alloc_oom_clear, avro_alloc_oom
 *		Whether an avro-c allocation on this thread failed for want of
 *		memory since the last clear: a decode or a compile that failed so
 *		is retried, not taken as the message's or the schema's fault.
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
