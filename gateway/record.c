// SPDX-License-Identifier: MIT
/*
 * This file contains records (an RPC message as an iovec list over pool
 * buffers) and the record receiver, which reads a non-blocking socket
 * straight into pool buffers and lets rm_dec_feed() (chunking/recmark.c)
 * find the fragment headers; the data runs it reports become iovecs of the
 * record in place.  No byte of a record is copied.
 *
 * The receiver fills one buffer at a time.  Bytes received beyond the end
 * of a record stay in the buffer and are parsed on the next call, so one
 * recv() may carry several small records, all pointing into the same
 * buffer (each iovec holds a reference).  When everything in the buffer
 * has been parsed and it is full, or has less than rx_lowat free bytes
 * between records, the receiver moves to a fresh buffer: inside a record
 * the one right after it in memory when free, so that a large record is
 * one run of memory (one RDMA segment and one window).  The old one
 * returns to the pool when the last record in it is released.
 *
 * Deadlock avoidance.  The pool is finite and shared: if every buffer held
 * a part of an unfinished record, no record could finish and nothing would
 * ever be freed.  Two rules keep records moving:
 *   - promises: a client-side receiver that has decoded a fragment header
 *     reserves (gw_pool_promise) the buffers the rest of the fragment can
 *     need, worst case, but at most rx_ahead of them (receive_ahead), before it
 *     reads on; if the pool cannot promise, it waits (GW_RX_NO_BUFFER).  A
 *     record of up to rx_ahead + 1 buffers that started can
 *     therefore always finish.  A longer one takes further buffers as its
 *     bytes arrive; should the pool run dry under many of them, the
 *     frontend's record_timeout ends the oldest.  The bound keeps a header
 *     that announces a large fragment and no data from locking up more
 *     than rx_ahead buffers.
 *   - reserve: client-side receivers never take the last rx_reserve
 *     unpromised buffers; those carry servers' replies, which are what
 *     frees call buffers.
 * Unused promises are returned when the record completes.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "chunking.h"
#include "pool.h"
#include "record.h"

static const char *const gw_rx_status_names[GW_RX__COUNT] = {
	[GW_RX_RECORD] = "record", [GW_RX_AGAIN] = "again", [GW_RX_EOF] = "end of stream",
	[GW_RX_IO_ERROR] = "I/O error", [GW_RX_TOO_BIG] = "record above max_record",
	[GW_RX_TOO_FRAGMENTED] = "record in too many pieces", [GW_RX_NO_BUFFER] = "buffer pool empty",
};

const char *gw_rx_status_str(enum gw_rx_status s)
{
	return (unsigned)s < GW_RX__COUNT ? gw_rx_status_names[s] : "?";
}

void gw_rec_init(struct gw_rec *r)
{
	r->rcd_niov = 0;
	r->rcd_len = 0;
}

void gw_rec_release(struct gw_pool *p, struct gw_rec *r)
{
	for (unsigned i = 0; i < r->rcd_niov; i++)
		gw_buf_put(p, r->rcd_buf[i]);
	gw_rec_init(r);
}

void gw_rec_move(struct gw_rec *dst, struct gw_rec *src)
{
	dst->rcd_niov = src->rcd_niov;
	dst->rcd_len = src->rcd_len;
	memcpy(dst->rcd_iov, src->rcd_iov, src->rcd_niov * sizeof(src->rcd_iov[0]));
	memcpy(dst->rcd_buf, src->rcd_buf, src->rcd_niov * sizeof(src->rcd_buf[0]));
	gw_rec_init(src);
}

size_t gw_rec_copyout(const struct gw_rec *r, size_t off, void *dst, size_t cap)
{
	uint8_t *d = dst;
	size_t done = 0;

	for (unsigned i = 0; i < r->rcd_niov && done < cap; i++) {
		size_t l = r->rcd_iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		l -= off;
		if (l > cap - done)
			l = cap - done;
		memcpy(d + done, (uint8_t *)r->rcd_iov[i].iov_base + off, l);
		done += l;
		off = 0;
	}
	return done;
}

bool gw_rec_put_be32(struct gw_rec *r, size_t off, uint32_t v)
{
	uint8_t b[4];
	unsigned k = 0;

	if (off + 4 > r->rcd_len)
		return false;
	chk_put_be32(b, v);
	for (unsigned i = 0; i < r->rcd_niov && k < 4; i++) {
		size_t l = r->rcd_iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		for (; off < l && k < 4; off++)
			((uint8_t *)r->rcd_iov[i].iov_base)[off] = b[k++];
		off = 0;
	}
	return k == 4;
}

/* Close the gaps (fragment headers, RFC 5531 11) between the record's runs
 * that share a buffer: each run moves down to follow the one before it, so
 * one iovec per buffer is left.  Used when the iovec list is full, and on a
 * finished record of more than GW_REC_FEW_PIECES pieces (a transport takes
 * few: RDMA sends at most 32 segments of a call): a record in few pieces
 * stays zero-copy; one in many small fragments costs one copy of its bytes,
 * never a refused record.  Only the record's own
 * bytes move, all above its first run in each buffer.  Returns the bytes
 * moved. */
