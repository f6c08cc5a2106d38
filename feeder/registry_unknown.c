/*-------------------------------------------------------------------------
 *
 * registry_unknown.c
 *	  What the Schema Registry said it does not know: ids retried for a
 *	  grace, then remembered for a while.
 *
 * A registry replica may answer 40403 for a schema registered a moment ago
 * on another one: an unknown id is retried (the lookup is transient, the
 * batch waits) for a grace from the first such answer, and only then is
 * its message quarantined.  That answer is then kept for ttl_ms, so that a
 * producer cycling through ids it made up costs no request per message;
 * and while REGISTRY_GRACE_MAX_CONFIRMED ids turned out unknown within the
 * last ttl_ms, a new unknown id gets no grace, so that such ids cannot
 * hold the batches up for a grace each.  The grace is also a budget that
 * a trickle of made-up ids cannot renew: the unknown ids share grace_ms of
 * waiting, refilled at grace_ms per ttl_ms (a token bucket of time: 10 s,
 * 10 s a minute by default); each retry of an id in its grace spends the
 * time since that id's last retry, and once the budget is spent an unknown
 * id is unknown at once (its message quarantined) until it refills.  One
 * made-up id every 12 s so waits at most a sixth of the time, not all of
 * it; a replica a few seconds behind still gets its full grace.  A
 * registry that cannot resolve
 * GUIDs at all makes every GUID unknown for ttl_ms, without grace.  At most
 * REGISTRY_MAX_UNKNOWN ids are remembered (the oldest is forgotten first).
 * Time is the caller's (milliseconds of a clock that does not jump), and
 * so is the lock.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry_unknown.h"
#include "utf8.h"

#define REGISTRY_MAX_UNKNOWN 1024
#define REGISTRY_GRACE_MAX_CONFIRMED 8

/* The grace budget below which no more grace is given. */
#define REGISTRY_GRACE_MIN_BUDGET_MS 1

/* An id (or GUID) the registry said it does not know. */
struct registry_unknown_entry
{
	int32_t		id;
	char		guid[40];		/* "" when by id */
	int64_t		first_ms;		/* its first "not found" */
	int64_t		last_ms;		/* its last retry in grace */
	int64_t		until_ms;		/* answered from here until; 0: in grace */
	char		err[512];		/* the registry's answer */
};

/*
 * registry_unknowns_init, registry_unknowns_free
 *		An empty memory with its grace (0: none) and time to keep.
 */
void
registry_unknowns_init(registry_unknowns *u, int64_t grace_ms, int64_t ttl_ms)
{
	memset(u, 0, sizeof(*u));
	u->grace_ms = grace_ms;
	u->ttl_ms = ttl_ms;
	u->budget_ms = grace_ms;
	u->budget_at = -1;
}

/*
 * registry_unknowns_refill
 *		The grace budget at now_ms: refilled at grace_ms per ttl_ms since
 *		it was last looked at, up to grace_ms.
 */
static void
registry_unknowns_refill(registry_unknowns *u, int64_t now_ms)
{
	if (u->budget_at >= 0 && now_ms > u->budget_at && u->ttl_ms > 0)
	{
		double		refill = (double) (now_ms - u->budget_at) *
			(double) u->grace_ms / (double) u->ttl_ms;

		u->budget_ms = u->budget_ms + refill >= (double) u->grace_ms ?
			(double) u->grace_ms : u->budget_ms + refill;
	}
	if (now_ms > u->budget_at)
		u->budget_at = now_ms;
}

void
registry_unknowns_free(registry_unknowns *u)
{
	free(u->entries);
	u->entries = NULL;
	u->n = u->cap = 0;
}

/*
 * registry_unknowns_find
 *		The entry of an id or GUID, or NULL.
 */
static registry_unknown_entry *
registry_unknowns_find(registry_unknowns *u, int32_t id, const char *guid)
{
	int			i;

	for (i = 0; i < u->n; i++)
		if (guid ? strcmp(u->entries[i].guid, guid) == 0 :
			(u->entries[i].guid[0] == '\0' && u->entries[i].id == id))
			return &u->entries[i];
	return NULL;
}

/*
 * registry_unknowns_known
 *		Whether the registry said lately that it does not know the id or
 *		GUID (or, for a GUID, that it cannot resolve GUIDs), and that answer
 *		still holds: then err is that answer, and no request is needed.
 */
int
registry_unknowns_known(registry_unknowns *u, int32_t id, const char *guid,
						int64_t now_ms, char *err, size_t errlen)
{
	registry_unknown_entry *e;

	if (guid && u->guids_until > now_ms)
	{
		utf8_copy(err, errlen, u->guids_err);
		return 1;
	}
	e = registry_unknowns_find(u, id, guid);
	if (e == NULL || e->until_ms <= now_ms)
		return 0;
	utf8_copy(err, errlen, e->err);
	return 1;
}

