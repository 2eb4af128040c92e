// SPDX-License-Identifier: MIT
/*
 * Unit tests of backend-rdma at its verbs seam (be_internal.h), on the
 * fake device of fake/be_fake.c: real connections of the backend on a
 * libevent loop, without RDMA.  Covered: flush completions after a
 * disconnect give back what they hold once and every call is settled once
 * (re-sent, one callback each); the drain before the reap and its time
 * bound; be_pool_free() letting a posted Send complete before the QP goes;
 * the CCP exchange (first call, others held, answer applied, timeout
 * fallback); BE_POOL_ROOM; a new destination (be_pool_set_addr) taken by
 * the next connection only; a registration refused for locked memory names
 * RLIMIT_MEMLOCK; an unanswered call abandoned at the caller's timeout
 * (windows invalidated without a reply, credit back, late reply dropped).
 * The send ring and the choice of connection are in test_be_send.c.
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
#include <sys/resource.h>
#include <netinet/in.h>
#include <cmocka.h>

#include <event2/event.h>

#include "alloc_count.h"
#include "backend.h"
#include "be_internal.h"
#include "fake/be_fake.h"

/* ---- the cases -------------------------------------------------------- */

#define CANCEL_GONE(ca)		assert_true(be_call_cancel(ca))
#define CANCEL_ON_WIRE(ca)	assert_false(be_call_cancel(ca))

/* 1. Flush completions after a disconnect: the drain waits for them, each
 * gives back its WR's resources once, then the reap re-sends every call
 * without a reply (same XID) and each ends with exactly one callback. */
static void t01_flush_exactly_once(void **state)
{
	static const uint32_t x[4] = { 1, 2, 3, 4 };
	struct be_config cfg;
	struct bench b;
	const struct be_stats *st;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_credits = 8;
	cfg.bc_drain_ms = 5000;		/* far away: the flushes end the drain */
	cfg.bc_send_batch = 1;		/* every Send signaled: the drain waits for them */
	bench_up(&b, &cfg);
	fc = cur();
	assert_int_equal(b.ev[BE_POOL_UP], 1);
	assert_int_equal(fc->nrecvs, 8 + 4);	/* credits + backchannel + headroom, before connect */
	st = be_ctx_stats(b.ctx);

	assert_non_null(submit(&b, 0, x[0]));
	spin(&b, 2);
	answer_all(&b, fc, x, 1);
	assert_int_equal(cb_count(&b, 1), 1);

	for (unsigned i = 1; i < 4; i++)
		assert_non_null(submit(&b, i, x[i]));
	spin(&b, 2);
	assert_int_equal(nsends_op(fc, IBV_WR_SEND), 4);
	complete_send(fc, 2, IBV_WC_SUCCESS);	/* 2's Send done; 3 and 4 still out */
	spin(&b, 2);

	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	spin(&b, 5);
	assert_int_equal(fc->qp_state, IBV_QPS_ERR);
	assert_false(fc->qp_destroyed);		/* draining: 2 Sends not back */
	assert_int_equal(st->bs_resent, 0);
	assert_int_equal(be_pool_inflight(b.pool), 3);

	/* The device flushes everything outstanding, the receives too. */
	complete_send(fc, 3, IBV_WC_WR_FLUSH_ERR);
	complete_send(fc, 4, IBV_WC_WR_FLUSH_ERR);
	for (unsigned r = fc->recv_head; r < fc->nrecvs; r++)
		queue_wc(fc, fc->recvs[r].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	for (unsigned i = 0; i < 100 && !fc->qp_destroyed; i++)
		spin(&b, 5);
	assert_true(fc->qp_destroyed);
	assert_int_equal(st->bs_flushed, 2 + (fc->nrecvs - fc->recv_head));
	assert_int_equal(st->bs_drain_timeouts, 0);	/* drained, not timed out */
	assert_int_equal(st->bs_resent, 3);
	assert_int_equal(b.ncb, 1);		/* none settled by a flush */
	assert_int_equal(st->bs_disconnects, 1);

	/* Reconnected: the three go again with their XIDs, one callback each. */
	wait_conns(&b, 2);
	answer_all(&b, cur(), x, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(cb_count(&b, x[i]), 1);
	for (unsigned i = 0; i < b.ncb; i++)
		assert_int_equal(b.cb_err[i], BE_OK);
	bench_down(&b);
	assert_int_equal(fdev.nmr, 0);		/* every MR of both connections went */
}

/* 2. A flush that never comes: the reap goes ahead after bc_drain_ms. */
static void t02_drain_bounded(void **state)
{
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_drain_ms = 100;
	cfg.bc_send_batch = 1;		/* a signaled Send the drain waits for */
	bench_up(&b, &cfg);
	fc = cur();
	assert_non_null(submit(&b, 0, 7));
	spin(&b, 2);
	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	for (unsigned i = 0; i < 100 && !fc->qp_destroyed; i++)
		spin(&b, 10);
	assert_true(fc->qp_destroyed);
	/* not before the bound (timers never fire early) */
	assert_true((fc->t_destroyed.tv_sec - fc->t_err.tv_sec) * 1000 +
		    (fc->t_destroyed.tv_nsec - fc->t_err.tv_nsec) / 1000000 >= 95);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_drain_timeouts, 1);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_resent, 1);
	bench_down(&b);
	assert_int_equal(cb_count(&b, 7), 1);	/* BE_ERR_SHUTDOWN at the free, once */
	assert_int_equal(b.cb_err[0], BE_ERR_SHUTDOWN);
}

