// SPDX-License-Identifier: MIT
/*
 * This file contains the RPC-over-RDMA transport of the gateway: the
 * adapter between the transport seam (struct gw_transport_ops, gateway.h)
 * and backend-rdma/ (backend.h), with chunking/'s NFS walkers deciding
 * what goes in chunks (RFC 8267).
 *
 * Memory.  The whole buffer pool is registered once per server context
 * (gw_pool_register -> be_region_register), so a call's bytes, received
 * from the TCP client straight into the pool, are advertised in read
 * chunks where they lie.  Write chunks and the reply chunk are pool
 * buffers taken for the call (up to BE_MAX_TARGET_IOV each) and returned
 * when the client reply is written: the server's READ data is written by
 * RDMA into them and goes to the client from there, by writev().
 *
 * Submit: decode the call header, walk the arguments (chk_call_walk),
 * decide (chk_decide with the connection's inline thresholds), take the
 * target buffers, be_call_submit().  No buffer or a full backend queue ->
 * -EAGAIN: the gateway holds the call until gw_path_ready(): from the
 * backend's BE_POOL_ROOM event for a full queue or a busy XID, from a short
 * timer when our own buffer pool was dry (nothing else would wake it).
 *
 * Reply: the backend calls back once every registration of the call is
 * invalidated.  An inline reply (RDMA_MSG) sits in one of the connection's
 * receive buffers, and the server's credits are those buffers: a slow
 * client must not hold them.  So the inline body, at most the receive
 * threshold (a few KiB, never bulk data), is copied into a pool buffer and
 * the receive buffer given back at once; bulk data arrives in write chunks
 * or the reply chunk, which are pool buffers already.  The reply walker
 * (chk_reply_walk, through rdma_reply.c) lists the pieces of the
 * TCP reply: inline bytes from the reply body (receive buffer or reply
 * chunk), write-chunk data from our target buffers, XDR pads; they become
 * the reply's iovecs, no copy.  They stay valid until release, which gives
 * the receive buffer back to the backend (be_call_release) and the target
 * buffers to the pool.  The backend's request (struct be_req) is embedded
 * in the transport's state too, the descriptor's arrays with it: no
 * allocation and no copy of the descriptor per call.
 *
 * Cancel (client gone): a call still queued in the backend (waiting for a
 * credit) is taken out there and never posted (be_call_cancel() true).  A
 * call on the wire: the server may still write into the target buffers
 * until the backend has invalidated them, which it reports through the
 * callback (BE_ERR_CANCELLED).  So it is kept, marked orphan, and released
 * at its callback.  Backend errors (ERR_CHUNK, too many re-sends) drop
 * the call, counted and logged, never an RPC error.  A reply that would
 * hand out more than the server offered (rdma_reply.c) fails the call:
 * SYSTEM_ERR to the client; what it placed short of what it reports reads
 * as zeroes or the same client's own bytes (targets: gw_buf_get_for).
 *
 * Per call: the transport's state (struct gw_rdma_call, transport_rdma.h)
 * lives inside the gateway's call (ca_tp), one enum for where it stands.
 *
 * Outage: the backend queues and re-sends by itself; its BE_POOL_UP/DOWN
 * events become gw_path_ready() so the gateway holds new calls meanwhile,
 * and every failed attempt becomes gw_path_down() with its reason (no
 * device, connect, handshake), on which an rdma route with fallback = tcp
 * goes onto TCP.
 *
 * Start: the server's name is resolved by a helper thread, never on the
 * event loop, and again every reconnect_interval while it does not
 * resolve (path down for "DNS: ..."); the connection pool starts with the
 * address.  Re-resolve: each failed attempt and each lost connection asks
 * the thread again; a new address only replaces the pool's destination
 * (be_pool_set_addr) for its next attempts, so the pool, its connections
 * and whatever a posted call or a held backchannel CALL references stay.
 * A name that stops resolving keeps the last address.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <event2/event.h>

#include "backend.h"
#include "call.h"
#include "chunking.h"
#include "config.h"
#include "gateway.h"
#include "log.h"
#include "lookup.h"
#include "pool.h"
#include "transport.h"
#include "transport_rdma.h"

#define GR_RETRY_MS	5
/* The server closed the only connection in answer to calls: the path
 * stays ready this long while the backend connects again at once. */
#define GR_CLOSED_GRACE_MS	3000

/* One server context: a be_ctx and the pool registered in it. */
struct gr_server {
	struct be_ctx *sv_ctx;
	int sv_reg;			/* gw_pool registration index */
	unsigned sv_users;		/* paths using it */
	const struct gw_log *sv_log;
	char sv_name[CFG_NAME_MAX];	/* the backend's, for the log's rate limit */
};

struct gw_rdma {
	struct event_base *ra_base;
	struct gw_pool *ra_pool;
	const struct gw_log *ra_log;
	struct gw_stats *ra_stats;
	gw_rdma_resolve_fn *ra_resolve;	/* getaddrinfo, or a test's */
	void *ra_resolve_arg;
	struct gr_server ra_servers[GW_BACKEND_SLOTS];	/* by pi_backend_slot */
	uint32_t ra_live;		/* bit i: ra_servers[i] has a context */
};

bool gw_rdma_prewait(struct gw_rdma *ra)
{
	bool busy = false;

	/* Every pass: the live contexts only (usually one), not every slot. */
	for (uint32_t m = ra ? ra->ra_live : 0; m; m &= m - 1)
		if (be_ctx_prewait(ra->ra_servers[__builtin_ctz(m)].sv_ctx))
			busy = true;
	return busy;
}

/* The server's name, resolved on a lookup thread (getaddrinfo may block
 * for seconds): filled by the thread, read once it has been joined. */
