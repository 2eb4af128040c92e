// SPDX-License-Identifier: MIT
/*
 * This file contains the NLM lock-owner map (nlm_map.h): the rewrite of
 * NLM calls and replies that keeps NFSv3 locks per client through the
 * gateway, and the release of one client's locks when it reboots.
 *
 * The rules relied on (X/Open "Protocols for Interworking: XNFS", NLM
 * chapters; nlm4.x and nsm.x in the spec folder): a lock owner is the
 * pair (host, svid) - the oh is opaque and the Linux lockd keys its
 * owners by host and svid; an UNLOCK of offset 0, length 0 releases the
 * owner's every lock on the file; a rebooted host's statd sends SM_NOTIFY
 * to each host that monitored it, and the monitor then drops the locks of
 * that host (NLM FREE_ALL says the same in NLM).  The server's lockd only
 * knows the gateway as the host, so the gateway does that drop itself,
 * with one UNLOCK per (file handle, mapped svid) it saw granted.
 *
 * Bounded: GW_NLM_MAX_HOSTS client hosts, GW_NLM_LOCKS_PER_HOST tracked
 * locks each, all allocated at start.  A host with no tracked lock is the
 * one reused when the table is full.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "call.h"
#include "chunking.h"
#include "client.h"
#include "config.h"
#include "ctx.h"
#include "log.h"
#include "nlm_grant.h"
#include "nlm_map.h"
#include "nlm_share.h"
#include "pool.h"
#include "nlm_notify.h"

/* The credential of the calls the gateway makes itself to lockd (UNLOCK,
 * UNSHARE of a rebooted client): AUTH_SYS root, as lockd wants it. */
const struct rpc_auth_sys gw_nlm_cred = { .as_namelen = 10, .as_machinename = "rpcrdma-gw" };

#define NM_SVID_MASK	((1u << GW_NLM_SVID_BITS) - 1)
#define NM_XDR_MAX	1024	/* LM_MAXSTRLEN, MAXNETOBJ_SZ (nlm4.x) */
#define NM_NSM_NOTIFY	6	/* SM_NOTIFY (nsm.x) */

/* NLM procedures (nlm4.x; v1 has 1-16, v3 and v4 add 20-23). */
enum {
	NM_TEST = 1, NM_LOCK, NM_CANCEL, NM_UNLOCK, NM_GRANTED, NM_TEST_MSG, NM_LOCK_MSG,
	NM_CANCEL_MSG, NM_UNLOCK_MSG, NM_GRANTED_MSG, NM_NM_LOCK = 22, NM_FREE_ALL = 23
};

struct gw_nlm_lock {			/* a lock the server granted to a mapped owner */
	int32_t nl_svid;		/* mapped */
	uint32_t nl_vers;
	uint8_t nl_fhlen;
	uint8_t nl_fh[GW_NLM_FH_MAX];
};

struct gw_nlm_host {
	bool nh_used;
	char nh_name[48];		/* client address, no port */
	uint64_t nh_seq;		/* last use (LRU among hosts with no lock) */
	unsigned nh_nlocks;
	struct gw_nlm_lock nh_locks[GW_NLM_LOCKS_PER_HOST];
};

struct gw_nlm {
	struct gw_stats *nm_st;
	const struct gw_log *nm_lg;
	gw_nlm_send_fn nm_send;
	void *nm_send_arg;
	uint64_t nm_seq;
	uint32_t nm_xid;		/* XIDs of the UNLOCKs it builds */
	/* gateway glue (gw_nlm_attach) */
	struct gw_ctx *nm_gw;
	struct gw_client *nm_cl;	/* the UNLOCKs' client: replies come back here */
	struct event *nm_ev;		/* finishes delivered replies from the loop */
	struct gw_ng *nm_ng;		/* the servers' grants on their way to clients */
	struct gw_sn *nm_sn;		/* the servers' reboots on their way to clients */
	uint64_t nm_epoch;		/* the last server reboot seen (gw_nlm_names) */
	struct gw_out *nm_done[64];
	unsigned nm_ndone;
	unsigned nm_lo, nm_hi;		/* this worker's slots (gw_nlm_set_slice) */
	struct gw_nlm_names *nm_names;	/* every worker's hosts, or NULL (one worker) */
	struct gw_nsh *nm_nsh;		/* the hosts' shares (nlm_share.c), by slot */
	struct gw_pool *nm_pool;	/* buffers for re-encoded SHARE calls */
	struct gw_nlm_host nm_hosts[GW_NLM_MAX_HOSTS];
};

/* An alock (nlm_lock, nlm4_lock) as far as the map needs it. */
struct gw_nlm_alock {
	struct xdr_span na_fh;
	size_t na_svid_pos;
	int32_t na_svid;
	uint64_t na_off, na_len;
};

struct gw_nlm *gw_nlm_new(struct gw_stats *st, const struct gw_log *lg)
{
	struct gw_nlm *nm = calloc(1, sizeof(*nm));

	if (!nm)
		return NULL;
	nm->nm_nsh = gw_nsh_new(st, lg);
	if (!nm->nm_nsh) {
		free(nm);
		return NULL;
	}
	nm->nm_st = st;
	nm->nm_lg = lg;
	nm->nm_xid = 0x6e6c0000u;
	nm->nm_hi = GW_NLM_MAX_HOSTS;
	return nm;
}

