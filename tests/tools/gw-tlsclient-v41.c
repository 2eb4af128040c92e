// SPDX-License-Identifier: MIT
/*
 * This file contains gw-tlsclient's NFSv4.1 client (RFC 8881): EXCHANGE_ID
 * (SP4_NONE), CREATE_SESSION (one slot, no back channel), RECLAIM_COMPLETE,
 * SEQUENCE + PUTROOTFH + GETATTR, OPEN (create, unchecked) by path from the
 * pseudo root, WRITE (FILE_SYNC4) and READ by the open stateid, CLOSE,
 * DESTROY_SESSION and DESTROY_CLIENTID.  Every status is checked.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gw-tlsclient.h"

enum {
	OP_CLOSE = 4, OP_GETATTR = 9, OP_GETFH = 10, OP_LOOKUP = 15, OP_OPEN = 18, OP_PUTFH = 22,
	OP_PUTROOTFH = 24, OP_READ = 25, OP_WRITE = 38, OP_EXCHANGE_ID = 42, OP_CREATE_SESSION = 43,
	OP_DESTROY_SESSION = 44, OP_SEQUENCE = 53, OP_DESTROY_CLIENTID = 57, OP_RECLAIM_COMPLETE = 58,
};
#define NFS4ERR_DELAY	10008
#define NFS4ERR_GRACE	10013
#define DIR_MAX		8	/* path components LOOKed UP before the OPEN */

/* COMPOUND4args head: tag, minorversion 1, the operation count. */
static void cmp_start(struct xb_buf *c, uint32_t nops)
{
	static const char tag[] = "gw-tlsclient";

	tc_call_hdr(c, TC_PROG_NFS, 4, 1);
	xb_put_opaque(c, tag, sizeof(tag) - 1);
	xb_put_u32(c, 1);
	xb_put_u32(c, nops);
}

/* SEQUENCE on slot 0 of the session, its next sequenceid. */
static void put_sequence(struct xb_buf *c, struct tc_v41 *v)
{
	xb_put_u32(c, OP_SEQUENCE);
	xb_put_fixed(c, v->v4_session, 16);
	xb_put_u32(c, v->v4_slotseq++);
	xb_put_u32(c, 0);	/* slotid */
	xb_put_u32(c, 0);	/* highest slotid */
	xb_put_u32(c, 0);	/* cachethis */
}

/* Sends the compound and reads COMPOUND4res up to its first result: 0, or
 * the compound's NFS4 status (> 0), or -1 when the call failed. */
static int cmp_send(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, const char *what)
{
	uint32_t st, n;

	if (tc_rpc(io, c, r))
		return fprintf(stderr, "NFSv4.1 %s: the call failed\n", what), -1;
	st = xb_get_u32(r);
	xb_get_opaque(r, &n);	/* tag */
	xb_get_u32(r);		/* result count */
	if (r->fb_bad)
		return fprintf(stderr, "NFSv4.1 %s: short reply\n", what), -1;
	return (int)st;
}

/* cmp_send, saying a status other than NFS4_OK. */
static int cmp_call(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, const char *what)
{
	int st = cmp_send(io, c, r, what);

	if (st > 0)
		fprintf(stderr, "NFSv4.1 %s: compound status %d\n", what, st);
	return st;
}

/* The next result: its operation must be OP and its status NFS4_OK. */
static int op_ok(struct xb_buf *r, uint32_t op, const char *what)
{
	uint32_t got = xb_get_u32(r), st = xb_get_u32(r);

	if (r->fb_bad || got != op || st != 0)
		return fprintf(stderr, "NFSv4.1 %s: operation %u status %u (expected %u, NFS4_OK)\n", what, got,
			       st, op), -1;
	return 0;
}

/* SEQUENCE4resok: sessionid, sequenceid, slotid, highest, target, flags. */
static int sequence_ok(struct xb_buf *r, const char *what)
{
	if (op_ok(r, OP_SEQUENCE, what))
		return -1;
	xb_skip(r, 16 + 5 * 4);
	return r->fb_bad ? -1 : 0;
}

