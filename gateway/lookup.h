/* SPDX-License-Identifier: MIT */
/*
 * This file contains the background lookup (lookup.c, prefix gw_lookup_,
 * members lk_): one blocking job (getaddrinfo, an rpcbind query) run on a
 * helper thread, its end reported on the event loop.  Both transports
 * resolve their server this way, so the loop never blocks on DNS.
 */
#ifndef RPCRDMA_GW_LOOKUP_H
#define RPCRDMA_GW_LOOKUP_H

#include <pthread.h>
#include <stdbool.h>

struct event;
struct event_base;

/* work runs on the helper thread and may only touch what its caller set
 * up before gw_lookup_start(); done runs on the loop after the thread
 * has been joined, so it may read what work wrote. */
typedef void gw_lookup_fn(void *arg);

struct gw_lookup {
	gw_lookup_fn *lk_work;
	gw_lookup_fn *lk_done;
	void *lk_arg;
	int lk_pipe[2];			/* the thread writes one byte when done */
	struct event *lk_ev;
	pthread_t lk_thread;
	bool lk_running;
	bool lk_closing;		/* gw_lookup_destroy: done is no longer called */
};

/* 0, or -1 with errno (pipe or event could not be made). */
int gw_lookup_init(struct gw_lookup *lk, struct event_base *base, gw_lookup_fn *work,
		   gw_lookup_fn *done, void *arg);
/* 0, EBUSY while a job runs, or pthread_create's error. */
int gw_lookup_start(struct gw_lookup *lk);
static inline bool gw_lookup_running(const struct gw_lookup *lk) { return lk->lk_running; }
/* Waits for a running job (a lookup may take a while to time out), then
 * frees; done is not called.  Safe on a zeroed or half-initialised one. */
void gw_lookup_destroy(struct gw_lookup *lk);

#endif
