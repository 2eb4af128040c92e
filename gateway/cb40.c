// SPDX-License-Identifier: MIT
/*
 * This file contains the NFSv4.0 callback relay.  An NFSv4.0 client names
 * its callback service in SETCLIENTID (cb_program, cb_location: RFC 7530
 * 16.33) and the server connects there by itself (RFC 7530 3.3.3); at a
 * rack edge the server usually cannot reach the client.  With
 * v40_callbacks = relay the gateway rewrites cb_location to a TCP listener
 * of its own (the address the server reaches it at: the local address of
 * a connection toward the backend, RFC 5665 universal address) and
 * cb_program to a number of its own per client (the Linux client always
 * says 0x40000000, so the program is what tells clients apart, CB_NULL
 * included); it relays the server's CALLs to the client's original address
 * with the client's program and the same XID, and the REPLY back.
 * passthrough leaves cb_location alone; off clears it, and the server then
 * hands out no delegations (its CB_NULL probe fails at once: nfsd marks
 * the callback path down).
 *
 * The SETCLIENTID rewrite changes lengths inside the record: the call
 * (small) is copied once into a pool buffer, counted in copied_bytes.
 * Callbacks are few and small: each record is copied through one scratch
 * buffer.  Tables are fixed; nothing is allocated per callback but the
 * connections themselves.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/listener.h>

#include "cb40.h"
#include "client.h"
#include "ctx.h"
#include "log.h"
#include "pool.h"

#define GW_CB40_REGS		256	/* clients remembered (SETCLIENTID ids) */
#define GW_CB40_SRV		32	/* server connections to the listener */
#define GW_CB40_PENDING		64	/* callbacks relayed at once */
#define GW_CB40_PER_CLIENT	8	/* of them, per client */
#define GW_CB40_MAX_REC		16384	/* CB_RECALL, CB_GETATTR: a few hundred bytes */
#define GW_CB40_TICK_MS		250
#define GW_CB40_PROG_BASE	0x48000000u	/* transient programs (RFC 5531 A.4) */
#define GW_CB40_ID_MAX		1024	/* NFS4_OPAQUE_LIMIT */
#define GW_CB40_TAG_MAX		1024

struct gw_cb40;

/* A client as SETCLIENTID named it, and the connection to its callback
 * service. */
struct gw_cb40_reg {
	struct gw_cb40 *r4_c4;
	bool r4_used;
	uint64_t r4_idhash;		/* nfs_client_id4 id */
	uint32_t r4_prog;		/* gateway's cb_program for it */
	uint32_t r4_cprog;		/* its own */
	uint64_t r4_clientid;		/* from the reply; 0 before */
	uint64_t r4_stamp;		/* last SETCLIENTID: oldest evicted first */
	struct sockaddr_storage r4_addr;
	socklen_t r4_alen;
	char r4_uaddr[GW_CB40_UADDR_MAX];
	char r4_name[64];		/* client connection that registered it (logs) */
	struct bufferevent *r4_bev;	/* to its callback service; NULL: none */
	bool r4_up;			/* r4_bev connected */
	unsigned r4_npend;
};

/* A connection of the server to the listener. */
struct gw_cb40_srv {
	struct gw_cb40 *s4_c4;
	struct bufferevent *s4_bev;	/* NULL: slot free */
	char s4_name[GW_CB40_UADDR_MAX];
};

struct gw_cb40_pend {
	struct gw_cb40_srv *p4_srv;	/* NULL: slot free */
	struct gw_cb40_reg *p4_reg;
	uint32_t p4_xid;
	uint64_t p4_deadline_ms;
};

struct gw_cb40 {
	struct gw_ctx *c4_gw;
	struct evconnlistener *c4_lis;
	bool c4_lis_failed;		/* logged once; no retry */
	uint16_t c4_port;
	uint32_t c4_next_prog;
	uint64_t c4_clock;
	struct event *c4_timer;
	struct gw_cb40_reg c4_reg[GW_CB40_REGS];
	struct gw_cb40_srv c4_srv[GW_CB40_SRV];
	struct gw_cb40_pend c4_pend[GW_CB40_PENDING];
	uint8_t c4_rec[4 + GW_CB40_MAX_REC];	/* one record, its mark first */
};