/* channel_attrs4: six counts and ca_rdma_ird<1>. */
static void put_chan(struct xb_buf *c, uint32_t maxreq, uint32_t maxresp, uint32_t cached, uint32_t ops)
{
	xb_put_u32(c, 0);	/* headerpadsize */
	xb_put_u32(c, maxreq);
	xb_put_u32(c, maxresp);
	xb_put_u32(c, cached);
	xb_put_u32(c, ops);
	xb_put_u32(c, 1);	/* maxrequests: one slot */
	xb_put_u32(c, 0);	/* no rdma_ird */
}

static int exchange_id(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v)
{
	char owner[64];
	uint8_t verf[8];
	uint64_t now = (uint64_t)time(NULL);

	memcpy(verf, &now, 8);
	snprintf(owner, sizeof(owner), "gw-tlsclient.%u.%ld", v->v4_seed, (long)getpid());
	cmp_start(c, 1);
	xb_put_u32(c, OP_EXCHANGE_ID);
	xb_put_fixed(c, verf, 8);
	xb_put_opaque(c, owner, (uint32_t)strlen(owner));
	xb_put_u32(c, 0);	/* flags */
	xb_put_u32(c, 0);	/* SP4_NONE */
	xb_put_u32(c, 0);	/* no client_impl_id */
	if (cmp_call(io, c, r, "EXCHANGE_ID") || op_ok(r, OP_EXCHANGE_ID, "EXCHANGE_ID"))
		return -1;
	v->v4_clientid = xb_get_u64(r);
	v->v4_csseq = xb_get_u32(r);
	xb_get_u32(r);		/* flags */
	if (r->fb_bad || xb_get_u32(r) != 0)
		return fprintf(stderr, "NFSv4.1 EXCHANGE_ID: state protection not SP4_NONE\n"), -1;
	printf("NFSv4.1 EXCHANGE_ID: ok, clientid %#llx (SP4_NONE)\n", (unsigned long long)v->v4_clientid);
	return 0;
}

static int create_session(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v, uint32_t maxio)
{
	uint32_t maxreq, maxresp, n;

	cmp_start(c, 1);
	xb_put_u32(c, OP_CREATE_SESSION);
	xb_put_u64(c, v->v4_clientid);
	xb_put_u32(c, v->v4_csseq);
	xb_put_u32(c, 0);	/* flags: no back channel on this connection */
	put_chan(c, maxio + 4096, maxio + 4096, 4096, 16);
	put_chan(c, 8192, 8192, 0, 2);
	xb_put_u32(c, 0x40000000);	/* cb_program, unused */
	xb_put_u32(c, 1);		/* one callback_sec_parms4: AUTH_NONE */
	xb_put_u32(c, 0);
	if (cmp_call(io, c, r, "CREATE_SESSION") || op_ok(r, OP_CREATE_SESSION, "CREATE_SESSION"))
		return -1;
	if (r->fb_off + 16 > r->fb_len)
		return fprintf(stderr, "NFSv4.1 CREATE_SESSION: short reply\n"), -1;
	memcpy(v->v4_session, r->fb_p + r->fb_off, 16);
	xb_skip(r, 16 + 4 + 4 + 4);	/* sessionid, sequenceid, flags, headerpadsize */
	maxreq = xb_get_u32(r);
	maxresp = xb_get_u32(r);
	xb_skip(r, 3 * 4);
	n = xb_get_u32(r);
	if (r->fb_bad || n > 1)
		return fprintf(stderr, "NFSv4.1 CREATE_SESSION: bad reply\n"), -1;
	v->v4_slotseq = 1;
	printf("NFSv4.1 CREATE_SESSION: ok, fore channel requests up to %u bytes, replies up to %u\n", maxreq,
	       maxresp);
	if (maxreq < maxio + 512 || maxresp < maxio + 512)
		return fprintf(stderr, "NFSv4.1 CREATE_SESSION: the server's sizes hold no %u-byte WRITE/READ\n",
			       maxio), -1;
	return 0;
}

