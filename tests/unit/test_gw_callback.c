// SPDX-License-Identifier: MIT
/* Unit tests of the NFSv4.1 backchannel relay: the session map, the relay
 * table (callback.c) and, with a fake transport plugged in
 * as "rdma", the relay through the gateway: a server CALL goes to the
 * client that owns the session under a gateway XID, the client's REPLY goes
 * back with the server's XID; CB_NULL, no owner, a foreign connection's
 * REPLY, the client leaving and the timeout. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "call.h"
#include "callback.h"
#include "cb_enc.h"
#include "chunking.h"
#include "config.h"
#include "gateway.h"
#include "log.h"
#include "pool.h"
#include "test_gw_harness.h"
#include "transport.h"

#define NFS CBE_NFS
#define CB_PROG CBE_CB_PROG

/* ---- 4: session map ---- */

static void t04_sessions(void **state)
{
	struct gw_cb_sessions *m = gw_cbs_new(3);
	uint8_t s1[16] = { 1 }, s2[16] = { 2 }, s3[16] = { 3 }, s4[16] = { 4 };
	int a, b, c;

	(void)state;
	assert_non_null(m);
	/* 4.1 bind and look up */
	assert_true(gw_cbs_bind(m, s1, &a, 100));
	assert_ptr_equal(gw_cbs_owner(m, s1), &a);
	assert_null(gw_cbs_owner(m, s2));
	assert_false(gw_cbs_bind(m, s1, &a, 100));	/* no change */
	/* 4.2 SEQUENCE from another live connection never steals */
	assert_false(gw_cbs_seen(m, s1, &b, 100));
	assert_ptr_equal(gw_cbs_owner(m, s1), &a);
	/* 4.3 owner gone: ownerless, no delivery */
	gw_cbs_owner_gone(m, &a);
	assert_null(gw_cbs_owner(m, s1));
	assert_int_equal(gw_cbs_ownerless(m), 1);
	/* 4.4 SEQUENCE with another client key: still ownerless */
	assert_false(gw_cbs_seen(m, s1, &b, 200));
	assert_null(gw_cbs_owner(m, s1));
	/* 4.5 same key (reconnect): re-bound */
	assert_true(gw_cbs_seen(m, s1, &b, 100));
	assert_ptr_equal(gw_cbs_owner(m, s1), &b);
	assert_int_equal(gw_cbs_ownerless(m), 0);
	/* 4.6 an explicit bind (BIND_CONN_TO_SESSION) moves it */
	assert_true(gw_cbs_bind(m, s1, &c, 300));
	assert_ptr_equal(gw_cbs_owner(m, s1), &c);
	/* 4.7 full: an ownerless entry is evicted before live ones */
	assert_true(gw_cbs_bind(m, s2, &a, 100));
	assert_true(gw_cbs_bind(m, s3, &b, 200));
	gw_cbs_owner_gone(m, &a);		/* s2 ownerless */
	assert_true(gw_cbs_bind(m, s4, &a, 400));
	assert_int_equal(gw_cbs_count(m), 3);
	assert_null(gw_cbs_owner(m, s2));
	assert_ptr_equal(gw_cbs_owner(m, s1), &c);
	assert_ptr_equal(gw_cbs_owner(m, s3), &b);
	assert_ptr_equal(gw_cbs_owner(m, s4), &a);
	assert_int_equal(gw_cbs_ownerless(m), 0);
	gw_cbs_free(m);
}

/* ---- 5: relay table ---- */

