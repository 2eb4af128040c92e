// SPDX-License-Identifier: MIT
/* Unit tests for backend-rdma's pure marshalling: segment splitting, MSG vs
 * NOMSG, read-chunk cut-out with pads, and reply validation with the verbs
 * layer replaced by made-up (rkey, offset) handles. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "backend.h"

static struct rpcrdma_hdr rh, dec;

static void handles(struct be_handle *h, const struct be_span *sp, unsigned n, uint32_t key)
{
	for (unsigned i = 0; i < n; i++) {
		h[i].bh_rkey = key + i;
		h[i].bh_offset = (uint64_t)(uintptr_t)sp[i].sp_addr;
	}
}

/* 1. Spans cross iovecs and are cut at max_seg. */
static void t01_spans(void **state)
{
	static uint8_t m[64];
	uint8_t *a = m, *b = m + 16;	/* a gap between them: never joined */
	struct iovec iov[2] = { { a, 10 }, { b, 30 } };
	struct be_span sp[8];
	int n;

	(void)state;
	n = be_spans_from_iov(iov, 2, 4, 30, 8, sp, 8);
	assert_int_equal(n, 4);		/* a[4..10) 6, b 8, 8, 8 */
	assert_ptr_equal(sp[0].sp_addr, a + 4);
	assert_int_equal(sp[0].sp_len, 6);
	assert_ptr_equal(sp[1].sp_addr, b);
	assert_int_equal(sp[1].sp_len, 8);
	assert_int_equal(sp[3].sp_len, 8);
	assert_int_equal(be_spans_from_iov(iov, 2, 0, 40, 4, sp, 8), -E2BIG);
	assert_int_equal(be_spans_from_iov(iov, 2, 30, 11, 0, sp, 8), -EINVAL);
	assert_int_equal(be_spans_from_iov(iov, 2, 0, 40, 0, sp, 8), 2);
}

/* 1b. Pieces next to each other in memory (pool buffers side by side)
 * are one span, still cut at max_seg; a gap or a new item starts another. */
static void t01b_spans_join(void **state)
{
	static uint8_t m[64];
	struct iovec iov[3] = { { m, 16 }, { m + 16, 16 }, { m + 40, 8 } };
	struct be_span sp[8];
	int n;

	(void)state;
	n = be_spans_from_iov(iov, 3, 0, 40, 0, sp, 8);
	assert_int_equal(n, 2);
	assert_ptr_equal(sp[0].sp_addr, m);
	assert_int_equal(sp[0].sp_len, 32);
	assert_ptr_equal(sp[1].sp_addr, m + 40);
	assert_int_equal(sp[1].sp_len, 8);
	n = be_spans_from_iov(iov, 3, 4, 36, 20, sp, 8);	/* m[4..20) m[20..32) m[40..48) */
	assert_int_equal(n, 3);
	assert_ptr_equal(sp[0].sp_addr, m + 4);
	assert_int_equal(sp[0].sp_len, 20);
	assert_ptr_equal(sp[1].sp_addr, m + 24);
	assert_int_equal(sp[1].sp_len, 8);
	assert_int_equal(sp[2].sp_len, 8);
	/* Two spans suffice where three iovecs would have needed three. */
	assert_int_equal(be_spans_from_iov(iov, 3, 0, 40, 0, sp, 2), 2);
}

/* 2. A small call is RDMA_MSG: 28-byte header, body verbatim. */
static void t02_inline(void **state)
{
	uint8_t msg[40], out[4096];
	struct iovec iov = { msg, sizeof(msg) };
	struct be_call_desc d = { .cd_xid = 0x01020304, .cd_msg = &iov, .cd_msg_niov = 1 };
	struct be_plan *p = calloc(1, sizeof(*p));
	long n;

	(void)state;
	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	chk_put_be32(msg, d.cd_xid);
	assert_int_equal(be_plan_call(&d, 4096, 0, p), 0);
	assert_int_equal(p->pl_proc, RPCRDMA_MSG);
	assert_int_equal(p->pl_hdr_len, 28);
	n = be_marshal_call(&d, p, 128, NULL, NULL, NULL, &rh, out, sizeof(out));
	assert_int_equal(n, 68);
	assert_int_equal(chk_be32(out), 0x01020304);
	assert_int_equal(chk_be32(out + 4), 1);
	assert_int_equal(chk_be32(out + 8), 128);
	assert_int_equal(chk_be32(out + 12), RPCRDMA_MSG);
	assert_memory_equal(out + 28, msg, 40);
	assert_true(rpcrdma_hdr_decode(out, (size_t)n, NULL, &dec, NULL));
	assert_int_equal(dec.rh_hdr_len, 28);
	free(p);
}

