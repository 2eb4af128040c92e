// SPDX-License-Identifier: MIT
/*
 * Unit tests for reply reconstruction (chk_reply_walk in
 * chunking/nfs_walk.c): a READ or READLINK reply whose data came in a
 * write chunk, spliced back from its pieces, is byte for byte the reply
 * the server would have sent over TCP - for NFSv2, v3, v4.0, v4.1 and
 * v4.2, every data size from 0 to 4099 (all four pad lengths) and 1 MiB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"
#include "nfs_enc.h"

#define XID 0x5ca1ab1eu
#define MIB (1024u * 1024u)
#define BUFSZ (MIB + 4096)

static uint8_t full[BUFSZ], red[BUFSZ], out[BUFSZ];

/* Build a READ (or READLINK) reply of n data bytes for vers/minor; returns
 * its length, *res = results position, *data = data position. */
static size_t read_reply(uint32_t vers, uint32_t minor, bool readlink, uint32_t n,
			 size_t *res, size_t *data)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, full, sizeof(full));
	nfs_enc_reply_hdr(&xe, XID);
	*res = xe.xe_len;
	if (vers == 2) {
		xdr_put_u32(&xe, 0);
		if (!readlink)
			nfs_enc_fmt(&xe, "z", 68u);
	} else if (vers == 3) {
		nfs_enc_fmt(&xe, "w w z", 0u, 1u, 84u);
		if (!readlink)
			nfs_enc_fmt(&xe, "w w", n, n < 4096u);
	} else {
		nfs_enc_compound_res(&xe, 0, minor ? 4 : 3);
		if (minor)
			nfs_enc_fmt(&xe, "ww i w w w w w", 53u, 0u, 1u, 0u, 63u, 63u, 0u);
		nfs_enc_fmt(&xe, "ww ww", 22u, 0u, readlink ? 27u : 25u, 0u);
		if (!readlink)
			xdr_put_u32(&xe, 1);	/* eof */
	}
	*data = xe.xe_len + 4;
	nfs_enc_fmt(&xe, "o", n);
	/* v4: a GETATTR after the READ, inline after the chunk's data */
	if (vers == 4)
		nfs_enc_fmt(&xe, "ww a", 9u, 0u, 0x10u, 0u, 12u);
	assert_int_equal(xe.xe_err, XDR_OK);
	return xe.xe_len;
}

static void splice_one(uint32_t vers, uint32_t minor, bool readlink, uint32_t n)
{
	struct xdr_span cut;
	struct xdr_cur xc;
	struct iovec one;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	size_t res, data, len, rlen;
	uint32_t proc = vers == 4 ? 1 : readlink ? 5 : 6;
	uint32_t wl[1] = { n };
	const uint8_t *chunks[1];

	len = read_reply(vers, minor, readlink, n, &res, &data);
	cut.xs_pos = data;
	cut.xs_len = n;
	rlen = nfs_enc_cut(full, len, &cut, 1, red);
	assert_int_equal(rlen, len - xdr_round4(n));
	chunks[0] = full + data;
	xdr_cur_init_buf(&xc, &one, red, rlen);
	assert_true(xdr_seek(&xc, res));
	assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, vers, proc, wl, 1, &rw, &err));
	assert_int_equal(rw.rw_nitems, 1);
	assert_int_equal(rw.rw_items[0].it_pos, data);
	assert_int_equal(rw.rw_items[0].it_len, n);
	assert_int_equal(rw.rw_nchunks_used, n ? 1 : 0);
	assert_int_equal(rw.rw_len, len);
	assert_int_equal(nfs_enc_assemble(&rw, red, chunks, out, sizeof(out)), len);
	assert_memory_equal(out, full, len);
}

static void splice_sizes(uint32_t vers, uint32_t minor, bool readlink, uint32_t max, bool mib)
{
	uint32_t n;

	for (n = 0; n <= max; n++)
		splice_one(vers, minor, readlink, n);
	if (mib)
		splice_one(vers, minor, readlink, MIB);
}

/* 1. NFSv2 READ 0..4099 and 8192 (NFS_MAXDATA) */
static void t01_v2_read(void **state)
{
	(void)state;
	splice_sizes(2, 0, false, 4099, false);
	splice_one(2, 0, false, 8192);
}

/* 2. NFSv3 READ 0..4099 and 1 MiB */
static void t02_v3_read(void **state)
{
	(void)state;
	splice_sizes(3, 0, false, 4099, true);
}

