/*-------------------------------------------------------------------------
 *
 * pg_may_execute.c
 *	  Whether a session's role may execute a function given by its
 *	  signature: the question the batches ask of record_high_watermarks
 *	  (db_watermarks.c) and the status reporter of advance_positions
 *	  (status.c) on each new session, before they send what an older
 *	  extension or a missing grant would refuse.
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "pg_may_execute.h"

/*
 * A function that does not exist (an older extension) is a "no", like a
 * missing grant; to_regprocedure answers NULL for it instead of raising.
 */
#define PG_MAY_EXECUTE_SQL \
	"SELECT pg_catalog.has_function_privilege(p, 'EXECUTE') " \
	"FROM pg_catalog.to_regprocedure($1) AS p WHERE p IS NOT NULL"

/*
 * pg_may_execute
 *		1 when the role of conn's session may execute the function of
 *		signature ("schema.name(type,...)"), 0 when it may not or the
 *		function does not exist, -1 when the question itself failed (the
 *		connection, say).
 */
int
pg_may_execute(PGconn *conn, const char *signature)
{
	const char *params[1] = {signature};
	PGresult   *res = PQexecParams(conn, PG_MAY_EXECUTE_SQL, 1, NULL, params, NULL, NULL, 0);
	int			may;

	if (PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		PQclear(res);
		return -1;
	}
	may = PQntuples(res) == 1 && strcmp(PQgetvalue(res, 0, 0), "t") == 0;
	PQclear(res);
	return may;
}
