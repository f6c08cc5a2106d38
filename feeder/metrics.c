/*-------------------------------------------------------------------------
 *
 * metrics.c
 *	  The metrics and health state of the feeder, and its rendering in the
 *	  Prometheus text exposition format 0.0.4.
 *
 * The main thread owns feeder_stats and everything it observes; it
 * publishes copies here (metrics_publish after each poll and each batch,
 * the other setters when something changes).  libmicrohttpd's thread
 * renders a response from this copy.  A single mutex (metrics_lock)
 * guards the copy, so one scrape always sees one consistent moment: the
 * outcome counters of a batch appear together with its batches_total.
 *
 * Counters are monotonic by construction (the main thread only adds);
 * database_up and kafka_up are 0/1 gauges (kafka_up is 0 while unknown,
 * just after the start); consumer_lag has one series per assigned
 * partition whose lag is known, from its assignment on (kafka_status.c
 * asks the brokers about a partition not fetched yet).
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "feeder.h"
#include "metrics.h"

/* Upper bounds of batch_duration_seconds, in seconds, then +Inf. */
static const struct
{
	double		le;
	const char *text;
}			metrics_buckets[] = {
	{0.001, "0.001"}, {0.0025, "0.0025"}, {0.005, "0.005"}, {0.01, "0.01"},
	{0.025, "0.025"}, {0.05, "0.05"}, {0.1, "0.1"}, {0.25, "0.25"},
	{0.5, "0.5"}, {1, "1"}, {2.5, "2.5"}, {5, "5"}, {10, "10"},
};

#define METRICS_NBUCKETS (sizeof(metrics_buckets) / sizeof(metrics_buckets[0]))

typedef struct metrics_partition
{
	char	   *topic;
	int32_t		partition;
	int64_t		lag;
	int			waiting_start;
	int			waiting_gap;
} metrics_partition;

/* Everything a scrape shows; guarded by metrics_lock. */
static struct
{
	feeder_stats stats;
	uint64_t	retries[DB_RETRY_NREASONS];
	uint64_t	buckets[METRICS_NBUCKETS];	/* not cumulative */
	uint64_t	duration_count;
	double		duration_sum;
	int			database_up;
	char		database_reason[512];
	int			kafka_up;		/* 1, 0, -1 unknown */
	char		stall_reason[256];	/* "" unless stalled */
	int64_t		heartbeat_ms;	/* when the main loop last came round, 0: never */
	int64_t		heartbeat_limit_ms; /* unhealthy when older than this */
	metrics_phase phase;
	metrics_partition *parts;
	int			nparts;
	int			registry_on;	/* --value-format confluent */
	registry_stats registry;
}			metrics_state = {
	.database_up = 1,
	.kafka_up = -1,
	.phase = METRICS_STARTING,
};

static pthread_mutex_t metrics_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * metrics_publish
 *		Copy the counters (main thread; after each poll and each batch).
 */
void
metrics_publish(const feeder_stats *stats)
{
	pthread_mutex_lock(&metrics_lock);
	metrics_state.stats = *stats;
	pthread_mutex_unlock(&metrics_lock);
}

/*
 * metrics_observe_batch
 *		Add one committed batch's duration to the histogram.
 */
void
metrics_observe_batch(double seconds)
{
	size_t		i;

	if (seconds < 0)
		seconds = 0;
	pthread_mutex_lock(&metrics_lock);
	for (i = 0; i < METRICS_NBUCKETS; i++)
		if (seconds <= metrics_buckets[i].le)
		{
			metrics_state.buckets[i]++;
			break;
		}
	metrics_state.duration_count++;
	metrics_state.duration_sum += seconds;
	pthread_mutex_unlock(&metrics_lock);
}

/*
 * metrics_count_retry
 *		Count one retried batch attempt by reason.
 */
void
metrics_count_retry(db_retry_reason reason)
{
	if ((int) reason < 0 || reason >= DB_RETRY_NREASONS)
		reason = DB_RETRY_OTHER;
	pthread_mutex_lock(&metrics_lock);
	metrics_state.retries[reason]++;
	pthread_mutex_unlock(&metrics_lock);
}

