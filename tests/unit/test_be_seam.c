// SPDX-License-Identifier: MIT
/*
 * Unit tests of backend-rdma at its verbs seam (be_internal.h): a
 * fake device -- rdma_cm events, a CQ fed by the test, posted WRs recorded
 * -- drives real connections of the backend on a libevent loop, without
 * RDMA.  Covered: flush completions after a disconnect give back what they
 * hold once and every call is settled once (re-sent, one callback each);
 * the drain before the reap and its time bound; be_pool_free() letting a
 * posted Send complete before the QP goes; the CCP exchange (first call,
 * others held, answer applied, timeout fallback); BE_POOL_ROOM; a new
 * destination (be_pool_set_addr) taken by the next connection only; a
 * registration refused for locked memory names RLIMIT_MEMLOCK; an
 * unanswered call abandoned at the caller's timeout (windows invalidated
 * without a reply, credit back, late reply dropped); with two connections
 * a call goes on its XID's own (t19).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <netinet/in.h>
#include <cmocka.h>

#include <event2/event.h>

#include "alloc_count.h"
#include "backend.h"
#include "be_internal.h"

/* ---- the fake device ------------------------------------------------- */

#define MAXQ 1024

struct fsend {
	uint64_t wr_id;
	enum ibv_wr_opcode op;
	unsigned flags;
	uint8_t *addr;
	uint32_t len;
	bool answered;			/* answer_all() gave it a reply */
};

struct fconn {
	struct rdma_event_channel ch;
	struct rdma_cm_id id;
	struct ibv_comp_channel cc;
	struct ibv_cq cq;
	struct ibv_qp qp;
	struct rdma_cm_event ev[8];
	unsigned nev;
	struct ibv_wc wc[MAXQ];
	unsigned nwc, npolled;
	bool armed;
	struct fsend sends[MAXQ];
	unsigned nsends;
	struct { uint64_t wr_id; uint8_t *addr; uint32_t len; } recvs[MAXQ];
	unsigned nrecvs, recv_head;
	int qp_state;
	int polled_at_err;		/* completions polled when the QP went to ERR */
	bool qp_destroyed;
	struct timespec t_err, t_destroyed;
	struct sockaddr_in dst;		/* where rdma_resolve_addr was sent */
};

static struct {
	struct ibv_context ctx;
	struct ibv_pd pd;
	struct fconn *conns[16];
	unsigned nconns;
	bool no_establish;		/* connect() does not answer */
	struct fconn *ev_fc;		/* whose CM event is being handled */
	uint8_t peer_pd[RPCRDMA_PD_LEN];
	int nmr;
	uint32_t next_key;
} F;

static struct fconn *cur(void)
{
	return F.nconns ? F.conns[F.nconns - 1] : NULL;
}

static void kick(int fd)
{
	uint64_t one = 1;

	assert_int_equal(write(fd, &one, 8), 8);
}

static void drain_fd(int fd)
{
	uint64_t v;

	while (read(fd, &v, 8) == 8)
		;
}

static void queue_cm(struct fconn *fc, enum rdma_cm_event_type t)
{
	struct rdma_cm_event *e = &fc->ev[fc->nev++];

	memset(e, 0, sizeof(*e));
	e->event = t;
	e->id = &fc->id;
	if (t == RDMA_CM_EVENT_ESTABLISHED) {
		e->param.conn.private_data = F.peer_pd;
		e->param.conn.private_data_len = sizeof(F.peer_pd);
	}
	kick(fc->ch.fd);
}

static void queue_wc(struct fconn *fc, uint64_t wr_id, enum ibv_wc_status st,
		     enum ibv_wc_opcode op, uint32_t len)
{
	struct ibv_wc *w = &fc->wc[fc->nwc++];

	assert_true(fc->nwc < MAXQ);
	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->status = st;
	w->opcode = op;
	w->byte_len = len;
	if (fc->armed) {
		fc->armed = false;
		kick(fc->cc.fd);
	}
}

static struct rdma_event_channel *f_create_event_channel(void)
{
	struct fconn *fc = calloc(1, sizeof(*fc));

	fc->ch.fd = eventfd(0, EFD_NONBLOCK);
	fc->cc.fd = eventfd(0, EFD_NONBLOCK);
	fc->qp_state = IBV_QPS_RTS;
	fc->polled_at_err = -1;
	F.conns[F.nconns++] = fc;
	return &fc->ch;
}

static void f_destroy_event_channel(struct rdma_event_channel *ch)
{
	close(ch->fd);	/* the fconn stays for the test to look at */
}

static int f_create_id(struct rdma_event_channel *ch, struct rdma_cm_id **id, void *ctx,
		       enum rdma_port_space ps)
{
	struct fconn *fc = (struct fconn *)((char *)ch - offsetof(struct fconn, ch));

	(void)ps;
	fc->id.verbs = &F.ctx;
	fc->id.context = ctx;
	fc->id.channel = ch;
	*id = &fc->id;
	return 0;
}

#define FC_OF(p, m) ((struct fconn *)((char *)(p) - offsetof(struct fconn, m)))

static int f_destroy_id(struct rdma_cm_id *id) { (void)id; return 0; }
static int f_resolve_addr(struct rdma_cm_id *id, struct sockaddr *s, struct sockaddr *d, int t)
{
	(void)s; (void)t;
	memcpy(&FC_OF(id, id)->dst, d, sizeof(struct sockaddr_in));
	queue_cm(FC_OF(id, id), RDMA_CM_EVENT_ADDR_RESOLVED);
	return 0;
}
static int f_resolve_route(struct rdma_cm_id *id, int t)
{
	(void)t;
	queue_cm(FC_OF(id, id), RDMA_CM_EVENT_ROUTE_RESOLVED);
	return 0;
}
static int f_connect(struct rdma_cm_id *id, struct rdma_conn_param *p)
{
	(void)p;
	if (!F.no_establish)
		queue_cm(FC_OF(id, id), RDMA_CM_EVENT_ESTABLISHED);
	return 0;
}
static int f_disconnect(struct rdma_cm_id *id)
{
	queue_cm(FC_OF(id, id), RDMA_CM_EVENT_DISCONNECTED);
	return 0;
}
static int f_get_cm_event(struct rdma_event_channel *ch, struct rdma_cm_event **ev)
{
	struct fconn *fc = FC_OF(ch, ch);
	struct rdma_cm_event *e;

	if (fc->nev == 0) {
		drain_fd(ch->fd);
		errno = EAGAIN;
		return -1;
	}
	F.ev_fc = fc;
	e = malloc(sizeof(*e));
	*e = fc->ev[0];
	memmove(fc->ev, fc->ev + 1, --fc->nev * sizeof(fc->ev[0]));
	*ev = e;
	return 0;
}
static int f_ack_cm_event(struct rdma_cm_event *ev) { free(ev); return 0; }
static int f_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct fconn *fc = FC_OF(id, id);

	(void)pd;
	(void)a;
	fc->qp.context = &F.ctx;
	id->qp = &fc->qp;
	return 0;
}
static void f_destroy_qp(struct rdma_cm_id *id)
{
	FC_OF(id, id)->qp_destroyed = true;
	clock_gettime(CLOCK_MONOTONIC, &FC_OF(id, id)->t_destroyed);
	id->qp = NULL;
}
static int f_query_device(struct ibv_context *v, struct ibv_device_attr *a)
{
	(void)v;
	memset(a, 0, sizeof(*a));
	a->max_qp_wr = 16384;
	a->max_cqe = 65536;
	a->max_qp_rd_atom = 16;
	a->max_qp_init_rd_atom = 16;
	return 0;
}
static struct ibv_pd *f_alloc_pd(struct ibv_context *v) { (void)v; return &F.pd; }
static int f_dealloc_pd(struct ibv_pd *pd) { (void)pd; return 0; }
/* reg_mr of this many bytes (SIZE_MAX: of any) fails as past RLIMIT_MEMLOCK;
 * 0: none (survives bench_up). */
static size_t f_reg_enomem;
static struct ibv_mr *f_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int acc)
{
	struct ibv_mr *mr;

	(void)pd;
	(void)acc;
	if (f_reg_enomem == SIZE_MAX || f_reg_enomem == len) {
		errno = ENOMEM;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	mr->addr = addr;
	mr->length = len;
	mr->lkey = mr->rkey = ++F.next_key << 8;
	F.nmr++;
	return mr;
}
static int f_dereg_mr(struct ibv_mr *mr) { free(mr); F.nmr--; return 0; }
static struct ibv_mw *f_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type t)
{
	struct ibv_mw *mw = calloc(1, sizeof(*mw));

	(void)pd;
	mw->type = t;
	mw->rkey = ++F.next_key << 8;
	return mw;
}
static int f_dealloc_mw(struct ibv_mw *mw) { free(mw); return 0; }
/* The backend makes it on ROUTE_RESOLVED: the channel of the connection
 * whose event that is (with several connections, not always the newest). */
