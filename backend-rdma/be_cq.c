// SPDX-License-Identifier: MIT
/*
 * This file contains the completion side of the backend: the CQ handler, received
 * replies (checked, then windows invalidated), long replies pulled by RDMA
 * Read, RDMA_DONE and other inline Sends.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <event2/event.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "backend.h"
#include "be_internal.h"

/* ------------------------------------------------------------------------
 * The send ring (be_internal.h): Sends in posting order, most unsignaled
 * ------------------------------------------------------------------------ */

/*
 * Signal this Send (of wrs send-queue WRs, binds included)?  Sends not
 * covered by a signaled WR hold their send buffer and room until one is
 * posted and completes, so what they may hold is bounded, and the next
 * post never waits for a completion that nothing will bring: fewer than
 * cn_send_batch of them (half the send buffers: the other half, held by
 * covered Sends, comes back with the covering completion), and never so
 * much room that a call as large as any could not be posted.
 */
bool be_send_signal(struct be_conn *cn, unsigned wrs)
{
	return cn->cn_unsig + 1 >= cn->cn_send_batch ||
	       cn->cn_unsig_wrs + wrs + cn->cn_sq_call_max > cn->cn_sq_max;
}

/* A Send was posted from send buffer sbuf: the ring holds the buffer and
 * its room until the Send is known complete. */
void be_send_push(struct be_conn *cn, unsigned sbuf, unsigned wrs, bool sig)
{
	struct be_sent *sx = &cn->cn_ring[cn->cn_ring_tail % cn->cn_nsend];
	struct be_stats *st = &cn->cn_ctx->cx_stats;

	sx->sx_sbuf = (uint16_t)sbuf;
	sx->sx_wrs = (uint16_t)wrs;
	cn->cn_sbuf_seq[sbuf] = cn->cn_ring_tail++;
	cn->cn_sq_used += wrs;
	if (sig) {
		cn->cn_sig_out++;
		cn->cn_unsig = cn->cn_unsig_wrs = 0;
		st->bs_sends_signaled++;
	} else {
		cn->cn_unsig++;
		cn->cn_unsig_wrs += wrs;
		st->bs_sends_unsignaled++;
	}
}

/* The ring's state before a batch's pushes, to go back to if the batch's
 * post fails (be_call.c): what be_send_push() changes, nothing else. */
void be_send_mark(const struct be_conn *cn, struct be_send_mark *m)
{
	const struct be_stats *st = &cn->cn_ctx->cx_stats;

	*m = (struct be_send_mark){ cn->cn_ring_tail, cn->cn_sq_used, cn->cn_sig_out,
				    cn->cn_unsig, cn->cn_unsig_wrs, st->bs_sends_signaled,
				    st->bs_sends_unsignaled };
}

void be_send_rewind(struct be_conn *cn, const struct be_send_mark *m)
{
	struct be_stats *st = &cn->cn_ctx->cx_stats;

	cn->cn_ring_tail = m->smk_tail;
	cn->cn_sq_used = m->smk_sq_used;
	cn->cn_sig_out = m->smk_sig_out;
	cn->cn_unsig = m->smk_unsig;
	cn->cn_unsig_wrs = m->smk_unsig_wrs;
	st->bs_sends_signaled = m->smk_signaled;
	st->bs_sends_unsignaled = m->smk_unsignaled;
}

/* A WR completed (or was flushed) after every Send of ring count < end:
 * those are complete (an RC send queue completes in order), their buffers
 * and room free.  Each Send once: counts below cn_ring_head are gone. */
static void send_release(struct be_conn *cn, uint32_t end)
{
	unsigned left;

	while (cn->cn_ring_head != cn->cn_ring_tail && (int32_t)(end - cn->cn_ring_head) > 0) {
		const struct be_sent *sx = &cn->cn_ring[cn->cn_ring_head++ % cn->cn_nsend];

		cn->cn_sfree[cn->cn_nsfree++] = sx->sx_sbuf;
		cn->cn_sq_used -= sx->sx_wrs;
	}
	left = cn->cn_ring_tail - cn->cn_ring_head;
	if (cn->cn_unsig > left) {	/* a flush passed the last signaled WR */
		cn->cn_unsig = left;
		cn->cn_unsig_wrs = 0;
		for (uint32_t c = cn->cn_ring_head; c != cn->cn_ring_tail; c++)
			cn->cn_unsig_wrs += cn->cn_ring[c % cn->cn_nsend].sx_wrs;
	}
}

