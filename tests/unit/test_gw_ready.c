// SPDX-License-Identifier: MIT
/* Host tests of readiness, the TCP fallback of rdma routes and the reasons
 * a path is down, on a host with NO RDMA device (or one whose RDMA cannot
 * reach 127.0.0.1:20049): the real RDMA transport is plugged in and fails
 * as it would on a server without an adapter.
 *
 *   1. fallback = tcp: a call through the gateway is answered over TCP
 *      within a second of start; status, backends and /metrics say so;
 *      its latency counts on the route's path (backend_duration_seconds
 *      {path="nfs/srv"}, the backends of `stats ops`), not on a hidden one;
 *      ready but degraded: /readyz 200 "ready, degraded: nfs/srv on TCP
 *      fallback because ...", status and its JSON, rpcrdma_gw_ready 1 and
 *      rpcrdma_gw_readiness{state="degraded",reason="fallback"}.
 *   2. fallback = none: the NFS route stays down with its reason; /readyz is
 *      503 although the MOUNT route (TCP) is up; the call is held;
 *      rpcrdma_gw_ready is 0 (path_up of the MOUNT route is 1: an alert on
 *      path_up alone stays silent) and rpcrdma_gw_readiness says why.
 *   3. ready_when = any / all.
 *   4. a name that does not resolve: the path is down for "DNS: ..." (RDMA
 *      and TCP transports), the event loop keeps running, nothing switches
 *      quietly; with fallback = tcp it is on fallback, loudly.
 *   5. a fake RDMA transport that comes up later: new calls return to it,
 *      a call already sent over TCP finishes there.
 *   6. an RDMA connection that was up and is lost: failed reconnects within
 *      GW_FALLBACK_GRACE_MS keep the route on RDMA (calls held), the first
 *      one after it puts the route on TCP.
 *   7. a reload retires a route on fallback while a call is on its TCP
 *      path: the call ends there, then the path is freed.
 *   8. drain while on fallback holds new calls; undrain sends them over TCP.
 * The tiny TCP RPC server is test_gw_harness.h's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <event2/buffer.h>

#include "call.h"
#include "chunking.h"
#include "ctx.h"
#include "gateway.h"
#include "log.h"
#include "ops.h"
#include "test_gw_harness.h"
#include "transport.h"

#define NFS 100003u
#define MOUNT 100005u

/* The gateway of these tests: h_gw plus the RDMA transport it is given. */
struct r_gw {
	struct h_gw rg_h;
	struct gw_rdma *rg_rdma;
};

static void r_start(struct r_gw *g, const char *text, const struct gw_transport_ops *ops, void *arg)
{
	struct h_gw *h = &g->rg_h;
	char err[256];
	struct gw_ctx_params gp;
	struct fe_params fp;

	memset(g, 0, sizeof(*g));
	h->cf = cfg_parse_string(text, "ready", NULL, err, sizeof(err));
	if (!h->cf)
		fail_msg("config: %s", err);
	h->log.gl_level = getenv("H_VERBOSE") ? CFG_LOG_DEBUG : -1;
	h->base = event_base_new();
	h->pool = gw_pool_new(h->cf->cf_buffer_size, h->cf->cf_buffers, false);
	if (!ops) {	/* the real one */
		g->rg_rdma = gw_rdma_new(h->base, h->pool, &h->log, &h->st);
		assert_non_null(g->rg_rdma);
		ops = &gw_transport_rdma;
		arg = g->rg_rdma;
	}
	gp = (struct gw_ctx_params){ .gp_base = h->base, .gp_cfg = h->cf, .gp_log = &h->log,
				     .gp_stats = &h->st, .gp_pool = h->pool,
				     .gp_ncalls = h->cf->cf_max_calls, .gp_rdma_ops = ops,
				     .gp_rdma_arg = arg };
	h->gw = gw_ctx_new(&gp);
	assert_non_null(h->gw);
	fp = (struct fe_params){ .fp_base = h->base, .fp_cfg = h->cf, .fp_gw = h->gw,
				 .fp_pool = h->pool, .fp_log = &h->log, .fp_stats = &h->st };
	h->fe = fe_new(&fp);
	assert_non_null(h->fe);
	assert_int_equal(gw_ctx_start(h->gw), 0);
}

