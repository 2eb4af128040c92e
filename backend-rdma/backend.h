/* SPDX-License-Identifier: MIT */
/*
 * backend.h - the RPC-over-RDMA version 1 requester of rpcrdma-gw.
 *
 * This file contains the API of backend-rdma/: connections to one server
 * (rdma_cm + verbs, driven by a libevent event_base the caller owns), the
 * receive buffers, credit accounting (RFC 8166 section 3.3), memory
 * registration of the chunks a call advertises (memory windows, per-call
 * MRs, or the unsafe persistent mode), sending calls, receiving and
 * validating replies, reconnect and replay.
 *
 * The backend does not know NFS: the caller (gateway/, with chunking/'s
 * walkers) says which bytes of a call go in read chunks, how big the write
 * chunks and the reply chunk are, and where their data must land.  The
 * backend decides only transport matters: inline versus RDMA_NOMSG (a call
 * too big for the send threshold goes as a position-zero read chunk), how
 * spans are split into segments, and how they are registered.
 *
 * Return conventions: 0 or a negative errno for actions, bool for
 * predicates and parsers, NULL (errno set) for constructors.
 *
 * Threading: a be_ctx and everything made from it belong to the thread that
 * runs its event_base (one per worker, shared-nothing).  No global state.
 *
 * The pure pieces (credit accounting, segment splitting, marshalling of the
 * transport header and inline stream, reply validation) are exported at the
 * end of this header so that host unit tests call them without any RDMA.
 */
#ifndef RPCRDMA_GW_BACKEND_H
#define RPCRDMA_GW_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "chunking.h"

struct event_base;
struct be_ctx;		/* per event loop: devices, PDs, caller regions, stats */
struct be_pool;		/* N connections to one server, a wait queue */
struct be_req;		/* one call from submit to release, the caller's memory */
struct be_call;		/* one post of a call: a connection's per-credit state */
struct be_region;	/* caller-owned memory registered for chunks */

/* ------------------------------------------------------------------------
 * Configuration
 * ------------------------------------------------------------------------ */
enum be_reg_mode {
	BE_REG_MW = 0,		/* type 2 memory windows over a pool MR (default) */
	BE_REG_MR = 1,		/* ibv_reg_mr/ibv_dereg_mr of exactly the chunk bytes, per call */
	BE_REG_PERSISTENT = 2,	/* UNSAFE: one remote-access rkey for a whole region */
};
const char *be_reg_mode_str(enum be_reg_mode mode);

/* Levels of the backend's log messages (the gateway's order). */
enum be_log_level { BE_LOG_ERR = 0, BE_LOG_WARN, BE_LOG_INFO, BE_LOG_DEBUG };
/* One message: func is the backend function that logs, msg the formatted
 * text, starting with the pool's name ("-" for the context). */
typedef void be_log_fn(void *arg, enum be_log_level lvl, const char *func, const char *msg);

struct be_config {
	unsigned bc_credits;		/* credits asked (rdma_credit in calls); default 128 */
	uint32_t bc_inline_send;	/* our send size (bytes, multiple of 1 KiB); 4096 */
	uint32_t bc_inline_recv;	/* our receive buffer size; 4096 (kernel sends up to 4096) */
	enum be_reg_mode bc_reg_mode;
	bool bc_remote_inv;		/* set RFC 8797 R flag: accept Send With Invalidate */
	unsigned bc_conns;		/* connections per pool; 1 */
	uint32_t bc_max_seg_len;	/* split segments longer than this; default 1 MiB */
	unsigned bc_max_queue;		/* calls waiting for a credit per pool; 4096 */
	unsigned bc_connect_timeout_ms;	/* addr/route resolution and connect; 5000 */
	unsigned bc_retry_min_ms;	/* reconnect backoff, doubled up to max; 100 */
	unsigned bc_retry_max_ms;	/* 10000 */
	unsigned bc_keepalive_ms;	/* idle time before a NULL ping; 0 = off; 30000 */
	uint32_t bc_keepalive_prog;	/* program/version the NULL ping goes to; 100003/3 */
	uint32_t bc_keepalive_vers;
	unsigned bc_responder_resources;/* RDMA Reads the server may have in flight to us; 16 */
	bool bc_ccp;			/* send CONF_RDMA first on each connection (draft-08 6); off */
	unsigned bc_ccp_timeout_ms;	/* wait for its answer, then fall back; 2000 */
	unsigned bc_drain_ms;		/* teardown: wait for signaled Sends to leave; 2000 */
	unsigned bc_send_batch;		/* signal every Nth call Send; 0: half the send
					 * buffers; 1: every Send (see docs/backend.md) */
	/* Where messages go (NULL: one line each to stderr) and the highest
	 * level wanted, read at each message so that a change of the caller's
	 * level applies at once (NULL: every level). */
	be_log_fn *bc_log_fn;
	void *bc_log_arg;
	const int *bc_log_level;
};
void be_config_default(struct be_config *cfg);

