/*-------------------------------------------------------------------------
 *
 * batch_memo.c
 *	  Which batch a lane's encoded arrays hold: a batch retried unchanged
 *	  is not decoded again.
 *
 * Encoding a Schema Registry batch decodes every Avro value (avro_json.c),
 * the costly part of the encoding; a batch that failed transiently is
 * retried as it was, so its encoding can be sent again as it is.  The memo
 * keeps, for the batch last encoded, its serial and each message's topic,
 * partition and offset in order; a batch is the same when all of them are.
 * The serial makes the memo end with its batch: a batch's first message
 * starts a new serial (batch_add), so once its messages are gone
 * (acknowledged, abandoned, revoked) no later batch is the same, even one
 * of the same coordinates (a partition sought back and read again).  The
 * coordinates tell the retry of a batch split for its size, or with a
 * revoked partition's messages dropped, from the batch encoded: it is
 * encoded again.  Addresses tell nothing: a message released and another
 * received may share them.  The names are copied, as a message's topic
 * lives only as long as the message.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "batch_memo.h"

/*
 * batch_memo_same
 *		Whether b is the batch the memo remembers: the same batch (its
 *		serial), with the same messages in the same order.
 */
int
batch_memo_same(const batch_memo *memo, const batch *b)
{
	int			i;

	if (!memo->valid || memo->serial != b->serial || memo->count != b->count)
		return 0;
	for (i = 0; i < b->count; i++)
	{
		const batch_msg *m = &b->msgs[i];
		const batch_memo_entry *k = &memo->items[i];

		if (m->partition != k->partition || m->offset != k->offset ||
			strcmp(m->topic, memo->names + k->topic) != 0)
			return 0;
	}
	return 1;
}

/*
 * batch_memo_name
 *		Where the memo holds the name of topic, message i's: the name of
 *		message i - 1 when it is the same, else a copy added.  -1 when the
 *		names cannot grow (out of memory).
 */
static int
batch_memo_name(batch_memo *memo, int i, const char *topic, size_t *at)
{
	size_t		len = strlen(topic) + 1;

	if (i > 0 && strcmp(memo->names + memo->items[i - 1].topic, topic) == 0)
	{
		*at = memo->items[i - 1].topic;
		return 0;
	}
	if (len > memo->names_cap - memo->names_len)
	{
		size_t		cap = memo->names_cap ? memo->names_cap : 256;
		char	   *names;

		while (len > cap - memo->names_len)
			cap *= 2;
		names = realloc(memo->names, cap);
		if (names == NULL)
			return -1;
		memo->names = names;
		memo->names_cap = cap;
	}
	memcpy(memo->names + memo->names_len, topic, len);
	*at = memo->names_len;
	memo->names_len += len;
	return 0;
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
	memo->names_len = 0;
	if (b->count > memo->cap)
	{
		batch_memo_entry *items = realloc(memo->items, sizeof(*items) * (size_t) b->count);

		if (items == NULL)
			return;
		memo->items = items;
		memo->cap = b->count;
	}
	for (i = 0; i < b->count; i++)
	{
		const batch_msg *m = &b->msgs[i];

		if (batch_memo_name(memo, i, m->topic, &memo->items[i].topic) != 0)
			return;
		memo->items[i].partition = m->partition;
		memo->items[i].offset = m->offset;
	}
	memo->count = b->count;
	memo->serial = b->serial;
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
	free(memo->names);
	memo->items = NULL;
	memo->names = NULL;
	memo->names_len = memo->names_cap = 0;
	memo->count = memo->cap = memo->valid = 0;
}
