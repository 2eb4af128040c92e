// SPDX-License-Identifier: MIT
/*
 * This file contains the shared rpcbind backoff (backoff.h): a small table
 * of (backend, program) entries, program 0 standing for rpcbind itself,
 * each with its consecutive failures and the time before which nobody asks
 * again.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "backoff.h"
#include "config.h"

struct gw_backoff_ent {
	char boe_backend[CFG_NAME_MAX];
	uint32_t boe_prog;		/* 0: the server's rpcbind itself */
	unsigned boe_fails;		/* consecutive; 0: free or forgiven */
	uint64_t boe_until_ms;		/* nobody asks before */
	unsigned boe_step_ms;		/* the wait the last failure set */
	bool boe_claimed;		/* an asker has the turn (gw_backoff_wait) */
	char boe_msg[128];
};

struct gw_backoff {
	pthread_mutex_t bo_mu;
	struct gw_backoff_ent bo_ent[GW_BACKOFF_SLOTS];
};

struct gw_backoff *gw_backoff_new(void)
{
	struct gw_backoff *bo = calloc(1, sizeof(*bo));

	if (bo)
		pthread_mutex_init(&bo->bo_mu, NULL);
	return bo;
}

void gw_backoff_free(struct gw_backoff *bo)
{
	if (!bo)
		return;
	pthread_mutex_destroy(&bo->bo_mu);
	free(bo);
}

/* The entry of (backend, prog); made when make (reusing a forgiven one,
 * else the one whose wait ends first), else NULL. */
static struct gw_backoff_ent *gw_backoff_ent(struct gw_backoff *bo, const char *backend,
					     uint32_t prog, bool make)
{
	struct gw_backoff_ent *spare = NULL;

	for (unsigned i = 0; i < GW_BACKOFF_SLOTS; i++) {
		struct gw_backoff_ent *e = &bo->bo_ent[i];

		if (e->boe_fails && e->boe_prog == prog && !strcmp(e->boe_backend, backend))
			return e;
		if (!spare || (spare->boe_fails && (!e->boe_fails || e->boe_until_ms < spare->boe_until_ms)))
			spare = e;
	}
	if (!make)
		return NULL;
	memset(spare, 0, sizeof(*spare));
	snprintf(spare->boe_backend, sizeof(spare->boe_backend), "%s", backend);
	spare->boe_prog = prog;
	return spare;
}

unsigned gw_backoff_wait(struct gw_backoff *bo, const char *backend, uint32_t prog,
			 uint64_t now_ms, char *msg, size_t len)
{
	struct gw_backoff_ent *e[2];
	unsigned wait = 0;

	if (!bo)
		return 0;
	pthread_mutex_lock(&bo->bo_mu);
	e[0] = gw_backoff_ent(bo, backend, 0, false);
	e[1] = gw_backoff_ent(bo, backend, prog, false);
	for (unsigned i = 0; i < 2; i++)
		if (e[i] && e[i]->boe_until_ms > now_ms && e[i]->boe_until_ms - now_ms > wait) {
			wait = (unsigned)(e[i]->boe_until_ms - now_ms);
			if (msg && len)
				snprintf(msg, len, "%s", e[i]->boe_msg);
		}
	/* Its turn: the others wait a step more, until this answer is in. */
	for (unsigned i = 0; !wait && i < 2; i++)
		if (e[i]) {
			e[i]->boe_until_ms = now_ms + e[i]->boe_step_ms;
			e[i]->boe_claimed = true;
		}
	pthread_mutex_unlock(&bo->bo_mu);
	return wait;
}

unsigned gw_backoff_result(struct gw_backoff *bo, const char *backend, uint32_t prog, int rc,
			   const char *msg, uint64_t now_ms, unsigned base_ms)
{
	struct gw_backoff_ent *e;
	unsigned step = 0;

	if (!bo)
		return 0;
	pthread_mutex_lock(&bo->bo_mu);
	if (rc == 0 || rc == -1) {	/* rpcbind answered */
		if ((e = gw_backoff_ent(bo, backend, 0, false)))
			e->boe_fails = 0;
	}
	if (rc == 0 && (e = gw_backoff_ent(bo, backend, prog, false)))
		e->boe_fails = 0;
	e = rc < 0 ? gw_backoff_ent(bo, backend, rc == -2 ? 0 : prog, true) : NULL;
	/* Askers that went before the first failure was known tell the
	 * same news: the wait grows once per turn, not once per asker. */
	if (e && e->boe_fails && !e->boe_claimed && e->boe_until_ms > now_ms) {
		step = (unsigned)(e->boe_until_ms - now_ms);
		e = NULL;
	}
	if (e) {
		step = base_ms ? base_ms : 1;
		for (unsigned i = 0; i < e->boe_fails && step < GW_BACKOFF_CAP_MS; i++)
			step *= 2;
		if (step > GW_BACKOFF_CAP_MS)
			step = GW_BACKOFF_CAP_MS;
		e->boe_fails++;
		e->boe_step_ms = step;
		e->boe_until_ms = now_ms + step;
		e->boe_claimed = false;
		snprintf(e->boe_msg, sizeof(e->boe_msg), "%s", msg ? msg : "");
	}
	pthread_mutex_unlock(&bo->bo_mu);
	return step;
}
