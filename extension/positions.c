/*-------------------------------------------------------------------------
 *
 * positions.c
 *	  A consumer group's positions, advanced by the batch that consumed
 *	  the messages.
 *
 * Given a consumer group, the batch function also records, in the
 * caller's transaction, the next offset of every (topic, partition) in the
 * batch: the database then knows how far the group got, in the same commit
 * as the rows.  A NULL value (a tombstone) is then skipped: it is not an
 * event, but its offset counts.  Whether the calling role may move the
 * group's positions is groups.c's to say.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "received_orders.h"

/*
 * The distinct partitions PositionsLastOfPartitions searches one by one; a
 * batch of more is sorted whole.
 */
#define BATCH_PARTITIONS_SCANNED 64

static int	PositionsComparePartitions(const void *a, const void *b, void *arg);
static bool PositionsSamePartition(const Batch *batch, int x, int y);
static int	PositionsLastOfPartitions(Batch *batch, int *last);
static int	PositionsLastOfPartitionsSorted(Batch *batch, int *last);

/*
 * RoPositionsGroupArgument
 *		The consumer group of the forms that take one, with the coordinates
 *		it needs.
 */
text *
RoPositionsGroupArgument(FunctionCallInfo fcinfo)
{
	text	   *consumer_group;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("consumer_group must not be null"),
				 errhint("Pass the Kafka consumer group whose positions the batch advances.")));
	consumer_group = PG_GETARG_TEXT_PP(0);
	if (VARSIZE_ANY_EXHDR(consumer_group) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("consumer_group must not be empty")));
	for (int argno = 2; argno <= 4; argno++)
		if (PG_ARGISNULL(argno))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not be null when a consumer group is given",
							argno == 2 ? "kafka_topics" :
							argno == 3 ? "kafka_partitions" : "kafka_offsets"),
					 errhint("Positions are recorded from each message's topic, partition and offset.")));
	return consumer_group;
}

/*
 * RoPositionsCheckCoordinates
 *		With a consumer group, every element must name its topic, partition
 *		and offset, as Kafka gives them: positions are made of them.
 */
void
RoPositionsCheckCoordinates(Batch *batch)
{
	for (int i = 0; i < batch->count; i++)
	{
		if (batch->topics_null[i] || batch->partitions_null[i] ||
			batch->offsets_null[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("element %d has no Kafka %s", i + 1,
							batch->topics_null[i] ? "topic" :
							batch->partitions_null[i] ? "partition" : "offset"),
					 errhint("With a consumer group, every element needs its topic, partition and offset.")));
		if (VARSIZE_ANY_EXHDR(DatumGetTextPP(batch->topics[i])) == 0 ||
			DatumGetInt32(batch->partitions[i]) < 0 ||
			DatumGetInt64(batch->offsets[i]) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("element %d has invalid Kafka coordinates [%d] @%lld",
							i + 1, DatumGetInt32(batch->partitions[i]),
							(long long) DatumGetInt64(batch->offsets[i])),
					 errhint("Topics are not empty; partitions and offsets are not negative.")));
	}
}

/*
 * PositionsComparePartitions
 *		qsort_arg comparator of element indexes: topic bytes, then
 *		partition, then offset.
 */
static int
PositionsComparePartitions(const void *a, const void *b, void *arg)
{
	const Batch *batch = arg;
	int			x = *(const int *) a;
	int			y = *(const int *) b;
	text	   *tx = DatumGetTextPP(batch->topics[x]);
	text	   *ty = DatumGetTextPP(batch->topics[y]);
	int			lx = VARSIZE_ANY_EXHDR(tx);
	int			ly = VARSIZE_ANY_EXHDR(ty);
	int			cmp = memcmp(VARDATA_ANY(tx), VARDATA_ANY(ty), Min(lx, ly));
	int32		px,
				py;
	int64		ox,
				oy;

	if (cmp != 0)
		return cmp;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	px = DatumGetInt32(batch->partitions[x]);
	py = DatumGetInt32(batch->partitions[y]);
	if (px != py)
		return px < py ? -1 : 1;
	ox = DatumGetInt64(batch->offsets[x]);
	oy = DatumGetInt64(batch->offsets[y]);
	return (ox > oy) - (ox < oy);
}