static struct ibv_comp_channel *f_create_comp_channel(struct ibv_context *v)
{
	(void)v;
	return &(F.ev_fc ? F.ev_fc : cur())->cc;
}
static int f_destroy_comp_channel(struct ibv_comp_channel *cc) { close(cc->fd); return 0; }
static struct ibv_cq *f_create_cq(struct ibv_context *v, int cqe, void *ctx,
				  struct ibv_comp_channel *cc, int vec)
{
	struct fconn *fc = FC_OF(cc, cc);

	(void)v; (void)cqe; (void)vec;
	fc->cq.channel = cc;
	fc->cq.cq_context = ctx;
	return &fc->cq;
}
static int f_destroy_cq(struct ibv_cq *cq) { (void)cq; return 0; }
static int f_req_notify_cq(struct ibv_cq *cq, int so)
{
	struct fconn *fc = FC_OF(cq, cq);

	(void)so;
	fc->armed = true;
	if (fc->nwc) {
		fc->armed = false;
		kick(fc->cc.fd);
	}
	return 0;
}
static int f_get_cq_event(struct ibv_comp_channel *cc, struct ibv_cq **cq, void **ctx)
{
	struct fconn *fc = FC_OF(cc, cc);
	uint64_t v;

	if (read(cc->fd, &v, 8) != 8) {
		errno = EAGAIN;
		return -1;
	}
	*cq = &fc->cq;
	*ctx = fc->cq.cq_context;
	return 0;
}
static void f_ack_cq_events(struct ibv_cq *cq, unsigned n) { (void)cq; (void)n; }
static int f_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct fconn *fc = FC_OF(cq, cq);
	int k = 0;

	while (k < n && fc->nwc) {
		wc[k++] = fc->wc[0];
		memmove(fc->wc, fc->wc + 1, --fc->nwc * sizeof(fc->wc[0]));
		fc->npolled++;
	}
	return k;
}
static int f_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fconn *fc = FC_OF(qp, qp);

	(void)bad;
	for (; wr; wr = wr->next) {
		struct fsend *s = &fc->sends[fc->nsends++];

		assert_true(fc->nsends < MAXQ);
		s->wr_id = wr->wr_id;
		s->op = wr->opcode;
		s->flags = wr->send_flags;
		s->answered = false;
		s->addr = wr->num_sge ? (uint8_t *)(uintptr_t)wr->sg_list[0].addr : NULL;
		s->len = wr->num_sge ? wr->sg_list[0].length : 0;
	}
	return 0;
}
static int f_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fconn *fc = FC_OF(qp, qp);

	(void)bad;
	for (; wr; wr = wr->next) {
		fc->recvs[fc->nrecvs].wr_id = wr->wr_id;
		fc->recvs[fc->nrecvs].addr = (uint8_t *)(uintptr_t)wr->sg_list[0].addr;
		fc->recvs[fc->nrecvs].len = wr->sg_list[0].length;
		fc->nrecvs++;
		assert_true(fc->nrecvs < MAXQ);
	}
	return 0;
}
static int f_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct fconn *fc = FC_OF(qp, qp);

	(void)mask;
	if (a->qp_state == IBV_QPS_ERR && fc->qp_state != IBV_QPS_ERR) {
		fc->polled_at_err = (int)fc->npolled;
		clock_gettime(CLOCK_MONOTONIC, &fc->t_err);
	}
	fc->qp_state = a->qp_state;
	return 0;
}

static const struct be_verbs fake_verbs = {
	f_create_event_channel, f_destroy_event_channel, f_create_id, f_destroy_id,
	f_resolve_addr, f_resolve_route, f_connect, f_disconnect, f_get_cm_event, f_ack_cm_event,
	f_create_qp, f_destroy_qp, f_query_device, f_alloc_pd, f_dealloc_pd, f_reg_mr, f_dereg_mr,
	f_alloc_mw, f_dealloc_mw, f_create_comp_channel, f_destroy_comp_channel, f_create_cq,
	f_destroy_cq, f_req_notify_cq, f_get_cq_event, f_ack_cq_events, f_poll_cq, f_post_send,
	f_post_recv, f_modify_qp,
};

/* ---- the test bench --------------------------------------------------- */

#define MAXCALLS 16

struct bench {
	struct event_base *base;
	struct be_ctx *ctx;
	struct be_pool *pool;
	unsigned ev[4];				/* pool events by type */
	unsigned ncb;
	uint32_t cb_xid[64];
	enum be_err cb_err[64];
	int cb_qp_state[64];			/* the QP's state at each callback */
	uint8_t msg[MAXCALLS][40];
	struct iovec iov[MAXCALLS];
	struct be_req req[MAXCALLS];		/* the calls, embedded as a caller does */
};

static void on_event(struct be_pool *pool, enum be_pool_event ev, void *arg)
{
	struct bench *b = arg;

	(void)pool;
	b->ev[ev]++;
}

static void on_reply(struct be_req *call, const struct be_reply *r, void *arg)
{
	struct bench *b = arg;

	b->cb_qp_state[b->ncb] = F.nconns ? F.conns[F.nconns - 1]->qp_state : -1;
	b->cb_xid[b->ncb] = r->br_xid;
	b->cb_err[b->ncb++] = r->br_err;
	be_call_release(call);
}

static unsigned cb_count(const struct bench *b, uint32_t xid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->ncb; i++)
		n += b->cb_xid[i] == xid;
	return n;
}

/* Run the loop for ms.  (Not EVLOOP_NONBLOCK in a loop: in some sandboxes
 * a zero epoll timeout waits for the next timer.) */
static void spin(struct bench *b, unsigned ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(b->base, &tv);
	event_base_dispatch(b->base);
}

static void bench_up(struct bench *b, struct be_config *cfg)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(20049) };
	struct rpcrdma_pd pd = { .pd_send_size = 4096, .pd_recv_size = 4096 };

	memset(&F, 0, sizeof(F));
	rpcrdma_pd_encode(&pd, F.peer_pd);
	be_verbs_set(&fake_verbs);
	memset(b, 0, sizeof(*b));
	b->base = event_base_new();
	cfg->bc_keepalive_ms = 0;
	if (cfg->bc_drain_ms == 2000)
		cfg->bc_drain_ms = 200;	/* the cases leave Sends out at the end */
	cfg->bc_retry_min_ms = 1;
	cfg->bc_retry_max_ms = 2;
	b->ctx = be_ctx_new(b->base, cfg);
	b->pool = be_pool_new(b->ctx, (struct sockaddr *)&sin, sizeof(sin), on_event, b);
	assert_non_null(b->pool);
	spin(b, 5);
}

static void bench_down(struct bench *b)
{
	if (b->pool)
		be_pool_free(b->pool);
	be_ctx_free(b->ctx);
	event_base_free(b->base);
	for (unsigned i = 0; i < F.nconns; i++)
		free(F.conns[i]);
	F.nconns = 0;
	be_verbs_set(NULL);
}

/* The call in b->req[i], or NULL with errno set. */
static struct be_req *submit(struct bench *b, unsigned i, uint32_t xid)
{
	uint8_t *m = b->msg[i];
	struct be_call_desc d;
	int rc;

	memset(m, 0, 40);
	chk_put_be32(m, xid);
	chk_put_be32(m + 8, RPC_VERS);
	chk_put_be32(m + 12, 100003);
	chk_put_be32(m + 16, 3);
	b->iov[i] = (struct iovec){ m, 40 };
	d = (struct be_call_desc){ .cd_xid = xid, .cd_msg = &b->iov[i], .cd_msg_niov = 1 };
	rc = be_call_submit(b->pool, &b->req[i], &d, on_reply, b);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	return &b->req[i];
}

/* The latest Send WR carrying xid (its transport header starts with the
 * XID; send buffers are reused, so older records may show a newer call). */
static int send_of(struct fconn *fc, uint32_t xid)
{
	for (unsigned i = fc->nsends; i-- > 0;)
		if (fc->sends[i].op == IBV_WR_SEND && fc->sends[i].len >= 4 &&
		    chk_be32(fc->sends[i].addr) == xid)
			return (int)i;
	return -1;
}

static unsigned nsends_op(struct fconn *fc, enum ibv_wr_opcode op)
{
	unsigned n = 0;

	for (unsigned i = 0; i < fc->nsends; i++)
		n += fc->sends[i].op == op;
	return n;
}

/* The device completes xid's Send: a completion comes if it was signaled
 * or it ended in error (a flush included), as on a real RC QP. */
