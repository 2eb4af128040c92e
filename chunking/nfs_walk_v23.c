// SPDX-License-Identifier: MIT
/*
 * nfs_walk_v23.c - the NFS version 2 and 3 part of the walkers.
 *
 * This file contains the XDR of every NFSv2 (RFC 1094) and NFSv3
 * (RFC 1813) procedure's arguments as the call walker needs it (skipped
 * exactly, DDP-eligible items found, reply bounded), and of the READ and
 * READLINK results the reply walker splices.  The rules are in nfs_walk.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "nfs_walk.h"

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

bool chk_walk_v2_call(struct chk_cwalk *w, uint32_t proc)
{
	struct xdr_cur *xc = w->wk_xc;
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
		w->wk_cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->wk_unb = true;
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

bool chk_walk_v3_call(struct chk_cwalk *w, uint32_t proc)
{
	struct xdr_cur *xc = w->wk_xc;
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
		w->wk_cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->wk_unb = true;
		return true;
	}
}

/* ------------------------------------------------------------------------
 * Results: READ and READLINK, the eligible ones
 * ------------------------------------------------------------------------ */
bool chk_walk_v2_reply(struct chk_rwalk *r, uint32_t proc)
{
	uint32_t status;

	if (proc != 5 && proc != 6)
		return true;
	if (!u32(r->rv_xc, &status))
		return false;
	if (status != 0)
		return chk_rw_noitem(r);
	if (proc == 5)
		return chk_rw_item(r, CHK_DDP_READLINK_PATH, 0, V2_MAXPATHLEN);
	return skip(r->rv_xc, V2_FATTR) && chk_rw_item(r, CHK_DDP_READ_DATA, 0, V2_MAXDATA);
}

static bool v3_post_op_attr(struct xdr_cur *xc)
{
	return opt_arm(xc, V3_FATTR);
}

bool chk_walk_v3_reply(struct chk_rwalk *r, uint32_t proc)
{
	uint32_t status;

	if (proc != 5 && proc != 6)
		return true;
	if (!u32(r->rv_xc, &status) || !v3_post_op_attr(r->rv_xc))
		return false;
	if (status != 0)
		return chk_rw_noitem(r);
	if (proc == 5)
		return chk_rw_item(r, CHK_DDP_READLINK_PATH, 0, OPAQUE_ANY);
	/* READ3resok: count, eof, data */
	return skip(r->rv_xc, 8) && chk_rw_item(r, CHK_DDP_READ_DATA, 0, OPAQUE_ANY);
}
