/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  The Schema Registry client: schemas by id over HTTP (libcurl), kept
 *	  for the life of the process.
 *
 * GET /schemas/ids/{id} answers {"schema": "...", "schemaType": ...}
 * (schemaType absent: AVRO); GET /schemas/guids/{guid} likewise, for a
 * schema named by the GUID of a __value_schema_id header.  A schema never
 * changes under its id, so each id is asked once and kept, up to
 * max_schemas (then an unused one is dropped).  The lanes' threads share
 * the cache under a mutex; a fetch runs outside it, and only one lane
 * fetches a given id (or GUID) at a time: the others wait for its result
 * (a registry_fetching record) and take it, the schema or the failure, so
 * lanes that meet a new id at once ask the registry once, and a failing
 * registry costs them one request's time, not one each in turn.  A waiter
 * waits at most as long as the fetch can take (each URL's timeout), plus
 * a margin.  Answers are classed by whose fault they are:
 * unreachable, timing out, 5xx or 429 is transient (the batch waits and
 * is retried); 401, 403, a TLS failure, or an answer that is no registry's
 * is a configuration error; 404 with error code 40403 (or 40401) means the
 * id is unknown, and only the message that carries it is bad.  A registry
 * replica may not know a brand-new id yet, so an unknown id is retried
 * (transient) for a grace before its message is quarantined, and the
 * answer is then kept for a while, so that a producer cycling through ids
 * costs no request per message (registry_unknown.c).  A GUID lookup
 * answered by a plain 404 (a registry without /schemas/guids) makes that
 * message undecodable, never the configuration wrong.
 *
 * A schema may name types of other subjects ("references": name, subject,
 * version): those schemas are fetched (GET /subjects/{s}/versions/{v}),
 * theirs in turn, bounded in depth and number, and composed into one
 * schema text (registry_refs.c), which avro-c then compiles; the result is
 * cached under the id like any schema.
 *
 * The credentials go to libcurl only; no log line or error text holds them.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "avro_alloc.h"
#include "registry.h"
#include "tls_alert.h"
#include "registry_refs.h"
#include "registry_unknown.h"
#include "utf8.h"

/* Largest answer accepted (a schema is rarely more than a few kB). */
#define REGISTRY_MAX_ANSWER (8 * 1024 * 1024)

/*
 * How much longer than the fetch itself can take (each URL's timeout in
 * turn) a lane waits for another lane's fetch before giving up.
 */
#define REGISTRY_WAIT_MARGIN_MS 1000

/*
 * A lookup asking the registry: listed under lock while it asks, then its
 * result is left here for the lanes that waited on it.  Held by the lane
 * that fetches and by each waiting lane (refs, under lock); the last one
 * frees it.
 */
typedef struct registry_fetching
{
	int32_t		id;
	char	   *guid;			/* NULL: by id */
	int			refs;			/* under lock */
	int			done;			/* under lock: the result below is set */
	registry_status status;
	registry_schema *schema;	/* REGISTRY_OK: one reference per waiter */
	char		err[512];		/* otherwise: why */
	struct registry_fetching *next;
} registry_fetching;

struct registry
{
	char	  **urls;
	int			nurls;
	char	   *user_info;
	char	   *ca_file;
	char	   *cert_file;
	char	   *key_file;
	long		timeout_ms;
	int			max_schemas;
	pthread_mutex_t lock;
	pthread_cond_t fetched;		/* a fetch ended (CLOCK_MONOTONIC) */
	registry_fetching *fetching;	/* under lock */
	registry_schema **cache;
	int			ncache;
	registry_unknowns unknown;	/* under lock */
	uint64_t	fetches;
	registry_stats stats;		/* under lock */
};

static const double registry_bucket_le[REGISTRY_NBUCKETS] = REGISTRY_BUCKET_LE;

/*
 * registry_record
 *		Count one request: its result and how long it took.
 */
static void
registry_record(registry *r, registry_status st, double seconds,
				const char *err)
{
	registry_result result = st == REGISTRY_OK ? REGISTRY_RESULT_OK :
		st == REGISTRY_UNKNOWN_ID ? REGISTRY_RESULT_NOT_FOUND :
		st == REGISTRY_TRANSIENT ? REGISTRY_RESULT_UNAVAILABLE : REGISTRY_RESULT_REFUSED;
	int			i;

	pthread_mutex_lock(&r->lock);
	r->stats.requests[result]++;
	for (i = 0; i < REGISTRY_NBUCKETS && seconds > registry_bucket_le[i]; i++)
		;
	if (i < REGISTRY_NBUCKETS)
		r->stats.buckets[i]++;
	r->stats.count++;
	r->stats.seconds_sum += seconds;
	r->stats.up = st == REGISTRY_OK || st == REGISTRY_UNKNOWN_ID;
	if (!r->stats.up)
		snprintf(r->stats.down_reason, sizeof(r->stats.down_reason), "%s", err);
	pthread_mutex_unlock(&r->lock);
}

/*
 * registry_get_stats
 *		A copy of the client's counters, for the metrics.
 */
void
registry_get_stats(registry *r, registry_stats *out)
{
	pthread_mutex_lock(&r->lock);
	*out = r->stats;
	out->cached = r->ncache;
	pthread_mutex_unlock(&r->lock);
}

/* An HTTP answer's body. */
typedef struct registry_body
{
	char	   *data;
	size_t		len;
	int			too_large;
} registry_body;

/*
 * registry_new
 *		A client for the registry at opts->urls; NULL when out of memory.
 *		curl_global_init is the caller's (main, before threads start).
 */
registry *
registry_new(const registry_options *opts)
{
	registry   *r = calloc(1, sizeof(registry));
	char	   *copy,
			   *tok,
			   *save = NULL;
	pthread_condattr_t monotonic;

	if (r == NULL || (copy = strdup(opts->urls)) == NULL)
	{
		free(r);
		return NULL;
	}
	r->urls = calloc(strlen(opts->urls) + 1, sizeof(char *));
	for (tok = strtok_r(copy, ",", &save); tok && r->urls; tok = strtok_r(NULL, ",", &save))
	{
		size_t		n = strlen(tok);

		while (n > 0 && tok[n - 1] == '/')
			tok[--n] = '\0';	/* base URLs with or without the slash */
		r->urls[r->nurls++] = strdup(tok);
	}
	free(copy);
	r->user_info = opts->user_info ? strdup(opts->user_info) : NULL;
	r->ca_file = opts->ca_file ? strdup(opts->ca_file) : NULL;
	r->cert_file = opts->cert_file ? strdup(opts->cert_file) : NULL;
	r->key_file = opts->key_file ? strdup(opts->key_file) : NULL;
	r->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 10000;
	r->max_schemas = opts->max_schemas > 0 ? opts->max_schemas : 1000;
	registry_unknowns_init(&r->unknown,
						   opts->unknown_grace_ms > 0 ? opts->unknown_grace_ms :
						   opts->unknown_grace_ms < 0 ? 0 : REGISTRY_UNKNOWN_GRACE_MS,
						   opts->unknown_ttl_ms > 0 ? opts->unknown_ttl_ms :
						   REGISTRY_UNKNOWN_TTL_MS);
	r->cache = calloc(r->max_schemas, sizeof(registry_schema *));
	r->stats.up = 1;			/* until a request says otherwise */
	pthread_mutex_init(&r->lock, NULL);
	/* waits are bounded on the clock that does not jump */
	pthread_condattr_init(&monotonic);
	pthread_condattr_setclock(&monotonic, CLOCK_MONOTONIC);
	pthread_cond_init(&r->fetched, &monotonic);
	pthread_condattr_destroy(&monotonic);
	if (r->urls == NULL || r->cache == NULL || r->nurls == 0)
	{
		registry_free(r);
		return NULL;
	}
	return r;
}

/*
 * registry_write
 *		libcurl's write callback: collect the body, bounded.
 */
static size_t
registry_write(char *ptr, size_t size, size_t nmemb, void *arg)
{
	registry_body *body = arg;
	size_t		n = size * nmemb;
	char	   *data;

	if (body->len + n > REGISTRY_MAX_ANSWER)
	{
		body->too_large = 1;
		return 0;
	}
	data = realloc(body->data, body->len + n + 1);
	if (data == NULL)
		return 0;
	memcpy(data + body->len, ptr, n);
	body->data = data;
	body->len += n;
	body->data[body->len] = '\0';
	return n;
}

/*
 * registry_schema_free
 *		Release a schema no one holds.
 */
static void
registry_schema_free(registry_schema *s)
{
	avro_json_free(s->avro);
	free(s->compile_error);
	free(s);
}

/*
 * registry_error_code
 *		The error_code of a registry's error answer, or 0.
 */
static long
registry_error_code(const registry_body *body, char *message, size_t len)
{
	json_error_t jerr;
	json_t	   *doc = body->data ? json_loadb(body->data, body->len, 0, &jerr) : NULL;
	long		code = 0;

	message[0] = '\0';
	if (doc && json_is_integer(json_object_get(doc, "error_code")))
	{
		code = (long) json_integer_value(json_object_get(doc, "error_code"));
		snprintf(message, len, "%s",
				 json_string_value(json_object_get(doc, "message")) ?
				 json_string_value(json_object_get(doc, "message")) : "");
	}
	json_decref(doc);
	return code;
}

/*
 * registry_tls_alert_refuses
 *		Whether libcurl's error text reports a TLS alert by which the peer
 *		refuses the client's certificate (tls_alert.c, shared with the
 *		Kafka client's refusals).
 */
int
registry_tls_alert_refuses(const char *text)
{
	return tls_alert_refuses_certificate(text);
}

/*
 * registry_tls_refused
 *		Whether a failed request was the registry refusing the client in
 *		TLS: libcurl's "client certificate required", or a certificate
 *		alert received after the handshake (TLS 1.3 verifies the client's
 *		certificate after the client's side of the handshake is done, so
 *		OpenSSL reports the server's alert on the first read or write).
 */
static int
registry_tls_refused(CURLcode rc, const char *what_failed)
{
	if (rc == CURLE_SSL_CLIENTCERT)
		return 1;
	return (rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR) &&
		registry_tls_alert_refuses(what_failed);
}

/*
 * registry_what
 *		"schema id N" or "schema guid G", for messages.
 */
static void
registry_what(int32_t id, const char *guid, char *what, size_t len)
{
	if (guid)
		snprintf(what, len, "schema guid %s", guid);
	else
		snprintf(what, len, "schema id %d", id);
}

/*
 * registry_get
 *		GET base + path and class the answer (see the file's header).  what
 *		names the thing asked for in err ("schema id 7").  REGISTRY_OK with
 *		the body of a 200 in *body (the caller frees body->data).  lookup
 *		says which 404 means "not there": REGISTRY_GET_ID, a 404 with
 *		40403 or 40401; REGISTRY_GET_GUID, any 404 (or other refusal of the
 *		request itself: 400, 405, 422, 501) of a registry that may not
 *		resolve GUIDs, *unresolvable set; REGISTRY_GET_SUBJECT (a
 *		reference's subject and version), 40401, 40402 or 40403.
 */
typedef enum registry_get_kind
{
	REGISTRY_GET_ID,
	REGISTRY_GET_GUID,
	REGISTRY_GET_SUBJECT
} registry_get_kind;

static registry_status
registry_get(registry *r, const char *base, const char *path, const char *what,
			 registry_get_kind lookup, registry_body *body, int *unresolvable,
			 char *err, size_t errlen)
{
	CURL	   *curl = curl_easy_init();
	char		url[4096];
	char		curl_err[CURL_ERROR_SIZE] = "";
	char		message[256];
	long		status = 0,
				code;
	CURLcode	rc;
	registry_status result;
	struct timespec started,
				ended;

	memset(body, 0, sizeof(*body));
	if (curl == NULL)
	{
		snprintf(err, errlen, "could not start an HTTP request (out of memory)");
		return REGISTRY_TRANSIENT;
	}
	snprintf(url, sizeof(url), "%s%s", base, path);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, registry_write);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, r->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, r->timeout_ms);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_USERAGENT, "received-orders-feeder");
	if (r->user_info)
	{
		curl_easy_setopt(curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		curl_easy_setopt(curl, CURLOPT_USERPWD, r->user_info);
	}
	if (r->ca_file)
		curl_easy_setopt(curl, CURLOPT_CAINFO, r->ca_file);
	if (r->cert_file)
	{
		/* libcurl reads the files; the key never passes through here */
		curl_easy_setopt(curl, CURLOPT_SSLCERT, r->cert_file);
		curl_easy_setopt(curl, CURLOPT_SSLKEY, r->key_file);
	}
	clock_gettime(CLOCK_MONOTONIC, &started);
	rc = curl_easy_perform(curl);
	clock_gettime(CLOCK_MONOTONIC, &ended);
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(curl);
	__atomic_fetch_add(&r->fetches, 1, __ATOMIC_RELAXED);

	if (rc != CURLE_OK)
	{
		const char *what_failed = curl_err[0] ? curl_err : curl_easy_strerror(rc);
		int			refused = registry_tls_refused(rc, what_failed);
		int			tls = refused || rc == CURLE_SSL_CONNECT_ERROR ||
			rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CERTPROBLEM ||
			rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_SSL_CIPHER;

		snprintf(err, errlen, "schema registry %s: %s%s", base, what_failed,
				 !refused ? "" : r->cert_file == NULL ?
				 ": the registry requires a TLS client certificate: give --schema-registry-cert and --schema-registry-key" :
				 ": the registry refused the TLS client certificate: check that --schema-registry-cert is valid (not expired or revoked), signed by a CA the registry trusts, and that --schema-registry-key is its key");
		result = tls ? REGISTRY_FATAL : REGISTRY_TRANSIENT;
	}
	else if (status == 200)
		result = REGISTRY_OK;
	else
	{
		code = registry_error_code(body, message, sizeof(message));
		if (code)
			snprintf(err, errlen, "schema registry %s answered HTTP %ld for %s (%ld %s)",
					 base, status, what, code, message);
		else
			snprintf(err, errlen, "schema registry %s answered HTTP %ld for %s",
					 base, status, what);
		if (status == 404 && (code == 40403 || code == 40401 ||
							  (lookup == REGISTRY_GET_SUBJECT && code == 40402)))
			result = REGISTRY_UNKNOWN_ID;
		else if (status >= 500 && !(lookup == REGISTRY_GET_GUID && status == 501))
			result = REGISTRY_TRANSIENT;
		else if (status == 429 || status == 408)
			result = REGISTRY_TRANSIENT;
		else if (lookup == REGISTRY_GET_GUID && status != 401 && status != 403)
		{
			/*
			 * A registry without /schemas/guids (older Confluent, Apicurio,
			 * Karapace) answers a plain 404: it cannot name the schema of
			 * a __value_schema_id header, which makes that message
			 * undecodable; the feeder's configuration is not wrong.
			 */
			*unresolvable = 1;
			snprintf(err, errlen,
					 "this registry cannot resolve the schema GUIDs of __value_schema_id headers (%s answered HTTP %ld for /schemas/guids/)",
					 base, status);
			result = REGISTRY_UNKNOWN_ID;
		}
		else
			result = REGISTRY_FATAL;	/* 401, 403, a 404 of no registry... */
	}
	if (result != REGISTRY_OK)
	{
		utf8_fix(err);
		free(body->data);
		memset(body, 0, sizeof(*body));
	}
	registry_record(r, result, (double) (ended.tv_sec - started.tv_sec) +
					(double) (ended.tv_nsec - started.tv_nsec) / 1e9, err);
	return result;
}

