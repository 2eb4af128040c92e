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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "call.h"
#include "callback.h"
#include "chunking.h"
#include "config.h"
#include "frontend.h"
#include "gateway.h"
#include "log.h"
#include "pool.h"
#include "transport.h"
#include "xmap.h"

struct gw_backend {
	const struct cfg_backend *bk_cfg;	/* = &bk_ccfg */
	struct cfg_backend bk_ccfg;	/* own copy: outlives the cfg it came from */
	struct gw_xmap *bk_xmap;
	unsigned bk_slot;
	unsigned bk_npaths;		/* paths (active or retiring) using it */
	bool bk_used;
	bool bk_retiring;		/* removed by a reload: freed with its last path */
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
	bool pa_seen_up;		/* has been up at least once */
	bool pa_draining;		/* operator drain (or retiring): new calls held */
	struct gw_call_list pa_held;
	unsigned pa_nheld;
	unsigned pa_ncalls;		/* calls routed here and not finalized */
	char pa_name[2 * CFG_NAME_MAX + 8];
	struct gw_path_info pa_info;
};

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
	struct fe_frontend *gw_fe;
	struct gw_backend gw_bslots[GW_BACKEND_SLOTS];
	struct gw_path gw_pslots[GW_PATH_SLOTS];
	unsigned gw_nbackends;
	struct gw_backend *gw_backends[CFG_MAX_BACKENDS];	/* active */
	unsigned gw_npaths;
	struct gw_path *gw_paths[CFG_MAX_ROUTES];		/* active, routable */
	unsigned gw_nretiring;
	struct gw_path *gw_retiring[GW_PATH_SLOTS];
	struct event *gw_reap_ev;
	unsigned gw_nseen_up;		/* active paths that have been up once */
	bool gw_all_up_told;
	unsigned gw_xcap;		/* XID map capacity per backend */
	/* backchannel relay (callback.c) */
	struct gw_cb_sessions *gw_cbs;
	struct gw_cb_relay *gw_cbr;
	struct event *gw_cb_timer;	/* callback timeouts, armed while any is pending */
};

const struct gw_log *gw_ctx_log(const struct gw_ctx *gw) { return gw->gw_p.gp_log; }
struct gw_stats *gw_ctx_stats(struct gw_ctx *gw) { return gw->gw_p.gp_stats; }
struct gw_pool *gw_ctx_pool(struct gw_ctx *gw) { return gw->gw_p.gp_pool; }
const struct cfg *gw_ctx_cfg(const struct gw_ctx *gw) { return gw->gw_p.gp_cfg; }
struct event_base *gw_ctx_base(const struct gw_ctx *gw) { return gw->gw_p.gp_base; }
unsigned gw_ctx_calls_avail(const struct gw_ctx *gw) { return gw_call_pool_avail(gw->gw_calls); }
void *gw_ctx_rdma_arg(const struct gw_ctx *gw) { return gw->gw_p.gp_rdma_arg; }
unsigned gw_ctx_ncalls(const struct gw_ctx *gw) { return gw->gw_p.gp_ncalls; }
void gw_ctx_set_frontend(struct gw_ctx *gw, struct fe_frontend *fe) { gw->gw_fe = fe; }
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
struct fe_frontend *gw_ctx_frontend(const struct gw_ctx *gw) { return gw->gw_fe; }
bool gw_path_up(const struct gw_path *pa) { return pa->pa_up; }
bool gw_path_draining(const struct gw_path *pa) { return pa->pa_draining; }
unsigned gw_path_nheld(const struct gw_path *pa) { return pa->pa_nheld; }
const char *gw_path_transport(const struct gw_path *pa) { return pa->pa_ops ? pa->pa_ops->to_name : "none"; }

int gw_path_tp_info(const struct gw_path *pa, struct gw_tp_info *ti)
{
	memset(ti, 0, sizeof(*ti));
	if (!pa->pa_ops || !pa->pa_ops->to_info || !pa->pa_tp)
		return -ENOTSUP;
	return pa->pa_ops->to_info(pa->pa_tp, ti);
}

#define LG(gw) ((gw)->gw_p.gp_log)
#define ST(gw) ((gw)->gw_p.gp_stats)
#define GW_CB_SESSIONS		1024	/* sessions remembered */
#define GW_CB_PENDING		64	/* callbacks relayed at once (nfsd: 2 per connection) */
#define GW_CB_TICK_MS		250

static void gw_cb_tick(evutil_socket_t fd, short what, void *arg);
static void gw_cb_learn_reply(struct gw_ctx *gw, struct gw_call *c, const struct iovec *iov,
			      unsigned niov);

static void gw_reap_cb(evutil_socket_t fd, short what, void *arg);

/* ---- slots ---- */

static struct gw_backend *gw_backend_slot(struct gw_ctx *gw)
{
	for (unsigned i = 0; i < GW_BACKEND_SLOTS; i++)
		if (!gw->gw_bslots[i].bk_used)
			return &gw->gw_bslots[i];
	return NULL;
}

static struct gw_path *gw_path_slot(struct gw_ctx *gw)
{
	for (unsigned i = 0; i < GW_PATH_SLOTS; i++)
		if (!gw->gw_pslots[i].pa_used)
			return &gw->gw_pslots[i];
	return NULL;
}

static struct gw_xmap *gw_xmap_for_backend(struct gw_ctx *gw)
{
	uint32_t first;

	if (getrandom(&first, sizeof(first), 0) != sizeof(first))
		first = (uint32_t)gw_now_ms() * 2654435761u;
	return gw_xmap_new(gw->gw_xcap, first);
}

static void gw_backend_init(struct gw_ctx *gw, struct gw_backend *bk, const struct cfg_backend *cb,
			    struct gw_xmap *xm)
{
	*bk = (struct gw_backend){ .bk_ccfg = *cb, .bk_xmap = xm, .bk_used = true,
				   .bk_slot = (unsigned)(bk - gw->gw_bslots) };
	bk->bk_cfg = &bk->bk_ccfg;
}

