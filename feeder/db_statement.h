/*-------------------------------------------------------------------------
 *
 * db_statement.h
 *	  The batch statement's forms (db_statement.c): what the lane that
 *	  decodes a batch for it needs to know of them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_DB_STATEMENT_H
#define FEEDER_DB_STATEMENT_H

/*
 * The Schema Registry form's arrays the lane decodes each batch into
 * (decode.c) and db_run_batch sends: JSON, schema id, reason, header GUID.
 */
#define DB_DECODED_NARRAYS 4

#endif							/* FEEDER_DB_STATEMENT_H */
