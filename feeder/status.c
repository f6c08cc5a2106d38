/*-------------------------------------------------------------------------
 *
 * status.c
 *	  The feeder reports itself to the database: one row per member in
 *	  received_orders_feeders through received_orders.report_feeder(), read
 *	  by the views feeders and consumer_lag.
 *
 * The reporter has its own thread and its own database connection, so a
 * report never waits for a batch, never holds one up and never runs in a
 * batch's transaction.  The main thread hands it a snapshot (status_update,
 * once a second from the loop's metrics tick): the state as /healthz words
 * it, the assigned partitions and their high watermarks as librdkafka
 * cached them.  The reporter sends it at start, on every change of state
 * or of partitions, every --status-interval seconds, and once more as
 * "stopped" at an orderly exit.  A report that fails (the database down,
 * a missing grant, an extension without report_feeder) is logged and
 * counted, nothing more: the feeder's work does not depend on it.
 *
 * The member id is the feeder's own (host:pid:start time), stable for its
 * life; Kafka's member id changes at every rejoin.
 *
 * The same session moves the group's positions past the records that hold
 * no event (transaction markers, aborted messages), which the consumer
 * acknowledged in Kafka (kafka_ack_positions): the main thread hands the
 * moves over (status_advance), they wait merged per partition (advances.c)
 * and the reporter, woken, sends them after its report in a transaction of
 * their own (received_orders.advance_positions, compare and set: a
 * position a batch moved meanwhile stays).  Without them consumer_lag
 * would read 1 for every partition whose last record is a marker.  Sent
 * only when the role may execute the function (checked once per
 * connection; a missing grant or an extension older than 1.3 is logged
 * once and the moves are dropped); a failed send keeps them for the next
 * report.  Batches never depend on it.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "advances.h"
#include "feeder.h"
#include "log.h"
#include "pg_may_execute.h"
#include "pgarray.h"
#include "status.h"
#include "utf8.h"

/* How long the exit waits for the last report ("stopped"). */
#define STATUS_STOP_WAIT_S 3

/* A failing report is logged again at most this often (same SQLSTATE). */
#define STATUS_RELOG_S 60

/*
 * Each report is a transaction whose statements are bounded, so that a
 * report cannot hang the reporter; SET LOCAL, so that a pooler in
 * transaction mode keeps nothing of it on the server session it hands to
 * its next client (a session-wide SET would stay there).
 */
#define STATUS_BEGIN_SQL \
	"BEGIN; SET LOCAL statement_timeout = '10s'; SET LOCAL lock_timeout = '5s'"

#define STATUS_SQL \
	"SELECT received_orders.report_feeder($1, $2, $3, $4::integer, $5," \
	" pg_catalog.to_timestamp($6::double precision), $7, $8::text[], $9::integer[]," \
	" $10::bigint[], $11, pg_catalog.to_timestamp($12::double precision), $13::interval)"

/* The positions' advances past markers, and whether the role may. */
#define STATUS_ADVANCE_SIGNATURE \
	"received_orders.advance_positions(text,text[],integer[],bigint[],bigint[])"
#define STATUS_ADVANCE_SQL \
	"SELECT received_orders.advance_positions($1, $2, $3, $4, $5)"

/* What one report sends (owned copies). */
typedef struct status_snapshot
{
	char		state[32];
	char	   *topics;			/* text[] literals */
	char	   *partitions;
	char	   *watermarks;
	char		last_error[LOG_VALUE_MAX];
	time_t		last_error_at;	/* 0: none */
} status_snapshot;

