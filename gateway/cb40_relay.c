// SPDX-License-Identifier: MIT
/*
 * This file contains the relay half of the NFSv4.0 callback relay (cb40.c
 * has the SETCLIENTID half): the listeners the server calls back on, its
 * connections there, and for each CALL the connection to the registered
 * client's own callback service, the CALL sent there with the client's
 * program and the server's XID, and the REPLY sent back (RFC 7530 3.3.3,
 * 16.33, 20).
 *
 * Who may call: a listener is bound to the one local address the gateway
 * reaches a backend from (never every interface), and admits connections
 * only from a backend's address (nfsd calls back from the address the
 * gateway reaches it at); anyone else is closed at accept, counted `peer`.
 * Room: nfsd opens one callback connection per client it calls back, so
 * there are as many server connection slots as registrations; with all in
 * use, the one with nothing read for longest makes room (nfsd reopens it
 * when it next calls back), and any connection idle for GW_CB40_IDLE_MS
 * is closed.  Callbacks are few and small: each record is copied through
 * one scratch buffer; nothing is allocated per callback but connections.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "cb40_int.h"
#include "client.h"
#include "ctx.h"

/* ---- records on the callback connections ---- */

/* One whole record (every fragment, RFC 5531 11) from in into c4_rec + 4:
 * its length; 0 when not all there yet; -1 when above GW_CB40_MAX_REC. */
static long cb40_take_record(struct gw_cb40 *c4, struct evbuffer *in)
{
	size_t avail = evbuffer_get_length(in), pos = 0, len = 0;
	const uint8_t *p;

	for (;;) {
		uint32_t mark, flen;

		if (avail < pos + 4)
			return 0;
		p = evbuffer_pullup(in, (ssize_t)(pos + 4));
		mark = chk_be32(p + pos);
		flen = mark & 0x7fffffffu;
		if (len + flen > GW_CB40_MAX_REC)
			return -1;
		if (avail < pos + 4 + flen)
			return 0;
		p = evbuffer_pullup(in, (ssize_t)(pos + 4 + flen));
		memcpy(c4->c4_rec + 4 + len, p + pos + 4, flen);
		len += flen;
		pos += 4 + flen;
		if (mark & 0x80000000u)
			break;
	}
	evbuffer_drain(in, pos);
	chk_put_be32(c4->c4_rec, 0x80000000u | (uint32_t)len);
	return (long)len;
}

static void cb40_send_rec(struct bufferevent *bev, const uint8_t *rec, size_t len)
{
	bufferevent_write(bev, rec, len + 4);
}

/* Answer the server by ourselves: accepted, no results. */
static void cb40_answer(struct gw_cb40_srv *sv, uint32_t xid, uint32_t accept_stat)
{
	struct rpc_reply_hdr st = { .rr_stat = RPC_MSG_ACCEPTED, .rr_accept_stat = accept_stat };
	uint8_t buf[68];
	struct xdr_enc xe;

	xdr_enc_init(&xe, buf + 4, sizeof(buf) - 4);
	if (!rpc_local_reply(&xe, xid, &st))
		return;
	chk_put_be32(buf, 0x80000000u | (uint32_t)xe.xe_len);
	cb40_send_rec(sv->s4_bev, buf, xe.xe_len);
}

static void cb40_pend_end(struct gw_cb40_pend *p, uint32_t accept_stat)
{
	if (accept_stat != RPC_SUCCESS)
		cb40_answer(p->p4_srv, p->p4_xid, accept_stat);
	p->p4_reg->r4_npend--;
	p->p4_srv = NULL;
}

static void cb40_idle_timeout(struct bufferevent *bev)
{
	struct timeval idle = { GW_CB40_IDLE_MS / 1000, 0 };

	bufferevent_set_timeouts(bev, &idle, NULL);
}

/* ---- client side: the connection to its callback service ---- */

