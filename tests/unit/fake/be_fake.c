// SPDX-License-Identifier: MIT
/* The fake RDMA device and the test bench (be_fake.h). */
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

#include "backend.h"
#include "be_internal.h"
#include "be_fake.h"

/* ---- the fake device ------------------------------------------------- */

struct fake_dev fdev;

struct fconn *cur(void)
{
	return fdev.nconns ? fdev.conns[fdev.nconns - 1] : NULL;
}

void kick(int fd)
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

void queue_cm(struct fconn *fc, enum rdma_cm_event_type t)
{
	struct rdma_cm_event *e = &fc->ev[fc->nev++];

	memset(e, 0, sizeof(*e));
	e->event = t;
	e->id = &fc->id;
	if (t == RDMA_CM_EVENT_ESTABLISHED) {
		e->param.conn.private_data = fdev.peer_pd;
		e->param.conn.private_data_len = sizeof(fdev.peer_pd);
	}
	kick(fc->ch.fd);
}

void queue_wc(struct fconn *fc, uint64_t wr_id, enum ibv_wc_status st,
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
	fdev.conns[fdev.nconns++] = fc;
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
	fc->id.verbs = &fdev.ctx;
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
	if (!fdev.no_establish)
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
	fdev.ev_fc = fc;
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
	fc->qp.context = &fdev.ctx;
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
static struct ibv_pd *f_alloc_pd(struct ibv_context *v) { (void)v; return &fdev.pd; }
static int f_dealloc_pd(struct ibv_pd *pd) { (void)pd; return 0; }
static struct ibv_mr *f_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int acc)
{
	struct ibv_mr *mr;

	(void)pd;
	(void)acc;
	if (fdev.reg_enomem == SIZE_MAX || fdev.reg_enomem == len) {
		errno = ENOMEM;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	mr->addr = addr;
	mr->length = len;
	mr->lkey = mr->rkey = ++fdev.next_key << 8;
	fdev.nmr++;
	return mr;
}
static int f_dereg_mr(struct ibv_mr *mr) { free(mr); fdev.nmr--; return 0; }
static struct ibv_mw *f_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type t)
{
	struct ibv_mw *mw = calloc(1, sizeof(*mw));

	(void)pd;
	mw->type = t;
	mw->rkey = ++fdev.next_key << 8;
	return mw;
}
static int f_dealloc_mw(struct ibv_mw *mw) { free(mw); return 0; }
/* The backend makes it on ROUTE_RESOLVED: the channel of the connection
 * whose event that is (with several connections, not always the newest). */
static struct ibv_comp_channel *f_create_comp_channel(struct ibv_context *v)
{
	(void)v;
	return &(fdev.ev_fc ? fdev.ev_fc : cur())->cc;
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
	fc->narms++;
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
	unsigned k = 0, fail = fc->post_fail_wr;

