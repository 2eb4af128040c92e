// SPDX-License-Identifier: MIT
/* Host tests of the NFSv4.0 callback relay (gateway/cb40.c) in the
 * in-process gateway (test_gw_harness.h): a client's SETCLIENTID reaches
 * the server with cb_location = the gateway's listener and a program of
 * the gateway's; the test, as the server, connects there and sends CB_NULL
 * and CB_COMPOUND calls; the test, as the client's callback service at the
 * original address, gets them with its own program and the server's XID,
 * and its reply reaches the server.  Also: a program nobody registered
 * (PROG_UNAVAIL), a client that closes with a callback pending
 * (SYSTEM_ERR), v40_callbacks = off (cleared) and passthrough (unchanged);
 * a client over TCP whose cb_location names another host (relayed to its
 * own address) or no service at all (cleared). */
#include <setjmp.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "cb40_int.h"
#include "chunking.h"
#include "ctx.h"
#include "log.h"
#include "test_gw_harness.h"

#define CB_PROG	0x40000000u

static void put_str(uint8_t *b, size_t *n, const char *s)
{
	size_t l = strlen(s);

	chk_put_be32(b + *n, (uint32_t)l);
	memset(b + *n + 4, 0, (l + 3) & ~(size_t)3);
	memcpy(b + *n + 4, s, l);
	*n += 4 + ((l + 3) & ~(size_t)3);
}

/* Record-marked COMPOUND { SETCLIENTID } of minor version 0 from the
 * client named id. */
static size_t setclientid_of(uint8_t *b, uint32_t xid, const char *id, const char *uaddr)
{
	const uint32_t hdr[] = { xid, 0, 2, 100003, 4, 1, 0, 0, 0, 0 };
	size_t n = 4;

	for (unsigned i = 0; i < 10; i++, n += 4)
		chk_put_be32(b + n, hdr[i]);
	put_str(b, &n, "");
	chk_put_be32(b + n, 0), chk_put_be32(b + n + 4, 1), chk_put_be32(b + n + 8, 35);
	chk_put_be32(b + n + 12, 1), chk_put_be32(b + n + 16, 2);	/* verifier */
	n += 20;
	put_str(b, &n, id);
	chk_put_be32(b + n, CB_PROG);
	n += 4;
	put_str(b, &n, "tcp");
	put_str(b, &n, uaddr);
	chk_put_be32(b + n, 9);		/* callback_ident */
	n += 4;
	rm_encode_hdr(b, (uint32_t)(n - 4), true);
	return n;
}

static size_t setclientid(uint8_t *b, const char *uaddr)
{
	return setclientid_of(b, 0x5c1, "Linux NFSv4.0 test-client", uaddr);
}

/* Record-marked RPC call header (AUTH_NONE) of proc, one word of args. */
static size_t cb_call(uint8_t *b, uint32_t xid, uint32_t prog, uint32_t proc)
{
	const uint32_t w[] = { xid, 0, 2, prog, 1, proc, 0, 0, 0, 0, 0 };

	for (unsigned i = 0; i < 11; i++)
		chk_put_be32(b + 4 + 4 * i, w[i]);
	rm_encode_hdr(b, 44, true);
	return 48;
}

static int tcp_listener_at(uint32_t addr, uint16_t *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(addr) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &l) < 0)
		abort();
	*port = ntohs(a.sin_port);
	return fd;
}

static int tcp_listener(uint16_t *port)
{
	return tcp_listener_at(INADDR_LOOPBACK, port);
}

/* Pump the loop until fd is readable (accept or read); false on timeout. */
static bool wait_fd(struct h_gw *h, int fd, int ms)
{
	uint64_t end = gw_now_ms() + (uint64_t)ms;

	while (gw_now_ms() < end) {
		struct pollfd p = { fd, POLLIN, 0 };

		event_base_loop(h->base, EVLOOP_NONBLOCK);
		if (poll(&p, 1, 1) > 0)
			return true;
	}
	return false;
}

struct rig {
	struct h_server srv;
	struct h_gw gw;
	int cl;			/* the client's connection to the gateway */
	uint8_t seen[512];	/* SETCLIENTID as the server got it */
	struct gw_cb40_sci sci;
};

/* A client connected over TCP from src (a loopback address) to a
 * listener of h's on 127.0.0.1. */