/* ---- pure pieces ---- */

static bool cb40_string(struct xdr_cur *xc, char *out, size_t cap)
{
	struct xdr_span sp;

	if (!xdr_get_opaque(xc, &sp, (uint32_t)cap - 1))
		return false;
	xdr_span_copy(xc, &sp, out, cap - 1);
	out[sp.xs_len] = '\0';
	return strlen(out) == sp.xs_len;
}

bool gw_cb40_parse_setclientid(const struct iovec *iov, unsigned niov, struct gw_cb40_sci *s)
{
	uint8_t id[GW_CB40_ID_MAX];
	struct rpc_call_hdr h;
	struct xdr_span tag, sp;
	struct xdr_cur xc;
	uint32_t minor, nops, op;

	memset(s, 0, sizeof(*s));
	xdr_cur_init(&xc, iov, niov);
	/* COMPOUND4args: tag, minorversion, argarray; SETCLIENTID4args:
	 * verifier, id, cb_program, cb_location (r_netid, r_addr), ident */
	if (!rpc_call_decode(&xc, &h) || !xdr_get_opaque(&xc, &tag, GW_CB40_TAG_MAX) ||
	    !xdr_get_u32(&xc, &minor) || minor != 0 || !xdr_get_u32(&xc, &nops) || nops < 1 ||
	    !xdr_get_u32(&xc, &op) || op != CHK_OP_SETCLIENTID || !xdr_skip(&xc, 8) ||
	    !xdr_get_opaque(&xc, &sp, GW_CB40_ID_MAX))
		return false;
	xdr_span_copy(&xc, &sp, id, sizeof(id));
	s->sc4_idhash = 14695981039346656037ull;
	for (size_t i = 0; i < sp.xs_len; i++)
		s->sc4_idhash = (s->sc4_idhash ^ id[i]) * 1099511628211ull;
	s->sc4_prog_pos = xdr_pos(&xc);
	if (!xdr_get_u32(&xc, &s->sc4_prog))
		return false;
	s->sc4_loc_pos = xdr_pos(&xc);
	if (!cb40_string(&xc, s->sc4_netid, sizeof(s->sc4_netid)) ||
	    !cb40_string(&xc, s->sc4_addr, sizeof(s->sc4_addr)))
		return false;
	s->sc4_loc_end = xdr_pos(&xc);
	return xdr_get_u32(&xc, &s->sc4_ident);
}

size_t gw_cb40_rewrite(const struct gw_rec *r, const struct gw_cb40_sci *s, uint32_t prog,
		       const char *netid, const char *uaddr, uint8_t *out, size_t cap)
{
	size_t tail = r->rcd_len - s->sc4_loc_end;
	struct xdr_enc xe;

	if (s->sc4_loc_pos > cap || s->sc4_loc_end > r->rcd_len)
		return 0;
	gw_rec_copyout(r, 0, out, s->sc4_loc_pos);
	chk_put_be32(out + s->sc4_prog_pos, prog);
	xdr_enc_init(&xe, out + s->sc4_loc_pos, cap - s->sc4_loc_pos);
	if (!xdr_put_opaque(&xe, netid, (uint32_t)strlen(netid)) ||
	    !xdr_put_opaque(&xe, uaddr, (uint32_t)strlen(uaddr)) ||
	    s->sc4_loc_pos + xe.xe_len + tail > cap)
		return 0;
	gw_rec_copyout(r, s->sc4_loc_end, out + s->sc4_loc_pos + xe.xe_len, tail);
	return s->sc4_loc_pos + xe.xe_len + tail;
}