static void gw_path_init(struct gw_ctx *gw, struct gw_path *pa, const struct cfg_route *r,
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
	snprintf(pa->pa_name, sizeof(pa->pa_name), "%s->%s", r->cr_name, bk->bk_cfg->cb_name);
	pa->pa_info = (struct gw_path_info){
		.pi_backend = bk->bk_cfg, .pi_route = pa->pa_route, .pi_pool = p->gp_pool,
		.pi_log = p->gp_log, .pi_stats = p->gp_stats, .pi_base = p->gp_base,
		.pi_cfg = p->gp_cfg, .pi_backend_slot = bk->bk_slot,
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
	if (!gw->gw_calls)
		goto err;
	if (p->gp_base) {
		gw->gw_reap_ev = event_new(p->gp_base, -1, 0, gw_reap_cb, gw);
		if (!gw->gw_reap_ev)
			goto err;
	}
	{
		uint32_t first;

		if (getrandom(&first, sizeof(first), 0) != sizeof(first))
			first = (uint32_t)gw_now_ms() * 2246822519u;
		gw->gw_cbs = gw_cbs_new(GW_CB_SESSIONS);
		gw->gw_cbr = gw_cbr_new(GW_CB_PENDING, first);
		if (!gw->gw_cbs || !gw->gw_cbr)
			goto err;
		if (p->gp_base && !(gw->gw_cb_timer = evtimer_new(p->gp_base, gw_cb_tick, gw)))
			goto err;
	}
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

/* Create the path's transport (it connects asynchronously). */
static int gw_path_start(struct gw_ctx *gw, struct gw_path *pa)
{
	const struct cfg_route *r = pa->pa_route;

	pa->pa_ops = &gw_transport_tcp;
	if (r->cr_transport == CFG_TRANSPORT_RDMA) {
		if (gw->gw_p.gp_rdma_ops)
			pa->pa_ops = gw->gw_p.gp_rdma_ops;
		else
			gw_warn(LG(gw), "route %s: transport rdma is not wired yet; "
				"using the TCP fallback to %s port %u", r->cr_name,
				pa->pa_backend->bk_cfg->cb_host,
				r->cr_port ? r->cr_port : pa->pa_backend->bk_cfg->cb_port);
	}
	pa->pa_tp = pa->pa_ops->to_create(gw, pa);
	if (!pa->pa_tp && pa->pa_ops != &gw_transport_tcp) {
		gw_warn(LG(gw), "route %s: transport %s cannot start; using the TCP fallback "
			"to %s port %u", r->cr_name, pa->pa_ops->to_name,
			pa->pa_backend->bk_cfg->cb_host,
			r->cr_port ? r->cr_port : pa->pa_backend->bk_cfg->cb_port);
		pa->pa_ops = &gw_transport_tcp;
		pa->pa_tp = pa->pa_ops->to_create(gw, pa);
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

static void gw_path_destroy(struct gw_ctx *gw, struct gw_path *pa)
{
	struct gw_call *c;

	while ((c = TAILQ_FIRST(&pa->pa_held)))
		gw_call_finalize(c, GW_END_SHUTDOWN);
	if (pa->pa_tp)
		pa->pa_ops->to_destroy(pa->pa_tp);
	pa->pa_tp = NULL;
	pa->pa_used = false;
	pa->pa_backend->bk_npaths--;
	(void)gw;
}

static void gw_backend_destroy(struct gw_backend *bk)
{
	gw_xmap_free(bk->bk_xmap);
	bk->bk_xmap = NULL;
	bk->bk_used = false;
}

void gw_ctx_free(struct gw_ctx *gw)
{
	if (!gw)
		return;
	/* Callbacks still pending: their server CALLs are released (no reply:
	 * the connections are going) before the transports go. */
	if (gw->gw_cbr) {
		struct gw_cb_pend *cp;

		while ((cp = gw_cbr_first_of(gw->gw_cbr, NULL))) {
			struct gw_path *pa = cp->cbp_path;
			void *h = cp->cbp_handle;

			gw_cbr_remove(gw->gw_cbr, cp);
			if (pa->pa_ops && pa->pa_ops->to_cb_reply && pa->pa_tp)
				pa->pa_ops->to_cb_reply(pa->pa_tp, h, NULL, 0);
		}
	}
	if (gw->gw_cb_timer)
		event_free(gw->gw_cb_timer);
	/* Clients (and so their calls) are gone first: fe_free() runs before. */
	for (unsigned i = 0; i < GW_PATH_SLOTS; i++)
		if (gw->gw_pslots[i].pa_used)
			gw_path_destroy(gw, &gw->gw_pslots[i]);
	for (unsigned i = 0; i < GW_BACKEND_SLOTS; i++)
		if (gw->gw_bslots[i].bk_used)
			gw_backend_destroy(&gw->gw_bslots[i]);
	if (gw->gw_reap_ev)
		event_free(gw->gw_reap_ev);
	gw_cbr_free(gw->gw_cbr);
	gw_cbs_free(gw->gw_cbs);
	gw_call_pool_free(gw->gw_calls);
	free(gw);
}

/* ---- replies ---- */

static void gw_call_set_reply(struct gw_call *c, const struct iovec *iov, unsigned niov)
{
	size_t len = 0;

	for (unsigned i = 0; i < niov; i++)
		len += iov[i].iov_len;
	c->ca_reply_iov = iov;
	c->ca_reply_niov = niov;
	c->ca_reply_len = len;
	rm_encode_hdr(c->ca_mark, (uint32_t)len, true);
	chk_put_be32(c->ca_mark + 4, c->ca_cxid);
}

static void gw_xent_settle(struct gw_call *c)
{
	struct gw_ctx *gw = c->ca_gw;

	if (c->ca_xent && c->ca_path) {
		if (c->ca_xent->xe_call == c)
			gw_xmap_settle(c->ca_path->pa_backend->bk_xmap, c->ca_xent, gw_now_ms(),
				       gw->gw_p.gp_cfg->cf_drc_window_ms);
		c->ca_xent = NULL;
	}
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
	if (c->ca_reply_len < 8) {	/* transports check this; belt and braces */
		gw_stat_inc(ST(gw), GW_CTR_BACKEND_GARBAGE);
		gw_err(LG(gw), "xid %#x: reply of %zu bytes", c->ca_cxid, c->ca_reply_len);
		gw_call_finalize(c, GW_END_FAILED);
		return;
	}
	gw_call_set_state(c, GW_CALL_REPLIED);
	gw_xent_settle(c);
	gw_debug(LG(gw), "xid %#x (gw %#x): reply %zu bytes", c->ca_cxid, c->ca_gxid, c->ca_reply_len);
	if (c->ca_hdr.rc_prog == CFG_PROG_NFS && c->ca_hdr.rc_vers == 4 && c->ca_hdr.rc_proc == 1 && c->ca_conn)
		gw_cb_learn_reply(gw, c, iov, niov);
	fe_conn_reply(c->ca_conn, c);
}

static void gw_local_reply(struct gw_ctx *gw, struct gw_call *c, const struct rpc_reply_hdr *st,
			   enum gw_ctr ctr)
{
	struct xdr_enc xe;

	gw_stat_inc(ST(gw), ctr);
	xdr_enc_init(&xe, c->ca_local, sizeof(c->ca_local));
	if (!rpc_local_reply(&xe, c->ca_cxid, st)) {
		gw_err(LG(gw), "xid %#x: cannot encode local reply", c->ca_cxid);
		gw_call_finalize(c, GW_END_FAILED);
		return;
	}
	c->ca_local_iov = (struct iovec){ c->ca_local, xe.xe_len };
	gw_call_set_reply(c, &c->ca_local_iov, 1);
	gw_call_set_state(c, GW_CALL_REPLIED);
	{
		struct gw_log_ev ev = { .le_xid = c->ca_cxid, .le_has_xid = true,
					.le_client = fe_conn_name(c->ca_conn), .le_prog = c->ca_hdr.rc_prog,
					.le_vers = c->ca_hdr.rc_vers, .le_proc = c->ca_hdr.rc_proc,
					.le_error = gw_ctr_str(ctr) };

		gw_log_ev(LG(gw), CFG_LOG_INFO, &ev, "xid %#x prog %u vers %u from %s: local reply (%s)",
			  c->ca_cxid, c->ca_hdr.rc_prog, c->ca_hdr.rc_vers, fe_conn_name(c->ca_conn), gw_ctr_str(ctr));
	}
	fe_conn_reply(c->ca_conn, c);
}

/* ---- backchannel relay: NFSv4.1 callbacks (design in callback.c) ---- */

static void gw_cb_sid_str(const uint8_t *sid, char *out)
{
	for (unsigned i = 0; i < GW_CB_SESSIONID_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", sid[i]);
}

/* Answer the server's CALL by ourselves: an accepted reply with no results
 * (SUCCESS for CB_NULL, SYSTEM_ERR when the callback cannot be delivered). */
static void gw_cb_answer(struct gw_path *pa, void *handle, uint32_t sxid, uint32_t accept_stat)
{
	struct rpc_reply_hdr st = { .rr_stat = RPC_MSG_ACCEPTED, .rr_accept_stat = accept_stat };
	uint8_t buf[64];
	struct xdr_enc xe;
	struct iovec iov;

	if (!pa->pa_ops->to_cb_reply)
		return;
	xdr_enc_init(&xe, buf, sizeof(buf));
	if (!rpc_local_reply(&xe, sxid, &st)) {
		pa->pa_ops->to_cb_reply(pa->pa_tp, handle, NULL, 0);
		return;
	}
	iov = (struct iovec){ buf, xe.xe_len };
	pa->pa_ops->to_cb_reply(pa->pa_tp, handle, &iov, 1);
}

static void gw_cb_answer_pend(struct gw_ctx *gw, struct gw_cb_pend *cp, uint32_t accept_stat)
{
	struct gw_path *pa = cp->cbp_path;
	void *h = cp->cbp_handle;
	uint32_t sxid = cp->cbp_sxid;

	gw_cbr_remove(gw->gw_cbr, cp);
	gw_cb_answer(pa, h, sxid, accept_stat);
}

static void gw_cb_tick(evutil_socket_t fd, short what, void *arg)
{
	struct gw_ctx *gw = arg;
	struct timeval tv = { 0, GW_CB_TICK_MS * 1000 };
	uint64_t now = gw_now_ms();
	struct gw_cb_pend *cp;

	(void)fd;
	(void)what;
	while ((cp = gw_cbr_first_expired(gw->gw_cbr, now))) {
		gw_stat_inc(ST(gw), GW_CTR_CB_TIMEOUT);
		gw_warn(LG(gw), "callback xid %#x (client xid %#x): no reply within %u ms: SYSTEM_ERR",
			cp->cbp_sxid, cp->cbp_cxid, GW_CB_TIMEOUT_MS);
		gw_cb_answer_pend(gw, cp, RPC_SYSTEM_ERR);
	}
	if (gw_cbr_count(gw->gw_cbr) > 0)
		evtimer_add(gw->gw_cb_timer, &tv);
}

void gw_cb_call(struct gw_path *pa, void *handle, const struct iovec *msg, unsigned niov)
{
	struct gw_ctx *gw = pa->pa_gw;
	struct gw_pool *pool = gw->gw_p.gp_pool;
	struct gw_call *c = NULL;
	struct gw_cb_pend *cp = NULL;
	struct gw_buf *b = NULL;
	struct fe_conn *owner;
	struct gw_cb_msg m;
	char sidstr[2 * GW_CB_SESSIONID_LEN + 1];
	size_t len = 0, off = 0;

	gw_stat_inc(ST(gw), GW_CTR_CB_CALLS);
	for (unsigned i = 0; i < niov; i++)
		len += msg[i].iov_len;
	if (!gw_cb_parse_call(msg, niov, &m)) {
		gw_stat_inc(ST(gw), GW_CTR_CB_BAD);
		gw_err(LG(gw), "path %s: callback of %zu bytes is not an RPC call: dropped",
		       pa->pa_name, len);
		if (pa->pa_ops->to_cb_reply)
			pa->pa_ops->to_cb_reply(pa->pa_tp, handle, NULL, 0);
		return;
	}
	if (m.cm_proc == 0) {
		/* CB_NULL: the server probes the path it sees, which ends at the
		 * gateway; nothing to deliver. */
		gw_stat_inc(ST(gw), GW_CTR_CB_NULL_LOCAL);
		gw_debug(LG(gw), "callback xid %#x prog %#x: CB_NULL answered", m.cm_xid, m.cm_prog);
		gw_cb_answer(pa, handle, m.cm_xid, RPC_SUCCESS);
		return;
	}
	if (!m.cm_has_sid) {
		gw_stat_inc(ST(gw), GW_CTR_CB_NO_OWNER);
		gw_warn(LG(gw), "callback xid %#x prog %#x proc %u (minor version %u): no CB_SEQUENCE, "
			"no session to route by: SYSTEM_ERR", m.cm_xid, m.cm_prog, m.cm_proc,
			m.cm_minorversion);
		gw_cb_answer(pa, handle, m.cm_xid, RPC_SYSTEM_ERR);
		return;
	}
	gw_cb_sid_str(m.cm_sid, sidstr);
	owner = gw_cbs_owner(gw->gw_cbs, m.cm_sid);
	if (!owner) {
		gw_stat_inc(ST(gw), GW_CTR_CB_NO_OWNER);
		gw_warn(LG(gw), "callback xid %#x: session %s has no client connection: SYSTEM_ERR",
			m.cm_xid, sidstr);
		gw_cb_answer(pa, handle, m.cm_xid, RPC_SYSTEM_ERR);
		return;
	}
	if (len > gw_pool_buf_size(pool) || !(c = gw_call_new(gw->gw_calls, gw)) ||
	    !(b = gw_buf_get(pool)) ||
	    !(cp = gw_cbr_add(gw->gw_cbr, owner, m.cm_xid, handle, pa,
			      gw_now_ms() + GW_CB_TIMEOUT_MS))) {
		gw_stat_inc(ST(gw), GW_CTR_CB_FAILED);
		gw_err(LG(gw), "callback xid %#x (%zu bytes) for %s: no %s: SYSTEM_ERR", m.cm_xid, len,
		       fe_conn_name(owner), !c ? "call object" : !b ? "buffer" : "relay slot");
		if (b)
			gw_buf_put(pool, b);
		if (c) {
			gw_call_set_state(c, GW_CALL_DONE);
			gw_call_put(c);
		}
		gw_cb_answer(pa, handle, m.cm_xid, RPC_SYSTEM_ERR);
		return;
	}
	/* The CALL goes to the client as a record of its own, carried by a
	 * call object through the client's output queue (like a local reply):
	 * a copy, so the server's receive buffer is independent of how fast
	 * the client reads.  Its XID is the gateway's (ca_mark). */
	for (unsigned i = 0; i < niov; i++) {
		memcpy(b->gb_data + off, msg[i].iov_base, msg[i].iov_len);
		off += msg[i].iov_len;
	}
	b->gb_used = (uint32_t)len;
	c->ca_reply_rec.rc_iov[0] = (struct iovec){ b->gb_data, len };
	c->ca_reply_rec.rc_buf[0] = b;
	c->ca_reply_rec.rc_niov = 1;
	c->ca_reply_rec.rc_len = len;
	c->ca_cxid = cp->cbp_cxid;
	c->ca_hdr.rc_prog = m.cm_prog;
	c->ca_hdr.rc_vers = m.cm_vers;
	c->ca_hdr.rc_proc = m.cm_proc;
	c->ca_start_ms = gw_now_ms();
	c->ca_start_us = gw_now_us();
	fe_conn_call_add(owner, c);
	gw_call_set_reply(c, c->ca_reply_rec.rc_iov, 1);
	gw_call_set_state(c, GW_CALL_REPLIED);
	gw_info(LG(gw), "callback xid %#x (session %s, %zu bytes) -> client %s as xid %#x",
		m.cm_xid, sidstr, len, fe_conn_name(owner), cp->cbp_cxid);
	fe_conn_reply(owner, c);
	if (gw->gw_cb_timer && !evtimer_pending(gw->gw_cb_timer, NULL)) {
		struct timeval tv = { 0, GW_CB_TICK_MS * 1000 };

		evtimer_add(gw->gw_cb_timer, &tv);
	}
}

/* A REPLY record from a client: the answer to a callback we relayed on
 * this very connection, or nothing we asked for. */
static void gw_cb_on_reply(struct gw_ctx *gw, struct fe_conn *conn, struct gw_rec *rec, uint32_t xid)
{
	struct gw_cb_pend *cp = gw_cbr_find(gw->gw_cbr, conn, xid);
	struct gw_path *pa;
	void *h;
	uint32_t sxid;
	int rc;

	if (!cp) {
		gw_stat_inc(ST(gw), GW_CTR_NOT_A_CALL);
		gw_info(LG(gw), "xid %#x from %s: REPLY to no pending callback: dropped", xid,
			fe_conn_name(conn));
		gw_rec_release(gw->gw_p.gp_pool, rec);
		return;
	}
	pa = cp->cbp_path;
	h = cp->cbp_handle;
	sxid = cp->cbp_sxid;
	gw_cbr_remove(gw->gw_cbr, cp);
	gw_rec_put_be32(rec, 0, sxid);
	rc = pa->pa_ops->to_cb_reply(pa->pa_tp, h, rec->rc_iov, rec->rc_niov);
	if (rc == 0) {
		gw_stat_inc(ST(gw), GW_CTR_CB_RELAYED);
		gw_info(LG(gw), "callback xid %#x: reply (%zu bytes) from %s relayed", sxid,
			rec->rc_len, fe_conn_name(conn));
	} else {
		gw_stat_inc(ST(gw), GW_CTR_CB_FAILED);
		gw_err(LG(gw), "callback xid %#x: reply (%zu bytes) from %s not sent: %s", sxid,
		       rec->rc_len, fe_conn_name(conn), strerror(-rc));
	}
	gw_rec_release(gw->gw_p.gp_pool, rec);
}

/* A COMPOUND reply to a client: CREATE_SESSION or BIND_CONN_TO_SESSION
 * giving this connection a session's back channel. */
static void gw_cb_learn_reply(struct gw_ctx *gw, struct gw_call *c, const struct iovec *iov,
			      unsigned niov)
{
	uint8_t sid[GW_CB_SESSIONID_LEN];
	char sidstr[2 * GW_CB_SESSIONID_LEN + 1];

	if (!gw_cb_parse_bind_reply(iov, niov, sid) ||
	    !gw_cbs_bind(gw->gw_cbs, sid, c->ca_conn, fe_conn_key(c->ca_conn)))
		return;
	gw_stat_inc(ST(gw), GW_CTR_CB_SESSIONS_BOUND);
	gw_cb_sid_str(sid, sidstr);
	gw_info(LG(gw), "session %s: back channel on client %s", sidstr, fe_conn_name(c->ca_conn));
}

/* SEQUENCE from a client while some session has lost its connection: the
 * same client back on a new connection takes its session again. */
static void gw_cb_learn_sequence(struct gw_ctx *gw, struct gw_call *c)
{
	uint8_t sid[GW_CB_SESSIONID_LEN];
	char sidstr[2 * GW_CB_SESSIONID_LEN + 1];

	if (!gw_cb_parse_sequence(c->ca_rec.rc_iov, c->ca_rec.rc_niov, sid) ||
	    !gw_cbs_seen(gw->gw_cbs, sid, c->ca_conn, c->ca_client))
		return;
	gw_stat_inc(ST(gw), GW_CTR_CB_SESSIONS_BOUND);
	gw_cb_sid_str(sid, sidstr);
	gw_info(LG(gw), "session %s: back channel back on client %s (same client, new connection)",
		sidstr, fe_conn_name(c->ca_conn));
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
		gw_stats_observe(ST(gw), GW_HIST_CALL, gw_now_us() - c->ca_start_us);
	if (prev == GW_CALL_HELD) {
		TAILQ_REMOVE(&pa->pa_held, c, ca_path_link);
		pa->pa_nheld--;
	}
	if (c->ca_conn)
		fe_conn_call_remove(c->ca_conn, c);
	gw_xent_settle(c);
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
		if (gw->gw_fe)
			fe_resume_held(gw->gw_fe);
	}
	if (pa && --pa->pa_ncalls == 0 && pa->pa_retiring && gw->gw_reap_ev)
		event_active(gw->gw_reap_ev, 0, 0);	/* not from here: maybe a tp callback */
	gw_call_put(c);
}

void gw_on_conn_close(struct gw_ctx *gw, struct fe_conn *conn)
{
	struct gw_cb_pend *cp;

	/* Callbacks waiting for this client: the server gets SYSTEM_ERR now
	 * rather than waiting for its own timeout. */
	while ((cp = gw_cbr_first_of(gw->gw_cbr, conn))) {
		gw_stat_inc(ST(gw), GW_CTR_CB_CLIENT_GONE);
		gw_warn(LG(gw), "callback xid %#x (client xid %#x): client %s closed before replying",
			cp->cbp_sxid, cp->cbp_cxid, fe_conn_name(conn));
		gw_cb_answer_pend(gw, cp, RPC_SYSTEM_ERR);
	}
	gw_cbs_owner_gone(gw->gw_cbs, conn);
	fe_conn_finalize_calls(conn, GW_END_CLIENT_GONE);
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
	if (pa->pa_nheld > gw->gw_p.gp_cfg->cf_held_calls && c->ca_conn) {
		gw_stat_inc(ST(gw), GW_CTR_HOLD_FULL);
		if (!pa->pa_blocking)
			gw_warn(LG(gw), "path %s: %u calls held; reading from clients paused",
				pa->pa_name, pa->pa_nheld);
		pa->pa_blocking = true;
		fe_conn_hold(c->ca_conn, true);
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
	rc = pa->pa_ops->to_submit(pa->pa_tp, c);
	if (rc == 0)
		return true;
	if (rc == -EAGAIN) {
		gw_path_hold(pa, c, was_held);
		return false;
	}
	gw_err(LG(gw), "xid %#x (gw %#x): path %s refused the call: %s", c->ca_cxid, c->ca_gxid,
	       pa->pa_name, strerror(-rc));
	gw_call_finalize(c, GW_END_FAILED);
	return true;
}

static void gw_path_submit(struct gw_path *pa, struct gw_call *c)
{
	if (!pa->pa_up || pa->pa_draining || !TAILQ_EMPTY(&pa->pa_held))
		gw_path_hold(pa, c, false);
	else
		gw_path_try(pa, c, false);
}

void gw_path_ready(struct gw_path *pa, bool up)
{
	struct gw_ctx *gw = pa->pa_gw;
	struct gw_call *c;

	if (pa->pa_up != up) {
		gw_info(LG(gw), "path %s: transport %s %s (%u calls held)", pa->pa_name,
			pa->pa_ops->to_name, up ? "up" : "down", pa->pa_nheld);
		/* systemd status line (no-op outside a Type=notify unit) */
		sd_notifyf(0, "STATUS=path %s: %s %s", pa->pa_name, pa->pa_ops->to_name,
			   up ? "up" : "down, calls held");
	}
	pa->pa_up = up;
	if (up && !pa->pa_seen_up && !pa->pa_retiring) {
		pa->pa_seen_up = true;
		if (++gw->gw_nseen_up == gw->gw_npaths && !gw->gw_all_up_told && gw->gw_p.gp_all_up) {
			gw->gw_all_up_told = true;
			gw->gw_p.gp_all_up(gw->gw_p.gp_all_up_arg);
		}
	}
	while (pa->pa_up && !pa->pa_draining && (c = TAILQ_FIRST(&pa->pa_held))) {
		TAILQ_REMOVE(&pa->pa_held, c, ca_path_link);
		pa->pa_nheld--;
		if (!gw_path_try(pa, c, true))
			break;
	}
	if (pa->pa_blocking && pa->pa_nheld <= gw->gw_p.gp_cfg->cf_held_calls / 2) {
		pa->pa_blocking = false;
		if (gw->gw_fe)
			fe_resume_held(gw->gw_fe);
	}
}

void gw_path_set_drain(struct gw_path *pa, bool on)
{
	if (pa->pa_draining == on)
		return;
	pa->pa_draining = on;
	gw_info(LG(pa->pa_gw), "path %s: %s (%u calls held)", pa->pa_name,
		on ? "draining: new calls held" : "undrained", pa->pa_nheld);
	if (!on)
		gw_path_ready(pa, pa->pa_up);
}

struct gw_call *gw_path_lookup(struct gw_path *pa, uint32_t gxid)
{
	struct gw_xent *xe = gw_xmap_by_gxid(pa->pa_backend->bk_xmap, gxid);

	if (!xe || !xe->xe_call || xe->xe_call->ca_path != pa || xe->xe_call->ca_state != GW_CALL_SENT)
		return NULL;
	return xe->xe_call;
}

/* ---- a record from a client ---- */

static struct gw_path *gw_route(struct gw_ctx *gw, uint32_t prog)
{
	for (unsigned i = 0; i < gw->gw_npaths; i++)
		if (gw->gw_paths[i]->pa_route->cr_prog == prog)
			return gw->gw_paths[i];
	return NULL;
}

/* XID remapping of a call routed to pa (c->ca_path == pa): a fresh gateway
 * XID, or the one of an answered call it retransmits.  false when the call
 * was finalized (retransmission of a call in flight, map full). */
static bool gw_call_map_xid(struct gw_path *pa, struct gw_call *c)
{
	struct gw_ctx *gw = pa->pa_gw;
	struct gw_xent *xe;
	bool evicted;

	xe = gw_xmap_find(pa->pa_backend->bk_xmap, c->ca_client, c->ca_cxid, c->ca_start_ms);
	if (xe && xe->xe_call) {
		gw_stat_inc(ST(gw), GW_CTR_RETRANS_INFLIGHT);
		gw_info(LG(gw), "xid %#x from %s: retransmission while in flight (gw %#x): dropped",
			c->ca_cxid, fe_conn_name(c->ca_conn), xe->xe_gxid);
		gw_call_finalize(c, GW_END_RETRANS);
		return false;
	}
	if (xe) {
		gw_stat_inc(ST(gw), GW_CTR_RETRANS_RESENT);
		gw_info(LG(gw), "xid %#x from %s: retransmission, same gateway xid %#x", c->ca_cxid,
			fe_conn_name(c->ca_conn), xe->xe_gxid);
		gw_xmap_attach(pa->pa_backend->bk_xmap, xe, c);
	} else {
		xe = gw_xmap_add(pa->pa_backend->bk_xmap, c->ca_client, c->ca_cxid, c, c->ca_start_ms,
				 &evicted);
		if (evicted)
			gw_stat_inc(ST(gw), GW_CTR_XMAP_EVICTED);
		if (!xe) {	/* cannot happen: the map holds every call object */
			gw_err(LG(gw), "xid %#x: XID map full", c->ca_cxid);
			gw_call_finalize(c, GW_END_FAILED);
			return false;
		}
	}
	c->ca_xent = xe;
	c->ca_gxid = xe->xe_gxid;
	gw_rec_put_be32(&c->ca_rec, 0, c->ca_gxid);
	return true;
}

int gw_on_record(struct gw_ctx *gw, struct fe_conn *conn, struct gw_rec *rec)
{
	struct rpc_reply_hdr st = { 0 };
	struct rpc_call_hdr *hdr;
	enum chk_walk_err werr;
	struct xdr_cur xc;
	struct gw_call *c;
	struct gw_path *pa;
	uint32_t xid, mtype;

	xdr_cur_init(&xc, rec->rc_iov, rec->rc_niov);
	if (!xdr_get_u32(&xc, &xid) || !xdr_get_u32(&xc, &mtype) ||
	    (mtype != RPC_CALL && mtype != RPC_REPLY)) {
		struct gw_log_ev ev = { .le_client = fe_conn_name(conn), .le_error = "not_rpc" };

		gw_log_ev(LG(gw), CFG_LOG_ERR, &ev, "client %s: record of %zu bytes is not an RPC message",
			  fe_conn_name(conn), rec->rc_len);
		gw_rec_release(gw->gw_p.gp_pool, rec);
		return -EPROTO;
	}
	if (mtype == RPC_REPLY) {
		/* A backchannel reply: to a callback we relayed, or nobody's. */
		gw_cb_on_reply(gw, conn, rec, xid);
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
	c->ca_start_ms = gw_now_ms();
	c->ca_start_us = gw_now_us();
	fe_conn_call_add(conn, c);

	xdr_cur_init(&xc, c->ca_rec.rc_iov, c->ca_rec.rc_niov);
	hdr = &c->ca_hdr;
	if (!rpc_call_decode(&xc, hdr)) {
		if (hdr->rc_auth_stat) {
			st.rr_stat = RPC_MSG_DENIED;
			st.rr_reject_stat = RPC_AUTH_ERROR;
			st.rr_auth_stat = hdr->rc_auth_stat;
			gw_local_reply(gw, c, &st, GW_CTR_LOCAL_AUTH_ERROR);
			return 0;
		}
		struct gw_log_ev ev = { .le_xid = xid, .le_has_xid = true,
					.le_client = fe_conn_name(conn), .le_error = xdr_err_str(xc.xc_err) };

		gw_log_ev(LG(gw), CFG_LOG_ERR, &ev, "xid %#x from %s: undecodable call header (%s)", xid,
			  fe_conn_name(conn), xdr_err_str(xc.xc_err));
		gw_call_finalize(c, GW_END_FAILED);
		return -EPROTO;
	}
	gw_stats_proc(ST(gw), hdr->rc_prog, hdr->rc_vers, hdr->rc_proc);
	if (hdr->rc_rpcvers != RPC_VERS) {
		st.rr_stat = RPC_MSG_DENIED;
		st.rr_reject_stat = RPC_MISMATCH;
		st.rr_low = st.rr_high = RPC_VERS;
		gw_local_reply(gw, c, &st, GW_CTR_LOCAL_RPC_MISMATCH);
		return 0;
	}
	if (hdr->rc_cred.oa_flavor == RPC_AUTH_TLS) {
		/* RFC 9289 4.1: a server without RPC-with-TLS rejects the probe;
		 * the gateway does not offer TLS yet, whatever the server does. */
		st.rr_stat = RPC_MSG_DENIED;
		st.rr_reject_stat = RPC_AUTH_ERROR;
		st.rr_auth_stat = RPC_AUTH_BADCRED;
		gw_local_reply(gw, c, &st, GW_CTR_LOCAL_AUTH_ERROR);
		return 0;
	}
	pa = gw_route(gw, hdr->rc_prog);
	if (!pa) {
		st.rr_stat = RPC_MSG_ACCEPTED;
		st.rr_accept_stat = RPC_PROG_UNAVAIL;
		gw_local_reply(gw, c, &st, GW_CTR_LOCAL_PROG_UNAVAIL);
		return 0;
	}
	if (hdr->rc_vers < pa->pa_route->cr_vers_low || hdr->rc_vers > pa->pa_route->cr_vers_high) {
		st.rr_stat = RPC_MSG_ACCEPTED;
		st.rr_accept_stat = RPC_PROG_MISMATCH;
		st.rr_low = pa->pa_route->cr_vers_low;
		st.rr_high = pa->pa_route->cr_vers_high;
		gw_local_reply(gw, c, &st, GW_CTR_LOCAL_PROG_MISMATCH);
		return 0;
	}
	c->ca_path = pa;
	/* RPCSEC_GSS integrity/privacy bodies cannot be reduced (RFC 8166
	 * 8.2.2.3): the walkers take the service and offer no DDP then. */
	if (hdr->rc_cred.oa_flavor == RPC_RPCSEC_GSS)
		c->ca_gss = hdr->rc_gss_proc != 0 ? CHK_GSS_CONTROL : hdr->rc_gss_service;
	chk_call_walk(&xc, hdr->rc_prog, hdr->rc_vers, hdr->rc_proc, c->ca_gss, &c->ca_walk, &werr);
	if (hdr->rc_prog == CFG_PROG_NFS && hdr->rc_vers == 4 && hdr->rc_proc == 1 &&
	    gw_cbs_ownerless(gw->gw_cbs) > 0)
		gw_cb_learn_sequence(gw, c);

	pa->pa_ncalls++;
	if (!gw_call_map_xid(pa, c))
		return 0;
	gw_debug(LG(gw), "xid %#x prog %u vers %u proc %u from %s: gw xid %#x via %s", xid,
		 hdr->rc_prog, hdr->rc_vers, hdr->rc_proc, fe_conn_name(conn), c->ca_gxid, pa->pa_name);
	gw_stats_nfs4_ops(ST(gw), &c->ca_walk);	/* once per call, not per submit */
	gw_path_submit(pa, c);
	return 0;
}

/* ---- reload: routes and backends (gw_ctx_reload) ---- */

static struct gw_backend *gw_backend_active(struct gw_ctx *gw, const char *name)
{
	for (unsigned i = 0; i < gw->gw_nbackends; i++)
		if (!gw->gw_backends[i]->bk_retiring && !strcmp(gw->gw_backends[i]->bk_cfg->cb_name, name))
			return gw->gw_backends[i];
	return NULL;
}

static struct gw_path *gw_path_active(struct gw_ctx *gw, const char *route)
{
	for (unsigned i = 0; i < gw->gw_npaths; i++)
		if (!strcmp(gw->gw_paths[i]->pa_route->cr_name, route))
			return gw->gw_paths[i];
	return NULL;
}

/* A retired path's held calls were never given to its transport: route
 * them again, as new calls would be.  Their XID moves to the new backend's
 * map (a retransmission of an answered call finds its old gateway XID when
 * the backend is the same). */
static void gw_path_rehome_held(struct gw_ctx *gw, struct gw_path *old)
{
	struct gw_call *c;
	unsigned moved = 0, failed = 0;

	while ((c = TAILQ_FIRST(&old->pa_held))) {
		struct gw_path *np = gw_route(gw, c->ca_hdr.rc_prog);

		if (!np) {
			failed++;
			gw_call_finalize(c, GW_END_FAILED);	/* the client's retry gets PROG_UNAVAIL */
			continue;
		}
		TAILQ_REMOVE(&old->pa_held, c, ca_path_link);
		old->pa_nheld--;
		old->pa_ncalls--;
		if (c->ca_xent) {
			if (c->ca_xent->xe_call == c)
				gw_xmap_remove(old->pa_backend->bk_xmap, c->ca_xent);
			c->ca_xent = NULL;
		}
		c->ca_path = np;
		np->pa_ncalls++;
		if (!gw_call_map_xid(np, c))
			continue;
		TAILQ_INSERT_TAIL(&np->pa_held, c, ca_path_link);
		np->pa_nheld++;
		moved++;
	}
	if (moved || failed)
		gw_info(LG(gw), "path %s: %u held calls moved to their new path, %u without a route "
			"ended", old->pa_name, moved, failed);
	if (old->pa_blocking) {
		old->pa_blocking = false;
		if (gw->gw_fe)
			fe_resume_held(gw->gw_fe);
	}
}

static void gw_path_retire(struct gw_ctx *gw, struct gw_path *pa, const char *why)
{
	pa->pa_retiring = true;
	pa->pa_draining = true;		/* the drain machinery: nothing new is submitted */
	gw->gw_retiring[gw->gw_nretiring++] = pa;
	gw_info(LG(gw), "path %s: removed by reload (%s); %u calls to finish", pa->pa_name, why,
		pa->pa_ncalls - pa->pa_nheld);
}

static void gw_reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gw_ctx *gw = arg;
	unsigned n = 0;

	(void)fd;
	(void)what;
	for (unsigned i = 0; i < gw->gw_nretiring; i++) {
		struct gw_path *pa = gw->gw_retiring[i];

		if (pa->pa_ncalls > 0) {
			gw->gw_retiring[n++] = pa;
			continue;
		}
		gw_info(LG(gw), "path %s: drained; transport closed", pa->pa_name);
		gw_path_destroy(gw, pa);
	}
	gw->gw_nretiring = n;
	for (unsigned i = 0; i < GW_BACKEND_SLOTS; i++) {
		struct gw_backend *bk = &gw->gw_bslots[i];

		if (bk->bk_used && bk->bk_retiring && bk->bk_npaths == 0) {
			gw_info(LG(gw), "backend %s: removed", bk->bk_cfg->cb_name);
			gw_backend_destroy(bk);
		}
	}
}

int gw_ctx_reload(struct gw_ctx *gw, const struct cfg *cf, const struct cfg_diff *d, char *err,
		  size_t errlen)
{
	struct gw_backend *nb[CFG_MAX_BACKENDS] = { NULL };
	struct gw_path *np[CFG_MAX_ROUTES] = { NULL };
	struct gw_xmap *xm[CFG_MAX_BACKENDS] = { NULL };
	struct gw_path *retire[CFG_MAX_ROUTES];
	const char *retire_why[CFG_MAX_ROUTES];
	unsigned nretire = 0, bfree = 0, pfree = 0, badd = 0, padd = 0, nstarted = 0;
	unsigned nadded[CFG_MAX_ROUTES];

	if (d->cd_nrestart) {
		snprintf(err, errlen, "a restart-only key changed");
		return -EINVAL;
	}
	/* 1. Room and memory first: after this nothing fails but a transport. */
	for (unsigned i = 0; i < GW_BACKEND_SLOTS; i++)
		bfree += !gw->gw_bslots[i].bk_used;
	for (unsigned i = 0; i < GW_PATH_SLOTS; i++)
		pfree += !gw->gw_pslots[i].pa_used;
	for (unsigned k = 0; k < d->cd_n; k++) {
		const struct cfg_action *a = &d->cd_act[k];

		badd += a->ac_kind == CFG_ACT_BACKEND_ADD ||
			(a->ac_kind == CFG_ACT_BACKEND_KEEP && !gw_backend_active(gw, cf->cf_backends[a->ac_new].cb_name));
		padd += a->ac_kind == CFG_ACT_ROUTE_ADD ||
			(a->ac_kind == CFG_ACT_ROUTE_KEEP && !gw_path_active(gw, cf->cf_routes[a->ac_new].cr_name));
	}
	if (badd > bfree || padd > pfree) {
		snprintf(err, errlen, "%u new backends and %u new routes, room for %u and %u while "
			 "%u removed paths still finish their calls; reload again later", badd, padd,
			 bfree, pfree, gw->gw_nretiring);
		return -ENOSPC;
	}
	for (unsigned k = 0; k < d->cd_n; k++) {
		const struct cfg_action *a = &d->cd_act[k];
		struct gw_backend *bk;

		if (a->ac_kind != CFG_ACT_BACKEND_ADD && a->ac_kind != CFG_ACT_BACKEND_KEEP)
			continue;
		bk = a->ac_kind == CFG_ACT_BACKEND_KEEP ? gw_backend_active(gw, cf->cf_backends[a->ac_new].cb_name)
			: NULL;
		if (bk)
			continue;
		xm[a->ac_new] = gw_xmap_for_backend(gw);
		if (!xm[a->ac_new]) {
			for (unsigned i = 0; i < CFG_MAX_BACKENDS; i++)
				gw_xmap_free(xm[i]);
			snprintf(err, errlen, "no memory for the XID map of backend %s",
				 cf->cf_backends[a->ac_new].cb_name);
			return -ENOMEM;
		}
	}

	/* 2. Backends: kept ones take the new copy, removed ones retire,
	 *    new ones take a slot. */
	for (unsigned k = 0; k < d->cd_n; k++) {
		const struct cfg_action *a = &d->cd_act[k];

		if (a->ac_kind == CFG_ACT_BACKEND_REMOVE) {
			struct gw_backend *bk = gw_backend_active(gw, gw_ctx_cfg(gw)->cf_backends[a->ac_old].cb_name);

			if (bk) {
				bk->bk_retiring = true;
				gw_info(LG(gw), "backend %s: removed by reload (%s)", bk->bk_cfg->cb_name,
					a->ac_what);
			}
		}
	}
	for (unsigned k = 0; k < d->cd_n; k++) {
		const struct cfg_action *a = &d->cd_act[k];
		const struct cfg_backend *cb;

		if (a->ac_kind != CFG_ACT_BACKEND_ADD && a->ac_kind != CFG_ACT_BACKEND_KEEP)
			continue;
		cb = &cf->cf_backends[a->ac_new];
		if (!xm[a->ac_new]) {
			nb[a->ac_new] = gw_backend_active(gw, cb->cb_name);
			nb[a->ac_new]->bk_ccfg = *cb;
			continue;
		}
		nb[a->ac_new] = gw_backend_slot(gw);
		gw_backend_init(gw, nb[a->ac_new], cb, xm[a->ac_new]);
		gw_info(LG(gw), "backend %s: added (%s)", cb->cb_name, cb->cb_host);
	}

	/* 3. Routes. */
	for (unsigned k = 0; k < d->cd_n; k++) {
		const struct cfg_action *a = &d->cd_act[k];
		struct gw_path *pa;

		if (a->ac_kind == CFG_ACT_ROUTE_REMOVE) {
			pa = gw_path_active(gw, gw_ctx_cfg(gw)->cf_routes[a->ac_old].cr_name);
			if (pa) {
				retire_why[nretire] = a->ac_what;
				retire[nretire++] = pa;
			}
			continue;
		}
		if (a->ac_kind != CFG_ACT_ROUTE_ADD && a->ac_kind != CFG_ACT_ROUTE_KEEP)
			continue;
		pa = a->ac_kind == CFG_ACT_ROUTE_KEEP ? gw_path_active(gw, cf->cf_routes[a->ac_new].cr_name)
		     : NULL;
		if (pa) {
			pa->pa_rcfg = cf->cf_routes[a->ac_new];	/* versions may have moved */
			np[a->ac_new] = pa;
			continue;
		}
		pa = gw_path_slot(gw);
		gw_path_init(gw, pa, &cf->cf_routes[a->ac_new], nb[cf->cf_routes[a->ac_new].cr_backend]);
		np[a->ac_new] = pa;
		nadded[nstarted++] = a->ac_new;
	}

	/* 4. Swap: the new table routes from now on. */
	gw->gw_p.gp_cfg = cf;
	gw->gw_nbackends = cf->cf_nbackends;
	for (unsigned i = 0; i < cf->cf_nbackends; i++)
		gw->gw_backends[i] = nb[i];
	for (unsigned i = 0; i < nretire; i++)
		gw_path_retire(gw, retire[i], retire_why[i]);
	gw->gw_npaths = 0;
	for (unsigned i = 0; i < cf->cf_nroutes; i++) {
		bool added = false;

		for (unsigned j = 0; j < nstarted; j++)
			added |= nadded[j] == i;
		if (added && gw_path_start(gw, np[i]) < 0) {
			np[i]->pa_used = false;		/* its program gets PROG_UNAVAIL */
			np[i]->pa_backend->bk_npaths--;
			gw_stat_inc(ST(gw), GW_CTR_RELOAD_FAILED);
			continue;
		}
		gw->gw_paths[gw->gw_npaths++] = np[i];
	}
	for (unsigned i = 0; i < GW_PATH_SLOTS; i++)
		if (gw->gw_pslots[i].pa_used)
			gw->gw_pslots[i].pa_info.pi_cfg = cf;
	gw->gw_nseen_up = 0;
	for (unsigned i = 0; i < gw->gw_npaths; i++)
		gw->gw_nseen_up += gw->gw_paths[i]->pa_seen_up;

	/* 5. What the retired paths held goes to the new ones; wake those. */
	for (unsigned i = 0; i < nretire; i++)
		gw_path_rehome_held(gw, retire[i]);
	for (unsigned i = 0; i < gw->gw_npaths; i++)
		if (gw->gw_paths[i]->pa_nheld && gw->gw_paths[i]->pa_tp)
			gw_path_ready(gw->gw_paths[i], gw->gw_paths[i]->pa_up);
	if (gw->gw_reap_ev)
		event_active(gw->gw_reap_ev, 0, 0);
	return 0;
}
