/* SPDX-License-Identifier: MIT */
/*
 * This file contains the transport seam of rpcrdma-gw: what a backend
 * transport implements (struct gw_transport_ops), what it calls back in
 * the gateway, what it may read of its path (struct gw_path_info), and
 * the two transports (transport_tcp.c, transport_rdma.c).
 */
#ifndef RPCRDMA_GW_TRANSPORT_H
#define RPCRDMA_GW_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "config.h"
#include "gateway.h"

struct event_base;
struct gw_backoff;
struct gw_call;
struct gw_ctx;
struct gw_log;
struct gw_path;
struct gw_pool;
struct gw_stats;

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
#define GW_TP_BE_CTRS		48	/* room for backend-rdma's BE_CTR__COUNT */
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
	uint64_t ti_be_ctr[GW_TP_BE_CTRS];	/* backend-rdma's bs_ctr[], BE_COUNTERS order */
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
/* Instead of a reply: the call failed for good (its reply from the server
 * is unusable); the client gets MSG_ACCEPTED SYSTEM_ERR and the call goes
 * on as replied (release, not cancel, gives the transport's share back). */
void gw_call_system_err(struct gw_call *c);
/* Instead of a reply: the server closed the connection c (RPCSEC_GSS) was
 * on, and c may not be sent again as it is; its client's connection is
 * closed so that the client sends it anew (call_end.c).  Finalizes c and
 * the client's other calls (to_cancel); from the event loop only. */
void gw_call_closed_by_server(struct gw_call *c);
void gw_path_ready(struct gw_path *path, bool up);
/* Why the path is not up: each failed attempt (and a lost connection,
 * before gw_path_ready(false)) tells it; shown by status, metrics and
 * /readyz.  An rdma route with fallback = tcp goes onto TCP on a failure
 * other than GW_WHY_LOST (the transport retries by itself). */
__attribute__((format(printf, 3, 4)))
void gw_path_down(struct gw_path *path, enum gw_why why, const char *fmt, ...);
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
	unsigned pi_conns;		/* RDMA connections of this worker (cfg_backend_conns) */
	struct gw_backoff *pi_backoff;	/* rpcbind backoff of the process (backoff.h), or NULL */
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
/* Before the loop may block: be_ctx_prewait() of each server's context.
 * True when completions were handled (run a pass that does not block). */
bool gw_rdma_prewait(struct gw_rdma *ra);
/* Tests only: the backends' names are resolved by fn instead of
 * getaddrinfo() (on the resolver thread; returns 0 or an EAI_* code). */
typedef int gw_rdma_resolve_fn(void *arg, const char *host, const char *port,
			       struct sockaddr_storage *addr, socklen_t *addrlen);
void gw_rdma_set_resolver(struct gw_rdma *ra, gw_rdma_resolve_fn *fn, void *arg);

#endif /* RPCRDMA_GW_TRANSPORT_H */