/*
 * The backend's counters, each described once, bumped on every error path:
 * X(ID, field, family, key, value, help).  ID indexes bs_ctr[] (BE_CTR_ID),
 * field names the same counter (bs_field).  family is its /metrics family
 * (rpcrdma_gw_ prefixed, a counter per backend), sampled with the label
 * key="value" when key is not NULL; help is the family's HELP text, given
 * on the family's first counter only (NULL on the others).  Counters
 * without a family are not exported (help says what they count).
 * Families in the order /metrics shows them, their counters together.
 */
#define BE_COUNTERS(X) \
	X(CONNECTS, connects, "rdma_connects_total", NULL, NULL, \
	  "RDMA connections established (reconnects included).") \
	X(DISCONNECTS, disconnects, "rdma_disconnects_total", NULL, NULL, \
	  "RDMA connections lost or closed.") \
	X(REJECTS, rejects, "rdma_connect_errors_total", NULL, NULL, \
	  "Rejected or failed RDMA connection attempts.") \
	X(RESENT, resent, "rdma_resent_total", NULL, NULL, \
	  "Calls re-sent after a reconnect (same XID).") \
	X(ERR_VERS, err_vers, "rdma_errors_total", "kind", "err_vers", \
	  "RDMA_ERROR replies received, by kind.") \
	X(ERR_CHUNK, err_chunk, "rdma_errors_total", "kind", "err_chunk", NULL) \
	X(UNKNOWN_XID, unknown_xid, "rdma_dropped_replies_total", "reason", "unknown_xid", \
	  "Replies from the server dropped by the RDMA backend, by reason.") \
	X(BAD_REPLY, bad_reply, "rdma_dropped_replies_total", "reason", "bad_reply", NULL) \
	X(WRITE_OVERRUN, write_overrun, "rdma_dropped_replies_total", "reason", "write_overrun", \
	  NULL) \
	X(FLUSHED, flushed, "rdma_completion_errors_total", "kind", "flushed", \
	  "Work completions in error, by kind.") \
	X(WC_ERRORS, wc_errors, "rdma_completion_errors_total", "kind", "error", NULL) \
	X(MW_BINDS, mw_binds, "rdma_registrations_total", "kind", "mw_bind", \
	  "Per-call registration work: window binds, LOCAL_INV posted, windows the server " \
	  "invalidated (Send With Invalidate), per-call MRs.") \
	X(LOCAL_INV, local_inv, "rdma_registrations_total", "kind", "local_inv", NULL) \
	X(REMOTE_INV, remote_inv, "rdma_registrations_total", "kind", "remote_inv", NULL) \
	X(MR_REGS, mr_regs, "rdma_registrations_total", "kind", "mr_reg", NULL) \
	X(CCP_OK, ccp_ok, "rdma_ccp_total", "result", "applied", \
	  "Connection Configuration Protocol (draft-ietf-nfsv4-rpcrdma-08 section 6) at " \
	  "connect: answer applied, or fallback to the RFC 8797 values.") \
	X(CCP_FALLBACK, ccp_fallback, "rdma_ccp_total", "result", "fallback", NULL) \
	X(LONG_REPLIES, long_replies, "rdma_long_replies_total", "event", "pulled", \
	  "Long replies pulled by RDMA Read (RFC 5666 Read list), RDMA_DONE sent after them, " \
	  "and ones refused (server's Read depth 0).") \
	X(RDMA_DONE, rdma_done, "rdma_long_replies_total", "event", "rdma_done", NULL) \
	X(READ_DEPTH_REFUSED, read_depth_refused, "rdma_long_replies_total", "event", "refused", \
	  NULL) \
	X(BC_CALLS, bc_calls, "rdma_backchannel_total", "event", "calls", \
	  "Backchannel CALLs from the server (RFC 8167): delivered to the relay, replies sent, " \
	  "dropped (malformed, no room, no taker).") \
	X(BC_REPLIES, bc_replies, "rdma_backchannel_total", "event", "replies", NULL) \
	X(BC_DROPPED, bc_dropped, "rdma_backchannel_total", "event", "dropped", NULL) \
	X(DRAIN_TIMEOUTS, drain_timeouts, "rdma_drain_timeouts_total", "kind", "drain", \
	  "Connection teardowns that stopped waiting for posted work after the drain bound.") \
	X(SENDS_SIGNALED, sends_signaled, "rdma_sends_total", "completion", "signaled", \
	  "Sends posted (calls, RDMA_DONE, backchannel replies), signaled or not (an unsignaled " \
	  "Send is known complete when a later work request of its send queue completes).") \
	X(SENDS_UNSIGNALED, sends_unsignaled, "rdma_sends_total", "completion", "unsignaled", \
	  NULL) \
	X(SQ_COMPLETIONS, sq_completions, "rdma_work_completions_total", "queue", "send", \
	  "Work completions polled, by queue (send: Sends, LOCAL_INV, RDMA Reads, flushes).") \
	X(RQ_COMPLETIONS, rq_completions, "rdma_work_completions_total", "queue", "recv", NULL) \
	X(SEND_DOORBELLS, send_doorbells, "rdma_send_doorbells_total", NULL, NULL, \
	  "ibv_post_send() calls that carried call Sends, one doorbell each (a loop pass's " \
	  "calls for one connection share one).") \
	X(CQ_WAKEUPS, cq_wakeups, "rdma_cq_wakeups_total", NULL, NULL, \
	  "Completion channel events handled (a read and a re-arm each).") \
	X(SERVER_CLOSES_GSS, server_closes_gss, "rdma_server_closes_total", "calls", "handed_back", \
	  "Connections the server closed (DISCONNECTED) while calls were posted on them, by " \
	  "whether calls that may not be re-sent (RPCSEC_GSS) were handed back to their callers.") \
	X(SERVER_CLOSES_OTHER, server_closes_other, "rdma_server_closes_total", "calls", "resent", \
	  NULL) \
	X(HANDED_BACK, handed_back, "rdma_calls_handed_back_total", NULL, NULL, \
	  "Calls not re-sent after the server closed their connection (BE_CALL_NO_RESEND): " \
	  "their callers are told BE_ERR_SERVER_CLOSED.") \
	X(ISOLATED_LOST, isolated_lost, "rdma_isolated_disconnects_total", NULL, NULL, \
	  "Isolated connections (be_pool_new_isolated) lost or closed; not in " \
	  "rdma_disconnects_total.") \
	X(CALLS, calls, NULL, NULL, NULL, "calls submitted") \
	X(REPLIES, replies, NULL, NULL, NULL, "calls delivered to the caller, success or not") \
	X(KEEPALIVES, keepalives, NULL, NULL, NULL, "keepalive NULL calls sent") \
	X(QUEUED, queued, NULL, NULL, NULL, "calls that had to wait for a credit") \
	X(NOMSG_CALLS, nomsg_calls, NULL, NULL, NULL, "long calls sent as RDMA_NOMSG") \
	X(MARSHAL_ERRORS, marshal_errors, NULL, NULL, NULL, "calls that could not be sent") \
	X(ABANDONED, abandoned, NULL, NULL, NULL, \
	  "unanswered calls whose registrations were invalidated at the caller's timeout")