bool gw_cb40_uaddr_parse(const char *netid, const char *uaddr, struct sockaddr_storage *ss,
			 socklen_t *len)
{
	char host[GW_CB40_UADDR_MAX];
	const char *p2 = strrchr(uaddr, '.'), *p1;
	unsigned hi, lo;
	int n = 0;

	memset(ss, 0, sizeof(*ss));
	if (!p2 || p2 == uaddr)
		return false;
	for (p1 = p2 - 1; p1 > uaddr && *p1 != '.'; p1--)
		;
	if (*p1 != '.' || (size_t)(p1 - uaddr) >= sizeof(host) ||
	    sscanf(p1, ".%3u.%3u%n", &hi, &lo, &n) != 2 || p1[n] || hi > 255 || lo > 255)
		return false;
	memcpy(host, uaddr, (size_t)(p1 - uaddr));
	host[p1 - uaddr] = '\0';
	if (!strcmp(netid, "tcp")) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)(hi << 8 | lo));
		*len = sizeof(*sin);
		return inet_pton(AF_INET, host, &sin->sin_addr) == 1;
	}
	if (!strcmp(netid, "tcp6")) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)(hi << 8 | lo));
		*len = sizeof(*sin6);
		return inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1;
	}
	return false;
}

bool gw_cb40_uaddr_fmt(const struct sockaddr *sa, char *netid, char *uaddr)
{
	char host[INET6_ADDRSTRLEN];
	const void *a;
	uint16_t port;

	if (sa->sa_family == AF_INET) {
		a = &((const struct sockaddr_in *)sa)->sin_addr;
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
		strcpy(netid, "tcp");
	} else if (sa->sa_family == AF_INET6) {
		a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
		strcpy(netid, "tcp6");
	} else {
		return false;
	}
	if (!inet_ntop(sa->sa_family, a, host, sizeof(host)))
		return false;
	snprintf(uaddr, GW_CB40_UADDR_MAX, "%s.%u.%u", host, port >> 8, port & 0xff);
	return true;
}

bool gw_cb40_parse_reply(const struct iovec *iov, unsigned niov, uint64_t *clientid)
{
	struct rpc_reply_hdr rh;
	struct xdr_span tag;
	struct xdr_cur xc;
	uint32_t status, nres, op, opstatus;

	xdr_cur_init(&xc, iov, niov);
	/* COMPOUND4res: status, tag, resarray; SETCLIENTID4resok: clientid, verifier */
	return rpc_reply_decode(&xc, &rh) && rh.rr_stat == RPC_MSG_ACCEPTED &&
	       rh.rr_accept_stat == RPC_SUCCESS && xdr_get_u32(&xc, &status) && status == 0 &&
	       xdr_get_opaque(&xc, &tag, GW_CB40_TAG_MAX) && xdr_get_u32(&xc, &nres) && nres >= 1 &&
	       xdr_get_u32(&xc, &op) && op == CHK_OP_SETCLIENTID && xdr_get_u32(&xc, &opstatus) &&
	       opstatus == 0 && xdr_get_u64(&xc, clientid);
}

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

/* ---- client side: the connection to its callback service ---- */

static void cb40_reg_close(struct gw_cb40_reg *rg, enum gw_ctr why)
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
		cb40_reg_close(rg, GW_CTR_CB40_FAIL_BAD);
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
	gw_log_client(LG(gw), CFG_LOG_WARN, rg->r4_uaddr,
		      "v4.0 callback service of %s at %s: %s", rg->r4_name, rg->r4_uaddr,
		      !rg->r4_up ? "unreachable" : (what & BEV_EVENT_EOF) ? "closed" : "lost");
	cb40_reg_close(rg, GW_CTR_CB40_FAIL_CONNECT);
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

static struct gw_cb40_reg *cb40_reg_by_prog(struct gw_cb40 *c4, uint32_t prog)
{
	for (unsigned i = 0; i < GW_CB40_REGS; i++)
		if (c4->c4_reg[i].r4_used && c4->c4_reg[i].r4_prog == prog)
			return &c4->c4_reg[i];
	return NULL;
}

static struct gw_cb40_pend *cb40_pend_slot(struct gw_cb40 *c4)
{
	for (unsigned i = 0; i < GW_CB40_PENDING; i++)
		if (!c4->c4_pend[i].p4_srv)
			return &c4->c4_pend[i];
	return NULL;
}

