// SPDX-License-Identifier: MIT
/*
 * Unit tests for the ONC RPC v2 header codecs (chunking/rpc.c): RFC 5531
 * sections 8.2 and 9 and appendix A, RFC 2203 section 5 (RPCSEC_GSS
 * credential), RFC 9289 section 4.1 (AUTH_TLS).  Vectors are words written
 * by hand from those texts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"
#include "vectors.h"

#define W(...) ((const uint32_t[]){ __VA_ARGS__ }), sizeof((const uint32_t[]){ __VA_ARGS__ }) / 4
#define XID 0xdeadbeefu

static uint8_t buf[2048];

static bool call_words(const uint32_t *w, size_t n, struct xdr_cur *xc, struct iovec *one,
		       struct rpc_call_hdr *call)
{
	size_t len = vec_words(buf, w, n);

	xdr_cur_init_buf(xc, one, buf, len);
	return rpc_call_decode(xc, call);
}

/* 1. RFC 5531 9: NFSv3 NULL call, AUTH_NONE cred and verf, 40 bytes. */
static void t01_call_null(void **state)
{
	struct rpc_call_hdr c;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	assert_true(call_words(W(XID, RPC_CALL, 2, 100003, 3, 0, 0, 0, 0, 0), &xc, &one, &c));
	assert_int_equal(c.rc_xid, XID);
	assert_int_equal(c.rc_rpcvers, 2);
	assert_int_equal(c.rc_prog, 100003);
	assert_int_equal(c.rc_vers, 3);
	assert_int_equal(c.rc_proc, 0);
	assert_int_equal(c.rc_cred.oa_flavor, RPC_AUTH_NONE);
	assert_int_equal(c.rc_verf.oa_body.xs_len, 0);
	assert_int_equal(c.rc_xid_pos, 0);
	assert_int_equal(c.rc_args_pos, 40);
	assert_int_equal(c.rc_gss_service, 0);
	assert_false(c.rc_tls_probe);

	/* every truncation fails SHORT */
	for (size_t cut = 0; cut < 40; cut++) {
		xdr_cur_init_buf(&xc, &one, buf, cut);
		assert_false(rpc_call_decode(&xc, &c));
		assert_int_equal(xc.xc_err, XDR_ERR_SHORT);
	}
}

/* 2. RFC 5531 9: rpcvers is reported, not enforced (caller answers
 * RPC_MISMATCH); msg_type must be CALL. */
static void t02_call_vers_and_type(void **state)
{
	struct rpc_call_hdr c;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	assert_true(call_words(W(XID, RPC_CALL, 3, 100003, 3, 0, 0, 0, 0, 0), &xc, &one, &c));
	assert_int_equal(c.rc_rpcvers, 3);
	assert_false(call_words(W(XID, RPC_REPLY, 2, 100003, 3, 0, 0, 0, 0, 0), &xc, &one, &c));
	assert_int_equal(xc.xc_err, XDR_ERR_BAD_ENUM);
	assert_int_equal(c.rc_xid, XID);
	assert_false(call_words(W(XID, 2, 2, 100003, 3, 0, 0, 0, 0, 0), &xc, &one, &c));
	assert_int_equal(xc.xc_err, XDR_ERR_BAD_ENUM);
}

/* 3. RFC 5531 8.2: opaque_auth body<400>: 400 accepted, 401 rejected for
 * the credential (AUTH_BADCRED) and for the verifier (AUTH_BADVERF). */
static void t03_auth_400(void **state)
{
	static uint32_t w[16 + 2 * 101];
	struct rpc_call_hdr c;
	struct iovec one;
	struct xdr_cur xc;
	size_t n;

	(void)state;
	for (int which = 0; which < 2; which++) {
		for (uint32_t blen = 400; blen <= 401; blen++) {
			n = 0;
			w[n++] = XID; w[n++] = 0; w[n++] = 2; w[n++] = 100003; w[n++] = 3; w[n++] = 1;
			if (which == 1) {
				w[n++] = 0; w[n++] = 0;
			}
			w[n++] = RPC_AUTH_SYS;
			w[n++] = blen;
			for (uint32_t i = 0; i < (blen + 3) / 4; i++)
				w[n++] = 0;
			if (which == 0) {
				w[n++] = 0; w[n++] = 0;
			}
			bool ok = call_words(w, n, &xc, &one, &c);

			assert_int_equal(ok, blen == 400);
			if (!ok) {
				assert_int_equal(xc.xc_err, XDR_ERR_TOO_LONG);
				assert_int_equal(c.rc_auth_stat,
						 which == 0 ? RPC_AUTH_BADCRED : RPC_AUTH_BADVERF);
				assert_int_equal(c.rc_xid, XID);
			}
		}
	}
}

