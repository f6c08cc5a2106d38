/*-------------------------------------------------------------------------
 *
 * db_batch.c
 *	  One transaction per batch, in one round trip.
 *
 * A batch is BEGIN; its statement_timeout and lock_timeout (set_config,
 * local to the transaction); EXECUTE of the statement prepared once per
 * connection (db_statement.c); record_high_watermarks of the batch's
 * partitions (when the role may: db_watermarks.c); COMMIT, sent together
 * in libpq's pipeline mode and followed by one sync point, so that a
 * batch costs one round trip instead of three.
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
 * Behind a pooler in transaction mode the prepared statement can vanish
 * (26000): the statement is then sent unprepared with every batch.
 *
 *-------------------------------------------------------------------------
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include <libpq-fe.h>

#include "db_batch.h"
#include "db_connect.h"
#include "db_int.h"
#include "db_rows.h"
#include "db_watermarks.h"
#include "log.h"

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
