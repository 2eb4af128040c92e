/* SPDX-License-Identifier: MIT */
/*
 * rpcbind.h - port lookup through the server's rpcbind (libtirpc).  Kept
 * apart from gateway.h because <rpc/rpc.h> and chunking.h both define
 * RPC_SUCCESS and RPC_MISMATCH.  Blocking: call it off the event loop.
 */
#ifndef RPCRDMA_GW_RPCBIND_H
#define RPCRDMA_GW_RPCBIND_H

#include <stddef.h>
#include <stdint.h>

/* TCP port of (prog, vers) on host, asked with rpcb_getaddr(); 0, or -1
 * with a reason in msg. */
int gw_rpcbind_getport(const char *host, int family, uint32_t prog, uint32_t vers, uint16_t *port,
		       char *msg, size_t msglen);

#endif /* RPCRDMA_GW_RPCBIND_H */
