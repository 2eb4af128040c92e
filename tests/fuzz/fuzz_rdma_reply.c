// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the RPC-over-RDMA reply translation: the bytes a
 * server sends (transport header + RPC reply, RDMA_MSG or a Long Reply in
 * the Reply chunk, RFC 8166 3.5.3) -> rpcrdma_hdr_decode -> be_reply_check
 * (backend-rdma/be_marshal.c) against a planned call -> gw_rdma_reply_bound
 * and gw_rdma_reply_assemble (gateway/rdma_reply.c), as the RDMA
 * transport's reply callback runs them.
 *
 * Input: 4 shape bytes (call: NFSv3 READ / READDIR, NFSv4 COMPOUND, NFSv2
 * READ; write chunks 0..2 and their sizes; reply chunk offered and its
 * size), 2 bytes n, n bytes received inline, then what the server wrote
 * into the targets (write chunks in order, then the reply chunk).
 *
 * Invariants, trapped on violation:
 *  - every byte of an accepted reply lies in the received message, in the
 *    zero pad, or inside the extent the server reported placed in a write
 *    chunk or the reply chunk: never elsewhere in the pool (the guard
 *    bytes around and after the offered extents);
 *  - nothing is accepted that the backend refused.
 */
#include <stdint.h>
#include <string.h>

#include "backend.h"
#include "chunking.h"
#include "transport_rdma.h"

#define POOL	(3 * 8192)
#define GUARD	0xab

static uint8_t pool[POOL];
static uint8_t call_msg[64];
static struct gw_rdma_call gc;
static struct be_plan plan;
static struct be_reply rep;
static struct rpcrdma_hdr rh;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t shapes[4][3] = {
	{ 100003, 3, 6 },	/* READ */
	{ 100003, 3, 16 },	/* READDIR */
	{ 100003, 4, 1 },	/* COMPOUND */
	{ 100003, 2, 6 },	/* v2 READ */
};

/* Where in the targets' streams p lies: true and the placed extent's
 * check when inside a target, false when not in any. */
static bool in_target(const struct be_target *t, const uint8_t *p, size_t len, size_t placed,
		      bool *ok)
{
	size_t pos = 0;

	for (unsigned i = 0; i < t->bt_niov; i++) {
		const uint8_t *b = t->bt_iov[i].iov_base;

		if (p >= b && p < b + t->bt_iov[i].iov_len) {
			*ok = pos + (size_t)(p - b) + len <= placed &&
			      (size_t)(p - b) + len <= t->bt_iov[i].iov_len;
			return true;
		}
		pos += t->bt_iov[i].iov_len;
	}
	return false;
}