static void t05_relay(void **state)
{
	struct gw_cb_relay *r = gw_cbr_new(4, 0xfffffffe);
	struct gw_cb_pend *p[4];
	int c1, c2;

	(void)state;
	assert_non_null(r);
	p[0] = gw_cbr_add(r, &c1, 0xaaa, (void *)1, NULL, 1000);
	p[1] = gw_cbr_add(r, &c1, 0xaaa, (void *)2, NULL, 2000);	/* same server XID twice */
	p[2] = gw_cbr_add(r, &c2, 0xbbb, (void *)3, NULL, 3000);
	assert_non_null(p[0]);
	assert_non_null(p[1]);
	assert_non_null(p[2]);
	/* 5.1 distinct gateway XIDs (the counter wraps) */
	assert_int_not_equal(p[0]->cbp_cxid, p[1]->cbp_cxid);
	assert_int_equal(p[0]->cbp_cxid, 0xfffffffe);
	assert_int_equal(p[1]->cbp_cxid, 0xffffffff);
	assert_int_equal(p[2]->cbp_cxid, 0);
	/* 5.2 found only on the connection it went to */
	assert_ptr_equal(gw_cbr_find(r, &c1, p[1]->cbp_cxid), p[1]);
	assert_null(gw_cbr_find(r, &c2, p[1]->cbp_cxid));
	assert_ptr_equal(gw_cbr_find(r, &c2, 0), p[2]);
	/* 5.3 full */
	p[3] = gw_cbr_add(r, &c2, 0xccc, (void *)4, NULL, 4000);
	assert_non_null(p[3]);
	assert_null(gw_cbr_add(r, &c2, 0xddd, (void *)5, NULL, 5000));
	/* 5.4 expiry and per-connection iteration */
	assert_null(gw_cbr_first_expired(r, 999));
	assert_ptr_equal(gw_cbr_first_expired(r, 1000), p[0]);
	gw_cbr_remove(r, p[0]);
	assert_ptr_equal(gw_cbr_first_expired(r, 2500), p[1]);
	assert_ptr_equal(gw_cbr_first_of(r, &c1), p[1]);
	gw_cbr_remove(r, p[1]);
	assert_null(gw_cbr_first_of(r, &c1));
	assert_int_equal(gw_cbr_count(r), 2);
	gw_cbr_remove(r, p[1]);				/* twice: no harm */
	assert_int_equal(gw_cbr_count(r), 2);
	gw_cbr_free(r);
}

/* ---- 6-10: through the gateway, with a fake transport ---- */

/* The harness's fake transport, with a backchannel: what to_cb_reply got. */
struct cb_fake {
	struct h_fake cbf_fk;		/* first: the transport's tp */
	struct cbe_buf cbf_bind;	/* bind_session()'s reply */
	struct iovec cbf_bind_iov;
	/* to_cb_reply */
	unsigned cbf_ncb;
	void *cbf_handle;
	uint8_t cbf_msg[512];
	size_t cbf_len;
	/* 12: a heap handle that dies with the transport, like a be_bc */
	uint32_t *cbf_heap;
};

static void fake_destroy(void *tp)
{
	struct cb_fake *f = tp;

	free(f->cbf_heap);	/* be_pool_free frees its backchannel CALLs */
	f->cbf_heap = NULL;
	h_fake_destroy(tp);
}

static int fake_cb_reply(void *tp, void *handle, const struct iovec *iov, unsigned niov)
{
	struct cb_fake *f = tp;

	f->cbf_ncb++;
	f->cbf_handle = handle;
	if (f->cbf_heap && handle == f->cbf_heap) {
		assert_int_equal(*f->cbf_heap, 0xcb);	/* use: ASan sees a stale one */
		free(f->cbf_heap);			/* be_bc_reply consumes it */
		f->cbf_heap = NULL;
	} else if ((uintptr_t)handle > 0x10000) {
		/* a heap handle of a destroyed transport: never valid here */
		assert_int_equal(*(volatile uint32_t *)handle, 0xcb);
		fail_msg("callback reply through a handle its transport no longer has");
	}
	f->cbf_len = 0;
	for (unsigned i = 0; i < niov; i++) {
		assert_true(f->cbf_len + iov[i].iov_len <= sizeof(f->cbf_msg));
		memcpy(f->cbf_msg + f->cbf_len, iov[i].iov_base, iov[i].iov_len);
		f->cbf_len += iov[i].iov_len;
	}
	return 0;
}

