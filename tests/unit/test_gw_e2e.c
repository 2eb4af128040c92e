// SPDX-License-Identifier: MIT
/* End-to-end host tests of the gateway path: socketpair clients -> frontend
 * -> gateway -> TCP transport -> tiny RPC server on 127.0.0.1 (see
 * test_gw_harness.h).  Loopback only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "chunking.h"
#include "gateway.h"
#include "log.h"
#include "nfs_enc.h"
#include "test_gw_harness.h"

#define NFS 100003u

static uint32_t reply_xid(const uint8_t *r) { return chk_be32(r); }
static uint32_t reply_tag(const uint8_t *r) { return chk_be32(r + 24); }

/* Six calls on fd: XIDs base + i, tags i. */
static void send_six(int fd, uint32_t base)
{
	uint8_t buf[64];

	for (uint32_t i = 0; i < 6; i++)
		h_send(fd, buf, h_call(buf, base + i, 2, NFS, 3, i));
}

/* send_six(base)'s six replies, in any order, each under its own XID. */
static void six_answered(struct h_gw *h, int fd, uint32_t base)
{
	bool seen[6] = { false };
	uint8_t buf[256];

	for (int i = 0; i < 6; i++) {
		assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
		assert_int_equal(reply_xid(buf), base + reply_tag(buf));
		seen[reply_tag(buf)] = true;
	}
	for (int i = 0; i < 6; i++)
		assert_true(seen[i]);
}

/* 1. A call comes back with the client's XID and its own result; the
 * server saw a different (gateway) XID. */
static void t01_one_call(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int fd, n;

	h_env_listen(e);
	h_env_nfs_gw(e, "");
	fd = h_client(h);
	h_send(fd, buf, h_call(buf, 0x11111111, 2, NFS, 3, 0xa1));
	n = h_reply(h, fd, buf, sizeof(buf), 3000);
	assert_int_equal(n, 28);
	assert_int_equal(reply_xid(buf), 0x11111111);
	assert_int_equal(reply_tag(buf), 0xa1);
	assert_int_equal(h_server_calls(s), 1);
	assert_int_not_equal(h_server_xid(s, 0), 0x11111111);
	assert_int_equal(h->st.gs_ctr[GW_CTR_REPLIES], 1);
	close(fd);
	h_pump(h, 20);
}

/* 2. Interleaved clients using the same XIDs each get their own replies;
 * the server sees distinct gateway XIDs. */
static void t02_interleaved(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int fd[3];

	h_env_listen(e);
	h_env_nfs_gw(e, "");
	for (int i = 0; i < 3; i++)
		fd[i] = h_client(h);
	for (uint32_t round = 0; round < 4; round++)
		for (int i = 0; i < 3; i++)
			h_send(fd[i], buf, h_call(buf, 100 + round, 2, NFS, 3, (uint32_t)(i << 8) | round));
	for (int i = 0; i < 3; i++)
		for (uint32_t round = 0; round < 4; round++) {
			assert_int_equal(h_reply(h, fd[i], buf, sizeof(buf), 3000), 28);
			assert_int_equal(reply_xid(buf), 100 + round);
			assert_int_equal(reply_tag(buf), (uint32_t)(i << 8) | round);
		}
	assert_int_equal(h_server_calls(s), 12);
	for (unsigned a = 0; a < 12; a++)
		for (unsigned b = a + 1; b < 12; b++)
			assert_int_not_equal(h_server_xid(s, a), h_server_xid(s, b));
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	h_pump(h, 20);
}

/* 3. Local replies, table: unrouted program, version outside the route,
 * RPC version 3, AUTH_TLS probe. */
