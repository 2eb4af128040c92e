// SPDX-License-Identifier: MIT
/*
 * This file contains the life of a backend call: submit, queue, post (marshal
 * and Send), finish, cancel and release, and the pump that moves queued
 * calls onto connections with credit.
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

static const char *const call_state_names[] = { "QUEUED", "POSTED", "INVALIDATING", "DONE",
						"READING" };

/* ------------------------------------------------------------------------
 * Calls: state, completion, registration
 * ------------------------------------------------------------------------ */
void be_call_set_state(struct be_call *ca, enum be_call_state st)
{
	static const bool ok[5][5] = {
		/* to:        QUEUED POSTED INVAL  DONE   READING */
		[CS_QUEUED] = { false, true, false, true, false },
		[CS_POSTED] = { true, false, true, true, true },
		[CS_INVALIDATING] = { false, false, false, true, false },
		[CS_DONE] = { false, false, false, false, false },
		[CS_READING] = { true, false, true, false, false },
	};

	if (!ok[ca->rq_state][st]) {
		LOG(ERR, ca->rq_pool, "xid %08x: bad transition %s -> %s", ca->rq_xid,
		    call_state_names[ca->rq_state], call_state_names[st]);
		abort();	/* broken invariant */
	}
	ca->rq_state = st;
}

void be_call_lr_free(struct be_call *ca)
{
	if (ca->rq_lr_mr)
		be_vx()->dereg_mr(ca->rq_lr_mr);
	ca->rq_lr_mr = NULL;
	free(ca->rq_lr_buf);
	ca->rq_lr_buf = NULL;
}

void be_call_free(struct be_call *ca)
{
	struct be_ctx *ctx = ca->rq_ctx;

	be_call_lr_free(ca);
	/* Kept on the context, which outlives pools (a reply may be released
	 * after its pool is gone): up to two windows' worth of calls, so steady
	 * traffic never allocates; a burst beyond that is given back. */
	if (ctx->cx_ncached < 2 * ctx->cx_cfg.bc_credits * ctx->cx_cfg.bc_conns) {
		ca->rq_cache_next = ctx->cx_call_cache;
		ctx->cx_call_cache = ca;
		ctx->cx_ncached++;
		return;
	}
	free(ca);
}

/* Give the call's send buffer back. */
void be_call_put_sbuf(struct be_call *ca)
{
	struct be_conn *cn = ca->rq_conn;

	if (ca->rq_sbuf >= 0 && cn) {
		cn->cn_sfree[cn->cn_nsfree++] = (unsigned)ca->rq_sbuf;
		ca->rq_sbuf = -1;
	}
}

/* Per-call MRs: deregistration is the invalidation. */
void be_call_dereg_mrs(struct be_call *ca)
{
	unsigned i;

	for (i = 0; i < ca->rq_nreg; i++) {
		if (ca->rq_reg[i].rk_mr) {
			be_vx()->dereg_mr(ca->rq_reg[i].rk_mr);
			ca->rq_reg[i].rk_mr = NULL;
		}
	}
}

/* Windows back to the connection's free list (after invalidation). */
void be_call_free_mws(struct be_call *ca)
{
	struct be_conn *cn = ca->rq_conn;
	unsigned i;

	for (i = 0; i < ca->rq_nreg; i++) {
		struct be_mw *mw = ca->rq_reg[i].rk_mw;

		if (mw) {
			mw->mw_next = cn->cn_mwfree;
			cn->cn_mwfree = mw;
			ca->rq_reg[i].rk_mw = NULL;
		}
	}
	ca->rq_nreg = 0;
}

/* A refused submit may succeed now: tell the caller from the event loop. */
static void pool_room_check(struct be_pool *pool)
{
	if (pool->bp_room_wanted && !pool->bp_freeing &&
	    pool->bp_nqueued < pool->bp_ctx->cx_cfg.bc_max_queue)
		event_active(pool->bp_room_ev, 0, 0);
}

void be_pool_room_cb(evutil_socket_t fd, short what, void *arg)
{
	struct be_pool *pool = arg;

	(void)fd;
	(void)what;
	if (!pool->bp_room_wanted || pool->bp_freeing ||
	    pool->bp_nqueued >= pool->bp_ctx->cx_cfg.bc_max_queue)
		return;
	pool->bp_room_wanted = false;
	if (pool->bp_event_cb)
		pool->bp_event_cb(pool, BE_POOL_ROOM, pool->bp_event_arg);
}