struct gr_resolve {
	char rrs_host[CFG_HOST_MAX];
	char rrs_port[8];
	struct sockaddr_storage rrs_addr;
	socklen_t rrs_addrlen;
	int rrs_err;			/* 0 or EAI_* */
	gw_rdma_resolve_fn *rrs_fn;
	void *rrs_arg;
};

struct gr_path {
	struct gw_rdma *rp_ra;
	struct gw_path *rp_path;
	const struct gw_path_info *rp_info;
	struct gr_server *rp_server;
	struct be_pool *rp_pool;
	struct event *rp_retry;
	unsigned rp_ncalls;
	bool rp_destroying;
	/* The name is resolved off the event loop: before rp_pool exists
	 * every reconnect_interval while it does not resolve, then after
	 * each failed attempt or lost connection. */
	struct gw_lookup rp_lookup;	/* runs gr_resolve_work */
	unsigned rp_dns_failures;
	struct gr_resolve rp_res;
	struct event *rp_grace;		/* GR_CLOSED_GRACE_MS */
	struct gw_quar rp_quar;		/* GSS calls of hosts kept apart (rdma_quar.c) */
};

static void *gr_reg(void *arg, void *addr, size_t len)
{
	return be_region_register(arg, addr, len);
}

static void gr_dereg(void *arg, void *reg)
{
	(void)arg;
	be_region_unregister(reg);
}

_Static_assert(GW_BACKEND_SLOTS <= 32, "ra_live has a bit per slot");

struct gw_rdma *gw_rdma_new(struct event_base *base, struct gw_pool *pool, const struct gw_log *lg,
			    struct gw_stats *st)
{
	struct gw_rdma *ra = calloc(1, sizeof(*ra));

	if (!ra)
		return NULL;
	ra->ra_base = base;
	ra->ra_pool = pool;
	ra->ra_log = lg;
	ra->ra_stats = st;
	for (unsigned i = 0; i < GW_BACKEND_SLOTS; i++)
		ra->ra_servers[i].sv_reg = -1;
	return ra;
}

void gw_rdma_set_resolver(struct gw_rdma *ra, gw_rdma_resolve_fn *fn, void *arg)
{
	ra->ra_resolve = fn;
	ra->ra_resolve_arg = arg;
}

static void gr_server_put(struct gw_rdma *ra, struct gr_server *sv)
{
	if (!sv || --sv->sv_users > 0)
		return;
	gw_pool_unregister(ra->ra_pool, sv->sv_reg);
	sv->sv_reg = -1;
	be_ctx_free(sv->sv_ctx);
	sv->sv_ctx = NULL;
	ra->ra_live &= ~(1u << (sv - ra->ra_servers));
}

void gw_rdma_free(struct gw_rdma *ra)
{
	if (!ra)
		return;
	for (unsigned i = 0; i < GW_BACKEND_SLOTS; i++)
		if (ra->ra_servers[i].sv_ctx) {	/* paths not destroyed: force */
			ra->ra_servers[i].sv_users = 1;
			gr_server_put(ra, &ra->ra_servers[i]);
		}
	free(ra);
}

/* The backend's messages go to the gateway's logger, under its level. */
_Static_assert((int)BE_LOG_ERR == (int)CFG_LOG_ERR && (int)BE_LOG_WARN == (int)CFG_LOG_WARN &&
	       (int)BE_LOG_INFO == (int)CFG_LOG_INFO && (int)BE_LOG_DEBUG == (int)CFG_LOG_DEBUG,
	       "backend log levels are the gateway's");
/* The backend's warnings and errors are mostly what the server did (a
 * reply for no call, a bad header, a completion error): through the
 * server's rate limit, so that no server floods the log. */
static void gr_log(void *arg, enum be_log_level lvl, const char *func, const char *msg)
{
	const struct gr_server *sv = arg;
	const struct gw_log *lg = sv->sv_log;
	const struct gw_log_ev ev = { .le_backend = sv->sv_name };

	if (!lg || (int)lvl > lg->gl_level)
		return;
	if ((int)lvl <= CFG_LOG_WARN)
		gw_logf_ev(lg, (enum cfg_log_level)lvl, func, &ev, "%s", msg);
	else
		gw_logf(lg, (enum cfg_log_level)lvl, func, "%s", msg);
}

/* One server context per backend slot: a backend removed by a reload keeps
 * its own until its last path is gone, while its replacement of the same
 * name (new address, credits...) gets a fresh one in another slot. */
static struct gr_server *gr_server_get(struct gw_rdma *ra, const struct gw_path_info *pi)
{
	const struct cfg *cf = pi->pi_cfg;
	const struct cfg_backend *b = pi->pi_backend;
	struct gr_server *sv = &ra->ra_servers[pi->pi_backend_slot % GW_BACKEND_SLOTS];
	struct be_config bc;

	if (sv->sv_ctx) {
		sv->sv_users++;
		return sv;
	}
	be_config_default(&bc);
	bc.bc_credits = b->cb_credits;
	bc.bc_inline_send = b->cb_inline_send;
	bc.bc_inline_recv = b->cb_inline_recv;
	bc.bc_conns = pi->pi_conns;
	bc.bc_reg_mode = b->cb_regmode == CFG_REG_REG ? BE_REG_MR
			 : b->cb_regmode == CFG_REG_PERSISTENT ? BE_REG_PERSISTENT : BE_REG_MW;
	bc.bc_retry_min_ms = cf->cf_reconnect_ms;
	bc.bc_ccp = b->cb_ccp;
	sv->sv_log = ra->ra_log;
	snprintf(sv->sv_name, sizeof(sv->sv_name), "%s", b->cb_name);
	bc.bc_log_fn = gr_log;
	bc.bc_log_arg = sv;
	bc.bc_log_level = ra->ra_log ? &ra->ra_log->gl_level : NULL;
	sv->sv_ctx = be_ctx_new(ra->ra_base, &bc);
	if (!sv->sv_ctx) {
		gw_err(ra->ra_log, "backend %s: be_ctx_new: %s", b->cb_name, strerror(errno));
		return NULL;
	}
	sv->sv_reg = gw_pool_register(ra->ra_pool, gr_reg, gr_dereg, sv->sv_ctx);
	if (sv->sv_reg < 0) {
		gw_err(ra->ra_log, "backend %s: cannot register the buffer pool", b->cb_name);
		be_ctx_free(sv->sv_ctx);
		sv->sv_ctx = NULL;
		return NULL;
	}
	sv->sv_users = 1;
	ra->ra_live |= 1u << (sv - ra->ra_servers);
	return sv;
}

