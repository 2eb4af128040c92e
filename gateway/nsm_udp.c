// SPDX-License-Identifier: MIT
/*
 * This file contains the UDP NSM listener (nsm_udp.h): sockets on worker
 * 0's loop, and the datagram path (a pure function of the datagram, the
 * sender and what was seen before, for the fuzz target): RPC header
 * (RFC 5531), then NSM v1 (nsm.x) NULL or SM_NOTIFY, answered to the
 * sender.  SM_MON and the other procedures are a host's own statd's
 * business (PROC_UNAVAIL); only SM_NOTIFY crosses hosts.
 *
 * A datagram is judged before it is read, as a TCP connection is before
 * its first byte: by the rules of the listener whose address it came to
 * (np_admit: allow, deny, secure_port), so that a host the gateway does not
 * serve over TCP cannot release a client's locks over UDP either.  Then
 * an SM_NOTIFY from a backend's address is the server's reboot only from a
 * reserved port (nlm_hooks.c); a sender's retransmission is answered and
 * not acted on again.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "chunking.h"
#include "config.h"
#include "log.h"
#include "nlm_map.h"
#include "nlm_notify.h"
#include "nsm_udp.h"

#define GW_NU_PROC_NULL		0
#define GW_NU_PROC_NOTIFY	6	/* SM_NOTIFY (nsm.x) */
#define GW_NU_STR2(x)		#x
#define GW_NU_STR(x)		GW_NU_STR2(x)

struct gw_nu_sock {
	int nsk_fd;
	unsigned nsk_li;		/* its listener (admission) */
	struct event *nsk_ev;
	struct gw_nu *nsk_nu;
	struct sockaddr_storage nsk_addr;
};

/* A sender's last SM_NOTIFY acted on: sm-notify retransmits until it hears
 * a reply, and the same (sender, state) is the same reboot (nsm.x: state
 * only grows).  One entry per sender, so that no sender's notifications
 * push out more than its own entry. */
struct gw_nu_seen {
	char nsn_host[INET6_ADDRSTRLEN];
	int32_t nsn_state;
};

struct gw_nu {
	struct gw_nu_params nu_p;
	struct gw_nu_sock nu_sock[GW_NU_SOCKS];
	unsigned nu_nsock;
	struct gw_nu_seen nu_seen[GW_NU_SEEN];
	unsigned nu_nseen, nu_seen_next;
	uint8_t nu_in[GW_NU_DGRAM_MAX];
	uint8_t nu_out[128];
};

struct gw_nu *gw_nu_new(const struct gw_nu_params *p)
{
	struct gw_nu *nu = calloc(1, sizeof(*nu));

	if (nu)
		nu->nu_p = *p;
	return nu;
}

void gw_nu_free(struct gw_nu *nu)
{
	if (!nu)
		return;
	for (unsigned i = 0; i < nu->nu_nsock; i++) {
		if (nu->nu_sock[i].nsk_ev)
			event_free(nu->nu_sock[i].nsk_ev);
		close(nu->nu_sock[i].nsk_fd);
	}
	free(nu);
}

/* The sender as the TCP path names a client host (inet_ntop, no port),
 * and its port. */
static bool gw_nu_host(const struct sockaddr *sa, socklen_t salen, char *host, size_t len,
		       unsigned *port)
{
	if (sa->sa_family == AF_INET && salen >= (socklen_t)sizeof(struct sockaddr_in)) {
		*port = ntohs(((const struct sockaddr_in *)sa)->sin_port);
		return inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, host,
				 (socklen_t)len) != NULL;
	}
	if (sa->sa_family == AF_INET6 && salen >= (socklen_t)sizeof(struct sockaddr_in6)) {
		*port = ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
		return inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, host,
				 (socklen_t)len) != NULL;
	}
	return false;
}

/* host's entry, or NULL. */
static struct gw_nu_seen *gw_nu_seen_find(struct gw_nu *nu, const char *host)
{
	for (unsigned i = 0; i < nu->nu_nseen; i++)
		if (!strcmp(nu->nu_seen[i].nsn_host, host))
			return &nu->nu_seen[i];
	return NULL;
}

/* host's notification of state was acted on: its entry says so (a new
 * sender takes the oldest entry when all are taken). */
static void gw_nu_seen_set(struct gw_nu *nu, const char *host, int32_t state)
{
	struct gw_nu_seen *s = gw_nu_seen_find(nu, host);

	if (!s) {
		s = &nu->nu_seen[nu->nu_seen_next];
		nu->nu_seen_next = (nu->nu_seen_next + 1) % GW_NU_SEEN;
		if (nu->nu_nseen < GW_NU_SEEN)
			nu->nu_nseen++;
		snprintf(s->nsn_host, sizeof(s->nsn_host), "%s", host);
	}
	s->nsn_state = state;
}

