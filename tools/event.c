/*-------------------------------------------------------------------------
 *
 * event.c
 *	  Realistic OrderReceived events for ro-generate-events: a seeded
 *	  random number generator, UUID v4, and the rendering of an event
 *	  (about 300 bytes of compact JSON) and of its malformed variants.
 *
 * An event is rendered from its gen_order alone: the order's own seed
 * drives every choice (channel, customer, items, shipping), so rendering
 * the same order twice gives the same bytes, which is what a redelivery
 * is.  Nothing here talks to Kafka.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "generate.h"

/* A sales channel and the prefix of its externalReference numbers. */
typedef struct gen_channel
{
	const char *name;
	unsigned	weight;			/* out of 100 */
} gen_channel;

static const gen_channel gen_channels[] = {
	{"WEB", 55}, {"APP", 30}, {"STORE", 10}, {"PHONE", 5},
};

/* A shipping destination; the currency follows the country. */
typedef struct gen_place
{
	const char *country;
	const char *currency;
} gen_place;

static const gen_place gen_places[] = {
	{"DE", "EUR"}, {"DE", "EUR"}, {"FR", "EUR"}, {"NL", "EUR"},
	{"ES", "EUR"}, {"GB", "GBP"}, {"US", "USD"},
};

/*
 * Customer names, each with a character outside ASCII so that the
 * Latin-1 spelling (the invalid UTF-8 variant) differs from the UTF-8 one.
 */
typedef struct gen_name
{
	const char *utf8;
	const char *latin1;
} gen_name;

static const gen_name gen_names[] = {
	{"Jos\xc3\xa9 Mu\xc3\xb1oz", "Jos\xe9 Mu\xf1oz"},
	{"Zo\xc3\xab Keller", "Zo\xeb Keller"},
	{"Fran\xc3\xa7ois Dubois", "Fran\xe7ois Dubois"},
	{"J\xc3\xbcrgen Wei\xc3\x9f", "J\xfcrgen Wei\xdf"},
	{"S\xc3\xb8ren Nielsen", "S\xf8ren Nielsen"},
	{"Bj\xc3\xb6rn Larsson", "Bj\xf6rn Larsson"},
	{"Chlo\xc3\xa9 Martin", "Chlo\xe9 Martin"},
	{"In\xc3\xaas Concei\xc3\xa7\xc3\xa3o", "In\xeas Concei\xe7\xe3o"},
};

#define GEN_NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* The end of an event after its items: shipping and total, at most. */
#define GEN_TAIL_BYTES 120

/* --event-bytes: the size events are grown to with order lines, 0: none. */
static size_t gen_min_bytes;

/*
 * gen_event_set_min_bytes
 *		Render every event with order lines added until it has about
 *		'bytes' bytes (the event of a large basket); 0: the drawn 1 to 3.
 */
void
gen_event_set_min_bytes(int bytes)
{
	gen_min_bytes = bytes > 0 ? (size_t) bytes : 0;
}

/*
 * gen_rng_next
 *		SplitMix64: one 64-bit pseudo-random number.  Small, fast and good
 *		enough for test data; the same seed gives the same sequence on
 *		every platform.
 */
