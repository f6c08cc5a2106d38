/*-------------------------------------------------------------------------
 *
 * test_registry_refs.c
 *	  Unit tests of registry_refs.c: whatever references a registry serves,
 *	  composing a schema with them ends, within bounds, with the schema
 *	  composed or a reason why it cannot be.
 *
 * The registry is a table of subjects in the test (the fetch callback
 * registry_refs_compose is given): no HTTP, the composition only.  A
 * composition that does not end overflows the stack: the test program
 * dies, which fails it.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "registry_refs.h"
#include "utf8.h"

#define MAX_SUBJECTS 80

/* A subject's version 1 as the stand-in registry serves it. */
typedef struct test_subject
{
	char		subject[64];
	char	   *schema;			/* the schema's text */
	char	   *references;		/* a JSON array, or NULL */
} test_subject;

typedef struct test_registry
{
	test_subject subjects[MAX_SUBJECTS];
	int			n;
	int			fetches;
} test_registry;

/*
 * add_subject
 *		Serve schema (with references, a JSON array or NULL) as subject's
 *		version 1.
 */
static void
add_subject(test_registry *tr, const char *subject, const char *schema,
			const char *references)
{
	test_subject *s = &tr->subjects[tr->n++];

	snprintf(s->subject, sizeof(s->subject), "%s", subject);
	s->schema = strdup(schema);
	s->references = references ? strdup(references) : NULL;
}

static void
free_registry(test_registry *tr)
{
	int			i;

	for (i = 0; i < tr->n; i++)
	{
		free(tr->subjects[i].schema);
		free(tr->subjects[i].references);
	}
}

/*
 * fetch
 *		registry_refs_fetch over the table: a subject it has, else unknown.
 */
static registry_status
fetch(void *arg, const char *subject, long long version, const char *what,
	  json_t **doc, char *err, size_t errlen)
{
	test_registry *tr = arg;
	int			i;

	tr->fetches++;
	for (i = 0; i < tr->n; i++)
		if (strcmp(tr->subjects[i].subject, subject) == 0 && version == 1)
		{
			json_error_t jerr;

			*doc = json_pack("{s:s}", "schema", tr->subjects[i].schema);
			if (tr->subjects[i].references)
				json_object_set_new(*doc, "references",
									json_loads(tr->subjects[i].references, 0, &jerr));
			return REGISTRY_OK;
		}
	snprintf(err, errlen, "%s: not found (40401)", what);
	return REGISTRY_UNKNOWN_ID;
}

/*
 * compose
 *		registry_refs_compose of text with references (a JSON array) over
 *		tr: the composed text or NULL, *st and err as it left them.
 */
static char *
compose(test_registry *tr, const char *text, const char *references,
		registry_status *st, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t	   *refs = json_loads(references, 0, &jerr);
	char	   *composed;

	assert_non_null(refs);
	err[0] = '\0';
	composed = registry_refs_compose(text, refs, fetch, tr, st, err, errlen);
	json_decref(refs);
	return composed;
}

/*
 * A reference whose schema is not a named type but names the reference
 * itself (com.x.Loop -> ["null", "com.x.Loop"], itself referencing a
 * record com.x.Loop that is never fetched, its name being had): it was
 * inlined into itself until the stack overflowed (SIGSEGV, every feeder
 * reading the topic crash-looping).  Now the schema cannot be composed,
 * the reason names the cycle: its messages are quarantined.
 */
static void
test_reference_naming_itself(void **state)
{
	test_registry tr = {0};
	registry_status st = REGISTRY_TRANSIENT;
	char		err[512];
	char	   *composed;

	(void) state;
	add_subject(&tr, "loop", "[\"null\", \"com.x.Loop\"]",
				"[{\"name\": \"com.x.Loop\", \"subject\": \"loop-record\", \"version\": 1}]");
	add_subject(&tr, "loop-record",
				"{\"type\": \"record\", \"name\": \"Loop\", \"namespace\": \"com.x\", \"fields\": [{\"name\": \"a\", \"type\": \"long\"}]}",
				NULL);
	composed = compose(&tr,
					   "{\"type\": \"record\", \"name\": \"Top\", \"fields\": [{\"name\": \"l\", \"type\": \"com.x.Loop\"}]}",
					   "[{\"name\": \"com.x.Loop\", \"subject\": \"loop\", \"version\": 1}]",
					   &st, err, sizeof(err));
	assert_null(composed);
	assert_int_equal(st, REGISTRY_OK);
	assert_non_null(strstr(err, "com.x.Loop"));
	assert_non_null(strstr(err, "cycle"));
	free_registry(&tr);
}

