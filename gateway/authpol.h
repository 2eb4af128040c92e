/* SPDX-License-Identifier: MIT */
/*
 * authpol.h - the credential policy of client calls (prefix gw_authpol_).
 *
 * This file contains the one entry point gateway.c calls for every decoded
 * call before it is routed: squash (none, root, all) rewrites an AUTH_SYS
 * credential in place, reject_auth_none refuses AUTH_NONE outside the NULL
 * procedure; each client's listener has its own (config.h struct
 * cfg_policy), and a verified client certificate may set its squash.  RPCSEC_GSS and the other flavors are left to the server.
 */
#ifndef RPCRDMA_GW_AUTHPOL_H
#define RPCRDMA_GW_AUTHPOL_H

#include <stdint.h>

#include "chunking.h"
#include "config.h"
#include "pool.h"

struct gw_stats;

struct gw_client;

/* The policy is that of the listener that accepted cl, its squash mode the
 * one cl's certificate identity sets (tls_identity_squash) if any.
 * 0: the call goes on (rec may have been rewritten, same length); else the
 * auth_stat (RFC 5531 section 9) of the MSG_DENIED AUTH_ERROR answer. */
uint32_t gw_authpol_apply(const struct cfg *cf, const struct gw_client *cl, struct gw_rec *rec,
			  const struct rpc_call_hdr *hdr, struct gw_stats *st);

#endif /* RPCRDMA_GW_AUTHPOL_H */
