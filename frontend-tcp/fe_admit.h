/* SPDX-License-Identifier: MIT */
/*
 * fe_admit.h - admission of TCP clients (prefix fe_adm_, fe_pw_).
 *
 * This file contains what the frontend asks before it serves a connection:
 * the peer's address against allow = and deny = (deny wins, an empty allow
 * admits every address), the reserved source port rule (secure_port), the
 * per-source connection cap, and the PROXY protocol v2 header (haproxy's
 * "PROXY protocol" specification, section 2.2) that a load balancer puts in
 * front of the stream when proxy_protocol = yes.  fe_admit.c is pure (the
 * PROXY fuzzer links it alone); fe_proxy.c waits for the header on the
 * event loop.
 */
#ifndef RPCRDMA_GW_FE_ADMIT_H
#define RPCRDMA_GW_FE_ADMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config.h"

struct event_base;
struct fe_pw;

/* Why a connection is refused; FE_ADM_OK admits it. */
enum fe_adm_verdict {
	FE_ADM_OK = 0,
	FE_ADM_DENY,		/* in deny = */
	FE_ADM_NOT_ALLOWED,	/* allow = is set and lists no network of it */
	FE_ADM_INSECURE_PORT,	/* secure_port = yes and source port >= 1024 */
	FE_ADM_PER_SOURCE_CAP,	/* max_conns_per_source connections already */
	FE_ADM_PROXY,		/* PROXY v2 header absent, malformed or late */
};
const char *fe_adm_verdict_str(enum fe_adm_verdict v);

/* The address of an AF_INET or AF_INET6 peer as 16 bytes (IPv4 and
 * IPv4-mapped IPv6 alike: ::ffff:a.b.c.d) and its port; false for other
 * families (a Unix socket has neither). */
bool fe_adm_addr16(const struct sockaddr *sa, uint8_t addr[16], uint16_t *port);
/* The verdict of a listener's policy for a peer that has nsame connections
 * from its address already (pending PROXY headers included; every
 * listener's connections count). */
enum fe_adm_verdict fe_adm_check(const struct cfg_policy *pol, const struct sockaddr *sa,
				 unsigned nsame);
/* The rules of listener li of cf (allow, deny, secure_port) for a datagram
 * from sa (the gateway's NSM over UDP): NULL admits it, else the reason
 * (fe_adm_verdict_str).  The per-source cap counts connections: not here. */
const char *fe_adm_datagram(const struct cfg *cf, unsigned li, const struct sockaddr *sa);
/* "a.b.c.d:port" or "[v6]:port" (host: without the port), for names and logs. */
void fe_adm_peer_name(const struct sockaddr *sa, char *name, size_t len, char *host, size_t hlen);

/* ---- PROXY protocol v2 ---- */
#define FE_PP_FIXED	16	/* signature 12, ver_cmd, fam, len (2) */
#define FE_PP_ADDR_MAX	36	/* the INET6 address block; TLVs after it are skipped */
/* Header bytes the connection starts with: FE_PP_FIXED while fewer are
 * known, then FE_PP_FIXED + len; -1 when what is there cannot start a v2
 * header (signature, version or command wrong). */
long fe_adm_pp_need(const uint8_t *buf, size_t n);
/* Decode a whole header whose first n bytes are in buf (n >= the fixed part
 * plus the address block, or the whole header if shorter).  PROXY over
 * TCP/IPv4 or TCP/IPv6: the source into *src, true.  LOCAL, or PROXY with
 * family UNSPEC: *src's family AF_UNSPEC (use the socket's address), true.
 * Anything else (UNIX, UDP, a length shorter than its address block): false. */
bool fe_adm_pp_decode(const uint8_t *buf, size_t n, struct sockaddr_storage *src,
		      socklen_t *srclen);

/* ---- fe_proxy.c: waiting for the header on the loop ---- */
/* The header was read (src: the client, or the socket's peer for LOCAL)
 * or not (ok false: fd is closed already, the reason logged by done's owner). */
typedef void fe_pw_done_fn(void *arg, int fd, bool ok, const struct sockaddr *src, socklen_t srclen,
			   uint16_t lport, unsigned li, const char *why);
struct fe_pw *fe_pw_new(struct event_base *base, fe_pw_done_fn *done, void *arg);
/* Close every pending socket. */
void fe_pw_free(struct fe_pw *pw);
/* Read the PROXY header of fd (accepted from peer, on local port lport, by
 * listener li: index in cf_listeners) within timeout_ms; done is called
 * once, from the loop. */
int fe_pw_start(struct fe_pw *pw, int fd, const struct sockaddr *peer, socklen_t plen,
		uint16_t lport, unsigned li, unsigned timeout_ms);
/* Sockets waiting for their header (they count against max_clients; the
 * per-source cap applies to the address the header gives). */
unsigned fe_pw_npending(const struct fe_pw *pw);

#endif /* RPCRDMA_GW_FE_ADMIT_H */
