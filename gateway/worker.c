// SPDX-License-Identifier: MIT
/*
 * This file contains the workers (worker.h): what one event loop owns,
 * its thread, and its mailbox.  The mailbox is a pipe of fixed-size
 * messages (each below PIPE_BUF, so every write is whole); the stop is a
 * mutex and condition variable the worker waits on inside its mailbox
 * callback, between two turns of its loop, so nothing it owns is in use
 * while the main thread reads or changes it.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "frontend.h"
#include "gateway.h"
#include "nlm_map.h"
#include "pool.h"
#include "transport.h"
#include "worker.h"

enum gw_wk_kind { GW_WK_TAKE = 1, GW_WK_STOP, GW_WK_EXIT, GW_WK_PATHS, GW_WK_NSM };

struct gw_wk_msg {
	enum gw_wk_kind gwm_kind;
	int gwm_fd;
	uint16_t gwm_lport;
	unsigned gwm_li;
	socklen_t gwm_salen;
	struct sockaddr_storage gwm_sa;
};
_Static_assert(sizeof(struct gw_wk_msg) <= PIPE_BUF, "mailbox writes must be whole");

struct gw_worker {
	struct gw_worker_params gwk_p;
	struct event_base *gwk_base;
	bool gwk_own;			/* a loop and thread of its own */
	struct gw_log gwk_log;		/* its own (worker 0: a copy of the main thread's) */
	struct gw_stats gwk_stats;
	struct gw_log *gwk_lg;		/* the one it uses */
	struct gw_stats *gwk_st;
	struct gw_pool *gwk_pool;
	struct gw_rdma *gwk_rdma;
	struct gw_ctx *gwk_gw;
	struct fe_frontend *gwk_fe;
	int gwk_mbox[2];
	struct event *gwk_mbox_ev;
	pthread_t gwk_thread;
	bool gwk_running;		/* gwk_thread exists */
	pthread_mutex_t gwk_mu;
	pthread_cond_t gwk_cv;
	bool gwk_hold;			/* main: wait */
	bool gwk_waiting;		/* worker: waiting */
	bool gwk_paths_posted;		/* a PATHS message not yet read (main's mailbox) */
};

static void gw_worker_sample(struct gw_worker *w)
{
	gw_cpu_thread_us(&w->gwk_st->gs_cpu_user_us, &w->gwk_st->gs_cpu_sys_us);
}

/* Writes one message; waits for room only when told to (a stop must
 * arrive; a hand-off or notice may fail instead). */
static bool gw_worker_post(struct gw_worker *w, const struct gw_wk_msg *m, bool wait)
{
	for (;;) {
		ssize_t n = write(w->gwk_mbox[1], m, sizeof(*m));
		struct pollfd pf = { .fd = w->gwk_mbox[1], .events = POLLOUT };

		if (n == (ssize_t)sizeof(*m))
			return true;
		if (n >= 0 || (errno != EAGAIN && errno != EINTR) || !wait)
			return false;
		poll(&pf, 1, 100);
	}
}

/* Stopped, the worker runs no pass: what the main thread does meanwhile
 * reads the clock itself, and the rest of this pass reads it afresh. */
static void gw_worker_wait(struct gw_worker *w)
{
	bool in_pass = w->gwk_st->gs_pass_on;

	gw_worker_sample(w);
	gw_pass_set(w->gwk_st, false);
	pthread_mutex_lock(&w->gwk_mu);
	w->gwk_waiting = true;
	pthread_cond_broadcast(&w->gwk_cv);
	while (w->gwk_hold)
		pthread_cond_wait(&w->gwk_cv, &w->gwk_mu);
	w->gwk_waiting = false;
	pthread_mutex_unlock(&w->gwk_mu);
	gw_pass_set(w->gwk_st, in_pass);
}

static void gw_worker_nsm_run(struct gw_worker *w, const struct gw_wk_msg *m)
{
	char host[INET6_ADDRSTRLEN];
	const void *a = m->gwm_sa.ss_family == AF_INET6 ?
		(const void *)&((const struct sockaddr_in6 *)&m->gwm_sa)->sin6_addr :
		(const void *)&((const struct sockaddr_in *)&m->gwm_sa)->sin_addr;

	if (inet_ntop(m->gwm_sa.ss_family, a, host, sizeof(host)))
		gw_nlm_host_rebooted(w->gwk_gw, host);
}

