/*-------------------------------------------------------------------------
 *
 * db_errors.c
 *	  PostgreSQL errors: a failed step's db_error filled from libpq
 *	  (db_fill_error), its classification into retry / exit / other, and
 *	  the line that explains a fatal one before exit 3 (db_log_fatal).
 *
 * Below db_connect.c, db_batch.c and db_privileges.c, which fill their
 * errors here; the loop, delivery, positions and adoption log a fatal one
 * here too.
 *
 * Transient (the same batch is retried, reconnecting as needed): no
 * SQLSTATE at all (the connection broke, or the result of COMMIT is
 * unknown), class 08 (connection exception), 40001 serialization failure,
 * 40P01 deadlock, class 53 (insufficient resources), 55P03 lock not
 * available, 57014 query canceled, 57P01..57P05 (shutdown, crash, cannot
 * connect now, database dropped, idle session timeout), 25006 read-only
 * transaction (we reached a standby or a fenced primary: deliver.c drops
 * the connection at once, so the retry reconnects and, with a multi-host
 * DSN, may reach the primary).
 *
 * Fatal, exit 3 with a hint: class 28 (authorization), 3D000 (database
 * does not exist), 3F000 (schema missing: extension not installed), class
 * 42 (42501 insufficient privilege, 42883 function missing or of another
 * signature, and the rest of the class: the extension does not match),
 * 09000 (a trigger or row level security suppresses the inserts: every
 * retry would fail the same way).  Reading the positions, 55000 too: the
 * consumer group's positions were taken on another Kafka cluster
 * (db_positions_refused), and 54000 when it is the extension's refusal to
 * let the role claim one more group (db_claim_limit: the SQLSTATE and its
 * message; any other 54000 stays what it is).
 *
 * Anything else is "other": the batch function pins on an element only the
 * errors an event's data can cause, so any other error (a dropped index,
 * corruption, a trigger failing every row) fails the whole call; it is
 * logged as an error and retried with the same backoff, never acknowledged,
 * until someone fixes the database.
 *
 * A failed connection attempt has no result to read a SQLSTATE from: the
 * feeder connects with libpq's verbose error messages, which carry the
 * server's SQLSTATE in every language (db_connect_sqlstate), and classifies
 * that with libpq's own state (db_classify_connect).  A connection that
 * failed in TLS (the server's certificate did not verify or does not name
 * the host, the server refused ours, a certificate or key file of the DSN
 * is missing) has no SQLSTATE either: the server never got to speak, and
 * libpq keeps nothing of its TLS state once the attempt failed
 * (PQsslInUse is false again).  db_connect_tls_failure reads those from
 * libpq's message, but only words that never come from the server and are
 * never translated: libpq's own (the feeder never calls setlocale, so its
 * libpq speaks the C locale whatever LANG says) and OpenSSL's reasons.
 *
 * Retried failures are further sorted into a small fixed set of reasons
 * (db_retry_reason) for the retries_total{class=...} metric.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "db_errors.h"
#include "log.h"

/*
 * db_classify_sqlstate
 *		Class of an error from its SQLSTATE; NULL or "" (no SQLSTATE: the
 *		failure happened on the client or the connection) is transient.
 */
db_error_class
db_classify_sqlstate(const char *s)
{
	if (s == NULL || s[0] == '\0')
		return DB_ERR_TRANSIENT;
	if (strlen(s) != 5)
		return DB_ERR_OTHER;

	if (strncmp(s, "08", 2) == 0 ||
		strcmp(s, "40001") == 0 ||
		strcmp(s, "40P01") == 0 ||
		strncmp(s, "53", 2) == 0 ||
		strcmp(s, "55P03") == 0 ||
		strcmp(s, "57014") == 0 ||
		strncmp(s, "57P0", 4) == 0 ||
		strcmp(s, "25006") == 0)
		return DB_ERR_TRANSIENT;

	if (strncmp(s, "28", 2) == 0 ||
		strcmp(s, "3D000") == 0 ||
		strcmp(s, "3F000") == 0 ||
		strncmp(s, "42", 2) == 0 ||
		strcmp(s, "09000") == 0)
		return DB_ERR_FATAL;

	return DB_ERR_OTHER;
}

