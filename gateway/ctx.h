/* SPDX-License-Identifier: MIT */
/*
 * This file contains the gateway context's own structures and the
 * functions its files share: gateway.c (context, paths, routing, the call
 * path), client.c (the client seam), relay.c (the backchannel relay glue),
 * reload.c and metrics.c (per-path and per-client latency).  Nothing
 * outside those files includes it: the frontend and the transports see
 * only gateway.h, client.h and transport.h.
 */
#ifndef RPCRDMA_GW_CTX_H
#define RPCRDMA_GW_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

#include <event2/util.h>

#include "call.h"
#include "client.h"
#include "config.h"
#include "gateway.h"
#include "log.h"
#include "transport.h"
#include "xmap.h"

struct event;
struct gw_cb40;
struct gw_relay;
struct gw_nlm;

struct gw_backend {
	const struct cfg_backend *bk_cfg;	/* = &bk_ccfg */
	struct cfg_backend bk_ccfg;	/* own copy: outlives the cfg it came from */
	struct gw_xmap *bk_xmap;
	unsigned bk_slot;
	unsigned bk_npaths;		/* paths (active or retiring) using it */
	bool bk_used;
	bool bk_retiring;		/* removed by a reload: freed with its last path */
	struct gw_call_list bk_xwait;	/* RPCSEC_GSS calls waiting for their XID (gss_xid.c) */
	unsigned bk_nxwait;
};

struct gw_path {
	struct gw_ctx *pa_gw;
	struct gw_backend *pa_backend;
	const struct cfg_route *pa_route;	/* = &pa_rcfg */
	struct cfg_route pa_rcfg;
	const struct gw_transport_ops *pa_ops;
	void *pa_tp;
	bool pa_used;
	bool pa_retiring;		/* removed by a reload: finishes its calls, then freed */
	bool pa_up;
	bool pa_blocking;		/* some clients held for this queue */
	bool pa_draining;		/* operator drain (or retiring): new calls held */
	struct gw_call_list pa_held;
	unsigned pa_nheld;
	unsigned pa_ncalls;		/* calls routed here and not finalized */
	char pa_name[2 * CFG_NAME_MAX + 24];
	struct gw_path_info pa_info;
	struct gw_hist pa_hist;		/* backend_duration_seconds (metrics.c) */
	/* Why it is not up, in the transport's words, and since when. */
	enum gw_why pa_why;
	char pa_why_text[GW_WHY_TEXT_MAX];
	uint64_t pa_why_since_ms;
	/* TCP fallback of an rdma route (fallback = tcp): a path of its own
	 * to the same server, in gw_fbslots, never routed to directly.  A call
	 * that goes there counts in both pa_ncalls (the primary's reload reap
	 * waits for it) and keeps ca_path = the fallback path until it ends. */
	struct gw_path *pa_fb;		/* primary: its fallback path, once started */
	struct gw_path *pa_fb_of;	/* fallback path: its primary */
	bool pa_fb_on;			/* primary: new calls go to pa_fb */
	bool pa_seen_up;		/* its transport has been up */
	uint64_t pa_down_ms;		/* when it last went down (gw_now_ms) */
};

/* A client connection as the gateway sees it (the frontend sees only the
 * pointer). */
struct gw_client {
	struct gw_ctx *gcl_gw;
	const struct gw_client_ops *gcl_ops;
	void *gcl_arg;
	const char *gcl_name;
	uint64_t gcl_key;		/* XID map client key */
	uint64_t gcl_gen;		/* this connection, never reused: owner of pool bytes */
	struct gw_call_list gcl_calls;	/* every live call of this client */
	unsigned gcl_ncalls;		/* those calls and callbacks on their way to it */
	size_t gcl_bytes;		/* call records of those calls */
	bool gcl_hold;			/* a hold queue it feeds is full */
	bool gcl_closing;
	unsigned gcl_listener;		/* its listener: index in cf_listeners */
	int gcl_squash;			/* squash its certificate sets, or -1 (listener's) */
	bool gcl_has_src;		/* gcl_src known: a TCP client, not an adopted fd */
	uint8_t gcl_src[16];		/* its address (IPv4 mapped into IPv6) */
	struct gw_src *gcl_src_ent;	/* its source: the share of its calls (source.c) */
	uint64_t gcl_src_key;		/* its key: XID map shares */
	TAILQ_ENTRY(gw_client) gcl_slink;	/* its source's connections */
	/* Forwarded calls replied to, their call and reply bytes and summed
	 * durations (gw_call_observe: clients --top). */
	uint64_t gcl_done;
	uint64_t gcl_done_bytes;
	uint64_t gcl_done_us;
	TAILQ_ENTRY(gw_client) gcl_link;
};
TAILQ_HEAD(gw_client_list, gw_client);

