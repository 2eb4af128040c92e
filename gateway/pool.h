/* SPDX-License-Identifier: MIT */
/*
 * This file contains the buffer pool of rpcrdma-gw (pool.c, prefix gw_pool_ and
 * gw_buf_) and the record, an iovec list over pool buffers (record.c,
 * gw_rec_).
 */
#ifndef RPCRDMA_GW_POOL_H
#define RPCRDMA_GW_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* ------------------------------------------------------------------------
 * Buffer pool - pool.c
 *
 * One mmap()ed region cut into fixed-size buffers, allocated at start; the
 * hot path never calls malloc.  Buffers are reference counted: a receive
 * buffer is shared by every record (and part of a record) received into
 * it, and returns to the pool when the last reference goes.
 *
 * Registration hook: a transport that needs the memory registered with a
 * device (RDMA) calls gw_pool_register() once; the callback receives the
 * whole region (addr, len) and returns an opaque registration (for verbs:
 * the struct ibv_mr *), kept until gw_pool_free() hands it back to the
 * dereg callback.  Because client data is received straight into this
 * region, the server can RDMA Read a WRITE payload where it landed.
 * ------------------------------------------------------------------------ */
struct gw_buf {
	uint8_t *gb_data;
	uint32_t gb_size;
	uint32_t gb_used;		/* bytes filled by the receiver */
	uint32_t gb_refs;
	uint32_t gb_index;		/* position in the pool */
	uint32_t gb_own_len;		/* [0, gb_own_len) holds gb_owner's bytes or zeroes */
	uint64_t gb_owner;		/* GW_BUF_CLEAN, a client's generation, or GW_BUF_ANYONE */
};
/* Owners (gb_owner).  A client's generation (gw_client_gen) is neither. */
#define GW_BUF_CLEAN	(UINT64_MAX - 1)	/* all zeroes: never written since the map */
#define GW_BUF_ANYONE	UINT64_MAX		/* may hold anyone's bytes */

typedef void *(*gw_pool_reg_fn)(void *arg, void *addr, size_t len);
typedef void (*gw_pool_dereg_fn)(void *arg, void *reg);
#define GW_POOL_MAX_REGS	16	/* GW_BACKEND_SLOTS: one per RDMA server context */

struct gw_pool;
/* hugepages: try MAP_HUGETLB first, fall back to normal pages. */
struct gw_pool *gw_pool_new(uint32_t buf_size, unsigned nbufs, bool hugepages);
/* Deregisters every registration (dereg callbacks), unmaps. */
void gw_pool_free(struct gw_pool *p);
/* Register the whole region once.  Returns a registration index >= 0, or
 * -ENOSPC (too many), -EIO (reg returned NULL). */
int gw_pool_register(struct gw_pool *p, gw_pool_reg_fn reg, gw_pool_dereg_fn dereg, void *arg);
void *gw_pool_registration(const struct gw_pool *p, int idx);
/* Give registration idx back now (dereg callback), before gw_pool_free(). */
void gw_pool_unregister(struct gw_pool *p, int idx);
void gw_pool_region(const struct gw_pool *p, void **addr, size_t *len);
bool gw_pool_hugepages(const struct gw_pool *p);
uint32_t gw_pool_buf_size(const struct gw_pool *p);
unsigned gw_pool_avail(const struct gw_pool *p);
unsigned gw_pool_count(const struct gw_pool *p);
/* Buffers the placement walks of targets looked at, ever: what a target
 * costs beyond its own places (bounded per target, whatever the pool). */
uint64_t gw_pool_walked(const struct gw_pool *p);
/* A buffer with one reference and gb_used = 0, or NULL when empty.  Its
 * owner becomes GW_BUF_ANYONE: the caller may write anyone's bytes. */