static void gw_worker_on_mbox(evutil_socket_t fd, short what, void *arg)
{
	struct gw_worker *w = arg;
	struct gw_wk_msg m;

	(void)what;
	for (unsigned i = 0; i < 64 && read(fd, &m, sizeof(m)) == (ssize_t)sizeof(m); i++) {
		switch (m.gwm_kind) {
		case GW_WK_TAKE:
			fe_take(w->gwk_fe, m.gwm_fd, (const struct sockaddr *)&m.gwm_sa, m.gwm_salen,
				m.gwm_lport, m.gwm_li);
			break;
		case GW_WK_STOP:
			gw_worker_wait(w);
			break;
		case GW_WK_EXIT:
			event_base_loopbreak(w->gwk_base);
			break;
		case GW_WK_NSM:		/* a client host's SM_NOTIFY over UDP (nsm_udp.c) */
			gw_worker_nsm_run(w, &m);
			break;
		case GW_WK_PATHS:	/* worker 0: another worker's paths changed */
			__atomic_store_n(&w->gwk_paths_posted, false, __ATOMIC_RELAXED);
			if (w->gwk_p.wp_paths_changed)
				w->gwk_p.wp_paths_changed(w->gwk_p.wp_paths_changed_arg);
			break;
		}
	}
}

/* gp_paths_changed of a worker of its own: the main thread hears of it
 * (one notice at a time; it re-reads every worker's paths). */
static void gw_worker_paths_changed(void *arg)
{
	struct gw_worker *w = arg, *w0 = w->gwk_p.wp_main;
	struct gw_wk_msg m = { .gwm_kind = GW_WK_PATHS, .gwm_fd = -1 };

	if (!w0 || __atomic_exchange_n(&w0->gwk_paths_posted, true, __ATOMIC_RELAXED))
		return;
	if (!gw_worker_post(w0, &m, false))
		__atomic_store_n(&w0->gwk_paths_posted, false, __ATOMIC_RELAXED);
}