#define BE_CTR_ENUM(id, field, family, key, value, help) BE_CTR_##id,
enum be_ctr { BE_COUNTERS(BE_CTR_ENUM) BE_CTR__COUNT };
#undef BE_CTR_ENUM

/* Each counter by name (bs_connects) or by index (bs_ctr[BE_CTR_CONNECTS]). */
#define BE_CTR_FIELD(id, field, family, key, value, help) uint64_t bs_##field;
struct be_stats {
	union {
		struct { BE_COUNTERS(BE_CTR_FIELD) };
		uint64_t bs_ctr[BE_CTR__COUNT];
	};
};
#undef BE_CTR_FIELD

/* ------------------------------------------------------------------------
 * Context and caller memory
 * ------------------------------------------------------------------------ */
/* The event_base must outlive the context; cfg is copied. */
struct be_ctx *be_ctx_new(struct event_base *base, const struct be_config *cfg);
/* Frees every pool (calls are failed with BE_ERR_SHUTDOWN) and region. */
void be_ctx_free(struct be_ctx *ctx);
const struct be_stats *be_ctx_stats(const struct be_ctx *ctx);
const struct be_config *be_ctx_config(const struct be_ctx *ctx);
/* To be called by the loop's owner before each time the event loop may
 * block, from the first pass on: CQs woken since are polled, and re-armed
 * once a poll finds them empty; then the calls made ready since are
 * posted (each connection's in one doorbell).  True when it handled
 * completions or left work: run a pass that does not block
 * (EVLOOP_NONBLOCK), then call it again.  Never called: each CQ is
 * re-armed in its own event and each pass's calls go from an event, as
 * before. */
bool be_ctx_prewait(struct be_ctx *ctx);

