// SPDX-License-Identifier: MIT
/* Unit tests of the NFSv4.1 backchannel decoders (chunking/nfs_cb.c): the
 * session of a server's CB_COMPOUND (CB_SEQUENCE first), the session a
 * client's CREATE_SESSION or BIND_CONN_TO_SESSION reply binds to the back
 * channel, and the session of a client's SEQUENCE; whole, split across
 * iovecs, truncated, and the cases that must not bind. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "cb_enc.h"
#include "chunking.h"

#define NFS CBE_NFS
#define CB_PROG CBE_CB_PROG

/* ---- 1-3: decoders ---- */

static void t01_parse_cb_call(void **state)
{
	struct chk_cb_msg m;
	struct cbe_buf w;
	struct iovec v;
	uint8_t sid[16];

	(void)state;
	for (unsigned i = 0; i < 16; i++)
		sid[i] = (uint8_t)(0x30 + i);
	/* 1.1 CB_NULL */
	cbe_call(&w, 0x11, CB_PROG, 1, 0);
	v = cbe_io(&w);
	assert_true(chk_cb_parse_call(&v, 1, &m));
	assert_int_equal(m.cm_xid, 0x11);
	assert_int_equal(m.cm_proc, 0);
	assert_false(m.cm_has_sid);
	/* 1.2 CB_COMPOUND v4.1 with CB_SEQUENCE: the session */
	cbe_cb_compound(&w, 0x12, 1, 0x30);
	v = cbe_io(&w);
	assert_true(chk_cb_parse_call(&v, 1, &m));
	assert_int_equal(m.cm_prog, CB_PROG);
	assert_true(m.cm_has_sid);
	assert_memory_equal(m.cm_sid, sid, 16);
	/* 1.3 the same split in odd pieces */
	{
		struct iovec p[3] = { { w.b, 5 }, { w.b + 5, 40 }, { w.b + 45, w.n - 45 } };

		assert_true(chk_cb_parse_call(p, 3, &m));
		assert_true(m.cm_has_sid);
		assert_memory_equal(m.cm_sid, sid, 16);
	}
	/* 1.4 v4.0 callback: no session */
	cbe_cb_compound(&w, 0x13, 0, 0);
	v = cbe_io(&w);
	assert_true(chk_cb_parse_call(&v, 1, &m));
	assert_false(m.cm_has_sid);
	/* 1.5 truncated inside the session ID: no session */
	cbe_cb_compound(&w, 0x14, 1, 0x30);
	v = (struct iovec){ w.b, 40 + 16 + 4 + 8 };
	assert_true(chk_cb_parse_call(&v, 1, &m));
	assert_false(m.cm_has_sid);
	/* 1.6 a REPLY is not a call */
	cbe_reply_ok(&w, 0x15);
	v = cbe_io(&w);
	assert_false(chk_cb_parse_call(&v, 1, &m));
	/* 1.7 four bytes */
	v = (struct iovec){ w.b, 4 };
	assert_false(chk_cb_parse_call(&v, 1, &m));
}

static void t02_parse_bind_reply(void **state)
{
	uint8_t sid[16], want[16];
	struct cbe_buf w;
	struct iovec v;

	(void)state;
	for (unsigned i = 0; i < 16; i++)
		want[i] = (uint8_t)(0x50 + i);
	/* 2.1 CREATE_SESSION with CONN_BACK_CHAN */
	cbe_bind_reply(&w, 1, 43, 0, 0x50, 0x2);
	v = cbe_io(&w);
	assert_true(chk_cb_parse_bind_reply(&v, 1, sid));
	assert_memory_equal(sid, want, 16);
	/* 2.2 CREATE_SESSION without it: the server kept no back channel here */
	cbe_bind_reply(&w, 1, 43, 0, 0x50, 0x1);
	v = cbe_io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.3 CREATE_SESSION failed */
	cbe_bind_reply(&w, 1, 43, 10052, 0x50, 0x2);
	v = cbe_io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.4-2.6 BIND_CONN_TO_SESSION: BOTH and BACK bind, FORE does not */
	cbe_bind_reply(&w, 1, 41, 0, 0x50, 3);
	v = cbe_io(&w);
	assert_true(chk_cb_parse_bind_reply(&v, 1, sid));
	assert_memory_equal(sid, want, 16);
	cbe_bind_reply(&w, 1, 41, 0, 0x50, 2);
	v = cbe_io(&w);
	assert_true(chk_cb_parse_bind_reply(&v, 1, sid));
	cbe_bind_reply(&w, 1, 41, 0, 0x50, 1);
	v = cbe_io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.7 another op (SEQUENCE) */
	cbe_bind_reply(&w, 1, 53, 0, 0x50, 3);
	v = cbe_io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.8 RPC-level error (PROG_UNAVAIL) */
	cbe_bind_reply(&w, 1, 43, 0, 0x50, 0x2);
	chk_put_be32(w.b + 20, 1);
	v = cbe_io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.9 truncated before the flags */
	cbe_bind_reply(&w, 1, 43, 0, 0x50, 0x2);
	v = (struct iovec){ w.b, 24 + 20 + 16 + 4 };
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.10 SEQUENCE then CREATE_SESSION (RFC 8881 18.36.3): the new
	 * session, not the one of SEQUENCE; whole and cut after SEQUENCE */
	cbe_seq_cs_reply(&w, 1, 0x50, 0x2);
	v = cbe_io(&w);
	memset(sid, 0, sizeof(sid));
	assert_true(chk_cb_parse_bind_reply(&v, 1, sid));
	assert_memory_equal(sid, want, 16);
	v = (struct iovec){ w.b, 24 + 12 + 8 + 36 };
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	cbe_seq_cs_reply(&w, 1, 0x50, 0x1);
	v = cbe_io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
}

