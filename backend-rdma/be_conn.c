// SPDX-License-Identifier: MIT
/*
 * This file contains the connection manager of the backend: rdma_cm events,
 * QP and buffer setup, connection teardown (drain, reap, DREQ), reconnect
 * backoff, keepalive NULL calls and the CCP exchange (draft-08 6).
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
 * Connections
 * ------------------------------------------------------------------------ */
static void slot_schedule(struct be_pool *pool, unsigned slot);
static void conn_free_mem(struct be_conn *cn)
{
	struct be_ctx *ctx = cn->cn_ctx;

	if (cn->cn_mr)
		be_vx()->dereg_mr(cn->cn_mr);
	cn->cn_mr = NULL;
	free(cn->cn_mem);
	free(cn->cn_rbufs);
	free(cn->cn_sfree);
	free(cn->cn_ring);
	free(cn->cn_sbuf_seq);
	free(cn->cn_slots);
	be_dev_put(ctx, cn->cn_devidx);
	cn->cn_devidx = -1;
	free(cn);
}

void be_conn_put(struct be_conn *cn)
{
	if (--cn->cn_refs == 0)
		conn_free_mem(cn);
}

void be_closing_finish(struct be_closing *cl)
{
	LIST_REMOVE(cl, cg_link);
	event_free(cl->cg_ev);
	event_free(cl->cg_timer);
	be_vx()->destroy_id(cl->cg_id);
	be_vx()->destroy_event_channel(cl->cg_ch);
	free(cl);
}

static void closing_cm(evutil_socket_t fd, short what, void *arg)
{
	struct be_closing *cl = arg;
	struct rdma_cm_event *ev;
	bool done = false;

	(void)fd;
	if (what & EV_TIMEOUT) {
		CTX_LOG(WARN, cl->cg_ctx, "no DISCONNECTED 60 s after rdma_disconnect: destroying anyway");
		done = true;
	}
	while (!done && be_vx()->get_cm_event(cl->cg_ch, &ev) == 0) {
		enum rdma_cm_event_type t = ev->event;

		be_vx()->ack_cm_event(ev);
		if (t == RDMA_CM_EVENT_DISCONNECTED || t == RDMA_CM_EVENT_TIMEWAIT_EXIT ||
		    t == RDMA_CM_EVENT_DEVICE_REMOVAL)
			done = true;
	}
	if (done)
		be_closing_finish(cl);
}

/* Send the DREQ and wait for its end from the event loop. */
static int closing_start(struct be_ctx *ctx, struct rdma_event_channel *ch, struct rdma_cm_id *id)
{
	struct be_closing *cl = calloc(1, sizeof(*cl));
	struct timeval tv = ms_tv(60000);

	if (!cl)
		return -ENOMEM;
	cl->cg_ctx = ctx;
	cl->cg_ch = ch;
	cl->cg_id = id;
	cl->cg_ev = event_new(ctx->cx_base, ch->fd, EV_READ | EV_PERSIST, closing_cm, cl);
	cl->cg_timer = evtimer_new(ctx->cx_base, closing_cm, cl);
	if (!cl->cg_ev || !cl->cg_timer || event_add(cl->cg_ev, NULL) || evtimer_add(cl->cg_timer, &tv)) {
		if (cl->cg_ev)
			event_free(cl->cg_ev);
		if (cl->cg_timer)
			event_free(cl->cg_timer);
		free(cl);
		return -ENOMEM;
	}
	LIST_INSERT_HEAD(&ctx->cx_closing, cl, cg_link);
	if (be_vx()->disconnect(id))
		event_active(cl->cg_timer, EV_TIMEOUT, 0);	/* nothing to wait for */
	return 0;
}

/*
 * After the server closed the connection (DISCONNECTED while up), a call
 * that may not be re-sent (BE_CALL_NO_RESEND: RPCSEC_GSS) goes back to its
 * caller, from the event loop.  nfsd closes a connection in answer to a
 * call it drops (an RPCSEC_GSS sequence number outside its window or seen
 * before, svcauth_gss.c: SVC_CLOSE), and while it runs other calls of the
 * connection: those were taken in, their replies lost with it.  Sent again
 * with the same sequence number, a GSS call that was taken in is a replay:
 * dropped, and the next connection closed too (the loop of five closes and
 * a dropped call that one bad call cost every client).  So these calls are
 * not re-sent: their clients retransmit with new sequence numbers (RFC 2203
 * 5.3.3.1), and the others are re-sent as after any loss.  true when rq
 * was handed back.
 */
static bool reap_hand_back(struct be_conn *cn, struct be_req *rq)
{
	if (!cn->cn_server_closed || !(rq->bq_desc.cd_flags & BE_CALL_NO_RESEND))
		return false;
	cn->cn_ctx->cx_stats.bs_handed_back++;
	be_call_fail_later(rq, BE_ERR_SERVER_CLOSED);
	return true;
}

/* The reap's part for calls: each settled once (see be_internal.h).
 * Returns the calls handed back (reap_hand_back). */
