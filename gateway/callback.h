/* SPDX-License-Identifier: MIT */
/*
 * This file contains the backchannel relay of rpcrdma-gw (callback.c,
 * prefixes gw_cb_, gw_cbs_, gw_cbr_): the pieces that carry NFSv4.1
 * callbacks from a server to the client connection that owns the session.
 */
#ifndef RPCRDMA_GW_CALLBACK_H
#define RPCRDMA_GW_CALLBACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "chunking.h"

struct gw_path;

/* ------------------------------------------------------------------------
 * Backchannel relay - callback.c (pure state; the glue is in relay.c)
 *
 * The server sends NFSv4.1 callbacks on the RDMA connection a session's
 * CREATE_SESSION (or BIND_CONN_TO_SESSION) came on, i.e. to the gateway.
 * The session map says which client TCP connection owns each session's
 * back channel (RFC 8881 2.10.3.1: CREATE_SESSION4_FLAG_CONN_BACK_CHAN,
 * BIND_CONN_TO_SESSION with CDFS4_BACK or CDFS4_BOTH); the relay table
 * keeps each callback forwarded to a client under a gateway XID until the
 * client's REPLY comes back on that same connection.
 * ------------------------------------------------------------------------ */
#define GW_CB_SESSIONID_LEN	CHK_NFS4_SESSIONID_SIZE
#define GW_CB_TIMEOUT_MS	5000	/* below nfsd's callback timeout (lease/10: 9 s by default) */

/* The decoders it routes by are chunking's chk_cb_parse_*() (nfs_cb.c). */

/* Session map: sessionid -> owning client connection (opaque pointer)
 * and the client key it had (gw_client_key). */
struct gw_cb_sessions;
struct gw_cb_sessions *gw_cbs_new(unsigned capacity);
void gw_cbs_free(struct gw_cb_sessions *m);
/* The connection owner took the session's back channel; true when that
 * changed the map (new session or new owner). */
bool gw_cbs_bind(struct gw_cb_sessions *m, const uint8_t *sid, void *owner, uint64_t key);
/* SEQUENCE seen on owner: re-binds only a session that has no live owner
 * and was owned under the same client key (a reconnect of that client);
 * never takes a session away from a live connection.  true when re-bound. */
bool gw_cbs_seen(struct gw_cb_sessions *m, const uint8_t *sid, void *owner, uint64_t key);
void *gw_cbs_owner(const struct gw_cb_sessions *m, const uint8_t *sid);
/* owner closed: its sessions become ownerless (their key is kept). */
void gw_cbs_owner_gone(struct gw_cb_sessions *m, const void *owner);
unsigned gw_cbs_count(const struct gw_cb_sessions *m);
unsigned gw_cbs_ownerless(const struct gw_cb_sessions *m);

/* Relay table: callbacks forwarded and not yet answered. */
struct gw_cb_pend {
	bool cbp_used;
	void *cbp_conn;			/* client connection it was sent to */
	uint32_t cbp_cxid;		/* gateway XID on that connection */
	uint32_t cbp_sxid;		/* server's XID */
	void *cbp_handle;		/* transport's handle of the server's CALL */
	struct gw_path *cbp_path;
	uint64_t cbp_deadline_ms;
};
struct gw_cb_relay;
struct gw_cb_relay *gw_cbr_new(unsigned capacity, uint32_t first_xid);
void gw_cbr_free(struct gw_cb_relay *r);
/* A slot with a gateway XID unique among those pending on conn; NULL when full. */
struct gw_cb_pend *gw_cbr_add(struct gw_cb_relay *r, void *conn, uint32_t sxid, void *handle,
			      struct gw_path *path, uint64_t deadline_ms);
struct gw_cb_pend *gw_cbr_find(struct gw_cb_relay *r, const void *conn, uint32_t cxid);
void gw_cbr_remove(struct gw_cb_relay *r, struct gw_cb_pend *p);
/* Any pending entry with conn (NULL: any at all) / with a deadline <= now. */
struct gw_cb_pend *gw_cbr_first_of(struct gw_cb_relay *r, const void *conn);
struct gw_cb_pend *gw_cbr_first_expired(struct gw_cb_relay *r, uint64_t now_ms);
/* Any pending entry whose server CALL came over path. */
struct gw_cb_pend *gw_cbr_first_of_path(struct gw_cb_relay *r, const struct gw_path *path);
unsigned gw_cbr_count(const struct gw_cb_relay *r);

#endif /* RPCRDMA_GW_CALLBACK_H */