/* Where registry_fetch_subject asks: the client and the URL in use. */
typedef struct registry_at
{
	registry   *r;
	const char *base;
} registry_at;

/*
 * registry_fetch_subject
 *		GET /subjects/{subject}/versions/{version} for a reference
 *		(registry_refs_fetch): the registry's answer, or its failure (a
 *		subject or version it does not have: unknown).
 */
static registry_status
registry_fetch_subject(void *arg, const char *subject, long long version,
					   const char *what, json_t **doc, char *err, size_t errlen)
{
	registry_at *at = arg;
	char	   *escaped = curl_easy_escape(NULL, subject, 0);
	char		path[2048];
	registry_body body;
	registry_status st;
	json_error_t jerr;
	int			unresolvable = 0;

	if (escaped == NULL)
	{
		snprintf(err, errlen, "out of memory");
		return REGISTRY_TRANSIENT;
	}
	snprintf(path, sizeof(path), "/subjects/%s/versions/%lld", escaped, version);
	curl_free(escaped);
	st = registry_get(at->r, at->base, path, what, REGISTRY_GET_SUBJECT, &body,
					  &unresolvable, err, errlen);
	if (st != REGISTRY_OK)
		return st;
	*doc = json_loadb(body.data ? body.data : "", body.len, 0, &jerr);
	free(body.data);
	if (!json_is_string(json_object_get(*doc, "schema")))
	{
		snprintf(err, errlen, "the answer for %.320s is not a Schema Registry's (no \"schema\" string)", what);
		json_decref(*doc);
		*doc = NULL;
		return REGISTRY_FATAL;
	}
	return REGISTRY_OK;
}