static void r_stop(struct r_gw *g)
{
	struct h_gw *h = &g->rg_h;

	fe_free(h->fe);
	gw_ctx_free(h->gw);
	gw_rdma_free(g->rg_rdma);	/* after the paths, before the pool */
	assert_int_equal(gw_pool_count(h->pool) - gw_pool_avail(h->pool), 0);
	gw_pool_free(h->pool);
	event_base_free(h->base);
	cfg_free(h->cf);
}

/* A test's end: its client fd closed, the gateway (no buffer out) and the
 * tiny server s stopped. */
static void r_end(struct r_gw *g, struct h_server *s, int fd)
{
	close(fd);
	h_pump(&g->rg_h, 20);
	r_stop(g);
	h_server_stop(s, true);
}

static void conf(char *buf, size_t cap, const char *gateway, const char *host, uint16_t port,
		 const char *nfs_extra, bool with_mount)
{
	int n = snprintf(buf, cap,
			 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
			 "bytes_per_client = 1m\nreconnect_interval = 100ms\n%s\n"
			 "[backend srv]\naddress = %s\nrdma_port = %u\n"
			 "[route nfs]\nprogram = nfs\nversions = 3\ntransport = rdma\nport = %u\n%s\n",
			 gateway, host, (unsigned)port, (unsigned)port, nfs_extra);

	if (with_mount)
		snprintf(buf + n, cap - (size_t)n,
			 "[route mount]\nprogram = mount\ntransport = tcp\nport = %u\n", port);
}

/* A NULL call (procedure 0) of prog/vers, tag in its last word. */
static size_t null_call(uint8_t *buf, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t tag)
{
	size_t n = h_call(buf, xid, 2, prog, vers, tag);

	chk_put_be32(buf + 4 + 20, 0);	/* procedure */
	return n;
}

static struct gw_ctl *ctl_open(struct h_gw *h, char *path, size_t len)
{
	struct gw_ctl_hooks hk = { 0 };
	struct gw_ctl *ct;

	snprintf(path, len, "/tmp/test_gw_ready.%d", (int)getpid());
	ct = gw_ctl_new(h->base, h->gw, path, &hk);
	assert_non_null(ct);
	return ct;
}

/* Pump until the path has a reason other than "starting" (or timeout). */
static enum gw_why pump_until_reason(struct h_gw *h, struct gw_path *pa, int ms)
{
	uint64_t end = gw_now_ms() + (uint64_t)ms;
	enum gw_why w;

	do {
		h_pump(h, 10);
		w = gw_path_why(pa, NULL, NULL);
	} while (w == GW_WHY_STARTING && gw_now_ms() < end);
	return w;
}

/* Pump until the path's transport is up (or timeout): a loaded machine. */
static bool pump_until_up(struct h_gw *h, struct gw_path *pa, int ms)
{
	uint64_t end = gw_now_ms() + (uint64_t)ms;

	while (!gw_path_up(pa) && gw_now_ms() < end)
		h_pump(h, 10);
	return gw_path_up(pa);
}

/* /readyz of a gateway on its TCP fallback: 200, and it says so. */
static void readyz_degraded(struct h_gw *h)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct gw_admin *ad = gw_admin_new(h->base, h->gw, (struct sockaddr *)&sa, sizeof(sa), NULL);
	char *r;

	assert_non_null(ad);
	r = h_http_get(h, gw_admin_port(ad), "/readyz");
	assert_non_null(strstr(r, " 200 "));
	assert_non_null(strstr(r, "\r\n\r\nready, degraded: nfs/srv on TCP fallback because "));
	free(r);
	gw_admin_free(ad);
}

/* 1. fallback = tcp, no RDMA: the call is answered over TCP within a second
 * of start; the route says why and that it is on fallback. */
