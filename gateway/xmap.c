// SPDX-License-Identifier: MIT
/*
 * This file contains the XID map of one backend.
 *
 * Why: every client's calls reach the server from the gateway's address,
 * so the server's duplicate request cache (DRC) keys on what the gateway
 * sends.  Client XIDs collide between clients; the gateway therefore gives
 * each call its own gateway XID, unique among the XIDs it has in flight or
 * recently answered on that server.  A client retransmission (same client
 * key, same client XID) must reuse the gateway XID of the original, or the
 * server would execute a non-idempotent call twice.
 *
 * Entries live in a fixed array (no malloc after start) and sit on two
 * hash chains: by (client key, client XID) and by gateway XID.  An entry
 * is "in flight" (xn_call set) or "settled" (answered or cancelled; kept
 * until xn_expires on a list in settle order, which is expiry order since
 * every entry gets the same window).  When the array is full the oldest
 * settled entry is evicted early.
 *
 * Only calls whose re-execution could harm keep their entry once
 * answered (gw_xmap_keeps_answered): the idempotent ones would otherwise
 * fill the map under load and push the others out long before their
 * window ends.  Their gateway XIDs are not reused early all the same,
 * since gateway XIDs count up.
 *
 * Shares.  Every entry belongs to a source, the client host (its address:
 * a host's connections and reconnects are one source), and the map is
 * shared between sources as max-min fairness shares it: when it is full,
 * a source that holds its share (capacity / sources with an entry, the
 * adding one counted) makes room with its own oldest answered entry;
 * any other source's add takes the oldest answered entry of the source
 * holding the most answered entries.  When the map is full and the adding
 * source is under its share, someone is over it, so a client that keeps
 * within its share never loses an entry to another's burst: a burst of
 * SETATTRs can no longer push another client's REMOVE out of the window,
 * whose retransmission would then reach the server under a new XID and
 * run twice (the DRC keys on the XID).  To find the largest source in
 * O(1), sources with answered entries sit in buckets by that count
 * (buckets in increasing order; a count moves by one at a time, so a
 * source moves to a neighbouring bucket, as in an O(1) LFU cache).
 * Distinct counts d need 1 + 2 + ... + d entries, so at most about
 * sqrt(2 * capacity) buckets are ever in use; a source exists only while
 * it has an entry, so capacity sources suffice.
 *
 * Gateway XIDs count up from a random start and skip values still mapped.
 * RPCSEC_GSS calls keep the client's XID instead (gw_xmap_add_as): their
 * verifier is a MIC over the header from the XID on (RFC 2203 5.3.1), so
 * a remapped XID would fail verification at the server.
 */
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "chunking.h"
#include "xmap.h"

TAILQ_HEAD(gw_xent_list, gw_xent);
TAILQ_HEAD(gw_xsrc_list, gw_xsrc);
TAILQ_HEAD(gw_xbkt_list, gw_xbkt);

/* A source (client host) with at least one entry. */
struct gw_xsrc {
	uint64_t xh_key;
	unsigned xh_count;		/* its entries, in flight and settled */
	unsigned xh_nsettled;		/* of them settled: its bucket's count */
	struct gw_xsrc *xh_hnext;	/* chain by key */
	struct gw_xbkt *xh_bkt;		/* NULL while it has no settled entry */
	TAILQ_ENTRY(gw_xsrc) xh_blink;	/* its bucket's sources, or the free list */
	struct gw_xent_list xh_settled;	/* its settled entries, oldest first */
};

/* The sources with xk_n settled entries, in the order they reached it. */
struct gw_xbkt {
	unsigned xk_n;
	struct gw_xsrc_list xk_srcs;
	TAILQ_ENTRY(gw_xbkt) xk_link;	/* xm_bkts (increasing xk_n), or the free list */
};

