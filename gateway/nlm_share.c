// SPDX-License-Identifier: MIT
/*
 * This file contains the NLM share map (nlm_share.h): the owner handle of
 * SHARE and UNSHARE made unique per client host, and the shares a client
 * holds released when it reboots.
 *
 * The rules relied on (X/Open XNFS, NLM chapters; nlm4.x nlm4_shareargs,
 * the v3 nlm_shareargs the same): a share's owner is (host, oh), an UNSHARE
 * of an owner that holds no share is GRANTED, and a rebooted host's shares
 * go with its locks.  Linux lockd (fs/lockd/svcshare.c) compares oh bytes
 * and length, within the host it keys by address, protocol and version.
 *
 * Why a prefix: the svid trick of nlm_map.c (high bits of an int) has no
 * room in an opaque whose every byte is the client's.  oh' = tag || oh with
 * tag = "gw" and the slot + 1 in two bytes: owners of two slots differ in
 * their first four bytes, and within a slot oh' equals oh'' only when the
 * client's oh are equal, so no client can name another's owner, whatever
 * bytes and lengths it sends.  A call the gateway cannot map is therefore
 * never forwarded as it came (its oh could be another client's oh'): it is
 * answered here.  An oh of more than 1020 bytes is refused (oh' would pass
 * MAXNETOBJ_SZ), as is a file handle of more than 64 (none in NFSv3).
 *
 * Bounded: GW_NSH_PER_HOST shares per client host; a host's table is
 * allocated at its first share and freed when it holds none.
 */
#include <stdlib.h>
#include <string.h>

#include "chunking.h"
#include "config.h"
#include "log.h"
#include "nlm_map.h"
#include "nlm_share.h"
#include "pool.h"

#define NS_XDR_MAX	1024	/* LM_MAXSTRLEN, MAXNETOBJ_SZ (nlm4.x) */
#define NS_SLOTS	512	/* nlm_map.h GW_NLM_MAX_HOSTS (511) and some */

struct gw_nsh_share {			/* a share the server granted to a mapped owner */
	uint32_t sh_vers;
	uint32_t sh_mode, sh_access;
	uint8_t sh_fhlen;
	uint16_t sh_ohlen;		/* the client's oh, without the tag */
	uint8_t sh_fh[GW_NSH_FH_MAX];
	uint8_t sh_oh[GW_NSH_OH_MAX];
};

struct gw_nsh_tab {			/* one client host's shares */
	unsigned st_n;
	struct gw_nsh_share st_sh[GW_NSH_PER_HOST];
};

struct gw_nsh {
	struct gw_stats *nsh_st;
	const struct gw_log *nsh_lg;
	struct gw_nsh_tab *nsh_tab[NS_SLOTS];
};

/* nlm_shareargs as far as the map needs it. */
struct gw_nsh_args {
	struct xdr_span sa_fh, sa_oh;
	size_t sa_oh_at;		/* oh's length word */
	uint32_t sa_mode, sa_access;
};

struct gw_nsh *gw_nsh_new(struct gw_stats *st, const struct gw_log *lg)
{
	struct gw_nsh *ns = calloc(1, sizeof(*ns));

	if (ns) {
		ns->nsh_st = st;
		ns->nsh_lg = lg;
	}
	return ns;
}

void gw_nsh_free(struct gw_nsh *ns)
{
	if (!ns)
		return;
	for (unsigned i = 0; i < NS_SLOTS; i++)
		free(ns->nsh_tab[i]);
	free(ns);
}

unsigned gw_nsh_count(const struct gw_nsh *ns, unsigned slot)
{
	return slot < NS_SLOTS && ns->nsh_tab[slot] ? ns->nsh_tab[slot]->st_n : 0;
}

static void ns_tag(unsigned slot, uint8_t tag[GW_NSH_TAG_LEN])
{
	tag[0] = 'g';
	tag[1] = 'w';
	tag[2] = (uint8_t)((slot + 1) >> 8);
	tag[3] = (uint8_t)(slot + 1);
}

