// SPDX-License-Identifier: MIT
/*
 * This file contains the plain TCP transport: one persistent,
 * record-marked TCP connection from the gateway to server:port per path.
 * It carries the auxiliary programs (MOUNT, NLM, NSM: the server has no
 * RDMA listener for them), routes with transport = tcp, and the TCP
 * fallback of rdma routes while RDMA cannot connect (gateway.c).  Each
 * failed attempt tells the gateway why (gw_path_down: dns, connect, lost).
 *
 * States: DOWN (waiting for the reconnect timer) -> RESOLVING (a helper
 * thread resolves the host and, when the port is not configured, asks
 * the server's rpcbind with libtirpc's rpcb_getaddr(); both may block, so
 * they stay off the event loop) -> CONNECTING (non-blocking connect) -> UP.
 * Any error or end of stream goes back to DOWN.
 *
 * Calls: submit() refuses with -EAGAIN unless UP (the gateway holds the
 * call).  Accepted calls wait in gt_sendq, are written with writev() (our
 * 4-byte record mark, then the call's pool buffers as received), then wait
 * in gt_inflight for the reply, matched by gateway XID.  When the
 * connection drops, every call in gt_inflight goes back to the head of
 * gt_sendq and is written again, same gateway XID, on the next connection:
 * the server's duplicate request cache answers what it already executed.
 *
 * Replies are received into pool buffers like client calls (gw_rx) and
 * handed to the gateway in place; release() returns those buffers.
 *
 * When privileged (root or CAP_NET_BIND_SERVICE), the connection is bound
 * to a reserved source port (below 1024) because Linux nfsd and mountd
 * refuse others on "secure" exports.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <event2/event.h>
#include "call.h"
#include "chunking.h"
#include "config.h"
#include "log.h"
#include "pool.h"
#include "lookup.h"
#include "record.h"
#include "backoff.h"
#include "rpcbind.h"
#include "transport.h"

#define GT_WRITE_IOV		128
#define GT_STARVED_RETRY_MS	5
#define GT_RPCBIND_VERS_DEFAULT	1

enum gt_state {
	GT_DOWN = 0,		/* no connection; reconnect timer armed */
	GT_RESOLVING,		/* helper thread resolving address / port */
	GT_CONNECTING,		/* non-blocking connect in progress */
	GT_UP,			/* connected: calls flow */
};

struct gt_resolve {
	/* filled by the helper thread, read after it wrote to the pipe */
	char trs_host[CFG_HOST_MAX];
	uint32_t trs_prog, trs_vers;
	uint16_t trs_port;		/* 0: ask rpcbind */
	struct sockaddr_storage trs_addr;
	socklen_t trs_addrlen;
	int trs_err;			/* 0, 1: name did not resolve, -1/-2: rpcbind (gw_rpcbind_getport) */
	bool trs_asked;			/* rpcbind was asked (its answer goes to pi_backoff) */
	char trs_msg[128];
};

struct gw_tcp {
	struct gw_path *gt_path;
	const struct gw_path_info *gt_info;
	enum gt_state gt_state;
	int gt_fd;
	struct event *gt_rev, *gt_wev, *gt_timer;
	struct gw_rx gt_rx;
	struct gw_rec gt_rec;
	struct gw_call_list gt_sendq;	/* accepted, not fully written, in order */
	struct gw_call_list gt_inflight;	/* written, reply awaited */
	size_t gt_out_off;		/* bytes of the head of gt_sendq written */
	bool gt_cancel_head;		/* head was cancelled while half written */
	bool gt_destroying;
	bool gt_starved;
	unsigned gt_failures;		/* consecutive connect failures */
	uint16_t gt_src_port;		/* reserved source port, kept across reconnects; 0 none */
	struct gw_lookup gt_lookup;	/* runs gt_resolve_work */
	struct gt_resolve gt_res;
};

static const struct gw_log *gt_log(const struct gw_tcp *gt) { return gt->gt_info->pi_log; }
static struct gw_stats *gt_st(const struct gw_tcp *gt) { return gt->gt_info->pi_stats; }

