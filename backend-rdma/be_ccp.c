// SPDX-License-Identifier: MIT
/*
 * This file contains the pure pieces of the Connection Configuration
 * Protocol client (draft-ietf-nfsv4-rpcrdma-08 section 6): the CONF_RDMA
 * call message, the reading of its answer, and how the answer is applied
 * within our own limits.  be_conn.c sends the call and holds the others
 * back until it ends; these functions have no verbs inside (unit-tested).
 *
 * CCP is OPTIONAL (section 6) and gone from RFC 8166; the Linux server does
 * not serve program 100400 and answers PROG_UNAVAIL.  Every answer other
 * than a well-formed SUCCESS leaves the RFC 8797 values in place.
 */
#include <string.h>

#include "backend.h"

static const char *const ccp_state_names[] = {
	[BE_CCP_OFF] = "off",
	[BE_CCP_PENDING] = "pending",
	[BE_CCP_DONE] = "done",
	[BE_CCP_FALLBACK] = "fallback",
};

const char *be_ccp_state_str(enum be_ccp_state st)
{
	return (unsigned)st <= BE_CCP_FALLBACK ? ccp_state_names[st] : "?";
}

static const char *const ccp_res_names[BE_CCP_RES__COUNT] = {
	[BE_CCP_RES_OK] = "ok",
	[BE_CCP_RES_PROG_UNAVAIL] = "PROG_UNAVAIL",
	[BE_CCP_RES_PROG_MISMATCH] = "PROG_MISMATCH",
	[BE_CCP_RES_REFUSED] = "refused",
	[BE_CCP_RES_GARBAGE] = "garbage",
	[BE_CCP_RES_TIMEOUT] = "no answer",
};

const char *be_ccp_result_str(enum be_ccp_result res)
{
	return (unsigned)res < BE_CCP_RES__COUNT ? ccp_res_names[res] : "?";
}

size_t be_ccp_call_encode(uint32_t xid, const struct ccp_req *req, uint8_t *buf)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, buf, BE_CCP_CALL_LEN);
	/* RFC 5531 9: xid, CALL, rpcvers, prog, vers, proc, AUTH_NONE cred and verf */
	xdr_put_u32(&xe, xid);
	xdr_put_u32(&xe, RPC_CALL);
	xdr_put_u32(&xe, RPC_VERS);
	xdr_put_u32(&xe, CCP_PROG);
	xdr_put_u32(&xe, CCP_VERS);
	xdr_put_u32(&xe, CCP_PROC_CONF_RDMA);
	xdr_put_u32(&xe, RPC_AUTH_NONE);
	xdr_put_u32(&xe, 0);
	xdr_put_u32(&xe, RPC_AUTH_NONE);
	xdr_put_u32(&xe, 0);
	ccp_req_encode(&xe, req);
	return xe.xe_err == XDR_OK ? xe.xe_len : 0;
}

enum be_ccp_result be_ccp_reply_parse(const struct iovec *body, unsigned nbody, uint32_t xid,
				      struct ccp_reply *rep)
{
	struct rpc_reply_hdr rh;
	struct xdr_cur xc;

	memset(rep, 0, sizeof(*rep));
	xdr_cur_init(&xc, body, nbody);
	if (!rpc_reply_decode(&xc, &rh) || rh.rr_xid != xid)
		return BE_CCP_RES_GARBAGE;
	if (rh.rr_stat != RPC_MSG_ACCEPTED)
		return BE_CCP_RES_REFUSED;
	switch (rh.rr_accept_stat) {
	case RPC_SUCCESS:
		break;
	case RPC_PROG_UNAVAIL:
		return BE_CCP_RES_PROG_UNAVAIL;
	case RPC_PROG_MISMATCH:
		return BE_CCP_RES_PROG_MISMATCH;
	default:
		return BE_CCP_RES_REFUSED;
	}
	/* config_rdma_reply is exactly three words: anything else is not it. */
	if (!xdr_seek(&xc, rh.rr_results_pos) || xdr_remaining(&xc) != CCP_ARGS_LEN ||
	    !ccp_reply_decode(&xc, rep))
		return BE_CCP_RES_GARBAGE;
	return BE_CCP_RES_OK;
}

void be_ccp_apply(const struct ccp_reply *rep, uint32_t our_send, unsigned our_depth,
		  uint32_t *send_threshold, unsigned *read_depth)
{
	uint32_t s = rep->ccr_maxcall_sendsize;

	if (s < RPCRDMA_PD_DEFAULT_SIZE)
		s = RPCRDMA_PD_DEFAULT_SIZE;
	if (s > our_send)
		s = our_send;
	*send_threshold = s;
	*read_depth = rep->ccr_maxrdmaread < our_depth ? rep->ccr_maxrdmaread : our_depth;
}
