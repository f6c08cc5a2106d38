/*-------------------------------------------------------------------------
 *
 * batch_memo.c
 *	  Which batch a lane's encoded arrays hold: a batch retried unchanged
 *	  is not decoded again.
 *
 * Encoding a Schema Registry batch decodes every Avro value (avro_json.c),
 * the costly part of the encoding; a batch that failed transiently is
 * retried as it was, so its encoding can be sent again as it is.  The memo
 * keeps, for the batch last encoded, each message's handle, value,
 * partition and offset in order; a batch is the same when all of them are
 * (a handle lives, and is no other message's, while its message is in the
 * batch).  A batch split for its size, or with a revoked partition's
 * messages dropped, is another batch, and is encoded again.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>

#include "batch_memo.h"

/*
 * batch_memo_entry_of
 *		What the memo keeps of a message.
 */
static batch_memo_entry
batch_memo_entry_of(const batch_msg *m)
{
	batch_memo_entry e;

	e.handle = m->handle;
	e.value = m->value;
	e.value_len = m->value_len;
	e.partition = m->partition;
	e.offset = m->offset;
	return e;
}

/*
 * batch_memo_same
 *		Whether b is the batch the memo remembers, message by message.
 */
int
batch_memo_same(const batch_memo *memo, const batch *b)
{
	int			i;

	if (!memo->valid || memo->count != b->count)
		return 0;
	for (i = 0; i < b->count; i++)
	{
		batch_memo_entry e = batch_memo_entry_of(&b->msgs[i]);
		const batch_memo_entry *k = &memo->items[i];

		if (e.handle != k->handle || e.value != k->value ||
			e.value_len != k->value_len || e.partition != k->partition ||
			e.offset != k->offset)
			return 0;
	}
	return 1;
}

/*
 * batch_memo_remember
 *		Remember b as the batch encoded; out of memory, remember none (the
 *		next attempt encodes again).
 */
void
batch_memo_remember(batch_memo *memo, const batch *b)
{
	int			i;

	memo->valid = 0;
	if (b->count > memo->cap)
	{
		batch_memo_entry *items = realloc(memo->items, sizeof(*items) * (size_t) b->count);

		if (items == NULL)
			return;
		memo->items = items;
		memo->cap = b->count;
	}
	for (i = 0; i < b->count; i++)
		memo->items[i] = batch_memo_entry_of(&b->msgs[i]);
	memo->count = b->count;
	memo->valid = 1;
}

/*
 * batch_memo_forget
 *		Remember no batch (the arrays are being encoded anew).
 */
void
batch_memo_forget(batch_memo *memo)
{
	memo->valid = 0;
}

/*
 * batch_memo_free
 *		Release the memo's memory.
 */
void
batch_memo_free(batch_memo *memo)
{
	free(memo->items);
	memo->items = NULL;
	memo->count = memo->cap = memo->valid = 0;
}