/* 4: which calls' replies are parsed for a back channel at all */
static void t04_may_bind(void **state)
{
	struct chk_call_walk cw = { .cw_prog = NFS, .cw_vers = 4, .cw_proc = 1, .cw_nops = 1,
				    .cw_nops_listed = 1 };

	(void)state;
	cw.cw_op[0] = CHK_OP_CREATE_SESSION;
	assert_true(chk_cb_may_bind(&cw));
	cw.cw_vers = 3;				/* not an NFSv4 COMPOUND */
	assert_false(chk_cb_may_bind(&cw));
	cw.cw_vers = 4, cw.cw_proc = 0;
	assert_false(chk_cb_may_bind(&cw));
	cw.cw_proc = 1;
	cw.cw_op[0] = CHK_OP_BIND_CONN_TO_SESSION;
	assert_true(chk_cb_may_bind(&cw));
	cw.cw_op[0] = CHK_OP_EXCHANGE_ID;
	assert_false(chk_cb_may_bind(&cw));
	/* SEQUENCE, PUTFH, GETATTR: every ordinary call */
	cw.cw_nops = cw.cw_nops_listed = 3;
	cw.cw_op[0] = CHK_OP_SEQUENCE, cw.cw_op[1] = CHK_OP_PUTFH, cw.cw_op[2] = CHK_OP_GETATTR;
	assert_false(chk_cb_may_bind(&cw));
	/* SEQUENCE, CREATE_SESSION */
	cw.cw_nops = cw.cw_nops_listed = 2;
	cw.cw_op[1] = CHK_OP_CREATE_SESSION;
	assert_true(chk_cb_may_bind(&cw));
	cw.cw_nops_listed = 1;			/* SEQUENCE only */
	assert_false(chk_cb_may_bind(&cw));
	/* no operation read: sealed (krb5p) or undecodable arguments */
	cw.cw_nops_listed = 0;
	cw.cw_noddp = CHK_NODDP_GSS;
	assert_true(chk_cb_may_bind(&cw));
	cw.cw_noddp = CHK_NODDP_NO, cw.cw_nops = 0;	/* an empty COMPOUND */
	assert_false(chk_cb_may_bind(&cw));
}

static void t03_parse_sequence(void **state)
{
	uint8_t sid[16], want[16];
	struct cbe_buf w;
	struct iovec v;

	(void)state;
	for (unsigned i = 0; i < 16; i++)
		want[i] = (uint8_t)(0x70 + i);
	/* 3.1 COMPOUND minor 1: SEQUENCE first */
	cbe_call(&w, 1, NFS, 4, 1);
	cbe_32(&w, 0), cbe_32(&w, 1), cbe_32(&w, 2), cbe_32(&w, 53);
	cbe_sid(&w, 0x70);
	v = cbe_io(&w);
	assert_true(chk_cb_parse_sequence(&v, 1, sid));
	assert_memory_equal(sid, want, 16);
	/* 3.2 minor 0 */
	chk_put_be32(w.b + 44, 0);
	v = cbe_io(&w);
	assert_false(chk_cb_parse_sequence(&v, 1, sid));
	/* 3.3 first op PUTROOTFH */
	chk_put_be32(w.b + 44, 1);
	chk_put_be32(w.b + 52, 24);
	v = cbe_io(&w);
	assert_false(chk_cb_parse_sequence(&v, 1, sid));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_parse_cb_call),
		cmocka_unit_test(t02_parse_bind_reply),
		cmocka_unit_test(t03_parse_sequence),
		cmocka_unit_test(t04_may_bind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