/* SEQUENCE + PUTROOTFH + GETATTR(type, size, fileid) of the pseudo root. */
static int root_getattr(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v)
{
	uint32_t nw, type;
	uint64_t size, fileid;
	const uint8_t *p;

	cmp_start(c, 3);
	put_sequence(c, v);
	xb_put_u32(c, OP_PUTROOTFH);
	xb_put_u32(c, OP_GETATTR);
	xb_put_u32(c, 1);
	xb_put_u32(c, 1u << 1 | 1u << 4 | 1u << 20);	/* type, size, fileid */
	if (cmp_call(io, c, r, "GETATTR") || sequence_ok(r, "SEQUENCE") || op_ok(r, OP_PUTROOTFH, "PUTROOTFH") ||
	    op_ok(r, OP_GETATTR, "GETATTR"))
		return -1;
	nw = xb_get_u32(r);
	if (nw < 1 || nw > 4 || xb_get_u32(r) != (1u << 1 | 1u << 4 | 1u << 20))
		return fprintf(stderr, "NFSv4.1 GETATTR: not the three attributes asked for\n"), -1;
	xb_skip(r, (nw - 1) * 4);
	p = xb_get_opaque(r, &nw);
	if (!p || nw != 4 + 8 + 8)
		return fprintf(stderr, "NFSv4.1 GETATTR: attribute values of %u bytes, not 20\n", nw), -1;
	r->fb_off = (size_t)(p - r->fb_p);
	type = xb_get_u32(r);
	size = xb_get_u64(r);
	fileid = xb_get_u64(r);
	if (type != 2)		/* NF4DIR */
		return fprintf(stderr, "NFSv4.1 GETATTR: the root is of type %u, not a directory\n", type), -1;
	printf("NFSv4.1 SEQUENCE+PUTROOTFH+GETATTR: ok, root: type %u (directory), size %llu, fileid %llu\n", type,
	       (unsigned long long)size, (unsigned long long)fileid);
	return 0;
}

int tc_v41_start(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v, uint32_t maxio)
{
	if (exchange_id(io, c, r, v) || create_session(io, c, r, v, maxio))
		return -1;
	/* nfsd holds OPENs of a session's client back until it is told that
	 * no state is to be reclaimed (RFC 8881 18.51). */
	cmp_start(c, 2);
	put_sequence(c, v);
	xb_put_u32(c, OP_RECLAIM_COMPLETE);
	xb_put_u32(c, 0);	/* rca_one_fs: false */
	if (cmp_call(io, c, r, "RECLAIM_COMPLETE") || sequence_ok(r, "SEQUENCE") ||
	    op_ok(r, OP_RECLAIM_COMPLETE, "RECLAIM_COMPLETE"))
		return -1;
	printf("NFSv4.1 SEQUENCE+RECLAIM_COMPLETE: ok\n");
	return root_getattr(io, c, r, v);
}

/* OPEN4resok after the stateid: change_info, rflags, attrset and the
 * delegation (none is asked for; one granted anyway is refused here). */
static int open_rest(struct xb_buf *r)
{
	uint32_t nw, dt, why;

	xb_skip(r, 4 + 8 + 8 + 4);
	nw = xb_get_u32(r);
	xb_skip(r, (size_t)(nw <= 8 ? nw : 9999) * 4);
	dt = xb_get_u32(r);
	if (dt == 3) {		/* OPEN_DELEGATE_NONE_EXT: why, and for CONTENTION/RESOURCE a bool */
		why = xb_get_u32(r);
		if (why == 1 || why == 2)
			xb_get_u32(r);
	} else if (dt != 0) {
		return fprintf(stderr, "NFSv4.1 OPEN: a delegation (type %u) though none was wanted\n", dt), -1;
	}
	return r->fb_bad ? -1 : 0;
}

