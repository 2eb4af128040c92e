// SPDX-License-Identifier: MIT
/*
 * This file contains main() of rpcrdma-gw: command line, configuration,
 * then one event loop with the buffer pool, the gateway (routes and their
 * transports) and the TCP frontend.  SIGINT/SIGTERM stop the loop and
 * everything is freed in reverse order; SIGHUP reloads the configuration
 * file (limits, timeouts, log level, backends and routes; a change of listen
 * addresses or pool sizes needs a restart and is refused with a log line);
 * SIGUSR1 logs the counters.  Under systemd
 * (Type=notify) it reports READY=1 once listening and ready as ready_when
 * says (by default: every NFS route can forward a call, over RDMA or its
 * TCP fallback), never before: until then STATUS= says "not ready: " and
 * what it waits for, and systemd's TimeoutStartSec bounds the wait.  It
 * keeps STATUS= current, feeds the watchdog and takes listening sockets
 * passed by socket activation instead of the configured ones.
 *
 * The daemon never forks: --foreground is accepted for compatibility.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <systemd/sd-daemon.h>

#include "backoff.h"
#include "call.h"
#include "config.h"
#include "fe_admit.h"
#include "fe_tls.h"
#include "frontend.h"
#include "gateway.h"
#include "log.h"
#include "nlm_map.h"
#include "nsm_udp.h"
#include "ops.h"
#include "pool.h"
#include "rpcb_reg.h"
#include "rpcbind.h"
#include "transport.h"
#include "worker.h"

struct gw_main {
	struct event_base *m_base;
	struct cfg *m_cfg;
	struct gw_log m_log;
	struct gw_stats m_stats;	/* worker 0's */
	struct gw_worker *m_w[CFG_MAX_WORKERS];	/* m_w[0] runs on this thread */
	struct gw_nlm_names *m_nlm_names;	/* workers > 1: what their NLM maps share */
	struct gw_backoff *m_backoff;		/* every worker's routes: rpcbind asked how often */
	struct gw_nu *m_nu;		/* NSM over UDP on the listen addresses (nsm_udp.h) */
	unsigned m_nw;
	unsigned m_stops;		/* gw_main_stop depth */
	struct gw_ctx *m_gw;		/* worker 0's, once listening */
	struct fe_frontend *m_fe;	/* worker 0's: the listeners */
	struct gw_admin *m_admin;	/* admin_listen: /metrics /healthz /readyz */
	char m_token[GW_ADMIN_TOKEN_MAX + 1];	/* admin_token_file's, until m_admin has it */
	struct gw_ctl *m_ctl;		/* control_socket: rpcrdma-gwctl */
	struct gw_rpcb_reg m_rpcb;	/* rpcbind_register: what we set, unset at exit */
	struct event *m_sig[4];
	struct event *m_watchdog;
	bool m_ready;			/* READY=1 sent */
	char m_status[256];		/* last STATUS= sent */
	uint64_t m_watchdog_usec;
	const char *m_path;		/* for reload */
	struct cfg_overrides m_ov;
};

/* Every other worker waits at a turn of its loop while the main thread
 * reads or changes its state (operations, reload); nested calls count. */
static void gw_main_stop(void *arg)
{
	struct gw_main *m = arg;

	if (m->m_stops++ == 0)
		for (unsigned i = 0; i < m->m_nw; i++)
			gw_worker_stop(m->m_w[i]);
}

static void gw_main_go(void *arg)
{
	struct gw_main *m = arg;

	if (--m->m_stops == 0)
		for (unsigned i = 0; i < m->m_nw; i++)
			gw_worker_go(m->m_w[i]);
}

/* The new configuration in every worker, each stopped meanwhile.  Worker
 * 0 first: a failure there (the usual one, the same for all) applies
 * nothing; a later worker's failure is reported with its number. */
