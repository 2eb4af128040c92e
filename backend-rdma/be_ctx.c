// SPDX-License-Identifier: MIT
/*
 * This file contains the backend context and its pools: configuration defaults,
 * error names, logging, creating and freeing contexts and pools, and the
 * read-only views of a pool (connection info, thresholds, counts).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <event2/event.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "backend.h"
#include "be_internal.h"

static const char *const err_names[BE_ERR__COUNT] = {
	[BE_OK] = "ok",
	[BE_ERR_SHUTDOWN] = "shutdown",
	[BE_ERR_CANCELLED] = "cancelled",
	[BE_ERR_TOO_BIG] = "too big for the limits",
	[BE_ERR_REGISTER] = "memory registration failed",
	[BE_ERR_BAD_REPLY] = "bad reply",
	[BE_ERR_OVERRUN] = "chunk lengths beyond the offer",
	[BE_ERR_VERS] = "RDMA_ERROR ERR_VERS",
	[BE_ERR_CHUNK] = "RDMA_ERROR ERR_CHUNK",
	[BE_ERR_QUEUE_FULL] = "wait queue full",
	[BE_ERR_RETRIES] = "lost with too many connections",
	[BE_ERR_SERVER_CLOSED] = "the server closed its connection",
};

const char *be_err_str(enum be_err err)
{
	return (unsigned)err < BE_ERR__COUNT && err_names[err] ? err_names[err] : "?";
}

const char *be_reg_mode_str(enum be_reg_mode mode)
{
	switch (mode) {
	case BE_REG_MW: return "mw";
	case BE_REG_MR: return "mr";
	case BE_REG_PERSISTENT: return "persistent";
	}
	return "?";
}

void be_config_default(struct be_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->bc_credits = 128;
	cfg->bc_inline_send = 4096;
	cfg->bc_inline_recv = 4096;
	cfg->bc_reg_mode = BE_REG_MW;
	cfg->bc_remote_inv = true;
	cfg->bc_conns = 1;
	cfg->bc_max_seg_len = 1u << 20;
	cfg->bc_max_queue = 4096;
	cfg->bc_connect_timeout_ms = 5000;
	cfg->bc_retry_min_ms = 100;
	cfg->bc_retry_max_ms = 10000;
	cfg->bc_keepalive_ms = 30000;
	cfg->bc_keepalive_prog = 100003;
	cfg->bc_keepalive_vers = 3;
	cfg->bc_responder_resources = 16;
	cfg->bc_ccp = false;
	cfg->bc_ccp_timeout_ms = 2000;
	cfg->bc_drain_ms = 2000;
}

/* ------------------------------------------------------------------------
 * Logging: through the caller's bc_log_fn, else one line to stderr.
 * ------------------------------------------------------------------------ */
void be_log(const struct be_ctx *ctx, const struct be_pool *pool, enum be_log_level lvl,
	    const char *fn, const char *fmt, ...)
{
	const struct be_config *cfg = &ctx->cx_cfg;
	char msg[512];
	int n;
	va_list ap;

	if (cfg->bc_log_level && (int)lvl > *cfg->bc_log_level)
		return;		/* not even formatted */
	n = snprintf(msg, sizeof(msg), "backend %s: ", pool ? pool->bp_name : "-");
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - n, fmt, ap);
	va_end(ap);
	if (cfg->bc_log_fn)
		cfg->bc_log_fn(cfg->bc_log_arg, lvl, fn, msg);
	else
		fprintf(stderr, "rpcrdma-gw %s: %s\n", fn, msg);
}
/* ------------------------------------------------------------------------
 * Context
 * ------------------------------------------------------------------------ */
struct be_ctx *be_ctx_new(struct event_base *base, const struct be_config *cfg)
{
	struct be_ctx *ctx;

