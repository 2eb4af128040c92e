// SPDX-License-Identifier: MIT
/*
 * Unit tests of backend-rdma's batched posting at its verbs seam, on the
 * fake device of fake/be_fake.c: the calls made ready in one loop pass go
 * out at its end, each connection's in one ibv_post_send() (one doorbell),
 * in submit order, window binds before their Send, with the send ring's
 * signal rule kept; a refused post fails the call the provider refused and
 * sends those after it later, the ring's accounting intact, and a call
 * refused after one of its binds went out fails the connection; a call
 * with large chunks goes at once.  Once the loop calls be_ctx_prewait(),
 * a woken CQ stays unarmed while passes keep finding completions, and is
 * re-armed once, when a poll finds it empty.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <cmocka.h>

#include <event2/event.h>

#include "backend.h"
#include "be_internal.h"
#include "fake/be_fake.h"

static struct be_conn *conn0(struct bench *b)
{
	return b->pool->bp_slots[0].sl_conn;
}

/* One call answered on each connection: a new connection's grant is 1
 * until a reply grants more (the fake grants 8).  Its slot is the last. */
static void warm_up(struct bench *b)
{
	for (unsigned k = 0; k < fdev.nconns; k++) {
		uint32_t xid = 90 + k;	/* XID mod connections = k */

		assert_non_null(submit(b, MAXCALLS - 1, xid));
		spin(b, 2);
		answer_all(b, fdev.conns[k], &xid, 1);
		assert_int_equal(cb_count(b, xid), 1);
		be_call_release(&b->req[MAXCALLS - 1]);
	}
	b->ncb = 0;
}

/* The first Send record of xid, or -1. */
static int first_send_of(const struct fconn *fc, uint32_t xid)
{
	for (unsigned i = 0; i < fc->nsends; i++)
		if (fc->sends[i].op == IBV_WR_SEND && fc->sends[i].xid == xid)
			return (int)i;
	return -1;
}

/* The bench with one connection (memory windows, the default), credits
 * per call if not 0, past the warm-up. */
static void one_conn_up(struct bench *b, unsigned credits)
{
	struct be_config cfg;

	be_config_default(&cfg);
	cfg.bc_conns = 1;
	if (credits)
		cfg.bc_credits = credits;
	bench_up(b, &cfg);
	warm_up(b);
}

/* Complete every signaled Send of fc and answer xids[0..n): afterwards
 * every send buffer and all send-queue room must be back. */
