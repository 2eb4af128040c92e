// SPDX-License-Identifier: MIT
/*
 * This file contains the OpenSSL side of RPC-with-TLS (RFC 9289) on the TCP
 * front end (see fe_tls.h): the server context (TLS 1.3 only, ALPN
 * "sunrpc", client certificates as tls_client_cert says, kernel TLS where
 * the kernel has it), and per connection the state machine
 *
 *   plain --probe answered--> handshake --done--> tls
 *
 * driven from the frontend's read event (fe_tls_recv is its receiver's
 * byte source) and, while the handshake's own output waits for room, from a
 * write event of its own.  A refused handshake is counted by reason
 * (tls_refused_total) and logged through the per-peer rate limit.
 *
 * Output: the frontend's queue hands over the iovecs it would give
 * writev().  Pieces below FE_TLS_SMALL bytes (record marks, RPC headers,
 * small replies) are gathered into a per-connection staging buffer, so they
 * make one TLS record and one system call rather than one each; larger
 * pieces (payload) go to SSL_write where they lie, uncopied.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "fe_tls.h"
#include "log.h"
#include "record.h"

#define FE_TLS_STAGE		16384	/* a TLS record's plaintext at most */
#define FE_TLS_SMALL		1024	/* pieces below this are staged, not payload */
#define FE_TLS_HS_RECORD	0x16	/* TLS ContentType handshake (RFC 8446 5.1) */

static const unsigned char fe_tls_alpn[] = "\x06sunrpc";	/* RFC 9289 7.2 */

struct fe_tls {
	SSL_CTX *ft_ctx;		/* for new handshakes; a reload swaps it */
	enum cfg_tls ft_mode;
	const struct cfg *ft_cf;	/* the listener's policy, record_timeout (reload) */
	unsigned ft_li;			/* the listener: index in cf_listeners */
	int64_t ft_expiry;		/* Unix time its certificate ends; 0 unknown */
	struct fe_tls_params ft_p;
};

enum fe_tls_state { FE_TLS_S_PLAIN = 0, FE_TLS_S_HANDSHAKE, FE_TLS_S_OPEN, FE_TLS_S_FAILED };

struct fe_tls_conn {
	struct fe_tls *ftc_tls;
	SSL *ftc_ssl;			/* from the probe on */
	int ftc_fd;
	const char *ftc_peer;		/* the frontend's name of the connection */
	char ftc_host[80];		/* the peer without port: the log's rate-limit key */
	struct event *ftc_rev;		/* the frontend's read event */
	struct event *ftc_wev;		/* handshake output waiting for room */
	struct event *ftc_timer;	/* the handshake's deadline (record_timeout) */
	enum fe_tls_state ftc_state;
	bool ftc_eof;			/* close_notify or end seen after data */
	uint8_t *ftc_stage;		/* FE_TLS_STAGE bytes once established */
	char ftc_ident[64];		/* verified client certificate's name, or "" */
	int ftc_squash;			/* tls_identity_squash's mode for it, or -1 */
	int ftc_squash_at;		/* the entry that set it (its index), or -1 */
};

static const struct cfg_policy *fe_tls_pol(const struct fe_tls *tls)
{
	return &tls->ft_cf->cf_listeners[tls->ft_li].li_pol;
}

/* ---- the context ---- */