static size_t gw_rec_compact(struct gw_pool *pool, struct gw_rec *r)
{
	unsigned out = 0;
	size_t moved = 0;

	for (unsigned i = 1; i < r->rcd_niov; i++) {
		struct iovec *last = &r->rcd_iov[out], *cur = &r->rcd_iov[i];
		uint8_t *end = (uint8_t *)last->iov_base + last->iov_len;

		if (r->rcd_buf[i] == r->rcd_buf[out]) {
			if (cur->iov_base != end) {
				memmove(end, cur->iov_base, cur->iov_len);
				moved += cur->iov_len;
			}
			last->iov_len += cur->iov_len;
			gw_buf_put(pool, r->rcd_buf[i]);	/* the run's reference; last's keeps the buffer */
			continue;
		}
		out++;
		r->rcd_iov[out] = *cur;
		r->rcd_buf[out] = r->rcd_buf[i];
	}
	r->rcd_niov = r->rcd_niov ? out + 1 : 0;
	return moved;
}

/* Append a data run that lies in buffer b to the receiver's record; false
 * when out of iovecs even after compaction (counted in rx_copied). */
static bool gw_rx_append(struct gw_rx *rx, struct gw_buf *b, uint8_t *p, size_t n)
{
	struct gw_rec *r = &rx->rx_rec;

	if (r->rcd_niov > 0) {
		struct iovec *last = &r->rcd_iov[r->rcd_niov - 1];

		if (r->rcd_buf[r->rcd_niov - 1] == b && (uint8_t *)last->iov_base + last->iov_len == p) {
			last->iov_len += n;
			r->rcd_len += n;
			return true;
		}
	}
	if (r->rcd_niov == GW_REC_MAX_IOV) {
		rx->rx_copied += gw_rec_compact(rx->rx_pool, r);
		if (r->rcd_niov == GW_REC_MAX_IOV)
			return false;
		return gw_rx_append(rx, b, p, n);
	}
	gw_buf_ref(b);
	r->rcd_iov[r->rcd_niov] = (struct iovec){ p, n };
	r->rcd_buf[r->rcd_niov] = b;
	r->rcd_niov++;
	r->rcd_len += n;
	return true;
}

static uint32_t gw_rx_lowat(uint32_t buf_size)
{
	return buf_size / 8 < 4096 ? buf_size / 8 : 4096;
}

unsigned gw_rx_record_buffers(uint32_t buf_size, uint32_t max_record)
{
	uint32_t per = buf_size - gw_rx_lowat(buf_size);

	return (unsigned)((max_record + per - 1) / per) + 1;
}

void gw_rx_init(struct gw_rx *rx, struct gw_pool *p, uint32_t max_record)
{
	memset(rx, 0, sizeof(*rx));
	rx->rx_pool = p;
	rx->rx_lowat = gw_rx_lowat(gw_pool_buf_size(p));
	rm_dec_init(&rx->rx_dec, max_record);
	gw_rec_init(&rx->rx_rec);
}

