/*-------------------------------------------------------------------------
 *
 * db_connect.c
 *	  A lane's database session: made, checked, cancelled and closed.
 *
 * Each new connection is checked first (db_privileges.c): schema, USAGE,
 * function and EXECUTE, so that a misconfigured feeder stops at once.
 * Then the timeouts each batch sets are chosen and the batch statement of
 * the handle's form (db_statement.c) is prepared; behind a pooler in
 * transaction mode another feeder may have prepared it on the same
 * server session already (42P05), which is the same statement.  A
 * connection the server closed is noticed without a round trip, before a
 * batch (db_drop_if_lost) and while idle (db_check_idle); a batch past its
 * deadline is cancelled from the main thread (db_cancel).
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "db_connect.h"
#include "db_int.h"
#include "db_watermarks.h"
#include "feeder.h"
#include "log.h"

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
