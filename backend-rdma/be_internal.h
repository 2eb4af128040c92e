/* SPDX-License-Identifier: MIT */
/*
 * This file contains the private structures and functions shared by the
 * files of backend-rdma (be_*.c), and the verbs seam: every rdma_cm and
 * verbs call of the backend goes through struct be_verbs, so that host unit
 * tests can plug in a fake device.  Only backend-rdma and its unit tests
 * include it.
 *
 * The backend is the verbs side of the RPC-over-RDMA requester:
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
 * A call is the caller's struct be_req (backend.h: its state, the
 * descriptor's arrays).  Each time it is posted it takes a struct be_call
 * from its connection's array (cn_slots, one per receive buffer plus
 * BE_SEND_EXTRA: memory grows with credits, not with calls) and keeps it
 * until be_call_release().  A post goes through these states, changed
 * only by be_call_set_state():
 *
 *   FREE         on the connection's free list (cn_sfree_calls)
 *   POSTED       memory registered (MW binds posted), Send posted; waits
 *                for the reply
 *   READING      long reply: RDMA Reads posted
 *   INVALIDATING reply received and checked; LOCAL_INV posted for each
 *                window the server did not invalidate itself
 *   DONE         callback made; the caller holds the receive buffer until
 *                be_call_release()
 *
 * The callback fires only when the reply was checked and every window of
 * the call is invalidated (or every per-call MR deregistered): then no
 * remote key of the call is left and no WR refers to the caller's memory
 * (the Send's only buffer is the connection's send buffer, which the
 * connection's send ring keeps until the Send is known complete).
 *
 * Send ring: the Sends of a connection (calls, RDMA_DONE, backchannel
 * replies) in posting order, each holding its send buffer and its
 * send-queue room.  Most call Sends are unsignaled; a completion of a
 * later WR on the same RC send queue proves them complete (send-queue
 * WRs complete in order), so a signaled Send's completion, a LOCAL_INV
 * chain's, or any flush releases every Send posted before it (the Linux
 * client's rpcrdma_sendctx ring does the same).  be_send_signal() says
 * which Sends are signaled, so that those not yet covered by a signaled
 * WR can never hold what the next post needs.
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
 * ADDR_CHANGE, ERR_VERS, keepalive timeout) marks the
 * connection DEAD and schedules be_conn_reap() from the event loop.  Reap
 * destroys the QP first: after that no WR of the connection completes or
 * touches memory and no window bound through it can be used, so each call is
 * settled exactly once, there, without waiting for flush completions:
 * POSTED calls go back to the head of the wait queue to be re-sent with the
 * same XID and fresh registrations (cancelled ones are called back with
 * BE_ERR_CANCELLED instead: the QP is in ERR), INVALIDATING calls are completed (their
 * reply was good), DONE calls keep the dead connection's receive buffer
 * alive (cn_refs) until released, and so do backchannel CALLs still held
 * (their be_bc_reply() then sends nothing).  The pool slot reconnects after
 * a capped exponential backoff; a new connection starts again at one credit.
 */
#ifndef RPCRDMA_GW_BE_INTERNAL_H
#define RPCRDMA_GW_BE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <time.h>

#include <event2/event.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "backend.h"