/* cookie, caller_name, fh, oh, mode, access, reclaim (nlm4_shareargs). */
static bool ns_get_args(struct xdr_cur *xc, size_t args_pos, struct gw_nsh_args *a)
{
	struct xdr_span s;
	uint32_t reclaim;

	if (!xdr_seek(xc, args_pos) || !xdr_get_opaque(xc, &s, NS_XDR_MAX) ||
	    !xdr_get_string(xc, &s, NS_XDR_MAX) || !xdr_get_opaque(xc, &a->sa_fh, NS_XDR_MAX))
		return false;
	a->sa_oh_at = xdr_pos(xc);
	return xdr_get_opaque(xc, &a->sa_oh, NS_XDR_MAX) && xdr_get_u32(xc, &a->sa_mode) &&
	       xdr_get_u32(xc, &a->sa_access) && xdr_get_u32(xc, &reclaim);
}

/* The tracked share of (fh, oh) in t, or NULL. */
static struct gw_nsh_share *ns_find(struct gw_nsh_tab *t, const uint8_t *fh, size_t fhlen,
				    const uint8_t *oh, size_t ohlen)
{
	for (unsigned i = 0; t && i < t->st_n; i++) {
		struct gw_nsh_share *sh = &t->st_sh[i];

		if (sh->sh_fhlen == fhlen && sh->sh_ohlen == ohlen &&
		    memcmp(sh->sh_fh, fh, fhlen) == 0 && memcmp(sh->sh_oh, oh, ohlen) == 0)
			return sh;
	}
	return NULL;
}

static enum gw_nsh_verdict ns_refuse(struct gw_nsh *ns, const char *host, uint32_t proc,
				     const char *why)
{
	gw_stat_inc(ns->nsh_st, GW_CTR_NLM_SHARE_REFUSED);
	gw_log_client(ns->nsh_lg, CFG_LOG_WARN, host, "NLM %s from %s: %s: answered SYSTEM_ERR, "
		      "not forwarded", proc == GW_NSH_PROC_SHARE ? "SHARE" : "UNSHARE", host, why);
	return GW_NSH_REFUSED;
}

enum gw_nsh_verdict gw_nsh_map_call(struct gw_nsh *ns, const char *host, unsigned slot,
				    uint32_t proc, const struct gw_rec *rec, size_t args_pos,
				    uint8_t *out, size_t cap, size_t *len)
{
	uint8_t tag[GW_NSH_TAG_LEN], fh[GW_NSH_FH_MAX], oh[GW_NSH_OH_MAX];
	struct gw_nsh_args a;
	struct xdr_cur xc;
	struct xdr_enc xe;
	size_t tail_at, tail;

	xdr_cur_init(&xc, rec->rcd_iov, rec->rcd_niov);
	if (slot >= NS_SLOTS || !ns_get_args(&xc, args_pos, &a))
		return ns_refuse(ns, host, proc, "arguments do not decode");
	if (a.sa_oh.xs_len > GW_NSH_OH_MAX)
		return ns_refuse(ns, host, proc, "owner handle over 1020 bytes");
	if (a.sa_fh.xs_len > GW_NSH_FH_MAX)
		return ns_refuse(ns, host, proc, "file handle over 64 bytes");
	xdr_span_copy(&xc, &a.sa_fh, fh, sizeof(fh));
	xdr_span_copy(&xc, &a.sa_oh, oh, sizeof(oh));
	if (proc == GW_NSH_PROC_SHARE && gw_nsh_count(ns, slot) == GW_NSH_PER_HOST &&
	    !ns_find(ns->nsh_tab[slot], fh, a.sa_fh.xs_len, oh, a.sa_oh.xs_len))
		return ns_refuse(ns, host, proc, "16 shares held already");
	/* everything before oh as it came, oh', everything after as it came */
	tail_at = a.sa_oh.xs_pos + xdr_round4(a.sa_oh.xs_len);
	tail = rec->rcd_len - tail_at;
	if (a.sa_oh_at > cap)
		return ns_refuse(ns, host, proc, "call too large to re-encode");
	gw_rec_copyout(rec, 0, out, a.sa_oh_at);
	ns_tag(slot, tag);
	xdr_enc_init(&xe, out + a.sa_oh_at, cap - a.sa_oh_at);
	xdr_put_u32(&xe, (uint32_t)(GW_NSH_TAG_LEN + a.sa_oh.xs_len));
	xdr_put_fixed(&xe, tag, GW_NSH_TAG_LEN);
	xdr_put_fixed(&xe, oh, (uint32_t)a.sa_oh.xs_len);
	if (xe.xe_err != XDR_OK || a.sa_oh_at + xe.xe_len + tail > cap)
		return ns_refuse(ns, host, proc, "call too large to re-encode");
	gw_rec_copyout(rec, tail_at, out + a.sa_oh_at + xe.xe_len, tail);
	*len = a.sa_oh_at + xe.xe_len + tail;
	gw_stat_inc(ns->nsh_st, GW_CTR_NLM_SHARE_MAPPED);
	return GW_NSH_MAPPED;
}

