// SPDX-License-Identifier: MIT
/*
 * This file contains the buffer pool: one anonymous mapping made at start
 * (huge pages when asked and available), cut into fixed-size buffers; the
 * free ones are bits of a map, and a buffer is the lowest free one; for a
 * record running on, the one right after its last when that is free, and
 * for a receiver's fresh buffer, the lowest with a free one after it:
 * the buffers of one large record or chunk lie side by side in memory and
 * go to a server as one RDMA segment and one registration, and small calls
 * keep reusing the same few buffers.
 * Buffers are reference counted because one receive buffer is shared by
 * every record that landed in it.  The region can be
 * registered with a device once, through a callback (gw_pool_register), so
 * an RDMA transport never registers per call what the pool already covers.
 * Each buffer also remembers whose bytes it may hold (gw_buf_get_for), so
 * a target a server writes for a client is zeroed only where it might hold
 * another client's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "pool.h"

struct gw_pool_reg {
	void *pr_reg;
	gw_pool_dereg_fn pr_dereg;
	void *pr_arg;
};

#define GW_POOL_HINTS	64
/* Places remembered per owner: a connection has several READs in flight,
 * each target in a place of its own. */
#define GW_POOL_PLACES	8
/* A run's walk looks at no more candidate runs, nor more buffers, than
 * these: its cost per target does not grow with the pool.  A connection's
 * own runs beyond them are still found through its places; on make
 * bench's NFSv3 rows (a pool of 1024) it zeroed as much as a walk of the
 * whole pool did. */
#define GW_POOL_WALK_RUNS	64
#define GW_POOL_WALK_BUFS	1024

/* Where one owner's last targets started (slot owner % GW_POOL_HINTS; a
 * slot two owners share serves the last one). */
struct gw_pool_hint {
	uint64_t gph_owner;
	unsigned gph_index[GW_POOL_PLACES];
	unsigned gph_next;		/* the place a new one replaces */
};

struct gw_pool {
	uint8_t *gpo_base;
	size_t gpo_len;
	uint32_t gpo_buf_size;
	unsigned gpo_nbufs;
	unsigned gpo_avail;
	unsigned gpo_promised;		/* <= gpo_avail, always */
	bool gpo_huge;
	struct gw_buf *gpo_bufs;		/* descriptors, one per buffer */
	uint64_t *gpo_freemap;		/* bit i set: buffer i is free */
	unsigned gpo_low;		/* no free bit in the words below it */
	/* Buffers [gpo_clean_lo, gpo_clean_end) were never taken: free and
	 * clean.  Only ever narrowed (gw_buf_take). */
	unsigned gpo_clean_lo, gpo_clean_end;
	unsigned gpo_nregs;
	struct gw_pool_reg gpo_regs[GW_POOL_MAX_REGS];
	struct gw_pool_hint gpo_hints[GW_POOL_HINTS];
	uint64_t gpo_walked;		/* buffers the walks looked at, ever */
};

struct gw_pool *gw_pool_new(uint32_t buf_size, unsigned nbufs, bool hugepages)
{
	struct gw_pool *p;
	size_t len;

	if (buf_size == 0 || nbufs == 0 || (buf_size & 4095))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	len = (size_t)buf_size * nbufs;
	p->gpo_base = MAP_FAILED;
	if (hugepages) {
		size_t hlen = (len + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);

		p->gpo_base = mmap(NULL, hlen, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p->gpo_base != MAP_FAILED) {
			len = hlen;
			p->gpo_huge = true;
		}
	}
	if (p->gpo_base == MAP_FAILED)
		p->gpo_base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->gpo_base == MAP_FAILED)
		goto err_map;
	p->gpo_len = len;
	p->gpo_buf_size = buf_size;
	p->gpo_nbufs = nbufs;
	p->gpo_bufs = calloc(nbufs, sizeof(*p->gpo_bufs));
	p->gpo_freemap = calloc((nbufs + 63) / 64, sizeof(*p->gpo_freemap));
	if (!p->gpo_bufs || !p->gpo_freemap)
		goto err_desc;
	for (unsigned i = 0; i < nbufs; i++) {
		struct gw_buf *b = &p->gpo_bufs[i];

		b->gb_data = p->gpo_base + (size_t)i * buf_size;
		b->gb_size = buf_size;
		b->gb_index = i;
		b->gb_owner = GW_BUF_CLEAN;	/* a fresh anonymous mapping reads as zeroes */
		b->gb_own_len = buf_size;
		p->gpo_freemap[i / 64] |= 1ull << (i % 64);
	}
	p->gpo_avail = nbufs;
	p->gpo_clean_end = nbufs;
	return p;

