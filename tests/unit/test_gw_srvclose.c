// SPDX-License-Identifier: MIT
/*
 * This file contains host tests of what a server's close of an RDMA
 * connection costs the clients behind the gateway (issue: one client's bad
 * Kerberos call took the shared connection down for everyone).  The real
 * gateway, frontend, RDMA transport and backend run on a libevent loop
 * over the fake verbs device (tests/unit/fake/): the test is the server,
 * it sees each Send, answers, and closes the connection (DISCONNECTED)
 * the way nfsd does when it drops an RPCSEC_GSS call (svcauth_gss.c:
 * sequence number outside its window or seen before -> SVC_CLOSE).
 * Clients are real TCP connections to a loopback listener, each from an
 * address of its own (127.0.0.1, .2, .3).
 *
 *   1. The server closes the connection while A and B (AUTH_NONE) and O
 *      (RPCSEC_GSS) have a call each on it: O's TCP connection is closed
 *      (its client sends the call again under a new sequence number), O's
 *      call is not sent again, A's and B's are re-sent under their gateway
 *      XIDs on the next connection and answered; nothing is dropped, the
 *      path never stops being ready, the shared connection is lost once;
 *      counted (server_closed_for_client_total) and O's host quarantined.
 *   2. O comes back and sends another GSS call: it goes on a connection of
 *      its own; the server closes that one: O is closed again, A's call on
 *      the shared connection is answered, the shared loss count stays 1
 *      (the isolated loss is counted apart).
 * Each metric is read from /metrics, as an operator would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "fake/be_fake.h"
#include "gateway.h"
#include "log.h"
#include "test_gw_harness.h"
#include "transport.h"

#define NFS 100003u
#define OXID 0x0bad0001u	/* O's GSS calls keep their XID to the server */

struct sc {
	struct h_gw h;
	struct gw_rdma *rdma;
	struct sockaddr_in ls;	/* the gateway's listener */
};

static int sc_resolve(void *arg, const char *host, const char *port, struct sockaddr_storage *addr,
		      socklen_t *addrlen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)addr;

	(void)arg;
	(void)host;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)atoi(port));
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*addrlen = sizeof(*sin);
	return 0;
}

