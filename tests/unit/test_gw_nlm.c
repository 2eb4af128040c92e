// SPDX-License-Identifier: MIT
/* Unit tests for the NLM lock-owner map (gateway/nlm_map.c, nlm_host.c):
 * owners of two client hosts with the same svid stay apart, TEST's holder
 * comes back as its client sent it, and a client's reboot notification
 * releases that client's locks only; the same for SHARE owners
 * (gateway/nlm_share.c); owners the map cannot carry, hosts past the
 * table's bounds and caller_names that are no host names are refused. */
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
#include "nlm_int.h"
#include "nlm_map.h"
#include "nlm_share.h"
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
	rpc_call_encode(&m->m_xe, 0x1234, prog, vers, proc, NULL);
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
	uint32_t p = proc >= 6 && proc <= 9 ? proc - 5 : proc;	/* a _MSG: its call's args */

	call_hdr(m, NLM, vers, proc);
	xdr_put_opaque(&m->m_xe, "ck", 2);
	if (p == 2 || p == 3 || p == 22) {
		xdr_put_u32(&m->m_xe, 0);	/* block */
		xdr_put_u32(&m->m_xe, 1);	/* exclusive */
	} else if (p == 1) {
		xdr_put_u32(&m->m_xe, 1);
	}
	alock(m, vers, fh, svid, off, len);
	if (p == 2 || p == 22) {
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

	proc = proc >= 6 && proc <= 9 ? proc - 5 : proc;
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

static bool count_sent(void *arg, const uint8_t *msg, size_t len)
{
	(void)msg;
	(void)len;
	++*(unsigned *)arg;
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
	/* NSM NULL and FREE_ALL in v1 (no such procedure) pass; the other NSM
	 * procedures (SM_STAT .. SM_SIMU_CRASH) are a host's own statd's */
	{
		struct msg m;

		call_hdr(&m, NSM, 1, 0);
		done(&m);
		assert_int_equal(gw_nlm_on_call(nm, "127.0.0.2", NSM, 1, 0, &m.m_rec, m.m_args),
				 GW_NLM_FORWARD);
		assert_int_equal(gw_nlm_on_call(nm, "127.0.0.2", NLM, 1, 23, &m.m_rec, m.m_args),
				 GW_NLM_FORWARD);
		for (uint32_t p = 1; p <= 5; p++)
			assert_int_equal(gw_nlm_on_call(nm, "127.0.0.2", NSM, 1, p, &m.m_rec, m.m_args),
					 GW_NLM_PROC_UNAVAIL);
		assert_int_equal(st->gs_ctr[GW_CTR_NLM_NSM_REFUSED], 5);
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

/* An NLM call from host, its act; the svid word it carries then. */
static enum gw_nlm_act call_as(struct gw_nlm *nm, const char *host, uint32_t vers, uint32_t proc,
			       const char *fh, int32_t svid, int32_t *sent)
{
	struct msg m;
	enum gw_nlm_act act;

	nlm_call(&m, vers, proc, fh, svid, 0, 0);
	act = gw_nlm_on_call(nm, host, NLM, vers, proc, &m.m_rec, m.m_args);
	if (sent)
		*sent = svid_of(&m, fh);
	return act;
}

/* 5. Owners the map cannot carry are refused (DENIED_NOLOCKS), never sent:
 * an svid of 2^22 or more - another client's svid' among them, the attack
 * of a client that UNLOCKs every svid' - or negative; arguments that do
 * not decode are GARBAGE_ARGS.  Before: all forwarded as they came. */
static void t05_unmappable(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	static const uint32_t procs[] = { 1, 2, 3, 4, 6, 7, 8, 9 };
	struct msg m;
	int32_t b;

	(void)state;
	b = lock_as(nm, "127.0.0.3", 4, 2, "f", 1, 0, 0, 0);	/* B holds a lock: its svid' */
	assert_true(b >= 1 << GW_NLM_SVID_BITS);
	for (unsigned i = 0; i < sizeof(procs) / sizeof(procs[0]); i++) {
		assert_int_equal(call_as(nm, "127.0.0.2", 4, procs[i], "f", b, NULL), GW_NLM_NOLOCKS);
		assert_int_equal(call_as(nm, "127.0.0.2", 3, procs[i], "f", 1 << GW_NLM_SVID_BITS,
					 NULL), GW_NLM_NOLOCKS);
		assert_int_equal(call_as(nm, "127.0.0.2", 4, procs[i], "f", -5, NULL), GW_NLM_NOLOCKS);
	}
	assert_int_equal(call_as(nm, "127.0.0.2", 3, 22, "f", INT32_MAX, NULL), GW_NLM_NOLOCKS);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_OWNER_REFUSED], 25);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_MAPPED], 1);
	assert_int_equal(gw_nlm_host_locks(nm, "127.0.0.3"), 1);
	/* the largest svid the map carries still goes, mapped */
	assert_int_equal(call_as(nm, "127.0.0.2", 4, 4, "f", (1 << GW_NLM_SVID_BITS) - 1, &b),
			 GW_NLM_FORWARD);
	assert_int_equal(b & ((1 << GW_NLM_SVID_BITS) - 1), (1 << GW_NLM_SVID_BITS) - 1);
	/* cut short: not an owner the map can read */
	nlm_call(&m, 4, 2, "f", 1, 0, 0);
	m.m_rec.rcd_iov[0].iov_len = m.m_rec.rcd_len = m.m_args + 20;
	assert_int_equal(gw_nlm_on_call(nm, "h", NLM, 4, 2, &m.m_rec, m.m_args), GW_NLM_GARBAGE);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_OWNER_REFUSED], 26);
	gw_nlm_free(nm);
	free(st);
}