/*
 * metrics_set_registry
 *		The Schema Registry client's counters (--value-format confluent).
 */
void
metrics_set_registry(const registry_stats *stats)
{
	pthread_mutex_lock(&metrics_lock);
	metrics_state.registry_on = 1;
	metrics_state.registry = *stats;
	pthread_mutex_unlock(&metrics_lock);
}

/*
 * metrics_set_database
 *		Database reachable (up = 1) or not, with the error that says why;
 *		runs of blanks and control characters of the (libpq, multi-line)
 *		message become one blank so the /healthz reason stays on one line.
 */
void
metrics_set_database(int up, const char *reason)
{
	char		buf[sizeof(metrics_state.database_reason)];
	const char *in = reason && *reason ? reason : "no connection";
	size_t		o = 0;

	for (; *in && o + 1 < sizeof(buf); in++)
	{
		int			blank = (unsigned char) *in <= 0x20 || *in == 0x7f;

		if (!blank)
			buf[o++] = *in;
		else if (o > 0 && buf[o - 1] != ' ')
			buf[o++] = ' ';
	}
	while (o > 0 && buf[o - 1] == ' ')
		o--;
	buf[o] = '\0';
	pthread_mutex_lock(&metrics_lock);
	metrics_state.database_up = up ? 1 : 0;
	memcpy(metrics_state.database_reason, buf, sizeof(buf));
	pthread_mutex_unlock(&metrics_lock);
}

/*
 * metrics_set_kafka
 *		Brokers reachable: 1, 0, or -1 when not known yet.
 */
void
metrics_set_kafka(int up)
{
	pthread_mutex_lock(&metrics_lock);
	metrics_state.kafka_up = up < 0 ? -1 : up ? 1 : 0;
	pthread_mutex_unlock(&metrics_lock);
}

/*
 * metrics_set_stall
 *		Messages wait and no batch committed for too long: reason says
 *		where; NULL when progressing.
 */
void
metrics_set_stall(const char *reason)
{
	pthread_mutex_lock(&metrics_lock);
	snprintf(metrics_state.stall_reason, sizeof(metrics_state.stall_reason), "%s",
			 reason ? reason : "");
	pthread_mutex_unlock(&metrics_lock);
}

/*
 * metrics_clock_ms
 *		The monotonic clock in milliseconds, read by the HTTP thread as by
 *		the main loop.
 */
static int64_t
metrics_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * metrics_heartbeat
 *		The main loop came round (each tick): /healthz turns 503 when this
 *		is older than limit_s (--stall-timeout).  Health that a stuck main
 *		thread cannot fake: a wait that never ends (a batch whose COMMIT
 *		hangs while a rebalance waits for it, say) stops the heartbeat, and
 *		the HTTP thread sees it age whatever state was published last.
 */
void
metrics_heartbeat(int limit_s)
{
	int64_t		now = metrics_clock_ms();

	pthread_mutex_lock(&metrics_lock);
	metrics_state.heartbeat_ms = now;
	metrics_state.heartbeat_limit_ms = (int64_t) limit_s * 1000;
	pthread_mutex_unlock(&metrics_lock);
}

/*
 * metrics_set_partitions
 *		Replace the assigned partitions and their lag.  The copy is built
 *		before taking the lock; on out of memory the previous list stays.
 */
void
metrics_set_partitions(const kafka_partition_lag *lags, int n)
{
	metrics_partition *parts = NULL;
	metrics_partition *old;
	int			oldn;
	int			i;

	if (n > 0)
	{
		parts = calloc((size_t) n, sizeof(metrics_partition));
		if (parts == NULL)
			return;
		for (i = 0; i < n; i++)
		{
			parts[i].topic = strdup(lags[i].topic);
			parts[i].partition = lags[i].partition;
			parts[i].lag = lags[i].lag;
			parts[i].waiting_start = lags[i].waiting_start;
			parts[i].waiting_gap = lags[i].waiting_gap;
			if (parts[i].topic == NULL)
			{
				while (i >= 0)
					free(parts[i--].topic);
				free(parts);
				return;
			}
		}
	}
	pthread_mutex_lock(&metrics_lock);
	old = metrics_state.parts;
	oldn = metrics_state.nparts;
	metrics_state.parts = parts;
	metrics_state.nparts = n > 0 ? n : 0;
	pthread_mutex_unlock(&metrics_lock);
	for (i = 0; i < oldn; i++)
		free(old[i].topic);
	free(old);
}