struct gw_nlm_names {
	pthread_mutex_t nn_mu;
	uint64_t nn_epoch;		/* server reboots: each worker forgets its locks */
	char nn_name[GW_NLM_MAX_HOSTS][48];
};

struct gw_nlm_names *gw_nlm_names_new(void)
{
	struct gw_nlm_names *nn = calloc(1, sizeof(*nn));

	if (nn && pthread_mutex_init(&nn->nn_mu, NULL) != 0) {
		free(nn);
		return NULL;
	}
	return nn;
}

void gw_nlm_names_free(struct gw_nlm_names *nn)
{
	if (!nn)
		return;
	pthread_mutex_destroy(&nn->nn_mu);
	free(nn);
}

static void nm_names_set(struct gw_nlm_names *nn, unsigned slot, const char *name)
{
	if (!nn)
		return;
	pthread_mutex_lock(&nn->nn_mu);
	snprintf(nn->nn_name[slot], sizeof(nn->nn_name[slot]), "%s", name);
	pthread_mutex_unlock(&nn->nn_mu);
}

static bool nm_names_get(struct gw_nlm_names *nn, unsigned slot, char *out, size_t len)
{
	if (!nn || slot >= GW_NLM_MAX_HOSTS)
		return false;
	pthread_mutex_lock(&nn->nn_mu);
	snprintf(out, len, "%s", nn->nn_name[slot]);
	pthread_mutex_unlock(&nn->nn_mu);
	return out[0] != '\0';
}

/* Workers: all reach the server's lockd from one address, so worker index
 * of count maps hosts only to its own share of the slots (svid' spaces
 * never overlap). */
static void gw_nlm_set_slice(struct gw_nlm *nm, unsigned index, unsigned count)
{
	nm->nm_lo = index * GW_NLM_MAX_HOSTS / count;
	nm->nm_hi = (index + 1) * GW_NLM_MAX_HOSTS / count;
}

void gw_nlm_free(struct gw_nlm *nm)
{
	if (nm)
		gw_nsh_free(nm->nm_nsh);
	free(nm);
}

void gw_nlm_set_pool(struct gw_nlm *nm, struct gw_pool *pool)
{
	nm->nm_pool = pool;
}

void gw_nlm_set_sender(struct gw_nlm *nm, gw_nlm_send_fn fn, void *arg)
{
	nm->nm_send = fn;
	nm->nm_send_arg = arg;
}

/* ---- the table ---- */

static unsigned nm_slot(const struct gw_nlm *nm, const struct gw_nlm_host *h)
{
	return (unsigned)(h - nm->nm_hosts);
}

static struct gw_nlm_host *nm_host(struct gw_nlm *nm, const char *name, bool create)
{
	struct gw_nlm_host *free_h = NULL, *lru = NULL;

	for (unsigned i = nm->nm_lo; i < nm->nm_hi; i++) {
		struct gw_nlm_host *h = &nm->nm_hosts[i];

		if (!h->nh_used) {
			if (!free_h)
				free_h = h;
		} else if (strcmp(h->nh_name, name) == 0) {
			h->nh_seq = ++nm->nm_seq;
			return h;
		} else if (h->nh_nlocks == 0 && gw_nsh_count(nm->nm_nsh, i) == 0 &&
			   (!lru || h->nh_seq < lru->nh_seq)) {
			lru = h;
		}
	}
	if (!create || strlen(name) >= sizeof(free_h->nh_name))
		return NULL;
	if (!free_h)
		free_h = lru;	/* nothing of its owners (locks, shares) is tracked on the server */
	if (!free_h)
		return NULL;
	memset(free_h, 0, sizeof(*free_h));
	free_h->nh_used = true;
	snprintf(free_h->nh_name, sizeof(free_h->nh_name), "%s", name);
	free_h->nh_seq = ++nm->nm_seq;
	nm_names_set(nm->nm_names, nm_slot(nm, free_h), name);
	return free_h;
}

/* The client's owner of mapped svid m, or NULL when m is no mapped svid. */
static struct gw_nlm_host *nm_owner(struct gw_nlm *nm, int32_t m, int32_t *svid)
{
	uint32_t slot = ((uint32_t)m >> GW_NLM_SVID_BITS);

	if (m < 0 || slot <= nm->nm_lo || slot > nm->nm_hi || !nm->nm_hosts[slot - 1].nh_used)
		return NULL;
	*svid = (int32_t)((uint32_t)m & NM_SVID_MASK);
	return &nm->nm_hosts[slot - 1];
}

unsigned gw_nlm_host_locks(const struct gw_nlm *nm, const char *host)
{
	for (unsigned i = 0; i < GW_NLM_MAX_HOSTS; i++)
		if (nm->nm_hosts[i].nh_used && strcmp(nm->nm_hosts[i].nh_name, host) == 0)
			return nm->nm_hosts[i].nh_nlocks;
	return 0;
}

/* ---- XDR ---- */

