// SPDX-License-Identifier: MIT
/*
 * Unit tests for whole-message behaviour of the NFS walkers
 * (chunking/nfs_table.c, chunking/nfs_walk.c): the RFC 8267 table itself,
 * COMPOUNDs with several READs and WRITEs, errors mid-COMPOUND, unknown
 * operations and minor versions, RPCSEC_GSS services, and the programs
 * that never get DDP (MOUNT, NLM, NSM, NFSACL, unknown ones).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"
#include "nfs_enc.h"

#define XID 0xc0ffee00u

static uint8_t msg[1 << 18], red[1 << 18], out[1 << 18];
static size_t args_pos;

static void call_start(struct xdr_enc *xe, uint32_t prog, uint32_t vers, uint32_t proc)
{
	xdr_enc_init(xe, msg, sizeof(msg));
	nfs_enc_call_hdr(xe, XID, prog, vers, proc);
	args_pos = xe->xe_len;
}

static bool walk(const struct xdr_enc *xe, uint32_t prog, uint32_t vers, uint32_t proc,
		 uint32_t gss, struct chk_call_walk *cw)
{
	struct xdr_cur xc;
	struct iovec one;
	enum chk_walk_err err;

	xdr_cur_init_buf(&xc, &one, msg, xe->xe_len);
	assert_true(xdr_seek(&xc, args_pos));
	return chk_call_walk(&xc, prog, vers, proc, gss, cw, &err);
}

/* 1. RFC 8267 sections 4 and 6.1: exactly these items, with their section */
static void t01_table(void **state)
{
	const struct chk_ddp_rule *t;
	size_t n, i;

	(void)state;
	t = chk_ddp_table(&n);
	assert_int_equal(n, 12);
	for (i = 0; i < n; i++) {
		assert_int_equal(t[i].dr_prog, CHK_PROG_NFS);
		assert_true((t[i].dr_call_item != CHK_DDP_NONE) ^ (t[i].dr_reply_item != CHK_DDP_NONE));
		assert_non_null(strstr(t[i].dr_ref, t[i].dr_vers == 4 ? "RFC 8267 section 6.1"
								      : "RFC 8267 section 4"));
		if (t[i].dr_v4op)
			assert_ptr_equal(chk_ddp_lookup_v4op(t[i].dr_proc), &t[i]);
		else
			assert_ptr_equal(chk_ddp_lookup(CHK_PROG_NFS, t[i].dr_vers, t[i].dr_proc),
					 &t[i]);
	}
	assert_int_equal(chk_ddp_lookup_v4op(25)->dr_reply_item, CHK_DDP_READ_DATA);
	assert_int_equal(chk_ddp_lookup_v4op(27)->dr_reply_item, CHK_DDP_READLINK_PATH);
	assert_int_equal(chk_ddp_lookup_v4op(38)->dr_call_item, CHK_DDP_WRITE_DATA);
	assert_int_equal(chk_ddp_lookup_v4op(6)->dr_call_item, CHK_DDP_SYMLINK_PATH);
	assert_null(chk_ddp_lookup_v4op(68));		/* READ_PLUS: not eligible */
	assert_null(chk_ddp_lookup_v4op(72));		/* GETXATTR */
	assert_null(chk_ddp_lookup(CHK_PROG_NFS, 4, 1));
	assert_null(chk_ddp_lookup(CHK_PROG_NFSACL, 3, 1));
	assert_null(chk_ddp_lookup(CHK_PROG_MOUNT, 3, 1));
	assert_null(chk_ddp_lookup(CHK_PROG_NFS, 3, 8));
	assert_string_equal(chk_ddp_item_str(CHK_DDP_READ_DATA), "READ data");
	assert_string_equal(chk_ddp_item_str(CHK_DDP__COUNT), "unknown DDP item");
	assert_null(chk_nfs4_op_name(2));
	assert_null(chk_nfs4_op_name(76));
	assert_string_equal(chk_nfs4_op_name(10044), "ILLEGAL");
}

/* 2. MOUNT, NLM, NSM, NFSACL, unknown program, NFS v5: no DDP, never
 * refused; NULL bounded, anything else unbounded. */
