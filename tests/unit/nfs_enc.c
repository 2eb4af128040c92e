// SPDX-License-Identifier: MIT
/*
 * nfs_enc.c - XDR test encoder for NFS calls and replies (tests only).
 *
 * This file contains the format-driven encoder the NFS walker tests, the
 * fuzz seed generator and the bench use to build RPC messages.  See
 * nfs_enc.h for the format letters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "chunking.h"
#include "nfs_enc.h"

uint8_t nfs_enc_byte(uint32_t seed, size_t i)
{
	return (uint8_t)(seed * 31u + i * 7u + (i >> 8) + 1u);
}

static bool put_pattern(struct xdr_enc *xe, uint32_t seed, size_t n)
{
	size_t i;

	if (xe->xe_err != XDR_OK)
		return false;
	if (xe->xe_cap - xe->xe_len < xdr_round4(n)) {
		xe->xe_err = XDR_ERR_NO_SPACE;
		return false;
	}
	for (i = 0; i < n; i++)
		xe->xe_buf[xe->xe_len + i] = nfs_enc_byte(seed, i);
	for (; i < xdr_round4(n); i++)
		xe->xe_buf[xe->xe_len + i] = 0;
	xe->xe_len += xdr_round4(n);
	return true;
}

bool nfs_enc_call_hdr(struct xdr_enc *xe, uint32_t xid, uint32_t prog, uint32_t vers,
		      uint32_t proc)
{
	static const struct rpc_auth_sys gw_root = {
		.as_namelen = 2, .as_machinename = "gw", .as_ngids = 1,	/* gids { 0 } */
	};

	return rpc_call_encode(xe, xid, prog, vers, proc, &gw_root);
}

bool nfs_enc_reply_hdr(struct xdr_enc *xe, uint32_t xid)
{
	xdr_put_u32(xe, xid);
	xdr_put_u32(xe, RPC_REPLY);
	xdr_put_u32(xe, RPC_MSG_ACCEPTED);
	xdr_put_u32(xe, RPC_AUTH_NONE);
	xdr_put_u32(xe, 0);
	return xdr_put_u32(xe, RPC_SUCCESS);
}

bool nfs_enc_fmt(struct xdr_enc *xe, const char *fmt, ...)
{
	va_list ap;
	unsigned n, k;

	va_start(ap, fmt);
	for (; *fmt; fmt++) {
		switch (*fmt) {
		case ' ':
			break;
		case 'w':
			xdr_put_u32(xe, va_arg(ap, unsigned));
			break;
		case 'h':
			xdr_put_u64(xe, va_arg(ap, unsigned long long));
			break;
		case 's':
			put_pattern(xe, 0x5e, 16);
			break;
		case 'v':
			put_pattern(xe, 0x7e, 8);
			break;
		case 'i':
			put_pattern(xe, 0x1d, 16);
			break;
		case 't':
			xdr_put_u64(xe, 1700000000ull);
			xdr_put_u32(xe, 999);
			break;
		case 'z':
			n = va_arg(ap, unsigned);
			for (k = 0; k < n / 4; k++)
				xdr_put_u32(xe, 0);
			break;
		case 'o':
			n = va_arg(ap, unsigned);
			xdr_put_u32(xe, n);
			put_pattern(xe, n, n);
			break;
		case 'b':
			n = va_arg(ap, unsigned);
			xdr_put_u32(xe, n);
			for (k = 0; k < n; k++)
				xdr_put_u32(xe, va_arg(ap, unsigned));
			break;
		case 'a':
			xdr_put_u32(xe, 2);
			xdr_put_u32(xe, va_arg(ap, unsigned));
			xdr_put_u32(xe, va_arg(ap, unsigned));
			n = va_arg(ap, unsigned);
			xdr_put_u32(xe, n);
			put_pattern(xe, 0xa7, n);
			break;
		default:
			xe->xe_err = XDR_ERR_BAD_ARG;
			break;
		}
	}
	va_end(ap);
	return xe->xe_err == XDR_OK;
}

bool nfs_enc_compound_args(struct xdr_enc *xe, uint32_t minor, uint32_t nops)
{
	xdr_put_opaque(xe, "t", 1);
	xdr_put_u32(xe, minor);
	return xdr_put_u32(xe, nops);
}

bool nfs_enc_compound_res(struct xdr_enc *xe, uint32_t status, uint32_t nops)
{
	xdr_put_u32(xe, status);
	xdr_put_opaque(xe, "t", 1);
	return xdr_put_u32(xe, nops);
}

size_t nfs_enc_cut(const uint8_t *msg, size_t len, const struct xdr_span *cuts, unsigned ncuts,
		   uint8_t *out)
{
	size_t from = 0, o = 0;
	unsigned i;

	for (i = 0; i < ncuts; i++) {
		memcpy(out + o, msg + from, cuts[i].xs_pos - from);
		o += cuts[i].xs_pos - from;
		from = cuts[i].xs_pos + xdr_round4(cuts[i].xs_len);
	}
	memcpy(out + o, msg + from, len - from);
	return o + len - from;
}

size_t nfs_enc_assemble(const struct chk_reply_walk *rw, const uint8_t *inl,
			const uint8_t *const *chunks, uint8_t *out, size_t cap)
{
	size_t o = 0;
	unsigned i;

	for (i = 0; i < rw->rw_npieces; i++) {
		const struct chk_piece *pc = &rw->rw_pieces[i];
		const uint8_t *src;

		if (pc->pc_len > cap - o)
			return (size_t)-1;
		if (pc->pc_kind == CHK_PIECE_INLINE)
			src = inl + pc->pc_off;
		else if (pc->pc_kind == CHK_PIECE_CHUNK)
			src = chunks[pc->pc_chunk] + pc->pc_off;
		else
			src = chk_zero_pad;
		memcpy(out + o, src, pc->pc_len);
		o += pc->pc_len;
	}
	return o;
}