/* 4. RFC 5531 appendix A: authsys_parms, byte-exact: stamp, machinename
 * "host" (4 bytes, no pad), uid, gid, gids<16> = {10, 20}. */
static void t04_auth_sys_exact(void **state)
{
	static const uint32_t body[] = { 0x12345678, 4, 0x686f7374, 1000, 100, 2, 10, 20 };
	struct rpc_auth_sys as;
	struct xdr_span sp = { 0, sizeof(body) };
	uint8_t out[64];
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;
	size_t len = vec_words(buf, body, 8);

	(void)state;
	xdr_cur_init_buf(&xc, &one, buf, len);
	assert_true(rpc_auth_sys_decode(&xc, &sp, &as));
	assert_int_equal(as.as_stamp, 0x12345678);
	assert_int_equal(as.as_namelen, 4);
	assert_string_equal(as.as_machinename, "host");
	assert_int_equal(as.as_uid, 1000);
	assert_int_equal(as.as_gid, 100);
	assert_int_equal(as.as_ngids, 2);
	assert_int_equal(as.as_gids[1], 20);
	assert_int_equal(xdr_pos(&xc), 0);		/* caller's cursor untouched */
	xdr_enc_init(&xe, out, sizeof(out));
	assert_true(rpc_auth_sys_encode(&xe, &as));
	assert_int_equal(xe.xe_len, len);
	assert_memory_equal(out, buf, len);

	/* truncating the body span at any length fails, cursor still clean */
	for (size_t cut = 0; cut < len; cut++) {
		sp.xs_len = cut;
		assert_false(rpc_auth_sys_decode(&xc, &sp, &as));
		assert_int_equal(xc.xc_err, XDR_OK);
	}
	/* trailing bytes inside the body: not one authsys_parms */
	vec_words(buf + len, (const uint32_t[]){ 0 }, 1);
	xdr_cur_init_buf(&xc, &one, buf, len + 4);
	sp.xs_len = len + 4;
	assert_false(rpc_auth_sys_decode(&xc, &sp, &as));
	/* span outside the stream */
	sp = (struct xdr_span){ 8, len };
	xdr_cur_init_buf(&xc, &one, buf, len);
	assert_false(rpc_auth_sys_decode(&xc, &sp, &as));
}

/* 5. RFC 5531 appendix A limits: machinename<255>, gids<16>: 255/16 decode
 * (inside a real call), 256 name bytes or 17 gids are refused both ways. */
static void t05_auth_sys_limits(void **state)
{
	char name[257];
	struct rpc_call_hdr c;
	struct rpc_auth_sys as;
	uint8_t out[512];
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;
	size_t n;

	(void)state;
	memset(name, 'n', 255);
	name[255] = '\0';
	n = vec_rpc_call_sys(buf, sizeof(buf), XID, 100003, 3, 1, name, 16, 0);
	assert_true(n > 0);
	xdr_cur_init_buf(&xc, &one, buf, n);
	assert_true(rpc_call_decode(&xc, &c));
	assert_int_equal(c.rc_cred.oa_body.xs_len, 4 + 4 + 256 + 8 + 4 + 64);
	assert_true(rpc_auth_sys_decode(&xc, &c.rc_cred.oa_body, &as));
	assert_int_equal(as.as_namelen, 255);
	assert_int_equal(strlen(as.as_machinename), 255);
	assert_int_equal(as.as_ngids, 16);
	assert_int_equal(as.as_gids[15], 115);

	/* hand-made bodies: name length 256, then 17 gids */
	uint32_t w[100];
	struct xdr_span sp;

	memset(w, 0, sizeof(w));
	w[1] = 256;
	sp = (struct xdr_span){ 0, vec_words(buf, w, 1 + 1 + 64 + 3) };
	xdr_cur_init_buf(&xc, &one, buf, sp.xs_len);
	assert_false(rpc_auth_sys_decode(&xc, &sp, &as));
	memset(w, 0, sizeof(w));
	w[4] = 17;
	sp = (struct xdr_span){ 0, vec_words(buf, w, 5 + 17) };
	xdr_cur_init_buf(&xc, &one, buf, sp.xs_len);
	assert_false(rpc_auth_sys_decode(&xc, &sp, &as));

	as.as_namelen = 256;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_false(rpc_auth_sys_encode(&xe, &as));
	assert_int_equal(xe.xe_err, XDR_ERR_BAD_ARG);
	as.as_namelen = 3;
	as.as_ngids = 17;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_false(rpc_auth_sys_encode(&xe, &as));
	assert_int_equal(xe.xe_err, XDR_ERR_BAD_ARG);
	/* vec helper refuses too: it goes through the same encoder */
	assert_int_equal(vec_rpc_call_sys(buf, sizeof(buf), 1, 1, 1, 1, "x", 17, 0), 0);
}

