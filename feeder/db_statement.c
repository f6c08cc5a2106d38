/*-------------------------------------------------------------------------
 *
 * db_statement.c
 *	  The batch statement: its three forms, the name it is prepared
 *	  under, and a batch encoded into its parameters.
 *
 * The statement is the batch function of the feeder's consumer group,
 * which also records the group's positions in the same transaction.  The
 * five arrays (values, topics, partitions, offsets, keys) are sent as
 * binary parameters so that raw Kafka bytes, invalid UTF-8 included,
 * reach the function untouched and unescaped; a tombstone is a NULL
 * value, skipped by the function but counted in the positions.  The
 * outbox form adds the envelope, the event type and two header arrays,
 * the Schema Registry form the arrays the lane decoded (decode.c).
 * db_connect.c prepares the statement on each new session, db_batch.c
 * executes it.
 *
 *-------------------------------------------------------------------------
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "batch.h"
#include "db_int.h"
#include "db_statement.h"
#include "pgarray.h"

/*
 * The batch statement's name is this prefix and a digest of its text and
 * parameter types (db_statement_name): behind a pooler in transaction mode
 * a server session is shared by several clients, and a statement of the
 * same name prepared there by another feeder is then the same statement.
 */
#define DB_STMT_PREFIX "ro_materialize_orders_"

/*
 * The answer's order_id, only where the feeder logs it (a quarantined
 * message): the others' would be formatted and sent for nothing.
 */
#define DB_ORDER_ID_IF_QUARANTINED \
	"CASE WHEN outcome IN ('rejected', 'conflict') THEN order_id END"
#define DB_STMT_SQL \
	"SELECT \"position\", " DB_ORDER_ID_IF_QUARANTINED ", outcome, sqlstate, message " \
	"FROM received_orders.materialize_orders($1::text, $2::bytea[], " \
	"$3::text[], $4::int4[], $5::int8[], $6::bytea[])"
static const Oid db_param_types[] = {
	PGARRAY_TEXTOID, PGARRAY_BYTEAARRAYOID, PGARRAY_TEXTARRAYOID,
	PGARRAY_INT4ARRAYOID, PGARRAY_INT8ARRAYOID, PGARRAY_BYTEAARRAYOID
};
#define DB_NPARAMS (1 + DB_NARRAYS)		/* the group, then the arrays */

/*
 * The outbox form (--envelope, --event-type): the same, then the envelope,
 * the event type and the type header's name, and per message the type
 * header's and the content-type header's values.
 */
#define DB_OUTBOX_STMT_SQL \
	"SELECT \"position\", " DB_ORDER_ID_IF_QUARANTINED ", outcome, sqlstate, message " \
	"FROM received_orders.materialize_orders($1::text, $2::bytea[], " \
	"$3::text[], $4::int4[], $5::int8[], $6::bytea[], $7::text, $8::text, " \
	"$9::text, $10::bytea[], $11::bytea[])"
static const Oid db_outbox_param_types[] = {
	PGARRAY_TEXTOID, PGARRAY_BYTEAARRAYOID, PGARRAY_TEXTARRAYOID,
	PGARRAY_INT4ARRAYOID, PGARRAY_INT8ARRAYOID, PGARRAY_BYTEAARRAYOID,
	PGARRAY_TEXTOID, PGARRAY_TEXTOID, PGARRAY_TEXTOID,
	PGARRAY_BYTEAARRAYOID, PGARRAY_BYTEAARRAYOID
};
#define DB_OUTBOX_NPARAMS 11

/*
 * The Schema Registry form (--value-format confluent): the outbox form, then
 * per message the JSON an Avro value decoded into, the frame's schema id,
 * why the value could not be decoded (confluent.c) and the GUID its
 * __value_schema_id header named, which the quarantine keeps: the
 * DB_DECODED_NARRAYS arrays the lane decoded the batch into (decode.c).
 */
#define DB_FRAMED_STMT_SQL \
	"SELECT \"position\", " DB_ORDER_ID_IF_QUARANTINED ", outcome, sqlstate, message " \
	"FROM received_orders.materialize_orders($1::text, $2::bytea[], " \
	"$3::text[], $4::int4[], $5::int8[], $6::bytea[], $7::text, $8::text, " \
	"$9::text, $10::bytea[], $11::bytea[], $12::bytea[], $13::int4[], $14::text[], " \
	"$15::uuid[])"
#define DB_FRAMED_NARRAYS (DB_OUTBOX_NARRAYS + DB_DECODED_NARRAYS)
static const Oid db_framed_param_types[] = {
	PGARRAY_TEXTOID, PGARRAY_BYTEAARRAYOID, PGARRAY_TEXTARRAYOID,
	PGARRAY_INT4ARRAYOID, PGARRAY_INT8ARRAYOID, PGARRAY_BYTEAARRAYOID,
	PGARRAY_TEXTOID, PGARRAY_TEXTOID, PGARRAY_TEXTOID,
	PGARRAY_BYTEAARRAYOID, PGARRAY_BYTEAARRAYOID,
	PGARRAY_BYTEAARRAYOID, PGARRAY_INT4ARRAYOID, PGARRAY_TEXTARRAYOID,
	PGARRAY_UUIDARRAYOID
};