/* ------------------------------------------------------------------------
 * Completions
 * ------------------------------------------------------------------------ */

/* Reply checked: invalidate what the server did not, then complete. */
static void call_invalidate(struct be_conn *cn, struct be_call *ca, uint32_t remote_inv_rkey,
			    bool remote_inv)
{
	struct be_ctx *ctx = cn->cn_pool->bp_ctx;
	struct ibv_send_wr wrs[BE_MAX_CALL_SEGS], *bad;
	unsigned i, n = 0;

	be_call_set_state(ca, CS_INVALIDATING);
	be_call_dereg_mrs(ca);
	for (i = 0; i < ca->rq_nreg; i++) {
		struct be_mw *mw = ca->rq_reg[i].rk_mw;

		if (!mw)
			continue;
		if (remote_inv && mw->mw_rkey == remote_inv_rkey) {
			ctx->cx_stats.bs_remote_inv++;
			ca->rq_reply.br_remote_inv = true;
			remote_inv = false;	/* one key only */
			continue;
		}
		memset(&wrs[n], 0, sizeof(wrs[n]));
		wrs[n].wr_id = (uintptr_t)ca | WR_INV;
		wrs[n].opcode = IBV_WR_LOCAL_INV;
		wrs[n].invalidate_rkey = mw->mw_rkey;
		if (n > 0)
			wrs[n - 1].next = &wrs[n];
		n++;
	}
	if (remote_inv) {
		/* The server invalidated a key this call does not hold. */
		LOG(ERR, cn->cn_pool, "xid %08x: Send With Invalidate of foreign rkey %08x",
		    ca->rq_xid, remote_inv_rkey);
		ctx->cx_stats.bs_bad_reply++;
		be_conn_fail(cn, "remote invalidation of a foreign rkey");
		return;
	}
	/* Release the room reserved for invalidations not needed. */
	cn->cn_sq_used -= ca->rq_sq_inv - n;
	ca->rq_sq_inv = n;
	if (n > 0) {
		wrs[n - 1].send_flags = IBV_SEND_SIGNALED;
		wrs[n - 1].wr_id |= WR_SIG;
		if (be_vx()->post_send(cn->cn_qp, wrs, &bad)) {
			be_conn_fail(cn, "LOCAL_INV post failed");
			return;
		}
		ca->rq_inv_pending = 1;	/* one signaled WR ends the chain */
		/* Its completion proves every Send posted before it complete. */
		ca->rq_inv_cover = cn->cn_ring_tail;
		cn->cn_unsig = cn->cn_unsig_wrs = 0;
		cn->cn_sig_out++;
		ctx->cx_stats.bs_local_inv += n;
	}
	be_call_try_complete(ca);
}

/*
 * No answer within the caller's timeout: the server keeps its access to
 * the call's memory as long as the windows stay bound, and the caller
 * cannot reuse the memory before the callback.  Invalidate now, as if the
 * reply had come (the Linux client resets the connection instead; this
 * keeps the other calls of the connection going).  A server that writes
 * later fails on the invalidated key and loses its connection.
 */
void be_call_abandon(struct be_req *rq)
{
	struct be_call *ca = rq ? rq->bq_post : NULL;
	struct be_conn *cn;

	if (!ca || rq->bq_state != BE_REQ_CANCELLING || ca->rq_state != CS_POSTED)
		return;
	cn = ca->rq_conn;
	if (cn->cn_state != BC_UP)
		return;		/* the reap settles it, the QP in ERR */
	cn->cn_pool->bp_ctx->cx_stats.bs_abandoned++;
	/* Its credit back, as for an unanswered CONF_RDMA: a server that
	 * dropped the call has reposted the receive; a late reply finds no
	 * call and is dropped (bs_unknown_xid). */
	be_credits_replied(&cn->cn_cr);
	memset(&ca->rq_reply, 0, sizeof(ca->rq_reply));
	ca->rq_reply.br_xid = ca->rq_xid;
	call_invalidate(cn, ca, 0, false);
	if (cn->cn_state == BC_UP)
		be_pool_pump(cn->cn_pool);
}