static void t01_fallback_tcp_answers(void **state)
{
	struct h_server s;
	struct r_gw g;
	struct h_gw *h = &g.rg_h;
	struct gw_ctl *ct;
	struct gw_path *pa;
	char text[1024], path[64], *r;
	uint8_t buf[256];
	uint64_t t0;
	int fd, n;

	(void)state;
	h_server_init(&s);
	h_server_start(&s);
	conf(text, sizeof(text), "", "127.0.0.1", s.port, "fallback = tcp", false);
	t0 = gw_now_ms();
	r_start(&g, text, NULL, NULL);
	fd = h_client(h);
	h_send(fd, buf, null_call(buf, 0x5eed, NFS, 3, 0xab));
	n = h_reply(h, fd, buf, sizeof(buf), 1000);
	assert_int_equal(n, 28);
	assert_true(gw_now_ms() - t0 < 1000);
	assert_int_equal(chk_be32(buf), 0x5eed);
	assert_int_equal(chk_be32(buf + 24), 0xab);
	assert_int_equal(h_server_calls(&s), 1);

	pa = gw_ctx_path(h->gw, 0);
	assert_false(gw_path_up(pa));		/* RDMA itself is down ... */
	assert_true(gw_path_on_fallback(pa));	/* ... and the route on TCP */
	assert_true(gw_path_fallback_up(pa));
	assert_true(gw_path_can_forward(pa));
	assert_int_not_equal(gw_path_why(pa, NULL, NULL), GW_WHY_NONE);
	assert_int_not_equal(gw_path_why(pa, NULL, NULL), GW_WHY_STARTING);
	assert_true(gw_ctx_ready(h->gw, NULL, 0));
	assert_int_equal(h->st.gs_ctr[GW_CTR_PATH_FALLBACKS], 1);

	ct = ctl_open(h, path, sizeof(path));
	r = h_ctl(ct, "status");
	assert_non_null(strstr(r, "ready: yes (degraded: nfs/srv on TCP fallback because "));
	assert_non_null(strstr(r, " fallback "));
	assert_non_null(strstr(r, "on TCP fallback (tcp up) because "));
	assert_non_null(strstr(r, " since "));
	free(r);
	r = h_ctl(ct, "json backends");
	assert_non_null(strstr(r, "\"fallback\":true"));
	assert_non_null(strstr(r, "\"fallback_up\":true"));
	assert_null(strstr(r, "\"reason\":\"none\""));
	assert_null(strstr(r, "\"reason\":\"starting\""));
	free(r);
	r = h_ctl(ct, "json status");
	assert_non_null(strstr(r, "\"ready\":true,\"degraded\":true,\"ready_state\":\"degraded\""));
	free(r);
	readyz_degraded(h);
	r = h_ctl(ct, "stats ops");
	assert_non_null(strstr(r, "\nnfs/srv                                  1 "));
	free(r);
	gw_ctl_free(ct);
	r = h_render(&h->st, h->gw);
	assert_true(h_sample(r, "rpcrdma_gw_ready ") == 1);
	assert_true(h_sample(r, "rpcrdma_gw_readiness{state=\"degraded\",reason=\"fallback\","
			     "path=\"nfs/srv\"} ") == 1);
	assert_true(h_sample(r, "rpcrdma_gw_backend_duration_seconds_count{path=\"nfs/srv\"} ") == 1);
	assert_non_null(strstr(r, "\nrpcrdma_gw_path_fallback{path=\"nfs/srv\""));
	assert_non_null(strstr(r, ",transport=\"rdma\"} 1\n"));
	assert_null(strstr(r, "reason=\"none\"} 1"));
	free(r);
	r_end(&g, &s, fd);
}

/* 2. fallback = none, no RDMA: the route stays down with its reason, its
 * call is held; the MOUNT route (TCP) being up does not make the gateway
 * ready: /readyz 503 says which route and why. */