struct gw_buf *gw_buf_get(struct gw_pool *p);
/* A buffer whose first `offer` bytes a server will write for owner (a
 * client's generation): whatever of them may hold another client's bytes
 * is zeroed first, counted in *cleared; the rest of the buffer is never
 * handed out for this use.  Zeroing costs about a memcpy; skipping it when
 * the bytes are the same client's own is what this bookkeeping is for, and
 * why a target goes back where owner's last one started when it can, else
 * to the highest free buffers (receive buffers take the lowest). */
struct gw_buf *gw_buf_get_for(struct gw_pool *p, uint64_t owner, uint32_t offer,
			      uint32_t *cleared);
/* The same for a target of n buffers: the first (prev NULL) where n free
 * buffers follow, then each the one right after prev when free, so the
 * target is one RDMA segment and one window. */
struct gw_buf *gw_buf_get_for_after(struct gw_pool *p, uint64_t owner, uint32_t offer,
				    uint32_t *cleared, const struct gw_buf *prev, unsigned n);
/* A buffer the caller fills with owner's bytes only (a client
 * connection's receive buffer): what it held of owner's stays counted as
 * owner's.  promised: take one of the caller's promised buffers (never
 * NULL while the promise is held). */
struct gw_buf *gw_buf_get_own(struct gw_pool *p, uint64_t owner, bool promised);
/* The same, but the buffer right after prev in memory when it is free: a
 * record that runs on into it stays one RDMA segment and one window.
 * prev NULL (a receiver's fresh buffer, where a record may start): the
 * lowest free buffer with a free one after it, so that a buffer some idle
 * connection keeps does not split the next large record. */
struct gw_buf *gw_buf_get_own_after(struct gw_pool *p, uint64_t owner, bool promised,
				    const struct gw_buf *prev);
/* [0, len) of b now holds owner's bytes only (its receiver filled them);
 * nothing changes unless b is owner's (gw_buf_get_own). */
void gw_buf_owned(struct gw_buf *b, uint64_t owner, uint32_t len);
void gw_buf_ref(struct gw_buf *b);
void gw_buf_put(struct gw_pool *p, struct gw_buf *b);
/* The buffer holding addr, or NULL when addr is outside the region. */
struct gw_buf *gw_pool_buf_of(struct gw_pool *p, const void *addr);

/* Promises (deadlock avoidance, see record.c): a receiver that learnt a
 * fragment's length reserves the buffers it will need, so every record
 * that started can finish.  Buffers not promised: avail - promised. */
bool gw_pool_promise(struct gw_pool *p, unsigned n, unsigned keep_free);
void gw_pool_unpromise(struct gw_pool *p, unsigned n);
unsigned gw_pool_unpromised(const struct gw_pool *p);

/* ------------------------------------------------------------------------
 * Records and the record receiver - record.c
 * ------------------------------------------------------------------------ */
#define GW_REC_MAX_IOV	64
#define GW_REC_FEW_PIECES	32	/* more, and a finished record is compacted (record.c): RDMA sends 32 */

/* One RPC message as an iovec list over pool buffers; each iovec holds one
 * reference on the buffer it points into (rcd_buf[i]). */
struct gw_rec {
	unsigned rcd_niov;
	size_t rcd_len;
	struct iovec rcd_iov[GW_REC_MAX_IOV];
	struct gw_buf *rcd_buf[GW_REC_MAX_IOV];
};
void gw_rec_init(struct gw_rec *r);
/* Drop every buffer reference; the record is empty afterwards. */
void gw_rec_release(struct gw_pool *p, struct gw_rec *r);
/* Move src into dst (dst must be empty); src is empty afterwards. */
void gw_rec_move(struct gw_rec *dst, struct gw_rec *src);
/* Copy up to cap bytes from offset off of the record (small headers). */
size_t gw_rec_copyout(const struct gw_rec *r, size_t off, void *dst, size_t cap);
/* Overwrite 4 bytes at offset off (the XID), across iovecs if need be. */
bool gw_rec_put_be32(struct gw_rec *r, size_t off, uint32_t v);

#endif /* RPCRDMA_GW_POOL_H */
