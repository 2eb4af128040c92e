/* SPDX-License-Identifier: MIT */
/*
 * This file contains the NLM share map of rpcrdma-gw (nlm_share.c, prefix
 * gw_nsh_): DOS share reservations (NLM SHARE and UNSHARE, procedures 20
 * and 21 of v3 and v4) that stay per client through the gateway.
 *
 * Linux lockd keys a share by (host, oh), and it sees every client at the
 * gateway's address: two clients with the same oh would be one share owner.
 * The gateway sends oh' = tag(slot) || oh, four bytes longer (the call is
 * re-encoded), remembers the shares the server granted per client host,
 * and UNSHAREs them when that client reboots (nlm_map.c calls in).
 */
#ifndef RPCRDMA_GW_NLM_SHARE_H
#define RPCRDMA_GW_NLM_SHARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct gw_log;
struct gw_rec;
struct gw_stats;

#define GW_NSH_PROC_SHARE	20
#define GW_NSH_PROC_UNSHARE	21
#define GW_NSH_TAG_LEN		4	/* bytes the gateway puts before a client's oh */
#define GW_NSH_OH_MAX		1020	/* client oh: oh' stays within MAXNETOBJ_SZ (nlm4.x) */
#define GW_NSH_FH_MAX		64	/* NFSv3 file handle (RFC 1813 2.4) */
#define GW_NSH_PER_HOST		16	/* tracked shares per client host */
#define GW_NSH_MSG_MAX		1536	/* one UNSHARE the map builds */
#define GW_NSH_COOKIE		"gwrs"	/* the cookie of those UNSHAREs (4 bytes) */

/* What became of a SHARE or UNSHARE call (gw_nsh_map_call). */
enum gw_nsh_verdict {
	GW_NSH_MAPPED = 0,	/* out holds the call with oh' */
	GW_NSH_REFUSED,		/* not to be forwarded: answered by the gateway */
};

/* Sends one UNSHARE the map built (msg from the XID on); false: not sent. */
typedef bool (*gw_nsh_send_fn)(void *arg, const uint8_t *msg, size_t len);

struct gw_nsh;
struct gw_nsh *gw_nsh_new(struct gw_stats *st, const struct gw_log *lg);
void gw_nsh_free(struct gw_nsh *ns);

/* SHARE or UNSHARE (proc) of client host, which holds slot (< 511), in
 * rec (arguments at args_pos): the call re-encoded into out (cap bytes)
 * with oh', its length in *len.  GW_NSH_REFUSED (counted, logged) when the
 * arguments do not decode, oh or fh is too long, out is too small, or a
 * new SHARE would pass the host's GW_NSH_PER_HOST. */
enum gw_nsh_verdict gw_nsh_map_call(struct gw_nsh *ns, const char *host, unsigned slot,
				    uint32_t proc, const struct gw_rec *rec, size_t args_pos,
				    uint8_t *out, size_t cap, size_t *len);
/* The server's reply (iov, from the XID on) to a mapped call (call, the
 * mapped record): a granted SHARE tracked, a granted UNSHARE forgotten. */
void gw_nsh_on_reply(struct gw_nsh *ns, const char *host, uint32_t vers, uint32_t proc,
		     const struct gw_rec *call, size_t args_pos, const struct iovec *iov,
		     unsigned niov);
/* Shares tracked for slot now. */
unsigned gw_nsh_count(const struct gw_nsh *ns, unsigned slot);
/* The client of slot (named host) rebooted: one UNSHARE per tracked share
 * through send (xid from *xid on), then none is tracked.  Returns the
 * number sent; *failed those that could not be. */
unsigned gw_nsh_release(struct gw_nsh *ns, unsigned slot, const char *host, uint32_t *xid,
			gw_nsh_send_fn send, void *arg, unsigned *failed);

/* The server rebooted and lost slot's shares: none is tracked, none sent. */
void gw_nsh_forget(struct gw_nsh *ns, unsigned slot);

#endif /* RPCRDMA_GW_NLM_SHARE_H */
