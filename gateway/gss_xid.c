// SPDX-License-Identifier: MIT
/*
 * This file contains the XID rule for RPCSEC_GSS calls: they keep the
 * client's XID on the way to the server, and wait while that XID is busy.
 *
 * Why: the verifier of an RPCSEC_GSS call is a MIC over the RPC header
 * from the XID on (RFC 2203 5.3.1), so the gateway cannot give such a call
 * a gateway XID as it does every other call (xmap.c).  Two clients may use
 * the same XID, though, and every call reaches the server from the
 * gateway's address: two live calls with one XID would confuse the reply
 * match, and a call whose XID is still in the server's duplicate request
 * cache window for another client's call could be taken for that call's
 * retransmission.  So while the XID is mapped on the backend (in flight,
 * or answered less than drc_window ago for a call a DRC keeps:
 * gw_xmap_keeps_answered) the call waits on its backend's wait list in
 * state XWAIT, counted (gss_xid_waits), and a timer tries the list again
 * every GW_XWAIT_RETRY_MS.  Collisions are rare (client XIDs start at
 * random values); the wait is the price of never sending two calls with
 * one XID.  Answered reads free their XID at once: two busy clients whose
 * XID counters run close would otherwise wait on each other's reads for
 * the whole window, call after call.
 *
 * A retransmission of a waiting call is dropped like one of a call in
 * flight.  A waiting call whose path a reload retired ends without a reply
 * (the client's retransmission is routed afresh).
 */
#include <errno.h>

#include <event2/event.h>

#include "call.h"
#include "ctx.h"
#include "log.h"
#include "xmap.h"

#define GW_XWAIT_RETRY_MS	50

bool gw_call_keeps_xid(const struct gw_call *c)
{
	return c->ca_hdr.rc_cred.oa_flavor == RPC_RPCSEC_GSS;
}

/* A waiter with XID cxid: from any client (any_client) or from client. */
static struct gw_call *gw_xwait_find(struct gw_backend *bk, uint64_t client, uint32_t cxid,
				     bool any_client)
{
	struct gw_call *w;

	TAILQ_FOREACH(w, &bk->bk_xwait, ca_path_link)
		if (w->ca_cxid == cxid && (any_client || w->ca_client == client))
			return w;
	return NULL;
}

static void gw_xwait_arm(struct gw_ctx *gw)
{
	struct timeval tv = { 0, GW_XWAIT_RETRY_MS * 1000 };

	if (gw->gw_xwait_ev && !evtimer_pending(gw->gw_xwait_ev, NULL))
		evtimer_add(gw->gw_xwait_ev, &tv);
}

/* The GSS branch of gw_call_map_xid for a call with no map entry yet. */
enum gw_xwait gw_xwait_map(struct gw_path *pa, struct gw_call *c, struct gw_xent **xep)
{
	struct gw_ctx *gw = pa->pa_gw;
	struct gw_backend *bk = pa->pa_backend;
	enum gw_xevict evicted;

	if (gw_xwait_find(bk, c->ca_client, c->ca_cxid, false)) {
		gw_stat_inc(ST(gw), GW_CTR_RETRANS_INFLIGHT);
		gw_call_finalize(c, GW_END_RETRANS);
		return GW_XWAIT_ENDED;
	}
	if (gw_xwait_find(bk, 0, c->ca_cxid, true) ||	/* first come, first served */
	    gw_xmap_gxid_busy(bk->bk_xmap, c->ca_cxid, c->ca_start_ms)) {
		struct gw_log_ev ev = { .le_xid = c->ca_cxid, .le_has_xid = true,
					.le_client = gw_client_name(c->ca_cl), .le_error = "gss_xid_wait" };

		if (gw_call_set_state(c, GW_CALL_XWAIT) < 0) {
			gw_call_finalize(c, GW_END_FAILED);
			return GW_XWAIT_ENDED;
		}
		TAILQ_INSERT_TAIL(&bk->bk_xwait, c, ca_path_link);
		bk->bk_nxwait++;
		gw_src_xwait_add(c->ca_cl->gcl_src_ent);	/* at most GW_XWAIT_PER_SOURCE */
		gw_stat_inc(ST(gw), GW_CTR_GSS_XID_WAIT);
		gw_log_ev(LG(gw), CFG_LOG_INFO, &ev, "xid %#x from %s: RPCSEC_GSS call waits: "
			  "its XID is busy on %s", c->ca_cxid, gw_client_name(c->ca_cl), pa->pa_name);
		gw_xwait_arm(gw);
		return GW_XWAIT_PARKED;
	}
	*xep = gw_xmap_add_as(bk->bk_xmap, c->ca_client, c->ca_src, c->ca_cxid, c, c->ca_start_ms,
			      &evicted);
	gw_xmap_count_evict(gw, c, evicted);
	return *xep ? GW_XWAIT_MAPPED : GW_XWAIT_FULL;
}

void gw_xwait_remove(struct gw_call *c)
{
	struct gw_backend *bk = c->ca_path->pa_backend;

	TAILQ_REMOVE(&bk->bk_xwait, c, ca_path_link);
	bk->bk_nxwait--;
	if (c->ca_cl)	/* always: a client's calls end before it goes */
		gw_src_xwait_remove(c->ca_gw->gw_srcs, c->ca_cl->gcl_src_ent);
}

/* Waiters in arrival order; one whose XID is free goes on. */
static bool gw_xwait_backend(struct gw_ctx *gw, struct gw_backend *bk, uint64_t now)
{
	struct gw_call *c, *next;

	for (c = TAILQ_FIRST(&bk->bk_xwait); c; c = next) {
		struct gw_path *pa = c->ca_path;
		struct gw_xent *xe;
		enum gw_xevict evicted;

		next = TAILQ_NEXT(c, ca_path_link);
		if (pa->pa_retiring) {
			gw_call_finalize(c, GW_END_FAILED);
			continue;
		}
		if (gw_xmap_gxid_busy(bk->bk_xmap, c->ca_cxid, now))
			continue;
		xe = gw_xmap_add_as(bk->bk_xmap, c->ca_client, c->ca_src, c->ca_cxid, c, now, &evicted);
		if (!xe)
			continue;	/* every entry in flight: next round */
		gw_xmap_count_evict(gw, c, evicted);
		gw_xwait_remove(c);
		c->ca_xent = xe;
		c->ca_gxid = xe->xn_gxid;
		gw_call_send(pa, c);
	}
	return !TAILQ_EMPTY(&bk->bk_xwait);
}

void gw_xwait_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gw_ctx *gw = arg;
	uint64_t now = gw_now_ms();
	bool more = false;

	(void)fd;
	(void)what;
	for (unsigned i = 0; i < GW_BACKEND_SLOTS; i++)
		if (gw->gw_bslots[i].bk_used && gw_xwait_backend(gw, &gw->gw_bslots[i], now))
			more = true;
	if (more)
		gw_xwait_arm(gw);
}

void gw_xwait_path_gone(struct gw_path *pa)
{
	struct gw_call *c, *next;

	for (c = TAILQ_FIRST(&pa->pa_backend->bk_xwait); c; c = next) {
		next = TAILQ_NEXT(c, ca_path_link);
		if (c->ca_path == pa)
			gw_call_finalize(c, GW_END_SHUTDOWN);
	}
}
