// SPDX-License-Identifier: MIT
/* Host tests of the UDP NSM listener (gateway/nsm_udp.c) on the in-process
 * gateway (test_gw_harness.h): a client's SM_NOTIFY datagram releases its
 * locks and is answered to the sender, a retransmission only answered; the
 * backend's SM_NOTIFY datagram relays the server's reboot to each client's
 * statd; NULL answered; other procedures, programs, versions, bad
 * arguments answered and counted; garbage and oversized dropped; the
 * listener's admission (allow, deny, secure_port) applied to datagrams; a
 * server's reboot believed from a reserved port only; the retransmission
 * memory one entry per sender. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "chunking.h"
#include "ctx.h"
#include "fe_admit.h"
#include "gateway.h"
#include "log.h"
#include "nlm_map.h"
#include "nlm_notify.h"
#include "nsm_udp.h"
#include "test_gw_harness.h"

/* The admission main.c gives the listener: the configuration's rules of
 * listener li (frontend-tcp's, as for TCP connections). */
static const char *nu_admit(void *arg, unsigned li, const struct sockaddr *sa, socklen_t salen)
{
	struct h_gw *h = arg;

	(void)salen;
	return fe_adm_datagram(h->cf, li, sa);
}

/* The listener on 127.0.0.1, an ephemeral port; its address in *at; the
 * configuration's admission when admit. */
static struct gw_nu *nu_up_admit(struct h_gw *h, struct sockaddr_in *at, bool admit)
{
	struct gw_nu_params np = { .np_base = h->base, .np_gw = h->gw, .np_st = &h->st,
				   .np_lg = &h->log, .np_admit = admit ? nu_admit : NULL,
				   .np_admit_arg = h };
	struct sockaddr_storage ss = { 0 };
	struct gw_nu *nu = gw_nu_new(&np);

	((struct sockaddr_in *)&ss)->sin_family = AF_INET;
	((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(0x7f000001);
	assert_non_null(nu);
	assert_int_equal(gw_nu_open(nu, &ss, 0), 0);
	assert_int_equal(gw_nu_sockaddr(nu, 0, &ss), 0);
	assert_int_equal(gw_nu_sockaddr(nu, 1, &ss) < 0, 1);
	memcpy(at, &ss, sizeof(*at));
	return nu;
}

static struct gw_nu *nu_up(struct h_gw *h, struct sockaddr_in *at)
{
	return nu_up_admit(h, at, false);
}

/* A UDP socket of host addr (the sender), on an ephemeral port. */
static int udp_from(uint32_t addr)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(addr) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* A UDP socket of host addr on a reserved port (as sm-notify binds one);
 * -1 when none can be bound (not root: the test skips). */
static int udp_from_resv(uint32_t addr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	for (unsigned p = 1023; p >= 600; p--) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p),
					 .sin_addr.s_addr = htonl(addr) };

		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
			return fd;
	}
	close(fd);
	return -1;
}

/* An RPC call (no record mark) of prog/vers/proc, arguments SM_NOTIFY's
 * stat_chge (mon_name, state) when mon is set. */
static size_t call(uint8_t *out, size_t cap, uint32_t xid, uint32_t prog, uint32_t vers,
		   uint32_t proc, const char *mon, int32_t state)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, out, cap);
	rpc_call_encode(&xe, xid, prog, vers, proc, NULL);
	if (mon) {
		xdr_put_opaque(&xe, mon, (uint32_t)strlen(mon));
		xdr_put_u32(&xe, (uint32_t)state);
	}
	assert_int_equal(xe.xe_err, XDR_OK);
	return xe.xe_len;
}

/* Sends msg from fd to the listener; the reply's accept_stat, -1 when no
 * reply came within ms (the gateway's loop turning meanwhile). */
