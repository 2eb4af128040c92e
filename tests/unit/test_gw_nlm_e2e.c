// SPDX-License-Identifier: MIT
/* End-to-end host tests of the NLM lock-owner map in the gateway path
 * (gateway/nlm_map.c through gw_on_record): two clients on different
 * addresses with one svid reach the server as two owners, and a client's
 * SM_NOTIFY is answered by the gateway, never forwarded; a server's
 * GRANTED_MSG reaches the client whose lock it is, with its own svid, and
 * one a client forges reaches nobody; a server's SM_NOTIFY (its reboot)
 * reaches each client host's statd, one a client sends only its own
 * reboot; two clients' SHAREs with one oh reach the server as two owners;
 * an owner a client cannot carry (another's svid'), a statd procedure, a
 * server's reboot from an unreserved port and a client's grant are
 * answered by the gateway and reach nobody.
 * The harness
 * (test_gw_harness.h) names each adopted connection as the frontend names
 * an accepted one ("address:port"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "chunking.h"
#include "ctx.h"
#include "gateway.h"
#include "log.h"
#include "nlm_grant.h"
#include "nlm_map.h"
#include "nlm_notify.h"
#include "test_gw_harness.h"

/* The svid the server received in the last call. */
static int32_t server_svid(struct h_server *s, size_t at)
{
	uint8_t last[512];

	h_server_last(s, last, sizeof(last));
	return (int32_t)chk_be32(last + at);
}

/* 1. Clients 127.0.0.2 and 127.0.0.3, one svid: the server sees two owners,
 * each client the same one every time; the clients get their replies. */
static void t01_owners_per_client(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[512];
	size_t at;
	int32_t a, b;
	int fa, fb;

	h_env_listen(e);
	h_env_nlm_gw(e);
	fa = h_client_at(h, "127.0.0.2:801");
	fb = h_client_at(h, "127.0.0.3:801");
	h_send(fa, buf, h_nlm_lock(buf, 0x51, 1, &at));
	assert_int_equal(h_reply(h, fa, buf, sizeof(buf), 3000), 28);
	a = server_svid(&e->he_srv, at);
	h_send(fb, buf, h_nlm_lock(buf, 0x52, 1, &at));
	assert_int_equal(h_reply(h, fb, buf, sizeof(buf), 3000), 28);
	b = server_svid(&e->he_srv, at);
	assert_int_not_equal(a, b);
	assert_int_equal(a & ((1 << GW_NLM_SVID_BITS) - 1), 1);
	assert_int_equal(b & ((1 << GW_NLM_SVID_BITS) - 1), 1);
	h_send(fa, buf, h_nlm_lock(buf, 0x53, 1, &at));	/* A again, another connection port too */
	assert_int_equal(h_reply(h, fa, buf, sizeof(buf), 3000), 28);
	assert_int_equal(server_svid(&e->he_srv, at), a);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_MAPPED], 3);
	close(fa);
	close(fb);
	h_pump(h, 20);
}

/* 2. SM_NOTIFY from a client: a void SUCCESS from the gateway, nothing
 * reaches the server (whose statd knows only the gateway). */
static void t02_sm_notify_answered(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[512];
	int fa;

	h_env_listen(e);
	h_env_nlm_gw(e);
	fa = h_client_at(h, "127.0.0.2:801");
	h_send(fa, buf, h_sm_notify(buf, 0x61, "127.0.0.2", 3));
	assert_int_equal(h_reply(h, fa, buf, sizeof(buf), 3000), 24);
	assert_int_equal(chk_be32(buf), 0x61);
	assert_int_equal(chk_be32(buf + 20), RPC_SUCCESS);
	assert_int_equal(h_server_calls(&e->he_srv), 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_LOCAL_NLM_NOTIFY], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 1);
	close(fa);
	h_pump(h, 20);
}

/* rpcbind of the client hosts, as the relay asks it: every host's NLM is
 * at grant_port (0: none). */
static uint16_t grant_port;
static unsigned grant_lookups;