static void start(struct h_gw *h, struct cb_fake *f)
{
	memset(f, 0, sizeof(*f));
	h_fake_init(&f->cbf_fk, "fake");
	f->cbf_fk.hf_ops.to_destroy = fake_destroy;
	f->cbf_fk.hf_ops.to_cb_reply = fake_cb_reply;
	assert_int_equal(h_fake_gw(h, &f->cbf_fk, "bytes_per_client = 1m\n"), 0);
}

/* Client fd sends a COMPOUND; the fake answers with a CREATE_SESSION reply
 * (session seed 0x90, back channel granted); the client reads it. */
static void bind_session(struct h_gw *h, struct cb_fake *f, int fd, uint32_t xid)
{
	uint8_t buf[256];
	struct gw_call *c;

	h_send(fd, buf, h_call(buf, xid, 2, NFS, 4, 43));
	h_pump(h, 20);
	assert_int_equal(f->cbf_fk.hf_ncalls, 1);
	c = f->cbf_fk.hf_calls[0];
	cbe_bind_reply(&f->cbf_bind, c->ca_gxid, 43, 0, 0x90, 0x2);
	f->cbf_bind_iov = cbe_io(&f->cbf_bind);
	h_fake_complete(&f->cbf_fk, c, &f->cbf_bind_iov, 1);
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 2000), (int)f->cbf_bind.n);
	assert_int_equal(chk_be32(buf), xid);
}

/* start(), then a client bound to the session (bind_session() with xid);
 * its fd. */
static int start_bound(struct h_gw *h, struct cb_fake *f, uint32_t xid)
{
	int fd;

	start(h, f);
	fd = h_client(h);
	bind_session(h, f, fd, xid);
	return fd;
}

/* Send a server CALL (CB_COMPOUND of session seed) through the path. */
static void server_cb(struct cb_fake *f, struct cbe_buf *w, uint32_t sxid, uint8_t seed,
		      void *handle)
{
	struct iovec v;

	cbe_cb_compound(w, sxid, 1, seed);
	v = cbe_io(w);
	gw_cb_call(f->cbf_fk.hf_path, handle, &v, 1);
}

/* 6. the relay: CALL on the owner's connection under a gateway XID, REPLY
 * back to the server with its own XID. */
static void t06_relay(void **state)
{
	struct h_gw h;
	struct cb_fake f;
	struct cbe_buf cb, rep;
	uint8_t buf[512];
	uint32_t gx;
	int fd, len;

	(void)state;
	fd = start_bound(&h, &f, 0x100);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_SESSIONS_BOUND], 1);
	server_cb(&f, &cb, 0x5e4e4, 0x90, (void *)0x1234);
	len = h_reply(&h, fd, buf, sizeof(buf), 2000);
	/* 6.1 same message, gateway XID, msg_type CALL */
	assert_int_equal(len, (int)cb.n);
	gx = chk_be32(buf);
	assert_int_not_equal(gx, 0x5e4e4);
	assert_int_equal(chk_be32(buf + 4), 0);
	assert_memory_equal(buf + 4, cb.b + 4, cb.n - 4);
	assert_int_equal(f.cbf_ncb, 0);
	/* 6.2 the client's REPLY goes back with the server's XID */
	cbe_reply_ok(&rep, gx);
	cbe_32(&rep, 0), cbe_32(&rep, 0), cbe_32(&rep, 0);	/* CB_COMPOUND4res: OK, "", 0 */
	rm_encode_hdr(buf, (uint32_t)rep.n, true);
	memcpy(buf + 4, rep.b, rep.n);
	h_send(fd, buf, rep.n + 4);
	h_pump(&h, 30);
	assert_int_equal(f.cbf_ncb, 1);
	assert_ptr_equal(f.cbf_handle, (void *)0x1234);
	assert_int_equal(f.cbf_len, rep.n);
	assert_int_equal(chk_be32(f.cbf_msg), 0x5e4e4);
	assert_memory_equal(f.cbf_msg + 4, rep.b + 4, rep.n - 4);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_RELAYED], 1);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_CALLS], 1);
	/* 6.3 the same REPLY again: nobody's, dropped */
	h_send(fd, buf, rep.n + 4);
	h_pump(&h, 30);
	assert_int_equal(f.cbf_ncb, 1);
	assert_int_equal(h.st.gs_ctr[GW_CTR_NOT_A_CALL], 1);
	assert_int_equal(h_gw_end(&h, fd), 0);
}

