// SPDX-License-Identifier: MIT
/* Unit tests for the credit accounting of backend-rdma (RFC 8166 3.3). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "backend.h"

/* Post n receives and send calls while there is room; returns calls sent. */
static unsigned fill(struct be_credits *cr)
{
	unsigned n = 0;

	while (be_credits_can_send(cr)) {
		be_credits_sent(cr);
		n++;
	}
	return n;
}

/* 1. A new connection sends one call until the first grant arrives. */
static void t01_start_at_one(void **state)
{
	struct be_credits cr;

	(void)state;
	be_credits_init(&cr, 128, 2);
	be_credits_recv_posted(&cr, 132);
	assert_int_equal(cr.cc_grant, 1);
	assert_int_equal(fill(&cr), 1);
	assert_false(be_credits_can_send(&cr));
}

/* 2. The server's grant (kernel: 64) is followed, never exceeded. */
static void t02_follow_grant(void **state)
{
	struct be_credits cr;

	(void)state;
	be_credits_init(&cr, 128, 2);
	be_credits_recv_posted(&cr, 132);
	be_credits_sent(&cr);
	be_credits_recv_used(&cr);
	be_credits_replied(&cr);
	be_credits_recv_posted(&cr, 1);
	be_credits_grant(&cr, 64);
	assert_int_equal(fill(&cr), 64);
	assert_int_equal(cr.cc_inflight, 64);
	assert_int_equal(be_credits_room(&cr), 0);
}

/* 3. A grant of 0 is taken as 1 (never serialise to a halt). */
static void t03_zero_grant(void **state)
{
	struct be_credits cr;

	(void)state;
	be_credits_init(&cr, 128, 2);
	be_credits_recv_posted(&cr, 132);
	be_credits_grant(&cr, 0);
	assert_int_equal(cr.cc_grant, 1);
	assert_int_equal(fill(&cr), 1);
}

/* 4. A grant above what we asked is capped at what we asked. */
static void t04_cap(void **state)
{
	struct be_credits cr;

	(void)state;
	be_credits_init(&cr, 8, 0);
	be_credits_recv_posted(&cr, 100);
	be_credits_grant(&cr, 1000);
	assert_int_equal(cr.cc_grant, 8);
	assert_int_equal(fill(&cr), 8);
}

/* 5. A grant going down: no new call until in flight < new grant. */
static void t05_shrink(void **state)
{
	struct be_credits cr;
	unsigned i;

	(void)state;
	be_credits_init(&cr, 128, 2);
	be_credits_recv_posted(&cr, 132);
	be_credits_grant(&cr, 64);
	assert_int_equal(fill(&cr), 64);
	be_credits_grant(&cr, 16);
	for (i = 0; i < 48; i++) {
		be_credits_recv_used(&cr);
		be_credits_replied(&cr);
		be_credits_recv_posted(&cr, 1);
		assert_false(be_credits_can_send(&cr));
	}
	be_credits_recv_used(&cr);
	be_credits_replied(&cr);
	be_credits_recv_posted(&cr, 1);
	assert_int_equal(be_credits_room(&cr), 1);
}

/* 6. Replies the caller still holds keep their receive buffer: the room
 * shrinks with the receives posted, backchannel reserve kept. */
static void t06_recvs_limit(void **state)
{
	struct be_credits cr;
	unsigned i;

	(void)state;
	be_credits_init(&cr, 64, 2);
	be_credits_recv_posted(&cr, 10);
	be_credits_grant(&cr, 64);
	assert_int_equal(be_credits_room(&cr), 8);
	assert_int_equal(fill(&cr), 8);
	for (i = 0; i < 8; i++) {	/* replies arrive, not released */
		be_credits_recv_used(&cr);
		be_credits_replied(&cr);
	}
	assert_int_equal(be_credits_room(&cr), 0);
	be_credits_recv_posted(&cr, 3);	/* three released */
	assert_int_equal(be_credits_room(&cr), 3);
}

/* 7. Reconnect: back to one credit, nothing in flight, nothing posted. */
static void t07_reset(void **state)
{
	struct be_credits cr;

	(void)state;
	be_credits_init(&cr, 128, 2);
	be_credits_recv_posted(&cr, 132);
	be_credits_grant(&cr, 64);
	fill(&cr);
	be_credits_reset(&cr);
	assert_int_equal(cr.cc_grant, 1);
	assert_int_equal(cr.cc_inflight, 0);
	assert_false(be_credits_can_send(&cr));
	be_credits_recv_posted(&cr, 132);
	assert_int_equal(fill(&cr), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_start_at_one),
		cmocka_unit_test(t02_follow_grant),
		cmocka_unit_test(t03_zero_grant),
		cmocka_unit_test(t04_cap),
		cmocka_unit_test(t05_shrink),
		cmocka_unit_test(t06_recvs_limit),
		cmocka_unit_test(t07_reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