static unsigned reap_calls(struct be_conn *cn)
{
	struct be_pool *pool = cn->cn_pool;
	struct be_call *ca, *tmp;
	struct be_req *rq;
	struct be_req_list requeue = TAILQ_HEAD_INITIALIZER(requeue);
	unsigned back = 0, posted = 0;

	for (ca = TAILQ_FIRST(&cn->cn_calls); ca; ca = tmp) {
		tmp = TAILQ_NEXT(ca, rq_link);
		be_call_dereg_mrs(ca);
		ca->rq_inv_pending = 0;
		if (ca->rq_state == CS_INVALIDATING) {
			/* The reply was good; windows died with the QP. */
			be_call_try_complete(ca);
			continue;
		}
		be_flight_take(cn, ca);
		if (ca->rq_state == CS_READING) {
			/* The reply is lost with the connection: ask again. */
			if (ca->rq_lr_posted < ca->rq_lr_nsegs)	/* Reads left to post */
				TAILQ_REMOVE(&cn->cn_rdwait, ca, rq_rd_link);
			be_call_lr_free(ca);
			ca->rq_rbuf = NULL;
			cn->cn_refs--;		/* the slot's reference remains */
		}
		be_call_free_mws(ca);
		rq = ca->rq_req;
		rq->bq_post = NULL;
		be_call_slot_put(ca);
		if (rq == &cn->cn_ka_req || rq == &cn->cn_ccp_req) {
			rq->bq_state = BE_REQ_IDLE;	/* the backend's own: not re-sent */
			continue;
		}
		if (rq->bq_state == BE_REQ_CANCELLING) {
			/* The QP is in ERR: the server can no longer touch it. */
			be_call_fail_queued(rq, BE_ERR_CANCELLED);
			continue;
		}
		posted++;
		if (reap_hand_back(cn, rq)) {
			back++;
			continue;
		}
		if (rq->bq_sends >= BE_MAX_SENDS) {
			/* This call breaks every connection it goes on. */
			LOG(WARN, pool, "xid %08x: lost %u connections, failed", rq->bq_desc.cd_xid,
			    rq->bq_sends);
			be_call_fail_queued(rq, BE_ERR_RETRIES);
			continue;
		}
		rq->bq_state = BE_REQ_QUEUED;
		TAILQ_INSERT_TAIL(&requeue, rq, bq_link);
		pool->bp_ctx->cx_stats.bs_resent++;
	}
	cn->cn_ka = NULL;
	cn->cn_ccp_call = NULL;
	cn->cn_draining = false;
	/* Re-sent first, in their original order. */
	while ((rq = TAILQ_LAST(&requeue, be_req_list)) != NULL) {
		TAILQ_REMOVE(&requeue, rq, bq_link);
		be_queue_put(pool, rq, TAILQ_FIRST(&pool->bp_queue));
	}
	if (cn->cn_server_closed && posted) {
		if (back)
			pool->bp_ctx->cx_stats.bs_server_closes_gss++;
		else
			pool->bp_ctx->cx_stats.bs_server_closes_other++;
		LOG(WARN, pool, "connection %u: the server closed it with %u calls posted: %u "
				 "handed back (not to be re-sent), %u re-sent", cn->cn_slot, posted,
		    back, posted - back);
	}
	return back;
}

/* Tear down what the connection holds; calls settled once each (see
 * be_internal.h).  Runs from the event loop, never inside a CM or CQ
 * callback of the same connection. */