void gw_cb40_reg_close(struct gw_cb40_reg *rg, enum gw_ctr why)
{
	struct gw_cb40 *c4 = rg->r4_c4;

	for (unsigned i = 0; i < GW_CB40_PENDING; i++) {
		struct gw_cb40_pend *p = &c4->c4_pend[i];

		if (p->p4_srv && p->p4_reg == rg) {
			gw_stat_inc(ST(c4->c4_gw), why);
			cb40_pend_end(p, RPC_SYSTEM_ERR);
		}
	}
	if (rg->r4_bev)
		bufferevent_free(rg->r4_bev);
	rg->r4_bev = NULL;
	rg->r4_up = false;
}

static void cb40_reg_read(struct bufferevent *bev, void *arg)
{
	struct gw_cb40_reg *rg = arg;
	struct gw_cb40 *c4 = rg->r4_c4;
	struct gw_ctx *gw = c4->c4_gw;
	long n;

	while ((n = cb40_take_record(c4, bufferevent_get_input(bev))) > 0) {
		uint32_t xid = n >= 8 ? chk_be32(c4->c4_rec + 4) : 0;
		struct gw_cb40_pend *p = NULL;

		for (unsigned i = 0; i < GW_CB40_PENDING && !p; i++)
			if (c4->c4_pend[i].p4_srv && c4->c4_pend[i].p4_reg == rg &&
			    c4->c4_pend[i].p4_xid == xid)
				p = &c4->c4_pend[i];
		if (!p) {
			gw_stat_inc(ST(gw), GW_CTR_CB40_FAIL_BAD);
			gw_log_client(LG(gw), CFG_LOG_INFO, rg->r4_uaddr,
				      "v4.0 callback reply xid %#x from %s: none pending: dropped", xid,
				      rg->r4_uaddr);
			continue;
		}
		cb40_send_rec(p->p4_srv->s4_bev, c4->c4_rec, (size_t)n);
		gw_stat_inc(ST(gw), GW_CTR_CB40_RELAYED);
		gw_log_client(LG(gw), CFG_LOG_INFO, rg->r4_uaddr,
			      "v4.0 callback xid %#x: reply (%ld bytes) from %s relayed", xid, n,
			      rg->r4_uaddr);
		cb40_pend_end(p, RPC_SUCCESS);
	}
	if (n < 0) {
		gw_log_client(LG(gw), CFG_LOG_WARN, rg->r4_uaddr,
			      "v4.0 callback service %s: record above %u bytes: closed", rg->r4_uaddr,
			      GW_CB40_MAX_REC);
		gw_cb40_reg_close(rg, GW_CTR_CB40_FAIL_BAD);
	}
}

static void cb40_reg_event(struct bufferevent *bev, short what, void *arg)
{
	struct gw_cb40_reg *rg = arg;
	struct gw_ctx *gw = rg->r4_c4->c4_gw;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED) {
		rg->r4_up = true;
		gw_log_client(LG(gw), CFG_LOG_INFO, rg->r4_uaddr,
			      "v4.0 callback service of %s at %s: connected", rg->r4_name, rg->r4_uaddr);
		return;
	}
	gw_log_client(LG(gw), (what & BEV_EVENT_TIMEOUT) ? CFG_LOG_INFO : CFG_LOG_WARN,
		      rg->r4_uaddr, "v4.0 callback service of %s at %s: %s", rg->r4_name,
		      rg->r4_uaddr, (what & BEV_EVENT_TIMEOUT) ? "idle: closed"
				    : !rg->r4_up ? "unreachable"
				    : (what & BEV_EVENT_EOF) ? "closed" : "lost");
	gw_cb40_reg_close(rg, GW_CTR_CB40_FAIL_CONNECT);
}

