/*-------------------------------------------------------------------------
 *
 * db_positions.h
 *	  The consumer group's positions in the database (db_positions.c):
 *	  read, found, moved back, a gap recorded, a Kafka position adopted.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_POSITIONS_H
#define FEEDER_DB_POSITIONS_H

#include <stdint.h>

#include "db.h"
#include "db_errors.h"

/* The database's position of one partition for the feeder's group. */
typedef struct db_position
{
	char	   *topic;
	int32_t		partition;
	int64_t		next_offset;
} db_position;

extern db_error_class db_read_positions(db_conn *db, const char *cluster_id,
										db_position **out, int *n,
										db_error *err);
extern int64_t db_position_find(const db_position *positions, int n,
								 const char *topic, int32_t partition);
extern void db_free_positions(db_position *positions, int n);
extern db_error_class db_restart_position(db_conn *db, const char *topic,
										  int32_t partition, int64_t from_offset,
										  int64_t to_offset, db_error *err);
extern db_error_class db_record_gap(db_conn *db, const char *topic,
									int32_t partition, int64_t first_lost,
									int64_t last_lost, int accept,
									int *accepted, db_error *err);
extern db_error_class db_adopt_position(db_conn *db, const char *topic,
										int32_t partition, int64_t next_offset,
										int *adopted, db_error *err);

#endif							/* FEEDER_DB_POSITIONS_H */
