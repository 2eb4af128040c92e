// SPDX-License-Identifier: MIT
/*
 * This file contains the buffer pool: one anonymous mapping made at start
 * (huge pages when asked and available), cut into fixed-size buffers kept
 * on a free list.  Buffers are reference counted because one receive
 * buffer is shared by every record that landed in it.  The region can be
 * registered with a device once, through a callback (gw_pool_register), so
 * an RDMA transport never registers per call what the pool already covers.
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

struct gw_pool {
	uint8_t *po_base;
	size_t po_len;
	uint32_t po_buf_size;
	unsigned po_nbufs;
	unsigned po_avail;
	unsigned po_promised;		/* <= po_avail, always */
	bool po_huge;
	struct gw_buf *po_bufs;		/* descriptors, one per buffer */
	struct gw_buf *po_free;
	unsigned po_nregs;
	struct gw_pool_reg po_regs[GW_POOL_MAX_REGS];
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
	p->po_base = MAP_FAILED;
	if (hugepages) {
		size_t hlen = (len + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1);

		p->po_base = mmap(NULL, hlen, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p->po_base != MAP_FAILED) {
			len = hlen;
			p->po_huge = true;
		}
	}
	if (p->po_base == MAP_FAILED)
		p->po_base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->po_base == MAP_FAILED)
		goto err_map;
	p->po_len = len;
	p->po_buf_size = buf_size;
	p->po_nbufs = nbufs;
	p->po_bufs = calloc(nbufs, sizeof(*p->po_bufs));
	if (!p->po_bufs)
		goto err_desc;
	for (unsigned i = nbufs; i-- > 0;) {
		struct gw_buf *b = &p->po_bufs[i];

		b->gb_data = p->po_base + (size_t)i * buf_size;
		b->gb_size = buf_size;
		b->gb_index = i;
		b->gb_next_free = p->po_free;
		p->po_free = b;
	}
	p->po_avail = nbufs;
	return p;

err_desc:
	munmap(p->po_base, len);
err_map:
	free(p);
	return NULL;
}

void gw_pool_free(struct gw_pool *p)
{
	if (!p)
		return;
	while (p->po_nregs > 0) {
		struct gw_pool_reg *r = &p->po_regs[--p->po_nregs];

		if (r->pr_dereg && r->pr_reg)
			r->pr_dereg(r->pr_arg, r->pr_reg);
	}
	munmap(p->po_base, p->po_len);
	free(p->po_bufs);
	free(p);
}

int gw_pool_register(struct gw_pool *p, gw_pool_reg_fn reg, gw_pool_dereg_fn dereg, void *arg)
{
	unsigned i;
	void *r;

	/* A slot freed by gw_pool_unregister (a backend removed by a reload)
	 * is taken again: indexes of the others do not move. */
	for (i = 0; i < p->po_nregs && p->po_regs[i].pr_reg; i++)
		;
	if (i == GW_POOL_MAX_REGS)
		return -ENOSPC;
	r = reg(arg, p->po_base, p->po_len);
	if (!r)
		return -EIO;
	p->po_regs[i] = (struct gw_pool_reg){ r, dereg, arg };
	if (i == p->po_nregs)
		p->po_nregs++;
	return (int)i;
}

void gw_pool_unregister(struct gw_pool *p, int idx)
{
	struct gw_pool_reg *r;

	if (idx < 0 || (unsigned)idx >= p->po_nregs || !p->po_regs[idx].pr_reg)
		return;
	r = &p->po_regs[idx];
	if (r->pr_dereg)
		r->pr_dereg(r->pr_arg, r->pr_reg);
	r->pr_reg = NULL;	/* the slot stays: indexes of others do not move */
	r->pr_dereg = NULL;
}

void *gw_pool_registration(const struct gw_pool *p, int idx)
{
	if (idx < 0 || (unsigned)idx >= p->po_nregs)
		return NULL;
	return p->po_regs[idx].pr_reg;
}

void gw_pool_region(const struct gw_pool *p, void **addr, size_t *len)
{
	*addr = p->po_base;
	*len = p->po_len;
}

bool gw_pool_hugepages(const struct gw_pool *p) { return p->po_huge; }
uint32_t gw_pool_buf_size(const struct gw_pool *p) { return p->po_buf_size; }
unsigned gw_pool_avail(const struct gw_pool *p) { return p->po_avail; }
unsigned gw_pool_count(const struct gw_pool *p) { return p->po_nbufs; }

struct gw_buf *gw_buf_get(struct gw_pool *p)
{
	struct gw_buf *b = p->po_free;

	/* Promised buffers are not for anyone else. */
	if (!b || p->po_avail == p->po_promised)
		return NULL;
	p->po_free = b->gb_next_free;
	p->po_avail--;
	b->gb_next_free = NULL;
	b->gb_refs = 1;
	b->gb_used = 0;
	return b;
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
	b->gb_next_free = p->po_free;
	p->po_free = b;
	p->po_avail++;
}

struct gw_buf *gw_pool_buf_of(struct gw_pool *p, const void *addr)
{
	const uint8_t *a = addr;
	size_t off;

	if (a < p->po_base || a >= p->po_base + (size_t)p->po_buf_size * p->po_nbufs)
		return NULL;
	off = (size_t)(a - p->po_base);
	return &p->po_bufs[off / p->po_buf_size];
}

bool gw_pool_promise(struct gw_pool *p, unsigned n, unsigned keep_free)
{
	if (p->po_avail - p->po_promised < (uint64_t)n + keep_free)
		return false;
	p->po_promised += n;
	return true;
}

void gw_pool_unpromise(struct gw_pool *p, unsigned n)
{
	if (n > p->po_promised)
		abort();	/* broken invariant */
	p->po_promised -= n;
}

struct gw_buf *gw_buf_get_promised(struct gw_pool *p)
{
	if (p->po_promised == 0)
		abort();	/* broken invariant: no promise held */
	p->po_promised--;
	return gw_buf_get(p);
}

unsigned gw_pool_unpromised(const struct gw_pool *p)
{
	return p->po_avail - p->po_promised;
}