err_desc:
	free(p->gpo_bufs);
	free(p->gpo_freemap);
	munmap(p->gpo_base, len);
err_map:
	free(p);
	return NULL;
}

void gw_pool_free(struct gw_pool *p)
{
	if (!p)
		return;
	while (p->gpo_nregs > 0) {
		struct gw_pool_reg *r = &p->gpo_regs[--p->gpo_nregs];

		if (r->pr_dereg && r->pr_reg)
			r->pr_dereg(r->pr_arg, r->pr_reg);
	}
	munmap(p->gpo_base, p->gpo_len);
	free(p->gpo_bufs);
	free(p->gpo_freemap);
	free(p);
}

int gw_pool_register(struct gw_pool *p, gw_pool_reg_fn reg, gw_pool_dereg_fn dereg, void *arg)
{
	unsigned i;
	void *r;

	/* A slot freed by gw_pool_unregister (a backend removed by a reload)
	 * is taken again: indexes of the others do not move. */
	for (i = 0; i < p->gpo_nregs && p->gpo_regs[i].pr_reg; i++)
		;
	if (i == GW_POOL_MAX_REGS)
		return -ENOSPC;
	r = reg(arg, p->gpo_base, p->gpo_len);
	if (!r)
		return -EIO;
	p->gpo_regs[i] = (struct gw_pool_reg){ r, dereg, arg };
	if (i == p->gpo_nregs)
		p->gpo_nregs++;
	return (int)i;
}

void gw_pool_unregister(struct gw_pool *p, int idx)
{
	struct gw_pool_reg *r;

	if (idx < 0 || (unsigned)idx >= p->gpo_nregs || !p->gpo_regs[idx].pr_reg)
		return;
	r = &p->gpo_regs[idx];
	if (r->pr_dereg)
		r->pr_dereg(r->pr_arg, r->pr_reg);
	r->pr_reg = NULL;	/* the slot stays: indexes of others do not move */
	r->pr_dereg = NULL;
}

void *gw_pool_registration(const struct gw_pool *p, int idx)
{
	if (idx < 0 || (unsigned)idx >= p->gpo_nregs)
		return NULL;
	return p->gpo_regs[idx].pr_reg;
}

void gw_pool_region(const struct gw_pool *p, void **addr, size_t *len)
{
	*addr = p->gpo_base;
	*len = p->gpo_len;
}

bool gw_pool_hugepages(const struct gw_pool *p) { return p->gpo_huge; }
uint32_t gw_pool_buf_size(const struct gw_pool *p) { return p->gpo_buf_size; }
unsigned gw_pool_avail(const struct gw_pool *p) { return p->gpo_avail; }
unsigned gw_pool_count(const struct gw_pool *p) { return p->gpo_nbufs; }
uint64_t gw_pool_walked(const struct gw_pool *p) { return p->gpo_walked; }

/* The lowest free buffer whose right neighbour is free too (a record
 * that starts there can run on), or UINT32_MAX.  Only valid bits are
 * ever set, so a pool's last buffer has no free neighbour. */
static unsigned gw_pool_low_pair(const struct gw_pool *p)
{
	unsigned nw = (p->gpo_nbufs + 63) / 64;

	for (unsigned w = p->gpo_low; w < nw; w++) {
		uint64_t m = p->gpo_freemap[w], next = w + 1 < nw ? p->gpo_freemap[w + 1] : 0;
		uint64_t pair = m & ((m >> 1) | (next << 63));

		if (pair)
			return w * 64 + (unsigned)__builtin_ctzll(pair);
	}
	return UINT32_MAX;
}

/* Where a run goes on: right after prev, or (NULL) where one can start. */
static unsigned gw_pool_next(const struct gw_pool *p, const struct gw_buf *prev)
{
	return prev ? prev->gb_index + 1 : gw_pool_low_pair(p);
}

