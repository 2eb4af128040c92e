// SPDX-License-Identifier: MIT
/*
 * Unit tests for the NFS version 2 and 3 walkers (chunking/nfs_walk_v23.c):
 * every procedure of nfs.x / nfs3.x (RFC 1094, RFC 1813), arguments and
 * results encoded with tests/unit/nfs_enc.c.
 *
 * Each table row is one case: the call walker consumes the arguments
 * exactly and finds WRITE data / SYMLINK path where the encoder put them
 * (RFC 8267 section 4); its reply bound covers the largest result we can
 * encode; the reply walker splices READ / READLINK data from write chunks
 * back into the exact TCP reply, and an error result leaves the chunk
 * unused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"
#include "nfs_enc.h"

#define XID 0x0badcafeu

static uint8_t msg[1 << 17], red[1 << 17], out[1 << 17];

struct exp {
	unsigned n;
	struct xdr_span sp[4];
};

static void exp_item(struct exp *e, const struct xdr_enc *xe, unsigned len)
{
	e->sp[e->n].xs_pos = xe->xe_len + 4;
	e->sp[e->n].xs_len = len;
	e->n++;
}

typedef void (*enc_fn)(struct xdr_enc *xe, struct exp *e);

struct proc_case {
	uint32_t vers, proc;
	const char *name;
	enc_fn args, resok, resfail;
	unsigned ncall, nreply;
};

#define FN(name, ...) \
	static void name(struct xdr_enc *xe, struct exp *e) { (void)e; nfs_enc_fmt(xe, __VA_ARGS__); }
static void none(struct xdr_enc *xe, struct exp *e) { (void)xe; (void)e; }

/* ---- NFSv2 ---- */
FN(a2_fh, "z", 32u)
FN(a2_setattr, "z z", 32u, 32u)
FN(a2_dirop, "z o", 32u, 255u)
static void a2_read(struct xdr_enc *xe, struct exp *e) { (void)e; nfs_enc_fmt(xe, "z www", 32u, 0u, 8192u, 0u); }
static void a2_write(struct xdr_enc *xe, struct exp *e)
{
	nfs_enc_fmt(xe, "z www", 32u, 0u, 4096u, 0u);
	exp_item(e, xe, 8191);
	nfs_enc_fmt(xe, "o", 8191u);
}
FN(a2_create, "z o z", 32u, 9u, 32u)
FN(a2_rename, "z o z o", 32u, 3u, 32u, 5u)
FN(a2_link, "z z o", 32u, 32u, 6u)
static void a2_symlink(struct xdr_enc *xe, struct exp *e)
{
	nfs_enc_fmt(xe, "z o", 32u, 7u);
	exp_item(e, xe, 1023);
	nfs_enc_fmt(xe, "o z", 1023u, 32u);
}
FN(a2_readdir, "z w w", 32u, 0u, 1024u)
FN(r2_attr, "z", 68u)
FN(r2_diropres, "z z", 32u, 68u)
static void r2_readlink(struct xdr_enc *xe, struct exp *e) { exp_item(e, xe, 1024); nfs_enc_fmt(xe, "o", 1024u); }
static void r2_read(struct xdr_enc *xe, struct exp *e)
{
	nfs_enc_fmt(xe, "z", 68u);
	exp_item(e, xe, 8192);
	nfs_enc_fmt(xe, "o", 8192u);
}
FN(r2_readdir, "w w o w  w w o w  w w", 1u, 10u, 255u, 1u, 1u, 11u, 3u, 2u, 0u, 1u)
FN(r2_statfs, "wwwww", 8192u, 4096u, 100u, 50u, 40u)