/* The verbs seam: same signatures as librdmacm / libibverbs. */
struct be_verbs {
	struct rdma_event_channel *(*create_event_channel)(void);
	void (*destroy_event_channel)(struct rdma_event_channel *ch);
	int (*create_id)(struct rdma_event_channel *ch, struct rdma_cm_id **id, void *ctx,
			 enum rdma_port_space ps);
	int (*destroy_id)(struct rdma_cm_id *id);
	int (*resolve_addr)(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst,
			    int timeout_ms);
	int (*resolve_route)(struct rdma_cm_id *id, int timeout_ms);
	int (*connect)(struct rdma_cm_id *id, struct rdma_conn_param *param);
	int (*disconnect)(struct rdma_cm_id *id);
	int (*get_cm_event)(struct rdma_event_channel *ch, struct rdma_cm_event **ev);
	int (*ack_cm_event)(struct rdma_cm_event *ev);
	int (*create_qp)(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
	void (*destroy_qp)(struct rdma_cm_id *id);
	int (*query_device)(struct ibv_context *verbs, struct ibv_device_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *verbs);
	int (*dealloc_pd)(struct ibv_pd *pd);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t len, int access);
	int (*dereg_mr)(struct ibv_mr *mr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	int (*dealloc_mw)(struct ibv_mw *mw);
	struct ibv_comp_channel *(*create_comp_channel)(struct ibv_context *verbs);
	int (*destroy_comp_channel)(struct ibv_comp_channel *cc);
	struct ibv_cq *(*create_cq)(struct ibv_context *verbs, int cqe, void *ctx,
				    struct ibv_comp_channel *cc, int vector);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*get_cq_event)(struct ibv_comp_channel *cc, struct ibv_cq **cq, void **ctx);
	void (*ack_cq_events)(struct ibv_cq *cq, unsigned n);
	int (*poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
};

/* Tests only: use v from now on (NULL: the real librdmacm/libibverbs). */
void be_verbs_set(const struct be_verbs *v);
/* The table in use (be_verbs.c). */
const struct be_verbs *be_vx(void);

#define BE_MAX_DEVS		4
#define BE_BC_RESERVE		2	/* receives for backchannel calls (RPCRDMA_MAX_BC_REQUESTS) */
#define BE_RECV_HEADROOM	2
#define BE_SEND_EXTRA		4	/* send buffers beyond credits (keepalive) */
#define BE_MAX_SENDS		5	/* a call lost with this many connections fails */
#define BE_MAX_LONG_REPLY	(4u << 20)	/* largest reply pulled by RDMA Read */
#define BE_MAX_REPLY_READS	16	/* read segments in one reply */

/* wr_id tags in the low bits of 16-byte aligned pointers; WR_SIG marks a
 * signaled WR (a flushed unsignaled one completes too, and must not count
 * against cn_sig_out).  Sends (WR_SEND, WR_DONE) carry the connection and
 * their send buffer's index in bits 48..63. */
enum { WR_RECV = 1, WR_SEND = 2, WR_INV = 3, WR_BIND = 4, WR_READ = 5, WR_DONE = 6,
       WR_TAG_MASK = 7, WR_SIG = 8 };
#define WR_PTR_MASK	0x0000fffffffffff0ull
#define WR_SBUF(wr_id)	((unsigned)((wr_id) >> 48))

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
	struct be_ctx *cg_ctx;
	struct rdma_event_channel *cg_ch;
	struct rdma_cm_id *cg_id;
	struct event *cg_ev;
	struct event *cg_timer;
	LIST_ENTRY(be_closing) cg_link;
};

struct be_pool;
struct be_conn;
LIST_HEAD(be_region_list, be_region);
TAILQ_HEAD(be_conn_list, be_conn);
LIST_HEAD(be_closing_list, be_closing);
LIST_HEAD(be_pool_list, be_pool);
TAILQ_HEAD(be_pool_due, be_pool);

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
	/* be_ctx_prewait(): once called, a CQ woken stays unarmed (parked)
	 * while the loop keeps finding work; that call re-arms it. */
	bool cx_prewait;
	struct be_conn_list cx_parked;
	struct be_pool_due cx_pump_due;	/* be_pool_pump() since: pumped by it too */
};

struct be_mw {
	struct ibv_mw *mw_mw;
	uint32_t mw_rkey;		/* key of the current or last binding */
	struct be_mw *mw_next;		/* free list */
};

/* One registration of one span of a call. */
struct be_reg {
	struct be_mw *rk_mw;		/* BE_REG_MW: bound window, NULL when invalidated */
	struct ibv_mr *rk_mr;		/* per-call MR, deregistered after the reply */
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
	BC_DEAD,		/* failed; be_conn_reap() scheduled or done */
};

enum be_call_state {
	CS_FREE,
	CS_POSTED,
	CS_INVALIDATING,
	CS_DONE,
	CS_READING,		/* reply carried a Read list: RDMA Reads posted */
};
/* A call with at most this many window binds joins its connection's
 * batch (a 4 KiB READ's write chunk is one); one with more goes alone. */
#define BE_TX_BINDS 4
/* A call that offers at least this many bytes of chunks (Read list, Write
 * list) is posted from be_call_submit(), with the calls queued before it:
 * the server's work on it is long, so starting it early gains more than a
 * shared doorbell saves (measured on 256 KiB READs). */
#define BE_TX_NOW_BYTES (64u << 10)

/* One post of a call: an element of its connection's cn_slots. */
struct be_call {
	struct be_conn *rq_conn;		/* owner of this element, fixed */
	struct be_req *rq_req;			/* POSTED..DONE: the call posted */
	struct be_call *rq_free_next;		/* FREE: cn_sfree_calls link */
	enum be_call_state rq_state;
	TAILQ_ENTRY(be_call) rq_link;		/* connection's cn_calls */
	uint32_t rq_xid;
	bool rq_ccp_abandoned;			/* timed out: its credit given back */
	unsigned rq_inv_pending;		/* LOCAL_INV WRs not yet completed */
	unsigned rq_sq_inv;			/* SQ room reserved for invalidation */
	uint32_t rq_inv_cover;			/* Sends before its LOCAL_INV chain (ring count) */
	struct be_rbuf *rq_rbuf;		/* receive buffer holding the reply */