	assert_true(fc->nposts < MAXQ);
	fc->post_wrs[fc->nposts++] = 0;
	fc->post_fail_wr = 0;
	for (; wr; wr = wr->next) {
		struct fsend *s;

		if (++k == fail) {	/* as a full queue: this WR and those after it not posted */
			*bad = wr;
			return ENOMEM;
		}
		fc->post_wrs[fc->nposts - 1]++;
		s = &fc->sends[fc->nsends++];

		assert_true(fc->nsends < MAXQ);
		s->wr_id = wr->wr_id;
		s->op = wr->opcode;
		s->flags = wr->send_flags;
		s->answered = false;
		s->addr = wr->num_sge ? (uint8_t *)(uintptr_t)wr->sg_list[0].addr : NULL;
		s->len = wr->num_sge ? wr->sg_list[0].length : 0;
		s->xid = s->len >= 4 ? chk_be32(s->addr) : 0;
		if (fc->answer_on_post && s->op == IBV_WR_SEND && s->xid) {
			s->answered = true;
			deliver_reply(fc, s->xid, 8, 0, NULL, 0);
		}
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

const struct be_verbs fake_verbs = {
	f_create_event_channel, f_destroy_event_channel, f_create_id, f_destroy_id,
	f_resolve_addr, f_resolve_route, f_connect, f_disconnect, f_get_cm_event, f_ack_cm_event,
	f_create_qp, f_destroy_qp, f_query_device, f_alloc_pd, f_dealloc_pd, f_reg_mr, f_dereg_mr,
	f_alloc_mw, f_dealloc_mw, f_create_comp_channel, f_destroy_comp_channel, f_create_cq,
	f_destroy_cq, f_req_notify_cq, f_get_cq_event, f_ack_cq_events, f_poll_cq, f_post_send,
	f_post_recv, f_modify_qp,
};

/* ---- the test bench --------------------------------------------------- */

void on_event(struct be_pool *pool, enum be_pool_event ev, void *arg)
{
	struct bench *b = arg;

	(void)pool;
	b->ev[ev]++;
}

void on_reply(struct be_req *call, const struct be_reply *r, void *arg)
{
	struct bench *b = arg;

	b->cb_qp_state[b->ncb] = fdev.nconns ? fdev.conns[fdev.nconns - 1]->qp_state : -1;
	b->cb_xid[b->ncb] = r->br_xid;
	b->cb_err[b->ncb++] = r->br_err;
	be_call_release(call);
}

unsigned cb_count(const struct bench *b, uint32_t xid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < b->ncb; i++)
		n += b->cb_xid[i] == xid;
	return n;
}

/* Run the loop for ms.  (Not EVLOOP_NONBLOCK in a loop: in some sandboxes
 * a zero epoll timeout waits for the next timer.) */
void spin(struct bench *b, unsigned ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	event_base_loopexit(b->base, &tv);
	event_base_dispatch(b->base);
}

/* Run the loop until the backend has made its n-th connection (1 s at most). */
void wait_conns(struct bench *b, unsigned n)
{
	for (unsigned i = 0; i < 100 && fdev.nconns < n; i++)
		spin(b, 10);
	spin(b, 10);
	assert_int_equal(fdev.nconns, n);
}

/* A pool on a fresh device; connect() answers with ESTABLISHED or, with
 * establish false, not at all (the test queues it). */
static void bench_start(struct bench *b, struct be_config *cfg, bool establish)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(20049) };
	struct rpcrdma_pd pd = { .pd_send_size = 4096, .pd_recv_size = 4096 };
	size_t enomem = fdev.reg_enomem;

	memset(&fdev, 0, sizeof(fdev));
	fdev.reg_enomem = enomem;
	fdev.no_establish = !establish;
	rpcrdma_pd_encode(&pd, fdev.peer_pd);
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

void bench_up(struct bench *b, struct be_config *cfg)
{
	bench_start(b, cfg, true);
}

void bench_up_unanswered(struct bench *b, struct be_config *cfg)
{
	bench_start(b, cfg, false);
}

void bench_down(struct bench *b)
{
	if (b->pool)
		be_pool_free(b->pool);
	be_ctx_free(b->ctx);
	event_base_free(b->base);
	for (unsigned i = 0; i < fdev.nconns; i++)
		free(fdev.conns[i]);
	fdev.nconns = 0;
	be_verbs_set(NULL);
}

/* The call in b->req[i], or NULL with errno set. */
struct be_req *submit(struct bench *b, unsigned i, uint32_t xid)
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
 * XID, as it was when posted: send buffers are reused). */
int send_of(struct fconn *fc, uint32_t xid)
{
	for (unsigned i = fc->nsends; i-- > 0;)
		if (fc->sends[i].op == IBV_WR_SEND && fc->sends[i].len >= 4 &&
		    fc->sends[i].xid == xid)
			return (int)i;
	return -1;
}

unsigned nsends_op(struct fconn *fc, enum ibv_wr_opcode op)
{
	unsigned n = 0;

	for (unsigned i = 0; i < fc->nsends; i++)
		n += fc->sends[i].op == op;
	return n;
}

/* The device completes xid's Send: a completion comes if it was signaled
 * or it ended in error (a flush included), as on a real RC QP. */
void complete_send(struct fconn *fc, uint32_t xid, enum ibv_wc_status st)
{
	int i = send_of(fc, xid);

	assert_true(i >= 0);
	if (st != IBV_WC_SUCCESS || (fc->sends[i].flags & IBV_SEND_SIGNALED))
		queue_wc(fc, fc->sends[i].wr_id, st, IBV_WC_SEND, 0);
}

/* An RDMA_MSG reply to xid in the next posted receive: accepted with stat
 * and nres result words. */
void deliver_reply(struct fconn *fc, uint32_t xid, uint32_t credits, uint32_t stat,
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
void answer_all(struct bench *b, struct fconn *fc, const uint32_t *xids, unsigned n)
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
void deliver_long_reply(struct fconn *fc, uint32_t xid, unsigned nseg)
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