static void sc_start(struct sc *s)
{
	const char *text =
		"[gateway]\nbuffer_size = 16k\nbuffers = 128\nmax_record = 64k\nmax_calls = 64\n"
		"bytes_per_client = 1m\nreconnect_interval = 20ms\nsecure_port = no\n"
		"[backend srv]\naddress = nfs.example\nrdma_port = 20049\nconnections = 1\n"
		"[route nfs]\nprogram = nfs\nversions = 3\ntransport = rdma\nfallback = none\n";
	struct rpcrdma_pd pd = { .pd_send_size = 4096, .pd_recv_size = 4096 };
	struct h_gw *h = &s->h;
	socklen_t len = sizeof(s->ls);

	memset(s, 0, sizeof(*s));
	memset(&fdev, 0, sizeof(fdev));
	rpcrdma_pd_encode(&pd, fdev.peer_pd);
	be_verbs_set(&fake_verbs);
	h_gw_init(h, text, &gw_transport_rdma, NULL);
	/* h_gw_init made the context with no transport argument: again with one */
	gw_ctx_free(h->gw);
	s->rdma = gw_rdma_new(h->base, h->pool, &h->log, &h->st);
	assert_non_null(s->rdma);
	gw_rdma_set_resolver(s->rdma, sc_resolve, NULL);
	{
		struct gw_ctx_params gp = { .gp_base = h->base, .gp_cfg = h->cf, .gp_log = &h->log,
					    .gp_stats = &h->st, .gp_pool = h->pool,
					    .gp_ncalls = h->cf->cf_max_calls,
					    .gp_rdma_ops = &gw_transport_rdma, .gp_rdma_arg = s->rdma };
		struct fe_params fp;

		h->gw = gw_ctx_new(&gp);
		assert_non_null(h->gw);
		fp = (struct fe_params){ .fp_base = h->base, .fp_cfg = h->cf, .fp_gw = h->gw,
					 .fp_pool = h->pool, .fp_log = &h->log, .fp_stats = &h->st };
		h->fe = fe_new(&fp);
		assert_non_null(h->fe);
	}
	assert_int_equal(gw_ctx_start(h->gw), 0);
	s->ls = (struct sockaddr_in){ .sin_family = AF_INET,
				      .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_true(fe_listen_addr(h->fe, (struct sockaddr *)&s->ls, len) >= 0);
	s->ls.sin_port = htons(fe_listen_port(h->fe, 0));
	for (unsigned i = 0; i < 400 && !gw_path_up(gw_ctx_path(h->gw, 0)); i++)
		h_pump(h, 5);
	assert_true(gw_path_up(gw_ctx_path(h->gw, 0)));
}

static void sc_stop(struct sc *s)
{
	struct h_gw *h = &s->h;

	h_pump(h, 20);
	fe_free(h->fe);
	gw_ctx_free(h->gw);
	gw_rdma_free(s->rdma);
	assert_int_equal(gw_pool_count(h->pool) - gw_pool_avail(h->pool), 0);
	gw_pool_free(h->pool);
	event_base_free(h->base);
	cfg_free(h->cf);
	for (unsigned i = 0; i < fdev.nconns; i++)
		free(fdev.conns[i]);
	fdev.nconns = 0;
	be_verbs_set(NULL);
}

/* A TCP client of the gateway from address src (127.0.0.x). */
static int sc_connect(struct sc *s, const char *src)
{
	struct sockaddr_in b = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	assert_int_equal(inet_pton(AF_INET, src, &b.sin_addr), 1);
	assert_int_equal(bind(fd, (struct sockaddr *)&b, sizeof(b)), 0);
	connect(fd, (struct sockaddr *)&s->ls, sizeof(s->ls));	/* EINPROGRESS */
	h_pump(&s->h, 30);
	fcntl(fd, F_SETFL, 0);
	return fd;
}

/* Record-marked NFSv3 NULL with an RPCSEC_GSS DATA credential (RFC 2203
 * 5: version 1, DATA, seq, service none, a 4-byte handle) and a verifier
 * the gateway cannot check (it has no key). */
static size_t gss_null(uint8_t *out, uint32_t xid, uint32_t seq)
{
	const uint32_t w[] = { xid, RPC_CALL, 2, NFS, 3, 0,
			       RPC_RPCSEC_GSS, 24, 1, 0, seq, RPC_GSS_SVC_NONE, 4, 0xc0ffee,
			       RPC_RPCSEC_GSS, 8, 0x11111111, 0x22222222 };
	size_t o = 4;

	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++, o += 4)
		chk_put_be32(out + o, w[i]);
	rm_encode_hdr(out, (uint32_t)(o - 4), true);
	return o;
}

/* The XID of the n-th call Send posted on fc (0 when there is none). */
static uint32_t send_xid(struct fconn *fc, unsigned n)
{
	for (unsigned i = 0, k = 0; i < fc->nsends; i++)
		if (fc->sends[i].op == IBV_WR_SEND && k++ == n)
			return fc->sends[i].xid;
	return 0;
}

static unsigned nsends(struct fconn *fc)
{
	return nsends_op(fc, IBV_WR_SEND);
}

/* Pump until fc has n call Sends (2 s at most). */
static void wait_sends(struct sc *s, struct fconn *fc, unsigned n)
{
	for (unsigned i = 0; i < 400 && nsends(fc) < n; i++)
		h_pump(&s->h, 5);
	assert_int_equal(nsends(fc), n);
}