/*
 * Register caller-owned memory (the gateway's buffer pool, into which TCP
 * client data is read) so that chunks inside it are advertised with no
 * copy.  MW mode: LOCAL_WRITE|MW_BIND, no remote access on the MR itself;
 * persistent mode: remote read/write on the MR (logged as unsafe).  The
 * registration is made on every RDMA device the context uses, including
 * devices met later.  Chunk bytes outside every region are registered per
 * call with ibv_reg_mr (counted in bs_mr_regs).
 */
struct be_region *be_region_register(struct be_ctx *ctx, void *addr, size_t len);
void be_region_unregister(struct be_region *reg);

/* ------------------------------------------------------------------------
 * Pools of connections
 * ------------------------------------------------------------------------ */
enum be_pool_event {
	BE_POOL_UP,		/* a connection became ready (info valid) */
	BE_POOL_DOWN,		/* a connection was lost; its calls wait for the next */
	BE_POOL_FATAL,		/* server speaks another version (ERR_VERS); no retry */
	/* Room again after a submit was refused (ENOBUFS: queue full, EEXIST:
	 * XID in flight): a queued call moved onto a connection or a call
	 * ended.  Delivered from the event loop, once per refusal episode, so
	 * the caller can retry its held calls without a timer. */
	BE_POOL_ROOM,
};
typedef void be_pool_event_fn(struct be_pool *pool, enum be_pool_event ev, void *arg);

/* Starts connecting at once (bc_conns connections) and keeps reconnecting. */
struct be_pool *be_pool_new(struct be_ctx *ctx, const struct sockaddr *addr, socklen_t addrlen,
			    be_pool_event_fn *event_cb, void *arg);
/* The same with one connection, for calls kept apart from the others (a
 * client whose calls made the server close a connection): its losses are
 * counted in bs_isolated_lost, not bs_disconnects; name is its log name. */
struct be_pool *be_pool_new_isolated(struct be_ctx *ctx, const struct sockaddr *addr,
				     socklen_t addrlen, be_pool_event_fn *event_cb, void *arg,
				     const char *name);
/* True when the pool's latest lost connection was closed by the server
 * (DISCONNECTED while up) with BE_CALL_NO_RESEND calls posted on it: those
 * were handed back (BE_ERR_SERVER_CLOSED), the others queued again, and
 * the connection is made again at once (no backoff).  Read it at
 * BE_POOL_DOWN. */
bool be_pool_closed_for_calls(const struct be_pool *pool);
void be_pool_free(struct be_pool *pool);
/* The address of the pool's next connection attempts (the server's name
 * resolved again): connections up or connecting keep theirs, nothing a
 * call or a backchannel CALL holds is freed.  1: changed, 0: the same
 * address, -EINVAL: addr NULL or too long. */
int be_pool_set_addr(struct be_pool *pool, const struct sockaddr *addr, socklen_t addrlen);

enum be_ccp_state {
	BE_CCP_OFF = 0,		/* not configured */
	BE_CCP_PENDING,		/* CONF_RDMA sent; other calls wait */
	BE_CCP_DONE,		/* answer applied */
	BE_CCP_FALLBACK,	/* no usable answer: RFC 8797 values kept */
};
const char *be_ccp_state_str(enum be_ccp_state st);

struct be_conn_info {
	bool ci_up;
	unsigned ci_credits;		/* latest grant applied (0 treated as 1) */
	unsigned ci_inflight;		/* sent against the grant, reply not come */
	uint32_t ci_send_threshold;	/* bytes per inline call */
	uint32_t ci_recv_threshold;	/* bytes per inline reply */
	bool ci_peer_pd;		/* server sent RFC 8797 private data */
	struct rpcrdma_pd ci_peer;	/* what it said (defaults when absent) */
	uint8_t ci_peer_raw[8];		/* its first 8 bytes as received */
	unsigned ci_peer_raw_len;	/* private data length as received */
	unsigned ci_recvs_posted;
	unsigned ci_responder_resources, ci_initiator_depth;
	enum be_ccp_state ci_ccp;
	unsigned ci_read_depth;		/* RDMA Reads we keep in flight (CCP maxrdmaread) */
};
/* Information on connection idx (< bc_conns); -ENOTCONN when not up. */
int be_pool_conn_info(const struct be_pool *pool, unsigned idx, struct be_conn_info *info);
/* Inline thresholds a call submitted now must respect, whatever
 * connection it goes on: the smallest over the connections up; before any
 * is up, RFC 8797's 1024 bytes.  The gateway offers a Reply chunk when the
 * reply may exceed *recv (the kernel never checks: an inline reply bigger
 * than our receive buffer breaks the connection). */
