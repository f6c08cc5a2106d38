/*-------------------------------------------------------------------------
 *
 * batch.c
 *	  Assembling a lane's batches of Kafka messages, and the queue of
 *	  messages held for a lane.
 *
 * When its database session is free, a lane takes what it holds, in
 * order, up to max_size messages and max_bytes (batch_take); the batch goes
 * at once, or wait_ms after its first message.  Tombstones (null values)
 * travel in the batch so that their offsets are acknowledged with it, but
 * are counted apart and never sent to the database.
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "batch.h"
#include "../common/cloudevents_mode.h"

/*
 * batch_init
 *		Allocate room for max_size messages; 0 on success.
 */
int
batch_init(batch *b, int max_size, int wait_ms)
{
	memset(b, 0, sizeof(*b));
	b->msgs = calloc((size_t) max_size, sizeof(batch_msg));
	if (b->msgs == NULL)
		return -1;
	b->max_size = max_size;
	b->max_bytes = SIZE_MAX;
	b->wait_ms = wait_ms;
	b->first_ms = -1;
	return 0;
}

/*
 * batch_free
 *		Release the messages still held and the batch's memory.
 */
void
batch_free(batch *b, batch_release_fn release)
{
	batch_clear(b, release);
	free(b->msgs);
	b->msgs = NULL;
	b->max_size = 0;
	free(b->watermarks);
	b->watermarks = NULL;
	b->watermarks_cap = 0;
}

/*
 * batch_note_watermark
 *		Record a partition's high watermark for the batch (replacing the one
 *		noted before for it); on out of memory the partition is left out:
 *		the watermark is for the lag views only.
 */
void
batch_note_watermark(batch *b, const char *topic, int32_t partition, int64_t high)
{
	int			i;

	for (i = 0; i < b->nwatermarks; i++)
		if (b->watermarks[i].partition == partition &&
			strcmp(b->watermarks[i].topic, topic) == 0)
		{
			b->watermarks[i].topic = topic;
			b->watermarks[i].high = high;
			return;
		}
	if (b->nwatermarks == b->watermarks_cap)
	{
		int			cap = b->watermarks_cap ? 2 * b->watermarks_cap : 8;
		batch_watermark *w = realloc(b->watermarks, sizeof(batch_watermark) * (size_t) cap);

		if (w == NULL)
			return;
		b->watermarks = w;
		b->watermarks_cap = cap;
	}
	b->watermarks[b->nwatermarks].topic = topic;
	b->watermarks[b->nwatermarks].partition = partition;
	b->watermarks[b->nwatermarks].high = high;
	b->nwatermarks++;
}

/*
 * batch_add
 *		Append a message (the caller checked batch_full).  The first message
 *		starts a new batch: its clock, and its serial, so that a batch
 *		retried keeps its serial while one refilled after its messages went
 *		(acknowledged, abandoned, revoked) never has an earlier one's.
 */
void
batch_add(batch *b, const batch_msg *m, int64_t now_ms)
{
	if (b->count >= b->max_size)
		return;
	if (b->count == 0)
	{
		b->first_ms = now_ms;
		b->serial++;
	}
	b->bytes += batch_msg_bytes(m);
	b->msgs[b->count++] = *m;
	if (m->value == NULL)
		b->ntombstones++;
}

/*
 * batch_full
 *		True when the size limit is reached.
 */
int
batch_full(const batch *b)
{
	return b->count >= b->max_size || b->closed;
}

/*
 * batch_expired
 *		True when the time limit of a non-empty batch is reached.
 */
int
batch_expired(const batch *b, int64_t now_ms)
{
	return b->count > 0 && now_ms - b->first_ms >= b->wait_ms;
}

/*
 * batch_db_count
 *		Messages that go to the database: all but the tombstones.
 */
int
batch_db_count(const batch *b)
{
	return b->count - b->ntombstones;
}

/*
 * batch_clear
 *		Release every message and empty the batch for reuse.
 */
void
batch_clear(batch *b, batch_release_fn release)
{
	int			i;

	if (release)
		for (i = 0; i < b->count; i++)
			release(b->msgs[i].handle);
	b->count = 0;
	b->ntombstones = 0;
	b->bytes = 0;
	b->closed = 0;
	b->first_ms = -1;
	b->nwatermarks = 0;
}

