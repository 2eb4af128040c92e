// SPDX-License-Identifier: MIT
/*
 * This file contains the Connection Configuration Protocol codecs
 * (draft-ietf-nfsv4-rpcrdma-08 section 6.2, RFC 5666 section 6):
 *
 *   program CONFIG_RDMA_PROG {               100400
 *     version VERS1 {                        1
 *       config_rdma_reply CONF_RDMA(config_rdma_req) = 1;
 *     } = 1;
 *   } = 100400;
 *
 * Both argument and result are three XDR unsigned ints.  CCP is OPTIONAL
 * (6) and RFC 8166 no longer defines it; the gateway speaks it only if a
 * configuration asks, so these codecs are kept small and exact.
 */
#include "chunking.h"

bool ccp_req_decode(struct xdr_cur *xc, struct ccp_req *req)
{
	return xdr_get_u32(xc, &req->cq_maxcall_sendsize) &&
	       xdr_get_u32(xc, &req->cq_maxreply_sendsize) &&
	       xdr_get_u32(xc, &req->cq_maxrdmaread);
}

bool ccp_req_encode(struct xdr_enc *xe, const struct ccp_req *req)
{
	return xdr_put_u32(xe, req->cq_maxcall_sendsize) &&
	       xdr_put_u32(xe, req->cq_maxreply_sendsize) &&
	       xdr_put_u32(xe, req->cq_maxrdmaread);
}

bool ccp_reply_decode(struct xdr_cur *xc, struct ccp_reply *rep)
{
	return xdr_get_u32(xc, &rep->ccr_maxcall_sendsize) && xdr_get_u32(xc, &rep->ccr_align) &&
	       xdr_get_u32(xc, &rep->ccr_maxrdmaread);
}

bool ccp_reply_encode(struct xdr_enc *xe, const struct ccp_reply *rep)
{
	return xdr_put_u32(xe, rep->ccr_maxcall_sendsize) && xdr_put_u32(xe, rep->ccr_align) &&
	       xdr_put_u32(xe, rep->ccr_maxrdmaread);
}