static void gt_schedule(struct gw_tcp *gt, unsigned ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	evtimer_add(gt->gt_timer, &tv);
}

/* The version rpcbind is asked about: the route's lowest, else the usual one. */
static uint32_t gt_rpcbind_vers(const struct cfg_route *r)
{
	if (r->cr_vers_low)
		return r->cr_vers_low;
	switch (r->cr_prog) {
	case CFG_PROG_MOUNT: return 3;
	case CFG_PROG_NLM: return 4;
	case CFG_PROG_NFS: return 3;
	default: return GT_RPCBIND_VERS_DEFAULT;
	}
}

/* ---- the helper thread: getaddrinfo and rpcbind, both blocking ---- */

static void gt_resolve_work(void *arg)
{
	struct gt_resolve *rs = &((struct gw_tcp *)arg)->gt_res;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int rc;

	rc = getaddrinfo(rs->trs_host, NULL, &hints, &ai);
	if (rc != 0) {
		rs->trs_err = 1;	/* (EAI_* codes are negative, like rpcbind's -1) */
		snprintf(rs->trs_msg, sizeof(rs->trs_msg), "%s", gai_strerror(rc));
		return;
	}
	memcpy(&rs->trs_addr, ai->ai_addr, ai->ai_addrlen);
	rs->trs_addrlen = ai->ai_addrlen;
	freeaddrinfo(ai);
	if (rs->trs_port == 0) {
		rs->trs_asked = true;
		rc = gw_rpcbind_getport(rs->trs_host, rs->trs_addr.ss_family, rs->trs_prog,
					rs->trs_vers, &rs->trs_port, rs->trs_msg, sizeof(rs->trs_msg));
		if (rc < 0) {
			rs->trs_err = rc;
			return;
		}
	}
	if (rs->trs_addr.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&rs->trs_addr)->sin6_port = htons(rs->trs_port);
	else
		((struct sockaddr_in *)&rs->trs_addr)->sin_port = htons(rs->trs_port);
}

/* ---- connection life ---- */

/* An attempt failed: counted, logged (not every time), told to the
 * gateway as the reason the path is down, retried. */
static void gt_connect_failed_in(struct gw_tcp *gt, enum gw_why why, const char *what,
				 unsigned retry_ms)
{
	const struct cfg *cf = gt->gt_info->pi_cfg;

	if (retry_ms < cf->cf_reconnect_ms)
		retry_ms = cf->cf_reconnect_ms;
	gw_stat_inc(gt_st(gt), GW_CTR_BACKEND_CONNECT_FAILED);
	gw_path_down(gt->gt_path, why, "%s", what);
	/* First failure and then one in 30, not a line per second. */
	if (gt->gt_failures++ % 30 == 0)
		gw_warn(gt_log(gt), "path %s: %s; retrying %s %u ms", gw_path_name(gt->gt_path), what,
			retry_ms > cf->cf_reconnect_ms ? "(backing off, shared by every route of "
			"this backend) in" : "every", retry_ms);
	gt->gt_state = GT_DOWN;
	gt_schedule(gt, retry_ms);
}

static void gt_connect_failed(struct gw_tcp *gt, enum gw_why why, const char *what)
{
	gt_connect_failed_in(gt, why, what, 0);
}

