/*-------------------------------------------------------------------------
 *
 * db_privileges.c
 *	  The privilege check run on every new database connection: the
 *	  extension's schema exists and is usable, and each function the feeder
 *	  calls (materialize_orders with a consumer group, or its outbox form
 *	  with --envelope or --event-type; consumer_positions,
 *	  restart_position; for --adopt-kafka-offsets consumer_positions and
 *	  adopt_consumer_position instead) exists with the feeder's signature
 *	  and may be executed.
 *
 * Without it, a missing EXECUTE privilege shows only when the first batch
 * runs, so a feeder started on an empty topic would look healthy for as
 * long as nothing is produced.  One query answers the four questions in
 * order, each asked only when the previous one was answered yes (a CASE
 * evaluates only the branch it needs): to_regprocedure raises an error
 * instead of answering when the schema is not usable, and
 * has_function_privilege needs the function to exist.  A "no" is a
 * configuration error (exit 3) whose hint is the GRANT to run, naming the
 * connected role.  The classification of batch errors (42501, 42883,
 * 3F000) stays the second line of defence: privileges may be revoked
 * while the feeder runs.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "db_int.h"

#define DB_PRIV_SQL \
	"SELECT pg_catalog.quote_ident(current_user), n.oid IS NOT NULL, u.usage, " \
	"p.oid IS NOT NULL, " \
	"CASE WHEN p.oid IS NOT NULL " \
	"THEN pg_catalog.has_function_privilege(p.oid, 'EXECUTE') END " \
	"FROM (SELECT pg_catalog.to_regnamespace('" DB_SCHEMA_NAME "') AS oid) n " \
	"CROSS JOIN LATERAL (SELECT CASE WHEN n.oid IS NOT NULL " \
	"THEN pg_catalog.has_schema_privilege(n.oid, 'USAGE') END AS usage) u " \
	"CROSS JOIN LATERAL (SELECT CASE WHEN u.usage " \
	"THEN pg_catalog.to_regprocedure($1) END AS oid) p"

/*
 * db_privilege_fatal
 *		Fill err with a configuration error found by the check; an empty
 *		hint leaves it to db_fatal_hint().
 */
static db_error_class
db_privilege_fatal(db_error *err, const char *sqlstate, const char *message,
				   const char *hint)
{
	err->cls = DB_ERR_FATAL;
	err->step = "privileges";
	snprintf(err->sqlstate, sizeof(err->sqlstate), "%s", sqlstate);
	db_copy_message(err, message);
	snprintf(err->hint, sizeof(err->hint), "%s", hint);
	return err->cls;
}

/*
 * db_is_true
 *		A boolean column of the check's single row, NULL counting as false.
 */
static int
db_is_true(const PGresult *res, int col)
{
	return !PQgetisnull(res, 0, col) && strcmp(PQgetvalue(res, 0, col), "t") == 0;
}

/*
 * db_check_function
 *		The four questions for one function signature; grants is the list
 *		of signatures a hint's GRANT names, since the extension version
 *		that has them all.
 */
static db_error_class
db_check_function(PGconn *conn, const char *signature, const char *grants,
				  const char *since, db_error *err)
{
	const char *params[1] = {signature};
	PGresult   *res = PQexecParams(conn, DB_PRIV_SQL, 1, NULL, params, NULL, NULL, 0);
	char		msg[512];
	char		hint[1024];
	const char *role;
	db_error_class cls = DB_ERR_NONE;

	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1 ||
		PQnfields(res) != 5)
	{
		cls = db_fill_error(conn, res, "privileges", err);
		PQclear(res);
		return cls;
	}
	role = PQgetvalue(res, 0, 0);
	if (!db_is_true(res, 1))
	{
		snprintf(msg, sizeof(msg), "schema \"%s\" does not exist in database \"%s\"",
				 DB_SCHEMA_NAME, PQdb(conn));
		cls = db_privilege_fatal(err, "3F000", msg, "");
	}
	else if (!db_is_true(res, 2))
	{
		snprintf(msg, sizeof(msg), "permission denied for schema %s: role %s lacks USAGE",
				 DB_SCHEMA_NAME, role);
		snprintf(hint, sizeof(hint),
				 "as a superuser: SELECT %s.grant_feeder('%s') (extension 1.3 or later), or GRANT USAGE ON SCHEMA %s TO %s; and, unless granted already, GRANT EXECUTE ON FUNCTION %s TO %s",
				 DB_SCHEMA_NAME, role, DB_SCHEMA_NAME, role, grants, role);
		cls = db_privilege_fatal(err, "42501", msg, hint);
	}
	else if (!db_is_true(res, 3))
	{
		snprintf(msg, sizeof(msg), "function %s does not exist", signature);
		snprintf(hint, sizeof(hint),
				 "this feeder needs received_orders %s or later: as a superuser, ALTER EXTENSION received_orders UPDATE (or CREATE EXTENSION received_orders)",
				 since);
		cls = db_privilege_fatal(err, "42883", msg, hint);
	}
	else if (!db_is_true(res, 4))
	{
		snprintf(msg, sizeof(msg), "permission denied for function %s: role %s lacks EXECUTE",
				 signature, role);
		snprintf(hint, sizeof(hint),
				 "as a superuser: SELECT %s.grant_feeder('%s') (extension 1.3 or later), or GRANT EXECUTE ON FUNCTION %s TO %s",
				 DB_SCHEMA_NAME, role, grants, role);
		cls = db_privilege_fatal(err, "42501", msg, hint);
	}
	PQclear(res);
	return cls;
}

/*
 * db_check_privileges
 *		Run the check for every function the feeder calls (batch_signature
 *		NULL: those --adopt-kafka-offsets calls), on a fresh connection.
 *		DB_ERR_NONE when the role has what it needs; DB_ERR_FATAL with err
 *		saying what is missing and the GRANT (or ALTER EXTENSION) that fixes
 *		it; the class of the query's own failure otherwise (a connection
 *		lost meanwhile is transient).
 */
db_error_class
db_check_privileges(PGconn *conn, const char *batch_signature, db_error *err)
{
	const char *feeder[] = {
		batch_signature, DB_POSITIONS_SIGNATURE, DB_RESTART_SIGNATURE
	};
	const char *adopt[] = {DB_POSITIONS_SIGNATURE, DB_ADOPT_SIGNATURE};
	const char **signatures = batch_signature ? feeder : adopt;
	size_t		n = batch_signature ? sizeof(feeder) / sizeof(feeder[0]) :
		sizeof(adopt) / sizeof(adopt[0]);
	char		grants[512] = "";
	size_t		off = 0,
				i;

	for (i = 0; i < n && off < sizeof(grants); i++)
		off += (size_t) snprintf(grants + off, sizeof(grants) - off, "%s%s",
								 i ? ", " : "", signatures[i]);
	for (i = 0; i < n; i++)
	{
		db_error_class cls = db_check_function(conn, signatures[i], grants,
											   "1.2",
											   err);

		if (cls != DB_ERR_NONE)
			return cls;
	}
	return DB_ERR_NONE;
}