/* 6. RFC 2203 5: RPCSEC_GSS credential: version 1, gss_proc, seq_num,
 * service, handle<>.  Table of good and bad bodies, each answered as the
 * Linux nfsd answers it (svcauth_gss_accept()): nproc is the NFS
 * procedure of the call. */
static void t06_gss_cred(void **state)
{
	static const struct {
		const char *what;
		uint32_t body[8];
		unsigned nbody;
		uint32_t nproc;
		bool ok;
		uint32_t auth_stat, proc, svc;
	} v[] = {
		{ "RFC 2203 5.3.1: DATA, seq 5, integrity, 4-byte handle",
		  { 1, 0, 5, 2, 4, 0xcafef00d }, 6, 1, true, 0, 0, RPC_GSS_SVC_INTEGRITY },
		{ "RFC 2203 5.2.2: INIT, service none, empty handle",
		  { 1, 1, 0, 1, 0 }, 5, 1, true, 0, 1, RPC_GSS_SVC_NONE },
		{ "RFC 2203 5.3.2.3: DATA with privacy",
		  { 1, 0, 7, 3, 0 }, 5, 1, true, 0, 0, RPC_GSS_SVC_PRIVACY },
		{ "RFC 2203 5.3.3.3: version 2 -> AUTH_BADCRED (nfsd)",
		  { 2, 0, 5, 1, 0 }, 5, 1, false, RPC_AUTH_BADCRED, 0, 0 },
		{ "version 0 -> AUTH_BADCRED (nfsd), NULL procedure too",
		  { 0, 0, 5, 1, 0 }, 5, 0, false, RPC_AUTH_BADCRED, 0, 0 },
		{ "gss_proc 4 on COMPOUND -> AUTH_BADCRED (nfsd)", { 1, 4, 5, 1, 0 }, 5, 1, false,
		  RPC_AUTH_BADCRED, 0, 0 },
		{ "gss_proc 4 on NULL -> AUTH_REJECTEDCRED (nfsd)", { 1, 4, 5, 1, 0 }, 5, 0, false,
		  RPC_AUTH_REJECTEDCRED, 0, 0 },
		{ "gss_proc 0xffffffff on NULL -> AUTH_REJECTEDCRED", { 1, 0xffffffff, 5, 1, 0 }, 5, 0,
		  false, RPC_AUTH_REJECTEDCRED, 0, 0 },
		{ "gss_proc 4 with a trailing word: the length first -> AUTH_BADCRED",
		  { 1, 4, 5, 1, 0, 0 }, 6, 0, false, RPC_AUTH_BADCRED, 0, 0 },
		{ "service 0 reserved: decoded, the server answers it", { 1, 0, 5, 0, 0 }, 5, 1, true,
		  0, 0, 0 },
		{ "service 4 not defined: decoded, the server answers it", { 1, 0, 5, 4, 0 }, 5, 1,
		  true, 0, 0, 4 },
		{ "truncated: handle length beyond the body", { 1, 0, 5, 1, 8 }, 5, 1, false,
		  RPC_AUTH_BADCRED, 0, 0 },
		{ "trailing word after the handle", { 1, 0, 5, 1, 0, 0 }, 6, 1, false,
		  RPC_AUTH_BADCRED, 0, 0 },
		{ "empty body", { 0 }, 0, 1, false, RPC_AUTH_BADCRED, 0, 0 },
	};
	uint32_t w[32];
	struct rpc_call_hdr c;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t n = 0;

		print_message("gss %zu: %s\n", i, v[i].what);
		w[n++] = XID; w[n++] = 0; w[n++] = 2; w[n++] = 100003; w[n++] = 4; w[n++] = v[i].nproc;
		w[n++] = RPC_RPCSEC_GSS;
		w[n++] = 4 * v[i].nbody;
		for (unsigned k = 0; k < v[i].nbody; k++)
			w[n++] = v[i].body[k];
		w[n++] = RPC_RPCSEC_GSS;	/* verifier: a MIC, opaque here */
		w[n++] = 4;
		w[n++] = 0x01020304;
		assert_int_equal(call_words(w, n, &xc, &one, &c), v[i].ok);
		assert_int_equal(c.rc_auth_stat, v[i].auth_stat);
		if (!v[i].ok)
			continue;
		assert_int_equal(c.rc_gss_proc, v[i].proc);
		assert_int_equal(c.rc_gss_service, v[i].svc);
		assert_int_equal(c.rc_args_pos, 4 * n);
	}
	/* the first row's sequence number and handle span */
	assert_true(call_words(w, 0, &xc, &one, &c) == false);
	{
		size_t n = 0;

		w[n++] = XID; w[n++] = 0; w[n++] = 2; w[n++] = 100003; w[n++] = 4; w[n++] = 1;
		w[n++] = RPC_RPCSEC_GSS; w[n++] = 24;
		for (unsigned k = 0; k < 6; k++)
			w[n++] = v[0].body[k];
		w[n++] = 0; w[n++] = 0;
		assert_true(call_words(w, n, &xc, &one, &c));
		assert_int_equal(c.rc_gss_seq, 5);
		assert_int_equal(c.rc_gss_handle.xs_pos, 52);
		assert_int_equal(c.rc_gss_handle.xs_len, 4);
	}
}

