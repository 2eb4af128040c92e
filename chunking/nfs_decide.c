// SPDX-License-Identifier: MIT
/*
 * nfs_decide.c - choose how a call and its reply travel over RPC-over-RDMA.
 *
 * This file contains chk_decide(), a pure function from a call walk
 * (nfs_walk.c), the negotiated inline thresholds and the transport header
 * overheads to a chunking decision, and chk_rdma_hdr_len(), the exact size
 * of an RPC-over-RDMA v1 header (RFC 8166 section 4.2).
 *
 * Where RFC 8166 and RFC 8267 leave a choice we mirror the Linux client
 * (net/sunrpc/xprtrdma/rpc_rdma.c, rpcrdma_marshal_req()):
 *
 *  Reply side, decided first because the offered chunks grow the call's
 *  transport header:
 *   1. The whole reply may come inline when its bound plus the reply's
 *      transport header fits the receive threshold (rpcrdma_results_inline).
 *   2. Otherwise, when DDP is allowed and the reply carries an eligible
 *      result of at least rdp_ddp_min bytes among the first
 *      rdp_max_write_chunks ones, offer write chunks for that prefix of the
 *      eligible results - if what is left inline then fits
 *      (rpcrdma_nonpayload_inline).  Only a prefix: RFC 8267 6.4.1 pairs
 *      chunks with results in order, and skipping a result would need an
 *      empty chunk, which Linux svcrdma answers with an error.
 *   3. Otherwise a reply chunk, and no write chunks (Linux never offers
 *      both), sized from the bound, or from rdp_reply_cap when the reply is
 *      unbounded (RFC 8267 6.2: ACLs, fs_locations, layouts; for 4.1+
 *      the caller may pass the session's ca_maxresponsesize as the cap).
 *  The kernel never checks an inline reply against our receive buffer: an
 *  unsafe "inline" costs the connection, hence the conservative bounds.
 *
 *  Call side:
 *   1. RDMA_MSG inline when the whole message and the header fit the send
 *      threshold (rpcrdma_args_inline).
 *   2. Otherwise RDMA_MSG with read chunks for the largest eligible items
 *      of at least rdp_ddp_min bytes (at most rdp_max_read_chunks; RFC 8267
 *      6.4.2 and older kernels: one), the length word inline, the XDR pad
 *      in neither place - when the reduced message fits.
 *   3. Otherwise RDMA_NOMSG with one position-zero read chunk holding the
 *      whole message (Linux rpcrdma_areadch: no DDP in a Long call).
 *
 * Header budgets count every chunk at rdp_max_segs segments, the most a
 * registration may need; Linux budgets 52 + 24 * maxsegs for calls (28
 * fixed + maxsegs read segments + a spare one) and 36 + 16 * maxsegs for
 * replies (a reply with one write chunk), the exact sizes are below.
 */
#include <stddef.h>
#include <stdint.h>

#include "chunking.h"

size_t chk_rdma_hdr_len(unsigned nread_segs, unsigned nwchunks, unsigned segs_per_wchunk,
			bool reply_chunk, unsigned reply_segs)
{
	size_t n = 16;					/* xid, vers, credit, proc */

	n += (size_t)nread_segs * (4 + 4 + 16) + 4;	/* read list: disc, position, segment */
	n += (size_t)nwchunks * (4 + 4 + 16 * (size_t)segs_per_wchunk) + 4;
	n += 4;						/* reply chunk discriminator */
	if (reply_chunk)
		n += 4 + 16 * (size_t)reply_segs;
	return n;
}

void chk_rdma_params_default(struct chk_rdma_params *p)
{
	p->rdp_send_threshold = 4096;
	p->rdp_recv_threshold = 4096;
	p->rdp_max_segs = 8;
	p->rdp_ddp_min = 1024;
	p->rdp_max_read_chunks = 1;
	p->rdp_max_write_chunks = 1;
	p->rdp_reply_hdr_max = 24 + RPC_AUTH_MAX_BODY;
	p->rdp_reply_cap = 1024 * 1024 + 4096;
}

