// SPDX-License-Identifier: MIT
/*
 * Host tests of the shares a client host (a source: the address its
 * connections come from) has of a worker's finite tables, at and past
 * their capacity, each playing an attack of issue 52 at small scale on a
 * gateway in process (test_gw_harness.h: frontend, gateway, TCP transport
 * to the tiny server; clients over loopback TCP from 127.0.0.2 and up, or
 * socketpairs, each a source of its own):
 *
 *   1. call objects: one host with three connections gets half of them
 *      (max_calls / (active hosts + 1)), not all; its connections are not
 *      read past that; another host's call goes out at once;
 *   2. call objects held by replies nobody reads: while call objects are
 *      short, the client blocked longest is evicted after evict_timeout
 *      (before, only a short buffer pool evicted: the others starved
 *      until write_timeout);
 *   3. the table of sources itself, past its capacity: a spill source;
 *   4. RPCSEC_GSS calls waiting for a busy XID: at most 32 per host;
 *   5. ... and they end after call_timeout like calls the server never
 *      answered (the client's connection is closed);
 *   6. a client that closes a connection the gateway does not read (at
 *      calls_per_client, its calls waiting) is noticed: its calls end;
 *   7. the XID map: 4,300 answered SETATTRs of one client do not push
 *      another client's REMOVE out of the DRC window: its retransmission
 *      reaches the server under the same gateway XID.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "chunking.h"
#include "gateway.h"
#include "log.h"
#include "test_gw_harness.h"

#define NFS 100003u

struct fx {
	struct h_server s;
	struct h_gw h;
	uint16_t port;		/* the frontend's loopback listener */
};

/* Gateway with a loopback listener, extra lines in [gateway], NFS over
 * TCP to the tiny server (started). */
static void fx_start(struct fx *f, const char *extra)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char text[1024];

	h_server_init(&f->s);
	h_server_start(&f->s);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 256\nmax_record = 64k\n"
		 "secure_port = no\nreconnect_interval = 30ms\n%s\n"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\nversions = 3-4\ntransport = tcp\nport = %u\n",
		 extra, f->s.port);
	h_gw_start(&f->h, text);
	if (fe_listen_addr(f->h.fe, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		abort();
	f->port = fe_listen_port(f->h.fe, 0);
}

static void fx_stop(struct fx *f)
{
	h_pump(&f->h, 50);
	assert_int_equal(h_gw_stop(&f->h), 0);	/* every buffer back */
	h_server_stop(&f->s, true);
}

/* A TCP connection to the listener from host address src ("127.0.0.2"). */
static int tcp_from(struct fx *f, const char *src)
{
	struct sockaddr_in b = { .sin_family = AF_INET };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(f->port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, src, &b.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&b, sizeof(b)) < 0 ||
	    connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0)
		abort();
	h_pump(&f->h, 20);	/* accepted and admitted */
	return fd;
}

/* A socketpair client whose gateway end sends at most about sndbuf bytes
 * before its writes block (a client that does not read fills it soon). */
static int pair_client(struct fx *f, int sndbuf)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 ||
	    setsockopt(sv[1], SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) < 0 ||
	    fe_adopt_fd(f->h.fe, sv[1], "pair") < 0)
		abort();
	return sv[0];
}

/* n NFSv3 calls of procedure proc, XIDs from xid, tags from tag: one write. */
static void send_calls(int fd, uint32_t xid, uint32_t proc, unsigned n, uint32_t tag)
{
	uint8_t *buf = malloc((size_t)n * 64);
	size_t len = 0;

	if (!buf)
		abort();
	for (unsigned i = 0; i < n; i++)
		len += h_call_proc(buf + len, xid + i, 2, NFS, 3, proc, tag + i);
	h_send(fd, buf, len);
	free(buf);
}

/* Record-marked NFSv3 call of procedure proc with an RPCSEC_GSS DATA
 * credential (RFC 2203 5: version 1, DATA, seq_num, service none, a
 * 4-byte handle) and an 8-byte verifier, then the tag word. */