/* ---- the call's state (transport_rdma.h) ---- */

/* The call that embeds gc (call.h, ca_tp). */
static struct gw_call *gr_call_of(struct gw_rdma_call *gc)
{
	return (struct gw_call *)((char *)gc - offsetof(struct gw_call, ca_tp.tu_rdma));
}

static struct gw_rdma_call *gr_state(struct gw_call *c)
{
	return &c->ca_tp.tu_rdma;
}

static const char *const gr_state_name[GW_RDMA_CALL__COUNT] = {
	"IDLE", "POSTED", "ORPHAN", "REPLIED", "FAILED",
};

/* The transitions of the diagram in transport_rdma.h. */
static bool gr_transition_ok(enum gw_rdma_call_state from, enum gw_rdma_call_state to)
{
	switch (from) {
	case GW_RDMA_CALL_IDLE:
		return to == GW_RDMA_CALL_POSTED;
	case GW_RDMA_CALL_POSTED:
		return to == GW_RDMA_CALL_IDLE || to == GW_RDMA_CALL_ORPHAN ||
		       to == GW_RDMA_CALL_REPLIED || to == GW_RDMA_CALL_FAILED;
	case GW_RDMA_CALL_ORPHAN:
	case GW_RDMA_CALL_REPLIED:
	case GW_RDMA_CALL_FAILED:
		return to == GW_RDMA_CALL_IDLE;
	default:
		return false;
	}
}

/* The one writer of gc_state: an illegal change is a bug, counted,
 * logged and refused. */
static void gr_call_set(struct gr_path *rp, struct gw_rdma_call *gc, enum gw_rdma_call_state to)
{
	if (!gr_transition_ok(gc->gc_state, to)) {
		struct gw_call *c = gr_call_of(gc);

		gw_stat_inc(rp->rp_info->pi_stats, GW_CTR_ILLEGAL_TRANSITION);
		gw_err(rp->rp_info->pi_log, "xid %#x (gw %#x): rdma call %s -> %s refused",
		       c->ca_cxid, c->ca_gxid, gr_state_name[gc->gc_state], gr_state_name[to]);
		return;
	}
	gc->gc_state = to;
}

/* ---- targets: pool buffers for write chunks and the reply chunk ---- */

static void gr_call_drop_bufs(struct gr_path *rp, struct gw_rdma_call *gc)
{
	for (unsigned i = 0; i < gc->gc_nbufs; i++)
		gw_buf_put(rp->rp_info->pi_pool, gc->gc_bufs[i]);
	gc->gc_nbufs = 0;
}

/* len bytes of pool buffers as an iovec list, zeroed where they might hold
 * another client's bytes (gw_buf_get_for); several buffers are taken as one
 * run of memory where the pool allows (one segment, one window, which the
 * server can invalidate); false when the pool is dry (buffers taken so far
 * stay listed in gc_bufs). */
static bool gr_target(struct gr_path *rp, struct gw_rdma_call *gc, uint32_t len, struct iovec *iov,
		      unsigned *niov)
{
	struct gw_pool *pool = rp->rp_info->pi_pool;
	uint32_t bs = gw_pool_buf_size(pool);
	uint64_t owner = gr_call_of(gc)->ca_owner;
	uint32_t scrubbed = 0;
	bool ok = true, run = len > bs;
	unsigned nrun = len / bs + (len % bs != 0);
	struct gw_buf *prev = NULL;

	*niov = 0;
	if (nrun > BE_MAX_TARGET_IOV)
		nrun = BE_MAX_TARGET_IOV;
	while (len > 0 && *niov < BE_MAX_TARGET_IOV) {
		uint32_t n = len < bs ? len : bs, cleared;
		struct gw_buf *b = gc->gc_nbufs >= GW_RDMA_MAX_BUFS ? NULL :
				   run ? gw_buf_get_for_after(pool, owner, n, &cleared, prev, nrun) :
					 gw_buf_get_for(pool, owner, n, &cleared);

		if (!b) {
			ok = false;
			break;
		}
		scrubbed += cleared;
		prev = b;
		gc->gc_bufs[gc->gc_nbufs++] = b;
		iov[(*niov)++] = (struct iovec){ b->gb_data, n };
		len -= n;
	}
	gw_stat_add(rp->rp_info->pi_stats, GW_CTR_BYTES_SCRUBBED, scrubbed);
	return ok;	/* true when longer than BE_MAX_TARGET_IOV buffers: offered shorter */
}

/* ---- reply ---- */

/* Everything of the call given back; the transport's reference dropped. */
static void gr_call_done(struct gr_path *rp, struct gw_rdma_call *gc)
{
	struct gw_call *c = gr_call_of(gc);

	be_call_release(&gc->gc_req);	/* no-op when already given back */
	gr_call_drop_bufs(rp, gc);
	gr_call_set(rp, gc, GW_RDMA_CALL_IDLE);
	rp->rp_ncalls--;
	gw_call_put(c);
}