void be_repost_rbuf(struct be_conn *cn, struct be_rbuf *rb)
{
	struct ibv_sge sge = { (uintptr_t)rb->rb_buf, cn->cn_pool->bp_ctx->cx_cfg.bc_inline_recv,
			       cn->cn_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uintptr_t)rb | WR_RECV, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (be_vx()->post_recv(cn->cn_qp, &wr, &bad) == 0)
		be_credits_recv_posted(&cn->cn_cr, 1);
	else
		be_conn_fail(cn, "ibv_post_recv failed");
}

/*
 * Did the server invalidate a key with Send With Invalidate?  Soft-RoCE
 * (rdma_rxe, measured on 6.1) writes the kernel's IB_WC_WITH_INVALIDATE
 * (1 << 2) into user completions where libibverbs expects IBV_WC_WITH_INV
 * (1 << 3); bit 2 is IBV_WC_IP_CSUM_OK otherwise, which an RC receive never
 * carries, so either bit means "invalidated".  Getting this wrong is not
 * harmless: a LOCAL_INV of a window already invalidated oopses rxe on 6.1
 * (rxe_do_invalidate_mw dereferences the window's NULL QP).
 */
static bool wc_with_inv(const struct ibv_wc *wc)
{
	return (wc->wc_flags & (IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK)) &&
	       !(wc->wc_flags & IBV_WC_WITH_IMM);
}

/*
 * Long replies by Read list (RFC 5666 3.7, draft-ietf-nfsv4-rpcrdma-08):
 * the server registers the reply (or one large item of it) and sends only
 * the Read list; we pull it with RDMA Read into a buffer of our own, tell
 * the server with RDMA_DONE that it may release its registration, then go
 * on as with any reply.  RFC 8166 forbids this (Read list empty in
 * replies) and the Linux server never does it; older servers may.
 */
static const uint8_t zero_pad[4];

/*
 * Post the Reads of waiting long replies, each signaled, while fewer than
 * cn_read_depth are in flight (our initiator depth, or the server's
 * maxrdmaread from CCP, draft-08 6.2: exceeding it may lose the connection).
 */
static void reads_pump(struct be_conn *cn)
{
	struct be_call *ca;

	while (cn->cn_state == BC_UP && cn->cn_reads_out < cn->cn_read_depth &&
	       (ca = TAILQ_FIRST(&cn->cn_rdwait)) != NULL) {
		unsigned i = ca->rq_lr_posted;
		uint64_t off = 0;
		struct ibv_sge sge;
		struct ibv_send_wr wr, *bad;

		for (unsigned k = 0; k < i; k++)
			off += ca->rq_lr_seg[k].rs_length;
		sge = (struct ibv_sge){ (uintptr_t)ca->rq_lr_buf + off, ca->rq_lr_seg[i].rs_length,
					ca->rq_lr_mr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uintptr_t)ca | WR_READ | WR_SIG;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = ca->rq_lr_seg[i].rs_offset;
		wr.wr.rdma.rkey = ca->rq_lr_seg[i].rs_handle;
		if (be_vx()->post_send(cn->cn_qp, &wr, &bad)) {
			be_conn_fail(cn, "RDMA Read post failed");	/* the reap settles the call */
			return;
		}
		cn->cn_reads_out++;
		cn->cn_sig_out++;
		if (++ca->rq_lr_posted == ca->rq_lr_nsegs)
			TAILQ_REMOVE(&cn->cn_rdwait, ca, rq_rd_link);
	}
}