/* 7. RFC 9289 4.1: AUTH_TLS probe = NULL procedure, empty AUTH_TLS cred,
 * empty AUTH_NONE verf; the server's answer carries an AUTH_NONE verifier
 * whose body is "STARTTLS". */
static void t07_auth_tls(void **state)
{
	static const uint8_t starttls_reply[] = {
		0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8,
		'S', 'T', 'A', 'R', 'T', 'T', 'L', 'S', 0, 0, 0, 0,
	};
	struct rpc_reply_hdr r = { .rr_xid = XID, .rr_stat = RPC_MSG_ACCEPTED,
				   .rr_verf = { RPC_AUTH_NONE, { 0, 8 } },
				   .rr_accept_stat = RPC_SUCCESS };
	struct rpc_reply_hdr d;
	struct rpc_call_hdr c;
	uint8_t out[64];
	char tok[9] = { 0 };
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	assert_true(call_words(W(XID, 0, 2, 100003, 4, 0, RPC_AUTH_TLS, 0, 0, 0), &xc, &one, &c));
	assert_int_equal(c.rc_cred.oa_flavor, RPC_AUTH_TLS);
	assert_true(c.rc_tls_probe);
	/* not the NULL procedure: decoded, but not a probe (server: BADCRED) */
	assert_true(call_words(W(XID, 0, 2, 100003, 4, 1, RPC_AUTH_TLS, 0, 0, 0), &xc, &one, &c));
	assert_false(c.rc_tls_probe);
	/* non-empty credential: not a probe */
	assert_true(call_words(W(XID, 0, 2, 100003, 4, 0, RPC_AUTH_TLS, 4, 1, 0, 0), &xc, &one, &c));
	assert_false(c.rc_tls_probe);

	xdr_enc_init(&xe, out, sizeof(out));
	assert_true(rpc_reply_encode(&xe, &r, "STARTTLS"));
	assert_int_equal(xe.xe_len, sizeof(starttls_reply));
	assert_memory_equal(out, starttls_reply, sizeof(starttls_reply));
	xdr_cur_init_buf(&xc, &one, starttls_reply, sizeof(starttls_reply));
	assert_true(rpc_reply_decode(&xc, &d));
	assert_int_equal(d.rr_verf.oa_body.xs_len, 8);
	xdr_span_copy(&xc, &d.rr_verf.oa_body, tok, 8);
	assert_string_equal(tok, "STARTTLS");
}

/* 8. RFC 5531 9: every reply arm, byte-exact, decode and encode, truncated
 * at every offset. */
