// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the XID map (gateway/xmap.c) under random operation
 * sequences, checked against a small model.
 *
 * The input is a program: capacity (1..8) and first gateway XID (so the
 * counter wraps), then operations the way the gateway uses the map - a
 * call from (client, client XID) that finds its mapping or adds one,
 * settle with a window, remove, time passing, lookup by gateway XID.
 * Client keys and XIDs come from small sets, so retransmissions and
 * collisions between clients are frequent; clients 2k and 2k+1 are one
 * source (host), so the shares see hosts of one and of two clients.  The
 * model mirrors the map's rules (free slot; else, map full, the adding
 * source's own oldest settled entry when it holds its share, capacity /
 * sources, else the oldest settled entry of a source holding the most
 * settled entries, any of them when several do; else no room; settled
 * entries expire oldest first; gateway XIDs count up and skip values
 * still mapped).  Invariants after every operation: the count and the
 * sources, every mapping found by its gateway XID with its client, client
 * XID and call, gateway XIDs unique among the mapped ones, find/add/evict
 * answers equal to the model's.
 */
#include <stdint.h>
#include <string.h>

#include "xmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MX_CAP	8

struct mx_ent {
	bool me_used;
	uint64_t me_client;
	uint32_t me_cxid, me_gxid;
	uintptr_t me_call;		/* 0: settled */
	uint64_t me_expires;
	uint64_t me_seq;		/* settle order */
	struct gw_xent *me_xe;
};

struct mx_model {
	unsigned mm_cap;
	uint32_t mm_next_gxid;
	uint64_t mm_now, mm_seq;
	uintptr_t mm_calls;
	struct mx_ent mm_e[MX_CAP];
};

#define MX_CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static struct gw_call *mx_call(uintptr_t n) { return (struct gw_call *)(n * 64); }
static uint64_t mx_src(uint64_t client) { return 100 + client / 2; }

/* Entries of source src (settled ones only: settled), and sources in use. */
static unsigned mx_count(const struct mx_model *mm, uint64_t src, bool settled)
{
	unsigned n = 0;

	for (unsigned i = 0; i < mm->mm_cap; i++) {
		const struct mx_ent *e = &mm->mm_e[i];

		n += e->me_used && mx_src(e->me_client) == src && (!settled || !e->me_call);
	}
	return n;
}

static unsigned mx_nsrc(const struct mx_model *mm)
{
	unsigned n = 0;

	for (uint64_t src = 100; src < 100 + 128; src++)
		n += mx_count(mm, src, false) > 0;
	return n;
}

/* The oldest settled entry of source src, or NULL. */
static struct mx_ent *mx_oldest_of(struct mx_model *mm, uint64_t src)
{
	struct mx_ent *o = NULL;

	for (unsigned i = 0; i < mm->mm_cap; i++) {
		struct mx_ent *e = &mm->mm_e[i];

		if (e->me_used && !e->me_call && mx_src(e->me_client) == src &&
		    (!o || e->me_seq < o->me_seq))
			o = e;
	}
	return o;
}

/* Whether evicting v for an add by src, as the map said (ev), is what the
 * shares allow. */
static bool mx_victim_ok(struct mx_model *mm, uint64_t src, const struct mx_ent *v,
			 enum gw_xevict ev)
{
	unsigned own = mx_count(mm, src, false), top = 0;
	unsigned nsrc = mx_nsrc(mm) + (own ? 0 : 1);

	if (own && mx_count(mm, src, true) && own >= mm->mm_cap / nsrc)
		return ev == GW_XEVICT_OWN && v == mx_oldest_of(mm, src);
	for (uint64_t s = 100; s < 100 + 128; s++)
		if (mx_count(mm, s, true) > top)
			top = mx_count(mm, s, true);
	return ev == GW_XEVICT_LARGEST && top && mx_count(mm, mx_src(v->me_client), true) == top &&
	       v == mx_oldest_of(mm, mx_src(v->me_client));
}

static struct mx_ent *mx_oldest_settled(struct mx_model *mm)
{
	struct mx_ent *o = NULL;

	for (unsigned i = 0; i < mm->mm_cap; i++) {
		struct mx_ent *e = &mm->mm_e[i];

		if (e->me_used && !e->me_call && (!o || e->me_seq < o->me_seq))
			o = e;
	}
	return o;
}

static void mx_expire(struct mx_model *mm)
{
	struct mx_ent *o;

	while ((o = mx_oldest_settled(mm)) && o->me_expires <= mm->mm_now)
		o->me_used = false;
}

static bool mx_gxid_mapped(const struct mx_model *mm, uint32_t gxid)
{
	for (unsigned i = 0; i < mm->mm_cap; i++)
		if (mm->mm_e[i].me_used && mm->mm_e[i].me_gxid == gxid)
			return true;
	return false;
}

static struct mx_ent *mx_find(struct mx_model *mm, uint64_t client, uint32_t cxid)
{
	for (unsigned i = 0; i < mm->mm_cap; i++) {
		struct mx_ent *e = &mm->mm_e[i];

		if (e->me_used && e->me_client == client && e->me_cxid == cxid)
			return e;
	}
	return NULL;
}

/* The n-th mapped entry (n taken modulo their number), or NULL. */
static struct mx_ent *mx_pick(struct mx_model *mm, uint8_t n)
{
	unsigned used = 0, k;

	for (unsigned i = 0; i < mm->mm_cap; i++)
		used += mm->mm_e[i].me_used;
	if (!used)
		return NULL;
	k = n % used;
	for (unsigned i = 0; i < mm->mm_cap; i++)
		if (mm->mm_e[i].me_used && k-- == 0)
			return &mm->mm_e[i];
	return NULL;
}

