/* SPDX-License-Identifier: MIT */
/*
 * gateway.h - the call path of rpcrdma-gw (prefix gw_).
 *
 * This header holds what the gateway shares with the frontend (client
 * connections) and with the transports (backend connections):
 *
 *   - logging and counters (struct gw_log, enum gw_ctr),
 *   - the buffer pool: memory allocated once at start, fixed-size buffers,
 *     one region a transport may register for RDMA once (gw_pool_*),
 *   - the record: an iovec list over pool buffers (gw_rec_*), and the
 *     incremental record receiver that reads a socket into pool buffers
 *     with record marking and no copy (gw_rx_*),
 *   - the XID map (gw_xmap_*),
 *   - the call object, its state machine and its one finalize path,
 *   - THE TRANSPORT SEAM: struct gw_transport_ops, what a backend transport
 *     implements (plain TCP now, RPC-over-RDMA later), and the three
 *     functions a transport calls back (gw_call_complete, gw_path_ready,
 *     gw_path_lookup),
 *   - the gateway context and routing (gw_ctx_*).
 *
 * Return conventions: 0 or a negative errno for actions, bool for
 * predicates and parsers, NULL for constructors.  Nothing here uses a
 * global: the context travels as an argument.
 */
#ifndef RPCRDMA_GW_GATEWAY_H
#define RPCRDMA_GW_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "chunking.h"
#include "config.h"

struct event_base;
struct fe_conn;
struct fe_frontend;
struct gw_ctx;
struct gw_path;
struct gw_stats;

#ifndef GW_VERSION		/* set by the Makefile from debian/changelog */
#define GW_VERSION "unknown"
#endif

/* ------------------------------------------------------------------------
 * Logging (stderr now; journald later) and counters
 * ------------------------------------------------------------------------ */
enum gw_log_target {
	GW_LOG_STDERR = 0,	/* one line per event on stderr */
	GW_LOG_JOURNAL,		/* sd_journal_send with structured fields (journal.c) */
};
struct gw_log_rl;		/* per-peer rate limit state (journal.c) */
struct gw_log {
	int gl_level;		/* enum cfg_log_level; -1 = silent (tests) */
	enum gw_log_target gl_target;
	struct gw_log_rl *gl_rl;	/* NULL: no rate limit (tests) */
};

