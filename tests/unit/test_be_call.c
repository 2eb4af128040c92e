// SPDX-License-Identifier: MIT
/* Unit tests of the life of a backend call (backend-rdma/be_call.c) that
 * need no RDMA device: calls (struct be_req, the caller's memory) queued
 * on a pool that never connects, ended by cancel or by be_pool_free(),
 * then released.
 *
 * aligned_alloc() is counted and hands out memory full of a junk pattern,
 * as recycled memory would be (issue 6: uncleared per-call state made the
 * release deregister junk pointers), and ibv_dereg_mr() is a fake that
 * fails the test: no call in these tests ever registers an MR, so none may
 * be deregistered. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <event2/event.h>
#include <infiniband/verbs.h>

#include "backend.h"

#define JUNK 0xa5

static unsigned n_alloc;

/* Interposes libc's: every aligned_alloc() of the backend (connections
 * and their per-post arrays) returns memory holding junk, like a recycled
 * heap chunk. */
void *aligned_alloc(size_t align, size_t size)
{
	void *p = NULL;

	if (posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, size))
		return NULL;
	memset(p, JUNK, size);
	n_alloc++;
	return p;
}

/* Interposes libibverbs': no MR exists in these tests. */
int ibv_dereg_mr(struct ibv_mr *mr)
{
	fail_msg("ibv_dereg_mr(%p) of a memory region nobody registered", (void *)mr);
	return 0;
}

struct cb_log {
	unsigned n;
	enum be_err err[8];
};

static void reply_cb(struct be_req *call, const struct be_reply *r, void *arg)
{
	struct cb_log *log = arg;

	if (log->n < 8)
		log->err[log->n] = r->br_err;
	log->n++;
	be_call_release(call);	/* the request is the caller's again */
}

struct bed {
	struct event_base *base;
	struct be_ctx *ctx;
	struct be_pool *pool;
};

/* A pool towards 127.0.0.1 port 9: without an RDMA device (or without a
 * server) it never comes up, so calls stay queued. */
static void bed_up(struct bed *b)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(9) };

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	b->base = event_base_new();
	assert_non_null(b->base);
	b->ctx = be_ctx_new(b->base, NULL);
	assert_non_null(b->ctx);
	b->pool = be_pool_new(b->ctx, (const struct sockaddr *)&sin, sizeof(sin), NULL, NULL);
	assert_non_null(b->pool);
}

static void bed_down(struct bed *b)
{
	be_pool_free(b->pool);
	be_ctx_free(b->ctx);
	event_base_free(b->base);
}

static struct be_req *submit(struct bed *b, struct be_req *rq, uint32_t xid, uint8_t *msg,
			     struct iovec *iov, struct cb_log *log)
{
	struct be_call_desc d;

	memset(msg, 0, 40);
	chk_put_be32(msg, xid);
	*iov = (struct iovec){ msg, 40 };
	d = (struct be_call_desc){ .cd_xid = xid, .cd_msg = iov, .cd_msg_niov = 1 };
	assert_int_equal(be_call_submit(b->pool, rq, &d, reply_cb, log), 0);
	return rq;
}

/* 1. Calls queued when the pool is freed end with BE_ERR_SHUTDOWN; the
 * callback releases them (IDLE again) and nothing is deregistered. */
static void t01_queued_then_pool_freed(void **state)
{
	struct cb_log log = { 0 };
	uint8_t msg[4][40];
	struct iovec iov[4];
	struct be_req rq[4];
	struct bed b;

	(void)state;
	memset(rq, 0, sizeof(rq));
	bed_up(&b);
	for (uint32_t i = 0; i < 4; i++) {
		submit(&b, &rq[i], 0x1000 + i, msg[i], &iov[i], &log);
		assert_int_equal(rq[i].bq_state, BE_REQ_QUEUED);
	}
	assert_int_equal(be_pool_queued(b.pool), 4);
	assert_int_equal(log.n, 0);
	be_pool_free(b.pool);
	b.pool = NULL;
	assert_int_equal(log.n, 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_int_equal(log.err[i], BE_ERR_SHUTDOWN);
		assert_int_equal(rq[i].bq_state, BE_REQ_IDLE);
	}
	bed_down(&b);
}

