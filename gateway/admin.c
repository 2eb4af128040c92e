// SPDX-License-Identifier: MIT
/*
 * This file contains the admin listener of rpcrdma-gw: a small HTTP server
 * (libevent evhttp, same event loop as the data path) on admin_listen,
 * default 127.0.0.1:9466, that answers
 *
 *   GET /metrics   the Prometheus text exposition (metrics.c)
 *   GET /healthz   200 "ok": the event loop is alive
 *   GET /readyz    200 "ready" when the routes ready_when names can forward
 *                  a call now, 503 "not ready: PATH: REASON (...)" otherwise
 *
 * Anything else is 404; a method other than GET or HEAD is 405.  The
 * listener is for a scraper: it binds to loopback unless told otherwise (a
 * warning at start says when an address is not loopback and no token is
 * set).  admin_listen = unix:PATH serves on a Unix socket of mode 0660
 * instead, and admin_token_file asks every request for "Authorization:
 * Bearer TOKEN" (RFC 6750 2.1), compared in constant time; without it the
 * answer is 401, counted and logged through the per-peer rate limit.
 * Scrapes read the counters the loop keeps; nothing is locked because
 * nothing runs concurrently.
 *
 * Nothing a peer sends may grow the daemon: a request head above
 * GW_ADMIN_MAX_HEAD or a body above GW_ADMIN_MAX_BODY bytes makes evhttp
 * answer an error and close, and at GW_ADMIN_MAX_CONNS open connections the
 * listener stops accepting until one closes (the rest wait in the kernel's
 * backlog).  libevent 2.1 has no connection limit and no hook when it
 * refuses a request, so every connection's bufferevent is a pass-through
 * filter (evhttp_set_bevcb) whose free callback counts connections and
 * whose input side counts bytes: a connection that closes with bytes no
 * request was dispatched for was refused (or abandoned) and is counted.
 * Its output side works around two 2.1 filter gaps (gw_admin_outf,
 * gw_admin_kick).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "gateway.h"
#include "log.h"
#include "ops.h"

/* Connection accounting.  Bufferevents are finalised from the loop after
 * evhttp_free(), so this outlives struct gw_admin (ag_ad is then NULL)
 * until its last connection is gone. */
struct gw_admin_gate {
	struct gw_admin *ag_ad;
	struct gw_stats *ag_st;
	unsigned ag_refs;		/* the admin listener + open connections */
	unsigned ag_nconns;
};

/* One per connection: the filter's context. */
struct gw_admin_conn {
	struct gw_admin_gate *adc_gate;
	struct bufferevent *adc_bev;	/* the filter evhttp reads from and writes to */
	struct bufferevent *adc_sock;	/* the socket under it */
	struct evbuffer_cb_entry *adc_sent_cb;	/* on adc_sock's output */
	struct event *adc_kick;		/* moves queued output on (gw_admin_out_added) */
	uint64_t adc_in;			/* bytes passed to evhttp */
	uint64_t adc_done;		/* of which taken by dispatched requests */
	struct gw_admin_conn *adc_next;
};

struct gw_admin {
	struct evhttp *ad_http;
	struct evconnlistener *ad_lis;
	struct gw_ctx *ad_gw;
	struct gw_ops_view ad_view;	/* ov_n 0: ad_gw alone */
	struct gw_admin_gate *ad_gate;
	struct gw_admin_conn *ad_conns;	/* open connections, at most GW_ADMIN_MAX_CONNS */
	bool ad_paused;
	uint16_t ad_port;
	char ad_unix[sizeof(((struct sockaddr_un *)0)->sun_path)];	/* bound path, to unlink */
	size_t ad_toklen;		/* 0: no token asked */
	char ad_token[GW_ADMIN_TOKEN_MAX + 1];
};

static void gw_admin_gate_put(struct gw_admin_gate *ag)
{
	if (--ag->ag_refs == 0)
		free(ag);
}