/*
 * Paths and backends live in slots that never move (calls and transports
 * point at them).  The active ones are listed in configuration order; a
 * reload retires what it removes into gw_retiring until the calls in
 * flight are done, then gw_reap_cb frees the slot from the event loop
 * (never from inside a transport callback, which may be what finalized the
 * last call).
 */
struct gw_ctx {
	struct gw_ctx_params gw_p;
	struct gw_call_pool *gw_calls;
	struct gw_client_list gw_clients;
	unsigned gw_nclients;
	uint64_t gw_client_gens;	/* connections opened: the next one's gcl_gen */
	struct gw_backend gw_bslots[GW_BACKEND_SLOTS];
	struct gw_path gw_pslots[GW_PATH_SLOTS];
	struct gw_path gw_fbslots[GW_PATH_SLOTS];	/* fallback of gw_pslots[i] */
	unsigned gw_nbackends;
	struct gw_backend *gw_backends[CFG_MAX_BACKENDS];	/* active */
	unsigned gw_npaths;
	struct gw_path *gw_paths[CFG_MAX_ROUTES];		/* active, routable */
	unsigned gw_nretiring;
	struct gw_path *gw_retiring[GW_PATH_SLOTS];
	struct event *gw_reap_ev;
	struct event *gw_sweep_ev;	/* call_timeout: one sweep of the oldest SENT calls */
	struct event *gw_xwait_ev;	/* retries the XID wait lists (gss_xid.c) */
	unsigned gw_xcap;		/* XID map capacity per backend */
	struct gw_relay *gw_relay;	/* backchannel relay (relay.c) */
	struct gw_nlm *gw_nlm;		/* NLM lock owners per client (nlm_map.c) */
	struct gw_cb40 *gw_cb40;	/* NFSv4.0 callback relay (cb40.c) */
	uint16_t gw_own_ports[8];	/* the frontend's listening ports (gw_ctx_own_port) */
	unsigned gw_nown_ports;
	struct gw_srcs *gw_srcs;	/* clients' sources and their shares (source.c) */
};

#define LG(gw) ((gw)->gw_p.gp_log)
#define ST(gw) ((gw)->gw_p.gp_stats)

/* call_end.c: call_timeout's sweep (gw_sweep_ev, every GW_SWEEP_MS) */
#define GW_SWEEP_MS	250	/* call_timeout granularity */
void gw_call_sweep(evutil_socket_t fd, short what, void *arg);

/* gateway.c */
struct gw_path *gw_route(struct gw_ctx *gw, uint32_t prog);
struct gw_xmap *gw_xmap_for_backend(struct gw_ctx *gw);
void gw_backend_init(struct gw_ctx *gw, struct gw_backend *bk, const struct cfg_backend *cb,
		     struct gw_xmap *xm);
void gw_backend_destroy(struct gw_backend *bk);
void gw_path_init(struct gw_ctx *gw, struct gw_path *pa, const struct cfg_route *r,
		  struct gw_backend *bk);
int gw_path_start(struct gw_ctx *gw, struct gw_path *pa);
void gw_path_destroy(struct gw_path *pa);
/* Calls of pa's fallback path still held go back to pa, and new calls stay
 * on pa (reload: before the held calls are rehomed). */
void gw_path_fallback_off(struct gw_path *pa);
/* XID remapping of a call routed to pa; false when it was finalized. */
bool gw_call_map_xid(struct gw_path *pa, struct gw_call *c);
/* A reply of the gateway's own to c, counted in ctr: st, then reslen bytes
 * of results (res; they must fit ca_local after the header). */
void gw_call_local_reply(struct gw_call *c, const struct rpc_reply_hdr *st, enum gw_ctr ctr,
			 const uint8_t *res, size_t reslen);
/* A call with its gateway XID goes to its path (held or sent). */
void gw_call_send(struct gw_path *pa, struct gw_call *c);

/* An add to a backend's XID map made room (evicted): count it, and log
 * it when c's own host held its share (xmap.c). */
