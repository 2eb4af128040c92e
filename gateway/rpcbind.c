// SPDX-License-Identifier: MIT
/*
 * This file contains the rpcbind lookup of the TCP transport: libtirpc's
 * rpcb_getaddr() (RPCBIND v4/v3 GETADDR, falling back to PMAP GETPORT).
 * It blocks, so the TCP transport runs it in its resolver thread.  Also
 * the local registrations of rpcbind_register (rpcb_reg.c), at start and
 * exit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <rpc/rpc.h>

#include "rpcbind.h"

int gw_rpcbind_getport(const char *host, int family, uint32_t prog, uint32_t vers, uint16_t *port,
		       char *msg, size_t msglen)
{
	struct netconfig *nc = getnetconfigent(family == AF_INET6 ? "tcp6" : "tcp");
	struct sockaddr_storage ss;
	struct netbuf nb = { .maxlen = sizeof(ss), .len = 0, .buf = &ss };
	bool_t ok;

	if (!nc) {
		snprintf(msg, msglen, "no netconfig entry for tcp");
		return -1;
	}
	memset(&ss, 0, sizeof(ss));
	ok = rpcb_getaddr(prog, vers, nc, &nb, host);
	freenetconfigent(nc);
	if (!ok) {
		const char *why = clnt_spcreateerror("");

		while (*why == ':' || *why == ' ')	/* it starts with ": " */
			why++;
		snprintf(msg, msglen, "rpcbind on %s: no program %u version %u over tcp (%s)", host, prog,
			 vers, why);
		return -1;
	}
	*port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
					 : ntohs(((struct sockaddr_in *)&ss)->sin_port);
	return *port ? 0 : -1;
}

/* Port the local rpcbind maps (prog, vers, netid) to; 0 when none. */
static uint16_t gw_rpcbind_local_port(uint32_t prog, uint32_t vers, struct netconfig *nc)
{
	struct sockaddr_storage ss;
	struct netbuf nb = { .maxlen = sizeof(ss), .len = 0, .buf = &ss };
	const char *host = strcmp(nc->nc_netid, "tcp6") ? "127.0.0.1" : "::1";

	memset(&ss, 0, sizeof(ss));
	if (!rpcb_getaddr(prog, vers, nc, &nb, host))
		return 0;
	return ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
					: ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static const char *gw_rpcbind_why(void)
{
	return rpc_createerr.cf_stat != RPC_SUCCESS ? clnt_sperrno(rpc_createerr.cf_stat)
						    : "refused by rpcbind";
}

int gw_rpcbind_set(uint32_t prog, uint32_t vers, const char *netid, const char *uaddr,
		   uint16_t *holder, char *msg, size_t msglen)
{
	struct netconfig *nc = getnetconfigent(netid);
	struct netbuf *nb;
	bool_t ok;
	int rc = 0;

	*holder = 0;
	if (!nc) {
		snprintf(msg, msglen, "no netconfig entry for %s", netid);
		return -1;
	}
	nb = uaddr2taddr(nc, uaddr);
	if (!nb) {
		snprintf(msg, msglen, "bad universal address %s", uaddr);
		freenetconfigent(nc);
		return -1;
	}
	rpc_createerr.cf_stat = RPC_SUCCESS;
	ok = rpcb_set(prog, vers, nc, nb);
	if (!ok) {
		/* rpcbind keeps one mapping per (prog, vers, netid): find out
		 * whether someone holds it or rpcbind failed. */
		snprintf(msg, msglen, "%s", gw_rpcbind_why());
		*holder = gw_rpcbind_local_port(prog, vers, nc);
		rc = *holder ? 1 : -1;
	}
	free(nb->buf);
	free(nb);
	freenetconfigent(nc);
	return rc;
}

int gw_rpcbind_unset(uint32_t prog, uint32_t vers, const char *netid, uint16_t port, char *msg,
		     size_t msglen)
{
	struct netconfig *nc = getnetconfigent(netid);
	int rc = 0;

	if (!nc) {
		snprintf(msg, msglen, "no netconfig entry for %s", netid);
		return -1;
	}
	/* rpcbind restarted and someone else registered since: not ours. */
	if (gw_rpcbind_local_port(prog, vers, nc) != port) {
		snprintf(msg, msglen, "no longer maps to port %u", port);
		rc = 1;
	} else {
		rpc_createerr.cf_stat = RPC_SUCCESS;
		if (!rpcb_unset(prog, vers, nc)) {
			snprintf(msg, msglen, "%s", gw_rpcbind_why());
			rc = -1;
		}
	}
	freenetconfigent(nc);
	return rc;
}