/* 6. The host table at and past its capacity: every slot held by a host
 * with a lock, the next host is refused (DENIED_NOLOCKS, counted
 * hosts_full; before: sent unmapped); a host that only TESTed gives its
 * slot up, one that sent a LOCK lately does not, even if denied. */
static void t06_hosts_bounded(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	char name[32];
	int32_t first, again;

	(void)state;
	first = lock_as(nm, "host-0", 4, 1, "f", 1, 0, 0, 0);	/* TEST only: nothing tracked */
	lock_as(nm, "host-1", 4, 2, "f", 1, 0, 0, 1);		/* LOCK, DENIED: nothing tracked */
	for (unsigned i = 2; i < GW_NLM_MAX_HOSTS; i++) {
		snprintf(name, sizeof(name), "host-%u", i);
		lock_as(nm, name, 4, 2, "f", 1, 0, 0, 0);
	}
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_HOSTS_FULL], 0);
	again = lock_as(nm, "newcomer", 4, 2, "f", 1, 0, 0, 0);	/* takes host-0's slot */
	assert_int_equal(again, first);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(call_as(nm, "late", 4, i ? 4 : 2, "f", 1, NULL), GW_NLM_NOLOCKS);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_HOSTS_FULL], 3);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_OWNER_REFUSED], 0);
	/* the hosts in the table keep their owners */
	assert_int_equal(call_as(nm, "host-1", 4, 4, "f", 1, &again), GW_NLM_FORWARD);
	assert_int_equal((uint32_t)again >> GW_NLM_SVID_BITS, 2);
	gw_nlm_free(nm);
	free(st);
}

/* ---- SHARE and UNSHARE (gateway/nlm_share.c) ---- */

/* A SHARE (20) or UNSHARE (21) call in a buffer big enough for hostile
 * lengths; the record is the map's to replace. */
struct smsg {
	uint8_t sm_buf[3072];
	struct xdr_enc sm_xe;
	size_t sm_args;
	struct gw_rec sm_rec;
};

static void share_call(struct smsg *m, uint32_t vers, uint32_t proc, const void *fh, size_t fhlen,
		       const void *oh, size_t ohlen, uint32_t mode, uint32_t access)
{
	struct xdr_enc *xe = &m->sm_xe;

	xdr_enc_init(xe, m->sm_buf, sizeof(m->sm_buf));
	rpc_call_encode(xe, 0x4321, NLM, vers, proc, NULL);
	m->sm_args = xe->xe_len;
	xdr_put_opaque(xe, "ck", 2);
	xdr_put_opaque(xe, "guest", 5);
	xdr_put_opaque(xe, fh, (uint32_t)fhlen);
	xdr_put_opaque(xe, oh, (uint32_t)ohlen);
	xdr_put_u32(xe, mode);
	xdr_put_u32(xe, access);
	xdr_put_u32(xe, 0);		/* reclaim */
	assert_int_equal(xe->xe_err, XDR_OK);
	gw_rec_init(&m->sm_rec);
	m->sm_rec.rcd_iov[0] = (struct iovec){ m->sm_buf, xe->xe_len };
	m->sm_rec.rcd_buf[0] = NULL;	/* no pool buffer */
	m->sm_rec.rcd_niov = 1;
	m->sm_rec.rcd_len = xe->xe_len;
}

