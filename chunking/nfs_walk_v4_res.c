// SPDX-License-Identifier: MIT
/*
 * nfs_walk_v4_res.c - the NFSv4 reply walker.
 *
 * This file contains the XDR of every NFSv4.0/4.1/4.2 COMPOUND operation's
 * results (RFC 7530, RFC 8881, RFC 7862, RFC 8276) as the reply walker
 * needs them: skipped exactly, whatever the status, so that READ and
 * READLINK data further on is found and spliced from its write chunk.  The
 * rules are in nfs_walk.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "nfs_walk.h"

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

/* NFSv4.0 results after NFS4_OK (the ones not listed: status only). */
static bool v4_resok_40(struct xdr_cur *xc, uint32_t op)
{
	bool b;

	switch (op) {
	case CHK_OP_ACCESS:
	case CHK_OP_COMMIT:
		return skip(xc, 8);
	case CHK_OP_CLOSE:
	case CHK_OP_LOCKU:
	case CHK_OP_OPEN_CONFIRM:
	case CHK_OP_OPEN_DOWNGRADE:
		return skip(xc, V4_STATEID);
	case CHK_OP_CREATE:
		return skip(xc, V4_CINFO) && chk_v4_bitmap(xc);
	case CHK_OP_GETATTR:
		return chk_v4_fattr(xc);
	case CHK_OP_GETFH:
		return opaque(xc, NFS4_FHSIZE);
	case CHK_OP_LINK:
	case CHK_OP_REMOVE:
		return skip(xc, V4_CINFO);
	case CHK_OP_OPEN:
		return skip(xc, V4_STATEID + V4_CINFO + 4) && chk_v4_bitmap(xc) && v4_deleg(xc);
	case CHK_OP_READDIR:
		if (!skip(xc, 8))
			return false;
		for (;;) {
			if (!boolean(xc, &b))
				return false;
			if (!b)
				break;
			if (!skip(xc, 8) || !opaque(xc, OPAQUE_ANY) || !chk_v4_fattr(xc))
				return false;
		}
		return boolean(xc, &b);
	case CHK_OP_RENAME:
		return skip(xc, 2 * V4_CINFO);
	case CHK_OP_SECINFO:
		return chk_v4_array(xc, v4_secinfo4);
	case CHK_OP_WRITE:
		return skip(xc, 16);
	default:	/* status only (NVERIFY, VERIFY, ...) */
		return true;
	}
}

/* EXCHANGE_ID4resok. */
static bool v4_exchange_id_res(struct xdr_cur *xc)
{
	uint32_t v;

	if (!skip(xc, 8 + 4 + 4) || !u32(xc, &v))
		return false;
	if (v == 1) {
		if (!chk_v4_bitmap(xc) || !chk_v4_bitmap(xc))
			return false;
	} else if (v == 2) {
		if (!chk_v4_bitmap(xc) || !chk_v4_bitmap(xc) || !skip(xc, 16) ||
		    !chk_v4_array(xc, v4_gsshandle))
			return false;
	} else if (v != 0) {
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	}
	return skip(xc, 8) && opaque(xc, NFS4_OPAQUE_LIMIT) &&
	       opaque(xc, NFS4_OPAQUE_LIMIT) && chk_v4_impl_id_opt(xc);
}

/* NFSv4.1 results after NFS4_OK (the ones not listed: status only). */
static bool v4_resok_41(struct xdr_cur *xc, uint32_t op)
{
	uint32_t v, n;
	bool b;

	switch (op) {
	case CHK_OP_BIND_CONN_TO_SESSION:
		return skip(xc, 16 + 4) && boolean(xc, &b);
	case CHK_OP_EXCHANGE_ID:
		return v4_exchange_id_res(xc);
	case CHK_OP_CREATE_SESSION:
		return skip(xc, 16 + 4 + 4) && chk_v4_channel_attrs(xc) && chk_v4_channel_attrs(xc);
	case CHK_OP_GET_DIR_DELEGATION:
		if (!u32(xc, &v))
			return false;
		if (v == 0)
			return skip(xc, 8 + V4_STATEID) && chk_v4_bitmap(xc) &&
			       chk_v4_bitmap(xc) && chk_v4_bitmap(xc);
		if (v == 1)
			return boolean(xc, &b);
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	case CHK_OP_GETDEVICELIST:
		if (!skip(xc, 16) || !u32(xc, &n))
			return false;
		return skip(xc, (size_t)n * 16) && boolean(xc, &b);
	case CHK_OP_LAYOUTCOMMIT:
		return opt_arm(xc, 8);
	case CHK_OP_LAYOUTRETURN:
		return opt_arm(xc, V4_STATEID);
	case CHK_OP_SECINFO_NO_NAME:
		return chk_v4_array(xc, v4_secinfo4);
	case CHK_OP_SEQUENCE:
		return skip(xc, 16 + 5 * 4);
	case CHK_OP_SET_SSV:
		return opaque(xc, OPAQUE_ANY);
	case CHK_OP_TEST_STATEID:
		if (!u32(xc, &n))
			return false;
		return skip(xc, (size_t)n * 4);
	case CHK_OP_WANT_DELEGATION:
		return v4_deleg(xc);
	default:	/* status only */
		return true;
	}
}