/* Final step: the callback (a call cancelled on the wire learns here that
 * its memory is free: BE_ERR_CANCELLED). */
static void call_finish(struct be_call *ca, enum be_err err)
{
	struct be_pool *pool = ca->rq_pool;
	struct be_ctx *ctx = pool->bp_ctx;

	pool_room_check(pool);	/* its XID is free again */

	if (err != BE_OK)
		ca->rq_reply.br_err = err;
	if (ca->rq_cancelled)
		ca->rq_reply.br_err = BE_ERR_CANCELLED;
	ca->rq_reply.br_xid = ca->rq_xid;
	be_call_set_state(ca, CS_DONE);
	ctx->cx_stats.bs_replies++;
	if (!ca->rq_cb) {
		be_call_release(ca);
		return;
	}
	ca->rq_cb(ca, &ca->rq_reply, ca->rq_arg);
}

/* A call on a connection: complete it when reply, invalidation and Send
 * completion are all in. */
void be_call_try_complete(struct be_call *ca)
{
	struct be_conn *cn = ca->rq_conn;

	if (ca->rq_state != CS_INVALIDATING || ca->rq_inv_pending || !ca->rq_send_done)
		return;
	TAILQ_REMOVE(&cn->cn_calls, ca, rq_link);
	ca->rq_pool->bp_ninflight--;
	be_call_free_mws(ca);
	if (cn->cn_ka == ca)
		cn->cn_ka = NULL;
	if (cn->cn_ccp_call == ca)
		cn->cn_ccp_call = NULL;
	call_finish(ca, BE_OK);
}

/* Fail a call that is not on a connection (QUEUED). */
void be_call_fail_queued(struct be_call *ca, enum be_err err)
{
	memset(&ca->rq_reply, 0, sizeof(ca->rq_reply));
	call_finish(ca, err);
}

/* Same, but the callback comes from the event loop: never from inside
 * be_call_submit() (the caller must get its handle before the callback). */
static void call_fail_later(struct be_call *ca, enum be_err err)
{
	struct be_pool *pool = ca->rq_pool;

	memset(&ca->rq_reply, 0, sizeof(ca->rq_reply));
	ca->rq_reply.br_err = err;
	ca->rq_failed = true;
	TAILQ_INSERT_TAIL(&pool->bp_failed, ca, rq_link);
	event_active(pool->bp_fail_ev, 0, 0);
}

void be_pool_failed_cb(evutil_socket_t fd, short what, void *arg)
{
	struct be_pool *pool = arg;
	struct be_call *ca;

	(void)fd;
	(void)what;
	while ((ca = TAILQ_FIRST(&pool->bp_failed)) != NULL) {
		TAILQ_REMOVE(&pool->bp_failed, ca, rq_link);
		ca->rq_failed = false;
		call_finish(ca, ca->rq_reply.br_err);
	}
}

void be_call_release(struct be_call *ca)
{
	struct be_conn *cn;

	if (!ca)
		return;
	cn = ca->rq_conn;
	if (ca->rq_rbuf && cn) {
		struct be_rbuf *rb = ca->rq_rbuf;

		ca->rq_rbuf = NULL;
		if (cn->cn_state == BC_UP) {
			struct ibv_sge sge = { (uintptr_t)rb->rb_buf, cn->cn_ctx->cx_cfg.bc_inline_recv,
					       cn->cn_mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = (uintptr_t)rb | WR_RECV, .sg_list = &sge,
						  .num_sge = 1 }, *bad;

			if (be_vx()->post_recv(cn->cn_qp, &wr, &bad) == 0)
				be_credits_recv_posted(&cn->cn_cr, 1);
			else
				be_conn_fail(cn, "ibv_post_recv failed");
		}
		ca->rq_conn = NULL;
		be_call_free(ca);
		if (cn->cn_state == BC_UP) {
			be_conn_put(cn);
			be_pool_pump(cn->cn_pool);
		} else {
			be_conn_put(cn);
		}
		return;
	}
	be_call_free(ca);
}

