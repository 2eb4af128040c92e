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
 *      reads 2 ms apart differ: nothing is frozen;
 *   3. the loop's prewait (the RDMA completion queues' poll) runs at the
 *      start of every pass, inside it: while it says it handled work the
 *      pass does not block (a 30 s timer never fires), and a reading it
 *      took serves that pass; once it says none, the pass blocks.
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
#include "worker.h"

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
	assert_int_equal(gw_loop_run(base, st, NULL, NULL), 0);
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

struct pw {
	struct event_base *pw_base;
	struct gw_stats *pw_st;
	struct event *pw_go;
	unsigned pw_calls, pw_busy;	/* calls; the first pw_busy say "work" */
	bool pw_off_pass;		/* called outside a pass */
	uint64_t pw_us, pw_go_us;	/* the reading in the last busy call, in go */
	bool pw_timer;
};

static bool prewait(void *arg)
{
	struct pw *p = arg;

	p->pw_off_pass |= !p->pw_st->gs_pass_on;
	if (++p->pw_calls > p->pw_busy)
		return false;
	if (p->pw_calls == p->pw_busy) {
		p->pw_us = gw_pass_us(p->pw_st);
		event_active(p->pw_go, 0, 0);
	}
	return true;
}

static void pw_go(evutil_socket_t fd, short what, void *arg)
{
	struct pw *p = arg;

	(void)fd;
	(void)what;
	p->pw_go_us = gw_pass_us(p->pw_st);
	event_base_loopbreak(p->pw_base);
}

static void pw_timer(evutil_socket_t fd, short what, void *arg)
{
	struct pw *p = arg;

	(void)fd;
	(void)what;
	p->pw_timer = true;
	event_base_loopbreak(p->pw_base);
}

static void t03_prewait(void **state)
{
	struct timeval long_tv = { 30, 0 }, short_tv = { 0, 5000 };
	struct gw_stats *st = calloc(1, sizeof(*st));
	struct pw p = { .pw_st = st, .pw_busy = 4 };
	struct event *tm;
	uint64_t p0;

	(void)state;
	assert_non_null(st);
	p.pw_base = event_base_new();
	p.pw_go = event_new(p.pw_base, -1, 0, pw_go, &p);
	tm = event_new(p.pw_base, -1, 0, pw_timer, &p);
	assert_non_null(p.pw_go);
	assert_non_null(tm);
	event_add(tm, &long_tv);
	p0 = st->gs_ctr[GW_CTR_SYS_LOOP_WAIT];
	assert_int_equal(gw_loop_run(p.pw_base, st, prewait, &p), 0);
	assert_false(p.pw_timer);		/* no pass blocked */
	assert_int_equal(p.pw_calls, 4);
	assert_int_equal(st->gs_ctr[GW_CTR_SYS_LOOP_WAIT] - p0, 4);
	assert_false(p.pw_off_pass);
	assert_true(p.pw_us != 0 && p.pw_go_us == p.pw_us);	/* one pass's reading */

	/* Nothing handled: the pass blocks until the timer. */
	p.pw_calls = 0;
	p.pw_busy = 0;
	event_del(tm);
	event_add(tm, &short_tv);
	assert_int_equal(gw_loop_run(p.pw_base, st, prewait, &p), 0);
	assert_true(p.pw_timer);
	assert_int_equal(p.pw_calls, 1);
	event_free(tm);
	event_free(p.pw_go);
	event_base_free(p.pw_base);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_one_read_per_pass),
		cmocka_unit_test(t02_pass_reading),
		cmocka_unit_test(t03_prewait),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