/* The decoded arguments of a (mapped) share call record. */
struct sargs {
	char sa_fh[80];
	uint8_t sa_oh[1100];
	size_t sa_ohlen;
	uint32_t sa_mode, sa_access, sa_vers, sa_proc;
	bool sa_sys;			/* AUTH_SYS credential */
};

static void share_decode(const struct iovec *iov, unsigned niov, struct sargs *a)
{
	struct rpc_call_hdr h;
	struct xdr_cur xc;
	struct xdr_span sp, fh, oh;
	uint32_t reclaim;

	memset(a, 0, sizeof(*a));
	xdr_cur_init(&xc, iov, niov);
	assert_true(rpc_call_decode(&xc, &h));
	a->sa_vers = h.rc_vers;
	a->sa_proc = h.rc_proc;
	a->sa_sys = h.rc_cred.oa_flavor == RPC_AUTH_SYS;
	assert_true(xdr_get_opaque(&xc, &sp, 1024));	/* cookie */
	assert_true(xdr_get_opaque(&xc, &sp, 1024));	/* caller_name */
	assert_true(xdr_get_opaque(&xc, &fh, 1024));
	assert_true(xdr_get_opaque(&xc, &oh, 1024));
	assert_true(xdr_get_u32(&xc, &a->sa_mode) && xdr_get_u32(&xc, &a->sa_access) &&
		    xdr_get_u32(&xc, &reclaim));
	assert_int_equal(xdr_remaining(&xc), 0);
	xdr_span_copy(&xc, &fh, a->sa_fh, sizeof(a->sa_fh) - 1);
	a->sa_ohlen = xdr_span_copy(&xc, &oh, a->sa_oh, sizeof(a->sa_oh));
}

/* A share call from host, forwarded (or not: the verdict), answered stat. */
static enum gw_nlm_act share_as(struct gw_nlm *nm, struct gw_pool *pool, const char *host,
				uint32_t proc, const char *fh, const char *oh, uint32_t stat,
				struct sargs *sent)
{
	struct smsg m;
	uint8_t rb[128];
	struct iovec iov;
	enum gw_nlm_act act;

	share_call(&m, 4, proc, fh, strlen(fh), oh, strlen(oh), 2, 1);
	act = gw_nlm_on_call(nm, host, NLM, 4, proc, &m.sm_rec, m.sm_args);
	if (act == GW_NLM_FORWARD) {
		if (sent)
			share_decode(m.sm_rec.rcd_iov, m.sm_rec.rcd_niov, sent);
		iov = (struct iovec){ rb, reply(rb, sizeof(rb), stat, false, 0) };
		gw_nlm_on_reply(nm, host, 4, proc, &m.sm_rec, m.sm_args, &iov, 1);
	}
	gw_rec_release(pool, &m.sm_rec);
	return act;
}

/* What the release sender was given, any procedure. */
struct rel {
	unsigned rl_n;
	struct sargs rl_call[24];
};

static bool rel_capture(void *arg, const uint8_t *msg, size_t len)
{
	struct rel *r = arg;
	struct iovec one = { (void *)msg, len };

	assert_true(r->rl_n < 24);
	if (chk_be32(msg + 20) == 4) {		/* an UNLOCK: only counted */
		memset(&r->rl_call[r->rl_n], 0, sizeof(r->rl_call[0]));
		r->rl_call[r->rl_n++].sa_proc = 4;
		return true;
	}
	share_decode(&one, 1, &r->rl_call[r->rl_n++]);
	return true;
}

static struct gw_nlm *share_map(struct gw_stats **st, struct gw_pool **pool)
{
	struct gw_nlm *nm;

	*st = stats();
	*pool = gw_pool_new(4096, 16, false);
	assert_non_null(*pool);
	nm = gw_nlm_new(*st, NULL);
	gw_nlm_set_pool(nm, *pool);
	return nm;
}

static void share_done(struct gw_nlm *nm, struct gw_stats *st, struct gw_pool *pool)
{
	gw_nlm_free(nm);
	assert_int_equal(gw_pool_avail(pool), 16);	/* every re-encoded call's buffer back */
	gw_pool_free(pool);
	free(st);
}

/* 7. Two hosts, one oh: the server sees two owners, oh' = tag || oh, the
 * tag the same for a host every time, the rest of the call unchanged; on
 * today's gateway both went as "1@guest", one share owner for lockd. */