/*
 * db_claim_limit
 *		Whether an error (its SQLSTATE and primary message) is the
 *		extension's refusal to let the feeder's role claim one more consumer
 *		group: a role claims at most so many by using them (54000 with the
 *		message "role ... cannot claim consumer group ...: it owns N groups
 *		already", groups.c).  Told by both, never by the SQLSTATE alone:
 *		54000 is a program limit, which elsewhere a batch's size can cause
 *		(db_size_caused) and a smaller batch cures.
 */
int
db_claim_limit(const char *sqlstate, const char *message)
{
	size_t		len;
	static const char tail[] = " groups already";

	if (sqlstate == NULL || strcmp(sqlstate, "54000") != 0 || message == NULL)
		return 0;
	len = strlen(message);
	return strncmp(message, "role \"", 6) == 0 &&
		strstr(message, "\" cannot claim consumer group \"") != NULL &&
		len > sizeof(tail) - 1 &&
		strcmp(message + len - (sizeof(tail) - 1), tail) == 0;
}

/*
 * db_claim_limit_hint
 *		What a DBA runs when the feeder's role may claim no more consumer
 *		groups (db_claim_limit): forget the groups no longer used (their
 *		positions, then their owner), or hand this group to the role.
 */
const char *
db_claim_limit_hint(void)
{
	return "the feeder's role owns as many consumer groups as a role may claim by using them (see error); as a superuser, list them (SELECT consumer_group, updated_at FROM received_orders.received_orders_consumer_groups WHERE owner_role = 'ROLE' ORDER BY updated_at), forget each one no longer used (SELECT received_orders.forget_consumer_positions('OLD_GROUP'); SELECT received_orders.set_consumer_group_owner('OLD_GROUP', NULL);), then start the feeder again";
}

/*
 * db_positions_refused
 *		Whether the database refused to give the feeder its group's
 *		positions for good: the group belongs to a role whose privileges the
 *		feeder's role lacks (42501), its positions were taken on another
 *		Kafka cluster (55000, raised only by the positions' check), or the
 *		feeder's role may claim no more groups (db_claim_limit: message is
 *		the error's primary message).  Each is a configuration error: exit
 *		3, nothing read, nothing written.
 */
int
db_positions_refused(const char *sqlstate, const char *message)
{
	return sqlstate != NULL &&
		(strcmp(sqlstate, "42501") == 0 || strcmp(sqlstate, "55000") == 0 ||
		 db_claim_limit(sqlstate, message));
}

/*
 * db_retry_reason_of
 *		Finer reason of a retried failure, for the retries_total metric:
 *		the SQLSTATE's class where it tells something an operator acts on,
 *		"commit_unknown" when the connection broke while COMMIT was in
 *		flight (step "commit" without SQLSTATE), "resources" when the feeder
 *		ran out of memory decoding a value (step "decode"), "other" for the rest
 *		(57014 canceled, 25006 read-only, unexpected errors).
 */
db_retry_reason
db_retry_reason_of(const char *s, const char *step)
{
	if (s == NULL || s[0] == '\0')
	{
		if (step != NULL && strcmp(step, "commit") == 0)
			return DB_RETRY_COMMIT_UNKNOWN;
		if (step != NULL && strcmp(step, "decode") == 0)
			return DB_RETRY_RESOURCES;	/* out of memory decoding a value */
		return DB_RETRY_CONNECTION;
	}
	if (strlen(s) != 5)
		return DB_RETRY_OTHER;
	if (strncmp(s, "08", 2) == 0 || strcmp(s, "57P05") == 0)
		return DB_RETRY_CONNECTION;
	if (strcmp(s, "40001") == 0)
		return DB_RETRY_SERIALIZATION;
	if (strcmp(s, "40P01") == 0)
		return DB_RETRY_DEADLOCK;
	if (strncmp(s, "53", 2) == 0)
		return DB_RETRY_RESOURCES;
	if (strcmp(s, "55P03") == 0)
		return DB_RETRY_LOCK;
	if (strncmp(s, "57P0", 4) == 0)
		return DB_RETRY_SHUTDOWN;
	return DB_RETRY_OTHER;
}

