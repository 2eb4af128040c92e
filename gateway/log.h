/* SPDX-License-Identifier: MIT */
/*
 * This file contains the logger of rpcrdma-gw (stderr or the journal,
 * log.c and journal.c), its counters and statistics (metrics.c) and
 * the clock (prefix gw_).
 */
#ifndef RPCRDMA_GW_LOG_H
#define RPCRDMA_GW_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct chk_call_walk;
struct event_base;
struct gw_stats;

#ifndef GW_VERSION		/* set by the Makefile from debian/changelog */
#define GW_VERSION "unknown"
#endif

/* ------------------------------------------------------------------------
 * Logging (stderr or the journal) and counters
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
	/* With several workers: its number + 1, named in each line (a path
	 * of every worker says the same thing once each); 0 none. */
	unsigned gl_worker;
	enum cfg_log_format gl_format;	/* stderr lines (logfmt.c) */
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
/* A line a client or a server caused (peer: its name, a path or backend
 * name for a server): always through the per-peer rate limit, so no peer
 * can flood the log however many records it sends. */
#define gw_log_client(lg, lvl, peer, ...) do { \
	const struct gw_log_ev gw_ev_ = { .le_client = (peer) }; \
	gw_log_ev((lg), (lvl), &gw_ev_, __VA_ARGS__); \
} while (0)
#define gw_log_server(lg, lvl, peer, ...) do { \
	const struct gw_log_ev gw_ev_ = { .le_backend = (peer) }; \
	gw_log_ev((lg), (lvl), &gw_ev_, __VA_ARGS__); \
} while (0)
/* Rate limit state for lg->gl_rl (malloc at start); st receives the
 * suppressed count. */
struct gw_log_rl *gw_log_rl_new(struct gw_stats *st);
void gw_log_rl_free(struct gw_log_rl *rl);
/* "journal" when stderr is the journal stream (JOURNAL_STREAM names it). */
enum gw_log_target gw_log_target_auto(void);
struct gw_log_ev;
/* logfmt.c: one line on stderr in lg's gl_format (text, logfmt, JSON), its
 * time first; ev (may be NULL) adds the peer's fields.  One write. */
void gw_log_stderr(const struct gw_log *lg, enum cfg_log_level lvl, const char *func,
		   const struct gw_log_ev *ev, const char *msg);
