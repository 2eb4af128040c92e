// SPDX-License-Identifier: MIT
/*
 * This file contains the call object: its preallocated pool, its state
 * machine and its reference count.
 *
 * Normal operation.  A complete record from a client becomes a call
 * (FREE -> NEW, one reference: the client side).  The gateway decodes the
 * header and routes it: a local reply goes straight to REPLIED; otherwise
 * the call gets a gateway XID and is submitted to its path's transport
 * (NEW -> SENT), which takes a second reference.  The transport completes
 * it with the server's reply (SENT -> REPLIED); the frontend writes the
 * reply to the client and finalizes the call (REPLIED -> DONE), which asks
 * the transport to release the reply memory; the transport drops its
 * reference, the gateway drops the client-side one, and the last put
 * recycles the call (DONE -> FREE).
 *
 * Recovery.  A transport that cannot take a call now (backend down, no
 * credit) refuses it with -EAGAIN: the call waits in its path's hold queue
 * (NEW -> HELD) and is submitted again when the path is ready
 * (HELD -> SENT).  A transport that lost its connection keeps its calls
 * and re-sends them itself; one that hands a call back moves it
 * SENT -> HELD.  If the client goes away, every call it has is finalized
 * whatever its state (-> DONE): held calls leave the queue, sent calls are
 * cancelled in the transport, replied calls release their reply.  The two
 * references make the order of "transport done with memory" and "client
 * side done" irrelevant: whichever comes last recycles.
 *
 * An RPCSEC_GSS call whose XID is busy on its backend waits in XWAIT
 * (gss_xid.c) before it is held or sent.
 *
 *   from \ to    NEW  HELD  SENT  REPLIED  DONE  FREE  XWAIT
 *   FREE          x
 *   NEW                x     x      x       x           x
 *   HELD                     x              x           x
 *   SENT               x            x       x
 *   REPLIED                                 x
 *   DONE                                           x  (last put only)
 *   XWAIT              x     x              x
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "log.h"
#include "pool.h"

struct gw_call_pool {
	struct gw_call *cpo_calls;
	unsigned cpo_n;
	unsigned cpo_avail;
	struct gw_call_list cpo_free;
	struct gw_call_list cpo_sent;	/* by entry into SENT: the sweep reads the head */
	struct gw_pool *cpo_bufs;
	struct gw_stats *cpo_stats;
	const struct gw_log *cpo_log;
};

static const char *const gw_call_state_names[GW_CALL__COUNT] = {
	[GW_CALL_FREE] = "FREE", [GW_CALL_NEW] = "NEW", [GW_CALL_HELD] = "HELD",
	[GW_CALL_SENT] = "SENT", [GW_CALL_REPLIED] = "REPLIED", [GW_CALL_DONE] = "DONE",
	[GW_CALL_XWAIT] = "XWAIT",
};

static const char *const gw_end_names[GW_END__COUNT] = {
	[GW_END_REPLIED] = "replied", [GW_END_CLIENT_GONE] = "client gone",
	[GW_END_RETRANS] = "retransmission in flight", [GW_END_NOT_A_CALL] = "not a call",
	[GW_END_SHUTDOWN] = "shutdown", [GW_END_FAILED] = "transport failed",
	[GW_END_TIMEOUT] = "no reply within call_timeout",
};

/* The transition table of the essay above. */
static const bool gw_call_next[GW_CALL__COUNT][GW_CALL__COUNT] = {
	[GW_CALL_FREE] = { [GW_CALL_NEW] = true },
	[GW_CALL_NEW] = { [GW_CALL_HELD] = true, [GW_CALL_SENT] = true, [GW_CALL_REPLIED] = true,
			  [GW_CALL_DONE] = true, [GW_CALL_XWAIT] = true },
	[GW_CALL_HELD] = { [GW_CALL_SENT] = true, [GW_CALL_DONE] = true, [GW_CALL_XWAIT] = true },
	[GW_CALL_SENT] = { [GW_CALL_HELD] = true, [GW_CALL_REPLIED] = true, [GW_CALL_DONE] = true },
	[GW_CALL_REPLIED] = { [GW_CALL_DONE] = true },
	[GW_CALL_DONE] = { [GW_CALL_FREE] = true },
	[GW_CALL_XWAIT] = { [GW_CALL_HELD] = true, [GW_CALL_SENT] = true, [GW_CALL_DONE] = true },
};

const char *gw_call_state_str(enum gw_call_state s)
{
	return (unsigned)s < GW_CALL__COUNT ? gw_call_state_names[s] : "?";
}

const char *gw_end_str(enum gw_end e)
{
	return (unsigned)e < GW_END__COUNT ? gw_end_names[e] : "?";
}

bool gw_call_transition_ok(enum gw_call_state from, enum gw_call_state to)
{
	return (unsigned)from < GW_CALL__COUNT && (unsigned)to < GW_CALL__COUNT &&
	       gw_call_next[from][to];
}

