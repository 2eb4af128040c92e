/* SPDX-License-Identifier: MIT */
/*
 * test_gw_harness.h - in-process gateway for host tests (included by the
 * gateway and frontend tests; static functions only): the gateway with or
 * without a frontend, and its /metrics and control answers as text.
 *
 *   client socket ──socketpair──▶ frontend ─ gateway ─ TCP transport ──127.0.0.1──▶ tiny RPC server
 *   (test thread, pumps the loop)      (event loop in the test thread)                (its own thread)
 *
 * The tiny server answers every call with: XID, REPLY, MSG_ACCEPTED,
 * AUTH_NONE verifier, SUCCESS, then the call's last 4 bytes (a tag the
 * test puts there), so a reply shows which call it answers, then as many
 * zero bytes as h_server_set_pad() asked (0 by default).  It records
 * the XIDs it saw (the gateway XIDs) and can hold replies back, or drop
 * the connection on a chosen call without answering.
 *
 * Then a fake transport the test plugs in as the "rdma" one (h_fake):
 * it keeps the calls the gateway submits until the test completes them,
 * so no RDMA device is needed (test_gw_seam, test_gw_callback,
 * test_gw_ready, test_gw_clock).
 *
 * Last, what the NLM/NSM tests share: their gateway, listeners standing
 * for a client host's services, record-marked LOCK, GRANTED_MSG and
 * SM_NOTIFY calls, and a fake rpcbind naming each host's statd.
 */
#ifndef TEST_GW_HARNESS_H
#define TEST_GW_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "call.h"
#include "chunking.h"
#include "config.h"
#include "frontend.h"
#include "gateway.h"
#include "log.h"
#include "ops.h"
#include "pool.h"
#include "transport.h"

/* ---- tiny RPC server ---- */

struct h_server {
	int lfd;
	uint16_t port;
	pthread_t thr;
	pthread_mutex_t mu;
	bool stop;
	bool hold;		/* keep replies back */
	int drop_at;		/* close the connection on call number N (1-based), once */
	unsigned pad;		/* zero bytes after each reply's tag */
	unsigned ncalls;	/* calls seen */
	unsigned nconns;	/* connections accepted */
	uint32_t xids[1024];
	uint8_t last[512];	/* first bytes of the last call record (no mark) */
	size_t last_len;	/* its whole length */
};

