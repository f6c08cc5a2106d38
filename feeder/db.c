/*-------------------------------------------------------------------------
 *
 * db.c
 *	  PostgreSQL side of the feeder: connection, prepared batch statement,
 *	  one transaction per batch.
 *
 * A batch is BEGIN; its statement_timeout and lock_timeout (set_config,
 * local to the transaction); EXECUTE of the statement prepared once per
 * connection; record_high_watermarks of the batch's partitions (when
 * the role may: db_watermarks.c); COMMIT, sent together in libpq's
 * pipeline mode and followed by one sync
 * point, so that a batch costs one round trip instead of three.  The
 * statement is the batch function of the feeder's consumer group, which
 * also records the group's positions in the same transaction.  The five
 * arrays (values, topics, partitions, offsets, keys) are sent as binary
 * parameters so that raw Kafka bytes, invalid UTF-8 included, reach the
 * function untouched and unescaped; a tombstone is a NULL value, skipped
 * by the function but counted in the positions.
 *
 * The results are read in order.  The batch counts as committed only when
 * the COMMIT's own result arrived and its command status is "COMMIT".  A
 * statement that fails aborts the rest of the pipeline (the later ones
 * answer PGRES_PIPELINE_ABORTED, a COMMIT after a failed statement would
 * answer ROLLBACK): the first error is the one classified.  A connection
 * lost before the COMMIT's answer, with no earlier statement known to
 * have failed, leaves the result of COMMIT unknown: the COMMIT was sent
 * with the rest.  Result rows are handed back only after the commit, so a
 * retried batch never reports its outcomes twice.
 *
 * Each new connection is checked first (db_privileges.c): schema, USAGE,
 * function and EXECUTE, so that a misconfigured feeder stops at once.
 * Behind a pooler in transaction mode the prepared statement can vanish
 * (26000): the statement is then sent unprepared with every batch.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libpq-fe.h>

#include "db.h"
#include "db_int.h"
#include "db_rows.h"
#include "db_watermarks.h"
#include "feeder.h"
#include "log.h"

/*
 * The batch statement's name is this prefix and a digest of its text and
 * parameter types (db_statement_name): behind a pooler in transaction mode
 * a server session is shared by several clients, and a statement of the
 * same name prepared there by another feeder is then the same statement.
 */
#define DB_STMT_PREFIX "ro_materialize_orders_"

/*
 * The answer's order_id, only where the feeder logs it (a quarantined
 * message): the others' would be formatted and sent for nothing.
 */
#define DB_ORDER_ID_IF_QUARANTINED \
	"CASE WHEN outcome IN ('rejected', 'conflict') THEN order_id END"
#define DB_STMT_SQL \
	"SELECT \"position\", " DB_ORDER_ID_IF_QUARANTINED ", outcome, sqlstate, message " \
	"FROM received_orders.materialize_orders($1::text, $2::bytea[], " \
	"$3::text[], $4::int4[], $5::int8[], $6::bytea[])"
#define DB_NARRAYS 5
static const Oid db_param_types[] = {
	PGARRAY_TEXTOID, PGARRAY_BYTEAARRAYOID, PGARRAY_TEXTARRAYOID,
	PGARRAY_INT4ARRAYOID, PGARRAY_INT8ARRAYOID, PGARRAY_BYTEAARRAYOID
};
#define DB_NPARAMS (1 + DB_NARRAYS)		/* the group, then the arrays */

/*
 * The outbox form (--envelope, --event-type): the same, then the envelope,
 * the event type and the type header's name, and per message the type
 * header's and the content-type header's values.
 */
#define DB_OUTBOX_STMT_SQL \
	"SELECT \"position\", " DB_ORDER_ID_IF_QUARANTINED ", outcome, sqlstate, message " \
	"FROM received_orders.materialize_orders($1::text, $2::bytea[], " \
	"$3::text[], $4::int4[], $5::int8[], $6::bytea[], $7::text, $8::text, " \
	"$9::text, $10::bytea[], $11::bytea[])"
#define DB_OUTBOX_NARRAYS (DB_NARRAYS + 2)
static const Oid db_outbox_param_types[] = {
	PGARRAY_TEXTOID, PGARRAY_BYTEAARRAYOID, PGARRAY_TEXTARRAYOID,
	PGARRAY_INT4ARRAYOID, PGARRAY_INT8ARRAYOID, PGARRAY_BYTEAARRAYOID,
	PGARRAY_TEXTOID, PGARRAY_TEXTOID, PGARRAY_TEXTOID,
	PGARRAY_BYTEAARRAYOID, PGARRAY_BYTEAARRAYOID
};
#define DB_OUTBOX_NPARAMS 11

/*
 * The Schema Registry form (--value-format confluent): the outbox form, then
 * per message the JSON an Avro value decoded into, the frame's schema id,
 * why the value could not be decoded (confluent.c) and the GUID its
 * __value_schema_id header named, which the quarantine keeps: the
 * DB_DECODED_NARRAYS arrays the lane decoded the batch into (decode.c).
 */
#define DB_FRAMED_STMT_SQL \
	"SELECT \"position\", " DB_ORDER_ID_IF_QUARANTINED ", outcome, sqlstate, message " \
	"FROM received_orders.materialize_orders($1::text, $2::bytea[], " \
	"$3::text[], $4::int4[], $5::int8[], $6::bytea[], $7::text, $8::text, " \
	"$9::text, $10::bytea[], $11::bytea[], $12::bytea[], $13::int4[], $14::text[], " \
	"$15::uuid[])"