/* 7. CB_NULL answered locally; an unknown session gets SYSTEM_ERR and no
 * client sees it; a REPLY from another connection is not taken. */
static void t07_null_no_owner_foreign(void **state)
{
	struct h_gw h;
	struct cb_fake f;
	struct cbe_buf cb, rep;
	uint8_t buf[512];
	struct iovec v;
	uint32_t gx;
	int fd, other;

	(void)state;
	start(&h, &f);
	fd = h_client(&h);
	other = h_client(&h);
	bind_session(&h, &f, fd, 0x200);
	/* 7.1 CB_NULL */
	cbe_call(&cb, 0x77, CB_PROG, 1, 0);
	v = cbe_io(&cb);
	gw_cb_call(f.cbf_fk.hf_path, (void *)1, &v, 1);
	assert_int_equal(f.cbf_ncb, 1);
	assert_int_equal(chk_be32(f.cbf_msg), 0x77);
	assert_int_equal(chk_be32(f.cbf_msg + 4), 1);	/* REPLY */
	assert_int_equal(chk_be32(f.cbf_msg + 20), 0);	/* SUCCESS */
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_NULL_LOCAL], 1);
	/* 7.2 unknown session: SYSTEM_ERR, nothing on either client */
	server_cb(&f, &cb, 0x78, 0xa0, (void *)2);
	assert_int_equal(f.cbf_ncb, 2);
	assert_ptr_equal(f.cbf_handle, (void *)2);
	assert_int_equal(chk_be32(f.cbf_msg), 0x78);
	assert_int_equal(chk_be32(f.cbf_msg + 20), RPC_SYSTEM_ERR);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_NO_OWNER], 1);
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 100), -1);
	assert_int_equal(h_reply(&h, other, buf, sizeof(buf), 100), -1);
	/* 7.3 the owner's callback; the other connection answers with its XID */
	server_cb(&f, &cb, 0x79, 0x90, (void *)3);
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 2000), (int)cb.n);
	assert_int_equal(h_reply(&h, other, buf + 256, 256, 100), -1);
	gx = chk_be32(buf);
	cbe_reply_ok(&rep, gx);
	rm_encode_hdr(buf, (uint32_t)rep.n, true);
	memcpy(buf + 4, rep.b, rep.n);
	h_send(other, buf, rep.n + 4);
	h_pump(&h, 30);
	assert_int_equal(f.cbf_ncb, 2);			/* not relayed */
	assert_int_equal(h.st.gs_ctr[GW_CTR_NOT_A_CALL], 1);
	h_send(fd, buf, rep.n + 4);
	h_pump(&h, 30);
	assert_int_equal(f.cbf_ncb, 3);
	assert_ptr_equal(f.cbf_handle, (void *)3);
	assert_int_equal(chk_be32(f.cbf_msg), 0x79);
	close(fd);
	close(other);
	h_pump(&h, 20);
	assert_int_equal(h_gw_stop(&h), 0);
}

/* 8. the owner leaves with a callback pending: SYSTEM_ERR at once, and the
 * session has no owner afterwards. */
static void t08_client_gone(void **state)
{
	struct h_gw h;
	struct cb_fake f;
	struct cbe_buf cb;
	uint8_t buf[512];
	int fd;

	(void)state;
	fd = start_bound(&h, &f, 0x300);
	server_cb(&f, &cb, 0x81, 0x90, (void *)8);
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 2000), (int)cb.n);
	close(fd);
	h_pump(&h, 50);
	assert_int_equal(f.cbf_ncb, 1);
	assert_ptr_equal(f.cbf_handle, (void *)8);
	assert_int_equal(chk_be32(f.cbf_msg), 0x81);
	assert_int_equal(chk_be32(f.cbf_msg + 20), RPC_SYSTEM_ERR);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_CLIENT_GONE], 1);
	server_cb(&f, &cb, 0x82, 0x90, (void *)9);
	assert_int_equal(f.cbf_ncb, 2);
	assert_int_equal(chk_be32(f.cbf_msg + 20), RPC_SYSTEM_ERR);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_NO_OWNER], 1);
	assert_int_equal(h_gw_stop(&h), 0);
}