/* Buffer `want` when it is free (a record's next buffer, right after its
 * last one), else the lowest free one. */
static struct gw_buf *gw_buf_take(struct gw_pool *p, unsigned want)
{
	struct gw_buf *b;
	unsigned w = p->gpo_low, i;

	/* Promised buffers are not for anyone else. */
	if (p->gpo_avail == 0 || p->gpo_avail == p->gpo_promised)
		return NULL;
	if (want < p->gpo_nbufs && (p->gpo_freemap[want / 64] >> (want % 64) & 1)) {
		i = want;
	} else {
		while (p->gpo_freemap[w] == 0)	/* avail > 0: a set bit lies ahead */
			w++;
		p->gpo_low = w;
		i = w * 64 + (unsigned)__builtin_ctzll(p->gpo_freemap[w]);
	}
	b = &p->gpo_bufs[i];
	p->gpo_freemap[i / 64] &= ~(1ull << (i % 64));
	p->gpo_avail--;
	if (i >= p->gpo_clean_lo && i < p->gpo_clean_end) {	/* keep the larger side */
		if (i - p->gpo_clean_lo >= p->gpo_clean_end - i - 1)
			p->gpo_clean_end = i;
		else
			p->gpo_clean_lo = i + 1;
	}
	b->gb_refs = 1;
	b->gb_used = 0;
	return b;
}

static bool gw_buf_owner_ok(uint64_t owner)
{
	return owner != 0 && owner < GW_BUF_CLEAN;
}

/* A use that writes owner's bytes (GW_BUF_ANYONE: anyone's) anywhere in
 * the buffer, nothing cleared: what [0, gb_own_len) holds stays owner's
 * only if it was already. */
static struct gw_buf *gw_buf_mark(struct gw_buf *b, uint64_t owner)
{
	if (!b)
		return NULL;
	if (!gw_buf_owner_ok(owner))
		owner = GW_BUF_ANYONE;
	if (owner == GW_BUF_ANYONE || (b->gb_owner != owner && b->gb_owner != GW_BUF_CLEAN))
		b->gb_own_len = 0;
	b->gb_owner = owner;
	return b;
}

struct gw_buf *gw_buf_get(struct gw_pool *p)
{
	return gw_buf_mark(gw_buf_take(p, UINT32_MAX), GW_BUF_ANYONE);
}

static struct gw_buf *gw_buf_own(struct gw_pool *p, uint64_t owner, bool promised, unsigned want)
{
	if (promised) {
		if (p->gpo_promised == 0)
			abort();	/* broken invariant: no promise held */
		p->gpo_promised--;
	}
	return gw_buf_mark(gw_buf_take(p, want), owner);
}

struct gw_buf *gw_buf_get_own(struct gw_pool *p, uint64_t owner, bool promised)
{
	return gw_buf_own(p, owner, promised, UINT32_MAX);
}

struct gw_buf *gw_buf_get_own_after(struct gw_pool *p, uint64_t owner, bool promised,
				    const struct gw_buf *prev)
{
	return gw_buf_own(p, owner, promised, gw_pool_next(p, prev));
}

void gw_buf_owned(struct gw_buf *b, uint64_t owner, uint32_t len)
{
	if (b->gb_owner == owner && gw_buf_owner_ok(owner) && b->gb_own_len < len)
		b->gb_own_len = len <= b->gb_size ? len : b->gb_size;
}

/* The buffer's bytes go back to a client only where a server says it wrote
 * them, and it may write less than it says (an RDMA Write completes at the
 * writer only): every offered byte that may hold another client's data is
 * zeroed.  Bytes of the same client (same connection) may stay: they are
 * its own. */
static struct gw_buf *gw_buf_offer(struct gw_buf *b, uint64_t owner, uint32_t offer,
				   uint32_t *cleared)
{
	b = gw_buf_mark(b, owner);
	*cleared = 0;
	if (!b)
		return NULL;
	if (offer > b->gb_size)
		offer = b->gb_size;
	/* [0, gb_own_len) is owner's or zeroes (gw_buf_mark); the rest of the
	 * offer may hold anyone's.  Anyone's buffer owns nothing after. */
	if (b->gb_own_len < offer) {
		memset(b->gb_data + b->gb_own_len, 0, offer - b->gb_own_len);
		*cleared = offer - b->gb_own_len;
		if (b->gb_owner != GW_BUF_ANYONE)
			b->gb_own_len = offer;
	}
	return b;
}

