// SPDX-License-Identifier: MIT
/*
 * This file contains the RPC-over-RDMA version 1 transport header codec
 * (RFC 8166 section 4, XDR in 4.1.2), with the two procedures RFC 8166 4.6
 * retired but still defines on the wire: RDMA_MSGP (draft-ietf-nfsv4-
 * rpcrdma-08 3.9 and 4.1) and RDMA_DONE (void body).
 *
 * The header, as it goes on the wire (one XDR word per box):
 *
 *   rdma_xid | rdma_vers | rdma_credit | rdma_proc | body...
 *
 *   RDMA_MSG, RDMA_NOMSG:  Read list | Write list | Reply chunk
 *   RDMA_MSGP:             rdma_align | rdma_thresh | the three lists
 *   RDMA_DONE:             (nothing)
 *   RDMA_ERROR:            rdma_err | ERR_VERS: rdma_vers_low rdma_vers_high
 *
 *   Read list:   { 1 position handle length offset(2 words) }* 0
 *   Write list:  { 1 count { handle length offset(2) }[count] }* 0
 *   Reply chunk: 0 | 1 count { handle length offset(2) }[count]
 *
 * Decoding walks the buffer once, stores every segment in the caller's
 * struct rpcrdma_hdr (segments by value: they are 16 bytes and the header
 * buffer is recycled as soon as the receive is reposted), and then checks
 * the rules the RFC puts on the chunks (rpcrdma_hdr_check()).  The decoder
 * does not know whether it holds a call or a reply; the few reply-only rules
 * sit in rpcrdma_hdr_check_reply().
 */
#include <string.h>

#include "chunking.h"

static const char *const rpcrdma_hdr_err_names[RPCRDMA_HDR_ERR__COUNT] = {
	[RPCRDMA_HDR_OK] = "ok",
	[RPCRDMA_HDR_SHORT] = "truncated transport header",
	[RPCRDMA_HDR_BAD_VERS] = "rdma_vers is not 1",
	[RPCRDMA_HDR_BAD_PROC] = "unknown rdma_proc",
	[RPCRDMA_HDR_TOO_MANY] = "chunk list above limit",
	[RPCRDMA_HDR_BAD_POSITION] = "read position misaligned or decreasing",
	[RPCRDMA_HDR_BAD_CHUNKS] = "chunk combination not allowed",
	[RPCRDMA_HDR_BAD_ERRCODE] = "RDMA_ERROR with unknown rdma_err",
	[RPCRDMA_HDR_BAD_MSGP] = "RDMA_MSGP alignment invalid",
	[RPCRDMA_HDR_BAD_XID] = "rdma_xid differs from the RPC XID",
};

const char *rpcrdma_hdr_err_str(enum rpcrdma_hdr_err err)
{
	if ((unsigned)err >= RPCRDMA_HDR_ERR__COUNT)
		return "unknown transport header error";
	return rpcrdma_hdr_err_names[err];
}

/*
 * Defaults follow the reference peer (docs/protocol.md): svcrdma accepts write
 * chunks of up to 259 segments (RPCSVC_MAXPAGES: 1 MiB of 4 KiB pages + 3);
 * read and write-chunk counts are the compile-time capacity.
 */
#define RPCRDMA_DEFAULT_SEGS_PER_CHUNK	259

void rpcrdma_limits_default(struct rpcrdma_limits *lim)
{
	lim->lim_max_reads = RPCRDMA_MAX_READS;
	lim->lim_max_wchunks = RPCRDMA_MAX_WCHUNKS;
	lim->lim_max_segs_per_chunk = RPCRDMA_DEFAULT_SEGS_PER_CHUNK;
}

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

/* Word sizes of the pieces, for rpcrdma_hdr_len() and the decoder. */
#define HDR_FIXED_LEN	16	/* xid, vers, credit, proc */
#define READ_SEG_LEN	24	/* discriminator + position + HLOO */
#define SEG_LEN		16	/* HLOO */