static struct
{
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t	thread;
	int			running;
	int			stop;			/* status_stop: report "stopped" and end */
	int			dirty;			/* a change to report now */
	status_snapshot snap;		/* guarded by lock */
	advance_list advances;		/* waiting to be sent; guarded by lock */
	uint64_t	failures;		/* guarded by lock */
	/* set before the thread starts, then read only (copies: the thread may
	 * outlive the configuration, see status_stop) */
	char	   *dsn;
	char	   *group;
	int			interval_s;
	int			done;			/* the thread ended (guarded by lock) */
	char		host[256];
	char		member_id[320];
	char		pid[16];
	char		started_at[32];
	char		interval[32];
	/* the reporter thread's own */
	PGconn	   *conn;
	uint64_t	session;		/* connections made so far */
	uint64_t	advance_session;	/* the one advance_allowed was checked on */
	int			advance_allowed;
	int			advance_failing;	/* the last send of advances failed */
	char		fail_sqlstate[6];
	time_t		fail_logged_at;
	int			failing;
}			status = {
	.lock = PTHREAD_MUTEX_INITIALIZER
};

/*
 * status_state_of
 *		The state a member reports, from /healthz's verdict: "running" when
 *		healthy, else the reason's kind (the states the table allows).
 */
const char *
status_state_of(int healthy, const char *reason)
{
	if (healthy)
		return "running";
	if (strncmp(reason, "starting", 8) == 0)
		return "starting";
	if (strncmp(reason, "shutting down", 13) == 0)
		return "stopping";
	if (strncmp(reason, "database", 8) == 0)
		return "paused: database";
	if (strncmp(reason, "schema registry", 15) == 0)
		return "paused: registry";
	if (strncmp(reason, "kafka", 5) == 0)
		return "paused: kafka";
	return "stalled";			/* stalled, or the loop stuck */
}

/*
 * status_array_append
 *		Append one element to a text[] literal under construction in buf (a
 *		quoted string when quote, else the bare text).  Returns -1 when buf
 *		is full.
 */
static int
status_array_append(char *buf, size_t len, size_t *used, const char *elem, int quote)
{
	size_t		u = *used;

	if (u + 2 >= len)
		return -1;
	if (u > 1)					/* after the opening brace: a separator */
		buf[u++] = ',';
	if (quote && u < len)
		buf[u++] = '"';
	for (; *elem && u + 2 < len; elem++)
	{
		if (quote && (*elem == '"' || *elem == '\\'))
			buf[u++] = '\\';
		buf[u++] = *elem;
	}
	if (*elem || u + 2 >= len)
		return -1;
	if (quote)
		buf[u++] = '"';
	buf[u] = '\0';
	*used = u;
	return 0;
}

/*
 * status_arrays
 *		The text[] literals of the partitions' topics, numbers and high
 *		watermarks (NULL elements where unknown); malloc'ed, NULL on out of
 *		memory.
 */
static int
status_arrays(const kafka_partition_lag *parts, int n, char **topics,
			  char **partitions, char **watermarks)
{
	size_t		tlen = 3,
				plen = 3 + (size_t) n * 12,
				wlen = 3 + (size_t) n * 22,
				tu = 1,
				pu = 1,
				wu = 1;
	int			i;

	for (i = 0; i < n; i++)
		tlen += 4 + 2 * strlen(parts[i].topic);
	*topics = malloc(tlen);
	*partitions = malloc(plen);
	*watermarks = malloc(wlen);
	if (*topics == NULL || *partitions == NULL || *watermarks == NULL)
		goto fail;
	strcpy(*topics, "{");
	strcpy(*partitions, "{");
	strcpy(*watermarks, "{");
	for (i = 0; i < n; i++)
	{
		char		num[24];

		snprintf(num, sizeof(num), "%d", (int) parts[i].partition);
		if (status_array_append(*topics, tlen, &tu, parts[i].topic, 1) != 0 ||
			status_array_append(*partitions, plen, &pu, num, 0) != 0)
			goto fail;
		if (parts[i].high_watermark >= 0)
			snprintf(num, sizeof(num), "%lld", (long long) parts[i].high_watermark);
		else
			snprintf(num, sizeof(num), "NULL");
		if (status_array_append(*watermarks, wlen, &wu, num, 0) != 0)
			goto fail;
	}
	strcpy(*topics + tu, "}");
	strcpy(*partitions + pu, "}");
	strcpy(*watermarks + wu, "}");
	return 0;
fail:
	free(*topics);
	free(*partitions);
	free(*watermarks);
	*topics = *partitions = *watermarks = NULL;
	return -1;
}

