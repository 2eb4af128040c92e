// SPDX-License-Identifier: MIT
/*
 * This file contains the tests of the workers (gateway/worker.c,
 * `workers = N`): which worker a client address picks, each worker's own
 * slice of gateway XIDs, counters summed over workers, and two live
 * workers (one on this thread, one on its own) where every client, handed
 * off by worker 0's listener, is served by the worker its address picks,
 * while the operations' stop reads both; a client's SM_NOTIFY datagram
 * on worker 0's UDP NSM socket releases the lock tracked on its worker.
 * What the operator reads of two workers: `status` and `backends` show
 * each path once (`status workers`, `backends workers` each worker's),
 * `clients` one table over both with each client's worker, `clients
 * top=N` the gateway's N, `status` the capacity over both workers; every
 * log line of a worker names it (t06).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "client.h"
#include "ctx.h"
#include "nlm_map.h"
#include "nsm_udp.h"
#include "test_gw_harness.h"
#include "worker.h"
#include "xmap.h"

#include <dirent.h>
#include <json.h>

static void t01_pick(void **state)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct sockaddr_in6 m = { .sin6_family = AF_INET6 };
	unsigned seen[2] = { 0 };

	(void)state;
	for (unsigned i = 0; i < 256; i++) {
		unsigned k;

		a.sin_addr.s_addr = htonl(0x0a000000u | i);
		a.sin_port = htons(700);
		k = gw_worker_pick((struct sockaddr *)&a, 2);
		assert_true(k < 2);
		seen[k]++;
		a.sin_port = htons(40000 + i);	/* the port does not matter */
		assert_int_equal(gw_worker_pick((struct sockaddr *)&a, 2), k);
		/* nor does the v4-mapped form of the same address */
		memset(&m.sin6_addr, 0, sizeof(m.sin6_addr));
		m.sin6_addr.s6_addr[10] = m.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&m.sin6_addr.s6_addr[12], &a.sin_addr, 4);
		assert_int_equal(gw_worker_pick((struct sockaddr *)&m, 2), k);
		assert_int_equal(gw_worker_pick((struct sockaddr *)&a, 1), 0);
	}
	assert_true(seen[0] > 64 && seen[1] > 64);	/* both get a fair share */
}

static void t01b_auto(void **state)
{
	cpu_set_t all, some, got;
	char why[160] = "";
	unsigned n;

	(void)state;
	CPU_ZERO(&all);
	CPU_ZERO(&some);
	for (int c = 0; c < 64; c++)
		CPU_SET(c, &all);
	CPU_SET(1, &some);
	CPU_SET(9, &some);
	assert_int_equal(gw_worker_cpulist("0-3,8-11\n", &all, NULL), 8);
	assert_int_equal(gw_worker_cpulist("5", &all, NULL), 1);
	assert_int_equal(gw_worker_cpulist("0-3,8-11", &some, &got), 2);	/* only those it may use */
	assert_int_equal(CPU_COUNT(&got), 2);
	assert_true(CPU_ISSET(1, &got) && CPU_ISSET(9, &got));
	assert_int_equal(gw_worker_cpulist("", &all, &got), 0);
	assert_int_equal(CPU_COUNT(&got), 0);
	assert_int_equal(gw_worker_cpulist("0-3,x", &all, NULL), 4);	/* stops at what is no list */
	n = gw_worker_auto("/sys", NULL, why, sizeof(why));
	assert_true(n >= 1 && n <= CFG_MAX_WORKERS);
	assert_true(why[0]);
	/* No more than the CPUs this process may run on. */
	assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
	assert_true(n <= (unsigned)CPU_COUNT(&all));
}