static void t07_share_owner_per_host(void **state)
{
	struct gw_stats *st;
	struct gw_pool *pool;
	struct gw_nlm *nm = share_map(&st, &pool);
	struct sargs a, b, a2, u;

	(void)state;
	assert_int_equal(share_as(nm, pool, "127.0.0.2", 20, "fh", "1@guest", 0, &a), GW_NLM_FORWARD);
	assert_int_equal(share_as(nm, pool, "127.0.0.3", 20, "fh", "1@guest", 0, &b), GW_NLM_FORWARD);
	assert_int_equal(share_as(nm, pool, "127.0.0.2", 20, "fh", "1@guest", 0, &a2), GW_NLM_FORWARD);
	assert_int_equal(share_as(nm, pool, "127.0.0.2", 21, "fh", "1@guest", 0, &u), GW_NLM_FORWARD);
	assert_int_equal(a.sa_ohlen, 7 + GW_NSH_TAG_LEN);
	assert_memory_equal(a.sa_oh + GW_NSH_TAG_LEN, "1@guest", 7);
	assert_memory_equal(b.sa_oh + GW_NSH_TAG_LEN, "1@guest", 7);
	assert_memory_not_equal(a.sa_oh, b.sa_oh, GW_NSH_TAG_LEN);
	assert_memory_equal(a.sa_oh, a2.sa_oh, a.sa_ohlen);
	assert_memory_equal(a.sa_oh, u.sa_oh, a.sa_ohlen);	/* UNSHARE names the same owner */
	assert_string_equal(a.sa_fh, "fh");
	assert_int_equal(a.sa_mode, 2);
	assert_int_equal(a.sa_access, 1);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_SHARE_MAPPED], 4);
	/* v1 has no SHARE: procedure 20 passes as it is */
	{
		struct smsg m;

		share_call(&m, 1, 20, "fh", 2, "o", 1, 0, 0);
		assert_int_equal(gw_nlm_on_call(nm, "127.0.0.2", NLM, 1, 20, &m.sm_rec, m.sm_args),
				 GW_NLM_FORWARD);
		assert_ptr_equal(m.sm_rec.rcd_iov[0].iov_base, m.sm_buf);
	}
	share_done(nm, st, pool);
}

/* 8. Granted shares are tracked per host; UNSHARE forgets; SM_NOTIFY from
 * A sends one UNSHARE per share A holds (its oh', modes, version), none of
 * B's; a DENIED SHARE is not A's.  FREE_ALL from B the same for B. */
static void t08_share_release(void **state)
{
	struct gw_stats *st;
	struct gw_pool *pool;
	struct gw_nlm *nm = share_map(&st, &pool);
	struct rel r = { 0 };
	struct sargs a, b;

	(void)state;
	gw_nlm_set_sender(nm, rel_capture, &r);
	share_as(nm, pool, "127.0.0.2", 20, "f1", "1@guest", 0, &a);
	share_as(nm, pool, "127.0.0.2", 20, "f2", "1@guest", 0, NULL);
	share_as(nm, pool, "127.0.0.2", 20, "f3", "1@guest", 1, NULL);	/* DENIED */
	share_as(nm, pool, "127.0.0.2", 21, "f2", "1@guest", 0, NULL);	/* forgotten */
	share_as(nm, pool, "127.0.0.3", 20, "f1", "1@guest", 0, &b);
	lock_as(nm, "127.0.0.2", 4, 2, "f9", 1, 0, 0, 0);		/* and a lock */
	assert_int_equal(notify(nm, "127.0.0.2", false), GW_NLM_ANSWER);
	assert_int_equal(r.rl_n, 2);
	assert_int_equal(r.rl_call[0].sa_proc, 4);			/* the lock's UNLOCK */
	assert_int_equal(r.rl_call[1].sa_proc, 21);
	assert_int_equal(r.rl_call[1].sa_vers, 4);
	assert_true(r.rl_call[1].sa_sys);
	assert_string_equal(r.rl_call[1].sa_fh, "f1");
	assert_int_equal(r.rl_call[1].sa_ohlen, a.sa_ohlen);
	assert_memory_equal(r.rl_call[1].sa_oh, a.sa_oh, a.sa_ohlen);
	assert_int_equal(r.rl_call[1].sa_mode, 2);
	assert_int_equal(r.rl_call[1].sa_access, 1);
	assert_int_equal(notify(nm, "127.0.0.2", false), GW_NLM_ANSWER);	/* nothing left */
	assert_int_equal(r.rl_n, 2);
	assert_int_equal(notify(nm, "127.0.0.3", true), GW_NLM_ANSWER);
	assert_int_equal(r.rl_n, 3);
	assert_memory_equal(r.rl_call[2].sa_oh, b.sa_oh, b.sa_ohlen);
	share_done(nm, st, pool);
}