void be_conn_reap(evutil_socket_t fd, short what, void *arg)
{
	struct be_conn *cn = arg;
	struct be_pool *pool = cn->cn_pool;
	struct be_mw *mw;
	bool was_up = cn->cn_was_up;
	unsigned back;

	(void)fd;
	(void)what;
	if (cn->cn_qp) {
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

		/* Stop the QP before anything else: no WR is processed any more. */
		be_vx()->modify_qp(cn->cn_qp, &qa, IBV_QP_STATE);
	}
	back = reap_calls(cn);
	if (was_up)
		pool->bp_closed_for_calls = back > 0;
	/* Windows first: a bound type 2 window holds a reference on its QP,
	 * and rxe's destroy QP waits ~50 s for it (measured). */
	while ((mw = cn->cn_mwfree) != NULL) {
		cn->cn_mwfree = mw->mw_next;
		be_vx()->dealloc_mw(mw->mw_mw);
		free(mw);
	}
	if (cn->cn_qp) {
		be_vx()->destroy_qp(cn->cn_id);
		cn->cn_qp = NULL;
	}
	/* No WR of this connection can complete or touch memory now. */
	if (cn->cn_cq_ev)
		event_free(cn->cn_cq_ev);
	cn->cn_cq_ev = NULL;
	be_cq_unpark(cn);
	if (cn->cn_cq)
		be_vx()->destroy_cq(cn->cn_cq);
	cn->cn_cq = NULL;
	if (cn->cn_cc)
		be_vx()->destroy_comp_channel(cn->cn_cc);
	cn->cn_cc = NULL;
	if (cn->cn_cm_ev)
		event_free(cn->cn_cm_ev);
	cn->cn_cm_ev = NULL;
	if (cn->cn_timer)
		event_free(cn->cn_timer);
	cn->cn_timer = NULL;
	if (cn->cn_ccp_timer)
		event_free(cn->cn_ccp_timer);
	cn->cn_ccp_timer = NULL;
	if (cn->cn_drain_timer)
		event_free(cn->cn_drain_timer);
	cn->cn_drain_timer = NULL;
	if (cn->cn_id && cn->cn_was_up && !cn->cn_cm_disconnected && !pool->bp_freeing &&
	    closing_start(cn->cn_ctx, cn->cn_ch, cn->cn_id) == 0) {
		/* the id and its channel now belong to a be_closing */
	} else {
		if (cn->cn_id)
			be_vx()->destroy_id(cn->cn_id);
		if (cn->cn_ch)
			be_vx()->destroy_event_channel(cn->cn_ch);
	}
	cn->cn_id = NULL;
	cn->cn_ch = NULL;
	event_free(cn->cn_reap_ev);
	cn->cn_reap_ev = NULL;
	if (pool->bp_slots[cn->cn_slot].sl_conn == cn) {
		pool->bp_slots[cn->cn_slot].sl_conn = NULL;
		if (back && !pool->bp_fatal && !pool->bp_freeing) {
			/* The server is there: it closed in answer to calls. */
			struct timeval now = { 0, 0 };

			evtimer_add(pool->bp_slots[cn->cn_slot].sl_retry, &now);
		} else if (!pool->bp_fatal) {
			slot_schedule(pool, cn->cn_slot);
		}
	}
	be_conn_put(cn);	/* the slot's reference */
	if (was_up && pool->bp_event_cb && !pool->bp_freeing)
		pool->bp_event_cb(pool, BE_POOL_DOWN, pool->bp_event_arg);
	else if (!was_up && pool->bp_fail_fn && !pool->bp_freeing)
		pool->bp_fail_fn(pool, pool->bp_last_err, pool->bp_fail_arg);
	be_pool_pump(pool);
}

static void conn_drain_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct be_conn *cn = arg;

	(void)fd;
	(void)what;
	if (!cn->cn_draining)
		return;
	cn->cn_ctx->cx_stats.bs_drain_timeouts++;
	LOG(WARN, cn->cn_pool, "connection %u: %u signaled WRs not completed %u ms after close: "
			 "destroying anyway", cn->cn_slot, cn->cn_sig_out, cn->cn_ctx->cx_cfg.bc_drain_ms);
	cn->cn_draining = false;
	event_active(cn->cn_reap_ev, 0, 0);
}

/*
 * The connection is done: DEAD at once (nothing more is posted), then the
 * reap -- after a drain when signaled WRs are outstanding, so that each
 * completes (or is flushed) and gives back what it holds exactly once
 * before the QP goes: the QP is moved to ERR first and the drain collects
 * flush completions.  Bounded by bc_drain_ms; driven by the CQ events of
 * the event loop.  (be_pool_free() drains gracefully: conn_drain_sync().)
 */
void be_conn_fail(struct be_conn *cn, const char *why)
{
	struct be_ctx *ctx = cn->cn_pool->bp_ctx;
	struct timeval tv = ms_tv(ctx->cx_cfg.bc_drain_ms);

	if (cn->cn_state == BC_DEAD)
		return;
	LOG(WARN, cn->cn_pool, "connection %u %s: %s", cn->cn_slot,
	    cn->cn_state == BC_UP ? "lost" : "failed", why);
	snprintf(cn->cn_pool->bp_last_err, sizeof(cn->cn_pool->bp_last_err), "%s", why);
	if (cn->cn_state == BC_UP && cn->cn_pool->bp_isolated)
		ctx->cx_stats.bs_isolated_lost++;
	else if (cn->cn_state == BC_UP)
		ctx->cx_stats.bs_disconnects++;
	else
		ctx->cx_stats.bs_rejects++;
	cn->cn_state = BC_DEAD;
	if (cn->cn_qp && cn->cn_cq_ev && cn->cn_sig_out > 0 && ctx->cx_cfg.bc_drain_ms &&
	    !cn->cn_pool->bp_freeing) {
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

		be_vx()->modify_qp(cn->cn_qp, &qa, IBV_QP_STATE);
		cn->cn_draining = true;
		evtimer_add(cn->cn_drain_timer, &tv);
		return;
	}
	event_active(cn->cn_reap_ev, 0, 0);
}

/* be_pool_free(): wait for the signaled WRs by polling the CQ (bounded):
 * the caller expects every call settled when it returns. */