static int fake_getport(const char *host, int family, uint32_t prog, uint32_t vers,
			uint16_t *port, char *msg, size_t msglen)
{
	(void)family;
	__atomic_add_fetch(&grant_lookups, 1, __ATOMIC_SEQ_CST);
	snprintf(msg, msglen, "no NLM %u/%u at %s", prog, vers, host);
	*port = grant_port;
	return grant_port ? 0 : -1;
}

/* A listener on 127.0.0.2 (client A's address) standing for its NLM service. */
static int grant_listener(void)
{
	int fd = h_listener(0x7f000002, &grant_port);

	assert_true(fd >= 0);
	grant_lookups = 0;
	return fd;
}

/* n bytes of the relay's call on cfd, the gateway's loop turning meanwhile. */
static bool grant_read(struct h_gw *h, int cfd, uint8_t *buf, size_t n)
{
	size_t got = 0;

	for (int i = 0; i < 3000 && got < n; i += 5) {
		ssize_t r = recv(cfd, buf + got, n - got, MSG_DONTWAIT);

		if (r > 0)
			got += (size_t)r;
		else if (r == 0)
			return false;
		else
			h_pump(h, 5);
	}
	return got == n;
}

/* A's LOCK goes through; its svid' as the server saw it. */
static int32_t lock_of(struct h_env *e, int fd, uint32_t xid)
{
	uint8_t buf[512];
	size_t at;

	h_send(fd, buf, h_nlm_lock(buf, xid, 1, &at));
	assert_int_equal(h_reply(&e->he_gw, fd, buf, sizeof(buf), 3000), 28);
	return server_svid(&e->he_srv, at);
}

/* 3. The server (127.0.0.1, the backend's address) sends GRANTED_MSG for
 * A's svid': void answer at once; A's NLM service gets the call with A's
 * own svid and answers; the lock is tracked for A's reboot. */
static void t03_grant_relayed(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[512];
	size_t at, n;
	int fa, fs, lis, cfd;
	int32_t a;

	h_env_listen(e);
	h_env_nlm_gw(e);
	lis = grant_listener();
	gw_ng_set_getport(gw_nlm_grants(h->gw->gw_nlm), fake_getport);
	fa = h_client_at(h, "127.0.0.2:801");
	a = lock_of(e, fa, 0x71);
	fs = h_client_at(h, "127.0.0.1:4045");
	n = h_nlm_granted_msg(buf, 0x72, a, &at);
	h_send(fs, buf, n);
	assert_int_equal(h_reply(h, fs, buf, sizeof(buf), 3000), 24);
	assert_int_equal(chk_be32(buf), 0x72);
	assert_int_equal(chk_be32(buf + 20), RPC_SUCCESS);
	cfd = h_accept(h, lis, 3000);
	assert_true(cfd >= 0);
	assert_true(grant_read(h, cfd, buf, n));
	assert_int_equal(chk_be32(buf + 4), 0x72);
	assert_int_equal((int32_t)chk_be32(buf + 4 + at), 1);	/* A's own svid */
	assert_int_equal(h_server_calls(&e->he_srv), 1);	/* A's LOCK only */
	h_send_reply(cfd, 0x72, 0);
	for (int i = 0; i < 3000 && !h->st.gs_ctr[GW_CTR_NLM_GRANT_RELAYED]; i += 5)
		h_pump(h, 5);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_GRANT_RELAYED], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_GRANT_FAILED], 0);
	assert_int_equal(gw_ng_busy(gw_nlm_grants(h->gw->gw_nlm)), 0);
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 1);
	close(cfd);
	close(lis);
	close(fs);
	close(fa);
	h_pump(h, 20);
}

/* 4. A grant from anyone but a backend (client B forging one for A's lock)
 * is answered and dropped: no lookup, nothing to A, nothing to the server.
 * A grant for a client whose NLM service rpcbind does not know is counted
 * as failed. */
