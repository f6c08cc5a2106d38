/*-------------------------------------------------------------------------
 *
 * batch_memo.h
 *	  Which batch a lane's encoded arrays hold: a batch retried unchanged
 *	  is not decoded again.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_BATCH_MEMO_H
#define FEEDER_BATCH_MEMO_H

#include <stddef.h>
#include <stdint.h>

#include "batch.h"

/* One message as the memo knows it: its Kafka coordinates. */
typedef struct batch_memo_entry
{
	size_t		topic;			/* its topic's name, at names + topic */
	int32_t		partition;
	int64_t		offset;
} batch_memo_entry;

typedef struct batch_memo
{
	batch_memo_entry *items;
	int			count;
	int			cap;
	char	   *names;			/* the topics' names, copied */
	size_t		names_len;
	size_t		names_cap;
	uint64_t	serial;			/* the batch's (batch.serial) */
	int			valid;			/* 0: it remembers no batch */
} batch_memo;

extern int	batch_memo_same(const batch_memo *memo, const batch *b);
extern void batch_memo_remember(batch_memo *memo, const batch *b);
extern void batch_memo_forget(batch_memo *memo);
extern void batch_memo_free(batch_memo *memo);

#endif							/* FEEDER_BATCH_MEMO_H */