void gw_rx_init_client(struct gw_rx *rx, struct gw_pool *p, uint32_t max_record, unsigned reserve,
		       unsigned ahead)
{
	gw_rx_init(rx, p, max_record);
	rx->rx_promise = true;
	rx->rx_reserve = reserve;
	rx->rx_ahead = ahead;
}

static void gw_rx_unpromise(struct gw_rx *rx)
{
	if (rx->rx_promised)
		gw_pool_unpromise(rx->rx_pool, rx->rx_promised);
	rx->rx_promised = 0;
}

/* Buffers the rest of a fragment of len bytes may need beyond the current
 * buffer, worst case (the receiver leaves up to rx_lowat bytes unused). */
static unsigned gw_rx_frag_buffers(const struct gw_rx *rx, uint32_t len)
{
	uint32_t size = rx->rx_buf->gb_size, per = size - rx->rx_lowat;
	uint32_t first = size - rx->rx_lowat > rx->rx_parsed ? size - rx->rx_lowat - rx->rx_parsed : 0;

	if (len <= first)
		return 0;
	return (len - first + per - 1) / per;
}

void gw_rx_reset(struct gw_rx *rx)
{
	uint32_t max = rx->rx_dec.rm_max_record;

	gw_rec_release(rx->rx_pool, &rx->rx_rec);
	gw_buf_put(rx->rx_pool, rx->rx_buf);
	while (rx->rx_nfill > 0)
		gw_buf_put(rx->rx_pool, rx->rx_fill[--rx->rx_nfill]);
	gw_rx_unpromise(rx);
	rx->rx_need = 0;
	rx->rx_buf = NULL;
	rx->rx_parsed = 0;
	rx->rx_in_record = false;
	rx->rx_drained = false;
	rm_dec_init(&rx->rx_dec, max);
}

void gw_rx_destroy(struct gw_rx *rx)
{
	gw_rx_reset(rx);
}

/* Run the decoder over received, unparsed bytes. */
static enum gw_rx_status gw_rx_parse(struct gw_rx *rx, struct gw_rec *out, bool *got)
{
	struct gw_buf *b = rx->rx_buf;

	*got = false;
	while (b && rx->rx_parsed < b->gb_used) {
		uint8_t *p = b->gb_data + rx->rx_parsed;
		size_t consumed, dlen;
		bool done;

		if (rm_dec_feed(&rx->rx_dec, p, b->gb_used - rx->rx_parsed, &consumed, &dlen, &done) != RM_OK)
			return GW_RX_TOO_BIG;
		rx->rx_in_record = true;
		if (dlen && !gw_rx_append(rx, b, p, dlen))
			return GW_RX_TOO_FRAGMENTED;
		rx->rx_parsed += consumed;
		if (rx->rx_promise && dlen == 0 && rx->rx_dec.rm_in_frag) {
			/* A fragment header: promise what its data may need, up
			 * to rx_ahead.  The earlier fragments' data is
			 * all in, so buffers still promised to this receiver
			 * count toward it (else many small fragments would each
			 * promise one more). */
			unsigned n = gw_rx_frag_buffers(rx, rx->rx_dec.rm_frag_left);

			if (n > rx->rx_ahead)
				n = rx->rx_ahead;
			n = n > rx->rx_promised ? n - rx->rx_promised : 0;

			if (n && !gw_pool_promise(rx->rx_pool, n, rx->rx_reserve)) {
				rx->rx_need = n;
				return GW_RX_NO_BUFFER;
			}
			rx->rx_promised += n;
		}
		if (done) {
			gw_rx_unpromise(rx);
			if (rx->rx_rec.rcd_niov > GW_REC_FEW_PIECES)
				rx->rx_copied += gw_rec_compact(rx->rx_pool, &rx->rx_rec);
			gw_rec_move(out, &rx->rx_rec);
			rx->rx_in_record = false;
			*got = true;
			return GW_RX_RECORD;
		}
	}
	return GW_RX_AGAIN;
}

