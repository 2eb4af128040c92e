// SPDX-License-Identifier: MIT
/*
 * This file contains the ONC RPC version 2 message header codecs (RFC 5531
 * section 9) and the credential bodies the gateway looks into: AUTH_SYS
 * (appendix A), RPCSEC_GSS (RFC 2203 section 5) and the AUTH_TLS probe
 * (RFC 9289 section 4.1).
 *
 *   call:  xid | 0 (CALL) | rpcvers | prog | vers | proc | cred | verf | args
 *   reply: xid | 1 (REPLY) | reply_stat | ...
 *     MSG_ACCEPTED: verf | accept_stat | SUCCESS: results
 *                                        PROG_MISMATCH: low high
 *     MSG_DENIED:   reject_stat | RPC_MISMATCH: low high
 *                                 AUTH_ERROR: auth_stat
 *   opaque_auth: flavor | opaque body<400>
 *
 * Decoders leave credential and verifier bodies in place (xdr_span); the
 * gateway forwards them untouched.
 */
#include <string.h>

#include "chunking.h"

/* RFC 2203 5 */
#define RPCSEC_GSS_VERS_1	1
#define RPCSEC_GSS_NPROC	4	/* DATA, INIT, CONTINUE_INIT, DESTROY */

static bool get_opaque_auth(struct xdr_cur *xc, struct rpc_opaque_auth *oa)
{
	/* RFC 5531 8.2: body<400>; the flavor is any value (new flavors are
	 * registered by IANA), the caller decides what it accepts. */
	return xdr_get_u32(xc, &oa->oa_flavor) &&
	       xdr_get_opaque(xc, &oa->oa_body, RPC_AUTH_MAX_BODY);
}

/* A sub-cursor confined to one span of xc's stream, so a body parser can
 * neither read past the body nor disturb the caller's cursor or error. */
static bool span_cursor(const struct xdr_cur *xc, const struct xdr_span *sp, struct xdr_cur *sub)
{
	*sub = *xc;
	sub->xc_err = XDR_OK;
	if (sp->xs_pos > xc->xc_len || sp->xs_len > xc->xc_len - sp->xs_pos)
		return false;
	if (!xdr_seek(sub, sp->xs_pos))
		return false;
	sub->xc_len = sp->xs_pos + sp->xs_len;
	return true;
}

/*
 * RFC 2203 5: rpc_gss_cred_t.  What is wrong with a credential is answered
 * as the Linux nfsd answers it (net/sunrpc/auth_gss/svcauth_gss.c,
 * svcauth_gss_accept(), in its order): a body that is not exactly one
 * credential, or a version other than 1, is AUTH_BADCRED (RFC 2203
 * 5.3.3.3: "If the version field ... does not match ... AUTH_BADCRED");
 * a gss_proc nfsd does not know is AUTH_BADCRED on any procedure but
 * NULL and AUTH_REJECTEDCRED on NULL (nfsd looks at the procedure first).
 * The service is not checked here: nfsd looks it up only after the
 * context and the verifier's MIC, which the gateway cannot check, so a
 * call with an unknown service goes to the server, which answers it.
 */
static bool gss_cred_decode(const struct xdr_cur *xc, struct rpc_call_hdr *call)
{
	struct xdr_cur sub;
	uint32_t vers;

	if (!span_cursor(xc, &call->rc_cred.oa_body, &sub))
		return false;
	if (!xdr_get_u32(&sub, &vers) || vers != RPCSEC_GSS_VERS_1)
		return false;
	if (!xdr_get_u32(&sub, &call->rc_gss_proc) || !xdr_get_u32(&sub, &call->rc_gss_seq) ||
	    !xdr_get_u32(&sub, &call->rc_gss_service) ||
	    !xdr_get_opaque(&sub, &call->rc_gss_handle, RPC_AUTH_MAX_BODY))
		return false;
	/* The whole body is the credential: trailing bytes are garbage. */
	if (xdr_remaining(&sub) != 0)
		return false;
	if (call->rc_gss_proc >= RPCSEC_GSS_NPROC) {
		if (call->rc_proc == 0)
			call->rc_auth_stat = RPC_AUTH_REJECTEDCRED;
		return false;
	}
	return true;
}

/*
 * Decodes a call header up to the arguments.  On false, xc holds the XDR
 * reason; call->rc_xid is valid once 4 bytes were read, and a non-zero
 * call->rc_auth_stat says the credential or verifier was at fault (answer
 * MSG_DENIED / AUTH_ERROR with it, RFC 5531 9).
 */