void be_pool_inline_thresholds(const struct be_pool *pool, uint32_t *send, uint32_t *recv);
unsigned be_pool_queued(const struct be_pool *pool);	/* waiting for a credit */
/* Calls sent and not yet finished: one finishes once its reply, Send
 * completion and invalidations are all in; its credit is free at the reply
 * (RFC 8166 3.3.1), so this may exceed the grant (ci_inflight may not). */
unsigned be_pool_inflight(const struct be_pool *pool);
bool be_pool_up(const struct be_pool *pool);		/* at least one connection ready */
/* Why the latest connection of the pool failed or was lost ("" before
 * any): the words of the warning logged then. */
const char *be_pool_last_error(const struct be_pool *pool);
/* Told (from the event loop) each time an attempt to connect fails before
 * the connection was up: no RDMA device, address or route not resolved,
 * REJECTED, timeout...  why = be_pool_last_error().  A lost connection is
 * BE_POOL_DOWN instead.  fn NULL: not told. */
typedef void be_pool_fail_fn(struct be_pool *pool, const char *why, void *arg);
void be_pool_set_failure(struct be_pool *pool, be_pool_fail_fn *fn, void *arg);

/* ------------------------------------------------------------------------
 * Calls
 * ------------------------------------------------------------------------ */
#define BE_MAX_MSG_IOV		32	/* segments of one RPC call message */
#define BE_MAX_READ_ITEMS	4	/* DDP items moved by read chunks */
#define BE_MAX_WRITE_CHUNKS	4
#define BE_MAX_TARGET_IOV	16	/* buffers of one write chunk / the reply chunk */
#define BE_MAX_CALL_SEGS	64	/* all segments of one call together */

/* Bytes [ri_pos, ri_pos + ri_len) of the RPC message go in a read chunk
 * at XDR position ri_pos (a multiple of 4); their XDR pad goes nowhere. */
struct be_read_item {
	uint32_t ri_pos;
	uint32_t ri_len;
};
/* Where a write chunk or the reply chunk lets the server write. */
struct be_target {
	const struct iovec *bt_iov;
	unsigned bt_niov;
};

#define BE_CALL_FORCE_NOMSG	0x1	/* send as RDMA_NOMSG even when it fits inline */
/* Never re-sent as it is on another connection after the server closed the
 * one it was posted on: the server may have taken it in, and the same
 * bytes again would be a replay it refuses (RPCSEC_GSS: a sequence number
 * seen is dropped, RFC 2203 5.3.3.1, and nfsd closes the connection).  It
 * ends with BE_ERR_SERVER_CLOSED instead; its caller has the client send
 * it anew. */
#define BE_CALL_NO_RESEND	0x2

struct be_call_desc {
	uint32_t cd_xid;			/* == the message's first word */
	const struct iovec *cd_msg;		/* the whole RPC call message */
	unsigned cd_msg_niov;
	const struct be_read_item *cd_reads;	/* ascending positions */
	unsigned cd_nreads;
	const struct be_target *cd_writes;	/* Write list offered */
	unsigned cd_nwrites;
	const struct be_target *cd_reply;	/* Reply chunk offered, or NULL */
	unsigned cd_flags;
};

/* Append-only: do not reorder (be_err_str indexes by value). */
enum be_err {
	BE_OK = 0,
	BE_ERR_SHUTDOWN,	/* pool freed before a reply */
	BE_ERR_CANCELLED,	/* never delivered: caller cancelled */
	BE_ERR_TOO_BIG,		/* cannot be expressed within the limits */
	BE_ERR_REGISTER,	/* memory registration failed */
	BE_ERR_BAD_REPLY,	/* transport header undecodable or shape wrong */
	BE_ERR_OVERRUN,		/* server reported more bytes than offered */
	BE_ERR_VERS,		/* RDMA_ERROR ERR_VERS: server's versions in br_vers_* */
	BE_ERR_CHUNK,		/* RDMA_ERROR ERR_CHUNK */
	BE_ERR_QUEUE_FULL,	/* wait queue at bc_max_queue */
	BE_ERR_RETRIES,		/* re-sent after 5 lost connections, still no reply */
	BE_ERR_SERVER_CLOSED,	/* BE_CALL_NO_RESEND: the server closed its connection */
	BE_ERR__COUNT
};
const char *be_err_str(enum be_err err);

