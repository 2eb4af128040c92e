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
 * Commands: status, stats, clients, backends, drain PATH|BACKEND,
 * undrain PATH|BACKEND, reload, log-level error|warn|info|debug, metrics
 * (the Prometheus exposition), help.  A request longer than
 * GW_CTL_MAX_LINE or silent for GW_CTL_TIMEOUT_S is an error.  Counters:
 * GW_CTR_CTL_COMMANDS, GW_CTR_CTL_ERRORS.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "chunking.h"
#include "config.h"
#include "client.h"
#include "gateway.h"
#include "log.h"
#include "ops.h"
#include "transport.h"

#define GW_CTL_MAX_LINE		512
#define GW_CTL_TIMEOUT_S	5
#define GW_CTL_MAX_CLIENTS	64	/* rows of `clients` */

struct gw_ctl {
	struct evconnlistener *ct_lis;
	struct gw_ctx *ct_gw;
	struct gw_ctl_hooks ct_hooks;
	char ct_path[108];
	uint64_t ct_start_ms;
};

/* ---- commands ---- */

static const char *gw_ctl_path_state(struct gw_path *pa)
{
	return gw_path_retiring(pa) ? "removing" : gw_path_draining(pa) ? "draining"
	       : gw_path_up(pa) ? "up" : "down";
}

static void gw_ctl_status(struct gw_ctl *ct, struct evbuffer *o, bool json)
{
	struct gw_ctx *gw = ct->ct_gw;
	const char *cfgp = ct->ct_hooks.ch_config_path ? ct->ct_hooks.ch_config_path(ct->ct_hooks.ch_arg)
			   : NULL;
	unsigned uptime = (unsigned)((gw_now_ms() - ct->ct_start_ms) / 1000);
	unsigned nclients = gw_ctx_nclients(gw);
	unsigned inflight = gw_ctx_ncalls(gw) - gw_ctx_calls_avail(gw);
	const char *lvl = cfg_log_level_str(gw_ctx_log(gw)->gl_level < 0 ? 0
					    : (enum cfg_log_level)gw_ctx_log(gw)->gl_level);

	const struct cfg *cf = gw_ctx_cfg(gw);
	const struct gw_stats *st = gw_ctx_stats(gw);

	if (json) {
		evbuffer_add_printf(o, "{\"version\":\"%s\",\"uptime_s\":%u,\"config\":\"%s\","
				    "\"ready\":%s,\"log_level\":\"%s\",\"clients\":%u,"
				    "\"calls_in_flight\":%u,", GW_VERSION, uptime,
				    cfgp ? cfgp : "", gw_ctx_ready(gw) ? "true" : "false", lvl,
				    nclients, inflight);
		/* The values a reload changes, as running now. */
		evbuffer_add_printf(o, "\"limits\":{\"calls_per_client\":%u,\"bytes_per_client\":%zu,"
				    "\"held_calls\":%u,\"idle_timeout_ms\":%u,\"record_timeout_ms\":%u,"
				    "\"reconnect_ms\":%u,\"drc_window_ms\":%u},\"reloads\":{\"applied\":%"
				    PRIu64 ",\"invalid\":%" PRIu64 ",\"restart_needed\":%" PRIu64
				    ",\"failed\":%" PRIu64 "},\"paths_removing\":%u,\"paths\":[",
				    cf->cf_calls_per_client, cf->cf_bytes_per_client, cf->cf_held_calls,
				    cf->cf_idle_timeout_ms, cf->cf_record_timeout_ms, cf->cf_reconnect_ms,
				    cf->cf_drc_window_ms, st->gs_ctr[GW_CTR_RELOAD_APPLIED],
				    st->gs_ctr[GW_CTR_RELOAD_INVALID], st->gs_ctr[GW_CTR_RELOAD_RESTART],
				    st->gs_ctr[GW_CTR_RELOAD_FAILED], gw_ctx_nretiring(gw));
		for (unsigned i = 0; i < gw_ctx_npaths(gw); i++)
			evbuffer_add_printf(o, "%s{\"path\":\"%s\",\"state\":\"%s\"}", i ? "," : "",
					    gw_path_name(gw_ctx_path(gw, i)),
					    gw_ctl_path_state(gw_ctx_path(gw, i)));
		evbuffer_add_printf(o, "]}\n");
		return;
	}
	evbuffer_add_printf(o, "rpcrdma-gw %s, up %u s, configuration %s\n", GW_VERSION, uptime,
			    cfgp ? cfgp : "(none)");
	evbuffer_add_printf(o, "ready: %s; log level %s; %u clients; %u calls in flight\n",
			    gw_ctx_ready(gw) ? "yes" : "no (no backend up)", lvl, nclients, inflight);
	evbuffer_add_printf(o, "limits: calls_per_client %u, bytes_per_client %zu, held_calls %u; "
			    "reloads applied %" PRIu64 ", refused %" PRIu64 "\n", cf->cf_calls_per_client,
			    cf->cf_bytes_per_client, cf->cf_held_calls, st->gs_ctr[GW_CTR_RELOAD_APPLIED],
			    st->gs_ctr[GW_CTR_RELOAD_INVALID] + st->gs_ctr[GW_CTR_RELOAD_RESTART] +
			    st->gs_ctr[GW_CTR_RELOAD_FAILED]);
	for (unsigned i = 0; i < gw_ctx_npaths(gw); i++) {
		struct gw_path *pa = gw_ctx_path(gw, i);

		evbuffer_add_printf(o, "path %-24s %-5s %-8s %u held\n", gw_path_name(pa),
				    gw_path_transport(pa), gw_ctl_path_state(pa), gw_path_nheld(pa));
	}
}

