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

static const char *const call_state_names[] = { "FREE", "POSTED", "INVALIDATING", "DONE",
						"READING" };

/* ------------------------------------------------------------------------
 * Posts: state, completion, registration
 * ------------------------------------------------------------------------ */
void be_call_set_state(struct be_call *ca, enum be_call_state st)
{
	static const bool ok[5][5] = {
		/* to:        FREE   POSTED INVAL  DONE   READING */
		[CS_FREE] = { false, true, false, false, false },
		[CS_POSTED] = { true, false, true, true, true },
		[CS_INVALIDATING] = { false, false, false, true, false },
		[CS_DONE] = { true, false, false, false, false },
		[CS_READING] = { true, false, true, false, false },
	};

	if (!ok[ca->rq_state][st]) {
		LOG(ERR, ca->rq_conn->cn_pool, "xid %08x: bad transition %s -> %s", ca->rq_xid,
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

/* Back on its connection's free list (its windows and MRs already given
 * back); the request no longer points at it. */
void be_call_slot_put(struct be_call *ca)
{
	struct be_conn *cn = ca->rq_conn;

	be_call_lr_free(ca);
	if (ca->rq_state != CS_FREE)
		be_call_set_state(ca, CS_FREE);
	ca->rq_req = NULL;
	ca->rq_free_next = cn->cn_sfree_calls;
	cn->cn_sfree_calls = ca;
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
static void req_deliver(struct be_req *rq, struct be_reply *r)
{
	struct be_pool *pool = rq->bq_pool;

	pool_room_check(pool);	/* its XID is free again */
	if (rq->bq_state == BE_REQ_CANCELLING)
		r->br_err = BE_ERR_CANCELLED;
	r->br_xid = rq->bq_desc.cd_xid;
	rq->bq_state = BE_REQ_DONE;
	pool->bp_ctx->cx_stats.bs_replies++;
	if (!rq->bq_cb) {
		be_call_release(rq);
		return;
	}
	rq->bq_cb(rq, r, rq->bq_arg);
}

/* A call on a connection: complete it when reply and invalidation are in.
 * Its Send need not be known complete: the Send reads only its send
 * buffer, which the send ring holds until then (be_cq.c). */
void be_call_try_complete(struct be_call *ca)
{
	struct be_conn *cn = ca->rq_conn;

	if (ca->rq_state != CS_INVALIDATING || ca->rq_inv_pending)
		return;
	be_flight_take(cn, ca);
	be_call_free_mws(ca);
	if (cn->cn_ka == ca)
		cn->cn_ka = NULL;
	if (cn->cn_ccp_call == ca)
		cn->cn_ccp_call = NULL;
	be_call_set_state(ca, CS_DONE);
	req_deliver(ca->rq_req, &ca->rq_reply);
}

/* Fail a call that is not on a connection (QUEUED, FAILING, or taken off a
 * dead one): no post, so the reply lives on the stack for the callback. */
void be_call_fail_queued(struct be_req *rq, enum be_err err)
{
	struct be_reply r;

	memset(&r, 0, sizeof(r));
	r.br_err = err;
	req_deliver(rq, &r);
}

/* Same, but the callback comes from the event loop: never from inside
 * be_call_submit() (the caller must get its handle before the callback). */
void be_call_fail_later(struct be_req *rq, enum be_err err)
{
	struct be_pool *pool = rq->bq_pool;

	rq->bq_err = err;
	rq->bq_state = BE_REQ_FAILING;
	TAILQ_INSERT_TAIL(&pool->bp_failed, rq, bq_link);
	event_active(pool->bp_fail_ev, 0, 0);
}

void be_pool_failed_cb(evutil_socket_t fd, short what, void *arg)
{
	struct be_pool *pool = arg;
	struct be_req *rq;

	(void)fd;
	(void)what;
	while ((rq = TAILQ_FIRST(&pool->bp_failed)) != NULL) {
		TAILQ_REMOVE(&pool->bp_failed, rq, bq_link);
		be_call_fail_queued(rq, rq->bq_err);
	}
}

void be_call_release(struct be_req *rq)
{
	struct be_call *ca;
	struct be_conn *cn;
	struct be_rbuf *rb;

	if (!rq || rq->bq_state != BE_REQ_DONE)
		return;
	ca = rq->bq_post;
	rq->bq_post = NULL;
	rq->bq_state = BE_REQ_IDLE;
	if (!ca)
		return;
	cn = ca->rq_conn;
	rb = ca->rq_rbuf;
	ca->rq_rbuf = NULL;
	be_call_slot_put(ca);
	if (!rb)
		return;
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
	if (cn->cn_state == BC_UP) {
		be_conn_put(cn);
		be_pool_pump(cn->cn_pool);
	} else {
		be_conn_put(cn);	/* may free a dead connection, cn_slots with it */
	}
}

bool be_call_cancel(struct be_req *rq)
{
	struct be_pool *pool;

	if (!rq)
		return false;
	pool = rq->bq_pool;
	switch (rq->bq_state) {
	case BE_REQ_FAILING:	/* never posted: its callback was due */
		TAILQ_REMOVE(&pool->bp_failed, rq, bq_link);
		rq->bq_state = BE_REQ_IDLE;
		return true;
	case BE_REQ_QUEUED:	/* never posted: gone, no callback */
		be_queue_take(pool, rq);
		rq->bq_state = BE_REQ_IDLE;
		pool_room_check(pool);
		return true;
	case BE_REQ_POSTED:
		/* On a connection: the server may still access its memory.  The
		 * callback comes once every registration is invalidated (reply
		 * in, or the connection's QP in ERR), with BE_ERR_CANCELLED. */
		rq->bq_state = BE_REQ_CANCELLING;
		return false;
	default:
		return false;
	}
}

/* A FREE element of cn's array, its per-post state cleared; NULL when all
 * are in use (the call waits in the queue). */
static struct be_call *slot_take(struct be_conn *cn, struct be_req *rq)
{
	struct be_call *ca = cn->cn_sfree_calls;

	if (!ca)
		return NULL;
	cn->cn_sfree_calls = ca->rq_free_next;
	/* The plan, the handles and rq_reg (a few KiB) are written before they
	 * are read; everything else is cleared.  The long-reply state is read
	 * at the release: left as found, recycled memory made it deregister
	 * and free junk pointers (issue 6: SIGSEGV in ibv_dereg_mr). */
	memset(ca, 0, offsetof(struct be_call, rq_plan));
	ca->rq_nreg = 0;
	memset(&ca->rq_reply, 0, sizeof(*ca) - offsetof(struct be_call, rq_reply));
	ca->rq_conn = cn;
	ca->rq_req = rq;
	ca->rq_state = CS_FREE;
	ca->rq_xid = rq->bq_desc.cd_xid;
	return ca;
}

/* Give back what a call not posted holds: windows unbound (their keys
 * unchanged), MRs, the element. */
static void call_drop(struct be_call *ca)
{
	unsigned i;

	for (i = 0; i < ca->rq_nreg; i++)
		if (ca->rq_reg[i].rk_mw)
			ca->rq_reg[i].rk_mw->mw_rkey = ca->rq_reg[i].rk_mw->mw_mw->rkey;
	be_call_dereg_mrs(ca);
	be_call_free_mws(ca);
	be_call_slot_put(ca);
}

/* Marshal rq for cn: its slot, plan, registrations (window binds into
 * binds[]), send buffer, header and credit, with its Send's WR in
 * ca->rq_swr; the send-queue room of cn's batch counts as taken.  0,
 * -EAGAIN (no room: stays queued) or another -errno; on error nothing is
 * held. */
static int call_prepare(struct be_conn *cn, struct be_req *rq, struct ibv_send_wr *binds,
			unsigned *nbinds, struct be_call **out)
{
	struct be_ctx *ctx = cn->cn_pool->bp_ctx;
	unsigned i, nspans, need;
	struct be_call *ca;
	struct be_plan *p;
	uint8_t *sb;
	long len;
	int rc;

	*nbinds = 0;
	ca = slot_take(cn, rq);
	if (!ca)
		return -EAGAIN;
	p = &ca->rq_plan;
	rc = be_plan_call(&rq->bq_desc, cn->cn_send_thresh, ctx->cx_cfg.bc_max_seg_len, p);
	if (rc < 0)
		goto unreg;
	nspans = p->pl_nreadspans + p->pl_nwspans + p->pl_nrspans;
	need = 1 + (ctx->cx_cfg.bc_reg_mode == BE_REG_MW ? 2 * nspans : 0);
	if (cn->cn_nsfree == 0 || cn->cn_sq_used + cn->cn_tx_room + need > cn->cn_sq_max) {
		rc = -EAGAIN;
		goto unreg;
	}

	for (i = 0; i < p->pl_nreadspans; i++)
		if ((rc = be_reg_span(cn, ca, &p->pl_read[i], IBV_ACCESS_REMOTE_READ, &ca->rq_rd[i],
				   binds, nbinds)) < 0)
			goto unreg;
	for (i = 0; i < p->pl_nwspans; i++)
		if ((rc = be_reg_span(cn, ca, &p->pl_wspan[i], IBV_ACCESS_REMOTE_WRITE, &ca->rq_wr[i],
				   binds, nbinds)) < 0)
			goto unreg;
	for (i = 0; i < p->pl_nrspans; i++)
		if ((rc = be_reg_span(cn, ca, &p->pl_rspan[i], IBV_ACCESS_REMOTE_WRITE, &ca->rq_rp[i],
				   binds, nbinds)) < 0)
			goto unreg;

	ca->rq_sbuf = cn->cn_sfree[--cn->cn_nsfree];
	sb = cn->cn_mem + (size_t)cn->cn_nrecv * ctx->cx_cfg.bc_inline_recv +
	     (size_t)ca->rq_sbuf * ctx->cx_cfg.bc_inline_send;
	len = be_marshal_call(&rq->bq_desc, p, ctx->cx_cfg.bc_credits, ca->rq_rd, ca->rq_wr,
			      ca->rq_rp, &ctx->cx_tx, sb, cn->cn_send_thresh);
	if (len < 0) {
		rc = (int)len;
		goto unsbuf;
	}
	ca->rq_ssge = (struct ibv_sge){ (uintptr_t)sb, (uint32_t)len, cn->cn_mr->lkey };
	ca->rq_swr = (struct ibv_send_wr){ .opcode = IBV_WR_SEND, .sg_list = &ca->rq_ssge,
					   .num_sge = 1 };
	ca->rq_tx_next = NULL;
	ca->rq_nbwr = 0;
	be_credits_sent(&cn->cn_cr);
	*out = ca;
	return 0;

unsbuf:
	cn->cn_sfree[cn->cn_nsfree++] = ca->rq_sbuf;
unreg:
	call_drop(ca);
	return rc;
}

/* Undo call_prepare() of a call whose WRs were not posted. */
static void call_unprepare(struct be_conn *cn, struct be_call *ca)
{
	be_credits_replied(&cn->cn_cr);
	cn->cn_sfree[cn->cn_nsfree++] = ca->rq_sbuf;
	call_drop(ca);
}

/* Set ca's Send's signal flag: what be_send_signal() says now (the ring
 * as be_send_push() of every Send before it left it). */
static bool call_signal(struct be_conn *cn, struct be_call *ca, unsigned nbinds)
{
	bool sig = be_send_signal(cn, nbinds + 1);

	ca->rq_swr.wr_id = (uint64_t)ca->rq_sbuf << 48 | (uintptr_t)cn | WR_SEND |
			   (sig ? WR_SIG : 0);
	ca->rq_swr.send_flags = sig ? IBV_SEND_SIGNALED : 0;
	return sig;
}

/* ca's WRs are on the send queue: the ring holds its send buffer and room,
 * the call is in flight. */
static void call_posted(struct be_conn *cn, struct be_call *ca, unsigned nbinds, bool sig)
{
	struct be_pool *pool = cn->cn_pool;
	struct be_req *rq = ca->rq_req;
	unsigned i;

	/* The provider names a window by ibv_mw.rkey, which must be the key
	 * of its current binding when the bind is posted (rxe compares it):
	 * step it forward only now that the binds are on the queue. */
	for (i = 0; i < ca->rq_nreg; i++)
		if (ca->rq_reg[i].rk_mw)
			ca->rq_reg[i].rk_mw->mw_mw->rkey = ca->rq_reg[i].rk_mw->mw_rkey;
	be_send_push(cn, ca->rq_sbuf, nbinds + 1, sig);	/* holds the buffer and the room */
	ca->rq_sq_inv = nbinds;
	cn->cn_sq_used += ca->rq_sq_inv;
	ca->rq_inv_pending = 0;
	be_flight_put(cn, ca);
	if (ca->rq_plan.pl_proc == RPCRDMA_NOMSG)
		pool->bp_ctx->cx_stats.bs_nomsg_calls++;
	be_call_set_state(ca, CS_POSTED);
	rq->bq_post = ca;
	rq->bq_state = BE_REQ_POSTED;
	rq->bq_sends++;
}

/* ca's first WR on the queue: its first bind, or its Send. */
static struct ibv_send_wr *call_first_wr(struct be_call *ca)
{
	return ca->rq_nbwr ? &ca->rq_bwr[0] : &ca->rq_swr;
}

/* Is wr one of ca's WRs? */
static bool call_has_wr(const struct be_call *ca, const struct ibv_send_wr *wr)
{
	return wr == &ca->rq_swr || (wr >= ca->rq_bwr && wr < ca->rq_bwr + ca->rq_nbwr);
}

/* A call of cn's batch that the provider did not post: the first fails as
 * a call posted alone would, the rest wait at the head of the queue, in
 * order (prev: the last put back). */
static struct be_req *call_unbatch(struct be_conn *cn, struct be_call *ca, int rc, bool first,
				   struct be_req *prev)
{
	struct be_pool *pool = cn->cn_pool;
	struct be_req *rq = ca->rq_req;

	call_unprepare(cn, ca);
	if (first) {
		LOG(ERR, pool, "xid %08x: ibv_post_send: %s", rq->bq_desc.cd_xid, strerror(rc));
		pool->bp_ctx->cx_stats.bs_marshal_errors++;
		be_call_fail_later(rq, BE_ERR_REGISTER);
		return NULL;
	}
	be_queue_put(pool, rq, prev ? TAILQ_NEXT(prev, bq_link) : TAILQ_FIRST(&pool->bp_queue));
	return rq;
}

/*
 * Post cn's batch: every call the pump marshalled for it, binds before
 * their Send, in one ibv_post_send() (one doorbell, which rxe makes a
 * system call).  The ring is pushed in chain order before the post, so
 * that each Send's signal flag is what be_send_signal() says after the
 * Sends before it; a refused post rewinds it and pushes the part posted
 * again.  A call refused after some of its binds went out leaves windows
 * bound that no key we hold names: the connection is failed, which ends
 * every window of its QP.
 */
static void conn_tx_flush(struct be_conn *cn)
{
	struct be_call *ca, *next, *first = cn->cn_tx_head;
	struct ibv_send_wr *bad = NULL;
	struct be_req *prev = NULL;
	struct be_send_mark m;
	bool refused = false, partial = false;
	int rc;

	if (!first)
		return;
	cn->cn_tx_head = cn->cn_tx_last = NULL;
	cn->cn_tx_room = 0;
	be_send_mark(cn, &m);
	for (ca = first; ca; ca = ca->rq_tx_next) {
		for (unsigned i = 0; i < ca->rq_nbwr; i++)
			ca->rq_bwr[i].next = i + 1 < ca->rq_nbwr ? &ca->rq_bwr[i + 1] : &ca->rq_swr;
		ca->rq_swr.next = ca->rq_tx_next ? call_first_wr(ca->rq_tx_next) : NULL;
		be_send_push(cn, ca->rq_sbuf, ca->rq_nbwr + 1, call_signal(cn, ca, ca->rq_nbwr));
	}
	cn->cn_ctx->cx_stats.bs_send_doorbells++;
	rc = be_vx()->post_send(cn->cn_qp, call_first_wr(first), &bad);
	be_send_rewind(cn, &m);
	if (rc && !bad)
		bad = call_first_wr(first);
	for (ca = first; ca; ca = next) {
		next = ca->rq_tx_next;
		if (!refused && !(rc && call_has_wr(ca, bad))) {
			call_posted(cn, ca, ca->rq_nbwr, ca->rq_swr.send_flags & IBV_SEND_SIGNALED);
			continue;
		}
		if (!refused)
			partial = bad != call_first_wr(ca);
		prev = call_unbatch(cn, ca, rc, !refused, prev);
		refused = true;
	}
	if (partial)
		be_conn_fail(cn, "ibv_post_send refused part of a call");
}

/* Post a prepared call now: its window binds, then its Send, in one
 * ibv_post_send(), cn's batch already posted (the send ring is in posting
 * order).  0 or -errno (the call is given back). */
static int call_post_now(struct be_conn *cn, struct be_call *ca, struct ibv_send_wr *binds,
			 unsigned nbinds)
{
	struct ibv_send_wr *bad;
	bool sig = call_signal(cn, ca, nbinds);
	int rc;

	if (nbinds > 0)
		binds[nbinds - 1].next = &ca->rq_swr;
	cn->cn_ctx->cx_stats.bs_send_doorbells++;
	rc = be_vx()->post_send(cn->cn_qp, nbinds ? binds : &ca->rq_swr, &bad);
	if (rc) {
		LOG(ERR, cn->cn_pool, "xid %08x: ibv_post_send: %s", ca->rq_xid, strerror(rc));
		call_unprepare(cn, ca);
		return -rc;
	}
	call_posted(cn, ca, nbinds, sig);
	return 0;
}

/* Post rq on cn now (after cn's batch).  0, -EAGAIN (no room: stays
 * queued), or another -errno (call failed). */
int be_call_post(struct be_conn *cn, struct be_req *rq)
{
	struct ibv_send_wr binds[BE_MAX_CALL_SEGS + 1];
	struct be_call *ca;
	unsigned nbinds;
	int rc;

	conn_tx_flush(cn);
	rc = call_prepare(cn, rq, binds, &nbinds, &ca);
	return rc < 0 ? rc : call_post_now(cn, ca, binds, nbinds);
}

/* The pump's post of rq on cn: a call with more than BE_TX_BINDS window
 * binds goes now, any other joins cn's batch, posted by conn_tx_flush()
 * at the pump's end.  As be_call_post(). */
static int call_batch(struct be_conn *cn, struct be_req *rq)
{
	struct ibv_send_wr binds[BE_MAX_CALL_SEGS + 1];
	struct be_call *ca;
	unsigned nbinds;
	int rc;

	rc = call_prepare(cn, rq, binds, &nbinds, &ca);
	if (rc < 0)
		return rc;
	if (nbinds > BE_TX_BINDS) {
		conn_tx_flush(cn);
		return call_post_now(cn, ca, binds, nbinds);
	}
	memcpy(ca->rq_bwr, binds, nbinds * sizeof(binds[0]));
	ca->rq_nbwr = nbinds;
	if (cn->cn_tx_last)
		cn->cn_tx_last->rq_tx_next = ca;
	else
		cn->cn_tx_head = ca;
	cn->cn_tx_last = ca;
	cn->cn_tx_room += 2 * nbinds + 1;	/* binds, Send, their invalidations */
	return 0;
}

/* Can cn take a call now? */
static bool conn_can_send(const struct be_conn *c)
{
	return c && c->cn_state == BC_UP && c->cn_ccp != BE_CCP_PENDING &&
	       be_credits_can_send(&c->cn_cr) && c->cn_nsfree > 0 && c->cn_sfree_calls;
}

/*
 * The connection for a call with this XID, or NULL: it waits.  A call
 * goes on its XID's own slot while that slot's connection is up, even if
 * it must wait there for credit: the server's duplicate request cache keys
 * on XID, address and port (nfsd), so a retransmission re-sent under the
 * same gateway XID must come from the same connection as the original to
 * be answered from the cache and not executed twice (RFC 5531 section 5:
 * the server's test is on the XID).  Only when that slot has no connection
 * up does the call take any that can send, round robin.
 */
static struct be_conn *pool_pick(struct be_pool *pool, uint32_t xid)
{
	struct be_conn *own = pool->bp_slots[xid % pool->bp_nslots].sl_conn;
	unsigned k;

	if (own && own->cn_state == BC_UP)
		return conn_can_send(own) ? own : NULL;
	for (k = 0; k < pool->bp_nslots; k++) {
		struct be_conn *c = pool->bp_slots[(pool->bp_rr + k) % pool->bp_nslots].sl_conn;

		if (conn_can_send(c)) {
			pool->bp_rr = (pool->bp_rr + k + 1) % pool->bp_nslots;
			return c;
		}
	}
	return NULL;
}

static bool pool_any_can_send(const struct be_pool *pool)
{
	unsigned k;

	for (k = 0; k < pool->bp_nslots; k++)
		if (conn_can_send(pool->bp_slots[k].sl_conn))
			return true;
	return false;
}

/* Move queued calls onto connections with room, in queue order; a call
 * whose connection has none waits without holding up the others.  Each
 * connection's calls go out together at the end (but large ones). */
static void pool_pump_now(struct be_pool *pool)
{
	struct be_ctx *ctx = pool->bp_ctx;
	struct be_req *rq, *next;
	unsigned k;

	if (pool->bp_pumping)
		return;
	pool->bp_pumping = true;
	for (rq = TAILQ_FIRST(&pool->bp_queue); rq && pool_any_can_send(pool); rq = next) {
		struct be_conn *cn = pool_pick(pool, rq->bq_desc.cd_xid);
		int rc;

		next = TAILQ_NEXT(rq, bq_link);
		if (!cn)
			continue;
		be_queue_take(pool, rq);
		rc = call_batch(cn, rq);
		if (rc == -EAGAIN) {
			be_queue_put(pool, rq, next);
			break;
		}
		if (rc < 0) {
			ctx->cx_stats.bs_marshal_errors++;
			LOG(WARN, pool, "xid %08x: cannot send: %s", rq->bq_desc.cd_xid, strerror(-rc));
			be_call_fail_later(rq, rc == -E2BIG || rc == -EINVAL ? BE_ERR_TOO_BIG
									 : BE_ERR_REGISTER);
		}
	}
	for (k = 0; k < pool->bp_nslots; k++)
		if (pool->bp_slots[k].sl_conn)
			conn_tx_flush(pool->bp_slots[k].sl_conn);
	/* Calls still here had to wait: count each once (new ones are last). */
	TAILQ_FOREACH_REVERSE(rq, &pool->bp_queue, be_req_list, bq_link) {
		if (rq->bq_waited)
			break;
		rq->bq_waited = true;
		ctx->cx_stats.bs_queued++;
	}
	pool->bp_pumping = false;
	pool_room_check(pool);
}

/* Every call made ready in one loop pass (submitted, or given a credit by
 * a reply) goes out from one pump at the pass's end: a connection's calls
 * share one ibv_post_send(), which for rxe is one system call that also
 * runs the requester (a large call goes at once: BE_TX_NOW_BYTES).  The
 * pass's end is the next be_ctx_prewait() once the loop calls it (no
 * event to make active and run, per pass); else an event made active from
 * a callback, which runs in the same pass after the callbacks already due. */
void be_pool_pump(struct be_pool *pool)
{
	struct be_ctx *ctx = pool->bp_ctx;

	if (pool->bp_freeing || TAILQ_EMPTY(&pool->bp_queue))
		return;
	if (!ctx->cx_prewait) {
		event_active(pool->bp_pump_ev, 0, 0);
	} else if (!pool->bp_pump_due) {
		pool->bp_pump_due = true;
		TAILQ_INSERT_TAIL(&ctx->cx_pump_due, pool, bp_due_link);
	}
}

void be_ctx_pump_due(struct be_ctx *ctx)
{
	struct be_pool *pool;
	unsigned n = 0;

	/* Those due now; one made due again while pumping waits for the next
	 * call (its position on the list is all a pool freed meanwhile needs). */
	TAILQ_FOREACH(pool, &ctx->cx_pump_due, bp_due_link)
		n++;
	while (n-- > 0 && (pool = TAILQ_FIRST(&ctx->cx_pump_due))) {
		TAILQ_REMOVE(&ctx->cx_pump_due, pool, bp_due_link);
		pool->bp_pump_due = false;
		pool_pump_now(pool);
	}
}

void be_pool_pump_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	pool_pump_now(arg);
}

/* ---- the busy XIDs of a pool ----
 * Linear probing, deletion by backward shift: exact, no tombstones.  Every
 * submit asks (a duplicate XID would take another call's reply), so the
 * walk it replaces cost each call the whole queue (up to bc_max_queue) and
 * every call in flight.  Anything unexpected (the table half full, an XID
 * removed that is not there) turns it off: the walk again, as exact. */
#define XID_BITS_MIN	6
#define XID_BITS_MAX	20

static unsigned xid_home(uint32_t xid, unsigned bits)
{
	return (xid * 2654435761u) >> (32 - bits);
}

static void xid_off(struct be_pool *pool, const char *why)
{
	if (pool->bp_xid_off)
		return;
	pool->bp_xid_off = true;
	LOG(WARN, pool, "XID table %s: busy XIDs are looked up by a walk from now on", why);
}

int be_xid_table_init(struct be_pool *pool)
{
	const struct be_config *cfg = &pool->bp_ctx->cx_cfg;
	size_t want = 2 * ((size_t)cfg->bc_max_queue +
			   (size_t)pool->bp_nslots * 2 * (cfg->bc_credits + BE_SEND_EXTRA + 8));
	unsigned bits = XID_BITS_MIN;

	while (bits < XID_BITS_MAX && ((size_t)1 << bits) < want)
		bits++;
	pool->bp_xid_bits = bits;
	pool->bp_xid_key = calloc((size_t)1 << bits, sizeof(uint32_t));
	pool->bp_xid_cnt = calloc((size_t)1 << bits, sizeof(uint32_t));
	return pool->bp_xid_key && pool->bp_xid_cnt ? 0 : -ENOMEM;
}

void be_xid_table_free(struct be_pool *pool)
{
	free(pool->bp_xid_key);
	free(pool->bp_xid_cnt);
	pool->bp_xid_key = NULL;
	pool->bp_xid_cnt = NULL;
}

/* xid's entry, or the free entry where it would go. */
static unsigned xid_slot(const struct be_pool *pool, uint32_t xid)
{
	unsigned mask = (1u << pool->bp_xid_bits) - 1, i = xid_home(xid, pool->bp_xid_bits);

	while (pool->bp_xid_cnt[i] && pool->bp_xid_key[i] != xid)
		i = (i + 1) & mask;
	return i;
}

void be_xid_add(struct be_pool *pool, uint32_t xid)
{
	unsigned i;

	if (pool->bp_xid_off)
		return;
	i = xid_slot(pool, xid);
	if (pool->bp_xid_cnt[i]) {
		pool->bp_xid_cnt[i]++;
		return;
	}
	if (pool->bp_xid_used + 1 > (1u << pool->bp_xid_bits) / 2) {
		xid_off(pool, "half full");
		return;
	}
	pool->bp_xid_key[i] = xid;
	pool->bp_xid_cnt[i] = 1;
	pool->bp_xid_used++;
}

void be_xid_del(struct be_pool *pool, uint32_t xid)
{
	unsigned mask = (1u << pool->bp_xid_bits) - 1, i, j;

	if (pool->bp_xid_off)
		return;
	i = xid_slot(pool, xid);
	if (!pool->bp_xid_cnt[i]) {
		xid_off(pool, "inconsistent");
		return;
	}
	if (--pool->bp_xid_cnt[i])
		return;
	pool->bp_xid_used--;
	/* Close the hole: an entry moves back into it unless its home lies
	 * cyclically after the hole, up to the entry. */
	for (j = (i + 1) & mask; pool->bp_xid_cnt[j]; j = (j + 1) & mask) {
		unsigned h = xid_home(pool->bp_xid_key[j], pool->bp_xid_bits);

		if (((j - h) & mask) < ((j - i) & mask))
			continue;
		pool->bp_xid_key[i] = pool->bp_xid_key[j];
		pool->bp_xid_cnt[i] = pool->bp_xid_cnt[j];
		pool->bp_xid_cnt[j] = 0;
		i = j;
	}
}

bool be_xid_busy(struct be_pool *pool, uint32_t xid)
{
	if (pool->bp_xid_off)
		return be_xid_scan(pool, xid);
	return pool->bp_xid_cnt[xid_slot(pool, xid)] != 0;
}

bool be_xid_scan(struct be_pool *pool, uint32_t xid)
{
	struct be_req *rq;
	struct be_call *ca;
	unsigned k;

	TAILQ_FOREACH(rq, &pool->bp_queue, bq_link)
		if (rq->bq_desc.cd_xid == xid)
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

/* The descriptor's arrays within the limits (they are not copied). */
static bool desc_ok(const struct be_call_desc *d)
{
	unsigned i;

	if (!d->cd_msg || d->cd_msg_niov == 0 || d->cd_msg_niov > BE_MAX_MSG_IOV ||
	    d->cd_nreads > BE_MAX_READ_ITEMS || d->cd_nwrites > BE_MAX_WRITE_CHUNKS ||
	    (d->cd_nreads && !d->cd_reads) || (d->cd_nwrites && !d->cd_writes))
		return false;
	for (i = 0; i < d->cd_nwrites; i++)
		if (d->cd_writes[i].bt_niov == 0 || d->cd_writes[i].bt_niov > BE_MAX_TARGET_IOV)
			return false;
	return !d->cd_reply || (d->cd_reply->bt_niov > 0 &&
				d->cd_reply->bt_niov <= BE_MAX_TARGET_IOV);
}

/* The bytes d offers to move by chunks: its Read list and Write list. */
static size_t desc_chunk_bytes(const struct be_call_desc *d)
{
	size_t n = 0;

	for (unsigned i = 0; i < d->cd_nreads; i++)
		n += d->cd_reads[i].ri_len;
	for (unsigned i = 0; i < d->cd_nwrites; i++)
		for (unsigned j = 0; j < d->cd_writes[i].bt_niov; j++)
			n += d->cd_writes[i].bt_iov[j].iov_len;
	return n;
}

void be_req_init(struct be_req *rq, struct be_pool *pool, const struct be_call_desc *d,
		 be_reply_fn *cb, void *arg)
{
	memset(rq, 0, sizeof(*rq));
	rq->bq_pool = pool;
	rq->bq_cb = cb;
	rq->bq_arg = arg;
	rq->bq_desc = *d;
}

int be_call_submit(struct be_pool *pool, struct be_req *rq, const struct be_call_desc *d,
		   be_reply_fn *cb, void *arg)
{
	struct be_ctx *ctx = pool->bp_ctx;

	if (!rq || !d)
		return -EINVAL;
	if (rq->bq_state != BE_REQ_IDLE)
		return -EBUSY;
	if (d->cd_msg && d->cd_msg_niov && d->cd_msg[0].iov_len >= 4 &&
	    chk_be32(d->cd_msg[0].iov_base) != d->cd_xid)
		return -EINVAL;
	if (pool->bp_nqueued >= ctx->cx_cfg.bc_max_queue) {
		pool->bp_room_wanted = true;
		return -ENOBUFS;
	}
	if (be_xid_busy(pool, d->cd_xid)) {
		pool->bp_room_wanted = true;
		return -EEXIST;
	}
	if (!desc_ok(d))
		return -EINVAL;
	be_req_init(rq, pool, d, cb, arg);
	rq->bq_state = BE_REQ_QUEUED;
	ctx->cx_stats.bs_calls++;
	be_queue_put(pool, rq, NULL);
	/* No callback from here either way: failures are deferred. */
	if (!pool->bp_freeing && desc_chunk_bytes(d) >= BE_TX_NOW_BYTES)
		pool_pump_now(pool);
	else
		be_pool_pump(pool);	/* at the pass's end */
	return 0;
}
