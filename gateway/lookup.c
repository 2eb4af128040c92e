// SPDX-License-Identifier: MIT
/*
 * This file contains the background lookup: a blocking job on a helper
 * thread whose end wakes the event loop through a pipe.  One job at a
 * time per lookup; the thread is joined on the loop before done runs, so
 * done sees everything work wrote without further locking.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <event2/event.h>

#include "lookup.h"

static void *gw_lookup_thread(void *arg)
{
	struct gw_lookup *lk = arg;
	char one = 1;

	lk->lk_work(lk->lk_arg);
	if (write(lk->lk_pipe[1], &one, 1) != 1) {
		/* cannot happen: a fresh pipe has room for one byte */
	}
	return NULL;
}

static void gw_lookup_on_done(evutil_socket_t fd, short what, void *arg)
{
	struct gw_lookup *lk = arg;
	char c;

	(void)what;
	if (read(fd, &c, 1) != 1)
		return;
	pthread_join(lk->lk_thread, NULL);
	lk->lk_running = false;
	if (!lk->lk_closing)
		lk->lk_done(lk->lk_arg);
}

int gw_lookup_init(struct gw_lookup *lk, struct event_base *base, gw_lookup_fn *work,
		   gw_lookup_fn *done, void *arg)
{
	*lk = (struct gw_lookup){ .lk_work = work, .lk_done = done, .lk_arg = arg,
				  .lk_pipe = { -1, -1 } };
	if (pipe2(lk->lk_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	lk->lk_ev = event_new(base, lk->lk_pipe[0], EV_READ | EV_PERSIST, gw_lookup_on_done, lk);
	if (!lk->lk_ev || event_add(lk->lk_ev, NULL) < 0) {
		gw_lookup_destroy(lk);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

int gw_lookup_start(struct gw_lookup *lk)
{
	int rc;

	if (lk->lk_running)
		return EBUSY;
	rc = pthread_create(&lk->lk_thread, NULL, gw_lookup_thread, lk);
	if (rc == 0) {
		lk->lk_running = true;
		/* for top -H and ps -L; a name only */
		(void)pthread_setname_np(lk->lk_thread, "rpcrdma-gw/lkup");
	}
	return rc;
}

void gw_lookup_destroy(struct gw_lookup *lk)
{
	lk->lk_closing = true;
	if (lk->lk_running) {
		pthread_join(lk->lk_thread, NULL);
		lk->lk_running = false;
	}
	if (lk->lk_ev)
		event_free(lk->lk_ev);
	lk->lk_ev = NULL;
	for (int i = 0; i < 2; i++) {
		if (lk->lk_pipe[i] >= 0)
			close(lk->lk_pipe[i]);
		lk->lk_pipe[i] = -1;
	}
}
