// SPDX-License-Identifier: MIT
/*
 * nfs_cb.c - decoders of NFSv4.1 backchannel traffic.
 *
 * This file contains the pure decoders the backchannel relay routes by: the
 * session ID in a server's CB_COMPOUND (its first operation, CB_SEQUENCE,
 * RFC 8881 20.9), the session a client's COMPOUND reply binds to the
 * connection's back channel (CREATE_SESSION with
 * CREATE_SESSION4_FLAG_CONN_BACK_CHAN, BIND_CONN_TO_SESSION with CDFS4_BACK
 * or CDFS4_BOTH: RFC 8881 2.10.3.1) and the session of a client's COMPOUND
 * that starts with SEQUENCE.  All input is untrusted; nothing is copied
 * but the 16-byte session ID, nothing is allocated.  The relay state
 * (session map, pending callbacks) lives with the gateway.
 */
#include <string.h>

#include "chunking.h"

/* Flags of the replies (RFC 8881 18.36, 18.34); the tag bound is ours. */
#define CREATE_SESSION4_FLAG_CONN_BACK_CHAN	0x2
#define CDFS4_BACK	0x2	/* bit of CDFS4_BACK (2) and CDFS4_BOTH (3) */
#define CB_MAX_TAG	1024

static bool get_sid(struct xdr_cur *xc, uint8_t *sid)
{
	for (unsigned i = 0; i < CHK_NFS4_SESSIONID_SIZE; i += 4) {
		uint32_t w;

		if (!xdr_get_u32(xc, &w))
			return false;
		chk_put_be32(sid + i, w);
	}
	return true;
}

bool chk_cb_parse_call(const struct iovec *iov, unsigned niov, struct chk_cb_msg *m)
{
	struct rpc_call_hdr h;
	struct xdr_span tag;
	struct xdr_cur xc;
	uint32_t ident, nops, op;

	memset(m, 0, sizeof(*m));
	xdr_cur_init(&xc, iov, niov);
	if (!rpc_call_decode(&xc, &h))
		return false;
	m->cm_xid = h.rc_xid;
	m->cm_prog = h.rc_prog;
	m->cm_vers = h.rc_vers;
	m->cm_proc = h.rc_proc;
	if (h.rc_proc != CHK_CB_COMPOUND)
		return true;
	/* CB_COMPOUND4args: tag, minorversion, callback_ident, argarray */
	if (!xdr_get_opaque(&xc, &tag, CB_MAX_TAG) || !xdr_get_u32(&xc, &m->cm_minorversion) ||
	    !xdr_get_u32(&xc, &ident) || !xdr_get_u32(&xc, &nops))
		return true;	/* no session: the caller answers by itself */
	if (m->cm_minorversion >= 1 && nops >= 1 && xdr_get_u32(&xc, &op) &&
	    op == CHK_OP_CB_SEQUENCE && get_sid(&xc, m->cm_sid))
		m->cm_has_sid = true;
	return true;
}

bool chk_cb_parse_bind_reply(const struct iovec *iov, unsigned niov, uint8_t *sid)
{
	struct rpc_reply_hdr rh;
	struct xdr_span tag;
	struct xdr_cur xc;
	uint32_t status, nres, op, opstatus, seq, flags;

	xdr_cur_init(&xc, iov, niov);
	if (!rpc_reply_decode(&xc, &rh) || rh.rr_stat != RPC_MSG_ACCEPTED ||
	    rh.rr_accept_stat != RPC_SUCCESS)
		return false;
	/* COMPOUND4res: status, tag, resarray */
	if (!xdr_get_u32(&xc, &status) || status != 0 || !xdr_get_opaque(&xc, &tag, CB_MAX_TAG) ||
	    !xdr_get_u32(&xc, &nres) || nres < 1 || !xdr_get_u32(&xc, &op) ||
	    !xdr_get_u32(&xc, &opstatus) || opstatus != 0)
		return false;
	/* CREATE_SESSION may follow SEQUENCE (RFC 8881 18.36.3); alone, it
	 * and BIND_CONN_TO_SESSION are sole ops (15.1.3.3).  SEQUENCE4resok:
	 * sessionid, then five words. */
	if (op == CHK_OP_SEQUENCE &&
	    (nres < 2 || !xdr_skip(&xc, CHK_NFS4_SESSIONID_SIZE + 5 * 4) ||
	     !xdr_get_u32(&xc, &op) || op != CHK_OP_CREATE_SESSION ||
	     !xdr_get_u32(&xc, &opstatus) || opstatus != 0))
		return false;
	switch (op) {
	case CHK_OP_CREATE_SESSION:
		/* csr_sessionid, csr_sequence, csr_flags, ... */
		return get_sid(&xc, sid) && xdr_get_u32(&xc, &seq) && xdr_get_u32(&xc, &flags) &&
		       (flags & CREATE_SESSION4_FLAG_CONN_BACK_CHAN);
	case CHK_OP_BIND_CONN_TO_SESSION:
		/* bctsr_sessid, bctsr_dir, bctsr_use_conn_in_rdma_mode */
		return get_sid(&xc, sid) && xdr_get_u32(&xc, &flags) && (flags & CDFS4_BACK);
	default:
		return false;
	}
}

bool chk_cb_may_bind(const struct chk_call_walk *cw)
{
	if (cw->cw_prog != CHK_PROG_NFS || cw->cw_vers != 4 || cw->cw_proc != CHK_NFSPROC4_COMPOUND)
		return false;
	/* Ops not listed (arguments sealed, or not walked): look at the reply. */
	if (cw->cw_nops_listed == 0)
		return cw->cw_nops != 0 || cw->cw_noddp != CHK_NODDP_NO;
	switch (cw->cw_op[0]) {
	case CHK_OP_CREATE_SESSION:
	case CHK_OP_BIND_CONN_TO_SESSION:
		return true;
	case CHK_OP_SEQUENCE:
		return cw->cw_nops_listed >= 2 && cw->cw_op[1] == CHK_OP_CREATE_SESSION;
	default:
		return false;
	}
}

bool chk_cb_parse_sequence(const struct iovec *iov, unsigned niov, uint8_t *sid)
{
	struct rpc_call_hdr h;
	struct xdr_span tag;
	struct xdr_cur xc;
	uint32_t minor, nops, op;

	xdr_cur_init(&xc, iov, niov);
	return rpc_call_decode(&xc, &h) && h.rc_proc == CHK_NFSPROC4_COMPOUND &&
	       xdr_get_opaque(&xc, &tag, CB_MAX_TAG) && xdr_get_u32(&xc, &minor) && minor >= 1 &&
	       xdr_get_u32(&xc, &nops) && nops >= 1 && xdr_get_u32(&xc, &op) &&
	       op == CHK_OP_SEQUENCE && get_sid(&xc, sid);
}