static void t02_other_programs(void **state)
{
	static const uint32_t progs[][2] = {
		{ CHK_PROG_MOUNT, 3 }, { CHK_PROG_NLM, 4 }, { CHK_PROG_NSM, 1 },
		{ CHK_PROG_NFSACL, 3 }, { 390113, 1 }, { CHK_PROG_NFS, 5 },
	};
	struct chk_call_walk cw;
	struct xdr_enc xe;
	unsigned i;

	(void)state;
	for (i = 0; i < 6; i++) {
		call_start(&xe, progs[i][0], progs[i][1], 1);
		nfs_enc_fmt(&xe, "o w", 40u, 7u);
		assert_true(walk(&xe, progs[i][0], progs[i][1], 1, 0, &cw));
		assert_int_equal(cw.cw_noddp, CHK_NODDP_PROGRAM);
		assert_true(cw.cw_res_unbounded);
		assert_int_equal(cw.cw_ncall + cw.cw_nreply, 0);
		call_start(&xe, progs[i][0], progs[i][1], 0);
		assert_true(walk(&xe, progs[i][0], progs[i][1], 0, 0, &cw));
		assert_false(cw.cw_res_unbounded);
		assert_int_equal(cw.cw_res_max, 0);
	}
	/* an NFSv3 procedure number past COMMIT, an NFSv4 procedure 2 */
	call_start(&xe, CHK_PROG_NFS, 3, 22);
	assert_true(walk(&xe, CHK_PROG_NFS, 3, 22, 0, &cw));
	assert_int_equal(cw.cw_noddp, CHK_NODDP_PROGRAM);
	assert_true(cw.cw_res_unbounded);
	call_start(&xe, CHK_PROG_NFS, 4, 2);
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 2, 0, &cw));
	assert_true(cw.cw_res_unbounded);
}

/* 3. RPCSEC_GSS: integrity walks the clear body for the bound but gives
 * no DDP; privacy and control procedures are opaque and unbounded. */
static void t03_gss(void **state)
{
	struct chk_call_walk cw, plain;
	struct xdr_enc xe;
	size_t hole;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 3, 6);
	nfs_enc_fmt(&xe, "o h w", 32u, 0ull, 8192u);
	assert_true(walk(&xe, CHK_PROG_NFS, 3, 6, 0, &plain));

	call_start(&xe, CHK_PROG_NFS, 3, 6);
	hole = xdr_put_hole(&xe);
	nfs_enc_fmt(&xe, "w o h w", 7u, 32u, 0ull, 8192u);
	xdr_patch_u32(&xe, hole, (uint32_t)(xe.xe_len - hole - 4));
	nfs_enc_fmt(&xe, "o", 28u);		/* checksum */
	assert_true(walk(&xe, CHK_PROG_NFS, 3, 6, RPC_GSS_SVC_INTEGRITY, &cw));
	assert_int_equal(cw.cw_noddp, CHK_NODDP_GSS);
	assert_int_equal(cw.cw_nreply, 0);
	assert_false(cw.cw_res_unbounded);
	assert_true(cw.cw_res_max >= plain.cw_res_max + 4 + 4 + 4 + 28);

	call_start(&xe, CHK_PROG_NFS, 3, 7);
	nfs_enc_fmt(&xe, "o", 5000u);
	assert_true(walk(&xe, CHK_PROG_NFS, 3, 7, RPC_GSS_SVC_PRIVACY, &cw));
	assert_int_equal(cw.cw_noddp, CHK_NODDP_GSS);
	assert_true(cw.cw_res_unbounded);
	assert_int_equal(cw.cw_ncall, 0);
	assert_true(walk(&xe, CHK_PROG_NFS, 3, 7, CHK_GSS_CONTROL, &cw));
	assert_true(cw.cw_res_unbounded);
	/* GSS_SVC_NONE is plain */
	call_start(&xe, CHK_PROG_NFS, 3, 6);
	nfs_enc_fmt(&xe, "o h w", 32u, 0ull, 8192u);
	assert_true(walk(&xe, CHK_PROG_NFS, 3, 6, RPC_GSS_SVC_NONE, &cw));
	assert_int_equal(cw.cw_noddp, CHK_NODDP_NO);
	assert_int_equal(cw.cw_nreply, 1);
}