/* 3. be_pool_free(): a Send posted in the last loop turn completes before
 * the QP goes to ERR (graceful drain); without its completion the wait is
 * bounded; either way one SHUTDOWN callback. */
static void t03_pool_free_drains(void **state)
{
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_send_batch = 1;		/* signaled Sends (unsignaled ones: t15) */
	bench_up(&b, &cfg);
	fc = cur();
	assert_non_null(submit(&b, 0, 9));
	spin(&b, 2);
	complete_send(fc, 9, IBV_WC_SUCCESS);	/* in the CQ, not yet polled */
	assert_int_equal(fc->npolled, 0);
	be_pool_free(b.pool);
	b.pool = NULL;
	assert_int_equal(fc->polled_at_err, 1);	/* polled, then ERR */
	assert_int_equal(be_ctx_stats(b.ctx)->bs_drain_timeouts, 0);
	assert_int_equal(cb_count(&b, 9), 1);
	assert_int_equal(b.cb_err[0], BE_ERR_SHUTDOWN);
	bench_down(&b);

	be_config_default(&cfg);
	cfg.bc_drain_ms = 20;
	cfg.bc_send_batch = 1;
	bench_up(&b, &cfg);
	assert_non_null(submit(&b, 0, 10));
	spin(&b, 2);
	be_pool_free(b.pool);			/* the Send never completes */
	b.pool = NULL;
	assert_int_equal(be_ctx_stats(b.ctx)->bs_drain_timeouts, 1);
	assert_int_equal(cb_count(&b, 10), 1);
	bench_down(&b);
}

/* 4. CCP: CONF_RDMA is the first call, the others wait; the answer lowers
 * the send threshold and the Read depth; BE_POOL_UP only then. */
static void t04_ccp_first(void **state)
{
	static const uint32_t conf[3] = { 2048, 4, 8 };
	struct be_config cfg;
	struct be_conn_info ci;
	struct bench b;
	struct fconn *fc;
	uint32_t ccp_xid;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_ccp = true;
	bench_up(&b, &cfg);
	fc = cur();
	assert_int_equal(fc->nsends, 1);
	assert_int_equal(b.ev[BE_POOL_UP], 0);
	assert_false(be_pool_up(b.pool));
	ccp_xid = chk_be32(fc->sends[0].addr);
	/* header 28 bytes (no chunks), then the RPC call: prog at +12 */
	assert_int_equal(chk_be32(fc->sends[0].addr + 28 + 12), CCP_PROG);
	assert_int_equal(be_pool_conn_info(b.pool, 0, &ci), 0);
	assert_int_equal(ci.ci_ccp, BE_CCP_PENDING);

	assert_non_null(submit(&b, 0, 21));
	spin(&b, 5);
	assert_int_equal(fc->nsends, 1);	/* held back */
	assert_int_equal(be_pool_queued(b.pool), 1);

	complete_send(fc, ccp_xid, IBV_WC_SUCCESS);
	deliver_reply(fc, ccp_xid, 8, 0, conf, 3);
	spin(&b, 5);
	assert_int_equal(b.ev[BE_POOL_UP], 1);
	assert_int_equal(be_pool_conn_info(b.pool, 0, &ci), 0);
	assert_int_equal(ci.ci_ccp, BE_CCP_DONE);
	assert_int_equal(ci.ci_send_threshold, 2048);
	assert_int_equal(ci.ci_read_depth, 8);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_ccp_ok, 1);
	assert_true(send_of(fc, 21) >= 0);	/* now it went */
	bench_down(&b);
}

