// SPDX-License-Identifier: MIT
/*
 * This file contains rpcrdma-call, a test tool that drives backend-rdma
 * against a real RPC-over-RDMA server (the kernel nfsd in the VM bed):
 *
 *   rpcrdma-call [options] ADDR PORT COMMAND [ARGS]
 *
 *   null [N]                 N NULL calls (default 1), one after the other
 *   concurrent N             N NULL calls submitted at once; checks that the
 *                            calls sent against the grant never exceed it
 *   rw EXPORT NAME SIZE      MOUNT EXPORT over TCP (libtirpc), CREATE NAME,
 *                            WRITE SIZE random bytes (read chunk when over
 *                            --ddp-min, inline otherwise), READ them back
 *                            through a write chunk, compare SHA-256
 *   readdir EXPORT DIR N     LOOKUP DIR, READDIR it through a reply chunk
 *                            until eof; expects N entries besides . and ..
 *   soak SECONDS             NULL calls, 8 at a time, for SECONDS; every call
 *                            must succeed, across reconnects
 *   chunky N                 N NULL calls one after the other, each offering
 *                            a 4 KiB write chunk (for tests/peer/rpcrdma-peer,
 *                            which writes 100 bytes of 0xab into it);
 *                            --expect-error NAME: each call must fail so
 *   idle SECONDS             stay connected and idle (keepalive), then NULL
 *
 * Options: --expect-credits N, --expect-pd HEX (first 8 bytes of the
 * server's private data), --mode mw|mr|persistent, --credits N,
 * --ddp-min BYTES, --nomsg (long calls as position-zero read chunks),
 * --max-seg BYTES, --expect-reconnect, --retry-max MS, --timeout SECONDS,
 * --keepalive MS, --no-remote-inv (clear the RFC 8797 R flag), --conns N,
 * --ccp (CONF_RDMA first, draft-08 6), --send-batch N (signal every Nth
 * call Send; 1: every Send).  Prints one line per fact
 * measured; exit 0 = all passed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <event2/event.h>
#include <sys/socket.h>

#include "rpcrdma-call.h"

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stdout, "FAIL: ");
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, "\n");
	va_end(ap);
	exit(1);
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pool_event(struct be_pool *pool, enum be_pool_event ev, void *arg)
{
	struct tool *t = arg;

	(void)pool;
	if (ev == BE_POOL_UP)
		t->ups++;
	else if (ev == BE_POOL_DOWN)
		t->downs++;
	printf("pool event: %s\n", ev == BE_POOL_UP ? "up" : ev == BE_POOL_DOWN ? "down" : "fatal");
	fflush(stdout);
}

/* Run the loop until *flag or the deadline. */
static bool loop_until(struct tool *t, const bool *flag, double secs)
{
	double end = now_s() + secs;

	while (!*flag && now_s() < end)
		event_base_loop(t->base, EVLOOP_ONCE);
	return *flag;
}

static void sync_cb(struct be_req *req, const struct be_reply *r, void *arg)
{
	struct sync_call *sc = arg;

	(void)req;
	sc->reply = *r;
	sc->done = true;
}

/* Submit and wait (the descriptor's arrays, on the caller's stack, outlive
 * the call); the caller releases &sc->req. */
void call_sync(struct tool *t, const struct be_call_desc *d, struct sync_call *sc)
{
	int rc;

	memset(sc, 0, sizeof(*sc));
	sc->t = t;
	rc = be_call_submit(t->pool, &sc->req, d, sync_cb, sc);
	if (rc < 0)
		die("be_call_submit xid %08x: %s", d->cd_xid, strerror(-rc));
	if (!loop_until(t, &sc->done, t->timeout_s))
		die("xid %08x: no reply within %d s", d->cd_xid, t->timeout_s);
}

/* ---------------------------------------------------------------------
 * RPC and NFSv3 encoding (raw XDR)
 * --------------------------------------------------------------------- */
/* AUTH_NONE to rpcbind, AUTH_SYS root (machine "rpcrdma-call", no gids)
 * to MOUNT and NFS. */
void rpc_call_hdr(struct xdr_enc *xe, uint32_t xid, uint32_t prog, uint32_t vers,
		  uint32_t proc)
{
	static const struct rpc_auth_sys root = { .as_namelen = 12,
						  .as_machinename = "rpcrdma-call" };

	rpc_call_encode(xe, xid, prog, vers, proc, prog == 100000 ? NULL : &root);
}