/*
 * Two references whose schemas name each other without defining either
 * (a.A -> ["null", "a.B"], a.B -> ["null", "a.A"]): a cycle, refused.
 */
static void
test_references_naming_each_other(void **state)
{
	test_registry tr = {0};
	registry_status st = REGISTRY_TRANSIENT;
	char		err[512];
	char	   *composed;

	(void) state;
	add_subject(&tr, "sa", "[\"null\", \"a.B\"]",
				"[{\"name\": \"a.B\", \"subject\": \"sb\", \"version\": 1}]");
	add_subject(&tr, "sb", "[\"null\", \"a.A\"]",
				"[{\"name\": \"a.A\", \"subject\": \"sa\", \"version\": 1}]");
	composed = compose(&tr,
					   "{\"type\": \"record\", \"name\": \"Top\", \"fields\": [{\"name\": \"x\", \"type\": \"a.A\"}]}",
					   "[{\"name\": \"a.A\", \"subject\": \"sa\", \"version\": 1}]",
					   &st, err, sizeof(err));
	assert_null(composed);
	assert_int_equal(st, REGISTRY_OK);
	assert_non_null(strstr(err, "cycle"));
	assert_int_equal(tr.fetches, 2);
	free_registry(&tr);
}

/*
 * Fan-out: 8 references (the depth bound), each a union naming the next
 * one twice, the last a plain type with a 100 kB doc: each use inlines a
 * copy of the next, 2^7 copies of the last, 12.8 MB.  The composed size
 * is bounded: refused, the reason says so.
 */
static void
test_reference_fan_out_bounded(void **state)
{
	test_registry tr = {0};
	registry_status st = REGISTRY_TRANSIENT;
	char		err[512];
	char		subject[32],
				schema[256],
				refs[128];
	char	   *leaf = malloc(100 * 1000 + 64);
	char	   *composed;
	int			i;

	(void) state;
	for (i = 0; i < 7; i++)
	{
		snprintf(subject, sizeof(subject), "f%d", i);
		snprintf(schema, sizeof(schema), "[\"null\", {\"type\": \"array\", \"items\": \"f.N%d\"}, {\"type\": \"map\", \"values\": \"f.N%d\"}]",
				 i + 1, i + 1);
		snprintf(refs, sizeof(refs), "[{\"name\": \"f.N%d\", \"subject\": \"f%d\", \"version\": 1}]",
				 i + 1, i + 1);
		add_subject(&tr, subject, schema, refs);
	}
	strcpy(leaf, "{\"type\": \"string\", \"doc\": \"");
	memset(leaf + strlen(leaf), 'x', 100 * 1000);
	strcpy(leaf + strlen("{\"type\": \"string\", \"doc\": \"") + 100 * 1000, "\"}");
	add_subject(&tr, "f7", leaf, NULL);
	composed = compose(&tr,
					   "{\"type\": \"record\", \"name\": \"Top\", \"fields\": [{\"name\": \"x\", \"type\": \"f.N0\"}]}",
					   "[{\"name\": \"f.N0\", \"subject\": \"f0\", \"version\": 1}]",
					   &st, err, sizeof(err));
	if (composed != NULL)
		fail_msg("composed, %zu bytes", strlen(composed));
	assert_int_equal(st, REGISTRY_OK);
	if (strstr(err, "larger than") == NULL)
		fail_msg("not refused for its size: %s", err);
	free(leaf);
	free_registry(&tr);
}

/*
 * A referenced schema nested deeper than a schema is (arrays of arrays,
 * 1,500 levels, inlined at a use itself 40 levels deep): refused by the
 * nesting bound, not by the stack.
 */
