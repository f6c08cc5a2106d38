/*-------------------------------------------------------------------------
 *
 * options.c
 *	  Command line of ro-generate-events: --help text, parsing and
 *	  checking of the options, usage errors (exit status 2).
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "generate.h"

/* Default ratio of each kind: a realistic outbox stream. */
static const double gen_default_ratios[GEN_NKINDS] = {
	0, 0.2, 0.02, 0.001, 0.001, 0.001
};

/*
 * gen_usage
 *		The --help text.
 */
static void
gen_usage(FILE *out)
{
	fprintf(out,
			"Usage: " GEN_NAME " --brokers HOST:PORT[,...] [OPTION]...\n"
			"       " GEN_NAME " --output FILE [OPTION]...\n"
			"Produce realistic OrderReceived events to Kafka, keyed by orderId, and print\n"
			"an account of them (key=value lines on stdout).\n"
			"\n"
			"  -b, --brokers LIST       bootstrap servers (required unless --output)\n"
			"  -o, --output FILE        write the stream to FILE instead of Kafka, one line\n"
			"                           \"KIND KEY VALUE\" per message (KIND as in --manifest,\n"
			"                           malformed-NAME for malformed values, NAME: json, utf8,\n"
			"                           array, no-order-id; VALUE in hex, \"-\" for a NULL\n"
			"                           value), for a serializer to rewrite (demo/run --avro);\n"
			"                           the account counts the written messages\n"
			"  -t, --topic NAME         topic (default orders)\n"
			"  -n, --count N            messages to produce, every kind included (default 1000)\n"
			"  -r, --rate PER_SEC       messages per second, 0 = unlimited (default 0)\n"
			"  -s, --seed N             seed: the same seed gives the same orders, keys and\n"
			"                           message order (occurredAt follows the clock)\n"
			"  -X KEY=VALUE             librdkafka producer property (repeatable)\n"
			"      --redeliveries R     share of messages that repeat an earlier event's\n"
			"                           bytes and key (default 0.2)\n"
			"      --cross-partition R  share that repeat an earlier event's bytes under\n"
			"                           another key, its externalReference (default 0.02)\n"
			"      --divergent R        share that reuse an earlier orderId with another\n"
			"                           externalReference: conflicts (default 0.001)\n"
			"      --malformed R        share of invalid values: truncated JSON, Latin-1\n"
			"                           bytes, a JSON array, no orderId (default 0.001)\n"
			"      --tombstones R       share of NULL values keyed by an orderId (default 0.001)\n"
			"      --envelope NAME      plain (default), debezium or connect-record: every\n"
			"                           event (not the malformed values) as Debezium's outbox\n"
			"                           router sends a text payload through JsonConverter with\n"
			"                           schemas (debezium):\n"
			"                           {\"schema\":{\"type\":\"string\",...},\"payload\":\"<event>\"}\n"
			"                           or as a JsonConverter record for a JDBC sink, the\n"
			"                           fields split out (connect-record): {\"schema\":{\"type\":\n"
			"                           \"struct\",...},\"payload\":{\"order_id\":...,\n"
			"                           \"external_reference\":...,\"payload\":\"<event>\"}}\n"
			"      --header NAME=VALUE  a header on every message but tombstones\n"
			"      --event-bytes N      order lines added to each event until it has about N\n"
			"                           bytes, up to 12000 (default 0: 1 to 3 lines, ~300)\n"
			"      --manifest FILE      write \"partition offset kind order_id external_reference\"\n"
			"                           per message (kind: valid, redelivery, cross, divergent,\n"
			"                           malformed, tombstone; \"-\" when absent)\n"
			"      --progress           a progress line on stderr every second\n"
			"  -h, --help               this text\n"
			"\n"
			"Each kind gets round(count * ratio) messages; the rest are new orders (valid).\n"
			"Account: produced = valid_events + redeliveries + cross_partition + divergent\n"
			"+ malformed + tombstones (delivered messages); distinct_orders and expected_rows:\n"
			"orderIds of valid events, i.e. rows the table must hold; expected_duplicates =\n"
			"redeliveries + cross_partition; expected_quarantined = malformed + divergent\n"
			"(one quarantine row per Kafka message).\n"
			"\n"
			"librdkafka's mock cluster keeps about 5 MiB per partition and silently drops\n"
			"older messages: for large runs against it use more partitions or\n"
			"-X compression.codec=lz4.\n"
			"\n"
			"Exit status: 0 every message delivered, 1 a message failed or the run was\n"
			"interrupted, 2 bad usage.\n");
}

/*
 * gen_usage_error
 *		One line on stderr and exit 2.
 */
void
gen_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, GEN_NAME ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (try --help)\n");
	exit(GEN_EXIT_USAGE);
}

/*
 * gen_parse_number
 *		A finite number in [min, max], or a usage error naming the option.
 */
static double
gen_parse_number(const char *option, const char *arg, double min, double max)
{
	char	   *end;
	double		v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno != 0 || end == arg || *end != '\0' || !isfinite(v) ||
		v < min || v > max)
		gen_usage_error("invalid value for %s", option);
	return v;
}

/*
 * gen_parse_options
 *		Fill opts from argv; exits on --help and on any usage error.
 */
