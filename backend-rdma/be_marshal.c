// SPDX-License-Identifier: MIT
/*
 * This file contains the pure side of sending a call and checking its
 * reply: cutting iovec streams into segments, choosing RDMA_MSG or
 * RDMA_NOMSG, encoding the transport header and the inline stream, and
 * validating the Write list and Reply chunk a server returns.  No verbs:
 * registrations come in as (rkey, offset) handles, so host tests drive
 * every function here with made-up handles.
 *
 * Wire notes (RFC 8166 section 4.1, 3.5):
 *  - a read segment is { position, handle, length, offset }; all segments
 *    of one chunk share the chunk's XDR position, counted from the XID;
 *  - the XDR pad of a read-chunk item is neither in the chunk nor inline:
 *    the inline stream continues exactly at the chunk's position;
 *  - a long call is RDMA_NOMSG: the whole RPC message is one position-zero
 *    read chunk and nothing follows the transport header;
 *  - the server returns each write segment with its length set to the
 *    bytes it wrote, data contiguous from the chunk's first byte.
 */
#include <errno.h>
#include <string.h>

#include "backend.h"

int be_spans_from_iov(const struct iovec *iov, unsigned niov, size_t off, size_t len,
		      uint32_t max_seg, struct be_span *out, unsigned cap)
{
	unsigned i, n = 0;
	size_t pos = 0;

	for (i = 0; i < niov && len > 0; i++) {
		size_t ilen = iov[i].iov_len, start, take;

		if (off >= pos + ilen) {
			pos += ilen;
			continue;
		}
		start = off > pos ? off - pos : 0;
		take = ilen - start;
		if (take > len)
			take = len;
		while (take > 0) {
			uint8_t *at = (uint8_t *)iov[i].iov_base + start;
			size_t piece = take, room = max_seg ? max_seg : UINT32_MAX & ~(size_t)3;
			/* Pool buffers next to each other in memory: one segment,
			 * one registration (fewer binds, Read WRs, invalidations). */
			bool join = n > 0 && out[n - 1].sp_addr + out[n - 1].sp_len == at &&
				    out[n - 1].sp_len < room;

			if (join)
				room -= out[n - 1].sp_len;
			if (piece > room)
				piece = room;
			if (join) {
				out[n - 1].sp_len += (uint32_t)piece;
			} else {
				if (n >= cap)
					return -E2BIG;
				out[n].sp_addr = at;
				out[n].sp_len = (uint32_t)piece;
				n++;
			}
			start += piece;
			take -= piece;
			len -= piece;
			off += piece;
		}
		pos += ilen;
	}
	return len > 0 ? -EINVAL : (int)n;
}

static size_t iov_total(const struct iovec *iov, unsigned niov)
{
	size_t t = 0;
	unsigned i;

	for (i = 0; i < niov; i++)
		t += iov[i].iov_len;
	return t;
}

/* Bytes of the transport header for this plan (RFC 8166 4.2 layout). */
static size_t plan_hdr_len(const struct be_plan *p)
{
	size_t len = 4 * 4;		/* xid, vers, credit, proc */
	unsigned c;

	len += 4 + 24 * (size_t)p->pl_nreadspans;	/* read list + end */
	len += 4;					/* write list end */
	for (c = 0; c < p->pl_nwrites; c++)
		len += 8 + 16 * (size_t)p->pl_wcount[c];
	len += 4;					/* reply chunk discriminant */
	if (p->pl_has_reply)
		len += 4 + 16 * (size_t)p->pl_nrspans;
	return len;
}

int be_plan_call(const struct be_call_desc *d, uint32_t send_threshold, uint32_t max_seg,
		 struct be_plan *p)
{
	size_t msglen, end = 0, cut = 0;
	unsigned i;
	int n;

	/* The counts only: every reader of the span arrays stops at them, and
	 * clearing the arrays too (3.4 KiB) cost a small call ~420 instructions. */
	p->pl_proc = 0;
	p->pl_inline_len = p->pl_hdr_len = 0;
	p->pl_nreadspans = p->pl_nwrites = p->pl_nwspans = p->pl_nrspans = 0;
	p->pl_has_reply = false;
	if (!d->cd_msg || d->cd_msg_niov == 0 || d->cd_msg_niov > BE_MAX_MSG_IOV ||
	    d->cd_nreads > BE_MAX_READ_ITEMS || d->cd_nwrites > BE_MAX_WRITE_CHUNKS)
		return -EINVAL;
	msglen = iov_total(d->cd_msg, d->cd_msg_niov);
	if (msglen < 4)
		return -EINVAL;