static void t04_grant_refused(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[512];
	size_t at;
	int fa, fb, fs, lis;
	int32_t a;

	h_env_listen(e);
	h_env_nlm_gw(e);
	lis = grant_listener();
	gw_ng_set_getport(gw_nlm_grants(h->gw->gw_nlm), fake_getport);
	fa = h_client_at(h, "127.0.0.2:801");
	a = lock_of(e, fa, 0x81);
	fb = h_client_at(h, "127.0.0.3:801");
	h_send(fb, buf, h_nlm_granted_msg(buf, 0x82, a, &at));
	assert_int_equal(h_reply(h, fb, buf, sizeof(buf), 3000), 24);
	h_pump(h, 200);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_GRANT_REFUSED], 1);
	assert_int_equal(__atomic_load_n(&grant_lookups, __ATOMIC_SEQ_CST), 0);
	assert_true(accept(lis, NULL, NULL) < 0);
	assert_int_equal(h_server_calls(&e->he_srv), 1);
	grant_port = 0;		/* rpcbind at A names no NLM */
	fs = h_client_at(h, "127.0.0.1:4045");
	h_send(fs, buf, h_nlm_granted_msg(buf, 0x83, a, &at));
	assert_int_equal(h_reply(h, fs, buf, sizeof(buf), 3000), 24);
	for (int i = 0; i < 3000 && !h->st.gs_ctr[GW_CTR_NLM_GRANT_FAILED]; i += 5)
		h_pump(h, 5);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_GRANT_FAILED], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_GRANT_RELAYED], 0);
	close(lis);
	close(fs);
	close(fb);
	close(fa);
	h_pump(h, 20);
}

/* ---- a server's reboot ---- */

/* A's lock tracked as the gateway tracks a granted one: the server
 * (fs, the backend's address) grants A's svid' (the relay to A fails:
 * rpcbind names no NLM; the lock is tracked before). */
static void track_a(struct h_env *e, int fs, int32_t a, uint32_t xid)
{
	uint8_t buf[512];
	size_t at;

	grant_port = 0;
	gw_ng_set_getport(gw_nlm_grants(e->he_gw.gw->gw_nlm), fake_getport);
	h_send(fs, buf, h_nlm_granted_msg(buf, xid, a, &at));
	assert_int_equal(h_reply(&e->he_gw, fs, buf, sizeof(buf), 3000), 24);
	assert_int_equal(gw_nlm_host_locks(e->he_gw.gw->gw_nlm, "127.0.0.2"), 1);
}

/* The SM_NOTIFY a statd listener got (accepted within 3 s): its mon_name
 * into mon, its state; false when nothing came. */
static bool statd_got(struct h_gw *h, int lis, char *mon, size_t len, int32_t *state)
{
	uint8_t buf[512];
	struct xdr_cur xc;
	struct iovec one;
	int cfd = h_accept(h, lis, 3000);
	uint32_t n;

	if (cfd < 0)
		return false;
	assert_true(grant_read(h, cfd, buf, 4));
	n = chk_be32(buf) & 0x7fffffffu;
	assert_true(n >= 40 && n <= sizeof(buf));
	assert_true(grant_read(h, cfd, buf, n));
	assert_int_equal(chk_be32(buf + 4), RPC_CALL);
	assert_int_equal(chk_be32(buf + 12), H_NSM);
	assert_int_equal(chk_be32(buf + 16), 1);
	assert_int_equal(chk_be32(buf + 20), 6);
	xdr_cur_init_buf(&xc, &one, buf + 40, n - 40);
	assert_true(gw_sn_decode(&xc, mon, len, state));
	h_send_reply(cfd, chk_be32(buf), 0);
	for (int i = 0; i < 200; i += 5)
		h_pump(h, 5);
	close(cfd);
	return true;
}

/* 5. The server (127.0.0.1, the backend) sends SM_NOTIFY: answered void,
 * nothing forwarded; the statd of A and of B each gets SM_NOTIFY with the
 * gateway's address toward it as mon_name and the server's new state; the
 * locks tracked for A are forgotten (the server lost them). */