static __attribute__((unused)) bool h_read_full(int fd, void *buf, size_t n, struct h_server *s)
{
	uint8_t *p = buf;

	while (n) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t r;

		if (poll(&pfd, 1, 20) == 0) {
			bool stop;

			pthread_mutex_lock(&s->mu);
			stop = s->stop;
			pthread_mutex_unlock(&s->mu);
			if (stop)
				return false;
			continue;
		}
		r = read(fd, p, n);
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

/* A reply to xid ending with tag and pad zero bytes. */
static __attribute__((unused)) void h_send_reply_pad(int fd, uint32_t xid, uint32_t tag,
						     unsigned pad)
{
	static const uint8_t zero[4096];
	uint8_t r[32];

	chk_put_be32(r, RM_LAST_FRAG | (28 + pad));
	chk_put_be32(r + 4, xid);
	chk_put_be32(r + 8, 1);		/* REPLY */
	chk_put_be32(r + 12, 0);	/* MSG_ACCEPTED */
	chk_put_be32(r + 16, 0);	/* AUTH_NONE */
	chk_put_be32(r + 20, 0);	/* verifier length */
	chk_put_be32(r + 24, 0);	/* SUCCESS */
	chk_put_be32(r + 28, tag);
	if (write(fd, r, sizeof(r)) != (ssize_t)sizeof(r))
		return;		/* the gateway went away: fine for a test server */
	while (pad) {
		unsigned n = pad < sizeof(zero) ? pad : sizeof(zero);

		if (write(fd, zero, n) != (ssize_t)n)
			return;
		pad -= n;
	}
}

static __attribute__((unused)) void h_send_reply(int fd, uint32_t xid, uint32_t tag)
{
	h_send_reply_pad(fd, xid, tag, 0);
}

static __attribute__((unused)) void *h_server_main(void *arg)
{
	struct h_server *s = arg;

	for (;;) {
		struct pollfd pfd = { s->lfd, POLLIN, 0 };
		uint32_t pend_xid[256], pend_tag[256];
		unsigned npend = 0;
		int fd;

		pthread_mutex_lock(&s->mu);
		if (s->stop) {
			pthread_mutex_unlock(&s->mu);
			return NULL;
		}
		pthread_mutex_unlock(&s->mu);
		if (poll(&pfd, 1, 20) <= 0)
			continue;
		fd = accept(s->lfd, NULL, NULL);
		if (fd < 0)
			continue;
		pthread_mutex_lock(&s->mu);
		s->nconns++;
		pthread_mutex_unlock(&s->mu);
		for (;;) {
			struct pollfd cp = { fd, POLLIN, 0 };
			uint8_t hdr[4], body[65536];
			uint32_t len, xid, tag;
			unsigned pad;
			bool hold, drop = false;
			int pr = poll(&cp, 1, 10);

			pthread_mutex_lock(&s->mu);
			hold = s->hold;
			pad = s->pad;
			if (s->stop) {
				pthread_mutex_unlock(&s->mu);
				break;
			}
			pthread_mutex_unlock(&s->mu);
			if (!hold) {
				for (unsigned i = 0; i < npend; i++)
					h_send_reply_pad(fd, pend_xid[i], pend_tag[i], pad);
				npend = 0;
			}
			if (pr <= 0)
				continue;
			if (!h_read_full(fd, hdr, 4, s))
				break;
			len = chk_be32(hdr) & RM_LEN_MASK;
			if (len < 8 || len > sizeof(body) || !h_read_full(fd, body, len, s))
				break;
			xid = chk_be32(body);
			tag = chk_be32(body + len - 4);
			pthread_mutex_lock(&s->mu);
			if (s->ncalls < 1024)
				s->xids[s->ncalls] = xid;
			memcpy(s->last, body, len < sizeof(s->last) ? len : sizeof(s->last));
			s->last_len = len;
			s->ncalls++;
			if (s->drop_at && (int)s->ncalls == s->drop_at) {
				s->drop_at = 0;
				drop = true;
			}
			hold = s->hold;
			pthread_mutex_unlock(&s->mu);
			if (drop)
				break;
			if (hold && npend < 256) {
				pend_xid[npend] = xid;
				pend_tag[npend++] = tag;
			} else {
				h_send_reply_pad(fd, xid, tag, pad);
			}
		}
		close(fd);
	}
}

/* Reserve a loopback port; listen only when asked (outage tests). */
static __attribute__((unused)) void h_server_init(struct h_server *s)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int one = 1;

	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->mu, NULL);
	s->lfd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s->lfd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		abort();
	getsockname(s->lfd, (struct sockaddr *)&sin, &len);
	s->port = ntohs(sin.sin_port);
}

static __attribute__((unused)) void h_server_start(struct h_server *s)
{
	if (listen(s->lfd, 16) < 0 || pthread_create(&s->thr, NULL, h_server_main, s) != 0)
		abort();
}

static __attribute__((unused)) void h_server_stop(struct h_server *s, bool started)
{
	pthread_mutex_lock(&s->mu);
	s->stop = true;
	pthread_mutex_unlock(&s->mu);
	if (started)
		pthread_join(s->thr, NULL);
	close(s->lfd);
	pthread_mutex_destroy(&s->mu);
}

static __attribute__((unused)) void h_server_set(struct h_server *s, bool hold, int drop_at)
{
	pthread_mutex_lock(&s->mu);
	s->hold = hold;
	s->drop_at = drop_at;
	pthread_mutex_unlock(&s->mu);
}

/* Each reply from now on ends with pad zero bytes. */
static __attribute__((unused)) void h_server_set_pad(struct h_server *s, unsigned pad)
{
	pthread_mutex_lock(&s->mu);
	s->pad = pad;
	pthread_mutex_unlock(&s->mu);
}

