// SPDX-License-Identifier: MIT
/*
 * This file contains the frontend's listeners and the way in of a client:
 * listening (configured addresses, sockets passed in), accepting, the
 * PROXY v2 header when the listener asks for one, admission by the
 * listener's policy (fe_admit.h), hand-off to another worker, and the
 * making and ending of the frontend itself.  An admitted socket becomes a
 * connection in frontend.c (fe_conn_new).
 *
 * At max_clients (connections plus sockets still waiting for a PROXY
 * header) every listener is disabled: the kernel's backlog holds further
 * clients until one goes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "config.h"
#include "fe_admit.h"
#include "fe_internal.h"
#include "fe_tls.h"
#include "frontend.h"
#include "gateway.h"
#include "log.h"
#include "pool.h"
#include "record.h"

void fe_listen_update(struct fe_frontend *fe)
{
	bool full = fe->fe_nconns + fe_pw_npending(fe->fe_pw) >= fe->fe_p.fp_cfg->cf_max_clients;

	if (full == fe->fe_listen_paused)
		return;
	fe->fe_listen_paused = full;
	for (unsigned i = 0; i < fe->fe_nlisteners; i++) {
		if (full)
			evconnlistener_disable(fe->fe_listeners[i].fl_lev);
		else
			evconnlistener_enable(fe->fe_listeners[i].fl_lev);
	}
}


/* ---- accepting ---- */

static uint64_t fe_key_of(const struct sockaddr *peer, socklen_t plen, uint16_t local_port)
{
	const uint8_t *p = (const uint8_t *)peer;
	uint64_t h = 0xcbf29ce484222325ull;

	/* FNV-1a over the peer address and port, and our port. */
	if (peer->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)peer;

		p = (const uint8_t *)&s->sin_addr;
		plen = 4;
		h = (h ^ s->sin_port) * 0x100000001b3ull;
	} else if (peer->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)peer;

		p = (const uint8_t *)&s->sin6_addr;
		plen = 16;
		h = (h ^ s->sin6_port) * 0x100000001b3ull;
	}
	for (socklen_t i = 0; i < plen; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	h = (h ^ local_port) * 0x100000001b3ull;
	return h & ~(1ull << 63);	/* top bit: adopted sockets */
}

/* Log lines name the policy that decided. */
const char *fe_li_suffix(const struct fe_frontend *fe, unsigned li, char *buf, size_t len)
{
	const struct cfg *cf = fe->fe_p.fp_cfg;

	buf[0] = '\0';
	if (li && li < cf->cf_nlisteners)
		snprintf(buf, len, " (listener %s)", cf->cf_listeners[li].li_name);
	return buf;
}

/* Connections already served from addr (the per-source cap). */
static unsigned fe_conns_from(const struct fe_frontend *fe, const uint8_t addr[16])
{
	const struct fe_conn *c;
	unsigned n = 0;

	TAILQ_FOREACH(c, &fe->fe_conns, fc_link)
		n += c->fc_has_src && !memcmp(c->fc_src, addr, sizeof(c->fc_src));
	return n;
}

_Static_assert(GW_CTR_ADM_PROXY - GW_CTR_ADM_DENY == FE_ADM_PROXY - FE_ADM_DENY,
	       "admission counters follow enum fe_adm_verdict");

static void fe_refuse(struct fe_frontend *fe, const struct sockaddr *sa, enum fe_adm_verdict v,
		      const char *why, unsigned li)
{
	char name[INET6_ADDRSTRLEN + 16], host[INET6_ADDRSTRLEN];
	/* Rate-limited per source host, not per connection (journal.c). */
	struct gw_log_ev ev = { .le_client = host, .le_error = fe_adm_verdict_str(v) };
	char lis[CFG_NAME_MAX + 16];

	fe_adm_peer_name(sa, name, sizeof(name), host, sizeof(host));
	gw_stat_inc(fe->fe_p.fp_stats, (enum gw_ctr)(GW_CTR_ADM_DENY + (v - FE_ADM_DENY)));
	gw_log_ev(fe->fe_p.fp_log, CFG_LOG_WARN, &ev, "client %s refused: %s%s", name, why,
		  fe_li_suffix(fe, li, lis, sizeof(lis)));
}

/* Admission of a connection whose client is sa (the socket's peer, or the
 * address its PROXY header gave), then service. */