/* Close the connection; calls written but unanswered will be written again. */
static void gt_disconnect(struct gw_tcp *gt, const char *why)
{
	bool was_up = gt->gt_state == GT_UP;
	struct gw_call *c;

	if (gt->gt_fd >= 0) {
		event_del(gt->gt_rev);
		event_del(gt->gt_wev);
		close(gt->gt_fd);
		gt->gt_fd = -1;
	}
	gw_rec_release(gt->gt_info->pi_pool, &gt->gt_rec);
	gw_rx_reset(&gt->gt_rx);
	if (gt->gt_cancel_head && (c = TAILQ_FIRST(&gt->gt_sendq))) {
		TAILQ_REMOVE(&gt->gt_sendq, c, ca_path_link);
		c->ca_tp_priv = NULL;
		gt->gt_cancel_head = false;
		gw_call_put(c);
	}
	gt->gt_out_off = 0;
	/* In-flight calls go first, in the order they were sent. */
	while ((c = TAILQ_LAST(&gt->gt_inflight, gw_call_list))) {
		TAILQ_REMOVE(&gt->gt_inflight, c, ca_path_link);
		TAILQ_INSERT_HEAD(&gt->gt_sendq, c, ca_path_link);
		c->ca_tp_priv = &gt->gt_sendq;
		gw_stat_inc(gt_st(gt), GW_CTR_BACKEND_RESENT);
	}
	if (was_up) {
		gw_stat_inc(gt_st(gt), GW_CTR_BACKEND_DISCONNECTS);
		gw_warn(gt_log(gt), "path %s: connection lost (%s); reconnecting", gw_path_name(gt->gt_path),
			why);
		gt->gt_state = GT_DOWN;
		gw_path_down(gt->gt_path, GW_WHY_LOST, "connection lost (%s)", why);
		gw_path_ready(gt->gt_path, false);
		gt_schedule(gt, gt->gt_info->pi_cfg->cf_reconnect_ms);
	} else {
		gt_connect_failed(gt, GW_WHY_CONNECT, why);
	}
}

static unsigned gt_count(const struct gw_call_list *l)
{
	const struct gw_call *c;
	unsigned n = 0;

	TAILQ_FOREACH(c, l, ca_path_link)
		n++;
	return n;
}

static void gt_on_write(evutil_socket_t fd, short what, void *arg);
static void gt_on_read(evutil_socket_t fd, short what, void *arg);

static void gt_up(struct gw_tcp *gt)
{
	int one = 1;

	setsockopt(gt->gt_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	event_assign(gt->gt_rev, gt->gt_info->pi_base, gt->gt_fd, EV_READ | EV_PERSIST, gt_on_read, gt);
	event_assign(gt->gt_wev, gt->gt_info->pi_base, gt->gt_fd, EV_WRITE | EV_PERSIST, gt_on_write, gt);
	event_add(gt->gt_rev, NULL);
	gt->gt_state = GT_UP;
	gt->gt_failures = 0;
	gw_stat_inc(gt_st(gt), GW_CTR_BACKEND_CONNECTS);
	gw_info(gt_log(gt), "path %s: connected (%u calls to re-send)", gw_path_name(gt->gt_path),
		gt_count(&gt->gt_sendq));
	if (!TAILQ_EMPTY(&gt->gt_sendq))
		event_add(gt->gt_wev, NULL);
	gw_path_ready(gt->gt_path, true);
}

/* connect() failed with err, at once or when the socket became writable. */
static void gt_connect_error(struct gw_tcp *gt, int err)
{
	char why[160];

	if (err == EADDRNOTAVAIL)	/* our old port is another connection's now */
		gt->gt_src_port = 0;
	snprintf(why, sizeof(why), "connect: %s", strerror(err));
	gt_disconnect(gt, why);
}

static void gt_on_connected(evutil_socket_t fd, short what, void *arg)
{
	struct gw_tcp *gt = arg;
	int err = 0;
	socklen_t len = sizeof(err);

	(void)what;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	if (err) {
		gt_connect_error(gt, err);
		return;
	}
	event_del(gt->gt_wev);
	gt_up(gt);
}

/* Source port: a reserved one when we may (root, or CAP_NET_BIND_SERVICE as
 * the systemd unit grants): nfsd and mountd refuse others on "secure"
 * exports.  After a reconnect the same port again, so the server's duplicate
 * reply cache (keyed on the client's address and port) knows retransmitted
 * calls; that reuse needs SO_REUSEADDR (the old connection may sit in
 * TIME_WAIT).  A first port comes from libtirpc's bindresvport_sa() WITHOUT
 * SO_REUSEADDR, so it is one no other socket holds: two paths to one server
 * port (nfs and nfs_acl) would otherwise share a port and the second
 * connect() fail with EADDRNOTAVAIL forever.  Without the privilege the
 * kernel picks an ordinary port at connect(). */
static void gt_bind_source(struct gw_tcp *gt, int fd, int family)
{
	int one = 1, zero = 0, port;

	if (gt->gt_src_port) {
		struct sockaddr_storage ss = { .ss_family = (sa_family_t)family };
		socklen_t len = family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

		if (family == AF_INET6)
			((struct sockaddr_in6 *)&ss)->sin6_port = htons(gt->gt_src_port);
		else
			((struct sockaddr_in *)&ss)->sin_port = htons(gt->gt_src_port);
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, len) == 0)
			return;
		/* Taken meanwhile: a fresh reserved port in this same attempt
		 * (unbound after the failed bind; SO_REUSEADDR off again). */
		gt->gt_src_port = 0;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &zero, sizeof(zero));
	}
	port = gw_rpcbind_bindresv(fd);
	if (port > 0)
		gt->gt_src_port = (uint16_t)port;
}

