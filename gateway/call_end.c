// SPDX-License-Identifier: MIT
/*
 * This file contains the calls a server ends for their client by closing a
 * connection, or by never answering: call_timeout (also for RPCSEC_GSS
 * calls that waited that long for their XID, gss_xid.c: a client that
 * keeps an XID busy on purpose could make them wait for good), and the
 * server's close of the RDMA connection an RPCSEC_GSS call was on.  Both close the
 * client's TCP connection, as nfsd closes a client's connection when it
 * drops one of its requests, so that the client sends its calls again.
 */
#include <stdint.h>

#include <event2/event.h>

#include "call.h"
#include "client.h"
#include "config.h"
#include "ctx.h"
#include "gateway.h"
#include "log.h"
#include "transport.h"
#include "xmap.h"

/*
 * call_timeout.  A call a server never answers (dropped, lost) would keep
 * its RDMA windows and XID mapping for ever, and every retransmission
 * would be dropped as "in flight".  The gateway does what nfsd does when
 * it drops a request on a connection-oriented transport: it closes the
 * client's connection (RFC 7530 section 3.1.1; NFSv3 clients over TCP
 * recover the same way).  The client's calls are cancelled in their
 * transport (RDMA: windows invalidated before the buffers go back) and
 * retransmitted on the same gateway XIDs within drc_window, except the
 * timed-out one: its old XID may stay bound in the server's transport or
 * DRC ("in progress", dropped again), so it gets a fresh one.  SYSTEM_ERR
 * instead would be an EIO for what may be a transient server trouble.
 * One sweep a GW_SWEEP_MS from the oldest SENT call (call.c keeps them in
 * order), no timer per call.
 */
static void gw_call_timeout(struct gw_ctx *gw, struct gw_call *c, unsigned tmo)
{
	struct gw_client *cl = c->ca_cl;
	bool waited = c->ca_state == GW_CALL_XWAIT;
	struct gw_log_ev ev = { .le_xid = c->ca_cxid, .le_has_xid = true,
				.le_client = cl ? gw_client_name(cl) : NULL,
				.le_backend = c->ca_path ? c->ca_path->pa_name : NULL,
				.le_prog = c->ca_hdr.rc_prog, .le_vers = c->ca_hdr.rc_vers,
				.le_proc = c->ca_hdr.rc_proc, .le_error = "call_timeout" };

	gw_stat_inc(ST(gw), GW_CTR_CALL_TIMEOUTS);
	c->ca_timed_out = true;
	if (waited)
		gw_log_ev(LG(gw), CFG_LOG_WARN, &ev, "xid %#x from %s via %s: RPCSEC_GSS call waited "
			  "%u ms for its XID: call cancelled, client connection closed", c->ca_cxid,
			  cl ? gw_client_name(cl) : "-", c->ca_path ? c->ca_path->pa_name : "-", tmo);
	else
		gw_log_ev(LG(gw), CFG_LOG_WARN, &ev, "xid %#x (gw %#x) from %s via %s: no reply "
			  "within %u ms: call cancelled, client connection closed", c->ca_cxid,
			  c->ca_gxid, cl ? gw_client_name(cl) : "-",
			  c->ca_path ? c->ca_path->pa_name : "-", tmo);
	if (c->ca_xent && c->ca_path && c->ca_xent->xn_call == c) {
		gw_xmap_remove(c->ca_path->pa_backend->bk_xmap, c->ca_xent);
		c->ca_xent = NULL;
	}
	if (cl && !cl->gcl_closing && cl->gcl_ops->cop_close)
		cl->gcl_ops->cop_close(cl->gcl_arg, waited ? "an RPCSEC_GSS call waited for its XID "
				       "for call_timeout" : "a call had no reply within call_timeout");
	else
		gw_call_finalize(c, GW_END_TIMEOUT);
}

/* Oldest first, so a sweep stops at the first call still in time.
 * Closing a client finalizes its other calls too (they leave the lists):
 * the head is read again after every timeout, never a pointer kept across
 * the close.  A call still at the head afterwards (its client's close is
 * under way) is looked at next sweep. */
