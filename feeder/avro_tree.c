/*-------------------------------------------------------------------------
 *
 * avro_tree.c
 *	  An Avro writer schema as a tree of nodes that the decoder walks
 *	  (avro_json.c): named types resolved by full name, as the Avro
 *	  specification says, logical types kept.
 *
 * The schema's JSON (already accepted by avro-c: avro_json_compile) is
 * walked once, in document order.  A named type (record, error, enum,
 * fixed) gets its full name: its name when that has a dot; else its
 * "namespace" attribute and its name; else the enclosing namespace (the
 * namespace of the innermost named type around it) and its name.  A
 * reference by a dotted name is that full name; by a plain name, the name
 * in the enclosing namespace, else in no namespace (what Java's parser
 * does).  Aliases do not name a type in a reference (in Java's parser as in
 * avro-c they serve schema resolution, which a writer schema alone does not
 * need).  A record is known by its name before its fields are read, so a
 * field may refer to it: a recursive type becomes a cycle in the tree.
 * The JSON may hold U+0000 (in a default, a doc); no name, namespace,
 * alias, symbol or type name may: such a schema is refused, as Java's
 * parser refuses it.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "avro_tree.h"

/* Deeper schemas are refused (jansson reads no deeper than 2048 levels). */
#define AVRO_TREE_MAX_DEPTH 4096

struct avro_tree
{
	avro_tree_node *root;
	avro_tree_node **nodes;		/* every node, to free */
	int			nnodes;
	int			capnodes;
	json_t	   *names;			/* full name -> its node's index in nodes */
};

/*
 * avro_tree_new_node
 *		A zeroed node of kind, owned by the tree; NULL when out of memory.
 */
static avro_tree_node *
avro_tree_new_node(avro_tree *t, avro_tree_kind kind)
{
	avro_tree_node *node;

	if (t->nnodes == t->capnodes)
	{
		int			cap = t->capnodes ? t->capnodes * 2 : 32;
		avro_tree_node **nodes = realloc(t->nodes, sizeof(*nodes) * (size_t) cap);

		if (nodes == NULL)
			return NULL;
		t->nodes = nodes;
		t->capnodes = cap;
	}
	node = calloc(1, sizeof(*node));
	if (node == NULL)
		return NULL;
	node->kind = kind;
	t->nodes[t->nnodes++] = node;
	return node;
}

/*
 * avro_tree_has_nul
 *		Whether v is a string holding U+0000 (C strings would cut it there),
 *		or an array holding such a string (aliases, symbols).
 */
static int
avro_tree_has_nul(json_t *v)
{
	size_t		i;

	if (json_is_string(v))
		return strlen(json_string_value(v)) != json_string_length(v);
	for (i = 0; i < json_array_size(v); i++)
		if (avro_tree_has_nul(json_array_get(v, i)))
			return 1;
	return 0;
}

/*
 * avro_tree_nul_name
 *		The error of a name (or namespace, alias, symbol, type name) with
 *		U+0000: NULL.
 */
static void *
avro_tree_nul_name(char *err, size_t errlen)
{
	snprintf(err, errlen, "a name, namespace, alias, symbol or type name holds U+0000, which no Avro name may");
	return NULL;
}

/*
 * avro_tree_find
 *		The named type of a full name, or NULL.
 */
static avro_tree_node *
avro_tree_find(const avro_tree *t, const char *fullname)
{
	json_t	   *index = json_object_get(t->names, fullname);

	return index ? t->nodes[json_integer_value(index)] : NULL;
}

/*
 * avro_tree_join
 *		"ns.name", or name when ns is NULL or empty; malloc'd (NULL: out of
 *		memory).
 */
static char *
avro_tree_join(const char *ns, const char *name)
{
	char	   *s;

	if (ns == NULL || *ns == '\0')
		return strdup(name);
	s = malloc(strlen(ns) + strlen(name) + 2);
	if (s)
		sprintf(s, "%s.%s", ns, name);
	return s;
}

/*
 * avro_tree_primitive
 *		The kind of a primitive type's name; -1 when name is none.
 */