static void fe_admit(struct fe_frontend *fe, int fd, const struct sockaddr *sa, socklen_t salen,
		     uint16_t lport, unsigned li)
{
	static const char *const why[] = {
		[FE_ADM_DENY] = "address in deny", [FE_ADM_NOT_ALLOWED] = "address not in allow",
		[FE_ADM_INSECURE_PORT] = "source port not below 1024 (secure_port)",
		[FE_ADM_PER_SOURCE_CAP] = "max_conns_per_source reached",
		[FE_ADM_PROXY] = "PROXY header",
	};
	char name[INET6_ADDRSTRLEN + 16];
	uint8_t src[16];
	uint16_t port;
	bool has_src;
	enum fe_adm_verdict v;
	struct fe_conn *c;

	/* Another worker's client is admitted there (fe_take), against the
	 * connections it serves, not counted here. */
	if (fe->fe_p.fp_handoff && fe->fe_p.fp_handoff(fe->fe_p.fp_handoff_arg, fd, sa, salen, lport, li))
		return;
	has_src = fe_adm_addr16(sa, src, &port);
	v = fe_adm_check(&fe->fe_p.fp_cfg->cf_listeners[li].li_pol, sa,
			 has_src ? fe_conns_from(fe, src) : 0);
	if (v != FE_ADM_OK) {
		close(fd);
		fe_refuse(fe, sa, v, why[v], li);
		return;
	}
	fe_adm_peer_name(sa, name, sizeof(name), NULL, 0);
	c = fe_conn_new(fe, fd, name, fe_key_of(sa, salen, lport), li);
	if (c && has_src) {
		memcpy(c->fc_src, src, sizeof(src));
		c->fc_has_src = true;
		gw_client_set_src(c->fc_cl, src);
	}
}

static void fe_on_proxy_done(void *arg, int fd, bool ok, const struct sockaddr *src, socklen_t srclen,
			     uint16_t lport, unsigned li, const char *why)
{
	struct fe_frontend *fe = arg;

	if (ok)
		fe_admit(fe, fd, src, srclen, lport, li);
	else
		fe_refuse(fe, src, FE_ADM_PROXY, why, li);
	fe_listen_update(fe);
}

static void fe_on_accept(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa,
			 int salen, void *arg)
{
	struct fe_listener *l = arg;
	struct fe_frontend *fe = l->fl_fe;
	const struct cfg *cf = fe->fe_p.fp_cfg;
	struct sockaddr_storage local;
	socklen_t llen = sizeof(local);
	uint16_t lport = 0;
	int one = 1;

	(void)lev;
	if (fe->fe_nconns + fe_pw_npending(fe->fe_pw) >= cf->cf_max_clients) {
		gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_REFUSED);
		gw_warn(fe->fe_p.fp_log, "client refused: max_clients %u reached", cf->cf_max_clients);
		close(fd);
		return;
	}
	evutil_make_socket_nonblocking(fd);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (getsockname(fd, (struct sockaddr *)&local, &llen) == 0)
		lport = local.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&local)->sin6_port)
						    : ntohs(((struct sockaddr_in *)&local)->sin_port);
	if (!cf->cf_listeners[l->fl_li].li_pol.pol_proxy_protocol) {
		fe_admit(fe, fd, sa, (socklen_t)salen, lport, l->fl_li);
		return;
	}
	/* The header must come within record_timeout (30 s if that is off). */
	if (fe_pw_start(fe->fe_pw, fd, sa, (socklen_t)salen, lport, l->fl_li,
			cf->cf_record_timeout_ms ? cf->cf_record_timeout_ms : 30000) < 0) {
		close(fd);
		gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_REFUSED);
		gw_err(fe->fe_p.fp_log, "client refused: out of memory");
		return;
	}
	fe_listen_update(fe);
}

static void fe_on_accept_error(struct evconnlistener *lev, void *arg)
{
	struct fe_frontend *fe = ((struct fe_listener *)arg)->fl_fe;

	(void)lev;
	gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_REFUSED);
	gw_err(fe->fe_p.fp_log, "accept: %s", strerror(errno));
}

int fe_adopt_fd(struct fe_frontend *fe, int fd, const char *name)
{
	evutil_make_socket_nonblocking(fd);
	return fe_conn_new(fe, fd, name, (1ull << 63) | (fe->fe_next_id + 1), 0) ? 0 : -ENOMEM;
}

