/*-------------------------------------------------------------------------
 *
 * db.h
 *	  PostgreSQL side of the feeder: a lane's session handle and its
 *	  settings (db.c); the session made and closed (db_connect.h), one
 *	  transaction per batch (db_batch.h).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_H
#define FEEDER_DB_H

#include <stdint.h>

#include "batch.h"
#include "db_batch.h"
#include "db_connect.h"
#include "db_errors.h"
#include "db_rows.h"
#include "pgarray.h"
#include "stats.h"

typedef struct db_conn db_conn;

extern db_conn *db_new(const char *dsn, const char *group, feeder_stats *stats);
extern int	db_set_outbox(db_conn *db, const char *envelope, const char *event_type,
						  const char *type_header);

extern void db_set_index(db_conn *db, int index);
extern int	db_set_member(db_conn *db, const char *member_id);
extern int	db_set_framed(db_conn *db);
extern void db_set_timeouts(db_conn *db, int statement_timeout_ms, int lock_timeout_ms);
extern uint64_t db_session(const db_conn *db);
extern void db_set_adopt(db_conn *db);
extern void db_free(db_conn *db);

#endif							/* FEEDER_DB_H */