static int tcp_client_from(struct h_gw *h, uint32_t src)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in b = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(src) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&b, sizeof(b)) < 0)
		abort();
	if (!fe_listen_port(h->fe, 0) && fe_listen_addr(h->fe, (struct sockaddr *)&a, sizeof(a)) < 0)
		abort();
	a.sin_port = htons(fe_listen_port(h->fe, 0));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		abort();
	h_pump(h, 20);		/* accepted */
	return fd;
}

static int tcp_client(struct h_gw *h)
{
	return tcp_client_from(h, INADDR_LOOPBACK);
}

/* The gateway with v40_callbacks = mode; the client's SETCLIENTID naming
 * universal address ua sent and answered; the client over TCP from
 * 127.0.0.1 (tcp) or a socket pair (no address). */
static void rig_up_at(struct rig *r, const char *mode, const char *ua, bool tcp)
{
	char text[1024];
	uint8_t b[512];
	struct iovec v;

	h_server_init(&r->srv);
	h_server_start(&r->srv);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "secure_port = no\nv40_callbacks = %s\n[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\nversions = 3-4\ntransport = tcp\nport = %u\n",
		 mode, r->srv.port);
	h_gw_start(&r->gw, text);
	h_pump(&r->gw, 50);
	r->cl = tcp ? tcp_client(&r->gw) : h_client(&r->gw);
	h_send(r->cl, b, setclientid(b, ua));
	assert_int_equal(h_reply(&r->gw, r->cl, b, sizeof(b), 3000), 28);
	v = (struct iovec){ r->seen, h_server_last(&r->srv, r->seen, sizeof(r->seen)) };
	assert_true(gw_cb40_parse_setclientid(&v, 1, &r->sci));
	assert_int_equal(r->sci.sc4_ident, 9);
}

/* The gateway with v40_callbacks = mode; the client's SETCLIENTID naming
 * 127.0.0.1:cbport sent and answered. */
static void rig_up(struct rig *r, const char *mode, uint16_t cbport)
{
	char ua[GW_CB40_UADDR_MAX];

	snprintf(ua, sizeof(ua), "127.0.0.1.%u.%u", cbport >> 8, cbport & 0xff);
	rig_up_at(r, mode, ua, false);
}

static void rig_down(struct rig *r)
{
	close(r->cl);
	h_pump(&r->gw, 20);
	assert_int_equal(h_gw_stop(&r->gw), 0);
	h_server_stop(&r->srv, true);
}

/* 1. relay: rewritten; CB_NULL and CB_COMPOUND go to the client's service
 * with its program and the server's XID; the replies come back. */
static void t01_relay(void **state)
{
	struct sockaddr_storage ss;
	uint8_t b[256];
	uint16_t cbport;
	int lfd = tcp_listener(&cbport), sfd, cfd = -1;
	struct rig r;
	socklen_t sl;

	(void)state;
	rig_up(&r, "relay", cbport);
	assert_string_equal(r.sci.sc4_netid, "tcp");
	assert_true((r.sci.sc4_prog & 0xff000000u) == 0x48000000u);
	assert_true(gw_cb40_uaddr_parse("tcp", r.sci.sc4_addr, &ss, &sl));
	assert_int_not_equal(((struct sockaddr_in *)&ss)->sin_port, htons(cbport));
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_REWRITTEN], 1);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_READDRESSED], 0);
	/* the server connects to the address it was given */
	sfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(sfd, (struct sockaddr *)&ss, sl), 0);
	for (uint32_t proc = 0; proc <= 1; proc++) {
		uint32_t xid = 0x7700 + proc;

		h_send(sfd, b, cb_call(b, xid, r.sci.sc4_prog, proc));
		if (proc == 0) {
			assert_true(wait_fd(&r.gw, lfd, 3000));
			cfd = accept(lfd, NULL, NULL);
			assert_true(cfd >= 0);
		}
		assert_true(wait_fd(&r.gw, cfd, 3000));
		assert_true(h_read_full(cfd, b, 48, &r.srv));
		assert_int_equal(chk_be32(b), RM_LAST_FRAG | 44);
		assert_int_equal(chk_be32(b + 4), xid);		/* the server's XID */
		assert_int_equal(chk_be32(b + 16), CB_PROG);	/* the client's program */
		assert_int_equal(chk_be32(b + 24), proc);
		/* the client's reply, in two fragments */
		chk_put_be32(b, 8), chk_put_be32(b + 4, xid), chk_put_be32(b + 8, 1);
		chk_put_be32(b + 12, RM_LAST_FRAG | 16);
		memset(b + 16, 0, 16);
		h_send(cfd, b, 32);
		assert_int_equal(h_reply(&r.gw, sfd, b, sizeof(b), 3000), 24);
		assert_int_equal(chk_be32(b), xid);
		assert_int_equal(chk_be32(b + 4), 1);		/* REPLY */
		assert_int_equal(chk_be32(b + 20), 0);		/* SUCCESS */
	}
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_RELAYED], 2);
	/* 1.2 a program nobody registered: PROG_UNAVAIL, nothing relayed */
	h_send(sfd, b, cb_call(b, 0x7710, CB_PROG, 1));
	assert_int_equal(h_reply(&r.gw, sfd, b, sizeof(b), 3000), 24);
	assert_int_equal(chk_be32(b), 0x7710);
	assert_int_equal(chk_be32(b + 20), 1);			/* PROG_UNAVAIL */
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_FAIL_NO_CLIENT], 1);
	/* 1.3 the client closes with a callback pending: SYSTEM_ERR at once */
	h_send(sfd, b, cb_call(b, 0x7720, r.sci.sc4_prog, 1));
	assert_true(wait_fd(&r.gw, cfd, 3000));
	close(cfd);
	assert_int_equal(h_reply(&r.gw, sfd, b, sizeof(b), 3000), 24);
	assert_int_equal(chk_be32(b), 0x7720);
	assert_int_equal(chk_be32(b + 20), 5);			/* SYSTEM_ERR */
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_FAIL_CONNECT], 1);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_RELAYED], 2);
	close(sfd);
	close(lfd);
	rig_down(&r);
}

