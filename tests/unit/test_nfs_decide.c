// SPDX-License-Identifier: MIT
/*
 * Unit tests for the chunking decision (chunking/nfs_decide.c): transport
 * header sizes (RFC 8166 section 4.2, cross-checked with the header
 * encoder), and the choice of inline / read chunks / RDMA_NOMSG / write
 * chunks / reply chunk for calls built with tests/unit/nfs_enc.c, under
 * the Linux client's rules (see the comment at the top of nfs_decide.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"
#include "nfs_enc.h"

#define XID 0xdec1de00u
#define MIB (1024u * 1024u)

static uint8_t msg[2 * MIB];
static size_t args_pos;
static struct chk_call_walk cw;
static struct chk_rdma_params prm;
static struct chk_decision dc;

static void call_start(struct xdr_enc *xe, uint32_t prog, uint32_t vers, uint32_t proc)
{
	xdr_enc_init(xe, msg, sizeof(msg));
	nfs_enc_call_hdr(xe, XID, prog, vers, proc);
	args_pos = xe->xe_len;
}

/* Walk and decide; the message is at stream position 0. */
static bool run(const struct xdr_enc *xe, uint32_t prog, uint32_t vers, uint32_t proc,
		uint32_t gss)
{
	struct xdr_cur xc;
	struct iovec one;
	enum chk_walk_err err;

	xdr_cur_init_buf(&xc, &one, msg, xe->xe_len);
	assert_true(xdr_seek(&xc, args_pos));
	chk_call_walk(&xc, prog, vers, proc, gss, &cw, &err);
	return chk_decide(&cw, 0, xe->xe_len, &prm, &dc);
}

static int setup(void **state)
{
	(void)state;
	chk_rdma_params_default(&prm);
	return 0;
}

/* 1. Header sizes: RFC 8166 4.2 layout, equal to what the header encoder
 * produces; Linux's budgets 52 + 24n (call) and 36 + 16n (reply). */
static void t01_hdr_len(void **state)
{
	static struct rpcrdma_hdr h;
	static uint8_t buf[16384];
	static const unsigned shapes[][5] = {
		{ 0, 0, 0, 0, 0 }, { 1, 0, 0, 0, 0 }, { 16, 0, 0, 0, 0 }, { 0, 1, 1, 0, 0 },
		{ 0, 1, 16, 0, 0 }, { 0, 2, 3, 0, 0 }, { 0, 0, 0, 1, 1 }, { 0, 0, 0, 1, 16 },
		{ 2, 1, 8, 1, 8 }, { 8, 4, 8, 1, 8 },
	};
	struct xdr_enc xe;
	unsigned i, j;

	(void)state;
	assert_int_equal(chk_rdma_hdr_len(0, 0, 0, false, 0), 28);
	for (i = 1; i <= 16; i++) {
		assert_int_equal(chk_rdma_hdr_len(i, 0, 0, false, 0), 28 + 24 * i);
		assert_true(chk_rdma_hdr_len(i, 0, 0, false, 0) <= 52 + 24 * i);
		assert_int_equal(chk_rdma_hdr_len(0, 1, i, false, 0), 36 + 16 * i);
	}
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const unsigned *s = shapes[i];
		unsigned seg = 0;

		memset(&h, 0, sizeof(h));
		h.rh_xid = 1;
		h.rh_vers = 1;
		h.rh_credit = 64;
		h.rh_proc = RPCRDMA_MSG;
		h.rh_nreads = s[0];
		for (j = 0; j < s[0]; j++)
			h.rh_reads[j].rd_position = 0;
		h.rh_nwrites = s[1];
		for (j = 0; j < s[1]; j++) {
			h.rh_writes[j].ck_first = (uint16_t)seg;
			h.rh_writes[j].ck_nsegs = (uint16_t)s[2];
			seg += s[2];
		}
		h.rh_has_reply = s[3];
		h.rh_reply.ck_first = (uint16_t)seg;
		h.rh_reply.ck_nsegs = (uint16_t)s[4];
		seg += s[4];
		h.rh_nsegs = seg;
		xdr_enc_init(&xe, buf, sizeof(buf));
		assert_true(rpcrdma_hdr_encode(&xe, &h));
		assert_int_equal(xe.xe_len, chk_rdma_hdr_len(s[0], s[1], s[2], s[3], s[4]));
	}
}

