// SPDX-License-Identifier: MIT
/*
 * This file contains the control socket of rpcrdma-gw (server side of
 * rpcrdma-gwctl): a Unix stream socket, default /run/rpcrdma-gw/control,
 * mode 0600, served from the same event loop as the data path.
 *
 * Protocol, one command per connection:
 *
 *   client:  [json ]COMMAND [ARGUMENT]\n
 *   server:  the answer, lines of text (or one line of JSON with "json "),
 *            then a last line "." when the command succeeded or
 *            "!ERR reason" when it did not; then the server closes.
 *
 * Commands: status, stats [ops], clients [top=N] [by=calls|bytes|latency],
 * backends, drain PATH|BACKEND,
 * undrain PATH|BACKEND (PATH is route/backend; route->backend, the
 * form of older releases, is accepted), reload, log-level error|warn|info|debug, metrics
 * (the Prometheus exposition), help.  A request longer than
 * GW_CTL_MAX_LINE or silent for GW_CTL_TIMEOUT_S is an error.  Counters:
 * GW_CTR_CTL_COMMANDS, GW_CTR_CTL_ERRORS.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <json.h>

#include "chunking.h"
#include "config.h"
#include "client.h"
#include "gateway.h"
#include "log.h"
#include "ops.h"
#include "transport.h"
#include "worker.h"

#define GW_CTL_MAX_LINE		512
#define GW_CTL_TIMEOUT_S	5
#define GW_CTL_MAX_CLIENTS	64	/* rows of `clients` */
#define GW_CTL_MAX_TOP		1024	/* rows of `clients top=N` */

struct gw_ctl {
	struct evconnlistener *ct_lis;
	struct gw_ctx *ct_gw;		/* the gateway a command reads now */
	struct gw_ops_view ct_view;	/* ov_n 0: ct_gw alone */
	int ct_worker;			/* "worker" of JSON answers, or -1 */
	struct gw_ctl_hooks ct_hooks;
	char ct_path[108];
	uint64_t ct_start_ms;
};

/* ---- commands ---- */

/* JSON answers are built with json-c, which escapes every string (a
 * configuration path or peer name may hold '"', '\\' or control bytes). */
static void gw_jadd(struct json_object *o, const char *key, struct json_object *v)
{
	json_object_object_add(o, key, v);
}

static struct json_object *gw_jstr(const char *s)
{
	return json_object_new_string(s ? s : "");
}

/* One line: the object, then "\n"; o is released.  With several workers
 * an answer per worker says whose it is. */
static void gw_jemit(const struct gw_ctl *ct, struct evbuffer *out, struct json_object *o)
{
	if (ct && ct->ct_worker >= 0)
		gw_jadd(o, "worker", json_object_new_int(ct->ct_worker));

	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);

	evbuffer_add_printf(out, "%s\n", s ? s : "null");
	json_object_put(o);
}

static void gw_ctl_path_why_json(struct json_object *p, struct gw_path *pa)
{
	const char *text;
	uint64_t since;
	enum gw_why w = gw_path_why(pa, &text, &since);
	char when[32];

	gw_ops_when(since, when, sizeof(when));
	gw_jadd(p, "reason", gw_jstr(gw_why_str(w)));
	gw_jadd(p, "reason_text", gw_jstr(text));
	gw_jadd(p, "since", gw_jstr(when));
	gw_jadd(p, "since_unix_ms", json_object_new_uint64(gw_wall_ms(since)));
	gw_jadd(p, "fallback", json_object_new_boolean(gw_path_on_fallback(pa)));
	gw_jadd(p, "fallback_up", json_object_new_boolean(gw_path_fallback_up(pa)));
	gw_jadd(p, "can_forward", json_object_new_boolean(gw_path_can_forward(pa)));
}

static const char *gw_ctl_tls_str(enum cfg_tls t)
{
	return t == CFG_TLS_REQUIRED ? "required" : t == CFG_TLS_ALLOWED ? "allowed" : "off";
}

static const char *gw_ctl_squash_str(enum cfg_squash q)
{
	return q == CFG_SQUASH_ALL ? "all" : q == CFG_SQUASH_ROOT ? "root" : "none";
}