/* A granted SHARE of the mapped owner in a: tracked (or its modes updated). */
static void ns_track(struct gw_nsh *ns, const char *host, unsigned slot, uint32_t vers,
		     const struct gw_nsh_args *a, const uint8_t *fh, const uint8_t *oh,
		     size_t ohlen)
{
	struct gw_nsh_tab *t = ns->nsh_tab[slot];
	struct gw_nsh_share *sh = ns_find(t, fh, a->sa_fh.xs_len, oh, ohlen);

	if (!sh) {
		if (!t)
			t = ns->nsh_tab[slot] = calloc(1, sizeof(*t));
		if (!t || t->st_n == GW_NSH_PER_HOST) {
			gw_stat_inc(ns->nsh_st, GW_CTR_NLM_TRACK_FULL);
			gw_log_client(ns->nsh_lg, CFG_LOG_WARN, host, "NLM: %s holds %u shares: this "
				      "one is not released if it reboots", host, GW_NSH_PER_HOST);
			return;
		}
		sh = &t->st_sh[t->st_n++];
		sh->sh_fhlen = (uint8_t)a->sa_fh.xs_len;
		sh->sh_ohlen = (uint16_t)ohlen;
		memcpy(sh->sh_fh, fh, a->sa_fh.xs_len);
		memcpy(sh->sh_oh, oh, ohlen);
	}
	sh->sh_vers = vers;
	sh->sh_mode = a->sa_mode;
	sh->sh_access = a->sa_access;
}

static void ns_forget(struct gw_nsh *ns, unsigned slot, struct gw_nsh_share *sh)
{
	struct gw_nsh_tab *t = ns->nsh_tab[slot];

	*sh = t->st_sh[--t->st_n];
	if (t->st_n == 0) {
		free(t);
		ns->nsh_tab[slot] = NULL;
	}
}