static bool cb40_reg_connect(struct gw_cb40 *c4, struct gw_cb40_reg *rg)
{
	struct event_base *base = c4->c4_gw->gw_p.gp_base;

	if (rg->r4_bev)
		return true;
	rg->r4_bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!rg->r4_bev)
		return false;
	bufferevent_setcb(rg->r4_bev, cb40_reg_read, NULL, cb40_reg_event, rg);
	bufferevent_setwatermark(rg->r4_bev, EV_READ, 0, 4 * (4 + GW_CB40_MAX_REC));
	cb40_idle_timeout(rg->r4_bev);
	bufferevent_enable(rg->r4_bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(rg->r4_bev, (struct sockaddr *)&rg->r4_addr,
				       (int)rg->r4_alen) < 0) {
		bufferevent_free(rg->r4_bev);
		rg->r4_bev = NULL;
		return false;
	}
	return true;
}

/* ---- server side: CALLs on the listener ---- */

static void cb40_timer_arm(struct gw_cb40 *c4)
{
	struct timeval tv = { 0, GW_CB40_TICK_MS * 1000 };

	if (c4->c4_timer && !evtimer_pending(c4->c4_timer, NULL))
		evtimer_add(c4->c4_timer, &tv);
}

/* The registration whose program is prog, or NULL. */
static struct gw_cb40_reg *cb40_reg_by_prog(struct gw_cb40 *c4, uint32_t prog)
{
	struct gw_cb40_reg *rg;

	if (prog - GW_CB40_PROG_BASE >= GW_CB40_PROG_SPAN)
		return NULL;
	rg = &c4->c4_reg[(prog - GW_CB40_PROG_BASE) & (GW_CB40_REGS - 1)];
	return rg->r4_used && rg->r4_prog == prog ? rg : NULL;
}

static struct gw_cb40_pend *cb40_pend_slot(struct gw_cb40 *c4)
{
	for (unsigned i = 0; i < GW_CB40_PENDING; i++)
		if (!c4->c4_pend[i].p4_srv)
			return &c4->c4_pend[i];
	return NULL;
}

/* No room to relay m: answered SYSTEM_ERR, counted as why. */
static void cb40_refuse(struct gw_cb40_srv *sv, const struct gw_cb40_reg *rg,
			const struct chk_cb_msg *m, enum gw_ctr why)
{
	struct gw_ctx *gw = sv->s4_c4->c4_gw;

	gw_stat_inc(ST(gw), why);
	gw_log_server(LG(gw), CFG_LOG_WARN, sv->s4_name,
		      "v4.0 callback xid %#x proc %u for %s: %s: SYSTEM_ERR", m->cm_xid, m->cm_proc,
		      rg->r4_uaddr, why == GW_CTR_CB40_FAIL_FULL ? "too many pending" : "cannot connect");
	cb40_answer(sv, m->cm_xid, RPC_SYSTEM_ERR);
}

/* One CALL of the server (in c4_rec): to its client, or answered here. */
static void cb40_srv_call(struct gw_cb40 *c4, struct gw_cb40_srv *sv, size_t len)
{
	struct gw_ctx *gw = c4->c4_gw;
	struct iovec iov = { c4->c4_rec + 4, len };
	struct gw_cb40_pend *p;
	struct gw_cb40_reg *rg;
	struct chk_cb_msg m;

	if (!chk_cb_parse_call(&iov, 1, &m)) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_FAIL_BAD);
		gw_log_server(LG(gw), CFG_LOG_WARN, sv->s4_name,
			      "v4.0 callback of %zu bytes from %s is not an RPC call: dropped", len,
			      sv->s4_name);
		return;
	}
	rg = cb40_reg_by_prog(c4, m.cm_prog);
	if (!rg) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_FAIL_NO_CLIENT);
		gw_log_server(LG(gw), CFG_LOG_WARN, sv->s4_name,
			      "v4.0 callback xid %#x prog %#x: no client registered it: PROG_UNAVAIL",
			      m.cm_xid, m.cm_prog);
		cb40_answer(sv, m.cm_xid, RPC_PROG_UNAVAIL);
		return;
	}
	p = rg->r4_npend < GW_CB40_PER_CLIENT ? cb40_pend_slot(c4) : NULL;
	if (!p) {
		cb40_refuse(sv, rg, &m, GW_CTR_CB40_FAIL_FULL);
		return;
	}
	if (!cb40_reg_connect(c4, rg)) {
		cb40_refuse(sv, rg, &m, GW_CTR_CB40_FAIL_CONNECT);
		return;
	}
	/* The client's own program; the XID stays the server's. */
	chk_put_be32(c4->c4_rec + 4 + 12, rg->r4_cprog);
	*p = (struct gw_cb40_pend){ .p4_srv = sv, .p4_reg = rg, .p4_xid = m.cm_xid,
				    .p4_deadline_ms = gw_now_ms() + GW_CB40_TIMEOUT_MS };
	rg->r4_npend++;
	rg->r4_stamp = ++c4->c4_clock;		/* called back: in use */
	cb40_send_rec(rg->r4_bev, c4->c4_rec, len);
	gw_log_server(LG(gw), CFG_LOG_INFO, sv->s4_name,
		      "v4.0 callback xid %#x proc %u (%zu bytes) -> %s (client %s)", m.cm_xid,
		      m.cm_proc, len, rg->r4_uaddr, rg->r4_name);
	cb40_timer_arm(c4);
}