/* RFC 9289 5.1.1: the server requires ALPN "sunrpc". */
static int fe_tls_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
			      const unsigned char *in, unsigned inlen, void *arg)
{
	unsigned char *o;

	(void)ssl;
	(void)arg;
	if (SSL_select_next_proto(&o, outlen, fe_tls_alpn, sizeof(fe_tls_alpn) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_ALERT_FATAL;
	*out = o;
	return SSL_TLSEXT_ERR_OK;
}

/* The last OpenSSL error as text (the queue is cleared). */
static const char *fe_tls_errstr(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();

	if (!e)
		snprintf(buf, len, "no detail");
	else
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return buf;
}

/* A tls_* file as the daemon opens it (CFG_CRED_PREFIX resolved) into path,
 * opened once first: one this process may not read is reported with where
 * the configuration names it, the path and the system's reason, rather
 * than as OpenSSL's "system lib". */
static bool fe_tls_file(const struct cfg *cf, unsigned li, const char *key, const char *value,
			char *path, size_t plen, char *err, size_t errlen)
{
	char where[CFG_HOST_MAX + 24];
	int fd, e;

	if (cfg_key_where(cf, li, key, where, sizeof(where) - 2))
		strcat(where, ": ");
	e = -cfg_path_resolve(value, path, plen);
	if (e == ENOENT) {
		snprintf(err, errlen, "%s%s %s: CREDENTIALS_DIRECTORY is not set (the unit's "
			 "LoadCredential= sets it; docs/operations.md 2.7)", where, key, value);
		return false;
	}
	if (e) {
		snprintf(err, errlen, "%s%s %s: %s", where, key, value, strerror(e));
		return false;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "%s%s %s: cannot read: %s (running as uid %u, gid %u)%s", where, key,
			 path, strerror(e), (unsigned)geteuid(), (unsigned)getegid(), e != EACCES ? "" :
			 "; the packaged unit runs as a dynamic user: give it the file with "
			 "LoadCredential= (docs/operations.md 2.7)");
		return false;
	}
	close(fd);
	return true;
}

static SSL_CTX *fe_tls_ctx(const struct cfg *cfg, unsigned li, char *err, size_t errlen)
{
	const struct cfg_policy *cf = &cfg->cf_listeners[li].li_pol;
	char cert[CFG_HOST_MAX + 256], key[CFG_HOST_MAX + 256], ca[CFG_HOST_MAX + 256];
	static const int verify[] = {
		[CFG_TLS_CC_NONE] = SSL_VERIFY_NONE,
		[CFG_TLS_CC_REQUEST] = SSL_VERIFY_PEER,
		[CFG_TLS_CC_REQUIRE] = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
	};
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	char e[256];

	if (!fe_tls_file(cfg, li, "tls_cert", cf->pol_tls_cert, cert, sizeof(cert), err, errlen) ||
	    !fe_tls_file(cfg, li, "tls_key", cf->pol_tls_key, key, sizeof(key), err, errlen) ||
	    (cf->pol_tls_ca[0] &&
	     !fe_tls_file(cfg, li, "tls_ca", cf->pol_tls_ca, ca, sizeof(ca), err, errlen))) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	if (!ctx) {
		snprintf(err, errlen, "tls: cannot create the TLS context: %s", fe_tls_errstr(e, sizeof(e)));
		return NULL;
	}
	/* RFC 9289 5.1: never below TLS 1.3. */
	SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
	/* A client may close without close_notify (the kernel's does): that
	 * reads as the end, as on a plain socket. */
	SSL_CTX_set_options(ctx, SSL_OP_ENABLE_KTLS | SSL_OP_NO_RENEGOTIATION |
				 SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_alpn_select_cb(ctx, fe_tls_alpn_select, NULL);
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		snprintf(err, errlen, "tls_cert %s: %s", cert, fe_tls_errstr(e, sizeof(e)));
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		snprintf(err, errlen, "tls_key %s: %s", key, fe_tls_errstr(e, sizeof(e)));
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(err, errlen, "tls_key %s does not match tls_cert %s", key, cert);
		ERR_clear_error();
		goto fail;
	}
	if (cf->pol_tls_ca[0]) {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(ca);

		if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1 || !names) {
			snprintf(err, errlen, "tls_ca %s: %s", ca, fe_tls_errstr(e, sizeof(e)));
			sk_X509_NAME_pop_free(names, X509_NAME_free);
			goto fail;
		}
		SSL_CTX_set_client_CA_list(ctx, names);
	}
	SSL_CTX_set_verify(ctx, verify[cf->pol_tls_client_cert], NULL);
	return ctx;

fail:
	SSL_CTX_free(ctx);
	return NULL;
}

