// SPDX-License-Identifier: MIT
/*
 * test_gw_hotpath.c - what one forwarded call costs the gateway, counted
 * on a gateway in process (client -> frontend -> gateway -> TCP transport
 * -> tiny server -> reply, test_gw_harness.h):
 *
 *   1. system calls: one small call per wake-up costs one recv() and one
 *      writev() on each side (at most 2 of each, at least 1: a counter not
 *      incremented fails), no event is added (epoll_ctl) for a call, and
 *      /metrics, `stats` and `json stats ops` show the same counts,
 *      calls_forwarded_total and cpu_seconds_total;
 *   2. event loop passes: gw_loop_run counts one per pass that ran
 *      callbacks, returns on a break and when no event is left;
 *   3. no allocation per call: after a warm-up, 200 calls allocate
 *      nothing (malloc, calloc, realloc, aligned_alloc, posix_memalign
 *      counted on the test thread).  Under AddressSanitizer, which owns
 *      the allocator, the calls run and the count is not asserted (said
 *      on stderr);
 *   4. no timer moved per call: with the client timeouts on, calls over
 *      50 ms leave every one-shot timer where it was (a client's idle
 *      timer re-armed per call is a timer-heap update and a clock read
 *      each time);
 *   5. replies written by fe_flush(), the worker loop's prewait: once it
 *      is in use, a reply the gateway has waits for it (no write event
 *      made active per reply), five replies go out in one writev(), and a
 *      client that goes while its reply waits leaves nothing behind.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <json.h>

#include "alloc_count.h"
#include "chunking.h"
#include "config.h"
#include "frontend.h"
#include "gateway.h"
#include "log.h"
#include "ops.h"
#include "test_gw_harness.h"
#include "worker.h"

static void gw_up_timeouts(struct h_gw *h, struct h_server *s, const char *timeouts)
{
	char text[512];

	h_server_init(s);
	h_server_start(s);
	snprintf(text, sizeof(text),
		 "[gateway]\nbuffer_size = 16k\nbuffers = 64\nmax_record = 64k\nmax_calls = 64\n%s"
		 "[backend srv]\naddress = 127.0.0.1\n"
		 "[route nfs]\nprogram = nfs\nversions = 3-4\ntransport = tcp\nport = %u\n",
		 timeouts, s->port);
	h_gw_start(h, text);
}

/* Client timeouts off for tests 1-3, which count sockets, events and
 * allocations; test 4 turns them on. */
static void gw_up(struct h_gw *h, struct h_server *s)
{
	gw_up_timeouts(h, s, "idle_timeout = 0\nwrite_timeout = 0\n");
}

static void gw_down(struct h_gw *h, struct h_server *s)
{
	assert_int_equal(h_gw_stop(h), 0);
	h_server_stop(s, true);
}

/* One GETATTR through the gateway, its reply read (the loop pumped
 * without a timer: event_base_loopexit would allocate one). */
static void one_call(struct h_gw *h, int fd, uint32_t xid)
{
	uint8_t buf[256];

	h_send(fd, buf, h_call(buf, xid, 2, 100003, 3, xid));
	assert_int_equal(h_reply(h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf + 24), xid);	/* the tag: this call's reply */
}

static char *drain(struct evbuffer *b)
{
	size_t n = evbuffer_get_length(b);
	char *s = malloc(n + 1);

	evbuffer_remove(b, s, n);
	s[n] = '\0';
	evbuffer_free(b);
	return s;
}

/* The value of the sample line starting with prefix, or -1. */
static double sample(const char *text, const char *prefix)
{
	char key[256];
	const char *s;

	snprintf(key, sizeof(key), "\n%s", prefix);
	s = strstr(text, key);
	if (!s)
		return -1;
	s = strchr(s + strlen(key) - 1, ' ');
	return s ? strtod(s + 1, NULL) : -1;
}

