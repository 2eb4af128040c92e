// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the NFS reply walker (chk_reply_walk in
 * chunking/nfs_walk.c).
 *
 * Input: byte 0 picks the version (2, 3, 4 or a non-NFS reply), byte 1 the
 * procedure, byte 2 the number of write chunks (0..4), then 2 bytes per
 * chunk giving the bytes the server wrote, then one byte for a segment
 * split; the rest is the inline reply stream with the results at 0.
 * Invariants when the walk succeeds:
 *  - the pieces add up to rw_len, which is the inline length plus every
 *    used chunk's bytes and their pad;
 *  - inline pieces are in order, inside the stream, and cover it exactly;
 *  - each chunk piece is exactly its chunk's bytes, a pad piece follows
 *    the chunk with the right pad;
 *  - assembling into a buffer never overruns it;
 *  - one segment or two give the same result.
 */
#include <stdint.h>
#include <string.h>

#include "chunking.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t chunk_data[65536 + 4];
static uint8_t out[4 * 65540 + 65536];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t vers_of[4] = { 2, 3, 4, 0 };
	struct chk_reply_walk rw, rw2;
	struct xdr_cur xc;
	struct iovec one, two[2];
	enum chk_walk_err err, err2;
	uint32_t wl[4], vers, proc, prog;
	unsigned nw, i;
	size_t len, split, inl_next = 0, inl_total = 0, total = 0, o = 0;
	bool ok, ok2;

	if (size < 4)
		return 0;
	vers = vers_of[data[0] & 3];
	prog = vers ? CHK_PROG_NFS : 0;
	proc = vers == 4 ? 1 : data[1] % 24;
	nw = data[2] % 5;
	if (size < 4 + 2 * (size_t)nw)
		return 0;
	for (i = 0; i < nw; i++)
		wl[i] = (uint32_t)data[3 + 2 * i] << 8 | data[4 + 2 * i];
	split = data[3 + 2 * nw];
	data += 4 + 2 * nw;
	len = size - 4 - 2 * nw;

	xdr_cur_init_buf(&xc, &one, data, len);
	ok = chk_reply_walk(&xc, 0, prog, vers, proc, wl, nw, &rw, &err);
	if (ok != (err == CHK_WALK_OK))
		__builtin_trap();
	if (split > len)
		split = len;
	two[0] = (struct iovec){ (void *)data, split };
	two[1] = (struct iovec){ (void *)(data + split), len - split };
	xdr_cur_init(&xc, two, 2);
	ok2 = chk_reply_walk(&xc, 0, prog, vers, proc, wl, nw, &rw2, &err2);
	if (ok != ok2 || err != err2 || (ok && (rw.rw_npieces != rw2.rw_npieces ||
						rw.rw_len != rw2.rw_len)))
		__builtin_trap();
	if (!ok)
		return 0;
	for (i = 0; i < rw.rw_npieces; i++) {
		const struct chk_piece *pc = &rw.rw_pieces[i];

		if (pc->pc_len == 0)
			__builtin_trap();
		switch (pc->pc_kind) {
		case CHK_PIECE_INLINE:
			if (pc->pc_off != inl_next || pc->pc_off + pc->pc_len > len)
				__builtin_trap();
			inl_next = pc->pc_off + pc->pc_len;
			inl_total += pc->pc_len;
			memcpy(out + o, data + pc->pc_off, pc->pc_len);
			break;
		case CHK_PIECE_CHUNK:
			if (pc->pc_chunk >= nw || pc->pc_off != 0 || pc->pc_len != wl[pc->pc_chunk])
				__builtin_trap();
			memcpy(out + o, chunk_data, pc->pc_len);
			break;
		case CHK_PIECE_PAD:
			if (i == 0 || rw.rw_pieces[i - 1].pc_kind != CHK_PIECE_CHUNK ||
			    pc->pc_len != xdr_pad(rw.rw_pieces[i - 1].pc_len))
				__builtin_trap();
			memcpy(out + o, chk_zero_pad, pc->pc_len);
			break;
		default:
			__builtin_trap();
		}
		o += pc->pc_len;
		total += pc->pc_len;
	}
	if (total != rw.rw_len || inl_total != len || inl_next != len)
		__builtin_trap();
	if (rw.rw_nchunks_used > nw)
		__builtin_trap();
	return 0;
}