static bool gw_pool_free_at(const struct gw_pool *p, unsigned i)
{
	return i < p->gpo_nbufs && (p->gpo_freemap[i / 64] >> (i % 64) & 1);
}

static bool gw_pool_free_run(const struct gw_pool *p, unsigned i, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		if (!gw_pool_free_at(p, i + k))
			return false;
	return true;
}

/* Where a target of n buffers goes when none of owner's places is free:
 * the highest free run of n whose first and last buffers hold owner's
 * bytes, else never-written buffers, else the highest, else UINT32_MAX.
 * Targets are placed from the top and receive buffers from the bottom
 * (gw_pool_low_pair), so that call records do not land in the runs
 * targets keep going back to.  The walk down the free map stops after
 * GW_POOL_WALK_RUNS runs or GW_POOL_WALK_BUFS buffers (busy words are
 * skipped whole): its cost does not grow with the pool.  For targets of
 * several buffers only (a 64 KiB memset costs less than a walk for each
 * small READ). */
static unsigned gw_pool_high_run(struct gw_pool *p, unsigned n, uint64_t owner)
{
	unsigned have = 0, runs = 0, looked = 0, clean = UINT32_MAX, any = UINT32_MAX;

	if (p->gpo_clean_end - p->gpo_clean_lo >= n)	/* never taken: O(1) */
		clean = p->gpo_clean_end - n;
	for (unsigned i = p->gpo_nbufs; i-- > 0;) {
		uint64_t o;

		if (p->gpo_freemap[i / 64] == 0) {	/* a word of busy buffers */
			have = 0;
			i -= i % 64;
			continue;
		}
		if (++looked > GW_POOL_WALK_BUFS || runs == GW_POOL_WALK_RUNS)
			break;
		if (!(p->gpo_freemap[i / 64] >> (i % 64) & 1)) {
			have = 0;
			continue;
		}
		if (++have < n)
			continue;
		runs++;
		/* Its ends: a run is usually one earlier target, or part of it. */
		o = p->gpo_bufs[i].gb_owner;
		if (o != p->gpo_bufs[i + n - 1].gb_owner)
			o = 0;
		if (o == owner) {
			p->gpo_walked += looked;
			return i;
		}
		if (o == GW_BUF_CLEAN && clean == UINT32_MAX)
			clean = i;
		if (any == UINT32_MAX)
			any = i;
	}
	p->gpo_walked += looked;
	return clean != UINT32_MAX ? clean : any;
}

/* The first of owner's places (where its last targets started) from which
 * n buffers are free and the first still owner's: several connections
 * reading at once would otherwise take each other's last buffers in turn
 * and zero almost every byte they read. */
static unsigned gw_pool_hint(const struct gw_pool *p, uint64_t owner, unsigned n)
{
	const struct gw_pool_hint *h = &p->gpo_hints[owner % GW_POOL_HINTS];

	if (h->gph_owner != owner)
		return UINT32_MAX;
	for (unsigned k = 0; k < GW_POOL_PLACES; k++) {
		unsigned i = h->gph_index[k];

		if (gw_pool_free_run(p, i, n) && p->gpo_bufs[i].gb_owner == owner)
			return i;
	}
	return UINT32_MAX;
}

/* Buffer i is where one of owner's targets started: one of its places,
 * replacing its oldest. */
static void gw_pool_remember(struct gw_pool *p, uint64_t owner, unsigned i)
{
	struct gw_pool_hint *h = &p->gpo_hints[owner % GW_POOL_HINTS];

	if (h->gph_owner != owner) {
		h->gph_owner = owner;
		h->gph_next = 0;
		for (unsigned k = 0; k < GW_POOL_PLACES; k++)
			h->gph_index[k] = UINT32_MAX;
	}
	for (unsigned k = 0; k < GW_POOL_PLACES; k++)
		if (h->gph_index[k] == i)
			return;
	h->gph_index[h->gph_next] = i;
	h->gph_next = (h->gph_next + 1) % GW_POOL_PLACES;
}