static __attribute__((unused)) unsigned h_server_calls(struct h_server *s)
{
	unsigned n;

	pthread_mutex_lock(&s->mu);
	n = s->ncalls;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* Copy of the last call the server received (up to cap bytes); its length. */
static __attribute__((unused)) size_t h_server_last(struct h_server *s, uint8_t *buf, size_t cap)
{
	size_t n;

	pthread_mutex_lock(&s->mu);
	n = s->last_len;
	memcpy(buf, s->last, cap < sizeof(s->last) ? cap : sizeof(s->last));
	pthread_mutex_unlock(&s->mu);
	return n;
}

static __attribute__((unused)) uint32_t h_server_xid(struct h_server *s, unsigned i)
{
	uint32_t x;

	pthread_mutex_lock(&s->mu);
	x = s->xids[i];
	pthread_mutex_unlock(&s->mu);
	return x;
}

/* ---- the gateway in process ---- */

struct h_gw {
	struct event_base *base;
	struct cfg *cf;
	struct gw_log log;
	struct gw_stats st;
	struct gw_pool *pool;
	struct gw_ctx *gw;
	struct fe_frontend *fe;
};

/* The gateway of config text without a frontend; the RDMA transport is
 * rdma_ops (a fake, with rdma_arg) or the real one when NULL.  Not started. */
static __attribute__((unused)) void h_gw_init(struct h_gw *h, const char *text,
					      const struct gw_transport_ops *rdma_ops, void *rdma_arg)
{
	char err[256];
	struct gw_ctx_params gp;

	memset(h, 0, sizeof(*h));
	h->cf = cfg_parse_string(text, "test", NULL, err, sizeof(err));
	if (!h->cf) {
		fprintf(stderr, "config: %s\n", err);
		abort();
	}
	h->log.gl_level = getenv("H_VERBOSE") ? CFG_LOG_DEBUG : -1;
	h->base = event_base_new();
	h->pool = gw_pool_new(h->cf->cf_buffer_size, h->cf->cf_buffers, false);
	gp = (struct gw_ctx_params){ .gp_base = h->base, .gp_cfg = h->cf, .gp_log = &h->log,
				     .gp_stats = &h->st, .gp_pool = h->pool,
				     .gp_ncalls = h->cf->cf_max_calls,
				     .gp_rdma_ops = rdma_ops, .gp_rdma_arg = rdma_arg };
	h->gw = gw_ctx_new(&gp);
	if (!h->base || !h->pool || !h->gw)
		abort();
}

/* The gateway of config text with its frontend, the RDMA transport as in
 * h_gw_init(), started: gw_ctx_start()'s result. */
static __attribute__((unused)) int h_gw_start_on(struct h_gw *h, const char *text,
						 const struct gw_transport_ops *rdma_ops,
						 void *rdma_arg)
{
	struct fe_params fp;

	h_gw_init(h, text, rdma_ops, rdma_arg);
	fp = (struct fe_params){ .fp_base = h->base, .fp_cfg = h->cf, .fp_gw = h->gw,
				 .fp_pool = h->pool, .fp_log = &h->log, .fp_stats = &h->st };
	h->fe = fe_new(&fp);
	if (!h->fe)
		abort();
	return gw_ctx_start(h->gw);
}

static __attribute__((unused)) void h_gw_start(struct h_gw *h, const char *text)
{
	if (h_gw_start_on(h, text, NULL, NULL) < 0)
		abort();
}

/* Reload h's gateway and frontend with config text: 0 or the negative
 * errno of gw_ctx_reload(); h->cf follows the new configuration. */
static __attribute__((unused)) int h_gw_reload(struct h_gw *h, const char *text)
{
	char err[256];
	struct cfg *cf = cfg_parse_string(text, "test", NULL, err, sizeof(err));
	struct cfg_diff d;
	int rc;

	if (!cf) {
		fprintf(stderr, "config: %s\n", err);
		abort();
	}
	cfg_diff(h->cf, cf, &d);
	rc = gw_ctx_reload(h->gw, cf, &d, err, sizeof(err));
	if (rc < 0) {
		cfg_free(cf);
		return rc;
	}
	fe_set_cfg(h->fe, cf);
	cfg_free(h->cf);	/* nothing may point into it any more */
	h->cf = cf;
	return 0;
}

/* Tear down; returns the buffers still out (must be 0: no leak). */
static __attribute__((unused)) unsigned h_gw_stop(struct h_gw *h)
{
	unsigned out;

	fe_free(h->fe);
	gw_ctx_free(h->gw);
	out = gw_pool_count(h->pool) - gw_pool_avail(h->pool);
	gw_pool_free(h->pool);
	event_base_free(h->base);
	cfg_free(h->cf);
	return out;
}

/* The text in b as a string (malloc'd); frees b. */
static __attribute__((unused)) char *h_drain(struct evbuffer *b)
{
	size_t n = evbuffer_get_length(b);
	char *s = malloc(n + 1);

	if (!s)
		abort();
	evbuffer_remove(b, s, n);
	s[n] = '\0';
	evbuffer_free(b);
	return s;
}

/* /metrics of st (and gw, may be NULL) as a string (malloc'd). */
static __attribute__((unused)) char *h_render(const struct gw_stats *st, struct gw_ctx *gw)
{
	struct evbuffer *b = evbuffer_new();

	gw_metrics_render(b, st, gw);
	return h_drain(b);
}

/* The control socket's answer to line as a string (malloc'd). */
static __attribute__((unused)) char *h_ctl(struct gw_ctl *ct, const char *line)
{
	struct evbuffer *b = evbuffer_new();

	gw_ctl_exec(ct, line, b);
	return h_drain(b);
}

/* The value of the sample line starting with prefix (not # HELP), or -1. */
static __attribute__((unused)) double h_sample(const char *text, const char *prefix)
{
	char key[256];
	const char *s;

	snprintf(key, sizeof(key), "\n%s", prefix);
	s = strstr(text, key);
	if (!s)
		return -1;
	s = strchr(s + strlen(key) - 1, ' ');
	return s ? strtod(s + 1, NULL) : -1;
}

static __attribute__((unused)) void h_pump(struct h_gw *h, int ms)
{
	uint64_t end = gw_now_ms() + (uint64_t)ms;

	do {
		event_base_loop(h->base, EVLOOP_NONBLOCK);
		usleep(500);
	} while (gw_now_ms() < end);
}

/* A test's end: its client fd closed, the loop turned once more, then
 * h_gw_stop(): the buffers still out (must be 0). */
static __attribute__((unused)) unsigned h_gw_end(struct h_gw *h, int fd)
{
	close(fd);
	h_pump(h, 20);
	return h_gw_stop(h);
}

/* ---- cmocka fixture: a tiny server and the gateway in process ---- */

struct h_env {
	struct h_server he_srv;		/* port reserved by setup; listening once h_env_listen() */
	struct h_gw he_gw;		/* running once h_env_gw() */
	bool he_listening, he_running;
};

/* Group or test setup: a server whose port is reserved, not listening. */
static __attribute__((unused)) int h_env_setup(void **state)
{
	struct h_env *e = calloc(1, sizeof(*e));

	if (!e)
		return -1;
	h_server_init(&e->he_srv);
	*state = e;
	return 0;
}

static __attribute__((unused)) void h_env_listen(struct h_env *e)
{
	h_server_start(&e->he_srv);
	e->he_listening = true;
}

static __attribute__((unused)) void h_env_gw(struct h_env *e, const char *text)
{
	h_gw_start(&e->he_gw, text);
	e->he_running = true;
}

/* Teardown: the gateway stops first and must give every buffer back (the
 * test fails otherwise: a leak), then the server. */
static __attribute__((unused)) int h_env_teardown(void **state)
{
	struct h_env *e = *state;
	unsigned out = 0;

	if (e->he_running)
		out = h_gw_stop(&e->he_gw);
	h_server_stop(&e->he_srv, e->he_listening);
	free(e);
	if (out) {
		fprintf(stderr, "teardown: %u pool buffers still out (leak)\n", out);
		return -1;
	}
	return 0;
}

/* A client: one end of a socketpair adopted by the frontend under name
 * (as the frontend names an accepted connection: "address:port"). */
static __attribute__((unused)) int h_client_at(struct h_gw *h, const char *name)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || fe_adopt_fd(h->fe, sv[1], name) < 0)
		abort();
	return sv[0];
}