/* 5. CCP unanswered: fallback after bc_ccp_timeout_ms, the credit given
 * back, the held call goes; a PROG_UNAVAIL answer falls back at once. */
static void t05_ccp_fallback(void **state)
{
	struct be_config cfg;
	struct be_conn_info ci;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_ccp = true;
	cfg.bc_ccp_timeout_ms = 20;
	cfg.bc_drain_ms = 20;
	bench_up(&b, &cfg);
	fc = cur();
	assert_non_null(submit(&b, 0, 31));
	spin(&b, 40);
	assert_int_equal(be_pool_conn_info(b.pool, 0, &ci), 0);
	assert_int_equal(ci.ci_ccp, BE_CCP_FALLBACK);
	assert_int_equal(ci.ci_send_threshold, 4096);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_ccp_fallback, 1);
	assert_true(send_of(fc, 31) >= 0);
	assert_int_equal(b.ev[BE_POOL_UP], 1);
	bench_down(&b);

	bench_up(&b, &cfg);
	fc = cur();
	complete_send(fc, chk_be32(fc->sends[0].addr), IBV_WC_SUCCESS);
	deliver_reply(fc, chk_be32(fc->sends[0].addr), 8, RPC_PROG_UNAVAIL, NULL, 0);
	spin(&b, 5);
	assert_int_equal(be_pool_conn_info(b.pool, 0, &ci), 0);
	assert_int_equal(ci.ci_ccp, BE_CCP_FALLBACK);
	assert_int_equal(ci.ci_read_depth, 16);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_ccp_fallback, 1);
	bench_down(&b);
}

/* 6. BE_POOL_ROOM: once after a full queue drains, once after a busy XID
 * ends; never without a refusal. */
static void t06_room_event(void **state)
{
	static const uint32_t x[2] = { 41, 42 };
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_max_queue = 2;
	bench_up_unanswered(&b, &cfg);
	fc = cur();
	assert_non_null(submit(&b, 0, x[0]));
	assert_non_null(submit(&b, 1, x[1]));
	assert_null(submit(&b, 2, 43));
	assert_int_equal(errno, ENOBUFS);
	spin(&b, 5);
	assert_int_equal(b.ev[BE_POOL_ROOM], 0);
	queue_cm(fc, RDMA_CM_EVENT_ESTABLISHED);	/* one credit: one call leaves */
	spin(&b, 5);
	assert_int_equal(be_pool_queued(b.pool), 1);
	assert_int_equal(b.ev[BE_POOL_ROOM], 1);
	assert_null(submit(&b, 2, x[1]));		/* its XID is in flight */
	assert_int_equal(errno, EEXIST);
	answer_all(&b, fc, x, 2);
	assert_int_equal(b.ev[BE_POOL_ROOM], 2);
	assert_non_null(submit(&b, 2, 43));
	answer_all(&b, fc, (const uint32_t[]){ 43 }, 1);
	assert_int_equal(b.ev[BE_POOL_ROOM], 2);	/* no refusal, no event */
	bench_down(&b);
}

/* A pool of cfg whose CCP exchange the server answers with conf (size,
 * credits, Read depth), then call x answered by a long reply of nsegs
 * Read segments; the connection. */
static struct fconn *t07_long_reply(struct bench *b, struct be_config *cfg,
				    const uint32_t conf[3], uint32_t x, unsigned nsegs)
{
	struct fconn *fc;
	uint32_t cx;

	bench_up(b, cfg);
	fc = cur();
	cx = chk_be32(fc->sends[0].addr);
	complete_send(fc, cx, IBV_WC_SUCCESS);
	deliver_reply(fc, cx, 8, 0, conf, 3);
	spin(b, 5);
	assert_non_null(submit(b, 0, x));
	spin(b, 2);
	complete_send(fc, x, IBV_WC_SUCCESS);
	deliver_long_reply(fc, x, nsegs);
	spin(b, 5);
	return fc;
}

