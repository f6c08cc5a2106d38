/*-------------------------------------------------------------------------
 *
 * registry_refs.c
 *	  A schema with references composed into one schema text avro-c can
 *	  compile.
 *
 * A schema may name types kept as schemas of other subjects ("references":
 * name, subject, version in the registry's answer, as Confluent's
 * serializers register nested records).  avro-c has no way to be told of
 * named types beforehand, so the referenced schemas (fetched through the
 * caller's callback, theirs in turn, bounded in depth and number) are put
 * into the schema's JSON at the first use of each name, in the order
 * avro-c parses it; a type two references share is defined once.
 *
 * Nothing a registry serves may crash or exhaust the feeder, so the walk
 * is bounded: a reference met again while its own schema is being put in
 * (a schema that names its reference without defining it, or two that
 * name each other so) is a cycle; the schema nests at most
 * REGISTRY_MAX_SCHEMA_NESTING levels, references put in included; the
 * referenced schemas' texts and the composed schema are at most
 * REGISTRY_MAX_COMPOSED_BYTES.  Past any bound the schema is not usable,
 * the reason saying which, and its messages are quarantined as for a
 * schema avro-c refuses.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_refs.h"
#include "utf8.h"

/*
 * Bounds of a schema's references: levels of references of references,
 * and schemas in all.
 */
#define REGISTRY_MAX_REFERENCE_DEPTH 8
#define REGISTRY_MAX_REFERENCES 64

/*
 * Bounds of the composition: levels of nesting of the composed schema
 * (arrays, maps, unions, records' fields), and the bytes of the referenced
 * schemas' texts, fetched or put in (each copy counted).
 */
#define REGISTRY_MAX_SCHEMA_NESTING 256
#define REGISTRY_MAX_COMPOSED_BYTES (4 * 1024 * 1024)

/*
 * The walk that composes a schema with its references: the referenced
 * schemas by the names the schema uses for them, the full names defined so
 * far.
 */
typedef struct registry_ref
{
	char	   *name;			/* the reference's name: a full name */
	json_t	   *schema;			/* its schema's JSON */
	size_t		size;			/* its schema's text, in bytes */
	int			inlining;		/* being put in: met again, a cycle */
} registry_ref;

typedef struct registry_compose
{
	registry_refs_fetch fetch;	/* a subject's version, from the registry */
	void	   *arg;
	registry_ref refs[REGISTRY_MAX_REFERENCES];
	int			nrefs;
	char	  **defined;
	int			ndefined;
	int			cap;
	size_t		bytes;			/* of the references put in so far */
	int			failed;			/* out of memory */
	int			unusable;		/* past a bound: err says which */
	char	   *err;
	size_t		errlen;
} registry_compose;

/*
 * registry_compose_free
 *		Release what a composition gathered.
 */
static void
registry_compose_free(registry_compose *c)
{
	int			i;

	for (i = 0; i < c->nrefs; i++)
	{
		free(c->refs[i].name);
		json_decref(c->refs[i].schema);
	}
	for (i = 0; i < c->ndefined; i++)
		free(c->defined[i]);
	free(c->defined);
}

/*
 * registry_gather
 *		Fetch (c->fetch) the schemas references names (a registry answer's
 *		"references": name, subject, version), and theirs in turn, at most
 *		REGISTRY_MAX_REFERENCE_DEPTH levels deep and REGISTRY_MAX_REFERENCES
 *		in all, each once, into c.  A failure of the registry is returned
 *		as for an id (a subject or version it does not have: unknown); a
 *		reference the feeder cannot use (malformed, not Avro, too many, too
 *		deep) sets *unusable with err saying why.
 */