void gw_logf(const struct gw_log *lg, enum cfg_log_level lvl, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define gw_log(lg, lvl, ...) do { \
	if ((lg) && (int)(lvl) <= (lg)->gl_level) gw_logf((lg), (lvl), __func__, __VA_ARGS__); \
} while (0)
#define gw_err(lg, ...)   gw_log(lg, CFG_LOG_ERR, __VA_ARGS__)
#define gw_warn(lg, ...)  gw_log(lg, CFG_LOG_WARN, __VA_ARGS__)
#define gw_info(lg, ...)  gw_log(lg, CFG_LOG_INFO, __VA_ARGS__)
#define gw_debug(lg, ...) gw_log(lg, CFG_LOG_DEBUG, __VA_ARGS__)

/* journal.c: events about one peer, with structured fields for journald
 * (RPC_XID, CLIENT, BACKEND, RPC_PROG, RPC_VERS, RPC_PROC, ERROR) and a
 * rate limit per peer (client, else backend): at most GW_LOG_RATE lines a
 * second, then one "suppressed N messages" line when the next second
 * starts (GW_CTR_LOG_SUPPRESSED counts them). */
#define GW_LOG_RATE	10
struct gw_log_ev {
	uint32_t le_xid;
	bool le_has_xid;
	const char *le_client;		/* peer name or NULL */
	const char *le_backend;		/* path or backend name or NULL */
	uint32_t le_prog, le_vers, le_proc;	/* le_prog 0: none */
	const char *le_error;		/* short error code ("garbage", be_err_str...) */
};
void gw_logf_ev(const struct gw_log *lg, enum cfg_log_level lvl, const char *func,
		const struct gw_log_ev *ev, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
#define gw_log_ev(lg, lvl, ev, ...) do { \
	if ((lg) && (int)(lvl) <= (lg)->gl_level) gw_logf_ev((lg), (lvl), __func__, (ev), __VA_ARGS__); \
} while (0)
/* Rate limit state for lg->gl_rl (malloc at start); st receives the
 * suppressed count. */
struct gw_log_rl *gw_log_rl_new(struct gw_stats *st);
void gw_log_rl_free(struct gw_log_rl *rl);
/* "journal" when stderr is the journal stream (JOURNAL_STREAM names it). */
enum gw_log_target gw_log_target_auto(void);
/* One formatted line to lg's target (gw_logf uses it for the journal). */
void gw_log_line(const struct gw_log *lg, enum cfg_log_level lvl, const char *func, const char *msg);

/* Append-only: do not reorder (gw_ctr_str() indexes by value).  Every
 * error path bumps one. */
enum gw_ctr {
	GW_CTR_CLIENTS_ACCEPTED = 0,
	GW_CTR_CLIENTS_CLOSED,
	GW_CTR_CLIENTS_REFUSED,		/* over max_clients or accept error */
	GW_CTR_CLIENT_GARBAGE,		/* bad record or header: client closed */
	GW_CTR_CLIENT_TOO_BIG,		/* record above max_record: client closed */
	GW_CTR_CLIENT_TOO_FRAGMENTED,	/* record over GW_REC_MAX_IOV pieces */
	GW_CTR_CLIENT_IDLE_TIMEOUT,
	GW_CTR_CLIENT_RECORD_TIMEOUT,
	GW_CTR_CLIENT_IO_ERROR,
	GW_CTR_CLIENT_PAUSED,		/* reading stopped (a cap was reached) */
	GW_CTR_POOL_EMPTY,		/* no free buffer: reading deferred */
	GW_CTR_CALLS_EMPTY,		/* no free call object: reading deferred */
	GW_CTR_CALLS,			/* calls received */
	GW_CTR_REPLIES,			/* replies written to clients */
	GW_CTR_LOCAL_PROG_UNAVAIL,
	GW_CTR_LOCAL_PROG_MISMATCH,
	GW_CTR_LOCAL_RPC_MISMATCH,
	GW_CTR_NOT_A_CALL,		/* REPLY from a client (backchannel): dropped */
	GW_CTR_RETRANS_INFLIGHT,	/* retransmission while original in flight: dropped */
	GW_CTR_RETRANS_RESENT,		/* retransmission of an answered XID: same gateway XID */
	GW_CTR_XMAP_EVICTED,		/* answered XID forgotten early (map full) */
	GW_CTR_CALLS_HELD,		/* call waited for its backend */
	GW_CTR_HOLD_FULL,		/* hold queue full: client reading stopped */
	GW_CTR_CALLS_CANCELLED,		/* client gone before the reply */
	GW_CTR_CALLS_FAILED,		/* transport refused the call for good */
	GW_CTR_BACKEND_CONNECTS,
	GW_CTR_BACKEND_DISCONNECTS,
	GW_CTR_BACKEND_CONNECT_FAILED,
	GW_CTR_BACKEND_RESENT,		/* calls re-sent after a reconnect */
	GW_CTR_BACKEND_GARBAGE,		/* bad record from a server: connection reset */
	GW_CTR_BACKEND_UNMATCHED,	/* reply with no call waiting (cancelled, dup) */
	GW_CTR_BACKEND_NOT_REPLY,	/* server sent a CALL (backchannel): dropped */
	GW_CTR_RPCBIND_FAILED,
	GW_CTR_ILLEGAL_TRANSITION,	/* call state machine refused a change (bug) */
	GW_CTR_LOCAL_AUTH_ERROR,	/* bad credential or AUTH_TLS probe: local AUTH_ERROR */
	/* RDMA transport, bytes by the way they travelled (metrics.c) */
	GW_CTR_BYTES_INLINE_CALL,	/* call bytes sent in RDMA_MSG Sends */
	GW_CTR_BYTES_READ_CHUNK,	/* call bytes the server pulled by RDMA Read */
	GW_CTR_BYTES_LONG_CALL,		/* RDMA_NOMSG call messages (Position-zero Read) */
	GW_CTR_BYTES_INLINE_REPLY,	/* reply bytes received inline */
	GW_CTR_BYTES_WRITE_CHUNK,	/* reply bytes the server wrote in write chunks */
	GW_CTR_BYTES_REPLY_CHUNK,	/* reply bytes the server wrote in the Reply chunk */
	GW_CTR_BYTES_COPIED,		/* payload bytes copied (inline reply out of its receive buffer) */
	GW_CTR_LOG_SUPPRESSED,		/* log lines dropped by the per-peer rate limit */
	GW_CTR_ADMIN_REQUESTS,		/* HTTP requests on the admin listener */
	GW_CTR_CTL_COMMANDS,		/* control socket commands */
	GW_CTR_CTL_ERRORS,		/* control socket: bad command or I/O error */
	/* rpcbind_register (rpcb_reg.c): one per program/version/netid */
	GW_CTR_RPCB_REGISTERED,		/* set in the local rpcbind */
	GW_CTR_RPCB_CONFLICT,		/* held by another process: left alone */
	GW_CTR_RPCB_FAILED,		/* rpcbind refused or unreachable */
	GW_CTR_RPCB_UNREGISTERED,	/* removed at exit */
	GW_CTR_RELOAD_APPLIED,		/* reload: new configuration in use */
	GW_CTR_RELOAD_INVALID,		/* reload: file did not parse; old one kept */
	GW_CTR_RELOAD_RESTART,		/* reload: a restart-only key changed; old one kept */
	GW_CTR_RELOAD_FAILED,		/* reload: no room or memory to apply; old one kept */
	GW_CTR_NFS4_OPS_UNCOUNTED,	/* COMPOUND ops beyond CHK_WALK_MAX_OPS */
	GW_CTR_CB_CALLS,		/* callbacks received from a server (RFC 8167 backchannel) */
	GW_CTR_CB_RELAYED,	/* callback replies relayed back to the server */
	GW_CTR_CB_NULL_LOCAL,	/* CB_NULL answered by the gateway */
	GW_CTR_CB_NO_OWNER,	/* callback for a session no client connection owns: SYSTEM_ERR */
	GW_CTR_CB_TIMEOUT,	/* client did not answer a callback in time: SYSTEM_ERR */
	GW_CTR_CB_CLIENT_GONE,	/* client closed with a callback pending: SYSTEM_ERR */
	GW_CTR_CB_BAD,		/* malformed callback or callback reply: dropped */
	GW_CTR_CB_FAILED,	/* no room (call object, buffer, relay slot) or send failed */
	GW_CTR_CB_SESSIONS_BOUND,	/* NFSv4.1 sessions bound to a client connection */
	GW_CTR__COUNT
};
const char *gw_ctr_str(enum gw_ctr c);

/* Latency histograms (metrics.c): fixed buckets, non-cumulative counts;
 * bounds in gw_hist_bound_us[], the last bucket is +Inf. */
#define GW_HIST_NBUCKETS	16
enum gw_hist_id {
	GW_HIST_CALL = 0,	/* client call received -> reply queued to the client */
	GW_HIST_RDMA,		/* RDMA leg: be_call_submit -> reply callback */
	GW_HIST__COUNT
};
struct gw_hist {
	uint64_t gh_bucket[GW_HIST_NBUCKETS];
	uint64_t gh_count;
	uint64_t gh_sum_us;
};
/* Calls by program, version, procedure: open addressing, no allocation. */
#define GW_STATS_PROCS		256
struct gw_proc_stat {
	uint32_t ps_prog, ps_vers, ps_proc;
	uint64_t ps_calls;		/* 0 = slot free */
};

/* NFSv4 operations inside COMPOUND, indexed by nfs_opnum4 (RFC 8881
 * section 16.2, RFC 7863, RFC 8276: 3..75); slot 0 counts any other
 * number (OP_ILLEGAL, future operations). */
#define GW_NFS4_OPS		76
struct gw_stats {
	uint64_t gs_ctr[GW_CTR__COUNT];
	struct gw_hist gs_hist[GW_HIST__COUNT];
	struct gw_proc_stat gs_proc[GW_STATS_PROCS];
	uint64_t gs_proc_overflow;	/* calls not counted: table full */
	uint64_t gs_nfs4_op[GW_NFS4_OPS];
};
/* metrics.c */
uint64_t gw_now_us(void);
void gw_stats_proc(struct gw_stats *st, uint32_t prog, uint32_t vers, uint32_t proc);
void gw_stats_observe(struct gw_stats *st, enum gw_hist_id h, uint64_t usec);
/* Count the operations of a walked NFSv4 COMPOUND (nothing for other calls). */
void gw_stats_nfs4_ops(struct gw_stats *st, const struct chk_call_walk *cw);
extern const uint64_t gw_hist_bound_us[GW_HIST_NBUCKETS - 1];
static inline void gw_stat_add(struct gw_stats *st, enum gw_ctr c, uint64_t n)
{
	if (st)
		st->gs_ctr[c] += n;
}
static inline void gw_stat_inc(struct gw_stats *st, enum gw_ctr c)
{
	if (st)
		st->gs_ctr[c]++;
}
/* Log every non-zero counter at info level. */
void gw_stats_log(const struct gw_stats *st, const struct gw_log *lg);

/* Monotonic milliseconds. */
uint64_t gw_now_ms(void);

/* ------------------------------------------------------------------------
 * Buffer pool - pool.c
 *
 * One mmap()ed region cut into fixed-size buffers, allocated at start; the
 * hot path never calls malloc.  Buffers are reference counted: a receive
 * buffer is shared by every record (and part of a record) received into
 * it, and returns to the pool when the last reference goes.
 *
 * Registration hook: a transport that needs the memory registered with a
 * device (RDMA) calls gw_pool_register() once; the callback receives the
 * whole region (addr, len) and returns an opaque registration (for verbs:
 * the struct ibv_mr *), kept until gw_pool_free() hands it back to the
 * dereg callback.  Because client data is received straight into this
 * region, the server can RDMA Read a WRITE payload where it landed.
 * ------------------------------------------------------------------------ */
struct gw_buf {
	uint8_t *gb_data;
	uint32_t gb_size;
	uint32_t gb_used;		/* bytes filled by the receiver */
	uint32_t gb_refs;
	uint32_t gb_index;		/* position in the pool */
	struct gw_buf *gb_next_free;
};

typedef void *(*gw_pool_reg_fn)(void *arg, void *addr, size_t len);
typedef void (*gw_pool_dereg_fn)(void *arg, void *reg);
#define GW_POOL_MAX_REGS	16	/* GW_BACKEND_SLOTS: one per RDMA server context */

struct gw_pool;
/* hugepages: try MAP_HUGETLB first, fall back to normal pages. */
struct gw_pool *gw_pool_new(uint32_t buf_size, unsigned nbufs, bool hugepages);
/* Deregisters every registration (dereg callbacks), unmaps. */
void gw_pool_free(struct gw_pool *p);
/* Register the whole region once.  Returns a registration index >= 0, or
 * -ENOSPC (too many), -EIO (reg returned NULL). */
int gw_pool_register(struct gw_pool *p, gw_pool_reg_fn reg, gw_pool_dereg_fn dereg, void *arg);
void *gw_pool_registration(const struct gw_pool *p, int idx);
/* Give registration idx back now (dereg callback), before gw_pool_free(). */
void gw_pool_unregister(struct gw_pool *p, int idx);
void gw_pool_region(const struct gw_pool *p, void **addr, size_t *len);
bool gw_pool_hugepages(const struct gw_pool *p);
uint32_t gw_pool_buf_size(const struct gw_pool *p);
unsigned gw_pool_avail(const struct gw_pool *p);
unsigned gw_pool_count(const struct gw_pool *p);
/* A buffer with one reference and gb_used = 0, or NULL when empty. */
struct gw_buf *gw_buf_get(struct gw_pool *p);
void gw_buf_ref(struct gw_buf *b);
void gw_buf_put(struct gw_pool *p, struct gw_buf *b);
/* The buffer holding addr, or NULL when addr is outside the region. */
struct gw_buf *gw_pool_buf_of(struct gw_pool *p, const void *addr);

/* Promises (deadlock avoidance, see record.c): a receiver that learnt a
 * fragment's length reserves the buffers it will need, so every record
 * that started can finish.  Buffers not promised: avail - promised. */
bool gw_pool_promise(struct gw_pool *p, unsigned n, unsigned keep_free);
void gw_pool_unpromise(struct gw_pool *p, unsigned n);
/* Take a promised buffer (never NULL while the promise is held). */
struct gw_buf *gw_buf_get_promised(struct gw_pool *p);
unsigned gw_pool_unpromised(const struct gw_pool *p);

/* ------------------------------------------------------------------------
 * Records and the record receiver - record.c
 * ------------------------------------------------------------------------ */
#define GW_REC_MAX_IOV	64

/* One RPC message as an iovec list over pool buffers; each iovec holds one
 * reference on the buffer it points into (rc_buf[i]). */
struct gw_rec {
	unsigned rc_niov;
	size_t rc_len;
	struct iovec rc_iov[GW_REC_MAX_IOV];
	struct gw_buf *rc_buf[GW_REC_MAX_IOV];
};
void gw_rec_init(struct gw_rec *r);
/* Drop every buffer reference; the record is empty afterwards. */
void gw_rec_release(struct gw_pool *p, struct gw_rec *r);
/* Move src into dst (dst must be empty); src is empty afterwards. */
void gw_rec_move(struct gw_rec *dst, struct gw_rec *src);
/* Copy up to cap bytes from offset off of the record (small headers). */
size_t gw_rec_copyout(const struct gw_rec *r, size_t off, void *dst, size_t cap);
/* Overwrite 4 bytes at offset off (the XID), across iovecs if need be. */
bool gw_rec_put_be32(struct gw_rec *r, size_t off, uint32_t v);

/* Append-only: do not reorder (gw_rx_status_str()). */
enum gw_rx_status {
	GW_RX_RECORD = 0,	/* a record is complete in *out */
	GW_RX_AGAIN,		/* socket drained (EAGAIN): wait for readability */
	GW_RX_EOF,		/* peer closed */
	GW_RX_IO_ERROR,		/* recv failed: errno in rx_errno */
	GW_RX_TOO_BIG,		/* record above max_record */
	GW_RX_TOO_FRAGMENTED,	/* record needs more than GW_REC_MAX_IOV pieces */
	GW_RX_NO_BUFFER,	/* pool empty: retry later */
	GW_RX__COUNT
};
const char *gw_rx_status_str(enum gw_rx_status s);

struct gw_rx {
	struct gw_pool *rx_pool;
	struct gw_buf *rx_buf;		/* receive buffer, one reference */
	uint32_t rx_parsed;		/* bytes of rx_buf given to the decoder */
	uint32_t rx_lowat;		/* switch buffers below this much room */
	struct rm_dec rx_dec;
	struct gw_rec rx_rec;		/* record being assembled */
	bool rx_in_record;		/* some bytes of a record seen */
	bool rx_promise;		/* client side: promise buffers per fragment */
	unsigned rx_reserve;		/* client side: leave this many unpromised buffers */
	unsigned rx_promised;		/* buffers promised to this receiver */
	unsigned rx_need;		/* promise asked for and not yet granted */
	uint64_t rx_bytes;		/* bytes received, total */
	int rx_errno;
	bool rx_drained;		/* last recv() was short: socket empty then */
};
/* Server side (transports): no promise, may use the reserve. */
void gw_rx_init(struct gw_rx *rx, struct gw_pool *p, uint32_t max_record);
/* Client side: promises per fragment, never touches the last `reserve`
 * unpromised buffers (they carry replies). */
void gw_rx_init_client(struct gw_rx *rx, struct gw_pool *p, uint32_t max_record, unsigned reserve);
/* Buffers a receiver may switch away from unfilled (rx_lowat). */
uint32_t gw_rx_lowat(uint32_t buf_size);
/* Buffers one record of max_record bytes may need, worst case. */
unsigned gw_rx_record_buffers(uint32_t buf_size, uint32_t max_record);
void gw_rx_reset(struct gw_rx *rx);	/* drop partial state (reconnect) */
void gw_rx_destroy(struct gw_rx *rx);
/* Read fd (non-blocking) until a record completes or the socket drains;
 * bytes already received but not yet parsed are used first.  On
 * GW_RX_RECORD, *out (empty on entry) owns the record. */
enum gw_rx_status gw_rx_read(struct gw_rx *rx, int fd, struct gw_rec *out);
static inline bool gw_rx_partial(const struct gw_rx *rx) { return rx->rx_in_record; }

/* ------------------------------------------------------------------------
 * XID map - xmap.c
 *
 * Per backend: gives each call a gateway XID unique among the XIDs this
 * gateway has outstanding or recently answered on that server, and maps a
 * client's retransmission (same client key, same client XID) to the same
 * gateway XID while the original is in flight or for drc_window after it
 * was answered, so the server's duplicate request cache recognises it.
 * The client key identifies the client endpoint (peer address and port,
 * see fe_conn_key()), which the Linux client keeps across reconnects.
 * ------------------------------------------------------------------------ */
struct gw_call;
struct gw_xent {
	uint64_t xe_client;
	uint32_t xe_cxid;
	uint32_t xe_gxid;
	struct gw_call *xe_call;	/* in flight; NULL once answered/cancelled */
	uint64_t xe_expires;		/* ms; meaningful when xe_call == NULL */
	struct gw_xent *xe_cnext;	/* chain by (client, client XID) */
	struct gw_xent *xe_gnext;	/* chain by gateway XID */
	TAILQ_ENTRY(gw_xent) xe_link;	/* free list or settled list (oldest first) */
	bool xe_used;
};
struct gw_xmap;
struct gw_xmap *gw_xmap_new(unsigned capacity, uint32_t first_xid);
void gw_xmap_free(struct gw_xmap *m);
/* Entry for (client, cxid), or NULL; expired entries are dropped first. */
struct gw_xent *gw_xmap_find(struct gw_xmap *m, uint64_t client, uint32_t cxid, uint64_t now);
/* New entry with a fresh gateway XID, in flight for call.  When the map
 * is full the oldest settled entry is evicted (*evicted = true); NULL only
 * when every entry is in flight. */
struct gw_xent *gw_xmap_add(struct gw_xmap *m, uint64_t client, uint32_t cxid,
			    struct gw_call *call, uint64_t now, bool *evicted);
struct gw_xent *gw_xmap_by_gxid(struct gw_xmap *m, uint32_t gxid);
/* The call is answered or cancelled: keep the mapping until now + window. */
void gw_xmap_settle(struct gw_xmap *m, struct gw_xent *xe, uint64_t now, unsigned window_ms);
/* A retransmission takes a settled entry back in flight. */
void gw_xmap_attach(struct gw_xmap *m, struct gw_xent *xe, struct gw_call *call);
void gw_xmap_remove(struct gw_xmap *m, struct gw_xent *xe);
void gw_xmap_expire(struct gw_xmap *m, uint64_t now);
unsigned gw_xmap_count(const struct gw_xmap *m);

/* ------------------------------------------------------------------------
 * The call - call.c
 *
 * State machine (design essay in call.c):
 *
 *   FREE -> NEW -> HELD <-> SENT -> REPLIED -> DONE -> FREE
 *            |      |        |                 ^
 *            +------+--------+-----------------+   (finalize: cancel, drop)
 *            NEW -> REPLIED (local reply)
 * ------------------------------------------------------------------------ */
enum gw_call_state {
	GW_CALL_FREE = 0,	/* in the call pool's free list, no owner */
	GW_CALL_NEW,		/* [transient] record taken, header being decoded and routed */
	GW_CALL_HELD,		/* waiting in its path's hold queue (backend down or busy) */
	GW_CALL_SENT,		/* owned by the transport too, reply awaited */
	GW_CALL_REPLIED,	/* reply (server's or local) queued on the client output */
	GW_CALL_DONE,		/* finalized; the record is released when the last ref goes */
	GW_CALL__COUNT
};
const char *gw_call_state_str(enum gw_call_state s);

/* Why a call ended (append-only: gw_end_str()). */
enum gw_end {
	GW_END_REPLIED = 0,	/* reply written to the client */
	GW_END_CLIENT_GONE,	/* client connection closed first */
	GW_END_RETRANS,		/* duplicate of a call in flight: dropped */
	GW_END_NOT_A_CALL,	/* client sent a REPLY message */
	GW_END_SHUTDOWN,	/* gateway stopping */
	GW_END_FAILED,		/* transport refused the call for good */
	GW_END__COUNT
};
const char *gw_end_str(enum gw_end e);

struct gw_call {
	enum gw_call_state ca_state;
	unsigned ca_refs;		/* client side + transport: last put recycles */
	uint32_t ca_index;
	struct gw_call_pool *ca_cpool;
	struct gw_ctx *ca_gw;
	struct fe_conn *ca_conn;	/* client connection; NULL once it is gone */
	struct gw_path *ca_path;	/* route/transport; NULL for local replies */
	struct gw_xent *ca_xent;	/* XID mapping, NULL for local replies */
	uint32_t ca_cxid;		/* client's XID */
	uint32_t ca_gxid;		/* gateway XID, in the record while SENT */
	/* Decoded once, where the record becomes a call (gw_on_record): the
	 * transports and the metrics read these, never the bytes again. */
	struct rpc_call_hdr ca_hdr;	/* program, version, procedure, flavor, GSS fields */
	uint32_t ca_gss;		/* the walkers' view of the flavor: 0 or CHK_GSS_* */
	struct chk_call_walk ca_walk;	/* DDP items and reply bound; valid once routed */
	uint64_t ca_client;		/* client key (XID map) */
	uint64_t ca_start_ms;
	uint64_t ca_start_us;		/* latency histogram */
	bool ca_tp_owned;		/* the transport holds a reference */
	size_t ca_bytes;		/* bytes counted against the client's cap */
	struct gw_rec ca_rec;		/* the call message, gateway XID patched in */
	/* Reply: iovecs valid until the transport's release.  The first 4
	 * bytes (the gateway XID) are never sent: ca_mark carries the record
	 * mark and the client XID in their place. */
	const struct iovec *ca_reply_iov;
	unsigned ca_reply_niov;
	size_t ca_reply_len;
	struct gw_rec ca_reply_rec;	/* storage for transports that receive into the pool */
	uint8_t ca_mark[8];
	uint8_t ca_local[64];		/* local reply (rpc_local_reply) */
	struct iovec ca_local_iov;
	/* transport scratch */
	uint8_t ca_tp_mark[4];		/* TCP transport: record mark of the call */
	void *ca_tp_priv;
	TAILQ_ENTRY(gw_call) ca_conn_link;	/* client's calls */
	TAILQ_ENTRY(gw_call) ca_out_link;	/* client's output queue */
	TAILQ_ENTRY(gw_call) ca_path_link;	/* hold queue (gateway) or transport queues */
	TAILQ_ENTRY(gw_call) ca_free_link;
};
TAILQ_HEAD(gw_call_list, gw_call);

/* Preallocated call objects (malloc at start only). */
struct gw_call_pool;
struct gw_call_pool *gw_call_pool_new(unsigned n, struct gw_pool *bufs, struct gw_stats *st,
				      const struct gw_log *lg);
void gw_call_pool_free(struct gw_call_pool *cp);
unsigned gw_call_pool_avail(const struct gw_call_pool *cp);
/* FREE -> NEW with one reference (the client side); NULL when exhausted. */
struct gw_call *gw_call_new(struct gw_call_pool *cp, struct gw_ctx *gw);
/* The one function that changes ca_state: refuses (returns -EINVAL,
 * counts GW_CTR_ILLEGAL_TRANSITION, logs) any change not in the table. */
int gw_call_set_state(struct gw_call *c, enum gw_call_state to);
bool gw_call_transition_ok(enum gw_call_state from, enum gw_call_state to);
void gw_call_get(struct gw_call *c);
/* Last put: state must be DONE; releases the record, returns to the pool. */
void gw_call_put(struct gw_call *c);
/* The single end of every call (reply written, client gone, dropped,
 * shutdown): leaves every queue, cancels or releases the transport's
 * share, settles the XID mapping, drops the client-side reference. */
void gw_call_finalize(struct gw_call *c, enum gw_end why);
/* iovecs to write for the reply: mark+client XID, then the reply from its
 * 5th byte.  Returns the count (<= max). */
unsigned gw_call_reply_iov(const struct gw_call *c, struct iovec *iov, unsigned max);
/* Bytes gw_call_reply_iov() describes. */
size_t gw_call_reply_bytes(const struct gw_call *c);

/* ------------------------------------------------------------------------
 * THE TRANSPORT SEAM
 *
 * A transport carries calls of one path (a route: program -> backend) to
 * its server.  The gateway owns the call; the transport borrows it:
 *
 *   submit   gw -> tp   call in SENT state, ca_rec = the RPC call message
 *                       with the gateway XID already in its first 4 bytes
 *                       (the bytes live in the pool region: an RDMA
 *                       transport may advertise them in a read chunk).  The
 *                       transport takes a reference (gw_call_get, set
 *                       ca_tp_owned) and returns 0; or returns -EAGAIN
 *                       without taking it when it cannot carry calls now
 *                       (not connected, no credit): the gateway holds the
 *                       call and submits again after gw_path_ready(up).
 *                       Any other negative errno fails the call for good.
 *   complete tp -> gw   gw_call_complete(call, iov, niov): the reply, whole
 *                       RPC message starting at its XID (the gateway XID);
 *                       the iovecs stay valid until release.
 *   release  gw -> tp   the reply was written to the client or the client is
 *                       gone: free the reply memory (invalidate registrations)
 *                       and gw_call_put() the transport's reference.
 *   cancel   gw -> tp   the client is gone before any reply: forget the call
 *                       (a reply arriving later is dropped as unmatched) and
 *                       gw_call_put().  The transport may delay the put until
 *                       its memory is safe (RDMA: registrations invalidated).
 *
 * Connection loss: a transport keeps the calls it accepted and re-sends
 * them, same gateway XID, once reconnected (the server's DRC then answers
 * duplicates); it reports up/down with gw_path_ready().
 * ------------------------------------------------------------------------ */
/* What a transport tells of itself (to_info). */
#define GW_TP_INFO_CONNS	8
struct gw_tp_conn_info {
	bool tc_up;
	unsigned tc_credits;		/* granted by the server */
	unsigned tc_inflight;		/* credits in use */
	uint32_t tc_send_threshold, tc_recv_threshold;
};
struct gw_tp_info {
	unsigned ti_nconns;
	struct gw_tp_conn_info ti_conn[GW_TP_INFO_CONNS];
	unsigned ti_queued;		/* calls waiting for a credit */
	unsigned ti_inflight;		/* calls sent, reply pending */
	/* server context counters (shared by the paths of one backend) */
	const void *ti_server;		/* identity, to count a server once */
	uint64_t ti_connects, ti_disconnects, ti_rejects, ti_resent;
	uint64_t ti_err_vers, ti_err_chunk;	/* RDMA_ERROR received, by kind */
	uint64_t ti_unknown_xid, ti_bad_reply, ti_write_overrun;	/* replies dropped */
	uint64_t ti_wc_errors, ti_flushed;
	uint64_t ti_mw_binds, ti_local_inv, ti_remote_inv, ti_mr_regs;
	uint64_t ti_ccp_ok, ti_ccp_fallback;	/* CONF_RDMA applied / RFC 8797 values kept */
	uint64_t ti_long_replies, ti_rdma_done;	/* replies pulled by RDMA Read, RDMA_DONE sent */
	uint64_t ti_read_depth_refused, ti_drain_timeouts;
	uint64_t ti_bc_calls, ti_bc_replies, ti_bc_dropped;	/* RFC 8167 backchannel */
};

struct gw_transport_ops {
	const char *to_name;
	/* Create the transport of path (connect asynchronously); NULL on error. */
	void *(*to_create)(struct gw_ctx *gw, struct gw_path *path);
	/* Stop: cancel every call still owned, close, free. */
	void (*to_destroy)(void *tp);
	int (*to_submit)(void *tp, struct gw_call *call);
	void (*to_release)(void *tp, struct gw_call *call);
	void (*to_cancel)(void *tp, struct gw_call *call);
	/* Optional (NULL: nothing to tell): connections, credits, server-side
	 * counters for the admin listener and the control socket. */
	int (*to_info)(void *tp, struct gw_tp_info *ti);
	/* Optional (backchannel, RFC 8167): answer the server's CALL handle
	 * (given to gw_cb_call) with the RPC reply iov (server's XID first),
	 * or only release it (niov 0).  Releases handle in every case. */
	int (*to_cb_reply)(void *tp, void *handle, const struct iovec *iov, unsigned niov);
};

/* Transport -> gateway */
void gw_call_complete(struct gw_call *c, const struct iovec *iov, unsigned niov);
void gw_path_ready(struct gw_path *path, bool up);
/* The in-flight call of this path carrying gateway XID gxid, or NULL. */
struct gw_call *gw_path_lookup(struct gw_path *path, uint32_t gxid);
/* A CALL from the server on the path's backchannel (NFSv4.1 callback):
 * msg is the whole RPC call (server's XID first), valid until the gateway
 * answers or drops it through to_cb_reply(handle). */
void gw_cb_call(struct gw_path *path, void *handle, const struct iovec *msg, unsigned niov);

/* What a transport may read of its path. */
struct gw_path_info {
	const struct cfg_backend *pi_backend;
	const struct cfg_route *pi_route;
	struct gw_pool *pi_pool;
	const struct gw_log *pi_log;
	struct gw_stats *pi_stats;
	struct event_base *pi_base;
	const struct cfg *pi_cfg;
	unsigned pi_backend_slot;	/* stable id of the backend while it lives (< GW_BACKEND_SLOTS) */
};
const struct gw_path_info *gw_path_info(const struct gw_path *path);
const char *gw_path_name(const struct gw_path *path);

extern const struct gw_transport_ops gw_transport_tcp;	/* transport_tcp.c (const table) */

/* RPC-over-RDMA transport (transport_rdma.c, over backend-rdma/): one
 * struct gw_rdma per event loop holds a backend context per server and the
 * pool registrations; pass it as gp_rdma_arg with gp_rdma_ops =
 * &gw_transport_rdma.  Free it after gw_ctx_free(), before gw_pool_free(). */
extern const struct gw_transport_ops gw_transport_rdma;
struct gw_rdma;
struct gw_rdma *gw_rdma_new(struct event_base *base, struct gw_pool *pool, const struct gw_log *lg,
			    struct gw_stats *st);
void gw_rdma_free(struct gw_rdma *r);

/* ------------------------------------------------------------------------
 * Backchannel relay - callback.c (pure state; the glue is in gateway.c)
 *
 * The server sends NFSv4.1 callbacks on the RDMA connection a session's
 * CREATE_SESSION (or BIND_CONN_TO_SESSION) came on, i.e. to the gateway.
 * The session map says which client TCP connection owns each session's
 * back channel (RFC 8881 2.10.3.1: CREATE_SESSION4_FLAG_CONN_BACK_CHAN,
 * BIND_CONN_TO_SESSION with CDFS4_BACK or CDFS4_BOTH); the relay table
 * keeps each callback forwarded to a client under a gateway XID until the
 * client's REPLY comes back on that same connection.
 * ------------------------------------------------------------------------ */
#define GW_CB_SESSIONID_LEN	CHK_NFS4_SESSIONID_SIZE
#define GW_CB_TIMEOUT_MS	5000	/* below nfsd's callback timeout (lease/10: 9 s by default) */

/* The decoders it routes by are chunking's chk_cb_parse_*() (nfs_cb.c). */

/* Session map: sessionid -> owning client connection (opaque pointer)
 * and the client key it had (fe_conn_key). */
struct gw_cb_sessions;
struct gw_cb_sessions *gw_cbs_new(unsigned capacity);
void gw_cbs_free(struct gw_cb_sessions *m);
/* The connection owner took the session's back channel; true when that
 * changed the map (new session or new owner). */
bool gw_cbs_bind(struct gw_cb_sessions *m, const uint8_t *sid, void *owner, uint64_t key);
/* SEQUENCE seen on owner: re-binds only a session that has no live owner
 * and was owned under the same client key (a reconnect of that client);
 * never takes a session away from a live connection.  true when re-bound. */
bool gw_cbs_seen(struct gw_cb_sessions *m, const uint8_t *sid, void *owner, uint64_t key);
void *gw_cbs_owner(const struct gw_cb_sessions *m, const uint8_t *sid);
/* owner closed: its sessions become ownerless (their key is kept). */
void gw_cbs_owner_gone(struct gw_cb_sessions *m, const void *owner);
unsigned gw_cbs_count(const struct gw_cb_sessions *m);
unsigned gw_cbs_ownerless(const struct gw_cb_sessions *m);

/* Relay table: callbacks forwarded and not yet answered. */
struct gw_cb_pend {
	bool cbp_used;
	void *cbp_conn;			/* client connection it was sent to */
	uint32_t cbp_cxid;		/* gateway XID on that connection */
	uint32_t cbp_sxid;		/* server's XID */
	void *cbp_handle;		/* transport's handle of the server's CALL */
	struct gw_path *cbp_path;
	uint64_t cbp_deadline_ms;
};
struct gw_cb_relay;
struct gw_cb_relay *gw_cbr_new(unsigned capacity, uint32_t first_xid);
void gw_cbr_free(struct gw_cb_relay *r);
/* A slot with a gateway XID unique among those pending on conn; NULL when full. */
struct gw_cb_pend *gw_cbr_add(struct gw_cb_relay *r, void *conn, uint32_t sxid, void *handle,
			      struct gw_path *path, uint64_t deadline_ms);
struct gw_cb_pend *gw_cbr_find(struct gw_cb_relay *r, const void *conn, uint32_t cxid);
void gw_cbr_remove(struct gw_cb_relay *r, struct gw_cb_pend *p);
/* Any pending entry with conn (NULL: any at all) / with a deadline <= now. */
struct gw_cb_pend *gw_cbr_first_of(struct gw_cb_relay *r, const void *conn);
struct gw_cb_pend *gw_cbr_first_expired(struct gw_cb_relay *r, uint64_t now_ms);
unsigned gw_cbr_count(const struct gw_cb_relay *r);

/* ------------------------------------------------------------------------
 * Gateway context and routing - gateway.c
 * ------------------------------------------------------------------------ */
struct gw_ctx_params {
	struct event_base *gp_base;
	const struct cfg *gp_cfg;
	struct gw_log *gp_log;
	struct gw_stats *gp_stats;
	struct gw_pool *gp_pool;
	unsigned gp_ncalls;		/* call objects */
	/* transport for routes asking for rdma: NULL = TCP fallback */
	const struct gw_transport_ops *gp_rdma_ops;
	void *gp_rdma_arg;		/* its context (struct gw_rdma) */
	/* Called once, when every path has been up (systemd READY=1). */
	void (*gp_all_up)(void *arg);
	void *gp_all_up_arg;
};
struct gw_ctx *gw_ctx_new(const struct gw_ctx_params *p);
/* Creates the transports of every route (they connect asynchronously). */
int gw_ctx_start(struct gw_ctx *gw);
void gw_ctx_set_frontend(struct gw_ctx *gw, struct fe_frontend *fe);
/* Reload with routes and backends: apply d = cfg_diff(running, cf), which
 * must have no CFG_ACT_RESTART.  Added backends and routes get new paths
 * whose transports connect; removed or changed ones are retired: no new
 * call is routed to them, their held calls move to the program's new path
 * (or end, counted as failed, when the program has no route any more),
 * calls in flight complete, then the transport is destroyed and the slot
 * freed (from the event loop).  Kept paths keep their transport, calls and
 * XID map.  All or nothing: -ENOSPC (more paths or backends than
 * GW_PATH_SLOTS/GW_BACKEND_SLOTS with those still retiring) or -ENOMEM
 * leave everything as it was, reason in err.  Paths and backends keep
 * copies of their sections: nothing points into the old cfg afterwards. */
#define GW_BACKEND_SLOTS	(2 * CFG_MAX_BACKENDS)
#define GW_PATH_SLOTS		(2 * CFG_MAX_ROUTES)
int gw_ctx_reload(struct gw_ctx *gw, const struct cfg *cf, const struct cfg_diff *d, char *err,
		  size_t errlen);
/* Set the RDMA transport when a reload brings the first rdma route. */
void gw_ctx_set_rdma(struct gw_ctx *gw, const struct gw_transport_ops *ops, void *arg);
/* Paths retired by a reload that still finish calls (control socket). */
unsigned gw_ctx_nretiring(const struct gw_ctx *gw);
struct gw_path *gw_ctx_retiring(struct gw_ctx *gw, unsigned i);
bool gw_path_retiring(const struct gw_path *pa);
/* Calls of the path not finalized yet (held or sent). */
unsigned gw_path_ncalls(const struct gw_path *pa);
void gw_ctx_free(struct gw_ctx *gw);
const struct gw_log *gw_ctx_log(const struct gw_ctx *gw);
struct gw_stats *gw_ctx_stats(struct gw_ctx *gw);
struct gw_pool *gw_ctx_pool(struct gw_ctx *gw);
const struct cfg *gw_ctx_cfg(const struct gw_ctx *gw);
struct event_base *gw_ctx_base(const struct gw_ctx *gw);
unsigned gw_ctx_calls_avail(const struct gw_ctx *gw);
void *gw_ctx_rdma_arg(const struct gw_ctx *gw);
unsigned gw_ctx_ncalls(const struct gw_ctx *gw);

/* Frontend -> gateway: a complete record from a client; the gateway takes
 * the record's buffer references.  Returns 0, or -EPROTO when the record is
 * not an RPC call header at all (the frontend closes the client). */
int gw_on_record(struct gw_ctx *gw, struct fe_conn *conn, struct gw_rec *rec);
/* Frontend -> gateway: a client connection is closing: every call it still
 * has is finalized (GW_END_CLIENT_GONE). */
void gw_on_conn_close(struct gw_ctx *gw, struct fe_conn *conn);

/* Introspection and operator actions (admin listener, control socket). */
unsigned gw_ctx_npaths(const struct gw_ctx *gw);
struct gw_path *gw_ctx_path(struct gw_ctx *gw, unsigned i);
struct fe_frontend *gw_ctx_frontend(const struct gw_ctx *gw);
bool gw_path_up(const struct gw_path *pa);
bool gw_path_draining(const struct gw_path *pa);
unsigned gw_path_nheld(const struct gw_path *pa);
const char *gw_path_transport(const struct gw_path *pa);
/* -ENOTSUP when the transport has no to_info. */
int gw_path_tp_info(const struct gw_path *pa, struct gw_tp_info *ti);
/* Drain: new calls of the path are held (as during an outage) while the
 * calls in flight finish; undrain submits them. */
void gw_path_set_drain(struct gw_path *pa, bool on);

/* ------------------------------------------------------------------------
 * Operations: metrics, admin listener, control socket
 * ------------------------------------------------------------------------ */
/*
 * Operations interfaces of rpcrdma-gw (prefix gw_): metrics in the
 * Prometheus text format (metrics.c), the HTTP admin listener with
 * /metrics, /healthz and /readyz (admin.c, gw_admin_*), and the control
 * socket that rpcrdma-gwctl talks to (control.c, gw_ctl_*).
 *
 * Neither listener is on the data path: failing to open one is logged and
 * counted, and the gateway runs without it.
 *
 * Return conventions: constructors return NULL (errno set) on failure.
 */
struct evbuffer;

/* metrics.c */
/* The whole exposition; gw may be NULL (counters and histograms only). */
void gw_metrics_render(struct evbuffer *out, const struct gw_stats *st, struct gw_ctx *gw);
const char *gw_prog_name(uint32_t prog);			/* NULL when unknown */
const char *gw_proc_name(uint32_t prog, uint32_t vers, uint32_t proc);	/* NULL when unknown */
/* Ready: at least one path's transport is up. */
bool gw_ctx_ready(struct gw_ctx *gw);

/* admin.c: HTTP on cf_admin_listen. */
struct gw_admin;
struct gw_admin *gw_admin_new(struct event_base *base, struct gw_ctx *gw,
			      const struct sockaddr *sa, socklen_t len);
void gw_admin_free(struct gw_admin *ad);
uint16_t gw_admin_port(const struct gw_admin *ad);	/* bound port (tests: port 0) */

/* control.c: line protocol on a Unix stream socket (docs/operations.md).
 * Requests: one line, "COMMAND [ARG] [json]"; reply: lines of text (or one
 * JSON line) ending with a line "." (ok) or "!ERR reason". */
struct gw_ctl;
struct gw_ctl_hooks {
	/* reload the configuration file; 0 or negative errno, reason in msg */
	int (*ch_reload)(void *arg, char *msg, size_t len);
	/* set the log level (enum cfg_log_level) */
	void (*ch_log_level)(void *arg, int level);
	const char *(*ch_config_path)(void *arg);
	void *ch_arg;
};
struct gw_ctl *gw_ctl_new(struct event_base *base, struct gw_ctx *gw, const char *path,
			  const struct gw_ctl_hooks *hooks);
void gw_ctl_free(struct gw_ctl *ctl);
/* Run one command line and append the answer to out (also used by tests). */
void gw_ctl_exec(struct gw_ctl *ctl, const char *line, struct evbuffer *out);

/* ------------------------------------------------------------------------
 * rpcbind_register
 * ------------------------------------------------------------------------ */
/*
 * rpcbind_register (rpcb_reg.c): the gateway's listeners in the LOCAL
 * rpcbind, so clients that ask rpcbind (the kernel's lockd for NLM, mount.nfs
 * for MOUNT) find the gateway.  The plan (what to register) is a pure
 * function of the configuration and the listener addresses; registering
 * goes through gw_rpcb_ops so tests can stand in for rpcbind.
 */
#define GW_RPCB_MAX	64	/* program/version/netid triples */

struct gw_rpcb_entry {
	uint32_t re_prog, re_vers;
	char re_netid[8];	/* "tcp" or "tcp6" */
	char re_uaddr[64];	/* universal address, RFC 5665 section 5.2.3 */
	uint16_t re_port;
	bool re_if_free;	/* NFS, NFS_ACL: only when nobody has it (nfsd usually does) */
	bool re_ours;		/* set by us (or our own stale entry): unset at exit */
};

/* What rpcbind_register sets for cf's routes on listeners addrs[0..naddrs):
 * each well-known routed program (MOUNT v1-3, NLM v1,3,4, NSM v1, NFS v3-4
 * and NFS_ACL v3 if free) at the versions its route serves, once per netid
 * (the first listener of each address family wins: rpcbind holds one
 * mapping per program/version/netid).  Returns the count, at most max. */
unsigned gw_rpcb_plan(const struct cfg *cf, const struct sockaddr_storage *addrs, unsigned naddrs,
		      struct gw_rpcb_entry *out, unsigned max);

struct gw_rpcb_ops {
	/* 0 set; 1 held by someone, its port in *holder; -1 failure (msg) */
	int (*ro_set)(uint32_t prog, uint32_t vers, const char *netid, const char *uaddr,
		      uint16_t *holder, char *msg, size_t msglen);
	/* 0 removed; 1 no longer ours, left; -1 failure (msg) */
	int (*ro_unset)(uint32_t prog, uint32_t vers, const char *netid, uint16_t port, char *msg,
			size_t msglen);
};
extern const struct gw_rpcb_ops gw_rpcb_tirpc;	/* the local rpcbind via libtirpc */

struct gw_rpcb_reg {
	const struct gw_rpcb_ops *rr_ops;
	struct gw_rpcb_entry rr_e[GW_RPCB_MAX];
	unsigned rr_n;
};

/* Sets every planned entry; a conflict or failure is logged, counted and
 * skipped.  Returns how many entries are now ours. */
unsigned gw_rpcb_register(struct gw_rpcb_reg *rr, const struct gw_log *lg, struct gw_stats *st);
/* Unsets exactly the entries that are ours (idempotent). */
void gw_rpcb_unregister(struct gw_rpcb_reg *rr, const struct gw_log *lg, struct gw_stats *st);

#endif /* RPCRDMA_GW_GATEWAY_H */
