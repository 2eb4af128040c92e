// SPDX-License-Identifier: MIT
/*
 * This file contains the XDR cursor (RFC 4506) that every decoder in the
 * gateway uses.  It reads a stream laid over several buffer segments in
 * place, so a record reassembled from TCP fragments is never flattened, and
 * it keeps the first error sticky so walkers can decode a run of items and
 * check once.  Written here rather than taken from libtirpc's XDR because
 * libtirpc's xdrmem decodes into allocated or caller-copied objects and has
 * no segmented input or position reporting (docs/dependencies.md).
 */
#include <string.h>

#include "chunking.h"

static const char *const xdr_err_names[XDR_ERR__COUNT] = {
	[XDR_OK] = "ok",
	[XDR_ERR_SHORT] = "truncated XDR item",
	[XDR_ERR_TOO_LONG] = "XDR length above maximum",
	[XDR_ERR_BAD_ENUM] = "XDR enum or discriminant out of range",
	[XDR_ERR_BAD_BOOL] = "XDR bool not 0 or 1",
	[XDR_ERR_NO_SPACE] = "XDR encode buffer full",
	[XDR_ERR_BAD_ARG] = "XDR bad argument",
	[XDR_ERR_DEPTH] = "XDR item count or nesting above limit",
};

const char *xdr_err_str(enum xdr_err err)
{
	if ((unsigned)err >= XDR_ERR__COUNT)
		return "unknown XDR error";
	return xdr_err_names[err];
}

void xdr_cur_init(struct xdr_cur *xc, const struct iovec *iov, unsigned niov)
{
	size_t total = 0;

	for (unsigned i = 0; i < niov; i++)
		total += iov[i].iov_len;
	*xc = (struct xdr_cur){ .xc_iov = iov, .xc_niov = niov, .xc_len = total };
	/* Skip leading empty segments so xc_idx always names live bytes. */
	while (xc->xc_idx < niov && iov[xc->xc_idx].iov_len == 0)
		xc->xc_idx++;
}

void xdr_cur_init_buf(struct xdr_cur *xc, struct iovec *one, const void *buf, size_t len)
{
	one->iov_base = (void *)buf;
	one->iov_len = len;
	xdr_cur_init(xc, one, 1);
}

bool xdr_fail(struct xdr_cur *xc, enum xdr_err err)
{
	if (xc->xc_err == XDR_OK)
		xc->xc_err = err;
	return false;
}

/* Advance by n bytes that are known to be inside the stream. */
static void cur_advance(struct xdr_cur *xc, size_t n)
{
	xc->xc_pos += n;
	while (n > 0) {
		size_t in_seg = xc->xc_iov[xc->xc_idx].iov_len - xc->xc_off;

		if (n < in_seg) {
			xc->xc_off += n;
			return;
		}
		n -= in_seg;
		xc->xc_idx++;
		xc->xc_off = 0;
	}
	while (xc->xc_idx < xc->xc_niov && xc->xc_iov[xc->xc_idx].iov_len == 0)
		xc->xc_idx++;
}

/* Copy n bytes at the cursor out and advance (n is small: a word or two). */
static bool cur_take(struct xdr_cur *xc, void *dst, size_t n)
{
	uint8_t *out = dst;

	if (xc->xc_err != XDR_OK)
		return false;
	if (xdr_remaining(xc) < n)
		return xdr_fail(xc, XDR_ERR_SHORT);
	/* Fast path: the item sits inside the current segment. */
	if (xc->xc_iov[xc->xc_idx].iov_len - xc->xc_off >= n) {
		memcpy(out, (const uint8_t *)xc->xc_iov[xc->xc_idx].iov_base + xc->xc_off, n);
		cur_advance(xc, n);
		return true;
	}
	while (n > 0) {
		const struct iovec *seg = &xc->xc_iov[xc->xc_idx];
		size_t chunk = seg->iov_len - xc->xc_off;

		if (chunk > n)
			chunk = n;
		memcpy(out, (const uint8_t *)seg->iov_base + xc->xc_off, chunk);
		out += chunk;
		n -= chunk;
		cur_advance(xc, chunk);
	}
	return true;
}

bool xdr_get_u32_slow(struct xdr_cur *xc, uint32_t *v)
{
	uint8_t b[4];

	if (!cur_take(xc, b, 4))
		return false;
	*v = chk_be32(b);
	return true;
}

bool xdr_get_i32(struct xdr_cur *xc, int32_t *v)
{
	uint32_t u;

	if (!xdr_get_u32(xc, &u))
		return false;
	*v = (int32_t)u;
	return true;
}