static size_t gss_call(uint8_t *out, uint32_t xid, uint32_t proc, uint32_t tag)
{
	const uint32_t w[] = { xid, RPC_CALL, 2, NFS, 3, proc,
			       RPC_RPCSEC_GSS, 24, 1, 0, xid, RPC_GSS_SVC_NONE, 4, 0xc0ffee,
			       RPC_RPCSEC_GSS, 8, 0x11111111, 0x22222222, tag };
	size_t o = 4;

	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++, o += 4)
		chk_put_be32(out + o, w[i]);
	rm_encode_hdr(out, (uint32_t)(o - 4), true);
	return o;
}

/* n GSS WRITEs (kept in the XID map for drc_window once answered) with
 * XIDs from xid: one write. */
static void send_gss(int fd, uint32_t xid, unsigned n)
{
	uint8_t buf[64 * 80];
	size_t len = 0;

	for (unsigned i = 0; i < n; i++)
		len += gss_call(buf + len, xid + i, 7, 0x900 + i);
	h_send(fd, buf, len);
}

/* The value of a /metrics sample, -1 when absent. */
static double metric(struct fx *f, const char *sample)
{
	char *text = h_render(&f->h.st, f->h.gw);
	double v = h_sample(text, sample);

	free(text);
	return v;
}

/* Replies read from fd within ms (the loop turning), at most max. */
static unsigned read_replies(struct fx *f, int fd, unsigned max, int ms)
{
	uint8_t buf[8192];
	unsigned n = 0;

	while (n < max && h_reply(&f->h, fd, buf, sizeof(buf), ms) > 0)
		n++;
	return n;
}

/* 1. 127.0.0.2 opens three connections of 16 calls each (calls_per_client
 * 16, max_calls 32, the server holding its replies): it gets its share,
 * 16, where it used to get all 32; 127.0.0.3's call then goes out at once
 * (it used to find no call object).  Once the server answers, every call
 * of both is answered and the call objects all come back. */
static void t01_call_share(void **state)
{
	struct fx f;
	int a[3], v;

	(void)state;
	fx_start(&f, "max_calls = 32\ncalls_per_client = 16\n");
	h_server_set(&f.s, true, 0);
	for (unsigned i = 0; i < 3; i++) {
		a[i] = tcp_from(&f, "127.0.0.2");
		send_calls(a[i], 0xa000 + i * 100, 1, 16, 0x100 * i);
	}
	h_pump(&f.h, 300);
	assert_int_equal(h_server_calls(&f.s), 16);	/* the host's share: 32 / (1 + 1) */
	v = tcp_from(&f, "127.0.0.3");
	send_calls(v, 0xb000, 1, 1, 0xbb);
	h_pump(&f.h, 300);
	assert_int_equal(h_server_calls(&f.s), 17);	/* the other host's call went out */
	assert_true(metric(&f, "rpcrdma_gw_flow_control_total{cause=\"source_call_share\"}") >= 1);
	h_server_set(&f.s, false, 0);
	assert_int_equal(read_replies(&f, v, 1, 3000), 1);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(read_replies(&f, a[i], 16, 3000), 16);
	assert_int_equal(h_server_calls(&f.s), 49);
	h_pump(&f.h, 50);
	assert_int_equal(gw_ctx_calls_avail(f.h.gw), 32);
	for (unsigned i = 0; i < 3; i++)
		close(a[i]);
	close(v);
	fx_stop(&f);
}

/* 2. Four clients send 8 calls each and read none of the 4 KiB replies:
 * they hold every call object (max_calls 16: 8, 5 and 3 by the shares,
 * the fourth finds none) while the buffer pool is far from short.  A
 * fifth client's call waits until the one blocked longest is evicted
 * (evict_timeout 200 ms), then it is answered. */