/* Input side: move everything, count it (no copy). */
static enum bufferevent_filter_result gw_admin_in(struct evbuffer *src, struct evbuffer *dst,
						  ev_ssize_t limit, enum bufferevent_flush_mode mode,
						  void *arg)
{
	struct gw_admin_conn *ac = arg;
	size_t n = evbuffer_get_length(src);

	(void)mode;
	if (limit >= 0 && n > (size_t)limit)
		n = (size_t)limit;
	if (n == 0)
		return BEV_NEED_MORE;
	ac->adc_in += (size_t)evbuffer_remove_buffer(src, dst, n);
	return BEV_OK;
}

/*
 * Output side.  A 2.1 filter tells its owner "written" as soon as it has
 * moved the bytes to the socket's bufferevent, and evhttp then shuts the
 * socket down: a reply with "Connection: close" would be lost.  So this
 * filter never says so itself (BEV_NEED_MORE); gw_admin_sent() does, once
 * the socket's output is empty.
 */
static enum bufferevent_filter_result gw_admin_outf(struct evbuffer *src, struct evbuffer *dst,
						    ev_ssize_t limit, enum bufferevent_flush_mode mode,
						    void *arg)
{
	size_t n = evbuffer_get_length(src);

	(void)mode;
	(void)arg;
	if (limit >= 0 && n > (size_t)limit)
		n = (size_t)limit;
	evbuffer_remove_buffer(src, dst, n);
	return BEV_NEED_MORE;
}

/* Bytes left the socket's output: all of them gone, evhttp may go on. */
static void gw_admin_sent(struct evbuffer *b, const struct evbuffer_cb_info *info, void *arg)
{
	struct gw_admin_conn *ac = arg;

	if (info->n_deleted && evbuffer_get_length(b) == 0 &&
	    evbuffer_get_length(bufferevent_get_output(ac->adc_bev)) == 0)
		bufferevent_trigger(ac->adc_bev, EV_WRITE, BEV_TRIG_DEFER_CALLBACKS);
}

/* evhttp queues a reply while the connection's writing is disabled and
 * enables it afterwards; the filter moves output only when data is added
 * while enabled.  So added output schedules a flush for after the current
 * callback. */
static void gw_admin_kick(evutil_socket_t fd, short what, void *arg)
{
	struct gw_admin_conn *ac = arg;
	bufferevent_event_cb ecb = NULL;

	(void)fd;
	(void)what;
	bufferevent_getcb(ac->adc_bev, NULL, NULL, &ecb, NULL);
	if (ecb)	/* evhttp still owns it (bufferevent_free clears the callbacks) */
		bufferevent_flush(ac->adc_bev, EV_WRITE, BEV_NORMAL);
}

static void gw_admin_out_added(struct evbuffer *b, const struct evbuffer_cb_info *info, void *arg)
{
	struct gw_admin_conn *ac = arg;

	(void)b;
	if (info->n_added)
		event_active(ac->adc_kick, EV_TIMEOUT, 0);
}

/* The connection is gone (libevent finalises the filter, then the socket). */
static void gw_admin_conn_free(void *arg)
{
	struct gw_admin_conn *ac = arg;
	struct gw_admin_gate *ag = ac->adc_gate;
	struct gw_admin *ad = ag->ag_ad;

	if (ac->adc_in > ac->adc_done)
		gw_stat_inc(ag->ag_st, GW_CTR_ADMIN_UNSERVED);
	evbuffer_remove_cb_entry(bufferevent_get_output(ac->adc_sock), ac->adc_sent_cb);
	event_free(ac->adc_kick);
	ag->ag_nconns--;
	if (ad) {
		for (struct gw_admin_conn **pp = &ad->ad_conns; *pp; pp = &(*pp)->adc_next)
			if (*pp == ac) {
				*pp = ac->adc_next;
				break;
			}
		if (ad->ad_paused && ag->ag_nconns < GW_ADMIN_MAX_CONNS) {
			ad->ad_paused = false;
			evconnlistener_enable(ad->ad_lis);
		}
	}
	free(ac);
	gw_admin_gate_put(ag);
}