/*
 * registry_parse
 *		A 200 answer's schema, compiled when it is Avro (composed first with
 *		the schemas its references name, fetched from base).  REGISTRY_OK
 *		with *out set; otherwise err says why: the body is not a
 *		registry's answer (REGISTRY_FATAL), or fetching a reference failed
 *		(as for an id).
 */
static registry_status
registry_parse(registry *r, const char *base, int32_t id, const char *guid,
			   const registry_body *body, registry_schema **out,
			   char *err, size_t errlen)
{
	json_error_t jerr;
	json_t	   *doc = json_loadb(body->data ? body->data : "", body->len, 0, &jerr);
	json_t	   *references;
	const char *text,
			   *type;
	registry_schema *s;
	registry_status st = REGISTRY_OK;
	char		cerr[512];

	if (doc == NULL || !json_is_string(json_object_get(doc, "schema")))
	{
		if (guid)
			snprintf(err, errlen, "the answer for schema guid %s is not a Schema Registry's (no \"schema\" string)", guid);
		else
			snprintf(err, errlen, "the answer for schema id %d is not a Schema Registry's (no \"schema\" string)", id);
		json_decref(doc);
		return REGISTRY_FATAL;
	}
	text = json_string_value(json_object_get(doc, "schema"));
	type = json_string_value(json_object_get(doc, "schemaType"));
	references = json_object_get(doc, "references");
	if (type == NULL)
		type = "AVRO";
	s = calloc(1, sizeof(registry_schema));
	if (s == NULL)
	{
		snprintf(err, errlen, "out of memory");
		json_decref(doc);
		return REGISTRY_TRANSIENT;
	}
	s->id = guid ? -1 : id;
	snprintf(s->guid, sizeof(s->guid), "%s", guid ? guid : "");
	snprintf(s->type_name, sizeof(s->type_name), "%s", type);
	s->type = strcmp(type, "AVRO") == 0 ? REGISTRY_AVRO :
		strcmp(type, "JSON") == 0 ? REGISTRY_JSON :
		strcmp(type, "PROTOBUF") == 0 ? REGISTRY_PROTOBUF : REGISTRY_OTHER;
	avro_alloc_oom_clear();
	if (s->type == REGISTRY_AVRO && json_array_size(references) > 0)
	{
		registry_at at = {r, base};
		char	   *composed = registry_refs_compose(text, references,
													 registry_fetch_subject, &at,
													 &st, cerr, sizeof(cerr));

		if (composed)
		{
			s->avro = avro_json_compile(composed, strlen(composed), cerr, sizeof(cerr));
			free(composed);
		}
		else if (st != REGISTRY_OK)
		{
			snprintf(err, errlen, "%s", cerr);
			registry_schema_free(s);
			json_decref(doc);
			return st;
		}
	}
	else if (s->type == REGISTRY_AVRO)
		s->avro = avro_json_compile(text, json_string_length(json_object_get(doc, "schema")),
									cerr, sizeof(cerr));
	if (s->type == REGISTRY_AVRO && s->avro == NULL && avro_alloc_oom())
	{
		/* the system's memory, not the schema: not kept, asked again */
		char		what[64];

		registry_what(id, guid, what, sizeof(what));
		snprintf(err, errlen, "out of memory while compiling %s", what);
		registry_schema_free(s);
		json_decref(doc);
		return REGISTRY_TRANSIENT;
	}
	if (s->type == REGISTRY_AVRO && s->avro == NULL)
	{
		/* cut to fit on a character boundary: a reason sent as text */
		utf8_fix(cerr);
		s->compile_error = strdup(cerr);
	}
	json_decref(doc);
	*out = s;
	return REGISTRY_OK;
}