	if (!base) {
		errno = EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return NULL;
	ctx->cx_base = base;
	if (cfg)
		ctx->cx_cfg = *cfg;
	else
		be_config_default(&ctx->cx_cfg);
	if (ctx->cx_cfg.bc_credits == 0)
		ctx->cx_cfg.bc_credits = 1;
	if (ctx->cx_cfg.bc_conns == 0)
		ctx->cx_cfg.bc_conns = 1;
	if (ctx->cx_cfg.bc_inline_recv < 1024)
		ctx->cx_cfg.bc_inline_recv = 1024;
	if (ctx->cx_cfg.bc_inline_send < 1024)
		ctx->cx_cfg.bc_inline_send = 1024;
	if (ctx->cx_cfg.bc_retry_min_ms == 0)
		ctx->cx_cfg.bc_retry_min_ms = 1;
	LIST_INIT(&ctx->cx_regions);
	LIST_INIT(&ctx->cx_pools);
	LIST_INIT(&ctx->cx_closing);
	TAILQ_INIT(&ctx->cx_parked);
	TAILQ_INIT(&ctx->cx_pump_due);
	rpcrdma_limits_default(&ctx->cx_lim);
	ctx->cx_lim.lim_max_segs_per_chunk = BE_MAX_CALL_SEGS;
	if (ctx->cx_cfg.bc_reg_mode == BE_REG_PERSISTENT)
		CTX_LOG(WARN, ctx, "UNSAFE registration mode 'persistent': every registered region is "
			  "remotely readable and writable by the server for its whole life");
	return ctx;
}

_Static_assert(sizeof(struct be_stats) == BE_CTR__COUNT * sizeof(uint64_t),
	       "be_stats: the named counters are bs_ctr[]");

const struct be_stats *be_ctx_stats(const struct be_ctx *ctx)
{
	return &ctx->cx_stats;
}

const struct be_config *be_ctx_config(const struct be_ctx *ctx)
{
	return &ctx->cx_cfg;
}
/* ------------------------------------------------------------------------
 * Pools
 * ------------------------------------------------------------------------ */
/* "host:port" of the pool's destination, for its log lines. */
static void pool_name(struct be_pool *pool, const struct sockaddr *addr)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (addr->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)addr;

		inet_ntop(AF_INET, &s->sin_addr, host, sizeof(host));
		snprintf(pool->bp_name, sizeof(pool->bp_name), "%s:%u", host, ntohs(s->sin_port));
	} else if (addr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)addr;

		inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
		snprintf(pool->bp_name, sizeof(pool->bp_name), "[%s]:%u", host, ntohs(s->sin6_port));
	}
}

static struct be_pool *pool_create(struct be_ctx *ctx, const struct sockaddr *addr,
				    socklen_t addrlen, be_pool_event_fn *event_cb, void *arg,
				    const char *name)
{
	struct be_pool *pool;
	unsigned k;

	if (!addr || addrlen > sizeof(pool->bp_addr)) {
		errno = EINVAL;
		return NULL;
	}
	pool = calloc(1, sizeof(*pool));
	if (!pool)
		return NULL;
	pool->bp_ctx = ctx;
	memcpy(&pool->bp_addr, addr, addrlen);
	pool->bp_addrlen = addrlen;
	pool->bp_event_cb = event_cb;
	pool->bp_event_arg = arg;
	pool_name(pool, addr);
	if (name) {
		snprintf(pool->bp_name, sizeof(pool->bp_name), "%s", name);
		pool->bp_isolated = true;
	}
	TAILQ_INIT(&pool->bp_queue);
	TAILQ_INIT(&pool->bp_failed);
	pool->bp_fail_ev = event_new(ctx->cx_base, -1, 0, be_pool_failed_cb, pool);
	pool->bp_room_ev = event_new(ctx->cx_base, -1, 0, be_pool_room_cb, pool);
	pool->bp_pump_ev = event_new(ctx->cx_base, -1, 0, be_pool_pump_cb, pool);
	pool->bp_nslots = name ? 1 : ctx->cx_cfg.bc_conns;
	pool->bp_slots = calloc(pool->bp_nslots, sizeof(struct be_slot));
	if (!pool->bp_fail_ev || !pool->bp_room_ev || !pool->bp_pump_ev || !pool->bp_slots ||
	    be_xid_table_init(pool) < 0) {
		if (pool->bp_fail_ev)
			event_free(pool->bp_fail_ev);
		if (pool->bp_room_ev)
			event_free(pool->bp_room_ev);
		if (pool->bp_pump_ev)
			event_free(pool->bp_pump_ev);
		free(pool->bp_slots);
		be_xid_table_free(pool);
		free(pool);
		return NULL;
	}
	for (k = 0; k < pool->bp_nslots; k++) {
		struct be_slot *sl = &pool->bp_slots[k];

		sl->sl_pool = pool;
		sl->sl_idx = k;
		sl->sl_retry = evtimer_new(ctx->cx_base, be_slot_retry, sl);
		if (!sl->sl_retry) {
			LOG(ERR, pool, "out of memory");
			abort();
		}
	}
	pool->bp_ka_xid = (uint32_t)random();
	LIST_INSERT_HEAD(&ctx->cx_pools, pool, bp_link);
	for (k = 0; k < pool->bp_nslots; k++)
		be_conn_start(pool, k);
	return pool;
}