static void t02_evict_calls(void **state)
{
	struct fx f;
	int nr[4], v;

	(void)state;
	fx_start(&f, "max_calls = 16\ncalls_per_client = 8\nevict_timeout = 200ms\n");
	h_server_set_pad(&f.s, 4096);
	for (unsigned i = 0; i < 4; i++) {
		nr[i] = pair_client(&f, 4096);
		send_calls(nr[i], 0xc000 + i * 100, 6, 8, 0x100 * i);	/* READ */
		h_pump(&f.h, 100);
	}
	v = pair_client(&f, 1 << 20);
	send_calls(v, 0xd000, 1, 1, 0xdd);
	assert_int_equal(read_replies(&f, v, 1, 2000), 1);
	assert_true(metric(&f, "rpcrdma_gw_client_errors_total{kind=\"evicted_calls\"}") >= 1);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_CLIENT_EVICTED], 0);	/* not the pool */
	for (unsigned i = 0; i < 4; i++)
		close(nr[i]);
	close(v);
	fx_stop(&f);
}

/* 3. The table of sources at and past its capacity (max_clients + 16:
 * 18 here): 20 connections, the last two on the spill source (counted),
 * every call answered, every source given back. */
static void t03_sources_full(void **state)
{
	uint8_t buf[256];
	struct fx f;
	int c[20];

	(void)state;
	fx_start(&f, "max_clients = 2\n");
	for (unsigned i = 0; i < 20; i++) {
		c[i] = pair_client(&f, 1 << 20);
		h_send(c[i], buf, h_call(buf, 0xe000 + i, 2, NFS, 3, i));
	}
	for (unsigned i = 0; i < 20; i++)
		assert_int_equal(read_replies(&f, c[i], 1, 3000), 1);
	assert_int_equal(metric(&f, "rpcrdma_gw_client_connections_total{event=\"source_spill\"}"), 2);
	for (unsigned i = 0; i < 20; i++)
		close(c[i]);
	h_pump(&f.h, 50);
	assert_int_equal(fe_nconns(f.h.fe), 0);
	c[0] = pair_client(&f, 1 << 20);	/* the slots came back: no spill */
	h_send(c[0], buf, h_call(buf, 0xe100, 2, NFS, 3, 1));
	assert_int_equal(read_replies(&f, c[0], 1, 3000), 1);
	assert_int_equal(metric(&f, "rpcrdma_gw_client_connections_total{event=\"source_spill\"}"), 2);
	close(c[0]);
	fx_stop(&f);
}

/* 4. 127.0.0.2 makes 40 XIDs busy (answered GSS WRITEs, drc_window 60 s)
 * and sends calls on them from two more connections: 32 wait (one host's
 * cap), the rest are not read; another host's calls are answered. */
static void t04_gss_wait_cap(void **state)
{
	uint8_t buf[256];
	struct fx f;
	int a0, a1, a2, v;

	(void)state;
	fx_start(&f, "max_calls = 256\ndrc_window = 60\ncall_timeout = 0\n");
	a0 = tcp_from(&f, "127.0.0.2");
	send_gss(a0, 0x5000, 40);
	assert_int_equal(read_replies(&f, a0, 40, 3000), 40);
	a1 = tcp_from(&f, "127.0.0.2");
	a2 = tcp_from(&f, "127.0.0.2");
	send_gss(a1, 0x5000, 20);
	send_gss(a2, 0x5000 + 20, 20);
	h_pump(&f.h, 300);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_GSS_XID_WAIT], 32);
	assert_true(metric(&f, "rpcrdma_gw_flow_control_total{cause=\"source_gss_waits\"}") >= 1);
	v = tcp_from(&f, "127.0.0.3");
	h_send(v, buf, h_call(buf, 0x7001, 2, NFS, 3, 0x71));
	h_send(v, buf, gss_call(buf, 0x6000, 7, 0x72));		/* a free GSS XID */
	assert_int_equal(read_replies(&f, v, 2, 2000), 2);
	close(a0);
	close(a1);
	close(a2);
	close(v);
	fx_stop(&f);
}

/* 5. A GSS call waiting for its XID ends after call_timeout (400 ms here)
 * like a call the server never answered: its connection is closed. */