/* ---- NFSv3 ---- */
#define SATTR_ALL "w w  w w  w w  w h  w ww  w ww"	/* every field set */
#define SATTR_ALL_V 1u, 0644u, 1u, 0u, 1u, 0u, 1u, 4096ull, 2u, 1u, 2u, 2u, 3u, 4u
FN(a3_fh, "o", 64u)
FN(a3_setattr, "o " SATTR_ALL " w ww", 64u, SATTR_ALL_V, 1u, 5u, 6u)
FN(a3_setattr_min, "o wwwwww w", 3u, 0u, 0u, 0u, 0u, 0u, 1u, 0u)
FN(a3_dirop, "o o", 64u, 11u)
FN(a3_access, "o w", 64u, 0x3fu)
FN(a3_read, "o h w", 64u, 0ull, 65536u)
static void a3_write(struct xdr_enc *xe, struct exp *e)
{
	nfs_enc_fmt(xe, "o h w w", 63u, 8192ull, 4099u, 2u);
	exp_item(e, xe, 4099);
	nfs_enc_fmt(xe, "o", 4099u);
}
FN(a3_create, "o o w " SATTR_ALL, 64u, 5u, 1u, SATTR_ALL_V)
FN(a3_create_excl, "o o w v", 64u, 5u, 2u)
FN(a3_mkdir, "o o " SATTR_ALL, 64u, 5u, SATTR_ALL_V)
static void a3_symlink(struct xdr_enc *xe, struct exp *e)
{
	nfs_enc_fmt(xe, "o o " SATTR_ALL, 64u, 5u, SATTR_ALL_V);
	exp_item(e, xe, 4095);
	nfs_enc_fmt(xe, "o", 4095u);
}
FN(a3_mknod_chr, "o o w " SATTR_ALL " ww", 64u, 5u, 4u, SATTR_ALL_V, 1u, 3u)
FN(a3_mknod_fifo, "o o w wwwwww", 64u, 5u, 7u, 0u, 0u, 0u, 0u, 0u, 0u)
FN(a3_mknod_reg, "o o w", 64u, 5u, 1u)
FN(a3_rename, "o o o o", 64u, 5u, 62u, 6u)
FN(a3_link, "o o o", 64u, 61u, 6u)
FN(a3_readdir, "o h v w", 64u, 0ull, 8192u)
FN(a3_readdirplus, "o h v w w", 64u, 0ull, 4096u, 32768u)
FN(a3_commit, "o h w", 64u, 0ull, 0u)

#define POST "w z"
#define POST_V 1u, 84u
#define WCC "w z w z"
#define WCC_V 1u, 24u, 1u, 84u
FN(r3_fattr, "z", 84u)
FN(r3_post, POST, POST_V)
FN(r3_wcc, WCC, WCC_V)
FN(r3_lookup, "o " POST " " POST, 64u, POST_V, POST_V)
FN(r3_access, POST " w", POST_V, 0x3fu)
static void r3_readlink(struct xdr_enc *xe, struct exp *e)
{
	nfs_enc_fmt(xe, POST, POST_V);
	exp_item(e, xe, 4096);
	nfs_enc_fmt(xe, "o", 4096u);
}
static void r3_read(struct xdr_enc *xe, struct exp *e)
{
	nfs_enc_fmt(xe, POST " w w", POST_V, 65535u, 0u);
	exp_item(e, xe, 65535);
	nfs_enc_fmt(xe, "o", 65535u);
}
FN(r3_write, WCC " w w v", WCC_V, 4099u, 2u)
FN(r3_create, "w o " POST " " WCC, 1u, 64u, POST_V, WCC_V)
FN(r3_wcc2, WCC " " WCC, WCC_V, WCC_V)
FN(r3_link, POST " " WCC, POST_V, WCC_V)
FN(r3_readdir, POST " v  w h o h  w h o h  w w", POST_V, 1u, 1ull, 200u, 1ull, 1u, 2ull, 3u, 2ull,
   0u, 1u)
FN(r3_readdirplus, POST " v  w h o h " POST " w o  w w", POST_V, 1u, 1ull, 200u, 1ull, POST_V,
   1u, 64u, 0u, 1u)
FN(r3_fsstat, POST " hhhhhh w", POST_V, 1ull, 2ull, 3ull, 4ull, 5ull, 6ull, 0u)
FN(r3_fsinfo, POST " wwwwwww h ww w", POST_V, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8ull, 0u, 1u, 0x1bu)
FN(r3_pathconf, POST " wwwwww", POST_V, 1u, 255u, 0u, 1u, 0u, 1u)
FN(r3_commit, WCC " v", WCC_V)