static int gw_main_reload_workers(struct gw_main *m, const struct cfg *cf, const struct cfg_diff *d,
				  char *err, size_t len)
{
	int rc = 0;

	gw_main_stop(m);
	for (unsigned i = 0; i < m->m_nw && rc == 0; i++) {
		struct gw_worker *w = m->m_w[i];

		for (unsigned r = 0; r < cf->cf_nroutes; r++)
			if (cf->cf_routes[r].cr_transport == CFG_TRANSPORT_RDMA)
				/* The first rdma route: without it the path falls back to TCP. */
				gw_worker_need_rdma(w);
		rc = gw_ctx_reload(gw_worker_ctx(w), cf, d, err, len);
		if (rc < 0 && i > 0) {
			size_t o = strlen(err);

			snprintf(err + o, len - o, " (worker %u; workers 0-%u reloaded)", i, i - 1);
		}
		if (rc == 0) {
			fe_set_cfg(gw_worker_fe(w), cf);
			gw_worker_log(w)->gl_level = cf->cf_log_level;
			gw_worker_log(w)->gl_format = cf->cf_log_format;
		}
	}
	m->m_log.gl_level = cf->cf_log_level;
	m->m_log.gl_format = cf->cf_log_format;
	gw_main_go(m);
	return rc;
}

/* SIGHUP and `rpcrdma-gwctl reload`: parse anew, then apply the difference
 * (cfg_diff): values at once, backends and routes added (they connect) or
 * retired (they finish their calls, then close).  A file that does not
 * parse, or that changes what only a restart can (listen, pool, sizes,
 * admin and control sockets), leaves the running configuration whole.
 * 0, or a negative errno with the reason in msg. */
static int gw_main_reload(struct gw_main *m, char *msg, size_t len)
{
	char err[512];
	struct cfg_diff d;
	struct cfg *cf;
	unsigned n[CFG_ACT_RESTART + 1] = { 0 };
	int rc;

	if (!m->m_path) {
		gw_stat_inc(&m->m_stats, GW_CTR_RELOAD_INVALID);
		snprintf(msg, len, "no configuration file to reload (started without -c)");
		gw_warn(&m->m_log, "reload: %s", msg);
		return -ENOENT;
	}
	cf = cfg_load(m->m_path, &m->m_ov, err, sizeof(err));
	if (!cf) {
		gw_stat_inc(&m->m_stats, GW_CTR_RELOAD_INVALID);
		snprintf(msg, len, "%s; keeping the running configuration", err);
		gw_err(&m->m_log, "reload: %s", msg);
		return -EINVAL;
	}
	cfg_diff(m->m_cfg, cf, &d);
	if (d.cdf_nrestart) {
		size_t o = 0;

		for (unsigned k = 0; k < d.cdf_n && o < len; k++)
			if (d.cdf_act[k].ac_kind == CFG_ACT_RESTART)
				o += (size_t)snprintf(msg + o, len - o, "%s%s", o ? ", " : "",
						      d.cdf_act[k].ac_what);
		if (o < len)
			snprintf(msg + o, len - o, " changed, which needs a restart; keeping the "
				 "running configuration (nothing applied)");
		gw_stat_inc(&m->m_stats, GW_CTR_RELOAD_RESTART);
		gw_err(&m->m_log, "reload: %s", msg);
		cfg_free(cf);
		return -EPERM;
	}
	rc = gw_main_reload_workers(m, cf, &d, err, sizeof(err));
	if (rc < 0) {
		gw_stat_inc(&m->m_stats, GW_CTR_RELOAD_FAILED);
		snprintf(msg, len, "%s; keeping the running configuration", err);
		gw_err(&m->m_log, "reload: %s", msg);
		cfg_free(cf);
		return rc;
	}
	cfg_free(m->m_cfg);
	m->m_cfg = cf;
	gw_stat_inc(&m->m_stats, GW_CTR_RELOAD_APPLIED);
	for (unsigned k = 0; k < d.cdf_n; k++)
		n[d.cdf_act[k].ac_kind]++;
	snprintf(err, sizeof(err), "backends +%u -%u, routes +%u -%u (%u kept), values %s%s",
		 n[CFG_ACT_BACKEND_ADD], n[CFG_ACT_BACKEND_REMOVE], n[CFG_ACT_ROUTE_ADD],
		 n[CFG_ACT_ROUTE_REMOVE], n[CFG_ACT_ROUTE_KEEP],
		 d.cdf_values_what[0] ? "changed: " : "unchanged", d.cdf_values_what);
	gw_info(&m->m_log, "reload: %s applied: %s", m->m_path, err);
	snprintf(msg, len, "reloaded %s: %s", m->m_path, err);
	return 0;
}

/* Paths changed (or listening began): READY=1 the first time the gateway
 * is ready, STATUS= whenever what it says changes. */