static void cb40_srv_close(struct gw_cb40_srv *sv)
{
	struct gw_cb40 *c4 = sv->s4_c4;

	/* Its pending callbacks have nobody to answer any more. */
	for (unsigned i = 0; i < GW_CB40_PENDING; i++)
		if (c4->c4_pend[i].p4_srv == sv)
			cb40_pend_end(&c4->c4_pend[i], RPC_SUCCESS);
	bufferevent_free(sv->s4_bev);
	sv->s4_bev = NULL;
}

static void cb40_srv_read(struct bufferevent *bev, void *arg)
{
	struct gw_cb40_srv *sv = arg;
	long n;

	sv->s4_stamp = ++sv->s4_c4->c4_clock;
	while ((n = cb40_take_record(sv->s4_c4, bufferevent_get_input(bev))) > 0)
		cb40_srv_call(sv->s4_c4, sv, (size_t)n);
	if (n < 0) {
		gw_stat_inc(ST(sv->s4_c4->c4_gw), GW_CTR_CB40_FAIL_BAD);
		cb40_srv_close(sv);
	}
}

static void cb40_srv_event(struct bufferevent *bev, short what, void *arg)
{
	(void)bev;
	(void)what;
	cb40_srv_close(arg);
}

/* A free server slot, else the one with nothing read for longest and no
 * callback pending (closed to make room), else NULL. */
static struct gw_cb40_srv *cb40_srv_slot(struct gw_cb40 *c4)
{
	struct gw_cb40_srv *old = NULL;

	for (unsigned i = 0; i < GW_CB40_SRV; i++) {
		struct gw_cb40_srv *sv = &c4->c4_srv[i];
		bool busy = false;

		if (!sv->s4_bev)
			return sv;
		for (unsigned k = 0; k < GW_CB40_PENDING && !busy; k++)
			busy = c4->c4_pend[k].p4_srv == sv;
		if (!busy && (!old || sv->s4_stamp < old->s4_stamp))
			old = sv;
	}
	if (old) {
		gw_info(LG(c4->c4_gw), "v4.0 callback listener: %u server connections: the "
			"longest idle (%s) closed to make room", GW_CB40_SRV, old->s4_name);
		cb40_srv_close(old);
	}
	return old;
}

static bool cb40_peer_known(const struct gw_cb40 *c4, const struct sockaddr *sa)
{
	uint8_t a[16];

	if (!gw_cb40_addr16(sa, a))
		return false;
	for (unsigned i = 0; i < c4->c4_npeers; i++)
		if (!memcmp(c4->c4_peer[i], a, 16))
			return true;
	return false;
}

