// SPDX-License-Identifier: MIT
/*
 * This file contains the gateway proper: the context, routing of RPC
 * programs to paths (route + transport), XID remapping, the hold queues
 * that keep calls while a backend is unreachable, local replies, and the
 * single finalize path of every call.
 *
 * Life of a call here: gw_on_record() turns a client record into a call,
 * decodes its header and either answers it locally (RPC_MISMATCH,
 * PROG_UNAVAIL, PROG_MISMATCH, AUTH_ERROR) or maps its XID and submits it
 * to its path.  A path whose transport is not up keeps the call in its hold
 * queue, in arrival order, and submits the queue when the transport says
 * it is up (gw_path_ready).  A hold queue above held_calls stops reading
 * the clients that feed it; they resume when it drains below half.  Nothing
 * here ever turns an outage into an RPC error: NFS clients would map it to
 * EIO.  gw_call_complete() takes the server's reply, gw_call_finalize()
 * ends every call, whatever happened.
 *
 * Every path knows why it is not up (gw_path_down: what its transport said
 * last, and since when) for status, metrics and readiness.  An rdma route
 * with fallback = tcp whose RDMA attempts fail gets a second, TCP path to
 * the same server (gw_fbslots): its new and held calls go there, loudly,
 * until RDMA is up again; calls sent over TCP finish there.  A connection
 * that was up and is lost gets GW_FALLBACK_GRACE_MS first.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <event2/event.h>

#include "authpol.h"
#include "call.h"
#include "cb40.h"
#include "chunking.h"
#include "client.h"
#include "config.h"
#include "ctx.h"
#include "gateway.h"
#include "log.h"
#include "nlm_map.h"
#include "ops.h"
#include "pool.h"
#include "transport.h"
#include "xmap.h"


const struct gw_log *gw_ctx_log(const struct gw_ctx *gw) { return gw->gw_p.gp_log; }
struct gw_stats *gw_ctx_stats(struct gw_ctx *gw) { return gw->gw_p.gp_stats; }
struct gw_pool *gw_ctx_pool(struct gw_ctx *gw) { return gw->gw_p.gp_pool; }
const struct cfg *gw_ctx_cfg(const struct gw_ctx *gw) { return gw->gw_p.gp_cfg; }
unsigned gw_ctx_calls_avail(const struct gw_ctx *gw) { return gw_call_pool_avail(gw->gw_calls); }
bool gw_ctx_calls_short(const struct gw_ctx *gw) { return gw_srcs_short(gw->gw_srcs, gw_call_pool_avail(gw->gw_calls)); }
void *gw_ctx_rdma_arg(const struct gw_ctx *gw) { return gw->gw_p.gp_rdma_arg; }
unsigned gw_ctx_ncalls(const struct gw_ctx *gw) { return gw->gw_p.gp_ncalls; }
const struct gw_path_info *gw_path_info(const struct gw_path *pa) { return &pa->pa_info; }

void gw_ctx_set_rdma(struct gw_ctx *gw, const struct gw_transport_ops *ops, void *arg)
{
	gw->gw_p.gp_rdma_ops = ops;
	gw->gw_p.gp_rdma_arg = arg;
}

const char *gw_path_name(const struct gw_path *pa) { return pa->pa_name; }
unsigned gw_ctx_npaths(const struct gw_ctx *gw) { return gw->gw_npaths; }
struct gw_path *gw_ctx_path(struct gw_ctx *gw, unsigned i) { return i < gw->gw_npaths ? gw->gw_paths[i] : NULL; }
unsigned gw_ctx_nretiring(const struct gw_ctx *gw) { return gw->gw_nretiring; }
struct gw_path *gw_ctx_retiring(struct gw_ctx *gw, unsigned i) { return i < gw->gw_nretiring ? gw->gw_retiring[i] : NULL; }
bool gw_path_retiring(const struct gw_path *pa) { return pa->pa_retiring; }
unsigned gw_path_ncalls(const struct gw_path *pa) { return pa->pa_ncalls; }
bool gw_path_up(const struct gw_path *pa) { return pa->pa_up; }
bool gw_path_draining(const struct gw_path *pa) { return pa->pa_draining; }
unsigned gw_path_nheld(const struct gw_path *pa) { return pa->pa_nheld; }
const char *gw_path_transport(const struct gw_path *pa) { return pa->pa_ops ? pa->pa_ops->to_name : "none"; }
bool gw_path_on_fallback(const struct gw_path *pa) { return pa->pa_fb_on; }
bool gw_path_fallback_up(const struct gw_path *pa) { return pa->pa_fb_on && pa->pa_fb->pa_up; }

bool gw_path_can_forward(const struct gw_path *pa)
{
	return !pa->pa_draining && (pa->pa_up || gw_path_fallback_up(pa));
}

enum gw_why gw_path_why(const struct gw_path *pa, const char **text, uint64_t *since_ms)
{
	if (text)
		*text = pa->pa_why_text[0] ? pa->pa_why_text : NULL;
	if (since_ms)
		*since_ms = pa->pa_why_since_ms;
	return pa->pa_why;
}

const char *gw_why_str(enum gw_why why)
{
	static const char *const names[GW_WHY__COUNT] = {
		[GW_WHY_NONE] = "none", [GW_WHY_STARTING] = "starting", [GW_WHY_DNS] = "dns",
		[GW_WHY_NO_DEVICE] = "no_device", [GW_WHY_CONNECT] = "connect",
		[GW_WHY_HANDSHAKE] = "handshake",
		[GW_WHY_LOST] = "lost", [GW_WHY_NO_TRANSPORT] = "no_transport",
	};

	return (unsigned)why < GW_WHY__COUNT ? names[why] : "?";
}

int gw_path_tp_info(const struct gw_path *pa, struct gw_tp_info *ti)
{
	memset(ti, 0, sizeof(*ti));
	if (!pa->pa_ops || !pa->pa_ops->to_info || !pa->pa_tp)
		return -ENOTSUP;
	return pa->pa_ops->to_info(pa->pa_tp, ti);
}

int gw_path_cb_reply(struct gw_path *pa, void *handle, const struct iovec *iov, unsigned niov)
{
	if (!pa->pa_ops || !pa->pa_ops->to_cb_reply || !pa->pa_tp)
		return -ENOTSUP;
	return pa->pa_ops->to_cb_reply(pa->pa_tp, handle, iov, niov);
}

struct gw_xmap *gw_xmap_for_backend(struct gw_ctx *gw)
{
	uint32_t first;
	struct gw_xmap *m;

	if (getrandom(&first, sizeof(first), 0) != sizeof(first))
		first = (uint32_t)gw_now_ms() * 2654435761u;
	if ((m = gw_xmap_new(gw->gw_xcap, first)))	/* workers: its own slice */
		gw_xmap_set_slice(m, gw->gw_p.gp_worker, gw->gw_p.gp_nworkers);
	return m;
}

