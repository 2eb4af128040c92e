/* SPDX-License-Identifier: MIT */
/*
 * This file contains the NLM grant relay of rpcrdma-gw (nlm_grant.c,
 * prefix gw_ng_): a server's NLM GRANTED_MSG for a blocked lock, sent to
 * the gateway (the only host the server's lockd knows), carried on to the
 * client host whose lock it is.
 *
 * The grant goes where NLM's own callbacks go (XNFS, NLM chapters): to the
 * NLM service that the client host's rpcbind names, over a TCP connection
 * of the relay's own, one per grant.  nlm_map.c decides what is a grant
 * and for whom; this module only finds the port (rpcbind, on a helper
 * thread: it blocks) and delivers.  Bounded: GW_NG_SLOTS grants at once,
 * GW_NG_PER_HOST of them to one client host, GW_NG_MSG_MAX bytes each, all
 * allocated with the relay.
 */
#ifndef RPCRDMA_GW_NLM_GRANT_H
#define RPCRDMA_GW_NLM_GRANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "log.h"

struct event_base;
struct gw_log;
struct gw_stats;

#define GW_NG_SLOTS	8	/* grants on their way at once */
#define GW_NG_PER_HOST	2	/* ... to one client host: a host slow to answer holds no more */
#define GW_NG_MSG_MAX	6144	/* one GRANTED_MSG: header, cookie, caller, fh, oh (nlm4.x) */
#define GW_NG_TIMEOUT_S	10	/* connect, send and the client's answer */

/* Finds host's port of (prog, vers) over TCP: gw_rpcbind_getport's shape
 * (rpcbind.h).  Runs on a helper thread. */
typedef int gw_ng_getport_fn(const char *host, int family, uint32_t prog, uint32_t vers,
			     uint16_t *port, char *msg, size_t msglen);

struct gw_ng;
struct gw_ng *gw_ng_new(struct event_base *base, struct gw_stats *st, const struct gw_log *lg);
/* Waits for running rpcbind lookups (bounded by libtirpc's timeout). */
void gw_ng_free(struct gw_ng *ng);

/* Sends the call in iov (from the XID on, len bytes) to the NLM service
 * (version vers) of client host (an address, no port).  false: not taken
 * (no free slot, GW_NG_PER_HOST on their way to host already, too long),
 * counted and logged as a failed grant. */
bool gw_ng_relay(struct gw_ng *ng, const char *host, uint32_t vers, const struct iovec *iov,
		 unsigned niov, size_t len);
/* What the relay carries, for its lookups, counters and log lines: by
 * default NLM grants; the servers' reboot notifications (nlm_notify.c) go
 * to NSM with a relay of their own.  done(arg) runs whenever a slot comes
 * free (from the loop, or from inside gw_ng_relay when a start fails). */
void gw_ng_set_kind(struct gw_ng *ng, uint32_t prog, const char *what, const char *hint,
		    enum gw_ctr ok, enum gw_ctr failed);
void gw_ng_set_done(struct gw_ng *ng, void (*fn)(void *arg), void *arg);
/* Tests stand in for rpcbind with fn (default gw_rpcbind_getport). */
void gw_ng_set_getport(struct gw_ng *ng, gw_ng_getport_fn *fn);
/* Grants still on their way (tests). */
unsigned gw_ng_busy(const struct gw_ng *ng);

#endif /* RPCRDMA_GW_NLM_GRANT_H */
