// SPDX-License-Identifier: MIT
/*
 * nfs_walk_v4.c - the NFSv4 call walker.
 *
 * This file contains the XDR of every NFSv4.0/4.1/4.2 COMPOUND operation's
 * arguments (RFC 7530, RFC 8881, RFC 7862, RFC 8276) as the call walker
 * needs them: skipped exactly, DDP-eligible items found, the result
 * bounded (attribute sizes for GETATTR); and the NFSv4 XDR pieces the
 * reply walker (nfs_walk_v4_res.c) shares.  The rules are in nfs_walk.c.
 */
#include <stddef.h>
#include <stdint.h>

#include "nfs_walk.h"

/* ------------------------------------------------------------------------
 * NFSv4 common XDR (nfs4.x)
 * ------------------------------------------------------------------------ */
bool chk_v4_bitmap(struct xdr_cur *xc)
{
	uint32_t n;

	if (!u32(xc, &n))
		return false;
	return skip(xc, (size_t)n * 4);
}

bool chk_v4_fattr(struct xdr_cur *xc)
{
	return chk_v4_bitmap(xc) && opaque(xc, OPAQUE_ANY);
}

bool chk_v4_owner(struct xdr_cur *xc)	/* state_owner4 */
{
	return skip(xc, 8) && opaque(xc, NFS4_OPAQUE_LIMIT);
}

bool chk_v4_netaddr(struct xdr_cur *xc)
{
	return opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY);
}

bool chk_v4_netloc(struct xdr_cur *xc)
{
	uint32_t t;

	if (!u32(xc, &t))
		return false;
	if (t == 1 || t == 2)		/* NL4_NAME, NL4_URL */
		return opaque(xc, OPAQUE_ANY);
	if (t == 3)			/* NL4_NETADDR */
		return chk_v4_netaddr(xc);
	return xdr_fail(xc, XDR_ERR_BAD_ENUM);
}

bool chk_v4_array(struct xdr_cur *xc, bool (*elem)(struct xdr_cur *))
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
		return skip(xc, 4) && opaque(xc, 255) && skip(xc, 8) && chk_v4_bitmap(xc);
	case 6:		/* RPCSEC_GSS: gss_cb_handles4 */
		return skip(xc, 4) && opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY);
	default:
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	}
}

bool chk_v4_channel_attrs(struct xdr_cur *xc)
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
		return chk_v4_bitmap(xc) && chk_v4_bitmap(xc);
	case 2:		/* ssv_sp_parms4 */
		return chk_v4_bitmap(xc) && chk_v4_bitmap(xc) && chk_v4_array(xc, v4_sec_oid) &&
		       chk_v4_array(xc, v4_sec_oid) && skip(xc, 8);
	default:
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	}
}

static bool v4_impl_id(struct xdr_cur *xc)
{
	return opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY) && skip(xc, 12);
}

bool chk_v4_impl_id_opt(struct xdr_cur *xc)	/* nfs_impl_id4<1> */
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

bool chk_v4_op_known(uint32_t minor, uint32_t op)
{
	return op == CHK_OP_ILLEGAL || (op >= CHK_OP_ACCESS && op <= v4_max_op(minor));
}

/* OPEN4args: seqid, share_access, share_deny, open_owner4, openflag4
 * (createhow4 with OPEN4_CREATE), open_claim4. */
static bool v4_open_args(struct xdr_cur *xc)
{
	uint32_t v;

	if (!skip(xc, 12) || !chk_v4_owner(xc) || !u32(xc, &v))
		return false;
	if (v == 1) {			/* OPEN4_CREATE: createhow4 */
		if (!u32(xc, &v))
			return false;
		if (v == 0 || v == 1) {
			if (!chk_v4_fattr(xc))
				return false;
		} else if (v == 2) {
			if (!skip(xc, 8))
				return false;
		} else if (v == 3) {
			if (!skip(xc, 8) || !chk_v4_fattr(xc))
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
}

/* NFSv4.0 operations ACCESS..PUTROOTFH. */
static bool v4_args_40a(struct chk_cwalk *w, uint32_t op, uint16_t idx, size_t *rb)
{
	struct xdr_cur *xc = w->wk_xc;
	struct xdr_span sp;
	uint32_t v;
	bool b;

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
		return opaque(xc, OPAQUE_ANY) && chk_v4_fattr(xc);
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
			return skip(xc, 4 + V4_STATEID + 4) && chk_v4_owner(xc);
		return skip(xc, V4_STATEID + 4);
	case CHK_OP_LOCKT:
		*rb = V4_DENIED_MAX;
		return skip(xc, 4 + 16) && chk_v4_owner(xc);
	case CHK_OP_LOCKU:
		*rb = V4_STATEID;
		return skip(xc, 4 + 4 + V4_STATEID + 16);
	case CHK_OP_LOOKUP:
		return opaque(xc, OPAQUE_ANY);
	case CHK_OP_LOOKUPP:
	case CHK_OP_PUTPUBFH:
	case CHK_OP_PUTROOTFH:
		return true;
	case CHK_OP_NVERIFY:
		return chk_v4_fattr(xc);
	case CHK_OP_OPEN:
		*rb = V4_STATEID + V4_CINFO + 4 + V4_BITMAP_MAX + V4_DELEG_MAX;
		return v4_open_args(xc);
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
	default:
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);	/* not reached: chk_v4_op_known */
	}
}

