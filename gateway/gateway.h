/* SPDX-License-Identifier: MIT */
/*
 * gateway.h - the gateway context of rpcrdma-gw (prefix gw_): routing of
 * RPC programs to paths (route + backend + transport), the hold queues,
 * and what the operations interfaces read of paths.  The frontend talks
 * to the gateway through the client seam (client.h).
 *
 * The other modules of gateway/ have their own headers: log.h (logging,
 * counters, statistics), pool.h (buffers, records), record.h (record
 * receiver), xmap.h, call.h, client.h (the client seam), transport.h (the
 * transport seam), callback.h (backchannel relay), ops.h (metrics, admin,
 * control), rpcb_reg.h; ctx.h is private to the context's own files.
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

#include "config.h"

struct event_base;
struct gw_ctx;
struct gw_log;
struct gw_path;
struct gw_pool;
struct gw_stats;
struct gw_tp_info;
struct gw_transport_ops;

/* ------------------------------------------------------------------------
 * Gateway context and routing - gateway.c
 * ------------------------------------------------------------------------ */
/* Why a path cannot forward a call now (gw_path_why): what its transport
 * last reported.  GW_WHY_NONE while it is up. */
enum gw_why {
	GW_WHY_NONE = 0,
	GW_WHY_STARTING,	/* not connected yet, no failure seen */
	GW_WHY_DNS,		/* the server's name does not resolve */
	GW_WHY_NO_DEVICE,	/* no RDMA device on this host */
	GW_WHY_CONNECT,		/* connection attempt failed (refused, unreachable, timeout) */
	GW_WHY_HANDSHAKE,	/* connected, but the protocol handshake failed */
	GW_WHY_LOST,		/* an established connection was lost */
	GW_WHY_NO_TRANSPORT,	/* the transport could not be created at all */
	GW_WHY__COUNT
};
#define GW_WHY_TEXT_MAX	160
/* An rdma route whose RDMA connection was up and is lost waits this long
 * (calls held, re-sent over RDMA: a server restart) before a failed
 * reconnect puts it on its TCP fallback; one that never connected goes at
 * its first failed attempt. */
#define GW_FALLBACK_GRACE_MS	10000
/* Short label (metrics, JSON): "none", "starting", "dns", "no_device"... */
const char *gw_why_str(enum gw_why why);

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
	/* Called (from the event loop) whenever a path went up or down or
	 * onto or off its TCP fallback: readiness may have changed (READY=1,
	 * STATUS=). */
	void (*gp_paths_changed)(void *arg);
	void *gp_paths_changed_arg;
	/* Worker gp_worker of gp_nworkers (worker.h; 0 of 0 or 1: the only
	 * one): its slice of gateway XIDs and NLM owner slots. */
	unsigned gp_worker, gp_nworkers;
	struct gw_nlm_names *gp_nlm_names;	/* workers > 1: shared NLM host names (nlm_map.h) */
	struct gw_backoff *gp_backoff;	/* shared rpcbind backoff (backoff.h); NULL: none */
};
struct gw_ctx *gw_ctx_new(const struct gw_ctx_params *p);
/* Creates the transports of every route (they connect asynchronously). */
int gw_ctx_start(struct gw_ctx *gw);
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
/* The frontend listens on port: a client may not name it as a service of
 * its own (the NFSv4.0 callback relay never connects there). */
void gw_ctx_own_port(struct gw_ctx *gw, uint16_t port);
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
unsigned gw_ctx_calls_avail(const struct gw_ctx *gw);
/* Fewer call objects free than the share of a client host that holds none
 * yet (gateway/source.c): replies left unread then hold what others need. */
bool gw_ctx_calls_short(const struct gw_ctx *gw);
void *gw_ctx_rdma_arg(const struct gw_ctx *gw);
unsigned gw_ctx_ncalls(const struct gw_ctx *gw);

/* Introspection and operator actions (admin listener, control socket). */
unsigned gw_ctx_npaths(const struct gw_ctx *gw);
struct gw_path *gw_ctx_path(struct gw_ctx *gw, unsigned i);
bool gw_path_up(const struct gw_path *pa);
bool gw_path_draining(const struct gw_path *pa);
unsigned gw_path_nheld(const struct gw_path *pa);
const char *gw_path_transport(const struct gw_path *pa);
/* -ENOTSUP when the transport has no to_info. */
int gw_path_tp_info(const struct gw_path *pa, struct gw_tp_info *ti);
/* Why the path is not up (GW_WHY_NONE when it is), the transport's words
 * (may be NULL), and since when (gw_now_ms() clock). */
enum gw_why gw_path_why(const struct gw_path *pa, const char **text, uint64_t *since_ms);
/* An rdma route with fallback = tcp whose new calls go over TCP now. */
bool gw_path_on_fallback(const struct gw_path *pa);
/* Its fallback path is connected (false when not on fallback). */
bool gw_path_fallback_up(const struct gw_path *pa);
/* A call of this route would be forwarded now: up (or on a connected
 * fallback), not draining. */
bool gw_path_can_forward(const struct gw_path *pa);
/* Drain: new calls of the path are held (as during an outage) while the
 * calls in flight finish; undrain submits them. */
void gw_path_set_drain(struct gw_path *pa, bool on);

#endif /* RPCRDMA_GW_GATEWAY_H */