/* 2. NULL and GETATTR: everything inline */
static void t02_small_inline(void **state)
{
	struct xdr_enc xe;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 3, 0);
	assert_true(run(&xe, CHK_PROG_NFS, 3, 0, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_MSG);
	assert_int_equal(dc.dc_nreads + dc.dc_nwrites, 0);
	assert_false(dc.dc_reply_chunk);
	assert_int_equal(dc.dc_call_inline, xe.xe_len);
	assert_int_equal(dc.dc_call_hdr_max, 28);
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 1, 3);
	nfs_enc_fmt(&xe, "w i wwww  w o  w b", 53u, 1u, 0u, 0u, 0u, 22u, 40u, 9u, 2u,
		    0x0010011au, 0x00b0a23au);
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_MSG);
	assert_false(dc.dc_reply_chunk);
	assert_int_equal(dc.dc_nwrites, 0);
}

/* 3. READ: small stays inline, a reply that would not fit gets a write
 * chunk for the data (Linux: rpcrdma_results_inline / writech). */
static void t03_read(void **state)
{
	static const struct { uint32_t count; unsigned nw; } cases[] = {
		{ 0, 0 }, { 100, 0 }, { 3000, 0 }, { 3600, 1 }, { 4096, 1 }, { MIB, 1 },
	};
	struct xdr_enc xe;
	unsigned i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		call_start(&xe, CHK_PROG_NFS, 3, 6);
		nfs_enc_fmt(&xe, "o h w", 32u, 0ull, cases[i].count);
		assert_true(run(&xe, CHK_PROG_NFS, 3, 6, 0));
		assert_int_equal(dc.dc_proc, RPCRDMA_MSG);
		assert_int_equal(dc.dc_nwrites, cases[i].nw);
		assert_false(dc.dc_reply_chunk);
		if (cases[i].nw) {
			assert_int_equal(dc.dc_write_len[0], cases[i].count);
			assert_int_equal(dc.dc_call_hdr_max, chk_rdma_hdr_len(0, 1, prm.rdp_max_segs,
									      false, 0));
		} else {
			assert_true(dc.dc_reply_max + 28 <= prm.rdp_recv_threshold);
		}
	}
}

/* 4. WRITE: inline when it fits; else a read chunk at the data's position
 * (length word inline, pad in neither place); below ddp_min: NOMSG. */