static void gw_ctl_status_json(struct gw_ctl *ct, struct evbuffer *out, const char *cfgp,
			       unsigned uptime, const char *lvl)
{
	struct gw_ctx *gw = ct->ct_gw;
	const struct cfg *cf = gw_ctx_cfg(gw);
	const struct gw_stats *st = gw_ctx_stats(gw);
	struct json_object *o = json_object_new_object(), *lim = json_object_new_object(),
			   *rl = json_object_new_object(), *pa = json_object_new_array();
	struct gw_readiness rd;

	gw_jadd(o, "version", gw_jstr(GW_VERSION));
	gw_jadd(o, "uptime_s", json_object_new_int64(uptime));
	gw_jadd(o, "config", gw_jstr(cfgp));
	gw_readiness(&gw, 1, &rd);
	gw_jadd(o, "ready", json_object_new_boolean(rd.rdy_ready));
	gw_jadd(o, "degraded", json_object_new_boolean(rd.rdy_degraded));
	gw_jadd(o, "ready_state", gw_jstr(gw_readiness_state(&rd)));
	gw_jadd(o, "ready_when", gw_jstr(cfg_ready_when_str(cf->cf_ready_when)));
	gw_jadd(o, "ready_reason", gw_jstr(rd.rdy_why));
	gw_jadd(o, "log_level", gw_jstr(lvl));
	gw_jadd(o, "clients", json_object_new_int64(gw_ctx_nclients(gw)));
	gw_jadd(o, "tls", gw_jstr(cf->cf_tls == CFG_TLS_REQUIRED ? "required"
				  : cf->cf_tls == CFG_TLS_ALLOWED ? "allowed" : "off"));
	gw_jadd(o, "tls_cert_expiry", json_object_new_int64(st->gs_tls_cert_expiry));
	{
		struct json_object *arr = json_object_new_array();

		for (unsigned i = 1; i < cf->cf_nlisteners; i++) {	/* [listener NAME] sections */
			const struct cfg_policy *p = &cf->cf_listeners[i].li_pol;
			struct json_object *l = json_object_new_object();

			gw_jadd(l, "name", gw_jstr(cf->cf_listeners[i].li_name));
			gw_jadd(l, "tls", gw_jstr(gw_ctl_tls_str(p->pol_tls)));
			gw_jadd(l, "squash", gw_jstr(gw_ctl_squash_str(p->pol_squash)));
			json_object_array_add(arr, l);
		}
		gw_jadd(o, "listeners", arr);
	}
	gw_jadd(o, "calls_in_flight", json_object_new_int64(gw_ctx_ncalls(gw) -
							     gw_ctx_calls_avail(gw)));
	/* The values a reload changes, as running now. */
	gw_jadd(lim, "calls_per_client", json_object_new_int64(cf->cf_calls_per_client));
	gw_jadd(lim, "bytes_per_client", json_object_new_uint64(cf->cf_bytes_per_client));
	gw_jadd(lim, "held_calls", json_object_new_int64(cf->cf_held_calls));
	gw_jadd(lim, "idle_timeout_ms", json_object_new_int64(cf->cf_idle_timeout_ms));
	gw_jadd(lim, "record_timeout_ms", json_object_new_int64(cf->cf_record_timeout_ms));
	gw_jadd(lim, "reconnect_ms", json_object_new_int64(cf->cf_reconnect_ms));
	gw_jadd(lim, "drc_window_ms", json_object_new_int64(cf->cf_drc_window_ms));
	gw_jadd(o, "limits", lim);
	gw_jadd(rl, "applied", json_object_new_uint64(st->gs_ctr[GW_CTR_RELOAD_APPLIED]));
	gw_jadd(rl, "invalid", json_object_new_uint64(st->gs_ctr[GW_CTR_RELOAD_INVALID]));
	gw_jadd(rl, "restart_needed", json_object_new_uint64(st->gs_ctr[GW_CTR_RELOAD_RESTART]));
	gw_jadd(rl, "failed", json_object_new_uint64(st->gs_ctr[GW_CTR_RELOAD_FAILED]));
	gw_jadd(o, "reloads", rl);
	gw_jadd(o, "paths_removing", json_object_new_int64(gw_ctx_nretiring(gw)));
	for (unsigned i = 0; i < gw_ctx_npaths(gw); i++) {
		struct json_object *p = json_object_new_object();

		gw_jadd(p, "path", gw_jstr(gw_path_name(gw_ctx_path(gw, i))));
		gw_jadd(p, "state", gw_jstr(gw_path_state_str(gw_ctx_path(gw, i))));
		gw_ctl_path_why_json(p, gw_ctx_path(gw, i));
		json_object_array_add(pa, p);
	}
	gw_jadd(o, "paths", pa);
	gw_jemit(ct, out, o);
}

static void gw_ctl_status(struct gw_ctl *ct, struct evbuffer *o, bool json, bool per_worker)
{
	struct gw_ctx *gw = ct->ct_gw;
	const char *cfgp = ct->ct_hooks.ch_config_path ? ct->ct_hooks.ch_config_path(ct->ct_hooks.ch_arg)
			   : NULL;
	unsigned uptime = (unsigned)((gw_now_ms() - ct->ct_start_ms) / 1000);
	const struct gw_ops_view *v = &ct->ct_view;
	unsigned nw = v->ov_n ? v->ov_n : 1, nclients = 0, inflight = 0;
	const char *lvl = cfg_log_level_str(gw_ctx_log(gw)->gl_level < 0 ? 0
					    : (enum cfg_log_level)gw_ctx_log(gw)->gl_level);

	const struct cfg *cf = gw_ctx_cfg(gw);
	const struct gw_stats *st = gw_ctx_stats(gw);
	struct gw_readiness rd;
	char why[256], cap[400];

	if (json) {
		gw_ctl_status_json(ct, o, cfgp, uptime, lvl);
		return;
	}
	evbuffer_add_printf(o, "rpcrdma-gw %s, up %u s, configuration %s\n", GW_VERSION, uptime,
			    cfgp ? cfgp : "(none)");
	for (unsigned w = 0; w < nw; w++) {	/* with workers: all of them */
		struct gw_ctx *g = v->ov_n ? v->ov_gw[w] : gw;

		nclients += gw_ctx_nclients(g);
		inflight += gw_ctx_ncalls(g) - gw_ctx_calls_avail(g);
	}
	gw_readiness(v->ov_n ? v->ov_gw : &gw, nw, &rd);
	evbuffer_add_printf(o, "ready: %s (%s, ready_when %s); log level %s; %u clients; "
			    "%u calls in flight\n", rd.rdy_ready ? "yes" : "no", rd.rdy_why,
			    cfg_ready_when_str(cf->cf_ready_when), lvl, nclients, inflight);
	gw_worker_capacity(cf, nw, cap, sizeof(cap));
	evbuffer_add_printf(o, "capacity: %s\n", cap);
	evbuffer_add_printf(o, "limits: calls_per_client %u, bytes_per_client %zu, held_calls %u; "
			    "reloads applied %" PRIu64 ", refused %" PRIu64 "\n", cf->cf_calls_per_client,
			    cf->cf_bytes_per_client, cf->cf_held_calls, st->gs_ctr[GW_CTR_RELOAD_APPLIED],
			    st->gs_ctr[GW_CTR_RELOAD_INVALID] + st->gs_ctr[GW_CTR_RELOAD_RESTART] +
			    st->gs_ctr[GW_CTR_RELOAD_FAILED]);
	if (cf->cf_tls != CFG_TLS_OFF) {
		time_t end = (time_t)st->gs_tls_cert_expiry;
		struct tm tm;
		char date[32] = "?";

		if (end && gmtime_r(&end, &tm))
			strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", &tm);
		evbuffer_add_printf(o, "tls: %s, client certificates %s; certificate expires %s "
				    "(in %.1f days)\n", cf->cf_tls == CFG_TLS_REQUIRED ? "required" : "allowed",
				    cf->cf_tls_client_cert == CFG_TLS_CC_REQUIRE ? "required"
				    : cf->cf_tls_client_cert == CFG_TLS_CC_REQUEST ? "requested" : "not asked",
				    date, (double)(st->gs_tls_cert_expiry - (int64_t)time(NULL)) / 86400.0);
	}
	for (unsigned i = 1; i < cf->cf_nlisteners; i++) {
		const struct cfg_policy *p = &cf->cf_listeners[i].li_pol;

		evbuffer_add_printf(o, "listener %s: tls %s, squash %s, allow %s\n",
				    cf->cf_listeners[i].li_name, gw_ctl_tls_str(p->pol_tls),
				    gw_ctl_squash_str(p->pol_squash),
				    p->pol_allow.ns_n ? p->pol_allow.ns_text : "any");
	}
	if (!per_worker) {	/* one row per path, whatever the workers */
		gw_ctl_paths_status(v->ov_n ? v->ov_gw : &gw, nw, o);
		return;
	}
	for (unsigned w = 0; w < nw; w++) {
		struct gw_ctx *g = v->ov_n ? v->ov_gw[w] : gw;

		for (unsigned i = 0; i < gw_ctx_npaths(g); i++) {
			struct gw_path *pa = gw_ctx_path(g, i);

			gw_path_why_phrase(pa, why, sizeof(why));
			evbuffer_add_printf(o, "path %-24s %-5s %-8s %u held; %s (worker %u)\n",
					    gw_path_name(pa), gw_path_transport(pa), gw_path_state_str(pa),
					    gw_path_nheld(pa), why, w);
		}
	}
}

