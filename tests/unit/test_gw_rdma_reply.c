// SPDX-License-Identifier: MIT
/* Unit tests of the RPC-over-RDMA reply translation (gateway/rdma_reply.c)
 * with fake backend replies: a server that reports more than it wrote,
 * more than was offered, lengths that do not match, an RDMA_NOMSG body
 * outside the reply chunk.  No byte of a target's earlier use may reach
 * the client, and nothing beyond what the server reported placed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "backend.h"
#include "chunking.h"
#include "nfs_enc.h"
#include "pool.h"
#include "transport_rdma.h"

#define BUF 4096
#define STALE 0xab	/* what the buffers held before: another client's bytes */

struct fx {
	uint8_t bufs[3][BUF];		/* the targets' pool buffers */
	struct gw_rdma_call gc;
	struct be_reply r;
	uint8_t inl[256];		/* the inline reply body */
	struct rpc_call_hdr hdr;	/* NFSv3 READ */
	uint8_t out[3 * BUF + 512];	/* what the client would get */
	size_t nout;
};

/* One write chunk over bufs[0..1] (8 KiB), the buffers stale. */
static void fx_init(struct fx *f)
{
	memset(f, 0, sizeof(*f));
	memset(f->bufs, STALE, sizeof(f->bufs));
	f->gc.gc_wiov[0][0] = (struct iovec){ f->bufs[0], BUF };
	f->gc.gc_wiov[0][1] = (struct iovec){ f->bufs[1], BUF };
	f->gc.gc_wt[0] = (struct be_target){ f->gc.gc_wiov[0], 2 };
	f->gc.gc_nwrites = 1;
	f->hdr.rc_prog = 100003;
	f->hdr.rc_vers = 3;
	f->hdr.rc_proc = 6;	/* READ */
}

/* READ3res OK inline: no attributes, count, eof, data length (data in
 * write chunk 0); the server reports wlen placed. */
static void fx_read_reply(struct fx *f, uint32_t count, uint32_t wlen)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, f->inl, sizeof(f->inl));
	assert_true(nfs_enc_reply_hdr(&xe, 0x1234));
	assert_true(nfs_enc_fmt(&xe, "wwwww", 0u, 0u, count, 1u, count));
	f->r.br_proc = RPCRDMA_MSG;
	f->r.br_body[0] = (struct iovec){ f->inl, xe.xe_len };
	f->r.br_nbody = 1;
	f->r.br_body_len = xe.xe_len;
	f->r.br_nwrites = 1;
	f->r.br_write_len[0] = wlen;
}

/* The server writes n bytes of payload where it was offered. */
static void fx_server_writes(struct fx *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		f->bufs[i / BUF][i % BUF] = nfs_enc_byte(7, i);
}

static enum gw_rdma_bad fx_translate(struct fx *f)
{
	enum chk_walk_err werr;
	enum gw_rdma_bad bad = gw_rdma_reply_bound(&f->gc, &f->r);

	if (bad != GW_RDMA_BAD_NONE)
		return bad;
	bad = gw_rdma_reply_assemble(&f->gc, &f->hdr, 0, f->r.br_body, f->r.br_nbody,
				     f->r.br_write_len, f->r.br_nwrites, &werr);
	f->nout = 0;
	for (unsigned i = 0; bad == GW_RDMA_BAD_NONE && i < f->gc.gc_nout; i++) {
		assert_true(f->nout + f->gc.gc_out[i].iov_len <= sizeof(f->out));
		memcpy(f->out + f->nout, f->gc.gc_out[i].iov_base, f->gc.gc_out[i].iov_len);
		f->nout += f->gc.gc_out[i].iov_len;
	}
	return bad;
}

/* 1. An honest server: the reply is the inline part, the 5000 bytes it
 * placed, the pad; nothing more. */
static void t01_honest(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	fx_server_writes(&f, 5000);
	fx_read_reply(&f, 5000, 5000);
	assert_int_equal(fx_translate(&f), GW_RDMA_BAD_NONE);
	assert_int_equal(f.nout, f.r.br_body_len + 5000);	/* 5000 % 4 == 0: no pad */
	assert_memory_equal(f.out, f.inl, f.r.br_body_len);
	for (size_t i = 0; i < 5000; i++)
		assert_int_equal(f.out[f.r.br_body_len + i], nfs_enc_byte(7, i));
}

/* Targets for client `owner` out of pool: one write chunk over two
 * buffers (8 KiB) and a reply chunk, as gr_target takes them. */