static __attribute__((unused)) int h_client(struct h_gw *h)
{
	return h_client_at(h, "test");
}

/* Record-marked call of procedure proc: header with AUTH_NONE, then one
 * argument word (tag). */
static __attribute__((unused)) size_t h_call_proc(uint8_t *out, uint32_t xid, uint32_t rpcvers,
						  uint32_t prog, uint32_t vers, uint32_t proc,
						  uint32_t tag)
{
	static const uint32_t tail[] = { 0, 0, 0, 0 };	/* cred, verf: AUTH_NONE, empty */
	uint32_t w[] = { xid, 0, rpcvers, prog, vers, proc };
	size_t o = 4;

	for (unsigned i = 0; i < 6; i++, o += 4)
		chk_put_be32(out + o, w[i]);
	for (unsigned i = 0; i < 4; i++, o += 4)
		chk_put_be32(out + o, tail[i]);
	chk_put_be32(out + o, tag);
	o += 4;
	rm_encode_hdr(out, (uint32_t)(o - 4), true);
	return o;
}

/* h_call_proc() of procedure 1 (GETATTR for NFSv2/v3). */
static __attribute__((unused)) size_t h_call(uint8_t *out, uint32_t xid, uint32_t rpcvers, uint32_t prog, uint32_t vers,
		     uint32_t tag)
{
	return h_call_proc(out, xid, rpcvers, prog, vers, 1, tag);
}

