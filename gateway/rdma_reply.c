// SPDX-License-Identifier: MIT
/*
 * This file contains the RPC-over-RDMA transport's reply translation
 * (transport_rdma.c calls it from its reply callback): the server's reply
 * as the backend reports it (struct be_reply) checked against what the
 * call offered, then turned into the iovecs of the TCP reply.  Pure: no
 * backend, no event loop (the unit tests and fuzz_rdma_reply drive it).
 *
 * Nothing the server says is trusted with the pool.  The targets of a call
 * (write chunks, reply chunk) are pool buffers that may have held other
 * clients' bytes; what is offered is zeroed first where it might
 * (gw_buf_get_for, pool.c), and a reply may only hand out what it says the
 * server placed: each write chunk's
 * reported length within what was offered (RFC 8166 sections 3.4.6 and
 * 4.3.1: "the Write chunk ... length ... the number of bytes written"),
 * the reply chunk's within the reply chunk offered (4.3.2), every body
 * piece of an RDMA_NOMSG reply inside the offered reply chunk, and each
 * result's data length word equal to the bytes its chunk received (the
 * reply walker, RFC 8267 section 6.4.1).  The backend checks the first
 * ones already; they are checked again here because an overrun here is a
 * leak of another client's data, not a malformed message.
 */
#include <string.h>

#include "chunking.h"
#include "transport_rdma.h"

static const char *const gw_rdma_bad_names[GW_RDMA_BAD__COUNT] = {
	[GW_RDMA_BAD_NONE] = "none", [GW_RDMA_BAD_OVERRUN] = "overrun",
	[GW_RDMA_BAD_SHAPE] = "shape", [GW_RDMA_BAD_LENGTH] = "length_mismatch",
	[GW_RDMA_BAD_DECODE] = "undecodable", [GW_RDMA_BAD_HEADER] = "bad_header",
};

const char *gw_rdma_bad_str(enum gw_rdma_bad why)
{
	return (unsigned)why < GW_RDMA_BAD__COUNT ? gw_rdma_bad_names[why] : "?";
}

static size_t gw_rdma_target_len(const struct be_target *t)
{
	size_t n = 0;

	for (unsigned i = 0; t && i < t->bt_niov; i++)
		n += t->bt_iov[i].iov_len;
	return n;
}

/* piece inside the target: in one of its iovecs, or running on through
 * the ones that follow it in memory (one segment over buffers side by side,
 * be_spans_from_iov) */
static bool gw_rdma_in_target(const struct be_target *t, const struct iovec *piece)
{
	const uint8_t *p = piece->iov_base;
	size_t left = piece->iov_len;

	for (unsigned i = 0; i < t->bt_niov; i++) {
		const uint8_t *b = t->bt_iov[i].iov_base;
		size_t l = t->bt_iov[i].iov_len;

		if (p < b || (size_t)(p - b) >= l)
			continue;
		for (size_t have = l - (size_t)(p - b);; have = t->bt_iov[i].iov_len) {
			if (left <= have)
				return true;
			left -= have;
			if (++i == t->bt_niov || (const uint8_t *)t->bt_iov[i].iov_base !=
			    (const uint8_t *)t->bt_iov[i - 1].iov_base + t->bt_iov[i - 1].iov_len)
				return false;
		}
	}
	return false;
}

enum gw_rdma_bad gw_rdma_reply_bound(const struct gw_rdma_call *gc, const struct be_reply *r)
{
	size_t sum = 0;

	if (r->br_nwrites > gc->gc_nwrites || r->br_nwrites > BE_MAX_WRITE_CHUNKS)
		return GW_RDMA_BAD_OVERRUN;
	for (unsigned i = 0; i < r->br_nwrites; i++)
		if (r->br_write_len[i] > gw_rdma_target_len(&gc->gc_wt[i]))
			return GW_RDMA_BAD_OVERRUN;
	if (r->br_nbody > BE_MAX_TARGET_IOV)
		return GW_RDMA_BAD_SHAPE;
	for (unsigned i = 0; i < r->br_nbody; i++)
		sum += r->br_body[i].iov_len;
	if (sum != r->br_body_len)
		return GW_RDMA_BAD_SHAPE;
	if (r->br_proc == RPCRDMA_NOMSG) {
		/* The whole message is in the reply chunk: no more than offered,
		 * and nowhere else (gc_rt is empty when none was offered). */
		if (r->br_body_len > gw_rdma_target_len(&gc->gc_rt))
			return GW_RDMA_BAD_OVERRUN;
		for (unsigned i = 0; i < r->br_nbody; i++)
			if (r->br_body[i].iov_len && !gw_rdma_in_target(&gc->gc_rt, &r->br_body[i]))
				return GW_RDMA_BAD_OVERRUN;
	}
	return GW_RDMA_BAD_NONE;
}