static void t08_reply_arms(void **state)
{
	static const struct {
		const char *what;
		uint32_t w[10];
		unsigned nw;
		struct rpc_reply_hdr r;
	} v[] = {
		{ "accepted SUCCESS", { XID, 1, 0, 0, 0, 0 }, 6,
		  { .rr_xid = XID, .rr_stat = 0, .rr_accept_stat = RPC_SUCCESS, .rr_results_pos = 24 } },
		{ "accepted PROG_UNAVAIL", { XID, 1, 0, 0, 0, 1 }, 6,
		  { .rr_xid = XID, .rr_accept_stat = RPC_PROG_UNAVAIL } },
		{ "accepted PROG_MISMATCH low 2 high 4", { XID, 1, 0, 0, 0, 2, 2, 4 }, 8,
		  { .rr_xid = XID, .rr_accept_stat = RPC_PROG_MISMATCH, .rr_low = 2, .rr_high = 4 } },
		{ "accepted PROC_UNAVAIL", { XID, 1, 0, 0, 0, 3 }, 6,
		  { .rr_xid = XID, .rr_accept_stat = RPC_PROC_UNAVAIL } },
		{ "accepted GARBAGE_ARGS", { XID, 1, 0, 0, 0, 4 }, 6,
		  { .rr_xid = XID, .rr_accept_stat = RPC_GARBAGE_ARGS } },
		{ "accepted SYSTEM_ERR", { XID, 1, 0, 0, 0, 5 }, 6,
		  { .rr_xid = XID, .rr_accept_stat = RPC_SYSTEM_ERR } },
		{ "denied RPC_MISMATCH 2..2", { XID, 1, 1, 0, 2, 2 }, 6,
		  { .rr_xid = XID, .rr_stat = 1, .rr_reject_stat = RPC_MISMATCH, .rr_low = 2,
		    .rr_high = 2 } },
		{ "accepted SUCCESS, AUTH_SHORT verifier of 4 bytes", { XID, 1, 0, 2, 4, 0xabad1dea, 0 }, 7,
		  { .rr_xid = XID, .rr_verf = { RPC_AUTH_SHORT, { 20, 4 } }, .rr_results_pos = 28 } },
	};
	struct rpc_reply_hdr d;
	uint8_t out[64];
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		size_t len = vec_words(buf, v[i].w, v[i].nw);

		print_message("reply %zu: %s\n", i, v[i].what);
		xdr_cur_init_buf(&xc, &one, buf, len);
		assert_true(rpc_reply_decode(&xc, &d));
		assert_int_equal(xdr_remaining(&xc), 0);
		assert_int_equal(d.rr_xid, v[i].r.rr_xid);
		assert_int_equal(d.rr_stat, v[i].r.rr_stat);
		assert_int_equal(d.rr_verf.oa_flavor, v[i].r.rr_verf.oa_flavor);
		assert_int_equal(d.rr_verf.oa_body.xs_len, v[i].r.rr_verf.oa_body.xs_len);
		if (d.rr_verf.oa_body.xs_len)
			assert_int_equal(d.rr_verf.oa_body.xs_pos, v[i].r.rr_verf.oa_body.xs_pos);
		assert_int_equal(d.rr_accept_stat, v[i].r.rr_accept_stat);
		assert_int_equal(d.rr_reject_stat, v[i].r.rr_reject_stat);
		assert_int_equal(d.rr_auth_stat, v[i].r.rr_auth_stat);
		assert_int_equal(d.rr_low, v[i].r.rr_low);
		assert_int_equal(d.rr_high, v[i].r.rr_high);
		assert_int_equal(d.rr_results_pos, v[i].r.rr_results_pos);
		xdr_enc_init(&xe, out, sizeof(out));
		assert_true(rpc_reply_encode(&xe, &d, buf + d.rr_verf.oa_body.xs_pos));
		assert_int_equal(xe.xe_len, len);
		assert_memory_equal(out, buf, len);
		for (size_t cut = 0; cut < len; cut++) {
			xdr_cur_init_buf(&xc, &one, buf, cut);
			assert_false(rpc_reply_decode(&xc, &d));
			assert_int_equal(xc.xc_err, XDR_ERR_SHORT);
		}
	}
}

/* 9. RFC 5531 9 (with RFC 2203 5.3.3.3): AUTH_ERROR with every auth_stat,
 * 1..14; 15 is out of the enum. */
