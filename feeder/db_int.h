/*-------------------------------------------------------------------------
 *
 * db_int.h
 *	  Internals of the PostgreSQL side shared by its rooms: the session
 *	  handle (db.c), the session made (db_connect.c), the batch statement
 *	  (db_statement.c), the batch transaction (db_batch.c), and the files
 *	  that use the session outside the batches: db_privileges.c (the
 *	  startup privilege check) and db_positions.c (the group's positions).
 *	  Not for the rest of the feeder, which sees db_conn as opaque.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_INT_H
#define FEEDER_DB_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "batch.h"
#include "db_errors.h"
#include "db_rows.h"
#include "db_watermarks.h"
#include "pgarray.h"
#include "stats.h"

/*
 * db.h's opaque connection, named here without db.h: this header is what
 * the rooms of db.h share with each other and with the files below them,
 * not db.h's interface.
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

/*
 * The arrays of the batch statement (db_statement.c): the form with a
 * consumer group sends five, the outbox form two more; the Schema
 * Registry form has the most parameters.  The handle keeps the encoded
 * arrays, db_batch.c passes them.
 */
#define DB_NARRAYS 5
#define DB_OUTBOX_NARRAYS (DB_NARRAYS + 2)
#define DB_FRAMED_NPARAMS 15

/* A lane's session: db.h's db_conn, whose fields its rooms share. */
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

/* db.c, for db_positions.c */
extern int	db_ready(const db_conn *db);
extern PGconn *db_pgconn(const db_conn *db);
extern const char *db_group(const db_conn *db);

/* db_connect.c, for db_batch.c and db_positions.c */
extern void db_drop_if_lost(db_conn *db);

/* db_statement.c, for db_connect.c and db_batch.c */
extern const char *db_form_sql(const db_conn *db);
extern const Oid *db_form_types(const db_conn *db);
extern int	db_form_nparams(const db_conn *db);
extern const char *db_form_signature(const db_conn *db);
extern void db_statement_name(db_conn *db);
extern int	db_reserve(db_conn *db, int n);
extern int	db_build_params(db_conn *db, const batch *b, int n);

/* db_privileges.c, for db_connect.c */
extern db_error_class db_check_privileges(PGconn *conn, const char *batch_signature,
										  db_error *err);

#endif							/* FEEDER_DB_INT_H */