void fe_take(struct fe_frontend *fe, int fd, const struct sockaddr *sa, socklen_t salen,
	     uint16_t lport, unsigned li)
{
	const struct cfg *cf = fe->fe_p.fp_cfg;

	if (fe->fe_nconns >= cf->cf_max_clients || li >= cf->cf_nlisteners) {
		char name[INET6_ADDRSTRLEN + 16], host[INET6_ADDRSTRLEN];
		struct gw_log_ev ev = { .le_client = host };	/* rate-limited per host */

		fe_adm_peer_name(sa, name, sizeof(name), host, sizeof(host));
		gw_stat_inc(fe->fe_p.fp_stats, GW_CTR_CLIENTS_REFUSED);
		gw_log_ev(fe->fe_p.fp_log, CFG_LOG_WARN, &ev, "client %s refused: max_clients %u of "
			  "its worker reached", name, cf->cf_max_clients);
		close(fd);
		return;
	}
	fe_admit(fe, fd, sa, salen, lport, li);
}

/* The listener (index in cf_listeners) whose listen = is ss; 0 if none. */
static unsigned fe_listener_of(const struct cfg *cf, const struct sockaddr_storage *ss,
			       socklen_t len)
{
	for (unsigned i = 0; i < cf->cf_nlisten; i++)
		if (cf->cf_listen[i].cl_addrlen == len && !memcmp(&cf->cf_listen[i].cl_addr, ss, len))
			return cf->cf_listen[i].cl_listener;
	return 0;
}

/* li: the listener's index in cf_listeners, or CFG_MAX_LISTENERS to find it
 * by the socket's address (socket activation). */
static int fe_listen_fd_li(struct fe_frontend *fe, int fd, unsigned li)
{
	struct fe_listener *l;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (fe->fe_nlisteners == FE_MAX_LISTENERS)
		return -ENOSPC;
	if (li != CFG_MAX_LISTENERS && li >= fe->fe_p.fp_cfg->cf_nlisteners)
		return -EINVAL;
	l = &fe->fe_listeners[fe->fe_nlisteners];
	memset(&ss, 0, sizeof(ss));
	evutil_make_socket_nonblocking(fd);
	l->fl_fe = fe;
	l->fl_lev = evconnlistener_new(fe->fe_p.fp_base, fe_on_accept, l,
				       LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1, fd);
	if (!l->fl_lev)
		return -ENOMEM;
	evconnlistener_set_error_cb(l->fl_lev, fe_on_accept_error);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0)
		l->fl_port = ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
						      : ntohs(((struct sockaddr_in *)&ss)->sin_port);
	else
		len = 0;
	l->fl_li = li != CFG_MAX_LISTENERS ? li : fe_listener_of(fe->fe_p.fp_cfg, &ss, len);
	if (l->fl_port && fe->fe_p.fp_gw)
		gw_ctx_own_port(fe->fe_p.fp_gw, l->fl_port);
	fe->fe_nlisteners++;
	if (fe->fe_listen_paused)
		evconnlistener_disable(l->fl_lev);
	return 0;
}

int fe_listen_fd(struct fe_frontend *fe, int fd)
{
	return fe_listen_fd_li(fe, fd, CFG_MAX_LISTENERS);
}

int fe_listen_addr(struct fe_frontend *fe, const struct sockaddr *sa, socklen_t len)
{
	return fe_listen_addr_li(fe, sa, len, 0);
}

int fe_listen_addr_li(struct fe_frontend *fe, const struct sockaddr *sa, socklen_t len,
		      unsigned li)
{
	int fd, one = 1, err;

	fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* [::] serves IPv6 only; list 0.0.0.0 too for IPv4. */
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, sa, len) < 0 || listen(fd, SOMAXCONN) < 0)
		goto err_sock;
	err = fe_listen_fd_li(fe, fd, li);
	if (err < 0) {
		close(fd);
		return err;
	}
	return 0;

err_sock:
	err = -errno;
	close(fd);
	return err;
}

int fe_listen_cfg(struct fe_frontend *fe)
{
	const struct cfg *cf = fe->fe_p.fp_cfg;

	for (unsigned i = 0; i < cf->cf_nlisten; i++) {
		const struct cfg_listen *l = &cf->cf_listen[i];
		int err = fe_listen_addr_li(fe, (const struct sockaddr *)&l->cl_addr, l->cl_addrlen,
					    l->cl_listener);

		if (err < 0) {
			/* A port below 1024 without the capability: say what is missing. */
			gw_err(fe->fe_p.fp_log, "listen %s: %s%s", l->cl_text, strerror(-err),
			       err == -EACCES ? " (a port below 1024 needs CAP_NET_BIND_SERVICE: "
			       "AmbientCapabilities= of the unit, or socket activation)" : "");
			return err;
		}
		gw_info(fe->fe_p.fp_log, "listening on %s%s%s", l->cl_text,
			l->cl_listener ? ", listener " : "",
			l->cl_listener ? cf->cf_listeners[l->cl_listener].li_name : "");
	}
	return 0;
}

