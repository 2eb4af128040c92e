/* SPDX-License-Identifier: MIT */
/*
 * This file contains the interface of the NFSv4.0 callback relay of
 * rpcrdma-gw (cb40.c, prefix gw_cb40_): the SETCLIENTID rewrite of
 * cb_location (RFC 7530 16.33) to a callback listener of the gateway's
 * own, and the relay of the server's CB_NULL / CB_COMPOUND calls on that
 * listener to the client's original callback address and of the replies
 * back (RFC 7530 3.3.3, 20).  NFSv4.1 callbacks travel on the session's
 * back channel instead (callback.h).
 */
#ifndef RPCRDMA_GW_CB40_H
#define RPCRDMA_GW_CB40_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "chunking.h"
#include "config.h"

struct gw_call;
struct gw_ctx;
struct gw_rec;

#define GW_CB40_NETID_MAX	16	/* "tcp", "tcp6" (RFC 5665 5.2.3) */
#define GW_CB40_UADDR_MAX	64	/* longest IPv6 uaddr: 39 + ".p1.p2" */
#define GW_CB40_TIMEOUT_MS	5000	/* below nfsd's callback timeout (lease/10) */

/* SETCLIENTID4args as far as the rewrite needs them (stream positions
 * counted from the XID). */
struct gw_cb40_sci {
	uint64_t sc4_idhash;		/* nfs_client_id4 id (FNV-1a) */
	uint32_t sc4_prog;		/* cb_program */
	uint32_t sc4_ident;		/* callback_ident */
	size_t sc4_prog_pos;		/* position of cb_program */
	size_t sc4_loc_pos;		/* cb_location: r_netid's length word */
	size_t sc4_loc_end;		/* after r_addr (callback_ident) */
	char sc4_netid[GW_CB40_NETID_MAX];
	char sc4_addr[GW_CB40_UADDR_MAX];
};

/* A COMPOUND call of minor version 0 whose first operation is
 * SETCLIENTID (clients send it alone): the calls the relay rewrites. */
static inline bool gw_cb40_is_setclientid(const struct rpc_call_hdr *h,
					  const struct chk_call_walk *w)
{
	return h->rc_prog == CFG_PROG_NFS && h->rc_vers == 4 && h->rc_proc == CHK_NFSPROC4_COMPOUND &&
	       w->cw_minor == 0 && w->cw_nops_listed >= 1 && w->cw_op[0] == CHK_OP_SETCLIENTID;
}

/* Pure pieces (unit-tested). */
bool gw_cb40_parse_setclientid(const struct iovec *iov, unsigned niov, struct gw_cb40_sci *s);
/* The record r with cb_program = prog and cb_location = (netid, uaddr)
 * into out; its length, 0 when it does not fit cap. */
size_t gw_cb40_rewrite(const struct gw_rec *r, const struct gw_cb40_sci *s, uint32_t prog,
		       const char *netid, const char *uaddr, uint8_t *out, size_t cap);
/* RFC 5665 universal address of netid "tcp" or "tcp6" to a socket address. */
bool gw_cb40_uaddr_parse(const char *netid, const char *uaddr, struct sockaddr_storage *ss,
			 socklen_t *len);
/* And back: netid (>= GW_CB40_NETID_MAX) and uaddr (>= GW_CB40_UADDR_MAX). */
bool gw_cb40_uaddr_fmt(const struct sockaddr *sa, char *netid, char *uaddr);
/* SETCLIENTID4res resok: the clientid; false for an error or another reply. */
bool gw_cb40_parse_reply(const struct iovec *iov, unsigned niov, uint64_t *clientid);

/* The relay, one per gateway context.  Opens its listener when the mode is
 * relay and the context has an event base. */
struct gw_cb40;
struct gw_cb40 *gw_cb40_new(struct gw_ctx *gw);
void gw_cb40_free(struct gw_cb40 *c4);
/* A SETCLIENTID call (gw_cb40_is_setclientid) on its way to the server:
 * its cb_location rewritten as v40_callbacks says.  true when the record
 * changed (the caller walks it again). */
bool gw_cb40_on_call(struct gw_cb40 *c4, struct gw_call *c);
/* Its reply: the clientid the server gave (logs, gwctl). */
void gw_cb40_on_reply(struct gw_cb40 *c4, struct gw_call *c, const struct iovec *iov,
		      unsigned niov);

#endif /* RPCRDMA_GW_CB40_H */
