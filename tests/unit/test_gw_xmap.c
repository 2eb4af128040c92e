// SPDX-License-Identifier: MIT
/* Unit tests for the XID map (gateway/xmap.c) and the call state machine
 * (gateway/call.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "call.h"
#include "chunking.h"
#include "client.h"
#include "log.h"
#include "pool.h"
#include "xmap.h"

static struct gw_call *fake(uintptr_t n) { return (struct gw_call *)(n * 64); }

/* 1. A retransmission (same client, same XID) finds the original's gateway
 * XID while in flight and after it was answered, until the window ends. */
static void t01_retransmission(void **state)
{
	struct gw_xmap *m = gw_xmap_new(16, 1000);
	struct gw_xent *a, *f;
	enum gw_xevict ev;

	(void)state;
	a = gw_xmap_add(m, 7, 7, 0xabc, fake(1), 0, &ev);
	assert_non_null(a);
	assert_false(ev);
	assert_int_equal(a->xn_gxid, 1000);
	f = gw_xmap_find(m, 7, 0xabc, 10);
	assert_ptr_equal(f, a);
	assert_ptr_equal(f->xn_call, fake(1));			/* in flight */
	assert_ptr_equal(gw_xmap_by_gxid(m, 1000), a);
	gw_xmap_settle(m, a, 100, 50);
	f = gw_xmap_find(m, 7, 0xabc, 149);
	assert_ptr_equal(f, a);
	assert_null(f->xn_call);				/* answered */
	gw_xmap_attach(m, f, fake(2));				/* resent: same gxid */
	assert_int_equal(f->xn_gxid, 1000);
	gw_xmap_settle(m, f, 200, 50);
	assert_null(gw_xmap_find(m, 7, 0xabc, 250));		/* expired */
	assert_null(gw_xmap_by_gxid(m, 1000));
	assert_int_equal(gw_xmap_count(m), 0);
	gw_xmap_free(m);
}

/* 2. Same client XID from two clients: two gateway XIDs; table of keys. */
static void t02_uniqueness(void **state)
{
	static const struct { uint64_t client; uint32_t cxid; } k[] = {
		/* 1 */ { 1, 5 }, /* 2 */ { 2, 5 }, /* 3 */ { 1, 6 }, /* 4 */ { 3, 5 },
		/* 5 */ { 0, 0 }, /* 6 */ { UINT64_MAX, UINT32_MAX },
	};
	struct gw_xmap *m = gw_xmap_new(8, UINT32_MAX - 2);	/* wraps */
	struct gw_xent *e[6];
	enum gw_xevict ev;

	(void)state;
	for (unsigned i = 0; i < 6; i++) {
		e[i] = gw_xmap_add(m, k[i].client, k[i].client, k[i].cxid, fake(i + 1), 0, &ev);
		assert_non_null(e[i]);
		for (unsigned j = 0; j < i; j++)
			assert_int_not_equal(e[i]->xn_gxid, e[j]->xn_gxid);
	}
	for (unsigned i = 0; i < 6; i++) {
		assert_ptr_equal(gw_xmap_find(m, k[i].client, k[i].cxid, 0), e[i]);
		assert_ptr_equal(gw_xmap_by_gxid(m, e[i]->xn_gxid), e[i]);
	}
	gw_xmap_free(m);
}

/* 3. Full map: the oldest settled entry is evicted; with all in flight,
 * add fails; gateway XIDs still mapped are skipped. */
static void t03_full(void **state)
{
	struct gw_xmap *m = gw_xmap_new(3, 10);
	struct gw_xent *a, *b, *c, *d;
	enum gw_xevict ev;

	(void)state;
	a = gw_xmap_add(m, 1, 1, 1, fake(1), 0, &ev);
	b = gw_xmap_add(m, 1, 1, 2, fake(2), 0, &ev);
	c = gw_xmap_add(m, 1, 1, 3, fake(3), 0, &ev);
	assert_null(gw_xmap_add(m, 1, 1, 4, fake(4), 0, &ev));
	gw_xmap_settle(m, b, 0, 1000);
	gw_xmap_settle(m, a, 0, 1000);
	d = gw_xmap_add(m, 1, 1, 4, fake(4), 1, &ev);
	assert_non_null(d);
	assert_true(ev);
	assert_null(gw_xmap_find(m, 1, 2, 1));		/* b was oldest settled */
	assert_non_null(gw_xmap_find(m, 1, 1, 1));
	assert_int_equal(d->xn_gxid, 13);
	(void)c;
	gw_xmap_free(m);

	m = gw_xmap_new(4, 5);
	a = gw_xmap_add(m, 1, 1, 1, fake(1), 0, &ev);	/* gxid 5 */
	b = gw_xmap_add(m, 1, 1, 2, fake(2), 0, &ev);	/* gxid 6 */
	gw_xmap_remove(m, a);
	assert_int_equal(gw_xmap_count(m), 1);
	gw_xmap_free(m);
}

