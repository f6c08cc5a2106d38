/*-------------------------------------------------------------------------
 *
 * test_metrics.c
 *	  Unit tests of metrics.c: the exposition text (every family with HELP
 *	  and TYPE, values, cumulative histogram, label escaping) and the
 *	  /healthz verdict with its reasons.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "feeder.h"
#include "metrics.h"

#define P METRICS_PREFIX

/*
 * render
 *		The current exposition as a NUL-terminated string (caller frees).
 */
static char *
render(void)
{
	size_t		len;
	char	   *text = metrics_render(&len);

	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	return text;
}

/*
 * has_line
 *		True when text holds exactly this line.
 */
static int
has_line(const char *text, const char *line)
{
	size_t		n = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line)) != NULL)
	{
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return 1;
		p += n;
	}
	return 0;
}

/* Every family announces HELP and TYPE before its samples. */
static void
test_families(void **state)
{
	static const char *const families[][2] = {
		{"messages_consumed_total", "counter"}, {"events_total", "counter"},
		{"tombstones_total", "counter"}, {"batches_total", "counter"},
		{"batches_abandoned_total", "counter"}, {"retries_total", "counter"},
		{"db_reconnects_total", "counter"}, {"offsets_committed_total", "counter"},
		{"kafka_errors_total", "counter"}, {"positions_behind_offsets_total", "counter"},
		{"positions_out_of_range_total", "counter"}, {"positions_lost_offsets_total", "counter"},
		{"start_position_failures_total", "counter"}, {"partitions_waiting_start", "gauge"},
		{"position_gaps_total", "counter"}, {"partitions_waiting_gap", "gauge"},
		{"batch_duration_seconds", "histogram"},
		{"consumer_lag", "gauge"}, {"assigned_partitions", "gauge"},
		{"database_up", "gauge"}, {"kafka_up", "gauge"}, {"stalled", "gauge"},
		{"build_info", "gauge"},
	};
	char	   *text = render();
	size_t		i;

	(void) state;
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++)
	{
		char		type[200];
		char		help[200];
		const char *h,
				   *t;

		snprintf(type, sizeof(type), "# TYPE " P "%s %s\n", families[i][0], families[i][1]);
		snprintf(help, sizeof(help), "# HELP " P "%s ", families[i][0]);
		h = strstr(text, help);
		t = strstr(text, type);
		assert_non_null(h);
		assert_non_null(t);
		assert_true(h < t);
	}
	assert_true(has_line(text, P "build_info{version=\"" FEEDER_VERSION "\"} 1"));
	assert_true(has_line(text, P "kafka_up 0"));	/* unknown yet */
	assert_true(has_line(text, P "assigned_partitions 0"));
	assert_true(has_line(text, P "partitions_waiting_start 0"));
	assert_true(has_line(text, P "partitions_waiting_gap 0"));
	free(text);
}

/* Published counters show as they were, together. */
static void
test_counters(void **state)
{
	feeder_stats s;
	char	   *text;

	(void) state;
	memset(&s, 0, sizeof(s));
	s.consumed = 17;
	s.inserted = 10;
	s.duplicate = 3;
	s.conflict = 1;
	s.rejected = 2;
	s.tombstones = 1;
	s.batches = 4;
	s.db_connects = 3;
	s.offsets_committed = 5;
	s.start_failures = 2;
	s.position_gaps = 3;
	metrics_publish(&s);
	metrics_count_retry(DB_RETRY_CONNECTION);
	metrics_count_retry(DB_RETRY_CONNECTION);
	metrics_count_retry(DB_RETRY_COMMIT_UNKNOWN);
	metrics_count_retry(DB_RETRY_NREASONS);	/* out of range: other */

	text = render();
	assert_true(has_line(text, P "messages_consumed_total 17"));
	assert_true(has_line(text, P "events_total{outcome=\"inserted\"} 10"));
	assert_true(has_line(text, P "events_total{outcome=\"duplicate\"} 3"));
	assert_true(has_line(text, P "events_total{outcome=\"conflict\"} 1"));
	assert_true(has_line(text, P "events_total{outcome=\"rejected\"} 2"));
	assert_true(has_line(text, P "tombstones_total 1"));
	assert_true(has_line(text, P "batches_total 4"));
	assert_true(has_line(text, P "start_position_failures_total 2"));
	assert_true(has_line(text, P "position_gaps_total 3"));
	assert_true(has_line(text, P "db_reconnects_total 2"));
	assert_true(has_line(text, P "offsets_committed_total 5"));
	assert_true(has_line(text, P "retries_total{class=\"connection\"} 2"));
	assert_true(has_line(text, P "retries_total{class=\"commit_unknown\"} 1"));
	assert_true(has_line(text, P "retries_total{class=\"other\"} 1"));
	assert_true(has_line(text, P "retries_total{class=\"deadlock\"} 0"));
	free(text);
}