bool rpc_call_decode(struct xdr_cur *xc, struct rpc_call_hdr *call)
{
	uint32_t mtype;

	memset(call, 0, sizeof(*call));
	call->rc_xid_pos = xdr_pos(xc);
	if (!xdr_get_u32(xc, &call->rc_xid) || !xdr_get_u32(xc, &mtype))
		return false;
	if (mtype != RPC_CALL)
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	if (!xdr_get_u32(xc, &call->rc_rpcvers) || !xdr_get_u32(xc, &call->rc_prog) ||
	    !xdr_get_u32(xc, &call->rc_vers) || !xdr_get_u32(xc, &call->rc_proc))
		return false;
	if (!get_opaque_auth(xc, &call->rc_cred)) {
		if (xc->xc_err == XDR_ERR_TOO_LONG)
			call->rc_auth_stat = RPC_AUTH_BADCRED;
		return false;
	}
	if (!get_opaque_auth(xc, &call->rc_verf)) {
		if (xc->xc_err == XDR_ERR_TOO_LONG)
			call->rc_auth_stat = RPC_AUTH_BADVERF;
		return false;
	}
	call->rc_args_pos = xdr_pos(xc);

	switch (call->rc_cred.oa_flavor) {
	case RPC_RPCSEC_GSS:
		if (!gss_cred_decode(xc, call)) {
			if (call->rc_auth_stat == 0)
				call->rc_auth_stat = RPC_AUTH_BADCRED;
			call->rc_gss_service = 0;
			return xdr_fail(xc, XDR_ERR_BAD_ENUM);
		}
		break;
	case RPC_AUTH_TLS:
		/* RFC 9289 4.1: a probe is a NULL call with an empty AUTH_TLS
		 * credential and an empty AUTH_NONE verifier.  Anything else
		 * with AUTH_TLS is answered AUTH_BADCRED by the server; that
		 * is left to the caller (rc_tls_probe = false). */
		call->rc_tls_probe = call->rc_proc == 0 && call->rc_cred.oa_body.xs_len == 0 &&
				     call->rc_verf.oa_flavor == RPC_AUTH_NONE &&
				     call->rc_verf.oa_body.xs_len == 0;
		break;
	default:
		break;
	}
	return true;
}

bool rpc_reply_decode(struct xdr_cur *xc, struct rpc_reply_hdr *reply)
{
	uint32_t mtype;

	memset(reply, 0, sizeof(*reply));
	if (!xdr_get_u32(xc, &reply->rr_xid) || !xdr_get_u32(xc, &mtype))
		return false;
	if (mtype != RPC_REPLY)
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	if (!xdr_get_enum(xc, &reply->rr_stat, 2))
		return false;
	if (reply->rr_stat == RPC_MSG_ACCEPTED) {
		if (!get_opaque_auth(xc, &reply->rr_verf) ||
		    !xdr_get_enum(xc, &reply->rr_accept_stat, RPC_SYSTEM_ERR + 1))
			return false;
		switch (reply->rr_accept_stat) {
		case RPC_SUCCESS:
			reply->rr_results_pos = xdr_pos(xc);
			return true;
		case RPC_PROG_MISMATCH:
			return xdr_get_u32(xc, &reply->rr_low) && xdr_get_u32(xc, &reply->rr_high);
		default:
			return true;	/* void arms */
		}
	}
	if (!xdr_get_enum(xc, &reply->rr_reject_stat, RPC_AUTH_ERROR + 1))
		return false;
	if (reply->rr_reject_stat == RPC_MISMATCH)
		return xdr_get_u32(xc, &reply->rr_low) && xdr_get_u32(xc, &reply->rr_high);
	return xdr_get_enum(xc, &reply->rr_auth_stat, RPC_RPCSEC_GSS_CTXPROBLEM + 1);
}

/* Encodes the header of reply; for SUCCESS the caller appends the results. */
bool rpc_reply_encode(struct xdr_enc *xe, const struct rpc_reply_hdr *reply, const void *verf_body)
{
	if (xe->xe_err != XDR_OK)
		return false;
	if (!xdr_put_u32(xe, reply->rr_xid) || !xdr_put_u32(xe, RPC_REPLY) ||
	    !xdr_put_u32(xe, reply->rr_stat))
		return false;
	switch (reply->rr_stat) {
	case RPC_MSG_ACCEPTED: {
		uint32_t vlen = (uint32_t)reply->rr_verf.oa_body.xs_len;

		if (reply->rr_verf.oa_body.xs_len > RPC_AUTH_MAX_BODY || (vlen && !verf_body) ||
		    reply->rr_accept_stat > RPC_SYSTEM_ERR) {
			xe->xe_err = XDR_ERR_BAD_ARG;
			return false;
		}
		if (!xdr_put_u32(xe, reply->rr_verf.oa_flavor) ||
		    !xdr_put_opaque(xe, verf_body, vlen) || !xdr_put_u32(xe, reply->rr_accept_stat))
			return false;
		if (reply->rr_accept_stat == RPC_PROG_MISMATCH)
			return xdr_put_u32(xe, reply->rr_low) && xdr_put_u32(xe, reply->rr_high);
		return true;
	}
	case RPC_MSG_DENIED:
		if (reply->rr_reject_stat > RPC_AUTH_ERROR ||
		    (reply->rr_reject_stat == RPC_AUTH_ERROR &&
		     reply->rr_auth_stat > RPC_RPCSEC_GSS_CTXPROBLEM)) {
			xe->xe_err = XDR_ERR_BAD_ARG;
			return false;
		}
		if (!xdr_put_u32(xe, reply->rr_reject_stat))
			return false;
		if (reply->rr_reject_stat == RPC_MISMATCH)
			return xdr_put_u32(xe, reply->rr_low) && xdr_put_u32(xe, reply->rr_high);
		return xdr_put_u32(xe, reply->rr_auth_stat);
	default:
		xe->xe_err = XDR_ERR_BAD_ARG;
		return false;
	}
}

