/*-------------------------------------------------------------------------
 *
 * pg_may_execute.h
 *	  Whether a session's role may execute a function of the extension
 *	  that only some versions have (pg_may_execute.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_PG_MAY_EXECUTE_H
#define FEEDER_PG_MAY_EXECUTE_H

#include <libpq-fe.h>

extern int	pg_may_execute(PGconn *conn, const char *signature);

#endif							/* FEEDER_PG_MAY_EXECUTE_H */
