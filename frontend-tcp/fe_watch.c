// SPDX-License-Identifier: MIT
/*
 * This file contains the watch on client connections the frontend does
 * not read: whether their peer has gone.
 *
 * Why: a connection is not read while it is at a cap (calls_per_client,
 * bytes_per_client), its host at its share (gateway/source.c), its
 * backend's hold queue full, or no buffer or call object is free.  Its end
 * of stream is then never read, so a client that closed such connections
 * kept their calls, and the call objects and buffers they hold, until
 * some timeout: an attacker that made its calls wait and then closed its
 * connections left them waiting.  The read event cannot stay armed to see
 * the end (bytes waiting in the socket would wake the loop at every pass),
 * and libevent's EV_CLOSED alone is not enough: on epoll a reset arrives
 * as EPOLLHUP/EPOLLERR, which libevent delivers only to read and write
 * events, and a level-triggered descriptor nobody takes spins the loop.
 *
 * So every FE_UWATCH_MS one poll() with POLLRDHUP looks at up to
 * FE_UWATCH_BATCH of the connections not read (the list turns, so a long
 * list is covered in turn), and closes those whose peer shut down or reset
 * the connection (counted in client_connections_total{event="gone_unread"}).  That is what Linux nfsd
 * does with a connection whose peer sent FIN (svc_tcp_state_change()
 * closes the transport once the socket leaves ESTABLISHED): the calls the
 * gateway had not read yet from it go with it.  One system call per tick
 * while any connection is not read, none otherwise.
 */
#include <poll.h>

#include <event2/event.h>

#include "fe_internal.h"
#include "log.h"

void fe_watch_set(struct fe_conn *c, bool unread)
{
	struct fe_frontend *fe = c->fc_fe;

	if (c->fc_unread == unread)
		return;
	c->fc_unread = unread;
	if (!unread) {
		TAILQ_REMOVE(&fe->fe_unread, c, fc_ulink);
		return;
	}
	TAILQ_INSERT_TAIL(&fe->fe_unread, c, fc_ulink);
	if (!evtimer_pending(fe->fe_uwatch, NULL)) {
		struct timeval tv = { 0, FE_UWATCH_MS * 1000 };

		evtimer_add(fe->fe_uwatch, &tv);
	}
}

void fe_on_uwatch(evutil_socket_t fd, short what, void *arg)
{
	struct fe_frontend *fe = arg;
	struct pollfd pfd[FE_UWATCH_BATCH];
	struct fe_conn *batch[FE_UWATCH_BATCH], *c;
	struct timeval tv = { 0, FE_UWATCH_MS * 1000 };
	unsigned n = 0;
	int ready;

	(void)fd;
	(void)what;
	/* The batch goes to the list's tail: the next tick starts after it. */
	while (n < FE_UWATCH_BATCH && (c = TAILQ_FIRST(&fe->fe_unread))) {
		if (n && c == batch[0])
			break;		/* the whole list is in this batch */
		TAILQ_REMOVE(&fe->fe_unread, c, fc_ulink);
		TAILQ_INSERT_TAIL(&fe->fe_unread, c, fc_ulink);
		pfd[n] = (struct pollfd){ .fd = c->fc_fd, .events = POLLRDHUP };
		batch[n++] = c;
	}
	ready = n ? poll(pfd, n, 0) : 0;
	/* Closing one connection never closes another (its calls end; other
	 * connections are only told to look again), so every batch pointer
	 * stays valid through the closes. */
	for (unsigned i = 0; ready > 0 && i < n; i++) {
		if (!(pfd[i].revents & (POLLRDHUP | POLLHUP | POLLERR)))
			continue;
		ready--;
		gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENT_GONE_UNREAD);	/* an ordinary end */
		fe_conn_close(batch[i], GW_CTR__COUNT, pfd[i].revents & POLLRDHUP ?
			      "end of stream while not read" : "connection reset while not read");
	}
	if (!TAILQ_EMPTY(&fe->fe_unread))
		evtimer_add(fe->fe_uwatch, &tv);
}