/*
 * The gateway's own answer: status's xid and verifier are ignored, the reply
 * carries `xid` and an empty AUTH_NONE verifier (RFC 5531 9: the server's
 * verifier; the gateway authenticates nothing).  SUCCESS is allowed and
 * gives a header with empty results (e.g. the NULL procedure).
 */
bool rpc_local_reply(struct xdr_enc *xe, uint32_t xid, const struct rpc_reply_hdr *status)
{
	struct rpc_reply_hdr r = *status;

	r.rr_xid = xid;
	r.rr_verf.oa_flavor = RPC_AUTH_NONE;
	r.rr_verf.oa_body = (struct xdr_span){ 0, 0 };
	return rpc_reply_encode(xe, &r, NULL);
}

/*
 * RFC 5531 appendix A:
 *   struct authsys_parms { unsigned int stamp; string machinename<255>;
 *                          unsigned int uid; unsigned int gid;
 *                          unsigned int gids<16>; };
 * The body must hold exactly one authsys_parms.  Decoded on a private cursor:
 * xc is not moved and its error is not touched.
 */
bool rpc_auth_sys_decode(struct xdr_cur *xc, const struct xdr_span *body, struct rpc_auth_sys *as)
{
	struct xdr_cur sub;
	struct xdr_span name;
	uint32_t n;

	memset(as, 0, sizeof(*as));
	if (!span_cursor(xc, body, &sub))
		return false;
	if (!xdr_get_u32(&sub, &as->as_stamp) ||
	    !xdr_get_string(&sub, &name, RPC_AUTH_SYS_MAX_NAME) ||
	    !xdr_get_u32(&sub, &as->as_uid) || !xdr_get_u32(&sub, &as->as_gid) ||
	    !xdr_get_u32(&sub, &n))
		return false;
	if (n > RPC_AUTH_SYS_MAX_GIDS)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (!xdr_get_u32(&sub, &as->as_gids[i]))
			return false;
	if (xdr_remaining(&sub) != 0)
		return false;
	as->as_ngids = n;
	as->as_namelen = (uint32_t)name.xs_len;
	if (name.xs_len && xdr_span_copy(&sub, &name, as->as_machinename, name.xs_len) != name.xs_len)
		return false;
	as->as_machinename[name.xs_len] = '\0';
	return true;
}

bool rpc_auth_sys_encode(struct xdr_enc *xe, const struct rpc_auth_sys *as)
{
	if (xe->xe_err != XDR_OK)
		return false;
	if (as->as_namelen > RPC_AUTH_SYS_MAX_NAME || as->as_ngids > RPC_AUTH_SYS_MAX_GIDS) {
		xe->xe_err = XDR_ERR_BAD_ARG;
		return false;
	}
	if (!xdr_put_u32(xe, as->as_stamp) ||
	    !xdr_put_opaque(xe, as->as_machinename, as->as_namelen) ||
	    !xdr_put_u32(xe, as->as_uid) || !xdr_put_u32(xe, as->as_gid) ||
	    !xdr_put_u32(xe, as->as_ngids))
		return false;
	for (uint32_t i = 0; i < as->as_ngids; i++)
		if (!xdr_put_u32(xe, as->as_gids[i]))
			return false;
	return true;
}

bool rpc_call_encode(struct xdr_enc *xe, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
		     const struct rpc_auth_sys *as)
{
	xdr_put_u32(xe, xid);
	xdr_put_u32(xe, RPC_CALL);
	xdr_put_u32(xe, RPC_VERS);
	xdr_put_u32(xe, prog);
	xdr_put_u32(xe, vers);
	xdr_put_u32(xe, proc);
	if (as) {	/* stamp, machine name, uid, gid, gids (appendix A) */
		xdr_put_u32(xe, RPC_AUTH_SYS);
		xdr_put_u32(xe, (uint32_t)(4 + 4 + xdr_round4(as->as_namelen) + 4 + 4 + 4 +
					   4 * (size_t)as->as_ngids));
		rpc_auth_sys_encode(xe, as);
	} else {
		xdr_put_u32(xe, RPC_AUTH_NONE);
		xdr_put_u32(xe, 0);
	}
	xdr_put_u32(xe, RPC_AUTH_NONE);
	return xdr_put_u32(xe, 0) && xe->xe_err == XDR_OK;
}