static void gw_main_ready_check(struct gw_main *m)
{
	char status[sizeof(m->m_status)];
	struct gw_ctx *gws[CFG_MAX_WORKERS];
	struct gw_readiness rd;
	bool ready;

	if (!m->m_fe || !m->m_gw)	/* not listening yet */
		return;
	gw_main_stop(m);
	for (unsigned i = 0; i < m->m_nw; i++)
		gws[i] = gw_worker_ctx(m->m_w[i]);
	gw_readiness(gws, m->m_nw, &rd);	/* the first worker not ready says why */
	gw_main_go(m);
	ready = rd.rdy_ready;
	snprintf(status, sizeof(status), "%s: listening; %s%.200s", ready ? "ready" : "not ready",
		 ready ? "" : "waiting for ", rd.rdy_why);
	if (ready && !m->m_ready) {
		m->m_ready = true;
		snprintf(m->m_status, sizeof(m->m_status), "%s", status);
		sd_notifyf(0, "READY=1\nSTATUS=%s", status);
		gw_info(&m->m_log, "%s", status);
		return;
	}
	if (strcmp(status, m->m_status)) {
		snprintf(m->m_status, sizeof(m->m_status), "%s", status);
		sd_notifyf(0, "STATUS=%s", status);
		if (ready)
			gw_info(&m->m_log, "%s", status);
		else if (m->m_ready)	/* was ready: a loss worth a warning */
			gw_warn(&m->m_log, "%s", status);
		else
			gw_info(&m->m_log, "%s", status);
	}
}

static void on_paths_changed(void *arg)
{
	gw_main_ready_check(arg);
}

/* A reload ends: READY=1 again only once the start was ready (a reload
 * must not make a start that waits look done), then the readiness anew. */
static void gw_main_reload_done(struct gw_main *m)
{
	if (m->m_ready)
		sd_notify(0, "READY=1");
	gw_main_ready_check(m);
}

/* Control socket hooks. */
static int gw_main_ctl_reload(void *arg, char *msg, size_t len)
{
	struct gw_main *m = arg;
	int rc;

	sd_notify(0, "RELOADING=1");
	rc = gw_main_reload(m, msg, len);
	gw_main_reload_done(m);
	return rc;
}

static void gw_main_ctl_log_level(void *arg, int level)
{
	struct gw_main *m = arg;

	gw_main_stop(m);
	m->m_log.gl_level = level;
	for (unsigned i = 0; i < m->m_nw; i++)
		gw_worker_log(m->m_w[i])->gl_level = level;
	gw_main_go(m);
}

static const char *gw_main_ctl_path(void *arg)
{
	return ((struct gw_main *)arg)->m_path;
}

/* The admin listener's token, read at start (and by --check-config): a
 * token file that cannot be used refuses the start, as a listener left open
 * without the protection asked for would be worse than none.  A listener
 * beyond loopback without a token is only warned about. */
static int gw_main_admin_token(const struct cfg *cf, char *tok, size_t len, bool checking)
{
	char err[320];

	tok[0] = '\0';
	if (!cf->cf_admin_listen[0])
		return 0;
	if (cf->cf_admin_token_file[0] &&
	    gw_admin_token_load(cf->cf_admin_token_file, tok, len, err, sizeof(err)) < 0) {
		fprintf(stderr, "rpcrdma-gw: %s\n", err);
		return -1;
	}
	if (checking && !tok[0] && !gw_admin_local((const struct sockaddr *)&cf->cf_admin_addr))
		fprintf(stderr, "warning: admin_listen = %s is not a loopback address and no "
			"admin_token_file is set: /metrics, /healthz and /readyz are open to every "
			"host that reaches it\n", cf->cf_admin_listen);
	return 0;
}

/* Operations listeners: not the data path, so failing to open one is an
 * error in the log, not a failed start. */