/* The highest of the never-taken buffers, or UINT32_MAX. */
static unsigned gw_pool_clean_top(const struct gw_pool *p)
{
	return p->gpo_clean_end > p->gpo_clean_lo ? p->gpo_clean_end - 1 : UINT32_MAX;
}

/* The highest free buffer, or UINT32_MAX. */
static unsigned gw_pool_high_free(const struct gw_pool *p)
{
	for (unsigned w = (p->gpo_nbufs + 63) / 64; w-- > p->gpo_low;)
		if (p->gpo_freemap[w])
			return w * 64 + 63 - (unsigned)__builtin_clzll(p->gpo_freemap[w]);
	return UINT32_MAX;
}

/* A target's first buffer: one of owner's places; else for a run the walk
 * (its own, never written, any), for one buffer a never-taken one, else
 * the highest free; else where a run can start. */
static struct gw_buf *gw_buf_target(struct gw_pool *p, uint64_t owner, uint32_t offer,
				    uint32_t *cleared, unsigned n)
{
	unsigned want = gw_pool_hint(p, owner, n);
	struct gw_buf *b;

	if (want == UINT32_MAX && n > 1)
		want = gw_pool_high_run(p, n, owner);
	if (want == UINT32_MAX && n == 1)
		want = gw_pool_clean_top(p);
	if (want == UINT32_MAX && n == 1)
		want = gw_pool_high_free(p);
	if (want == UINT32_MAX)
		want = n > 1 ? gw_pool_low_pair(p) : UINT32_MAX;
	b = gw_buf_offer(gw_buf_take(p, want), owner, offer, cleared);
	if (b && gw_buf_owner_ok(owner))
		gw_pool_remember(p, owner, b->gb_index);
	return b;
}

struct gw_buf *gw_buf_get_for(struct gw_pool *p, uint64_t owner, uint32_t offer,
			      uint32_t *cleared)
{
	return gw_buf_target(p, owner, offer, cleared, 1);
}

struct gw_buf *gw_buf_get_for_after(struct gw_pool *p, uint64_t owner, uint32_t offer,
				    uint32_t *cleared, const struct gw_buf *prev, unsigned n)
{
	if (!prev)
		return gw_buf_target(p, owner, offer, cleared, n ? n : 1);
	return gw_buf_offer(gw_buf_take(p, prev->gb_index + 1), owner, offer, cleared);
}

void gw_buf_ref(struct gw_buf *b)
{
	b->gb_refs++;
}

void gw_buf_put(struct gw_pool *p, struct gw_buf *b)
{
	if (!b)
		return;
	if (b->gb_refs == 0)
		abort();	/* broken invariant: double put */
	if (--b->gb_refs > 0)
		return;
	b->gb_used = 0;
	p->gpo_freemap[b->gb_index / 64] |= 1ull << (b->gb_index % 64);
	if (b->gb_index / 64 < p->gpo_low)
		p->gpo_low = b->gb_index / 64;
	p->gpo_avail++;
}

struct gw_buf *gw_pool_buf_of(struct gw_pool *p, const void *addr)
{
	const uint8_t *a = addr;
	size_t off;

	if (a < p->gpo_base || a >= p->gpo_base + (size_t)p->gpo_buf_size * p->gpo_nbufs)
		return NULL;
	off = (size_t)(a - p->gpo_base);
	return &p->gpo_bufs[off / p->gpo_buf_size];
}

bool gw_pool_promise(struct gw_pool *p, unsigned n, unsigned keep_free)
{
	if (p->gpo_avail - p->gpo_promised < (uint64_t)n + keep_free)
		return false;
	p->gpo_promised += n;
	return true;
}

void gw_pool_unpromise(struct gw_pool *p, unsigned n)
{
	if (n > p->gpo_promised)
		abort();	/* broken invariant */
	p->gpo_promised -= n;
}

unsigned gw_pool_unpromised(const struct gw_pool *p)
{
	return p->gpo_avail - p->gpo_promised;
}