/* A client-side receive buffer that holds nothing the receiver still needs
 * (all parsed, no byte of the record being assembled) and that no record
 * received into it still uses goes back to the pool.  An idle connection,
 * one that sent part of a fragment header only, or a header and no data
 * yet, then holds no buffer; the decoder keeps a partial header itself
 * (rm_hdr), and the data's first buffer will come from the fragment's
 * promise.  The next read takes a fresh buffer.  A buffer that records in
 * flight still use is kept: giving it back would free nothing now, and
 * the next records can share it (many small calls in flight do not take a
 * buffer each); the frontend parks again once their replies are written.
 * (A fragment's promise was computed with the room left in the buffer: a
 * fresh one may need one buffer more at the end, taken as bytes arrive,
 * like those beyond rx_ahead.) */
void gw_rx_park(struct gw_rx *rx)
{
	struct gw_buf *b = rx->rx_buf;

	if (rx->rx_promise && b && b->gb_refs == 1 && rx->rx_parsed == b->gb_used &&
	    rx->rx_rec.rcd_niov == 0 && rx->rx_nfill == 0) {
		gw_buf_put(rx->rx_pool, b);
		rx->rx_buf = NULL;
		rx->rx_parsed = 0;
	}
}

/* The receiver is about to wait for its socket or for buffers. */
static enum gw_rx_status gw_rx_wait(struct gw_rx *rx, enum gw_rx_status st)
{
	gw_rx_park(rx);
	return st;
}

/* A buffer for more received bytes: a promised one first (*promised
 * says which, when asked), else one above the reserve (client side) or any
 * (server side); NULL when none.  prev: the buffer the record runs on
 * from (the pool then tries the one right after it), or NULL. */
static struct gw_buf *gw_rx_take(struct gw_rx *rx, bool *promised, const struct gw_buf *prev)
{
	/* Only this connection's bytes land here: owned by it (pool.c: a
	 * later READ target of the same connection need not be cleared); no
	 * owner (server side, 0) makes them anyone's. */
	uint64_t own = rx->rx_owner;

	if (promised)
		*promised = rx->rx_promised > 0;
	if (rx->rx_promised > 0) {
		rx->rx_promised--;
		return gw_buf_get_own_after(rx->rx_pool, own, true, prev);
	}
	if (!rx->rx_promise || gw_pool_unpromised(rx->rx_pool) > rx->rx_reserve)
		return gw_buf_get_own_after(rx->rx_pool, own, false, prev);
	return NULL;
}

/* Account n bytes received into b at its end. */
static void gw_rx_filled(struct gw_rx *rx, struct gw_buf *b, size_t n)
{
	b->gb_used += (uint32_t)n;
	gw_buf_owned(b, rx->rx_owner, b->gb_used);	/* [0, used): ours */
}

/* Inside a fragment with more of it to come than b has room for: one
 * readv() over b's room and up to GW_RX_BATCH - 1 more buffers, for no more
 * than the fragment still holds (a large WRITE costs a few system calls,
 * not one per buffer).  Bytes past b's room go to rx_fill in order; a
 * buffer that got none goes straight back (a promised one to the promise),
 * so a slow sender holds no more than before.  recv()'s result. */
static ssize_t gw_rx_readv(struct gw_rx *rx, int fd, struct gw_buf *b)
{
	struct iovec iov[GW_RX_BATCH];
	struct gw_buf *nb[GW_RX_BATCH];
	bool prom[GW_RX_BATCH];
	size_t left = rx->rx_dec.rm_frag_left - (b->gb_size - b->gb_used), want, got;
	unsigned k = 1;
	ssize_t n;

	iov[0] = (struct iovec){ b->gb_data + b->gb_used, b->gb_size - b->gb_used };
	want = iov[0].iov_len;
	while (left > 0 && k < GW_RX_BATCH &&
	       (nb[k] = gw_rx_take(rx, &prom[k], k == 1 ? b : nb[k - 1]))) {
		iov[k].iov_base = nb[k]->gb_data;
		iov[k].iov_len = left < nb[k]->gb_size ? left : nb[k]->gb_size;
		left -= iov[k].iov_len;
		want += iov[k++].iov_len;
	}
	n = readv(fd, iov, (int)k);
	got = n > 0 ? (size_t)n : 0;
	rx->rx_drained = n > 0 && (size_t)n < want;
	for (unsigned i = 0; i < k; i++) {
		size_t c = got < iov[i].iov_len ? got : iov[i].iov_len;

		got -= c;
		if (i == 0) {
			gw_rx_filled(rx, b, c);
		} else if (c > 0) {
			gw_rx_filled(rx, nb[i], c);
			rx->rx_fill[rx->rx_nfill++] = nb[i];
		} else {
			gw_buf_put(rx->rx_pool, nb[i]);
			if (prom[i] && gw_pool_promise(rx->rx_pool, 1, 0))
				rx->rx_promised++;	/* just given back: always fits */
		}
	}
	return n;
}