/* The served certificate's end (fe_tls_expiry_publish). */
static void fe_tls_expiry(struct fe_tls *tls)
{
	X509 *x = SSL_CTX_get0_certificate(tls->ft_ctx);
	struct tm tm;

	tls->ft_expiry = 0;
	if (x && ASN1_TIME_to_tm(X509_get0_notAfter(x), &tm) == 1)
		tls->ft_expiry = (int64_t)timegm(&tm);
}

void fe_tls_expiry_publish(struct fe_tls *const *tls, unsigned n)
{
	struct gw_stats *st = NULL;
	int64_t end = 0;

	for (unsigned i = 0; i < n; i++) {
		if (!tls[i])
			continue;
		st = tls[i]->ft_p.tp_stats;
		if (tls[i]->ft_expiry && (!end || tls[i]->ft_expiry < end))
			end = tls[i]->ft_expiry;
	}
	if (st)
		st->gs_tls_cert_expiry = end;
}

int fe_tls_new(const struct cfg *cf, unsigned li, const struct fe_tls_params *p,
	       struct fe_tls **tls, char *err, size_t errlen)
{
	const struct cfg_policy *pol = &cf->cf_listeners[li].li_pol;
	struct fe_tls *t;

	*tls = NULL;
	if (pol->pol_tls == CFG_TLS_OFF)
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "tls: out of memory");
		return -1;
	}
	t->ft_ctx = fe_tls_ctx(cf, li, err, errlen);
	if (!t->ft_ctx) {
		free(t);
		return -1;
	}
	t->ft_mode = pol->pol_tls;
	t->ft_cf = cf;
	t->ft_li = li;
	t->ft_p = *p;
	fe_tls_expiry(t);
	*tls = t;
	return 0;
}

void fe_tls_set_cfg(struct fe_tls *tls, const struct cfg *cf)
{
	char err[512];
	SSL_CTX *ctx;

	if (!tls)
		return;
	tls->ft_cf = cf;
	/* Renewed files come in here: a new context for new handshakes; an
	 * established session holds a reference to the one it began with. */
	ctx = fe_tls_ctx(cf, tls->ft_li, err, sizeof(err));
	if (!ctx) {
		gw_err(tls->ft_p.tp_log, "reload: %s; TLS keeps the certificate it had", err);
		return;
	}
	SSL_CTX_free(tls->ft_ctx);
	tls->ft_ctx = ctx;
	fe_tls_expiry(tls);
	gw_info(tls->ft_p.tp_log, "reload: TLS certificate %s read again", fe_tls_pol(tls)->pol_tls_cert);
}

void fe_tls_free(struct fe_tls *tls)
{
	if (!tls)
		return;
	SSL_CTX_free(tls->ft_ctx);
	free(tls);
}

/* A file in the credentials directory while CREDENTIALS_DIRECTORY is not
 * set: --check-config outside the unit. */
static bool fe_tls_cred_unset(const struct cfg_policy *pol)
{
	const char *f[3] = { pol->pol_tls_cert, pol->pol_tls_key, pol->pol_tls_ca };
	char p[CFG_HOST_MAX + 256];

	for (unsigned i = 0; i < 3; i++)
		if (cfg_path_resolve(f[i], p, sizeof(p)) == -ENOENT)
			return true;
	return false;
}

