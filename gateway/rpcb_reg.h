/* SPDX-License-Identifier: MIT */
/*
 * This file contains rpcbind_register of rpcrdma-gw (rpcb_reg.c, prefix
 * gw_rpcb_).
 */
#ifndef RPCRDMA_GW_RPCB_REG_H
#define RPCRDMA_GW_RPCB_REG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct cfg;
struct gw_log;
struct gw_stats;

/* ------------------------------------------------------------------------
 * rpcbind_register
 * ------------------------------------------------------------------------ */
/*
 * rpcbind_register (rpcb_reg.c): the gateway's listeners in the LOCAL
 * rpcbind, so clients that ask rpcbind (the kernel's lockd for NLM, mount.nfs
 * for MOUNT) find the gateway.  The plan (what to register) is a pure
 * function of the configuration and the listener addresses; registering
 * goes through gw_rpcb_ops so tests can stand in for rpcbind.
 */
#define GW_RPCB_MAX	64	/* program/version/netid triples */

struct gw_rpcb_entry {
	uint32_t re_prog, re_vers;
	char re_netid[8];	/* "tcp", "tcp6", "udp" (NSM) or "udp6" */
	char re_uaddr[64];	/* universal address, RFC 5665 section 5.2.3 */
	uint16_t re_port;
	bool re_if_free;	/* NFS, NFS_ACL: only when nobody has it (nfsd usually does) */
	bool re_ours;		/* set by us (or our own stale entry): unset at exit */
};

/* What rpcbind_register sets for cf's routes on listeners addrs[0..naddrs):
 * each well-known routed program (MOUNT v1-3, NLM v1,3,4, NSM v1, NFS v3-4
 * and NFS_ACL v3 if free) at the versions its route serves, once per netid
 * (the first listener of each address family wins: rpcbind holds one
 * mapping per program/version/netid).  Returns the count, at most max. */
unsigned gw_rpcb_plan(const struct cfg *cf, const struct sockaddr_storage *addrs, unsigned naddrs,
		      struct gw_rpcb_entry *out, unsigned max);

/* Appends to out[0..n) NSM v1 over udp/udp6 for the UDP NSM listener's
 * addresses (nsm_udp.h; sm-notify asks rpcbind for udp only).  New count. */
unsigned gw_rpcb_plan_nsm_udp(const struct cfg *cf, const struct sockaddr_storage *addrs,
			      unsigned naddrs, struct gw_rpcb_entry *out, unsigned n, unsigned max);

struct gw_rpcb_ops {
	/* 0 set; 1 held by someone, its port in *holder; -1 failure (msg) */
	int (*ro_set)(uint32_t prog, uint32_t vers, const char *netid, const char *uaddr,
		      uint16_t *holder, char *msg, size_t msglen);
	/* 0 removed; 1 no longer ours, left; -1 failure (msg) */
	int (*ro_unset)(uint32_t prog, uint32_t vers, const char *netid, uint16_t port, char *msg,
			size_t msglen);
};
extern const struct gw_rpcb_ops gw_rpcb_tirpc;	/* the local rpcbind via libtirpc */

struct gw_rpcb_reg {
	const struct gw_rpcb_ops *rgr_ops;
	struct gw_rpcb_entry rgr_e[GW_RPCB_MAX];
	unsigned rgr_n;
};

/* Sets every planned entry; a conflict or failure is logged, counted and
 * skipped.  Returns how many entries are now ours. */
unsigned gw_rpcb_register(struct gw_rpcb_reg *rr, const struct gw_log *lg, struct gw_stats *st);
/* Unsets exactly the entries that are ours (idempotent). */
void gw_rpcb_unregister(struct gw_rpcb_reg *rr, const struct gw_log *lg, struct gw_stats *st);

#endif /* RPCRDMA_GW_RPCB_REG_H */