/* Decode the RPC reply in the body; the cursor is left at the results. */
void reply_cursor(const struct be_reply *r, struct xdr_cur *xc, const char *what)
{
	struct rpc_reply_hdr rh;

	if (r->br_err != BE_OK)
		die("%s: backend error: %s", what, be_err_str(r->br_err));
	xdr_cur_init(xc, r->br_body, r->br_nbody);
	if (!rpc_reply_decode(xc, &rh))
		die("%s: RPC reply undecodable", what);
	if (rh.rr_stat != RPC_MSG_ACCEPTED || rh.rr_accept_stat != RPC_SUCCESS)
		die("%s: RPC reply stat %u accept %u", what, rh.rr_stat, rh.rr_accept_stat);
	if (rh.rr_xid != r->br_xid)
		die("%s: RPC xid %08x in rdma xid %08x", what, rh.rr_xid, r->br_xid);
}
/* ---------------------------------------------------------------------
 * Commands
 * --------------------------------------------------------------------- */
static void print_info(struct tool *t)
{
	struct be_conn_info ci;
	unsigned i;

	if (be_pool_conn_info(t->pool, 0, &ci) < 0)
		die("connection 0 not up");
	printf("credits granted: %u\n", ci.ci_credits);
	printf("server private data: %u bytes:", ci.ci_peer_raw_len);
	for (i = 0; i < 8 && i < ci.ci_peer_raw_len; i++)
		printf(" %02x", ci.ci_peer_raw[i]);
	printf(" (RFC 8797 %s, send %u recv %u R %d)\n", ci.ci_peer_pd ? "yes" : "no",
	       ci.ci_peer.pd_send_size, ci.ci_peer.pd_recv_size, ci.ci_peer.pd_remote_inv);
	printf("inline thresholds: send %u recv %u\n", ci.ci_send_threshold, ci.ci_recv_threshold);
	{
		uint32_t ps, pr;

		be_pool_inline_thresholds(t->pool, &ps, &pr);
		printf("pool inline thresholds: send %u recv %u\n", ps, pr);
	}
	printf("receives posted: %u; responder_resources %u initiator_depth %u\n",
	       ci.ci_recvs_posted, ci.ci_responder_resources, ci.ci_initiator_depth);
	printf("ccp: %s, read depth %u\n", be_ccp_state_str(ci.ci_ccp), ci.ci_read_depth);
}

/* A NULL call message at m; returns its length. */
static size_t null_msg(struct tool *t, uint8_t *m, uint32_t xid)
{
	struct xdr_enc xe;

	(void)t;
	xdr_enc_init(&xe, m, 512);
	rpc_call_hdr(&xe, xid, NFS_PROG, NFS_VERS, NFSPROC3_NULL);
	return xe.xe_len;
}

static void cmd_null(struct tool *t, unsigned n)
{
	unsigned i;
	double t0 = now_s();

	for (i = 0; i < n; i++) {
		struct sync_call sc;
		struct xdr_cur xc;
		struct iovec iov = { t->mem, 0 };
		struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = &iov, .cd_msg_niov = 1 };

		iov.iov_len = null_msg(t, t->mem, d.cd_xid);
		call_sync(t, &d, &sc);
		reply_cursor(&sc.reply, &xc, "NULL");
		if (i == 0)
			printf("NULL reply: rdma proc %u, credits %u, %zu bytes\n", sc.reply.br_proc,
			       sc.reply.br_credits, sc.reply.br_body_len);
		be_call_release(&sc.req);
	}
	printf("null: %u calls ok, %.1f us each\n", n, (now_s() - t0) * 1e6 / n);
}

/* Two peaks: max_inflight is be_pool_inflight(), calls not yet finished (a
 * call leaves it once its reply and invalidations are in; its Send need not
 * be known complete); max_sent is the credit accounting's count, calls sent
 * whose reply has not come, which is what the grant bounds (RFC 8166
 * 3.3.1). */
struct conc {
	unsigned done, failed, max_inflight, max_sent, grant;
	struct tool *t;
};

/* Calls sent against the grant, summed over the pool's connections up. */
static unsigned pool_sent(const struct tool *t)
{
	unsigned k, sum = 0, n = be_ctx_config(t->ctx)->bc_conns;
	struct be_conn_info ci;

	for (k = 0; k < n; k++)
		if (be_pool_conn_info(t->pool, k, &ci) == 0)
			sum += ci.ci_inflight;
	return sum;
}

