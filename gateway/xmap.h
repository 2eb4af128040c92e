/* SPDX-License-Identifier: MIT */
/*
 * This file contains the XID map of rpcrdma-gw (xmap.c, prefix gw_xmap_).
 */
#ifndef RPCRDMA_GW_XMAP_H
#define RPCRDMA_GW_XMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

/* ------------------------------------------------------------------------
 * XID map - xmap.c
 *
 * Per backend: gives each call a gateway XID unique among the XIDs this
 * gateway has outstanding or recently answered on that server, and maps a
 * client's retransmission (same client key, same client XID) to the same
 * gateway XID while the original is in flight or for drc_window after it
 * was answered, so the server's duplicate request cache recognises it.
 * The client key identifies the client endpoint (peer address and port,
 * see gw_client_key()), which the Linux client keeps across reconnects.
 *
 * Shares: each entry also belongs to a source (the client host: its
 * address, hashed: gateway/source.c).  When the map is full, a source holding
 * its share (capacity / sources in the map) loses its own oldest answered
 * entry; any other source's add takes the oldest answered entry of the
 * source holding the most answered entries.  So one client's burst can
 * flush only its own retransmission protection, never a smaller client's.
 * ------------------------------------------------------------------------ */
struct gw_call;
struct chk_call_walk;
struct gw_xsrc;
struct gw_xent {
	uint64_t xn_client;
	uint32_t xn_cxid;
	uint32_t xn_gxid;
	struct gw_call *xn_call;	/* in flight; NULL once answered/cancelled */
	uint64_t xn_expires;		/* ms; meaningful when xn_call == NULL */
	struct gw_xent *xn_cnext;	/* chain by (client, client XID) */
	struct gw_xent *xn_gnext;	/* chain by gateway XID */
	TAILQ_ENTRY(gw_xent) xn_link;	/* free list or settled list (oldest first) */
	TAILQ_ENTRY(gw_xent) xn_slink;	/* its source's settled list (oldest first) */
	struct gw_xsrc *xn_src;		/* its source */
	bool xn_used;
	bool xn_settled;		/* on the settled lists (xn_link, xn_slink) */
};
/* What an add did to make room (append-only). */
enum gw_xevict {
	GW_XEVICT_NONE = 0,	/* a free entry was there */
	GW_XEVICT_OWN,		/* the adding source held its share: its own oldest answered entry */
	GW_XEVICT_LARGEST,	/* the oldest answered entry of the source holding the most */
};
struct gw_xmap;
struct gw_xmap *gw_xmap_new(unsigned capacity, uint32_t first_xid);
/* Workers: worker index of count allocates only gateway XIDs whose top
 * bits are its index, so no two workers' calls share an XID on the wire. */
void gw_xmap_set_slice(struct gw_xmap *m, unsigned index, unsigned count);
void gw_xmap_free(struct gw_xmap *m);
/* Entry for (client, cxid), or NULL; expired entries are dropped first. */
struct gw_xent *gw_xmap_find(struct gw_xmap *m, uint64_t client, uint32_t cxid, uint64_t now);
/* New entry of client (of source src) with a fresh gateway XID, in flight
 * for call.  When the map is full an answered entry is evicted as the
 * shares say (*evicted tells which); NULL only when every entry is in
 * flight. */
struct gw_xent *gw_xmap_add(struct gw_xmap *m, uint64_t client, uint64_t src, uint32_t cxid,
			    struct gw_call *call, uint64_t now, enum gw_xevict *evicted);
/* true when gxid is mapped (in flight or within its DRC window). */
bool gw_xmap_gxid_busy(struct gw_xmap *m, uint32_t gxid, uint64_t now);
/* Like gw_xmap_add, but the gateway XID is the client's own (RPCSEC_GSS);
 * NULL when that XID is busy (the caller waits) or every entry is in flight. */
struct gw_xent *gw_xmap_add_as(struct gw_xmap *m, uint64_t client, uint64_t src, uint32_t cxid,
			       struct gw_call *call, uint64_t now, enum gw_xevict *evicted);
struct gw_xent *gw_xmap_by_gxid(struct gw_xmap *m, uint32_t gxid);
/* The call is answered or cancelled: keep the mapping until now + window. */
void gw_xmap_settle(struct gw_xmap *m, struct gw_xent *xe, uint64_t now, unsigned window_ms);
/* Whether an answered call keeps its mapping for drc_window.  Not the
 * calls a server may run twice without harm, which no server's DRC needs
 * to recognise: NULL, the NFSv2/v3 procedures that change nothing (and
 * COMMIT), NFS_ACL GETACL, NFSv4.1+ COMPOUNDs that start with SEQUENCE,
 * whose replays the session's slot catches (RFC 8881 2.10.6), and other
 * NFSv4 COMPOUNDs made only of operations that change nothing. */
bool gw_xmap_keeps_answered(uint32_t prog, uint32_t vers, uint32_t proc,
			    const struct chk_call_walk *cw);
/* A retransmission takes a settled entry back in flight. */
void gw_xmap_attach(struct gw_xmap *m, struct gw_xent *xe, struct gw_call *call);
void gw_xmap_remove(struct gw_xmap *m, struct gw_xent *xe);
/* Drops the settled entries whose window ended by now (find and add do it too). */
void gw_xmap_expire(struct gw_xmap *m, uint64_t now);
unsigned gw_xmap_count(const struct gw_xmap *m);
/* Sources with an entry, and the entries of source src (0: none). */
unsigned gw_xmap_nsrc(const struct gw_xmap *m);
unsigned gw_xmap_src_count(const struct gw_xmap *m, uint64_t src);

#endif /* RPCRDMA_GW_XMAP_H */
