// SPDX-License-Identifier: MIT
/*
 * This file contains the reload of routes and backends (gw_ctx_reload,
 * contract in gateway.h) and the reaping of what a reload retired.
 *
 * Order of a reload: room and memory first (after that nothing fails but
 * a transport), then backends (kept ones take the new copy, removed ones
 * retire, new ones take a slot), routes, the swap of the routing table,
 * and last the held calls of retired paths, which go to the program's new
 * path.  A retired path finishes its calls in flight; gw_reap_cb frees its
 * slot, and its backend's once no path uses it, from the event loop.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "call.h"
#include "config.h"
#include "ctx.h"
#include "gateway.h"
#include "log.h"
#include "xmap.h"

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
			if (c->ca_xent->xn_call == c)
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
		gw_clients_resume(gw);
	}
}

static void gw_path_retire(struct gw_ctx *gw, struct gw_path *pa, const char *why)
{
	gw_path_fallback_off(pa);	/* its held calls are rehomed with the others */
	pa->pa_retiring = true;
	pa->pa_draining = true;		/* the drain machinery: nothing new is submitted */
	gw->gw_retiring[gw->gw_nretiring++] = pa;
	gw_info(LG(gw), "path %s: removed by reload (%s); %u calls to finish", pa->pa_name, why,
		pa->pa_ncalls - pa->pa_nheld);
}

void gw_reap_cb(evutil_socket_t fd, short what, void *arg)
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
		gw_path_destroy(pa);
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

/* What a reload decided, indexed like the new configuration's sections. */
struct gw_reload_plan {
	struct gw_backend *rpl_nb[CFG_MAX_BACKENDS];	/* backend of each new section */
	struct gw_path *rpl_np[CFG_MAX_ROUTES];		/* path of each new route */
	struct gw_xmap *rpl_xm[CFG_MAX_BACKENDS];	/* XID maps of the added backends */
	bool rpl_added[CFG_MAX_ROUTES];			/* a new path: start its transport */
	struct gw_path *rpl_retire[CFG_MAX_ROUTES];
	const char *rpl_retire_why[CFG_MAX_ROUTES];
	unsigned rpl_nretire;
};

/* 1. Room and memory first: after this nothing fails but a transport. */
static int gw_reload_room(struct gw_ctx *gw, const struct cfg *cf, const struct cfg_diff *d,
			  struct gw_reload_plan *pl, char *err, size_t errlen)
{
	unsigned bfree = 0, pfree = 0, badd = 0, padd = 0;

