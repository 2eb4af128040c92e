// SPDX-License-Identifier: MIT
/* Unit tests for the NLM lock-owner map (gateway/nlm_map.c): owners of two
 * client hosts with the same svid stay apart, TEST's holder comes back as
 * its client sent it, and a client's reboot notification releases that
 * client's locks only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "chunking.h"
#include "config.h"
#include "log.h"
#include "nlm_map.h"
#include "pool.h"

#define NLM 100021
#define NSM 100024

/* A message in one buffer, as a record of one iovec (no pool buffer). */
struct msg {
	uint8_t m_buf[512];
	struct xdr_enc m_xe;
	size_t m_args;			/* position of the arguments */
	struct gw_rec m_rec;
};

static void call_hdr(struct msg *m, uint32_t prog, uint32_t vers, uint32_t proc)
{
	xdr_enc_init(&m->m_xe, m->m_buf, sizeof(m->m_buf));
	xdr_put_u32(&m->m_xe, 0x1234);
	xdr_put_u32(&m->m_xe, RPC_CALL);
	xdr_put_u32(&m->m_xe, RPC_VERS);
	xdr_put_u32(&m->m_xe, prog);
	xdr_put_u32(&m->m_xe, vers);
	xdr_put_u32(&m->m_xe, proc);
	xdr_put_u32(&m->m_xe, RPC_AUTH_NONE);
	xdr_put_u32(&m->m_xe, 0);
	xdr_put_u32(&m->m_xe, RPC_AUTH_NONE);
	xdr_put_u32(&m->m_xe, 0);
	m->m_args = m->m_xe.xe_len;
}

static void done(struct msg *m)
{
	assert_int_equal(m->m_xe.xe_err, XDR_OK);
	gw_rec_init(&m->m_rec);
	m->m_rec.rcd_iov[0] = (struct iovec){ m->m_buf, m->m_xe.xe_len };
	m->m_rec.rcd_niov = 1;
	m->m_rec.rcd_len = m->m_xe.xe_len;
}

static void alock(struct msg *m, uint32_t vers, const char *fh, int32_t svid, uint64_t off,
		  uint64_t len)
{
	xdr_put_opaque(&m->m_xe, "guest", 5);
	xdr_put_opaque(&m->m_xe, fh, (uint32_t)strlen(fh));
	xdr_put_opaque(&m->m_xe, "1@guest", 7);
	xdr_put_u32(&m->m_xe, (uint32_t)svid);
	if (vers == 4) {
		xdr_put_u64(&m->m_xe, off);
		xdr_put_u64(&m->m_xe, len);
	} else {
		xdr_put_u32(&m->m_xe, (uint32_t)off);
		xdr_put_u32(&m->m_xe, (uint32_t)len);
	}
}

/* LOCK (2) or TEST (1) or UNLOCK (4) with the owner svid on fh. */
static void nlm_call(struct msg *m, uint32_t vers, uint32_t proc, const char *fh, int32_t svid,
		     uint64_t off, uint64_t len)
{
	call_hdr(m, NLM, vers, proc);
	xdr_put_opaque(&m->m_xe, "ck", 2);
	if (proc == 2 || proc == 3 || proc == 22) {
		xdr_put_u32(&m->m_xe, 0);	/* block */
		xdr_put_u32(&m->m_xe, 1);	/* exclusive */
	} else if (proc == 1) {
		xdr_put_u32(&m->m_xe, 1);
	}
	alock(m, vers, fh, svid, off, len);
	if (proc == 2 || proc == 22) {
		xdr_put_u32(&m->m_xe, 0);	/* reclaim */
		xdr_put_u32(&m->m_xe, 3);	/* state */
	}
	done(m);
}

/* The svid word the call carries now (after the alock's three strings). */
static int32_t svid_of(const struct msg *m, const char *fh)
{
	size_t pos = m->m_args + 8;	/* cookie "ck" */
	uint32_t proc = chk_be32(m->m_buf + 20);

	pos += (proc == 2 || proc == 3 || proc == 22) ? 8 : proc == 1 ? 4 : 0;
	pos += 4 + 8 + 4 + xdr_round4(strlen(fh)) + 4 + 8;
	return (int32_t)chk_be32(m->m_buf + pos);
}