/* Start pulling; false with rq_reply.br_err set when the reply is refused. */
static bool long_reply_start(struct be_conn *cn, struct be_call *ca, struct rpcrdma_hdr *rh,
			     struct be_rbuf *rb, const struct ibv_wc *wc)
{
	struct be_ctx *ctx = cn->cn_ctx;
	uint64_t total = 0;
	uint32_t proc = rh->rh_proc;
	unsigned i, n = rh->rh_nreads;

	if (n > BE_MAX_REPLY_READS)
		goto refuse;
	for (i = 0; i < n; i++) {
		if (rh->rh_reads[i].rd_position != rh->rh_reads[0].rd_position)
			goto refuse;	/* one chunk only */
		total += rh->rh_reads[i].rd_seg.rs_length;
		ca->rq_lr_seg[i] = rh->rh_reads[i].rd_seg;
	}
	ca->rq_lr_pos = rh->rh_reads[0].rd_position;
	if (total == 0 || total > BE_MAX_LONG_REPLY || (ca->rq_lr_pos & 3) ||
	    (proc == RPCRDMA_NOMSG && ca->rq_lr_pos != 0) || proc == RPCRDMA_MSGP)
		goto refuse;
	/* Check the rest of the header as an inline reply. */
	rh->rh_nreads = 0;
	rh->rh_proc = RPCRDMA_MSG;
	if (!be_reply_check(rh, &ca->rq_plan, ca->rq_wr, ca->rq_rp, rb->rb_buf, wc->byte_len,
			    &ca->rq_reply))
		return false;
	ca->rq_reply.br_proc = proc;
	if (proc == RPCRDMA_MSG && ca->rq_lr_pos > ca->rq_reply.br_body_len)
		goto refuse;
	if (cn->cn_sq_used + n > cn->cn_sq_max)
		goto refuse;
	if (cn->cn_read_depth == 0) {
		/* draft-08 6.2: maxrdmaread 0 -> no request needing RDMA Read. */
		ctx->cx_stats.bs_read_depth_refused++;
		goto refuse;
	}
	ca->rq_lr_len = (uint32_t)total;
	ca->rq_lr_nsegs = n;
	ca->rq_lr_buf = malloc(total);
	if (!ca->rq_lr_buf)
		goto refuse;
	ca->rq_lr_mr = be_vx()->reg_mr(ctx->cx_dev[cn->cn_devidx]->dv_pd, ca->rq_lr_buf, total,
				  IBV_ACCESS_LOCAL_WRITE);
	if (!ca->rq_lr_mr)
		goto refuse;
	ca->rq_lr_remote_inv = wc_with_inv(wc);
	ca->rq_lr_inv_rkey = wc->invalidated_rkey;
	ca->rq_lr_posted = ca->rq_lr_done = 0;
	cn->cn_sq_used += n;	/* reserved now, posted as the Read depth allows */
	TAILQ_INSERT_TAIL(&cn->cn_rdwait, ca, rq_rd_link);
	be_call_set_state(ca, CS_READING);
	ctx->cx_stats.bs_long_replies++;
	reads_pump(cn);
	return true;

refuse:
	LOG(WARN, cn->cn_pool, "xid %08x: long reply (Read list, %u segments) refused", ca->rq_xid,
	    rh->rh_nreads);
	be_call_lr_free(ca);
	memset(&ca->rq_reply, 0, sizeof(ca->rq_reply));
	ca->rq_reply.br_err = BE_ERR_BAD_REPLY;	/* counted by the caller */
	return false;
}

/* One inline Send of hdr then iov from a send buffer (RDMA_DONE, backchannel
 * replies); its completion is handled as WR_DONE (the buffer goes back).
 * 0, -EMSGSIZE, -ENOBUFS (no send buffer or SQ room), -ENOTCONN. */
