// SPDX-License-Identifier: MIT
/*
 * nfs_walk.c - XDR walkers that find DDP-eligible items in NFS calls and
 * replies (RFC 8267) and bound the size of replies.
 *
 * This file contains the entry points of the call walker (chk_call_walk)
 * and of the reply walker (chk_reply_walk) for NFS versions 2, 3 and
 * 4.0/4.1/4.2, and how the reply walker pairs results with write chunks;
 * the XDR of each version is in nfs_walk_v23.c and nfs_walk_v4.c.  Both
 * are pure functions over an XDR cursor: they never copy payload and
 * never allocate.
 *
 * Call walker.  Every argument of every procedure, and of every NFSv4
 * COMPOUND operation, is skipped exactly as its XDR says, so that the
 * position of each DDP-eligible item (WRITE data, SYMLINK path, NF4LNK
 * linkdata) is the position a server computes.  Along the way it adds up a
 * bound of the results: fixed-size results add their XDR maximum, variable
 * ones are bounded from the arguments (READ count, READDIR maxcount, GETATTR
 * bitmap, LAYOUTGET/GETDEVICEINFO maxcount, READ_PLUS count, ...).  Results
 * that no argument bounds (ACLs, fs_locations, SECINFO, EXCHANGE_ID, ...)
 * mark the reply unbounded: the decision then offers a reply chunk of the
 * configured cap.  The kernel never checks an inline reply against our
 * receive buffer, so an under-estimate costs the connection; every bound
 * here errs on the large side.
 *
 * An NFSv4 operation we do not know (or one outside the COMPOUND's minor
 * version) ends the walk: items found before it keep their DDP, nothing
 * after it gets any, and the reply becomes unbounded.  No byte is ever
 * placed at a position we are not sure of.
 *
 * Reply walker.  Results are walked in order; the n-th DDP-eligible result
 * (READ data, READLINK path) pairs with the n-th write chunk (RFC 8267
 * 6.4.1).  The length word stays inline; the data and its XDR pad are not
 * in the inline stream when a chunk carried them.  The length word must
 * equal the bytes the server wrote into the chunk.  Chunks that no result
 * used (errors, COMPOUND stopped early) must come back empty.  The output
 * is a list of pieces - inline spans, chunk data, zero pad - whose
 * concatenation is the reply a TCP server would have sent.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nfs_walk.h"

const uint8_t chk_zero_pad[4] = { 0, 0, 0, 0 };

#define GSS_INTEG_OVERHEAD (4 + 4 + 4 + 128)	/* databody len, seq, checksum len, MIC */

/* ------------------------------------------------------------------------
 * chk_call_walk
 * ------------------------------------------------------------------------ */
static bool walk_args(struct chk_cwalk *w, uint32_t prog, uint32_t vers, uint32_t proc)
{
	if (prog != CHK_PROG_NFS) {
		/* RFC 8267 section 5: nothing in MOUNT, NLM, NSM, NFSACL (or any
		 * program we do not know) is DDP-eligible.  Procedure 0 is NULL
		 * by convention (RFC 5531 section 12.1). */
		w->wk_cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->wk_unb = proc != 0;
		return true;
	}
	switch (vers) {
	case 2: return chk_walk_v2_call(w, proc);
	case 3: return chk_walk_v3_call(w, proc);
	case 4: return chk_walk_v4_call(w, proc);
	default:
		w->wk_cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->wk_unb = proc != 0;
		return true;
	}
}

bool chk_call_walk(struct xdr_cur *xc, uint32_t prog, uint32_t vers, uint32_t proc,
		   uint32_t gss_service, struct chk_call_walk *cw, enum chk_walk_err *err)
{
	struct chk_cwalk w = { .wk_cw = cw, .wk_xc = xc, .wk_res = 0, .wk_unb = false };
	bool ok;

	cw->cw_prog = prog;
	cw->cw_vers = vers;
	cw->cw_proc = proc;
	cw->cw_gss = gss_service;
	cw->cw_minor = 0;
	cw->cw_nops = 0;
	cw->cw_nops_known = 0;
	cw->cw_nops_listed = 0;
	cw->cw_noddp = CHK_NODDP_NO;
	cw->cw_ncall = 0;
	cw->cw_nreply = 0;
	*err = CHK_WALK_OK;

	if (gss_service == RPC_GSS_SVC_INTEGRITY) {
		/* rpc_gss_integ_data (RFC 2203 5.3.2.2): databody_integ<> holds
		 * seq_num and the arguments in clear; walk them for the reply
		 * bound only: the body is checksummed, so no DDP. */
		uint32_t len, seq;

		ok = u32(xc, &len) && u32(xc, &seq) && walk_args(&w, prog, vers, proc);
		cw->cw_ncall = 0;
		cw->cw_nreply = 0;
		cw->cw_noddp = CHK_NODDP_GSS;
		res_add(&w, GSS_INTEG_OVERHEAD);
	} else if (gss_service == RPC_GSS_SVC_PRIVACY || gss_service == CHK_GSS_CONTROL) {
		cw->cw_noddp = CHK_NODDP_GSS;
		w.wk_unb = true;
		ok = true;
	} else {
		ok = walk_args(&w, prog, vers, proc);
	}
	cw->cw_args_end = xdr_pos(xc);
	cw->cw_res_unbounded = w.wk_unb;
	cw->cw_res_max = w.wk_res;
	if (!ok) {
		/* The server will answer GARBAGE_ARGS; forward without DDP and
		 * without trusting any bound. */
		cw->cw_noddp = CHK_NODDP_GARBAGE;
		cw->cw_res_unbounded = true;
		cw->cw_ncall = 0;
		cw->cw_nreply = 0;
		*err = CHK_WALK_XDR;
		return false;
	}
	return true;
}