static void conc_sample(struct conc *c)
{
	unsigned inflight = be_pool_inflight(c->t->pool), sent = pool_sent(c->t);

	if (inflight > c->max_inflight)
		c->max_inflight = inflight;
	if (sent > c->max_sent)
		c->max_sent = sent;
}

/* A call in flight with others: its request and message iovec live until
 * the callback, so each has its own. */
struct call_slot {
	struct be_req cs_req;
	struct iovec cs_iov;
};

static void conc_cb(struct be_req *call, const struct be_reply *r, void *arg)
{
	struct conc *c = arg;
	struct xdr_cur xc;

	conc_sample(c);
	if (r->br_err == BE_OK) {
		reply_cursor(r, &xc, "concurrent NULL");
		if (r->br_credits > c->grant)
			c->grant = r->br_credits;
	} else {
		c->failed++;
	}
	c->done++;
	be_call_release(call);
}

static void cmd_concurrent(struct tool *t, unsigned n)
{
	struct conc c = { .t = t };
	unsigned i, max_queued = 0;
	bool all = false;
	double t0 = now_s();
	struct call_slot *cs;

	if ((size_t)n * 128 > t->memlen)
		die("too many calls for the buffer");
	cs = calloc(n, sizeof(*cs));
	if (!cs)
		die("out of memory");
	for (i = 0; i < n; i++) {
		uint8_t *m = t->mem + (size_t)i * 128;
		struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = &cs[i].cs_iov,
					  .cd_msg_niov = 1 };
		int rc;

		cs[i].cs_iov = (struct iovec){ m, null_msg(t, m, d.cd_xid) };
		rc = be_call_submit(t->pool, &cs[i].cs_req, &d, conc_cb, &c);
		if (rc < 0)
			die("submit %u: %s", i, strerror(-rc));
		conc_sample(&c);
		if (be_pool_queued(t->pool) > max_queued)
			max_queued = be_pool_queued(t->pool);
	}
	while (!all && now_s() < t0 + t->timeout_s) {
		event_base_loop(t->base, EVLOOP_ONCE);
		conc_sample(&c);
		all = c.done == n;
	}
	if (all)
		free(cs);	/* else calls may still use it: the tool exits */
	printf("concurrent: %u calls, %u done, %u failed, max in flight %u, max sent %u, "
	       "max queued %u, grant %u, %.0f calls/s\n", n, c.done, c.failed, c.max_inflight,
	       c.max_sent, max_queued, c.grant, c.done / (now_s() - t0));
	if (!all || c.failed)
		die("concurrent calls did not all succeed");
	/* a grant of 0 counts as 1; the pool has bc_conns connections */
	if (c.max_sent > (c.grant ? c.grant : 1) * be_ctx_config(t->ctx)->bc_conns)
		die("more calls sent (%u) than granted (%u x %u connections)", c.max_sent,
		    c.grant, be_ctx_config(t->ctx)->bc_conns);
}

/* diropargs3 after the header: dir fh + name. */

struct soak {
	unsigned done, failed, inflight;
	struct tool *t;
};

static void soak_cb(struct be_req *call, const struct be_reply *r, void *arg)
{
	struct soak *s = arg;

	if (r->br_err != BE_OK) {
		s->failed++;
		printf("soak: xid %08x failed: %s\n", r->br_xid, be_err_str(r->br_err));
	}
	s->done++;
	s->inflight--;
	be_call_release(call);
}

static void cmd_soak(struct tool *t, unsigned secs, bool expect_reconnect)
{
	struct soak s = { .t = t };
	double end = now_s() + secs;
	unsigned slot = 0, submitted = 0;
	struct call_slot cs[64];

	memset(cs, 0, sizeof(cs));
	while (now_s() < end || s.inflight > 0) {
		while (now_s() < end && s.inflight < 8) {
			struct call_slot *c;
			uint8_t *m;
			struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg_niov = 1 };
			int rc;

			/* at most 8 of the 64 are busy: a released one comes soon */
			while (cs[slot % 64].cs_req.bq_state != BE_REQ_IDLE)
				slot++;
			c = &cs[slot % 64];
			m = t->mem + (size_t)(slot++ % 64) * 128;
			c->cs_iov = (struct iovec){ m, null_msg(t, m, d.cd_xid) };
			d.cd_msg = &c->cs_iov;
			rc = be_call_submit(t->pool, &c->cs_req, &d, soak_cb, &s);
			if (rc < 0)
				die("soak submit: %s", strerror(-rc));
			s.inflight++;
			submitted++;
		}
		event_base_loop(t->base, EVLOOP_ONCE);
		if (now_s() > end + t->timeout_s)
			die("soak: %u calls still pending %d s after the end", s.inflight, t->timeout_s);
	}
	printf("soak: %u calls, %u done, %u failed, %u down events, %u up events, %" PRIu64
	       " re-sent\n", submitted, s.done, s.failed, t->downs, t->ups,
	       be_ctx_stats(t->ctx)->bs_resent);
	if (s.failed)
		die("calls failed");
	if (expect_reconnect && (t->downs == 0 || t->ups < 2))
		die("expected a reconnect");
}

