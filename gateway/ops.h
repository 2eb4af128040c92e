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

#include "config.h"

struct event_base;
struct evbuffer;
struct gw_call;
struct gw_client_info;
struct gw_ctx;
struct gw_hist;
struct gw_path;
struct gw_stats;
struct json_object;

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

/* What the operations interfaces see with workers (worker.h): every
 * worker's gateway, and how to stop them all (each waits at a turn of its
 * loop) while they are read or changed from the operations' thread.
 * Without one (tests): the one gateway given to gw_admin_new/gw_ctl_new. */
struct gw_ops_view {
	struct gw_ctx *ov_gw[CFG_MAX_WORKERS];
	unsigned ov_n;
	void (*ov_stop)(void *arg);
	void (*ov_go)(void *arg);
	void *ov_arg;
};

/* metrics.c */
/* The whole exposition; gw may be NULL (counters and histograms only). */
void gw_metrics_render(struct evbuffer *out, const struct gw_stats *st, struct gw_ctx *gw);
/* Every worker's gateway (stopped: gw_ops_view): counters and histograms
 * summed, CPU and system calls per worker (gs_cpu_* as sampled when they
 * stopped), gauges summed, paths labelled worker="N" when n > 1. */
void gw_metrics_render_all(struct evbuffer *out, struct gw_ctx *const *gws, unsigned n);
const char *gw_prog_name(uint32_t prog);			/* NULL when unknown */
const char *gw_proc_name(uint32_t prog, uint32_t vers, uint32_t proc);	/* NULL when unknown */

/* readiness.c */
/* Ready as ready_when says: nfs (default), every route of program NFS can
 * forward a call now (up, or on a connected TCP fallback; not draining);
 * all, every route; any, one route.  why (may be NULL) gets what is
 * waited for, or what is ready (and "degraded: ..." when a route it
 * counts forwards over its TCP fallback). */
bool gw_ctx_ready(struct gw_ctx *gw, char *why, size_t len);
/* The readiness of n workers' gateways (stopped: gw_ops_view), as one. */
struct gw_readiness {
	bool rdy_ready;
	bool rdy_degraded;	/* ready, but a route it counts is on its TCP fallback */
	const char *rdy_reason;	/* "none", "fallback", "no_route", "draining", or gw_why_str() */
	char rdy_path[2 * CFG_NAME_MAX + 24];	/* the path that says so, "" for none */
	char rdy_why[256];	/* in words: /readyz, status, STATUS= */
};
void gw_readiness(struct gw_ctx *const *gws, unsigned n, struct gw_readiness *rd);
/* "ready", "degraded" or "not_ready". */
const char *gw_readiness_state(const struct gw_readiness *rd);
/* rpcrdma_gw_ready and rpcrdma_gw_readiness{state,reason,path}. */
void gw_readiness_render(struct evbuffer *o, struct gw_ctx *const *gws, unsigned n);

/* metrics.c */
/* Wall-clock milliseconds of a gw_now_ms() instant. */
uint64_t gw_wall_ms(uint64_t mono_ms);
/* A forwarded call was replied to (gw_call_finalize): its durations go to
 * call_duration_seconds, op_duration_seconds (its NFS operation),
 * backend_duration_seconds (its path, from ca_sent_us) and its client's
 * totals (clients --top).  No allocation. */
void gw_call_observe(struct gw_call *c, uint64_t now_us);
const struct gw_hist *gw_path_hist(struct gw_path *pa);

/* opstats.c: `stats ops`.  The JSON answer: bounds_us, then ops (vers, op)
 * and backends (path) with count, sum_us and the non-cumulative buckets;
 * the caller puts it. */
struct json_object *gw_ops_json(const struct gw_stats *st, struct gw_ctx *gw);
/* The same over n workers' gateways: each path's histogram summed over
 * the workers (gw_paths_hist_sum: the paths named name, into h). */
struct json_object *gw_ops_json_all(const struct gw_stats *st, struct gw_ctx *const *gws, unsigned n);
void gw_paths_hist_sum(struct gw_ctx *const *gws, unsigned n, const char *name, struct gw_hist *h);
/* The counters of n workers' gateways summed (gw_stats_sum); malloc'd,
 * NULL without memory. */
struct gw_stats *gw_stats_all(struct gw_ctx *const *gws, unsigned n);
/* Worker w's JSON answer (status, clients, backends) into base, worker
 * 0's: lists appended (entries get "worker"), counts summed, ready only
 * when both are; the configuration's values and listeners stay base's. */
