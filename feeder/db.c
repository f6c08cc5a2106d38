/*-------------------------------------------------------------------------
 *
 * db.c
 *	  PostgreSQL side of the feeder: the handle of a lane's database
 *	  session, its settings, and what the files beside it read of it.
 *
 * The handle keeps the DSN for reconnections, the consumer group for
 * every batch, the form of the batch function it calls (with a consumer
 * group, the outbox form, the Schema Registry form) and the arrays each
 * batch is encoded into, reused.  Its rooms, each below it: db_connect.c
 * makes, checks, cancels and closes the session, db_statement.c is the
 * batch statement of each form and the batch encoded into its parameters,
 * db_batch.c runs one transaction per batch.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "db.h"
#include "db_int.h"
#include "db_watermarks.h"

/*
 * db_new
 *		A disconnected handle; the DSN is kept for reconnections, the
 *		consumer group for every batch.
 */
db_conn *
db_new(const char *dsn, const char *group, feeder_stats *stats)
{
	db_conn    *db = calloc(1, sizeof(db_conn));
	int			i;

	if (db == NULL)
		return NULL;
	db->dsn = strdup(dsn ? dsn : "");
	db->group = strdup(group);
	if (db->dsn == NULL || db->group == NULL)
	{
		free(db->dsn);
		free(db->group);
		free(db);
		return NULL;
	}
	for (i = 0; i < DB_OUTBOX_NARRAYS; i++)
		pgarray_init(&db->arrays[i]);
	pthread_mutex_init(&db->cancel_lock, NULL);
	atomic_init(&db->cancel_requested, 0);
	db->stats = stats;
	return db;
}

/*
 * db_set_outbox
 *		Call the outbox form of the batch function: values opened in their
 *		envelope, only messages of event_type (NULL: all) materialized, the
 *		type read from type_header.  Before the first connection.
 */
int
db_set_outbox(db_conn *db, const char *envelope, const char *event_type,
			  const char *type_header)
{
	db->outbox = 1;
	db->envelope = strdup(envelope);
	db->event_type = event_type ? strdup(event_type) : NULL;
	db->type_header = type_header ? strdup(type_header) : NULL;
	if (db->envelope == NULL || (event_type && db->event_type == NULL) ||
		(type_header && db->type_header == NULL))
		return -1;
	return 0;
}

/*
 * db_set_adopt
 *		A session for --adopt-kafka-offsets: it reads and adopts positions
 *		and runs no batch, so the privilege check asks for consumer_positions
 *		and adopt_consumer_position only, and no batch statement is
 *		prepared.  Before the first connection.
 */
void
db_set_adopt(db_conn *db)
{
	db->adopt = 1;
}

/*
 * db_set_framed
 *		Call the Schema Registry form of the batch function: values framed
 *		by a Schema Registry serializer, sent with what the lane decoded of
 *		them (db_run_batch's decoded arrays).  Implies the outbox form
 *		(envelope plain unless db_set_outbox chose one).  Before the first
 *		connection.
 */
int
db_set_framed(db_conn *db)
{
	if (!db->outbox && db_set_outbox(db, "plain", NULL, NULL) != 0)
		return -1;
	db->framed = 1;
	return 0;
}

/*
 * db_ready, db_pgconn, db_group
 *		For the statements outside the batches (db_positions.c): whether
 *		the connection is open with its session set up, the connection,
 *		and the consumer group.
 */
int
db_ready(const db_conn *db)
{
	return db_connected(db) && db->prepared;
}

PGconn *
db_pgconn(const db_conn *db)
{
	return db->conn;
}

const char *
db_group(const db_conn *db)
{
	return db->group;
}

/*
 * db_set_member
 *		The member id the status report names this feeder by (status.c),
 *		recorded with the high watermarks of each batch.  0, or -1 on out
 *		of memory (then the watermarks are not recorded).
 */
int
db_set_member(db_conn *db, const char *member_id)
{
	free(db->member_id);
	db->member_id = member_id ? strdup(member_id) : NULL;
	return member_id && db->member_id == NULL ? -1 : 0;
}

/*
 * db_set_index
 *		The lane (--db-sessions) this handle serves: its log lines name it
 *		as session=index.
 */
void
db_set_index(db_conn *db, int index)
{
	db->index = index;
}

/*
 * db_set_timeouts
 *		The statement_timeout and lock_timeout each batch transaction gets
 *		when its session has none of its own (0: leave the server's).
 */
void
db_set_timeouts(db_conn *db, int statement_timeout_ms, int lock_timeout_ms)
{
	db->statement_timeout_ms = statement_timeout_ms;
	db->lock_timeout_ms = lock_timeout_ms;
}

/*
 * db_session
 *		A number that changes with every new connection: a caller that
 *		remembers it knows when it talks to a new session (a reconnect, a
 *		failover to another host), whose database may have lost commits.
 */
uint64_t
db_session(const db_conn *db)
{
	return db->sessions;
}

/*
 * db_free
 *		Close and release everything.
 */
void
db_free(db_conn *db)
{
	int			i;

	if (db == NULL)
		return;
	db_disconnect(db);
	pthread_mutex_destroy(&db->cancel_lock);
	for (i = 0; i < DB_OUTBOX_NARRAYS; i++)
		pgarray_free(&db->arrays[i]);
	free(db->envelope);
	free(db->event_type);
	free(db->type_header);
	free(db->group);
	free(db->db_to_msg);
	free(db->rows);
	free(db->dsn);
	free(db->member_id);
	db_watermark_texts_free(&db->wm);
	free(db);
}
