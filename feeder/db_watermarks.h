/*-------------------------------------------------------------------------
 *
 * db_watermarks.h
 *	  The batch's partitions' high watermarks, recorded with the batch
 *	  (db_watermarks.c): the statement, its arrays, its refusal.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_WATERMARKS_H
#define FEEDER_DB_WATERMARKS_H

#include <stddef.h>

#include <libpq-fe.h>

#include "batch.h"
#include "db_errors.h"
#include "stats.h"

/*
 * The statement db_batch.c adds to a batch's pipeline: the group, the member,
 * then the three arrays of db_watermark_arrays.
 */
#define DB_WATERMARKS_SQL \
	"SELECT received_orders.record_high_watermarks($1, $2, $3::text[], $4::integer[], $5::bigint[])"

/* The statement's three text[] literals (topics, partitions, highs), reused. */
typedef struct db_watermark_texts
{
	char	   *text[3];
	size_t		cap[3];
} db_watermark_texts;

extern int	db_watermarks_allowed(PGconn *conn, int log_refusal);
extern void db_watermarks_refused(feeder_stats *stats, const db_error *err);
extern int	db_watermark_arrays(db_watermark_texts *wm, const batch *b);
extern void db_watermark_texts_free(db_watermark_texts *wm);

#endif							/* FEEDER_DB_WATERMARKS_H */