void gw_backend_init(struct gw_ctx *gw, struct gw_backend *bk, const struct cfg_backend *cb,
		     struct gw_xmap *xm)
{
	*bk = (struct gw_backend){ .bk_ccfg = *cb, .bk_xmap = xm, .bk_used = true,
				   .bk_slot = (unsigned)(bk - gw->gw_bslots) };
	bk->bk_cfg = &bk->bk_ccfg;
	TAILQ_INIT(&bk->bk_xwait);
}

void gw_path_init(struct gw_ctx *gw, struct gw_path *pa, const struct cfg_route *r,
		  struct gw_backend *bk)
{
	const struct gw_ctx_params *p = &gw->gw_p;

	memset(pa, 0, sizeof(*pa));
	pa->pa_gw = gw;
	pa->pa_used = true;
	pa->pa_rcfg = *r;
	pa->pa_route = &pa->pa_rcfg;
	pa->pa_backend = bk;
	bk->bk_npaths++;
	TAILQ_INIT(&pa->pa_held);
	snprintf(pa->pa_name, sizeof(pa->pa_name), "%s/%s", r->cr_name, bk->bk_cfg->cb_name);
	pa->pa_why = GW_WHY_STARTING;
	snprintf(pa->pa_why_text, sizeof(pa->pa_why_text), "not connected yet");
	pa->pa_why_since_ms = gw_now_ms();
	pa->pa_info = (struct gw_path_info){
		.pi_backend = bk->bk_cfg, .pi_route = pa->pa_route, .pi_pool = p->gp_pool,
		.pi_log = p->gp_log, .pi_stats = p->gp_stats, .pi_base = p->gp_base,
		.pi_cfg = p->gp_cfg, .pi_backend_slot = bk->bk_slot, .pi_backoff = p->gp_backoff,
		.pi_conns = cfg_backend_conns(bk->bk_cfg, p->gp_nworkers),
	};
}

struct gw_ctx *gw_ctx_new(const struct gw_ctx_params *p)
{
	const struct cfg *cf = p->gp_cfg;
	struct gw_ctx *gw = calloc(1, sizeof(*gw));

	if (!gw)
		return NULL;
	gw->gw_p = *p;
	gw->gw_calls = gw_call_pool_new(p->gp_ncalls, p->gp_pool, p->gp_stats, p->gp_log);
	/* A source per connection at most (max_clients), and a few for the
	 * gateway's own clients (nlm_map.c's release connection). */
	gw->gw_srcs = gw_srcs_new(cf->cf_max_clients + 16, p->gp_ncalls, p->gp_stats, p->gp_log);
	if (!gw->gw_calls || !gw->gw_srcs)
		goto err;
	if (p->gp_base) {
		struct timeval tv = { 0, GW_SWEEP_MS * 1000 };

		gw->gw_reap_ev = event_new(p->gp_base, -1, 0, gw_reap_cb, gw);
		gw->gw_sweep_ev = event_new(p->gp_base, -1, EV_PERSIST, gw_call_sweep, gw);
		gw->gw_xwait_ev = evtimer_new(p->gp_base, gw_xwait_cb, gw);
		if (!gw->gw_reap_ev || !gw->gw_sweep_ev || !gw->gw_xwait_ev ||
		    event_add(gw->gw_sweep_ev, &tv) < 0)
			goto err;
	}
	TAILQ_INIT(&gw->gw_clients);
	gw->gw_relay = gw_relay_new(gw);
	gw->gw_cb40 = gw_cb40_new(gw);
	if (!gw->gw_relay || !gw->gw_cb40 || gw_nlm_attach(gw) < 0)
		goto err;
	/* In-flight calls always fit; the rest remembers answered XIDs. */
	gw->gw_xcap = p->gp_ncalls + (p->gp_ncalls * 4 > 4096 ? p->gp_ncalls * 4 : 4096);
	for (unsigned i = 0; i < cf->cf_nbackends; i++) {
		struct gw_backend *bk = &gw->gw_bslots[i];
		struct gw_xmap *xm = gw_xmap_for_backend(gw);

		if (!xm)
			goto err;
		gw_backend_init(gw, bk, &cf->cf_backends[i], xm);
		gw->gw_backends[gw->gw_nbackends++] = bk;
	}
	for (unsigned i = 0; i < cf->cf_nroutes; i++) {
		struct gw_path *pa = &gw->gw_pslots[i];
		const struct cfg_route *r = &cf->cf_routes[i];

		gw_path_init(gw, pa, r, gw->gw_backends[r->cr_backend]);
		gw->gw_paths[gw->gw_npaths++] = pa;
	}
	return gw;
err:
	gw_ctx_free(gw);
	return NULL;
}

static void gw_paths_changed(struct gw_ctx *gw)
{
	if (gw->gw_p.gp_paths_changed)
		gw->gw_p.gp_paths_changed(gw->gw_p.gp_paths_changed_arg);
}

/* TCP port the fallback (and a tcp route) uses: the route's, else the
 * backend's NFS port for NFS and NFS_ACL, else rpcbind's answer (0). */