static void complete_send(struct fconn *fc, uint32_t xid, enum ibv_wc_status st)
{
	int i = send_of(fc, xid);

	assert_true(i >= 0);
	if (st != IBV_WC_SUCCESS || (fc->sends[i].flags & IBV_SEND_SIGNALED))
		queue_wc(fc, fc->sends[i].wr_id, st, IBV_WC_SEND, 0);
}

/* An RDMA_MSG reply to xid in the next posted receive: accepted with stat
 * and nres result words. */
static void deliver_reply(struct fconn *fc, uint32_t xid, uint32_t credits, uint32_t stat,
			  const uint32_t *res, unsigned nres)
{
	struct rpcrdma_hdr h;
	struct xdr_enc xe;
	unsigned r = fc->recv_head++;

	assert_true(r < fc->nrecvs);
	memset(&h, 0, sizeof(h));
	h.rh_xid = xid;
	h.rh_vers = 1;
	h.rh_credit = credits;
	h.rh_proc = RPCRDMA_MSG;
	xdr_enc_init(&xe, fc->recvs[r].addr, fc->recvs[r].len);
	assert_true(rpcrdma_hdr_encode(&xe, &h));
	xdr_put_u32(&xe, xid);
	xdr_put_u32(&xe, RPC_REPLY);
	xdr_put_u32(&xe, RPC_MSG_ACCEPTED);
	xdr_put_u32(&xe, 0);
	xdr_put_u32(&xe, 0);
	xdr_put_u32(&xe, stat);
	for (unsigned i = 0; i < nres; i++)
		xdr_put_u32(&xe, res[i]);
	queue_wc(fc, fc->recvs[r].wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, (uint32_t)xe.xe_len);
}

/* Answer every call of fc that has a Send and no reply yet. */
static void answer_all(struct bench *b, struct fconn *fc, const uint32_t *xids, unsigned n)
{
	for (unsigned k = 0; k < 40; k++) {
		unsigned left = 0;

		for (unsigned i = 0; i < n; i++)
			left += !cb_count(b, xids[i]);
		if (!left)
			break;
		for (unsigned i = 0; i < n; i++) {
			int s = send_of(fc, xids[i]);

			if (s >= 0 && !cb_count(b, xids[i]) && !fc->sends[s].answered) {
				complete_send(fc, xids[i], IBV_WC_SUCCESS);
				deliver_reply(fc, xids[i], 8, 0, NULL, 0);
				fc->sends[s].answered = true;
			}
		}
		spin(b, 2);
	}
}

/* A long reply (RFC 5666 / draft-08): RDMA_NOMSG, nothing inline, the RPC
 * reply in a position-zero Read list of nseg segments of 100 bytes. */
static void deliver_long_reply(struct fconn *fc, uint32_t xid, unsigned nseg)
{
	struct rpcrdma_hdr h;
	struct xdr_enc xe;
	unsigned r = fc->recv_head++;

	memset(&h, 0, sizeof(h));
	h.rh_xid = xid;
	h.rh_vers = 1;
	h.rh_credit = 8;
	h.rh_proc = RPCRDMA_NOMSG;
	h.rh_nreads = nseg;
	for (unsigned i = 0; i < nseg; i++)
		h.rh_reads[i] = (struct rpcrdma_read_seg){ 0, { 0x77, 100, 0x10000 + 100 * i } };
	xdr_enc_init(&xe, fc->recvs[r].addr, fc->recvs[r].len);
	assert_true(rpcrdma_hdr_encode(&xe, &h));
	queue_wc(fc, fc->recvs[r].wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, (uint32_t)xe.xe_len);
}

/* ---- the cases -------------------------------------------------------- */

#define CANCEL_GONE(ca)		assert_true(be_call_cancel(ca))
#define CANCEL_ON_WIRE(ca)	assert_false(be_call_cancel(ca))

/* 1. Flush completions after a disconnect: the drain waits for them, each
 * gives back its WR's resources once, then the reap re-sends every call
 * without a reply (same XID) and each ends with exactly one callback. */
static void t01_flush_exactly_once(void **state)
{
	static const uint32_t x[4] = { 1, 2, 3, 4 };
	struct be_config cfg;
	struct bench b;
	const struct be_stats *st;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_credits = 8;
	cfg.bc_drain_ms = 5000;		/* far away: the flushes end the drain */
	cfg.bc_send_batch = 1;		/* every Send signaled: the drain waits for them */
	bench_up(&b, &cfg);
	fc = cur();
	assert_int_equal(b.ev[BE_POOL_UP], 1);
	assert_int_equal(fc->nrecvs, 8 + 4);	/* credits + backchannel + headroom, before connect */
	st = be_ctx_stats(b.ctx);

	assert_non_null(submit(&b, 0, x[0]));
	spin(&b, 2);
	answer_all(&b, fc, x, 1);
	assert_int_equal(cb_count(&b, 1), 1);

	for (unsigned i = 1; i < 4; i++)
		assert_non_null(submit(&b, i, x[i]));
	spin(&b, 2);
	assert_int_equal(nsends_op(fc, IBV_WR_SEND), 4);
	complete_send(fc, 2, IBV_WC_SUCCESS);	/* 2's Send done; 3 and 4 still out */
	spin(&b, 2);

	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	spin(&b, 5);
	assert_int_equal(fc->qp_state, IBV_QPS_ERR);
	assert_false(fc->qp_destroyed);		/* draining: 2 Sends not back */
	assert_int_equal(st->bs_resent, 0);
	assert_int_equal(be_pool_inflight(b.pool), 3);

	/* The device flushes everything outstanding, the receives too. */
	complete_send(fc, 3, IBV_WC_WR_FLUSH_ERR);
	complete_send(fc, 4, IBV_WC_WR_FLUSH_ERR);
	for (unsigned r = fc->recv_head; r < fc->nrecvs; r++)
		queue_wc(fc, fc->recvs[r].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	for (unsigned i = 0; i < 100 && !fc->qp_destroyed; i++)
		spin(&b, 5);
	assert_true(fc->qp_destroyed);
	assert_int_equal(st->bs_flushed, 2 + (fc->nrecvs - fc->recv_head));
	assert_int_equal(st->bs_drain_timeouts, 0);	/* drained, not timed out */
	assert_int_equal(st->bs_resent, 3);
	assert_int_equal(b.ncb, 1);		/* none settled by a flush */
	assert_int_equal(st->bs_disconnects, 1);

	/* Reconnected: the three go again with their XIDs, one callback each. */
	for (unsigned i = 0; i < 100 && F.nconns < 2; i++)
		spin(&b, 10);
	spin(&b, 10);
	assert_int_equal(F.nconns, 2);
	answer_all(&b, cur(), x, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	for (unsigned i = 0; i < b.ncb; i++)
		assert_int_equal(b.cb_err[i], BE_OK);
	bench_down(&b);
	assert_int_equal(F.nmr, 0);		/* every MR of both connections went */
}

/* 2. A flush that never comes: the reap goes ahead after bc_drain_ms. */
static void t02_drain_bounded(void **state)
{
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_drain_ms = 100;
	cfg.bc_send_batch = 1;		/* a signaled Send the drain waits for */
	bench_up(&b, &cfg);
	fc = cur();
	assert_non_null(submit(&b, 0, 7));
	spin(&b, 2);
	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	for (unsigned i = 0; i < 100 && !fc->qp_destroyed; i++)
		spin(&b, 10);
	assert_true(fc->qp_destroyed);
	/* not before the bound (timers never fire early) */
	assert_true((fc->t_destroyed.tv_sec - fc->t_err.tv_sec) * 1000 +
		    (fc->t_destroyed.tv_nsec - fc->t_err.tv_nsec) / 1000000 >= 95);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_drain_timeouts, 1);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_resent, 1);
	bench_down(&b);
	assert_int_equal(cb_count(&b, 7), 1);	/* BE_ERR_SHUTDOWN at the free, once */
	assert_int_equal(b.cb_err[0], BE_ERR_SHUTDOWN);
}

/* 3. be_pool_free(): a Send posted in the last loop turn completes before
 * the QP goes to ERR (graceful drain); without its completion the wait is
 * bounded; either way one SHUTDOWN callback. */
static void t03_pool_free_drains(void **state)
{
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_send_batch = 1;		/* signaled Sends (unsignaled ones: t15) */
	bench_up(&b, &cfg);
	fc = cur();
	assert_non_null(submit(&b, 0, 9));
	spin(&b, 2);
	complete_send(fc, 9, IBV_WC_SUCCESS);	/* in the CQ, not yet polled */
	assert_int_equal(fc->npolled, 0);
	be_pool_free(b.pool);
	b.pool = NULL;
	assert_int_equal(fc->polled_at_err, 1);	/* polled, then ERR */
	assert_int_equal(be_ctx_stats(b.ctx)->bs_drain_timeouts, 0);
	assert_int_equal(cb_count(&b, 9), 1);
	assert_int_equal(b.cb_err[0], BE_ERR_SHUTDOWN);
	bench_down(&b);

	be_config_default(&cfg);
	cfg.bc_drain_ms = 20;
	cfg.bc_send_batch = 1;
	bench_up(&b, &cfg);
	assert_non_null(submit(&b, 0, 10));
	spin(&b, 2);
	be_pool_free(b.pool);			/* the Send never completes */
	b.pool = NULL;
	assert_int_equal(be_ctx_stats(b.ctx)->bs_drain_timeouts, 1);
	assert_int_equal(cb_count(&b, 10), 1);
	bench_down(&b);
}

