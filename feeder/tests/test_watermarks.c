/*-------------------------------------------------------------------------
 *
 * test_watermarks.c
 *	  Unit tests of watermarks.c against librdkafka's mock cluster, in
 *	  process: a partition's offsets are read, and a partition whose leader
 *	  is down or unknown fails within the deadline while the others answer.
 *
 * The mock cluster has 3 brokers and topic "t" of 3 partitions: 0 led by
 * broker 1 (3 messages produced), 1 by broker 2, 2 by broker 3.  With
 * broker 3 down, librdkafka's rd_kafka_query_watermark_offsets would not
 * return at all (its wait ignores its timeout); SIGALRM ends a hung test.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "watermarks.h"

#define TIMEOUT_MS 1000

static rd_kafka_t *owner;
static rd_kafka_mock_cluster_t *mcluster;
static rd_kafka_t *consumer;

/*
 * client
 *		A client handle of the given type on bootstrap (NULL: the handle
 *		that owns the mock cluster, which needs no brokers).
 */
static rd_kafka_t *
client(rd_kafka_type_t type, const char *bootstrap)
{
	char		errstr[512];
	rd_kafka_conf_t *conf = rd_kafka_conf_new();

	assert_int_equal(rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr)),
					 RD_KAFKA_CONF_OK);
	if (bootstrap)
		assert_int_equal(rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap,
										   errstr, sizeof(errstr)), RD_KAFKA_CONF_OK);
	if (type == RD_KAFKA_CONSUMER)
		assert_int_equal(rd_kafka_conf_set(conf, "group.id", "test-watermarks",
										   errstr, sizeof(errstr)), RD_KAFKA_CONF_OK);
	return rd_kafka_new(type, conf, errstr, sizeof(errstr));
}

/*
 * setup
 *		The mock cluster of the file header, its topic, three messages on
 *		partition 0, and the consumer handle the tests ask with.
 */
static int
setup(void **state)
{
	rd_kafka_t *producer;
	int			i;

	(void) state;
	alarm(120);
	owner = client(RD_KAFKA_PRODUCER, NULL);
	mcluster = rd_kafka_mock_cluster_new(owner, 3);
	if (mcluster == NULL ||
		rd_kafka_mock_topic_create(mcluster, "t", 3, 3) != RD_KAFKA_RESP_ERR_NO_ERROR)
		return -1;
	for (i = 0; i < 3; i++)
		if (rd_kafka_mock_partition_set_leader(mcluster, "t", i, i + 1) != RD_KAFKA_RESP_ERR_NO_ERROR)
			return -1;
	producer = client(RD_KAFKA_PRODUCER, rd_kafka_mock_cluster_bootstraps(mcluster));
	for (i = 0; i < 3; i++)
		if (rd_kafka_producev(producer, RD_KAFKA_V_TOPIC("t"), RD_KAFKA_V_PARTITION(0),
							  RD_KAFKA_V_VALUE("x", 1), RD_KAFKA_V_END) != RD_KAFKA_RESP_ERR_NO_ERROR)
			return -1;
	if (rd_kafka_flush(producer, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR)
		return -1;
	rd_kafka_destroy(producer);
	consumer = client(RD_KAFKA_CONSUMER, rd_kafka_mock_cluster_bootstraps(mcluster));
	return consumer ? 0 : -1;
}

/*
 * teardown
 *		Destroy the consumer, the mock cluster and its owner.
 */
static int
teardown(void **state)
{
	(void) state;
	rd_kafka_destroy(consumer);
	rd_kafka_mock_cluster_destroy(mcluster);
	rd_kafka_destroy(owner);
	return 0;
}

/*
 * ask
 *		Ask partition p: the error, the offsets in lo and hi (-7 when not
 *		set), the time taken in *ms.
 */
static rd_kafka_resp_err_t
ask(int32_t p, int64_t *lo, int64_t *hi, int64_t *ms)
{
	int64_t		start = watermarks_now_ms();
	rd_kafka_resp_err_t err;

	*lo = *hi = -7;
	err = watermarks_query(consumer, "t", p, TIMEOUT_MS, lo, hi);
	*ms = watermarks_now_ms() - start;
	return err;
}

/* Every leader up: each partition's earliest and next offsets. */
static void
test_read(void **state)
{
	int64_t		lo,
				hi,
				ms;

	(void) state;
	assert_int_equal(ask(0, &lo, &hi, &ms), RD_KAFKA_RESP_ERR_NO_ERROR);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 3);
	assert_int_equal(ask(2, &lo, &hi, &ms), RD_KAFKA_RESP_ERR_NO_ERROR);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 0);
}

/*
 * Broker 3 down: partition 2 fails within the deadline (plus scheduling
 * slack), its offsets untouched; partitions 0 and 1 still answer.  Up
 * again: partition 2 answers.
 */
static void
test_leader_down(void **state)
{
	int64_t		lo,
				hi,
				ms;

	(void) state;
	assert_int_equal(rd_kafka_mock_broker_set_down(mcluster, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
	assert_int_not_equal(ask(2, &lo, &hi, &ms), RD_KAFKA_RESP_ERR_NO_ERROR);
	assert_true(ms < TIMEOUT_MS + 2000);
	assert_int_equal(lo, -7);
	assert_int_equal(hi, -7);
	assert_int_equal(ask(0, &lo, &hi, &ms), RD_KAFKA_RESP_ERR_NO_ERROR);
	assert_int_equal(hi, 3);
	assert_int_equal(ask(1, &lo, &hi, &ms), RD_KAFKA_RESP_ERR_NO_ERROR);
	assert_int_equal(rd_kafka_mock_broker_set_up(mcluster, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
	for (int i = 0; i < 30 && ask(2, &lo, &hi, &ms) != RD_KAFKA_RESP_ERR_NO_ERROR; i++)
		usleep(200000);
	assert_int_equal(ask(2, &lo, &hi, &ms), RD_KAFKA_RESP_ERR_NO_ERROR);
	assert_int_equal(hi, 0);
}

/* No leader at all: the metadata says so, the query fails at once. */
static void
test_no_leader(void **state)
{
	int64_t		lo,
				hi,
				ms;

	(void) state;
	assert_int_equal(rd_kafka_mock_partition_set_leader(mcluster, "t", 1, -1),
					 RD_KAFKA_RESP_ERR_NO_ERROR);
	for (int i = 0; i < 30 && ask(1, &lo, &hi, &ms) == RD_KAFKA_RESP_ERR_NO_ERROR; i++)
		usleep(200000);			/* until the client's metadata says so */
	assert_int_not_equal(ask(1, &lo, &hi, &ms), RD_KAFKA_RESP_ERR_NO_ERROR);
	assert_true(ms < TIMEOUT_MS + 2000);
	assert_int_equal(ask(0, &lo, &hi, &ms), RD_KAFKA_RESP_ERR_NO_ERROR);
	assert_int_equal(rd_kafka_mock_partition_set_leader(mcluster, "t", 1, 2),
					 RD_KAFKA_RESP_ERR_NO_ERROR);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_leader_down),
		cmocka_unit_test(test_no_leader),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