struct gw_xmap {
	unsigned xm_cap;
	unsigned xm_count;		/* used entries */
	unsigned xm_nbuckets;		/* power of two */
	uint32_t xm_next_gxid;
	uint32_t xm_smask, xm_sval;	/* the worker's slice: gxid & ~smask == sval */
	struct gw_xent *xm_ents;
	struct gw_xent **xm_chash;
	struct gw_xent **xm_ghash;
	struct gw_xent_list xm_free;
	struct gw_xent_list xm_settled;
	unsigned xm_nsrc;		/* sources with an entry */
	struct gw_xsrc *xm_srcs;	/* xm_cap of them */
	struct gw_xsrc **xm_shash;	/* xm_nbuckets chains by key */
	struct gw_xsrc_list xm_sfree;
	unsigned xm_nbkt;
	struct gw_xbkt *xm_bkta;	/* xm_nbkt of them */
	struct gw_xbkt_list xm_bkts;
	struct gw_xbkt_list xm_bfree;
};

static inline unsigned gw_xmap_chash(const struct gw_xmap *m, uint64_t client, uint32_t cxid)
{
	uint64_t h = (client ^ ((uint64_t)cxid << 17) ^ cxid) * 0x9e3779b97f4a7c15ull;

	return (unsigned)(h >> 32) & (m->xm_nbuckets - 1);
}

static inline unsigned gw_xmap_ghash(const struct gw_xmap *m, uint32_t gxid)
{
	return (unsigned)(((uint64_t)gxid * 0x9e3779b97f4a7c15ull) >> 32) & (m->xm_nbuckets - 1);
}

struct gw_xmap *gw_xmap_new(unsigned capacity, uint32_t first_xid)
{
	struct gw_xmap *m;

	if (capacity == 0)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->xm_cap = capacity;
	m->xm_nbuckets = 16;
	while (m->xm_nbuckets < capacity)
		m->xm_nbuckets <<= 1;
	/* Buckets: d distinct counts in use (one more while a source moves)
	 * hold at least 1 + ... + d <= 2 * capacity entries' worth. */
	while ((m->xm_nbkt + 1) * (m->xm_nbkt + 1) <= 4 * capacity)
		m->xm_nbkt++;
	m->xm_nbkt += 2;
	m->xm_ents = calloc(capacity, sizeof(*m->xm_ents));
	m->xm_chash = calloc(m->xm_nbuckets, sizeof(*m->xm_chash));
	m->xm_ghash = calloc(m->xm_nbuckets, sizeof(*m->xm_ghash));
	m->xm_srcs = calloc(capacity, sizeof(*m->xm_srcs));
	m->xm_shash = calloc(m->xm_nbuckets, sizeof(*m->xm_shash));
	m->xm_bkta = calloc(m->xm_nbkt, sizeof(*m->xm_bkta));
	if (!m->xm_ents || !m->xm_chash || !m->xm_ghash || !m->xm_srcs || !m->xm_shash ||
	    !m->xm_bkta) {
		gw_xmap_free(m);
		return NULL;
	}
	TAILQ_INIT(&m->xm_free);
	TAILQ_INIT(&m->xm_settled);
	TAILQ_INIT(&m->xm_sfree);
	TAILQ_INIT(&m->xm_bkts);
	TAILQ_INIT(&m->xm_bfree);
	for (unsigned i = 0; i < capacity; i++) {
		TAILQ_INSERT_TAIL(&m->xm_free, &m->xm_ents[i], xn_link);
		TAILQ_INSERT_TAIL(&m->xm_sfree, &m->xm_srcs[i], xh_blink);
	}
	for (unsigned i = 0; i < m->xm_nbkt; i++)
		TAILQ_INSERT_TAIL(&m->xm_bfree, &m->xm_bkta[i], xk_link);
	m->xm_next_gxid = first_xid;
	m->xm_smask = ~0u;
	return m;
}