int fe_tls_check_cfg(const struct cfg *cf, char *err, size_t errlen)
{
	int rc = 0;

	if (errlen)
		err[0] = '\0';
	for (unsigned li = 0; li < cf->cf_nlisteners; li++) {
		const struct cfg_policy *pol = &cf->cf_listeners[li].li_pol;
		SSL_CTX *ctx;
		size_t n;

		if (pol->pol_tls == CFG_TLS_OFF)
			continue;
		if (fe_tls_cred_unset(pol)) {	/* its files exist only in the unit */
			snprintf(err, errlen, "%s%s: TLS files in $CREDENTIALS_DIRECTORY not checked: it is "
				 "set only for the unit's processes (LoadCredential=)", li ? "listener " : "",
				 cf->cf_listeners[li].li_name);
			rc = 1;
			continue;
		}
		/* [gateway]'s own is named only when there are others. */
		n = li ? (size_t)snprintf(err, errlen, "[listener %s] ", cf->cf_listeners[li].li_name) : 0;
		if (n >= errlen)
			n = 0;
		ctx = fe_tls_ctx(cf, li, err + n, errlen - n);
		if (!ctx)
			return -1;
		SSL_CTX_free(ctx);
	}
	return rc;
}

/* ---- a connection ---- */

static void fe_tls_on_room(evutil_socket_t fd, short what, void *arg);
static void fe_tls_on_late(evutil_socket_t fd, short what, void *arg);

struct fe_tls_conn *fe_tls_conn_new(struct fe_tls *tls, int fd, const char *peer, struct event *rev)
{
	struct fe_tls_conn *t = calloc(1, sizeof(*t));
	char *colon;

	if (!t)
		return NULL;
	t->ftc_wev = event_new(tls->ft_p.tp_base, fd, EV_WRITE, fe_tls_on_room, t);
	t->ftc_timer = evtimer_new(tls->ft_p.tp_base, fe_tls_on_late, t);
	if (!t->ftc_wev || !t->ftc_timer) {
		if (t->ftc_wev)
			event_free(t->ftc_wev);
		free(t);
		return NULL;
	}
	t->ftc_tls = tls;
	t->ftc_fd = fd;
	t->ftc_peer = peer;
	t->ftc_rev = rev;
	t->ftc_squash = t->ftc_squash_at = -1;
	snprintf(t->ftc_host, sizeof(t->ftc_host), "%s", peer);
	colon = strrchr(t->ftc_host, ':');
	if (colon)
		*colon = '\0';
	return t;
}

void fe_tls_conn_free(struct fe_tls_conn *t)
{
	if (!t)
		return;
	event_free(t->ftc_wev);
	event_free(t->ftc_timer);
	if (t->ftc_ssl)
		SSL_free(t->ftc_ssl);	/* no close_notify: the socket closes anyway */
	free(t->ftc_stage);
	free(t);
}

static const char *fe_tls_state_str(const struct fe_tls_conn *t)
{
	static const char *const names[] = {
		[FE_TLS_S_PLAIN] = "plain", [FE_TLS_S_HANDSHAKE] = "handshake", [FE_TLS_S_OPEN] = "tls",
		[FE_TLS_S_FAILED] = "refused",
	};

	return t ? names[t->ftc_state] : "off";
}

/* Count and log a refusal (through the per-peer rate limit). */
static void fe_tls_refused(struct fe_tls_conn *t, enum fe_tls_reason why, const char *detail)
{
	const struct fe_tls_params *p = &t->ftc_tls->ft_p;
	struct gw_log_ev ev = { .le_client = t->ftc_host, .le_error = "tls_refused" };

	gw_stat_inc(p->tp_stats, (enum gw_ctr)(GW_CTR_TLS_REFUSED_PLAINTEXT + why));
	gw_log_ev(p->tp_log, CFG_LOG_WARN, &ev, "client %s: TLS refused: %s%s%s", t->ftc_peer,
		  fe_tls_reason_str(why), detail ? ": " : "", detail ? detail : "");
}

_Static_assert(GW_CTR_TLS_REFUSED_IDENTITY - GW_CTR_TLS_REFUSED_PLAINTEXT ==
		       FE_TLS_R_IDENTITY - FE_TLS_R_PLAINTEXT,
	       "tls_refused counters follow enum fe_tls_reason");