	/* Long reply by Read list (RFC 5666): pulled into rq_lr_buf.  Before
	 * rq_plan: slot_take() zeroes up to there (the release frees rq_lr_buf). */
	uint8_t *rq_lr_buf;
	struct ibv_mr *rq_lr_mr;
	uint32_t rq_lr_len, rq_lr_pos;
	unsigned rq_lr_nsegs;
	struct rpcrdma_segment rq_lr_seg[BE_MAX_REPLY_READS];
	bool rq_lr_remote_inv;			/* the reply's Send With Invalidate */
	uint32_t rq_lr_inv_rkey;
	unsigned rq_lr_posted, rq_lr_done;	/* Reads posted / completed */
	TAILQ_ENTRY(be_call) rq_rd_link;	/* cn_rdwait while rq_lr_posted < rq_lr_nsegs */

	struct be_plan rq_plan;
	struct be_handle rq_rd[BE_MAX_CALL_SEGS], rq_wr[BE_MAX_CALL_SEGS], rq_rp[BE_MAX_CALL_SEGS];
	struct be_reg rq_reg[BE_MAX_CALL_SEGS];	/* reads, then writes, then reply */
	unsigned rq_nreg;
	/* A call the pump batches (be_call.c): its window binds and its Send,
	 * posted at the pump's end with its connection's other calls.  Written
	 * before they are read. */
	struct ibv_send_wr rq_bwr[BE_TX_BINDS];
	unsigned rq_nbwr;
	struct ibv_send_wr rq_swr;
	struct ibv_sge rq_ssge;
	unsigned rq_sbuf;
	struct be_call *rq_tx_next;
	struct be_reply rq_reply;
} __attribute__((aligned(16)));

TAILQ_HEAD(be_call_list, be_call);

/* One Send in its connection's send ring. */
struct be_sent {
	uint16_t sx_sbuf;		/* send buffer index */
	uint16_t sx_wrs;		/* send-queue room: the Send and the binds before it */
};
TAILQ_HEAD(be_req_list, be_req);

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
	bool cn_parked;			/* on cx_parked: its CQ is not armed */
	TAILQ_ENTRY(be_conn) cn_park_link;
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
	/* Send ring (see above): ring counts cn_ring_head..cn_ring_tail are
	 * posted and not known complete; cn_ring[count % cn_nsend]. */
	struct be_sent *cn_ring;
	uint32_t *cn_sbuf_seq;		/* per send buffer: its Send's ring count */
	uint32_t cn_ring_head, cn_ring_tail;
	unsigned cn_unsig, cn_unsig_wrs;	/* Sends (WRs) after the last signaled WR */
	unsigned cn_send_batch;		/* signal at least every this many Sends */
	unsigned cn_sq_call_max;	/* send-queue room one call may need */
	struct be_mw *cn_mwfree;
	unsigned cn_nmw;
	struct be_credits cn_cr;
	struct be_call_list cn_calls;	/* POSTED and INVALIDATING */
	/* The pump's batch: calls marshalled, to be posted at its end with one
	 * ibv_post_send() (one doorbell); empty between pumps. */
	struct be_call *cn_tx_head, *cn_tx_last;
	unsigned cn_tx_room;		/* send-queue room its calls take, invalidations too */
	struct rpcrdma_pd cn_ours, cn_peer;
	bool cn_peer_pd;
	uint8_t cn_peer_raw[8];
	unsigned cn_peer_raw_len;
	uint32_t cn_send_thresh, cn_recv_thresh;
	unsigned cn_rr, cn_id_depth;
	struct timespec cn_last_rx;
	struct be_call *cn_ka;		/* keepalive in flight */
	struct timespec cn_ka_sent_at;	/* when it was posted (no clock read per call) */
	/* Keepalive and CONF_RDMA calls: the backend's own requests. */
	struct be_req cn_ka_req, cn_ccp_req;
	struct iovec cn_ka_iov, cn_ccp_iov;
	uint8_t cn_ka_msg[40], cn_ccp_msg[BE_CCP_CALL_LEN];
	/* Per-post state: one element per receive buffer plus BE_SEND_EXTRA. */
	struct be_call *cn_slots;
	unsigned cn_nslots;
	struct be_call *cn_sfree_calls;	/* FREE elements */
	bool cn_was_up;
	bool cn_cm_disconnected;	/* DISCONNECTED received: destroy without waiting */
	bool cn_server_closed;		/* ... while up: the server closed it (be_pool_closed_for_calls) */
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
	struct be_ctx *bp_ctx;
	LIST_ENTRY(be_pool) bp_link;
	struct sockaddr_storage bp_addr;
	socklen_t bp_addrlen;
	char bp_name[64];
	be_pool_event_fn *bp_event_cb;
	void *bp_event_arg;
	unsigned bp_nslots;
	struct be_slot *bp_slots;
	struct be_req_list bp_queue;
	unsigned bp_nqueued;
	struct be_req_list bp_failed;	/* FAILING: callbacks from bp_fail_ev */
	struct event *bp_fail_ev;
	unsigned bp_ninflight;
	unsigned bp_rr;		/* next try when a call's own slot is down */
	bool bp_pumping;
	struct event *bp_pump_ev;	/* be_pool_pump(): the pump at the pass's end */
	bool bp_pump_due;		/* on cx_pump_due (be_ctx_prewait() in use) */
	TAILQ_ENTRY(be_pool) bp_due_link;
	/* The XIDs busy here (queued, or on a connection's cn_calls), counted
	 * in an open-addressed table: be_xid_busy() without a walk over every
	 * call queued and in flight (be_call.c). */
	uint32_t *bp_xid_key;
	uint32_t *bp_xid_cnt;		/* 0: a free entry */
	unsigned bp_xid_bits, bp_xid_used;
	bool bp_xid_off;		/* full or inconsistent: be_xid_busy() walks */
	bool bp_fatal;			/* ERR_VERS: stop reconnecting */
	bool bp_isolated;		/* be_pool_new_isolated(): losses in bs_isolated_lost */
	bool bp_closed_for_calls;	/* be_pool_closed_for_calls() */
	bool bp_freeing;		/* be_pool_free(): no events, no reconnect */
	uint32_t bp_ka_xid;
	bool bp_room_wanted;		/* a submit was refused: BE_POOL_ROOM due */
	struct event *bp_room_ev;
	bool bp_ccp_warned;		/* fallback logged once per pool */
	be_bc_fn *bp_bc_fn;		/* backchannel CALL taker */
	void *bp_bc_arg;
	be_pool_fail_fn *bp_fail_fn;	/* failed connection attempts */
	void *bp_fail_arg;
	char bp_last_err[96];		/* be_pool_last_error() */
};

