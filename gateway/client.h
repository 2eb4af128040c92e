/* SPDX-License-Identifier: MIT */
/*
 * This file contains THE CLIENT SEAM of rpcrdma-gw: how the gateway and
 * the frontend that owns client connections (frontend-tcp/) talk, one way
 * in each direction (prefixes gw_client_, gw_out_).
 *
 * Frontend -> gateway: for each connection the frontend registers a
 * client (gw_client_open) with its ops table, hands every complete record
 * to gw_on_record(), gives each output item back once written
 * (gw_on_out_done) and ends with gw_client_close().  It reads what the
 * gateway counts against the client's caps (gw_client_ncalls,
 * gw_client_bytes, gw_client_held) to decide whether it may read.
 *
 * Gateway -> frontend, only through struct gw_client_ops: deliver an
 * output item, look again at whether reading may go on, describe the
 * connection.  The gateway knows nothing else of the frontend.
 *
 * An output item (struct gw_out) is one RPC message for the client: a
 * reply, or a server's callback CALL relayed to the client (RFC 8881
 * 2.10.3.1).  Items are embedded in preallocated objects (the call object,
 * the relay's output slots): nothing is allocated per reply.  The message
 * stays where the transport or the relay put it; the first 4 bytes (the
 * gateway's XID) are not sent: ou_mark carries the record mark and the
 * XID the client sees in their place.
 */
#ifndef RPCRDMA_GW_CLIENT_H
#define RPCRDMA_GW_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/uio.h>

#include "config.h"

struct gw_client;
struct gw_ctx;
struct gw_rec;

/* What gw_on_out_done() does with a written item. */
enum gw_out_kind {
	GW_OUT_REPLY = 0,	/* the reply of a call: the call is finalized */
	GW_OUT_CALLBACK,	/* a relayed callback CALL: its relay output slot is freed */
};

struct gw_out {
	enum gw_out_kind ou_kind;
	uint8_t ou_mark[8];		/* record mark, then the XID the client sees */
	const struct iovec *ou_iov;	/* the message, from its XID on */
	unsigned ou_niov;
	size_t ou_len;			/* bytes of ou_iov */
	TAILQ_ENTRY(gw_out) ou_link;	/* the frontend's output queue */
};
/* Point o at the message msg (ou_kind unchanged), sent to the client
 * under xid. */
void gw_out_set(struct gw_out *o, const struct iovec *msg, unsigned niov, uint32_t xid);
/* iovecs to write: mark and XID, then the message from its 5th byte.
 * Returns the count (<= max). */
unsigned gw_out_iov(const struct gw_out *o, struct iovec *iov, unsigned max);
/* Bytes gw_out_iov() describes. */
size_t gw_out_bytes(const struct gw_out *o);

/* One connection as the control socket shows it. */
struct gw_client_info {
	char gci_name[80];
	uint64_t gci_id;
	unsigned gci_calls;		/* calls in flight */
	size_t gci_bytes;		/* call records + queued output */
	uint64_t gci_idle_ms;		/* since the last activity */
	uint64_t gci_rx_bytes;		/* bytes received */
	bool gci_paused;		/* not reading (hold, starved or a cap) */
	uint64_t gci_done;		/* forwarded calls replied to */
	uint64_t gci_done_bytes;	/* their call and reply bytes */
	uint64_t gci_done_us;		/* their durations, summed */
	char gci_tls[12];		/* RPC-with-TLS state: off, plain, handshake, tls, refused */
	char gci_tls_id[64];		/* verified client certificate's name, or "" */
	char gci_listener[CFG_NAME_MAX];	/* the listener that accepted it */
};

/* Implemented by the frontend; arg is the one given to gw_client_open. */
struct gw_client_ops {
	/* Queue o for writing after the items already queued.  Called from
	 * anywhere (a transport callback too): write from the event loop. */
	void (*cop_deliver)(void *arg, struct gw_out *o);
	/* A reason to read or not changed: a call ended, the hold changed. */
	void (*cop_update)(void *arg);
	/* Fill what the frontend knows (name, id, idle, received, paused). */
	void (*cop_info)(void *arg, struct gw_client_info *ci);
	/* Close the connection now (gw_client_close() included), as a server
	 * that dropped a request does; called from the event loop only, never
	 * from inside another op.  Optional: NULL, and the gateway drops. */
	void (*cop_close)(void *arg, const char *reason);
};

/* A new connection: name (kept as a pointer: it must live as long as the
 * connection) for logs, key for the XID map (the client endpoint, kept
 * across reconnects).  NULL when out of memory. */
struct gw_client *gw_client_open(struct gw_ctx *gw, const struct gw_client_ops *ops, void *arg,
				 const char *name, uint64_t key);
/* The connection is closing: every call it still has is finalized
 * (GW_END_CLIENT_GONE), callbacks it owes are answered, items still queued
 * in the frontend are reclaimed (the frontend forgets them).  Frees cl. */
void gw_client_close(struct gw_client *cl);
/* A complete record from the client; the gateway takes the record's
 * buffer references.  Returns 0, or -EPROTO when the record is not an RPC
 * message header at all (the frontend closes the client). */
int gw_on_record(struct gw_client *cl, struct gw_rec *rec);
/* Output item o was written in full to the client. */
void gw_on_out_done(struct gw_client *cl, struct gw_out *o);

/* What the gateway counts against the client's caps. */
unsigned gw_client_ncalls(const struct gw_client *cl);
/* false: the client's source (host) holds its share of the worker's call
 * objects, or of waiting RPCSEC_GSS calls: do not read; cop_update comes
 * once it is below again (gateway/source.c). */
bool gw_client_share_ok(struct gw_client *cl);
size_t gw_client_bytes(const struct gw_client *cl);	/* call records in flight */
bool gw_client_held(const struct gw_client *cl);		/* its backend's hold queue is full */
const char *gw_client_name(const struct gw_client *cl);
uint64_t gw_client_key(const struct gw_client *cl);
/* This connection's number, never reused: the owner of the pool bytes it
 * writes and is written (pool.c gw_buf_get_for). */
uint64_t gw_client_gen(const struct gw_client *cl);
/* The credential policy of its calls (gateway/authpol.c): the listener's
 * (index in cf_listeners; 0, [gateway]'s, until set), and the squash mode
 * its verified certificate's identity sets (enum cfg_squash), or -1. */
void gw_client_set_policy(struct gw_client *cl, unsigned listener, int squash);

/* Its address as admitted (the socket's peer or its PROXY header's
 * source; IPv4 mapped into IPv6), where it has one: where NFSv4.0
 * callbacks may go (cb40.c). */
void gw_client_set_src(struct gw_client *cl, const uint8_t addr[16]);
bool gw_client_src(const struct gw_client *cl, uint8_t addr[16]);

/* The context's clients (control socket, metrics). */
unsigned gw_ctx_nclients(const struct gw_ctx *gw);
/* Up to max clients into out; returns how many there are in all. */
unsigned gw_ctx_client_list(const struct gw_ctx *gw, struct gw_client_info *out, unsigned max);

#endif /* RPCRDMA_GW_CLIENT_H */