/* 4. Call state machine: every pair of the table, legal ones accepted,
 * illegal ones refused with a counter. */
static void t04_transitions(void **state)
{
	static const char legal[GW_CALL__COUNT][GW_CALL__COUNT + 1] = {
		/*            F N H S R D X */
		[GW_CALL_FREE]    = "0100000",
		[GW_CALL_NEW]     = "0011111",
		[GW_CALL_HELD]    = "0001011",
		[GW_CALL_SENT]    = "0010110",
		[GW_CALL_REPLIED] = "0000010",
		[GW_CALL_DONE]    = "1000000",
		[GW_CALL_XWAIT]   = "0011010",
	};
	struct gw_stats st = { 0 };
	struct gw_log lg = { .gl_level = -1 };	/* quiet */
	struct gw_pool *p = gw_pool_new(4096, 4, false);
	struct gw_call_pool *cp = gw_call_pool_new(2, p, &st, &lg);
	struct gw_call *c = gw_call_new(cp, NULL);
	unsigned illegal = 0;

	(void)state;
	assert_non_null(c);
	for (int from = 0; from < GW_CALL__COUNT; from++)
		for (int to = 0; to < GW_CALL__COUNT; to++) {
			bool ok = legal[from][to] == '1';
			int rc;

			assert_int_equal(gw_call_transition_ok(from, to), ok);
			c->ca_state = from;	/* test only: place the call */
			c->ca_refs = to == GW_CALL_FREE ? 0 : 1;
			rc = gw_call_set_state(c, to);
			if (ok) {
				assert_int_equal(rc, 0);
				assert_int_equal(c->ca_state, to);
			} else {
				assert_int_equal(rc, -EINVAL);
				assert_int_equal(c->ca_state, from);
				illegal++;
			}
		}
	assert_int_equal(st.gs_ctr[GW_CTR_ILLEGAL_TRANSITION], illegal);
	/* DONE -> FREE with a reference left is refused too. */
	c->ca_state = GW_CALL_DONE;
	c->ca_refs = 1;
	assert_int_equal(gw_call_set_state(c, GW_CALL_FREE), -EINVAL);
	c->ca_state = GW_CALL_NEW;
	assert_string_equal(gw_call_state_str(GW_CALL_HELD), "HELD");
	/* leave it allocated: the pool frees the array */
	gw_call_pool_free(cp);
	gw_pool_free(p);
}

/* 6. RPCSEC_GSS: an entry under the client's own XID, refused while that
 * XID is mapped (in flight or in its window); fresh gateway XIDs skip it. */
static void t06_add_as(void **state)
{
	struct gw_xmap *m = gw_xmap_new(16, 500);
	struct gw_xent *a, *b, *f;
	enum gw_xevict ev;

	(void)state;
	a = gw_xmap_add_as(m, 1, 1, 501, fake(1), 0, &ev);
	assert_non_null(a);
	assert_int_equal(a->xn_gxid, 501);
	assert_true(gw_xmap_gxid_busy(m, 501, 0));
	assert_null(gw_xmap_add_as(m, 2, 2, 501, fake(2), 0, &ev));	/* another client: busy */
	f = gw_xmap_add(m, 3, 3, 7, fake(3), 0, &ev);			/* counter: 500 */
	b = gw_xmap_add(m, 3, 3, 8, fake(4), 0, &ev);			/* 501 is taken: 502 */
	assert_int_equal(f->xn_gxid, 500);
	assert_int_equal(b->xn_gxid, 502);
	gw_xmap_settle(m, a, 10, 100);
	assert_true(gw_xmap_gxid_busy(m, 501, 109));			/* DRC window */
	assert_false(gw_xmap_gxid_busy(m, 501, 110));
	a = gw_xmap_add_as(m, 2, 2, 501, fake(2), 110, &ev);
	assert_non_null(a);
	assert_ptr_equal(gw_xmap_find(m, 2, 501, 110), a);
	assert_null(gw_xmap_find(m, 1, 501, 110));
	gw_xmap_free(m);
}

