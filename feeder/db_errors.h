/*-------------------------------------------------------------------------
 *
 * db_errors.h
 *	  Classification of PostgreSQL errors into retry / exit / other.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_ERRORS_H
#define FEEDER_DB_ERRORS_H

typedef enum db_error_class
{
	DB_ERR_NONE = 0,
	DB_ERR_TRANSIENT,			/* retry the same batch after a backoff */
	DB_ERR_FATAL,				/* configuration or permission: exit 3 */
	DB_ERR_OTHER				/* unexpected: retried too, logged as error */
} db_error_class;

extern db_error_class db_classify_sqlstate(const char *sqlstate);
extern const char *db_classify_connect_failure(const char *message);
extern const char *db_fatal_hint(const char *sqlstate);
extern const char *db_error_class_name(db_error_class cls);

#endif							/* FEEDER_DB_ERRORS_H */