/* Buckets are cumulative and end with +Inf equal to _count. */
static void
test_histogram(void **state)
{
	char	   *text;

	(void) state;
	metrics_observe_batch(0.0005);
	metrics_observe_batch(0.001);	/* on the bound: le="0.001" */
	metrics_observe_batch(0.3);
	metrics_observe_batch(42);
	text = render();
	assert_true(has_line(text, P "batch_duration_seconds_bucket{le=\"0.001\"} 2"));
	assert_true(has_line(text, P "batch_duration_seconds_bucket{le=\"0.25\"} 2"));
	assert_true(has_line(text, P "batch_duration_seconds_bucket{le=\"0.5\"} 3"));
	assert_true(has_line(text, P "batch_duration_seconds_bucket{le=\"10\"} 3"));
	assert_true(has_line(text, P "batch_duration_seconds_bucket{le=\"+Inf\"} 4"));
	assert_true(has_line(text, P "batch_duration_seconds_count 4"));
	assert_true(has_line(text, P "batch_duration_seconds_sum 42.301500000"));
	free(text);
}

/*
 * Lag per partition; unknown lag is left out; label values escaped; the
 * partitions waiting for their start counted, those waiting on a position
 * gap apart too.
 */
static void
test_partitions(void **state)
{
	kafka_partition_lag lags[] = {
		{"orders", 0, 5, 10, 0, 0}, {"orders", 1, -1, -1, 1, 0}, {"we\"ird\\to\npic", 2, 0, 7, 0, 0},
		{"orders", 3, 9, 12, 1, 1},
	};
	char	   *text;

	(void) state;
	metrics_set_partitions(lags, 4);
	text = render();
	assert_true(has_line(text, P "consumer_lag{topic=\"orders\",partition=\"0\"} 5"));
	assert_null(strstr(text, "partition=\"1\""));
	assert_true(has_line(text, P "consumer_lag{topic=\"we\\\"ird\\\\to\\npic\",partition=\"2\"} 0"));
	assert_true(has_line(text, P "assigned_partitions 4"));
	assert_true(has_line(text, P "partitions_waiting_start 2"));
	assert_true(has_line(text, P "partitions_waiting_gap 1"));
	free(text);

	metrics_set_partitions(NULL, 0);
	text = render();
	assert_null(strstr(text, P "consumer_lag{"));
	assert_true(has_line(text, P "assigned_partitions 0"));
	free(text);
}

/* /healthz: starting, then database, then Kafka, then shutting down. */
static void
test_health(void **state)
{
	char		reason[600];
	char	   *text;

	(void) state;
	assert_false(metrics_health(reason, sizeof(reason)));
	assert_string_equal(reason, "starting");

	metrics_set_phase(METRICS_RUNNING);
	assert_false(metrics_health(reason, sizeof(reason)));
	assert_string_equal(reason, "starting");	/* Kafka not seen yet */

	metrics_set_kafka(1);
	assert_true(metrics_health(reason, sizeof(reason)));
	assert_string_equal(reason, "ok");

	metrics_set_database(0, "server closed the connection unexpectedly\n\tThis probably means...");
	assert_false(metrics_health(reason, sizeof(reason)));
	assert_string_equal(reason, "database unreachable: server closed the connection unexpectedly This probably means...");
	text = render();
	assert_true(has_line(text, P "database_up 0"));
	free(text);

	metrics_set_database(1, NULL);
	metrics_set_kafka(0);
	assert_false(metrics_health(reason, sizeof(reason)));
	assert_string_equal(reason, "kafka brokers down");
	text = render();
	assert_true(has_line(text, P "database_up 1"));
	assert_true(has_line(text, P "kafka_up 0"));
	free(text);

	/* a stall (health that means progress) */
	metrics_set_kafka(1);
	metrics_set_stall("2500 messages wait on orders [3] and no batch committed for 125 s");
	assert_false(metrics_health(reason, sizeof(reason)));
	assert_string_equal(reason, "stalled: 2500 messages wait on orders [3] and no batch committed for 125 s");
	text = render();
	assert_true(has_line(text, P "stalled 1"));
	free(text);
	metrics_set_stall(NULL);
	assert_true(metrics_health(reason, sizeof(reason)));
	text = render();
	assert_true(has_line(text, P "stalled 0"));
	free(text);

	metrics_set_phase(METRICS_STOPPING);
	assert_false(metrics_health(reason, sizeof(reason)));
	assert_string_equal(reason, "shutting down");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_histogram),
		cmocka_unit_test(test_partitions),
		cmocka_unit_test(test_health),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
