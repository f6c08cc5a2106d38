/*-------------------------------------------------------------------------
 *
 * metrics_http.c
 *	  The HTTP endpoint of --metrics-listen, on libmicrohttpd: GET
 *	  /metrics (Prometheus text format 0.0.4) and GET /healthz.
 *
 * The listening socket is made here (bound to exactly the address given,
 * IPv4 or IPv6 literal or a name such as localhost; port 0 takes a free
 * port, logged as event=metrics_listening) and handed to libmicrohttpd,
 * which serves it from its own thread (MHD_USE_INTERNAL_POLLING_THREAD,
 * with the best polling method it has: MHD_USE_AUTO).
 * That thread starts with SIGTERM and SIGINT blocked, so the feeder's
 * signal handler always runs in the main thread.  Handlers only read the
 * published state (metrics.c), under its mutex.
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <microhttpd.h>

#include "config_options.h"
#include "log.h"
#include "metrics.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define METRICS_TEXT_TYPE "text/plain; charset=utf-8"

static struct MHD_Daemon *metrics_daemon = NULL;

/*
 * metrics_http_log
 *		libmicrohttpd's own error messages, as log lines.
 */
static void
metrics_http_log(void *cls, const char *fmt, va_list ap)
{
	char		msg[512];
	size_t		n;

	(void) cls;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	log_simple(LOG_WARNING, "metrics_http_error", msg);
}

/*
 * metrics_http_reply
 *		Queue a response whose body is the malloc'ed text (taken over).
 */
static enum MHD_Result
metrics_http_reply(struct MHD_Connection *conn, unsigned int status,
				   const char *content_type, char *body, size_t len)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (resp == NULL)
	{
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/*
 * metrics_http_text
 *		Reply with a short text line.
 */
static enum MHD_Result
metrics_http_text(struct MHD_Connection *conn, unsigned int status, const char *text)
{
	size_t		len = strlen(text);
	char	   *body = malloc(len + 2);

	if (body == NULL)
		return MHD_NO;
	memcpy(body, text, len);
	body[len] = '\n';
	body[len + 1] = '\0';
	return metrics_http_reply(conn, status, METRICS_TEXT_TYPE, body, len + 1);
}

/*
 * metrics_http_handle
 *		libmicrohttpd's access handler: routes GET/HEAD /metrics and
 *		/healthz; any other path is 404, any other method 405.  It answers
 *		on the first call, before any request body is read.
 */
static enum MHD_Result
metrics_http_handle(void *cls, struct MHD_Connection *conn, const char *url,
					const char *method, const char *version,
					const char *upload_data, size_t *upload_data_size,
					void **con_cls)
{
	int			is_metrics = strcmp(url, "/metrics") == 0;
	int			is_health = strcmp(url, "/healthz") == 0;

	(void) cls;
	(void) version;
	(void) upload_data;
	(void) upload_data_size;
	(void) con_cls;

	if (!is_metrics && !is_health)
		return metrics_http_text(conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics or /healthz");
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return metrics_http_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed");

	if (is_metrics)
	{
		size_t		len;
		char	   *text = metrics_render(&len);

		if (text == NULL)
			return metrics_http_text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory");
		return metrics_http_reply(conn, MHD_HTTP_OK, METRICS_CONTENT_TYPE, text, len);
	}
	else
	{
		char		reason[600];
		int			ok = metrics_health(reason, sizeof(reason));

		return metrics_http_text(conn, ok ? MHD_HTTP_OK : MHD_HTTP_SERVICE_UNAVAILABLE, reason);
	}
}

/*
 * metrics_http_listen
 *		A listening TCP socket bound to host:port (the first address the
 *		name resolves to that can be bound); -1 with err filled on failure.
 *		*actual receives "ADDR:PORT" as bound ("[ADDR]:PORT" for IPv6).
 */
static int
metrics_http_listen(const char *host, const char *port, char *actual, size_t actuallen,
					char *err, size_t errlen)
{
	struct addrinfo hints;
	struct addrinfo *res,
			   *ai;
	int			rc,
				fd = -1,
				saved = 0;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc != 0)
	{
		snprintf(err, errlen, "cannot resolve \"%s\": %s", host, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next)
	{
		int			one = 1;

		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
		{
			saved = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
	{
		snprintf(err, errlen, "cannot listen on %s:%s: %s", host, port, strerror(saved));
		return -1;
	}

	{
		struct sockaddr_storage ss;
		socklen_t	sslen = sizeof(ss);
		char		addr[INET6_ADDRSTRLEN] = "?";
		int			bound = 0;

		if (getsockname(fd, (struct sockaddr *) &ss, &sslen) == 0)
		{
			if (ss.ss_family == AF_INET6)
			{
				struct sockaddr_in6 *s6 = (struct sockaddr_in6 *) &ss;

				inet_ntop(AF_INET6, &s6->sin6_addr, addr, sizeof(addr));
				bound = ntohs(s6->sin6_port);
				snprintf(actual, actuallen, "[%s]:%d", addr, bound);
			}
			else
			{
				struct sockaddr_in *s4 = (struct sockaddr_in *) &ss;

				inet_ntop(AF_INET, &s4->sin_addr, addr, sizeof(addr));
				bound = ntohs(s4->sin_port);
				snprintf(actual, actuallen, "%s:%d", addr, bound);
			}
		}
		else
			snprintf(actual, actuallen, "%s:%s", host, port);
	}
	return fd;
}

/*
 * metrics_start
 *		Listen on the --metrics-listen address and start serving.  0 on
 *		success (logs event=metrics_listening with the bound address), -1
 *		with a reason in err.
 */
int
metrics_start(const char *listen_addr, char *err, size_t errlen)
{
	char		host[256];
	char		port[8];
	char		actual[300];
	int			fd;
	sigset_t	block,
				saved;

	if (config_split_listen(listen_addr, host, sizeof(host), port, sizeof(port)) != 0)
	{
		snprintf(err, errlen, "--metrics-listen: expected ADDRESS:PORT, got \"%s\"", listen_addr);
		return -1;
	}
	fd = metrics_http_listen(host, port, actual, sizeof(actual), err, errlen);
	if (fd < 0)
		return -1;

	/* the server thread inherits this mask: signals stay with main */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	pthread_sigmask(SIG_BLOCK, &block, &saved);
	metrics_daemon = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ERROR_LOG,
									  0, NULL, NULL, metrics_http_handle, NULL,
									  MHD_OPTION_EXTERNAL_LOGGER, metrics_http_log, NULL,
									  MHD_OPTION_LISTEN_SOCKET, (MHD_socket) fd,
									  MHD_OPTION_CONNECTION_LIMIT, (unsigned int) 32,
									  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) 10,
									  MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (metrics_daemon == NULL)
	{
		close(fd);
		snprintf(err, errlen, "libmicrohttpd could not start serving %s", actual);
		return -1;
	}

	{
		log_line	line;

		log_begin(&line, LOG_INFO, "metrics_listening");
		log_kv_str(&line, "addr", actual);
		log_kv_str(&line, "paths", "/metrics /healthz");
		log_end(&line);
	}
	return 0;
}

/*
 * metrics_enabled
 *		True while the endpoint is served.
 */
int
metrics_enabled(void)
{
	return metrics_daemon != NULL;
}

/*
 * metrics_stop
 *		Stop serving: waits for the server thread; libmicrohttpd closes the
 *		listening socket it was given.
 */
void
metrics_stop(void)
{
	if (metrics_daemon == NULL)
		return;
	MHD_stop_daemon(metrics_daemon);
	metrics_daemon = NULL;
}
