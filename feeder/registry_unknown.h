/*-------------------------------------------------------------------------
 *
 * registry_unknown.h
 *	  What the Schema Registry said it does not know: ids retried for a
 *	  grace, then remembered for a while.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_REGISTRY_UNKNOWN_H
#define FEEDER_REGISTRY_UNKNOWN_H

#include <stddef.h>
#include <stdint.h>

#include "registry_status.h"

typedef struct registry_unknown_entry registry_unknown_entry;

/* The ids (and GUIDs) the registry did not know; the caller locks. */
typedef struct registry_unknowns
{
	int64_t		grace_ms;
	int64_t		ttl_ms;
	registry_unknown_entry *entries;
	int			n;
	int			cap;
	double		budget_ms;		/* grace left to give (a token bucket) */
	int64_t		budget_at;		/* clock it was last refilled at, -1 */
	int64_t		guids_until;	/* GUIDs unresolvable until; 0: not known */
	char		guids_err[512];
} registry_unknowns;

extern void registry_unknowns_init(registry_unknowns *u, int64_t grace_ms,
								   int64_t ttl_ms);
extern void registry_unknowns_free(registry_unknowns *u);
extern int	registry_unknowns_known(registry_unknowns *u, int32_t id,
									const char *guid, int64_t now_ms,
									char *err, size_t errlen);
extern void registry_unknowns_forget(registry_unknowns *u, int32_t id,
									 const char *guid);
extern registry_status registry_unknowns_judge(registry_unknowns *u, int32_t id,
											   const char *guid,
											   int unresolvable, int64_t now_ms,
											   char *err, size_t errlen);

#endif							/* FEEDER_REGISTRY_UNKNOWN_H */
