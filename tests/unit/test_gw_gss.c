// SPDX-License-Identifier: MIT
/* Host tests of the RPCSEC_GSS XID rule (gateway/gss_xid.c): GSS calls
 * keep the client's XID to the server, and a GSS call whose XID another
 * client has in flight (or, for a call that changes something, in the DRC
 * window) waits instead of going out as a second live call with that XID.
 * Loopback only (test_gw_harness.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "chunking.h"
#include "gateway.h"
#include "log.h"
#include "test_gw_harness.h"

#define NFS 100003u

/* Record-marked NFSv3 call of procedure proc with an RPCSEC_GSS DATA
 * credential (RFC 2203 5: version 1, gss_proc DATA, seq_num, service none,
 * a 4-byte handle) and an 8-byte verifier, then the tag word the server
 * echoes. */
static size_t gss_call_proc(uint8_t *out, uint32_t xid, uint32_t proc, uint32_t seq, uint32_t tag)
{
	const uint32_t w[] = { xid, RPC_CALL, 2, NFS, 3, proc,
			       RPC_RPCSEC_GSS, 24, 1, 0, seq, RPC_GSS_SVC_NONE, 4, 0xc0ffee,
			       RPC_RPCSEC_GSS, 8, 0x11111111, 0x22222222, tag };
	size_t o = 4;

	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++, o += 4)
		chk_put_be32(out + o, w[i]);
	rm_encode_hdr(out, (uint32_t)(o - 4), true);
	return o;
}

/* gss_call_proc() of NFSv3 WRITE (7), a call a server's DRC keeps. */
static size_t gss_call(uint8_t *out, uint32_t xid, uint32_t seq, uint32_t tag)
{
	return gss_call_proc(out, xid, 7, seq, tag);
}

static uint32_t reply_xid(const uint8_t *r) { return chk_be32(r); }
static uint32_t reply_tag(const uint8_t *r) { return chk_be32(r + 24); }

/* 1. The server sees the client's own XID (a remapped one would break the
 * verifier's MIC, RFC 2203 5.3.1); an AUTH_NONE call is still remapped. */
static void t01_gss_keeps_xid(void **state)
{
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int fd;

	h_env_listen(e);
	h_env_nfs_gw(e, "");
	fd = h_client(h);
	h_send(fd, buf, gss_call(buf, 0x5eed0001, 1, 0xa1));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(reply_xid(buf), 0x5eed0001);
	assert_int_equal(reply_tag(buf), 0xa1);
	assert_int_equal(h_server_xid(&e->he_srv, 0), 0x5eed0001);
	h_send(fd, buf, h_call(buf, 0x5eed0002, 2, NFS, 3, 0xa2));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_not_equal(h_server_xid(&e->he_srv, 1), 0x5eed0002);
	assert_int_equal(h->st.gs_ctr[GW_CTR_GSS_XID_WAIT], 0);
	close(fd);
	h_pump(h, 20);
}

/* 2. Two clients, one GSS XID: the second call waits (counted) while the
 * first is in flight, and goes out once that one is answered and its DRC
 * window (0 here) is over; never two live calls with one XID.  A
 * retransmission of the waiting call is dropped. */
static void t02_same_xid_waits(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int a, b;

	h_server_set(s, true, 0);	/* replies held back */
	h_env_listen(e);
	h_env_nfs_gw(e, "drc_window = 0");
	a = h_client(h);
	b = h_client(h);
	h_send(a, buf, gss_call(buf, 0x77, 1, 0xa));
	h_pump(h, 100);
	h_send(b, buf, gss_call(buf, 0x77, 9, 0xb));
	h_send(b, buf, gss_call(buf, 0x77, 9, 0xb));	/* b retransmits */
	h_pump(h, 300);
	assert_int_equal(h_server_calls(s), 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_GSS_XID_WAIT], 1);
	assert_int_equal(h->st.gs_ctr[GW_CTR_RETRANS_INFLIGHT], 1);
	h_server_set(s, false, 0);
	assert_int_equal(h_reply(h, a, buf, sizeof(buf), 3000), 28);
	assert_int_equal(reply_xid(buf), 0x77);
	assert_int_equal(reply_tag(buf), 0xa);
	assert_int_equal(h_reply(h, b, buf, sizeof(buf), 3000), 28);
	assert_int_equal(reply_xid(buf), 0x77);
	assert_int_equal(reply_tag(buf), 0xb);
	assert_int_equal(h_server_calls(s), 2);
	assert_int_equal(h_server_xid(s, 1), 0x77);
	close(a);
	close(b);
	h_pump(h, 20);
}