__attribute__((format(printf, 5, 6)))
void be_log(const struct be_ctx *ctx, const struct be_pool *pool, enum be_log_level lvl,
	    const char *fn, const char *fmt, ...);
/* LOG(WARN, pool, ...) for a pool's message, CTX_LOG(ERR, ctx, ...) for the context's. */
#define LOG(lvl, pool, ...) be_log((pool)->bp_ctx, (pool), BE_LOG_##lvl, __func__, __VA_ARGS__)
#define CTX_LOG(lvl, ctx, ...) be_log((ctx), NULL, BE_LOG_##lvl, __func__, __VA_ARGS__)

/* Keepalive bookkeeping only (ms, seconds apart): the coarse clock costs
 * no system call (see gw_now_ms()). */
static inline void now(struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC_COARSE, ts);
}

static inline long ms_since(const struct timespec *t)
{
	struct timespec n;

	now(&n);
	return (n.tv_sec - t->tv_sec) * 1000 + (n.tv_nsec - t->tv_nsec) / 1000000;
}

static inline struct timeval ms_tv(unsigned ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };

	return tv;
}

/* be_reg.c */
int be_dev_get(struct be_ctx *ctx, struct ibv_context *verbs);
void be_dev_put(struct be_ctx *ctx, int d);
int be_reg_span(struct be_conn *cn, struct be_call *ca, const struct be_span *sp, int acc,
		    struct be_handle *hd, struct ibv_send_wr *binds, unsigned *nbinds);
/* ibv_reg_mr of len bytes failed with err: logged, naming the locked-memory
 * limit when that is the likely cause (ENOMEM, EAGAIN); pool may be NULL. */
void be_reg_fail_log(struct be_ctx *ctx, const struct be_pool *pool, size_t len, int err);

/* be_call.c */
void be_call_set_state(struct be_call *ca, enum be_call_state st);
void be_call_lr_free(struct be_call *ca);
void be_call_slot_put(struct be_call *ca);
void be_call_dereg_mrs(struct be_call *ca);
void be_call_free_mws(struct be_call *ca);
void be_pool_room_cb(evutil_socket_t fd, short what, void *arg);
void be_call_try_complete(struct be_call *ca);
void be_call_fail_queued(struct be_req *rq, enum be_err err);
/* The same from the event loop (FAILING): be_call_cancel() may take it. */
void be_call_fail_later(struct be_req *rq, enum be_err err);
void be_pool_failed_cb(evutil_socket_t fd, short what, void *arg);
int be_call_post(struct be_conn *cn, struct be_req *rq);
void be_req_init(struct be_req *rq, struct be_pool *pool, const struct be_call_desc *d,
		 be_reply_fn *cb, void *arg);