/* 3-5. NFSv4.0 (PUTFH READ), v4.1 and v4.2 (SEQUENCE PUTFH READ) */
static void t03_v40_read(void **state) { (void)state; splice_sizes(4, 0, false, 4099, true); }
static void t04_v41_read(void **state) { (void)state; splice_sizes(4, 1, false, 4099, true); }
static void t05_v42_read(void **state) { (void)state; splice_sizes(4, 2, false, 4099, true); }

/* 6. READLINK, v2 (path<1024>), v3 and v4 (up to CHK_NFS_MAXPATHLEN) */
static void t06_readlink(void **state)
{
	(void)state;
	splice_sizes(2, 0, true, 1024, false);
	splice_sizes(3, 0, true, CHK_NFS_MAXPATHLEN, false);
	splice_sizes(4, 1, true, CHK_NFS_MAXPATHLEN, false);
}

/* 7. Without a write chunk the data is inline: one piece, the whole reply */
static void t07_inline(void **state)
{
	struct xdr_cur xc;
	struct iovec one;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	size_t res, data, len;
	uint32_t n;

	(void)state;
	for (n = 0; n < 64; n++) {
		len = read_reply(3, 0, false, n, &res, &data);
		xdr_cur_init_buf(&xc, &one, full, len);
		assert_true(xdr_seek(&xc, res));
		assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 3, 6, NULL, 0, &rw, &err));
		assert_int_equal(rw.rw_npieces, 1);
		assert_int_equal(rw.rw_pieces[0].pc_off, 0);
		assert_int_equal(rw.rw_pieces[0].pc_len, len);
		assert_int_equal(rw.rw_nitems, 1);
		assert_int_equal(rw.rw_items[0].it_pos, data);
	}
}

/* 8. Pieces of a 4099-byte READ: header inline, chunk, 1 pad byte, rest */
static void t08_piece_layout(void **state)
{
	struct xdr_span cut;
	struct xdr_cur xc;
	struct iovec one;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	size_t res, data, len, rlen;
	uint32_t wl[1] = { 4099 };

	(void)state;
	len = read_reply(3, 0, false, 4099, &res, &data);
	cut.xs_pos = data;
	cut.xs_len = 4099;
	rlen = nfs_enc_cut(full, len, &cut, 1, red);
	xdr_cur_init_buf(&xc, &one, red, rlen);
	assert_true(xdr_seek(&xc, res));
	assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 3, 6, wl, 1, &rw, &err));
	assert_int_equal(rw.rw_npieces, 3);	/* nothing inline after the data */
	assert_int_equal(rw.rw_pieces[0].pc_kind, CHK_PIECE_INLINE);
	assert_int_equal(rw.rw_pieces[0].pc_len, data);
	assert_int_equal(rw.rw_pieces[1].pc_kind, CHK_PIECE_CHUNK);
	assert_int_equal(rw.rw_pieces[1].pc_chunk, 0);
	assert_int_equal(rw.rw_pieces[1].pc_len, 4099);
	assert_int_equal(rw.rw_pieces[2].pc_kind, CHK_PIECE_PAD);
	assert_int_equal(rw.rw_pieces[2].pc_len, 1);
}

/* 9. The inline part split over several receive segments at odd places */
static void t09_segmented_inline(void **state)
{
	struct xdr_span cut;
	struct xdr_cur xc;
	struct iovec iov[4];
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	size_t res, data, len, rlen;
	uint32_t wl[1] = { 77 };
	const uint8_t *chunks[1];

	(void)state;
	len = read_reply(4, 1, false, 77, &res, &data);
	cut.xs_pos = data;
	cut.xs_len = 77;
	rlen = nfs_enc_cut(full, len, &cut, 1, red);
	iov[0] = (struct iovec){ red, 5 };
	iov[1] = (struct iovec){ red + 5, 37 };
	iov[2] = (struct iovec){ red + 42, 1 };
	iov[3] = (struct iovec){ red + 43, rlen - 43 };
	xdr_cur_init(&xc, iov, 4);
	assert_true(xdr_seek(&xc, res));
	chunks[0] = full + data;
	assert_true(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 4, 1, wl, 1, &rw, &err));
	assert_int_equal(nfs_enc_assemble(&rw, red, chunks, out, sizeof(out)), len);
	assert_memory_equal(out, full, len);
}

