// SPDX-License-Identifier: MIT
/*
 * This file contains the rpcbind lookup of the TCP transport: libtirpc's
 * rpcb_getaddr() (RPCBIND v4/v3 GETADDR, falling back to PMAP GETPORT).
 * It blocks, so the TCP transport runs it in its resolver thread.  Also
 * the local registrations of rpcbind_register (rpcb_reg.c), at start and
 * exit; and bindresvport_sa() for the TCP transport's source port.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <rpc/rpc.h>

#include "rpcbind.h"

void gw_rpcbind_init(void)
{
	(void)authnone_create();
}

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

/* Port the local rpcbind maps (prog, vers, netid) to; 0 when none.  An
 * RPCBPROC_GETADDR (RFC 1833 section 2.2.1, version 3) to 127.0.0.1:111 or
 * [::1]:111 over a client of our own, not rpcb_getaddr(): libtirpc 1.3.3
 * leaks an entry of its address cache per call (LeakSanitizer, t_68). */
static uint16_t gw_rpcbind_local_port(uint32_t prog, uint32_t vers, struct netconfig *nc)
{
	struct sockaddr_storage ss;
	struct netbuf nb = { .maxlen = sizeof(ss), .buf = &ss };
	struct timeval tv = { 5, 0 };
	RPCB parms = { .r_prog = prog, .r_vers = vers, .r_netid = nc->nc_netid, .r_addr = "",
		       .r_owner = "" };
	char *uaddr = NULL;
	uint16_t port = 0;
	CLIENT *cl;

	memset(&ss, 0, sizeof(ss));
	if (!strcmp(nc->nc_netid, "tcp6") || !strcmp(nc->nc_netid, "udp6")) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_addr = in6addr_loopback;
		s6->sin6_port = htons(111);
		nb.len = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s4->sin_port = htons(111);
		nb.len = sizeof(*s4);
	}
	cl = clnt_tli_create(RPC_ANYFD, nc, &nb, RPCBPROG, RPCBVERS, 0, 0);
	if (!cl)
		return 0;
	if (clnt_call(cl, RPCBPROC_GETADDR, (xdrproc_t)xdr_rpcb, (char *)&parms,
		      (xdrproc_t)xdr_wrapstring, (char *)&uaddr, tv) == RPC_SUCCESS && uaddr && *uaddr) {
		struct netbuf *t = uaddr2taddr(nc, uaddr);

		if (t) {
			struct sockaddr_storage *a = t->buf;

			port = a->ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)a)->sin6_port)
							: ntohs(((struct sockaddr_in *)a)->sin_port);
			free(t->buf);
			free(t);
		}
	}
	if (uaddr)
		xdr_free((xdrproc_t)xdr_wrapstring, (char *)&uaddr);
	clnt_destroy(cl);
	return port;
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

int gw_rpcbind_bindresv(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (bindresvport_sa(fd, NULL) < 0)
		return -errno;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	return ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					     : ((struct sockaddr_in *)&ss)->sin_port);
}