static void t05_server_reboot_relayed(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[512];
	char mon[64];
	int fa, fb, fs, la, lb;
	int32_t st;

	h_env_listen(e);
	h_env_nlm_gw(e);
	la = h_listener(0x7f000002, &h_statd_port[0]);
	lb = h_listener(0x7f000003, &h_statd_port[1]);
	assert_true(la >= 0 && lb >= 0);
	gw_sn_set_getport(gw_nlm_notifier(h->gw->gw_nlm), h_statd_getport);
	fa = h_client_at(h, "127.0.0.2:801");
	fb = h_client_at(h, "127.0.0.3:801");
	fs = h_client_at(h, "127.0.0.1:1021");
	track_a(e, fs, lock_of(e, fa, 0x91), 0x94);
	lock_of(e, fb, 0x92);
	h_send(fs, buf, h_sm_notify(buf, 0x93, "nfs-server", 7));
	assert_int_equal(h_reply(h, fs, buf, sizeof(buf), 3000), 24);
	assert_int_equal(chk_be32(buf), 0x93);
	assert_int_equal(chk_be32(buf + 20), RPC_SUCCESS);
	assert_int_equal(h_server_calls(&e->he_srv), 2);	/* the two LOCKs only */
	assert_true(statd_got(h, la, mon, sizeof(mon), &st));
	assert_string_equal(mon, "127.0.0.1");	/* the route's source toward 127.0.0.2 */
	assert_int_equal(st, 7);
	assert_true(statd_got(h, lb, mon, sizeof(mon), &st));
	assert_string_equal(mon, "127.0.0.1");
	assert_int_equal(st, 7);
	for (int i = 0; i < 3000 && h->st.gs_ctr[GW_CTR_NLM_NOTIFY_RELAYED] < 2; i += 5)
		h_pump(h, 5);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_NOTIFY_RELAYED], 2);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_NOTIFY_FAILED], 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 0);	/* no client's reboot */
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 0);
	assert_int_equal(gw_sn_pending(gw_nlm_notifier(h->gw->gw_nlm)), 0);
	close(la);
	close(lb);
	close(fs);
	close(fb);
	close(fa);
	h_pump(h, 20);
}

/* 6. Hostile: client B sends the same SM_NOTIFY.  It is B's own reboot
 * (as before): nobody's statd is called, nothing is looked up, A's lock
 * stays tracked; a server's SM_NOTIFY cut short is answered, counted, not
 * relayed. */
static void t06_client_notify_not_relayed(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[512];
	int fa, fb, fs, la;
	size_t n;

	h_env_listen(e);
	h_env_nlm_gw(e);
	la = h_listener(0x7f000002, &h_statd_port[0]);
	assert_true(la >= 0);
	h_statd_lookups = 0;
	gw_sn_set_getport(gw_nlm_notifier(h->gw->gw_nlm), h_statd_getport);
	fa = h_client_at(h, "127.0.0.2:801");
	fb = h_client_at(h, "127.0.0.3:801");
	fs = h_client_at(h, "127.0.0.1:1021");
	track_a(e, fs, lock_of(e, fa, 0xa1), 0xa4);
	h_send(fb, buf, h_sm_notify(buf, 0xa2, "nfs-server", 9));
	assert_int_equal(h_reply(h, fb, buf, sizeof(buf), 3000), 24);
	h_pump(h, 300);
	assert_true(accept(la, NULL, NULL) < 0);
	assert_int_equal(__atomic_load_n(&h_statd_lookups, __ATOMIC_SEQ_CST), 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_REBOOTS], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_NOTIFY_RELAYED], 0);
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 1);
	n = h_sm_notify(buf, 0xa3, "nfs-server", 9);
	n -= 4;				/* the state cut off */
	rm_encode_hdr(buf, (uint32_t)(n - 4), true);
	h_send(fs, buf, n);
	assert_int_equal(h_reply(h, fs, buf, sizeof(buf), 3000), 24);
	h_pump(h, 100);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_NOTIFY_FAILED], 1);
	assert_true(accept(la, NULL, NULL) < 0);
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 1);
	close(la);
	close(fs);
	close(fb);
	close(fa);
	h_pump(h, 20);
}