	for (unsigned i = 0; i < GW_BACKEND_SLOTS; i++)
		bfree += !gw->gw_bslots[i].bk_used;
	for (unsigned i = 0; i < GW_PATH_SLOTS; i++)
		pfree += !gw->gw_pslots[i].pa_used;
	for (unsigned k = 0; k < d->cdf_n; k++) {
		const struct cfg_action *a = &d->cdf_act[k];

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
	for (unsigned k = 0; k < d->cdf_n; k++) {
		const struct cfg_action *a = &d->cdf_act[k];
		struct gw_backend *bk;

		if (a->ac_kind != CFG_ACT_BACKEND_ADD && a->ac_kind != CFG_ACT_BACKEND_KEEP)
			continue;
		bk = a->ac_kind == CFG_ACT_BACKEND_KEEP ? gw_backend_active(gw, cf->cf_backends[a->ac_new].cb_name)
			: NULL;
		if (bk)
			continue;
		pl->rpl_xm[a->ac_new] = gw_xmap_for_backend(gw);
		if (!pl->rpl_xm[a->ac_new]) {
			for (unsigned i = 0; i < CFG_MAX_BACKENDS; i++)
				gw_xmap_free(pl->rpl_xm[i]);
			snprintf(err, errlen, "no memory for the XID map of backend %s",
				 cf->cf_backends[a->ac_new].cb_name);
			return -ENOMEM;
		}
	}
	return 0;
}

/* 2. Backends: kept ones take the new copy, removed ones retire, new ones
 *    take a slot. */
static void gw_reload_backends(struct gw_ctx *gw, const struct cfg *cf, const struct cfg_diff *d,
			       struct gw_reload_plan *pl)
{
	for (unsigned k = 0; k < d->cdf_n; k++) {
		const struct cfg_action *a = &d->cdf_act[k];

		if (a->ac_kind == CFG_ACT_BACKEND_REMOVE) {
			struct gw_backend *bk = gw_backend_active(gw, gw_ctx_cfg(gw)->cf_backends[a->ac_old].cb_name);

			if (bk) {
				bk->bk_retiring = true;
				gw_info(LG(gw), "backend %s: removed by reload (%s)", bk->bk_cfg->cb_name,
					a->ac_what);
			}
		}
	}
	for (unsigned k = 0; k < d->cdf_n; k++) {
		const struct cfg_action *a = &d->cdf_act[k];
		const struct cfg_backend *cb;

		if (a->ac_kind != CFG_ACT_BACKEND_ADD && a->ac_kind != CFG_ACT_BACKEND_KEEP)
			continue;
		cb = &cf->cf_backends[a->ac_new];
		if (!pl->rpl_xm[a->ac_new]) {
			pl->rpl_nb[a->ac_new] = gw_backend_active(gw, cb->cb_name);
			pl->rpl_nb[a->ac_new]->bk_ccfg = *cb;
			continue;
		}
		pl->rpl_nb[a->ac_new] = gw_backend_slot(gw);
		gw_backend_init(gw, pl->rpl_nb[a->ac_new], cb, pl->rpl_xm[a->ac_new]);
		gw_info(LG(gw), "backend %s: added (%s)", cb->cb_name, cb->cb_host);
	}
}

/* 3. Routes: kept paths take the new copy, removed ones are listed to
 *    retire, new ones take a slot. */
static void gw_reload_routes(struct gw_ctx *gw, const struct cfg *cf, const struct cfg_diff *d,
			     struct gw_reload_plan *pl)
{
	for (unsigned k = 0; k < d->cdf_n; k++) {
		const struct cfg_action *a = &d->cdf_act[k];
		struct gw_path *pa;

		if (a->ac_kind == CFG_ACT_ROUTE_REMOVE) {
			pa = gw_path_active(gw, gw_ctx_cfg(gw)->cf_routes[a->ac_old].cr_name);
			if (pa) {
				pl->rpl_retire_why[pl->rpl_nretire] = a->ac_what;
				pl->rpl_retire[pl->rpl_nretire++] = pa;
			}
			continue;
		}
		if (a->ac_kind != CFG_ACT_ROUTE_ADD && a->ac_kind != CFG_ACT_ROUTE_KEEP)
			continue;
		pa = a->ac_kind == CFG_ACT_ROUTE_KEEP ? gw_path_active(gw, cf->cf_routes[a->ac_new].cr_name)
		     : NULL;
		if (pa) {
			pa->pa_rcfg = cf->cf_routes[a->ac_new];	/* versions may have moved */
			pl->rpl_np[a->ac_new] = pa;
			continue;
		}
		pa = gw_path_slot(gw);
		gw_path_init(gw, pa, &cf->cf_routes[a->ac_new], pl->rpl_nb[cf->cf_routes[a->ac_new].cr_backend]);
		pl->rpl_np[a->ac_new] = pa;
		pl->rpl_added[a->ac_new] = true;
	}
}

/* 4. Swap: the new table routes from now on. */
static void gw_reload_swap(struct gw_ctx *gw, const struct cfg *cf, struct gw_reload_plan *pl)
{
	gw->gw_p.gp_cfg = cf;
	gw->gw_nbackends = cf->cf_nbackends;
	for (unsigned i = 0; i < cf->cf_nbackends; i++)
		gw->gw_backends[i] = pl->rpl_nb[i];
	for (unsigned i = 0; i < pl->rpl_nretire; i++)
		gw_path_retire(gw, pl->rpl_retire[i], pl->rpl_retire_why[i]);
	gw->gw_npaths = 0;
	for (unsigned i = 0; i < cf->cf_nroutes; i++) {
		if (pl->rpl_added[i] && gw_path_start(gw, pl->rpl_np[i]) < 0) {
			pl->rpl_np[i]->pa_used = false;		/* its program gets PROG_UNAVAIL */
			pl->rpl_np[i]->pa_backend->bk_npaths--;
			gw_stat_inc(ST(gw), GW_CTR_RELOAD_FAILED);
			continue;
		}
		gw->gw_paths[gw->gw_npaths++] = pl->rpl_np[i];
	}
	for (unsigned i = 0; i < GW_PATH_SLOTS; i++)
		if (gw->gw_pslots[i].pa_used) {
			gw->gw_pslots[i].pa_info.pi_cfg = cf;
			gw->gw_fbslots[i].pa_info.pi_cfg = cf;	/* its TCP fallback's too */
		}
}

int gw_ctx_reload(struct gw_ctx *gw, const struct cfg *cf, const struct cfg_diff *d, char *err,
		  size_t errlen)
{
	struct gw_reload_plan pl = { 0 };
	int rc;

	if (d->cdf_nrestart) {
		snprintf(err, errlen, "a restart-only key changed");
		return -EINVAL;
	}
	rc = gw_reload_room(gw, cf, d, &pl, err, errlen);
	if (rc < 0)
		return rc;
	gw_reload_backends(gw, cf, d, &pl);
	gw_reload_routes(gw, cf, d, &pl);
	gw_reload_swap(gw, cf, &pl);
	/* 5. What the retired paths held goes to the new ones; wake those. */
	for (unsigned i = 0; i < pl.rpl_nretire; i++)
		gw_path_rehome_held(gw, pl.rpl_retire[i]);
	for (unsigned i = 0; i < gw->gw_npaths; i++)
		if (gw->gw_paths[i]->pa_nheld && (gw->gw_paths[i]->pa_tp || gw->gw_paths[i]->pa_fb_on))
			gw_path_ready(gw->gw_paths[i], gw->gw_paths[i]->pa_up);
	if (gw->gw_reap_ev)
		event_active(gw->gw_reap_ev, 0, 0);
	return 0;
}