static void t05_gss_wait_timeout(void **state)
{
	uint8_t buf[256];
	struct fx f;
	int a0, a1;

	(void)state;
	fx_start(&f, "drc_window = 60\ncall_timeout = 400ms\n");
	a0 = tcp_from(&f, "127.0.0.2");
	send_gss(a0, 0x5100, 1);
	assert_int_equal(read_replies(&f, a0, 1, 3000), 1);
	a1 = tcp_from(&f, "127.0.0.2");
	send_gss(a1, 0x5100, 1);
	h_pump(&f.h, 100);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_GSS_XID_WAIT], 1);
	assert_int_equal(h_reply(&f.h, a1, buf, sizeof(buf), 1500), 0);	/* closed */
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_CALL_TIMEOUTS], 1);
	assert_int_equal(h_server_calls(&f.s), 1);
	close(a0);
	close(a1);
	fx_stop(&f);
}

/* 6. A client at calls_per_client (4) whose four GSS calls wait, four
 * more unread behind them, closes its connection: the gateway, which
 * does not read it, still sees the end within a second, and the waiting
 * calls end with it. */
static void t06_closed_while_unread(void **state)
{
	struct fx f;
	int a0, a1;

	(void)state;
	fx_start(&f, "calls_per_client = 4\ndrc_window = 60\ncall_timeout = 0\n");
	a0 = pair_client(&f, 1 << 20);
	send_gss(a0, 0x5200, 4);
	assert_int_equal(read_replies(&f, a0, 4, 3000), 4);
	a1 = pair_client(&f, 1 << 20);
	send_gss(a1, 0x5200, 4);
	send_gss(a1, 0x5200, 4);	/* retransmissions: unread behind the cap */
	h_pump(&f.h, 200);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_GSS_XID_WAIT], 4);
	assert_int_equal(fe_nconns(f.h.fe), 2);
	close(a1);
	h_pump(&f.h, 1000);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_CALLS_CANCELLED], 4);
	assert_int_equal(fe_nconns(f.h.fe), 1);
	assert_true(metric(&f, "rpcrdma_gw_client_connections_total{event=\"gone_unread\"}") >= 1);
	close(a0);
	fx_stop(&f);
}

/* 7. Client B's REMOVE is answered; client A then sends 4,300 answered
 * SETATTRs, more than the XID map holds (max_calls 64: 64 + 4,096
 * entries).  B's retransmission of the REMOVE still finds its mapping
 * and reaches the server under the same gateway XID (the server's DRC
 * answers it instead of removing twice); A lost its own oldest. */
static void t07_xmap_share(void **state)
{
	uint8_t buf[256], last[64];
	struct fx f;
	uint32_t gxid;
	int a, b;

	(void)state;
	fx_start(&f, "max_calls = 64\ndrc_window = 120\n");
	a = pair_client(&f, 1 << 20);
	b = pair_client(&f, 1 << 20);
	h_send(b, buf, h_call_proc(buf, 0xbeef, 2, NFS, 3, 12, 0xb1));	/* REMOVE */
	assert_int_equal(h_reply(&f.h, b, buf, sizeof(buf), 3000), 28);
	gxid = h_server_xid(&f.s, 0);
	for (unsigned k = 0; k < 4300; k += 50) {		/* SETATTR */
		send_calls(a, 0x10000 + k, 2, 50, k);
		assert_int_equal(read_replies(&f, a, 50, 3000), 50);
	}
	h_send(b, buf, h_call_proc(buf, 0xbeef, 2, NFS, 3, 12, 0xb1));	/* retransmitted */
	assert_int_equal(h_reply(&f.h, b, buf, sizeof(buf), 3000), 28);
	h_server_last(&f.s, last, sizeof(last));
	assert_int_equal(chk_be32(last), gxid);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_RETRANS_RESENT], 1);
	assert_int_equal(f.h.st.gs_ctr[GW_CTR_XMAP_EVICTED], 4301 - 4160);
	assert_true(metric(&f, "rpcrdma_gw_xid_map_share_evictions_total{whose=\"own\"}") == 4301 - 4160);
	close(a);
	close(b);
	fx_stop(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_call_share),
		cmocka_unit_test(t02_evict_calls),
		cmocka_unit_test(t03_sources_full),
		cmocka_unit_test(t04_gss_wait_cap),
		cmocka_unit_test(t05_gss_wait_timeout),
		cmocka_unit_test(t06_closed_while_unread),
		cmocka_unit_test(t07_xmap_share),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
