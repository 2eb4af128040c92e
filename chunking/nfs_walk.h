/* SPDX-License-Identifier: MIT */
/*
 * nfs_walk.h - private to the NFS walkers of chunking/ (nfs_walk.c,
 * nfs_walk_v23.c, nfs_walk_v4.c).
 *
 * This file contains the walk state and the small XDR helpers the walkers
 * share, and the per-version entry points nfs_walk.c dispatches to.  It is
 * not part of the module's API (that is chunking.h).
 */
#ifndef RPCRDMA_GW_NFS_WALK_H
#define RPCRDMA_GW_NFS_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "chunking.h"

#define OPAQUE_ANY	UINT32_MAX	/* no protocol maximum: the stream bounds it */

/* Call walk state. */
struct chk_cwalk {
	struct chk_call_walk *wk_cw;
	struct xdr_cur *wk_xc;
	size_t wk_res;		/* running bound of the results */
	bool wk_unb;		/* results unbounded */
};

static inline size_t badd(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static inline void res_add(struct chk_cwalk *w, size_t n)
{
	w->wk_res = badd(w->wk_res, n);
}

static inline void call_item(struct chk_cwalk *w, uint8_t kind, uint16_t op,
			     const struct xdr_span *sp)
{
	struct chk_call_walk *cw = w->wk_cw;
	struct chk_item *it;

	/* Beyond the table's capacity an item simply stays inline. */
	if (cw->cw_ncall >= CHK_WALK_MAX_ITEMS)
		return;
	it = &cw->cw_call[cw->cw_ncall++];
	it->it_kind = kind;
	it->it_op = op;
	it->it_pos = sp->xs_pos;
	it->it_len = (uint32_t)sp->xs_len;
}

static inline void reply_item(struct chk_cwalk *w, uint8_t kind, uint16_t op, uint32_t max)
{
	struct chk_call_walk *cw = w->wk_cw;
	struct chk_item *it;

	/* Write chunks are offered for a prefix of these only, so a reply
	 * item past the capacity just never gets a chunk. */
	if (cw->cw_nreply >= CHK_WALK_MAX_ITEMS)
		return;
	it = &cw->cw_reply[cw->cw_nreply++];
	it->it_kind = kind;
	it->it_op = op;
	it->it_pos = 0;
	it->it_len = max;
}

static inline bool u32(struct xdr_cur *xc, uint32_t *v)
{
	return xdr_get_u32(xc, v);
}

static inline bool skip(struct xdr_cur *xc, size_t n)
{
	return xdr_skip(xc, n);
}

static inline bool opaque(struct xdr_cur *xc, uint32_t max)
{
	struct xdr_span sp;

	return xdr_get_opaque(xc, &sp, max);
}

static inline bool boolean(struct xdr_cur *xc, bool *b)
{
	return xdr_get_bool(xc, b);
}

/* union switch (bool) { TRUE: n bytes; default: void } */
static inline bool opt_arm(struct xdr_cur *xc, size_t n)
{
	bool set;

	if (!boolean(xc, &set))
		return false;
	return !set || skip(xc, n);
}

/* Reply walk state. */
struct chk_rwalk {
	struct chk_reply_walk *rk_rw;
	struct xdr_cur *rk_xc;
	const uint32_t *rk_wlens;
	unsigned rk_nw;
	unsigned rk_next;	/* next write chunk to pair */
	size_t rk_inl;		/* start of the inline span not yet emitted */
	enum chk_walk_err rk_err;
};

/* Arguments of one procedure (chk_call_walk: cursor at the arguments). */
bool chk_walk_v2_call(struct chk_cwalk *w, uint32_t proc);
bool chk_walk_v3_call(struct chk_cwalk *w, uint32_t proc);
bool chk_walk_v4_call(struct chk_cwalk *w, uint32_t proc);
/* Results of one procedure (chk_reply_walk: cursor at the results). */
bool chk_walk_v2_reply(struct chk_rwalk *r, uint32_t proc);
bool chk_walk_v3_reply(struct chk_rwalk *r, uint32_t proc);
bool chk_walk_v4_reply(struct chk_rwalk *r, uint32_t proc);
/* An eligible result arm that is present (cursor at its length word) /
 * absent (error arm): paired with the next write chunk, if any. */
bool chk_rw_item(struct chk_rwalk *r, uint8_t kind, uint16_t op, uint32_t max);
bool chk_rw_noitem(struct chk_rwalk *r);

#endif /* RPCRDMA_GW_NFS_WALK_H */
