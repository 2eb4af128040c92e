// SPDX-License-Identifier: MIT
/*
 * This file contains memory registration of the backend: devices and their PDs,
 * caller regions registered on each device, memory windows, and the
 * registration of one span of a call (window bind, per-call MR or the
 * persistent region's key).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <event2/event.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "backend.h"
#include "be_internal.h"

static int region_access(const struct be_ctx *ctx)
{
	switch (ctx->cx_cfg.bc_reg_mode) {
	case BE_REG_MW:
		return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	case BE_REG_PERSISTENT:
		return IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
	case BE_REG_MR:
	default:
		return 0;	/* per call registrations only */
	}
}

void be_reg_fail_log(struct be_ctx *ctx, const struct be_pool *pool, size_t len, int err)
{
	struct rlimit rl;
	char lim[32] = "unlimited";

	if (err != ENOMEM && err != EAGAIN) {
		be_log(ctx, pool, BE_LOG_ERR, __func__, "ibv_reg_mr(%zu bytes) failed: %s", len,
		       strerror(err));
		return;
	}
	/* Registered memory is pinned and charged to RLIMIT_MEMLOCK (without
	 * CAP_IPC_LOCK): the usual cause, so the line says which limit. */
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		snprintf(lim, sizeof(lim), "%llu bytes", (unsigned long long)rl.rlim_cur);
	be_log(ctx, pool, BE_LOG_ERR, __func__, "ibv_reg_mr(%zu bytes) failed: %s: registered "
	       "memory is locked and counted against RLIMIT_MEMLOCK (memlock, now %s); raise "
	       "LimitMEMLOCK= of the unit or ulimit -l to buffers x buffer_size plus the "
	       "connections' buffers (docs/operations.md, Locked memory)", len, strerror(err), lim);
}

static int region_reg_dev(struct be_region *rg, int d)
{
	struct be_ctx *ctx = rg->rg_ctx;
	int acc = region_access(ctx);

	if (!acc || rg->rg_mr[d])
		return 0;
	rg->rg_mr[d] = be_vx()->reg_mr(ctx->cx_dev[d]->dv_pd, rg->rg_addr, rg->rg_len, acc);
	if (!rg->rg_mr[d]) {
		int err = errno;

		be_reg_fail_log(ctx, NULL, rg->rg_len, err);
		return -err;
	}
	return 0;
}

struct be_region *be_region_register(struct be_ctx *ctx, void *addr, size_t len)
{
	struct be_region *rg;
	int d;

	if (!addr || !len) {
		errno = EINVAL;
		return NULL;
	}
	rg = calloc(1, sizeof(*rg));
	if (!rg)
		return NULL;
	rg->rg_ctx = ctx;
	rg->rg_addr = addr;
	rg->rg_len = len;
	for (d = 0; d < BE_MAX_DEVS; d++) {
		if (ctx->cx_dev[d] && region_reg_dev(rg, d) < 0) {
			int e = errno;

			be_region_unregister(rg);
			errno = e;
			return NULL;
		}
	}
	LIST_INSERT_HEAD(&ctx->cx_regions, rg, rg_link);
	return rg;
}

void be_region_unregister(struct be_region *rg)
{
	int d;
	bool linked = false;
	struct be_region *it;

	if (!rg)
		return;
	LIST_FOREACH(it, &rg->rg_ctx->cx_regions, rg_link)
		if (it == rg)
			linked = true;
	if (linked)
		LIST_REMOVE(rg, rg_link);
	for (d = 0; d < BE_MAX_DEVS; d++)
		if (rg->rg_mr[d])
			be_vx()->dereg_mr(rg->rg_mr[d]);
	free(rg);
}

static struct ibv_mr *region_find(struct be_ctx *ctx, int d, const uint8_t *addr, size_t len)
{
	struct be_region *rg;

	LIST_FOREACH(rg, &ctx->cx_regions, rg_link)
		if (addr >= rg->rg_addr && addr + len <= rg->rg_addr + rg->rg_len)
			return rg->rg_mr[d];
	return NULL;
}

/* The device slot for a verbs context, with its PD; regions registered. */
int be_dev_get(struct be_ctx *ctx, struct ibv_context *verbs)
{
	struct be_region *rg;
	int d, freeslot = -1;

	for (d = 0; d < BE_MAX_DEVS; d++) {
		if (ctx->cx_dev[d] && ctx->cx_dev[d]->dv_verbs == verbs) {
			ctx->cx_dev[d]->dv_refs++;
			return d;
		}
		if (!ctx->cx_dev[d] && freeslot < 0)
			freeslot = d;
	}
	if (freeslot < 0)
		return -ENOSPC;
	d = freeslot;
	ctx->cx_dev[d] = calloc(1, sizeof(struct be_dev));
	if (!ctx->cx_dev[d])
		return -ENOMEM;
	ctx->cx_dev[d]->dv_verbs = verbs;
	if (be_vx()->query_device(verbs, &ctx->cx_dev[d]->dv_attr) ||
	    !(ctx->cx_dev[d]->dv_pd = be_vx()->alloc_pd(verbs))) {
		CTX_LOG(ERR, ctx, "device %s: query/alloc_pd failed", ibv_get_device_name(verbs->device));
		free(ctx->cx_dev[d]);
		ctx->cx_dev[d] = NULL;
		return -EIO;
	}
	ctx->cx_dev[d]->dv_refs = 1;
	LIST_FOREACH(rg, &ctx->cx_regions, rg_link) {
		int rc = region_reg_dev(rg, d);

		/* Without its regions (the pool) the device could only register
		 * per call: refuse it, so the connection fails and is retried,
		 * and region_reg_dev's line says why (often RLIMIT_MEMLOCK). */
		if (rc < 0) {
			be_dev_put(ctx, d);
			return rc;
		}
	}
	return d;
}