static void t02_fallback_none_not_ready(void **state)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct h_server s;
	struct r_gw g;
	struct h_gw *h = &g.rg_h;
	struct gw_admin *ad;
	struct gw_ctl *ct;
	struct gw_path *pa;
	char text[1024], path[64], why[256], *r;
	uint8_t buf[256];
	int fd;

	(void)state;
	h_server_init(&s);
	h_server_start(&s);
	conf(text, sizeof(text), "", "127.0.0.1", s.port, "fallback = none", true);
	r_start(&g, text, NULL, NULL);
	pa = gw_ctx_path(h->gw, 0);
	assert_int_not_equal(pump_until_reason(h, pa, 2000), GW_WHY_STARTING);
	assert_true(pump_until_up(h, gw_ctx_path(h->gw, 1), 3000));	/* mount over TCP */
	assert_false(gw_path_up(pa));
	assert_false(gw_path_on_fallback(pa));
	assert_false(gw_ctx_ready(h->gw, why, sizeof(why)));
	assert_non_null(strstr(why, "nfs/srv: "));
	assert_null(strstr(why, "starting"));

	fd = h_client(h);
	h_send(fd, buf, null_call(buf, 7, NFS, 3, 1));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 300), -1);	/* held */
	for (int i = 0; i < 200 && gw_path_nheld(pa) == 0; i++)
		h_pump(h, 10);
	assert_int_equal(gw_path_nheld(pa), 1);
	h_send(fd, buf, null_call(buf, 8, MOUNT, 3, 2));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 2000), 28);	/* mount answers */

	ad = gw_admin_new(h->base, h->gw, (struct sockaddr *)&sa, sizeof(sa), NULL);
	assert_non_null(ad);
	r = h_http_get(h, gw_admin_port(ad), "/readyz");
	assert_non_null(strstr(r, " 503 "));
	assert_non_null(strstr(r, "not ready: nfs/srv: "));
	free(r);
	gw_admin_free(ad);
	r = h_render(&h->st, h->gw);
	assert_true(h_sample(r, "rpcrdma_gw_ready ") == 0);
	assert_non_null(strstr(r, "\nrpcrdma_gw_readiness{state=\"not_ready\",reason=\""));
	assert_non_null(strstr(r, "\",path=\"nfs/srv\"} 1\n"));
	assert_true(h_sample(r, "rpcrdma_gw_path_up{path=\"mount/srv\"") == 1);
	free(r);
	ct = ctl_open(h, path, sizeof(path));
	r = h_ctl(ct, "status");
	assert_non_null(strstr(r, "ready: no (nfs/srv: "));
	assert_non_null(strstr(r, "ready_when nfs"));
	assert_null(strstr(r, "fallback (tcp"));
	free(r);
	r = h_ctl(ct, "backends");
	assert_non_null(strstr(r, "\n  "));		/* the reason line under the path */
	assert_non_null(strstr(r, " since "));
	free(r);
	gw_ctl_free(ct);
	r_end(&g, &s, fd);
}

/* 3. ready_when: any is satisfied by the MOUNT route, all is not. */
static void t03_ready_when(void **state)
{
	static const char *const modes[] = { "ready_when = any", "ready_when = all" };
	struct h_server s;
	char text[1024], why[256];

	(void)state;
	h_server_init(&s);
	h_server_start(&s);
	for (unsigned m = 0; m < 2; m++) {
		struct r_gw g;
		struct h_gw *h = &g.rg_h;

		conf(text, sizeof(text), modes[m], "127.0.0.1", s.port, "fallback = none", true);
		r_start(&g, text, NULL, NULL);
		pump_until_reason(h, gw_ctx_path(h->gw, 0), 2000);
		assert_true(pump_until_up(h, gw_ctx_path(h->gw, 1), 3000));
		assert_int_equal(gw_ctx_ready(h->gw, why, sizeof(why)), m == 0);
		if (m == 1)
			assert_non_null(strstr(why, "nfs/srv: "));
		r_stop(&g);
	}
	h_server_stop(&s, true);
}

/* 4. A server name that does not resolve: RDMA and TCP paths are down for
 * "DNS: ...", the loop is never blocked, and the RDMA route does not switch
 * to TCP quietly: with fallback = none it stays down; with tcp it is on
 * fallback, counted. */