static void cmd_chunky(struct tool *t, unsigned n, const char *expect_err)
{
	unsigned i, k;

	for (i = 0; i < n; i++) {
		uint8_t *m = t->mem, *wb = t->mem + 65536;
		struct iovec iov = { m, 0 }, wiov = { wb, 4096 };
		struct be_target wt = { &wiov, 1 };
		struct be_call_desc d = { .cd_xid = ++t->xid, .cd_msg = &iov, .cd_msg_niov = 1,
					  .cd_writes = &wt, .cd_nwrites = 1 };
		struct sync_call sc;
		struct xdr_cur xc;

		memset(wb, 0, 4096);
		iov.iov_len = null_msg(t, m, d.cd_xid);
		call_sync(t, &d, &sc);
		if (expect_err) {
			if (strcmp(be_err_str(sc.reply.br_err), expect_err))
				die("call %u: got '%s', expected '%s'", i, be_err_str(sc.reply.br_err),
				    expect_err);
			printf("chunky call %u: failed as expected: %s\n", i, expect_err);
			be_call_release(&sc.req);
			continue;
		}
		reply_cursor(&sc.reply, &xc, "chunky NULL");
		if (sc.reply.br_write_len[0] != 100)
			die("write chunk returned %u bytes, expected 100", sc.reply.br_write_len[0]);
		for (k = 0; k < 100; k++)
			if (wb[k] != 0xab)
				die("byte %u of the write chunk is %#x", k, wb[k]);
		printf("chunky call %u: ok, 100 bytes landed, remote invalidation %d\n", i,
		       sc.reply.br_remote_inv);
		be_call_release(&sc.req);
	}
}

static void cmd_idle(struct tool *t, unsigned secs)
{
	double end = now_s() + secs;

	while (now_s() < end)
		event_base_loop(t->base, EVLOOP_ONCE);
	printf("idle %u s: %" PRIu64 " keepalives\n", secs, be_ctx_stats(t->ctx)->bs_keepalives);
	cmd_null(t, 1);
}

/* A reply can overtake the completion of its own signaled Send: before
 * the stats are printed, give the send queue up to 0.5 s to catch up, so
 * sq_completions counts every signaled Send (t_53 checks one per Send). */
static void settle_sends(struct tool *t)
{
	const struct be_stats *s = be_ctx_stats(t->ctx);
	double end = now_s() + 0.5;

	while (s->bs_sq_completions < s->bs_sends_signaled && now_s() < end)
		event_base_loop(t->base, EVLOOP_NONBLOCK);
}

static void print_stats(struct tool *t)
{
	const struct be_stats *s = be_ctx_stats(t->ctx);

	settle_sends(t);
	printf("stats: calls %" PRIu64 " replies %" PRIu64 " unknown_xid %" PRIu64
	       " bad_reply %" PRIu64 " overrun %" PRIu64 " mw_binds %" PRIu64 " local_inv %" PRIu64
	       " remote_inv %" PRIu64 " mr_regs %" PRIu64 " nomsg %" PRIu64 " queued %" PRIu64
	       " connects %" PRIu64 " disconnects %" PRIu64 " resent %" PRIu64 " flushed %" PRIu64
	       " keepalives %" PRIu64 " long_replies %" PRIu64 " rdma_done %" PRIu64
	       " ccp_ok %" PRIu64 " ccp_fallback %" PRIu64 " drain_timeouts %" PRIu64
	       " read_depth_refused %" PRIu64 " sends_signaled %" PRIu64 " sends_unsignaled %" PRIu64
	       " sq_completions %" PRIu64 " rq_completions %" PRIu64 " cq_wakeups %" PRIu64 "\n",
	       s->bs_calls, s->bs_replies, s->bs_unknown_xid, s->bs_bad_reply, s->bs_write_overrun,
	       s->bs_mw_binds, s->bs_local_inv, s->bs_remote_inv, s->bs_mr_regs, s->bs_nomsg_calls,
	       s->bs_queued, s->bs_connects, s->bs_disconnects, s->bs_resent, s->bs_flushed,
	       s->bs_keepalives, s->bs_long_replies, s->bs_rdma_done, s->bs_ccp_ok,
	       s->bs_ccp_fallback, s->bs_drain_timeouts, s->bs_read_depth_refused,
	       s->bs_sends_signaled, s->bs_sends_unsignaled, s->bs_sq_completions,
	       s->bs_rq_completions, s->bs_cq_wakeups);
}