#define DB_FRAMED_NARRAYS (DB_OUTBOX_NARRAYS + DB_DECODED_NARRAYS)
static const Oid db_framed_param_types[] = {
	PGARRAY_TEXTOID, PGARRAY_BYTEAARRAYOID, PGARRAY_TEXTARRAYOID,
	PGARRAY_INT4ARRAYOID, PGARRAY_INT8ARRAYOID, PGARRAY_BYTEAARRAYOID,
	PGARRAY_TEXTOID, PGARRAY_TEXTOID, PGARRAY_TEXTOID,
	PGARRAY_BYTEAARRAYOID, PGARRAY_BYTEAARRAYOID,
	PGARRAY_BYTEAARRAYOID, PGARRAY_INT4ARRAYOID, PGARRAY_TEXTARRAYOID,
	PGARRAY_UUIDARRAYOID
};
#define DB_FRAMED_NPARAMS 15

struct db_conn
{
	PGconn	   *conn;
	char	   *dsn;
	char	   *group;			/* the consumer group, first parameter */
	pthread_mutex_t cancel_lock;	/* guards cancel: db_cancel runs on another thread */
	PGcancel   *cancel;			/* the connection's cancel key, NULL: none */
	atomic_int	cancel_requested;	/* db_cancel asked since the batch started */
	int			prepared;		/* ready: statement prepared (or not needed) */
	char		stmt_name[64];	/* DB_STMT_PREFIX and the statement's digest */
	int			unprepared;		/* a pooler lost it once: send it unprepared */
	uint64_t	sessions;		/* connections made so far */
	int			index;			/* its lane, named by its log lines */
	int			statement_timeout_ms;	/* defaults for a session without */
	int			lock_timeout_ms;
	char		batch_statement_timeout[32];	/* what each batch sets */
	char		batch_lock_timeout[32];
	pgarray		arrays[DB_OUTBOX_NARRAYS];	/* the decoded ones: the lane's */
	int			adopt;			/* --adopt-kafka-offsets: no batches */
	int			outbox;			/* the outbox form: the three below */
	int			framed;			/* the Schema Registry form */
	char	   *envelope;
	char	   *event_type;		/* NULL: no type selection */
	char	   *type_header;
	int		   *db_to_msg;		/* database element -> batch index */
	db_row	   *rows;
	int			cap;
	PGresult   *last;			/* rows point into it */
	feeder_stats *stats;
	char	   *member_id;		/* the status report's; NULL: none */
	int			watermarks;		/* the session may record_high_watermarks */
	int			ascii_texts;	/* the server refused a text: send ASCII */
	db_watermark_texts wm;		/* that statement's arrays, reused */
};

/*
 * db_form_sql, db_form_types, db_form_nparams, db_form_signature
 *		The batch statement of this connection's form: the one with a
 *		consumer group, the outbox form, or the Schema Registry form.
 */
static const char *
db_form_sql(const db_conn *db)
{
	return db->framed ? DB_FRAMED_STMT_SQL :
		db->outbox ? DB_OUTBOX_STMT_SQL : DB_STMT_SQL;
}

static const Oid *
db_form_types(const db_conn *db)
{
	return db->framed ? db_framed_param_types :
		db->outbox ? db_outbox_param_types : db_param_types;
}

static int
db_form_nparams(const db_conn *db)
{
	return db->framed ? DB_FRAMED_NPARAMS :
		db->outbox ? DB_OUTBOX_NPARAMS : DB_NPARAMS;
}

static const char *
db_form_signature(const db_conn *db)
{
	return db->framed ? DB_FRAMED_SIGNATURE :
		db->outbox ? DB_OUTBOX_SIGNATURE : DB_FUNCTION_SIGNATURE;
}

/*
 * db_statement_name
 *		The batch statement's name for this form: DB_STMT_PREFIX and the
 *		64-bit FNV-1a digest of its text and parameter types, so that one
 *		name always means one statement, whichever feeder (of whichever
 *		version or form) prepared it on a server session a pooler shares.
 */
static void
db_statement_name(db_conn *db)
{
	const char *sql = db_form_sql(db);
	const Oid  *types = db_form_types(db);
	int			ntypes = db_form_nparams(db);
	uint64_t	h = UINT64_C(14695981039346656037);
	const unsigned char *p;
	int			i;

	for (p = (const unsigned char *) sql; *p; p++)
		h = (h ^ *p) * UINT64_C(1099511628211);
	for (i = 0; i < ntypes; i++)
		for (p = (const unsigned char *) &types[i];
			 p < (const unsigned char *) &types[i] + sizeof(Oid); p++)
			h = (h ^ *p) * UINT64_C(1099511628211);
	snprintf(db->stmt_name, sizeof(db->stmt_name), "%s%016llx", DB_STMT_PREFIX,
			 (unsigned long long) h);
}

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
 * db_connected
 *		True when a connection is open and usable.
 */
