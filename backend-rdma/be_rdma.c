// SPDX-License-Identifier: MIT
/*
 * This file contains the verbs side of the RPC-over-RDMA requester:
 * rdma_cm connection management, receive and send buffers, memory
 * registration, posting calls and handling completions, for a pool of
 * connections to one server, all driven by the caller's event_base.
 *
 * Normal operation
 * ----------------
 * A connection (struct be_conn) is one connection attempt: event channel
 * and cm_id, then after route resolution the device's PD, a CQ with a
 * completion channel, an RC QP, one registered block holding the receive
 * buffers (one per credit asked + backchannel reserve + headroom, all
 * posted before connect) and the send buffers.  rdma_connect() carries our
 * RFC 8797 private data; ESTABLISHED carries the server's, from which the
 * inline thresholds come.  Both fds are non-blocking and watched by
 * libevent; the CQ is re-armed and polled to empty on each event.
 *
 * A call (struct be_call) goes through these states, changed only by
 * call_set_state():
 *
 *   QUEUED       in the pool's wait queue: no connection, or no credit
 *   POSTED       memory registered (MW binds posted), Send posted; waits
 *                for the reply and the Send completion
 *   INVALIDATING reply received and checked; LOCAL_INV posted for each
 *                window the server did not invalidate itself
 *   DONE         callback made; the caller holds the receive buffer until
 *                be_call_release()
 *
 * The callback fires only when the reply was checked, every window of the
 * call is invalidated (or every per-call MR deregistered) and the Send
 * completed: then no remote key of the call is left and no WR refers to its
 * memory.
 *
 * Backchannel (RFC 8167): a received message whose inline RPC message says
 * CALL is the server's (an NFSv4.1 callback), whatever its XID: it goes to
 * the pool's taker with its receive buffer held (struct be_bc, cn_refs)
 * and its credit field ignored as a grant; be_bc_reply() sends the inline
 * REPLY from a send buffer (completed as WR_DONE) and reposts the receive.
 *
 * Memory windows (BE_REG_MW): type 2 windows are allocated per connection
 * and kept on a free list.  A bind uses ibv_inc_rkey() of the window's
 * previous rkey, so a key from a finished call never names a live binding.
 *
 * Recovery
 * --------
 * Any fatal event (DISCONNECTED, error completion, DEVICE_REMOVAL,
 * ADDR_CHANGE, ERR_VERS, keepalive timeout, operator drop) marks the
 * connection DEAD and schedules conn_reap() from the event loop.  Reap
 * destroys the QP first: after that no WR of the connection completes or
 * touches memory and no window bound through it can be used, so each call is
 * settled exactly once, there, without waiting for flush completions:
 * POSTED calls go back to the head of the wait queue to be re-sent with the
 * same XID and fresh registrations, INVALIDATING calls are completed (their
 * reply was good), DONE calls keep the dead connection's receive buffer
 * alive (cn_refs) until released, and so do backchannel CALLs still held
 * (their be_bc_reply() then sends nothing).  The pool slot reconnects after
 * a capped exponential backoff; a new connection starts again at one credit.
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
#include "be_verbs.h"

/* ------------------------------------------------------------------------
 * The verbs seam (be_verbs.h): inline and macro verbs wrapped as functions.
 * ------------------------------------------------------------------------ */
static struct ibv_mr *real_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	return ibv_reg_mr(pd, addr, len, access);
}
static int real_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return ibv_req_notify_cq(cq, solicited_only);
}
static int real_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq, n, wc);
}
static int real_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	return ibv_post_send(qp, wr, bad);
}
static int real_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return ibv_post_recv(qp, wr, bad);
}
static struct ibv_mw *real_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	return ibv_alloc_mw(pd, type);
}
static int real_dealloc_mw(struct ibv_mw *mw)
{
	return ibv_dealloc_mw(mw);
}

static const struct be_verbs real_verbs = {
	.create_event_channel = rdma_create_event_channel,
	.destroy_event_channel = rdma_destroy_event_channel,
	.create_id = rdma_create_id,
	.destroy_id = rdma_destroy_id,
	.resolve_addr = rdma_resolve_addr,
	.resolve_route = rdma_resolve_route,
	.connect = rdma_connect,
	.disconnect = rdma_disconnect,
	.get_cm_event = rdma_get_cm_event,
	.ack_cm_event = rdma_ack_cm_event,
	.create_qp = rdma_create_qp,
	.destroy_qp = rdma_destroy_qp,
	.query_device = ibv_query_device,
	.alloc_pd = ibv_alloc_pd,
	.dealloc_pd = ibv_dealloc_pd,
	.reg_mr = real_reg_mr,
	.dereg_mr = ibv_dereg_mr,
	.alloc_mw = real_alloc_mw,
	.dealloc_mw = real_dealloc_mw,
	.create_comp_channel = ibv_create_comp_channel,
	.destroy_comp_channel = ibv_destroy_comp_channel,
	.create_cq = ibv_create_cq,
	.destroy_cq = ibv_destroy_cq,
	.req_notify_cq = real_req_notify_cq,
	.get_cq_event = ibv_get_cq_event,
	.ack_cq_events = ibv_ack_cq_events,
	.poll_cq = real_poll_cq,
	.post_send = real_post_send,
	.post_recv = real_post_recv,
	.modify_qp = ibv_modify_qp,
};
/* Process-wide and constant in the daemon; tests swap it between cases. */
static const struct be_verbs *vx = &real_verbs;

void be_verbs_set(const struct be_verbs *v)
{
	vx = v ? v : &real_verbs;
}

#define BE_MAX_DEVS		4
#define BE_BC_RESERVE		2	/* receives for backchannel calls (RPCRDMA_MAX_BC_REQUESTS) */
#define BE_RECV_HEADROOM	2
#define BE_SEND_EXTRA		4	/* send buffers beyond credits (keepalive) */
#define BE_MAX_SENDS		5	/* a call lost with this many connections fails */
#define BE_MAX_LONG_REPLY	(4u << 20)	/* largest reply pulled by RDMA Read */
#define BE_MAX_REPLY_READS	16	/* read segments in one reply */

/* wr_id tags in the low bits of 16-byte aligned pointers. */
enum { WR_RECV = 1, WR_SEND = 2, WR_INV = 3, WR_BIND = 4, WR_READ = 5, WR_DONE = 6,
       WR_TAG_MASK = 7 };
#define WR_PTR_MASK	0x0000fffffffffff8ull	/* WR_DONE keeps the send buffer above */

struct be_dev {
	struct ibv_context *dv_verbs;
	struct ibv_pd *dv_pd;
	struct ibv_device_attr dv_attr;
	unsigned dv_refs;		/* connections using it */
};

struct be_region {
	struct be_ctx *rg_ctx;
	uint8_t *rg_addr;
	size_t rg_len;
	struct ibv_mr *rg_mr[BE_MAX_DEVS];
	LIST_ENTRY(be_region) rg_link;
};

/*
 * A connected cm_id on its way out: rdma_disconnect() sent, destroyed when
 * DISCONNECTED (DREP or DREQ timeout) arrives.  rdma_destroy_id() of an id
 * still waiting for its DREP blocks for the CM's timeout (measured ~50 s
 * with rxe and a vanished peer): the event loop must not.
 */
struct be_closing {
	struct be_ctx *cl_ctx;
	struct rdma_event_channel *cl_ch;
	struct rdma_cm_id *cl_id;
	struct event *cl_ev;
	struct event *cl_timer;
	LIST_ENTRY(be_closing) cl_link;
};

struct be_pool;
LIST_HEAD(be_region_list, be_region);
LIST_HEAD(be_closing_list, be_closing);
LIST_HEAD(be_pool_list, be_pool);

struct be_ctx {
	struct event_base *cx_base;
	struct be_config cx_cfg;
	struct be_stats cx_stats;
	struct be_dev *cx_dev[BE_MAX_DEVS];
	struct be_region_list cx_regions;
	struct be_pool_list cx_pools;
	struct be_closing_list cx_closing;
	struct rpcrdma_limits cx_lim;
	struct rpcrdma_hdr cx_tx;	/* scratch for encoding */
	struct rpcrdma_hdr cx_rx;	/* scratch for decoding */
	struct be_call *cx_call_cache;	/* freed calls kept for reuse (no malloc per call) */
	unsigned cx_ncached;
};

struct be_mw {
	struct ibv_mw *mw_mw;
	uint32_t mw_rkey;		/* key of the current or last binding */
	struct be_mw *mw_next;		/* free list */
};

/* One registration of one span of a call. */
struct be_reg {
	struct be_mw *rg_mw;		/* BE_REG_MW: bound window, NULL when invalidated */
	struct ibv_mr *rg_mr;		/* per-call MR, deregistered after the reply */
};

struct be_rbuf {
	struct be_conn *rb_conn;
	uint8_t *rb_buf;
} __attribute__((aligned(16)));

/* A backchannel CALL held by the caller (RFC 8167): its receive buffer is
 * reposted at be_bc_reply(). */
#define BE_BC_SLOTS		(BE_BC_RESERVE + BE_RECV_HEADROOM)
struct be_bc {
	struct be_conn *bb_conn;	/* holds a cn_refs reference while busy */
	struct be_rbuf *bb_rbuf;
	uint32_t bb_xid;
	bool bb_busy;
};

enum be_conn_state {
	BC_RESOLVING,		/* address then route resolution */
	BC_CONNECTING,		/* rdma_connect() sent */
	BC_UP,			/* ESTABLISHED: calls may be sent */
	BC_DEAD,		/* failed; conn_reap() scheduled or done */
};

enum be_call_state {
	CS_QUEUED,
	CS_POSTED,
	CS_INVALIDATING,
	CS_DONE,
	CS_READING,		/* reply carried a Read list: RDMA Reads posted */
};
static const char *const call_state_names[] = { "QUEUED", "POSTED", "INVALIDATING", "DONE",
						"READING" };

struct be_call {
	struct be_ctx *ca_ctx;			/* outlives the pool: call_free() caches here */
	struct be_call *ca_cache_next;		/* cx_call_cache link */
	struct be_pool *ca_pool;
	struct be_conn *ca_conn;		/* POSTED.. : the connection it went on */
	enum be_call_state ca_state;
	TAILQ_ENTRY(be_call) ca_link;		/* pool queue or connection list */
	uint32_t ca_xid;
	be_reply_fn *ca_cb;
	void *ca_arg;
	bool ca_cancelled;
	bool ca_keepalive;
	bool ca_ccp;				/* CONF_RDMA of its connection */
	bool ca_ccp_abandoned;			/* timed out: its credit given back */
	bool ca_failed;				/* on po_failed, callback due */
	unsigned ca_sends;			/* times posted (re-sends after reconnect) */
	bool ca_send_done, ca_reply_seen;
	unsigned ca_inv_pending;		/* LOCAL_INV WRs not yet completed */
	unsigned ca_sq_binds;			/* WRs of the bind+send chain (for SQ room) */
	unsigned ca_sq_inv;			/* SQ room reserved for invalidation */
	int ca_sbuf;				/* send buffer index, -1 when none */
	struct be_rbuf *ca_rbuf;		/* receive buffer holding the reply */
	struct timespec ca_sent_at;

	struct be_call_desc ca_desc;		/* copy, pointing at the arrays below */
	struct iovec ca_msg[BE_MAX_MSG_IOV];
	struct be_read_item ca_reads[BE_MAX_READ_ITEMS];
	struct be_target ca_wt[BE_MAX_WRITE_CHUNKS];
	struct iovec ca_wiov[BE_MAX_WRITE_CHUNKS][BE_MAX_TARGET_IOV];
	struct be_target ca_rt;
	struct iovec ca_riov[BE_MAX_TARGET_IOV];
	uint8_t ca_ka_msg[BE_CCP_CALL_LEN];	/* keepalive NULL or CONF_RDMA call */
	/* Long reply by Read list (RFC 5666): pulled into ca_lr_buf.  Before
	 * ca_plan: call_new() zeroes up to there (call_free() frees ca_lr_buf). */
	uint8_t *ca_lr_buf;
	struct ibv_mr *ca_lr_mr;
	uint32_t ca_lr_len, ca_lr_pos;
	unsigned ca_lr_nsegs;
	struct rpcrdma_segment ca_lr_seg[BE_MAX_REPLY_READS];
	bool ca_lr_remote_inv;			/* the reply's Send With Invalidate */
	uint32_t ca_lr_inv_rkey;
	unsigned ca_lr_posted, ca_lr_done;	/* Reads posted / completed */
	bool ca_lr_waiting;			/* on cn_rdwait: Reads left to post */
	TAILQ_ENTRY(be_call) ca_rd_link;

	struct be_plan ca_plan;
	struct be_handle ca_rd[BE_MAX_CALL_SEGS], ca_wr[BE_MAX_CALL_SEGS], ca_rp[BE_MAX_CALL_SEGS];
	struct be_reg ca_reg[BE_MAX_CALL_SEGS];	/* reads, then writes, then reply */
	unsigned ca_nreg;
	struct be_reply ca_reply;
} __attribute__((aligned(16)));

TAILQ_HEAD(be_call_list, be_call);