/* The same line into buf (tests; worker: gl_worker); its length. */
size_t gw_log_format(enum cfg_log_format fmt, uint64_t unix_ms, enum cfg_log_level lvl,
		     unsigned worker, const char *func, const struct gw_log_ev *ev, const char *msg, char *buf,
		     size_t len);
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
	GW_CTR_CLIENT_TOO_FRAGMENTED,	/* record over GW_REC_MAX_IOV buffers even compacted */
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
	GW_CTR_BACKEND_READDRESSED,	/* RDMA server's name now resolves elsewhere */
	GW_CTR_BACKEND_RESENT,		/* calls re-sent after a reconnect */
	GW_CTR_BACKEND_GARBAGE,		/* bad record from a server: connection reset */
	GW_CTR_BACKEND_UNMATCHED,	/* reply with no call waiting (cancelled, dup) */
	GW_CTR_BACKEND_NOT_REPLY,	/* server sent a CALL (backchannel): dropped */
	GW_CTR_PATH_FALLBACKS,		/* an rdma route went onto its TCP fallback */
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
	GW_CTR_BYTES_COPIED,		/* payload bytes copied (inline reply out of its receive buffer;
					 * records in many fragments, compacted) */
	GW_CTR_BYTES_SCRUBBED,		/* target bytes zeroed: they held another client's bytes */
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
	GW_CTR_CB_FAILED,	/* no room (output slot, buffer, relay slot) or send failed */
	GW_CTR_CB_SESSIONS_BOUND,	/* NFSv4.1 sessions bound to a client connection */
	GW_CTR_ADMIN_BAD_METHOD,	/* admin HTTP: not GET or HEAD, answered 405 */
	GW_CTR_ADMIN_CONN_LIMIT,	/* admin HTTP: GW_ADMIN_MAX_CONNS reached, accepting paused */
	GW_CTR_ADMIN_UNSERVED,		/* admin HTTP: closed with a request unanswered (too large...) */
	GW_CTR_ADMIN_UNAUTHORIZED,	/* admin HTTP: no or wrong bearer token, answered 401 */
	GW_CTR_LOCAL_SYSTEM_ERR,	/* call failed for good (refused, bad server reply): SYSTEM_ERR */
	/* server_bad_reply_total{reason}: RDMA replies that would hand out
	 * more than the server placed (transport_rdma.h, enum gw_rdma_bad order) */
	GW_CTR_SERVER_BAD_OVERRUN,
	GW_CTR_SERVER_BAD_SHAPE,
	GW_CTR_SERVER_BAD_LENGTH,
	GW_CTR_SERVER_BAD_DECODE,
	GW_CTR_SERVER_BAD_HEADER,
	GW_CTR_CALL_TIMEOUTS,		/* no server reply within call_timeout: client closed */
	/* admission (frontend-tcp/fe_admit.h): in enum fe_adm_verdict order */
	GW_CTR_ADM_DENY,		/* address in deny = */
	GW_CTR_ADM_NOT_ALLOWED,		/* allow = set, address not in it */
	GW_CTR_ADM_INSECURE_PORT,	/* secure_port: source port >= 1024 */
	GW_CTR_ADM_PER_SOURCE_CAP,	/* max_conns_per_source reached */
	GW_CTR_ADM_PROXY,		/* PROXY v2 header absent, malformed or late */
	/* credential policy (gateway/authpol.c) */
	GW_CTR_AUTHPOL_SQUASHED,	/* AUTH_SYS credential rewritten by squash */
	GW_CTR_AUTHPOL_AUTH_NONE,	/* AUTH_NONE call refused: AUTH_TOOWEAK */
	GW_CTR_AUTHPOL_BADCRED,		/* AUTH_SYS body undecodable under squash: AUTH_BADCRED */
	GW_CTR_CLIENT_WRITE_TIMEOUT,	/* replies queued, none written for write_timeout: closed */
	GW_CTR_CLIENT_EVICTED,		/* replies not read while the pool was short: closed */
	GW_CTR_GSS_XID_WAIT,		/* RPCSEC_GSS call waited: its XID was busy on the backend */
	/* NFSv4.0 callbacks (cb40.c) */
	GW_CTR_CB40_RELAYED,		/* callback replies relayed from a client to the server */
	GW_CTR_CB40_REWRITTEN,		/* SETCLIENTID cb_location set to the gateway's listener */
	GW_CTR_CB40_CLEARED,		/* SETCLIENTID cb_location cleared (off, or no service named) */
	GW_CTR_CB40_READDRESSED,	/* cb_location's host not the client's: its own address used */
	GW_CTR_CB40_EVICTED,		/* registration table full: the oldest forgotten */
	GW_CTR_CB40_FAIL_UNPARSED,	/* SETCLIENTID not rewritten: its cb_location undecodable */
	GW_CTR_CB40_FAIL_NO_CLIENT,	/* callback for a cb_program no client registered */
	GW_CTR_CB40_FAIL_CONNECT,	/* client's callback address unreachable or lost */
	GW_CTR_CB40_FAIL_TIMEOUT,	/* client did not answer in GW_CB40_TIMEOUT_MS */
	GW_CTR_CB40_FAIL_FULL,		/* no room (connection, pending slot, buffer) */
	GW_CTR_CB40_FAIL_BAD,		/* malformed record or unmatched reply */
	/* system calls of the data path (syscalls_total, metrics.c) */
	GW_CTR_SYS_CLIENT_RECV,		/* recv() on client sockets */
	GW_CTR_SYS_CLIENT_WRITEV,	/* writev() on client sockets */
	GW_CTR_SYS_SERVER_RECV,		/* recv() on TCP backend sockets */
	GW_CTR_SYS_SERVER_WRITEV,	/* writev() on TCP backend sockets */
	GW_CTR_SYS_LOOP_WAIT,		/* event loop passes that ran callbacks (gw_loop_run) */
	GW_CTR_SYS_CLOCK,		/* precise clock reads (gw_pass_us) */
	/* RPC-with-TLS (frontend-tcp/fe_tls.h) */
	GW_CTR_TLS_PROBES,		/* AUTH_TLS probes answered STARTTLS */
	GW_CTR_TLS_HANDSHAKES,		/* TLS sessions established */
	GW_CTR_TLS_KTLS_TX,		/* of them, sending through kernel TLS */
	GW_CTR_TLS_KTLS_RX,		/* of them, receiving through kernel TLS */
	/* tls_refused_total{reason}: in enum fe_tls_reason order */
	GW_CTR_TLS_REFUSED_PLAINTEXT,	/* call before TLS on tls = required: AUTH_TOOWEAK, closed */
	GW_CTR_TLS_REFUSED_EARLY_DATA,	/* bytes after the probe, before its reply was read */
	GW_CTR_TLS_REFUSED_PROBE_BUSY,	/* probe with calls in flight or replies queued */
	GW_CTR_TLS_REFUSED_NOT_TLS,	/* no TLS handshake record after the probe */
	GW_CTR_TLS_REFUSED_VERSION,	/* client offers no TLS 1.3 */
	GW_CTR_TLS_REFUSED_ALPN,	/* client offers no ALPN "sunrpc" */
	GW_CTR_TLS_REFUSED_CLIENT_CERT,	/* client certificate missing or not verified */
	GW_CTR_TLS_REFUSED_HANDSHAKE,	/* any other handshake failure */
	GW_CTR_TLS_REFUSED_IDENTITY,	/* client certificate names no tls_allow_identity */
	/* NLM lock owners per client (nlm_map.c) */
	GW_CTR_NLM_MAPPED,		/* NLM call whose owner (svid) was mapped to the gateway's */
	GW_CTR_NLM_OWNER_REFUSED,	/* svid not below 2^22, or no alock: refused, never sent */
	GW_CTR_NLM_HOLDER_MAPPED,	/* NLM TEST reply: holder svid mapped back */
	GW_CTR_NLM_REBOOTS,		/* client reboot notifications (SM_NOTIFY, FREE_ALL) */
	GW_CTR_NLM_RELEASED,		/* that client's locks released (UNLOCK granted) */
	GW_CTR_NLM_RELEASE_FAILED,	/* release UNLOCK not sent or not granted */
	GW_CTR_NLM_TRACK_FULL,		/* granted lock not tracked (per-client cap) */
	GW_CTR_NLM_GRANT_RELAYED,	/* server's GRANTED_MSG delivered to its client */
	GW_CTR_NLM_GRANT_REFUSED,	/* GRANTED_MSG for a mapped owner from no backend: dropped */
	GW_CTR_NLM_GRANT_FAILED,	/* GRANTED_MSG not delivered (lookup, connect, slots) */
	GW_CTR_NLM_SHARE_MAPPED,	/* SHARE/UNSHARE sent with the client's oh made unique */
	GW_CTR_NLM_SHARE_REFUSED,	/* SHARE/UNSHARE that could not be mapped: answered here */
	GW_CTR_NLM_SHARE_RELEASED,	/* that client's shares released (UNSHARE granted) */
	GW_CTR_NLM_SERVER_REBOOT,	/* SM_NOTIFY from a backend: the server's locks are gone */
	GW_CTR_NLM_NOTIFY_RELAYED,	/* that SM_NOTIFY delivered to a client host's statd */
	GW_CTR_NLM_NOTIFY_FAILED,	/* ... not delivered (lookup, connect, queue, timeout) */
	GW_CTR_LOCAL_NLM_NOTIFY,	/* SM_NOTIFY, FREE_ALL of a client: answered here */
	GW_CTR_NSM_UDP_NOTIFY,		/* SM_NOTIFY over UDP acted on (nsm_udp.c) */
	GW_CTR_NSM_UDP_DUPLICATE,	/* ... again (same sender, same state): answered only */
	GW_CTR_NSM_UDP_REFUSED,		/* other program/version/procedure, bad arguments: answered */
	GW_CTR_NSM_UDP_DROPPED,		/* oversized or no RPC call: no answer */
	GW_CTR_CB40_FAIL_PEER,		/* connection to the callback listener not from a backend */
	GW_CTR_CB40_FAIL_SELF,		/* cb_location named a port of the gateway's own host */
	GW_CTR_SERVER_CLOSED_FOR_CLIENT,	/* client closed: the server closed the RDMA
					 * connection its RPCSEC_GSS call was on (call_end.c) */
	GW_CTR_GSS_QUAR_ENTERED,	/* source whose GSS calls go on a connection of its own */
	GW_CTR_GSS_QUAR_CALLS,		/* GSS calls carried on such a connection */
	GW_CTR_GSS_QUAR_FULL,		/* ... none free: the source stays on the shared ones */
	GW_CTR_NLM_HOSTS_FULL,		/* new client host, every slot of its worker taken: refused */
	GW_CTR_NLM_SOURCE_FULL,		/* new client host, its source holds half the slots: refused */
	GW_CTR_NLM_CALLER_REFUSED,	/* caller_name no host name (length, characters): refused */
	GW_CTR_NLM_NSM_REFUSED,		/* NSM call of a host's own statd (SM_MON...): PROC_UNAVAIL */
	GW_CTR_NSM_UDP_NOT_ADMITTED,	/* datagram its listener's allow/deny/secure_port refuse */
	GW_CTR_NLM_SERVER_NOTIFY_REFUSED, /* SM_NOTIFY from a backend's address, port not reserved */
	GW_CTR_LOCAL_NLM_REFUSED,	/* NLM/NSM call refused by the owner map: answered here */
	/* shares of a worker's tables per client host (source.c, xmap.c) */
	GW_CTR_SRC_CALL_SHARE,		/* host at its share of call objects: not read */
	GW_CTR_SRC_SPILL,		/* source table full: connection on the spill source */
	GW_CTR_CLIENT_EVICTED_CALLS,	/* replies not read while call objects were short: closed */
	GW_CTR_SRC_GSS_WAITS,		/* host at GW_XWAIT_PER_SOURCE waiting GSS calls: not read */
	GW_CTR_CLIENT_GONE_UNREAD,	/* peer closed while not read (fe_watch.c) */
	GW_CTR_XMAP_EVICT_OWN,		/* XID map full, adding host held its share: its own oldest */
	GW_CTR_XMAP_EVICT_LARGEST,	/* XID map full: oldest of the host holding the most */
	GW_CTR__COUNT
};
const char *gw_ctr_str(enum gw_ctr c);