/* t01c: a sysfs file under root */
static void t01c_put(const char *root, const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* t01c, t01d: a sysfs tree of their own under root (made), and the first
 * two CPUs this process may run on (second -1 when only one). */
static void t01c_start(char *root, cpu_set_t *allowed, int *first, int *second)
{
	*first = *second = -1;
	assert_non_null(mkdtemp(root));
	assert_int_equal(sched_getaffinity(0, sizeof(*allowed), allowed), 0);
	for (int c = 0; c < CPU_SETSIZE && *second < 0; c++)
		if (CPU_ISSET(c, allowed))
			*(*first < 0 ? first : second) = c;
	assert_true(*first >= 0);
}

/* 1c. workers = 0 on a host whose RDMA device names a NUMA node (a sysfs
 * tree of its own): one worker per core of that node the process may run
 * on (two hardware threads of one core count once), and those CPUs, for
 * the daemon's threads to stay on; a device of no node, or a node with
 * none of those CPUs, is passed over. */
static void t01c_auto_node(void **state)
{
	char root[] = "/tmp/t01c.XXXXXX", why[160] = "", list[64], cmd[64], rel[96];
	cpu_set_t allowed, node;
	int first, second;
	unsigned n;

	(void)state;
	t01c_start(root, &allowed, &first, &second);

	/* no RDMA device: every CPU it may run on, no node */
	n = gw_worker_auto(root, &node, why, sizeof(why));
	assert_int_equal(n, CPU_COUNT(&allowed) > CFG_MAX_WORKERS ? CFG_MAX_WORKERS
							      : (unsigned)CPU_COUNT(&allowed));
	assert_int_equal(CPU_COUNT(&node), 0);
	assert_non_null(strstr(why, "no RDMA device"));

	/* devices of no node (-1), of a node without a cpulist, of one whose
	 * CPUs it may not use: still no node */
	t01c_put(root, "class/infiniband/a0/device/numa_node", "-1\n");
	t01c_put(root, "class/infiniband/a1/device/numa_node", "3\n");
	t01c_put(root, "class/infiniband/a2/device/numa_node", "2\n");
	t01c_put(root, "devices/system/node/node2/cpulist", "8191\n");
	n = gw_worker_auto(root, &node, why, sizeof(why));
	assert_int_equal(CPU_COUNT(&node), 0);
	assert_non_null(strstr(why, "no RDMA device"));

	/* a device on node 1, whose CPUs are the first one it may use */
	snprintf(list, sizeof(list), "%d\n", first);
	t01c_put(root, "class/infiniband/mlx0/device/numa_node", "1\n");
	t01c_put(root, "devices/system/node/node1/cpulist", list);
	n = gw_worker_auto(root, &node, why, sizeof(why));
	assert_int_equal(n, 1);
	assert_int_equal(CPU_COUNT(&node), 1);
	assert_true(CPU_ISSET(first, &node));
	assert_non_null(strstr(why, "NUMA node 1 of RDMA device mlx0"));
	n = gw_worker_auto(root, NULL, NULL, 0);	/* both optional */
	assert_int_equal(n, 1);

	/* node 1 of two CPUs: two cores, then one core's two hardware threads */
	if (second >= 0) {
		snprintf(list, sizeof(list), "%d,%d\n", first, second);
		t01c_put(root, "devices/system/node/node1/cpulist", list);
		n = gw_worker_auto(root, &node, why, sizeof(why));
		assert_int_equal(n, 2);
		assert_int_equal(CPU_COUNT(&node), 2);
		for (int k = 0; k < 2; k++) {
			snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/thread_siblings_list",
				 k ? second : first);
			t01c_put(root, rel, list);
		}
		n = gw_worker_auto(root, &node, why, sizeof(why));
		assert_int_equal(n, 1);
		assert_int_equal(CPU_COUNT(&node), 2);	/* the threads may use both */
		assert_true(CPU_ISSET(first, &node) && CPU_ISSET(second, &node));
		assert_non_null(strstr(why, "core of NUMA node 1"));
	} else {
		print_message("t01c: one CPU to run on: the two-thread core is not checked\n");
	}

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

/* 1d. A software RDMA device (Soft-RoCE, siw) has no device of its own:
 * its node is that of the netdev its `parent` names, found on the nearest
 * parent of that netdev's device (a virtio NIC's PCI function).  A parent
 * that is virtual (no device) or not a plain name gives no node. */
static void t01d_auto_soft_node(void **state)
{
	char root[] = "/tmp/t01d.XXXXXX", why[160] = "", list[64], cmd[700], dev[512];
	const char *pci = "devices/pci0000:04/0000:04:00.0/0000:05:01.0";
	cpu_set_t allowed, node;
	int first, second;
	unsigned n;

	(void)state;
	t01c_start(root, &allowed, &first, &second);
	snprintf(list, sizeof(list), "%d\n", first);
	t01c_put(root, "devices/system/node/node1/cpulist", list);
	/* rxe0 on a dummy (no device), rxe1 on "../x": no node */
	t01c_put(root, "class/infiniband/rxe0/parent", "d0\n");
	t01c_put(root, "class/net/d0/flags", "0x1\n");
	t01c_put(root, "class/infiniband/rxe1/parent", "../x\n");
	n = gw_worker_auto(root, &node, why, sizeof(why));
	assert_int_equal(CPU_COUNT(&node), 0);
	assert_non_null(strstr(why, "no RDMA device"));
	/* rxe2 on eth0, a virtio NIC whose PCI function is on node 1 */
	t01c_put(root, "class/infiniband/rxe2/parent", "eth0\n");
	snprintf(dev, sizeof(dev), "%s/virtio3/features", pci);
	t01c_put(root, dev, "0\n");
	snprintf(dev, sizeof(dev), "%s/numa_node", pci);
	t01c_put(root, dev, "1\n");
	snprintf(cmd, sizeof(cmd), "ln -s '%s/%s/virtio3' '%s/class/net/eth0/device'", root, pci,
		 root);
	t01c_put(root, "class/net/eth0/flags", "0x1003\n");
	assert_int_equal(system(cmd), 0);
	n = gw_worker_auto(root, &node, why, sizeof(why));
	assert_int_equal(n, 1);
	assert_int_equal(CPU_COUNT(&node), 1);
	assert_true(CPU_ISSET(first, &node));
	assert_non_null(strstr(why, "NUMA node 1 of RDMA device rxe2"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static void t02_xid_slices(void **state)
{
	static const unsigned cases[][3] = { { 0, 2, 1 }, { 1, 2, 1 }, { 2, 3, 2 }, { 5, 8, 3 } };

	(void)state;
	for (unsigned c = 0; c < 4; c++) {
		unsigned idx = cases[c][0], cnt = cases[c][1], bits = cases[c][2];
		/* starting just below a slice boundary: the count wraps inside it */
		struct gw_xmap *xm = gw_xmap_new(64, 0xfffffff0u);

		assert_non_null(xm);
		gw_xmap_set_slice(xm, idx, cnt);
		for (unsigned i = 0; i < 200; i++) {
			enum gw_xevict ev = GW_XEVICT_NONE;
			struct gw_xent *xe = gw_xmap_add(xm, 1, 1, i, NULL, 0, &ev);

			assert_non_null(xe);
			assert_int_equal(xe->xn_gxid >> (32 - bits), idx);
			gw_xmap_remove(xm, xe);
		}
		gw_xmap_free(xm);
	}
}

static void t03_stats_sum(void **state)
{
	struct gw_stats *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	(void)state;
	a->gs_ctr[GW_CTR_CALLS] = 3;
	b->gs_ctr[GW_CTR_CALLS] = 4;
	gw_stats_proc(a, 100003, 3, 1);
	gw_stats_proc(b, 100003, 3, 1);
	gw_stats_proc(b, 100005, 3, 1);
	gw_stats_observe(b, GW_HIST_CALL, 100);
	a->gs_tls_cert_expiry = 2000;
	b->gs_tls_cert_expiry = 1000;
	gw_stats_sum(a, b);
	assert_int_equal(a->gs_ctr[GW_CTR_CALLS], 7);
	assert_int_equal(a->gs_hist[GW_HIST_CALL].gh_count, 1);
	assert_int_equal(a->gs_tls_cert_expiry, 1000);
	for (unsigned i = 0; i < GW_STATS_PROCS; i++) {
		const struct gw_proc_stat *ps = &a->gs_proc[i];

		if (ps->ps_calls && ps->ps_prog == 100003)
			assert_int_equal(ps->ps_calls, 2);	/* one row, both workers' */
		else if (ps->ps_calls)
			assert_int_equal(ps->ps_prog, 100005);
	}
	free(a);
	free(b);
}

struct t04_env {
	struct gw_worker *w[2];
	unsigned refused;
};

static void t04_stop(void *arg)
{
	struct t04_env *e = arg;

	for (unsigned i = 0; i < 2; i++)
		gw_worker_stop(e->w[i]);
}

static void t04_go(void *arg)
{
	struct t04_env *e = arg;

	for (unsigned i = 0; i < 2; i++)
		gw_worker_go(e->w[i]);
}

/* Occurrences of needle in hay. */
static unsigned t04_count(const char *hay, const char *needle)
{
	unsigned n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* The control socket's commands over both workers (a view). */
static void t04_control(struct t04_env *e, struct event_base *base, const char *path)
{
	struct gw_ops_view v = { .ov_n = 2, .ov_stop = t04_stop, .ov_go = t04_go, .ov_arg = e,
				 .ov_gw = { gw_worker_ctx(e->w[0]), gw_worker_ctx(e->w[1]) } };
	struct gw_ctl *ct = gw_ctl_new(base, gw_worker_ctx(e->w[0]), path, NULL);
	struct json_object *jo;
	char *r;

	assert_non_null(ct);
	gw_ctl_set_view(ct, &v);
	r = h_ctl(ct, "json status");	/* one line of JSON: worker 0's, the other merged in */
	assert_non_null(strchr(r, '\n'));
	*strchr(r, '\n') = '\0';
	jo = json_tokener_parse(r);
	assert_non_null(jo);
	assert_int_equal(json_object_get_int(json_object_object_get(jo, "workers")), 2);
	assert_int_equal(json_object_get_int(json_object_object_get(jo, "clients")), 16);
	assert_non_null(json_object_object_get(jo, "limits"));
	assert_int_equal(json_object_array_length(json_object_object_get(jo, "paths")), 2);
	assert_int_equal(json_object_get_int(json_object_object_get(
		json_object_array_get_idx(json_object_object_get(jo, "paths"), 1), "worker")), 1);
	json_object_put(jo);
	free(r);
	r = h_ctl(ct, "json clients");	/* all 16, each with its worker */
	jo = json_tokener_parse(r);
	assert_non_null(jo);
	assert_int_equal(json_object_array_length(json_object_object_get(jo, "clients")), 16);
	assert_int_equal(json_object_get_int(json_object_object_get(jo, "count")), 16);
	json_object_put(jo);
	free(r);
	r = h_ctl(ct, "status");	/* one page: all clients, each path once */
	assert_non_null(strstr(r, "; 16 clients;"));
	assert_int_equal(t04_count(r, "\npath nfs/srv "), 1);
	assert_null(strstr(r, "(worker "));
	assert_non_null(strstr(r, "\nlimits: "));
	assert_null(strstr(strstr(r, "\nlimits: ") + 1, "\nlimits: "));	/* once */
	/* The caps per worker, and what they come to for the gateway. */
	assert_non_null(strstr(r, "\ncapacity: 2 workers x (buffers 64, max_calls 64, max_clients "
			       "1024) = gateway-wide buffers 128 (2 MiB pinned), max_calls 128, "
			       "max_clients 2048; one client host at most 1024 connections"));
	free(r);
	r = h_ctl(ct, "status workers");	/* the breakdown, on request */
	assert_int_equal(t04_count(r, "\npath nfs/srv "), 2);
	assert_non_null(strstr(r, "(worker 1)\n"));
	free(r);
	r = h_ctl(ct, "backends");	/* one row per path, counts summed */
	assert_int_equal(t04_count(r, "\nnfs/srv "), 1);
	assert_non_null(strstr(r, "\n(2 workers, each with its own paths: summed"));
	assert_null(strstr(r, "worker 0:"));
	free(r);
	r = h_ctl(ct, "backends workers");
	assert_int_equal(t04_count(r, "\nnfs/srv "), 2);
	assert_non_null(strstr(r, "\nworker 1:\n"));
	free(r);
	r = h_ctl(ct, "backends nope");
	assert_non_null(strstr(r, "!ERR backends takes no argument or workers"));
	free(r);
	r = h_ctl(ct, "clients");	/* one table of the 16, each with its worker */
	assert_int_equal(t04_count(r, "\nid "), 0);
	assert_int_equal(t04_count(r, "peer"), 1);
	assert_int_equal(t04_count(r, " (worker 0)\n") + t04_count(r, " (worker 1)\n"), 16);
	assert_null(strstr(r, "worker 0:\n"));
	free(r);
	r = h_ctl(ct, "clients top=3");	/* the gateway's top 3, not each worker's */
	assert_int_equal(t04_count(r, "\n"), 1 + 3 + 1 + 1);	/* head, rows, "... 13 more", "." */
	assert_non_null(strstr(r, "\n... 13 more\n"));
	free(r);
	r = h_ctl(ct, "drain nfs/srv");	/* every worker's path */
	assert_non_null(strstr(r, ".\n"));
	free(r);
	assert_true(gw_path_draining(gw_ctx_path(gw_worker_ctx(e->w[0]), 0)));
	assert_true(gw_path_draining(gw_ctx_path(gw_worker_ctx(e->w[1]), 0)));
	free(h_ctl(ct, "undrain nfs/srv"));
	assert_false(gw_path_draining(gw_ctx_path(gw_worker_ctx(e->w[1]), 0)));
	r = h_ctl(ct, "json stats");	/* summed: all 16 calls */
	assert_non_null(strstr(r, "\"calls\":16"));
	free(r);
	gw_ctl_free(ct);
}

static bool t04_handoff(void *arg, int fd, const struct sockaddr *sa, socklen_t salen,
			uint16_t lport, unsigned li)
{
	struct t04_env *e = arg;
	unsigned k = gw_worker_pick(sa, 2);

	if (k == 0)
		return false;
	if (!gw_worker_take(e->w[k], fd, sa, salen, lport, li))
		e->refused++;
	return true;
}

/* Workers 0 (on the test's loop base, counting into st0, handing clients
 * to worker 1 as main.c does) and 1 (its own thread) of cf, started; worker
 * 0's listening address into *la. */
static void t04_workers_up(struct t04_env *e, struct cfg *cf, struct gw_log *lg,
			   struct gw_stats *st0, struct event_base *base, struct sockaddr_in *la)
{
	for (unsigned i = 0; i < 2; i++) {
		struct gw_worker_params wp = {
			.wp_index = i, .wp_count = 2, .wp_cfg = cf, .wp_log = lg,
			.wp_stats = i ? NULL : st0, .wp_base = i ? NULL : base,
			.wp_main = i ? e->w[0] : NULL, .wp_handoff = i ? NULL : t04_handoff,
			.wp_handoff_arg = e,
		};

		e->w[i] = gw_worker_new(&wp);
		assert_non_null(e->w[i]);
	}
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(gw_worker_start(e->w[i]), 0);
	assert_int_equal(fe_listen_addr(gw_worker_fe(e->w[0]), (struct sockaddr *)la, sizeof(*la)), 0);
}

/* Whether a thread of this process is named name (/proc/self/task/N/comm). */
static bool t04_thread_named(const char *name)
{
	char path[300], comm[32];
	bool found = false;
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;

	assert_non_null(d);
	while (!found && (de = readdir(d))) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		if (de->d_name[0] == '.' || !(f = fopen(path, "r")))
			continue;
		found = fgets(comm, sizeof(comm), f) && !strncmp(comm, name, strlen(name)) &&
			comm[strlen(name)] == '\n';
		fclose(f);
	}
	closedir(d);
	return found;
}

/* A client from src (127.0.0.N) connected to port. */
static int t04_client(uint32_t src, uint16_t port)
{
	struct sockaddr_in s = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(src) };
	struct sockaddr_in d = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&s, sizeof(s)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&d, sizeof(d)), 0);
	return fd;
}

static void t04_live(void **state)
{
	struct h_server s;
	struct t04_env e = { 0 };
	struct gw_log lg = { .gl_level = getenv("H_VERBOSE") ? CFG_LOG_DEBUG : -1 };
	struct gw_stats *st0 = calloc(1, sizeof(*st0));
	struct event_base *base = event_base_new();
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	char text[1024], err[256];
	struct cfg *cf;
	int fds[16];
	unsigned want[2] = { 0 }, have[2];
	uint8_t buf[512];
	struct evbuffer *ob = evbuffer_new();
	char *txt;

	pthread_t thr2;

	(void)state;
	h_server_init(&s);
	h_server_start(&s);
	/* Its loop serves one connection at a time: one thread per worker's. */
	assert_int_equal(pthread_create(&thr2, NULL, h_server_main, &s), 0);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "workers = 2\nsecure_port = no\n[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\nversions = 3-4\ntransport = tcp\nport = %u\n", s.port);
	cf = cfg_parse_string(text, "test", NULL, err, sizeof(err));
	assert_non_null(cf);
	assert_int_equal(cf->cf_workers, 2);
	t04_workers_up(&e, cf, &lg, st0, base, &la);
	assert_int_equal(gw_worker_log(e.w[0])->gl_worker, 1);	/* its lines say "worker 0" */
	assert_int_equal(gw_worker_log(e.w[1])->gl_worker, 2);
	assert_true(t04_thread_named("rpcrdma-gw/w1"));	/* worker 1's own thread */
	for (unsigned i = 0; i < 16; i++) {
		struct sockaddr_in src = { .sin_family = AF_INET,
					   .sin_addr.s_addr = htonl(0x7f000002u + i) };
		struct h_gw w0 = { .base = base };	/* h_reply turns only its loop */
		int n;

		want[gw_worker_pick((struct sockaddr *)&src, 2)]++;
		fds[i] = t04_client(0x7f000002u + i, fe_listen_port(gw_worker_fe(e.w[0]), 0));
		h_send(fds[i], buf, h_call(buf, 0x100 + i, 2, 100003, 3, 0x7a00 + i));
		n = h_reply(&w0, fds[i], buf, sizeof(buf), 5000);
		assert_true(n >= 28);	/* the server's answer (no mark), with its tag */
		assert_int_equal(chk_be32(buf), 0x100 + i);
		assert_int_equal(chk_be32(buf + n - 4), 0x7a00 + i);
	}
	assert_true(want[0] && want[1]);	/* both workers serve someone */
	assert_int_equal(e.refused, 0);
	/* Stopped, both workers' state is read from here. */
	for (unsigned i = 0; i < 2; i++)
		gw_worker_stop(e.w[i]);
	for (unsigned i = 0; i < 2; i++)
		have[i] = gw_ctx_nclients(gw_worker_ctx(e.w[i]));
	{
		struct gw_ctx *gws[2] = { gw_worker_ctx(e.w[0]), gw_worker_ctx(e.w[1]) };

		gw_metrics_render_all(ob, gws, 2);
	}
	for (unsigned i = 0; i < 2; i++)
		gw_worker_go(e.w[i]);
	assert_int_equal(have[0], want[0]);
	assert_int_equal(have[1], want[1]);
	t04_control(&e, base, "/tmp/test_gw_worker.ctl");
	txt = h_drain(ob);
	assert_non_null(strstr(txt, "rpcrdma_gw_client_connections 16\n"));
	assert_non_null(strstr(txt, "rpcrdma_gw_path_up{path=\"nfs/srv\",route=\"nfs\",backend=\"srv\","
				    "transport=\"tcp\",worker=\"1\"} 1\n"));
	assert_non_null(strstr(txt, "rpcrdma_gw_calls_forwarded_total{worker=\"1\"} "));
	assert_int_equal((int)h_sample(txt, "rpcrdma_gw_calls_total{program=\"100003\""), 16);
	free(txt);
	for (unsigned i = 0; i < 16; i++)
		close(fds[i]);
	gw_worker_join(e.w[1]);
	gw_worker_free(e.w[1]);
	gw_worker_free(e.w[0]);
	event_base_free(base);
	pthread_mutex_lock(&s.mu);
	s.stop = true;
	pthread_mutex_unlock(&s.mu);
	pthread_join(thr2, NULL);
	h_server_stop(&s, true);
	cfg_free(cf);
	free(st0);
}