/*
 * registry_fetch_one
 *		Ask one URL for an id (or a GUID), its references included.
 *		*unresolvable is set when the registry cannot resolve GUIDs.
 */
static registry_status
registry_fetch_one(registry *r, const char *base, int32_t id, const char *guid,
				   registry_schema **out, int *unresolvable,
				   char *err, size_t errlen)
{
	char		what[64];
	char		path[128];
	registry_body body;
	registry_status result;

	if (guid)
		snprintf(path, sizeof(path), "/schemas/guids/%s", guid);
	else
		snprintf(path, sizeof(path), "/schemas/ids/%d", id);
	registry_what(id, guid, what, sizeof(what));
	result = registry_get(r, base, path, what,
						  guid ? REGISTRY_GET_GUID : REGISTRY_GET_ID, &body,
						  unresolvable, err, errlen);
	if (result == REGISTRY_OK)
	{
		result = registry_parse(r, base, id, guid, &body, out, err, errlen);
		free(body.data);
	}
	return result;
}

/*
 * registry_find
 *		The cached schema of an id, held (refs + 1), or NULL; under lock.
 */
static registry_schema *
registry_find(registry *r, int32_t id, const char *guid)
{
	int			i;

	for (i = 0; i < r->ncache; i++)
		if (guid ? strcmp(r->cache[i]->guid, guid) == 0 :
			(r->cache[i]->guid[0] == '\0' && r->cache[i]->id == id))
		{
			r->cache[i]->refs++;
			return r->cache[i];
		}
	return NULL;
}