static int exchange(struct h_gw *h, int fd, const struct sockaddr_in *to, const void *msg,
		    size_t len, uint32_t xid, int ms)
{
	uint8_t buf[256];

	assert_int_equal(sendto(fd, msg, len, 0, (const struct sockaddr *)to, sizeof(*to)),
			 (ssize_t)len);
	for (int i = 0; i < ms; i += 5) {
		ssize_t n;

		h_pump(h, 5);
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			continue;
		assert_true(n >= 20);
		assert_int_equal(chk_be32(buf), xid);
		assert_int_equal(chk_be32(buf + 4), RPC_REPLY);
		if (chk_be32(buf + 8) != RPC_MSG_ACCEPTED)
			return 100 + (int)chk_be32(buf + 12);	/* denied: 100 + reject_stat */
		return (int)chk_be32(buf + 20);
	}
	return -1;
}

/* The server (fs, the backend's address) grants svid (GRANTED_MSG), so the
 * gateway tracks that lock (the relay to the client fails: no rpcbind). */
static void track(struct h_gw *h, int fs, int32_t svid)
{
	uint8_t buf[512];
	size_t at;

	h_send(fs, buf, h_nlm_granted_msg(buf, 0x94, svid, &at));
	assert_int_equal(h_reply(h, fs, buf, sizeof(buf), 3000), 24);
}

/* 1. Client 127.0.0.2 holds a lock through the gateway (TCP); its
 * SM_NOTIFY datagram is answered SUCCESS to the sender and the lock is
 * UNLOCKed on the server; the retransmission is answered only. */
static void t01_client_reboot(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	struct sockaddr_in to;
	struct gw_nu *nu;
	uint8_t buf[512];
	size_t n, at;
	int fa, fs, u;

	h_env_listen(e);
	h_env_nlm_gw(e);
	nu = nu_up(h, &to);
	fa = h_client_at(h, "127.0.0.2:801");
	h_send(fa, buf, h_nlm_lock(buf, 0x51, 1, &at));
	assert_int_equal(h_reply(h, fa, buf, sizeof(buf), 3000), 28);
	h_server_last(&e->he_srv, buf, sizeof(buf));
	fs = h_client_at(h, "127.0.0.1:1021");
	track(h, fs, (int32_t)chk_be32(buf + at));
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 1);
	u = udp_from(0x7f000002);
	n = call(buf, sizeof(buf), 0x61, H_NSM, 1, 6, "client-a", 3);
	assert_int_equal(exchange(h, u, &to, buf, n, 0x61, 3000), RPC_SUCCESS);
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 0);
	for (int i = 0; i < 3000 && h_server_calls(&e->he_srv) < 2; i += 5)
		h_pump(h, 5);
	assert_int_equal(h_server_calls(&e->he_srv), 2);	/* the LOCK, then its UNLOCK */
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NSM_UDP_NOTIFY], 1);
	/* sm-notify's retransmission: same sender, same state */
	assert_int_equal(exchange(h, u, &to, buf, n, 0x61, 3000), RPC_SUCCESS);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NSM_UDP_DUPLICATE], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 0);
	close(u);
	close(fs);
	close(fa);
	gw_nu_free(nu);
	h_pump(h, 20);
}

/* 2. The backend's address (127.0.0.1), from a reserved port as
 * sm-notify sends, sends SM_NOTIFY over UDP: answered, counted as the
 * server's reboot, and client 127.0.0.2's statd (a TCP listener) is called
 * with SM_NOTIFY. */