static void gw_ctl_stats(struct gw_ctl *ct, struct evbuffer *o, bool json)
{
	const struct gw_stats *st = gw_ctx_stats(ct->ct_gw);
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
		evbuffer_add_printf(o, "{\"calls\":[");
		for (unsigned i = 0; i < n; i++) {
			const char *pn = gw_prog_name(rows[i]->ps_prog);
			const char *qn = gw_proc_name(rows[i]->ps_prog, rows[i]->ps_vers, rows[i]->ps_proc);

			evbuffer_add_printf(o, "%s{\"program\":%" PRIu32 ",\"name\":\"%s\",\"version\":%"
					    PRIu32 ",\"procedure\":%" PRIu32 ",\"procname\":\"%s\","
					    "\"calls\":%" PRIu64 "}", i ? "," : "", rows[i]->ps_prog,
					    pn ? pn : "", rows[i]->ps_vers, rows[i]->ps_proc, qn ? qn : "",
					    rows[i]->ps_calls);
		}
		evbuffer_add_printf(o, "],\"nfs4_ops\":{");
		for (unsigned i = 0, k = 0; i < GW_NFS4_OPS; i++)
			if (st->gs_nfs4_op[i])
				evbuffer_add_printf(o, "%s\"%s\":%" PRIu64, k++ ? "," : "",
						    i && chk_nfs4_op_name(i) ? chk_nfs4_op_name(i) : "other",
						    st->gs_nfs4_op[i]);
		evbuffer_add_printf(o, "},\"counters\":{");
		for (unsigned c = 0; c < GW_CTR__COUNT; c++)
			evbuffer_add_printf(o, "%s\"%s\":%" PRIu64, c ? "," : "", gw_ctr_str(c),
					    st->gs_ctr[c]);
		evbuffer_add_printf(o, "}}\n");
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
}

