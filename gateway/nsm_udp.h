/* SPDX-License-Identifier: MIT */
/*
 * This file contains the UDP NSM listener of rpcrdma-gw (nsm_udp.c,
 * prefix gw_nu_, members nu_): reboot notifications as nfs-utils'
 * sm-notify sends them, datagrams only (it finds statd's UDP port through
 * rpcbind at the monitor host).  One socket per listen address, on the
 * same port as the TCP listener, on worker 0's loop.  NSM v1 NULL and
 * SM_NOTIFY are answered (void) to the sender; an SM_NOTIFY then goes the
 * TCP one's way (nlm_map.h gw_nlm_server_notify, gw_nlm_host_rebooted).
 * Each datagram is first judged as a TCP connection of its listener is
 * (allow, deny, secure_port: frontend-tcp's rules, through np_admit): one
 * they refuse is dropped unread, counted and logged.  No allocation per
 * datagram; every datagram bounded to GW_NU_DGRAM_MAX.
 */
#ifndef RPCRDMA_GW_NSM_UDP_H
#define RPCRDMA_GW_NSM_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct event_base;
struct gw_ctx;
struct gw_log;
struct gw_stats;

#define GW_NU_DGRAM_MAX	1024	/* an SM_NOTIFY: header + mon_name<1024> fits well below */
#define GW_NU_SOCKS	16	/* sockets (listen addresses) */
#define GW_NU_SEEN	32	/* senders whose last state is remembered against retransmissions */
#define GW_NU_BURST	64	/* datagrams read per wake-up */

/* A client host's notification for the worker that tracks its locks:
 * true when handed off (or counted as failed there), false: handle here. */
typedef bool (*gw_nu_handoff_fn)(void *arg, const struct sockaddr *sa, socklen_t salen);
/* The admission of a datagram from sa to a socket of listener li (the
 * index gw_nu_open was given): NULL admits it, else why not (a word). */
typedef const char *(*gw_nu_admit_fn)(void *arg, unsigned li, const struct sockaddr *sa,
				      socklen_t salen);

struct gw_nu_params {
	struct event_base *np_base;	/* worker 0's loop; NULL: no sockets (tests, fuzz) */
	struct gw_ctx *np_gw;		/* worker 0's gateway */
	struct gw_stats *np_st;
	const struct gw_log *np_lg;
	gw_nu_handoff_fn np_handoff;	/* NULL: one worker */
	void *np_handoff_arg;
	gw_nu_admit_fn np_admit;	/* NULL: every datagram admitted (fuzz target) */
	void *np_admit_arg;
};

struct gw_nu;
struct gw_nu *gw_nu_new(const struct gw_nu_params *p);
void gw_nu_free(struct gw_nu *nu);
/* A UDP socket bound to ss (an address of TCP listener li, its port): its
 * datagrams are admitted by li's rules.  0 or a negative errno (logged by
 * the caller). */
int gw_nu_open(struct gw_nu *nu, const struct sockaddr_storage *ss, unsigned li);
/* The bound address of socket i: 0, or -1 past the last. */
int gw_nu_sockaddr(const struct gw_nu *nu, unsigned i, struct sockaddr_storage *out);

/* One datagram msg[0..len) (real_len: its size before truncation) from
 * sa to a socket of listener li: the reply to send back into out[0..cap),
 * its length, or 0 to send nothing (refused or dropped, counted). */
size_t gw_nu_datagram(struct gw_nu *nu, unsigned li, const uint8_t *msg, size_t len,
		      size_t real_len, const struct sockaddr *sa, socklen_t salen, uint8_t *out,
		      size_t cap);

#endif /* RPCRDMA_GW_NSM_UDP_H */