/* NFSv4.0 operations READ..RELEASE_LOCKOWNER. */
static bool v4_args_40b(struct chk_cwalk *w, uint32_t op, uint16_t idx, size_t *rb)
{
	struct xdr_cur *xc = w->wk_xc;
	struct xdr_span sp;
	uint32_t count;

	switch (op) {
	case CHK_OP_READ:	/* stateid, offset, count */
		if (!skip(xc, V4_STATEID + 8) || !u32(xc, &count))
			return false;
		*rb = 4 + 4 + xdr_round4(count);
		reply_item(w, CHK_DDP_READ_DATA, idx, count);
		return true;
	case CHK_OP_READDIR:	/* cookie, verf, dircount, maxcount, attr_request */
		if (!skip(xc, 8 + 8 + 4) || !u32(xc, &count) || !chk_v4_bitmap(xc))
			return false;
		*rb = 8 + (size_t)count + 8 + 8;
		return true;
	case CHK_OP_READLINK:
		*rb = 4 + CHK_NFS_MAXPATHLEN;
		reply_item(w, CHK_DDP_READLINK_PATH, idx, CHK_NFS_MAXPATHLEN);
		return true;
	case CHK_OP_REMOVE:
		*rb = V4_CINFO;
		return opaque(xc, OPAQUE_ANY);
	case CHK_OP_RENAME:
		*rb = 2 * V4_CINFO;
		return opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY);
	case CHK_OP_RENEW:
		return skip(xc, 8);
	case CHK_OP_RESTOREFH:
	case CHK_OP_SAVEFH:
		return true;
	case CHK_OP_SECINFO:
		*rb = V4_UNB;
		return opaque(xc, OPAQUE_ANY);
	case CHK_OP_SETATTR:	/* result carries attrsset even on error */
		*rb = V4_BITMAP_MAX;
		return skip(xc, V4_STATEID) && chk_v4_fattr(xc);
	case CHK_OP_SETCLIENTID:	/* client, callback, callback_ident */
		*rb = 2 * (4 + V4_NAME_MAX);	/* covers resok (16) and CLID_INUSE */
		return skip(xc, 8) && opaque(xc, NFS4_OPAQUE_LIMIT) && skip(xc, 4) &&
		       chk_v4_netaddr(xc) && skip(xc, 4);
	case CHK_OP_SETCLIENTID_CONFIRM:
		return skip(xc, 16);
	case CHK_OP_VERIFY:
		return chk_v4_fattr(xc);
	case CHK_OP_WRITE:	/* stateid, offset, stable, data */
		*rb = 4 + 4 + 8;
		if (!skip(xc, V4_STATEID + 8 + 4) || !xdr_get_opaque(xc, &sp, OPAQUE_ANY))
			return false;
		call_item(w, CHK_DDP_WRITE_DATA, idx, &sp);
		return true;
	case CHK_OP_RELEASE_LOCKOWNER:
		return chk_v4_owner(xc);
	default:
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);	/* not reached: chk_v4_op_known */
	}
}

/* NFSv4.1 operations (RFC 8881 18). */
static bool v4_args_41(struct xdr_cur *xc, uint32_t op, size_t *rb)
{
	uint32_t v, count;
	bool b;

	switch (op) {
	case CHK_OP_BACKCHANNEL_CTL:
		return skip(xc, 4) && chk_v4_array(xc, v4_cb_sec_parms);
	case CHK_OP_BIND_CONN_TO_SESSION:
		*rb = 16 + 4 + 4;
		return skip(xc, 16 + 4) && boolean(xc, &b);
	case CHK_OP_EXCHANGE_ID:
		*rb = V4_UNB;	/* impl_id strings, SSV handles: no protocol bound */
		return skip(xc, 8) && opaque(xc, NFS4_OPAQUE_LIMIT) && skip(xc, 4) &&
		       v4_state_protect_a(xc) && chk_v4_impl_id_opt(xc);
	case CHK_OP_CREATE_SESSION:
		*rb = 16 + 4 + 4 + 2 * (6 * 4 + 4 + 4);
		return skip(xc, 8 + 4 + 4) && chk_v4_channel_attrs(xc) &&
		       chk_v4_channel_attrs(xc) && skip(xc, 4) && chk_v4_array(xc, v4_cb_sec_parms);
	case CHK_OP_DESTROY_SESSION:
		return skip(xc, 16);
	case CHK_OP_FREE_STATEID:
		return skip(xc, V4_STATEID);
	case CHK_OP_GET_DIR_DELEGATION:
		*rb = 4 + 8 + V4_STATEID + 3 * V4_BITMAP_MAX;
		return boolean(xc, &b) && chk_v4_bitmap(xc) && skip(xc, 24) &&
		       chk_v4_bitmap(xc) && chk_v4_bitmap(xc);
	case CHK_OP_GETDEVICEINFO:	/* deviceid, type, maxcount, notify */
		if (!skip(xc, 16 + 4) || !u32(xc, &count) || !chk_v4_bitmap(xc))
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
	default:
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);	/* not reached: chk_v4_op_known */
	}
}