static void t04_write(void **state)
{
	struct xdr_enc xe;
	size_t data;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 3, 7);
	nfs_enc_fmt(&xe, "o h w w o", 32u, 0ull, 1000u, 2u, 1000u);
	assert_true(run(&xe, CHK_PROG_NFS, 3, 7, 0));
	assert_int_equal(dc.dc_nreads, 0);
	assert_int_equal(dc.dc_call_inline, xe.xe_len);

	call_start(&xe, CHK_PROG_NFS, 3, 7);
	nfs_enc_fmt(&xe, "o h w w", 32u, 0ull, MIB + 3, 2u);
	data = xe.xe_len + 4;
	nfs_enc_fmt(&xe, "o", MIB + 3);
	assert_true(run(&xe, CHK_PROG_NFS, 3, 7, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_MSG);
	assert_int_equal(dc.dc_nreads, 1);
	assert_int_equal(dc.dc_reads[0].rdc_pos, data);
	assert_int_equal(dc.dc_reads[0].rdc_pos % 4, 0);
	assert_int_equal(dc.dc_reads[0].rdc_len, MIB + 3);
	assert_int_equal(dc.dc_reads[0].rdc_item, 0);
	assert_int_equal(dc.dc_call_inline, xe.xe_len - (MIB + 4));
	assert_int_equal(dc.dc_call_hdr_max, chk_rdma_hdr_len(prm.rdp_max_segs, 0, 0, false, 0));

	/* the inline part: header and args up to the data, then nothing */
	{
		struct xdr_span sp[4];

		assert_int_equal(chk_decision_inline_spans(&dc, 0, xe.xe_len, sp, 4), 1);
		assert_int_equal(sp[0].xs_pos, 0);
		assert_int_equal(sp[0].xs_len, data);
	}

	/* the same call with the message at stream position 100 */
	{
		struct xdr_cur xc;
		struct iovec one;
		enum chk_walk_err err;

		memmove(msg + 100, msg, xe.xe_len);
		xdr_cur_init_buf(&xc, &one, msg, xe.xe_len + 100);
		assert_true(xdr_seek(&xc, args_pos + 100));
		assert_true(chk_call_walk(&xc, CHK_PROG_NFS, 3, 7, 0, &cw, &err));
		assert_true(chk_decide(&cw, 100, xe.xe_len, &prm, &dc));
		assert_int_equal(dc.dc_reads[0].rdc_pos, data);
	}

	/* 900-byte WRITE under a 1024-byte threshold: below ddp_min -> NOMSG */
	prm.rdp_send_threshold = 1024;
	call_start(&xe, CHK_PROG_NFS, 3, 7);
	nfs_enc_fmt(&xe, "o h w w o", 32u, 0ull, 900u, 2u, 900u);
	assert_true(run(&xe, CHK_PROG_NFS, 3, 7, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_NOMSG);
	assert_int_equal(dc.dc_nreads, 1);
	assert_int_equal(dc.dc_reads[0].rdc_pos, 0);
	assert_int_equal(dc.dc_reads[0].rdc_len, xe.xe_len);
	assert_int_equal(dc.dc_reads[0].rdc_item, -1);
	assert_int_equal(dc.dc_call_inline, 0);
	assert_int_equal(chk_decision_inline_spans(&dc, 0, xe.xe_len, NULL, 0), 0);
	/* ... with ddp_min 512 it is a read chunk */
	prm.rdp_ddp_min = 512;
	assert_true(run(&xe, CHK_PROG_NFS, 3, 7, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_MSG);
	assert_int_equal(dc.dc_nreads, 1);
	assert_int_not_equal(dc.dc_reads[0].rdc_pos, 0);
}

/* 5. Long call without eligible data (big SETATTR ACL): RDMA_NOMSG with a
 * position-zero read chunk; even the reduced call too big: NOMSG too. */
static void t05_long_calls(void **state)
{
	struct xdr_enc xe;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 0, 2);
	nfs_enc_fmt(&xe, "w o  w s a", 22u, 40u, 34u, 0x1000u, 0u, 9000u);
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_NOMSG);
	assert_int_equal(dc.dc_reads[0].rdc_len, xe.xe_len);

	/* WRITE 8 KiB + big SETATTR: moving the data is not enough */
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 0, 3);
	nfs_enc_fmt(&xe, "w o  w shw o  w s a", 22u, 40u, 38u, 0ull, 2u, 8192u,
		    34u, 0x1000u, 0u, 6000u);
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_NOMSG);
	assert_int_equal(dc.dc_nreads, 1);
	assert_int_equal(dc.dc_reads[0].rdc_pos, 0);
}

/* 6. Unbounded replies (GETATTR ACL, SECINFO, EXCHANGE_ID, unknown program):
 * a reply chunk of rdp_reply_cap; and Linux never offers write chunks then. */
