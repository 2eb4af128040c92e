/* SPDX-License-Identifier: MIT */
/*
 * frontend.h - TCP clients of rpcrdma-gw (prefix fe_).
 *
 * Listeners on configured IPv4/IPv6 addresses or on sockets passed in
 * (systemd socket activation), one struct fe_conn per client.  Each
 * connection is a client of the gateway's client seam (gateway/client.h):
 * its bytes are received straight into pool buffers (gateway/record.c),
 * each complete record goes to gw_on_record(), and the output items the
 * gateway delivers (replies, relayed callbacks) are written with writev()
 * from the buffers that hold them, in the order they were delivered.
 *
 * Backpressure: a client is read only while it has fewer than
 * calls_per_client calls and fewer than bytes_per_client bytes (call
 * records and queued output), and while the gateway does not hold it (its
 * backend's hold queue is full).  Reading resumes when the reason goes
 * away.
 *
 * Admission (fe_admit.h) runs at accept with the policy of the listener
 * (config.h struct cfg_listener) whose socket accepted the connection:
 * allow/deny, secure_port, max_conns_per_source, and with proxy_protocol
 * the PROXY v2 header first; a refused socket is closed before any byte of
 * it is read.  The connection keeps its listener: TLS and the credential
 * policy of its calls are that listener's too.
 *
 * Faults close that client only: a record above max_record, a record that
 * is not an RPC call, an I/O error, the idle timeout (no call in flight),
 * the record timeout (a record left unfinished), the write timeout
 * (replies queued, none taken for that long) or, while the buffer pool is
 * down to the servers' reserve, the evict timeout (the same, shorter).
 * Each has a counter and a log line.
 */
#ifndef RPCRDMA_GW_FRONTEND_H
#define RPCRDMA_GW_FRONTEND_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "config.h"

struct event_base;
struct fe_frontend;
struct gw_ctx;
struct gw_log;
struct gw_pool;
struct gw_stats;

struct fe_params {
	struct event_base *fp_base;
	const struct cfg *fp_cfg;
	struct gw_ctx *fp_gw;
	struct gw_pool *fp_pool;
	const struct gw_log *fp_log;
	struct gw_stats *fp_stats;
	/* Workers (gateway/worker.h): connection ids are id_first, then every
	 * id_step-th (0: 1 and 1), so no two workers name two clients alike;
	 * handoff, when set, is offered each socket admission would see (its
	 * client address known, after a PROXY header) and takes it (true) to
	 * another worker, whose frontend gets it through fe_take. */
	uint64_t fp_id_first, fp_id_step;
	bool (*fp_handoff)(void *arg, int fd, const struct sockaddr *sa, socklen_t salen,
			   uint16_t lport, unsigned li);
	void *fp_handoff_arg;
};

struct fe_frontend *fe_new(const struct fe_params *p);
/* Closes every client (their calls are finalized) and every listener. */
void fe_free(struct fe_frontend *fe);
/* Listen on every cf_listen address of the configuration, each with its
 * listener's policy. 0 or -errno. */
int fe_listen_cfg(struct fe_frontend *fe);
/* Listen on one address (port 0: any, see fe_listen_port) with the policy
 * of [gateway] (cf_listeners[0]), or of listener li. 0 or -errno. */
int fe_listen_addr(struct fe_frontend *fe, const struct sockaddr *sa, socklen_t len);
int fe_listen_addr_li(struct fe_frontend *fe, const struct sockaddr *sa, socklen_t len,
		      unsigned li);
/* Listen on a socket already bound and listening (socket activation): the
 * listener whose listen = is its address, else [gateway]'s. */
int fe_listen_fd(struct fe_frontend *fe, int fd);
/* Port of listener i (host order), or 0. */
uint16_t fe_listen_port(const struct fe_frontend *fe, unsigned i);
/* Bound address of listener i (getsockname): 0, or -1 past the last. */
int fe_listen_sockaddr(const struct fe_frontend *fe, unsigned i, struct sockaddr_storage *ss);
/* The policy of listener i: its index in cf_listeners (0 past the last). */
unsigned fe_listen_li(const struct fe_frontend *fe, unsigned i);
/* Serve an already connected socket (tests, inetd style); takes fd. */
int fe_adopt_fd(struct fe_frontend *fe, int fd, const char *name);
unsigned fe_nconns(const struct fe_frontend *fe);
/* A socket another worker accepted for this one (fp_handoff): max_clients,
 * then admission and service here, as if this frontend had accepted it.
 * Takes fd. */
void fe_take(struct fe_frontend *fe, int fd, const struct sockaddr *sa, socklen_t salen,
	     uint16_t lport, unsigned li);
/* Writes the output delivered since the last call: one writev() per
 * client for everything a loop pass gave it.  For the loop's prewait
 * (gateway/worker.c), before each time the loop may block: once it has
 * been called, delivery leaves the writing to it, and the loop must not
 * block while fe_flush_due() (output delivered since). */
void fe_flush(struct fe_frontend *fe);
bool fe_flush_due(const struct fe_frontend *fe);
/* Reload: limits and timeouts from cf from now on (a reload's new values). */
void fe_set_cfg(struct fe_frontend *fe, const struct cfg *cf);

#endif /* RPCRDMA_GW_FRONTEND_H */
