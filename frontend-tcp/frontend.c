// SPDX-License-Identifier: MIT
/*
 * This file contains the TCP frontend: listeners, client connections,
 * record reception into pool buffers, the output queue, backpressure and
 * timeouts (see frontend.h for the contract).  It implements the client
 * seam's ops (gateway/client.h) and calls the gateway only through the
 * seam's entry points.
 *
 * A client connection reads only when every one of these holds:
 *   - it is not closing,
 *   - calls in flight < calls_per_client and bytes (call records counted by
 *     the gateway, plus queued output) < bytes_per_client,
 *   - the gateway does not hold it (its backend's hold queue is full),
 *   - a pool buffer and a call object are free ("starved" otherwise: a
 *     short retry timer looks again, since the pool has no waiter list).
 * fe_conn_update() re-evaluates this after every change and adds or
 * deletes the read event.  Bytes already received but not yet parsed may
 * hold complete records while the socket itself is quiet, so resuming
 * also activates the read event once by hand.
 *
 * Output: items (replies, relayed callback CALLs) are queued in delivery
 * order (RPC over TCP matches replies by XID, not by order) and written
 * with writev() gathering up to FE_WRITE_IOV pieces of several items.
 * fc_out_off counts the bytes of the head item already written.  A fully
 * written item goes back to the gateway (gw_on_out_done), which gives its
 * buffers back.
 *
 * Clients that do not read: a connection whose socket is full while output
 * is queued is on fe_blocked, oldest progress first.  Its replies (and the
 * calls they answer) hold pool buffers.  write_timeout closes it in time;
 * sooner when the pool is short: while free buffers are down to the reserve
 * kept for servers' replies, a pressure check every FE_PRESSURE_TICK_MS
 * closes the client blocked longest once it has made no progress for
 * evict_timeout (counter client_evicted), so servers' replies keep flowing
 * to everyone else.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "client.h"
#include "config.h"
#include "fe_admit.h"
#include "fe_tls.h"
#include "frontend.h"
#include "gateway.h"
#include "log.h"
#include "pool.h"
#include "record.h"

#define FE_MAX_LISTENERS	16
#define FE_WRITE_IOV		128
#define FE_RECORDS_PER_WAKEUP	32	/* fairness between clients */
#define FE_STARVED_RETRY_MS	5
#define FE_PRESSURE_TICK_MS	100

struct fe_listener {
	struct fe_frontend *fl_fe;
	struct evconnlistener *fl_lev;
	uint16_t fl_port;
	unsigned fl_li;			/* its policy: index in cf_listeners */
};

TAILQ_HEAD(fe_conn_list, fe_conn);
TAILQ_HEAD(fe_out_list, gw_out);

struct fe_frontend {
	struct fe_params fe_p;
	struct fe_listener fe_listeners[FE_MAX_LISTENERS];
	unsigned fe_nlisteners;
	bool fe_listen_paused;		/* at max_clients */
	struct fe_conn_list fe_conns;
	unsigned fe_nconns;
	uint64_t fe_next_id;
	unsigned fe_reserve;		/* pool buffers left to replies */
	struct fe_pw *fe_pw;		/* sockets waiting for a PROXY header */
	struct fe_tls *fe_tls[CFG_MAX_LISTENERS];	/* per listener; NULL: its tls = off */
	struct fe_conn_list fe_blocked;	/* output stuck (socket full), oldest progress first */
	struct event *fe_pressure;	/* pool pressure check while fe_blocked is not empty */
};

struct fe_conn {
	struct fe_frontend *fc_fe;
	int fc_fd;
	uint64_t fc_id;
	char fc_name[80];
	struct gw_client *fc_cl;	/* the gateway's side of the connection */
	struct event *fc_rev, *fc_wev, *fc_timer;
	struct gw_rx fc_rx;
	struct gw_rec fc_rec;		/* record handed to the gateway */
	struct fe_out_list fc_outq;	/* output items to write, in order */
	size_t fc_out_bytes;		/* bytes of the items queued */
	size_t fc_out_off;		/* bytes of the head item written */
	uint64_t fc_out_ms;		/* output queued and no byte written since (write_timeout) */
	uint64_t fc_timer_at;		/* ms fc_timer fires at; 0: not armed */
	bool fc_blocked;		/* on fe_blocked; the write event is added */
	TAILQ_ENTRY(fe_conn) fc_blink;	/* fe_blocked */
	bool fc_reading;		/* read event added */
	bool fc_starved;		/* no buffer / call object: retry timer */
	bool fc_closing;
	uint64_t fc_last_ms;		/* last activity */
	uint64_t fc_rec_start_ms;	/* when the partial record began */
	uint8_t fc_src[16];		/* admitted source address (fe_adm_addr16) */
	bool fc_has_src;		/* counts against max_conns_per_source */
	struct fe_tls_conn *fc_tls;	/* RPC-with-TLS state (fe_tls.h); NULL: tls = off */
	unsigned fc_li;			/* its listener: index in cf_listeners */
	bool fc_tls_policy;		/* its certificate's squash given to the gateway */
	TAILQ_ENTRY(fe_conn) fc_link;
};

static void fe_conn_update(struct fe_conn *c);

static const struct cfg *fe_cfg(const struct fe_conn *c) { return c->fc_fe->fe_p.fp_cfg; }

