// SPDX-License-Identifier: MIT
/* Unit tests for the buffer pool (gateway/pool.c) and the record receiver
 * (gateway/record.c): registration hook, reassembly over a socketpair one
 * byte at a time and in many fragments, limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "chunking.h"
#include "pool.h"
#include "record.h"

static void pair(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
}

/* Frame payload in fragments of at most frag bytes. */
static size_t frame(uint8_t *out, const uint8_t *data, size_t len, size_t frag)
{
	size_t o = 0, off = 0;

	do {
		size_t n = len - off < frag ? len - off : frag;

		rm_encode_hdr(out + o, (uint32_t)n, off + n == len);
		o += 4;
		memcpy(out + o, data + off, n);
		o += n;
		off += n;
	} while (off < len);
	return o;
}

struct reg_probe {
	void *addr;
	size_t len;
	int regs, deregs;
};
static void *probe_reg(void *arg, void *addr, size_t len)
{
	struct reg_probe *p = arg;

	p->addr = addr;
	p->len = len;
	p->regs++;
	return p;
}
static void probe_dereg(void *arg, void *reg)
{
	struct reg_probe *p = arg;

	assert_ptr_equal(reg, p);
	p->deregs++;
}

/* 1. The pool is one region; the hook sees it once; buffers recycle;
 * buf_of maps addresses back; exhaustion returns NULL. */
static void t01_pool(void **state)
{
	struct gw_pool *p = gw_pool_new(4096, 4, false);
	struct reg_probe pr = { 0 };
	struct gw_buf *b[5];
	void *addr;
	size_t len;

	(void)state;
	assert_non_null(p);
	assert_int_equal(gw_pool_register(p, probe_reg, probe_dereg, &pr), 0);
	gw_pool_region(p, &addr, &len);
	assert_ptr_equal(pr.addr, addr);
	assert_int_equal(pr.len, 4 * 4096);
	assert_ptr_equal(gw_pool_registration(p, 0), &pr);
	for (int i = 0; i < 4; i++) {
		b[i] = gw_buf_get(p);
		assert_non_null(b[i]);
		assert_ptr_equal(gw_pool_buf_of(p, b[i]->gb_data + 100), b[i]);
	}
	assert_null(gw_buf_get(p));
	assert_null(gw_pool_buf_of(p, (uint8_t *)addr + len));
	gw_buf_ref(b[0]);
	gw_buf_put(p, b[0]);
	assert_int_equal(gw_pool_avail(p), 0);
	for (int i = 0; i < 4; i++)
		gw_buf_put(p, b[i]);
	assert_int_equal(gw_pool_avail(p), 4);
	gw_pool_free(p);
	assert_int_equal(pr.deregs, 1);
	assert_null(gw_pool_new(1000, 4, false));	/* not a page multiple */
}

/* 2. Hugepages asked but perhaps unavailable: still works. */
static void t02_hugepages_fallback(void **state)
{
	struct gw_pool *p = gw_pool_new(65536, 8, true);

	(void)state;
	assert_non_null(p);
	assert_non_null(gw_buf_get(p));
	gw_pool_free(p);
}

/* Feed the framed bytes through a socketpair in chunks of `step` and
 * collect every record; check payloads. */