static void gw_xwait_sweep(struct gw_ctx *gw, struct gw_backend *bk, uint64_t now, unsigned tmo)
{
	struct gw_call *c;

	while ((c = TAILQ_FIRST(&bk->bk_xwait)) && now - c->ca_start_ms >= tmo) {
		gw_call_timeout(gw, c, tmo);
		if (TAILQ_FIRST(&bk->bk_xwait) == c)
			break;
	}
}

void gw_call_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct gw_ctx *gw = arg;
	unsigned tmo = gw->gw_p.gp_cfg->cf_call_timeout_ms;
	uint64_t now = gw_now_ms();
	struct gw_call *c;

	(void)fd;
	(void)what;
	if (tmo == 0)
		return;
	/* Oldest first, so the sweep stops at the first call still in time.
	 * Closing a client finalizes its other calls too (they leave the
	 * list): the head is read again after every timeout, never a pointer
	 * kept across the close.  A call still at the head afterwards (its
	 * client's close is under way) is looked at next sweep. */
	while ((c = gw_call_pool_oldest_sent(gw->gw_calls)) && now - c->ca_sent_ms >= tmo) {
		gw_call_timeout(gw, c, tmo);
		if (gw_call_pool_oldest_sent(gw->gw_calls) == c)
			break;
	}
	for (unsigned i = 0; i < GW_BACKEND_SLOTS; i++)
		if (gw->gw_bslots[i].bk_used)
			gw_xwait_sweep(gw, &gw->gw_bslots[i], now, tmo);
}

/*
 * The server closed the RDMA connection c was posted on while c, an
 * RPCSEC_GSS call, had no reply, and the transport hands it back instead
 * of re-sending it (backend.h BE_CALL_NO_RESEND): the server may have taken
 * it in, and the same sequence number again is a replay it drops, closing
 * the next connection too (RFC 2203 5.3.3.1; nfsd's svcauth_gss.c).  Its
 * client must send it again under a new sequence number, which a client
 * does once its connection is gone (the Linux client encodes a GSS call
 * anew after a disconnect).  So the client's TCP connection is closed, as
 * nfsd closes the connection of a TCP client whose call it drops: it
 * reconnects from the same port and retransmits (same XIDs, drc_window);
 * its other calls are cancelled in their transport.  Counted and logged
 * under the client's rate limit.
 */
void gw_call_closed_by_server(struct gw_call *c)
{
	struct gw_ctx *gw = c->ca_gw;
	struct gw_client *cl = c->ca_cl;
	const char *name = cl ? gw_client_name(cl) : "-";
	struct gw_log_ev ev = { .le_xid = c->ca_cxid, .le_has_xid = true,
				.le_client = cl ? name : NULL,
				.le_backend = c->ca_path ? c->ca_path->pa_name : NULL,
				.le_prog = c->ca_hdr.rc_prog, .le_vers = c->ca_hdr.rc_vers,
				.le_proc = c->ca_hdr.rc_proc, .le_error = "server_closed" };

	gw_stat_inc(ST(gw), GW_CTR_SERVER_CLOSED_FOR_CLIENT);
	gw_log_ev(LG(gw), CFG_LOG_WARN, &ev, "xid %#x (gw %#x) from %s via %s: the server closed "
		  "the RDMA connection with this RPCSEC_GSS call (gss_proc %u, seq %u) unanswered: "
		  "client connection closed, its client sends the call again", c->ca_cxid,
		  c->ca_gxid, name, c->ca_path ? c->ca_path->pa_name : "-", c->ca_hdr.rc_gss_proc,
		  c->ca_hdr.rc_gss_seq);
	if (cl && !cl->gcl_closing && cl->gcl_ops->cop_close)
		cl->gcl_ops->cop_close(cl->gcl_arg, "the server closed the RDMA connection its "
				       "RPCSEC_GSS call was on");
	else
		gw_call_finalize(c, GW_END_FAILED);
}