static void gt_on_resolved(void *arg)
{
	struct gw_tcp *gt = arg;
	struct gt_resolve *rs = &gt->gt_res;
	unsigned step = 0;

	if (rs->trs_err > 0) {	/* the name did not resolve; the next attempt asks again */
		char why[GW_WHY_TEXT_MAX];

		snprintf(why, sizeof(why), "DNS: %.80s: %.60s", rs->trs_host, rs->trs_msg);
		gt_connect_failed(gt, GW_WHY_DNS, why);
		return;
	}
	if (rs->trs_asked)	/* every route of every worker waits as the answer says */
		step = gw_backoff_result(gt->gt_info->pi_backoff, gt->gt_info->pi_backend->cb_name,
					 rs->trs_prog, rs->trs_err, rs->trs_msg, gw_now_ms(),
					 gt->gt_info->pi_cfg->cf_reconnect_ms);
	if (rs->trs_err) {
		gw_stat_inc(gt_st(gt), GW_CTR_RPCBIND_FAILED);
		gt_connect_failed_in(gt, GW_WHY_CONNECT, rs->trs_msg, step);
		return;
	}
	gt->gt_fd = socket(rs->trs_addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (gt->gt_fd < 0) {
		gt_connect_failed(gt, GW_WHY_CONNECT, strerror(errno));
		return;
	}
	gt_bind_source(gt, gt->gt_fd, rs->trs_addr.ss_family);
	gt->gt_state = GT_CONNECTING;
	if (connect(gt->gt_fd, (struct sockaddr *)&rs->trs_addr, rs->trs_addrlen) == 0) {
		gt_up(gt);
		return;
	}
	if (errno != EINPROGRESS) {
		gt_connect_error(gt, errno);
		return;
	}
	event_assign(gt->gt_wev, gt->gt_info->pi_base, gt->gt_fd, EV_WRITE, gt_on_connected, gt);
	event_add(gt->gt_wev, NULL);
}

/* Another route or worker was just told that this server's rpcbind (or
 * the program) is not there: no question now; the path stays down with
 * that answer and the timer comes back when the shared wait ends. */
static bool gt_rpcbind_later(struct gw_tcp *gt)
{
	char msg[GW_WHY_TEXT_MAX - 40] = "";
	unsigned wait = gw_backoff_wait(gt->gt_info->pi_backoff, gt->gt_info->pi_backend->cb_name,
					gt->gt_info->pi_route->cr_prog, gw_now_ms(), msg, sizeof(msg));

	if (!wait)
		return false;
	gw_path_down(gt->gt_path, GW_WHY_CONNECT, "%s (asked again in %u s)", msg,
		     (wait + 999) / 1000);
	gt_schedule(gt, wait);
	return true;
}

static void gt_on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct gw_tcp *gt = arg;
	const struct cfg_route *r = gt->gt_info->pi_route;
	const struct cfg_backend *b = gt->gt_info->pi_backend;
	struct gt_resolve *rs = &gt->gt_res;

	(void)fd;
	(void)what;
	if (gt->gt_state == GT_UP && gt->gt_starved) {
		gt->gt_starved = false;
		event_active(gt->gt_rev, EV_READ, 0);
		return;
	}
	if (gt->gt_state != GT_DOWN || gw_lookup_running(&gt->gt_lookup))
		return;
	memset(rs, 0, sizeof(*rs));
	snprintf(rs->trs_host, sizeof(rs->trs_host), "%s", b->cb_host);
	rs->trs_prog = r->cr_prog;
	rs->trs_vers = gt_rpcbind_vers(r);
	rs->trs_port = r->cr_port ? r->cr_port
		      : (r->cr_prog == CFG_PROG_NFS || r->cr_prog == CFG_PROG_NFS_ACL) ? b->cb_port : 0;
	if (rs->trs_port == 0 && gt_rpcbind_later(gt))
		return;
	gt->gt_state = GT_RESOLVING;
	if (gw_lookup_start(&gt->gt_lookup) != 0)
		gt_connect_failed(gt, GW_WHY_DNS, "DNS: cannot start the resolver thread");
}

