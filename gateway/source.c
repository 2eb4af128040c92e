// SPDX-License-Identifier: MIT
/*
 * This file contains the sources of a worker's clients and their shares
 * of its call objects (prefix gw_src_).
 *
 * A source is a client host: the address its connections were admitted
 * from (gw_client_set_src), so its nconnect connections and the
 * connections it opens to get more are one; a connection without an
 * address (an adopted socket) is a source of its own.  Every call object
 * a connection holds counts against its source.
 *
 * Why: calls_per_client bounds one connection, max_conns_per_source the
 * connections of one address, but their product was larger than the
 * worker's call objects: 40 connections of one host that sent READs and
 * never read their replies held all 4,096, and no other client of the
 * worker got one.  So a source may hold at most its share of the call
 * objects, max_calls / (active sources + 1), where the active sources are
 * those holding one (the adding one counted): alone, half of them; with
 * n others, 1/(n+2).  The "+ 1" keeps a share free for the next source,
 * which is served at once however the others behave; the ones above the
 * new, smaller share take no more until their calls end.  A source at its
 * share is not read (backpressure on it alone: gw_src_may_read marks it,
 * and its connections are told to look again once it is below), and a
 * source whose calls do not end because it does not read its replies is
 * what the frontend evicts while call objects are short (gw_srcs_short,
 * evict_timeout).  Idle sources do not count: a fleet of idle mounts does
 * not shrink a busy client's share.
 *
 * RPCSEC_GSS calls that wait for their XID (gss_xid.c) are call objects
 * too, and at most GW_XWAIT_PER_SOURCE of them per source: XID collisions
 * between honest clients are rare, and a host that makes calls wait on
 * XIDs it keeps busy itself stops being read there.
 *
 * The table is fixed at start (max_clients + 16 sources: each connection
 * has one); were it full, the connection would share a spill source with
 * the others that found no slot (counted).  Keys are the address hashed
 * with a random seed of the worker, so a client cannot aim its address at
 * another's chain, and the XID map keys its shares on the same value.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "client.h"
#include "ctx.h"
#include "log.h"

TAILQ_HEAD(gw_src_list, gw_src);

struct gw_src {
	uint64_t sr_key;
	unsigned sr_conns;		/* client connections attached */
	unsigned sr_ncalls;		/* call objects they hold */
	unsigned sr_nxwait;		/* of them, RPCSEC_GSS calls waiting for their XID */
	bool sr_paused;			/* refused reading at its share: on srs_paused */
	bool sr_spill;			/* the spill source (never freed) */
	struct gw_src *sr_hnext;	/* chain by key */
	struct gw_client_list sr_clients;	/* its connections (gcl_slink) */
	TAILQ_ENTRY(gw_src) sr_link;	/* srs_free or srs_paused */
};

struct gw_srcs {
	unsigned srs_cap, srs_nbuckets;	/* slots; chains (a power of two) */
	unsigned srs_calls;		/* the worker's call objects (max_calls) */
	unsigned srs_nactive;		/* sources holding a call object */
	uint64_t srs_seed;
	struct gw_stats *srs_stats;
	const struct gw_log *srs_log;
	struct gw_src *srs_slots;
	struct gw_src **srs_hash;
	struct gw_src_list srs_free;
	struct gw_src_list srs_paused;	/* refused at their share, waiting to be told */
	struct gw_src srs_spill;
};