/* 1 */
static void test_syscalls_per_call(void **state)
{
	static const enum gw_ctr ctrs[] = { GW_CTR_SYS_CLIENT_RECV, GW_CTR_SYS_CLIENT_WRITEV,
					    GW_CTR_SYS_SERVER_RECV, GW_CTR_SYS_SERVER_WRITEV };
	const unsigned n = 50;
	uint64_t before[4];
	struct h_server s;
	struct h_gw h;
	struct evbuffer *b;
	char *r, key[96];
	int fd, rest;

	(void)state;
	gw_up(&h, &s);
	fd = h_client(&h);
	for (uint32_t x = 1; x <= 3; x++)	/* warm-up: the backend connection is up */
		one_call(&h, fd, x);
	h_pump(&h, 20);
	for (unsigned i = 0; i < 4; i++)
		before[i] = h.st.gs_ctr[ctrs[i]];
	rest = event_base_get_num_events(h.base, EVENT_BASE_COUNT_ADDED);
	event_base_get_max_events(h.base, EVENT_BASE_COUNT_ADDED, 1);
	for (uint32_t x = 100; x < 100 + n; x++)
		one_call(&h, fd, x);
	h_pump(&h, 20);
	/* No event is added for a call (a write event added and removed per
	 * call is two epoll_ctl and a loop pass): sockets with room are
	 * written from the loop pass that has the data.  The peak may be one
	 * above rest: libevent re-arms a timer inside its loop (the gateway
	 * calls no event_add during these calls); the TCP transport adding
	 * its write event per call made it two. */
	assert_true(event_base_get_max_events(h.base, EVENT_BASE_COUNT_ADDED, 0) <= rest + 1);
	for (unsigned i = 0; i < 4; i++) {
		uint64_t d = h.st.gs_ctr[ctrs[i]] - before[i];

		fprintf(stderr, "  %s: %.2f per call\n", gw_ctr_str(ctrs[i]), (double)d / n);
		assert_true(d >= n);		/* every call needs one */
		assert_true(d <= 2 * n);	/* one small call per wake-up */
	}
	assert_int_equal(h.st.gs_hist[GW_HIST_CALL].gh_count, n + 3);

	b = evbuffer_new();
	gw_metrics_render(b, &h.st, h.gw);
	r = drain(b);
	assert_true(sample(r, "rpcrdma_gw_calls_forwarded_total{worker=\"0\"} ") == n + 3);
	assert_true(sample(r, "rpcrdma_gw_cpu_seconds_total{worker=\"0\",mode=\"user\"} ") >= 0);
	assert_true(sample(r, "rpcrdma_gw_cpu_seconds_total{worker=\"0\",mode=\"system\"} ") >= 0);
	for (unsigned i = 0; i < 4; i++) {
		const char *name;
		enum gw_ctr c;

		name = gw_sys_call_name(i, &c);
		assert_non_null(name);
		assert_int_equal(c, ctrs[i]);
		snprintf(key, sizeof(key), "rpcrdma_gw_syscalls_total{worker=\"0\",call=\"%s\"} ", name);
		assert_true(sample(r, key) == (double)h.st.gs_ctr[c]);
	}
	assert_true(sample(r, "rpcrdma_gw_syscalls_total{worker=\"0\",call=\"epoll_wait\"} ") == 0);
	free(r);

	{	/* gwctl stats and stats --ops: per forwarded call */
		char path[64];
		struct gw_ctl *ct;
		struct json_object *jo, *cpu, *v;

		snprintf(path, sizeof(path), "/tmp/test_gw_hotpath.%d", (int)getpid());
		ct = gw_ctl_new(h.base, h.gw, path, NULL);
		assert_non_null(ct);
		b = evbuffer_new();
		gw_ctl_exec(ct, "stats", b);
		r = drain(b);
		snprintf(key, sizeof(key), "per forwarded call (%u calls): cpu user ", n + 3);
		assert_non_null(strstr(r, key));
		assert_non_null(strstr(r, "; syscalls client_recv "));
		free(r);
		b = evbuffer_new();
		gw_ctl_exec(ct, "json stats ops", b);
		r = drain(b);
		*strchr(r, '\n') = '\0';
		jo = json_tokener_parse(r);
		assert_non_null(jo);
		assert_true(json_object_object_get_ex(jo, "cpu", &cpu));
		assert_true(json_object_object_get_ex(cpu, "calls_forwarded", &v));
		assert_int_equal(json_object_get_int64(v), n + 3);
		assert_true(json_object_object_get_ex(cpu, "syscalls", &v));
		assert_true(json_object_object_get_ex(v, "client_recv", &v));
		assert_int_equal(json_object_get_int64(v), h.st.gs_ctr[GW_CTR_SYS_CLIENT_RECV]);
		/* -i: the interval's calls only (prev = the same answer: none) */
		b = evbuffer_new();
		gw_cpu_per_call(cpu, cpu, b, NULL);
		free(r);
		r = drain(b);
		assert_non_null(strstr(r, "per forwarded call (0 calls)"));
		free(r);
		json_object_put(jo);
		gw_ctl_free(ct);
	}
	close(fd);
	h_pump(&h, 20);
	gw_down(&h, &s);
}

