/*-------------------------------------------------------------------------
 *
 * pgarray.c
 *	  Encoder of one-dimensional PostgreSQL arrays in the binary wire
 *	  format (array_recv), for binary query parameters.
 *
 * Layout, all integers big-endian: int32 ndim (1), int32 has-null flag,
 * uint32 element type OID, then per dimension int32 size and int32 lower
 * bound (1); then per element int32 length (-1 for NULL) and its bytes in
 * the element type's binary format.  Sending kafka values as bytea this
 * way avoids escaping them, and lets invalid UTF-8 reach the server
 * unchanged, where the batch function quarantines it.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "pgarray.h"

/*
 * pgarray_reserve
 *		Make room for n more bytes; on failure the array is marked failed
 *		and later additions are ignored.
 */
static int
pgarray_reserve(pgarray *a, size_t n)
{
	if (a->failed)
		return -1;
	if (a->len + n > a->cap)
	{
		size_t		cap = a->cap ? a->cap : 256;
		char	   *data;

		while (a->len + n > cap)
			cap *= 2;
		data = realloc(a->data, cap);
		if (data == NULL)
		{
			a->failed = 1;
			return -1;
		}
		a->data = data;
		a->cap = cap;
	}
	return 0;
}

/*
 * pgarray_put_u32 / pgarray_put_u64
 *		Append an integer in network byte order.
 */
static void
pgarray_put_u32(pgarray *a, uint32_t v)
{
	unsigned char *p;

	if (pgarray_reserve(a, 4) != 0)
		return;
	p = (unsigned char *) a->data + a->len;
	p[0] = (unsigned char) (v >> 24);
	p[1] = (unsigned char) (v >> 16);
	p[2] = (unsigned char) (v >> 8);
	p[3] = (unsigned char) v;
	a->len += 4;
}

static void
pgarray_put_u64(pgarray *a, uint64_t v)
{
	pgarray_put_u32(a, (uint32_t) (v >> 32));
	pgarray_put_u32(a, (uint32_t) v);
}

/*
 * pgarray_init
 *		An empty encoder whose buffer is reused across batches.
 */
void
pgarray_init(pgarray *a)
{
	memset(a, 0, sizeof(*a));
}

/*
 * pgarray_begin
 *		Start a new array of elemtype, writing a header whose has-null flag
 *		and dimension are patched in by pgarray_finish.
 */
void
pgarray_begin(pgarray *a, uint32_t elemtype)
{
	a->len = 0;
	a->nelems = 0;
	a->has_null = 0;
	a->failed = 0;
	pgarray_put_u32(a, 1);		/* ndim */
	pgarray_put_u32(a, 0);		/* has-null, patched */
	pgarray_put_u32(a, elemtype);
	pgarray_put_u32(a, 0);		/* dimension, patched */
	pgarray_put_u32(a, 1);		/* lower bound */
}

/*
 * pgarray_add_bytes
 *		Append an element given in its binary format (bytea and text: the
 *		raw bytes).
 */
void
pgarray_add_bytes(pgarray *a, const void *data, size_t len)
{
	if (len > INT32_MAX)
	{
		a->failed = 1;
		return;
	}
	pgarray_put_u32(a, (uint32_t) len);
	if (len > 0 && pgarray_reserve(a, len) == 0)
	{
		memcpy(a->data + a->len, data, len);
		a->len += len;
	}
	a->nelems++;
}

/*
 * pgarray_add_null
 *		Append a NULL element.
 */
void
pgarray_add_null(pgarray *a)
{
	pgarray_put_u32(a, UINT32_MAX);	/* -1 */
	a->has_null = 1;
	a->nelems++;
}

/*
 * pgarray_add_int4 / pgarray_add_int8
 *		Append an integer element.
 */
void
pgarray_add_int4(pgarray *a, int32_t v)
{
	pgarray_put_u32(a, 4);
	pgarray_put_u32(a, (uint32_t) v);
	a->nelems++;
}

void
pgarray_add_int8(pgarray *a, int64_t v)
{
	pgarray_put_u32(a, 8);
	pgarray_put_u64(a, (uint64_t) v);
	a->nelems++;
}

/*
 * pgarray_finish
 *		Patch the has-null flag and the dimension into the header; 0 when
 *		the array is complete, -1 if memory ran out while building it.
 */
int
pgarray_finish(pgarray *a)
{
	unsigned char *p;
	uint32_t	vals[2];
	int			i;

	if (a->failed || a->len < PGARRAY_HEADER_LEN)
		return -1;
	vals[0] = (uint32_t) a->has_null;
	vals[1] = a->nelems;
	for (i = 0; i < 2; i++)
	{
		/* has-null at byte 4, dimension at byte 12 */
		p = (unsigned char *) a->data + (i == 0 ? 4 : 12);
		p[0] = (unsigned char) (vals[i] >> 24);
		p[1] = (unsigned char) (vals[i] >> 16);
		p[2] = (unsigned char) (vals[i] >> 8);
		p[3] = (unsigned char) vals[i];
	}
	return 0;
}

/*
 * pgarray_free
 *		Release the buffer.
 */
void
pgarray_free(pgarray *a)
{
	free(a->data);
	memset(a, 0, sizeof(*a));
}