struct hdr_dec {
	struct xdr_cur hd_xc;
	const struct rpcrdma_limits *hd_lim;
	struct rpcrdma_hdr *hd_h;
	enum rpcrdma_hdr_err hd_err;
};

static bool hd_fail(struct hdr_dec *d, enum rpcrdma_hdr_err err)
{
	if (d->hd_err == RPCRDMA_HDR_OK)
		d->hd_err = err;
	return false;
}

/* An XDR failure of the cursor maps to SHORT (truncation) or BAD_CHUNKS
 * (a bad optional-data discriminator: RFC 8166 4.5.2 "XDR error"). */
static bool hd_xdr_fail(struct hdr_dec *d)
{
	return hd_fail(d, d->hd_xc.xc_err == XDR_ERR_SHORT ? RPCRDMA_HDR_SHORT
							    : RPCRDMA_HDR_BAD_CHUNKS);
}

static bool dec_segment(struct hdr_dec *d, struct rpcrdma_segment *seg)
{
	struct xdr_cur *xc = &d->hd_xc;

	return xdr_get_u32(xc, &seg->rs_handle) && xdr_get_u32(xc, &seg->rs_length) &&
	       xdr_get_u64(xc, &seg->rs_offset);
}

/* An optional-data list (RFC 8166 4.3): entries while the discriminator is
 * TRUE, at most max of them; one() decodes entry *n (reporting its own
 * failure), then *n counts it. */
static bool dec_list(struct hdr_dec *d, unsigned max, unsigned *n,
		     bool (*one)(struct hdr_dec *d, unsigned i))
{
	bool more;

	for (;;) {
		if (!xdr_get_bool(&d->hd_xc, &more))
			return hd_xdr_fail(d);
		if (!more)
			return true;
		if (*n >= max)
			return hd_fail(d, RPCRDMA_HDR_TOO_MANY);
		if (!one(d, *n))
			return false;
		(*n)++;
	}
}

/* One entry of the Read list (RFC 8166 4.3.1): position, segment. */
static bool dec_read_seg(struct hdr_dec *d, unsigned i)
{
	struct rpcrdma_read_seg *rd = &d->hd_h->rh_reads[i];

	if (!xdr_get_u32(&d->hd_xc, &rd->rd_position) || !dec_segment(d, &rd->rd_seg))
		return hd_xdr_fail(d);
	return true;
}

static bool dec_read_list(struct hdr_dec *d)
{
	return dec_list(d, min_u(d->hd_lim->lim_max_reads, RPCRDMA_MAX_READS), &d->hd_h->rh_nreads,
			dec_read_seg);
}

/* One counted array of plain segments (a Write chunk or the Reply chunk). */
static bool dec_chunk(struct hdr_dec *d, struct rpcrdma_chunk *ck)
{
	struct rpcrdma_hdr *h = d->hd_h;
	unsigned max = d->hd_lim->lim_max_segs_per_chunk;
	uint32_t n;

	if (!xdr_get_u32(&d->hd_xc, &n))
		return hd_xdr_fail(d);
	if (n > max || n > RPCRDMA_MAX_SEGS - h->rh_nsegs)
		return hd_fail(d, RPCRDMA_HDR_TOO_MANY);
	/* Check the length before touching segments: a huge count in a short
	 * buffer fails at once rather than after n partial reads. */
	if (xdr_remaining(&d->hd_xc) / SEG_LEN < n)
		return hd_fail(d, RPCRDMA_HDR_SHORT);
	ck->ck_first = (uint16_t)h->rh_nsegs;
	ck->ck_nsegs = (uint16_t)n;
	for (uint32_t i = 0; i < n; i++) {
		if (!dec_segment(d, &h->rh_segs[h->rh_nsegs]))
			return hd_xdr_fail(d);
		h->rh_nsegs++;
	}
	return true;
}

static bool dec_write_chunk(struct hdr_dec *d, unsigned i)
{
	return dec_chunk(d, &d->hd_h->rh_writes[i]);
}