/* NFSv4.2 operations (RFC 7862 15, RFC 8276). */
static bool v4_args_42(struct xdr_cur *xc, uint32_t op, size_t *rb)
{
	uint32_t count;
	bool b;

	switch (op) {
	case CHK_OP_ALLOCATE:
	case CHK_OP_DEALLOCATE:
		return skip(xc, V4_STATEID + 16);
	case CHK_OP_COPY:
		*rb = V4_WRITE_RESP + 8;
		return skip(xc, 2 * V4_STATEID + 24) && boolean(xc, &b) &&
		       boolean(xc, &b) && chk_v4_array(xc, chk_v4_netloc);
	case CHK_OP_COPY_NOTIFY:
		*rb = V4_UNB;
		return skip(xc, V4_STATEID) && chk_v4_netloc(xc);
	case CHK_OP_IO_ADVISE:
		*rb = V4_BITMAP_MAX;
		return skip(xc, V4_STATEID + 16) && chk_v4_bitmap(xc);
	case CHK_OP_LAYOUTERROR:
		return skip(xc, 16 + V4_STATEID) && chk_v4_array(xc, v4_device_error);
	case CHK_OP_LAYOUTSTATS:
		return skip(xc, 16 + V4_STATEID + 32 + 16) && v4_layoutupdate(xc);
	case CHK_OP_OFFLOAD_CANCEL:
		return skip(xc, V4_STATEID);
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
	case CHK_OP_GETXATTR:
		*rb = V4_UNB;
		return opaque(xc, OPAQUE_ANY);
	case CHK_OP_SETXATTR:
		*rb = V4_CINFO;
		return skip(xc, 4) && opaque(xc, OPAQUE_ANY) && opaque(xc, OPAQUE_ANY);
	case CHK_OP_LISTXATTRS:	/* cookie, maxcount */
		if (!skip(xc, 8) || !u32(xc, &count))
			return false;
		*rb = 8 + (size_t)count + 4 + 16;
		return true;
	case CHK_OP_REMOVEXATTR:
		*rb = V4_CINFO;
		return opaque(xc, OPAQUE_ANY);
	default:
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);	/* not reached: chk_v4_op_known */
	}
}

/* Arguments of one operation; *rb = bound of its result after the status
 * word (V4_UNB: unbounded).  op is known (chk_v4_op_known). */
static bool v4_args(struct chk_cwalk *w, uint32_t op, uint16_t idx, size_t *rb)
{
	*rb = 0;
	if (op == CHK_OP_ILLEGAL)
		return true;
	if (op <= CHK_OP_PUTROOTFH)
		return v4_args_40a(w, op, idx, rb);
	if (op <= CHK_OP_LAST_V40)
		return v4_args_40b(w, op, idx, rb);
	if (op <= CHK_OP_LAST_V41)
		return v4_args_41(w->wk_xc, op, rb);
	return v4_args_42(w->wk_xc, op, rb);
}

static bool v4_compound(struct chk_cwalk *w)
{
	struct chk_call_walk *cw = w->wk_cw;
	struct xdr_cur *xc = w->wk_xc;
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
		w->wk_unb = true;
		return true;
	}
	for (i = 0; i < cw->cw_nops; i++) {
		if (!u32(xc, &op))
			return false;
		if (cw->cw_nops_listed < CHK_WALK_MAX_OPS)
			cw->cw_op[cw->cw_nops_listed++] = (uint16_t)(op > 0xffff ? 0xffff : op);
		if (!chk_v4_op_known(cw->cw_minor, op)) {
			w->wk_unb = true;		/* ends DDP for the rest: see top */
			return true;
		}
		if (!v4_args(w, op, (uint16_t)(i > UINT16_MAX ? UINT16_MAX : i), &rb))
			return false;
		cw->cw_nops_known = i + 1;
		res_add(w, 4 + 4);		/* resop, status */
		if (rb == V4_UNB)
			w->wk_unb = true;
		else
			res_add(w, rb);
	}
	return true;
}

bool chk_walk_v4_call(struct chk_cwalk *w, uint32_t proc)
{
	switch (proc) {
	case CHK_NFSPROC4_NULL:
		return true;
	case CHK_NFSPROC4_COMPOUND:
		return v4_compound(w);
	default:
		w->wk_cw->cw_noddp = CHK_NODDP_PROGRAM;
		w->wk_unb = true;
		return true;
	}
}
