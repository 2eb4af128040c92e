// SPDX-License-Identifier: MIT
/*
 * This file contains the pre-TLS decisions of RPC-with-TLS (RFC 9289): what
 * a record received in plaintext on a listener with tls = allowed or
 * required leads to, and the replies the frontend sends by itself.  Pure
 * (no OpenSSL, no socket): the fuzzer links it alone.
 */
#include <string.h>

#include "chunking.h"
#include "fe_tls.h"

static const char *const fe_tls_reason_names[FE_TLS_R__COUNT] = {
	[FE_TLS_R_PLAINTEXT] = "call before TLS on a tls = required listener",
	[FE_TLS_R_EARLY_DATA] = "bytes after the AUTH_TLS probe before its reply",
	[FE_TLS_R_PROBE_BUSY] = "AUTH_TLS probe with calls in flight",
	[FE_TLS_R_NOT_TLS] = "no TLS ClientHello after the AUTH_TLS probe",
	[FE_TLS_R_VERSION] = "client offers no TLS 1.3",
	[FE_TLS_R_ALPN] = "client offers no ALPN \"sunrpc\"",
	[FE_TLS_R_CLIENT_CERT] = "client certificate missing or not verified",
	[FE_TLS_R_HANDSHAKE] = "TLS handshake failed",
	[FE_TLS_R_IDENTITY] = "client certificate not in tls_allow_identity",
};

const char *fe_tls_reason_str(enum fe_tls_reason r)
{
	return (unsigned)r < FE_TLS_R__COUNT ? fe_tls_reason_names[r] : "?";
}

/* A record-marked reply to xid into reply; false if it does not fit. */
static bool fe_tls_reply(uint32_t xid, const struct rpc_reply_hdr *st, const void *verf,
			 uint8_t *reply, size_t *reply_len)
{
	struct xdr_enc xe;
	struct rpc_reply_hdr r = *st;

	r.rr_xid = xid;
	xdr_enc_init(&xe, reply + 4, FE_TLS_REPLY_MAX - 4);
	if (!rpc_reply_encode(&xe, &r, verf))
		return false;
	rm_encode_hdr(reply, (uint32_t)xe.xe_len, true);
	*reply_len = xe.xe_len + 4;
	return true;
}

/* MSG_DENIED, AUTH_ERROR, stat to xid: REFUSE, or CLOSE without an XID. */
static enum fe_tls_verdict fe_tls_refuse(bool has_xid, uint32_t xid, uint32_t stat, uint8_t *reply,
					 size_t *reply_len)
{
	struct rpc_reply_hdr st = { .rr_stat = RPC_MSG_DENIED, .rr_reject_stat = RPC_AUTH_ERROR,
				    .rr_auth_stat = stat };

	if (has_xid && fe_tls_reply(xid, &st, NULL, reply, reply_len))
		return FE_TLS_REFUSE;
	return FE_TLS_CLOSE;
}

enum fe_tls_verdict fe_tls_pre_record(enum cfg_tls mode, const struct iovec *iov, unsigned niov,
				      bool quiet, bool more, uint8_t *reply, size_t *reply_len,
				      enum fe_tls_reason *why)
{
	struct rpc_call_hdr hdr;
	struct xdr_cur xc;
	uint32_t xid = 0, mtype = RPC_REPLY;
	bool ok, has_xid;

	*reply_len = 0;
	if (mode == CFG_TLS_OFF)
		return FE_TLS_PASS;
	/* An answer needs the XID of a CALL (a REPLY is no call to answer). */
	xdr_cur_init(&xc, iov, niov);
	has_xid = xdr_get_u32(&xc, &xid) && xdr_get_u32(&xc, &mtype) && mtype == RPC_CALL;
	xdr_cur_init(&xc, iov, niov);
	ok = rpc_call_decode(&xc, &hdr);
	if (ok && hdr.rc_tls_probe) {
		static const struct rpc_reply_hdr st = {
			.rr_stat = RPC_MSG_ACCEPTED, .rr_accept_stat = RPC_SUCCESS,
			.rr_verf = { .oa_flavor = RPC_AUTH_NONE, .oa_body = { 0, 8 } },
		};

		/* Our plaintext reply would land between the bytes of the
		 * replies still queued: a client probes first, or not at all. */
		if (!quiet) {
			*why = FE_TLS_R_PROBE_BUSY;
			return FE_TLS_CLOSE;
		}
		/* RFC 9289 4.1: the ClientHello comes after the reply, so
		 * nothing may follow the probe before the client read it. */
		if (more) {
			*why = FE_TLS_R_EARLY_DATA;
			return FE_TLS_CLOSE;
		}
		/* RFC 9289 4.1: AUTH_NONE verifier, body "STARTTLS" (8 bytes). */
		return fe_tls_reply(hdr.rc_xid, &st, "STARTTLS", reply, reply_len) ? FE_TLS_STARTTLS
										   : FE_TLS_CLOSE;
	}
	if (mode != CFG_TLS_REQUIRED)
		return FE_TLS_PASS;	/* tls = allowed: plaintext goes on as before */
	*why = FE_TLS_R_PLAINTEXT;
	/* RFC 9289 4.1: AUTH_TLS on another procedure is AUTH_BADCRED; any
	 * other call wants more protection than it has: AUTH_TOOWEAK. */
	return fe_tls_refuse(has_xid, xid,
			     ok && hdr.rc_cred.oa_flavor == RPC_AUTH_TLS ? RPC_AUTH_BADCRED
									: RPC_AUTH_TOOWEAK,
			     reply, reply_len);
}