int
db_connected(const db_conn *db)
{
	return db->conn != NULL && PQstatus(db->conn) == CONNECTION_OK;
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
 * db_choose_timeouts
 *		On a new session, the statement_timeout and lock_timeout each batch
 *		sets for its own transaction (SET LOCAL, so a pooler in transaction
 *		mode keeps nothing of it): the session's own when it has one (from
 *		the DSN's options, the role or the database), else the feeder's.
 *		A batch then never waits for ever on a lock or a statement while
 *		Kafka is not polled: the wait becomes a retried error.
 */
static db_error_class
db_choose_timeouts(db_conn *db, db_error *err)
{
	PGresult   *res = PQexec(db->conn,
							 "SELECT pg_catalog.current_setting('statement_timeout'),"
							 " pg_catalog.current_setting('lock_timeout')");

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
	{
		db_error_class cls = db_fill_error(db->conn, res, "connect", err);

		PQclear(res);
		return cls;
	}
	if (strcmp(PQgetvalue(res, 0, 0), "0") != 0)
		snprintf(db->batch_statement_timeout, sizeof(db->batch_statement_timeout),
				 "%s", PQgetvalue(res, 0, 0));
	else
		snprintf(db->batch_statement_timeout, sizeof(db->batch_statement_timeout),
				 "%d", db->statement_timeout_ms);
	if (strcmp(PQgetvalue(res, 0, 1), "0") != 0)
		snprintf(db->batch_lock_timeout, sizeof(db->batch_lock_timeout),
				 "%s", PQgetvalue(res, 0, 1));
	else
		snprintf(db->batch_lock_timeout, sizeof(db->batch_lock_timeout),
				 "%d", db->lock_timeout_ms);
	PQclear(res);
	return DB_ERR_NONE;
}

/*
 * db_copy_connect_message
 *		Copy a verbose connection failure message into err as one line:
 *		its LOCATION lines dropped, the other lines joined with "; ".
 */
static void
db_copy_connect_message(db_error *err, const char *msg)
{
	char		buf[sizeof(err->message)];
	size_t		off = 0;
	const char *line = msg ? msg : "";

	buf[0] = '\0';
	while (*line && off + 1 < sizeof(buf))
	{
		const char *end = strchr(line, '\n');
		size_t		len = end ? (size_t) (end - line) : strlen(line);

		while (len > 0 && (*line == '\t' || *line == ' '))
		{
			line++;
			len--;
		}
		if (len > 0 && strncmp(line, "LOCATION:", 9) != 0)
		{
			int			n = snprintf(buf + off, sizeof(buf) - off, "%s%.*s",
									 off ? "; " : "", (int) len, line);

			if (n < 0)
				break;
			off += (size_t) n;
			if (off >= sizeof(buf))
				off = sizeof(buf) - 1;
		}
		if (end == NULL)
			break;
		line = end + 1;
	}
	db_copy_message(err, buf);
}

/*
 * db_notice_processor
 *		Route server notices (the WARNING of a conflict, say) into the log
 *		at debug level: the feeder reports conflicts itself from the result
 *		rows, with their Kafka coordinates.
 */
static void
db_notice_processor(void *arg, const char *message)
{
	char		buf[1024];
	size_t		n;

	(void) arg;
	snprintf(buf, sizeof(buf), "%s", message);
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_simple(LOG_DEBUG, "db_notice", buf);
}

/*
 * db_disconnect
 *		Close the connection; the next batch reconnects.
 */
void
db_disconnect(db_conn *db)
{
	if (db->last)
	{
		PQclear(db->last);
		db->last = NULL;
	}
	pthread_mutex_lock(&db->cancel_lock);
	if (db->cancel)
		PQfreeCancel(db->cancel);
	db->cancel = NULL;
	pthread_mutex_unlock(&db->cancel_lock);
	if (db->conn)
	{
		PQfinish(db->conn);
		db->conn = NULL;
	}
	db->prepared = 0;
}

/*
 * db_cancel
 *		Ask the server to cancel what the session runs now: called by the
 *		main thread for a batch past its deadline while the lane's thread
 *		waits for the answer (PQcancel is meant for another thread).  The
 *		running batch then ends: a statement with 57014, and a COMMIT that
 *		waited (for a synchronous standby, say, which statement_timeout
 *		does not cover) as "result of COMMIT unknown" whatever it answers,
 *		since PostgreSQL commits locally before such a wait.  0 when the
 *		request was sent; -1 with the reason in errbuf.
 */
int
db_cancel(db_conn *db, char *errbuf, int errbufsize)
{
	int			sent = 0;

	atomic_store(&db->cancel_requested, 1);
	pthread_mutex_lock(&db->cancel_lock);
	if (db->cancel == NULL)
		snprintf(errbuf, (size_t) errbufsize, "no connection to cancel");
	else
		sent = PQcancel(db->cancel, errbuf, errbufsize);
	pthread_mutex_unlock(&db->cancel_lock);
	return sent ? 0 : -1;
}

/*
 * db_result_sqlstate_is
 *		Whether a failed result carries this SQLSTATE.
 */
static int
db_result_sqlstate_is(const PGresult *res, const char *sqlstate)
{
	const char *s = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	return s != NULL && strcmp(s, sqlstate) == 0;
}

/*
 * db_log_statement_shared
 *		The batch statement was already prepared on this server session by
 *		another client of a pooler: say so once per connection.
 */
static void
db_log_statement_shared(const db_conn *db)
{
	log_line	line;

	log_begin(&line, LOG_INFO, "statement_shared");
	log_kv_str(&line, "sqlstate", "42P05");
	log_kv_str(&line, "statement", db->stmt_name);
	log_kv_str(&line, "reason", "a pooler in transaction mode shares this server session with another feeder, which prepared the same statement (same name, same text)");
	log_end(&line);
}

/*
 * db_connect
 *		(Re)connect, check the privileges and prepare the batch statement.  The DSN is expanded by
 *		libpq (conninfo or URI); PG* variables and .pgpass fill the rest as
 *		in psql.  fallback_application_name names us in pg_stat_activity,
 *		and connect_timeout defaults to 10 s (unless PGCONNECT_TIMEOUT or
 *		the DSN says otherwise) so a dead host cannot hang the loop.
 */
db_error_class
db_connect(db_conn *db, db_error *err)
{
	const char *keywords[12];
	const char *values[12];
	int			n = 0;
	PGresult   *res;
	static const char *const socket_defaults[][2] = {
		{"keepalives", "1"},
		{"keepalives_idle", "10"},
		{"keepalives_interval", "5"},
		{"keepalives_count", "3"},
		{"tcp_user_timeout", "30000"},
	};
	size_t		k;
	memset(err, 0, sizeof(*err));
	db_disconnect(db);

	keywords[n] = "fallback_application_name";
	values[n++] = FEEDER_NAME;
	/* a half-open socket fails within about 30 s, not hours; the DSN wins */
	for (k = 0; k < sizeof(socket_defaults) / sizeof(socket_defaults[0]); k++)
	{
		keywords[n] = socket_defaults[k][0];
		values[n++] = socket_defaults[k][1];
	}
	if (getenv("PGCONNECT_TIMEOUT") == NULL)
	{
		keywords[n] = "connect_timeout";
		values[n++] = "10";
	}
	if (db->dsn[0] != '\0')
	{
		keywords[n] = "dbname";
		values[n++] = db->dsn;
	}
	/* the texts the feeder sends are UTF-8, whatever the DSN says */
	keywords[n] = "client_encoding";
	values[n++] = "UTF8";
	keywords[n] = NULL;
	values[n] = NULL;

	/*
	 * Started without blocking only to set the verbose error mode, whose
	 * messages carry the server's SQLSTATE; PQreset then connects as
	 * PQconnectdbParams would (connect_timeout, every host of the DSN).
	 */
	db->conn = PQconnectStartParams(keywords, values, 1);
	if (db->conn != NULL && PQstatus(db->conn) != CONNECTION_BAD)
	{
		PQsetErrorVerbosity(db->conn, PQERRORS_VERBOSE);
		PQreset(db->conn);
	}
	if (db->conn == NULL || PQstatus(db->conn) != CONNECTION_OK)
	{
		const char *msg = db->conn ? PQerrorMessage(db->conn) : NULL;
		db_tls_failure tls = db_connect_tls_failure(msg);

		err->step = "connect";
		db_copy_connect_message(err, msg ? msg : "out of memory");
		db_connect_sqlstate(msg, err->sqlstate);
		/* a TLS failure has no SQLSTATE: say what to fix in its stead */
		if (tls != DB_TLS_NONE)
			snprintf(err->hint, sizeof(err->hint), "%s", db_tls_hint(tls));
		err->cls = db_classify_connect(err->sqlstate,
									   db->conn && PQconnectionNeedsPassword(db->conn),
									   tls, db->sessions == 0);
		db_disconnect(db);
		return err->cls;
	}
	PQsetErrorVerbosity(db->conn, PQERRORS_DEFAULT);
	PQsetNoticeProcessor(db->conn, db_notice_processor, NULL);

	if (db_check_privileges(db->conn, db->adopt ? NULL : db_form_signature(db),
							err) != DB_ERR_NONE)
	{
		db_disconnect(db);
		return err->cls;
	}

	if (db_choose_timeouts(db, err) != DB_ERR_NONE)
	{
		db_disconnect(db);
		return err->cls;
	}
	if (!db->adopt)
		db->watermarks = db_watermarks_allowed(db->conn,
											   db->sessions == 0 && db->index == 0);

	if (!db->unprepared && !db->adopt)
	{
		db_statement_name(db);
		res = PQprepare(db->conn, db->stmt_name, db_form_sql(db),
						db_form_nparams(db), db_form_types(db));

		/*
		 * 42P05: a pooler in transaction mode gave this PREPARE a server
		 * session where another client (a feeder of the same form) had
		 * already prepared it: by its name, the same statement, ready.
		 */
		if (PQresultStatus(res) != PGRES_COMMAND_OK &&
			db_result_sqlstate_is(res, "42P05"))
			db_log_statement_shared(db);
		else if (PQresultStatus(res) != PGRES_COMMAND_OK)
		{
			db_fill_error(db->conn, res, "prepare", err);
			PQclear(res);
			db_disconnect(db);
			return err->cls;
		}
		PQclear(res);
	}
	db->prepared = 1;
	db->sessions++;
	db->stats->db_connects++;

	{
		log_line	line;

		log_begin(&line, LOG_INFO, "db_connected");
		log_kv_str(&line, "host", PQhost(db->conn));
		log_kv_str(&line, "port", PQport(db->conn));
		log_kv_str(&line, "dbname", PQdb(db->conn));
		log_kv_str(&line, "user", PQuser(db->conn));
		log_kv_int(&line, "server_version", PQserverVersion(db->conn));
		log_kv_int(&line, "session", db->index);
		log_end(&line);
	}
	pthread_mutex_lock(&db->cancel_lock);
	db->cancel = PQgetCancel(db->conn);
	pthread_mutex_unlock(&db->cancel_lock);
	return DB_ERR_NONE;
}

/*
 * db_rollback
 *		Leave a failed transaction: ROLLBACK when the connection is still
 *		usable and inside a transaction, else drop the connection so that
 *		the retry starts from a clean one.
 */
static void
db_rollback(db_conn *db)
{
	PGTransactionStatusType ts;
	PGresult   *res;

	if (!db_connected(db))
	{
		db_disconnect(db);
		return;
	}
	ts = PQtransactionStatus(db->conn);
	if (ts == PQTRANS_IDLE)
		return;
	if (ts != PQTRANS_INTRANS && ts != PQTRANS_INERROR)
	{
		db_disconnect(db);
		return;
	}
	res = PQexec(db->conn, "ROLLBACK");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		db_disconnect(db);
	PQclear(res);
}

/*
 * db_reserve
 *		Grow the per-batch arrays to hold n elements.
 */
static int
db_reserve(db_conn *db, int n)
{
	int		   *map;
	db_row	   *rows;

	if (n <= db->cap)
		return 0;
	map = realloc(db->db_to_msg, sizeof(int) * (size_t) n);
	if (map == NULL)
		return -1;
	db->db_to_msg = map;
	rows = realloc(db->rows, sizeof(db_row) * (size_t) n);
	if (rows == NULL)
		return -1;
	db->rows = rows;
	db->cap = n;
	return 0;
}

/*
 * db_texts_ascii
 *		Whether the texts the feeder builds (a decode reason: a schema's
 *		names, a registry's message) must reach this session as ASCII, not
 *		only as valid UTF-8: when the database's encoding is neither UTF8
 *		nor SQL_ASCII and so cannot hold every character (22P05), or once
 *		the server refused a batch's text anyway (db_go_ascii).  The lane
 *		asks before it decodes a batch (decode.c makes the reasons so).
 */
int
db_texts_ascii(const db_conn *db)
{
	const char *encoding = db->conn ?
		PQparameterStatus(db->conn, "server_encoding") : NULL;

	return db->ascii_texts ||
		(encoding != NULL && strcmp(encoding, "UTF8") != 0 &&
		 strcmp(encoding, "SQL_ASCII") != 0);
}

/*
 * db_build_params
 *		Encode the batch's first n messages into the five binary arrays (a
 *		tombstone as a NULL value), and the outbox form's two, and
 *		remember which message each element came from.  0; -1 when out of
 *		memory.
 */
static int
db_build_params(db_conn *db, const batch *b, int n)
{
	pgarray    *a = db->arrays;
	int			i;

	pgarray_begin(&a[0], PGARRAY_BYTEAOID);
	pgarray_begin(&a[1], PGARRAY_TEXTOID);
	pgarray_begin(&a[2], PGARRAY_INT4OID);
	pgarray_begin(&a[3], PGARRAY_INT8OID);
	pgarray_begin(&a[4], PGARRAY_BYTEAOID);
	if (db->outbox)
	{
		pgarray_begin(&a[5], PGARRAY_BYTEAOID);
		pgarray_begin(&a[6], PGARRAY_BYTEAOID);
	}
	for (i = 0; i < n; i++)
	{
		const batch_msg *m = &b->msgs[i];

		db->db_to_msg[i] = i;
		if (m->value == NULL ||
			(db->outbox && !batch_sends_value(db->envelope, db->event_type, m)))
			pgarray_add_null(&a[0]);	/* tombstone, another type: skipped */
		else
			pgarray_add_bytes(&a[0], m->value, m->value_len);
		if (db->outbox)
		{
			if (m->type)
				pgarray_add_bytes(&a[5], m->type, m->type_len);
			else
				pgarray_add_null(&a[5]);
			if (m->content_type)
				pgarray_add_bytes(&a[6], m->content_type, m->content_type_len);
			else
				pgarray_add_null(&a[6]);
		}
		pgarray_add_bytes(&a[1], m->topic, strlen(m->topic));
		pgarray_add_int4(&a[2], m->partition);
		pgarray_add_int8(&a[3], m->offset);
		if (m->key)
			pgarray_add_bytes(&a[4], m->key, m->key_len);
		else
			pgarray_add_null(&a[4]);
	}
	for (i = 0; i < (db->outbox ? DB_OUTBOX_NARRAYS : DB_NARRAYS); i++)
		if (pgarray_finish(&a[i]) != 0)
			return -1;
	return 0;
}

/*
 * The statements of a batch, in pipeline order; the names are the step=
 * of batch_failed lines.
 */
typedef enum db_stage
{
	DB_STAGE_BEGIN = 0,
	DB_STAGE_SETTINGS,
	DB_STAGE_EXECUTE,
	DB_STAGE_WATERMARKS,		/* only when the session may and has some */
	DB_STAGE_COMMIT,
	DB_NSTAGES
} db_stage;

static const char *const db_stage_names[DB_NSTAGES] = {
	"begin", "settings", "execute", "watermarks", "commit"
};

#define DB_SETTINGS_SQL \
	"SELECT pg_catalog.set_config('statement_timeout', $1, true)," \
	" pg_catalog.set_config('lock_timeout', $2, true)"

/*
 * db_socket_alive
 *		Whether the server still holds the connection, without a round
 *		trip: read what the (non-blocking) socket holds and look at the
 *		state.  Read twice: a server that goes away (a crash, an immediate
 *		shutdown, a terminated backend) first sends its FATAL message, which
 *		libpq hands to the notice processor while the state stays OK, and
 *		only the next read meets the end of the stream.
 */
static int
db_socket_alive(PGconn *conn)
{
	return PQconsumeInput(conn) && PQconsumeInput(conn) &&
		PQstatus(conn) == CONNECTION_OK;
}

/*
 * db_drop_if_lost
 *		Before sending a batch, notice without a round trip that the server
 *		closed the idle connection (restart, terminated backend): the batch
 *		then reconnects first instead of sending its pipeline into a dead
 *		socket, where a lost connection would leave the result of COMMIT
 *		unknown.
 */
void
db_drop_if_lost(db_conn *db)
{
	log_line	line;

	if (db->conn == NULL || db_socket_alive(db->conn))
		return;
	log_begin(&line, LOG_WARNING, "db_connection_lost");
	log_kv_str(&line, "error", PQerrorMessage(db->conn));
	log_kv_str(&line, "action", "reconnecting before the batch");
	log_kv_int(&line, "session", db->index);
	log_end(&line);
	db_disconnect(db);
}

/*
 * db_go_unprepared
 *		26000 on the batch statement: the session lost the statement
 *		prepared at connection, which happens behind a pooler in transaction
 *		mode (pgbouncer hands each transaction another server session).
 *		From now on the statement is sent unprepared with each batch (the
 *		same parse, one round trip still); the failed batch is retried.
 */
static void
db_go_unprepared(db_conn *db, db_error *err)
{
	log_line	line;

	db->unprepared = 1;
	err->cls = DB_ERR_TRANSIENT;
	log_begin(&line, LOG_WARNING, "statement_unprepared");
	log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_str(&line, "error", err->message);
	log_kv_str(&line, "reason", "the prepared statement is gone: a pooler in transaction mode; sending it unprepared from now on");
	log_end(&line);
}

/*
 * db_go_ascii
 *		The server refused a text of the batch (22021 invalid UTF-8, 22P05
 *		not representable in the database's encoding): the reasons are
 *		made valid UTF-8 before they are sent, so this should not happen;
 *		should it anyway, the batch's reasons are sent as ASCII from now on
 *		(db_texts_ascii: the lane decodes the retry anew) and the batch is
 *		retried, instead of being refused at every retry.
 */
static void
db_go_ascii(db_conn *db, db_error *err)
{
	log_line	line;

	db->ascii_texts = 1;
	err->cls = DB_ERR_TRANSIENT;
	log_begin(&line, LOG_WARNING, "reasons_ascii");
	log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_str(&line, "error", err->message);
	log_kv_str(&line, "reason", "the server refused a text of the batch; decode reasons are sent as ASCII from now on (other characters as '?') and the batch is retried");
	log_end(&line);
}

/*
 * db_send_pipeline
 *		Queue BEGIN, the batch's timeouts (SET LOCAL through set_config),
 *		the prepared EXECUTE and COMMIT, then the sync point,
 *		which flushes them all.  0 when sent; -1 with *stage set to the
 *		statement that could not be sent (the sync point counts as COMMIT:
 *		once the COMMIT is queued it may have reached the server).
 */
static int
db_send_pipeline(db_conn *db, const char *const *params, const int *lengths,
				 const int *formats, const char *const *watermarks, db_stage *stage)
{
	const char *settings[2] = {db->batch_statement_timeout, db->batch_lock_timeout};

	*stage = DB_STAGE_BEGIN;
	if (!PQenterPipelineMode(db->conn) ||
		!PQsendQueryParams(db->conn, "BEGIN", 0, NULL, NULL, NULL, NULL, 0))
		return -1;
	*stage = DB_STAGE_SETTINGS;
	if (!PQsendQueryParams(db->conn, DB_SETTINGS_SQL, 2, NULL, settings, NULL, NULL, 0))
		return -1;
	*stage = DB_STAGE_EXECUTE;
	if (db->unprepared ?
		!PQsendQueryParams(db->conn, db_form_sql(db), db_form_nparams(db),
						   db_form_types(db), params, lengths, formats, 0) :
		!PQsendQueryPrepared(db->conn, db->stmt_name, db_form_nparams(db),
							 params, lengths, formats, 0))
		return -1;
	*stage = DB_STAGE_WATERMARKS;
	if (watermarks &&
		!PQsendQueryParams(db->conn, DB_WATERMARKS_SQL, 5, NULL, watermarks, NULL, NULL, 0))
		return -1;
	*stage = DB_STAGE_COMMIT;
	if (!PQsendQueryParams(db->conn, "COMMIT", 0, NULL, NULL, NULL, NULL, 0) ||
		!PQpipelineSync(db->conn))
		return -1;
	return 0;
}

/*
 * db_read_pipeline
 *		Collect the result of each statement, in order, then the sync point,
 *		and leave pipeline mode.  results[i] stays NULL for a statement
 *		whose answer never came.  0 when the connection is back in normal
 *		mode (usable for a ROLLBACK if needed); -1 when the connection broke
 *		or the exchange went out of step (the caller drops it).
 */
static int
db_read_pipeline(db_conn *db, PGresult *results[DB_NSTAGES], int with_watermarks)
{
	PGresult   *res;
	int			i;

	for (i = 0; i < DB_NSTAGES; i++)
	{
		if (i == DB_STAGE_WATERMARKS && !with_watermarks)
			continue;
		results[i] = PQgetResult(db->conn);
		if (results[i] == NULL || PQstatus(db->conn) != CONNECTION_OK)
			return -1;
		/* a NULL ends each statement's results */
		if ((res = PQgetResult(db->conn)) != NULL)
		{
			PQclear(res);
			return -1;
		}
	}
	res = PQgetResult(db->conn);
	if (res == NULL || PQresultStatus(res) != PGRES_PIPELINE_SYNC)
	{
		PQclear(res);
		return -1;
	}
	PQclear(res);
	return PQexitPipelineMode(db->conn) ? 0 : -1;
}

/*
 * db_commit_unknown
 *		Rewrite a connection failure (no SQLSTATE) as "result of COMMIT
 *		unknown": step commit, transient, retried under the commit_unknown
 *		reason.
 */
static db_error_class
db_commit_unknown(db_error *err)
{
	char		msg[sizeof(err->message) + 32];

	snprintf(msg, sizeof(msg), "result of COMMIT unknown: %s", err->message);
	db_copy_message(err, msg);
	err->step = db_stage_names[DB_STAGE_COMMIT];
	err->cls = DB_ERR_TRANSIENT;
	return err->cls;
}

/*
 * db_pipeline_outcome
 *		Judge the results of a pipeline, in order.  DB_ERR_NONE only when
 *		BEGIN and EXECUTE succeeded and COMMIT answered "COMMIT".  Otherwise
 *		err describes the first statement that did not succeed: a server
 *		error is classified by its SQLSTATE (the transaction was aborted, so
 *		nothing committed); a failure without SQLSTATE (the connection broke,
 *		or the answer never came) leaves the result of COMMIT unknown unless
 *		the COMMIT's own answer is known.
 */
static db_error_class
db_pipeline_outcome(db_conn *db, PGresult *results[DB_NSTAGES], int with_watermarks,
					db_error *err)
{
	PGresult   *commit = results[DB_STAGE_COMMIT];
	int			i;

	for (i = 0; i < DB_NSTAGES; i++)
	{
		PGresult   *res = results[i];

		if (i == DB_STAGE_WATERMARKS && !with_watermarks)
			continue;
		ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
		const char *sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

		if (st == (i == DB_STAGE_EXECUTE || i == DB_STAGE_SETTINGS ||
				   i == DB_STAGE_WATERMARKS ? PGRES_TUPLES_OK : PGRES_COMMAND_OK))
		{
			if (i != DB_STAGE_COMMIT || strcmp(PQcmdStatus(res), "COMMIT") == 0)
				continue;
			/* the server answered ROLLBACK: the transaction had failed */
			err->step = db_stage_names[i];
			err->cls = DB_ERR_OTHER;
			db_copy_message(err, "COMMIT answered ROLLBACK: the transaction was aborted");
			return err->cls;
		}
		if (st == PGRES_FATAL_ERROR)
		{
			db_fill_error(db->conn, res, db_stage_names[i], err);
			if (sqlstate == NULL || sqlstate[0] == '\0')
			{
				int			commit_known = commit != NULL &&
					(PQresultStatus(commit) == PGRES_COMMAND_OK ||
					 PQresultStatus(commit) == PGRES_PIPELINE_ABORTED ||
					 PQresultErrorField(commit, PG_DIAG_SQLSTATE) != NULL);

				if (!commit_known)
					return db_commit_unknown(err);
			}
			return err->cls;
		}
		/* PGRES_PIPELINE_ABORTED with no error before it, or a surprise */
		err->step = db_stage_names[i];
		err->cls = DB_ERR_OTHER;
		snprintf(err->message, sizeof(err->message), "unexpected result status %s",
				 PQresStatus(st));
		return err->cls;
	}
	return DB_ERR_NONE;
}

/*
 * db_begin_batch
 *		Start an attempt at batch b: no rows yet, no cancel asked, the last
 *		result released, and the connection checked without a round trip
 *		(transient error without one).  The lane calls it first, then
 *		decodes the batch (decode.c) on the checked session, then calls
 *		db_run_batch.
 */
db_error_class
db_begin_batch(db_conn *db, const batch *b, db_row **rows, int *nrows,
			   db_error *err)
{
	memset(err, 0, sizeof(*err));
	*rows = NULL;
	*nrows = 0;
	atomic_store(&db->cancel_requested, 0);
	if (db->last)
	{
		PQclear(db->last);
		db->last = NULL;
	}
	if (b->count == 0)
		return DB_ERR_NONE;

	/*
	 * A new session is made by the caller (db_read_positions), which checks
	 * its positions first: a batch never opens one by itself.
	 */
	db_drop_if_lost(db);
	if (!db_connected(db) || !db->prepared)
	{
		err->cls = DB_ERR_TRANSIENT;
		err->step = "connect";
		db_copy_message(err, "no database connection");
		return err->cls;
	}
	return DB_ERR_NONE;
}

/*
 * db_run_batch
 *		Materialize the batch's first n messages in one transaction, one
 *		round trip, on the connection db_begin_batch checked.  In the
 *		Schema Registry form decoded holds the DB_DECODED_NARRAYS arrays of
 *		their decoded values (decode.c), which decide n: fewer than
 *		b->count when the others' decoded values would have passed the
 *		bound of a batch; the caller holds those back, unacknowledged, for
 *		the next batch.  In the other forms decoded is NULL and n is
 *		b->count.  On DB_ERR_NONE the transaction committed, *rows holds
 *		one row per database element (tombstones have none), valid until
 *		the next batch, and *nrows is n.
 *		On error nothing of the batch may be acknowledged, err says why,
 *		and the connection is left idle outside a transaction (rolled back)
 *		or dropped.  A result that does not match the extension is an error
 *		even though COMMIT was part of the pipeline: the rows are then
 *		stored but not acknowledged, and the retry finds them duplicate.
 */
db_error_class
db_run_batch(db_conn *db, const batch *b, const pgarray *decoded, int n,
			 db_row **rows, int *nrows, db_error *err)
{
	const char *params[DB_FRAMED_NPARAMS];
	int			lengths[DB_FRAMED_NPARAMS];
	const int	formats[DB_FRAMED_NPARAMS] = {0, 1, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1};
	PGresult   *results[DB_NSTAGES] = {NULL};
	const char *watermarks[5];
	int			with_watermarks = 0;
	db_stage	stage;
	db_error_class cls;
	int			read_ok;
	int			i;

	if (b->count == 0)
		return DB_ERR_NONE;

	if (db_reserve(db, n) != 0 || db_build_params(db, b, n) != 0)
	{
		err->cls = DB_ERR_TRANSIENT;
		err->step = "encode";
		db_copy_message(err, "out of memory while encoding the batch");
		return err->cls;
	}
	params[0] = db->group;
	lengths[0] = 0;
	for (i = 0; i < DB_NARRAYS; i++)
	{
		params[1 + i] = db->arrays[i].data;
		lengths[1 + i] = (int) db->arrays[i].len;
	}
	if (db->outbox)
	{
		params[6] = db->envelope;
		params[7] = db->event_type;
		params[8] = db->type_header;
		lengths[6] = lengths[7] = lengths[8] = 0;
		for (i = 0; i < 2; i++)
		{
			params[9 + i] = db->arrays[DB_NARRAYS + i].data;
			lengths[9 + i] = (int) db->arrays[DB_NARRAYS + i].len;
		}
	}
	for (i = 0; db->framed && i < DB_DECODED_NARRAYS; i++)
	{
		params[11 + i] = decoded[i].data;
		lengths[11 + i] = (int) decoded[i].len;
	}

	if (db->watermarks && db->member_id && b->nwatermarks > 0 &&
		db_watermark_arrays(&db->wm, b) == 0)
	{
		watermarks[0] = db->group;
		watermarks[1] = db->member_id;
		watermarks[2] = db->wm.text[0];
		watermarks[3] = db->wm.text[1];
		watermarks[4] = db->wm.text[2];
		with_watermarks = 1;
	}
	if (db_send_pipeline(db, params, lengths, formats,
						 with_watermarks ? watermarks : NULL, &stage) != 0)
	{
		cls = db_fill_error(db->conn, NULL, db_stage_names[stage], err);
		if (stage == DB_STAGE_COMMIT && err->sqlstate[0] == '\0')
			cls = db_commit_unknown(err);
		db_disconnect(db);
		return cls;
	}

	read_ok = db_read_pipeline(db, results, with_watermarks) == 0;
	cls = db_pipeline_outcome(db, results, with_watermarks, err);
	if (cls == DB_ERR_NONE && atomic_load(&db->cancel_requested))
	{
		/*
		 * Cancelled at its deadline, and yet COMMIT answered: the wait that
		 * was cancelled came after the local commit (a synchronous standby
		 * that never answered), so the commit may not survive a failover.
		 * Nothing is acknowledged; the retry finds the rows duplicate.
		 */
		db_copy_message(err, "cancelled at the batch's deadline while COMMIT waited (for a synchronous standby?)");
		cls = db_commit_unknown(err);
	}
	if (cls != DB_ERR_NONE && strcmp(err->sqlstate, "26000") == 0 && !db->unprepared)
	{
		db_go_unprepared(db, err);
		cls = err->cls;
	}
	if (cls != DB_ERR_NONE && db->framed && !db->ascii_texts &&
		(strcmp(err->sqlstate, "22021") == 0 || strcmp(err->sqlstate, "22P05") == 0))
	{
		db_go_ascii(db, err);
		cls = err->cls;
	}
	if (cls == DB_ERR_NONE &&
		db_rows_read(results[DB_STAGE_EXECUTE], n, db->db_to_msg, db->rows,
					 err->message, sizeof(err->message)) != 0)
	{
		/*
		 * The batch committed, but its result is not the function's: the
		 * extension and the feeder do not match.  Retrying would commit
		 * again and again; nothing is acknowledged, the feeder stops.
		 */
		err->cls = cls = DB_ERR_FATAL;
		err->step = db_stage_names[DB_STAGE_EXECUTE];
		snprintf(err->hint, sizeof(err->hint), "%s",
				 "the received_orders extension in this database does not match this feeder (the batch committed, its result could not be read, nothing was acknowledged): install the feeder's version and ALTER EXTENSION received_orders UPDATE");
	}
	if (cls != DB_ERR_NONE)
	{
		int			refused = with_watermarks && cls != DB_ERR_TRANSIENT &&
			err->step != NULL &&
			strcmp(err->step, db_stage_names[DB_STAGE_WATERMARKS]) == 0;

		for (i = 0; i < DB_NSTAGES; i++)
			PQclear(results[i]);
		if (read_ok)
			db_rollback(db);
		else
			db_disconnect(db);
		if (refused)
		{
			/* observability never stops the batch: again, without it */
			db->watermarks = 0;
			db_watermarks_refused(db->stats, err);
			cls = db_begin_batch(db, b, rows, nrows, err);
			if (cls != DB_ERR_NONE)
				return cls;
			return db_run_batch(db, b, decoded, n, rows, nrows, err);
		}
		return cls;
	}
	if (!read_ok)
		db_disconnect(db);		/* committed, but out of step afterwards */

	PQclear(results[DB_STAGE_BEGIN]);
	PQclear(results[DB_STAGE_SETTINGS]);
	PQclear(results[DB_STAGE_WATERMARKS]);
	PQclear(results[DB_STAGE_COMMIT]);
	db->last = results[DB_STAGE_EXECUTE];
	*rows = db->rows;
	*nrows = n;
	return DB_ERR_NONE;
}

/*
 * db_check_idle
 *		Notice, without a round trip, that the server closed an idle
 *		connection (stopped, crashed, restarted, terminated us): read what
 *		the socket holds (libpq's socket is non-blocking, so this never
 *		waits) and look at the connection state.  Transient with err filled
 *		(and the connection dropped, so the next batch reconnects) when it
 *		is gone or was never made; DB_ERR_NONE otherwise.  A silent network
 *		partition is only seen by the next batch.
 */
db_error_class
db_check_idle(db_conn *db, db_error *err)
{
	memset(err, 0, sizeof(*err));
	if (db->conn != NULL && db_socket_alive(db->conn))
		return DB_ERR_NONE;
	err->step = "check";
	err->cls = DB_ERR_TRANSIENT;
	db_copy_message(err, db->conn ? PQerrorMessage(db->conn) : "no connection");
	db_disconnect(db);
	return err->cls;
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
