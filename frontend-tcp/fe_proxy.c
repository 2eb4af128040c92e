// SPDX-License-Identifier: MIT
/*
 * This file contains the wait for the PROXY protocol v2 header of a fresh
 * connection (proxy_protocol = yes; decoding in fe_admit.c).  The socket is
 * read with exact lengths - first the 16 fixed bytes, then the rest the
 * header announces - so not one byte of the RPC stream after it leaves the
 * socket: the client connection's record receiver starts right there.  The
 * header goes into a small fixed buffer of the wait (never a pool buffer);
 * TLVs past the address block are read into it and dropped.  A header not
 * complete within the timeout, or malformed, closes the socket.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "fe_admit.h"

struct fe_pw_conn {
	struct fe_pw *pq_pw;
	int pq_fd;
	uint16_t pq_lport;
	unsigned pq_li;			/* its listener */
	struct sockaddr_storage pq_peer;
	socklen_t pq_plen;
	struct event *pq_ev;		/* read */
	struct event *pq_timer;		/* the deadline of the whole header */
	uint8_t pq_buf[FE_PP_FIXED + FE_PP_ADDR_MAX];
	size_t pq_have;			/* bytes of pq_buf filled */
	size_t pq_read;			/* header bytes read (TLVs dropped) */
	TAILQ_ENTRY(fe_pw_conn) pq_link;
};
TAILQ_HEAD(fe_pw_list, fe_pw_conn);

struct fe_pw {
	struct event_base *pw_base;
	fe_pw_done_fn *pw_done;
	void *pw_arg;
	struct fe_pw_list pw_conns;
	unsigned pw_n;
};

struct fe_pw *fe_pw_new(struct event_base *base, fe_pw_done_fn *done, void *arg)
{
	struct fe_pw *pw = calloc(1, sizeof(*pw));

	if (!pw)
		return NULL;
	pw->pw_base = base;
	pw->pw_done = done;
	pw->pw_arg = arg;
	TAILQ_INIT(&pw->pw_conns);
	return pw;
}

unsigned fe_pw_npending(const struct fe_pw *pw) { return pw ? pw->pw_n : 0; }

static void fe_pw_drop(struct fe_pw_conn *pc)
{
	struct fe_pw *pw = pc->pq_pw;

	TAILQ_REMOVE(&pw->pw_conns, pc, pq_link);
	pw->pw_n--;
	event_free(pc->pq_ev);
	event_free(pc->pq_timer);
	free(pc);
}

/* Done with pc: hand the socket on (ok) or close it, then forget pc. */
static void fe_pw_finish(struct fe_pw_conn *pc, bool ok, const char *why)
{
	struct fe_pw *pw = pc->pq_pw;
	struct sockaddr_storage src;
	socklen_t slen = 0;
	int fd = pc->pq_fd;
	uint16_t lport = pc->pq_lport;
	unsigned li = pc->pq_li;

	if (ok && !fe_adm_pp_decode(pc->pq_buf, pc->pq_have, &src, &slen)) {
		ok = false;
		why = "PROXY header of an unsupported family or too short for its addresses";
	}
	if (ok && src.ss_family == AF_UNSPEC) {	/* LOCAL: the socket's peer */
		memcpy(&src, &pc->pq_peer, sizeof(src));
		slen = pc->pq_plen;
	}
	if (!ok) {	/* the peer is the proxy's address, for the log */
		memcpy(&src, &pc->pq_peer, sizeof(src));
		slen = pc->pq_plen;
		close(fd);
		fd = -1;
	}
	fe_pw_drop(pc);
	pw->pw_done(pw->pw_arg, fd, ok, (const struct sockaddr *)&src, slen, lport, li, why);
}

static void fe_pw_on_timer(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	fe_pw_finish(arg, false, "no complete PROXY header in time");
}

static void fe_pw_on_event(evutil_socket_t fd, short what, void *arg)
{
	struct fe_pw_conn *pc = arg;

	(void)what;
	for (;;) {
		long need = fe_adm_pp_need(pc->pq_buf, pc->pq_have);
		uint8_t skip[256], *to;
		size_t want;
		ssize_t r;

		if (need < 0) {
			fe_pw_finish(pc, false, "no PROXY v2 header (signature, version or command)");
			return;
		}
		if (pc->pq_read >= (size_t)need && pc->pq_have >= FE_PP_FIXED) {
			fe_pw_finish(pc, true, NULL);
			return;
		}
		want = (size_t)need - pc->pq_read;
		if (pc->pq_have < sizeof(pc->pq_buf)) {
			to = pc->pq_buf + pc->pq_have;
			if (want > sizeof(pc->pq_buf) - pc->pq_have)
				want = sizeof(pc->pq_buf) - pc->pq_have;
		} else {
			to = skip;
			if (want > sizeof(skip))
				want = sizeof(skip);
		}
		r = recv(fd, to, want, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0) {
			fe_pw_finish(pc, false, r == 0 ? "closed before the end of its PROXY header"
							: "recv error before the end of its PROXY header");
			return;
		}
		if (to != skip)
			pc->pq_have += (size_t)r;
		pc->pq_read += (size_t)r;
	}
}

int fe_pw_start(struct fe_pw *pw, int fd, const struct sockaddr *peer, socklen_t plen,
		uint16_t lport, unsigned li, unsigned timeout_ms)
{
	struct fe_pw_conn *pc = calloc(1, sizeof(*pc));
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };

	if (!pc)
		return -ENOMEM;
	pc->pq_pw = pw;
	pc->pq_fd = fd;
	pc->pq_lport = lport;
	pc->pq_li = li;
	if (plen > (socklen_t)sizeof(pc->pq_peer))
		plen = sizeof(pc->pq_peer);
	memcpy(&pc->pq_peer, peer, plen);
	pc->pq_plen = plen;
	pc->pq_ev = event_new(pw->pw_base, fd, EV_READ | EV_PERSIST, fe_pw_on_event, pc);
	pc->pq_timer = evtimer_new(pw->pw_base, fe_pw_on_timer, pc);
	if (!pc->pq_ev || !pc->pq_timer) {
		if (pc->pq_ev)
			event_free(pc->pq_ev);
		if (pc->pq_timer)
			event_free(pc->pq_timer);
		free(pc);
		return -ENOMEM;
	}
	event_add(pc->pq_ev, NULL);
	evtimer_add(pc->pq_timer, &tv);
	TAILQ_INSERT_TAIL(&pw->pw_conns, pc, pq_link);
	pw->pw_n++;
	return 0;
}

void fe_pw_free(struct fe_pw *pw)
{
	struct fe_pw_conn *pc;

	if (!pw)
		return;
	while ((pc = TAILQ_FIRST(&pw->pw_conns))) {
		close(pc->pq_fd);
		fe_pw_drop(pc);
	}
	free(pw);
}
