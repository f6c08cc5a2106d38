/*-------------------------------------------------------------------------
 *
 * test_db_errors.c
 *	  Unit tests of db_errors.c: SQLSTATE and connection failure
 *	  classification into transient / fatal / other.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "db_errors.h"

/* Every transient class named by the delivery contract. */
static void
test_transient(void **state)
{
	static const char *const codes[] = {
		"08000", "08003", "08006", "08001", "08004", "08P01",
		"40001", "40P01", "53000", "53100", "53200", "53300", "53400",
		"55P03", "57014", "57P01", "57P02", "57P03", "57P04", "25006"
	};
	size_t		i;

	(void) state;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		assert_int_equal(db_classify_sqlstate(codes[i]), DB_ERR_TRANSIENT);
	/* no SQLSTATE: connection lost, COMMIT result unknown */
	assert_int_equal(db_classify_sqlstate(NULL), DB_ERR_TRANSIENT);
	assert_int_equal(db_classify_sqlstate(""), DB_ERR_TRANSIENT);
}

/* Configuration and permission errors end the feeder. */
static void
test_fatal(void **state)
{
	static const char *const codes[] = {
		"28000", "28P01", "3D000", "3F000", "42501", "42883", "42P01", "42703", "09000"
	};
	size_t		i;

	(void) state;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
	{
		assert_int_equal(db_classify_sqlstate(codes[i]), DB_ERR_FATAL);
		assert_non_null(db_fatal_hint(codes[i]));
	}
	assert_non_null(strstr(db_fatal_hint("42501"), "GRANT"));
	assert_non_null(strstr(db_fatal_hint("42883"), "CREATE EXTENSION"));
	assert_non_null(strstr(db_fatal_hint("09000"), "trigger"));
	assert_non_null(strstr(db_fatal_hint("3F000"), "CREATE EXTENSION"));

	/*
	 * A hint never names a cause that was not checked (a dropped primary
	 * key, 42P10, is not the extension's version): 42P10
	 * names the constraint ON CONFLICT needs; the other 42 errors say what
	 * to check, not what happened.
	 */
	assert_int_equal(db_classify_sqlstate("42P10"), DB_ERR_FATAL);
	assert_non_null(strstr(db_fatal_hint("42P10"), "primary key on order_id"));
	for (i = 0; i < 4; i++)
	{
		const char *hint = db_fatal_hint((const char *[]) {"42P10", "42P01", "42703", "42601"}[i]);

		assert_null(strstr(hint, "does not match"));
	}
	assert_non_null(strstr(db_fatal_hint("42P01"), "check that"));
	assert_non_null(strstr(db_fatal_hint("42P01"), "extversion"));
}

/*
 * Reading the positions, a refusal of the group (another role's, or of
 * another Kafka cluster) ends the feeder; 55000 only there.
 */
static void
test_positions_refused(void **state)
{
	(void) state;
	assert_true(db_positions_refused("42501", NULL));
	assert_true(db_positions_refused("55000", NULL));
	assert_false(db_positions_refused("55P03", NULL));
	assert_false(db_positions_refused("42883", NULL));
	assert_false(db_positions_refused("", NULL));
	assert_false(db_positions_refused(NULL, NULL));
	assert_int_equal(db_classify_sqlstate("55000"), DB_ERR_OTHER);
	assert_non_null(strstr(db_fatal_hint("55000"), "forget_consumer_positions"));
	assert_non_null(strstr(db_fatal_hint("42501"), "received_orders.grant_feeder("));
	assert_non_null(strstr(db_fatal_hint("42501"), "set_consumer_group_owner"));
}

/*
 * The extension's claim limit (a role claims at most 16 groups by using
 * them) is a configuration refusal that no retry cures: reading the
 * positions, it ends the feeder (exit 3) with the DBA's remedy.  Told by
 * its SQLSTATE and its message: any other 54000 (a program limit a smaller
 * batch cures) is not refused, and the claim's words under another
 * SQLSTATE are not either.
 */
