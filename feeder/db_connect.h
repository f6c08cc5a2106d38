/*-------------------------------------------------------------------------
 *
 * db_connect.h
 *	  A lane's database session made, checked, cancelled and closed
 *	  (db_connect.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_CONNECT_H
#define FEEDER_DB_CONNECT_H

#include "db_errors.h"

/* the handle (db.h); a repeated typedef is C11 */
typedef struct db_conn db_conn;

extern int	db_connected(const db_conn *db);
extern db_error_class db_connect(db_conn *db, db_error *err);
extern int	db_cancel(db_conn *db, char *errbuf, int errbufsize);
extern db_error_class db_check_idle(db_conn *db, db_error *err);
extern void db_disconnect(db_conn *db);

#endif							/* FEEDER_DB_CONNECT_H */
