/*-------------------------------------------------------------------------
 *
 * registry_stub.c
 *	  The Schema Registry client of the fuzzers (fuzz_confluent.c,
 *	  decode_confluent.c): schemas the program gives instead of schemas
 *	  fetched over HTTP, compiled as registry.c compiles what it fetched.
 *
 * confluent.c asks registry_lookup and registry_lookup_guid for a schema
 * and hands it back with registry_release; here they answer from the
 * schemas added with registry_stub_add, the latest first, and know no GUID.
 * The schemas live until registry_stub_free, so that under
 * AddressSanitizer (test/sanitize/run) a leak is a report.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../avro_json.h"
#include "registry_stub.h"

static registry_schema **schemas;
static int	nschemas;
static int	capschemas;

/* where the schemas come from, for "not in ..." */
static const char *stub_source = "the schemas given";

/*
 * registry_stub_init
 *		Name where the schemas come from ("the file", "the corpus"): an id
 *		none of them has is "not in" it.
 */
void
registry_stub_init(const char *source)
{
	stub_source = source;
}

/*
 * registry_stub_out_of_memory
 *		A fuzzer that cannot hold its schemas cannot test anything.
 */
static void
registry_stub_out_of_memory(void)
{
	fprintf(stderr, "registry stub: out of memory\n");
	exit(2);
}

/*
 * registry_stub_add
 *		Add the schema of id, of type REGISTRY_AVRO or REGISTRY_JSON, whose
 *		text is text (len bytes).  An Avro schema is compiled as registry.c
 *		does with what it fetched: one avro-c refuses is kept with its error
 *		in compile_error, and its values are rejected with it.
 */
registry_schema *
registry_stub_add(int32_t id, registry_schema_type type, const char *text,
				  size_t len)
{
	registry_schema *s = calloc(1, sizeof(*s));
	char		err[512];

	if (s == NULL)
		registry_stub_out_of_memory();
	if (nschemas == capschemas)
	{
		int			cap = capschemas ? capschemas * 2 : 64;
		registry_schema **more = realloc(schemas, sizeof(*more) * cap);

		if (more == NULL)
			registry_stub_out_of_memory();
		schemas = more;
		capschemas = cap;
	}
	s->id = id;
	s->refs = 1;
	s->type = type;
	if (type == REGISTRY_AVRO)
	{
		snprintf(s->type_name, sizeof(s->type_name), "AVRO");
		s->avro = avro_json_compile(text, len, err, sizeof(err));
		if (s->avro == NULL && (s->compile_error = strdup(err)) == NULL)
			registry_stub_out_of_memory();
	}
	else
		snprintf(s->type_name, sizeof(s->type_name), "JSON");
	schemas[nschemas++] = s;
	return s;
}

/*
 * registry_stub_find
 *		The schema of id, the latest added; NULL when none has it.
 */
registry_schema *
registry_stub_find(int32_t id)
{
	int			i;

	for (i = nschemas; i-- > 0;)
		if (schemas[i]->id == id)
			return schemas[i];
	return NULL;
}

/*
 * registry_stub_count
 *		How many schemas were added.
 */
int
registry_stub_count(void)
{
	return nschemas;
}

/*
 * registry_stub_free
 *		Release every schema added.
 */
void
registry_stub_free(void)
{
	int			i;

	for (i = 0; i < nschemas; i++)
	{
		avro_json_free(schemas[i]->avro);
		free(schemas[i]->compile_error);
		free(schemas[i]);
	}
	free(schemas);
	schemas = NULL;
	nschemas = capschemas = 0;
}

/*
 * registry_lookup
 *		The schema of an id given; unknown otherwise.
 */
registry_status
registry_lookup(registry *r, int32_t id, registry_schema **out,
				char *err, size_t errlen)
{
	(void) r;
	*out = registry_stub_find(id);
	if (*out != NULL)
		return REGISTRY_OK;
	snprintf(err, errlen, "not in %s", stub_source);
	return REGISTRY_UNKNOWN_ID;
}

/*
 * registry_lookup_guid
 *		No schema is given by GUID.
 */
registry_status
registry_lookup_guid(registry *r, const char *guid, registry_schema **out,
					 char *err, size_t errlen)
{
	(void) r;
	(void) guid;
	(void) out;
	snprintf(err, errlen, "not in %s", stub_source);
	return REGISTRY_UNKNOWN_ID;
}

/*
 * registry_release
 *		The schemas live until registry_stub_free.
 */
void
registry_release(registry *r, registry_schema *s)
{
	(void) r;
	(void) s;
}