static void
test_claim_limit(void **state)
{
	const char *claim = "role \"orders_feeder\" cannot claim consumer group \"bench-17\": it owns 16 groups already";

	(void) state;
	assert_true(db_claim_limit("54000", claim));
	assert_true(db_positions_refused("54000", claim));
	/* other program limits: the batch's size, an index row, a report */
	assert_false(db_positions_refused("54000", "index row requires 9000 bytes, maximum size is 8191"));
	assert_false(db_positions_refused("54000", "a report holds at most 4096 partitions"));
	assert_false(db_positions_refused("54000", NULL));
	assert_false(db_claim_limit("54000", "role \"x\" cannot claim consumer group \"g\""));
	/* the claim's words under another SQLSTATE */
	assert_false(db_claim_limit("54001", claim));
	assert_false(db_claim_limit(NULL, claim));
	/* everywhere else 54000 stays what it was: retried, size-caused */
	assert_int_equal(db_classify_sqlstate("54000"), DB_ERR_OTHER);
	assert_true(db_size_caused("54000"));
	/* the remedy: forget the groups no longer used */
	assert_non_null(strstr(db_claim_limit_hint(), "received_orders.forget_consumer_positions('OLD_GROUP')"));
	assert_non_null(strstr(db_claim_limit_hint(), "received_orders.set_consumer_group_owner('OLD_GROUP', NULL)"));
	assert_non_null(strstr(db_claim_limit_hint(), "received_orders_consumer_groups WHERE owner_role"));
}

/* Everything else is "other", including near misses of the lists. */
static void
test_other(void **state)
{
	static const char *const codes[] = {
		"22023", "22P02", "23505", "XX000", "54000", "40000", "55000",
		"57000", "0A000", "P0001", "2200", "220233"
	};
	size_t		i;

	(void) state;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		assert_int_equal(db_classify_sqlstate(codes[i]), DB_ERR_OTHER);
}

/*
 * Connection failures are classified by the server's SQLSTATE, read from
 * libpq's verbose message in any language, and by libpq's state (matching
 * English text would make an LDAP blip fatal and miss every non-English
 * message).
 */
static void
test_connect_sqlstate(void **state)
{
	char		code[6];

	(void) state;
	db_connect_sqlstate("connection to server at \"db\" (10.0.0.1), port 5432 failed: FATAL:  28P01: password authentication failed for user \"feeder\"\nLOCATION:  auth_failed, auth.c:323\n", code);
	assert_string_equal(code, "28P01");
	/* German, as lc_messages = 'de_DE' words it: the code is the same */
	db_connect_sqlstate("Verbindung zum Server auf Socket »/tmp/.s.PGSQL.5432« fehlgeschlagen: FATAL:  3D000: Datenbank »nodb« existiert nicht", code);
	assert_string_equal(code, "3D000");
	db_connect_sqlstate("FATAL:  28000: LDAP authentication failed for user \"feeder\"", code);
	assert_string_equal(code, "28000");
	/* several hosts: the last answer counts */
	db_connect_sqlstate("connection to server at \"a\" failed: FATAL:  57P03: the database system is starting up\nconnection to server at \"b\" failed: FATAL:  53300: sorry, too many clients already\n", code);
	assert_string_equal(code, "53300");
	/* no answer from a server */
	db_connect_sqlstate("connection to server at \"localhost\" (127.0.0.1), port 5432 failed: Connection refused", code);
	assert_string_equal(code, "");
	db_connect_sqlstate("timeout expired", code);
	assert_string_equal(code, "");
	db_connect_sqlstate("fe_sendauth: no password supplied", code);
	assert_string_equal(code, "");
	db_connect_sqlstate(NULL, code);
	assert_string_equal(code, "");
	/* a colon and two spaces not followed by a code */
	db_connect_sqlstate("FATAL:  password: wrong", code);
	assert_string_equal(code, "");
}

/*
 * Configuration errors end the feeder at its first connection only; after
 * it has run, they are retried (logged as errors), so a blip never ends it.
 */