/* 2. A queued call cancelled by its owner is gone at once, without a
 * callback, the request IDLE (the caller's); the others still end at
 * be_pool_free(). */
static void t02_cancel_queued(void **state)
{
	struct cb_log log = { 0 };
	uint8_t msg[2][40];
	struct iovec iov[2];
	struct be_req rq[2];
	struct bed b;

	(void)state;
	memset(rq, 0, sizeof(rq));
	bed_up(&b);
	submit(&b, &rq[0], 0x2000, msg[0], &iov[0], &log);
	submit(&b, &rq[1], 0x2001, msg[1], &iov[1], &log);
	assert_true(be_call_cancel(&rq[0]));
	assert_int_equal(rq[0].bq_state, BE_REQ_IDLE);
	assert_false(be_call_cancel(&rq[0]));	/* nothing left to cancel */
	assert_int_equal(be_pool_queued(b.pool), 1);
	assert_int_equal(log.n, 0);
	be_pool_free(b.pool);
	b.pool = NULL;
	assert_int_equal(log.n, 1);
	assert_int_equal(log.err[0], BE_ERR_SHUTDOWN);
	bed_down(&b);
}

/* 3. No allocation per call: the request is the caller's memory, so a
 * thousand calls in turn, and a burst of calls queued together (more than
 * any cache of call objects would hold), allocate nothing. */
static void t03_no_allocation_per_call(void **state)
{
	enum { BURST = 600 };
	struct cb_log log = { 0 };
	static uint8_t msg[BURST][40];
	static struct iovec iov[BURST];
	static struct be_req rq[BURST];
	struct bed b;

	(void)state;
	memset(rq, 0, sizeof(rq));
	bed_up(&b);
	n_alloc = 0;
	for (uint32_t i = 0; i < 1000; i++)
		assert_true(be_call_cancel(submit(&b, &rq[0], 0x3000 + i, msg[0], &iov[0], &log)));
	assert_int_equal(be_pool_queued(b.pool), 0);
	for (uint32_t i = 0; i < BURST; i++)
		submit(&b, &rq[i], 0x4000 + i, msg[i], &iov[i], &log);
	assert_int_equal(be_pool_queued(b.pool), BURST);
	assert_int_equal(n_alloc, 0);
	be_pool_free(b.pool);
	b.pool = NULL;
	assert_int_equal(log.n, BURST);
	assert_int_equal(log.err[0], BE_ERR_SHUTDOWN);
	bed_down(&b);
}

/* 4. A request that is not IDLE is refused (-EBUSY), and a descriptor
 * outside the limits (-EINVAL) leaves the request IDLE. */
static void t04_submit_refusals(void **state)
{
	struct cb_log log = { 0 };
	uint8_t msg[40];
	struct iovec iov;
	struct be_target wt = { &iov, BE_MAX_TARGET_IOV + 1 };
	struct be_call_desc d;
	struct be_req rq;
	struct bed b;

	(void)state;
	memset(&rq, 0, sizeof(rq));
	bed_up(&b);
	submit(&b, &rq, 0x5000, msg, &iov, &log);
	d = (struct be_call_desc){ .cd_xid = 0x5000, .cd_msg = &iov, .cd_msg_niov = 1 };
	assert_int_equal(be_call_submit(b.pool, &rq, &d, reply_cb, &log), -EBUSY);
	assert_true(be_call_cancel(&rq));
	d.cd_writes = &wt;
	d.cd_nwrites = 1;
	assert_int_equal(be_call_submit(b.pool, &rq, &d, reply_cb, &log), -EINVAL);
	assert_int_equal(rq.bq_state, BE_REQ_IDLE);
	assert_int_equal(be_pool_queued(b.pool), 0);
	bed_down(&b);
	assert_int_equal(log.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_queued_then_pool_freed),
		cmocka_unit_test(t02_cancel_queued),
		cmocka_unit_test(t03_no_allocation_per_call),
		cmocka_unit_test(t04_submit_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