void
gen_parse_options(gen_options *opts, int argc, char **argv)
{
	enum
	{
		OPT_REDELIVERIES = 256, OPT_CROSS, OPT_DIVERGENT, OPT_MALFORMED,
		OPT_TOMBSTONES, OPT_MANIFEST, OPT_PROGRESS, OPT_ENVELOPE, OPT_HEADER,
		OPT_EVENT_BYTES
	};
	static const struct option longopts[] = {
		{"brokers", required_argument, NULL, 'b'},
		{"topic", required_argument, NULL, 't'},
		{"count", required_argument, NULL, 'n'},
		{"rate", required_argument, NULL, 'r'},
		{"seed", required_argument, NULL, 's'},
		{"redeliveries", required_argument, NULL, OPT_REDELIVERIES},
		{"cross-partition", required_argument, NULL, OPT_CROSS},
		{"divergent", required_argument, NULL, OPT_DIVERGENT},
		{"malformed", required_argument, NULL, OPT_MALFORMED},
		{"tombstones", required_argument, NULL, OPT_TOMBSTONES},
		{"manifest", required_argument, NULL, OPT_MANIFEST},
		{"progress", no_argument, NULL, OPT_PROGRESS},
		{"envelope", required_argument, NULL, OPT_ENVELOPE},
		{"header", required_argument, NULL, OPT_HEADER},
		{"output", required_argument, NULL, 'o'},
		{"event-bytes", required_argument, NULL, OPT_EVENT_BYTES},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}
	};
	double		sum = 0;
	int			c,
				k;
	char	   *end;

	memset(opts, 0, sizeof(*opts));
	opts->topic = "orders";
	opts->count = 1000;
	opts->seed = (uint64_t) time(NULL) * 1000003u + (uint64_t) getpid();
	memcpy(opts->ratios, gen_default_ratios, sizeof(opts->ratios));
	opts->props = calloc((size_t) argc, sizeof(char *));
	if (opts->props == NULL)
		gen_usage_error("%s", "out of memory");

	while ((c = getopt_long(argc, argv, "b:o:t:n:r:s:X:h", longopts, NULL)) != -1)
	{
		switch (c)
		{
			case 'b':
				opts->brokers = optarg;
				break;
			case 'o':
				if (*optarg == '\0')
					gen_usage_error("%s", "--output must not be empty");
				opts->output = optarg;
				break;
			case 't':
				if (*optarg == '\0')
					gen_usage_error("%s", "--topic must not be empty");
				opts->topic = optarg;
				break;
			case 'n':
				opts->count = (long long) gen_parse_number("--count", optarg, 0, 1e8);
				if ((double) opts->count != strtod(optarg, NULL))
					gen_usage_error("invalid value for %s", "--count");
				break;
			case 'r':
				opts->rate = gen_parse_number("--rate", optarg, 0, 1e9);
				break;
			case 's':
				errno = 0;
				opts->seed = strtoull(optarg, &end, 10);
				if (errno != 0 || end == optarg || *end != '\0')
					gen_usage_error("invalid value for %s", "--seed");
				break;
			case 'X':
				if (strchr(optarg, '=') == NULL || optarg[0] == '=')
					gen_usage_error("-X needs KEY=VALUE, got \"%s\"", optarg);
				opts->props[opts->nprops++] = optarg;
				break;
			case OPT_REDELIVERIES:
			case OPT_CROSS:
			case OPT_DIVERGENT:
			case OPT_MALFORMED:
			case OPT_TOMBSTONES:
				k = GEN_KIND_REDELIVERY + (c - OPT_REDELIVERIES);
				opts->ratios[k] = gen_parse_number(longopts[5 + (c - OPT_REDELIVERIES)].name,
												   optarg, 0, 1);
				break;
			case OPT_MANIFEST:
				opts->manifest = optarg;
				break;
			case OPT_PROGRESS:
				opts->progress = 1;
				break;
			case OPT_ENVELOPE:
				if (strcmp(optarg, "debezium") == 0)
					opts->envelope = GEN_ENVELOPE_DEBEZIUM;
				else if (strcmp(optarg, "connect-record") == 0)
					opts->envelope = GEN_ENVELOPE_CONNECT_RECORD;
				else if (strcmp(optarg, "plain") == 0)
					opts->envelope = GEN_ENVELOPE_PLAIN;
				else
					gen_usage_error("--envelope is plain, debezium or connect-record, not \"%s\"", optarg);
				break;
			case OPT_HEADER:
				{
					char	   *eq = strchr(optarg, '=');

					if (eq == NULL || eq == optarg)
						gen_usage_error("--header needs NAME=VALUE, got \"%s\"", optarg);
					*eq = '\0';
					opts->header_name = optarg;
					opts->header_value = eq + 1;
				}
				break;
			case OPT_EVENT_BYTES:
				opts->event_bytes = (int) gen_parse_number("--event-bytes", optarg, 0,
														   GEN_EVENT_BYTES_MAX);
				break;
			case 'h':
				gen_usage(stdout);
				exit(GEN_EXIT_OK);
			default:
				fprintf(stderr, "Try \"" GEN_NAME " --help\".\n");
				exit(GEN_EXIT_USAGE);
		}
	}
	if (optind < argc)
		gen_usage_error("unexpected argument \"%s\"", argv[optind]);
	if (opts->output != NULL)
	{
		if (opts->brokers != NULL)
			gen_usage_error("%s", "--output writes a file instead of producing to Kafka: drop --brokers");
		if (opts->rate > 0)
			gen_usage_error("%s", "--rate paces Kafka deliveries: drop it with --output");
	}
	else if (opts->brokers == NULL || *opts->brokers == '\0')
		gen_usage_error("%s", "--brokers is required (or --output FILE)");
	for (k = GEN_KIND_REDELIVERY; k < GEN_NKINDS; k++)
		sum += opts->ratios[k];
	if (sum > 1)
		gen_usage_error("%s", "the ratios add up to more than 1");
}