static void run_case(size_t step, size_t frag, const size_t *lens, unsigned nrec, uint32_t bufsz)
{
	static uint8_t wire[1 << 20], data[1 << 18];
	struct gw_pool *p = gw_pool_new(bufsz, 64, false);
	struct gw_rx rx;
	struct gw_rec rec;
	size_t wlen = 0, sent = 0;
	unsigned got = 0;
	int sv[2];

	assert_non_null(p);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	for (unsigned r = 0; r < nrec; r++)
		wlen += frame(wire + wlen, data + r, lens[r], frag);
	pair(sv);
	gw_rx_init(&rx, p, 1 << 18);
	gw_rec_init(&rec);
	while (got < nrec) {
		enum gw_rx_status st;

		if (sent < wlen) {
			size_t n = wlen - sent < step ? wlen - sent : step;

			assert_int_equal(write(sv[0], wire + sent, n), (ssize_t)n);
			sent += n;
		}
		while ((st = gw_rx_read(&rx, sv[1], &rec)) == GW_RX_RECORD) {
			uint8_t back[1 << 12];
			size_t l = lens[got] < sizeof(back) ? lens[got] : sizeof(back);

			assert_int_equal(rec.rcd_len, lens[got]);
			assert_int_equal(gw_rec_copyout(&rec, 0, back, l), l);
			assert_memory_equal(back, data + got, l);
			gw_rec_release(p, &rec);
			got++;
		}
		assert_int_equal(st, GW_RX_AGAIN);
		if (sent == wlen && got < nrec)
			fail_msg("ran out of bytes after %u records", got);
	}
	assert_false(gw_rx_partial(&rx));
	gw_rx_destroy(&rx);
	assert_int_equal(gw_pool_avail(p), 64);	/* no buffer leaked */
	close(sv[0]);
	close(sv[1]);
	gw_pool_free(p);
}

/* 3. Table: byte-at-a-time, multi-fragment, several records per recv,
 * records spanning buffers. */