/* 5. Two owners: the call recycles (with its record's buffers) only on the
 * last put, and only once DONE. */
static void t05_refcount(void **state)
{
	struct gw_stats st = { 0 };
	struct gw_log lg = { .gl_level = -1 };
	struct gw_pool *p = gw_pool_new(4096, 4, false);
	struct gw_call_pool *cp = gw_call_pool_new(1, p, &st, &lg);
	struct gw_call *c = gw_call_new(cp, NULL);
	struct gw_buf *b = gw_buf_get(p);
	struct iovec iov[4];

	(void)state;
	assert_null(gw_call_new(cp, NULL));
	c->ca_rec.rcd_iov[0] = (struct iovec){ b->gb_data, 100 };
	c->ca_rec.rcd_buf[0] = b;	/* the record takes our reference */
	c->ca_rec.rcd_niov = 1;
	c->ca_rec.rcd_len = 100;
	gw_call_get(c);			/* transport */
	assert_int_equal(gw_call_set_state(c, GW_CALL_SENT), 0);
	assert_int_equal(gw_call_set_state(c, GW_CALL_REPLIED), 0);
	gw_out_set(&c->ca_out, c->ca_rec.rcd_iov, 1, 0x1234);
	assert_int_equal(gw_out_iov(&c->ca_out, iov, 4), 2);
	assert_int_equal(iov[0].iov_len, 8);
	assert_int_equal(iov[1].iov_len, 96);
	assert_int_equal(gw_out_bytes(&c->ca_out), 104);
	assert_int_equal(gw_call_set_state(c, GW_CALL_DONE), 0);
	gw_call_put(c);
	assert_int_equal(gw_call_pool_avail(cp), 0);
	assert_int_equal(gw_pool_avail(p), 3);
	gw_call_put(c);
	assert_int_equal(gw_call_pool_avail(cp), 1);
	assert_int_equal(gw_pool_avail(p), 4);
	assert_int_equal(st.gs_ctr[GW_CTR_ILLEGAL_TRANSITION], 0);
	gw_call_pool_free(cp);
	gw_pool_free(p);
}

/* 7. A call object back from the pool carries nothing of its last call
 * that a reply path reads before the new call sets it (a local reply
 * finalizes on ca_path, ca_xent, ca_tp_owned; the RDMA reply reads ca_gss). */
static void t07_reuse_clean(void **state)
{
	struct gw_stats st = { 0 };
	struct gw_log lg = { .gl_level = -1 };
	struct gw_pool *p = gw_pool_new(4096, 4, false);
	struct gw_call_pool *cp = gw_call_pool_new(1, p, &st, &lg);
	struct gw_call *c = gw_call_new(cp, NULL), *d;
	static uint8_t junk[8];
	struct iovec iov = { junk, sizeof(junk) };

	(void)state;
	c->ca_cl = (struct gw_client *)junk;
	c->ca_path = (struct gw_path *)junk;
	c->ca_xent = (struct gw_xent *)junk;
	c->ca_cxid = c->ca_gxid = 0x5a5a5a5a;
	c->ca_gss = 2;
	c->ca_client = c->ca_owner = c->ca_start_ms = c->ca_start_us = 77;
	c->ca_sent_ms = c->ca_sent_us = 77;
	c->ca_tp_owned = true;
	c->ca_bytes = 77;
	c->ca_tp_priv = junk;
	gw_out_set(&c->ca_out, &iov, 1, 0x1234);
	assert_int_equal(gw_call_set_state(c, GW_CALL_SENT), 0);
	assert_int_equal(gw_call_set_state(c, GW_CALL_REPLIED), 0);
	assert_int_equal(gw_call_set_state(c, GW_CALL_DONE), 0);
	gw_call_put(c);

	d = gw_call_new(cp, NULL);
	assert_ptr_equal(d, c);		/* the same object, reused */
	assert_int_equal(d->ca_state, GW_CALL_NEW);
	assert_int_equal(d->ca_refs, 1);
	assert_null(d->ca_cl);
	assert_null(d->ca_path);
	assert_null(d->ca_xent);
	assert_int_equal(d->ca_cxid, 0);
	assert_int_equal(d->ca_gxid, 0);
	assert_int_equal(d->ca_gss, 0);
	assert_int_equal(d->ca_client, 0);
	assert_int_equal(d->ca_owner, 0);
	assert_int_equal(d->ca_start_ms + d->ca_start_us + d->ca_sent_ms + d->ca_sent_us, 0);
	assert_false(d->ca_tp_owned);
	assert_int_equal(d->ca_bytes, 0);
	assert_null(d->ca_tp_priv);
	assert_int_equal(gw_out_bytes(&d->ca_out), 0);
	assert_int_equal(d->ca_rec.rcd_niov, 0);
	assert_int_equal(d->ca_reply_rec.rcd_niov, 0);
	assert_int_equal(st.gs_ctr[GW_CTR_ILLEGAL_TRANSITION], 0);
	assert_int_equal(gw_call_set_state(d, GW_CALL_DONE), 0);
	gw_call_put(d);
	gw_call_pool_free(cp);
	gw_pool_free(p);
}