static void gw_ctl_clients(struct gw_ctl *ct, struct evbuffer *o, bool json)
{
	struct gw_client_info *ci = calloc(GW_CTL_MAX_CLIENTS, sizeof(*ci));
	unsigned n = 0, all;

	if (!ci)
		return;
	all = gw_ctx_client_list(ct->ct_gw, ci, GW_CTL_MAX_CLIENTS);
	n = all < GW_CTL_MAX_CLIENTS ? all : GW_CTL_MAX_CLIENTS;
	if (json) {
		evbuffer_add_printf(o, "{\"count\":%u,\"clients\":[", all);
		for (unsigned i = 0; i < n; i++)
			evbuffer_add_printf(o, "%s{\"id\":%" PRIu64 ",\"peer\":\"%s\",\"calls\":%u,"
					    "\"bytes_queued\":%zu,\"bytes_received\":%" PRIu64 ","
					    "\"idle_ms\":%" PRIu64 ",\"paused\":%s}", i ? "," : "",
					    ci[i].gci_id, ci[i].gci_name, ci[i].gci_calls, ci[i].gci_bytes,
					    ci[i].gci_rx_bytes, ci[i].gci_idle_ms,
					    ci[i].gci_paused ? "true" : "false");
		evbuffer_add_printf(o, "]}\n");
	} else {
		evbuffer_add_printf(o, "%-6s %-32s %6s %10s %14s %9s %s\n", "id", "peer", "calls",
				    "queued", "received", "idle_s", "paused");
		for (unsigned i = 0; i < n; i++)
			evbuffer_add_printf(o, "%-6" PRIu64 " %-32s %6u %10zu %14" PRIu64 " %9.1f %s\n",
					    ci[i].gci_id, ci[i].gci_name, ci[i].gci_calls, ci[i].gci_bytes,
					    ci[i].gci_rx_bytes, (double)ci[i].gci_idle_ms / 1000.0,
					    ci[i].gci_paused ? "yes" : "no");
		if (all > n)
			evbuffer_add_printf(o, "... %u more\n", all - n);
	}
	free(ci);
}

static void gw_ctl_backends(struct gw_ctl *ct, struct evbuffer *o, bool json)
{
	struct gw_ctx *gw = ct->ct_gw;
	struct gw_tp_info ti;

	if (json)
		evbuffer_add_printf(o, "{\"paths\":[");
	else
		evbuffer_add_printf(o, "%-24s %-10s %-5s %-8s %5s %6s %8s  %s\n", "path", "backend",
				    "tp", "state", "held", "queued", "inflight",
				    "connections (conn:state credits granted/in use, inline send/recv)");
	/* Active paths, then those a reload removed that still finish calls. */
	for (unsigned i = 0; i < gw_ctx_npaths(gw) + gw_ctx_nretiring(gw); i++) {
		struct gw_path *pa = i < gw_ctx_npaths(gw) ? gw_ctx_path(gw, i)
				     : gw_ctx_retiring(gw, i - gw_ctx_npaths(gw));
		const struct gw_path_info *pi = gw_path_info(pa);
		bool have = gw_path_tp_info(pa, &ti) == 0;

		if (json) {
			evbuffer_add_printf(o, "%s{\"path\":\"%s\",\"route\":\"%s\",\"backend\":\"%s\","
					    "\"address\":\"%s\",\"transport\":\"%s\",\"state\":\"%s\","
					    "\"held\":%u,\"queued\":%u,\"inflight\":%u,\"calls\":%u,"
					    "\"connections\":[",
					    i ? "," : "", gw_path_name(pa), pi->pi_route->cr_name,
					    pi->pi_backend->cb_name, pi->pi_backend->cb_host,
					    gw_path_transport(pa), gw_ctl_path_state(pa), gw_path_nheld(pa),
					    ti.ti_queued, ti.ti_inflight, gw_path_ncalls(pa));
			for (unsigned k = 0; have && k < ti.ti_nconns; k++)
				evbuffer_add_printf(o, "%s{\"conn\":%u,\"up\":%s,\"credits\":%u,"
						    "\"credits_in_use\":%u,\"inline_send\":%" PRIu32 ","
						    "\"inline_recv\":%" PRIu32 "}", k ? "," : "", k,
						    ti.ti_conn[k].tc_up ? "true" : "false",
						    ti.ti_conn[k].tc_credits, ti.ti_conn[k].tc_inflight,
						    ti.ti_conn[k].tc_send_threshold,
						    ti.ti_conn[k].tc_recv_threshold);
			evbuffer_add_printf(o, "]}");
			continue;
		}
		evbuffer_add_printf(o, "%-24s %-10s %-5s %-8s %5u", gw_path_name(pa),
				    pi->pi_backend->cb_name, gw_path_transport(pa),
				    gw_ctl_path_state(pa), gw_path_nheld(pa));
		if (!have) {
			evbuffer_add_printf(o, " %6s %8s  -\n", "-", "-");
			continue;
		}
		evbuffer_add_printf(o, " %6u %8u ", ti.ti_queued, ti.ti_inflight);
		for (unsigned k = 0; k < ti.ti_nconns; k++)
			evbuffer_add_printf(o, " %u:%s credits %u/%u inline %" PRIu32 "/%" PRIu32, k,
					    ti.ti_conn[k].tc_up ? "up" : "down", ti.ti_conn[k].tc_credits,
					    ti.ti_conn[k].tc_inflight, ti.ti_conn[k].tc_send_threshold,
					    ti.ti_conn[k].tc_recv_threshold);
		evbuffer_add_printf(o, "\n");
	}
	if (json)
		evbuffer_add_printf(o, "]}\n");
}