static void t03_local_replies(void **state)
{
	static const struct {
		uint32_t rpcvers, prog, vers;
		uint32_t words[4];	/* expected reply words after the XID */
		unsigned nwords;
	} t[] = {
		/* 1 PROG_UNAVAIL */ { 2, 100099, 1, { 1, 0, 0, 0 }, 4 },
		/* 2 PROG_MISMATCH */ { 2, NFS, 2, { 1, 0, 0, 0 }, 4 },
		/* 3 RPC_MISMATCH: REPLY, MSG_DENIED, RPC_MISMATCH, low 2 */ { 3, NFS, 3, { 1, 1, 0, 2 }, 4 },
	};
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int fd, n;

	h_env_listen(e);
	h_env_nfs_gw(e, "");
	fd = h_client(h);
	for (unsigned i = 0; i < 3; i++) {
		h_send(fd, buf, h_call(buf, 0x500 + i, t[i].rpcvers, t[i].prog, t[i].vers, 0));
		n = h_reply(h, fd, buf, sizeof(buf), 2000);
		assert_true(n >= 20);
		assert_int_equal(reply_xid(buf), 0x500 + i);
		for (unsigned k = 0; k < t[i].nwords; k++)
			assert_int_equal(chk_be32(buf + 4 + 4 * k), t[i].words[k]);
		if (i == 0)
			assert_int_equal(chk_be32(buf + 20), 1);	/* PROG_UNAVAIL */
		if (i == 1) {
			assert_int_equal(chk_be32(buf + 20), 2);	/* PROG_MISMATCH */
			assert_int_equal(chk_be32(buf + 24), 3);
			assert_int_equal(chk_be32(buf + 28), 4);
		}
	}
	/* AUTH_TLS probe (RFC 9289 4.1): rejected, AUTH_ERROR/BADCRED. */
	h_call(buf, 0x600, 2, NFS, 3, 0);
	chk_put_be32(buf + 28, RPC_AUTH_TLS);
	h_send(fd, buf, 48);
	n = h_reply(h, fd, buf, sizeof(buf), 2000);
	assert_int_equal(n, 20);
	assert_int_equal(chk_be32(buf + 8), 1);		/* MSG_DENIED */
	assert_int_equal(chk_be32(buf + 12), 1);	/* AUTH_ERROR */
	assert_int_equal(h_server_calls(s), 0);
	assert_int_equal(h->st.gs_ctr[GW_CTR_LOCAL_PROG_UNAVAIL], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_LOCAL_PROG_MISMATCH], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_LOCAL_RPC_MISMATCH], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_LOCAL_AUTH_ERROR], 1);
	close(fd);
	h_pump(h, 20);
}

/* 4. A retransmission of an answered non-idempotent call (an NFSv3 WRITE)
 * goes out with the same gateway XID (the server's DRC recognises it). */
static void t04_retransmission(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int fd;

	h_env_listen(e);
	h_env_nfs_gw(e, "");
	fd = h_client(h);
	for (int i = 0; i < 2; i++) {
		h_send(fd, buf, h_call_proc(buf, 0x77, 2, NFS, 3, 7, 9));
		assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
		assert_int_equal(reply_xid(buf), 0x77);
	}
	h_send(fd, buf, h_call_proc(buf, 0x78, 2, NFS, 3, 7, 9));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(h_server_calls(s), 3);
	assert_int_equal(h_server_xid(s, 0), h_server_xid(s, 1));
	assert_int_not_equal(h_server_xid(s, 0), h_server_xid(s, 2));
	assert_int_equal(h->st.gs_ctr[GW_CTR_RETRANS_RESENT], 1);
	close(fd);
	h_pump(h, 20);
}

/* 5. Backend not there at first: calls are held, never answered with an
 * error, and go through once it listens. */
static void t05_held_until_up(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int fd;

	/* the server's port is reserved, not listening: connection refused */
	h_env_nfs_gw(e, "");
	fd = h_client(h);
	h_send(fd, buf, h_call(buf, 0x42, 2, NFS, 3, 5));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 200), -1);	/* nothing yet */
	assert_true(h->st.gs_ctr[GW_CTR_CALLS_HELD] >= 1);
	assert_true(h->st.gs_ctr[GW_CTR_BACKEND_CONNECT_FAILED] >= 1);
	h_env_listen(e);
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(reply_xid(buf), 0x42);
	assert_int_equal(reply_tag(buf), 5);
	close(fd);
	h_pump(h, 20);
}

/* 6. The server drops the connection on the 2nd call without answering:
 * the gateway reconnects and re-sends it with the same gateway XID. */
static void t06_reconnect_resend(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int fd;

	h_server_set(s, false, 2);
	h_env_listen(e);
	h_env_nfs_gw(e, "");
	fd = h_client(h);
	h_send(fd, buf, h_call(buf, 1, 2, NFS, 3, 1));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	h_send(fd, buf, h_call(buf, 2, 2, NFS, 3, 2));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(reply_xid(buf), 2);
	assert_int_equal(reply_tag(buf), 2);
	assert_int_equal(h_server_calls(s), 3);
	assert_int_equal(h_server_xid(s, 1), h_server_xid(s, 2));
	assert_true(h->st.gs_ctr[GW_CTR_BACKEND_RESENT] >= 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_BACKEND_DISCONNECTS], 1);
	close(fd);
	h_pump(h, 20);
}