void gw_nsh_on_reply(struct gw_nsh *ns, const char *host, uint32_t vers, uint32_t proc,
		     const struct gw_rec *call, size_t args_pos, const struct iovec *iov,
		     unsigned niov)
{
	uint8_t fh[GW_NSH_FH_MAX], oh[GW_NSH_TAG_LEN + GW_NSH_OH_MAX];
	struct rpc_reply_hdr r;
	struct gw_nsh_args a;
	struct xdr_cur xc, cc;
	struct xdr_span cookie;
	struct gw_nsh_share *sh;
	uint32_t stat;
	unsigned slot;

	xdr_cur_init(&xc, iov, niov);
	if (!rpc_reply_decode(&xc, &r) || r.rr_stat != RPC_MSG_ACCEPTED ||
	    r.rr_accept_stat != RPC_SUCCESS || !xdr_get_opaque(&xc, &cookie, NS_XDR_MAX) ||
	    !xdr_get_u32(&xc, &stat) || stat != 0)
		return;	/* only a GRANTED changes what the client holds */
	xdr_cur_init(&cc, call->rcd_iov, call->rcd_niov);
	if (!ns_get_args(&cc, args_pos, &a) || a.sa_fh.xs_len > GW_NSH_FH_MAX ||
	    a.sa_oh.xs_len < GW_NSH_TAG_LEN || a.sa_oh.xs_len > sizeof(oh))
		return;
	xdr_span_copy(&cc, &a.sa_fh, fh, sizeof(fh));
	xdr_span_copy(&cc, &a.sa_oh, oh, sizeof(oh));
	slot = ((unsigned)oh[2] << 8 | oh[3]) - 1u;
	if (oh[0] != 'g' || oh[1] != 'w' || slot >= NS_SLOTS)
		return;	/* the gateway mapped this call: cannot happen */
	if (proc == GW_NSH_PROC_SHARE) {
		ns_track(ns, host, slot, vers, &a, fh, oh + GW_NSH_TAG_LEN,
			 a.sa_oh.xs_len - GW_NSH_TAG_LEN);
		return;
	}
	sh = ns_find(ns->nsh_tab[slot], fh, a.sa_fh.xs_len, oh + GW_NSH_TAG_LEN,
		     a.sa_oh.xs_len - GW_NSH_TAG_LEN);
	if (sh)
		ns_forget(ns, slot, sh);
}

/* One UNSHARE (nlm4.x nlm4_shareargs, reclaim false) of a tracked share. */
static bool ns_release_one(const struct gw_nsh_share *sh, unsigned slot, const char *host,
			   uint32_t xid, gw_nsh_send_fn send, void *arg)
{
	uint8_t buf[GW_NSH_MSG_MAX], tag[GW_NSH_TAG_LEN];
	struct xdr_enc xe;

	ns_tag(slot, tag);
	xdr_enc_init(&xe, buf, sizeof(buf));
	rpc_call_encode(&xe, xid, CFG_PROG_NLM, sh->sh_vers, GW_NSH_PROC_UNSHARE, &gw_nlm_cred);
	xdr_put_opaque(&xe, GW_NSH_COOKIE, 4);
	xdr_put_opaque(&xe, host, (uint32_t)strlen(host));	/* caller_name */
	xdr_put_opaque(&xe, sh->sh_fh, sh->sh_fhlen);
	xdr_put_u32(&xe, (uint32_t)(GW_NSH_TAG_LEN + sh->sh_ohlen));
	xdr_put_fixed(&xe, tag, GW_NSH_TAG_LEN);
	xdr_put_fixed(&xe, sh->sh_oh, sh->sh_ohlen);
	xdr_put_u32(&xe, sh->sh_mode);
	xdr_put_u32(&xe, sh->sh_access);
	xdr_put_u32(&xe, 0);		/* reclaim */
	return xe.xe_err == XDR_OK && send && send(arg, buf, xe.xe_len);
}

unsigned gw_nsh_release(struct gw_nsh *ns, unsigned slot, const char *host, uint32_t *xid,
			gw_nsh_send_fn send, void *arg, unsigned *failed)
{
	struct gw_nsh_tab *t = slot < NS_SLOTS ? ns->nsh_tab[slot] : NULL;
	unsigned sent = 0;

	*failed = 0;
	for (unsigned i = 0; t && i < t->st_n; i++) {
		if (ns_release_one(&t->st_sh[i], slot, host, ++*xid, send, arg))
			sent++;
		else
			++*failed;
	}
	if (t) {
		free(t);
		ns->nsh_tab[slot] = NULL;
	}
	return sent;
}

void gw_nsh_forget(struct gw_nsh *ns, unsigned slot)
{
	if (slot < NS_SLOTS && ns->nsh_tab[slot]) {
		free(ns->nsh_tab[slot]);
		ns->nsh_tab[slot] = NULL;
	}
}
