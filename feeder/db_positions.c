/*-------------------------------------------------------------------------
 *
 * db_positions.c
 *	  The consumer group's positions in the database: read at start (and
 *	  checked on the way: the group's role and Kafka cluster), moved back
 *	  for a re-created topic, a gap lost to retention recorded, a Kafka
 *	  position adopted.  Each call is one statement of its own on the
 *	  lane's connection (db_connect.c), outside the batches.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "db_int.h"
#include "db_positions.h"

#define DB_RESTART_SQL \
	"SELECT received_orders.restart_position($1, $2, $3::int4, $4::int8, $5::int8)"

#define DB_ADOPT_SQL \
	"SELECT received_orders.adopt_consumer_position($1, $2, $3::int4, $4::int8)"

#define DB_GAP_SQL \
	"SELECT received_orders.record_position_gap($1, $2, $3::int4, $4::int8, $5::int8, $6::bool)"

/*
 * The positions, checked on the way: the group must be the feeder's role's
 * (or unclaimed: then it claims it) and of the Kafka cluster it is
 * connected to (or of none yet: then it is recorded).
 */
#define DB_POSITIONS_SQL \
	"SELECT kafka_topic, kafka_partition, next_offset " \
	"FROM received_orders.consumer_positions($1, $2)"


/*
 * db_take_server_advice
 *		For a refusal whose remedy only the server knows (the group belongs
 *		to another role, its positions are of another Kafka cluster): the
 *		server's detail joins the message and its hint replaces the
 *		feeder's generic one.
 */
static void
db_take_server_advice(const PGresult *res, db_error *err)
{
	const char *detail = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL);
	const char *hint = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);
	size_t		len = strlen(err->message);

	if (detail != NULL && len + 3 < sizeof(err->message))
		snprintf(err->message + len, sizeof(err->message) - len, ": %s", detail);
	if (hint != NULL)
		snprintf(err->hint, sizeof(err->hint), "%s", hint);
}

/*
 * db_claim_limit_advice
 *		The feeder's role may claim no more consumer groups
 *		(db_claim_limit): the hint says how a DBA forgets the groups no
 *		longer used, then what the server advises (hand this group to the
 *		role), which names the group and the role.
 */
static void
db_claim_limit_advice(const PGresult *res, db_error *err)
{
	const char *server = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT);

	snprintf(err->hint, sizeof(err->hint), "%s%s%s", db_claim_limit_hint(),
			 server ? "; or: " : "", server ? server : "");
}

/*
 * db_read_positions
 *		The database's positions of the feeder's consumer group, for the
 *		Kafka cluster of id cluster_id, one query, connecting first if
 *		needed (a new connection counts as a new session).  On DB_ERR_NONE
 *		*out holds *n entries to release with db_free_positions; otherwise
 *		err says why: DB_ERR_FATAL when the group is another role's, its
 *		positions are of another cluster, or the feeder's role may claim no
 *		more groups (db_positions_refused).
 */
db_error_class
db_read_positions(db_conn *db, const char *cluster_id, db_position **out,
				  int *n, db_error *err)
{
	const char *params[2] = {db_group(db), cluster_id};
	PGresult   *res;
	db_position *positions;
	int			rows,
				i;

	memset(err, 0, sizeof(*err));
	*out = NULL;
	*n = 0;
	db_drop_if_lost(db);
	if (!db_ready(db))
	{
		db_error_class cls = db_connect(db, err);

		if (cls != DB_ERR_NONE)
			return cls;
	}
	res = PQexecParams(db_pgconn(db), DB_POSITIONS_SQL, 2, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQnfields(res) != 3)
	{
		db_error_class cls = db_fill_error(db_pgconn(db), res, "positions", err);
		const char *primary = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

		if (db_positions_refused(err->sqlstate, primary))
		{
			cls = err->cls = DB_ERR_FATAL;
			db_take_server_advice(res, err);
			if (db_claim_limit(err->sqlstate, primary))
				db_claim_limit_advice(res, err);
		}

		PQclear(res);
		if (!db_connected(db))
			db_disconnect(db);
		return cls;
	}
	rows = PQntuples(res);
	positions = calloc((size_t) (rows > 0 ? rows : 1), sizeof(db_position));
	if (positions == NULL)
	{
		PQclear(res);
		err->cls = DB_ERR_TRANSIENT;
		err->step = "positions";
		db_copy_message(err, "out of memory while reading the positions");
		return err->cls;
	}
	for (i = 0; i < rows; i++)
	{
		positions[i].topic = strdup(PQgetvalue(res, i, 0));
		positions[i].partition = (int32_t) strtol(PQgetvalue(res, i, 1), NULL, 10);
		positions[i].next_offset = strtoll(PQgetvalue(res, i, 2), NULL, 10);
		if (positions[i].topic == NULL)
		{
			db_free_positions(positions, i);
			PQclear(res);
			err->cls = DB_ERR_TRANSIENT;
			err->step = "positions";
			db_copy_message(err, "out of memory while reading the positions");
			return err->cls;
		}
	}
	PQclear(res);
	*out = positions;
	*n = rows;
	return DB_ERR_NONE;
}