void gw_xmap_count_evict(struct gw_ctx *gw, const struct gw_call *c, enum gw_xevict evicted);
/* gss_xid.c: RPCSEC_GSS calls keep the client's XID (RFC 2203 5.3.1) */
bool gw_call_keeps_xid(const struct gw_call *c);
enum gw_xwait {
	GW_XWAIT_MAPPED,	/* *xep: an entry under the client's XID */
	GW_XWAIT_PARKED,	/* the XID is busy: the call waits (state XWAIT) */
	GW_XWAIT_ENDED,		/* finalized (retransmission of a waiting call) */
	GW_XWAIT_FULL,		/* every map entry in flight; not finalized */
};
enum gw_xwait gw_xwait_map(struct gw_path *pa, struct gw_call *c, struct gw_xent **xep);
void gw_xwait_remove(struct gw_call *c);
void gw_xwait_cb(evutil_socket_t fd, short what, void *arg);
/* pa goes: its waiting calls end. */
void gw_xwait_path_gone(struct gw_path *pa);

/* Answer a server's callback CALL through the path's transport (niov 0:
 * only release the handle); -ENOTSUP when the transport has no backchannel. */
int gw_path_cb_reply(struct gw_path *pa, void *handle, const struct iovec *iov, unsigned niov);

/* source.c: a worker's client hosts and their shares of its call objects */
#define GW_XWAIT_PER_SOURCE	32	/* RPCSEC_GSS calls waiting for an XID, per source */
struct gw_src;
struct gw_srcs;
/* Room for cap sources; ncalls call objects to share. */
struct gw_srcs *gw_srcs_new(unsigned cap, unsigned ncalls, struct gw_stats *st,
			    const struct gw_log *lg);
void gw_srcs_free(struct gw_srcs *ss);
/* The key of the source at addr (the worker's seeded hash). */
uint64_t gw_src_addr_key(const struct gw_srcs *ss, const uint8_t addr[16]);
/* cl joins the source of key (gcl_src_ent, gcl_src_key), or leaves its own. */
void gw_src_attach(struct gw_srcs *ss, struct gw_client *cl, uint64_t key);
void gw_src_detach(struct gw_srcs *ss, struct gw_client *cl);
/* false: s holds its share (of call objects or waiting GSS calls); its
 * connections get cop_update once it is below again. */
bool gw_src_may_read(struct gw_srcs *ss, struct gw_src *s);
void gw_src_call_add(struct gw_srcs *ss, struct gw_src *s);
void gw_src_call_remove(struct gw_srcs *ss, struct gw_src *s);
void gw_src_xwait_add(struct gw_src *s);
void gw_src_xwait_remove(struct gw_srcs *ss, struct gw_src *s);
/* Fewer than a share of call objects free for a source not yet holding any. */
bool gw_srcs_short(const struct gw_srcs *ss, unsigned avail);

/* reload.c: frees what retired paths and backends left (event loop). */
void gw_reap_cb(evutil_socket_t fd, short what, void *arg);

/* client.c */
void gw_client_call_add(struct gw_client *cl, struct gw_call *c);
void gw_client_call_remove(struct gw_client *cl, struct gw_call *c);
void gw_client_deliver(struct gw_client *cl, struct gw_out *o);
void gw_client_hold(struct gw_client *cl);
/* A hold queue drained: every held client may read again. */
void gw_clients_resume(struct gw_ctx *gw);

/* relay.c */
struct gw_relay *gw_relay_new(struct gw_ctx *gw);
/* Pending callbacks are released (no reply): call before the paths go. */
void gw_relay_free(struct gw_relay *r);
/* A REPLY record from cl: the answer to a callback relayed to it, or
 * nobody's.  Takes the record. */
void gw_relay_on_reply(struct gw_relay *r, struct gw_client *cl, struct gw_rec *rec, uint32_t xid);
/* A COMPOUND reply to c's client, before it is delivered (session binding). */
void gw_relay_learn_reply(struct gw_relay *r, struct gw_call *c, const struct iovec *iov,
			  unsigned niov);
/* A COMPOUND call from c's client (SEQUENCE after a reconnect). */
void gw_relay_learn_call(struct gw_relay *r, struct gw_call *c);
/* A relayed callback CALL was written to its client. */
void gw_relay_out_done(struct gw_relay *r, struct gw_out *o);
/* cl is closing: callbacks it owes get SYSTEM_ERR, its sessions become
 * ownerless, its output slots are freed. */
void gw_relay_client_gone(struct gw_relay *r, struct gw_client *cl);
/* pa's transport is about to be destroyed: callbacks that came over it are
 * answered SYSTEM_ERR and forgotten (their handles die with it). */
void gw_relay_path_gone(struct gw_relay *r, struct gw_path *pa);

#endif /* RPCRDMA_GW_CTX_H */