int fe_tls_on_record(struct fe_tls_conn *t, const struct gw_rx *rx, struct gw_rec *rec, bool quiet)
{
	const struct gw_buf *b = rx->rx_buf;
	bool more = (b && rx->rx_parsed < b->gb_used) || rx->rx_dec.rm_hdr_have;
	uint8_t reply[FE_TLS_REPLY_MAX];
	enum fe_tls_reason why = FE_TLS_R_HANDSHAKE;
	size_t len;
	enum fe_tls_verdict v;

	if (t->ftc_state != FE_TLS_S_PLAIN)
		return 1;	/* in TLS: RFC 9289 4.1, a probe there is the gateway's BADCRED */
	v = fe_tls_pre_record(t->ftc_tls->ft_mode, rec->rcd_iov, rec->rcd_niov, quiet, more, reply,
			      &len, &why);
	if (v == FE_TLS_PASS)
		return 1;
	gw_rec_release(rx->rx_pool, rec);
	if (v == FE_TLS_STARTTLS) {
		/* Quiet: the socket's send buffer is empty, 36 bytes fit. */
		if (send(t->ftc_fd, reply, len, MSG_NOSIGNAL) != (ssize_t)len)
			return -1;
		t->ftc_ssl = SSL_new(t->ftc_tls->ft_ctx);
		if (!t->ftc_ssl || SSL_set_fd(t->ftc_ssl, t->ftc_fd) != 1) {
			ERR_clear_error();
			return -1;
		}
		SSL_set_accept_state(t->ftc_ssl);
		t->ftc_state = FE_TLS_S_HANDSHAKE;
		{	/* the handshake, like a record, within record_timeout (30 s if 0) */
			unsigned ms = t->ftc_tls->ft_cf->cf_record_timeout_ms;
			struct timeval tv;

			ms = ms ? ms : 30000;
			tv.tv_sec = ms / 1000;
			tv.tv_usec = (ms % 1000) * 1000;
			evtimer_add(t->ftc_timer, &tv);
		}
		gw_stat_inc(t->ftc_tls->ft_p.tp_stats, GW_CTR_TLS_PROBES);
		return 0;
	}
	if (v == FE_TLS_REFUSE)	/* then close: best effort */
		(void)!send(t->ftc_fd, reply, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	fe_tls_refused(t, why, NULL);
	return -1;
}

/* Why a handshake failed, from what OpenSSL says. */
static enum fe_tls_reason fe_tls_hs_reason(const struct fe_tls_conn *t, unsigned long e)
{
	int r = ERR_GET_REASON(e);

	if (r == SSL_R_UNSUPPORTED_PROTOCOL || r == SSL_R_TLSV1_ALERT_PROTOCOL_VERSION ||
	    r == SSL_R_WRONG_VERSION_NUMBER || r == SSL_R_VERSION_TOO_LOW)
		return FE_TLS_R_VERSION;
	if (r == SSL_R_NO_APPLICATION_PROTOCOL || r == SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL)
		return FE_TLS_R_ALPN;
	if (r == SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE || r == SSL_R_CERTIFICATE_VERIFY_FAILED ||
	    SSL_get_verify_result(t->ftc_ssl) != X509_V_OK)
		return FE_TLS_R_CLIENT_CERT;
	return FE_TLS_R_HANDSHAKE;
}

/* Does name (len bytes, not NUL-terminated) appear in the blank- or
 * comma-separated list?  Names compare without case (DNS). */
static bool fe_tls_listed(const char *list, const char *name, size_t len)
{
	while (*list) {
		size_t n;

		list += strspn(list, " \t,");
		n = strcspn(list, " \t,");
		if (n && n == len && !strncasecmp(list, name, n))
			return true;
		list += n;
	}
	return false;
}

/* tls_identity_squash: the first entry (in the key's order) naming one of
 * the certificate's names wins; called for each name, it keeps the
 * earliest entry matched so far. */
static void fe_tls_squash_match(struct fe_tls_conn *t, const struct cfg_policy *pol,
				const char *name, size_t len)
{
	const char *pos = pol->pol_tls_identity_squash, *e;
	enum cfg_squash m;
	size_t n;
	int idx = 0;

	for (; cfg_idsq_next(&pos, &e, &n, &m) && (t->ftc_squash_at < 0 || idx < t->ftc_squash_at);
	     idx++)
		if (n == len && !strncasecmp(e, name, n)) {
			t->ftc_squash = (int)m;
			t->ftc_squash_at = idx;
			return;
		}
}

/* The verified client certificate's names (subject CN, DNS and e-mail
 * subjectAltNames): the first DNS name, else the CN, becomes the
 * connection's identity; true when tls_allow_identity is empty or lists
 * one of them. */
static bool fe_tls_identity(struct fe_tls_conn *t)
{
	const struct cfg_policy *pol = fe_tls_pol(t->ftc_tls);
	const char *allow = pol->pol_tls_allow_identity;
	X509 *peer = SSL_get0_peer_certificate(t->ftc_ssl);
	GENERAL_NAMES *gens;
	char cn[64];
	int cnlen;
	bool ok = false;

	if (!peer || SSL_get_verify_result(t->ftc_ssl) != X509_V_OK)
		return !allow[0];
	gens = X509_get_ext_d2i(peer, NID_subject_alt_name, NULL, NULL);
	for (int i = 0; gens && i < sk_GENERAL_NAME_num(gens); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);
		const ASN1_IA5STRING *v = g->type == GEN_DNS ? g->d.dNSName
					  : g->type == GEN_EMAIL ? g->d.rfc822Name : NULL;
		const char *d = v ? (const char *)ASN1_STRING_get0_data(v) : NULL;
		size_t len = v ? (size_t)ASN1_STRING_length(v) : 0;

		if (!d || memchr(d, '\0', len))	/* an embedded NUL: no name of ours */
			continue;
		if (g->type == GEN_DNS && !t->ftc_ident[0] && len < sizeof(t->ftc_ident))
			memcpy(t->ftc_ident, d, len);
		ok = ok || fe_tls_listed(allow, d, len);
		fe_tls_squash_match(t, pol, d, len);
	}
	GENERAL_NAMES_free(gens);
	cnlen = X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn, sizeof(cn));
	if (cnlen > 0 && (size_t)cnlen == strlen(cn)) {
		if (!t->ftc_ident[0])
			snprintf(t->ftc_ident, sizeof(t->ftc_ident), "%s", cn);
		ok = ok || fe_tls_listed(allow, cn, (size_t)cnlen);
		fe_tls_squash_match(t, pol, cn, (size_t)cnlen);
	}
	return ok || !allow[0];
}