/* 9. the client never answers: SYSTEM_ERR after GW_CB_TIMEOUT_MS, not
 * before; a late REPLY is dropped. */
static void t09_timeout(void **state)
{
	struct h_gw h;
	struct cb_fake f;
	struct cbe_buf cb, rep;
	uint8_t buf[512];
	uint64_t t0;
	uint32_t gx;
	int fd;

	(void)state;
	fd = start_bound(&h, &f, 0x400);
	t0 = gw_now_ms();
	server_cb(&f, &cb, 0x91, 0x90, (void *)10);
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 2000), (int)cb.n);
	gx = chk_be32(buf);
	while (f.cbf_ncb == 0 && gw_now_ms() < t0 + GW_CB_TIMEOUT_MS + 2000)
		h_pump(&h, 20);
	assert_int_equal(f.cbf_ncb, 1);
	assert_true(gw_now_ms() >= t0 + GW_CB_TIMEOUT_MS);
	assert_int_equal(chk_be32(f.cbf_msg + 20), RPC_SYSTEM_ERR);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_TIMEOUT], 1);
	cbe_reply_ok(&rep, gx);
	rm_encode_hdr(buf, (uint32_t)rep.n, true);
	memcpy(buf + 4, rep.b, rep.n);
	h_send(fd, buf, rep.n + 4);
	h_pump(&h, 30);
	assert_int_equal(f.cbf_ncb, 1);
	assert_int_equal(h.st.gs_ctr[GW_CTR_NOT_A_CALL], 1);
	assert_int_equal(h_gw_end(&h, fd), 0);
}

/* 10. shutdown with a callback pending (the frontend goes first, as in
 * main.c): the server gets SYSTEM_ERR, no buffer leaks. */
static void t10_shutdown_pending(void **state)
{
	struct h_gw h;
	struct cb_fake f;
	struct cbe_buf cb;
	uint8_t buf[512];
	int fd;

	(void)state;
	fd = start_bound(&h, &f, 0x500);
	server_cb(&f, &cb, 0xa1, 0x90, (void *)11);
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 2000), (int)cb.n);
	assert_int_equal(h_gw_stop(&h), 0);
	assert_int_equal(f.cbf_ncb, 1);
	assert_ptr_equal(f.cbf_handle, (void *)11);
	assert_int_equal(chk_be32(f.cbf_msg + 20), RPC_SYSTEM_ERR);
	close(fd);
}

/* 11. the owner closes; another client (another key) sends SEQUENCE with
 * the session's ID: it does not get the session (exposure rule), the
 * server's callback is refused. */
static void t11_no_steal_by_sequence(void **state)
{
	struct h_gw h;
	struct cb_fake f;
	struct cbe_buf cb, call;
	uint8_t buf[512];
	int fd, other;

	(void)state;
	start(&h, &f);
	fd = h_client(&h);
	other = h_client(&h);
	bind_session(&h, &f, fd, 0x600);
	close(fd);
	h_pump(&h, 30);
	cbe_call(&call, 0x601, NFS, 4, 1);
	cbe_32(&call, 0), cbe_32(&call, 1), cbe_32(&call, 1), cbe_32(&call, 53);
	cbe_sid(&call, 0x90);
	rm_encode_hdr(buf, (uint32_t)call.n, true);
	memcpy(buf + 4, call.b, call.n);
	h_send(other, buf, call.n + 4);
	h_pump(&h, 30);
	assert_int_equal(f.cbf_fk.hf_ncalls, 1);		/* forwarded as usual */
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_SESSIONS_BOUND], 1);
	server_cb(&f, &cb, 0xb1, 0x90, (void *)12);
	assert_int_equal(f.cbf_ncb, 1);
	assert_int_equal(chk_be32(f.cbf_msg + 20), RPC_SYSTEM_ERR);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_NO_OWNER], 1);
	assert_int_equal(h_reply(&h, other, buf, sizeof(buf), 100), -1);
	close(other);
	h_pump(&h, 20);
	assert_int_equal(h_gw_stop(&h), 0);
}

