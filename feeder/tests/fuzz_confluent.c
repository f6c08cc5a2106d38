/*-------------------------------------------------------------------------
 *
 * fuzz_confluent.c
 *	  The fuzzer of framed values (test/fuzz/02-framed-avro.t, `make
 *	  fuzz`): Confluent-framed Avro and JSON Schema values, made by
 *	  Confluent's own serializers (test/fuzz/corpus-framed), cut short,
 *	  extended and mutated, through the feeder's decoder (confluent.c,
 *	  avro_json.c, avro_tree.c), with the registry served from the corpus's
 *	  schema files instead of HTTP.
 *
 * Usage: fuzz_confluent [--seed N] [--budget N] [--out DIR] CORPUS_DIR
 *        fuzz_confluent --check-json FILE   (exit 0 when FILE holds one JSON
 *                                             value by the grammar below)
 * CORPUS_DIR holds ID.avsc (an Avro schema), ID.json (a JSON Schema) and
 * NAME.bin (a framed value, its id one of those files').  What must hold,
 * each counted, a violation written to --out and the exit status 1:
 *   - every seed decodes (an Avro one into JSON, a JSON Schema one as
 *     received);
 *   - every strict prefix of an Avro seed is rejected (Avro is read front
 *     to back: the decoder needed every byte of the whole);
 *   - an Avro seed with bytes appended is rejected (trailing bytes);
 *   - whatever a mutated value decodes into is JSON by RFC 8259's grammar
 *     (json_syntax below; the bytes of a string are not checked: Avro
 *     strings are UTF-8 by contract, and the database checks the encoding,
 *     and refuses \u0000, as for any event: docs/feeder.md);
 *   - the decoder never answers transient or fatal (those are the
 *     registry's), and never crashes.
 * Under AddressSanitizer (test/sanitize/run) a leak or a bad access ends
 * the program with a report.  The last line sums it all up: "N inputs: D
 * decoded, A as received, R rejected; V violations".
 *
 *-------------------------------------------------------------------------
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../avro_json.h"
#include "../confluent.h"
#include "registry_stub.h"

#define MAX_SCHEMAS 64
#define MAX_SEEDS 256
#define FUZZ_MAX_INPUT 65536

typedef struct seed
{
	char		name[256];
	unsigned char *data;
	size_t		len;
	int			avro;			/* its id names an Avro schema */
} seed;

static seed seeds[MAX_SEEDS];
static int	nseeds;
static uint64_t rng;
static const char *out_dir;
static avro_json_buf out;		/* the decoded JSON, reused */
static long long n_inputs,
			n_decoded,
			n_as_received,
			n_rejected,
			n_violations;

/* ------------------------------------------------------------- corpus */

/*
 * read_file
 *		A whole file, malloc'd; exits on failure.
 */
static unsigned char *
read_file(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	unsigned char *data = malloc(FUZZ_MAX_INPUT + 1);
	size_t		n;

	if (f == NULL || data == NULL)
	{
		fprintf(stderr, "fuzz_confluent: cannot read %s: %s\n", path, strerror(errno));
		exit(2);
	}
	n = fread(data, 1, FUZZ_MAX_INPUT, f);
	fclose(f);
	data[n] = '\0';
	*len = n;
	return data;
}

/*
 * load_corpus
 *		The schemas (ID.avsc, ID.json) and seeds (NAME.bin) of dir.
 */