/* 2. off: cb_location cleared, program kept; passthrough: as sent. */
static void t02_off_passthrough(void **state)
{
	uint8_t b[512];
	struct rig r;
	size_t n;

	(void)state;
	rig_up(&r, "off", 0x1234);
	assert_string_equal(r.sci.sc4_netid, "");
	assert_string_equal(r.sci.sc4_addr, "");
	assert_int_equal(r.sci.sc4_prog, CB_PROG);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_CLEARED], 1);
	rig_down(&r);

	rig_up(&r, "passthrough", 0x1234);
	n = setclientid(b, "127.0.0.1.18.52");
	assert_string_equal(r.sci.sc4_addr, "127.0.0.1.18.52");
	assert_int_equal(r.sci.sc4_prog, CB_PROG);
	/* byte for byte after the XID the gateway remaps */
	assert_memory_equal(r.seen + 4, b + 8, n - 8);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_REWRITTEN] + r.gw.st.gs_ctr[GW_CTR_CB40_CLEARED],
			 0);
	rig_down(&r);
}

/* 3. A client over TCP from 127.0.0.1 names 127.0.0.2 (another host, to
 * the gateway): its callbacks go to its own address at the port it named,
 * never to the host it named (a client must not aim the gateway at other
 * hosts).  Fails when the gateway connects where the client said: nothing
 * listens on 127.0.0.2. */
static void t03_other_host(void **state)
{
	struct sockaddr_storage ss;
	char ua[GW_CB40_UADDR_MAX];
	uint8_t b[256];
	uint16_t cbport;
	int lfd = tcp_listener(&cbport), sfd, cfd;
	struct rig r;
	socklen_t sl;

	(void)state;
	snprintf(ua, sizeof(ua), "127.0.0.2.%u.%u", cbport >> 8, cbport & 0xff);
	rig_up_at(&r, "relay", ua, true);
	assert_true((r.sci.sc4_prog & 0xff000000u) == 0x48000000u);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_REWRITTEN], 1);
	assert_true(gw_cb40_uaddr_parse("tcp", r.sci.sc4_addr, &ss, &sl));
	sfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(sfd, (struct sockaddr *)&ss, sl), 0);
	h_send(sfd, b, cb_call(b, 0x7730, r.sci.sc4_prog, 0));
	assert_true(wait_fd(&r.gw, lfd, 3000));
	cfd = accept(lfd, NULL, NULL);
	assert_true(cfd >= 0);
	assert_true(wait_fd(&r.gw, cfd, 3000));
	assert_true(h_read_full(cfd, b, 48, &r.srv));
	assert_int_equal(chk_be32(b + 4), 0x7730);
	assert_int_equal(chk_be32(b + 16), CB_PROG);
	chk_put_be32(b, RM_LAST_FRAG | 24), chk_put_be32(b + 4, 0x7730), chk_put_be32(b + 8, 1);
	memset(b + 12, 0, 16);
	h_send(cfd, b, 28);
	assert_int_equal(h_reply(&r.gw, sfd, b, sizeof(b), 3000), 24);
	assert_int_equal(chk_be32(b + 20), 0);			/* SUCCESS */
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_READDRESSED], 1);
	close(cfd);
	close(sfd);
	close(lfd);
	rig_down(&r);
}