static void finish_all(struct bench *b, struct fconn *fc, const uint32_t *xids, unsigned n)
{
	unsigned done = fc->nsends;

	for (unsigned i = 0; i < fc->nsends; i++)
		if (fc->sends[i].op == IBV_WR_SEND && (fc->sends[i].flags & IBV_SEND_SIGNALED))
			queue_wc(fc, fc->sends[i].wr_id, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	answer_all(b, fc, xids, n);
	for (unsigned i = done; i < fc->nsends; i++)	/* the windows' invalidations */
		if (fc->sends[i].op == IBV_WR_LOCAL_INV && (fc->sends[i].flags & IBV_SEND_SIGNALED))
			queue_wc(fc, fc->sends[i].wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0);
	spin(b, 5);
}

/* 20. Eight calls submitted in one pass: nothing is posted before the
 * pass ends, then one ibv_post_send() carries all eight Sends, in submit
 * order, the sixth signaled (cn_send_batch 6) as one at a time would have
 * it; every call is answered once and the ring gives everything back. */
static void t20_one_doorbell_per_pass(void **state)
{
	static const uint32_t x[8] = { 2001, 2002, 2003, 2004, 2005, 2006, 2007, 2008 };
	const struct be_stats *st;
	struct be_conn *cn;
	struct bench b;
	struct fconn *fc;
	unsigned p0, nfree0, ring0, sig;
	uint64_t d0;

	(void)state;
	one_conn_up(&b, 8);			/* 12 send buffers: signal every 6th */
	fc = cur();
	cn = conn0(&b);
	st = be_ctx_stats(b.ctx);
	assert_int_equal(cn->cn_send_batch, 6);
	p0 = fc->nposts;
	d0 = st->bs_send_doorbells;
	nfree0 = cn->cn_nsfree;
	ring0 = cn->cn_ring_tail - cn->cn_ring_head;
	sig = cn->cn_send_batch - 1 - cn->cn_unsig;	/* the one the rule signals */
	assert_true(sig < 8);

	for (unsigned i = 0; i < 8; i++)
		assert_non_null(submit(&b, i, x[i]));
	assert_int_equal(fc->nposts, p0);	/* not from inside be_call_submit() */
	spin(&b, 2);
	assert_int_equal(fc->nposts, p0 + 1);
	assert_int_equal(fc->post_wrs[p0], 8);
	assert_int_equal(st->bs_send_doorbells - d0, 1);
	for (unsigned i = 0; i < 8; i++) {
		int s = first_send_of(fc, x[i]);

		assert_int_equal(s, first_send_of(fc, x[0]) + (int)i);	/* in order */
		assert_int_equal(fc->sends[s].flags & IBV_SEND_SIGNALED,
				 i == sig ? IBV_SEND_SIGNALED : 0);
	}
	assert_int_equal(cn->cn_sig_out, 1);
	assert_int_equal(cn->cn_nsfree, nfree0 - 8);
	assert_int_equal(cn->cn_ring_tail - cn->cn_ring_head, ring0 + 8);
	assert_int_equal(be_pool_inflight(b.pool), 8);

	finish_all(&b, fc, x, 8);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	assert_int_equal(be_pool_inflight(b.pool), 0);
	/* The Sends after the signaled one stay held until a later completion;
	 * everything before it, the warm-up's included, is back. */
	assert_int_equal(cn->cn_ring_tail - cn->cn_ring_head, 7 - sig);
	assert_int_equal(cn->cn_nsfree, cn->cn_nsend - (7 - sig));
	assert_int_equal(cn->cn_sq_used, 7 - sig);
	assert_int_equal(cn->cn_sig_out, 0);
	bench_down(&b);
}

/* Submit b->req[i] as xid with a read chunk ri and/or a write chunk wt
 * (either NULL): one window bind each here. */
static void submit_chunks(struct bench *b, unsigned i, uint32_t xid,
			  const struct be_read_item *ri, const struct be_target *wt)
{
	struct be_call_desc d;

	memset(b->msg[i], 0, 40);
	chk_put_be32(b->msg[i], xid);
	b->iov[i] = (struct iovec){ b->msg[i], 40 };
	d = (struct be_call_desc){ .cd_xid = xid, .cd_msg = &b->iov[i], .cd_msg_niov = 1,
				   .cd_reads = ri, .cd_nreads = ri != NULL,
				   .cd_writes = wt, .cd_nwrites = wt != NULL };
	assert_int_equal(be_call_submit(b->pool, &b->req[i], &d, on_reply, b), 0);
}

/* 21. Three calls, the second with a read chunk (a window bind), in one
 * pass: one ibv_post_send() of the first Send, the bind, its Send, the
 * third Send: the queue order is the submit order and each bind precedes
 * the Send that advertises its window. */
static void t21_binds_in_the_batch(void **state)
{
	static const uint32_t x[3] = { 2101, 2102, 2103 };
	struct be_read_item ri = { 20, 16 };
	struct be_region *rg;
	struct bench b;
	struct fconn *fc;
	unsigned p0;
	int s1, s2, s3;

	(void)state;
	one_conn_up(&b, 0);
	fc = cur();
	rg = be_region_register(b.ctx, b.msg, sizeof(b.msg));
	assert_non_null(rg);
	p0 = fc->nposts;

	assert_non_null(submit(&b, 0, x[0]));
	submit_chunks(&b, 1, x[1], &ri, NULL);
	assert_non_null(submit(&b, 2, x[2]));
	spin(&b, 2);
	assert_int_equal(fc->nposts, p0 + 1);
	assert_int_equal(fc->post_wrs[p0], 4);
	s1 = first_send_of(fc, x[0]);
	s2 = first_send_of(fc, x[1]);
	s3 = first_send_of(fc, x[2]);
	assert_true(s1 >= 0);
	assert_int_equal(fc->sends[s1 + 1].op, IBV_WR_BIND_MW);
	assert_int_equal(s2, s1 + 2);
	assert_int_equal(s3, s1 + 3);
	finish_all(&b, fc, x, 3);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	be_region_unregister(rg);
	bench_down(&b);
}

/* Submit b->req[i] as xid offering a write chunk of len bytes of buf. */
static void submit_write_chunk(struct bench *b, unsigned i, uint32_t xid, struct iovec *wiov,
			       struct be_target *wt, uint8_t *buf, size_t len)
{
	*wiov = (struct iovec){ buf, len };
	*wt = (struct be_target){ wiov, 1 };
	submit_chunks(b, i, xid, NULL, wt);
}

/* 25. A call offering BE_TX_NOW_BYTES of chunks (a 64 KiB write chunk)
 * is posted from inside be_call_submit(), together with the small call
 * queued before it, in submit order; one byte less and it waits for the
 * pass's end like any other; every call is answered once. */
static void t25_large_call_at_once(void **state)
{
	static uint8_t buf[BE_TX_NOW_BYTES];
	static const uint32_t x[4] = { 2501, 2502, 2503, 2504 };
	struct be_target wt[2];
	struct iovec wiov[2];
	struct be_region *rg;
	struct bench b;
	struct fconn *fc;
	unsigned p0;

	(void)state;
	one_conn_up(&b, 8);
	fc = cur();
	rg = be_region_register(b.ctx, buf, sizeof(buf));
	assert_non_null(rg);
	p0 = fc->nposts;

	assert_non_null(submit(&b, 0, x[0]));
	submit_write_chunk(&b, 1, x[1], &wiov[0], &wt[0], buf, BE_TX_NOW_BYTES);
	assert_int_equal(fc->nposts, p0 + 1);	/* from inside be_call_submit() */
	assert_true(first_send_of(fc, x[0]) >= 0);
	assert_true(first_send_of(fc, x[1]) > first_send_of(fc, x[0]));
	assert_int_equal(be_pool_queued(b.pool), 0);

	assert_non_null(submit(&b, 2, x[2]));
	submit_write_chunk(&b, 3, x[3], &wiov[1], &wt[1], buf, BE_TX_NOW_BYTES - 1);
	assert_int_equal(fc->nposts, p0 + 1);	/* below the bound: the pass's end */
	assert_int_equal(first_send_of(fc, x[3]), -1);
	spin(&b, 2);
	assert_int_equal(fc->nposts, p0 + 2);
	assert_true(first_send_of(fc, x[3]) > first_send_of(fc, x[2]));
	finish_all(&b, fc, x, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	assert_int_equal(be_pool_inflight(b.pool), 0);
	be_region_unregister(rg);
	bench_down(&b);
}

/* 24. The provider refuses the Send of a batched call after taking its
 * bind: a window is bound that no key of ours names, so the connection is
 * failed (its QP's windows end with it); the refused call is called back
 * BE_ERR_REGISTER once, the first call is re-sent on the new connection,
 * the third waits for it, and both are answered once. */
static void t24_refused_after_a_bind(void **state)
{
	static const uint32_t x[3] = { 2401, 2402, 2403 };
	static const uint32_t ok[2] = { 2401, 2403 };
	struct be_read_item ri = { 20, 16 };
	struct be_region *rg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	one_conn_up(&b, 0);
	fc = cur();
	rg = be_region_register(b.ctx, b.msg, sizeof(b.msg));
	assert_non_null(rg);

	fc->post_fail_wr = 3;			/* Send, bind, (refused) Send, Send */
	assert_non_null(submit(&b, 0, x[0]));
	submit_chunks(&b, 1, x[1], &ri, NULL);
	assert_non_null(submit(&b, 2, x[2]));
	spin(&b, 2);
	assert_int_equal(cb_count(&b, x[1]), 1);
	assert_int_equal(b.cb_err[0], BE_ERR_REGISTER);
	assert_true(be_ctx_stats(b.ctx)->bs_disconnects >= 1);
	wait_conns(&b, 2);
	fc = cur();
	assert_ptr_not_equal(fc, fdev.conns[0]);
	/* A new connection's grant is 1: answer one at a time. */
	for (unsigned k = 0; k < 2; k++) {
		for (unsigned i = 0; i < 20 && send_of(fc, ok[k]) < 0; i++)
			spin(&b, 5);
		answer_all(&b, fc, &ok[k], 1);
	}
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	be_region_unregister(rg);
	bench_down(&b);
}

/* 22. The provider refuses the third WR of a batch of five (as a full
 * queue would): the two before it are posted and answered; the third is
 * called back with BE_ERR_REGISTER, once; the fourth and fifth wait and go
 * out, in order, from the next pump; the send ring holds exactly the
 * posted Sends, so in the end every buffer and all room come back. */
static void t22_refused_post(void **state)
{
	static const uint32_t x[5] = { 2201, 2202, 2203, 2204, 2205 };
	static const uint32_t ok[4] = { 2201, 2202, 2204, 2205 };
	const struct be_stats *st;
	struct be_conn *cn;
	struct bench b;
	struct fconn *fc;
	unsigned p0, nfree0, ring0, errs = 0;

	(void)state;
	one_conn_up(&b, 8);
	fc = cur();
	cn = conn0(&b);
	st = be_ctx_stats(b.ctx);
	p0 = fc->nposts;

	nfree0 = cn->cn_nsfree;
	ring0 = cn->cn_ring_tail - cn->cn_ring_head;
	fc->post_fail_wr = 3;
	for (unsigned i = 0; i < 5; i++)
		assert_non_null(submit(&b, i, x[i]));
	spin(&b, 2);
	assert_int_equal(fc->post_wrs[p0], 2);
	assert_int_equal(first_send_of(fc, x[2]), -1);	/* never posted */
	assert_int_equal(cb_count(&b, x[2]), 1);
	for (unsigned i = 0; i < b.ncb; i++)
		if (b.cb_xid[i] == x[2]) {
			assert_int_equal(b.cb_err[i], BE_ERR_REGISTER);
			errs++;
		}
	assert_int_equal(errs, 1);
	assert_int_equal(st->bs_marshal_errors, 1);
	assert_int_equal(cn->cn_ring_tail - cn->cn_ring_head, ring0 + 2);	/* the posted ones */
	assert_int_equal(cn->cn_nsfree, nfree0 - 2);
	assert_int_equal(be_pool_queued(b.pool), 2);

	/* The next pump (any event that pumps: here a reply) sends 4 and 5. */
	answer_all(&b, fc, x, 2);
	spin(&b, 2);
	assert_int_equal(fc->nposts, p0 + 2);
	assert_int_equal(fc->post_wrs[p0 + 1], 2);
	assert_true(first_send_of(fc, x[3]) >= 0);
	assert_int_equal(first_send_of(fc, x[4]), first_send_of(fc, x[3]) + 1);
	finish_all(&b, fc, ok, 4);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	assert_int_equal(be_pool_inflight(b.pool), 0);
	assert_int_equal(be_pool_queued(b.pool), 0);
	/* Every Send signaled or covered: the last signaled one was the 6th
	 * posted at the latest, and the rest are held, never lost. */
	assert_int_equal(cn->cn_nsfree + (cn->cn_ring_tail - cn->cn_ring_head), cn->cn_nsend);
	assert_int_equal(cn->cn_sig_out, 0);
	bench_down(&b);
}

/* 23. Two connections: a pass's calls go on their XIDs' connections, one
 * ibv_post_send() on each. */
static void t23_one_doorbell_per_connection(void **state)
{
	static const uint32_t x[6] = { 100, 101, 102, 103, 104, 105 };
	struct be_config cfg;
	struct bench b;
	unsigned p[2];

	(void)state;
	be_config_default(&cfg);
	cfg.bc_conns = 2;
	cfg.bc_credits = 8;
	bench_up(&b, &cfg);
	assert_int_equal(fdev.nconns, 2);
	warm_up(&b);
	p[0] = fdev.conns[0]->nposts;
	p[1] = fdev.conns[1]->nposts;
	for (unsigned i = 0; i < 6; i++)
		assert_non_null(submit(&b, i, x[i]));
	spin(&b, 2);
	for (unsigned k = 0; k < 2; k++) {
		struct fconn *fc = fdev.conns[k];

		assert_int_equal(fc->nposts, p[k] + 1);
		assert_int_equal(fc->post_wrs[p[k]], 3);
	}
	bench_down(&b);
}

/* One connection up, n calls x[] posted and unanswered, its CQ armed:
 * the connection, and its re-arms and the context's CQ wake-ups so far. */
static struct fconn *posted(struct bench *b, const uint32_t *x, unsigned n, bool prewait,
			    unsigned *arms, uint64_t *wakeups)
{
	struct fconn *fc;

	one_conn_up(b, 8);
	fc = cur();
	if (prewait)
		assert_false(be_ctx_prewait(b->ctx));	/* nothing woken yet */
	for (unsigned i = 0; i < n; i++)
		assert_non_null(submit(b, i, x[i]));
	spin(b, 2);
	if (prewait)
		assert_false(be_ctx_prewait(b->ctx));	/* the pass's pump */
	assert_int_equal(be_pool_inflight(b->pool), n);
	assert_true(fc->armed);
	*arms = fc->narms;
	*wakeups = be_ctx_stats(b->ctx)->bs_cq_wakeups;
	return fc;
}

/* posted() with be_ctx_prewait() in use, then x[0]'s reply by its CQ
 * event, which leaves the CQ unarmed (*wakeups: before that event). */
static struct fconn *parked(struct bench *b, const uint32_t *x, unsigned n, unsigned *arms,
			    uint64_t *wakeups)
{
	struct fconn *fc = posted(b, x, n, true, arms, wakeups);

	deliver_reply(fc, x[0], 8, 0, NULL, 0);
	spin(b, 2);
	assert_int_equal(cb_count(b, x[0]), 1);
	assert_int_equal(be_ctx_stats(b->ctx)->bs_cq_wakeups - *wakeups, 1);
	assert_false(fc->armed);		/* not re-armed by its event */
	return fc;
}

/* 26. be_ctx_prewait() in use: the CQ event's handler leaves the CQ
 * unarmed; a reply that comes after it raises no event and is handled by
 * the next prewait (true); the prewait that finds the CQ empty re-arms it,
 * once, and the next reply comes by its event again.  A connection torn
 * down while its CQ is unarmed leaves the context's list. */
static void t26_cq_left_unarmed(void **state)
{
	static const uint32_t x[4] = { 2601, 2602, 2603, 2604 };
	const struct be_stats *st;
	struct bench b;
	struct fconn *fc;
	unsigned a0;
	uint64_t w0;

	(void)state;
	fc = parked(&b, x, 4, &a0, &w0);
	st = be_ctx_stats(b.ctx);
	assert_int_equal(fc->narms, a0);

	deliver_reply(fc, x[1], 8, 0, NULL, 0);
	spin(&b, 2);
	assert_int_equal(cb_count(&b, x[1]), 0);	/* no event for it */
	assert_true(be_ctx_prewait(b.ctx));
	assert_int_equal(cb_count(&b, x[1]), 1);
	assert_false(fc->armed);
	assert_false(be_ctx_prewait(b.ctx));	/* empty: re-armed */
	assert_true(fc->armed);
	assert_int_equal(fc->narms, a0 + 1);
	assert_false(be_ctx_prewait(b.ctx));	/* nothing left unarmed */
	assert_int_equal(fc->narms, a0 + 1);

	deliver_reply(fc, x[2], 8, 0, NULL, 0);
	spin(&b, 2);
	assert_int_equal(cb_count(&b, x[2]), 1);
	assert_int_equal(st->bs_cq_wakeups - w0, 2);
	assert_false(fc->armed);
	assert_false(TAILQ_EMPTY(&b.ctx->cx_parked));

	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	spin(&b, 20);
	assert_true(TAILQ_EMPTY(&b.ctx->cx_parked));
	assert_false(be_ctx_prewait(b.ctx));
	bench_down(&b);
}

/* 27. Without be_ctx_prewait() every CQ event re-arms its CQ at once. */
static void t27_cq_rearmed_without_prewait(void **state)
{
	static const uint32_t x[2] = { 2701, 2702 };
	const struct be_stats *st;
	struct bench b;
	struct fconn *fc;
	unsigned a0;
	uint64_t w0;

	(void)state;
	fc = posted(&b, x, 2, false, &a0, &w0);
	st = be_ctx_stats(b.ctx);
	for (unsigned i = 0; i < 2; i++) {
		deliver_reply(fc, x[i], 8, 0, NULL, 0);
		spin(&b, 2);
		assert_int_equal(cb_count(&b, x[i]), 1);
		assert_true(fc->armed);
		assert_true(st->bs_cq_wakeups - w0 > i);
		assert_int_equal(fc->narms - a0, st->bs_cq_wakeups - w0);	/* one per event */
	}
	assert_true(TAILQ_EMPTY(&b.ctx->cx_parked));
	bench_down(&b);
}

/* 28. be_ctx_prewait() in use: the calls of a pass are posted by the
 * next prewait, all in one doorbell, with no event made active for them;
 * a reply's freed credit lets a waiting call go from the same prewait
 * that polled it; a pool freed with its pump due leaves the list. */
static void t28_pump_in_prewait(void **state)
{
	static const uint32_t x[4] = { 2801, 2802, 2803, 2804 };
	const struct be_stats *st;
	struct bench b;
	struct fconn *fc;
	unsigned p0;
	uint64_t d0;

	(void)state;
	one_conn_up(&b, 2);			/* two credits: two calls wait */
	fc = cur();
	st = be_ctx_stats(b.ctx);
	assert_false(be_ctx_prewait(b.ctx));
	p0 = fc->nposts;
	d0 = st->bs_send_doorbells;
	for (unsigned i = 0; i < 4; i++)
		assert_non_null(submit(&b, i, x[i]));
	assert_false(event_pending(b.pool->bp_pump_ev, 0, NULL));	/* no event */
	spin(&b, 2);
	assert_int_equal(fc->nposts, p0);	/* not by the loop's pass */
	assert_false(TAILQ_EMPTY(&b.ctx->cx_pump_due));
	assert_false(be_ctx_prewait(b.ctx));
	assert_int_equal(fc->nposts, p0 + 1);
	assert_int_equal(fc->post_wrs[p0], 2);
	assert_int_equal(st->bs_send_doorbells - d0, 1);
	assert_int_equal(be_pool_inflight(b.pool), 2);
	assert_true(TAILQ_EMPTY(&b.ctx->cx_pump_due));

	/* The reply comes by its event (the CQ was armed); its release gives
	 * the credit back, and the next prewait sends the third call. */
	deliver_reply(fc, x[0], 8, 0, NULL, 0);
	spin(&b, 2);
	assert_int_equal(cb_count(&b, x[0]), 1);
	be_call_release(&b.req[0]);
	assert_int_equal(fc->nposts, p0 + 1);
	be_ctx_prewait(b.ctx);
	assert_int_equal(fc->nposts, p0 + 2);
	assert_int_equal(first_send_of(fc, x[2]) >= 0, 1);
	assert_int_equal(first_send_of(fc, x[3]), -1);

	/* Due again (x[1] answered), then the pool goes before any prewait. */
	deliver_reply(fc, x[1], 8, 0, NULL, 0);
	spin(&b, 2);
	be_call_release(&b.req[1]);
	assert_false(TAILQ_EMPTY(&b.ctx->cx_pump_due));
	be_pool_free(b.pool);
	b.pool = NULL;
	assert_true(TAILQ_EMPTY(&b.ctx->cx_pump_due));
	assert_false(be_ctx_prewait(b.ctx));
	bench_down(&b);
}

/* 29. be_ctx_prewait() posts the pass's calls before it polls the CQs
 * left unarmed: a reply that comes in during the doorbell is handled by
 * that prewait, with no CQ event (a wake-up, a read and a re-arm). */
static void t29_post_then_poll(void **state)
{
	static const uint32_t x[3] = { 2901, 2902, 2903 };
	const struct be_stats *st;
	struct bench b;
	struct fconn *fc;
	unsigned a0;
	uint64_t w0;

	(void)state;
	fc = parked(&b, x, 2, &a0, &w0);
	st = be_ctx_stats(b.ctx);
	w0 = st->bs_cq_wakeups;

	fc->answer_on_post = true;
	assert_non_null(submit(&b, 2, x[2]));
	spin(&b, 2);
	assert_int_equal(send_of(fc, x[2]), -1);	/* posted by the prewait */
	assert_true(be_ctx_prewait(b.ctx));
	assert_true(send_of(fc, x[2]) >= 0);
	assert_int_equal(cb_count(&b, x[2]), 1);	/* found by its poll */
	assert_int_equal(st->bs_cq_wakeups, w0);
	fc->answer_on_post = false;
	bench_down(&b);
}

/* The table's answer is the walk's, for every XID the test uses. */
static void xids_agree(struct bench *b, const uint32_t *x, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(be_xid_busy(b->pool, x[i]), be_xid_scan(b->pool, x[i]));
	assert_false(b->pool->bp_xid_off);
}

/* 30. The pool's table of busy XIDs answers be_xid_busy() as the walk
 * over the queue and the connections' calls does, through queueing,
 * posting, a duplicate refused, a queued call cancelled, replies, a
 * connection lost (its calls queued again) and back; XIDs chosen to share
 * a home entry, so that removals shift entries back. */
static void t30_xid_table(void **state)
{
	uint32_t x[12];
	struct bench b;
	struct fconn *fc;
	unsigned n = 0, bits;

	(void)state;
	one_conn_up(&b, 2);			/* two in flight, the rest queued */
	bits = b.pool->bp_xid_bits;
	for (uint32_t v = 3000; n < 8; v++)	/* eight with one home, then four after it */
		if (((v * 2654435761u) >> (32 - bits)) == ((3000u * 2654435761u) >> (32 - bits)))
			x[n++] = v;
	for (uint32_t v = 3000; n < 12; v++)
		if (((v * 2654435761u) >> (32 - bits)) == (((3000u * 2654435761u) >> (32 - bits)) + 1) %
								 (1u << bits))
			x[n++] = v;
	for (unsigned i = 0; i < 12; i++) {
		assert_false(be_xid_busy(b.pool, x[i]));
		assert_non_null(submit(&b, i, x[i]));
		xids_agree(&b, x, 12);
	}
	assert_null(submit(&b, 12, x[5]));	/* queued already */
	assert_int_equal(errno, EEXIST);
	spin(&b, 2);
	fc = cur();
	assert_int_equal(be_pool_inflight(b.pool), 2);
	assert_true(be_xid_busy(b.pool, x[0]) && be_xid_busy(b.pool, x[11]));
	assert_null(submit(&b, 12, x[0]));	/* in flight */
	{
		/* The answer is the table's: with the queue hidden from a walk,
		 * a queued XID is still busy. */
		struct be_req_list saved = b.pool->bp_queue;

		TAILQ_INIT(&b.pool->bp_queue);
		assert_true(be_xid_busy(b.pool, x[5]));
		assert_false(be_xid_scan(b.pool, x[5]));
		b.pool->bp_queue = saved;
	}
	assert_true(be_call_cancel(&b.req[3]));	/* queued: gone at once */
	assert_false(be_xid_busy(b.pool, x[3]));
	xids_agree(&b, x, 12);

	deliver_reply(fc, x[1], 2, 0, NULL, 0);
	spin(&b, 2);
	be_call_release(&b.req[1]);
	assert_false(be_xid_busy(b.pool, x[1]));
	spin(&b, 2);				/* x[2] goes */
	xids_agree(&b, x, 12);

	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);	/* x[0] and x[2] queued again */
	spin(&b, 20);
	assert_true(be_xid_busy(b.pool, x[0]) && be_xid_busy(b.pool, x[2]));
	xids_agree(&b, x, 12);
	wait_conns(&b, 2);			/* the retry's connection */
	assert_true(cur() != fc);
	fc = cur();
	for (unsigned r = 0; r < 40 && (be_pool_inflight(b.pool) || be_pool_queued(b.pool)); r++) {
		uint32_t left[12];
		unsigned nl = 0;

		for (unsigned i = 0; i < 12; i++)
			if (i != 1 && i != 3 && send_of(fc, x[i]) >= 0 && !cb_count(&b, x[i]))
				left[nl++] = x[i];
		answer_all(&b, fc, left, nl);
		for (unsigned i = 0; i < 12; i++)
			if (i != 1 && i != 3 && cb_count(&b, x[i]) && b.req[i].bq_state == BE_REQ_DONE)
				be_call_release(&b.req[i]);
		spin(&b, 2);
		xids_agree(&b, x, 12);
	}
	for (unsigned i = 0; i < 12; i++)
		assert_false(be_xid_busy(b.pool, x[i]));
	assert_int_equal(b.pool->bp_xid_used, 0);
	bench_down(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t20_one_doorbell_per_pass),
		cmocka_unit_test(t21_binds_in_the_batch),
		cmocka_unit_test(t22_refused_post),
		cmocka_unit_test(t23_one_doorbell_per_connection),
		cmocka_unit_test(t24_refused_after_a_bind),
		cmocka_unit_test(t25_large_call_at_once),
		cmocka_unit_test(t26_cq_left_unarmed),
		cmocka_unit_test(t27_cq_rearmed_without_prewait),
		cmocka_unit_test(t28_pump_in_prewait),
		cmocka_unit_test(t29_post_then_poll),
		cmocka_unit_test(t30_xid_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
