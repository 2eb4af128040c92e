// SPDX-License-Identifier: MIT
/*
 * This file contains the gateway's readiness: whether the routes that
 * ready_when names can forward a call now, and, when they can, whether one
 * of them does so over its TCP fallback (degraded).  One answer, computed
 * here over every worker, drives /readyz (admin.c), `rpcrdma-gwctl status`
 * (control.c), READY=1 and STATUS= (main.c) and the rpcrdma_gw_ready and
 * rpcrdma_gw_readiness gauges, so that none of them can say something the
 * others do not.
 *
 * Ready is not degraded's opposite: a gateway whose NFS route runs on its
 * TCP fallback forwards every call (ready, /readyz 200) but slower, with
 * copies; taking it out of a VIP rotation for that would be wrong, saying
 * nothing would hide it.  So /readyz stays 200 and its body, the status
 * line and the gauges name the route and why.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "config.h"
#include "gateway.h"
#include "ops.h"
#include "transport.h"

/* One path's reason in words: "nfs/srv: no_device (rdma_create...)". */
static void gw_path_why_line(const struct gw_path *pa, char *why, size_t len)
{
	const char *text;
	enum gw_why w = gw_path_why(pa, &text, NULL);

	if (gw_path_draining(pa))
		snprintf(why, len, "%s: draining", gw_path_name(pa));
	else
		snprintf(why, len, "%s: %s%s%s%s", gw_path_name(pa), gw_why_str(w), text ? " (" : "",
			 text ? text : "", text ? ")" : "");
}

/* The short reason of a path that cannot forward (rpcrdma_gw_readiness). */
static const char *gw_path_why_code(const struct gw_path *pa)
{
	return gw_path_draining(pa) ? "draining" : gw_why_str(gw_path_why(pa, NULL, NULL));
}

/* ready_when as it applies to gw: nfs with no NFS route acts as any. */
static enum cfg_ready_when gw_ready_mode(struct gw_ctx *gw)
{
	enum cfg_ready_when rw = gw_ctx_cfg(gw)->cf_ready_when;
	unsigned n = gw_ctx_npaths(gw), nfs = 0;

	for (unsigned i = 0; i < n; i++)
		nfs += gw_path_info(gw_ctx_path(gw, i))->pi_route->cr_prog == CFG_PROG_NFS;
	return rw == CFG_READY_NFS && nfs == 0 ? CFG_READY_ANY : rw;
}

/* Whether ready_when rw counts pa. */
static bool gw_ready_counts(enum cfg_ready_when rw, const struct gw_path *pa)
{
	return rw != CFG_READY_NFS || gw_path_info(pa)->pi_route->cr_prog == CFG_PROG_NFS;
}

static void gw_rd_set(struct gw_readiness *rd, const char *reason, const struct gw_path *pa)
{
	rd->rdy_reason = reason;
	snprintf(rd->rdy_path, sizeof(rd->rdy_path), "%s", pa ? gw_path_name(pa) : "");
}

/* Ready: the words of what is ready, and whether a counted route that
 * forwards does it over its TCP fallback (the first such says so). */
static void gw_rd_ready(struct gw_ctx *gw, enum cfg_ready_when rw, struct gw_readiness *rd)
{
	rd->rdy_ready = true;
	gw_rd_set(rd, "none", NULL);
	snprintf(rd->rdy_why, sizeof(rd->rdy_why), "%s", rw == CFG_READY_ALL ?
		 "every route can forward" : rw == CFG_READY_ANY ? "a route can forward" :
		 "every NFS route can forward");
	for (unsigned i = 0; i < gw_ctx_npaths(gw); i++) {
		const struct gw_path *pa = gw_ctx_path(gw, i);
		const char *text;
		enum gw_why w;

		if (!gw_ready_counts(rw, pa) || !gw_path_fallback_up(pa) || gw_path_draining(pa))
			continue;
		w = gw_path_why(pa, &text, NULL);
		rd->rdy_degraded = true;
		gw_rd_set(rd, "fallback", pa);
		snprintf(rd->rdy_why, sizeof(rd->rdy_why), "degraded: %s on TCP fallback because %s%s%s%s",
			 gw_path_name(pa), gw_why_str(w), text ? " (" : "", text ? text : "",
			 text ? ")" : "");
		return;
	}
}