void gw_xmap_set_slice(struct gw_xmap *m, unsigned index, unsigned count)
{
	unsigned bits = 0;

	while ((1u << bits) < count)
		bits++;
	m->xm_smask = bits ? ~0u >> bits : ~0u;
	m->xm_sval = bits ? (uint32_t)index << (32 - bits) : 0;
}

void gw_xmap_free(struct gw_xmap *m)
{
	if (!m)
		return;
	free(m->xm_ents);
	free(m->xm_chash);
	free(m->xm_ghash);
	free(m->xm_srcs);
	free(m->xm_shash);
	free(m->xm_bkta);
	free(m);
}

unsigned gw_xmap_count(const struct gw_xmap *m)
{
	return m->xm_count;
}

/* ---- sources and their buckets ---- */

static inline unsigned gw_xmap_shash(const struct gw_xmap *m, uint64_t key)
{
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> 32) & (m->xm_nbuckets - 1);
}

static struct gw_xsrc *gw_xsrc_find(const struct gw_xmap *m, uint64_t key)
{
	struct gw_xsrc *s;

	for (s = m->xm_shash[gw_xmap_shash(m, key)]; s; s = s->xh_hnext)
		if (s->xh_key == key)
			return s;
	return NULL;
}

/* key's source, made when it has none: there is always a free one, since
 * every source in use has an entry and this one is about to get one. */
static struct gw_xsrc *gw_xsrc_get(struct gw_xmap *m, uint64_t key)
{
	struct gw_xsrc *s = gw_xsrc_find(m, key);
	unsigned h;

	if (s)
		return s;
	s = TAILQ_FIRST(&m->xm_sfree);
	if (!s)
		abort();	/* broken invariant: more sources than entries */
	TAILQ_REMOVE(&m->xm_sfree, s, xh_blink);
	memset(s, 0, sizeof(*s));
	s->xh_key = key;
	TAILQ_INIT(&s->xh_settled);
	h = gw_xmap_shash(m, key);
	s->xh_hnext = m->xm_shash[h];
	m->xm_shash[h] = s;
	m->xm_nsrc++;
	return s;
}

/* s has no entry left: back to the free list. */
static void gw_xsrc_put(struct gw_xmap *m, struct gw_xsrc *s)
{
	struct gw_xsrc **pp;

	for (pp = &m->xm_shash[gw_xmap_shash(m, s->xh_key)]; *pp; pp = &(*pp)->xh_hnext)
		if (*pp == s) {
			*pp = s->xh_hnext;
			break;
		}
	TAILQ_INSERT_HEAD(&m->xm_sfree, s, xh_blink);
	m->xm_nsrc--;
}

/* A bucket of count n, placed after `after` (NULL: first) in xm_bkts. */
static struct gw_xbkt *gw_xbkt_new(struct gw_xmap *m, unsigned n, struct gw_xbkt *after)
{
	struct gw_xbkt *b = TAILQ_FIRST(&m->xm_bfree);

	if (!b)
		abort();	/* broken invariant: more counts than sqrt(4 * cap) */
	TAILQ_REMOVE(&m->xm_bfree, b, xk_link);
	b->xk_n = n;
	TAILQ_INIT(&b->xk_srcs);
	if (after)
		TAILQ_INSERT_AFTER(&m->xm_bkts, after, b, xk_link);
	else
		TAILQ_INSERT_HEAD(&m->xm_bkts, b, xk_link);
	return b;
}

/* s leaves its bucket for to (NULL: none), which has count n; an empty
 * bucket goes back to the free list. */
static void gw_xsrc_move(struct gw_xmap *m, struct gw_xsrc *s, struct gw_xbkt *to, unsigned n)
{
	struct gw_xbkt *b = s->xh_bkt;

	if (b) {
		TAILQ_REMOVE(&b->xk_srcs, s, xh_blink);
		if (TAILQ_EMPTY(&b->xk_srcs)) {
			TAILQ_REMOVE(&m->xm_bkts, b, xk_link);
			TAILQ_INSERT_HEAD(&m->xm_bfree, b, xk_link);
		}
	}
	if (to)
		TAILQ_INSERT_TAIL(&to->xk_srcs, s, xh_blink);
	s->xh_bkt = to;
	s->xh_nsettled = n;
}