static uint32_t clamp32(size_t v, uint32_t cap)
{
	return v > cap ? cap : (uint32_t)v;
}

static void decide_reply(const struct chk_call_walk *cw, const struct chk_rdma_params *p,
			 struct chk_decision *dc)
{
	unsigned maxw = p->rdp_max_write_chunks, k = 0, i;
	size_t full, reduced, hdr;
	bool ddp = cw->cw_noddp == CHK_NODDP_NO;

	if (maxw > CHK_MAX_WRITE_CHUNKS)
		maxw = CHK_MAX_WRITE_CHUNKS;
	dc->dc_reply_unbounded = cw->cw_res_unbounded;
	if (!cw->cw_res_unbounded) {
		full = cw->cw_res_max + p->rdp_reply_hdr_max;
		if (full < cw->cw_res_max)
			full = SIZE_MAX;
		dc->dc_reply_max = full;
		/* 1. the whole reply inline */
		if (full + chk_rdma_hdr_len(0, 0, 0, false, 0) <= p->rdp_recv_threshold)
			return;
		/* 2. write chunks for a prefix of the eligible results */
		if (ddp) {
			for (i = 0; i < cw->cw_nreply && i < maxw; i++) {
				/* Linux 6.1 nfsd RDMA-Writes an NFSv4 READLINK result
				 * from its length word instead of its text (measured in
				 * the VM: chunk = length word + text shifted by 4), and
				 * the Linux client never offers a Write chunk for
				 * READLINK.  The Write chunk prefix ends before it; the
				 * reply chunk below carries the reply when needed. */
				if (cw->cw_vers == 4 && cw->cw_reply[i].it_kind == CHK_DDP_READLINK_PATH)
					break;
				if (cw->cw_reply[i].it_len >= p->rdp_ddp_min)
					k = i + 1;
			}
			reduced = full;
			for (i = 0; i < k; i++)
				reduced -= xdr_round4(cw->cw_reply[i].it_len);
			hdr = chk_rdma_hdr_len(0, k, p->rdp_max_segs, false, 0);
			if (k > 0 && reduced + hdr <= p->rdp_recv_threshold) {
				dc->dc_nwrites = k;
				for (i = 0; i < k; i++)
					dc->dc_write_len[i] =
						clamp32(cw->cw_reply[i].it_len, p->rdp_reply_cap);
				return;
			}
		}
		/* 3. reply chunk sized from the bound; a server writing more
		 * than the cap answers ERR_CHUNK, it does not drop us. */
		dc->dc_reply_chunk = true;
		dc->dc_reply_len = clamp32(full, p->rdp_reply_cap);
		return;
	}
	dc->dc_reply_max = SIZE_MAX;
	dc->dc_reply_chunk = true;
	dc->dc_reply_len = p->rdp_reply_cap;
}