/* NFSv4.2 results after NFS4_OK (the ones not listed: status only). */
static bool v4_resok_42(struct xdr_cur *xc, uint32_t op)
{
	uint32_t n;
	bool b;

	switch (op) {
	case CHK_OP_COPY:
	case CHK_OP_WRITE_SAME:
		if (!u32(xc, &n))
			return false;
		if (n > 1)
			return xdr_fail(xc, XDR_ERR_TOO_LONG);
		return skip(xc, n * V4_STATEID + 8 + 4 + 8) &&
		       (op == CHK_OP_WRITE_SAME || (boolean(xc, &b) && boolean(xc, &b)));
	case CHK_OP_COPY_NOTIFY:
		return skip(xc, 12 + V4_STATEID) && chk_v4_array(xc, chk_v4_netloc);
	case CHK_OP_IO_ADVISE:
		return chk_v4_bitmap(xc);
	case CHK_OP_OFFLOAD_STATUS:
		if (!skip(xc, 8) || !u32(xc, &n))
			return false;
		if (n > 1)
			return xdr_fail(xc, XDR_ERR_TOO_LONG);
		return skip(xc, 4 * (size_t)n);
	case CHK_OP_READ_PLUS:
		return boolean(xc, &b) && chk_v4_array(xc, v4_read_plus_content);
	case CHK_OP_SEEK:
		return boolean(xc, &b) && skip(xc, 8);
	case CHK_OP_GETXATTR:
		return opaque(xc, OPAQUE_ANY);
	case CHK_OP_SETXATTR:
	case CHK_OP_REMOVEXATTR:
		return skip(xc, V4_CINFO);
	case CHK_OP_LISTXATTRS:
		return skip(xc, 8) && chk_v4_array(xc, v4_component) && boolean(xc, &b);
	default:	/* status only */
		return true;
	}
}

/* Results of one operation after its status (status OK or not). */
static bool v4_res(struct xdr_cur *xc, uint32_t op, uint32_t st)
{
	bool b;

	/* Results whose arm exists whatever the status. */
	switch (op) {
	case CHK_OP_SETATTR:	/* status + attrsset */
		return chk_v4_bitmap(xc);
	case CHK_OP_LOCK:
	case CHK_OP_LOCKT:
		if (st == 10010)	/* NFS4ERR_DENIED: LOCK4denied */
			return skip(xc, 8 + 8 + 4) && chk_v4_owner(xc);
		if (st != NFS4_OK || op == CHK_OP_LOCKT)
			return true;
		return skip(xc, V4_STATEID);
	case CHK_OP_SETCLIENTID:
		if (st == 10017)	/* NFS4ERR_CLID_INUSE */
			return chk_v4_netaddr(xc);
		return st != NFS4_OK || skip(xc, 16);
	case CHK_OP_GETDEVICEINFO:
		if (st == 10005)	/* NFS4ERR_TOOSMALL: gdir_mincount */
			return skip(xc, 4);
		if (st != NFS4_OK)
			return true;
		return skip(xc, 4) && opaque(xc, OPAQUE_ANY) && chk_v4_bitmap(xc);
	case CHK_OP_LAYOUTGET:
		if (st == 10058)	/* NFS4ERR_LAYOUTTRYLATER */
			return boolean(xc, &b);
		if (st != NFS4_OK)
			return true;
		return boolean(xc, &b) && skip(xc, V4_STATEID) && chk_v4_array(xc, v4_layout4);
	case CHK_OP_COPY:
		if (st == 10094)	/* NFS4ERR_OFFLOAD_NO_REQS */
			return boolean(xc, &b) && boolean(xc, &b);
		break;
	}
	if (st != NFS4_OK)
		return true;
	if (op <= CHK_OP_LAST_V40)
		return v4_resok_40(xc, op);
	if (op <= CHK_OP_LAST_V41)
		return v4_resok_41(xc, op);
	return v4_resok_42(xc, op);
}

bool chk_walk_v4_reply(struct chk_rwalk *r, uint32_t proc)
{
	struct xdr_cur *xc = r->rv_xc;
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
		if (!chk_v4_op_known(2, op))
			return true;	/* cannot skip it: the rest stays inline */
		if (!u32(xc, &st))
			return false;
		if (op == CHK_OP_READ || op == CHK_OP_READLINK) {
			if (st != NFS4_OK) {
				if (!chk_rw_noitem(r))
					return false;
				continue;
			}
			if (op == CHK_OP_READ && !boolean(xc, &b))	/* READ4resok.eof */
				return false;
			if (!chk_rw_item(r, op == CHK_OP_READ ? CHK_DDP_READ_DATA : CHK_DDP_READLINK_PATH,
				    idx, OPAQUE_ANY))
				return false;
			continue;
		}
		if (!v4_res(xc, op, st))
			return false;
	}
	return true;
}