unsigned fe_nconns(const struct fe_frontend *fe) { return fe->fe_nconns; }

void fe_set_cfg(struct fe_frontend *fe, const struct cfg *cf)
{
	struct fe_conn *c;

	fe->fe_p.fp_cfg = cf;
	for (unsigned i = 0; i < CFG_MAX_LISTENERS; i++)
		fe_tls_set_cfg(fe->fe_tls[i], cf);
	fe_tls_expiry_publish(fe->fe_tls, CFG_MAX_LISTENERS);
	/* New caps and timeouts may allow reading, or end an idle wait. */
	TAILQ_FOREACH(c, &fe->fe_conns, fc_link)
		fe_conn_update(c);
}

/* ---- closing ---- */

static void fe_listen_update(struct fe_frontend *fe)
{
	bool full = fe->fe_nconns + fe_pw_npending(fe->fe_pw) >= fe->fe_p.fp_cfg->cf_max_clients;

	if (full == fe->fe_listen_paused)
		return;
	fe->fe_listen_paused = full;
	for (unsigned i = 0; i < fe->fe_nlisteners; i++) {
		if (full)
			evconnlistener_disable(fe->fe_listeners[i].fl_lev);
		else
			evconnlistener_enable(fe->fe_listeners[i].fl_lev);
	}
}

/* The one way a client goes: its calls are finalized, memory returned. */
static void fe_conn_close(struct fe_conn *c, enum gw_ctr why, const char *reason)
{
	struct fe_frontend *fe = c->fc_fe;

	if (c->fc_closing)
		return;
	c->fc_closing = true;
	if (why != GW_CTR__COUNT) {
		gw_stat_inc(fe->fe_p.fp_stats, why);
		struct gw_log_ev ev = { .le_client = c->fc_name, .le_error = gw_ctr_str(why) };

		gw_log_ev(fe->fe_p.fp_log, CFG_LOG_WARN, &ev, "client %s closed: %s", c->fc_name, reason);
	} else {
		gw_debug(fe->fe_p.fp_log, "client %s closed: %s", c->fc_name, reason);
	}
	gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_CLOSED);
	if (c->fc_blocked)
		TAILQ_REMOVE(&fe->fe_blocked, c, fc_blink);
	event_free(c->fc_rev);
	event_free(c->fc_wev);
	event_free(c->fc_timer);
	/* The gateway reclaims the items still queued: forget them first. */
	TAILQ_INIT(&c->fc_outq);
	c->fc_out_bytes = c->fc_out_off = 0;
	gw_client_close(c->fc_cl);
	gw_rec_release(fe->fe_p.fp_pool, &c->fc_rec);
	gw_rx_destroy(&c->fc_rx);
	fe_tls_conn_free(c->fc_tls);
	close(c->fc_fd);
	TAILQ_REMOVE(&fe->fe_conns, c, fc_link);
	fe->fe_nconns--;
	free(c);
	fe_listen_update(fe);
}

/* ---- the client seam's ops ---- */

static void fe_cop_deliver(void *arg, struct gw_out *o)
{
	struct fe_conn *c = arg;

	c->fc_out_bytes += gw_out_bytes(o);
	if (TAILQ_EMPTY(&c->fc_outq))
		c->fc_out_ms = gw_pass_ms(c->fc_fe->fe_p.fp_stats);
	TAILQ_INSERT_TAIL(&c->fc_outq, o, ou_link);
	/* Write from the loop, not from here (the caller may be inside a
	 * backend callback), but without registering the write event with
	 * epoll first: a socket with room needs no poll, and items delivered
	 * in the same loop pass still share one writev().  fe_conn_on_write()
	 * adds the event only when the socket is full. */
	if (!c->fc_closing)
		event_active(c->fc_wev, EV_WRITE, 0);
}

static void fe_cop_update(void *arg)
{
	fe_conn_update(arg);
}

static void fe_cop_info(void *arg, struct gw_client_info *ci)
{
	const struct fe_conn *c = arg;

	snprintf(ci->gci_name, sizeof(ci->gci_name), "%s", c->fc_name);
	ci->gci_id = c->fc_id;
	ci->gci_bytes += c->fc_out_bytes;
	ci->gci_idle_ms = gw_now_ms() - c->fc_last_ms;
	ci->gci_rx_bytes = c->fc_rx.rx_bytes;
	ci->gci_paused = !c->fc_reading;
	fe_tls_info(c->fc_tls, ci->gci_tls, sizeof(ci->gci_tls), ci->gci_tls_id, sizeof(ci->gci_tls_id));
	snprintf(ci->gci_listener, sizeof(ci->gci_listener), "%s",
		 c->fc_li < fe_cfg(c)->cf_nlisteners ? fe_cfg(c)->cf_listeners[c->fc_li].li_name : "?");
}

/* The gateway gave up on one of the client's calls (call_timeout). */
static void fe_cop_close(void *arg, const char *reason)
{
	fe_conn_close(arg, GW_CTR__COUNT, reason);
}

static const struct gw_client_ops fe_client_ops = {
	.cop_deliver = fe_cop_deliver,
	.cop_update = fe_cop_update,
	.cop_info = fe_cop_info,
	.cop_close = fe_cop_close,
};

/* ---- reading ---- */