static void gw_main_ops_setup(struct gw_main *m)
{
	const struct cfg *cf = m->m_cfg;
	struct gw_ops_view v = { .ov_n = m->m_nw, .ov_stop = gw_main_stop, .ov_go = gw_main_go,
				 .ov_arg = m };

	for (unsigned i = 0; i < m->m_nw; i++)
		v.ov_gw[i] = gw_worker_ctx(m->m_w[i]);

	if (cf->cf_admin_listen[0]) {
		m->m_admin = gw_admin_new(m->m_base, m->m_gw, (const struct sockaddr *)&cf->cf_admin_addr,
					  cf->cf_admin_addrlen, m->m_token[0] ? m->m_token : NULL);
		explicit_bzero(m->m_token, sizeof(m->m_token));
		if (m->m_admin)
			gw_admin_set_view(m->m_admin, &v);
		else
			gw_err(&m->m_log, "admin_listen %s: %s; running without /metrics",
			       cf->cf_admin_listen, strerror(errno));
	}
	if (cf->cf_control_socket[0]) {
		struct gw_ctl_hooks h = {
			.ch_reload = gw_main_ctl_reload, .ch_log_level = gw_main_ctl_log_level,
			.ch_config_path = gw_main_ctl_path, .ch_arg = m,
		};

		m->m_ctl = gw_ctl_new(m->m_base, m->m_gw, cf->cf_control_socket, &h);
		if (m->m_ctl)
			gw_ctl_set_view(m->m_ctl, &v);
		else
			gw_err(&m->m_log, "control_socket %s: %s; running without rpcrdma-gwctl",
			       cf->cf_control_socket, strerror(errno));
	}
}

/* rpcbind_register: the bound listener addresses (also those systemd
 * passed) in the local rpcbind.  Once at start; a reload cannot change it
 * (cfg_diff: restart needed), so nothing is ever registered twice. */
static void gw_main_rpcb_setup(struct gw_main *m)
{
	struct sockaddr_storage addrs[CFG_MAX_LISTEN];
	unsigned n = 0;

	if (!m->m_cfg->cf_rpcbind_register)
		return;
	while (n < CFG_MAX_LISTEN && fe_listen_sockaddr(m->m_fe, n, &addrs[n]) == 0)
		n++;
	m->m_rpcb.rgr_ops = &gw_rpcb_tirpc;
	m->m_rpcb.rgr_n = gw_rpcb_plan(m->m_cfg, addrs, n, m->m_rpcb.rgr_e, GW_RPCB_MAX);
	for (n = 0; m->m_nu && n < CFG_MAX_LISTEN && gw_nu_sockaddr(m->m_nu, n, &addrs[n]) == 0;)
		n++;
	m->m_rpcb.rgr_n = gw_rpcb_plan_nsm_udp(m->m_cfg, addrs, m->m_nu ? n : 0, m->m_rpcb.rgr_e,
					       m->m_rpcb.rgr_n, GW_RPCB_MAX);
	gw_info(&m->m_log, "rpcbind_register: %u of %u program/version/netid registered",
		gw_rpcb_register(&m->m_rpcb, &m->m_log, &m->m_stats), m->m_rpcb.rgr_n);
}

/* A client host's SM_NOTIFY over UDP: to the worker that tracks its locks. */
static bool gw_main_nsm_handoff(void *arg, const struct sockaddr *sa, socklen_t salen)
{
	struct gw_main *m = arg;
	int rc = gw_worker_nsm(m->m_w, m->m_nw, sa, salen);

	if (rc < 0) {	/* its answer tells sm-notify it arrived */
		gw_stat_inc(&m->m_stats, GW_CTR_NSM_UDP_DROPPED);
		gw_log_client(&m->m_log, CFG_LOG_WARN, "hand-off", "SM_NOTIFY over UDP lost: "
			      "worker %u's mailbox is full", gw_worker_pick(sa, m->m_nw));
	}
	return rc != 0;
}

/* A datagram to the NSM socket of listener li: that listener's admission
 * (allow, deny, secure_port), as its TCP connections have, by the
 * configuration in force (a reload's new rules apply from then on). */
static const char *gw_main_nsm_admit(void *arg, unsigned li, const struct sockaddr *sa,
				     socklen_t salen)
{
	struct gw_main *m = arg;

	(void)salen;
	return fe_adm_datagram(m->m_cfg, li, sa);
}

/* NSM over UDP (nsm_udp.h) on every listen address, when NSM is routed:
 * sm-notify sends datagrams only.  A socket that cannot be bound is
 * logged and left out (NSM over TCP still works). */
