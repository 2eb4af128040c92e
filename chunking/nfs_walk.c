// SPDX-License-Identifier: MIT
/*
 * nfs_walk.c - XDR walkers that find DDP-eligible items in NFS calls and
 * replies (RFC 8267) and bound the size of replies.
 *
 * This file contains the call walker (chk_call_walk) and the reply walker
 * (chk_reply_walk) for NFS versions 2, 3 and 4.0/4.1/4.2.  Both are pure
 * functions over an XDR cursor: they never copy payload and never allocate.
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

#include "chunking.h"

const uint8_t chk_zero_pad[4] = { 0, 0, 0, 0 };

#define OPAQUE_ANY	UINT32_MAX	/* no protocol maximum: the stream bounds it */
#define NFS4_FHSIZE	128
#define NFS4_OPAQUE_LIMIT 1024
#define NFS4_OK		0
#define GSS_INTEG_OVERHEAD (4 + 4 + 4 + 128)	/* databody len, seq, checksum len, MIC */

/* ------------------------------------------------------------------------
 * Call walk state and helpers
 * ------------------------------------------------------------------------ */
struct walk {
	struct chk_call_walk *cw;
	struct xdr_cur *xc;
	size_t res;		/* running bound of the results */
	bool unb;		/* results unbounded */
};

