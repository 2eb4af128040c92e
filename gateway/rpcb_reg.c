// SPDX-License-Identifier: MIT
/*
 * This file contains rpcbind_register: the plan of local rpcbind
 * registrations for the gateway's listeners (a pure function), and setting
 * and unsetting them through gw_rpcb_ops (libtirpc in the daemon, a fake in
 * the unit tests).  Runs at start, before the loop, and at exit: never on
 * the data path, so blocking calls are fine.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "rpcb_reg.h"
#include "rpcbind.h"

/* Versions registered per well-known program: what Linux servers register. */
static const struct {
	uint32_t prog;
	uint32_t vers[3];
	unsigned nvers;
	bool if_free;
} gw_rpcb_progs[] = {
	{ CFG_PROG_MOUNT, { 1, 2, 3 }, 3, false },
	{ CFG_PROG_NLM, { 1, 3, 4 }, 3, false },
	{ CFG_PROG_NSM, { 1 }, 1, false },
	{ CFG_PROG_NFS, { 3, 4 }, 2, true },
	{ CFG_PROG_NFS_ACL, { 3 }, 1, true },
};

/* "h1.h2.h3.h4.p1.p2" or "ipv6.p1.p2" (RFC 5665 sections 5.2.3.3-4). */
static bool gw_rpcb_uaddr(const struct sockaddr_storage *ss, char *out, size_t len,
			  uint16_t *port)
{
	char host[INET6_ADDRSTRLEN];
	const void *a;

	if (ss->ss_family == AF_INET) {
		a = &((const struct sockaddr_in *)ss)->sin_addr;
		*port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
	} else if (ss->ss_family == AF_INET6) {
		a = &((const struct sockaddr_in6 *)ss)->sin6_addr;
		*port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	} else {
		return false;
	}
	if (!*port || !inet_ntop(ss->ss_family, a, host, sizeof(host)))
		return false;
	return (size_t)snprintf(out, len, "%s.%u.%u", host, *port >> 8, *port & 0xff) < len;
}

static bool gw_rpcb_planned(const struct gw_rpcb_entry *e, unsigned n, uint32_t prog,
			    uint32_t vers, const char *netid)
{
	for (unsigned i = 0; i < n; i++)
		if (e[i].re_prog == prog && e[i].re_vers == vers && !strcmp(e[i].re_netid, netid))
			return true;
	return false;
}

unsigned gw_rpcb_plan(const struct cfg *cf, const struct sockaddr_storage *addrs, unsigned naddrs,
		      struct gw_rpcb_entry *out, unsigned max)
{
	unsigned n = 0;

	if (!cf->cf_rpcbind_register)
		return 0;
	for (unsigned a = 0; a < naddrs; a++) {
		const char *netid = addrs[a].ss_family == AF_INET6 ? "tcp6" : "tcp";
		char uaddr[sizeof(out->re_uaddr)];
		uint16_t port;

		if (!gw_rpcb_uaddr(&addrs[a], uaddr, sizeof(uaddr), &port))
			continue;
		for (size_t p = 0; p < sizeof(gw_rpcb_progs) / sizeof(gw_rpcb_progs[0]); p++) {
			const struct cfg_route *r = cfg_route_find(cf, gw_rpcb_progs[p].prog);

			if (!r)
				continue;
			for (unsigned v = 0; v < gw_rpcb_progs[p].nvers; v++) {
				uint32_t vers = gw_rpcb_progs[p].vers[v];

				if (vers < r->cr_vers_low || vers > r->cr_vers_high ||
				    gw_rpcb_planned(out, n, r->cr_prog, vers, netid))
					continue;
				if (n == max)
					return n;
				out[n] = (struct gw_rpcb_entry){
					.re_prog = r->cr_prog, .re_vers = vers, .re_port = port,
					.re_if_free = gw_rpcb_progs[p].if_free,
				};
				snprintf(out[n].re_netid, sizeof(out[n].re_netid), "%s", netid);
				snprintf(out[n].re_uaddr, sizeof(out[n].re_uaddr), "%s", uaddr);
				n++;
			}
		}
	}
	return n;
}