static void fx_targets(struct fx *f, struct gw_pool *pool, uint64_t owner, struct gw_buf *b[3])
{
	uint32_t cleared;

	for (unsigned i = 0; i < 3; i++) {
		b[i] = gw_buf_get_for(pool, owner, BUF, &cleared);
		assert_non_null(b[i]);
	}
	f->gc.gc_wiov[0][0] = (struct iovec){ b[0]->gb_data, BUF };
	f->gc.gc_wiov[0][1] = (struct iovec){ b[1]->gb_data, BUF };
	f->gc.gc_riov[0] = (struct iovec){ b[2]->gb_data, BUF };
	f->gc.gc_rt = (struct be_target){ f->gc.gc_riov, 1 };
}

/* 2. A server that reports 5000 bytes but wrote 100, into pool buffers
 * another client's READ filled: the client gets zeroes after them, never
 * what the buffers held before.  The same client's own earlier bytes are
 * left in place (not cleared again), and never reach a third client. */
static void t02_reports_more_than_written(void **state)
{
	struct gw_pool *pool = gw_pool_new(BUF, 3, false);
	struct gw_buf *b[3];
	struct fx f;

	(void)state;
	for (unsigned i = 0; i < 3; i++) {	/* client 1's READ data */
		uint32_t c;

		b[i] = gw_buf_get_for(pool, 1, BUF, &c);
		memset(b[i]->gb_data, STALE, BUF);
	}
	for (unsigned i = 0; i < 3; i++)
		gw_buf_put(pool, b[i]);
	fx_init(&f);
	fx_targets(&f, pool, 2, b);
	for (size_t k = 0; k < 100; k++)	/* the server writes 100 */
		((uint8_t *)f.gc.gc_wiov[0][0].iov_base)[k] = nfs_enc_byte(7, k);
	fx_read_reply(&f, 5000, 5000);
	assert_int_equal(fx_translate(&f), GW_RDMA_BAD_NONE);
	for (size_t i = 100; i < 5000; i++)
		assert_int_equal(f.out[f.r.br_body_len + i], 0);
	for (unsigned i = 0; i < 3; i++)	/* the reply chunk is cleared too */
		for (size_t k = i == 0 ? 100 : 0; k < BUF; k++)
			assert_int_equal(b[i]->gb_data[k], 0);
	/* client 2 fills them, gives them back, and takes them again: its
	 * own bytes stay (nothing to protect it from) */
	for (unsigned i = 0; i < 3; i++) {
		memset(b[i]->gb_data, 0x22, BUF);
		gw_buf_put(pool, b[i]);
	}
	fx_init(&f);
	fx_targets(&f, pool, 2, b);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(b[i]->gb_data[BUF - 1], 0x22);
	for (unsigned i = 0; i < 3; i++)
		gw_buf_put(pool, b[i]);
	/* client 3 gets none of them */
	fx_init(&f);
	fx_targets(&f, pool, 3, b);
	fx_read_reply(&f, 5000, 5000);
	assert_int_equal(fx_translate(&f), GW_RDMA_BAD_NONE);
	for (size_t i = 0; i < 5000; i++)
		assert_int_equal(f.out[f.r.br_body_len + i], 0);
	for (unsigned i = 0; i < 3; i++) {
		for (size_t k = 0; k < BUF; k++)
			assert_int_equal(b[i]->gb_data[k], 0);
		gw_buf_put(pool, b[i]);
	}
	gw_pool_free(pool);
}

/* 3. More than was offered: in a write chunk, more chunks than offered,
 * an RDMA_NOMSG body longer than the reply chunk or outside it. */