static void cb40_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
			int salen, void *arg)
{
	struct gw_cb40 *c4 = arg;
	struct gw_cb40_srv *sv = NULL;
	char netid[GW_CB40_NETID_MAX], name[GW_CB40_UADDR_MAX];

	(void)lis;
	(void)salen;
	if (!gw_cb40_uaddr_fmt(sa, netid, name))
		snprintf(name, sizeof(name), "?");
	if (!cb40_peer_known(c4, sa)) {
		/* Only a backend calls back: anyone else could forge callbacks
		 * to clients' services and read their replies. */
		gw_stat_inc(ST(c4->c4_gw), GW_CTR_CB40_FAIL_PEER);
		gw_log_client(LG(c4->c4_gw), CFG_LOG_WARN, name, "v4.0 callback listener: "
			      "connection from %s, not a backend's address: closed", name);
		close(fd);
		return;
	}
	sv = cb40_srv_slot(c4);
	if (sv)
		sv->s4_bev = bufferevent_socket_new(c4->c4_gw->gw_p.gp_base, fd,
						    BEV_OPT_CLOSE_ON_FREE);
	if (!sv || !sv->s4_bev) {
		gw_stat_inc(ST(c4->c4_gw), GW_CTR_CB40_FAIL_FULL);
		gw_log_server(LG(c4->c4_gw), CFG_LOG_WARN, name, "v4.0 callback listener: no room "
			      "for another connection of %s (each has a callback pending): closed",
			      name);
		close(fd);
		return;
	}
	sv->s4_c4 = c4;
	sv->s4_stamp = ++c4->c4_clock;
	memcpy(sv->s4_name, name, sizeof(name));
	bufferevent_setcb(sv->s4_bev, cb40_srv_read, NULL, cb40_srv_event, sv);
	bufferevent_setwatermark(sv->s4_bev, EV_READ, 0, 4 * (4 + GW_CB40_MAX_REC));
	cb40_idle_timeout(sv->s4_bev);
	bufferevent_enable(sv->s4_bev, EV_READ | EV_WRITE);
	gw_log_server(LG(c4->c4_gw), CFG_LOG_INFO, name,
		      "v4.0 callback listener: server connected from %s", name);
}

static void cb40_tick(evutil_socket_t fd, short what, void *arg)
{
	struct gw_cb40 *c4 = arg;
	uint64_t now = gw_now_ms();
	bool any = false;

	(void)fd;
	(void)what;
	for (unsigned i = 0; i < GW_CB40_PENDING; i++) {
		struct gw_cb40_pend *p = &c4->c4_pend[i];

		if (p->p4_srv && p->p4_deadline_ms <= now) {
			gw_stat_inc(ST(c4->c4_gw), GW_CTR_CB40_FAIL_TIMEOUT);
			gw_log_client(LG(c4->c4_gw), CFG_LOG_WARN, p->p4_reg->r4_uaddr,
				      "v4.0 callback xid %#x: no reply from %s within %u ms: SYSTEM_ERR",
				      p->p4_xid, p->p4_reg->r4_uaddr, GW_CB40_TIMEOUT_MS);
			cb40_pend_end(p, RPC_SYSTEM_ERR);
		}
		any |= p->p4_srv != NULL;
	}
	if (any)
		cb40_timer_arm(c4);
}

/* ---- listeners and who may use them ---- */

static uint16_t cb40_port_of(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port
					       : ((const struct sockaddr_in *)ss)->sin_port);
}

static void cb40_set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(port);
}

static bool cb40_same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	uint8_t x[16], y[16];

	return gw_cb40_addr16((const struct sockaddr *)a, x) &&
	       gw_cb40_addr16((const struct sockaddr *)b, y) && !memcmp(x, y, 16);
}