/*
 * db_position_find
 *		The next offset of (topic, partition) among positions, or -1 if the
 *		database has none.
 */
int64_t
db_position_find(const db_position *positions, int n, const char *topic,
				 int32_t partition)
{
	int			i;

	for (i = 0; i < n; i++)
		if (positions[i].partition == partition &&
			strcmp(positions[i].topic, topic) == 0)
			return positions[i].next_offset;
	return -1;
}

/*
 * db_free_positions
 *		Release what db_read_positions returned.
 */
void
db_free_positions(db_position *positions, int n)
{
	int			i;

	for (i = 0; positions && i < n; i++)
		free(positions[i].topic);
	free(positions);
}

/*
 * db_positions_statement
 *		Run sql, one statement with its nparams params (text), in a
 *		transaction of its own on the current connection, which it never
 *		opens: without one the error is transient.  With flag not NULL the
 *		statement returns one row of one boolean, put in *flag (0 on any
 *		error).  step names the work in err.  The one way restart_position,
 *		record_position_gap and adopt_consumer_position are run.
 */
static db_error_class
db_positions_statement(db_conn *db, const char *sql, int nparams,
					   const char *const *params, const char *step,
					   int *flag, db_error *err)
{
	PGresult   *res;
	db_error_class cls = DB_ERR_NONE;

	memset(err, 0, sizeof(*err));
	if (flag != NULL)
		*flag = 0;
	if (!db_connected(db))
	{
		err->cls = DB_ERR_TRANSIENT;
		err->step = step;
		db_copy_message(err, "no database connection");
		return err->cls;
	}
	res = PQexecParams(db_pgconn(db), sql, nparams, NULL, params, NULL, NULL, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK ||
		(flag != NULL && PQntuples(res) != 1))
		cls = db_fill_error(db_pgconn(db), res, step, err);
	else if (flag != NULL)
		*flag = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return cls;
}

/*
 * db_restart_position
 *		Move the group's position of one partition back from from_offset
 *		(only if it still is there) to to_offset, in a transaction of its
 *		own, on the current connection: a feeder that accepted the loss of a
 *		re-created topic starts it again at its earliest offset.
 */
db_error_class
db_restart_position(db_conn *db, const char *topic, int32_t partition,
					int64_t from_offset, int64_t to_offset, db_error *err)
{
	char		part[16],
				from[24],
				to[24];
	const char *params[5] = {db_group(db), topic, part, from, to};

	snprintf(part, sizeof(part), "%d", (int) partition);
	snprintf(from, sizeof(from), "%lld", (long long) from_offset);
	snprintf(to, sizeof(to), "%lld", (long long) to_offset);
	return db_positions_statement(db, DB_RESTART_SQL, 5, params, "positions",
								  NULL, err);
}

/*
 * db_record_gap
 *		Record offsets first_lost..last_lost of one partition as lost to
 *		retention for the group (record_position_gap), accepted at once
 *		with accept, in a transaction of its own, on the current
 *		connection; *accepted says whether the database holds the whole
 *		range as accepted (by accept, or by an operator earlier).
 */
db_error_class
db_record_gap(db_conn *db, const char *topic, int32_t partition,
			  int64_t first_lost, int64_t last_lost, int accept,
			  int *accepted, db_error *err)
{
	char		part[16],
				first[24],
				last[24];
	const char *params[6] = {db_group(db), topic, part, first, last,
	accept ? "true" : "false"};

	snprintf(part, sizeof(part), "%d", (int) partition);
	snprintf(first, sizeof(first), "%lld", (long long) first_lost);
	snprintf(last, sizeof(last), "%lld", (long long) last_lost);
	return db_positions_statement(db, DB_GAP_SQL, 6, params, "positions",
								  accepted, err);
}

/*
 * db_adopt_position
 *		Record next_offset as the group's position of one partition if the
 *		database has none (adopt_consumer_position), in a transaction of its
 *		own, on the current connection; *adopted says whether it did.
 */
db_error_class
db_adopt_position(db_conn *db, const char *topic, int32_t partition,
				  int64_t next_offset, int *adopted, db_error *err)
{
	char		part[16],
				off[24];
	const char *params[4] = {db_group(db), topic, part, off};

	snprintf(part, sizeof(part), "%d", (int) partition);
	snprintf(off, sizeof(off), "%lld", (long long) next_offset);
	return db_positions_statement(db, DB_ADOPT_SQL, 4, params, "adopt",
								  adopted, err);
}
