/* SPDX-License-Identifier: MIT */
/*
 * This file contains the server reboot relay of rpcrdma-gw (nlm_notify.c,
 * prefix gw_sn_): when a server's statd says the server rebooted (NSM
 * SM_NOTIFY, sent to the gateway, the only host its lockd knew), the
 * gateway tells the statd of each NFSv3 lock client host behind it, so
 * that their lockd reclaims their locks during the server's grace period.
 *
 * nlm_map.c decides that a notification is a server's and which hosts
 * hear of it; this module queues one SM_NOTIFY per host (nsm.x stat_chge:
 * mon_name, state) and sends them through a relay of its own (nlm_grant.h:
 * rpcbind at the client host for NSM version 1 over TCP, one connection
 * per notification, GW_NG_SLOTS at once, GW_NG_TIMEOUT_S each).  Bounded:
 * GW_SN_QUEUE hosts waiting, each at most once (a later reboot only
 * updates its state), all allocated with the relay.
 */
#ifndef RPCRDMA_GW_NLM_NOTIFY_H
#define RPCRDMA_GW_NLM_NOTIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nlm_grant.h"

struct event_base;
struct gw_log;
struct gw_stats;
struct xdr_cur;

#define GW_SN_QUEUE	512	/* hosts waiting for their notification (>= GW_NLM_MAX_HOSTS) */
#define GW_SN_NAME_MAX	1024	/* SM_MAXSTRLEN (nsm.x): the server's mon_name */

struct gw_sn;
struct gw_sn *gw_sn_new(struct event_base *base, struct gw_stats *st, const struct gw_log *lg);
void gw_sn_free(struct gw_sn *sn);

/* The arguments of an SM_NOTIFY (nsm.x stat_chge) at xc: mon_name into
 * name (NUL-terminated, at most len - 1 bytes), the new state.  false: not
 * one (too long, cut short). */
bool gw_sn_decode(struct xdr_cur *xc, char *name, size_t len, int32_t *state);

/* Queue an SM_NOTIFY with state for the statd of host (an address, no
 * port); sent as relay slots allow.  false: the queue is full (counted as
 * a notification not delivered, logged). */
bool gw_sn_queue(struct gw_sn *sn, const char *host, int32_t state);
/* Notifications queued or on their way (tests, logs). */
unsigned gw_sn_pending(const struct gw_sn *sn);
/* Tests stand in for rpcbind with fn (default gw_rpcbind_getport). */
void gw_sn_set_getport(struct gw_sn *sn, gw_ng_getport_fn *fn);

#endif /* RPCRDMA_GW_NLM_NOTIFY_H */