static int
avro_tree_primitive(const char *name)
{
	static const struct
	{
		const char *name;
		avro_tree_kind kind;
	}			prims[] = {
		{"null", AVRO_TREE_NULL}, {"boolean", AVRO_TREE_BOOLEAN},
		{"int", AVRO_TREE_INT}, {"long", AVRO_TREE_LONG},
		{"float", AVRO_TREE_FLOAT}, {"double", AVRO_TREE_DOUBLE},
		{"bytes", AVRO_TREE_BYTES}, {"string", AVRO_TREE_STRING},
	};
	size_t		i;

	for (i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (strcmp(prims[i].name, name) == 0)
			return (int) prims[i].kind;
	return -1;
}

/*
 * avro_tree_set_logical
 *		Set node's logical type from a type object's "logicalType" (and a
 *		decimal's "scale"), when the logical type fits the node's kind; one
 *		that does not fit is ignored, as the specification says.
 */
static void
avro_tree_set_logical(avro_tree_node *node, json_t *obj)
{
	static const struct
	{
		const char *name;
		avro_tree_kind kind;
		avro_tree_logical logical;
	}			logicals[] = {
		{"decimal", AVRO_TREE_BYTES, AVRO_TREE_DECIMAL},
		{"decimal", AVRO_TREE_FIXED, AVRO_TREE_DECIMAL},
		{"date", AVRO_TREE_INT, AVRO_TREE_DATE},
		{"time-millis", AVRO_TREE_INT, AVRO_TREE_TIME_MILLIS},
		{"time-micros", AVRO_TREE_LONG, AVRO_TREE_TIME_MICROS},
		{"timestamp-millis", AVRO_TREE_LONG, AVRO_TREE_TIMESTAMP_MILLIS},
		{"timestamp-micros", AVRO_TREE_LONG, AVRO_TREE_TIMESTAMP_MICROS},
		{"local-timestamp-millis", AVRO_TREE_LONG, AVRO_TREE_LOCAL_TIMESTAMP_MILLIS},
		{"local-timestamp-micros", AVRO_TREE_LONG, AVRO_TREE_LOCAL_TIMESTAMP_MICROS},
	};
	const char *l = json_string_value(json_object_get(obj, "logicalType"));
	size_t		i;

	if (l == NULL || avro_tree_has_nul(json_object_get(obj, "logicalType")))
		return;
	for (i = 0; i < sizeof(logicals) / sizeof(logicals[0]); i++)
		if (logicals[i].kind == node->kind && strcmp(logicals[i].name, l) == 0)
		{
			node->logical = logicals[i].logical;
			if (node->logical == AVRO_TREE_DECIMAL)
			{
				json_t	   *scale = json_object_get(obj, "scale");

				node->scale = json_is_integer(scale) ? json_integer_value(scale) : 0;
			}
			return;
		}
}

/*
 * avro_tree_room
 *		Room for n children and labels in node.
 */
static int
avro_tree_room(avro_tree_node *node, size_t n, int with_labels)
{
	node->children = calloc(n ? n : 1, sizeof(*node->children));
	if (with_labels)
		node->labels = calloc(n ? n : 1, sizeof(*node->labels));
	return node->children == NULL || (with_labels && node->labels == NULL) ? -1 : 0;
}

static avro_tree_node *avro_tree_parse(avro_tree *t, json_t *json,
									   const char *ns, int depth,
									   char *err, size_t errlen);

/*
 * avro_tree_reference
 *		The type a name names in namespace ns: a primitive, or a named type
 *		defined before (dotted: as it is; plain: in ns, else in no
 *		namespace).
 */
static avro_tree_node *
avro_tree_reference(avro_tree *t, const char *name, const char *ns,
					char *err, size_t errlen)
{
	avro_tree_node *node = NULL;
	int			prim = avro_tree_primitive(name);

	if (prim >= 0)
		return avro_tree_new_node(t, (avro_tree_kind) prim);
	if (strchr(name, '.') == NULL && ns && *ns)
	{
		char	   *full = avro_tree_join(ns, name);

		if (full == NULL)
		{
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		node = avro_tree_find(t, full);
		free(full);
	}
	if (node == NULL)
		node = avro_tree_find(t, name);
	if (node == NULL)
		snprintf(err, errlen, "type \"%.200s\" is not defined before its use (namespace \"%.200s\")",
				 name, ns ? ns : "");
	return node;
}

/*
 * avro_tree_named
 *		A record, error, enum or fixed defined by obj, in enclosing
 *		namespace ns: named by its full name, then read.
 */
static avro_tree_node *
avro_tree_named(avro_tree *t, json_t *obj, const char *type, const char *ns,
				int depth, char *err, size_t errlen)
{
	const char *name = json_string_value(json_object_get(obj, "name"));
	json_t	   *nsattr = json_object_get(obj, "namespace");
	avro_tree_node *node;
	const char *dot;
	char	   *own_ns;
	size_t		i,
				n;

	if (name == NULL)
	{
		snprintf(err, errlen, "a %s has no name", type);
		return NULL;
	}
	if (avro_tree_has_nul(json_object_get(obj, "name")) || avro_tree_has_nul(nsattr) ||
		avro_tree_has_nul(json_object_get(obj, "aliases")) ||
		avro_tree_has_nul(json_object_get(obj, "symbols")))
		return avro_tree_nul_name(err, errlen);
	node = avro_tree_new_node(t, strcmp(type, "enum") == 0 ? AVRO_TREE_ENUM :
							  strcmp(type, "fixed") == 0 ? AVRO_TREE_FIXED :
							  AVRO_TREE_RECORD);
	if (node == NULL)
		goto oom;
	node->fullname = strchr(name, '.') ? strdup(name) :
		avro_tree_join(json_is_string(nsattr) ? json_string_value(nsattr) : ns, name);
	if (node->fullname == NULL)
		goto oom;
	if (avro_tree_find(t, node->fullname) != NULL)
	{
		snprintf(err, errlen, "type \"%.200s\" is defined twice", node->fullname);
		return NULL;
	}
	if (json_object_set_new(t->names, node->fullname, json_integer(t->nnodes - 1)) != 0)
		goto oom;
	switch (node->kind)
	{
		case AVRO_TREE_FIXED:
			node->size = (size_t) json_integer_value(json_object_get(obj, "size"));
			if (!json_is_integer(json_object_get(obj, "size")) ||
				json_integer_value(json_object_get(obj, "size")) < 0)
			{
				snprintf(err, errlen, "fixed \"%.200s\" has no size", node->fullname);
				return NULL;
			}
			avro_tree_set_logical(node, obj);
			return node;
		case AVRO_TREE_ENUM:
			{
				json_t	   *symbols = json_object_get(obj, "symbols");

				n = json_array_size(symbols);
				if (avro_tree_room(node, n, 1) != 0)
					goto oom;
				for (i = 0; i < n; i++)
				{
					const char *sym = json_string_value(json_array_get(symbols, i));

					if (sym == NULL)
					{
						snprintf(err, errlen, "enum \"%.200s\" has a symbol that is not a string",
								 node->fullname);
						return NULL;
					}
					if ((node->labels[i] = strdup(sym)) == NULL)
						goto oom;
					node->n = (int) i + 1;
				}
				return node;
			}
		default:
			break;
	}

	/* a record: its fields, in its own namespace */
	dot = strrchr(node->fullname, '.');
	own_ns = dot ? strndup(node->fullname, (size_t) (dot - node->fullname)) : strdup("");
	if (own_ns == NULL)
		goto oom;
	n = json_array_size(json_object_get(obj, "fields"));
	if (avro_tree_room(node, n, 1) != 0)
	{
		free(own_ns);
		goto oom;
	}
	for (i = 0; i < n; i++)
	{
		json_t	   *field = json_array_get(json_object_get(obj, "fields"), i);
		const char *fname = json_string_value(json_object_get(field, "name"));

		if (fname == NULL)
		{
			snprintf(err, errlen, "a field of record \"%.200s\" has no name", node->fullname);
			node = NULL;
			break;
		}
		if (avro_tree_has_nul(json_object_get(field, "name")) ||
			avro_tree_has_nul(json_object_get(field, "aliases")))
		{
			node = avro_tree_nul_name(err, errlen);
			break;
		}
		node->labels[i] = strdup(fname);
		node->children[i] = node->labels[i] == NULL ? NULL :
			avro_tree_parse(t, json_object_get(field, "type"), own_ns, depth + 1, err, errlen);
		if (node->children[i] == NULL)
		{
			if (node->labels[i] == NULL)
				snprintf(err, errlen, "out of memory");
			node->n = (int) i + 1;	/* free the label too */
			node = NULL;
			break;
		}
		node->n = (int) i + 1;
	}
	free(own_ns);
	return node;

oom:
	snprintf(err, errlen, "out of memory");
	return NULL;
}

/*
 * avro_tree_parse
 *		The node of a schema's JSON in enclosing namespace ns; NULL with err
 *		filled when it is not a schema.
 */
static avro_tree_node *
avro_tree_parse(avro_tree *t, json_t *json, const char *ns, int depth,
				char *err, size_t errlen)
{
	avro_tree_node *node;
	json_t	   *type;
	const char *tname;
	size_t		i;

	if (depth > AVRO_TREE_MAX_DEPTH)
	{
		snprintf(err, errlen, "the schema nests deeper than %d levels", AVRO_TREE_MAX_DEPTH);
		return NULL;
	}
	if (avro_tree_has_nul(json_is_string(json) ? json : json_object_get(json, "type")))
		return avro_tree_nul_name(err, errlen);
	if (json_is_string(json))
		return avro_tree_reference(t, json_string_value(json), ns, err, errlen);
	if (json_is_array(json))
	{
		node = avro_tree_new_node(t, AVRO_TREE_UNION);
		if (node == NULL || avro_tree_room(node, json_array_size(json), 0) != 0)
		{
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		for (i = 0; i < json_array_size(json); i++)
		{
			node->children[i] = avro_tree_parse(t, json_array_get(json, i), ns,
												depth + 1, err, errlen);
			if (node->children[i] == NULL)
				return NULL;
			node->n = (int) i + 1;
		}
		return node;
	}
	if (!json_is_object(json))
	{
		snprintf(err, errlen, "a type is neither a name, a union nor an object");
		return NULL;
	}
	type = json_object_get(json, "type");
	if (!json_is_string(type))
		return avro_tree_parse(t, type, ns, depth + 1, err, errlen);
	tname = json_string_value(type);
	if (avro_tree_primitive(tname) >= 0)
	{
		node = avro_tree_new_node(t, (avro_tree_kind) avro_tree_primitive(tname));
		if (node == NULL)
			snprintf(err, errlen, "out of memory");
		else
			avro_tree_set_logical(node, json);
		return node;
	}
	if (strcmp(tname, "record") == 0 || strcmp(tname, "error") == 0 ||
		strcmp(tname, "enum") == 0 || strcmp(tname, "fixed") == 0)
		return avro_tree_named(t, json, tname, ns, depth, err, errlen);
	if (strcmp(tname, "array") == 0 || strcmp(tname, "map") == 0)
	{
		node = avro_tree_new_node(t, tname[0] == 'a' ? AVRO_TREE_ARRAY : AVRO_TREE_MAP);
		if (node == NULL || avro_tree_room(node, 1, 0) != 0)
		{
			snprintf(err, errlen, "out of memory");
			return NULL;
		}
		node->children[0] = avro_tree_parse(t, json_object_get(json, tname[0] == 'a' ? "items" : "values"),
											ns, depth + 1, err, errlen);
		if (node->children[0] == NULL)
			return NULL;
		node->n = 1;
		return node;
	}
	return avro_tree_reference(t, tname, ns, err, errlen);
}

/*
 * avro_tree_build
 *		The tree of a schema's JSON; NULL with err filled when it is not a
 *		schema (a name used before its definition, say).
 */
avro_tree *
avro_tree_build(json_t *schema, char *err, size_t errlen)
{
	avro_tree  *t = calloc(1, sizeof(*t));

	if (t == NULL)
	{
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->names = json_object();
	t->root = t->names == NULL ? NULL :
		avro_tree_parse(t, schema, "", 0, err, errlen);
	if (t->names == NULL)
		snprintf(err, errlen, "out of memory");
	if (t->root == NULL)
	{
		avro_tree_free(t);
		return NULL;
	}
	return t;
}

/*
 * avro_tree_root
 *		The node of the whole schema.
 */
const avro_tree_node *
avro_tree_root(const avro_tree *t)
{
	return t->root;
}

/*
 * avro_tree_free
 *		Release a tree and all its nodes.
 */
void
avro_tree_free(avro_tree *t)
{
	int			i,
				j;

	if (t == NULL)
		return;
	for (i = 0; i < t->nnodes; i++)
	{
		avro_tree_node *node = t->nodes[i];

		if (node->labels)
			for (j = 0; j < node->n; j++)
				free(node->labels[j]);
		free(node->labels);
		free(node->children);
		free(node->fullname);
		free(node);
	}
	free(t->nodes);
	json_decref(t->names);
	free(t);
}