/* Write list (RFC 8166 4.3.2): optional-data list of counted arrays. */
static bool dec_write_list(struct hdr_dec *d)
{
	return dec_list(d, min_u(d->hd_lim->lim_max_wchunks, RPCRDMA_MAX_WCHUNKS),
			&d->hd_h->rh_nwrites, dec_write_chunk);
}

/* Reply chunk (RFC 8166 4.3.3): optional-data, one counted array. */
static bool dec_reply_chunk(struct hdr_dec *d)
{
	struct rpcrdma_hdr *h = d->hd_h;

	if (!xdr_get_bool(&d->hd_xc, &h->rh_has_reply))
		return hd_xdr_fail(d);
	if (!h->rh_has_reply)
		return true;
	return dec_chunk(d, &h->rh_reply);
}

/*
 * Chunk rules, each from the text it cites.  Called once the three lists are
 * decoded, for RDMA_MSG, RDMA_NOMSG and RDMA_MSGP.
 */
static bool rpcrdma_hdr_check(struct hdr_dec *d)
{
	const struct rpcrdma_hdr *h = d->hd_h;
	bool pos_zero = false;

	for (unsigned i = 0; i < h->rh_nreads; i++) {
		uint32_t pos = h->rh_reads[i].rd_position;

		/* RFC 8166 3.4.5: "The value in this field MUST be a multiple
		 * of four." */
		if (pos & 3)
			return hd_fail(d, RPCRDMA_HDR_BAD_POSITION);
		/* RFC 8166 3.4.5: all segments of one Read chunk share one
		 * Position and the Responder concatenates them "in list
		 * order"; a chunk is therefore a run of equal positions, and
		 * the list is kept in payload order (non-decreasing), which is
		 * also what svcrdma requires (docs/protocol.md: misaligned or
		 * inconsistent positions -> ERR_CHUNK). */
		if (i > 0 && pos < h->rh_reads[i - 1].rd_position)
			return hd_fail(d, RPCRDMA_HDR_BAD_POSITION);
		if (pos == 0)
			pos_zero = true;
	}

	switch (h->rh_proc) {
	case RPCRDMA_MSG:
	case RPCRDMA_MSGP:
		/* RFC 8166 4.2.4 (draft-08 4.1 for MSGP): the Payload stream
		 * follows inline "beginning with its XID field", so nothing may
		 * be reinserted at position zero: a Position Zero Read chunk
		 * belongs to a Long Call, which is RDMA_NOMSG (3.5.3). */
		if (pos_zero)
			return hd_fail(d, RPCRDMA_HDR_BAD_CHUNKS);
		break;
	case RPCRDMA_NOMSG:
		/* RFC 8166 4.2.4: "one MUST be present and MUST hold the
		 * Payload stream"; 4.5.2 names NOMSG with all three absent an
		 * XDR error.  The Payload stream can only be held by a Position
		 * Zero Read chunk (a Long Call, 3.5.3) or by the Reply chunk (a
		 * Long Reply): Write chunks carry DDP-eligible results only
		 * (4.3.2).  So: a Read list needs its position-zero chunk, and
		 * without a Read list the Reply chunk must be there. */
		if (h->rh_nreads > 0 ? !pos_zero : !h->rh_has_reply)
			return hd_fail(d, RPCRDMA_HDR_BAD_CHUNKS);
		break;
	default:
		break;
	}
	return true;
}