/* 9. Hostile owners: an oh of 1021 bytes or more (oh' would pass 1024), a
 * file handle over 64 bytes, a length word past the record, a truncated
 * call, no buffer: refused (never forwarded as they came), counted.  An oh
 * of 1020 bytes goes as 1024.  A client that sends another slot's tag as
 * its oh still gets its own owner. */
static void t09_share_hostile(void **state)
{
	struct gw_stats *st;
	struct gw_pool *pool;
	struct gw_nlm *nm = share_map(&st, &pool);
	static uint8_t big[1100];
	struct smsg m;
	struct sargs a, b;
	uint8_t forged[8];

	(void)state;
	memset(big, 'o', sizeof(big));
	share_call(&m, 4, 20, "fh", 2, big, 1021, 0, 1);
	assert_int_equal(gw_nlm_on_call(nm, "h", NLM, 4, 20, &m.sm_rec, m.sm_args), GW_NLM_REFUSE);
	share_call(&m, 4, 20, "fh", 2, big, 1020, 0, 1);
	assert_int_equal(gw_nlm_on_call(nm, "h", NLM, 4, 20, &m.sm_rec, m.sm_args), GW_NLM_FORWARD);
	share_decode(m.sm_rec.rcd_iov, 1, &a);
	assert_int_equal(a.sa_ohlen, 1024);
	gw_rec_release(pool, &m.sm_rec);
	share_call(&m, 4, 21, big, 65, "o", 1, 0, 1);
	assert_int_equal(gw_nlm_on_call(nm, "h", NLM, 4, 21, &m.sm_rec, m.sm_args), GW_NLM_REFUSE);
	share_call(&m, 4, 20, "fh", 2, "oh", 2, 0, 1);
	chk_put_be32(m.sm_buf + m.sm_args + 8 + 12 + 8, 4000);	/* oh's length word */
	assert_int_equal(gw_nlm_on_call(nm, "h", NLM, 4, 20, &m.sm_rec, m.sm_args), GW_NLM_REFUSE);
	share_call(&m, 4, 20, "fh", 2, "oh", 2, 0, 1);
	m.sm_rec.rcd_iov[0].iov_len = m.sm_rec.rcd_len = m.sm_rec.rcd_len - 4;	/* no reclaim */
	assert_int_equal(gw_nlm_on_call(nm, "h", NLM, 4, 20, &m.sm_rec, m.sm_args), GW_NLM_REFUSE);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_SHARE_REFUSED], 4);
	/* B (second slot) shares with "x"; A sends B's oh' as its own oh */
	share_as(nm, pool, "127.0.0.3", 20, "fh", "x", 0, &b);
	memcpy(forged, b.sa_oh, b.sa_ohlen);
	share_call(&m, 4, 20, "fh", 2, forged, b.sa_ohlen, 0, 1);
	assert_int_equal(gw_nlm_on_call(nm, "127.0.0.4", NLM, 4, 20, &m.sm_rec, m.sm_args),
			 GW_NLM_FORWARD);
	share_decode(m.sm_rec.rcd_iov, 1, &a);
	assert_int_equal(a.sa_ohlen, b.sa_ohlen + GW_NSH_TAG_LEN);
	assert_memory_not_equal(a.sa_oh, b.sa_oh, b.sa_ohlen);
	gw_rec_release(pool, &m.sm_rec);
	/* without a pool (no buffer to re-encode into): refused */
	gw_nlm_set_pool(nm, NULL);
	assert_int_equal(share_as(nm, pool, "h", 20, "fh", "o", 0, NULL), GW_NLM_REFUSE);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_SHARE_REFUSED], 5);
	share_done(nm, st, pool);
}

/* 10. Bounds: GW_NSH_PER_HOST shares per host; one more is refused before
 * it reaches the server, an update of a held one is not; shares in flight
 * past the cap are counted (track_full).  A host holding only a share
 * keeps its slot when the table is full (its oh' is on the server). */