/* The first 127.0.0.N (N >= from) that gw_worker_pick gives worker k of 2. */
static uint32_t t05_addr(uint32_t from, unsigned k)
{
	for (uint32_t a = 0x7f000000u | from;; a++) {
		struct sockaddr_in s = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(a) };

		if (gw_worker_pick((struct sockaddr *)&s, 2) == k)
			return a;
	}
}

/* A client host's UDP SM_NOTIFY handed on as main.c does: gw_worker_nsm. */
static bool t05_nsm_handoff(void *arg, const struct sockaddr *sa, socklen_t salen)
{
	struct t04_env *e = arg;
	int rc = gw_worker_nsm(e->w, 2, sa, salen);

	if (rc < 0)
		e->refused++;
	return rc != 0;
}

/* SM_NOTIFY (no record mark) from fd to the UDP socket at to; the reply's
 * accept_stat, -1 when none came (worker 0's loop turning meanwhile). */
static int t05_notify(struct h_gw *w0, int fd, const struct sockaddr_in *to, uint32_t xid)
{
	uint8_t buf[128];
	struct xdr_enc xe;

	xdr_enc_init(&xe, buf, sizeof(buf));
	rpc_call_encode(&xe, xid, H_NSM, 1, 6, NULL);	/* SM_NOTIFY */
	xdr_put_opaque(&xe, "client", 6);
	xdr_put_u32(&xe, 3);
	assert_int_equal(sendto(fd, buf, xe.xe_len, 0, (const struct sockaddr *)to, sizeof(*to)),
			 (ssize_t)xe.xe_len);
	for (int i = 0; i < 3000; i += 5) {
		ssize_t n;

		h_pump(w0, 5);
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n >= 24 && chk_be32(buf) == xid)
			return (int)chk_be32(buf + 20);
	}
	return -1;
}