/* 4. SEQUENCE PUTFH WRITE WRITE READ READ GETATTR READ (v4.1): items in
 * order with their op index, bound covers each READ's count. */
static void t04_many_reads_writes(void **state)
{
	struct chk_call_walk cw;
	struct xdr_enc xe;
	size_t w1, w2;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 1, 8);
	nfs_enc_fmt(&xe, "w i www w w", 53u, 1u, 0u, 0u, 0u, 22u);
	nfs_enc_fmt(&xe, "o", 28u);
	nfs_enc_fmt(&xe, "w shw", 38u, 0ull, 2u);
	w1 = xe.xe_len + 4;
	nfs_enc_fmt(&xe, "o", 65537u);
	nfs_enc_fmt(&xe, "w shw", 38u, 65537ull, 0u);
	w2 = xe.xe_len + 4;
	nfs_enc_fmt(&xe, "o", 3u);
	nfs_enc_fmt(&xe, "w shw w shw", 25u, 0ull, 131072u, 25u, 0ull, 1u);
	nfs_enc_fmt(&xe, "w b", 9u, 1u, 0x18u);
	nfs_enc_fmt(&xe, "w shw", 25u, 0ull, 7u);
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	assert_int_equal(cw.cw_nops_known, 8);
	assert_int_equal(cw.cw_args_end, xe.xe_len);
	assert_int_equal(cw.cw_ncall, 2);
	assert_int_equal(cw.cw_call[0].it_pos, w1);
	assert_int_equal(cw.cw_call[0].it_len, 65537);
	assert_int_equal(cw.cw_call[0].it_op, 2);
	assert_int_equal(cw.cw_call[1].it_pos, w2);
	assert_int_equal(cw.cw_call[1].it_op, 3);
	assert_int_equal(cw.cw_nreply, 3);
	assert_int_equal(cw.cw_reply[0].it_len, 131072);
	assert_int_equal(cw.cw_reply[0].it_op, 4);
	assert_int_equal(cw.cw_reply[1].it_len, 1);
	assert_int_equal(cw.cw_reply[2].it_op, 7);
	assert_false(cw.cw_res_unbounded);
	assert_true(cw.cw_res_max >= 131072 + 4 + 8 + 12 * 8);
}

/* Reply: SEQUENCE PUTFH READ(a) READLINK(b) READ(c) (RFC 8267 6.4.3),
 * `nw` of them in chunks, optionally stopping with an error at op `stop`. */
static void reply_case(unsigned nw, int stop)
{
	static const uint32_t sizes[3] = { 4097, 17, 65536 };
	struct xdr_span sp[3];
	struct xdr_enc xe;
	struct xdr_cur xc;
	struct iovec one;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	const uint8_t *chunks[3];
	uint32_t wl[3] = { 0, 0, 0 };
	size_t res, len, rlen;
	unsigned i, n = 0, nops = stop >= 0 ? (unsigned)stop + 1 : 5;

	xdr_enc_init(&xe, msg, sizeof(msg));
	nfs_enc_reply_hdr(&xe, XID);
	res = xe.xe_len;
	nfs_enc_compound_res(&xe, stop >= 0 ? 10025u : 0u, nops);
	for (i = 0; i < nops; i++) {
		bool fail = (int)i == stop;
		uint32_t op = i == 0 ? 53 : i == 1 ? 22 : i == 3 ? 27 : 25;

		nfs_enc_fmt(&xe, "ww", op, fail ? 10025u : 0u);
		if (fail)
			break;
		if (op == 53)
			nfs_enc_fmt(&xe, "i w w w w w", 1u, 0u, 63u, 63u, 0u);
		if (op == 25)
			xdr_put_u32(&xe, 0);
		if (op == 25 || op == 27) {
			sp[n].xs_pos = xe.xe_len + 4;
			sp[n].xs_len = sizes[i - 2];
			nfs_enc_fmt(&xe, "o", sizes[i - 2]);
			n++;
		}
	}
	len = xe.xe_len;
	if (nw > n)
		assert_true(stop >= 0);
	rlen = nfs_enc_cut(msg, len, sp, nw < n ? nw : n, red);
	for (i = 0; i < nw && i < n; i++) {
		wl[i] = (uint32_t)sp[i].xs_len;
		chunks[i] = msg + sp[i].xs_pos;
	}
	xdr_cur_init_buf(&xc, &one, red, rlen);
	assert_true(xdr_seek(&xc, res));
	assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 4, 1, wl, nw, &rw, &err));
	assert_int_equal(rw.rw_nitems, n);
	assert_int_equal(rw.rw_nchunks_used, nw < n ? nw : n);
	assert_int_equal(nfs_enc_assemble(&rw, red, chunks, out, sizeof(out)), len);
	assert_memory_equal(out, msg, len);
}