/*
 * metrics_set_phase
 *		Starting, running or stopping.
 */
void
metrics_set_phase(metrics_phase phase)
{
	pthread_mutex_lock(&metrics_lock);
	metrics_state.phase = phase;
	pthread_mutex_unlock(&metrics_lock);
}

/*
 * metrics_health_locked
 *		/healthz verdict from the state (metrics_lock held): 1 healthy,
 *		else 0 with a one-line reason.  Order: lifecycle first, then the
 *		main loop's heartbeat (a stuck loop publishes nothing new), then the
 *		database (the feeder acknowledges nothing without it), then Kafka.
 */
static int
metrics_health_locked(char *reason, size_t reasonlen)
{
	if (metrics_state.phase == METRICS_STOPPING)
		snprintf(reason, reasonlen, "shutting down");
	else if (metrics_state.phase == METRICS_STARTING || metrics_state.kafka_up < 0)
		snprintf(reason, reasonlen, "starting");
	else if (metrics_state.heartbeat_ms > 0 &&
			 metrics_clock_ms() - metrics_state.heartbeat_ms > metrics_state.heartbeat_limit_ms)
		snprintf(reason, reasonlen,
				 "stuck: the main loop has not come round for %lld s (a wait that does not end; see the log)",
				 (long long) ((metrics_clock_ms() - metrics_state.heartbeat_ms) / 1000));
	else if (!metrics_state.database_up)
		snprintf(reason, reasonlen, "database unreachable: %s",
				 metrics_state.database_reason);
	else if (metrics_state.registry_on && !metrics_state.registry.up)
		snprintf(reason, reasonlen, "schema registry unreachable: %s",
				 metrics_state.registry.down_reason);
	else if (metrics_state.kafka_up == 0)
		snprintf(reason, reasonlen, "kafka brokers down");
	else if (metrics_state.stall_reason[0])
		snprintf(reason, reasonlen, "stalled: %s", metrics_state.stall_reason);
	else
	{
		snprintf(reason, reasonlen, "ok");
		return 1;
	}
	return 0;
}

/*
 * metrics_health
 *		Thread-safe wrapper of metrics_health_locked.
 */
int
metrics_health(char *reason, size_t reasonlen)
{
	int			ok;

	pthread_mutex_lock(&metrics_lock);
	ok = metrics_health_locked(reason, reasonlen);
	pthread_mutex_unlock(&metrics_lock);
	return ok;
}

/* A growing output buffer; on out of memory it stays failed. */
typedef struct metrics_buf
{
	char	   *data;
	size_t		len;
	size_t		cap;
	int			failed;
} metrics_buf;

/*
 * metrics_printf
 *		Append formatted text to buf.
 */
static void
metrics_printf(metrics_buf *buf, const char *fmt,...)
__attribute__((format(printf, 2, 3)));

