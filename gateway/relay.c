// SPDX-License-Identifier: MIT
/*
 * This file contains the glue of the NFSv4.1 backchannel relay: what the
 * gateway does with a server's callback CALL (gw_cb_call, from a
 * transport), with a client's REPLY to it, and with the session bindings
 * it learns from the calls and replies it carries.  The pure pieces (the
 * decoders, the session map, the relay table) are in callback.c.
 *
 * A callback goes to its client as an output item of its own (GW_OUT_CALLBACK)
 * held in one of GW_CB_PENDING output slots allocated with the relay: a
 * copy into one pool buffer, so the server's receive buffer is independent
 * of how fast the client reads.  The slot is freed when the item was
 * written or the client closed; the relay table entry, when the client
 * answered, the callback timed out or the client closed.  The client sees
 * the callback under a gateway XID unique on its connection.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <event2/event.h>

#include "callback.h"
#include "chunking.h"
#include "client.h"
#include "ctx.h"
#include "log.h"
#include "pool.h"

#define GW_CB_SESSIONS		1024	/* sessions remembered */
#define GW_CB_PENDING		64	/* callbacks relayed at once (nfsd: 2 per connection) */
#define GW_CB_TICK_MS		250

/* A callback CALL on its way to a client. */
struct gw_cb_out {
	struct gw_out cbo_out;		/* first: gw_relay_out_done finds the slot by it */
	struct iovec cbo_iov;
	struct gw_buf *cbo_buf;		/* the copy; NULL: slot free */
	struct gw_client *cbo_cl;
};

struct gw_relay {
	struct gw_ctx *ry_gw;
	struct gw_cb_sessions *ry_cbs;
	struct gw_cb_relay *ry_cbr;
	struct event *ry_timer;		/* callback timeouts, armed while any is pending */
	struct gw_cb_out ry_out[GW_CB_PENDING];
};

static void gw_relay_tick(evutil_socket_t fd, short what, void *arg);

struct gw_relay *gw_relay_new(struct gw_ctx *gw)
{
	struct gw_relay *r = calloc(1, sizeof(*r));
	uint32_t first;

	if (!r)
		return NULL;
	r->ry_gw = gw;
	if (getrandom(&first, sizeof(first), 0) != sizeof(first))
		first = (uint32_t)gw_now_ms() * 2246822519u;
	r->ry_cbs = gw_cbs_new(GW_CB_SESSIONS);
	r->ry_cbr = gw_cbr_new(GW_CB_PENDING, first);
	if (!r->ry_cbs || !r->ry_cbr)
		goto err;
	if (gw->gw_p.gp_base && !(r->ry_timer = evtimer_new(gw->gw_p.gp_base, gw_relay_tick, r)))
		goto err;
	for (unsigned i = 0; i < GW_CB_PENDING; i++)
		r->ry_out[i].cbo_out.ou_kind = GW_OUT_CALLBACK;
	return r;
err:
	gw_relay_free(r);
	return NULL;
}

static void gw_relay_out_free(struct gw_relay *r, struct gw_cb_out *so)
{
	gw_buf_put(r->ry_gw->gw_p.gp_pool, so->cbo_buf);
	so->cbo_buf = NULL;
	so->cbo_cl = NULL;
}

void gw_relay_free(struct gw_relay *r)
{
	struct gw_cb_pend *cp;

	if (!r)
		return;
	/* Callbacks still pending: their server CALLs are released (no reply:
	 * the connections are going) before the transports go. */
	while (r->ry_cbr && (cp = gw_cbr_first_of(r->ry_cbr, NULL))) {
		struct gw_path *pa = cp->cbp_path;
		void *h = cp->cbp_handle;

		gw_cbr_remove(r->ry_cbr, cp);
		gw_path_cb_reply(pa, h, NULL, 0);
	}
	for (unsigned i = 0; i < GW_CB_PENDING; i++)
		if (r->ry_out[i].cbo_buf)
			gw_relay_out_free(r, &r->ry_out[i]);
	if (r->ry_timer)
		event_free(r->ry_timer);
	gw_cbr_free(r->ry_cbr);
	gw_cbs_free(r->ry_cbs);
	free(r);
}

static void gw_cb_sid_str(const uint8_t *sid, char *out)
{
	for (unsigned i = 0; i < GW_CB_SESSIONID_LEN; i++)
		snprintf(out + 2 * i, 3, "%02x", sid[i]);
}

/* Answer the server's CALL by ourselves: an accepted reply with no results
 * (SUCCESS for CB_NULL, SYSTEM_ERR when the callback cannot be delivered). */