struct be_conn {
	struct be_ctx *cn_ctx;
	struct be_pool *cn_pool;
	unsigned cn_slot;
	enum be_conn_state cn_state;
	unsigned cn_refs;		/* 1 while in its slot + replies held by callers */
	struct rdma_event_channel *cn_ch;
	struct event *cn_cm_ev;
	struct rdma_cm_id *cn_id;
	int cn_devidx;			/* -1 until route resolution */
	struct ibv_comp_channel *cn_cc;
	struct event *cn_cq_ev;
	struct ibv_cq *cn_cq;
	struct ibv_qp *cn_qp;
	struct event *cn_reap_ev;	/* deferred teardown */
	struct event *cn_timer;		/* connect timeout, then keepalive */
	uint8_t *cn_mem;		/* receive buffers then send buffers */
	size_t cn_memlen;
	struct ibv_mr *cn_mr;
	struct be_rbuf *cn_rbufs;
	unsigned cn_nrecv;
	unsigned cn_nsend;
	unsigned *cn_sfree;		/* stack of free send buffer indexes */
	unsigned cn_nsfree;
	unsigned cn_sq_max, cn_sq_used;
	struct be_mw *cn_mwfree;
	unsigned cn_nmw;
	struct be_credits cn_cr;
	struct be_call_list cn_calls;	/* POSTED and INVALIDATING */
	struct rpcrdma_pd cn_ours, cn_peer;
	bool cn_peer_pd;
	uint8_t cn_peer_raw[8];
	unsigned cn_peer_raw_len;
	uint32_t cn_send_thresh, cn_recv_thresh;
	unsigned cn_rr, cn_id_depth;
	struct timespec cn_last_rx;
	struct be_call *cn_ka;		/* keepalive in flight */
	bool cn_was_up;
	bool cn_cm_disconnected;	/* DISCONNECTED received: destroy without waiting */
	/* CCP (draft-08 6): while PENDING only the CONF_RDMA call goes out. */
	enum be_ccp_state cn_ccp;
	struct be_call *cn_ccp_call;
	struct event *cn_ccp_timer;
	/* RDMA Reads of long replies: at most cn_read_depth in flight. */
	unsigned cn_read_depth, cn_reads_out;
	struct be_call_list cn_rdwait;	/* READING calls with Reads left to post */
	/* Drain: signaled send-queue WRs posted and not yet completed. */
	unsigned cn_sig_out;
	bool cn_draining;		/* DEAD, reap waits for cn_sig_out == 0 */
	struct event *cn_drain_timer;
	struct be_bc cn_bc[BE_BC_SLOTS];	/* backchannel CALLs held */
} __attribute__((aligned(16)));

struct be_slot {
	struct be_pool *sl_pool;
	unsigned sl_idx;
	struct be_conn *sl_conn;	/* current attempt, NULL while waiting */
	struct event *sl_retry;
	unsigned sl_backoff_ms;
};

struct be_pool {
	struct be_ctx *po_ctx;
	LIST_ENTRY(be_pool) po_link;
	struct sockaddr_storage po_addr;
	socklen_t po_addrlen;
	char po_name[64];
	be_pool_event_fn *po_event_cb;
	void *po_event_arg;
	unsigned po_nslots;
	struct be_slot *po_slots;
	struct be_call_list po_queue;
	unsigned po_nqueued;
	struct be_call_list po_failed;	/* failed while queued: callbacks from po_fail_ev */
	struct event *po_fail_ev;
	unsigned po_ninflight;
	unsigned po_rr;
	bool po_pumping;
	bool po_fatal;			/* ERR_VERS: stop reconnecting */
	bool po_freeing;		/* be_pool_free(): no events, no reconnect */
	uint32_t po_ka_xid;
	bool po_room_wanted;		/* a submit was refused: BE_POOL_ROOM due */
	struct event *po_room_ev;
	bool po_ccp_warned;		/* fallback logged once per pool */
	be_bc_fn *po_bc_fn;		/* backchannel CALL taker */
	void *po_bc_arg;
};

static const char *const err_names[BE_ERR__COUNT] = {
	[BE_OK] = "ok",
	[BE_ERR_SHUTDOWN] = "shutdown",
	[BE_ERR_CANCELLED] = "cancelled",
	[BE_ERR_TOO_BIG] = "too big for the limits",
	[BE_ERR_REGISTER] = "memory registration failed",
	[BE_ERR_BAD_REPLY] = "bad reply",
	[BE_ERR_OVERRUN] = "chunk lengths beyond the offer",
	[BE_ERR_VERS] = "RDMA_ERROR ERR_VERS",
	[BE_ERR_CHUNK] = "RDMA_ERROR ERR_CHUNK",
	[BE_ERR_QUEUE_FULL] = "wait queue full",
	[BE_ERR_RETRIES] = "lost with too many connections",
};

const char *be_err_str(enum be_err err)
{
	return (unsigned)err < BE_ERR__COUNT && err_names[err] ? err_names[err] : "?";
}

const char *be_reg_mode_str(enum be_reg_mode mode)
{
	switch (mode) {
	case BE_REG_MW: return "mw";
	case BE_REG_MR: return "mr";
	case BE_REG_PERSISTENT: return "persistent";
	}
	return "?";
}

void be_config_default(struct be_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->bc_credits = 128;
	cfg->bc_inline_send = 4096;
	cfg->bc_inline_recv = 4096;
	cfg->bc_reg_mode = BE_REG_MW;
	cfg->bc_remote_inv = true;
	cfg->bc_conns = 1;
	cfg->bc_max_seg_len = 1u << 20;
	cfg->bc_max_queue = 4096;
	cfg->bc_connect_timeout_ms = 5000;
	cfg->bc_retry_min_ms = 100;
	cfg->bc_retry_max_ms = 10000;
	cfg->bc_keepalive_ms = 30000;
	cfg->bc_keepalive_prog = 100003;
	cfg->bc_keepalive_vers = 3;
	cfg->bc_responder_resources = 16;
	cfg->bc_ccp = false;
	cfg->bc_ccp_timeout_ms = 2000;
	cfg->bc_drain_ms = 2000;
}

/* ------------------------------------------------------------------------
 * Logging: one line to stderr, with the function and the pool.
 * ------------------------------------------------------------------------ */
__attribute__((format(printf, 3, 4)))
static void be_log(const struct be_pool *pool, const char *fn, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rpcrdma-gw backend %s %s: %s\n", pool ? pool->po_name : "-", fn, msg);
}
#define LOG(pool, ...) be_log((pool), __func__, __VA_ARGS__)

/* Keepalive bookkeeping only (ms, seconds apart): the coarse clock costs
 * no system call (see gw_now_ms()). */
static void now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC_COARSE, ts);
}

static long ms_since(const struct timespec *t)
{
	struct timespec n;

	now(&n);
	return (n.tv_sec - t->tv_sec) * 1000 + (n.tv_nsec - t->tv_nsec) / 1000000;
}

static struct timeval ms_tv(unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	return tv;
}

/* ------------------------------------------------------------------------
 * Context, devices and caller regions
 * ------------------------------------------------------------------------ */
struct be_ctx *be_ctx_new(struct event_base *base, const struct be_config *cfg)
{
	struct be_ctx *ctx;

	if (!base) {
		errno = EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->cx_base = base;
	if (cfg)
		ctx->cx_cfg = *cfg;
	else
		be_config_default(&ctx->cx_cfg);
	if (ctx->cx_cfg.bc_credits == 0)
		ctx->cx_cfg.bc_credits = 1;
	if (ctx->cx_cfg.bc_conns == 0)
		ctx->cx_cfg.bc_conns = 1;
	if (ctx->cx_cfg.bc_inline_recv < 1024)
		ctx->cx_cfg.bc_inline_recv = 1024;
	if (ctx->cx_cfg.bc_inline_send < 1024)
		ctx->cx_cfg.bc_inline_send = 1024;
	if (ctx->cx_cfg.bc_retry_min_ms == 0)
		ctx->cx_cfg.bc_retry_min_ms = 1;
	LIST_INIT(&ctx->cx_regions);
	LIST_INIT(&ctx->cx_pools);
	LIST_INIT(&ctx->cx_closing);
	rpcrdma_limits_default(&ctx->cx_lim);
	ctx->cx_lim.lim_max_segs_per_chunk = BE_MAX_CALL_SEGS;
	if (ctx->cx_cfg.bc_reg_mode == BE_REG_PERSISTENT)
		LOG(NULL, "UNSAFE registration mode 'persistent': every registered region is "
			  "remotely readable and writable by the server for its whole life");
	return ctx;
}

const struct be_stats *be_ctx_stats(const struct be_ctx *ctx)
{
	return &ctx->cx_stats;
}

const struct be_config *be_ctx_config(const struct be_ctx *ctx)
{
	return &ctx->cx_cfg;
}

static int region_access(const struct be_ctx *ctx)
{
	switch (ctx->cx_cfg.bc_reg_mode) {
	case BE_REG_MW:
		return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	case BE_REG_PERSISTENT:
		return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	case BE_REG_MR:
	default:
		return 0;	/* per call registrations only */
	}
}

static int region_reg_dev(struct be_region *rg, int d)
{
	struct be_ctx *ctx = rg->rg_ctx;
	int acc = region_access(ctx);

	if (!acc || rg->rg_mr[d])
		return 0;
	rg->rg_mr[d] = vx->reg_mr(ctx->cx_dev[d]->dv_pd, rg->rg_addr, rg->rg_len, acc);
	if (!rg->rg_mr[d]) {
		LOG(NULL, "vx->reg_mr(%zu bytes) failed: %s", rg->rg_len, strerror(errno));
		return -errno;
	}
	return 0;
}

struct be_region *be_region_register(struct be_ctx *ctx, void *addr, size_t len)
{
	struct be_region *rg;
	int d;

	if (!addr || !len) {
		errno = EINVAL;
		return NULL;
	}
	rg = calloc(1, sizeof(*rg));
	if (!rg)
		return NULL;
	rg->rg_ctx = ctx;
	rg->rg_addr = addr;
	rg->rg_len = len;
	for (d = 0; d < BE_MAX_DEVS; d++) {
		if (ctx->cx_dev[d] && region_reg_dev(rg, d) < 0) {
			int e = errno;

			be_region_unregister(rg);
			errno = e;
			return NULL;
		}
	}
	LIST_INSERT_HEAD(&ctx->cx_regions, rg, rg_link);
	return rg;
}

void be_region_unregister(struct be_region *rg)
{
	int d;
	bool linked = false;
	struct be_region *it;

	if (!rg)
		return;
	LIST_FOREACH(it, &rg->rg_ctx->cx_regions, rg_link)
		if (it == rg)
			linked = true;
	if (linked)
		LIST_REMOVE(rg, rg_link);
	for (d = 0; d < BE_MAX_DEVS; d++)
		if (rg->rg_mr[d])
			vx->dereg_mr(rg->rg_mr[d]);
	free(rg);
}

static struct ibv_mr *region_find(struct be_ctx *ctx, int d, const uint8_t *addr, size_t len)
{
	struct be_region *rg;