/* xe (in flight) is settled now: on its source's list, one bucket up. */
static void gw_xsrc_settle(struct gw_xmap *m, struct gw_xent *xe)
{
	struct gw_xsrc *s = xe->xn_src;
	unsigned n = s->xh_nsettled + 1;
	struct gw_xbkt *to = s->xh_bkt ? TAILQ_NEXT(s->xh_bkt, xk_link) : TAILQ_FIRST(&m->xm_bkts);

	TAILQ_INSERT_TAIL(&s->xh_settled, xe, xn_slink);
	if (!to || to->xk_n != n)
		to = gw_xbkt_new(m, n, s->xh_bkt);
	gw_xsrc_move(m, s, to, n);
}

/* xe (settled) leaves its source's list: one bucket down. */
static void gw_xsrc_unsettle(struct gw_xmap *m, struct gw_xent *xe)
{
	struct gw_xsrc *s = xe->xn_src;
	unsigned n = s->xh_nsettled - 1;
	struct gw_xbkt *to = NULL;

	TAILQ_REMOVE(&s->xh_settled, xe, xn_slink);
	if (n) {
		to = TAILQ_PREV(s->xh_bkt, gw_xbkt_list, xk_link);
		if (!to || to->xk_n != n)
			to = gw_xbkt_new(m, n, to);
	}
	gw_xsrc_move(m, s, to, n);
}

unsigned gw_xmap_nsrc(const struct gw_xmap *m)
{
	return m->xm_nsrc;
}

unsigned gw_xmap_src_count(const struct gw_xmap *m, uint64_t src)
{
	const struct gw_xsrc *s = gw_xsrc_find(m, src);

	return s ? s->xh_count : 0;
}

/* ---- entries ---- */

void gw_xmap_remove(struct gw_xmap *m, struct gw_xent *xe)
{
	struct gw_xent **pp;

	if (!xe->xn_used)
		return;
	for (pp = &m->xm_chash[gw_xmap_chash(m, xe->xn_client, xe->xn_cxid)]; *pp; pp = &(*pp)->xn_cnext)
		if (*pp == xe) {
			*pp = xe->xn_cnext;
			break;
		}
	for (pp = &m->xm_ghash[gw_xmap_ghash(m, xe->xn_gxid)]; *pp; pp = &(*pp)->xn_gnext)
		if (*pp == xe) {
			*pp = xe->xn_gnext;
			break;
		}
	if (xe->xn_settled) {
		TAILQ_REMOVE(&m->xm_settled, xe, xn_link);
		gw_xsrc_unsettle(m, xe);
	}
	if (--xe->xn_src->xh_count == 0)
		gw_xsrc_put(m, xe->xn_src);
	memset(xe, 0, sizeof(*xe));
	TAILQ_INSERT_HEAD(&m->xm_free, xe, xn_link);	/* reused first: still in cache */
	m->xm_count--;
}

void gw_xmap_expire(struct gw_xmap *m, uint64_t now)
{
	struct gw_xent *xe;

	while ((xe = TAILQ_FIRST(&m->xm_settled)) && xe->xn_expires <= now)
		gw_xmap_remove(m, xe);
}

struct gw_xent *gw_xmap_find(struct gw_xmap *m, uint64_t client, uint32_t cxid, uint64_t now)
{
	struct gw_xent *xe;

	gw_xmap_expire(m, now);
	for (xe = m->xm_chash[gw_xmap_chash(m, client, cxid)]; xe; xe = xe->xn_cnext)
		if (xe->xn_client == client && xe->xn_cxid == cxid)
			return xe;
	return NULL;
}