/* evhttp's bufferevent for a new connection (no fd yet: evhttp sets it).
 * NULL makes evhttp use a plain one: served, but neither counted nor
 * capped (only when memory is short). */
static struct bufferevent *gw_admin_bev(struct event_base *base, void *arg)
{
	struct gw_admin *ad = arg;
	struct gw_admin_gate *ag = ad->ad_gate;
	struct gw_admin_conn *ac = calloc(1, sizeof(*ac));

	if (!ac)
		return NULL;
	ac->adc_kick = event_new(base, -1, 0, gw_admin_kick, ac);
	ac->adc_sock = ac->adc_kick ? bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE) : NULL;
	if (ac->adc_sock)
		ac->adc_sent_cb = evbuffer_add_cb(bufferevent_get_output(ac->adc_sock), gw_admin_sent, ac);
	if (ac->adc_sent_cb)
		ac->adc_bev = bufferevent_filter_new(ac->adc_sock, gw_admin_in, gw_admin_outf,
						    BEV_OPT_CLOSE_ON_FREE, gw_admin_conn_free, ac);
	if (!ac->adc_bev) {
		if (ac->adc_sock)
			bufferevent_free(ac->adc_sock);
		if (ac->adc_kick)
			event_free(ac->adc_kick);
		free(ac);
		return NULL;
	}
	/* From here on gw_admin_conn_free() undoes this, whatever happens. */
	ac->adc_gate = ag;
	ag->ag_refs++;
	ac->adc_next = ad->ad_conns;
	ad->ad_conns = ac;
	if (++ag->ag_nconns >= GW_ADMIN_MAX_CONNS && !ad->ad_paused) {
		/* Also ends the accept loop: no connection past the cap. */
		ad->ad_paused = true;
		evconnlistener_disable(ad->ad_lis);
		gw_stat_inc(ag->ag_st, GW_CTR_ADMIN_CONN_LIMIT);
	}
	if (!evbuffer_add_cb(bufferevent_get_output(ac->adc_bev), gw_admin_out_added, ac)) {
		bufferevent_free(ac->adc_bev);
		return NULL;
	}
	return ac->adc_bev;
}

/* A request reached the callback: the bytes read so far are accounted for. */
static void gw_admin_served(struct gw_admin *ad, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	struct bufferevent *bev = evcon ? evhttp_connection_get_bufferevent(evcon) : NULL;

	for (struct gw_admin_conn *ac = ad->ad_conns; bev && ac; ac = ac->adc_next)
		if (ac->adc_bev == bev) {
			ac->adc_done = ac->adc_in - evbuffer_get_length(bufferevent_get_input(bev));
			return;
		}
}

static void gw_admin_reply(struct evhttp_request *req, int code, const char *reason,
			   const char *ctype, struct evbuffer *body)
{
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
	evhttp_send_reply(req, code, reason, body);
}

/* Does the request carry "Bearer <token>"?  The time spent depends on the
 * token's length only, not on how much of it a guess got right. */
static bool gw_admin_authorized(const struct gw_admin *ad, struct evhttp_request *req)
{
	const char *h = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
	size_t n;
	unsigned char diff;

	if (!h || strncasecmp(h, "Bearer ", 7))
		return false;
	h += 7;
	while (*h == ' ')
		h++;
	n = strlen(h);
	diff = n != ad->ad_toklen;
	for (size_t i = 0; i < ad->ad_toklen; i++)
		diff |= (unsigned char)(ad->ad_token[i] ^ (i < n ? h[i] : 0));
	return diff == 0;
}

/* 401, counted; the line names the peer (its address: a port would make
 * every connection a new peer of the rate limit). */