static void gw_ctl_stats_json(const struct gw_stats *st, const struct gw_proc_stat *const *rows,
			      unsigned n, struct evbuffer *out)
{
	struct json_object *o = json_object_new_object(), *calls = json_object_new_array(),
			   *ops = json_object_new_object(), *ctr = json_object_new_object();

	for (unsigned i = 0; i < n; i++) {
		struct json_object *r = json_object_new_object();

		gw_jadd(r, "program", json_object_new_int64(rows[i]->ps_prog));
		gw_jadd(r, "name", gw_jstr(gw_prog_name(rows[i]->ps_prog)));
		gw_jadd(r, "version", json_object_new_int64(rows[i]->ps_vers));
		gw_jadd(r, "procedure", json_object_new_int64(rows[i]->ps_proc));
		gw_jadd(r, "procname", gw_jstr(gw_proc_name(rows[i]->ps_prog, rows[i]->ps_vers,
							    rows[i]->ps_proc)));
		gw_jadd(r, "calls", json_object_new_uint64(rows[i]->ps_calls));
		json_object_array_add(calls, r);
	}
	gw_jadd(o, "calls", calls);
	for (unsigned i = 0; i < GW_NFS4_OPS; i++)
		if (st->gs_nfs4_op[i])
			gw_jadd(ops, i && chk_nfs4_op_name(i) ? chk_nfs4_op_name(i) : "other",
				json_object_new_uint64(st->gs_nfs4_op[i]));
	gw_jadd(o, "nfs4_ops", ops);
	for (unsigned c = 0; c < GW_CTR__COUNT; c++)
		gw_jadd(ctr, gw_ctr_str(c), json_object_new_uint64(st->gs_ctr[c]));
	gw_jadd(o, "counters", ctr);
	gw_jadd(o, "cpu", gw_cpu_json(st));
	gw_jemit(NULL, out, o);
}

static void gw_ctl_stats(const struct gw_stats *st, struct evbuffer *o, bool json)
{
	const struct gw_proc_stat *rows[GW_STATS_PROCS];
	unsigned n = 0;
	uint64_t total = 0;

	/* Sort by program, version, procedure: insertion sort of <= 256. */
	for (unsigned i = 0; i < GW_STATS_PROCS; i++) {
		const struct gw_proc_stat *ps = &st->gs_proc[i];
		unsigned j;

		if (!ps->ps_calls)
			continue;
		total += ps->ps_calls;
		for (j = n; j > 0; j--) {
			const struct gw_proc_stat *q = rows[j - 1];

			if (q->ps_prog < ps->ps_prog || (q->ps_prog == ps->ps_prog &&
			    (q->ps_vers < ps->ps_vers || (q->ps_vers == ps->ps_vers &&
							  q->ps_proc < ps->ps_proc))))
				break;
			rows[j] = rows[j - 1];
		}
		rows[j] = ps;
		n++;
	}
	if (json) {
		gw_ctl_stats_json(st, rows, n, o);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		const struct gw_proc_stat *ps = rows[i];
		const char *pn = gw_prog_name(ps->ps_prog);
		const char *qn = gw_proc_name(ps->ps_prog, ps->ps_vers, ps->ps_proc);
		char pb[16], qb[16];

		if (i == 0 || rows[i - 1]->ps_prog != ps->ps_prog || rows[i - 1]->ps_vers != ps->ps_vers)
			evbuffer_add_printf(o, "%s%s v%" PRIu32 ":\n%-14s %12s %6s\n", i ? "\n" : "",
					    pn ? pn : (snprintf(pb, sizeof(pb), "%" PRIu32, ps->ps_prog), pb),
					    ps->ps_vers, "procedure", "calls", "%");
		evbuffer_add_printf(o, "%-14s %12" PRIu64 " %5.1f%%\n",
				    qn ? qn : (snprintf(qb, sizeof(qb), "%" PRIu32, ps->ps_proc), qb),
				    ps->ps_calls, total ? 100.0 * (double)ps->ps_calls / (double)total : 0);
	}
	{
		uint64_t ops = 0;

		for (unsigned i = 0; i < GW_NFS4_OPS; i++)
			ops += st->gs_nfs4_op[i];
		if (ops)
			evbuffer_add_printf(o, "%snfs v4 operations (inside COMPOUND):\n%-20s %12s %6s\n",
					    n ? "\n" : "", "operation", "count", "%");
		for (unsigned i = 0; ops && i < GW_NFS4_OPS; i++)
			if (st->gs_nfs4_op[i])
				evbuffer_add_printf(o, "%-20s %12" PRIu64 " %5.1f%%\n",
						    i && chk_nfs4_op_name(i) ? chk_nfs4_op_name(i) : "other",
						    st->gs_nfs4_op[i],
						    100.0 * (double)st->gs_nfs4_op[i] / (double)ops);
		n += ops ? 1 : 0;
	}
	evbuffer_add_printf(o, "%scounters:\n", n ? "\n" : "");
	for (unsigned c = 0; c < GW_CTR__COUNT; c++)
		if (st->gs_ctr[c])
			evbuffer_add_printf(o, "  %-28s %" PRIu64 "\n", gw_ctr_str(c), st->gs_ctr[c]);
	for (unsigned h = 0; h < GW_HIST__COUNT; h++) {
		const struct gw_hist *gh = &st->gs_hist[h];

		if (gh->gh_count)
			evbuffer_add_printf(o, "  %-28s %" PRIu64 " calls, mean %.1f us\n",
					    h == GW_HIST_CALL ? "latency_call" : "latency_rdma",
					    gh->gh_count, (double)gh->gh_sum_us / (double)gh->gh_count);
	}
	{
		struct json_object *cpu = gw_cpu_json(st);

		evbuffer_add_printf(o, "\n");
		gw_cpu_per_call(NULL, cpu, o, NULL);
		json_object_put(cpu);
	}
}

