// SPDX-License-Identifier: MIT
/*
 * Unit tests of backend-rdma's Sends at its verbs seam, on the fake device
 * of fake/be_fake.c: unsignaled Sends and the send ring (a reply alone
 * finishes its call, one signaled completion gives back the buffers before
 * it, flushes give back each once), a LOCAL_INV completion covering the
 * Send before it, when a Send must be signaled, and with two connections a
 * call going on its XID's own (t19).
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

/* 15. Every call Send but each cn_send_batch-th goes unsignaled; a reply
 * that comes before anything says its Send completed finishes the call at
 * once, while its send buffer stays held (never reused under a Send that
 * may still be in flight); one signaled completion gives back the buffers
 * and send-queue room of every Send before it. */
static void t15_unsignaled_sends(void **state)
{
	static const uint32_t x[6] = { 101, 102, 103, 104, 105, 106 };
	const struct be_stats *st;
	struct be_config cfg;
	struct be_conn *cn;
	struct bench b;
	struct fconn *fc;
	int s0;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_credits = 8;			/* 12 send buffers: a batch of 6 */
	bench_up(&b, &cfg);
	fc = cur();
	cn = conn0(&b);
	st = be_ctx_stats(b.ctx);
	assert_int_equal(cn->cn_nsend, 12);
	assert_int_equal(cn->cn_send_batch, 6);

	/* The first call: unsignaled; its reply alone finishes it. */
	assert_non_null(submit(&b, 0, x[0]));
	spin(&b, 2);
	s0 = send_of(fc, x[0]);
	assert_true(s0 >= 0);
	assert_int_equal(fc->sends[s0].flags & IBV_SEND_SIGNALED, 0);
	complete_send(fc, x[0], IBV_WC_SUCCESS);	/* no completion: unsignaled */
	deliver_reply(fc, x[0], 8, 0, NULL, 0);
	spin(&b, 5);
	assert_int_equal(cb_count(&b, x[0]), 1);
	assert_int_equal(b.cb_err[0], BE_OK);
	assert_int_equal(be_pool_inflight(b.pool), 0);
	assert_int_equal(cn->cn_nsfree, 12 - 1);	/* its buffer: not known free */

	/* Five more: four unsignaled, the sixth Send signaled. */
	for (unsigned i = 1; i < 6; i++)
		assert_non_null(submit(&b, i, x[i]));
	spin(&b, 2);
	for (unsigned i = 1; i < 6; i++) {
		int si = send_of(fc, x[i]);

		assert_true(si >= 0);
		assert_int_equal(fc->sends[si].flags & IBV_SEND_SIGNALED,
				 i == 5 ? IBV_SEND_SIGNALED : 0);
		assert_ptr_not_equal(fc->sends[si].addr, fc->sends[s0].addr);
	}
	assert_int_equal(cn->cn_nsfree, 12 - 6);
	assert_int_equal(cn->cn_sig_out, 1);
	for (unsigned i = 1; i < 6; i++)
		deliver_reply(fc, x[i], 8, 0, NULL, 0);
	spin(&b, 5);
	for (unsigned i = 1; i < 6; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	assert_int_equal(cn->cn_nsfree, 12 - 6);	/* replies free no send buffer */

	/* The sixth Send's completion: all six are done. */
	complete_send(fc, x[5], IBV_WC_SUCCESS);
	spin(&b, 5);
	assert_int_equal(cn->cn_nsfree, 12);
	assert_int_equal(cn->cn_sq_used, 0);
	assert_int_equal(cn->cn_sig_out, 0);
	assert_int_equal(st->bs_sends_unsignaled, 5);
	assert_int_equal(st->bs_sends_signaled, 1);
	assert_int_equal(st->bs_sq_completions, 1);	/* one for six calls */
	assert_int_equal(st->bs_rq_completions, 6);
	bench_down(&b);
}

/* 16. Flushes: in the error state every outstanding WR completes, signaled
 * or not.  A flushed unsignaled Send gives back itself and the Sends before
 * it, once, and does not end the drain, which waits for the signaled one;
 * every call is then re-sent once and called back once. */
static void t16_unsignaled_flush(void **state)
{
	static const uint32_t x[5] = { 201, 202, 203, 204, 205 };
	const struct be_stats *st;
	struct be_config cfg;
	struct be_conn *cn;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_credits = 8;
	cfg.bc_send_batch = 4;
	cfg.bc_drain_ms = 5000;			/* the flushes end the drain */
	bench_up(&b, &cfg);
	fc = cur();
	cn = conn0(&b);
	st = be_ctx_stats(b.ctx);
	cn->cn_refs++;				/* look at it after the reap */

	assert_non_null(submit(&b, 0, x[0]));
	spin(&b, 2);
	deliver_reply(fc, x[0], 8, 0, NULL, 0);
	spin(&b, 5);
	assert_int_equal(cb_count(&b, x[0]), 1);
	for (unsigned i = 1; i < 5; i++)
		assert_non_null(submit(&b, i, x[i]));
	spin(&b, 2);
	/* x0..x2 unsignaled, x3 the fourth: signaled, x4 unsignaled again */
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(fc->sends[send_of(fc, x[i])].flags & IBV_SEND_SIGNALED,
				 i == 3 ? IBV_SEND_SIGNALED : 0);
	assert_int_equal(cn->cn_sig_out, 1);
	assert_int_equal(cn->cn_nsfree, 12 - 5);

	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	spin(&b, 5);
	assert_int_equal(fc->qp_state, IBV_QPS_ERR);
	assert_false(fc->qp_destroyed);		/* draining: x3 is signaled */
	complete_send(fc, x[1], IBV_WC_WR_FLUSH_ERR);
	complete_send(fc, x[2], IBV_WC_WR_FLUSH_ERR);
	spin(&b, 5);
	assert_false(fc->qp_destroyed);		/* unsignaled flushes: still draining */
	assert_int_equal(cn->cn_sig_out, 1);
	assert_int_equal(cn->cn_nsfree, 12 - 2);	/* x0..x2 back, x3 and x4 held */
	complete_send(fc, x[3], IBV_WC_WR_FLUSH_ERR);
	complete_send(fc, x[4], IBV_WC_WR_FLUSH_ERR);
	for (unsigned r = fc->recv_head; r < fc->nrecvs; r++)
		queue_wc(fc, fc->recvs[r].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	for (unsigned i = 0; i < 100 && !fc->qp_destroyed; i++)
		spin(&b, 5);
	assert_true(fc->qp_destroyed);
	assert_int_equal(cn->cn_nsfree, 12);	/* each buffer back once */
	assert_int_equal(cn->cn_sq_used, 0);
	assert_int_equal(st->bs_drain_timeouts, 0);
	assert_int_equal(st->bs_resent, 4);
	assert_int_equal(b.ncb, 1);
	be_conn_put(cn);

	wait_conns(&b, 2);
	answer_all(&b, cur(), x, 5);
	for (unsigned i = 0; i < 5; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	for (unsigned i = 0; i < b.ncb; i++)
		assert_int_equal(b.cb_err[i], BE_OK);
	bench_down(&b);
}

/* 17. A LOCAL_INV chain: only its last WR is signaled.  Its completion
 * also proves the (unsignaled) Send before it complete; flushed, the
 * chain's first, unsignaled WR must not end the drain. */
static void t17_local_inv_covers(void **state)
{
	struct be_read_item ri = { 32, 8 };
	struct iovec wiov;
	struct be_target wt = { &wiov, 1 };
	struct be_config cfg;
	struct be_call_desc d;
	struct be_region *rg;
	struct be_conn *cn;
	struct bench b;
	struct fconn *fc;
	int inv[2], n = 0;

	(void)state;
	be_config_default(&cfg);		/* memory windows */
	cfg.bc_drain_ms = 5000;
	bench_up(&b, &cfg);
	fc = cur();
	cn = conn0(&b);
	rg = be_region_register(b.ctx, b.msg, sizeof(b.msg));
	assert_non_null(rg);
	memset(b.msg[0], 0, 40);
	chk_put_be32(b.msg[0], 301);
	b.iov[0] = (struct iovec){ b.msg[0], 40 };
	wiov = (struct iovec){ b.msg[1], 40 };
	d = (struct be_call_desc){ .cd_xid = 301, .cd_msg = &b.iov[0], .cd_msg_niov = 1,
				   .cd_reads = &ri, .cd_nreads = 1, .cd_writes = &wt,
				   .cd_nwrites = 1 };
	assert_int_equal(be_call_submit(b.pool, &b.req[0], &d, on_reply, &b), 0);
	spin(&b, 2);
	assert_int_equal(nsends_op(fc, IBV_WR_BIND_MW), 2);
	complete_send(fc, 301, IBV_WC_SUCCESS);
	deliver_reply(fc, 301, 8, 0, NULL, 0);
	spin(&b, 5);
	for (unsigned i = 0; i < fc->nsends; i++)
		if (fc->sends[i].op == IBV_WR_LOCAL_INV)
			inv[n++] = (int)i;
	assert_int_equal(n, 2);
	assert_int_equal(fc->sends[inv[0]].flags & IBV_SEND_SIGNALED, 0);
	assert_int_equal(fc->sends[inv[1]].flags & IBV_SEND_SIGNALED, IBV_SEND_SIGNALED);
	assert_int_equal(cn->cn_sig_out, 1);	/* the chain's last WR only */
	assert_int_equal(cb_count(&b, 301), 0);
	queue_wc(fc, fc->sends[inv[1]].wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0);
	spin(&b, 5);
	assert_int_equal(cb_count(&b, 301), 1);
	assert_int_equal(cn->cn_nsfree, cn->cn_nsend);	/* the Send is known done */
	assert_int_equal(cn->cn_sq_used, 0);

	/* Again, and the connection dies with the chain outstanding. */
	chk_put_be32(b.msg[0], 302);
	d.cd_xid = 302;
	assert_int_equal(be_call_submit(b.pool, &b.req[0], &d, on_reply, &b), 0);
	spin(&b, 2);
	complete_send(fc, 302, IBV_WC_SUCCESS);
	deliver_reply(fc, 302, 8, 0, NULL, 0);
	spin(&b, 5);
	n = 0;
	for (unsigned i = 0; i < fc->nsends; i++)
		if (fc->sends[i].op == IBV_WR_LOCAL_INV)
			inv[n++ % 2] = (int)i;
	assert_int_equal(n, 4);
	assert_int_equal(cn->cn_sig_out, 1);
	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	spin(&b, 5);
	queue_wc(fc, fc->sends[inv[0]].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_LOCAL_INV, 0);
	spin(&b, 5);
	assert_false(fc->qp_destroyed);		/* the signaled one is still out */
	queue_wc(fc, fc->sends[inv[1]].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_LOCAL_INV, 0);
	for (unsigned i = 0; i < 100 && !fc->qp_destroyed; i++)
		spin(&b, 5);
	assert_true(fc->qp_destroyed);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_drain_timeouts, 0);
	assert_int_equal(cb_count(&b, 302), 1);	/* good reply: completed at the reap */
	be_region_unregister(rg);
	bench_down(&b);
}

/* 18. When a Send is signaled although its batch is not full: the Sends
 * no signaled WR covers must never hold the room a largest call needs, nor
 * reach a batch (an idle connection then holds fewer than a batch of send
 * buffers, and no call waits for them: t15). */
static void t18_signal_rule(void **state)
{
	struct be_conn cn;

	(void)state;
	memset(&cn, 0, sizeof(cn));
	cn.cn_send_batch = 6;
	cn.cn_sq_max = 204;			/* 12 send buffers x (1 + 2 x 8) */
	cn.cn_sq_call_max = 1 + 2 * BE_MAX_CALL_SEGS;
	assert_false(be_send_signal(&cn, 1));
	cn.cn_unsig = 4;
	assert_false(be_send_signal(&cn, 1));
	cn.cn_unsig = 5;			/* the sixth */
	assert_true(be_send_signal(&cn, 1));
	cn.cn_unsig = 1;
	cn.cn_unsig_wrs = 70;
	assert_false(be_send_signal(&cn, 5));	/* 75 + 129 = 204: fits */
	assert_true(be_send_signal(&cn, 6));	/* a largest call would not */
	cn.cn_sq_max = 129;			/* MR mode's floor, MW windows */
	cn.cn_unsig = cn.cn_unsig_wrs = 0;
	assert_true(be_send_signal(&cn, 1));
	cn.cn_sq_call_max = 1;			/* no binds: MR or persistent mode */
	assert_false(be_send_signal(&cn, 1));
	cn.cn_send_batch = 1;			/* bc_send_batch = 1: every Send */
	assert_true(be_send_signal(&cn, 1));
}

/* Sends of fc that carry xid. */
static unsigned sends_of(struct fconn *fc, uint32_t xid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < fc->nsends; i++)
		n += fc->sends[i].op == IBV_WR_SEND && fc->sends[i].len >= 4 &&
		     fc->sends[i].xid == xid;
	return n;
}

/* 19. Two connections: a call goes on its XID's own connection, so a
 * gateway XID sent again reaches the server from the address and port of
 * the original (nfsd's duplicate request cache keys on XID, address and
 * port); while that connection has no credit the call waits for it and
 * calls of the other connection pass; with it down, the call takes the
 * other. */
static void t19_xid_keeps_its_connection(void **state)
{
	static const uint32_t x10[1] = { 10 }, x11[1] = { 11 }, x12[1] = { 12 };
	static const uint32_t held[8] = { 100, 102, 104, 106, 108, 110, 112, 114 };
	struct be_config cfg;
	struct bench b;
	struct fconn *home, *other;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_conns = 2;
	cfg.bc_credits = 8;
	bench_up(&b, &cfg);
	assert_int_equal(fdev.nconns, 2);

	assert_non_null(submit(&b, 0, 10));
	spin(&b, 2);
	home = sends_of(fdev.conns[0], 10) ? fdev.conns[0] : fdev.conns[1];
	other = home == fdev.conns[0] ? fdev.conns[1] : fdev.conns[0];
	assert_int_equal(sends_of(home, 10), 1);
	answer_all(&b, home, x10, 1);
	assert_int_equal(cb_count(&b, 10), 1);

	/* Sent again (a retransmission under the same gateway XID): same
	 * connection, whatever went before it. */
	assert_non_null(submit(&b, 1, 10));
	spin(&b, 2);
	assert_int_equal(sends_of(home, 10), 2);
	assert_int_equal(sends_of(other, 10), 0);
	b.ncb = 0;
	answer_all(&b, home, x10, 1);

	/* XID 12 belongs to home too.  home's grant is 8; hold it with 8
	 * calls of XIDs of its own, then 12 waits and 11 goes on other. */
	for (unsigned i = 0; i < 8; i++)
		assert_non_null(submit(&b, 2 + i, held[i]));
	spin(&b, 2);
	assert_non_null(submit(&b, 10, 12));
	assert_non_null(submit(&b, 11, 11));
	spin(&b, 2);
	assert_int_equal(sends_of(home, 12) + sends_of(other, 12), 0);
	assert_int_equal(sends_of(other, 11), 1);
	answer_all(&b, other, x11, 1);
	answer_all(&b, home, held, 8);
	spin(&b, 2);
	assert_int_equal(sends_of(home, 12), 1);	/* its own, once it had room */
	answer_all(&b, home, x12, 1);

	/* home down: XID 10 goes on other rather than wait for a reconnect
	 * (a new connection has a new port: the cache would not know it). */
	fdev.no_establish = true;
	queue_cm(home, RDMA_CM_EVENT_DISCONNECTED);
	spin(&b, 5);
	assert_non_null(submit(&b, 12, 10));
	spin(&b, 2);
	assert_int_equal(sends_of(other, 10), 1);
	bench_down(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t15_unsignaled_sends),
		cmocka_unit_test(t16_unsignaled_flush),
		cmocka_unit_test(t17_local_inv_covers),
		cmocka_unit_test(t18_signal_rule),
		cmocka_unit_test(t19_xid_keeps_its_connection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