static void t03_reassembly_table(void **state)
{
	static const size_t one[] = { 40 };
	static const size_t three[] = { 12, 100, 4 };
	static const size_t big[] = { 50000, 8, 20000 };
	static const struct {
		size_t step, frag;
		const size_t *lens;
		unsigned n;
		uint32_t bufsz;
	} t[] = {
		/* 1 */ { 1, 1000, one, 1, 4096 },
		/* 2 */ { 1, 7, three, 3, 4096 },		/* 1 byte at a time, many fragments */
		/* 3 */ { 4096, 1000, three, 3, 4096 },	/* all records in one recv */
		/* 4 */ { 3000, 100000, big, 3, 8192 },	/* records span buffers */
		/* 5 */ { 65536, 9000, big, 3, 4096 },	/* fragments and buffers both split */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		run_case(t[i].step, t[i].frag, t[i].lens, t[i].n, t[i].bufsz);
}

/* 4. A record above max_record, a record in too many pieces, EOF. */
static void t04_limits(void **state)
{
	struct gw_pool *p = gw_pool_new(4096, 8, false);
	uint8_t wire[4096], data[600] = { 0 };
	struct gw_rx rx;
	struct gw_rec rec;
	size_t n;
	int sv[2];

	(void)state;
	pair(sv);
	gw_rx_init(&rx, p, 100);
	gw_rec_init(&rec);
	n = frame(wire, data, 101, 1000);
	assert_int_equal(write(sv[0], wire, n), (ssize_t)n);
	assert_int_equal(gw_rx_read(&rx, sv[1], &rec), GW_RX_TOO_BIG);
	gw_rx_destroy(&rx);
	close(sv[0]);
	close(sv[1]);

	/* 75 fragments in one buffer: more pieces than iovecs, compacted
	 * (RFC 5531 11 allows any number of fragments). */
	pair(sv);
	gw_rx_init(&rx, p, 4000);
	for (int i = 0; i < 600; i++)
		data[i] = (uint8_t)(i * 7);
	n = frame(wire, data, 600, 8);
	assert_int_equal(write(sv[0], wire, n), (ssize_t)n);
	assert_int_equal(gw_rx_read(&rx, sv[1], &rec), GW_RX_RECORD);
	assert_int_equal(rec.rcd_len, 600);
	assert_true(rec.rcd_niov <= GW_REC_FEW_PIECES);
	assert_true(rx.rx_copied > 0 && rx.rx_copied < 600);
	assert_int_equal(gw_rec_copyout(&rec, 0, wire, sizeof(wire)), 600);
	assert_memory_equal(wire, data, 600);
	gw_rec_release(p, &rec);
	gw_rx_destroy(&rx);
	close(sv[0]);

	gw_rx_init(&rx, p, 4000);
	assert_int_equal(gw_rx_read(&rx, sv[1], &rec), GW_RX_EOF);
	gw_rx_destroy(&rx);
	close(sv[1]);
	assert_int_equal(gw_pool_avail(p), 8);
	gw_pool_free(p);
}

/* 5. Pool exhausted: GW_RX_NO_BUFFER, then progress once a buffer is back. */
static void t05_no_buffer(void **state)
{
	struct gw_pool *p = gw_pool_new(4096, 4, false);
	uint8_t wire[8192], data[6000] = { 1 };
	struct gw_buf *hold[3];
	struct gw_rx rx;
	struct gw_rec rec;
	size_t n;
	int sv[2];

	(void)state;
	for (int i = 0; i < 3; i++)
		hold[i] = gw_buf_get(p);
	pair(sv);
	gw_rx_init(&rx, p, 8000);
	gw_rec_init(&rec);
	n = frame(wire, data, 6000, 8000);
	assert_int_equal(write(sv[0], wire, n), (ssize_t)n);
	assert_int_equal(gw_rx_read(&rx, sv[1], &rec), GW_RX_NO_BUFFER);
	assert_true(gw_rx_partial(&rx));
	gw_buf_put(p, hold[0]);
	assert_int_equal(gw_rx_read(&rx, sv[1], &rec), GW_RX_RECORD);
	assert_int_equal(rec.rcd_len, 6000);
	assert_int_equal(rec.rcd_niov, 2);
	assert_true(gw_rec_put_be32(&rec, 0, 0xdeadbeef));
	gw_rec_release(p, &rec);
	gw_rx_destroy(&rx);
	gw_buf_put(p, hold[1]);
	gw_buf_put(p, hold[2]);
	assert_int_equal(gw_pool_avail(p), 4);
	close(sv[0]);
	close(sv[1]);
	gw_pool_free(p);
}

/* A record of len bytes framed in fragments of frag bytes (0: sizes 1..4096
 * from the seed). */
static size_t frag_wire(uint8_t *out, const uint8_t *data, size_t len, size_t frag, unsigned *seed)
{
	size_t o = 0, off = 0;

	do {
		size_t f = frag ? frag : 1 + (size_t)(rand_r(seed) % 4096);
		size_t n = len - off < f ? len - off : f;

		rm_encode_hdr(out + o, (uint32_t)n, off + n == len);
		memcpy(out + o + 4, data + off, n);
		o += 4 + n;
		off += n;
	} while (off < len);
	return o;
}

/* 1 MiB in fragments of frag bytes, written over a socketpair in pieces of
 * 1..wmax bytes while a client-side receiver reads: the record comes out
 * whole and equal in at most GW_REC_MAX_IOV pieces; copied or not. */
static void many_fragments(size_t frag, size_t wmax, unsigned seed, bool expect_copy)
{
	const size_t len = 1u << 20;
	struct gw_pool *p = gw_pool_new(65536, 48, false);
	uint8_t *data = malloc(len), *wire = malloc(2 * len + 4096), *back = malloc(len);
	struct gw_rx rx;
	struct gw_rec rec;
	enum gw_rx_status st = GW_RX_AGAIN;
	size_t n, sent = 0;
	unsigned seed0 = seed;
	int sv[2];

	assert_non_null(p);
	assert_non_null(data);
	assert_non_null(wire);
	assert_non_null(back);
	for (size_t i = 0; i < len; i++)
		data[i] = (uint8_t)(rand_r(&seed) >> 5);
	n = frag_wire(wire, data, len, frag, &seed);
	pair(sv);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	gw_rx_init_client(&rx, p, len + 8192, 2, 4);
	gw_rec_init(&rec);
	while (st != GW_RX_RECORD) {
		if (sent < n) {
			size_t w = 1 + (size_t)rand_r(&seed) % wmax;
			ssize_t k = write(sv[0], wire + sent, w < n - sent ? w : n - sent);

			assert_true(k > 0 || errno == EAGAIN);
			sent += k > 0 ? (size_t)k : 0;
		}
		st = gw_rx_read(&rx, sv[1], &rec);
		if (st != GW_RX_AGAIN && st != GW_RX_RECORD)
			fail_msg("frag %zu seed %u: %s after %zu of %zu bytes", frag, seed0,
				 gw_rx_status_str(st), sent, n);
	}
	assert_int_equal(sent, n);
	assert_int_equal(rec.rcd_len, len);
	/* a transport takes few pieces (RDMA: 32) */
	assert_true(rec.rcd_niov <= GW_REC_FEW_PIECES);
	assert_int_equal(gw_rec_copyout(&rec, 0, back, len), len);
	assert_memory_equal(back, data, len);
	if (expect_copy)
		assert_true(rx.rx_copied > 0 && rx.rx_copied < len);
	else
		assert_int_equal(rx.rx_copied, 0);	/* few pieces: zero copy */
	gw_rec_release(p, &rec);
	gw_rx_destroy(&rx);
	assert_int_equal(gw_pool_avail(p), 48);
	close(sv[0]);
	close(sv[1]);
	gw_pool_free(p);
	free(data);
	free(wire);
	free(back);
}

/* 6. 1 MiB in 2 KiB, 512 B and mixed fragments, split across recv() calls
 * of any size; a record in one or few fragments stays zero-copy. */
static void t06_many_fragments(void **state)
{
	(void)state;
	many_fragments(2048, 70000, 1, true);
	many_fragments(512, 3000, 2, true);
	many_fragments(512, 1, 3, true);	/* bytes trickle in: a recv() each */
	many_fragments(0, 9000, 4, true);
	many_fragments(1u << 20, 65536, 5, false);
	many_fragments(300000, 65536, 6, false);	/* 4 fragments */
}

/* 7. Beyond compaction: a record over more buffers than iovecs is refused. */
static void t07_too_many_buffers(void **state)
{
	struct gw_pool *p = gw_pool_new(4096, GW_REC_MAX_IOV + 8, false);
	static uint8_t data[(GW_REC_MAX_IOV + 2) * 4096], wire[sizeof(data) + 64];
	struct gw_rx rx;
	struct gw_rec rec;
	size_t n, sent = 0;
	enum gw_rx_status st = GW_RX_AGAIN;
	int sv[2];

	(void)state;
	pair(sv);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	gw_rx_init(&rx, p, sizeof(data));
	gw_rec_init(&rec);
	n = frame(wire, data, sizeof(data), sizeof(data));
	while (st == GW_RX_AGAIN) {
		ssize_t k = sent < n ? write(sv[0], wire + sent, n - sent) : 0;

		sent += k > 0 ? (size_t)k : 0;
		st = gw_rx_read(&rx, sv[1], &rec);
	}
	assert_int_equal(st, GW_RX_TOO_FRAGMENTED);
	gw_rx_destroy(&rx);
	assert_int_equal(gw_pool_avail(p), GW_REC_MAX_IOV + 8);
	close(sv[0]);
	close(sv[1]);
	gw_pool_free(p);
}

/* A send buffer the whole 1 MiB record fits in: root may exceed
 * wmem_max (SO_SNDBUFFORCE); else the case is skipped, loudly. */
static void big_sndbuf(int fd, const char *test, const char *what)
{
	int big = 4 << 20;

	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)) < 0) {
		print_error("SKIPPED %s: SO_SNDBUFFORCE needs root (make check runs as root): "
			    "%s NOT tested\n", test, what);
		skip();
	}
}