/* `stats ops`: latency by NFS operation and by path (opstats.c). */
static void gw_ctl_stats_ops(struct gw_ctl *ct, const struct gw_stats *st, struct evbuffer *o,
			     bool json)
{
	struct json_object *jo = ct->ct_view.ov_n ?
		gw_ops_json_all(st, ct->ct_view.ov_gw, ct->ct_view.ov_n) : gw_ops_json(st, ct->ct_gw);

	if (json) {
		gw_jemit(ct, o, jo);
		return;
	}
	gw_ops_table(NULL, jo, o, false);
	json_object_put(jo);
}

static uint64_t gw_ctl_top_key(const struct gw_client_info *c, enum gw_top_by by)
{
	switch (by) {
	case GW_TOP_BYTES: return c->gci_done_bytes;
	case GW_TOP_LATENCY: return c->gci_done ? c->gci_done_us / c->gci_done : 0;
	default: return c->gci_done;
	}
}

static int gw_ctl_top_cmp(const void *pa, const void *pb, void *arg)
{
	const struct gw_client_info *a = pa, *b = pb;
	enum gw_top_by by = *(const enum gw_top_by *)arg;
	uint64_t ka = gw_ctl_top_key(a, by), kb = gw_ctl_top_key(b, by);

	if (ka != kb)
		return ka > kb ? -1 : 1;
	return a->gci_id < b->gci_id ? -1 : a->gci_id > b->gci_id;
}

void gw_ctl_top_sort(struct gw_client_info *ci, unsigned n, enum gw_top_by by)
{
	/* n log n: the event loop waits while thousands of clients sort. */
	qsort_r(ci, n, sizeof(*ci), gw_ctl_top_cmp, &by);
}

/* "top=N" and "by=calls|bytes|latency", in any order: *top 0 = no top. */
static int gw_ctl_top_args(const char *a, const char *b, unsigned *top, enum gw_top_by *by)
{
	const char *args[2] = { a, b };

	*top = 0;
	*by = GW_TOP_CALLS;
	for (unsigned i = 0; i < 2 && args[i]; i++) {
		char *end;

		if (!strncmp(args[i], "top=", 4)) {
			unsigned long v = strtoul(args[i] + 4, &end, 10);

			if (end == args[i] + 4 || *end || v < 1 || v > GW_CTL_MAX_TOP)
				return -EINVAL;
			*top = (unsigned)v;
		} else if (!strcmp(args[i], "by=calls")) {
			*by = GW_TOP_CALLS;
		} else if (!strcmp(args[i], "by=bytes")) {
			*by = GW_TOP_BYTES;
		} else if (!strcmp(args[i], "by=latency")) {
			*by = GW_TOP_LATENCY;
		} else {
			return -EINVAL;
		}
	}
	if (a && !*top)		/* by= alone: the whole list, sorted */
		*top = GW_CTL_MAX_TOP;
	return 0;
}

/* One list over every worker (a client's id says its worker:
 * fp_id_first/fp_id_step), so --top is the gateway's top: every client
 * with top, else the first GW_CTL_MAX_CLIENTS; *all counts them all. */
static struct gw_client_info *gw_ctl_clients_all(struct gw_ctl *ct, unsigned top, unsigned *all,
						 unsigned *n)
{
	unsigned nw = ct->ct_view.ov_n ? ct->ct_view.ov_n : 1, cap;
	struct gw_ctx *const *gws = ct->ct_view.ov_n ? ct->ct_view.ov_gw : &ct->ct_gw;
	struct gw_client_info *ci;

	*all = *n = 0;
	for (unsigned w = 0; w < nw; w++)
		*all += gw_ctx_client_list(gws[w], NULL, 0);
	cap = top ? (*all ? *all : 1) : GW_CTL_MAX_CLIENTS;
	if (!(ci = calloc(cap, sizeof(*ci))))
		return NULL;
	for (unsigned w = 0; w < nw && *n < cap; w++) {
		unsigned got = gw_ctx_client_list(gws[w], ci + *n, cap - *n);

		*n += got < cap - *n ? got : cap - *n;
	}
	return ci;
}