bool be_call_cancel(struct be_call *ca)
{
	struct be_pool *pool;

	if (!ca || ca->rq_state == CS_DONE)
		return false;
	pool = ca->rq_pool;
	if (ca->rq_failed) {		/* never posted: its callback was due */
		TAILQ_REMOVE(&pool->bp_failed, ca, rq_link);
		be_call_free(ca);
		return true;
	}
	if (ca->rq_state == CS_QUEUED) {	/* never posted: gone, no callback */
		TAILQ_REMOVE(&pool->bp_queue, ca, rq_link);
		pool->bp_nqueued--;
		be_call_free(ca);
		pool_room_check(pool);
		return true;
	}
	/* On a connection: the server may still access its memory.  The
	 * callback comes once every registration is invalidated (reply in, or
	 * the connection's QP in ERR), with BE_ERR_CANCELLED. */
	ca->rq_cancelled = true;
	return false;
}

/* Windows first, then the Send: one ibv_post_send().  0, -EAGAIN (no room:
 * stays queued), or another -errno (call failed). */
int be_call_post(struct be_conn *cn, struct be_call *ca)
{
	struct be_pool *pool = cn->cn_pool;
	struct be_ctx *ctx = pool->bp_ctx;
	struct be_plan *p = &ca->rq_plan;
	struct ibv_send_wr binds[BE_MAX_CALL_SEGS + 1], *send, *bad;
	struct ibv_sge sge;
	unsigned nbinds = 0, i, nspans, need;
	uint8_t *sb;
	long len;
	int rc;

	rc = be_plan_call(&ca->rq_desc, cn->cn_send_thresh, ctx->cx_cfg.bc_max_seg_len, p);
	if (rc < 0)
		return rc;
	nspans = p->pl_nreadspans + p->pl_nwspans + p->pl_nrspans;
	need = 1 + (ctx->cx_cfg.bc_reg_mode == BE_REG_MW ? 2 * nspans : 0);
	if (cn->cn_nsfree == 0 || cn->cn_sq_used + need > cn->cn_sq_max)
		return -EAGAIN;

	ca->rq_conn = cn;
	ca->rq_nreg = 0;
	for (i = 0; i < p->pl_nreadspans; i++)
		if ((rc = be_reg_span(cn, ca, &p->pl_read[i], IBV_ACCESS_REMOTE_READ, &ca->rq_rd[i],
				   binds, &nbinds)) < 0)
			goto unreg;
	for (i = 0; i < p->pl_nwspans; i++)
		if ((rc = be_reg_span(cn, ca, &p->pl_wspan[i], IBV_ACCESS_REMOTE_WRITE, &ca->rq_wr[i],
				   binds, &nbinds)) < 0)
			goto unreg;
	for (i = 0; i < p->pl_nrspans; i++)
		if ((rc = be_reg_span(cn, ca, &p->pl_rspan[i], IBV_ACCESS_REMOTE_WRITE, &ca->rq_rp[i],
				   binds, &nbinds)) < 0)
			goto unreg;

	ca->rq_sbuf = (int)cn->cn_sfree[--cn->cn_nsfree];
	sb = cn->cn_mem + (size_t)cn->cn_nrecv * ctx->cx_cfg.bc_inline_recv +
	     (size_t)ca->rq_sbuf * ctx->cx_cfg.bc_inline_send;
	len = be_marshal_call(&ca->rq_desc, p, ctx->cx_cfg.bc_credits, ca->rq_rd, ca->rq_wr,
			      ca->rq_rp, &ctx->cx_tx, sb, cn->cn_send_thresh);
	if (len < 0) {
		rc = (int)len;
		goto unsbuf;
	}
	send = &binds[nbinds];
	memset(send, 0, sizeof(*send));
	sge = (struct ibv_sge){ (uintptr_t)sb, (uint32_t)len, cn->cn_mr->lkey };
	send->wr_id = (uintptr_t)ca | WR_SEND;
	send->opcode = IBV_WR_SEND;
	send->send_flags = IBV_SEND_SIGNALED;
	send->sg_list = &sge;
	send->num_sge = 1;
	if (nbinds > 0)
		binds[nbinds - 1].next = send;
	rc = be_vx()->post_send(cn->cn_qp, binds, &bad);
	if (rc) {
		LOG(ERR, pool, "xid %08x: ibv_post_send: %s", ca->rq_xid, strerror(rc));
		rc = -rc;
		goto unsbuf;
	}
	/* The provider names a window by ibv_mw.rkey, which must be the key
	 * of its current binding when the bind is posted (rxe compares it):
	 * step it forward only now that the binds are on the queue. */
	for (i = 0; i < ca->rq_nreg; i++)
		if (ca->rq_reg[i].rk_mw)
			ca->rq_reg[i].rk_mw->mw_mw->rkey = ca->rq_reg[i].rk_mw->mw_rkey;
	ca->rq_sq_binds = nbinds + 1;
	ca->rq_sq_inv = nbinds;
	cn->cn_sq_used += ca->rq_sq_binds + ca->rq_sq_inv;
	cn->cn_sig_out++;	/* the Send */
	ca->rq_send_done = false;
	ca->rq_reply_seen = false;
	ca->rq_inv_pending = 0;
	now(&ca->rq_sent_at);
	be_credits_sent(&cn->cn_cr);
	TAILQ_INSERT_TAIL(&cn->cn_calls, ca, rq_link);
	pool->bp_ninflight++;
	if (p->pl_proc == RPCRDMA_NOMSG)
		ctx->cx_stats.bs_nomsg_calls++;
	be_call_set_state(ca, CS_POSTED);
	ca->rq_sends++;
	return 0;

unsbuf:
	be_call_put_sbuf(ca);
unreg:
	/* Nothing was posted: windows are unbound, their keys unchanged. */
	for (i = 0; i < ca->rq_nreg; i++)
		if (ca->rq_reg[i].rk_mw)
			ca->rq_reg[i].rk_mw->mw_rkey = ca->rq_reg[i].rk_mw->mw_mw->rkey;
	be_call_dereg_mrs(ca);
	be_call_free_mws(ca);
	ca->rq_conn = NULL;
	return rc;
}

