/*-------------------------------------------------------------------------
 *
 * test_utf8.c
 *	  Unit tests of utf8.c: texts cut on a character boundary, invalid
 *	  bytes replaced, PostgreSQL's idea of valid UTF-8.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "utf8.h"

/* A cut that would split a character stops before it. */
static void
test_copy_cuts_on_boundary(void **state)
{
	char		dst[6];

	(void) state;
	/* "ab" then two euro signs (3 bytes each): room for 5 bytes */
	assert_int_equal(utf8_copy(dst, sizeof(dst), "ab\xe2\x82\xac\xe2\x82\xac"), 5);
	assert_string_equal(dst, "ab\xe2\x82\xac");
	assert_int_equal(utf8_copy(dst, 5, "ab\xe2\x82\xac"), 2);
	assert_string_equal(dst, "ab");
	assert_int_equal(utf8_copy(dst, sizeof(dst), "hello world"), 5);
	assert_string_equal(dst, "hello");
	assert_int_equal(utf8_copy(dst, 1, "x"), 0);
	assert_string_equal(dst, "");
}

/* Invalid bytes become '?'; what is valid stays. */
static void
test_invalid_replaced(void **state)
{
	char		dst[64];
	char		s[64];

	(void) state;
	utf8_copy(dst, sizeof(dst), "a\xff" "b\xc3");
	assert_string_equal(dst, "a?b?");
	strcpy(s, "\xc3\xa9t\xc3\xa9 \xe2\x82");	/* "été " and a cut euro sign */
	utf8_fix(s);
	assert_string_equal(s, "\xc3\xa9t\xc3\xa9 ??");
	assert_true(utf8_is_valid(s));
}

/* RFC 3629 as PostgreSQL checks it. */
static void
test_validity(void **state)
{
	(void) state;
	assert_true(utf8_is_valid(""));
	assert_true(utf8_is_valid("plain"));
	assert_true(utf8_is_valid("\xf0\x9f\x98\x80"));	/* U+1F600 */
	assert_true(utf8_is_valid("\xf4\x8f\xbf\xbf"));	/* U+10FFFF */
	assert_false(utf8_is_valid("\xc0\xaf"));	/* overlong '/' */
	assert_false(utf8_is_valid("\xe0\x80\xaf"));	/* overlong */
	assert_false(utf8_is_valid("\xed\xa0\x80"));	/* a surrogate */
	assert_false(utf8_is_valid("\xf4\x90\x80\x80"));	/* above U+10FFFF */
	assert_false(utf8_is_valid("\x80"));
	assert_false(utf8_is_valid("\xe2\x82"));
}

/* ASCII only: one '?' per character beyond ASCII. */
static void
test_to_ascii(void **state)
{
	char		s[32];

	(void) state;
	strcpy(s, "a\xe2\x82\xac" "b\xff" "c\xc3\xa9");
	utf8_to_ascii(s);
	assert_string_equal(s, "a?b?c?");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copy_cuts_on_boundary),
		cmocka_unit_test(test_invalid_replaced),
		cmocka_unit_test(test_validity),
		cmocka_unit_test(test_to_ascii),
	};

	return cmocka_run_group_tests_name("utf8", tests, NULL, NULL);
}