void be_conn_drain_sync(struct be_conn *cn)
{
	const struct be_config *cfg = &cn->cn_ctx->cx_cfg;
	struct timespec t0;
	struct ibv_wc wc[16];
	int n, i;

	now(&t0);
	while (cn->cn_sig_out > 0 && cn->cn_cq) {
		n = be_vx()->poll_cq(cn->cn_cq, 16, wc);
		if (n < 0)
			break;
		for (i = 0; i < n; i++)
			be_on_wc(cn, &wc[i]);
		if (n > 0)
			continue;
		if (ms_since(&t0) >= (long)cfg->bc_drain_ms) {
			cn->cn_ctx->cx_stats.bs_drain_timeouts++;
			LOG(WARN, cn->cn_pool, "connection %u: %u signaled WRs not completed in %u ms",
			    cn->cn_slot, cn->cn_sig_out, cfg->bc_drain_ms);
			break;
		}
		usleep(100);
	}
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* Device, PD, CQ, QP, buffers; receives posted.  After ROUTE_RESOLVED. */
static int conn_setup_qp(struct be_conn *cn)
{
	struct be_pool *pool = cn->cn_pool;
	struct be_ctx *ctx = pool->bp_ctx;
	const struct be_config *cfg = &ctx->cx_cfg;
	struct ibv_qp_init_attr qa;
	struct ibv_device_attr *da;
	unsigned i, cqe, nbinds;
	int d;

	d = be_dev_get(ctx, cn->cn_id->verbs);
	if (d < 0)
		return d;
	cn->cn_devidx = d;
	da = &ctx->cx_dev[d]->dv_attr;

	cn->cn_nrecv = cfg->bc_credits + BE_BC_RESERVE + BE_RECV_HEADROOM;
	cn->cn_nsend = cfg->bc_credits + BE_SEND_EXTRA;
	nbinds = cfg->bc_reg_mode == BE_REG_MW ? 8 : 0;	/* typical windows per call */
	cn->cn_sq_max = cn->cn_nsend * (1 + 2 * nbinds);
	if (cn->cn_sq_max < 2 * BE_MAX_CALL_SEGS + 1)
		cn->cn_sq_max = 2 * BE_MAX_CALL_SEGS + 1;
	if (cn->cn_sq_max > (unsigned)da->max_qp_wr - 1)
		cn->cn_sq_max = (unsigned)da->max_qp_wr - 1;
	if (cn->cn_nrecv > (unsigned)da->max_qp_wr)
		return -EINVAL;
	cqe = cn->cn_sq_max + cn->cn_nrecv + 2;
	if (cqe > (unsigned)da->max_cqe)
		cqe = (unsigned)da->max_cqe;

	cn->cn_cc = be_vx()->create_comp_channel(cn->cn_id->verbs);
	if (!cn->cn_cc || set_nonblock(cn->cn_cc->fd) < 0)
		return -EIO;
	cn->cn_cq = be_vx()->create_cq(cn->cn_id->verbs, (int)cqe, cn, cn->cn_cc, 0);
	if (!cn->cn_cq || be_vx()->req_notify_cq(cn->cn_cq, 0))
		return -EIO;
	cn->cn_cq_ev = event_new(ctx->cx_base, cn->cn_cc->fd, EV_READ | EV_PERSIST, be_on_cq, cn);
	if (!cn->cn_cq_ev || event_add(cn->cn_cq_ev, NULL))
		return -ENOMEM;

	memset(&qa, 0, sizeof(qa));
	qa.send_cq = cn->cn_cq;
	qa.recv_cq = cn->cn_cq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = cn->cn_sq_max + 1;
	qa.cap.max_recv_wr = cn->cn_nrecv + 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	if (be_vx()->create_qp(cn->cn_id, ctx->cx_dev[d]->dv_pd, &qa)) {
		LOG(ERR, pool, "ibv_create_qp(send %u, recv %u): %s", qa.cap.max_send_wr,
		    qa.cap.max_recv_wr, strerror(errno));
		return -errno;
	}
	cn->cn_qp = cn->cn_id->qp;

	cn->cn_memlen = (size_t)cn->cn_nrecv * cfg->bc_inline_recv +
			(size_t)cn->cn_nsend * cfg->bc_inline_send;
	if (posix_memalign((void **)&cn->cn_mem, 4096, cn->cn_memlen))
		return -ENOMEM;
	memset(cn->cn_mem, 0, cn->cn_memlen);
	cn->cn_mr = be_vx()->reg_mr(ctx->cx_dev[d]->dv_pd, cn->cn_mem, cn->cn_memlen,
			       IBV_ACCESS_LOCAL_WRITE);
	if (!cn->cn_mr)
		be_reg_fail_log(ctx, pool, cn->cn_memlen, errno);
	cn->cn_rbufs = aligned_alloc(16, cn->cn_nrecv * sizeof(struct be_rbuf));
	cn->cn_sfree = calloc(cn->cn_nsend, sizeof(unsigned));
	cn->cn_ring = calloc(cn->cn_nsend, sizeof(*cn->cn_ring));
	cn->cn_sbuf_seq = calloc(cn->cn_nsend, sizeof(*cn->cn_sbuf_seq));
	/* Per-post state: a call in flight holds a credit, a reply held holds
	 * a receive buffer; keepalive and CONF_RDMA fit in the extra. */
	cn->cn_nslots = cn->cn_nrecv + BE_SEND_EXTRA;
	cn->cn_slots = aligned_alloc(16, cn->cn_nslots * sizeof(struct be_call));
	if (!cn->cn_mr || !cn->cn_rbufs || !cn->cn_sfree || !cn->cn_slots || !cn->cn_ring ||
	    !cn->cn_sbuf_seq)
		return -ENOMEM;
	for (i = cn->cn_nslots; i-- > 0;) {
		struct be_call *ca = &cn->cn_slots[i];

		memset(ca, 0, offsetof(struct be_call, rq_plan));
		ca->rq_conn = cn;
		ca->rq_free_next = cn->cn_sfree_calls;
		cn->cn_sfree_calls = ca;
	}
	for (i = 0; i < cn->cn_nsend; i++)
		cn->cn_sfree[i] = cn->cn_nsend - 1 - i;
	cn->cn_nsfree = cn->cn_nsend;
	/* Unsignaled Sends (be_send_signal()): at most half the send buffers
	 * wait for a covering completion.  The Linux client signals every
	 * eighth (re_send_batch); its send contexts are per Send too. */
	cn->cn_send_batch = cfg->bc_send_batch ? cfg->bc_send_batch : cn->cn_nsend / 2;
	if (cn->cn_send_batch > cn->cn_nsend / 2)
		cn->cn_send_batch = cn->cn_nsend / 2;
	if (cn->cn_send_batch == 0)
		cn->cn_send_batch = 1;
	cn->cn_sq_call_max = 1 + (cfg->bc_reg_mode == BE_REG_MW ? 2 * BE_MAX_CALL_SEGS : 0);
	be_credits_init(&cn->cn_cr, cfg->bc_credits, BE_BC_RESERVE);
	for (i = 0; i < cn->cn_nrecv; i++) {
		cn->cn_rbufs[i].rb_conn = cn;
		cn->cn_rbufs[i].rb_buf = cn->cn_mem + (size_t)i * cfg->bc_inline_recv;
		be_repost_rbuf(cn, &cn->cn_rbufs[i]);
		if (cn->cn_state == BC_DEAD)
			return -EIO;
	}
	cn->cn_rr = cfg->bc_responder_resources;
	if (cn->cn_rr > (unsigned)da->max_qp_rd_atom)
		cn->cn_rr = (unsigned)da->max_qp_rd_atom;
	cn->cn_id_depth = 16;
	if (cn->cn_id_depth > (unsigned)da->max_qp_init_rd_atom)
		cn->cn_id_depth = (unsigned)da->max_qp_init_rd_atom;
	cn->cn_read_depth = cn->cn_id_depth;
	return 0;
}

static void conn_connect(struct be_conn *cn)
{
	const struct be_config *cfg = &cn->cn_pool->bp_ctx->cx_cfg;
	struct rdma_conn_param cp;
	uint8_t pd[RPCRDMA_PD_LEN];
	int rc;

	rc = conn_setup_qp(cn);
	if (rc < 0) {
		be_conn_fail(cn, strerror(-rc));
		return;
	}
	cn->cn_ours = (struct rpcrdma_pd){ .pd_remote_inv = cfg->bc_remote_inv &&
						cfg->bc_reg_mode == BE_REG_MW,
					   .pd_send_size = cfg->bc_inline_send,
					   .pd_recv_size = cfg->bc_inline_recv };
	rpcrdma_pd_encode(&cn->cn_ours, pd);
	memset(&cp, 0, sizeof(cp));
	cp.private_data = pd;
	cp.private_data_len = sizeof(pd);
	cp.responder_resources = (uint8_t)cn->cn_rr;
	cp.initiator_depth = (uint8_t)cn->cn_id_depth;
	cp.retry_count = 6;
	cp.rnr_retry_count = 7;
	if (be_vx()->connect(cn->cn_id, &cp)) {
		be_conn_fail(cn, "rdma_connect failed");
		return;
	}
	cn->cn_state = BC_CONNECTING;
}

static void keepalive_cb(struct be_req *rq, const struct be_reply *r, void *arg)
{
	(void)r;
	(void)arg;
	be_call_release(rq);
}

static void conn_timer(evutil_socket_t fd, short what, void *arg)
{
	struct be_conn *cn = arg;
	struct be_pool *pool = cn->cn_pool;
	const struct be_config *cfg = &pool->bp_ctx->cx_cfg;
	struct be_call_desc d;
	uint8_t *msg = cn->cn_ka_msg;
	struct timeval tv;

	(void)fd;
	(void)what;
	if (cn->cn_state != BC_UP) {
		be_conn_fail(cn, "connect timeout");
		return;
	}
	if (!cfg->bc_keepalive_ms)
		return;
	tv = ms_tv(cfg->bc_keepalive_ms);
	evtimer_add(cn->cn_timer, &tv);
	if (cn->cn_ka) {
		if (ms_since(&cn->cn_ka_sent_at) >= (long)cfg->bc_keepalive_ms)
			be_conn_fail(cn, "keepalive NULL unanswered");
		return;
	}
	if (ms_since(&cn->cn_last_rx) < (long)cfg->bc_keepalive_ms || !be_credits_can_send(&cn->cn_cr))
		return;
	if (cn->cn_ka_req.bq_state != BE_REQ_IDLE)
		return;
	/* NULL call: xid, CALL, rpcvers 2, prog, vers, proc 0, AUTH_NONE x2 */
	memset(msg, 0, sizeof(cn->cn_ka_msg));
	pool->bp_ka_xid = (pool->bp_ka_xid + 1) | 0x80000000u;
	chk_put_be32(msg, pool->bp_ka_xid);
	chk_put_be32(msg + 8, RPC_VERS);
	chk_put_be32(msg + 12, cfg->bc_keepalive_prog);
	chk_put_be32(msg + 16, cfg->bc_keepalive_vers);
	cn->cn_ka_iov = (struct iovec){ msg, sizeof(cn->cn_ka_msg) };
	d = (struct be_call_desc){ .cd_xid = pool->bp_ka_xid, .cd_msg = &cn->cn_ka_iov,
				   .cd_msg_niov = 1 };
	if (be_xid_busy(pool, d.cd_xid))
		return;
	be_req_init(&cn->cn_ka_req, pool, &d, keepalive_cb, NULL);
	if (be_call_post(cn, &cn->cn_ka_req) < 0)
		return;
	cn->cn_ka = cn->cn_ka_req.bq_post;
	now(&cn->cn_ka_sent_at);
	pool->bp_ctx->cx_stats.bs_keepalives++;
}

/*
 * CCP (draft-08 6): the end of the CONF_RDMA exchange, whatever it was.  The
 * connection becomes ready for other calls either way: with the server's
 * values applied within ours, or with the RFC 8797 ones kept.
 */
static void ccp_end(struct be_conn *cn, enum be_ccp_result res, const struct ccp_reply *rep)
{
	struct be_pool *pool = cn->cn_pool;
	struct be_ctx *ctx = cn->cn_ctx;
	uint32_t old_send = cn->cn_send_thresh;

	evtimer_del(cn->cn_ccp_timer);
	if (res == BE_CCP_RES_OK) {
		be_ccp_apply(rep, ctx->cx_cfg.bc_inline_send, cn->cn_id_depth, &cn->cn_send_thresh,
			     &cn->cn_read_depth);
		cn->cn_ccp = BE_CCP_DONE;
		ctx->cx_stats.bs_ccp_ok++;
		LOG(INFO, pool, "connection %u: CONF_RDMA answered maxcall_sendsize %u align %u "
			  "maxrdmaread %u: inline send %u -> %u, Read depth %u", cn->cn_slot,
		    rep->ccr_maxcall_sendsize, rep->ccr_align, rep->ccr_maxrdmaread, old_send,
		    cn->cn_send_thresh, cn->cn_read_depth);
	} else {
		cn->cn_ccp = BE_CCP_FALLBACK;
		ctx->cx_stats.bs_ccp_fallback++;
		if (!pool->bp_ccp_warned)	/* once per pool: the server will not change */
			LOG(INFO, pool, "connection %u: CONF_RDMA %s: server does not speak CCP, keeping "
				  "RFC 8797 values (inline send %u, Read depth %u)", cn->cn_slot,
			    be_ccp_result_str(res), cn->cn_send_thresh, cn->cn_read_depth);
		pool->bp_ccp_warned = true;
	}
	if (pool->bp_event_cb)
		pool->bp_event_cb(pool, BE_POOL_UP, pool->bp_event_arg);
	be_pool_pump(pool);
}

static void ccp_cb(struct be_req *rq, const struct be_reply *r, void *arg)
{
	struct be_conn *cn = arg;
	struct ccp_reply rep;
	enum be_ccp_result res;

	if (cn->cn_ccp_call && cn->cn_ccp_call->rq_req == rq)
		cn->cn_ccp_call = NULL;
	if (cn->cn_state == BC_UP && cn->cn_ccp == BE_CCP_PENDING) {
		res = r->br_err != BE_OK ? BE_CCP_RES_GARBAGE
					 : be_ccp_reply_parse(r->br_body, r->br_nbody, r->br_xid, &rep);
		ccp_end(cn, res, &rep);
	}
	be_call_release(rq);
}

/* No answer: a server that drops calls to unknown programs has reposted the
 * receive, so the credit is taken back and the connection used as is. */
static void ccp_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct be_conn *cn = arg;

	(void)fd;
	(void)what;
	if (cn->cn_state != BC_UP || cn->cn_ccp != BE_CCP_PENDING)
		return;
	if (cn->cn_ccp_call) {
		cn->cn_ccp_call->rq_ccp_abandoned = true;
		be_credits_replied(&cn->cn_cr);
	}
	ccp_end(cn, BE_CCP_RES_TIMEOUT, NULL);
}