static void t06_unbounded(void **state)
{
	struct xdr_enc xe;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 1, 3);
	nfs_enc_fmt(&xe, "w o  w shw  w b", 22u, 40u, 25u, 0ull, MIB, 9u, 1u, 1u << 12);
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_true(dc.dc_reply_chunk);
	assert_true(dc.dc_reply_unbounded);
	assert_int_equal(dc.dc_reply_len, prm.rdp_reply_cap);
	assert_int_equal(dc.dc_nwrites, 0);
	assert_int_equal(dc.dc_call_hdr_max,
			 chk_rdma_hdr_len(0, 0, 0, true, prm.rdp_max_segs));

	call_start(&xe, CHK_PROG_NFSACL, 3, 1);
	nfs_enc_fmt(&xe, "o w", 32u, 0xfu);
	assert_true(run(&xe, CHK_PROG_NFSACL, 3, 1, 0));
	assert_true(dc.dc_reply_chunk);
	assert_int_equal(dc.dc_reply_len, prm.rdp_reply_cap);
}

/* 7. Bounded but big replies without eligible data: reply chunk sized
 * from the bound (READDIR count, READ_PLUS count). */
static void t07_reply_chunk_bounded(void **state)
{
	struct xdr_enc xe;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 3, 16);
	nfs_enc_fmt(&xe, "o h v w", 32u, 0ull, 32768u);
	assert_true(run(&xe, CHK_PROG_NFS, 3, 16, 0));
	assert_true(dc.dc_reply_chunk);
	assert_false(dc.dc_reply_unbounded);
	assert_true(dc.dc_reply_len >= 32768);
	assert_int_equal(dc.dc_reply_len, dc.dc_reply_max);

	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 2, 2);
	nfs_enc_fmt(&xe, "w o w shw", 22u, 40u, 68u, 0ull, 262144u);
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_true(dc.dc_reply_chunk);
	assert_int_equal(dc.dc_nwrites, 0);
	assert_true(dc.dc_reply_len >= 262144);

	/* a bound above the cap is clamped: the server answers ERR_CHUNK or an
	 * NFS error then, it does not drop the connection */
	call_start(&xe, CHK_PROG_NFS, 3, 16);
	nfs_enc_fmt(&xe, "o h v w", 32u, 0ull, 0xffffffffu);
	assert_true(run(&xe, CHK_PROG_NFS, 3, 16, 0));
	assert_int_equal(dc.dc_reply_len, prm.rdp_reply_cap);
}

/* 8. Write chunk only when the rest of the reply fits; otherwise the
 * reply chunk alone (Linux rpcrdma_nonpayload_inline). */
static void t08_write_vs_reply_chunk(void **state)
{
	struct xdr_enc xe;

	(void)state;
	/* READ 1 MiB + READDIR 8 KiB: the non-payload does not fit inline */
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 1, 4);
	nfs_enc_fmt(&xe, "w o  w shw  w o  w h v w w b", 22u, 40u, 25u, 0ull, MIB,
		    22u, 40u, 26u, 0ull, 1024u, 8192u, 1u, 0x10u);
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_nwrites, 0);
	assert_true(dc.dc_reply_chunk);
	assert_true(dc.dc_reply_max >= MIB + 8192);
	assert_int_equal(dc.dc_reply_len, prm.rdp_reply_cap);	/* clamped */
}

/* 9. Several write chunks (rdp_max_write_chunks 2): a prefix of the
 * eligible results, up to the last big one. */