static void gw_ctx_readiness(struct gw_ctx *gw, struct gw_readiness *rd)
{
	enum cfg_ready_when rw = gw_ready_mode(gw);
	unsigned n = gw_ctx_npaths(gw);
	const struct gw_path *first_bad = NULL;

	memset(rd, 0, sizeof(*rd));
	for (unsigned i = 0; i < n; i++) {
		const struct gw_path *pa = gw_ctx_path(gw, i);
		bool ok = gw_path_can_forward(pa);

		if (rw == CFG_READY_ANY && ok) {
			gw_rd_ready(gw, rw, rd);
			return;
		}
		if (gw_ready_counts(rw, pa) && !ok && !first_bad)
			first_bad = pa;
	}
	if (rw != CFG_READY_ANY && !first_bad) {
		gw_rd_ready(gw, rw, rd);
		return;
	}
	if (n == 0) {
		gw_rd_set(rd, "no_route", NULL);
		snprintf(rd->rdy_why, sizeof(rd->rdy_why), "no route");
	} else if (rw == CFG_READY_ANY) {
		gw_rd_set(rd, gw_path_why_code(gw_ctx_path(gw, 0)), gw_ctx_path(gw, 0));
		snprintf(rd->rdy_why, sizeof(rd->rdy_why), "no route can forward (ready_when = any)");
	} else {
		gw_rd_set(rd, gw_path_why_code(first_bad), first_bad);
		gw_path_why_line(first_bad, rd->rdy_why, sizeof(rd->rdy_why));
	}
}

bool gw_ctx_ready(struct gw_ctx *gw, char *why, size_t len)
{
	struct gw_readiness rd;

	gw_ctx_readiness(gw, &rd);
	if (why && len)
		snprintf(why, len, "%s", rd.rdy_why);
	return rd.rdy_ready;
}

void gw_readiness(struct gw_ctx *const *gws, unsigned n, struct gw_readiness *rd)
{
	struct gw_readiness w;

	memset(rd, 0, sizeof(*rd));
	rd->rdy_reason = "no_route";
	snprintf(rd->rdy_why, sizeof(rd->rdy_why), "no route");
	/* The first worker not ready says why; else the first degraded. */
	for (unsigned i = 0; i < n; i++) {
		gw_ctx_readiness(gws[i], &w);
		if (i == 0 || !w.rdy_ready || (w.rdy_degraded && rd->rdy_ready && !rd->rdy_degraded))
			*rd = w;
		if (!w.rdy_ready)
			return;
	}
}

const char *gw_readiness_state(const struct gw_readiness *rd)
{
	return !rd->rdy_ready ? "not_ready" : rd->rdy_degraded ? "degraded" : "ready";
}

void gw_readiness_render(struct evbuffer *o, struct gw_ctx *const *gws, unsigned n)
{
	struct gw_readiness rd;

	gw_readiness(gws, n, &rd);
	evbuffer_add_printf(o, "# HELP rpcrdma_gw_ready 1 when the gateway is ready as ready_when "
			    "says (/readyz 200), on every worker.\n# TYPE rpcrdma_gw_ready gauge\n"
			    "rpcrdma_gw_ready %d\n", rd.rdy_ready);
	evbuffer_add_printf(o, "# HELP rpcrdma_gw_readiness 1 for the gateway's readiness state "
			    "(ready, degraded: on a TCP fallback, not_ready), why and which path.\n"
			    "# TYPE rpcrdma_gw_readiness gauge\n"
			    "rpcrdma_gw_readiness{state=\"%s\",reason=\"%s\",path=\"%s\"} 1\n",
			    gw_readiness_state(&rd), rd.rdy_reason, rd.rdy_path);
}