	/* Write list and Reply chunk: the whole of each target. */
	for (i = 0; i < d->cd_nwrites; i++) {
		const struct be_target *t = &d->cd_writes[i];

		if (t->bt_niov == 0 || t->bt_niov > BE_MAX_TARGET_IOV)
			return -EINVAL;
		n = be_spans_from_iov(t->bt_iov, t->bt_niov, 0, iov_total(t->bt_iov, t->bt_niov),
				      max_seg, p->pl_wspan + p->pl_nwspans,
				      BE_MAX_CALL_SEGS - p->pl_nwspans);
		if (n <= 0)
			return n < 0 ? n : -EINVAL;
		p->pl_wfirst[i] = p->pl_nwspans;
		p->pl_wcount[i] = (unsigned)n;
		p->pl_nwspans += (unsigned)n;
	}
	p->pl_nwrites = d->cd_nwrites;
	if (d->cd_reply) {
		const struct be_target *t = d->cd_reply;

		if (t->bt_niov == 0 || t->bt_niov > BE_MAX_TARGET_IOV)
			return -EINVAL;
		n = be_spans_from_iov(t->bt_iov, t->bt_niov, 0, iov_total(t->bt_iov, t->bt_niov),
				      max_seg, p->pl_rspan, BE_MAX_CALL_SEGS - p->pl_nwspans);
		if (n <= 0)
			return n < 0 ? n : -EINVAL;
		p->pl_has_reply = true;
		p->pl_nrspans = (unsigned)n;
	}

	/* Read items: aligned, ascending, inside the message, not the XID. */
	for (i = 0; i < d->cd_nreads; i++) {
		const struct be_read_item *ri = &d->cd_reads[i];
		size_t skip;
		unsigned k, room = BE_MAX_CALL_SEGS - p->pl_nwspans - p->pl_nrspans;

		if ((ri->ri_pos & 3) || ri->ri_pos < 4 || ri->ri_pos < end || ri->ri_len == 0 ||
		    (size_t)ri->ri_pos + ri->ri_len > msglen)
			return -EINVAL;
		if (room <= p->pl_nreadspans)
			return -E2BIG;
		n = be_spans_from_iov(d->cd_msg, d->cd_msg_niov, ri->ri_pos, ri->ri_len, max_seg,
				      p->pl_read + p->pl_nreadspans, room - p->pl_nreadspans);
		if (n < 0)
			return n;
		for (k = 0; k < (unsigned)n; k++)
			p->pl_read_pos[p->pl_nreadspans + k] = ri->ri_pos;
		p->pl_nreadspans += (unsigned)n;
		skip = xdr_round4(ri->ri_len);
		if ((size_t)ri->ri_pos + skip > msglen)
			skip = msglen - ri->ri_pos;
		cut += skip;
		end = ri->ri_pos + skip;
	}
	p->pl_proc = RPCRDMA_MSG;
	p->pl_inline_len = msglen - cut;
	p->pl_hdr_len = plan_hdr_len(p);
	if (!(d->cd_flags & BE_CALL_FORCE_NOMSG) &&
	    p->pl_hdr_len + p->pl_inline_len <= send_threshold)
		return 0;

	/* Long call: the whole message as a position-zero read chunk. */
	p->pl_proc = RPCRDMA_NOMSG;
	p->pl_inline_len = 0;
	n = be_spans_from_iov(d->cd_msg, d->cd_msg_niov, 0, msglen, max_seg, p->pl_read,
			      BE_MAX_CALL_SEGS - p->pl_nwspans - p->pl_nrspans);
	if (n < 0)
		return n;
	p->pl_nreadspans = (unsigned)n;
	memset(p->pl_read_pos, 0, (size_t)n * sizeof(p->pl_read_pos[0]));
	p->pl_hdr_len = plan_hdr_len(p);
	if (p->pl_hdr_len > send_threshold)
		return -E2BIG;
	return 0;
}

static void seg_set(struct rpcrdma_segment *s, const struct be_handle *h, uint32_t len)
{
	s->rs_handle = h->bh_rkey;
	s->rs_length = len;
	s->rs_offset = h->bh_offset;
}