int gw_call_set_state(struct gw_call *c, enum gw_call_state to)
{
	if (!gw_call_transition_ok(c->ca_state, to) || (to == GW_CALL_FREE && c->ca_refs != 0)) {
		gw_stat_inc(c->ca_cpool->cpo_stats, GW_CTR_ILLEGAL_TRANSITION);
		gw_err(c->ca_cpool->cpo_log, "xid %#x: refused state change %s -> %s", c->ca_cxid,
		       gw_call_state_str(c->ca_state), gw_call_state_str(to));
		return -EINVAL;
	}
	/* Membership follows the flag, not ca_state, so a call is never
	 * unlinked twice whatever state it was placed in. */
	if (c->ca_on_sent)
		TAILQ_REMOVE(&c->ca_cpool->cpo_sent, c, ca_sent_link);
	c->ca_on_sent = to == GW_CALL_SENT;
	if (c->ca_on_sent)
		TAILQ_INSERT_TAIL(&c->ca_cpool->cpo_sent, c, ca_sent_link);
	c->ca_state = to;
	return 0;
}

struct gw_call_pool *gw_call_pool_new(unsigned n, struct gw_pool *bufs, struct gw_stats *st,
				      const struct gw_log *lg)
{
	struct gw_call_pool *cp;

	cp = calloc(1, sizeof(*cp));
	if (!cp)
		return NULL;
	cp->cpo_calls = calloc(n, sizeof(*cp->cpo_calls));
	if (!cp->cpo_calls) {
		free(cp);
		return NULL;
	}
	cp->cpo_n = cp->cpo_avail = n;
	cp->cpo_bufs = bufs;
	cp->cpo_stats = st;
	cp->cpo_log = lg;
	TAILQ_INIT(&cp->cpo_free);
	TAILQ_INIT(&cp->cpo_sent);
	for (unsigned i = 0; i < n; i++) {
		cp->cpo_calls[i].ca_index = i;
		cp->cpo_calls[i].ca_cpool = cp;
		TAILQ_INSERT_TAIL(&cp->cpo_free, &cp->cpo_calls[i], ca_free_link);
	}
	return cp;
}

void gw_call_pool_free(struct gw_call_pool *cp)
{
	if (!cp)
		return;
	free(cp->cpo_calls);
	free(cp);
}

unsigned gw_call_pool_avail(const struct gw_call_pool *cp)
{
	return cp->cpo_avail;
}

struct gw_call *gw_call_pool_oldest_sent(struct gw_call_pool *cp)
{
	return TAILQ_FIRST(&cp->cpo_sent);
}

struct gw_call *gw_call_new(struct gw_call_pool *cp, struct gw_ctx *gw)
{
	struct gw_call *c = TAILQ_FIRST(&cp->cpo_free);
	uint32_t idx;

	if (!c)
		return NULL;
	TAILQ_REMOVE(&cp->cpo_free, c, ca_free_link);
	cp->cpo_avail--;
	idx = c->ca_index;
	/* Clear what a reply path may read before the new call sets it; ca_hdr
	 * and ca_walk (about 1 KB, past ca_rec) are filled by the decode and the
	 * walk before anyone reads them. */
	memset(c, 0, offsetof(struct gw_call, ca_rec));
	c->ca_index = idx;
	c->ca_cpool = cp;
	c->ca_gw = gw;
	gw_rec_init(&c->ca_rec);
	gw_rec_init(&c->ca_reply_rec);
	c->ca_tp_priv = NULL;
	c->ca_state = GW_CALL_FREE;
	gw_call_set_state(c, GW_CALL_NEW);
	c->ca_refs = 1;
	return c;
}

void gw_call_get(struct gw_call *c)
{
	c->ca_refs++;
}

void gw_call_put(struct gw_call *c)
{
	struct gw_call_pool *cp = c->ca_cpool;

	if (c->ca_refs == 0)
		abort();	/* broken invariant: put without a reference */
	if (--c->ca_refs > 0)
		return;
	if (c->ca_state != GW_CALL_DONE) {
		/* Broken invariant: the last owner left before finalize.  Refuse
		 * to recycle (leak one call) rather than corrupt the pool. */
		gw_stat_inc(cp->cpo_stats, GW_CTR_ILLEGAL_TRANSITION);
		gw_err(cp->cpo_log, "xid %#x: last reference dropped in state %s", c->ca_cxid,
		       gw_call_state_str(c->ca_state));
		return;
	}
	gw_rec_release(cp->cpo_bufs, &c->ca_rec);
	gw_rec_release(cp->cpo_bufs, &c->ca_reply_rec);
	gw_call_set_state(c, GW_CALL_FREE);
	TAILQ_INSERT_HEAD(&cp->cpo_free, c, ca_free_link);
	cp->cpo_avail++;
}