/*
 * batch_remove_if
 *		Drop (and release) the messages for which drop() is true, keeping
 *		the order of the others.  Used when partitions are revoked while a
 *		batch waits for a retry: their messages now belong to another
 *		consumer and must not be acknowledged by this one.  Returns the
 *		number dropped.
 */
int
batch_remove_if(batch *b, int (*drop) (const batch_msg *m, void *arg),
				void *arg, batch_release_fn release)
{
	int			i,
				kept = 0,
				dropped = 0;

	b->ntombstones = 0;
	b->bytes = 0;
	for (i = 0; i < b->count; i++)
	{
		if (drop(&b->msgs[i], arg))
		{
			if (release)
				release(b->msgs[i].handle);
			dropped++;
			continue;
		}
		b->msgs[kept] = b->msgs[i];
		if (b->msgs[kept].value == NULL)
			b->ntombstones++;
		b->bytes += batch_msg_bytes(&b->msgs[kept]);
		kept++;
	}
	b->count = kept;
	if (kept == 0)
		b->first_ms = -1;
	return dropped;
}

/*
 * batch_cut
 *		Keep the first keep messages of a batch and put the others back at
 *		the front of pending, in order, so that they are the next batch.
 *		Returns the number put back; 0 when there is none to put back, or
 *		pending cannot grow (the batch is then left whole).
 */
int
batch_cut(batch *b, msg_queue *pending, int keep)
{
	int			back = b->count - keep;
	int			i;

	if (keep < 0 || back <= 0 ||
		queue_unshift(pending, b->msgs + keep, (size_t) back) != 0)
		return 0;
	b->count = keep;
	b->bytes = 0;
	b->ntombstones = 0;
	for (i = 0; i < keep; i++)
	{
		b->bytes += batch_msg_bytes(&b->msgs[i]);
		if (b->msgs[i].value == NULL)
			b->ntombstones++;
	}
	return back;
}

/*
 * batch_split
 *		Keep the first half of a batch of two or more messages and put the
 *		second half back at the front of pending, in order, so that it is
 *		the next batch: a batch that failed because of its size is retried
 *		in halves, never whole again.  Returns the number of messages put
 *		back; 0 when the batch holds one message (or pending cannot grow:
 *		the batch is then retried whole).
 */
int
batch_split(batch *b, msg_queue *pending)
{
	if (b->count < 2)
		return 0;
	return batch_cut(b, pending, b->count / 2);
}

/*
 * batch_msg_bytes
 *		What a message adds to the encoded batch: value, key and topic,
 *		and the array elements' own headers.
 */
size_t
batch_msg_bytes(const batch_msg *m)
{
	return m->value_len + m->key_len + m->type_len + m->content_type_len +
		(m->topic ? strlen(m->topic) : 0) + 40;
}

/*
 * batch_set_max_bytes
 *		Bound the encoded size of a batch (a message larger than the bound
 *		still goes, alone): PostgreSQL refuses a message over 1 GB, and a
 *		backend parses a whole batch in memory.
 */
void
batch_set_max_bytes(batch *b, size_t max_bytes)
{
	b->max_bytes = max_bytes > 0 ? max_bytes : SIZE_MAX;
}

/*
 * batch_fits
 *		Whether m may join b without passing the byte bound; an empty batch
 *		takes any message.
 */
static int
batch_fits(const batch *b, const batch_msg *m)
{
	return b->count == 0 || b->bytes + batch_msg_bytes(m) <= b->max_bytes;
}

/*
 * batch_take
 *		The batching rule of an idle lane: move held messages into b, in
 *		order, while they fit (count and bytes; a message that does not fit
 *		closes the batch and waits for the next).  Returns 1 when b should
 *		be sent now: it is full or closed, or wait_ms have passed since its
 *		first message (at once with wait_ms 0: what is held when the
 *		database is free goes, and while a batch is in flight the next one
 *		grows by itself, up to max_size).
 */
int
batch_take(batch *b, msg_queue *pending, int64_t now_ms)
{
	batch_msg	m;

	while (!batch_full(b) && queue_peek(pending, &m))
	{
		if (!batch_fits(b, &m))
		{
			b->closed = 1;
			break;
		}
		queue_pop(pending, &m);
		batch_add(b, &m, now_ms);
	}
	if (b->count == 0)
		return 0;
	return batch_full(b) || batch_expired(b, now_ms);
}

/*
 * batch_lane_of
 *		The lane (database session) of a message: by its partition's slot,
 *		so that a partition always goes through the same session and its
 *		batches commit in order.
 */