/* 7. Read depth from CCP (draft-08 6.2 maxrdmaread): 1 -> the Reads of a
 * long reply go one at a time, then RDMA_DONE; 0 -> the long reply is
 * refused (no RDMA Read at all), counted, the call fails once. */
static void t07_read_depth(void **state)
{
	static const uint32_t conf1[3] = { 4096, 4, 1 }, conf0[3] = { 4096, 4, 0 };
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_ccp = true;
	fc = t07_long_reply(&b, &cfg, conf1, 51, 3);
	for (unsigned k = 1; k <= 3; k++) {
		unsigned last = fc->nsends - 1;

		assert_int_equal(nsends_op(fc, IBV_WR_RDMA_READ), k);	/* one in flight */
		assert_int_equal(fc->sends[last].op, IBV_WR_RDMA_READ);
		assert_int_equal(fc->sends[last].len, 100);
		queue_wc(fc, fc->sends[last].wr_id, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, 100);
		spin(&b, 5);
	}
	assert_int_equal(nsends_op(fc, IBV_WR_RDMA_READ), 3);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_rdma_done, 1);
	assert_int_equal(cb_count(&b, 51), 1);
	assert_int_equal(b.cb_err[0], BE_OK);
	bench_down(&b);

	fc = t07_long_reply(&b, &cfg, conf0, 52, 1);
	assert_int_equal(nsends_op(fc, IBV_WR_RDMA_READ), 0);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_read_depth_refused, 1);
	assert_int_equal(cb_count(&b, 52), 1);
	assert_int_equal(b.cb_err[0], BE_ERR_BAD_REPLY);
	bench_down(&b);
}

/* 8. Logging through the caller: each message goes to bc_log_fn with its
 * level and the pool's name, under the caller's live level (read at each
 * message), and nothing above that level is delivered. */
static struct {
	unsigned n;
	enum be_log_level lvl[8];
	char msg[8][400];
} LG;

static void on_log(void *arg, enum be_log_level lvl, const char *func, const char *msg)
{
	(void)func;
	assert_ptr_equal(arg, &LG);
	if (LG.n < 8) {
		LG.lvl[LG.n] = lvl;
		snprintf(LG.msg[LG.n], sizeof(LG.msg[0]), "%s", msg);
	}
	LG.n++;
}

static void t08_log_callback(void **state)
{
	int level = BE_LOG_INFO;
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	memset(&LG, 0, sizeof(LG));
	be_config_default(&cfg);
	cfg.bc_log_fn = on_log;
	cfg.bc_log_arg = &LG;
	cfg.bc_log_level = &level;
	bench_up(&b, &cfg);
	fc = cur();
	assert_int_equal(LG.n, 1);		/* "connection 0 up", INFO */
	assert_int_equal(LG.lvl[0], BE_LOG_INFO);
	assert_non_null(strstr(LG.msg[0], "backend 0.0.0.0:20049: connection 0 up"));

	level = BE_LOG_WARN;
	deliver_reply(fc, 0x99, 8, 0, NULL, 0);	/* no such call: WARN */
	spin(&b, 5);
	assert_int_equal(LG.n, 2);
	assert_int_equal(LG.lvl[1], BE_LOG_WARN);
	assert_non_null(strstr(LG.msg[1], "xid 00000099: no such call"));

	level = BE_LOG_ERR;			/* the caller lowered its level */
	deliver_reply(fc, 0x9a, 8, 0, NULL, 0);
	spin(&b, 5);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_unknown_xid, 2);
	assert_int_equal(LG.n, 2);
	bench_down(&b);
}

/* 9. Cancel while queued (no connection yet): the call is gone at once,
 * no callback, and it is never posted once the connection comes up. */