/* Latency histograms (metrics.c): fixed buckets, non-cumulative counts;
 * bounds in gw_hist_bound_us[] (5 us to 10 s in 1-2-5 steps), the last
 * bucket is +Inf. */
#define GW_HIST_NBUCKETS	21
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
/* Latency by NFS operation (gw_op_slot): the NFSv2 and NFSv3 procedures,
 * then NFSv4: the NULL procedure, a COMPOUND without operations, and a
 * COMPOUND by its main operation (GW_NFS4_OPS slots as gs_nfs4_op). */
#define GW_OPH_NFS2		0
#define GW_OPH_NFS3		18	/* RFC 1094: 18 procedures */
#define GW_OPH_NFS4		(GW_OPH_NFS3 + 22)	/* RFC 1813: 22 procedures */
#define GW_OPH_SLOTS		(GW_OPH_NFS4 + 2 + GW_NFS4_OPS)
struct gw_stats {
	uint64_t gs_ctr[GW_CTR__COUNT];
	struct gw_hist gs_hist[GW_HIST__COUNT];
	struct gw_hist gs_op_hist[GW_OPH_SLOTS];
	struct gw_proc_stat gs_proc[GW_STATS_PROCS];
	uint64_t gs_proc_overflow;	/* calls not counted: table full */
	uint64_t gs_nfs4_op[GW_NFS4_OPS];
	int64_t gs_tls_cert_expiry;	/* gauge: Unix time the served TLS certificate ends; 0 none */
	/* The worker's own thread's CPU time (gw_cpu_thread_us), sampled by
	 * that thread when the operations interfaces stop it (worker.c). */
	uint64_t gs_cpu_user_us, gs_cpu_sys_us;
	/* The pass clock (gw_pass_us, gw_pass_ms): a pass of gw_loop_run is
	 * running, and its precise and coarse readings (0: none taken yet). */
	bool gs_pass_on;
	uint64_t gs_pass_us;
	uint64_t gs_pass_ms;
	/* gs_pass_us was taken in the pass before this one (gw_loop_run lends
	 * it to the prewait, never across a wait). */
	bool gs_pass_us_old;
};
/* Monotonic milliseconds, read now (the coarse clock, log.c). */
uint64_t gw_now_ms(void);
/* Precise monotonic microseconds (log.c), for latencies.  Read once per
 * event loop pass, when first asked, and that reading serves the whole
 * pass (as HAProxy and nginx do): under HPET each read is a system call.
 * Outside a pass (st NULL, or no gw_loop_run) every call reads.  Each read
 * (gw_pass_us_read, which keeps it for the pass) counts in GW_CTR_SYS_CLOCK. */