enum gw_rx_status gw_rx_read(struct gw_rx *rx, int fd, struct gw_rec *out)
{
	for (;;) {
		enum gw_rx_status st;
		struct gw_buf *b;
		bool got, batch;
		ssize_t n;

		if (rx->rx_need) {
			if (!gw_pool_promise(rx->rx_pool, rx->rx_need, rx->rx_reserve))
				return gw_rx_wait(rx, GW_RX_NO_BUFFER);
			rx->rx_promised += rx->rx_need;
			rx->rx_need = 0;
		}
		st = gw_rx_parse(rx, out, &got);
		if (st == GW_RX_NO_BUFFER)
			return gw_rx_wait(rx, st);
		if (got || st != GW_RX_AGAIN)
			return st;
		/* rx_buf is all parsed: the next one a readv() filled, if any. */
		if (rx->rx_nfill > 0) {
			gw_buf_put(rx->rx_pool, rx->rx_buf);
			rx->rx_buf = rx->rx_fill[0];
			memmove(rx->rx_fill, rx->rx_fill + 1, --rx->rx_nfill * sizeof(rx->rx_fill[0]));
			rx->rx_parsed = 0;
			continue;
		}
		/* A short recv() emptied the socket: another one now would
		 * almost surely say EAGAIN, a system call per wakeup for
		 * nothing.  Callers poll level-triggered, so bytes that came
		 * since wake them again. */
		if (rx->rx_drained) {
			rx->rx_drained = false;
			return gw_rx_wait(rx, GW_RX_AGAIN);
		}
		/* Everything received is parsed: make room for more.  Inside
		 * a record the buffer is filled to its end and the next one
		 * is its neighbour if free, so the record's bytes stay one
		 * run (one RDMA segment, one window); between records a
		 * nearly full buffer is left for the lowest free one. */
		b = rx->rx_buf;
		if (!b || b->gb_used == b->gb_size ||
		    (!rx->rx_in_record && b->gb_size - b->gb_used < rx->rx_lowat)) {
			struct gw_buf *nb = gw_rx_take(rx, NULL, rx->rx_in_record ? b : NULL);

			if (nb) {
				gw_buf_put(rx->rx_pool, b);
				rx->rx_buf = b = nb;
				rx->rx_parsed = 0;
			} else if (!b || b->gb_used == b->gb_size) {
				return gw_rx_wait(rx, GW_RX_NO_BUFFER);
			}
		}
		rx->rx_recvs++;
		batch = !rx->rx_src && rx->rx_dec.rm_in_frag &&
			rx->rx_dec.rm_frag_left > b->gb_size - b->gb_used;
		if (batch)
			n = gw_rx_readv(rx, fd, b);	/* accounts for what it got */
		else
			n = rx->rx_src ? rx->rx_src(rx->rx_src_arg, b->gb_data + b->gb_used,
						    b->gb_size - b->gb_used)
				       : recv(fd, b->gb_data + b->gb_used, b->gb_size - b->gb_used, 0);
		if (n > 0) {
			if (!batch) {
				rx->rx_drained = (size_t)n < b->gb_size - b->gb_used;
				gw_rx_filled(rx, b, (size_t)n);
			}
			rx->rx_bytes += (uint64_t)n;
			continue;
		}
		if (n == 0)
			return GW_RX_EOF;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return gw_rx_wait(rx, GW_RX_AGAIN);
		rx->rx_errno = errno;
		return GW_RX_IO_ERROR;
	}
}