/* ---- data ---- */

static void gt_on_write(evutil_socket_t fd, short what, void *arg)
{
	struct gw_tcp *gt = arg;

	(void)what;
	while (!TAILQ_EMPTY(&gt->gt_sendq)) {
		struct iovec iov[GT_WRITE_IOV];
		unsigned n = 0;
		size_t skip = gt->gt_out_off;
		struct gw_call *c;
		ssize_t w;

		for (c = TAILQ_FIRST(&gt->gt_sendq); c && n + 1 + c->ca_rec.rcd_niov <= GT_WRITE_IOV;
		     c = TAILQ_NEXT(c, ca_path_link)) {
			iov[n++] = (struct iovec){ c->ca_tp_mark, 4 };
			for (unsigned i = 0; i < c->ca_rec.rcd_niov; i++)
				iov[n++] = c->ca_rec.rcd_iov[i];
		}
		/* Skip what was written of the head. */
		{
			unsigned first = 0;

			while (skip >= iov[first].iov_len) {
				skip -= iov[first].iov_len;
				first++;
			}
			iov[first].iov_base = (uint8_t *)iov[first].iov_base + skip;
			iov[first].iov_len -= skip;
			gw_stat_inc(gt_st(gt), GW_CTR_SYS_SERVER_WRITEV);
			w = writev(fd, iov + first, (int)(n - first));
		}
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				event_add(gt->gt_wev, NULL);	/* wait for room */
				return;
			}
			gt_disconnect(gt, strerror(errno));
			return;
		}
		while ((c = TAILQ_FIRST(&gt->gt_sendq))) {
			size_t left = 4 + c->ca_rec.rcd_len - gt->gt_out_off;

			if ((size_t)w < left) {
				gt->gt_out_off += (size_t)w;
				break;
			}
			w -= (ssize_t)left;
			gt->gt_out_off = 0;
			TAILQ_REMOVE(&gt->gt_sendq, c, ca_path_link);
			if (gt->gt_cancel_head) {
				gt->gt_cancel_head = false;
				c->ca_tp_priv = NULL;
				gw_call_put(c);
				continue;
			}
			TAILQ_INSERT_TAIL(&gt->gt_inflight, c, ca_path_link);
			c->ca_tp_priv = &gt->gt_inflight;
		}
	}
	event_del(gt->gt_wev);
}