long be_marshal_call(const struct be_call_desc *d, const struct be_plan *p, uint32_t credits,
		     const struct be_handle *rd, const struct be_handle *wr,
		     const struct be_handle *rp, struct rpcrdma_hdr *rh, void *out, size_t cap)
{
	struct xdr_enc xe;
	unsigned i, c, nseg = 0;
	uint8_t *o;
	size_t pos = 0, next_cut, cut_end;
	unsigned item = 0, iv;

	if (p->pl_hdr_len + p->pl_inline_len > cap)
		return -ENOSPC;
	memset(rh, 0, offsetof(struct rpcrdma_hdr, rh_reads));
	rh->rh_xid = d->cd_xid;
	rh->rh_vers = RPCRDMA_VERSION;
	rh->rh_credit = credits;
	rh->rh_proc = p->pl_proc;
	rh->rh_nreads = p->pl_nreadspans;
	if (rh->rh_nreads > RPCRDMA_MAX_READS)
		return -E2BIG;
	for (i = 0; i < p->pl_nreadspans; i++) {
		rh->rh_reads[i].rd_position = p->pl_read_pos[i];
		seg_set(&rh->rh_reads[i].rd_seg, &rd[i], p->pl_read[i].sp_len);
	}
	rh->rh_nwrites = p->pl_nwrites;
	for (c = 0; c < p->pl_nwrites; c++) {
		rh->rh_writes[c].ck_first = (uint16_t)nseg;
		rh->rh_writes[c].ck_nsegs = (uint16_t)p->pl_wcount[c];
		for (i = 0; i < p->pl_wcount[c]; i++, nseg++)
			seg_set(&rh->rh_segs[nseg], &wr[nseg], p->pl_wspan[nseg].sp_len);
	}
	rh->rh_has_reply = p->pl_has_reply;
	rh->rh_nreads = p->pl_nreadspans;
	if (p->pl_has_reply) {
		rh->rh_reply.ck_first = (uint16_t)nseg;
		rh->rh_reply.ck_nsegs = (uint16_t)p->pl_nrspans;
		for (i = 0; i < p->pl_nrspans; i++)
			seg_set(&rh->rh_segs[nseg + i], &rp[i], p->pl_rspan[i].sp_len);
		nseg += p->pl_nrspans;
	}
	rh->rh_nsegs = nseg;

	xdr_enc_init(&xe, out, cap);
	if (!rpcrdma_hdr_encode(&xe, rh) || xe.xe_len != p->pl_hdr_len)
		return -EPROTO;
	if (p->pl_proc == RPCRDMA_NOMSG)
		return (long)xe.xe_len;

	/* Inline stream: the message less each read item and its pad. */
	o = (uint8_t *)out + xe.xe_len;
	next_cut = d->cd_nreads ? d->cd_reads[0].ri_pos : SIZE_MAX;
	cut_end = d->cd_nreads ? next_cut + xdr_round4(d->cd_reads[0].ri_len) : 0;
	for (iv = 0; iv < d->cd_msg_niov; iv++) {
		const uint8_t *b = d->cd_msg[iv].iov_base;
		size_t l = d->cd_msg[iv].iov_len, k = 0;

		while (k < l) {
			size_t run;

			if (pos >= next_cut) {
				/* inside a cut: skip to its end */
				size_t skip = cut_end - pos;

				if (skip > l - k)
					skip = l - k;
				k += skip;
				pos += skip;
				if (pos >= cut_end) {
					item++;
					next_cut = item < d->cd_nreads ? d->cd_reads[item].ri_pos
								       : SIZE_MAX;
					cut_end = item < d->cd_nreads
						? next_cut + xdr_round4(d->cd_reads[item].ri_len) : 0;
				}
				continue;
			}
			run = l - k;
			if (next_cut != SIZE_MAX && run > next_cut - pos)
				run = next_cut - pos;
			memcpy(o, b + k, run);
			o += run;
			k += run;
			pos += run;
		}
	}
	if ((size_t)(o - (uint8_t *)out) != p->pl_hdr_len + p->pl_inline_len)
		return -EPROTO;
	return o - (uint8_t *)out;
}

/* Check one returned chunk against its offered spans; sum of lengths. */
static bool chunk_check(const struct rpcrdma_hdr *rh, const struct rpcrdma_chunk *ck,
			const struct be_span *spans, const struct be_handle *hd, unsigned offered,
			uint32_t *total)
{
	unsigned i;
	uint64_t sum = 0;
	bool short_seen = false;

	if (ck->ck_nsegs > offered || (size_t)ck->ck_first + ck->ck_nsegs > rh->rh_nsegs)
		return false;
	for (i = 0; i < ck->ck_nsegs; i++) {
		const struct rpcrdma_segment *s = &rh->rh_segs[ck->ck_first + i];

		if (s->rs_handle != hd[i].bh_rkey || s->rs_offset != hd[i].bh_offset ||
		    s->rs_length > spans[i].sp_len)
			return false;
		if (short_seen && s->rs_length)
			return false;	/* data must be contiguous from the start */
		if (s->rs_length < spans[i].sp_len)
			short_seen = true;
		sum += s->rs_length;
	}
	*total = (uint32_t)sum;
	return true;
}