/* SM_NOTIFY from host (source port port), xc at its stat_chge, answered
 * in st: the server's reboot when host is a backend's address and port a
 * reserved one (refused, AUTH_TOOWEAK, from another port), else that
 * client host's (its worker releases).  Only what is acted on is
 * remembered: a refused datagram cannot make the real one a "duplicate". */
static void gw_nu_notify(struct gw_nu *nu, const struct xdr_cur *args, const char *host,
			 unsigned port, const struct sockaddr *sa, socklen_t salen,
			 struct rpc_reply_hdr *st)
{
	char mon[GW_SN_NAME_MAX];
	struct xdr_cur xc = *args;
	struct gw_nu_seen *seen;
	enum gw_nlm_act act;
	int32_t state;

	if (!gw_sn_decode(&xc, mon, sizeof(mon), &state)) {
		gw_stat_inc(nu->nu_p.np_st, GW_CTR_NSM_UDP_REFUSED);
		gw_log_client(nu->nu_p.np_lg, CFG_LOG_WARN, host, "NSM over UDP: SM_NOTIFY from %s: "
			      "arguments undecodable: GARBAGE_ARGS", host);
		st->rr_accept_stat = RPC_GARBAGE_ARGS;
		return;
	}
	seen = gw_nu_seen_find(nu, host);
	if (seen && seen->nsn_state == state) {
		gw_stat_inc(nu->nu_p.np_st, GW_CTR_NSM_UDP_DUPLICATE);
		gw_log_client(nu->nu_p.np_lg, CFG_LOG_DEBUG, host, "NSM over UDP: SM_NOTIFY from %s, "
			      "state %d again (retransmission): answered only", host, (int)state);
		return;
	}
	xc = *args;
	act = nu->nu_p.np_gw ? gw_nlm_server_notify(nu->nu_p.np_gw, host, port, &xc) : GW_NLM_ANSWER;
	if (act == GW_NLM_TOOWEAK) {
		*st = (struct rpc_reply_hdr){ .rr_stat = RPC_MSG_DENIED,
					      .rr_reject_stat = RPC_AUTH_ERROR,
					      .rr_auth_stat = RPC_AUTH_TOOWEAK };
		return;
	}
	gw_stat_inc(nu->nu_p.np_st, GW_CTR_NSM_UDP_NOTIFY);
	gw_nu_seen_set(nu, host, state);
	if (act == GW_NLM_ANSWER)
		return;
	if (nu->nu_p.np_handoff && nu->nu_p.np_handoff(nu->nu_p.np_handoff_arg, sa, salen))
		return;
	gw_nlm_host_rebooted(nu->nu_p.np_gw, host);
}

/* A refusal or an answer: one counter for every refusal. */
static uint32_t gw_nu_refuse(struct gw_nu *nu, const char *host, const struct rpc_call_hdr *hdr,
			     uint32_t stat)
{
	gw_stat_inc(nu->nu_p.np_st, GW_CTR_NSM_UDP_REFUSED);
	gw_log_client(nu->nu_p.np_lg, CFG_LOG_INFO, host, "NSM over UDP: call from %s for program "
		      "%u version %u procedure %u: %s", host, hdr->rc_prog, hdr->rc_vers, hdr->rc_proc,
		      stat == RPC_PROG_UNAVAIL ? "PROG_UNAVAIL" : stat == RPC_PROG_MISMATCH ?
		      "PROG_MISMATCH" : "PROC_UNAVAIL");
	return stat;
}