/* Move queued calls onto connections with room. */
void be_pool_pump(struct be_pool *pool)
{
	struct be_ctx *ctx = pool->bp_ctx;
	struct be_call *ca;

	if (pool->bp_pumping)
		return;
	pool->bp_pumping = true;
	while ((ca = TAILQ_FIRST(&pool->bp_queue)) != NULL) {
		struct be_conn *cn = NULL;
		unsigned k;
		int rc;

		for (k = 0; k < pool->bp_nslots; k++) {
			struct be_conn *c = pool->bp_slots[(pool->bp_rr + k) % pool->bp_nslots].sl_conn;

			if (c && c->cn_state == BC_UP && c->cn_ccp != BE_CCP_PENDING &&
			    be_credits_can_send(&c->cn_cr) && c->cn_nsfree > 0) {
				cn = c;
				pool->bp_rr = (pool->bp_rr + k + 1) % pool->bp_nslots;
				break;
			}
		}
		if (!cn)
			break;
		TAILQ_REMOVE(&pool->bp_queue, ca, rq_link);
		pool->bp_nqueued--;
		rc = be_call_post(cn, ca);
		if (rc == -EAGAIN) {
			TAILQ_INSERT_HEAD(&pool->bp_queue, ca, rq_link);
			pool->bp_nqueued++;
			break;
		}
		if (rc < 0) {
			ctx->cx_stats.bs_marshal_errors++;
			LOG(WARN, pool, "xid %08x: cannot send: %s", ca->rq_xid, strerror(-rc));
			call_fail_later(ca, rc == -E2BIG || rc == -EINVAL ? BE_ERR_TOO_BIG
									 : BE_ERR_REGISTER);
		}
	}
	pool->bp_pumping = false;
	pool_room_check(pool);
}

bool be_xid_busy(struct be_pool *pool, uint32_t xid)
{
	struct be_call *ca;
	unsigned k;

	TAILQ_FOREACH(ca, &pool->bp_queue, rq_link)
		if (ca->rq_xid == xid)
			return true;
	for (k = 0; k < pool->bp_nslots; k++) {
		struct be_conn *cn = pool->bp_slots[k].sl_conn;

		if (!cn)
			continue;
		TAILQ_FOREACH(ca, &cn->cn_calls, rq_link)
			if (ca->rq_xid == xid)
				return true;
	}
	return false;
}