/* 12. A reload takes away the path a pending callback came over: the
 * server gets SYSTEM_ERR while the handle is valid, and the client's late
 * REPLY no longer reaches that handle through whatever transport took the
 * path's slot since (on main: a use after free, seen by ASan). */
static void t12_path_gone(void **state)
{
	static const char gwk[] =
		"[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 16\n"
		"bytes_per_client = 1m\n[backend srv]\naddress = 127.0.0.1\n"
		"[backend b]\naddress = 127.0.0.2\n";
	struct h_gw h;
	struct cb_fake f;
	struct cbe_buf cb, rep;
	uint8_t buf[512];
	char text[512];
	uint32_t *hd;
	uint32_t gx;
	int fd;

	(void)state;
	fd = start_bound(&h, &f, 0x600);
	hd = malloc(sizeof(*hd));
	assert_non_null(hd);
	*hd = 0xcb;
	f.cbf_heap = hd;
	server_cb(&f, &cb, 0x77, 0x90, hd);
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 2000), (int)cb.n);
	gx = chk_be32(buf);
	/* 12.1 the route moves to backend b: the old path retires, is reaped */
	snprintf(text, sizeof(text), "%s[route nfs]\nprogram = nfs\ntransport = rdma\nbackend = b\n",
		 gwk);
	assert_int_equal(h_gw_reload(&h, text), 0);
	h_pump(&h, 30);
	assert_int_equal(f.cbf_fk.hf_ndestroy, 1);
	assert_int_equal(gw_ctx_nretiring(h.gw), 0);
	/* 12.2 a new route takes the freed path slot */
	snprintf(text, sizeof(text), "%s[route nfs]\nprogram = nfs\ntransport = rdma\nbackend = b\n"
		 "[route acl]\nprogram = 100227\ntransport = rdma\nbackend = b\n", gwk);
	assert_int_equal(h_gw_reload(&h, text), 0);
	h_pump(&h, 20);
	/* 12.3 the client answers late: nobody's now */
	cbe_reply_ok(&rep, gx);
	cbe_32(&rep, 0), cbe_32(&rep, 0), cbe_32(&rep, 0);
	rm_encode_hdr(buf, (uint32_t)rep.n, true);
	memcpy(buf + 4, rep.b, rep.n);
	h_send(fd, buf, rep.n + 4);
	h_pump(&h, 30);
	assert_int_equal(h.st.gs_ctr[GW_CTR_NOT_A_CALL], 1);
	assert_int_equal(h.st.gs_ctr[GW_CTR_CB_RELAYED], 0);
	/* 12.4 the server was answered SYSTEM_ERR at the path's end, once */
	assert_int_equal(f.cbf_ncb, 1);
	assert_ptr_equal(f.cbf_handle, hd);
	assert_int_equal(chk_be32(f.cbf_msg), 0x77);
	assert_int_equal(chk_be32(f.cbf_msg + 20), RPC_SYSTEM_ERR);
	assert_int_equal(h_gw_end(&h, fd), 0);
	assert_int_equal(f.cbf_ncb, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t04_sessions),
		cmocka_unit_test(t05_relay),
		cmocka_unit_test(t06_relay),
		cmocka_unit_test(t07_null_no_owner_foreign),
		cmocka_unit_test(t08_client_gone),
		cmocka_unit_test(t09_timeout),
		cmocka_unit_test(t10_shutdown_pending),
		cmocka_unit_test(t11_no_steal_by_sequence),
		cmocka_unit_test(t12_path_gone),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