static void t09_multi_write_chunks(void **state)
{
	struct xdr_enc xe;

	(void)state;
	prm.rdp_max_write_chunks = 2;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 1, 4);
	nfs_enc_fmt(&xe, "w o  w shw  w  w shw", 22u, 40u, 25u, 0ull, 10u, 27u, 25u, 0ull, MIB);
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	/* READ(10) READLINK(4096) READ(1M): chunks for READ(10) and READLINK;
	 * the third is past the limit and stays inline - so no fit: reply chunk */
	assert_int_equal(dc.dc_nwrites, 0);
	assert_true(dc.dc_reply_chunk);

	/* NFSv4 READLINK never gets a Write chunk (t14), so the prefix ends
	 * before it: READ(10) alone is below ddp_min, the reply chunk it is */
	prm.rdp_max_write_chunks = 3;
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_nwrites, 0);
	assert_true(dc.dc_reply_chunk);

	/* READ(1M) READ(1M): two Write chunks */
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 1, 3);
	nfs_enc_fmt(&xe, "w o  w shw  w shw", 22u, 40u, 25u, 0ull, MIB, 25u, 0ull, MIB);
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_nwrites, 2);
	assert_int_equal(dc.dc_write_len[0], MIB);
	assert_int_equal(dc.dc_write_len[1], MIB);
	assert_false(dc.dc_reply_chunk);

	/* one big READ first, small after: one chunk is enough */
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 1, 3);
	nfs_enc_fmt(&xe, "w o  w shw  w shw", 22u, 40u, 25u, 0ull, MIB, 25u, 0ull, 100u);
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_nwrites, 1);
}

/* 10. Several read chunks: the largest items, in position order */
static void t10_multi_read_chunks(void **state)
{
	struct xdr_enc xe;
	size_t p[3];

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 4, 1);
	nfs_enc_compound_args(&xe, 1, 4);
	nfs_enc_fmt(&xe, "w o  w shw", 22u, 40u, 38u, 0ull, 2u);
	p[0] = xe.xe_len + 4;
	nfs_enc_fmt(&xe, "o  w shw", 5000u, 38u, 0ull, 2u);
	p[1] = xe.xe_len + 4;
	nfs_enc_fmt(&xe, "o  w shw", 9000u, 38u, 0ull, 2u);
	p[2] = xe.xe_len + 4;
	nfs_enc_fmt(&xe, "o", 7000u);
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_NOMSG);	/* one chunk leaves 12 KiB inline */
	prm.rdp_max_read_chunks = 1;
	prm.rdp_send_threshold = 16384;
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_nreads, 1);
	assert_int_equal(dc.dc_reads[0].rdc_pos, p[1]);	/* the largest */
	prm.rdp_max_read_chunks = 3;
	prm.rdp_send_threshold = 4096;
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_MSG);
	assert_int_equal(dc.dc_nreads, 3);
	assert_int_equal(dc.dc_reads[0].rdc_pos, p[0]);
	assert_int_equal(dc.dc_reads[1].rdc_pos, p[1]);
	assert_int_equal(dc.dc_reads[2].rdc_pos, p[2]);
	{
		struct xdr_span sp[4];
		size_t sum = 0;
		unsigned k, ns = chk_decision_inline_spans(&dc, 0, xe.xe_len, sp, 4);

		assert_int_equal(ns, 3);	/* nothing after the last WRITE's data */
		assert_int_equal(sp[0].xs_len, p[0]);
		assert_int_equal(sp[1].xs_pos, p[0] + 5000);
		assert_int_equal(sp[1].xs_len, p[1] - (p[0] + 5000));
		for (k = 0; k < ns; k++)
			sum += sp[k].xs_len;
		assert_int_equal(sum, dc.dc_call_inline);
	}
	prm.rdp_max_read_chunks = 2;
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_NOMSG);	/* 5000 left inline > 4 KiB */
	prm.rdp_send_threshold = 8192;
	assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
	assert_int_equal(dc.dc_nreads, 2);
	assert_int_equal(dc.dc_reads[0].rdc_pos, p[1]);
	assert_int_equal(dc.dc_reads[1].rdc_pos, p[2]);
}

/* 11. GSS privacy: no DDP at all - NOMSG for a big WRITE, reply chunk */
static void t11_gss_privacy(void **state)
{
	struct xdr_enc xe;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 3, 7);
	nfs_enc_fmt(&xe, "o", 70000u);
	assert_true(run(&xe, CHK_PROG_NFS, 3, 7, RPC_GSS_SVC_PRIVACY));
	assert_int_equal(dc.dc_proc, RPCRDMA_NOMSG);
	assert_true(dc.dc_reply_chunk);
	assert_int_equal(dc.dc_nwrites, 0);
}