struct be_reply {
	enum be_err br_err;
	uint32_t br_xid;
	uint32_t br_proc;		/* enum rpcrdma_proc of the reply */
	uint32_t br_credits;		/* grant carried by the reply */
	/* The RPC reply message without write-chunk data: in the receive
	 * buffer (RDMA_MSG/MSGP) or in the reply chunk (RDMA_NOMSG).  Valid
	 * until be_call_release(). */
	struct iovec br_body[BE_MAX_TARGET_IOV];
	unsigned br_nbody;
	size_t br_body_len;
	/* Bytes the server wrote at the start of each offered write chunk,
	 * already checked to be within what was offered. */
	unsigned br_nwrites;
	uint32_t br_write_len[BE_MAX_WRITE_CHUNKS];
	uint32_t br_vers_low, br_vers_high;	/* BE_ERR_VERS */
	bool br_remote_inv;		/* registration invalidated by the server */
};

typedef void be_reply_fn(struct be_req *req, const struct be_reply *reply, void *arg);

/*
 * Where a call stands (be_req.bq_state, written by the backend only):
 *
 *   IDLE -> QUEUED -> POSTED -> DONE -> IDLE    reply, then be_call_release()
 *             |  ^       |\-> CANCELLING -> DONE  cancelled on the wire
 *             |  +-------+                      re-sent after a reconnect
 *             +-> FAILING -> DONE               failed before it was posted
 *   QUEUED, FAILING -> IDLE                     be_call_cancel(): never posted
 */
enum be_req_state {
	BE_REQ_IDLE = 0,	/* the caller's: not submitted, released or cancelled */
	BE_REQ_QUEUED,		/* waiting for a connection with a credit; never posted */
	BE_REQ_FAILING,		/* failed before it was posted: callback due from the loop */
	BE_REQ_POSTED,		/* on a connection: the server may access its memory */
	BE_REQ_CANCELLING,	/* posted then cancelled: callback once invalidated */
	BE_REQ_DONE,		/* callback made: the reply held until be_call_release() */
	BE_REQ__COUNT
};

/*
 * One call, embedded in the caller's own per-call state (found back with
 * container_of): no allocation per call.  The descriptor's arrays are not
 * copied: they and the bytes they point to stay valid and unchanged until
 * the callback (a re-send after a reconnect plans the call again from
 * them).  The heavy state of a post (plan, handles, registrations) lives
 * in the connection's per-credit array while the call is posted and its
 * reply held.  Zeroed memory is an IDLE request.
 */
struct be_req {
	enum be_req_state bq_state;
	enum be_err bq_err;		/* FAILING: the error the callback reports */
	unsigned bq_sends;		/* times posted (re-sent after lost connections) */
	struct be_pool *bq_pool;
	be_reply_fn *bq_cb;
	void *bq_arg;
	struct be_call_desc bq_desc;	/* arrays: the caller's */
	struct be_call *bq_post;	/* POSTED..DONE: its post on a connection */
	bool bq_waited;			/* counted in bs_queued */
	TAILQ_ENTRY(be_req) bq_link;	/* pool wait queue or failed list */
};

/*
 * Submit req (IDLE, the caller's memory until the callback, then until
 * be_call_release()).  The call waits for a credit if needed
 * (be_pool_queued()), survives reconnects (re-sent with the same XID and
 * fresh registrations) and ends with exactly one callback, after every
 * registration it made is invalidated, never from inside this function.
 * The reply structure is valid during the callback; the bytes its br_body
 * points to until be_call_release().  0, or -EINVAL (bad descriptor),
 * -EBUSY (req not IDLE), -ENOBUFS (queue full), -EEXIST (XID already in
 * flight on this pool).
 */
int be_call_submit(struct be_pool *pool, struct be_req *req, const struct be_call_desc *desc,
		   be_reply_fn *cb, void *arg);
/* After the callback (also from inside it): gives the receive buffer and
 * the post's state back; req is IDLE again.  No-op on an IDLE req. */
void be_call_release(struct be_req *req);
/*
 * Before the callback.  true: the call was still waiting (QUEUED for a
 * credit, or FAILING before it was posted): it is gone, was never posted,
 * no callback comes, and req is IDLE, the caller's at once.  false: it is
 * on a connection, where the server may still read or write its memory
 * (CANCELLING): it is not re-sent, and its callback, with BE_ERR_CANCELLED,
 * comes once every registration of the call is invalidated (after the
 * reply, or after the connection's QP is in ERR); the caller frees the
 * memory then.  false too when there is nothing to cancel (IDLE, DONE).
 */
bool be_call_cancel(struct be_req *req);
/*
 * A call cancelled on the wire (be_call_cancel() false) whose server has
 * not answered for too long (the caller's call_timeout): its registrations
 * are invalidated now instead of at a reply that may never come, and its
 * credit is given back (as for an unanswered CONF_RDMA).  A late reply is
 * then dropped as for no call (bs_unknown_xid); a write into one of its
 * windows is refused by the device.  The callback (BE_ERR_CANCELLED) comes
 * once the invalidation completes, possibly from inside this function.
 * No-op for a call not in that state (queued, already answered, or on a
 * connection going down: the reap settles it), and in persistent mode,
 * where the whole region stays exposed (counted in bs_abandoned anyway).
 */