/* 3. A read item in the middle: its data and pad leave the inline stream,
 * which goes on exactly at the item's position; segment at that position. */
static void t03_read_chunk_pad(void **state)
{
	uint8_t msg[64], out[4096];
	struct iovec iov = { msg, sizeof(msg) };
	struct be_read_item ri = { .ri_pos = 20, .ri_len = 5 };	/* 5 data + 3 pad */
	struct be_call_desc d = { .cd_xid = 7, .cd_msg = &iov, .cd_msg_niov = 1,
				  .cd_reads = &ri, .cd_nreads = 1 };
	struct be_plan *p = calloc(1, sizeof(*p));
	struct be_handle rd[4];
	long n;

	(void)state;
	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	chk_put_be32(msg, d.cd_xid);
	assert_int_equal(be_plan_call(&d, 4096, 0, p), 0);
	assert_int_equal(p->pl_proc, RPCRDMA_MSG);
	assert_int_equal(p->pl_nreadspans, 1);
	assert_int_equal(p->pl_inline_len, 64 - 8);
	handles(rd, p->pl_read, p->pl_nreadspans, 0x100);
	n = be_marshal_call(&d, p, 64, rd, NULL, NULL, &rh, out, sizeof(out));
	assert_true(n > 0);
	assert_true(rpcrdma_hdr_decode(out, (size_t)n, NULL, &dec, NULL));
	assert_int_equal(dec.rh_nreads, 1);
	assert_int_equal(dec.rh_reads[0].rd_position, 20);
	assert_int_equal(dec.rh_reads[0].rd_seg.rs_length, 5);
	assert_int_equal(dec.rh_reads[0].rd_seg.rs_handle, 0x100);
	assert_true(dec.rh_reads[0].rd_seg.rs_offset == (uint64_t)(uintptr_t)(msg + 20));
	assert_int_equal((size_t)n - dec.rh_hdr_len, 56);
	assert_memory_equal(out + dec.rh_hdr_len, msg, 20);
	assert_memory_equal(out + dec.rh_hdr_len + 20, msg + 28, 36);
	free(p);
}

/* 4. Misaligned or overlapping items are refused. */
static void t04_bad_items(void **state)
{
	uint8_t msg[64];
	struct iovec iov = { msg, sizeof(msg) };
	struct be_read_item ri[2] = { { 22, 4 }, { 0, 0 } };
	struct be_call_desc d = { .cd_msg = &iov, .cd_msg_niov = 1, .cd_reads = ri, .cd_nreads = 1 };
	struct be_plan *p = calloc(1, sizeof(*p));

	(void)state;
	assert_int_equal(be_plan_call(&d, 4096, 0, p), -EINVAL);
	ri[0] = (struct be_read_item){ 20, 10 };
	ri[1] = (struct be_read_item){ 28, 4 };	/* inside the first's data+pad */
	d.cd_nreads = 2;
	assert_int_equal(be_plan_call(&d, 4096, 0, p), -EINVAL);
	ri[1] = (struct be_read_item){ 60, 8 };	/* past the end */
	assert_int_equal(be_plan_call(&d, 4096, 0, p), -EINVAL);
	free(p);
}

/* 5. Too long for the send threshold: RDMA_NOMSG, one position-zero chunk
 * of the whole message, split across iovecs and max_seg; no inline. */