/* A reply: accepted, SUCCESS, cookie, stat, then (TEST DENIED) the holder. */
static size_t reply(uint8_t *buf, size_t cap, uint32_t stat, bool holder, int32_t hsvid)
{
	struct xdr_enc xe;

	xdr_enc_init(&xe, buf, cap);
	xdr_put_u32(&xe, 0x99);
	xdr_put_u32(&xe, RPC_REPLY);
	xdr_put_u32(&xe, RPC_MSG_ACCEPTED);
	xdr_put_u32(&xe, RPC_AUTH_NONE);
	xdr_put_u32(&xe, 0);
	xdr_put_u32(&xe, RPC_SUCCESS);
	xdr_put_opaque(&xe, "ck", 2);
	xdr_put_u32(&xe, stat);
	if (holder) {
		xdr_put_u32(&xe, 1);
		xdr_put_u32(&xe, (uint32_t)hsvid);
		xdr_put_opaque(&xe, "1@guest", 7);
		xdr_put_u64(&xe, 0);
		xdr_put_u64(&xe, 0);
	}
	assert_int_equal(xe.xe_err, XDR_OK);
	return xe.xe_len;
}

/* Forward a call from host and answer it with stat (no holder). */
static int32_t lock_as(struct gw_nlm *nm, const char *host, uint32_t vers, uint32_t proc,
		       const char *fh, int32_t svid, uint64_t off, uint64_t len, uint32_t stat)
{
	struct msg m;
	uint8_t rb[128];
	struct iovec iov;

	nlm_call(&m, vers, proc, fh, svid, off, len);
	assert_int_equal(gw_nlm_on_call(nm, host, NLM, vers, proc, &m.m_rec, m.m_args), GW_NLM_FORWARD);
	iov = (struct iovec){ rb, reply(rb, sizeof(rb), stat, false, 0) };
	gw_nlm_on_reply(nm, host, vers, proc, &m.m_rec, m.m_args, &iov, 1);
	return svid_of(&m, fh);
}

/* What the release sender was given. */
struct sent {
	unsigned st_n;
	bool st_refuse;
	int32_t st_svid[8];
	char st_fh[8][16];
	uint64_t st_off[8], st_len[8];
	uint32_t st_vers[8];
};

static bool capture(void *arg, const uint8_t *msg, size_t len)
{
	struct sent *s = arg;
	struct rpc_call_hdr h;
	struct xdr_cur xc;
	struct iovec one;
	struct xdr_span sp, fh;
	uint32_t svid, o, l;
	uint64_t o64 = 0, l64 = 0;

	if (s->st_refuse)
		return false;
	xdr_cur_init_buf(&xc, &one, msg, len);
	assert_true(rpc_call_decode(&xc, &h));
	assert_int_equal(h.rc_prog, NLM);
	assert_int_equal(h.rc_proc, 4);		/* UNLOCK */
	assert_int_equal(h.rc_cred.oa_flavor, RPC_AUTH_SYS);
	assert_true(xdr_get_opaque(&xc, &sp, 64));	/* cookie */
	assert_true(xdr_get_opaque(&xc, &sp, 64));	/* caller_name */
	assert_true(xdr_get_opaque(&xc, &fh, 64));
	assert_true(xdr_get_opaque(&xc, &sp, 64));	/* oh */
	assert_true(xdr_get_u32(&xc, &svid));
	if (h.rc_vers == 4) {
		assert_true(xdr_get_u64(&xc, &o64) && xdr_get_u64(&xc, &l64));
	} else {
		assert_true(xdr_get_u32(&xc, &o) && xdr_get_u32(&xc, &l));
		o64 = o;
		l64 = l;
	}
	assert_int_equal(xdr_remaining(&xc), 0);
	assert_true(s->st_n < 8);
	s->st_vers[s->st_n] = h.rc_vers;
	s->st_svid[s->st_n] = (int32_t)svid;
	memset(s->st_fh[s->st_n], 0, sizeof(s->st_fh[0]));
	xdr_span_copy(&xc, &fh, s->st_fh[s->st_n], sizeof(s->st_fh[0]) - 1);
	s->st_off[s->st_n] = o64;
	s->st_len[s->st_n++] = l64;
	return true;
}