/* Post CONF_RDMA as the connection's first call; false when it cannot go. */
static bool ccp_start(struct be_conn *cn)
{
	struct be_pool *pool = cn->cn_pool;
	const struct be_config *cfg = &cn->cn_ctx->cx_cfg;
	struct ccp_req req = { .cq_maxcall_sendsize = cfg->bc_inline_send,
			       .cq_maxreply_sendsize = cfg->bc_inline_recv,
			       .cq_maxrdmaread = cn->cn_rr };
	struct timeval tv = ms_tv(cfg->bc_ccp_timeout_ms);
	struct be_call_desc d;
	size_t len;

	do
		pool->bp_ka_xid = (pool->bp_ka_xid + 1) | 0x80000000u;
	while (be_xid_busy(pool, pool->bp_ka_xid));
	if (cn->cn_ccp_req.bq_state != BE_REQ_IDLE)
		return false;
	len = be_ccp_call_encode(pool->bp_ka_xid, &req, cn->cn_ccp_msg);
	if (!len)
		return false;
	cn->cn_ccp_iov = (struct iovec){ cn->cn_ccp_msg, len };
	d = (struct be_call_desc){ .cd_xid = pool->bp_ka_xid, .cd_msg = &cn->cn_ccp_iov,
				   .cd_msg_niov = 1 };
	be_req_init(&cn->cn_ccp_req, pool, &d, ccp_cb, cn);
	if (be_call_post(cn, &cn->cn_ccp_req) < 0)
		return false;
	cn->cn_ccp_call = cn->cn_ccp_req.bq_post;
	cn->cn_ccp = BE_CCP_PENDING;
	evtimer_add(cn->cn_ccp_timer, &tv);
	return true;
}