/*
 * db_size_caused
 *		Whether a failed call may have failed because of the batch's size:
 *		the server ran out of memory (53200) or passed one of its program
 *		limits (class 54: a value, an array or the statement too large).
 *		Such a batch of several messages is retried in halves (deliver.c),
 *		since the same batch would fail again.
 */
int
db_size_caused(const char *sqlstate)
{
	if (sqlstate == NULL || strlen(sqlstate) != 5)
		return 0;
	return strcmp(sqlstate, "53200") == 0 || strncmp(sqlstate, "54", 2) == 0;
}

/*
 * db_retry_reason_name
 *		The class label of retries_total.
 */
const char *
db_retry_reason_name(db_retry_reason reason)
{
	static const char *const names[DB_RETRY_NREASONS] = {
		"connection", "serialization", "deadlock", "resources", "lock",
		"shutdown", "commit_unknown", "other"
	};

	if ((int) reason < 0 || reason >= DB_RETRY_NREASONS)
		return "other";
	return names[reason];
}

/*
 * db_connect_sqlstate
 *		The SQLSTATE the server gave for a failed connection attempt, read
 *		from libpq's message in verbose mode ("...failed: FATAL:  28P01:
 *		password authentication failed..."): five digits or capitals after
 *		the severity and its two spaces, whatever the language of the
 *		message.  With several hosts the message has one part per host; the
 *		last SQLSTATE counts.  out is "" when the server said nothing (the
 *		connection was refused, timed out, or failed in libpq).
 */
void
db_connect_sqlstate(const char *message, char out[6])
{
	const char *p;

	out[0] = '\0';
	for (p = message ? strstr(message, ":  ") : NULL; p; p = strstr(p + 1, ":  "))
	{
		const char *c = p + 3;
		int			k;

		for (k = 0; k < 5; k++)
			if (!((c[k] >= '0' && c[k] <= '9') || (c[k] >= 'A' && c[k] <= 'Z')))
				break;
		if (k == 5 && c[5] == ':')
		{
			memcpy(out, c, 5);
			out[5] = '\0';
		}
	}
}

/*
 * db_classify_connect
 *		Class of a failed connection attempt, from the server's SQLSTATE and
 *		libpq's state, never from the words of the server's message:
 *		authorization (class 28, or a password libpq was asked for and did
 *		not have), an unknown database (3D000) or no CONNECT privilege
 *		(42501) are configuration errors at the process's first connection
 *		(exit 3 at once: a typo shows at deployment); after the feeder has once
 *		connected they are retried like other failures, but logged as errors
 *		(DB_ERR_OTHER): a directory (LDAP) blip or a password rotation must
 *		not end a running feeder.  A TLS failure (tls, from
 *		db_connect_tls_failure) is a configuration error the same way: a
 *		wrong sslrootcert or host name, an expired certificate, a client
 *		certificate the server does not trust.  Everything else (refused,
 *		unreachable, starting up, too many clients, timeouts) is transient.
 */
db_error_class
db_classify_connect(const char *sqlstate, int needs_password, db_tls_failure tls,
					int first)
{
	int			config = needs_password || tls != DB_TLS_NONE ||
		(sqlstate != NULL &&
		 (strncmp(sqlstate, "28", 2) == 0 || strcmp(sqlstate, "3D000") == 0 ||
		  strcmp(sqlstate, "42501") == 0));

	if (!config)
		return DB_ERR_TRANSIENT;
	return first ? DB_ERR_FATAL : DB_ERR_OTHER;
}

/*
 * db_connect_tls_failure
 *		Which TLS failure, if any, libpq's message of a failed connection
 *		attempt reports (see the header: libpq's own words in the C locale
 *		and OpenSSL's reasons, never the server's).  With several hosts the
 *		message has one part per host, and a TLS failure of any of them
 *		counts: the DSN's TLS settings are shared by all.  Only failures a
 *		retry cannot cure are named; a TLS session cut short ("SSL SYSCALL
 *		error", "unexpected eof") is DB_TLS_NONE, like a connection lost.
 */