/* 7. Bounds: GW_NG_SLOTS notifications on their way, GW_SN_QUEUE hosts
 * waiting, each host once; beyond that each is counted as failed at once,
 * and every queued one ends (here: rpcbind names no statd). */
static void t07_notify_bounded(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	struct gw_sn *sn;
	unsigned extra = 5, total = GW_SN_QUEUE + GW_NG_SLOTS + extra;
	char host[48];

	h_env_listen(e);
	h_env_nlm_gw(e);
	sn = gw_nlm_notifier(h->gw->gw_nlm);
	h_statd_port[0] = h_statd_port[1] = 0;
	gw_sn_set_getport(sn, h_statd_getport);
	for (unsigned i = 0; i < total; i++) {
		snprintf(host, sizeof(host), "127.1.%u.%u", i / 250, i % 250 + 1);
		assert_int_equal(gw_sn_queue(sn, host, 3), i < total - extra);
	}
	assert_int_equal(gw_sn_pending(sn), GW_SN_QUEUE + GW_NG_SLOTS);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_NOTIFY_FAILED], extra);
	for (unsigned i = GW_NG_SLOTS; i < total - extra; i++) {
		snprintf(host, sizeof(host), "127.1.%u.%u", i / 250, i % 250 + 1);
		assert_true(gw_sn_queue(sn, host, 5));	/* waiting already: its state only */
	}
	assert_int_equal(gw_sn_pending(sn), GW_SN_QUEUE + GW_NG_SLOTS);
	for (int i = 0; i < 20000 && gw_sn_pending(sn); i += 5)
		h_pump(h, 5);
	assert_int_equal(gw_sn_pending(sn), 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_NOTIFY_FAILED], total);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_NOTIFY_RELAYED], 0);
}

/* Record-marked NLM v4 SHARE (proc 20) of owner oh (ohlen bytes) on "fh"
 * (as the harness's h_nlm_lock()); the offset of oh's length word in the
 * record (no mark). */
static size_t nlm_share(uint8_t *out, size_t cap, uint32_t xid, const void *oh, size_t ohlen,
			size_t *oh_at)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, out + 4, cap - 4);
	rpc_call_encode(&xe, xid, H_NLM, 4, 20, NULL);	/* SHARE */
	xdr_put_opaque(&xe, "ck", 2);
	xdr_put_opaque(&xe, "guest", 5);
	xdr_put_opaque(&xe, "fh", 2);
	*oh_at = xe.xe_len;
	xdr_put_opaque(&xe, oh, (uint32_t)ohlen);
	xdr_put_u32(&xe, 2);		/* mode: deny write */
	xdr_put_u32(&xe, 1);		/* access: read */
	xdr_put_u32(&xe, 0xa2);		/* reclaim: the harness server's tag */
	assert_int_equal(xe.xe_err, XDR_OK);
	rm_encode_hdr(out, (uint32_t)xe.xe_len, true);
	return xe.xe_len + 4;
}

/* 8. SHARE from 127.0.0.2 and 127.0.0.3 with one oh: the server gets two
 * owners (oh' = 4-byte tag || oh, the rest of the call as sent, the mode
 * words after it in place); an oh of 1021 bytes is answered SYSTEM_ERR by
 * the gateway and never reaches the server (as it came it could be
 * another client's oh'). */