static void gw_main_nsm_setup(struct gw_main *m)
{
	struct gw_nu_params np = { .np_base = m->m_base, .np_gw = m->m_gw, .np_st = &m->m_stats,
				   .np_lg = &m->m_log, .np_handoff = m->m_nw > 1 ? gw_main_nsm_handoff
				   : NULL, .np_handoff_arg = m, .np_admit = gw_main_nsm_admit,
				   .np_admit_arg = m };
	struct sockaddr_storage ss;
	int err;

	if (!cfg_route_find(m->m_cfg, CFG_PROG_NSM) || !(m->m_nu = gw_nu_new(&np)))
		return;
	for (unsigned i = 0; i < CFG_MAX_LISTEN && fe_listen_sockaddr(m->m_fe, i, &ss) == 0; i++) {
		char name[INET6_ADDRSTRLEN + 8], host[INET6_ADDRSTRLEN];

		fe_adm_peer_name((const struct sockaddr *)&ss, name, sizeof(name), host, sizeof(host));
		err = gw_nu_open(m->m_nu, &ss, fe_listen_li(m->m_fe, i));
		if (err < 0)
			gw_warn(&m->m_log, "NSM over UDP on %s: %s; reboot notifications from sm-notify "
				"do not arrive there", name, strerror(-err));
		else
			gw_info(&m->m_log, "NSM over UDP on %s", name);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rpcrdma-gw [-c FILE] [--listen ADDR[:PORT]]... [--backend HOST[:PORT]] [-v]...\n"
		"                  [--foreground] [--log journal|stderr|auto]\n"
		"       rpcrdma-gw --check-config [--dump] FILE\n"
		"       rpcrdma-gw --version\n"
		"\n"
		"  -c, --config FILE      configuration file (default " CFG_DEFAULT_PATH " if present)\n"
		"      --check-config FILE  parse and validate FILE, print \"configuration OK\" or the error\n"
		"      --dump             with --check-config: print the effective configuration\n"
		"                         (every key, defaults filled in) instead of \"configuration OK\"\n"
		"      --listen ADDR[:PORT] accept clients here (repeatable; replaces listen = lines)\n"
		"      --backend HOST[:PORT] server address (replaces the first backend's address)\n"
		"  -v, --verbose          one more log level (info -> debug)\n"
		"      --foreground       accepted; the daemon never forks\n"
		"      --log TARGET       journal (structured fields), stderr, or auto (default:\n"
		"                         journal when stderr is the journal stream)\n"
		"  -V, --version          print the version\n"
		"  -h, --help             this text\n");
}

/* Every worker's counters, summed, to the log (SIGUSR1, exit). */
static void gw_main_stats_log(struct gw_main *m)
{
	struct gw_ctx *gws[CFG_MAX_WORKERS];
	struct gw_stats *sum;

	for (unsigned i = 0; i < m->m_nw; i++)	/* worker 0's are m_stats */
		gws[i] = gw_worker_ctx(m->m_w[i]);
	gw_main_stop(m);
	sum = gw_stats_all(gws, m->m_nw);
	gw_main_go(m);
	gw_stats_log(sum && m->m_nw ? sum : &m->m_stats, &m->m_log);	/* none made: a failed start */
	free(sum);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct gw_main *m = arg;

	(void)what;
	switch (sig) {
	case SIGINT:
	case SIGTERM:
		gw_info(&m->m_log, "signal %d: shutting down", (int)sig);
		sd_notify(0, "STOPPING=1");
		event_base_loopbreak(m->m_base);
		break;
	case SIGHUP: {
		char msg[512];

		sd_notify(0, "RELOADING=1");
		gw_main_reload(m, msg, sizeof(msg));
		gw_main_reload_done(m);
		break;
	}
	case SIGUSR1:
		gw_main_stats_log(m);
		break;
	}
}


static void on_watchdog(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	sd_notify(0, "WATCHDOG=1");
}

static void on_paths_changed(void *arg);

/* Worker 0's listeners hand each client to the worker its address picks. */
static bool gw_main_handoff(void *arg, int fd, const struct sockaddr *sa, socklen_t salen,
			    uint16_t lport, unsigned li)
{
	struct gw_main *m = arg;
	unsigned k = gw_worker_pick(sa, m->m_nw);

	if (k == 0)
		return false;
	if (!gw_worker_take(m->m_w[k], fd, sa, salen, lport, li)) {
		gw_stat_inc(&m->m_stats, GW_CTR_CLIENTS_REFUSED);
		/* rate-limited as one peer: a flood cannot flood the log */
		gw_log_client(&m->m_log, CFG_LOG_WARN, "hand-off", "client refused: worker %u is "
			      "not taking connections (its mailbox is full)", k);
	}
	return true;
}