static void t02_server_reboot(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	struct sockaddr_in to;
	struct gw_nu *nu;
	uint8_t buf[512];
	int fa, u, lis, cfd;
	size_t n, at;

	h_env_listen(e);
	h_env_nlm_gw(e);
	nu = nu_up(h, &to);
	lis = h_listener(0x7f000002, &h_statd_port[0]);	/* 127.0.0.2's statd */
	assert_true(lis >= 0);
	gw_sn_set_getport(gw_nlm_notifier(h->gw->gw_nlm), h_statd_getport);
	fa = h_client_at(h, "127.0.0.2:801");
	h_send(fa, buf, h_nlm_lock(buf, 0x51, 1, &at));
	assert_int_equal(h_reply(h, fa, buf, sizeof(buf), 3000), 28);
	u = udp_from_resv(0x7f000001);
	if (u < 0) {
		close(fa);
		close(lis);
		gw_nu_free(nu);
		skip();
	}
	n = call(buf, sizeof(buf), 0x71, H_NSM, 1, 6, "nfs-server", 7);
	assert_int_equal(exchange(h, u, &to, buf, n, 0x71, 3000), RPC_SUCCESS);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 0);
	cfd = h_accept(h, lis, 3000);
	assert_true(cfd >= 0);	/* the relay reached the client's statd */
	/* a retransmission is not relayed again */
	assert_int_equal(exchange(h, u, &to, buf, n, 0x71, 3000), RPC_SUCCESS);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 1);
	close(cfd);
	close(lis);
	close(u);
	close(fa);
	gw_nu_free(nu);
	h_pump(h, 20);
}

/* 3. Hostile and other calls: NULL answered; SM_MON PROC_UNAVAIL, NFS
 * PROG_UNAVAIL, NSM v2 PROG_MISMATCH, RPC version 3 RPC_MISMATCH,
 * SM_NOTIFY without arguments GARBAGE_ARGS (each counted refused);
 * garbage, a reply and 1500 bytes dropped unanswered; no lock touched. */
static void t03_hostile(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	struct sockaddr_in to;
	struct gw_nu *nu;
	uint8_t buf[1500];
	size_t n;
	int u;

	h_env_listen(e);
	h_env_nlm_gw(e);
	nu = nu_up(h, &to);
	u = udp_from(0x7f000003);
	n = call(buf, sizeof(buf), 1, H_NSM, 1, 0, NULL, 0);
	assert_int_equal(exchange(h, u, &to, buf, n, 1, 3000), RPC_SUCCESS);
	n = call(buf, sizeof(buf), 2, H_NSM, 1, 2, "x", 1);
	assert_int_equal(exchange(h, u, &to, buf, n, 2, 3000), RPC_PROC_UNAVAIL);
	n = call(buf, sizeof(buf), 3, 100003, 3, 0, NULL, 0);
	assert_int_equal(exchange(h, u, &to, buf, n, 3, 3000), RPC_PROG_UNAVAIL);
	n = call(buf, sizeof(buf), 4, H_NSM, 2, 6, "x", 1);
	assert_int_equal(exchange(h, u, &to, buf, n, 4, 3000), RPC_PROG_MISMATCH);
	n = call(buf, sizeof(buf), 5, H_NSM, 1, 6, NULL, 0);
	assert_int_equal(exchange(h, u, &to, buf, n, 5, 3000), RPC_GARBAGE_ARGS);
	n = call(buf, sizeof(buf), 6, H_NSM, 1, 6, "x", 1);
	buf[11] = 3;	/* rpcvers */
	assert_int_equal(exchange(h, u, &to, buf, n, 6, 3000), 100 + RPC_MISMATCH);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NSM_UDP_REFUSED], 5);
	assert_int_equal(exchange(h, u, &to, "garbage", 7, 0, 300), -1);
	n = call(buf, sizeof(buf), 7, H_NSM, 1, 6, "x", 1);
	buf[7] = RPC_REPLY;
	assert_int_equal(exchange(h, u, &to, buf, n, 7, 300), -1);
	memset(buf, 0, sizeof(buf));
	n = call(buf, sizeof(buf), 8, H_NSM, 1, 6, "x", 1);
	assert_int_equal(exchange(h, u, &to, buf, sizeof(buf), 8, 300), -1);	/* 1500 bytes */
	assert_int_equal(h->st.gs_ctr[GW_CTR_NSM_UDP_DROPPED], 3);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NSM_UDP_NOTIFY], 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 0);
	(void)n;
	close(u);
	gw_nu_free(nu);
	h_pump(h, 20);
}