static void gw_cb_answer(struct gw_path *pa, void *handle, uint32_t sxid, uint32_t accept_stat)
{
	struct rpc_reply_hdr st = { .rr_stat = RPC_MSG_ACCEPTED, .rr_accept_stat = accept_stat };
	uint8_t buf[64];
	struct xdr_enc xe;
	struct iovec iov;

	xdr_enc_init(&xe, buf, sizeof(buf));
	if (!rpc_local_reply(&xe, sxid, &st)) {
		gw_path_cb_reply(pa, handle, NULL, 0);
		return;
	}
	iov = (struct iovec){ buf, xe.xe_len };
	gw_path_cb_reply(pa, handle, &iov, 1);
}

static void gw_cb_answer_pend(struct gw_relay *r, struct gw_cb_pend *cp, uint32_t accept_stat)
{
	struct gw_path *pa = cp->cbp_path;
	void *h = cp->cbp_handle;
	uint32_t sxid = cp->cbp_sxid;

	gw_cbr_remove(r->ry_cbr, cp);
	gw_cb_answer(pa, h, sxid, accept_stat);
}

static void gw_relay_tick(evutil_socket_t fd, short what, void *arg)
{
	struct gw_relay *r = arg;
	struct gw_ctx *gw = r->ry_gw;
	struct timeval tv = { 0, GW_CB_TICK_MS * 1000 };
	uint64_t now = gw_now_ms();
	struct gw_cb_pend *cp;

	(void)fd;
	(void)what;
	while ((cp = gw_cbr_first_expired(r->ry_cbr, now))) {
		gw_stat_inc(ST(gw), GW_CTR_CB_TIMEOUT);
		gw_log_client(LG(gw), CFG_LOG_WARN, gw_client_name(cp->cbp_conn),
			      "callback xid %#x (client xid %#x): no reply within %u ms: SYSTEM_ERR",
			      cp->cbp_sxid, cp->cbp_cxid, GW_CB_TIMEOUT_MS);
		gw_cb_answer_pend(r, cp, RPC_SYSTEM_ERR);
	}
	if (gw_cbr_count(r->ry_cbr) > 0)
		evtimer_add(r->ry_timer, &tv);
}

/* The client that owns the callback's session, or NULL after answering
 * the server by ourselves (CB_NULL, no session, no owner). */
static struct gw_client *gw_cb_route(struct gw_relay *r, struct gw_path *pa, void *handle,
				     const struct chk_cb_msg *m, char *sidstr)
{
	struct gw_ctx *gw = r->ry_gw;
	struct gw_client *owner;

	if (m->cm_proc == 0) {
		/* CB_NULL: the server probes the path it sees, which ends at the
		 * gateway; nothing to deliver. */
		gw_stat_inc(ST(gw), GW_CTR_CB_NULL_LOCAL);
		gw_debug(LG(gw), "callback xid %#x prog %#x: CB_NULL answered", m->cm_xid, m->cm_prog);
		gw_cb_answer(pa, handle, m->cm_xid, RPC_SUCCESS);
		return NULL;
	}
	if (!m->cm_has_sid) {
		gw_stat_inc(ST(gw), GW_CTR_CB_NO_OWNER);
		gw_log_server(LG(gw), CFG_LOG_WARN, pa->pa_name,
			      "callback xid %#x prog %#x proc %u (minor version %u): no CB_SEQUENCE, "
			      "no session to route by: SYSTEM_ERR", m->cm_xid, m->cm_prog, m->cm_proc,
			      m->cm_minorversion);
		gw_cb_answer(pa, handle, m->cm_xid, RPC_SYSTEM_ERR);
		return NULL;
	}
	gw_cb_sid_str(m->cm_sid, sidstr);
	owner = gw_cbs_owner(r->ry_cbs, m->cm_sid);
	if (!owner) {
		gw_stat_inc(ST(gw), GW_CTR_CB_NO_OWNER);
		gw_log_server(LG(gw), CFG_LOG_WARN, pa->pa_name,
			      "callback xid %#x: session %s has no client connection: SYSTEM_ERR",
			      m->cm_xid, sidstr);
		gw_cb_answer(pa, handle, m->cm_xid, RPC_SYSTEM_ERR);
	}
	return owner;
}

static struct gw_cb_out *gw_relay_out_slot(struct gw_relay *r)
{
	for (unsigned i = 0; i < GW_CB_PENDING; i++)
		if (!r->ry_out[i].cbo_buf)
			return &r->ry_out[i];
	return NULL;
}