static void
test_reference_nesting_bounded(void **state)
{
	test_registry tr = {0};
	registry_status st = REGISTRY_TRANSIENT;
	char		err[512];
	char	   *deep = malloc(1500 * 32 + 64);
	char	   *composed;
	size_t		len = 0;
	int			i;

	(void) state;
	for (i = 0; i < 1500; i++)
		len += sprintf(deep + len, "{\"type\":\"array\",\"items\":");
	len += sprintf(deep + len, "\"long\"");
	for (i = 0; i < 1500; i++)
		deep[len++] = '}';
	deep[len] = '\0';
	add_subject(&tr, "deep", deep, NULL);
	composed = compose(&tr,
					   "{\"type\": \"record\", \"name\": \"Top\", \"fields\": [{\"name\": \"x\", \"type\": \"d.Deep\"}]}",
					   "[{\"name\": \"d.Deep\", \"subject\": \"deep\", \"version\": 1}]",
					   &st, err, sizeof(err));
	assert_null(composed);
	assert_int_equal(st, REGISTRY_OK);
	assert_non_null(strstr(err, "nested deeper"));
	free(deep);
	free_registry(&tr);
}

/*
 * Names with odd characters (quotes, a newline, bytes that are not
 * UTF-8) in a reference that names itself: refused, and the reason is
 * valid UTF-8 (it goes to the database as text).
 */
static void
test_reference_odd_names(void **state)
{
	test_registry tr = {0};
	registry_status st = REGISTRY_TRANSIENT;
	char		err[512];
	char	   *composed;

	(void) state;
	add_subject(&tr, "odd \"subject\"\n",
				"[\"null\", \"o.\\\"x\\n\\u00e9\"]",
				NULL);
	composed = compose(&tr,
					   "{\"type\": \"record\", \"name\": \"Top\", \"fields\": [{\"name\": \"x\", \"type\": \"o.\\\"x\\n\\u00e9\"}]}",
					   "[{\"name\": \"o.\\\"x\\n\\u00e9\", \"subject\": \"odd \\\"subject\\\"\\n\", \"version\": 1}]",
					   &st, err, sizeof(err));
	assert_null(composed);
	assert_int_equal(st, REGISTRY_OK);
	assert_non_null(strstr(err, "cycle"));
	assert_true(utf8_is_valid(err));
	free_registry(&tr);
}

/*
 * What stays: a chain of references each a named type (a.T0 uses a.T1
 * ... within the depth bound), shared names defined once, composes.
 */
static void
test_acyclic_chain_composes(void **state)
{
	test_registry tr = {0};
	registry_status st = REGISTRY_TRANSIENT;
	char		err[512];
	char		subject[32],
				schema[256],
				refs[128];
	char	   *composed;
	int			i;

	(void) state;
	for (i = 0; i < 7; i++)
	{
		snprintf(subject, sizeof(subject), "s%d", i);
		if (i < 6)
		{
			snprintf(schema, sizeof(schema),
					 "{\"type\": \"record\", \"name\": \"T%d\", \"namespace\": \"a\", \"fields\": [{\"name\": \"n\", \"type\": [\"null\", \"a.T%d\"]}, {\"name\": \"m\", \"type\": [\"null\", \"a.T%d\"]}]}",
					 i, i + 1, i + 1);
			snprintf(refs, sizeof(refs), "[{\"name\": \"a.T%d\", \"subject\": \"s%d\", \"version\": 1}]",
					 i + 1, i + 1);
		}
		else
			snprintf(schema, sizeof(schema), "{\"type\": \"enum\", \"name\": \"T6\", \"namespace\": \"a\", \"symbols\": [\"X\"]}");
		add_subject(&tr, subject, schema, i < 6 ? refs : NULL);
	}
	composed = compose(&tr,
					   "{\"type\": \"record\", \"name\": \"Top\", \"fields\": [{\"name\": \"x\", \"type\": \"a.T0\"}, {\"name\": \"y\", \"type\": \"a.T3\"}]}",
					   "[{\"name\": \"a.T0\", \"subject\": \"s0\", \"version\": 1}]",
					   &st, err, sizeof(err));
	if (composed == NULL)
		fail_msg("not composed: %s", err);
	assert_non_null(strstr(composed, "\"symbols\""));
	/* each type defined once */
	assert_null(strstr(strstr(composed, "\"name\":\"T3\"") + 1, "\"name\":\"T3\""));
	free(composed);
	free_registry(&tr);
}

/*
 * main
 *		Every test, or those matching argv[1] (a cmocka test filter).
 */
int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_naming_itself),
		cmocka_unit_test(test_references_naming_each_other),
		cmocka_unit_test(test_reference_fan_out_bounded),
		cmocka_unit_test(test_reference_nesting_bounded),
		cmocka_unit_test(test_reference_odd_names),
		cmocka_unit_test(test_acyclic_chain_composes),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("registry_refs", tests, NULL, NULL);
}