static bool nm_get_alock(struct xdr_cur *xc, uint32_t vers, struct gw_nlm_alock *a)
{
	struct xdr_span s;
	uint32_t o, l;

	if (!xdr_get_string(xc, &s, NM_XDR_MAX) || !xdr_get_opaque(xc, &a->na_fh, NM_XDR_MAX) ||
	    !xdr_get_opaque(xc, &s, NM_XDR_MAX))
		return false;
	a->na_svid_pos = xdr_pos(xc);
	if (!xdr_get_i32(xc, &a->na_svid))
		return false;
	if (vers == 4)
		return xdr_get_u64(xc, &a->na_off) && xdr_get_u64(xc, &a->na_len);
	if (!xdr_get_u32(xc, &o) || !xdr_get_u32(xc, &l))
		return false;
	a->na_off = o;
	a->na_len = l;
	return true;
}

/* Position xc (at the arguments) on the alock of proc; false: no alock. */
static bool nm_to_alock(struct xdr_cur *xc, uint32_t proc)
{
	struct xdr_span cookie;
	uint32_t b;

	switch (proc) {
	case NM_TEST: case NM_TEST_MSG:		/* cookie, exclusive */
	case NM_GRANTED: case NM_GRANTED_MSG:	/* nlm4_testargs too */
		return xdr_get_opaque(xc, &cookie, NM_XDR_MAX) && xdr_get_u32(xc, &b);
	case NM_LOCK: case NM_LOCK_MSG: case NM_NM_LOCK:
	case NM_CANCEL: case NM_CANCEL_MSG:	/* cookie, block, exclusive */
		return xdr_get_opaque(xc, &cookie, NM_XDR_MAX) && xdr_get_u32(xc, &b) &&
		       xdr_get_u32(xc, &b);
	case NM_UNLOCK: case NM_UNLOCK_MSG:	/* cookie */
		return xdr_get_opaque(xc, &cookie, NM_XDR_MAX);
	default:
		return false;
	}
}

static bool nm_call_alock(const struct gw_rec *rec, size_t args_pos, uint32_t vers, uint32_t proc,
			  struct xdr_cur *xc, struct gw_nlm_alock *a)
{
	xdr_cur_init(xc, rec->rcd_iov, rec->rcd_niov);
	return xdr_seek(xc, args_pos) && nm_to_alock(xc, proc) && nm_get_alock(xc, vers, a);
}

static void nm_iov_put_be32(const struct iovec *iov, unsigned niov, size_t off, uint32_t v)
{
	uint8_t b[4];
	unsigned k = 0;

	chk_put_be32(b, v);
	for (unsigned i = 0; i < niov && k < 4; i++) {
		size_t l = iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		for (; off < l && k < 4; off++)
			((uint8_t *)iov[i].iov_base)[off] = b[k++];
		off = 0;
	}
}

/* ---- calls ---- */

static void nm_map_owner(struct gw_nlm *nm, const char *host, uint32_t vers, uint32_t proc,
			 struct gw_rec *rec, size_t args_pos)
{
	struct gw_nlm_alock a;
	struct gw_nlm_host *h;
	struct xdr_cur xc;

	if (!nm_call_alock(rec, args_pos, vers, proc, &xc, &a))
		return;	/* the server answers what it cannot decode */
	if (a.na_svid < 0 || (uint32_t)a.na_svid > NM_SVID_MASK) {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_UNMAPPED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, host, "NLM from %s: svid %d above 2^%d: "
			      "sent unmapped (may meet another client's owner)", host, a.na_svid,
			      GW_NLM_SVID_BITS);
		return;
	}
	h = nm_host(nm, host, true);
	if (!h) {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_UNMAPPED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, host, "NLM from %s: %u client hosts with "
			      "locks: owner sent unmapped", host, GW_NLM_MAX_HOSTS);
		return;
	}
	gw_rec_put_be32(rec, a.na_svid_pos, (nm_slot(nm, h) + 1) << GW_NLM_SVID_BITS |
			(uint32_t)a.na_svid);
	gw_stat_inc(nm->nm_st, GW_CTR_NLM_MAPPED);
}

/* One UNLOCK (offset 0, length 0: every lock of the owner on the file,
 * nlm4.x nlm4_unlockargs) for a tracked lock of host h. */
static bool nm_release_one(struct gw_nlm *nm, const struct gw_nlm_host *h,
			   const struct gw_nlm_lock *l)
{
	uint8_t buf[GW_NLM_REL_MAX], oh[4];
	struct xdr_enc xe;

	chk_put_be32(oh, (uint32_t)l->nl_svid);
	xdr_enc_init(&xe, buf, sizeof(buf));
	rpc_call_encode(&xe, ++nm->nm_xid, CFG_PROG_NLM, l->nl_vers, NM_UNLOCK, &gw_nlm_cred);
	xdr_put_opaque(&xe, "gwrl", 4);			/* cookie */
	xdr_put_opaque(&xe, h->nh_name, (uint32_t)strlen(h->nh_name));	/* caller_name */
	xdr_put_opaque(&xe, l->nl_fh, l->nl_fhlen);
	xdr_put_opaque(&xe, oh, sizeof(oh));
	xdr_put_u32(&xe, (uint32_t)l->nl_svid);
	if (l->nl_vers == 4) {
		xdr_put_u64(&xe, 0);
		xdr_put_u64(&xe, 0);
	} else {
		xdr_put_u32(&xe, 0);
		xdr_put_u32(&xe, 0);
	}
	return xe.xe_err == XDR_OK && nm->nm_send && nm->nm_send(nm->nm_send_arg, buf, xe.xe_len);
}

