/*-------------------------------------------------------------------------
 *
 * test_log.c
 *	  Unit tests of log.c: password redaction of connection strings (as a
 *	  copy, and in place for argv) and quoting of log values.
 *
 *-------------------------------------------------------------------------
 */
#define _GNU_SOURCE				/* memmem */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "log.h"

/*
 * check_redact
 *		Redact in and compare with expected; the secret must be gone.
 */
static void
check_redact(const char *in, const char *expected, const char *secret)
{
	char	   *out = log_redact_conninfo(in);

	assert_string_equal(out, expected);
	if (secret)
		assert_null(strstr(out, secret));
	free(out);
}

/* key=value conninfo: bare, quoted, escaped, spaced, sslpassword. */
static void
test_redact_keyvalue(void **state)
{
	(void) state;
	check_redact("host=db user=feeder password=hunter2 dbname=orders",
				 "host=db user=feeder password=*** dbname=orders", "hunter2");
	check_redact("password='s3cret pw' host=db",
				 "password=*** host=db", "s3cret");
	check_redact("host=db password = 'it\\'s secret' port=5432",
				 "host=db password =*** port=5432", "secret");
	check_redact("password=a\\ b host=x", "password=*** host=x", "a\\ b");
	check_redact("sslpassword=keypass sslkey=/k", "sslpassword=*** sslkey=/k", "keypass");
	check_redact("PASSWORD=upper", "PASSWORD=***", "upper");
	check_redact("host=db dbname=orders", "host=db dbname=orders", NULL);
	check_redact("", "", NULL);
	/* a key that merely ends in "password" is not a password key */
	check_redact("mypassword_hint=x", "mypassword_hint=x", NULL);
}

/* URIs: user:password@, query parameters, multiple hosts. */
static void
test_redact_uri(void **state)
{
	(void) state;
	check_redact("postgresql://feeder:hunter2@db:5432/orders",
				 "postgresql://feeder:***@db:5432/orders", "hunter2");
	check_redact("postgres://feeder:p%40ss@h1:5432,h2:5433/orders?sslmode=require",
				 "postgres://feeder:***@h1:5432,h2:5433/orders?sslmode=require", "p%40ss");
	check_redact("postgresql://feeder@db/orders?password=hunter2&sslmode=verify-full",
				 "postgresql://feeder@db/orders?password=***&sslmode=verify-full", "hunter2");
	check_redact("postgresql://db/orders?sslmode=require&password=x%20y",
				 "postgresql://db/orders?sslmode=require&password=***", "x%20y");
	check_redact("postgresql:///orders?host=/run/pg", "postgresql:///orders?host=/run/pg", NULL);
	check_redact("postgresql://u:@db/x", "postgresql://u:***@db/x", NULL);
}

/* A connection string embedded in free text is redacted too. */
static void
test_redact_embedded(void **state)
{
	(void) state;
	check_redact("could not use postgresql://a:b@c/d now",
				 "could not use postgresql://a:***@c/d now", ":b@");
	check_redact("dsn: host=x password=zz", "dsn: host=x password=***", "zz");
}

/* Values are bare when plain, quoted and escaped otherwise. */
static void
test_quote_value(void **state)
{
	char		buf[128];

	(void) state;
	log_quote_value(buf, sizeof(buf), "orders");
	assert_string_equal(buf, "orders");
	log_quote_value(buf, sizeof(buf), "orders [2] @17");
	assert_string_equal(buf, "\"orders [2] @17\"");
	log_quote_value(buf, sizeof(buf), "say \"hi\"\n\\");
	assert_string_equal(buf, "\"say \\\"hi\\\"\\n\\\\\"");
	log_quote_value(buf, sizeof(buf), "a=b");
	assert_string_equal(buf, "\"a=b\"");
	log_quote_value(buf, sizeof(buf), "");
	assert_string_equal(buf, "\"\"");
	log_quote_value(buf, sizeof(buf), "\x01");
	assert_string_equal(buf, "\"\\x01\"");
	/* a value cut to fit ends with "..." inside its quotes */
	log_quote_value(buf, 7, "abcdefg");
	assert_string_equal(buf, "\"a...\"");
	log_quote_value(buf, 4, "abcdef");
	assert_string_equal(buf, "");
	log_quote_value(buf, 7, "abcdef");
	assert_string_equal(buf, "abcdef");
	log_quote_value(buf, 8, "abcdefgh");
	assert_string_equal(buf, "\"ab...\"");
}

/*
 * Log hygiene: C1 controls, bidirectional formatting characters,
 * line separators and invalid UTF-8 from event contents are escaped; other
 * non-ASCII text stays as it is; a cut never splits a UTF-8 sequence or an
 * escape.
 */