static void t10_share_bounds(void **state)
{
	struct gw_stats *st;
	struct gw_pool *pool;
	struct gw_nlm *nm = share_map(&st, &pool);
	struct smsg m[2];
	uint8_t rb[128];
	struct iovec iov;
	char fh[16], name[32];

	(void)state;
	for (unsigned i = 0; i < GW_NSH_PER_HOST - 1; i++) {
		snprintf(fh, sizeof(fh), "f%u", i);
		assert_int_equal(share_as(nm, pool, "h", 20, fh, "o", 0, NULL), GW_NLM_FORWARD);
	}
	/* two SHAREs in flight for the last place */
	for (unsigned i = 0; i < 2; i++) {
		share_call(&m[i], 4, 20, i ? "y" : "x", 1, "o", 1, 0, 1);
		assert_int_equal(gw_nlm_on_call(nm, "h", NLM, 4, 20, &m[i].sm_rec, m[i].sm_args),
				 GW_NLM_FORWARD);
	}
	iov = (struct iovec){ rb, reply(rb, sizeof(rb), 0, false, 0) };
	for (unsigned i = 0; i < 2; i++) {
		gw_nlm_on_reply(nm, "h", 4, 20, &m[i].sm_rec, m[i].sm_args, &iov, 1);
		gw_rec_release(pool, &m[i].sm_rec);
	}
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_TRACK_FULL], 1);
	assert_int_equal(share_as(nm, pool, "h", 20, "new", "o", 0, NULL), GW_NLM_REFUSE);
	assert_int_equal(share_as(nm, pool, "h", 20, "f3", "o", 0, NULL), GW_NLM_FORWARD);
	assert_int_equal(share_as(nm, pool, "h", 21, "new", "o", 0, NULL), GW_NLM_FORWARD);
	/* slots: "h" holds shares only; every other slot holds a lock */
	for (unsigned i = 1; i < GW_NLM_MAX_HOSTS; i++) {
		snprintf(name, sizeof(name), "host-%u", i);
		lock_as(nm, name, 4, 2, "f", 1, 0, 0, 0);
	}
	assert_int_equal(call_as(nm, "late", 4, 2, "f", 1, NULL), GW_NLM_NOLOCKS);
	assert_int_equal(share_as(nm, pool, "late", 20, "f", "o", 0, NULL), GW_NLM_NOLOCKS);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_HOSTS_FULL], 2);
	share_done(nm, st, pool);
}

/* ---- bounds per source, names, what keeps a slot ---- */

/* 11. One source holds at most half the slots: hosts of one IPv6 /64 (one
 * host's many addresses) fill their half, the next one of that /64 is
 * refused (source_full; before: mapped, and 511 such hosts took every
 * slot), an idle host of the /64 gives its slot to its own newcomer, and
 * hosts of other sources (another /64, IPv4) still get slots. */
static void t11_source_bounded(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	const unsigned half = GW_NLM_MAX_HOSTS / 2;
	char name[64];
	int32_t idle, again;

	(void)state;
	idle = lock_as(nm, "2001:db8:0:1::ffff", 4, 1, "f", 1, 0, 0, 0);	/* TEST only */
	for (unsigned i = 1; i < half; i++) {
		snprintf(name, sizeof(name), "2001:db8:0:1::%x", i);
		assert_int_equal(call_as(nm, name, 4, 2, "f", 1, NULL), GW_NLM_FORWARD);
	}
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_SOURCE_FULL], 0);
	/* at the cap: the /64's newcomer takes the /64's own idle slot */
	assert_int_equal(call_as(nm, "2001:db8:0:1:1::1", 4, 2, "f", 1, &again), GW_NLM_FORWARD);
	assert_int_equal((uint32_t)again >> GW_NLM_SVID_BITS, (uint32_t)idle >> GW_NLM_SVID_BITS);
	/* past it: refused, every time, whatever the address in the /64 */
	for (unsigned i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "2001:db8:0:1:2::%x", i);
		assert_int_equal(call_as(nm, name, 4, 2, "f", 1, NULL), GW_NLM_NOLOCKS);
	}
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_SOURCE_FULL], 8);
	/* others are served: another /64, IPv4 and its IPv4-mapped form */
	assert_int_equal(call_as(nm, "2001:db8:0:2::1", 4, 2, "f", 1, NULL), GW_NLM_FORWARD);
	assert_int_equal(call_as(nm, "192.0.2.1", 4, 2, "f", 1, NULL), GW_NLM_FORWARD);
	assert_int_equal(call_as(nm, "192.0.2.2", 4, 2, "f", 1, NULL), GW_NLM_FORWARD);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_SOURCE_FULL], 8);
	/* and the /64's hosts in the table keep theirs */
	assert_int_equal(call_as(nm, "2001:db8:0:1::1", 4, 4, "f", 1, NULL), GW_NLM_FORWARD);
	gw_nlm_free(nm);
	free(st);
}