/* Pump until the gateway made n RDMA connections in all and they are up. */
static void wait_conns_up(struct sc *s, unsigned n)
{
	for (unsigned i = 0; i < 400 && fdev.nconns < n; i++)
		h_pump(&s->h, 5);
	assert_int_equal(fdev.nconns, n);
	h_pump(&s->h, 20);
}

/* The connection (after the first) xid was posted on, once it is (2 s). */
static struct fconn *conn_of(struct sc *s, uint32_t xid)
{
	for (unsigned k = 0; k < 400; k++, h_pump(&s->h, 5))
		for (unsigned i = 1; i < fdev.nconns; i++)
			if (send_of(fdev.conns[i], xid) >= 0)
				return fdev.conns[i];
	fail_msg("xid %#x never posted", xid);
	return NULL;
}

/* The server answers xid on fc (a NULL reply: void results). */
static void answer(struct fconn *fc, uint32_t xid)
{
	complete_send(fc, xid, IBV_WC_SUCCESS);
	deliver_reply(fc, xid, 8, 0, NULL, 0);
}

static double metric(struct sc *s, const char *prefix)
{
	char *text = h_render(&s->h.st, s->h.gw);
	double v = h_sample(text, prefix);

	free(text);
	return v;
}

/* Pump until fd's connection is closed by the gateway: true if it was. */
static bool closed_soon(struct sc *s, int fd, int ms)
{
	uint8_t buf[64];

	return h_reply(&s->h, fd, buf, sizeof(buf), ms) == 0;
}

/* A NULL reply to xid on fd (24 bytes: xid, REPLY, accepted, AUTH_NONE, SUCCESS). */
static void expect_reply(struct sc *s, int fd, uint32_t xid)
{
	uint8_t buf[64];

	assert_int_equal(h_reply(&s->h, fd, buf, sizeof(buf), 3000), 24);
	assert_int_equal(chk_be32(buf), xid);
	assert_int_equal(chk_be32(buf + 20), RPC_SUCCESS);
}

/* 1. Only the client of the GSS call is closed; the others complete. */
static void t01_close_lands_on_its_client(void **state)
{
	struct sc s;
	struct fconn *fc0, *fc1;
	uint8_t buf[128];
	uint32_t gx[2];
	int a, b, o;

	(void)state;
	sc_start(&s);
	fc0 = fdev.conns[0];
	a = sc_connect(&s, "127.0.0.1");
	b = sc_connect(&s, "127.0.0.2");
	o = sc_connect(&s, "127.0.0.3");
	/* A first call answered: the server's grant (8) lets three be out. */
	h_send(a, buf, h_call_proc(buf, 0xa0, 2, NFS, 3, 0, 0));
	wait_sends(&s, fc0, 1);
	answer(fc0, send_xid(fc0, 0));
	expect_reply(&s, a, 0xa0);
	h_send(a, buf, h_call_proc(buf, 0xa1, 2, NFS, 3, 0, 1));
	wait_sends(&s, fc0, 2);
	h_send(o, buf, gss_null(buf, OXID, 300));
	wait_sends(&s, fc0, 3);
	h_send(b, buf, h_call_proc(buf, 0xb1, 2, NFS, 3, 0, 2));
	wait_sends(&s, fc0, 4);
	gx[0] = send_xid(fc0, 1);
	gx[1] = send_xid(fc0, 3);
	assert_int_equal(send_xid(fc0, 2), OXID);

	/* nfsd drops O's call (its sequence number is outside the window) and
	 * closes the connection: A's and B's calls have no reply either. */
	queue_cm(fc0, RDMA_CM_EVENT_DISCONNECTED);
	assert_true(closed_soon(&s, o, 3000));
	assert_true(gw_path_up(gw_ctx_path(s.h.gw, 0)));
	/* A's call first on the next connection (its grant is 1 until a reply). */
	fc1 = conn_of(&s, gx[0]);
	assert_int_equal(send_xid(fc1, 0), gx[0]);	/* same gateway XIDs, same order */
	answer(fc1, gx[0]);
	expect_reply(&s, a, 0xa1);
	wait_sends(&s, fc1, 2);
	assert_int_equal(send_xid(fc1, 1), gx[1]);
	answer(fc1, gx[1]);
	expect_reply(&s, b, 0xb1);
	for (unsigned i = 1; i < fdev.nconns; i++)
		assert_int_equal(send_of(fdev.conns[i], OXID), -1);	/* never sent again */

	/* The path stayed ready; nothing dropped; counted once each. */
	assert_true(gw_path_up(gw_ctx_path(s.h.gw, 0)));
	assert_int_equal(gw_path_why(gw_ctx_path(s.h.gw, 0), NULL, NULL), GW_WHY_NONE);
	assert_int_equal(s.h.st.gs_ctr[GW_CTR_CALLS_FAILED], 0);
	assert_int_equal(metric(&s, "rpcrdma_gw_rdma_disconnects_total{backend=\"srv\"}"), 1);
	assert_int_equal(metric(&s, "rpcrdma_gw_server_closed_for_client_total"), 1);
	assert_int_equal(metric(&s, "rpcrdma_gw_rdma_server_closes_total{backend=\"srv\","
				"calls=\"handed_back\"}"), 1);
	assert_int_equal(metric(&s, "rpcrdma_gw_gss_quarantine_total{event=\"entered\"}"), 1);
	close(a);
	close(b);
	close(o);
	sc_stop(&s);
}