static bool fe_conn_can_read(const struct fe_conn *c)
{
	const struct cfg *cf = fe_cfg(c);

	return !c->fc_closing && !gw_client_held(c->fc_cl) &&
	       gw_client_ncalls(c->fc_cl) < cf->cf_calls_per_client &&
	       gw_client_bytes(c->fc_cl) + c->fc_out_bytes < cf->cf_bytes_per_client;
}

/* Nothing in flight and nothing to write: the idle timeout runs. */
static bool fe_conn_quiet(const struct fe_conn *c)
{
	return gw_client_ncalls(c->fc_cl) == 0 && TAILQ_EMPTY(&c->fc_outq);
}

/* When a client with replies queued has written nothing for
 * write_timeout (it does not read them), or 0: not applicable. */
static uint64_t fe_write_deadline(const struct fe_conn *c)
{
	const struct cfg *cf = fe_cfg(c);

	if (TAILQ_EMPTY(&c->fc_outq) || !cf->cf_write_timeout_ms)
		return 0;
	return c->fc_out_ms + cf->cf_write_timeout_ms;
}

/* Only ever moved earlier (evtimer_add per call is a heap update): a timer
 * that fires before the nearest deadline finds nothing due and re-arms. */
static void fe_timer_arm(struct fe_conn *c)
{
	const struct cfg *cf = fe_cfg(c);
	uint64_t deadline = 0, wd = fe_write_deadline(c), now;
	struct timeval tv;

	if (c->fc_starved) {
		deadline = gw_now_ms() + FE_STARVED_RETRY_MS;
	} else if (gw_rx_partial(&c->fc_rx) && c->fc_reading) {
		if (cf->cf_record_timeout_ms)
			deadline = c->fc_rec_start_ms + cf->cf_record_timeout_ms;
	} else if (fe_conn_quiet(c) && cf->cf_idle_timeout_ms) {
		deadline = c->fc_last_ms + cf->cf_idle_timeout_ms;
	}
	if (wd && (!deadline || wd < deadline))
		deadline = wd;
	if (!deadline || (c->fc_timer_at && c->fc_timer_at <= deadline))
		return;
	c->fc_timer_at = deadline;
	now = gw_now_ms();
	deadline = deadline > now ? deadline - now : 0;
	tv.tv_sec = deadline / 1000;
	tv.tv_usec = (deadline % 1000) * 1000;
	evtimer_add(c->fc_timer, &tv);
}

static void fe_conn_update(struct fe_conn *c)
{
	bool want = fe_conn_can_read(c) && !c->fc_starved;

	if (c->fc_closing)
		return;
	if (want && !c->fc_reading) {
		event_add(c->fc_rev, NULL);
		/* Records may already sit in the receive buffer. */
		event_active(c->fc_rev, EV_READ, 0);
		c->fc_reading = true;
	} else if (!want && c->fc_reading) {
		event_del(c->fc_rev);
		c->fc_reading = false;
		if (!c->fc_starved)
			gw_stat_inc(c->fc_fe->fe_p.fp_stats, GW_CTR_CLIENT_PAUSED);
	}
	fe_timer_arm(c);
}

static void fe_conn_on_read(evutil_socket_t fd, short what, void *arg)
{
	struct fe_conn *c = arg;
	struct fe_frontend *fe = c->fc_fe;
	struct gw_ctx *gw = fe->fe_p.fp_gw;
	unsigned records = 0;

	(void)what;
	while (fe_conn_can_read(c)) {
		bool was_partial = gw_rx_partial(&c->fc_rx);
		enum gw_rx_status st;

		if (records == FE_RECORDS_PER_WAKEUP) {
			event_active(c->fc_rev, EV_READ, 0);	/* come back after others */
			break;
		}
		if (gw_ctx_calls_avail(gw) == 0) {
			gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CALLS_EMPTY);
			c->fc_starved = true;
			break;
		}
		st = gw_rx_read(&c->fc_rx, fd, &c->fc_rec);
		gw_stat_add(fe->fe_p.fp_stats, GW_CTR_SYS_CLIENT_RECV, c->fc_rx.rx_recvs);
		c->fc_rx.rx_recvs = 0;
		if (c->fc_rx.rx_copied) {	/* a record in many fragments, compacted */
			gw_stat_add(fe->fe_p.fp_stats, GW_CTR_BYTES_COPIED, c->fc_rx.rx_copied);
			c->fc_rx.rx_copied = 0;
		}
		if (!was_partial && gw_rx_partial(&c->fc_rx))
			c->fc_rec_start_ms = gw_pass_ms(fe->fe_p.fp_stats);
		switch (st) {
		case GW_RX_RECORD:
			records++;
			c->fc_last_ms = gw_pass_ms(fe->fe_p.fp_stats);
			if (c->fc_tls) {	/* the AUTH_TLS probe and tls = required */
				int r = fe_tls_on_record(c->fc_tls, &c->fc_rx, &c->fc_rec, fe_conn_quiet(c));

				if (r < 0) {
					fe_conn_close(c, GW_CTR__COUNT, "RPC-with-TLS rules");
					return;
				}
				if (r == 0)
					continue;
				/* The first call in TLS: the handshake is done, the
				 * identity known (tls_identity_squash). */
				if (!c->fc_tls_policy && fe_tls_squash(c->fc_tls) >= 0) {
					gw_client_set_policy(c->fc_cl, c->fc_li, fe_tls_squash(c->fc_tls));
					c->fc_tls_policy = true;
				}
			}
			if (gw_on_record(c->fc_cl, &c->fc_rec) < 0) {
				fe_conn_close(c, GW_CTR_CLIENT_GARBAGE, "record is not an RPC call");
				return;
			}
			continue;
		case GW_RX_AGAIN:
			c->fc_last_ms = gw_pass_ms(fe->fe_p.fp_stats);
			break;
		case GW_RX_EOF:
			fe_conn_close(c, GW_CTR__COUNT, "end of stream");
			return;
		case GW_RX_IO_ERROR: {
			char why[96];

			snprintf(why, sizeof(why), "recv: %s", strerror(c->fc_rx.rx_errno));
			fe_conn_close(c, GW_CTR_CLIENT_IO_ERROR, why);
			return;
		}
		case GW_RX_TOO_BIG:
			fe_conn_close(c, GW_CTR_CLIENT_TOO_BIG, "record above max_record");
			return;
		case GW_RX_TOO_FRAGMENTED:
			fe_conn_close(c, GW_CTR_CLIENT_TOO_FRAGMENTED, "record in too many fragments");
			return;
		case GW_RX_NO_BUFFER:
			gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_POOL_EMPTY);
			c->fc_starved = true;
			break;
		default:
			break;
		}
		break;
	}
	fe_conn_update(c);
}