static size_t badd(size_t a, size_t b)
{
	return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static void res_add(struct walk *w, size_t n)
{
	w->res = badd(w->res, n);
}

static void call_item(struct walk *w, uint8_t kind, uint16_t op, const struct xdr_span *sp)
{
	struct chk_call_walk *cw = w->cw;
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

static void reply_item(struct walk *w, uint8_t kind, uint16_t op, uint32_t max)
{
	struct chk_call_walk *cw = w->cw;
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

static bool u32(struct xdr_cur *xc, uint32_t *v)
{
	return xdr_get_u32(xc, v);
}

static bool skip(struct xdr_cur *xc, size_t n)
{
	return xdr_skip(xc, n);
}

static bool opaque(struct xdr_cur *xc, uint32_t max)
{
	struct xdr_span sp;

	return xdr_get_opaque(xc, &sp, max);
}

static bool boolean(struct xdr_cur *xc, bool *b)
{
	return xdr_get_bool(xc, b);
}

/* ------------------------------------------------------------------------
 * NFS version 2 (RFC 1094; nfs.x)
 * ------------------------------------------------------------------------ */
#define V2_FH		32
#define V2_FATTR	68
#define V2_SATTR	32
#define V2_MAXNAMLEN	255
#define V2_MAXPATHLEN	1024
#define V2_MAXDATA	8192

static bool v2_diropargs(struct xdr_cur *xc)
{
	return skip(xc, V2_FH) && opaque(xc, V2_MAXNAMLEN);
}

static bool v2_call(struct walk *w, uint32_t proc)
{
	struct xdr_cur *xc = w->xc;
	struct xdr_span sp;
	uint32_t count;

	switch (proc) {
	case 0:		/* NULL */
	case 3:		/* ROOT (obsolete) */
	case 7:		/* WRITECACHE (obsolete) */
		return true;
	case 1:		/* GETATTR: fhandle -> attrstat */
		res_add(w, 4 + V2_FATTR);
		return skip(xc, V2_FH);
	case 2:		/* SETATTR */
		res_add(w, 4 + V2_FATTR);
		return skip(xc, V2_FH + V2_SATTR);
	case 4:		/* LOOKUP -> diropres */
		res_add(w, 4 + V2_FH + V2_FATTR);
		return v2_diropargs(xc);
	case 5:		/* READLINK -> path<1024> */
		res_add(w, 4 + 4 + V2_MAXPATHLEN);
		reply_item(w, CHK_DDP_READLINK_PATH, 0, V2_MAXPATHLEN);
		return skip(xc, V2_FH);
	case 6:		/* READ: fh, offset, count, totalcount -> fattr, data<8192> */
		if (!skip(xc, V2_FH + 4) || !u32(xc, &count) || !skip(xc, 4))
			return false;
		if (count > V2_MAXDATA)
			count = V2_MAXDATA;	/* nfsdata2 can hold no more */
		res_add(w, 4 + V2_FATTR + 4 + xdr_round4(count));
		reply_item(w, CHK_DDP_READ_DATA, 0, count);
		return true;
	case 8:		/* WRITE: fh, beginoffset, offset, totalcount, data */
		res_add(w, 4 + V2_FATTR);
		if (!skip(xc, V2_FH + 12) || !xdr_get_opaque(xc, &sp, V2_MAXDATA))
			return false;
		call_item(w, CHK_DDP_WRITE_DATA, 0, &sp);
		return true;
	case 9:		/* CREATE */
	case 14:	/* MKDIR */
		res_add(w, 4 + V2_FH + V2_FATTR);
		return v2_diropargs(xc) && skip(xc, V2_SATTR);
	case 10:	/* REMOVE */
	case 15:	/* RMDIR */
		res_add(w, 4);
		return v2_diropargs(xc);
	case 11:	/* RENAME */
		res_add(w, 4);
		return v2_diropargs(xc) && v2_diropargs(xc);
	case 12:	/* LINK */
		res_add(w, 4);
		return skip(xc, V2_FH) && v2_diropargs(xc);
	case 13:	/* SYMLINK: from, to (path), attributes */
		res_add(w, 4);
		if (!v2_diropargs(xc) || !xdr_get_opaque(xc, &sp, V2_MAXPATHLEN))
			return false;
		call_item(w, CHK_DDP_SYMLINK_PATH, 0, &sp);
		return skip(xc, V2_SATTR);
	case 16:	/* READDIR: fh, cookie[4], count -> entries + eof */
		if (!skip(xc, V2_FH + 4) || !u32(xc, &count))
			return false;
		res_add(w, 4 + (size_t)count + 8);
		return true;
	case 17:	/* STATFS */
		res_add(w, 4 + 20);
		return skip(xc, V2_FH);
	default:
		w->cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->unb = true;
		return true;
	}
}

/* ------------------------------------------------------------------------
 * NFS version 3 (RFC 1813; nfs3.x)
 * ------------------------------------------------------------------------ */
#define V3_FHSIZE	64
#define V3_FATTR	84
#define V3_POST_OP_ATTR	(4 + V3_FATTR)
#define V3_WCC_DATA	(4 + 24 + V3_POST_OP_ATTR)
#define V3_POST_OP_FH	(4 + 4 + V3_FHSIZE)
#define V3_CREATE_RES	(4 + V3_POST_OP_FH + V3_POST_OP_ATTR + V3_WCC_DATA)

static bool v3_fh(struct xdr_cur *xc)
{
	return opaque(xc, V3_FHSIZE);
}

static bool v3_diropargs(struct xdr_cur *xc)
{
	return v3_fh(xc) && opaque(xc, OPAQUE_ANY);
}

/* union switch (bool) { TRUE: n bytes; default: void } */
static bool opt_arm(struct xdr_cur *xc, size_t n)
{
	bool set;

	if (!boolean(xc, &set))
		return false;
	return !set || skip(xc, n);
}

/* set_atime / set_mtime: time_how; SET_TO_CLIENT_TIME (2) carries nfstime3. */
static bool v3_settime(struct xdr_cur *xc)
{
	uint32_t how;

	if (!xdr_get_enum(xc, &how, 3))
		return false;
	return how != 2 || skip(xc, 8);
}

static bool v3_sattr(struct xdr_cur *xc)
{
	return opt_arm(xc, 4) && opt_arm(xc, 4) && opt_arm(xc, 4) && opt_arm(xc, 8) &&
	       v3_settime(xc) && v3_settime(xc);
}

static bool v3_call(struct walk *w, uint32_t proc)
{
	struct xdr_cur *xc = w->xc;
	struct xdr_span sp;
	uint32_t count, mode;

	switch (proc) {
	case 0:		/* NULL */
		return true;
	case 1:		/* GETATTR */
		res_add(w, 4 + V3_FATTR);
		return v3_fh(xc);
	case 2:		/* SETATTR: fh, sattr3, sattrguard3 */
		res_add(w, 4 + V3_WCC_DATA);
		return v3_fh(xc) && v3_sattr(xc) && opt_arm(xc, 8);
	case 3:		/* LOOKUP */
		res_add(w, 4 + 4 + V3_FHSIZE + 2 * V3_POST_OP_ATTR);
		return v3_diropargs(xc);
	case 4:		/* ACCESS */
		res_add(w, 4 + V3_POST_OP_ATTR + 4);
		return v3_fh(xc) && skip(xc, 4);
	case 5:		/* READLINK */
		res_add(w, 4 + V3_POST_OP_ATTR + 4 + CHK_NFS_MAXPATHLEN);
		reply_item(w, CHK_DDP_READLINK_PATH, 0, CHK_NFS_MAXPATHLEN);
		return v3_fh(xc);
	case 6:		/* READ: fh, offset, count */
		if (!v3_fh(xc) || !skip(xc, 8) || !u32(xc, &count))
			return false;
		res_add(w, 4 + V3_POST_OP_ATTR + 4 + 4 + 4 + xdr_round4(count));
		reply_item(w, CHK_DDP_READ_DATA, 0, count);
		return true;
	case 7:		/* WRITE: fh, offset, count, stable, data */
		res_add(w, 4 + V3_WCC_DATA + 4 + 4 + 8);
		if (!v3_fh(xc) || !skip(xc, 8 + 4 + 4) ||
		    !xdr_get_opaque(xc, &sp, OPAQUE_ANY))
			return false;
		call_item(w, CHK_DDP_WRITE_DATA, 0, &sp);
		return true;
	case 8:		/* CREATE: where, createhow3 */
		res_add(w, V3_CREATE_RES);
		if (!v3_diropargs(xc) || !xdr_get_enum(xc, &mode, 3))
			return false;
		return mode == 2 ? skip(xc, 8) : v3_sattr(xc);
	case 9:		/* MKDIR */
		res_add(w, V3_CREATE_RES);
		return v3_diropargs(xc) && v3_sattr(xc);
	case 10:	/* SYMLINK: where, sattr3, nfspath3 */
		res_add(w, V3_CREATE_RES);
		if (!v3_diropargs(xc) || !v3_sattr(xc) ||
		    !xdr_get_opaque(xc, &sp, OPAQUE_ANY))
			return false;
		call_item(w, CHK_DDP_SYMLINK_PATH, 0, &sp);
		return true;
	case 11:	/* MKNOD: where, mknoddata3 */
		res_add(w, V3_CREATE_RES);
		if (!v3_diropargs(xc) || !u32(xc, &mode))
			return false;
		if (mode == 3 || mode == 4)	/* NF3BLK, NF3CHR: sattr3 + specdata3 */
			return v3_sattr(xc) && skip(xc, 8);
		if (mode == 6 || mode == 7)	/* NF3SOCK, NF3FIFO */
			return v3_sattr(xc);
		return true;			/* default: void */
	case 12:	/* REMOVE */
	case 13:	/* RMDIR */
		res_add(w, 4 + V3_WCC_DATA);
		return v3_diropargs(xc);
	case 14:	/* RENAME */
		res_add(w, 4 + 2 * V3_WCC_DATA);
		return v3_diropargs(xc) && v3_diropargs(xc);
	case 15:	/* LINK */
		res_add(w, 4 + V3_POST_OP_ATTR + V3_WCC_DATA);
		return v3_fh(xc) && v3_diropargs(xc);
	case 16:	/* READDIR: fh, cookie, cookieverf, count */
		if (!v3_fh(xc) || !skip(xc, 16) || !u32(xc, &count))
			return false;
		/* count bounds READDIR3resok; Linux nfsd spends it on the entries
		 * alone, so add the attributes, verifier and list ends on top. */
		res_add(w, 4 + V3_POST_OP_ATTR + 8 + (size_t)count + 8);
		return true;
	case 17:	/* READDIRPLUS: fh, cookie, cookieverf, dircount, maxcount */
		if (!v3_fh(xc) || !skip(xc, 16 + 4) || !u32(xc, &count))
			return false;
		res_add(w, 4 + V3_POST_OP_ATTR + 8 + (size_t)count + 8);
		return true;
	case 18:	/* FSSTAT */
		res_add(w, 4 + V3_POST_OP_ATTR + 6 * 8 + 4);
		return v3_fh(xc);
	case 19:	/* FSINFO */
		res_add(w, 4 + V3_POST_OP_ATTR + 7 * 4 + 8 + 8 + 4);
		return v3_fh(xc);
	case 20:	/* PATHCONF */
		res_add(w, 4 + V3_POST_OP_ATTR + 6 * 4);
		return v3_fh(xc);
	case 21:	/* COMMIT */
		res_add(w, 4 + V3_WCC_DATA + 8);
		return v3_fh(xc) && skip(xc, 12);
	default:
		w->cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->unb = true;
		return true;
	}
}

/* ------------------------------------------------------------------------
 * NFSv4 common XDR (nfs4.x)
 * ------------------------------------------------------------------------ */
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

static bool v4_bitmap(struct xdr_cur *xc)
{
	uint32_t n;

	if (!u32(xc, &n))
		return false;
	return skip(xc, (size_t)n * 4);
}

static bool v4_fattr(struct xdr_cur *xc)
{
	return v4_bitmap(xc) && opaque(xc, OPAQUE_ANY);
}

static bool v4_owner(struct xdr_cur *xc)	/* state_owner4 */
{
	return skip(xc, 8) && opaque(xc, NFS4_OPAQUE_LIMIT);
}

static bool v4_netaddr(struct xdr_cur *xc)
{
	return opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY);
}

static bool v4_netloc(struct xdr_cur *xc)
{
	uint32_t t;

	if (!u32(xc, &t))
		return false;
	if (t == 1 || t == 2)		/* NL4_NAME, NL4_URL */
		return opaque(xc, OPAQUE_ANY);
	if (t == 3)			/* NL4_NETADDR */
		return v4_netaddr(xc);
	return xdr_fail(xc, XDR_ERR_BAD_ENUM);
}

static bool v4_array(struct xdr_cur *xc, bool (*elem)(struct xdr_cur *))
{
	uint32_t n, i;

	if (!u32(xc, &n))
		return false;
	/* Each element is at least 4 bytes: the stream bounds the loop. */
	if ((size_t)n * 4 > xdr_remaining(xc))
		return xdr_fail(xc, XDR_ERR_SHORT);
	for (i = 0; i < n; i++)
		if (!elem(xc))
			return false;
	return true;
}

static bool v4_cb_sec_parms(struct xdr_cur *xc)	/* callback_sec_parms4 */
{
	uint32_t flavor;

	if (!u32(xc, &flavor))
		return false;
	switch (flavor) {
	case 0:		/* AUTH_NONE */
		return true;
	case 1:		/* AUTH_SYS: authsys_parms */
		return skip(xc, 4) && opaque(xc, 255) && skip(xc, 8) && v4_bitmap(xc);
	case 6:		/* RPCSEC_GSS: gss_cb_handles4 */
		return skip(xc, 4) && opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY);
	default:
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	}
}

static bool v4_channel_attrs(struct xdr_cur *xc)
{
	uint32_t n;

	if (!skip(xc, 6 * 4) || !u32(xc, &n))
		return false;
	if (n > 1)
		return xdr_fail(xc, XDR_ERR_TOO_LONG);
	return skip(xc, 4 * (size_t)n);
}

static bool v4_sec_oid(struct xdr_cur *xc)
{
	return opaque(xc, OPAQUE_ANY);
}

static bool v4_state_protect_a(struct xdr_cur *xc)
{
	uint32_t how;

	if (!u32(xc, &how))
		return false;
	switch (how) {
	case 0:
		return true;
	case 1:		/* state_protect_ops4 */
		return v4_bitmap(xc) && v4_bitmap(xc);
	case 2:		/* ssv_sp_parms4 */
		return v4_bitmap(xc) && v4_bitmap(xc) && v4_array(xc, v4_sec_oid) &&
		       v4_array(xc, v4_sec_oid) && skip(xc, 8);
	default:
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	}
}

static bool v4_impl_id(struct xdr_cur *xc)
{
	return opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY) && skip(xc, 12);
}