/* 2 */
struct passes {
	struct event_base *pa_base;
	unsigned pa_fired, pa_stop;
};

static void tick(evutil_socket_t fd, short what, void *arg)
{
	struct passes *p = arg;

	(void)fd;
	(void)what;
	if (++p->pa_fired == p->pa_stop)
		event_base_loopbreak(p->pa_base);
}

static void test_loop_passes(void **state)
{
	struct timeval tv = { 0, 1000 };
	struct passes p = { .pa_stop = 5 };
	struct gw_stats st;
	struct event *ev;

	(void)state;
	memset(&st, 0, sizeof(st));
	p.pa_base = event_base_new();
	assert_non_null(p.pa_base);
	/* no event: returns at once, no pass */
	assert_int_equal(gw_loop_run(p.pa_base, &st, NULL, NULL), 0);
	assert_int_equal(st.gs_ctr[GW_CTR_SYS_LOOP_WAIT], 0);
	ev = event_new(p.pa_base, -1, EV_PERSIST, tick, &p);
	assert_non_null(ev);
	event_add(ev, &tv);
	assert_int_equal(gw_loop_run(p.pa_base, &st, NULL, NULL), 0);	/* the break */
	assert_int_equal(p.pa_fired, 5);
	assert_int_equal(st.gs_ctr[GW_CTR_SYS_LOOP_WAIT], 5);	/* one pass per tick */
	event_free(ev);
	event_base_free(p.pa_base);
}

/* 3 */
static void test_no_allocation_per_call(void **state)
{
	struct h_server s;
	struct h_gw h;
	int fd;

	(void)state;
	gw_up(&h, &s);
	fd = h_client(&h);
	for (uint32_t x = 1; x <= 20; x++)	/* warm-up: connection, timers, heaps */
		one_call(&h, fd, x);
	n_allocs = 0;
	alloc_counting = true;
	for (uint32_t x = 1000; x < 1200; x++)
		one_call(&h, fd, x);
	alloc_counting = false;
	assert_int_equal(h.st.gs_hist[GW_HIST_CALL].gh_count, 220);
#ifdef ALLOC_COUNT_ON
	fprintf(stderr, "  allocations in 200 calls: %u\n", n_allocs);
	assert_int_equal(n_allocs, 0);
#else
	fprintf(stderr, "  AddressSanitizer owns the allocator: allocations not counted\n");
#endif
	close(fd);
	h_pump(&h, 20);
	gw_down(&h, &s);
}

/* 4 */
#define MAX_TIMERS 64
struct timers {
	unsigned tm_n;
	const struct event *tm_ev[MAX_TIMERS];
	struct timeval tm_at[MAX_TIMERS];
};

static int timer_seen(const struct event_base *base, const struct event *ev, void *arg)
{
	struct timers *t = arg;

	(void)base;
	if ((event_get_events(ev) & EV_PERSIST) || !event_pending(ev, EV_TIMEOUT, NULL))
		return 0;
	assert_true(t->tm_n < MAX_TIMERS);
	event_pending(ev, EV_TIMEOUT, &t->tm_at[t->tm_n]);
	t->tm_ev[t->tm_n++] = ev;
	return 0;
}

static void test_no_timer_moved_per_call(void **state)
{
	struct timers before = { 0 }, after = { 0 };
	struct h_server s;
	struct h_gw h;
	unsigned same = 0;
	int fd;

	(void)state;
	gw_up_timeouts(&h, &s, "idle_timeout = 60s\nwrite_timeout = 60s\n");
	fd = h_client(&h);
	for (uint32_t x = 1; x <= 3; x++)
		one_call(&h, fd, x);
	h_pump(&h, 20);
	event_base_foreach_event(h.base, timer_seen, &before);
	assert_true(before.tm_n >= 1);		/* the client's idle timer at least */
	for (uint32_t x = 100; x < 150; x++) {
		one_call(&h, fd, x);
		if (x % 10 == 0)
			h_pump(&h, 10);		/* the clock moves on: 50 ms in all */
	}
	event_base_foreach_event(h.base, timer_seen, &after);
	for (unsigned i = 0; i < before.tm_n; i++)
		for (unsigned j = 0; j < after.tm_n; j++) {
			long d;

			if (after.tm_ev[j] != before.tm_ev[i])
				continue;
			d = (after.tm_at[j].tv_sec - before.tm_at[i].tv_sec) * 1000 +
			    (after.tm_at[j].tv_usec - before.tm_at[i].tv_usec) / 1000;
			fprintf(stderr, "  a one-shot timer moved by %ld ms over 50 calls\n", d);
			assert_true(d > -5 && d < 5);
			same++;
		}
	assert_true(same >= 1);
	close(fd);
	h_pump(&h, 20);
	gw_down(&h, &s);
}

