// SPDX-License-Identifier: MIT
/*
 * This file contains the server reboot relay (nlm_notify.h): one SM_NOTIFY
 * per NFSv3 lock client host, queued, then sent through a relay of
 * nlm_grant.c's kind as its slots come free.
 *
 * mon_name (nsm.x stat_chge) must name a host the client's statd monitors:
 * its lockd asked it to monitor the server by the name or address it
 * locked through, the gateway's.  nfs-utils' rpc.statd matches an
 * SM_NOTIFY when mon_name, or the sender's address, resolves to the
 * monitored name, and the state differs from the one it last saw.  The
 * gateway sends the address it reaches that host from (the source address
 * of its route there): the sender's address too, and the address the
 * client connects to unless the gateway has several on that network.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "chunking.h"
#include "config.h"
#include "log.h"
#include "nlm_notify.h"

#define SN_NOTIFY	6	/* SM_NOTIFY (nsm.x) */
#define SN_MSG_MAX	256	/* header, AUTH_NONE, an address as mon_name, state */

struct gw_sn_entry {
	char sne_host[48];
	int32_t sne_state;
};

struct gw_sn {
	struct gw_stats *sn_st;
	const struct gw_log *sn_lg;
	struct gw_ng *sn_ng;		/* the delivery, NSM version 1 */
	uint32_t sn_xid;
	bool sn_pumping;
	unsigned sn_head, sn_n;		/* the ring of hosts waiting */
	struct gw_sn_entry sn_q[GW_SN_QUEUE];
};

static void sn_pump(void *arg);

struct gw_sn *gw_sn_new(struct event_base *base, struct gw_stats *st, const struct gw_log *lg)
{
	struct gw_sn *sn = calloc(1, sizeof(*sn));

	if (!sn)
		return NULL;
	sn->sn_ng = gw_ng_new(base, st, lg);
	if (!sn->sn_ng) {
		free(sn);
		return NULL;
	}
	gw_ng_set_kind(sn->sn_ng, CFG_PROG_NSM, "server reboot SM_NOTIFY",
		       "its locks are not reclaimed", GW_CTR_NLM_NOTIFY_RELAYED,
		       GW_CTR_NLM_NOTIFY_FAILED);
	gw_ng_set_done(sn->sn_ng, sn_pump, sn);
	sn->sn_st = st;
	sn->sn_lg = lg;
	sn->sn_xid = 0x736e0000u;
	return sn;
}

void gw_sn_free(struct gw_sn *sn)
{
	if (!sn)
		return;
	gw_ng_set_done(sn->sn_ng, NULL, NULL);
	gw_ng_free(sn->sn_ng);
	free(sn);
}

void gw_sn_set_getport(struct gw_sn *sn, gw_ng_getport_fn *fn)
{
	gw_ng_set_getport(sn->sn_ng, fn);
}

unsigned gw_sn_pending(const struct gw_sn *sn)
{
	return sn->sn_n + gw_ng_busy(sn->sn_ng);
}

bool gw_sn_decode(struct xdr_cur *xc, char *name, size_t len, int32_t *state)
{
	struct xdr_span s;

	if (!xdr_get_string(xc, &s, GW_SN_NAME_MAX) || s.xs_len >= len || !xdr_get_i32(xc, state))
		return false;
	xdr_span_copy(xc, &s, name, len);
	name[s.xs_len] = '\0';
	return true;
}

/* The gateway's address toward host: the source of its route there (a
 * connected UDP socket sends nothing). */
static bool sn_mon_name(const char *host, char *out, size_t len)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(struct sockaddr_in);
	bool v6 = strchr(host, ':') != NULL, ok = false;
	const char *a;
	int fd;

	if (v6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(111);
		sl = sizeof(*s6);
		if (inet_pton(AF_INET6, host, &s6->sin6_addr) != 1)
			return false;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(111);
		if (inet_pton(AF_INET, host, &s4->sin_addr) != 1)
			return false;
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	if (connect(fd, (struct sockaddr *)&ss, sl) == 0 &&
	    getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		a = v6 ? inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, out, (socklen_t)len)
		       : inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, out, (socklen_t)len);
		ok = a != NULL;
	}
	close(fd);
	if (ok && strncmp(out, "::ffff:", 7) == 0 && strchr(out + 7, '.'))
		memmove(out, out + 7, strlen(out + 7) + 1);	/* v4-mapped: as IPv4 */
	return ok;
}

static void sn_send(struct gw_sn *sn, const char *host, int32_t state)
{
	uint8_t buf[SN_MSG_MAX];
	struct xdr_enc xe;
	struct iovec iov;
	char mon[64];

	if (!sn_mon_name(host, mon, sizeof(mon))) {
		gw_stat_inc(sn->sn_st, GW_CTR_NLM_NOTIFY_FAILED);
		gw_log_client(sn->sn_lg, CFG_LOG_WARN, host, "NLM: server reboot SM_NOTIFY for %s not "
			      "sent: no route to it", host);
		return;
	}
	xdr_enc_init(&xe, buf, sizeof(buf));
	rpc_call_encode(&xe, ++sn->sn_xid, CFG_PROG_NSM, 1, SN_NOTIFY, NULL);	/* AUTH_NONE, as sm-notify */
	xdr_put_opaque(&xe, mon, (uint32_t)strlen(mon));
	xdr_put_u32(&xe, (uint32_t)state);
	if (xe.xe_err != XDR_OK)
		return;
	iov = (struct iovec){ buf, xe.xe_len };
	gw_ng_relay(sn->sn_ng, host, 1, &iov, 1, xe.xe_len);	/* counts and logs a failure */
}

/* Start what the relay's free slots allow; again whenever one comes free. */
static void sn_pump(void *arg)
{
	struct gw_sn *sn = arg;

	if (sn->sn_pumping)	/* a start that failed at once frees its slot in here */
		return;
	sn->sn_pumping = true;
	while (sn->sn_n && gw_ng_busy(sn->sn_ng) < GW_NG_SLOTS) {
		struct gw_sn_entry e = sn->sn_q[sn->sn_head];

		sn->sn_head = (sn->sn_head + 1) % GW_SN_QUEUE;
		sn->sn_n--;
		sn_send(sn, e.sne_host, e.sne_state);
	}
	sn->sn_pumping = false;
}

bool gw_sn_queue(struct gw_sn *sn, const char *host, int32_t state)
{
	struct gw_sn_entry *e;

	for (unsigned i = 0; i < sn->sn_n; i++) {
		e = &sn->sn_q[(sn->sn_head + i) % GW_SN_QUEUE];
		if (strcmp(e->sne_host, host) == 0) {
			e->sne_state = state;	/* a second reboot before the first went out */
			return true;
		}
	}
	if (sn->sn_n == GW_SN_QUEUE || strlen(host) >= sizeof(e->sne_host)) {
		gw_stat_inc(sn->sn_st, GW_CTR_NLM_NOTIFY_FAILED);
		gw_log_client(sn->sn_lg, CFG_LOG_WARN, host, "NLM: server reboot SM_NOTIFY for %s not "
			      "queued (%u waiting)", host, sn->sn_n);
		return false;
	}
	e = &sn->sn_q[(sn->sn_head + sn->sn_n++) % GW_SN_QUEUE];
	snprintf(e->sne_host, sizeof(e->sne_host), "%s", host);
	e->sne_state = state;
	sn_pump(sn);
	return true;
}