bool gw_cb40_listen(struct gw_cb40 *c4, struct sockaddr_storage *local, socklen_t len)
{
	const unsigned fl = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE;
	struct event_base *base = c4->c4_gw->gw_p.gp_base;
	struct gw_cb40_lis *l = NULL;

	for (unsigned i = 0; i < GW_CB40_LIS; i++) {
		struct gw_cb40_lis *li = &c4->c4_lis[i];

		if (li->l4_lis && cb40_same_host(&li->l4_addr, local)) {
			cb40_set_port(local, cb40_port_of(&li->l4_addr));
			return true;
		}
		if (!li->l4_lis && !l)
			l = li;
	}
	if (!l || !base) {
		gw_warn(LG(c4->c4_gw), "v4.0 callback listener: %u local addresses in use already",
			GW_CB40_LIS);
		return false;
	}
	cb40_set_port(local, 0);	/* the kernel's choice */
	l->l4_alen = sizeof(l->l4_addr);
	l->l4_lis = evconnlistener_new_bind(base, cb40_accept, c4, fl, 64,
					    (struct sockaddr *)local, (int)len);
	if (!l->l4_lis ||
	    getsockname(evconnlistener_get_fd(l->l4_lis), (struct sockaddr *)&l->l4_addr,
			&l->l4_alen) < 0) {
		gw_err(LG(c4->c4_gw), "v4.0 callback listener: %s", strerror(errno));
		if (l->l4_lis)
			evconnlistener_free(l->l4_lis);
		l->l4_lis = NULL;
		return false;
	}
	cb40_set_port(local, cb40_port_of(&l->l4_addr));
	gw_info(LG(c4->c4_gw), "v4.0 callback listener on port %u", cb40_port_of(&l->l4_addr));
	return true;
}

void gw_cb40_peer_add(struct gw_cb40 *c4, const struct sockaddr *sa)
{
	uint8_t a[16];

	if (!gw_cb40_addr16(sa, a))
		return;
	for (unsigned i = 0; i < c4->c4_npeers; i++)
		if (!memcmp(c4->c4_peer[i], a, 16))
			return;
	if (c4->c4_npeers == GW_CB40_PEERS) {	/* oldest out: backends replaced by reloads */
		memmove(c4->c4_peer[0], c4->c4_peer[1], sizeof(c4->c4_peer[0]) * (GW_CB40_PEERS - 1));
		c4->c4_npeers--;
	}
	memcpy(c4->c4_peer[c4->c4_npeers++], a, 16);
}

static uint16_t cb40_cfg_port(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET || ss->ss_family == AF_INET6 ? cb40_port_of(ss) : 0;
}

bool gw_cb40_own_port(const struct gw_cb40 *c4, uint16_t port)
{
	const struct cfg *cf = c4->c4_gw->gw_p.gp_cfg;

	if (cb40_cfg_port(&cf->cf_admin_addr) == port)
		return true;
	for (unsigned i = 0; i < cf->cf_nlisten; i++)
		if (cb40_cfg_port(&cf->cf_listen[i].cl_addr) == port)
			return true;
	for (unsigned i = 0; i < c4->c4_gw->gw_nown_ports; i++)
		if (c4->c4_gw->gw_own_ports[i] == port)
			return true;
	for (unsigned i = 0; i < GW_CB40_LIS; i++)
		if (c4->c4_lis[i].l4_lis && cb40_port_of(&c4->c4_lis[i].l4_addr) == port)
			return true;
	return false;
}

bool gw_cb40_relay_init(struct gw_cb40 *c4)
{
	struct event_base *base = c4->c4_gw->gw_p.gp_base;

	return !base || (c4->c4_timer = evtimer_new(base, cb40_tick, c4)) != NULL;
}

void gw_cb40_relay_close(struct gw_cb40 *c4)
{
	for (unsigned i = 0; i < GW_CB40_SRV; i++)
		if (c4->c4_srv[i].s4_bev)
			cb40_srv_close(&c4->c4_srv[i]);
	for (unsigned i = 0; i < GW_CB40_REGS; i++)
		if (c4->c4_reg[i].r4_bev)
			bufferevent_free(c4->c4_reg[i].r4_bev);
	for (unsigned i = 0; i < GW_CB40_LIS; i++)
		if (c4->c4_lis[i].l4_lis)
			evconnlistener_free(c4->c4_lis[i].l4_lis);
	if (c4->c4_timer)
		event_free(c4->c4_timer);
}
