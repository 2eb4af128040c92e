// SPDX-License-Identifier: MIT
/* Host tests of the background lookup (gateway/lookup.c) that both
 * transports use to resolve their server off the event loop:
 *   1. done runs on the loop after work, and sees what work wrote;
 *      a second start while one runs is refused (EBUSY); a job can run again.
 *   2. destroy while a job runs waits for it and never calls done.
 *   3. destroy of a lookup whose init was never called (zeroed, pipes -1)
 *      and double destroy are harmless. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <errno.h>
#include <stdatomic.h>
#include <unistd.h>

#include <event2/event.h>

#include "lookup.h"

struct tl_job {
	struct event_base *tj_base;
	atomic_int tj_work_runs;
	int tj_done_runs;
	int tj_seen;		/* what done read of work's result */
	int tj_result;		/* written by work */
	unsigned tj_sleep_us;
};

static void tl_work(void *arg)
{
	struct tl_job *j = arg;

	usleep(j->tj_sleep_us);
	j->tj_result = 42 + atomic_fetch_add(&j->tj_work_runs, 1);
}

static void tl_done(void *arg)
{
	struct tl_job *j = arg;

	j->tj_done_runs++;
	j->tj_seen = j->tj_result;
	event_base_loopbreak(j->tj_base);
}

static void t01_done_after_work(void **state)
{
	struct tl_job j = { .tj_base = event_base_new(), .tj_sleep_us = 20000 };
	struct gw_lookup lk;

	(void)state;
	assert_int_equal(gw_lookup_init(&lk, j.tj_base, tl_work, tl_done, &j), 0);
	assert_false(gw_lookup_running(&lk));
	assert_int_equal(gw_lookup_start(&lk), 0);
	assert_true(gw_lookup_running(&lk));
	assert_int_equal(gw_lookup_start(&lk), EBUSY);
	event_base_dispatch(j.tj_base);
	assert_int_equal(j.tj_done_runs, 1);
	assert_int_equal(j.tj_seen, 42);
	assert_false(gw_lookup_running(&lk));
	assert_int_equal(gw_lookup_start(&lk), 0);	/* again */
	event_base_dispatch(j.tj_base);
	assert_int_equal(j.tj_done_runs, 2);
	assert_int_equal(j.tj_seen, 43);
	gw_lookup_destroy(&lk);
	event_base_free(j.tj_base);
}

static void t02_destroy_waits(void **state)
{
	struct tl_job j = { .tj_base = event_base_new(), .tj_sleep_us = 100000 };
	struct gw_lookup lk;

	(void)state;
	assert_int_equal(gw_lookup_init(&lk, j.tj_base, tl_work, tl_done, &j), 0);
	assert_int_equal(gw_lookup_start(&lk), 0);
	gw_lookup_destroy(&lk);	/* joins the sleeping job */
	assert_int_equal(atomic_load(&j.tj_work_runs), 1);
	assert_false(gw_lookup_running(&lk));
	event_base_loop(j.tj_base, EVLOOP_NONBLOCK);
	assert_int_equal(j.tj_done_runs, 0);
	event_base_free(j.tj_base);
}

static void t03_destroy_uninitialised(void **state)
{
	struct gw_lookup lk = { .lk_pipe = { -1, -1 } };

	(void)state;
	gw_lookup_destroy(&lk);
	gw_lookup_destroy(&lk);
	assert_null(lk.lk_ev);
	assert_int_equal(lk.lk_pipe[0], -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_done_after_work),
		cmocka_unit_test(t02_destroy_waits),
		cmocka_unit_test(t03_destroy_uninitialised),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