static void t08_share_owners(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	static uint8_t buf[2048], last[512], oh_a[16], big[1021];
	size_t at, n;
	int fa, fb;

	h_env_listen(e);
	h_env_nlm_gw(e);
	fa = h_client_at(h, "127.0.0.2:801");
	fb = h_client_at(h, "127.0.0.3:801");
	h_send(fa, buf, nlm_share(buf, sizeof(buf), 0x91, "1@guest", 7, &at));
	assert_int_equal(h_reply(h, fa, buf, sizeof(buf), 3000), 28);
	n = h_server_last(&e->he_srv, last, sizeof(last));
	assert_int_equal(chk_be32(last + at), 7 + 4);
	assert_memory_equal(last + at + 8, "1@guest", 7);
	assert_int_equal(chk_be32(last + at + 16), 2);	/* mode */
	assert_int_equal(chk_be32(last + at + 20), 1);	/* access */
	assert_int_equal(n, at + 24 + 4);
	memcpy(oh_a, last + at + 4, 11);
	h_send(fb, buf, nlm_share(buf, sizeof(buf), 0x92, "1@guest", 7, &at));
	assert_int_equal(h_reply(h, fb, buf, sizeof(buf), 3000), 28);
	h_server_last(&e->he_srv, last, sizeof(last));
	assert_int_equal(chk_be32(last + at), 7 + 4);
	assert_memory_equal(last + at + 8, "1@guest", 7);
	assert_memory_not_equal(last + at + 4, oh_a, 4);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SHARE_MAPPED], 2);
	memset(big, 'o', sizeof(big));
	h_send(fa, buf, nlm_share(buf, sizeof(buf), 0x93, big, sizeof(big), &at));
	assert_int_equal(h_reply(h, fa, buf, sizeof(buf), 3000), 24);
	assert_int_equal(chk_be32(buf), 0x93);
	assert_int_equal(chk_be32(buf + 20), RPC_SYSTEM_ERR);
	assert_int_equal(h_server_calls(&e->he_srv), 2);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SHARE_REFUSED], 1);
	close(fa);
	close(fb);
	h_pump(h, 20);
}

/* ---- owners a client cannot reach: the map's refusals ---- */

/* Record-marked NLM v4 call proc (UNLOCK: 4, GRANTED: 5) of owner svid on
 * "fh", caller "guest"; the svid word's offset into *svid_at. */
static size_t nlm_alock_call(uint8_t out[512], uint32_t xid, uint32_t proc, int32_t svid,
			     size_t *svid_at)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, out + 4, 508);
	rpc_call_encode(&xe, xid, H_NLM, 4, proc, NULL);
	xdr_put_opaque(&xe, "ck", 2);
	if (proc == 5)
		xdr_put_u32(&xe, 1);	/* exclusive (nlm4_testargs) */
	xdr_put_opaque(&xe, "guest", 5);
	xdr_put_opaque(&xe, "fh", 2);
	xdr_put_opaque(&xe, "1@guest", 7);
	*svid_at = xe.xe_len;
	xdr_put_u32(&xe, (uint32_t)svid);
	xdr_put_u64(&xe, 0);
	xdr_put_u64(&xe, 0);
	return h_rm_close(out, &xe);
}

/* The gateway's DENIED_NOLOCKS to xid: accepted, SUCCESS, cookie "ck", 2. */
static void expect_nolocks(struct h_gw *h, int fd, uint32_t xid)
{
	uint8_t buf[512];

	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 36);
	assert_int_equal(chk_be32(buf), xid);
	assert_int_equal(chk_be32(buf + 8), RPC_MSG_ACCEPTED);
	assert_int_equal(chk_be32(buf + 20), RPC_SUCCESS);
	assert_int_equal(chk_be32(buf + 24), 2);
	assert_memory_equal(buf + 28, "ck", 2);
	assert_int_equal(chk_be32(buf + 32), 2);	/* nlm4_denied_nolocks */
}

/* 9. The attack of the fleet test: A and B each LOCK with svid 1; A then
 * sends UNLOCK for every svid' the map can make (slot + 1) << 22 | 1, B's
 * among them.  Each is answered DENIED_NOLOCKS by the gateway and none
 * reaches the server (before: forwarded unmapped, and the server got B's
 * owner from A and released B's lock).  A's own UNLOCK (svid 1) still goes,
 * as A's svid'. */
