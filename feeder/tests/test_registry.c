/*-------------------------------------------------------------------------
 *
 * test_registry.c
 *	  Unit tests of registry.c: lanes that ask for the same schema at once
 *	  share one request and its result (a failure included), and which
 *	  TLS alerts mean the registry refused the client's certificate.
 *
 * The registry is a small HTTP server on 127.0.0.1 in a thread of the
 * test: it counts the requests and answers each after a delay, or never.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "registry.h"
#include "registry_unknown.h"
#include "utf8.h"

#define NLANES 4
#define MAX_CONNS 64

/* A path the stand-in answers its own way. */
typedef struct test_route
{
	const char *path;
	const char *status_line;
	char	   *body;
	int			hits;			/* atomic */
} test_route;

/* The stand-in registry. */
typedef struct test_server
{
	test_route *routes;
	int			nroutes;
	int			listen_fd;
	int			port;
	int			delay_ms;		/* before each answer */
	const char *status_line;	/* NULL: accept, read, never answer */
	const char *body;
	int			requests;		/* atomic */
	int			stop;			/* atomic */
	int			conns[MAX_CONNS];	/* held open, never answered */
	int			nconns;
	pthread_t	thread;
} test_server;

/*
 * read_request
 *		Read an HTTP request's head (a GET has no body); 0 when one came.
 */
static int
read_request(int fd, char *path, size_t pathlen)
{
	char		buf[4096];
	size_t		len = 0;
	struct pollfd pfd = {fd, POLLIN, 0};

	while (len < sizeof(buf) - 1 && poll(&pfd, 1, 5000) == 1)
	{
		ssize_t		n = recv(fd, buf + len, sizeof(buf) - 1 - len, 0);

		if (n <= 0)
			return -1;
		len += n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n"))
		{
			/* "GET /path HTTP/1.1" */
			sscanf(buf, "%*s %1023s", path);
			path[pathlen - 1] = '\0';
			return 0;
		}
	}
	return -1;
}

/*
 * server_main
 *		Accept connections one at a time until stopped.
 */
static void *
server_main(void *arg)
{
	test_server *srv = arg;
	struct pollfd pfd = {srv->listen_fd, POLLIN, 0};

	while (!__atomic_load_n(&srv->stop, __ATOMIC_SEQ_CST))
	{
		int			fd;

		if (poll(&pfd, 1, 50) != 1 || (fd = accept(srv->listen_fd, NULL, NULL)) < 0)
			continue;
		const char *status_line = srv->status_line;
		const char *body = srv->body;
		char		path[1024] = "";
		int			i;

		if (read_request(fd, path, sizeof(path)) != 0)
		{
			close(fd);
			continue;
		}
		__atomic_fetch_add(&srv->requests, 1, __ATOMIC_SEQ_CST);
		for (i = 0; i < srv->nroutes; i++)
			if (strcmp(srv->routes[i].path, path) == 0)
			{
				__atomic_fetch_add(&srv->routes[i].hits, 1, __ATOMIC_SEQ_CST);
				status_line = __atomic_load_n(&srv->routes[i].status_line, __ATOMIC_SEQ_CST);
				body = __atomic_load_n(&srv->routes[i].body, __ATOMIC_SEQ_CST);
				break;
			}
		if (status_line == NULL)
		{
			if (srv->nconns < MAX_CONNS)
				srv->conns[srv->nconns++] = fd;
			else
				close(fd);
			continue;
		}
		usleep(srv->delay_ms * 1000);
		dprintf(fd, "%s\r\nContent-Type: application/vnd.schemaregistry.v1+json\r\n"
				"Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
				status_line, strlen(body), body);
		close(fd);
	}
	return NULL;
}

/*
 * server_start
 *		A registry on 127.0.0.1 at an ephemeral port.
 */
static void
server_start(test_server *srv, const char *status_line, const char *body,
			 int delay_ms)
{
	struct sockaddr_in addr = {0};
	socklen_t	addrlen = sizeof(addr);

	memset(srv, 0, sizeof(*srv));
	srv->status_line = status_line;
	srv->body = body;
	srv->delay_ms = delay_ms;
	srv->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(srv->listen_fd >= 0);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(srv->listen_fd, (struct sockaddr *) &addr, sizeof(addr)), 0);
	assert_int_equal(listen(srv->listen_fd, 16), 0);
	assert_int_equal(getsockname(srv->listen_fd, (struct sockaddr *) &addr, &addrlen), 0);
	srv->port = ntohs(addr.sin_port);
	assert_int_equal(pthread_create(&srv->thread, NULL, server_main, srv), 0);
}

