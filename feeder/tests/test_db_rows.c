/*-------------------------------------------------------------------------
 *
 * test_db_rows.c
 *	  Unit tests of db_rows.c: the batch statement's answer read back into
 *	  one row per element, and every malformed answer refused.  The answers are real
 *	  libpq results, built with PQmakeEmptyPGresult and PQsetvalue.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "db_rows.h"

#define NELEMS 5

/* a row of an answer; NULL is SQL's NULL */
typedef struct answer_row
{
	const char *values[5];
} answer_row;

static PGresult *
answer(const answer_row *rows, int n, int ncolumns)
{
	static const char *const names[5] = {"position", "order_id", "outcome", "sqlstate", "message"};
	PGresAttDesc attrs[5];
	PGresult   *res = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);

	assert_non_null(res);
	memset(attrs, 0, sizeof(attrs));
	for (int c = 0; c < ncolumns; c++)
	{
		attrs[c].name = (char *) names[c];
		attrs[c].typid = 25;
		attrs[c].typlen = -1;
		attrs[c].atttypmod = -1;
	}
	assert_true(PQsetResultAttrs(res, ncolumns, attrs));
	for (int r = 0; r < n; r++)
		for (int c = 0; c < ncolumns; c++)
		{
			const char *v = rows[r].values[c];

			assert_true(PQsetvalue(res, r, c, (char *) v, v ? (int) strlen(v) : -1));
		}
	return res;
}

static const int to_msg[NELEMS] = {10, 11, 12, 13, 14};

static int
read_answer(const answer_row *rows, int n, int ncolumns, db_row *out, char *err)
{
	PGresult   *res = answer(rows, n, ncolumns);
	int			rc = db_rows_read(res, NELEMS, to_msg, out, err, 256);

	/* the strings point into the result: check them before it goes */
	if (rc == 0)
		for (int i = 0; i < NELEMS; i++)
			if (out[i].order_id)
				assert_non_null(strstr(out[i].order_id, "-"));
	PQclear(res);
	return rc;
}

/* A whole answer, in any order: each row lands on its element. */
static void
test_rows_land_on_their_elements(void **state)
{
	const answer_row whole[] = {
		{{"4", NULL, "rejected", "22P02", "event is not valid JSON"}},
		{{"2", "5d41402a-bc4b-2a76-b971-9d911017c592", "duplicate", NULL, NULL}},
		{{"5", NULL, "skipped", NULL, NULL}},
		{{"1", "7d793037-a076-0186-574a-0fe2f9a3ffa6", "conflict", "23505", "another reference"}},
		{{"3", "0cc175b9-c0f1-b6a8-31c3-99e269772661", "inserted", NULL, NULL}},
	};
	db_row		rows[NELEMS];
	char		err[256] = "";
	PGresult   *res = answer(whole, NELEMS, 5);

	(void) state;
	assert_int_equal(db_rows_read(res, NELEMS, to_msg, rows, err, sizeof(err)), 0);
	assert_int_equal(rows[0].outcome, DB_OUTCOME_CONFLICT);
	assert_string_equal(rows[0].order_id, "7d793037-a076-0186-574a-0fe2f9a3ffa6");
	assert_string_equal(rows[0].sqlstate, "23505");
	assert_int_equal(rows[1].outcome, DB_OUTCOME_DUPLICATE);
	assert_null(rows[1].sqlstate);
	assert_int_equal(rows[2].outcome, DB_OUTCOME_INSERTED);
	assert_string_equal(rows[2].order_id, "0cc175b9-c0f1-b6a8-31c3-99e269772661");
	assert_int_equal(rows[3].outcome, DB_OUTCOME_REJECTED);
	assert_null(rows[3].order_id);
	assert_string_equal(rows[3].message, "event is not valid JSON");
	assert_int_equal(rows[4].outcome, DB_OUTCOME_SKIPPED);
	for (int i = 0; i < NELEMS; i++)
		assert_int_equal(rows[i].msg_index, to_msg[i]);
	PQclear(res);
}

/* Each malformed answer is refused with a reason. */
static void
refused(const answer_row *rows, int n, int ncolumns, const char *reason)
{
	db_row		out[NELEMS];
	char		err[256] = "";

	assert_int_equal(read_answer(rows, n, ncolumns, out, err), -1);
	assert_non_null(strstr(err, reason));
}

/* a whole answer with row r (0-based) replaced */
static void
refused_with(int r, answer_row bad, const char *reason)
{
	answer_row	rows[NELEMS] = {
		{{"1", NULL, "inserted", NULL, NULL}},
		{{"2", NULL, "inserted", NULL, NULL}},
		{{"3", NULL, "inserted", NULL, NULL}},
		{{"4", NULL, "inserted", NULL, NULL}},
		{{"5", NULL, "inserted", NULL, NULL}},
	};

	rows[r] = bad;
	refused(rows, NELEMS, 5, reason);
}

static void
test_malformed_answers_are_refused(void **state)
{
	const answer_row four[] = {
		{{"1", NULL, "inserted", NULL, NULL}},
		{{"2", NULL, "inserted", NULL, NULL}},
		{{"3", NULL, "inserted", NULL, NULL}},
		{{"4", NULL, "inserted", NULL, NULL}},
	};
	answer_row	six[NELEMS + 1];

	(void) state;
	/* test/e2e/15 replaces the function by one that answers nothing */
	refused(NULL, 0, 5, "0 rows of 5 columns for 5 elements");
	refused(four, 4, 5, "4 rows of 5 columns for 5 elements");
	for (int i = 0; i < NELEMS + 1; i++)
		six[i] = (answer_row) {{"1", NULL, "inserted", NULL, NULL}};
	refused(six, NELEMS + 1, 5, "6 rows of 5 columns for 5 elements");
	refused(NULL, 0, 4, "0 rows of 4 columns for 5 elements");

	/*
	 * Element 3 named twice, element 4 never: the count is right, and the
	 * reader before db_rows.c took it, counting one message twice and
	 * another not at all.
	 */
	refused_with(3, (answer_row) {{"3", NULL, "duplicate", NULL, NULL}},
				 "unexpected row 4 (position \"3\"");
	refused_with(1, (answer_row) {{"2", NULL, "lost", NULL, NULL}}, "outcome \"lost\"");
	refused_with(1, (answer_row) {{"2", NULL, NULL, NULL, NULL}}, "unexpected row 2");
	refused_with(0, (answer_row) {{"0", NULL, "rejected", NULL, NULL}}, "position \"0\"");
	refused_with(4, (answer_row) {{"6", NULL, "rejected", NULL, NULL}}, "position \"6\"");
	refused_with(1, (answer_row) {{"2x", NULL, "rejected", NULL, NULL}}, "position \"2x\"");
	refused_with(1, (answer_row) {{"", NULL, "rejected", NULL, NULL}}, "unexpected row 2");
}

static void
test_outcome_labels(void **state)
{
	db_outcome	o;

	(void) state;
	for (int i = 0; i < DB_NOUTCOMES; i++)
	{
		assert_int_equal(db_outcome_parse(db_outcome_name((db_outcome) i), &o), 0);
		assert_int_equal(o, i);
	}
	assert_int_equal(db_outcome_parse("Inserted", &o), -1);
	assert_string_equal(db_outcome_name((db_outcome) 99), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_land_on_their_elements),
		cmocka_unit_test(test_malformed_answers_are_refused),
		cmocka_unit_test(test_outcome_labels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
