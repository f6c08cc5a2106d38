/*-------------------------------------------------------------------------
 *
 * generate.h
 *	  Shared declarations of ro-generate-events: its options (options.c),
 *	  the seeded random number generator, order identities and the
 *	  rendering of OrderReceived events (event.c), used by the producer
 *	  (generate.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GENERATE_H
#define GENERATE_H

#include <stddef.h>
#include <stdint.h>

#define GEN_NAME			"ro-generate-events"
#define GEN_UUID_LEN		36
#define GEN_REFERENCE_MAX	24
#define GEN_EVENT_MAX		16384
/* --event-bytes: the largest size asked for (order lines added up to it) */
#define GEN_EVENT_BYTES_MAX	12000
/* A value: an event, wrapped at most (every byte escaped as \u00XX, under
 * connect-record's schema of ~450 bytes and the order's identity) */
#define GEN_VALUE_MAX		(GEN_EVENT_MAX * 6 + 1024)

#define GEN_EXIT_OK			0
#define GEN_EXIT_FAILED		1	/* undelivered messages, interrupted, I/O */
#define GEN_EXIT_USAGE		2	/* bad command line or -X property */

/* How one message of the stream relates to the orders before it. */
typedef enum gen_kind
{
	GEN_KIND_VALID,				/* first appearance of an order */
	GEN_KIND_REDELIVERY,		/* same bytes, same key again */
	GEN_KIND_CROSS,				/* same bytes under another key */
	GEN_KIND_DIVERGENT,			/* same orderId, other externalReference */
	GEN_KIND_MALFORMED,			/* a value the validator rejects */
	GEN_KIND_TOMBSTONE,			/* an order's key with a NULL value */
	GEN_NKINDS
} gen_kind;

/* The malformed variants, used in turn. */
typedef enum gen_malformed
{
	GEN_MALFORMED_JSON,			/* truncated: not valid JSON */
	GEN_MALFORMED_UTF8,			/* a Latin-1 name: not valid UTF-8 */
	GEN_MALFORMED_NOT_OBJECT,	/* the event wrapped in an array */
	GEN_MALFORMED_NO_ORDER_ID,	/* the orderId field left out */
	GEN_NMALFORMED
} gen_malformed;

/*
 * One event identity: what is needed to render the same bytes again.  The
 * event's other fields are drawn from 'seed' each time it is rendered.
 */
typedef struct gen_order
{
	char		order_id[GEN_UUID_LEN + 1];
	char		reference[GEN_REFERENCE_MAX];
	uint64_t	seed;
	int64_t		occurred_ms;	/* occurredAt, ms since the epoch */
} gen_order;

/* --envelope: how each event (not a malformed value) is wrapped. */
typedef enum gen_envelope
{
	GEN_ENVELOPE_PLAIN,			/* the event's JSON as it is */
	GEN_ENVELOPE_DEBEZIUM,		/* Debezium's outbox router: a JSON string */
	GEN_ENVELOPE_CONNECT_RECORD /* a Connect struct with the fields split out */
} gen_envelope;

/* The command line, parsed (options.c). */
typedef struct gen_options
{
	const char *brokers;
	const char *topic;
	long long	count;
	double		rate;			/* messages per second, 0 = unlimited */
	uint64_t	seed;
	double		ratios[GEN_NKINDS];
	int			progress;
	const char *manifest;
	const char *output;			/* --output FILE: no Kafka, lines in FILE */
	char	  **props;			/* -X key=value, in order */
	int			nprops;
	gen_envelope envelope;		/* --envelope */
	const char *header_name;	/* --header NAME=VALUE, on every message */
	const char *header_value;
	int			event_bytes;	/* --event-bytes: order lines up to ~N bytes, 0: 1-3 */
} gen_options;

/* options.c */
extern void gen_parse_options(gen_options *opts, int argc, char **argv);
extern void gen_usage_error(const char *fmt, const char *arg);

/* event.c */
extern uint64_t gen_rng_next(uint64_t *state);
extern uint64_t gen_rng_below(uint64_t *state, uint64_t bound);
extern void gen_uuid_v4(uint64_t *state, char *out);
extern void gen_order_new(gen_order *order, uint64_t *state,
						  const char *order_id, uint32_t reference_number,
						  int64_t now_ms);
extern void gen_event_set_min_bytes(int bytes);
extern size_t gen_event_render(const gen_order *order, char *buf, size_t size);
extern size_t gen_malformed_render(const gen_order *order, gen_malformed variant,
								   char *buf, size_t size);

#endif							/* GENERATE_H */
