/*-------------------------------------------------------------------------
 *
 * registry_refs.h
 *	  A schema with references composed into one schema text avro-c can
 *	  compile.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_REGISTRY_REFS_H
#define FEEDER_REGISTRY_REFS_H

#include <stddef.h>

#include <jansson.h>

#include "registry_status.h"

/*
 * Fetch version of subject from the registry (what names it in messages):
 * REGISTRY_OK with *doc the registry's answer (an object with a "schema"
 * string), which the caller then owns; otherwise err says why, classed as
 * for an id.
 */
typedef registry_status (*registry_refs_fetch) (void *arg, const char *subject,
												long long version,
												const char *what, json_t **doc,
												char *err, size_t errlen);

extern char *registry_refs_compose(const char *text, json_t *references,
								   registry_refs_fetch fetch, void *arg,
								   registry_status *st,
								   char *err, size_t errlen);

#endif							/* FEEDER_REGISTRY_REFS_H */