struct gw_xent *gw_xmap_by_gxid(struct gw_xmap *m, uint32_t gxid)
{
	struct gw_xent *xe;

	for (xe = m->xm_ghash[gw_xmap_ghash(m, gxid)]; xe; xe = xe->xn_gnext)
		if (xe->xn_gxid == gxid)
			return xe;
	return NULL;
}

/* The map is full: the settled entry to evict for an add by source src
 * (the essay's shares), or NULL when every entry is in flight. */
static struct gw_xent *gw_xmap_victim(struct gw_xmap *m, uint64_t src, enum gw_xevict *evicted)
{
	struct gw_xsrc *s = gw_xsrc_find(m, src);
	unsigned nsrc = m->xm_nsrc + (s ? 0 : 1);
	struct gw_xbkt *top;

	if (s && s->xh_nsettled && s->xh_count >= m->xm_cap / nsrc) {
		*evicted = GW_XEVICT_OWN;
		return TAILQ_FIRST(&s->xh_settled);
	}
	top = TAILQ_LAST(&m->xm_bkts, gw_xbkt_list);
	if (!top)
		return NULL;
	*evicted = GW_XEVICT_LARGEST;
	return TAILQ_FIRST(&TAILQ_FIRST(&top->xk_srcs)->xh_settled);
}

/* A free entry (evicting one when the map is full) on neither chain yet;
 * NULL when every entry is in flight. */
static struct gw_xent *gw_xmap_take(struct gw_xmap *m, uint64_t src, uint64_t now,
				    enum gw_xevict *evicted)
{
	struct gw_xent *xe;

	*evicted = GW_XEVICT_NONE;
	gw_xmap_expire(m, now);
	xe = TAILQ_FIRST(&m->xm_free);
	if (!xe) {
		xe = gw_xmap_victim(m, src, evicted);
		if (!xe)
			return NULL;
		gw_xmap_remove(m, xe);
		xe = TAILQ_FIRST(&m->xm_free);
	}
	TAILQ_REMOVE(&m->xm_free, xe, xn_link);
	return xe;
}

static struct gw_xent *gw_xmap_link(struct gw_xmap *m, struct gw_xent *xe, uint64_t client,
				    uint64_t src, uint32_t cxid, struct gw_call *call)
{
	unsigned h;

	xe->xn_client = client;
	xe->xn_cxid = cxid;
	xe->xn_call = call;
	xe->xn_expires = 0;
	xe->xn_used = true;
	xe->xn_src = gw_xsrc_get(m, src);
	xe->xn_src->xh_count++;
	h = gw_xmap_chash(m, client, cxid);
	xe->xn_cnext = m->xm_chash[h];
	m->xm_chash[h] = xe;
	h = gw_xmap_ghash(m, xe->xn_gxid);
	xe->xn_gnext = m->xm_ghash[h];
	m->xm_ghash[h] = xe;
	m->xm_count++;
	return xe;
}

struct gw_xent *gw_xmap_add(struct gw_xmap *m, uint64_t client, uint64_t src, uint32_t cxid,
			    struct gw_call *call, uint64_t now, enum gw_xevict *evicted)
{
	struct gw_xent *xe = gw_xmap_take(m, src, now, evicted);

	if (!xe)
		return NULL;
	/* At most xm_cap values are mapped, so this ends quickly. */
	do
		xe->xn_gxid = (m->xm_next_gxid++ & m->xm_smask) | m->xm_sval;
	while (gw_xmap_by_gxid(m, xe->xn_gxid));
	return gw_xmap_link(m, xe, client, src, cxid, call);
}

bool gw_xmap_gxid_busy(struct gw_xmap *m, uint32_t gxid, uint64_t now)
{
	gw_xmap_expire(m, now);
	return gw_xmap_by_gxid(m, gxid) != NULL;
}