/* The gateway of t04-t06: NLM to the tiny server, NSM as h_env_nlm_gw, and
 * [gateway] admission: 127.0.0.4 denied, 127.0.0.0/29 allowed, a reserved
 * source port wanted (secure_port's default). */
static void nu_env_gw(struct h_env *e)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "deny = 127.0.0.4\nallow = 127.0.0.0/29\n"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nlm]\nprogram = nlm\ntransport = tcp\nport = %u\n"
		 "[route nsm]\nprogram = nsm\ntransport = tcp\nport = 9\n", e->he_srv.port);
	h_env_gw(e, text);
}

/* A's lock (127.0.0.2) through the gateway, tracked as granted by the
 * server (fs: the backend's address). */
static int lock_a(struct h_env *e)
{
	struct h_gw *h = &e->he_gw;
	uint8_t buf[512];
	size_t at;
	int fa = h_client_at(h, "127.0.0.2:801"), fs;

	h_send(fa, buf, h_nlm_lock(buf, 0x51, 1, &at));
	assert_int_equal(h_reply(h, fa, buf, sizeof(buf), 3000), 28);
	h_server_last(&e->he_srv, buf, sizeof(buf));
	fs = h_client_at(h, "127.0.0.1:1021");
	track(h, fs, (int32_t)chk_be32(buf + at));
	close(fs);
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 1);
	return fa;
}

/* 4. Admission: datagrams are judged by the listener's allow, deny and
 * secure_port, as its TCP connections: from the denied address, from an
 * address outside allow, and from A's address on an unprivileged port
 * they are dropped unanswered, counted, and release nothing; from A's
 * address on a reserved port A's SM_NOTIFY releases A's lock.  Before,
 * each of the three was answered and acted on (the third released A's
 * lock). */
static void t04_admission(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	struct sockaddr_in to;
	struct gw_nu *nu;
	uint8_t buf[512];
	int fa, ud, uo, ua, ur;
	size_t n;

	h_env_listen(e);
	nu_env_gw(e);
	nu = nu_up_admit(h, &to, true);
	fa = lock_a(e);
	ud = udp_from_resv(0x7f000004);
	uo = udp_from_resv(0x7f000009);
	ur = udp_from_resv(0x7f000002);
	if (ud < 0 || uo < 0 || ur < 0) {
		close(fa);
		gw_nu_free(nu);
		skip();
	}
	ua = udp_from(0x7f000002);
	n = call(buf, sizeof(buf), 0x41, H_NSM, 1, 6, "client-a", 3);
	assert_int_equal(exchange(h, ud, &to, buf, n, 0x41, 300), -1);
	assert_int_equal(exchange(h, uo, &to, buf, n, 0x41, 300), -1);
	assert_int_equal(exchange(h, ua, &to, buf, n, 0x41, 300), -1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NSM_UDP_NOT_ADMITTED], 3);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NSM_UDP_NOTIFY], 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 0);
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 1);
	n = call(buf, sizeof(buf), 0x42, H_NSM, 1, 0, NULL, 0);	/* NULL: refused alike */
	assert_int_equal(exchange(h, ud, &to, buf, n, 0x42, 300), -1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NSM_UDP_NOT_ADMITTED], 4);
	n = call(buf, sizeof(buf), 0x43, H_NSM, 1, 6, "client-a", 3);
	assert_int_equal(exchange(h, ur, &to, buf, n, 0x43, 3000), RPC_SUCCESS);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 1);
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 0);
	close(ud);
	close(uo);
	close(ua);
	close(ur);
	close(fa);
	gw_nu_free(nu);
	h_pump(h, 20);
}

/* 5. A datagram claiming the server's reboot from the backend's address on
 * an unprivileged port (any user on the server's host, or a forger) is
 * answered AUTH_TOOWEAK and acts on nothing: A's lock stays tracked, A's
 * statd hears nothing.  It is not remembered either: the server's real
 * notification with the same state, from a reserved port, then acts.
 * Before: the claim ran the server-reboot path (every lock forgotten,
 * every client's statd notified). */