static uint64_t gw_src_mix(uint64_t x)
{
	/* splitmix64's finalizer: every input bit reaches every output bit */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct gw_srcs *gw_srcs_new(unsigned cap, unsigned ncalls, struct gw_stats *st,
			    const struct gw_log *lg)
{
	struct gw_srcs *ss = calloc(1, sizeof(*ss));

	if (!ss)
		return NULL;
	ss->srs_cap = cap;
	ss->srs_calls = ncalls;
	ss->srs_stats = st;
	ss->srs_log = lg;
	ss->srs_nbuckets = 16;
	while (ss->srs_nbuckets < cap)
		ss->srs_nbuckets <<= 1;
	ss->srs_slots = calloc(cap, sizeof(*ss->srs_slots));
	ss->srs_hash = calloc(ss->srs_nbuckets, sizeof(*ss->srs_hash));
	if (!ss->srs_slots || !ss->srs_hash) {
		gw_srcs_free(ss);
		return NULL;
	}
	if (getrandom(&ss->srs_seed, sizeof(ss->srs_seed), 0) != sizeof(ss->srs_seed))
		ss->srs_seed = gw_src_mix(gw_now_ms() ^ (uintptr_t)ss);
	TAILQ_INIT(&ss->srs_free);
	TAILQ_INIT(&ss->srs_paused);
	for (unsigned i = 0; i < cap; i++)
		TAILQ_INSERT_TAIL(&ss->srs_free, &ss->srs_slots[i], sr_link);
	TAILQ_INIT(&ss->srs_spill.sr_clients);
	ss->srs_spill.sr_spill = true;
	return ss;
}

void gw_srcs_free(struct gw_srcs *ss)
{
	if (!ss)
		return;
	free(ss->srs_slots);
	free(ss->srs_hash);
	free(ss);
}

uint64_t gw_src_addr_key(const struct gw_srcs *ss, const uint8_t addr[16])
{
	uint64_t a, b;

	memcpy(&a, addr, 8);
	memcpy(&b, addr + 8, 8);
	return gw_src_mix(gw_src_mix(a ^ ss->srs_seed) ^ b);
}

static unsigned gw_src_bucket(const struct gw_srcs *ss, uint64_t key)
{
	return (unsigned)gw_src_mix(key ^ ss->srs_seed) & (ss->srs_nbuckets - 1);
}

/* key's source, made if need be; the spill source when no slot is free. */
static struct gw_src *gw_src_get(struct gw_srcs *ss, uint64_t key)
{
	unsigned h = gw_src_bucket(ss, key);
	struct gw_src *s;

	for (s = ss->srs_hash[h]; s; s = s->sr_hnext)
		if (s->sr_key == key)
			return s;
	s = TAILQ_FIRST(&ss->srs_free);
	if (!s) {
		gw_stat_inc(ss->srs_stats, GW_CTR_SRC_SPILL);
		gw_warn(ss->srs_log, "source table full (%u): connection shares the spill source",
			ss->srs_cap);
		return &ss->srs_spill;
	}
	TAILQ_REMOVE(&ss->srs_free, s, sr_link);
	memset(s, 0, sizeof(*s));
	s->sr_key = key;
	TAILQ_INIT(&s->sr_clients);
	s->sr_hnext = ss->srs_hash[h];
	ss->srs_hash[h] = s;
	return s;
}

static void gw_src_put(struct gw_srcs *ss, struct gw_src *s)
{
	struct gw_src **pp;

	if (s->sr_conns || s->sr_ncalls || s->sr_spill)
		return;
	for (pp = &ss->srs_hash[gw_src_bucket(ss, s->sr_key)]; *pp; pp = &(*pp)->sr_hnext)
		if (*pp == s) {
			*pp = s->sr_hnext;
			break;
		}
	if (s->sr_paused)
		TAILQ_REMOVE(&ss->srs_paused, s, sr_link);
	TAILQ_INSERT_HEAD(&ss->srs_free, s, sr_link);
}

void gw_src_attach(struct gw_srcs *ss, struct gw_client *cl, uint64_t key)
{
	struct gw_src *s = gw_src_get(ss, key);

	cl->gcl_src_ent = s;
	cl->gcl_src_key = key;
	s->sr_conns++;
	TAILQ_INSERT_TAIL(&s->sr_clients, cl, gcl_slink);
}

void gw_src_detach(struct gw_srcs *ss, struct gw_client *cl)
{
	struct gw_src *s = cl->gcl_src_ent;

	if (!s)
		return;
	TAILQ_REMOVE(&s->sr_clients, cl, gcl_slink);
	s->sr_conns--;
	cl->gcl_src_ent = NULL;
	gw_src_put(ss, s);
}

/* A share of the call objects (the essay): the active sources, s counted. */
static unsigned gw_src_share(const struct gw_srcs *ss, const struct gw_src *s)
{
	unsigned n = ss->srs_nactive + (s->sr_ncalls ? 0 : 1);
	unsigned share = ss->srs_calls / (n + 1);

	return share ? share : 1;
}

/* Below its share of call objects and of waiting GSS calls. */
static bool gw_src_below(const struct gw_srcs *ss, const struct gw_src *s)
{
	return s->sr_ncalls < gw_src_share(ss, s) && s->sr_nxwait < GW_XWAIT_PER_SOURCE;
}

bool gw_src_may_read(struct gw_srcs *ss, struct gw_src *s)
{
	if (gw_src_below(ss, s))
		return true;
	if (!s->sr_paused) {
		s->sr_paused = true;
		TAILQ_INSERT_TAIL(&ss->srs_paused, s, sr_link);
		gw_stat_inc(ss->srs_stats, s->sr_nxwait >= GW_XWAIT_PER_SOURCE ?
			    GW_CTR_SRC_GSS_WAITS : GW_CTR_SRC_CALL_SHARE);
	}
	return false;
}

/* s is below its share again: each of its connections looks again (none
 * of them closes from here: cop_update only re-arms events). */
static void gw_src_wake(struct gw_srcs *ss, struct gw_src *s)
{
	struct gw_client *cl;

	s->sr_paused = false;
	TAILQ_REMOVE(&ss->srs_paused, s, sr_link);
	TAILQ_FOREACH(cl, &s->sr_clients, gcl_slink)
		if (!cl->gcl_closing)
			cl->gcl_ops->cop_update(cl->gcl_arg);
}

/* The shares grew: the paused sources now below theirs look again.  At
 * most active + 1 sources can be at their share at once. */
static void gw_src_wake_below(struct gw_srcs *ss)
{
	struct gw_src *s, *next;

	for (s = TAILQ_FIRST(&ss->srs_paused); s; s = next) {
		next = TAILQ_NEXT(s, sr_link);
		if (gw_src_below(ss, s))
			gw_src_wake(ss, s);
	}
}

void gw_src_call_add(struct gw_srcs *ss, struct gw_src *s)
{
	if (s->sr_ncalls++ == 0)
		ss->srs_nactive++;
}

void gw_src_call_remove(struct gw_srcs *ss, struct gw_src *s)
{
	if (--s->sr_ncalls == 0) {
		ss->srs_nactive--;	/* every share grows */
		gw_src_wake_below(ss);
		gw_src_put(ss, s);	/* its last connection went before its calls */
	} else if (s->sr_paused && gw_src_below(ss, s)) {
		gw_src_wake(ss, s);
	}
}

void gw_src_xwait_add(struct gw_src *s)
{
	s->sr_nxwait++;
}

void gw_src_xwait_remove(struct gw_srcs *ss, struct gw_src *s)
{
	s->sr_nxwait--;
	if (s->sr_paused && gw_src_below(ss, s))
		gw_src_wake(ss, s);
}

bool gw_srcs_short(const struct gw_srcs *ss, unsigned avail)
{
	unsigned share = ss->srs_calls / (ss->srs_nactive + 2);

	return avail < (share ? share : 1);
}