/* 8. The SENT list (call_timeout reads its head only): entry order, a
 * re-send goes to the tail, leaving SENT leaves the list. */
static void t08_sent_order(void **state)
{
	struct gw_stats st = { 0 };
	struct gw_log lg = { .gl_level = -1 };
	struct gw_pool *p = gw_pool_new(4096, 4, false);
	struct gw_call_pool *cp = gw_call_pool_new(3, p, &st, &lg);
	struct gw_call *a = gw_call_new(cp, NULL), *b = gw_call_new(cp, NULL);
	struct gw_call *c = gw_call_new(cp, NULL);

	(void)state;
	assert_null(gw_call_pool_oldest_sent(cp));
	assert_int_equal(gw_call_set_state(a, GW_CALL_SENT), 0);
	assert_int_equal(gw_call_set_state(b, GW_CALL_SENT), 0);
	assert_int_equal(gw_call_set_state(c, GW_CALL_HELD), 0);
	assert_ptr_equal(gw_call_pool_oldest_sent(cp), a);
	assert_int_equal(gw_call_set_state(a, GW_CALL_HELD), 0);	/* handed back */
	assert_ptr_equal(gw_call_pool_oldest_sent(cp), b);
	assert_int_equal(gw_call_set_state(c, GW_CALL_SENT), 0);
	assert_int_equal(gw_call_set_state(a, GW_CALL_SENT), 0);	/* re-sent: the tail */
	assert_int_equal(gw_call_set_state(b, GW_CALL_REPLIED), 0);
	assert_ptr_equal(gw_call_pool_oldest_sent(cp), c);
	assert_int_equal(gw_call_set_state(c, GW_CALL_DONE), 0);
	assert_ptr_equal(gw_call_pool_oldest_sent(cp), a);
	/* a refused change leaves the list alone */
	assert_int_equal(gw_call_set_state(a, GW_CALL_FREE), -EINVAL);
	assert_ptr_equal(gw_call_pool_oldest_sent(cp), a);
	assert_int_equal(gw_call_set_state(a, GW_CALL_DONE), 0);
	assert_null(gw_call_pool_oldest_sent(cp));
	assert_int_equal(gw_call_set_state(b, GW_CALL_DONE), 0);
	gw_call_put(a);
	gw_call_put(b);
	gw_call_put(c);
	assert_int_equal(gw_call_pool_avail(cp), 3);
	gw_call_pool_free(cp);
	gw_pool_free(p);
}

/* 9. Which answered calls keep their mapping: a table over the programs,
 * versions and procedures, and NFSv4 COMPOUNDs by their operations. */
