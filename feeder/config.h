/*-------------------------------------------------------------------------
 *
 * config.h
 *	  Command line, -F file and environment configuration of the feeder:
 *	  the settings read from their three sources, precedence applied.
 *
 * The settings themselves (feeder_config), the option ids and the defaults
 * are the option table's (config_options.h); --help is config_help.h's.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_CONFIG_H
#define FEEDER_CONFIG_H

#include <stddef.h>

#include "config_options.h"

extern config_result config_parse(feeder_config *cfg, int argc, char **argv,
								  char *err, size_t errlen);
extern void config_free(feeder_config *cfg);
extern const char *config_refused_reason(const char *key);

#endif							/* FEEDER_CONFIG_H */