static unsigned gw_route_tcp_port(const struct gw_path *pa)
{
	const struct cfg_route *r = pa->pa_route;

	if (r->cr_port)
		return r->cr_port;
	return r->cr_prog == CFG_PROG_NFS || r->cr_prog == CFG_PROG_NFS_ACL
	       ? pa->pa_backend->bk_cfg->cb_port : 0;
}

/* The TCP fallback path of pa (same slot index in gw_fbslots), started. */
static int gw_path_fb_start(struct gw_path *pa)
{
	struct gw_ctx *gw = pa->pa_gw;
	struct gw_path *fb = &gw->gw_fbslots[pa - gw->gw_pslots];
	struct cfg_route r = pa->pa_rcfg;

	r.cr_transport = CFG_TRANSPORT_TCP;
	gw_path_init(gw, fb, &r, pa->pa_backend);
	snprintf(fb->pa_name, sizeof(fb->pa_name), "%.63s (tcp fallback)", pa->pa_name);
	fb->pa_fb_of = pa;
	fb->pa_ops = &gw_transport_tcp;
	fb->pa_tp = fb->pa_ops->to_create(gw, fb);
	if (!fb->pa_tp) {
		gw_err(LG(gw), "route %s: cannot create its TCP fallback", pa->pa_route->cr_name);
		fb->pa_ops = NULL;
		fb->pa_used = false;
		pa->pa_backend->bk_npaths--;
		return -ENOMEM;
	}
	pa->pa_fb = fb;
	return 0;
}

/* Move every held call of from to the tail of to's hold queue (same
 * route: the primary and its fallback), then let to submit them. */
static void gw_path_move_held(struct gw_path *from, struct gw_path *to)
{
	struct gw_call *c;

	while ((c = TAILQ_FIRST(&from->pa_held))) {
		TAILQ_REMOVE(&from->pa_held, c, ca_path_link);
		from->pa_nheld--;
		if (from->pa_fb_of)
			from->pa_ncalls--;
		if (to->pa_fb_of)
			to->pa_ncalls++;
		c->ca_path = to;
		TAILQ_INSERT_TAIL(&to->pa_held, c, ca_path_link);
		to->pa_nheld++;
	}
	if (from->pa_blocking) {
		from->pa_blocking = false;
		to->pa_blocking = true;	/* resumed when to drains (gw_path_ready) */
	}
	if (to->pa_tp)
		gw_path_ready(to, to->pa_up);
}

/* RDMA cannot carry the route's calls: new and held calls go over TCP to
 * the same server, loudly, until the RDMA transport is up again. */
static void gw_path_fb_engage(struct gw_path *pa)
{
	struct gw_ctx *gw = pa->pa_gw;
	const struct cfg_route *r = pa->pa_route;

	if (pa->pa_fb_on || pa->pa_up || pa->pa_fb_of || pa->pa_retiring ||
	    r->cr_transport != CFG_TRANSPORT_RDMA || r->cr_fallback != CFG_FALLBACK_TCP)
		return;
	if (!pa->pa_fb && gw_path_fb_start(pa) < 0)
		return;
	pa->pa_fb_on = true;
	gw_stat_inc(ST(gw), GW_CTR_PATH_FALLBACKS);
	gw_warn(LG(gw), "route %s: using the TCP fallback to %s port %u because RDMA is not available "
		"(%s: %s); retrying RDMA every %u ms", r->cr_name, pa->pa_backend->bk_cfg->cb_host,
		gw_route_tcp_port(pa), gw_why_str(pa->pa_why), pa->pa_why_text,
		gw->gw_p.gp_cfg->cf_reconnect_ms);
	gw_path_move_held(pa, pa->pa_fb);
	gw_paths_changed(gw);
}

void gw_path_fallback_off(struct gw_path *pa)
{
	if (!pa->pa_fb_on)
		return;
	pa->pa_fb_on = false;
	gw_path_move_held(pa->pa_fb, pa);
}

/* Create the path's transport (it connects asynchronously).  An rdma
 * route whose transport cannot even be created stays down with that
 * reason, on its TCP fallback when it has one. */
int gw_path_start(struct gw_ctx *gw, struct gw_path *pa)
{
	const struct cfg_route *r = pa->pa_route;

	pa->pa_ops = r->cr_transport == CFG_TRANSPORT_RDMA ? gw->gw_p.gp_rdma_ops : &gw_transport_tcp;
	if (pa->pa_ops)
		pa->pa_tp = pa->pa_ops->to_create(gw, pa);
	if (!pa->pa_tp && r->cr_transport == CFG_TRANSPORT_RDMA) {
		pa->pa_ops = NULL;
		gw_err(LG(gw), "route %s: the RDMA transport cannot start%s", r->cr_name,
		       r->cr_fallback == CFG_FALLBACK_TCP ? "" : "; fallback = none: the route stays down");
		gw_path_down(pa, GW_WHY_NO_TRANSPORT, "RDMA transport cannot start");
		return 0;
	}
	if (!pa->pa_tp) {
		gw_err(LG(gw), "route %s: cannot create transport %s", r->cr_name,
		       pa->pa_ops->to_name);
		pa->pa_ops = NULL;
		return -ENOMEM;
	}
	gw_info(LG(gw), "route %s: program %u -> backend %s (%s) via %s", r->cr_name, r->cr_prog,
		pa->pa_backend->bk_cfg->cb_name, pa->pa_backend->bk_cfg->cb_host,
		pa->pa_ops->to_name);
	return 0;
}

int gw_ctx_start(struct gw_ctx *gw)
{
	for (unsigned i = 0; i < gw->gw_npaths; i++) {
		int err = gw_path_start(gw, gw->gw_paths[i]);

		if (err < 0)
			return err;
	}
	return 0;
}

void gw_path_destroy(struct gw_path *pa)
{
	struct gw_call *c;

	if (pa->pa_fb) {	/* its calls are done: they count in pa_ncalls */
		gw_path_destroy(pa->pa_fb);
		pa->pa_fb = NULL;
		pa->pa_fb_on = false;
	}
	while ((c = TAILQ_FIRST(&pa->pa_held)))
		gw_call_finalize(c, GW_END_SHUTDOWN);
	if (pa->pa_gw->gw_relay && pa->pa_tp)
		gw_relay_path_gone(pa->pa_gw->gw_relay, pa);
	gw_xwait_path_gone(pa);
	if (pa->pa_tp)
		pa->pa_ops->to_destroy(pa->pa_tp);
	pa->pa_tp = NULL;
	pa->pa_used = false;
	pa->pa_backend->bk_npaths--;
}