/*
 * registry_fetching_drop
 *		Let go of a fetch record; the last holder frees it.  Under lock.
 */
static void
registry_fetching_drop(registry_fetching *f)
{
	if (--f->refs > 0)
		return;
	free(f->guid);
	free(f);
}

/*
 * registry_wait
 *		Wait for another lane's fetch f and take its result: the schema
 *		(held) or the failure, never a fetch of our own.  The wait is
 *		bounded by what the fetch can take, each URL's timeout, plus a
 *		margin; past it, transient.  Called under lock; returns unlocked.
 */
static registry_status
registry_wait(registry *r, registry_fetching *f, registry_schema **out,
			  char *err, size_t errlen)
{
	long long	wait_ms = (long long) r->nurls * r->timeout_ms +
		REGISTRY_WAIT_MARGIN_MS;
	struct timespec deadline;
	registry_status st;
	char		what[64];

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += wait_ms / 1000;
	deadline.tv_nsec += (wait_ms % 1000) * 1000000;
	if (deadline.tv_nsec >= 1000000000)
	{
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000;
	}
	f->refs++;
	while (!f->done &&
		   pthread_cond_timedwait(&r->fetched, &r->lock, &deadline) != ETIMEDOUT)
		;
	if (f->done)
	{
		st = f->status;
		if (st == REGISTRY_OK)
			*out = f->schema;	/* the fetching lane counted this reference */
		else
			snprintf(err, errlen, "%s", f->err);
	}
	else
	{
		registry_what(f->id, f->guid, what, sizeof(what));
		snprintf(err, errlen,
				 "schema registry: waited %lld ms for another lane's lookup of %s, which has not ended (%d URL(s), --schema-registry-timeout-ms %ld each); the batch is retried",
				 wait_ms, what, r->nurls, r->timeout_ms);
		st = REGISTRY_TRANSIENT;
	}
	registry_fetching_drop(f);
	pthread_mutex_unlock(&r->lock);
	return st;
}

