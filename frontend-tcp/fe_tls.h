/* SPDX-License-Identifier: MIT */
/*
 * fe_tls.h - RPC-with-TLS (RFC 9289) on the TCP front end (prefix fe_tls_).
 *
 * This file contains the client leg's TLS: with tls = allowed or required,
 * a NULL call with an empty AUTH_TLS credential (the probe, RFC 9289
 * section 4.1) is answered by the frontend itself, in plaintext, with
 * MSG_ACCEPTED, SUCCESS and an AUTH_NONE verifier holding "STARTTLS"; the
 * connection then waits for a TLS 1.3 ClientHello (ALPN "sunrpc", section
 * 5.1.1) and, once the handshake is done, carries record-marked RPC inside
 * TLS exactly as before.  The handshake and every TLS read and write run
 * on the event loop's readiness, non-blocking (OpenSSL 3, SSL_set_fd).
 *
 * The frontend keeps its receiver (gateway/record.c) and its writev()
 * output queue: the receiver reads through fe_tls_recv() (plain recv()
 * until the probe, then the handshake, then SSL_read), the queue writes
 * through fe_tls_writev().  Each complete record is shown to
 * fe_tls_on_record() first while the connection is not in TLS yet.
 *
 * fe_tls_pre.c is pure (the pre-TLS decisions; the fuzzer links it alone),
 * fe_tls.c holds the OpenSSL side.
 */
#ifndef RPCRDMA_GW_FE_TLS_H
#define RPCRDMA_GW_FE_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "config.h"

struct event;
struct event_base;
struct gw_log;
struct gw_rec;
struct gw_rx;
struct gw_stats;

/* Why the TLS rules closed a connection (tls_refused_total{reason}, the
 * GW_CTR_TLS_REFUSED_* counters in this order). */
enum fe_tls_reason {
	FE_TLS_R_PLAINTEXT = 0,	/* a call before TLS on tls = required */
	FE_TLS_R_EARLY_DATA,	/* bytes after the probe, before its reply was read */
	FE_TLS_R_PROBE_BUSY,	/* probe with calls in flight or replies queued */
	FE_TLS_R_NOT_TLS,	/* what follows the probe is no TLS handshake record */
	FE_TLS_R_VERSION,	/* no TLS 1.3 offered */
	FE_TLS_R_ALPN,		/* no ALPN "sunrpc" offered */
	FE_TLS_R_CLIENT_CERT,	/* client certificate missing or not verified */
	FE_TLS_R_HANDSHAKE,	/* any other handshake failure */
	FE_TLS_R_IDENTITY,	/* the certificate names nothing tls_allow_identity lists */
	FE_TLS_R__COUNT
};
const char *fe_tls_reason_str(enum fe_tls_reason r);

/* ---- fe_tls_pre.c: the decision on a record received before TLS ---- */
enum fe_tls_verdict {
	FE_TLS_PASS = 0,	/* an ordinary call: the gateway takes it */
	FE_TLS_STARTTLS,	/* a probe: send the reply, then the handshake */
	FE_TLS_REFUSE,		/* send the reply (AUTH_ERROR), then close */
	FE_TLS_CLOSE,		/* close, no reply */
};
/* The STARTTLS reply: mark, 6 words, the 8-byte verifier body. */
#define FE_TLS_REPLY_MAX	40
/* Judge one complete record (iov, niov) received in plaintext on a
 * connection whose mode is `mode` (OFF: always PASS).  quiet: no call in
 * flight and no reply queued; more: bytes already received after the
 * record.  STARTTLS and REFUSE write a record-marked reply into
 * reply[FE_TLS_REPLY_MAX] (*reply_len bytes); REFUSE and CLOSE set *why. */
enum fe_tls_verdict fe_tls_pre_record(enum cfg_tls mode, const struct iovec *iov, unsigned niov,
				      bool quiet, bool more, uint8_t *reply, size_t *reply_len,
				      enum fe_tls_reason *why);

/* ---- fe_tls.c: the OpenSSL side ---- */
struct fe_tls;		/* per listener with tls on: its TLS context */
struct fe_tls_conn;	/* per connection */

struct fe_tls_params {
	struct event_base *tp_base;
	const struct gw_log *tp_log;
	struct gw_stats *tp_stats;
};
/* The context of listener li of cf (index in cf_listeners; 0 with *tls NULL
 * when its tls is off): certificate, key, CAs loaded and checked.  -1 with a
 * one-line reason in err when a file is missing or does not fit. */
int fe_tls_new(const struct cfg *cf, unsigned li, const struct fe_tls_params *p,
	       struct fe_tls **tls, char *err, size_t errlen);
void fe_tls_free(struct fe_tls *tls);
/* Reload (SIGHUP): cf from now on; the files are read again into a new
 * context for new handshakes (kept as it was if they do not load, with an
 * error logged).  Established sessions keep theirs. */
void fe_tls_set_cfg(struct fe_tls *tls, const struct cfg *cf);
/* tls_cert_expiry_seconds (gwctl status too): the earliest end among the
 * n contexts of tls[] (NULL entries: listeners without TLS), the first
 * certificate to renew. */
void fe_tls_expiry_publish(struct fe_tls *const *tls, unsigned n);
/* --check-config: the same checks for every listener, nothing kept.  0,
 * -1 (err), or 1: passed, but files named in $CREDENTIALS_DIRECTORY were
 * not checked as that variable is not set (err says so: a warning). */
int fe_tls_check_cfg(const struct cfg *cf, char *err, size_t errlen);

/* A connection on fd (peer: its name for logs, kept as a pointer); rev is
 * the frontend's read event, woken when the handshake completes from a
 * write wakeup.  NULL when out of memory. */
struct fe_tls_conn *fe_tls_conn_new(struct fe_tls *tls, int fd, const char *peer, struct event *rev);
void fe_tls_conn_free(struct fe_tls_conn *t);
/* The receiver's byte source (gateway/record.c rx_src): recv() semantics
 * (n > 0, 0 at the end, -1 with errno; EAGAIN while the handshake waits).
 * A refused handshake is counted and logged here and reads as the end. */
ssize_t fe_tls_recv(void *arg, void *buf, size_t len);
/* writev() semantics over the TLS session once established, plain writev()
 * before. */
ssize_t fe_tls_writev(struct fe_tls_conn *t, const struct iovec *iov, unsigned n);
/* A complete record before TLS: 1 the gateway takes it, 0 it was consumed
 * (probe answered: the handshake follows; rec released), -1 close now
 * (counted and logged; rec released).  quiet as fe_tls_pre_record(). */
int fe_tls_on_record(struct fe_tls_conn *t, const struct gw_rx *rx, struct gw_rec *rec, bool quiet);
/* For gwctl clients: the state ("off" when t is NULL, "plain" before the
 * probe, "handshake", "tls" once established, "refused") and the verified
 * client certificate's name (first DNS subjectAltName, else the CN) or "". */
void fe_tls_info(const struct fe_tls_conn *t, char *state, size_t slen, char *id, size_t idlen);
/* The squash mode (enum cfg_squash) tls_identity_squash gives the verified
 * client certificate of an established session (the entries as they were
 * at its handshake), or -1: none matched, no certificate, not in TLS. */
int fe_tls_squash(const struct fe_tls_conn *t);

#endif /* RPCRDMA_GW_FE_TLS_H */