static void fe_conn_on_timer(evutil_socket_t fd, short what, void *arg)
{
	struct fe_conn *c = arg;
	const struct cfg *cf = fe_cfg(c);
	uint64_t now = gw_now_ms();

	(void)fd;
	(void)what;
	c->fc_timer_at = 0;
	/* A record stuck for want of buffers counts too: records beyond
	 * receive_ahead buffers take them as bytes arrive, and should
	 * the pool run dry under such records, ending the oldest frees it. */
	if (gw_rx_partial(&c->fc_rx) && (c->fc_reading || c->fc_starved) &&
	    cf->cf_record_timeout_ms && now >= c->fc_rec_start_ms + cf->cf_record_timeout_ms) {
		fe_conn_close(c, GW_CTR_CLIENT_RECORD_TIMEOUT, "record left unfinished (record_timeout)");
		return;
	}
	/* Its replies hold pool buffers: a client that never reads them would
	 * keep them for good, and a few such clients pin the whole pool. */
	if (fe_write_deadline(c) && now >= fe_write_deadline(c)) {
		fe_conn_close(c, GW_CTR_CLIENT_WRITE_TIMEOUT, "replies not read (write_timeout)");
		return;
	}
	if (c->fc_starved) {
		c->fc_starved = false;
		fe_conn_update(c);
		return;
	}
	if (!gw_rx_partial(&c->fc_rx) && fe_conn_quiet(c) && cf->cf_idle_timeout_ms &&
	    now >= c->fc_last_ms + cf->cf_idle_timeout_ms) {
		fe_conn_close(c, GW_CTR_CLIENT_IDLE_TIMEOUT, "idle (idle_timeout)");
		return;
	}
	fe_timer_arm(c);
}

/* ---- writing ---- */

/* Output stuck (blocked) or moving again: keep fe_blocked in the order of
 * the last progress, and the pressure check running while it has any. */
static void fe_conn_set_blocked(struct fe_conn *c, bool blocked)
{
	struct fe_frontend *fe = c->fc_fe;

	if (c->fc_blocked)
		TAILQ_REMOVE(&fe->fe_blocked, c, fc_blink);
	c->fc_blocked = blocked;
	if (!blocked)
		return;
	TAILQ_INSERT_TAIL(&fe->fe_blocked, c, fc_blink);
	if (!evtimer_pending(fe->fe_pressure, NULL)) {
		struct timeval tv = { 0, FE_PRESSURE_TICK_MS * 1000 };

		evtimer_add(fe->fe_pressure, &tv);
	}
}

/* Pool pressure: free buffers down to the servers' reserve while clients
 * sit on replies they do not read.  The one blocked longest goes, once it
 * has made no progress for evict_timeout; one a tick, so the freed
 * buffers are seen before the next. */
static void fe_on_pressure(evutil_socket_t fd, short what, void *arg)
{
	struct fe_frontend *fe = arg;
	struct fe_conn *c = TAILQ_FIRST(&fe->fe_blocked);
	struct timeval tv = { 0, FE_PRESSURE_TICK_MS * 1000 };
	unsigned grace = fe->fe_p.fp_cfg->cf_evict_timeout_ms;

	(void)fd;
	(void)what;
	if (c && grace && gw_pool_unpromised(fe->fe_p.fp_pool) <= fe->fe_reserve &&
	    gw_now_ms() >= c->fc_out_ms + grace)
		fe_conn_close(c, GW_CTR_CLIENT_EVICTED,
			      "replies not read while the buffer pool is short (evicted)");
	if (!TAILQ_EMPTY(&fe->fe_blocked))
		evtimer_add(fe->fe_pressure, &tv);
}