size_t gw_nu_datagram(struct gw_nu *nu, unsigned li, const uint8_t *msg, size_t len,
		      size_t real_len, const struct sockaddr *sa, socklen_t salen, uint8_t *out,
		      size_t cap)
{
	struct rpc_reply_hdr st = { .rr_stat = RPC_MSG_ACCEPTED, .rr_accept_stat = RPC_SUCCESS };
	char host[INET6_ADDRSTRLEN];
	struct rpc_call_hdr hdr;
	struct xdr_enc xe;
	struct xdr_cur xc;
	struct iovec one;
	const char *why;
	unsigned port;

	if (!gw_nu_host(sa, salen, host, sizeof(host), &port)) {
		gw_stat_inc(nu->nu_p.np_st, GW_CTR_NSM_UDP_DROPPED);
		return 0;
	}
	why = nu->nu_p.np_admit ? nu->nu_p.np_admit(nu->nu_p.np_admit_arg, li, sa, salen) : NULL;
	if (why) {	/* refused unread and unanswered, as TCP closes before a byte */
		gw_stat_inc(nu->nu_p.np_st, GW_CTR_NSM_UDP_NOT_ADMITTED);
		gw_log_client(nu->nu_p.np_lg, CFG_LOG_WARN, host, "NSM over UDP: datagram from %s "
			      "port %u refused: %s (its listener's admission): dropped", host, port,
			      why);
		return 0;
	}
	memset(&hdr, 0, sizeof(hdr));
	xdr_cur_init_buf(&xc, &one, msg, len);
	if (real_len > GW_NU_DGRAM_MAX || len < real_len || !rpc_call_decode(&xc, &hdr)) {
		gw_stat_inc(nu->nu_p.np_st, GW_CTR_NSM_UDP_DROPPED);
		gw_log_client(nu->nu_p.np_lg, CFG_LOG_WARN, host, "NSM over UDP: datagram of %zu "
			      "bytes from %s: %s: dropped", real_len, host, real_len > GW_NU_DGRAM_MAX ?
			      "over " GW_NU_STR(GW_NU_DGRAM_MAX) " bytes" : "no RPC call");
		return 0;
	}
	if (hdr.rc_rpcvers != RPC_VERS) {	/* RFC 5531 9: RPC_MISMATCH, 2..2 */
		gw_stat_inc(nu->nu_p.np_st, GW_CTR_NSM_UDP_REFUSED);
		st = (struct rpc_reply_hdr){ .rr_stat = RPC_MSG_DENIED, .rr_reject_stat = RPC_MISMATCH,
					     .rr_low = RPC_VERS, .rr_high = RPC_VERS };
	} else if (hdr.rc_prog != CFG_PROG_NSM) {
		st.rr_accept_stat = gw_nu_refuse(nu, host, &hdr, RPC_PROG_UNAVAIL);
	} else if (hdr.rc_vers != 1) {
		st.rr_accept_stat = gw_nu_refuse(nu, host, &hdr, RPC_PROG_MISMATCH);
		st.rr_low = st.rr_high = 1;
	} else if (hdr.rc_proc == GW_NU_PROC_NOTIFY) {
		gw_nu_notify(nu, &xc, host, port, sa, salen, &st);
	} else if (hdr.rc_proc != GW_NU_PROC_NULL) {
		st.rr_accept_stat = gw_nu_refuse(nu, host, &hdr, RPC_PROC_UNAVAIL);
	}
	xdr_enc_init(&xe, out, cap);
	if (!rpc_local_reply(&xe, hdr.rc_xid, &st) || xe.xe_err != XDR_OK)
		return 0;
	return xe.xe_len;
}

static void gw_nu_on_read(evutil_socket_t fd, short what, void *arg)
{
	struct gw_nu_sock *sk = arg;
	struct gw_nu *nu = sk->nsk_nu;

	(void)what;
	for (unsigned i = 0; i < GW_NU_BURST; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		ssize_t n = recvfrom(fd, nu->nu_in, sizeof(nu->nu_in), MSG_TRUNC,
				     (struct sockaddr *)&ss, &sl);
		size_t rl;

		if (n < 0)
			return;	/* EAGAIN: drained; anything else: the next wake-up */
		rl = gw_nu_datagram(nu, sk->nsk_li, nu->nu_in, (size_t)n < sizeof(nu->nu_in) ? (size_t)n :
				    sizeof(nu->nu_in), (size_t)n, (struct sockaddr *)&ss, sl,
				    nu->nu_out, sizeof(nu->nu_out));
		if (rl)	/* a lost reply: the sender retransmits */
			(void)sendto(fd, nu->nu_out, rl, MSG_DONTWAIT, (struct sockaddr *)&ss, sl);
	}
}

int gw_nu_open(struct gw_nu *nu, const struct sockaddr_storage *ss, unsigned li)
{
	struct gw_nu_sock *sk = &nu->nu_sock[nu->nu_nsock];
	socklen_t sl = ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						 : sizeof(struct sockaddr_in);
	int one = 1, fd, err;

	if (nu->nu_nsock == GW_NU_SOCKS || !nu->nu_p.np_base)
		return -ENOSPC;
	fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (ss->ss_family == AF_INET6)	/* as the TCP listener: each family its own */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, sl) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	*sk = (struct gw_nu_sock){ .nsk_fd = fd, .nsk_li = li, .nsk_nu = nu };
	sl = sizeof(sk->nsk_addr);
	getsockname(fd, (struct sockaddr *)&sk->nsk_addr, &sl);
	sk->nsk_ev = event_new(nu->nu_p.np_base, fd, EV_READ | EV_PERSIST, gw_nu_on_read, sk);
	if (!sk->nsk_ev || event_add(sk->nsk_ev, NULL) < 0) {
		if (sk->nsk_ev)
			event_free(sk->nsk_ev);
		close(fd);
		return -ENOMEM;
	}
	nu->nu_nsock++;
	return 0;
}

int gw_nu_sockaddr(const struct gw_nu *nu, unsigned i, struct sockaddr_storage *out)
{
	if (i >= nu->nu_nsock)
		return -1;
	*out = nu->nu_sock[i].nsk_addr;
	return 0;
}