static bool v4_impl_id_opt(struct xdr_cur *xc)	/* nfs_impl_id4<1> */
{
	uint32_t n;

	if (!u32(xc, &n))
		return false;
	if (n > 1)
		return xdr_fail(xc, XDR_ERR_TOO_LONG);
	return n == 0 || v4_impl_id(xc);
}

static bool v4_layoutupdate(struct xdr_cur *xc)
{
	return skip(xc, 4) && opaque(xc, OPAQUE_ANY);
}

static bool v4_device_error(struct xdr_cur *xc)
{
	return skip(xc, 16 + 4 + 4);
}

/* Value sizes of fattr4 attributes (nfs4.x numbering), XDR-rounded;
 * V4_UNB for those RFC 8267 6.2 lists as unbounded (ACLs, fs_locations,
 * layout metadata) and other strings without a protocol maximum. */
#define ATTR_NUM 87
static const size_t attr_max[ATTR_NUM] = {
	[0] = V4_BITMAP_MAX, [1] = 4, [2] = 4, [3] = 8, [4] = 8, [5] = 4, [6] = 4,
	[7] = 4, [8] = 16, [9] = 4, [10] = 4, [11] = 4, [12] = V4_UNB, [13] = 4,
	[14] = 4, [15] = 4, [16] = 4, [17] = 4, [18] = 4, [19] = 4 + NFS4_FHSIZE,
	[20] = 8, [21] = 8, [22] = 8, [23] = 8, [24] = V4_UNB, [25] = 4, [26] = 4,
	[27] = 8, [28] = 4, [29] = 4, [30] = 8, [31] = 8, [32] = V4_UNB, [33] = 4,
	[34] = 4, [35] = 4, [36] = V4_NAME_MAX, [37] = V4_NAME_MAX, [38] = 8,
	[39] = 8, [40] = 8, [41] = 8, [42] = 8, [43] = 8, [44] = 8, [45] = 8,
	[46] = 4, [47] = 12, [48] = 16, [49] = 12, [50] = 12, [51] = 12, [52] = 12,
	[53] = 12, [54] = 16, [55] = 8, [56] = 12, [57] = 12, [58] = V4_UNB,
	[59] = V4_UNB, [60] = 16, [61] = V4_UNB, [62] = V4_UNB, [63] = V4_UNB,
	[64] = V4_UNB, [65] = 4, [66] = 4, [67] = V4_UNB, [68] = V4_UNB, [69] = 24,
	[70] = 16, [71] = 24, [72] = 16, [73] = 8, [74] = 8, [75] = V4_BITMAP_MAX,
	[76] = 4, [77] = 4, [78] = 8, [79] = 4, [80] = V4_UNB,
	[81] = 8,			/* mode_umask (RFC 8275) */
	[82] = 4, [83] = 4, [84] = 12, [85] = 12, [86] = 5 * V4_BITMAP_MAX,
};

/* Bound of an fattr4 result for the requested bitmap; V4_UNB if any
 * requested attribute is unbounded or unknown. */
static bool v4_getattr_bound(struct xdr_cur *xc, size_t *bound)
{
	uint32_t n, i, word, bit;
	size_t sum = V4_BITMAP_MAX + 4;
	bool unb = false;

	if (!u32(xc, &n))
		return false;
	if ((size_t)n * 4 > xdr_remaining(xc))
		return xdr_fail(xc, XDR_ERR_SHORT);
	for (i = 0; i < n; i++) {
		if (!u32(xc, &word))
			return false;
		while (word) {
			uint32_t a;

			bit = (uint32_t)__builtin_ctz(word);
			word &= word - 1;
			a = i * 32 + bit;
			if (a >= ATTR_NUM || attr_max[a] == 0 || attr_max[a] == V4_UNB)
				unb = true;
			else
				sum += attr_max[a];
		}
	}
	*bound = unb ? V4_UNB : sum;
	return true;
}