/* A LOCK (or SHARE's) call of host with caller_name caller; its act. */
static enum gw_nlm_act named_as(struct gw_nlm *nm, const char *host, const void *caller,
				size_t len, uint32_t proc)
{
	struct msg m;

	call_hdr(&m, NLM, 4, proc);
	xdr_put_opaque(&m.m_xe, "ck", 2);
	if (proc == 20) {
		xdr_put_opaque(&m.m_xe, caller, (uint32_t)len);
		xdr_put_opaque(&m.m_xe, "fh", 2);
		xdr_put_opaque(&m.m_xe, "oh", 2);
		xdr_put_u32(&m.m_xe, 0);
		xdr_put_u32(&m.m_xe, 1);
		xdr_put_u32(&m.m_xe, 0);
	} else {
		xdr_put_u32(&m.m_xe, 0);
		xdr_put_u32(&m.m_xe, 1);
		xdr_put_opaque(&m.m_xe, caller, (uint32_t)len);
		xdr_put_opaque(&m.m_xe, "fh", 2);
		xdr_put_opaque(&m.m_xe, "1@guest", 7);
		xdr_put_u32(&m.m_xe, 1);
		xdr_put_u64(&m.m_xe, 0);
		xdr_put_u64(&m.m_xe, 0);
		xdr_put_u32(&m.m_xe, 0);
		xdr_put_u32(&m.m_xe, 3);
	}
	done(&m);
	return gw_nlm_on_call(nm, host, NLM, 4, proc, &m.m_rec, m.m_args);
}

/* 12. caller_name: a host name or an address, 1 to 255 bytes; anything
 * else (empty, 256 bytes, a blank, a slash, a control or non-ASCII byte)
 * is refused, counted caller_refused (before: every one forwarded). */
static void t12_caller_name(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	static const char *const good[] = { "guest", "client-7.example.org", "10.1.2.3",
					    "fe80::1%eth0", "WIN_PC", "a" };
	static const char *const bad[] = { "", "a b", "../../etc/passwd", "host\n", "h\x01",
					   "caf\xc3\xa9", "x;y", "a\0b" };
	char big[300];

	(void)state;
	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_int_equal(named_as(nm, "127.0.0.2", good[i], strlen(good[i]), 2),
				 GW_NLM_FORWARD);
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(named_as(nm, "127.0.0.2", bad[i], i == 7 ? 3 : strlen(bad[i]), 2),
				 GW_NLM_NOLOCKS);
	memset(big, 'a', sizeof(big));
	assert_int_equal(named_as(nm, "127.0.0.2", big, GW_NLM_NAME_MAX, 2), GW_NLM_FORWARD);
	assert_int_equal(named_as(nm, "127.0.0.2", big, GW_NLM_NAME_MAX + 1, 2), GW_NLM_NOLOCKS);
	assert_int_equal(named_as(nm, "127.0.0.2", "a b", 3, 20), GW_NLM_NOLOCKS);	/* SHARE */
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_CALLER_REFUSED], 10);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_MAPPED], 7);
	gw_nlm_free(nm);
	free(st);
}

/* 13. What keeps a slot from going to another host: a LOCK answered
 * BLOCKED is tracked as held (its grant may come later, maybe on another
 * worker; a client's reboot UNLOCKs it); a LOCK sent lately whose reply
 * never came keeps the slot GW_NLM_QUIET_MS; after that it may go. */
