// SPDX-License-Identifier: MIT
/*
 * This file contains the state of the NFSv4.1 backchannel relay (RFC 8167
 * on the RDMA side, RFC 8881 callbacks on the client's TCP connection): the
 * session map (which client connection owns which session's back channel)
 * and the relay table (callbacks forwarded, waiting for the client's
 * REPLY).  The decoders that find the session IDs are chunking's
 * (nfs_cb.c); the glue with calls, transports and clients is in relay.c.
 *
 * Ownership rule (data exposure): a callback goes only to the connection
 * that bound the session's back channel, as the server itself decides it
 * (RFC 8881 2.10.3.1): a CREATE_SESSION reply with
 * CREATE_SESSION4_FLAG_CONN_BACK_CHAN, or a BIND_CONN_TO_SESSION reply
 * with CDFS4_BACK or CDFS4_BOTH.  A SEQUENCE alone never moves a session
 * away from a live connection; it only re-binds a session whose owner
 * closed, and only for the same client key (address and port: the Linux
 * client reconnects from the same port).
 *
 * Memory: both tables are allocated once; lookups never allocate.
 */
#include <stdlib.h>
#include <string.h>

#include "callback.h"
#include "chunking.h"

/* ---- session map ---- */

struct gw_cbs_ent {
	uint8_t se_sid[GW_CB_SESSIONID_LEN];
	void *se_owner;			/* NULL: owner closed */
	uint64_t se_key;
	uint64_t se_stamp;		/* bind order: oldest evicted first */
	bool se_used;
};

struct gw_cb_sessions {
	unsigned sm_cap, sm_count, sm_ownerless;
	uint64_t sm_clock;
	struct gw_cbs_ent *sm_ent;
};

struct gw_cb_sessions *gw_cbs_new(unsigned capacity)
{
	struct gw_cb_sessions *m = calloc(1, sizeof(*m));

	if (!m || !capacity)
		goto err;
	m->sm_cap = capacity;
	m->sm_ent = calloc(capacity, sizeof(*m->sm_ent));
	if (!m->sm_ent)
		goto err;
	return m;
err:
	free(m);
	return NULL;
}

void gw_cbs_free(struct gw_cb_sessions *m)
{
	if (!m)
		return;
	free(m->sm_ent);
	free(m);
}

/* Sessions are few (one per client mount): a linear scan over a small
 * fixed table, touched only by session-changing replies, by SEQUENCE while
 * some session is ownerless, and by callbacks. */
static struct gw_cbs_ent *cbs_find(const struct gw_cb_sessions *m, const uint8_t *sid)
{
	for (unsigned i = 0; i < m->sm_cap; i++)
		if (m->sm_ent[i].se_used && !memcmp(m->sm_ent[i].se_sid, sid, GW_CB_SESSIONID_LEN))
			return &m->sm_ent[i];
	return NULL;
}

static void cbs_set_owner(struct gw_cb_sessions *m, struct gw_cbs_ent *e, void *owner)
{
	if (!e->se_owner && owner)
		m->sm_ownerless--;
	else if (e->se_owner && !owner)
		m->sm_ownerless++;
	e->se_owner = owner;
}

bool gw_cbs_bind(struct gw_cb_sessions *m, const uint8_t *sid, void *owner, uint64_t key)
{
	struct gw_cbs_ent *e = cbs_find(m, sid), *victim = NULL;

	if (e) {
		bool changed = e->se_owner != owner;

		cbs_set_owner(m, e, owner);
		e->se_key = key;
		e->se_stamp = ++m->sm_clock;
		return changed;
	}
	/* A free slot, else the oldest ownerless, else the oldest. */
	for (unsigned i = 0; i < m->sm_cap; i++) {
		struct gw_cbs_ent *c = &m->sm_ent[i];

		if (!c->se_used) {
			victim = c;
			break;
		}
		if (!victim || (!c->se_owner && victim->se_owner) ||
		    (!c->se_owner == !victim->se_owner && c->se_stamp < victim->se_stamp))
			victim = c;
	}
	if (victim->se_used) {
		if (!victim->se_owner)
			m->sm_ownerless--;
		m->sm_count--;
	}
	memset(victim, 0, sizeof(*victim));
	memcpy(victim->se_sid, sid, GW_CB_SESSIONID_LEN);
	victim->se_used = true;
	victim->se_owner = owner;
	victim->se_key = key;
	victim->se_stamp = ++m->sm_clock;
	m->sm_count++;
	if (!owner)
		m->sm_ownerless++;
	return true;
}

