/* SPDX-License-Identifier: MIT */
/*
 * This file contains what the three files of the NLM owner map share
 * (private to gateway/): the map's structures and the functions one file
 * offers the others.  nlm_host.c keeps the table of client hosts (a slot
 * per host, the svid' spaces, which slot may be given to another host);
 * nlm_map.c rewrites the owners of calls and replies and releases a
 * rebooted client's locks; nlm_hooks.c is the glue to the gateway (the
 * calls' hooks, the map's own client, the servers' grants and reboots).
 */
#ifndef RPCRDMA_GW_NLM_INT_H
#define RPCRDMA_GW_NLM_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chunking.h"
#include "log.h"
#include "nlm_map.h"

struct event;
struct gw_client;
struct gw_out;

#define NM_SVID_MASK	((1u << GW_NLM_SVID_BITS) - 1)
#define NM_XDR_MAX	1024	/* LM_MAXSTRLEN, MAXNETOBJ_SZ (nlm4.x) */
#define NM_NSM_NOTIFY	6	/* SM_NOTIFY (nsm.x) */
#define NM_NAME_MAX	48	/* a client host's name: an address, no port */

/* NLM procedures (nlm4.x; v1 has 1-16, v3 and v4 add 20-23). */
enum {
	NM_TEST = 1, NM_LOCK, NM_CANCEL, NM_UNLOCK, NM_GRANTED, NM_TEST_MSG, NM_LOCK_MSG,
	NM_CANCEL_MSG, NM_UNLOCK_MSG, NM_GRANTED_MSG, NM_NM_LOCK = 22, NM_FREE_ALL = 23
};

struct gw_nlm_lock {			/* a lock the server granted to a mapped owner */
	int32_t nl_svid;		/* mapped */
	uint32_t nl_vers;
	uint8_t nl_fhlen;
	uint8_t nl_fh[GW_NLM_FH_MAX];
};

struct gw_nlm_host {
	bool nh_used;
	char nh_name[NM_NAME_MAX];	/* client address, no port */
	uint8_t nh_src[16];		/* its source (nlm_host.c): the address, an IPv6 /64 */
	uint64_t nh_seq;		/* last use (LRU among hosts with no lock) */
	uint64_t nh_lock_ms;		/* its last LOCK, NM_LOCK or SHARE sent (0: none) */
	unsigned nh_nlocks;
	struct gw_nlm_lock nh_locks[GW_NLM_LOCKS_PER_HOST];
};

struct gw_nlm_names {
	pthread_mutex_t nn_mu;
	uint64_t nn_epoch;		/* server reboots: each worker forgets its locks */
	char nn_name[GW_NLM_MAX_HOSTS][NM_NAME_MAX];
};

struct gw_nlm {
	struct gw_stats *nm_st;
	const struct gw_log *nm_lg;
	gw_nlm_send_fn nm_send;
	void *nm_send_arg;
	uint64_t nm_seq;
	uint32_t nm_xid;		/* XIDs of the UNLOCKs it builds */
	/* gateway glue (gw_nlm_attach) */
	struct gw_ctx *nm_gw;
	struct gw_client *nm_cl;	/* the UNLOCKs' client: replies come back here */
	struct event *nm_ev;		/* finishes delivered replies from the loop */
	struct gw_ng *nm_ng;		/* the servers' grants on their way to clients */
	struct gw_sn *nm_sn;		/* the servers' reboots on their way to clients */
	uint64_t nm_epoch;		/* the last server reboot seen (gw_nlm_names) */
	struct gw_out *nm_done[64];
	unsigned nm_ndone;
	unsigned nm_lo, nm_hi;		/* this worker's slots (gw_nlm_set_slice) */
	struct gw_nlm_names *nm_names;	/* every worker's hosts, or NULL (one worker) */
	struct gw_nsh *nm_nsh;		/* the hosts' shares (nlm_share.c), by slot */
	struct gw_pool *nm_pool;	/* buffers for re-encoded SHARE calls */
	uint64_t nm_quiet_ms;		/* GW_NLM_QUIET_MS (tests shorten it) */
	struct gw_nlm_host nm_hosts[GW_NLM_MAX_HOSTS];
};

/* An alock (nlm_lock, nlm4_lock) as far as the map needs it. */
struct gw_nlm_alock {
	struct xdr_span na_caller;	/* caller_name */
	struct xdr_span na_fh;
	size_t na_svid_pos;
	int32_t na_svid;
	uint64_t na_off, na_len;
};

/* ---- nlm_host.c: the table of client hosts ---- */
static inline unsigned gw_nlm_slot(const struct gw_nlm *nm, const struct gw_nlm_host *h)
{
	return (unsigned)(h - nm->nm_hosts);
}
/* The host named name (an address), made if create and a slot may be
 * given to it; else NULL, and with create why not into *full
 * (GW_CTR_NLM_HOSTS_FULL, GW_CTR_NLM_SOURCE_FULL). */
struct gw_nlm_host *gw_nlm_host_get(struct gw_nlm *nm, const char *name, bool create,
				    enum gw_ctr *full);
/* The client's owner of mapped svid m (its svid into *svid), or NULL
 * when m is no mapped svid of this worker's hosts. */
struct gw_nlm_host *gw_nlm_owner(struct gw_nlm *nm, int32_t m, int32_t *svid);
/* Workers: worker index of count maps hosts only to its share of the slots. */
void gw_nlm_set_slice(struct gw_nlm *nm, unsigned index, unsigned count);
/* Every worker's host of slot into out; false: none. */
bool gw_nlm_names_get(struct gw_nlm_names *nn, unsigned slot, char *out, size_t len);
/* The server rebooted: nothing of this worker's hosts is on it any more. */
void gw_nlm_forget_all(struct gw_nlm *nm);
/* Another worker saw a server reboot since this one last looked. */
void gw_nlm_epoch_check(struct gw_nlm *nm);

/* ---- nlm_map.c: calls, replies, a client's reboot ---- */
/* The alock of call rec (arguments at args_pos) of proc into *a, xc left
 * on rec for its spans; false: no alock, or it does not decode. */
bool gw_nlm_call_alock(const struct gw_rec *rec, size_t args_pos, uint32_t vers, uint32_t proc,
		       struct xdr_cur *xc, struct gw_nlm_alock *a);
/* The server granted (granted_lock) or wholly unlocked the mapped owner
 * of a (spans in xc) for host: remembered or forgotten. */
void gw_nlm_track(struct gw_nlm *nm, const char *host, const struct gw_nlm_alock *a,
		  const struct xdr_cur *xc, uint32_t vers, bool granted_lock);
/* Client host rebooted (why: what said so): its locks and shares released. */
void gw_nlm_release_host(struct gw_nlm *nm, const char *host, const char *why);

#endif /* RPCRDMA_GW_NLM_INT_H */