static void t09_auth_errors(void **state)
{
	struct rpc_reply_hdr r = { .rr_xid = XID, .rr_stat = RPC_MSG_DENIED,
				   .rr_reject_stat = RPC_AUTH_ERROR }, d;
	uint8_t out[64];
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	for (uint32_t st = RPC_AUTH_OK; st <= RPC_RPCSEC_GSS_CTXPROBLEM; st++) {
		r.rr_auth_stat = st;
		xdr_enc_init(&xe, out, sizeof(out));
		assert_true(rpc_local_reply(&xe, XID, &r));
		assert_int_equal(xe.xe_len, 20);
		assert_int_equal(chk_be32(out + 12), RPC_AUTH_ERROR);
		assert_int_equal(chk_be32(out + 16), st);
		xdr_cur_init_buf(&xc, &one, out, xe.xe_len);
		assert_true(rpc_reply_decode(&xc, &d));
		assert_int_equal(d.rr_auth_stat, st);
	}
	chk_put_be32(out + 16, 15);
	xdr_cur_init_buf(&xc, &one, out, 20);
	assert_false(rpc_reply_decode(&xc, &d));
	assert_int_equal(xc.xc_err, XDR_ERR_BAD_ENUM);
	r.rr_auth_stat = 15;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_false(rpc_reply_encode(&xe, &r, NULL));
	assert_int_equal(xe.xe_err, XDR_ERR_BAD_ARG);
}

/* 10. Bad enums in replies: msg_type CALL, reply_stat 2, accept_stat 6,
 * reject_stat 2. */
static void t10_reply_bad_enums(void **state)
{
	static const struct {
		uint32_t w[6];
		unsigned nw;
	} v[] = {
		{ { XID, 0, 0, 0, 0, 0 }, 6 },
		{ { XID, 1, 2, 0, 0, 0 }, 6 },
		{ { XID, 1, 0, 0, 0, 6 }, 6 },
		{ { XID, 1, 1, 2 }, 4 },
	};
	struct rpc_reply_hdr d;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		xdr_cur_init_buf(&xc, &one, buf, vec_words(buf, v[i].w, v[i].nw));
		assert_false(rpc_reply_decode(&xc, &d));
		assert_int_equal(xc.xc_err, XDR_ERR_BAD_ENUM);
	}
}

/* 11. rpc_local_reply: the gateway's own PROG_MISMATCH (low 3, high 4) with
 * the caller's XID and an empty AUTH_NONE verifier, byte-exact; status
 * verifier and xid are ignored. */
static void t11_local_reply(void **state)
{
	static const uint32_t want[] = { XID, 1, 0, 0, 0, 2, 3, 4 };
	struct rpc_reply_hdr st = { .rr_xid = 99, .rr_verf = { RPC_AUTH_SYS, { 0, 12 } },
				    .rr_accept_stat = RPC_PROG_MISMATCH, .rr_low = 3, .rr_high = 4 };
	uint8_t out[64], exp[64];
	struct xdr_enc xe;

	(void)state;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_true(rpc_local_reply(&xe, XID, &st));
	assert_int_equal(xe.xe_len, vec_words(exp, want, 8));
	assert_memory_equal(out, exp, xe.xe_len);
	for (size_t cap = 0; cap < 32; cap++) {
		xdr_enc_init(&xe, out, cap);
		assert_false(rpc_local_reply(&xe, XID, &st));
		assert_int_equal(xe.xe_err, XDR_ERR_NO_SPACE);
	}
}

/* 12. Encoder argument checks: verifier bytes missing, verifier over 400,
 * bad stats, bad reply_stat. */
static void t12_encode_args(void **state)
{
	struct rpc_reply_hdr r = { .rr_xid = XID, .rr_verf = { RPC_AUTH_SHORT, { 0, 4 } } };
	uint8_t out[64];
	struct xdr_enc xe;

	(void)state;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_false(rpc_reply_encode(&xe, &r, NULL));
	assert_int_equal(xe.xe_err, XDR_ERR_BAD_ARG);
	r.rr_verf.oa_body.xs_len = 401;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_false(rpc_reply_encode(&xe, &r, out));
	r.rr_verf.oa_body.xs_len = 0;
	r.rr_accept_stat = 6;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_false(rpc_reply_encode(&xe, &r, NULL));
	r.rr_stat = RPC_MSG_DENIED;
	r.rr_reject_stat = 2;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_false(rpc_reply_encode(&xe, &r, NULL));
	r.rr_stat = 2;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_false(rpc_reply_encode(&xe, &r, NULL));
	assert_int_equal(xe.xe_err, XDR_ERR_BAD_ARG);
}