void gw_cb_call(struct gw_path *pa, void *handle, const struct iovec *msg, unsigned niov)
{
	struct gw_ctx *gw = pa->pa_gw;
	struct gw_relay *r = gw->gw_relay;
	struct gw_pool *pool = gw->gw_p.gp_pool;
	struct gw_cb_out *so = NULL;
	struct gw_cb_pend *cp = NULL;
	struct gw_buf *b = NULL;
	struct gw_client *owner;
	struct chk_cb_msg m;
	char sidstr[2 * GW_CB_SESSIONID_LEN + 1];
	size_t len = 0, off = 0;

	if (!r) {		/* gateway stopping: the relay is gone */
		gw_path_cb_reply(pa, handle, NULL, 0);
		return;
	}
	gw_stat_inc(ST(gw), GW_CTR_CB_CALLS);
	for (unsigned i = 0; i < niov; i++)
		len += msg[i].iov_len;
	if (!chk_cb_parse_call(msg, niov, &m)) {
		gw_stat_inc(ST(gw), GW_CTR_CB_BAD);
		gw_log_server(LG(gw), CFG_LOG_ERR, pa->pa_name,
			      "path %s: callback of %zu bytes is not an RPC call: dropped",
			      pa->pa_name, len);
		gw_path_cb_reply(pa, handle, NULL, 0);
		return;
	}
	owner = gw_cb_route(r, pa, handle, &m, sidstr);
	if (!owner)
		return;
	if (len > gw_pool_buf_size(pool) || !(so = gw_relay_out_slot(r)) || !(b = gw_buf_get(pool)) ||
	    !(cp = gw_cbr_add(r->ry_cbr, owner, m.cm_xid, handle, pa,
			      gw_now_ms() + GW_CB_TIMEOUT_MS))) {
		gw_stat_inc(ST(gw), GW_CTR_CB_FAILED);
		gw_log_server(LG(gw), CFG_LOG_ERR, pa->pa_name,
			      "callback xid %#x (%zu bytes) for %s: no %s: SYSTEM_ERR", m.cm_xid, len,
			      gw_client_name(owner), !so ? "output slot" : !b ? "buffer" : "relay slot");
		if (b)
			gw_buf_put(pool, b);
		gw_cb_answer(pa, handle, m.cm_xid, RPC_SYSTEM_ERR);
		return;
	}
	for (unsigned i = 0; i < niov; i++) {
		memcpy(b->gb_data + off, msg[i].iov_base, msg[i].iov_len);
		off += msg[i].iov_len;
	}
	b->gb_used = (uint32_t)len;
	so->cbo_buf = b;
	so->cbo_cl = owner;
	so->cbo_iov = (struct iovec){ b->gb_data, len };
	gw_out_set(&so->cbo_out, &so->cbo_iov, 1, cp->cbp_cxid);
	owner->gcl_ncalls++;		/* on its way: counted against the client's cap */
	gw_log_server(LG(gw), CFG_LOG_INFO, pa->pa_name,
		      "callback xid %#x (session %s, %zu bytes) -> client %s as xid %#x",
		      m.cm_xid, sidstr, len, gw_client_name(owner), cp->cbp_cxid);
	gw_client_deliver(owner, &so->cbo_out);
	if (r->ry_timer && !evtimer_pending(r->ry_timer, NULL)) {
		struct timeval tv = { 0, GW_CB_TICK_MS * 1000 };

		evtimer_add(r->ry_timer, &tv);
	}
}

void gw_relay_out_done(struct gw_relay *r, struct gw_out *o)
{
	struct gw_cb_out *so = (struct gw_cb_out *)o;	/* cbo_out is the first member */
	struct gw_client *cl = so->cbo_cl;

	gw_relay_out_free(r, so);
	cl->gcl_ncalls--;
	cl->gcl_ops->cop_update(cl->gcl_arg);
}

void gw_relay_on_reply(struct gw_relay *r, struct gw_client *cl, struct gw_rec *rec, uint32_t xid)
{
	struct gw_ctx *gw = r->ry_gw;
	struct gw_cb_pend *cp = gw_cbr_find(r->ry_cbr, cl, xid);
	struct gw_path *pa;
	void *h;
	uint32_t sxid;
	int rc;

	if (!cp) {
		gw_stat_inc(ST(gw), GW_CTR_NOT_A_CALL);
		gw_log_client(LG(gw), CFG_LOG_INFO, gw_client_name(cl),
			      "xid %#x from %s: REPLY to no pending callback: dropped", xid,
			      gw_client_name(cl));
		gw_rec_release(gw->gw_p.gp_pool, rec);
		return;
	}
	pa = cp->cbp_path;
	h = cp->cbp_handle;
	sxid = cp->cbp_sxid;
	gw_cbr_remove(r->ry_cbr, cp);
	gw_rec_put_be32(rec, 0, sxid);
	rc = gw_path_cb_reply(pa, h, rec->rcd_iov, rec->rcd_niov);
	if (rc == 0) {
		gw_stat_inc(ST(gw), GW_CTR_CB_RELAYED);
		gw_log_client(LG(gw), CFG_LOG_INFO, gw_client_name(cl),
			      "callback xid %#x: reply (%zu bytes) from %s relayed", sxid, rec->rcd_len,
			      gw_client_name(cl));
	} else {
		gw_stat_inc(ST(gw), GW_CTR_CB_FAILED);
		gw_log_client(LG(gw), CFG_LOG_ERR, gw_client_name(cl),
			      "callback xid %#x: reply (%zu bytes) from %s not sent: %s", sxid,
			      rec->rcd_len, gw_client_name(cl), strerror(-rc));
	}
	gw_rec_release(gw->gw_p.gp_pool, rec);
}