/* 4. A cb_location of no service (the unspecified address, port 0: what
 * a client that wants no callbacks sends) is cleared, as with off: nfsd
 * marks the path down at once instead of waiting on the relay. */
static void t04_no_service(void **state)
{
	struct rig r;

	(void)state;
	rig_up_at(&r, "relay", "0.0.0.0.0.0", true);
	assert_string_equal(r.sci.sc4_netid, "");
	assert_string_equal(r.sci.sc4_addr, "");
	assert_int_equal(r.sci.sc4_prog, CB_PROG);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_CLEARED], 1);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_REWRITTEN], 0);
	rig_down(&r);
}

static void ua_of(char *ua, uint32_t addr, uint16_t port)
{
	snprintf(ua, GW_CB40_UADDR_MAX, "%u.%u.%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff,
		 (addr >> 8) & 0xff, addr & 0xff, port >> 8, port & 0xff);
}

/* n SETCLIENTIDs, one on each fds[i] naming client id "PREFIX-i-tag"
 * and the callback service at its own source srcs[i]:port, all sent,
 * then each answered. */
static void register_batch(struct rig *r, const int *fds, const uint32_t *srcs, unsigned n,
			   const char *prefix, unsigned tag, uint16_t port)
{
	char ua[GW_CB40_UADDR_MAX], id[64];
	uint8_t b[512];

	for (unsigned k = 0; k < n; k++) {
		snprintf(id, sizeof(id), "%s-%u-%u", prefix, k, tag);
		ua_of(ua, srcs[k], port);
		h_send(fds[k], b, setclientid_of(b, 0x10000 + tag * 256 + k, id, ua));
	}
	for (unsigned k = 0; k < n; k++)
		assert_int_equal(h_reply(&r->gw, fds[k], b, sizeof(b), 5000), 28);
}

/* Live registrations of the address src (host order; 0: none). */
static unsigned regs_of(const struct rig *r, uint32_t src)
{
	const struct gw_cb40 *c4 = r->gw.gw->gw_cb40;
	uint8_t a[16] = { [10] = 0xff, [11] = 0xff };
	unsigned n = 0;

	chk_put_be32(a + 12, src);
	if (!src)
		memset(a, 0, sizeof(a));
	for (unsigned i = 0; i < GW_CB40_REGS; i++)
		n += c4->c4_reg[i].r4_used && !memcmp(c4->c4_reg[i].r4_src, a, 16);
	return n;
}

/* The server's CB_NULL on program prog, from a new connection to the
 * relay's listener: it reaches the callback service listening on lfd. */
static void cb_null_reaches(struct rig *r, uint32_t prog, int lfd, uint32_t xid)
{
	struct sockaddr_storage ss;
	uint8_t b[256];
	socklen_t sl;
	int sfd, cfd;

	assert_true(gw_cb40_uaddr_parse("tcp", r->sci.sc4_addr, &ss, &sl));
	sfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(sfd, (struct sockaddr *)&ss, sl), 0);
	h_send(sfd, b, cb_call(b, xid, prog, 0));
	assert_true(wait_fd(&r->gw, lfd, 3000));
	cfd = accept(lfd, NULL, NULL);
	assert_true(cfd >= 0);
	assert_true(wait_fd(&r->gw, cfd, 3000));
	assert_true(h_read_full(cfd, b, 48, &r->srv));
	assert_int_equal(chk_be32(b + 4), xid);
	assert_int_equal(chk_be32(b + 16), CB_PROG);
	close(cfd);
	close(sfd);
}

/* The program the server saw in the last SETCLIENTID. */
static uint32_t seen_prog(struct rig *r)
{
	uint8_t seen[512];
	struct iovec v = { seen, h_server_last(&r->srv, seen, sizeof(seen)) };

	assert_true(gw_cb40_parse_setclientid(&v, 1, &r->sci));
	return r->sci.sc4_prog;
}