static void t04_dns_failure(void **state)
{
	struct r_gw g;
	struct h_gw *h = &g.rg_h;
	char text[1024];
	const char *t;

	(void)state;
	for (unsigned m = 0; m < 2; m++) {
		uint64_t worst = 0, end;

		conf(text, sizeof(text), "", "nosuchhost.invalid", 2049,
		     m == 0 ? "fallback = none" : "fallback = tcp", true);
		r_start(&g, text, NULL, NULL);
		end = gw_now_ms() + 5000;
		while (gw_now_ms() < end && (gw_path_why(gw_ctx_path(h->gw, 0), NULL, NULL) != GW_WHY_DNS ||
					     gw_path_why(gw_ctx_path(h->gw, 1), NULL, NULL) != GW_WHY_DNS)) {
			uint64_t t0 = gw_now_ms();

			event_base_loop(h->base, EVLOOP_NONBLOCK);
			if (gw_now_ms() - t0 > worst)
				worst = gw_now_ms() - t0;
			usleep(500);
		}
		assert_int_equal(gw_path_why(gw_ctx_path(h->gw, 0), &t, NULL), GW_WHY_DNS);
		assert_non_null(t);
		assert_non_null(strstr(t, "DNS: nosuchhost.invalid: "));
		assert_int_equal(gw_path_why(gw_ctx_path(h->gw, 1), &t, NULL), GW_WHY_DNS);
		assert_non_null(strstr(t, "DNS: nosuchhost.invalid: "));
		assert_true(worst < 200);	/* no lookup on the loop (load: generous) */
		assert_string_equal(gw_path_transport(gw_ctx_path(h->gw, 0)), "rdma");
		assert_int_equal(gw_path_on_fallback(gw_ctx_path(h->gw, 0)), m == 1);
		assert_int_equal(h->st.gs_ctr[GW_CTR_PATH_FALLBACKS], m);
		assert_false(gw_ctx_ready(h->gw, NULL, 0));
		/* retried: still DNS after more intervals, never a silent switch */
		h_pump(h, 400);
		assert_int_equal(gw_path_why(gw_ctx_path(h->gw, 0), NULL, NULL), GW_WHY_DNS);
		r_stop(&g);
	}
}

/* ---- 5-8: the harness's fake as the RDMA transport, brought up by the test ---- */

/* The tiny server s, started, and the gateway of conf() (nfs_extra in the
 * NFS route) on the fake RDMA transport f, not up; the route's path. */
static struct gw_path *r_fake_start(struct h_server *s, struct r_gw *g, struct h_fake *f,
				    const char *nfs_extra)
{
	char text[1024];

	h_server_init(s);
	h_server_start(s);
	conf(text, sizeof(text), "", "127.0.0.1", s->port, nfs_extra, false);
	h_fake_init(f, "rdma");
	f->hf_down = true;	/* not up: the test says when */
	r_start(g, text, &f->hf_ops, f);
	return gw_ctx_path(g->rg_h.gw, 0);
}

/* 5. On fallback, a call goes over TCP and waits for its reply there; RDMA
 * comes up: the next call goes over RDMA, the first still ends over TCP. */