/* workers = 0 on a host whose RDMA device names a NUMA node: a worker per
 * core of that node, and the daemon's threads kept on its CPUs (set before the
 * pools are allocated and the workers started, which inherit it), so the
 * pools' pages and the loops sit beside the device. */
static unsigned gw_main_auto(struct gw_main *m)
{
	char why[160];
	cpu_set_t node;
	unsigned n = gw_worker_auto("/sys", &node, why, sizeof(why));

	if (!CPU_COUNT(&node)) {
		gw_info(&m->m_log, "workers = 0: %u, one per %s", n, why);
	} else if (sched_setaffinity(0, sizeof(node), &node) < 0) {
		gw_warn(&m->m_log, "workers = 0: %u, one per %s; cannot keep the threads on those "
			"CPUs: %s", n, why, strerror(errno));
	} else {
		gw_info(&m->m_log, "workers = 0: %u, one per %s; the threads stay on that node's CPUs (%d)",
			n, why, CPU_COUNT(&node));
	}
	return n;
}

static int gw_main_workers(struct gw_main *m)
{
	const struct cfg *cf = m->m_cfg;
	unsigned n = cf->cf_workers ? cf->cf_workers : gw_main_auto(m);

	if (n > 1 && !(m->m_nlm_names = gw_nlm_names_new()))
		return -ENOMEM;
	if (!(m->m_backoff = gw_backoff_new()))
		return -ENOMEM;
	/* m_nw counts the workers made: stop, go and teardown see no hole. */
	for (unsigned i = 0; i < n; i++, m->m_nw = i) {
		struct gw_worker_params wp = {
			.wp_index = i, .wp_count = n, .wp_cfg = cf, .wp_log = &m->m_log,
			.wp_stats = i ? NULL : &m->m_stats, .wp_base = i ? NULL : m->m_base,
			.wp_paths_changed = on_paths_changed, .wp_paths_changed_arg = m,
			.wp_main = i ? m->m_w[0] : NULL, .wp_nlm_names = m->m_nlm_names,
			.wp_backoff = m->m_backoff,
			.wp_handoff = i || n == 1 ? NULL : gw_main_handoff, .wp_handoff_arg = m,
		};

		m->m_w[i] = gw_worker_new(&wp);
		if (!m->m_w[i])
			return -ENOMEM;
	}
	m->m_gw = gw_worker_ctx(m->m_w[0]);
	m->m_fe = gw_worker_fe(m->m_w[0]);
	return 0;
}

/* realtime_priority: SCHED_RR for the process's threads, set here before
 * any exists so that workers and helpers inherit it.  Kernel threads woken
 * by the gateway's own system calls then wait until it sleeps instead of
 * preempting it (with Soft-RoCE, ksoftirqd in every Send doorbell); a trade
 * against ordinary processes on the same CPUs (docs/operations.md 3.5). */
static int gw_main_realtime(struct gw_main *m)
{
	unsigned prio = m->m_cfg->cf_rt_priority;
	struct sched_param sp = { .sched_priority = (int)prio };

	if (!prio)
		return 0;
	if (sched_setscheduler(0, SCHED_RR, &sp) < 0) {
		int err = errno;

		gw_err(&m->m_log, "realtime_priority = %u: cannot switch to SCHED_RR: %s (needs "
		       "CAP_SYS_NICE or RLIMIT_RTPRIO >= %u; under systemd a drop-in with "
		       "RestrictRealtime=no and LimitRTPRIO=%u)", prio, strerror(err), prio, prio);
		return -err;
	}
	gw_info(&m->m_log, "realtime_priority = %u: every thread runs SCHED_RR", prio);
	return 0;
}

