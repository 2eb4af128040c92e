/* SPDX-License-Identifier: MIT */
/*
 * This file contains the RPC-over-RDMA transport's per-call state
 * (transport_rdma.c), embedded in the gateway's call (call.h, ca_tp) the way
 * the kernel embeds its rpcrdma_req in the rpc_rqst: no parallel array per
 * path, the call reached back with container_of.
 */
#ifndef RPCRDMA_GW_TRANSPORT_RDMA_H
#define RPCRDMA_GW_TRANSPORT_RDMA_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "backend.h"
#include "chunking.h"

#define GW_RDMA_OUT_IOV		(2 * BE_MAX_TARGET_IOV + 3 * CHK_WALK_MAX_ITEMS + 8)
#define GW_RDMA_MAX_BUFS	((BE_MAX_WRITE_CHUNKS + 1) * BE_MAX_TARGET_IOV + 1)

struct gr_path;
struct gw_buf;

/*
 * One state for what the transport and the backend hold of a call
 * (gr_call_set() in transport_rdma.c is the only writer):
 *
 *   IDLE -> POSTED -> REPLIED -> IDLE     reply handed to the gateway, released
 *             |   \-> FAILED  -> IDLE     backend error or reply not fitting: finalized
 *             |   \-> ORPHAN  -> IDLE     cancelled on the wire: ends at its callback
 *             \-> IDLE                    refused by the backend, or cancelled while queued
 */
enum gw_rdma_call_state {
	GW_RDMA_CALL_IDLE = 0,	/* not the transport's (zero: the pool's calloc) */
	GW_RDMA_CALL_POSTED,	/* submitted to the backend, callback awaited */
	GW_RDMA_CALL_ORPHAN,	/* cancelled on the wire, callback awaited */
	GW_RDMA_CALL_REPLIED,	/* callback seen, reply iovecs handed to the gateway */
	GW_RDMA_CALL_FAILED,	/* callback seen, call being finalized (cancel ends it) */
	GW_RDMA_CALL__COUNT
};

struct gw_rdma_call {
	enum gw_rdma_call_state gc_state;
	struct gr_path *gc_path;
	struct be_req gc_req;		/* the backend's call (IDLE when not submitted) */
	uint64_t gc_t0_us;		/* submitted (RDMA leg histogram) */
	unsigned gc_nwrites;
	unsigned gc_nbufs;
	unsigned gc_nout;
	struct be_target gc_wt[BE_MAX_WRITE_CHUNKS];
	struct be_target gc_rt;
	struct be_read_item gc_reads[BE_MAX_READ_ITEMS];
	struct iovec gc_body;		/* inline reply copied out of the receive buffer */
	struct iovec gc_wiov[BE_MAX_WRITE_CHUNKS][BE_MAX_TARGET_IOV];
	struct iovec gc_riov[BE_MAX_TARGET_IOV];
	struct gw_buf *gc_bufs[GW_RDMA_MAX_BUFS];
	struct iovec gc_out[GW_RDMA_OUT_IOV];	/* the reply as the client gets it */
};

/* What a server's reply did wrong (rdma_reply.c); append-only, the
 * metric server_bad_reply_total{reason} names them. */
enum gw_rdma_bad {
	GW_RDMA_BAD_NONE = 0,
	GW_RDMA_BAD_OVERRUN,	/* reported more than was offered, or placed it elsewhere */
	GW_RDMA_BAD_SHAPE,	/* lengths that do not add up, too many pieces */
	GW_RDMA_BAD_LENGTH,	/* a result's length word is not what its chunk received */
	GW_RDMA_BAD_DECODE,	/* the RPC reply does not decode as the call's reply */
	GW_RDMA_BAD_HEADER,	/* transport header undecodable or of the wrong shape (backend) */
	GW_RDMA_BAD__COUNT
};
const char *gw_rdma_bad_str(enum gw_rdma_bad why);
/* r (a BE_OK reply of gc's call) against what gc offered. */
enum gw_rdma_bad gw_rdma_reply_bound(const struct gw_rdma_call *gc, const struct be_reply *r);
/* The TCP reply's iovecs (gc_out, gc_nout) from the RPC reply body and the
 * write-chunk data (wlen[i] bytes placed in chunk i of nw); hdr and gss
 * (the walkers' view of the flavor) are the call's. */
enum gw_rdma_bad gw_rdma_reply_assemble(struct gw_rdma_call *gc, const struct rpc_call_hdr *hdr,
					uint32_t gss, const struct iovec *body, unsigned nbody,
					const uint32_t *wlen, unsigned nw, enum chk_walk_err *werr);

/*
 * Quarantine (rdma_quar.c): the RPCSEC_GSS calls of a client host whose
 * call made the server close a connection go, for GW_QUAR_MS after its
 * latest such call, on an RDMA connection of their own
 * (be_pool_new_isolated), so that a repeat closes that one only.  At most
 * GW_QUAR_SOURCES hosts per path and worker, one connection each; a host
 * beyond that stays on the shared connections (gw_quar_enter -ENOSPC).
 * The table is scanned only for GSS calls and only while a host is in it.
 */
#define GW_QUAR_SOURCES	8
#define GW_QUAR_MS	(10u * 60 * 1000)

struct gw_client;
struct gw_path;
struct gw_quar_slot {
	uint8_t qs_src[16];		/* the host's address (IPv4 mapped) */
	uint64_t qs_until_ms;		/* quarantine ends (0: slot free) */
	struct be_pool *qs_pool;	/* its connection */
};
/* Set by the transport once its shared pool exists (zeroed before). */
struct gw_quar {
	struct gw_quar_slot qt_slot[GW_QUAR_SOURCES];
	unsigned qt_live;		/* slots in use, ended ones too until reused */
	struct be_ctx *qt_ctx;		/* the path's server context */
	struct sockaddr_storage qt_addr;	/* the server, as the shared pool has it */
	socklen_t qt_addrlen;
	struct be_pool *qt_shared;	/* the path's shared pool */
	struct gw_path *qt_path;
};
struct gw_call;
struct gw_stats;
/* The pool call c goes on; sets BE_CALL_NO_RESEND in *flags for GSS. */
struct be_pool *gw_quar_pick(struct gw_quar *qt, const struct gw_call *c, unsigned *flags,
			     struct gw_stats *st);
/* cl's call made the server close a connection: its host is quarantined
 * from now (or again), counted and logged; a host beyond the bound, or
 * without an address (an adopted socket), stays on the shared ones. */
void gw_quar_enter(struct gw_quar *qt, const struct gw_client *cl, uint64_t now_ms);
/* Every connection freed (its calls end with BE_ERR_SHUTDOWN). */
void gw_quar_free(struct gw_quar *qt);

#endif /* RPCRDMA_GW_TRANSPORT_RDMA_H */