/* Append stream bytes [off, off + len) of iov[] to the reply iovecs. */
static bool gw_rdma_out_range(struct gw_rdma_call *gc, const struct iovec *iov, unsigned niov,
			      size_t off, size_t len)
{
	for (unsigned i = 0; i < niov && len > 0; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		l -= off;
		if (l > len)
			l = len;
		if (gc->gc_nout == GW_RDMA_OUT_IOV)
			return false;
		gc->gc_out[gc->gc_nout++] = (struct iovec){ (uint8_t *)iov[i].iov_base + off, l };
		len -= l;
		off = 0;
	}
	return len == 0;
}

/* The walker's error as what the server did wrong. */
static enum gw_rdma_bad gw_rdma_walk_bad(enum chk_walk_err werr)
{
	switch (werr) {
	case CHK_WALK_LEN_MISMATCH:
	case CHK_WALK_CHUNK_UNUSED:
		return GW_RDMA_BAD_LENGTH;
	case CHK_WALK_TOO_MANY:
		return GW_RDMA_BAD_SHAPE;
	default:
		return GW_RDMA_BAD_DECODE;
	}
}

enum gw_rdma_bad gw_rdma_reply_assemble(struct gw_rdma_call *gc, const struct rpc_call_hdr *hdr,
					uint32_t gss, const struct iovec *body, unsigned nbody,
					const uint32_t *wlen, unsigned nw, enum chk_walk_err *werr)
{
	struct chk_reply_walk rw;
	struct rpc_reply_hdr rh;
	struct xdr_cur xc;
	uint32_t prog = 0;

	*werr = CHK_WALK_OK;
	gc->gc_nout = 0;
	if (nw > gc->gc_nwrites)
		return GW_RDMA_BAD_OVERRUN;
	xdr_cur_init(&xc, body, nbody);
	if (!rpc_reply_decode(&xc, &rh)) {
		*werr = CHK_WALK_XDR;
		return GW_RDMA_BAD_DECODE;
	}
	/* Plain results only for accepted, successful, non-GSS-wrapped replies. */
	if (rh.rr_stat == RPC_MSG_ACCEPTED && rh.rr_accept_stat == RPC_SUCCESS &&
	    (gss == 0 || gss == RPC_GSS_SVC_NONE))
		prog = hdr->rc_prog;
	if (!chk_reply_walk(&xc, 0, prog, hdr->rc_vers, hdr->rc_proc, wlen, nw, &rw, werr))
		return gw_rdma_walk_bad(*werr);
	for (unsigned i = 0; i < rw.rw_npieces; i++) {
		const struct chk_piece *pc = &rw.rw_pieces[i];
		bool ok;

		switch (pc->pc_kind) {
		case CHK_PIECE_INLINE:
			ok = gw_rdma_out_range(gc, body, nbody, pc->pc_off, pc->pc_len);
			break;
		case CHK_PIECE_CHUNK:
			/* only what the server reported placed, never the rest of
			 * the offered buffers */
			if (pc->pc_chunk >= nw || pc->pc_off + pc->pc_len > wlen[pc->pc_chunk]) {
				gc->gc_nout = 0;
				return GW_RDMA_BAD_OVERRUN;
			}
			ok = gw_rdma_out_range(gc, gc->gc_wt[pc->pc_chunk].bt_iov,
					       gc->gc_wt[pc->pc_chunk].bt_niov, pc->pc_off,
					       pc->pc_len);
			if (!ok) {
				gc->gc_nout = 0;
				return GW_RDMA_BAD_OVERRUN;
			}
			break;
		default:
			ok = gc->gc_nout < GW_RDMA_OUT_IOV && pc->pc_len < sizeof(chk_zero_pad);
			if (ok)
				gc->gc_out[gc->gc_nout++] = (struct iovec){ (void *)chk_zero_pad, pc->pc_len };
			break;
		}
		if (!ok) {
			*werr = CHK_WALK_TOO_MANY;
			gc->gc_nout = 0;
			return GW_RDMA_BAD_SHAPE;
		}
	}
	return GW_RDMA_BAD_NONE;
}
