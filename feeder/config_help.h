/*-------------------------------------------------------------------------
 *
 * config_help.h
 *	  The --help text, printed from the table of options.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_CONFIG_HELP_H
#define FEEDER_CONFIG_HELP_H

#include <stdio.h>

extern void config_usage(FILE *out);

#endif							/* FEEDER_CONFIG_HELP_H */