static void
test_connect_failures(void **state)
{
	static const char *const config[] = {"28P01", "28000", "3D000", "42501"};
	static const char *const transient[] = {"57P03", "53300", "57P01", "08006", ""};
	size_t		i;

	(void) state;
	for (i = 0; i < sizeof(config) / sizeof(config[0]); i++)
	{
		assert_int_equal(db_classify_connect(config[i], 0, DB_TLS_NONE, 1), DB_ERR_FATAL);
		assert_int_equal(db_classify_connect(config[i], 0, DB_TLS_NONE, 0), DB_ERR_OTHER);
	}
	for (i = 0; i < sizeof(transient) / sizeof(transient[0]); i++)
	{
		assert_int_equal(db_classify_connect(transient[i], 0, DB_TLS_NONE, 1), DB_ERR_TRANSIENT);
		assert_int_equal(db_classify_connect(transient[i], 0, DB_TLS_NONE, 0), DB_ERR_TRANSIENT);
	}
	/* libpq asked for a password it did not have */
	assert_int_equal(db_classify_connect("", 1, DB_TLS_NONE, 1), DB_ERR_FATAL);
	assert_int_equal(db_classify_connect("", 1, DB_TLS_NONE, 0), DB_ERR_OTHER);
	assert_int_equal(db_classify_connect(NULL, 0, DB_TLS_NONE, 1), DB_ERR_TRANSIENT);
	/* a TLS failure: no SQLSTATE, a configuration error all the same */
	assert_int_equal(db_classify_connect("", 0, DB_TLS_SERVER_CERTIFICATE, 1), DB_ERR_FATAL);
	assert_int_equal(db_classify_connect("", 0, DB_TLS_SERVER_CERTIFICATE, 0), DB_ERR_OTHER);
	assert_int_equal(db_classify_connect(NULL, 0, DB_TLS_HOST_NAME, 1), DB_ERR_FATAL);
	assert_int_equal(db_classify_connect("57P03", 0, DB_TLS_CLIENT_CERTIFICATE, 1), DB_ERR_FATAL);
}

/*
 * TLS failures of a connection attempt, from libpq's messages as libpq 15
 * words them in the feeder's C locale (a certificate that does not verify
 * at start must not be retried for ever as "transient").
 */