static void
load_corpus(const char *dir)
{
	DIR		   *d = opendir(dir);
	struct dirent *e;
	char		path[4096];
	int			i,
				j;

	if (d == NULL)
	{
		fprintf(stderr, "fuzz_confluent: cannot open %s: %s\n", dir, strerror(errno));
		exit(2);
	}
	while ((e = readdir(d)) != NULL)
	{
		const char *dot = strrchr(e->d_name, '.');
		size_t		len;
		unsigned char *data;

		if (dot == NULL)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if ((strcmp(dot, ".avsc") == 0 || strcmp(dot, ".json") == 0) &&
			registry_stub_count() < MAX_SCHEMAS)
		{
			registry_schema *s;

			data = read_file(path, &len);
			s = registry_stub_add(atoi(e->d_name),
								  strcmp(dot, ".json") == 0 ? REGISTRY_JSON : REGISTRY_AVRO,
								  (const char *) data, len);
			if (s->compile_error != NULL)
			{
				fprintf(stderr, "fuzz_confluent: %s: %s\n", path, s->compile_error);
				exit(2);
			}
			free(data);
		}
		else if (strcmp(dot, ".bin") == 0 && nseeds < MAX_SEEDS)
		{
			seed	   *s = &seeds[nseeds++];

			snprintf(s->name, sizeof(s->name), "%s", e->d_name);
			s->data = read_file(path, &s->len);
		}
	}
	closedir(d);
	/* readdir's order is the file system's: sort, so a seed means one run */
	for (i = 1; i < nseeds; i++)
		for (j = i; j > 0 && strcmp(seeds[j - 1].name, seeds[j].name) > 0; j--)
		{
			seed		t = seeds[j];

			seeds[j] = seeds[j - 1];
			seeds[j - 1] = t;
		}
	for (i = 0; i < nseeds; i++)
	{
		int32_t		id;
		const registry_schema *schema;

		if (confluent_frame_id(seeds[i].data, seeds[i].len, &id) == 0 &&
			(schema = registry_stub_find(id)) != NULL)
			seeds[i].avro = schema->type == REGISTRY_AVRO;
	}
}

/* ---------------------------------------------------------- JSON grammar */

/*
 * json_value
 *		Whether p[*at..len) starts with one JSON value (RFC 8259), advancing
 *		*at past it and the whitespace after it.  A string's bytes other
 *		than '"', '\\' and controls are not looked at (see the header).
 */
static int
json_value(const char *p, size_t len, size_t *at, int depth)
{
	size_t		i = *at;

#define WS() while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++
#define DIGITS(min) do { size_t d0 = i; while (i < len && p[i] >= '0' && p[i] <= '9') i++; \
		if (i - d0 < (min)) return 0; } while (0)

	if (depth > 10000)
		return 0;
	WS();
	if (i >= len)
		return 0;
	if (p[i] == '{' || p[i] == '[')
	{
		char		close = p[i] == '{' ? '}' : ']';
		int			object = p[i] == '{';

		i++;
		WS();
		if (i < len && p[i] == close)
			i++;
		else
			for (;;)
			{
				if (object)
				{
					WS();
					if (i >= len || p[i] != '"')
						return 0;
					*at = i;
					if (!json_value(p, len, at, depth + 1))
						return 0;
					i = *at;
					if (i >= len || p[i++] != ':')
						return 0;
				}
				*at = i;
				if (!json_value(p, len, at, depth + 1))
					return 0;
				i = *at;
				if (i < len && p[i] == ',')
				{
					i++;
					continue;
				}
				if (i < len && p[i] == close)
				{
					i++;
					break;
				}
				return 0;
			}
	}
	else if (p[i] == '"')
	{
		for (i++;; i++)
		{
			if (i >= len || (unsigned char) p[i] < 0x20)
				return 0;
			if (p[i] == '"')
				break;
			if (p[i] == '\\')
			{
				if (++i >= len)
					return 0;
				if (p[i] == 'u')
				{
					int			k;

					for (k = 1; k <= 4; k++)
						if (i + k >= len || strchr("0123456789abcdefABCDEF", p[i + k]) == NULL ||
							p[i + k] == '\0')
							return 0;
					i += 4;
				}
				else if (strchr("\"\\/bfnrt", p[i]) == NULL || p[i] == '\0')
					return 0;
			}
		}
		i++;
	}
	else if (p[i] == '-' || (p[i] >= '0' && p[i] <= '9'))
	{
		if (p[i] == '-')
			i++;
		if (i < len && p[i] == '0')
			i++;
		else
			DIGITS(1);
		if (i < len && p[i] == '.')
		{
			i++;
			DIGITS(1);
		}
		if (i < len && (p[i] == 'e' || p[i] == 'E'))
		{
			i++;
			if (i < len && (p[i] == '+' || p[i] == '-'))
				i++;
			DIGITS(1);
		}
	}
	else if (len - i >= 4 && memcmp(p + i, "true", 4) == 0)
		i += 4;
	else if (len - i >= 5 && memcmp(p + i, "false", 5) == 0)
		i += 5;
	else if (len - i >= 4 && memcmp(p + i, "null", 4) == 0)
		i += 4;
	else
		return 0;
	WS();
	*at = i;
	return 1;