/* The client host rebooted (RFC 1813 does not say; the NSM protocol
 * does: the monitor drops the host's locks): UNLOCK what it holds. */
static void nm_release_host(struct gw_nlm *nm, const char *host, const char *why)
{
	struct gw_nlm_host *h = nm_host(nm, host, false);
	unsigned sent = 0, failed = 0, shares, sfailed;

	gw_stat_inc(nm->nm_st, GW_CTR_NLM_REBOOTS);
	if (!h) {
		gw_log_client(nm->nm_lg, CFG_LOG_INFO, host, "NLM: %s from %s: no lock of it "
			      "went through the gateway", why, host);
		return;
	}
	for (unsigned i = 0; i < h->nh_nlocks; i++) {
		if (nm_release_one(nm, h, &h->nh_locks[i]))
			sent++;
		else
			failed++;
	}
	h->nh_nlocks = 0;
	shares = gw_nsh_release(nm->nm_nsh, nm_slot(nm, h), host, &nm->nm_xid, nm->nm_send,
				nm->nm_send_arg, &sfailed);
	failed += sfailed;
	gw_stat_add(nm->nm_st, GW_CTR_NLM_RELEASE_FAILED, failed);
	gw_log_client(nm->nm_lg, CFG_LOG_INFO, host, "NLM: %s from %s: releasing its %u lock(s) "
		      "and %u share(s) on the server%s", why, host, sent, shares,
		      failed ? " (some could not be sent)" : "");
}

/* SHARE, UNSHARE: the call re-encoded with the host's oh' (nlm_share.c says
 * why) into a buffer of the pool; never forwarded as it came. */
static enum gw_nlm_act nm_share_call(struct gw_nlm *nm, const char *host, uint32_t proc,
				     struct gw_rec *rec, size_t args_pos)
{
	struct gw_nlm_host *h = nm_host(nm, host, true);
	struct gw_buf *b = h && nm->nm_pool ? gw_buf_get(nm->nm_pool) : NULL;
	size_t len = 0;

	if (!b) {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_SHARE_REFUSED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, host, "NLM share call from %s: %s: answered "
			      "SYSTEM_ERR", host, h ? "no buffer" : "every client slot holds locks");
		return GW_NLM_REFUSE;
	}
	if (gw_nsh_map_call(nm->nm_nsh, host, nm_slot(nm, h), proc, rec, args_pos, b->gb_data,
			    b->gb_size, &len) != GW_NSH_MAPPED) {
		gw_buf_put(nm->nm_pool, b);
		return GW_NLM_REFUSE;
	}
	b->gb_used = (uint32_t)len;
	gw_rec_release(nm->nm_pool, rec);
	rec->rcd_iov[0] = (struct iovec){ b->gb_data, len };
	rec->rcd_buf[0] = b;
	rec->rcd_niov = 1;
	rec->rcd_len = len;
	gw_stat_add(nm->nm_st, GW_CTR_BYTES_COPIED, len);
	return GW_NLM_FORWARD;
}

enum gw_nlm_act gw_nlm_on_call(struct gw_nlm *nm, const char *host, uint32_t prog, uint32_t vers,
			       uint32_t proc, struct gw_rec *rec, size_t args_pos)
{
	if (prog == CFG_PROG_NSM) {
		if (vers != 1 || proc != NM_NSM_NOTIFY)
			return GW_NLM_FORWARD;
		/* SM_NOTIFY comes from the rebooted host's statd (nsm.x): the
		 * sender is the client; the server's statd only knows the
		 * gateway, so the notification goes no further. */
		nm_release_host(nm, host, "SM_NOTIFY");
		return GW_NLM_ANSWER;
	}
	if (prog != CFG_PROG_NLM)
		return GW_NLM_FORWARD;
	if (proc == NM_FREE_ALL && vers >= 3) {
		/* Forwarded, FREE_ALL would drop every client's locks: the
		 * server's lockd knows one host, the gateway. */
		nm_release_host(nm, host, "FREE_ALL");
		return GW_NLM_ANSWER;
	}
	if ((proc == GW_NSH_PROC_SHARE || proc == GW_NSH_PROC_UNSHARE) && vers >= 3)
		return nm_share_call(nm, host, proc, rec, args_pos);
	if ((proc >= NM_TEST && proc <= NM_UNLOCK_MSG && proc != NM_GRANTED) ||
	    (proc == NM_NM_LOCK && vers >= 3))
		nm_map_owner(nm, host, vers, proc, rec, args_pos);
	return GW_NLM_FORWARD;
}

/* ---- replies ---- */