static bool dec_body(struct hdr_dec *d)
{
	struct rpcrdma_hdr *h = d->hd_h;
	struct xdr_cur *xc = &d->hd_xc;

	switch (h->rh_proc) {
	case RPCRDMA_MSGP:
		if (!xdr_get_u32(xc, &h->rh_align) || !xdr_get_u32(xc, &h->rh_thresh))
			return hd_xdr_fail(d);
		/* draft-08 3.9 leaves rdma_align open; padding inside an XDR
		 * stream must keep later items on 4-byte boundaries (RFC 4506
		 * 3), so the alignment is 0 (no padding) or a multiple of 4. */
		if (h->rh_align & 3)
			return hd_fail(d, RPCRDMA_HDR_BAD_MSGP);
		/* fall through */
	case RPCRDMA_MSG:
	case RPCRDMA_NOMSG:
		if (!dec_read_list(d) || !dec_write_list(d) || !dec_reply_chunk(d))
			return false;
		h->rh_hdr_len = xdr_pos(xc);
		h->rh_body_off = h->rh_hdr_len;
		if (!rpcrdma_hdr_check(d))
			return false;
		if (h->rh_proc != RPCRDMA_NOMSG) {
			/* RFC 8166 4.2.1 / 4.5.2: the inline RPC message starts
			 * with an XID that must equal rdma_xid. */
			uint32_t xid;

			if (!xdr_get_u32(xc, &xid))
				return hd_fail(d, RPCRDMA_HDR_SHORT);
			if (xid != h->rh_xid)
				return hd_fail(d, RPCRDMA_HDR_BAD_XID);
		}
		return true;
	case RPCRDMA_DONE:
		break;
	case RPCRDMA_ERROR:
		if (!xdr_get_u32(xc, &h->rh_err))
			return hd_xdr_fail(d);
		if (h->rh_err == RPCRDMA_ERR_VERS) {
			if (!xdr_get_u32(xc, &h->rh_vers_low) || !xdr_get_u32(xc, &h->rh_vers_high))
				return hd_xdr_fail(d);
		} else if (h->rh_err != RPCRDMA_ERR_CHUNK) {
			/*
			 * RFC 8166's rpc_rdma_error has no default arm, so an
			 * unknown code is an XDR error; draft-08 had "default:
			 * uint32 rdma_extra[8]".  We decode the fixed part and
			 * the code (rh_hdr_len = 20, the extra words are left
			 * alone) and flag it: the caller logs the XID and,
			 * per RFC 8166 4.5 ("MUST silently discard an
			 * RDMA_ERROR procedure that it cannot decode"), drops
			 * the message without completing the RPC.
			 */
			h->rh_hdr_len = xdr_pos(xc);
			h->rh_body_off = h->rh_hdr_len;
			d->hd_err = RPCRDMA_HDR_BAD_ERRCODE;
			return true;
		}
		break;
	default:
		return hd_fail(d, RPCRDMA_HDR_BAD_PROC);
	}
	h->rh_hdr_len = xdr_pos(xc);
	h->rh_body_off = h->rh_hdr_len;
	return true;
}

/*
 * Returns true with *err = RPCRDMA_HDR_OK for a valid header, or true with
 * *err = RPCRDMA_HDR_BAD_ERRCODE for an RDMA_ERROR with an unknown code (the
 * only "decoded but flagged" case); false otherwise, with the reason in
 * *err.  The four fixed fields are filled whenever 16 bytes are present, so
 * a responder can build its RDMA_ERROR (RFC 8166 4.5) from them.
 */
bool rpcrdma_hdr_decode(const void *buf, size_t len, const struct rpcrdma_limits *lim,
			struct rpcrdma_hdr *h, enum rpcrdma_hdr_err *err)
{
	struct rpcrdma_limits deflim;
	struct iovec one;
	struct hdr_dec d;
	bool ok;

	if (!lim) {
		rpcrdma_limits_default(&deflim);
		lim = &deflim;
	}
	/* Only the scalar part is reset: the segment arrays are written before
	 * they are counted, never read past the counts. */
	memset(h, 0, offsetof(struct rpcrdma_hdr, rh_reads));
	h->rh_nwrites = 0;
	h->rh_has_reply = false;
	h->rh_reply = (struct rpcrdma_chunk){ 0, 0 };
	h->rh_nsegs = 0;
	h->rh_hdr_len = 0;
	h->rh_body_off = 0;

