/*-------------------------------------------------------------------------
 *
 * metrics.h
 *	  Prometheus metrics and health of the feeder: the state the main
 *	  thread publishes (metrics.c) and the HTTP endpoint that serves it
 *	  (metrics_http.c).
 *
 * Threads: everything here is written by the main thread and read by
 * libmicrohttpd's thread.  One mutex guards the whole state; the main
 * thread holds it only to copy in a few values, the HTTP thread only while
 * it renders one response into its own buffer.  The main thread never
 * waits for the network while holding it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_METRICS_H
#define FEEDER_METRICS_H

#include <stddef.h>

#include "db_errors.h"
#include "kafka_status.h"
#include "registry.h"
#include "stats.h"

/* Metric name prefix. */
#define METRICS_PREFIX "received_orders_feeder_"

/* Where the feeder is in its life, for /healthz. */
typedef enum metrics_phase
{
	METRICS_STARTING = 0,		/* before the loop runs */
	METRICS_RUNNING,			/* the loop runs */
	METRICS_STOPPING			/* a signal or a fatal error: shutting down */
} metrics_phase;

/* Main thread: publish state (cheap, safe whether or not serving). */
extern void metrics_publish(const feeder_stats *stats);
extern void metrics_observe_batch(double seconds);
extern void metrics_count_retry(db_retry_reason reason);
extern void metrics_set_database(int up, const char *reason);
extern void metrics_set_kafka(int up);
extern void metrics_set_stall(const char *reason);
extern void metrics_heartbeat(int limit_s);
extern void metrics_set_partitions(const kafka_partition_lag *lags, int n);
extern void metrics_set_phase(metrics_phase phase);
extern void metrics_set_registry(const registry_stats *stats);

/* Any thread: render; the caller frees the returned text. */
extern char *metrics_render(size_t *len);
extern int	metrics_health(char *reason, size_t reasonlen);

/* The HTTP endpoint (metrics_http.c), started and stopped by main(). */
extern int	metrics_start(const char *listen, char *err, size_t errlen);
extern int	metrics_enabled(void);
extern void metrics_stop(void);

#endif							/* FEEDER_METRICS_H */
