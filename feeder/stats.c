/*-------------------------------------------------------------------------
 *
 * stats.c
 *	  The periodic counters log line.
 *
 *-------------------------------------------------------------------------
 */
#include <stddef.h>

#include "log.h"
#include "stats.h"

#define FIELD(name, is_signed) { #name, offsetof(feeder_stats, name), is_signed }

const stats_field stats_fields[] = {
	FIELD(consumed, 0),
	FIELD(inserted, 0),
	FIELD(duplicate, 0),
	FIELD(conflict, 0),
	FIELD(rejected, 0),
	FIELD(tombstones, 0),
	FIELD(skipped, 0),
	FIELD(retries, 0),
	FIELD(batches, 0),
	FIELD(abandoned, 0),
	FIELD(splits, 0),
	FIELD(deadlines, 0),
	FIELD(db_connects, 0),
	FIELD(kafka_errors, 0),
	FIELD(offsets_committed, 0),
	FIELD(positions_behind, 0),
	FIELD(positions_out_of_range, 0),
	FIELD(positions_lost, 0),
	FIELD(start_failures, 0),
	FIELD(position_gaps, 0),
	FIELD(watermarks_refused, 0),
	FIELD(status_failures, 0),
	FIELD(lag, 1),
};

const size_t stats_nfields = sizeof(stats_fields) / sizeof(stats_fields[0]);

/*
 * stats_log
 *		Write one "event=stats" line with every counter, in stats_fields
 *		order, so log scrapers see a stable layout.
 */
void
stats_log(const feeder_stats *stats)
{
	log_line	line;
	size_t		i;

	log_begin(&line, LOG_INFO, "stats");
	for (i = 0; i < stats_nfields; i++)
	{
		const char *base = (const char *) stats;

		if (stats_fields[i].is_signed)
			log_kv_int(&line, stats_fields[i].name,
					   *(const int64_t *) (base + stats_fields[i].offset));
		else
			log_kv_uint(&line, stats_fields[i].name,
						*(const uint64_t *) (base + stats_fields[i].offset));
	}
	log_end(&line);
}