uint64_t
gen_rng_next(uint64_t *state)
{
	uint64_t	z = (*state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/*
 * gen_rng_below
 *		A number in [0, bound); the modulo bias is negligible for the small
 *		bounds used here.
 */
uint64_t
gen_rng_below(uint64_t *state, uint64_t bound)
{
	if (bound == 0)
		return 0;
	return gen_rng_next(state) % bound;
}

/*
 * gen_uuid_v4
 *		A random (version 4, RFC 4122 variant) UUID in its canonical lower
 *		case spelling; 'out' holds GEN_UUID_LEN + 1 bytes.
 */
void
gen_uuid_v4(uint64_t *state, char *out)
{
	uint8_t		b[16];
	uint64_t	hi = gen_rng_next(state);
	uint64_t	lo = gen_rng_next(state);
	int			i;

	for (i = 0; i < 8; i++)
	{
		b[i] = (uint8_t) (hi >> (56 - 8 * i));
		b[8 + i] = (uint8_t) (lo >> (56 - 8 * i));
	}
	b[6] = (b[6] & 0x0f) | 0x40;
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, GEN_UUID_LEN + 1,
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
			 "%02x%02x%02x%02x%02x%02x",
			 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
			 b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

/*
 * gen_pick_channel
 *		The first draw of an order's own generator: its sales channel.
 *		Both gen_order_new (for the reference prefix) and gen_render_fields
 *		make this draw first, so they agree.
 */
static const gen_channel *
gen_pick_channel(uint64_t *rng)
{
	unsigned	roll = (unsigned) gen_rng_below(rng, 100);
	size_t		i;

	for (i = 0; i < GEN_NELEM(gen_channels) - 1; i++)
	{
		if (roll < gen_channels[i].weight)
			break;
		roll -= gen_channels[i].weight;
	}
	return &gen_channels[i];
}

/*
 * gen_order_new
 *		Fill 'order': the given orderId (or a new random one when NULL), a
 *		seed for its other fields, and an externalReference made of the
 *		channel and the run's reference number, like WEB-000123.
 */
void
gen_order_new(gen_order *order, uint64_t *state, const char *order_id,
			  uint32_t reference_number, int64_t now_ms)
{
	uint64_t	rng;

	if (order_id != NULL)
		memcpy(order->order_id, order_id, GEN_UUID_LEN + 1);
	else
		gen_uuid_v4(state, order->order_id);
	order->seed = gen_rng_next(state);
	order->occurred_ms = now_ms;
	rng = order->seed;
	snprintf(order->reference, sizeof(order->reference), "%s-%06u",
			 gen_pick_channel(&rng)->name, (unsigned) reference_number);
}

/*
 * gen_appendf
 *		snprintf at offset *len of buf, advancing *len; output beyond the
 *		buffer is cut (GEN_EVENT_MAX is far above any event's size).
 */
static void
gen_appendf(char *buf, size_t size, size_t *len, const char *fmt,...)
	__attribute__((format(printf, 4, 5)));

static void
gen_appendf(char *buf, size_t size, size_t *len, const char *fmt,...)
{
	va_list		ap;
	int			n;

	if (*len >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = (*len + (size_t) n < size) ? *len + (size_t) n : size - 1;
}

/*
 * gen_render_fields
 *		Render the event's JSON object into buf.  'with_order_id' false
 *		leaves orderId out; 'latin1' spells the customer's name in Latin-1,
 *		which makes the value invalid UTF-8.  Returns the length.
 */
static size_t
gen_render_fields(const gen_order *order, int with_order_id, int latin1,
				  char *buf, size_t size)
{
	uint64_t	rng = order->seed;
	const gen_channel *channel = gen_pick_channel(&rng);
	const gen_place *place = &gen_places[gen_rng_below(&rng, GEN_NELEM(gen_places))];
	const gen_name *name = &gen_names[gen_rng_below(&rng, GEN_NELEM(gen_names))];
	unsigned	customer = 1 + (unsigned) gen_rng_below(&rng, 999999);
	int			express = gen_rng_below(&rng, 5) == 0;
	unsigned	items_roll = (unsigned) gen_rng_below(&rng, 100);
	int			nitems = items_roll < 75 ? 1 : items_roll < 95 ? 2 : 3;
	long		total_cents = express ? 995 : 495;
	time_t		secs = (time_t) (order->occurred_ms / 1000);
	struct tm	tm;
	char		when[32];
	size_t		len = 0;
	int			i;

	gmtime_r(&secs, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);

	gen_appendf(buf, size, &len, "{");
	if (with_order_id)
		gen_appendf(buf, size, &len, "\"orderId\":\"%s\",", order->order_id);
	gen_appendf(buf, size, &len,
				"\"externalReference\":\"%s\",\"eventType\":\"OrderReceived\","
				"\"occurredAt\":\"%s.%03dZ\",\"customerId\":\"CUST-%06u\","
				"\"channel\":\"%s\",\"currency\":\"%s\",\"items\":[",
				order->reference, when, (int) (order->occurred_ms % 1000),
				customer, channel->name, place->currency);
	for (i = 0; i < nitems ||
		 (len + GEN_TAIL_BYTES < gen_min_bytes && len + 2 * GEN_TAIL_BYTES < size); i++)
	{
		unsigned	sku = 10000 + (unsigned) gen_rng_below(&rng, 90000);
		int			quantity = 1 + (int) gen_rng_below(&rng, 3);
		long		price = 199 + (long) gen_rng_below(&rng, 14800);

		total_cents += quantity * price;
		gen_appendf(buf, size, &len,
					"%s{\"sku\":\"SKU-%05u\",\"quantity\":%d,\"unitPrice\":%ld.%02ld}",
					i > 0 ? "," : "", sku, quantity, price / 100, price % 100);
	}
	gen_appendf(buf, size, &len,
				"],\"shipping\":{\"method\":\"%s\",\"name\":\"%s\","
				"\"country\":\"%s\"},\"total\":%ld.%02ld}",
				express ? "EXPRESS" : "STANDARD",
				latin1 ? name->latin1 : name->utf8, place->country,
				total_cents / 100, total_cents % 100);
	return len;
}

/*
 * gen_event_render
 *		The valid OrderReceived event of 'order' as compact JSON (no
 *		newline); the same order always renders to the same bytes.
 */
size_t
gen_event_render(const gen_order *order, char *buf, size_t size)
{
	return gen_render_fields(order, 1, 0, buf, size);
}

/*
 * gen_malformed_render
 *		A value the extension's validator rejects, built from 'order' the
 *		way real producers break events: cut short (22P02), a Latin-1 byte
 *		(22P02), a JSON array instead of an object (22023), or the orderId
 *		left out (22023).
 */
size_t
gen_malformed_render(const gen_order *order, gen_malformed variant,
					 char *buf, size_t size)
{
	size_t		len;

	switch (variant)
	{
		case GEN_MALFORMED_JSON:
			len = gen_render_fields(order, 1, 0, buf, size);
			len /= 2;			/* an unclosed object: never valid JSON */
			buf[len] = '\0';
			return len;
		case GEN_MALFORMED_UTF8:
			return gen_render_fields(order, 1, 1, buf, size);
		case GEN_MALFORMED_NOT_OBJECT:
			buf[0] = '[';
			len = 1 + gen_render_fields(order, 1, 0, buf + 1, size - 2);
			buf[len++] = ']';
			buf[len] = '\0';
			return len;
		case GEN_MALFORMED_NO_ORDER_ID:
		default:
			return gen_render_fields(order, 0, 0, buf, size);
	}
}