/* 5. All three DDP results in chunks A, B, C */
static void t05_three_chunks(void **state) { (void)state; reply_case(3, -1); }
/* 6. Fewer chunks than READs: the rest come inline (RFC 8267 6.4.1) */
static void t06_fewer_chunks(void **state)
{
	(void)state;
	reply_case(0, -1);
	reply_case(1, -1);
	reply_case(2, -1);
}
/* 7. Errors mid-COMPOUND: the READ that failed and those never run leave
 * their chunks empty; the spliced reply is still exact. */
static void t07_error_mid_compound(void **state)
{
	(void)state;
	reply_case(3, 1);	/* PUTFH fails: no READ runs */
	reply_case(3, 2);	/* first READ fails */
	reply_case(3, 3);	/* READLINK fails after a good READ */
	reply_case(3, 4);	/* last READ fails */
	reply_case(1, 4);
}

/* 8. Unknown operation: DDP ends there, earlier items stay, reply unbounded */
static void t08_unknown_op(void **state)
{
	struct chk_call_walk cw;
	struct xdr_enc xe;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 2, 4);
	nfs_enc_fmt(&xe, "w o", 22u, 8u);
	nfs_enc_fmt(&xe, "w shw o", 38u, 0ull, 2u, 5000u);
	nfs_enc_fmt(&xe, "w w", 76u, 0u);		/* op 76: past REMOVEXATTR */
	nfs_enc_fmt(&xe, "w shw o", 38u, 0ull, 2u, 5000u);
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	assert_int_equal(cw.cw_nops, 4);
	assert_int_equal(cw.cw_nops_known, 2);
	assert_int_equal(cw.cw_ncall, 1);
	assert_true(cw.cw_res_unbounded);
	assert_int_equal(cw.cw_noddp, CHK_NODDP_NO);
	/* op 0, 1, 2 are not operations either */
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 0, 2);
	nfs_enc_fmt(&xe, "w w", 2u, 0u);
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	assert_int_equal(cw.cw_nops_known, 0);
	assert_true(cw.cw_res_unbounded);
}

/* 9. Unknown op in a reply: the rest is inline; unclaimed chunks must be empty */
static void t09_unknown_op_reply(void **state)
{
	struct xdr_enc xe;
	struct xdr_cur xc;
	struct iovec one;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	uint32_t wl[2] = { 0, 0 };
	size_t res;

	(void)state;
	xdr_enc_init(&xe, msg, sizeof(msg));
	nfs_enc_reply_hdr(&xe, XID);
	res = xe.xe_len;
	nfs_enc_compound_res(&xe, 0, 2);
	nfs_enc_fmt(&xe, "ww ww o", 22u, 0u, 99u, 0u, 12u);
	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(xdr_seek(&xc, res));
	assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 4, 1, wl, 2, &rw, &err));
	assert_int_equal(rw.rw_len, xe.xe_len);
	wl[1] = 12;
	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(xdr_seek(&xc, res));
	assert_false(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 4, 1, wl, 2, &rw, &err));
	assert_int_equal(err, CHK_WALK_CHUNK_UNUSED);
}

/* 10. Minor versions: 0/1/2 walk, 3 is unknown (no DDP, unbounded) */
static void t10_minor_versions(void **state)
{
	struct chk_call_walk cw;
	struct xdr_enc xe;
	uint32_t minor;

	(void)state;
	for (minor = 0; minor <= 3; minor++) {
		call_start(&xe, CHK_PROG_NFS, 4, 1);
		nfs_enc_compound_args(&xe, minor, 2);
		nfs_enc_fmt(&xe, "w o w shw", 22u, 8u, 25u, 0ull, 100000u);
		assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
		assert_int_equal(cw.cw_minor, minor);
		if (minor < 3) {
			assert_int_equal(cw.cw_nreply, 1);
			assert_false(cw.cw_res_unbounded);
		} else {
			assert_int_equal(cw.cw_noddp, CHK_NODDP_PROGRAM);
			assert_int_equal(cw.cw_nreply, 0);
			assert_true(cw.cw_res_unbounded);
		}
	}
}