static void t05_server_claim_refused(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	struct sockaddr_in to;
	struct gw_nu *nu;
	uint8_t buf[512];
	int fa, lis, uf, us, cfd;
	size_t n;

	h_env_listen(e);
	h_env_nlm_gw(e);
	nu = nu_up(h, &to);
	lis = h_listener(0x7f000002, &h_statd_port[0]);	/* 127.0.0.2's statd */
	assert_true(lis >= 0);
	h_statd_lookups = 0;
	gw_sn_set_getport(gw_nlm_notifier(h->gw->gw_nlm), h_statd_getport);
	fa = lock_a(e);
	us = udp_from_resv(0x7f000001);
	if (us < 0) {
		close(fa);
		close(lis);
		gw_nu_free(nu);
		skip();
	}
	uf = udp_from(0x7f000001);
	n = call(buf, sizeof(buf), 0x81, H_NSM, 1, 6, "nfs-server", 11);
	assert_int_equal(exchange(h, uf, &to, buf, n, 0x81, 3000), 100 + RPC_AUTH_ERROR);
	h_pump(h, 300);
	assert_true(accept(lis, NULL, NULL) < 0);
	assert_int_equal(__atomic_load_n(&h_statd_lookups, __ATOMIC_SEQ_CST), 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_NOTIFY_REFUSED], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NSM_UDP_NOTIFY], 0);
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 1);
	n = call(buf, sizeof(buf), 0x82, H_NSM, 1, 6, "nfs-server", 11);
	assert_int_equal(exchange(h, us, &to, buf, n, 0x82, 3000), RPC_SUCCESS);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 1);
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 0);
	cfd = h_accept(h, lis, 3000);
	assert_true(cfd >= 0);
	close(cfd);
	close(uf);
	close(us);
	close(lis);
	close(fa);
	gw_nu_free(nu);
	h_pump(h, 20);
}

/* 6. The retransmission memory at and past its capacity: one entry per
 * sender, so a sender that sends many states (or 32 other senders' worth)
 * keeps one; A's retransmission, after another host sent 40 notifications
 * of increasing state, is still answered only.  Before: (sender, state)
 * pairs, 32 of them, so the other host's 40 pushed A's out and A's
 * retransmission released A's locks again. */
static void t06_seen_per_sender(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	struct sockaddr_in to;
	struct gw_nu *nu;
	uint8_t buf[512];
	int ua, ux;
	size_t n;

	h_env_listen(e);
	h_env_nlm_gw(e);
	nu = nu_up(h, &to);
	ua = udp_from(0x7f000002);
	ux = udp_from(0x7f000005);
	n = call(buf, sizeof(buf), 0x91, H_NSM, 1, 6, "client-a", 3);
	assert_int_equal(exchange(h, ua, &to, buf, n, 0x91, 3000), RPC_SUCCESS);
	for (int32_t st = 1; st <= 2 * GW_NU_SEEN; st += 2) {
		n = call(buf, sizeof(buf), 0x9200 + (uint32_t)st, H_NSM, 1, 6, "x", st);
		assert_int_equal(exchange(h, ux, &to, buf, n, 0x9200 + (uint32_t)st, 3000),
				 RPC_SUCCESS);
	}
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 1 + GW_NU_SEEN);
	n = call(buf, sizeof(buf), 0x93, H_NSM, 1, 6, "client-a", 3);
	assert_int_equal(exchange(h, ua, &to, buf, n, 0x93, 3000), RPC_SUCCESS);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NSM_UDP_DUPLICATE], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 1 + GW_NU_SEEN);
	close(ua);
	close(ux);
	gw_nu_free(nu);
	h_pump(h, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t01_client_reboot, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t02_server_reboot, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t03_hostile, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t04_admission, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t05_server_claim_refused, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t06_seen_per_sender, h_env_setup, h_env_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