static void conn_established(struct be_conn *cn, const void *pdata, unsigned pdlen)
{
	struct be_pool *pool = cn->cn_pool;
	const struct be_config *cfg = &pool->bp_ctx->cx_cfg;
	struct timeval tv;

	cn->cn_peer_raw_len = pdlen;
	memcpy(cn->cn_peer_raw, pdata, pdlen < 8 ? pdlen : 8);
	cn->cn_peer_pd = pdata && rpcrdma_pd_decode(pdata, pdlen, &cn->cn_peer);
	if (!cn->cn_peer_pd)
		rpcrdma_pd_decode(NULL, 0, &cn->cn_peer);	/* RFC 8797 defaults */
	rpcrdma_inline_thresholds(&cn->cn_ours, &cn->cn_peer, &cn->cn_send_thresh,
				  &cn->cn_recv_thresh);
	if (cn->cn_send_thresh > cfg->bc_inline_send)
		cn->cn_send_thresh = cfg->bc_inline_send;
	cn->cn_state = BC_UP;
	cn->cn_was_up = true;
	now(&cn->cn_last_rx);
	pool->bp_ctx->cx_stats.bs_connects++;
	LOG(INFO, pool, "connection %u up: peer private data %s (send %u, recv %u, R %d), inline "
		  "send %u recv %u, responder_resources %u initiator_depth %u", cn->cn_slot,
	    cn->cn_peer_pd ? "yes" : "no", cn->cn_peer.pd_send_size, cn->cn_peer.pd_recv_size,
	    cn->cn_peer.pd_remote_inv, cn->cn_send_thresh, cn->cn_recv_thresh, cn->cn_rr,
	    cn->cn_id_depth);
	evtimer_del(cn->cn_timer);
	if (cfg->bc_keepalive_ms) {
		tv = ms_tv(cfg->bc_keepalive_ms);
		evtimer_add(cn->cn_timer, &tv);
	}
	/* CCP first (draft-08 6.1): one call, the rest wait for its answer. */
	if (cfg->bc_ccp) {
		if (!ccp_start(cn))
			ccp_end(cn, BE_CCP_RES_GARBAGE, NULL);	/* could not even send it */
		return;
	}
	if (pool->bp_event_cb)
		pool->bp_event_cb(pool, BE_POOL_UP, pool->bp_event_arg);
	be_pool_pump(pool);
}