/* 7. Backpressure: with calls_per_client = 2 and replies held back, the
 * server sees 2 calls, not 6; all 6 are answered once released. */
static void t07_backpressure(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	int fd;

	h_server_set(s, true, 0);
	h_env_listen(e);
	h_env_nfs_gw(e, "calls_per_client = 2");
	fd = h_client(h);
	send_six(fd, 10);
	h_pump(h, 300);
	assert_int_equal(h_server_calls(s), 2);
	assert_true(h->st.gs_ctr[GW_CTR_CLIENT_PAUSED] >= 1);
	h_server_set(s, false, 0);
	six_answered(h, fd, 10);
	close(fd);
	h_pump(h, 20);
}

/* 8. A client that disconnects with calls in flight: its calls are
 * cancelled, the late reply is dropped as unmatched, nothing leaks; a
 * retransmission while in flight is dropped. */
static void t08_client_gone(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int fd;

	h_server_set(s, true, 0);
	h_env_listen(e);
	h_env_nfs_gw(e, "");
	fd = h_client(h);
	h_send(fd, buf, h_call(buf, 0x99, 2, NFS, 3, 1));
	h_send(fd, buf, h_call(buf, 0x99, 2, NFS, 3, 1));	/* retransmission */
	h_pump(h, 200);
	assert_int_equal(h_server_calls(s), 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_RETRANS_INFLIGHT], 1);
	close(fd);
	h_pump(h, 100);
	assert_int_equal(h->st.gs_ctr[GW_CTR_CALLS_CANCELLED], 1);
	assert_int_equal(fe_nconns(h->fe), 0);
	h_server_set(s, false, 0);
	h_pump(h, 200);
	assert_int_equal(h->st.gs_ctr[GW_CTR_BACKEND_UNMATCHED], 1);
	assert_int_equal(gw_ctx_calls_avail(h->gw), h->cf->cf_max_calls);
}

/* 9. Hold queue bound: with held_calls = 2 and the server away, the client
 * stops being read after the 3rd call (none is failed); once the server
 * listens, every call is answered. */
static void t09_hold_full(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	int fd;

	h_env_nfs_gw(e, "held_calls = 2");
	fd = h_client(h);
	send_six(fd, 0x900);
	h_pump(h, 200);
	assert_int_equal(h->st.gs_ctr[GW_CTR_CALLS], 3);
	assert_int_equal(h->st.gs_ctr[GW_CTR_HOLD_FULL], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_CALLS_FAILED], 0);
	h_env_listen(e);
	six_answered(h, fd, 0x900);
	close(fd);
	h_pump(h, 20);
}

/* 10. call_timeout: a call the server never answers is cancelled and the
 * client's connection closed (as nfsd closes a connection it dropped a
 * request on); the client reconnects, retransmits and is answered. */
static void t10_call_timeout(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	uint64_t t0;
	int fd;

	h_server_set(s, true, 0);		/* the server keeps its replies */
	h_env_listen(e);
	h_env_nfs_gw(e, "call_timeout = 300ms");
	fd = h_client(h);
	t0 = gw_now_ms();
	h_send(fd, buf, h_call(buf, 0x501, 2, NFS, 3, 1));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 0);	/* closed */
	assert_true(gw_now_ms() - t0 >= 300);
	assert_int_equal(h_server_calls(s), 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_CALL_TIMEOUTS], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_CALLS_CANCELLED], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_CLIENTS_CLOSED], 1);
	assert_int_equal(gw_ctx_calls_avail(h->gw), 64);
	close(fd);
	/* the client is back: its retransmission is answered */
	h_server_set(s, false, 0);
	fd = h_client(h);
	h_send(fd, buf, h_call(buf, 0x501, 2, NFS, 3, 1));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(reply_xid(buf), 0x501);
	assert_int_equal(reply_tag(buf), 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_CALL_TIMEOUTS], 1);
	close(fd);
	h_pump(h, 20);
}

/* The last call's gateway XID as the server saw it. */
static uint32_t last_gxid(struct h_server *s)
{
	uint8_t b[4];

	h_server_last(s, b, sizeof(b));
	return chk_be32(b);
}

/* 11. Answered idempotent calls leave the XID map at once: a WRITE's
 * mapping outlives more answered GETATTRs than the map has entries, so
 * its retransmission still gets its gateway XID and nothing is evicted;
 * a GETATTR's retransmission is simply sent afresh. */