db_tls_failure
db_connect_tls_failure(const char *message)
{
	static const struct
	{
		const char *words;
		db_tls_failure failure;
	}			markers[] = {
		/* OpenSSL's reason when our side rejected the server's chain */
		{"certificate verify failed", DB_TLS_SERVER_CERTIFICATE},
		/* libpq's host name check (sslmode=verify-full) */
		{"does not match host name", DB_TLS_HOST_NAME},
		{"host name from server certificate", DB_TLS_HOST_NAME},
		{"SSL certificate's ", DB_TLS_HOST_NAME},
		{"for a verified SSL connection", DB_TLS_HOST_NAME},
		/* the server's alert on our certificate, as OpenSSL names it */
		{" alert certificate ", DB_TLS_CLIENT_CERTIFICATE},
		{" alert bad certificate", DB_TLS_CLIENT_CERTIFICATE},
		{" alert unsupported certificate", DB_TLS_CLIENT_CERTIFICATE},
		{" alert unknown ca", DB_TLS_CLIENT_CERTIFICATE},
		/* sslrootcert, sslcert, sslkey: missing, unreadable, unsafe */
		{"certificate file", DB_TLS_FILES},
		{"private key file", DB_TLS_FILES},
		{"server does not support SSL, but SSL was required", DB_TLS_NOT_SUPPORTED},
	};
	size_t		i;

	if (message == NULL)
		return DB_TLS_NONE;
	for (i = 0; i < sizeof(markers) / sizeof(markers[0]); i++)
		if (strstr(message, markers[i].words) != NULL)
			return markers[i].failure;
	return DB_TLS_NONE;
}

/*
 * db_tls_hint
 *		What the operator has to fix for a TLS failure.
 */
const char *
db_tls_hint(db_tls_failure failure)
{
	switch (failure)
	{
		case DB_TLS_NONE:
			break;
		case DB_TLS_SERVER_CERTIFICATE:
			return "the server's certificate did not verify: it must be signed by a CA of the DSN's sslrootcert (default ~/.postgresql/root.crt) and valid now (not expired); check sslrootcert and the server's ssl_cert_file";
		case DB_TLS_HOST_NAME:
			return "the server's certificate does not name the host the DSN connects to (sslmode=verify-full): use in host= a name of its subjectAltName, or fix the certificate";
		case DB_TLS_CLIENT_CERTIFICATE:
			return "the server refused the client certificate (sslcert, sslkey in the DSN): it must be signed by a CA of the server's ssl_ca_file and valid now (not expired)";
		case DB_TLS_FILES:
			return "a TLS file of the DSN (sslrootcert, sslcert, sslkey) is missing, unreadable or does not match, or the key is readable by others (chmod 600)";
		case DB_TLS_NOT_SUPPORTED:
			return "the server does not accept TLS (ssl = off) but the DSN's sslmode requires it: enable ssl on the server";
	}
	return "check the TLS settings of the DSN (sslmode, sslrootcert, sslcert, sslkey)";
}

/*
 * db_fatal_hint
 *		What the operator has to fix for a fatal SQLSTATE.
 */