/* Last connection gone from a device: free its regions' MRs and the PD so
 * that a removed device can go (DEVICE_REMOVAL), and a new one be used. */
void be_dev_put(struct be_ctx *ctx, int d)
{
	struct be_region *rg;

	if (d < 0 || !ctx->cx_dev[d] || --ctx->cx_dev[d]->dv_refs > 0)
		return;
	LIST_FOREACH(rg, &ctx->cx_regions, rg_link) {
		if (rg->rg_mr[d]) {
			be_vx()->dereg_mr(rg->rg_mr[d]);
			rg->rg_mr[d] = NULL;
		}
	}
	be_vx()->dealloc_pd(ctx->cx_dev[d]->dv_pd);
	free(ctx->cx_dev[d]);
	ctx->cx_dev[d] = NULL;
}

/* ------------------------------------------------------------------------
 * Memory windows and per-call registration
 * ------------------------------------------------------------------------ */
static struct be_mw *mw_get(struct be_conn *cn)
{
	struct be_mw *mw = cn->cn_mwfree;

	if (mw) {
		cn->cn_mwfree = mw->mw_next;
		return mw;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	mw->mw_mw = be_vx()->alloc_mw(cn->cn_pool->bp_ctx->cx_dev[cn->cn_devidx]->dv_pd, IBV_MW_TYPE_2);
	if (!mw->mw_mw) {
		free(mw);
		return NULL;
	}
	mw->mw_rkey = mw->mw_mw->rkey;
	cn->cn_nmw++;
	return mw;
}

/*
 * Register one span for remote access `acc`; fills the handle, appends the
 * bind WR (MW mode) to the chain.  0 or -errno.
 */
int be_reg_span(struct be_conn *cn, struct be_call *ca, const struct be_span *sp, int acc,
		    struct be_handle *hd, struct ibv_send_wr *binds, unsigned *nbinds)
{
	struct be_ctx *ctx = cn->cn_pool->bp_ctx;
	struct be_reg *rk = &ca->rq_reg[ca->rq_nreg];
	struct ibv_mr *mr = NULL;
	enum be_reg_mode mode = ctx->cx_cfg.bc_reg_mode;

	memset(rk, 0, sizeof(*rk));
	if (mode != BE_REG_MR)
		mr = region_find(ctx, cn->cn_devidx, sp->sp_addr, sp->sp_len);
	hd->bh_offset = (uintptr_t)sp->sp_addr;
	if (mr && mode == BE_REG_PERSISTENT) {
		hd->bh_rkey = mr->rkey;
	} else if (mr && mode == BE_REG_MW) {
		struct be_mw *mw = mw_get(cn);
		struct ibv_send_wr *wr = &binds[*nbinds];

		if (!mw)
			return -ENOMEM;
		mw->mw_rkey = ibv_inc_rkey(mw->mw_rkey);
		memset(wr, 0, sizeof(*wr));
		wr->wr_id = (uintptr_t)ca | WR_BIND;
		wr->opcode = IBV_WR_BIND_MW;
		wr->bind_mw.mw = mw->mw_mw;
		wr->bind_mw.rkey = mw->mw_rkey;
		wr->bind_mw.bind_info.mr = mr;
		wr->bind_mw.bind_info.addr = (uintptr_t)sp->sp_addr;
		wr->bind_mw.bind_info.length = sp->sp_len;
		wr->bind_mw.bind_info.mw_access_flags = acc;
		if (*nbinds > 0)
			binds[*nbinds - 1].next = wr;
		(*nbinds)++;
		hd->bh_rkey = mw->mw_rkey;
		rk->rk_mw = mw;
		ctx->cx_stats.bs_mw_binds++;
	} else {
		int macc = acc | (acc & IBV_ACCESS_REMOTE_WRITE ? IBV_ACCESS_LOCAL_WRITE : 0);

		rk->rk_mr = be_vx()->reg_mr(ctx->cx_dev[cn->cn_devidx]->dv_pd, sp->sp_addr, sp->sp_len,
				       macc);
		if (!rk->rk_mr)
			return -errno;
		hd->bh_rkey = rk->rk_mr->rkey;
		ctx->cx_stats.bs_mr_regs++;
	}
	ca->rq_nreg++;
	return 0;
}
