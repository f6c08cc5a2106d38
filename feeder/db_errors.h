/*-------------------------------------------------------------------------
 *
 * db_errors.h
 *	  PostgreSQL errors: the db_error a failed step reports, its
 *	  classification into retry / exit / other, and the fatal line.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_ERRORS_H
#define FEEDER_DB_ERRORS_H

#include <libpq-fe.h>

typedef enum db_error_class
{
	DB_ERR_NONE = 0,
	DB_ERR_TRANSIENT,			/* retry the same batch after a backoff */
	DB_ERR_FATAL,				/* configuration or permission: exit 3 */
	DB_ERR_OTHER				/* unexpected: retried too, logged as error */
} db_error_class;

/*
 * Why a failed batch attempt was retried: a bounded set, the label values
 * of the retries_total metric (db_retry_reason_name gives the names).
 */
typedef enum db_retry_reason
{
	DB_RETRY_CONNECTION = 0,	/* no SQLSTATE (connection lost), 08*, 57P05 */
	DB_RETRY_SERIALIZATION,		/* 40001 */
	DB_RETRY_DEADLOCK,			/* 40P01 */
	DB_RETRY_RESOURCES,			/* 53* */
	DB_RETRY_LOCK,				/* 55P03 */
	DB_RETRY_SHUTDOWN,			/* 57P01..57P04 */
	DB_RETRY_COMMIT_UNKNOWN,	/* COMMIT sent, answer lost */
	DB_RETRY_OTHER,				/* everything else */
	DB_RETRY_NREASONS
} db_retry_reason;

/*
 * A failed connection attempt that failed in TLS, by what has to be fixed
 * (db_connect_tls_failure reads it from libpq's message).
 */
typedef enum db_tls_failure
{
	DB_TLS_NONE = 0,
	DB_TLS_SERVER_CERTIFICATE,	/* ours did not verify the server's */
	DB_TLS_HOST_NAME,			/* the server's does not name the host */
	DB_TLS_CLIENT_CERTIFICATE,	/* the server refused ours */
	DB_TLS_FILES,				/* a certificate or key file of the DSN */
	DB_TLS_NOT_SUPPORTED		/* sslmode requires TLS, server has ssl=off */
} db_tls_failure;

/* What a failed step reports (db_fill_error), and what the feeder logs. */
typedef struct db_error
{
	db_error_class cls;
	char		sqlstate[6];	/* "" when none */
	char		message[1024];
	char		hint[1024];		/* what to fix; "" means db_fatal_hint() */
	const char *step;			/* connect, privileges, prepare, begin,
								 * execute, commit, check (db_check_idle),
								 * positions, adopt */
} db_error;

extern db_error_class db_classify_sqlstate(const char *sqlstate);
extern db_retry_reason db_retry_reason_of(const char *sqlstate, const char *step);
extern const char *db_retry_reason_name(db_retry_reason reason);
extern int	db_size_caused(const char *sqlstate);
extern int	db_positions_refused(const char *sqlstate, const char *message);
extern int	db_claim_limit(const char *sqlstate, const char *message);
extern const char *db_claim_limit_hint(void);
extern void db_connect_sqlstate(const char *message, char out[6]);
extern db_tls_failure db_connect_tls_failure(const char *message);
extern const char *db_tls_hint(db_tls_failure failure);
extern db_error_class db_classify_connect(const char *sqlstate, int needs_password,
										  db_tls_failure tls, int first);
extern const char *db_fatal_hint(const char *sqlstate);
extern const char *db_error_class_name(db_error_class cls);
extern void db_copy_message(db_error *err, const char *msg);
extern db_error_class db_fill_error(PGconn *conn, const PGresult *res,
									const char *step, db_error *err);
extern void db_log_fatal(const db_error *err);

#endif							/* FEEDER_DB_ERRORS_H */
