/*-------------------------------------------------------------------------
 *
 * avro_tree.h
 *	  An Avro writer schema as a tree of nodes that the decoder walks
 *	  (avro_json.c): named types resolved by full name, as the Avro
 *	  specification says, logical types kept.
 *
 * A tree is immutable once built: several lanes' threads may decode with
 * it at once.  A recursive type is a cycle in the tree (a reference points
 * back at its definition).
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_AVRO_TREE_H
#define FEEDER_AVRO_TREE_H

#include <stddef.h>

#include <jansson.h>

typedef enum avro_tree_kind
{
	AVRO_TREE_NULL,
	AVRO_TREE_BOOLEAN,
	AVRO_TREE_INT,
	AVRO_TREE_LONG,
	AVRO_TREE_FLOAT,
	AVRO_TREE_DOUBLE,
	AVRO_TREE_BYTES,
	AVRO_TREE_STRING,
	AVRO_TREE_RECORD,
	AVRO_TREE_ENUM,
	AVRO_TREE_ARRAY,
	AVRO_TREE_MAP,
	AVRO_TREE_UNION,
	AVRO_TREE_FIXED
} avro_tree_kind;

/* The logical types the mapping renders; others are their base type. */
typedef enum avro_tree_logical
{
	AVRO_TREE_PLAIN,
	AVRO_TREE_DECIMAL,			/* bytes, fixed */
	AVRO_TREE_DATE,				/* int */
	AVRO_TREE_TIME_MILLIS,		/* int */
	AVRO_TREE_TIME_MICROS,		/* long */
	AVRO_TREE_TIMESTAMP_MILLIS, /* long */
	AVRO_TREE_TIMESTAMP_MICROS, /* long */
	AVRO_TREE_LOCAL_TIMESTAMP_MILLIS,	/* long */
	AVRO_TREE_LOCAL_TIMESTAMP_MICROS	/* long */
} avro_tree_logical;

typedef struct avro_tree_node
{
	avro_tree_kind kind;
	avro_tree_logical logical;
	long long	scale;			/* a decimal's scale (0 when not given) */
	size_t		size;			/* a fixed's size */
	char	   *fullname;		/* a named type's full name; else NULL */
	int			n;				/* fields, symbols or branches */
	struct avro_tree_node **children;	/* fields' types, branches; an
										 * array's items or a map's values
										 * in children[0] */
	char	  **labels;			/* fields' names, enum symbols */
} avro_tree_node;

typedef struct avro_tree avro_tree;

extern avro_tree *avro_tree_build(json_t *schema, char *err, size_t errlen);
extern const avro_tree_node *avro_tree_root(const avro_tree *tree);
extern void avro_tree_free(avro_tree *tree);

#endif							/* FEEDER_AVRO_TREE_H */