static void
metrics_printf(metrics_buf *buf, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (buf->failed)
		return;
	for (;;)
	{
		size_t		room = buf->cap - buf->len;

		va_start(ap, fmt);
		n = vsnprintf(buf->data ? buf->data + buf->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
		{
			buf->failed = 1;
			return;
		}
		if ((size_t) n < room)
		{
			buf->len += (size_t) n;
			return;
		}
		{
			size_t		cap = buf->cap ? buf->cap * 2 : 4096;
			char	   *data;

			while (cap - buf->len <= (size_t) n)
				cap *= 2;
			data = realloc(buf->data, cap);
			if (data == NULL)
			{
				buf->failed = 1;
				return;
			}
			buf->data = data;
			buf->cap = cap;
		}
	}
}

/*
 * metrics_escape_label
 *		A label value escaped as the text format wants: backslash, double
 *		quote and line feed become \\, \" and \n.
 */
static void
metrics_escape_label(const char *in, char *out, size_t outlen)
{
	size_t		o = 0;

	for (; *in && o + 3 < outlen; in++)
	{
		if (*in == '\\' || *in == '"')
		{
			out[o++] = '\\';
			out[o++] = *in;
		}
		else if (*in == '\n')
		{
			out[o++] = '\\';
			out[o++] = 'n';
		}
		else
			out[o++] = *in;
	}
	out[o] = '\0';
}

/*
 * metrics_family
 *		The HELP and TYPE lines of one metric family.
 */
static void
metrics_family(metrics_buf *buf, const char *name, const char *type, const char *help)
{
	metrics_printf(buf, "# HELP " METRICS_PREFIX "%s %s\n# TYPE " METRICS_PREFIX "%s %s\n",
				   name, help, name, type);
}

/*
 * metrics_counter
 *		A counter family with a single series.
 */
static void
metrics_counter(metrics_buf *buf, const char *name, const char *help, uint64_t value)
{
	metrics_family(buf, name, "counter", help);
	metrics_printf(buf, METRICS_PREFIX "%s %llu\n", name, (unsigned long long) value);
}

/*
 * metrics_gauge
 *		A gauge family with a single series.
 */
static void
metrics_gauge(metrics_buf *buf, const char *name, const char *help, long long value)
{
	metrics_family(buf, name, "gauge", help);
	metrics_printf(buf, METRICS_PREFIX "%s %lld\n", name, value);
}

/*
 * metrics_render_locked
 *		The whole exposition (metrics_lock held).
 */
static void
metrics_render_locked(metrics_buf *buf)
{
	const feeder_stats *s = &metrics_state.stats;
	static const struct
	{
		const char *outcome;
		size_t		offset;
	}			outcomes[] = {
		{"inserted", offsetof(feeder_stats, inserted)},
		{"duplicate", offsetof(feeder_stats, duplicate)},
		{"conflict", offsetof(feeder_stats, conflict)},
		{"rejected", offsetof(feeder_stats, rejected)},
		{"skipped", offsetof(feeder_stats, skipped)},
	};
	uint64_t	cumulative = 0;
	size_t		i;
	int			p,
				waiting;

	metrics_counter(buf, "messages_consumed_total",
					"Kafka messages returned by the consumer (tombstones and invalid values included).",
					s->consumed);

	metrics_family(buf, "events_total", "counter",
				   "Events of committed batches by outcome: inserted, duplicate (already stored), conflict and rejected (both quarantined), skipped (another event type).");
	for (i = 0; i < sizeof(outcomes) / sizeof(outcomes[0]); i++)
		metrics_printf(buf, METRICS_PREFIX "events_total{outcome=\"%s\"} %llu\n",
					   outcomes[i].outcome,
					   (unsigned long long) *(const uint64_t *) ((const char *) s + outcomes[i].offset));

	metrics_counter(buf, "tombstones_total",
					"Messages with a null value in committed batches: skipped and acknowledged.",
					s->tombstones);
	metrics_counter(buf, "batches_total",
					"Batches committed to the database and acknowledged.", s->batches);
	metrics_counter(buf, "batches_abandoned_total",
					"Batches dropped unacknowledged at shutdown while the database was failing.",
					s->abandoned);
	metrics_counter(buf, "batch_splits_total",
					"Batches halved after failing for their size (out of memory, a program limit): the halves were retried.",
					s->splits);
	metrics_counter(buf, "batch_deadlines_total",
					"Batches cancelled because they ran past their deadline (statement timeout and 10 s: a COMMIT waiting for a synchronous standby, say); each is retried.",
					s->deadlines);

	metrics_family(buf, "retries_total", "counter",
				   "Failed batch attempts that were retried, by class of error.");
	for (i = 0; i < DB_RETRY_NREASONS; i++)
		metrics_printf(buf, METRICS_PREFIX "retries_total{class=\"%s\"} %llu\n",
					   db_retry_reason_name((db_retry_reason) i),
					   (unsigned long long) metrics_state.retries[i]);

	metrics_counter(buf, "db_reconnects_total",
					"Successful database connections after the first one.",
					s->db_connects > 0 ? s->db_connects - 1 : 0);
	metrics_counter(buf, "offsets_committed_total",
					"Partition offsets committed to the consumer group: each time a partition's committed offset moves forward.",
					s->offsets_committed);
	metrics_counter(buf, "kafka_errors_total",
					"Client and consumer errors reported by librdkafka.", s->kafka_errors);
	metrics_counter(buf, "positions_behind_offsets_total",
					"Offsets read again because a new database session held positions behind what this feeder had committed (a restore, a failover to an asynchronous standby).",
					s->positions_behind);
	metrics_counter(buf, "positions_out_of_range_total",
					"Database positions Kafka could no longer serve that the feeder went past or stopped for: below a partition's earliest offset with --accept-position-loss (retention), above its latest (a re-created topic).",
					s->positions_out_of_range);
	metrics_counter(buf, "positions_lost_offsets_total",
					"Offsets of position gaps known lost, once accepted: by --accept-position-loss, or by an operator (received_orders.accept_position_gap) when the waiting partition resumes.",
					s->positions_lost);
	metrics_counter(buf, "start_position_failures_total",
					"Attempts to start a waiting partition that failed because its offsets could not be read from its leader (or its seek failed): that partition waits, the others go on.",
					s->start_failures);
	metrics_counter(buf, "position_gaps_total",
					"Position gaps found: a database position below a partition's earliest offset (retention deleted events the database never received), each gap counted once.",
					s->position_gaps);
	metrics_counter(buf, "watermarks_refused_total",
					"Batches whose record_high_watermarks the database refused (EXECUTE revoked, the function gone): each was retried at once without it, and batches go on without recording high watermarks.",
					s->watermarks_refused);
	metrics_counter(buf, "status_report_failures_total",
					"Status reports to received_orders.feeders that failed (the database down, report_feeder not granted or revoked): event=status_report_failed; batches go on.",
					s->status_failures);

	metrics_family(buf, "batch_duration_seconds", "histogram",
				   "Duration of the database transaction that committed a batch, with the offset store.");
	for (i = 0; i < METRICS_NBUCKETS; i++)
	{
		cumulative += metrics_state.buckets[i];
		metrics_printf(buf, METRICS_PREFIX "batch_duration_seconds_bucket{le=\"%s\"} %llu\n",
					   metrics_buckets[i].text, (unsigned long long) cumulative);
	}
	metrics_printf(buf, METRICS_PREFIX "batch_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
				   (unsigned long long) metrics_state.duration_count);
	metrics_printf(buf, METRICS_PREFIX "batch_duration_seconds_sum %.9f\n",
				   metrics_state.duration_sum);
	metrics_printf(buf, METRICS_PREFIX "batch_duration_seconds_count %llu\n",
				   (unsigned long long) metrics_state.duration_count);

	if (metrics_state.registry_on)
	{
		const registry_stats *r = &metrics_state.registry;
		static const double le[REGISTRY_NBUCKETS] = REGISTRY_BUCKET_LE;

		metrics_family(buf, "schema_registry_requests_total", "counter",
					   "Requests for a schema by id to the Schema Registry, by result: ok (fetched and cached), not_found (an unknown id: its message quarantined), unavailable (unreachable, timeout, 5xx: the batch retried), refused (401, 403, TLS: exit 3).");
		for (i = 0; i < REGISTRY_NRESULTS; i++)
			metrics_printf(buf, METRICS_PREFIX "schema_registry_requests_total{result=\"%s\"} %llu\n",
						   registry_result_name((registry_result) i),
						   (unsigned long long) r->requests[i]);
		metrics_gauge(buf, "schema_registry_cached_schemas",
					  "Schemas kept by id for the life of the process.", r->cached);
		metrics_counter(buf, "schema_registry_unknown_retries_total",
						"Lookups of an id the registry did not know, retried within its grace (a replica may not have a new schema yet): the batch waited.",
						r->unknown_retries);
		metrics_counter(buf, "schema_registry_unknown_cached_total",
						"Lookups answered \"unknown\" from the feeder's memory of the registry's recent answer, without a request.",
						r->negative_hits);
		metrics_gauge(buf, "schema_registry_up",
					  "1 while the Schema Registry answers (the last request got a registry's answer), 0 when it is unreachable, failing or refusing the feeder.",
					  r->up);
		metrics_family(buf, "schema_registry_request_duration_seconds", "histogram",
					   "Duration of the requests to the Schema Registry.");
		cumulative = 0;
		for (i = 0; i < REGISTRY_NBUCKETS; i++)
		{
			cumulative += r->buckets[i];
			metrics_printf(buf, METRICS_PREFIX "schema_registry_request_duration_seconds_bucket{le=\"%g\"} %llu\n",
						   le[i], (unsigned long long) cumulative);
		}
		metrics_printf(buf, METRICS_PREFIX "schema_registry_request_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
					   (unsigned long long) r->count);
		metrics_printf(buf, METRICS_PREFIX "schema_registry_request_duration_seconds_sum %.9f\n",
					   r->seconds_sum);
		metrics_printf(buf, METRICS_PREFIX "schema_registry_request_duration_seconds_count %llu\n",
					   (unsigned long long) r->count);
	}

	metrics_family(buf, "consumer_lag", "gauge",
				   "Messages between the acknowledged position and the high watermark, per assigned partition.");
	for (p = 0; p < metrics_state.nparts; p++)
	{
		char		topic[1024];

		if (metrics_state.parts[p].lag < 0)
			continue;
		metrics_escape_label(metrics_state.parts[p].topic, topic, sizeof(topic));
		metrics_printf(buf, METRICS_PREFIX "consumer_lag{topic=\"%s\",partition=\"%d\"} %lld\n",
					   topic, (int) metrics_state.parts[p].partition,
					   (long long) metrics_state.parts[p].lag);
	}
	metrics_gauge(buf, "assigned_partitions",
				  "Partitions assigned to this member of the consumer group.",
				  metrics_state.nparts);
	for (p = waiting = 0; p < metrics_state.nparts; p++)
		waiting += metrics_state.parts[p].waiting_start != 0;
	metrics_gauge(buf, "partitions_waiting_start",
				  "Assigned partitions that wait, paused, for their start position: the database's positions or the partition's offsets could not be read (see start_position_unavailable in the log).",
				  waiting);
	for (p = waiting = 0; p < metrics_state.nparts; p++)
		waiting += metrics_state.parts[p].waiting_gap != 0;
	metrics_gauge(buf, "partitions_waiting_gap",
				  "Assigned partitions that wait, paused, on a position gap until an operator accepts it (received_orders.accept_position_gap; see position_gap in the log); counted in partitions_waiting_start too.",
				  waiting);
	metrics_gauge(buf, "database_up",
				  "1 when the database connection works, 0 when it is lost or cannot be made.",
				  metrics_state.database_up);
	metrics_gauge(buf, "kafka_up",
				  "1 when a Kafka broker is reachable, 0 when all are down (or not known yet).",
				  metrics_state.kafka_up > 0);
	metrics_gauge(buf, "stalled",
				  "1 when messages have waited for longer than --stall-timeout without any batch committing.",
				  metrics_state.stall_reason[0] != '\0');

	metrics_family(buf, "build_info", "gauge", "Version of the feeder; always 1.");
	metrics_printf(buf, METRICS_PREFIX "build_info{version=\"%s\"} 1\n", FEEDER_VERSION);
}

/*
 * metrics_render
 *		The exposition text as a malloc'ed string (length in *len), or NULL
 *		on out of memory.
 */
char *
metrics_render(size_t *len)
{
	metrics_buf buf = {NULL, 0, 0, 0};

	pthread_mutex_lock(&metrics_lock);
	metrics_render_locked(&buf);
	pthread_mutex_unlock(&metrics_lock);
	if (buf.failed)
	{
		free(buf.data);
		return NULL;
	}
	*len = buf.len;
	return buf.data;
}