static __attribute__((unused)) void h_send(int fd, const void *buf, size_t n)
{
	if (write(fd, buf, n) != (ssize_t)n)
		abort();
}

/* Pump the loop until a whole reply record is read from fd.  Returns its
 * length (without the mark), 0 when fd was closed, -1 on timeout. */
static __attribute__((unused)) int h_reply(struct h_gw *h, int fd, uint8_t *buf, size_t cap, int timeout_ms)
{
	uint64_t end = gw_now_ms() + (uint64_t)timeout_ms;
	size_t have = 0, need = 4;
	bool got_mark = false;

	while (gw_now_ms() < end) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		ssize_t r;

		event_base_loop(h->base, EVLOOP_NONBLOCK);
		if (poll(&pfd, 1, 1) <= 0)
			continue;
		r = read(fd, buf + have, need - have);
		if (r <= 0)
			return 0;
		have += (size_t)r;
		if (have < need)
			continue;
		if (!got_mark) {
			need = chk_be32(buf) & RM_LEN_MASK;
			if (need > cap)
				abort();
			got_mark = true;
			have = 0;
			if (need == 0)
				return 0;
			continue;
		}
		return (int)need;
	}
	return -1;
}

/* The gateway of the host tests with a TCP backend: s, started here. */
static __attribute__((unused)) void h_gw_up(struct h_gw *h, struct h_server *s)
{
	char text[1024];

	h_server_init(s);
	h_server_start(s);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\nversions = 3-4\ntransport = tcp\nport = %u\n", s->port);
	h_gw_start(h, text);
}

/* Read fd to its end (or 3 s) while pumping the loop; closes fd, returns
 * what came (malloc'd, at most cap - 1 bytes). */
static __attribute__((unused)) char *h_read_all(struct h_gw *h, int fd, size_t cap)
{
	char *buf = malloc(cap);
	uint64_t end = gw_now_ms() + 3000;
	size_t have = 0;

	if (!buf)
		abort();
	while (gw_now_ms() < end) {
		ssize_t r;

		event_base_loop(h->base, EVLOOP_NONBLOCK);
		r = read(fd, buf + have, cap - 1 - have);
		if (r == 0)
			break;
		if (r > 0)
			have += (size_t)r;
		else
			usleep(200);
	}
	close(fd);
	buf[have] = '\0';
	return buf;
}

/* HTTP GET on 127.0.0.1:port while pumping the loop: the whole response. */
static __attribute__((unused)) char *h_http_get(struct h_gw *h, uint16_t port, const char *path)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	uint64_t end = gw_now_ms() + 3000;
	char req[256];
	bool sent = false;

	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)
		abort();
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", path);
	while (!sent && gw_now_ms() < end) {
		event_base_loop(h->base, EVLOOP_NONBLOCK);
		sent = write(fd, req, strlen(req)) == (ssize_t)strlen(req);
	}
	return h_read_all(h, fd, 1 << 20);
}