	LIST_FOREACH(rg, &ctx->cx_regions, rg_link)
		if (addr >= rg->rg_addr && addr + len <= rg->rg_addr + rg->rg_len)
			return rg->rg_mr[d];
	return NULL;
}

/* The device slot for a verbs context, with its PD; regions registered. */
static int dev_get(struct be_ctx *ctx, struct ibv_context *verbs)
{
	struct be_region *rg;
	int d, freeslot = -1;

	for (d = 0; d < BE_MAX_DEVS; d++) {
		if (ctx->cx_dev[d] && ctx->cx_dev[d]->dv_verbs == verbs) {
			ctx->cx_dev[d]->dv_refs++;
			return d;
		}
		if (!ctx->cx_dev[d] && freeslot < 0)
			freeslot = d;
	}
	if (freeslot < 0)
		return -ENOSPC;
	d = freeslot;
	ctx->cx_dev[d] = calloc(1, sizeof(struct be_dev));
	if (!ctx->cx_dev[d])
		return -ENOMEM;
	ctx->cx_dev[d]->dv_verbs = verbs;
	if (vx->query_device(verbs, &ctx->cx_dev[d]->dv_attr) ||
	    !(ctx->cx_dev[d]->dv_pd = vx->alloc_pd(verbs))) {
		LOG(NULL, "device %s: query/alloc_pd failed", ibv_get_device_name(verbs->device));
		free(ctx->cx_dev[d]);
		ctx->cx_dev[d] = NULL;
		return -EIO;
	}
	ctx->cx_dev[d]->dv_refs = 1;
	LIST_FOREACH(rg, &ctx->cx_regions, rg_link)
		region_reg_dev(rg, d);
	return d;
}

/* Last connection gone from a device: free its regions' MRs and the PD so
 * that a removed device can go (DEVICE_REMOVAL), and a new one be used. */
static void dev_put(struct be_ctx *ctx, int d)
{
	struct be_region *rg;

	if (d < 0 || !ctx->cx_dev[d] || --ctx->cx_dev[d]->dv_refs > 0)
		return;
	LIST_FOREACH(rg, &ctx->cx_regions, rg_link) {
		if (rg->rg_mr[d]) {
			vx->dereg_mr(rg->rg_mr[d]);
			rg->rg_mr[d] = NULL;
		}
	}
	vx->dealloc_pd(ctx->cx_dev[d]->dv_pd);
	free(ctx->cx_dev[d]);
	ctx->cx_dev[d] = NULL;
}

/* ------------------------------------------------------------------------
 * Calls: state, completion, registration
 * ------------------------------------------------------------------------ */
static void pool_pump(struct be_pool *pool);
static void conn_fail(struct be_conn *cn, const char *why);
static void conn_put(struct be_conn *cn);

static void call_set_state(struct be_call *ca, enum be_call_state st)
{
	static const bool ok[5][5] = {
		/* to:        QUEUED POSTED INVAL  DONE   READING */
		[CS_QUEUED] = { false, true, false, true, false },
		[CS_POSTED] = { true, false, true, true, true },
		[CS_INVALIDATING] = { false, false, false, true, false },
		[CS_DONE] = { false, false, false, false, false },
		[CS_READING] = { true, false, true, false, false },
	};

	if (!ok[ca->ca_state][st]) {
		LOG(ca->ca_pool, "xid %08x: bad transition %s -> %s", ca->ca_xid,
		    call_state_names[ca->ca_state], call_state_names[st]);
		abort();	/* broken invariant */
	}
	ca->ca_state = st;
}

static void call_lr_free(struct be_call *ca)
{
	if (ca->ca_lr_mr)
		vx->dereg_mr(ca->ca_lr_mr);
	ca->ca_lr_mr = NULL;
	free(ca->ca_lr_buf);
	ca->ca_lr_buf = NULL;
}

static void call_free(struct be_call *ca)
{
	struct be_ctx *ctx = ca->ca_ctx;

	call_lr_free(ca);
	/* Kept on the context, which outlives pools (a reply may be released
	 * after its pool is gone): up to two windows' worth of calls, so steady
	 * traffic never allocates; a burst beyond that is given back. */
	if (ctx->cx_ncached < 2 * ctx->cx_cfg.bc_credits * ctx->cx_cfg.bc_conns) {
		ca->ca_cache_next = ctx->cx_call_cache;
		ctx->cx_call_cache = ca;
		ctx->cx_ncached++;
		return;
	}
	free(ca);
}

/* Give the call's send buffer back. */
static void call_put_sbuf(struct be_call *ca)
{
	struct be_conn *cn = ca->ca_conn;

	if (ca->ca_sbuf >= 0 && cn) {
		cn->cn_sfree[cn->cn_nsfree++] = (unsigned)ca->ca_sbuf;
		ca->ca_sbuf = -1;
	}
}

/* Per-call MRs: deregistration is the invalidation. */
static void call_dereg_mrs(struct be_call *ca)
{
	unsigned i;

	for (i = 0; i < ca->ca_nreg; i++) {
		if (ca->ca_reg[i].rg_mr) {
			vx->dereg_mr(ca->ca_reg[i].rg_mr);
			ca->ca_reg[i].rg_mr = NULL;
		}
	}
}

/* Windows back to the connection's free list (after invalidation). */
static void call_free_mws(struct be_call *ca)
{
	struct be_conn *cn = ca->ca_conn;
	unsigned i;

	for (i = 0; i < ca->ca_nreg; i++) {
		struct be_mw *mw = ca->ca_reg[i].rg_mw;

		if (mw) {
			mw->mw_next = cn->cn_mwfree;
			cn->cn_mwfree = mw;
			ca->ca_reg[i].rg_mw = NULL;
		}
	}
	ca->ca_nreg = 0;
}

/* A refused submit may succeed now: tell the caller from the event loop. */
static void pool_room_check(struct be_pool *pool)
{
	if (pool->po_room_wanted && !pool->po_freeing &&
	    pool->po_nqueued < pool->po_ctx->cx_cfg.bc_max_queue)
		event_active(pool->po_room_ev, 0, 0);
}

static void pool_room_cb(evutil_socket_t fd, short what, void *arg)
{
	struct be_pool *pool = arg;

	(void)fd;
	(void)what;
	if (!pool->po_room_wanted || pool->po_freeing ||
	    pool->po_nqueued >= pool->po_ctx->cx_cfg.bc_max_queue)
		return;
	pool->po_room_wanted = false;
	if (pool->po_event_cb)
		pool->po_event_cb(pool, BE_POOL_ROOM, pool->po_event_arg);
}

/* Final step: the callback (or silent free when cancelled). */
static void call_finish(struct be_call *ca, enum be_err err)
{
	struct be_pool *pool = ca->ca_pool;
	struct be_ctx *ctx = pool->po_ctx;

	pool_room_check(pool);	/* its XID is free again */

	if (err != BE_OK)
		ca->ca_reply.br_err = err;
	ca->ca_reply.br_xid = ca->ca_xid;
	call_set_state(ca, CS_DONE);
	ctx->cx_stats.bs_replies++;
	if (ca->ca_cancelled || !ca->ca_cb) {
		be_call_release(ca);
		return;
	}
	ca->ca_cb(ca, &ca->ca_reply, ca->ca_arg);
}

/* A call on a connection: complete it when reply, invalidation and Send
 * completion are all in. */
static void call_try_complete(struct be_call *ca)
{
	struct be_conn *cn = ca->ca_conn;

	if (ca->ca_state != CS_INVALIDATING || ca->ca_inv_pending || !ca->ca_send_done)
		return;
	TAILQ_REMOVE(&cn->cn_calls, ca, ca_link);
	ca->ca_pool->po_ninflight--;
	call_free_mws(ca);
	if (cn->cn_ka == ca)
		cn->cn_ka = NULL;
	if (cn->cn_ccp_call == ca)
		cn->cn_ccp_call = NULL;
	call_finish(ca, BE_OK);
}

/* Fail a call that is not on a connection (QUEUED). */
static void call_fail_queued(struct be_call *ca, enum be_err err)
{
	memset(&ca->ca_reply, 0, sizeof(ca->ca_reply));
	call_finish(ca, err);
}

/* Same, but the callback comes from the event loop: never from inside
 * be_call_submit() (the caller must get its handle before the callback). */
static void call_fail_later(struct be_call *ca, enum be_err err)
{
	struct be_pool *pool = ca->ca_pool;

	memset(&ca->ca_reply, 0, sizeof(ca->ca_reply));
	ca->ca_reply.br_err = err;
	ca->ca_failed = true;
	TAILQ_INSERT_TAIL(&pool->po_failed, ca, ca_link);
	event_active(pool->po_fail_ev, 0, 0);
}

static void pool_failed_cb(evutil_socket_t fd, short what, void *arg)
{
	struct be_pool *pool = arg;
	struct be_call *ca;

	(void)fd;
	(void)what;
	while ((ca = TAILQ_FIRST(&pool->po_failed)) != NULL) {
		TAILQ_REMOVE(&pool->po_failed, ca, ca_link);
		ca->ca_failed = false;
		call_finish(ca, ca->ca_reply.br_err);
	}
}

void be_call_release(struct be_call *ca)
{
	struct be_conn *cn;

	if (!ca)
		return;
	cn = ca->ca_conn;
	if (ca->ca_rbuf && cn) {
		struct be_rbuf *rb = ca->ca_rbuf;

		ca->ca_rbuf = NULL;
		if (cn->cn_state == BC_UP) {
			struct ibv_sge sge = { (uintptr_t)rb->rb_buf, cn->cn_ctx->cx_cfg.bc_inline_recv,
					       cn->cn_mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = (uintptr_t)rb | WR_RECV, .sg_list = &sge,
						  .num_sge = 1 }, *bad;

			if (vx->post_recv(cn->cn_qp, &wr, &bad) == 0)
				be_credits_recv_posted(&cn->cn_cr, 1);
			else
				conn_fail(cn, "ibv_post_recv failed");
		}
		ca->ca_conn = NULL;
		call_free(ca);
		if (cn->cn_state == BC_UP) {
			conn_put(cn);
			pool_pump(cn->cn_pool);
		} else {
			conn_put(cn);
		}
		return;
	}
	call_free(ca);
}

void be_call_cancel(struct be_call *ca)
{
	if (!ca || ca->ca_state == CS_DONE)
		return;
	ca->ca_cancelled = true;
	if (ca->ca_failed) {
		TAILQ_REMOVE(&ca->ca_pool->po_failed, ca, ca_link);
		call_free(ca);
		return;
	}
	if (ca->ca_state == CS_QUEUED) {
		TAILQ_REMOVE(&ca->ca_pool->po_queue, ca, ca_link);
		ca->ca_pool->po_nqueued--;
		call_fail_queued(ca, BE_ERR_CANCELLED);
	}
	/* on a connection: freed when the reply comes or the connection dies */
}

uint32_t be_call_xid(const struct be_call *ca)
{
	return ca->ca_xid;
}

static struct be_mw *mw_get(struct be_conn *cn)
{
	struct be_mw *mw = cn->cn_mwfree;

	if (mw) {
		cn->cn_mwfree = mw->mw_next;
		return mw;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	mw->mw_mw = vx->alloc_mw(cn->cn_pool->po_ctx->cx_dev[cn->cn_devidx]->dv_pd, IBV_MW_TYPE_2);
	if (!mw->mw_mw) {
		free(mw);
		return NULL;
	}
	mw->mw_rkey = mw->mw_mw->rkey;
	cn->cn_nmw++;
	return mw;
}

/*
 * Register one span for remote access `acc`; fills the handle, appends the
 * bind WR (MW mode) to the chain.  0 or -errno.
 */
static int reg_span(struct be_conn *cn, struct be_call *ca, const struct be_span *sp, int acc,
		    struct be_handle *hd, struct ibv_send_wr *binds, unsigned *nbinds)
{
	struct be_ctx *ctx = cn->cn_pool->po_ctx;
	struct be_reg *rg = &ca->ca_reg[ca->ca_nreg];
	struct ibv_mr *mr = NULL;
	enum be_reg_mode mode = ctx->cx_cfg.bc_reg_mode;