/* One CALL of the server (in c4_rec): to its client, or answered here. */
static void cb40_srv_call(struct gw_cb40 *c4, struct gw_cb40_srv *sv, size_t len)
{
	struct gw_ctx *gw = c4->c4_gw;
	struct iovec iov = { c4->c4_rec + 4, len };
	struct gw_cb40_pend *p;
	struct gw_cb40_reg *rg;
	struct chk_cb_msg m;
	enum gw_ctr why;

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
	why = GW_CTR_CB40_FAIL_FULL;
	p = rg->r4_npend < GW_CB40_PER_CLIENT ? cb40_pend_slot(c4) : NULL;
	if (p && !cb40_reg_connect(c4, rg)) {
		why = GW_CTR_CB40_FAIL_CONNECT;
		p = NULL;
	}
	if (!p) {
		gw_stat_inc(ST(gw), why);
		gw_log_server(LG(gw), CFG_LOG_WARN, sv->s4_name,
			      "v4.0 callback xid %#x proc %u for %s: %s: SYSTEM_ERR", m.cm_xid,
			      m.cm_proc, rg->r4_uaddr,
			      why == GW_CTR_CB40_FAIL_FULL ? "too many pending" : "cannot connect");
		cb40_answer(sv, m.cm_xid, RPC_SYSTEM_ERR);
		return;
	}
	/* The client's own program; the XID stays the server's. */
	chk_put_be32(c4->c4_rec + 4 + 12, rg->r4_cprog);
	*p = (struct gw_cb40_pend){ .p4_srv = sv, .p4_reg = rg, .p4_xid = m.cm_xid,
				    .p4_deadline_ms = gw_now_ms() + GW_CB40_TIMEOUT_MS };
	rg->r4_npend++;
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

static void cb40_accept(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
			int salen, void *arg)
{
	struct gw_cb40 *c4 = arg;
	struct gw_cb40_srv *sv = NULL;
	char netid[GW_CB40_NETID_MAX];

	(void)lis;
	(void)salen;
	for (unsigned i = 0; i < GW_CB40_SRV && !sv; i++)
		if (!c4->c4_srv[i].s4_bev)
			sv = &c4->c4_srv[i];
	if (sv)
		sv->s4_bev = bufferevent_socket_new(c4->c4_gw->gw_p.gp_base, fd,
						    BEV_OPT_CLOSE_ON_FREE);
	if (!sv || !sv->s4_bev) {
		gw_stat_inc(ST(c4->c4_gw), GW_CTR_CB40_FAIL_FULL);
		gw_warn(LG(c4->c4_gw), "v4.0 callback listener: no room for another server "
			"connection: closed");
		close(fd);
		return;
	}
	sv->s4_c4 = c4;
	if (!gw_cb40_uaddr_fmt(sa, netid, sv->s4_name))
		snprintf(sv->s4_name, sizeof(sv->s4_name), "server");
	bufferevent_setcb(sv->s4_bev, cb40_srv_read, NULL, cb40_srv_event, sv);
	bufferevent_setwatermark(sv->s4_bev, EV_READ, 0, 4 * (4 + GW_CB40_MAX_REC));
	bufferevent_enable(sv->s4_bev, EV_READ | EV_WRITE);
	gw_info(LG(c4->c4_gw), "v4.0 callback listener: server connected from %s", sv->s4_name);
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

/* ---- the context's side ---- */

struct gw_cb40 *gw_cb40_new(struct gw_ctx *gw)
{
	struct gw_cb40 *c4 = calloc(1, sizeof(*c4));
	uint32_t r;

	if (!c4)
		return NULL;
	c4->c4_gw = gw;
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)gw_now_ms();
	c4->c4_next_prog = r & 0xfffff;
	for (unsigned i = 0; i < GW_CB40_REGS; i++)
		c4->c4_reg[i].r4_c4 = c4;
	if (gw->gw_p.gp_base && !(c4->c4_timer = evtimer_new(gw->gw_p.gp_base, cb40_tick, c4))) {
		free(c4);
		return NULL;
	}
	return c4;
}

void gw_cb40_free(struct gw_cb40 *c4)
{
	if (!c4)
		return;
	for (unsigned i = 0; i < GW_CB40_SRV; i++)
		if (c4->c4_srv[i].s4_bev)
			cb40_srv_close(&c4->c4_srv[i]);
	for (unsigned i = 0; i < GW_CB40_REGS; i++)
		if (c4->c4_reg[i].r4_bev)
			bufferevent_free(c4->c4_reg[i].r4_bev);
	if (c4->c4_lis)
		evconnlistener_free(c4->c4_lis);
	if (c4->c4_timer)
		event_free(c4->c4_timer);
	free(c4);
}

/* The listener, opened at the first SETCLIENTID to relay: every address
 * (dual stack where the host has IPv6), a port of the kernel's choice. */
static bool cb40_listen(struct gw_cb40 *c4)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	struct event_base *base = c4->c4_gw->gw_p.gp_base;
	const unsigned fl = LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (c4->c4_lis || c4->c4_lis_failed || !base)
		return c4->c4_lis != NULL;
	c4->c4_lis = evconnlistener_new_bind(base, cb40_accept, c4, fl, 16,
					     (struct sockaddr *)&a6, sizeof(a6));
	if (!c4->c4_lis)
		c4->c4_lis = evconnlistener_new_bind(base, cb40_accept, c4, fl, 16,
						     (struct sockaddr *)&a4, sizeof(a4));
	if (!c4->c4_lis ||
	    getsockname(evconnlistener_get_fd(c4->c4_lis), (struct sockaddr *)&ss, &sl) < 0) {
		c4->c4_lis_failed = true;
		gw_err(LG(c4->c4_gw), "v4.0 callback listener: %s: SETCLIENTID left as it is",
		       strerror(errno));
		return false;
	}
	c4->c4_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						      : ((struct sockaddr_in *)&ss)->sin_port);
	gw_info(LG(c4->c4_gw), "v4.0 callback listener on port %u", c4->c4_port);
	return true;
}