	d = (struct hdr_dec){ .hd_lim = lim, .hd_h = h };
	xdr_cur_init_buf(&d.hd_xc, &one, buf, len);
	if (!xdr_get_u32(&d.hd_xc, &h->rh_xid) || !xdr_get_u32(&d.hd_xc, &h->rh_vers) ||
	    !xdr_get_u32(&d.hd_xc, &h->rh_credit) || !xdr_get_u32(&d.hd_xc, &h->rh_proc)) {
		ok = hd_fail(&d, RPCRDMA_HDR_SHORT);
	} else if (h->rh_vers != RPCRDMA_VERSION) {
		/* RFC 8166 4.5.1: the body layout of another version is
		 * unknown; only the fixed fields are meaningful. */
		ok = hd_fail(&d, RPCRDMA_HDR_BAD_VERS);
	} else {
		ok = dec_body(&d);
	}
	if (err)
		*err = d.hd_err;
	return ok;
}

static bool enc_segment(struct xdr_enc *xe, const struct rpcrdma_segment *seg)
{
	return xdr_put_u32(xe, seg->rs_handle) && xdr_put_u32(xe, seg->rs_length) &&
	       xdr_put_u64(xe, seg->rs_offset);
}

static bool chunk_ok(const struct rpcrdma_hdr *h, const struct rpcrdma_chunk *ck)
{
	return (unsigned)ck->ck_first + ck->ck_nsegs <= h->rh_nsegs;
}

static bool enc_chunk(struct xdr_enc *xe, const struct rpcrdma_hdr *h,
		      const struct rpcrdma_chunk *ck)
{
	if (!xdr_put_u32(xe, ck->ck_nsegs))
		return false;
	for (unsigned i = 0; i < ck->ck_nsegs; i++)
		if (!enc_segment(xe, &h->rh_segs[ck->ck_first + i]))
			return false;
	return true;
}

static bool hdr_shape_ok(const struct rpcrdma_hdr *h)
{
	if (h->rh_nreads > RPCRDMA_MAX_READS || h->rh_nwrites > RPCRDMA_MAX_WCHUNKS ||
	    h->rh_nsegs > RPCRDMA_MAX_SEGS)
		return false;
	for (unsigned i = 0; i < h->rh_nwrites; i++)
		if (!chunk_ok(h, &h->rh_writes[i]))
			return false;
	return !h->rh_has_reply || chunk_ok(h, &h->rh_reply);
}

/*
 * Encodes what h says, unchecked against the chunk rules (a test or a peer
 * may need to send a bad header on purpose); only an inconsistent structure
 * (a chunk naming segments past rh_nsegs) is refused with XDR_ERR_BAD_ARG.
 */
bool rpcrdma_hdr_encode(struct xdr_enc *xe, const struct rpcrdma_hdr *h)
{
	if (xe->xe_err != XDR_OK)
		return false;
	if (!hdr_shape_ok(h)) {
		xe->xe_err = XDR_ERR_BAD_ARG;
		return false;
	}
	if (!xdr_put_u32(xe, h->rh_xid) || !xdr_put_u32(xe, h->rh_vers) ||
	    !xdr_put_u32(xe, h->rh_credit) || !xdr_put_u32(xe, h->rh_proc))
		return false;
	switch (h->rh_proc) {
	case RPCRDMA_MSGP:
		if (!xdr_put_u32(xe, h->rh_align) || !xdr_put_u32(xe, h->rh_thresh))
			return false;
		/* fall through */
	case RPCRDMA_MSG:
	case RPCRDMA_NOMSG:
		for (unsigned i = 0; i < h->rh_nreads; i++) {
			const struct rpcrdma_read_seg *rd = &h->rh_reads[i];

			if (!xdr_put_bool(xe, true) || !xdr_put_u32(xe, rd->rd_position) ||
			    !enc_segment(xe, &rd->rd_seg))
				return false;
		}
		if (!xdr_put_bool(xe, false))
			return false;
		for (unsigned i = 0; i < h->rh_nwrites; i++)
			if (!xdr_put_bool(xe, true) || !enc_chunk(xe, h, &h->rh_writes[i]))
				return false;
		if (!xdr_put_bool(xe, false) || !xdr_put_bool(xe, h->rh_has_reply))
			return false;
		return !h->rh_has_reply || enc_chunk(xe, h, &h->rh_reply);
	case RPCRDMA_DONE:
		return true;
	case RPCRDMA_ERROR:
		if (!xdr_put_u32(xe, h->rh_err))
			return false;
		if (h->rh_err == RPCRDMA_ERR_VERS)
			return xdr_put_u32(xe, h->rh_vers_low) && xdr_put_u32(xe, h->rh_vers_high);
		return true;
	default:
		/* An unknown procedure has no body we could write. */
		return true;
	}
}

