/*-------------------------------------------------------------------------
 *
 * db_int.h
 *	  Internals of the PostgreSQL side shared by db.c (connection, batch
 *	  transaction), db_privileges.c (the startup privilege check) and
 *	  db_positions.c (the group's positions): not for the rest of the
 *	  feeder, which sees db_conn as opaque.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_INT_H
#define FEEDER_DB_INT_H

#include <libpq-fe.h>

#include "db_errors.h"

/*
 * db.h's opaque connection, named here without db.h: this header is what
 * db.c shares with the files below it, not db.c's interface.
 */
typedef struct db_conn db_conn;

/* The functions the feeder calls, as GRANT and to_regprocedure spell them. */
#define DB_FUNCTION_SIGNATURE \
	"received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[])"
#define DB_OUTBOX_SIGNATURE \
	"received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[])"
#define DB_FRAMED_SIGNATURE \
	"received_orders.materialize_orders(text, bytea[], text[], integer[], bigint[], bytea[], text, text, text, bytea[], bytea[], bytea[], integer[], text[], uuid[])"
#define DB_POSITIONS_SIGNATURE "received_orders.consumer_positions(text, text)"
#define DB_RESTART_SIGNATURE \
	"received_orders.restart_position(text, text, integer, bigint, bigint)"
#define DB_ADOPT_SIGNATURE \
	"received_orders.adopt_consumer_position(text, text, integer, bigint)"
#define DB_SCHEMA_NAME "received_orders"

/* db.c, for db_positions.c */
extern int	db_ready(const db_conn *db);
extern PGconn *db_pgconn(const db_conn *db);
extern const char *db_group(const db_conn *db);
extern void db_drop_if_lost(db_conn *db);

extern db_error_class db_check_privileges(PGconn *conn, const char *batch_signature,
										  db_error *err);

#endif							/* FEEDER_DB_INT_H */