void gw_backend_destroy(struct gw_backend *bk)
{
	gw_xmap_free(bk->bk_xmap);
	bk->bk_xmap = NULL;
	bk->bk_used = false;
}

void gw_ctx_free(struct gw_ctx *gw)
{
	if (!gw)
		return;
	/* Pending callbacks and release UNLOCKs end before the transports go. */
	gw_nlm_detach(gw);
	gw_relay_free(gw->gw_relay);
	gw->gw_relay = NULL;
	gw_cb40_free(gw->gw_cb40);
	gw->gw_cb40 = NULL;
	/* Clients (and so their calls) are gone first: the frontend closed them. */
	for (unsigned i = 0; i < GW_PATH_SLOTS; i++)
		if (gw->gw_pslots[i].pa_used)
			gw_path_destroy(&gw->gw_pslots[i]);
	for (unsigned i = 0; i < GW_BACKEND_SLOTS; i++)
		if (gw->gw_bslots[i].bk_used)
			gw_backend_destroy(&gw->gw_bslots[i]);
	if (gw->gw_reap_ev)
		event_free(gw->gw_reap_ev);
	if (gw->gw_sweep_ev)
		event_free(gw->gw_sweep_ev);
	if (gw->gw_xwait_ev)
		event_free(gw->gw_xwait_ev);
	gw_call_pool_free(gw->gw_calls);
	gw_srcs_free(gw->gw_srcs);	/* last: closing clients leave their sources */
	free(gw);
}

/* ---- replies ---- */

static void gw_call_set_reply(struct gw_call *c, const struct iovec *iov, unsigned niov)
{
	c->ca_out.ou_kind = GW_OUT_REPLY;
	gw_out_set(&c->ca_out, iov, niov, c->ca_cxid);
}

/* c is answered (answered) or ends: its XID mapping is kept for drc_window,
 * or goes at once when no server's DRC keeps such a call; an RPCSEC_GSS
 * call's XID is then free at once for another client's (gss_xid.c). */
static void gw_xent_settle(struct gw_call *c, bool answered)
{
	const struct rpc_call_hdr *h = &c->ca_hdr;
	struct gw_xmap *xm = c->ca_path ? c->ca_path->pa_backend->bk_xmap : NULL;

	if (!xm || !c->ca_xent || c->ca_xent->xn_call != c)
		;	/* none, or not c's entry (any more): left as it is */
	else if (answered &&
		 !gw_xmap_keeps_answered(h->rc_prog, h->rc_vers, h->rc_proc, &c->ca_walk))
		gw_xmap_remove(xm, c->ca_xent);
	else
		gw_xmap_settle(xm, c->ca_xent, gw_pass_ms(ST(c->ca_gw)),
			       c->ca_gw->gw_p.gp_cfg->cf_drc_window_ms);
	c->ca_xent = NULL;	/* set only once c has a path */
}

void gw_call_complete(struct gw_call *c, const struct iovec *iov, unsigned niov)
{
	struct gw_ctx *gw = c->ca_gw;

	if (c->ca_state != GW_CALL_SENT) {
		gw_stat_inc(ST(gw), GW_CTR_ILLEGAL_TRANSITION);
		gw_err(LG(gw), "xid %#x: reply in state %s", c->ca_cxid, gw_call_state_str(c->ca_state));
		return;
	}
	gw_call_set_reply(c, iov, niov);
	if (c->ca_out.ou_len < 8) {	/* transports check this; belt and braces */
		gw_stat_inc(ST(gw), GW_CTR_BACKEND_GARBAGE);
		gw_log_server(LG(gw), CFG_LOG_ERR, c->ca_path ? c->ca_path->pa_name : NULL,
			      "xid %#x: reply of %zu bytes", c->ca_cxid, c->ca_out.ou_len);
		gw_call_finalize(c, GW_END_FAILED);
		return;
	}
	gw_call_set_state(c, GW_CALL_REPLIED);
	gw_xent_settle(c, true);
	gw_debug(LG(gw), "xid %#x (gw %#x): reply %zu bytes", c->ca_cxid, c->ca_gxid, c->ca_out.ou_len);
	if (chk_cb_may_bind(&c->ca_walk))	/* the rest: not decoded again */
		gw_relay_learn_reply(gw->gw_relay, c, iov, niov);
	if (c->ca_hdr.rc_prog == CFG_PROG_NLM)
		gw_nlm_reply(gw, c, iov, niov);
	if (gw_cb40_is_setclientid(&c->ca_hdr, &c->ca_walk))
		gw_cb40_on_reply(gw->gw_cb40, c, iov, niov);
	gw_client_deliver(c->ca_cl, &c->ca_out);
}

void gw_call_local_reply(struct gw_call *c, const struct rpc_reply_hdr *st, enum gw_ctr ctr,
			 const uint8_t *res, size_t reslen)
{
	struct gw_ctx *gw = c->ca_gw;
	struct gw_log_ev ev = { .le_xid = c->ca_cxid, .le_has_xid = true,
				.le_client = gw_client_name(c->ca_cl), .le_prog = c->ca_hdr.rc_prog,
				.le_vers = c->ca_hdr.rc_vers, .le_proc = c->ca_hdr.rc_proc,
				.le_error = gw_ctr_str(ctr) };
	struct xdr_enc xe;

	gw_stat_inc(ST(gw), ctr);
	xdr_enc_init(&xe, c->ca_local, sizeof(c->ca_local));
	if (!rpc_local_reply(&xe, c->ca_cxid, st) ||
	    (reslen && !xdr_put_fixed(&xe, res, (uint32_t)reslen))) {
		gw_err(LG(gw), "xid %#x: cannot encode local reply", c->ca_cxid);
		gw_call_finalize(c, GW_END_FAILED);
		return;
	}
	c->ca_local_iov = (struct iovec){ c->ca_local, xe.xe_len };
	gw_call_set_reply(c, &c->ca_local_iov, 1);
	gw_call_set_state(c, GW_CALL_REPLIED);
	gw_log_ev(LG(gw), CFG_LOG_INFO, &ev, "xid %#x prog %u vers %u from %s: local reply (%s)",
		  c->ca_cxid, c->ca_hdr.rc_prog, c->ca_hdr.rc_vers, gw_client_name(c->ca_cl), gw_ctr_str(ctr));
	gw_client_deliver(c->ca_cl, &c->ca_out);
}