static void t11_idempotent_not_kept(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	unsigned flood = 136 * 32;	/* > max_calls + 4096, the map's entries */
	uint8_t buf[256];
	uint32_t write_gxid, ga_gxid;
	int fd;

	h_env_listen(e);
	h_env_nfs_gw(e, "");
	fd = h_client(h);
	h_send(fd, buf, h_call_proc(buf, 0x7000, 2, NFS, 3, 7, 1));	/* WRITE */
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	write_gxid = last_gxid(s);
	for (unsigned i = 0; i < flood; i += 32) {
		for (unsigned j = i; j < i + 32; j++)
			h_send(fd, buf, h_call(buf, 0x10000 + j, 2, NFS, 3, 2));
		for (unsigned j = i; j < i + 32; j++)
			assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	}
	ga_gxid = last_gxid(s);
	assert_int_equal(h->st.gs_ctr[GW_CTR_XMAP_EVICTED], 0);
	h_send(fd, buf, h_call_proc(buf, 0x7000, 2, NFS, 3, 7, 3));	/* WRITE again */
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(reply_xid(buf), 0x7000);
	assert_int_equal(last_gxid(s), write_gxid);
	assert_int_equal(h->st.gs_ctr[GW_CTR_RETRANS_RESENT], 1);
	h_send(fd, buf, h_call(buf, 0x10000 + flood - 1, 2, NFS, 3, 4));	/* GETATTR again */
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_not_equal(last_gxid(s), ga_gxid);
	assert_int_equal(h->st.gs_ctr[GW_CTR_RETRANS_RESENT], 1);
	close(fd);
	h_pump(h, 20);
}

/* Record-marked NFSv4 COMPOUND of kind: 0 PUTROOTFH REMOVE (NFSv4.0),
 * 1 PUTROOTFH GETATTR (NFSv4.0), 2 SEQUENCE PUTROOTFH (NFSv4.1). */
static size_t v4_call(uint8_t *out, size_t cap, uint32_t xid, int kind)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, out + 4, cap - 4);
	nfs_enc_call_hdr(&xe, xid, NFS, 4, 1);
	nfs_enc_compound_args(&xe, kind == 2 ? 1 : 0, 2);
	if (kind == 2)
		nfs_enc_fmt(&xe, "w i www w w", 53u, 1u, 7u, 0u, 0u, 0u, 24u);
	else if (kind == 1)
		nfs_enc_fmt(&xe, "w w b", 24u, 9u, 1u, 0x18u);
	else
		nfs_enc_fmt(&xe, "w w o", 24u, 28u, 4u);
	rm_encode_hdr(out, (uint32_t)xe.xe_len, true);
	return xe.xe_len + 4;
}

/* 12. NFSv4 COMPOUNDs: one under a session slot (NFSv4.1, SEQUENCE first)
 * leaves the XID map once answered, its retransmission sent under a new
 * gateway XID (the slot, not the XID, catches replays: RFC 8881 2.10.6); so
 * does an NFSv4.0 one that changes nothing (PUTROOTFH GETATTR).  An NFSv4.0
 * REMOVE keeps its mapping. */
static void t12_v4_kept_or_not(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[512];
	uint32_t gxid[2];
	int fd;

	h_env_listen(e);
	h_env_nfs_gw(e, "");
	fd = h_client(h);
	for (int kind = 0; kind < 3; kind++) {
		for (int i = 0; i < 2; i++) {
			h_send(fd, buf, v4_call(buf, sizeof(buf), 0x4100 + kind, kind));
			assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
			assert_int_equal(reply_xid(buf), 0x4100 + kind);
			gxid[i] = last_gxid(s);
		}
		if (kind == 0)
			assert_int_equal(gxid[0], gxid[1]);
		else
			assert_int_not_equal(gxid[0], gxid[1]);
	}
	assert_int_equal(h_server_calls(s), 6);
	assert_int_equal(h->st.gs_ctr[GW_CTR_RETRANS_RESENT], 1);
	close(fd);
	h_pump(h, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t01_one_call, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t02_interleaved, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t03_local_replies, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t04_retransmission, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t05_held_until_up, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t06_reconnect_resend, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t07_backpressure, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t08_client_gone, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t09_hold_full, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t10_call_timeout, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t11_idempotent_not_kept, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t12_v4_kept_or_not, h_env_setup, h_env_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