static void usage(void)
{
	fprintf(stderr, "usage: rpcrdma-call [options] ADDR PORT null [N] | concurrent N | "
			"rw EXPORT NAME SIZE | readdir EXPORT DIR N | soak SECONDS | chunky N | idle SECONDS\n");
	exit(2);
}

/* What the command line asks for besides the backend's settings. */
struct opts {
	int expect_credits;		/* -1: not checked */
	const char *expect_pd, *expect_err;
	bool expect_reconnect;
};

static void parse_opts(int argc, char **argv, struct tool *t, struct be_config *cfg,
		       struct opts *op)
{
	static const struct option lo[] = {
		{ "expect-credits", required_argument, NULL, 'c' },
		{ "expect-pd", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "credits", required_argument, NULL, 'C' },
		{ "ddp-min", required_argument, NULL, 'd' },
		{ "nomsg", no_argument, NULL, 'n' },
		{ "max-seg", required_argument, NULL, 's' },
		{ "expect-reconnect", no_argument, NULL, 'r' },
		{ "retry-max", required_argument, NULL, 'R' },
		{ "timeout", required_argument, NULL, 't' },
		{ "keepalive", required_argument, NULL, 'k' },
		{ "no-remote-inv", no_argument, NULL, 'I' },
		{ "expect-error", required_argument, NULL, 'E' },
		{ "conns", required_argument, NULL, 'N' },
		{ "ccp", no_argument, NULL, 'P' },
		{ "send-batch", required_argument, NULL, 'B' },
		{ NULL, 0, NULL, 0 }
	};
	int o;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'c': op->expect_credits = atoi(optarg); break;
		case 'p': op->expect_pd = optarg; break;
		case 'm':
			cfg->bc_reg_mode = !strcmp(optarg, "mr") ? BE_REG_MR
					 : !strcmp(optarg, "persistent") ? BE_REG_PERSISTENT : BE_REG_MW;
			break;
		case 'C': cfg->bc_credits = (unsigned)atoi(optarg); break;
		case 'd': t->ddp_min = (unsigned)atoi(optarg); break;
		case 'n': t->nomsg = true; break;
		case 's': cfg->bc_max_seg_len = (uint32_t)atoi(optarg); break;
		case 'r': op->expect_reconnect = true; break;
		case 'R': cfg->bc_retry_max_ms = (unsigned)atoi(optarg); break;
		case 't': t->timeout_s = atoi(optarg); break;
		case 'k': cfg->bc_keepalive_ms = (unsigned)atoi(optarg); break;
		case 'I': cfg->bc_remote_inv = false; break;
		case 'E': op->expect_err = optarg; break;
		case 'N': cfg->bc_conns = (unsigned)atoi(optarg); break;
		case 'P': cfg->bc_ccp = true; break;
		case 'B': cfg->bc_send_batch = (unsigned)atoi(optarg); break;
		default: usage();
		}
	}
}

/* Register the tool's memory and wait until every connection is up. */
static void tool_connect(struct tool *t, const struct be_config *cfg,
			 const struct sockaddr_in *sin, const char *port)
{
	bool up = false;
	double t0;

	t->base = event_base_new();
	t->ctx = be_ctx_new(t->base, cfg);
	t->memlen = 8u << 20;
	if (posix_memalign((void **)&t->mem, 4096, t->memlen))
		die("out of memory");
	memset(t->mem, 0, t->memlen);
	t->region = be_region_register(t->ctx, t->mem, t->memlen);
	if (!t->region)
		die("be_region_register: %s", strerror(errno));
	t->pool = be_pool_new(t->ctx, (const struct sockaddr *)sin, sizeof(*sin), pool_event, t);
	if (!t->pool)
		die("be_pool_new: %s", strerror(errno));
	t0 = now_s();
	while (!(up = be_pool_up(t->pool) && t->ups >= cfg->bc_conns) && now_s() < t0 + t->timeout_s)
		event_base_loop(t->base, EVLOOP_ONCE);
	if (!up)
		die("not connected to %s:%s within %d s", t->host, port, t->timeout_s);
	printf("connected in %.1f ms, registration mode %s\n", (now_s() - t0) * 1e3,
	       be_reg_mode_str(cfg->bc_reg_mode));
}