/*
 * db_form_sql, db_form_types, db_form_nparams, db_form_signature
 *		The batch statement of this connection's form: the one with a
 *		consumer group, the outbox form, or the Schema Registry form.
 */
const char *
db_form_sql(const db_conn *db)
{
	return db->framed ? DB_FRAMED_STMT_SQL :
		db->outbox ? DB_OUTBOX_STMT_SQL : DB_STMT_SQL;
}

const Oid *
db_form_types(const db_conn *db)
{
	return db->framed ? db_framed_param_types :
		db->outbox ? db_outbox_param_types : db_param_types;
}

int
db_form_nparams(const db_conn *db)
{
	return db->framed ? DB_FRAMED_NPARAMS :
		db->outbox ? DB_OUTBOX_NPARAMS : DB_NPARAMS;
}

const char *
db_form_signature(const db_conn *db)
{
	return db->framed ? DB_FRAMED_SIGNATURE :
		db->outbox ? DB_OUTBOX_SIGNATURE : DB_FUNCTION_SIGNATURE;
}

/*
 * db_statement_name
 *		The batch statement's name for this form: DB_STMT_PREFIX and the
 *		64-bit FNV-1a digest of its text and parameter types, so that one
 *		name always means one statement, whichever feeder (of whichever
 *		version or form) prepared it on a server session a pooler shares.
 */
void
db_statement_name(db_conn *db)
{
	const char *sql = db_form_sql(db);
	const Oid  *types = db_form_types(db);
	int			ntypes = db_form_nparams(db);
	uint64_t	h = UINT64_C(14695981039346656037);
	const unsigned char *p;
	int			i;

	for (p = (const unsigned char *) sql; *p; p++)
		h = (h ^ *p) * UINT64_C(1099511628211);
	for (i = 0; i < ntypes; i++)
		for (p = (const unsigned char *) &types[i];
			 p < (const unsigned char *) &types[i] + sizeof(Oid); p++)
			h = (h ^ *p) * UINT64_C(1099511628211);
	snprintf(db->stmt_name, sizeof(db->stmt_name), "%s%016llx", DB_STMT_PREFIX,
			 (unsigned long long) h);
}

/*
 * db_reserve
 *		Grow the per-batch arrays to hold n elements.
 */
int
db_reserve(db_conn *db, int n)
{
	int		   *map;
	db_row	   *rows;

	if (n <= db->cap)
		return 0;
	map = realloc(db->db_to_msg, sizeof(int) * (size_t) n);
	if (map == NULL)
		return -1;
	db->db_to_msg = map;
	rows = realloc(db->rows, sizeof(db_row) * (size_t) n);
	if (rows == NULL)
		return -1;
	db->rows = rows;
	db->cap = n;
	return 0;
}

/*
 * db_build_params
 *		Encode the batch's first n messages into the five binary arrays (a
 *		tombstone as a NULL value), and the outbox form's two, and
 *		remember which message each element came from.  0; -1 when out of
 *		memory.
 */
int
db_build_params(db_conn *db, const batch *b, int n)
{
	pgarray    *a = db->arrays;
	int			i;

	pgarray_begin(&a[0], PGARRAY_BYTEAOID);
	pgarray_begin(&a[1], PGARRAY_TEXTOID);
	pgarray_begin(&a[2], PGARRAY_INT4OID);
	pgarray_begin(&a[3], PGARRAY_INT8OID);
	pgarray_begin(&a[4], PGARRAY_BYTEAOID);
	if (db->outbox)
	{
		pgarray_begin(&a[5], PGARRAY_BYTEAOID);
		pgarray_begin(&a[6], PGARRAY_BYTEAOID);
	}
	for (i = 0; i < n; i++)
	{
		const batch_msg *m = &b->msgs[i];

		db->db_to_msg[i] = i;
		if (m->value == NULL ||
			(db->outbox && !batch_sends_value(db->envelope, db->event_type, m)))
			pgarray_add_null(&a[0]);	/* tombstone, another type: skipped */
		else
			pgarray_add_bytes(&a[0], m->value, m->value_len);
		if (db->outbox)
		{
			if (m->type)
				pgarray_add_bytes(&a[5], m->type, m->type_len);
			else
				pgarray_add_null(&a[5]);
			if (m->content_type)
				pgarray_add_bytes(&a[6], m->content_type, m->content_type_len);
			else
				pgarray_add_null(&a[6]);
		}
		pgarray_add_bytes(&a[1], m->topic, strlen(m->topic));
		pgarray_add_int4(&a[2], m->partition);
		pgarray_add_int8(&a[3], m->offset);
		if (m->key)
			pgarray_add_bytes(&a[4], m->key, m->key_len);
		else
			pgarray_add_null(&a[4]);
	}
	for (i = 0; i < (db->outbox ? DB_OUTBOX_NARRAYS : DB_NARRAYS); i++)
		if (pgarray_finish(&a[i]) != 0)
			return -1;
	return 0;
}