/* 8. A 1 MiB WRITE-sized record already waiting in the socket: a few
 * readv() calls over several buffers, not one recv() per 64 KiB buffer;
 * the record is whole and every buffer comes back.  Also on the client
 * side, where buffers beyond the promise come only from above the reserve
 * and the ones a readv() left empty go straight back. */
static void t08_batched_reads(void **state)
{
	static uint8_t wire[(1 << 20) + 64], data[1 << 20];
	static const uint32_t frags[] = { 1u << 20, 300000 };
	struct gw_pool *p = gw_pool_new(65536, 64, false);
	struct gw_rx rx;
	struct gw_rec rec;
	int sv[2];

	(void)state;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 1);
	for (unsigned side = 0; side < 2; side++) {
		for (unsigned f = 0; f < 2; f++) {
			size_t n = frame(wire, data, sizeof(data), frags[f]), off = 0;

			pair(sv);
			big_sndbuf(sv[0], "t08_batched_reads", "batched reads");
			while (off < n) {
				ssize_t w = write(sv[0], wire + off, n - off);

				assert_true(w > 0);
				off += (size_t)w;
			}
			if (side)
				gw_rx_init_client(&rx, p, 2 << 20, 4, 4);
			else
				gw_rx_init(&rx, p, 2 << 20);
			gw_rec_init(&rec);
			assert_int_equal(gw_rx_read(&rx, sv[1], &rec), GW_RX_RECORD);
			assert_int_equal(rec.rcd_len, sizeof(data));
			for (size_t o = 0; o < sizeof(data); o += 4096) {
				uint8_t back[4096];

				assert_int_equal(gw_rec_copyout(&rec, o, back, sizeof(back)), sizeof(back));
				assert_memory_equal(back, data + o, sizeof(back));
			}
			/* one buffer's worth per call would be 17 or more; a
			 * readv() stops at its fragment's end: at most two a
			 * fragment, and one for the first header */
			assert_true(rx.rx_recvs <= 2 * ((sizeof(data) + frags[f] - 1) / frags[f]) + 1);
			gw_rec_release(p, &rec);
			gw_rx_destroy(&rx);
			assert_int_equal(gw_pool_avail(p), 64);
			assert_int_equal(gw_pool_unpromised(p), 64);
			close(sv[0]);
			close(sv[1]);
		}
	}
	gw_pool_free(p);
}