static void t05_back_to_rdma(void **state)
{
	struct h_server s;
	struct r_gw g;
	struct h_gw *h = &g.rg_h;
	struct h_fake f;
	struct gw_path *pa;
	uint8_t buf[256];
	int fd;

	(void)state;
	pa = r_fake_start(&s, &g, &f, "");	/* fallback: tcp by default */
	h_server_set(&s, true, 0);		/* TCP replies held back */
	assert_false(gw_path_on_fallback(pa));
	gw_path_down(f.hf_path, GW_WHY_CONNECT, "RDMA: REJECTED");
	assert_true(gw_path_on_fallback(pa));
	fd = h_client(h);
	h_send(fd, buf, null_call(buf, 1, NFS, 3, 0x11));
	while (h_server_calls(&s) < 1)
		h_pump(h, 10);
	assert_int_equal(f.hf_nsub, 0);
	gw_path_ready(f.hf_path, true);		/* RDMA is back */
	assert_false(gw_path_on_fallback(pa));
	assert_int_equal(gw_path_why(pa, NULL, NULL), GW_WHY_NONE);
	h_send(fd, buf, null_call(buf, 2, NFS, 3, 0x22));
	h_pump(h, 50);
	assert_int_equal(f.hf_nsub, 1);		/* the new call over "RDMA" */
	assert_int_equal(h_server_calls(&s), 1);
	assert_int_equal(gw_path_ncalls(pa), 2);	/* both still count on the route */
	h_fake_reply(&f, 0, 0x22, 1);
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 2000), 28);
	assert_int_equal(chk_be32(buf), 2);
	h_server_set(&s, false, 0);		/* the TCP reply goes now */
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 2000), 28);
	assert_int_equal(chk_be32(buf), 1);
	assert_int_equal(chk_be32(buf + 24), 0x11);
	assert_int_equal(gw_path_ncalls(pa), 0);
	r_end(&g, &s, fd);
}

/* 6. A server restart: RDMA was up and is lost; failed attempts within the
 * grace keep the calls held for RDMA, the first one after it switches. */
static void t06_grace_after_loss(void **state)
{
	struct h_server s;
	struct r_gw g;
	struct h_gw *h = &g.rg_h;
	struct h_fake f;
	struct gw_path *pa;
	uint8_t buf[256];
	uint64_t t0;
	int fd;

	(void)state;
	pa = r_fake_start(&s, &g, &f, "");
	gw_path_ready(f.hf_path, true);
	gw_path_down(f.hf_path, GW_WHY_LOST, "RDMA connection lost: DISCONNECTED");
	gw_path_ready(f.hf_path, false);
	t0 = gw_now_ms();
	assert_int_equal(gw_path_why(pa, NULL, NULL), GW_WHY_LOST);
	gw_path_down(f.hf_path, GW_WHY_CONNECT, "RDMA: REJECTED");
	assert_int_equal(gw_path_why(pa, NULL, NULL), GW_WHY_CONNECT);
	assert_false(gw_path_on_fallback(pa));
	fd = h_client(h);
	h_send(fd, buf, null_call(buf, 3, NFS, 3, 0x33));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 300), -1);	/* held for RDMA */
	assert_int_equal(h_server_calls(&s), 0);
	/* still inside the grace: held */
	gw_path_down(f.hf_path, GW_WHY_CONNECT, "RDMA: REJECTED");
	assert_false(gw_path_on_fallback(pa));
	assert_true(gw_now_ms() - t0 < GW_FALLBACK_GRACE_MS);
	/* the grace over, without waiting it out: the loss moved back in time */
	f.hf_path->pa_down_ms -= GW_FALLBACK_GRACE_MS;
	h_pump(h, 50);
	gw_path_down(f.hf_path, GW_WHY_CONNECT, "RDMA: REJECTED");
	assert_true(gw_path_on_fallback(pa));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 2000), 28);	/* now over TCP */
	assert_int_equal(chk_be32(buf + 24), 0x33);
	assert_int_equal(h_server_calls(&s), 1);
	r_end(&g, &s, fd);
}

/* 7, 7b: server holding replies, the route on its TCP fallback (RDMA
 * rejected) with one call of xid (tag) out, then reloaded to fallback =
 * none; the client's socket. */
static int t07_on_fallback_reload(struct h_server *s, struct r_gw *g, struct h_fake *f,
				  uint8_t buf[256], uint32_t xid, uint32_t tag)
{
	struct h_gw *h = &g->rg_h;
	char text[1024];
	int fd;

	r_fake_start(s, g, f, "fallback = tcp");
	h_server_set(s, true, 0);
	gw_path_down(f->hf_path, GW_WHY_CONNECT, "RDMA: REJECTED");
	fd = h_client(h);
	h_send(fd, buf, null_call(buf, xid, NFS, 3, tag));
	while (h_server_calls(s) < 1)
		h_pump(h, 10);
	conf(text, sizeof(text), "", "127.0.0.1", s->port, "fallback = none", false);
	assert_int_equal(h_gw_reload(h, text), 0);
	return fd;
}