/* Locks of host tracked on worker k (its loop stopped meanwhile). */
static unsigned t05_locks(struct t04_env *e, unsigned k, const char *host)
{
	unsigned n;

	gw_worker_stop(e->w[k]);
	n = gw_nlm_host_locks(gw_worker_ctx(e->w[k])->gw_nlm, host);
	gw_worker_go(e->w[k]);
	return n;
}

/* 5. workers = 2: client A's lock is tracked on worker 1 (its address
 * picks it; the server's GRANTED_MSG comes from a backend's address that
 * picks worker 1 too); A's SM_NOTIFY datagram reaches the UDP socket on
 * worker 0, is answered there and handed to worker 1, which releases the
 * lock (the server hears its UNLOCK).  Client C's (worker 0's) SM_NOTIFY
 * leaves A's lock alone. */
static void t05_nsm_handoff_live(void **state)
{
	struct h_server s;
	struct t04_env e = { 0 };
	struct gw_log lg = { .gl_level = getenv("H_VERBOSE") ? CFG_LOG_DEBUG : -1 };
	struct gw_stats *st0 = calloc(1, sizeof(*st0));
	struct event_base *base = event_base_new();
	struct h_gw w0 = { .base = base };
	struct sockaddr_in la = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in ua, ca = { .sin_family = AF_INET };
	struct sockaddr_storage ss = { 0 };
	uint32_t a = t05_addr(2, 1), c = t05_addr(2, 0), lk = t05_addr(a + 1 - 0x7f000000u, 1);
	char text[1024], err[256], ahost[INET_ADDRSTRLEN], lkname[INET_ADDRSTRLEN];
	uint8_t buf[512];
	struct gw_nu *nu;
	struct cfg *cf;
	pthread_t thr2;
	int fa, fs, ua_fd, uc_fd;
	unsigned calls;
	size_t at;

	(void)state;
	inet_ntop(AF_INET, &(uint32_t){ htonl(a) }, ahost, sizeof(ahost));
	inet_ntop(AF_INET, &(uint32_t){ htonl(lk) }, lkname, sizeof(lkname));
	h_server_init(&s);
	h_server_start(&s);
	assert_int_equal(pthread_create(&thr2, NULL, h_server_main, &s), 0);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n"
		 "workers = 2\nsecure_port = no\n[backend srv]\naddress = 127.0.0.1\n"
		 "[backend lk]\naddress = %s\n"
		 "[route nlm]\nprogram = nlm\nbackend = srv\ntransport = tcp\nport = %u\n"
		 "[route nsm]\nprogram = nsm\nbackend = srv\ntransport = tcp\nport = 9\n", lkname, s.port);
	cf = cfg_parse_string(text, "test", NULL, err, sizeof(err));
	if (!cf)
		fail_msg("%s", err);
	t04_workers_up(&e, cf, &lg, st0, base, &la);
	nu = gw_nu_new(&(struct gw_nu_params){ .np_base = base, .np_gw = gw_worker_ctx(e.w[0]),
					       .np_st = st0, .np_lg = &lg,
					       .np_handoff = t05_nsm_handoff, .np_handoff_arg = &e });
	assert_non_null(nu);
	memcpy(&ss, &la, sizeof(la));
	assert_int_equal(gw_nu_open(nu, &ss, 0), 0);
	assert_int_equal(gw_nu_sockaddr(nu, 0, &ss), 0);
	memcpy(&ua, &ss, sizeof(ua));

	/* A's LOCK through worker 1, then the server's grant of that owner */
	fa = t04_client(a, fe_listen_port(gw_worker_fe(e.w[0]), 0));
	h_send(fa, buf, h_nlm_lock(buf, 0x51, 1, &at));
	assert_int_equal(h_reply(&w0, fa, buf, sizeof(buf), 5000), 28);
	h_server_last(&s, buf, sizeof(buf));
	fs = t04_client(lk, fe_listen_port(gw_worker_fe(e.w[0]), 0));
	h_send(fs, buf, h_nlm_granted_msg(buf, 0x94, (int32_t)chk_be32(buf + at), &at));
	assert_int_equal(h_reply(&w0, fs, buf, sizeof(buf), 5000), 24);
	assert_int_equal(t05_locks(&e, 1, ahost), 1);
	assert_int_equal(t05_locks(&e, 0, ahost), 0);	/* not worker 0's */
	calls = h_server_calls(&s);

	/* C (worker 0) reboots: A's lock stays */
	ca.sin_addr.s_addr = htonl(c);
	uc_fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(bind(uc_fd, (struct sockaddr *)&ca, sizeof(ca)), 0);
	assert_int_equal(t05_notify(&w0, uc_fd, &ua, 0x60), 0);
	h_pump(&w0, 100);
	assert_int_equal(t05_locks(&e, 1, ahost), 1);
	assert_int_equal(h_server_calls(&s), calls);

	/* A reboots: answered on worker 0, released on worker 1 */
	ca.sin_addr.s_addr = htonl(a);
	ua_fd = socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(bind(ua_fd, (struct sockaddr *)&ca, sizeof(ca)), 0);
	assert_int_equal(t05_notify(&w0, ua_fd, &ua, 0x61), 0);
	for (int i = 0; i < 3000 && h_server_calls(&s) == calls; i += 5)
		h_pump(&w0, 5);
	assert_int_equal(h_server_calls(&s), calls + 1);	/* worker 1's UNLOCK */
	assert_int_equal(t05_locks(&e, 1, ahost), 0);
	assert_int_equal(e.refused, 0);
	assert_int_equal(st0->gs_ctr[GW_CTR_NSM_UDP_NOTIFY], 2);
	assert_int_equal(st0->gs_ctr[GW_CTR_NLM_SERVER_REBOOT], 0);

	close(ua_fd);
	close(uc_fd);
	close(fs);
	close(fa);
	gw_nu_free(nu);
	gw_worker_join(e.w[1]);
	gw_worker_free(e.w[1]);
	gw_worker_free(e.w[0]);
	event_base_free(base);
	pthread_mutex_lock(&s.mu);
	s.stop = true;
	pthread_mutex_unlock(&s.mu);
	pthread_join(thr2, NULL);
	h_server_stop(&s, true);
	cfg_free(cf);
	free(st0);
}