static int open_once(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v,
		     const char *const *comp, uint32_t ncomp, const char *name)
{
	static const char owner[] = "gw-tlsclient";
	int st;

	cmp_start(c, 4 + ncomp);
	put_sequence(c, v);
	xb_put_u32(c, OP_PUTROOTFH);
	for (uint32_t i = 0; i < ncomp; i++) {
		xb_put_u32(c, OP_LOOKUP);
		xb_put_opaque(c, comp[i], (uint32_t)(strchrnul(comp[i], '/') - comp[i]));
	}
	xb_put_u32(c, OP_OPEN);
	xb_put_u32(c, 0);		/* seqid, unused in 4.1 */
	xb_put_u32(c, 3 | 0x0400);	/* SHARE_ACCESS_BOTH (READ back too), WANT_NO_DELEG */
	xb_put_u32(c, 0);		/* deny none */
	xb_put_u64(c, v->v4_clientid);
	xb_put_opaque(c, owner, sizeof(owner) - 1);
	xb_put_u32(c, 1);		/* OPEN4_CREATE */
	xb_put_u32(c, 0);		/* UNCHECKED4 */
	xb_put_u32(c, 2);		/* createattrs: mode (attribute 33) */
	xb_put_u32(c, 0);
	xb_put_u32(c, 1u << 1);
	xb_put_u32(c, 4);
	xb_put_u32(c, 0666);
	xb_put_u32(c, 0);		/* CLAIM_NULL */
	xb_put_opaque(c, name, (uint32_t)strlen(name));
	xb_put_u32(c, OP_GETFH);
	st = cmp_send(io, c, r, "OPEN");
	if (st == NFS4ERR_GRACE || st == NFS4ERR_DELAY)
		return st;
	if (st > 0)
		fprintf(stderr, "NFSv4.1 OPEN: compound status %d\n", st);
	if (st || sequence_ok(r, "SEQUENCE") || op_ok(r, OP_PUTROOTFH, "PUTROOTFH"))
		return -1;
	for (uint32_t i = 0; i < ncomp; i++)
		if (op_ok(r, OP_LOOKUP, "LOOKUP"))
			return -1;
	if (op_ok(r, OP_OPEN, "OPEN") || r->fb_off + 16 > r->fb_len)
		return -1;
	memcpy(v->v4_stateid, r->fb_p + r->fb_off, 16);
	xb_skip(r, 16);
	if (open_rest(r) || op_ok(r, OP_GETFH, "GETFH") || xb_take_fh(r, &v->v4_fh))
		return -1;
	return 0;
}

/* SEQUENCE+PUTROOTFH+LOOKUP(dir's components)+OPEN NAME+GETFH, again while
 * the server is in its grace period. */
int tc_v41_open(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v, const char *dir,
		const char *name)
{
	const char *comp[DIR_MAX];
	uint32_t ncomp = 0;
	int st, waited = 0;

	for (const char *p = dir; *p; p++) {
		if (*p == '/')
			continue;
		if (ncomp == DIR_MAX)
			return fprintf(stderr, "NFSv4.1 OPEN: over %d path components\n", DIR_MAX), -1;
		comp[ncomp++] = p;
		p = strchrnul(p, '/') - 1;
	}
	while ((st = open_once(io, c, r, v, comp, ncomp, name)) > 0 && waited < 120) {
		if (waited == 0)
			printf("NFSv4.1 OPEN: %s, retrying each second\n",
			       st == NFS4ERR_GRACE ? "NFS4ERR_GRACE (the server's grace period)" : "NFS4ERR_DELAY");
		sleep(1);
		waited++;
	}
	if (st)
		return st > 0 ? fprintf(stderr, "NFSv4.1 OPEN: status %d for %d s\n", st, waited), -1 : -1;
	printf("NFSv4.1 SEQUENCE+PUTROOTFH+%u LOOKUP+OPEN+GETFH: ok, %s%s%s created or opened, %u-byte handle\n",
	       ncomp, dir, *dir && dir[strlen(dir) - 1] != '/' ? "/" : "", name, v->v4_fh.fh_len);
	return 0;
}

