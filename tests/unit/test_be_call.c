// SPDX-License-Identifier: MIT
/* Unit tests of the life of a backend call (backend-rdma/be_call.c) that
 * need no RDMA device: calls queued on a pool that never connects, ended
 * by cancel or by be_pool_free(), then released.
 *
 * Issue 6 (intermittent SIGSEGV in ibv_dereg_mr): call_new() cleared only
 * the head of struct be_call, and call_free() deregistered and freed the
 * long-reply state found in the uncleared tail.  Fresh heap memory is zero,
 * so only calls carved from recycled memory crashed.  Here aligned_alloc()
 * hands out memory full of a junk pattern, as recycled memory would be, and
 * ibv_dereg_mr() is a fake that fails the test: no call in these tests ever
 * registers an MR, so none may be deregistered. */
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

/* Interposes libc's: every aligned_alloc() of the backend (calls,
 * connections) returns memory holding junk, like a recycled heap chunk. */
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

static void reply_cb(struct be_call *call, const struct be_reply *r, void *arg)
{
	struct cb_log *log = arg;

	if (log->n < 8)
		log->err[log->n] = r->br_err;
	log->n++;
	be_call_release(call);	/* frees the call: the path under test */
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

static struct be_call *submit(struct bed *b, uint32_t xid, uint8_t *msg, struct iovec *iov,
			      struct cb_log *log)
{
	struct be_call_desc d;
	struct be_call *ca;

	memset(msg, 0, 40);
	chk_put_be32(msg, xid);
	*iov = (struct iovec){ msg, 40 };
	d = (struct be_call_desc){ .cd_xid = xid, .cd_msg = iov, .cd_msg_niov = 1 };
	ca = be_call_submit(b->pool, &d, reply_cb, log);
	assert_non_null(ca);
	return ca;
}

/* 1. Calls queued when the pool is freed end with BE_ERR_SHUTDOWN; the
 * callback releases them and nothing is deregistered. */
static void t01_queued_then_pool_freed(void **state)
{
	struct cb_log log = { 0 };
	uint8_t msg[4][40];
	struct iovec iov[4];
	struct bed b;

	(void)state;
	bed_up(&b);
	n_alloc = 0;
	for (uint32_t i = 0; i < 4; i++)
		submit(&b, 0x1000 + i, msg[i], &iov[i], &log);
	/* The calls came from the junk allocator, unless a checker replaced
	 * it (valgrind: memcheck then reports the uninitialised reads). */
	if (n_alloc == 0)
		skip();
	assert_int_equal(be_pool_queued(b.pool), 4);
	assert_int_equal(log.n, 0);
	be_pool_free(b.pool);
	b.pool = NULL;
	assert_int_equal(log.n, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(log.err[i], BE_ERR_SHUTDOWN);
	bed_down(&b);
}

/* 2. A queued call cancelled by its owner is freed by the backend at once,
 * without a callback; the others still end at be_pool_free(). */
static void t02_cancel_queued(void **state)
{
	struct cb_log log = { 0 };
	uint8_t msg[2][40];
	struct iovec iov[2];
	struct be_call *ca;
	struct bed b;

	(void)state;
	bed_up(&b);
	ca = submit(&b, 0x2000, msg[0], &iov[0], &log);
	submit(&b, 0x2001, msg[1], &iov[1], &log);
	be_call_cancel(ca);
	assert_int_equal(be_pool_queued(b.pool), 1);
	assert_int_equal(log.n, 0);
	be_pool_free(b.pool);
	b.pool = NULL;
	assert_int_equal(log.n, 1);
	assert_int_equal(log.err[0], BE_ERR_SHUTDOWN);
	bed_down(&b);
}

/* 3. Finished calls are kept by the pool and reused: a thousand calls in
 * turn allocate one call object (no allocation per call), and each reuse
 * starts clean (the junk check of t01 applies to the reused object too). */
static void t03_calls_reused(void **state)
{
	struct cb_log log = { 0 };
	uint8_t msg[2][40];
	struct iovec iov[2];
	struct bed b;

	(void)state;
	bed_up(&b);
	n_alloc = 0;
	for (uint32_t i = 0; i < 1000; i++)
		be_call_cancel(submit(&b, 0x3000 + i, msg[0], &iov[0], &log));
	if (n_alloc == 0)
		skip();	/* a checker replaced the allocator, as in t01 */
	assert_int_equal(n_alloc, 1);
	assert_int_equal(be_pool_queued(b.pool), 0);
	submit(&b, 0x4000, msg[1], &iov[1], &log);
	assert_int_equal(n_alloc, 1);
	be_pool_free(b.pool);
	b.pool = NULL;
	assert_int_equal(log.n, 1);
	assert_int_equal(log.err[0], BE_ERR_SHUTDOWN);
	bed_down(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_queued_then_pool_freed),
		cmocka_unit_test(t02_cancel_queued),
		cmocka_unit_test(t03_calls_reused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