static void t13_slot_kept(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	struct sent s = { 0 };
	char name[32];
	int32_t lost, again;

	(void)state;
	gw_nlm_set_sender(nm, capture, &s);
	lock_as(nm, "blocked", 4, 2, "fb", 1, 0, 0, 3);		/* BLOCKED */
	assert_int_equal(gw_nlm_host_locks(nm, "blocked"), 1);
	assert_int_equal(call_as(nm, "lost", 4, 2, "f", 1, &lost), GW_NLM_FORWARD);	/* no reply */
	for (unsigned i = 2; i < GW_NLM_MAX_HOSTS; i++) {
		snprintf(name, sizeof(name), "host-%u", i);
		lock_as(nm, name, 4, 2, "f", 1, 0, 0, 0);
	}
	assert_int_equal(call_as(nm, "new", 4, 2, "f", 1, NULL), GW_NLM_NOLOCKS);
	nm->nm_quiet_ms = 0;	/* as if GW_NLM_QUIET_MS went by */
	assert_int_equal(call_as(nm, "new", 4, 2, "f", 1, &again), GW_NLM_FORWARD);
	assert_int_equal((uint32_t)again >> GW_NLM_SVID_BITS, (uint32_t)lost >> GW_NLM_SVID_BITS);
	nm->nm_quiet_ms = GW_NLM_QUIET_MS;
	assert_int_equal(call_as(nm, "newer", 4, 2, "f", 1, NULL), GW_NLM_NOLOCKS);
	/* blocked's reboot: its blocked lock UNLOCKed (which cancels it) */
	assert_int_equal(notify(nm, "blocked", false), GW_NLM_ANSWER);
	assert_int_equal(s.st_n, 1);
	assert_string_equal(s.st_fh[0], "fb");
	assert_int_equal(gw_nlm_host_locks(nm, "blocked"), 0);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_HOSTS_FULL], 2);
	gw_nlm_free(nm);
	free(st);
}

/* 14. The refusal's result: the call's cookie and DENIED_NOLOCKS (2), a
 * SHARE's with its sequence; the _MSG forms have none (SYSTEM_ERR), nor
 * has a call whose cookie does not fit. */
static void t14_nolocks_result(void **state)
{
	static const uint8_t lock_res[] = { 0, 0, 0, 2, 'c', 'k', 0, 0, 0, 0, 0, 2 };
	static const uint8_t share_res[] = { 0, 0, 0, 2, 'c', 'k', 0, 0, 0, 0, 0, 2, 0, 0, 0, 0 };
	uint8_t out[64];
	struct msg m;
	struct smsg sm;

	(void)state;
	for (uint32_t proc = 1; proc <= 4; proc++) {
		nlm_call(&m, proc == 2 ? 3 : 4, proc, "f", 1, 0, 0);
		assert_int_equal(gw_nlm_nolocks_res(&m.m_rec, m.m_args, proc, out, sizeof(out)), 12);
		assert_memory_equal(out, lock_res, sizeof(lock_res));
	}
	share_call(&sm, 4, 21, "fh", 2, "oh", 2, 0, 0);
	assert_int_equal(gw_nlm_nolocks_res(&sm.sm_rec, sm.sm_args, 21, out, sizeof(out)), 16);
	assert_memory_equal(out, share_res, sizeof(share_res));
	nlm_call(&m, 4, 7, "f", 1, 0, 0);
	assert_int_equal(gw_nlm_nolocks_res(&m.m_rec, m.m_args, 7, out, sizeof(out)), 0);
	nlm_call(&m, 4, 2, "f", 1, 0, 0);
	assert_int_equal(gw_nlm_nolocks_res(&m.m_rec, m.m_args, 2, out, 8), 0);
}

/* 15. Tracked locks of one host at and past GW_NLM_LOCKS_PER_HOST: the
 * 65th file's lock is granted but not tracked (track_full, logged); the
 * host's reboot releases the 64 it tracks. */
static void t15_locks_tracked_bounded(void **state)
{
	struct gw_stats *st = stats();
	struct gw_nlm *nm = gw_nlm_new(st, NULL);
	unsigned sent = 0;
	char fh[16];

	(void)state;
	gw_nlm_set_sender(nm, count_sent, &sent);
	for (unsigned i = 0; i <= GW_NLM_LOCKS_PER_HOST; i++) {
		snprintf(fh, sizeof(fh), "f%u", i);
		lock_as(nm, "h", 4, 2, fh, 1, 0, 0, 0);
	}
	assert_int_equal(gw_nlm_host_locks(nm, "h"), GW_NLM_LOCKS_PER_HOST);
	assert_int_equal(st->gs_ctr[GW_CTR_NLM_TRACK_FULL], 1);
	assert_int_equal(notify(nm, "h", false), GW_NLM_ANSWER);
	assert_int_equal(sent, GW_NLM_LOCKS_PER_HOST);
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
		cmocka_unit_test(t07_share_owner_per_host),
		cmocka_unit_test(t08_share_release),
		cmocka_unit_test(t09_share_hostile),
		cmocka_unit_test(t10_share_bounds),
		cmocka_unit_test(t11_source_bounded),
		cmocka_unit_test(t12_caller_name),
		cmocka_unit_test(t13_slot_kept),
		cmocka_unit_test(t14_nolocks_result),
		cmocka_unit_test(t15_locks_tracked_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