static void nm_track(struct gw_nlm *nm, const char *host, const struct gw_nlm_alock *a,
		     const struct xdr_cur *xc, uint32_t vers, bool granted_lock)
{
	struct gw_nlm_host *h;
	uint8_t fh[GW_NLM_FH_MAX];
	int32_t svid;
	unsigned i;

	h = nm_owner(nm, a->na_svid, &svid);
	if (!h || a->na_fh.xs_len > GW_NLM_FH_MAX)
		return;
	xdr_span_copy(xc, &a->na_fh, fh, sizeof(fh));
	for (i = 0; i < h->nh_nlocks; i++) {
		const struct gw_nlm_lock *l = &h->nh_locks[i];

		if (l->nl_svid == a->na_svid && l->nl_fhlen == a->na_fh.xs_len &&
		    memcmp(l->nl_fh, fh, l->nl_fhlen) == 0)
			break;
	}
	if (!granted_lock) {	/* an UNLOCK of the whole file: nothing left of it */
		if (i < h->nh_nlocks)
			h->nh_locks[i] = h->nh_locks[--h->nh_nlocks];
		return;
	}
	if (i < h->nh_nlocks)
		return;
	if (h->nh_nlocks == GW_NLM_LOCKS_PER_HOST) {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_TRACK_FULL);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, host, "NLM: %s holds locks on %u files: this "
			      "one is not released if it reboots", host, GW_NLM_LOCKS_PER_HOST);
		return;
	}
	h->nh_locks[h->nh_nlocks++] = (struct gw_nlm_lock){
		.nl_svid = a->na_svid, .nl_vers = vers, .nl_fhlen = (uint8_t)a->na_fh.xs_len };
	memcpy(h->nh_locks[h->nh_nlocks - 1].nl_fh, fh, a->na_fh.xs_len);
}

void gw_nlm_on_reply(struct gw_nlm *nm, const char *host, uint32_t vers, uint32_t proc,
		     const struct gw_rec *call, size_t args_pos, const struct iovec *iov,
		     unsigned niov)
{
	struct rpc_reply_hdr r;
	struct gw_nlm_alock a;
	struct xdr_cur xc, cc;
	struct xdr_span cookie;
	uint32_t stat, b;
	int32_t m, svid;

	if ((proc == GW_NSH_PROC_SHARE || proc == GW_NSH_PROC_UNSHARE) && vers >= 3) {
		gw_nsh_on_reply(nm->nm_nsh, host, vers, proc, call, args_pos, iov, niov);
		return;
	}
	if (proc != NM_TEST && proc != NM_LOCK && proc != NM_UNLOCK && proc != NM_NM_LOCK)
		return;
	xdr_cur_init(&xc, iov, niov);
	if (!rpc_reply_decode(&xc, &r) || r.rr_stat != RPC_MSG_ACCEPTED ||
	    r.rr_accept_stat != RPC_SUCCESS || !xdr_get_opaque(&xc, &cookie, NM_XDR_MAX) ||
	    !xdr_get_u32(&xc, &stat))
		return;
	if (proc == NM_TEST) {
		/* nlm4_testrply: DENIED carries the holder {exclusive, svid, ...};
		 * the holder's svid as its client sent it (X/Open NLM TEST). */
		size_t pos;

		if (stat != 1 || !xdr_get_u32(&xc, &b))
			return;
		pos = xdr_pos(&xc);
		if (!xdr_get_i32(&xc, &m) || !nm_owner(nm, m, &svid))
			return;
		nm_iov_put_be32(iov, niov, pos, (uint32_t)svid);
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_HOLDER_MAPPED);
		return;
	}
	if (stat != 0 || !nm_call_alock(call, args_pos, vers, proc, &cc, &a))
		return;	/* only a GRANTED changes what the client holds */
	if (proc == NM_UNLOCK && (a.na_off != 0 || a.na_len != 0))
		return;	/* part of a file: the owner may hold the rest */
	nm_track(nm, host, &a, &cc, vers, proc != NM_UNLOCK);
}

/* ---- gateway glue: the UNLOCKs go through gw_on_record as the calls of
 * an internal client, and their replies end in nm_done_cb ---- */

static void nm_done_cb(evutil_socket_t fd, short what, void *arg)
{
	struct gw_nlm *nm = arg;

	(void)fd;
	(void)what;
	while (nm->nm_ndone) {
		struct gw_out *o = nm->nm_done[--nm->nm_ndone];
		struct rpc_reply_hdr r;
		struct xdr_cur xc;
		struct xdr_span cookie = { 0, 0 };
		uint32_t stat = ~0u;
		char ck[4] = { 0 };
		bool share;

		xdr_cur_init(&xc, o->ou_iov, o->ou_niov);
		if (rpc_reply_decode(&xc, &r) && r.rr_stat == RPC_MSG_ACCEPTED &&
		    r.rr_accept_stat == RPC_SUCCESS && xdr_get_opaque(&xc, &cookie, NM_XDR_MAX))
			xdr_get_u32(&xc, &stat);
		share = cookie.xs_len == 4 && xdr_span_copy(&xc, &cookie, ck, 4) == 4 &&
			memcmp(ck, GW_NSH_COOKIE, 4) == 0;	/* an UNSHARE's, not an UNLOCK's */
		gw_stat_inc(nm->nm_st, stat != 0 ? GW_CTR_NLM_RELEASE_FAILED :
			    share ? GW_CTR_NLM_SHARE_RELEASED : GW_CTR_NLM_RELEASED);
		if (stat != 0)
			gw_warn(nm->nm_lg, "NLM: release %s answered %d", share ? "UNSHARE" : "UNLOCK",
				(int)stat);
		gw_on_out_done(nm->nm_cl, o);
	}
}