int
batch_lane_of(const batch_msg *m, int nlanes)
{
	return batch_lane_of_slot(m->slot, nlanes);
}

/*
 * batch_lane_of_slot
 *		The lane of a partition's slot (batch_lane_of's rule).
 */
int
batch_lane_of_slot(int slot, int nlanes)
{
	if (nlanes <= 1 || slot < 0)
		return 0;
	return slot % nlanes;
}

/*
 * batch_backlogged
 *		Whether the messages held for a lane make two whole batches (by
 *		count or bytes): then consuming waits for lanes, which bounds the
 *		memory held to about three batches per lane (one in flight), while
 *		a lane one batch behind does not keep the others from being fed.
 */
int
batch_backlogged(const batch *b, const msg_queue *pending)
{
	return queue_length(pending) >= 2 * (size_t) b->max_size ||
		(b->max_bytes < SIZE_MAX / 2 && pending->bytes >= 2 * b->max_bytes);
}

/*
 * queue_init
 *		An empty FIFO.
 */
void
queue_init(msg_queue *q)
{
	memset(q, 0, sizeof(*q));
}

/*
 * queue_grow
 *		Make q's array hold at least need messages, doubling its capacity
 *		(64 at first); 0, or -1 on out of memory (q unchanged).
 */
static int
queue_grow(msg_queue *q, size_t need)
{
	size_t		cap = q->cap ? q->cap : 64;
	batch_msg  *items;

	if (need <= q->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	items = realloc(q->items, cap * sizeof(batch_msg));
	if (items == NULL)
		return -1;
	q->items = items;
	q->cap = cap;
	return 0;
}

/*
 * queue_reserve
 *		Room for n more messages at q's tail, moving the held ones to the
 *		front of the array first; 0, or -1 on out of memory.
 */
static int
queue_reserve(msg_queue *q, size_t n)
{
	size_t		held = q->tail - q->head;

	if (q->tail + n <= q->cap)
		return 0;
	if (q->head > 0)
	{
		memmove(q->items, q->items + q->head, held * sizeof(batch_msg));
		q->head = 0;
		q->tail = held;
	}
	return queue_grow(q, held + n);
}

/*
 * queue_push
 *		Append a message, growing the array; 0 on success, -1 on out of
 *		memory (the caller then releases the message unacknowledged).
 */
int
queue_push(msg_queue *q, const batch_msg *m)
{
	if (queue_reserve(q, 1) != 0)
		return -1;
	q->items[q->tail++] = *m;
	q->bytes += batch_msg_bytes(m);
	return 0;
}

/*
 * queue_unshift
 *		Put n messages back in front of the held ones, in their order (they
 *		were taken before them); 0 on success, -1 on out of memory (the
 *		queue is unchanged).
 */
int
queue_unshift(msg_queue *q, const batch_msg *msgs, size_t n)
{
	size_t		held = q->tail - q->head;

	if (n == 0)
		return 0;
	if (q->head < n)
	{
		if (queue_grow(q, held + n) != 0)
			return -1;
		memmove(q->items + n, q->items + q->head, held * sizeof(batch_msg));
		q->head = n;
		q->tail = n + held;
	}
	q->head -= n;
	memcpy(q->items + q->head, msgs, n * sizeof(batch_msg));
	for (size_t i = 0; i < n; i++)
		q->bytes += batch_msg_bytes(&msgs[i]);
	return 0;
}

/*
 * queue_peek
 *		The oldest held message, left in the queue; 0 when empty.
 */
int
queue_peek(const msg_queue *q, batch_msg *out)
{
	if (q->head == q->tail)
		return 0;
	*out = q->items[q->head];
	return 1;
}

/*
 * queue_pop
 *		Take the oldest message; 1 if there was one.
 */
int
queue_pop(msg_queue *q, batch_msg *out)
{
	if (q->head == q->tail)
		return 0;
	*out = q->items[q->head++];
	q->bytes -= batch_msg_bytes(out);
	if (q->head == q->tail)
		q->head = q->tail = 0;
	return 1;
}

/*
 * queue_length
 *		Messages held.
 */
size_t
queue_length(const msg_queue *q)
{
	return q->tail - q->head;
}

/*
 * queue_remove_if
 *		Drop (and release) held messages for which drop() is true, keeping
 *		the order of the others; returns the number dropped.
 */
int
queue_remove_if(msg_queue *q, int (*drop) (const batch_msg *m, void *arg),
				void *arg, batch_release_fn release)
{
	size_t		i,
				kept = q->head;
	int			dropped = 0;

	for (i = q->head; i < q->tail; i++)
	{
		if (drop(&q->items[i], arg))
		{
			q->bytes -= batch_msg_bytes(&q->items[i]);
			if (release)
				release(q->items[i].handle);
			dropped++;
			continue;
		}
		q->items[kept++] = q->items[i];
	}
	q->tail = kept;
	if (q->head == q->tail)
		q->head = q->tail = 0;
	return dropped;
}

/*
 * queue_move_if
 *		Move the held messages of from for which move() is true to the
 *		end of to, in their order, keeping the order of the others.
 *		Returns the number moved, or -1 on out of memory (both unchanged).
 */
int
queue_move_if(msg_queue *from, msg_queue *to,
			  int (*move) (const batch_msg *m, void *arg), void *arg)
{
	size_t		i,
				kept = from->head,
				n = 0;

	for (i = from->head; i < from->tail; i++)
		n += move(&from->items[i], arg) != 0;
	if (n == 0)
		return 0;
	if (queue_reserve(to, n) != 0)
		return -1;
	for (i = from->head; i < from->tail; i++)
	{
		const batch_msg *m = &from->items[i];

		if (move(m, arg))
		{
			from->bytes -= batch_msg_bytes(m);
			to->items[to->tail++] = *m;
			to->bytes += batch_msg_bytes(m);
			continue;
		}
		from->items[kept++] = *m;
	}
	from->tail = kept;
	if (from->head == from->tail)
		from->head = from->tail = 0;
	return (int) n;
}

/*
 * queue_move_front
 *		Move every message of from in front of those of to, in order (they
 *		were consumed before them); 0, or -1 on out of memory (both
 *		unchanged).
 */
int
queue_move_front(msg_queue *from, msg_queue *to)
{
	if (queue_unshift(to, from->items + from->head, from->tail - from->head) != 0)
		return -1;
	from->head = from->tail = 0;
	from->bytes = 0;
	return 0;
}

/*
 * slot_set_has, slot_set_add, slot_set_has_msg, slot_set_free
 *		A small set of partitions by slot: whether it holds one; add one
 *		(0, or -1 on out of memory); whether it holds a message's (a
 *		predicate for queue_move_if); release it.
 */
int
slot_set_has(const slot_set *s, int slot)
{
	int			i;

	for (i = 0; i < s->n; i++)
		if (s->slots[i] == slot)
			return 1;
	return 0;
}

int
slot_set_add(slot_set *s, int slot)
{
	if (slot_set_has(s, slot))
		return 0;
	if (s->n == s->cap)
	{
		int			cap = s->cap ? s->cap * 2 : 8;
		int		   *grown = realloc(s->slots, sizeof(int) * (size_t) cap);

		if (grown == NULL)
			return -1;
		s->slots = grown;
		s->cap = cap;
	}
	s->slots[s->n++] = slot;
	return 0;
}

int
slot_set_has_msg(const batch_msg *m, void *set)
{
	return slot_set_has(set, m->slot);
}

void
slot_set_free(slot_set *s)
{
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

/*
 * queue_free
 *		Release every held message and the queue's memory.
 */
void
queue_free(msg_queue *q, batch_release_fn release)
{
	size_t		i;

	if (release)
		for (i = q->head; i < q->tail; i++)
			release(q->items[i].handle);
	free(q->items);
	memset(q, 0, sizeof(*q));
}

/*
 * batch_sends_value
 *		Whether a message's value goes to the database: not when an event
 *		type is selected and the message's type header names another, byte
 *		for byte (the database reports it skipped from its type alone, and
 *		the event never travels).  A CloudEvents structured-mode message
 *		carries its type inside the value: it is sent, the database decides;
 *		structured mode is told by the rule the extension applies too
 *		(common/cloudevents_mode.h).
 */
int
batch_sends_value(const char *envelope, const char *event_type, const batch_msg *m)
{
	if (event_type == NULL || m->type == NULL)
		return 1;
	if (strcmp(envelope, "cloudevents") == 0 &&
		ro_cloudevents_structured(m->content_type, m->content_type_len))
		return 1;
	return m->type_len == strlen(event_type) &&
		memcmp(m->type, event_type, m->type_len) == 0;
}