static void gw_ctl_clients(struct gw_ctl *ct, struct evbuffer *o, bool json, unsigned top,
			   enum gw_top_by by)
{
	unsigned nw = ct->ct_view.ov_n ? ct->ct_view.ov_n : 1, all, n;
	struct gw_client_info *ci = gw_ctl_clients_all(ct, top, &all, &n);

	if (!ci)
		return;
	if (top) {
		gw_ctl_top_sort(ci, n, by);
		n = n < top ? n : top;
	}
	if (json) {
		struct json_object *jo = json_object_new_object(), *arr = json_object_new_array();

		gw_jadd(jo, "count", json_object_new_int64(all));
		for (unsigned i = 0; i < n; i++) {
			struct json_object *c = json_object_new_object();

			gw_jadd(c, "id", json_object_new_uint64(ci[i].gci_id));
			gw_jadd(c, "peer", gw_jstr(ci[i].gci_name));
			gw_jadd(c, "calls", json_object_new_int64(ci[i].gci_calls));
			gw_jadd(c, "bytes_queued", json_object_new_uint64(ci[i].gci_bytes));
			gw_jadd(c, "bytes_received", json_object_new_uint64(ci[i].gci_rx_bytes));
			gw_jadd(c, "idle_ms", json_object_new_uint64(ci[i].gci_idle_ms));
			gw_jadd(c, "paused", json_object_new_boolean(ci[i].gci_paused));
			gw_jadd(c, "calls_done", json_object_new_uint64(ci[i].gci_done));
			gw_jadd(c, "bytes_done", json_object_new_uint64(ci[i].gci_done_bytes));
			gw_jadd(c, "mean_us", json_object_new_uint64(gw_ctl_top_key(&ci[i],
								    GW_TOP_LATENCY)));
			gw_jadd(c, "tls", gw_jstr(ci[i].gci_tls));
			gw_jadd(c, "tls_identity", gw_jstr(ci[i].gci_tls_id));
			gw_jadd(c, "listener", gw_jstr(ci[i].gci_listener));
			if (nw > 1)
				gw_jadd(c, "worker", json_object_new_int64((int64_t)((ci[i].gci_id - 1) % nw)));
			json_object_array_add(arr, c);
		}
		gw_jadd(jo, "clients", arr);
		if (nw > 1)
			gw_jadd(jo, "workers", json_object_new_int64(nw));
		gw_jemit(ct, o, jo);
	} else if (top) {
		evbuffer_add_printf(o, "%-6s %-32s %12s %14s %10s %6s\n", "id", "peer", "calls_done",
				    "bytes_done", "mean_ms", "calls");
		for (unsigned i = 0; i < n; i++)
			evbuffer_add_printf(o, "%-6" PRIu64 " %-32s %12" PRIu64 " %14" PRIu64
					    " %10.3f %6u\n", ci[i].gci_id, ci[i].gci_name, ci[i].gci_done,
					    ci[i].gci_done_bytes,
					    (double)gw_ctl_top_key(&ci[i], GW_TOP_LATENCY) / 1000.0,
					    ci[i].gci_calls);
		if (all > n)
			evbuffer_add_printf(o, "... %u more\n", all - n);
	} else {
		evbuffer_add_printf(o, "%-6s %-32s %6s %10s %14s %9s %-6s %-12s %s%s\n", "id", "peer",
				    "calls", "queued", "received", "idle_s", "paused", "listener", "tls",
				    nw > 1 ? " (worker)" : "");
		for (unsigned i = 0; i < n; i++) {
			char wk[24] = "";

			if (nw > 1)	/* the id says the worker (fp_id_first, fp_id_step) */
				snprintf(wk, sizeof(wk), " (worker %u)", (unsigned)((ci[i].gci_id - 1) % nw));
			evbuffer_add_printf(o, "%-6" PRIu64 " %-32s %6u %10zu %14" PRIu64 " %9.1f %-6s %-12s "
					    "%s%s%s%s\n",
					    ci[i].gci_id, ci[i].gci_name, ci[i].gci_calls, ci[i].gci_bytes,
					    ci[i].gci_rx_bytes, (double)ci[i].gci_idle_ms / 1000.0,
					    ci[i].gci_paused ? "yes" : "no",
					    ci[i].gci_listener[0] ? ci[i].gci_listener : "-",
					    ci[i].gci_tls[0] ? ci[i].gci_tls : "off",
					    ci[i].gci_tls_id[0] ? " " : "", ci[i].gci_tls_id, wk);
		}
		if (all > n)
			evbuffer_add_printf(o, "... %u more\n", all - n);
	}
	free(ci);
}

static struct json_object *gw_ctl_path_json(struct gw_path *pa, const struct gw_tp_info *ti,
					     bool have)
{
	const struct gw_path_info *pi = gw_path_info(pa);
	struct json_object *p = json_object_new_object(), *cs = json_object_new_array();

	gw_jadd(p, "path", gw_jstr(gw_path_name(pa)));
	gw_jadd(p, "route", gw_jstr(pi->pi_route->cr_name));
	gw_jadd(p, "backend", gw_jstr(pi->pi_backend->cb_name));
	gw_jadd(p, "address", gw_jstr(pi->pi_backend->cb_host));
	gw_jadd(p, "transport", gw_jstr(gw_path_transport(pa)));
	gw_jadd(p, "state", gw_jstr(gw_path_state_str(pa)));
	gw_jadd(p, "held", json_object_new_int64(gw_path_nheld(pa)));
	gw_jadd(p, "queued", json_object_new_int64(have ? ti->ti_queued : 0));
	gw_jadd(p, "inflight", json_object_new_int64(have ? ti->ti_inflight : 0));
	gw_jadd(p, "calls", json_object_new_int64(gw_path_ncalls(pa)));
	gw_ctl_path_why_json(p, pa);
	for (unsigned k = 0; have && k < ti->ti_nconns; k++) {
		struct json_object *c = json_object_new_object();

		gw_jadd(c, "conn", json_object_new_int64(k));
		gw_jadd(c, "up", json_object_new_boolean(ti->ti_conn[k].tc_up));
		gw_jadd(c, "credits", json_object_new_int64(ti->ti_conn[k].tc_credits));
		gw_jadd(c, "credits_in_use", json_object_new_int64(ti->ti_conn[k].tc_inflight));
		gw_jadd(c, "inline_send", json_object_new_int64(ti->ti_conn[k].tc_send_threshold));
		gw_jadd(c, "inline_recv", json_object_new_int64(ti->ti_conn[k].tc_recv_threshold));
		json_object_array_add(cs, c);
	}
	gw_jadd(p, "connections", cs);
	return p;
}