static void fe_conn_on_write(evutil_socket_t fd, short what, void *arg)
{
	struct fe_conn *c = arg;
	struct fe_frontend *fe = c->fc_fe;

	(void)what;
	while (!TAILQ_EMPTY(&c->fc_outq)) {
		struct iovec iov[FE_WRITE_IOV];
		unsigned n = 0;
		struct gw_out *o;
		ssize_t w;
		size_t skip = c->fc_out_off;

		for (o = TAILQ_FIRST(&c->fc_outq); o && n < FE_WRITE_IOV - 1; o = TAILQ_NEXT(o, ou_link)) {
			unsigned k = gw_out_iov(o, iov + n, FE_WRITE_IOV - n);

			/* Skip what was written of the head item. */
			while (skip && k) {
				if (skip >= iov[n].iov_len) {
					skip -= iov[n].iov_len;
					memmove(iov + n, iov + n + 1, (k - 1) * sizeof(iov[0]));
					k--;
				} else {
					iov[n].iov_base = (uint8_t *)iov[n].iov_base + skip;
					iov[n].iov_len -= skip;
					skip = 0;
				}
			}
			n += k;
		}
		gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_SYS_CLIENT_WRITEV);
		w = c->fc_tls ? fe_tls_writev(c->fc_tls, iov, n) : writev(fd, iov, (int)n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				event_add(c->fc_wev, NULL);	/* wait for room */
				if (!c->fc_blocked)
					fe_conn_set_blocked(c, true);
				fe_timer_arm(c);		/* write_timeout runs */
				return;
			}
			{
				char why[96];

				snprintf(why, sizeof(why), "writev: %s", strerror(errno));
				fe_conn_close(c, GW_CTR_CLIENT_IO_ERROR, why);
			}
			return;
		}
		c->fc_last_ms = c->fc_out_ms = gw_pass_ms(fe->fe_p.fp_stats);
		if (c->fc_blocked)	/* moving: to the back of the line */
			fe_conn_set_blocked(c, true);
		/* Give back every item written in full. */
		while ((o = TAILQ_FIRST(&c->fc_outq))) {
			size_t bytes = gw_out_bytes(o), left = bytes - c->fc_out_off;

			if ((size_t)w < left) {
				c->fc_out_off += (size_t)w;
				break;
			}
			w -= (ssize_t)left;
			c->fc_out_off = 0;
			TAILQ_REMOVE(&c->fc_outq, o, ou_link);
			c->fc_out_bytes -= bytes;
			gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_REPLIES);
			gw_on_out_done(c->fc_cl, o);
		}
		if (w > 0 && TAILQ_EMPTY(&c->fc_outq))
			break;	/* cannot happen: writev wrote what it was given */
	}
	if (c->fc_blocked) {	/* the event was added: not when only activated */
		event_del(c->fc_wev);
		fe_conn_set_blocked(c, false);
	}
	/* The calls just answered may have been the last users of the
	 * receive buffer: an idle connection holds none. */
	gw_rx_park(&c->fc_rx);
	fe_timer_arm(c);
}

/* ---- accepting ---- */

static uint64_t fe_key_of(const struct sockaddr *peer, socklen_t plen, uint16_t local_port)
{
	const uint8_t *p = (const uint8_t *)peer;
	uint64_t h = 0xcbf29ce484222325ull;

	/* FNV-1a over the peer address and port, and our port. */
	if (peer->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)peer;

		p = (const uint8_t *)&s->sin_addr;
		plen = 4;
		h = (h ^ s->sin_port) * 0x100000001b3ull;
	} else if (peer->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)peer;

		p = (const uint8_t *)&s->sin6_addr;
		plen = 16;
		h = (h ^ s->sin6_port) * 0x100000001b3ull;
	}
	for (socklen_t i = 0; i < plen; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	h = (h ^ local_port) * 0x100000001b3ull;
	return h & ~(1ull << 63);	/* top bit: adopted sockets */
}

/* " (listener NAME)" for a [listener NAME] section's connections, "" for
 * [gateway]'s: log lines name the policy that decided. */
static const char *fe_li_suffix(const struct fe_frontend *fe, unsigned li, char *buf, size_t len)
{
	const struct cfg *cf = fe->fe_p.fp_cfg;

	buf[0] = '\0';
	if (li && li < cf->cf_nlisteners)
		snprintf(buf, len, " (listener %s)", cf->cf_listeners[li].li_name);
	return buf;
}

