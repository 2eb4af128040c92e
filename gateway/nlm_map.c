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
 * Bounded: GW_NLM_LOCKS_PER_HOST tracked locks per client host (the hosts:
 * nlm_host.c), all allocated at start.
 */
#include <stdlib.h>
#include <string.h>

#include "chunking.h"
#include "config.h"
#include "log.h"
#include "nlm_int.h"
#include "nlm_share.h"
#include "pool.h"

/* The credential of the calls the gateway makes itself to lockd (UNLOCK,
 * UNSHARE of a rebooted client): AUTH_SYS root, as lockd wants it. */
const struct rpc_auth_sys gw_nlm_cred = { .as_namelen = 10, .as_machinename = "rpcrdma-gw" };

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
	nm->nm_quiet_ms = GW_NLM_QUIET_MS;
	return nm;
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

/* ---- XDR ---- */

static bool nm_get_alock(struct xdr_cur *xc, uint32_t vers, struct gw_nlm_alock *a)
{
	struct xdr_span s;
	uint32_t o, l;

	if (!xdr_get_string(xc, &a->na_caller, NM_XDR_MAX) ||
	    !xdr_get_opaque(xc, &a->na_fh, NM_XDR_MAX) || !xdr_get_opaque(xc, &s, NM_XDR_MAX))
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

bool gw_nlm_call_alock(const struct gw_rec *rec, size_t args_pos, uint32_t vers, uint32_t proc,
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

static const char *nm_proc_str(uint32_t proc)
{
	static const char *const names[] = {
		[NM_TEST] = "TEST", [NM_LOCK] = "LOCK", [NM_CANCEL] = "CANCEL",
		[NM_UNLOCK] = "UNLOCK", [NM_GRANTED] = "GRANTED", [NM_TEST_MSG] = "TEST_MSG",
		[NM_LOCK_MSG] = "LOCK_MSG", [NM_CANCEL_MSG] = "CANCEL_MSG",
		[NM_UNLOCK_MSG] = "UNLOCK_MSG", [NM_GRANTED_MSG] = "GRANTED_MSG",
		[GW_NSH_PROC_SHARE] = "SHARE", [GW_NSH_PROC_UNSHARE] = "UNSHARE",
		[NM_NM_LOCK] = "NM_LOCK", [NM_FREE_ALL] = "FREE_ALL",
	};

	return proc < sizeof(names) / sizeof(names[0]) && names[proc] ? names[proc] : "call";
}

/* A call the map will not carry: counted (ctr) and logged per client; its
 * answer (act: DENIED_NOLOCKS or GARBAGE_ARGS) is the gateway's. */
static enum gw_nlm_act nm_refuse(struct gw_nlm *nm, const char *host, uint32_t proc,
				 enum gw_ctr ctr, enum gw_nlm_act act, const char *why)
{
	gw_stat_inc(nm->nm_st, ctr);
	gw_log_client(nm->nm_lg, CFG_LOG_WARN, host, "NLM %s from %s: %s: answered %s, not "
		      "forwarded", nm_proc_str(proc), host, why,
		      act == GW_NLM_GARBAGE ? "GARBAGE_ARGS" : "DENIED_NOLOCKS");
	return act;
}

/* Why caller_name (span s of xc) is no name of a host, or NULL.  nlm4.x
 * only bounds it (LM_MAXSTRLEN, 1024); the gateway takes what a host may
 * call itself: 1 to 255 bytes (a domain name, RFC 1035 2.3.4) of letters,
 * digits, '-', '.', '_', and the ':' and '%' of an IPv6 address.  The
 * server's lockd hands it to its statd as mon_name, which stores and logs
 * it: no path, blank or control byte gets there through the gateway.  The
 * gateway itself never finds a host by this name, only by its address: a
 * client naming itself after another reaches nothing of the other's. */
static const char *nm_name_bad(const struct xdr_cur *xc, const struct xdr_span *s)
{
	char n[GW_NLM_NAME_MAX];

	if (s->xs_len == 0)
		return "caller_name empty";
	if (s->xs_len > GW_NLM_NAME_MAX)
		return "caller_name over 255 bytes";
	xdr_span_copy(xc, s, n, sizeof(n));
	for (size_t i = 0; i < s->xs_len; i++) {
		char c = n[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '.' || c == '_' || c == ':' || c == '%'))
			return "caller_name has a byte no host name has";
	}
	return NULL;
}

/* The alock's owner (svid) becomes svid' = (slot + 1) << 22 | svid, in
 * place.  Any owner that cannot be mapped is refused, never forwarded as
 * it came: the server keys owners by (host, svid), every client is the
 * gateway's host there, so an unmapped svid could be another client's
 * svid' (an UNLOCK of it would release that client's lock). */
static enum gw_nlm_act nm_map_owner(struct gw_nlm *nm, const char *host, uint32_t vers,
				    uint32_t proc, struct gw_rec *rec, size_t args_pos)
{
	struct gw_nlm_alock a;
	struct gw_nlm_host *h;
	struct xdr_cur xc;
	enum gw_ctr full;
	const char *why;
	char svid[64];

	if (!gw_nlm_call_alock(rec, args_pos, vers, proc, &xc, &a))
		return nm_refuse(nm, host, proc, GW_CTR_NLM_OWNER_REFUSED, GW_NLM_GARBAGE,
				 "arguments do not decode");
	why = nm_name_bad(&xc, &a.na_caller);
	if (why)
		return nm_refuse(nm, host, proc, GW_CTR_NLM_CALLER_REFUSED, GW_NLM_NOLOCKS, why);
	if (a.na_svid < 0 || (uint32_t)a.na_svid > NM_SVID_MASK) {
		snprintf(svid, sizeof(svid), "svid %d not in 0 .. 2^%d - 1", (int)a.na_svid,
			 GW_NLM_SVID_BITS);
		return nm_refuse(nm, host, proc, GW_CTR_NLM_OWNER_REFUSED, GW_NLM_NOLOCKS, svid);
	}
	h = gw_nlm_host_get(nm, host, true, &full);
	if (!h)
		return nm_refuse(nm, host, proc, full, GW_NLM_NOLOCKS, full == GW_CTR_NLM_SOURCE_FULL ?
				 "its source holds half the client host slots" :
				 "every client host slot is taken");
	if (proc == NM_LOCK || proc == NM_LOCK_MSG || proc == NM_NM_LOCK)
		h->nh_lock_ms = gw_pass_ms(nm->nm_st);	/* it may hold a lock from now on */
	gw_rec_put_be32(rec, a.na_svid_pos, (gw_nlm_slot(nm, h) + 1) << GW_NLM_SVID_BITS |
			(uint32_t)a.na_svid);
	gw_stat_inc(nm->nm_st, GW_CTR_NLM_MAPPED);
	return GW_NLM_FORWARD;
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
void gw_nlm_release_host(struct gw_nlm *nm, const char *host, const char *why)
{
	struct gw_nlm_host *h = gw_nlm_host_get(nm, host, false, NULL);
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
	shares = gw_nsh_release(nm->nm_nsh, gw_nlm_slot(nm, h), host, &nm->nm_xid, nm->nm_send,
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
	struct xdr_span cookie, caller;
	struct gw_nlm_host *h;
	struct gw_buf *b;
	struct xdr_cur xc;
	enum gw_ctr full;
	const char *why;
	size_t len = 0;

	xdr_cur_init(&xc, rec->rcd_iov, rec->rcd_niov);	/* cookie, caller_name, ... */
	if (xdr_seek(&xc, args_pos) && xdr_get_opaque(&xc, &cookie, NM_XDR_MAX) &&
	    xdr_get_string(&xc, &caller, NM_XDR_MAX) && (why = nm_name_bad(&xc, &caller)))
		return nm_refuse(nm, host, proc, GW_CTR_NLM_CALLER_REFUSED, GW_NLM_NOLOCKS, why);
	h = gw_nlm_host_get(nm, host, true, &full);
	if (!h)
		return nm_refuse(nm, host, proc, full, GW_NLM_NOLOCKS, full == GW_CTR_NLM_SOURCE_FULL ?
				 "its source holds half the client host slots" :
				 "every client host slot is taken");
	b = nm->nm_pool ? gw_buf_get(nm->nm_pool) : NULL;
	if (!b) {
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_SHARE_REFUSED);
		gw_log_client(nm->nm_lg, CFG_LOG_WARN, host, "NLM share call from %s: no buffer: "
			      "answered SYSTEM_ERR", host);
		return GW_NLM_REFUSE;
	}
	if (gw_nsh_map_call(nm->nm_nsh, host, gw_nlm_slot(nm, h), proc, rec, args_pos, b->gb_data,
			    b->gb_size, &len) != GW_NSH_MAPPED) {
		gw_buf_put(nm->nm_pool, b);
		return GW_NLM_REFUSE;
	}
	if (proc == GW_NSH_PROC_SHARE)
		h->nh_lock_ms = gw_pass_ms(nm->nm_st);	/* it may hold a share from now on */
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
		if (proc == 0)
			return GW_NLM_FORWARD;	/* NULL */
		if (vers != 1 || proc != NM_NSM_NOTIFY) {
			/* SM_STAT, SM_MON, SM_UNMON(_ALL), SM_SIMU_CRASH are a
			 * host's lockd talking to its own statd (nsm.x); through
			 * the gateway they would reach the server's statd as the
			 * gateway's (as a local caller, on a shared host). */
			gw_stat_inc(nm->nm_st, GW_CTR_NLM_NSM_REFUSED);
			gw_log_client(nm->nm_lg, CFG_LOG_WARN, host, "NSM procedure %u from %s: a "
				      "host's own statd's, only SM_NOTIFY crosses hosts: answered "
				      "PROC_UNAVAIL, not forwarded", proc, host);
			return GW_NLM_PROC_UNAVAIL;
		}
		/* SM_NOTIFY comes from the rebooted host's statd (nsm.x): the
		 * sender is the client; the server's statd only knows the
		 * gateway, so the notification goes no further. */
		gw_nlm_release_host(nm, host, "SM_NOTIFY");
		return GW_NLM_ANSWER;
	}
	if (prog != CFG_PROG_NLM)
		return GW_NLM_FORWARD;
	if (proc == NM_FREE_ALL && vers >= 3) {
		/* Forwarded, FREE_ALL would drop every client's locks: the
		 * server's lockd knows one host, the gateway. */
		gw_nlm_release_host(nm, host, "FREE_ALL");
		return GW_NLM_ANSWER;
	}
	if ((proc == GW_NSH_PROC_SHARE || proc == GW_NSH_PROC_UNSHARE) && vers >= 3)
		return nm_share_call(nm, host, proc, rec, args_pos);
	if ((proc >= NM_TEST && proc <= NM_UNLOCK_MSG && proc != NM_GRANTED) ||
	    (proc == NM_NM_LOCK && vers >= 3))
		return nm_map_owner(nm, host, vers, proc, rec, args_pos);
	return GW_NLM_FORWARD;
}

size_t gw_nlm_nolocks_res(const struct gw_rec *rec, size_t args_pos, uint32_t proc, uint8_t *out,
			  size_t cap)
{
	uint8_t ck[NM_XDR_MAX];
	struct xdr_span cookie;
	struct xdr_cur xc;
	struct xdr_enc xe;

	/* The _MSG forms answer in a call of their own (their RPC reply is
	 * void): the refusal is their SYSTEM_ERR. */
	if (!(proc >= NM_TEST && proc <= NM_GRANTED) && proc != NM_NM_LOCK &&
	    proc != GW_NSH_PROC_SHARE && proc != GW_NSH_PROC_UNSHARE)
		return 0;
	xdr_cur_init(&xc, rec->rcd_iov, rec->rcd_niov);
	if (!xdr_seek(&xc, args_pos) || !xdr_get_opaque(&xc, &cookie, NM_XDR_MAX))
		return 0;
	xdr_span_copy(&xc, &cookie, ck, sizeof(ck));
	xdr_enc_init(&xe, out, cap);
	xdr_put_opaque(&xe, ck, cookie.xs_len);
	xdr_put_u32(&xe, 2);	/* nlm4_denied_nolocks; LCK_DENIED_NOLOCKS (nlm.x) alike */
	if (proc == GW_NSH_PROC_SHARE || proc == GW_NSH_PROC_UNSHARE)
		xdr_put_u32(&xe, 0);	/* nlm4_shareres sequence */
	return xe.xe_err == XDR_OK ? xe.xe_len : 0;
}

/* ---- replies ---- */

void gw_nlm_track(struct gw_nlm *nm, const char *host, const struct gw_nlm_alock *a,
		     const struct xdr_cur *xc, uint32_t vers, bool granted_lock)
{
	struct gw_nlm_host *h;
	uint8_t fh[GW_NLM_FH_MAX];
	int32_t svid;
	unsigned i;

	h = gw_nlm_owner(nm, a->na_svid, &svid);
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
		if (!xdr_get_i32(&xc, &m) || !gw_nlm_owner(nm, m, &svid))
			return;
		nm_iov_put_be32(iov, niov, pos, (uint32_t)svid);
		gw_stat_inc(nm->nm_st, GW_CTR_NLM_HOLDER_MAPPED);
		return;
	}
	/* Only a GRANTED changes what the client holds; a LOCK BLOCKED (nlm4_blocked)
	 * is tracked as held too: its grant may come to another worker, or much
	 * later, and an UNLOCK of it cancels it (Linux lockd: nlmsvc_unlock
	 * cancels the owner's blocked lock first). */
	if ((stat != 0 && !(stat == 3 && proc == NM_LOCK)) ||
	    !gw_nlm_call_alock(call, args_pos, vers, proc, &cc, &a))
		return;
	if (proc == NM_UNLOCK && (a.na_off != 0 || a.na_len != 0))
		return;	/* part of a file: the owner may hold the rest */
	gw_nlm_track(nm, host, &a, &cc, vers, proc != NM_UNLOCK);
}