/*
 * registry_keep
 *		Cache a fetched schema held by holders lanes, when there is room
 *		(full: an unused one is dropped, or this one stays uncached).
 *		Under lock.
 */
static void
registry_keep(registry *r, registry_schema *s, int holders)
{
	int			i;

	s->refs = holders;
	if (r->ncache == r->max_schemas)
	{
		for (i = 0; i < r->ncache && r->cache[i]->refs > 0; i++)
			;
		if (i < r->ncache)
		{
			registry_schema_free(r->cache[i]);
			r->cache[i] = r->cache[--r->ncache];
		}
	}
	if (r->ncache < r->max_schemas)
	{
		s->cached = 1;
		r->cache[r->ncache++] = s;
	}
}

/*
 * registry_now_ms
 *		Milliseconds of the clock that does not jump.
 */
static int64_t
registry_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * registry_lookup_key
 *		The schema of an id, or of a GUID when guid is not NULL, from the
 *		cache or the registry (each URL in turn while they fail
 *		transiently).  While one lane asks for an id, the others asking for
 *		it wait and share its result.  On REGISTRY_OK *out is held until
 *		registry_release.
 */
static registry_status
registry_lookup_key(registry *r, int32_t id, const char *guid,
					registry_schema **out, char *err, size_t errlen)
{
	registry_schema *s = NULL;
	registry_status st = REGISTRY_TRANSIENT;
	registry_fetching *f,
			  **link;
	int			i,
				unresolvable = 0;

	pthread_mutex_lock(&r->lock);
	s = registry_find(r, id, guid);
	if (s)
	{
		pthread_mutex_unlock(&r->lock);
		*out = s;
		return REGISTRY_OK;
	}
	if (registry_unknowns_known(&r->unknown, id, guid, registry_now_ms(),
								err, errlen))
	{
		r->stats.negative_hits++;
		pthread_mutex_unlock(&r->lock);
		return REGISTRY_UNKNOWN_ID;
	}
	for (f = r->fetching; f != NULL; f = f->next)
		if (guid ? f->guid != NULL && strcmp(f->guid, guid) == 0 :
			f->guid == NULL && f->id == id)
			return registry_wait(r, f, out, err, errlen);
	f = calloc(1, sizeof(registry_fetching));
	if (f == NULL || (guid && (f->guid = strdup(guid)) == NULL))
	{
		pthread_mutex_unlock(&r->lock);
		free(f);
		snprintf(err, errlen, "could not start a schema registry lookup (out of memory)");
		return REGISTRY_TRANSIENT;
	}
	f->id = id;
	f->refs = 1;
	f->next = r->fetching;
	r->fetching = f;
	pthread_mutex_unlock(&r->lock);

	for (i = 0; i < r->nurls; i++)
	{
		st = registry_fetch_one(r, r->urls[i], id, guid, &s, &unresolvable,
								err, errlen);
		if (st != REGISTRY_TRANSIENT)
			break;
	}

	/* leave the result to the lanes waiting (refs - 1 of them) */
	pthread_mutex_lock(&r->lock);
	if (st == REGISTRY_OK)
		registry_unknowns_forget(&r->unknown, id, guid);
	else if (st == REGISTRY_UNKNOWN_ID &&
			 (st = registry_unknowns_judge(&r->unknown, id, guid, unresolvable,
										   registry_now_ms(), err, errlen)) ==
			 REGISTRY_WAIT)
		r->stats.unknown_retries++;
	for (link = &r->fetching; *link != f; link = &(*link)->next)
		;
	*link = f->next;
	f->done = 1;
	f->status = st;
	if (st == REGISTRY_OK)
	{
		registry_keep(r, s, f->refs);
		f->schema = s;
		*out = s;
	}
	else
		snprintf(f->err, sizeof(f->err), "%s", err);
	pthread_cond_broadcast(&r->fetched);
	registry_fetching_drop(f);
	pthread_mutex_unlock(&r->lock);
	return st;
}