/* `json backends` of the gateway a command reads now (gw_ctl_each). */
static void gw_ctl_backends_json(struct gw_ctl *ct, struct evbuffer *o)
{
	struct gw_ctx *gw = ct->ct_gw;
	struct json_object *jo = json_object_new_object(), *arr = json_object_new_array();
	struct gw_tp_info ti;

	/* Active paths, then those a reload removed that still finish calls. */
	for (unsigned i = 0; i < gw_ctx_npaths(gw) + gw_ctx_nretiring(gw); i++) {
		struct gw_path *pa = i < gw_ctx_npaths(gw) ? gw_ctx_path(gw, i)
				     : gw_ctx_retiring(gw, i - gw_ctx_npaths(gw));
		bool have = gw_path_tp_info(pa, &ti) == 0;

		json_object_array_add(arr, gw_ctl_path_json(pa, &ti, have));
	}
	gw_jadd(jo, "paths", arr);
	gw_jemit(ct, o, jo);
}

/* drain/undrain: a path name ("nfs/srv", also the old form "nfs->srv") or
 * a backend name (all its paths).  Names hold no '/' or '>' (config.c),
 * so the old form converts without ambiguity. */
static int gw_ctl_drain(struct gw_ctl *ct, const char *arg, bool on, struct evbuffer *o)
{
	struct gw_ctx *gw = ct->ct_gw;
	const char *arrow = strstr(arg, "->");
	char name[GW_CTL_MAX_LINE];
	unsigned n = 0;

	if (arrow)
		snprintf(name, sizeof(name), "%.*s/%s", (int)(arrow - arg), arg, arrow + 2);
	else
		snprintf(name, sizeof(name), "%s", arg);
	for (unsigned i = 0; i < gw_ctx_npaths(gw); i++) {
		struct gw_path *pa = gw_ctx_path(gw, i);

		if (strcmp(name, gw_path_name(pa)) && strcmp(name, gw_path_info(pa)->pi_backend->cb_name))
			continue;
		gw_path_set_drain(pa, on);
		evbuffer_add_printf(o, "path %s: %s\n", gw_path_name(pa), on ? "draining" : "undrained");
		n++;
	}
	return n ? 0 : -ENOENT;
}

/* Worker w's gateway for what follows (a header line before its text
 * with several); false past the last.  Without a view: ct_gw once. */
static bool gw_ctl_worker(struct gw_ctl *ct, unsigned w, struct evbuffer *o, bool json)
{
	const struct gw_ops_view *v = &ct->ct_view;

	ct->ct_worker = -1;
	if (!v->ov_n)
		return w == 0;
	if (w >= v->ov_n) {
		ct->ct_gw = v->ov_gw[0];
		return false;
	}
	ct->ct_gw = v->ov_gw[w];
	if (v->ov_n > 1) {
		ct->ct_worker = (int)w;
		if (!json)
			evbuffer_add_printf(o, "%sworker %u:\n", w ? "\n" : "", w);
	}
	return true;
}

/* status, clients or backends of every worker.  Text: a "worker N:" block
 * each.  JSON: still one line, worker 0's answer with the others merged
 * into it (gw_ops_json_merge). */
static void gw_ctl_each(struct gw_ctl *ct, char what, struct evbuffer *o, bool json)
{
	struct evbuffer *one = json && ct->ct_view.ov_n > 1 ? evbuffer_new() : NULL;
	struct json_object *base = NULL, *jo;

	for (unsigned w = 0; gw_ctl_worker(ct, w, o, json); w++) {
		ct->ct_worker = -1;	/* in the entries of the lists instead */
		if (what == 's')
			gw_ctl_status(ct, one ? one : o, json, false);
		else
			gw_ctl_backends_json(ct, one ? one : o);
		if (!one)
			continue;
		evbuffer_add(one, "", 1);
		jo = json_tokener_parse((const char *)evbuffer_pullup(one, -1));
		evbuffer_drain(one, evbuffer_get_length(one));
		if (!base && jo) {
			base = json_object_new_object();
			gw_jadd(base, "workers", json_object_new_int((int)ct->ct_view.ov_n));
			json_object_object_foreach(jo, k, v) {
				/* worker 0's own entries get their "worker" too */
				for (size_t i = 0; strcmp(k, "listeners") &&
				     json_object_is_type(v, json_type_array) &&
				     i < json_object_array_length(v); i++)
					if (json_object_is_type(json_object_array_get_idx(v, i),
								json_type_object))
						gw_jadd(json_object_array_get_idx(v, i), "worker",
							json_object_new_int(0));
				gw_jadd(base, k, json_object_get(v));
			}
		} else if (jo) {
			gw_ops_json_merge(base, jo, w);
		}
		json_object_put(jo);
	}
	if (one) {
		if (base)
			gw_jemit(NULL, o, base);
		evbuffer_free(one);
	}
}

/* The counters a command reads: every worker's summed (*sum, to free). */
static const struct gw_stats *gw_ctl_stats_all(struct gw_ctl *ct, struct gw_stats **sum)
{
	*sum = ct->ct_view.ov_n < 2 ? NULL : gw_stats_all(ct->ct_view.ov_gw, ct->ct_view.ov_n);
	return *sum ? *sum : gw_ctx_stats(ct->ct_gw);
}