/* The server's reply would hand out what it did not place: the call fails,
 * the client gets SYSTEM_ERR rather than another client's stale bytes or
 * nothing; counted by reason, logged with the server's name (the per-peer
 * rate limit holds a server that does it for every reply). */
static void gr_bad_reply(struct gr_path *rp, struct gw_rdma_call *gc, enum gw_rdma_bad why,
			 const char *detail)
{
	struct gw_call *c = gr_call_of(gc);
	const struct cfg_backend *b = rp->rp_info->pi_backend;
	struct gw_log_ev ev = { .le_xid = c->ca_cxid, .le_has_xid = true, .le_backend = b->cb_name,
				.le_error = gw_rdma_bad_str(why) };

	_Static_assert(GW_CTR_SERVER_BAD_HEADER - GW_CTR_SERVER_BAD_OVERRUN ==
		       GW_RDMA_BAD_HEADER - GW_RDMA_BAD_OVERRUN, "one counter per reason");
	gw_stat_inc(rp->rp_info->pi_stats, GW_CTR_SERVER_BAD_OVERRUN + (why - GW_RDMA_BAD_OVERRUN));
	gw_log_ev(rp->rp_info->pi_log, CFG_LOG_ERR, &ev, "server %s (%s) path %s: bad reply to xid "
		  "%#x (gw %#x): %s (%s); SYSTEM_ERR to the client", b->cb_name, b->cb_host,
		  gw_path_name(rp->rp_path), c->ca_cxid, c->ca_gxid, gw_rdma_bad_str(why), detail);
	gc->gc_nout = 0;
	gr_call_set(rp, gc, GW_RDMA_CALL_FAILED);	/* reply written -> release -> done */
	gw_call_system_err(c);
}

/* An inline reply body out of its receive buffer into a pool buffer (the
 * server's credit comes back at once), owned by the call's client: it is
 * that client's reply; false when none is free. */
static bool gr_copy_inline(struct gr_path *rp, struct gw_rdma_call *gc, struct be_req *bq,
			   const struct be_reply *r)
{
	struct gw_pool *pool = rp->rp_info->pi_pool;
	struct gw_buf *b;
	size_t off = 0;

	if (r->br_proc == RPCRDMA_NOMSG || r->br_body_len > gw_pool_buf_size(pool) ||
	    gc->gc_nbufs >= GW_RDMA_MAX_BUFS ||
	    !(b = gw_buf_get_own(pool, gr_call_of(gc)->ca_owner, false)))
		return false;
	for (unsigned i = 0; i < r->br_nbody; i++) {
		memcpy(b->gb_data + off, r->br_body[i].iov_base, r->br_body[i].iov_len);
		off += r->br_body[i].iov_len;
	}
	gc->gc_bufs[gc->gc_nbufs++] = b;
	gw_stat_add(rp->rp_info->pi_stats, GW_CTR_BYTES_COPIED, off);
	gc->gc_body = (struct iovec){ b->gb_data, off };
	/* Receive buffer (credit) back at once: the backend takes a release
	 * from inside its callback. */
	be_call_release(bq);
	return true;
}

static void gr_reply_cb(struct be_req *bq, const struct be_reply *r, void *arg)
{
	struct gw_rdma_call *gc = arg;
	struct gr_path *rp = gc->gc_path;
	struct gw_call *c = gr_call_of(gc);
	const struct gw_log *lg = rp->rp_info->pi_log;
	uint32_t wlen[BE_MAX_WRITE_CHUNKS];
	enum chk_walk_err werr = CHK_WALK_OK;
	const struct iovec *body;
	enum gw_rdma_bad bad;
	unsigned nbody, nw;

	if (gc->gc_state == GW_RDMA_CALL_ORPHAN) {
		gw_stat_inc(rp->rp_info->pi_stats, GW_CTR_BACKEND_UNMATCHED);
		gr_call_done(rp, gc);
		return;
	}
	if (r->br_err == BE_ERR_OVERRUN || r->br_err == BE_ERR_BAD_REPLY) {
		gr_bad_reply(rp, gc, r->br_err == BE_ERR_OVERRUN ? GW_RDMA_BAD_OVERRUN
			     : GW_RDMA_BAD_HEADER, be_err_str(r->br_err));
		return;
	}
	if (r->br_err == BE_ERR_SERVER_CLOSED) {
		gr_call_set(rp, gc, GW_RDMA_CALL_FAILED);	/* client closed -> cancel -> done */
		gw_quar_enter(&rp->rp_quar, c->ca_cl, gw_now_ms());
		gw_call_closed_by_server(c);
		return;
	}
	if (r->br_err != BE_OK) {
		gw_stat_inc(rp->rp_info->pi_stats, GW_CTR_CALLS_FAILED);
		gw_log_server(lg, CFG_LOG_ERR, gw_path_name(rp->rp_path),
			      "xid %#x (gw %#x) path %s: %s; call dropped", c->ca_cxid, c->ca_gxid,
			      gw_path_name(rp->rp_path), be_err_str(r->br_err));
		gr_call_set(rp, gc, GW_RDMA_CALL_FAILED);	/* finalize -> cancel -> done */
		gw_call_finalize(c, r->br_err == BE_ERR_SHUTDOWN ? GW_END_SHUTDOWN : GW_END_FAILED);
		return;
	}
	gw_stats_observe(rp->rp_info->pi_stats, GW_HIST_RDMA,
			 gw_pass_us(rp->rp_info->pi_stats) - gc->gc_t0_us);
	bad = gw_rdma_reply_bound(gc, r);
	if (bad != GW_RDMA_BAD_NONE) {
		gr_bad_reply(rp, gc, bad, "beyond what the call offered");
		return;
	}
	nw = r->br_nwrites;
	memcpy(wlen, r->br_write_len, nw * sizeof(wlen[0]));
	for (unsigned i = 0; i < nw; i++)
		gw_stat_add(rp->rp_info->pi_stats, GW_CTR_BYTES_WRITE_CHUNK, wlen[i]);
	gw_stat_add(rp->rp_info->pi_stats, r->br_proc == RPCRDMA_NOMSG ? GW_CTR_BYTES_REPLY_CHUNK
		    : GW_CTR_BYTES_INLINE_REPLY, r->br_body_len);
	body = r->br_body;
	nbody = r->br_nbody;
	if (gr_copy_inline(rp, gc, bq, r)) {
		body = &gc->gc_body;
		nbody = 1;
	}
	bad = gw_rdma_reply_assemble(gc, &c->ca_hdr, c->ca_gss, body, nbody, wlen, nw, &werr);
	if (bad == GW_RDMA_BAD_NONE) {
		gr_call_set(rp, gc, GW_RDMA_CALL_REPLIED);
		gw_call_complete(c, gc->gc_out, gc->gc_nout);
		return;
	}
	gw_stat_inc(rp->rp_info->pi_stats, GW_CTR_BACKEND_GARBAGE);
	gr_bad_reply(rp, gc, bad, chk_walk_err_str(werr));
}