/* 5. A fleet: 10,000 client ids from 100 addresses (127.0.1.1-100) in
 * turn, 32 calls in flight, on a table of GW_CB40_REGS.  Every SETCLIENTID
 * is answered and rewritten; past the table's size the least recently
 * registered is forgotten (counted); each address keeps its share; every
 * live registration has a program of its own; the newest client's
 * callbacks are relayed.  Fails on a gateway whose eviction finds the
 * entry it replaces when it looks for a free program: the 257th
 * SETCLIENTID is never answered and the loop spins for ever. */
static void t05_fleet(void **state)
{
	enum { SRC = 100, ROUNDS = 100, BATCH = 25 };
	uint32_t srcs[SRC], prog;
	int fds[SRC], lfd;
	uint16_t cbport;
	struct rig r;

	(void)state;
	for (unsigned k = 0; k < SRC; k++)
		srcs[k] = 0x7f000101u + k;
	lfd = tcp_listener_at(srcs[SRC - 1], &cbport);
	rig_up(&r, "relay", cbport);
	for (unsigned k = 0; k < SRC; k++)
		fds[k] = tcp_client_from(&r.gw, srcs[k]);
	for (unsigned t = 0; t < ROUNDS; t++)
		for (unsigned k = 0; k < SRC; k += BATCH)
			register_batch(&r, fds + k, srcs + k, BATCH, "fleet", t * SRC + k, cbport);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_REWRITTEN], 1 + SRC * ROUNDS);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_EVICTED], 1 + SRC * ROUNDS - GW_CB40_REGS);
	for (unsigned k = 0; k < SRC; k++)
		assert_in_range(regs_of(&r, srcs[k]), GW_CB40_REGS / SRC, GW_CB40_REGS / SRC + 1);
	for (unsigned i = 0; i < GW_CB40_REGS; i++)
		for (unsigned k = 0; k < i; k++)
			assert_int_not_equal(r.gw.gw->gw_cb40->c4_reg[i].r4_prog,
					     r.gw.gw->gw_cb40->c4_reg[k].r4_prog);
	/* the newest registered again: same entry, no eviction */
	register_batch(&r, fds + SRC - 1, srcs + SRC - 1, 1, "fleet", (ROUNDS - 1) * SRC + 75,
		       cbport);
	prog = seen_prog(&r);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_EVICTED], 1 + SRC * ROUNDS - GW_CB40_REGS);
	cb_null_reaches(&r, prog, lfd, 0x7740);
	for (unsigned k = 0; k < SRC; k++)
		close(fds[k]);
	close(lfd);
	rig_down(&r);
}

/* 6. The listener is bound to the address the gateway reaches the server
 * from (127.0.0.1 here), not every address (127.0.0.3 is refused), and
 * admits only the server's address: a connection from 127.0.0.2 is
 * closed at once, counted, and its forged CB_NULL reaches nobody.  On a
 * listener of every address that admits anyone, the forger's callback
 * reaches the client's service and its reply comes back to the forger. */
static void t06_listener_peers(void **state)
{
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000002) };
	struct sockaddr_storage ss;
	uint8_t b[256];
	uint16_t cbport;
	int lfd = tcp_listener(&cbport), fd;
	struct rig r;
	socklen_t sl;

	(void)state;
	rig_up(&r, "relay", cbport);
	assert_true(gw_cb40_uaddr_parse("tcp", r.sci.sc4_addr, &ss, &sl));
	assert_int_equal(((struct sockaddr_in *)&ss)->sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(0x7f000003);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, sl), -1);
	close(fd);
	((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, sl), 0);
	h_send(fd, b, cb_call(b, 0x7750, r.sci.sc4_prog, 0));
	assert_true(wait_fd(&r.gw, fd, 3000));
	assert_true(read(fd, b, sizeof(b)) <= 0);		/* closed, no reply */
	assert_false(wait_fd(&r.gw, lfd, 300));		/* nothing relayed */
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_FAIL_PEER], 1);
	close(fd);
	/* the server's own address still calls back */
	cb_null_reaches(&r, r.sci.sc4_prog, lfd, 0x7751);
	close(lfd);
	rig_down(&r);
}

/* 7. nfsd opens one callback connection per client: the listener takes
 * as many as there are registrations; past that the connection with
 * nothing read for longest is closed to make room, and the new one is
 * served.  A listener of 32 connections refused the 33rd. */