static struct fe_conn *fe_conn_new(struct fe_frontend *fe, int fd, const char *name, uint64_t key,
				  unsigned li)
{
	struct event_base *base = fe->fe_p.fp_base;
	struct fe_conn *c = calloc(1, sizeof(*c));

	if (!c)
		goto err_alloc;
	c->fc_fe = fe;
	c->fc_fd = fd;
	c->fc_id = fe->fe_p.fp_id_first + fe->fe_next_id++ * fe->fe_p.fp_id_step;
	snprintf(c->fc_name, sizeof(c->fc_name), "%s#%llu", name, (unsigned long long)c->fc_id);
	c->fc_cl = gw_client_open(fe->fe_p.fp_gw, &fe_client_ops, c, c->fc_name, key);
	if (!c->fc_cl)
		goto err_cl;
	c->fc_li = li;
	gw_client_set_policy(c->fc_cl, li, -1);
	c->fc_rev = event_new(base, fd, EV_READ | EV_PERSIST, fe_conn_on_read, c);
	c->fc_wev = event_new(base, fd, EV_WRITE | EV_PERSIST, fe_conn_on_write, c);
	c->fc_timer = evtimer_new(base, fe_conn_on_timer, c);
	if (!c->fc_rev || !c->fc_wev || !c->fc_timer)
		goto err_ev;
	gw_rx_init_client(&c->fc_rx, fe->fe_p.fp_pool, fe->fe_p.fp_cfg->cf_max_record,
			  fe->fe_reserve, fe->fe_p.fp_cfg->cf_receive_ahead);
	c->fc_rx.rx_owner = gw_client_gen(c->fc_cl);
	gw_rec_init(&c->fc_rec);
	if (fe->fe_tls[li]) {
		c->fc_tls = fe_tls_conn_new(fe->fe_tls[li], fd, c->fc_name, c->fc_rev);
		if (!c->fc_tls)
			goto err_ev;
		c->fc_rx.rx_src = fe_tls_recv;
		c->fc_rx.rx_src_arg = c->fc_tls;
	}
	TAILQ_INIT(&c->fc_outq);
	c->fc_last_ms = gw_now_ms();
	TAILQ_INSERT_TAIL(&fe->fe_conns, c, fc_link);
	fe->fe_nconns++;
	gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_ACCEPTED);
	{
		struct gw_log_ev ev = { .le_client = c->fc_name };
		char lis[CFG_NAME_MAX + 16];

		gw_log_ev(fe->fe_p.fp_log, CFG_LOG_INFO, &ev, "client %s connected%s", c->fc_name,
			  fe_li_suffix(fe, li, lis, sizeof(lis)));
	}
	fe_conn_update(c);
	fe_listen_update(fe);
	return c;

err_ev:
	if (c->fc_timer)
		event_free(c->fc_timer);
	if (c->fc_wev)
		event_free(c->fc_wev);
	if (c->fc_rev)
		event_free(c->fc_rev);
	gw_client_close(c->fc_cl);
err_cl:
	free(c);
err_alloc:
	close(fd);
	gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_REFUSED);
	gw_err(fe->fe_p.fp_log, "client %s refused: out of memory", name);
	return NULL;
}

/* Connections already served from addr (the per-source cap). */
static unsigned fe_conns_from(const struct fe_frontend *fe, const uint8_t addr[16])
{
	const struct fe_conn *c;
	unsigned n = 0;

	TAILQ_FOREACH(c, &fe->fe_conns, fc_link)
		n += c->fc_has_src && !memcmp(c->fc_src, addr, sizeof(c->fc_src));
	return n;
}

_Static_assert(GW_CTR_ADM_PROXY - GW_CTR_ADM_DENY == FE_ADM_PROXY - FE_ADM_DENY,
	       "admission counters follow enum fe_adm_verdict");

static void fe_refuse(struct fe_frontend *fe, const struct sockaddr *sa, enum fe_adm_verdict v,
		      const char *why, unsigned li)
{
	char name[INET6_ADDRSTRLEN + 16], host[INET6_ADDRSTRLEN];
	/* Rate-limited per source host, not per connection (journal.c). */
	struct gw_log_ev ev = { .le_client = host, .le_error = fe_adm_verdict_str(v) };
	char lis[CFG_NAME_MAX + 16];

	fe_adm_peer_name(sa, name, sizeof(name), host, sizeof(host));
	gw_stat_inc(fe->fe_p.fp_stats, (enum gw_ctr)(GW_CTR_ADM_DENY + (v - FE_ADM_DENY)));
	gw_log_ev(fe->fe_p.fp_log, CFG_LOG_WARN, &ev, "client %s refused: %s%s", name, why,
		  fe_li_suffix(fe, li, lis, sizeof(lis)));
}

/* Admission of a connection whose client is sa (the socket's peer, or the
 * address its PROXY header gave), then service. */
static void fe_admit(struct fe_frontend *fe, int fd, const struct sockaddr *sa, socklen_t salen,
		     uint16_t lport, unsigned li)
{
	static const char *const why[] = {
		[FE_ADM_DENY] = "address in deny", [FE_ADM_NOT_ALLOWED] = "address not in allow",
		[FE_ADM_INSECURE_PORT] = "source port not below 1024 (secure_port)",
		[FE_ADM_PER_SOURCE_CAP] = "max_conns_per_source reached",
		[FE_ADM_PROXY] = "PROXY header",
	};
	char name[INET6_ADDRSTRLEN + 16];
	uint8_t src[16];
	uint16_t port;
	bool has_src;
	enum fe_adm_verdict v;
	struct fe_conn *c;

	/* Another worker's client is admitted there (fe_take), against the
	 * connections it serves, not counted here. */
	if (fe->fe_p.fp_handoff && fe->fe_p.fp_handoff(fe->fe_p.fp_handoff_arg, fd, sa, salen, lport, li))
		return;
	has_src = fe_adm_addr16(sa, src, &port);
	v = fe_adm_check(&fe->fe_p.fp_cfg->cf_listeners[li].li_pol, sa,
			 has_src ? fe_conns_from(fe, src) : 0);
	if (v != FE_ADM_OK) {
		close(fd);
		fe_refuse(fe, sa, v, why[v], li);
		return;
	}
	fe_adm_peer_name(sa, name, sizeof(name), NULL, 0);
	c = fe_conn_new(fe, fd, name, fe_key_of(sa, salen, lport), li);
	if (c && has_src) {
		memcpy(c->fc_src, src, sizeof(src));
		c->fc_has_src = true;
	}
}

