// SPDX-License-Identifier: MIT
/*
 * This file contains the TCP frontend's client connections: record
 * reception into pool buffers, the output queue, backpressure and timeouts
 * (see frontend.h for the contract; listeners and admission are in
 * fe_listen.c).  It implements the client seam's ops (gateway/client.h) and
 * calls the gateway only through the seam's entry points.
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
#include <sys/uio.h>

#include <event2/event.h>

#include "client.h"
#include "config.h"
#include "fe_internal.h"
#include "fe_tls.h"
#include "frontend.h"
#include "gateway.h"
#include "log.h"
#include "pool.h"
#include "record.h"

#define FE_WRITE_IOV		128
#define FE_RECORDS_PER_WAKEUP	32	/* fairness between clients */
#define FE_STARVED_RETRY_MS	5

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

/* The one way a client goes: its calls are finalized, memory returned. */
void fe_conn_close(struct fe_conn *c, enum gw_ctr why, const char *reason)
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
	if (c->fc_wdue)
		TAILQ_REMOVE(&fe->fe_wdue, c, fc_wlink);
	fe_watch_set(c, false);
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
	struct fe_frontend *fe = c->fc_fe;

	c->fc_out_bytes += gw_out_bytes(o);
	if (TAILQ_EMPTY(&c->fc_outq))
		c->fc_out_ms = gw_pass_ms(fe->fe_p.fp_stats);
	TAILQ_INSERT_TAIL(&c->fc_outq, o, ou_link);
	/* Blocked: the write event is added and takes it when there is room. */
	if (c->fc_closing || c->fc_blocked)
		return;
	/* Write at the pass's end, not from here (the caller may be inside a
	 * backend callback), and without registering the write event with
	 * epoll first: a socket with room needs no poll, and items delivered
	 * in the same loop pass share one writev().  fe_conn_on_write() adds
	 * the event only when the socket is full.  The end is the next
	 * fe_flush() once the loop calls it (no event to make active and run
	 * per reply), else an event made active from here. */
	if (!fe->fe_flush_used) {
		event_active(c->fc_wev, EV_WRITE, 0);
	} else if (!c->fc_wdue) {
		c->fc_wdue = true;
		TAILQ_INSERT_TAIL(&fe->fe_wdue, c, fc_wlink);
	}
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
	       gw_client_bytes(c->fc_cl) + c->fc_out_bytes < cf->cf_bytes_per_client &&
	       gw_client_share_ok(c->fc_cl);	/* last: it marks the host for a wake-up */
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
	fe_watch_set(c, !c->fc_reading);
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

/* Pressure: free buffers down to the servers' reserve, or fewer call
 * objects free than a new client host's share (gw_ctx_calls_short), while
 * clients sit on replies they do not read: those replies hold the buffers
 * and the call objects the others need.  The one blocked longest goes,
 * once it has made no progress for evict_timeout; one a tick, so what it
 * freed is seen before the next. */
void fe_on_pressure(evutil_socket_t fd, short what, void *arg)
{
	struct fe_frontend *fe = arg;
	struct fe_conn *c = TAILQ_FIRST(&fe->fe_blocked);
	struct timeval tv = { 0, FE_PRESSURE_TICK_MS * 1000 };
	unsigned grace = fe->fe_p.fp_cfg->cf_evict_timeout_ms;

	(void)fd;
	(void)what;
	if (c && grace && gw_now_ms() >= c->fc_out_ms + grace) {
		if (gw_pool_unpromised(fe->fe_p.fp_pool) <= fe->fe_reserve)
			fe_conn_close(c, GW_CTR_CLIENT_EVICTED,
				      "replies not read while the buffer pool is short (evicted)");
		else if (gw_ctx_calls_short(fe->fe_p.fp_gw))
			fe_conn_close(c, GW_CTR_CLIENT_EVICTED_CALLS,
				      "replies not read while call objects are short (evicted)");
	}
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

void fe_flush(struct fe_frontend *fe)
{
	struct fe_conn *c;

	fe->fe_flush_used = true;
	/* A write may close its client (off the list then) or give output to
	 * another (on the list's tail, written here too). */
	while ((c = TAILQ_FIRST(&fe->fe_wdue))) {
		TAILQ_REMOVE(&fe->fe_wdue, c, fc_wlink);
		c->fc_wdue = false;
		fe_conn_on_write(c->fc_fd, EV_WRITE, c);
	}
}

bool fe_flush_due(const struct fe_frontend *fe)
{
	return !TAILQ_EMPTY(&fe->fe_wdue);
}

/* ---- a new connection ---- */

struct fe_conn *fe_conn_new(struct fe_frontend *fe, int fd, const char *name, uint64_t key,
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
