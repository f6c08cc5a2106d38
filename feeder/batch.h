/*-------------------------------------------------------------------------
 *
 * batch.h
 *	  The batching rules of a lane (up to N messages, B bytes, M ms after
 *	  the first; which lane a partition goes to; when a lane holds too
 *	  much), and the queue of messages held for a lane.
 *
 * Nothing here depends on librdkafka or threads: a message is described
 * by a batch_msg whose handle is released by a callback of the owner, so
 * the rules can be tested with made-up messages and a fake clock.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_BATCH_H
#define FEEDER_BATCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct batch_msg
{
	void	   *handle;			/* owner's message (rd_kafka_message_t *) */
	const char *topic;			/* valid while handle lives */
	int32_t		partition;
	int64_t		offset;
	const void *value;			/* NULL: tombstone */
	size_t		value_len;
	const void *key;			/* NULL: no key */
	size_t		key_len;
	const void *type;			/* the type header's value; NULL: none */
	size_t		type_len;
	const void *content_type;	/* the content-type header's; NULL: none */
	size_t		content_type_len;
	const void *schema_id;		/* __value_schema_id (Schema Registry); NULL: none */
	size_t		schema_id_len;
	int			slot;			/* owner's partition slot */
	uint64_t	generation;		/* assignment generation when consumed */
} batch_msg;

typedef void (*batch_release_fn) (void *handle);

/* A set of partitions, by their owner's slots (batch_msg.slot). */
typedef struct slot_set
{
	int		   *slots;
	int			n;
	int			cap;
} slot_set;

/*
 * A partition of the batch and its high watermark as the consumer cached it
 * (-1: not known), recorded with its position in the batch's transaction.
 */
typedef struct batch_watermark
{
	const char *topic;			/* valid while the batch's messages live */
	int32_t		partition;
	int64_t		high;
} batch_watermark;

typedef struct batch
{
	batch_msg  *msgs;
	int			count;
	int			ntombstones;
	int			max_size;
	size_t		max_bytes;		/* bound of the encoded size, a lone message excepted */
	size_t		bytes;			/* encoded size of the messages held */
	int			closed;			/* the next message did not fit: deliver now */
	int			wait_ms;
	int64_t		first_ms;		/* clock at the first message, -1 if empty */
	uint64_t	serial;			/* which batch it holds: each first message starts one */
	batch_watermark *watermarks;	/* its partitions' (batch_note_watermark) */
	int			nwatermarks;
	int			watermarks_cap;
} batch;

/* FIFO of messages consumed for a lane but not yet in its batch. */
typedef struct msg_queue
{
	batch_msg  *items;
	size_t		head;
	size_t		tail;
	size_t		cap;
	size_t		bytes;			/* batch_msg_bytes of the messages held */
} msg_queue;

extern int	batch_init(batch *b, int max_size, int wait_ms);
extern void batch_set_max_bytes(batch *b, size_t max_bytes);
extern size_t batch_msg_bytes(const batch_msg *m);
extern int	batch_sends_value(const char *envelope, const char *event_type,
							  const batch_msg *m);
extern void batch_free(batch *b, batch_release_fn release);
extern void batch_add(batch *b, const batch_msg *m, int64_t now_ms);
extern void batch_note_watermark(batch *b, const char *topic, int32_t partition,
								 int64_t high);
extern int	batch_full(const batch *b);
extern int	batch_expired(const batch *b, int64_t now_ms);
extern int	batch_db_count(const batch *b);
extern void batch_clear(batch *b, batch_release_fn release);
extern int	batch_remove_if(batch *b, int (*drop) (const batch_msg *m, void *arg),
							void *arg, batch_release_fn release);
extern int	batch_take(batch *b, msg_queue *pending, int64_t now_ms);
extern int	batch_lane_of(const batch_msg *m, int nlanes);
extern int	batch_lane_of_slot(int slot, int nlanes);
extern int	batch_backlogged(const batch *b, const msg_queue *pending);
extern int	batch_cut(batch *b, msg_queue *pending, int keep);
extern int	batch_split(batch *b, msg_queue *pending);

extern void queue_init(msg_queue *q);
extern int	queue_push(msg_queue *q, const batch_msg *m);
extern int	queue_pop(msg_queue *q, batch_msg *out);
extern int	queue_unshift(msg_queue *q, const batch_msg *msgs, size_t n);
extern int	queue_peek(const msg_queue *q, batch_msg *out);
extern size_t queue_length(const msg_queue *q);
extern int	queue_remove_if(msg_queue *q, int (*drop) (const batch_msg *m, void *arg),
							void *arg, batch_release_fn release);
extern int	queue_move_if(msg_queue *from, msg_queue *to,
						  int (*move) (const batch_msg *m, void *arg), void *arg);
extern int	queue_move_front(msg_queue *from, msg_queue *to);
extern void queue_free(msg_queue *q, batch_release_fn release);

extern int	slot_set_has(const slot_set *s, int slot);
extern int	slot_set_add(slot_set *s, int slot);
extern int	slot_set_has_msg(const batch_msg *m, void *set);
extern void slot_set_free(slot_set *s);

#endif							/* FEEDER_BATCH_H */