struct be_pool *be_pool_new(struct be_ctx *ctx, const struct sockaddr *addr, socklen_t addrlen,
			    be_pool_event_fn *event_cb, void *arg)
{
	return pool_create(ctx, addr, addrlen, event_cb, arg, NULL);
}

struct be_pool *be_pool_new_isolated(struct be_ctx *ctx, const struct sockaddr *addr,
				     socklen_t addrlen, be_pool_event_fn *event_cb, void *arg,
				     const char *name)
{
	return pool_create(ctx, addr, addrlen, event_cb, arg, name ? name : "isolated");
}

bool be_pool_closed_for_calls(const struct be_pool *pool)
{
	return pool->bp_closed_for_calls;
}

/* Settle everything at once: no reconnect, queued calls fail. */
void be_pool_free(struct be_pool *pool)
{
	struct be_req *rq;
	unsigned k;

	if (!pool)
		return;
	pool->bp_fatal = true;
	pool->bp_freeing = true;
	for (k = 0; k < pool->bp_nslots; k++) {
		struct be_slot *sl = &pool->bp_slots[k];
		struct be_conn *cn = sl->sl_conn;

		if (cn) {
			/* Graceful: Sends already posted leave before the QP goes. */
			if (cn->cn_state == BC_UP || cn->cn_draining) {
				cn->cn_state = BC_DEAD;
				be_conn_drain_sync(cn);
			}
			cn->cn_state = BC_DEAD;
			be_conn_reap(-1, 0, cn);
		}
		event_free(sl->sl_retry);
	}
	while ((rq = TAILQ_FIRST(&pool->bp_queue)) != NULL) {
		be_queue_take(pool, rq);
		be_call_fail_queued(rq, BE_ERR_SHUTDOWN);
	}
	be_pool_failed_cb(-1, 0, pool);
	event_free(pool->bp_fail_ev);
	event_free(pool->bp_room_ev);
	event_free(pool->bp_pump_ev);
	if (pool->bp_pump_due)
		TAILQ_REMOVE(&pool->bp_ctx->cx_pump_due, pool, bp_due_link);
	LIST_REMOVE(pool, bp_link);
	free(pool->bp_slots);
	be_xid_table_free(pool);
	free(pool);
}

void be_ctx_free(struct be_ctx *ctx)
{
	struct be_pool *pool;
	struct be_region *rg;
	int d;

	if (!ctx)
		return;
	while ((pool = LIST_FIRST(&ctx->cx_pools)) != NULL)
		be_pool_free(pool);
	while (!LIST_EMPTY(&ctx->cx_closing))
		be_closing_finish(LIST_FIRST(&ctx->cx_closing));
	while ((rg = LIST_FIRST(&ctx->cx_regions)) != NULL)
		be_region_unregister(rg);
	for (d = 0; d < BE_MAX_DEVS; d++) {
		if (ctx->cx_dev[d]) {
			/* still referenced by connections whose replies are held */
			CTX_LOG(WARN, ctx, "device slot %d still in use at exit", d);
		}
	}
	free(ctx);
}

