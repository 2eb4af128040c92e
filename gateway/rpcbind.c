// SPDX-License-Identifier: MIT
/*
 * This file contains the rpcbind lookup of the TCP transport: libtirpc's
 * rpcb_getaddr() (RPCBIND v4/v3 GETADDR, falling back to PMAP GETPORT).
 * It blocks, so the TCP transport runs it in its resolver thread.
 */
#include <stdio.h>
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