bool chk_decide(const struct chk_call_walk *cw, size_t msg_pos, size_t msg_len,
		const struct chk_rdma_params *p, struct chk_decision *dc)
{
	unsigned maxr = p->rdp_max_read_chunks, nsel = 0, i, j, m;
	unsigned wsegs = p->rdp_max_segs, rsegs = p->rdp_max_segs;
	int sel[CHK_MAX_READ_CHUNKS];
	size_t hdr, reduced;

	dc->dc_proc = RPCRDMA_MSG;
	dc->dc_nreads = 0;
	dc->dc_call_inline = msg_len;
	dc->dc_nwrites = 0;
	dc->dc_reply_chunk = false;
	dc->dc_reply_len = 0;
	dc->dc_reply_unbounded = false;
	dc->dc_reply_max = 0;
	if (maxr > CHK_MAX_READ_CHUNKS)
		maxr = CHK_MAX_READ_CHUNKS;

	decide_reply(cw, p, dc);

	/* 1. the whole call inline */
	hdr = chk_rdma_hdr_len(0, dc->dc_nwrites, wsegs, dc->dc_reply_chunk, rsegs);
	dc->dc_call_hdr_max = hdr;
	if (hdr > p->rdp_send_threshold)
		return false;
	if (msg_len + hdr <= p->rdp_send_threshold)
		return true;

	/* 2. read chunks for the largest eligible items */
	if (cw->cw_noddp == CHK_NODDP_NO && maxr > 0) {
		for (i = 0; i < cw->cw_ncall; i++) {
			const struct chk_item *it = &cw->cw_call[i];

			if (it->it_len < p->rdp_ddp_min || it->it_pos < msg_pos ||
			    it->it_pos - msg_pos > UINT32_MAX)
				continue;
			if (nsel < maxr) {
				sel[nsel++] = (int)i;
				continue;
			}
			/* replace the smallest selected one if this is larger */
			m = 0;
			for (j = 1; j < nsel; j++)
				if (cw->cw_call[sel[j]].it_len < cw->cw_call[sel[m]].it_len)
					m = j;
			if (cw->cw_call[sel[m]].it_len < it->it_len)
				sel[m] = (int)i;
		}
		/* chunks go in position order */
		for (i = 1; i < nsel; i++)
			for (j = i; j > 0 && sel[j - 1] > sel[j]; j--) {
				int t = sel[j];

				sel[j] = sel[j - 1];
				sel[j - 1] = t;
			}
		reduced = msg_len;
		for (i = 0; i < nsel; i++)
			reduced -= xdr_round4(cw->cw_call[sel[i]].it_len);
		hdr = chk_rdma_hdr_len(nsel * rsegs, dc->dc_nwrites, wsegs,
				       dc->dc_reply_chunk, rsegs);
		if (nsel > 0 && reduced + hdr <= p->rdp_send_threshold) {
			for (i = 0; i < nsel; i++) {
				const struct chk_item *it = &cw->cw_call[sel[i]];

				dc->dc_reads[i].rdc_pos = (uint32_t)(it->it_pos - msg_pos);
				dc->dc_reads[i].rdc_len = it->it_len;
				dc->dc_reads[i].rdc_item = sel[i];
			}
			dc->dc_nreads = nsel;
			dc->dc_call_inline = reduced;
			dc->dc_call_hdr_max = hdr;
			return true;
		}
	}

	/* 3. Long call: the whole message in a position-zero read chunk */
	if (msg_len > UINT32_MAX)
		return false;
	dc->dc_proc = RPCRDMA_NOMSG;
	dc->dc_nreads = 1;
	dc->dc_reads[0].rdc_pos = 0;
	dc->dc_reads[0].rdc_len = (uint32_t)msg_len;
	dc->dc_reads[0].rdc_item = -1;
	dc->dc_call_inline = 0;
	dc->dc_call_hdr_max = chk_rdma_hdr_len(rsegs, dc->dc_nwrites, wsegs,
					       dc->dc_reply_chunk, rsegs);
	return dc->dc_call_hdr_max <= p->rdp_send_threshold;
}

unsigned chk_decision_inline_spans(const struct chk_decision *dc, size_t msg_pos,
				   size_t msg_len, struct xdr_span *spans, unsigned cap)
{
	size_t from = msg_pos, end = msg_pos + msg_len;
	unsigned i, n = 0;

	if (dc->dc_proc != RPCRDMA_MSG)
		return 0;
	for (i = 0; i < dc->dc_nreads && n < cap; i++) {
		size_t at = msg_pos + dc->dc_reads[i].rdc_pos;

		if (at > from) {
			spans[n].xs_pos = from;
			spans[n].xs_len = at - from;
			n++;
		}
		from = at + xdr_round4(dc->dc_reads[i].rdc_len);
	}
	if (from < end && n < cap) {
		spans[n].xs_pos = from;
		spans[n].xs_len = end - from;
		n++;
	}
	return n;
}