/* SEQUENCE + PUTFH of the open file, then the caller's operation. */
static void file_ops(struct xb_buf *c, struct tc_v41 *v, uint32_t op)
{
	cmp_start(c, 3);
	put_sequence(c, v);
	xb_put_u32(c, OP_PUTFH);
	xb_put_opaque(c, v->v4_fh.fh_data, v->v4_fh.fh_len);
	xb_put_u32(c, op);
}

int tc_v41_write(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v, uint64_t off,
		 const uint8_t *data, uint32_t len)
{
	uint32_t n, how;

	file_ops(c, v, OP_WRITE);
	xb_put_fixed(c, v->v4_stateid, 16);
	xb_put_u64(c, off);
	xb_put_u32(c, 2);	/* FILE_SYNC4 */
	xb_put_opaque(c, data, len);
	if (cmp_call(io, c, r, "WRITE") || sequence_ok(r, "SEQUENCE") || op_ok(r, OP_PUTFH, "PUTFH") ||
	    op_ok(r, OP_WRITE, "WRITE"))
		return -1;
	n = xb_get_u32(r);
	how = xb_get_u32(r);
	if (r->fb_bad || n != len || how != 2)
		return fprintf(stderr, "NFSv4.1 WRITE: %u of %u bytes, committed %u (not FILE_SYNC4)\n", n, len,
			       how), -1;
	return 0;
}

int tc_v41_read(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v, uint64_t off,
		uint8_t *back, uint32_t len)
{
	const uint8_t *p;
	uint32_t n;

	file_ops(c, v, OP_READ);
	xb_put_fixed(c, v->v4_stateid, 16);
	xb_put_u64(c, off);
	xb_put_u32(c, len);
	if (cmp_call(io, c, r, "READ") || sequence_ok(r, "SEQUENCE") || op_ok(r, OP_PUTFH, "PUTFH") ||
	    op_ok(r, OP_READ, "READ"))
		return -1;
	xb_get_u32(r);		/* eof */
	p = xb_get_opaque(r, &n);
	if (!p || n != len)
		return fprintf(stderr, "NFSv4.1 READ returned %u of %u bytes\n", p ? n : 0, len), -1;
	memcpy(back, p, n);
	return 0;
}

/* CLOSE, DESTROY_SESSION, DESTROY_CLIENTID (the last two alone in their
 * compounds, RFC 8881 18.37 and 18.50). */
int tc_v41_finish(struct tc_io *io, struct xb_buf *c, struct xb_buf *r, struct tc_v41 *v)
{
	file_ops(c, v, OP_CLOSE);
	xb_put_u32(c, 0);	/* seqid */
	xb_put_fixed(c, v->v4_stateid, 16);
	if (cmp_call(io, c, r, "CLOSE") || sequence_ok(r, "SEQUENCE") || op_ok(r, OP_PUTFH, "PUTFH") ||
	    op_ok(r, OP_CLOSE, "CLOSE"))
		return -1;
	printf("NFSv4.1 SEQUENCE+PUTFH+CLOSE: ok\n");
	cmp_start(c, 1);
	xb_put_u32(c, OP_DESTROY_SESSION);
	xb_put_fixed(c, v->v4_session, 16);
	if (cmp_call(io, c, r, "DESTROY_SESSION") || op_ok(r, OP_DESTROY_SESSION, "DESTROY_SESSION"))
		return -1;
	printf("NFSv4.1 DESTROY_SESSION: ok\n");
	cmp_start(c, 1);
	xb_put_u32(c, OP_DESTROY_CLIENTID);
	xb_put_u64(c, v->v4_clientid);
	if (cmp_call(io, c, r, "DESTROY_CLIENTID") || op_ok(r, OP_DESTROY_CLIENTID, "DESTROY_CLIENTID"))
		return -1;
	printf("NFSv4.1 DESTROY_CLIENTID: ok\n");
	return 0;
}