static uint32_t v4_max_op(uint32_t minor)
{
	switch (minor) {
	case 0: return CHK_OP_LAST_V40;
	case 1: return CHK_OP_LAST_V41;
	case 2: return CHK_OP_LAST_V42;	/* RFC 8276 extends 4.2 */
	default: return 0;
	}
}

static bool v4_op_known(uint32_t minor, uint32_t op)
{
	return op == CHK_OP_ILLEGAL || (op >= CHK_OP_ACCESS && op <= v4_max_op(minor));
}

/* Arguments of one operation; *rb = bound of its result after the status
 * word (V4_UNB: unbounded). */
static bool v4_args(struct walk *w, uint32_t op, uint16_t idx, size_t *rb)
{
	struct xdr_cur *xc = w->xc;
	struct xdr_span sp;
	uint32_t v, count;
	bool b;

	*rb = 0;
	switch (op) {
	case CHK_OP_ACCESS:
		*rb = 8;
		return skip(xc, 4);
	case CHK_OP_CLOSE:
		*rb = V4_STATEID;
		return skip(xc, 4 + V4_STATEID);
	case CHK_OP_COMMIT:
		*rb = 8;
		return skip(xc, 8 + 4);
	case CHK_OP_CREATE:	/* createtype4, objname, createattrs */
		*rb = V4_CINFO + V4_BITMAP_MAX;
		if (!u32(xc, &v))
			return false;
		if (v == 5) {			/* NF4LNK: linkdata (RFC 8267 6.1) */
			if (!xdr_get_opaque(xc, &sp, OPAQUE_ANY))
				return false;
			call_item(w, CHK_DDP_SYMLINK_PATH, idx, &sp);
		} else if (v == 3 || v == 4) {	/* NF4BLK, NF4CHR: specdata4 */
			if (!skip(xc, 8))
				return false;
		}
		return opaque(xc, OPAQUE_ANY) && v4_fattr(xc);
	case CHK_OP_DELEGPURGE:
		return skip(xc, 8);
	case CHK_OP_DELEGRETURN:
		return skip(xc, V4_STATEID);
	case CHK_OP_GETATTR:
		return v4_getattr_bound(xc, rb);
	case CHK_OP_GETFH:
		*rb = 4 + NFS4_FHSIZE;
		return true;
	case CHK_OP_LINK:
		*rb = V4_CINFO;
		return opaque(xc, OPAQUE_ANY);
	case CHK_OP_LOCK:	/* locktype, reclaim, offset, length, locker4 */
		*rb = V4_DENIED_MAX;
		if (!skip(xc, 4) || !boolean(xc, &b) || !skip(xc, 16) || !boolean(xc, &b))
			return false;
		if (b)		/* open_to_lock_owner4 */
			return skip(xc, 4 + V4_STATEID + 4) && v4_owner(xc);
		return skip(xc, V4_STATEID + 4);
	case CHK_OP_LOCKT:
		*rb = V4_DENIED_MAX;
		return skip(xc, 4 + 16) && v4_owner(xc);
	case CHK_OP_LOCKU:
		*rb = V4_STATEID;
		return skip(xc, 4 + 4 + V4_STATEID + 16);
	case CHK_OP_LOOKUP:
	case CHK_OP_REMOVE:
	case CHK_OP_SECINFO:
	case CHK_OP_GETXATTR:
	case CHK_OP_REMOVEXATTR:
		*rb = op == CHK_OP_LOOKUP ? 0 :
	      op == CHK_OP_REMOVE || op == CHK_OP_REMOVEXATTR ? V4_CINFO : V4_UNB;
		return opaque(xc, OPAQUE_ANY);
	case CHK_OP_LOOKUPP:
	case CHK_OP_PUTPUBFH:
	case CHK_OP_PUTROOTFH:
	case CHK_OP_RESTOREFH:
	case CHK_OP_SAVEFH:
	case CHK_OP_ILLEGAL:
		return true;
	case CHK_OP_NVERIFY:
	case CHK_OP_VERIFY:
		return v4_fattr(xc);
	case CHK_OP_OPEN:
		*rb = V4_STATEID + V4_CINFO + 4 + V4_BITMAP_MAX + V4_DELEG_MAX;
		if (!skip(xc, 12) || !v4_owner(xc) || !u32(xc, &v))
			return false;
		if (v == 1) {			/* OPEN4_CREATE: createhow4 */
			if (!u32(xc, &v))
				return false;
			if (v == 0 || v == 1) {
				if (!v4_fattr(xc))
					return false;
			} else if (v == 2) {
				if (!skip(xc, 8))
					return false;
			} else if (v == 3) {
				if (!skip(xc, 8) || !v4_fattr(xc))
					return false;
			} else {
				return xdr_fail(xc, XDR_ERR_BAD_ENUM);
			}
		}
		if (!u32(xc, &v))		/* open_claim4 */
			return false;
		switch (v) {
		case 0:	case 3:			/* CLAIM_NULL, CLAIM_DELEGATE_PREV */
			return opaque(xc, OPAQUE_ANY);
		case 1:				/* CLAIM_PREVIOUS */
			return skip(xc, 4);
		case 2:				/* CLAIM_DELEGATE_CUR */
			return skip(xc, V4_STATEID) && opaque(xc, OPAQUE_ANY);
		case 4: case 6:			/* CLAIM_FH, CLAIM_DELEG_PREV_FH */
			return true;
		case 5:				/* CLAIM_DELEG_CUR_FH */
			return skip(xc, V4_STATEID);
		default:
			return xdr_fail(xc, XDR_ERR_BAD_ENUM);
		}
	case CHK_OP_OPENATTR:
		return boolean(xc, &b);
	case CHK_OP_OPEN_CONFIRM:
		*rb = V4_STATEID;
		return skip(xc, V4_STATEID + 4);
	case CHK_OP_OPEN_DOWNGRADE:
		*rb = V4_STATEID;
		return skip(xc, V4_STATEID + 12);
	case CHK_OP_PUTFH:
		return opaque(xc, NFS4_FHSIZE);
	case CHK_OP_READ:	/* stateid, offset, count */
		if (!skip(xc, V4_STATEID + 8) || !u32(xc, &count))
			return false;
		*rb = 4 + 4 + xdr_round4(count);
		reply_item(w, CHK_DDP_READ_DATA, idx, count);
		return true;
	case CHK_OP_READDIR:	/* cookie, verf, dircount, maxcount, attr_request */
		if (!skip(xc, 8 + 8 + 4) || !u32(xc, &count) || !v4_bitmap(xc))
			return false;
		*rb = 8 + (size_t)count + 8 + 8;
		return true;
	case CHK_OP_READLINK:
		*rb = 4 + CHK_NFS_MAXPATHLEN;
		reply_item(w, CHK_DDP_READLINK_PATH, idx, CHK_NFS_MAXPATHLEN);
		return true;
	case CHK_OP_RENAME:
		*rb = 2 * V4_CINFO;
		return opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY);
	case CHK_OP_RENEW:
		return skip(xc, 8);
	case CHK_OP_SETATTR:	/* result carries attrsset even on error */
		*rb = V4_BITMAP_MAX;
		return skip(xc, V4_STATEID) && v4_fattr(xc);
	case CHK_OP_SETCLIENTID:	/* client, callback, callback_ident */
		*rb = 2 * (4 + V4_NAME_MAX);	/* covers resok (16) and CLID_INUSE */
		return skip(xc, 8) && opaque(xc, NFS4_OPAQUE_LIMIT) && skip(xc, 4) &&
		       v4_netaddr(xc) && skip(xc, 4);
	case CHK_OP_SETCLIENTID_CONFIRM:
		return skip(xc, 16);
	case CHK_OP_WRITE:	/* stateid, offset, stable, data */
		*rb = 4 + 4 + 8;
		if (!skip(xc, V4_STATEID + 8 + 4) || !xdr_get_opaque(xc, &sp, OPAQUE_ANY))
			return false;
		call_item(w, CHK_DDP_WRITE_DATA, idx, &sp);
		return true;
	case CHK_OP_RELEASE_LOCKOWNER:
		return v4_owner(xc);
	case CHK_OP_BACKCHANNEL_CTL:
		return skip(xc, 4) && v4_array(xc, v4_cb_sec_parms);
	case CHK_OP_BIND_CONN_TO_SESSION:
		*rb = 16 + 4 + 4;
		return skip(xc, 16 + 4) && boolean(xc, &b);
	case CHK_OP_EXCHANGE_ID:
		*rb = V4_UNB;	/* impl_id strings, SSV handles: no protocol bound */
		return skip(xc, 8) && opaque(xc, NFS4_OPAQUE_LIMIT) && skip(xc, 4) &&
		       v4_state_protect_a(xc) && v4_impl_id_opt(xc);
	case CHK_OP_CREATE_SESSION:
		*rb = 16 + 4 + 4 + 2 * (6 * 4 + 4 + 4);
		return skip(xc, 8 + 4 + 4) && v4_channel_attrs(xc) &&
		       v4_channel_attrs(xc) && skip(xc, 4) && v4_array(xc, v4_cb_sec_parms);
	case CHK_OP_DESTROY_SESSION:
		return skip(xc, 16);
	case CHK_OP_FREE_STATEID:
	case CHK_OP_OFFLOAD_CANCEL:
		return skip(xc, V4_STATEID);
	case CHK_OP_GET_DIR_DELEGATION:
		*rb = 4 + 8 + V4_STATEID + 3 * V4_BITMAP_MAX;
		return boolean(xc, &b) && v4_bitmap(xc) && skip(xc, 24) &&
		       v4_bitmap(xc) && v4_bitmap(xc);
	case CHK_OP_GETDEVICEINFO:	/* deviceid, type, maxcount, notify */
		if (!skip(xc, 16 + 4) || !u32(xc, &count) || !v4_bitmap(xc))
			return false;
		/* gdia_maxcount bounds gdir_device_addr; 0 would mean "none" */
		*rb = 4 + 4 + (size_t)count + V4_BITMAP_MAX;
		return true;
	case CHK_OP_GETDEVICELIST:	/* type, maxdevices, cookie, verf */
		if (!skip(xc, 4) || !u32(xc, &count) || !skip(xc, 16))
			return false;
		*rb = 8 + 8 + 4 + 16 * (size_t)count + 4;
		return true;
	case CHK_OP_LAYOUTCOMMIT:
		*rb = 4 + 8;
		if (!skip(xc, 16) || !boolean(xc, &b) || !skip(xc, V4_STATEID) ||
		    !opt_arm(xc, 8) || !opt_arm(xc, 12))
			return false;
		return v4_layoutupdate(xc);
	case CHK_OP_LAYOUTGET:
		if (!boolean(xc, &b) || !skip(xc, 8 + 24 + V4_STATEID) || !u32(xc, &count))
			return false;
		/* loga_maxcount bounds the layouts; add resok's fixed part */
		*rb = 4 + V4_STATEID + 4 + (size_t)count + 32;
		return true;
	case CHK_OP_LAYOUTRETURN:
		*rb = 4 + V4_STATEID;
		if (!boolean(xc, &b) || !skip(xc, 8) || !u32(xc, &v))
			return false;
		if (v == 1)	/* LAYOUTRETURN4_FILE */
			return skip(xc, 16 + V4_STATEID) && opaque(xc, OPAQUE_ANY);
		return true;
	case CHK_OP_SECINFO_NO_NAME:
		*rb = V4_UNB;
		return skip(xc, 4);
	case CHK_OP_SEQUENCE:
		*rb = 16 + 5 * 4;
		return skip(xc, 16 + 12) && boolean(xc, &b);
	case CHK_OP_SET_SSV:
		*rb = V4_UNB;
		return opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY);
	case CHK_OP_TEST_STATEID:
		if (!u32(xc, &count))
			return false;
		*rb = 4 + 4 * (size_t)count;
		return skip(xc, (size_t)count * V4_STATEID);
	case CHK_OP_WANT_DELEGATION:
		*rb = V4_DELEG_MAX;
		if (!skip(xc, 4) || !u32(xc, &v))
			return false;
		if (v == 1)
			return skip(xc, 4);
		if (v == 4 || v == 6)
			return true;
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	case CHK_OP_DESTROY_CLIENTID:
		return skip(xc, 8);
	case CHK_OP_RECLAIM_COMPLETE:
		return boolean(xc, &b);
	case CHK_OP_ALLOCATE:
	case CHK_OP_DEALLOCATE:
		return skip(xc, V4_STATEID + 16);
	case CHK_OP_COPY:
		*rb = V4_WRITE_RESP + 8;
		return skip(xc, 2 * V4_STATEID + 24) && boolean(xc, &b) &&
		       boolean(xc, &b) && v4_array(xc, v4_netloc);
	case CHK_OP_COPY_NOTIFY:
		*rb = V4_UNB;
		return skip(xc, V4_STATEID) && v4_netloc(xc);
	case CHK_OP_IO_ADVISE:
		*rb = V4_BITMAP_MAX;
		return skip(xc, V4_STATEID + 16) && v4_bitmap(xc);
	case CHK_OP_LAYOUTERROR:
		return skip(xc, 16 + V4_STATEID) && v4_array(xc, v4_device_error);
	case CHK_OP_LAYOUTSTATS:
		return skip(xc, 16 + V4_STATEID + 32 + 16) && v4_layoutupdate(xc);
	case CHK_OP_OFFLOAD_STATUS:
		*rb = 8 + 4 + 4;
		return skip(xc, V4_STATEID);
	case CHK_OP_READ_PLUS:	/* not DDP-eligible (RFC 8267 6.1 omits it) */
		if (!skip(xc, V4_STATEID + 8) || !u32(xc, &count))
			return false;
		*rb = 4 + 4 + xdr_round4(count) + CHK_READ_PLUS_SEGS * (4 + 8 + 8);
		return true;
	case CHK_OP_SEEK:
		*rb = 4 + 8;
		return skip(xc, V4_STATEID + 8 + 4);
	case CHK_OP_WRITE_SAME:	/* stateid, stable, app_data_block4 */
		*rb = V4_WRITE_RESP;
		return skip(xc, V4_STATEID + 4 + 8 * 4 + 4 + 8) && opaque(xc, OPAQUE_ANY);
	case CHK_OP_CLONE:
		return skip(xc, 2 * V4_STATEID + 24);
	case CHK_OP_SETXATTR:
		*rb = V4_CINFO;
		return skip(xc, 4) && opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY);
	case CHK_OP_LISTXATTRS:	/* cookie, maxcount */
		if (!skip(xc, 8) || !u32(xc, &count))
			return false;
		*rb = 8 + (size_t)count + 4 + 16;
		return true;
	default:
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);	/* not reached: v4_op_known */
	}
}