/* 5: loop passes (no prewait) until the client has output due, or 3 s. */
static bool due_after_pumping(struct h_gw *h)
{
	uint64_t end = gw_now_ms() + 3000;

	while (!fe_flush_due(h->fe) && gw_now_ms() < end)
		event_base_loop(h->base, EVLOOP_NONBLOCK);
	return fe_flush_due(h->fe);
}

static bool readable_now(int fd)
{
	struct pollfd pfd = { fd, POLLIN, 0 };

	return poll(&pfd, 1, 0) == 1;
}

static void test_replies_written_at_flush(void **state)
{
	uint64_t writev0, replies0;
	uint8_t buf[512];
	struct h_server s;
	struct h_gw h;
	size_t n = 0;
	int fd;

	(void)state;
	gw_up(&h, &s);
	fd = h_client(&h);
	one_call(&h, fd, 1);			/* before: written from the loop */
	fe_flush(h.fe);				/* the prewait is in use from now */
	h_send(fd, buf, h_call(buf, 2, 2, 100003, 3, 2));
	assert_true(due_after_pumping(&h));
	h_pump(&h, 20);
	assert_false(readable_now(fd));		/* no pass wrote it */
	fe_flush(h.fe);
	assert_false(fe_flush_due(h.fe));
	assert_true(readable_now(fd));		/* written by the call itself */
	assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
	assert_int_equal(chk_be32(buf + 24), 2);

	/* Five calls answered over several passes: one writev() at the end. */
	for (uint32_t x = 10; x < 15; x++)
		n += h_call(buf + n, x, 2, 100003, 3, x);
	h_send(fd, buf, n);
	while (h_server_calls(&s) < 1 + 1 + 5)	/* warm-up, call 2, these */
		h_pump(&h, 5);
	h_pump(&h, 50);				/* their replies read */
	assert_true(fe_flush_due(h.fe));
	writev0 = h.st.gs_ctr[GW_CTR_SYS_CLIENT_WRITEV];
	replies0 = h.st.gs_ctr[GW_CTR_REPLIES];
	fe_flush(h.fe);
	assert_int_equal(h.st.gs_ctr[GW_CTR_SYS_CLIENT_WRITEV] - writev0, 1);
	assert_int_equal(h.st.gs_ctr[GW_CTR_REPLIES] - replies0, 5);
	for (uint32_t x = 10; x < 15; x++) {
		assert_int_equal(h_reply(&h, fd, buf, sizeof(buf), 3000), 28);
		assert_int_equal(chk_be32(buf + 24), x);
	}

	/* A client gone while its reply waits: off the list, nothing written. */
	h_send(fd, buf, h_call(buf, 20, 2, 100003, 3, 20));
	assert_true(due_after_pumping(&h));
	close(fd);
	for (uint64_t end = gw_now_ms() + 3000; fe_nconns(h.fe) && gw_now_ms() < end;)
		event_base_loop(h.base, EVLOOP_NONBLOCK);
	assert_int_equal(fe_nconns(h.fe), 0);
	assert_false(fe_flush_due(h.fe));
	writev0 = h.st.gs_ctr[GW_CTR_SYS_CLIENT_WRITEV];
	fe_flush(h.fe);
	assert_int_equal(h.st.gs_ctr[GW_CTR_SYS_CLIENT_WRITEV], writev0);
	gw_down(&h, &s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syscalls_per_call),
		cmocka_unit_test(test_loop_passes),
		cmocka_unit_test(test_no_allocation_per_call),
		cmocka_unit_test(test_no_timer_moved_per_call),
		cmocka_unit_test(test_replies_written_at_flush),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