int fe_tls_squash(const struct fe_tls_conn *t)
{
	return t && t->ftc_state == FE_TLS_S_OPEN ? t->ftc_squash : -1;
}

void fe_tls_info(const struct fe_tls_conn *t, char *state, size_t slen, char *id, size_t idlen)
{
	snprintf(state, slen, "%s", fe_tls_state_str(t));
	snprintf(id, idlen, "%s", t ? t->ftc_ident : "");
}

/* The handshake is done: what RFC 9289 asks beyond OpenSSL's own checks. */
static int fe_tls_established(struct fe_tls_conn *t)
{
	struct gw_stats *st = t->ftc_tls->ft_p.tp_stats;
	const unsigned char *proto = NULL;
	unsigned plen = 0;

	/* A client that sends no ALPN extension never reaches the select
	 * callback: RFC 9289 5.1.1 requires it all the same. */
	SSL_get0_alpn_selected(t->ftc_ssl, &proto, &plen);
	if (plen != sizeof(fe_tls_alpn) - 2 || memcmp(proto, fe_tls_alpn + 1, plen)) {
		fe_tls_refused(t, FE_TLS_R_ALPN, "no ALPN extension");
		return -1;
	}
	if (!fe_tls_identity(t)) {
		fe_tls_refused(t, FE_TLS_R_IDENTITY, t->ftc_ident[0] ? t->ftc_ident : "no verified name");
		return -1;
	}
	t->ftc_stage = malloc(FE_TLS_STAGE);
	if (!t->ftc_stage)
		return -1;
	t->ftc_state = FE_TLS_S_OPEN;
	gw_stat_inc(st, GW_CTR_TLS_HANDSHAKES);
	if (BIO_get_ktls_send(SSL_get_wbio(t->ftc_ssl)))
		gw_stat_inc(st, GW_CTR_TLS_KTLS_TX);
	if (BIO_get_ktls_recv(SSL_get_rbio(t->ftc_ssl)))
		gw_stat_inc(st, GW_CTR_TLS_KTLS_RX);
	{
		struct gw_log_ev ev = { .le_client = t->ftc_host };

		gw_log_ev(t->ftc_tls->ft_p.tp_log, CFG_LOG_INFO, &ev, "client %s: %s %s established%s%s",
			  t->ftc_peer, SSL_get_version(t->ftc_ssl), SSL_get_cipher_name(t->ftc_ssl),
			  t->ftc_ident[0] ? ", identity " : "", t->ftc_ident);
	}
	return 0;
}