/* 4. CCP: CONF_RDMA is the first call, the others wait; the answer lowers
 * the send threshold and the Read depth; BE_POOL_UP only then. */
static void t04_ccp_first(void **state)
{
	static const uint32_t conf[3] = { 2048, 4, 8 };
	struct be_config cfg;
	struct be_conn_info ci;
	struct bench b;
	struct fconn *fc;
	uint32_t ccp_xid;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_ccp = true;
	bench_up(&b, &cfg);
	fc = cur();
	assert_int_equal(fc->nsends, 1);
	assert_int_equal(b.ev[BE_POOL_UP], 0);
	assert_false(be_pool_up(b.pool));
	ccp_xid = chk_be32(fc->sends[0].addr);
	/* header 28 bytes (no chunks), then the RPC call: prog at +12 */
	assert_int_equal(chk_be32(fc->sends[0].addr + 28 + 12), CCP_PROG);
	assert_int_equal(be_pool_conn_info(b.pool, 0, &ci), 0);
	assert_int_equal(ci.ci_ccp, BE_CCP_PENDING);

	assert_non_null(submit(&b, 0, 21));
	spin(&b, 5);
	assert_int_equal(fc->nsends, 1);	/* held back */
	assert_int_equal(be_pool_queued(b.pool), 1);

	complete_send(fc, ccp_xid, IBV_WC_SUCCESS);
	deliver_reply(fc, ccp_xid, 8, 0, conf, 3);
	spin(&b, 5);
	assert_int_equal(b.ev[BE_POOL_UP], 1);
	assert_int_equal(be_pool_conn_info(b.pool, 0, &ci), 0);
	assert_int_equal(ci.ci_ccp, BE_CCP_DONE);
	assert_int_equal(ci.ci_send_threshold, 2048);
	assert_int_equal(ci.ci_read_depth, 8);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_ccp_ok, 1);
	assert_true(send_of(fc, 21) >= 0);	/* now it went */
	bench_down(&b);
}

/* 5. CCP unanswered: fallback after bc_ccp_timeout_ms, the credit given
 * back, the held call goes; a PROG_UNAVAIL answer falls back at once. */
static void t05_ccp_fallback(void **state)
{
	struct be_config cfg;
	struct be_conn_info ci;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_ccp = true;
	cfg.bc_ccp_timeout_ms = 20;
	cfg.bc_drain_ms = 20;
	bench_up(&b, &cfg);
	fc = cur();
	assert_non_null(submit(&b, 0, 31));
	spin(&b, 40);
	assert_int_equal(be_pool_conn_info(b.pool, 0, &ci), 0);
	assert_int_equal(ci.ci_ccp, BE_CCP_FALLBACK);
	assert_int_equal(ci.ci_send_threshold, 4096);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_ccp_fallback, 1);
	assert_true(send_of(fc, 31) >= 0);
	assert_int_equal(b.ev[BE_POOL_UP], 1);
	bench_down(&b);

	bench_up(&b, &cfg);
	fc = cur();
	complete_send(fc, chk_be32(fc->sends[0].addr), IBV_WC_SUCCESS);
	deliver_reply(fc, chk_be32(fc->sends[0].addr), 8, RPC_PROG_UNAVAIL, NULL, 0);
	spin(&b, 5);
	assert_int_equal(be_pool_conn_info(b.pool, 0, &ci), 0);
	assert_int_equal(ci.ci_ccp, BE_CCP_FALLBACK);
	assert_int_equal(ci.ci_read_depth, 16);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_ccp_fallback, 1);
	bench_down(&b);
}

/* 6. BE_POOL_ROOM: once after a full queue drains, once after a busy XID
 * ends; never without a refusal. */
static void t06_room_event(void **state)
{
	static const uint32_t x[2] = { 41, 42 };
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_max_queue = 2;
	memset(&F, 0, sizeof(F));
	F.no_establish = true;
	{
		/* bench_up without the ESTABLISHED answer */
		struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(20049) };

		be_verbs_set(&fake_verbs);
		memset(&b, 0, sizeof(b));
		b.base = event_base_new();
		cfg.bc_keepalive_ms = 0;
		b.ctx = be_ctx_new(b.base, &cfg);
		b.pool = be_pool_new(b.ctx, (struct sockaddr *)&sin, sizeof(sin), on_event, &b);
		spin(&b, 5);
	}
	fc = cur();
	assert_non_null(submit(&b, 0, x[0]));
	assert_non_null(submit(&b, 1, x[1]));
	assert_null(submit(&b, 2, 43));
	assert_int_equal(errno, ENOBUFS);
	spin(&b, 5);
	assert_int_equal(b.ev[BE_POOL_ROOM], 0);
	queue_cm(fc, RDMA_CM_EVENT_ESTABLISHED);	/* one credit: one call leaves */
	spin(&b, 5);
	assert_int_equal(be_pool_queued(b.pool), 1);
	assert_int_equal(b.ev[BE_POOL_ROOM], 1);
	assert_null(submit(&b, 2, x[1]));		/* its XID is in flight */
	assert_int_equal(errno, EEXIST);
	answer_all(&b, fc, x, 2);
	assert_int_equal(b.ev[BE_POOL_ROOM], 2);
	assert_non_null(submit(&b, 2, 43));
	answer_all(&b, fc, (const uint32_t[]){ 43 }, 1);
	assert_int_equal(b.ev[BE_POOL_ROOM], 2);	/* no refusal, no event */
	bench_down(&b);
}

/* A pool of cfg whose CCP exchange the server answers with conf (size,
 * credits, Read depth), then call x answered by a long reply of nsegs
 * Read segments; the connection. */
static struct fconn *t07_long_reply(struct bench *b, struct be_config *cfg,
				    const uint32_t conf[3], uint32_t x, unsigned nsegs)
{
	struct fconn *fc;
	uint32_t cx;

	bench_up(b, cfg);
	fc = cur();
	cx = chk_be32(fc->sends[0].addr);
	complete_send(fc, cx, IBV_WC_SUCCESS);
	deliver_reply(fc, cx, 8, 0, conf, 3);
	spin(b, 5);
	assert_non_null(submit(b, 0, x));
	spin(b, 2);
	complete_send(fc, x, IBV_WC_SUCCESS);
	deliver_long_reply(fc, x, nsegs);
	spin(b, 5);
	return fc;
}

/* 7. Read depth from CCP (draft-08 6.2 maxrdmaread): 1 -> the Reads of a
 * long reply go one at a time, then RDMA_DONE; 0 -> the long reply is
 * refused (no RDMA Read at all), counted, the call fails once. */
static void t07_read_depth(void **state)
{
	static const uint32_t conf1[3] = { 4096, 4, 1 }, conf0[3] = { 4096, 4, 0 };
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_ccp = true;
	fc = t07_long_reply(&b, &cfg, conf1, 51, 3);
	for (unsigned k = 1; k <= 3; k++) {
		unsigned last = fc->nsends - 1;

		assert_int_equal(nsends_op(fc, IBV_WR_RDMA_READ), k);	/* one in flight */
		assert_int_equal(fc->sends[last].op, IBV_WR_RDMA_READ);
		assert_int_equal(fc->sends[last].len, 100);
		queue_wc(fc, fc->sends[last].wr_id, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 100);
		spin(&b, 5);
	}
	assert_int_equal(nsends_op(fc, IBV_WR_RDMA_READ), 3);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_rdma_done, 1);
	assert_int_equal(cb_count(&b, 51), 1);
	assert_int_equal(b.cb_err[0], BE_OK);
	bench_down(&b);

	fc = t07_long_reply(&b, &cfg, conf0, 52, 1);
	assert_int_equal(nsends_op(fc, IBV_WR_RDMA_READ), 0);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_read_depth_refused, 1);
	assert_int_equal(cb_count(&b, 52), 1);
	assert_int_equal(b.cb_err[0], BE_ERR_BAD_REPLY);
	bench_down(&b);
}

/* 8. Logging through the caller: each message goes to bc_log_fn with its
 * level and the pool's name, under the caller's live level (read at each
 * message), and nothing above that level is delivered. */
static struct {
	unsigned n;
	enum be_log_level lvl[8];
	char msg[8][400];
} LG;