static void
test_connect_tls(void **state)
{
	static const struct
	{
		const char *message;
		db_tls_failure failure;
	}			cases[] = {
		/* sslrootcert of another CA, or the server's certificate expired */
		{"connection to server at \"localhost\" (127.0.0.1), port 5432 failed: SSL error: certificate verify failed\n", DB_TLS_SERVER_CERTIFICATE},
		/* verify-full, host name not in the certificate */
		{"connection to server at \"127.0.0.1\", port 5432 failed: server certificate for \"localhost\" does not match host name \"127.0.0.1\"\n", DB_TLS_HOST_NAME},
		{"connection to server at \"10.0.0.1\", port 5432 failed: server certificate for \"db\" (and 2 other names) does not match host name \"10.0.0.1\"\n", DB_TLS_HOST_NAME},
		{"could not get server's host name from server certificate", DB_TLS_HOST_NAME},
		{"SSL certificate's name entry is missing", DB_TLS_HOST_NAME},
		/* the server's alerts on our certificate (TLS 1.3: after the handshake) */
		{"connection to server at \"localhost\" (127.0.0.1), port 5432 failed: SSL error: sslv3 alert certificate expired\n", DB_TLS_CLIENT_CERTIFICATE},
		{"connection to server at \"localhost\" (127.0.0.1), port 5432 failed: SSL error: tlsv1 alert unknown ca\n", DB_TLS_CLIENT_CERTIFICATE},
		{"SSL error: sslv3 alert bad certificate", DB_TLS_CLIENT_CERTIFICATE},
		{"SSL error: tlsv13 alert certificate required", DB_TLS_CLIENT_CERTIFICATE},
		{"SSL error: sslv3 alert certificate revoked", DB_TLS_CLIENT_CERTIFICATE},
		/* files of the DSN */
		{"connection to server at \"localhost\" (127.0.0.1), port 5432 failed: root certificate file \"/etc/x/ca.crt\" does not exist\nEither provide the file or change sslmode to disable server certificate verification.\n", DB_TLS_FILES},
		{"could not read root certificate file \"/etc/x/ca.crt\": no certificate or crl found", DB_TLS_FILES},
		{"could not open certificate file \"/etc/x/c.crt\": Permission denied", DB_TLS_FILES},
		{"private key file \"/etc/x/c.key\" has group or world access; file must have permissions u=rw (0600) or less", DB_TLS_FILES},
		{"certificate present, but not private key file \"/root/.postgresql/postgresql.key\"", DB_TLS_FILES},
		{"could not load private key file \"/etc/x/c.key\": bad decrypt", DB_TLS_FILES},
		{"connection to server at \"db\" (10.0.0.1), port 5432 failed: server does not support SSL, but SSL was required\n", DB_TLS_NOT_SUPPORTED},
		/* several hosts: a TLS failure of any of them counts */
		{"connection to server at \"a\" (10.0.0.1), port 5432 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\nconnection to server at \"b\" (10.0.0.2), port 5432 failed: SSL error: certificate verify failed\n", DB_TLS_SERVER_CERTIFICATE},
		/* not TLS configuration: a retry may cure these */
		{"connection to server at \"localhost\" (127.0.0.1), port 5432 failed: Connection refused\n\tIs the server running on that host and accepting TCP/IP connections?\n", DB_TLS_NONE},
		{"connection to server at \"db\" (10.0.0.1), port 5432 failed: SSL SYSCALL error: EOF detected\n", DB_TLS_NONE},
		{"connection to server at \"db\" (10.0.0.1), port 5432 failed: SSL error: unexpected eof while reading\n", DB_TLS_NONE},
		{"SSL connection has been closed unexpectedly", DB_TLS_NONE},
		{"connection to server at \"db\" (10.0.0.1), port 5432 failed: timeout expired\n", DB_TLS_NONE},
		{"connection to server at \"localhost\" (127.0.0.1), port 5432 failed: FATAL:  28000: connection requires a valid client certificate\n", DB_TLS_NONE},
		{"connection to server at \"localhost\" (127.0.0.1), port 5432 failed: FATAL:  28000: certificate authentication failed for user \"feeder\"\n", DB_TLS_NONE},
		{"fe_sendauth: no password supplied", DB_TLS_NONE},
		{"", DB_TLS_NONE},
		{NULL, DB_TLS_NONE},
	};
	size_t		i;

	(void) state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		if (db_connect_tls_failure(cases[i].message) != cases[i].failure)
			fail_msg("case %zu: \"%s\": got %d, want %d", i,
					 cases[i].message ? cases[i].message : "(null)",
					 (int) db_connect_tls_failure(cases[i].message),
					 (int) cases[i].failure);
	}

	/* every failure has a hint of its own, naming what to look at */
	assert_non_null(strstr(db_tls_hint(DB_TLS_SERVER_CERTIFICATE), "sslrootcert"));
	assert_non_null(strstr(db_tls_hint(DB_TLS_SERVER_CERTIFICATE), "expired"));
	assert_non_null(strstr(db_tls_hint(DB_TLS_HOST_NAME), "host"));
	assert_non_null(strstr(db_tls_hint(DB_TLS_HOST_NAME), "subjectAltName"));
	assert_non_null(strstr(db_tls_hint(DB_TLS_CLIENT_CERTIFICATE), "sslcert"));
	assert_non_null(strstr(db_tls_hint(DB_TLS_CLIENT_CERTIFICATE), "ssl_ca_file"));
	assert_non_null(strstr(db_tls_hint(DB_TLS_FILES), "sslkey"));
	assert_non_null(strstr(db_tls_hint(DB_TLS_NOT_SUPPORTED), "ssl"));
	assert_non_null(strstr(db_tls_hint(DB_TLS_NONE), "TLS"));
	assert_string_not_equal(db_tls_hint(DB_TLS_SERVER_CERTIFICATE), db_tls_hint(DB_TLS_HOST_NAME));
	assert_string_not_equal(db_tls_hint(DB_TLS_SERVER_CERTIFICATE), db_tls_hint(DB_TLS_CLIENT_CERTIFICATE));
	/* cert authentication refused (28000): the hint names the certificate too */
	assert_non_null(strstr(db_fatal_hint("28000"), "sslcert"));
}