/* 12. Thresholds too small for any header: refused, not guessed */
static void t12_tiny_threshold(void **state)
{
	struct xdr_enc xe;

	(void)state;
	prm.rdp_send_threshold = 16;
	call_start(&xe, CHK_PROG_NFS, 3, 0);
	assert_false(run(&xe, CHK_PROG_NFS, 3, 0, 0));
}

/* 13. Small SYMLINK path stays inline; a 4000-byte one in a 1 KiB world
 * goes in a read chunk (RFC 8267 section 4 makes it eligible). */
static void t13_symlink(void **state)
{
	struct xdr_enc xe;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 3, 10);
	nfs_enc_fmt(&xe, "o o wwwwww o", 32u, 4u, 0u, 0u, 0u, 0u, 0u, 0u, 3000u);
	assert_true(run(&xe, CHK_PROG_NFS, 3, 10, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_MSG);
	assert_int_equal(dc.dc_nreads, 0);
	call_start(&xe, CHK_PROG_NFS, 3, 10);
	nfs_enc_fmt(&xe, "o o wwwwww o", 32u, 4u, 0u, 0u, 0u, 0u, 0u, 0u, 4000u);
	prm.rdp_send_threshold = 1024;
	assert_true(run(&xe, CHK_PROG_NFS, 3, 10, 0));
	assert_int_equal(dc.dc_proc, RPCRDMA_MSG);
	assert_int_equal(dc.dc_nreads, 1);
	assert_int_equal(dc.dc_reads[0].rdc_len, 4000);
}

/* 14. READLINK: NFSv3 gets a Write chunk for the path; NFSv4 never does
 * (Linux 6.1 nfsd writes the v4 result from its length word, shifted by 4
 * bytes, measured in the VM): a reply chunk carries the whole reply. */
static void t14_readlink_v4_no_write_chunk(void **state)
{
	struct xdr_enc xe;

	(void)state;
	call_start(&xe, CHK_PROG_NFS, 3, 5);
	nfs_enc_fmt(&xe, "o", 32u);
	assert_true(run(&xe, CHK_PROG_NFS, 3, 5, 0));
	assert_int_equal(dc.dc_nwrites, 1);
	assert_false(dc.dc_reply_chunk);

	for (uint32_t minor = 0; minor <= 2; minor++) {
		call_start(&xe, CHK_PROG_NFS, 4, 1);
		nfs_enc_compound_args(&xe, minor, 2);
		nfs_enc_fmt(&xe, "w o w", 22u, 40u, 27u);
		assert_true(run(&xe, CHK_PROG_NFS, 4, 1, 0));
		assert_int_equal(cw.cw_nreply, 1);
		assert_int_equal(dc.dc_nwrites, 0);
		assert_true(dc.dc_reply_chunk);
		assert_true(dc.dc_reply_len >= 4096);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(t01_hdr_len, setup),
		cmocka_unit_test_setup(t02_small_inline, setup),
		cmocka_unit_test_setup(t03_read, setup),
		cmocka_unit_test_setup(t04_write, setup),
		cmocka_unit_test_setup(t05_long_calls, setup),
		cmocka_unit_test_setup(t06_unbounded, setup),
		cmocka_unit_test_setup(t07_reply_chunk_bounded, setup),
		cmocka_unit_test_setup(t08_write_vs_reply_chunk, setup),
		cmocka_unit_test_setup(t09_multi_write_chunks, setup),
		cmocka_unit_test_setup(t10_multi_read_chunks, setup),
		cmocka_unit_test_setup(t11_gss_privacy, setup),
		cmocka_unit_test_setup(t12_tiny_threshold, setup),
		cmocka_unit_test_setup(t13_symlink, setup),
		cmocka_unit_test_setup(t14_readlink_v4_no_write_chunk, setup),
	};
	return cmocka_run_group_tests_name("nfs_decide", tests, NULL, NULL);
}