static void t09_cancel_queued(void **state)
{
	struct be_config cfg;
	struct be_req *ca;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	bench_up_unanswered(&b, &cfg);
	fc = cur();
	ca = submit(&b, 0, 71);
	assert_non_null(ca);
	assert_non_null(submit(&b, 1, 72));
	assert_int_equal(be_pool_queued(b.pool), 2);
	assert_int_equal(ca->bq_state, BE_REQ_QUEUED);
	CANCEL_GONE(ca);
	assert_int_equal(ca->bq_state, BE_REQ_IDLE);	/* the caller's again */
	assert_false(be_call_cancel(ca));		/* nothing left to cancel */
	assert_int_equal(be_pool_queued(b.pool), 1);
	queue_cm(fc, RDMA_CM_EVENT_ESTABLISHED);
	spin(&b, 5);
	answer_all(&b, fc, (const uint32_t[]){ 72 }, 1);
	assert_int_equal(cb_count(&b, 72), 1);
	assert_true(send_of(fc, 71) < 0);	/* never posted */
	assert_int_equal(nsends_op(fc, IBV_WR_SEND), 1);
	assert_int_equal(cb_count(&b, 71), 0);
	bench_down(&b);
	assert_int_equal(cb_count(&b, 71), 0);	/* not even at the free */
}

/* 10. Cancel while posted: the server may still access the call's memory,
 * so the callback (BE_ERR_CANCELLED) comes only once its window is
 * invalidated -- after the LOCAL_INV completed, or after the connection's
 * QP went to ERR -- and the caller releases its memory then.  A cancelled
 * call is not re-sent. */
static void t10_cancel_posted(void **state)
{
	struct be_read_item ri = { 32, 8 };
	struct be_config cfg;
	struct be_call_desc d;
	struct be_region *rg;
	struct be_req *ca;
	struct bench b;
	struct fconn *fc;
	int inv;

	(void)state;
	be_config_default(&cfg);		/* memory windows */
	bench_up(&b, &cfg);
	fc = cur();
	rg = be_region_register(b.ctx, b.msg, sizeof(b.msg));
	assert_non_null(rg);
	memset(b.msg[0], 0, 40);
	chk_put_be32(b.msg[0], 81);
	b.iov[0] = (struct iovec){ b.msg[0], 40 };
	d = (struct be_call_desc){ .cd_xid = 81, .cd_msg = &b.iov[0], .cd_msg_niov = 1,
				   .cd_reads = &ri, .cd_nreads = 1 };
	ca = &b.req[0];
	assert_int_equal(be_call_submit(b.pool, ca, &d, on_reply, &b), 0);
	assert_int_equal(be_call_submit(b.pool, ca, &d, on_reply, &b), -EBUSY);
	spin(&b, 2);
	assert_int_equal(nsends_op(fc, IBV_WR_BIND_MW), 1);	/* the read chunk's window */
	assert_int_equal(ca->bq_state, BE_REQ_POSTED);
	CANCEL_ON_WIRE(ca);
	assert_int_equal(ca->bq_state, BE_REQ_CANCELLING);
	complete_send(fc, 81, IBV_WC_SUCCESS);
	deliver_reply(fc, 81, 8, 0, NULL, 0);
	spin(&b, 5);
	assert_int_equal(nsends_op(fc, IBV_WR_LOCAL_INV), 1);
	assert_int_equal(cb_count(&b, 81), 0);	/* the window is not invalidated yet */
	for (inv = (int)fc->nsends; inv-- > 0;)
		if (fc->sends[inv].op == IBV_WR_LOCAL_INV)
			break;
	queue_wc(fc, fc->sends[inv].wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0);
	spin(&b, 5);
	assert_int_equal(cb_count(&b, 81), 1);	/* now: the memory is the caller's */
	assert_int_equal(b.cb_err[0], BE_ERR_CANCELLED);
	assert_int_equal(ca->bq_state, BE_REQ_IDLE);	/* released in the callback */

	/* On the wire when the connection dies: called back after the QP went
	 * to ERR, not re-sent. */
	ca = submit(&b, 1, 82);
	assert_non_null(ca);
	spin(&b, 2);
	assert_true(send_of(fc, 82) >= 0);
	CANCEL_ON_WIRE(ca);
	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	complete_send(fc, 82, IBV_WC_WR_FLUSH_ERR);
	for (unsigned i = 0; i < 100 && !fc->qp_destroyed; i++)
		spin(&b, 5);
	assert_int_equal(cb_count(&b, 82), 1);
	assert_int_equal(b.cb_err[1], BE_ERR_CANCELLED);
	assert_int_equal(b.cb_qp_state[1], IBV_QPS_ERR);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_resent, 0);
	be_region_unregister(rg);
	bench_down(&b);
	assert_int_equal(cb_count(&b, 82), 1);
}