/* 3. Within the DRC window the XID stays busy: the waiting call goes only
 * after the window; other GSS XIDs are not held up meanwhile. */
static void t03_drc_window(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int a, b;

	h_env_listen(e);
	h_env_nfs_gw(e, "drc_window = 600ms");
	a = h_client(h);
	b = h_client(h);
	h_send(a, buf, gss_call(buf, 0x99, 1, 0xa));
	assert_int_equal(h_reply(h, a, buf, sizeof(buf), 3000), 28);
	h_send(b, buf, gss_call(buf, 0x99, 5, 0xb));
	h_send(b, buf, gss_call(buf, 0x9a, 6, 0xc));	/* another XID: not held up */
	assert_int_equal(h_reply(h, b, buf, sizeof(buf), 400), 28);
	assert_int_equal(reply_tag(buf), 0xc);
	assert_int_equal(h_server_calls(s), 2);
	assert_int_equal(h->st.gs_ctr[GW_CTR_GSS_XID_WAIT], 1);
	assert_int_equal(h_reply(h, b, buf, sizeof(buf), 3000), 28);
	assert_int_equal(reply_tag(buf), 0xb);
	assert_int_equal(h_server_calls(s), 3);
	assert_int_equal(h_server_xid(s, 2), 0x99);
	close(a);
	close(b);
	h_pump(h, 20);
}

/* 4. A client that leaves while its call waits: the call ends, cancelled,
 * and gives its buffers back (teardown checks the pool). */
static void t04_waiter_leaves(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int a, b;

	h_server_set(s, true, 0);
	h_env_listen(e);
	h_env_nfs_gw(e, "drc_window = 0");
	a = h_client(h);
	b = h_client(h);
	h_send(a, buf, gss_call(buf, 0x55, 1, 0xa));
	h_pump(h, 100);
	h_send(b, buf, gss_call(buf, 0x55, 2, 0xb));
	h_pump(h, 100);
	assert_int_equal(h->st.gs_ctr[GW_CTR_GSS_XID_WAIT], 1);
	close(b);
	h_pump(h, 100);
	assert_int_equal(h->st.gs_ctr[GW_CTR_CALLS_CANCELLED], 1);
	h_server_set(s, false, 0);
	assert_int_equal(h_reply(h, a, buf, sizeof(buf), 3000), 28);
	h_pump(h, 200);
	assert_int_equal(h_server_calls(s), 1);
	close(a);
	h_pump(h, 20);
	assert_int_equal(gw_ctx_calls_avail(h->gw), h->cf->cf_max_calls);
}

/* 5. An answered GSS read (GETATTR, which no DRC keeps) frees its XID at
 * once: another client's call with that XID goes without waiting, even
 * within the DRC window; a WRITE's XID stays busy. */
static void t05_read_frees_xid(void **state)
{
	struct h_env *e = *state;
	struct h_server *s = &e->he_srv;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	int a, b;

	h_env_listen(e);
	h_env_nfs_gw(e, "drc_window = 60");
	a = h_client(h);
	b = h_client(h);
	h_send(a, buf, gss_call_proc(buf, 0x55, 1, 1, 0xa));	/* GETATTR */
	assert_int_equal(h_reply(h, a, buf, sizeof(buf), 3000), 28);
	h_send(b, buf, gss_call_proc(buf, 0x55, 1, 7, 0xb));
	assert_int_equal(h_reply(h, b, buf, sizeof(buf), 1000), 28);
	assert_int_equal(reply_tag(buf), 0xb);
	assert_int_equal(h->st.gs_ctr[GW_CTR_GSS_XID_WAIT], 0);
	assert_int_equal(h_server_xid(s, 1), 0x55);
	h_send(a, buf, gss_call(buf, 0x56, 2, 0xc));		/* WRITE */
	assert_int_equal(h_reply(h, a, buf, sizeof(buf), 3000), 28);
	h_send(b, buf, gss_call(buf, 0x56, 8, 0xd));
	assert_int_equal(h_reply(h, b, buf, sizeof(buf), 300), -1);	/* waits */
	assert_int_equal(h->st.gs_ctr[GW_CTR_GSS_XID_WAIT], 1);
	assert_int_equal(h_server_calls(s), 3);
	close(a);
	close(b);
	h_pump(h, 20);
}