void be_call_abandon(struct be_req *req);

/* ------------------------------------------------------------------------
 * Backchannel (RFC 8167): RPC CALLs the server sends to us, e.g. NFSv4.1
 * callbacks.  They arrive as RDMA_MSG, inline, on the reverse-direction
 * receives (BE_BC_RESERVE per connection); their credit field is a request
 * and never touches the forward grant (RFC 8167 4.1).  The receive buffer
 * is held until be_bc_reply() (a reply or a drop), then reposted.
 * ------------------------------------------------------------------------ */
struct be_bc;		/* one backchannel CALL held */
/* msg: the whole RPC call message (starts with the server's XID), valid
 * until be_bc_reply(bc, ...).  Exactly one be_bc_reply() per callback. */
typedef void be_bc_fn(struct be_pool *pool, struct be_bc *bc, const void *msg, size_t len,
		      void *arg);
/* Without a taker (fn NULL) backchannel CALLs are dropped and counted. */
void be_pool_set_backchannel(struct be_pool *pool, be_bc_fn *fn, void *arg);
/*
 * Send the RPC REPLY message iov (starting with the call's XID) as an
 * inline RDMA_MSG with our reverse-direction credit grant, then repost the
 * receive and forget bc.  niov 0: no reply, only release.  Returns 0,
 * -ENOTCONN (connection lost meanwhile: nothing sent), -EMSGSIZE (above
 * the reverse-direction inline threshold), -ENOBUFS (no send buffer);
 * bc is released in every case.
 */
int be_bc_reply(struct be_bc *bc, const struct iovec *iov, unsigned niov);
/* Byte length of the backchannel transport header we send (RDMA_MSG, three
 * empty chunk lists): 28. */
#define BE_BC_HDR_LEN	28
/* Encode that header into out (28 bytes). */
void be_bc_marshal_hdr(uint8_t *out, uint32_t xid, uint32_t credits);
/*
 * Classify a received message whose transport header decoded as rh: true
 * when it is a reverse-direction CALL (RDMA_MSG or RDMA_NOMSG whose inline
 * RPC message says CALL).  *chunks is set when it carries chunk lists
 * (RFC 8167 5.3: we answer ERR_CHUNK).
 */
bool be_bc_is_call(const struct rpcrdma_hdr *rh, const void *buf, size_t len, bool *chunks);

/* ------------------------------------------------------------------------
 * Pure pieces, exported for host tests (no verbs inside).
 * ------------------------------------------------------------------------ */

/* Credit accounting (RFC 8166 3.3): one per connection. */
struct be_credits {
	unsigned cc_max;	/* our ceiling: credits we asked for */
	unsigned cc_grant;	/* latest grant applied, 1..cc_max */
	unsigned cc_inflight;	/* calls sent whose reply has not come */
	unsigned cc_recvs;	/* receive buffers posted */
	unsigned cc_reserve;	/* receives kept for backchannel calls */
};
void be_credits_init(struct be_credits *cr, unsigned max, unsigned reserve);
/* New connection: grant back to 1, nothing in flight, no receive posted. */
void be_credits_reset(struct be_credits *cr);
/* A grant from a reply: 0 is taken as 1, above max is capped. */
void be_credits_grant(struct be_credits *cr, uint32_t granted);
/* May one more call be sent?  inflight < grant and a receive is free. */
bool be_credits_can_send(const struct be_credits *cr);
unsigned be_credits_room(const struct be_credits *cr);
void be_credits_sent(struct be_credits *cr);		/* a call went out */
void be_credits_replied(struct be_credits *cr);		/* its reply came (or it was flushed) */
void be_credits_recv_posted(struct be_credits *cr, unsigned n);
void be_credits_recv_used(struct be_credits *cr);	/* a receive completed */

/* A contiguous run of memory advertised as one or more segments. */
struct be_span {
	uint8_t *sp_addr;
	uint32_t sp_len;
};
/*
 * Bytes [off, off + len) of an iovec stream as contiguous spans: the pieces
 * of each iovec, a piece that starts where the previous one ends joined to
 * it, each span cut at max_seg (0: no limit).  Returns the
 * number of spans, or -E2BIG when more than cap are needed, -EINVAL when
 * the range is outside the stream.
 */
int be_spans_from_iov(const struct iovec *iov, unsigned niov, size_t off, size_t len,
		      uint32_t max_seg, struct be_span *out, unsigned cap);