/*
 * server_stop
 *		Stop the server; the requests it saw.
 */
static int
server_stop(test_server *srv)
{
	int			i;

	__atomic_store_n(&srv->stop, 1, __ATOMIC_SEQ_CST);
	pthread_join(srv->thread, NULL);
	for (i = 0; i < srv->nconns; i++)
		close(srv->conns[i]);
	close(srv->listen_fd);
	return srv->requests;
}

/*
 * new_client_unknown
 *		A registry client of the server, with the grace and the memory of
 *		unknown ids given (0: the defaults; grace < 0: none).
 */
static registry *
new_client_unknown(test_server *srv, long timeout_ms, int max_schemas,
				   long grace_ms, long ttl_ms)
{
	char		url[64];
	registry_options opts = {0};
	registry   *r;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", srv->port);
	opts.urls = url;
	opts.timeout_ms = timeout_ms;
	opts.max_schemas = max_schemas;
	opts.unknown_grace_ms = grace_ms;
	opts.unknown_ttl_ms = ttl_ms;
	r = registry_new(&opts);
	assert_non_null(r);
	return r;
}

/*
 * new_client
 *		A registry client of the server, with the default grace and memory
 *		of unknown ids.
 */
static registry *
new_client(test_server *srv, long timeout_ms, int max_schemas)
{
	return new_client_unknown(srv, timeout_ms, max_schemas, 0, 0);
}

/* One lane's lookup. */
typedef struct lane_lookup
{
	registry   *r;
	int32_t		id;
	pthread_barrier_t *start;
	registry_status st;
	registry_schema *schema;
	char		err[512];
} lane_lookup;

static void *
lane_main(void *arg)
{
	lane_lookup *l = arg;

	pthread_barrier_wait(l->start);
	l->st = registry_lookup(l->r, l->id, &l->schema, l->err, sizeof(l->err));
	return NULL;
}

/*
 * run_lanes
 *		NLANES threads look id up at once; the seconds they took together.
 */