/* The address the server reaches us at: the source address the host uses
 * toward the backend (a UDP connect sends nothing), with our port. */
static bool cb40_our_uaddr(struct gw_cb40 *c4, const struct gw_path *pa, char *netid,
			   char *uaddr)
{
	const struct cfg_backend *bk = pa->pa_backend->bk_cfg;
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	bool ok = false;
	int fd;

	if (getaddrinfo(bk->cb_host, "2049", &hints, &ai) != 0 || !ai)
		return false;
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
	    getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			((struct sockaddr_in *)&ss)->sin_port = htons(c4->c4_port);
		else
			((struct sockaddr_in6 *)&ss)->sin6_port = htons(c4->c4_port);
		ok = gw_cb40_uaddr_fmt((struct sockaddr *)&ss, netid, uaddr);
	}
	if (fd >= 0)
		close(fd);
	freeaddrinfo(ai);
	return ok;
}

/* The client's entry (same id: same entry, same program), else a new one
 * in place of the oldest. */
static struct gw_cb40_reg *cb40_register(struct gw_cb40 *c4, const struct gw_cb40_sci *s,
					 const struct sockaddr_storage *ss, socklen_t sl,
					 const char *name)
{
	struct gw_cb40_reg *rg = NULL;

	for (unsigned i = 0; i < GW_CB40_REGS && !rg; i++)
		if (c4->c4_reg[i].r4_used && c4->c4_reg[i].r4_idhash == s->sc4_idhash)
			rg = &c4->c4_reg[i];
	if (!rg) {
		for (unsigned i = 0; i < GW_CB40_REGS; i++)
			if (!rg || !c4->c4_reg[i].r4_used ||
			    (rg->r4_used && c4->c4_reg[i].r4_stamp < rg->r4_stamp))
				rg = &c4->c4_reg[i];
		if (rg->r4_used) {
			gw_stat_inc(ST(c4->c4_gw), GW_CTR_CB40_EVICTED);
			gw_log_client(LG(c4->c4_gw), CFG_LOG_WARN, name,
				      "SETCLIENTID from %s: %u v4.0 clients registered: the oldest "
				      "(callbacks prog %#x to %s) forgotten", name, GW_CB40_REGS,
				      rg->r4_prog, rg->r4_uaddr);
		}
		cb40_reg_close(rg, GW_CTR_CB40_FAIL_FULL);
		/* Free the slot first: the search below must not find the
		 * entry being replaced (it did, and looped for ever). */
		rg->r4_used = false;
		do
			rg->r4_prog = GW_CB40_PROG_BASE + (c4->c4_next_prog++ & 0xffffff);
		while (cb40_reg_by_prog(c4, rg->r4_prog) != NULL);
		rg->r4_used = true;
		rg->r4_idhash = s->sc4_idhash;
		rg->r4_clientid = 0;
	} else if (rg->r4_alen != sl || memcmp(&rg->r4_addr, ss, sl)) {
		cb40_reg_close(rg, GW_CTR_CB40_FAIL_CONNECT);	/* moved: reconnect */
	}
	rg->r4_cprog = s->sc4_prog;
	rg->r4_addr = *ss;
	rg->r4_alen = sl;
	rg->r4_stamp = ++c4->c4_clock;
	snprintf(rg->r4_uaddr, sizeof(rg->r4_uaddr), "%s", s->sc4_addr);
	snprintf(rg->r4_name, sizeof(rg->r4_name), "%s", name);
	return rg;
}

