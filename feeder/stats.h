/*-------------------------------------------------------------------------
 *
 * stats.h
 *	  Counters of received-orders-feeder.
 *
 * One struct, updated only by the main thread, read by the periodic
 * counters log line; the metrics endpoint (metrics.c) exports a copy the
 * main thread publishes (stats_fields[] names the fields in one place).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_STATS_H
#define FEEDER_STATS_H

#include <stddef.h>
#include <stdint.h>

typedef struct feeder_stats
{
	uint64_t	consumed;		/* messages returned by the consumer */
	uint64_t	inserted;		/* outcome inserted */
	uint64_t	duplicate;		/* outcome duplicate */
	uint64_t	conflict;		/* outcome conflict (quarantined) */
	uint64_t	rejected;		/* outcome rejected (quarantined) */
	uint64_t	tombstones;		/* null values: skipped, acknowledged */
	uint64_t	skipped;		/* messages of another event type: acknowledged */
	uint64_t	retries;		/* failed batch attempts that were retried */
	uint64_t	batches;		/* batches committed and acknowledged */
	uint64_t	abandoned;		/* batches dropped unacknowledged */
	uint64_t	splits;			/* batches halved after a size-caused failure */
	uint64_t	deadlines;		/* batches cancelled past their deadline */
	uint64_t	db_connects;	/* successful database connections */
	uint64_t	kafka_errors;	/* consumer errors reported by librdkafka */
	uint64_t	offsets_committed;	/* partition offsets committed (advances) */
	uint64_t	positions_behind;	/* offsets re-read: the database was behind */
	uint64_t	positions_out_of_range; /* database positions Kafka no longer had */
	uint64_t	positions_lost;	/* offsets known lost with them (accepted) */
	uint64_t	start_failures; /* starts that failed: offsets unreadable */
	uint64_t	position_gaps;	/* position gaps found (retention past the
								 * database's position) */
	uint64_t	watermarks_refused; /* batches whose record_high_watermarks the
									 * database refused: retried without */
	uint64_t	status_failures;	/* failed status reports (status.c's count) */
	int64_t		lag;			/* messages behind the high watermark, -1 unknown */
} feeder_stats;

typedef struct stats_field
{
	const char *name;
	size_t		offset;
	int			is_signed;
} stats_field;

extern const stats_field stats_fields[];
extern const size_t stats_nfields;

extern void stats_log(const feeder_stats *stats);

#endif							/* FEEDER_STATS_H */