bool be_reply_check(const struct rpcrdma_hdr *rh, const struct be_plan *p,
		    const struct be_handle *wr, const struct be_handle *rp,
		    const void *buf, size_t len, struct be_reply *r)
{
	unsigned c;
	uint32_t reply_len = 0;

	memset(r, 0, sizeof(*r));
	r->br_xid = rh->rh_xid;
	r->br_proc = rh->rh_proc;
	r->br_credits = rh->rh_credit;
	r->br_nwrites = p->pl_nwrites;

	switch (rh->rh_proc) {
	case RPCRDMA_ERROR:
		if (rh->rh_err == RPCRDMA_ERR_VERS) {
			r->br_err = BE_ERR_VERS;
			r->br_vers_low = rh->rh_vers_low;
			r->br_vers_high = rh->rh_vers_high;
		} else if (rh->rh_err == RPCRDMA_ERR_CHUNK) {
			r->br_err = BE_ERR_CHUNK;
		} else {
			r->br_err = BE_ERR_BAD_REPLY;
		}
		return false;
	case RPCRDMA_MSG:
	case RPCRDMA_MSGP:
	case RPCRDMA_NOMSG:
		break;
	default:
		r->br_err = BE_ERR_BAD_REPLY;
		return false;
	}
	/* Read chunks in replies (RFC 5666 long replies) are not taken. */
	if (rh->rh_nreads > 0 || rh->rh_nwrites > p->pl_nwrites) {
		r->br_err = BE_ERR_BAD_REPLY;
		return false;
	}
	for (c = 0; c < rh->rh_nwrites; c++) {
		if (!chunk_check(rh, &rh->rh_writes[c], p->pl_wspan + p->pl_wfirst[c],
				 wr + p->pl_wfirst[c], p->pl_wcount[c], &r->br_write_len[c])) {
			r->br_err = BE_ERR_OVERRUN;
			return false;
		}
	}
	if (rh->rh_has_reply) {
		if (!p->pl_has_reply ||
		    !chunk_check(rh, &rh->rh_reply, p->pl_rspan, rp, p->pl_nrspans, &reply_len)) {
			r->br_err = BE_ERR_OVERRUN;
			return false;
		}
	}
	if (rh->rh_proc == RPCRDMA_NOMSG) {
		uint32_t left = reply_len;
		unsigned i;

		if (!rh->rh_has_reply || reply_len == 0) {
			r->br_err = BE_ERR_BAD_REPLY;
			return false;
		}
		for (i = 0; i < p->pl_nrspans && left > 0 && i < BE_MAX_TARGET_IOV; i++) {
			uint32_t take = p->pl_rspan[i].sp_len < left ? p->pl_rspan[i].sp_len : left;

			r->br_body[i].iov_base = p->pl_rspan[i].sp_addr;
			r->br_body[i].iov_len = take;
			left -= take;
		}
		if (left > 0) {
			r->br_err = BE_ERR_TOO_BIG;
			return false;
		}
		r->br_nbody = i;
		r->br_body_len = reply_len;
		return true;
	}
	if (rh->rh_body_off > len) {
		r->br_err = BE_ERR_BAD_REPLY;
		return false;
	}
	r->br_body[0].iov_base = (uint8_t *)buf + rh->rh_body_off;
	r->br_body[0].iov_len = len - rh->rh_body_off;
	r->br_nbody = 1;
	r->br_body_len = len - rh->rh_body_off;
	return true;
}

/* ------------------------------------------------------------------------
 * Backchannel (RFC 8167)
 * ------------------------------------------------------------------------ */

void be_bc_marshal_hdr(uint8_t *out, uint32_t xid, uint32_t credits)
{
	/* RFC 8167 5.2: same XID and version as the call, our reverse credit
	 * grant, RDMA_MSG, empty Read list, Write list and Reply chunk. */
	chk_put_be32(out, xid);
	chk_put_be32(out + 4, RPCRDMA_VERSION);
	chk_put_be32(out + 8, credits);
	chk_put_be32(out + 12, RPCRDMA_MSG);
	chk_put_be32(out + 16, 0);
	chk_put_be32(out + 20, 0);
	chk_put_be32(out + 24, 0);
}

bool be_bc_is_call(const struct rpcrdma_hdr *rh, const void *buf, size_t len, bool *chunks)
{
	const uint8_t *p = buf;

	*chunks = false;
	/* Only an inline RPC message shows its direction (RFC 8167 4.1). */
	if (rh->rh_proc != RPCRDMA_MSG && rh->rh_proc != RPCRDMA_MSGP)
		return false;
	if (rh->rh_body_off > len || len - rh->rh_body_off < 8)
		return false;
	if (chk_be32(p + rh->rh_body_off + 4) != RPC_CALL)
		return false;
	*chunks = rh->rh_nreads > 0 || rh->rh_nwrites > 0 || rh->rh_has_reply ||
		  rh->rh_proc == RPCRDMA_MSGP;
	return true;
}