static void on_log(void *arg, enum be_log_level lvl, const char *func, const char *msg)
{
	(void)func;
	assert_ptr_equal(arg, &LG);
	if (LG.n < 8) {
		LG.lvl[LG.n] = lvl;
		snprintf(LG.msg[LG.n], sizeof(LG.msg[0]), "%s", msg);
	}
	LG.n++;
}

static void t08_log_callback(void **state)
{
	int level = BE_LOG_INFO;
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	memset(&LG, 0, sizeof(LG));
	be_config_default(&cfg);
	cfg.bc_log_fn = on_log;
	cfg.bc_log_arg = &LG;
	cfg.bc_log_level = &level;
	bench_up(&b, &cfg);
	fc = cur();
	assert_int_equal(LG.n, 1);		/* "connection 0 up", INFO */
	assert_int_equal(LG.lvl[0], BE_LOG_INFO);
	assert_non_null(strstr(LG.msg[0], "backend 0.0.0.0:20049: connection 0 up"));

	level = BE_LOG_WARN;
	deliver_reply(fc, 0x99, 8, 0, NULL, 0);	/* no such call: WARN */
	spin(&b, 5);
	assert_int_equal(LG.n, 2);
	assert_int_equal(LG.lvl[1], BE_LOG_WARN);
	assert_non_null(strstr(LG.msg[1], "xid 00000099: no such call"));

	level = BE_LOG_ERR;			/* the caller lowered its level */
	deliver_reply(fc, 0x9a, 8, 0, NULL, 0);
	spin(&b, 5);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_unknown_xid, 2);
	assert_int_equal(LG.n, 2);
	bench_down(&b);
}

/* 9. Cancel while queued (no connection yet): the call is gone at once,
 * no callback, and it is never posted once the connection comes up. */
static void t09_cancel_queued(void **state)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(20049) };
	struct be_config cfg;
	struct be_req *ca;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_keepalive_ms = 0;
	memset(&F, 0, sizeof(F));
	F.no_establish = true;
	be_verbs_set(&fake_verbs);
	memset(&b, 0, sizeof(b));
	b.base = event_base_new();
	b.ctx = be_ctx_new(b.base, &cfg);
	b.pool = be_pool_new(b.ctx, (struct sockaddr *)&sin, sizeof(sin), on_event, &b);
	spin(&b, 5);
	fc = cur();
	ca = submit(&b, 0, 71);
	assert_non_null(ca);
	assert_non_null(submit(&b, 1, 72));
	assert_int_equal(be_pool_queued(b.pool), 2);
	assert_int_equal(ca->bq_state, BE_REQ_QUEUED);
	CANCEL_GONE(ca);
	assert_int_equal(ca->bq_state, BE_REQ_IDLE);	/* the caller's again */
	assert_false(be_call_cancel(ca));		/* nothing left to cancel */
	assert_int_equal(be_pool_queued(b.pool), 1);
	queue_cm(fc, RDMA_CM_EVENT_ESTABLISHED);
	spin(&b, 5);
	answer_all(&b, fc, (const uint32_t[]){ 72 }, 1);
	assert_int_equal(cb_count(&b, 72), 1);
	assert_true(send_of(fc, 71) < 0);	/* never posted */
	assert_int_equal(nsends_op(fc, IBV_WR_SEND), 1);
	assert_int_equal(cb_count(&b, 71), 0);
	bench_down(&b);
	assert_int_equal(cb_count(&b, 71), 0);	/* not even at the free */
}

/* 10. Cancel while posted: the server may still access the call's memory,
 * so the callback (BE_ERR_CANCELLED) comes only once its window is
 * invalidated -- after the LOCAL_INV completed, or after the connection's
 * QP went to ERR -- and the caller releases its memory then.  A cancelled
 * call is not re-sent. */
static void t10_cancel_posted(void **state)
{
	struct be_read_item ri = { 32, 8 };
	struct be_config cfg;
	struct be_call_desc d;
	struct be_region *rg;
	struct be_req *ca;
	struct bench b;
	struct fconn *fc;
	int inv;

	(void)state;
	be_config_default(&cfg);		/* memory windows */
	bench_up(&b, &cfg);
	fc = cur();
	rg = be_region_register(b.ctx, b.msg, sizeof(b.msg));
	assert_non_null(rg);
	memset(b.msg[0], 0, 40);
	chk_put_be32(b.msg[0], 81);
	b.iov[0] = (struct iovec){ b.msg[0], 40 };
	d = (struct be_call_desc){ .cd_xid = 81, .cd_msg = &b.iov[0], .cd_msg_niov = 1,
				   .cd_reads = &ri, .cd_nreads = 1 };
	ca = &b.req[0];
	assert_int_equal(be_call_submit(b.pool, ca, &d, on_reply, &b), 0);
	assert_int_equal(be_call_submit(b.pool, ca, &d, on_reply, &b), -EBUSY);
	spin(&b, 2);
	assert_int_equal(nsends_op(fc, IBV_WR_BIND_MW), 1);	/* the read chunk's window */
	assert_int_equal(ca->bq_state, BE_REQ_POSTED);
	CANCEL_ON_WIRE(ca);
	assert_int_equal(ca->bq_state, BE_REQ_CANCELLING);
	complete_send(fc, 81, IBV_WC_SUCCESS);
	deliver_reply(fc, 81, 8, 0, NULL, 0);
	spin(&b, 5);
	assert_int_equal(nsends_op(fc, IBV_WR_LOCAL_INV), 1);
	assert_int_equal(cb_count(&b, 81), 0);	/* the window is not invalidated yet */
	for (inv = (int)fc->nsends; inv-- > 0;)
		if (fc->sends[inv].op == IBV_WR_LOCAL_INV)
			break;
	queue_wc(fc, fc->sends[inv].wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0);
	spin(&b, 5);
	assert_int_equal(cb_count(&b, 81), 1);	/* now: the memory is the caller's */
	assert_int_equal(b.cb_err[0], BE_ERR_CANCELLED);
	assert_int_equal(ca->bq_state, BE_REQ_IDLE);	/* released in the callback */

	/* On the wire when the connection dies: called back after the QP went
	 * to ERR, not re-sent. */
	ca = submit(&b, 1, 82);
	assert_non_null(ca);
	spin(&b, 2);
	assert_true(send_of(fc, 82) >= 0);
	CANCEL_ON_WIRE(ca);
	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	complete_send(fc, 82, IBV_WC_WR_FLUSH_ERR);
	for (unsigned i = 0; i < 100 && !fc->qp_destroyed; i++)
		spin(&b, 5);
	assert_int_equal(cb_count(&b, 82), 1);
	assert_int_equal(b.cb_err[1], BE_ERR_CANCELLED);
	assert_int_equal(b.cb_qp_state[1], IBV_QPS_ERR);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_resent, 0);
	be_region_unregister(rg);
	bench_down(&b);
	assert_int_equal(cb_count(&b, 82), 1);
}

/* 12. be_pool_set_addr() (the server's name resolved elsewhere): the live
 * connection and its posted call stay; after the connection is lost, the
 * reconnect goes to the new address and re-sends the call there, which
 * ends with one callback. */
static void t12_set_addr_next_connection(void **state)
{
	struct sockaddr_in b_addr = { .sin_family = AF_INET, .sin_port = htons(20049),
				      .sin_addr.s_addr = htonl(0x0a000002) };
	static const uint32_t x[1] = { 91 };
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	bench_up(&b, &cfg);
	fc = cur();
	assert_int_equal(b.ev[BE_POOL_UP], 1);
	assert_int_equal(fc->dst.sin_addr.s_addr, htonl(0));
	assert_non_null(submit(&b, 0, x[0]));
	spin(&b, 2);
	assert_int_equal(be_pool_inflight(b.pool), 1);

	assert_int_equal(be_pool_set_addr(b.pool, (struct sockaddr *)&b_addr, sizeof(b_addr)), 1);
	assert_int_equal(be_pool_set_addr(b.pool, (struct sockaddr *)&b_addr, sizeof(b_addr)), 0);
	assert_int_equal(be_pool_set_addr(b.pool, NULL, sizeof(b_addr)), -EINVAL);
	assert_int_equal(be_pool_set_addr(b.pool, (struct sockaddr *)&b_addr, 4096), -EINVAL);
	spin(&b, 5);
	assert_true(be_pool_up(b.pool));	/* the live connection is not touched */
	assert_int_equal(F.nconns, 1);
	assert_int_equal(b.ncb, 0);

	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	complete_send(fc, x[0], IBV_WC_WR_FLUSH_ERR);
	for (unsigned r = fc->recv_head; r < fc->nrecvs; r++)
		queue_wc(fc, fc->recvs[r].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	for (unsigned i = 0; i < 100 && F.nconns < 2; i++)
		spin(&b, 10);
	spin(&b, 10);
	assert_int_equal(F.nconns, 2);
	assert_int_equal(cur()->dst.sin_addr.s_addr, b_addr.sin_addr.s_addr);
	assert_int_equal(cur()->dst.sin_port, b_addr.sin_port);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_resent, 1);
	answer_all(&b, cur(), x, 1);
	assert_int_equal(cb_count(&b, x[0]), 1);
	assert_int_equal(b.cb_err[0], BE_OK);
	bench_down(&b);
	assert_int_equal(cb_count(&b, x[0]), 1);
}