enum cb40_aim { CB40_AIM_NONE, CB40_AIM_GIVEN, CB40_AIM_OWN };

/*
 * Where the relay may connect for a cb_location parsed into ss.  The
 * unspecified address or port 0 names no service (a client that wants no
 * callbacks).  cb_location is the client's own callback service (RFC 7530
 * §16.33), so a host other than the client's address as admitted becomes
 * that address at the named port: a client must not aim the gateway's
 * connections at other hosts.  A client without an address (an adopted
 * socket) keeps what it named.
 */
static enum cb40_aim cb40_aim(const struct gw_client *cl, struct sockaddr_storage *ss,
			      socklen_t *sl)
{
	static const uint8_t v4map[12] = { [10] = 0xff, [11] = 0xff }, zero[16];
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	uint8_t a[16], own[16];
	uint16_t port;

	if (ss->ss_family == AF_INET) {
		memcpy(a, v4map, sizeof(v4map));
		memcpy(a + 12, &sin->sin_addr, 4);
		port = sin->sin_port;
	} else {
		memcpy(a, &sin6->sin6_addr, 16);
		port = sin6->sin6_port;
	}
	if (!port || !memcmp(a, zero, 16) || (!memcmp(a, v4map, 12) && !memcmp(a + 12, zero, 4)))
		return CB40_AIM_NONE;
	if (!gw_client_src(cl, own) || !memcmp(a, own, 16))
		return CB40_AIM_GIVEN;
	memset(ss, 0, sizeof(*ss));
	if (!memcmp(own, v4map, 12)) {
		sin->sin_family = AF_INET;
		sin->sin_port = port;
		memcpy(&sin->sin_addr, own + 12, 4);
		*sl = sizeof(*sin);
	} else {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		memcpy(&sin6->sin6_addr, own, 16);
		*sl = sizeof(*sin6);
	}
	return CB40_AIM_OWN;
}

/* The new cb_program and cb_location of a SETCLIENTID, or false to leave
 * it as it is. */
static bool cb40_target(struct gw_cb40 *c4, struct gw_call *c, const struct gw_cb40_sci *s,
			uint32_t *prog, char *netid, char *uaddr)
{
	struct gw_ctx *gw = c4->c4_gw;
	enum cfg_v40cb mode = gw->gw_p.gp_cfg->cf_v40_callbacks;
	enum cb40_aim aim = CB40_AIM_GIVEN;
	struct sockaddr_storage ss;
	struct gw_cb40_reg *rg;
	bool parsed = false;
	socklen_t sl;

	if (mode == CFG_V40CB_PASSTHROUGH)
		return false;
	if (mode == CFG_V40CB_RELAY) {
		parsed = gw_cb40_uaddr_parse(s->sc4_netid, s->sc4_addr, &ss, &sl);
		if (parsed)
			aim = cb40_aim(c->ca_cl, &ss, &sl);
	}
	if (mode == CFG_V40CB_OFF || aim == CB40_AIM_NONE) {
		/* nfsd: no address, callback path down at once (no probe) */
		*prog = s->sc4_prog;
		netid[0] = uaddr[0] = '\0';
		gw_stat_inc(ST(gw), GW_CTR_CB40_CLEARED);
		return true;
	}
	if (!parsed || !cb40_listen(c4) || !cb40_our_uaddr(c4, c->ca_path, netid, uaddr)) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_FAIL_UNPARSED);
		gw_log_client(LG(gw), CFG_LOG_WARN, gw_client_name(c->ca_cl),
			      "SETCLIENTID from %s: callback %s %s not relayed: left as it is",
			      gw_client_name(c->ca_cl), s->sc4_netid, s->sc4_addr);
		return false;
	}
	if (aim == CB40_AIM_OWN) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_READDRESSED);
		gw_log_client(LG(gw), CFG_LOG_WARN, gw_client_name(c->ca_cl),
			      "SETCLIENTID from %s: callback host of %s %s is not the client's: "
			      "relayed to the client's own address", gw_client_name(c->ca_cl),
			      s->sc4_netid, s->sc4_addr);
	}
	rg = cb40_register(c4, s, &ss, sl, gw_client_name(c->ca_cl));
	*prog = rg->r4_prog;
	gw_stat_inc(ST(gw), GW_CTR_CB40_REWRITTEN);
	gw_log_client(LG(gw), CFG_LOG_INFO, gw_client_name(c->ca_cl),
		      "SETCLIENTID from %s: callback %s %s prog %#x -> %s %s prog %#x",
		      gw_client_name(c->ca_cl), s->sc4_netid, s->sc4_addr, s->sc4_prog, netid,
		      uaddr, *prog);
	return true;
}