/* 7. Reload while a call is on the TCP fallback of the route it changes. */
static void t07_reload_while_on_fallback(void **state)
{
	struct h_server s;
	struct r_gw g;
	struct h_gw *h = &g.rg_h;
	struct h_fake f;
	uint8_t buf[256];
	int fd;

	(void)state;
	fd = t07_on_fallback_reload(&s, &g, &f, buf, 9, 0x99);
	assert_int_equal(gw_ctx_nretiring(h->gw), 1);	/* its call is still out */
	assert_false(gw_path_on_fallback(gw_ctx_path(h->gw, 0)));
	h_pump(h, 300);		/* the TCP transport runs on the new configuration */
	h_server_set(&s, false, 0);
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 2000), 28);
	assert_int_equal(chk_be32(buf + 24), 0x99);
	h_pump(h, 50);
	assert_int_equal(gw_ctx_nretiring(h->gw), 0);	/* then freed */
	r_end(&g, &s, fd);
}

/* 7b. The same, and the server closes the TCP connection after the reload:
 * the retiring fallback path reconnects on the new configuration (the old
 * one is freed: a sanitizer build sees any use of it), then its call ends
 * with its client and the path is freed. */
static void t07b_reload_then_fallback_conn_lost(void **state)
{
	struct h_server s;
	struct r_gw g;
	struct h_gw *h = &g.rg_h;
	struct h_fake f;
	uint8_t buf[256];
	int fd;

	(void)state;
	fd = t07_on_fallback_reload(&s, &g, &f, buf, 10, 0xaa);
	h_server_stop(&s, true);	/* connection closed, port closed */
	h_pump(h, 400);			/* lost, then failed reconnects */
	assert_int_equal(gw_ctx_nretiring(h->gw), 1);
	close(fd);			/* its client goes: the call ends */
	h_pump(h, 100);
	assert_int_equal(gw_ctx_nretiring(h->gw), 0);
	r_stop(&g);
}

/* 8. Drain on fallback: new calls held, nothing sent; undrain: over TCP. */
static void t08_drain_on_fallback(void **state)
{
	struct h_server s;
	struct r_gw g;
	struct h_gw *h = &g.rg_h;
	struct h_fake f;
	struct gw_path *pa;
	uint8_t buf[256];
	int fd;

	(void)state;
	pa = r_fake_start(&s, &g, &f, "");
	gw_path_down(f.hf_path, GW_WHY_CONNECT, "RDMA: REJECTED");
	while (!gw_path_fallback_up(pa))
		h_pump(h, 10);
	assert_true(gw_path_can_forward(pa));
	gw_path_set_drain(pa, true);
	assert_false(gw_path_can_forward(pa));
	assert_false(gw_ctx_ready(h->gw, NULL, 0));
	fd = h_client(h);
	h_send(fd, buf, null_call(buf, 4, NFS, 3, 0x44));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 300), -1);
	assert_int_equal(h_server_calls(&s), 0);
	assert_int_equal(gw_path_nheld(pa), 1);
	gw_path_set_drain(pa, false);
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 2000), 28);
	assert_int_equal(chk_be32(buf + 24), 0x44);
	assert_int_equal(h_server_calls(&s), 1);
	r_end(&g, &s, fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_fallback_tcp_answers),
		cmocka_unit_test(t02_fallback_none_not_ready),
		cmocka_unit_test(t03_ready_when),
		cmocka_unit_test(t04_dns_failure),
		cmocka_unit_test(t05_back_to_rdma),
		cmocka_unit_test(t06_grace_after_loss),
		cmocka_unit_test(t07_reload_while_on_fallback),
		cmocka_unit_test(t07b_reload_then_fallback_conn_lost),
		cmocka_unit_test(t08_drain_on_fallback),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
