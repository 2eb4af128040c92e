// SPDX-License-Identifier: MIT
/*
 * This file contains the NLM grant relay (nlm_grant.h): the way from a
 * server's GRANTED_MSG, already mapped back to its client by nlm_map.c, to
 * that client's NLM service.
 *
 * One slot is one grant: rpcbind lookup of the client's NLM port on a
 * helper thread (libtirpc blocks), then a TCP connection, the call as one
 * record, and the client's RPC reply (void for a _MSG procedure; its real
 * answer, GRANTED_RES, comes back to the gateway as an ordinary call and
 * goes the NLM route to the server).  The slot ends with that reply, an
 * error or GW_NG_TIMEOUT_S.  A grant that does not arrive is no lost
 * lock: the server's lockd sends it again, and the client polls.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "chunking.h"
#include "config.h"
#include "log.h"
#include "lookup.h"
#include "nlm_grant.h"
#include "rpcbind.h"

#define NG_REPLY_MAX	1024	/* a reply to GRANTED_MSG is void: header and verifier */

struct gw_ng_slot {
	struct gw_ng *ngs_ng;
	struct gw_lookup ngs_lk;	/* set up at first use */
	bool ngs_lk_set;
	bool ngs_busy;
	int ngs_rc;			/* the lookup's result: 0, or -1 with ngs_why */
	char ngs_host[48];
	int ngs_family;
	uint32_t ngs_vers, ngs_xid;
	uint16_t ngs_port;
	char ngs_why[192];
	struct bufferevent *ngs_bev;
	size_t ngs_len;			/* record mark included */
	uint8_t ngs_msg[4 + GW_NG_MSG_MAX];
};

struct gw_ng {
	struct event_base *ng_base;
	struct gw_stats *ng_st;
	const struct gw_log *ng_lg;
	gw_ng_getport_fn *ng_getport;
	/* what it carries (gw_ng_set_kind): grants by default */
	uint32_t ng_prog;
	const char *ng_what, *ng_hint;
	enum gw_ctr ng_ok, ng_failed;
	void (*ng_done)(void *arg);	/* a slot came free */
	void *ng_done_arg;
	struct gw_ng_slot ng_slots[GW_NG_SLOTS];
};

struct gw_ng *gw_ng_new(struct event_base *base, struct gw_stats *st, const struct gw_log *lg)
{
	struct gw_ng *ng = calloc(1, sizeof(*ng));

	if (!ng)
		return NULL;
	ng->ng_base = base;
	ng->ng_st = st;
	ng->ng_lg = lg;
	ng->ng_getport = gw_rpcbind_getport;
	gw_ng_set_kind(ng, CFG_PROG_NLM, "grant", "the client gets the lock when it asks again",
		       GW_CTR_NLM_GRANT_RELAYED, GW_CTR_NLM_GRANT_FAILED);
	for (unsigned i = 0; i < GW_NG_SLOTS; i++)
		ng->ng_slots[i].ngs_ng = ng;
	return ng;
}

void gw_ng_free(struct gw_ng *ng)
{
	if (!ng)
		return;
	for (unsigned i = 0; i < GW_NG_SLOTS; i++) {
		struct gw_ng_slot *s = &ng->ng_slots[i];

		if (s->ngs_lk_set)
			gw_lookup_destroy(&s->ngs_lk);
		if (s->ngs_bev)
			bufferevent_free(s->ngs_bev);
	}
	free(ng);
}

void gw_ng_set_getport(struct gw_ng *ng, gw_ng_getport_fn *fn)
{
	ng->ng_getport = fn;
}

void gw_ng_set_kind(struct gw_ng *ng, uint32_t prog, const char *what, const char *hint,
		    enum gw_ctr ok, enum gw_ctr failed)
{
	ng->ng_prog = prog;
	ng->ng_what = what;
	ng->ng_hint = hint;
	ng->ng_ok = ok;
	ng->ng_failed = failed;
}

void gw_ng_set_done(struct gw_ng *ng, void (*fn)(void *arg), void *arg)
{
	ng->ng_done = fn;
	ng->ng_done_arg = arg;
}