/* What marshalling decided.  Each array is valid up to its count only: a
 * plan is reused from call to call and its arrays are not cleared. */
struct be_plan {
	uint32_t pl_proc;		/* RPCRDMA_MSG or RPCRDMA_NOMSG */
	size_t pl_inline_len;		/* RPC bytes sent inline (MSG) */
	size_t pl_hdr_len;		/* transport header bytes */
	unsigned pl_nreadspans;		/* spans of the Read list */
	struct be_span pl_read[BE_MAX_CALL_SEGS];
	uint32_t pl_read_pos[BE_MAX_CALL_SEGS];
	unsigned pl_nwrites;		/* write chunks and their spans */
	unsigned pl_wfirst[BE_MAX_WRITE_CHUNKS], pl_wcount[BE_MAX_WRITE_CHUNKS];
	unsigned pl_nwspans;
	struct be_span pl_wspan[BE_MAX_CALL_SEGS];
	bool pl_has_reply;
	unsigned pl_nrspans;
	struct be_span pl_rspan[BE_MAX_CALL_SEGS];
};
/*
 * Decide the shape of a call given the send threshold: RDMA_MSG with the
 * caller's read items when header + inline stream fit, else RDMA_NOMSG with
 * a position-zero read chunk holding the whole message.  0 or -E2BIG /
 * -EINVAL (items misaligned, overlapping, outside the message).
 */
int be_plan_call(const struct be_call_desc *desc, uint32_t send_threshold, uint32_t max_seg,
		 struct be_plan *plan);
/* Registration of one span (same order as the plan's spans). */
struct be_handle {
	uint32_t bh_rkey;
	uint64_t bh_offset;
};
/*
 * Encode the transport header then the inline stream of a planned call into
 * out (cap bytes, at least the send threshold).  rh is scratch.  Returns
 * the bytes written or -ENOSPC.
 */
long be_marshal_call(const struct be_call_desc *desc, const struct be_plan *plan,
		     uint32_t credits, const struct be_handle *rd, const struct be_handle *wr,
		     const struct be_handle *rp, struct rpcrdma_hdr *rh, void *out, size_t cap);
/*
 * Check a decoded reply against what the call offered; fills br_write_len,
 * br_body (for RDMA_NOMSG, pointing into the reply chunk spans; for inline,
 * at buf + rh_body_off) and br_err.  Returns true when the reply is usable
 * (br_err BE_OK); false otherwise with br_err saying why.
 */
bool be_reply_check(const struct rpcrdma_hdr *rh, const struct be_plan *plan,
		    const struct be_handle *wr, const struct be_handle *rp,
		    const void *buf, size_t len, struct be_reply *reply);

/*
 * Connection Configuration Protocol (draft-ietf-nfsv4-rpcrdma-08 section 6),
 * pure pieces of be_ccp.c.  The call is an ordinary RPC (AUTH_NONE) to
 * CONFIG_RDMA_PROG 100400 version 1 procedure CONF_RDMA.
 */
#define BE_CCP_CALL_LEN	(40 + CCP_ARGS_LEN)
/* The whole RPC call message for xid into buf (>= BE_CCP_CALL_LEN). */
size_t be_ccp_call_encode(uint32_t xid, const struct ccp_req *req, uint8_t *buf);

enum be_ccp_result {
	BE_CCP_RES_OK = 0,
	BE_CCP_RES_PROG_UNAVAIL,	/* the Linux nfsd answers this */
	BE_CCP_RES_PROG_MISMATCH,
	BE_CCP_RES_REFUSED,		/* any other accept stat, or MSG_DENIED */
	BE_CCP_RES_GARBAGE,		/* not an RPC reply to xid, or results not 12 bytes */
	BE_CCP_RES_TIMEOUT,		/* no answer in bc_ccp_timeout_ms */
	BE_CCP_RES__COUNT
};
const char *be_ccp_result_str(enum be_ccp_result res);
/* Decode an RPC reply body (the reply's br_body) to CONF_RDMA xid. */
enum be_ccp_result be_ccp_reply_parse(const struct iovec *body, unsigned nbody, uint32_t xid,
				      struct ccp_reply *rep);
/*
 * Apply a server's answer within our own limits: the send threshold becomes
 * the server's maxcall_sendsize, at least 1024 (6.1: every peer takes 1 KB)
 * and never above our_send (the size of our registered send buffers); the
 * Read depth becomes min(our_depth, maxrdmaread), 0 meaning we must not
 * issue RDMA Read at all.
 */
void be_ccp_apply(const struct ccp_reply *rep, uint32_t our_send, unsigned our_depth,
		  uint32_t *send_threshold, unsigned *read_depth);

#endif /* RPCRDMA_GW_BACKEND_H */