static void fe_on_proxy_done(void *arg, int fd, bool ok, const struct sockaddr *src, socklen_t srclen,
			     uint16_t lport, unsigned li, const char *why)
{
	struct fe_frontend *fe = arg;

	if (ok)
		fe_admit(fe, fd, src, srclen, lport, li);
	else
		fe_refuse(fe, src, FE_ADM_PROXY, why, li);
	fe_listen_update(fe);
}

static void fe_on_accept(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa,
			 int salen, void *arg)
{
	struct fe_listener *l = arg;
	struct fe_frontend *fe = l->fl_fe;
	const struct cfg *cf = fe->fe_p.fp_cfg;
	struct sockaddr_storage local;
	socklen_t llen = sizeof(local);
	uint16_t lport = 0;
	int one = 1;

	(void)lev;
	if (fe->fe_nconns + fe_pw_npending(fe->fe_pw) >= cf->cf_max_clients) {
		gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_REFUSED);
		gw_warn(fe->fe_p.fp_log, "client refused: max_clients %u reached", cf->cf_max_clients);
		close(fd);
		return;
	}
	evutil_make_socket_nonblocking(fd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (getsockname(fd, (struct sockaddr *)&local, &llen) == 0)
		lport = local.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&local)->sin6_port)
						    : ntohs(((struct sockaddr_in *)&local)->sin_port);
	if (!cf->cf_listeners[l->fl_li].li_pol.pol_proxy_protocol) {
		fe_admit(fe, fd, sa, (socklen_t)salen, lport, l->fl_li);
		return;
	}
	/* The header must come within record_timeout (30 s if that is off). */
	if (fe_pw_start(fe->fe_pw, fd, sa, (socklen_t)salen, lport, l->fl_li,
			cf->cf_record_timeout_ms ? cf->cf_record_timeout_ms : 30000) < 0) {
		close(fd);
		gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_REFUSED);
		gw_err(fe->fe_p.fp_log, "client refused: out of memory");
		return;
	}
	fe_listen_update(fe);
}

static void fe_on_accept_error(struct evconnlistener *lev, void *arg)
{
	struct fe_frontend *fe = ((struct fe_listener *)arg)->fl_fe;

	(void)lev;
	gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_REFUSED);
	gw_err(fe->fe_p.fp_log, "accept: %s", strerror(errno));
}

int fe_adopt_fd(struct fe_frontend *fe, int fd, const char *name)
{
	evutil_make_socket_nonblocking(fd);
	return fe_conn_new(fe, fd, name, (1ull << 63) | (fe->fe_next_id + 1), 0) ? 0 : -ENOMEM;
}

void fe_take(struct fe_frontend *fe, int fd, const struct sockaddr *sa, socklen_t salen,
	     uint16_t lport, unsigned li)
{
	const struct cfg *cf = fe->fe_p.fp_cfg;

	if (fe->fe_nconns >= cf->cf_max_clients || li >= cf->cf_nlisteners) {
		char name[INET6_ADDRSTRLEN + 16], host[INET6_ADDRSTRLEN];
		struct gw_log_ev ev = { .le_client = host };	/* rate-limited per host */

		fe_adm_peer_name(sa, name, sizeof(name), host, sizeof(host));
		gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_REFUSED);
		gw_log_ev(fe->fe_p.fp_log, CFG_LOG_WARN, &ev, "client %s refused: max_clients %u of "
			  "its worker reached", name, cf->cf_max_clients);
		close(fd);
		return;
	}
	fe_admit(fe, fd, sa, salen, lport, li);
}

/* The listener (index in cf_listeners) whose listen = is ss; 0 if none. */
static unsigned fe_listener_of(const struct cfg *cf, const struct sockaddr_storage *ss,
			       socklen_t len)
{
	for (unsigned i = 0; i < cf->cf_nlisten; i++)
		if (cf->cf_listen[i].cl_addrlen == len && !memcmp(&cf->cf_listen[i].cl_addr, ss, len))
			return cf->cf_listen[i].cl_listener;
	return 0;
}

/* li: the listener's index in cf_listeners, or CFG_MAX_LISTENERS to find it
 * by the socket's address (socket activation). */
static int fe_listen_fd_li(struct fe_frontend *fe, int fd, unsigned li)
{
	struct fe_listener *l;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (fe->fe_nlisteners == FE_MAX_LISTENERS)
		return -ENOSPC;
	if (li != CFG_MAX_LISTENERS && li >= fe->fe_p.fp_cfg->cf_nlisteners)
		return -EINVAL;
	l = &fe->fe_listeners[fe->fe_nlisteners];
	memset(&ss, 0, sizeof(ss));
	evutil_make_socket_nonblocking(fd);
	l->fl_fe = fe;
	l->fl_lev = evconnlistener_new(fe->fe_p.fp_base, fe_on_accept, l,
				       LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (!l->fl_lev)
		return -ENOMEM;
	evconnlistener_set_error_cb(l->fl_lev, fe_on_accept_error);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
		l->fl_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
						      : ntohs(((struct sockaddr_in *)&ss)->sin_port);
	else
		len = 0;
	l->fl_li = li != CFG_MAX_LISTENERS ? li : fe_listener_of(fe->fe_p.fp_cfg, &ss, len);
	fe->fe_nlisteners++;
	if (fe->fe_listen_paused)
		evconnlistener_disable(l->fl_lev);
	return 0;
}

int fe_listen_fd(struct fe_frontend *fe, int fd)
{
	return fe_listen_fd_li(fe, fd, CFG_MAX_LISTENERS);
}

int fe_listen_addr(struct fe_frontend *fe, const struct sockaddr *sa, socklen_t len)
{
	return fe_listen_addr_li(fe, sa, len, 0);
}

int fe_listen_addr_li(struct fe_frontend *fe, const struct sockaddr *sa, socklen_t len,
		      unsigned li)
{
	int fd, one = 1, err;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* [::] serves IPv6 only; list 0.0.0.0 too for IPv4. */
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, sa, len) < 0 || listen(fd, SOMAXCONN) < 0)
		goto err_sock;
	err = fe_listen_fd_li(fe, fd, li);
	if (err < 0) {
		close(fd);
		return err;
	}
	return 0;