unsigned gw_rpcb_plan_nsm_udp(const struct cfg *cf, const struct sockaddr_storage *addrs,
			      unsigned naddrs, struct gw_rpcb_entry *out, unsigned n, unsigned max)
{
	const struct cfg_route *r = cfg_route_find(cf, CFG_PROG_NSM);

	if (!cf->cf_rpcbind_register || !r || r->cr_vers_low > 1 || r->cr_vers_high < 1)
		return n;
	for (unsigned a = 0; a < naddrs && n < max; a++) {
		const char *netid = addrs[a].ss_family == AF_INET6 ? "udp6" : "udp";
		char uaddr[sizeof(out->re_uaddr)];
		uint16_t port;

		if (gw_rpcb_planned(out, n, CFG_PROG_NSM, 1, netid) ||
		    !gw_rpcb_uaddr(&addrs[a], uaddr, sizeof(uaddr), &port))
			continue;
		out[n] = (struct gw_rpcb_entry){ .re_prog = CFG_PROG_NSM, .re_vers = 1, .re_port = port };
		snprintf(out[n].re_netid, sizeof(out[n].re_netid), "%s", netid);
		snprintf(out[n].re_uaddr, sizeof(out[n].re_uaddr), "%s", uaddr);
		n++;
	}
	return n;
}

const struct gw_rpcb_ops gw_rpcb_tirpc = { .ro_set = gw_rpcbind_set, .ro_unset = gw_rpcbind_unset };

unsigned gw_rpcb_register(struct gw_rpcb_reg *rr, const struct gw_log *lg, struct gw_stats *st)
{
	unsigned ours = 0;

	for (unsigned i = 0; i < rr->rgr_n; i++) {
		struct gw_rpcb_entry *e = &rr->rgr_e[i];
		char msg[256] = "";
		uint16_t holder = 0;
		int rc;

		if (e->re_ours) {	/* never twice */
			ours++;
			continue;
		}
		rc = rr->rgr_ops->ro_set(e->re_prog, e->re_vers, e->re_netid, e->re_uaddr, &holder, msg,
					sizeof(msg));
		if (rc == 1 && holder == e->re_port) {
			/* Our own entry left by a gateway that did not exit
			 * cleanly: take it over, so exit removes it. */
			rc = 0;
			gw_info(lg, "rpcbind: program %u version %u %s already maps to our port %u: "
				"taken over", e->re_prog, e->re_vers, e->re_netid, e->re_port);
		}
		if (rc == 0) {
			e->re_ours = true;
			ours++;
			gw_stat_inc(st, GW_CTR_RPCB_REGISTERED);
			gw_info(lg, "rpcbind: registered program %u version %u %s -> %s (port %u)",
				e->re_prog, e->re_vers, e->re_netid, e->re_uaddr, e->re_port);
		} else if (rc == 1 && e->re_if_free) {
			gw_info(lg, "rpcbind: program %u version %u %s is the server's (port %u): "
				"left alone", e->re_prog, e->re_vers, e->re_netid, holder);
		} else if (rc == 1) {
			gw_stat_inc(st, GW_CTR_RPCB_CONFLICT);
			gw_warn(lg, "rpcbind: program %u version %u %s already registered by another "
				"process (port %u): not registered, clients asking rpcbind reach that "
				"process, not the gateway", e->re_prog, e->re_vers, e->re_netid, holder);
		} else {
			gw_stat_inc(st, GW_CTR_RPCB_FAILED);
			gw_err(lg, "rpcbind: cannot register program %u version %u %s: %s", e->re_prog,
			       e->re_vers, e->re_netid, msg);
		}
	}
	return ours;
}

void gw_rpcb_unregister(struct gw_rpcb_reg *rr, const struct gw_log *lg, struct gw_stats *st)
{
	for (unsigned i = 0; i < rr->rgr_n; i++) {
		struct gw_rpcb_entry *e = &rr->rgr_e[i];
		char msg[256] = "";
		int rc;

		if (!e->re_ours)
			continue;
		e->re_ours = false;
		rc = rr->rgr_ops->ro_unset(e->re_prog, e->re_vers, e->re_netid, e->re_port, msg,
					  sizeof(msg));
		if (rc == 0) {
			gw_stat_inc(st, GW_CTR_RPCB_UNREGISTERED);
			gw_info(lg, "rpcbind: unregistered program %u version %u %s", e->re_prog,
				e->re_vers, e->re_netid);
		} else if (rc == 1) {
			gw_warn(lg, "rpcbind: program %u version %u %s %s: left alone", e->re_prog,
				e->re_vers, e->re_netid, msg);
		} else {
			gw_stat_inc(st, GW_CTR_RPCB_FAILED);
			gw_err(lg, "rpcbind: cannot unregister program %u version %u %s: %s",
			       e->re_prog, e->re_vers, e->re_netid, msg);
		}
	}
}