static int gw_worker_mbox(struct gw_worker *w)
{
	if (pipe2(w->gwk_mbox, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	w->gwk_mbox_ev = event_new(w->gwk_base, w->gwk_mbox[0], EV_READ | EV_PERSIST,
				   gw_worker_on_mbox, w);
	if (!w->gwk_mbox_ev || event_add(w->gwk_mbox_ev, NULL) < 0)
		return -ENOMEM;
	return 0;
}

int gw_worker_need_rdma(struct gw_worker *w)
{
	if (w->gwk_rdma)
		return 0;
	w->gwk_rdma = gw_rdma_new(w->gwk_base, w->gwk_pool, w->gwk_lg, w->gwk_st);
	if (!w->gwk_rdma)
		return -ENOMEM;
	if (w->gwk_gw)
		gw_ctx_set_rdma(w->gwk_gw, &gw_transport_rdma, w->gwk_rdma);
	return 0;
}

/* A pass begins: its precise reading is the last pass's until one is
 * taken (nothing waited in between: the prewait's replies end at the time
 * the calls before them were handled, as within a pass); the coarse one
 * is taken afresh. */
static void gw_pass_begin(struct gw_stats *st)
{
	if (!st)
		return;
	st->gs_pass_on = true;
	st->gs_pass_ms = 0;
	st->gs_pass_us_old = true;
}

/* The prewait is done and the pass's callbacks come next.  Before a wait
 * every reading is forgotten: one taken before epoll_wait blocked would be
 * the start of the call that ends the wait, its client's idle time counted
 * as latency.  A pass that does not wait keeps what its prewait read, not
 * the last pass's (else a busy loop would keep one reading for ever). */
static void gw_pass_callbacks(struct gw_stats *st, bool waits)
{
	if (!st)
		return;
	if (waits)
		st->gs_pass_ms = 0;
	if (waits || st->gs_pass_us_old)
		st->gs_pass_us = 0;
}

int gw_loop_run(struct event_base *base, struct gw_stats *st, gw_loop_prewait_fn *prewait,
		void *arg)
{
	/* libevent 2.1 has no hook per loop pass: EVLOOP_ONCE returns after
	 * each pass that ran callbacks (epoll_wait once, or more when one
	 * woke for nothing), so the count is a lower bound of epoll_wait.
	 * Once a callback ran, a pass blocks no more: its one clock reading
	 * (gw_pass_us) is never older than the pass. */
	int rc;

	gw_pass_set(st, false);		/* nothing of an earlier run */
	for (;;) {
		int flags = EVLOOP_ONCE;

		gw_pass_begin(st);
		/* Completions handled here: the pass does not block, so its
		 * readings stay fresh; none handled: none taken. */
		if (prewait && prewait(arg))
			flags |= EVLOOP_NONBLOCK;
		gw_pass_callbacks(st, !(flags & EVLOOP_NONBLOCK));
		rc = event_base_loop(base, flags);
		if (st)
			st->gs_pass_on = false;	/* its readings serve the next prewait */
		if (rc != 0) {
			rc = rc < 0 ? -1 : 0;	/* 1: no event left */
			break;
		}
		gw_stat_inc(st, GW_CTR_SYS_LOOP_WAIT);
		if (event_base_got_break(base) || event_base_got_exit(base))
			break;
	}
	gw_pass_set(st, false);
	return rc;
}

bool gw_worker_prewait(void *arg)
{
	struct gw_worker *w = arg;
	bool busy;

	if (!w)
		return false;
	/* Replies first: each written ends its call, and the releases may let
	 * queued calls go, which the RDMA prewait then posts. */
	fe_flush(w->gwk_fe);
	busy = gw_rdma_prewait(w->gwk_rdma);	/* NULL until an rdma route */
	/* Replies its polls found go now too, before the pass reads clients
	 * (answered clients send their next calls sooner, and a read then
	 * finds more of them); calls those writes let go are posted at the
	 * next pass's start, which must then not wait. */
	if (fe_flush_due(w->gwk_fe)) {
		fe_flush(w->gwk_fe);
		busy = true;
	}
	return busy;
}

static int gw_worker_build(struct gw_worker *w)
{
	const struct cfg *cf = w->gwk_p.wp_cfg;
	const struct gw_worker_params *p = &w->gwk_p;
	struct gw_ctx_params gp;
	struct fe_params fp;

	w->gwk_pool = gw_pool_new(cf->cf_buffer_size, cf->cf_buffers, cf->cf_hugepages);
	if (!w->gwk_pool) {
		gw_err(w->gwk_lg, "worker %u: cannot allocate the buffer pool (%u x %u bytes)",
		       p->wp_index, cf->cf_buffers, cf->cf_buffer_size);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < cf->cf_nroutes; i++)
		if (cf->cf_routes[i].cr_transport == CFG_TRANSPORT_RDMA && gw_worker_need_rdma(w) < 0)
			return -ENOMEM;
	gp = (struct gw_ctx_params){
		.gp_base = w->gwk_base, .gp_cfg = cf, .gp_log = w->gwk_lg,
		.gp_stats = w->gwk_st, .gp_pool = w->gwk_pool, .gp_ncalls = cf->cf_max_calls,
		.gp_rdma_ops = w->gwk_rdma ? &gw_transport_rdma : NULL, .gp_rdma_arg = w->gwk_rdma,
		.gp_paths_changed = w->gwk_own ? gw_worker_paths_changed : p->wp_paths_changed,
		.gp_paths_changed_arg = w->gwk_own ? (void *)w : p->wp_paths_changed_arg,
		.gp_worker = p->wp_index, .gp_nworkers = p->wp_count,
		.gp_nlm_names = p->wp_nlm_names, .gp_backoff = p->wp_backoff,
	};
	w->gwk_gw = gw_ctx_new(&gp);
	if (!w->gwk_gw)
		return -ENOMEM;
	fp = (struct fe_params){
		.fp_base = w->gwk_base, .fp_cfg = cf, .fp_gw = w->gwk_gw, .fp_pool = w->gwk_pool,
		.fp_log = w->gwk_lg, .fp_stats = w->gwk_st,
		.fp_id_first = p->wp_index + 1, .fp_id_step = p->wp_count ? p->wp_count : 1,
		.fp_handoff = p->wp_handoff, .fp_handoff_arg = p->wp_handoff_arg,
	};
	w->gwk_fe = fe_new(&fp);
	return w->gwk_fe ? gw_worker_mbox(w) : -ENOMEM;
}

struct gw_worker *gw_worker_new(const struct gw_worker_params *p)
{
	struct gw_worker *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->gwk_p = *p;
	w->gwk_mbox[0] = w->gwk_mbox[1] = -1;
	w->gwk_lg = p->wp_log;
	w->gwk_st = p->wp_stats;
	if (!p->wp_stats) {	/* its own, with its own rate limit */
		w->gwk_log = *p->wp_log;
		w->gwk_log.gl_rl = gw_log_rl_new(&w->gwk_stats);
		w->gwk_lg = &w->gwk_log;
		w->gwk_st = &w->gwk_stats;
	} else if (p->wp_count > 1) {	/* worker 0: the main log, its lines named */
		w->gwk_log = *p->wp_log;
		w->gwk_lg = &w->gwk_log;
	}
	if (p->wp_count > 1)
		w->gwk_log.gl_worker = p->wp_index + 1;
	pthread_mutex_init(&w->gwk_mu, NULL);
	pthread_cond_init(&w->gwk_cv, NULL);
	w->gwk_own = !p->wp_base;
	w->gwk_base = p->wp_base ? p->wp_base : event_base_new();
	if (!w->gwk_base || gw_worker_build(w) < 0) {
		gw_err(w->gwk_lg, "worker %u: cannot be set up", p->wp_index);
		gw_worker_free(w);
		return NULL;
	}
	return w;
}

/* Worker i's thread is "rpcrdma-gw/wI" in top -H, ps -L and perf (worker
 * 0 is the main thread, "rpcrdma-gw"; lookup threads "rpcrdma-gw/lkup"). */
static void gw_worker_name(pthread_t t, unsigned i)
{
	char name[16];	/* the kernel's limit, NUL included */

	snprintf(name, sizeof(name), "rpcrdma-gw/w%u", i);
	(void)pthread_setname_np(t, name);	/* a name only: nothing depends on it */
}

static void *gw_worker_thread(void *arg)
{
	struct gw_worker *w = arg;
	sigset_t all;

	/* Signals are the main thread's (its loop handles them). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	gw_loop_run(w->gwk_base, w->gwk_st, gw_worker_prewait, w);
	return NULL;
}

int gw_worker_start(struct gw_worker *w)
{
	int err = gw_ctx_start(w->gwk_gw);

	if (err < 0 || !w->gwk_own)
		return err;
	err = pthread_create(&w->gwk_thread, NULL, gw_worker_thread, w);
	if (err)
		return -err;
	w->gwk_running = true;
	gw_worker_name(w->gwk_thread, w->gwk_p.wp_index);
	return 0;
}

void gw_worker_join(struct gw_worker *w)
{
	struct gw_wk_msg m = { .gwm_kind = GW_WK_EXIT, .gwm_fd = -1 };

	if (!w || !w->gwk_running)
		return;
	gw_worker_post(w, &m, true);
	pthread_join(w->gwk_thread, NULL);
	w->gwk_running = false;
}

void gw_worker_free(struct gw_worker *w)
{
	struct gw_wk_msg m;

	if (!w)
		return;
	gw_worker_join(w);
	/* Sockets handed off and never taken. */
	while (w->gwk_mbox[0] >= 0 && read(w->gwk_mbox[0], &m, sizeof(m)) == (ssize_t)sizeof(m))
		if (m.gwm_kind == GW_WK_TAKE)
			close(m.gwm_fd);
	fe_free(w->gwk_fe);
	gw_ctx_free(w->gwk_gw);
	gw_rdma_free(w->gwk_rdma);	/* after the paths, before the pool */
	gw_pool_free(w->gwk_pool);
	if (w->gwk_mbox_ev)
		event_free(w->gwk_mbox_ev);
	for (int i = 0; i < 2; i++)
		if (w->gwk_mbox[i] >= 0)
			close(w->gwk_mbox[i]);
	if (w->gwk_own && w->gwk_base)
		event_base_free(w->gwk_base);
	if (!w->gwk_p.wp_stats)		/* its own rate limit, not the main one */
		gw_log_rl_free(w->gwk_log.gl_rl);
	pthread_cond_destroy(&w->gwk_cv);
	pthread_mutex_destroy(&w->gwk_mu);
	free(w);
}

struct gw_ctx *gw_worker_ctx(struct gw_worker *w) { return w->gwk_gw; }
struct fe_frontend *gw_worker_fe(struct gw_worker *w) { return w->gwk_fe; }
struct gw_stats *gw_worker_stats(struct gw_worker *w) { return w->gwk_st; }
struct gw_log *gw_worker_log(struct gw_worker *w) { return w->gwk_lg; }
struct gw_pool *gw_worker_pool(struct gw_worker *w) { return w->gwk_pool; }

void gw_worker_capacity(const struct cfg *cf, unsigned n, char *buf, size_t len)
{
	unsigned long long mib = (unsigned long long)cf->cf_buffers * cf->cf_buffer_size >> 20;

	if (n < 2) {
		snprintf(buf, len, "buffers %u (%llu MiB pinned), max_calls %u, max_clients %u", cf->cf_buffers,
			 mib, cf->cf_max_calls, cf->cf_max_clients);
		return;
	}
	/* A client host's connections all go to one worker (gw_worker_pick):
	 * one host meets that worker's max_clients, not the total. */
	snprintf(buf, len, "%u workers x (buffers %u, max_calls %u, max_clients %u) = gateway-wide "
		 "buffers %llu (%llu MiB pinned), max_calls %llu, max_clients %llu; one client host "
		 "at most %u connections (its worker's)", n, cf->cf_buffers, cf->cf_max_calls,
		 cf->cf_max_clients, (unsigned long long)cf->cf_buffers * n, mib * n,
		 (unsigned long long)cf->cf_max_calls * n, (unsigned long long)cf->cf_max_clients * n,
		 cf->cf_max_clients);
}

unsigned gw_worker_cpulist(const char *list, const cpu_set_t *allowed, cpu_set_t *out)
{
	unsigned n = 0;
	char *end;

	if (out)
		CPU_ZERO(out);
	while (*list >= '0' && *list <= '9') {
		unsigned long a = strtoul(list, &end, 10), b = a;

		if (*end == '-')
			b = strtoul(end + 1, &end, 10);
		for (unsigned long c = a; c <= b && c < CPU_SETSIZE; c++) {
			if (!CPU_ISSET(c, allowed))
				continue;
			n++;
			if (out)
				CPU_SET(c, out);
		}
		list = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* Whether CPU c is the first CPU of cpus among its core's hardware threads
 * (topology/thread_siblings_list), so that each core counts once; without
 * that file a CPU is a core of its own. */
static bool gw_worker_core_first(const char *sysfs, int c, const cpu_set_t *cpus)
{
	char path[256], buf[1024];
	cpu_set_t sib;
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/topology/thread_siblings_list",
		 sysfs, c);
	if (!(f = fopen(path, "r")))
		return true;
	ok = fgets(buf, sizeof(buf), f) && gw_worker_cpulist(buf, cpus, &sib);
	fclose(f);
	for (int i = 0; ok && i < c; i++)
		if (CPU_ISSET(i, &sib))
			return false;
	return true;
}

/* The cores of cpus: its CPUs, each core's hardware threads counted once. */
static unsigned gw_worker_cores(const char *sysfs, const cpu_set_t *cpus)
{
	unsigned n = 0;

	for (int c = 0; c < CPU_SETSIZE; c++)
		n += CPU_ISSET(c, cpus) && gw_worker_core_first(sysfs, c, cpus);
	return n;
}

/* The NUMA node of sysfs device dir dev: its numa_node, else the nearest
 * parent's (a virtio NIC's node is its PCI function's); -1 when none says. */
static int gw_worker_dev_node(const char *sysfs, const char *dev)
{
	char top[PATH_MAX], p[PATH_MAX], f[PATH_MAX + 16];
	size_t floor;
	int node = -1;

	if (!realpath(sysfs, top) || !realpath(dev, p))
		return -1;
	floor = strlen(top) + strlen("/devices");
	while (strlen(p) > floor && strncmp(p, top, strlen(top)) == 0) {
		FILE *fp;

		snprintf(f, sizeof(f), "%s/numa_node", p);
		if ((fp = fopen(f, "r"))) {
			if (fscanf(fp, "%d", &node) != 1)
				node = -1;
			fclose(fp);
			return node;
		}
		*strrchr(p, '/') = '\0';
	}
	return -1;
}

/* RDMA device ibdev's NUMA node: its device's, or for a software device
 * with none of its own (Soft-RoCE, siw) that of the netdev it names in
 * its `parent` attribute. */
static int gw_worker_rdma_node(const char *sysfs, const char *ibdev)
{
	char path[512], name[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/device", sysfs, ibdev);
	if (access(path, F_OK) == 0)
		return gw_worker_dev_node(sysfs, path);
	snprintf(path, sizeof(path), "%s/class/infiniband/%s/parent", sysfs, ibdev);
	if (!(f = fopen(path, "r")))
		return -1;
	if (!fgets(name, sizeof(name), f))
		name[0] = '\0';
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
	if (!name[0] || strchr(name, '/') || name[0] == '.')
		return -1;
	snprintf(path, sizeof(path), "%s/class/net/%s/device", sysfs, name);
	return gw_worker_dev_node(sysfs, path);
}

unsigned gw_worker_auto(const char *sysfs, cpu_set_t *node_cpus, char *why, size_t len)
{
	cpu_set_t allowed, on_node;
	unsigned n = 0;
	DIR *d;
	struct dirent *de;
	char path[512], buf[1024];

	snprintf(path, sizeof(path), "%s/class/infiniband", sysfs);
	d = opendir(path);
	CPU_ZERO(&on_node);
	CPU_ZERO(&allowed);
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			CPU_SET(c, &allowed);
	while (d && !n && (de = readdir(d))) {
		FILE *f;
		int node = de->d_name[0] == '.' ? -1 : gw_worker_rdma_node(sysfs, de->d_name);

		snprintf(path, sizeof(path), "%s/devices/system/node/node%d/cpulist", sysfs, node);
		if (node < 0 || !(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof(buf), f) && gw_worker_cpulist(buf, &allowed, &on_node) &&
		    (n = gw_worker_cores(sysfs, &on_node)) && why)
			snprintf(why, len, "core of NUMA node %d of RDMA device %s", node, de->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
	if (node_cpus)
		*node_cpus = on_node;	/* empty unless a node was found */
	if (!n) {
		n = gw_worker_cores(sysfs, &allowed);
		if (why)
			snprintf(why, len, "core it may run on (no RDMA device names a NUMA node)");
	}
	return n < 1 ? 1 : n > CFG_MAX_WORKERS ? CFG_MAX_WORKERS : n;
}

unsigned gw_worker_pick(const struct sockaddr *sa, unsigned n)
{
	const uint8_t *p = NULL;
	size_t len = 0;
	uint32_t h = 2166136261u;

	if (n <= 1)
		return 0;
	if (sa->sa_family == AF_INET) {
		p = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
		len = 4;
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		/* A v4-mapped address hashes as the IPv4 one it is. */
		p = IN6_IS_ADDR_V4MAPPED(a) ? &a->s6_addr[12] : a->s6_addr;
		len = IN6_IS_ADDR_V4MAPPED(a) ? 4 : 16;
	}
	for (size_t i = 0; i < len; i++)	/* FNV-1a */
		h = (h ^ p[i]) * 16777619u;
	return h % n;
}

bool gw_worker_take(struct gw_worker *w, int fd, const struct sockaddr *sa, socklen_t salen,
		    uint16_t lport, unsigned li)
{
	struct gw_wk_msg m = { .gwm_kind = GW_WK_TAKE, .gwm_fd = fd, .gwm_lport = lport,
			       .gwm_li = li };

	m.gwm_salen = salen < sizeof(m.gwm_sa) ? salen : (socklen_t)sizeof(m.gwm_sa);
	memcpy(&m.gwm_sa, sa, m.gwm_salen);
	if (gw_worker_post(w, &m, false))
		return true;
	close(fd);
	return false;
}

int gw_worker_nsm(struct gw_worker *const *w, unsigned n, const struct sockaddr *sa,
		  socklen_t salen)
{
	struct gw_wk_msg m = { .gwm_kind = GW_WK_NSM, .gwm_fd = -1 };
	unsigned k = gw_worker_pick(sa, n);

	if (k == 0)
		return 0;
	m.gwm_salen = salen < sizeof(m.gwm_sa) ? salen : (socklen_t)sizeof(m.gwm_sa);
	memcpy(&m.gwm_sa, sa, m.gwm_salen);
	return gw_worker_post(w[k], &m, false) ? 1 : -EAGAIN;
}

void gw_worker_stop(struct gw_worker *w)
{
	struct gw_wk_msg m = { .gwm_kind = GW_WK_STOP, .gwm_fd = -1 };

	if (!w->gwk_running) {
		gw_worker_sample(w);	/* the caller's own loop */
		return;
	}
	pthread_mutex_lock(&w->gwk_mu);
	w->gwk_hold = true;
	pthread_mutex_unlock(&w->gwk_mu);
	gw_worker_post(w, &m, true);
	pthread_mutex_lock(&w->gwk_mu);
	while (!w->gwk_waiting)
		pthread_cond_wait(&w->gwk_cv, &w->gwk_mu);
	pthread_mutex_unlock(&w->gwk_mu);
}

void gw_worker_go(struct gw_worker *w)
{
	if (!w->gwk_running)
		return;
	pthread_mutex_lock(&w->gwk_mu);
	w->gwk_hold = false;
	pthread_cond_broadcast(&w->gwk_cv);
	pthread_mutex_unlock(&w->gwk_mu);
}
