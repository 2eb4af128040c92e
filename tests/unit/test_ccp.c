// SPDX-License-Identifier: MIT
/*
 * Unit tests for the Connection Configuration Protocol codecs (chunking/ccp.c),
 * draft-ietf-nfsv4-rpcrdma-08 section 6.2.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"
#include "vectors.h"

/* 1. draft-08 6.2: program 100400, version 1, CONF_RDMA = 1. */
static void t01_numbers(void **state)
{
	(void)state;
	assert_int_equal(CCP_PROG, 100400);
	assert_int_equal(CCP_VERS, 1);
	assert_int_equal(CCP_PROC_CONF_RDMA, 1);
}

/* 2. draft-08 6.2: config_rdma_req = maxcall_sendsize, maxreply_sendsize,
 * maxrdmaread, three uint32 in that order. */
static void t02_req_bytes(void **state)
{
	static const uint8_t want[] = { 0, 0, 0x10, 0, 0, 0, 0x20, 0, 0, 0, 0, 16 };
	struct ccp_req q = { 4096, 8192, 16 }, r;
	uint8_t out[CCP_ARGS_LEN];
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_true(ccp_req_encode(&xe, &q));
	assert_int_equal(xe.xe_len, CCP_ARGS_LEN);
	assert_memory_equal(out, want, sizeof(want));
	xdr_cur_init_buf(&xc, &one, want, sizeof(want));
	assert_true(ccp_req_decode(&xc, &r));
	assert_int_equal(r.cq_maxcall_sendsize, 4096);
	assert_int_equal(r.cq_maxreply_sendsize, 8192);
	assert_int_equal(r.cq_maxrdmaread, 16);
	assert_int_equal(xdr_remaining(&xc), 0);
}

/* 3. draft-08 6.2: config_rdma_reply = maxcall_sendsize, align, maxrdmaread;
 * maxrdmaread 0 means "no RDMA Read" and is a legal value. */
static void t03_reply_bytes(void **state)
{
	static const uint8_t want[] = { 0, 0, 0x04, 0, 0, 0, 0x10, 0, 0, 0, 0, 0 };
	struct ccp_reply p = { 1024, 4096, 0 }, r;
	uint8_t out[CCP_ARGS_LEN];
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	xdr_enc_init(&xe, out, sizeof(out));
	assert_true(ccp_reply_encode(&xe, &p));
	assert_memory_equal(out, want, sizeof(want));
	xdr_cur_init_buf(&xc, &one, want, sizeof(want));
	assert_true(ccp_reply_decode(&xc, &r));
	assert_int_equal(r.ccr_maxcall_sendsize, 1024);
	assert_int_equal(r.ccr_align, 4096);
	assert_int_equal(r.ccr_maxrdmaread, 0);
}

/* 4. Truncation at every offset and a too-small encode buffer fail. */
static void t04_truncated(void **state)
{
	uint8_t b[CCP_ARGS_LEN] = { 0 };
	struct ccp_req q = { 0 };
	struct ccp_reply p = { 0 };
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;

	(void)state;
	for (size_t len = 0; len < CCP_ARGS_LEN; len++) {
		xdr_cur_init_buf(&xc, &one, b, len);
		assert_false(ccp_req_decode(&xc, &q));
		assert_int_equal(xc.xc_err, XDR_ERR_SHORT);
		xdr_cur_init_buf(&xc, &one, b, len);
		assert_false(ccp_reply_decode(&xc, &p));
		xdr_enc_init(&xe, b, len);
		assert_false(ccp_req_encode(&xe, &q));
		xdr_enc_init(&xe, b, len);
		assert_false(ccp_reply_encode(&xe, &p));
		assert_int_equal(xe.xe_err, XDR_ERR_NO_SPACE);
	}
}

/* 5. A CONF_RDMA call as it would travel: RPC call header (RFC 5531 9) for
 * 100400/1/1 with the request as arguments, decoded at rc_args_pos. */
static void t05_in_call(void **state)
{
	uint8_t buf[256];
	struct ccp_req q = { 1024, 1024, 4 }, r;
	struct rpc_call_hdr call;
	struct xdr_enc xe;
	struct iovec one;
	struct xdr_cur xc;
	size_t n;

	(void)state;
	n = vec_rpc_call_sys(buf, sizeof(buf), 7, CCP_PROG, CCP_VERS, CCP_PROC_CONF_RDMA, "h", 0, 0);
	assert_true(n > 0);
	xdr_enc_init(&xe, buf + n, sizeof(buf) - n);
	assert_true(ccp_req_encode(&xe, &q));
	xdr_cur_init_buf(&xc, &one, buf, n + xe.xe_len);
	assert_true(rpc_call_decode(&xc, &call));
	assert_int_equal(call.rc_prog, CCP_PROG);
	assert_int_equal(call.rc_proc, CCP_PROC_CONF_RDMA);
	assert_int_equal(call.rc_args_pos, n);
	assert_true(ccp_req_decode(&xc, &r));
	assert_int_equal(r.cq_maxrdmaread, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_numbers),
		cmocka_unit_test(t02_req_bytes),
		cmocka_unit_test(t03_reply_bytes),
		cmocka_unit_test(t04_truncated),
		cmocka_unit_test(t05_in_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