/* 13. A call the server never answers, abandoned at the caller's timeout
 * (be_call_abandon after be_call_cancel): its window is invalidated at
 * once, without a reply; the callback (BE_ERR_CANCELLED) comes when the
 * LOCAL_INV completes; its credit is back (the next call, queued on the
 * first connection's grant of 1, goes out); a late reply for it is dropped
 * as for no call.  With per-call MRs, the MR is deregistered at once. */
static void abandon_case(enum be_reg_mode mode)
{
	struct be_read_item ri = { 32, 8 };
	struct be_config cfg;
	struct be_call_desc d;
	struct be_region *rg;
	struct be_req *ca;
	struct bench b;
	struct fconn *fc;
	int inv, nmr;

	be_config_default(&cfg);
	cfg.bc_reg_mode = mode;
	bench_up(&b, &cfg);
	fc = cur();
	rg = be_region_register(b.ctx, b.msg, sizeof(b.msg));
	assert_non_null(rg);
	nmr = F.nmr;
	memset(b.msg[0], 0, 40);
	chk_put_be32(b.msg[0], 91);
	b.iov[0] = (struct iovec){ b.msg[0], 40 };
	d = (struct be_call_desc){ .cd_xid = 91, .cd_msg = &b.iov[0], .cd_msg_niov = 1,
				   .cd_reads = &ri, .cd_nreads = 1 };
	ca = &b.req[0];
	assert_int_equal(be_call_submit(b.pool, ca, &d, on_reply, &b), 0);
	spin(&b, 2);
	assert_int_equal(ca->bq_state, BE_REQ_POSTED);
	assert_non_null(submit(&b, 1, 92));	/* waits: one credit, in use */
	spin(&b, 2);
	assert_int_equal(send_of(fc, 92), -1);
	complete_send(fc, 91, IBV_WC_SUCCESS);
	spin(&b, 2);
	if (mode == BE_REG_MR)
		assert_int_equal(F.nmr, nmr + 1);	/* the read chunk's MR */
	CANCEL_ON_WIRE(ca);
	be_call_abandon(ca);
	spin(&b, 2);
	if (mode == BE_REG_MW) {
		assert_int_equal(nsends_op(fc, IBV_WR_LOCAL_INV), 1);
		assert_int_equal(cb_count(&b, 91), 0);	/* not until the LOCAL_INV completes */
		for (inv = (int)fc->nsends; inv-- > 0;)
			if (fc->sends[inv].op == IBV_WR_LOCAL_INV)
				break;
		queue_wc(fc, fc->sends[inv].wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0);
		spin(&b, 5);
	} else {
		assert_int_equal(F.nmr, nmr);		/* deregistered: access gone */
	}
	assert_int_equal(cb_count(&b, 91), 1);
	assert_int_equal(b.cb_err[0], BE_ERR_CANCELLED);
	assert_int_equal(ca->bq_state, BE_REQ_IDLE);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_abandoned, 1);
	assert_true(send_of(fc, 92) >= 0);		/* the credit came back */
	deliver_reply(fc, 91, 8, 0, NULL, 0);		/* the late reply */
	complete_send(fc, 92, IBV_WC_SUCCESS);
	deliver_reply(fc, 92, 8, 0, NULL, 0);
	spin(&b, 5);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_unknown_xid, 1);
	assert_int_equal(cb_count(&b, 91), 1);
	assert_int_equal(cb_count(&b, 92), 1);
	assert_int_equal(b.cb_err[1], BE_OK);
	assert_int_equal(fc->qp_state == IBV_QPS_ERR, false);	/* the connection stays */
	be_region_unregister(rg);
	bench_down(&b);
}

static void t14_abandon_unanswered(void **state)
{
	(void)state;
	abandon_case(BE_REG_MW);
	abandon_case(BE_REG_MR);
}

static void loop_break(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* 11. No allocation per forwarded call: once the connection is up, a call
 * submitted, posted, answered, called back and released allocates nothing
 * -- its request is the caller's (b.req), its post an element of the
 * connection's array.  The loop runs on a timer made beforehand
 * (event_base_loopexit() would allocate one each time). */
static void t11_no_allocation_per_call(void **state)
{
	struct timeval tv = { 0, 2000 };
	struct be_config cfg;
	struct event *tick;
	struct bench b;
	struct fconn *fc;
	unsigned ncalls = 40, k;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_credits = 8;
	bench_up(&b, &cfg);
	fc = cur();
	tick = evtimer_new(b.base, loop_break, b.base);
	assert_non_null(tick);
	n_allocs = 0;
	alloc_counting = true;
	for (uint32_t i = 0; i < ncalls; i++) {
		uint32_t x = 200 + i;
		struct be_req *rq = submit(&b, i % 4, x);

		assert_non_null(rq);
		for (k = 0; k < 20 && send_of(fc, x) < 0; k++) {
			evtimer_add(tick, &tv);
			event_base_dispatch(b.base);
		}
		complete_send(fc, x, IBV_WC_SUCCESS);
		deliver_reply(fc, x, 8, 0, NULL, 0);
		for (k = 0; k < 20 && !cb_count(&b, x); k++) {
			evtimer_add(tick, &tv);
			event_base_dispatch(b.base);
		}
		assert_int_equal(cb_count(&b, x), 1);
		assert_int_equal(rq->bq_state, BE_REQ_IDLE);	/* released in the callback */
	}
	alloc_counting = false;
	assert_int_equal(b.ncb, ncalls);
	for (unsigned i = 0; i < ncalls; i++)
		assert_int_equal(b.cb_err[i], BE_OK);
#ifdef ALLOC_COUNT_ON
	assert_int_equal(n_allocs, 0);
#endif
	event_free(tick);
	bench_down(&b);
}

/* 13. Registration refused for locked memory (ENOMEM, as the kernel does
 * past RLIMIT_MEMLOCK without CAP_IPC_LOCK): a region, a connection's
 * buffers, and a region when a device is opened again each log a line
 * naming the limit in force and LimitMEMLOCK=.  A device whose regions do
 * not register is not used: the connection fails and is retried (it would
 * otherwise come up and register every call on its own); nothing crashes. */
static unsigned memlock_lines(void)
{
	unsigned named = 0;

	for (unsigned i = 0; i < LG.n && i < 8; i++)
		if (LG.lvl[i] == BE_LOG_ERR && strstr(LG.msg[i], "ibv_reg_mr(") &&
		    strstr(LG.msg[i], "RLIMIT_MEMLOCK (memlock, now ") && strstr(LG.msg[i], "LimitMEMLOCK="))
			named++;
	return named;
}

static void t13_memlock_named(void **state)
{
	static char buf[65536];
	int level = BE_LOG_DEBUG;
	struct rlimit old, low;
	struct be_config cfg;
	struct be_region *rg;
	struct bench b;
	struct fconn *fc;
	char want[160];

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &old), 0);
	low = old;
	low.rlim_cur = old.rlim_max != RLIM_INFINITY && old.rlim_max < 65536 ? old.rlim_max : 65536;
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &low), 0);
	memset(&LG, 0, sizeof(LG));
	be_config_default(&cfg);
	cfg.bc_log_fn = on_log;
	cfg.bc_log_arg = &LG;
	cfg.bc_log_level = &level;

	/* a region, with the device open (a connection up) */
	bench_up(&b, &cfg);
	LG.n = 0;
	f_reg_enomem = sizeof(buf);
	assert_null(be_region_register(b.ctx, buf, sizeof(buf)));
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(memlock_lines(), 1);
	snprintf(want, sizeof(want), "ibv_reg_mr(65536 bytes) failed: %s: registered memory is "
		 "locked and counted against RLIMIT_MEMLOCK (memlock, now %llu bytes)",
		 strerror(ENOMEM), (unsigned long long)low.rlim_cur);
	if (!strstr(LG.msg[0], want))
		fail_msg("'%s' lacks '%s'", LG.msg[0], want);

	/* registered while it fits; the connection lost; the device opened
	 * again cannot register it: no connection comes up */
	f_reg_enomem = 0;
	rg = be_region_register(b.ctx, buf, sizeof(buf));
	assert_non_null(rg);
	f_reg_enomem = sizeof(buf);
	fc = cur();
	LG.n = 0;
	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	for (unsigned r = fc->recv_head; r < fc->nrecvs; r++)
		queue_wc(fc, fc->recvs[r].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	for (unsigned i = 0; i < 100 && memlock_lines() == 0; i++)
		spin(&b, 10);
	spin(&b, 20);
	assert_true(memlock_lines() >= 1);
	assert_int_equal(b.ev[BE_POOL_UP], 1);	/* the first connection only */
	assert_false(be_pool_up(b.pool));
	be_region_unregister(rg);
	bench_down(&b);

	/* a connection's send and receive buffers */
	memset(&LG, 0, sizeof(LG));
	f_reg_enomem = SIZE_MAX;
	bench_up(&b, &cfg);
	assert_true(memlock_lines() >= 1);
	assert_false(be_pool_up(b.pool));
	f_reg_enomem = 0;
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &old), 0);
	bench_down(&b);
}