static void gt_on_record(struct gw_tcp *gt)
{
	uint8_t hdr[8];
	uint32_t xid, mtype;
	struct gw_call *c;

	if (gw_rec_copyout(&gt->gt_rec, 0, hdr, 8) < 8) {
		gw_stat_inc(gt_st(gt), GW_CTR_BACKEND_GARBAGE);
		gt_disconnect(gt, "record too short for an RPC message");
		return;
	}
	xid = chk_be32(hdr);
	mtype = chk_be32(hdr + 4);
	if (mtype != RPC_REPLY) {
		gw_stat_inc(gt_st(gt), GW_CTR_BACKEND_NOT_REPLY);
		gw_debug(gt_log(gt), "path %s: server sent a CALL (xid %#x, backchannel): dropped",
			 gw_path_name(gt->gt_path), xid);
		gw_rec_release(gt->gt_info->pi_pool, &gt->gt_rec);
		return;
	}
	c = gw_path_lookup(gt->gt_path, xid);
	if (!c || c->ca_tp_priv != &gt->gt_inflight) {
		gw_stat_inc(gt_st(gt), GW_CTR_BACKEND_UNMATCHED);
		gw_debug(gt_log(gt), "path %s: reply gw xid %#x matches no call", gw_path_name(gt->gt_path),
			 xid);
		gw_rec_release(gt->gt_info->pi_pool, &gt->gt_rec);
		return;
	}
	TAILQ_REMOVE(&gt->gt_inflight, c, ca_path_link);
	c->ca_tp_priv = NULL;
	gw_rec_move(&c->ca_reply_rec, &gt->gt_rec);
	gw_call_complete(c, c->ca_reply_rec.rcd_iov, c->ca_reply_rec.rcd_niov);
}

static void gt_on_read(evutil_socket_t fd, short what, void *arg)
{
	struct gw_tcp *gt = arg;

	(void)what;
	while (gt->gt_state == GT_UP) {
		enum gw_rx_status st = gw_rx_read(&gt->gt_rx, fd, &gt->gt_rec);

		gw_stat_add(gt_st(gt), GW_CTR_SYS_SERVER_RECV, gt->gt_rx.rx_recvs);
		gt->gt_rx.rx_recvs = 0;

		switch (st) {
		case GW_RX_RECORD:
			gt_on_record(gt);
			continue;
		case GW_RX_AGAIN:
			return;
		case GW_RX_NO_BUFFER:
			gw_stat_inc(gt_st(gt), GW_CTR_POOL_EMPTY);
			gt->gt_starved = true;
			gt_schedule(gt, GT_STARVED_RETRY_MS);
			return;
		case GW_RX_EOF:
			gt_disconnect(gt, "server closed the connection");
			return;
		case GW_RX_IO_ERROR:
			gt_disconnect(gt, strerror(gt->gt_rx.rx_errno));
			return;
		default:
			gw_stat_inc(gt_st(gt), GW_CTR_BACKEND_GARBAGE);
			gt_disconnect(gt, gw_rx_status_str(st));
			return;
		}
	}
}

/* ---- the ops ---- */

static int gt_submit(void *tp, struct gw_call *c)
{
	struct gw_tcp *gt = tp;

	if (gt->gt_state != GT_UP)
		return -EAGAIN;
	if (c->ca_rec.rcd_len > RM_LEN_MASK || c->ca_rec.rcd_niov + 1 > GT_WRITE_IOV)
		return -EMSGSIZE;
	gw_call_get(c);
	c->ca_tp_owned = true;
	rm_encode_hdr(c->ca_tp_mark, (uint32_t)c->ca_rec.rcd_len, true);
	TAILQ_INSERT_TAIL(&gt->gt_sendq, c, ca_path_link);
	c->ca_tp_priv = &gt->gt_sendq;
	/* Written from the loop, as the frontend does: no EPOLLOUT to add
	 * and remove (two epoll_ctl and a loop pass per call) for a socket
	 * that has room; gt_on_write adds the event when it is full. */
	event_active(gt->gt_wev, EV_WRITE, 0);
	return 0;
}

static void gt_release(void *tp, struct gw_call *c)
{
	struct gw_tcp *gt = tp;

	gw_rec_release(gt->gt_info->pi_pool, &c->ca_reply_rec);
	gw_call_put(c);
}