const char *
db_fatal_hint(const char *s)
{
	if (s == NULL)
		return "check the database connection settings";
	if (strcmp(s, "08P01") == 0)
		return "fix the connection string given with --dsn or FEEDER_DSN";
	if (strncmp(s, "28", 2) == 0)
		return "check the user and password (--dsn, PGUSER, PGPASSWORD, ~/.pgpass), or the client certificate (sslcert, sslkey; its CN must be the role with cert authentication), and pg_hba.conf";
	if (strcmp(s, "3D000") == 0)
		return "check the database name in --dsn or PGDATABASE";
	if (strcmp(s, "3F000") == 0 || strcmp(s, "42883") == 0)
		return "install the extension in this database as a superuser: CREATE EXTENSION received_orders (or update it to this feeder's version: ALTER EXTENSION received_orders UPDATE)";
	if (strcmp(s, "42501") == 0)
		return "as a superuser, grant the feeder's role what a feeder calls: SELECT received_orders.grant_feeder('ROLE') (extension 1.3 or later; the GRANT statements it runs are in docs/reference.md), and CONNECT on the database; if the consumer group belongs to another role, use another --group or have a superuser run received_orders.set_consumer_group_owner()";
	if (strcmp(s, "55000") == 0)
		return "the consumer group's positions were taken on another Kafka cluster: point the feeder at that cluster, or, if the group really moved, forget its positions with received_orders.forget_consumer_positions(group), or use another --group";
	if (strcmp(s, "42P10") == 0)
		return "INSERT ... ON CONFLICT found no unique constraint to use: a primary key or unique constraint of the extension's tables was dropped (received_orders.received_orders needs its primary key on order_id); compare the tables with a database where the extension was freshly created and restore the constraint";
	if (strncmp(s, "42", 2) == 0)
		return "the database refused the feeder's statement: check that the extension's objects are as installed (\\dx+ received_orders in psql) and that its version (SELECT extversion FROM pg_extension WHERE extname = 'received_orders') is this feeder's (received-orders-feeder --version), else ALTER EXTENSION received_orders UPDATE";
	if (strcmp(s, "09000") == 0)
		return "a BEFORE INSERT trigger (or row level security) on received_orders.received_orders suppresses the insert of valid events: fix or drop it, then restart the feeder";
	return "check the database configuration";
}

/*
 * db_error_class_name
 *		The class= field of log lines.
 */
const char *
db_error_class_name(db_error_class cls)
{
	switch (cls)
	{
		case DB_ERR_NONE:
			return "none";
		case DB_ERR_TRANSIENT:
			return "transient";
		case DB_ERR_FATAL:
			return "fatal";
		case DB_ERR_OTHER:
			return "other";
	}
	return "unknown";
}

/*
 * db_copy_message
 *		Copy a libpq message into err, without its trailing newline.
 */
void
db_copy_message(db_error *err, const char *msg)
{
	size_t		n;

	snprintf(err->message, sizeof(err->message), "%s",
			 msg && *msg ? msg : "unknown error");
	n = strlen(err->message);
	while (n > 0 && (err->message[n - 1] == '\n' || err->message[n - 1] == ' '))
		err->message[--n] = '\0';
}

/*
 * db_fill_error
 *		Fill err from a failed result (or from the connection when res is
 *		NULL) and classify it.  A broken connection is at least transient.
 */
db_error_class
db_fill_error(PGconn *conn, const PGresult *res, const char *step, db_error *err)
{
	const char *sqlstate = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	err->step = step;
	snprintf(err->sqlstate, sizeof(err->sqlstate), "%s", sqlstate ? sqlstate : "");
	if (primary)
		db_copy_message(err, primary);
	else if (res && *PQresultErrorMessage(res))
		db_copy_message(err, PQresultErrorMessage(res));
	else
		db_copy_message(err, PQerrorMessage(conn));
	err->cls = db_classify_sqlstate(sqlstate);
	if (err->cls == DB_ERR_OTHER && PQstatus(conn) != CONNECTION_OK)
		err->cls = DB_ERR_TRANSIENT;
	return err->cls;
}

/*
 * db_log_fatal
 *		The line that explains a configuration or permission error before
 *		exit 3 (the database's, or the Schema Registry's): what failed and
 *		what to fix.
 */
void
db_log_fatal(const db_error *err)
{
	log_line	line;

	log_begin(&line, LOG_FATAL, err->step && strcmp(err->step, "schema_registry") == 0 ?
			  "schema_registry_config_error" : "database_config_error");
	log_kv_str(&line, "step", err->step ? err->step : "");
	if (err->sqlstate[0])
		log_kv_str(&line, "sqlstate", err->sqlstate);
	log_kv_str(&line, "error", err->message);
	log_kv_str(&line, "hint", err->hint[0] ? err->hint :
			   db_fatal_hint(err->sqlstate[0] ? err->sqlstate : NULL));
	log_end(&line);
}