/* ---- backchannel (RFC 8167): the server's CALLs go to the gateway ---- */

static void gr_bc_cb(struct be_pool *pool, struct be_bc *bc, const void *msg, size_t len, void *arg)
{
	struct gr_path *rp = arg;
	struct iovec iov = { (void *)msg, len };

	(void)pool;
	if (rp->rp_destroying) {
		be_bc_reply(bc, NULL, 0);
		return;
	}
	gw_cb_call(rp->rp_path, bc, &iov, 1);
}

static int gr_cb_reply(void *tp, void *handle, const struct iovec *iov, unsigned niov)
{
	(void)tp;
	return be_bc_reply(handle, iov, niov);
}

/* ---- the ops ---- */

static void gr_resolve_start(struct gr_path *rp);

static void gr_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gr_path *rp = arg;

	(void)fd;
	(void)what;
	if (!rp->rp_pool) {	/* the name is not resolved yet */
		gr_resolve_start(rp);
		return;
	}
	gw_path_ready(rp->rp_path, be_pool_up(rp->rp_pool));
}

/* GR_CLOSED_GRACE_MS after a close the server made in answer to calls:
 * still no connection, the path goes down as for any loss. */
static void gr_grace_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gr_path *rp = arg;

	(void)fd;
	(void)what;
	if (rp->rp_destroying || be_pool_up(rp->rp_pool))
		return;
	gw_path_down(rp->rp_path, GW_WHY_LOST, "RDMA connection lost: %s",
		     be_pool_last_error(rp->rp_pool));
	gw_path_ready(rp->rp_path, false);
}

static int gr_refuse(struct gr_path *rp, struct gw_rdma_call *gc)
{
	struct timeval tv = { 0, GR_RETRY_MS * 1000 };

	gr_call_drop_bufs(rp, gc);
	evtimer_add(rp->rp_retry, &tv);
	return -EAGAIN;
}