/* A call that cannot be carried (refused for good, the server's reply
 * unusable) still gets an answer: the client would otherwise wait for ever
 * on a connection that stays up.  RFC 5531 section 9: SYSTEM_ERR is the
 * accept status for "errors like memory allocation failure" on the
 * server's side, which is what the client's server (the gateway) had. */
void gw_call_system_err(struct gw_call *c)
{
	struct rpc_reply_hdr st = { .rr_stat = RPC_MSG_ACCEPTED, .rr_accept_stat = RPC_SYSTEM_ERR };

	if (c->ca_state != GW_CALL_SENT && c->ca_state != GW_CALL_NEW) {
		gw_call_finalize(c, GW_END_FAILED);
		return;
	}
	gw_stat_inc(ST(c->ca_gw), GW_CTR_CALLS_FAILED);
	gw_call_local_reply(c, &st, GW_CTR_LOCAL_SYSTEM_ERR, NULL, 0);
}

/* ---- finalize: the one end of every call ---- */

void gw_call_finalize(struct gw_call *c, enum gw_end why)
{
	struct gw_ctx *gw = c->ca_gw;
	enum gw_call_state prev = c->ca_state;
	struct gw_path *pa = c->ca_path;

	if (prev == GW_CALL_DONE || prev == GW_CALL_FREE)
		return;
	if (gw_call_set_state(c, GW_CALL_DONE) < 0)
		return;
	if (why == GW_END_REPLIED && pa)
		gw_call_observe(c, gw_pass_us(ST(gw)));
	if (prev == GW_CALL_HELD) {
		TAILQ_REMOVE(&pa->pa_held, c, ca_path_link);
		pa->pa_nheld--;
	} else if (prev == GW_CALL_XWAIT) {
		gw_xwait_remove(c);
	}
	if (c->ca_cl)
		gw_client_call_remove(c->ca_cl, c);
	gw_xent_settle(c, false);
	if (c->ca_tp_owned) {
		c->ca_tp_owned = false;
		if (prev == GW_CALL_REPLIED)
			pa->pa_ops->to_release(pa->pa_tp, c);
		else
			pa->pa_ops->to_cancel(pa->pa_tp, c);
	}
	switch (why) {
	case GW_END_CLIENT_GONE:
	case GW_END_SHUTDOWN:
		if (prev != GW_CALL_REPLIED)
			gw_stat_inc(ST(gw), GW_CTR_CALLS_CANCELLED);
		break;
	case GW_END_FAILED:
		gw_stat_inc(ST(gw), GW_CTR_CALLS_FAILED);
		break;
	default:
		break;
	}
	if (why != GW_END_REPLIED)
		gw_debug(LG(gw), "xid %#x (gw %#x): ended in %s: %s", c->ca_cxid, c->ca_gxid,
			 gw_call_state_str(prev), gw_end_str(why));
	if (pa && pa->pa_blocking && pa->pa_nheld <= gw->gw_p.gp_cfg->cf_held_calls / 2) {
		pa->pa_blocking = false;
		gw_clients_resume(gw);
	}
	if (pa && pa->pa_fb_of) {	/* a fallback call counts on its primary too */
		pa->pa_ncalls--;
		pa = pa->pa_fb_of;
	}
	if (pa && --pa->pa_ncalls == 0 && pa->pa_retiring && gw->gw_reap_ev)
		event_active(gw->gw_reap_ev, 0, 0);	/* not from here: maybe a tp callback */
	gw_call_put(c);
}

/* ---- submit and hold ---- */

static void gw_path_hold(struct gw_path *pa, struct gw_call *c, bool at_head)
{
	struct gw_ctx *gw = pa->pa_gw;

	if (gw_call_set_state(c, GW_CALL_HELD) < 0)
		return;
	if (at_head)
		TAILQ_INSERT_HEAD(&pa->pa_held, c, ca_path_link);
	else
		TAILQ_INSERT_TAIL(&pa->pa_held, c, ca_path_link);
	pa->pa_nheld++;
	if (at_head)
		return;
	gw_stat_inc(ST(gw), GW_CTR_CALLS_HELD);
	if (pa->pa_nheld > gw->gw_p.gp_cfg->cf_held_calls && c->ca_cl) {
		gw_stat_inc(ST(gw), GW_CTR_HOLD_FULL);
		if (!pa->pa_blocking)
			gw_warn(LG(gw), "path %s: %u calls held; reading from clients paused",
				pa->pa_name, pa->pa_nheld);
		pa->pa_blocking = true;
		gw_client_hold(c->ca_cl);
	}
}

/* Try the transport; false when it refused with -EAGAIN (call back in HELD
 * at the head of the queue, or the tail when new). */
static bool gw_path_try(struct gw_path *pa, struct gw_call *c, bool was_held)
{
	struct gw_ctx *gw = pa->pa_gw;
	int rc;

	if (gw_call_set_state(c, GW_CALL_SENT) < 0)
		return true;
	c->ca_sent_ms = gw_pass_ms(ST(gw));
	c->ca_submit_us = gw_pass_us(ST(gw));	/* the pass's reading: none per hand-off */
	if (!c->ca_sent_us)
		c->ca_sent_us = c->ca_submit_us;
	rc = pa->pa_ops->to_submit(pa->pa_tp, c);
	if (rc == 0)
		return true;
	if (rc == -EAGAIN) {
		gw_path_hold(pa, c, was_held);
		return false;
	}
	gw_err(LG(gw), "xid %#x (gw %#x): path %s refused the call: %s", c->ca_cxid, c->ca_gxid,
	       pa->pa_name, strerror(-rc));
	gw_call_system_err(c);
	return true;
}