static const struct proc_case procs[] = {
	{ 2, 0, "NULL", none, none, NULL, 0, 0 },
	{ 2, 1, "GETATTR", a2_fh, r2_attr, none, 0, 0 },
	{ 2, 2, "SETATTR", a2_setattr, r2_attr, none, 0, 0 },
	{ 2, 3, "ROOT", none, none, NULL, 0, 0 },
	{ 2, 4, "LOOKUP", a2_dirop, r2_diropres, none, 0, 0 },
	{ 2, 5, "READLINK", a2_fh, r2_readlink, none, 0, 1 },
	{ 2, 6, "READ", a2_read, r2_read, none, 0, 1 },
	{ 2, 7, "WRITECACHE", none, none, NULL, 0, 0 },
	{ 2, 8, "WRITE", a2_write, r2_attr, none, 1, 0 },
	{ 2, 9, "CREATE", a2_create, r2_diropres, none, 0, 0 },
	{ 2, 10, "REMOVE", a2_dirop, none, none, 0, 0 },
	{ 2, 11, "RENAME", a2_rename, none, none, 0, 0 },
	{ 2, 12, "LINK", a2_link, none, none, 0, 0 },
	{ 2, 13, "SYMLINK", a2_symlink, none, none, 1, 0 },
	{ 2, 14, "MKDIR", a2_create, r2_diropres, none, 0, 0 },
	{ 2, 15, "RMDIR", a2_dirop, none, none, 0, 0 },
	{ 2, 16, "READDIR", a2_readdir, r2_readdir, none, 0, 0 },
	{ 2, 17, "STATFS", a2_fh, r2_statfs, none, 0, 0 },
	{ 3, 0, "NULL", none, none, NULL, 0, 0 },
	{ 3, 1, "GETATTR", a3_fh, r3_fattr, none, 0, 0 },
	{ 3, 2, "SETATTR", a3_setattr, r3_wcc, r3_wcc, 0, 0 },
	{ 3, 2, "SETATTR(min)", a3_setattr_min, r3_wcc, r3_wcc, 0, 0 },
	{ 3, 3, "LOOKUP", a3_dirop, r3_lookup, r3_post, 0, 0 },
	{ 3, 4, "ACCESS", a3_access, r3_access, r3_post, 0, 0 },
	{ 3, 5, "READLINK", a3_fh, r3_readlink, r3_post, 0, 1 },
	{ 3, 6, "READ", a3_read, r3_read, r3_post, 0, 1 },
	{ 3, 7, "WRITE", a3_write, r3_write, r3_wcc, 1, 0 },
	{ 3, 8, "CREATE", a3_create, r3_create, r3_wcc, 0, 0 },
	{ 3, 8, "CREATE(exclusive)", a3_create_excl, r3_create, r3_wcc, 0, 0 },
	{ 3, 9, "MKDIR", a3_mkdir, r3_create, r3_wcc, 0, 0 },
	{ 3, 10, "SYMLINK", a3_symlink, r3_create, r3_wcc, 1, 0 },
	{ 3, 11, "MKNOD(chr)", a3_mknod_chr, r3_create, r3_wcc, 0, 0 },
	{ 3, 11, "MKNOD(fifo)", a3_mknod_fifo, r3_create, r3_wcc, 0, 0 },
	{ 3, 11, "MKNOD(reg)", a3_mknod_reg, r3_create, r3_wcc, 0, 0 },
	{ 3, 12, "REMOVE", a3_dirop, r3_wcc, r3_wcc, 0, 0 },
	{ 3, 13, "RMDIR", a3_dirop, r3_wcc, r3_wcc, 0, 0 },
	{ 3, 14, "RENAME", a3_rename, r3_wcc2, r3_wcc2, 0, 0 },
	{ 3, 15, "LINK", a3_link, r3_link, r3_link, 0, 0 },
	{ 3, 16, "READDIR", a3_readdir, r3_readdir, r3_post, 0, 0 },
	{ 3, 17, "READDIRPLUS", a3_readdirplus, r3_readdirplus, r3_post, 0, 0 },
	{ 3, 18, "FSSTAT", a3_fh, r3_fsstat, r3_post, 0, 0 },
	{ 3, 19, "FSINFO", a3_fh, r3_fsinfo, r3_post, 0, 0 },
	{ 3, 20, "PATHCONF", a3_fh, r3_pathconf, r3_post, 0, 0 },
	{ 3, 21, "COMMIT", a3_commit, r3_commit, r3_wcc, 0, 0 },
};

