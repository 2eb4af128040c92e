// SPDX-License-Identifier: MIT
/*
 * test_gw_clock.c - the pass clock: a gateway in process (test_gw_harness.h)
 * with its fake transport (h_fake), its loop run by gw_loop_run as the
 * daemon runs it.
 * clock_gettime is interposed here: the precise reads (CLOCK_MONOTONIC) the
 * test thread makes are counted, whoever makes them.
 *
 *   1. eight calls whose records arrive in one loop pass cost one precise
 *      read (it was one per call), and their eight replies, completed in
 *      one pass, one more (it was one per call); syscalls_total{call=
 *      "clock_gettime"} counts exactly the reads made; the latency
 *      histograms (call, NFS operation, path) get one observation per
 *      call, each within what the test saw elapse, all eight equal; the
 *      gateway's coarse millisecond reads are one per pass at most too
 *      (they were 25 for the eight records and 11 for their replies);
 *   2. gw_pass_us: inside a pass one reading serves it, the next pass
 *      reads anew; outside gw_loop_run (before, after, no stats) two
 *      reads 2 ms apart differ: nothing is frozen.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <setjmp.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <cmocka.h>

#include <event2/event.h>

#include "call.h"
#include "chunking.h"
#include "config.h"
#include "gateway.h"
#include "log.h"
#include "ops.h"
#include "test_gw_harness.h"
#include "transport.h"

#define NFS 100003u
#define NCALLS 8

static __thread bool clock_counting;
static unsigned n_precise, n_coarse;
/* The linker's bounds of this program's own code (the gateway's, linked
 * in); libevent is a shared library outside them. */
extern const char __executable_start[], etext[];

/* Every clock_gettime of the process, libevent's too, comes here; coarse
 * reads count only when the gateway's code made them. */
__attribute__((noinline)) int clock_gettime(clockid_t id, struct timespec *ts)
{
	const char *from = __builtin_return_address(0);

	n_precise += clock_counting && id == CLOCK_MONOTONIC;
	n_coarse += clock_counting && id == CLOCK_MONOTONIC_COARSE && from >= __executable_start &&
		    from < etext;
	return (int)syscall(SYS_clock_gettime, id, ts);
}

/* The harness's fake transport, and the event that ends a run. */
struct clk_fake {
	struct h_fake clk_fk;		/* first: the transport's tp */
	struct event *clk_stop;		/* active: the loop breaks after this pass's callbacks */
};

/* The eighth call taken ends the run. */
static void on_submit(struct h_fake *fk, struct gw_call *c)
{
	struct clk_fake *f = (struct clk_fake *)fk;

	(void)c;
	assert_true(fk->hf_ncalls < NCALLS);
	if (fk->hf_ncalls + 1 == NCALLS)
		event_active(f->clk_stop, EV_TIMEOUT, 0);
}

static void on_stop(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* Every call answered SUCCESS in one callback; the stop runs after the
 * replies are written (it is activated after their write events). */
static void on_complete(evutil_socket_t fd, short what, void *arg)
{
	struct clk_fake *f = arg;

	(void)fd;
	(void)what;
	while (f->clk_fk.hf_ncalls)
		h_fake_reply(&f->clk_fk, 0, 0, 1);
	event_active(f->clk_stop, EV_TIMEOUT, 0);
}

static void start(struct h_gw *h, struct clk_fake *f)
{
	h_fake_init(&f->clk_fk, "fake");
	f->clk_fk.hf_on_submit = on_submit;
	assert_int_equal(h_fake_gw(h, &f->clk_fk, "idle_timeout = 0\nwrite_timeout = 0\n"), 0);
	assert_non_null(f->clk_fk.hf_path);
	f->clk_stop = event_new(h->base, -1, 0, on_stop, h->base);
	assert_non_null(f->clk_stop);
}

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* gw_loop_run until the stop: the passes it ran and the precise reads,
 * each of them counted by the gateway; the gateway's coarse reads (its
 * milliseconds: gw_pass_ms) are one per pass at most. */
static void run(struct event_base *base, struct gw_stats *st, uint64_t *passes, unsigned *reads)
{
	uint64_t p0 = st->gs_ctr[GW_CTR_SYS_LOOP_WAIT], c0 = st->gs_ctr[GW_CTR_SYS_CLOCK];

	n_precise = n_coarse = 0;
	clock_counting = true;
	assert_int_equal(gw_loop_run(base, st), 0);
	clock_counting = false;
	*passes = st->gs_ctr[GW_CTR_SYS_LOOP_WAIT] - p0;
	*reads = n_precise;
	fprintf(stderr, "  %" PRIu64 " loop passes, %u precise clock reads, %u coarse\n", *passes,
		*reads, n_coarse);
	assert_int_equal(st->gs_ctr[GW_CTR_SYS_CLOCK] - c0, *reads);
	assert_true(n_coarse <= *passes);
	assert_false(st->gs_pass_on);
}

