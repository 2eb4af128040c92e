// SPDX-License-Identifier: MIT
/*
 * This file contains the rpcbind lookup of the TCP transport and of the
 * NLM callbacks (RPCBIND v3 GETADDR, falling back to PMAP GETPORT, over a
 * libtirpc client of our own).  It blocks, so its callers run it in their
 * resolver threads.  Also
 * the local registrations of rpcbind_register (rpcb_reg.c), at start and
 * exit; and bindresvport_sa() for the TCP transport's source port.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <netdb.h>
#include <rpc/rpc.h>
#include <rpc/pmap_prot.h>

#include "rpcbind.h"

void gw_rpcbind_init(void)
{
	(void)authnone_create();
}

/* Why libtirpc failed, in the words of the system call under it where
 * there is one ("Connection refused", as rpcinfo says), not the RPC status
 * alone ("RPC: Remote system error" hides whether rpcbind runs at all). */
static void gw_rpcbind_errstr(enum clnt_stat st, const struct rpc_err *e, char *why, size_t whylen)
{
	if (e && e->re_errno && (st == RPC_SYSTEMERROR || st == RPC_CANTSEND ||
				 st == RPC_CANTRECV || st == RPC_CANTCONNECT))
		snprintf(why, whylen, "%s", strerror(e->re_errno));
	else
		snprintf(why, whylen, "%s", clnt_sperrno(st));
}

/* The rpcbind at rb (port 111) over nc's transport: the port of (prog,
 * vers, nc's netid).  RPCBPROC_GETADDR, version 3 (RFC 1833 section 2.2.1);
 * an rpcbind that speaks only the portmapper gets PMAPPROC_GETPORT
 * (version 2, section 3; IPv4 only).  1 found, 0 not registered, -1 not
 * answered (why).  Not rpcb_getaddr(): libtirpc 1.3.3 leaks an entry of
 * its address cache per call (LeakSanitizer: t_68, t_77, t_82). */
static int gw_rpcbind_ask(struct netconfig *nc, struct netbuf *rb, uint32_t prog, uint32_t vers,
			  uint16_t *port, char *why, size_t whylen)
{
	struct timeval tv = { 5, 0 };
	RPCB parms = { .r_prog = prog, .r_vers = vers, .r_netid = nc->nc_netid, .r_addr = "",
		       .r_owner = "" };
	struct pmap pm = { .pm_prog = prog, .pm_vers = vers, .pm_prot = IPPROTO_TCP };
	char *uaddr = NULL;
	u_long pport = 0;
	enum clnt_stat st;
	CLIENT *cl;
	int rc = -1;

	*port = 0;
	cl = clnt_tli_create(RPC_ANYFD, nc, rb, RPCBPROG, RPCBVERS, 0, 0);
	if (!cl) {
		gw_rpcbind_errstr(rpc_createerr.cf_stat, &rpc_createerr.cf_error, why, whylen);
		return -1;
	}
	st = clnt_call(cl, RPCBPROC_GETADDR, (xdrproc_t)xdr_rpcb, (char *)&parms,
		       (xdrproc_t)xdr_wrapstring, (char *)&uaddr, tv);
	if (st == RPC_SUCCESS) {
		struct netbuf *t = uaddr && *uaddr ? uaddr2taddr(nc, uaddr) : NULL;

		if (t) {
			struct sockaddr_storage *a = t->buf;

			*port = a->ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)a)->sin6_port)
							 : ntohs(((struct sockaddr_in *)a)->sin_port);
			free(t->buf);
			free(t);
		}
		rc = *port != 0;
	} else if (st == RPC_PROGVERSMISMATCH && !strcmp(nc->nc_netid, "tcp")) {
		clnt_destroy(cl);
		cl = clnt_tli_create(RPC_ANYFD, nc, rb, PMAPPROG, PMAPVERS, 0, 0);
		st = cl ? clnt_call(cl, PMAPPROC_GETPORT, (xdrproc_t)xdr_pmap, (char *)&pm,
				    (xdrproc_t)xdr_u_long, (char *)&pport, tv)
			: rpc_createerr.cf_stat;
		if (!cl && st != RPC_SUCCESS) {
			gw_rpcbind_errstr(st, &rpc_createerr.cf_error, why, whylen);
			return -1;
		}
		if (st == RPC_SUCCESS) {
			*port = pport <= 65535 ? (uint16_t)pport : 0;
			rc = *port != 0;
		}
	}
	if (rc < 0) {
		struct rpc_err e = { 0 };

		clnt_geterr(cl, &e);
		gw_rpcbind_errstr(st, &e, why, whylen);
	}
	if (uaddr)
		xdr_free((xdrproc_t)xdr_wrapstring, (char *)&uaddr);
	if (cl)
		clnt_destroy(cl);
	return rc;
}

int gw_rpcbind_getport(const char *host, int family, uint32_t prog, uint32_t vers, uint16_t *port,
		       char *msg, size_t msglen)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	struct netconfig *nc = getnetconfigent(family == AF_INET6 ? "tcp6" : "tcp");
	struct sockaddr_storage ss;
	struct netbuf nb = { .maxlen = sizeof(ss), .buf = &ss };
	char why[128] = "program not registered";
	int rc;

	if (!nc) {
		snprintf(msg, msglen, "no netconfig entry for tcp");
		return -1;
	}
	rc = getaddrinfo(host, "111", &hints, &ai);
	if (rc != 0 || !ai || ai->ai_addrlen > sizeof(ss)) {
		snprintf(msg, msglen, "rpcbind on %s: %s", host, rc ? gai_strerror(rc) : "no address");
		if (ai)
			freeaddrinfo(ai);
		freenetconfigent(nc);
		return -2;
	}
	memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
	nb.len = ai->ai_addrlen;
	freeaddrinfo(ai);
	rc = gw_rpcbind_ask(nc, &nb, prog, vers, port, why, sizeof(why));
	freenetconfigent(nc);
	if (rc < 0) {	/* rpcbind itself: not there, not answering */
		snprintf(msg, msglen, "rpcbind on %s port 111: %s", host, why);
		return -2;
	}
	if (rc == 0) {
		snprintf(msg, msglen, "rpcbind on %s: no program %u version %u over tcp (%s)", host, prog,
			 vers, why);
		return -1;
	}
	return 0;
}

/* Port the local rpcbind maps (prog, vers, netid) to; 0 when none: asked
 * at 127.0.0.1:111 or [::1]:111. */
static uint16_t gw_rpcbind_local_port(uint32_t prog, uint32_t vers, struct netconfig *nc)
{
	struct sockaddr_storage ss;
	struct netbuf nb = { .maxlen = sizeof(ss), .buf = &ss };
	uint16_t port = 0;
	char why[128];

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
	gw_rpcbind_ask(nc, &nb, prog, vers, &port, why, sizeof(why));
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