static void t09_keeps_answered(void **state)
{
	enum { SEQ = CHK_OP_SEQUENCE, PFH = CHK_OP_PUTFH, GA = CHK_OP_GETATTR };
	static const struct {
		uint32_t prog, vers, proc, minor, nops;	/* nops: announced (0: as listed) */
		uint16_t op[4];				/* listed, up to the first 0 */
		bool keep;
	} k[] = {
		{ CHK_PROG_NFS, 3, 0, 0, 0, { 0 }, false },		/* NULL */
		{ CHK_PROG_NFS, 3, 1, 0, 0, { 0 }, false },		/* GETATTR */
		{ CHK_PROG_NFS, 3, 2, 0, 0, { 0 }, true },		/* SETATTR */
		{ CHK_PROG_NFS, 3, 6, 0, 0, { 0 }, false },		/* READ */
		{ CHK_PROG_NFS, 3, 7, 0, 0, { 0 }, true },		/* WRITE */
		{ CHK_PROG_NFS, 3, 8, 0, 0, { 0 }, true },		/* CREATE */
		{ CHK_PROG_NFS, 3, 14, 0, 0, { 0 }, true },		/* RENAME */
		{ CHK_PROG_NFS, 3, 15, 0, 0, { 0 }, true },		/* LINK */
		{ CHK_PROG_NFS, 3, 17, 0, 0, { 0 }, false },		/* READDIRPLUS */
		{ CHK_PROG_NFS, 3, 20, 0, 0, { 0 }, false },		/* PATHCONF */
		{ CHK_PROG_NFS, 3, 21, 0, 0, { 0 }, false },		/* COMMIT */
		{ CHK_PROG_NFS, 3, 22, 0, 0, { 0 }, true },		/* unknown */
		{ CHK_PROG_NFS, 3, 0xffffffffu, 0, 0, { 0 }, true },
		{ CHK_PROG_NFS, 2, 7, 0, 0, { 0 }, false },		/* WRITECACHE */
		{ CHK_PROG_NFS, 2, 8, 0, 0, { 0 }, true },		/* WRITE */
		{ CHK_PROG_NFS, 2, 17, 0, 0, { 0 }, false },		/* STATFS */
		{ CHK_PROG_NFS, 2, 18, 0, 0, { 0 }, true },		/* unknown */
		{ CHK_PROG_NFS, 4, 0, 0, 0, { 0 }, false },		/* NULL */
		{ CHK_PROG_NFS, 4, 1, 1, 0, { SEQ, PFH, CHK_OP_WRITE }, false },
		{ CHK_PROG_NFS, 4, 1, 2, 0, { SEQ, PFH, CHK_OP_REMOVE }, false },
		{ CHK_PROG_NFS, 4, 1, 0, 0, { SEQ, PFH }, true },	/* no slots in 4.0 */
		{ CHK_PROG_NFS, 4, 1, 1, 0, { CHK_OP_EXCHANGE_ID }, true },	/* no slot */
		{ CHK_PROG_NFS, 4, 1, 1, 0, { 0 }, true },		/* nothing read (krb5p) */
		{ CHK_PROG_NFS, 4, 2, 1, 0, { SEQ, PFH }, true },	/* no such procedure */
		/* NFSv4.0: kept unless every operation changes nothing */
		{ CHK_PROG_NFS, 4, 1, 0, 0, { PFH, GA }, false },
		{ CHK_PROG_NFS, 4, 1, 0, 0, { PFH, CHK_OP_READ, GA }, false },
		{ CHK_PROG_NFS, 4, 1, 0, 0, { CHK_OP_PUTROOTFH, CHK_OP_LOOKUP, CHK_OP_GETFH, GA },
		  false },
		{ CHK_PROG_NFS, 4, 1, 0, 0, { CHK_OP_RENEW }, false },
		{ CHK_PROG_NFS, 4, 1, 0, 0, { PFH, CHK_OP_OPEN, GA }, true },
		{ CHK_PROG_NFS, 4, 1, 0, 0, { PFH, CHK_OP_WRITE }, true },
		{ CHK_PROG_NFS, 4, 1, 0, 0, { PFH, CHK_OP_LOCKT }, true },
		{ CHK_PROG_NFS, 4, 1, 0, 0, { PFH, CHK_OP_OPENATTR }, true },
		{ CHK_PROG_NFS, 4, 1, 0, 0, { CHK_OP_SETCLIENTID }, true },
		{ CHK_PROG_NFS, 4, 1, 0, 0, { PFH, 0xffff }, true },	/* unknown operation */
		{ CHK_PROG_NFS, 4, 1, 0, 3, { PFH, GA }, true },	/* not all listed */
		{ CHK_PROG_NFSACL, 3, 1, 0, 0, { 0 }, false },		/* GETACL */
		{ CHK_PROG_NFSACL, 3, 2, 0, 0, { 0 }, true },		/* SETACL */
		{ CHK_PROG_NLM, 4, 2, 0, 0, { 0 }, true },		/* LOCK */
		{ CHK_PROG_NLM, 4, 0, 0, 0, { 0 }, false },		/* NULL */
		{ CHK_PROG_MOUNT, 3, 1, 0, 0, { 0 }, true },		/* MNT */
		{ CHK_PROG_MOUNT, 3, 5, 0, 0, { 0 }, true },		/* EXPORT */
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
		struct chk_call_walk cw = { .cw_minor = k[i].minor };

		while (cw.cw_nops_listed < 4 && k[i].op[cw.cw_nops_listed])
			cw.cw_op[cw.cw_nops_listed] = k[i].op[cw.cw_nops_listed], cw.cw_nops_listed++;
		cw.cw_nops = k[i].nops ? k[i].nops : cw.cw_nops_listed;
		if (gw_xmap_keeps_answered(k[i].prog, k[i].vers, k[i].proc, &cw) != k[i].keep)
			fail_msg("row %u: prog %u vers %u proc %u: keeps %d", i + 1, k[i].prog,
				 k[i].vers, k[i].proc, !k[i].keep);
	}
	assert_true(gw_xmap_keeps_answered(CHK_PROG_NFS, 4, 1, NULL));
}