static void nm_deliver(void *arg, struct gw_out *o)
{
	struct gw_nlm *nm = arg;

	/* Never finalize from here (a transport callback): from the loop. */
	if (nm->nm_ndone < sizeof(nm->nm_done) / sizeof(nm->nm_done[0]))
		nm->nm_done[nm->nm_ndone++] = o;
	if (nm->nm_ev)
		event_active(nm->nm_ev, 0, 0);
	else
		nm_done_cb(-1, 0, nm);
}

static void nm_update(void *arg) { (void)arg; }

static void nm_info(void *arg, struct gw_client_info *ci)
{
	(void)arg;
	snprintf(ci->gci_name, sizeof(ci->gci_name), "nlm-release");
}

static const struct gw_client_ops nm_client_ops = {
	.cop_deliver = nm_deliver, .cop_update = nm_update, .cop_info = nm_info,
};

static bool nm_send(void *arg, const uint8_t *msg, size_t len)
{
	struct gw_nlm *nm = arg;
	struct gw_ctx *gw = nm->nm_gw;
	struct gw_buf *b;
	struct gw_rec rec;

	/* Opened at the first release, so a gateway whose clients never
	 * reboot lists no client of its own. */
	if (!nm->nm_cl)
		nm->nm_cl = gw_client_open(gw, &nm_client_ops, nm, "nlm-release",
					   0x4e4c4d0000000001ull);	/* never a socket's */
	if (!nm->nm_cl)
		return false;

	/* Bounded by nm_done: every UNLOCK in flight has its place there. */
	if (gw_client_ncalls(nm->nm_cl) + nm->nm_ndone >= sizeof(nm->nm_done) / sizeof(nm->nm_done[0]) ||
	    !gw_ctx_calls_avail(gw) || !(b = gw_buf_get(gw->gw_p.gp_pool)))
		return false;
	if (len > b->gb_size) {
		gw_buf_put(gw->gw_p.gp_pool, b);
		return false;
	}
	memcpy(b->gb_data, msg, len);	/* a few hundred bytes, once per reboot and lock */
	b->gb_used = (uint32_t)len;
	gw_rec_init(&rec);
	rec.rcd_iov[0] = (struct iovec){ b->gb_data, len };
	rec.rcd_buf[0] = b;
	rec.rcd_niov = 1;
	rec.rcd_len = len;
	return gw_on_record(nm->nm_cl, &rec) == 0;
}

int gw_nlm_attach(struct gw_ctx *gw)
{
	struct gw_nlm *nm = gw_nlm_new(gw->gw_p.gp_stats, gw->gw_p.gp_log);

	if (!nm)
		return -ENOMEM;
	nm->nm_gw = gw;
	if (gw->gw_p.gp_nworkers > 1)
		gw_nlm_set_slice(nm, gw->gw_p.gp_worker, gw->gw_p.gp_nworkers);
	nm->nm_names = gw->gw_p.gp_nlm_names;
	if (gw->gw_p.gp_base) {
		nm->nm_ev = event_new(gw->gw_p.gp_base, -1, 0, nm_done_cb, nm);
		nm->nm_ng = gw_ng_new(gw->gw_p.gp_base, gw->gw_p.gp_stats, gw->gw_p.gp_log);
		nm->nm_sn = gw_sn_new(gw->gw_p.gp_base, gw->gw_p.gp_stats, gw->gw_p.gp_log);
	}
	if (gw->gw_p.gp_base && (!nm->nm_ev || !nm->nm_ng || !nm->nm_sn)) {
		if (nm->nm_ev)
			event_free(nm->nm_ev);
		gw_ng_free(nm->nm_ng);
		gw_sn_free(nm->nm_sn);
		gw_nlm_free(nm);
		return -ENOMEM;
	}
	gw_nlm_set_sender(nm, nm_send, nm);
	nm->nm_pool = gw->gw_p.gp_pool;
	gw->gw_nlm = nm;
	return 0;
}

void gw_nlm_detach(struct gw_ctx *gw)
{
	struct gw_nlm *nm = gw->gw_nlm;

	if (!nm)
		return;
	nm->nm_ndone = 0;	/* their calls end with the client */
	if (nm->nm_cl)
		gw_client_close(nm->nm_cl);
	if (nm->nm_ev)
		event_free(nm->nm_ev);
	gw_ng_free(nm->nm_ng);
	gw_sn_free(nm->nm_sn);
	gw_nlm_free(nm);
	gw->gw_nlm = NULL;
}

/* The client's host: its name without ":port" ("[v6]:port" too). */
static const char *nm_host_of(const struct gw_call *c, char *buf, size_t len)
{
	const char *n = gw_client_name(c->ca_cl), *colon = strrchr(n, ':');
	size_t l = colon ? (size_t)(colon - n) : strlen(n);

	if (n[0] == '[' && l >= 2 && n[l - 1] == ']') {
		n++;
		l -= 2;
	}
	if (l >= len)
		l = len - 1;
	memcpy(buf, n, l);
	buf[l] = '\0';
	return buf;
}