static enum gw_nlm_act notify(struct gw_nlm *nm, const char *host, bool free_all)
{
	struct msg m;

	call_hdr(&m, free_all ? NLM : NSM, free_all ? 4 : 1, free_all ? 23 : 6);
	xdr_put_opaque(&m.m_xe, host, (uint32_t)strlen(host));
	xdr_put_u32(&m.m_xe, 5);
	done(&m);
	return gw_nlm_on_call(nm, host, free_all ? NLM : NSM, free_all ? 4 : 1, free_all ? 23 : 6,
			      &m.m_rec, m.m_args);
}

static struct gw_stats *stats(void) { return calloc(1, sizeof(struct gw_stats)); }

/* 1. Two hosts, one svid: two owners for the server; the same host keeps
 * its mapping (UNLOCK, retransmission); nothing else in the call moves. */
static void t01_two_hosts_one_svid(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	struct msg a, b, a2, orig;
	int32_t sa, sb;

	(void)state;
	nlm_call(&a, 4, 2, "fh-one", 1, 0, 0);
	orig = a;
	assert_int_equal(gw_nlm_on_call(nm, "127.0.0.2", NLM, 4, 2, &a.m_rec, a.m_args), GW_NLM_FORWARD);
	nlm_call(&b, 4, 2, "fh-one", 1, 0, 0);
	assert_int_equal(gw_nlm_on_call(nm, "127.0.0.3", NLM, 4, 2, &b.m_rec, b.m_args), GW_NLM_FORWARD);
	sa = svid_of(&a, "fh-one");
	sb = svid_of(&b, "fh-one");
	assert_int_not_equal(sa, sb);
	assert_true(sa > 0 && sb > 0);
	assert_int_equal(sa & ((1 << GW_NLM_SVID_BITS) - 1), 1);
	assert_int_equal(sb & ((1 << GW_NLM_SVID_BITS) - 1), 1);
	/* only the svid word changed */
	for (size_t i = 0; i < a.m_xe.xe_len; i++)
		if (a.m_buf[i] != orig.m_buf[i])
			assert_true(i >= a.m_xe.xe_len - 8 - 16 - 4 && i < a.m_xe.xe_len - 8 - 16);
	nlm_call(&a2, 4, 4, "fh-one", 1, 0, 0);
	gw_nlm_on_call(nm, "127.0.0.2", NLM, 4, 4, &a2.m_rec, a2.m_args);
	assert_int_equal(svid_of(&a2, "fh-one"), sa);
	/* TEST and CANCEL carry the owner too; NM_LOCK from v3 on */
	nlm_call(&a2, 4, 1, "fh-one", 1, 0, 0);
	gw_nlm_on_call(nm, "127.0.0.3", NLM, 4, 1, &a2.m_rec, a2.m_args);
	assert_int_equal(svid_of(&a2, "fh-one"), sb);
	nlm_call(&a2, 3, 22, "fh-one", 1, 0, 0);
	gw_nlm_on_call(nm, "127.0.0.3", NLM, 3, 22, &a2.m_rec, a2.m_args);
	assert_int_equal(svid_of(&a2, "fh-one"), sb);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_MAPPED], 5);
	gw_nlm_free(nm);
	free(st);
}

/* 2. NLM TEST DENIED: the holder's svid as its client sent it; a holder
 * the map did not make (a server-side process) is left alone. */