static void gw_path_submit(struct gw_path *pa, struct gw_call *c)
{
	if (pa->pa_fb_on && !pa->pa_draining) {
		pa = pa->pa_fb;
		pa->pa_ncalls++;
		c->ca_path = pa;
	}
	if (!pa->pa_up || pa->pa_draining || !TAILQ_EMPTY(&pa->pa_held))
		gw_path_hold(pa, c, false);
	else
		gw_path_try(pa, c, false);
}

static void gw_path_note(struct gw_path *pa, enum gw_why why, const char *text)
{
	if (pa->pa_why != why || strcmp(pa->pa_why_text, text)) {
		if ((pa->pa_why == GW_WHY_NONE) != (why == GW_WHY_NONE) || pa->pa_why != why)
			pa->pa_why_since_ms = gw_now_ms();
		pa->pa_why = why;
		snprintf(pa->pa_why_text, sizeof(pa->pa_why_text), "%s", text);
	}
}

void gw_path_down(struct gw_path *pa, enum gw_why why, const char *fmt, ...)
{
	char text[GW_WHY_TEXT_MAX];
	enum gw_why was = pa->pa_why;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (pa->pa_up && why != GW_WHY_LOST)
		return;		/* another connection of the path still carries calls */
	gw_path_note(pa, why, text);
	/* A lost connection first gets its grace: calls wait and are re-sent. */
	if (why != GW_WHY_LOST &&
	    (!pa->pa_seen_up || gw_now_ms() - pa->pa_down_ms >= GW_FALLBACK_GRACE_MS))
		gw_path_fb_engage(pa);
	if (was != why)
		gw_paths_changed(pa->pa_gw);
}

void gw_path_ready(struct gw_path *pa, bool up)
{
	struct gw_ctx *gw = pa->pa_gw;
	struct gw_call *c;
	bool changed = pa->pa_up != up;

	if (changed)
		gw_info(LG(gw), "path %s: transport %s %s (%u calls held)", pa->pa_name,
			pa->pa_ops->to_name, up ? "up" : "down", pa->pa_nheld);
	pa->pa_up = up;
	if (changed && !up)
		pa->pa_down_ms = gw_now_ms();
	if (up) {
		pa->pa_seen_up = true;
		gw_path_note(pa, GW_WHY_NONE, "");
	}
	else if (pa->pa_why == GW_WHY_NONE)
		gw_path_note(pa, GW_WHY_LOST, "transport down");
	if (up && pa->pa_fb_on) {
		/* Back on RDMA; calls already sent over TCP finish there. */
		gw_warn(LG(gw), "route %s: RDMA is back; leaving the TCP fallback (%u calls still "
			"on it)", pa->pa_route->cr_name, pa->pa_fb->pa_ncalls);
		gw_path_fallback_off(pa);
	}
	if (!pa->pa_up && pa->pa_fb_on && !pa->pa_draining && !TAILQ_EMPTY(&pa->pa_held))
		gw_path_move_held(pa, pa->pa_fb);	/* undrained while on fallback */
	while (pa->pa_up && !pa->pa_draining && (c = TAILQ_FIRST(&pa->pa_held))) {
		TAILQ_REMOVE(&pa->pa_held, c, ca_path_link);
		pa->pa_nheld--;
		if (!gw_path_try(pa, c, true))
			break;
	}
	if (pa->pa_blocking && pa->pa_nheld <= gw->gw_p.gp_cfg->cf_held_calls / 2) {
		pa->pa_blocking = false;
		gw_clients_resume(gw);
	}
	if (changed)
		gw_paths_changed(gw);
}

void gw_path_set_drain(struct gw_path *pa, bool on)
{
	if (pa->pa_draining == on)
		return;
	pa->pa_draining = on;
	if (on && pa->pa_fb_on)		/* not sent yet over the fallback: held here */
		gw_path_move_held(pa->pa_fb, pa);
	gw_info(LG(pa->pa_gw), "path %s: %s (%u calls held)", pa->pa_name,
		on ? "draining: new calls held" : "undrained", pa->pa_nheld);
	if (!on)
		gw_path_ready(pa, pa->pa_up);
}

struct gw_call *gw_path_lookup(struct gw_path *pa, uint32_t gxid)
{
	struct gw_xent *xe = gw_xmap_by_gxid(pa->pa_backend->bk_xmap, gxid);

	if (!xe || !xe->xn_call || xe->xn_call->ca_path != pa || xe->xn_call->ca_state != GW_CALL_SENT)
		return NULL;
	return xe->xn_call;
}

/* ---- a record from a client ---- */

struct gw_path *gw_route(struct gw_ctx *gw, uint32_t prog)
{
	for (unsigned i = 0; i < gw->gw_npaths; i++)
		if (gw->gw_paths[i]->pa_route->cr_prog == prog)
			return gw->gw_paths[i];
	return NULL;
}

/* XID remapping of a call routed to pa (c->ca_path == pa): a fresh gateway
 * XID, or the one of an answered call it retransmits.  false when the call
 * was finalized (retransmission of a call in flight, map full). */