/* A record-marked call of NFSv3 procedure proc, RPC version rpcvers, with
 * the RPCSEC_GSS credential words cred[5] (version, gss_proc, seq,
 * service, handle length 0) and an 8-byte verifier. */
static size_t gss_call_cred(uint8_t *out, uint32_t xid, uint32_t rpcvers, uint32_t proc,
			    const uint32_t cred[5])
{
	const uint32_t w[] = { xid, RPC_CALL, rpcvers, NFS, 3, proc, RPC_RPCSEC_GSS, 20,
			       cred[0], cred[1], cred[2], cred[3], cred[4],
			       RPC_RPCSEC_GSS, 8, 0x11111111, 0x22222222, 0xfe };
	size_t o = 4;

	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++, o += 4)
		chk_put_be32(out + o, w[i]);
	rm_encode_hdr(out, (uint32_t)(o - 4), true);
	return o;
}

/* 6. A malformed RPCSEC_GSS credential gets what the Linux nfsd answers
 * (svcauth_gss_accept(), RFC 2203 5.3.3.3): version 0 or 2 AUTH_BADCRED
 * (not AUTH_REJECTEDCRED), an unknown gss_proc AUTH_REJECTEDCRED on the
 * NULL procedure and AUTH_BADCRED on any other, and the RPC version before
 * the credential (RPC_MISMATCH); all answered here, none forwarded.  An
 * unknown service goes to the server, which alone can answer it (its
 * answer depends on the context and the verifier's MIC). */
static void t06_bad_cred_answers(void **state)
{
	static const struct {
		const char *what;
		uint32_t rpcvers, proc, cred[5];
		uint32_t reject, stat;		/* MSG_DENIED: reject_stat, auth_stat or low */
	} v[] = {
		{ "version 0", 2, 1, { 0, 0, 1, 1, 0 }, RPC_AUTH_ERROR, RPC_AUTH_BADCRED },
		{ "version 0, NULL", 2, 0, { 0, 0, 1, 1, 0 }, RPC_AUTH_ERROR, RPC_AUTH_BADCRED },
		{ "version 2", 2, 1, { 2, 0, 1, 1, 0 }, RPC_AUTH_ERROR, RPC_AUTH_BADCRED },
		{ "gss_proc 5, NULL", 2, 0, { 1, 5, 1, 1, 0 }, RPC_AUTH_ERROR, RPC_AUTH_REJECTEDCRED },
		{ "gss_proc 5, GETATTR", 2, 1, { 1, 5, 1, 1, 0 }, RPC_AUTH_ERROR, RPC_AUTH_BADCRED },
		{ "RPC version 3, GSS version 0", 3, 1, { 0, 0, 1, 1, 0 }, RPC_MISMATCH, 2 },
	};
	struct h_env *e = *state;
	struct h_gw *h = &e->he_gw;
	uint8_t buf[256];
	uint32_t unk[5] = { 1, 0, 1, 9, 0 };
	int fd;

	h_env_listen(e);
	h_env_nfs_gw(e, "");
	fd = h_client(h);
	for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		print_message("t06 %u: %s\n", i, v[i].what);
		h_send(fd, buf, gss_call_cred(buf, 0x600 + i, v[i].rpcvers, v[i].proc, v[i].cred));
		assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000),
				 v[i].reject == RPC_MISMATCH ? 24 : 20);
		assert_int_equal(chk_be32(buf), 0x600 + i);
		assert_int_equal(chk_be32(buf + 8), RPC_MSG_DENIED);
		assert_int_equal(chk_be32(buf + 12), v[i].reject);
		assert_int_equal(chk_be32(buf + 16), v[i].stat);
	}
	assert_int_equal(h_server_calls(&e->he_srv), 0);
	h_send(fd, buf, gss_call_cred(buf, 0x6ff, 2, 1, unk));	/* service 9: forwarded */
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(h_server_calls(&e->he_srv), 1);
	assert_int_equal(h_server_xid(&e->he_srv, 0), 0x6ff);
	close(fd);
	h_pump(h, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t01_gss_keeps_xid, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t02_same_xid_waits, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t03_drc_window, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t04_waiter_leaves, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t05_read_frees_xid, h_env_setup, h_env_teardown),
		cmocka_unit_test_setup_teardown(t06_bad_cred_answers, h_env_setup, h_env_teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
