/*-------------------------------------------------------------------------
 *
 * advances.c
 *	  Position advances past records that hold no event, waiting to be
 *	  sent to the database (received_orders.advance_positions).
 *
 * The consumer acknowledges, past the last message stored, the commit and
 * abort markers of transactions and the messages of aborted ones
 * (kafka_ack_positions); the database's position of the partition is
 * moved the same way, compare and set, by the status reporter's session
 * (status.c).  Until it sends them they wait here, one per partition: two
 * advances of a partition that follow each other (the second starts where
 * the first ends, as when a send failed and the next marker came) become
 * one, from the first's start to the second's end; otherwise the one that
 * starts later wins, since a batch moved the position past the other's
 * start (it would not apply any more).  Nothing here is correctness: an
 * advance that is lost leaves the position one marker short, which the
 * next batch of the partition moves past.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "advances.h"

/*
 * advances_find
 *		The index of (topic, partition) in l, -1 if it has none.
 */
static int
advances_find(const advance_list *l, const char *topic, int32_t partition)
{
	int			i;

	for (i = 0; i < l->n; i++)
		if (l->items[i].partition == partition &&
			strcmp(l->items[i].topic, topic) == 0)
			return i;
	return -1;
}

/*
 * advances_add
 *		Record that the partition's position may move from "from" to "to",
 *		merged with the advance already waiting for it (see the file
 *		header).  0 when recorded or merged, -1 when dropped: to not above
 *		from, ADVANCES_MAX partitions waiting, or out of memory.
 */
int
advances_add(advance_list *l, const char *topic, int32_t partition,
			 int64_t from, int64_t to)
{
	int			i;
	position_advance *e;

	if (from < 0 || to <= from)
		return -1;
	i = advances_find(l, topic, partition);
	if (i >= 0)
	{
		e = &l->items[i];
		if (e->to == from)
			e->to = to;			/* it follows the waiting one */
		else if (to == e->from)
			e->from = from;		/* it precedes the waiting one */
		else if (from > e->from)
		{
			e->from = from;		/* a batch moved the position since */
			e->to = to;
		}
		return 0;
	}
	if (l->n >= ADVANCES_MAX)
		return -1;
	if (l->n == l->cap)
	{
		int			cap = l->cap ? l->cap * 2 : 16;
		position_advance *items = realloc(l->items, sizeof(*items) * (size_t) cap);

		if (items == NULL)
			return -1;
		l->items = items;
		l->cap = cap;
	}
	e = &l->items[l->n];
	e->topic = strdup(topic);
	if (e->topic == NULL)
		return -1;
	e->partition = partition;
	e->from = from;
	e->to = to;
	l->n++;
	return 0;
}

/*
 * advances_merge
 *		Put the advances of older (taken from l earlier, whose send failed)
 *		back into l, merged with those recorded since; older is emptied.
 */
void
advances_merge(advance_list *l, advance_list *older)
{
	int			i;

	for (i = 0; i < older->n; i++)
		(void) advances_add(l, older->items[i].topic, older->items[i].partition,
							older->items[i].from, older->items[i].to);
	advances_free(older);
}

/*
 * advances_arrays
 *		The statement's arguments: text[], integer[], bigint[], bigint[] in
 *		the binary format, element by element.  0, or -1 on out of memory
 *		(out is then freed).
 */
int
advances_arrays(const advance_list *l, advance_arrays *out)
{
	int			i;

	pgarray_init(&out->topics);
	pgarray_init(&out->partitions);
	pgarray_init(&out->froms);
	pgarray_init(&out->tos);
	pgarray_begin(&out->topics, PGARRAY_TEXTOID);
	pgarray_begin(&out->partitions, PGARRAY_INT4OID);
	pgarray_begin(&out->froms, PGARRAY_INT8OID);
	pgarray_begin(&out->tos, PGARRAY_INT8OID);
	for (i = 0; i < l->n; i++)
	{
		const position_advance *e = &l->items[i];

		pgarray_add_bytes(&out->topics, e->topic, strlen(e->topic));
		pgarray_add_int4(&out->partitions, e->partition);
		pgarray_add_int8(&out->froms, e->from);
		pgarray_add_int8(&out->tos, e->to);
	}
	if (pgarray_finish(&out->topics) != 0 || pgarray_finish(&out->partitions) != 0 ||
		pgarray_finish(&out->froms) != 0 || pgarray_finish(&out->tos) != 0)
	{
		advance_arrays_free(out);
		return -1;
	}
	return 0;
}

/*
 * advance_arrays_free
 *		Release what advances_arrays built.
 */
void
advance_arrays_free(advance_arrays *a)
{
	pgarray_free(&a->topics);
	pgarray_free(&a->partitions);
	pgarray_free(&a->froms);
	pgarray_free(&a->tos);
}

/*
 * advances_free
 *		Release every advance of l; l is empty afterwards.
 */
void
advances_free(advance_list *l)
{
	int			i;

	for (i = 0; i < l->n; i++)
		free(l->items[i].topic);
	free(l->items);
	memset(l, 0, sizeof(*l));
}