/* Retry reasons: the bounded label set of retries_total. */
static void
test_retry_reasons(void **state)
{
	(void) state;
	assert_int_equal(db_retry_reason_of(NULL, "execute"), DB_RETRY_CONNECTION);
	assert_int_equal(db_retry_reason_of("", "connect"), DB_RETRY_CONNECTION);
	assert_int_equal(db_retry_reason_of("", "commit"), DB_RETRY_COMMIT_UNKNOWN);
	/* out of memory decoding a value: the feeder's resources */
	assert_int_equal(db_retry_reason_of("", "decode"), DB_RETRY_RESOURCES);
	assert_int_equal(db_retry_reason_of("08006", "execute"), DB_RETRY_CONNECTION);
	assert_int_equal(db_retry_reason_of("57P05", "begin"), DB_RETRY_CONNECTION);
	assert_int_equal(db_retry_reason_of("40001", "commit"), DB_RETRY_SERIALIZATION);
	assert_int_equal(db_retry_reason_of("40P01", "execute"), DB_RETRY_DEADLOCK);
	assert_int_equal(db_retry_reason_of("53300", "connect"), DB_RETRY_RESOURCES);
	assert_int_equal(db_retry_reason_of("55P03", "execute"), DB_RETRY_LOCK);
	assert_int_equal(db_retry_reason_of("57P01", "execute"), DB_RETRY_SHUTDOWN);
	assert_int_equal(db_retry_reason_of("57P03", "connect"), DB_RETRY_SHUTDOWN);
	assert_int_equal(db_retry_reason_of("57014", "execute"), DB_RETRY_OTHER);
	assert_int_equal(db_retry_reason_of("25006", "execute"), DB_RETRY_OTHER);
	assert_int_equal(db_retry_reason_of("XX000", "execute"), DB_RETRY_OTHER);
	assert_int_equal(db_retry_reason_of("4000", "execute"), DB_RETRY_OTHER);

	assert_string_equal(db_retry_reason_name(DB_RETRY_CONNECTION), "connection");
	assert_string_equal(db_retry_reason_name(DB_RETRY_COMMIT_UNKNOWN), "commit_unknown");
	assert_string_equal(db_retry_reason_name(DB_RETRY_OTHER), "other");
	assert_string_equal(db_retry_reason_name(DB_RETRY_NREASONS), "other");
}

/* Out of memory and program limits are size-caused; nothing else is. */
static void
test_size_caused(void **state)
{
	(void) state;
	assert_true(db_size_caused("53200"));
	assert_true(db_size_caused("54000"));
	assert_true(db_size_caused("54001"));
	assert_false(db_size_caused("53300"));
	assert_false(db_size_caused("53100"));
	assert_false(db_size_caused("22P02"));
	assert_false(db_size_caused("40001"));
	assert_false(db_size_caused(""));
	assert_false(db_size_caused(NULL));
	assert_false(db_size_caused("54"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transient),
		cmocka_unit_test(test_fatal),
		cmocka_unit_test(test_other),
		cmocka_unit_test(test_positions_refused),
		cmocka_unit_test(test_claim_limit),
		cmocka_unit_test(test_connect_sqlstate),
		cmocka_unit_test(test_connect_failures),
		cmocka_unit_test(test_connect_tls),
		cmocka_unit_test(test_retry_reasons),
		cmocka_unit_test(test_size_caused),
	};

	return cmocka_run_group_tests_name("db_errors", tests, NULL, NULL);
}