/* One command that reads the gateways (rc 0) or -EAGAIN: not one of them. */
static int gw_ctl_read_cmd(struct gw_ctl *ct, const char *cmd, const char *arg, const char *arg2,
			   bool json, struct evbuffer *o, char *msg, size_t len)
{
	struct gw_stats *sum;
	const struct gw_stats *st;
	int rc = 0;

	bool per_worker = arg && !strcmp(arg, "workers");

	if ((!strcmp(cmd, "status") || !strcmp(cmd, "backends")) && arg && !per_worker) {
		snprintf(msg, len, "%s takes no argument or workers", cmd);
		return -EINVAL;
	}
	if (!strcmp(cmd, "status") && !json) {
		gw_ctl_status(ct, o, false, per_worker);	/* one page: every worker's */
	} else if (!strcmp(cmd, "status")) {
		gw_ctl_each(ct, 's', o, json);
	} else if (!strcmp(cmd, "stats")) {
		st = gw_ctl_stats_all(ct, &sum);
		if (!arg)
			gw_ctl_stats(st, o, json);
		else if (strcmp(arg, "ops"))
			rc = -EINVAL, snprintf(msg, len, "stats takes no argument or ops");
		else
			gw_ctl_stats_ops(ct, st, o, json);
		free(sum);
	} else if (!strcmp(cmd, "clients")) {
		unsigned top;
		enum gw_top_by by;

		if ((rc = gw_ctl_top_args(arg, arg2, &top, &by)) < 0)
			snprintf(msg, len, "clients takes top=N (1-%u) and by=calls|bytes|latency",
				 GW_CTL_MAX_TOP);
		if (rc == 0)
			gw_ctl_clients(ct, o, json, top, by);
	} else if (!strcmp(cmd, "backends") && json) {
		gw_ctl_each(ct, 'b', o, json);
	} else if (!strcmp(cmd, "backends") && per_worker) {
		for (unsigned w = 0; gw_ctl_worker(ct, w, o, false); w++)
			gw_ctl_paths_worker(ct->ct_gw, o);
	} else if (!strcmp(cmd, "backends")) {
		gw_ctl_paths_backends(ct->ct_view.ov_n ? ct->ct_view.ov_gw : &ct->ct_gw,
				      ct->ct_view.ov_n ? ct->ct_view.ov_n : 1, o);
	} else if (!strcmp(cmd, "metrics")) {
		if (ct->ct_view.ov_n)
			gw_metrics_render_all(o, ct->ct_view.ov_gw, ct->ct_view.ov_n);
		else
			gw_metrics_render(o, gw_ctx_stats(ct->ct_gw), ct->ct_gw);
	} else if (!strcmp(cmd, "drain") || !strcmp(cmd, "undrain")) {
		bool on = !strcmp(cmd, "drain"), found = false;

		if (!arg)
			return snprintf(msg, len, "%s needs a path or backend name", cmd), -EINVAL;
		for (unsigned w = 0; gw_ctl_worker(ct, w, o, false); w++)
			found |= gw_ctl_drain(ct, arg, on, o) == 0;
		if (!found)
			rc = -ENOENT, snprintf(msg, len, "no path or backend named '%s'", arg);
	} else {
		return -EAGAIN;
	}
	return rc;
}

void gw_ctl_exec(struct gw_ctl *ct, const char *line, struct evbuffer *o)
{
	struct gw_stats *st = gw_ctx_stats(ct->ct_gw);
	const struct gw_log *lg = gw_ctx_log(ct->ct_gw);
	char buf[GW_CTL_MAX_LINE], msg[256] = "";
	char *cmd, *arg, *arg2, *save = NULL;
	bool json = false;
	int rc = 0, rd;

	snprintf(buf, sizeof(buf), "%s", line);
	if (ct->ct_view.ov_n)	/* the workers wait while their state is read */
		ct->ct_view.ov_stop(ct->ct_view.ov_arg);
	cmd = strtok_r(buf, " \t\r\n", &save);
	if (cmd && !strcmp(cmd, "json")) {
		json = true;
		cmd = strtok_r(NULL, " \t\r\n", &save);
	}
	arg = cmd ? strtok_r(NULL, " \t\r\n", &save) : NULL;
	arg2 = arg ? strtok_r(NULL, " \t\r\n", &save) : NULL;	/* clients top=N by=KEY */
	if (!cmd) {
		rc = -EINVAL;
		snprintf(msg, sizeof(msg), "empty command");
	} else if ((rd = gw_ctl_read_cmd(ct, cmd, arg, arg2, json, o, msg, sizeof(msg))) != -EAGAIN) {
		rc = rd;	/* status stats clients backends metrics drain undrain */	} else if (!strcmp(cmd, "reload")) {
		if (!ct->ct_hooks.ch_reload) {
			rc = -ENOTSUP;
			snprintf(msg, sizeof(msg), "reload not available");
		} else {
			rc = ct->ct_hooks.ch_reload(ct->ct_hooks.ch_arg, msg, sizeof(msg));
			if (rc == 0)
				evbuffer_add_printf(o, "%s\n", msg[0] ? msg : "reloaded");
		}
	} else if (!strcmp(cmd, "log-level")) {
		int l = -1;

		for (int i = 0; arg && i <= CFG_LOG_DEBUG; i++)
			if (!strcmp(arg, cfg_log_level_str((enum cfg_log_level)i)))
				l = i;
		if (!arg) {
			evbuffer_add_printf(o, "log level %s\n", cfg_log_level_str(
					    lg->gl_level < 0 ? CFG_LOG_ERR : (enum cfg_log_level)lg->gl_level));
		} else if (l < 0 || !ct->ct_hooks.ch_log_level) {
			rc = -EINVAL;
			snprintf(msg, sizeof(msg), "log-level needs error, warn, info or debug");
		} else {
			ct->ct_hooks.ch_log_level(ct->ct_hooks.ch_arg, l);
			evbuffer_add_printf(o, "log level %s\n", arg);
		}
	} else if (!strcmp(cmd, "help")) {
		evbuffer_add_printf(o, "commands: status stats [ops] clients [top=N] [by=calls|bytes|"
				    "latency] backends metrics drain NAME undrain NAME reload "
				    "log-level LEVEL; prefix json for JSON\n");
	} else {
		rc = -EINVAL;
		snprintf(msg, sizeof(msg), "unknown command '%s' (try help)", cmd);
	}
	if (rc < 0) {
		gw_stat_inc(st, GW_CTR_CTL_ERRORS);
		gw_warn(lg, "control: '%s': %s", cmd ? cmd : "", msg);
		evbuffer_add_printf(o, "!ERR %s\n", msg);
	} else {
		gw_stat_inc(st, GW_CTR_CTL_COMMANDS);
		if (cmd && strcmp(cmd, "status") && strcmp(cmd, "stats") && strcmp(cmd, "clients") &&
		    strcmp(cmd, "backends") && strcmp(cmd, "metrics") && strcmp(cmd, "help"))
			gw_info(lg, "control: %s%s%s", cmd, arg ? " " : "", arg ? arg : "");
		evbuffer_add_printf(o, ".\n");
	}
	if (ct->ct_view.ov_n)
		ct->ct_view.ov_go(ct->ct_view.ov_arg);
}