static void t09_other_owner_refused(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[512];
	size_t at;
	int32_t a, b;
	int fa, fb;

	h_env_listen(e);
	h_env_nlm_gw(e);
	fa = h_client_at(h, "127.0.0.2:801");
	fb = h_client_at(h, "127.0.0.3:801");
	a = lock_of(e, fa, 0x51);
	b = lock_of(e, fb, 0x52);
	assert_int_not_equal(a, b);
	for (uint32_t slot = 0; slot < GW_NLM_MAX_HOSTS; slot++) {
		h_send(fa, buf, nlm_alock_call(buf, 0x1000 + slot, 4,
					       (int32_t)((slot + 1) << GW_NLM_SVID_BITS | 1), &at));
		expect_nolocks(h, fa, 0x1000 + slot);
	}
	assert_int_equal(h_server_calls(&e->he_srv), 2);	/* the two LOCKs only */
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_OWNER_REFUSED], GW_NLM_MAX_HOSTS);
	h_send(fa, buf, nlm_alock_call(buf, 0x53, 4, 1, &at));
	assert_int_equal(h_reply(h, fa, buf, sizeof(buf), 3000), 28);
	assert_int_equal(h_server_calls(&e->he_srv), 3);
	assert_int_equal(server_svid(&e->he_srv, at), a);
	close(fa);
	close(fb);
	h_pump(h, 20);
}

/* 10. What only a host's own statd, or only the server, may send: SM_MON
 * (and the other statd procedures) from a client is answered PROC_UNAVAIL
 * and reaches no statd; an SM_NOTIFY from the backend's address on an
 * unreserved port is answered AUTH_TOOWEAK, relays nothing and forgets
 * nothing; a GRANTED from a client is answered DENIED_NOLOCKS and reaches
 * no lockd (before: SM_MON and GRANTED forwarded, the SM_NOTIFY taken for
 * the server's reboot). */
static void t10_not_a_clients(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[512];
	struct xdr_enc xe;
	int fa, fs, la;
	size_t at;

	h_env_listen(e);
	h_env_nlm_gw(e);
	la = h_listener(0x7f000002, &h_statd_port[0]);
	assert_true(la >= 0);
	h_statd_lookups = 0;
	gw_sn_set_getport(gw_nlm_notifier(h->gw->gw_nlm), h_statd_getport);
	fa = h_client_at(h, "127.0.0.2:801");
	fs = h_client_at(h, "127.0.0.1:1021");
	track_a(e, fs, lock_of(e, fa, 0xb1), 0xb2);
	xdr_enc_init(&xe, buf + 4, 508);	/* SM_MON: mon_id, priv */
	rpc_call_encode(&xe, 0xb3, H_NSM, 1, 2, NULL);
	xdr_put_opaque(&xe, "127.0.0.3", 9);
	xdr_put_opaque(&xe, "guest", 5);
	xdr_put_u32(&xe, H_NLM);
	xdr_put_u32(&xe, 4);
	xdr_put_u32(&xe, 16);
	xdr_put_fixed(&xe, "0123456789abcdef", 16);
	h_send(fa, buf, h_rm_close(buf, &xe));
	assert_int_equal(h_reply(h, fa, buf, sizeof(buf), 3000), 24);
	assert_int_equal(chk_be32(buf), 0xb3);
	assert_int_equal(chk_be32(buf + 20), RPC_PROC_UNAVAIL);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_NSM_REFUSED], 1);
	close(fs);
	fs = h_client_at(h, "127.0.0.1:40000");	/* the server's address, no reserved port */
	h_send(fs, buf, h_sm_notify(buf, 0xb4, "nfs-server", 9));
	assert_int_equal(h_reply(h, fs, buf, sizeof(buf), 3000), 20);
	assert_int_equal(chk_be32(buf), 0xb4);
	assert_int_equal(chk_be32(buf + 8), RPC_MSG_DENIED);
	assert_int_equal(chk_be32(buf + 12), RPC_AUTH_ERROR);
	assert_int_equal(chk_be32(buf + 16), RPC_AUTH_TOOWEAK);
	h_pump(h, 300);
	assert_true(accept(la, NULL, NULL) < 0);
	assert_int_equal(__atomic_load_n(&h_statd_lookups, __ATOMIC_SEQ_CST), 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_SERVER_NOTIFY_REFUSED], 1);
	assert_int_equal(gw_nlm_host_locks(h->gw->gw_nlm, "127.0.0.2"), 1);
	h_send(fa, buf, nlm_alock_call(buf, 0xb5, 5, 1, &at));	/* GRANTED from a client */
	expect_nolocks(h, fa, 0xb5);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_GRANT_REFUSED], 1);
	assert_int_equal(h_server_calls(&e->he_srv), 1);	/* A's LOCK only */
	close(la);
	close(fs);
	close(fa);
	h_pump(h, 20);
}