/*
 * registry_unknowns_forget
 *		The registry knows the id now: forget that it did not.
 */
void
registry_unknowns_forget(registry_unknowns *u, int32_t id, const char *guid)
{
	registry_unknown_entry *e = registry_unknowns_find(u, id, guid);

	if (e)
		*e = u->entries[--u->n];
}

/*
 * registry_unknowns_add
 *		A new entry for an id or GUID (the oldest dropped when full); NULL
 *		when out of memory.
 */
static registry_unknown_entry *
registry_unknowns_add(registry_unknowns *u, int32_t id, const char *guid,
					  int64_t now_ms)
{
	registry_unknown_entry *e;
	int			i;

	if (u->n == REGISTRY_MAX_UNKNOWN)
	{
		int			oldest = 0;

		for (i = 1; i < u->n; i++)
			if (u->entries[i].first_ms < u->entries[oldest].first_ms)
				oldest = i;
		u->entries[oldest] = u->entries[--u->n];
	}
	if (u->n == u->cap)
	{
		int			cap = u->cap ? u->cap * 2 : 16;
		registry_unknown_entry *grown = realloc(u->entries, sizeof(*grown) * (size_t) cap);

		if (grown == NULL)
			return NULL;
		u->entries = grown;
		u->cap = cap;
	}
	e = &u->entries[u->n++];
	memset(e, 0, sizeof(*e));
	e->id = id;
	snprintf(e->guid, sizeof(e->guid), "%s", guid ? guid : "");
	e->first_ms = now_ms;
	e->last_ms = now_ms;
	return e;
}

/*
 * registry_unknowns_judge
 *		The registry answered that it does not know an id or GUID (or a
 *		schema its references name; err is its answer).  REGISTRY_WAIT
 *		while the id is in its grace and the grace budget holds (err then
 *		says it is retried; the time since the id's last retry is spent
 *		from the budget); REGISTRY_UNKNOWN_ID past it, or when no grace is
 *		left to give, and that answer is kept for ttl_ms.  For a registry that cannot resolve
 *		GUIDs (unresolvable): REGISTRY_UNKNOWN_ID, and every GUID likewise
 *		for ttl_ms.
 */
registry_status
registry_unknowns_judge(registry_unknowns *u, int32_t id, const char *guid,
						int unresolvable, int64_t now_ms,
						char *err, size_t errlen)
{
	registry_unknown_entry *e;
	int			confirmed = 0,
				i;
	size_t		len;

	if (unresolvable)
	{
		utf8_copy(u->guids_err, sizeof(u->guids_err), err);
		u->guids_until = now_ms + u->ttl_ms;
		return REGISTRY_UNKNOWN_ID;
	}
	e = registry_unknowns_find(u, id, guid);
	if (e == NULL && (e = registry_unknowns_add(u, id, guid, now_ms)) == NULL)
		return REGISTRY_UNKNOWN_ID; /* out of memory: no grace, no memory */
	for (i = 0; i < u->n; i++)
		if (u->entries[i].until_ms > now_ms)
			confirmed++;
	registry_unknowns_refill(u, now_ms);
	if (e->until_ms == 0)
	{
		/* the wait since its last retry, within its grace */
		int64_t		end = now_ms < e->first_ms + u->grace_ms ?
			now_ms : e->first_ms + u->grace_ms;

		if (end > e->last_ms)
			u->budget_ms -= (double) (end - e->last_ms);
	}
	e->last_ms = now_ms;
	if (e->until_ms == 0 && now_ms - e->first_ms < u->grace_ms &&
		confirmed < REGISTRY_GRACE_MAX_CONFIRMED &&
		u->budget_ms >= REGISTRY_GRACE_MIN_BUDGET_MS)
	{
		len = strlen(err);
		snprintf(err + len, errlen - len,
				 "; retried for up to %lld ms from the first such answer (a registry replica may not have a new schema yet), while the grace budget lasts (%lld ms left of %lld ms, refilled at that much a %lld ms); meanwhile its partition waits, the others go on",
				 (long long) u->grace_ms, (long long) u->budget_ms,
				 (long long) u->grace_ms, (long long) u->ttl_ms);
		utf8_fix(err);
		return REGISTRY_WAIT;
	}
	if (e->until_ms == 0 && u->budget_ms < REGISTRY_GRACE_MIN_BUDGET_MS &&
		now_ms - e->first_ms < u->grace_ms)
	{
		len = strlen(err);
		snprintf(err + len, errlen - len,
				 "; not retried: the grace budget of unknown ids is spent (%lld ms of retries a %lld ms at most)",
				 (long long) u->grace_ms, (long long) u->ttl_ms);
		utf8_fix(err);
	}
	e->until_ms = now_ms + u->ttl_ms;
	utf8_copy(e->err, sizeof(e->err), err);
	return REGISTRY_UNKNOWN_ID;
}
