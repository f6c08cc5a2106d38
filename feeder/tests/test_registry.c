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

#include "registry.h"

#define NLANES 4
#define MAX_CONNS 64

/* The stand-in registry. */
typedef struct test_server
{
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
read_request(int fd)
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
			return 0;
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
		if (read_request(fd) != 0)
		{
			close(fd);
			continue;
		}
		__atomic_fetch_add(&srv->requests, 1, __ATOMIC_SEQ_CST);
		if (srv->status_line == NULL)
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
				srv->status_line, strlen(srv->body), srv->body);
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
 * new_client
 *		A registry client of the server.
 */
static registry *
new_client(test_server *srv, long timeout_ms, int max_schemas)
{
	char		url[64];
	registry_options opts = {0};
	registry   *r;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", srv->port);
	opts.urls = url;
	opts.timeout_ms = timeout_ms;
	opts.max_schemas = max_schemas;
	r = registry_new(&opts);
	assert_non_null(r);
	return r;
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
	r = new_client(&srv, 10000, 10);
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

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waiters_share_a_timeout),
		cmocka_unit_test(test_waiters_share_an_unknown_id),
		cmocka_unit_test(test_waiters_share_an_uncached_schema),
		cmocka_unit_test(test_tls_alert_refuses),
	};
	int			failed;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	failed = cmocka_run_group_tests_name("registry", tests, NULL, NULL);
	curl_global_cleanup();
	return failed;
}