static int gw_main_setup(struct gw_main *m)
{
	static const int sigs[4] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1 };
	const struct cfg *cf = m->m_cfg;
	int n, err;

	err = gw_main_realtime(m);
	if (err < 0)
		return err;
	m->m_base = event_base_new();
	if (!m->m_base) {
		gw_err(&m->m_log, "cannot create the event loop");
		return -ENOMEM;
	}
	for (int i = 0; i < 4; i++) {
		m->m_sig[i] = evsignal_new(m->m_base, sigs[i], on_signal, m);
		if (!m->m_sig[i] || evsignal_add(m->m_sig[i], NULL) < 0)
			return -ENOMEM;
	}
	err = gw_main_workers(m);
	if (err < 0)
		return err;
	gw_info(&m->m_log, "buffer pool: %u x %u bytes%s%s, %llu MiB in all", cf->cf_buffers,
		cf->cf_buffer_size, gw_pool_hugepages(gw_worker_pool(m->m_w[0])) ? " (huge pages)" : "",
		m->m_nw > 1 ? " per worker" : "",
		(unsigned long long)cf->cf_buffers * cf->cf_buffer_size * m->m_nw >> 20);
	gw_rpcbind_init();	/* before gw_ctx_start() starts lookup threads */
	for (unsigned i = 0; i < m->m_nw; i++) {
		err = gw_worker_start(m->m_w[i]);
		if (err < 0)
			return err;
	}
	if (m->m_nw > 1)
		gw_info(&m->m_log, "%u workers: connections go by their source address", m->m_nw);
	{
		char cap[400];

		gw_worker_capacity(cf, m->m_nw, cap, sizeof(cap));
		gw_info(&m->m_log, "capacity: %s", cap);
	}
	n = sd_listen_fds(1);
	if (n > 0) {
		for (int i = 0; i < n; i++) {
			err = fe_listen_fd(m->m_fe, SD_LISTEN_FDS_START + i);
			if (err < 0) {
				gw_err(&m->m_log, "socket activation fd %d: %s", SD_LISTEN_FDS_START + i,
				       strerror(-err));
				return err;
			}
		}
		gw_info(&m->m_log, "listening on %d socket(s) from systemd", n);
	} else {
		err = fe_listen_cfg(m->m_fe);
		if (err < 0)
			return err;
	}
	gw_main_ops_setup(m);
	gw_main_nsm_setup(m);
	gw_main_rpcb_setup(m);
	gw_main_ready_check(m);
	if (sd_watchdog_enabled(1, &m->m_watchdog_usec) > 0) {
		struct timeval tv = { (time_t)(m->m_watchdog_usec / 2000000),
				      (suseconds_t)((m->m_watchdog_usec / 2) % 1000000) };

		m->m_watchdog = event_new(m->m_base, -1, EV_PERSIST, on_watchdog, m);
		if (m->m_watchdog)
			event_add(m->m_watchdog, &tv);
	}
	return 0;
}

static void gw_main_teardown(struct gw_main *m)
{
	/* Reverse order: rpcbind first (new clients stop finding us),
	 * operations, clients (their calls end), transports, memory. */
	if (m->m_rpcb.rgr_ops)
		gw_rpcb_unregister(&m->m_rpcb, &m->m_log, &m->m_stats);
	gw_ctl_free(m->m_ctl);
	gw_admin_free(m->m_admin);
	gw_nu_free(m->m_nu);	/* it uses worker 0's gateway */
	m->m_nu = NULL;
	m->m_fe = NULL;
	m->m_gw = NULL;
	for (unsigned i = 0; i < m->m_nw; i++)	/* threads end first, then each frees */
		gw_worker_join(m->m_w[i]);
	for (unsigned i = m->m_nw; i-- > 0;)
		gw_worker_free(m->m_w[i]);
	gw_nlm_names_free(m->m_nlm_names);
	gw_backoff_free(m->m_backoff);	/* after the workers: their transports used it */
	if (m->m_watchdog)
		event_free(m->m_watchdog);
	for (int i = 0; i < 4; i++)
		if (m->m_sig[i])
			event_free(m->m_sig[i]);
	if (m->m_base)
		event_base_free(m->m_base);
	cfg_free(m->m_cfg);
}

/* --check-config [--dump] FILE: what a start would refuse, refused here
 * too (parse, tls_* files, the admin token), plus warnings. */