static void t02_test_holder(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	struct msg t;
	uint8_t rb[128];
	struct iovec iov;
	int32_t sa = lock_as(nm, "127.0.0.2", 4, 2, "fh", 7, 0, 0, 0);

	(void)state;
	nlm_call(&t, 4, 1, "fh", 7, 0, 0);
	gw_nlm_on_call(nm, "127.0.0.3", NLM, 4, 1, &t.m_rec, t.m_args);
	iov = (struct iovec){ rb, reply(rb, sizeof(rb), 1, true, sa) };
	gw_nlm_on_reply(nm, "127.0.0.3", 4, 1, &t.m_rec, t.m_args, &iov, 1);
	assert_int_equal((int32_t)chk_be32(rb + 40), 7);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_HOLDER_MAPPED], 1);
	iov = (struct iovec){ rb, reply(rb, sizeof(rb), 1, true, 4321) };
	gw_nlm_on_reply(nm, "127.0.0.3", 4, 1, &t.m_rec, t.m_args, &iov, 1);
	assert_int_equal((int32_t)chk_be32(rb + 40), 4321);
	/* GRANTED (no holder) and a reply split across iovecs */
	iov = (struct iovec){ rb, reply(rb, sizeof(rb), 1, true, sa) };
	{
		struct iovec two[2] = { { rb, 42 }, { rb + 42, iov.iov_len - 42 } };

		gw_nlm_on_reply(nm, "127.0.0.3", 4, 1, &t.m_rec, t.m_args, two, 2);
	}
	assert_int_equal((int32_t)chk_be32(rb + 40), 7);
	gw_nlm_free(nm);
	free(st);
}

/* 3. SM_NOTIFY from A: one UNLOCK of the whole file per lock A holds,
 * none for B; answered by the gateway.  FREE_ALL from B the same for B. */
static void t03_reboot_releases_one_client(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	struct sent s = { 0 };
	int32_t a1, a2, b1;

	(void)state;
	gw_nlm_set_sender(nm, capture, &s);
	a1 = lock_as(nm, "127.0.0.2", 4, 2, "f1", 1, 0, 0, 0);
	a2 = lock_as(nm, "127.0.0.2", 3, 2, "f2", 1, 10, 5, 0);
	lock_as(nm, "127.0.0.2", 4, 2, "f1", 1, 100, 1, 0);	/* same file, same owner: one entry */
	lock_as(nm, "127.0.0.2", 4, 2, "f3", 1, 0, 0, 1);	/* DENIED: not A's */
	b1 = lock_as(nm, "127.0.0.3", 4, 2, "f9", 1, 0, 0, 0);
	assert_int_equal(a1, a2);
	assert_int_equal(gw_nlm_host_locks(nm, "127.0.0.2"), 2);
	assert_int_equal(gw_nlm_host_locks(nm, "127.0.0.3"), 1);
	assert_int_equal(notify(nm, "127.0.0.2", false), GW_NLM_ANSWER);
	assert_int_equal(s.st_n, 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(s.st_svid[i], a1);
		assert_int_equal(s.st_off[i], 0);
		assert_int_equal(s.st_len[i], 0);
	}
	assert_true((strcmp(s.st_fh[0], "f1") == 0 && strcmp(s.st_fh[1], "f2") == 0 && s.st_vers[1] == 3) ||
		    (strcmp(s.st_fh[0], "f2") == 0 && strcmp(s.st_fh[1], "f1") == 0 && s.st_vers[0] == 3));
	assert_int_equal(gw_nlm_host_locks(nm, "127.0.0.2"), 0);
	assert_int_equal(gw_nlm_host_locks(nm, "127.0.0.3"), 1);
	/* a second notification has nothing left to release */
	assert_int_equal(notify(nm, "127.0.0.2", false), GW_NLM_ANSWER);
	assert_int_equal(s.st_n, 2);
	assert_int_equal(notify(nm, "127.0.0.3", true), GW_NLM_ANSWER);
	assert_int_equal(s.st_n, 3);
	assert_int_equal(s.st_svid[2], b1);
	assert_string_equal(s.st_fh[2], "f9");
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_REBOOTS], 3);
	/* other NSM procedures and FREE_ALL in v1 (no such procedure) pass */
	{
		struct msg m;

		call_hdr(&m, NSM, 1, 2);
		done(&m);
		assert_int_equal(gw_nlm_on_call(nm, "127.0.0.2", NSM, 1, 2, &m.m_rec, m.m_args),
				 GW_NLM_FORWARD);
		assert_int_equal(gw_nlm_on_call(nm, "127.0.0.2", NLM, 1, 23, &m.m_rec, m.m_args),
				 GW_NLM_FORWARD);
	}
	gw_nlm_free(nm);
	free(st);
}

