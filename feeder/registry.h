/*-------------------------------------------------------------------------
 *
 * registry.h
 *	  The Schema Registry client: schemas by id over HTTP (libcurl), kept
 *	  for the life of the process; unknown ids kept for a while.
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEEDER_REGISTRY_H
#define FEEDER_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "avro_json.h"
#include "registry_status.h"

typedef enum registry_schema_type
{
	REGISTRY_AVRO,
	REGISTRY_JSON,
	REGISTRY_PROTOBUF,
	REGISTRY_OTHER
} registry_schema_type;

/* A schema as the registry served it, compiled when it is Avro. */
typedef struct registry_schema
{
	int32_t		id;				/* -1 when fetched by GUID */
	char		guid[40];		/* "" when fetched by id */
	registry_schema_type type;
	char		type_name[16];
	avro_json_schema *avro;		/* NULL unless AVRO and avro-c accepts it */
	char	   *compile_error;	/* why avro is NULL for an AVRO schema */
	int			refs;			/* under the registry's lock */
	int			cached;
} registry_schema;

typedef struct registry_options
{
	const char *urls;			/* URL[,URL]: tried in order */
	const char *user_info;		/* USER:PASSWORD or NULL */
	const char *ca_file;		/* NULL: the system's CAs */
	const char *cert_file;		/* TLS client certificate, or NULL */
	const char *key_file;		/* its private key (with cert_file) */
	long		timeout_ms;
	int			max_schemas;	/* bound of the cache */
	long		unknown_grace_ms;	/* 0: REGISTRY_UNKNOWN_GRACE_MS; < 0: none */
	long		unknown_ttl_ms; /* 0: REGISTRY_UNKNOWN_TTL_MS */
} registry_options;

/*
 * An unknown id is retried (transient) for this long from the registry's
 * first "not found" for it, then quarantined; that answer is kept this
 * long (no request meanwhile).  docs/feeder.md, "Schema Registry topics".
 */
#define REGISTRY_UNKNOWN_GRACE_MS 10000
#define REGISTRY_UNKNOWN_TTL_MS 60000

/* How a request to the registry ended, for the metrics. */
typedef enum registry_result
{
	REGISTRY_RESULT_OK,
	REGISTRY_RESULT_NOT_FOUND,	/* 404: an unknown id */
	REGISTRY_RESULT_UNAVAILABLE,	/* unreachable, timeout, 5xx, 408, 429 */
	REGISTRY_RESULT_REFUSED,	/* 401, 403, TLS, not a registry */
	REGISTRY_NRESULTS
} registry_result;

/* Upper bounds of the request duration histogram, in seconds (+Inf last). */
#define REGISTRY_NBUCKETS 6
#define REGISTRY_BUCKET_LE {0.005, 0.025, 0.1, 0.5, 2.5, 10}

/* What the registry client did so far. */
typedef struct registry_stats
{
	uint64_t	requests[REGISTRY_NRESULTS];
	uint64_t	buckets[REGISTRY_NBUCKETS];	/* not cumulative */
	uint64_t	count;
	double		seconds_sum;
	int			cached;
	uint64_t	unknown_retries;	/* unknown ids retried in their grace */
	uint64_t	negative_hits;	/* lookups answered "unknown" from memory */
	int			up;				/* the last request got a registry's answer */
	char		down_reason[256];	/* why not, when up is 0 */
} registry_stats;

typedef struct registry registry;

extern registry *registry_new(const registry_options *opts);
extern registry_status registry_lookup(registry *r, int32_t id,
									   registry_schema **out,
									   char *err, size_t errlen);
extern registry_status registry_lookup_guid(registry *r, const char *guid,
											registry_schema **out,
											char *err, size_t errlen);
extern void registry_release(registry *r, registry_schema *s);
extern int	registry_cached(registry *r);
extern uint64_t registry_fetches(registry *r);
extern void registry_get_stats(registry *r, registry_stats *out);
extern int	registry_tls_alert_refuses(const char *text);

/*
 * registry_result_name
 *		The label of a request's result in the metrics.
 */
static inline const char *
registry_result_name(registry_result result)
{
	switch (result)
	{
		case REGISTRY_RESULT_OK:
			return "ok";
		case REGISTRY_RESULT_NOT_FOUND:
			return "not_found";
		case REGISTRY_RESULT_UNAVAILABLE:
			return "unavailable";
		case REGISTRY_RESULT_REFUSED:
			return "refused";
		default:
			return "other";
	}
}
extern void registry_free(registry *r);

#endif							/* FEEDER_REGISTRY_H */