static int gw_main_check(const char *check, bool dump)
{
	char err[512];
	struct cfg *cf = cfg_load(check, NULL, err, sizeof(err));
	char tok[GW_ADMIN_TOKEN_MAX + 1];
	int rc;

	if (!cf) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	rc = fe_tls_check_cfg(cf, err, sizeof(err));	/* the files tls_* name */
	if (rc < 0) {
		fprintf(stderr, "%s\n", err);
		cfg_free(cf);
		return 1;
	}
	if (rc > 0)
		fprintf(stderr, "warning: %s\n", err);
	if (gw_main_admin_token(cf, tok, sizeof(tok), true) < 0) {
		cfg_free(cf);
		return 1;
	}
	explicit_bzero(tok, sizeof(tok));
	if (dump)
		cfg_dump(cf, stdout);
	else
		printf("configuration OK\n");
	for (unsigned i = 0; i < cf->cf_nbackends; i++)
		if (cf->cf_backends[i].cb_regmode == CFG_REG_PERSISTENT)
			fprintf(stderr, "warning: backend %s: registration = persistent: the server "
				"can read and write every buffer of every client until shutdown\n",
				cf->cf_backends[i].cb_name);
	cfg_free(cf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", optional_argument, NULL, 'C' },	/* FILE may follow --dump */
		{ "dump", no_argument, NULL, 'D' },
		{ "listen", required_argument, NULL, 'l' },
		{ "backend", required_argument, NULL, 'b' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'L' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gw_main m;
	struct cfg_overrides ov = { 0 };
	const char *path = NULL, *check = NULL;
	int log_target = -1;	/* auto */
	char err[512];
	int opt, rc;
	bool checking = false, dump = false;

	memset(&m, 0, sizeof(m));
	while ((opt = getopt_long(argc, argv, "c:vVhf", opts, NULL)) != -1) {
		switch (opt) {
		case 'c': path = optarg; break;
		case 'C': checking = true; check = optarg; break;
		case 'D': dump = true; break;
		case 'l':
			if (ov.co_nlisten == CFG_MAX_LISTEN) {
				fprintf(stderr, "rpcrdma-gw: at most %d --listen\n", CFG_MAX_LISTEN);
				return 2;
			}
			ov.co_listen[ov.co_nlisten++] = optarg;
			break;
		case 'b': ov.co_backend = optarg; break;
		case 'v': ov.co_verbose++; break;
		case 'f': break;
		case 'L':
			if (!strcmp(optarg, "journal"))
				log_target = GW_LOG_JOURNAL;
			else if (!strcmp(optarg, "stderr"))
				log_target = GW_LOG_STDERR;
			else if (strcmp(optarg, "auto")) {
				fprintf(stderr, "rpcrdma-gw: --log journal, stderr or auto\n");
				return 2;
			}
			break;
		case 'V': printf("rpcrdma-gw %s\n", GW_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (checking && !check && optind < argc)
		check = argv[optind++];
	if ((checking && !check) || (dump && !checking)) {
		fprintf(stderr, "rpcrdma-gw: --check-config [--dump] FILE\n");
		return 2;
	}
	if (optind < argc) {
		fprintf(stderr, "rpcrdma-gw: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (check)
		return gw_main_check(check, dump);
	if (!path && !ov.co_backend && access(CFG_DEFAULT_PATH, R_OK) == 0)
		path = CFG_DEFAULT_PATH;
	m.m_path = path;
	m.m_ov = ov;
	m.m_cfg = cfg_load(path, &ov, err, sizeof(err));
	if (!m.m_cfg) {
		fprintf(stderr, "rpcrdma-gw: %s\n", err);
		return 1;
	}
	if (gw_main_admin_token(m.m_cfg, m.m_token, sizeof(m.m_token), false) < 0) {
		cfg_free(m.m_cfg);
		return 1;
	}
	m.m_log.gl_level = m.m_cfg->cf_log_level;
	m.m_log.gl_format = m.m_cfg->cf_log_format;
	m.m_log.gl_target = log_target >= 0 ? (enum gw_log_target)log_target : gw_log_target_auto();
	m.m_log.gl_rl = gw_log_rl_new(&m.m_stats);	/* NULL: no rate limit, still runs */
	signal(SIGPIPE, SIG_IGN);
	gw_info(&m.m_log, "rpcrdma-gw %s starting (%s)", GW_VERSION, path ? path : "no config file");
	rc = gw_main_setup(&m);
	if (rc == 0)
		gw_loop_run(m.m_base, &m.m_stats, gw_worker_prewait, m.m_w[0]);
	if (m.m_rpcb.rgr_ops)	/* before the counters are logged (teardown again: no-op) */
		gw_rpcb_unregister(&m.m_rpcb, &m.m_log, &m.m_stats);
	gw_main_stats_log(&m);
	gw_main_teardown(&m);
	gw_log_rl_free(m.m_log.gl_rl);
	return rc == 0 ? 0 : 1;
}
