/* SPDX-License-Identifier: MIT */
/*
 * rpcbind.h - port lookup through the server's rpcbind (libtirpc).  Kept
 * apart from the other gateway headers because <rpc/rpc.h> and chunking.h
 * both define RPC_SUCCESS and RPC_MISMATCH.  Blocking: call it off the
 * event loop.
 */
#ifndef RPCRDMA_GW_RPCBIND_H
#define RPCRDMA_GW_RPCBIND_H

#include <stddef.h>
#include <stdint.h>

/* Once, on the main thread, before any thread may call libtirpc: libtirpc
 * 1.3.3 creates its AUTH_NONE handle on first use and tests for it outside
 * its lock, so two threads' first calls (a lookup and an rpcbind
 * registration) may both allocate it and one copy leaks (LeakSanitizer). */
void gw_rpcbind_init(void);
/* TCP port of (prog, vers) on host, asked of host's rpcbind (GETADDR,
 * else PMAP GETPORT); 0; -1 rpcbind answered that the program is not
 * registered; -2 rpcbind did not answer (the host's name, a refused or
 * unreachable port 111, a timeout): the reason in msg either way. */
int gw_rpcbind_getport(const char *host, int family, uint32_t prog, uint32_t vers, uint16_t *port,
		       char *msg, size_t msglen);

/* The local rpcbind (rpcbind_register, see rpcb_reg.h).  netid is "tcp" or
 * "tcp6", uaddr a universal address (RFC 5665 section 5.2.3).  Blocking:
 * run at start and exit only. */
/* 0 set; 1 someone holds (prog, vers, netid) already, its port in *holder;
 * -1 failure with a reason in msg. */
int gw_rpcbind_set(uint32_t prog, uint32_t vers, const char *netid, const char *uaddr,
		   uint16_t *holder, char *msg, size_t msglen);
/* Removes (prog, vers, netid) only while it still names port: 0 removed,
 * 1 left alone (gone, or someone else's now), -1 failure with msg. */
int gw_rpcbind_unset(uint32_t prog, uint32_t vers, const char *netid, uint16_t port, char *msg,
		     size_t msglen);

/* Binds the socket fd to a reserved port no other socket holds
 * (bindresvport_sa(), SO_REUSEADDR must be unset): the port, or -errno
 * (-EACCES without the privilege). */
int gw_rpcbind_bindresv(int fd);

#endif /* RPCRDMA_GW_RPCBIND_H */