static void on_cm(evutil_socket_t fd, short what, void *arg)
{
	struct be_conn *cn = arg;
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	int status;
	uint8_t pdata[256];
	unsigned pdlen = 0;

	(void)fd;
	(void)what;
	while (cn->cn_state != BC_DEAD && be_vx()->get_cm_event(cn->cn_ch, &ev) == 0) {
		type = ev->event;
		status = ev->status;
		if ((type == RDMA_CM_EVENT_ESTABLISHED || type == RDMA_CM_EVENT_REJECTED) &&
		    ev->param.conn.private_data) {
			pdlen = ev->param.conn.private_data_len;
			if (pdlen > sizeof(pdata))
				pdlen = sizeof(pdata);
			memcpy(pdata, ev->param.conn.private_data, pdlen);
		}
		/* Ack first: rdma_destroy_id() waits for every event acked. */
		be_vx()->ack_cm_event(ev);
		switch (type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (be_vx()->resolve_route(cn->cn_id, (int)cn->cn_pool->bp_ctx->cx_cfg.bc_connect_timeout_ms))
				be_conn_fail(cn, "rdma_resolve_route failed");
			break;
		case RDMA_CM_EVENT_ROUTE_RESOLVED:
			conn_connect(cn);
			break;
		case RDMA_CM_EVENT_ESTABLISHED:
			conn_established(cn, pdlen ? pdata : NULL, pdlen);
			break;
		case RDMA_CM_EVENT_REJECTED: {
			char hex[3 * 16 + 1] = "";
			unsigned i;

			for (i = 0; i < pdlen && i < 16; i++)
				snprintf(hex + 3 * i, 4, "%02x ", pdata[i]);
			LOG(WARN, cn->cn_pool, "connection %u rejected: status %d, private data %u "
					 "bytes: %s", cn->cn_slot, status, pdlen, hex);
			be_conn_fail(cn, "REJECTED");
			break;
		}
		case RDMA_CM_EVENT_ADDR_ERROR:
		case RDMA_CM_EVENT_ROUTE_ERROR:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
			LOG(WARN, cn->cn_pool, "%s status %d", rdma_event_str(type), status);
			be_conn_fail(cn, rdma_event_str(type));
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			/* Ours go through a be_closing: this one is the server's. */
			cn->cn_server_closed = cn->cn_state == BC_UP;
			cn->cn_cm_disconnected = true;
			be_conn_fail(cn, rdma_event_str(type));
			break;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			cn->cn_cm_disconnected = true;	/* the id must go now */
			be_conn_fail(cn, rdma_event_str(type));
			break;
		case RDMA_CM_EVENT_ADDR_CHANGE:
			be_conn_fail(cn, rdma_event_str(type));
			break;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			break;
		default:
			LOG(DEBUG, cn->cn_pool, "ignored CM event %s status %d", rdma_event_str(type), status);
			break;
		}
		pdlen = 0;
	}
}