void gw_ops_json_merge(struct json_object *base, struct json_object *add, unsigned w);
/* The table of count, mean, p50, p99 of cur (a gw_ops_json answer) minus
 * prev (NULL: all of cur); json: one line of JSON instead. */
void gw_ops_table(struct json_object *prev, struct json_object *cur, struct evbuffer *out,
		  bool json);
/* The "cpu" object of gw_ops_json: calls_forwarded, user_us, system_us
 * (gs_cpu_* as the workers' stop sampled them, else the calling thread's)
 * and syscalls (by syscalls_total's call label). */
struct json_object *gw_cpu_json(const struct gw_stats *st);
/* Per forwarded call, cur minus prev ("cpu" objects, prev NULL: all of
 * cur): CPU microseconds and system calls, as a line of text on out or
 * as members of jout. */
void gw_cpu_per_call(struct json_object *prev, struct json_object *cur, struct evbuffer *out,
		     struct json_object *jout);

/* admin.c: HTTP on cf_admin_listen.  GET and HEAD only; a request head
 * above GW_ADMIN_MAX_HEAD or a body above GW_ADMIN_MAX_BODY bytes closes the
 * connection; at GW_ADMIN_MAX_CONNS open connections accepting pauses. */
#define GW_ADMIN_MAX_HEAD	8192
#define GW_ADMIN_MAX_BODY	1024
#define GW_ADMIN_MAX_CONNS	16
#define GW_ADMIN_TOKEN_MIN	16
#define GW_ADMIN_TOKEN_MAX	256
struct gw_admin;
/* sa: TCP, or AF_UNIX (a socket file of mode 0660, removed by
 * gw_admin_free).  token: every request must carry "Authorization: Bearer
 * TOKEN", else 401; NULL: none asked. */
struct gw_admin *gw_admin_new(struct event_base *base, struct gw_ctx *gw,
			      const struct sockaddr *sa, socklen_t len, const char *token);
/* admin_token_file: the token (one line, GW_ADMIN_TOKEN_MIN..len-1
 * printable characters) into tok; -1 with the reason in err when the file
 * cannot be read, is not a regular file, lets group or others read or
 * write it, or holds no valid token. */
int gw_admin_token_load(const char *path, char *tok, size_t len, char *err, size_t errlen);
/* A loopback address or a Unix socket: no warning without a token. */
bool gw_admin_local(const struct sockaddr *sa);
void gw_admin_free(struct gw_admin *ad);
void gw_admin_set_view(struct gw_admin *ad, const struct gw_ops_view *v);
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
/* status, clients and backends then answer for all workers: text, one row
 * per path (`status workers`, `backends workers`: each worker's own) and
 * one list of clients with their worker; JSON, one object, "workers": N,
 * the lists of paths and clients of all with each entry's "worker",
 * counts summed; drain acts on all, stats and metrics are summed. */
void gw_ctl_set_view(struct gw_ctl *ctl, const struct gw_ops_view *v);
/* ctl_paths.c: the paths in the control socket's text answers. */
/* "up", "down", "fallback", "draining" or "removing". */
const char *gw_path_state_str(struct gw_path *pa);
/* ISO 8601 UTC of a gw_now_ms() instant. */
void gw_ops_when(uint64_t mono_ms, char *buf, size_t len);
/* Why a path is not up, and since when, in one phrase: "on TCP fallback
 * (tcp up) because no_device: ... since 2026-..." or "up since ...". */
void gw_path_why_phrase(struct gw_path *pa, char *buf, size_t len);
/* `status` path lines and the `backends` table of n workers' gateways:
 * one row per path (counts summed, "down 1/2" where they differ). */
void gw_ctl_paths_status(struct gw_ctx *const *gws, unsigned n, struct evbuffer *o);
void gw_ctl_paths_backends(struct gw_ctx *const *gws, unsigned n, struct evbuffer *o);
/* One gateway's `backends` table, every connection on its own. */
void gw_ctl_paths_worker(struct gw_ctx *gw, struct evbuffer *o);
/* Run one command line and append the answer to out (also used by tests). */
void gw_ctl_exec(struct gw_ctl *ctl, const char *line, struct evbuffer *out);
/* `clients top=N by=KEY`: the order, highest first (ties by id). */
enum gw_top_by { GW_TOP_CALLS = 0, GW_TOP_BYTES, GW_TOP_LATENCY };
void gw_ctl_top_sort(struct gw_client_info *ci, unsigned n, enum gw_top_by by);

#endif /* RPCRDMA_GW_OPS_H */
