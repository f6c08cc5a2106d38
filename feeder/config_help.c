/*-------------------------------------------------------------------------
 *
 * config_help.c
 *	  The --help text: the option lines from the table of options
 *	  (config_options.c), framed by what is said once for all of them.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <string.h>

#include "config_help.h"
#include "config_options.h"
#include "feeder.h"

/* The column where an option's text starts. */
#define HELP_COLUMN 26

/*
 * config_help_option
 *		One option's lines: "  --name ARG", padded to HELP_COLUMN (two
 *		blanks at least), its first line of text, then every further line
 *		indented to HELP_COLUMN.
 */
static void
config_help_option(FILE *out, const config_optdef *def)
{
	const char *p = def->help;
	int			len;

	if (def->shortopt && def->name)
		len = fprintf(out, "  -%c, --%s", def->shortopt, def->name);
	else if (def->shortopt)
		len = fprintf(out, "  -%c", def->shortopt);
	else
		len = fprintf(out, "  --%s", def->name);
	if (def->arg)
		len += fprintf(out, " %s", def->arg);
	fprintf(out, "%*s", len + 2 <= HELP_COLUMN ? HELP_COLUMN - len : 2, "");
	while (*p)
	{
		const char *nl = strchr(p, '\n');
		size_t		n = nl ? (size_t) (nl - p + 1) : strlen(p);

		if (p != def->help)
			fprintf(out, "%*s", HELP_COLUMN, "");
		fwrite(p, 1, n, out);
		p += n;
	}
}

/*
 * config_usage
 *		The --help text: every option, environment variable and exit code.
 */
void
config_usage(FILE *out)
{
	size_t		i;

	fputs("Usage: " FEEDER_NAME " --brokers HOST:PORT[,...] --topic NAME [OPTION]...\n"
		  "       " FEEDER_NAME " --adopt-kafka-offsets --brokers ... --topic ... [OPTION]...\n"
		  "\n"
		  "Consume OrderReceived events from Kafka and materialize them into PostgreSQL\n"
		  "with received_orders.materialize_orders(), one transaction per batch. An\n"
		  "offset is stored (and later committed) only after its batch committed.\n"
		  "\n"
		  "Options:\n", out);
	for (i = 0; i < config_noptions; i++)
		if (!(config_options[i].flags & CONFIG_OPT_COMMAND))
			config_help_option(out, &config_options[i]);
	fputs("\n"
		  "Positions: each partition starts at the database's position; one the\n"
		  "database has no position of starts at its earliest offset, never at Kafka's\n"
		  "committed offset (log: event=start_position source=earliest reason=no_position).\n"
		  "\n"
		  "Command (the command line only, never in -F or the environment):\n", out);
	for (i = 0; i < config_noptions; i++)
		if (config_options[i].flags & CONFIG_OPT_COMMAND)
			config_help_option(out, &config_options[i]);
	fputs("\n"
		  "Logs: key=value lines on stderr (ts, level, event, ...); passwords are redacted.\n"
		  "SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM: finish the batch in flight,\n"
		  "commit offsets, leave the group, exit 0; a second signal exits at once with\n"
		  "status 1.\n"
		  "\n"
		  "Exit status: 0 clean shutdown, 1 runtime failure, 2 bad arguments,\n"
		  "3 database or Schema Registry configuration or permission error (the\n"
		  "consumer group belonging to another role, or its positions to another Kafka\n"
		  "cluster, included), 4 Kafka configuration or fatal error, 5 a database\n"
		  "position outside its partition (events lost; see --accept-position-loss).\n"
		  "--adopt-kafka-offsets: 0 done, 1 the database could not be reached or\n"
		  "written, 2, 3 as above, 4 Kafka could not be read (nothing written).\n",
		  out);
}
