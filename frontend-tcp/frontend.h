/* SPDX-License-Identifier: MIT */
/*
 * frontend.h - TCP clients of rpcrdma-gw (prefix fe_).
 *
 * Listeners on configured IPv4/IPv6 addresses or on sockets passed in
 * (systemd socket activation), one struct fe_conn per client.  A client's
 * bytes are received straight into pool buffers (gateway/record.c); each
 * complete record goes to gw_on_record().  Replies are queued by the
 * gateway (fe_conn_reply) and written with writev() from the buffers that
 * hold them, in the order they complete.
 *
 * Backpressure: a client is read only while it has fewer than
 * calls_per_client calls and fewer than bytes_per_client bytes queued, and
 * while the gateway does not hold it (fe_conn_hold: its backend's hold
 * queue is full).  Reading resumes when the reason goes away.
 *
 * Faults close that client only: a record above max_record, a record that
 * is not an RPC call, an I/O error, the idle timeout (no call in flight)
 * or the record timeout (a record left unfinished).  Each has a counter and
 * a log line.
 */
#ifndef RPCRDMA_GW_FRONTEND_H
#define RPCRDMA_GW_FRONTEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "call.h"
#include "config.h"
#include "gateway.h"
#include "log.h"

struct event_base;
struct fe_frontend;
struct fe_conn;

struct fe_params {
	struct event_base *fp_base;
	const struct cfg *fp_cfg;
	struct gw_ctx *fp_gw;
	struct gw_pool *fp_pool;
	const struct gw_log *fp_log;
	struct gw_stats *fp_stats;
};

struct fe_frontend *fe_new(const struct fe_params *p);
/* Closes every client (their calls are finalized) and every listener. */
void fe_free(struct fe_frontend *fe);
/* Listen on every cf_listen address of the configuration. 0 or -errno. */
int fe_listen_cfg(struct fe_frontend *fe);
/* Listen on one address (port 0: any, see fe_listen_port). 0 or -errno. */
int fe_listen_addr(struct fe_frontend *fe, const struct sockaddr *sa, socklen_t len);
/* Listen on a socket already bound and listening (socket activation). */
int fe_listen_fd(struct fe_frontend *fe, int fd);
/* Port of listener i (host order), or 0. */
uint16_t fe_listen_port(const struct fe_frontend *fe, unsigned i);
/* Bound address of listener i (getsockname): 0, or -1 past the last. */
int fe_listen_sockaddr(const struct fe_frontend *fe, unsigned i, struct sockaddr_storage *ss);
/* Serve an already connected socket (tests, inetd style); takes fd. */
int fe_adopt_fd(struct fe_frontend *fe, int fd, const char *name);
unsigned fe_nconns(const struct fe_frontend *fe);
/* Reload: limits and timeouts from cf from now on (a reload's new values). */
void fe_set_cfg(struct fe_frontend *fe, const struct cfg *cf);
/* Clear the gateway hold of every client (a hold queue drained). */
void fe_resume_held(struct fe_frontend *fe);

/* One client connection as the control socket shows it. */
struct fe_conn_info {
	char fi_name[80];
	uint64_t fi_id;
	unsigned fi_calls;		/* calls in flight */
	size_t fi_bytes;		/* call records + queued replies */
	uint64_t fi_idle_ms;		/* since the last activity */
	uint64_t fi_rx_bytes;		/* bytes received */
	bool fi_paused;			/* not reading (hold, starved or a cap) */
};
/* Up to max connections into out; returns how many there are in all. */
unsigned fe_conn_list(const struct fe_frontend *fe, struct fe_conn_info *out, unsigned max);

/* Used by the gateway on a client's calls. */
uint64_t fe_conn_key(const struct fe_conn *c);
const char *fe_conn_name(const struct fe_conn *c);
/* A new call of this client: counted against its caps, listed. */
void fe_conn_call_add(struct fe_conn *c, struct gw_call *call);
/* The call ended (from gw_call_finalize): unlisted, uncounted; reading
 * may resume. */
void fe_conn_call_remove(struct fe_conn *c, struct gw_call *call);
/* The call's reply is ready: queue it for writing. */
void fe_conn_reply(struct fe_conn *c, struct gw_call *call);
/* Stop (true) or allow (false) reading this client for the gateway. */
void fe_conn_hold(struct fe_conn *c, bool hold);
/* Finalize every call the client still has (used by gw_on_conn_close). */
void fe_conn_finalize_calls(struct fe_conn *c, enum gw_end why);

#endif /* RPCRDMA_GW_FRONTEND_H */