/* 13. A call that arrived in two TCP pieces (two iovecs), split at every
 * byte, decodes the same and the AUTH_SYS body is read across the split. */
static void t13_segmented(void **state)
{
	struct rpc_call_hdr c;
	struct rpc_auth_sys as;
	struct iovec iov[2];
	struct xdr_cur xc;
	size_t n;

	(void)state;
	n = vec_rpc_call_sys(buf, sizeof(buf), XID, 100003, 3, 4, "segmented", 3, 8);
	assert_true(n > 0);
	for (size_t cut = 0; cut <= n; cut++) {
		iov[0] = (struct iovec){ buf, cut };
		iov[1] = (struct iovec){ buf + cut, n - cut };
		xdr_cur_init(&xc, iov, 2);
		assert_true(rpc_call_decode(&xc, &c));
		assert_int_equal(c.rc_proc, 4);
		assert_int_equal(c.rc_args_pos, n - 8);
		assert_true(rpc_auth_sys_decode(&xc, &c.rc_cred.oa_body, &as));
		assert_string_equal(as.as_machinename, "segmented");
		assert_int_equal(as.as_ngids, 3);
	}
}

/* 14. rpc_call_encode: AUTH_SYS (byte-exact: 10-byte name padded to 12,
 * body 32 bytes) and AUTH_NONE headers decode back; arguments start right
 * after the verifier; an encoder too small fails. */
static void t14_call_encode(void **state)
{
	static const uint32_t want[] = { XID, 0, 2, 100021, 4, 4, RPC_AUTH_SYS, 32, 0, 10,
					 0x72706372, 0x646d612d, 0x67770000, 0, 0, 0, RPC_AUTH_NONE, 0 };
	static const struct rpc_auth_sys as = { .as_namelen = 10, .as_machinename = "rpcrdma-gw" };
	struct rpc_call_hdr c;
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;
	uint8_t small[40];

	(void)state;
	xdr_enc_init(&xe, buf, sizeof(buf));
	assert_true(rpc_call_encode(&xe, XID, 100021, 4, 4, &as));
	assert_int_equal(xe.xe_len, sizeof(want));
	for (unsigned i = 0; i < sizeof(want) / 4; i++)
		assert_int_equal(chk_be32(buf + 4 * i), want[i]);
	xdr_cur_init_buf(&xc, &one, buf, xe.xe_len);
	assert_true(rpc_call_decode(&xc, &c));
	assert_int_equal(c.rc_cred.oa_flavor, RPC_AUTH_SYS);
	assert_int_equal(c.rc_args_pos, sizeof(want));

	xdr_enc_init(&xe, buf, sizeof(buf));
	assert_true(rpc_call_encode(&xe, XID, 100024, 1, 6, NULL));
	assert_int_equal(xe.xe_len, 40);
	xdr_cur_init_buf(&xc, &one, buf, xe.xe_len);
	assert_true(rpc_call_decode(&xc, &c));
	assert_int_equal(c.rc_prog, 100024);
	assert_int_equal(c.rc_proc, 6);
	assert_int_equal(c.rc_cred.oa_flavor, RPC_AUTH_NONE);
	assert_int_equal(c.rc_args_pos, 40);

	xdr_enc_init(&xe, small, sizeof(small));
	assert_false(rpc_call_encode(&xe, XID, 100021, 4, 4, &as));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_call_null),
		cmocka_unit_test(t02_call_vers_and_type),
		cmocka_unit_test(t03_auth_400),
		cmocka_unit_test(t04_auth_sys_exact),
		cmocka_unit_test(t05_auth_sys_limits),
		cmocka_unit_test(t06_gss_cred),
		cmocka_unit_test(t07_auth_tls),
		cmocka_unit_test(t08_reply_arms),
		cmocka_unit_test(t09_auth_errors),
		cmocka_unit_test(t10_reply_bad_enums),
		cmocka_unit_test(t11_local_reply),
		cmocka_unit_test(t12_encode_args),
		cmocka_unit_test(t13_segmented),
		cmocka_unit_test(t14_call_encode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