static double
run_lanes(registry *r, int32_t id, lane_lookup *lanes)
{
	pthread_t	threads[NLANES];
	pthread_barrier_t start;
	struct timespec t0,
				t1;
	int			i;

	pthread_barrier_init(&start, NULL, NLANES);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < NLANES; i++)
	{
		memset(&lanes[i], 0, sizeof(lanes[i]));
		lanes[i].r = r;
		lanes[i].id = id;
		lanes[i].start = &start;
		assert_int_equal(pthread_create(&threads[i], NULL, lane_main, &lanes[i]), 0);
	}
	for (i = 0; i < NLANES; i++)
		pthread_join(threads[i], NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_barrier_destroy(&start);
	return (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
}

#define SCHEMA_ANSWER \
	"{\"schema\": \"{\\\"type\\\": \\\"record\\\", \\\"name\\\": \\\"R\\\", " \
	"\\\"fields\\\": [{\\\"name\\\": \\\"a\\\", \\\"type\\\": \\\"string\\\"}]}\"}"

/*
 * A registry that accepts and never answers: the lane that asks times out
 * once, and the lanes waiting on it take that failure instead of asking
 * again each in turn (which took NLANES timeouts and NLANES requests).
 */
static void
test_waiters_share_a_timeout(void **state)
{
	test_server srv;
	lane_lookup lanes[NLANES];
	registry   *r;
	double		took;
	int			i;

	(void) state;
	server_start(&srv, NULL, NULL, 0);
	r = new_client(&srv, 1000, 10);
	took = run_lanes(r, 7, lanes);
	for (i = 0; i < NLANES; i++)
	{
		assert_int_equal(lanes[i].st, REGISTRY_TRANSIENT);
		assert_non_null(strstr(lanes[i].err, "127.0.0.1"));
	}
	assert_int_equal(server_stop(&srv), 1);
	assert_int_equal(registry_fetches(r), 1);
	assert_int_equal(registry_cached(r), 0);
	/* one timeout and the lanes' waits, far from NLANES timeouts in turn */
	assert_true(took < NLANES - 1);
	registry_free(r);
}

/*
 * An id the registry does not know: one request, its 404 taken by every
 * lane waiting ("one lookup per id" holds for unknown ids too).
 */
static void
test_waiters_share_an_unknown_id(void **state)
{
	test_server srv;
	lane_lookup lanes[NLANES];
	registry   *r;
	int			i;

	(void) state;
	server_start(&srv, "HTTP/1.1 404 Not Found",
				 "{\"error_code\": 40403, \"message\": \"Schema not found\"}", 1000);
	r = new_client_unknown(&srv, 10000, 10, -1, 0);
	run_lanes(r, 9, lanes);
	for (i = 0; i < NLANES; i++)
	{
		assert_int_equal(lanes[i].st, REGISTRY_UNKNOWN_ID);
		assert_non_null(strstr(lanes[i].err, "HTTP 404 for schema id 9 (40403 Schema not found)"));
	}
	assert_int_equal(server_stop(&srv), 1);
	assert_int_equal(registry_fetches(r), 1);
	registry_free(r);
}

/*
 * A schema that cannot be cached (the cache is full of a schema in use):
 * the waiting lanes share the one fetched, each holding it; the last
 * release frees it.
 */
static void
test_waiters_share_an_uncached_schema(void **state)
{
	test_server srv;
	lane_lookup lanes[NLANES];
	registry_schema *held;
	registry   *r;
	char		err[512];
	int			i;

	(void) state;
	server_start(&srv, "HTTP/1.1 200 OK", SCHEMA_ANSWER, 1000);
	r = new_client(&srv, 10000, 1);
	assert_int_equal(registry_lookup(r, 1, &held, err, sizeof(err)), REGISTRY_OK);
	assert_int_equal(registry_cached(r), 1);
	run_lanes(r, 2, lanes);
	for (i = 0; i < NLANES; i++)
	{
		assert_int_equal(lanes[i].st, REGISTRY_OK);
		assert_ptr_equal(lanes[i].schema, lanes[0].schema);
		assert_int_equal(lanes[i].schema->id, 2);
		assert_null(lanes[i].schema->compile_error);
	}
	assert_int_equal(lanes[0].schema->refs, NLANES);
	assert_int_equal(lanes[0].schema->cached, 0);
	assert_int_equal(server_stop(&srv), 2);
	for (i = 0; i < NLANES; i++)
		registry_release(r, lanes[i].schema);
	registry_release(r, held);
	assert_int_equal(registry_cached(r), 1);
	registry_free(r);
}

/* Certificate alerts refuse the client; any other alert does not. */
static void
test_tls_alert_refuses(void **state)
{
	static const char *const refusing[] = {
		"OpenSSL SSL_read: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0",
		"OpenSSL SSL_read: error:0A000412:SSL routines::sslv3 alert bad certificate, errno 0",
		"OpenSSL SSL_read: error:0A000418:SSL routines::tlsv1 alert unknown ca, errno 0",
		"OpenSSL SSL_read: error:0A000416:SSL routines::sslv3 alert certificate unknown, errno 0",
		"OpenSSL SSL_write: error:0A000415:SSL routines::sslv3 alert certificate expired, errno 0",
		"OpenSSL SSL_read: error:0A000414:SSL routines::sslv3 alert certificate revoked, errno 0",
		"OpenSSL SSL_read: error:0A000413:SSL routines::sslv3 alert unsupported certificate, errno 0",
		"OpenSSL SSL_read: error:0A00041D:SSL routines::tlsv1 alert access denied, errno 0",
	};
	static const char *const other[] = {
		"OpenSSL SSL_read: error:0A000438:SSL routines::tlsv1 alert internal error, errno 0",
		"OpenSSL SSL_read: error:0A000410:SSL routines::sslv3 alert handshake failure, errno 0",
		"OpenSSL SSL_read: error:0A000432:SSL routines::tlsv1 alert decrypt error, errno 0",
		"OpenSSL SSL_read: error:0A000126:SSL routines::unexpected eof while reading, errno 0",
		"OpenSSL SSL_read: error:0A000410:SSL routines::sslv3 alert close notify, errno 0",
		"OpenSSL SSL_read: error:0A00042E:SSL routines::tlsv1 alert protocol version, errno 0",
		"Recv failure: Connection reset by peer",
		"",
	};
	size_t		i;

	(void) state;
	for (i = 0; i < sizeof(refusing) / sizeof(refusing[0]); i++)
		if (!registry_tls_alert_refuses(refusing[i]))
			fail_msg("not taken as a refusal: %s", refusing[i]);
	for (i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (registry_tls_alert_refuses(other[i]))
			fail_msg("taken as a refusal: %s", other[i]);
}

#define NOT_FOUND "HTTP/1.1 404 Not Found"
#define OK_200 "HTTP/1.1 200 OK"
#define UNKNOWN_BODY "{\"error_code\": 40403, \"message\": \"Schema not found\"}"

/*
 * schema_answer
 *		A registry's answer for a schema text, with references (a JSON
 *		array's text) when not NULL; malloc'ed.
 */
static char *
schema_answer(const char *schema, const char *references)
{
	json_t	   *doc = json_pack("{s:s}", "schema", schema);
	char	   *text;

	if (references)
		json_object_set_new(doc, "references", json_loads(references, 0, NULL));
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	return text;
}

/*
 * A registry without /schemas/guids answers a GUID with a plain 404
 * (error_code 404, not 40403): that message is undecodable (unknown), not
 * the configuration wrong (it was REGISTRY_FATAL: exit 3); every GUID is
 * then unknown for a while without asking again.
 */
static void
test_guid_without_endpoint(void **state)
{
	test_server srv;
	registry_schema *schema = NULL;
	registry   *r;
	char		err[512];

	(void) state;
	server_start(&srv, NOT_FOUND,
				 "{\"error_code\": 404, \"message\": \"HTTP 404 Not Found\"}", 0);
	r = new_client(&srv, 5000, 10);
	assert_int_equal(registry_lookup_guid(r, "0a0b0c0d-0000-1111-2222-333344445555",
										  &schema, err, sizeof(err)),
					 REGISTRY_UNKNOWN_ID);
	assert_non_null(strstr(err, "cannot resolve the schema GUIDs"));
	assert_int_equal(registry_lookup_guid(r, "1a0b0c0d-0000-1111-2222-333344445555",
										  &schema, err, sizeof(err)),
					 REGISTRY_UNKNOWN_ID);
	assert_int_equal(server_stop(&srv), 1);
	registry_free(r);
}

/*
 * A 40403 for an id is retried (transient) within its grace: a registry
 * replica that has not seen a brand-new id yet answers it a moment later
 * (it was quarantined at once).  Past the grace, the id is unknown, and
 * that answer is kept: no request per message for an id made up (it was
 * asked again every time).
 */
static void
test_unknown_id_grace_then_kept(void **state)
{
	test_route routes[2] = {
		{"/schemas/ids/5", NOT_FOUND, UNKNOWN_BODY, 0},
		{"/schemas/ids/6", NOT_FOUND, UNKNOWN_BODY, 0},
	};
	test_server srv;
	registry_schema *schema = NULL;
	registry_stats stats;
	registry   *r;
	char		err[512];

	(void) state;
	server_start(&srv, NOT_FOUND, UNKNOWN_BODY, 0);
	srv.routes = routes;
	srv.nroutes = 2;
	r = new_client_unknown(&srv, 5000, 10, 400, 60000);

	/* a new id a replica does not have yet, then has */
	assert_int_equal(registry_lookup(r, 5, &schema, err, sizeof(err)), REGISTRY_WAIT);
	assert_non_null(strstr(err, "retried for up to 400 ms"));
	__atomic_store_n(&routes[0].body, schema_answer("\"string\"", NULL), __ATOMIC_SEQ_CST);
	__atomic_store_n(&routes[0].status_line, OK_200, __ATOMIC_SEQ_CST);
	assert_int_equal(registry_lookup(r, 5, &schema, err, sizeof(err)), REGISTRY_OK);
	registry_release(r, schema);

	/* an id no one has: transient within the grace, then unknown, kept */
	assert_int_equal(registry_lookup(r, 6, &schema, err, sizeof(err)), REGISTRY_WAIT);
	usleep(450 * 1000);
	assert_int_equal(registry_lookup(r, 6, &schema, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
	assert_non_null(strstr(err, "40403"));
	assert_int_equal(registry_lookup(r, 6, &schema, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
	assert_int_equal(registry_lookup(r, 6, &schema, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
	assert_int_equal(__atomic_load_n(&routes[1].hits, __ATOMIC_SEQ_CST), 2);
	registry_get_stats(r, &stats);
	assert_int_equal(stats.unknown_retries, 2);
	assert_int_equal(stats.negative_hits, 2);
	server_stop(&srv);
	free(routes[0].body);
	registry_free(r);
}

/* The memory of an unknown id is bounded in time: asked again after it. */
static void
test_unknown_id_kept_for_a_while(void **state)
{
	test_server srv;
	registry_schema *schema = NULL;
	registry   *r;
	char		err[512];

	(void) state;
	server_start(&srv, NOT_FOUND, UNKNOWN_BODY, 0);
	r = new_client_unknown(&srv, 5000, 10, -1, 300);
	assert_int_equal(registry_lookup(r, 7, &schema, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
	assert_int_equal(registry_lookup(r, 7, &schema, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
	assert_int_equal(__atomic_load_n(&srv.requests, __ATOMIC_SEQ_CST), 1);
	usleep(350 * 1000);
	assert_int_equal(registry_lookup(r, 7, &schema, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
	assert_int_equal(server_stop(&srv), 2);
	registry_free(r);
}

/*
 * A grace for every made-up id would let a producer hold the batches up
 * for a grace per message: the unknown ids share one budget of grace
 * (grace_ms, refilled at grace_ms per ttl_ms): once one id spent it, a
 * new unknown id is unknown at once, the reason saying why.
 */
static void
test_unknown_grace_bounded(void **state)
{
	test_server srv;
	registry_schema *schema = NULL;
	registry   *r;
	char		err[512];
	int			id;

	(void) state;
	server_start(&srv, NOT_FOUND, UNKNOWN_BODY, 0);
	r = new_client_unknown(&srv, 5000, 10, 50, 60000);
	assert_int_equal(registry_lookup(r, 100, &schema, err, sizeof(err)), REGISTRY_WAIT);
	usleep(60 * 1000);
	assert_int_equal(registry_lookup(r, 100, &schema, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
	for (id = 101; id < 108; id++)
	{
		assert_int_equal(registry_lookup(r, id, &schema, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
		assert_non_null(strstr(err, "grace budget of unknown ids is spent"));
	}
	assert_int_equal(registry_lookup(r, 200, &schema, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
	server_stop(&srv);
	registry_free(r);
}

/*
 * grace_wait
 *		How long (ms of the test's clock) id, first unknown at start, is
 *		retried in its grace, a retry every 100 ms as a waiting partition
 *		retries it: until the judge says unknown.
 */
static int64_t
grace_wait(registry_unknowns *u, int32_t id, int64_t start)
{
	char		err[512];
	int64_t		now;

	for (now = start;; now += 100)
	{
		strcpy(err, "40403");
		if (registry_unknowns_judge(u, id, NULL, 0, now, err, sizeof(err)) != REGISTRY_WAIT)
			return now - start;
	}
}

/*
 * The grace is a budget a trickle cannot renew: one made-up id every 12 s
 * (never 8 in a minute) got a full grace each, 10 s of every 12 (the
 * feeder paused most of the time).  Now they share 10 s, refilled at 10 s
 * a minute: over 2 minutes, 10 ids wait at most 10 + 20 s in all, the
 * first its full grace, the others what refilled; after a quiet minute a
 * new id (a replica behind) gets its full grace again.
 */
static void
test_unknown_grace_budget(void **state)
{
	registry_unknowns u;
	int64_t		total = 0,
				w;
	int			i;

	(void) state;
	registry_unknowns_init(&u, 10000, 60000);
	assert_int_equal(grace_wait(&u, 1, 0), 10000);
	for (i = 1; i < 10; i++)
	{
		w = grace_wait(&u, 1 + i, (int64_t) i * 12000);
		assert_true(w < 10000);
		total += w;
	}
	if (total > 20000)
		fail_msg("9 ids waited %lld ms in all after the first, more than the 18 s refilled in 108 s", (long long) total);
	assert_true(total > 0);
	/* a quiet minute: the budget is full again */
	assert_int_equal(grace_wait(&u, 50, 120000 + 60000), 10000);
	registry_unknowns_free(&u);
}

#define ORDER_WITH_REFS \
	"{\"type\": \"record\", \"name\": \"Order\", \"namespace\": \"shop\", \"fields\": [" \
	"{\"name\": \"amount\", \"type\": \"com.x.Money\"}," \
	"{\"name\": \"refund\", \"type\": [\"null\", \"com.x.Money\"]}," \
	"{\"name\": \"channel\", \"type\": \"shop.Channel\"}]}"
#define MONEY_WITH_REF \
	"{\"type\": \"record\", \"name\": \"Money\", \"namespace\": \"com.x\", \"fields\": [" \
	"{\"name\": \"cents\", \"type\": \"long\"}," \
	"{\"name\": \"currency\", \"type\": \"com.x.Currency\"}]}"
#define CURRENCY \
	"{\"type\": \"enum\", \"name\": \"Currency\", \"namespace\": \"com.x\", \"symbols\": [\"EUR\", \"CHF\"]}"
#define CHANNEL \
	"{\"type\": \"enum\", \"name\": \"Channel\", \"namespace\": \"shop\", \"symbols\": [\"WEB\", \"SHOP\"]}"

/*
 * A schema whose types live in other subjects ("references", as
 * Confluent's serializers register nested records): the referenced
 * schemas are fetched, theirs in turn (Money references Currency), and
 * composed; the value decodes (it was refused, "Unknown Avro type", and
 * the refusal kept for the process's life).  A reference the registry
 * does not have yet is retried like an unknown id, not cached as a bad
 * schema.
 */
static void
test_references_composed(void **state)
{
	test_route routes[5] = {
		{"/schemas/ids/10", OK_200, NULL, 0},
		{"/subjects/money-value/versions/1", OK_200, NULL, 0},
		{"/subjects/currency%20value/versions/2", OK_200, NULL, 0},
		{"/subjects/channel/versions/1", OK_200, NULL, 0},
		{"/schemas/ids/11", OK_200, NULL, 0},
	};
	test_server srv;
	registry_schema *schema = NULL;
	registry   *r;
	avro_json_buf out = {0};
	char		err[512];
	/* amount 5 EUR, refund: branch 1, 7 CHF, channel SHOP */
	const unsigned char value[] = {0x0a, 0x00, 0x02, 0x0e, 0x02, 0x02};
	int			i;

	(void) state;
	routes[0].body = schema_answer(ORDER_WITH_REFS,
								   "[{\"name\": \"com.x.Money\", \"subject\": \"money-value\", \"version\": 1},"
								   " {\"name\": \"shop.Channel\", \"subject\": \"channel\", \"version\": 1}]");
	routes[1].body = schema_answer(MONEY_WITH_REF,
								   "[{\"name\": \"com.x.Currency\", \"subject\": \"currency value\", \"version\": 2}]");
	routes[2].body = schema_answer(CURRENCY, NULL);
	routes[3].body = schema_answer(CHANNEL, NULL);
	routes[4].body = schema_answer(ORDER_WITH_REFS,
								   "[{\"name\": \"com.x.Money\", \"subject\": \"money-value\", \"version\": 9}]");
	server_start(&srv, NOT_FOUND,
				 "{\"error_code\": 40402, \"message\": \"Version 9 not found.\"}", 0);
	srv.routes = routes;
	srv.nroutes = 5;
	r = new_client_unknown(&srv, 5000, 10, 300, 60000);
	assert_int_equal(registry_lookup(r, 10, &schema, err, sizeof(err)), REGISTRY_OK);
	if (schema->compile_error)
		fail_msg("not composed: %s", schema->compile_error);
	assert_non_null(schema->avro);
	avro_json_init();
	assert_int_equal(avro_json_decode(schema->avro, value, sizeof(value), &out,
									  err, sizeof(err)), 0);
	assert_non_null(strstr(out.data, "\"cents\":5"));
	assert_non_null(strstr(out.data, "\"cents\":7"));
	assert_non_null(strstr(out.data, "\"CHF\""));
	assert_non_null(strstr(out.data, "\"SHOP\""));
	registry_release(r, schema);
	for (i = 1; i < 4; i++)
		assert_int_equal(__atomic_load_n(&routes[i].hits, __ATOMIC_SEQ_CST), 1);

	/* a referenced version the registry does not have: retried, not kept */
	assert_int_equal(registry_lookup(r, 11, &schema, err, sizeof(err)), REGISTRY_WAIT);
	assert_non_null(strstr(err, "reference com.x.Money (subject money-value version 9)"));
	assert_int_equal(registry_cached(r), 1);
	server_stop(&srv);
	avro_json_buf_free(&out);
	for (i = 0; i < 5; i++)
		free(routes[i].body);
	registry_free(r);
}

/*
 * A schema avro-c refuses, whose error quotes a long non-ASCII type name:
 * the compile error kept (and later sent as a decode reason) is valid
 * UTF-8 (it was cut at 512 bytes inside a character: 22021 for the batch,
 * for ever).
 */
static void
test_compile_error_valid_utf8(void **state)
{
	test_server srv;
	registry_schema *schema = NULL;
	registry   *r;
	char		err[512];
	char		schema_text[2048] = "{\"type\": \"record\", \"name\": \"R\", \"fields\": [{\"name\": \"a\", \"type\": \"";
	char	   *body;
	int			i;

	(void) state;
	for (i = 0; i < 300; i++)
		strcat(schema_text, "\xe2\x82\xac");	/* the euro sign */
	strcat(schema_text, "\"}]}");
	body = schema_answer(schema_text, NULL);
	server_start(&srv, OK_200, body, 0);
	r = new_client(&srv, 5000, 10);
	assert_int_equal(registry_lookup(r, 3, &schema, err, sizeof(err)), REGISTRY_OK);
	assert_null(schema->avro);
	assert_non_null(schema->compile_error);
	assert_true(strlen(schema->compile_error) > 400);
	assert_true(utf8_is_valid(schema->compile_error));
	registry_release(r, schema);
	server_stop(&srv);
	free(body);
	registry_free(r);
}

/*
 * References are bounded: a chain of 10 levels makes the schema unusable
 * (its messages quarantined, the reason saying why; nothing fetched past
 * the bound), and two schemas that reference each other are each fetched
 * once and composed.
 */
static void
test_references_bounded(void **state)
{
	test_route routes[14];
	char		paths[14][64];
	test_server srv;
	registry_schema *schema = NULL;
	registry   *r;
	char		err[512];
	char		text[512];
	char		refs[256];
	int			i;

	(void) state;
	memset(routes, 0, sizeof(routes));
	/* id 20: a record using a.T0; a.Ti (subject si) uses a.T(i+1) */
	snprintf(text, sizeof(text),
			 "{\"type\": \"record\", \"name\": \"Top\", \"fields\": [{\"name\": \"t\", \"type\": \"a.T0\"}]}");
	routes[0] = (test_route) {"/schemas/ids/20", OK_200,
		schema_answer(text, "[{\"name\": \"a.T0\", \"subject\": \"s0\", \"version\": 1}]"), 0};
	for (i = 0; i < 10; i++)
	{
		snprintf(paths[i + 1], sizeof(paths[i + 1]), "/subjects/s%d/versions/1", i);
		snprintf(text, sizeof(text),
				 "{\"type\": \"record\", \"name\": \"T%d\", \"namespace\": \"a\", \"fields\": [{\"name\": \"n\", \"type\": [\"null\", \"a.T%d\"]}]}",
				 i, i + 1);
		snprintf(refs, sizeof(refs), "[{\"name\": \"a.T%d\", \"subject\": \"s%d\", \"version\": 1}]",
				 i + 1, i + 1);
		routes[i + 1] = (test_route) {paths[i + 1], OK_200, schema_answer(text, refs), 0};
	}
	/* id 21: b.A and b.B reference each other */
	routes[11] = (test_route) {"/schemas/ids/21", OK_200,
		schema_answer("{\"type\": \"record\", \"name\": \"Top\", \"fields\": [{\"name\": \"a\", \"type\": \"b.A\"}]}",
					  "[{\"name\": \"b.A\", \"subject\": \"sa\", \"version\": 1}]"), 0};
	routes[12] = (test_route) {"/subjects/sa/versions/1", OK_200,
		schema_answer("{\"type\": \"record\", \"name\": \"A\", \"namespace\": \"b\", \"fields\": [{\"name\": \"b\", \"type\": [\"null\", \"b.B\"]}]}",
					  "[{\"name\": \"b.B\", \"subject\": \"sb\", \"version\": 1}]"), 0};
	routes[13] = (test_route) {"/subjects/sb/versions/1", OK_200,
		schema_answer("{\"type\": \"record\", \"name\": \"B\", \"namespace\": \"b\", \"fields\": [{\"name\": \"a\", \"type\": [\"null\", \"b.A\"]}]}",
					  "[{\"name\": \"b.A\", \"subject\": \"sa\", \"version\": 1}]"), 0};
	server_start(&srv, NOT_FOUND, UNKNOWN_BODY, 0);
	srv.routes = routes;
	srv.nroutes = 14;
	r = new_client(&srv, 5000, 10);

	assert_int_equal(registry_lookup(r, 20, &schema, err, sizeof(err)), REGISTRY_OK);
	assert_null(schema->avro);
	assert_non_null(schema->compile_error);
	assert_non_null(strstr(schema->compile_error, "deeper than 8 levels"));
	registry_release(r, schema);
	assert_int_equal(__atomic_load_n(&routes[8].hits, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(__atomic_load_n(&routes[9].hits, __ATOMIC_SEQ_CST), 0);

	assert_int_equal(registry_lookup(r, 21, &schema, err, sizeof(err)), REGISTRY_OK);
	if (schema->compile_error)
		fail_msg("not composed: %s", schema->compile_error);
	assert_non_null(schema->avro);
	registry_release(r, schema);
	assert_int_equal(__atomic_load_n(&routes[12].hits, __ATOMIC_SEQ_CST), 1);
	assert_int_equal(__atomic_load_n(&routes[13].hits, __ATOMIC_SEQ_CST), 1);
	server_stop(&srv);
	for (i = 0; i < 14; i++)
		free(routes[i].body);
	registry_free(r);
}

/*
 * The memory of unknown ids on a clock of the test's: the grace ends at
 * grace_ms exactly, the answer is kept ttl_ms, a GUID registry without
 * /schemas/guids answers for every GUID, and no more than 1024 ids are
 * remembered.
 */
static void
test_unknowns_on_a_clock(void **state)
{
	registry_unknowns u;
	char		err[512];
	int			id;

	(void) state;
	registry_unknowns_init(&u, 1000, 5000);
	strcpy(err, "40403");
	assert_int_equal(registry_unknowns_judge(&u, 1, NULL, 0, 100, err, sizeof(err)), REGISTRY_WAIT);
	assert_false(registry_unknowns_known(&u, 1, NULL, 100, err, sizeof(err)));
	strcpy(err, "40403");
	assert_int_equal(registry_unknowns_judge(&u, 1, NULL, 0, 1099, err, sizeof(err)), REGISTRY_WAIT);
	strcpy(err, "40403 late");
	assert_int_equal(registry_unknowns_judge(&u, 1, NULL, 0, 1100, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
	assert_true(registry_unknowns_known(&u, 1, NULL, 6099, err, sizeof(err)));
	assert_string_equal(err, "40403 late");
	assert_false(registry_unknowns_known(&u, 1, NULL, 6100, err, sizeof(err)));
	/* asked again after the memory: unknown at once, no second grace */
	strcpy(err, "40403");
	assert_int_equal(registry_unknowns_judge(&u, 1, NULL, 0, 6100, err, sizeof(err)), REGISTRY_UNKNOWN_ID);
	/* a GUID by id 1's number is another key */
	assert_false(registry_unknowns_known(&u, 1, "00000000-0000-0000-0000-000000000001", 6100, err, sizeof(err)));
	strcpy(err, "no guids");
	assert_int_equal(registry_unknowns_judge(&u, 0, "00000000-0000-0000-0000-000000000001", 1, 7000, err, sizeof(err)),
					 REGISTRY_UNKNOWN_ID);
	assert_true(registry_unknowns_known(&u, 0, "ffffffff-0000-0000-0000-000000000002", 7001, err, sizeof(err)));
	assert_string_equal(err, "no guids");
	/* once known again, forgotten */
	registry_unknowns_forget(&u, 1, NULL);
	assert_false(registry_unknowns_known(&u, 1, NULL, 7000, err, sizeof(err)));
	/* bounded: 2000 ids, the first ones forgotten */
	for (id = 1000; id < 3000; id++)
	{
		strcpy(err, "40403");
		registry_unknowns_judge(&u, id, NULL, 0, 10000 + id, err, sizeof(err));
		registry_unknowns_judge(&u, id, NULL, 0, 20000 + id, err, sizeof(err));
	}
	assert_true(u.n <= 1024);
	assert_false(registry_unknowns_known(&u, 1000, NULL, 23000, err, sizeof(err)));
	assert_true(registry_unknowns_known(&u, 2999, NULL, 23000, err, sizeof(err)));
	registry_unknowns_free(&u);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waiters_share_a_timeout),
		cmocka_unit_test(test_waiters_share_an_unknown_id),
		cmocka_unit_test(test_waiters_share_an_uncached_schema),
		cmocka_unit_test(test_tls_alert_refuses),
		cmocka_unit_test(test_guid_without_endpoint),
		cmocka_unit_test(test_unknown_id_grace_then_kept),
		cmocka_unit_test(test_unknown_id_kept_for_a_while),
		cmocka_unit_test(test_unknown_grace_bounded),
		cmocka_unit_test(test_unknown_grace_budget),
		cmocka_unit_test(test_references_composed),
		cmocka_unit_test(test_compile_error_valid_utf8),
		cmocka_unit_test(test_unknowns_on_a_clock),
		cmocka_unit_test(test_references_bounded),
	};
	int			failed;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	failed = cmocka_run_group_tests_name("registry", tests, NULL, NULL);
	curl_global_cleanup();
	return failed;
}