struct gw_xent *gw_xmap_add_as(struct gw_xmap *m, uint64_t client, uint64_t src, uint32_t cxid,
			       struct gw_call *call, uint64_t now, enum gw_xevict *evicted)
{
	struct gw_xent *xe;

	*evicted = GW_XEVICT_NONE;
	if (gw_xmap_gxid_busy(m, cxid, now))
		return NULL;
	xe = gw_xmap_take(m, src, now, evicted);
	if (!xe)
		return NULL;
	xe->xn_gxid = cxid;
	return gw_xmap_link(m, xe, client, src, cxid, call);
}

void gw_xmap_settle(struct gw_xmap *m, struct gw_xent *xe, uint64_t now, unsigned window_ms)
{
	if (xe->xn_settled) {	/* settled again: to the tails, same count */
		TAILQ_REMOVE(&m->xm_settled, xe, xn_link);
		TAILQ_REMOVE(&xe->xn_src->xh_settled, xe, xn_slink);
		TAILQ_INSERT_TAIL(&xe->xn_src->xh_settled, xe, xn_slink);
	} else {
		gw_xsrc_settle(m, xe);
	}
	xe->xn_settled = true;
	xe->xn_call = NULL;
	xe->xn_expires = now + window_ms;
	TAILQ_INSERT_TAIL(&m->xm_settled, xe, xn_link);
}

void gw_xmap_attach(struct gw_xmap *m, struct gw_xent *xe, struct gw_call *call)
{
	if (xe->xn_settled) {
		TAILQ_REMOVE(&m->xm_settled, xe, xn_link);
		gw_xsrc_unsettle(m, xe);
	}
	xe->xn_settled = false;
	xe->xn_call = call;
	xe->xn_expires = 0;
}

/* NFSv2 (RFC 1094): NULL, GETATTR, ROOT, LOOKUP, READLINK, READ,
 * WRITECACHE, READDIR, STATFS.  NFSv3 (RFC 1813): NULL, GETATTR, LOOKUP,
 * ACCESS, READLINK, READ, READDIR, READDIRPLUS, FSSTAT, FSINFO, PATHCONF,
 * COMMIT (a repeat only flushes again and returns the same verifier). */
#define GW_XMAP_NFS2_SAFE	0x300fbu
#define GW_XMAP_NFS3_SAFE	0x3f007bu
/* NFSv4 operations (RFC 7530): ACCESS, GETATTR, GETFH, LOOKUP, LOOKUPP,
 * NVERIFY, PUTFH, PUTPUBFH, PUTROOTFH, READ, READDIR, READLINK, RENEW,
 * RESTOREFH, SAVEFH, SECINFO, VERIFY. */
#define GW_XMAP_NFS4_SAFE	0x23cfc38608ull

bool gw_xmap_keeps_answered(uint32_t prog, uint32_t vers, uint32_t proc,
			    const struct chk_call_walk *cw)
{
	if (proc == 0)
		return false;
	if (prog == CHK_PROG_NFSACL)
		return proc != 1;		/* GETACL */
	if (prog != CHK_PROG_NFS || proc > 31)
		return true;
	if (vers == 2)
		return !(GW_XMAP_NFS2_SAFE >> proc & 1);
	if (vers == 3)
		return !(GW_XMAP_NFS3_SAFE >> proc & 1);
	if (vers != 4 || proc != 1 || !cw || cw->cw_nops_listed < 1)
		return true;
	if (cw->cw_minor >= 1 && cw->cw_op[0] == CHK_OP_SEQUENCE)
		return false;
	/* No slot (NFSv4.0): a server may cache a COMPOUND by XID, unless
	 * every one of its operations, all of them read, changes nothing. */
	if (cw->cw_nops_listed != cw->cw_nops)
		return true;
	for (unsigned i = 0; i < cw->cw_nops_listed; i++)
		if (cw->cw_op[i] >= 64 || !(GW_XMAP_NFS4_SAFE >> cw->cw_op[i] & 1))
			return true;
	return false;
}
