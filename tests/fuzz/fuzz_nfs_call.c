// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the NFS call walker and the chunking decision
 * (chunking/nfs_walk.c, chunking/nfs_decide.c).
 *
 * Input: byte 0 picks the program, byte 1 the version, byte 2 the
 * procedure, byte 3 the RPCSEC_GSS service, byte 4 where to split the
 * stream into two segments, byte 5 the thresholds; the rest is the
 * argument stream (the message starts at position 0).  Invariants:
 *  - every call item lies inside the stream, 4-aligned, items in order,
 *    no two overlapping, and only when DDP is allowed;
 *  - the walk is the same whether the stream is one segment or two;
 *  - the decision's read chunks lie inside the message, are 4-aligned,
 *    cover whole items, the inline size adds up and so do the inline
 *    spans of chk_decision_inline_spans(); an RDMA_NOMSG call
 *    has exactly one position-zero chunk holding the whole message.
 */
#include <stdint.h>
#include <string.h>

#include "chunking.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t progs[8] = {
	CHK_PROG_NFS, CHK_PROG_NFS, CHK_PROG_NFS, CHK_PROG_NFS,
	CHK_PROG_MOUNT, CHK_PROG_NLM, CHK_PROG_NFSACL, 390113,
};
static const uint32_t gss[8] = {
	0, 0, 0, 0, RPC_GSS_SVC_NONE, RPC_GSS_SVC_INTEGRITY, RPC_GSS_SVC_PRIVACY, CHK_GSS_CONTROL,
};

static void check_walk(const struct chk_call_walk *cw, size_t len)
{
	size_t prev_end = 0;
	unsigned i;

	if (cw->cw_ncall > CHK_WALK_MAX_ITEMS || cw->cw_nreply > CHK_WALK_MAX_ITEMS)
		__builtin_trap();
	/* per-op counters read cw_op[0..cw_nops_listed) */
	if (cw->cw_nops_listed > CHK_WALK_MAX_OPS || cw->cw_nops_listed > cw->cw_nops ||
	    (cw->cw_nops_known > cw->cw_nops_listed && cw->cw_nops_listed < CHK_WALK_MAX_OPS))
		__builtin_trap();
	if (cw->cw_noddp != CHK_NODDP_NO && cw->cw_ncall + cw->cw_nreply != 0)
		__builtin_trap();
	for (i = 0; i < cw->cw_ncall; i++) {
		const struct chk_item *it = &cw->cw_call[i];

		if (it->it_pos % 4 || it->it_pos < prev_end || it->it_pos + it->it_len > len ||
		    it->it_pos + xdr_round4(it->it_len) > len)
			__builtin_trap();
		prev_end = it->it_pos + it->it_len;
	}
	if (cw->cw_args_end > len)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct chk_call_walk cw, cw2;
	struct chk_rdma_params p;
	struct chk_decision dc;
	struct xdr_cur xc;
	struct iovec one, two[2];
	enum chk_walk_err err, err2;
	uint32_t prog, vers, proc, svc;
	size_t len, split, inl;
	bool ok, ok2;
	unsigned i;

	if (size < 6)
		return 0;
	prog = progs[data[0] & 7];
	vers = data[1] % 6;
	proc = data[2];
	svc = gss[data[3] & 7];
	split = data[4];
	chk_rdma_params_default(&p);
	p.rdp_send_threshold = 1024u << (data[5] & 3);
	p.rdp_recv_threshold = 1024u << ((data[5] >> 2) & 3);
	p.rdp_max_read_chunks = 1 + ((data[5] >> 4) & 3);
	p.rdp_max_write_chunks = 1 + ((data[5] >> 6) & 3);
	data += 6;
	len = size - 6;

	xdr_cur_init_buf(&xc, &one, data, len);
	ok = chk_call_walk(&xc, prog, vers, proc, svc, &cw, &err);
	if (ok != (err == CHK_WALK_OK))
		__builtin_trap();
	check_walk(&cw, len);

	if (split > len)
		split = len;
	two[0] = (struct iovec){ (void *)data, split };
	two[1] = (struct iovec){ (void *)(data + split), len - split };
	xdr_cur_init(&xc, two, 2);
	ok2 = chk_call_walk(&xc, prog, vers, proc, svc, &cw2, &err2);
	if (ok != ok2 || err != err2 || cw.cw_ncall != cw2.cw_ncall ||
	    cw.cw_nreply != cw2.cw_nreply || cw.cw_res_max != cw2.cw_res_max ||
	    cw.cw_res_unbounded != cw2.cw_res_unbounded || cw.cw_args_end != cw2.cw_args_end)
		__builtin_trap();
	for (i = 0; i < cw.cw_ncall; i++)
		if (cw.cw_call[i].it_pos != cw2.cw_call[i].it_pos ||
		    cw.cw_call[i].it_len != cw2.cw_call[i].it_len)
			__builtin_trap();

	if (!chk_decide(&cw, 0, len, &p, &dc))
		return 0;
	if (dc.dc_proc == RPCRDMA_NOMSG) {
		if (dc.dc_nreads != 1 || dc.dc_reads[0].rdc_pos != 0 ||
		    dc.dc_reads[0].rdc_len != len || dc.dc_call_inline != 0)
			__builtin_trap();
	} else {
		inl = len;
		if (dc.dc_nreads > p.rdp_max_read_chunks)
			__builtin_trap();
		for (i = 0; i < dc.dc_nreads; i++) {
			const struct chk_read_chunk *rc = &dc.dc_reads[i];
			const struct chk_item *it = &cw.cw_call[rc->rdc_item];

			if (rc->rdc_pos % 4 || rc->rdc_pos == 0 || rc->rdc_pos != it->it_pos ||
			    rc->rdc_len != it->it_len || (size_t)rc->rdc_pos + rc->rdc_len > len)
				__builtin_trap();
			if (i && rc->rdc_pos <= dc.dc_reads[i - 1].rdc_pos)
				__builtin_trap();
			inl -= xdr_round4(rc->rdc_len);
		}
		if (inl != dc.dc_call_inline || inl + dc.dc_call_hdr_max > p.rdp_send_threshold)
			__builtin_trap();
		/* the gather list of the Send covers exactly the inline bytes */
		{
			struct xdr_span sp[CHK_MAX_READ_CHUNKS + 1];
			unsigned ns = chk_decision_inline_spans(&dc, 0, len, sp,
								CHK_MAX_READ_CHUNKS + 1);

			inl = 0;
			for (i = 0; i < ns; i++) {
				if (sp[i].xs_len == 0 || sp[i].xs_pos + sp[i].xs_len > len ||
				    (i && sp[i].xs_pos < sp[i - 1].xs_pos + sp[i - 1].xs_len))
					__builtin_trap();
				inl += sp[i].xs_len;
			}
			if (inl != dc.dc_call_inline)
				__builtin_trap();
		}
	}
	if (dc.dc_nwrites > cw.cw_nreply || (dc.dc_nwrites && dc.dc_reply_chunk))
		__builtin_trap();
	if (!dc.dc_reply_chunk && !dc.dc_nwrites && cw.cw_res_unbounded)
		__builtin_trap();
	return 0;
}