unsigned gw_ng_busy(const struct gw_ng *ng)
{
	unsigned n = 0;

	for (unsigned i = 0; i < GW_NG_SLOTS; i++)
		n += ng->ng_slots[i].ngs_busy;
	return n;
}

static void ng_end(struct gw_ng_slot *s, bool ok, const char *why)
{
	struct gw_ng *ng = s->ngs_ng;

	if (ok) {
		gw_stat_inc(ng->ng_st, ng->ng_ok);
		gw_log_client(ng->ng_lg, CFG_LOG_INFO, s->ngs_host, "NLM: %s xid %#x relayed to "
			      "%s (port %u)", ng->ng_what, s->ngs_xid, s->ngs_host, s->ngs_port);
	} else {
		gw_stat_inc(ng->ng_st, ng->ng_failed);
		gw_log_client(ng->ng_lg, CFG_LOG_WARN, s->ngs_host, "NLM: %s xid %#x for %s not "
			      "delivered (%s): %s", ng->ng_what, s->ngs_xid, s->ngs_host, why,
			      ng->ng_hint);
	}
	if (s->ngs_bev)
		bufferevent_free(s->ngs_bev);
	s->ngs_bev = NULL;
	s->ngs_busy = false;
	if (ng->ng_done)
		ng->ng_done(ng->ng_done_arg);
}

/* ---- the client's reply ---- */

static void ng_read(struct bufferevent *bev, void *arg)
{
	struct gw_ng_slot *s = arg;
	struct evbuffer *in = bufferevent_get_input(bev);
	struct rpc_reply_hdr r;
	struct xdr_cur xc;
	struct iovec one;
	const uint8_t *p;
	uint32_t mark, len;

	if (evbuffer_get_length(in) < 4)
		return;
	mark = chk_be32(evbuffer_pullup(in, 4));
	len = mark & 0x7fffffffu;
	if (!(mark & 0x80000000u) || len > NG_REPLY_MAX) {
		ng_end(s, false, "reply not one record of at most 1 KiB");
		return;
	}
	if (evbuffer_get_length(in) < 4 + (size_t)len)
		return;
	p = evbuffer_pullup(in, (ssize_t)(4 + len));
	xdr_cur_init_buf(&xc, &one, p + 4, len);
	if (!rpc_reply_decode(&xc, &r) || r.rr_xid != s->ngs_xid)
		ng_end(s, false, "reply undecodable or of another xid");
	else if (r.rr_stat != RPC_MSG_ACCEPTED || r.rr_accept_stat != RPC_SUCCESS)
		ng_end(s, false, "refused by the client's NLM service");
	else
		ng_end(s, true, NULL);
}

static void ng_event(struct bufferevent *bev, short what, void *arg)
{
	struct gw_ng_slot *s = arg;

	(void)bev;
	if (what & BEV_EVENT_CONNECTED)
		return;
	ng_end(s, false, (what & BEV_EVENT_TIMEOUT) ? "timed out" :
			 (what & BEV_EVENT_EOF) ? "closed before its reply" : "connection failed");
}

/* ---- lookup, then connect ---- */

static void ng_lookup_work(void *arg)
{
	struct gw_ng_slot *s = arg;

	s->ngs_rc = s->ngs_ng->ng_getport(s->ngs_host, s->ngs_family, s->ngs_ng->ng_prog, s->ngs_vers,
				       &s->ngs_port, s->ngs_why, sizeof(s->ngs_why));
}