/* 9. A client that announces 1 MiB and sends 100 KB: the readv() took
 * buffers for the rest and gave the empty ones straight back, so the
 * receiver holds only buffers with bytes in them, the rest of its
 * promise stays a promise, and the pool ends where it started. */
static void t09_batched_slow_sender(void **state)
{
	static uint8_t wire[(1 << 20) + 64], data[1 << 20];
	struct gw_pool *p = gw_pool_new(65536, 32, false);
	size_t n = frame(wire, data, sizeof(data), sizeof(data)), sent = 100000;
	struct gw_rx rx;
	struct gw_rec rec;
	unsigned held;
	int sv[2];

	(void)state;
	pair(sv);
	gw_rx_init_client(&rx, p, 2 << 20, 4, 4);
	gw_rec_init(&rec);
	assert_int_equal(write(sv[0], wire, sent), (ssize_t)sent);
	assert_int_equal(gw_rx_read(&rx, sv[1], &rec), GW_RX_AGAIN);
	held = 32 - gw_pool_avail(p);
	assert_true(held <= (sent + 65535) / 65536 + 1);	/* no empty buffer kept */
	assert_int_equal(gw_pool_unpromised(p), gw_pool_avail(p) - rx.rx_promised);
	assert_true(rx.rx_promised > 0);
	/* the rest arrives: the record is whole */
	while (sent < n) {
		ssize_t w = write(sv[0], wire + sent, n - sent < 50000 ? n - sent : 50000);

		assert_true(w > 0);
		sent += (size_t)w;
		if (gw_rx_read(&rx, sv[1], &rec) == GW_RX_RECORD)
			break;
	}
	assert_int_equal(rec.rcd_len, sizeof(data));
	gw_rec_release(p, &rec);
	gw_rx_destroy(&rx);
	assert_int_equal(gw_pool_avail(p), 32);
	assert_int_equal(gw_pool_unpromised(p), 32);
	close(sv[0]);
	close(sv[1]);
	gw_pool_free(p);
}