static void gw_admin_refuse(struct gw_admin *ad, struct evhttp_request *req, struct evbuffer *b)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);
	const char *addr = NULL;
	ev_uint16_t port = 0;
	char peer[64];

	gw_stat_inc(gw_ctx_stats(ad->ad_gw), GW_CTR_ADMIN_UNAUTHORIZED);
	if (evcon)
		evhttp_connection_get_peer(evcon, (char **)&addr, &port);
	snprintf(peer, sizeof(peer), "admin %s", ad->ad_unix[0] ? "unix" : addr ? addr : "?");
	gw_log_client(gw_ctx_log(ad->ad_gw), CFG_LOG_WARN, peer,
		      "%s: admin request refused: %s bearer token", peer,
		      evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization") ?
		      "wrong" : "no");
	evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate",
			  "Bearer realm=\"rpcrdma-gw\"");
	evbuffer_add_printf(b, "unauthorized: send Authorization: Bearer TOKEN (admin_token_file)\n");
	gw_admin_reply(req, 401, "Unauthorized", "text/plain", b);
}

/* Every worker ready (the first that is not says why), or degraded. */
static void gw_admin_ready(struct gw_admin *ad, struct gw_readiness *rd)
{
	const struct gw_ops_view *v = &ad->ad_view;

	if (!v->ov_n) {
		gw_readiness(&ad->ad_gw, 1, rd);
		return;
	}
	v->ov_stop(v->ov_arg);
	gw_readiness(v->ov_gw, v->ov_n, rd);
	v->ov_go(v->ov_arg);
}

void gw_admin_set_view(struct gw_admin *ad, const struct gw_ops_view *v)
{
	ad->ad_view = *v;
}

static void gw_admin_cb(struct evhttp_request *req, void *arg)
{
	struct gw_admin *ad = arg;
	struct gw_stats *st = gw_ctx_stats(ad->ad_gw);
	const char *uri = evhttp_request_get_uri(req);
	struct evbuffer *b = evbuffer_new();
	size_t n;

	gw_stat_inc(st, GW_CTR_ADMIN_REQUESTS);
	gw_admin_served(ad, req);
	if (!b) {
		evhttp_send_error(req, 500, "no memory");
		return;
	}
	n = strcspn(uri, "?");
	if (ad->ad_toklen && !gw_admin_authorized(ad, req)) {
		gw_admin_refuse(ad, req, b);
	} else if (evhttp_request_get_command(req) != EVHTTP_REQ_GET &&
	    evhttp_request_get_command(req) != EVHTTP_REQ_HEAD) {
		gw_stat_inc(st, GW_CTR_ADMIN_BAD_METHOD);
		evbuffer_add_printf(b, "GET or HEAD only\n");
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "GET, HEAD");
		gw_admin_reply(req, 405, "Method Not Allowed", "text/plain", b);
	} else if (n == 8 && !strncmp(uri, "/metrics", 8)) {
		if (ad->ad_view.ov_n) {
			ad->ad_view.ov_stop(ad->ad_view.ov_arg);
			gw_metrics_render_all(b, ad->ad_view.ov_gw, ad->ad_view.ov_n);
			ad->ad_view.ov_go(ad->ad_view.ov_arg);
		} else {
			gw_metrics_render(b, st, ad->ad_gw);
		}
		gw_admin_reply(req, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", b);
	} else if (n == 8 && !strncmp(uri, "/healthz", 8)) {
		evbuffer_add_printf(b, "ok\n");
		gw_admin_reply(req, 200, "OK", "text/plain", b);
	} else if (n == 7 && !strncmp(uri, "/readyz", 7)) {
		struct gw_readiness rd;

		gw_admin_ready(ad, &rd);
		/* Degraded is ready (200): it forwards every call, over TCP. */
		if (rd.rdy_degraded)
			evbuffer_add_printf(b, "ready, %s\n", rd.rdy_why);
		else if (rd.rdy_ready)
			evbuffer_add_printf(b, "ready\n");
		else
			evbuffer_add_printf(b, "not ready: %s\n", rd.rdy_why);
		gw_admin_reply(req, rd.rdy_ready ? 200 : 503, rd.rdy_ready ? "OK" : "Service Unavailable",
			       "text/plain", b);
	} else {
		evbuffer_add_printf(b, "not found; try /metrics, /healthz, /readyz\n");
		gw_admin_reply(req, 404, "Not Found", "text/plain", b);
	}
	evbuffer_free(b);
}