/* 11. GETATTR bounds: each known attribute adds its size; an unbounded or
 * unknown one makes the reply unbounded. */
static void t11_getattr_bounds(void **state)
{
	struct chk_call_walk cw;
	struct xdr_enc xe;
	size_t base;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 0, 1);
	nfs_enc_fmt(&xe, "w b", 9u, 0u);
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	base = cw.cw_res_max;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 0, 1);
	nfs_enc_fmt(&xe, "w b", 9u, 1u, 0x10u);		/* size: 8 bytes */
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	assert_int_equal(cw.cw_res_max, base + 8);
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 0, 1);
	nfs_enc_fmt(&xe, "w b", 9u, 2u, 0u, 1u << 4);	/* owner */
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	assert_int_equal(cw.cw_res_max, base + 4 + CHK_NFS4_NAME_MAX);
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 0, 1);
	nfs_enc_fmt(&xe, "w b", 9u, 2u, 0u, 1u << (24 - 0));	/* bit 56 dir_notif_delay */
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	assert_false(cw.cw_res_unbounded);
	static const uint32_t unb[][2] = { { 0, 12 }, { 0, 24 }, { 1, 0 }, { 1, 26 }, { 1, 27 },
					   { 1, 29 }, { 1, 30 }, { 1, 31 }, { 2, 3 }, { 2, 4 },
					   { 2, 16 }, { 3, 0 } };
	for (unsigned i = 0; i < sizeof(unb) / sizeof(unb[0]); i++) {
		uint32_t w[4] = { 0, 0, 0, 0 };

		w[unb[i][0]] = 1u << unb[i][1];
		call_start(&xe, CHK_PROG_NFS, 4, 1);
		nfs_enc_compound_args(&xe, 0, 1);
		nfs_enc_fmt(&xe, "w b", 9u, 4u, w[0], w[1], w[2], w[3]);
		assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
		assert_true(cw.cw_res_unbounded);
	}
}

/* 12. More WRITEs than the walker tracks: the extra stay inline, no error */
static void t12_too_many_items(void **state)
{
	struct chk_call_walk cw;
	struct xdr_enc xe;
	unsigned i;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 0, 40);
	for (i = 0; i < 20; i++)
		nfs_enc_fmt(&xe, "w shw o  w shw", 38u, 0ull, 0u, 100u + i, 25u, 0ull, 10u);
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	assert_int_equal(cw.cw_ncall, CHK_WALK_MAX_ITEMS);
	assert_int_equal(cw.cw_nreply, CHK_WALK_MAX_ITEMS);
	assert_int_equal(cw.cw_nops_known, 40);
	assert_int_equal(cw.cw_args_end, xe.xe_len);
}

/* 13. Malformed COMPOUNDs: truncated, absurd op count, bad union arms */
static void t13_garbage(void **state)
{
	struct chk_call_walk cw;
	struct xdr_enc xe;
	struct xdr_cur xc;
	struct iovec one;
	enum chk_walk_err err;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 1, 5);
	nfs_enc_fmt(&xe, "w o w shw o", 22u, 8u, 38u, 0ull, 0u, 100u);
	assert_false(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	assert_int_equal(cw.cw_noddp, CHK_NODDP_GARBAGE);
	assert_int_equal(cw.cw_ncall, 0);
	assert_true(cw.cw_res_unbounded);

	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 1, 0xffffffffu);
	nfs_enc_fmt(&xe, "w", 24u);
	assert_false(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));

	call_start(&xe, CHK_PROG_NFS, 4, 1);		/* OPEN with claim 9 */
	nfs_enc_compound_args(&xe, 1, 1);
	nfs_enc_fmt(&xe, "w www ho w w", 18u, 1u, 1u, 0u, 7ull, 4u, 0u, 9u);
	assert_false(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));

	call_start(&xe, CHK_PROG_NFS, 3, 2);		/* SETATTR: bool 2 */
	nfs_enc_fmt(&xe, "o w w", 8u, 2u, 0u);
	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(xdr_seek(&xc, args_pos));
	assert_false(chk_call_walk(&xc, CHK_PROG_NFS, 3, 2, 0, &cw, &err));
	assert_int_equal(err, CHK_WALK_XDR);
	assert_string_equal(chk_walk_err_str(err), "NFS arguments or results do not decode");
}

