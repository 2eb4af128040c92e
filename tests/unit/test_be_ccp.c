// SPDX-License-Identifier: MIT
/*
 * Unit tests for the pure pieces of the CCP client (backend-rdma/be_ccp.c,
 * draft-ietf-nfsv4-rpcrdma-08 section 6): the CONF_RDMA call message, the
 * reading of every kind of answer, and the limits applied to a good one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "backend.h"

/* An RPC reply (RFC 5531 9) to xid: accepted with stat (or denied), then
 * nres result words. */
static size_t reply(uint8_t *buf, uint32_t xid, bool denied, uint32_t stat, const uint32_t *res,
		    unsigned nres)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, buf, 256);
	xdr_put_u32(&xe, xid);
	xdr_put_u32(&xe, RPC_REPLY);
	if (denied) {
		xdr_put_u32(&xe, RPC_MSG_DENIED);
		xdr_put_u32(&xe, 1);	/* AUTH_ERROR */
		xdr_put_u32(&xe, 1);	/* AUTH_BADCRED */
		return xe.xe_len;
	}
	xdr_put_u32(&xe, RPC_MSG_ACCEPTED);
	xdr_put_u32(&xe, RPC_AUTH_NONE);
	xdr_put_u32(&xe, 0);
	xdr_put_u32(&xe, stat);
	for (unsigned i = 0; i < nres; i++)
		xdr_put_u32(&xe, res[i]);
	return xe.xe_len;
}

static enum be_ccp_result parse(const uint8_t *buf, size_t len, uint32_t xid, struct ccp_reply *r)
{
	struct iovec one = { (void *)buf, len };

	return be_ccp_reply_parse(&one, 1, xid, r);
}

/* 1. The call: RFC 5531 call header to 100400 (0x18830)/1/1, AUTH_NONE, then
 * config_rdma_req (draft-08 6.2), 52 bytes exactly. */
static void t01_call_bytes(void **state)
{
	static const uint8_t want[BE_CCP_CALL_LEN] = {
		0x80, 0, 0, 7,  0, 0, 0, 0,  0, 0, 0, 2,  0, 1, 0x88, 0x30,  0, 0, 0, 1,
		0, 0, 0, 1,  0, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0,  0, 0, 0, 0,
		0, 0, 0x10, 0,  0, 0, 0x20, 0,  0, 0, 0, 16,
	};
	struct ccp_req q = { 4096, 8192, 16 };
	uint8_t buf[BE_CCP_CALL_LEN];
	struct rpc_call_hdr ch;
	struct ccp_req back;
	struct xdr_cur xc;
	struct iovec one;

	(void)state;
	assert_int_equal(be_ccp_call_encode(0x80000007, &q, buf), BE_CCP_CALL_LEN);
	assert_memory_equal(buf, want, sizeof(want));
	xdr_cur_init_buf(&xc, &one, buf, sizeof(buf));
	assert_true(rpc_call_decode(&xc, &ch));
	assert_int_equal(ch.rc_prog, CCP_PROG);
	assert_int_equal(ch.rc_vers, CCP_VERS);
	assert_int_equal(ch.rc_proc, CCP_PROC_CONF_RDMA);
	assert_true(xdr_seek(&xc, ch.rc_args_pos));
	assert_true(ccp_req_decode(&xc, &back));
	assert_int_equal(back.cq_maxrdmaread, 16);
	assert_int_equal(xdr_remaining(&xc), 0);
}

/* 2. A SUCCESS answer with config_rdma_reply, also split over two iovecs
 * in the middle of a word. */
static void t02_ok(void **state)
{
	static const uint32_t res[3] = { 2048, 4, 8 };
	uint8_t buf[256];
	size_t len = reply(buf, 77, false, RPC_SUCCESS, res, 3);
	struct ccp_reply r;
	struct iovec two[2] = { { buf, 26 }, { buf + 26, len - 26 } };

	(void)state;
	assert_int_equal(parse(buf, len, 77, &r), BE_CCP_RES_OK);
	assert_int_equal(r.ccr_maxcall_sendsize, 2048);
	assert_int_equal(r.ccr_align, 4);
	assert_int_equal(r.ccr_maxrdmaread, 8);
	memset(&r, 0, sizeof(r));
	assert_int_equal(be_ccp_reply_parse(two, 2, 77, &r), BE_CCP_RES_OK);
	assert_int_equal(r.ccr_maxrdmaread, 8);
}

/* 3. What the Linux nfsd answers (it serves no program 100400), and the
 * other accept stats. */