static int gr_submit(void *tp, struct gw_call *c)
{
	struct gr_path *rp = tp;
	struct gw_rdma_call *gc = gr_state(c);
	struct chk_rdma_params prm;
	struct chk_decision dc;
	struct be_conn_info ci;
	struct be_call_desc d;
	struct be_pool *pool;
	unsigned nreads = 0, n;
	int rc;

	if (!rp->rp_pool)	/* name not resolved yet: never up, so not submitted */
		return -EAGAIN;
	if (gc->gc_state != GW_RDMA_CALL_IDLE)	/* cannot happen: one transport at a time */
		return -EBUSY;
	if (c->ca_rec.rcd_niov > BE_MAX_MSG_IOV)
		return -EMSGSIZE;
	memset(gc, 0, offsetof(struct gw_rdma_call, gc_wiov));	/* IDLE stays IDLE */
	gc->gc_path = rp;
	chk_rdma_params_default(&prm);
	if (be_pool_conn_info(rp->rp_pool, 0, &ci) == 0) {
		prm.rdp_send_threshold = ci.ci_send_threshold;
		prm.rdp_recv_threshold = ci.ci_recv_threshold;
	} else {
		prm.rdp_send_threshold = rp->rp_info->pi_backend->cb_inline_send;
		prm.rdp_recv_threshold = rp->rp_info->pi_backend->cb_inline_recv;
	}
	if (prm.rdp_max_write_chunks > BE_MAX_WRITE_CHUNKS)
		prm.rdp_max_write_chunks = BE_MAX_WRITE_CHUNKS;
	if (prm.rdp_max_read_chunks > BE_MAX_READ_ITEMS)
		prm.rdp_max_read_chunks = BE_MAX_READ_ITEMS;
	if (!chk_decide(&c->ca_walk, 0, c->ca_rec.rcd_len, &prm, &dc))
		return -EMSGSIZE;
	memset(&d, 0, sizeof(d));
	pool = gw_quar_pick(&rp->rp_quar, c, &d.cd_flags, rp->rp_info->pi_stats);
	d.cd_xid = c->ca_gxid;
	d.cd_msg = c->ca_rec.rcd_iov;
	d.cd_msg_niov = c->ca_rec.rcd_niov;
	if (dc.dc_proc == RPCRDMA_NOMSG) {
		d.cd_flags |= BE_CALL_FORCE_NOMSG;
	} else {
		for (unsigned i = 0; i < dc.dc_nreads && nreads < BE_MAX_READ_ITEMS; i++)
			if (dc.dc_reads[i].rdc_item >= 0)
				gc->gc_reads[nreads++] = (struct be_read_item){ dc.dc_reads[i].rdc_pos,
										dc.dc_reads[i].rdc_len };
		d.cd_reads = gc->gc_reads;
		d.cd_nreads = nreads;
	}
	gc->gc_nwrites = dc.dc_nwrites;
	for (unsigned i = 0; i < dc.dc_nwrites; i++) {
		if (!gr_target(rp, gc, dc.dc_write_len[i], gc->gc_wiov[i], &n))
			return gr_refuse(rp, gc);
		gc->gc_wt[i] = (struct be_target){ gc->gc_wiov[i], n };
	}
	d.cd_writes = gc->gc_wt;
	d.cd_nwrites = dc.dc_nwrites;
	if (dc.dc_reply_chunk) {
		if (!gr_target(rp, gc, dc.dc_reply_len, gc->gc_riov, &n))
			return gr_refuse(rp, gc);
		gc->gc_rt = (struct be_target){ gc->gc_riov, n };
		d.cd_reply = &gc->gc_rt;
	}
	gr_call_set(rp, gc, GW_RDMA_CALL_POSTED);
	gw_call_get(c);
	c->ca_tp_owned = true;
	rp->rp_ncalls++;
	gc->gc_t0_us = c->ca_submit_us;	/* this hand-off (gw_path_try) */
	rc = be_call_submit(pool, &gc->gc_req, &d, gr_reply_cb, gc);
	if (rc < 0) {
		int err = -rc;

		gr_call_set(rp, gc, GW_RDMA_CALL_IDLE);
		c->ca_tp_owned = false;
		rp->rp_ncalls--;
		gw_call_put(c);		/* the client side still holds one */
		/* Queue full, or the same gateway XID still in flight (a client
		 * retransmission while the cancelled original awaits its reply):
		 * hold until the backend's BE_POOL_ROOM. */
		if (err == ENOBUFS || err == EEXIST) {
			gr_call_drop_bufs(rp, gc);
			return -EAGAIN;		/* BE_POOL_ROOM will say when */
		}
		gr_call_drop_bufs(rp, gc);
		gw_err(rp->rp_info->pi_log, "xid %#x (gw %#x): be_call_submit: %s", c->ca_cxid,
		       c->ca_gxid, strerror(err));
		return -err;
	}
	if (dc.dc_proc == RPCRDMA_NOMSG) {
		gw_stat_add(rp->rp_info->pi_stats, GW_CTR_BYTES_LONG_CALL, c->ca_rec.rcd_len);
	} else {
		gw_stat_add(rp->rp_info->pi_stats, GW_CTR_BYTES_INLINE_CALL, dc.dc_call_inline);
		gw_stat_add(rp->rp_info->pi_stats, GW_CTR_BYTES_READ_CHUNK,
			    c->ca_rec.rcd_len - dc.dc_call_inline);
	}
	gw_debug(rp->rp_info->pi_log, "xid %#x (gw %#x): %s, %u read, %u write, reply chunk %s",
		 c->ca_cxid, c->ca_gxid, dc.dc_proc == RPCRDMA_NOMSG ? "RDMA_NOMSG" : "RDMA_MSG",
		 nreads, dc.dc_nwrites, dc.dc_reply_chunk ? "yes" : "no");
	return 0;
}

static void gr_release(void *tp, struct gw_call *c)
{
	struct gr_path *rp = tp;

	gr_call_done(rp, gr_state(c));
}

static void gr_cancel(void *tp, struct gw_call *c)
{
	struct gr_path *rp = tp;
	struct gw_rdma_call *gc = gr_state(c);

	if (gc->gc_state == GW_RDMA_CALL_REPLIED || gc->gc_state == GW_RDMA_CALL_FAILED) {
		/* finalize from our own callback (error): the backend is done */
		gr_call_done(rp, gc);
		return;
	}
	if (be_call_cancel(&gc->gc_req)) {
		/* Still queued for a credit: gone, never posted. */
		gr_call_done(rp, gc);
		return;
	}
	/* On the wire: the server may still write into the targets until
	 * they are invalidated; the callback (BE_ERR_CANCELLED) says when.
	 * A call the server left unanswered for call_timeout has them
	 * invalidated now, not at a reply that may never come: its buffers
	 * would stay exposed and held for ever.  Orphan first: that callback
	 * may come from inside be_call_abandon(). */
	gr_call_set(rp, gc, GW_RDMA_CALL_ORPHAN);
	if (c->ca_timed_out)
		be_call_abandon(&gc->gc_req);
}

static void gr_pool_event(struct be_pool *pool, enum be_pool_event ev, void *arg)
{
	struct gr_path *rp = arg;

	(void)pool;
	if (rp->rp_destroying)
		return;
	switch (ev) {
	case BE_POOL_UP:
		gw_stat_inc(rp->rp_info->pi_stats, GW_CTR_BACKEND_CONNECTS);
		evtimer_del(rp->rp_grace);
		gw_path_ready(rp->rp_path, true);
		break;
	case BE_POOL_DOWN:
		gw_stat_inc(rp->rp_info->pi_stats, GW_CTR_BACKEND_DISCONNECTS);
		gr_resolve_start(rp);	/* the server may have moved */
		if (be_pool_closed_for_calls(rp->rp_pool) && !be_pool_up(rp->rp_pool)) {
			/* New calls wait in the backend's queue meanwhile. */
			struct timeval tv = { GR_CLOSED_GRACE_MS / 1000, 0 };

			evtimer_add(rp->rp_grace, &tv);
			break;
		}
		if (!be_pool_up(rp->rp_pool))
			gw_path_down(rp->rp_path, GW_WHY_LOST, "RDMA connection lost: %s",
				     be_pool_last_error(rp->rp_pool));
		gw_path_ready(rp->rp_path, be_pool_up(rp->rp_pool));
		break;
	case BE_POOL_ROOM:	/* a refused submit may go now: held calls again */
		gw_path_ready(rp->rp_path, be_pool_up(rp->rp_pool));
		break;
	case BE_POOL_FATAL:
		gw_stat_inc(rp->rp_info->pi_stats, GW_CTR_BACKEND_CONNECT_FAILED);
		gw_err(rp->rp_info->pi_log, "path %s: server refuses RPC-over-RDMA version 1",
		       gw_path_name(rp->rp_path));
		gw_path_ready(rp->rp_path, false);
		gw_path_down(rp->rp_path, GW_WHY_HANDSHAKE, "server refuses RPC-over-RDMA version 1");
		break;
	}
}