struct gw_ng *gw_nlm_grants(struct gw_nlm *nm)
{
	return nm->nm_ng;
}

struct gw_sn *gw_nlm_notifier(struct gw_nlm *nm)
{
	return nm->nm_sn;
}

/* Is host (an address) one of the servers?  Compared with the backends'
 * addresses as configured: a backend named by DNS name never matches. */
static bool nm_from_backend(const struct gw_ctx *gw, const char *host)
{
	if (strncmp(host, "::ffff:", 7) == 0 && strchr(host + 7, '.'))
		host += 7;	/* v4-mapped: the backend is written as IPv4 */
	for (unsigned i = 0; i < CFG_MAX_BACKENDS; i++)
		if (gw->gw_backends[i] && strcmp(gw->gw_backends[i]->bk_cfg->cb_host, host) == 0)
			return true;
	return false;
}

/* A GRANTED_MSG (XNFS NLM: the server grants a blocked lock, answer in
 * GRANTED_RES) sent by the server's lockd to the gateway, the host it knows:
 * for an owner the gateway mapped, restored and relayed to that client's
 * NLM service, answered here (void, as a _MSG call is).  Anything else goes
 * the route as before.  Only a server may grant: a client that forges one
 * would make another client believe it holds a lock. */
static enum gw_nlm_act nm_grant(struct gw_ctx *gw, struct gw_call *c, const char *from)
{
	struct gw_nlm *nm = gw->gw_nlm;
	uint32_t vers = c->ca_hdr.rc_vers;
	struct gw_nlm_alock a;
	struct gw_nlm_host *h;
	struct xdr_cur xc;
	char to[48];
	int32_t svid;

	if (!nm->nm_ng || !nm_call_alock(&c->ca_rec, c->ca_hdr.rc_args_pos, vers, NM_GRANTED_MSG,
					 &xc, &a) ||
	    a.na_svid < 0 || ((uint32_t)a.na_svid >> GW_NLM_SVID_BITS) == 0)
		return GW_NLM_FORWARD;	/* no owner the gateway mapped */
	if (!nm_from_backend(gw, from)) {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_GRANT_REFUSED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, from, "NLM: GRANTED_MSG from %s, which is no "
			      "backend: dropped", from);
		return GW_NLM_ANSWER;
	}
	h = nm_owner(nm, a.na_svid, &svid);
	if (h) {
		nm_track(nm, h->nh_name, &a, &xc, vers, true);	/* released if the client reboots */
		snprintf(to, sizeof(to), "%s", h->nh_name);
	} else if (nm_names_get(nm->nm_names, ((uint32_t)a.na_svid >> GW_NLM_SVID_BITS) - 1, to,
				sizeof(to))) {
		/* another worker's client: relayed from here, not tracked */
		svid = (int32_t)((uint32_t)a.na_svid & NM_SVID_MASK);
	} else {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_GRANT_FAILED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, from, "NLM: GRANTED_MSG from %s for svid %#x: "
			      "no client holds it", from, (unsigned)a.na_svid);
		return GW_NLM_ANSWER;
	}
	gw_rec_put_be32(&c->ca_rec, a.na_svid_pos, (uint32_t)svid);
	gw_ng_relay(nm->nm_ng, to, vers, c->ca_rec.rcd_iov, c->ca_rec.rcd_niov, c->ca_rec.rcd_len);
	return GW_NLM_ANSWER;
}

/* ---- a server's reboot ---- */

static void nm_forget_all(struct gw_nlm *nm)
{
	for (unsigned i = nm->nm_lo; i < nm->nm_hi; i++) {
		nm->nm_hosts[i].nh_nlocks = 0;
		gw_nsh_forget(nm->nm_nsh, i);	/* shares went with the locks */
	}
}

/* Another worker saw a server reboot since this one last looked. */
static void nm_epoch_check(struct gw_nlm *nm)
{
	uint64_t e;

	if (!nm->nm_names)
		return;
	e = __atomic_load_n(&nm->nm_names->nn_epoch, __ATOMIC_ACQUIRE);
	if (e != nm->nm_epoch) {
		nm->nm_epoch = e;
		nm_forget_all(nm);
	}
}

/* SM_NOTIFY from a backend's address: the server rebooted (nsm.x: its
 * statd notifies each host its lockd monitored - the gateway only) and
 * its lockd lost every lock.  The gateway forgets the locks it tracked (a
 * later client reboot would release what the server no longer has; every
 * worker's, through the epoch) and notifies every client host in the
 * table (every worker's): each that sent a mapped NLM call and kept its
 * slot, not only those with tracked locks - a blocked lock, one granted on
 * another worker or past the tracking cap is held or awaited all the same,
 * and a host that monitors no such server ignores the call.  At most
 * GW_NLM_MAX_HOSTS, each once.  Their lockd then reclaims (LOCK with
 * reclaim set) through the gateway, mapped like any other call. */
static enum gw_nlm_act nm_server_reboot(struct gw_ctx *gw, struct xdr_cur *xc, const char *from)
{
	struct gw_nlm *nm = gw->gw_nlm;
	char mon[256], name[48];
	unsigned n = 0;
	int32_t state;