uint16_t fe_listen_port(const struct fe_frontend *fe, unsigned i)
{
	return i < fe->fe_nlisteners ? fe->fe_listeners[i].fl_port : 0;
}

int fe_listen_sockaddr(const struct fe_frontend *fe, unsigned i, struct sockaddr_storage *ss)
{
	socklen_t len = sizeof(*ss);

	if (i >= fe->fe_nlisteners)
		return -1;
	memset(ss, 0, sizeof(*ss));
	return getsockname(evconnlistener_get_fd(fe->fe_listeners[i].fl_lev), (struct sockaddr *)ss,
			   &len) == 0 ? 0 : -1;
}

unsigned fe_listen_li(const struct fe_frontend *fe, unsigned i)
{
	return i < fe->fe_nlisteners ? fe->fe_listeners[i].fl_li : 0;
}

struct fe_frontend *fe_new(const struct fe_params *p)
{
	struct fe_frontend *fe = calloc(1, sizeof(*fe));

	if (!fe)
		return NULL;
	fe->fe_p = *p;
	if (!fe->fe_p.fp_id_step) {
		fe->fe_p.fp_id_first = 1;
		fe->fe_p.fp_id_step = 1;
	}
	TAILQ_INIT(&fe->fe_conns);
	fe->fe_pw = fe_pw_new(p->fp_base, fe_on_proxy_done, fe);
	TAILQ_INIT(&fe->fe_blocked);
	TAILQ_INIT(&fe->fe_wdue);
	TAILQ_INIT(&fe->fe_unread);
	fe->fe_pressure = evtimer_new(p->fp_base, fe_on_pressure, fe);
	fe->fe_uwatch = evtimer_new(p->fp_base, fe_on_uwatch, fe);
	for (unsigned i = 0; fe->fe_pw && fe->fe_pressure && fe->fe_uwatch &&
			     i < p->fp_cfg->cf_nlisteners; i++) {
		struct fe_tls_params tp = { p->fp_base, p->fp_log, p->fp_stats };
		char err[512];

		if (fe_tls_new(p->fp_cfg, i, &tp, &fe->fe_tls[i], err, sizeof(err)) < 0) {
			gw_err(p->fp_log, "%s%s%s", i ? p->fp_cfg->cf_listeners[i].li_name : "",
			       i ? ": " : "", err);
			for (unsigned j = 0; j < i; j++)
				fe_tls_free(fe->fe_tls[j]);
			fe_pw_free(fe->fe_pw);
			fe->fe_pw = NULL;
		}
	}
	if (!fe->fe_pw || !fe->fe_pressure || !fe->fe_uwatch) {
		if (fe->fe_pw)
			fe_pw_free(fe->fe_pw);
		if (fe->fe_pressure)
			event_free(fe->fe_pressure);
		if (fe->fe_uwatch)
			event_free(fe->fe_uwatch);
		free(fe);
		return NULL;
	}
	fe_tls_expiry_publish(fe->fe_tls, CFG_MAX_LISTENERS);
	/* One record's worth of buffers per route, for servers' replies. */
	fe->fe_reserve = p->fp_cfg->cf_nroutes *
			 gw_rx_record_buffers(gw_pool_buf_size(p->fp_pool), p->fp_cfg->cf_max_record);
	return fe;
}

void fe_free(struct fe_frontend *fe)
{
	struct fe_conn *c;

	if (!fe)
		return;
	for (unsigned i = 0; i < fe->fe_nlisteners; i++)
		evconnlistener_free(fe->fe_listeners[i].fl_lev);
	fe->fe_nlisteners = 0;
	fe_pw_free(fe->fe_pw);
	fe->fe_pw = NULL;
	while ((c = TAILQ_FIRST(&fe->fe_conns)))
		fe_conn_close(c, GW_CTR__COUNT, "shutdown");
	event_free(fe->fe_pressure);
	event_free(fe->fe_uwatch);
	for (unsigned i = 0; i < CFG_MAX_LISTENERS; i++)
		fe_tls_free(fe->fe_tls[i]);
	free(fe);
}