static registry_status
registry_gather(registry_compose *c, json_t *references, int depth,
				int *unusable, char *err, size_t errlen)
{
	size_t		i;

	for (i = 0; i < json_array_size(references); i++)
	{
		json_t	   *ref = json_array_get(references, i);
		const char *name = json_string_value(json_object_get(ref, "name"));
		const char *subject = json_string_value(json_object_get(ref, "subject"));
		json_t	   *version = json_object_get(ref, "version");
		const char *type;
		char		what[320];
		registry_status st;
		json_t	   *doc,
				   *schema;
		json_error_t jerr;
		int			k;

		if (name == NULL || subject == NULL || !json_is_integer(version))
		{
			snprintf(err, errlen, "a reference of the schema is not a name, a subject and a version");
			*unusable = 1;
			return REGISTRY_OK;
		}
		for (k = 0; k < c->nrefs && strcmp(c->refs[k].name, name) != 0; k++)
			;
		if (k < c->nrefs)
			continue;			/* already there */
		if (depth > REGISTRY_MAX_REFERENCE_DEPTH || c->nrefs == REGISTRY_MAX_REFERENCES)
		{
			snprintf(err, errlen,
					 "the schema's references go deeper than %d levels or number more than %d (reference %.200s)",
					 REGISTRY_MAX_REFERENCE_DEPTH, REGISTRY_MAX_REFERENCES, name);
			*unusable = 1;
			return REGISTRY_OK;
		}
		snprintf(what, sizeof(what), "reference %.120s (subject %.120s version %lld)",
				 name, subject, (long long) json_integer_value(version));
		utf8_fix(what);
		st = c->fetch(c->arg, subject, (long long) json_integer_value(version),
					  what, &doc, err, errlen);
		if (st != REGISTRY_OK)
			return st;
		type = json_string_value(json_object_get(doc, "schemaType"));
		schema = json_loads(json_string_value(json_object_get(doc, "schema")),
							JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
		if ((type != NULL && strcmp(type, "AVRO") != 0) || schema == NULL)
		{
			snprintf(err, errlen, "%.320s is not an Avro schema in JSON", what);
			json_decref(schema);
			json_decref(doc);
			*unusable = 1;
			return REGISTRY_OK;
		}
		c->bytes += json_string_length(json_object_get(doc, "schema"));
		if (c->bytes > REGISTRY_MAX_COMPOSED_BYTES)
		{
			snprintf(err, errlen,
					 "the schema's references are larger than %d bytes in all (at %.320s)",
					 REGISTRY_MAX_COMPOSED_BYTES, what);
			utf8_fix(err);
			json_decref(schema);
			json_decref(doc);
			*unusable = 1;
			return REGISTRY_OK;
		}
		if ((c->refs[c->nrefs].name = strdup(name)) == NULL)
		{
			snprintf(err, errlen, "out of memory");
			json_decref(schema);
			json_decref(doc);
			return REGISTRY_TRANSIENT;
		}
		c->refs[c->nrefs].schema = schema;
		c->refs[c->nrefs].size = json_string_length(json_object_get(doc, "schema"));
		c->refs[c->nrefs].inlining = 0;
		c->nrefs++;
		st = registry_gather(c, json_object_get(doc, "references"), depth + 1,
							 unusable, err, errlen);
		json_decref(doc);
		if (st != REGISTRY_OK || *unusable)
			return st;
	}
	return REGISTRY_OK;
}

/*
 * registry_is_primitive
 *		Whether an Avro type name is a primitive's.
 */
static int
registry_is_primitive(const char *name)
{
	static const char *const primitives[] = {
		"null", "boolean", "int", "long", "float", "double", "bytes", "string"
	};
	size_t		i;

	for (i = 0; i < sizeof(primitives) / sizeof(primitives[0]); i++)
		if (strcmp(name, primitives[i]) == 0)
			return 1;
	return 0;
}

/*
 * registry_full_name
 *		The full name of name used or defined in namespace ns (NULL or "":
 *		none), malloc'ed: a name with a dot is full already.
 */
static char *
registry_full_name(const char *name, const char *ns)
{
	char	   *full;

	if (strchr(name, '.') != NULL || ns == NULL || ns[0] == '\0')
		return strdup(name);
	full = malloc(strlen(ns) + strlen(name) + 2);
	if (full)
		sprintf(full, "%s.%s", ns, name);
	return full;
}

/*
 * registry_defined
 *		Whether full is defined already; with add, define it if not.
 */
static int
registry_defined(registry_compose *c, const char *full, int add)
{
	int			i;

	for (i = 0; i < c->ndefined; i++)
		if (strcmp(c->defined[i], full) == 0)
			return 1;
	if (!add)
		return 0;
	if (c->ndefined == c->cap)
	{
		int			cap = c->cap ? c->cap * 2 : 16;
		char	  **grown = realloc(c->defined, sizeof(char *) * (size_t) cap);

		if (grown == NULL)
		{
			c->failed = 1;
			return 0;
		}
		c->defined = grown;
		c->cap = cap;
	}
	if ((c->defined[c->ndefined] = strdup(full)) == NULL)
		c->failed = 1;
	else
		c->ndefined++;
	return 0;
}

/*
 * registry_unusable
 *		The composition cannot go on: say why (printf-style), once.
 */
static void
registry_unusable(registry_compose *c, const char *fmt,...)
{
	va_list		ap;

	if (c->unusable)
		return;
	c->unusable = 1;
	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	utf8_fix(c->err);
}

/*
 * registry_inline
 *		Walk a schema's JSON in the order avro-c parses it (namespace ns
 *		around it, depth levels deep), and put at the first use of each
 *		referenced name the referenced schema itself, walked in turn, so
 *		that avro-c meets each named type's definition before its other
 *		uses.  A type defined twice (two references sharing one) keeps its
 *		first definition; the second becomes its name.  A reference met
 *		while its own schema is being walked, not defined by it, is a
 *		cycle; the nesting and the bytes put in are bounded (see the
 *		file's header): past those, c->unusable and the walk stops.
 *		Returns the node that replaces node (a new reference), or NULL to
 *		keep it.
 */
static json_t *
registry_inline(json_t *node, const char *ns, int depth, registry_compose *c)
{
	if (c->unusable || c->failed)
		return NULL;
	if (depth > REGISTRY_MAX_SCHEMA_NESTING)
	{
		registry_unusable(c, "the schema, composed with its references, is nested deeper than %d levels",
						  REGISTRY_MAX_SCHEMA_NESTING);
		return NULL;
	}
	if (json_is_string(node))
	{
		const char *name = json_string_value(node);
		char	   *full;
		json_t	   *copy = NULL,
				   *walked;
		registry_ref *ref = NULL;
		int			i;

		if (registry_is_primitive(name) || (full = registry_full_name(name, ns)) == NULL)
			return NULL;
		for (i = 0; i < c->nrefs; i++)
			if (strcmp(c->refs[i].name, full) == 0 && !registry_defined(c, full, 0))
			{
				ref = &c->refs[i];
				break;
			}
		free(full);
		if (ref == NULL)
			return NULL;
		if (ref->inlining)
		{
			registry_unusable(c, "the schema's references form a cycle: reference %.200s is used by its own schema, which does not define it",
							  ref->name);
			return NULL;
		}
		c->bytes += ref->size;
		if (c->bytes > REGISTRY_MAX_COMPOSED_BYTES)
		{
			registry_unusable(c, "the schema, composed with its references, is larger than %d bytes (reference %.200s used again and again)",
							  REGISTRY_MAX_COMPOSED_BYTES, ref->name);
			return NULL;
		}
		if ((copy = json_deep_copy(ref->schema)) == NULL)
		{
			c->failed = 1;
			return NULL;
		}
		ref->inlining = 1;
		walked = registry_inline(copy, ns, depth + 1, c);
		ref->inlining = 0;
		if (walked)
		{
			json_decref(copy);
			copy = walked;
		}
		return copy;
	}
	if (json_is_array(node))
	{
		size_t		i;

		for (i = 0; i < json_array_size(node); i++)
		{
			json_t	   *walked = registry_inline(json_array_get(node, i), ns, depth + 1, c);

			if (walked)
				json_array_set_new(node, i, walked);
		}
		return NULL;
	}
	if (json_is_object(node))
	{
		json_t	   *type = json_object_get(node, "type");
		const char *kind = json_string_value(type);
		const char *name = json_string_value(json_object_get(node, "name"));
		const char *own_ns = json_string_value(json_object_get(node, "namespace"));
		json_t	   *walked;

		if (kind && name && (strcmp(kind, "record") == 0 || strcmp(kind, "error") == 0 ||
							 strcmp(kind, "enum") == 0 || strcmp(kind, "fixed") == 0))
		{
			char	   *full = registry_full_name(name, own_ns ? own_ns : ns);
			char	   *inner_ns;
			json_t	   *fields = json_object_get(node, "fields");
			size_t		i;

			if (full == NULL)
			{
				c->failed = 1;
				return NULL;
			}
			if (registry_defined(c, full, 1))
			{
				walked = json_string(full);
				free(full);
				return walked;
			}
			/* the names inside are in the namespace of the full name */
			inner_ns = full;
			if (strrchr(inner_ns, '.'))
				*strrchr(inner_ns, '.') = '\0';
			else
				inner_ns[0] = '\0';
			for (i = 0; i < json_array_size(fields); i++)
			{
				json_t	   *field = json_array_get(fields, i);

				if ((walked = registry_inline(json_object_get(field, "type"), inner_ns, depth + 1, c)))
					json_object_set_new(field, "type", walked);
			}
			free(full);
			return NULL;
		}
		if (kind && strcmp(kind, "array") == 0)
		{
			if ((walked = registry_inline(json_object_get(node, "items"), ns, depth + 1, c)))
				json_object_set_new(node, "items", walked);
			return NULL;
		}
		if (kind && strcmp(kind, "map") == 0)
		{
			if ((walked = registry_inline(json_object_get(node, "values"), ns, depth + 1, c)))
				json_object_set_new(node, "values", walked);
			return NULL;
		}
		if (type && (walked = registry_inline(type, ns, depth + 1, c)))
			json_object_set_new(node, "type", walked);
	}
	return NULL;
}

/*
 * registry_refs_compose
 *		The text of a schema whose registry answer has references, composed
 *		with them (see registry_inline), malloc'ed; fetch gets each
 *		referenced subject's version.  NULL with *st and err set when the
 *		registry failed; NULL with *st REGISTRY_OK and err set when the
 *		schema cannot be composed (then it is not usable).
 */
char *
registry_refs_compose(const char *text, json_t *references,
					  registry_refs_fetch fetch, void *arg,
					  registry_status *st, char *err, size_t errlen)
{
	registry_compose c;
	json_error_t jerr;
	json_t	   *schema,
			   *walked;
	int			unusable = 0;
	char	   *composed = NULL;

	memset(&c, 0, sizeof(c));
	c.fetch = fetch;
	c.arg = arg;
	*st = registry_gather(&c, references, 1, &unusable, err, errlen);
	if (*st != REGISTRY_OK || unusable)
	{
		utf8_fix(err);
		registry_compose_free(&c);
		return NULL;
	}
	schema = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (schema == NULL)
	{
		snprintf(err, errlen, "the schema is not JSON: %s", jerr.text);
		registry_compose_free(&c);
		return NULL;
	}
	c.err = err;
	c.errlen = errlen;
	if ((walked = registry_inline(schema, NULL, 1, &c)))
	{
		json_decref(schema);
		schema = walked;
	}
	if (c.unusable)
	{
		/* err says why: the schema is not usable */
		json_decref(schema);
		registry_compose_free(&c);
		return NULL;
	}
	if (!c.failed)
		composed = json_dumps(schema, JSON_COMPACT | JSON_ENCODE_ANY);
	if (composed == NULL)
	{
		snprintf(err, errlen, "out of memory");
		*st = REGISTRY_TRANSIENT;
	}
	json_decref(schema);
	registry_compose_free(&c);
	return composed;
}