bool gw_cbs_seen(struct gw_cb_sessions *m, const uint8_t *sid, void *owner, uint64_t key)
{
	struct gw_cbs_ent *e;

	if (m->sm_ownerless == 0)
		return false;
	e = cbs_find(m, sid);
	if (!e || e->se_owner || e->se_key != key)
		return false;
	cbs_set_owner(m, e, owner);
	return true;
}

void *gw_cbs_owner(const struct gw_cb_sessions *m, const uint8_t *sid)
{
	const struct gw_cbs_ent *e = cbs_find(m, sid);

	return e ? e->se_owner : NULL;
}

void gw_cbs_owner_gone(struct gw_cb_sessions *m, const void *owner)
{
	for (unsigned i = 0; i < m->sm_cap; i++)
		if (m->sm_ent[i].se_used && m->sm_ent[i].se_owner == owner)
			cbs_set_owner(m, &m->sm_ent[i], NULL);
}

unsigned gw_cbs_count(const struct gw_cb_sessions *m) { return m->sm_count; }
unsigned gw_cbs_ownerless(const struct gw_cb_sessions *m) { return m->sm_ownerless; }

/* ---- relay table ---- */

struct gw_cb_relay {
	unsigned cbr_cap, cbr_count;
	uint32_t cbr_next_xid;
	struct gw_cb_pend *cbr_ent;
};

struct gw_cb_relay *gw_cbr_new(unsigned capacity, uint32_t first_xid)
{
	struct gw_cb_relay *r = calloc(1, sizeof(*r));

	if (!r || !capacity)
		goto err;
	r->cbr_cap = capacity;
	r->cbr_next_xid = first_xid;
	r->cbr_ent = calloc(capacity, sizeof(*r->cbr_ent));
	if (!r->cbr_ent)
		goto err;
	return r;
err:
	free(r);
	return NULL;
}

void gw_cbr_free(struct gw_cb_relay *r)
{
	if (!r)
		return;
	free(r->cbr_ent);
	free(r);
}

struct gw_cb_pend *gw_cbr_find(struct gw_cb_relay *r, const void *conn, uint32_t cxid)
{
	for (unsigned i = 0; i < r->cbr_cap; i++) {
		struct gw_cb_pend *p = &r->cbr_ent[i];

		if (p->cbp_used && p->cbp_conn == conn && p->cbp_cxid == cxid)
			return p;
	}
	return NULL;
}

struct gw_cb_pend *gw_cbr_add(struct gw_cb_relay *r, void *conn, uint32_t sxid, void *handle,
			      struct gw_path *path, uint64_t deadline_ms)
{
	struct gw_cb_pend *slot = NULL;
	uint32_t xid;

	if (r->cbr_count == r->cbr_cap)
		return NULL;
	for (unsigned i = 0; i < r->cbr_cap && !slot; i++)
		if (!r->cbr_ent[i].cbp_used)
			slot = &r->cbr_ent[i];
	/* At most cbr_cap - 1 others pending: a free XID within cbr_cap tries. */
	do
		xid = r->cbr_next_xid++;
	while (gw_cbr_find(r, conn, xid));
	*slot = (struct gw_cb_pend){ .cbp_used = true, .cbp_conn = conn, .cbp_cxid = xid,
				     .cbp_sxid = sxid, .cbp_handle = handle, .cbp_path = path,
				     .cbp_deadline_ms = deadline_ms };
	r->cbr_count++;
	return slot;
}

void gw_cbr_remove(struct gw_cb_relay *r, struct gw_cb_pend *p)
{
	if (!p->cbp_used)
		return;
	memset(p, 0, sizeof(*p));
	r->cbr_count--;
}

struct gw_cb_pend *gw_cbr_first_of(struct gw_cb_relay *r, const void *conn)
{
	for (unsigned i = 0; i < r->cbr_cap; i++)
		if (r->cbr_ent[i].cbp_used && (!conn || r->cbr_ent[i].cbp_conn == conn))
			return &r->cbr_ent[i];
	return NULL;
}

struct gw_cb_pend *gw_cbr_first_of_path(struct gw_cb_relay *r, const struct gw_path *path)
{
	for (unsigned i = 0; i < r->cbr_cap; i++)
		if (r->cbr_ent[i].cbp_used && r->cbr_ent[i].cbp_path == path)
			return &r->cbr_ent[i];
	return NULL;
}

struct gw_cb_pend *gw_cbr_first_expired(struct gw_cb_relay *r, uint64_t now_ms)
{
	for (unsigned i = 0; i < r->cbr_cap; i++)
		if (r->cbr_ent[i].cbp_used && r->cbr_ent[i].cbp_deadline_ms <= now_ms)
			return &r->cbr_ent[i];
	return NULL;
}

unsigned gw_cbr_count(const struct gw_cb_relay *r) { return r->cbr_count; }