/* 12. be_pool_set_addr() (the server's name resolved elsewhere): the live
 * connection and its posted call stay; after the connection is lost, the
 * reconnect goes to the new address and re-sends the call there, which
 * ends with one callback. */
static void t12_set_addr_next_connection(void **state)
{
	struct sockaddr_in b_addr = { .sin_family = AF_INET, .sin_port = htons(20049),
				      .sin_addr.s_addr = htonl(0x0a000002) };
	static const uint32_t x[1] = { 91 };
	struct be_config cfg;
	struct bench b;
	struct fconn *fc;

	(void)state;
	be_config_default(&cfg);
	bench_up(&b, &cfg);
	fc = cur();
	assert_int_equal(b.ev[BE_POOL_UP], 1);
	assert_int_equal(fc->dst.sin_addr.s_addr, htonl(0));
	assert_non_null(submit(&b, 0, x[0]));
	spin(&b, 2);
	assert_int_equal(be_pool_inflight(b.pool), 1);

	assert_int_equal(be_pool_set_addr(b.pool, (struct sockaddr *)&b_addr, sizeof(b_addr)), 1);
	assert_int_equal(be_pool_set_addr(b.pool, (struct sockaddr *)&b_addr, sizeof(b_addr)), 0);
	assert_int_equal(be_pool_set_addr(b.pool, NULL, sizeof(b_addr)), -EINVAL);
	assert_int_equal(be_pool_set_addr(b.pool, (struct sockaddr *)&b_addr, 4096), -EINVAL);
	spin(&b, 5);
	assert_true(be_pool_up(b.pool));	/* the live connection is not touched */
	assert_int_equal(fdev.nconns, 1);
	assert_int_equal(b.ncb, 0);

	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	complete_send(fc, x[0], IBV_WC_WR_FLUSH_ERR);
	for (unsigned r = fc->recv_head; r < fc->nrecvs; r++)
		queue_wc(fc, fc->recvs[r].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	wait_conns(&b, 2);
	assert_int_equal(cur()->dst.sin_addr.s_addr, b_addr.sin_addr.s_addr);
	assert_int_equal(cur()->dst.sin_port, b_addr.sin_port);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_resent, 1);
	answer_all(&b, cur(), x, 1);
	assert_int_equal(cb_count(&b, x[0]), 1);
	assert_int_equal(b.cb_err[0], BE_OK);
	bench_down(&b);
	assert_int_equal(cb_count(&b, x[0]), 1);
}

/* 13. A call the server never answers, abandoned at the caller's timeout
 * (be_call_abandon after be_call_cancel): its window is invalidated at
 * once, without a reply; the callback (BE_ERR_CANCELLED) comes when the
 * LOCAL_INV completes; its credit is back (the next call, queued on the
 * first connection's grant of 1, goes out); a late reply for it is dropped
 * as for no call.  With per-call MRs, the MR is deregistered at once. */