int be_send_inline(struct be_conn *cn, const uint8_t *hdr, size_t hlen, const struct iovec *iov,
		       unsigned niov)
{
	struct be_ctx *ctx = cn->cn_ctx;
	size_t len = hlen, cap = ctx->cx_cfg.bc_inline_send;
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	unsigned idx, i;
	uint8_t *sb;

	if (cn->cn_send_thresh && cn->cn_send_thresh < cap)
		cap = cn->cn_send_thresh;	/* RFC 8167 4.2 */
	for (i = 0; i < niov; i++)
		len += iov[i].iov_len;
	if (len > cap)
		return -EMSGSIZE;
	if (cn->cn_nsfree == 0 || cn->cn_sq_used + 1 > cn->cn_sq_max)
		return -ENOBUFS;
	idx = cn->cn_sfree[--cn->cn_nsfree];
	sb = cn->cn_mem + (size_t)cn->cn_nrecv * ctx->cx_cfg.bc_inline_recv +
	     (size_t)idx * ctx->cx_cfg.bc_inline_send;
	memcpy(sb, hdr, hlen);
	len = hlen;
	for (i = 0; i < niov; i++) {
		memcpy(sb + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	sge = (struct ibv_sge){ (uintptr_t)sb, (uint32_t)len, cn->cn_mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uint64_t)idx << 48 | (uintptr_t)cn | WR_DONE | WR_SIG;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (be_vx()->post_send(cn->cn_qp, &wr, &bad)) {
		cn->cn_sfree[cn->cn_nsfree++] = idx;
		be_conn_fail(cn, "inline send post failed");
		return -ENOTCONN;
	}
	be_send_push(cn, idx, 1, true);	/* signaled: a drain waits for it */
	return 0;
}

/* RDMA_DONE for xid: a Send with the fixed header only. */
static void send_done(struct be_conn *cn, uint32_t xid)
{
	struct be_ctx *ctx = cn->cn_ctx;
	uint8_t hdr[16];

	chk_put_be32(hdr, xid);
	chk_put_be32(hdr + 4, RPCRDMA_VERSION);
	chk_put_be32(hdr + 8, ctx->cx_cfg.bc_credits);
	chk_put_be32(hdr + 12, RPCRDMA_DONE);
	switch (be_send_inline(cn, hdr, sizeof(hdr), NULL, 0)) {
	case 0:
		ctx->cx_stats.bs_rdma_done++;
		break;
	case -ENOBUFS:
		LOG(WARN, cn->cn_pool, "xid %08x: no room for RDMA_DONE", xid);
		ctx->cx_stats.bs_marshal_errors++;
		break;
	default:	/* the connection failed: its reap settles the call */
		break;
	}
}

/* The Reads are in: splice the body, RDMA_DONE, then as any reply. */
static void long_reply_done(struct be_conn *cn, struct be_call *ca)
{
	struct be_reply *r = &ca->rq_reply;
	struct iovec in = r->br_body[0];

	cn->cn_sq_used -= ca->rq_lr_nsegs;
	ca->rq_lr_nsegs = 0;
	be_vx()->dereg_mr(ca->rq_lr_mr);
	ca->rq_lr_mr = NULL;
	if (r->br_proc == RPCRDMA_NOMSG) {
		r->br_body[0] = (struct iovec){ ca->rq_lr_buf, ca->rq_lr_len };
		r->br_nbody = 1;
		r->br_body_len = ca->rq_lr_len;
	} else {
		/* inline up to the position, the item, its pad, the rest */
		r->br_nbody = 0;
		r->br_body[r->br_nbody++] = (struct iovec){ in.iov_base, ca->rq_lr_pos };
		r->br_body[r->br_nbody++] = (struct iovec){ ca->rq_lr_buf, ca->rq_lr_len };
		if (xdr_pad(ca->rq_lr_len))
			r->br_body[r->br_nbody++] = (struct iovec){ (void *)zero_pad,
								    xdr_pad(ca->rq_lr_len) };
		r->br_body[r->br_nbody++] = (struct iovec){ (uint8_t *)in.iov_base + ca->rq_lr_pos,
							    in.iov_len - ca->rq_lr_pos };
		r->br_body_len = in.iov_len + xdr_round4(ca->rq_lr_len);
	}
	send_done(cn, ca->rq_xid);
	if (cn->cn_state == BC_DEAD)
		return;
	call_invalidate(cn, ca, ca->rq_lr_inv_rkey,
			ca->rq_lr_remote_inv && ca->rq_nreg == 1 && ca->rq_reg[0].rk_mw);
	if (cn->cn_state == BC_UP)
		be_pool_pump(cn->cn_pool);
}

static void on_recv(struct be_conn *cn, struct be_rbuf *rb, const struct ibv_wc *wc)
{
	struct be_pool *pool = cn->cn_pool;
	struct be_ctx *ctx = pool->bp_ctx;
	struct rpcrdma_hdr *rh = &ctx->cx_rx;
	enum rpcrdma_hdr_err herr = RPCRDMA_HDR_OK;
	struct be_call *ca;
	bool ok;

	be_credits_recv_used(&cn->cn_cr);
	now(&cn->cn_last_rx);
	ok = rpcrdma_hdr_decode(rb->rb_buf, wc->byte_len, &ctx->cx_lim, rh, &herr);
	if (wc->byte_len < 16) {
		ctx->cx_stats.bs_bad_reply++;
		LOG(WARN, pool, "short message (%u bytes) dropped", wc->byte_len);
		be_repost_rbuf(cn, rb);
		return;
	}
	if (ok && herr == RPCRDMA_HDR_BAD_ERRCODE) {
		/* RFC 8166 4.5: an RDMA_ERROR we cannot decode is discarded. */
		ctx->cx_stats.bs_bad_reply++;
		LOG(WARN, pool, "xid %08x: RDMA_ERROR with unknown code %u dropped", rh->rh_xid, rh->rh_err);
		be_repost_rbuf(cn, rb);
		return;
	}
	if (ok) {
		bool chunks;

		/* The direction field first (RFC 8167 4.1): a server's CALL may
		 * reuse an XID of ours, and its credit field is a request. */
		if (be_bc_is_call(rh, rb->rb_buf, wc->byte_len, &chunks)) {
			be_bc_recv(cn, rb, rh, wc->byte_len, chunks);
			return;
		}
	}
	TAILQ_FOREACH(ca, &cn->cn_calls, rq_link)
		if (ca->rq_xid == rh->rh_xid && ca->rq_state == CS_POSTED)
			break;
	if (ok && rh->rh_proc != RPCRDMA_ERROR)
		be_credits_grant(&cn->cn_cr, rh->rh_credit);
	if (!ca) {
		ctx->cx_stats.bs_unknown_xid++;
		LOG(WARN, pool, "xid %08x: no such call (proc %u, %u bytes), dropped", rh->rh_xid,
		    rh->rh_proc, wc->byte_len);
		be_repost_rbuf(cn, rb);
		be_pool_pump(pool);
		return;
	}
	if (!ca->rq_ccp_abandoned)	/* else given back at the CCP timeout */
		be_credits_replied(&cn->cn_cr);
	pool->bp_slots[cn->cn_slot].sl_backoff_ms = 0;	/* the connection works */
	ca->rq_rbuf = rb;
	cn->cn_refs++;
	memset(&ca->rq_reply, 0, sizeof(ca->rq_reply));
	if (!ok) {
		ctx->cx_stats.bs_bad_reply++;
		LOG(WARN, pool, "xid %08x: undecodable reply: %s", ca->rq_xid, rpcrdma_hdr_err_str(herr));
		memset(&ca->rq_reply, 0, sizeof(ca->rq_reply));
		ca->rq_reply.br_err = BE_ERR_BAD_REPLY;
	} else if (rh->rh_nreads > 0 && rh->rh_proc != RPCRDMA_ERROR &&
		   long_reply_start(cn, ca, rh, rb, wc)) {
		return;		/* goes on in long_reply_done() */
	} else if (ca->rq_reply.br_err != BE_OK || !be_reply_check(rh, &ca->rq_plan, ca->rq_wr,
								 ca->rq_rp, rb->rb_buf,
								 wc->byte_len, &ca->rq_reply)) {
		switch (ca->rq_reply.br_err) {
		case BE_ERR_VERS:
			ctx->cx_stats.bs_err_vers++;
			LOG(ERR, pool, "xid %08x: server refuses RPC-over-RDMA version 1 (ERR_VERS, it "
				  "speaks %u..%u): giving up on this server", ca->rq_xid,
			    ca->rq_reply.br_vers_low, ca->rq_reply.br_vers_high);
			pool->bp_fatal = true;
			break;
		case BE_ERR_CHUNK:
			ctx->cx_stats.bs_err_chunk++;
			LOG(WARN, pool, "xid %08x: RDMA_ERROR ERR_CHUNK", ca->rq_xid);
			break;
		case BE_ERR_OVERRUN:
			ctx->cx_stats.bs_write_overrun++;
			LOG(WARN, pool, "xid %08x: chunk lengths beyond what was offered", ca->rq_xid);
			break;
		default:
			ctx->cx_stats.bs_bad_reply++;
			LOG(WARN, pool, "xid %08x: bad reply: %s", ca->rq_xid, be_err_str(ca->rq_reply.br_err));
			break;
		}
	}
	ca->rq_reply.br_xid = ca->rq_xid;
	/* Remote invalidation only counts for a call with exactly one key. */
	call_invalidate(cn, ca, wc->invalidated_rkey,
			wc_with_inv(wc) && ca->rq_nreg == 1 && ca->rq_reg[0].rk_mw);
	if (pool->bp_fatal) {
		be_conn_fail(cn, "ERR_VERS");
		if (pool->bp_event_cb)
			pool->bp_event_cb(pool, BE_POOL_FATAL, pool->bp_event_arg);
		return;
	}
	if (cn->cn_state == BC_UP)
		be_pool_pump(pool);
}

/*
 * A send-queue completion on a DEAD connection (draining, success or flush
 * error; in the error state every outstanding WR is flushed with a
 * completion, signaled or not): give back what this WR and the Sends
 * before it held, once -- send buffers, send-queue room -- and nothing
 * else.  Calls are settled by be_conn_reap() alone, so a completion never
 * settles a call a second time.
 */
static void wc_release(struct be_conn *cn, unsigned tag, struct be_call *ca, uint64_t wr_id)
{
	switch (tag) {
	case WR_SEND:
	case WR_DONE:
		send_release(cn, cn->cn_sbuf_seq[WR_SBUF(wr_id)] + 1);
		break;
	case WR_INV:
		ca->rq_inv_pending = 0;
		cn->cn_sq_used -= ca->rq_sq_inv;
		ca->rq_sq_inv = 0;
		send_release(cn, ca->rq_inv_cover);
		break;
	case WR_READ:
		cn->cn_reads_out--;
		break;
	default:
		break;	/* receives: the connection's own memory; binds: unsignaled */
	}
}

void be_on_wc(struct be_conn *cn, const struct ibv_wc *wc)
{
	struct be_ctx *ctx = cn->cn_pool->bp_ctx;
	void *p = (void *)(uintptr_t)(wc->wr_id & WR_PTR_MASK);
	unsigned tag = wc->wr_id & WR_TAG_MASK;
	struct be_call *ca = p;

	if ((wc->wr_id & WR_SIG) && cn->cn_sig_out > 0)
		cn->cn_sig_out--;
	if (tag == WR_RECV)
		ctx->cx_stats.bs_rq_completions++;
	else
		ctx->cx_stats.bs_sq_completions++;
	if (wc->status != IBV_WC_SUCCESS || cn->cn_state == BC_DEAD) {
		if (wc->status == IBV_WC_WR_FLUSH_ERR) {
			ctx->cx_stats.bs_flushed++;
		} else if (wc->status != IBV_WC_SUCCESS) {
			ctx->cx_stats.bs_wc_errors++;
			LOG(WARN, cn->cn_pool, "completion error: %s (opcode %d, tag %u, vendor %u)",
			    ibv_wc_status_str(wc->status), wc->opcode, tag, wc->vendor_err);
		}
		wc_release(cn, tag, ca, wc->wr_id);
		if (cn->cn_state != BC_DEAD)
			be_conn_fail(cn, "completion error");
		else if (cn->cn_draining && cn->cn_sig_out == 0)
			event_active(cn->cn_reap_ev, 0, 0);	/* drained */
		return;
	}
	switch (tag) {
	case WR_RECV:
		on_recv(cn, p, wc);
		break;
	case WR_SEND:
	case WR_DONE:
		/* Signaled: this Send and every one posted before it are done. */
		send_release(cn, cn->cn_sbuf_seq[WR_SBUF(wc->wr_id)] + 1);
		be_pool_pump(cn->cn_pool);
		break;
	case WR_READ:
		cn->cn_reads_out--;
		if (++ca->rq_lr_done == ca->rq_lr_nsegs)
			long_reply_done(cn, ca);
		reads_pump(cn);
		break;
	case WR_INV:
		ca->rq_inv_pending = 0;
		cn->cn_sq_used -= ca->rq_sq_inv;
		ca->rq_sq_inv = 0;
		send_release(cn, ca->rq_inv_cover);
		be_call_try_complete(ca);
		be_pool_pump(cn->cn_pool);
		break;
	default:
		/* Binds are unsignaled: only errors come here (handled above). */
		break;
	}
}

/* Polls cn's CQ to empty; the number of completions handled.  Handling one
 * never frees a connection (teardown is its reap event's), so cn and the
 * parked list stay valid. */
static unsigned cq_drain(struct be_conn *cn)
{
	struct ibv_wc wc[16];
	unsigned total = 0;
	int n, i;

	/* Draining: completions keep coming until the last signaled WR. */
	while (cn->cn_cq && (cn->cn_state != BC_DEAD || cn->cn_draining) &&
	       (n = be_vx()->poll_cq(cn->cn_cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++)
			be_on_wc(cn, &wc[i]);
		total += (unsigned)n;
	}
	return total;
}

void be_cq_unpark(struct be_conn *cn)
{
	if (cn->cn_parked) {
		TAILQ_REMOVE(&cn->cn_ctx->cx_parked, cn, cn_park_link);
		cn->cn_parked = false;
	}
}

void be_on_cq(evutil_socket_t fd, short what, void *arg)
{
	struct be_conn *cn = arg;
	struct ibv_cq *cq;
	void *cqctx;

	(void)fd;
	(void)what;
	if (be_vx()->get_cq_event(cn->cn_cc, &cq, &cqctx) == 0) {
		cn->cn_ctx->cx_stats.bs_cq_wakeups++;
		be_vx()->ack_cq_events(cq, 1);
		if (!cn->cn_ctx->cx_prewait) {
			be_vx()->req_notify_cq(cq, 0);
		} else if (!cn->cn_parked) {
			/* Re-armed by be_ctx_prewait() once a poll finds it empty:
			 * while calls keep coming, the loop's passes poll it and
			 * its completions need no event (a read and a re-arm,
			 * two system calls on Soft-RoCE, and a wake-up). */
			TAILQ_INSERT_TAIL(&cn->cn_ctx->cx_parked, cn, cn_park_link);
			cn->cn_parked = true;
		}
	}
	/* Poll to empty (after the re-arm, when there is one here): nothing
	 * is left behind. */
	cq_drain(cn);
}

bool be_ctx_prewait(struct be_ctx *ctx)
{
	struct be_conn *cn, *next;
	bool busy = false;

	ctx->cx_prewait = true;
	/* The pass's calls go first: the replies that come in while their
	 * doorbell's system call runs the requester are then found by the
	 * poll below, not by an event once the loop blocks. */
	be_ctx_pump_due(ctx);
	for (cn = TAILQ_FIRST(&ctx->cx_parked); cn; cn = next) {
		next = TAILQ_NEXT(cn, cn_park_link);
		if (cq_drain(cn)) {
			busy = true;	/* stays parked: the next pass polls again */
			continue;
		}
		be_cq_unpark(cn);
		if (!cn->cn_cq)
			continue;
		be_vx()->req_notify_cq(cn->cn_cq, 0);
		/* A completion between the poll and the arm raised no event. */
		if (cq_drain(cn))
			busy = true;
	}
	/* Then the calls those completions let go (credits given back). */
	be_ctx_pump_due(ctx);
	return busy || !TAILQ_EMPTY(&ctx->cx_pump_due);
}