/* A COMPOUND reply to a client: CREATE_SESSION or BIND_CONN_TO_SESSION
 * giving this connection a session's back channel. */
void gw_relay_learn_reply(struct gw_relay *r, struct gw_call *c, const struct iovec *iov,
			  unsigned niov)
{
	struct gw_ctx *gw = r->ry_gw;
	uint8_t sid[GW_CB_SESSIONID_LEN];
	char sidstr[2 * GW_CB_SESSIONID_LEN + 1];

	if (!chk_cb_parse_bind_reply(iov, niov, sid) ||
	    !gw_cbs_bind(r->ry_cbs, sid, c->ca_cl, gw_client_key(c->ca_cl)))
		return;
	gw_stat_inc(ST(gw), GW_CTR_CB_SESSIONS_BOUND);
	gw_cb_sid_str(sid, sidstr);
	gw_log_client(LG(gw), CFG_LOG_INFO, gw_client_name(c->ca_cl),
		      "session %s: back channel on client %s", sidstr, gw_client_name(c->ca_cl));
}

/* SEQUENCE from a client while some session has lost its connection: the
 * same client back on a new connection takes its session again. */
void gw_relay_learn_call(struct gw_relay *r, struct gw_call *c)
{
	struct gw_ctx *gw = r->ry_gw;
	uint8_t sid[GW_CB_SESSIONID_LEN];
	char sidstr[2 * GW_CB_SESSIONID_LEN + 1];

	if (gw_cbs_ownerless(r->ry_cbs) == 0 ||
	    !chk_cb_parse_sequence(c->ca_rec.rcd_iov, c->ca_rec.rcd_niov, sid) ||
	    !gw_cbs_seen(r->ry_cbs, sid, c->ca_cl, c->ca_client))
		return;
	gw_stat_inc(ST(gw), GW_CTR_CB_SESSIONS_BOUND);
	gw_cb_sid_str(sid, sidstr);
	gw_log_client(LG(gw), CFG_LOG_INFO, gw_client_name(c->ca_cl),
		      "session %s: back channel back on client %s (same client, new connection)",
		      sidstr, gw_client_name(c->ca_cl));
}

void gw_relay_path_gone(struct gw_relay *r, struct gw_path *pa)
{
	struct gw_ctx *gw = r->ry_gw;
	struct gw_cb_pend *cp;

	/* The path's transport is going, and with it every handle of its
	 * server CALLs (the backchannel's receive buffers): answer SYSTEM_ERR
	 * while they are valid, so that neither the client's late REPLY nor
	 * the timeout reaches a freed handle, or a new transport in the same
	 * path slot. */
	while ((cp = gw_cbr_first_of_path(r->ry_cbr, pa))) {
		gw_stat_inc(ST(gw), GW_CTR_CB_FAILED);
		gw_warn(LG(gw), "callback xid %#x (client xid %#x): path %s going away: SYSTEM_ERR",
			cp->cbp_sxid, cp->cbp_cxid, pa->pa_name);
		gw_cb_answer_pend(r, cp, RPC_SYSTEM_ERR);
	}
}

void gw_relay_client_gone(struct gw_relay *r, struct gw_client *cl)
{
	struct gw_ctx *gw = r->ry_gw;
	struct gw_cb_pend *cp;

	/* Callbacks waiting for this client: the server gets SYSTEM_ERR now
	 * rather than waiting for its own timeout. */
	while ((cp = gw_cbr_first_of(r->ry_cbr, cl))) {
		gw_stat_inc(ST(gw), GW_CTR_CB_CLIENT_GONE);
		gw_log_client(LG(gw), CFG_LOG_WARN, gw_client_name(cl),
			      "callback xid %#x (client xid %#x): client %s closed before replying",
			      cp->cbp_sxid, cp->cbp_cxid, gw_client_name(cl));
		gw_cb_answer_pend(r, cp, RPC_SYSTEM_ERR);
	}
	gw_cbs_owner_gone(r->ry_cbs, cl);
	/* Callback CALLs still queued: the frontend forgets them. */
	for (unsigned i = 0; i < GW_CB_PENDING; i++)
		if (r->ry_out[i].cbo_buf && r->ry_out[i].cbo_cl == cl) {
			gw_relay_out_free(r, &r->ry_out[i]);
			cl->gcl_ncalls--;
		}
}
