/* SPDX-License-Identifier: MIT */
/*
 * nfs_walk.h - private to the NFS walkers of chunking/ (nfs_walk.c,
 * nfs_walk_v23.c, nfs_walk_v4.c, nfs_walk_v4_res.c).
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
	struct chk_reply_walk *rv_rw;
	struct xdr_cur *rv_xc;
	const uint32_t *rv_wlens;
	unsigned rv_nw;
	unsigned rv_next;	/* next write chunk to pair */
	size_t rv_inl;		/* start of the inline span not yet emitted */
	enum chk_walk_err rv_err;
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

/* NFSv4 sizes and XDR pieces shared by the call walker (nfs_walk_v4.c,
 * which defines them) and the reply walker (nfs_walk_v4_res.c). */
#define NFS4_FHSIZE	128
#define NFS4_OPAQUE_LIMIT 1024
#define NFS4_OK		0
#define V4_STATEID	16
#define V4_CINFO	20
#define V4_BITMAP_MAX	(4 + 4 * CHK_NFS4_BITMAP_MAX)
#define V4_NAME_MAX	(4 + CHK_NFS4_NAME_MAX)
#define V4_OWNER_MAX	(8 + 4 + NFS4_OPAQUE_LIMIT)
#define V4_DENIED_MAX	(8 + 8 + 4 + V4_OWNER_MAX)
#define V4_ACE_MAX	(12 + V4_NAME_MAX)
#define V4_DELEG_MAX	(4 + V4_STATEID + 4 + 12 + V4_ACE_MAX)
#define V4_WRITE_RESP	(4 + V4_STATEID + 8 + 4 + 8)
#define V4_UNB		SIZE_MAX

bool chk_v4_bitmap(struct xdr_cur *xc);
bool chk_v4_fattr(struct xdr_cur *xc);		/* fattr4 */
bool chk_v4_owner(struct xdr_cur *xc);		/* state_owner4 */
bool chk_v4_netaddr(struct xdr_cur *xc);	/* netaddr4 */
bool chk_v4_netloc(struct xdr_cur *xc);		/* netloc4 */
/* An array of elem: length word, then each (at least 4 bytes). */
bool chk_v4_array(struct xdr_cur *xc, bool (*elem)(struct xdr_cur *));
bool chk_v4_channel_attrs(struct xdr_cur *xc);	/* channel_attrs4 */
bool chk_v4_impl_id_opt(struct xdr_cur *xc);	/* nfs_impl_id4<1> */
/* op is an operation of minor version minor (or ILLEGAL). */
bool chk_v4_op_known(uint32_t minor, uint32_t op);

#endif /* RPCRDMA_GW_NFS_WALK_H */