/* 4. An UNLOCK of the whole file forgets the lock; of a part keeps it;
 * a release that cannot be sent is counted. */
static void t04_unlock_forgets(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	struct sent s = { .st_refuse = true };

	(void)state;
	gw_nlm_set_sender(nm, capture, &s);
	lock_as(nm, "h", 4, 2, "f1", 3, 0, 0, 0);
	lock_as(nm, "h", 4, 2, "f2", 3, 0, 0, 0);
	lock_as(nm, "h", 4, 4, "f1", 3, 5, 5, 0);		/* part of f1 */
	assert_int_equal(gw_nlm_host_locks(nm, "h"), 2);
	lock_as(nm, "h", 4, 4, "f1", 3, 0, 0, 0);		/* all of f1 */
	assert_int_equal(gw_nlm_host_locks(nm, "h"), 1);
	lock_as(nm, "h", 4, 4, "f2", 3, 0, 0, 1);		/* refused: still held */
	assert_int_equal(gw_nlm_host_locks(nm, "h"), 1);
	assert_int_equal(notify(nm, "h", false), GW_NLM_ANSWER);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_RELEASE_FAILED], 1);
	gw_nlm_free(nm);
	free(st);
}

/* 5. Owners the map cannot carry go unmapped (counted), never garbled:
 * svid above 2^22, negative; truncated arguments are left to the server. */
static void t05_unmappable(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	struct msg m;

	(void)state;
	assert_int_equal(lock_as(nm, "h", 4, 2, "f", 1 << GW_NLM_SVID_BITS, 0, 0, 0),
			 1 << GW_NLM_SVID_BITS);
	assert_int_equal(lock_as(nm, "h", 4, 2, "f", -5, 0, 0, 0), -5);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_UNMAPPED], 2);
	assert_int_equal(gw_nlm_host_locks(nm, "h"), 0);
	nlm_call(&m, 4, 2, "f", 1, 0, 0);
	m.m_rec.rcd_iov[0].iov_len = m.m_rec.rcd_len = m.m_args + 20;
	assert_int_equal(gw_nlm_on_call(nm, "h", NLM, 4, 2, &m.m_rec, m.m_args), GW_NLM_FORWARD);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_MAPPED], 0);
	gw_nlm_free(nm);
	free(st);
}

/* 6. The host table is bounded: a host with no tracked lock is reused,
 * hosts holding locks are not (the newcomer goes unmapped). */
static void t06_hosts_bounded(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	char name[32];
	int32_t first, again;

	(void)state;
	first = lock_as(nm, "host-0", 4, 1, "f", 1, 0, 0, 0);	/* TEST only: nothing tracked */
	for (unsigned i = 1; i < GW_NLM_MAX_HOSTS; i++) {
		snprintf(name, sizeof(name), "host-%u", i);
		lock_as(nm, name, 4, 2, "f", 1, 0, 0, 0);
	}
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_UNMAPPED], 0);
	again = lock_as(nm, "newcomer", 4, 2, "f", 1, 0, 0, 0);	/* takes host-0's slot */
	assert_int_equal(again, first);
	assert_int_equal(lock_as(nm, "late", 4, 2, "f", 1, 0, 0, 0), 1);	/* every slot holds locks */
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_UNMAPPED], 1);
	gw_nlm_free(nm);
	free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t01_two_hosts_one_svid),
		cmocka_unit_test(t02_test_holder),
		cmocka_unit_test(t03_reboot_releases_one_client),
		cmocka_unit_test(t04_unlock_forgets),
		cmocka_unit_test(t05_unmappable),
		cmocka_unit_test(t06_hosts_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