/* Runs of address-contiguous pieces in a record: each run is one RDMA
 * Read segment and one registration when the record goes out. */
static unsigned runs(const struct gw_rec *r)
{
	unsigned n = 0;

	for (unsigned i = 0; i < r->rcd_niov; i++)
		if (i == 0 || (uint8_t *)r->rcd_iov[i - 1].iov_base + r->rcd_iov[i - 1].iov_len !=
			      (uint8_t *)r->rcd_iov[i].iov_base)
			n++;
	return n;
}

/* 10. 1 MiB records one after another on one connection: each lands in
 * buffers side by side in memory, one run rather than one per buffer
 * (two where the record reaches the pool's last buffer). */
static void t10_records_contiguous(void **state)
{
	static uint8_t wire[(1 << 20) + 64], data[1 << 20];
	struct gw_pool *p = gw_pool_new(65536, 64, false);
	size_t n = frame(wire, data, sizeof(data), sizeof(data));
	struct gw_rx rx;
	struct gw_rec rec;
	unsigned wrapped = 0;
	int sv[2];

	(void)state;
	pair(sv);
	big_sndbuf(sv[0], "t10_records_contiguous", "buffers side by side");
	gw_rx_init_client(&rx, p, 2 << 20, 4, 4);
	for (unsigned r = 0; r < 6; r++) {
		unsigned wraps = 0;

		gw_rec_init(&rec);
		assert_int_equal(write(sv[0], wire, n), (ssize_t)n);
		assert_int_equal(gw_rx_read(&rx, sv[1], &rec), GW_RX_RECORD);
		assert_int_equal(rec.rcd_len, sizeof(data));
		assert_true(rec.rcd_niov >= 17);
		/* the start shares the last record's buffer, which the
		 * rest runs on from; only the pool's end breaks the run */
		for (unsigned q = 1; q < rec.rcd_niov; q++)
			wraps += rec.rcd_buf[q]->gb_index < rec.rcd_buf[q - 1]->gb_index;
		assert_in_range(wraps, 0, 1);
		assert_int_equal(runs(&rec), 1 + wraps);
		wrapped += wraps;
		gw_rec_release(p, &rec);
	}
	assert_true(wrapped <= 2);	/* 6 x 17 buffers: twice past a 64-buffer pool's end at most */
	gw_rx_destroy(&rx);
	assert_int_equal(gw_pool_avail(p), 64);
	close(sv[0]);
	close(sv[1]);
	gw_pool_free(p);
}

/* Send wire[*off, to) in pieces of at most step bytes, reading after each;
 * the receiver's status after the last. */
static enum gw_rx_status send_read(int sv[2], struct gw_rx *rx, struct gw_rec *rec,
				   const uint8_t *wire, size_t *off, size_t to, size_t step)
{
	enum gw_rx_status st = GW_RX_AGAIN;

	while (*off < to) {
		ssize_t w = write(sv[0], wire + *off, to - *off < step ? to - *off : step);

		assert_true(w > 0);
		*off += (size_t)w;
		st = gw_rx_read(rx, sv[1], rec);
		if (st == GW_RX_RECORD)
			break;
		assert_int_equal(st, GW_RX_AGAIN);
	}
	return st;
}

/* 11. A large record is one run of memory however its bytes arrive:
 *  a. the record before it is released while it is still arriving, so
 *     the lowest free buffers lie before the one it started in: it runs
 *     on into that buffer's neighbour, not back to the lowest;
 *  b. a read that stops less than 4 KiB before a buffer's end, inside
 *     the record: the rest of that buffer is filled, not skipped;
 *  c. a buffer held by someone else right after the lowest free one: the
 *     record starts after it, not before. */
