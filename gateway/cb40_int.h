/* SPDX-License-Identifier: MIT */
/*
 * This file contains the NFSv4.0 callback relay's own tables, private to
 * its two files: cb40.c (SETCLIENTID: which client registered, under which
 * program of the gateway's) and cb40_relay.c (the listeners the server
 * calls back on, its connections there, and the relay of each callback to
 * the client's own service and of the reply back).
 *
 * Every table is fixed and bounded (docs/operations.md, "Finite tables"):
 * registrations per worker and per client address, server connections
 * (nfsd opens one per client it calls back: one per registration), pending
 * callbacks per client and in all, listeners and the server addresses they
 * admit.
 */
#ifndef RPCRDMA_GW_CB40_INT_H
#define RPCRDMA_GW_CB40_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "cb40.h"
#include "log.h"

#define GW_CB40_REGS_BITS	10
#define GW_CB40_REGS		(1u << GW_CB40_REGS_BITS)	/* client ids per worker */
#define GW_CB40_PER_SOURCE	64	/* of them per client address: past it, its own oldest goes */
#define GW_CB40_SRV		GW_CB40_REGS	/* server connections: one per client called back */
#define GW_CB40_LIS		4	/* listeners: one per local address toward a backend */
#define GW_CB40_PEERS		16	/* backend addresses admitted on the listeners */
#define GW_CB40_PENDING		64	/* callbacks relayed at once */
#define GW_CB40_PER_CLIENT	8	/* of them, per client */
#define GW_CB40_MAX_REC		16384	/* CB_RECALL, CB_GETATTR: a few hundred bytes */
#define GW_CB40_TICK_MS		250
/* A connection (server's or to a client's service) with nothing read for
 * this long is closed: above the 5 minutes after which the kernel's RPC
 * client closes an idle TCP connection itself, and reopened on demand. */
#define GW_CB40_IDLE_MS		(10 * 60 * 1000)
/* Transient programs (RFC 5531 A.4): the low GW_CB40_REGS_BITS bits are
 * the registration's slot (lookup in one step), the 14 above them drawn
 * at random per registration, so a program is not guessable from the
 * last one handed out. */
#define GW_CB40_PROG_BASE	0x48000000u
#define GW_CB40_PROG_SPAN	0x01000000u

struct gw_cb40;
struct bufferevent;
struct evconnlistener;
struct event;

/* A client as SETCLIENTID named it, and the connection to its callback
 * service. */
struct gw_cb40_reg {
	struct gw_cb40 *r4_c4;
	bool r4_used;
	uint64_t r4_idhash;		/* nfs_client_id4 id */
	uint8_t r4_src[16];		/* address it registered from (IPv4-mapped; 0: none) */
	uint32_t r4_prog;		/* gateway's cb_program for it */
	uint32_t r4_cprog;		/* its own */
	uint64_t r4_clientid;		/* from the reply; 0 before */
	uint64_t r4_stamp;		/* last SETCLIENTID or callback: least recent evicted first */
	struct sockaddr_storage r4_addr;
	socklen_t r4_alen;
	char r4_uaddr[GW_CB40_UADDR_MAX];
	char r4_name[64];		/* client connection that registered it (logs) */
	struct bufferevent *r4_bev;	/* to its callback service; NULL: none */
	bool r4_up;			/* r4_bev connected */
	unsigned r4_npend;
};

/* A connection of the server to a listener. */
struct gw_cb40_srv {
	struct gw_cb40 *s4_c4;
	struct bufferevent *s4_bev;	/* NULL: slot free */
	uint64_t s4_stamp;		/* last record read: the least recent makes room */
	char s4_name[GW_CB40_UADDR_MAX];
};

/* A listener, bound to the address the gateway reaches one backend from. */
struct gw_cb40_lis {
	struct evconnlistener *l4_lis;	/* NULL: slot free */
	struct sockaddr_storage l4_addr;	/* with the kernel's port */
	socklen_t l4_alen;
};

struct gw_cb40_pend {
	struct gw_cb40_srv *p4_srv;	/* NULL: slot free */
	struct gw_cb40_reg *p4_reg;
	uint32_t p4_xid;
	uint64_t p4_deadline_ms;
};

struct gw_cb40 {
	struct gw_ctx *c4_gw;
	struct gw_cb40_lis c4_lis[GW_CB40_LIS];
	uint8_t c4_peer[GW_CB40_PEERS][16];	/* backend addresses (IPv4-mapped) */
	unsigned c4_npeers;
	uint64_t c4_clock;
	struct event *c4_timer;
	struct gw_cb40_reg c4_reg[GW_CB40_REGS];
	struct gw_cb40_srv c4_srv[GW_CB40_SRV];
	struct gw_cb40_pend c4_pend[GW_CB40_PENDING];
	uint8_t c4_rec[4 + GW_CB40_MAX_REC];	/* one record, its mark first */
};

/* cb40_relay.c: the listener on local (its port filled in): an open one
 * of that address, or a new one; false when none can be opened. */
bool gw_cb40_listen(struct gw_cb40 *c4, struct sockaddr_storage *local, socklen_t len);
/* The server's address sa, admitted on the listeners from now on. */
void gw_cb40_peer_add(struct gw_cb40 *c4, const struct sockaddr *sa);
/* port is one the gateway listens on itself (its listeners, admin, the
 * relay's own): a callback service there would be the gateway. */
bool gw_cb40_own_port(const struct gw_cb40 *c4, uint16_t port);
/* Close rg's connection to its callback service; each callback pending on
 * it is answered SYSTEM_ERR and counted as why. */
void gw_cb40_reg_close(struct gw_cb40_reg *rg, enum gw_ctr why);
/* The relay's timer (pending callbacks' deadlines); false without memory. */
bool gw_cb40_relay_init(struct gw_cb40 *c4);
/* Listeners, connections and timer of c4 closed. */
void gw_cb40_relay_close(struct gw_cb40 *c4);

/* An address as 16 bytes, IPv4 as IPv4-mapped IPv6; false for another
 * family. */
bool gw_cb40_addr16(const struct sockaddr *sa, uint8_t out[16]);

#endif /* RPCRDMA_GW_CB40_INT_H */