/* The server's grant and private data, as the options expect them. */
static void check_conn(struct tool *t, const struct opts *op)
{
	struct be_conn_info ci;
	char hex[17] = "";

	be_pool_conn_info(t->pool, 0, &ci);
	if (op->expect_credits >= 0) {
		if ((int)ci.ci_credits != op->expect_credits)
			die("credits %u, expected %d", ci.ci_credits, op->expect_credits);
		printf("ok: credits %u\n", ci.ci_credits);
	}
	if (op->expect_pd) {
		for (unsigned i = 0; i < 8 && i < ci.ci_peer_raw_len; i++)
			sprintf(hex + 2 * i, "%02x", ci.ci_peer_raw[i]);
		if (strcasecmp(hex, op->expect_pd))
			die("private data %s, expected %s", hex, op->expect_pd);
		printf("ok: private data %s (%u bytes)\n", hex, ci.ci_peer_raw_len);
	}
}

/* CMD and its arguments (argv[0] is CMD). */
static void run_cmd(struct tool *t, int argc, char **argv, const struct opts *op)
{
	const char *cmd = argv[0];

	if (!strcmp(cmd, "null"))
		cmd_null(t, argc > 1 ? (unsigned)atoi(argv[1]) : 1);
	else if (!strcmp(cmd, "concurrent") && argc > 1)
		cmd_concurrent(t, (unsigned)atoi(argv[1]));
	else if (!strcmp(cmd, "rw") && argc > 3)
		cmd_rw(t, argv[1], argv[2], strtoul(argv[3], NULL, 0));
	else if (!strcmp(cmd, "readdir") && argc > 3)
		cmd_readdir(t, argv[1], argv[2], (unsigned)atoi(argv[3]));
	else if (!strcmp(cmd, "chunky") && argc > 1)
		cmd_chunky(t, (unsigned)atoi(argv[1]), op->expect_err);
	else if (!strcmp(cmd, "idle") && argc > 1)
		cmd_idle(t, (unsigned)atoi(argv[1]));
	else if (!strcmp(cmd, "soak") && argc > 1)
		cmd_soak(t, (unsigned)atoi(argv[1]), op->expect_reconnect);
	else
		usage();
}

int main(int argc, char **argv)
{
	struct tool t = { .timeout_s = 20, .ddp_min = 1024 };
	struct opts op = { .expect_credits = -1 };
	struct be_config cfg;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	const char *cmd;

	be_config_default(&cfg);
	cfg.bc_keepalive_ms = 0;
	parse_opts(argc, argv, &t, &cfg, &op);
	if (argc - optind < 3)
		usage();
	t.host = argv[optind];
	if (inet_pton(AF_INET, argv[optind], &sin.sin_addr) != 1)
		die("bad address %s", argv[optind]);
	sin.sin_port = htons((uint16_t)atoi(argv[optind + 1]));
	cmd = argv[optind + 2];
	setvbuf(stdout, NULL, _IOLBF, 0);
	tool_connect(&t, &cfg, &sin, argv[optind + 1]);
	t.xid = (uint32_t)random() & 0x7fff0000u;

	/* One NULL first: the grant arrives with the first reply. */
	if (!op.expect_err) {
		cmd_null(&t, 1);
		print_info(&t);
	}
	check_conn(&t, &op);
	run_cmd(&t, argc - optind - 2, argv + optind + 2, &op);
	print_stats(&t);
	if (strcmp(cmd, "soak") && !op.expect_err && (be_ctx_stats(t.ctx)->bs_disconnects ||
						       be_ctx_stats(t.ctx)->bs_wc_errors))
		die("the connection broke during the test");
	/* No settling time: be_pool_free() lets the Sends already posted (an
	 * RDMA_DONE of the last loop turn) complete before the QP goes. */
	be_pool_free(t.pool);
	be_region_unregister(t.region);
	be_ctx_free(t.ctx);
	event_base_free(t.base);
	free(t.mem);
	printf("PASS\n");
	return 0;
}