/* The control protocol over the socket at path, while pumping the loop. */
static __attribute__((unused)) char *h_ctl_socket(struct h_gw *h, const char *path, const char *line)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0)
		abort();
	h_send(fd, line, strlen(line));
	return h_read_all(h, fd, 1 << 16);
}

/* The gateway of the NFS tests (test_gw_e2e, test_gw_gss): NFS v3-4 over
 * TCP to the tiny server, extra lines in [gateway]; started. */
static __attribute__((unused)) void h_env_nfs_gw(struct h_env *e, const char *extra)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "bytes_per_client = 1m\nreconnect_interval = 30ms\nlog_level = debug\n%s\n"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\nversions = 3-4\ntransport = tcp\nport = %u\n",
		 extra, e->he_srv.port);
	h_env_gw(e, text);
}

/* ---- a fake transport in place of RDMA ---- */

#define H_FAKE_MAX	16	/* calls it holds at once (more aborts) */

/* The fake: gp_rdma_arg and the transport of every path made on it.  A
 * test with state of its own puts the fake first in its struct (the
 * transport's tp is then that struct too). */
struct h_fake {
	struct gw_transport_ops hf_ops;		/* h_fake_init()'s; a test may add or wrap one */
	struct gw_path *hf_path;		/* the last path made */
	bool hf_down;				/* paths start down: the test brings them up */
	int hf_submit_rc;			/* nonzero: submit answers it and takes nothing */
	/* Asked first with each call it takes (a test's checks). */
	void (*hf_on_submit)(struct h_fake *f, struct gw_call *c);
	struct gw_call *hf_calls[H_FAKE_MAX];	/* accepted, not yet completed */
	unsigned hf_ncalls;
	unsigned hf_ncreate, hf_ndestroy, hf_nsub, hf_nrel, hf_ncancel;
	uint8_t hf_reply[H_FAKE_MAX][28];	/* h_fake_reply()'s, by ca_index % H_FAKE_MAX */
	struct iovec hf_riov[H_FAKE_MAX][2];
};

static __attribute__((unused)) void *h_fake_create(struct gw_ctx *gw, struct gw_path *path)
{
	struct h_fake *f = gw_ctx_rdma_arg(gw);

	f->hf_path = path;
	f->hf_ncreate++;
	if (!f->hf_down)
		gw_path_ready(path, true);
	return f;
}

/* Drop c from the calls held (the gateway has it back). */
static __attribute__((unused)) void h_fake_forget(struct h_fake *f, struct gw_call *c)
{
	for (unsigned i = 0; i < f->hf_ncalls; i++)
		if (f->hf_calls[i] == c) {
			f->hf_calls[i] = f->hf_calls[--f->hf_ncalls];
			return;
		}
}

static __attribute__((unused)) void h_fake_destroy(void *tp)
{
	struct h_fake *f = tp;

	f->hf_ndestroy++;
	while (f->hf_ncalls)	/* the seam: destroy cancels what it still owns */
		gw_call_finalize(f->hf_calls[0], GW_END_SHUTDOWN);
}

static __attribute__((unused)) int h_fake_submit(void *tp, struct gw_call *c)
{
	struct h_fake *f = tp;

	f->hf_nsub++;
	if (f->hf_submit_rc)
		return f->hf_submit_rc;
	if (f->hf_on_submit)
		f->hf_on_submit(f, c);
	if (f->hf_ncalls == H_FAKE_MAX)
		abort();
	gw_call_get(c);
	c->ca_tp_owned = true;
	f->hf_calls[f->hf_ncalls++] = c;
	return 0;
}

static __attribute__((unused)) void h_fake_release(void *tp, struct gw_call *c)
{
	struct h_fake *f = tp;

	f->hf_nrel++;
	gw_call_put(c);
}

static __attribute__((unused)) void h_fake_cancel(void *tp, struct gw_call *c)
{
	struct h_fake *f = tp;

	f->hf_ncancel++;
	h_fake_forget(f, c);
	gw_call_put(c);
}