	if (!nm->nm_sn || !xc || !gw_sn_decode(xc, mon, sizeof(mon), &state)) {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_NOTIFY_FAILED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, from, "NLM: SM_NOTIFY from server %s "
			      "undecodable (or mon_name over 255 bytes): not relayed", from);
		return GW_NLM_ANSWER;
	}
	for (char *p = mon; *p; p++)
		if (*p < 0x21 || *p > 0x7e)
			*p = '?';	/* logged */
	gw_stat_inc(nm->nm_st, GW_CTR_NLM_SERVER_REBOOT);
	nm_forget_all(nm);
	if (nm->nm_names)
		nm->nm_epoch = __atomic_add_fetch(&nm->nm_names->nn_epoch, 1, __ATOMIC_ACQ_REL);
	for (unsigned i = 0; i < GW_NLM_MAX_HOSTS; i++) {
		if (nm->nm_names ? !nm_names_get(nm->nm_names, i, name, sizeof(name))
				 : !nm->nm_hosts[i].nh_used)
			continue;
		n += gw_sn_queue(nm->nm_sn, nm->nm_names ? name : nm->nm_hosts[i].nh_name, state);
	}
	gw_log_client(nm->nm_lg, CFG_LOG_WARN, from, "NLM: SM_NOTIFY from server %s (mon_name %s, "
		      "state %d): it rebooted and lost its locks; notifying %u client host(s) to "
		      "reclaim them", from, mon, (int)state, n);
	return GW_NLM_ANSWER;
}

enum gw_nlm_act gw_nlm_call(struct gw_ctx *gw, struct gw_call *c, struct xdr_cur *xc)
{
	const struct rpc_call_hdr *hdr = &c->ca_hdr;
	enum gw_nlm_act act;
	char host[48];

	if (!gw->gw_nlm || !c->ca_cl || c->ca_cl == gw->gw_nlm->nm_cl)
		return GW_NLM_FORWARD;
	nm_epoch_check(gw->gw_nlm);
	if (hdr->rc_prog == CFG_PROG_NLM && hdr->rc_proc == NM_GRANTED_MSG)
		return nm_grant(gw, c, nm_host_of(c, host, sizeof(host)));
	/* Only a server's reboot fans out; from anyone else it is that
	 * host's own (gw_nlm_on_call), or a client could make every other
	 * client re-send its locks. */
	if (hdr->rc_prog == CFG_PROG_NSM && hdr->rc_vers == 1 && hdr->rc_proc == NM_NSM_NOTIFY &&
	    nm_from_backend(gw, nm_host_of(c, host, sizeof(host)))) {
		struct xdr_cur args;

		xdr_cur_init(&args, c->ca_rec.rcd_iov, c->ca_rec.rcd_niov);
		return nm_server_reboot(gw, xdr_seek(&args, hdr->rc_args_pos) ? &args : NULL, host);
	}
	if (hdr->rc_prog == CFG_PROG_NLM && hdr->rc_vers >= 3 && hdr->rc_cred.oa_flavor ==
	    RPC_RPCSEC_GSS && (hdr->rc_proc == GW_NSH_PROC_SHARE || hdr->rc_proc == GW_NSH_PROC_UNSHARE)) {
		/* its body cannot be re-encoded under GSS (checksums, RFC 2203
		 * 5.3.2), and forwarded as it came its oh could be another's */
		gw_stat_inc(gw->gw_nlm->nm_st, GW_CTR_NLM_SHARE_REFUSED);
		return GW_NLM_REFUSE;
	}
	act = gw_nlm_on_call(gw->gw_nlm, nm_host_of(c, host, sizeof(host)), hdr->rc_prog,
			     hdr->rc_vers, hdr->rc_proc, &c->ca_rec, hdr->rc_args_pos);
	/* a SHARE's record may be a new one: xc (at the arguments) follows */
	xdr_cur_init(xc, c->ca_rec.rcd_iov, c->ca_rec.rcd_niov);
	xdr_seek(xc, hdr->rc_args_pos);
	return act;
}

bool gw_nlm_server_notify(struct gw_ctx *gw, const char *host, struct xdr_cur *xc)
{
	if (!gw->gw_nlm || !nm_from_backend(gw, host))
		return false;
	nm_epoch_check(gw->gw_nlm);
	nm_server_reboot(gw, xc, host);
	return true;
}

void gw_nlm_host_rebooted(struct gw_ctx *gw, const char *host)
{
	if (!gw->gw_nlm)
		return;
	nm_epoch_check(gw->gw_nlm);
	nm_release_host(gw->gw_nlm, host, "SM_NOTIFY over UDP");
}

void gw_nlm_reply(struct gw_ctx *gw, struct gw_call *c, const struct iovec *iov, unsigned niov)
{
	const struct rpc_call_hdr *hdr = &c->ca_hdr;
	char host[48];

	if (!gw->gw_nlm || !c->ca_cl || c->ca_cl == gw->gw_nlm->nm_cl || hdr->rc_prog != CFG_PROG_NLM)
		return;
	nm_epoch_check(gw->gw_nlm);
	gw_nlm_on_reply(gw->gw_nlm, nm_host_of(c, host, sizeof(host)), hdr->rc_vers, hdr->rc_proc,
			&c->ca_rec, hdr->rc_args_pos, iov, niov);
}