static int fe_tls_handshake_step(struct fe_tls_conn *t);

/* One step of the handshake: 1 done, 0 wait, -1 refused (counted and
 * logged once: the connection stays refused). */
static int fe_tls_handshake(struct fe_tls_conn *t)
{
	int r = fe_tls_handshake_step(t);

	if (r < 0)
		t->ftc_state = FE_TLS_S_FAILED;
	if (r != 0)
		evtimer_del(t->ftc_timer);
	return r;
}

static int fe_tls_handshake_step(struct fe_tls_conn *t)
{
	char e[256];
	unsigned long err;
	int r, ssl_err;

	/* The first byte tells a ClientHello from plaintext RPC or garbage. */
	if (SSL_in_before(t->ftc_ssl)) {
		uint8_t first;
		ssize_t n = recv(t->ftc_fd, &first, 1, MSG_PEEK);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		if (n <= 0 || first != FE_TLS_HS_RECORD) {
			fe_tls_refused(t, FE_TLS_R_NOT_TLS, n <= 0 ? "end of stream" : NULL);
			return -1;
		}
	}
	ERR_clear_error();
	r = SSL_do_handshake(t->ftc_ssl);
	if (r == 1)
		return fe_tls_established(t) < 0 ? -1 : 1;
	ssl_err = SSL_get_error(t->ftc_ssl, r);
	if (ssl_err == SSL_ERROR_WANT_READ) {
		errno = EAGAIN;
		return 0;
	}
	if (ssl_err == SSL_ERROR_WANT_WRITE) {
		event_add(t->ftc_wev, NULL);
		errno = EAGAIN;
		return 0;
	}
	err = ERR_peek_last_error();
	fe_tls_refused(t, err ? fe_tls_hs_reason(t, err) : FE_TLS_R_HANDSHAKE,
		       ssl_err == SSL_ERROR_SYSCALL && !err ? "connection lost"
							    : fe_tls_errstr(e, sizeof(e)));
	return -1;
}

/* The handshake's output had to wait: go on, and wake the reader once done
 * (records may follow in what OpenSSL has read already). */
static void fe_tls_on_room(evutil_socket_t fd, short what, void *arg)
{
	struct fe_tls_conn *t = arg;

	(void)fd;
	(void)what;
	if (t->ftc_state == FE_TLS_S_HANDSHAKE && fe_tls_handshake(t) == 0)
		return;
	event_active(t->ftc_rev, EV_READ, 0);
}

