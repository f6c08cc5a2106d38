/*-------------------------------------------------------------------------
 *
 * config_options.h
 *	  The table of the feeder's options, shared by the readers of its
 *	  sources (config.c) and the help text (config_help.c).
 *
 * One row per option: adding an option is one row here (plus its
 * config_option id and its feeder_config field in config.h).  getopt's
 * long options, the -F keys, the FEEDER_* variables read and the option
 * lines of --help are all produced from the rows.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_CONFIG_OPTIONS_H
#define FEEDER_CONFIG_OPTIONS_H

#include <stddef.h>

#include "config.h"

/* Row flags. */
#define CONFIG_OPT_COMMAND		0x01	/* --help lists it under "Command" */
#define CONFIG_OPT_REDACT		0x02	/* hide the password of its argv copy */

struct config_optdef;

/*
 * Checks a value and stores it in the row's field; where names the origin
 * for messages ("--batch-size", "FILE:12", "FEEDER_TOPIC").
 */
typedef config_result (*config_setter) (feeder_config *cfg,
										const struct config_optdef *def,
										const char *value, const char *where,
										char *err, size_t errlen);

typedef struct config_optdef
{
	const char *name;			/* long option and -F key; NULL: short only */
	int			val;			/* config_option id; for the commands, the
								 * letter config_parse switches on */
	char		shortopt;		/* its short option (-h), or 0 */
	int			has_arg;		/* getopt's required_argument or no_argument */
	int			flags;			/* CONFIG_OPT_* */
	const char *env;			/* FEEDER_* variable, or NULL */
	config_setter set;			/* NULL for the commands, command line only
								 * (config_parse acts on them) */
	size_t		field;			/* offsetof(feeder_config, ...) */
	int			min;			/* integers: the bounds and the default */
	int			max;
	int			dflt;
	const char *what;			/* integers: the unit in messages; strings:
								 * the message of a refused value */
	const char *const *choices; /* config_set_choice: the values taken */
	const char *min_note;		/* integers: said after the minimum */
	const char *arg;			/* --help: the argument's name */
	const char *help;			/* --help: the text, lines after the first
								 * indented by config_usage */
} config_optdef;

extern const config_optdef config_options[];
extern const size_t config_noptions;

extern const config_optdef *config_optdef_by_name(const char *name);
extern const config_optdef *config_optdef_by_id(config_option id);
extern void config_option_defaults(feeder_config *cfg);
extern config_result config_error(char *err, size_t errlen, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));
extern char *config_strdup(const char *s);

#endif							/* FEEDER_CONFIG_OPTIONS_H */