/*
 * status_same
 *		Whether two strings (either may be NULL) are equal.
 */
static int
status_same(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/*
 * status_update
 *		Main thread: the state /healthz words (healthy, reason) and the
 *		assigned partitions with their high watermarks.  A change of state
 *		or of partitions wakes the reporter; an unhealthy reason other than
 *		starting or stopping becomes the last error, with its time.  Never
 *		waits for the database.
 */
void
status_update(int healthy, const char *reason, const kafka_partition_lag *parts, int n)
{
	const char *state = status_state_of(healthy, reason);
	char	   *topics,
			   *partitions,
			   *watermarks;

	if (!status.running || status_arrays(parts, n, &topics, &partitions, &watermarks) != 0)
		return;
	pthread_mutex_lock(&status.lock);
	if (strcmp(status.snap.state, state) != 0 ||
		!status_same(status.snap.topics, topics) ||
		!status_same(status.snap.partitions, partitions))
	{
		status.dirty = 1;
		pthread_cond_signal(&status.cond);
	}
	snprintf(status.snap.state, sizeof(status.snap.state), "%s", state);
	if (!healthy && strcmp(state, "starting") != 0 && strcmp(state, "stopping") != 0 &&
		strcmp(status.snap.last_error, reason) != 0)
	{
		utf8_copy(status.snap.last_error, sizeof(status.snap.last_error), reason);
		status.snap.last_error_at = time(NULL);
	}
	free(status.snap.topics);
	free(status.snap.partitions);
	free(status.snap.watermarks);
	status.snap.topics = topics;
	status.snap.partitions = partitions;
	status.snap.watermarks = watermarks;
	pthread_mutex_unlock(&status.lock);
}

/*
 * status_connect
 *		The reporter's own connection, as the batches' (the DSN, libpq's
 *		defaults, connect_timeout 10 s unless PGCONNECT_TIMEOUT says).  NULL
 *		with the error in err when it fails.
 */
static PGconn *
status_connect(char *err, size_t errlen)
{
	const char *keywords[5];
	const char *values[5];
	int			n = 0;
	PGconn	   *conn;

	keywords[n] = "fallback_application_name";
	values[n++] = FEEDER_NAME " status";
	if (getenv("PGCONNECT_TIMEOUT") == NULL)
	{
		keywords[n] = "connect_timeout";
		values[n++] = "10";
	}
	if (status.dsn[0] != '\0')
	{
		keywords[n] = "dbname";
		values[n++] = status.dsn;
	}
	/* the texts the report sends are UTF-8, whatever the DSN says */
	keywords[n] = "client_encoding";
	values[n++] = "UTF8";
	keywords[n] = NULL;
	values[n] = NULL;
	conn = PQconnectdbParams(keywords, values, 1);
	if (conn == NULL || PQstatus(conn) != CONNECTION_OK)
	{
		snprintf(err, errlen, "%s", conn ? PQerrorMessage(conn) : "out of memory");
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

/*
 * status_failed
 *		Count a failed report and log it: the first of a series, a new
 *		SQLSTATE, or at most every STATUS_RELOG_S seconds.
 */
static void
status_failed(const char *sqlstate, const char *error)
{
	log_line	line;
	uint64_t	failures;
	time_t		now = time(NULL);

	pthread_mutex_lock(&status.lock);
	failures = ++status.failures;
	pthread_mutex_unlock(&status.lock);
	if (status.failing && strcmp(status.fail_sqlstate, sqlstate) == 0 &&
		now - status.fail_logged_at < STATUS_RELOG_S)
		return;
	status.failing = 1;
	snprintf(status.fail_sqlstate, sizeof(status.fail_sqlstate), "%s", sqlstate);
	status.fail_logged_at = now;
	log_begin(&line, LOG_WARNING, "status_report_failed");
	if (sqlstate[0])
		log_kv_str(&line, "sqlstate", sqlstate);
	log_kv_str(&line, "error", error);
	log_kv_uint(&line, "failures", failures);
	log_kv_str(&line, "action", "batches go on; the member's row in received_orders.feeders is not updated");
	log_end(&line);
}

/*
 * status_result_ok
 *		Whether res is what a step of the report's transaction should
 *		return; if not, the failure is counted and logged, res freed, the
 *		transaction rolled back, and a lost connection dropped (the next
 *		report reconnects).
 */
static int
status_result_ok(PGresult *res, ExecStatusType want)
{
	const char *sqlstate;

	if (PQresultStatus(res) == want)
		return 1;
	sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	status_failed(sqlstate ? sqlstate : "", PQerrorMessage(status.conn));
	PQclear(res);
	if (PQstatus(status.conn) != CONNECTION_OK)
	{
		PQfinish(status.conn);
		status.conn = NULL;
	}
	else if (PQtransactionStatus(status.conn) != PQTRANS_IDLE)
		PQclear(PQexec(status.conn, "ROLLBACK"));
	return 0;
}

/*
 * status_report
 *		Send one snapshot (reporter thread) in a transaction of its own;
 *		reconnect first when needed.
 */
static void
status_report(const status_snapshot *snap)
{
	const char *params[13];
	char		err[LOG_VALUE_MAX];
	char		error_at[32];
	char		last_error[LOG_VALUE_MAX];
	const char *encoding;
	PGresult   *res;
	PGresult   *commit;

	if (status.conn != NULL && PQstatus(status.conn) != CONNECTION_OK)
	{
		PQfinish(status.conn);
		status.conn = NULL;
	}
	if (status.conn == NULL)
	{
		if ((status.conn = status_connect(err, sizeof(err))) == NULL)
		{
			status_failed("", err);
			return;
		}
		status.session++;
	}
	snprintf(error_at, sizeof(error_at), "%lld", (long long) snap->last_error_at);
	params[0] = status.group;
	params[1] = status.member_id;
	params[2] = status.host;
	params[3] = status.pid;
	params[4] = FEEDER_VERSION;
	params[5] = status.started_at;
	params[6] = snap->state;
	params[7] = snap->topics ? snap->topics : "{}";
	params[8] = snap->partitions ? snap->partitions : "{}";
	params[9] = snap->watermarks ? snap->watermarks : "{}";
	snprintf(last_error, sizeof(last_error), "%s", snap->last_error);
	encoding = PQparameterStatus(status.conn, "server_encoding");
	if (encoding != NULL && strcmp(encoding, "UTF8") != 0 &&
		strcmp(encoding, "SQL_ASCII") != 0)
		utf8_to_ascii(last_error);	/* 22P05 otherwise */
	params[10] = last_error[0] ? last_error : NULL;
	params[11] = snap->last_error_at ? error_at : NULL;
	params[12] = status.interval;
	res = PQexec(status.conn, STATUS_BEGIN_SQL);
	if (!status_result_ok(res, PGRES_COMMAND_OK))
		return;
	PQclear(res);
	res = PQexecParams(status.conn, STATUS_SQL, 13, NULL, params, NULL, NULL, 0);
	if (!status_result_ok(res, PGRES_TUPLES_OK))
		return;
	commit = PQexec(status.conn, "COMMIT");
	if (!status_result_ok(commit, PGRES_COMMAND_OK))
	{
		PQclear(res);
		return;
	}
	PQclear(commit);
	if (status.failing)
	{
		log_line	line;

		log_begin(&line, LOG_INFO, "status_report_recovered");
		log_kv_str(&line, "member", status.member_id);
		log_end(&line);
		status.failing = 0;
	}
	if (PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "0") != 0)
	{
		log_line	line;

		log_begin(&line, LOG_INFO, "status_members_removed");
		log_kv_str(&line, "group", status.group);
		log_kv_str(&line, "removed", PQgetvalue(res, 0, 0));
		log_kv_str(&line, "reason", "not seen for 7 days");
		log_end(&line);
	}
	PQclear(res);
}

/*
 * status_advance_allowed
 *		Whether the role of the reporter's session may move the group's
 *		positions past markers (advance_positions): 1 or 0, logged once per
 *		process when it may not; -1 when the question failed (asked again
 *		at the next send).
 */
static int
status_advance_allowed(void)
{
	static int	logged;
	int			allowed = pg_may_execute(status.conn, STATUS_ADVANCE_SIGNATURE);

	if (allowed == 0 && !logged)
	{
		log_line	line;

		logged = 1;
		log_begin(&line, LOG_WARNING, "positions_advance_off");
		log_kv_str(&line, "function", STATUS_ADVANCE_SIGNATURE);
		log_kv_str(&line, "reason", "the role may not execute it (or the extension is older than 1.3): the database's positions stay before the transaction markers, and consumer_lag reads 1 for a partition whose last record is one");
		log_kv_str(&line, "hint", "SELECT received_orders.grant_feeder('ROLE'); grants it");
		log_end(&line);
	}
	return allowed;
}

/*
 * status_advance_failed
 *		A send of advances failed (reporter thread): logged, the first of a
 *		series only; a refusal (a grant revoked, the function dropped) stops
 *		the sends until the next connection, which checks again; a lost
 *		connection is dropped.  Returns whether the advances are to be kept
 *		for the next report.
 */
static int
status_advance_failed(PGresult *res)
{
	const char *sqlstate = PQresultErrorField(res, PG_DIAG_SQLSTATE);
	int			refused = sqlstate != NULL &&
		(strcmp(sqlstate, "42501") == 0 || strcmp(sqlstate, "42883") == 0);

	if (!status.advance_failing)
	{
		log_line	line;

		log_begin(&line, LOG_WARNING, "positions_advance_failed");
		if (sqlstate)
			log_kv_str(&line, "sqlstate", sqlstate);
		log_kv_str(&line, "error", PQerrorMessage(status.conn));
		log_kv_str(&line, "action", refused ?
				   "not sent again until the next database session; batches go on" :
				   "sent again with the next report; batches go on");
		log_end(&line);
	}
	status.advance_failing = 1;
	PQclear(res);
	if (refused)
		status.advance_allowed = 0;
	if (PQstatus(status.conn) != CONNECTION_OK)
	{
		PQfinish(status.conn);
		status.conn = NULL;
	}
	else if (PQtransactionStatus(status.conn) != PQTRANS_IDLE)
		PQclear(PQexec(status.conn, "ROLLBACK"));
	return !refused;
}

/*
 * status_send_advances
 *		Reporter thread, after a report: move the group's positions past
 *		the markers taken (see the file header), in a transaction of its
 *		own.  taken is emptied: sent, dropped (the role may not), or put
 *		back to wait for the next report (no connection, a failure).
 */
static void
status_send_advances(advance_list *taken)
{
	static const Oid types[5] = {PGARRAY_TEXTOID, PGARRAY_TEXTARRAYOID,
	PGARRAY_INT4ARRAYOID, PGARRAY_INT8ARRAYOID, PGARRAY_INT8ARRAYOID};
	static const int formats[5] = {0, 1, 1, 1, 1};
	const char *values[5];
	int			lengths[5];
	advance_arrays arrays;
	PGresult   *res;
	int			keep = 1;

	if (taken->n == 0)
		return;
	if (status.conn == NULL)
		goto put_back;
	if (status.advance_session != status.session)
	{
		int			allowed = status_advance_allowed();

		if (allowed < 0)
			goto put_back;
		status.advance_allowed = allowed;
		status.advance_session = status.session;
	}
	if (!status.advance_allowed || advances_arrays(taken, &arrays) != 0)
	{
		advances_free(taken);
		return;
	}
	values[0] = status.group;
	lengths[0] = 0;
	values[1] = arrays.topics.data;
	lengths[1] = (int) arrays.topics.len;
	values[2] = arrays.partitions.data;
	lengths[2] = (int) arrays.partitions.len;
	values[3] = arrays.froms.data;
	lengths[3] = (int) arrays.froms.len;
	values[4] = arrays.tos.data;
	lengths[4] = (int) arrays.tos.len;
	res = PQexec(status.conn, STATUS_BEGIN_SQL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		goto failed;
	PQclear(res);
	res = PQexecParams(status.conn, STATUS_ADVANCE_SQL, 5, types, values, lengths,
					   formats, 0);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		goto failed;
	PQclear(res);
	res = PQexec(status.conn, "COMMIT");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		goto failed;
	PQclear(res);
	advance_arrays_free(&arrays);
	advances_free(taken);
	status.advance_failing = 0;
	return;

failed:
	keep = status_advance_failed(res);
	advance_arrays_free(&arrays);
	if (!keep)
	{
		advances_free(taken);
		return;
	}
put_back:
	pthread_mutex_lock(&status.lock);
	advances_merge(&status.advances, taken);
	pthread_mutex_unlock(&status.lock);
}

/*
 * status_take_advances
 *		The advances waiting, moved into out (lock held).
 */
static void
status_take_advances(advance_list *out)
{
	*out = status.advances;
	memset(&status.advances, 0, sizeof(status.advances));
}

/*
 * status_copy
 *		A copy of the current snapshot (lock held); its state replaced when
 *		state is given.
 */
static void
status_copy(status_snapshot *out, const char *state)
{
	*out = status.snap;
	if (state)
		snprintf(out->state, sizeof(out->state), "%s", state);
	out->topics = status.snap.topics ? strdup(status.snap.topics) : NULL;
	out->partitions = status.snap.partitions ? strdup(status.snap.partitions) : NULL;
	out->watermarks = status.snap.watermarks ? strdup(status.snap.watermarks) : NULL;
}

/*
 * status_free
 *		Free a copy made by status_copy.
 */
static void
status_free(status_snapshot *s)
{
	free(s->topics);
	free(s->partitions);
	free(s->watermarks);
}

/*
 * status_thread
 *		The reporter: a report at once, then on every change and every
 *		interval; at status_stop a last one, "stopped".
 */
static void *
status_thread(void *arg)
{
	status_snapshot snap;
	advance_list taken;
	struct timespec due;

	(void) arg;
	pthread_mutex_lock(&status.lock);
	for (;;)
	{
		clock_gettime(CLOCK_MONOTONIC, &due);
		due.tv_sec += status.interval_s;
		while (!status.stop && !status.dirty)
			if (pthread_cond_timedwait(&status.cond, &status.lock, &due) == ETIMEDOUT)
				break;
		if (status.stop)
			break;
		status.dirty = 0;
		status_copy(&snap, NULL);
		status_take_advances(&taken);
		pthread_mutex_unlock(&status.lock);
		status_report(&snap);
		status_free(&snap);
		status_send_advances(&taken);
		pthread_mutex_lock(&status.lock);
	}
	/* a stopped member holds no partition */
	status_copy(&snap, "stopped");
	status_take_advances(&taken);
	pthread_mutex_unlock(&status.lock);
	status_free(&snap);
	snap.topics = snap.partitions = snap.watermarks = NULL;
	status_report(&snap);
	status_send_advances(&taken);
	pthread_mutex_lock(&status.lock);
	advances_free(&status.advances);	/* a failed last send */
	pthread_mutex_unlock(&status.lock);
	PQfinish(status.conn);
	status.conn = NULL;
	pthread_mutex_lock(&status.lock);
	status.done = 1;
	pthread_cond_signal(&status.cond);
	pthread_mutex_unlock(&status.lock);
	return NULL;
}

/*
 * status_start
 *		The member id (host:pid:start time; also with --status-interval 0,
 *		for the batches' high watermarks) and the reporter (not with
 *		--status-interval 0).  Returns 0, or
 *		-1 when its thread could not start (logged; the feeder goes on).
 */
int
status_start(const feeder_config *cfg)
{
	pthread_condattr_t attr;
	time_t		now = time(NULL);

	status.interval_s = cfg->status_interval_s;
	if (gethostname(status.host, sizeof(status.host)) != 0)
		snprintf(status.host, sizeof(status.host), "unknown");
	status.host[sizeof(status.host) - 1] = '\0';
	snprintf(status.pid, sizeof(status.pid), "%d", (int) getpid());
	snprintf(status.started_at, sizeof(status.started_at), "%lld", (long long) now);
	snprintf(status.member_id, sizeof(status.member_id), "%s:%d:%lld", status.host,
			 (int) getpid(), (long long) now);
	if (cfg->status_interval_s <= 0)
		return 0;
	status.dsn = strdup(cfg->dsn);
	status.group = strdup(cfg->group);
	if (status.dsn == NULL || status.group == NULL)
	{
		log_simple(LOG_WARNING, "status_thread_failed",
				   "out of memory; the feeder runs without reporting itself");
		return -1;
	}
	snprintf(status.interval, sizeof(status.interval), "%d seconds", cfg->status_interval_s);
	snprintf(status.snap.state, sizeof(status.snap.state), "starting");
	status.dirty = 1;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&status.cond, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&status.thread, NULL, status_thread, NULL) != 0)
	{
		log_simple(LOG_WARNING, "status_thread_failed",
				   "could not start the status reporter; the feeder runs without reporting itself");
		return -1;
	}
	status.running = 1;
	{
		log_line	line;

		log_begin(&line, LOG_INFO, "status_reporting");
		log_kv_str(&line, "member", status.member_id);
		log_kv_int(&line, "interval_s", cfg->status_interval_s);
		log_end(&line);
	}
	return 0;
}

/*
 * status_advance
 *		Main thread: the moves kafka_ack_positions made past markers, for
 *		the database's positions to follow (see the file header); moved is
 *		emptied into the advances waiting, and the reporter woken to send
 *		them.  Dropped when the reporter does not run (--status-interval
 *		0).  Never waits for the database.
 */
void
status_advance(advance_list *moved)
{
	if (moved->n == 0 || !status.running)
	{
		advances_free(moved);
		return;
	}
	pthread_mutex_lock(&status.lock);
	advances_merge(&status.advances, moved);
	status.dirty = 1;
	pthread_cond_signal(&status.cond);
	pthread_mutex_unlock(&status.lock);
}

/*
 * status_stop
 *		The orderly exit: the reporter sends "stopped" and ends.  Waits for
 *		that one report at most STATUS_STOP_WAIT_S seconds: a database that
 *		is down must not hold up the exit (the thread is then left to the
 *		process's end; it uses only its own copies).
 */
void
status_stop(int clean)
{
	struct timespec until;
	int			done;

	(void) clean;
	if (!status.running)
		return;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += STATUS_STOP_WAIT_S;
	pthread_mutex_lock(&status.lock);
	status.stop = 1;
	pthread_cond_broadcast(&status.cond);
	while (!status.done)
		if (pthread_cond_timedwait(&status.cond, &status.lock, &until) == ETIMEDOUT)
			break;
	done = status.done;
	pthread_mutex_unlock(&status.lock);
	status.running = 0;
	if (!done)
	{
		log_simple(LOG_WARNING, "status_report_abandoned",
				   "the last status report (stopped) did not finish in time; exiting without it");
		pthread_detach(status.thread);
		return;
	}
	pthread_join(status.thread, NULL);
	status_free(&status.snap);
	status.snap.topics = status.snap.partitions = status.snap.watermarks = NULL;
	free(status.dsn);
	free(status.group);
	status.dsn = status.group = NULL;
}

/*
 * status_failures
 *		How many reports failed so far.
 */
uint64_t
status_failures(void)
{
	uint64_t	n;

	pthread_mutex_lock(&status.lock);
	n = status.failures;
	pthread_mutex_unlock(&status.lock);
	return n;
}

/*
 * status_enabled
 *		Whether the reporter runs (main thread).
 */
int
status_enabled(void)
{
	return status.running;
}

/*
 * status_member_id
 *		This feeder's member id (after status_start).
 */
const char *
status_member_id(void)
{
	return status.member_id;
}