/* No handshake within record_timeout: refused; the reader sees the end. */
static void fe_tls_on_late(evutil_socket_t fd, short what, void *arg)
{
	struct fe_tls_conn *t = arg;

	(void)fd;
	(void)what;
	if (t->ftc_state != FE_TLS_S_HANDSHAKE)
		return;
	fe_tls_refused(t, FE_TLS_R_HANDSHAKE, "not done within record_timeout");
	t->ftc_state = FE_TLS_S_FAILED;
	event_active(t->ftc_rev, EV_READ, 0);
}

/* Decrypted bytes into buf until it is full or the socket is drained, so
 * that a short count means drained (gateway/record.c reads no more then:
 * nothing may stay buffered inside OpenSSL unseen). */
static ssize_t fe_tls_read(struct fe_tls_conn *t, uint8_t *buf, size_t len)
{
	size_t got = 0;

	while (got < len && !t->ftc_eof) {
		size_t n = 0;
		int ssl_err;

		ERR_clear_error();
		if (SSL_read_ex(t->ftc_ssl, buf + got, len - got, &n) == 1) {
			got += n;
			continue;
		}
		ssl_err = SSL_get_error(t->ftc_ssl, 0);
		if (ssl_err == SSL_ERROR_WANT_READ || ssl_err == SSL_ERROR_WANT_WRITE) {
			if (got)
				break;
			errno = EAGAIN;
			return -1;
		}
		if (ssl_err == SSL_ERROR_ZERO_RETURN) {
			t->ftc_eof = true;
			break;
		}
		ERR_clear_error();
		if (got)
			break;	/* the error again on the next call */
		if (ssl_err != SSL_ERROR_SYSCALL || errno == 0)
			errno = EPROTO;
		return -1;
	}
	return (ssize_t)got;
}

ssize_t fe_tls_recv(void *arg, void *buf, size_t len)
{
	struct fe_tls_conn *t = arg;

	switch (t->ftc_state) {
	case FE_TLS_S_PLAIN:
		return recv(t->ftc_fd, buf, len, 0);
	case FE_TLS_S_HANDSHAKE: {
		int r = fe_tls_handshake(t);

		if (r < 0)
			return 0;	/* refused, logged: the frontend closes quietly */
		if (r == 0) {
			errno = EAGAIN;
			return -1;
		}
		break;
	}
	case FE_TLS_S_OPEN:
		break;
	case FE_TLS_S_FAILED:
		return 0;
	}
	return fe_tls_read(t, buf, len);
}

ssize_t fe_tls_writev(struct fe_tls_conn *t, const struct iovec *iov, unsigned n)
{
	const uint8_t *p;
	size_t len, w = 0;
	int ssl_err;

	if (t->ftc_state != FE_TLS_S_OPEN)
		return writev(t->ftc_fd, iov, (int)n);
	if (n == 0)
		return 0;
	/* A retry after WANT_WRITE must offer the same bytes first: the
	 * frontend gives the same iovecs again, so the staging is the same
	 * (or longer, which OpenSSL accepts). */
	if (iov[0].iov_len >= FE_TLS_SMALL) {
		p = iov[0].iov_base;
		len = iov[0].iov_len;
	} else {
		len = 0;
		for (unsigned i = 0; i < n && iov[i].iov_len < FE_TLS_SMALL &&
				    len + iov[i].iov_len <= FE_TLS_STAGE; i++) {
			memcpy(t->ftc_stage + len, iov[i].iov_base, iov[i].iov_len);
			len += iov[i].iov_len;
		}
		p = t->ftc_stage;
	}
	ERR_clear_error();
	if (SSL_write_ex(t->ftc_ssl, p, len, &w) == 1)
		return (ssize_t)w;
	ssl_err = SSL_get_error(t->ftc_ssl, 0);
	if (ssl_err == SSL_ERROR_WANT_WRITE || ssl_err == SSL_ERROR_WANT_READ) {
		errno = EAGAIN;
		return -1;
	}
	ERR_clear_error();
	if (ssl_err != SSL_ERROR_SYSCALL || errno == 0)
		errno = EPIPE;
	return -1;
}