/* ---- unsignaled Sends (the send ring) ---------------------------------- */

static struct be_conn *conn0(struct bench *b)
{
	return b->pool->bp_slots[0].sl_conn;
}

/* 15. Every call Send but each cn_send_batch-th goes unsignaled; a reply
 * that comes before anything says its Send completed finishes the call at
 * once, while its send buffer stays held (never reused under a Send that
 * may still be in flight); one signaled completion gives back the buffers
 * and send-queue room of every Send before it. */
static void t15_unsignaled_sends(void **state)
{
	static const uint32_t x[6] = { 101, 102, 103, 104, 105, 106 };
	const struct be_stats *st;
	struct be_config cfg;
	struct be_conn *cn;
	struct bench b;
	struct fconn *fc;
	int s0;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_credits = 8;			/* 12 send buffers: a batch of 6 */
	bench_up(&b, &cfg);
	fc = cur();
	cn = conn0(&b);
	st = be_ctx_stats(b.ctx);
	assert_int_equal(cn->cn_nsend, 12);
	assert_int_equal(cn->cn_send_batch, 6);

	/* The first call: unsignaled; its reply alone finishes it. */
	assert_non_null(submit(&b, 0, x[0]));
	spin(&b, 2);
	s0 = send_of(fc, x[0]);
	assert_true(s0 >= 0);
	assert_int_equal(fc->sends[s0].flags & IBV_SEND_SIGNALED, 0);
	complete_send(fc, x[0], IBV_WC_SUCCESS);	/* no completion: unsignaled */
	deliver_reply(fc, x[0], 8, 0, NULL, 0);
	spin(&b, 5);
	assert_int_equal(cb_count(&b, x[0]), 1);
	assert_int_equal(b.cb_err[0], BE_OK);
	assert_int_equal(be_pool_inflight(b.pool), 0);
	assert_int_equal(cn->cn_nsfree, 12 - 1);	/* its buffer: not known free */

	/* Five more: four unsignaled, the sixth Send signaled. */
	for (unsigned i = 1; i < 6; i++)
		assert_non_null(submit(&b, i, x[i]));
	spin(&b, 2);
	for (unsigned i = 1; i < 6; i++) {
		int si = send_of(fc, x[i]);

		assert_true(si >= 0);
		assert_int_equal(fc->sends[si].flags & IBV_SEND_SIGNALED,
				 i == 5 ? IBV_SEND_SIGNALED : 0);
		assert_ptr_not_equal(fc->sends[si].addr, fc->sends[s0].addr);
	}
	assert_int_equal(cn->cn_nsfree, 12 - 6);
	assert_int_equal(cn->cn_sig_out, 1);
	for (unsigned i = 1; i < 6; i++)
		deliver_reply(fc, x[i], 8, 0, NULL, 0);
	spin(&b, 5);
	for (unsigned i = 1; i < 6; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	assert_int_equal(cn->cn_nsfree, 12 - 6);	/* replies free no send buffer */

	/* The sixth Send's completion: all six are done. */
	complete_send(fc, x[5], IBV_WC_SUCCESS);
	spin(&b, 5);
	assert_int_equal(cn->cn_nsfree, 12);
	assert_int_equal(cn->cn_sq_used, 0);
	assert_int_equal(cn->cn_sig_out, 0);
	assert_int_equal(st->bs_sends_unsignaled, 5);
	assert_int_equal(st->bs_sends_signaled, 1);
	assert_int_equal(st->bs_sq_completions, 1);	/* one for six calls */
	assert_int_equal(st->bs_rq_completions, 6);
	bench_down(&b);
}

/* 16. Flushes: in the error state every outstanding WR completes, signaled
 * or not.  A flushed unsignaled Send gives back itself and the Sends before
 * it, once, and does not end the drain, which waits for the signaled one;
 * every call is then re-sent once and called back once. */
static void t16_unsignaled_flush(void **state)
{
	static const uint32_t x[5] = { 201, 202, 203, 204, 205 };
	const struct be_stats *st;
	struct be_config cfg;
	struct be_conn *cn;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_credits = 8;
	cfg.bc_send_batch = 4;
	cfg.bc_drain_ms = 5000;			/* the flushes end the drain */
	bench_up(&b, &cfg);
	fc = cur();
	cn = conn0(&b);
	st = be_ctx_stats(b.ctx);
	cn->cn_refs++;				/* look at it after the reap */

	assert_non_null(submit(&b, 0, x[0]));
	spin(&b, 2);
	deliver_reply(fc, x[0], 8, 0, NULL, 0);
	spin(&b, 5);
	assert_int_equal(cb_count(&b, x[0]), 1);
	for (unsigned i = 1; i < 5; i++)
		assert_non_null(submit(&b, i, x[i]));
	spin(&b, 2);
	/* x0..x2 unsignaled, x3 the fourth: signaled, x4 unsignaled again */
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(fc->sends[send_of(fc, x[i])].flags & IBV_SEND_SIGNALED,
				 i == 3 ? IBV_SEND_SIGNALED : 0);
	assert_int_equal(cn->cn_sig_out, 1);
	assert_int_equal(cn->cn_nsfree, 12 - 5);

	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	spin(&b, 5);
	assert_int_equal(fc->qp_state, IBV_QPS_ERR);
	assert_false(fc->qp_destroyed);		/* draining: x3 is signaled */
	complete_send(fc, x[1], IBV_WC_WR_FLUSH_ERR);
	complete_send(fc, x[2], IBV_WC_WR_FLUSH_ERR);
	spin(&b, 5);
	assert_false(fc->qp_destroyed);		/* unsignaled flushes: still draining */
	assert_int_equal(cn->cn_sig_out, 1);
	assert_int_equal(cn->cn_nsfree, 12 - 2);	/* x0..x2 back, x3 and x4 held */
	complete_send(fc, x[3], IBV_WC_WR_FLUSH_ERR);
	complete_send(fc, x[4], IBV_WC_WR_FLUSH_ERR);
	for (unsigned r = fc->recv_head; r < fc->nrecvs; r++)
		queue_wc(fc, fc->recvs[r].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	for (unsigned i = 0; i < 100 && !fc->qp_destroyed; i++)
		spin(&b, 5);
	assert_true(fc->qp_destroyed);
	assert_int_equal(cn->cn_nsfree, 12);	/* each buffer back once */
	assert_int_equal(cn->cn_sq_used, 0);
	assert_int_equal(st->bs_drain_timeouts, 0);
	assert_int_equal(st->bs_resent, 4);
	assert_int_equal(b.ncb, 1);
	be_conn_put(cn);

	for (unsigned i = 0; i < 100 && F.nconns < 2; i++)
		spin(&b, 10);
	spin(&b, 10);
	assert_int_equal(F.nconns, 2);
	answer_all(&b, cur(), x, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	for (unsigned i = 0; i < b.ncb; i++)
		assert_int_equal(b.cb_err[i], BE_OK);
	bench_down(&b);
}

/* 17. A LOCAL_INV chain: only its last WR is signaled.  Its completion
 * also proves the (unsignaled) Send before it complete; flushed, the
 * chain's first, unsignaled WR must not end the drain. */
static void t17_local_inv_covers(void **state)
{
	struct be_read_item ri = { 32, 8 };
	struct iovec wiov;
	struct be_target wt = { &wiov, 1 };
	struct be_config cfg;
	struct be_call_desc d;
	struct be_region *rg;
	struct be_conn *cn;
	struct bench b;
	struct fconn *fc;
	int inv[2], n = 0;

	(void)state;
	be_config_default(&cfg);		/* memory windows */
	cfg.bc_drain_ms = 5000;
	bench_up(&b, &cfg);
	fc = cur();
	cn = conn0(&b);
	rg = be_region_register(b.ctx, b.msg, sizeof(b.msg));
	assert_non_null(rg);
	memset(b.msg[0], 0, 40);
	chk_put_be32(b.msg[0], 301);
	b.iov[0] = (struct iovec){ b.msg[0], 40 };
	wiov = (struct iovec){ b.msg[1], 40 };
	d = (struct be_call_desc){ .cd_xid = 301, .cd_msg = &b.iov[0], .cd_msg_niov = 1,
				   .cd_reads = &ri, .cd_nreads = 1, .cd_writes = &wt,
				   .cd_nwrites = 1 };
	assert_int_equal(be_call_submit(b.pool, &b.req[0], &d, on_reply, &b), 0);
	spin(&b, 2);
	assert_int_equal(nsends_op(fc, IBV_WR_BIND_MW), 2);
	complete_send(fc, 301, IBV_WC_SUCCESS);
	deliver_reply(fc, 301, 8, 0, NULL, 0);
	spin(&b, 5);
	for (unsigned i = 0; i < fc->nsends; i++)
		if (fc->sends[i].op == IBV_WR_LOCAL_INV)
			inv[n++] = (int)i;
	assert_int_equal(n, 2);
	assert_int_equal(fc->sends[inv[0]].flags & IBV_SEND_SIGNALED, 0);
	assert_int_equal(fc->sends[inv[1]].flags & IBV_SEND_SIGNALED, IBV_SEND_SIGNALED);
	assert_int_equal(cn->cn_sig_out, 1);	/* the chain's last WR only */
	assert_int_equal(cb_count(&b, 301), 0);
	queue_wc(fc, fc->sends[inv[1]].wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0);
	spin(&b, 5);
	assert_int_equal(cb_count(&b, 301), 1);
	assert_int_equal(cn->cn_nsfree, cn->cn_nsend);	/* the Send is known done */
	assert_int_equal(cn->cn_sq_used, 0);

	/* Again, and the connection dies with the chain outstanding. */
	chk_put_be32(b.msg[0], 302);
	d.cd_xid = 302;
	assert_int_equal(be_call_submit(b.pool, &b.req[0], &d, on_reply, &b), 0);
	spin(&b, 2);
	complete_send(fc, 302, IBV_WC_SUCCESS);
	deliver_reply(fc, 302, 8, 0, NULL, 0);
	spin(&b, 5);
	n = 0;
	for (unsigned i = 0; i < fc->nsends; i++)
		if (fc->sends[i].op == IBV_WR_LOCAL_INV)
			inv[n++ % 2] = (int)i;
	assert_int_equal(n, 4);
	assert_int_equal(cn->cn_sig_out, 1);
	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	spin(&b, 5);
	queue_wc(fc, fc->sends[inv[0]].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_LOCAL_INV, 0);
	spin(&b, 5);
	assert_false(fc->qp_destroyed);		/* the signaled one is still out */
	queue_wc(fc, fc->sends[inv[1]].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_LOCAL_INV, 0);
	for (unsigned i = 0; i < 100 && !fc->qp_destroyed; i++)
		spin(&b, 5);
	assert_true(fc->qp_destroyed);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_drain_timeouts, 0);
	assert_int_equal(cb_count(&b, 302), 1);	/* good reply: completed at the reap */
	be_region_unregister(rg);
	bench_down(&b);
}

/* 18. When a Send is signaled although its batch is not full: the Sends
 * no signaled WR covers must never hold the room a largest call needs, nor
 * reach a batch (an idle connection then holds fewer than a batch of send
 * buffers, and no call waits for them: t15). */
static void t18_signal_rule(void **state)
{
	struct be_conn cn;

	(void)state;
	memset(&cn, 0, sizeof(cn));
	cn.cn_send_batch = 6;
	cn.cn_sq_max = 204;			/* 12 send buffers x (1 + 2 x 8) */
	cn.cn_sq_call_max = 1 + 2 * BE_MAX_CALL_SEGS;
	assert_false(be_send_signal(&cn, 1));
	cn.cn_unsig = 4;
	assert_false(be_send_signal(&cn, 1));
	cn.cn_unsig = 5;			/* the sixth */
	assert_true(be_send_signal(&cn, 1));
	cn.cn_unsig = 1;
	cn.cn_unsig_wrs = 70;
	assert_false(be_send_signal(&cn, 5));	/* 75 + 129 = 204: fits */
	assert_true(be_send_signal(&cn, 6));	/* a largest call would not */
	cn.cn_sq_max = 129;			/* MR mode's floor, MW windows */
	cn.cn_unsig = cn.cn_unsig_wrs = 0;
	assert_true(be_send_signal(&cn, 1));
	cn.cn_sq_call_max = 1;			/* no binds: MR or persistent mode */
	assert_false(be_send_signal(&cn, 1));
	cn.cn_send_batch = 1;			/* bc_send_batch = 1: every Send */
	assert_true(be_send_signal(&cn, 1));
}

/* Sends of fc that carry xid. */
static unsigned sends_of(struct fconn *fc, uint32_t xid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < fc->nsends; i++)
		n += fc->sends[i].op == IBV_WR_SEND && fc->sends[i].len >= 4 &&
		     chk_be32(fc->sends[i].addr) == xid;
	return n;
}

/* 19. Two connections: a call goes on its XID's own connection, so a
 * gateway XID sent again reaches the server from the address and port of
 * the original (nfsd's duplicate request cache keys on XID, address and
 * port); while that connection has no credit the call waits for it and
 * calls of the other connection pass; with it down, the call takes the
 * other. */
static void t19_xid_keeps_its_connection(void **state)
{
	static const uint32_t x10[1] = { 10 }, x11[1] = { 11 }, x12[1] = { 12 };
	static const uint32_t held[8] = { 100, 102, 104, 106, 108, 110, 112, 114 };
	struct be_config cfg;
	struct bench b;
	struct fconn *home, *other;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_conns = 2;
	cfg.bc_credits = 8;
	bench_up(&b, &cfg);
	assert_int_equal(F.nconns, 2);

	assert_non_null(submit(&b, 0, 10));
	spin(&b, 2);
	home = sends_of(F.conns[0], 10) ? F.conns[0] : F.conns[1];
	other = home == F.conns[0] ? F.conns[1] : F.conns[0];
	assert_int_equal(sends_of(home, 10), 1);
	answer_all(&b, home, x10, 1);
	assert_int_equal(cb_count(&b, 10), 1);

	/* Sent again (a retransmission under the same gateway XID): same
	 * connection, whatever went before it. */
	assert_non_null(submit(&b, 1, 10));
	spin(&b, 2);
	assert_int_equal(sends_of(home, 10), 2);
	assert_int_equal(sends_of(other, 10), 0);
	b.ncb = 0;
	answer_all(&b, home, x10, 1);

	/* XID 12 belongs to home too.  home's grant is 8; hold it with 8
	 * calls of XIDs of its own, then 12 waits and 11 goes on other. */
	for (unsigned i = 0; i < 8; i++)
		assert_non_null(submit(&b, 2 + i, held[i]));
	spin(&b, 2);
	assert_non_null(submit(&b, 10, 12));
	assert_non_null(submit(&b, 11, 11));
	spin(&b, 2);
	assert_int_equal(sends_of(home, 12) + sends_of(other, 12), 0);
	assert_int_equal(sends_of(other, 11), 1);
	answer_all(&b, other, x11, 1);
	answer_all(&b, home, held, 8);
	spin(&b, 2);
	assert_int_equal(sends_of(home, 12), 1);	/* its own, once it had room */
	answer_all(&b, home, x12, 1);

	/* home down: XID 10 goes on other rather than wait for a reconnect
	 * (a new connection has a new port: the cache would not know it). */
	F.no_establish = true;
	queue_cm(home, RDMA_CM_EVENT_DISCONNECTED);
	spin(&b, 5);
	assert_non_null(submit(&b, 12, 10));
	spin(&b, 2);
	assert_int_equal(sends_of(other, 10), 1);
	bench_down(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_flush_exactly_once),
		cmocka_unit_test(t02_drain_bounded),
		cmocka_unit_test(t03_pool_free_drains),
		cmocka_unit_test(t04_ccp_first),
		cmocka_unit_test(t05_ccp_fallback),
		cmocka_unit_test(t06_room_event),
		cmocka_unit_test(t07_read_depth),
		cmocka_unit_test(t08_log_callback),
		cmocka_unit_test(t09_cancel_queued),
		cmocka_unit_test(t10_cancel_posted),
		cmocka_unit_test(t11_no_allocation_per_call),
		cmocka_unit_test(t12_set_addr_next_connection),
		cmocka_unit_test(t13_memlock_named),
		cmocka_unit_test(t14_abandon_unanswered),
		cmocka_unit_test(t15_unsignaled_sends),
		cmocka_unit_test(t16_unsignaled_flush),
		cmocka_unit_test(t17_local_inv_covers),
		cmocka_unit_test(t18_signal_rule),
		cmocka_unit_test(t19_xid_keeps_its_connection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