/*
 * registry_lookup
 *		The schema of an id (see registry_lookup_key).
 */
registry_status
registry_lookup(registry *r, int32_t id, registry_schema **out,
				char *err, size_t errlen)
{
	return registry_lookup_key(r, id, NULL, out, err, errlen);
}

/*
 * registry_lookup_guid
 *		The schema of a GUID, "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (see
 *		registry_lookup_key).
 */
registry_status
registry_lookup_guid(registry *r, const char *guid, registry_schema **out,
					 char *err, size_t errlen)
{
	return registry_lookup_key(r, 0, guid, out, err, errlen);
}

/*
 * registry_release
 *		Done with a schema registry_lookup returned.
 */
void
registry_release(registry *r, registry_schema *s)
{
	int			drop;

	pthread_mutex_lock(&r->lock);
	drop = --s->refs == 0 && !s->cached;
	pthread_mutex_unlock(&r->lock);
	if (drop)
		registry_schema_free(s);
}

/*
 * registry_cached
 *		Schemas in the cache.
 */
int
registry_cached(registry *r)
{
	int			n;

	pthread_mutex_lock(&r->lock);
	n = r->ncache;
	pthread_mutex_unlock(&r->lock);
	return n;
}

/*
 * registry_fetches
 *		HTTP requests made so far.
 */
uint64_t
registry_fetches(registry *r)
{
	return __atomic_load_n(&r->fetches, __ATOMIC_RELAXED);
}

/*
 * registry_free
 *		Release the client and its cache (no lane may hold a schema).
 */
void
registry_free(registry *r)
{
	int			i;

	if (r == NULL)
		return;
	for (i = 0; i < r->ncache; i++)
		registry_schema_free(r->cache[i]);
	for (i = 0; r->urls && i < r->nurls; i++)
		free(r->urls[i]);
	free(r->urls);
	free(r->cache);
	registry_unknowns_free(&r->unknown);
	if (r->user_info)
		memset(r->user_info, 0, strlen(r->user_info));
	free(r->user_info);
	free(r->ca_file);
	free(r->cert_file);
	free(r->key_file);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->fetched);
	free(r);
}