/* Move queued calls onto connections at the end of this loop pass, each
 * connection's together (one doorbell): be_pool_pump_cb(). */
void be_pool_pump(struct be_pool *pool);
void be_pool_pump_cb(evutil_socket_t fd, short what, void *arg);
/* The pumps due since the last call (be_ctx_prewait()). */
void be_ctx_pump_due(struct be_ctx *ctx);
bool be_xid_busy(struct be_pool *pool, uint32_t xid);
/* The walk be_xid_busy() replaces (and falls back to). */
bool be_xid_scan(struct be_pool *pool, uint32_t xid);
/* The pool's XID table: sized for its queue and connections, 0 or -ENOMEM.
 * be_xid_add/del are called only by the four helpers below. */
int be_xid_table_init(struct be_pool *pool);
void be_xid_table_free(struct be_pool *pool);
void be_xid_add(struct be_pool *pool, uint32_t xid);
void be_xid_del(struct be_pool *pool, uint32_t xid);

/* The pool's queue and a connection's calls in flight are each kept three
 * ways that must move together: the list, its count and the XID table.
 * These four are the only code that inserts into or removes from them. */
static inline void be_queue_put(struct be_pool *pool, struct be_req *rq, struct be_req *before)
{
	if (before)
		TAILQ_INSERT_BEFORE(before, rq, bq_link);
	else
		TAILQ_INSERT_TAIL(&pool->bp_queue, rq, bq_link);
	be_xid_add(pool, rq->bq_desc.cd_xid);
	pool->bp_nqueued++;
}

static inline void be_queue_take(struct be_pool *pool, struct be_req *rq)
{
	TAILQ_REMOVE(&pool->bp_queue, rq, bq_link);
	be_xid_del(pool, rq->bq_desc.cd_xid);
	pool->bp_nqueued--;
}

static inline void be_flight_put(struct be_conn *cn, struct be_call *ca)
{
	TAILQ_INSERT_TAIL(&cn->cn_calls, ca, rq_link);
	be_xid_add(cn->cn_pool, ca->rq_xid);
	cn->cn_pool->bp_ninflight++;
}

static inline void be_flight_take(struct be_conn *cn, struct be_call *ca)
{
	TAILQ_REMOVE(&cn->cn_calls, ca, rq_link);
	be_xid_del(cn->cn_pool, ca->rq_xid);
	cn->cn_pool->bp_ninflight--;
}

/* be_cq.c */
bool be_send_signal(struct be_conn *cn, unsigned wrs);
void be_send_push(struct be_conn *cn, unsigned sbuf, unsigned wrs, bool sig);
struct be_send_mark {
	uint32_t smk_tail;
	unsigned smk_sq_used, smk_sig_out, smk_unsig, smk_unsig_wrs;
	uint64_t smk_signaled, smk_unsignaled;
};
void be_send_mark(const struct be_conn *cn, struct be_send_mark *m);
void be_send_rewind(struct be_conn *cn, const struct be_send_mark *m);
void be_repost_rbuf(struct be_conn *cn, struct be_rbuf *rb);
int be_send_inline(struct be_conn *cn, const uint8_t *hdr, size_t hlen, const struct iovec *iov,
		       unsigned niov);
void be_on_wc(struct be_conn *cn, const struct ibv_wc *wc);
void be_on_cq(evutil_socket_t fd, short what, void *arg);
void be_cq_unpark(struct be_conn *cn);	/* off cx_parked (teardown) */

/* be_bc.c */
void be_bc_recv(struct be_conn *cn, struct be_rbuf *rb, const struct rpcrdma_hdr *rh,
		    uint32_t byte_len, bool chunks);

/* be_conn.c */
void be_conn_put(struct be_conn *cn);
void be_closing_finish(struct be_closing *cl);
void be_conn_reap(evutil_socket_t fd, short what, void *arg);
void be_conn_fail(struct be_conn *cn, const char *why);
void be_conn_drain_sync(struct be_conn *cn);
void be_conn_start(struct be_pool *pool, unsigned slot);
void be_slot_retry(evutil_socket_t fd, short what, void *arg);

#endif /* RPCRDMA_GW_BE_INTERNAL_H */