bool xdr_get_u64(struct xdr_cur *xc, uint64_t *v)
{
	uint32_t hi, lo;

	if (!xdr_get_u32(xc, &hi) || !xdr_get_u32(xc, &lo))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

bool xdr_get_bool(struct xdr_cur *xc, bool *v)
{
	uint32_t u;

	if (!xdr_get_u32(xc, &u))
		return false;
	if (u > 1)
		return xdr_fail(xc, XDR_ERR_BAD_BOOL);
	*v = u == 1;
	return true;
}

bool xdr_get_enum(struct xdr_cur *xc, uint32_t *v, uint32_t nvalid)
{
	if (!xdr_get_u32(xc, v))
		return false;
	if (nvalid != 0 && *v >= nvalid)
		return xdr_fail(xc, XDR_ERR_BAD_ENUM);
	return true;
}

bool xdr_get_fixed(struct xdr_cur *xc, struct xdr_span *span, uint32_t n)
{
	if (xc->xc_err != XDR_OK)
		return false;
	/* Compare against the rounded length without overflow (n < 2^32). */
	if (xdr_remaining(xc) < xdr_round4((size_t)n))
		return xdr_fail(xc, XDR_ERR_SHORT);
	span->xs_pos = xc->xc_pos;
	span->xs_len = n;
	cur_advance(xc, xdr_round4((size_t)n));
	return true;
}

bool xdr_get_opaque_slow(struct xdr_cur *xc, struct xdr_span *span, uint32_t max)
{
	uint32_t n;

	if (!xdr_get_u32(xc, &n))
		return false;
	if (n > max)
		return xdr_fail(xc, XDR_ERR_TOO_LONG);
	return xdr_get_fixed(xc, span, n);
}

bool xdr_skip_slow(struct xdr_cur *xc, size_t n)
{
	if (xc->xc_err != XDR_OK)
		return false;
	if (n > xdr_remaining(xc) || xdr_round4(n) > xdr_remaining(xc))
		return xdr_fail(xc, XDR_ERR_SHORT);
	cur_advance(xc, xdr_round4(n));
	return true;
}

bool xdr_seek(struct xdr_cur *xc, size_t pos)
{
	if (xc->xc_err != XDR_OK)
		return false;
	if (pos > xc->xc_len)
		return xdr_fail(xc, XDR_ERR_BAD_ARG);
	xc->xc_idx = 0;
	xc->xc_off = 0;
	xc->xc_pos = 0;
	while (xc->xc_idx < xc->xc_niov && xc->xc_iov[xc->xc_idx].iov_len == 0)
		xc->xc_idx++;
	cur_advance(xc, pos);
	return true;
}

/* Locate the segment and offset of an absolute position. */
static bool locate(const struct xdr_cur *xc, size_t pos, unsigned *idx, size_t *off)
{
	for (unsigned i = 0; i < xc->xc_niov; i++) {
		if (pos < xc->xc_iov[i].iov_len) {
			*idx = i;
			*off = pos;
			return true;
		}
		pos -= xc->xc_iov[i].iov_len;
	}
	return false;
}

size_t xdr_span_copy(const struct xdr_cur *xc, const struct xdr_span *span, void *dst, size_t cap)
{
	size_t want = span->xs_len < cap ? span->xs_len : cap;
	size_t done = 0, off;
	unsigned idx;

	if (want == 0 || span->xs_pos + want > xc->xc_len || !locate(xc, span->xs_pos, &idx, &off))
		return 0;
	while (done < want && idx < xc->xc_niov) {
		size_t chunk = xc->xc_iov[idx].iov_len - off;

		if (chunk > want - done)
			chunk = want - done;
		memcpy((uint8_t *)dst + done, (const uint8_t *)xc->xc_iov[idx].iov_base + off, chunk);
		done += chunk;
		idx++;
		off = 0;
	}
	return done;
}

const uint8_t *xdr_span_ptr(const struct xdr_cur *xc, const struct xdr_span *span)
{
	size_t off;
	unsigned idx;

	if (span->xs_len == 0 || span->xs_pos + span->xs_len > xc->xc_len ||
	    !locate(xc, span->xs_pos, &idx, &off))
		return NULL;
	if (xc->xc_iov[idx].iov_len - off < span->xs_len)
		return NULL;
	return (const uint8_t *)xc->xc_iov[idx].iov_base + off;
}

/* ---- encoder ---- */

void xdr_enc_init(struct xdr_enc *xe, void *buf, size_t cap)
{
	*xe = (struct xdr_enc){ .xe_buf = buf, .xe_cap = cap };
}

bool xdr_put_u64(struct xdr_enc *xe, uint64_t v)
{
	return xdr_put_u32(xe, (uint32_t)(v >> 32)) && xdr_put_u32(xe, (uint32_t)v);
}

bool xdr_put_bool(struct xdr_enc *xe, bool v)
{
	return xdr_put_u32(xe, v ? 1 : 0);
}

bool xdr_put_fixed(struct xdr_enc *xe, const void *data, uint32_t len)
{
	size_t pad = xdr_pad(len);
	uint8_t *p = xdr_enc_room(xe, (size_t)len + pad);

	if (!p)
		return false;
	if (len)
		memcpy(p, data, len);
	memset(p + len, 0, pad);	/* RFC 4506 3.9: pad bytes are zero */
	return true;
}

bool xdr_put_opaque(struct xdr_enc *xe, const void *data, uint32_t len)
{
	return xdr_put_u32(xe, len) && xdr_put_fixed(xe, data, len);
}

size_t xdr_put_hole(struct xdr_enc *xe)
{
	size_t off = xe->xe_len;

	xdr_put_u32(xe, 0);
	return off;
}

void xdr_patch_u32(struct xdr_enc *xe, size_t off, uint32_t v)
{
	if (xe->xe_err == XDR_OK && off + 4 <= xe->xe_len)
		chk_put_be32(xe->xe_buf + off, v);
}