static void check_out(const uint8_t *msg, size_t n)
{
	for (unsigned i = 0; i < gc.gc_nout; i++) {
		const uint8_t *p = gc.gc_out[i].iov_base;
		size_t len = gc.gc_out[i].iov_len;
		bool ok = false, found = false;

		if (p >= msg && p + len <= msg + n)
			continue;
		if (p == chk_zero_pad && len < 4)
			continue;
		for (unsigned c = 0; c < gc.gc_nwrites && !found; c++)
			found = in_target(&gc.gc_wt[c], p, len, rep.br_write_len[c], &ok);
		if (!found && rep.br_proc == RPCRDMA_NOMSG)
			found = in_target(&gc.gc_rt, p, len, rep.br_body_len, &ok);
		if (!found || !ok)
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rpcrdma_limits lim;
	enum rpcrdma_hdr_err herr;
	enum chk_walk_err werr;
	struct be_handle wr[BE_MAX_CALL_SEGS], rp[BE_MAX_CALL_SEGS];
	struct be_call_desc d;
	struct iovec msg_iov;
	struct rpc_call_hdr hdr;
	size_t n, off = 0;
	unsigned nw;
	uint8_t *tp = pool;

	if (size < 6)
		return 0;
	memset(&gc, 0, sizeof(gc));
	memset(&hdr, 0, sizeof(hdr));
	memset(pool, GUARD, sizeof(pool));
	hdr.rc_prog = shapes[data[0] & 3][0];
	hdr.rc_vers = shapes[data[0] & 3][1];
	hdr.rc_proc = shapes[data[0] & 3][2];
	nw = ((data[0] >> 2) & 3) % 3;
	/* targets: chunk sizes 4..1024 (4-byte multiples), each 2 iovecs
	 * with a guard gap between them */
	for (unsigned c = 0; c < nw; c++) {
		size_t len = ((size_t)data[1 + c] + 1) * 4;

		gc.gc_wiov[c][0] = (struct iovec){ tp, len / 2 };
		gc.gc_wiov[c][1] = (struct iovec){ tp + len / 2 + 16, len - len / 2 };
		gc.gc_wt[c] = (struct be_target){ gc.gc_wiov[c], 2 };
		tp += len + 32;
	}
	gc.gc_nwrites = nw;
	if (data[0] & 0x20) {
		size_t len = ((size_t)data[3] + 8) * 16;

		gc.gc_riov[0] = (struct iovec){ tp, len };
		gc.gc_rt = (struct be_target){ gc.gc_riov, 1 };
	}
	/* Offered extents start as zeroes, as pool.c's gw_buf_get_for leaves
	 * them where another client's bytes might be (test_gw_pool); the
	 * guard bytes around them stand for the rest of the pool. */
	for (unsigned c = 0; c < nw; c++)
		for (unsigned i = 0; i < 2; i++)
			memset(gc.gc_wiov[c][i].iov_base, 0, gc.gc_wiov[c][i].iov_len);
	if (gc.gc_rt.bt_niov)
		memset(gc.gc_riov[0].iov_base, 0, gc.gc_riov[0].iov_len);

	/* the call (its bytes do not matter to the reply) and its plan */
	memset(call_msg, 0, sizeof(call_msg));
	msg_iov = (struct iovec){ call_msg, sizeof(call_msg) };
	memset(&d, 0, sizeof(d));
	d.cd_msg = &msg_iov;
	d.cd_msg_niov = 1;
	d.cd_writes = gc.gc_wt;
	d.cd_nwrites = nw;
	d.cd_reply = gc.gc_rt.bt_niov ? &gc.gc_rt : NULL;
	if (be_plan_call(&d, 1024, 0, &plan) != 0)
		return 0;
	for (unsigned i = 0; i < BE_MAX_CALL_SEGS; i++) {
		wr[i] = (struct be_handle){ 0x100 + i, 0x10000u * i };
		rp[i] = (struct be_handle){ 0x200 + i, 0x20000u * i };
	}

	/* what the server sends and what it writes */
	n = (size_t)data[4] << 8 | data[5];
	data += 6;
	size -= 6;
	if (n > size)
		n = size;
	for (unsigned c = 0; c < nw; c++)
		for (unsigned i = 0; i < 2; i++)
			for (size_t k = 0; k < gc.gc_wiov[c][i].iov_len && n + off < size; k++)
				((uint8_t *)gc.gc_wiov[c][i].iov_base)[k] = data[n + off++];
	for (size_t k = 0; gc.gc_rt.bt_niov && k < gc.gc_riov[0].iov_len && n + off < size; k++)
		((uint8_t *)gc.gc_riov[0].iov_base)[k] = data[n + off++];

	rpcrdma_limits_default(&lim);
	if (!rpcrdma_hdr_decode(data, n, &lim, &rh, &herr))
		return 0;
	if (!be_reply_check(&rh, &plan, wr, rp, data, n, &rep)) {
		if (rep.br_err == BE_OK)
			__builtin_trap();
		return 0;
	}
	if (gw_rdma_reply_bound(&gc, &rep) != GW_RDMA_BAD_NONE)
		return 0;
	if (gw_rdma_reply_assemble(&gc, &hdr, 0, rep.br_body, rep.br_nbody, rep.br_write_len,
				   rep.br_nwrites, &werr) != GW_RDMA_BAD_NONE) {
		if (gc.gc_nout != 0)
			__builtin_trap();
		return 0;
	}
	check_out(data, n);
	return 0;
}