static bool ng_connect(struct gw_ng_slot *s)
{
	struct timeval tv = { GW_NG_TIMEOUT_S, 0 };
	struct sockaddr_storage ss;
	socklen_t sl;

	memset(&ss, 0, sizeof(ss));
	if (s->ngs_family == AF_INET6) {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;

		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(s->ngs_port);
		if (inet_pton(AF_INET6, s->ngs_host, &a6->sin6_addr) != 1)
			return false;
		sl = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&ss;

		a4->sin_family = AF_INET;
		a4->sin_port = htons(s->ngs_port);
		if (inet_pton(AF_INET, s->ngs_host, &a4->sin_addr) != 1)
			return false;
		sl = sizeof(*a4);
	}
	s->ngs_bev = bufferevent_socket_new(s->ngs_ng->ng_base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (!s->ngs_bev)
		return false;
	bufferevent_setcb(s->ngs_bev, ng_read, NULL, ng_event, s);
	bufferevent_set_timeouts(s->ngs_bev, &tv, &tv);
	bufferevent_enable(s->ngs_bev, EV_READ | EV_WRITE);
	if (bufferevent_socket_connect(s->ngs_bev, (struct sockaddr *)&ss, (int)sl) < 0)
		return false;
	return bufferevent_write(s->ngs_bev, s->ngs_msg, s->ngs_len) == 0;
}

static void ng_lookup_done(void *arg)
{
	struct gw_ng_slot *s = arg;

	if (s->ngs_rc != 0) {
		ng_end(s, false, s->ngs_why[0] ? s->ngs_why : "rpcbind names no such service");
		return;
	}
	/* libevent may already have reported a failed connect (ng_event) */
	if (!ng_connect(s) && s->ngs_busy)
		ng_end(s, false, "cannot connect");
}

/* A slot for a message to host, or NULL (why into *why): one of the
 * GW_NG_SLOTS, and no more than GW_NG_PER_HOST to one host, so that a
 * client whose service takes the call and never answers (GW_NG_TIMEOUT_S
 * each) slows its own grants only, not every client's. */
static struct gw_ng_slot *ng_slot(struct gw_ng *ng, const char *host, const char **why)
{
	struct gw_ng_slot *s = NULL;
	unsigned same = 0;

	for (unsigned i = 0; i < GW_NG_SLOTS; i++) {
		struct gw_ng_slot *t = &ng->ng_slots[i];

		if (!t->ngs_busy)
			s = s ? s : t;
		else
			same += strcmp(t->ngs_host, host) == 0;
	}
	*why = same >= GW_NG_PER_HOST ? "as many on their way to that host as one may have" :
	       !s ? "all slots busy" : NULL;
	return *why ? NULL : s;
}

bool gw_ng_relay(struct gw_ng *ng, const char *host, uint32_t vers, const struct iovec *iov,
		 unsigned niov, size_t len)
{
	const char *why;
	struct gw_ng_slot *s = ng_slot(ng, host, &why);
	size_t off = 4;

	if (s && (len > GW_NG_MSG_MAX || len < 4 || strlen(host) >= sizeof(s->ngs_host)))
		why = "call too long";
	if (why) {
		gw_stat_inc(ng->ng_st, ng->ng_failed);
		gw_log_client(ng->ng_lg, CFG_LOG_WARN, host, "NLM: %s for %s not relayed (%s)",
			      ng->ng_what, host, why);
		return false;
	}
	if (!s->ngs_lk_set &&
	    gw_lookup_init(&s->ngs_lk, ng->ng_base, ng_lookup_work, ng_lookup_done, s) != 0) {
		gw_stat_inc(ng->ng_st, ng->ng_failed);
		return false;
	}
	s->ngs_lk_set = true;
	for (unsigned i = 0; i < niov && off < 4 + len; i++) {
		size_t n = iov[i].iov_len < 4 + len - off ? iov[i].iov_len : 4 + len - off;

		memcpy(s->ngs_msg + off, iov[i].iov_base, n);	/* < 6 KiB, once per grant */
		off += n;
	}
	chk_put_be32(s->ngs_msg, 0x80000000u | (uint32_t)len);	/* one fragment, RFC 5531 11 */
	s->ngs_len = 4 + len;
	s->ngs_xid = chk_be32(s->ngs_msg + 4);
	s->ngs_vers = vers;
	s->ngs_family = strchr(host, ':') ? AF_INET6 : AF_INET;
	snprintf(s->ngs_host, sizeof(s->ngs_host), "%s", host);
	s->ngs_why[0] = '\0';
	s->ngs_port = 0;
	s->ngs_busy = true;
	if (gw_lookup_start(&s->ngs_lk) != 0) {
		ng_end(s, false, "cannot start the rpcbind lookup");
		return false;
	}
	return true;
}