bool gw_call_map_xid(struct gw_path *pa, struct gw_call *c)
{
	struct gw_ctx *gw = pa->pa_gw;
	struct gw_xent *xe;
	enum gw_xevict evicted;

	xe = gw_xmap_find(pa->pa_backend->bk_xmap, c->ca_client, c->ca_cxid, c->ca_start_ms);
	if (xe && xe->xn_call) {
		gw_stat_inc(ST(gw), GW_CTR_RETRANS_INFLIGHT);
		gw_log_client(LG(gw), CFG_LOG_INFO, gw_client_name(c->ca_cl),
			      "xid %#x from %s: retransmission while in flight (gw %#x): dropped",
			      c->ca_cxid, gw_client_name(c->ca_cl), xe->xn_gxid);
		gw_call_finalize(c, GW_END_RETRANS);
		return false;
	}
	if (!xe && gw_call_keeps_xid(c)) {
		enum gw_xwait w = gw_xwait_map(pa, c, &xe);

		if (w == GW_XWAIT_FULL) {
			gw_err(LG(gw), "xid %#x: XID map full", c->ca_cxid);
			gw_call_finalize(c, GW_END_FAILED);
		}
		if (w != GW_XWAIT_MAPPED)
			return false;
	} else if (xe) {
		gw_stat_inc(ST(gw), GW_CTR_RETRANS_RESENT);
		gw_log_client(LG(gw), CFG_LOG_INFO, gw_client_name(c->ca_cl),
			      "xid %#x from %s: retransmission, same gateway xid %#x", c->ca_cxid,
			      gw_client_name(c->ca_cl), xe->xn_gxid);
		gw_xmap_attach(pa->pa_backend->bk_xmap, xe, c);
	} else {
		xe = gw_xmap_add(pa->pa_backend->bk_xmap, c->ca_client, c->ca_src, c->ca_cxid, c,
				 c->ca_start_ms, &evicted);
		gw_xmap_count_evict(gw, c, evicted);
		if (!xe) {	/* cannot happen: the map holds every call object */
			gw_err(LG(gw), "xid %#x: XID map full", c->ca_cxid);
			gw_call_finalize(c, GW_END_FAILED);
			return false;
		}
	}
	c->ca_xent = xe;
	c->ca_gxid = xe->xn_gxid;
	gw_rec_put_be32(&c->ca_rec, 0, c->ca_gxid);
	return true;
}

void gw_xmap_count_evict(struct gw_ctx *gw, const struct gw_call *c, enum gw_xevict evicted)
{
	if (evicted == GW_XEVICT_NONE)
		return;
	gw_stat_inc(ST(gw), GW_CTR_XMAP_EVICTED);
	if (evicted == GW_XEVICT_LARGEST) {
		gw_stat_inc(ST(gw), GW_CTR_XMAP_EVICT_LARGEST);
		return;
	}
	gw_stat_inc(ST(gw), GW_CTR_XMAP_EVICT_OWN);
	gw_log_client(LG(gw), CFG_LOG_INFO, c->ca_cl ? gw_client_name(c->ca_cl) : NULL,
		      "xid %#x from %s: XID map of %s full and the client's host holds its share: "
		      "its own oldest answered XID forgotten", c->ca_cxid,
		      c->ca_cl ? gw_client_name(c->ca_cl) : "-", c->ca_path ? c->ca_path->pa_name : "-");
}

/* Decode c's header and find its path.  NULL when the call was answered
 * locally (*rc stays 0) or its header is not decodable (finalized,
 * *rc = -EPROTO: the frontend closes the client). */
static struct gw_path *gw_call_admit(struct gw_ctx *gw, struct gw_call *c, struct xdr_cur *xc,
				     int *rc)
{
	struct rpc_call_hdr *hdr = &c->ca_hdr;
	struct rpc_reply_hdr st = { 0 };
	struct gw_path *pa;

	if (!rpc_call_decode(xc, hdr)) {
		/* nfsd answers the RPC version before the credential
		 * (svc_process_common()): so does the gateway. */
		if (hdr->rc_auth_stat && hdr->rc_rpcvers != RPC_VERS) {
			st.rr_stat = RPC_MSG_DENIED;
			st.rr_reject_stat = RPC_MISMATCH;
			st.rr_low = st.rr_high = RPC_VERS;
			gw_call_local_reply(c, &st, GW_CTR_LOCAL_RPC_MISMATCH, NULL, 0);
			return NULL;
		}
		if (hdr->rc_auth_stat) {
			st.rr_stat = RPC_MSG_DENIED;
			st.rr_reject_stat = RPC_AUTH_ERROR;
			st.rr_auth_stat = hdr->rc_auth_stat;
			gw_call_local_reply(c, &st, GW_CTR_LOCAL_AUTH_ERROR, NULL, 0);
			return NULL;
		}
		struct gw_log_ev ev = { .le_xid = c->ca_cxid, .le_has_xid = true,
					.le_client = gw_client_name(c->ca_cl),
					.le_error = xdr_err_str(xc->xc_err) };

		gw_log_ev(LG(gw), CFG_LOG_ERR, &ev, "xid %#x from %s: undecodable call header (%s)",
			  c->ca_cxid, gw_client_name(c->ca_cl), xdr_err_str(xc->xc_err));
		gw_call_finalize(c, GW_END_FAILED);
		*rc = -EPROTO;
		return NULL;
	}
	gw_stats_proc(ST(gw), hdr->rc_prog, hdr->rc_vers, hdr->rc_proc);
	if (hdr->rc_rpcvers != RPC_VERS) {
		st.rr_stat = RPC_MSG_DENIED;
		st.rr_reject_stat = RPC_MISMATCH;
		st.rr_low = st.rr_high = RPC_VERS;
		gw_call_local_reply(c, &st, GW_CTR_LOCAL_RPC_MISMATCH, NULL, 0);
		return NULL;
	}
	if (hdr->rc_cred.oa_flavor == RPC_AUTH_TLS) {
		/* RFC 9289 4.1: a server without RPC-with-TLS rejects the probe;
		 * the gateway does not offer TLS yet, whatever the server does. */
		st.rr_stat = RPC_MSG_DENIED;
		st.rr_reject_stat = RPC_AUTH_ERROR;
		st.rr_auth_stat = RPC_AUTH_BADCRED;
		gw_call_local_reply(c, &st, GW_CTR_LOCAL_AUTH_ERROR, NULL, 0);
		return NULL;
	}
	st.rr_auth_stat = gw_authpol_apply(gw->gw_p.gp_cfg, c->ca_cl, &c->ca_rec, hdr, ST(gw));
	if (st.rr_auth_stat) {	/* squash, reject_auth_none: authpol.c */
		st.rr_stat = RPC_MSG_DENIED;
		st.rr_reject_stat = RPC_AUTH_ERROR;
		gw_call_local_reply(c, &st, GW_CTR_LOCAL_AUTH_ERROR, NULL, 0);
		return NULL;
	}
	pa = gw_route(gw, hdr->rc_prog);
	if (!pa) {
		st.rr_stat = RPC_MSG_ACCEPTED;
		st.rr_accept_stat = RPC_PROG_UNAVAIL;
		gw_call_local_reply(c, &st, GW_CTR_LOCAL_PROG_UNAVAIL, NULL, 0);
		return NULL;
	}
	if (hdr->rc_vers < pa->pa_route->cr_vers_low || hdr->rc_vers > pa->pa_route->cr_vers_high) {
		st.rr_stat = RPC_MSG_ACCEPTED;
		st.rr_accept_stat = RPC_PROG_MISMATCH;
		st.rr_low = pa->pa_route->cr_vers_low;
		st.rr_high = pa->pa_route->cr_vers_high;
		gw_call_local_reply(c, &st, GW_CTR_LOCAL_PROG_MISMATCH, NULL, 0);
		return NULL;
	}
	return pa;
}