static bool v4_compound(struct walk *w)
{
	struct chk_call_walk *cw = w->cw;
	struct xdr_cur *xc = w->xc;
	struct xdr_span tag;
	uint32_t i, op;
	size_t rb;

	if (!xdr_get_opaque(xc, &tag, OPAQUE_ANY) || !u32(xc, &cw->cw_minor) ||
	    !u32(xc, &cw->cw_nops))
		return false;
	/* status, tag echoed, resarray count */
	res_add(w, 4 + 4 + xdr_round4(tag.xs_len) + 4);
	if (v4_max_op(cw->cw_minor) == 0) {
		/* A minor version we do not know: the server answers
		 * MINOR_VERS_MISMATCH, or knows better than we do. */
		cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->unb = true;
		return true;
	}
	for (i = 0; i < cw->cw_nops; i++) {
		if (!u32(xc, &op))
			return false;
		if (cw->cw_nops_listed < CHK_WALK_MAX_OPS)
			cw->cw_op[cw->cw_nops_listed++] = (uint16_t)(op > 0xffff ? 0xffff : op);
		if (!v4_op_known(cw->cw_minor, op)) {
			w->unb = true;		/* ends DDP for the rest: see top */
			return true;
		}
		if (!v4_args(w, op, (uint16_t)(i > UINT16_MAX ? UINT16_MAX : i), &rb))
			return false;
		cw->cw_nops_known = i + 1;
		res_add(w, 4 + 4);		/* resop, status */
		if (rb == V4_UNB)
			w->unb = true;
		else
			res_add(w, rb);
	}
	return true;
}