/* 10. Shares (item: one client's burst cannot flush another's): with the
 * map full, a source at its share evicts its own oldest answered entry,
 * so 500 answered SETATTR-like calls of source A leave every entry of
 * source V; A keeps its newest ones. */
static void t10_share_own(void **state)
{
	struct gw_xmap *m = gw_xmap_new(100, 1);
	struct gw_xent *xe;
	enum gw_xevict ev;
	unsigned own = 0;

	(void)state;
	for (uint32_t x = 0; x < 5; x++) {		/* V: 5 answered calls */
		xe = gw_xmap_add(m, 0x71, 0x7, x, fake(1), 0, &ev);
		gw_xmap_settle(m, xe, 0, 60000);
	}
	for (uint32_t x = 0; x < 500; x++) {		/* A: a burst, each answered */
		xe = gw_xmap_add(m, 0xa1, 0xa, 1000 + x, fake(2), x, &ev);
		assert_non_null(xe);
		assert_int_not_equal(ev, GW_XEVICT_LARGEST);
		own += ev == GW_XEVICT_OWN;
		gw_xmap_settle(m, xe, x, 60000);
	}
	assert_int_equal(own, 500 - 95);		/* past capacity: every add evicted its own */
	assert_int_equal(gw_xmap_count(m), 100);
	assert_int_equal(gw_xmap_nsrc(m), 2);
	assert_int_equal(gw_xmap_src_count(m, 0x7), 5);
	assert_int_equal(gw_xmap_src_count(m, 0xa), 95);
	for (uint32_t x = 0; x < 5; x++)
		assert_non_null(gw_xmap_find(m, 0x71, x, 500));
	assert_null(gw_xmap_find(m, 0xa1, 1000 + 404, 500));	/* A's oldest went */
	assert_non_null(gw_xmap_find(m, 0xa1, 1000 + 405, 500));
	assert_non_null(gw_xmap_find(m, 0xa1, 1000 + 499, 500));
	gw_xmap_free(m);
}

/* 11. A source under its share takes from the one holding the most
 * answered entries (its oldest); the held entries of a third, small
 * source stay; in-flight entries are never evicted, and with nothing
 * answered a full map refuses. */