static void t07_server_slots(void **state)
{
	struct rlimit rl;
	struct sockaddr_storage ss;
	uint8_t b[8];
	uint16_t cbport;
	int lfd = tcp_listener(&cbport), *fds;
	struct rig r;
	socklen_t sl;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	if (rl.rlim_cur < 2 * GW_CB40_SRV + 256) {
		rl.rlim_cur = rl.rlim_max;
		assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	}
	assert_true(rl.rlim_cur >= 2 * GW_CB40_SRV + 256);
	fds = calloc(GW_CB40_SRV, sizeof(*fds));
	assert_non_null(fds);
	rig_up(&r, "relay", cbport);
	assert_true(gw_cb40_uaddr_parse("tcp", r.sci.sc4_addr, &ss, &sl));
	for (unsigned i = 0; i < GW_CB40_SRV; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		assert_int_equal(connect(fds[i], (struct sockaddr *)&ss, sl), 0);
		if (i % 64 == 63)
			h_pump(&r.gw, 5);
	}
	h_pump(&r.gw, 50);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_FAIL_FULL], 0);
	/* one more: served, the first (least recently read) closed */
	cb_null_reaches(&r, r.sci.sc4_prog, lfd, 0x7760);
	assert_true(wait_fd(&r.gw, fds[0], 3000));
	assert_int_equal(read(fds[0], b, sizeof(b)), 0);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_FAIL_FULL], 0);
	for (unsigned i = 0; i < GW_CB40_SRV; i++)
		close(fds[i]);
	free(fds);
	close(lfd);
	rig_down(&r);
}

/* 8. One address cannot push the others out: 1,000 client ids from 20
 * addresses (127.0.2.1-20), then 2,000 made-up ids from one attacker
 * (127.0.3.1).  Once the table is full the attacker forgets its own
 * oldest past GW_CB40_PER_SOURCE: it ends with that many, the others lose
 * at most that many in all.  A table that forgot the oldest of all would
 * hold nothing but the attacker's. */
static void t08_source_share(void **state)
{
	enum { SRC = 20, EACH = 50, BAD = 2000 };
	uint32_t srcs[SRC], bad = 0x7f000301u;
	unsigned good = 0;
	int fds[SRC], bfd;
	struct rig r;

	(void)state;
	rig_up(&r, "relay", 0x1234);
	for (unsigned k = 0; k < SRC; k++) {
		srcs[k] = 0x7f000201u + k;
		fds[k] = tcp_client_from(&r.gw, srcs[k]);
	}
	for (unsigned t = 0; t < EACH; t++)
		register_batch(&r, fds, srcs, SRC, "good", t, 0x1234);
	bfd = tcp_client_from(&r.gw, bad);
	for (unsigned t = 0; t < BAD; t++)
		register_batch(&r, &bfd, &bad, 1, "bad", t, 0x1234);
	assert_int_equal(regs_of(&r, bad), GW_CB40_PER_SOURCE);
	for (unsigned k = 0; k < SRC; k++)
		good += regs_of(&r, srcs[k]);
	assert_true(good >= SRC * EACH - GW_CB40_PER_SOURCE);
	assert_int_equal(good + regs_of(&r, bad) + regs_of(&r, 0), GW_CB40_REGS);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_EVICTED], 1 + SRC * EACH + BAD - GW_CB40_REGS);
	for (unsigned k = 0; k < SRC; k++)
		close(fds[k]);
	close(bfd);
	rig_down(&r);
}

/* 9. A client on the gateway's host naming a port the gateway listens on
 * (its own NFS listener here) is cleared and counted: the relay never
 * connects to the gateway itself. */
static void t09_self(void **state)
{
	char ua[GW_CB40_UADDR_MAX];
	uint8_t b[512];
	struct rig r;

	(void)state;
	rig_up_at(&r, "relay", "127.0.0.1.18.52", true);
	ua_of(ua, INADDR_LOOPBACK, fe_listen_port(r.gw.fe, 0));
	h_send(r.cl, b, setclientid_of(b, 0x5c2, "another client", ua));
	assert_int_equal(h_reply(&r.gw, r.cl, b, sizeof(b), 3000), 28);
	seen_prog(&r);
	assert_string_equal(r.sci.sc4_netid, "");
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_FAIL_SELF], 1);
	assert_int_equal(r.gw.st.gs_ctr[GW_CTR_CB40_REWRITTEN], 1);
	rig_down(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_relay),
		cmocka_unit_test(t02_off_passthrough),
		cmocka_unit_test(t03_other_host),
		cmocka_unit_test(t04_no_service),
		cmocka_unit_test(t05_fleet),
		cmocka_unit_test(t06_listener_peers),
		cmocka_unit_test(t07_server_slots),
		cmocka_unit_test(t08_source_share),
		cmocka_unit_test(t09_self),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