/* 14. READ_PLUS is not DDP-eligible; its bound grows with its count */
static void t14_read_plus(void **state)
{
	struct chk_call_walk cw;
	struct xdr_enc xe;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 2, 2);
	nfs_enc_fmt(&xe, "w o w shw", 22u, 8u, 68u, 0ull, 1048576u);
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	assert_int_equal(cw.cw_nreply, 0);
	assert_false(cw.cw_res_unbounded);
	assert_true(cw.cw_res_max >= 1048576 + 12 + CHK_READ_PLUS_SEGS * 20);
}

/* 15. v4 SYMLINK: CREATE NF4LNK linkdata is a call item; v3/v2 SYMLINK path too */
static void t15_symlink_items(void **state)
{
	struct chk_call_walk cw;
	struct xdr_enc xe;
	size_t pos;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 0, 2);
	nfs_enc_fmt(&xe, "w o w w", 22u, 8u, 6u, 5u);
	pos = xe.xe_len + 4;
	nfs_enc_fmt(&xe, "o o a", 2001u, 4u, 0u, 0u, 0u);
	assert_true(walk(&xe, CHK_PROG_NFS, 4, 1, 0, &cw));
	assert_int_equal(cw.cw_ncall, 1);
	assert_int_equal(cw.cw_call[0].it_kind, CHK_DDP_SYMLINK_PATH);
	assert_int_equal(cw.cw_call[0].it_pos, pos);
	assert_int_equal(cw.cw_call[0].it_len, 2001);
	assert_int_equal(cw.cw_call[0].it_op, 1);
}

/* 16. With the real RPC header decoder: walk from rc_args_pos */
static void t16_with_rpc_call_decode(void **state)
{
	struct rpc_call_hdr call;
	struct chk_call_walk cw;
	struct xdr_enc xe;
	struct xdr_cur xc;
	struct iovec one;
	enum chk_walk_err err;
	size_t data;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 3, 7);
	nfs_enc_fmt(&xe, "o h w w", 32u, 0ull, 9u, 2u);
	data = xe.xe_len + 4;
	nfs_enc_fmt(&xe, "o", 9u);
	xdr_cur_init_buf(&xc, &one, msg, xe.xe_len);
	assert_true(rpc_call_decode(&xc, &call));
	assert_int_equal(call.rc_args_pos, args_pos);
	assert_int_equal(xdr_pos(&xc), args_pos);
	assert_true(chk_call_walk(&xc, call.rc_prog, call.rc_vers, call.rc_proc,
				  call.rc_gss_service, &cw, &err));
	assert_int_equal(cw.cw_ncall, 1);
	assert_int_equal(cw.cw_call[0].it_pos - call.rc_xid_pos, data);
	assert_int_equal(cw.cw_args_end, xe.xe_len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_table),
		cmocka_unit_test(t02_other_programs),
		cmocka_unit_test(t03_gss),
		cmocka_unit_test(t04_many_reads_writes),
		cmocka_unit_test(t05_three_chunks),
		cmocka_unit_test(t06_fewer_chunks),
		cmocka_unit_test(t07_error_mid_compound),
		cmocka_unit_test(t08_unknown_op),
		cmocka_unit_test(t09_unknown_op_reply),
		cmocka_unit_test(t10_minor_versions),
		cmocka_unit_test(t11_getattr_bounds),
		cmocka_unit_test(t12_too_many_items),
		cmocka_unit_test(t13_garbage),
		cmocka_unit_test(t14_read_plus),
		cmocka_unit_test(t15_symlink_items),
		cmocka_unit_test(t16_with_rpc_call_decode),
	};
	return cmocka_run_group_tests_name("nfs_compound", tests, NULL, NULL);
}
