/*-------------------------------------------------------------------------
 *
 * advances.h
 *	  Position advances past records that hold no event, waiting to be
 *	  sent to the database (received_orders.advance_positions): one per
 *	  partition, merged as they come.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_ADVANCES_H
#define FEEDER_ADVANCES_H

#include <stdint.h>

#include "pgarray.h"

/* At most this many partitions wait (the function takes 4096 per call). */
#define ADVANCES_MAX 4096

/* One partition's position, to move from exactly "from" to "to". */
typedef struct position_advance
{
	char	   *topic;			/* owned */
	int32_t		partition;
	int64_t		from;
	int64_t		to;
} position_advance;

typedef struct advance_list
{
	position_advance *items;
	int			n;
	int			cap;
} advance_list;

/* The statement's four arrays, in the binary format (advances_arrays). */
typedef struct advance_arrays
{
	pgarray		topics;
	pgarray		partitions;
	pgarray		froms;
	pgarray		tos;
} advance_arrays;

extern int	advances_add(advance_list *l, const char *topic, int32_t partition,
						 int64_t from, int64_t to);
extern void advances_merge(advance_list *l, advance_list *older);
extern int	advances_arrays(const advance_list *l, advance_arrays *out);
extern void advance_arrays_free(advance_arrays *a);
extern void advances_free(advance_list *l);

#endif							/* FEEDER_ADVANCES_H */
