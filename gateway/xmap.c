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
	m->xm_ents = calloc(capacity, sizeof(*m->xm_ents));
	m->xm_chash = calloc(m->xm_nbuckets, sizeof(*m->xm_chash));
	m->xm_ghash = calloc(m->xm_nbuckets, sizeof(*m->xm_ghash));
	if (!m->xm_ents || !m->xm_chash || !m->xm_ghash) {
		gw_xmap_free(m);
		return NULL;
	}
	TAILQ_INIT(&m->xm_free);
	TAILQ_INIT(&m->xm_settled);
	for (unsigned i = 0; i < capacity; i++)
		TAILQ_INSERT_TAIL(&m->xm_free, &m->xm_ents[i], xn_link);
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
	free(m);
}

unsigned gw_xmap_count(const struct gw_xmap *m)
{
	return m->xm_count;
}

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
	if (!xe->xn_call)
		TAILQ_REMOVE(&m->xm_settled, xe, xn_link);
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

/* A free entry (evicting the oldest settled one when the map is full) on
 * neither chain yet; NULL when every entry is in flight. */
static struct gw_xent *gw_xmap_take(struct gw_xmap *m, uint64_t now, bool *evicted)
{
	struct gw_xent *xe;

	*evicted = false;
	gw_xmap_expire(m, now);
	xe = TAILQ_FIRST(&m->xm_free);
	if (!xe) {
		xe = TAILQ_FIRST(&m->xm_settled);
		if (!xe)
			return NULL;
		gw_xmap_remove(m, xe);
		*evicted = true;
		xe = TAILQ_FIRST(&m->xm_free);
	}
	TAILQ_REMOVE(&m->xm_free, xe, xn_link);
	return xe;
}

static struct gw_xent *gw_xmap_link(struct gw_xmap *m, struct gw_xent *xe, uint64_t client,
				    uint32_t cxid, struct gw_call *call)
{
	unsigned h;

	xe->xn_client = client;
	xe->xn_cxid = cxid;
	xe->xn_call = call;
	xe->xn_expires = 0;
	xe->xn_used = true;
	h = gw_xmap_chash(m, client, cxid);
	xe->xn_cnext = m->xm_chash[h];
	m->xm_chash[h] = xe;
	h = gw_xmap_ghash(m, xe->xn_gxid);
	xe->xn_gnext = m->xm_ghash[h];
	m->xm_ghash[h] = xe;
	m->xm_count++;
	return xe;
}

struct gw_xent *gw_xmap_add(struct gw_xmap *m, uint64_t client, uint32_t cxid,
			    struct gw_call *call, uint64_t now, bool *evicted)
{
	struct gw_xent *xe = gw_xmap_take(m, now, evicted);

	if (!xe)
		return NULL;
	/* At most xm_cap values are mapped, so this ends quickly. */
	do
		xe->xn_gxid = (m->xm_next_gxid++ & m->xm_smask) | m->xm_sval;
	while (gw_xmap_by_gxid(m, xe->xn_gxid));
	return gw_xmap_link(m, xe, client, cxid, call);
}

bool gw_xmap_gxid_busy(struct gw_xmap *m, uint32_t gxid, uint64_t now)
{
	gw_xmap_expire(m, now);
	return gw_xmap_by_gxid(m, gxid) != NULL;
}

struct gw_xent *gw_xmap_add_as(struct gw_xmap *m, uint64_t client, uint32_t cxid,
			       struct gw_call *call, uint64_t now, bool *evicted)
{
	struct gw_xent *xe;

	if (gw_xmap_gxid_busy(m, cxid, now))
		return NULL;
	xe = gw_xmap_take(m, now, evicted);
	if (!xe)
		return NULL;
	xe->xn_gxid = cxid;
	return gw_xmap_link(m, xe, client, cxid, call);
}

void gw_xmap_settle(struct gw_xmap *m, struct gw_xent *xe, uint64_t now, unsigned window_ms)
{
	if (!xe->xn_call)
		TAILQ_REMOVE(&m->xm_settled, xe, xn_link);
	xe->xn_call = NULL;
	xe->xn_expires = now + window_ms;
	TAILQ_INSERT_TAIL(&m->xm_settled, xe, xn_link);
}

void gw_xmap_attach(struct gw_xmap *m, struct gw_xent *xe, struct gw_call *call)
{
	if (!xe->xn_call)
		TAILQ_REMOVE(&m->xm_settled, xe, xn_link);
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
