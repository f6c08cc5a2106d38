/*-------------------------------------------------------------------------
 *
 * watermarks.c
 *	  A partition's earliest and next offsets, asked of its leader within
 *	  a deadline that holds.
 *
 * librdkafka's rd_kafka_query_watermark_offsets does not keep its timeout
 * (2.0.2, and later 2.x): once the partition's leader is known, it waits
 * for the leader's answers without a deadline, and a leader that refuses
 * connections (a broker down) makes it retry for ever; only a partition
 * without any leader fails within the timeout.  A feeder asking on its
 * main thread then hangs (test/e2e/34-unreadable-watermarks.t).
 * rd_kafka_offsets_for_times sends the same ListOffsets request (the
 * timestamps -2 and -1 ask for the earliest and the next offset) and waits
 * no longer than its timeout; a late answer is discarded.  Two requests,
 * within one deadline in all.
 *
 *-------------------------------------------------------------------------
 */

#include "clock.h"
#include "watermarks.h"

#define WATERMARKS_EARLIEST (-2)	/* ListOffsets timestamp: earliest */
#define WATERMARKS_LATEST (-1)	/* ListOffsets timestamp: next offset */

/*
 * watermarks_ask
 *		The offset of one ListOffsets timestamp of the partition, waiting at
 *		most timeout_ms (at least 1).
 */
static rd_kafka_resp_err_t
watermarks_ask(rd_kafka_t *rk, const char *topic, int32_t partition,
			   int64_t timestamp, int timeout_ms, int64_t *offset)
{
	rd_kafka_topic_partition_list_t *list = rd_kafka_topic_partition_list_new(1);
	rd_kafka_resp_err_t err;

	rd_kafka_topic_partition_list_add(list, topic, partition)->offset = timestamp;
	err = rd_kafka_offsets_for_times(rk, list, timeout_ms > 0 ? timeout_ms : 1);
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
		err = list->elems[0].err;
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR && list->elems[0].offset < 0)
		err = RD_KAFKA_RESP_ERR__BAD_MSG;
	*offset = list->elems[0].offset;
	rd_kafka_topic_partition_list_destroy(list);
	return err;
}

/*
 * watermarks_query
 *		The partition's earliest offset (*low) and next offset (*high),
 *		within timeout_ms in all; librdkafka's error code otherwise
 *		(RD_KAFKA_RESP_ERR__TIMED_OUT, __UNKNOWN_PARTITION when it has no
 *		leader, ...), *low and *high then untouched.
 */
rd_kafka_resp_err_t
watermarks_query(rd_kafka_t *rk, const char *topic, int32_t partition,
				 int timeout_ms, int64_t *low, int64_t *high)
{
	int64_t		deadline = clock_now_ms() + timeout_ms;
	int64_t		lo,
				hi;
	rd_kafka_resp_err_t err;

	err = watermarks_ask(rk, topic, partition, WATERMARKS_EARLIEST, timeout_ms, &lo);
	if (err == RD_KAFKA_RESP_ERR_NO_ERROR)
	{
		int64_t		left = deadline - clock_now_ms();

		if (left <= 0)
			return RD_KAFKA_RESP_ERR__TIMED_OUT;
		err = watermarks_ask(rk, topic, partition, WATERMARKS_LATEST, (int) left, &hi);
	}
	if (err != RD_KAFKA_RESP_ERR_NO_ERROR)
		return err;
	*low = lo;
	*high = hi;
	return RD_KAFKA_RESP_ERR_NO_ERROR;
}