static void abandon_case(enum be_reg_mode mode)
{
	struct be_read_item ri = { 32, 8 };
	struct be_config cfg;
	struct be_call_desc d;
	struct be_region *rg;
	struct be_req *ca;
	struct bench b;
	struct fconn *fc;
	int inv, nmr;

	be_config_default(&cfg);
	cfg.bc_reg_mode = mode;
	bench_up(&b, &cfg);
	fc = cur();
	rg = be_region_register(b.ctx, b.msg, sizeof(b.msg));
	assert_non_null(rg);
	nmr = fdev.nmr;
	memset(b.msg[0], 0, 40);
	chk_put_be32(b.msg[0], 91);
	b.iov[0] = (struct iovec){ b.msg[0], 40 };
	d = (struct be_call_desc){ .cd_xid = 91, .cd_msg = &b.iov[0], .cd_msg_niov = 1,
				   .cd_reads = &ri, .cd_nreads = 1 };
	ca = &b.req[0];
	assert_int_equal(be_call_submit(b.pool, ca, &d, on_reply, &b), 0);
	spin(&b, 2);
	assert_int_equal(ca->bq_state, BE_REQ_POSTED);
	assert_non_null(submit(&b, 1, 92));	/* waits: one credit, in use */
	spin(&b, 2);
	assert_int_equal(send_of(fc, 92), -1);
	complete_send(fc, 91, IBV_WC_SUCCESS);
	spin(&b, 2);
	if (mode == BE_REG_MR)
		assert_int_equal(fdev.nmr, nmr + 1);	/* the read chunk's MR */
	CANCEL_ON_WIRE(ca);
	be_call_abandon(ca);
	spin(&b, 2);
	if (mode == BE_REG_MW) {
		assert_int_equal(nsends_op(fc, IBV_WR_LOCAL_INV), 1);
		assert_int_equal(cb_count(&b, 91), 0);	/* not until the LOCAL_INV completes */
		for (inv = (int)fc->nsends; inv-- > 0;)
			if (fc->sends[inv].op == IBV_WR_LOCAL_INV)
				break;
		queue_wc(fc, fc->sends[inv].wr_id, IBV_WC_SUCCESS, IBV_WC_LOCAL_INV, 0);
		spin(&b, 5);
	} else {
		assert_int_equal(fdev.nmr, nmr);		/* deregistered: access gone */
	}
	assert_int_equal(cb_count(&b, 91), 1);
	assert_int_equal(b.cb_err[0], BE_ERR_CANCELLED);
	assert_int_equal(ca->bq_state, BE_REQ_IDLE);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_abandoned, 1);
	assert_true(send_of(fc, 92) >= 0);		/* the credit came back */
	deliver_reply(fc, 91, 8, 0, NULL, 0);		/* the late reply */
	complete_send(fc, 92, IBV_WC_SUCCESS);
	deliver_reply(fc, 92, 8, 0, NULL, 0);
	spin(&b, 5);
	assert_int_equal(be_ctx_stats(b.ctx)->bs_unknown_xid, 1);
	assert_int_equal(cb_count(&b, 91), 1);
	assert_int_equal(cb_count(&b, 92), 1);
	assert_int_equal(b.cb_err[1], BE_OK);
	assert_int_equal(fc->qp_state == IBV_QPS_ERR, false);	/* the connection stays */
	be_region_unregister(rg);
	bench_down(&b);
}

static void t14_abandon_unanswered(void **state)
{
	(void)state;
	abandon_case(BE_REG_MW);
	abandon_case(BE_REG_MR);
}