/* ------------------------------------------------------------------------
 * Reply walk
 * ------------------------------------------------------------------------ */


static bool piece(struct chk_rwalk *r, uint8_t kind, uint16_t chunk, size_t off, size_t len)
{
	struct chk_reply_walk *rw = r->rv_rw;
	struct chk_piece *pc;

	if (len == 0)
		return true;
	if (rw->rw_npieces >= CHK_MAX_PIECES) {
		r->rv_err = CHK_WALK_TOO_MANY;
		return false;
	}
	pc = &rw->rw_pieces[rw->rw_npieces++];
	pc->pc_kind = kind;
	pc->pc_chunk = chunk;
	pc->pc_off = off;
	pc->pc_len = len;
	rw->rw_len += len;
	return true;
}

/* An eligible result arm that is present: cursor at its length word. */
bool chk_rw_item(struct chk_rwalk *r, uint8_t kind, uint16_t op, uint32_t max)
{
	struct xdr_cur *xc = r->rv_xc;
	struct chk_reply_walk *rw = r->rv_rw;
	struct chk_item *it = NULL;
	uint32_t len;
	size_t pos;

	if (!u32(xc, &len))
		return false;
	if (len > max)
		return xdr_fail(xc, XDR_ERR_TOO_LONG);
	pos = xdr_pos(xc);
	if (rw->rw_nitems < CHK_WALK_MAX_ITEMS) {
		it = &rw->rw_items[rw->rw_nitems++];
		it->it_kind = kind;
		it->it_op = op;
		it->it_pos = pos;
		it->it_len = len;
	}
	if (r->rv_next < r->rv_nw) {
		unsigned k = r->rv_next++;

		/* RFC 8267 6.4.1: a matching write chunk carries the data; the
		 * inline stream goes on right after the length word. */
		if (r->rv_wlens[k] != len) {
			r->rv_err = CHK_WALK_LEN_MISMATCH;
			return false;
		}
		if (!piece(r, CHK_PIECE_INLINE, 0, r->rv_inl, pos - r->rv_inl) ||
		    !piece(r, CHK_PIECE_CHUNK, (uint16_t)k, 0, len) ||
		    !piece(r, CHK_PIECE_PAD, 0, 0, xdr_pad(len)))
			return false;
		r->rv_inl = pos;
		if (len)
			rw->rw_nchunks_used++;
		return true;
	}
	return skip(xc, len);		/* no chunk: data inline */
}

/* An eligible result that did not come (error arm): its chunk, if any,
 * must be empty. */
bool chk_rw_noitem(struct chk_rwalk *r)
{
	if (r->rv_next < r->rv_nw) {
		if (r->rv_wlens[r->rv_next] != 0) {
			r->rv_err = CHK_WALK_CHUNK_UNUSED;
			return false;
		}
		r->rv_next++;
	}
	return true;
}

bool chk_reply_walk(struct xdr_cur *xc, size_t msg_pos, uint32_t prog, uint32_t vers,
		    uint32_t proc, const uint32_t *wlens, unsigned nw,
		    struct chk_reply_walk *rw, enum chk_walk_err *err)
{
	struct chk_rwalk r = { .rv_rw = rw, .rv_xc = xc, .rv_wlens = wlens, .rv_nw = nw,
			       .rv_next = 0, .rv_inl = msg_pos, .rv_err = CHK_WALK_OK };
	bool ok = true;
	unsigned k;

	rw->rw_nitems = 0;
	rw->rw_nchunks_used = 0;
	rw->rw_len = 0;
	rw->rw_npieces = 0;
	if (nw > CHK_WALK_MAX_ITEMS) {
		*err = CHK_WALK_TOO_MANY;
		return false;
	}
	if (prog == CHK_PROG_NFS) {
		switch (vers) {
		case 2: ok = chk_walk_v2_reply(&r, proc); break;
		case 3: ok = chk_walk_v3_reply(&r, proc); break;
		case 4: ok = chk_walk_v4_reply(&r, proc); break;
		default: break;
		}
	}
	if (ok) {
		/* Chunks no result claimed must be empty (RFC 8267 6.4.1). */
		for (k = r.rv_next; k < nw; k++)
			if (wlens[k] != 0) {
				r.rv_err = CHK_WALK_CHUNK_UNUSED;
				ok = false;
				break;
			}
	}
	if (ok)
		ok = piece(&r, CHK_PIECE_INLINE, 0, r.rv_inl, xc->xc_len - r.rv_inl);
	if (!ok && r.rv_err == CHK_WALK_OK)
		r.rv_err = CHK_WALK_XDR;
	*err = r.rv_err;
	return ok;
}
