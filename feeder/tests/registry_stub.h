/*-------------------------------------------------------------------------
 *
 * registry_stub.h
 *	  The Schema Registry client of the fuzzers: schemas the program gives
 *	  instead of schemas fetched over HTTP.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_TESTS_REGISTRY_STUB_H
#define FEEDER_TESTS_REGISTRY_STUB_H

#include <stddef.h>
#include <stdint.h>

#include "../registry.h"

extern void registry_stub_init(const char *source);
extern registry_schema *registry_stub_add(int32_t id, registry_schema_type type,
										  const char *text, size_t len);
extern registry_schema *registry_stub_find(int32_t id);
extern int	registry_stub_count(void);
extern void registry_stub_free(void);

#endif							/* FEEDER_TESTS_REGISTRY_STUB_H */