/* 2. The same host again: its GSS calls go on a connection of their own,
 * whose close touches nobody else. */
static void t02_repeat_stays_on_its_own(void **state)
{
	struct sc s;
	struct fconn *fc0, *fc1, *fq;
	uint8_t buf[128];
	uint32_t gx;
	int a, o;

	(void)state;
	sc_start(&s);
	fc0 = fdev.conns[0];
	a = sc_connect(&s, "127.0.0.1");
	o = sc_connect(&s, "127.0.0.3");
	h_send(o, buf, gss_null(buf, OXID, 300));
	wait_sends(&s, fc0, 1);
	queue_cm(fc0, RDMA_CM_EVENT_DISCONNECTED);
	assert_true(closed_soon(&s, o, 3000));
	wait_conns_up(&s, 3);		/* the shared one again, O's host's own */

	o = sc_connect(&s, "127.0.0.3");		/* O reconnects and does it again */
	h_send(o, buf, gss_null(buf, OXID + 1, 1));
	fq = conn_of(&s, OXID + 1);
	h_send(a, buf, h_call_proc(buf, 0xa2, 2, NFS, 3, 0, 3));
	h_pump(&s.h, 50);
	fc1 = fdev.conns[1] == fq ? fdev.conns[2] : fdev.conns[1];
	wait_sends(&s, fc1, 1);
	gx = send_xid(fc1, 0);
	assert_int_equal(send_of(fc1, OXID + 1), -1);
	queue_cm(fq, RDMA_CM_EVENT_DISCONNECTED);
	assert_true(closed_soon(&s, o, 3000));
	answer(fc1, gx);
	expect_reply(&s, a, 0xa2);
	assert_true(gw_path_up(gw_ctx_path(s.h.gw, 0)));
	assert_int_equal(metric(&s, "rpcrdma_gw_rdma_disconnects_total{backend=\"srv\"}"), 1);
	assert_int_equal(metric(&s, "rpcrdma_gw_rdma_isolated_disconnects_total{backend=\"srv\"}"), 1);
	assert_int_equal(metric(&s, "rpcrdma_gw_server_closed_for_client_total"), 2);
	assert_int_equal(metric(&s, "rpcrdma_gw_gss_quarantine_total{event=\"calls\"}"), 1);
	close(a);
	close(o);
	sc_stop(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_close_lands_on_its_client),
		cmocka_unit_test(t02_repeat_stays_on_its_own),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