int be_pool_conn_info(const struct be_pool *pool, unsigned idx, struct be_conn_info *ci)
{
	const struct be_conn *cn;

	memset(ci, 0, sizeof(*ci));
	if (idx >= pool->bp_nslots)
		return -EINVAL;
	cn = pool->bp_slots[idx].sl_conn;
	if (!cn || cn->cn_state != BC_UP)
		return -ENOTCONN;
	ci->ci_up = true;
	ci->ci_credits = cn->cn_cr.cc_grant;
	ci->ci_inflight = cn->cn_cr.cc_inflight;
	ci->ci_send_threshold = cn->cn_send_thresh;
	ci->ci_recv_threshold = cn->cn_recv_thresh;
	ci->ci_peer_pd = cn->cn_peer_pd;
	ci->ci_peer = cn->cn_peer;
	memcpy(ci->ci_peer_raw, cn->cn_peer_raw, sizeof(ci->ci_peer_raw));
	ci->ci_peer_raw_len = cn->cn_peer_raw_len;
	ci->ci_recvs_posted = cn->cn_cr.cc_recvs;
	ci->ci_responder_resources = cn->cn_rr;
	ci->ci_initiator_depth = cn->cn_id_depth;
	ci->ci_ccp = cn->cn_ccp;
	ci->ci_read_depth = cn->cn_read_depth;
	return 0;
}

void be_pool_inline_thresholds(const struct be_pool *pool, uint32_t *send, uint32_t *recv)
{
	uint32_t ms = UINT32_MAX, mr = UINT32_MAX;
	unsigned k;

	for (k = 0; k < pool->bp_nslots; k++) {
		const struct be_conn *cn = pool->bp_slots[k].sl_conn;

		if (!cn || cn->cn_state != BC_UP)
			continue;
		if (cn->cn_send_thresh < ms)
			ms = cn->cn_send_thresh;
		if (cn->cn_recv_thresh < mr)
			mr = cn->cn_recv_thresh;
	}
	*send = ms == UINT32_MAX ? RPCRDMA_PD_DEFAULT_SIZE : ms;
	*recv = mr == UINT32_MAX ? RPCRDMA_PD_DEFAULT_SIZE : mr;
}

unsigned be_pool_queued(const struct be_pool *pool)
{
	return pool->bp_nqueued;
}

unsigned be_pool_inflight(const struct be_pool *pool)
{
	return pool->bp_ninflight;
}

const char *be_pool_last_error(const struct be_pool *pool)
{
	return pool->bp_last_err;
}

/* Only bp_addr changes: connections, calls and backchannel CALLs keep what
 * they hold; be_conn_start() reads it for the next rdma_resolve_addr. */
int be_pool_set_addr(struct be_pool *pool, const struct sockaddr *addr, socklen_t addrlen)
{
	if (!addr || addrlen == 0 || addrlen > sizeof(pool->bp_addr))
		return -EINVAL;
	if (addrlen == pool->bp_addrlen && memcmp(&pool->bp_addr, addr, addrlen) == 0)
		return 0;
	memset(&pool->bp_addr, 0, sizeof(pool->bp_addr));
	memcpy(&pool->bp_addr, addr, addrlen);
	pool->bp_addrlen = addrlen;
	pool_name(pool, addr);
	return 1;
}

void be_pool_set_failure(struct be_pool *pool, be_pool_fail_fn *fn, void *arg)
{
	pool->bp_fail_fn = fn;
	pool->bp_fail_arg = arg;
}

bool be_pool_up(const struct be_pool *pool)
{
	unsigned k;

	for (k = 0; k < pool->bp_nslots; k++)
		if (pool->bp_slots[k].sl_conn && pool->bp_slots[k].sl_conn->cn_state == BC_UP &&
		    pool->bp_slots[k].sl_conn->cn_ccp != BE_CCP_PENDING)
			return true;
	return false;
}