err_sock:
	err = -errno;
	close(fd);
	return err;
}

int fe_listen_cfg(struct fe_frontend *fe)
{
	const struct cfg *cf = fe->fe_p.fp_cfg;

	for (unsigned i = 0; i < cf->cf_nlisten; i++) {
		const struct cfg_listen *l = &cf->cf_listen[i];
		int err = fe_listen_addr_li(fe, (const struct sockaddr *)&l->cl_addr, l->cl_addrlen,
					    l->cl_listener);

		if (err < 0) {
			/* A port below 1024 without the capability: say what is missing. */
			gw_err(fe->fe_p.fp_log, "listen %s: %s%s", l->cl_text, strerror(-err),
			       err == -EACCES ? " (a port below 1024 needs CAP_NET_BIND_SERVICE: "
			       "AmbientCapabilities= of the unit, or socket activation)" : "");
			return err;
		}
		gw_info(fe->fe_p.fp_log, "listening on %s%s%s", l->cl_text,
			l->cl_listener ? ", listener " : "",
			l->cl_listener ? cf->cf_listeners[l->cl_listener].li_name : "");
	}
	return 0;
}

uint16_t fe_listen_port(const struct fe_frontend *fe, unsigned i)
{
	return i < fe->fe_nlisteners ? fe->fe_listeners[i].fl_port : 0;
}

int fe_listen_sockaddr(const struct fe_frontend *fe, unsigned i, struct sockaddr_storage *ss)
{
	socklen_t len = sizeof(*ss);

	if (i >= fe->fe_nlisteners)
		return -1;
	memset(ss, 0, sizeof(*ss));
	return getsockname(evconnlistener_get_fd(fe->fe_listeners[i].fl_lev), (struct sockaddr *)ss,
			   &len) == 0 ? 0 : -1;
}

struct fe_frontend *fe_new(const struct fe_params *p)
{
	struct fe_frontend *fe = calloc(1, sizeof(*fe));

	if (!fe)
		return NULL;
	fe->fe_p = *p;
	if (!fe->fe_p.fp_id_step) {
		fe->fe_p.fp_id_first = 1;
		fe->fe_p.fp_id_step = 1;
	}
	TAILQ_INIT(&fe->fe_conns);
	fe->fe_pw = fe_pw_new(p->fp_base, fe_on_proxy_done, fe);
	TAILQ_INIT(&fe->fe_blocked);
	fe->fe_pressure = evtimer_new(p->fp_base, fe_on_pressure, fe);
	for (unsigned i = 0; fe->fe_pw && fe->fe_pressure && i < p->fp_cfg->cf_nlisteners; i++) {
		struct fe_tls_params tp = { p->fp_base, p->fp_log, p->fp_stats };
		char err[512];

		if (fe_tls_new(p->fp_cfg, i, &tp, &fe->fe_tls[i], err, sizeof(err)) < 0) {
			gw_err(p->fp_log, "%s%s%s", i ? p->fp_cfg->cf_listeners[i].li_name : "",
			       i ? ": " : "", err);
			for (unsigned j = 0; j < i; j++)
				fe_tls_free(fe->fe_tls[j]);
			fe_pw_free(fe->fe_pw);
			fe->fe_pw = NULL;
		}
	}
	if (!fe->fe_pw || !fe->fe_pressure) {
		if (fe->fe_pw)
			fe_pw_free(fe->fe_pw);
		if (fe->fe_pressure)
			event_free(fe->fe_pressure);
		free(fe);
		return NULL;
	}
	fe_tls_expiry_publish(fe->fe_tls, CFG_MAX_LISTENERS);
	/* One record's worth of buffers per route, for servers' replies. */
	fe->fe_reserve = p->fp_cfg->cf_nroutes *
			 gw_rx_record_buffers(gw_pool_buf_size(p->fp_pool), p->fp_cfg->cf_max_record);
	return fe;
}

void fe_free(struct fe_frontend *fe)
{
	struct fe_conn *c;

	if (!fe)
		return;
	for (unsigned i = 0; i < fe->fe_nlisteners; i++)
		evconnlistener_free(fe->fe_listeners[i].fl_lev);
	fe->fe_nlisteners = 0;
	fe_pw_free(fe->fe_pw);
	fe->fe_pw = NULL;
	while ((c = TAILQ_FIRST(&fe->fe_conns)))
		fe_conn_close(c, GW_CTR__COUNT, "shutdown");
	event_free(fe->fe_pressure);
	for (unsigned i = 0; i < CFG_MAX_LISTENERS; i++)
		fe_tls_free(fe->fe_tls[i]);
	free(fe);
}
