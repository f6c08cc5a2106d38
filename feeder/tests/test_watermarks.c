/*-------------------------------------------------------------------------
 *
 * test_watermarks.c
 *	  Unit tests of watermarks.c against librdkafka's mock cluster, in
 *	  process: a partition's offsets are read, and a partition whose leader
 *	  is down or unknown fails within the deadline while the others answer.
 *	  And of the lag of partitions not fetched yet (kafka_status.c, asked
 *	  by kafka_asker.c's thread): a refresh never waits on the brokers,
 *	  even with a leader down, and the lag is known once answered.
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

#include "kafka_status.h"
#include "kafka_asker.h"
#include "kafka_int.h"
#include "clock.h"
#include "watermarks.h"

#define TIMEOUT_MS 1000
/* kafka_status.c's broker query timeout (KAFKA_ASK_TIMEOUT_MS) */
#define ASK_TIMEOUT_MS 200

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
	int64_t		start = clock_now_ms();
	rd_kafka_resp_err_t err;

	*lo = *hi = -7;
	err = watermarks_query(consumer, "t", p, TIMEOUT_MS, lo, hi);
	*ms = clock_now_ms() - start;
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

/*
 * Three assigned partitions not fetched yet, partition 2's leader down:
 * ten lag refreshes do not wait on the brokers (asking on the main thread,
 * the first refresh alone waited ASK_TIMEOUT_MS for partition 2, and the
 * bound is generous: it measures blocking, not speed); once the asker has
 * answered, partition 0's lag is known (3 messages from its earliest
 * offset, the group has no committed offset), partition 1's is 0, and
 * partition 2's stays unknown.
 */
static void
test_lag_never_waits(void **state)
{
	kafka_consumer kc;
	kafka_slot	slots[3];
	kafka_partition_lag *lags = NULL;
	char		err[256];
	int64_t		start,
				ms;
	int			i,
				n = 0;

	(void) state;
	memset(&kc, 0, sizeof(kc));
	memset(slots, 0, sizeof(slots));
	for (i = 0; i < 3; i++)
	{
		slots[i].topic = (char *) "t";
		slots[i].partition = i;
		slots[i].assigned = 1;
		slots[i].waiting_start = 1;
		slots[i].acked = slots[i].first_seen = slots[i].store_to = -1;
		slots[i].committed = slots[i].db_next = slots[i].start_store = -1;
		slots[i].asked_lo = slots[i].asked_hi = slots[i].asked_committed = -1;
		slots[i].last_lag = -1;
	}
	kc.rk = consumer;
	kc.slots = slots;
	kc.nslots = 3;
	kc.up = 1;
	assert_int_equal(kafka_status_start(&kc, err, sizeof(err)), 0);
	assert_int_equal(rd_kafka_mock_broker_set_down(mcluster, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
	start = clock_now_ms();
	for (i = 0; i < 10; i++)
		kafka_lag(&kc);
	ms = clock_now_ms() - start;
	print_message("10 lag refreshes: %lld ms\n", (long long) ms);
	assert_true(ms < 150);
	for (i = 0; i < 100; i++)
	{
		n = kafka_partition_lags(&kc, &lags);
		assert_int_equal(n, 3);
		if (lags[0].lag >= 0 && lags[1].lag >= 0)
			break;
		free(lags);
		lags = NULL;
		usleep(100000);
	}
	assert_non_null(lags);
	assert_int_equal(lags[0].lag, 3);
	assert_int_equal(lags[0].high_watermark, 3);
	assert_int_equal(lags[1].lag, 0);
	assert_int_equal(lags[2].lag, -1);
	free(lags);
	kafka_status_stop(&kc);
	assert_int_equal(rd_kafka_mock_broker_set_up(mcluster, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
}

/*
 * A partition assigned again (kafka_slot_forget_asked, as the rebalance
 * callback does) keeps showing the lag it had while the brokers have not
 * answered yet: partition 0's leader is down after its lag of 3 was known,
 * and every refresh for a while still reports 3, not "unknown" (which left
 * the consumer_lag family without a sample right after a rebalance).
 */
static void
test_lag_kept_across_reassignment(void **state)
{
	kafka_consumer kc;
	kafka_slot	slot;
	kafka_partition_lag *lags = NULL;
	char		err[256];
	int			i;

	(void) state;
	memset(&kc, 0, sizeof(kc));
	memset(&slot, 0, sizeof(slot));
	slot.topic = (char *) "t";
	slot.partition = 0;
	slot.assigned = 1;
	slot.waiting_start = 1;
	slot.acked = slot.first_seen = slot.store_to = -1;
	slot.committed = slot.db_next = slot.start_store = -1;
	slot.last_lag = -1;
	kafka_slot_forget_asked(&slot);
	kc.rk = consumer;
	kc.slots = &slot;
	kc.nslots = 1;
	kc.up = 1;
	assert_int_equal(kafka_status_start(&kc, err, sizeof(err)), 0);
	for (i = 0; i < 100 && kafka_lag(&kc) < 0; i++)
		usleep(100000);
	assert_int_equal(kafka_lag(&kc), 3);

	assert_int_equal(rd_kafka_mock_broker_set_down(mcluster, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
	kafka_slot_forget_asked(&slot);
	for (i = 0; i < 5; i++)
	{
		assert_int_equal(kafka_partition_lags(&kc, &lags), 1);
		assert_int_equal(lags[0].lag, 3);
		free(lags);
		lags = NULL;
		usleep(100000);
	}
	kafka_status_stop(&kc);
	assert_int_equal(rd_kafka_mock_broker_set_up(mcluster, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
}

/*
 * Stopping the asker while it works through ten requests for a partition
 * whose leader is down (each at least ASK_TIMEOUT_MS) waits for the query
 * under way only, not for the queue: well under the ten queries' time.
 * An unanswered ticket reads 0, an unknown one -1.
 */
static void
test_asker_stop(void **state)
{
	kafka_asker *a;
	kafka_asker_reply r;
	uint64_t	ticket = 0;
	int64_t		start,
				ms;
	int			error,
				i;

	(void) state;
	assert_int_equal(rd_kafka_mock_broker_set_down(mcluster, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
	a = kafka_asker_start(consumer, ASK_TIMEOUT_MS, &error);
	assert_non_null(a);
	for (i = 0; i < 10; i++)
		ticket = kafka_asker_request(a, "t", 2);
	assert_int_equal(ticket, 10);
	assert_int_equal(kafka_asker_answer(a, ticket, &r), 0);
	assert_int_equal(kafka_asker_answer(a, ticket + 1, &r), -1);
	usleep(50000);
	start = clock_now_ms();
	kafka_asker_stop(a);
	ms = clock_now_ms() - start;
	print_message("asker stopped in %lld ms\n", (long long) ms);
	assert_true(ms < 5 * ASK_TIMEOUT_MS);
	assert_int_equal(rd_kafka_mock_broker_set_up(mcluster, 3), RD_KAFKA_RESP_ERR_NO_ERROR);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_leader_down),
		cmocka_unit_test(test_no_leader),
		cmocka_unit_test(test_lag_never_waits),
		cmocka_unit_test(test_lag_kept_across_reassignment),
		cmocka_unit_test(test_asker_stop),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