int gw_on_record(struct gw_client *cl, struct gw_rec *rec)
{
	struct gw_ctx *gw = cl->gcl_gw;
	struct rpc_call_hdr *hdr;
	enum chk_walk_err werr;
	struct xdr_cur xc;
	struct gw_call *c;
	struct gw_path *pa;
	uint32_t xid, mtype;
	int rc = 0;

	xdr_cur_init(&xc, rec->rcd_iov, rec->rcd_niov);
	if (!xdr_get_u32(&xc, &xid) || !xdr_get_u32(&xc, &mtype) ||
	    (mtype != RPC_CALL && mtype != RPC_REPLY)) {
		struct gw_log_ev ev = { .le_client = gw_client_name(cl), .le_error = "not_rpc" };

		gw_log_ev(LG(gw), CFG_LOG_ERR, &ev, "client %s: record of %zu bytes is not an RPC message",
			  gw_client_name(cl), rec->rcd_len);
		gw_rec_release(gw->gw_p.gp_pool, rec);
		return -EPROTO;
	}
	if (mtype == RPC_REPLY) {
		/* A backchannel reply: to a callback we relayed, or nobody's. */
		gw_relay_on_reply(gw->gw_relay, cl, rec, xid);
		return 0;
	}
	c = gw_call_new(gw->gw_calls, gw);
	if (!c) {
		/* The frontend checks gw_ctx_calls_avail() before reading. */
		gw_stat_inc(ST(gw), GW_CTR_CALLS_EMPTY);
		gw_rec_release(gw->gw_p.gp_pool, rec);
		return -ENOMEM;
	}
	gw_stat_inc(ST(gw), GW_CTR_CALLS);
	gw_rec_move(&c->ca_rec, rec);
	c->ca_cxid = xid;
	c->ca_start_ms = gw_pass_ms(ST(gw));
	c->ca_start_us = gw_pass_us(ST(gw));
	gw_client_call_add(cl, c);

	xdr_cur_init(&xc, c->ca_rec.rcd_iov, c->ca_rec.rcd_niov);
	pa = gw_call_admit(gw, c, &xc, &rc);
	if (!pa)
		return rc;
	hdr = &c->ca_hdr;
	if ((hdr->rc_prog == CFG_PROG_NLM || hdr->rc_prog == CFG_PROG_NSM) &&
	    (rc = (int)gw_nlm_call(gw, c, &xc)) != GW_NLM_FORWARD) {
		gw_nlm_answer(c, (enum gw_nlm_act)rc);	/* nlm_hooks.c */
		return 0;
	}
	c->ca_path = pa;
	/* RPCSEC_GSS integrity/privacy bodies cannot be reduced (RFC 8166
	 * 8.2.2.3): the walkers take the service and offer no DDP then. */
	if (hdr->rc_cred.oa_flavor == RPC_RPCSEC_GSS)
		c->ca_gss = hdr->rc_gss_proc != 0 || hdr->rc_gss_service < RPC_GSS_SVC_NONE ||
			    hdr->rc_gss_service > RPC_GSS_SVC_PRIVACY ? CHK_GSS_CONTROL
			    : hdr->rc_gss_service;	/* a service nfsd answers: opaque */
	chk_call_walk(&xc, hdr->rc_prog, hdr->rc_vers, hdr->rc_proc, c->ca_gss, &c->ca_walk, &werr);
	if (hdr->rc_prog == CFG_PROG_NFS && hdr->rc_vers == 4 && hdr->rc_proc == 1)
		gw_relay_learn_call(gw->gw_relay, c);
	/* NFSv4.0 SETCLIENTID with a new cb_location: walked again (same
	 * operations, new lengths). */
	if (gw_cb40_is_setclientid(hdr, &c->ca_walk) && gw_cb40_on_call(gw->gw_cb40, c)) {
		xdr_cur_init(&xc, c->ca_rec.rcd_iov, c->ca_rec.rcd_niov);
		if (xdr_seek(&xc, hdr->rc_args_pos))
			chk_call_walk(&xc, hdr->rc_prog, hdr->rc_vers, hdr->rc_proc, c->ca_gss,
				      &c->ca_walk, &werr);
	}

	pa->pa_ncalls++;
	if (gw_call_map_xid(pa, c))
		gw_call_send(pa, c);
	return 0;
}

void gw_call_send(struct gw_path *pa, struct gw_call *c)
{
	const struct rpc_call_hdr *hdr = &c->ca_hdr;

	gw_debug(LG(pa->pa_gw), "xid %#x prog %u vers %u proc %u from %s: gw xid %#x via %s",
		 c->ca_cxid, hdr->rc_prog, hdr->rc_vers, hdr->rc_proc, gw_client_name(c->ca_cl),
		 c->ca_gxid, pa->pa_name);
	gw_stats_nfs4_ops(ST(pa->pa_gw), &c->ca_walk);	/* once per call, not per submit */
	gw_path_submit(pa, c);
}