bool gw_cb40_on_call(struct gw_cb40 *c4, struct gw_call *c)
{
	struct gw_ctx *gw = c4->c4_gw;
	struct gw_pool *pool = gw->gw_p.gp_pool;
	char netid[GW_CB40_NETID_MAX], uaddr[GW_CB40_UADDR_MAX];
	struct gw_cb40_sci s;
	struct gw_buf *b;
	uint32_t prog;
	size_t n = 0;

	if (gw->gw_p.gp_cfg->cf_v40_callbacks == CFG_V40CB_PASSTHROUGH)
		return false;
	if (!gw_cb40_parse_setclientid(c->ca_rec.rcd_iov, c->ca_rec.rcd_niov, &s)) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_FAIL_UNPARSED);
		return false;
	}
	if (!cb40_target(c4, c, &s, &prog, netid, uaddr))
		return false;
	b = gw_buf_get(pool);
	if (b)
		n = gw_cb40_rewrite(&c->ca_rec, &s, prog, netid, uaddr, b->gb_data, b->gb_size);
	if (!n) {
		gw_stat_inc(ST(gw), GW_CTR_CB40_FAIL_FULL);
		gw_log_client(LG(gw), CFG_LOG_WARN, gw_client_name(c->ca_cl),
			      "SETCLIENTID from %s: no buffer to rewrite it: left as it is",
			      gw_client_name(c->ca_cl));
		if (b)
			gw_buf_put(pool, b);
		return false;
	}
	b->gb_used = (uint32_t)n;
	gw_rec_release(pool, &c->ca_rec);
	c->ca_rec.rcd_niov = 1;
	c->ca_rec.rcd_len = n;
	c->ca_rec.rcd_iov[0] = (struct iovec){ b->gb_data, n };
	c->ca_rec.rcd_buf[0] = b;
	gw_stat_add(ST(gw), GW_CTR_BYTES_COPIED, n);
	return true;
}

void gw_cb40_on_reply(struct gw_cb40 *c4, struct gw_call *c, const struct iovec *iov,
		      unsigned niov)
{
	struct gw_ctx *gw = c4->c4_gw;
	struct gw_cb40_sci s;
	uint64_t clientid;

	if (gw->gw_p.gp_cfg->cf_v40_callbacks != CFG_V40CB_RELAY ||
	    !gw_cb40_parse_reply(iov, niov, &clientid) ||
	    !gw_cb40_parse_setclientid(c->ca_rec.rcd_iov, c->ca_rec.rcd_niov, &s))
		return;
	for (unsigned i = 0; i < GW_CB40_REGS; i++) {
		struct gw_cb40_reg *rg = &c4->c4_reg[i];

		if (rg->r4_used && rg->r4_prog == s.sc4_prog && rg->r4_clientid != clientid) {
			rg->r4_clientid = clientid;
			gw_log_client(LG(gw), CFG_LOG_INFO, gw_client_name(c->ca_cl),
				      "clientid %#llx: callbacks prog %#x relayed to %s",
				      (unsigned long long)clientid, rg->r4_prog, rg->r4_uaddr);
		}
	}
}
