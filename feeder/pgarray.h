/*-------------------------------------------------------------------------
 *
 * pgarray.h
 *	  Encoder of one-dimensional PostgreSQL arrays in the binary wire
 *	  format, for binary query parameters.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_PGARRAY_H
#define FEEDER_PGARRAY_H

#include <stddef.h>
#include <stdint.h>

/* Type OIDs (pg_type.dat; stable across PostgreSQL versions). */
#define PGARRAY_BYTEAOID		17
#define PGARRAY_INT8OID			20
#define PGARRAY_INT4OID			23
#define PGARRAY_TEXTOID			25
#define PGARRAY_BYTEAARRAYOID	1001
#define PGARRAY_INT4ARRAYOID	1007
#define PGARRAY_TEXTARRAYOID	1009
#define PGARRAY_INT8ARRAYOID	1016
#define PGARRAY_UUIDOID			2950	/* binary: the 16 bytes */
#define PGARRAY_UUIDARRAYOID	2951

typedef struct pgarray
{
	char	   *data;
	size_t		len;
	size_t		cap;
	uint32_t	nelems;
	int			has_null;
	int			failed;			/* out of memory at some point */
} pgarray;

#define PGARRAY_HEADER_LEN 20	/* ndim, has-null, elemtype, dim, lbound */

extern void pgarray_init(pgarray *a);
extern void pgarray_begin(pgarray *a, uint32_t elemtype);
extern void pgarray_add_bytes(pgarray *a, const void *data, size_t len);
extern void pgarray_add_null(pgarray *a);
extern void pgarray_add_int4(pgarray *a, int32_t v);
extern void pgarray_add_int8(pgarray *a, int64_t v);
extern int	pgarray_finish(pgarray *a);
extern void pgarray_free(pgarray *a);

#endif							/* FEEDER_PGARRAY_H */