/* A fake named name ("fake", or "rdma" where the transport's name shows),
 * its paths up as soon as made, holding nothing. */
static __attribute__((unused)) void h_fake_init(struct h_fake *f, const char *name)
{
	memset(f, 0, sizeof(*f));
	f->hf_ops = (struct gw_transport_ops){
		.to_name = name, .to_create = h_fake_create, .to_destroy = h_fake_destroy,
		.to_submit = h_fake_submit, .to_release = h_fake_release, .to_cancel = h_fake_cancel,
	};
}

/* The gateway of the fake's tests on f (h_fake_init()'d), started:
 * max_calls = 16, extra lines in [gateway], NFS over "rdma" to backend
 * srv; gw_ctx_start()'s result. */
static __attribute__((unused)) int h_fake_gw(struct h_gw *h, struct h_fake *f, const char *extra)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 16\n"
		 "%s[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\ntransport = rdma\n", extra);
	return h_gw_start_on(h, text, &f->hf_ops, f);
}

/* The server's reply to call c held by f: niov iovecs (the transport's
 * buffers as it hands them over), forgotten first. */
static __attribute__((unused)) void h_fake_complete(struct h_fake *f, struct gw_call *c,
						    const struct iovec *iov, unsigned niov)
{
	h_fake_forget(f, c);
	gw_call_complete(c, iov, niov);
}

/* Complete the i-th held call with SUCCESS and one result word, tag: in
 * one iovec, or in two with the XID alone in the first (the gateway must
 * skip it either way). */
static __attribute__((unused)) void h_fake_reply(struct h_fake *f, unsigned i, uint32_t tag,
						 unsigned niov)
{
	struct gw_call *c = f->hf_calls[i];
	uint8_t *r = f->hf_reply[c->ca_index % H_FAKE_MAX];
	struct iovec *v = f->hf_riov[c->ca_index % H_FAKE_MAX];

	memset(r, 0, 28);
	chk_put_be32(r, c->ca_gxid);
	chk_put_be32(r + 4, 1);		/* REPLY, then accepted, AUTH_NONE, SUCCESS */
	chk_put_be32(r + 24, tag);
	if (niov == 2) {
		v[0] = (struct iovec){ r, 4 };
		v[1] = (struct iovec){ r + 4, 24 };
	} else {
		v[0] = (struct iovec){ r, 28 };
	}
	h_fake_complete(f, c, v, niov == 2 ? 2 : 1);
}

/* ---- NLM and NSM through the gateway (test_gw_nlm_e2e, test_gw_nsm_udp) ---- */

#define H_NLM	100021u
#define H_NSM	100024u

/* NLM to the tiny server; NSM to a port nobody serves (the tiny server
 * takes one connection at a time, and nothing may reach it). */
static __attribute__((unused)) void h_env_nlm_gw(struct h_env *e)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "log_level = debug\n[backend srv]\naddress = 127.0.0.1\n"
		 "[route nlm]\nprogram = nlm\ntransport = tcp\nport = %u\n"
		 "[route nsm]\nprogram = nsm\ntransport = tcp\nport = 9\n",
		 e->he_srv.port);
	h_env_gw(e, text);
}

/* A TCP listener (non-blocking) on host address addr, an ephemeral port
 * into *port: a client host's NLM service or statd; -1 on failure. */
static __attribute__((unused)) int h_listener(uint32_t addr, uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(addr) };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	if (fd >= 0 && (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0 ||
			getsockname(fd, (struct sockaddr *)&a, &al) < 0)) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* A connection accepted on lis within ms, the gateway's loop turning
 * meanwhile; -1 when none came. */
static __attribute__((unused)) int h_accept(struct h_gw *h, int lis, int ms)
{
	int cfd = -1;

	for (int i = 0; i < ms && cfd < 0; i += 5) {
		h_pump(h, 5);
		cfd = accept(lis, NULL, NULL);
	}
	return cfd;
}

/* Ends a record-marked call built in out + 4 (aborts when it did not fit). */
static __attribute__((unused)) size_t h_rm_close(uint8_t *out, const struct xdr_enc *xe)
{
	if (xe->xe_err != XDR_OK)
		abort();
	rm_encode_hdr(out, (uint32_t)xe->xe_len, true);
	return xe->xe_len + 4;
}

