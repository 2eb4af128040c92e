/* SPDX-License-Identifier: MIT */
/*
 * This file contains the NLM lock-owner map of rpcrdma-gw (nlm_map.c,
 * prefix gw_nlm_): NFSv3 locks that stay per-client through the gateway.
 *
 * The server's lockd sees every client at the gateway's address, and
 * keys lock owners by (host, svid): two clients whose owners carry the
 * same svid would share one owner there.  The gateway gives each client
 * host a slot and sends svid' = (slot + 1) << 22 | svid (in place, the
 * call keeps its size), maps svid' back in NLM_TEST's holder, remembers
 * which (file handle, svid') it saw granted, and turns a client's reboot
 * notification (NSM SM_NOTIFY, NLM FREE_ALL) into an UNLOCK of each of
 * that client's locks only.  A call whose owner it cannot map (an svid of
 * 2^22 or more, no slot for its host, a caller_name that is no host name)
 * is refused, never forwarded as it came: its owner could be another
 * client's svid'.
 */
#ifndef RPCRDMA_GW_NLM_MAP_H
#define RPCRDMA_GW_NLM_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct gw_call;
struct gw_ctx;
struct gw_log;
struct gw_ng;
struct gw_rec;
struct gw_sn;
struct gw_stats;

#define GW_NLM_SVID_BITS	22	/* svids the map carries: 0 .. 2^22 - 1 (Linux pid_max) */
#define GW_NLM_MAX_HOSTS	511	/* (slot + 1) << 22 stays a positive int32 */
#define GW_NLM_LOCKS_PER_HOST	64	/* tracked (fh, svid') per client host */
#define GW_NLM_FH_MAX		64	/* NFSv3 file handle (RFC 1813 2.4, NFS3_FHSIZE) */
#define GW_NLM_REL_MAX		256	/* bytes of one UNLOCK the map builds */
#define GW_NLM_NAME_MAX		255	/* caller_name: a host name (RFC 1035 2.3.4) or address */
#define GW_NLM_QUIET_MS		300000	/* a host's slot kept this long after its last lock call */

/* What the gateway does with a call after gw_nlm_on_call. */
enum gw_nlm_act {
	GW_NLM_FORWARD = 0,	/* to the route, owner mapped where there was one */
	GW_NLM_ANSWER,		/* a client's reboot notification: answered here (void) */
	GW_NLM_REFUSE,		/* a SHARE or UNSHARE the map cannot carry: SYSTEM_ERR here */
	GW_NLM_NOLOCKS,		/* owner not mapped: the NLM result DENIED_NOLOCKS here
				 * (gw_nlm_nolocks_res; SYSTEM_ERR when it has none) */
	GW_NLM_GARBAGE,		/* arguments that do not decode: GARBAGE_ARGS here */
	GW_NLM_PROC_UNAVAIL,	/* an NSM procedure of a host's own statd: PROC_UNAVAIL here */
	GW_NLM_TOOWEAK,		/* a server's reboot from an unreserved port: AUTH_TOOWEAK here */
};

/* Sends one UNLOCK the map built (msg from the XID on); false: not sent. */
typedef bool (*gw_nlm_send_fn)(void *arg, const uint8_t *msg, size_t len);

/* AUTH_SYS root "rpcrdma-gw": the credential of the gateway's own NLM calls. */
struct rpc_auth_sys;
extern const struct rpc_auth_sys gw_nlm_cred;

struct gw_nlm;
struct gw_nlm *gw_nlm_new(struct gw_stats *st, const struct gw_log *lg);
void gw_nlm_free(struct gw_nlm *nm);
void gw_nlm_set_sender(struct gw_nlm *nm, gw_nlm_send_fn fn, void *arg);
/* Pool buffers for re-encoded SHARE calls (gw_nlm_attach sets the gateway's;
 * without one, SHARE and UNSHARE are refused). */
struct gw_pool;
void gw_nlm_set_pool(struct gw_nlm *nm, struct gw_pool *pool);