static void t05_nomsg(void **state)
{
	static uint8_t a[3000], b[3000];
	uint8_t out[4096];
	struct iovec iov[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct be_read_item ri = { .ri_pos = 100, .ri_len = 200 };
	struct be_call_desc d = { .cd_xid = 9, .cd_msg = iov, .cd_msg_niov = 2,
				  .cd_reads = &ri, .cd_nreads = 1 };
	struct be_plan *p = calloc(1, sizeof(*p));
	struct be_handle rd[8];
	long n;

	(void)state;
	assert_int_equal(be_plan_call(&d, 4096, 2048, p), 0);
	assert_int_equal(p->pl_proc, RPCRDMA_NOMSG);
	assert_int_equal(p->pl_nreadspans, 4);	/* 2048+952, 2048+952 */
	handles(rd, p->pl_read, p->pl_nreadspans, 0x200);
	n = be_marshal_call(&d, p, 64, rd, NULL, NULL, &rh, out, sizeof(out));
	assert_int_equal(n, (long)p->pl_hdr_len);
	assert_true(rpcrdma_hdr_decode(out, (size_t)n, NULL, &dec, NULL));
	assert_int_equal(dec.rh_proc, RPCRDMA_NOMSG);
	assert_int_equal(dec.rh_nreads, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(dec.rh_reads[i].rd_position, 0);
	assert_int_equal(dec.rh_reads[3].rd_seg.rs_length, 952);
	free(p);
}

/* Build a call offering one 8 KiB write chunk (split in 4 KiB segments)
 * and a 1 KiB reply chunk; the plan and handles are returned. */
static uint8_t wbuf[8192], rbuf[1024], cmsg[100];
static struct be_plan *offer(struct be_handle *wr, struct be_handle *rp)
{
	static struct iovec miov, wiov, riov;
	static struct be_target wt, rt;
	struct be_call_desc d = { 0 };
	struct be_plan *p = calloc(1, sizeof(*p));

	miov = (struct iovec){ cmsg, sizeof(cmsg) };
	wiov = (struct iovec){ wbuf, sizeof(wbuf) };
	riov = (struct iovec){ rbuf, sizeof(rbuf) };
	wt = (struct be_target){ &wiov, 1 };
	rt = (struct be_target){ &riov, 1 };
	d = (struct be_call_desc){ .cd_xid = 5, .cd_msg = &miov, .cd_msg_niov = 1,
				   .cd_writes = &wt, .cd_nwrites = 1, .cd_reply = &rt };
	assert_int_equal(be_plan_call(&d, 4096, 4096, p), 0);
	assert_int_equal(p->pl_nwspans, 2);
	assert_int_equal(p->pl_hdr_len, 28 + 8 + 32 + 4 + 16);
	handles(wr, p->pl_wspan, p->pl_nwspans, 0x300);
	handles(rp, p->pl_rspan, p->pl_nrspans, 0x400);
	return p;
}

/* A reply header echoing the offer with the given lengths. */
static void reply_hdr(struct rpcrdma_hdr *h, uint32_t proc, const struct be_handle *wr,
		      uint32_t w0, uint32_t w1, bool reply, const struct be_handle *rp, uint32_t rl)
{
	memset(h, 0, offsetof(struct rpcrdma_hdr, rh_reads));
	h->rh_xid = 5; h->rh_vers = 1; h->rh_credit = 64; h->rh_proc = proc;
	h->rh_nreads = 0;
	h->rh_nwrites = 1;
	h->rh_writes[0] = (struct rpcrdma_chunk){ 0, 2 };
	h->rh_segs[0] = (struct rpcrdma_segment){ wr[0].bh_rkey, w0, wr[0].bh_offset };
	h->rh_segs[1] = (struct rpcrdma_segment){ wr[1].bh_rkey, w1, wr[1].bh_offset };
	h->rh_nsegs = 2;
	h->rh_has_reply = reply;
	if (reply) {
		h->rh_reply = (struct rpcrdma_chunk){ 2, 1 };
		h->rh_segs[2] = (struct rpcrdma_segment){ rp[0].bh_rkey, rl, rp[0].bh_offset };
		h->rh_nsegs = 3;
	}
	h->rh_body_off = 48;
}

/* 6. Write-chunk lengths read back: 5000 bytes = 4096 + 904; inline body. */
static void t06_write_lengths(void **state)
{
	struct be_handle wr[4], rp[4];
	struct be_plan *p = offer(wr, rp);
	struct be_reply r;
	uint8_t buf[200];

	(void)state;
	reply_hdr(&rh, RPCRDMA_MSG, wr, 4096, 904, false, rp, 0);
	assert_true(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	assert_int_equal(r.br_err, BE_OK);
	assert_int_equal(r.br_nwrites, 1);
	assert_int_equal(r.br_write_len[0], 5000);
	assert_ptr_equal(r.br_body[0].iov_base, buf + 48);
	assert_int_equal(r.br_body_len, 200 - 48);
	assert_int_equal(r.br_credits, 64);
	free(p);
}

/* 7. Never trust the lengths: beyond the offer, a changed handle or offset,
 * or data after a short segment fail the call. */
static void t07_overrun(void **state)
{
	struct be_handle wr[4], rp[4];
	struct be_plan *p = offer(wr, rp);
	struct be_reply r;
	uint8_t buf[200];

	(void)state;
	reply_hdr(&rh, RPCRDMA_MSG, wr, 4097, 0, false, rp, 0);
	assert_false(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	assert_int_equal(r.br_err, BE_ERR_OVERRUN);
	reply_hdr(&rh, RPCRDMA_MSG, wr, 100, 100, false, rp, 0);
	assert_false(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	reply_hdr(&rh, RPCRDMA_MSG, wr, 4096, 4096, false, rp, 0);
	rh.rh_segs[1].rs_handle ^= 1;
	assert_false(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	reply_hdr(&rh, RPCRDMA_MSG, wr, 4096, 4096, false, rp, 0);
	rh.rh_segs[0].rs_offset += 4;
	assert_false(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	reply_hdr(&rh, RPCRDMA_MSG, wr, 10, 0, false, rp, 0);
	rh.rh_writes[0].ck_nsegs = 3;	/* more segments than offered */
	rh.rh_segs[2] = rh.rh_segs[1];
	rh.rh_nsegs = 3;
	assert_false(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	free(p);
}

/* 8. RDMA_NOMSG reply: the body is the reply chunk's first bytes. */
static void t08_reply_chunk(void **state)
{
	struct be_handle wr[4], rp[4];
	struct be_plan *p = offer(wr, rp);
	struct be_reply r;
	uint8_t buf[64];

	(void)state;
	reply_hdr(&rh, RPCRDMA_NOMSG, wr, 0, 0, true, rp, 300);
	assert_true(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	assert_int_equal(r.br_nbody, 1);
	assert_ptr_equal(r.br_body[0].iov_base, rbuf);
	assert_int_equal(r.br_body_len, 300);
	assert_int_equal(r.br_write_len[0], 0);
	reply_hdr(&rh, RPCRDMA_NOMSG, wr, 0, 0, true, rp, 1025);
	assert_false(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	assert_int_equal(r.br_err, BE_ERR_OVERRUN);
	reply_hdr(&rh, RPCRDMA_NOMSG, wr, 0, 0, false, rp, 0);	/* NOMSG without chunk */
	assert_false(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	assert_int_equal(r.br_err, BE_ERR_BAD_REPLY);
	free(p);
}

/* 9. RDMA_ERROR: ERR_VERS carries the range, ERR_CHUNK fails the call. */
static void t09_rdma_error(void **state)
{
	struct be_handle wr[4], rp[4];
	struct be_plan *p = offer(wr, rp);
	struct be_reply r;

	(void)state;
	memset(&rh, 0, offsetof(struct rpcrdma_hdr, rh_reads));
	rh.rh_proc = RPCRDMA_ERROR;
	rh.rh_err = RPCRDMA_ERR_VERS;
	rh.rh_vers_low = rh.rh_vers_high = 1;
	assert_false(be_reply_check(&rh, p, wr, rp, NULL, 0, &r));
	assert_int_equal(r.br_err, BE_ERR_VERS);
	assert_int_equal(r.br_vers_high, 1);
	rh.rh_err = RPCRDMA_ERR_CHUNK;
	assert_false(be_reply_check(&rh, p, wr, rp, NULL, 0, &r));
	assert_int_equal(r.br_err, BE_ERR_CHUNK);
	free(p);
}

/* 10. The plan's header length matches the codec's for every shape. */
static void t10_hdr_len(void **state)
{
	struct be_handle wr[4], rp[4];
	struct be_plan *p = offer(wr, rp);
	struct iovec miov = { cmsg, sizeof(cmsg) }, wiov = { wbuf, sizeof(wbuf) };
	struct iovec riov = { rbuf, sizeof(rbuf) };
	struct be_target wt = { &wiov, 1 }, rt = { &riov, 1 };
	struct be_call_desc d = { .cd_xid = 5, .cd_msg = &miov, .cd_msg_niov = 1,
				  .cd_writes = &wt, .cd_nwrites = 1, .cd_reply = &rt };
	uint8_t out[4096];
	long n;

	(void)state;
	chk_put_be32(cmsg, 5);
	n = be_marshal_call(&d, p, 1, NULL, wr, rp, &rh, out, sizeof(out));
	assert_int_equal(n, (long)(p->pl_hdr_len + sizeof(cmsg)));
	assert_int_equal(rpcrdma_hdr_len(&rh), p->pl_hdr_len);
	assert_true(rpcrdma_hdr_decode(out, (size_t)n, NULL, &dec, NULL));
	assert_true(dec.rh_has_reply);
	assert_int_equal(dec.rh_hdr_len, p->pl_hdr_len);
	free(p);
}

/* 11. A reply with a Read list is not an inline reply: be_reply_check
 * refuses it (the verbs side pulls RFC 5666 long replies itself). */
static void t11_read_list_reply(void **state)
{
	struct be_handle wr[4], rp[4];
	struct be_plan *p = offer(wr, rp);
	struct be_reply r;
	uint8_t buf[64];

	(void)state;
	reply_hdr(&rh, RPCRDMA_MSG, wr, 0, 0, false, rp, 0);
	rh.rh_nreads = 1;
	rh.rh_reads[0] = (struct rpcrdma_read_seg){ 0, { 1, 100, 0x1000 } };
	assert_false(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	assert_int_equal(r.br_err, BE_ERR_BAD_REPLY);
	free(p);
}

/* 12. More write chunks returned than offered fail the call. */
static void t12_extra_chunk(void **state)
{
	struct be_handle wr[4], rp[4];
	struct be_plan *p = offer(wr, rp);
	struct be_reply r;
	uint8_t buf[64];

	(void)state;
	reply_hdr(&rh, RPCRDMA_MSG, wr, 10, 0, false, rp, 0);
	rh.rh_nwrites = 2;
	rh.rh_writes[1] = (struct rpcrdma_chunk){ 0, 1 };
	assert_false(be_reply_check(&rh, p, wr, rp, buf, sizeof(buf), &r));
	assert_int_equal(r.br_err, BE_ERR_BAD_REPLY);
	free(p);
}

/* 13. Backchannel (RFC 8167): a server CALL is told from a reply by the
 * RPC direction field, chunks are flagged, our REPLY header decodes as an
 * RDMA_MSG with three empty lists and the credit grant we put. */
static void t13_backchannel(void **state)
{
	uint8_t m[64];
	struct rpcrdma_hdr bh;
	bool chunks;

	(void)state;
	/* 13.1 header we send, then the CALL's first words */
	be_bc_marshal_hdr(m, 0xabcd, 2);
	chk_put_be32(m + 28, 0xabcd);	/* RPC XID */
	chk_put_be32(m + 32, 0);	/* CALL */
	for (unsigned i = 36; i < 64; i += 4)
		chk_put_be32(m + i, 1);
	assert_true(rpcrdma_hdr_decode(m, sizeof(m), NULL, &bh, NULL));
	assert_int_equal(bh.rh_xid, 0xabcd);
	assert_int_equal(bh.rh_credit, 2);
	assert_int_equal(bh.rh_proc, RPCRDMA_MSG);
	assert_int_equal(bh.rh_body_off, BE_BC_HDR_LEN);
	assert_int_equal(bh.rh_nreads + bh.rh_nwrites + bh.rh_has_reply, 0);
	assert_true(be_bc_is_call(&bh, m, sizeof(m), &chunks));
	assert_false(chunks);
	/* 13.2 a REPLY (ours to a forward call) is not */
	chk_put_be32(m + 32, 1);
	assert_false(be_bc_is_call(&bh, m, sizeof(m), &chunks));
	/* 13.3 too short to show a direction */
	chk_put_be32(m + 32, 0);
	assert_false(be_bc_is_call(&bh, m, 32, &chunks));
	/* 13.4 NOMSG: nothing inline, direction unknown */
	bh.rh_proc = RPCRDMA_NOMSG;
	assert_false(be_bc_is_call(&bh, m, sizeof(m), &chunks));
	/* 13.5 a CALL with a Write list: flagged (ERR_CHUNK) */
	bh.rh_proc = RPCRDMA_MSG;
	bh.rh_nwrites = 1;
	assert_true(be_bc_is_call(&bh, m, sizeof(m), &chunks));
	assert_true(chunks);
}

/* 14. A plan object is reused call after call and only its counts are
 * reset: planning into one whose every byte is left over (scribbled over
 * here) must marshal exactly what planning into a zeroed one does, for
 * each shape: inline, a read item, write + reply chunks, long. */
static void plan_both(const struct be_call_desc *d, uint32_t thresh)
{
	struct be_plan *z = calloc(1, sizeof(*z)), *u = malloc(sizeof(*u));
	struct be_handle rd[BE_MAX_CALL_SEGS], wr[BE_MAX_CALL_SEGS], rp[BE_MAX_CALL_SEGS];
	static uint8_t oz[8192], ou[8192];
	long nz, nu;

	assert_non_null(z);
	assert_non_null(u);
	memset(u, 0xa5, sizeof(*u));
	assert_int_equal(be_plan_call(d, thresh, 4096, z), 0);
	assert_int_equal(be_plan_call(d, thresh, 4096, u), 0);
	assert_int_equal(u->pl_proc, z->pl_proc);
	assert_int_equal(u->pl_inline_len, z->pl_inline_len);
	assert_int_equal(u->pl_hdr_len, z->pl_hdr_len);
	assert_int_equal(u->pl_nreadspans, z->pl_nreadspans);
	assert_int_equal(u->pl_nwrites, z->pl_nwrites);
	assert_int_equal(u->pl_nwspans, z->pl_nwspans);
	assert_int_equal(u->pl_nrspans, z->pl_nrspans);
	assert_int_equal(u->pl_has_reply, z->pl_has_reply);
	handles(rd, z->pl_read, z->pl_nreadspans, 0x100);
	handles(wr, z->pl_wspan, z->pl_nwspans, 0x300);
	handles(rp, z->pl_rspan, z->pl_nrspans, 0x400);
	nz = be_marshal_call(d, z, 64, rd, wr, rp, &rh, oz, sizeof(oz));
	nu = be_marshal_call(d, u, 64, rd, wr, rp, &rh, ou, sizeof(ou));
	assert_true(nz > 0);
	assert_int_equal(nu, nz);
	assert_memory_equal(ou, oz, (size_t)nz);
	free(z);
	free(u);
}

static void t14_plan_reuse(void **state)
{
	static uint8_t msg[200], lng[6000];
	struct iovec iov = { msg, sizeof(msg) }, liov = { lng, sizeof(lng) };
	struct be_read_item ri = { .ri_pos = 20, .ri_len = 5 };
	struct be_call_desc d = { .cd_xid = 7, .cd_msg = &iov, .cd_msg_niov = 1 };
	struct iovec wiov = { wbuf, sizeof(wbuf) }, riov = { rbuf, sizeof(rbuf) };
	struct be_target wt = { &wiov, 1 }, rt = { &riov, 1 };

	(void)state;
	for (unsigned i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)i;
	chk_put_be32(msg, 7);
	chk_put_be32(lng, 7);
	plan_both(&d, 4096);				/* inline, no chunk */
	d.cd_reads = &ri;
	d.cd_nreads = 1;
	plan_both(&d, 4096);				/* one read item */
	d.cd_reads = NULL;
	d.cd_nreads = 0;
	d.cd_writes = &wt;
	d.cd_nwrites = 1;
	d.cd_reply = &rt;
	plan_both(&d, 4096);				/* write list and reply chunk */
	d = (struct be_call_desc){ .cd_xid = 7, .cd_msg = &liov, .cd_msg_niov = 1 };
	plan_both(&d, 1024);				/* long: position-zero read chunk */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_spans),
		cmocka_unit_test(t01b_spans_join),
		cmocka_unit_test(t02_inline),
		cmocka_unit_test(t03_read_chunk_pad),
		cmocka_unit_test(t04_bad_items),
		cmocka_unit_test(t05_nomsg),
		cmocka_unit_test(t06_write_lengths),
		cmocka_unit_test(t07_overrun),
		cmocka_unit_test(t08_reply_chunk),
		cmocka_unit_test(t09_rdma_error),
		cmocka_unit_test(t10_hdr_len),
		cmocka_unit_test(t11_read_list_reply),
		cmocka_unit_test(t12_extra_chunk),
		cmocka_unit_test(t13_backchannel),
		cmocka_unit_test(t14_plan_reuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
