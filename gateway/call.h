/* SPDX-License-Identifier: MIT */
/*
 * This file contains the call object of rpcrdma-gw and its state machine
 * (call.c, prefix gw_call_).
 */
#ifndef RPCRDMA_GW_CALL_H
#define RPCRDMA_GW_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include "chunking.h"
#include "client.h"
#include "pool.h"
#include "transport_rdma.h"

struct gw_client;
struct gw_ctx;
struct gw_log;
struct gw_path;
struct gw_stats;
struct gw_xent;

/* ------------------------------------------------------------------------
 * The call - call.c
 *
 * State machine (design essay in call.c):
 *
 *   FREE -> NEW -> HELD <-> SENT -> REPLIED -> DONE -> FREE
 *            |      |        |                 ^
 *            +------+--------+-----------------+   (finalize: cancel, drop)
 *            NEW -> REPLIED (local reply)
 *     NEW, HELD -> XWAIT -> HELD, SENT, DONE (RPCSEC_GSS XID busy, gss_xid.c)
 * ------------------------------------------------------------------------ */
enum gw_call_state {
	GW_CALL_FREE = 0,	/* in the call pool's free list, no owner */
	GW_CALL_NEW,		/* [transient] record taken, header being decoded and routed */
	GW_CALL_HELD,		/* waiting in its path's hold queue (backend down or busy) */
	GW_CALL_SENT,		/* owned by the transport too, reply awaited */
	GW_CALL_REPLIED,	/* reply (server's or local) queued on the client output */
	GW_CALL_DONE,		/* finalized; the record is released when the last ref goes */
	GW_CALL_XWAIT,		/* RPCSEC_GSS: waiting until its XID is free on the backend */
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
	GW_END_TIMEOUT,		/* no server reply within call_timeout */
	GW_END__COUNT
};
const char *gw_end_str(enum gw_end e);

struct gw_call {
	enum gw_call_state ca_state;
	unsigned ca_refs;		/* client side + transport: last put recycles */
	uint32_t ca_index;
	struct gw_call_pool *ca_cpool;
	struct gw_ctx *ca_gw;
	struct gw_client *ca_cl;	/* client connection; NULL once it is gone */
	struct gw_path *ca_path;	/* route/transport; NULL for local replies */
	struct gw_xent *ca_xent;	/* XID mapping, NULL for local replies */
	uint32_t ca_cxid;		/* client's XID */
	uint32_t ca_gxid;		/* gateway XID, in the record while SENT */
	uint32_t ca_gss;		/* the walkers' view of ca_hdr's flavor: 0 or CHK_GSS_* */
	uint64_t ca_client;		/* client key (XID map) */
	uint64_t ca_src;		/* its source's key (XID map shares) */
	uint64_t ca_owner;		/* client connection's generation (pool bytes' owner), 0: none */
	uint64_t ca_start_ms;
	uint64_t ca_start_us;		/* latency histogram */
	uint64_t ca_sent_ms;		/* last submitted to its transport (call_timeout) */
	uint64_t ca_sent_us;		/* first hand-off to the path's transport; 0 before */
	uint64_t ca_submit_us;		/* this hand-off (transports time their leg from it) */
	bool ca_tp_owned;		/* the transport holds a reference */
	bool ca_timed_out;		/* ended by call_timeout: the transport revokes its memory */
	bool ca_on_sent;		/* on the pool's SENT list (ca_sent_link) */
	size_t ca_bytes;		/* record bytes counted against the client's cap */
	/* The reply as the client gets it: iovecs valid until the
	 * transport's release (the server's reply, or ca_local). */
	struct gw_out ca_out;
	struct gw_rec ca_rec;		/* the call message, gateway XID patched in */
	struct gw_rec ca_reply_rec;	/* storage for transports that receive into the pool */
	/* Decoded once, where the record becomes a call (gw_on_record): the
	 * transports and the metrics read these, never the bytes again.  Past
	 * the part gw_call_new clears: rpc_call_decode fills ca_hdr before any
	 * reader, chk_call_walk fills ca_walk before the call is routed. */
	struct rpc_call_hdr ca_hdr;	/* program, version, procedure, flavor, GSS fields */
	struct chk_call_walk ca_walk;	/* DDP items and reply bound; valid once routed */
	uint8_t ca_local[64];		/* local reply (rpc_local_reply) */
	struct iovec ca_local_iov;
	/* transport scratch */
	uint8_t ca_tp_mark[4];		/* TCP transport: record mark of the call */
	void *ca_tp_priv;
	/* Per-call state of the transport the call is routed to (zeroed at
	 * the pool's start, left alone by gw_call_new: each transport keeps
	 * its own state consistent across calls). */
	union {
		struct gw_rdma_call tu_rdma;	/* transport_rdma.c */
	} ca_tp;
	TAILQ_ENTRY(gw_call) ca_cl_link;	/* client's calls */
	TAILQ_ENTRY(gw_call) ca_path_link;	/* hold queue (gateway) or transport queues */
	TAILQ_ENTRY(gw_call) ca_free_link;
	TAILQ_ENTRY(gw_call) ca_sent_link;	/* SENT calls, oldest hand-off first */
};
TAILQ_HEAD(gw_call_list, gw_call);

/* Preallocated call objects (malloc at start only). */
struct gw_call_pool;
struct gw_call_pool *gw_call_pool_new(unsigned n, struct gw_pool *bufs, struct gw_stats *st,
				      const struct gw_log *lg);
void gw_call_pool_free(struct gw_call_pool *cp);
unsigned gw_call_pool_avail(const struct gw_call_pool *cp);
/* The SENT call handed to its transport longest ago, NULL when none: each
 * entry into SENT goes to the tail, so call_timeout looks at the head only. */
struct gw_call *gw_call_pool_oldest_sent(struct gw_call_pool *cp);
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

#endif /* RPCRDMA_GW_CALL_H */