static void t_proc(void **state)
{
	const struct proc_case *c = *state;
	const struct chk_ddp_rule *rule = chk_ddp_lookup(CHK_PROG_NFS, c->vers, c->proc);
	struct xdr_enc xe;
	struct exp e = { 0 }, dummy = { 0 };
	struct xdr_cur xc;
	struct iovec one;
	struct chk_call_walk cw;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	size_t args, res, len, rlen;
	uint32_t wl[4] = { 0 };
	const uint8_t *chunks[4];
	unsigned i;

	/* the table agrees with the row */
	if (c->ncall || c->nreply) {
		assert_non_null(rule);
		assert_int_equal(rule->dr_call_item != CHK_DDP_NONE, c->ncall);
		assert_int_equal(rule->dr_reply_item != CHK_DDP_NONE, c->nreply);
	} else {
		assert_null(rule);
	}

	/* call */
	xdr_enc_init(&xe, msg, sizeof(msg));
	nfs_enc_call_hdr(&xe, XID, CHK_PROG_NFS, c->vers, c->proc);
	args = xe.xe_len;
	c->args(&xe, &e);
	assert_int_equal(xe.xe_err, XDR_OK);
	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(xdr_seek(&xc, args));
	assert_true(chk_call_walk(&xc, CHK_PROG_NFS, c->vers, c->proc, 0, &cw, &err));
	assert_int_equal(cw.cw_noddp, CHK_NODDP_NO);
	assert_false(cw.cw_res_unbounded);
	assert_int_equal(cw.cw_args_end, xe.xe_len);
	assert_int_equal(cw.cw_ncall, c->ncall);
	for (i = 0; i < e.n; i++) {
		assert_int_equal(cw.cw_call[i].it_pos, e.sp[i].xs_pos);
		assert_int_equal(cw.cw_call[i].it_len, e.sp[i].xs_len);
		assert_int_equal(cw.cw_call[i].it_kind, rule->dr_call_item);
	}
	assert_int_equal(cw.cw_nreply, c->nreply);
	if (c->nreply)
		assert_int_equal(cw.cw_reply[0].it_kind, rule->dr_reply_item);
	/* a truncated call does not decode (the NULL-like ones have no args) */
	if (xe.xe_len > args) {
		xdr_cur_init_buf(&xc, &one, msg, xe.xe_len - 4);
		assert_true(xdr_seek(&xc, args));
		assert_false(chk_call_walk(&xc, CHK_PROG_NFS, c->vers, c->proc, 0, &cw, &err));
		assert_int_equal(err, CHK_WALK_XDR);
		assert_int_equal(cw.cw_noddp, CHK_NODDP_GARBAGE);
		assert_true(cw.cw_res_unbounded);
		/* restore the walk of the full call for the bound below */
		xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
		assert_true(xdr_seek(&xc, args));
		assert_true(chk_call_walk(&xc, CHK_PROG_NFS, c->vers, c->proc, 0, &cw, &err));
	}

	/* reply (success) as the server sends it over TCP */
	e.n = 0;
	xdr_enc_init(&xe, msg, sizeof(msg));
	nfs_enc_reply_hdr(&xe, XID);
	res = xe.xe_len;
	if (c->resfail)			/* procedures with a status */
		xdr_put_u32(&xe, 0);
	c->resok(&xe, &e);
	assert_int_equal(xe.xe_err, XDR_OK);
	len = xe.xe_len;
	assert_true(len - res <= cw.cw_res_max);
	assert_int_equal(e.n, c->nreply);

	/* over RDMA, the eligible result in a write chunk */
	rlen = nfs_enc_cut(msg, len, e.sp, e.n, red);
	for (i = 0; i < e.n; i++) {
		wl[i] = (uint32_t)e.sp[i].xs_len;
		chunks[i] = msg + e.sp[i].xs_pos;
	}
	xdr_cur_init_buf(&xc, &one, red, rlen);
	assert_true(xdr_seek(&xc, res));
	assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, c->vers, c->proc, wl, e.n, &rw, &err));
	assert_int_equal(rw.rw_len, len);
	assert_int_equal(nfs_enc_assemble(&rw, red, chunks, out, sizeof(out)), len);
	assert_memory_equal(out, msg, len);

	/* failure result: an offered chunk comes back unused */
	if (c->resfail) {
		xdr_enc_init(&xe, msg, sizeof(msg));
		nfs_enc_reply_hdr(&xe, XID);
		xdr_put_u32(&xe, 2);		/* NOENT */
		c->resfail(&xe, &dummy);
		assert_true(xe.xe_len - res <= cw.cw_res_max);
		wl[0] = 0;
		xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
		assert_true(xdr_seek(&xc, res));
		assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, c->vers, c->proc, wl, c->nreply,
					   &rw, &err));
		assert_int_equal(rw.rw_nitems, 0);
		assert_int_equal(rw.rw_npieces, 1);
		assert_int_equal(rw.rw_len, xe.xe_len);
		if (c->nreply) {
			wl[0] = 4;
			xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
			assert_true(xdr_seek(&xc, res));
			assert_false(chk_reply_walk(&xc, 0, CHK_PROG_NFS, c->vers, c->proc, wl, 1,
						    &rw, &err));
			assert_int_equal(err, CHK_WALK_CHUNK_UNUSED);
		}
	}
}

#define NPROCS (sizeof(procs) / sizeof(procs[0]))
static char names[NPROCS][64];

int main(void)
{
	struct CMUnitTest tests[NPROCS];
	unsigned i;

	for (i = 0; i < NPROCS; i++) {
		snprintf(names[i], sizeof(names[i]), "%02u_nfsv%u_%u_%s", i + 1, procs[i].vers,
			 procs[i].proc, procs[i].name);
		tests[i] = (struct CMUnitTest){ .name = names[i], .test_func = t_proc,
						.initial_state = (void *)&procs[i] };
	}
	return _cmocka_run_group_tests("nfs_v23_procs", tests, NPROCS, NULL, NULL);
}