/* 11. Grants on their way at and past one host's share: A's NLM service
 * takes connections and never answers; the server grants A's owner three
 * times: two are on their way (each would hold its slot GW_NG_TIMEOUT_S),
 * the third is counted failed at once (lockd sends it again), and B's
 * grant still gets a slot and is relayed.  Before: A's grants could take
 * every slot (8), and B's grant failed. */
static void t11_grants_per_host(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	struct sockaddr_in b_at = { .sin_family = AF_INET };
	uint8_t buf[512];
	int fa, fb, fs, la, lb, cfd, one = 1;
	int32_t a, b;
	size_t at;

	h_env_listen(e);
	h_env_nlm_gw(e);
	la = grant_listener();
	lb = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);	/* B's NLM, the same port */
	b_at.sin_addr.s_addr = htonl(0x7f000003);
	b_at.sin_port = htons(grant_port);
	setsockopt(lb, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	assert_int_equal(bind(lb, (struct sockaddr *)&b_at, sizeof(b_at)), 0);
	assert_int_equal(listen(lb, 4), 0);
	gw_ng_set_getport(gw_nlm_grants(h->gw->gw_nlm), fake_getport);
	fa = h_client_at(h, "127.0.0.2:801");
	fb = h_client_at(h, "127.0.0.3:801");
	a = lock_of(e, fa, 0xc1);
	b = lock_of(e, fb, 0xc2);
	fs = h_client_at(h, "127.0.0.1:4045");
	for (uint32_t i = 0; i < GW_NG_PER_HOST + 1; i++) {
		h_send(fs, buf, h_nlm_granted_msg(buf, 0xc3 + i, a, &at));
		assert_int_equal(h_reply(h, fs, buf, sizeof(buf), 3000), 24);
	}
	assert_int_equal(gw_ng_busy(gw_nlm_grants(h->gw->gw_nlm)), GW_NG_PER_HOST);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_GRANT_FAILED], 1);
	h_send(fs, buf, h_nlm_granted_msg(buf, 0xc9, b, &at));
	assert_int_equal(h_reply(h, fs, buf, sizeof(buf), 3000), 24);
	cfd = h_accept(h, lb, 3000);
	assert_true(cfd >= 0);
	assert_true(grant_read(h, cfd, buf, 4 + 4));
	h_send_reply(cfd, chk_be32(buf + 4), 0);
	for (int i = 0; i < 3000 && !h->st.gs_ctr[GW_CTR_NLM_GRANT_RELAYED]; i += 5)
		h_pump(h, 5);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_GRANT_RELAYED], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_GRANT_FAILED], 1);
	close(cfd);
	for (unsigned i = 0; i < GW_NG_PER_HOST; i++) {	/* A's service goes away */
		cfd = h_accept(h, la, 3000);
		assert_true(cfd >= 0);
		close(cfd);
	}
	for (int i = 0; i < 3000 && gw_ng_busy(gw_nlm_grants(h->gw->gw_nlm)); i += 5)
		h_pump(h, 5);
	assert_int_equal(h->st.gs_ctr[GW_CTR_NLM_GRANT_FAILED], 1 + GW_NG_PER_HOST);
	close(la);
	close(lb);
	close(fs);
	close(fb);
	close(fa);
	h_pump(h, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t01_owners_per_client, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t02_sm_notify_answered, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t03_grant_relayed, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t04_grant_refused, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t05_server_reboot_relayed, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t06_client_notify_not_relayed, h_env_setup,
						h_env_teardown),
		cmocka_unit_test_setup_teardown(t07_notify_bounded, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t08_share_owners, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t09_other_owner_refused, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t10_not_a_clients, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t11_grants_per_host, h_env_setup, h_env_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