int gw_admin_token_load(const char *path, char *tok, size_t len, char *err, size_t errlen)
{
	char buf[GW_ADMIN_TOKEN_MAX + 3];
	struct stat st;
	size_t max;
	ssize_t n;
	int rc = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0) {
		snprintf(err, errlen, "admin_token_file %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "admin_token_file %s: not a regular file", path);
		goto bad;
	}
	/* Anyone else who can read it can scrape; anyone who can write it can
	 * lock the scraper out. */
	if (st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH)) {
		snprintf(err, errlen, "admin_token_file %s: mode %04o lets group or others read or "
			 "write it; chmod 0600 (or 0400)", path, (unsigned)(st.st_mode & 07777));
		goto bad;
	}
	/* The longest token, "\r\n" and one byte more: a file that fills it is too long. */
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0) {
		snprintf(err, errlen, "admin_token_file %s: %s", path, strerror(errno));
		return -1;
	}
	/* One line; a trailing newline (echo, editors) is not part of it. */
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	max = len - 1 < GW_ADMIN_TOKEN_MAX ? len - 1 : GW_ADMIN_TOKEN_MAX;
	if (n < GW_ADMIN_TOKEN_MIN || (size_t)n > max) {
		snprintf(err, errlen, "admin_token_file %s: the token must be %d to %zu characters",
			 path, GW_ADMIN_TOKEN_MIN, max);
		rc = -1;
	}
	for (ssize_t i = 0; rc == 0 && i < n; i++)
		if ((unsigned char)buf[i] <= ' ' || (unsigned char)buf[i] >= 0x7f) {
			snprintf(err, errlen, "admin_token_file %s: the token is one line of printable "
				 "characters without blanks", path);
			rc = -1;
		}
	if (rc == 0) {
		memcpy(tok, buf, (size_t)n);
		tok[n] = '\0';
	}
	explicit_bzero(buf, sizeof(buf));
	return rc;
bad:
	close(fd);
	return -1;
}

bool gw_admin_local(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_UNIX)
		return true;
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

/* The listening socket: TCP, or a Unix socket of mode 0660 (a stale one of
 * an earlier run is replaced).  Returns the fd or -1 with errno. */