static void t11_record_one_run(void **state)
{
	static uint8_t wire[2 * ((1 << 20) + 4)], data[1 << 20];
	struct gw_pool *p = gw_pool_new(65536, 64, false);
	size_t n, off = 0;
	struct gw_rx rx;
	struct gw_rec rec, first;
	struct gw_buf *held, *lowest;
	int sv[2];

	(void)state;
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 7 + 3);
	n = frame(wire, data, sizeof(data), sizeof(data));
	n += frame(wire + n, data, sizeof(data), sizeof(data));
	pair(sv);
	gw_rx_init_client(&rx, p, 2 << 20, 4, 4);
	/* a: the first record and 30000 bytes of the second */
	gw_rec_init(&first);
	assert_int_equal(send_read(sv, &rx, &first, wire, &off, n / 2 + 30000, 60000), GW_RX_RECORD);
	assert_int_equal(first.rcd_len, sizeof(data));
	gw_rec_init(&rec);
	assert_int_equal(send_read(sv, &rx, &rec, wire, &off, n / 2 + 30000, 60000), GW_RX_AGAIN);
	gw_rec_release(p, &first);
	assert_int_equal(send_read(sv, &rx, &rec, wire, &off, n, 60000), GW_RX_RECORD);
	assert_int_equal(rec.rcd_len, sizeof(data));
	assert_int_equal(runs(&rec), 1);
	gw_rec_release(p, &rec);
	gw_rx_destroy(&rx);
	assert_int_equal(gw_pool_avail(p), 64);

	/* b: the first read ends 1000 bytes before the first buffer's end */
	gw_rx_init_client(&rx, p, 2 << 20, 4, 4);
	off = 0;
	gw_rec_init(&rec);
	assert_int_equal(send_read(sv, &rx, &rec, wire, &off, 65536 - 1000, 65536), GW_RX_AGAIN);
	assert_int_equal(send_read(sv, &rx, &rec, wire, &off, n / 2, 60000), GW_RX_RECORD);
	assert_int_equal(rec.rcd_len, sizeof(data));
	assert_int_equal(runs(&rec), 1);
	for (size_t o = 0; o < sizeof(data); o += 4096) {
		uint8_t back[4096];

		assert_int_equal(gw_rec_copyout(&rec, o, back, sizeof(back)), sizeof(back));
		assert_memory_equal(back, data + o, sizeof(back));
	}
	gw_rec_release(p, &rec);
	gw_rx_destroy(&rx);
	assert_int_equal(gw_pool_avail(p), 64);
	assert_int_equal(gw_pool_unpromised(p), 64);

	/* c: another connection keeps buffer 1 (an idle server connection's
	 * receive buffer): the record starts where it can run on */
	assert_non_null(lowest = gw_buf_get(p));
	held = gw_buf_get(p);
	assert_int_equal(held->gb_index, 1);
	gw_buf_put(p, lowest);
	gw_rx_init_client(&rx, p, 2 << 20, 4, 4);
	off = 0;
	gw_rec_init(&rec);
	assert_int_equal(send_read(sv, &rx, &rec, wire, &off, n / 2, 60000), GW_RX_RECORD);
	assert_int_equal(rec.rcd_len, sizeof(data));
	assert_int_equal(runs(&rec), 1);
	gw_rec_release(p, &rec);
	gw_rx_destroy(&rx);
	gw_buf_put(p, held);
	assert_int_equal(gw_pool_avail(p), 64);
	close(sv[0]);
	close(sv[1]);
	gw_pool_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_pool),
		cmocka_unit_test(t02_hugepages_fallback),
		cmocka_unit_test(t03_reassembly_table),
		cmocka_unit_test(t04_limits),
		cmocka_unit_test(t05_no_buffer),
		cmocka_unit_test(t06_many_fragments),
		cmocka_unit_test(t07_too_many_buffers),
		cmocka_unit_test(t08_batched_reads),
		cmocka_unit_test(t09_batched_slow_sender),
		cmocka_unit_test(t10_records_contiguous),
		cmocka_unit_test(t11_record_one_run),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