/* A call from (client, cxid): its mapping (a settled one goes back in
 * flight), else a new one - the gateway's use of find/attach/add. */
static void mx_op_call(struct gw_xmap *m, struct mx_model *mm, uint64_t client, uint32_t cxid)
{
	struct gw_xent *xe = gw_xmap_find(m, client, cxid, mm->mm_now);
	struct mx_ent *e, *victim;
	uintptr_t call = ++mm->mm_calls;
	uint32_t gxid;
	enum gw_xevict evicted;

	mx_expire(mm);
	e = mx_find(mm, client, cxid);
	MX_CHECK(e ? xe == e->me_xe : xe == NULL);
	if (e) {
		if (!e->me_call) {
			gw_xmap_attach(m, xe, mx_call(call));
			e->me_call = call;
		}
		return;
	}
	victim = NULL;
	for (unsigned i = 0; i < mm->mm_cap && !e; i++)
		if (!mm->mm_e[i].me_used)
			e = &mm->mm_e[i];
	xe = gw_xmap_add(m, client, mx_src(client), cxid, mx_call(call), mm->mm_now, &evicted);
	if (!e) {	/* full: the evicted entry's slot is the new one's */
		for (unsigned i = 0; i < mm->mm_cap && xe && !victim; i++)
			if (mm->mm_e[i].me_xe == xe)
				victim = &mm->mm_e[i];
		if (!mx_oldest_settled(mm)) {
			MX_CHECK(xe == NULL && !evicted);	/* every entry in flight */
			return;
		}
		MX_CHECK(victim && mx_victim_ok(mm, mx_src(client), victim, evicted));
		e = victim;
	} else {
		MX_CHECK(xe != NULL && !evicted);
	}
	e->me_used = false;
	do
		gxid = mm->mm_next_gxid++;
	while (mx_gxid_mapped(mm, gxid));
	MX_CHECK(xe->xn_gxid == gxid);
	*e = (struct mx_ent){ .me_used = true, .me_client = client, .me_cxid = cxid,
			      .me_gxid = gxid, .me_call = call, .me_xe = xe };
}

static void mx_check(struct gw_xmap *m, struct mx_model *mm)
{
	unsigned used = 0;

	for (unsigned i = 0; i < mm->mm_cap; i++) {
		const struct mx_ent *e = &mm->mm_e[i];

		if (!e->me_used)
			continue;
		used++;
		MX_CHECK(gw_xmap_by_gxid(m, e->me_gxid) == e->me_xe);
		MX_CHECK(e->me_xe->xn_used && e->me_xe->xn_client == e->me_client &&
			 e->me_xe->xn_cxid == e->me_cxid && e->me_xe->xn_gxid == e->me_gxid &&
			 e->me_xe->xn_call == (e->me_call ? mx_call(e->me_call) : NULL));
		MX_CHECK(e->me_call || e->me_xe->xn_expires == e->me_expires);
		for (unsigned j = 0; j < i; j++)
			MX_CHECK(!mm->mm_e[j].me_used || mm->mm_e[j].me_gxid != e->me_gxid);
		MX_CHECK(gw_xmap_src_count(m, mx_src(e->me_client)) ==
			 mx_count(mm, mx_src(e->me_client), false));
	}
	MX_CHECK(gw_xmap_count(m) == used);
	MX_CHECK(gw_xmap_nsrc(m) == mx_nsrc(mm));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mx_model mm;
	struct gw_xmap *m;
	struct mx_ent *e;
	size_t i;

	if (size < 5)
		return 0;
	memset(&mm, 0, sizeof(mm));
	mm.mm_cap = 1 + data[0] % MX_CAP;
	mm.mm_next_gxid = (uint32_t)data[1] << 24 | (uint32_t)data[2] << 16 |
			  (uint32_t)data[3] << 8 | data[4];
	m = gw_xmap_new(mm.mm_cap, mm.mm_next_gxid);
	MX_CHECK(m != NULL);
	for (i = 5; i + 2 < size; i += 3) {
		uint8_t a = data[i + 1], b = data[i + 2];

		switch (data[i] % 6) {
		case 0:		/* a call: client key and XID from small sets */
		case 1:
			mx_op_call(m, &mm, a % 6, b % 8);
			break;
		case 2:		/* answered or cancelled: keep for a window */
			if ((e = mx_pick(&mm, a))) {
				gw_xmap_settle(m, e->me_xe, mm.mm_now, b * 4u);
				e->me_call = 0;
				e->me_expires = mm.mm_now + b * 4u;
				e->me_seq = ++mm.mm_seq;
			}
			break;
		case 3:
			if ((e = mx_pick(&mm, a))) {
				gw_xmap_remove(m, e->me_xe);
				e->me_used = false;
			}
			break;
		case 4:		/* time passes */
			mm.mm_now += (uint64_t)a * 8 + b;
			gw_xmap_expire(m, mm.mm_now);
			mx_expire(&mm);
			break;
		default:	/* by gateway XID: a mapped one or any value */
			if ((e = mx_pick(&mm, a)) && (b & 1)) {
				MX_CHECK(gw_xmap_by_gxid(m, e->me_gxid) == e->me_xe);
			} else {
				uint32_t g = mm.mm_next_gxid - 1 - b;
				struct gw_xent *xe = gw_xmap_by_gxid(m, g);

				MX_CHECK(mx_gxid_mapped(&mm, g) ? xe && xe->xn_gxid == g : !xe);
			}
			break;
		}
		mx_check(m, &mm);
	}
	gw_xmap_free(m);
	return 0;
}