/* Record-marked NLM v4 LOCK (AUTH_NONE) of owner svid (caller "guest", oh
 * "1@guest") on file handle "fh", state the tiny server's tag 0xa1; the
 * offset of the svid word in the record (no mark) into *svid_at. */
static __attribute__((unused)) size_t h_nlm_lock(uint8_t out[512], uint32_t xid, int32_t svid,
						 size_t *svid_at)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, out + 4, 508);
	rpc_call_encode(&xe, xid, H_NLM, 4, 2, NULL);	/* LOCK */
	xdr_put_opaque(&xe, "ck", 2);
	xdr_put_u32(&xe, 0);		/* block */
	xdr_put_u32(&xe, 1);		/* exclusive */
	xdr_put_opaque(&xe, "guest", 5);
	xdr_put_opaque(&xe, "fh", 2);
	xdr_put_opaque(&xe, "1@guest", 7);
	*svid_at = xe.xe_len;
	xdr_put_u32(&xe, (uint32_t)svid);
	xdr_put_u64(&xe, 0);
	xdr_put_u64(&xe, 0);
	xdr_put_u32(&xe, 0);		/* reclaim */
	xdr_put_u32(&xe, 0xa1);		/* state: the tiny server's tag */
	return h_rm_close(out, &xe);
}

/* Record-marked NLM v4 GRANTED_MSG (proc 10) of the server ("server") for
 * owner svid (oh "1@guest") on "fh"; the svid word's offset as above. */
static __attribute__((unused)) size_t h_nlm_granted_msg(uint8_t out[512], uint32_t xid,
							int32_t svid, size_t *svid_at)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, out + 4, 508);
	rpc_call_encode(&xe, xid, H_NLM, 4, 10, NULL);	/* GRANTED_MSG */
	xdr_put_opaque(&xe, "gc", 2);	/* cookie */
	xdr_put_u32(&xe, 1);		/* exclusive */
	xdr_put_opaque(&xe, "server", 6);
	xdr_put_opaque(&xe, "fh", 2);
	xdr_put_opaque(&xe, "1@guest", 7);
	*svid_at = xe.xe_len;
	xdr_put_u32(&xe, (uint32_t)svid);
	xdr_put_u64(&xe, 0);
	xdr_put_u64(&xe, 0);
	return h_rm_close(out, &xe);
}

/* Record-marked SM_NOTIFY (nsm.x stat_chge) of mon_name, state. */
static __attribute__((unused)) size_t h_sm_notify(uint8_t out[512], uint32_t xid, const char *mon,
						  int32_t state)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, out + 4, 508);
	rpc_call_encode(&xe, xid, H_NSM, 1, 6, NULL);	/* SM_NOTIFY */
	xdr_put_opaque(&xe, mon, (uint32_t)strlen(mon));
	xdr_put_u32(&xe, (uint32_t)state);
	return h_rm_close(out, &xe);
}

/* rpcbind of the client hosts as the gateway's reboot relay asks it (a
 * gw_ng_getport_fn, which takes no context): NSM v1 of 127.0.0.2 at
 * h_statd_port[0], of 127.0.0.3 at h_statd_port[1] (0: none); each
 * lookup counted in h_statd_lookups. */
static __attribute__((unused)) uint16_t h_statd_port[2];
static __attribute__((unused)) unsigned h_statd_lookups;

static __attribute__((unused)) int h_statd_getport(const char *host, int family, uint32_t prog,
						   uint32_t vers, uint16_t *port, char *msg,
						   size_t msglen)
{
	(void)family;
	__atomic_add_fetch(&h_statd_lookups, 1, __ATOMIC_SEQ_CST);
	snprintf(msg, msglen, "no program %u/%u at %s", prog, vers, host);
	*port = prog != H_NSM || vers != 1 ? 0 : !strcmp(host, "127.0.0.2") ? h_statd_port[0] :
		!strcmp(host, "127.0.0.3") ? h_statd_port[1] : 0;
	return *port ? 0 : -1;
}

#endif /* TEST_GW_HARNESS_H */
