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
#include <cmocka.h>

#include "chunking.h"

#define NFS 100003u
#define CB_PROG 0x40000000u

/* ---- XDR builders ---- */

struct wb {
	uint8_t b[512];
	size_t n;
};
static void w32(struct wb *w, uint32_t v)
{
	chk_put_be32(w->b + w->n, v);
	w->n += 4;
}
static void wsid(struct wb *w, uint8_t seed)
{
	for (unsigned i = 0; i < 16; i++)
		w->b[w->n++] = (uint8_t)(seed + i);
}
static void wcall(struct wb *w, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc)
{
	w->n = 0;
	w32(w, xid), w32(w, 0), w32(w, 2), w32(w, prog), w32(w, vers), w32(w, proc);
	w32(w, 0), w32(w, 0), w32(w, 0), w32(w, 0);	/* AUTH_NONE cred and verf */
}
static void wreply_ok(struct wb *w, uint32_t xid)
{
	w->n = 0;
	w32(w, xid), w32(w, 1), w32(w, 0), w32(w, 0), w32(w, 0), w32(w, 0);
}
/* CB_COMPOUND: tag "", minorversion, ident, CB_SEQUENCE(sid) + CB_RECALL */
static void wcb_compound(struct wb *w, uint32_t xid, uint32_t minor, uint8_t seed)
{
	wcall(w, xid, CB_PROG, 1, 1);
	w32(w, 0), w32(w, minor), w32(w, 0), w32(w, 2);
	if (minor) {
		w32(w, 11);
		wsid(w, seed);
		w32(w, 1), w32(w, 0), w32(w, 0), w32(w, 0), w32(w, 0);
	}
	w32(w, 4), w32(w, 0);	/* CB_RECALL (args cut short: not decoded) */
}
/* COMPOUND reply with one op: CREATE_SESSION (flags) or BIND_CONN (dir) */
static void wbind_reply(struct wb *w, uint32_t xid, uint32_t op, uint32_t opstatus, uint8_t seed,
			uint32_t flags_or_dir)
{
	wreply_ok(w, xid);
	w32(w, opstatus), w32(w, 0), w32(w, 1), w32(w, op), w32(w, opstatus);
	if (opstatus)
		return;
	wsid(w, seed);
	if (op == 43)
		w32(w, 1);	/* csr_sequence */
	w32(w, flags_or_dir);
	w32(w, 0);
}
static struct iovec io(struct wb *w)
{
	return (struct iovec){ w->b, w->n };
}

/* ---- 1-3: decoders ---- */

static void t01_parse_cb_call(void **state)
{
	struct chk_cb_msg m;
	struct wb w;
	struct iovec v;
	uint8_t sid[16];

	(void)state;
	for (unsigned i = 0; i < 16; i++)
		sid[i] = (uint8_t)(0x30 + i);
	/* 1.1 CB_NULL */
	wcall(&w, 0x11, CB_PROG, 1, 0);
	v = io(&w);
	assert_true(chk_cb_parse_call(&v, 1, &m));
	assert_int_equal(m.cm_xid, 0x11);
	assert_int_equal(m.cm_proc, 0);
	assert_false(m.cm_has_sid);
	/* 1.2 CB_COMPOUND v4.1 with CB_SEQUENCE: the session */
	wcb_compound(&w, 0x12, 1, 0x30);
	v = io(&w);
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
	wcb_compound(&w, 0x13, 0, 0);
	v = io(&w);
	assert_true(chk_cb_parse_call(&v, 1, &m));
	assert_false(m.cm_has_sid);
	/* 1.5 truncated inside the session ID: no session */
	wcb_compound(&w, 0x14, 1, 0x30);
	v = (struct iovec){ w.b, 40 + 16 + 4 + 8 };
	assert_true(chk_cb_parse_call(&v, 1, &m));
	assert_false(m.cm_has_sid);
	/* 1.6 a REPLY is not a call */
	wreply_ok(&w, 0x15);
	v = io(&w);
	assert_false(chk_cb_parse_call(&v, 1, &m));
	/* 1.7 four bytes */
	v = (struct iovec){ w.b, 4 };
	assert_false(chk_cb_parse_call(&v, 1, &m));
}

static void t02_parse_bind_reply(void **state)
{
	uint8_t sid[16], want[16];
	struct wb w;
	struct iovec v;

	(void)state;
	for (unsigned i = 0; i < 16; i++)
		want[i] = (uint8_t)(0x50 + i);
	/* 2.1 CREATE_SESSION with CONN_BACK_CHAN */
	wbind_reply(&w, 1, 43, 0, 0x50, 0x2);
	v = io(&w);
	assert_true(chk_cb_parse_bind_reply(&v, 1, sid));
	assert_memory_equal(sid, want, 16);
	/* 2.2 CREATE_SESSION without it: the server kept no back channel here */
	wbind_reply(&w, 1, 43, 0, 0x50, 0x1);
	v = io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.3 CREATE_SESSION failed */
	wbind_reply(&w, 1, 43, 10052, 0x50, 0x2);
	v = io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.4-2.6 BIND_CONN_TO_SESSION: BOTH and BACK bind, FORE does not */
	wbind_reply(&w, 1, 41, 0, 0x50, 3);
	v = io(&w);
	assert_true(chk_cb_parse_bind_reply(&v, 1, sid));
	assert_memory_equal(sid, want, 16);
	wbind_reply(&w, 1, 41, 0, 0x50, 2);
	v = io(&w);
	assert_true(chk_cb_parse_bind_reply(&v, 1, sid));
	wbind_reply(&w, 1, 41, 0, 0x50, 1);
	v = io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.7 another op (SEQUENCE) */
	wbind_reply(&w, 1, 53, 0, 0x50, 3);
	v = io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.8 RPC-level error (PROG_UNAVAIL) */
	wbind_reply(&w, 1, 43, 0, 0x50, 0x2);
	chk_put_be32(w.b + 20, 1);
	v = io(&w);
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
	/* 2.9 truncated before the flags */
	wbind_reply(&w, 1, 43, 0, 0x50, 0x2);
	v = (struct iovec){ w.b, 24 + 20 + 16 + 4 };
	assert_false(chk_cb_parse_bind_reply(&v, 1, sid));
}

static void t03_parse_sequence(void **state)
{
	uint8_t sid[16], want[16];
	struct wb w;
	struct iovec v;

	(void)state;
	for (unsigned i = 0; i < 16; i++)
		want[i] = (uint8_t)(0x70 + i);
	/* 3.1 COMPOUND minor 1: SEQUENCE first */
	wcall(&w, 1, NFS, 4, 1);
	w32(&w, 0), w32(&w, 1), w32(&w, 2), w32(&w, 53);
	wsid(&w, 0x70);
	v = io(&w);
	assert_true(chk_cb_parse_sequence(&v, 1, sid));
	assert_memory_equal(sid, want, 16);
	/* 3.2 minor 0 */
	chk_put_be32(w.b + 44, 0);
	v = io(&w);
	assert_false(chk_cb_parse_sequence(&v, 1, sid));
	/* 3.3 first op PUTROOTFH */
	chk_put_be32(w.b + 44, 1);
	chk_put_be32(w.b + 52, 24);
	v = io(&w);
	assert_false(chk_cb_parse_sequence(&v, 1, sid));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_parse_cb_call),
		cmocka_unit_test(t02_parse_bind_reply),
		cmocka_unit_test(t03_parse_sequence),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