/* backend-rdma's words (be_conn.c) -> why the path is down. */
static enum gw_why gr_why_of(const char *why)
{
	if (strstr(why, "no RDMA device"))
		return GW_WHY_NO_DEVICE;
	if (strstr(why, "private data") || strstr(why, "ERR_VERS") || strstr(why, "CONF_RDMA"))
		return GW_WHY_HANDSHAKE;
	return GW_WHY_CONNECT;	/* REJECTED, UNREACHABLE, ADDR/ROUTE_ERROR, timeout... */
}

static void gr_attempt_failed(struct be_pool *pool, const char *why, void *arg)
{
	struct gr_path *rp = arg;

	(void)pool;
	if (rp->rp_destroying)
		return;
	gw_path_down(rp->rp_path, gr_why_of(why), "RDMA: %s", why);
	gr_resolve_start(rp);	/* the next attempts go to its address now */
}

static int gr_getaddrinfo(void *arg, const char *host, const char *port,
			  struct sockaddr_storage *addr, socklen_t *addrlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int rc;

	(void)arg;
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc == 0) {
		memcpy(addr, ai->ai_addr, ai->ai_addrlen);
		*addrlen = ai->ai_addrlen;
		freeaddrinfo(ai);
	}
	return rc;
}

static void gr_resolve_work(void *arg)
{
	struct gr_resolve *rs = &((struct gr_path *)arg)->rp_res;

	rs->rrs_err = rs->rrs_fn(rs->rrs_arg, rs->rrs_host, rs->rrs_port, &rs->rrs_addr,
				 &rs->rrs_addrlen);
}

static void gr_resolve_start(struct gr_path *rp)
{
	const struct cfg_backend *b = rp->rp_info->pi_backend;
	struct gr_resolve *rs = &rp->rp_res;
	int rc;

	if (gw_lookup_running(&rp->rp_lookup) || rp->rp_destroying)
		return;
	memset(rs, 0, sizeof(*rs));
	snprintf(rs->rrs_host, sizeof(rs->rrs_host), "%s", b->cb_host);
	snprintf(rs->rrs_port, sizeof(rs->rrs_port), "%u", b->cb_rdma_port);
	rs->rrs_fn = rp->rp_ra->ra_resolve ? rp->rp_ra->ra_resolve : gr_getaddrinfo;
	rs->rrs_arg = rp->rp_ra->ra_resolve_arg;
	rc = gw_lookup_start(&rp->rp_lookup);
	if (rc != 0) {
		struct timeval tv = { rp->rp_info->pi_cfg->cf_reconnect_ms / 1000,
				      (rp->rp_info->pi_cfg->cf_reconnect_ms % 1000) * 1000 };

		if (rp->rp_pool)	/* re-resolve: keep the address, ask again later */
			return;
		gw_path_down(rp->rp_path, GW_WHY_DNS, "DNS: cannot start the resolver thread: %s",
			     strerror(rc));
		evtimer_add(rp->rp_retry, &tv);
	}
}

/* The name resolved again while the pool exists: a new address is where
 * the pool's next attempts go (logged and counted once per change); a
 * failure keeps the last one, the failed connection says why. */
static void gr_on_reresolved(struct gr_path *rp)
{
	const struct gw_path_info *pi = rp->rp_info;
	const struct cfg_backend *b = pi->pi_backend;
	struct gr_resolve *rs = &rp->rp_res;
	char host[NI_MAXHOST] = "?";

	if (rs->rrs_err != 0) {
		if (rp->rp_dns_failures++ % 30 == 0)
			gw_warn(pi->pi_log, "backend %s: %s: %s; keeping its last address", b->cb_name,
				b->cb_host, gai_strerror(rs->rrs_err));
		return;
	}
	rp->rp_dns_failures = 0;
	if (be_pool_set_addr(rp->rp_pool, (struct sockaddr *)&rs->rrs_addr, rs->rrs_addrlen) <= 0)
		return;
	rp->rp_quar.qt_addr = rs->rrs_addr;	/* quarantine connections made from now */
	rp->rp_quar.qt_addrlen = rs->rrs_addrlen;
	gw_stat_inc(pi->pi_stats, GW_CTR_BACKEND_READDRESSED);
	getnameinfo((struct sockaddr *)&rs->rrs_addr, rs->rrs_addrlen, host, sizeof(host), NULL, 0,
		    NI_NUMERICHOST);
	gw_info(pi->pi_log, "path %s: %s now resolves to %s; next RDMA connections go there",
		gw_path_name(rp->rp_path), b->cb_host, host);
}

/* The name resolved (or not): the connection pool starts connecting, or
 * the path is down for DNS and the name is asked again later. */
