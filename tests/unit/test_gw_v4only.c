// SPDX-License-Identifier: MIT
/*
 * This file contains the tests of an NFSv4-only site: a server without
 * rpcbind, mountd, lockd or statd.
 *
 *   1. the shared rpcbind backoff (gateway/backoff.c) as a table: a
 *      failure makes every asker of that backend wait, doubling from the
 *      base to the 60 s cap; the asker whose turn it is claims it; a
 *      program not registered delays that program only; an answer forgets;
 *   2. two workers (threads of their own, as the daemon runs them) with
 *      MOUNT, NLM and NSM routes to a server whose port 111 refuses (a
 *      network namespace of the test's own): in 1.6 s at reconnect_interval
 *      = 50 ms the server's rpcbind is asked a handful of times, not once
 *      per route, worker and interval (3 x 2 x 32 = 192 before), and each
 *      path says what rpcinfo says ("rpcbind on 127.0.0.2 port 111:
 *      Connection refused"), not "no program 100005 ... (RPC: Remote
 *      system error)";
 *   3. v4_only = yes: the default routes are NFS version 4 alone (one
 *      path, nothing down to alert on); a MOUNT NULL and an NLM NULL are
 *      answered PROG_UNAVAIL at once (they were held: MOUNT's route was
 *      waiting for the server's rpcbind), an NFSv3 call PROG_MISMATCH;
 *      routes a v4-only site cannot serve are refused by the parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <sched.h>
#include <net/if.h>
#include <sys/ioctl.h>

#include "backoff.h"
#include "test_gw_harness.h"
#include "worker.h"

#define MOUNT	100005u

/* 1 */
static void t01_table(void **state)
{
	struct gw_backoff *bo = gw_backoff_new();
	char msg[128] = "";
	uint64_t t = 1000;
	unsigned step = 0;

	(void)state;
	assert_non_null(bo);
	assert_int_equal(gw_backoff_wait(bo, "srv", MOUNT, 0, msg, sizeof(msg)), 0);
	assert_int_equal(gw_backoff_result(bo, "srv", MOUNT, -2, "refused", 0, 100), 100);
	/* Another route asked at the same time: same news, no second step. */
	assert_int_equal(gw_backoff_result(bo, "srv", H_NLM, -2, "refused", 10, 100), 90);
	/* Another route (NLM) and another worker wait too: rpcbind is the server's. */
	assert_int_equal(gw_backoff_wait(bo, "srv", H_NLM, 40, msg, sizeof(msg)), 60);
	assert_string_equal(msg, "refused");
	assert_int_equal(gw_backoff_wait(bo, "other", H_NLM, 40, msg, sizeof(msg)), 0);
	/* At 100 one asker's turn: it claims the next step, the rest wait. */
	assert_int_equal(gw_backoff_wait(bo, "srv", MOUNT, 100, msg, sizeof(msg)), 0);
	assert_int_equal(gw_backoff_wait(bo, "srv", H_NSM, 150, msg, sizeof(msg)), 50);
	assert_int_equal(gw_backoff_result(bo, "srv", MOUNT, -2, "refused", 120, 100), 200);
	assert_int_equal(gw_backoff_wait(bo, "srv", MOUNT, 320, msg, sizeof(msg)), 0);
	assert_int_equal(gw_backoff_result(bo, "srv", MOUNT, -2, "refused", 320, 100), 400);
	for (unsigned i = 0; i < 20; i++) {	/* turn after turn: capped */
		t += GW_BACKOFF_CAP_MS;
		assert_int_equal(gw_backoff_wait(bo, "srv", MOUNT, t, msg, sizeof(msg)), 0);
		step = gw_backoff_result(bo, "srv", MOUNT, -2, "refused", t, 100);
	}
	assert_int_equal(step, GW_BACKOFF_CAP_MS);
	t += GW_BACKOFF_CAP_MS;
	/* rpcbind answers: MOUNT not registered delays MOUNT only. */
	assert_int_equal(gw_backoff_result(bo, "srv", MOUNT, -1, "not registered", t, 100), 100);
	assert_int_equal(gw_backoff_wait(bo, "srv", H_NLM, t + 10, msg, sizeof(msg)), 0);
	assert_int_equal(gw_backoff_wait(bo, "srv", MOUNT, t + 10, msg, sizeof(msg)), 90);
	assert_string_equal(msg, "not registered");
	assert_int_equal(gw_backoff_result(bo, "srv", MOUNT, 0, "", t + 100, 100), 0);
	assert_int_equal(gw_backoff_wait(bo, "srv", MOUNT, t + 101, msg, sizeof(msg)), 0);
	/* Full table: entries are reused, nothing breaks. */
	for (unsigned i = 0; i < 3 * GW_BACKOFF_SLOTS; i++) {
		char name[16];

		snprintf(name, sizeof(name), "b%u", i);
		gw_backoff_result(bo, name, 0, -2, "x", 0, 100);
	}
	assert_int_equal(gw_backoff_wait(NULL, "srv", MOUNT, 0, NULL, 0), 0);
	gw_backoff_free(bo);
}

/* 2 */

/* A network namespace of our own with lo up: nothing listens on 111. */
static bool own_loopback(void)
{
	struct ifreq ifr;
	int s;

	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0)
		return false;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	strcpy(ifr.ifr_name, "lo");
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return false;
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return false;
	close(s);
	return true;
}

static bool ns_up;