/*
 * Must match rpcrdma_hdr_encode() word for word.  The Reply chunk is an
 * optional-data item: its discriminator word is always there, and when
 * present it is followed by a count word and the segments - the miscount
 * docs/protocol.md lists (a mount hung at EXCHANGE_ID) forgot the count.
 */
size_t rpcrdma_hdr_len(const struct rpcrdma_hdr *h)
{
	size_t len = HDR_FIXED_LEN;

	switch (h->rh_proc) {
	case RPCRDMA_MSGP:
		len += 8;
		/* fall through */
	case RPCRDMA_MSG:
	case RPCRDMA_NOMSG:
		len += (size_t)h->rh_nreads * READ_SEG_LEN + 4;		/* reads + end */
		for (unsigned i = 0; i < h->rh_nwrites; i++)
			len += 4 + 4 + (size_t)h->rh_writes[i].ck_nsegs * SEG_LEN;
		len += 4;						/* write list end */
		len += 4;						/* reply discriminator */
		if (h->rh_has_reply)
			len += 4 + (size_t)h->rh_reply.ck_nsegs * SEG_LEN;
		return len;
	case RPCRDMA_ERROR:
		return len + (h->rh_err == RPCRDMA_ERR_VERS ? 12 : 4);
	default:
		return len;
	}
}

bool rpcrdma_hdr_check_reply(const struct rpcrdma_hdr *h, enum rpcrdma_hdr_err *err)
{
	enum rpcrdma_hdr_err e = RPCRDMA_HDR_OK;

	if (h->rh_vers != RPCRDMA_VERSION)
		e = RPCRDMA_HDR_BAD_VERS;
	else if (h->rh_proc > RPCRDMA_ERROR)
		e = RPCRDMA_HDR_BAD_PROC;
	/* RFC 8166 4.3.1: "Responders MUST leave the Read list empty in all
	 * replies." */
	else if ((h->rh_proc == RPCRDMA_MSG || h->rh_proc == RPCRDMA_NOMSG ||
		  h->rh_proc == RPCRDMA_MSGP) && h->rh_nreads > 0)
		e = RPCRDMA_HDR_BAD_CHUNKS;
	else if (h->rh_proc == RPCRDMA_ERROR && h->rh_err != RPCRDMA_ERR_VERS &&
		 h->rh_err != RPCRDMA_ERR_CHUNK)
		e = RPCRDMA_HDR_BAD_ERRCODE;
	if (err)
		*err = e;
	return e == RPCRDMA_HDR_OK;
}

size_t rpcrdma_msgp_pad(const struct rpcrdma_hdr *h, size_t pos, uint32_t data_len)
{
	size_t at;

	/* draft-08 3.9: padding applies to opaque data "at or above"
	 * rdma_thresh (the later "exceeds" in the same section is read as the
	 * same rule; the Linux client padded at >= its threshold). */
	if (h->rh_proc != RPCRDMA_MSGP || h->rh_align == 0 || data_len < h->rh_thresh)
		return 0;
	at = h->rh_body_off + pos;
	return (h->rh_align - at % h->rh_align) % h->rh_align;
}