static bool v4_call(struct walk *w, uint32_t proc)
{
	switch (proc) {
	case CHK_NFSPROC4_NULL:
		return true;
	case CHK_NFSPROC4_COMPOUND:
		return v4_compound(w);
	default:
		w->cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->unb = true;
		return true;
	}
}

/* ------------------------------------------------------------------------
 * chk_call_walk
 * ------------------------------------------------------------------------ */
static bool walk_args(struct walk *w, uint32_t prog, uint32_t vers, uint32_t proc)
{
	if (prog != CHK_PROG_NFS) {
		/* RFC 8267 section 5: nothing in MOUNT, NLM, NSM, NFSACL (or any
		 * program we do not know) is DDP-eligible.  Procedure 0 is NULL
		 * by convention (RFC 5531 section 12.1). */
		w->cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->unb = proc != 0;
		return true;
	}
	switch (vers) {
	case 2: return v2_call(w, proc);
	case 3: return v3_call(w, proc);
	case 4: return v4_call(w, proc);
	default:
		w->cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->unb = proc != 0;
		return true;
	}
}

bool chk_call_walk(struct xdr_cur *xc, uint32_t prog, uint32_t vers, uint32_t proc,
		   uint32_t gss_service, struct chk_call_walk *cw, enum chk_walk_err *err)
{
	struct walk w = { .cw = cw, .xc = xc, .res = 0, .unb = false };
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
		w.unb = true;
		ok = true;
	} else {
		ok = walk_args(&w, prog, vers, proc);
	}
	cw->cw_args_end = xdr_pos(xc);
	cw->cw_res_unbounded = w.unb;
	cw->cw_res_max = w.res;
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
struct rwalk {
	struct chk_reply_walk *rw;
	struct xdr_cur *xc;
	const uint32_t *wlens;
	unsigned nw;
	unsigned next;		/* next write chunk to pair */
	size_t inl;		/* start of the inline span not yet emitted */
	enum chk_walk_err err;
};