/*
 * RoPositionsRecord
 *		Record the highest offset + 1 of each (topic, partition) of the batch
 *		for its consumer group, in one statement, in the caller's
 *		transaction.  Every element counts, whatever its outcome: a rejected
 *		message is quarantined in the same transaction, so it is consumed too.
 */
void
RoPositionsRecord(Batch *batch)
{
	int		   *last;
	Datum	   *topics;
	Datum	   *partitions;
	Datum	   *next_offsets;
	int			n;

	if (batch->count <= 0)
		return;
	last = palloc(sizeof(int) * batch->count);
	n = PositionsLastOfPartitions(batch, last);

	topics = palloc(sizeof(Datum) * n);
	partitions = palloc(sizeof(Datum) * n);
	next_offsets = palloc(sizeof(Datum) * n);
	for (int k = 0; k < n; k++)
	{
		int			i = last[k];

		if (DatumGetInt64(batch->offsets[i]) == PG_INT64_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("element %d has Kafka offset %lld, which has no next offset",
							i + 1, (long long) PG_INT64_MAX)));
		topics[k] = batch->topics[i];
		partitions[k] = batch->partitions[i];
		next_offsets[k] = Int64GetDatum(DatumGetInt64(batch->offsets[i]) + 1);
	}
	RoStoreAdvancePositions(batch->consumer_group, topics, partitions,
							next_offsets, n);
}

/*
 * PositionsLastOfPartitions
 *		Fill last[] with the element of the highest offset of each (topic,
 *		partition) of the batch, sorted by topic and partition (the order in
 *		which the statement locks the positions' rows); returns how many.
 *
 * One pass: a batch comes from a few partitions, each in long runs, so an
 * element is nearly always of the run before it.  Past
 * BATCH_PARTITIONS_SCANNED partitions the search would cost more than a
 * sort of the whole batch, which then decides.
 */
static int
PositionsLastOfPartitions(Batch *batch, int *last)
{
	int			n = 0;
	int			current = -1;

	for (int i = 0; i < batch->count; i++)
	{
		int			k = current;

		if (k < 0 || !PositionsSamePartition(batch, last[k], i))
		{
			for (k = 0; k < n && !PositionsSamePartition(batch, last[k], i); k++)
				;
			if (k == n)
			{
				if (n == BATCH_PARTITIONS_SCANNED)
					return PositionsLastOfPartitionsSorted(batch, last);
				last[n++] = i;
			}
		}
		if (DatumGetInt64(batch->offsets[i]) > DatumGetInt64(batch->offsets[last[k]]))
			last[k] = i;
		current = k;
	}
	qsort_arg(last, n, sizeof(int), PositionsComparePartitions, batch);
	return n;
}

/*
 * PositionsLastOfPartitionsSorted
 *		PositionsLastOfPartitions by a sort of every element.
 */
static int
PositionsLastOfPartitionsSorted(Batch *batch, int *last)
{
	int		   *order = palloc(sizeof(int) * batch->count);
	int			n = 0;

	for (int i = 0; i < batch->count; i++)
		order[i] = i;
	qsort_arg(order, batch->count, sizeof(int), PositionsComparePartitions, batch);
	/* sorted by offset within a partition: keep each one's last */
	for (int k = 0; k < batch->count; k++)
		if (k + 1 == batch->count || !PositionsSamePartition(batch, order[k], order[k + 1]))
			last[n++] = order[k];
	pfree(order);
	return n;
}

/*
 * PositionsSamePartition
 *		Whether elements x and y have the same topic and partition.
 */
static bool
PositionsSamePartition(const Batch *batch, int x, int y)
{
	return DatumGetInt32(batch->partitions[x]) == DatumGetInt32(batch->partitions[y]) &&
		RoOutcomeSameText(DatumGetTextPP(batch->topics[x]),
						DatumGetTextPP(batch->topics[y]));
}