static void gr_on_resolved(void *arg)
{
	struct gr_path *rp = arg;
	const struct gw_path_info *pi = rp->rp_info;
	const struct cfg_backend *b = pi->pi_backend;
	struct gr_resolve *rs = &rp->rp_res;
	if (rp->rp_pool) {
		gr_on_reresolved(rp);
		return;
	}
	if (rs->rrs_err == 0) {
		rp->rp_pool = be_pool_new(rp->rp_server->sv_ctx, (struct sockaddr *)&rs->rrs_addr,
					  rs->rrs_addrlen, gr_pool_event, rp);
		if (rp->rp_pool) {
			rp->rp_quar = (struct gw_quar){ .qt_ctx = rp->rp_server->sv_ctx,
							.qt_addr = rs->rrs_addr,
							.qt_addrlen = rs->rrs_addrlen,
							.qt_shared = rp->rp_pool, .qt_path = rp->rp_path };
			be_pool_set_backchannel(rp->rp_pool, gr_bc_cb, rp);
			be_pool_set_failure(rp->rp_pool, gr_attempt_failed, rp);
			rp->rp_dns_failures = 0;
			gw_info(pi->pi_log, "path %s: RPC-over-RDMA to %s port %u, registration %s",
				gw_path_name(rp->rp_path), b->cb_host, b->cb_rdma_port,
				cfg_regmode_str(b->cb_regmode));
			return;
		}
		gw_err(pi->pi_log, "path %s: be_pool_new: %s", gw_path_name(rp->rp_path), strerror(errno));
		gw_path_down(rp->rp_path, GW_WHY_NO_TRANSPORT, "be_pool_new: %s", strerror(errno));
	} else {
		/* First failure and then one in 30 in the log; always in status. */
		if (rp->rp_dns_failures++ % 30 == 0)
			gw_warn(pi->pi_log, "backend %s: %s: %s; retrying every %u ms", b->cb_name,
				b->cb_host, gai_strerror(rs->rrs_err), pi->pi_cfg->cf_reconnect_ms);
		gw_path_down(rp->rp_path, GW_WHY_DNS, "DNS: %.80s: %.60s", b->cb_host,
			     gai_strerror(rs->rrs_err));
	}
	{
		struct timeval tv = { pi->pi_cfg->cf_reconnect_ms / 1000,
				      (pi->pi_cfg->cf_reconnect_ms % 1000) * 1000 };

		evtimer_add(rp->rp_retry, &tv);
	}
}

static void gr_destroy(void *tp)
{
	struct gr_path *rp = tp;

	/* Calls still owned end with BE_ERR_SHUTDOWN callbacks. */
	rp->rp_destroying = true;
	gw_lookup_destroy(&rp->rp_lookup);	/* a name lookup may take a while: waits */
	gw_quar_free(&rp->rp_quar);
	if (rp->rp_pool)
		be_pool_free(rp->rp_pool);
	event_free(rp->rp_retry);
	event_free(rp->rp_grace);
	gr_server_put(rp->rp_ra, rp->rp_server);
	free(rp);
}

/* The pool starts once the name is resolved (gr_on_resolved), from the
 * event loop: nothing here blocks. */
static void *gr_create(struct gw_ctx *gw, struct gw_path *path)
{
	struct gw_rdma *ra = gw_ctx_rdma_arg(gw);
	const struct gw_path_info *pi = gw_path_info(path);
	struct timeval now = { 0, 0 };
	struct gr_path *rp;

	if (!ra)
		return NULL;
	rp = calloc(1, sizeof(*rp));
	if (!rp)
		return NULL;
	rp->rp_ra = ra;
	rp->rp_path = path;
	rp->rp_info = pi;
	rp->rp_lookup.lk_pipe[0] = rp->rp_lookup.lk_pipe[1] = -1;
	rp->rp_retry = evtimer_new(pi->pi_base, gr_retry_cb, rp);
	rp->rp_grace = evtimer_new(pi->pi_base, gr_grace_cb, rp);
	if (!rp->rp_retry || !rp->rp_grace ||
	    gw_lookup_init(&rp->rp_lookup, pi->pi_base, gr_resolve_work, gr_on_resolved, rp) < 0)
		goto err;
	rp->rp_server = gr_server_get(ra, pi);
	if (!rp->rp_server)
		goto err;
	evtimer_add(rp->rp_retry, &now);	/* resolve from the loop */
	return rp;

err:
	gw_lookup_destroy(&rp->rp_lookup);
	if (rp->rp_retry)
		event_free(rp->rp_retry);
	if (rp->rp_grace)
		event_free(rp->rp_grace);
	free(rp);
	return NULL;
}

/* Admin listener and control socket: connections, credits, counters. */
_Static_assert(BE_CTR__COUNT <= GW_TP_BE_CTRS, "gw_tp_info holds every backend counter");
static int gr_info(void *tp, struct gw_tp_info *ti)
{
	struct gr_path *rp = tp;
	const struct be_stats *bs;
	struct be_conn_info ci;
	unsigned n = rp->rp_info->pi_conns;

	if (n > GW_TP_INFO_CONNS)
		n = GW_TP_INFO_CONNS;
	ti->ti_server = rp->rp_server;
	bs = be_ctx_stats(rp->rp_server->sv_ctx);
	memcpy(ti->ti_be_ctr, bs->bs_ctr, sizeof(bs->bs_ctr));
	if (!rp->rp_pool)	/* name not resolved yet: no connection */
		return 0;
	ti->ti_nconns = n;
	for (unsigned i = 0; i < n; i++)
		if (be_pool_conn_info(rp->rp_pool, i, &ci) == 0)
			ti->ti_conn[i] = (struct gw_tp_conn_info){ true, ci.ci_credits, ci.ci_inflight,
								   ci.ci_send_threshold,
								   ci.ci_recv_threshold };
	ti->ti_queued = be_pool_queued(rp->rp_pool);
	ti->ti_inflight = be_pool_inflight(rp->rp_pool);
	return 0;
}

const struct gw_transport_ops gw_transport_rdma = {
	.to_name = "rdma",
	.to_create = gr_create,
	.to_destroy = gr_destroy,
	.to_submit = gr_submit,
	.to_release = gr_release,
	.to_cancel = gr_cancel,
	.to_info = gr_info,
	.to_cb_reply = gr_cb_reply,
};