static bool piece(struct rwalk *r, uint8_t kind, uint16_t chunk, size_t off, size_t len)
{
	struct chk_reply_walk *rw = r->rw;
	struct chk_piece *pc;

	if (len == 0)
		return true;
	if (rw->rw_npieces >= CHK_MAX_PIECES) {
		r->err = CHK_WALK_TOO_MANY;
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
static bool r_item(struct rwalk *r, uint8_t kind, uint16_t op, uint32_t max)
{
	struct xdr_cur *xc = r->xc;
	struct chk_reply_walk *rw = r->rw;
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
	if (r->next < r->nw) {
		unsigned k = r->next++;

		/* RFC 8267 6.4.1: a matching write chunk carries the data; the
		 * inline stream goes on right after the length word. */
		if (r->wlens[k] != len) {
			r->err = CHK_WALK_LEN_MISMATCH;
			return false;
		}
		if (!piece(r, CHK_PIECE_INLINE, 0, r->inl, pos - r->inl) ||
		    !piece(r, CHK_PIECE_CHUNK, (uint16_t)k, 0, len) ||
		    !piece(r, CHK_PIECE_PAD, 0, 0, xdr_pad(len)))
			return false;
		r->inl = pos;
		if (len)
			rw->rw_nchunks_used++;
		return true;
	}
	return skip(xc, len);		/* no chunk: data inline */
}

/* An eligible result that did not come (error arm): its chunk, if any,
 * must be empty. */
static bool r_noitem(struct rwalk *r)
{
	if (r->next < r->nw) {
		if (r->wlens[r->next] != 0) {
			r->err = CHK_WALK_CHUNK_UNUSED;
			return false;
		}
		r->next++;
	}
	return true;
}

static bool v2_reply(struct rwalk *r, uint32_t proc)
{
	uint32_t status;

	if (proc != 5 && proc != 6)
		return true;
	if (!u32(r->xc, &status))
		return false;
	if (status != 0)
		return r_noitem(r);
	if (proc == 5)
		return r_item(r, CHK_DDP_READLINK_PATH, 0, V2_MAXPATHLEN);
	return skip(r->xc, V2_FATTR) && r_item(r, CHK_DDP_READ_DATA, 0, V2_MAXDATA);
}

static bool v3_post_op_attr(struct xdr_cur *xc)
{
	return opt_arm(xc, V3_FATTR);
}

static bool v3_reply(struct rwalk *r, uint32_t proc)
{
	uint32_t status;

	if (proc != 5 && proc != 6)
		return true;
	if (!u32(r->xc, &status) || !v3_post_op_attr(r->xc))
		return false;
	if (status != 0)
		return r_noitem(r);
	if (proc == 5)
		return r_item(r, CHK_DDP_READLINK_PATH, 0, OPAQUE_ANY);
	/* READ3resok: count, eof, data */
	return skip(r->xc, 8) && r_item(r, CHK_DDP_READ_DATA, 0, OPAQUE_ANY);
}

/* Results of one operation after its status (status OK or not). */
static bool v4_deleg(struct xdr_cur *xc)	/* open_delegation4 */
{
	uint32_t t, v;
	bool b;

	if (!u32(xc, &t))
		return false;
	switch (t) {
	case 0:				/* NONE */
		return true;
	case 1: case 4:			/* READ, READ_ATTRS_DELEG */
		return skip(xc, V4_STATEID) && boolean(xc, &b) &&
		       skip(xc, 12) && opaque(xc, OPAQUE_ANY);
	case 2: case 5:			/* WRITE, WRITE_ATTRS_DELEG */
		if (!skip(xc, V4_STATEID) || !boolean(xc, &b) || !u32(xc, &v))
			return false;
		if (v == 1) {
			if (!skip(xc, 8))
				return false;
		} else if (v == 2) {
			if (!skip(xc, 8))
				return false;
		} else {
			return xdr_fail(xc, XDR_ERR_BAD_ENUM);
		}
		return skip(xc, 12) && opaque(xc, OPAQUE_ANY);
	case 3:				/* NONE_EXT: open_none_delegation4 */
		if (!u32(xc, &v))
			return false;
		return (v != 1 && v != 2) || boolean(xc, &b);
	default:
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	}
}

static bool v4_secinfo4(struct xdr_cur *xc)
{
	uint32_t flavor;

	if (!u32(xc, &flavor))
		return false;
	return flavor != 6 || (opaque(xc, OPAQUE_ANY) && skip(xc, 8));
}

static bool v4_layout4(struct xdr_cur *xc)
{
	return skip(xc, 8 + 8 + 4 + 4) && opaque(xc, OPAQUE_ANY);
}

static bool v4_component(struct xdr_cur *xc)
{
	return opaque(xc, OPAQUE_ANY);
}

static bool v4_gsshandle(struct xdr_cur *xc)
{
	return opaque(xc, OPAQUE_ANY);
}

static bool v4_read_plus_content(struct xdr_cur *xc)
{
	uint32_t t;

	if (!u32(xc, &t))
		return false;
	if (t == 0)		/* NFS4_CONTENT_DATA: data4 */
		return skip(xc, 8) && opaque(xc, OPAQUE_ANY);
	if (t == 1)		/* NFS4_CONTENT_HOLE: data_info4 */
		return skip(xc, 16);
	return true;		/* default: void */
}

static bool v4_res(struct xdr_cur *xc, uint32_t op, uint32_t st)
{
	uint32_t v, n;
	bool b;

	/* Results whose arm exists whatever the status. */
	switch (op) {
	case CHK_OP_SETATTR:	/* status + attrsset */
		return v4_bitmap(xc);
	case CHK_OP_LOCK:
	case CHK_OP_LOCKT:
		if (st == 10010)	/* NFS4ERR_DENIED: LOCK4denied */
			return skip(xc, 8 + 8 + 4) && v4_owner(xc);
		if (st != NFS4_OK || op == CHK_OP_LOCKT)
			return true;
		return skip(xc, V4_STATEID);
	case CHK_OP_SETCLIENTID:
		if (st == 10017)	/* NFS4ERR_CLID_INUSE */
			return v4_netaddr(xc);
		return st != NFS4_OK || skip(xc, 16);
	case CHK_OP_GETDEVICEINFO:
		if (st == 10005)	/* NFS4ERR_TOOSMALL: gdir_mincount */
			return skip(xc, 4);
		if (st != NFS4_OK)
			return true;
		return skip(xc, 4) && opaque(xc, OPAQUE_ANY) && v4_bitmap(xc);
	case CHK_OP_LAYOUTGET:
		if (st == 10058)	/* NFS4ERR_LAYOUTTRYLATER */
			return boolean(xc, &b);
		if (st != NFS4_OK)
			return true;
		return boolean(xc, &b) && skip(xc, V4_STATEID) && v4_array(xc, v4_layout4);
	case CHK_OP_COPY:
		if (st == 10094)	/* NFS4ERR_OFFLOAD_NO_REQS */
			return boolean(xc, &b) && boolean(xc, &b);
		break;
	}
	if (st != NFS4_OK)
		return true;
	switch (op) {
	case CHK_OP_ACCESS: return skip(xc, 8);
	case CHK_OP_CLOSE: case CHK_OP_LOCKU: case CHK_OP_OPEN_CONFIRM: case CHK_OP_OPEN_DOWNGRADE:
		return skip(xc, V4_STATEID);
	case CHK_OP_COMMIT: return skip(xc, 8);
	case CHK_OP_CREATE: return skip(xc, V4_CINFO) && v4_bitmap(xc);
	case CHK_OP_GETATTR: case CHK_OP_NVERIFY: case CHK_OP_VERIFY:	/* NVERIFY, VERIFY: status only */
		return op != CHK_OP_GETATTR || v4_fattr(xc);
	case CHK_OP_GETFH: return opaque(xc, NFS4_FHSIZE);
	case CHK_OP_LINK: case CHK_OP_REMOVE: case CHK_OP_SETXATTR: case CHK_OP_REMOVEXATTR:
		return skip(xc, V4_CINFO);
	case CHK_OP_OPEN:
		return skip(xc, V4_STATEID + V4_CINFO + 4) && v4_bitmap(xc) && v4_deleg(xc);
	case CHK_OP_READDIR:
		if (!skip(xc, 8))
			return false;
		for (;;) {
			if (!boolean(xc, &b))
				return false;
			if (!b)
				break;
			if (!skip(xc, 8) || !opaque(xc, OPAQUE_ANY) || !v4_fattr(xc))
				return false;
		}
		return boolean(xc, &b);
	case CHK_OP_RENAME: return skip(xc, 2 * V4_CINFO);
	case CHK_OP_SECINFO: case CHK_OP_SECINFO_NO_NAME:
		return v4_array(xc, v4_secinfo4);
	case CHK_OP_WRITE: return skip(xc, 16);
	case CHK_OP_BIND_CONN_TO_SESSION: return skip(xc, 16 + 4) && boolean(xc, &b);
	case CHK_OP_EXCHANGE_ID:
		if (!skip(xc, 8 + 4 + 4) || !u32(xc, &v))
			return false;
		if (v == 1) {
			if (!v4_bitmap(xc) || !v4_bitmap(xc))
				return false;
		} else if (v == 2) {
			if (!v4_bitmap(xc) || !v4_bitmap(xc) || !skip(xc, 16) ||
			    !v4_array(xc, v4_gsshandle))
				return false;
		} else if (v != 0) {
			return xdr_fail(xc, XDR_ERR_BAD_ENUM);
		}
		return skip(xc, 8) && opaque(xc, NFS4_OPAQUE_LIMIT) &&
		       opaque(xc, NFS4_OPAQUE_LIMIT) && v4_impl_id_opt(xc);
	case CHK_OP_CREATE_SESSION:
		return skip(xc, 16 + 4 + 4) && v4_channel_attrs(xc) && v4_channel_attrs(xc);
	case CHK_OP_GET_DIR_DELEGATION:
		if (!u32(xc, &v))
			return false;
		if (v == 0)
			return skip(xc, 8 + V4_STATEID) && v4_bitmap(xc) &&
			       v4_bitmap(xc) && v4_bitmap(xc);
		if (v == 1)
			return boolean(xc, &b);
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	case CHK_OP_GETDEVICELIST:
		if (!skip(xc, 16) || !u32(xc, &n))
			return false;
		return skip(xc, (size_t)n * 16) && boolean(xc, &b);
	case CHK_OP_LAYOUTCOMMIT: return opt_arm(xc, 8);
	case CHK_OP_LAYOUTRETURN: return opt_arm(xc, V4_STATEID);
	case CHK_OP_SEQUENCE: return skip(xc, 16 + 5 * 4);
	case CHK_OP_SET_SSV: return opaque(xc, OPAQUE_ANY);
	case CHK_OP_TEST_STATEID:
		if (!u32(xc, &n))
			return false;
		return skip(xc, (size_t)n * 4);
	case CHK_OP_WANT_DELEGATION: return v4_deleg(xc);
	case CHK_OP_COPY:
	case CHK_OP_WRITE_SAME:
		if (!u32(xc, &n))
			return false;
		if (n > 1)
			return xdr_fail(xc, XDR_ERR_TOO_LONG);
		return skip(xc, n * V4_STATEID + 8 + 4 + 8) &&
		       (op == CHK_OP_WRITE_SAME || (boolean(xc, &b) && boolean(xc, &b)));
	case CHK_OP_COPY_NOTIFY:
		return skip(xc, 12 + V4_STATEID) && v4_array(xc, v4_netloc);
	case CHK_OP_IO_ADVISE: return v4_bitmap(xc);
	case CHK_OP_OFFLOAD_STATUS:
		if (!skip(xc, 8) || !u32(xc, &n))
			return false;
		if (n > 1)
			return xdr_fail(xc, XDR_ERR_TOO_LONG);
		return skip(xc, 4 * (size_t)n);
	case CHK_OP_READ_PLUS:
		return boolean(xc, &b) && v4_array(xc, v4_read_plus_content);
	case CHK_OP_SEEK: return boolean(xc, &b) && skip(xc, 8);
	case CHK_OP_GETXATTR: return opaque(xc, OPAQUE_ANY);
	case CHK_OP_LISTXATTRS:
		return skip(xc, 8) && v4_array(xc, v4_component) && boolean(xc, &b);
	default:	/* status only */
		return true;
	}
}

static bool v4_reply(struct rwalk *r, uint32_t proc)
{
	struct xdr_cur *xc = r->xc;
	uint32_t status, n, i, op, st;
	bool b;

	if (proc != CHK_NFSPROC4_COMPOUND)
		return true;
	if (!u32(xc, &status) || !opaque(xc, OPAQUE_ANY) || !u32(xc, &n))
		return false;
	for (i = 0; i < n; i++) {
		uint16_t idx = (uint16_t)(i > UINT16_MAX ? UINT16_MAX : i);

		if (!u32(xc, &op))
			return false;
		if (!v4_op_known(2, op))
			return true;	/* cannot skip it: the rest stays inline */
		if (!u32(xc, &st))
			return false;
		if (op == CHK_OP_READ || op == CHK_OP_READLINK) {
			if (st != NFS4_OK) {
				if (!r_noitem(r))
					return false;
				continue;
			}
			if (op == CHK_OP_READ && !boolean(xc, &b))	/* READ4resok.eof */
				return false;
			if (!r_item(r, op == CHK_OP_READ ? CHK_DDP_READ_DATA : CHK_DDP_READLINK_PATH,
				    idx, OPAQUE_ANY))
				return false;
			continue;
		}
		if (!v4_res(xc, op, st))
			return false;
	}
	return true;
}

bool chk_reply_walk(struct xdr_cur *xc, size_t msg_pos, uint32_t prog, uint32_t vers,
		    uint32_t proc, const uint32_t *wlens, unsigned nw,
		    struct chk_reply_walk *rw, enum chk_walk_err *err)
{
	struct rwalk r = { .rw = rw, .xc = xc, .wlens = wlens, .nw = nw,
			   .next = 0, .inl = msg_pos, .err = CHK_WALK_OK };
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
		case 2: ok = v2_reply(&r, proc); break;
		case 3: ok = v3_reply(&r, proc); break;
		case 4: ok = v4_reply(&r, proc); break;
		default: break;
		}
	}
	if (ok) {
		/* Chunks no result claimed must be empty (RFC 8267 6.4.1). */
		for (k = r.next; k < nw; k++)
			if (wlens[k] != 0) {
				r.err = CHK_WALK_CHUNK_UNUSED;
				ok = false;
				break;
			}
	}
	if (ok)
		ok = piece(&r, CHK_PIECE_INLINE, 0, r.inl, xc->xc_len - r.inl);
	if (!ok && r.err == CHK_WALK_OK)
		r.err = CHK_WALK_XDR;
	*err = r.err;
	return ok;
}