static void t11_share_largest(void **state)
{
	struct gw_xmap *m = gw_xmap_new(12, 1);
	struct gw_xent *a[8], *xe;
	enum gw_xevict ev;

	(void)state;
	for (uint32_t x = 0; x < 8; x++) {		/* A: 8 answered */
		a[x] = gw_xmap_add(m, 1, 0xa, x, fake(1), 0, &ev);
		gw_xmap_settle(m, a[x], x, 1000);
	}
	for (uint32_t x = 0; x < 3; x++) {		/* B: 3 answered, older than A's last */
		xe = gw_xmap_add(m, 2, 0xb, x, fake(2), 0, &ev);
		gw_xmap_settle(m, xe, 0, 1000);
	}
	xe = gw_xmap_add(m, 3, 0xc, 0, fake(3), 10, &ev);	/* C: the 12th, free */
	assert_int_equal(ev, GW_XEVICT_NONE);
	xe = gw_xmap_add(m, 3, 0xc, 1, fake(3), 10, &ev);	/* full: C under 12/3 */
	assert_non_null(xe);
	assert_int_equal(ev, GW_XEVICT_LARGEST);
	assert_null(gw_xmap_find(m, 1, 0, 10));			/* A's oldest */
	assert_int_equal(gw_xmap_src_count(m, 0xb), 3);
	xe = gw_xmap_add(m, 1, 0xa, 100, fake(1), 10, &ev);	/* A: 7 >= 12/3: its own */
	assert_int_equal(ev, GW_XEVICT_OWN);
	assert_null(gw_xmap_find(m, 1, 1, 10));
	assert_int_equal(gw_xmap_src_count(m, 0xa), 7);
	gw_xmap_free(m);

	m = gw_xmap_new(4, 1);					/* all in flight */
	for (uint32_t x = 0; x < 4; x++)
		assert_non_null(gw_xmap_add(m, 1, 0xa, x, fake(1), 0, &ev));
	assert_null(gw_xmap_add(m, 2, 0xb, 0, fake(2), 0, &ev));
	assert_int_equal(ev, GW_XEVICT_NONE);
	assert_null(gw_xmap_add_as(m, 2, 0xb, 77, fake(2), 0, &ev));
	assert_int_equal(gw_xmap_nsrc(m), 1);
	gw_xmap_free(m);
}

/* 12. At and past capacity with many sources: 64 entries, then 2,000
 * sources of one answered call each, then a mixed run (retransmissions
 * taking entries back, removals, expiry): the map never holds more than
 * its capacity or more sources than entries, and empties to nothing. */
static void t12_many_sources(void **state)
{
	struct gw_xmap *m = gw_xmap_new(64, 1);
	struct gw_xent *xe;
	enum gw_xevict ev;

	(void)state;
	for (uint64_t src = 1; src <= 2064; src++) {
		xe = gw_xmap_add(m, src, src, 5, fake(src), src, &ev);
		assert_non_null(xe);
		assert_true(src <= 64 ? ev == GW_XEVICT_NONE : ev == GW_XEVICT_LARGEST);
		gw_xmap_settle(m, xe, src, 100000);
		assert_true(gw_xmap_count(m) <= 64 && gw_xmap_nsrc(m) <= gw_xmap_count(m));
	}
	assert_int_equal(gw_xmap_nsrc(m), 64);
	for (unsigned i = 0; i < 5000; i++) {
		uint64_t src = 2000 + i % 97;
		uint32_t cxid = i % 13;

		xe = gw_xmap_find(m, src, cxid, 3000 + i);
		if (xe && !xe->xn_call && i % 3 == 0)
			gw_xmap_attach(m, xe, fake(i + 1));	/* a retransmission */
		else if (xe && i % 5 == 0)
			gw_xmap_remove(m, xe);
		else if (xe && xe->xn_call)
			gw_xmap_settle(m, xe, 3000 + i, 50);
		else if (!xe && (xe = gw_xmap_add(m, src, src, cxid, fake(i + 1), 3000 + i, &ev)))
			gw_xmap_settle(m, xe, 3000 + i, i % 7 ? 50 : 100000);
		assert_true(gw_xmap_count(m) <= 64 && gw_xmap_nsrc(m) <= gw_xmap_count(m));
	}
	gw_xmap_expire(m, 1u << 30);
	for (uint32_t g = 1; g < 10000; g++)	/* gateway XIDs given: 1 to about 7,100 */
		if ((xe = gw_xmap_by_gxid(m, g)))
			gw_xmap_remove(m, xe);	/* the ones in flight, and the long windows */
	assert_int_equal(gw_xmap_count(m), 0);
	assert_int_equal(gw_xmap_nsrc(m), 0);
	gw_xmap_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_retransmission),
		cmocka_unit_test(t02_uniqueness),
		cmocka_unit_test(t03_full),
		cmocka_unit_test(t04_transitions),
		cmocka_unit_test(t05_refcount),
		cmocka_unit_test(t06_add_as),
		cmocka_unit_test(t07_reuse_clean),
		cmocka_unit_test(t08_sent_order),
		cmocka_unit_test(t09_keeps_answered),
		cmocka_unit_test(t10_share_own),
		cmocka_unit_test(t11_share_largest),
		cmocka_unit_test(t12_many_sources),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