static void loop_break(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* 11. No allocation per forwarded call: once the connection is up, a call
 * submitted, posted, answered, called back and released allocates nothing
 * -- its request is the caller's (b.req), its post an element of the
 * connection's array.  The loop runs on a timer made beforehand
 * (event_base_loopexit() would allocate one each time). */
static void t11_no_allocation_per_call(void **state)
{
	struct timeval tv = { 0, 2000 };
	struct be_config cfg;
	struct event *tick;
	struct bench b;
	struct fconn *fc;
	unsigned ncalls = 40, k;

	(void)state;
	be_config_default(&cfg);
	cfg.bc_credits = 8;
	bench_up(&b, &cfg);
	fc = cur();
	tick = evtimer_new(b.base, loop_break, b.base);
	assert_non_null(tick);
	n_allocs = 0;
	alloc_counting = true;
	for (uint32_t i = 0; i < ncalls; i++) {
		uint32_t x = 200 + i;
		struct be_req *rq = submit(&b, i % 4, x);

		assert_non_null(rq);
		for (k = 0; k < 20 && send_of(fc, x) < 0; k++) {
			evtimer_add(tick, &tv);
			event_base_dispatch(b.base);
		}
		complete_send(fc, x, IBV_WC_SUCCESS);
		deliver_reply(fc, x, 8, 0, NULL, 0);
		for (k = 0; k < 20 && !cb_count(&b, x); k++) {
			evtimer_add(tick, &tv);
			event_base_dispatch(b.base);
		}
		assert_int_equal(cb_count(&b, x), 1);
		assert_int_equal(rq->bq_state, BE_REQ_IDLE);	/* released in the callback */
	}
	alloc_counting = false;
	assert_int_equal(b.ncb, ncalls);
	for (unsigned i = 0; i < ncalls; i++)
		assert_int_equal(b.cb_err[i], BE_OK);
#ifdef ALLOC_COUNT_ON
	assert_int_equal(n_allocs, 0);
#endif
	event_free(tick);
	bench_down(&b);
}

/* 13. Registration refused for locked memory (ENOMEM, as the kernel does
 * past RLIMIT_MEMLOCK without CAP_IPC_LOCK): a region, a connection's
 * buffers, and a region when a device is opened again each log a line
 * naming the limit in force and LimitMEMLOCK=.  A device whose regions do
 * not register is not used: the connection fails and is retried (it would
 * otherwise come up and register every call on its own); nothing crashes. */
static unsigned memlock_lines(void)
{
	unsigned named = 0;

	for (unsigned i = 0; i < LG.n && i < 8; i++)
		if (LG.lvl[i] == BE_LOG_ERR && strstr(LG.msg[i], "ibv_reg_mr(") &&
		    strstr(LG.msg[i], "RLIMIT_MEMLOCK (memlock, now ") && strstr(LG.msg[i], "LimitMEMLOCK="))
			named++;
	return named;
}

static void t13_memlock_named(void **state)
{
	static char buf[65536];
	int level = BE_LOG_DEBUG;
	struct rlimit old, low;
	struct be_config cfg;
	struct be_region *rg;
	struct bench b;
	struct fconn *fc;
	char want[160];

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_MEMLOCK, &old), 0);
	low = old;
	low.rlim_cur = old.rlim_max != RLIM_INFINITY && old.rlim_max < 65536 ? old.rlim_max : 65536;
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &low), 0);
	memset(&LG, 0, sizeof(LG));
	be_config_default(&cfg);
	cfg.bc_log_fn = on_log;
	cfg.bc_log_arg = &LG;
	cfg.bc_log_level = &level;

	/* a region, with the device open (a connection up) */
	bench_up(&b, &cfg);
	LG.n = 0;
	fdev.reg_enomem = sizeof(buf);
	assert_null(be_region_register(b.ctx, buf, sizeof(buf)));
	assert_int_equal(errno, ENOMEM);
	assert_int_equal(memlock_lines(), 1);
	snprintf(want, sizeof(want), "ibv_reg_mr(65536 bytes) failed: %s: registered memory is "
		 "locked and counted against RLIMIT_MEMLOCK (memlock, now %llu bytes)",
		 strerror(ENOMEM), (unsigned long long)low.rlim_cur);
	if (!strstr(LG.msg[0], want))
		fail_msg("'%s' lacks '%s'", LG.msg[0], want);

	/* registered while it fits; the connection lost; the device opened
	 * again cannot register it: no connection comes up */
	fdev.reg_enomem = 0;
	rg = be_region_register(b.ctx, buf, sizeof(buf));
	assert_non_null(rg);
	fdev.reg_enomem = sizeof(buf);
	fc = cur();
	LG.n = 0;
	queue_cm(fc, RDMA_CM_EVENT_DISCONNECTED);
	for (unsigned r = fc->recv_head; r < fc->nrecvs; r++)
		queue_wc(fc, fc->recvs[r].wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0);
	for (unsigned i = 0; i < 100 && memlock_lines() == 0; i++)
		spin(&b, 10);
	spin(&b, 20);
	assert_true(memlock_lines() >= 1);
	assert_int_equal(b.ev[BE_POOL_UP], 1);	/* the first connection only */
	assert_false(be_pool_up(b.pool));
	be_region_unregister(rg);
	bench_down(&b);

	/* a connection's send and receive buffers */
	memset(&LG, 0, sizeof(LG));
	fdev.reg_enomem = SIZE_MAX;
	bench_up(&b, &cfg);
	assert_true(memlock_lines() >= 1);
	assert_false(be_pool_up(b.pool));
	fdev.reg_enomem = 0;
	assert_int_equal(setrlimit(RLIMIT_MEMLOCK, &old), 0);
	bench_down(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_flush_exactly_once),
		cmocka_unit_test(t02_drain_bounded),
		cmocka_unit_test(t03_pool_free_drains),
		cmocka_unit_test(t04_ccp_first),
		cmocka_unit_test(t05_ccp_fallback),
		cmocka_unit_test(t06_room_event),
		cmocka_unit_test(t07_read_depth),
		cmocka_unit_test(t08_log_callback),
		cmocka_unit_test(t09_cancel_queued),
		cmocka_unit_test(t10_cancel_posted),
		cmocka_unit_test(t11_no_allocation_per_call),
		cmocka_unit_test(t12_set_addr_next_connection),
		cmocka_unit_test(t13_memlock_named),
		cmocka_unit_test(t14_abandon_unanswered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