#undef WS
#undef DIGITS
}

/*
 * json_syntax
 *		Whether the text is exactly one JSON value.
 */
static int
json_syntax(const char *p, size_t len)
{
	size_t		at = 0;

	return json_value(p, len, &at, 0) && at == len;
}

/* -------------------------------------------------------------- inputs */

/*
 * next_random
 *		SplitMix64, as the generator's: the same seed, the same inputs.
 */
static uint64_t
next_random(void)
{
	uint64_t	z = (rng += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/*
 * violation
 *		Count it, say it, and keep the input in --out.
 */
static void
violation(const char *what, const char *origin, const unsigned char *data,
		  size_t len, const char *detail)
{
	char		path[4096];
	FILE	   *f;

	n_violations++;
	printf("violation %s: %s (%zu bytes): %s\n", what, origin, len, detail);
	if (out_dir == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s-%lld.bin", out_dir, what, n_violations);
	f = fopen(path, "wb");
	if (f != NULL)
	{
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

/*
 * try
 *		One input through confluent_decode; returns its status after
 *		checking what must hold of any input.
 */
static confluent_status
try(const unsigned char *data, size_t len, const char *origin)
{
	char		reason[1024];
	int32_t		id = 0;
	int			has_id = 0;
	confluent_status st;

	n_inputs++;
	avro_json_buf_reset(&out);
	st = confluent_decode(NULL, data, len, NULL, 0, &out, &id, &has_id,
						  reason, sizeof(reason));
	switch (st)
	{
		case CONFLUENT_DECODED:
			n_decoded++;
			if (!json_syntax(out.data, out.len))
				violation("invalid-json", origin, data, len,
						  "the decoded text is not JSON (RFC 8259's grammar)");
			break;
		case CONFLUENT_AS_RECEIVED:
			n_as_received++;
			break;
		case CONFLUENT_REJECTED:
			n_rejected++;
			if (reason[0] == '\0')
				violation("no-reason", origin, data, len, "rejected without a reason");
			break;
		default:
			violation("registry-status", origin, data, len, reason);
	}
	return st;
}

/*
 * mutate
 *		1 to 4 random changes of seed s into buf; returns the new length.
 */
static size_t
mutate(const seed *s, unsigned char *buf)
{
	size_t		len = s->len;
	int			n = 1 + (int) (next_random() % 4),
				k;

	memcpy(buf, s->data, len);
	for (k = 0; k < n; k++)
	{
		size_t		at = len ? (size_t) (next_random() % len) : 0;

		switch (next_random() % 7)
		{
			case 0:				/* flip a bit */
				if (len)
					buf[at] ^= (unsigned char) (1u << (next_random() % 8));
				break;
			case 1:				/* an interesting byte */
				{
					static const unsigned char v[] = {0x00, 0x01, 0x02, 0x7f, 0x80, 0xfe, 0xff};

					if (len)
						buf[at] = v[next_random() % sizeof(v)];
				}
				break;
			case 2:				/* a random byte */
				if (len)
					buf[at] = (unsigned char) next_random();
				break;
			case 3:				/* insert a byte */
				if (len < FUZZ_MAX_INPUT)
				{
					memmove(buf + at + 1, buf + at, len - at);
					buf[at] = (unsigned char) next_random();
					len++;
				}
				break;
			case 4:				/* delete a byte */
				if (len)
				{
					memmove(buf + at, buf + at + 1, len - at - 1);
					len--;
				}
				break;
			case 5:				/* a varint made huge or negative */
				if (len > 5 && at >= 5)
				{
					size_t		m = len - at < 5 ? len - at : 5;
					size_t		i;

					for (i = 0; i < m; i++)
						buf[at + i] = i + 1 < m ? 0xff : (unsigned char) (next_random() & 0x7f);
				}
				break;
			default:			/* another schema id in the frame */
				if (len >= 5)
				{
					uint32_t	id = (uint32_t) (next_random() % (registry_stub_count() + 2));

					buf[1] = (unsigned char) (id >> 24);
					buf[2] = (unsigned char) (id >> 16);
					buf[3] = (unsigned char) (id >> 8);
					buf[4] = (unsigned char) id;
				}
		}
	}
	return len;
}

int
main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"seed", required_argument, NULL, 's'},
		{"budget", required_argument, NULL, 'b'},
		{"out", required_argument, NULL, 'o'},
		{"check-json", required_argument, NULL, 'j'},
		{NULL, 0, NULL, 0}
	};
	static unsigned char buf[FUZZ_MAX_INPUT + 8];
	long long	budget = 10000,
				i,
				prefixes = 0,
				trailing = 0;
	int			c,
				k;

	rng = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
	{
		if (c == 's')
			rng = strtoull(optarg, NULL, 10);
		else if (c == 'b')
			budget = strtoll(optarg, NULL, 10);
		else if (c == 'o')
			out_dir = optarg;
		else if (c == 'j')
		{
			size_t		len;
			unsigned char *text = read_file(optarg, &len);
			int			ok = json_syntax((const char *) text, len);

			free(text);
			printf("%s\n", ok ? "JSON" : "not JSON");
			return ok ? 0 : 1;
		}
		else
			return 2;
	}
	if (optind != argc - 1)
	{
		fprintf(stderr, "usage: fuzz_confluent [--seed N] [--budget N] [--out DIR] CORPUS_DIR\n");
		return 2;
	}
	avro_json_init();
	registry_stub_init("the corpus");
	load_corpus(argv[optind]);
	if (nseeds == 0 || registry_stub_count() == 0)
	{
		fprintf(stderr, "fuzz_confluent: no seeds or no schemas in %s\n", argv[optind]);
		return 2;
	}

	for (k = 0; k < nseeds; k++)
	{
		const seed *s = &seeds[k];
		confluent_status st = try(s->data, s->len, s->name);
		size_t		cut,
					extra;

		if (st != CONFLUENT_DECODED && st != CONFLUENT_AS_RECEIVED)
			violation("seed-rejected", s->name, s->data, s->len, "a seed does not decode");
		if (!s->avro)
			continue;
		for (cut = 0; cut < s->len; cut++, prefixes++)
			if (try(s->data, cut, s->name) != CONFLUENT_REJECTED)
				violation("prefix-accepted", s->name, s->data, cut,
						  "a strict prefix of an Avro value was not rejected");
		for (extra = 1; extra <= 4; extra++, trailing++)
		{
			memcpy(buf, s->data, s->len);
			for (cut = 0; cut < extra; cut++)
				buf[s->len + cut] = (unsigned char) next_random();
			if (try(buf, s->len + extra, s->name) != CONFLUENT_REJECTED)
				violation("trailing-accepted", s->name, buf, s->len + extra,
						  "an Avro value with bytes after it was not rejected");
		}
	}
	for (i = 0; i < budget; i++)
	{
		const seed *s = &seeds[next_random() % nseeds];
		size_t		len = mutate(s, buf);

		try(buf, len, s->name);
	}

	avro_json_buf_free(&out);
	printf("%d seeds, %d schemas; %lld prefixes and %lld extended values of the Avro seeds\n",
		   nseeds, registry_stub_count(), prefixes, trailing);
	registry_stub_free();
	for (k = 0; k < nseeds; k++)
		free(seeds[k].data);
	printf("%lld inputs: %lld decoded, %lld as received, %lld rejected; %lld violations\n",
		   n_inputs, n_decoded, n_as_received, n_rejected, n_violations);
	return n_violations ? 1 : 0;
}