void gw_ctl_set_view(struct gw_ctl *ct, const struct gw_ops_view *v)
{
	ct->ct_view = *v;
	ct->ct_gw = v->ov_gw[0];
}

/* ---- the socket ---- */

static void gw_ctl_conn_event(struct bufferevent *bev, short what, void *arg)
{
	struct gw_ctl *ct = arg;

	if (what & (BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
		gw_stat_inc(gw_ctx_stats(ct->ct_gw), GW_CTR_CTL_ERRORS);
		gw_debug(gw_ctx_log(ct->ct_gw), "control connection: %s",
			 what & BEV_EVENT_TIMEOUT ? "timeout" : "error");
	}
	bufferevent_free(bev);
}

static void gw_ctl_written(struct bufferevent *bev, void *arg)
{
	(void)arg;
	bufferevent_free(bev);	/* answer flushed: one command per connection */
}

static void gw_ctl_read(struct bufferevent *bev, void *arg)
{
	struct gw_ctl *ct = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	size_t n;
	char *line = evbuffer_readln(in, &n, EVBUFFER_EOL_LF);

	if (!line) {
		if (evbuffer_get_length(in) > GW_CTL_MAX_LINE) {
			gw_stat_inc(gw_ctx_stats(ct->ct_gw), GW_CTR_CTL_ERRORS);
			gw_warn(gw_ctx_log(ct->ct_gw), "control: request line too long; closed");
			bufferevent_free(bev);
		}
		return;
	}
	bufferevent_disable(bev, EV_READ);
	if (n > GW_CTL_MAX_LINE)
		line[GW_CTL_MAX_LINE - 1] = '\0';
	gw_ctl_exec(ct, line, bufferevent_get_output(bev));
	free(line);
	bufferevent_setcb(bev, NULL, gw_ctl_written, gw_ctl_conn_event, ct);
	bufferevent_enable(bev, EV_WRITE);
}

static void gw_ctl_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
			  int len, void *arg)
{
	struct gw_ctl *ct = arg;
	struct bufferevent *bev;
	struct timeval tv = { GW_CTL_TIMEOUT_S, 0 };

	(void)sa;
	(void)len;
	bev = bufferevent_socket_new(evconnlistener_get_base(lis), fd, BEV_OPT_CLOSE_ON_FREE);
	if (!bev) {
		gw_stat_inc(gw_ctx_stats(ct->ct_gw), GW_CTR_CTL_ERRORS);
		gw_err(gw_ctx_log(ct->ct_gw), "control: no memory for a connection");
		close(fd);
		return;
	}
	bufferevent_setcb(bev, gw_ctl_read, NULL, gw_ctl_conn_event, ct);
	bufferevent_set_timeouts(bev, &tv, &tv);
	bufferevent_enable(bev, EV_READ);
}

struct gw_ctl *gw_ctl_new(struct event_base *base, struct gw_ctx *gw, const char *path,
			  const struct gw_ctl_hooks *hooks)
{
	struct gw_ctl *ct = calloc(1, sizeof(*ct));
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, err;

	if (!ct)
		return NULL;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		err = ENAMETOOLONG;
		goto err_free;
	}
	ct->ct_gw = gw;
	ct->ct_worker = -1;
	if (hooks)
		ct->ct_hooks = *hooks;
	ct->ct_start_ms = gw_now_ms();
	snprintf(ct->ct_path, sizeof(ct->ct_path), "%s", path);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = errno;
		goto err_free;
	}
	unlink(path);	/* a stale socket of a previous run */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		err = errno;
		umask(old);
		goto err_sock;
	}
	umask(old);
	chmod(path, 0600);
	ct->ct_lis = evconnlistener_new(base, gw_ctl_accept, ct, LEV_OPT_CLOSE_ON_FREE, 16, fd);
	if (!ct->ct_lis) {
		err = errno ? errno : ENOMEM;
		unlink(path);
		goto err_sock;
	}
	gw_info(gw_ctx_log(gw), "control socket %s", path);
	return ct;
err_sock:
	close(fd);
err_free:
	free(ct);
	errno = err;
	return NULL;
}

void gw_ctl_free(struct gw_ctl *ct)
{
	if (!ct)
		return;
	if (ct->ct_lis) {
		evconnlistener_free(ct->ct_lis);
		unlink(ct->ct_path);
	}
	free(ct);
}