/* drain/undrain: a path name ("nfs->srv") or a backend name (all its paths). */
static int gw_ctl_drain(struct gw_ctl *ct, const char *arg, bool on, struct evbuffer *o)
{
	struct gw_ctx *gw = ct->ct_gw;
	unsigned n = 0;

	for (unsigned i = 0; i < gw_ctx_npaths(gw); i++) {
		struct gw_path *pa = gw_ctx_path(gw, i);

		if (strcmp(arg, gw_path_name(pa)) && strcmp(arg, gw_path_info(pa)->pi_backend->cb_name))
			continue;
		gw_path_set_drain(pa, on);
		evbuffer_add_printf(o, "path %s: %s\n", gw_path_name(pa), on ? "draining" : "undrained");
		n++;
	}
	return n ? 0 : -ENOENT;
}

void gw_ctl_exec(struct gw_ctl *ct, const char *line, struct evbuffer *o)
{
	struct gw_stats *st = gw_ctx_stats(ct->ct_gw);
	const struct gw_log *lg = gw_ctx_log(ct->ct_gw);
	char buf[GW_CTL_MAX_LINE], msg[256] = "";
	char *cmd, *arg, *save = NULL;
	bool json = false;
	int rc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	cmd = strtok_r(buf, " \t\r\n", &save);
	if (cmd && !strcmp(cmd, "json")) {
		json = true;
		cmd = strtok_r(NULL, " \t\r\n", &save);
	}
	arg = cmd ? strtok_r(NULL, " \t\r\n", &save) : NULL;
	if (!cmd) {
		rc = -EINVAL;
		snprintf(msg, sizeof(msg), "empty command");
	} else if (!strcmp(cmd, "status")) {
		gw_ctl_status(ct, o, json);
	} else if (!strcmp(cmd, "stats")) {
		gw_ctl_stats(ct, o, json);
	} else if (!strcmp(cmd, "clients")) {
		gw_ctl_clients(ct, o, json);
	} else if (!strcmp(cmd, "backends")) {
		gw_ctl_backends(ct, o, json);
	} else if (!strcmp(cmd, "metrics")) {
		gw_metrics_render(o, st, ct->ct_gw);
	} else if (!strcmp(cmd, "drain") || !strcmp(cmd, "undrain")) {
		bool on = !strcmp(cmd, "drain");

		if (!arg) {
			rc = -EINVAL;
			snprintf(msg, sizeof(msg), "%s needs a path or backend name", cmd);
		} else if ((rc = gw_ctl_drain(ct, arg, on, o)) < 0) {
			snprintf(msg, sizeof(msg), "no path or backend named '%s'", arg);
		}
	} else if (!strcmp(cmd, "reload")) {
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
		evbuffer_add_printf(o, "commands: status stats clients backends metrics drain NAME "
				    "undrain NAME reload log-level LEVEL; prefix json for JSON\n");
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