static void t03_refusals(void **state)
{
	static const uint32_t mm[2] = { 2, 3 };
	uint8_t buf[256];
	struct ccp_reply r;
	size_t len;

	(void)state;
	len = reply(buf, 5, false, RPC_PROG_UNAVAIL, NULL, 0);
	assert_int_equal(parse(buf, len, 5, &r), BE_CCP_RES_PROG_UNAVAIL);
	len = reply(buf, 5, false, RPC_PROG_MISMATCH, mm, 2);
	assert_int_equal(parse(buf, len, 5, &r), BE_CCP_RES_PROG_MISMATCH);
	len = reply(buf, 5, false, RPC_PROC_UNAVAIL, NULL, 0);
	assert_int_equal(parse(buf, len, 5, &r), BE_CCP_RES_REFUSED);
	len = reply(buf, 5, false, RPC_GARBAGE_ARGS, NULL, 0);
	assert_int_equal(parse(buf, len, 5, &r), BE_CCP_RES_REFUSED);
	len = reply(buf, 5, true, 0, NULL, 0);
	assert_int_equal(parse(buf, len, 5, &r), BE_CCP_RES_REFUSED);
}

/* 4. Garbage: SUCCESS without or with wrong-sized results (a server that
 * answers every call "SUCCESS, void"), another XID, a CALL, truncation. */
static void t04_garbage(void **state)
{
	static const uint32_t res[4] = { 2048, 4, 8, 9 };
	uint8_t buf[256];
	struct ccp_reply r;
	size_t len;

	(void)state;
	len = reply(buf, 9, false, RPC_SUCCESS, NULL, 0);
	assert_int_equal(parse(buf, len, 9, &r), BE_CCP_RES_GARBAGE);
	len = reply(buf, 9, false, RPC_SUCCESS, res, 2);
	assert_int_equal(parse(buf, len, 9, &r), BE_CCP_RES_GARBAGE);
	len = reply(buf, 9, false, RPC_SUCCESS, res, 4);
	assert_int_equal(parse(buf, len, 9, &r), BE_CCP_RES_GARBAGE);
	len = reply(buf, 9, false, RPC_SUCCESS, res, 3);
	assert_int_equal(parse(buf, len, 10, &r), BE_CCP_RES_GARBAGE);	/* other xid */
	assert_int_equal(parse(buf, 20, 9, &r), BE_CCP_RES_GARBAGE);	/* cut */
	assert_int_equal(parse(buf, 0, 9, &r), BE_CCP_RES_GARBAGE);
	chk_put_be32(buf + 4, RPC_CALL);
	assert_int_equal(parse(buf, len, 9, &r), BE_CCP_RES_GARBAGE);
}

/* 5. Applying a good answer: lowered to what the server takes, never raised
 * above our send buffers, never below 1 KiB (draft-08 6.1); Read depth the
 * smaller of ours and the server's, 0 kept (no RDMA Read at all). */
static void t05_apply_limits(void **state)
{
	struct ccp_reply r = { 2048, 4, 8 };
	uint32_t send = 0;
	unsigned depth = 99;

	(void)state;
	be_ccp_apply(&r, 4096, 16, &send, &depth);
	assert_int_equal(send, 2048);
	assert_int_equal(depth, 8);
	r = (struct ccp_reply){ 65536, 4, 64 };
	be_ccp_apply(&r, 4096, 16, &send, &depth);
	assert_int_equal(send, 4096);
	assert_int_equal(depth, 16);
	r = (struct ccp_reply){ 512, 4, 0 };
	be_ccp_apply(&r, 4096, 16, &send, &depth);
	assert_int_equal(send, 1024);
	assert_int_equal(depth, 0);
	r = (struct ccp_reply){ 0, 0, 0xffffffffu };
	be_ccp_apply(&r, 8192, 4, &send, &depth);
	assert_int_equal(send, 1024);
	assert_int_equal(depth, 4);
	r = (struct ccp_reply){ 6000, 0, 1 };	/* not a multiple of 1 KiB: taken as is */
	be_ccp_apply(&r, 8192, 4, &send, &depth);
	assert_int_equal(send, 6000);
	assert_int_equal(depth, 1);
}

/* 6. Names used in logs and by rpcrdma-call. */
static void t06_names(void **state)
{
	(void)state;
	assert_string_equal(be_ccp_state_str(BE_CCP_OFF), "off");
	assert_string_equal(be_ccp_state_str(BE_CCP_FALLBACK), "fallback");
	assert_string_equal(be_ccp_state_str((enum be_ccp_state)42), "?");
	assert_string_equal(be_ccp_result_str(BE_CCP_RES_PROG_UNAVAIL), "PROG_UNAVAIL");
	assert_string_equal(be_ccp_result_str(BE_CCP_RES_TIMEOUT), "no answer");
	assert_string_equal(be_ccp_result_str(BE_CCP_RES__COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_call_bytes),
		cmocka_unit_test(t02_ok),
		cmocka_unit_test(t03_refusals),
		cmocka_unit_test(t04_garbage),
		cmocka_unit_test(t05_apply_limits),
		cmocka_unit_test(t06_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