static int gw_admin_socket(struct gw_admin *ad, const struct sockaddr *sa, socklen_t len)
{
	const struct sockaddr_un *sun = (const struct sockaddr_un *)sa;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	struct stat st;
	int fd, one = 1, err;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (sa->sa_family == AF_UNIX) {
		if (lstat(sun->sun_path, &st) == 0 && S_ISSOCK(st.st_mode))
			unlink(sun->sun_path);
		/* fchmod does not apply to a socket's file: chmod the path after
		 * bind; until then umask keeps it to the owner. */
		mode_t old = umask(0177);

		err = bind(fd, sa, len) < 0 ? errno : 0;
		umask(old);
		if (!err && (chmod(sun->sun_path, 0660) < 0 || listen(fd, 64) < 0)) {
			err = errno;
			unlink(sun->sun_path);
		}
		if (!err)
			snprintf(ad->ad_unix, sizeof(ad->ad_unix), "%s", sun->sun_path);
	} else {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		err = bind(fd, sa, len) < 0 || listen(fd, 64) < 0 ? errno : 0;
		if (!err && getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
			ad->ad_port = ntohs(ss.ss_family == AF_INET6 ?
					    ((struct sockaddr_in6 *)&ss)->sin6_port :
					    ((struct sockaddr_in *)&ss)->sin_port);
	}
	if (err) {
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

struct gw_admin *gw_admin_new(struct event_base *base, struct gw_ctx *gw,
			      const struct sockaddr *sa, socklen_t len, const char *token)
{
	const struct gw_log *lg = gw_ctx_log(gw);
	struct gw_admin *ad = calloc(1, sizeof(*ad));
	struct evhttp_bound_socket *bound;
	int fd = -1, err;

	if (!ad)
		return NULL;
	ad->ad_gw = gw;
	if (token) {
		ad->ad_toklen = strlen(token);
		if (ad->ad_toklen == 0 || ad->ad_toklen > GW_ADMIN_TOKEN_MAX) {
			err = EINVAL;
			goto err_free;
		}
		memcpy(ad->ad_token, token, ad->ad_toklen + 1);
	}
	ad->ad_gate = calloc(1, sizeof(*ad->ad_gate));
	ad->ad_http = ad->ad_gate ? evhttp_new(base) : NULL;
	if (!ad->ad_http) {
		err = ENOMEM;
		goto err_free;
	}
	*ad->ad_gate = (struct gw_admin_gate){ .ag_ad = ad, .ag_st = gw_ctx_stats(gw), .ag_refs = 1 };
	/* Every method reaches gw_admin_cb, which answers 405 (and counts) for
	 * all but GET and HEAD; the body caps keep what it reads small. */
	evhttp_set_allowed_methods(ad->ad_http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
				   EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS |
				   EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH);
	evhttp_set_max_headers_size(ad->ad_http, GW_ADMIN_MAX_HEAD);
	evhttp_set_max_body_size(ad->ad_http, GW_ADMIN_MAX_BODY);
	evhttp_set_bevcb(ad->ad_http, gw_admin_bev, ad);
	evhttp_set_gencb(ad->ad_http, gw_admin_cb, ad);
	evhttp_set_timeout(ad->ad_http, 10);
	fd = gw_admin_socket(ad, sa, len);
	if (fd < 0) {
		err = errno;
		goto err_http;
	}
	bound = evhttp_accept_socket_with_handle(ad->ad_http, fd);
	if (!bound) {
		err = ENOMEM;
		goto err_sock;
	}
	ad->ad_lis = evhttp_bound_socket_get_listener(bound);
	if (ad->ad_unix[0])
		gw_info(lg, "admin listener on unix:%s (mode 0660)%s: /metrics /healthz /readyz",
			ad->ad_unix, token ? ", bearer token required" : "");
	else
		gw_info(lg, "admin listener on port %u%s: /metrics /healthz /readyz", ad->ad_port,
			token ? ", bearer token required" : "");
	if (!token && !gw_admin_local(sa))
		gw_warn(lg, "admin_listen is not a loopback address: /metrics, /healthz and /readyz "
			"are open to every host that reaches port %u, without authentication "
			"(set admin_token_file)", ad->ad_port);
	return ad;
err_sock:
	close(fd);
	if (ad->ad_unix[0])
		unlink(ad->ad_unix);
err_http:
	evhttp_free(ad->ad_http);
err_free:
	free(ad->ad_gate);
	explicit_bzero(ad->ad_token, sizeof(ad->ad_token));
	free(ad);
	errno = err;
	return NULL;
}

void gw_admin_free(struct gw_admin *ad)
{
	if (!ad)
		return;
	/* Connections still open are finalised later: they see ag_ad NULL. */
	ad->ad_gate->ag_ad = NULL;
	evhttp_free(ad->ad_http);	/* closes the bound socket */
	if (ad->ad_unix[0])
		unlink(ad->ad_unix);
	gw_admin_gate_put(ad->ad_gate);
	explicit_bzero(ad->ad_token, sizeof(ad->ad_token));
	free(ad);
}

uint16_t gw_admin_port(const struct gw_admin *ad)
{
	return ad ? ad->ad_port : 0;
}