/* 10. Length word vs write list: larger, smaller, zero all rejected */
static void t10_len_mismatch(void **state)
{
	static const uint32_t bad[] = { 101, 99, 0, 4 };
	struct xdr_span cut;
	struct xdr_cur xc;
	struct iovec one;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	size_t res, data, len, rlen;
	unsigned i;

	(void)state;
	len = read_reply(3, 0, false, 100, &res, &data);
	cut.xs_pos = data;
	cut.xs_len = 100;
	rlen = nfs_enc_cut(full, len, &cut, 1, red);
	for (i = 0; i < 4; i++) {
		xdr_cur_init_buf(&xc, &one, red, rlen);
		assert_true(xdr_seek(&xc, res));
		assert_false(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 3, 6, &bad[i], 1, &rw, &err));
		assert_int_equal(err, CHK_WALK_LEN_MISMATCH);
		assert_string_equal(chk_walk_err_str(err),
				    "length word differs from bytes in write chunk");
	}
}

/* 11. The RPC message after a transport header: pieces start at msg_pos */
static void t11_msg_pos(void **state)
{
	static uint8_t shifted[8192];
	struct xdr_span cut;
	struct xdr_cur xc;
	struct iovec one;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	size_t res, data, len, rlen;
	uint32_t wl[1] = { 1001 };
	const uint8_t *chunks[1];

	(void)state;
	len = read_reply(4, 2, false, 1001, &res, &data);
	cut.xs_pos = data;
	cut.xs_len = 1001;
	rlen = nfs_enc_cut(full, len, &cut, 1, red);
	memset(shifted, 0xee, 36);		/* a 36-byte RDMA_MSG header */
	memcpy(shifted + 36, red, rlen);
	xdr_cur_init_buf(&xc, &one, shifted, rlen + 36);
	assert_true(xdr_seek(&xc, 36 + res));
	chunks[0] = full + data;
	assert_true(chk_reply_walk(&xc, 36, CHK_PROG_NFS, 4, 1, wl, 1, &rw, &err));
	assert_int_equal(rw.rw_pieces[0].pc_off, 36);
	assert_int_equal(rw.rw_len, len);
	assert_int_equal(nfs_enc_assemble(&rw, shifted, chunks, out, sizeof(out)), len);
	assert_memory_equal(out, full, len);
}

/* 12. No plain results (prog 0): all inline, chunks must be unused */
static void t12_no_results(void **state)
{
	static const uint32_t zero[2] = { 0, 0 }, some[2] = { 0, 8 };
	struct xdr_cur xc;
	struct iovec one;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	size_t res, data, len;

	(void)state;
	len = read_reply(3, 0, false, 10, &res, &data);
	xdr_cur_init_buf(&xc, &one, full, len);
	assert_true(xdr_seek(&xc, res));
	assert_true(chk_reply_walk(&xc, 0, 0, 0, 0, zero, 2, &rw, &err));
	assert_int_equal(rw.rw_len, len);
	xdr_cur_init_buf(&xc, &one, full, len);
	assert_true(xdr_seek(&xc, res));
	assert_false(chk_reply_walk(&xc, 0, 0, 0, 0, some, 2, &rw, &err));
	assert_int_equal(err, CHK_WALK_CHUNK_UNUSED);
	/* more chunks than the walker can track */
	xdr_cur_init_buf(&xc, &one, full, len);
	assert_false(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 3, 6, zero, CHK_WALK_MAX_ITEMS + 1,
				    &rw, &err));
	assert_int_equal(err, CHK_WALK_TOO_MANY);
}

/* 13. A READ reply truncated inside its results does not decode */
static void t13_truncated(void **state)
{
	struct xdr_cur xc;
	struct iovec one;
	struct chk_reply_walk rw;
	enum chk_walk_err err;
	size_t res, data, len;
	uint32_t wl[1] = { 0 };

	(void)state;
	len = read_reply(3, 0, false, 0, &res, &data);
	xdr_cur_init_buf(&xc, &one, full, data - 8);
	assert_true(xdr_seek(&xc, res));
	assert_false(chk_reply_walk(&xc, 0, CHK_PROG_NFS, 3, 6, wl, 1, &rw, &err));
	assert_int_equal(err, CHK_WALK_XDR);
	(void)len;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_v2_read),
		cmocka_unit_test(t02_v3_read),
		cmocka_unit_test(t03_v40_read),
		cmocka_unit_test(t04_v41_read),
		cmocka_unit_test(t05_v42_read),
		cmocka_unit_test(t06_readlink),
		cmocka_unit_test(t07_inline),
		cmocka_unit_test(t08_piece_layout),
		cmocka_unit_test(t09_segmented_inline),
		cmocka_unit_test(t10_len_mismatch),
		cmocka_unit_test(t11_msg_pos),
		cmocka_unit_test(t12_no_results),
		cmocka_unit_test(t13_truncated),
	};
	return cmocka_run_group_tests_name("nfs_splice", tests, NULL, NULL);
}