/* A call of NLM or NSM from client host (its address, no port) in rec,
 * header hdr-decoded: owners mapped in place, a SHARE or UNSHARE re-encoded
 * into a pool buffer (nlm_share.h; GW_NLM_REFUSE when it cannot be), or the
 * host's locks and shares released (SM_NOTIFY, FREE_ALL: GW_NLM_ANSWER). */
enum gw_nlm_act gw_nlm_on_call(struct gw_nlm *nm, const char *host, uint32_t prog, uint32_t vers,
			       uint32_t proc, struct gw_rec *rec, size_t args_pos);
/* The result of NLM call proc (vers, record rec, arguments at args_pos)
 * refused with DENIED_NOLOCKS (nlm4.x nlm4_res, nlm4_testres,
 * nlm4_shareres: the call's cookie, the status) into out: its length, or
 * 0 when the call has no result (the _MSG forms) or it does not fit cap. */
size_t gw_nlm_nolocks_res(const struct gw_rec *rec, size_t args_pos, uint32_t proc, uint8_t *out,
			  size_t cap);
/* The server's reply (iov, from the XID on) to a call gw_nlm_on_call
 * forwarded: TEST's holder mapped back, LOCK/UNLOCK tracked. */
void gw_nlm_on_reply(struct gw_nlm *nm, const char *host, uint32_t vers, uint32_t proc,
		     const struct gw_rec *call, size_t args_pos, const struct iovec *iov,
		     unsigned niov);
/* Locks of host tracked now (tests, logs). */
unsigned gw_nlm_host_locks(const struct gw_nlm *nm, const char *host);

/* Workers: every worker's client hosts by slot, so that a server's grant
 * that lands on one worker reaches a client of another (a mutex, taken when
 * a slot gets a host and for such a grant only). */
struct gw_nlm_names;
struct gw_nlm_names *gw_nlm_names_new(void);
void gw_nlm_names_free(struct gw_nlm_names *nn);

/* The relay of the servers' grants (nlm_grant.h), NULL without a loop. */
struct gw_ng *gw_nlm_grants(struct gw_nlm *nm);
/* The relay of the servers' reboots (nlm_notify.h), NULL without a loop. */
struct gw_sn *gw_nlm_notifier(struct gw_nlm *nm);

/* Gateway glue: the map of gw, its internal client for the UNLOCKs. */
int gw_nlm_attach(struct gw_ctx *gw);
void gw_nlm_detach(struct gw_ctx *gw);
/* gw_on_record / gw_call_complete hooks for NLM and NSM calls; xc (the
 * call's cursor at its arguments) is set again on the call's record. */
struct xdr_cur;
enum gw_nlm_act gw_nlm_call(struct gw_ctx *gw, struct gw_call *c, struct xdr_cur *xc);
void gw_nlm_reply(struct gw_ctx *gw, struct gw_call *c, const struct iovec *iov, unsigned niov);
/* Answers call c, which gw_nlm_call did not forward (act), itself: void
 * for a client's reboot notification, else the refusal act names. */
void gw_nlm_answer(struct gw_call *c, enum gw_nlm_act act);
/* An SM_NOTIFY that came over UDP (nsm_udp.c) from host, source port port,
 * xc at its arguments: from a backend's address and a reserved port the
 * server rebooted, relayed as one over TCP is (GW_NLM_ANSWER); from a
 * backend's address and another port refused (GW_NLM_TOOWEAK, counted and
 * logged: sm-notify sends from a reserved port); else GW_NLM_FORWARD, and
 * gw_nlm_host_rebooted releases that client host's locks and shares on the
 * worker that tracks them. */
enum gw_nlm_act gw_nlm_server_notify(struct gw_ctx *gw, const char *host, unsigned port,
				     struct xdr_cur *xc);
void gw_nlm_host_rebooted(struct gw_ctx *gw, const char *host);

#endif /* RPCRDMA_GW_NLM_MAP_H */