static void t03_reports_more_than_offered(void **state)
{
	struct fx f;
	enum chk_walk_err werr;

	(void)state;
	fx_init(&f);
	fx_read_reply(&f, 9000, 9000);		/* 8192 offered */
	assert_int_equal(fx_translate(&f), GW_RDMA_BAD_OVERRUN);
	/* the assembly alone refuses it too, and hands out nothing */
	assert_int_equal(gw_rdma_reply_assemble(&f.gc, &f.hdr, 0, f.r.br_body, 1,
						f.r.br_write_len, 1, &werr), GW_RDMA_BAD_OVERRUN);
	assert_int_equal(f.gc.gc_nout, 0);
	fx_init(&f);
	fx_read_reply(&f, 100, 100);
	f.r.br_nwrites = 2;			/* one offered */
	assert_int_equal(fx_translate(&f), GW_RDMA_BAD_OVERRUN);

	/* RDMA_NOMSG: the whole reply in the reply chunk (bufs[2]) */
	fx_init(&f);
	f.gc.gc_nwrites = 0;
	f.gc.gc_riov[0] = (struct iovec){ f.bufs[2], 64 };
	f.gc.gc_rt = (struct be_target){ f.gc.gc_riov, 1 };
	fx_read_reply(&f, 0, 0);
	f.r.br_proc = RPCRDMA_NOMSG;
	f.r.br_nwrites = 0;
	memcpy(f.bufs[2], f.inl, f.r.br_body_len);
	f.r.br_body[0].iov_base = f.bufs[2];
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_NONE);
	f.r.br_body[0].iov_base = f.bufs[1];	/* a buffer it was not offered */
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_OVERRUN);
	f.r.br_body[0] = (struct iovec){ f.bufs[2], 128 };	/* 64 offered */
	f.r.br_body_len = 128;
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_OVERRUN);
	f.r.br_body_len = 60;			/* pieces do not add up */
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_SHAPE);
	f.gc.gc_rt.bt_niov = 0;			/* no reply chunk offered at all */
	f.r.br_body[0].iov_len = f.r.br_body_len = 40;
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_OVERRUN);
}

/* 3b. One reply chunk segment over pool buffers side by side in memory
 * (be_spans_from_iov joins them): a body piece may run from one offered
 * buffer into the next one only where they touch, and never past the
 * last one offered. */
static void t03b_reply_chunk_over_neighbours(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	f.gc.gc_nwrites = 0;
	f.gc.gc_riov[0] = (struct iovec){ f.bufs[0], BUF };
	f.gc.gc_riov[1] = (struct iovec){ f.bufs[1], BUF };
	f.gc.gc_rt = (struct be_target){ f.gc.gc_riov, 2 };
	f.r.br_proc = RPCRDMA_NOMSG;
	f.r.br_nbody = 1;
	f.r.br_body[0] = (struct iovec){ f.bufs[0] + 100, BUF };	/* into bufs[1] */
	f.r.br_body_len = BUF;
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_NONE);
	f.r.br_body[0] = (struct iovec){ f.bufs[0], 2 * BUF };		/* both, exactly */
	f.r.br_body_len = 2 * BUF;
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_NONE);
	f.r.br_body[0] = (struct iovec){ f.bufs[1] + 100, BUF };	/* past the last */
	f.r.br_body_len = BUF;
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_OVERRUN);
	/* bufs[0] and bufs[2] do not touch: bufs[1] between them is not offered */
	f.gc.gc_riov[1] = (struct iovec){ f.bufs[2], BUF };
	f.r.br_body[0] = (struct iovec){ f.bufs[0] + 100, BUF };
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_OVERRUN);
	/* a short first piece: its end is not where the next one starts */
	f.gc.gc_riov[0] = (struct iovec){ f.bufs[0], 100 };
	f.gc.gc_riov[1] = (struct iovec){ f.bufs[1], BUF };
	f.r.br_body[0] = (struct iovec){ f.bufs[0], 200 };
	f.r.br_body_len = 200;
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_OVERRUN);
	f.r.br_body[0] = (struct iovec){ f.bufs[1], 200 };		/* inside bufs[1] */
	assert_int_equal(gw_rdma_reply_bound(&f.gc, &f.r), GW_RDMA_BAD_NONE);
}

/* 4. The data item's length is not what the chunk received; an undecodable
 * reply. */
static void t04_length_mismatch(void **state)
{
	struct fx f;

	(void)state;
	fx_init(&f);
	fx_read_reply(&f, 4000, 5000);
	assert_int_equal(fx_translate(&f), GW_RDMA_BAD_LENGTH);
	assert_int_equal(f.gc.gc_nout, 0);
	fx_init(&f);
	fx_read_reply(&f, 0, 100);		/* no result claims the chunk */
	assert_int_equal(fx_translate(&f), GW_RDMA_BAD_LENGTH);
	fx_init(&f);
	fx_read_reply(&f, 100, 100);
	f.r.br_body[0].iov_len = f.r.br_body_len = 10;
	assert_int_equal(fx_translate(&f), GW_RDMA_BAD_DECODE);
	assert_string_equal(gw_rdma_bad_str(GW_RDMA_BAD_OVERRUN), "overrun");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_honest),
		cmocka_unit_test(t02_reports_more_than_written),
		cmocka_unit_test(t03_reports_more_than_offered),
		cmocka_unit_test(t03b_reply_chunk_over_neighbours),
		cmocka_unit_test(t04_length_mismatch),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