void be_conn_start(struct be_pool *pool, unsigned slot)
{
	struct be_ctx *ctx = pool->bp_ctx;
	struct be_conn *cn;
	struct timeval tv;

	cn = aligned_alloc(16, (sizeof(*cn) + 15) & ~(size_t)15);
	if (!cn) {
		slot_schedule(pool, slot);
		return;
	}
	memset(cn, 0, sizeof(*cn));
	cn->cn_ctx = ctx;
	cn->cn_pool = pool;
	cn->cn_slot = slot;
	cn->cn_refs = 1;
	cn->cn_devidx = -1;
	cn->cn_state = BC_RESOLVING;
	TAILQ_INIT(&cn->cn_calls);
	TAILQ_INIT(&cn->cn_rdwait);
	pool->bp_slots[slot].sl_conn = cn;
	cn->cn_reap_ev = event_new(ctx->cx_base, -1, 0, be_conn_reap, cn);
	cn->cn_timer = evtimer_new(ctx->cx_base, conn_timer, cn);
	cn->cn_ccp_timer = evtimer_new(ctx->cx_base, ccp_timeout, cn);
	cn->cn_drain_timer = evtimer_new(ctx->cx_base, conn_drain_timeout, cn);
	if (!cn->cn_reap_ev || !cn->cn_timer || !cn->cn_ccp_timer || !cn->cn_drain_timer) {
		LOG(ERR, pool, "out of memory");
		abort();
	}
	cn->cn_ch = be_vx()->create_event_channel();
	if (!cn->cn_ch || set_nonblock(cn->cn_ch->fd) < 0 ||
	    be_vx()->create_id(cn->cn_ch, &cn->cn_id, cn, RDMA_PS_TCP)) {
		be_conn_fail(cn, "rdma_create_event_channel/id failed (no RDMA device?)");
		return;
	}
	cn->cn_cm_ev = event_new(ctx->cx_base, cn->cn_ch->fd, EV_READ | EV_PERSIST, on_cm, cn);
	if (!cn->cn_cm_ev || event_add(cn->cn_cm_ev, NULL)) {
		be_conn_fail(cn, "event_add");
		return;
	}
	tv = ms_tv(ctx->cx_cfg.bc_connect_timeout_ms);
	evtimer_add(cn->cn_timer, &tv);
	if (be_vx()->resolve_addr(cn->cn_id, NULL, (struct sockaddr *)&pool->bp_addr,
			      (int)ctx->cx_cfg.bc_connect_timeout_ms))
		be_conn_fail(cn, "rdma_resolve_addr failed");
}

void be_slot_retry(evutil_socket_t fd, short what, void *arg)
{
	struct be_slot *sl = arg;

	(void)fd;
	(void)what;
	be_conn_start(sl->sl_pool, sl->sl_idx);
}

static void slot_schedule(struct be_pool *pool, unsigned slot)
{
	const struct be_config *cfg = &pool->bp_ctx->cx_cfg;
	struct be_slot *sl = &pool->bp_slots[slot];
	struct timeval tv;

	sl->sl_backoff_ms = sl->sl_backoff_ms ? sl->sl_backoff_ms * 2 : cfg->bc_retry_min_ms;
	if (sl->sl_backoff_ms > cfg->bc_retry_max_ms)
		sl->sl_backoff_ms = cfg->bc_retry_max_ms;
	tv = ms_tv(sl->sl_backoff_ms);
	evtimer_add(sl->sl_retry, &tv);
}
