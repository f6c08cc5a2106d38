/*-------------------------------------------------------------------------
 *
 * decode_confluent.c
 *	  The feeder's side of the schema-side differential fuzzer
 *	  (test/fuzz/03-schema-differential.t, test/fuzz/schema-differential.js):
 *	  schemas and Confluent-framed Avro values read from a file, each value
 *	  decoded by the feeder's own decoder (confluent.c, avro_json.c, avro-c)
 *	  and its JSON or its rejection written out, for the fuzzer to compare
 *	  with what Confluent's official deserializer reads.
 *
 * Usage: decode_confluent [--skip N] FILE
 * FILE is a sequence of records: one byte of kind, a 4-byte big-endian
 * number, a 4-byte big-endian length, that many bytes:
 *	 'S' ID LEN TEXT	an Avro schema, served as the registry would serve id
 *						ID (compiled as registry.c compiles what it fetched)
 *	 'V' SEQ LEN BYTES	a framed value (magic byte, schema id, payload)
 * Each value gives one answer on stdout, flushed at once (so that after a
 * crash the fuzzer knows which value was the last one answered):
 *	 "V SEQ ok LEN\n" and the JSON, then "\n"
 *	 "V SEQ rejected LEN\n" and the reason, then "\n"
 *	 "V SEQ status N LEN\n" and the reason, then "\n" (the decoder answered
 *							 transient or fatal: the registry's statuses)
 * --skip N leaves the first N values out (the fuzzer's restart after a
 * crash).  The schemas and the buffers are freed at the end, so that under
 * AddressSanitizer (test/sanitize/run) a leak is a report.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../avro_json.h"
#include "../confluent.h"
#include "registry_stub.h"

/* a schema or a value: larger is the fuzzer's mistake */
#define DECODE_MAX_RECORD (16 * 1024 * 1024)

/* ---------------------------------------------------------------- input */

/*
 * read_u32
 *		A 4-byte big-endian number; -1 at the end of the file.
 */
static int
read_u32(FILE *f, uint32_t *v)
{
	unsigned char b[4];

	if (fread(b, 1, 4, f) != 4)
		return -1;
	*v = ((uint32_t) b[0] << 24) | ((uint32_t) b[1] << 16) |
		((uint32_t) b[2] << 8) | b[3];
	return 0;
}

/*
 * answer
 *		One value's answer (see the header).
 */
static void
answer(uint32_t seq, const char *what, const char *text, size_t len)
{
	printf("V %u %s %zu\n", seq, what, len);
	fwrite(text, 1, len, stdout);
	fputc('\n', stdout);
	fflush(stdout);
}

/*
 * main
 *		Read FILE's records in order: compile each schema, answer each value
 *		(see the header).  Exit 0 once the file is read, 2 on a usage or
 *		file error.
 */
int
main(int argc, char **argv)
{
	const char *path = NULL;
	long long	skip = 0,
				nvalues = 0;
	FILE	   *f;
	unsigned char *data = NULL;
	avro_json_buf out = {0};
	int			i;

	for (i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--skip") == 0 && i + 1 < argc)
			skip = strtoll(argv[++i], NULL, 10);
		else if (path == NULL && argv[i][0] != '-')
			path = argv[i];
		else
		{
			path = NULL;
			break;
		}
	}
	if (path == NULL)
	{
		fprintf(stderr, "usage: decode_confluent [--skip N] FILE\n");
		return 2;
	}
	f = fopen(path, "rb");
	data = malloc(DECODE_MAX_RECORD + 1);
	if (f == NULL || data == NULL)
	{
		fprintf(stderr, "decode_confluent: cannot read %s: %s\n", path, strerror(errno));
		return 2;
	}
	avro_json_init();
	registry_stub_init("the file");
	for (;;)
	{
		int			kind = fgetc(f);
		uint32_t	num,
					len;

		if (kind == EOF)
			break;
		if (read_u32(f, &num) != 0 || read_u32(f, &len) != 0 ||
			len > DECODE_MAX_RECORD || fread(data, 1, len, f) != len ||
			(kind != 'S' && kind != 'V'))
		{
			fprintf(stderr, "decode_confluent: %s: a record is cut short or not 'S' or 'V'\n", path);
			return 2;
		}
		data[len] = '\0';
		if (kind == 'S')
			registry_stub_add((int32_t) num, REGISTRY_AVRO, (const char *) data, len);
		else if (nvalues++ >= skip)
		{
			char		reason[1024];
			int32_t		id = 0;
			int			has_id = 0;
			confluent_status st;

			reason[0] = '\0';
			avro_json_buf_reset(&out);
			st = confluent_decode(NULL, data, len, NULL, 0, &out, &id, &has_id,
								  reason, sizeof(reason));
			if (st == CONFLUENT_DECODED)
				answer(num, "ok", out.data ? out.data : "", out.len);
			else if (st == CONFLUENT_REJECTED)
				answer(num, "rejected", reason, strlen(reason));
			else
			{
				char		what[32];

				snprintf(what, sizeof(what), "status %d", (int) st);
				answer(num, what, reason, strlen(reason));
			}
		}
	}
	fclose(f);
	free(data);
	avro_json_buf_free(&out);
	registry_stub_free();
	return 0;
}