static void gt_cancel(void *tp, struct gw_call *c)
{
	struct gw_tcp *gt = tp;

	if (c->ca_tp_priv == &gt->gt_inflight) {
		TAILQ_REMOVE(&gt->gt_inflight, c, ca_path_link);
	} else if (c->ca_tp_priv == &gt->gt_sendq) {
		if (c == TAILQ_FIRST(&gt->gt_sendq) && gt->gt_out_off > 0 && !gt->gt_destroying) {
			/* Half written: finish writing it (the stream must stay
			 * whole), then drop it; see gt_on_write(). */
			gt->gt_cancel_head = true;
			return;
		}
		if (c == TAILQ_FIRST(&gt->gt_sendq))
			gt->gt_out_off = 0;
		TAILQ_REMOVE(&gt->gt_sendq, c, ca_path_link);
	}
	c->ca_tp_priv = NULL;
	gw_call_put(c);
}

static void gt_destroy(void *tp)
{
	struct gw_tcp *gt = tp;
	struct gw_call *c;

	gt->gt_destroying = true;
	gw_lookup_destroy(&gt->gt_lookup);	/* rpcbind may take a while: waits */
	if (gt->gt_cancel_head && (c = TAILQ_FIRST(&gt->gt_sendq))) {
		TAILQ_REMOVE(&gt->gt_sendq, c, ca_path_link);
		gt->gt_cancel_head = false;
		c->ca_tp_priv = NULL;
		gw_call_put(c);
	}
	while ((c = TAILQ_FIRST(&gt->gt_inflight)) || (c = TAILQ_FIRST(&gt->gt_sendq)))
		gw_call_finalize(c, GW_END_SHUTDOWN);	/* calls gt_cancel() */
	if (gt->gt_fd >= 0)
		close(gt->gt_fd);
	gw_rec_release(gt->gt_info->pi_pool, &gt->gt_rec);
	gw_rx_destroy(&gt->gt_rx);
	event_free(gt->gt_rev);
	event_free(gt->gt_wev);
	event_free(gt->gt_timer);
	free(gt);
}

static void *gt_create(struct gw_ctx *gw, struct gw_path *path)
{
	const struct gw_path_info *pi = gw_path_info(path);
	struct gw_tcp *gt = calloc(1, sizeof(*gt));

	(void)gw;
	if (!gt)
		return NULL;
	gt->gt_path = path;
	gt->gt_info = pi;
	gt->gt_fd = -1;
	TAILQ_INIT(&gt->gt_sendq);
	TAILQ_INIT(&gt->gt_inflight);
	gw_rx_init(&gt->gt_rx, pi->pi_pool, pi->pi_cfg->cf_max_record);
	gw_rec_init(&gt->gt_rec);
	if (gw_lookup_init(&gt->gt_lookup, pi->pi_base, gt_resolve_work, gt_on_resolved, gt) < 0)
		goto err_lookup;
	gt->gt_rev = event_new(pi->pi_base, -1, 0, gt_on_read, gt);
	gt->gt_wev = event_new(pi->pi_base, -1, 0, gt_on_write, gt);
	gt->gt_timer = evtimer_new(pi->pi_base, gt_on_timer, gt);
	if (!gt->gt_rev || !gt->gt_wev || !gt->gt_timer)
		goto err_events;
	gt_schedule(gt, 0);	/* connect from the loop */
	return gt;

err_events:
	if (gt->gt_rev)
		event_free(gt->gt_rev);
	if (gt->gt_wev)
		event_free(gt->gt_wev);
	if (gt->gt_timer)
		event_free(gt->gt_timer);
	gw_lookup_destroy(&gt->gt_lookup);
err_lookup:
	gw_rx_destroy(&gt->gt_rx);
	free(gt);
	return NULL;
}

const struct gw_transport_ops gw_transport_tcp = {
	.to_name = "tcp",
	.to_create = gt_create,
	.to_destroy = gt_destroy,
	.to_submit = gt_submit,
	.to_release = gt_release,
	.to_cancel = gt_cancel,
};