/* A line logged through a worker's log on stderr: its worker named
 * (both stderr writers: gw_logf and the per-peer gw_logf_ev). */
static void t06_log_names_worker(void **state)
{
	struct gw_log lg0 = { .gl_level = CFG_LOG_INFO, .gl_target = GW_LOG_STDERR, .gl_worker = 2 };
	struct gw_log *lg = &lg0;
	struct gw_log_ev ev = { .le_backend = "srv" };
	FILE *tmp = tmpfile();
	int saved = dup(2);
	char buf[512] = "";

	(void)state;
	assert_non_null(tmp);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	gw_warn(lg, "path mount/srv: down");
	gw_logf_ev(lg, CFG_LOG_WARN, "t06", &ev, "backend srv: slow");
	lg->gl_worker = 0;	/* one worker: lines as before */
	gw_warn(lg, "path nfs/srv: down");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	assert_true(fread(buf, 1, sizeof(buf) - 1, tmp) > 0);
	fclose(tmp);
	assert_non_null(strstr(buf, "rpcrdma-gw[warn] (worker 1) t06_log_names_worker: path mount/srv: down\n"));
	assert_non_null(strstr(buf, "rpcrdma-gw[warn] (worker 1) t06: backend srv: slow\n"));
	assert_non_null(strstr(buf, "rpcrdma-gw[warn] t06_log_names_worker: path nfs/srv: down\n"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_pick),
		cmocka_unit_test(t01b_auto),
		cmocka_unit_test(t01c_auto_node),
		cmocka_unit_test(t01d_auto_soft_node),
		cmocka_unit_test(t02_xid_slices),
		cmocka_unit_test(t03_stats_sum),
		cmocka_unit_test(t04_live),
		cmocka_unit_test(t05_nsm_handoff_live),
		cmocka_unit_test(t06_log_names_worker),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
