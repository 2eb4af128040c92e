// SPDX-License-Identifier: MIT
/*
 * This file contains the admin listener of rpcrdma-gw: a small HTTP server
 * (libevent evhttp, same event loop as the data path) on admin_listen,
 * default 127.0.0.1:9466, that answers
 *
 *   GET /metrics   the Prometheus text exposition (metrics.c)
 *   GET /healthz   200 "ok": the event loop is alive
 *   GET /readyz    200 "ready" when at least one route's transport is up,
 *                  503 "not ready" otherwise
 *
 * Anything else is 404.  The listener is for a local scraper: it has no
 * authentication, so it binds to loopback unless told otherwise.  Scrapes
 * read the counters the loop keeps; nothing is locked because nothing runs
 * concurrently.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "gateway.h"
#include "log.h"
#include "ops.h"

struct gw_admin {
	struct evhttp *ad_http;
	struct gw_ctx *ad_gw;
	uint16_t ad_port;
};

static void gw_admin_reply(struct evhttp_request *req, int code, const char *reason,
			   const char *ctype, struct evbuffer *body)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
	evhttp_send_reply(req, code, reason, body);
}

static void gw_admin_cb(struct evhttp_request *req, void *arg)
{
	struct gw_admin *ad = arg;
	struct gw_stats *st = gw_ctx_stats(ad->ad_gw);
	const char *uri = evhttp_request_get_uri(req);
	struct evbuffer *b = evbuffer_new();
	size_t n;

	gw_stat_inc(st, GW_CTR_ADMIN_REQUESTS);
	if (!b) {
		evhttp_send_error(req, 500, "no memory");
		return;
	}
	n = strcspn(uri, "?");
	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
	    evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		evbuffer_add_printf(b, "GET only\n");
		gw_admin_reply(req, 405, "Method Not Allowed", "text/plain", b);
	} else if (n == 8 && !strncmp(uri, "/metrics", 8)) {
		gw_metrics_render(b, st, ad->ad_gw);
		gw_admin_reply(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", b);
	} else if (n == 8 && !strncmp(uri, "/healthz", 8)) {
		evbuffer_add_printf(b, "ok\n");
		gw_admin_reply(req, 200, "OK", "text/plain", b);
	} else if (n == 7 && !strncmp(uri, "/readyz", 7)) {
		bool ready = gw_ctx_ready(ad->ad_gw);

		evbuffer_add_printf(b, ready ? "ready\n" : "not ready: no backend up\n");
		gw_admin_reply(req, ready ? 200 : 503, ready ? "OK" : "Service Unavailable",
			       "text/plain", b);
	} else {
		evbuffer_add_printf(b, "not found; try /metrics, /healthz, /readyz\n");
		gw_admin_reply(req, 404, "Not Found", "text/plain", b);
	}
	evbuffer_free(b);
}

struct gw_admin *gw_admin_new(struct event_base *base, struct gw_ctx *gw,
			      const struct sockaddr *sa, socklen_t len)
{
	const struct gw_log *lg = gw_ctx_log(gw);
	struct gw_admin *ad = calloc(1, sizeof(*ad));
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = -1, one = 1, err;

	if (!ad)
		return NULL;
	ad->ad_gw = gw;
	ad->ad_http = evhttp_new(base);
	if (!ad->ad_http) {
		err = ENOMEM;
		goto err_free;
	}
	evhttp_set_allowed_methods(ad->ad_http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST);
	evhttp_set_gencb(ad->ad_http, gw_admin_cb, ad);
	evhttp_set_timeout(ad->ad_http, 10);
	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
		goto err_http;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, sa, len) < 0 || listen(fd, 64) < 0) {
		err = errno;
		goto err_sock;
	}
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		ad->ad_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
				    : ((struct sockaddr_in *)&ss)->sin_port);
	if (!evhttp_accept_socket_with_handle(ad->ad_http, fd)) {
		err = ENOMEM;
		goto err_sock;
	}
	gw_info(lg, "admin listener on port %u: /metrics /healthz /readyz", ad->ad_port);
	return ad;
err_sock:
	close(fd);
err_http:
	evhttp_free(ad->ad_http);
err_free:
	free(ad);
	errno = err;
	return NULL;
}

void gw_admin_free(struct gw_admin *ad)
{
	if (!ad)
		return;
	evhttp_free(ad->ad_http);	/* closes the bound socket */
	free(ad);
}

uint16_t gw_admin_port(const struct gw_admin *ad)
{
	return ad ? ad->ad_port : 0;
}