uint64_t gw_pass_us_read(struct gw_stats *st);
static inline uint64_t gw_pass_us(struct gw_stats *st)
{
	if (st && st->gs_pass_on && st->gs_pass_us)
		return st->gs_pass_us;
	return gw_pass_us_read(st);
}
/* Monotonic milliseconds, the coarse clock of gw_now_ms().  Inside a pass
 * its first reading serves the whole pass: timeouts, idle times and
 * XID-cache ages are seconds, a pass is milliseconds, and a vDSO call per
 * use was about six per forwarded call.  Outside a pass every call reads. */
static inline uint64_t gw_pass_ms(struct gw_stats *st)
{
	if (!st || !st->gs_pass_on)
		return gw_now_ms();
	if (!st->gs_pass_ms)
		st->gs_pass_ms = gw_now_ms();
	return st->gs_pass_ms;
}
/* Marks a pass running or not; either way its readings are forgotten. */
static inline void gw_pass_set(struct gw_stats *st, bool on)
{
	if (st) {
		st->gs_pass_on = on;
		st->gs_pass_us = 0;
		st->gs_pass_ms = 0;
	}
}
/* metrics.c */
void gw_stats_proc(struct gw_stats *st, uint32_t prog, uint32_t vers, uint32_t proc);
void gw_stats_proc_add(struct gw_stats *st, uint32_t prog, uint32_t vers, uint32_t proc,
		       uint64_t calls);
