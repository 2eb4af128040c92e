// SPDX-License-Identifier: MIT
/*
 * This file contains the admission rules of the TCP frontend (see
 * fe_admit.h): networks, the reserved port rule, the per-source cap, and the
 * PROXY protocol v2 decoder.  Pure: no socket calls, no event loop.
 *
 * Why a reserved port matters: nfsd treats every RPC-over-RDMA request as
 * coming from a privileged port, so without this rule an unprivileged user
 * on any host that reaches the gateway gets past `secure` exports.  The
 * rule is nfsd's own (source port below IPPORT_RESERVED, 1024).
 */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "fe_admit.h"

static const uint8_t fe_pp_sig[12] = {
	0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a
};

const char *fe_adm_verdict_str(enum fe_adm_verdict v)
{
	static const char *const names[] = {
		[FE_ADM_OK] = "ok", [FE_ADM_DENY] = "deny", [FE_ADM_NOT_ALLOWED] = "not_allowed",
		[FE_ADM_INSECURE_PORT] = "insecure_port", [FE_ADM_PER_SOURCE_CAP] = "per_source_cap",
		[FE_ADM_PROXY] = "proxy",
	};

	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

bool fe_adm_addr16(const struct sockaddr *sa, uint8_t addr[16], uint16_t *port)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)sa;

		memset(addr, 0, 10);
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &s->sin_addr, 4);
		*port = ntohs(s->sin_port);
		return true;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)sa;

		memcpy(addr, &s->sin6_addr, 16);
		*port = ntohs(s->sin6_port);
		return true;
	}
	return false;
}

static bool fe_adm_net_match(const struct cfg_net *n, const uint8_t addr[16])
{
	unsigned full = n->nt_bits / 8, rest = n->nt_bits % 8;

	if (memcmp(n->nt_addr, addr, full))
		return false;
	if (rest == 0)
		return true;
	return ((n->nt_addr[full] ^ addr[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

static bool fe_adm_nets_match(const struct cfg_nets *ns, const uint8_t addr[16])
{
	for (unsigned i = 0; i < ns->ns_n; i++)
		if (fe_adm_net_match(&ns->ns_net[i], addr))
			return true;
	return false;
}

enum fe_adm_verdict fe_adm_check(const struct cfg_policy *pol, const struct sockaddr *sa,
				 unsigned nsame)
{
	uint8_t addr[16];
	uint16_t port;

	/* A socket that is neither IPv4 nor IPv6 has no address to judge:
	 * only socket activation hands over such listeners. */
	if (!fe_adm_addr16(sa, addr, &port))
		return FE_ADM_OK;
	if (fe_adm_nets_match(&pol->pol_deny, addr))
		return FE_ADM_DENY;
	if (pol->pol_allow.ns_n && !fe_adm_nets_match(&pol->pol_allow, addr))
		return FE_ADM_NOT_ALLOWED;
	if (pol->pol_secure_port && port >= IPPORT_RESERVED)
		return FE_ADM_INSECURE_PORT;
	if (nsame >= pol->pol_max_conns_per_source)
		return FE_ADM_PER_SOURCE_CAP;
	return FE_ADM_OK;
}

const char *fe_adm_datagram(const struct cfg *cf, unsigned li, const struct sockaddr *sa)
{
	enum fe_adm_verdict v;

	if (li >= cf->cf_nlisteners)
		li = 0;	/* [gateway]'s, as for a socket of no listener */
	v = fe_adm_check(&cf->cf_listeners[li].li_pol, sa, 0);
	return v == FE_ADM_OK ? NULL : fe_adm_verdict_str(v);
}

void fe_adm_peer_name(const struct sockaddr *sa, char *name, size_t len, char *host, size_t hlen)
{
	char h[INET6_ADDRSTRLEN] = "local";
	uint16_t port = 0;

	if (sa->sa_family == AF_INET) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, h, sizeof(h));
		port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
		snprintf(name, len, "%s:%u", h, port);
	} else if (sa->sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, h, sizeof(h));
		port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
		snprintf(name, len, "[%s]:%u", h, port);
	} else {
		snprintf(name, len, "local");
	}
	if (host)
		snprintf(host, hlen, "%s", h);
}

/* ---- PROXY protocol v2 (haproxy proxy-protocol.txt, 2.2) ---- */

long fe_adm_pp_need(const uint8_t *buf, size_t n)
{
	size_t sig = n < sizeof(fe_pp_sig) ? n : sizeof(fe_pp_sig);

	if (memcmp(buf, fe_pp_sig, sig))
		return -1;
	if (n < 13)
		return FE_PP_FIXED;
	/* version 2; command LOCAL (0) or PROXY (1) */
	if ((buf[12] >> 4) != 2 || (buf[12] & 0xf) > 1)
		return -1;
	if (n < FE_PP_FIXED)
		return FE_PP_FIXED;
	return FE_PP_FIXED + ((long)buf[14] << 8 | buf[15]);
}

bool fe_adm_pp_decode(const uint8_t *buf, size_t n, struct sockaddr_storage *src,
		      socklen_t *srclen)
{
	long total = fe_adm_pp_need(buf, n);
	const uint8_t *a = buf + FE_PP_FIXED;
	size_t len;

	if (total < FE_PP_FIXED || n < FE_PP_FIXED)
		return false;
	len = (size_t)total - FE_PP_FIXED;
	memset(src, 0, sizeof(*src));
	*srclen = 0;
	src->ss_family = AF_UNSPEC;
	/* LOCAL: the proxy's own connection (health checks); addresses ignored. */
	if ((buf[12] & 0xf) == 0)
		return true;
	switch (buf[13]) {
	case 0x00:	/* UNSPEC: keep the socket's endpoints (spec 2.2) */
		return true;
	case 0x11: {	/* TCP over IPv4: src, dst, src port, dst port */
		struct sockaddr_in *s = (struct sockaddr_in *)src;

		if (len < 12 || n < FE_PP_FIXED + 12)
			return false;
		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, a, 4);
		memcpy(&s->sin_port, a + 8, 2);
		*srclen = sizeof(*s);
		return true;
	}
	case 0x21: {	/* TCP over IPv6 */
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)src;

		if (len < 36 || n < FE_PP_FIXED + 36)
			return false;
		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, a, 16);
		memcpy(&s->sin6_port, a + 32, 2);
		*srclen = sizeof(*s);
		return true;
	}
	default:	/* UDP, Unix sockets, unknown: no client address to judge */
		return false;
	}
}