static void assert_one_each(const struct gw_hist *gh, uint64_t elapsed_us)
{
	assert_int_equal(gh->gh_count, NCALLS);
	assert_int_equal(gh->gh_bucket[GW_HIST_NBUCKETS - 1], 0);	/* no wrapped difference */
	assert_true(gh->gh_sum_us <= NCALLS * elapsed_us);
	assert_int_equal(gh->gh_sum_us % NCALLS, 0);	/* one reading per pass: equal */
}

/* 1 */
static void t01_one_read_per_pass(void **state)
{
	struct h_gw h;
	struct clk_fake f;
	uint8_t buf[NCALLS * 48], rep[64];
	struct event *complete;
	uint64_t t0, passes;
	unsigned reads;
	size_t n = 0;
	char *text;
	int fd;

	(void)state;
	start(&h, &f);
	fd = h_client(&h);
	h_pump(&h, 20);		/* the connection adopted, nothing pending */
	for (uint32_t i = 0; i < NCALLS; i++)
		n += h_call(buf + n, 0x100 + i, 2, NFS, 3, i);
	t0 = mono_us();
	h_send(fd, buf, n);	/* one write: the records come in one recv */
	run(h.base, &h.st, &passes, &reads);
	assert_int_equal(f.clk_fk.hf_ncalls, NCALLS);
	assert_true(passes == 1 || passes == 2);	/* the 250 ms sweep may add one */
	assert_int_equal(reads, 1);		/* start and hand-off of all eight */

	complete = event_new(h.base, -1, 0, on_complete, &f);
	assert_non_null(complete);
	usleep(2000);		/* a latency the histograms must show */
	event_active(complete, EV_TIMEOUT, 0);
	run(h.base, &h.st, &passes, &reads);
	assert_true(passes == 1 || passes == 2);
	assert_int_equal(reads, 1);		/* the end of all eight */
	for (unsigned i = 0; i < NCALLS; i++)
		assert_int_equal(h_reply(&h, fd, rep, sizeof(rep), 2000), 28);

	t0 = mono_us() - t0;
	assert_one_each(&h.st.gs_hist[GW_HIST_CALL], t0);
	assert_one_each(&h.st.gs_op_hist[gw_op_slot(NFS, 3, 1, NULL)], t0);	/* GETATTR */
	assert_one_each(gw_path_hist(f.clk_fk.hf_path), t0);
	assert_true(h.st.gs_hist[GW_HIST_CALL].gh_sum_us >= NCALLS * 2000);
	text = h_render(&h.st, NULL);
	assert_true(h_sample(text, "rpcrdma_gw_syscalls_total{worker=\"0\",call=\"clock_gettime\"} ")
		    == (double)h.st.gs_ctr[GW_CTR_SYS_CLOCK]);
	free(text);
	event_free(complete);
	event_free(f.clk_stop);
	assert_int_equal(h_gw_end(&h, fd), 0);
}

/* 2 */
struct ticks {
	struct event_base *tk_base;
	struct gw_stats *tk_st;
	unsigned tk_n;
	uint64_t tk_us[2][2];		/* per pass: two reads 2 ms apart */
};

static void tick(evutil_socket_t fd, short what, void *arg)
{
	struct ticks *t = arg;

	(void)fd;
	(void)what;
	t->tk_us[t->tk_n][0] = gw_pass_us(t->tk_st);
	usleep(2000);
	t->tk_us[t->tk_n][1] = gw_pass_us(t->tk_st);
	if (++t->tk_n == 2)
		event_base_loopbreak(t->tk_base);
}

/* Two reads 2 ms apart through st outside any pass: both read the clock. */
static void assert_not_frozen(struct gw_stats *st)
{
	uint64_t a, b, c0 = st ? st->gs_ctr[GW_CTR_SYS_CLOCK] : 0;

	a = gw_pass_us(st);
	usleep(2000);
	b = gw_pass_us(st);
	assert_true(b - a >= 1900 && b - a < 10000000);
	if (st)
		assert_int_equal(st->gs_ctr[GW_CTR_SYS_CLOCK] - c0, 2);
}

static void t02_pass_reading(void **state)
{
	struct timeval tv = { 0, 1000 };
	struct gw_stats *st = calloc(1, sizeof(*st));
	struct ticks t = { .tk_st = st };
	struct event *ev;
	uint64_t passes;
	unsigned reads;

	(void)state;
	assert_non_null(st);
	assert_not_frozen(NULL);
	assert_not_frozen(st);			/* start-up: no loop yet */
	t.tk_base = event_base_new();
	ev = event_new(t.tk_base, -1, EV_PERSIST, tick, &t);
	assert_non_null(ev);
	event_add(ev, &tv);
	run(t.tk_base, st, &passes, &reads);
	assert_int_equal(passes, 2);
	assert_int_equal(reads, 2);
	for (unsigned i = 0; i < 2; i++)
		assert_true(t.tk_us[i][1] == t.tk_us[i][0]);	/* the pass's reading */
	assert_true(t.tk_us[1][0] - t.tk_us[0][0] >= 1900);	/* the next pass's own */
	assert_not_frozen(st);			/* after the run */
	event_free(ev);
	event_base_free(t.tk_base);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_one_read_per_pass),
		cmocka_unit_test(t02_pass_reading),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