static void
test_quote_hostile(void **state)
{
	char		buf[128];
	char		small[14];

	(void) state;
	log_quote_value(buf, sizeof(buf), "caf\xc3\xa9");
	assert_string_equal(buf, "caf\xc3\xa9");
	/* U+0085 NEL and U+009B CSI (C1) */
	log_quote_value(buf, sizeof(buf), "a\xc2\x85" "b\xc2\x9b" "c");
	assert_string_equal(buf, "\"a\\u0085b\\u009bc\"");
	/* U+202E RIGHT-TO-LEFT OVERRIDE, U+2066 LRI, U+200F RLM, U+061C ALM */
	log_quote_value(buf, sizeof(buf), "x\xe2\x80\xae" "y\xe2\x81\xa6" "z\xe2\x80\x8f\xd8\x9c");
	assert_string_equal(buf, "\"x\\u202ey\\u2066z\\u200f\\u061c\"");
	/* U+2028 LINE SEPARATOR */
	log_quote_value(buf, sizeof(buf), "l\xe2\x80\xa8m");
	assert_string_equal(buf, "\"l\\u2028m\"");
	/* invalid UTF-8: a lone continuation byte, an overlong form, a surrogate, a cut sequence */
	log_quote_value(buf, sizeof(buf), "\x80\xc0\xaf\xed\xa0\x80\xe2\x80");
	assert_string_equal(buf, "\"\\x80\\xc0\\xaf\\xed\\xa0\\x80\\xe2\\x80\"");
	/* a cut between characters: "é" (2 bytes) is not split */
	log_quote_value(small, sizeof(small), "ab\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	assert_string_equal(small, "\"ab\xc3\xa9\xc3\xa9\xc3\xa9...\"");
	/* nor an escape */
	log_quote_value(small, sizeof(small), "\x01\x02\x03\x04");
	assert_string_equal(small, "\"\\x01\\x02...\"");
}

/* A long field is cut, and the fields after it stay whole. */
static void
test_long_field_keeps_later_fields(void **state)
{
	log_line	line;
	char		big[LOG_LINE_MAX * 2];

	(void) state;
	memset(big, 'r', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[100] = '\xc3';
	big[101] = '\xa9';
	log_begin(&line, LOG_ERROR, "rejected");
	log_kv_str(&line, "reason", big);
	log_kv_str(&line, "quarantined", "true");
	assert_non_null(strstr(line.buf, "...\" quarantined=true"));
	assert_true(line.len < LOG_LINE_MAX);
}

/*
 * check_redact_inplace
 *		Redact a writable copy of in where it lies; the visible string must
 *		be expected, the bytes after it up to the old end zero, the secret
 *		gone from the whole old extent, and changed reported.
 */
static void
check_redact_inplace(const char *in, const char *expected, const char *secret)
{
	size_t		n = strlen(in);
	char	   *buf = malloc(n + 1);
	size_t		i;

	assert_non_null(buf);
	memcpy(buf, in, n + 1);
	assert_int_equal(log_redact_conninfo_inplace(buf), strcmp(in, expected) != 0);
	assert_string_equal(buf, expected);
	for (i = strlen(buf); i < n; i++)
		assert_int_equal(buf[i], '\0');
	if (secret)
		assert_null(memmem(buf, n, secret, strlen(secret)));
	free(buf);
}

/* In place (argv): never longer than the input, short secrets masked. */
static void
test_redact_inplace(void **state)
{
	(void) state;
	check_redact_inplace("host=db user=feeder password=hunter2 dbname=orders",
						 "host=db user=feeder password=*** dbname=orders", "hunter2");
	check_redact_inplace("password='s3cret pw' host=db", "password=*** host=db", "s3cret");
	check_redact_inplace("postgresql://feeder:hunter2@db:5432/orders",
						 "postgresql://feeder:***@db:5432/orders", "hunter2");
	check_redact_inplace("postgresql://feeder@db/orders?password=hunter2&sslmode=require",
						 "postgresql://feeder@db/orders?password=***&sslmode=require", "hunter2");
	/* a password shorter than the mask is masked byte for byte */
	check_redact_inplace("password=ab host=x", "password=** host=x", "ab ");
	check_redact_inplace("postgresql://u:p@db/x", "postgresql://u:*@db/x", ":p@");
	check_redact_inplace("host=x password=", "host=x password=", NULL);
	/* as libpq reads it, the value after "= " is the password */
	check_redact_inplace("password= host=x", "password=***", "host=x");
	/* nothing to hide: untouched */
	check_redact_inplace("host=db dbname=orders", "host=db dbname=orders", NULL);
	check_redact_inplace("", "", NULL);
	assert_int_equal(log_redact_conninfo_inplace(NULL), 0);
}

/* Level names parse both ways. */
static void
test_levels(void **state)
{
	log_level	l;

	(void) state;
	assert_int_equal(log_parse_level("warning", &l), 0);
	assert_int_equal(l, LOG_WARNING);
	assert_int_equal(log_parse_level("WARN", &l), 0);
	assert_int_equal(l, LOG_WARNING);
	assert_int_equal(log_parse_level("verbose", &l), -1);
	assert_string_equal(log_level_name(LOG_ERROR), "error");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_redact_keyvalue),
		cmocka_unit_test(test_redact_uri),
		cmocka_unit_test(test_redact_embedded),
		cmocka_unit_test(test_redact_inplace),
		cmocka_unit_test(test_quote_value),
		cmocka_unit_test(test_quote_hostile),
		cmocka_unit_test(test_long_field_keeps_later_fields),
		cmocka_unit_test(test_levels),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