	memset(rg, 0, sizeof(*rg));
	if (mode != BE_REG_MR)
		mr = region_find(ctx, cn->cn_devidx, sp->sp_addr, sp->sp_len);
	hd->hd_offset = (uintptr_t)sp->sp_addr;
	if (mr && mode == BE_REG_PERSISTENT) {
		hd->hd_rkey = mr->rkey;
	} else if (mr && mode == BE_REG_MW) {
		struct be_mw *mw = mw_get(cn);
		struct ibv_send_wr *wr = &binds[*nbinds];

		if (!mw)
			return -ENOMEM;
		mw->mw_rkey = ibv_inc_rkey(mw->mw_rkey);
		memset(wr, 0, sizeof(*wr));
		wr->wr_id = (uintptr_t)ca | WR_BIND;
		wr->opcode = IBV_WR_BIND_MW;
		wr->bind_mw.mw = mw->mw_mw;
		wr->bind_mw.rkey = mw->mw_rkey;
		wr->bind_mw.bind_info.mr = mr;
		wr->bind_mw.bind_info.addr = (uintptr_t)sp->sp_addr;
		wr->bind_mw.bind_info.length = sp->sp_len;
		wr->bind_mw.bind_info.mw_access_flags = acc;
		if (*nbinds > 0)
			binds[*nbinds - 1].next = wr;
		(*nbinds)++;
		hd->hd_rkey = mw->mw_rkey;
		rg->rg_mw = mw;
		ctx->cx_stats.bs_mw_binds++;
	} else {
		int macc = acc | (acc & IBV_ACCESS_REMOTE_WRITE ? IBV_ACCESS_LOCAL_WRITE : 0);

		rg->rg_mr = vx->reg_mr(ctx->cx_dev[cn->cn_devidx]->dv_pd, sp->sp_addr, sp->sp_len,
				       macc);
		if (!rg->rg_mr)
			return -errno;
		hd->hd_rkey = rg->rg_mr->rkey;
		ctx->cx_stats.bs_mr_regs++;
	}
	ca->ca_nreg++;
	return 0;
}

/* Windows first, then the Send: one ibv_post_send().  0, -EAGAIN (no room:
 * stays queued), or another -errno (call failed). */
static int call_post(struct be_conn *cn, struct be_call *ca)
{
	struct be_pool *pool = cn->cn_pool;
	struct be_ctx *ctx = pool->po_ctx;
	struct be_plan *p = &ca->ca_plan;
	struct ibv_send_wr binds[BE_MAX_CALL_SEGS + 1], *send, *bad;
	struct ibv_sge sge;
	unsigned nbinds = 0, i, nspans, need;
	uint8_t *sb;
	long len;
	int rc;

	rc = be_plan_call(&ca->ca_desc, cn->cn_send_thresh, ctx->cx_cfg.bc_max_seg_len, p);
	if (rc < 0)
		return rc;
	nspans = p->pl_nreadspans + p->pl_nwspans + p->pl_nrspans;
	need = 1 + (ctx->cx_cfg.bc_reg_mode == BE_REG_MW ? 2 * nspans : 0);
	if (cn->cn_nsfree == 0 || cn->cn_sq_used + need > cn->cn_sq_max)
		return -EAGAIN;

	ca->ca_conn = cn;
	ca->ca_nreg = 0;
	for (i = 0; i < p->pl_nreadspans; i++)
		if ((rc = reg_span(cn, ca, &p->pl_read[i], IBV_ACCESS_REMOTE_READ, &ca->ca_rd[i],
				   binds, &nbinds)) < 0)
			goto unreg;
	for (i = 0; i < p->pl_nwspans; i++)
		if ((rc = reg_span(cn, ca, &p->pl_wspan[i], IBV_ACCESS_REMOTE_WRITE, &ca->ca_wr[i],
				   binds, &nbinds)) < 0)
			goto unreg;
	for (i = 0; i < p->pl_nrspans; i++)
		if ((rc = reg_span(cn, ca, &p->pl_rspan[i], IBV_ACCESS_REMOTE_WRITE, &ca->ca_rp[i],
				   binds, &nbinds)) < 0)
			goto unreg;

	ca->ca_sbuf = (int)cn->cn_sfree[--cn->cn_nsfree];
	sb = cn->cn_mem + (size_t)cn->cn_nrecv * ctx->cx_cfg.bc_inline_recv +
	     (size_t)ca->ca_sbuf * ctx->cx_cfg.bc_inline_send;
	len = be_marshal_call(&ca->ca_desc, p, ctx->cx_cfg.bc_credits, ca->ca_rd, ca->ca_wr,
			      ca->ca_rp, &ctx->cx_tx, sb, cn->cn_send_thresh);
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
	rc = vx->post_send(cn->cn_qp, binds, &bad);
	if (rc) {
		LOG(pool, "xid %08x: ibv_post_send: %s", ca->ca_xid, strerror(rc));
		rc = -rc;
		goto unsbuf;
	}
	/* The provider names a window by ibv_mw.rkey, which must be the key
	 * of its current binding when the bind is posted (rxe compares it):
	 * step it forward only now that the binds are on the queue. */
	for (i = 0; i < ca->ca_nreg; i++)
		if (ca->ca_reg[i].rg_mw)
			ca->ca_reg[i].rg_mw->mw_mw->rkey = ca->ca_reg[i].rg_mw->mw_rkey;
	ca->ca_sq_binds = nbinds + 1;
	ca->ca_sq_inv = nbinds;
	cn->cn_sq_used += ca->ca_sq_binds + ca->ca_sq_inv;
	cn->cn_sig_out++;	/* the Send */
	ca->ca_send_done = false;
	ca->ca_reply_seen = false;
	ca->ca_inv_pending = 0;
	now(&ca->ca_sent_at);
	be_credits_sent(&cn->cn_cr);
	TAILQ_INSERT_TAIL(&cn->cn_calls, ca, ca_link);
	pool->po_ninflight++;
	if (p->pl_proc == RPCRDMA_NOMSG)
		ctx->cx_stats.bs_nomsg_calls++;
	call_set_state(ca, CS_POSTED);
	ca->ca_sends++;
	return 0;

unsbuf:
	call_put_sbuf(ca);
unreg:
	/* Nothing was posted: windows are unbound, their keys unchanged. */
	for (i = 0; i < ca->ca_nreg; i++)
		if (ca->ca_reg[i].rg_mw)
			ca->ca_reg[i].rg_mw->mw_rkey = ca->ca_reg[i].rg_mw->mw_mw->rkey;
	call_dereg_mrs(ca);
	call_free_mws(ca);
	ca->ca_conn = NULL;
	return rc;
}

/* Move queued calls onto connections with room. */
static void pool_pump(struct be_pool *pool)
{
	struct be_ctx *ctx = pool->po_ctx;
	struct be_call *ca;

	if (pool->po_pumping)
		return;
	pool->po_pumping = true;
	while ((ca = TAILQ_FIRST(&pool->po_queue)) != NULL) {
		struct be_conn *cn = NULL;
		unsigned k;
		int rc;

		for (k = 0; k < pool->po_nslots; k++) {
			struct be_conn *c = pool->po_slots[(pool->po_rr + k) % pool->po_nslots].sl_conn;

			if (c && c->cn_state == BC_UP && c->cn_ccp != BE_CCP_PENDING &&
			    be_credits_can_send(&c->cn_cr) && c->cn_nsfree > 0) {
				cn = c;
				pool->po_rr = (pool->po_rr + k + 1) % pool->po_nslots;
				break;
			}
		}
		if (!cn)
			break;
		TAILQ_REMOVE(&pool->po_queue, ca, ca_link);
		pool->po_nqueued--;
		rc = call_post(cn, ca);
		if (rc == -EAGAIN) {
			TAILQ_INSERT_HEAD(&pool->po_queue, ca, ca_link);
			pool->po_nqueued++;
			break;
		}
		if (rc < 0) {
			ctx->cx_stats.bs_marshal_errors++;
			LOG(pool, "xid %08x: cannot send: %s", ca->ca_xid, strerror(-rc));
			call_fail_later(ca, rc == -E2BIG || rc == -EINVAL ? BE_ERR_TOO_BIG
									 : BE_ERR_REGISTER);
		}
	}
	pool->po_pumping = false;
	pool_room_check(pool);
}

static bool xid_busy(struct be_pool *pool, uint32_t xid)
{
	struct be_call *ca;
	unsigned k;

	TAILQ_FOREACH(ca, &pool->po_queue, ca_link)
		if (ca->ca_xid == xid)
			return true;
	for (k = 0; k < pool->po_nslots; k++) {
		struct be_conn *cn = pool->po_slots[k].sl_conn;

		if (!cn)
			continue;
		TAILQ_FOREACH(ca, &cn->cn_calls, ca_link)
			if (ca->ca_xid == xid)
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
	ca->ca_desc = *d;
	memcpy(ca->ca_msg, d->cd_msg, d->cd_msg_niov * sizeof(struct iovec));
	ca->ca_desc.cd_msg = ca->ca_msg;
	if (d->cd_nreads)
		memcpy(ca->ca_reads, d->cd_reads, d->cd_nreads * sizeof(struct be_read_item));
	ca->ca_desc.cd_reads = ca->ca_reads;
	for (i = 0; i < d->cd_nwrites; i++) {
		if (d->cd_writes[i].bt_niov == 0 || d->cd_writes[i].bt_niov > BE_MAX_TARGET_IOV)
			return -EINVAL;
		memcpy(ca->ca_wiov[i], d->cd_writes[i].bt_iov,
		       d->cd_writes[i].bt_niov * sizeof(struct iovec));
		ca->ca_wt[i] = (struct be_target){ ca->ca_wiov[i], d->cd_writes[i].bt_niov };
	}
	ca->ca_desc.cd_writes = ca->ca_wt;
	if (d->cd_reply) {
		if (d->cd_reply->bt_niov == 0 || d->cd_reply->bt_niov > BE_MAX_TARGET_IOV)
			return -EINVAL;
		memcpy(ca->ca_riov, d->cd_reply->bt_iov, d->cd_reply->bt_niov * sizeof(struct iovec));
		ca->ca_rt = (struct be_target){ ca->ca_riov, d->cd_reply->bt_niov };
		ca->ca_desc.cd_reply = &ca->ca_rt;
	}
	return 0;
}

static struct be_call *call_new(struct be_pool *pool, const struct be_call_desc *d,
				be_reply_fn *cb, void *arg)
{
	struct be_ctx *ctx = pool->po_ctx;
	struct be_call *ca = ctx->cx_call_cache;
	int rc;

	if (ca) {
		ctx->cx_call_cache = ca->ca_cache_next;
		ctx->cx_ncached--;
	} else {
		ca = aligned_alloc(16, (sizeof(*ca) + 15) & ~(size_t)15);
		if (!ca)
			return NULL;
	}
	/* The plan, the handles and ca_reg (a few KiB) are written before they
	 * are read; everything else is cleared.  call_free() reads the
	 * long-reply state at the end: left as found, recycled heap memory made
	 * it deregister and free junk pointers (issue 6: SIGSEGV in
	 * ibv_dereg_mr). */
	memset(ca, 0, offsetof(struct be_call, ca_plan));
	ca->ca_nreg = 0;
	memset(&ca->ca_reply, 0, sizeof(*ca) - offsetof(struct be_call, ca_reply));
	ca->ca_ctx = ctx;
	ca->ca_pool = pool;
	ca->ca_state = CS_QUEUED;
	ca->ca_sbuf = -1;
	ca->ca_cb = cb;
	ca->ca_arg = arg;
	ca->ca_xid = d->cd_xid;
	rc = desc_copy(ca, d);
	if (rc < 0) {
		call_free(ca);
		errno = -rc;
		return NULL;
	}
	return ca;
}

struct be_call *be_call_submit(struct be_pool *pool, const struct be_call_desc *d,
			       be_reply_fn *cb, void *arg)
{
	struct be_ctx *ctx = pool->po_ctx;
	struct be_call *ca;

	if (d->cd_msg && d->cd_msg_niov && d->cd_msg[0].iov_len >= 4 &&
	    chk_be32(d->cd_msg[0].iov_base) != d->cd_xid) {
		errno = EINVAL;
		return NULL;
	}
	if (pool->po_nqueued >= ctx->cx_cfg.bc_max_queue) {
		pool->po_room_wanted = true;
		errno = ENOBUFS;
		return NULL;
	}
	if (xid_busy(pool, d->cd_xid)) {
		pool->po_room_wanted = true;
		errno = EEXIST;
		return NULL;
	}
	ca = call_new(pool, d, cb, arg);
	if (!ca)
		return NULL;
	ctx->cx_stats.bs_calls++;
	TAILQ_INSERT_TAIL(&pool->po_queue, ca, ca_link);
	pool->po_nqueued++;
	pool_pump(pool);	/* no callback from here: failures are deferred */
	if (ca->ca_state == CS_QUEUED && !ca->ca_failed)
		ctx->cx_stats.bs_queued++;
	return ca;
}

/* ------------------------------------------------------------------------
 * Completions
 * ------------------------------------------------------------------------ */

/* Reply checked: invalidate what the server did not, then complete. */
static void call_invalidate(struct be_conn *cn, struct be_call *ca, uint32_t remote_inv_rkey,
			    bool remote_inv)
{
	struct be_ctx *ctx = cn->cn_pool->po_ctx;
	struct ibv_send_wr wrs[BE_MAX_CALL_SEGS], *bad;
	unsigned i, n = 0;

	call_set_state(ca, CS_INVALIDATING);
	call_dereg_mrs(ca);
	for (i = 0; i < ca->ca_nreg; i++) {
		struct be_mw *mw = ca->ca_reg[i].rg_mw;

		if (!mw)
			continue;
		if (remote_inv && mw->mw_rkey == remote_inv_rkey) {
			ctx->cx_stats.bs_remote_inv++;
			ca->ca_reply.br_remote_inv = true;
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
		LOG(cn->cn_pool, "xid %08x: Send With Invalidate of foreign rkey %08x",
		    ca->ca_xid, remote_inv_rkey);
		ctx->cx_stats.bs_bad_reply++;
		conn_fail(cn, "remote invalidation of a foreign rkey");
		return;
	}
	/* Release the room reserved for invalidations not needed. */
	cn->cn_sq_used -= ca->ca_sq_inv - n;
	ca->ca_sq_inv = n;
	if (n > 0) {
		wrs[n - 1].send_flags = IBV_SEND_SIGNALED;
		if (vx->post_send(cn->cn_qp, wrs, &bad)) {
			conn_fail(cn, "LOCAL_INV post failed");
			return;
		}
		ca->ca_inv_pending = 1;	/* one signaled WR ends the chain */
		cn->cn_sig_out++;
		ctx->cx_stats.bs_local_inv += n;
	}
	call_try_complete(ca);
}

static void repost_rbuf(struct be_conn *cn, struct be_rbuf *rb)
{
	struct ibv_sge sge = { (uintptr_t)rb->rb_buf, cn->cn_pool->po_ctx->cx_cfg.bc_inline_recv,
			       cn->cn_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uintptr_t)rb | WR_RECV, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (vx->post_recv(cn->cn_qp, &wr, &bad) == 0)
		be_credits_recv_posted(&cn->cn_cr, 1);
	else
		conn_fail(cn, "ibv_post_recv failed");
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
		unsigned i = ca->ca_lr_posted;
		uint64_t off = 0;
		struct ibv_sge sge;
		struct ibv_send_wr wr, *bad;

		for (unsigned k = 0; k < i; k++)
			off += ca->ca_lr_seg[k].rs_length;
		sge = (struct ibv_sge){ (uintptr_t)ca->ca_lr_buf + off, ca->ca_lr_seg[i].rs_length,
					ca->ca_lr_mr->lkey };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = (uintptr_t)ca | WR_READ;
		wr.opcode = IBV_WR_RDMA_READ;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.wr.rdma.remote_addr = ca->ca_lr_seg[i].rs_offset;
		wr.wr.rdma.rkey = ca->ca_lr_seg[i].rs_handle;
		if (vx->post_send(cn->cn_qp, &wr, &bad)) {
			conn_fail(cn, "RDMA Read post failed");	/* the reap settles the call */
			return;
		}
		cn->cn_reads_out++;
		cn->cn_sig_out++;
		if (++ca->ca_lr_posted == ca->ca_lr_nsegs) {
			TAILQ_REMOVE(&cn->cn_rdwait, ca, ca_rd_link);
			ca->ca_lr_waiting = false;
		}
	}
}

/* Start pulling; false with ca_reply.br_err set when the reply is refused. */
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
		ca->ca_lr_seg[i] = rh->rh_reads[i].rd_seg;
	}
	ca->ca_lr_pos = rh->rh_reads[0].rd_position;
	if (total == 0 || total > BE_MAX_LONG_REPLY || (ca->ca_lr_pos & 3) ||
	    (proc == RPCRDMA_NOMSG && ca->ca_lr_pos != 0) || proc == RPCRDMA_MSGP)
		goto refuse;
	/* Check the rest of the header as an inline reply. */
	rh->rh_nreads = 0;
	rh->rh_proc = RPCRDMA_MSG;
	if (!be_reply_check(rh, &ca->ca_plan, ca->ca_wr, ca->ca_rp, rb->rb_buf, wc->byte_len,
			    &ca->ca_reply))
		return false;
	ca->ca_reply.br_proc = proc;
	if (proc == RPCRDMA_MSG && ca->ca_lr_pos > ca->ca_reply.br_body_len)
		goto refuse;
	if (cn->cn_sq_used + n > cn->cn_sq_max)
		goto refuse;
	if (cn->cn_read_depth == 0) {
		/* draft-08 6.2: maxrdmaread 0 -> no request needing RDMA Read. */
		ctx->cx_stats.bs_read_depth_refused++;
		goto refuse;
	}
	ca->ca_lr_len = (uint32_t)total;
	ca->ca_lr_nsegs = n;
	ca->ca_lr_buf = malloc(total);
	if (!ca->ca_lr_buf)
		goto refuse;
	ca->ca_lr_mr = vx->reg_mr(ctx->cx_dev[cn->cn_devidx]->dv_pd, ca->ca_lr_buf, total,
				  IBV_ACCESS_LOCAL_WRITE);
	if (!ca->ca_lr_mr)
		goto refuse;
	ca->ca_lr_remote_inv = wc_with_inv(wc);
	ca->ca_lr_inv_rkey = wc->invalidated_rkey;
	ca->ca_lr_posted = ca->ca_lr_done = 0;
	cn->cn_sq_used += n;	/* reserved now, posted as the Read depth allows */
	ca->ca_lr_waiting = true;
	TAILQ_INSERT_TAIL(&cn->cn_rdwait, ca, ca_rd_link);
	call_set_state(ca, CS_READING);
	ctx->cx_stats.bs_long_replies++;
	reads_pump(cn);
	return true;

refuse:
	LOG(cn->cn_pool, "xid %08x: long reply (Read list, %u segments) refused", ca->ca_xid,
	    rh->rh_nreads);
	call_lr_free(ca);
	memset(&ca->ca_reply, 0, sizeof(ca->ca_reply));
	ca->ca_reply.br_err = BE_ERR_BAD_REPLY;	/* counted by the caller */
	return false;
}

/* One inline Send of hdr then iov from a send buffer (RDMA_DONE, backchannel
 * replies); its completion is handled as WR_DONE (the buffer goes back).
 * 0, -EMSGSIZE, -ENOBUFS (no send buffer or SQ room), -ENOTCONN. */
static int send_inline(struct be_conn *cn, const uint8_t *hdr, size_t hlen, const struct iovec *iov,
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
	wr.wr_id = (uint64_t)idx << 48 | (uintptr_t)cn | WR_DONE;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	if (vx->post_send(cn->cn_qp, &wr, &bad)) {
		cn->cn_sfree[cn->cn_nsfree++] = idx;
		conn_fail(cn, "inline send post failed");
		return -ENOTCONN;
	}
	cn->cn_sq_used++;
	cn->cn_sig_out++;	/* a drain waits for it like for RDMA_DONE */
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
	switch (send_inline(cn, hdr, sizeof(hdr), NULL, 0)) {
	case 0:
		ctx->cx_stats.bs_rdma_done++;
		break;
	case -ENOBUFS:
		LOG(cn->cn_pool, "xid %08x: no room for RDMA_DONE", xid);
		ctx->cx_stats.bs_marshal_errors++;
		break;
	default:	/* the connection failed: its reap settles the call */
		break;
	}
}

/* ------------------------------------------------------------------------
 * Backchannel (RFC 8167): CALLs from the server, replies from us
 * ------------------------------------------------------------------------ */


static void bc_drop(struct be_conn *cn, struct be_rbuf *rb, uint32_t xid, size_t len,
		    const char *why)
{
	cn->cn_ctx->cx_stats.bs_bc_dropped++;
	LOG(cn->cn_pool, "xid %08x: backchannel CALL (%zu bytes) dropped: %s", xid, len, why);
	repost_rbuf(cn, rb);
}

/* A reverse-direction CALL arrived in rb: hand it to the taker, holding
 * the receive buffer until be_bc_reply(). */
static void bc_recv(struct be_conn *cn, struct be_rbuf *rb, const struct rpcrdma_hdr *rh,
		    uint32_t byte_len, bool chunks)
{
	struct be_pool *pool = cn->cn_pool;
	const uint8_t *msg = rb->rb_buf + rh->rh_body_off;
	size_t len = byte_len - rh->rh_body_off;
	struct be_bc *bc = NULL;

	if (chunks) {
		/* RFC 8167 5.3: chunks in the reverse direction are not
		 * supported here: answer ERR_CHUNK. */
		uint8_t e[20];

		chk_put_be32(e, rh->rh_xid);
		chk_put_be32(e + 4, RPCRDMA_VERSION);
		chk_put_be32(e + 8, BE_BC_RESERVE);
		chk_put_be32(e + 12, RPCRDMA_ERROR);
		chk_put_be32(e + 16, RPCRDMA_ERR_CHUNK);
		send_inline(cn, e, sizeof(e), NULL, 0);
		bc_drop(cn, rb, rh->rh_xid, len, "chunks in a reverse-direction call (ERR_CHUNK sent)");
		return;
	}
	/* xid, msg_type, rpcvers, prog, vers, proc at least; same XID as the
	 * transport header (RFC 8167 5.1). */
	if (len < 24 || chk_be32(msg) != rh->rh_xid) {
		bc_drop(cn, rb, rh->rh_xid, len, "malformed RPC call header");
		return;
	}
	if (!pool->po_bc_fn) {
		bc_drop(cn, rb, rh->rh_xid, len, "no backchannel taker");
		return;
	}
	for (unsigned i = 0; i < BE_BC_SLOTS; i++)
		if (!cn->cn_bc[i].bb_busy) {
			bc = &cn->cn_bc[i];
			break;
		}
	if (!bc) {
		bc_drop(cn, rb, rh->rh_xid, len, "more CALLs than reverse credits");
		return;
	}
	*bc = (struct be_bc){ .bb_conn = cn, .bb_rbuf = rb, .bb_xid = rh->rh_xid, .bb_busy = true };
	cn->cn_refs++;
	cn->cn_ctx->cx_stats.bs_bc_calls++;
	pool->po_bc_fn(pool, bc, msg, len, pool->po_bc_arg);
}

void be_pool_set_backchannel(struct be_pool *pool, be_bc_fn *fn, void *arg)
{
	pool->po_bc_fn = fn;
	pool->po_bc_arg = arg;
}

uint32_t be_bc_xid(const struct be_bc *bc)
{
	return bc->bb_xid;
}

size_t be_bc_max_reply(const struct be_bc *bc)
{
	const struct be_conn *cn = bc->bb_conn;
	size_t cap = cn->cn_ctx->cx_cfg.bc_inline_send;

	if (cn->cn_send_thresh && cn->cn_send_thresh < cap)
		cap = cn->cn_send_thresh;
	return cap - BE_BC_HDR_LEN;
}

int be_bc_reply(struct be_bc *bc, const struct iovec *iov, unsigned niov)
{
	struct be_conn *cn = bc->bb_conn;
	uint8_t hdr[BE_BC_HDR_LEN];
	int rc = 0;

	if (!bc->bb_busy)
		return -EINVAL;
	if (niov > 0) {
		if (cn->cn_state != BC_UP) {
			rc = -ENOTCONN;
		} else {
			be_bc_marshal_hdr(hdr, bc->bb_xid, BE_BC_RESERVE);
			rc = send_inline(cn, hdr, sizeof(hdr), iov, niov);
			if (rc == 0)
				cn->cn_ctx->cx_stats.bs_bc_replies++;
		}
	}
	bc->bb_busy = false;
	if (cn->cn_state == BC_UP)
		repost_rbuf(cn, bc->bb_rbuf);
	conn_put(cn);
	return rc;
}

static void call_invalidate(struct be_conn *cn, struct be_call *ca, uint32_t remote_inv_rkey,
			    bool remote_inv);

/* The Reads are in: splice the body, RDMA_DONE, then as any reply. */
static void long_reply_done(struct be_conn *cn, struct be_call *ca)
{
	struct be_reply *r = &ca->ca_reply;
	struct iovec in = r->br_body[0];

	cn->cn_sq_used -= ca->ca_lr_nsegs;
	ca->ca_lr_nsegs = 0;
	vx->dereg_mr(ca->ca_lr_mr);
	ca->ca_lr_mr = NULL;
	if (r->br_proc == RPCRDMA_NOMSG) {
		r->br_body[0] = (struct iovec){ ca->ca_lr_buf, ca->ca_lr_len };
		r->br_nbody = 1;
		r->br_body_len = ca->ca_lr_len;
	} else {
		/* inline up to the position, the item, its pad, the rest */
		r->br_nbody = 0;
		r->br_body[r->br_nbody++] = (struct iovec){ in.iov_base, ca->ca_lr_pos };
		r->br_body[r->br_nbody++] = (struct iovec){ ca->ca_lr_buf, ca->ca_lr_len };
		if (xdr_pad(ca->ca_lr_len))
			r->br_body[r->br_nbody++] = (struct iovec){ (void *)zero_pad,
								    xdr_pad(ca->ca_lr_len) };
		r->br_body[r->br_nbody++] = (struct iovec){ (uint8_t *)in.iov_base + ca->ca_lr_pos,
							    in.iov_len - ca->ca_lr_pos };
		r->br_body_len = in.iov_len + xdr_round4(ca->ca_lr_len);
	}
	send_done(cn, ca->ca_xid);
	if (cn->cn_state == BC_DEAD)
		return;
	call_invalidate(cn, ca, ca->ca_lr_inv_rkey,
			ca->ca_lr_remote_inv && ca->ca_nreg == 1 && ca->ca_reg[0].rg_mw);
	if (cn->cn_state == BC_UP)
		pool_pump(cn->cn_pool);
}

static void on_recv(struct be_conn *cn, struct be_rbuf *rb, const struct ibv_wc *wc)
{
	struct be_pool *pool = cn->cn_pool;
	struct be_ctx *ctx = pool->po_ctx;
	struct rpcrdma_hdr *rh = &ctx->cx_rx;
	enum rpcrdma_hdr_err herr = RPCRDMA_HDR_OK;
	struct be_call *ca;
	bool ok;

	be_credits_recv_used(&cn->cn_cr);
	now(&cn->cn_last_rx);
	ok = rpcrdma_hdr_decode(rb->rb_buf, wc->byte_len, &ctx->cx_lim, rh, &herr);
	if (wc->byte_len < 16) {
		ctx->cx_stats.bs_bad_reply++;
		LOG(pool, "short message (%u bytes) dropped", wc->byte_len);
		repost_rbuf(cn, rb);
		return;
	}
	if (ok && herr == RPCRDMA_HDR_BAD_ERRCODE) {
		/* RFC 8166 4.5: an RDMA_ERROR we cannot decode is discarded. */
		ctx->cx_stats.bs_bad_reply++;
		LOG(pool, "xid %08x: RDMA_ERROR with unknown code %u dropped", rh->rh_xid, rh->rh_err);
		repost_rbuf(cn, rb);
		return;
	}
	if (ok) {
		bool chunks;

		/* The direction field first (RFC 8167 4.1): a server's CALL may
		 * reuse an XID of ours, and its credit field is a request. */
		if (be_bc_is_call(rh, rb->rb_buf, wc->byte_len, &chunks)) {
			bc_recv(cn, rb, rh, wc->byte_len, chunks);
			return;
		}
	}
	TAILQ_FOREACH(ca, &cn->cn_calls, ca_link)
		if (ca->ca_xid == rh->rh_xid && ca->ca_state == CS_POSTED)
			break;
	if (ok && rh->rh_proc != RPCRDMA_ERROR)
		be_credits_grant(&cn->cn_cr, rh->rh_credit);
	if (!ca) {
		ctx->cx_stats.bs_unknown_xid++;
		LOG(pool, "xid %08x: no such call (proc %u, %u bytes), dropped", rh->rh_xid,
		    rh->rh_proc, wc->byte_len);
		repost_rbuf(cn, rb);
		pool_pump(pool);
		return;
	}
	if (!ca->ca_ccp_abandoned)	/* else given back at the CCP timeout */
		be_credits_replied(&cn->cn_cr);
	pool->po_slots[cn->cn_slot].sl_backoff_ms = 0;	/* the connection works */
	ca->ca_reply_seen = true;
	ca->ca_rbuf = rb;
	cn->cn_refs++;
	memset(&ca->ca_reply, 0, sizeof(ca->ca_reply));
	if (!ok) {
		ctx->cx_stats.bs_bad_reply++;
		LOG(pool, "xid %08x: undecodable reply: %s", ca->ca_xid, rpcrdma_hdr_err_str(herr));
		memset(&ca->ca_reply, 0, sizeof(ca->ca_reply));
		ca->ca_reply.br_err = BE_ERR_BAD_REPLY;
	} else if (rh->rh_nreads > 0 && rh->rh_proc != RPCRDMA_ERROR &&
		   long_reply_start(cn, ca, rh, rb, wc)) {
		return;		/* goes on in long_reply_done() */
	} else if (ca->ca_reply.br_err != BE_OK || !be_reply_check(rh, &ca->ca_plan, ca->ca_wr,
								 ca->ca_rp, rb->rb_buf,
								 wc->byte_len, &ca->ca_reply)) {
		switch (ca->ca_reply.br_err) {
		case BE_ERR_VERS:
			ctx->cx_stats.bs_err_vers++;
			LOG(pool, "xid %08x: server refuses RPC-over-RDMA version 1 (ERR_VERS, it "
				  "speaks %u..%u): giving up on this server", ca->ca_xid,
			    ca->ca_reply.br_vers_low, ca->ca_reply.br_vers_high);
			pool->po_fatal = true;
			break;
		case BE_ERR_CHUNK:
			ctx->cx_stats.bs_err_chunk++;
			LOG(pool, "xid %08x: RDMA_ERROR ERR_CHUNK", ca->ca_xid);
			break;
		case BE_ERR_OVERRUN:
			ctx->cx_stats.bs_write_overrun++;
			LOG(pool, "xid %08x: chunk lengths beyond what was offered", ca->ca_xid);
			break;
		default:
			ctx->cx_stats.bs_bad_reply++;
			LOG(pool, "xid %08x: bad reply: %s", ca->ca_xid, be_err_str(ca->ca_reply.br_err));
			break;
		}
	}
	ca->ca_reply.br_xid = ca->ca_xid;
	/* Remote invalidation only counts for a call with exactly one key. */
	call_invalidate(cn, ca, wc->invalidated_rkey,
			wc_with_inv(wc) && ca->ca_nreg == 1 && ca->ca_reg[0].rg_mw);
	if (pool->po_fatal) {
		conn_fail(cn, "ERR_VERS");
		if (pool->po_event_cb)
			pool->po_event_cb(pool, BE_POOL_FATAL, pool->po_event_arg);
		return;
	}
	if (cn->cn_state == BC_UP)
		pool_pump(pool);
}

/*
 * A send-queue completion on a DEAD connection (draining, success or flush
 * error): give back what this one WR held, once -- its send buffer, its
 * send-queue room -- and nothing else.  Calls are settled by conn_reap()
 * alone, so a completion never settles a call a second time.
 */
static void wc_release(struct be_conn *cn, unsigned tag, struct be_call *ca, uint64_t wr_id)
{
	switch (tag) {
	case WR_SEND:
		ca->ca_send_done = true;
		cn->cn_sq_used -= ca->ca_sq_binds;
		ca->ca_sq_binds = 0;
		call_put_sbuf(ca);
		break;
	case WR_DONE:
		cn->cn_sfree[cn->cn_nsfree++] = (unsigned)(wr_id >> 48);
		cn->cn_sq_used--;
		break;
	case WR_INV:
		ca->ca_inv_pending = 0;
		cn->cn_sq_used -= ca->ca_sq_inv;
		ca->ca_sq_inv = 0;
		break;
	case WR_READ:
		cn->cn_reads_out--;
		break;
	default:
		break;	/* receives: the connection's own memory; binds: unsignaled */
	}
}

static bool wr_signaled(unsigned tag)
{
	return tag == WR_SEND || tag == WR_DONE || tag == WR_INV || tag == WR_READ;
}

static void on_wc(struct be_conn *cn, const struct ibv_wc *wc)
{
	struct be_ctx *ctx = cn->cn_pool->po_ctx;
	void *p = (void *)(uintptr_t)(wc->wr_id & WR_PTR_MASK);
	unsigned tag = wc->wr_id & WR_TAG_MASK;
	struct be_call *ca = p;

	if (wr_signaled(tag) && cn->cn_sig_out > 0)
		cn->cn_sig_out--;
	if (wc->status != IBV_WC_SUCCESS || cn->cn_state == BC_DEAD) {
		if (wc->status == IBV_WC_WR_FLUSH_ERR) {
			ctx->cx_stats.bs_flushed++;
		} else if (wc->status != IBV_WC_SUCCESS) {
			ctx->cx_stats.bs_wc_errors++;
			LOG(cn->cn_pool, "completion error: %s (opcode %d, tag %u, vendor %u)",
			    ibv_wc_status_str(wc->status), wc->opcode, tag, wc->vendor_err);
		}
		wc_release(cn, tag, ca, wc->wr_id);
		if (cn->cn_state != BC_DEAD)
			conn_fail(cn, "completion error");
		else if (cn->cn_draining && cn->cn_sig_out == 0)
			event_active(cn->cn_reap_ev, 0, 0);	/* drained */
		return;
	}
	switch (tag) {
	case WR_RECV:
		on_recv(cn, p, wc);
		break;
	case WR_SEND:
		ca->ca_send_done = true;
		cn->cn_sq_used -= ca->ca_sq_binds;
		ca->ca_sq_binds = 0;
		call_put_sbuf(ca);
		call_try_complete(ca);
		pool_pump(cn->cn_pool);
		break;
	case WR_READ:
		cn->cn_reads_out--;
		if (++ca->ca_lr_done == ca->ca_lr_nsegs)
			long_reply_done(cn, ca);
		reads_pump(cn);
		break;
	case WR_DONE:
		cn->cn_sfree[cn->cn_nsfree++] = (unsigned)(wc->wr_id >> 48);
		cn->cn_sq_used--;
		pool_pump(cn->cn_pool);
		break;
	case WR_INV:
		ca->ca_inv_pending = 0;
		cn->cn_sq_used -= ca->ca_sq_inv;
		ca->ca_sq_inv = 0;
		call_try_complete(ca);
		break;
	default:
		/* Binds are unsignaled: only errors come here (handled above). */
		break;
	}
}

static void on_cq(evutil_socket_t fd, short what, void *arg)
{
	struct be_conn *cn = arg;
	struct ibv_cq *cq;
	void *cqctx;
	struct ibv_wc wc[16];
	int n, i;

	(void)fd;
	(void)what;
	if (vx->get_cq_event(cn->cn_cc, &cq, &cqctx) == 0) {
		vx->ack_cq_events(cq, 1);
		vx->req_notify_cq(cq, 0);
	}
	/* Poll to empty after re-arming: nothing is left behind. */
	/* Draining: completions keep coming until the last signaled WR. */
	while ((cn->cn_state != BC_DEAD || cn->cn_draining) &&
	       (n = vx->poll_cq(cn->cn_cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++)
			on_wc(cn, &wc[i]);
	}
}

/* ------------------------------------------------------------------------
 * Connections
 * ------------------------------------------------------------------------ */
static void slot_schedule(struct be_pool *pool, unsigned slot);

static void conn_free_mem(struct be_conn *cn)
{
	struct be_ctx *ctx = cn->cn_ctx;

	if (cn->cn_mr)
		vx->dereg_mr(cn->cn_mr);
	cn->cn_mr = NULL;
	free(cn->cn_mem);
	free(cn->cn_rbufs);
	free(cn->cn_sfree);
	dev_put(ctx, cn->cn_devidx);
	cn->cn_devidx = -1;
	free(cn);
}

static void conn_put(struct be_conn *cn)
{
	if (--cn->cn_refs == 0)
		conn_free_mem(cn);
}

static void closing_finish(struct be_closing *cl)
{
	LIST_REMOVE(cl, cl_link);
	event_free(cl->cl_ev);
	event_free(cl->cl_timer);
	vx->destroy_id(cl->cl_id);
	vx->destroy_event_channel(cl->cl_ch);
	free(cl);
}

static void closing_cm(evutil_socket_t fd, short what, void *arg)
{
	struct be_closing *cl = arg;
	struct rdma_cm_event *ev;
	bool done = false;

	(void)fd;
	if (what & EV_TIMEOUT) {
		LOG(NULL, "no DISCONNECTED 60 s after rdma_disconnect: destroying anyway");
		done = true;
	}
	while (!done && vx->get_cm_event(cl->cl_ch, &ev) == 0) {
		enum rdma_cm_event_type t = ev->event;

		vx->ack_cm_event(ev);
		if (t == RDMA_CM_EVENT_DISCONNECTED || t == RDMA_CM_EVENT_TIMEWAIT_EXIT ||
		    t == RDMA_CM_EVENT_DEVICE_REMOVAL)
			done = true;
	}
	if (done)
		closing_finish(cl);
}

/* Send the DREQ and wait for its end from the event loop. */
static int closing_start(struct be_ctx *ctx, struct rdma_event_channel *ch, struct rdma_cm_id *id)
{
	struct be_closing *cl = calloc(1, sizeof(*cl));
	struct timeval tv = ms_tv(60000);

	if (!cl)
		return -ENOMEM;
	cl->cl_ctx = ctx;
	cl->cl_ch = ch;
	cl->cl_id = id;
	cl->cl_ev = event_new(ctx->cx_base, ch->fd, EV_READ | EV_PERSIST, closing_cm, cl);
	cl->cl_timer = evtimer_new(ctx->cx_base, closing_cm, cl);
	if (!cl->cl_ev || !cl->cl_timer || event_add(cl->cl_ev, NULL) || evtimer_add(cl->cl_timer, &tv)) {
		if (cl->cl_ev)
			event_free(cl->cl_ev);
		if (cl->cl_timer)
			event_free(cl->cl_timer);
		free(cl);
		return -ENOMEM;
	}
	LIST_INSERT_HEAD(&ctx->cx_closing, cl, cl_link);
	if (vx->disconnect(id))
		event_active(cl->cl_timer, EV_TIMEOUT, 0);	/* nothing to wait for */
	return 0;
}

/* Tear down what the connection holds; calls settled once each (see the
 * opening essay).  Runs from the event loop, never inside a CM or CQ
 * callback of the same connection. */
static void conn_reap(evutil_socket_t fd, short what, void *arg)
{
	struct be_conn *cn = arg;
	struct be_pool *pool = cn->cn_pool;
	struct be_call *ca, *tmp;
	struct be_call_list requeue = TAILQ_HEAD_INITIALIZER(requeue);
	struct be_mw *mw;
	bool was_up = cn->cn_was_up;

	(void)fd;
	(void)what;
	if (cn->cn_qp) {
		struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

		/* Stop the QP before anything else: no WR is processed any more. */
		vx->modify_qp(cn->cn_qp, &qa, IBV_QP_STATE);
	}
	for (ca = TAILQ_FIRST(&cn->cn_calls); ca; ca = tmp) {
		tmp = TAILQ_NEXT(ca, ca_link);
		TAILQ_REMOVE(&cn->cn_calls, ca, ca_link);
		pool->po_ninflight--;
		call_put_sbuf(ca);
		call_dereg_mrs(ca);
		ca->ca_inv_pending = 0;
		ca->ca_send_done = true;
		if (ca->ca_state == CS_INVALIDATING) {
			/* The reply was good; windows died with the QP. */
			TAILQ_INSERT_HEAD(&cn->cn_calls, ca, ca_link);
			pool->po_ninflight++;
			call_try_complete(ca);
			continue;
		}
		if (ca->ca_state == CS_READING) {
			/* The reply is lost with the connection: ask again. */
			if (ca->ca_lr_waiting)
				TAILQ_REMOVE(&cn->cn_rdwait, ca, ca_rd_link);
			ca->ca_lr_waiting = false;
			call_lr_free(ca);
			ca->ca_rbuf = NULL;
			cn->cn_refs--;		/* the slot's reference remains */
		}
		call_free_mws(ca);
		ca->ca_conn = NULL;
		if (ca->ca_cancelled || ca->ca_keepalive || ca->ca_ccp) {
			call_free(ca);
			continue;
		}
		call_set_state(ca, CS_QUEUED);
		if (ca->ca_sends >= BE_MAX_SENDS) {
			/* This call breaks every connection it goes on. */
			LOG(pool, "xid %08x: lost %u connections, failed", ca->ca_xid, ca->ca_sends);
			call_fail_queued(ca, BE_ERR_RETRIES);
			continue;
		}
		TAILQ_INSERT_TAIL(&requeue, ca, ca_link);
		pool->po_ctx->cx_stats.bs_resent++;
	}
	cn->cn_ka = NULL;
	cn->cn_ccp_call = NULL;
	cn->cn_draining = false;
	/* Re-sent first, in their original order. */
	while ((ca = TAILQ_LAST(&requeue, be_call_list)) != NULL) {
		TAILQ_REMOVE(&requeue, ca, ca_link);
		TAILQ_INSERT_HEAD(&pool->po_queue, ca, ca_link);
		pool->po_nqueued++;
	}
	/* Windows first: a bound type 2 window holds a reference on its QP,
	 * and rxe's destroy QP waits ~50 s for it (measured). */
	while ((mw = cn->cn_mwfree) != NULL) {
		cn->cn_mwfree = mw->mw_next;
		vx->dealloc_mw(mw->mw_mw);
		free(mw);
	}
	if (cn->cn_qp) {
		vx->destroy_qp(cn->cn_id);
		cn->cn_qp = NULL;
	}
	/* No WR of this connection can complete or touch memory now. */
	if (cn->cn_cq_ev)
		event_free(cn->cn_cq_ev);
	cn->cn_cq_ev = NULL;
	if (cn->cn_cq)
		vx->destroy_cq(cn->cn_cq);
	cn->cn_cq = NULL;
	if (cn->cn_cc)
		vx->destroy_comp_channel(cn->cn_cc);
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
	if (cn->cn_id && cn->cn_was_up && !cn->cn_cm_disconnected && !pool->po_freeing &&
	    closing_start(cn->cn_ctx, cn->cn_ch, cn->cn_id) == 0) {
		/* the id and its channel now belong to a be_closing */
	} else {
		if (cn->cn_id)
			vx->destroy_id(cn->cn_id);
		if (cn->cn_ch)
			vx->destroy_event_channel(cn->cn_ch);
	}
	cn->cn_id = NULL;
	cn->cn_ch = NULL;
	event_free(cn->cn_reap_ev);
	cn->cn_reap_ev = NULL;
	if (pool->po_slots[cn->cn_slot].sl_conn == cn) {
		pool->po_slots[cn->cn_slot].sl_conn = NULL;
		if (!pool->po_fatal)
			slot_schedule(pool, cn->cn_slot);
	}
	conn_put(cn);	/* the slot's reference */
	if (was_up && pool->po_event_cb && !pool->po_freeing)
		pool->po_event_cb(pool, BE_POOL_DOWN, pool->po_event_arg);
	pool_pump(pool);
}

static void conn_drain_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct be_conn *cn = arg;

	(void)fd;
	(void)what;
	if (!cn->cn_draining)
		return;
	cn->cn_ctx->cx_stats.bs_drain_timeouts++;
	LOG(cn->cn_pool, "connection %u: %u signaled WRs not completed %u ms after close: "
			 "destroying anyway", cn->cn_slot, cn->cn_sig_out, cn->cn_ctx->cx_cfg.bc_drain_ms);
	cn->cn_draining = false;
	event_active(cn->cn_reap_ev, 0, 0);
}

/*
 * The connection is done: DEAD at once (nothing more is posted), then the
 * reap -- after a drain when signaled WRs are outstanding, so that each
 * completes (or is flushed) and gives back what it holds exactly once
 * before the QP goes.  graceful: the QP is left working, so Sends already
 * posted (an RDMA_DONE of the last loop turn) still leave; otherwise it is
 * moved to ERR first and the drain collects flush completions.  Bounded by
 * bc_drain_ms; driven by the CQ events of the event loop.
 */
static void conn_close(struct be_conn *cn, const char *why, bool graceful)
{
	struct be_ctx *ctx = cn->cn_pool->po_ctx;
	struct timeval tv = ms_tv(ctx->cx_cfg.bc_drain_ms);

	if (cn->cn_state == BC_DEAD)
		return;
	LOG(cn->cn_pool, "connection %u %s: %s", cn->cn_slot,
	    cn->cn_state == BC_UP ? "lost" : "failed", why);
	if (cn->cn_state == BC_UP)
		ctx->cx_stats.bs_disconnects++;
	else
		ctx->cx_stats.bs_rejects++;
	cn->cn_state = BC_DEAD;
	if (cn->cn_qp && cn->cn_cq_ev && cn->cn_sig_out > 0 && ctx->cx_cfg.bc_drain_ms &&
	    !cn->cn_pool->po_freeing) {
		if (!graceful) {
			struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

			vx->modify_qp(cn->cn_qp, &qa, IBV_QP_STATE);
		}
		cn->cn_draining = true;
		evtimer_add(cn->cn_drain_timer, &tv);
		return;
	}
	event_active(cn->cn_reap_ev, 0, 0);
}

static void conn_fail(struct be_conn *cn, const char *why)
{
	conn_close(cn, why, false);
}

/* be_pool_free(): wait for the signaled WRs by polling the CQ (bounded):
 * the caller expects every call settled when it returns. */
static void conn_drain_sync(struct be_conn *cn)
{
	const struct be_config *cfg = &cn->cn_ctx->cx_cfg;
	struct timespec t0;
	struct ibv_wc wc[16];
	int n, i;

	now(&t0);
	while (cn->cn_sig_out > 0 && cn->cn_cq) {
		n = vx->poll_cq(cn->cn_cq, 16, wc);
		if (n < 0)
			break;
		for (i = 0; i < n; i++)
			on_wc(cn, &wc[i]);
		if (n > 0)
			continue;
		if (ms_since(&t0) >= (long)cfg->bc_drain_ms) {
			cn->cn_ctx->cx_stats.bs_drain_timeouts++;
			LOG(cn->cn_pool, "connection %u: %u signaled WRs not completed in %u ms",
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
	struct be_ctx *ctx = pool->po_ctx;
	const struct be_config *cfg = &ctx->cx_cfg;
	struct ibv_qp_init_attr qa;
	struct ibv_device_attr *da;
	unsigned i, cqe, nbinds;
	int d;

	d = dev_get(ctx, cn->cn_id->verbs);
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

	cn->cn_cc = vx->create_comp_channel(cn->cn_id->verbs);
	if (!cn->cn_cc || set_nonblock(cn->cn_cc->fd) < 0)
		return -EIO;
	cn->cn_cq = vx->create_cq(cn->cn_id->verbs, (int)cqe, cn, cn->cn_cc, 0);
	if (!cn->cn_cq || vx->req_notify_cq(cn->cn_cq, 0))
		return -EIO;
	cn->cn_cq_ev = event_new(ctx->cx_base, cn->cn_cc->fd, EV_READ | EV_PERSIST, on_cq, cn);
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
	if (vx->create_qp(cn->cn_id, ctx->cx_dev[d]->dv_pd, &qa)) {
		LOG(pool, "vx->create_qp(send %u, recv %u): %s", qa.cap.max_send_wr,
		    qa.cap.max_recv_wr, strerror(errno));
		return -errno;
	}
	cn->cn_qp = cn->cn_id->qp;

	cn->cn_memlen = (size_t)cn->cn_nrecv * cfg->bc_inline_recv +
			(size_t)cn->cn_nsend * cfg->bc_inline_send;
	if (posix_memalign((void **)&cn->cn_mem, 4096, cn->cn_memlen))
		return -ENOMEM;
	memset(cn->cn_mem, 0, cn->cn_memlen);
	cn->cn_mr = vx->reg_mr(ctx->cx_dev[d]->dv_pd, cn->cn_mem, cn->cn_memlen,
			       IBV_ACCESS_LOCAL_WRITE);
	cn->cn_rbufs = aligned_alloc(16, cn->cn_nrecv * sizeof(struct be_rbuf));
	cn->cn_sfree = calloc(cn->cn_nsend, sizeof(unsigned));
	if (!cn->cn_mr || !cn->cn_rbufs || !cn->cn_sfree)
		return -ENOMEM;
	for (i = 0; i < cn->cn_nsend; i++)
		cn->cn_sfree[i] = cn->cn_nsend - 1 - i;
	cn->cn_nsfree = cn->cn_nsend;
	be_credits_init(&cn->cn_cr, cfg->bc_credits, BE_BC_RESERVE);
	for (i = 0; i < cn->cn_nrecv; i++) {
		cn->cn_rbufs[i].rb_conn = cn;
		cn->cn_rbufs[i].rb_buf = cn->cn_mem + (size_t)i * cfg->bc_inline_recv;
		repost_rbuf(cn, &cn->cn_rbufs[i]);
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
	const struct be_config *cfg = &cn->cn_pool->po_ctx->cx_cfg;
	struct rdma_conn_param cp;
	uint8_t pd[RPCRDMA_PD_LEN];
	int rc;

	rc = conn_setup_qp(cn);
	if (rc < 0) {
		conn_fail(cn, strerror(-rc));
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
	if (vx->connect(cn->cn_id, &cp)) {
		conn_fail(cn, "rdma_connect failed");
		return;
	}
	cn->cn_state = BC_CONNECTING;
}

static void keepalive_cb(struct be_call *ca, const struct be_reply *r, void *arg)
{
	(void)r;
	(void)arg;
	be_call_release(ca);
}

static void conn_timer(evutil_socket_t fd, short what, void *arg)
{
	struct be_conn *cn = arg;
	struct be_pool *pool = cn->cn_pool;
	const struct be_config *cfg = &pool->po_ctx->cx_cfg;
	struct be_call_desc d;
	struct iovec iov;
	uint8_t msg[40];
	struct be_call *ca;
	struct timeval tv;

	(void)fd;
	(void)what;
	if (cn->cn_state != BC_UP) {
		conn_fail(cn, "connect timeout");
		return;
	}
	if (!cfg->bc_keepalive_ms)
		return;
	tv = ms_tv(cfg->bc_keepalive_ms);
	evtimer_add(cn->cn_timer, &tv);
	if (cn->cn_ka) {
		if (ms_since(&cn->cn_ka->ca_sent_at) >= (long)cfg->bc_keepalive_ms)
			conn_fail(cn, "keepalive NULL unanswered");
		return;
	}
	if (ms_since(&cn->cn_last_rx) < (long)cfg->bc_keepalive_ms || !be_credits_can_send(&cn->cn_cr))
		return;
	/* NULL call: xid, CALL, rpcvers 2, prog, vers, proc 0, AUTH_NONE x2 */
	memset(msg, 0, sizeof(msg));
	pool->po_ka_xid = (pool->po_ka_xid + 1) | 0x80000000u;
	chk_put_be32(msg, pool->po_ka_xid);
	chk_put_be32(msg + 8, RPC_VERS);
	chk_put_be32(msg + 12, cfg->bc_keepalive_prog);
	chk_put_be32(msg + 16, cfg->bc_keepalive_vers);
	iov = (struct iovec){ msg, sizeof(msg) };
	d = (struct be_call_desc){ .cd_xid = pool->po_ka_xid, .cd_msg = &iov, .cd_msg_niov = 1 };
	if (xid_busy(pool, d.cd_xid))
		return;
	ca = call_new(pool, &d, keepalive_cb, NULL);
	if (!ca)
		return;
	memcpy(ca->ca_ka_msg, msg, sizeof(msg));
	ca->ca_msg[0].iov_base = ca->ca_ka_msg;
	ca->ca_keepalive = true;
	if (call_post(cn, ca) < 0) {
		call_free(ca);
		return;
	}
	cn->cn_ka = ca;
	pool->po_ctx->cx_stats.bs_keepalives++;
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
		LOG(pool, "connection %u: CONF_RDMA answered maxcall_sendsize %u align %u "
			  "maxrdmaread %u: inline send %u -> %u, Read depth %u", cn->cn_slot,
		    rep->cp_maxcall_sendsize, rep->cp_align, rep->cp_maxrdmaread, old_send,
		    cn->cn_send_thresh, cn->cn_read_depth);
	} else {
		cn->cn_ccp = BE_CCP_FALLBACK;
		ctx->cx_stats.bs_ccp_fallback++;
		if (!pool->po_ccp_warned)	/* once per pool: the server will not change */
			LOG(pool, "connection %u: CONF_RDMA %s: server does not speak CCP, keeping "
				  "RFC 8797 values (inline send %u, Read depth %u)", cn->cn_slot,
			    be_ccp_result_str(res), cn->cn_send_thresh, cn->cn_read_depth);
		pool->po_ccp_warned = true;
	}
	if (pool->po_event_cb)
		pool->po_event_cb(pool, BE_POOL_UP, pool->po_event_arg);
	pool_pump(pool);
}

static void ccp_cb(struct be_call *ca, const struct be_reply *r, void *arg)
{
	struct be_conn *cn = arg;
	struct ccp_reply rep;
	enum be_ccp_result res;

	if (cn->cn_ccp_call == ca)
		cn->cn_ccp_call = NULL;
	if (cn->cn_state == BC_UP && cn->cn_ccp == BE_CCP_PENDING) {
		res = r->br_err != BE_OK ? BE_CCP_RES_GARBAGE
					 : be_ccp_reply_parse(r->br_body, r->br_nbody, ca->ca_xid, &rep);
		ccp_end(cn, res, &rep);
	}
	be_call_release(ca);
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
		cn->cn_ccp_call->ca_ccp_abandoned = true;
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
	struct iovec iov;
	uint8_t msg[BE_CCP_CALL_LEN];
	struct be_call *ca;
	size_t len;

	do
		pool->po_ka_xid = (pool->po_ka_xid + 1) | 0x80000000u;
	while (xid_busy(pool, pool->po_ka_xid));
	len = be_ccp_call_encode(pool->po_ka_xid, &req, msg);
	iov = (struct iovec){ msg, len };
	d = (struct be_call_desc){ .cd_xid = pool->po_ka_xid, .cd_msg = &iov, .cd_msg_niov = 1 };
	ca = len ? call_new(pool, &d, ccp_cb, cn) : NULL;
	if (!ca)
		return false;
	memcpy(ca->ca_ka_msg, msg, len);
	ca->ca_msg[0].iov_base = ca->ca_ka_msg;
	ca->ca_ccp = true;
	if (call_post(cn, ca) < 0) {
		call_free(ca);
		return false;
	}
	cn->cn_ccp_call = ca;
	cn->cn_ccp = BE_CCP_PENDING;
	evtimer_add(cn->cn_ccp_timer, &tv);
	return true;
}

static void conn_established(struct be_conn *cn, const void *pdata, unsigned pdlen)
{
	struct be_pool *pool = cn->cn_pool;
	const struct be_config *cfg = &pool->po_ctx->cx_cfg;
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
	pool->po_ctx->cx_stats.bs_connects++;
	LOG(pool, "connection %u up: peer private data %s (send %u, recv %u, R %d), inline "
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
	if (pool->po_event_cb)
		pool->po_event_cb(pool, BE_POOL_UP, pool->po_event_arg);
	pool_pump(pool);
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
	while (cn->cn_state != BC_DEAD && vx->get_cm_event(cn->cn_ch, &ev) == 0) {
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
		vx->ack_cm_event(ev);
		switch (type) {
		case RDMA_CM_EVENT_ADDR_RESOLVED:
			if (vx->resolve_route(cn->cn_id, (int)cn->cn_pool->po_ctx->cx_cfg.bc_connect_timeout_ms))
				conn_fail(cn, "rdma_resolve_route failed");
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
			LOG(cn->cn_pool, "connection %u rejected: status %d, private data %u "
					 "bytes: %s", cn->cn_slot, status, pdlen, hex);
			conn_fail(cn, "REJECTED");
			break;
		}
		case RDMA_CM_EVENT_ADDR_ERROR:
		case RDMA_CM_EVENT_ROUTE_ERROR:
		case RDMA_CM_EVENT_CONNECT_ERROR:
		case RDMA_CM_EVENT_UNREACHABLE:
			LOG(cn->cn_pool, "%s status %d", rdma_event_str(type), status);
			conn_fail(cn, rdma_event_str(type));
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
			cn->cn_cm_disconnected = true;
			conn_fail(cn, rdma_event_str(type));
			break;
		case RDMA_CM_EVENT_DEVICE_REMOVAL:
			cn->cn_cm_disconnected = true;	/* the id must go now */
			conn_fail(cn, rdma_event_str(type));
			break;
		case RDMA_CM_EVENT_ADDR_CHANGE:
			conn_fail(cn, rdma_event_str(type));
			break;
		case RDMA_CM_EVENT_TIMEWAIT_EXIT:
			break;
		default:
			LOG(cn->cn_pool, "ignored CM event %s status %d", rdma_event_str(type), status);
			break;
		}
		pdlen = 0;
	}
}

static void conn_start(struct be_pool *pool, unsigned slot)
{
	struct be_ctx *ctx = pool->po_ctx;
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
	pool->po_slots[slot].sl_conn = cn;
	cn->cn_reap_ev = event_new(ctx->cx_base, -1, 0, conn_reap, cn);
	cn->cn_timer = evtimer_new(ctx->cx_base, conn_timer, cn);
	cn->cn_ccp_timer = evtimer_new(ctx->cx_base, ccp_timeout, cn);
	cn->cn_drain_timer = evtimer_new(ctx->cx_base, conn_drain_timeout, cn);
	if (!cn->cn_reap_ev || !cn->cn_timer || !cn->cn_ccp_timer || !cn->cn_drain_timer) {
		LOG(pool, "out of memory");
		abort();
	}
	cn->cn_ch = vx->create_event_channel();
	if (!cn->cn_ch || set_nonblock(cn->cn_ch->fd) < 0 ||
	    vx->create_id(cn->cn_ch, &cn->cn_id, cn, RDMA_PS_TCP)) {
		conn_fail(cn, "rdma_create_event_channel/id failed (no RDMA device?)");
		return;
	}
	cn->cn_cm_ev = event_new(ctx->cx_base, cn->cn_ch->fd, EV_READ | EV_PERSIST, on_cm, cn);
	if (!cn->cn_cm_ev || event_add(cn->cn_cm_ev, NULL)) {
		conn_fail(cn, "event_add");
		return;
	}
	tv = ms_tv(ctx->cx_cfg.bc_connect_timeout_ms);
	evtimer_add(cn->cn_timer, &tv);
	if (vx->resolve_addr(cn->cn_id, NULL, (struct sockaddr *)&pool->po_addr,
			      (int)ctx->cx_cfg.bc_connect_timeout_ms))
		conn_fail(cn, "rdma_resolve_addr failed");
}

static void slot_retry(evutil_socket_t fd, short what, void *arg)
{
	struct be_slot *sl = arg;

	(void)fd;
	(void)what;
	conn_start(sl->sl_pool, sl->sl_idx);
}

static void slot_schedule(struct be_pool *pool, unsigned slot)
{
	const struct be_config *cfg = &pool->po_ctx->cx_cfg;
	struct be_slot *sl = &pool->po_slots[slot];
	struct timeval tv;

	sl->sl_backoff_ms = sl->sl_backoff_ms ? sl->sl_backoff_ms * 2 : cfg->bc_retry_min_ms;
	if (sl->sl_backoff_ms > cfg->bc_retry_max_ms)
		sl->sl_backoff_ms = cfg->bc_retry_max_ms;
	tv = ms_tv(sl->sl_backoff_ms);
	evtimer_add(sl->sl_retry, &tv);
}

/* ------------------------------------------------------------------------
 * Pools
 * ------------------------------------------------------------------------ */
struct be_pool *be_pool_new(struct be_ctx *ctx, const struct sockaddr *addr, socklen_t addrlen,
			    be_pool_event_fn *event_cb, void *arg)
{
	struct be_pool *pool;
	unsigned k;
	char host[INET6_ADDRSTRLEN] = "?";

	if (!addr || addrlen > sizeof(pool->po_addr)) {
		errno = EINVAL;
		return NULL;
	}
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	pool->po_ctx = ctx;
	memcpy(&pool->po_addr, addr, addrlen);
	pool->po_addrlen = addrlen;
	pool->po_event_cb = event_cb;
	pool->po_event_arg = arg;
	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)addr;

		inet_ntop(AF_INET, &s->sin_addr, host, sizeof(host));
		snprintf(pool->po_name, sizeof(pool->po_name), "%s:%u", host, ntohs(s->sin_port));
	} else if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)addr;

		inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
		snprintf(pool->po_name, sizeof(pool->po_name), "[%s]:%u", host, ntohs(s->sin6_port));
	}
	TAILQ_INIT(&pool->po_queue);
	TAILQ_INIT(&pool->po_failed);
	pool->po_fail_ev = event_new(ctx->cx_base, -1, 0, pool_failed_cb, pool);
	pool->po_room_ev = event_new(ctx->cx_base, -1, 0, pool_room_cb, pool);
	if (!pool->po_fail_ev || !pool->po_room_ev) {
		if (pool->po_fail_ev)
			event_free(pool->po_fail_ev);
		if (pool->po_room_ev)
			event_free(pool->po_room_ev);
		free(pool);
		return NULL;
	}
	pool->po_nslots = ctx->cx_cfg.bc_conns;
	pool->po_slots = calloc(pool->po_nslots, sizeof(struct be_slot));
	if (!pool->po_slots) {
		event_free(pool->po_fail_ev);
		event_free(pool->po_room_ev);
		free(pool);
		return NULL;
	}
	for (k = 0; k < pool->po_nslots; k++) {
		struct be_slot *sl = &pool->po_slots[k];

		sl->sl_pool = pool;
		sl->sl_idx = k;
		sl->sl_retry = evtimer_new(ctx->cx_base, slot_retry, sl);
		if (!sl->sl_retry) {
			LOG(pool, "out of memory");
			abort();
		}
	}
	pool->po_ka_xid = (uint32_t)random();
	LIST_INSERT_HEAD(&ctx->cx_pools, pool, po_link);
	for (k = 0; k < pool->po_nslots; k++)
		conn_start(pool, k);
	return pool;
}

/* Settle everything at once: no reconnect, queued calls fail. */
void be_pool_free(struct be_pool *pool)
{
	struct be_call *ca;
	unsigned k;

	if (!pool)
		return;
	pool->po_fatal = true;
	pool->po_freeing = true;
	for (k = 0; k < pool->po_nslots; k++) {
		struct be_slot *sl = &pool->po_slots[k];
		struct be_conn *cn = sl->sl_conn;

		if (cn) {
			/* Graceful: Sends already posted leave before the QP goes. */
			if (cn->cn_state == BC_UP || cn->cn_draining) {
				cn->cn_state = BC_DEAD;
				conn_drain_sync(cn);
			}
			cn->cn_state = BC_DEAD;
			conn_reap(-1, 0, cn);
		}
		event_free(sl->sl_retry);
	}
	while ((ca = TAILQ_FIRST(&pool->po_queue)) != NULL) {
		TAILQ_REMOVE(&pool->po_queue, ca, ca_link);
		pool->po_nqueued--;
		call_fail_queued(ca, BE_ERR_SHUTDOWN);
	}
	pool_failed_cb(-1, 0, pool);
	event_free(pool->po_fail_ev);
	event_free(pool->po_room_ev);
	LIST_REMOVE(pool, po_link);
	free(pool->po_slots);
	free(pool);
}

void be_ctx_free(struct be_ctx *ctx)
{
	struct be_pool *pool;
	struct be_region *rg;
	struct be_call *ca;
	int d;

	if (!ctx)
		return;
	while ((pool = LIST_FIRST(&ctx->cx_pools)) != NULL)
		be_pool_free(pool);
	while ((ca = ctx->cx_call_cache) != NULL) {
		ctx->cx_call_cache = ca->ca_cache_next;
		free(ca);
	}
	while (!LIST_EMPTY(&ctx->cx_closing))
		closing_finish(LIST_FIRST(&ctx->cx_closing));
	while ((rg = LIST_FIRST(&ctx->cx_regions)) != NULL)
		be_region_unregister(rg);
	for (d = 0; d < BE_MAX_DEVS; d++) {
		if (ctx->cx_dev[d]) {
			/* still referenced by connections whose replies are held */
			LOG(NULL, "device slot %d still in use at exit", d);
		}
	}
	free(ctx);
}

int be_pool_conn_info(const struct be_pool *pool, unsigned idx, struct be_conn_info *ci)
{
	const struct be_conn *cn;

	memset(ci, 0, sizeof(*ci));
	if (idx >= pool->po_nslots)
		return -EINVAL;
	cn = pool->po_slots[idx].sl_conn;
	if (!cn || cn->cn_state != BC_UP)
		return -ENOTCONN;
	ci->ci_up = true;
	ci->ci_credits = cn->cn_cr.cr_grant;
	ci->ci_inflight = cn->cn_cr.cr_inflight;
	ci->ci_send_threshold = cn->cn_send_thresh;
	ci->ci_recv_threshold = cn->cn_recv_thresh;
	ci->ci_peer_pd = cn->cn_peer_pd;
	ci->ci_peer = cn->cn_peer;
	memcpy(ci->ci_peer_raw, cn->cn_peer_raw, sizeof(ci->ci_peer_raw));
	ci->ci_peer_raw_len = cn->cn_peer_raw_len;
	ci->ci_recvs_posted = cn->cn_cr.cr_recvs;
	ci->ci_responder_resources = cn->cn_rr;
	ci->ci_initiator_depth = cn->cn_id_depth;
	ci->ci_ccp = cn->cn_ccp;
	ci->ci_read_depth = cn->cn_read_depth;
	return 0;
}

void be_pool_inline_thresholds(const struct be_pool *pool, uint32_t *send, uint32_t *recv)
{
	uint32_t ms = UINT32_MAX, mr = UINT32_MAX;
	unsigned k;

	for (k = 0; k < pool->po_nslots; k++) {
		const struct be_conn *cn = pool->po_slots[k].sl_conn;

		if (!cn || cn->cn_state != BC_UP)
			continue;
		if (cn->cn_send_thresh < ms)
			ms = cn->cn_send_thresh;
		if (cn->cn_recv_thresh < mr)
			mr = cn->cn_recv_thresh;
	}
	*send = ms == UINT32_MAX ? RPCRDMA_PD_DEFAULT_SIZE : ms;
	*recv = mr == UINT32_MAX ? RPCRDMA_PD_DEFAULT_SIZE : mr;
}

unsigned be_pool_queued(const struct be_pool *pool)
{
	return pool->po_nqueued;
}

unsigned be_pool_inflight(const struct be_pool *pool)
{
	return pool->po_ninflight;
}

bool be_pool_up(const struct be_pool *pool)
{
	unsigned k;

	for (k = 0; k < pool->po_nslots; k++)
		if (pool->po_slots[k].sl_conn && pool->po_slots[k].sl_conn->cn_state == BC_UP &&
		    pool->po_slots[k].sl_conn->cn_ccp != BE_CCP_PENDING)
			return true;
	return false;
}

void be_pool_conn_drop(struct be_pool *pool, unsigned idx)
{
	if (idx < pool->po_nslots && pool->po_slots[idx].sl_conn)
		conn_close(pool->po_slots[idx].sl_conn, "dropped on request", true);
}
