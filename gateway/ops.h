/* SPDX-License-Identifier: MIT */
/*
 * This file contains the operations interfaces of rpcrdma-gw: metrics,
 * the admin listener and the control socket.
 */
#ifndef RPCRDMA_GW_OPS_H
#define RPCRDMA_GW_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct event_base;
struct evbuffer;
struct gw_ctx;
struct gw_stats;

/*
 * Operations interfaces of rpcrdma-gw (prefix gw_): metrics in the
 * Prometheus text format (metrics.c), the HTTP admin listener with
 * /metrics, /healthz and /readyz (admin.c, gw_admin_*), and the control
 * socket that rpcrdma-gwctl talks to (control.c, gw_ctl_*).
 *
 * Neither listener is on the data path: failing to open one is logged and
 * counted, and the gateway runs without it.
 *
 * Return conventions: constructors return NULL (errno set) on failure.
 */

/* metrics.c */
/* The whole exposition; gw may be NULL (counters and histograms only). */
void gw_metrics_render(struct evbuffer *out, const struct gw_stats *st, struct gw_ctx *gw);
const char *gw_prog_name(uint32_t prog);			/* NULL when unknown */
const char *gw_proc_name(uint32_t prog, uint32_t vers, uint32_t proc);	/* NULL when unknown */
/* Ready as ready_when says: nfs (default), every route of program NFS can
 * forward a call now (up, or on a connected TCP fallback; not draining);
 * all, every route; any, one route.  why (may be NULL) gets what is
 * waited for, or what is ready. */
bool gw_ctx_ready(struct gw_ctx *gw, char *why, size_t len);
/* Wall-clock milliseconds of a gw_now_ms() instant. */
uint64_t gw_wall_ms(uint64_t mono_ms);

/* admin.c: HTTP on cf_admin_listen.  GET and HEAD only; a request head
 * above GW_ADMIN_MAX_HEAD or a body above GW_ADMIN_MAX_BODY bytes closes the
 * connection; at GW_ADMIN_MAX_CONNS open connections accepting pauses. */
#define GW_ADMIN_MAX_HEAD	8192
#define GW_ADMIN_MAX_BODY	1024
#define GW_ADMIN_MAX_CONNS	16
struct gw_admin;
struct gw_admin *gw_admin_new(struct event_base *base, struct gw_ctx *gw,
			      const struct sockaddr *sa, socklen_t len);
void gw_admin_free(struct gw_admin *ad);
uint16_t gw_admin_port(const struct gw_admin *ad);	/* bound port (tests: port 0) */

/* control.c: line protocol on a Unix stream socket (docs/operations.md).
 * Requests: one line, "[json ]COMMAND [ARG]"; reply: lines of text (or one
 * JSON line) ending with a line "." (ok) or "!ERR reason". */
struct gw_ctl;
struct gw_ctl_hooks {
	/* reload the configuration file; 0 or negative errno, reason in msg */
	int (*ch_reload)(void *arg, char *msg, size_t len);
	/* set the log level (enum cfg_log_level) */
	void (*ch_log_level)(void *arg, int level);
	const char *(*ch_config_path)(void *arg);
	void *ch_arg;
};
struct gw_ctl *gw_ctl_new(struct event_base *base, struct gw_ctx *gw, const char *path,
			  const struct gw_ctl_hooks *hooks);
void gw_ctl_free(struct gw_ctl *ctl);
/* Run one command line and append the answer to out (also used by tests). */
void gw_ctl_exec(struct gw_ctl *ctl, const char *line, struct evbuffer *out);

#endif /* RPCRDMA_GW_OPS_H */