static void t02_shared_backoff(void **state)
{
	static const char text[] =
		"[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 16\n"
		"workers = 2\nreconnect_interval = 50ms\nready_when = any\n"
		"[backend srv]\naddress = 127.0.0.2\n"
		"[route mount]\nprogram = mount\ntransport = tcp\n"
		"[route nlm]\nprogram = nlm\ntransport = tcp\n"
		"[route nsm]\nprogram = nsm\ntransport = tcp\n";
	struct gw_log lg = { .gl_level = getenv("H_VERBOSE") ? CFG_LOG_DEBUG : -1 };
	struct gw_backoff *bo = gw_backoff_new();
	struct gw_worker *w[2];
	char err[256];
	struct cfg *cf = cfg_parse_string(text, "test", NULL, err, sizeof(err));
	uint64_t asked = 0;

	(void)state;
	if (!ns_up) {
		print_error("SKIPPED: needs root and a network namespace of its own\n");
		skip();
	}
	assert_non_null(cf);
	for (unsigned i = 0; i < 2; i++) {
		struct gw_worker_params wp = { .wp_index = i, .wp_count = 2, .wp_cfg = cf,
					       .wp_log = &lg, .wp_backoff = bo };

		w[i] = gw_worker_new(&wp);	/* each a loop and thread of its own */
		assert_non_null(w[i]);
	}
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(gw_worker_start(w[i]), 0);
	usleep(1600 * 1000);
	for (unsigned i = 0; i < 2; i++)
		gw_worker_join(w[i]);
	for (unsigned i = 0; i < 2; i++) {
		struct gw_ctx *gw = gw_worker_ctx(w[i]);

		asked += gw_worker_stats(w[i])->gs_ctr[GW_CTR_RPCBIND_FAILED];
		for (unsigned p = 0; p < gw_ctx_npaths(gw); p++) {
			const char *why = NULL;

			assert_false(gw_path_up(gw_ctx_path(gw, p)));
			gw_path_why(gw_ctx_path(gw, p), &why, NULL);
			assert_non_null(why);
			assert_non_null(strstr(why, "rpcbind on 127.0.0.2 port 111: Connection refused"));
			assert_null(strstr(why, "no program"));
		}
	}
	fprintf(stderr, "  the server's rpcbind asked %llu times in 1.6 s by 3 routes x 2 workers\n",
		(unsigned long long)asked);
	/* First the six at once (nothing known yet), then one per doubling
	 * step: 50, 100, 200, 400, 800 ms. */
	assert_true(asked >= 2);
	assert_true(asked <= 16);
	for (unsigned i = 0; i < 2; i++)
		gw_worker_free(w[i]);
	gw_backoff_free(bo);
	cfg_free(cf);
}

/* 3 */
static int v4_call(struct h_gw *h, int fd, uint32_t xid, uint32_t prog, uint32_t vers,
		   uint8_t *buf, size_t cap)
{
	size_t n = h_call_proc(buf, xid, 2, prog, vers, 0, 0);	/* NULL */

	h_send(fd, buf, n);
	return h_reply(h, fd, buf, cap, 300);
}

static void t03_v4_only(void **state)
{
	static const char base[] = "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\n"
				   "max_calls = 16\nreconnect_interval = 30s\n";
	static const char *const refused[] = {
		"v4_only = yes\n[backend srv]\naddress = 127.0.0.1\n[route mount]\nprogram = mount\n",
		"v4_only = yes\n[backend srv]\naddress = 127.0.0.1\n[route nfs]\nprogram = nfs\n",
		"v4_only = yes\n[backend srv]\naddress = 127.0.0.1\n[route nfs]\nprogram = nfs\n"
		"versions = 3-4\n",
	};
	char text[512], err[256], *r;
	struct h_fake f;
	struct h_gw h;
	uint8_t buf[256];
	uint64_t t0;
	int fd;

	(void)state;
	for (unsigned i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", base, refused[i]);
		assert_null(cfg_parse_string(text, "test", NULL, err, sizeof(err)));
		assert_non_null(strstr(err, "v4_only"));
	}
	h_fake_init(&f, "fake");
	snprintf(text, sizeof(text), "%sv4_only = yes\n[backend srv]\naddress = 127.0.0.1\n", base);
	assert_int_equal(h_gw_start_on(&h, text, &f.hf_ops, &f), 0);
	assert_int_equal(gw_ctx_npaths(h.gw), 1);	/* NFS alone */
	assert_int_equal(gw_path_info(gw_ctx_path(h.gw, 0))->pi_route->cr_vers_low, 4);
	fd = h_client(&h);
	t0 = gw_now_ms();
	assert_int_equal(v4_call(&h, fd, 1, MOUNT, 3, buf, sizeof(buf)), 24);
	assert_int_equal(chk_be32(buf + 20), 1);	/* PROG_UNAVAIL */
	assert_int_equal(v4_call(&h, fd, 2, H_NLM, 4, buf, sizeof(buf)), 24);
	assert_int_equal(chk_be32(buf + 20), 1);
	assert_true(gw_now_ms() - t0 < 300);		/* at once, not held */
	assert_int_equal(v4_call(&h, fd, 3, 100003, 3, buf, sizeof(buf)), 32);
	assert_int_equal(chk_be32(buf + 20), 2);	/* PROG_MISMATCH 4..4 */
	assert_int_equal(chk_be32(buf + 24), 4);
	assert_int_equal(chk_be32(buf + 28), 4);
	r = h_render(&h.st, h.gw);
	assert_null(strstr(r, "route=\"mount\""));	/* no path to be down */
	free(r);
	assert_int_equal(h_gw_end(&h, fd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_table),
		cmocka_unit_test(t02_shared_backoff),
		cmocka_unit_test(t03_v4_only),
	};

	signal(SIGPIPE, SIG_IGN);
	ns_up = own_loopback();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