static int desc_copy(struct be_call *ca, const struct be_call_desc *d)
{
	unsigned i;

	if (!d->cd_msg || d->cd_msg_niov == 0 || d->cd_msg_niov > BE_MAX_MSG_IOV ||
	    d->cd_nreads > BE_MAX_READ_ITEMS || d->cd_nwrites > BE_MAX_WRITE_CHUNKS ||
	    (d->cd_nreads && !d->cd_reads) || (d->cd_nwrites && !d->cd_writes))
		return -EINVAL;
	ca->rq_desc = *d;
	memcpy(ca->rq_msg, d->cd_msg, d->cd_msg_niov * sizeof(struct iovec));
	ca->rq_desc.cd_msg = ca->rq_msg;
	if (d->cd_nreads)
		memcpy(ca->rq_reads, d->cd_reads, d->cd_nreads * sizeof(struct be_read_item));
	ca->rq_desc.cd_reads = ca->rq_reads;
	for (i = 0; i < d->cd_nwrites; i++) {
		if (d->cd_writes[i].bt_niov == 0 || d->cd_writes[i].bt_niov > BE_MAX_TARGET_IOV)
			return -EINVAL;
		memcpy(ca->rq_wiov[i], d->cd_writes[i].bt_iov,
		       d->cd_writes[i].bt_niov * sizeof(struct iovec));
		ca->rq_wt[i] = (struct be_target){ ca->rq_wiov[i], d->cd_writes[i].bt_niov };
	}
	ca->rq_desc.cd_writes = ca->rq_wt;
	if (d->cd_reply) {
		if (d->cd_reply->bt_niov == 0 || d->cd_reply->bt_niov > BE_MAX_TARGET_IOV)
			return -EINVAL;
		memcpy(ca->rq_riov, d->cd_reply->bt_iov, d->cd_reply->bt_niov * sizeof(struct iovec));
		ca->rq_rt = (struct be_target){ ca->rq_riov, d->cd_reply->bt_niov };
		ca->rq_desc.cd_reply = &ca->rq_rt;
	}
	return 0;
}

struct be_call *be_call_new(struct be_pool *pool, const struct be_call_desc *d,
				be_reply_fn *cb, void *arg)
{
	struct be_ctx *ctx = pool->bp_ctx;
	struct be_call *ca = ctx->cx_call_cache;
	int rc;

	if (ca) {
		ctx->cx_call_cache = ca->rq_cache_next;
		ctx->cx_ncached--;
	} else {
		ca = aligned_alloc(16, (sizeof(*ca) + 15) & ~(size_t)15);
		if (!ca)
			return NULL;
	}
	/* The plan, the handles and rq_reg (a few KiB) are written before they
	 * are read; everything else is cleared.  be_call_free() reads the
	 * long-reply state at the end: left as found, recycled heap memory made
	 * it deregister and free junk pointers (issue 6: SIGSEGV in
	 * ibv_dereg_mr). */
	memset(ca, 0, offsetof(struct be_call, rq_plan));
	ca->rq_nreg = 0;
	memset(&ca->rq_reply, 0, sizeof(*ca) - offsetof(struct be_call, rq_reply));
	ca->rq_ctx = ctx;
	ca->rq_pool = pool;
	ca->rq_state = CS_QUEUED;
	ca->rq_sbuf = -1;
	ca->rq_cb = cb;
	ca->rq_arg = arg;
	ca->rq_xid = d->cd_xid;
	rc = desc_copy(ca, d);
	if (rc < 0) {
		be_call_free(ca);
		errno = -rc;
		return NULL;
	}
	return ca;
}

struct be_call *be_call_submit(struct be_pool *pool, const struct be_call_desc *d,
			       be_reply_fn *cb, void *arg)
{
	struct be_ctx *ctx = pool->bp_ctx;
	struct be_call *ca;

	if (d->cd_msg && d->cd_msg_niov && d->cd_msg[0].iov_len >= 4 &&
	    chk_be32(d->cd_msg[0].iov_base) != d->cd_xid) {
		errno = EINVAL;
		return NULL;
	}
	if (pool->bp_nqueued >= ctx->cx_cfg.bc_max_queue) {
		pool->bp_room_wanted = true;
		errno = ENOBUFS;
		return NULL;
	}
	if (be_xid_busy(pool, d->cd_xid)) {
		pool->bp_room_wanted = true;
		errno = EEXIST;
		return NULL;
	}
	ca = be_call_new(pool, d, cb, arg);
	if (!ca)
		return NULL;
	ctx->cx_stats.bs_calls++;
	TAILQ_INSERT_TAIL(&pool->bp_queue, ca, rq_link);
	pool->bp_nqueued++;
	be_pool_pump(pool);	/* no callback from here: failures are deferred */
	if (ca->rq_state == CS_QUEUED && !ca->rq_failed)
		ctx->cx_stats.bs_queued++;
	return ca;
}