/* opstats.c: adds src (another worker's) into dst: counters, histograms,
 * procedures; the certificate expiry is the earliest. */
void gw_stats_sum(struct gw_stats *dst, const struct gw_stats *src);
void gw_stats_observe(struct gw_stats *st, enum gw_hist_id h, uint64_t usec);
void gw_hist_add(struct gw_hist *gh, uint64_t usec);
/* The q-quantile (0..1) in microseconds, interpolated linearly inside the
 * bucket that holds it (as Prometheus' histogram_quantile); a quantile in
 * the +Inf bucket is the last finite bound; 0 with no observation. */
double gw_hist_quantile(const uint64_t *bucket, double q);
/* Slot of gs_op_hist for a call (the walk is read for NFSv4 COMPOUND), or
 * -1 when it is no NFS procedure the table has. */
int gw_op_slot(uint32_t prog, uint32_t vers, uint32_t proc, const struct chk_call_walk *cw);
/* Labels of a slot: operation name and NFS version ("2", "3", "4"). */
const char *gw_op_slot_name(unsigned slot, const char **vers);
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
/* CPU time of the calling thread (getrusage RUSAGE_THREAD), microseconds;
 * false when the kernel does not say. */
bool gw_cpu_thread_us(uint64_t *user_us, uint64_t *sys_us);
/* The i-th system call counter: its label (syscalls_total{call}) and
 * counter; NULL past the last. */
const char *gw_sys_call_name(unsigned i, enum gw_ctr *c);
/* Log every non-zero counter at info level. */
void gw_stats_log(const struct gw_stats *st, const struct gw_log *lg);

#endif /* RPCRDMA_GW_LOG_H */
